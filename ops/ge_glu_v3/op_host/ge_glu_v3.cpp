// GeGluV3 host side: tiling function, shape inference and the OpDef.
//
// Input x (float16, float32 or bfloat16); attrs `dim` (int, default -1),
// `approximate` (int, default 1: 0 = erf form, 1 = tanh form) and
// `activate_left` (bool, default false). x is split in two halves A and B
// along dim (its size must be even); outputs (x's shape with dim halved):
//   activate_left = false: gelu = GELU(B), y = A * gelu
//   activate_left = true:  gelu = GELU(A), y = gelu * B
// computed in float32.
//
// Tiling: x is viewed as rows x [A | B] with halves of rowLen elements (see
// op_host/ge_glu_v3_tiling.h). Rows (mode 1) or row chunks (mode 2, for rows
// longer than a tile or too few rows to fill the cores) are split over the
// vector cores, balanced to one unit. Tiles are as large as UB allows next
// to the kernel's float32 work buffers (the budget below mirrors its
// InitBuffer calls), capped by TILE_ELEMS. The tiling key is
// dtype * 100 + approximate * 10 + mode, dtype 1 float16, 2 float32,
// 3 bfloat16.
#include <cstdint>

#include "ge_glu_v3_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;       // UB data block
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t REPEAT_FLOATS = 64;     // floats per 256 B vector repeat
constexpr uint32_t MAX_COPY_ROWS = 4095;   // DataCopyPad blockCount limit
constexpr uint32_t QUEUE_NUM = 4;          // activated half, other half, y, gelu
constexpr uint32_t MODE_ROWS = 1;
constexpr uint32_t MODE_SPLIT = 2;
constexpr uint32_t ATTR_DIM = 0;
constexpr uint32_t ATTR_APPROXIMATE = 1;
constexpr uint32_t ATTR_ACTIVATE_LEFT = 2;

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return (value + align - 1) / align * align;
}

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

// float32 work buffers of one tile in the kernel: the tanh form needs one,
// the erf form three; 16-bit inputs need one more for the float copy.
uint32_t FloatBufs(bool erfForm, uint32_t elemBytes)
{
    return (erfForm ? 3 : 1) + (elemBytes == FLOAT_BYTES ? 0 : 1);
}

// UB bytes for tiles of `elems` elements (mirrors the kernel's InitBuffer
// calls; the last term is the 64 ones of the erf form's divisions).
uint64_t UbBytes(uint64_t elems, uint32_t elemBytes, uint32_t bufferNum, uint32_t floatBufs)
{
    return QUEUE_NUM * bufferNum * AlignUp(elems * elemBytes, BLOCK_BYTES) + floatBufs * elems * FLOAT_BYTES +
           REPEAT_FLOATS * FLOAT_BYTES;
}

struct GluPlan {
    uint32_t mode;
    uint32_t coreNum;
    uint32_t rowStride;
    uint32_t chunkLen;
    uint32_t chunksPerRow;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
    uint32_t tileRows;
    uint32_t tileElems;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_ELEMS = 8192;        // ascendopt:knob min=256 max=16384 step=pow2
constexpr uint32_t BUFFER_NUM = 2;           // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;        // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 4096;    // ascendopt:knob min=32 max=65536 step=pow2
constexpr uint32_t SPLIT_ALIGN_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512

// Cores for `units` units: at most `target`, and no more than needed for
// the largest per-core share (fewer cores, same time, smaller launch head).
uint64_t CoresFor(uint64_t units, uint64_t target)
{
    if (units == 0) {
        return 1;
    }
    uint64_t cores = target < units ? target : units;
    uint64_t perCore = CeilDiv(units, cores);
    return CeilDiv(units, perCore);
}

// Splits `rows` rows of two halves of `rowLen` elements over at most
// `aivNum` cores and sizes the UB tile. Returns false when no tile fits.
bool MakeGluPlan(uint64_t rows, uint64_t rowLen, uint32_t elemBytes, uint32_t floatBufs, uint32_t aivNum,
                 uint64_t ubBytes, GluPlan& plan)
{
    uint64_t maxElems = TILE_ELEMS / REPEAT_FLOATS * REPEAT_FLOATS;
    while (maxElems >= REPEAT_FLOATS && UbBytes(maxElems, elemBytes, BUFFER_NUM, floatBufs) > ubBytes) {
        maxElems -= REPEAT_FLOATS;
    }
    if (maxElems < REPEAT_FLOATS) {
        return false;
    }
    uint64_t target = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t coreCap = CeilDiv(rows * rowLen * 2 * elemBytes, MIN_CORE_BYTES);
    if (target > coreCap) {
        target = coreCap;
    }
    if (target == 0) {
        target = 1;
    }
    uint64_t stride = AlignUp(rowLen, BLOCK_BYTES / elemBytes);
    uint64_t tileRows = maxElems / stride;
    if (tileRows > MAX_COPY_ROWS) {
        tileRows = MAX_COPY_ROWS;
    }
    if (tileRows >= 1 && rows >= target) {
        // Mode 1: whole rows, as many per tile as fit; equal tiles per core.
        uint64_t coreNum = CoresFor(rows, target);
        uint64_t coreRows = CeilDiv(rows, coreNum);
        uint64_t tileNum = CeilDiv(coreRows, tileRows);
        tileRows = CeilDiv(coreRows, tileNum);
        plan.mode = MODE_ROWS;
        plan.coreNum = static_cast<uint32_t>(coreNum);
        plan.rowStride = static_cast<uint32_t>(stride);
        plan.chunkLen = static_cast<uint32_t>(rowLen);
        plan.chunksPerRow = 1;
        plan.blockUnits = static_cast<uint32_t>(rows / coreNum);
        plan.tailCoreNum = static_cast<uint32_t>(rows % coreNum);
        plan.tileRows = static_cast<uint32_t>(tileRows);
        plan.tileElems = static_cast<uint32_t>(tileRows * stride);
        return true;
    }
    // Mode 2: rows cut into chunks, GM-aligned, enough chunks for the cores.
    uint64_t alignElems = SPLIT_ALIGN_BYTES / elemBytes;
    if (alignElems == 0 || maxElems % alignElems != 0) {
        alignElems = BLOCK_BYTES / elemBytes;
    }
    uint64_t maxChunk = maxElems / alignElems * alignElems;
    uint64_t wantChunks = CeilDiv(target, rows);
    uint64_t chunk = AlignUp(CeilDiv(rowLen, wantChunks), alignElems);
    if (chunk > maxChunk) {
        chunk = maxChunk;
    }
    uint64_t chunksPerRow = CeilDiv(rowLen, chunk);
    chunk = AlignUp(CeilDiv(rowLen, chunksPerRow), alignElems);
    uint64_t units = rows * chunksPerRow;
    uint64_t coreNum = CoresFor(units, target);
    plan.mode = MODE_SPLIT;
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.rowStride = static_cast<uint32_t>(stride);
    plan.chunkLen = static_cast<uint32_t>(chunk);
    plan.chunksPerRow = static_cast<uint32_t>(chunksPerRow);
    plan.blockUnits = static_cast<uint32_t>(units / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(units % coreNum);
    plan.tileRows = 1;
    plan.tileElems = static_cast<uint32_t>(chunk);
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

// dim in [-rank, rank) normalised to [0, rank); false when out of range.
bool NormDim(int64_t dim, size_t rank, size_t& out)
{
    int64_t r = static_cast<int64_t>(rank);
    int64_t d = dim < 0 ? dim + r : dim;
    if (d < 0 || d >= r) {
        return false;
    }
    out = static_cast<size_t>(d);
    return true;
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
    const int64_t* dimAttr = attrs->GetAttrPointer<int64_t>(ATTR_DIM);
    const int64_t* approximate = attrs->GetAttrPointer<int64_t>(ATTR_APPROXIMATE);
    const bool* activateLeft = attrs->GetAttrPointer<bool>(ATTR_ACTIVATE_LEFT);
    if (dimAttr == nullptr || approximate == nullptr || activateLeft == nullptr ||
        (*approximate != 0 && *approximate != 1)) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x = xShape->GetStorageShape();
    size_t dim = 0;
    if (!NormDim(*dimAttr, x.GetDimNum(), dim)) {
        return ge::GRAPH_FAILED;
    }
    int64_t dimSize = x.GetDim(dim);
    int64_t total = x.GetShapeSize();
    if (dimSize <= 0 || dimSize % 2 != 0 || total <= 0 || total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t post = 1;
    for (size_t i = dim + 1; i < x.GetDimNum(); i++) {
        post *= static_cast<uint64_t>(x.GetDim(i));
    }
    uint64_t rowLen = static_cast<uint64_t>(dimSize / 2) * post;
    uint64_t rows = static_cast<uint64_t>(total) / (2 * rowLen);

    uint64_t dtypeKey = 0;
    uint32_t elemBytes = 0;
    if (!DtypeKey(xDesc->GetDataType(), dtypeKey, elemBytes)) {
        return ge::GRAPH_FAILED;
    }
    bool erfForm = *approximate == 0;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    GluPlan plan;
    if (aivNum == 0 ||
        !MakeGluPlan(rows, rowLen, elemBytes, FloatBufs(erfForm, elemBytes), aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    GeGluV3TilingData tiling;
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_rowLen(static_cast<uint32_t>(rowLen));
    tiling.set_rowStride(plan.rowStride);
    tiling.set_chunkLen(plan.chunkLen);
    tiling.set_chunksPerRow(plan.chunksPerRow);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_tileElems(plan.tileElems);
    tiling.set_actOffset(*activateLeft ? 0 : static_cast<uint32_t>(rowLen));
    tiling.set_linOffset(*activateLeft ? static_cast<uint32_t>(rowLen) : 0);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(dtypeKey * 100 + static_cast<uint64_t>(*approximate) * 10 + plan.mode);
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
    gert::Shape* geluShape = context->GetOutputShape(1);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || yShape == nullptr || geluShape == nullptr || attrs == nullptr) {
        return GRAPH_FAILED;
    }
    const int64_t* dimAttr = attrs->GetAttrPointer<int64_t>(optiling::ATTR_DIM);
    size_t dim = 0;
    if (dimAttr == nullptr || !optiling::NormDim(*dimAttr, xShape->GetDimNum(), dim)) {
        return GRAPH_FAILED;
    }
    *yShape = *xShape;
    yShape->SetDim(dim, xShape->GetDim(dim) / 2);
    *geluShape = *yShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class GeGluV3 : public OpDef {
public:
    explicit GeGluV3(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("gelu")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("dim").AttrType(OPTIONAL).Int(-1);
        this->Attr("approximate").AttrType(OPTIONAL).Int(1);
        this->Attr("activate_left").AttrType(OPTIONAL).Bool(false);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(GeGluV3);
}  // namespace ops
