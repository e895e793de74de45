// AddLayerNormGrad host side: tiling function, shape inference and the OpDef.
//
// Backward of LayerNorm(x1 + x2). Inputs dy, x1, x2 (float16, float32 or
// bfloat16, one shape), rstd and mean (float32, one value per row), gamma
// (dy's dtype, the normalised trailing dims; D = its elements) and the
// optional dsum (dy's shape, or [0] = absent). With x̂ = (x1 + x2 - mean) *
// rstd and g = dy * gamma, per row:
//   dx = rstd * (g - mean(g) - x̂ * mean(g * x̂)) + dsum   (dy's dtype)
// and over all rows dgamma = Σ dy * x̂, dbeta = Σ dy (float32, gamma's shape).
//
// Tiling: rows are split over the vector cores (balanced to one row); a tile
// holds as many whole rows as fit in UB next to the kernel's buffers (the
// budget below mirrors its InitBuffer calls), capped by TILE_ELEMS. Column
// sums meet in a workspace of 2 rows of rowStride floats per core; after
// SyncAll every core reduces a slice of columns. The tiling key is dtype *
// 10 + hasDsum, dtype 1 float16, 2 float32, 3 bfloat16.
#include <cstdint>

#include "add_layer_norm_grad_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;         // UB data block
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t ROW_ALIGN = 16;           // row stride in elements: whole blocks for 16-bit types
constexpr uint32_t FLOAT_ALIGN = 8;          // floats per 32 B block
constexpr uint32_t MAX_BATCH_STRIDE = 2040;  // repeat stride limit (255 blocks) in floats
constexpr uint32_t BATCH_LANES = 64;         // floats per 256 B repeat: columns per strided instruction
constexpr uint32_t MAX_COPY_ROWS = 4095;     // DataCopyPad blockCount limit
constexpr uint32_t CONST_BYTES = 256;        // one repeat of a constant

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return (value + align - 1) / align * align;
}

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

// UB bytes of a tile of `rows` rows of `stride` elements (mirrors the
// kernel's InitBuffer calls). `finalBytes` is the final column reduction.
uint64_t UbBytes(uint64_t rows, uint64_t stride, uint32_t elemBytes, bool dsum, bool batched, uint64_t finalBytes,
                 uint32_t bufferNum)
{
    uint64_t elems = rows * stride;
    uint64_t rowsUp = AlignUp(rows, 8);
    uint64_t inputs = dsum ? 4 : 3;
    uint64_t bytes = bufferNum * (inputs * elems * elemBytes + 2 * rowsUp * FLOAT_BYTES)  // dy, x1, x2, dsum, mean, rstd
                     + bufferNum * AlignUp(elems * elemBytes, BLOCK_BYTES)               // dx
                     + 4 * elems * FLOAT_BYTES                                           // float work, gamma tile
                     + 2 * stride * FLOAT_BYTES                                          // dgamma, dbeta sums
                     + stride * elemBytes                                                // gamma staging
                     + CONST_BYTES                                                       // ones
                     + 2 * rowsUp * FLOAT_BYTES                                          // row means of g and g x̂
                     + rowsUp * BLOCK_BYTES                                              // Brcb blocks
                     + (batched ? rowsUp * BLOCK_BYTES                                   // 8-lane partials
                                : rows * CONST_BYTES + rowsUp * BLOCK_BYTES)             // 64- and 8-lane partials
                     + finalBytes;
    return bytes;
}

struct GradPlan {
    uint32_t coreNum;
    uint32_t blockRows;
    uint32_t tailCoreNum;
    uint32_t tileRows;
    uint32_t finalCols;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_ELEMS = 8192;       // ascendopt:knob min=512 max=32768 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 8192;   // ascendopt:knob min=32 max=65536 step=pow2

// Splits `rows` rows of `stride` padded elements over at most `aivNum`
// cores, sizes the tile and the final column slices. Returns false when not
// even one row fits in UB.
bool MakeGradPlan(uint64_t rows, uint64_t stride, uint32_t elemBytes, bool dsum, bool batched, uint32_t aivNum,
                  uint64_t ubBytes, GradPlan& plan)
{
    uint64_t target = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t coreCap = CeilDiv(rows * stride * elemBytes * 3, MIN_CORE_BYTES);
    if (target > coreCap) {
        target = coreCap;
    }
    if (target > rows) {
        target = rows;
    }
    if (target == 0) {
        target = 1;
    }
    uint64_t perCore = CeilDiv(rows, target);
    uint64_t coreNum = CeilDiv(rows, perCore);
    uint64_t finalCols = AlignUp(CeilDiv(stride, coreNum), FLOAT_ALIGN);
    uint64_t finalBytes = 2 * coreNum * finalCols * FLOAT_BYTES;  // dgamma and dbeta slices of every core
    uint64_t tileRows = TILE_ELEMS / stride;
    if (tileRows == 0) {
        tileRows = 1;
    }
    if (tileRows > MAX_COPY_ROWS) {
        tileRows = MAX_COPY_ROWS;
    }
    if (tileRows > perCore) {
        tileRows = perCore;
    }
    while (tileRows > 0 && UbBytes(tileRows, stride, elemBytes, dsum, batched, finalBytes, BUFFER_NUM) > ubBytes) {
        tileRows--;
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
    plan.finalCols = static_cast<uint32_t>(finalCols);
    return true;
}
// ascendopt:tiling-end

bool DtypeCode(ge::DataType dtype, uint64_t& code, uint32_t& bytes)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            code = 1;
            bytes = 2;
            return true;
        case ge::DT_FLOAT:
            code = 2;
            bytes = 4;
            return true;
        case ge::DT_BF16:
            code = 3;
            bytes = 2;
            return true;
        default:
            return false;
    }
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* dyShape = context->GetInputShape(0);
    const gert::StorageShape* x1Shape = context->GetInputShape(1);
    const gert::StorageShape* x2Shape = context->GetInputShape(2);
    const gert::StorageShape* rstdShape = context->GetInputShape(3);
    const gert::StorageShape* meanShape = context->GetInputShape(4);
    const gert::StorageShape* gammaShape = context->GetInputShape(5);
    const gert::StorageShape* dsumShape = context->GetOptionalInputShape(6);
    const auto dyDesc = context->GetInputDesc(0);
    if (dyShape == nullptr || x1Shape == nullptr || x2Shape == nullptr || rstdShape == nullptr ||
        meanShape == nullptr || gammaShape == nullptr || dyDesc == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int64_t total = dyShape->GetStorageShape().GetShapeSize();
    int64_t cols = gammaShape->GetStorageShape().GetShapeSize();
    if (total <= 0 || total > UINT32_MAX || cols <= 0 || total % cols != 0 ||
        x1Shape->GetStorageShape().GetShapeSize() != total || x2Shape->GetStorageShape().GetShapeSize() != total) {
        return ge::GRAPH_FAILED;
    }
    int64_t rows = total / cols;
    if (rstdShape->GetStorageShape().GetShapeSize() != rows || meanShape->GetStorageShape().GetShapeSize() != rows) {
        return ge::GRAPH_FAILED;
    }
    int64_t dsumElems = dsumShape == nullptr ? 0 : dsumShape->GetStorageShape().GetShapeSize();
    if (dsumElems != 0 && dsumElems != total) {
        return ge::GRAPH_FAILED;
    }
    bool dsum = dsumElems != 0;
    uint64_t code = 0;
    uint32_t elemBytes = 0;
    if (!DtypeCode(dyDesc->GetDataType(), code, elemBytes)) {
        return ge::GRAPH_FAILED;
    }
    uint64_t stride = AlignUp(static_cast<uint64_t>(cols), ROW_ALIGN);
    bool batched = stride <= MAX_BATCH_STRIDE;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    GradPlan plan;
    if (aivNum == 0 ||
        !MakeGradPlan(static_cast<uint64_t>(rows), stride, elemBytes, dsum, batched, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }
    // Strided row operations issue one instruction per 64-lane column chunk
    // covering all rows; worth it only when a tile has at least that many rows.
    if (batched && static_cast<uint64_t>(plan.tileRows) * BATCH_LANES < stride) {
        batched = false;
        if (!MakeGradPlan(static_cast<uint64_t>(rows), stride, elemBytes, dsum, batched, aivNum, ubSize, plan)) {
            return ge::GRAPH_FAILED;
        }
    }

    AddLayerNormGradTilingData tiling;
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_rowStride(static_cast<uint32_t>(stride));
    tiling.set_blockRows(plan.blockRows);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_coreNum(plan.coreNum);
    tiling.set_finalCols(plan.finalCols);
    tiling.set_hasDsum(dsum ? 1 : 0);
    tiling.set_batched(batched ? 1 : 0);
    tiling.set_bufferNum(BUFFER_NUM);
    tiling.set_invCols(static_cast<float>(1.0 / static_cast<double>(cols)));

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(code * 10 + (dsum ? 1 : 0));
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    // The column sums of every core (dgamma and dbeta rows); no library API
    // of the kernel uses the system workspace.
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = static_cast<size_t>(plan.coreNum) * 2 * stride * FLOAT_BYTES;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* dyShape = context->GetInputShape(0);
    const gert::Shape* gammaShape = context->GetInputShape(5);
    gert::Shape* dxShape = context->GetOutputShape(0);
    gert::Shape* dgammaShape = context->GetOutputShape(1);
    gert::Shape* dbetaShape = context->GetOutputShape(2);
    if (dyShape == nullptr || gammaShape == nullptr || dxShape == nullptr || dgammaShape == nullptr ||
        dbetaShape == nullptr) {
        return GRAPH_FAILED;
    }
    *dxShape = *dyShape;
    *dgammaShape = *gammaShape;
    *dbetaShape = *gammaShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AddLayerNormGrad : public OpDef {
public:
    explicit AddLayerNormGrad(const char* name) : OpDef(name)
    {
        this->Input("dy")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("x1")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("x2")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("rstd")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("mean")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("gamma")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("dsum")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("dx")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("dgamma")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("dbeta")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AddLayerNormGrad);
}  // namespace ops
