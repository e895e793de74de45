// Sqrt host side: tiling function, shape inference and the OpDef.
//
// y = sqrt(x), elementwise; x and y share one dtype (float16 or float32).
// Negative inputs give NaN (the vector Sqrt instruction's behaviour).
//
// Tiling: the flat tensor is split over the vector cores in units of
// SPLIT_UNIT_BYTES (512 B keeps every core's GM range 512 B aligned); the
// first `tailCoreNum` cores take one unit more. Each core streams its range
// through UB in tiles of TILE_BYTES (capped so that both queues with
// BUFFER_NUM buffers each fit in UB). Tiling keys: 1 float16, 2 float32.
#include <cstdint>

#include "sqrt_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t TILING_KEY_FP16 = 1;
constexpr uint64_t TILING_KEY_FP32 = 2;
constexpr uint32_t QUEUE_NUM = 2;         // x in, y out
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2

struct SqrtPlan {
    uint32_t coreNum;
    uint32_t unitLength;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
    uint32_t tileLength;
};

// Splits `total` elements of `elemBytes` bytes over at most `aivNum` cores and
// sizes the UB tile. Returns false when no tile fits in `ubBytes`.
bool MakeSqrtPlan(uint64_t total, uint32_t elemBytes, uint32_t aivNum, uint64_t ubBytes, SqrtPlan& plan)
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

    // Tile: TILE_BYTES, but all QUEUE_NUM x BUFFER_NUM buffers must fit in UB.
    uint64_t tileBytes = ubBytes / (QUEUE_NUM * BUFFER_NUM);
    if (tileBytes > TILE_BYTES) {
        tileBytes = TILE_BYTES;
    }
    tileBytes = tileBytes >= GM_ALIGN_BYTES ? tileBytes / GM_ALIGN_BYTES * GM_ALIGN_BYTES
                                            : tileBytes / BLOCK_BYTES * BLOCK_BYTES;
    uint64_t maxTile = tileBytes / elemBytes;
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

bool KeyOf(ge::DataType dtype, uint64_t& key, uint32_t& elemBytes)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            key = TILING_KEY_FP16;
            elemBytes = 2;
            return true;
        case ge::DT_FLOAT:
            key = TILING_KEY_FP32;
            elemBytes = 4;
            return true;
        default:
            return false;
    }
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const auto xDesc = context->GetInputDesc(0);
    if (xShape == nullptr || xDesc == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int64_t total = xShape->GetStorageShape().GetShapeSize();
    if (total < 0 || total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint32_t elemBytes = 0;
    if (!KeyOf(xDesc->GetDataType(), key, elemBytes)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    SqrtPlan plan;
    if (aivNum == 0 || !MakeSqrtPlan(static_cast<uint64_t>(total), elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    SqrtTilingData tiling;
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
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* xShape = context->GetInputShape(0);
    gert::Shape* yShape = context->GetOutputShape(0);
    if (xShape == nullptr || yShape == nullptr) {
        return GRAPH_FAILED;
    }
    *yShape = *xShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class Sqrt : public OpDef {
public:
    explicit Sqrt(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Sqrt);
}  // namespace ops
