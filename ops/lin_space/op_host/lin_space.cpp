// LinSpace host side: tiling function, shape inference and the OpDef.
//
// output = num evenly spaced values from start to stop, both included
// (torch.linspace): step = (stop - start) / (num - 1); element i is
// start + i * step for i < num / 2 and stop - (num - 1 - i) * step after,
// all in float32 and rounded once to the output dtype; num = 1 gives
// [start]. start and stop are 1-element float32, float16 or bfloat16 tensors
// (the output takes their dtype), num a 1-element int64 or int32 tensor.
//
// num decides the output length (ValueDepend), which the framework resolves
// into the output shape; the tiling only needs that length, and the kernel
// reads start and stop from GM.
//
// Tiling: the num elements are split over the vector cores in units of
// SPLIT_UNIT_BYTES (512 B keeps every core's GM range 512 B aligned); the
// first `tailCoreNum` cores take one unit more. Each core builds its range
// in tiles of TILE_BYTES of output (capped so that BUFFER_NUM output buffers
// and, for 16-bit floats, the float32 work tile fit in UB). Tiling keys:
// 1 float16, 2 float32, 3 bfloat16.
#include <cstdint>

#include "lin_space_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint32_t FLOAT_BYTES = 4;

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 65536;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512
constexpr uint32_t MIN_CORE_BYTES = 4096;   // ascendopt:knob min=32 max=65536 step=pow2

struct LinSpacePlan {
  uint32_t coreNum;
  uint32_t unitLength;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileLength;
};

// Splits `total` elements of `elemBytes` bytes over at most `aivNum` cores
// and sizes the UB tile (each output element also needs `workBytes` of
// float32 work space). Returns false when no tile fits in `ubBytes`.
bool MakeLinSpacePlan(uint64_t total, uint32_t elemBytes, uint32_t workBytes, uint32_t aivNum, uint64_t ubBytes,
                    LinSpacePlan& plan)
{
    uint64_t unitLength = SPLIT_UNIT_BYTES / elemBytes;
    if (unitLength == 0) {
        unitLength = 1;
    }
    uint64_t units = (total + unitLength - 1) / unitLength;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Tiny outputs: no core gets less than MIN_CORE_BYTES.
    uint64_t coreCap = (total * elemBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;

    // Tile: TILE_BYTES of output, but the output buffers and the work tile
    // must fit in UB.
    uint64_t maxTile = TILE_BYTES / elemBytes;
    uint64_t fit = ubBytes / (BUFFER_NUM * elemBytes + workBytes);
    if (maxTile > fit) {
        maxTile = fit;
    }
    uint64_t burst = GM_ALIGN_BYTES / elemBytes;
    maxTile = maxTile >= burst ? maxTile / burst * burst : maxTile / (BLOCK_BYTES / elemBytes) * (BLOCK_BYTES / elemBytes);
    if (maxTile == 0) {
        return false;
    }
    // Equal tiles: the fewest tiles of at most maxTile elements that cover
    // the largest core range, rounded up to whole GM bursts (one tile: to a
    // UB block).
    uint64_t coreMax = (blockUnits + (tailCoreNum > 0 ? 1 : 0)) * unitLength;
    if (coreMax > total) {
        coreMax = total;
    }
    uint64_t tileNum = coreMax == 0 ? 1 : (coreMax + maxTile - 1) / maxTile;
    uint64_t alignElems = (tileNum > 1 ? GM_ALIGN_BYTES : BLOCK_BYTES) / elemBytes;
    if (maxTile % alignElems != 0) {
        alignElems = BLOCK_BYTES / elemBytes;
    }
    uint64_t tileLength = (coreMax + tileNum - 1) / tileNum;
    tileLength = (tileLength + alignElems - 1) / alignElems * alignElems;
    if (tileLength == 0) {
        tileLength = alignElems;
    }
    if (tileLength > maxTile) {
        return false;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.unitLength = static_cast<uint32_t>(unitLength);
    plan.blockUnits = static_cast<uint32_t>(blockUnits);
    plan.tailCoreNum = static_cast<uint32_t>(tailCoreNum);
    plan.tileLength = static_cast<uint32_t>(tileLength);
    return true;
}
// ascendopt:tiling-end

// Tiling key, output element bytes and float32 work bytes per element.
bool KeyOf(ge::DataType dtype, uint64_t& key, uint32_t& elemBytes, uint32_t& workBytes)
{
    workBytes = 0;
    switch (dtype) {
        case ge::DT_FLOAT16:
            key = 1;
            elemBytes = 2;
            workBytes = FLOAT_BYTES;
            return true;
        case ge::DT_FLOAT:
            key = 2;
            elemBytes = 4;
            return true;
        case ge::DT_BF16:
            key = 3;
            elemBytes = 2;
            workBytes = FLOAT_BYTES;
            return true;
        default:
            return false;
    }
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* outShape = context->GetOutputShape(0);
    const auto startDesc = context->GetInputDesc(0);
    if (outShape == nullptr || startDesc == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int64_t total = outShape->GetStorageShape().GetShapeSize();
    if (total < 0 || total > INT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint32_t elemBytes = 0;
    uint32_t workBytes = 0;
    if (!KeyOf(startDesc->GetDataType(), key, elemBytes, workBytes)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    LinSpacePlan plan;
    if (aivNum == 0 || !MakeLinSpacePlan(static_cast<uint64_t>(total), elemBytes, workBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    LinSpaceTilingData tiling;
    tiling.set_totalLength(static_cast<uint32_t>(total));
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileLength(plan.tileLength);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(key);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
// output is 1-D of num elements (ValueDepend on num); the framework resolves
// it from the value.
static graphStatus InferShape(gert::InferShapeContext* context)
{
    gert::Shape* outShape = context->GetOutputShape(0);
    if (outShape == nullptr) {
        return GRAPH_FAILED;
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class LinSpace : public OpDef {
public:
    explicit LinSpace(const char* name) : OpDef(name)
    {
        const char* names[] = {"start", "stop"};
        for (const char* input : names) {
            this->Input(input)
                .ParamType(REQUIRED)
                .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
                .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        }
        this->Input("num")
            .ParamType(REQUIRED)
            .ValueDepend(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT32, ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("output")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(LinSpace);
}  // namespace ops
