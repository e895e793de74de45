// FlashAttentionScoreWithLargeHeadDim host side: tiling function, shape
// inference and the OpDef.
//
// Per batch b, head n and query row i (shared/ref/operators-l1-l3.md
// "flash_attention_score_with_large_head_dim"): s = scale_value x q_i K^T
// over the S2 key rows of the head's KV group (head n / (N / Nkv)),
// softmax_max = max s, softmax_sum = sum exp(s - max) (each repeated 8
// times), attention_out_i = sum exp(s - max) v / softmax_sum. query
// [B, S1, H], key and value [B, S2, Hkv], float16, BSH; D = H / N <= 576.
//
// Tiling: a task is `rows` query rows of one (b, n); the vector cores
// (AIC:AIV 1:2) take tasks round robin. Per task the S2 axis goes in
// blocks of `cols` key rows (flash attention's online softmax): the cube
// computes S = Q K^T and P V with the Matmul API, the vector core the
// softmax and the rescaled running output, kept in UB (rows x D float).
// `rows` is the most the UB holds beside the work buffers, at most
// MAX_ROWS, and smaller when that leaves vector cores idle.
#include <cstdint>

#include "flash_attention_score_with_large_head_dim_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace optiling {
namespace {
constexpr uint32_t MIX_RATIO = 2;       // vector cores per AI core (AIC:AIV 1:2)
constexpr uint32_t MAX_HEAD_DIM = 576;  // the operator's limit on D
constexpr uint32_t STAT_BYTES = 32;     // one softmax statistic: 8 floats
constexpr uint32_t MAX_ROW_STRIDE = 65535;  // Nd2NzParams' srcDValue

// ascendopt:tiling-begin
constexpr uint32_t MAX_ROWS = 128;     // ascendopt:knob min=16 max=128 step=16
constexpr uint32_t MIN_ROWS = 32;      // ascendopt:knob min=16 max=128 step=16
constexpr uint32_t BLOCK_S2 = 512;     // ascendopt:knob min=64 max=1024 step=64
constexpr uint32_t WORK_BYTES = 10240;  // ascendopt:knob min=4096 max=32768 step=2048
// The two Matmul objects each keep their own L1 and L0 buffers on the AI
// core, so each gets half of L1, L0A, L0B and L0C: base blocks of
// rows x BASE_N x BASE_K with rows <= 128 keep a double-buffered L0A/L0B
// block within 32 KB; baseN shrinks so that the L0C tile stays within
// 64 KB. 256 x 32 against 128 x 64: ref_1x2048x576 327 -> 309 us (half
// the N tiles, so half the reloads of A's blocks and fewer, larger B copies).
constexpr int32_t BASE_N = 256;        // ascendopt:knob choices=64,128,256
constexpr int32_t BASE_K = 32;         // ascendopt:knob choices=32,64
constexpr int32_t L1_DB = 2;           // ascendopt:knob choices=1,2
// ascendopt:tiling-end

uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
uint32_t RoundUp(uint32_t a, uint32_t b) { return CeilDiv(a, b) * b; }

// The L1 use of one object, adjusted within table 6-1073's constraints
// (a TCubeTiling from GetTiling may be changed; guide 6.2.4.2.2): A (one
// M tile: the task's rows) whole in L1 in one load, kept across the N
// tiles (stepKa = K blocks, depthA1 = stepKa, one buffer), and B in the
// fewest loads of L1_DB buffers (2: the next load overlaps the cube's
// work) that fit beside it, as fewer, larger GM -> L1 copies pay their
// fixed cost fewer times (ref_1x2048x576, 128 x 64 blocks: 372 -> 327 us;
// with 256 x 32 blocks L1_DB 1 gives 325 us, 2 gives 309 us). Unchanged
// when A alone does not fit.
void KeepAInL1(optiling::TCubeTiling& t, int64_t l1Bytes)
{
    constexpr int64_t IN_BYTES = 2;  // float16 A and B
    const int32_t kBlocks = (t.get_singleCoreK() + t.get_baseK() - 1) / t.get_baseK();
    const int64_t a = static_cast<int64_t>((t.get_baseM() * t.get_stepM() + 15) / 16 * 16) * kBlocks *
                      t.get_baseK() * IN_BYTES;
    const int64_t bBlock =
        static_cast<int64_t>((t.get_baseN() * t.get_stepN() + 15) / 16 * 16) * t.get_baseK() * IN_BYTES;
    for (int32_t loads = 1; loads <= kBlocks; ++loads) {
        const int32_t stepB = (kBlocks + loads - 1) / loads;
        if (a + bBlock * stepB * L1_DB <= l1Bytes) {
            t.set_stepKa(kBlocks);
            t.set_depthA1(t.get_stepM() * kBlocks);
            t.set_stepKb(stepB);
            t.set_depthB1(t.get_stepN() * stepB * L1_DB);
            return;
        }
    }
}

// One Matmul API tiling of float16 A [m, k] (row stride orgKa) times B
// (transposed: [n, k], row stride orgKb; else [k, n], row stride orgN)
// into float C; false when the tiling cannot be made.
bool CubeTiling(const platform_ascendc::PlatformAscendC& platform, int32_t m, int32_t n, int32_t k,
                int32_t orgN, int32_t orgKa, int32_t orgKb, bool transB, optiling::TCubeTiling& out)
{
    uint64_t l1 = 0;
    uint64_t l0c = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, l0c);
    matmul_tiling::MatmulApiTiling t(platform);
    t.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    t.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16,
               transB);
    t.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    t.SetShape(m, n, k);
    t.SetOrgShape(m, orgN, orgKa, orgKb);
    t.SetBias(false);
    // baseN: BASE_N, at most N, and the float L0C tile within its half.
    int32_t baseN = BASE_N < n ? BASE_N : (n + 15) / 16 * 16;
    const int32_t l0cCols = static_cast<int32_t>(l0c / 2 / (static_cast<uint64_t>((m + 15) / 16 * 16) * 4)) / 16 * 16;
    baseN = baseN < l0cCols ? baseN : l0cCols;
    if (baseN <= 0) {
        return false;
    }
    t.SetFixSplit(m, baseN, BASE_K);
    t.SetBufferSpace(static_cast<int32_t>(l1 / 2), static_cast<int32_t>(l0c / 2), -1);
    if (t.GetTiling(out) == -1) {
        return false;
    }
    KeepAInL1(out, static_cast<int64_t>(l1 / 2));
    return true;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* qShape = context->GetInputShape(0);
    const gert::StorageShape* kShape = context->GetInputShape(1);
    const gert::StorageShape* vShape = context->GetInputShape(2);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (qShape == nullptr || kShape == nullptr || vShape == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& q = qShape->GetStorageShape();
    const gert::Shape& k = kShape->GetStorageShape();
    const gert::Shape& v = vShape->GetStorageShape();
    if (q.GetDimNum() != 3 || k.GetDimNum() != 3 || v.GetDimNum() != 3 || k.GetDim(0) != q.GetDim(0) ||
        v.GetDim(0) != k.GetDim(0) || v.GetDim(1) != k.GetDim(1) || v.GetDim(2) != k.GetDim(2)) {
        return ge::GRAPH_FAILED;
    }
    const float* scalePtr = attrs->GetAttrPointer<float>(0);
    const int64_t* headPtr = attrs->GetAttrPointer<int64_t>(1);
    if (headPtr == nullptr || *headPtr <= 0) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t batch = static_cast<uint32_t>(q.GetDim(0));
    const uint32_t s1 = static_cast<uint32_t>(q.GetDim(1));
    const uint32_t hq = static_cast<uint32_t>(q.GetDim(2));
    const uint32_t s2 = static_cast<uint32_t>(k.GetDim(1));
    const uint32_t hkv = static_cast<uint32_t>(k.GetDim(2));
    const uint32_t heads = static_cast<uint32_t>(*headPtr);
    if (batch == 0 || s1 == 0 || s2 == 0 || hq == 0 || hq % heads != 0) {
        return ge::GRAPH_FAILED;
    }
    // The Matmul API copies rows of Q and K with a 16-bit row stride.
    if (hq > MAX_ROW_STRIDE || hkv > MAX_ROW_STRIDE) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t d = hq / heads;
    if (d > MAX_HEAD_DIM || hkv == 0 || hkv % d != 0 || heads % (hkv / d) != 0) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t dPad = RoundUp(d, 16);  // a row of 32-byte blocks in float and in half

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubBytes = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubBytes);
    const uint32_t aivCores = platform.GetCoreNumAic() * MIX_RATIO;

    // The UB of the kernel: per row the running output (dPad floats) and
    // the running max, sum and rescale (a 32-byte block each); beside
    // them two input work buffers, two half-size output buffers, a
    // half-size fold buffer, and per chunk row a broadcast block and a
    // float (a chunk is at most WORK_BYTES / 256 rows).
    const uint64_t fixed = 3ULL * WORK_BYTES + WORK_BYTES / 2 + RoundUp(WORK_BYTES / 256, 8) * (STAT_BYTES + 4);
    if (ubBytes <= fixed) {
        return ge::GRAPH_FAILED;
    }
    uint32_t rows = static_cast<uint32_t>((ubBytes - fixed) / (dPad * 4ULL + 3 * STAT_BYTES)) / 16 * 16;
    rows = rows < MAX_ROWS ? rows : MAX_ROWS;
    // Fewer rows when the tasks would leave vector cores idle.
    const uint32_t spread = RoundUp(CeilDiv(batch * heads * s1, aivCores), 16);
    const uint32_t floorRows = MIN_ROWS < rows ? MIN_ROWS : rows;
    if (spread < rows) {
        rows = spread > floorRows ? spread : floorRows;
    }
    rows = rows < RoundUp(s1, 16) ? rows : RoundUp(s1, 16);
    if (rows == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t cols = BLOCK_S2 < RoundUp(s2, 64) ? BLOCK_S2 : RoundUp(s2, 64);
    uint32_t chunkS = WORK_BYTES / (cols * 4);
    uint32_t chunkO = WORK_BYTES / (dPad * 4);
    chunkS = chunkS < rows ? chunkS : rows;
    chunkO = chunkO < rows ? chunkO : rows;
    chunkS = chunkS < 255 ? chunkS : 255;
    chunkO = chunkO < 255 ? chunkO : 255;
    if (chunkS == 0 || chunkO == 0) {
        return ge::GRAPH_FAILED;
    }

    FlashAttentionScoreWithLargeHeadDimTilingData tiling;
    if (!CubeTiling(platform, static_cast<int32_t>(rows), static_cast<int32_t>(cols), static_cast<int32_t>(d),
                    static_cast<int32_t>(cols), static_cast<int32_t>(hq), static_cast<int32_t>(hkv), true,
                    tiling.qkTiling) ||
        !CubeTiling(platform, static_cast<int32_t>(rows), static_cast<int32_t>(d), static_cast<int32_t>(cols),
                    static_cast<int32_t>(hkv), static_cast<int32_t>(cols), static_cast<int32_t>(cols), false,
                    tiling.pvTiling)) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t s1Blocks = CeilDiv(s1, rows);
    const uint32_t tasks = batch * heads * s1Blocks;
    const uint32_t usedAiv = tasks < aivCores ? tasks : aivCores;
    // Per vector core: S (rows x cols float), P (rows x cols half) and
    // P V (rows x D float), each 512-byte aligned.
    const uint32_t wsPerCore =
        RoundUp(rows * cols * 4, 512) + RoundUp(rows * cols * 2, 512) + RoundUp(rows * d * 4, 512);

    tiling.set_batch(batch);
    tiling.set_s1(s1);
    tiling.set_s2(s2);
    tiling.set_hq(hq);
    tiling.set_hkv(hkv);
    tiling.set_headNum(heads);
    tiling.set_groupSize(heads / (hkv / d));
    tiling.set_headDim(d);
    tiling.set_headDimPad(dPad);
    tiling.set_rows(rows);
    tiling.set_cols(cols);
    tiling.set_chunkS(chunkS);
    tiling.set_chunkO(chunkO);
    tiling.set_s1Blocks(s1Blocks);
    tiling.set_taskNum(tasks);
    tiling.set_workBytes(WORK_BYTES);
    tiling.set_wsPerCore(wsPerCore);
    tiling.set_scale(scalePtr != nullptr ? *scalePtr : 1.0f);

    context->SetBlockDim(CeilDiv(usedAiv, MIX_RATIO));
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = static_cast<size_t>(platform.GetLibApiWorkSpaceSize()) +
                    static_cast<size_t>(CeilDiv(usedAiv, MIX_RATIO)) * MIX_RATIO * wsPerCore;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* q = context->GetInputShape(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    gert::Shape* maxShape = context->GetOutputShape(0);
    gert::Shape* sumShape = context->GetOutputShape(1);
    gert::Shape* outShape = context->GetOutputShape(2);
    if (q == nullptr || attrs == nullptr || maxShape == nullptr || sumShape == nullptr || outShape == nullptr) {
        return GRAPH_FAILED;
    }
    const int64_t* headPtr = attrs->GetAttrPointer<int64_t>(1);
    if (headPtr == nullptr) {
        return GRAPH_FAILED;
    }
    *maxShape = {q->GetDim(0), *headPtr, q->GetDim(1), 8};
    *sumShape = {q->GetDim(0), *headPtr, q->GetDim(1), 8};
    *outShape = *q;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class FlashAttentionScoreWithLargeHeadDim : public OpDef {
public:
    explicit FlashAttentionScoreWithLargeHeadDim(const char* name) : OpDef(name)
    {
        this->Input("query").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("key").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("value").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("softmax_max").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("softmax_sum").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("attention_out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Attr("scale_value").AttrType(OPTIONAL).Float(1.0);
        this->Attr("head_num").Int();

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(FlashAttentionScoreWithLargeHeadDim);
}  // namespace ops
