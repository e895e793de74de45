// FlashAttentionScoreWithLargeHeadDim kernel: attention with the online
// (flash) softmax, the cube doing both matrix products through the
// high-level Matmul API and the vector cores the softmax.
//
// A MIX kernel (the Matmul API makes it AIC:AIV 1:2). Vector core
// GetBlockIdx() takes the tasks idx, idx + AIVs, ...; a task is `rows`
// query rows of one batch b and head n, whose KV head is n / groupSize.
// For each block of `cols` key rows (S2 in order, the last one a tail):
//   1. the cube: S = Q K^T (rows x cols, K = D; key read transposed in
//      place, row stride Hkv) into this core's workspace, float;
//   2. the vector core, `chunkS` rows at a time: S x scale, the rows' max
//      (a column fold of Max over 64-float blocks with repeat strides, then
//      WholeReduceMax), the new running max m' = max(m, rowmax), the
//      rescale alpha = exp(m - m'), P = exp(S - m') (Sub with the row's
//      broadcast block, then Exp), the row sums folded the same way into
//      l = l alpha + rowsum(P), and P as float16 into the workspace;
//   3. the cube: P V (rows x D, K = cols) into the workspace, float;
//   4. the vector core: O = O alpha + P V on the running output, which
//      stays in UB (rows x D float) for the whole task.
// At the end O / l goes out as float16 (row stride H), and the running
// max and sum as the softmax_max and softmax_sum rows (each value a
// 32-byte block of 8, the form the statistics are kept in throughout).
// While one vector core works on its softmax, the AI core's cube serves
// the other's matrix products.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace AscendC;

namespace {
using HalfType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, half>;
using FloatType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;
using MmType = matmul::Matmul<HalfType, HalfType, FloatType, FloatType>;

constexpr float LOWEST = -3.0e38f;  // the start of a running max and the value of padding scores
constexpr int32_t LANES = 64;       // floats per vector repeat
constexpr int32_t BLOCK = 8;        // floats per 32-byte block

__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }
__aicore__ inline uint32_t Up(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }
}  // namespace

class FlashAttentionLargeHeadDim {
public:
    __aicore__ inline FlashAttentionLargeHeadDim(MmType& qk, MmType& pv, TPipe& pipe,
                                                 const FlashAttentionScoreWithLargeHeadDimTilingData& t)
        : qk_(qk), pv_(pv), pipe_(pipe), t_(t)
    {
    }

    __aicore__ inline void Init(GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR softmaxMax,
                                GM_ADDR softmaxSum, GM_ADDR attentionOut, GM_ADDR workspace)
    {
        qGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(query));
        kGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(key));
        vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(value));
        maxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(softmaxMax));
        sumGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(softmaxSum));
        outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(attentionOut));
        const uint32_t rows = t_.rows;
        const uint32_t cols = t_.cols;
        GM_ADDR ws = GetUserWorkspace(workspace) + static_cast<uint64_t>(GetBlockIdx()) * t_.wsPerCore;
        sWs_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws));
        ws += Up(rows * cols * 4, 512);
        pWs_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(ws));
        ws += Up(rows * cols * 2, 512);
        pvWs_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws));

        const uint32_t chunk = Up(t_.chunkS > t_.chunkO ? t_.chunkS : t_.chunkO, BLOCK);
        pipe_.InitBuffer(oBuf_, rows * t_.headDimPad * 4);
        pipe_.InitBuffer(inQ_, 2, t_.workBytes);
        pipe_.InitBuffer(outQ_, 2, t_.workBytes / 2);
        pipe_.InitBuffer(foldBuf_, t_.workBytes / 2);
        pipe_.InitBuffer(mBuf_, rows * BLOCK * 4);
        pipe_.InitBuffer(lBuf_, rows * BLOCK * 4);
        pipe_.InitBuffer(aBuf_, rows * BLOCK * 4);
        pipe_.InitBuffer(tmpBuf_, chunk * BLOCK * 4);
        pipe_.InitBuffer(rowBuf_, chunk * 4);
        o_ = oBuf_.Get<float>();
        m_ = mBuf_.Get<float>();
        l_ = lBuf_.Get<float>();
        a_ = aBuf_.Get<float>();
        fold_ = foldBuf_.Get<float>();
        tmp_ = tmpBuf_.Get<float>();
        row_ = rowBuf_.Get<float>();
    }

    __aicore__ inline void Process()
    {
        const uint32_t aivs = static_cast<uint32_t>(GetBlockNum()) * 2;
        for (uint32_t task = static_cast<uint32_t>(GetBlockIdx()); task < t_.taskNum; task += aivs) {
            Task(task);
        }
    }

private:
    __aicore__ inline void Task(uint32_t task)
    {
        const uint32_t sb = task % t_.s1Blocks;
        const uint32_t bn = task / t_.s1Blocks;  // b * N + n
        const uint32_t n = bn % t_.headNum;
        const uint32_t b = bn / t_.headNum;
        const uint32_t g = n / t_.groupSize;
        const uint32_t s1Start = sb * t_.rows;
        const uint32_t rows = Min(t_.rows, t_.s1 - s1Start);
        const uint32_t d = t_.headDim;

        Duplicate(m_, LOWEST, static_cast<int32_t>(rows * BLOCK));
        Duplicate(l_, 0.0f, static_cast<int32_t>(rows * BLOCK));
        PipeBarrier<PIPE_V>();

        qk_.SetTensorA(qGm_[(static_cast<uint64_t>(b) * t_.s1 + s1Start) * t_.hq + n * d]);
        pv_.SetTensorA(pWs_);
        const uint32_t blocks = (t_.s2 + t_.cols - 1) / t_.cols;
        for (uint32_t j = 0; j < blocks; ++j) {
            const uint32_t c0 = j * t_.cols;
            const uint32_t cols = Min(t_.cols, t_.s2 - c0);
            const uint64_t kv = (static_cast<uint64_t>(b) * t_.s2 + c0) * t_.hkv + g * d;
            qk_.SetTensorB(kGm_[kv], true);
            qk_.SetSingleShape(static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(d));
            qk_.IterateAll(sWs_);
            Softmax(rows, cols);
            pv_.SetTensorB(vGm_[kv]);
            pv_.SetSingleShape(static_cast<int>(rows), static_cast<int>(d), static_cast<int>(cols));
            pv_.IterateAll(pvWs_, 0, true);
            UpdateOut(rows, j == 0);
        }
        Finish(rows, b, n, s1Start);
    }

    // Step 2 for one S2 block of `cols` valid columns.
    __aicore__ inline void Softmax(uint32_t rows, uint32_t cols)
    {
        const uint32_t colsW = Up(cols, LANES);
        const uint8_t rep = static_cast<uint8_t>(colsW / BLOCK);
        const uint32_t folds = colsW / LANES;
        for (uint32_t r0 = 0; r0 < rows; r0 += t_.chunkS) {
            const uint32_t hh = Min(t_.chunkS, rows - r0);
            const uint8_t hr = static_cast<uint8_t>(hh);
            LocalTensor<float> s = inQ_.AllocTensor<float>();
            DataCopyExtParams in(static_cast<uint16_t>(hh), cols * 4, (t_.cols - cols) * 4,
                                 (colsW - Up(cols, BLOCK)) / BLOCK, 0);
            DataCopyPad(s, sWs_[r0 * t_.cols], in, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
            inQ_.EnQue(s);
            s = inQ_.DeQue<float>();
            Muls(s, s, t_.scale, static_cast<int32_t>(hh * colsW));
            PipeBarrier<PIPE_V>();
            if (cols < colsW) {
                // The padding columns of the last 64-float block score the
                // lowest float: they add nothing to a row's sum.
                const uint64_t pad[2] = {~((1ULL << (cols % LANES)) - 1ULL), 0};
                Duplicate(s[colsW - LANES], LOWEST, pad, hr, 1, rep);
                PipeBarrier<PIPE_V>();
            }
            RowReduce(true, s, hh, colsW);
            // m' = max(m, rowmax); alpha = exp(m - m'); m = m'.
            LocalTensor<float> m = m_[r0 * BLOCK];
            LocalTensor<float> a = a_[r0 * BLOCK];
            const int32_t hb = static_cast<int32_t>(hh * BLOCK);
            Brcb(tmp_, row_, static_cast<uint8_t>((hh + BLOCK - 1) / BLOCK), BrcbRepeatParams(1, 8));
            PipeBarrier<PIPE_V>();
            Max(tmp_, tmp_, m, hb);
            PipeBarrier<PIPE_V>();
            Sub(a, m, tmp_, hb);
            PipeBarrier<PIPE_V>();
            Exp(a, a, hb);
            Adds(m, tmp_, 0.0f, hb);
            PipeBarrier<PIPE_V>();
            // P = exp(S - m'), block by block with the row's broadcast block.
            for (uint32_t f = 0; f < folds; ++f) {
                Sub(s[f * LANES], s[f * LANES], m, LANES, hr, BinaryRepeatParams(1, 1, 0, rep, rep, 1));
            }
            PipeBarrier<PIPE_V>();
            Exp(s, s, static_cast<int32_t>(hh * colsW));
            PipeBarrier<PIPE_V>();
            // l = l alpha + rowsum(P).
            RowReduce(false, s, hh, colsW);
            Brcb(tmp_, row_, static_cast<uint8_t>((hh + BLOCK - 1) / BLOCK), BrcbRepeatParams(1, 8));
            LocalTensor<float> l = l_[r0 * BLOCK];
            Mul(l, l, a, hb);
            PipeBarrier<PIPE_V>();
            Add(l, l, tmp_, hb);
            LocalTensor<half> p = outQ_.AllocTensor<half>();
            Cast(p, s, RoundMode::CAST_RINT, static_cast<int32_t>(hh * colsW));
            outQ_.EnQue(p);
            inQ_.FreeTensor(s);
            p = outQ_.DeQue<half>();
            DataCopyExtParams out(static_cast<uint16_t>(hh), cols * 2, (colsW * 2 - Up(cols * 2, 32)) / 32,
                                  (t_.cols - cols) * 2, 0);
            DataCopyPad(pWs_[r0 * t_.cols], p, out);
            outQ_.FreeTensor(p);
        }
    }

    // The row maxima (max) or sums of `hh` rows of `colsW` floats into
    // row_: the 64-float blocks folded into one per row with repeat
    // strides, then one whole reduction per row.
    __aicore__ inline void RowReduce(bool max, const LocalTensor<float>& s, uint32_t hh, uint32_t colsW)
    {
        const uint8_t hr = static_cast<uint8_t>(hh);
        const uint8_t rep = static_cast<uint8_t>(colsW / BLOCK);
        const uint32_t folds = colsW / LANES;
        LocalTensor<float> src = s;
        uint8_t srcRep = rep;
        if (folds > 1) {
            const BinaryRepeatParams first(1, 1, 1, 8, rep, rep);
            if (max) {
                Max(fold_, s, s[LANES], LANES, hr, first);
            } else {
                Add(fold_, s, s[LANES], LANES, hr, first);
            }
            const BinaryRepeatParams next(1, 1, 1, 8, 8, rep);
            for (uint32_t f = 2; f < folds; ++f) {
                PipeBarrier<PIPE_V>();
                if (max) {
                    Max(fold_, fold_, s[f * LANES], LANES, hr, next);
                } else {
                    Add(fold_, fold_, s[f * LANES], LANES, hr, next);
                }
            }
            PipeBarrier<PIPE_V>();
            src = fold_;
            srcRep = 8;
        }
        if (max) {
            WholeReduceMax(row_, src, LANES, static_cast<int32_t>(hh), 1, 1, srcRep, ReduceOrder::ORDER_ONLY_VALUE);
        } else {
            WholeReduceSum(row_, src, LANES, static_cast<int32_t>(hh), 1, 1, srcRep);
        }
        PipeBarrier<PIPE_V>();
    }

    // Step 4: O = P V on the first block, else O = O alpha + P V.
    __aicore__ inline void UpdateOut(uint32_t rows, bool first)
    {
        const uint32_t d = t_.headDim;
        const uint32_t dp = t_.headDimPad;
        for (uint32_t r0 = 0; r0 < rows; r0 += t_.chunkO) {
            const uint32_t hh = Min(t_.chunkO, rows - r0);
            LocalTensor<float> pv = inQ_.AllocTensor<float>();
            DataCopyExtParams in(static_cast<uint16_t>(hh), d * 4, 0, (dp - Up(d, BLOCK)) / BLOCK, 0);
            DataCopyPad(pv, pvWs_[r0 * d], in, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
            inQ_.EnQue(pv);
            pv = inQ_.DeQue<float>();
            LocalTensor<float> o = o_[r0 * dp];
            if (first) {
                Adds(o, pv, 0.0f, static_cast<int32_t>(hh * dp));
            } else {
                ScaleRows(false, o, a_[r0 * BLOCK], hh);
                PipeBarrier<PIPE_V>();
                Add(o, o, pv, static_cast<int32_t>(hh * dp));
            }
            PipeBarrier<PIPE_V>();
            inQ_.FreeTensor(pv);
        }
    }

    // o (hh rows of headDimPad floats) times (or divided by) each row's
    // broadcast block of `by`.
    __aicore__ inline void ScaleRows(bool div, const LocalTensor<float>& o, const LocalTensor<float>& by, uint32_t hh)
    {
        const uint32_t dp = t_.headDimPad;
        const uint8_t rep = static_cast<uint8_t>(dp / BLOCK);
        const BinaryRepeatParams rp(1, 1, 0, rep, rep, 1);
        for (uint32_t c = 0; c < dp; c += LANES) {
            const uint64_t lanes = Min(LANES, dp - c);
            if (div) {
                Div(o[c], o[c], by, lanes, static_cast<uint8_t>(hh), rp);
            } else {
                Mul(o[c], o[c], by, lanes, static_cast<uint8_t>(hh), rp);
            }
        }
    }

    // O / l as float16 into attention_out, and the statistics.
    __aicore__ inline void Finish(uint32_t rows, uint32_t b, uint32_t n, uint32_t s1Start)
    {
        const uint32_t d = t_.headDim;
        const uint32_t dp = t_.headDimPad;
        for (uint32_t r0 = 0; r0 < rows; r0 += t_.chunkO) {
            const uint32_t hh = Min(t_.chunkO, rows - r0);
            LocalTensor<float> o = o_[r0 * dp];
            ScaleRows(true, o, l_[r0 * BLOCK], hh);
            PipeBarrier<PIPE_V>();
            LocalTensor<half> y = outQ_.AllocTensor<half>();
            Cast(y, o, RoundMode::CAST_RINT, static_cast<int32_t>(hh * dp));
            outQ_.EnQue(y);
            y = outQ_.DeQue<half>();
            DataCopyExtParams out(static_cast<uint16_t>(hh), d * 2, (dp * 2 - Up(d * 2, 32)) / 32,
                                  (t_.hq - d) * 2, 0);
            DataCopyPad(outGm_[(static_cast<uint64_t>(b) * t_.s1 + s1Start + r0) * t_.hq + n * d], y, out);
            outQ_.FreeTensor(y);
        }
        Sync<HardEvent::V_MTE3>();
        const uint64_t stat = ((static_cast<uint64_t>(b) * t_.headNum + n) * t_.s1 + s1Start) * BLOCK;
        DataCopy(maxGm_[stat], m_, rows * BLOCK);
        DataCopy(sumGm_[stat], l_, rows * BLOCK);
        // The next task resets the statistics once they are out.
        Sync<HardEvent::MTE3_V>();
    }

    // Orders pipe E's producer before its consumer, here and now.
    template <HardEvent E>
    __aicore__ inline void Sync()
    {
        const TEventID id = pipe_.FetchEventID(E);
        SetFlag<E>(id);
        WaitFlag<E>(id);
    }

    MmType& qk_;
    MmType& pv_;
    TPipe& pipe_;
    const FlashAttentionScoreWithLargeHeadDimTilingData& t_;
    GlobalTensor<half> qGm_, kGm_, vGm_, outGm_, pWs_;
    GlobalTensor<float> maxGm_, sumGm_, sWs_, pvWs_;
    TBuf<TPosition::VECCALC> oBuf_, foldBuf_, mBuf_, lBuf_, aBuf_, tmpBuf_, rowBuf_;
    TQue<TPosition::VECIN, 2> inQ_;
    TQue<TPosition::VECOUT, 2> outQ_;
    LocalTensor<float> o_, m_, l_, a_, fold_, tmp_, row_;
};

extern "C" __global__ __aicore__ void flash_attention_score_with_large_head_dim(
    GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR softmaxMax, GM_ADDR softmaxSum, GM_ADDR attentionOut,
    GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    TPipe pipe;
    MmType qk;
    MmType pv;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), qk, &tilingData.qkTiling, pv, &tilingData.pvTiling);
    FlashAttentionLargeHeadDim op(qk, pv, pipe, tilingData);
    op.Init(query, key, value, softmaxMax, softmaxSum, attentionOut, workspace);
    op.Process();
}
