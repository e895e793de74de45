// Lerp host side: tiling function, shape inference and the OpDef.
//
// y = start + weight * (end - start), elementwise; start, end, weight (a
// tensor) and y share one shape and one dtype (float16, float32 or bfloat16).
// Computed in float32 and rounded once.
//
// Tiling: the flat tensor is split over the vector cores in units of
// SPLIT_UNIT_BYTES (512 B keeps every core's GM range 512 B aligned); the
// first `tailCoreNum` cores take one unit more. Each core streams its range
// through UB in tiles of at most TILE_BYTES per input, capped so that the
// queues (BUFFER_NUM buffers each) and the kernel's float32 work buffers fit
// in UB. Tiling keys select the dtype path: 1 float16, 2 float32, 3 bfloat16.
#include <cstdint>

#include "lerp_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint32_t QUEUE_NUM = 4;  // start, end and weight in, y out

// float32 work buffers of one tile (mirrors the kernel's InitBuffer calls):
// none for float32 (the arithmetic runs in the queue buffers); 16-bit inputs
// are cast, one or two at a time, into two float buffers.
uint32_t WorkBufNum(uint32_t elemBytes)
{
    return elemBytes == FLOAT_BYTES ? 0 : 2;
}

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2

struct LerpPlan {
  uint32_t coreNum;
  uint32_t unitLength;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileLength;
};

// Splits `total` elements of `elemBytes` bytes over at most `aivNum` cores and
// sizes the UB tile. Returns false when no tile fits in `ubBytes`.
bool MakeLerpPlan(uint64_t total, uint32_t elemBytes, uint32_t aivNum, uint64_t ubBytes, LerpPlan& plan)
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
    // Tiny tensors: no core gets less than MIN_CORE_BYTES.
    uint64_t coreCap = (total * elemBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;

    // Tile: TILE_BYTES per input, but the queues and the float32 work buffers
    // must fit in UB.
    uint64_t bytesPerElem = static_cast<uint64_t>(QUEUE_NUM) * BUFFER_NUM * elemBytes +
                            static_cast<uint64_t>(WorkBufNum(elemBytes)) * FLOAT_BYTES;
    uint64_t maxTile = TILE_BYTES / elemBytes;
    if (maxTile > ubBytes / bytesPerElem) {
        maxTile = ubBytes / bytesPerElem;
    }
    uint64_t burstElems = GM_ALIGN_BYTES / elemBytes;
    uint64_t blockElems = BLOCK_BYTES / elemBytes;
    maxTile = maxTile >= burstElems ? maxTile / burstElems * burstElems : maxTile / blockElems * blockElems;
    if (maxTile == 0) {
        return false;
    }
    // Equal tiles: the fewest tiles of at most maxTile elements that cover
    // the largest core range, rounded up to whole GM bursts (a single tile
    // only to a UB block).
    uint64_t coreMax = (blockUnits + (tailCoreNum > 0 ? 1 : 0)) * unitLength;
    if (coreMax > total) {
        coreMax = total;
    }
    uint64_t tileNum = coreMax == 0 ? 1 : (coreMax + maxTile - 1) / maxTile;
    uint64_t alignElems = tileNum > 1 ? burstElems : blockElems;
    if (alignElems == 0 || maxTile % alignElems != 0) {
        alignElems = 1;
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

bool DtypeKey(ge::DataType dtype, uint64_t& key, uint32_t& elemBytes)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            key = 1;
            elemBytes = 2;
            return true;
        case ge::DT_FLOAT:
            key = 2;
            elemBytes = 4;
            return true;
        case ge::DT_BF16:
            key = 3;
            elemBytes = 2;
            return true;
        default:
            return false;
    }
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    constexpr size_t INPUT_NUM = 3;  // start, end, weight
    const gert::StorageShape* shapes[INPUT_NUM];
    ge::DataType dtypes[INPUT_NUM];
    for (size_t i = 0; i < INPUT_NUM; i++) {
        shapes[i] = context->GetInputShape(i);
        const auto desc = context->GetInputDesc(i);
        if (shapes[i] == nullptr || desc == nullptr) {
            return ge::GRAPH_FAILED;
        }
        dtypes[i] = desc->GetDataType();
    }
    int64_t total = shapes[0]->GetStorageShape().GetShapeSize();
    if (total < 0 || total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    for (size_t i = 1; i < INPUT_NUM; i++) {
        if (dtypes[i] != dtypes[0] || shapes[i]->GetStorageShape().GetShapeSize() != total) {
            return ge::GRAPH_FAILED;
        }
    }
    uint64_t dtypeKey = 0;
    uint32_t elemBytes = 0;
    if (!DtypeKey(dtypes[0], dtypeKey, elemBytes)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    LerpPlan plan;
    if (aivNum == 0 || !MakeLerpPlan(static_cast<uint64_t>(total), elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    LerpTilingData tiling;
    tiling.set_totalLength(static_cast<uint32_t>(total));
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileLength(plan.tileLength);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(dtypeKey);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* startShape = context->GetInputShape(0);
    gert::Shape* yShape = context->GetOutputShape(0);
    if (startShape == nullptr || yShape == nullptr) {
        return GRAPH_FAILED;
    }
    *yShape = *startShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class Lerp : public OpDef {
public:
    explicit Lerp(const char* name) : OpDef(name)
    {
        const char* inputs[] = {"start", "end", "weight"};
        for (const char* input : inputs) {
            this->Input(input)
                .ParamType(REQUIRED)
                .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
                .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        }
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Lerp);
}  // namespace ops
