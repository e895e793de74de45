// Cast host side: tiling function, shape and dtype inference and the OpDef.
//
// y = x converted to the ge::DataType code in attr `dst_type`. Supported
// pairs (tiling key, vector Cast round mode):
//   1 float16  -> float32   exact (CAST_NONE)
//   2 float32  -> float16   round to nearest even (CAST_RINT)
//   3 float32  -> int32     toward zero (CAST_TRUNC)
//   4 bfloat16 -> float32   exact (CAST_NONE)
//   5 float32  -> bfloat16  round to nearest even (CAST_RINT)
//   6 float16  -> int32     toward zero (CAST_TRUNC)
//   7 int32    -> float32   round to nearest even (CAST_RINT)
// Any other pair fails the tiling.
//
// Tiling: the flat tensor is split over the vector cores in units of
// SPLIT_UNIT_BYTES of the narrower dtype (so every core range is aligned in
// x and in y); the first `tailCoreNum` cores take one unit more. Each core
// streams its range through UB in tiles of TILE_BYTES of the wider dtype
// (capped so that the in and out queues with BUFFER_NUM buffers each fit in
// UB).
#include <cstdint>

#include "cast_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint32_t ATTR_DST_TYPE = 0;     // index of attr `dst_type`

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2

struct CastPlan {
    uint32_t coreNum;
    uint32_t unitLength;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
    uint32_t tileLength;
};

// Splits `total` elements (x of `inBytes`, y of `outBytes` bytes each) over at
// most `aivNum` cores and sizes the UB tile. Returns false when no tile fits
// in `ubBytes`.
bool MakeCastPlan(uint64_t total, uint32_t inBytes, uint32_t outBytes, uint32_t aivNum, uint64_t ubBytes,
                  CastPlan& plan)
{
    uint32_t narrowBytes = inBytes < outBytes ? inBytes : outBytes;
    uint32_t wideBytes = inBytes < outBytes ? outBytes : inBytes;
    uint64_t unitLength = SPLIT_UNIT_BYTES / narrowBytes;
    if (unitLength == 0) {
        unitLength = 1;
    }
    uint64_t units = (total + unitLength - 1) / unitLength;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Tiny tensors: no core gets less than MIN_CORE_BYTES.
    uint64_t coreCap = (total * wideBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;

    // Tile: TILE_BYTES of the wider dtype, but BUFFER_NUM in and out buffers
    // must fit in UB; whole 512 B bursts of the narrower dtype when possible.
    uint64_t tileLength = TILE_BYTES / wideBytes;
    uint64_t ubLength = ubBytes / (BUFFER_NUM * (inBytes + outBytes));
    if (tileLength > ubLength) {
        tileLength = ubLength;
    }
    uint64_t burstElems = GM_ALIGN_BYTES / narrowBytes;
    uint64_t blockElems = BLOCK_BYTES / narrowBytes;
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

struct CastPair {
    ge::DataType src;
    ge::DataType dst;
    uint64_t key;
    uint32_t inBytes;
    uint32_t outBytes;
};

constexpr CastPair CAST_PAIRS[] = {
    {ge::DT_FLOAT16, ge::DT_FLOAT, 1, 2, 4}, {ge::DT_FLOAT, ge::DT_FLOAT16, 2, 4, 2},
    {ge::DT_FLOAT, ge::DT_INT32, 3, 4, 4},   {ge::DT_BF16, ge::DT_FLOAT, 4, 2, 4},
    {ge::DT_FLOAT, ge::DT_BF16, 5, 4, 2},    {ge::DT_FLOAT16, ge::DT_INT32, 6, 2, 4},
    {ge::DT_INT32, ge::DT_FLOAT, 7, 4, 4},
};

const CastPair* FindPair(ge::DataType src, int64_t dst)
{
    for (const CastPair& pair : CAST_PAIRS) {
        if (pair.src == src && static_cast<int64_t>(pair.dst) == dst) {
            return &pair;
        }
    }
    return nullptr;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const auto xDesc = context->GetInputDesc(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || xDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* dstType = attrs->GetAttrPointer<int64_t>(ATTR_DST_TYPE);
    if (dstType == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const CastPair* pair = FindPair(xDesc->GetDataType(), *dstType);
    if (pair == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const auto yDesc = context->GetOutputDesc(0);
    if (yDesc != nullptr && yDesc->GetDataType() != pair->dst) {
        return ge::GRAPH_FAILED;
    }
    int64_t total = xShape->GetStorageShape().GetShapeSize();
    if (total < 0 || total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    CastPlan plan;
    if (aivNum == 0 ||
        !MakeCastPlan(static_cast<uint64_t>(total), pair->inBytes, pair->outBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    CastTilingData tiling;
    tiling.set_totalLength(static_cast<uint32_t>(total));
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileLength(plan.tileLength);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(pair->key);
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
class Cast : public OpDef {
public:
    explicit Cast(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT16,
                       ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_INT32, ge::DT_FLOAT, ge::DT_BF16, ge::DT_INT32,
                       ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND});
        this->Attr("dst_type").AttrType(REQUIRED).Int();

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Cast);
}  // namespace ops
