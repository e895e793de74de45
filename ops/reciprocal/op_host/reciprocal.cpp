// Reciprocal host side: tiling function, shape inference and the OpDef.
//
// y = 1 / x, elementwise; x and y share one dtype. 1/+-0 = +-inf. The
// Reciprocal instruction misses the 1e-3 (half) and 1e-4 (float) accuracy
// bars (guide 6.2.3.3.1.4), so the kernel divides a tile of ones by x with
// Div (correctly rounded). Tiling keys select the kernel path (see
// op_kernel/reciprocal.cpp):
//   1 float16, 2 float32: Div in the dtype (the correctly rounded quotient;
//     for float16 it equals rounding the float32 quotient, the "16-bit via
//     fp32" semantics, but for a double rounding, and overflows to inf);
//   3 bfloat16: Cast to float32, Div, Cast back.
//
// Tiling: the flat tensor is split over the vector cores in units of
// SPLIT_UNIT_BYTES (512 B keeps every core's GM range 512 B aligned); the
// first `tailCoreNum` cores take one unit more. Each core streams its range
// through UB in tiles of TILE_BYTES (capped so that both queues with
// BUFFER_NUM buffers each, plus the path's scratch buffers, fit in UB).
#include <cstdint>

#include "reciprocal_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment

// What a kernel path keeps in UB per element of a tile.
struct ReciprocalLayout {
    uint64_t key;        // tiling key
    uint32_t elemBytes;  // bytes of one x (= y) element
    uint32_t ioBytes;    // queue bytes per element and buffer (x in + y out)
    uint32_t tmpBytes;   // single-buffered scratch bytes per element
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2

struct ReciprocalPlan {
  uint32_t coreNum;
  uint32_t unitLength;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileLength;
};

// Splits `total` elements over at most `aivNum` cores and sizes the UB tile.
// Returns false when no tile fits in `ubBytes`.
bool MakeReciprocalPlan(uint64_t total, const ReciprocalLayout& layout, uint32_t aivNum, uint64_t ubBytes,
                        ReciprocalPlan& plan)
{
    uint32_t elemBytes = layout.elemBytes;
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

    // Tile: TILE_BYTES of x, but the BUFFER_NUM in and out buffers and the
    // scratch must fit in UB.
    uint64_t tileLength = TILE_BYTES / elemBytes;
    uint64_t ubLength = ubBytes / (BUFFER_NUM * layout.ioBytes + layout.tmpBytes);
    if (tileLength > ubLength) {
        tileLength = ubLength;
    }
    uint64_t burstElems = GM_ALIGN_BYTES / elemBytes;
    uint64_t blockElems = BLOCK_BYTES / elemBytes;
    uint64_t maxTile =
        tileLength >= burstElems ? tileLength / burstElems * burstElems : tileLength / blockElems * blockElems;
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
    if (maxTile % alignElems != 0) {
        alignElems = blockElems;
    }
    tileLength = (coreMax + tileNum - 1) / tileNum;
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

bool LayoutOf(ge::DataType dtype, ReciprocalLayout& layout)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            layout = {1, 2, 4, 2};  // scratch: the ones tile
            return true;
        case ge::DT_FLOAT:
            layout = {2, 4, 8, 4};  // scratch: the ones tile
            return true;
        case ge::DT_BF16:
            layout = {3, 2, 4, 8};  // scratch: x as float32, the ones tile
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
    ReciprocalLayout layout;
    if (!LayoutOf(xDesc->GetDataType(), layout)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    ReciprocalPlan plan;
    if (aivNum == 0 || !MakeReciprocalPlan(static_cast<uint64_t>(total), layout, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    ReciprocalTilingData tiling;
    tiling.set_totalLength(static_cast<uint32_t>(total));
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileLength(plan.tileLength);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(layout.key);
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
class Reciprocal : public OpDef {
public:
    explicit Reciprocal(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Reciprocal);
}  // namespace ops
