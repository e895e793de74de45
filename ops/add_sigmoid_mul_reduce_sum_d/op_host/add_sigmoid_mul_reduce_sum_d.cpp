// AddSigmoidMulReduceSumD host side: tiling function, shape inference and the
// OpDef.
//
// out[b, h] = sum over s of sigmoid((a0[b, s, h] + a1[h]) * m0) * m1[b, s] * m2[b, s, h]
// with a0 = add_0_input0 [B, S, H], a1 = add_0_input1 [1, 1, H],
// m0 = mul_0_input1 [1], m1 = mult_1_input1 [B, S, 1],
// m2 = mult_2_input1 [B, S, H] and out [B, H], all float16 (ND).
//
// Tiling: a work unit is one batch, one part of the S rows and one chunk of
// hidden columns; the part count and the chunk width are chosen so that the
// B * parts * chunkNum units spread evenly over the vector cores (the cost
// of a core is its unit count times the rows of a part times the chunk width
// plus CHUNK_OVERHEAD columns for the per-row DMA and instruction cost, plus
// PART_OVERHEAD_ROWS rows for the workspace pass when S is split). The
// chunk width is a multiple of 16 (32 B of float16) so that every UB row of
// a tile starts on a 32 B block. Each unit streams its rows in tiles of
// tileRows rows (TILE_BYTES of a0 per tile, capped by UB and by the 255
// repeats of one vector instruction). With S split, the units store float32
// partial sums in the workspace ([B, parts, H]) and, after SyncAll, the
// B * chunkNum final units add the parts and store out.
#include <cstdint>

#include "add_sigmoid_mul_reduce_sum_d_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t ALIGN_ELEMS = 16;    // float16 elements per 32 B block
constexpr uint64_t MAX_CHUNK = 2032;    // a float32 row of at most 254 blocks (8-bit repeat strides)
constexpr uint64_t MAX_TILE_ROWS = 248; // repeats of one instruction (at most 255), a multiple of 8
constexpr uint64_t UB_SLACK = 1024;     // bytes kept free in UB

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t CHUNK_OVERHEAD = 64;     // ascendopt:knob min=0 max=1024 step=pow2
constexpr uint32_t MAX_PARTS = 8;           // ascendopt:knob min=1 max=16 step=1
constexpr uint32_t PART_OVERHEAD_ROWS = 32; // ascendopt:knob min=0 max=1024 step=pow2

struct AsmrPlan {
    uint32_t coreNum;
    uint32_t chunkLen;
    uint32_t chunkNum;
    uint32_t parts;
    uint32_t partRows;
    uint32_t finalUnits;
    uint32_t finalTailCoreNum;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
    uint32_t tileRows;
};

// UB bytes of a tile of `rows` rows of `width` (padded) columns.
uint64_t TileBytes(uint64_t rows, uint64_t width)
{
    uint64_t rows16 = (rows + 15) / 16 * 16;
    uint64_t perRow = 2 * BUFFER_NUM * width * 2 + 2 * width * 4;  // a0 and m2 queues, two float32 tiles
    uint64_t m1 = BUFFER_NUM * rows16 * 2 + rows16 * 4 + rows16 * 32;  // m1 queue, float32 and broadcast blocks
    uint64_t fixed = width * (2 + 4 + 4 + 2);                        // a1 (float16, float32), sum, out
    return rows * perRow + m1 + fixed;
}

bool MakeAsmrPlan(uint64_t batch, uint64_t seq, uint64_t hidden, uint32_t aivNum, uint64_t ubBytes, AsmrPlan& plan)
{
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum == 0 || ubBytes <= UB_SLACK) {
        return false;
    }
    // Chunk width and parts of S: the least core cost over every chunk count
    // and part count.
    uint64_t bestLen = 0;
    uint64_t bestParts = 1;
    uint64_t bestCost = 0;
    uint64_t maxChunks = (hidden + ALIGN_ELEMS - 1) / ALIGN_ELEMS;
    for (uint64_t k = 1; k <= maxChunks; k++) {
        uint64_t len = ((hidden + k - 1) / k + ALIGN_ELEMS - 1) / ALIGN_ELEMS * ALIGN_ELEMS;
        if (len > MAX_CHUNK) {
            continue;
        }
        uint64_t chunks = (hidden + len - 1) / len;
        for (uint64_t p = 1; p <= MAX_PARTS && p <= seq; p++) {
            uint64_t partRows = (seq + p - 1) / p;
            uint64_t parts = (seq + partRows - 1) / partRows;
            uint64_t units = batch * parts * chunks;
            uint64_t cores = units < coreNum ? units : coreNum;
            uint64_t rows = (units + cores - 1) / cores * partRows + (parts > 1 ? PART_OVERHEAD_ROWS : 0);
            uint64_t cost = rows * (len + CHUNK_OVERHEAD);
            if (bestLen == 0 || cost < bestCost) {
                bestLen = len;
                bestParts = parts;
                bestCost = cost;
            }
        }
    }
    if (bestLen == 0) {
        return false;
    }
    uint64_t chunkNum = (hidden + bestLen - 1) / bestLen;
    uint64_t partRows = (seq + bestParts - 1) / bestParts;
    uint64_t units = batch * bestParts * chunkNum;
    if (coreNum > units) {
        coreNum = units;
    }
    // Rows per tile: TILE_BYTES of a0, within UB and the repeat limit, then
    // equal tiles over S.
    uint64_t rowsMax = TILE_BYTES / (bestLen * 2);
    if (rowsMax > MAX_TILE_ROWS) {
        rowsMax = MAX_TILE_ROWS;
    }
    while (rowsMax > 1 && TileBytes(rowsMax, bestLen) > ubBytes - UB_SLACK) {
        rowsMax--;
    }
    if (rowsMax == 0) {
        rowsMax = 1;
    }
    if (TileBytes(rowsMax, bestLen) > ubBytes - UB_SLACK) {
        return false;
    }
    uint64_t tileNum = (partRows + rowsMax - 1) / rowsMax;
    uint64_t tileRows = tileNum == 0 ? 1 : (partRows + tileNum - 1) / tileNum;
    // The final units (batch, chunk) over the same cores.
    uint64_t finalUnits = batch * chunkNum;
    plan.parts = static_cast<uint32_t>(bestParts);
    plan.partRows = static_cast<uint32_t>(partRows);
    plan.finalUnits = static_cast<uint32_t>(finalUnits / coreNum);
    plan.finalTailCoreNum = static_cast<uint32_t>(finalUnits % coreNum);
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.chunkLen = static_cast<uint32_t>(bestLen);
    plan.chunkNum = static_cast<uint32_t>(chunkNum);
    plan.blockUnits = static_cast<uint32_t>(units / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(units % coreNum);
    plan.tileRows = static_cast<uint32_t>(tileRows);
    return true;
}
// ascendopt:tiling-end

bool IsHalf(gert::TilingContext* context, size_t index)
{
    const auto desc = context->GetInputDesc(index);
    return desc != nullptr && desc->GetDataType() == ge::DT_FLOAT16;
}

int64_t Elements(gert::TilingContext* context, size_t index)
{
    const gert::StorageShape* shape = context->GetInputShape(index);
    return shape == nullptr ? -1 : shape->GetStorageShape().GetShapeSize();
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* a0Shape = context->GetInputShape(0);
    if (a0Shape == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& a0 = a0Shape->GetStorageShape();
    if (a0.GetDimNum() != 3) {
        return ge::GRAPH_FAILED;
    }
    int64_t batch = a0.GetDim(0);
    int64_t seq = a0.GetDim(1);
    int64_t hidden = a0.GetDim(2);
    if (batch <= 0 || seq <= 0 || hidden <= 0 || batch * seq * hidden > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    for (size_t i = 0; i < 5; i++) {
        if (!IsHalf(context, i)) {
            return ge::GRAPH_FAILED;
        }
    }
    if (Elements(context, 1) != hidden || Elements(context, 2) != 1 || Elements(context, 3) != batch * seq ||
        Elements(context, 4) != batch * seq * hidden) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    AsmrPlan plan;
    if (!MakeAsmrPlan(static_cast<uint64_t>(batch), static_cast<uint64_t>(seq), static_cast<uint64_t>(hidden), aivNum,
                      ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    AddSigmoidMulReduceSumDTilingData tiling;
    tiling.set_batch(static_cast<uint32_t>(batch));
    tiling.set_seq(static_cast<uint32_t>(seq));
    tiling.set_hidden(static_cast<uint32_t>(hidden));
    tiling.set_chunkLen(plan.chunkLen);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_parts(plan.parts);
    tiling.set_partRows(plan.partRows);
    tiling.set_finalUnits(plan.finalUnits);
    tiling.set_finalTailCoreNum(plan.finalTailCoreNum);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    // Float32 partial sums [B, parts, H] when S is split.
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = plan.parts > 1 ? static_cast<size_t>(batch) * plan.parts * hidden * sizeof(float) : 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* a0Shape = context->GetInputShape(0);
    gert::Shape* outShape = context->GetOutputShape(0);
    if (a0Shape == nullptr || outShape == nullptr || a0Shape->GetDimNum() != 3) {
        return GRAPH_FAILED;
    }
    outShape->SetDimNum(2);
    outShape->SetDim(0, a0Shape->GetDim(0));
    outShape->SetDim(1, a0Shape->GetDim(2));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AddSigmoidMulReduceSumD : public OpDef {
public:
    explicit AddSigmoidMulReduceSumD(const char* name) : OpDef(name)
    {
        this->Input("add_0_input0").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("add_0_input1").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("mul_0_input1").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("mult_1_input1").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("mult_2_input1").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AddSigmoidMulReduceSumD);
}  // namespace ops
