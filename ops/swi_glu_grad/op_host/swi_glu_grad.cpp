// SwiGluGrad host side: tiling function, shape inference and the OpDef.
//
// The backward of y = SiLU(A) * B, A and B the halves of x along `dim` (int
// attr, default -1): with g = y_grad and s = sigmoid(A),
//   dA = g * B * s * (1 + A * (1 - s)),  dB = g * A * s,
//   x_grad = cat(dA, dB) along dim.
// y_grad has x's shape with `dim` halved; y_grad, x and x_grad share one
// dtype (float16, float32 or bfloat16); the kernel computes in float32.
//
// Tiling: x is viewed as [rows, 2, cols] (see swi_glu_grad_tiling.h). A row whose
// tile fits in UB is one chunk and a tile holds several rows, moved with one
// strided DataCopyPad per operand; a longer row is cut into chunks of at most
// TILE_BYTES. When there are fewer rows than cores, rows are cut into chunks
// of at least MIN_CHUNK_BYTES so that every core gets work. Units (row,
// chunk) are split over the vector cores, the first `tailCoreNum` cores
// taking one more. Tiling keys select the dtype path: 1 float16, 2 float32,
// 3 bfloat16.
#include <cstdint>

#include "register/op_def_registry.h"
#include "swi_glu_grad_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t TILING_KEY_FP16 = 1;
constexpr uint64_t TILING_KEY_FP32 = 2;
constexpr uint64_t TILING_KEY_BF16 = 3;
constexpr uint32_t QUEUE_NUM = 5;          // A, B and y_grad in, dA and dB out
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t BLOCK_BYTES = 32;       // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;   // preferred GM burst alignment
constexpr uint64_t MAX_TILE_ROWS = 4095;   // DataCopyPad blockCount limit
constexpr uint32_t ATTR_DIM = 0;           // index of attr `dim`

// float32 work buffers of one tile (mirrors the kernel's InitBuffer calls):
// two temporaries for float32, four for 16-bit inputs (float copies).
uint32_t WorkBufNum(uint32_t elemBytes)
{
    return elemBytes == FLOAT_BYTES ? 2 : 4;
}

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return CeilDiv(value, align) * align;
}

struct SwiGluGradPlan {
    uint32_t coreNum;
    uint32_t chunkLen;
    uint32_t chunkNum;
    uint32_t tileRows;
    uint32_t tileElems;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CHUNK_BYTES = 4096;  // ascendopt:knob min=512 max=65536 step=pow2
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2

// Plans `rows` rows of `cols` elements of `elemBytes` bytes over at most
// `aivNum` cores. Returns false when no tile fits in `ubBytes`.
bool MakeSwiGluGradPlan(uint64_t rows, uint64_t cols, uint32_t elemBytes, uint32_t aivNum, uint64_t ubBytes,
                        SwiGluGradPlan& plan)
{
    uint64_t blockElems = BLOCK_BYTES / elemBytes;
    uint64_t burstElems = GM_ALIGN_BYTES / elemBytes;
    uint64_t bytesPerElem = QUEUE_NUM * BUFFER_NUM * elemBytes + WorkBufNum(elemBytes) * FLOAT_BYTES;
    uint64_t maxTile = TILE_BYTES / elemBytes;
    if (maxTile > ubBytes / bytesPerElem) {
        maxTile = ubBytes / bytesPerElem;
    }
    maxTile = maxTile >= burstElems ? maxTile / burstElems * burstElems : maxTile / blockElems * blockElems;
    if (maxTile == 0 || rows == 0 || cols == 0) {
        return false;
    }
    uint64_t coreMax = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t stride = AlignUp(cols, blockElems);
    uint64_t chunkNum = stride > maxTile ? CeilDiv(cols, maxTile) : 1;
    // Fewer units than cores: cut rows into chunks of at least MIN_CHUNK_BYTES.
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
    // Tiny tensors: no core gets less than MIN_CORE_BYTES of y_grad.
    uint64_t coreCap = CeilDiv(rows * cols * elemBytes, MIN_CORE_BYTES);
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    if (chunkNum == 1) {
        tileRows = maxTile / stride;
        if (tileRows > MAX_TILE_ROWS) {
            tileRows = MAX_TILE_ROWS;
        }
        uint64_t coreRows = CeilDiv(units, coreNum);
        if (tileRows > coreRows) {
            tileRows = coreRows;
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
        case ge::DT_FLOAT16:
            key = TILING_KEY_FP16;
            elemBytes = 2;
            return true;
        case ge::DT_FLOAT:
            key = TILING_KEY_FP32;
            elemBytes = 4;
            return true;
        case ge::DT_BF16:
            key = TILING_KEY_BF16;
            elemBytes = 2;
            return true;
        default:
            return false;
    }
}

// The [rows, 2, cols] view of `shape` split in halves along `dim`.
bool SplitView(const gert::Shape& shape, int64_t dim, uint64_t& rows, uint64_t& cols)
{
    int64_t rank = static_cast<int64_t>(shape.GetDimNum());
    if (dim < 0) {
        dim += rank;
    }
    if (rank == 0 || dim < 0 || dim >= rank) {
        return false;
    }
    int64_t split = shape.GetDim(static_cast<size_t>(dim));
    if (split <= 0 || split % 2 != 0) {
        return false;
    }
    uint64_t before = 1;
    uint64_t after = 1;
    for (int64_t i = 0; i < rank; i++) {
        int64_t d = shape.GetDim(static_cast<size_t>(i));
        if (d < 0) {
            return false;
        }
        if (i < dim) {
            before *= static_cast<uint64_t>(d);
        } else if (i > dim) {
            after *= static_cast<uint64_t>(d);
        }
    }
    rows = before;
    cols = static_cast<uint64_t>(split / 2) * after;
    return true;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* gradShape = context->GetInputShape(0);
    const gert::StorageShape* xShape = context->GetInputShape(1);
    const auto gradDesc = context->GetInputDesc(0);
    const auto xDesc = context->GetInputDesc(1);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (gradShape == nullptr || xShape == nullptr || gradDesc == nullptr || xDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* dim = attrs->GetAttrPointer<int64_t>(ATTR_DIM);
    if (dim == nullptr) {
        return ge::GRAPH_FAILED;
    }
    uint64_t rows = 0;
    uint64_t cols = 0;
    if (!SplitView(xShape->GetStorageShape(), *dim, rows, cols) || rows * cols * 2 > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    if (static_cast<uint64_t>(gradShape->GetStorageShape().GetShapeSize()) != rows * cols ||
        gradDesc->GetDataType() != xDesc->GetDataType()) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint32_t elemBytes = 0;
    if (!KeyOf(xDesc->GetDataType(), key, elemBytes)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    SwiGluGradPlan plan;
    if (aivNum == 0 || !MakeSwiGluGradPlan(rows, cols, elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    SwiGluGradTilingData tiling;
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_chunkLen(plan.chunkLen);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_tileElems(plan.tileElems);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
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
    const gert::Shape* xShape = context->GetInputShape(1);
    gert::Shape* gradShape = context->GetOutputShape(0);
    if (xShape == nullptr || gradShape == nullptr) {
        return GRAPH_FAILED;
    }
    *gradShape = *xShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class SwiGluGrad : public OpDef {
public:
    explicit SwiGluGrad(const char* name) : OpDef(name)
    {
        this->Input("y_grad")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("x_grad")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("dim").AttrType(OPTIONAL).Int(-1);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(SwiGluGrad);
}  // namespace ops
