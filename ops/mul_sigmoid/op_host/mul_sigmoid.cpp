// MulSigmoid host side: tiling function, shape inference and the OpDef.
//
// x1 [N, L] and x2 [1, a, b] with a * b = L, float16; required float attrs
// t1, t2, t3 (used as float16). In float16 arithmetic:
//   s = sigmoid(x1 * t1),  s' = s < t2 ? s : 2 s,  out[n] = s'[n] * (x2 * t3),
// out is [N, a, b] (x2 broadcast over the rows).
//
// Tiling: columns are cut into chunks (a chunk holds at most a tile; when
// there are fewer rows than cores, rows are cut into chunks of at least
// MIN_CHUNK_BYTES so that every core gets work). Units are (chunk, row) pairs
// in chunk-major order, split over the vector cores (the first `tailCoreNum`
// cores take one more); a tile holds up to `tileRows` rows of one chunk,
// moved with one strided DataCopyPad. The UB budget below mirrors the
// kernel's InitBuffer calls. Tiling key 1: float16.
#include <cstdint>

#include "mul_sigmoid_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t TILING_KEY_FP16 = 1;
constexpr uint64_t ELEM_BYTES = 2;          // float16
constexpr uint64_t BLOCK_ELEMS = 16;        // float16 elements per 32 B block
constexpr uint64_t REPEAT_ELEMS = 128;      // float16 elements per 256 B repeat (Compares count unit)
constexpr uint64_t BURST_ELEMS = 256;       // float16 elements per 512 B GM burst
constexpr uint64_t MAX_TILE_ROWS = 4095;    // DataCopyPad blockCount limit
constexpr uint32_t ATTR_T1 = 0;
constexpr uint32_t ATTR_T2 = 1;
constexpr uint32_t ATTR_T3 = 2;

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return CeilDiv(value, align) * align;
}

// UB bytes for tiles of `tileElems` elements and chunks of `chunkLen`
// (mirrors the kernel): x1 and out queues, ones and 2 s buffers, the compare
// mask, and the x2 chunk (queue) and x2 * t3 buffers.
uint64_t UbBytes(uint64_t tileElems, uint64_t chunkLen, uint32_t bufferNum)
{
    uint64_t chunkBytes = AlignUp(chunkLen, BLOCK_ELEMS) * ELEM_BYTES;
    return 2 * bufferNum * tileElems * ELEM_BYTES  // x1 and out queues
           + 2 * tileElems * ELEM_BYTES           // ones, 2 s
           + AlignUp(tileElems / 8, 32)           // compare mask bits
           + 2 * chunkBytes;                      // x2 chunk, x2 * t3
}

struct MulSigmoidPlan {
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

// Plans `rows` x `cols` over at most `aivNum` cores. Returns false when no
// tile fits in `ubBytes`.
bool MakeMulSigmoidPlan(uint64_t rows, uint64_t cols, uint32_t aivNum, uint64_t ubBytes, MulSigmoidPlan& plan)
{
    if (rows == 0 || cols == 0) {
        return false;
    }
    uint64_t maxTile = TILE_BYTES / ELEM_BYTES / REPEAT_ELEMS * REPEAT_ELEMS;
    while (maxTile > 0 && UbBytes(maxTile, maxTile, BUFFER_NUM) > ubBytes) {
        maxTile -= REPEAT_ELEMS;
    }
    if (maxTile == 0) {
        return false;
    }
    uint64_t coreMax = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t chunkNum = AlignUp(cols, BLOCK_ELEMS) > maxTile ? CeilDiv(cols, maxTile) : 1;
    // Fewer units than cores: cut rows into chunks of at least MIN_CHUNK_BYTES.
    if (rows * chunkNum < coreMax) {
        uint64_t want = CeilDiv(coreMax, rows);
        uint64_t most = cols * ELEM_BYTES / MIN_CHUNK_BYTES;
        if (want > most) {
            want = most;
        }
        if (want > chunkNum) {
            chunkNum = want;
        }
    }
    uint64_t chunkLen = cols;
    if (chunkNum > 1) {
        uint64_t align = maxTile >= BURST_ELEMS ? BURST_ELEMS : BLOCK_ELEMS;
        chunkLen = AlignUp(CeilDiv(cols, chunkNum), align);
        if (chunkLen > maxTile) {
            chunkLen = maxTile;
        }
        chunkNum = CeilDiv(cols, chunkLen);
    }
    uint64_t units = rows * chunkNum;
    uint64_t coreNum = coreMax < units ? coreMax : units;
    // Tiny tensors: no core gets less than MIN_CORE_BYTES of x1.
    uint64_t coreCap = CeilDiv(rows * cols * ELEM_BYTES, MIN_CORE_BYTES);
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t stride = AlignUp(chunkLen, BLOCK_ELEMS);
    uint64_t tileRows = maxTile / stride;
    if (tileRows == 0) {
        tileRows = 1;
    }
    if (tileRows > MAX_TILE_ROWS) {
        tileRows = MAX_TILE_ROWS;
    }
    uint64_t coreUnits = CeilDiv(units, coreNum);
    if (tileRows > coreUnits) {
        tileRows = coreUnits;
    }
    if (tileRows > rows) {
        tileRows = rows;
    }
    uint64_t tileElems = AlignUp(tileRows * stride, REPEAT_ELEMS);
    if (UbBytes(tileElems, chunkLen, BUFFER_NUM) > ubBytes) {
        return false;
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
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* x1Shape = context->GetInputShape(0);
    const gert::StorageShape* x2Shape = context->GetInputShape(1);
    const auto x1Desc = context->GetInputDesc(0);
    const auto x2Desc = context->GetInputDesc(1);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (x1Shape == nullptr || x2Shape == nullptr || x1Desc == nullptr || x2Desc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const float* t1 = attrs->GetAttrPointer<float>(ATTR_T1);
    const float* t2 = attrs->GetAttrPointer<float>(ATTR_T2);
    const float* t3 = attrs->GetAttrPointer<float>(ATTR_T3);
    if (t1 == nullptr || t2 == nullptr || t3 == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x1 = x1Shape->GetStorageShape();
    if (x1.GetDimNum() != 2 || x1Desc->GetDataType() != ge::DT_FLOAT16 || x2Desc->GetDataType() != ge::DT_FLOAT16) {
        return ge::GRAPH_FAILED;
    }
    int64_t rows = x1.GetDim(0);
    int64_t cols = x1.GetDim(1);
    if (rows <= 0 || cols <= 0 || rows * cols > UINT32_MAX || x2Shape->GetStorageShape().GetShapeSize() != cols) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    MulSigmoidPlan plan;
    if (aivNum == 0 ||
        !MakeMulSigmoidPlan(static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    MulSigmoidTilingData tiling;
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_chunkLen(plan.chunkLen);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_tileElems(plan.tileElems);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_bufferNum(BUFFER_NUM);
    tiling.set_t1(*t1);
    tiling.set_t2(*t2);
    tiling.set_t3(*t3);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(TILING_KEY_FP16);
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
    const gert::Shape* x1Shape = context->GetInputShape(0);
    const gert::Shape* x2Shape = context->GetInputShape(1);
    gert::Shape* outShape = context->GetOutputShape(0);
    if (x1Shape == nullptr || x2Shape == nullptr || outShape == nullptr || x1Shape->GetDimNum() != 2 ||
        x2Shape->GetDimNum() != 3) {
        return GRAPH_FAILED;
    }
    *outShape = *x2Shape;
    outShape->SetDim(0, x1Shape->GetDim(0));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class MulSigmoid : public OpDef {
public:
    explicit MulSigmoid(const char* name) : OpDef(name)
    {
        this->Input("x1").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("x2").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Attr("t1").AttrType(REQUIRED).Float();
        this->Attr("t2").AttrType(REQUIRED).Float();
        this->Attr("t3").AttrType(REQUIRED).Float();

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(MulSigmoid);
}  // namespace ops
