// Reshape host side: tiling function, shape inference and the OpDef.
//
// y holds x's bytes in a new shape (Caffe-style: attrs `axis` and
// `num_axes` select the dims of x that the values of input `shape` replace;
// 0 copies a dim, -1 takes what is left). The element count does not
// change, so the kernel is a dtype-agnostic contiguous byte copy; only the
// output shape depends on `shape`, and the framework allocates y.
//
// Tiling: the flat byte range is split over the vector cores in units of
// SPLIT_UNIT_BYTES (512 B keeps every core's GM range 512 B aligned); the
// first `tailCoreNum` cores take one unit more. Each core streams its range
// through UB in tiles of TILE_BYTES (capped so that BUFFER_NUM buffers fit
// in UB); one bound queue (VECIN -> VECOUT) carries every tile from MTE2 to
// MTE3 without a vector pass. Tiling key 1 (one path for every dtype).
#include <cstdint>
#include <vector>

#include "register/op_def_registry.h"
#include "reshape_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t TILING_KEY_BYTES = 1;
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 65536;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512
constexpr uint32_t MIN_CORE_BYTES = 4096;   // ascendopt:knob min=32 max=65536 step=pow2

struct ReshapePlan {
  uint32_t coreNum;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileBytes;
};

// Splits `totalBytes` over at most `aivNum` cores and sizes the UB tile.
// Returns false when no tile fits in `ubBytes`.
bool MakeReshapePlan(uint64_t totalBytes, uint32_t aivNum, uint64_t ubBytes, ReshapePlan& plan)
{
    uint64_t units = (totalBytes + SPLIT_UNIT_BYTES - 1) / SPLIT_UNIT_BYTES;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Tiny tensors: no core gets less than MIN_CORE_BYTES.
    uint64_t coreCap = (totalBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;

    // Tile: TILE_BYTES, but all BUFFER_NUM buffers must fit in UB.
    uint64_t maxTile = ubBytes / BUFFER_NUM;
    if (maxTile > TILE_BYTES) {
        maxTile = TILE_BYTES;
    }
    maxTile = maxTile >= GM_ALIGN_BYTES ? maxTile / GM_ALIGN_BYTES * GM_ALIGN_BYTES
                                        : maxTile / BLOCK_BYTES * BLOCK_BYTES;
    if (maxTile == 0) {
        return false;
    }
    // Equal tiles: the fewest tiles of at most maxTile bytes that cover the
    // largest core range, rounded up to whole GM bursts (one tile: to a UB
    // block).
    uint64_t coreMax = (blockUnits + (tailCoreNum > 0 ? 1 : 0)) * SPLIT_UNIT_BYTES;
    if (coreMax > totalBytes) {
        coreMax = totalBytes;
    }
    uint64_t tileNum = coreMax == 0 ? 1 : (coreMax + maxTile - 1) / maxTile;
    uint64_t align = tileNum > 1 ? GM_ALIGN_BYTES : BLOCK_BYTES;
    if (maxTile % align != 0) {
        align = BLOCK_BYTES;
    }
    uint64_t tileBytes = (coreMax + tileNum - 1) / tileNum;
    tileBytes = (tileBytes + align - 1) / align * align;
    if (tileBytes == 0) {
        tileBytes = align;
    }
    if (tileBytes > maxTile) {
        return false;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.blockUnits = static_cast<uint32_t>(blockUnits);
    plan.tailCoreNum = static_cast<uint32_t>(tailCoreNum);
    plan.tileBytes = static_cast<uint32_t>(tileBytes);
    return true;
}
// ascendopt:tiling-end

uint32_t ElemBytes(ge::DataType dtype)
{
    switch (dtype) {
        case ge::DT_INT8:
        case ge::DT_UINT8:
            return 1;
        case ge::DT_FLOAT16:
        case ge::DT_BF16:
        case ge::DT_INT16:
        case ge::DT_UINT16:
            return 2;
        case ge::DT_FLOAT:
        case ge::DT_INT32:
        case ge::DT_UINT32:
            return 4;
        case ge::DT_INT64:
        case ge::DT_UINT64:
            return 8;
        default:
            return 0;
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
    uint32_t elemBytes = ElemBytes(xDesc->GetDataType());
    if (total < 0 || elemBytes == 0 || static_cast<uint64_t>(total) > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t totalBytes = static_cast<uint64_t>(total) * elemBytes;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    ReshapePlan plan;
    if (aivNum == 0 || !MakeReshapePlan(totalBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    ReshapeTilingData tiling;
    tiling.set_totalBytes(totalBytes);
    tiling.set_unitBytes(SPLIT_UNIT_BYTES);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileBytes(plan.tileBytes);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(TILING_KEY_BYTES);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
// y's shape depends on the values of `shape` (ValueDepend), which the
// framework resolves; the kernel needs only the byte count.
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* xShape = context->GetInputShape(0);
    gert::Shape* yShape = context->GetOutputShape(0);
    if (xShape == nullptr || yShape == nullptr) {
        return GRAPH_FAILED;
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
namespace {
// Every (x dtype, shape dtype) pair: x and y take any of DATA_TYPES, shape
// int32 or int64.
const ge::DataType DATA_TYPES[] = {ge::DT_FLOAT16, ge::DT_FLOAT,  ge::DT_BF16,   ge::DT_INT8,
                                   ge::DT_UINT8,   ge::DT_INT16,  ge::DT_UINT16, ge::DT_INT32,
                                   ge::DT_UINT32,  ge::DT_INT64,  ge::DT_UINT64};
const ge::DataType SHAPE_TYPES[] = {ge::DT_INT32, ge::DT_INT64};

struct TypeLists {
    std::vector<ge::DataType> data;
    std::vector<ge::DataType> shape;
    std::vector<ge::Format> format;
};

TypeLists MakeTypeLists()
{
    TypeLists lists;
    for (ge::DataType shapeType : SHAPE_TYPES) {
        for (ge::DataType dataType : DATA_TYPES) {
            lists.data.push_back(dataType);
            lists.shape.push_back(shapeType);
            lists.format.push_back(ge::FORMAT_ND);
        }
    }
    return lists;
}
}  // namespace

class Reshape : public OpDef {
public:
    explicit Reshape(const char* name) : OpDef(name)
    {
        const TypeLists lists = MakeTypeLists();
        this->Input("x").ParamType(REQUIRED).DataType(lists.data).Format(lists.format);
        this->Input("shape").ParamType(REQUIRED).ValueDepend(REQUIRED).DataType(lists.shape).Format(lists.format);
        this->Output("y").ParamType(REQUIRED).DataType(lists.data).Format(lists.format);
        this->Attr("axis").AttrType(OPTIONAL).Int(0);
        this->Attr("num_axes").AttrType(OPTIONAL).Int(-1);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Reshape);
}  // namespace ops
