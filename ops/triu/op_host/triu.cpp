// Triu host side: tiling function, shape inference and the OpDef.
//
// y[..., i, j] = x[..., i, j] if j - i >= diagonal, else 0, for x of at least
// two dims (float16, float32, bfloat16); attr `diagonal` (int, default 0).
//
// Tiling: x is matNum = prod(shape[:-2]) matrices of matRows x cols. A UB
// tile holds up to TILE_BYTES of x as rows of rowStride elements (cols
// rounded up to a 32 B block), capped so that the kernel's buffers (x and y
// queues with BUFFER_NUM buffers, a zero tile, the float index pattern and
// the compare mask) fit in UB. Small matrices (matRows fits in a tile) are
// handled whole, several per tile ("batch", tiling key dtype * 10 + 1);
// otherwise the rows of each matrix are tiled ("rows", key dtype * 10 + 2),
// and a row wider than a tile is split into column chunks. Work units
// (matrices or rows) are balanced over the vector cores; the first
// `tailCoreNum` cores take one unit more. Dtype: 1 float16, 2 float32,
// 3 bfloat16.
#include <cstdint>

#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "triu_tiling.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;       // UB data block
constexpr uint32_t FLOAT_PER_REPEAT = 64;  // Compares counts whole 256 B repeats of float
constexpr uint32_t MAX_COPY_ROWS = 4095;   // DataCopyPad blockCount limit
constexpr uint64_t MODE_BATCH = 1;
constexpr uint64_t MODE_ROWS = 2;
constexpr uint32_t ATTR_DIAGONAL = 0;

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return (value + align - 1) / align * align;
}

// UB bytes of the kernel for tiles of `elems` elements (mirrors its
// InitBuffer calls).
uint64_t UbBytes(uint64_t elems, uint32_t elemBytes, uint32_t bufferNum)
{
    uint64_t maskCount = AlignUp(elems, FLOAT_PER_REPEAT);
    return (2 * bufferNum + 1) * AlignUp(elems * elemBytes, BLOCK_BYTES)  // x, y queues, zero tile
           + maskCount * 4                                                // float index pattern
           + AlignUp(maskCount / 8, BLOCK_BYTES);                         // compare mask
}

struct TriuPlan {
    uint64_t mode;
    uint32_t coreNum;
    uint32_t unitNum;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
    uint32_t tileRows;
    uint32_t chunkCols;
    uint32_t rowStride;
    uint32_t maskCount;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 16384;     // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;         // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;      // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 4096;  // ascendopt:knob min=32 max=65536 step=pow2
constexpr uint32_t BATCH_MATRICES = 1;     // ascendopt:knob choices=0,1

// Sizes the tile and splits the work of matNum matrices of rows x cols over
// at most `aivNum` cores. Returns false when not even one block fits in UB.
bool MakeTriuPlan(uint64_t matNum, uint64_t rows, uint64_t cols, uint32_t elemBytes, uint32_t aivNum,
                  uint64_t ubBytes, TriuPlan& plan)
{
    uint64_t blockElems = BLOCK_BYTES / elemBytes;
    uint64_t tileElems = AlignUp(TILE_BYTES / elemBytes, blockElems);
    while (tileElems > blockElems && UbBytes(tileElems, elemBytes, BUFFER_NUM) > ubBytes) {
        tileElems -= blockElems;
    }
    if (UbBytes(tileElems, elemBytes, BUFFER_NUM) > ubBytes) {
        return false;
    }
    uint64_t stride = AlignUp(cols, blockElems);
    uint64_t chunk = cols;
    uint64_t tileRows = 1;
    if (stride <= tileElems) {
        tileRows = tileElems / stride;
    } else {
        chunk = tileElems / blockElems * blockElems;
        stride = chunk;
    }
    if (tileRows > MAX_COPY_ROWS) {
        tileRows = MAX_COPY_ROWS;
    }
    uint64_t mode = MODE_ROWS;
    uint64_t units = matNum * rows;
    uint64_t unitBytes = cols * elemBytes;
    if (BATCH_MATRICES != 0 && chunk == cols && rows <= tileRows) {
        mode = MODE_BATCH;
        tileRows = tileRows / rows * rows;
        units = matNum;
        unitBytes *= rows;
    } else if (tileRows > rows) {
        tileRows = rows;
    }

    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Tiny tensors: no core gets less than MIN_CORE_BYTES.
    uint64_t coreCap = (units * unitBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    plan.mode = mode;
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.unitNum = static_cast<uint32_t>(units);
    plan.blockUnits = static_cast<uint32_t>(units / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(units % coreNum);
    plan.tileRows = static_cast<uint32_t>(tileRows);
    plan.chunkCols = static_cast<uint32_t>(chunk);
    plan.rowStride = static_cast<uint32_t>(stride);
    plan.maskCount = static_cast<uint32_t>(AlignUp(tileRows * stride, FLOAT_PER_REPEAT));
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
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const auto xDesc = context->GetInputDesc(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || xDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* diagonal = attrs->GetAttrPointer<int64_t>(ATTR_DIAGONAL);
    const gert::Shape& shape = xShape->GetStorageShape();
    size_t dimNum = shape.GetDimNum();
    if (diagonal == nullptr || dimNum < 2) {
        return ge::GRAPH_FAILED;
    }
    int64_t rows = shape.GetDim(dimNum - 2);
    int64_t cols = shape.GetDim(dimNum - 1);
    int64_t total = shape.GetShapeSize();
    if (rows < 0 || cols < 0 || total < 0 || total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint32_t elemBytes = 0;
    if (!DtypeKey(xDesc->GetDataType(), key, elemBytes)) {
        return ge::GRAPH_FAILED;
    }
    uint64_t matNum = rows * cols == 0 ? 0 : static_cast<uint64_t>(total) / (rows * cols);

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    TriuPlan plan;
    if (aivNum == 0 || !MakeTriuPlan(matNum, rows, cols, elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    TriuTilingData tiling;
    tiling.set_diagonal(*diagonal);
    tiling.set_matRows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_unitNum(plan.unitNum);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_chunkCols(plan.chunkCols);
    tiling.set_rowStride(plan.rowStride);
    tiling.set_maskCount(plan.maskCount);
    tiling.set_bufferNum(BUFFER_NUM);

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
class Triu : public OpDef {
public:
    explicit Triu(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("diagonal").AttrType(OPTIONAL).Int(0);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Triu);
}  // namespace ops
