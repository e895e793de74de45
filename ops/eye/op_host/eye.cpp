// Eye host side: tiling function, shape inference and the OpDef.
//
// y = batch_shape + [num_rows, num_columns] with 1 where the row equals the
// column and 0 elsewhere, every batch slice identical (torch.eye(n, m)
// expanded). Attrs: num_rows (required), num_columns (0 means num_rows),
// batch_shape (default []), dtype (the ge::DataType of y: 0 float32,
// 1 float16, 3 int32). The kernel writes every element of y, so y needs no
// zero initialisation.
//
// Tiling: y is matNum = prod(batch_shape) matrices of matRows x cols whose
// ones sit at flat positions k * (cols + 1), k < min(matRows, cols). The
// kernel builds a pattern tile of up to TILE_BYTES once and then only
// streams it, and a zero tile of ZERO_BYTES, to GM with MTE3 (no queue, no
// per-tile vector work, so the DMAs run back to back). When a matrix fits in
// the pattern ("batch", tiling key dtype * 10 + 1), the pattern holds whole
// matrices and matrices are balanced over the cores; otherwise ("periodic",
// key dtype * 10 + 2) the pattern holds whole periods of cols + 1 elements
// and rows are balanced over the cores. The first `tailCoreNum` cores take
// one unit more. Dtype: 1 float16, 2 float32, 3 int32.
#include <cstdint>

#include "eye_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t MODE_BATCH = 1;
constexpr uint64_t MODE_PERIODIC = 2;
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t BUILD_BYTES = 3 * 64 * 4;  // the pattern build needs 3 float vectors of >= 64 in the zero tile
constexpr uint32_t ATTR_NUM_ROWS = 0;
constexpr uint32_t ATTR_NUM_COLUMNS = 1;
constexpr uint32_t ATTR_BATCH_SHAPE = 2;

struct EyePlan {
    uint64_t mode;
    uint32_t coreNum;
    uint32_t unitNum;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
    uint32_t patternElems;
    uint32_t zeroElems;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 65536;     // ascendopt:knob min=1024 max=98304 step=1024
constexpr uint32_t ZERO_BYTES = 65536;     // ascendopt:knob min=1024 max=98304 step=1024
constexpr uint32_t MAX_CORE_NUM = 48;      // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 8192;  // ascendopt:knob min=32 max=65536 step=pow2

// Sizes the pattern and zero tiles and splits the work of matNum matrices of
// rows x cols over at most `aivNum` cores. Returns false when the tiles do
// not fit in UB.
bool MakeEyePlan(uint64_t matNum, uint64_t rows, uint64_t cols, uint32_t elemBytes, uint32_t aivNum,
                 uint64_t ubBytes, EyePlan& plan)
{
    uint64_t tileElems = TILE_BYTES / BLOCK_BYTES * BLOCK_BYTES / elemBytes;
    uint64_t zeroBytes = ZERO_BYTES / BLOCK_BYTES * BLOCK_BYTES;
    // The zero tile takes what UB has left (it bounds the zero DMAs and the
    // pattern build's scratch only).
    if (tileElems * elemBytes < ubBytes && zeroBytes > (ubBytes - tileElems * elemBytes) / BLOCK_BYTES * BLOCK_BYTES) {
        zeroBytes = (ubBytes - tileElems * elemBytes) / BLOCK_BYTES * BLOCK_BYTES;
    }
    if (zeroBytes < BUILD_BYTES) {
        zeroBytes = BUILD_BYTES;
    }
    if (tileElems == 0 || tileElems * elemBytes + zeroBytes > ubBytes) {
        return false;
    }
    uint64_t matElems = rows * cols;
    uint64_t period = cols + 1;
    uint64_t mode = MODE_PERIODIC;
    uint64_t units = matNum * rows;
    uint64_t unitBytes = cols * elemBytes;
    uint64_t patternElems = period <= tileElems ? tileElems / period * period : tileElems;
    if (matElems > 0 && matElems <= tileElems) {
        mode = MODE_BATCH;
        units = matNum;
        unitBytes = matElems * elemBytes;
        patternElems = tileElems / matElems * matElems;
    }

    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Tiny outputs: no core gets less than MIN_CORE_BYTES.
    uint64_t coreCap = (units * unitBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    // The pattern costs vector work per element: no larger than what the
    // busiest core writes.
    uint64_t coreUnits = (units + coreNum - 1) / coreNum;
    if (mode == MODE_BATCH && patternElems > coreUnits * matElems) {
        patternElems = coreUnits * matElems;
    } else if (mode == MODE_PERIODIC && patternElems > coreUnits * cols + period) {
        patternElems = (coreUnits * cols + period) / period * period;
        if (patternElems == 0) {
            patternElems = tileElems;
        }
    }
    plan.mode = mode;
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.unitNum = static_cast<uint32_t>(units);
    plan.blockUnits = static_cast<uint32_t>(units / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(units % coreNum);
    plan.patternElems = static_cast<uint32_t>(patternElems);
    plan.zeroElems = static_cast<uint32_t>(zeroBytes / elemBytes);
    return true;
}
// ascendopt:tiling-end

bool DtypeKey(ge::DataType dtype, uint64_t& key, uint32_t& elemBytes)
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
        case ge::DT_INT32:
            key = 3;
            elemBytes = 4;
            return true;
        default:
            return false;
    }
}

// num_rows, num_columns (0 = num_rows) and prod(batch_shape) from the attrs.
bool EyeDims(const gert::RuntimeAttrs* attrs, int64_t& rows, int64_t& cols, int64_t& matNum)
{
    const int64_t* numRows = attrs->GetAttrPointer<int64_t>(ATTR_NUM_ROWS);
    const int64_t* numColumns = attrs->GetAttrPointer<int64_t>(ATTR_NUM_COLUMNS);
    const gert::TypedContinuousVector<int64_t>* batch = attrs->GetListInt(ATTR_BATCH_SHAPE);
    if (numRows == nullptr || numColumns == nullptr || batch == nullptr || *numRows < 0 || *numColumns < 0) {
        return false;
    }
    rows = *numRows;
    cols = *numColumns == 0 ? rows : *numColumns;
    matNum = 1;
    for (size_t i = 0; i < batch->GetSize(); i++) {
        int64_t dim = batch->GetData()[i];
        if (dim < 0 || (dim > 0 && matNum > INT32_MAX / dim)) {
            return false;
        }
        matNum *= dim;
    }
    return true;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const auto yDesc = context->GetOutputDesc(0);
    const gert::StorageShape* yShape = context->GetOutputShape(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (yDesc == nullptr || yShape == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t matNum = 0;
    if (!EyeDims(attrs, rows, cols, matNum) || rows > UINT32_MAX || cols > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t total = static_cast<uint64_t>(matNum) * rows * cols;
    if (total > UINT32_MAX || static_cast<int64_t>(total) != yShape->GetStorageShape().GetShapeSize()) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint32_t elemBytes = 0;
    if (!DtypeKey(yDesc->GetDataType(), key, elemBytes)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    EyePlan plan;
    uint64_t mats = total == 0 ? 0 : static_cast<uint64_t>(matNum);
    if (aivNum == 0 || !MakeEyePlan(mats, rows, cols, elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    EyeTilingData tiling;
    tiling.set_matRows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_unitNum(plan.unitNum);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_patternElems(plan.patternElems);
    tiling.set_zeroElems(plan.zeroElems);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(key * 10 + plan.mode);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
// y = batch_shape + [num_rows, num_columns or num_rows].
static graphStatus InferShape(gert::InferShapeContext* context)
{
    gert::Shape* yShape = context->GetOutputShape(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (yShape == nullptr || attrs == nullptr) {
        return GRAPH_FAILED;
    }
    const int64_t* numRows = attrs->GetAttrPointer<int64_t>(optiling::ATTR_NUM_ROWS);
    const int64_t* numColumns = attrs->GetAttrPointer<int64_t>(optiling::ATTR_NUM_COLUMNS);
    const gert::TypedContinuousVector<int64_t>* batch = attrs->GetListInt(optiling::ATTR_BATCH_SHAPE);
    if (numRows == nullptr || numColumns == nullptr || batch == nullptr) {
        return GRAPH_FAILED;
    }
    yShape->SetDimNum(0);
    for (size_t i = 0; i < batch->GetSize(); i++) {
        yShape->AppendDim(batch->GetData()[i]);
    }
    yShape->AppendDim(*numRows);
    yShape->AppendDim(*numColumns == 0 ? *numRows : *numColumns);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class Eye : public OpDef {
public:
    explicit Eye(const char* name) : OpDef(name)
    {
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("num_rows").AttrType(REQUIRED).Int();
        this->Attr("num_columns").AttrType(OPTIONAL).Int(0);
        this->Attr("batch_shape").AttrType(OPTIONAL).ListInt({});
        this->Attr("dtype").AttrType(OPTIONAL).Int(0);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Eye);
}  // namespace ops
