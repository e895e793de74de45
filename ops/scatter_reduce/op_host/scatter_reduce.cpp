// ScatterReduce host side: tiling function, shape inference and the OpDef.
//
// y = torch.scatter_reduce(x, dim, index, src, reduce, include_self)
// (shared/ref/operators-l1-l3.md, Level 3): y = x, then every position p of
// src reduces src[p] into y at p with p[dim] replaced by index[p]; reduce is
// sum, prod, mean, amax or amin; with include_self the x value takes part
// (mean divides by count + 1), without it a target hit at least once holds
// the reduction of its scattered values only and a target never hit keeps x.
// index and src have x's shape except along dim.
//
// Tiling: x is [outer, dimX, inner] and index/src are [outer, dimSrc, inner]
// around dim. Targets of different outer slices or inner columns never
// mix, so a work unit is one outer slice, one chunk of inner columns and one
// block of target rows; the units are dealt to the vector cores in order,
// the first `tailCoreNum` taking one more. The column chunk is cut so that
// there are about as many units as cores (a multiple of 16 columns, at most
// MAX_CHUNK), and the row block is as many target rows as fit in UB beside
// the src and index tiles (TILE_BYTES of index per tile).
// Two kernel paths: the scalar loop (every src element read, reduced into
// its target and written back by the scalar unit) and, without counts
// (include_self and not mean), the one-hot vector path (per target row, one
// CompareScalar of the index tile, one Select of the values, a halving tree
// over the tile's rows and one combine), chosen by the cost model of
// VectorIsCheaper.
// Tiling keys: 1 + 2 * reduce + include_self for float32 (reduce 0 sum,
// 1 prod, 2 mean, 3 amax, 4 amin), 10 more for float16, 20 more for the
// vector path.
#include <cstdint>
#include <cstring>

#include "scatter_reduce_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t ALIGN_ELEMS = 16;      // columns per 32 B block of float16 (two of float32)
constexpr uint64_t MAX_COPY_ROWS = 4095;  // rows of one strided DataCopyPad
constexpr uint64_t UB_SLACK = 1024;       // bytes kept free in UB

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 16384;   // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;       // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;    // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MAX_CHUNK = 1024;     // ascendopt:knob min=16 max=4096 step=pow2
constexpr uint32_t SCALAR_CYCLES = 60;   // ascendopt:knob min=1 max=1024 step=1
constexpr uint32_t ISSUE_CYCLES = 40;    // ascendopt:knob min=1 max=1024 step=1

struct ScatterPlan {
    uint32_t coreNum;
    uint32_t chunkLen;
    uint32_t chunkNum;
    uint32_t blockRows;
    uint32_t rowBlockNum;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
    uint32_t tileRows;
    bool vectorPath;
};

// The one-hot vector path against the scalar loop, per tile of `tileRows`
// src rows of `chunkLen` columns reduced into `blockRows` target rows:
// scalar: SCALAR_CYCLES per element; vector: per target row a compare, a
// select, log2(tileRows) tree steps and a combine, each ISSUE_CYCLES plus
// one cycle per 64 lanes.
bool VectorIsCheaper(uint64_t blockRows, uint64_t tileRows, uint64_t chunkLen)
{
    uint64_t steps = 3;
    for (uint64_t r = 1; r < tileRows; r *= 2) {
        steps++;
    }
    uint64_t lanes = (tileRows * chunkLen + 63) / 64;
    uint64_t vectorCost = blockRows * steps * (ISSUE_CYCLES + lanes);
    uint64_t scalarCost = tileRows * chunkLen * SCALAR_CYCLES;
    return vectorCost < scalarCost;
}

// elemBytes: x's element size; counted: the kernel keeps a float32 count per
// target (mean, or include_self false).
bool MakeScatterPlan(uint64_t outer, uint64_t dimX, uint64_t dimSrc, uint64_t inner, uint32_t elemBytes,
                     bool counted, uint32_t aivNum, uint64_t ubBytes, ScatterPlan& plan)
{
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum == 0 || ubBytes <= UB_SLACK) {
        return false;
    }
    // Columns: about one unit per core.
    uint64_t chunks = (coreNum + outer - 1) / outer;
    uint64_t chunkLen = (inner + chunks - 1) / chunks;
    chunkLen = (chunkLen + ALIGN_ELEMS - 1) / ALIGN_ELEMS * ALIGN_ELEMS;
    if (chunkLen > MAX_CHUNK) {
        chunkLen = MAX_CHUNK / ALIGN_ELEMS * ALIGN_ELEMS;
    }
    if (chunkLen < ALIGN_ELEMS) {
        chunkLen = ALIGN_ELEMS;
    }
    uint64_t chunkNum = (inner + chunkLen - 1) / chunkLen;
    // src and index tiles: TILE_BYTES of index, double-buffered, and a
    // float32 copy of a float16 src tile.
    uint64_t tileRows = TILE_BYTES / (chunkLen * 4);
    if (tileRows == 0) {
        tileRows = 1;
    }
    if (tileRows > dimSrc) {
        tileRows = dimSrc;
    }
    if (tileRows > MAX_COPY_ROWS) {
        tileRows = MAX_COPY_ROWS;
    }
    // Tiles rounded up to 64 lanes; without counts, the vector path's float
    // index, selected values and mask.
    uint64_t tileElems = (tileRows * chunkLen + 63) / 64 * 64;
    uint64_t tileBytes = tileElems * (BUFFER_NUM * (elemBytes + 4) + (elemBytes == 2 ? 4 : 0)) +
                         (counted ? 0 : tileElems * 8 + tileElems / 8 + 32);
    if (tileBytes + UB_SLACK >= ubBytes) {
        return false;
    }
    // Target rows: float32 values, the counts, a float16 staging copy.
    uint64_t rowBytes = chunkLen * (4 + (counted ? 4 : 0) + (elemBytes == 2 ? 2 : 0));
    uint64_t blockRows = (ubBytes - UB_SLACK - tileBytes) / rowBytes;
    if (blockRows > MAX_COPY_ROWS) {
        blockRows = MAX_COPY_ROWS;
    }
    if (blockRows == 0) {
        return false;
    }
    uint64_t rowBlockNum = (dimX + blockRows - 1) / blockRows;
    blockRows = (dimX + rowBlockNum - 1) / rowBlockNum;  // even blocks
    uint64_t units = outer * chunkNum * rowBlockNum;
    if (coreNum > units) {
        coreNum = units;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.chunkLen = static_cast<uint32_t>(chunkLen);
    plan.chunkNum = static_cast<uint32_t>(chunkNum);
    plan.blockRows = static_cast<uint32_t>(blockRows);
    plan.rowBlockNum = static_cast<uint32_t>(rowBlockNum);
    plan.blockUnits = static_cast<uint32_t>(units / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(units % coreNum);
    plan.tileRows = static_cast<uint32_t>(tileRows);
    plan.vectorPath = !counted && VectorIsCheaper(blockRows, tileRows, chunkLen);
    return true;
}
// ascendopt:tiling-end

// The reduction's number: 0 sum, 1 prod, 2 mean, 3 amax, 4 amin; -1 unknown.
int32_t ReduceOf(const char* name)
{
    const char* names[] = {"sum", "prod", "mean", "amax", "amin"};
    for (int32_t i = 0; i < 5; i++) {
        if (name != nullptr && std::strcmp(name, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xStorage = context->GetInputShape(0);
    const gert::StorageShape* indexStorage = context->GetInputShape(1);
    const gert::StorageShape* srcStorage = context->GetInputShape(2);
    const auto xDesc = context->GetInputDesc(0);
    const auto indexDesc = context->GetInputDesc(1);
    const auto srcDesc = context->GetInputDesc(2);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xStorage == nullptr || indexStorage == nullptr || srcStorage == nullptr || xDesc == nullptr ||
        indexDesc == nullptr || srcDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* dimAttr = attrs->GetInt(0);
    const char* reduceAttr = attrs->GetStr(1);
    const bool* selfAttr = attrs->GetBool(2);
    if (dimAttr == nullptr || reduceAttr == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int32_t reduce = ReduceOf(reduceAttr);
    bool includeSelf = selfAttr == nullptr ? true : *selfAttr;
    ge::DataType dtype = xDesc->GetDataType();
    if (reduce < 0 || (dtype != ge::DT_FLOAT && dtype != ge::DT_FLOAT16) || srcDesc->GetDataType() != dtype ||
        indexDesc->GetDataType() != ge::DT_INT32) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x = xStorage->GetStorageShape();
    const gert::Shape& index = indexStorage->GetStorageShape();
    const gert::Shape& src = srcStorage->GetStorageShape();
    int64_t rank = static_cast<int64_t>(x.GetDimNum());
    int64_t dim = *dimAttr < 0 ? *dimAttr + rank : *dimAttr;
    if (rank == 0 || dim < 0 || dim >= rank || static_cast<int64_t>(index.GetDimNum()) != rank ||
        static_cast<int64_t>(src.GetDimNum()) != rank) {
        return ge::GRAPH_FAILED;
    }
    uint64_t outer = 1;
    uint64_t inner = 1;
    for (int64_t d = 0; d < rank; d++) {
        if (index.GetDim(d) != src.GetDim(d) || (d != dim && index.GetDim(d) != x.GetDim(d)) || x.GetDim(d) <= 0 ||
            index.GetDim(d) <= 0) {
            return ge::GRAPH_FAILED;
        }
        if (d < dim) {
            outer *= static_cast<uint64_t>(x.GetDim(d));
        } else if (d > dim) {
            inner *= static_cast<uint64_t>(x.GetDim(d));
        }
    }
    uint64_t dimX = static_cast<uint64_t>(x.GetDim(dim));
    uint64_t dimSrc = static_cast<uint64_t>(index.GetDim(dim));
    if (outer * dimX * inner > UINT32_MAX || outer * dimSrc * inner > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint32_t elemBytes = dtype == ge::DT_FLOAT ? 4 : 2;
    bool counted = reduce == 2 || !includeSelf;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    ScatterPlan plan;
    if (!MakeScatterPlan(outer, dimX, dimSrc, inner, elemBytes, counted, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    ScatterReduceTilingData tiling;
    tiling.set_outer(static_cast<uint32_t>(outer));
    tiling.set_dimX(static_cast<uint32_t>(dimX));
    tiling.set_dimSrc(static_cast<uint32_t>(dimSrc));
    tiling.set_inner(static_cast<uint32_t>(inner));
    tiling.set_chunkLen(plan.chunkLen);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_blockRows(plan.blockRows);
    tiling.set_rowBlockNum(plan.rowBlockNum);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_bufferNum(BUFFER_NUM);
    tiling.set_vectorPath(plan.vectorPath ? 1 : 0);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey((plan.vectorPath ? 20 : 0) + (dtype == ge::DT_FLOAT16 ? 10 : 0) + 1 + 2 * reduce +
                          (includeSelf ? 1 : 0));
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
class ScatterReduce : public OpDef {
public:
    explicit ScatterReduce(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("index").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("src").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("dim").Int();
        this->Attr("reduce").String();
        this->Attr("include_self").AttrType(OPTIONAL).Bool(true);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ScatterReduce);
}  // namespace ops
