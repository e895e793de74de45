// RmsNorm host side: tiling function, shape inference and the OpDef.
//
// Inputs x [..., D] and gamma [D] (float16, float32 or bfloat16, the same
// dtype), attr `epsilon` (float, default 1e-6). Outputs y (x's shape and
// dtype) = x * rstd * gamma and rstd (float32, shape x.shape[:-1] + [1]) =
// 1 / sqrt(mean(x^2 over the last dim) + epsilon), computed in float32.
//
// Tiling: rows are split over the vector cores (the first `tailCoreNum`
// cores take one row more). The tiling key is dtype * 10 + mode, dtype 1
// float16, 2 float32, 3 bfloat16:
//   mode 1 (batched rows): rows padded to at most BATCH_MAX_COLS elements,
//     and enough of them per tile that vector instructions covering all the
//     rows of a tile are fewer than per-row ones;
//   mode 2 (row by row): the other rows that fit in UB, one or more whole
//     rows per tile;
//   mode 3 (split rows): a row does not fit in UB, so it is streamed in chunks
//     twice (sum of squares, then the output);
//   mode 4 (split columns): few long rows (at most MAX_COL_SPLIT_ROWS rows
//     of at least COL_SPLIT_MIN_BYTES, fewer than half the cores): every core
//     takes a column range of all rows (kept resident in UB when it fits,
//     chunkLen = 0, else streamed in chunks); the cores exchange their
//     partial sums of squares through the workspace (rows rounded up to 8
//     floats per core) around one SyncAll.
// Tiles hold about TILE_BYTES of x, as many rows as fit in UB next to the
// float32 work buffers of the kernel (the UB budget below mirrors its
// InitBuffer calls).
#include <cstdint>

#include "register/op_def_registry.h"
#include "rms_norm_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;         // UB data block
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t FLOAT_PER_REPEAT = 64;    // floats per 256 B vector repeat
constexpr uint32_t MAX_BATCH_STRIDE = 2040;  // repeat stride (8-bit, 32 B units) limit of mode 1, in floats
constexpr uint32_t MAX_BATCH_ROWS = 2040;    // Brcb: 255 repeats x 8 rows
constexpr uint32_t MAX_COPY_ROWS = 4095;     // DataCopyPad blockCount limit
constexpr uint32_t MODE_BATCH = 1;
constexpr uint32_t MODE_ROW = 2;
constexpr uint32_t MODE_SPLIT = 3;
constexpr uint32_t MODE_COLS = 4;
constexpr uint32_t MAX_COL_SPLIT_ROWS = 64;  // mode 4: UB holds every core's partials of every row
constexpr uint32_t GM_ALIGN_BYTES = 512;     // mode 4 column unit: whole GM bursts
constexpr uint32_t SLAB_MIN_ROWS = 4;        // mode 4: fewer rows stream (overlapped) instead of a resident slab
constexpr uint32_t ATTR_EPSILON = 0;  // index of attr `epsilon`

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return (value + align - 1) / align * align;
}

// UB bytes of modes 1 and 2 for `rows` rows of `stride` elements (mirrors the
// kernel's InitBuffer calls).
uint64_t UbBytesRows(uint64_t rows, uint64_t stride, uint32_t elemBytes, uint32_t bufferNum, bool batched)
{
    uint64_t tileElems = rows * stride;
    uint64_t rowFloats = AlignUp(rows * FLOAT_BYTES, BLOCK_BYTES);
    uint64_t bytes = 2 * bufferNum * tileElems * elemBytes  // x and y queues
                     + bufferNum * rowFloats                // rstd queue
                     + stride * elemBytes                   // gamma queue
                     + tileElems * FLOAT_BYTES              // squares / float y
                     + 2 * rowFloats;                       // row sums, ones
    if (elemBytes != FLOAT_BYTES) {
        bytes += tileElems * FLOAT_BYTES + stride * FLOAT_BYTES;  // float x, float gamma
    }
    if (batched) {
        bytes += AlignUp(rows, 8) * BLOCK_BYTES;  // Brcb blocks
    }
    return bytes;
}

// UB bytes of modes 3 and 4 for chunks of `chunk` elements (mode 4 adds the
// partial-sum exchange buffers, `exchangeBytes`).
uint64_t UbBytesSplit(uint64_t chunk, uint32_t elemBytes, uint32_t bufferNum, uint64_t exchangeBytes)
{
    uint64_t bytes = 3 * bufferNum * chunk * elemBytes  // x, gamma and y queues
                     + bufferNum * BLOCK_BYTES          // rstd queue
                     + chunk * FLOAT_BYTES              // squares / float y
                     + FLOAT_PER_REPEAT * FLOAT_BYTES   // 64-lane accumulator
                     + 2 * BLOCK_BYTES;                 // row sum, ones
    if (elemBytes != FLOAT_BYTES) {
        bytes += 2 * chunk * FLOAT_BYTES;  // float x, float gamma
    }
    return bytes + exchangeBytes;
}

struct RmsPlan {
    uint32_t mode;
    uint32_t coreNum;
    uint32_t rowStride;
    uint32_t blockRows;
    uint32_t tailCoreNum;
    uint32_t tileRows;
    uint32_t chunkLen;
    uint32_t colUnit;
    uint32_t colBlockUnits;
    uint32_t colTailCoreNum;
    uint64_t workspaceBytes;
};

// UB bytes of mode 4 with the whole column slab resident: `rowsPad` rows of
// `stride` elements, partials of `cores` cores (mirrors the kernel).
uint64_t UbBytesSlab(uint64_t rowsPad, uint64_t stride, uint32_t elemBytes, uint64_t cores)
{
    uint64_t slab = rowsPad * stride;
    uint64_t bytes = 2 * slab * elemBytes             // x and y queues, one buffer each
                     + stride * elemBytes             // gamma queue
                     + slab * FLOAT_BYTES             // squares / float y
                     + rowsPad * BLOCK_BYTES          // Brcb blocks
                     + rowsPad * FLOAT_BYTES * (cores + 3);  // own partials, all partials, rstd, ones
    if (elemBytes != FLOAT_BYTES) {
        bytes += slab * FLOAT_BYTES + stride * FLOAT_BYTES;  // float x, float gamma
    }
    return bytes;
}

// Chunk of modes 3 and 4: TILE_BYTES of x in whole 256 B float repeats, at
// most the (rounded) columns to stream, shrunk until UB holds it.
uint64_t ChunkLength(uint64_t tileBytes, uint64_t cols, uint32_t elemBytes, uint32_t bufferNum,
                     uint64_t exchangeBytes, uint64_t ubBytes)
{
    uint64_t chunk = tileBytes / elemBytes / FLOAT_PER_REPEAT * FLOAT_PER_REPEAT;
    if (chunk < FLOAT_PER_REPEAT) {
        chunk = FLOAT_PER_REPEAT;
    }
    uint64_t colsAligned = AlignUp(cols, FLOAT_PER_REPEAT);
    if (chunk > colsAligned) {
        chunk = colsAligned;
    }
    while (chunk > 0 && UbBytesSplit(chunk, elemBytes, bufferNum, exchangeBytes) > ubBytes) {
        chunk -= FLOAT_PER_REPEAT;
    }
    return chunk;
}

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 16384;            // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;                // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;             // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t BATCH_MAX_COLS = 512;          // ascendopt:knob choices=0,64,128,256,512,1024,2040
constexpr uint32_t MIN_CORE_BYTES = 1024;         // ascendopt:knob min=32 max=65536 step=pow2
constexpr uint32_t COL_SPLIT_MIN_BYTES = 131072;  // ascendopt:knob min=4096 max=4194304 step=pow2

// Splits `rows` rows of `cols` elements over at most `aivNum` cores, picks the
// mode and sizes the tile. Returns false when not even a minimal chunk fits.
bool MakeRmsPlan(uint64_t rows, uint64_t cols, uint32_t elemBytes, uint32_t aivNum, uint64_t ubBytes, RmsPlan& plan)
{
    uint64_t stride = AlignUp(cols, BLOCK_BYTES / elemBytes);
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > rows) {
        coreNum = rows;
    }
    // Tiny tensors: no core gets less than MIN_CORE_BYTES of x.
    uint64_t coreCap = (rows * cols * elemBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockRows = rows / coreNum;
    uint64_t tailCoreNum = rows % coreNum;
    uint64_t coreRows = blockRows + (tailCoreNum > 0 ? 1 : 0);
    if (coreRows == 0) {
        coreRows = 1;
    }
    plan.colUnit = 0;
    plan.colBlockUnits = 0;
    plan.colTailCoreNum = 0;
    plan.workspaceBytes = 0;

    // Few long rows would leave most cores idle: split the columns instead.
    uint64_t coreAvail = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (rows > 0 && rows <= MAX_COL_SPLIT_ROWS && 2 * rows <= coreAvail && cols * elemBytes >= COL_SPLIT_MIN_BYTES) {
        uint64_t unit = GM_ALIGN_BYTES / elemBytes;
        uint64_t units = (cols + unit - 1) / unit;
        uint64_t splitCores = coreAvail < units ? coreAvail : units;
        uint64_t rowsPad = AlignUp(rows, 8);
        uint64_t exchangeBytes = rowsPad * FLOAT_BYTES * (1 + splitCores + 2);  // own, all, rstd, ones
        uint64_t segment = (units + splitCores - 1) / splitCores * unit;
        if (segment > cols) {
            segment = cols;
        }
        uint64_t segStride = AlignUp(segment, BLOCK_BYTES / elemBytes);
        bool slab = rows >= SLAB_MIN_ROWS && UbBytesSlab(rowsPad, segStride, elemBytes, splitCores) <= ubBytes;
        uint64_t chunk = 0;  // 0: the slab stays resident in UB
        if (!slab) {
            chunk = ChunkLength(TILE_BYTES, segment, elemBytes, BUFFER_NUM, exchangeBytes, ubBytes);
        }
        if (splitCores > 1 && (slab || chunk > 0)) {
            plan.mode = MODE_COLS;
            plan.coreNum = static_cast<uint32_t>(splitCores);
            plan.rowStride = static_cast<uint32_t>(segStride);
            plan.blockRows = static_cast<uint32_t>(rows);
            plan.tailCoreNum = 0;
            plan.tileRows = 1;
            plan.chunkLen = static_cast<uint32_t>(chunk);
            plan.colUnit = static_cast<uint32_t>(unit);
            plan.colBlockUnits = static_cast<uint32_t>(units / splitCores);
            plan.colTailCoreNum = static_cast<uint32_t>(units % splitCores);
            plan.workspaceBytes = splitCores * rowsPad * FLOAT_BYTES;
            return true;
        }
    }

    bool batched = stride <= BATCH_MAX_COLS && stride <= MAX_BATCH_STRIDE;
    uint64_t tileRows = TILE_BYTES / (stride * elemBytes);
    if (tileRows == 0) {
        tileRows = 1;
    }
    uint64_t rowCap = batched ? MAX_BATCH_ROWS : MAX_COPY_ROWS;
    if (tileRows > rowCap) {
        tileRows = rowCap;
    }
    if (tileRows > coreRows) {
        tileRows = coreRows;
    }
    while (tileRows > 0 && UbBytesRows(tileRows, stride, elemBytes, BUFFER_NUM, batched) > ubBytes) {
        tileRows--;
    }

    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.rowStride = static_cast<uint32_t>(stride);
    plan.blockRows = static_cast<uint32_t>(blockRows);
    plan.tailCoreNum = static_cast<uint32_t>(tailCoreNum);
    if (tileRows > 0) {
        // Batched rows pay about 3 instructions per 64-lane chunk of a row
        // whatever the row count; row by row pays about (fold steps + 3)
        // per row: take the one that issues fewer vector instructions.
        uint64_t chunks = (stride + FLOAT_PER_REPEAT - 1) / FLOAT_PER_REPEAT;
        uint64_t foldSteps = 0;
        for (uint64_t lanes = stride; lanes > FLOAT_PER_REPEAT; lanes = (lanes + 1) / 2) {
            foldSteps++;
        }
        if (batched && 3 * chunks >= tileRows * (foldSteps + 3)) {
            batched = false;
        }
        plan.mode = batched ? MODE_BATCH : MODE_ROW;
        plan.tileRows = static_cast<uint32_t>(tileRows);
        plan.chunkLen = 0;
        return true;
    }

    // A row does not fit: stream it in chunks of whole 256 B float repeats.
    uint64_t chunk = ChunkLength(TILE_BYTES, cols, elemBytes, BUFFER_NUM, 0, ubBytes);
    if (chunk == 0) {
        return false;
    }
    plan.mode = MODE_SPLIT;
    plan.tileRows = 1;
    plan.chunkLen = static_cast<uint32_t>(chunk);
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
    const gert::StorageShape* gammaShape = context->GetInputShape(1);
    const auto xDesc = context->GetInputDesc(0);
    const auto gammaDesc = context->GetInputDesc(1);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || gammaShape == nullptr || xDesc == nullptr || gammaDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x = xShape->GetStorageShape();
    size_t dimNum = x.GetDimNum();
    if (dimNum == 0) {
        return ge::GRAPH_FAILED;
    }
    int64_t cols = x.GetDim(dimNum - 1);
    int64_t total = x.GetShapeSize();
    if (cols <= 0 || total < 0 || total > UINT32_MAX || gammaShape->GetStorageShape().GetShapeSize() != cols) {
        return ge::GRAPH_FAILED;
    }
    if (xDesc->GetDataType() != gammaDesc->GetDataType()) {
        return ge::GRAPH_FAILED;
    }
    uint64_t dtypeKey = 0;
    uint32_t elemBytes = 0;
    if (!DtypeKey(xDesc->GetDataType(), dtypeKey, elemBytes)) {
        return ge::GRAPH_FAILED;
    }
    const float* epsilon = attrs->GetAttrPointer<float>(ATTR_EPSILON);
    if (epsilon == nullptr) {
        return ge::GRAPH_FAILED;
    }
    uint64_t rows = static_cast<uint64_t>(total) / static_cast<uint64_t>(cols);

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    RmsPlan plan;
    if (aivNum == 0 || !MakeRmsPlan(rows, static_cast<uint64_t>(cols), elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    RmsNormTilingData tiling;
    tiling.set_rows(static_cast<uint32_t>(rows));
    tiling.set_cols(static_cast<uint32_t>(cols));
    tiling.set_rowStride(plan.rowStride);
    tiling.set_blockRows(plan.blockRows);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_chunkLen(plan.chunkLen);
    tiling.set_colUnit(plan.colUnit);
    tiling.set_colBlockUnits(plan.colBlockUnits);
    tiling.set_colTailCoreNum(plan.colTailCoreNum);
    tiling.set_bufferNum(BUFFER_NUM);
    tiling.set_epsilon(*epsilon);
    tiling.set_invCols(static_cast<float>(1.0 / static_cast<double>(cols)));

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(dtypeKey * 10 + plan.mode);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = plan.workspaceBytes;  // mode 4 partial sums; no library API needs a system workspace
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* xShape = context->GetInputShape(0);
    gert::Shape* yShape = context->GetOutputShape(0);
    gert::Shape* rstdShape = context->GetOutputShape(1);
    if (xShape == nullptr || yShape == nullptr || rstdShape == nullptr || xShape->GetDimNum() == 0) {
        return GRAPH_FAILED;
    }
    *yShape = *xShape;
    *rstdShape = *xShape;
    rstdShape->SetDim(xShape->GetDimNum() - 1, 1);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class RmsNorm : public OpDef {
public:
    explicit RmsNorm(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("gamma")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("rstd")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(RmsNorm);
}  // namespace ops
