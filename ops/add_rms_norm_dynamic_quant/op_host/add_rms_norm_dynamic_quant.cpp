// AddRmsNormDynamicQuant host side: tiling function, shape inference and the
// OpDef.
//
// Inputs x1, x2 (float16 or bfloat16, same shape, >= 2 dims), gamma ([D],
// x1's dtype, D = last dim) and the optional smooth_scale1, smooth_scale2
// ([D] or [0] = absent; scale2 needs scale1). Attr `epsilon` (default
// 1e-6). In float32, per row:
//   x = x1 + x2 (output, x1's dtype)
//   y = x * rstd * gamma, rstd = 1 / sqrt(mean(x^2) + epsilon)
//   s_k = y * smooth_scale_k (y without smooth scales)
//   scale_k = max|s_k| / 127,  y_k = sat_int8(rint(s_k / scale_k))
// Without smooth_scale2, y2 and scale2 are written as 0.
//
// Tiling: rows are split over the vector cores (balanced to one row); a tile
// holds as many whole rows as fit in UB next to the kernel's buffers (the
// budget below mirrors its InitBuffer calls), capped by TILE_ELEMS; when
// not even one row fits with double buffering, single buffering is tried.
// The tiling key is the dtype: 1 float16, 3 bfloat16.
#include <cstdint>

#include "add_rms_norm_dynamic_quant_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;         // UB data block
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t ROW_ALIGN = 32;           // row stride in elements: whole blocks for int8 too
constexpr uint32_t MAX_BATCH_STRIDE = 2040;  // repeat stride limit (255 blocks) in floats
constexpr uint32_t BATCH_LANES = 64;         // floats per 256 B repeat: columns per strided instruction
constexpr uint32_t MAX_COPY_ROWS = 4095;     // DataCopyPad blockCount limit
constexpr uint32_t CONST_BYTES = 256;        // one repeat of a constant
constexpr uint32_t ATTR_EPSILON = 0;

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return (value + align - 1) / align * align;
}

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

// UB bytes of a tile of `rows` rows of `stride` elements (mirrors the
// kernel's InitBuffer calls).
uint64_t UbBytes(uint64_t rows, uint64_t stride, uint32_t smoothNum, bool batched, uint32_t bufferNum)
{
    uint64_t elems = rows * stride;
    uint64_t rowsUp = AlignUp(rows, 8);
    uint64_t bytes = bufferNum * 2 * elems * 2                                       // x1, x2
                     + bufferNum * (elems * 2 + 2 * elems + 2 * rowsUp * FLOAT_BYTES)  // x, y1, y2, scale1, scale2
                     + 3 * elems * FLOAT_BYTES                                       // float work
                     + (smoothNum > 1 ? smoothNum : 1) * elems * FLOAT_BYTES          // gamma * smooth tiles
                     + stride * 2                                                    // parameter staging
                     + 2 * CONST_BYTES                                               // ones, 127s
                     + 3 * rowsUp * FLOAT_BYTES                                      // sums / maxima, rstd, factors
                     + rowsUp * BLOCK_BYTES                          // Brcb blocks
                     + (batched ? rowsUp * BLOCK_BYTES                        // 8-lane partials
                                : rows * CONST_BYTES + rowsUp * BLOCK_BYTES);  // 64- and 8-lane partials
    return bytes;
}

struct NormPlan {
    uint32_t coreNum;
    uint32_t blockRows;
    uint32_t tailCoreNum;
    uint32_t tileRows;
    uint32_t bufferNum;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_ELEMS = 8192;       // ascendopt:knob min=512 max=32768 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 4096;   // ascendopt:knob min=32 max=65536 step=pow2

// Splits `rows` rows of `stride` padded elements over at most `aivNum`
// cores and sizes the tile. Returns false when not even one row fits in UB.
bool MakeNormPlan(uint64_t rows, uint64_t stride, uint32_t smoothNum, bool batched, uint32_t aivNum,
                  uint64_t ubBytes, NormPlan& plan)
{
    uint64_t target = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t coreCap = CeilDiv(rows * stride * 4, MIN_CORE_BYTES);
    if (target > coreCap) {
        target = coreCap;
    }
    if (target > rows) {
        target = rows;
    }
    if (target == 0) {
        target = 1;
    }
    // Fewer cores when that does not lengthen the busiest one.
    uint64_t perCore = CeilDiv(rows, target);
    uint64_t coreNum = CeilDiv(rows, perCore);
    uint32_t bufferNum = BUFFER_NUM;
    uint64_t tileRows = 0;
    while (bufferNum >= 1) {
        tileRows = TILE_ELEMS / stride;
        if (tileRows == 0) {
            tileRows = 1;
        }
        if (tileRows > MAX_COPY_ROWS) {
            tileRows = MAX_COPY_ROWS;
        }
        if (tileRows > perCore) {
            tileRows = perCore;
        }
        while (tileRows > 0 && UbBytes(tileRows, stride, smoothNum, batched, bufferNum) > ubBytes) {
            tileRows--;
        }
        if (tileRows > 0) {
            break;
        }
        bufferNum--;
    }
    if (tileRows == 0) {
        return false;
    }
    uint64_t tileNum = CeilDiv(perCore, tileRows);
    tileRows = CeilDiv(perCore, tileNum);
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.blockRows = static_cast<uint32_t>(rows / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(rows % coreNum);
    plan.tileRows = static_cast<uint32_t>(tileRows);
    plan.bufferNum = bufferNum;
    return true;
}
// ascendopt:tiling-end
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* x1Shape = context->GetInputShape(0);
    const gert::StorageShape* x2Shape = context->GetInputShape(1);
    const gert::StorageShape* gammaShape = context->GetInputShape(2);
    const gert::StorageShape* smooth1Shape = context->GetOptionalInputShape(3);
    const gert::StorageShape* smooth2Shape = context->GetOptionalInputShape(4);
    const auto x1Desc = context->GetInputDesc(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (x1Shape == nullptr || x2Shape == nullptr || gammaShape == nullptr || x1Desc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const float* epsilon = attrs->GetAttrPointer<float>(ATTR_EPSILON);
    if (epsilon == nullptr) {
        return ge::GRAPH_FAILED;
    }
    ge::DataType dtype = x1Desc->GetDataType();
    if (dtype != ge::DT_FLOAT16 && dtype != ge::DT_BF16) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x = x1Shape->GetStorageShape();
    if (x.GetDimNum() < 2) {
        return ge::GRAPH_FAILED;
    }
    int64_t cols = x.GetDim(x.GetDimNum() - 1);
    int64_t total = x.GetShapeSize();
    if (cols <= 0 || total <= 0 || total > UINT32_MAX || x2Shape->GetStorageShape().GetShapeSize() != total ||
        gammaShape->GetStorageShape().GetShapeSize() != cols) {
        return ge::GRAPH_FAILED;
    }
    int64_t smooth1 = smooth1Shape == nullptr ? 0 : smooth1Shape->GetStorageShape().GetShapeSize();
    int64_t smooth2 = smooth2Shape == nullptr ? 0 : smooth2Shape->GetStorageShape().GetShapeSize();
    if ((smooth1 != 0 && smooth1 != cols) || (smooth2 != 0 && smooth2 != cols) || (smooth1 == 0 && smooth2 != 0)) {
        return ge::GRAPH_FAILED;
    }
    uint32_t smoothNum = (smooth1 != 0 ? 1 : 0) + (smooth2 != 0 ? 1 : 0);
    uint64_t rows = static_cast<uint64_t>(total / cols);
    uint64_t stride = AlignUp(static_cast<uint64_t>(cols), ROW_ALIGN);
    bool batched = stride <= MAX_BATCH_STRIDE;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    NormPlan plan;
    if (aivNum == 0 || !MakeNormPlan(rows, stride, smoothNum, batched, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }
    // Strided row operations issue one instruction per 64-lane column chunk
    // covering all rows; worth it only when a tile has at least that many rows.
    if (batched && static_cast<uint64_t>(plan.tileRows) * BATCH_LANES < stride) {
        batched = false;
        if (!MakeNormPlan(rows, stride, smoothNum, batched, aivNum, ubSize, plan)) {
            return ge::GRAPH_FAILED;
        }
    }

    AddRmsNormDynamicQuantTilingData tiling;
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_rowStride(static_cast<uint32_t>(stride));
    tiling.set_blockRows(plan.blockRows);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_smoothNum(smoothNum);
    tiling.set_batched(batched ? 1 : 0);
    tiling.set_bufferNum(plan.bufferNum);
    tiling.set_epsilon(*epsilon);
    tiling.set_invCols(static_cast<float>(1.0 / static_cast<double>(cols)));

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(dtype == ge::DT_FLOAT16 ? 1 : 3);
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
    if (xShape == nullptr || xShape->GetDimNum() < 2) {
        return GRAPH_FAILED;
    }
    for (size_t i = 0; i < 3; i++) {
        gert::Shape* out = context->GetOutputShape(i);
        if (out == nullptr) {
            return GRAPH_FAILED;
        }
        *out = *xShape;
    }
    for (size_t i = 3; i < 5; i++) {
        gert::Shape* out = context->GetOutputShape(i);
        if (out == nullptr) {
            return GRAPH_FAILED;
        }
        out->SetDimNum(xShape->GetDimNum() - 1);
        for (size_t d = 0; d + 1 < xShape->GetDimNum(); d++) {
            out->SetDim(d, xShape->GetDim(d));
        }
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AddRmsNormDynamicQuant : public OpDef {
public:
    explicit AddRmsNormDynamicQuant(const char* name) : OpDef(name)
    {
        this->Input("x1")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("x2")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("gamma")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("smooth_scale1")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("smooth_scale2")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y1")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT8, ge::DT_INT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y2")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT8, ge::DT_INT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("scale1")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("scale2")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AddRmsNormDynamicQuant);
}  // namespace ops
