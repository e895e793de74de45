// StridesliceNegConcatV2 host side: tiling function, shape inference and the
// OpDef.
//
// With C the last dimension and m = C / 2: y[..., :m] = x[..., :m] and
// y[..., m:] = -x[..., m:] (no half swap). x and y share one dtype.
//
// Tiling keys select the kernel path (see op_kernel/strideslice_neg_concat_v2.cpp):
//   1 float16, 2 float32, 3 bfloat16: short rows, whole rows per UB tile
//     times a +1/-1 pattern of the tile's rows (one Mul per tile);
//   4 float16, 5 float32, 6 bfloat16: long rows (a row does not fit a tile),
//     each half of a row in chunks, one Muls by +1 or -1 per chunk.
//
// Tiling: the rows are split over the vector cores (the first `tailCoreNum`
// cores take one row more), so a core's range starts at a row and its sign
// pattern is the same for every tile. Each core streams its rows through UB
// in equal tiles of at most TILE_BYTES of x (capped so that both queues with
// BUFFER_NUM buffers each, the pattern and its scratch fit in UB).
#include <cstdint>

#include "strideslice_neg_concat_v2_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;  // UB data block
// Single-buffered UB bytes per tile element: the float32 sign pattern and a
// float32 scratch (the index while the pattern is built, then the bf16
// path's float32 copy of x).
constexpr uint32_t PATTERN_BYTES = 8;

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 4096;   // ascendopt:knob min=32 max=65536 step=pow2

struct SncPlan {
    uint32_t coreNum;
    uint32_t blockRows;
    uint32_t tailCoreNum;
    uint32_t tileRows;  // 0: the long-row path
    uint32_t tileCap;
};

// Splits `rows` rows of `cols` elements over at most `aivNum` cores and sizes
// the UB tile. Returns false when no tile fits in `ubBytes`.
bool MakeSncPlan(uint64_t rows, uint64_t cols, uint32_t elemBytes, uint32_t aivNum, uint64_t ubBytes,
                 SncPlan& plan)
{
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > rows) {
        coreNum = rows;
    }
    // Small tensors: no core gets less than MIN_CORE_BYTES (whole rows).
    uint64_t rowBytes = cols * elemBytes;
    uint64_t coreCap = (rows * rowBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockRows = rows / coreNum;
    uint64_t tailCoreNum = rows % coreNum;

    uint64_t blockElems = BLOCK_BYTES / elemBytes;
    uint64_t maxTile = TILE_BYTES / elemBytes;
    uint64_t ubTile = ubBytes / (2 * BUFFER_NUM * elemBytes + PATTERN_BYTES);
    if (maxTile > ubTile) {
        maxTile = ubTile;
    }
    maxTile = maxTile / blockElems * blockElems;
    if (maxTile == 0) {
        return false;
    }
    uint64_t tileRows = 0;
    uint64_t tileCap = maxTile;
    if (cols <= maxTile) {
        // Equal tiles: the fewest tiles of at most maxTile / cols rows that
        // cover the largest core's rows.
        uint64_t rowsFit = maxTile / cols;
        uint64_t coreMax = blockRows + (tailCoreNum > 0 ? 1 : 0);
        uint64_t tileNum = (coreMax + rowsFit - 1) / rowsFit;
        if (tileNum == 0) {
            tileNum = 1;
        }
        tileRows = (coreMax + tileNum - 1) / tileNum;
        if (tileRows == 0) {
            tileRows = 1;
        }
        tileCap = (tileRows * cols + blockElems - 1) / blockElems * blockElems;
        if (tileCap > maxTile) {
            return false;
        }
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.blockRows = static_cast<uint32_t>(blockRows);
    plan.tailCoreNum = static_cast<uint32_t>(tailCoreNum);
    plan.tileRows = static_cast<uint32_t>(tileRows);
    plan.tileCap = static_cast<uint32_t>(tileCap);
    return true;
}
// ascendopt:tiling-end

// The short-row tiling key of a dtype and its element bytes.
bool KeyOf(ge::DataType dtype, uint64_t& key, uint32_t& elemBytes)
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
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const auto xDesc = context->GetInputDesc(0);
    if (xShape == nullptr || xDesc == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& shape = xShape->GetStorageShape();
    size_t rank = shape.GetDimNum();
    int64_t total = shape.GetShapeSize();
    if (rank == 0 || total <= 0 || total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    int64_t cols = shape.GetDim(rank - 1);
    if (cols <= 0) {
        return ge::GRAPH_FAILED;
    }
    uint64_t rows = static_cast<uint64_t>(total / cols);
    uint64_t key = 0;
    uint32_t elemBytes = 0;
    if (!KeyOf(xDesc->GetDataType(), key, elemBytes)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    SncPlan plan;
    if (aivNum == 0 ||
        !MakeSncPlan(rows, static_cast<uint64_t>(cols), elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }
    if (plan.tileRows == 0) {
        key += 3;  // the long-row path
    }

    StridesliceNegConcatV2TilingData tiling;
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_half(static_cast<uint32_t>(cols / 2));
    tiling.set_blockRows(plan.blockRows);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_tileCap(plan.tileCap);
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
class StridesliceNegConcatV2 : public OpDef {
public:
    explicit StridesliceNegConcatV2(const char* name) : OpDef(name)
    {
        this->Input("input")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("output")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(StridesliceNegConcatV2);
}  // namespace ops
