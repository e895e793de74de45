// Gcd host side: tiling function, shape inference and the OpDef.
//
// y = gcd(|x1|, |x2|) >= 0, gcd(0, 0) = 0, with numpy broadcasting (up to
// 5 collapsed dimensions); x1, x2 and y share one dtype (int16 or int32). A
// gcd of 2^15 (int16) or 2^31 (int32) wraps to the dtype's minimum, as
// numpy and torch.
//
// Tiling: the broadcast output shape is collapsed (size-1 dims dropped,
// neighbours merged where both inputs stay contiguous) to [outer..., cols]
// (see gcd_tiling.h). A row whose tile fits in UB is one chunk and a tile
// holds several rows of one run of the last outer dim (one strided copy per
// input); a longer row is cut into chunks of at most TILE_BYTES, and rows are
// cut into chunks of at least MIN_CHUNK_BYTES when there are fewer rows than
// cores. Equal shapes collapse to a single row cut into chunks. Units (row,
// chunk) are split over the vector cores, the first `tailCoreNum` cores
// taking one more. The kernel runs a vectorised Euclid; MIN_ITERS and
// CHECK_EVERY set when it checks that every lane of a tile is done. Tiling
// keys: 1 int16, 2 int32.
#include <cstdint>

#include "gcd_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t TILING_KEY_INT16 = 1;
constexpr uint64_t TILING_KEY_INT32 = 2;
constexpr uint32_t QUEUE_NUM = 3;          // x1 and x2 in, y out
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t BLOCK_BYTES = 32;       // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;   // preferred GM burst alignment
constexpr uint64_t MAX_TILE_ROWS = 4095;   // DataCopyPad blockCount limit
constexpr size_t MAX_RANK = 8;
constexpr size_t OUTER_DIMS = 4;

// 32-bit work buffers of one tile (mirrors the kernel's InitBuffer calls):
// the float Euclid needs three float buffers; int32 adds the exact integer
// Euclid's two float and two int32 buffers.
uint32_t WorkBufNum(uint32_t elemBytes)
{
    return elemBytes == FLOAT_BYTES ? 7 : 3;
}

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return CeilDiv(value, align) * align;
}

struct GcdPlan {
    uint32_t coreNum;
    uint32_t chunkLen;
    uint32_t chunkNum;
    uint32_t tileRows;
    uint32_t tileElems;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 16384;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CHUNK_BYTES = 2048;  // ascendopt:knob min=512 max=65536 step=pow2
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2
constexpr uint32_t MIN_ITERS = 8;           // ascendopt:knob min=1 max=32 step=1
constexpr uint32_t CHECK_EVERY = 2;         // ascendopt:knob min=1 max=8 step=1

// Plans `rows` rows (runs of `group` rows have linear input offsets) of
// `cols` elements over at most `aivNum` cores. Returns false when no tile
// fits in `ubBytes`.
bool MakeGcdPlan(uint64_t rows, uint64_t group, uint64_t cols, uint32_t elemBytes, uint32_t aivNum,
                 uint64_t ubBytes, GcdPlan& plan)
{
    uint64_t blockElems = BLOCK_BYTES / elemBytes;
    uint64_t burstElems = GM_ALIGN_BYTES / elemBytes;
    uint64_t bytesPerElem = QUEUE_NUM * BUFFER_NUM * elemBytes + WorkBufNum(elemBytes) * FLOAT_BYTES;
    // Reduction scratch: a float per 32 elements, at least a block, twice.
    uint64_t reserve = 4 * BLOCK_BYTES;
    uint64_t maxTile = TILE_BYTES / elemBytes;
    if (ubBytes <= reserve) {
        return false;
    }
    if (maxTile > (ubBytes - reserve) / (bytesPerElem + 1)) {
        maxTile = (ubBytes - reserve) / (bytesPerElem + 1);
    }
    maxTile = maxTile >= burstElems ? maxTile / burstElems * burstElems : maxTile / blockElems * blockElems;
    if (maxTile == 0) {
        return false;
    }
    uint64_t coreMax = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t stride = AlignUp(cols, blockElems);
    uint64_t chunkNum = stride > maxTile ? CeilDiv(cols, maxTile) : 1;
    if (rows * chunkNum < coreMax) {
        uint64_t want = CeilDiv(coreMax, rows);
        uint64_t most = cols * elemBytes / MIN_CHUNK_BYTES;
        if (want > most) {
            want = most;
        }
        if (want > chunkNum) {
            chunkNum = want;
        }
    }
    uint64_t chunkLen = cols;
    uint64_t tileRows = 1;
    uint64_t tileElems = stride;
    if (chunkNum > 1) {
        uint64_t align = maxTile >= burstElems ? burstElems : blockElems;
        chunkLen = AlignUp(CeilDiv(cols, chunkNum), align);
        if (chunkLen > maxTile) {
            chunkLen = maxTile;
        }
        chunkNum = CeilDiv(cols, chunkLen);
        tileElems = chunkLen;
    }
    uint64_t units = rows * chunkNum;
    uint64_t coreNum = coreMax < units ? coreMax : units;
    uint64_t coreCap = CeilDiv(rows * cols * elemBytes, MIN_CORE_BYTES);
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    if (chunkNum == 1) {
        tileRows = maxTile / stride;
        uint64_t caps[] = {MAX_TILE_ROWS, group, CeilDiv(units, coreNum)};
        for (uint64_t cap : caps) {
            if (tileRows > cap) {
                tileRows = cap;
            }
        }
        if (tileRows == 0) {
            tileRows = 1;
        }
        tileElems = tileRows * stride;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.chunkLen = static_cast<uint32_t>(chunkLen);
    plan.chunkNum = static_cast<uint32_t>(chunkNum);
    plan.tileRows = static_cast<uint32_t>(tileRows);
    plan.tileElems = static_cast<uint32_t>(tileElems);
    plan.blockUnits = static_cast<uint32_t>(units / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(units % coreNum);
    return true;
}
// ascendopt:tiling-end

bool KeyOf(ge::DataType dtype, uint64_t& key, uint32_t& elemBytes)
{
    switch (dtype) {
        case ge::DT_INT16:
            key = TILING_KEY_INT16;
            elemBytes = 2;
            return true;
        case ge::DT_INT32:
            key = TILING_KEY_INT32;
            elemBytes = 4;
            return true;
        default:
            return false;
    }
}

// The collapsed broadcast view of x1 and x2.
struct BroadcastView {
    uint64_t outDims[OUTER_DIMS];
    uint64_t strides1[OUTER_DIMS];
    uint64_t strides2[OUTER_DIMS];
    uint64_t cols;
    uint64_t inner1;
    uint64_t inner2;
    uint64_t total;
};

// numpy broadcasting of `a` and `b`, then size-1 dims dropped and neighbour
// dims merged while both inputs stay contiguous across them. Returns false
// for incompatible shapes or more than OUTER_DIMS + 1 collapsed dims.
bool Broadcast(const gert::Shape& a, const gert::Shape& b, BroadcastView& view)
{
    size_t rankA = a.GetDimNum();
    size_t rankB = b.GetDimNum();
    size_t rank = rankA > rankB ? rankA : rankB;
    if (rank > MAX_RANK) {
        return false;
    }
    uint64_t dims[MAX_RANK];
    uint64_t sizeA[MAX_RANK];
    uint64_t sizeB[MAX_RANK];
    for (size_t i = 0; i < rank; i++) {
        int64_t da = i + rankA >= rank ? a.GetDim(i + rankA - rank) : 1;
        int64_t db = i + rankB >= rank ? b.GetDim(i + rankB - rank) : 1;
        if (da < 0 || db < 0 || (da != db && da != 1 && db != 1)) {
            return false;
        }
        sizeA[i] = static_cast<uint64_t>(da);
        sizeB[i] = static_cast<uint64_t>(db);
        dims[i] = da == 1 ? static_cast<uint64_t>(db) : static_cast<uint64_t>(da);
    }
    // Element strides (0 where broadcast), innermost first.
    uint64_t strideA[MAX_RANK];
    uint64_t strideB[MAX_RANK];
    uint64_t runA = 1;
    uint64_t runB = 1;
    view.total = 1;
    for (size_t k = rank; k-- > 0;) {
        strideA[k] = sizeA[k] == 1 ? 0 : runA;
        strideB[k] = sizeB[k] == 1 ? 0 : runB;
        runA *= sizeA[k];
        runB *= sizeB[k];
        view.total *= dims[k];
    }
    // Collapse, innermost first, skipping size-1 dims.
    uint64_t cd[MAX_RANK];
    uint64_t cs1[MAX_RANK];
    uint64_t cs2[MAX_RANK];
    size_t n = 0;
    for (size_t k = rank; k-- > 0;) {
        if (dims[k] == 1) {
            continue;
        }
        if (n > 0 && strideA[k] == cs1[n - 1] * cd[n - 1] && strideB[k] == cs2[n - 1] * cd[n - 1]) {
            cd[n - 1] *= dims[k];
            continue;
        }
        cd[n] = dims[k];
        cs1[n] = strideA[k];
        cs2[n] = strideB[k];
        n++;
    }
    if (n == 0) {
        cd[0] = 1;
        cs1[0] = 1;
        cs2[0] = 1;
        n = 1;
    }
    if (n > OUTER_DIMS + 1) {
        return false;
    }
    view.cols = cd[0];
    view.inner1 = cs1[0] == 0 ? 0 : 1;
    view.inner2 = cs2[0] == 0 ? 0 : 1;
    for (size_t d = 0; d < OUTER_DIMS; d++) {
        // outDims[3] is the fastest outer dim: collapsed dim 1.
        size_t c = OUTER_DIMS - d;
        bool used = c < n;
        view.outDims[d] = used ? cd[c] : 1;
        view.strides1[d] = used ? cs1[c] : 0;
        view.strides2[d] = used ? cs2[c] : 0;
    }
    return true;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* x1Shape = context->GetInputShape(0);
    const gert::StorageShape* x2Shape = context->GetInputShape(1);
    const auto x1Desc = context->GetInputDesc(0);
    const auto x2Desc = context->GetInputDesc(1);
    if (x1Shape == nullptr || x2Shape == nullptr || x1Desc == nullptr || x2Desc == nullptr ||
        x1Desc->GetDataType() != x2Desc->GetDataType()) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint32_t elemBytes = 0;
    if (!KeyOf(x1Desc->GetDataType(), key, elemBytes)) {
        return ge::GRAPH_FAILED;
    }
    BroadcastView view;
    if (!Broadcast(x1Shape->GetStorageShape(), x2Shape->GetStorageShape(), view) || view.total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t rows = view.outDims[0] * view.outDims[1] * view.outDims[2] * view.outDims[3];

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    GcdPlan plan;
    if (aivNum == 0 || view.total == 0 ||
        !MakeGcdPlan(rows, view.outDims[3], view.cols, elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    GcdTilingData tiling;
    uint32_t outDims[OUTER_DIMS];
    uint32_t strides1[OUTER_DIMS];
    uint32_t strides2[OUTER_DIMS];
    for (size_t d = 0; d < OUTER_DIMS; d++) {
        outDims[d] = static_cast<uint32_t>(view.outDims[d]);
        strides1[d] = static_cast<uint32_t>(view.strides1[d]);
        strides2[d] = static_cast<uint32_t>(view.strides2[d]);
    }
    tiling.set_outDims(outDims);
    tiling.set_x1Strides(strides1);
    tiling.set_x2Strides(strides2);
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(view.cols));
    tiling.set_x1Inner(static_cast<uint32_t>(view.inner1));
    tiling.set_x2Inner(static_cast<uint32_t>(view.inner2));
    tiling.set_chunkLen(plan.chunkLen);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_tileElems(plan.tileElems);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_bufferNum(BUFFER_NUM);
    tiling.set_minIters(MIN_ITERS);
    tiling.set_checkEvery(CHECK_EVERY);

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
    const gert::Shape* a = context->GetInputShape(0);
    const gert::Shape* b = context->GetInputShape(1);
    gert::Shape* y = context->GetOutputShape(0);
    if (a == nullptr || b == nullptr || y == nullptr) {
        return GRAPH_FAILED;
    }
    size_t rankA = a->GetDimNum();
    size_t rankB = b->GetDimNum();
    size_t rank = rankA > rankB ? rankA : rankB;
    y->SetDimNum(rank);
    for (size_t i = 0; i < rank; i++) {
        int64_t da = i + rankA >= rank ? a->GetDim(i + rankA - rank) : 1;
        int64_t db = i + rankB >= rank ? b->GetDim(i + rankB - rank) : 1;
        if (da != db && da != 1 && db != 1) {
            return GRAPH_FAILED;
        }
        y->SetDim(i, da == 1 ? db : da);
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class Gcd : public OpDef {
public:
    explicit Gcd(const char* name) : OpDef(name)
    {
        this->Input("x1")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT16, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("x2")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT16, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT16, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Gcd);
}  // namespace ops
