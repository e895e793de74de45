// GeluQuant host side: tiling function, shape inference and the OpDef.
//
// Inputs x (float16, float32 or bfloat16, 2 to 8 dims) and the optional
// input_scale and input_offset (x's dtype; [C], [1], or [0] = absent, C =
// the last dim of x). Attrs `approximate` ("none" = erf form, "tanh") and
// `quant_mode` ("static", "dynamic"). With g = GELU(x):
//   static:  y = sat_int8(rint(g * scale + offset)); out_scale = 0
//   dynamic: s = g * scale, out_scale[row] = max|s[row, :]| / 127,
//            y = sat_int8(rint(s / out_scale))
// computed in float32; y is int8 (x's shape), out_scale float32 (x's shape
// without the last dim).
//
// Tiling: rows of C are split over the vector cores (balanced to one row);
// a tile holds as many whole rows as fit in UB next to the kernel's float32
// buffers (the budget below mirrors its InitBuffer calls), capped by
// TILE_ELEMS. The tiling key is dtype * 100 + tanh * 10 + mode, dtype 1
// float16, 2 float32, 3 bfloat16; mode 1 static, 2 dynamic.
#include <cstdint>
#include <cstring>

#include "gelu_quant_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t ROW_ALIGN = 32;        // row stride in elements: whole blocks for int8 and wider types
constexpr uint32_t MAX_BATCH_STRIDE = 2040;  // repeat stride limit (255 blocks) in floats
constexpr uint32_t BATCH_LANES = 64;         // floats per 256 B repeat: columns per strided instruction
constexpr uint32_t MAX_COPY_ROWS = 4095;  // DataCopyPad blockCount limit
constexpr uint32_t CONST_BYTES = 256;     // one repeat of constants (ones, 127s)
constexpr uint32_t ATTR_APPROXIMATE = 0;
constexpr uint32_t ATTR_QUANT_MODE = 1;
constexpr uint32_t MODE_STATIC = 1;
constexpr uint32_t MODE_DYNAMIC = 2;

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return (value + align - 1) / align * align;
}

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

struct QuantShape {
    uint32_t elemBytes;
    uint32_t floatBufs;     // float32 work buffers per tile element
    uint32_t paramTiles;    // per-channel parameter tiles (float32)
    bool dynamic;
    bool batched;
};

// UB bytes of a tile of `rows` rows of `stride` elements (mirrors the
// kernel's InitBuffer calls).
uint64_t UbBytes(uint64_t rows, uint64_t stride, const QuantShape& q, uint32_t bufferNum)
{
    uint64_t elems = rows * stride;
    uint64_t rowFloats = AlignUp(rows * FLOAT_BYTES, BLOCK_BYTES);
    uint64_t bytes = bufferNum * AlignUp(elems * q.elemBytes, BLOCK_BYTES)  // x queue
                     + bufferNum * AlignUp(elems, BLOCK_BYTES)              // y queue (int8)
                     + bufferNum * rowFloats                                // out_scale queue
                     + (q.floatBufs + q.paramTiles) * elems * FLOAT_BYTES   // float work, parameter tiles
                     + AlignUp(stride * q.elemBytes, BLOCK_BYTES)           // parameter staging
                     + 2 * CONST_BYTES;                                     // ones, 127s
    if (q.dynamic) {
        bytes += 2 * AlignUp(rows, 8) * FLOAT_BYTES;             // row maxima, 127 / max
        bytes += AlignUp(rows, 8) * BLOCK_BYTES;                 // Brcb blocks
        bytes += q.batched ? AlignUp(rows, 8) * BLOCK_BYTES      // 8-lane partial maxima
                           : rows * CONST_BYTES;                 // 64-lane partial maxima
    }
    return bytes;
}

struct QuantPlan {
    uint32_t coreNum;
    uint32_t blockRows;
    uint32_t tailCoreNum;
    uint32_t tileRows;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_ELEMS = 8192;       // ascendopt:knob min=512 max=32768 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 4096;   // ascendopt:knob min=32 max=65536 step=pow2

// Splits `rows` rows of `stride` padded elements over at most `aivNum`
// cores and sizes the tile. Returns false when not even one row fits in UB.
bool MakeQuantPlan(uint64_t rows, uint64_t stride, const QuantShape& q, uint32_t aivNum, uint64_t ubBytes,
                   QuantPlan& plan)
{
    uint64_t target = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t coreCap = CeilDiv(rows * stride * q.elemBytes, MIN_CORE_BYTES);
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
    while (tileRows > 0 && UbBytes(tileRows, stride, q, BUFFER_NUM) > ubBytes) {
        tileRows--;
    }
    if (tileRows == 0) {
        return false;
    }
    // Equal tiles.
    uint64_t tileNum = CeilDiv(perCore, tileRows);
    tileRows = CeilDiv(perCore, tileNum);
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.blockRows = static_cast<uint32_t>(rows / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(rows % coreNum);
    plan.tileRows = static_cast<uint32_t>(tileRows);
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
        case ge::DT_BF16:
            key = 3;
            elemBytes = 2;
            return true;
        default:
            return false;
    }
}

// 0 absent (no elements), 1 one value, 2 one per channel; -1 invalid.
int32_t ParamMode(const gert::StorageShape* shape, int64_t channels)
{
    if (shape == nullptr) {
        return 0;
    }
    int64_t n = shape->GetStorageShape().GetShapeSize();
    if (n == 0) {
        return 0;
    }
    if (n == 1) {
        return 1;
    }
    return n == channels ? 2 : -1;
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
    const char* approximate = attrs->GetAttrPointer<char>(ATTR_APPROXIMATE);
    const char* quantMode = attrs->GetAttrPointer<char>(ATTR_QUANT_MODE);
    if (approximate == nullptr || quantMode == nullptr) {
        return ge::GRAPH_FAILED;
    }
    bool tanhForm = strcmp(approximate, "tanh") == 0;
    if (!tanhForm && strcmp(approximate, "none") != 0) {
        return ge::GRAPH_FAILED;
    }
    bool dynamic = strcmp(quantMode, "dynamic") == 0;
    if (!dynamic && strcmp(quantMode, "static") != 0) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x = xShape->GetStorageShape();
    size_t dimNum = x.GetDimNum();
    if (dimNum < 2) {
        return ge::GRAPH_FAILED;
    }
    int64_t cols = x.GetDim(dimNum - 1);
    int64_t total = x.GetShapeSize();
    if (cols <= 0 || total <= 0 || total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    int32_t scaleMode = ParamMode(context->GetOptionalInputShape(1), cols);
    int32_t offsetMode = ParamMode(context->GetOptionalInputShape(2), cols);
    if (scaleMode < 0 || offsetMode < 0 || (!dynamic && scaleMode == 0)) {
        return ge::GRAPH_FAILED;
    }
    if (dynamic) {
        offsetMode = 0;  // the dynamic mode has no offset
    }
    uint64_t dtypeKey = 0;
    uint32_t elemBytes = 0;
    if (!DtypeKey(xDesc->GetDataType(), dtypeKey, elemBytes)) {
        return ge::GRAPH_FAILED;
    }
    for (size_t i = 1; i <= 2; i++) {
        const auto desc = context->GetOptionalInputDesc(i);
        if (desc != nullptr && desc->GetDataType() != xDesc->GetDataType()) {
            return ge::GRAPH_FAILED;
        }
    }

    uint64_t rows = static_cast<uint64_t>(total / cols);
    uint64_t stride = AlignUp(static_cast<uint64_t>(cols), ROW_ALIGN);
    QuantShape q;
    q.elemBytes = elemBytes;
    q.floatBufs = tanhForm ? 2 : 4;
    q.paramTiles = (scaleMode == 2 ? 1 : 0) + (offsetMode == 2 ? 1 : 0);
    q.dynamic = dynamic;
    q.batched = stride <= MAX_BATCH_STRIDE;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    QuantPlan plan;
    if (aivNum == 0 || !MakeQuantPlan(rows, stride, q, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }
    // Strided row operations issue one instruction per 64-lane column chunk
    // covering all rows; worth it only when a tile has at least that many rows.
    if (q.dynamic && q.batched && static_cast<uint64_t>(plan.tileRows) * BATCH_LANES < stride) {
        q.batched = false;
        if (!MakeQuantPlan(rows, stride, q, aivNum, ubSize, plan)) {
            return ge::GRAPH_FAILED;
        }
    }

    GeluQuantTilingData tiling;
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_rowStride(static_cast<uint32_t>(stride));
    tiling.set_blockRows(plan.blockRows);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_scaleMode(static_cast<uint32_t>(scaleMode));
    tiling.set_offsetMode(static_cast<uint32_t>(offsetMode));
    tiling.set_batched(q.batched ? 1 : 0);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(dtypeKey * 100 + (tanhForm ? 10 : 0) + (dynamic ? MODE_DYNAMIC : MODE_STATIC));
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
    gert::Shape* scaleShape = context->GetOutputShape(1);
    if (xShape == nullptr || yShape == nullptr || scaleShape == nullptr || xShape->GetDimNum() < 2) {
        return GRAPH_FAILED;
    }
    *yShape = *xShape;
    scaleShape->SetDimNum(xShape->GetDimNum() - 1);
    for (size_t i = 0; i + 1 < xShape->GetDimNum(); i++) {
        scaleShape->SetDim(i, xShape->GetDim(i));
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class GeluQuant : public OpDef {
public:
    explicit GeluQuant(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("input_scale")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("input_offset")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT8, ge::DT_INT8, ge::DT_INT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("out_scale")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("approximate").AttrType(OPTIONAL).String("none");
        this->Attr("quant_mode").AttrType(OPTIONAL).String("dynamic");

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(GeluQuant);
}  // namespace ops
