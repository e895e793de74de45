// Heaviside host side: tiling function, shape inference and the OpDef.
//
// out = 0 where input < 0, values where input == 0 (-0 included), 1 where
// input > 0; NaN input gives 0 (torch.heaviside). input and values share
// one dtype (float16 or float32). values has input's shape, or holds one
// element that is broadcast (other broadcasts fail the tiling). Tiling keys
// (see op_kernel/heaviside.cpp):
//   1 float16, 2 float32: values of input's shape;
//   3 float16, 4 float32: a single value, read once per core.
//
// Tiling: the flat tensors are split over the vector cores in units of
// SPLIT_UNIT_BYTES (512 B keeps every core's GM range 512 B aligned); the
// first `tailCoreNum` cores take one unit more. Each core streams its range
// through UB in tiles of TILE_BYTES (capped so that the queues with
// BUFFER_NUM buffers each, the compare mask and the tile of ones fit in UB),
// in multiples of 256 elements (Compares works on whole 256 B repeats).
#include <cstdint>

#include "heaviside_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint32_t CMP_ELEMS = 256;       // tiles are whole repeats of any compare dtype
constexpr uint32_t MASK_BITS = 1;         // compare mask: one bit per element

// What a kernel path keeps in UB per element of a tile.
struct HeavisideLayout {
    uint64_t key;        // tiling key
    uint32_t elemBytes;  // bytes of one element (input, values, out)
    uint32_t queueNum;   // tensors streamed per element (input, [values], out)
    uint32_t tmpBytes;   // single-buffered scratch bytes per element
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=256,512,1024,2048
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2

struct HeavisidePlan {
  uint32_t coreNum;
  uint32_t unitLength;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileLength;
};

// Splits `total` elements over at most `aivNum` cores and sizes the UB tile.
// Returns false when no tile fits in `ubBytes`.
bool MakeHeavisidePlan(uint64_t total, const HeavisideLayout& layout, uint32_t aivNum, uint64_t ubBytes,
                       HeavisidePlan& plan)
{
    uint64_t unitLength = SPLIT_UNIT_BYTES / layout.elemBytes;
    uint64_t units = (total + unitLength - 1) / unitLength;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Tiny tensors: no core gets less than MIN_CORE_BYTES of input.
    uint64_t coreCap = (total * layout.elemBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;

    // Tile: TILE_BYTES of each tensor, but the BUFFER_NUM buffers of every
    // queue, the scratch and the compare mask (MASK_BITS per element) must
    // fit in UB.
    uint64_t tileLength = TILE_BYTES / layout.elemBytes;
    uint64_t eighthsPerElem = 8 * (BUFFER_NUM * layout.queueNum * layout.elemBytes + layout.tmpBytes) + MASK_BITS;
    uint64_t ubLength = ubBytes * 8 / eighthsPerElem;
    if (tileLength > ubLength) {
        tileLength = ubLength;
    }
    uint64_t burstElems = GM_ALIGN_BYTES / layout.elemBytes;
    uint64_t blockElems = BLOCK_BYTES / layout.elemBytes;
    burstElems = burstElems > CMP_ELEMS ? burstElems : CMP_ELEMS;
    blockElems = blockElems > CMP_ELEMS ? blockElems : CMP_ELEMS;
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

// Scratch: the tile of ones for Select, in the dtype.
bool LayoutOf(ge::DataType dtype, bool scalarValues, HeavisideLayout& layout)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            layout = {scalarValues ? 3u : 1u, 2, scalarValues ? 2u : 3u, 2};
            return true;
        case ge::DT_FLOAT:
            layout = {scalarValues ? 4u : 2u, 4, scalarValues ? 2u : 3u, 4};
            return true;
        default:
            return false;
    }
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const gert::StorageShape* vShape = context->GetInputShape(1);
    const auto xDesc = context->GetInputDesc(0);
    const auto vDesc = context->GetInputDesc(1);
    if (xShape == nullptr || vShape == nullptr || xDesc == nullptr || vDesc == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int64_t total = xShape->GetStorageShape().GetShapeSize();
    int64_t valueCount = vShape->GetStorageShape().GetShapeSize();
    if (total < 0 || total > UINT32_MAX || xDesc->GetDataType() != vDesc->GetDataType()) {
        return ge::GRAPH_FAILED;
    }
    // values: input's shape, or one element.
    bool scalarValues = valueCount == 1 && xShape->GetStorageShape() != vShape->GetStorageShape();
    if (!scalarValues && xShape->GetStorageShape() != vShape->GetStorageShape()) {
        return ge::GRAPH_FAILED;
    }
    HeavisideLayout layout;
    if (!LayoutOf(xDesc->GetDataType(), scalarValues, layout)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    HeavisidePlan plan;
    if (aivNum == 0 || !MakeHeavisidePlan(static_cast<uint64_t>(total), layout, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    HeavisideTilingData tiling;
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
class Heaviside : public OpDef {
public:
    explicit Heaviside(const char* name) : OpDef(name)
    {
        this->Input("input")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("values")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("out")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Heaviside);
}  // namespace ops
