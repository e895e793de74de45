// StridedSliceAssignV2 host side: tiling function, shape inference and the
// OpDef.
//
// var[begin:end:strides] = input_value (numpy slice assignment) for var of
// any rank up to 8 (float16, float32, bfloat16, int8, int32, int64; a copy,
// so only the element size matters). begin/end/strides/axes follow
// operators-l2.md: axes name the dims (default 0..k-1), negative begin/end
// get + dim and are clamped to [0, dim], strides > 0 and 1 on the last dim.
// CANN passes them as int tensors; the simulated tiling cannot read tensor
// values, so they are list_int attributes with the same meaning. The op
// updates var in place; here the output var_out is a separate tensor that
// receives var with the slice replaced.
//
// Tiling: var rows (last dim) are split over the vector cores in balanced
// contiguous ranges; each core copies its rows through UB in tiles of
// TILE_BYTES, then writes the value rows that land in its range with
// strided DataCopyPads. Tiling key = element size in bytes (1, 2, 4, 8).
#include <cstdint>

#include "register/op_def_registry.h"
#include "strided_slice_assign_v2_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t MAX_RANK = 8;
constexpr uint64_t MAX_BLOCK_COUNT = 4095;  // DataCopyPad blockCount limit
constexpr uint32_t ATTR_BEGIN = 0;
constexpr uint32_t ATTR_END = 1;
constexpr uint32_t ATTR_STRIDES = 2;
constexpr uint32_t ATTR_AXES = 3;

uint64_t AlignUp(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

struct SlicePlan {
    uint32_t coreNum, blockRows, tailCoreNum, tileElems, valTileRows;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 4096;   // ascendopt:knob min=32 max=65536 step=pow2

bool MakeSlicePlan(uint64_t rows, uint64_t rowLen, uint64_t valRowLen, uint32_t eb, uint32_t aivNum,
                   uint64_t ubBytes, SlicePlan& plan)
{
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > rows) {
        coreNum = rows;
    }
    uint64_t coreCap = (rows * rowLen * eb + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t tileBytes = ubBytes / BUFFER_NUM;
    if (tileBytes > TILE_BYTES) {
        tileBytes = TILE_BYTES;
    }
    tileBytes = tileBytes / BLOCK_BYTES * BLOCK_BYTES;
    uint64_t valRowBytes = AlignUp(valRowLen * eb, BLOCK_BYTES);
    uint64_t valTileRows = tileBytes / valRowBytes;
    if (valTileRows == 0) {
        // One value row longer than a tile: give the tile that row.
        if (valRowBytes * BUFFER_NUM > ubBytes) {
            return false;
        }
        tileBytes = valRowBytes;
        valTileRows = 1;
    }
    if (valTileRows > MAX_BLOCK_COUNT) {
        valTileRows = MAX_BLOCK_COUNT;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.blockRows = static_cast<uint32_t>(rows / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(rows % coreNum);
    plan.tileElems = static_cast<uint32_t>(tileBytes / eb);
    plan.valTileRows = static_cast<uint32_t>(valTileRows);
    return true;
}
// ascendopt:tiling-end
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* varShape = context->GetInputShape(0);
    const gert::StorageShape* valShape = context->GetInputShape(1);
    const auto varDesc = context->GetInputDesc(0);
    const auto valDesc = context->GetInputDesc(1);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (varShape == nullptr || valShape == nullptr || varDesc == nullptr || valDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    if (varDesc->GetDataType() != valDesc->GetDataType()) {
        return ge::GRAPH_FAILED;
    }
    uint32_t eb = 0;
    switch (varDesc->GetDataType()) {
        case ge::DT_INT8:
            eb = 1;
            break;
        case ge::DT_FLOAT16:
        case ge::DT_BF16:
            eb = 2;
            break;
        case ge::DT_FLOAT:
        case ge::DT_INT32:
            eb = 4;
            break;
        case ge::DT_INT64:
            eb = 8;
            break;
        default:
            return ge::GRAPH_FAILED;
    }
    const gert::Shape& var = varShape->GetStorageShape();
    const gert::Shape& val = valShape->GetStorageShape();
    size_t rank = var.GetDimNum();
    if (rank == 0 || rank + 1 > MAX_RANK || val.GetDimNum() != rank || var.GetShapeSize() > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    const gert::TypedContinuousVector<int64_t>* begin = attrs->GetListInt(ATTR_BEGIN);
    const gert::TypedContinuousVector<int64_t>* end = attrs->GetListInt(ATTR_END);
    const gert::TypedContinuousVector<int64_t>* strides = attrs->GetListInt(ATTR_STRIDES);
    const gert::TypedContinuousVector<int64_t>* axes = attrs->GetListInt(ATTR_AXES);
    if (begin == nullptr || end == nullptr || strides == nullptr || axes == nullptr) {
        return ge::GRAPH_FAILED;
    }
    size_t k = begin->GetSize();
    if (end->GetSize() != k || strides->GetSize() != k || (axes->GetSize() != 0 && axes->GetSize() != k)) {
        return ge::GRAPH_FAILED;
    }
    // Per dim: begin, step, count (a 1-D var gets a leading dim of 1).
    size_t lead = rank == 1 ? 1 : 0;
    uint32_t dims[MAX_RANK] = {};
    uint32_t counts[MAX_RANK] = {};
    uint32_t begins[MAX_RANK] = {};
    uint32_t steps[MAX_RANK] = {};
    for (size_t i = 0; i < MAX_RANK; i++) {
        dims[i] = 1;
        counts[i] = 1;
        steps[i] = 1;
    }
    for (size_t i = 0; i < rank; i++) {
        dims[lead + i] = static_cast<uint32_t>(var.GetDim(i));
        counts[lead + i] = static_cast<uint32_t>(var.GetDim(i));
    }
    for (size_t i = 0; i < k; i++) {
        int64_t axis = axes->GetSize() == 0 ? static_cast<int64_t>(i) : axes->GetData()[i];
        axis = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
        if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
            return ge::GRAPH_FAILED;
        }
        int64_t dim = var.GetDim(static_cast<size_t>(axis));
        int64_t b = begin->GetData()[i];
        int64_t e = end->GetData()[i];
        int64_t s = strides->GetData()[i];
        b = b < 0 ? b + dim : b;
        e = e < 0 ? e + dim : e;
        b = b < 0 ? 0 : (b > dim ? dim : b);
        e = e < 0 ? 0 : (e > dim ? dim : e);
        if (s <= 0 || (axis == static_cast<int64_t>(rank) - 1 && s != 1)) {
            return ge::GRAPH_FAILED;
        }
        size_t a = lead + static_cast<size_t>(axis);
        begins[a] = static_cast<uint32_t>(b);
        steps[a] = static_cast<uint32_t>(s);
        counts[a] = static_cast<uint32_t>(e > b ? (e - b + s - 1) / s : 0);
    }
    for (size_t i = 0; i < rank; i++) {
        if (static_cast<int64_t>(counts[lead + i]) != val.GetDim(i)) {
            return ge::GRAPH_FAILED;
        }
    }
    uint32_t fullRank = static_cast<uint32_t>(rank + lead);
    uint64_t rowLen = dims[fullRank - 1];
    if (rowLen == 0) {
        return ge::GRAPH_FAILED;
    }
    uint64_t rows = static_cast<uint64_t>(var.GetShapeSize()) / rowLen;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    SlicePlan plan;
    if (aivNum == 0 || !MakeSlicePlan(rows, rowLen, counts[fullRank - 1], eb, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    StridedSliceAssignV2TilingData tiling;
    tiling.set_rank(fullRank);
    tiling.set_varDims(dims);
    tiling.set_valDims(counts);
    tiling.set_begins(begins);
    tiling.set_steps(steps);
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_blockRows(plan.blockRows);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileElems(plan.tileElems);
    tiling.set_valTileRows(plan.valTileRows);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(eb);
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
    const gert::Shape* varShape = context->GetInputShape(0);
    gert::Shape* outShape = context->GetOutputShape(0);
    if (varShape == nullptr || outShape == nullptr) {
        return GRAPH_FAILED;
    }
    *outShape = *varShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class StridedSliceAssignV2 : public OpDef {
public:
    explicit StridedSliceAssignV2(const char* name) : OpDef(name)
    {
        this->Input("var")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("input_value")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("var_out")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("begin").AttrType(REQUIRED).ListInt();
        this->Attr("end").AttrType(REQUIRED).ListInt();
        this->Attr("strides").AttrType(REQUIRED).ListInt();
        this->Attr("axes").AttrType(OPTIONAL).ListInt({});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(StridedSliceAssignV2);
}  // namespace ops
