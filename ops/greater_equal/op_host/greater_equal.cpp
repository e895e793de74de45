// GreaterEqual host side: tiling function, shape inference and the OpDef.
//
// y = x1 >= x2, elementwise; x1 and x2 share one shape and dtype; y is bool
// (one byte, 0 or 1). IEEE for floats (NaN compares false); exact for
// integers. Tiling keys select the kernel path (see op_kernel/greater_equal.cpp):
//   1 float16, 2 float32: Compare in the dtype;
//   6 int32: the exact sign of x1 - x2 as a float32, Compares with 0.
//
// Tiling: the flat tensors are split over the vector cores in units of
// SPLIT_UNIT_BYTES of the bool output (512 B keeps every core's GM range
// 512 B aligned in all three tensors); the first `tailCoreNum` cores take one
// unit more. Each core streams its range through UB in tiles of TILE_BYTES of
// the inputs (capped so that the queues with BUFFER_NUM buffers each, the
// compare mask and the path's scratch buffers fit in UB), in multiples of
// 256 elements.
#include <cstdint>

#include "greater_equal_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint32_t CMP_ELEMS = 256;       // tiles are whole repeats of any compare dtype
constexpr uint32_t OUT_BYTES = 1;         // bool

// What a kernel path keeps in UB per element of a tile.
struct GreaterEqualLayout {
    uint64_t key;        // tiling key
    uint32_t inBytes;    // bytes of one x1 (= x2) element
    uint32_t tmpBytes;   // single-buffered scratch bytes per element
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=256,512,1024,2048
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2

struct GreaterEqualPlan {
  uint32_t coreNum;
  uint32_t unitLength;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileLength;
};

// Splits `total` elements over at most `aivNum` cores and sizes the UB tile.
// Returns false when no tile fits in `ubBytes`.
bool MakeGreaterEqualPlan(uint64_t total, const GreaterEqualLayout& layout, uint32_t aivNum, uint64_t ubBytes,
                          GreaterEqualPlan& plan)
{
    uint64_t unitLength = SPLIT_UNIT_BYTES / OUT_BYTES;
    uint64_t units = (total + unitLength - 1) / unitLength;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Tiny tensors: no core gets less than MIN_CORE_BYTES of input.
    uint64_t coreCap = (total * layout.inBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;

    // Tile: TILE_BYTES of each input, but the BUFFER_NUM x1, x2 and y buffers,
    // the scratch and the compare mask (one bit per element) must fit in UB.
    uint64_t tileLength = TILE_BYTES / layout.inBytes;
    uint64_t eighthsPerElem = 8 * (BUFFER_NUM * (2 * layout.inBytes + OUT_BYTES) + layout.tmpBytes) + 1;
    uint64_t ubLength = ubBytes * 8 / eighthsPerElem;
    if (tileLength > ubLength) {
        tileLength = ubLength;
    }
    uint64_t burstElems = GM_ALIGN_BYTES / OUT_BYTES;
    uint64_t blockElems = CMP_ELEMS > BLOCK_BYTES / OUT_BYTES ? CMP_ELEMS : BLOCK_BYTES / OUT_BYTES;
    // A small TILE_BYTES still gets one aligned block when UB holds it.
    if (tileLength < blockElems && ubLength >= blockElems) {
        tileLength = blockElems;
    }
    uint64_t maxTile =
        tileLength >= burstElems ? tileLength / burstElems * burstElems : tileLength / blockElems * blockElems;
    if (maxTile == 0) {
        return false;
    }
    // Equal tiles: the fewest tiles of at most maxTile elements that cover
    // the largest core range, rounded up to whole GM bursts (a single tile
    // only to whole compare repeats).
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

// Scratch of every path: the half tile of ones for Select (2 B per element)
// plus the path's converted operands.
bool LayoutOf(ge::DataType dtype, GreaterEqualLayout& layout)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            layout = {1, 2, 2};
            return true;
        case ge::DT_FLOAT:
            layout = {2, 4, 2};
            return true;
        case ge::DT_INT32:
            layout = {6, 4, 2 + 8};  // h and l (int32, then float32)
            return true;
        default:
            return false;
    }
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* x1Shape = context->GetInputShape(0);
    const gert::StorageShape* x2Shape = context->GetInputShape(1);
    const auto x1Desc = context->GetInputDesc(0);
    const auto x2Desc = context->GetInputDesc(1);
    if (x1Shape == nullptr || x2Shape == nullptr || x1Desc == nullptr || x2Desc == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int64_t total = x1Shape->GetStorageShape().GetShapeSize();
    if (total < 0 || total > UINT32_MAX || x2Shape->GetStorageShape().GetShapeSize() != total ||
        x1Desc->GetDataType() != x2Desc->GetDataType()) {
        return ge::GRAPH_FAILED;
    }
    GreaterEqualLayout layout;
    if (!LayoutOf(x1Desc->GetDataType(), layout)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    GreaterEqualPlan plan;
    if (aivNum == 0 || !MakeGreaterEqualPlan(static_cast<uint64_t>(total), layout, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    GreaterEqualTilingData tiling;
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
    const gert::Shape* x1Shape = context->GetInputShape(0);
    gert::Shape* yShape = context->GetOutputShape(0);
    if (x1Shape == nullptr || yShape == nullptr) {
        return GRAPH_FAILED;
    }
    *yShape = *x1Shape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class GreaterEqual : public OpDef {
public:
    explicit GreaterEqual(const char* name) : OpDef(name)
    {
        this->Input("x1")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("x2")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BOOL, ge::DT_BOOL, ge::DT_BOOL})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(GreaterEqual);
}  // namespace ops
