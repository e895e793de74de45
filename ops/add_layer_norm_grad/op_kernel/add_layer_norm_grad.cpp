// AddLayerNormGrad kernel: backward of LayerNorm(x1 + x2) over rows of D =
// cols elements (see op_host/add_layer_norm_grad_tiling.h), in float32:
//   x̂ = (x1 + x2 - mean) * rstd,  g = dy * gamma
//   dx = rstd * g - x̂ * (rstd * mean(g x̂)) - rstd * mean(g) + dsum
//   dgamma = Σ_rows dy * x̂,  dbeta = Σ_rows dy
// Per-row values (mean, rstd, the two row means) are spread to one 32 B
// block per row by Brcb and applied by Sub/Mul reading that block with
// stride 0; row sums fold every row onto 64 lanes (strided Adds) and two
// BlockReduceSum finish them (rows longer than 2040 floats go one by one).
// The column sums of dgamma/dbeta accumulate in UB across all tiles of a
// core with one Add per 64-lane column chunk whose destination and second
// source repeat stride is 0 (the guide's accumulation form); at the end
// every core writes its two sums to the workspace, SyncAll, and core k adds
// the rows of the workspace for its slice of columns.
// Rows are split over the vector cores (balanced to one row) and streamed
// through UB with double-buffered queues; dy, x1, x2, dsum, mean and rstd
// of a tile share one input slot (one DMA completion wait per tile).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t REPEAT_FLOATS = 64;  // floats per 256 B vector repeat
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint32_t GROUP_ROWS = 248;    // rows per repeat-form instruction: <= 255, multiple of 8

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

__aicore__ inline uint32_t AlignUp(uint32_t value, uint32_t align)
{
    return (value + align - 1) / align * align;
}

__aicore__ inline uint32_t MinU32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

// dst = c / src, with c one 256 B block of a constant read with repeat
// stride 0 (a Div, as the device's Reciprocal is not accurate enough).
__aicore__ inline void DivFromConst(const LocalTensor<float>& dst, const LocalTensor<float>& consts,
                                   const LocalTensor<float>& src, uint32_t count)
{
    uint32_t repeats = count / REPEAT_FLOATS;
    for (uint32_t r = 0; r < repeats; r += MAX_REPEAT) {
        uint32_t n = MinU32(repeats - r, MAX_REPEAT);
        Div(dst[r * REPEAT_FLOATS], consts, src[r * REPEAT_FLOATS], static_cast<uint64_t>(REPEAT_FLOATS),
            static_cast<uint8_t>(n), BinaryRepeatParams(1, 1, 1, 8, 0, 8));
    }
    uint32_t tail = count - repeats * REPEAT_FLOATS;
    if (tail > 0) {
        Div(dst[repeats * REPEAT_FLOATS], consts, src[repeats * REPEAT_FLOATS], static_cast<uint64_t>(tail), 1,
            BinaryRepeatParams(1, 1, 1, 8, 0, 8));
    }
}

template <typename T, bool DSUM>
class KernelAddLayerNormGrad {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;
    static constexpr uint32_t IN_NUM = DSUM ? 4 : 3;  // dy, x1, x2 (, dsum)

public:
    __aicore__ inline KernelAddLayerNormGrad() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR dy, GM_ADDR x1, GM_ADDR x2, GM_ADDR rstd, GM_ADDR mean, GM_ADDR gamma,
                                GM_ADDR dsum, GM_ADDR dx, GM_ADDR dgamma, GM_ADDR dbeta, GM_ADDR workspace,
                                const TilingData& tiling, TPipe* pipe)
    {
        cols = tiling.cols;
        rowStride = tiling.rowStride;
        tileRows = tiling.tileRows;
        coreNum = tiling.coreNum;
        finalCols = tiling.finalCols;
        batched = tiling.batched != 0;
        invCols = tiling.invCols;

        blockIdx = static_cast<uint32_t>(GetBlockIdx());
        uint64_t rowStart;
        if (blockIdx < tiling.tailCoreNum) {
            rowStart = static_cast<uint64_t>(blockIdx) * (tiling.blockRows + 1);
            rowCount = tiling.blockRows + 1;
        } else {
            rowStart = static_cast<uint64_t>(tiling.tailCoreNum) * (tiling.blockRows + 1) +
                       static_cast<uint64_t>(blockIdx - tiling.tailCoreNum) * tiling.blockRows;
            rowCount = tiling.blockRows;
        }
        if (rowStart >= tiling.rows) {
            rowCount = 0;
        } else if (rowStart + rowCount > tiling.rows) {
            rowCount = static_cast<uint32_t>(tiling.rows - rowStart);
        }
        uint64_t base = rowStart * cols;
        uint64_t len = static_cast<uint64_t>(rowCount) * cols;
        dyGm.SetGlobalBuffer((__gm__ T*)dy + base, len);
        x1Gm.SetGlobalBuffer((__gm__ T*)x1 + base, len);
        x2Gm.SetGlobalBuffer((__gm__ T*)x2 + base, len);
        dsumGm.SetGlobalBuffer((__gm__ T*)dsum + base, DSUM ? len : 0);
        dxGm.SetGlobalBuffer((__gm__ T*)dx + base, len);
        rstdGm.SetGlobalBuffer((__gm__ float*)rstd + rowStart, rowCount);
        meanGm.SetGlobalBuffer((__gm__ float*)mean + rowStart, rowCount);
        dgammaGm.SetGlobalBuffer((__gm__ float*)dgamma, cols);
        dbetaGm.SetGlobalBuffer((__gm__ float*)dbeta, cols);
        wsGm.SetGlobalBuffer((__gm__ float*)workspace, static_cast<uint64_t>(coreNum) * 2 * rowStride);

        tileElems = tileRows * rowStride;
        rowsUp = AlignUp(tileRows, FLOAT_PER_BLOCK);
        // Rows of whole 512-lane multiples (no padding lanes) reduce with
        // WholeReduceSum (RowReduce); up to 255 chunk results per call.
        if (cols == rowStride && cols % (FLOAT_PER_BLOCK * REPEAT_FLOATS) == 0 &&
            cols <= REPEAT_FLOATS * REPEAT_FLOATS) {
            wholeRows = MAX_REPEAT / (cols / REPEAT_FLOATS);
        }
        uint32_t bufferNum = tiling.bufferNum;
        pipe->InitBuffer(inQueue, bufferNum, IN_NUM * tileElems * sizeof(T) + 2 * rowsUp * sizeof(float));
        pipe->InitBuffer(outQueue, bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(workBuf0, tileElems * sizeof(float));
        pipe->InitBuffer(workBuf1, tileElems * sizeof(float));
        pipe->InitBuffer(workBuf2, tileElems * sizeof(float));
        pipe->InitBuffer(gammaTileBuf, tileElems * sizeof(float));
        pipe->InitBuffer(dgammaBuf, rowStride * sizeof(float));
        pipe->InitBuffer(dbetaBuf, rowStride * sizeof(float));
        pipe->InitBuffer(stageQueue, 1, rowStride * sizeof(T));
        pipe->InitBuffer(onesBuf, REPEAT_FLOATS * sizeof(float));
        pipe->InitBuffer(sumGBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(sumGxBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(brcbBuf, rowsUp * BLOCK_BYTES);
        if (batched) {
            pipe->InitBuffer(partBuf, rowsUp * BLOCK_BYTES);
        } else {
            pipe->InitBuffer(partBuf, tileRows * REPEAT_FLOATS * sizeof(float) + rowsUp * BLOCK_BYTES);
        }
        pipe->InitBuffer(finalBuf, 2 * coreNum * finalCols * sizeof(float));
        Duplicate(onesBuf.Get<float>(), 1.0f, REPEAT_FLOATS);
        Duplicate(dgammaBuf.Get<float>(), 0.0f, rowStride);
        Duplicate(dbetaBuf.Get<float>(), 0.0f, rowStride);

        // gamma as a float tile of tileRows identical rows.
        GlobalTensor<T> gammaGm;
        gammaGm.SetGlobalBuffer((__gm__ T*)gamma, cols);
        LocalTensor<T> stage = stageQueue.AllocTensor<T>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
        DataCopyPad(stage, gammaGm, copyParams, padParams);
        stageQueue.EnQue(stage);
        stage = stageQueue.DeQue<T>();
        LocalTensor<float> tile = gammaTileBuf.Get<float>();
        if constexpr (IS_FLOAT) {
            Muls(tile, stage, 1.0f, rowStride);
        } else {
            Cast(tile, stage, RoundMode::CAST_NONE, rowStride);
        }
        stageQueue.FreeTensor(stage);
        for (uint32_t k = 1; k < tileRows; k *= 2) {
            uint32_t n = MinU32(k, tileRows - k);
            Muls(tile[k * rowStride], tile, 1.0f, n * rowStride);
        }
    }

    __aicore__ inline void Process()
    {
        // The load of tile i + 1 is issued before the compute of tile i, so
        // that it does not wait behind the compute's vector instructions in
        // the issue queue.
        uint32_t tileNum = (rowCount + tileRows - 1) / tileRows;
        if (tileNum > 0) {
            CopyIn(0, MinU32(rowCount, tileRows));
        }
        for (uint32_t i = 0; i < tileNum; i++) {
            uint64_t row = static_cast<uint64_t>(i) * tileRows;
            uint32_t n = MinU32(rowCount - i * tileRows, tileRows);
            if (i + 1 < tileNum) {
                CopyIn(row + tileRows, MinU32(rowCount - (i + 1) * tileRows, tileRows));
            }
            Compute(n);
            CopyOut(row, n);
        }
        ReduceColumns();
    }

private:
    __aicore__ inline void CopyRowsIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t n)
    {
        if (cols == rowStride) {
            DataCopy(dst, src, n * cols);
        } else {
            uint32_t rowBytes = cols * sizeof(T);
            uint32_t gap = (rowStride * sizeof(T) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(n), rowBytes, 0, gap, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(dst, src, copyParams, padParams);
        }
    }

    __aicore__ inline void CopyFloatsIn(const LocalTensor<float>& dst, const GlobalTensor<float>& src, uint32_t n)
    {
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> padParams{false, 0, 0, 0};
        DataCopyPad(dst, src, copyParams, padParams);
    }

    // Views of the input slot.
    __aicore__ inline LocalTensor<T> InView(const LocalTensor<uint8_t>& in, uint32_t k)
    {
        return in[k * tileElems * sizeof(T)].template ReinterpretCast<T>();
    }

    __aicore__ inline LocalTensor<float> RowView(const LocalTensor<uint8_t>& in, uint32_t k)
    {
        return in[IN_NUM * tileElems * sizeof(T) + k * rowsUp * sizeof(float)].template ReinterpretCast<float>();
    }

    __aicore__ inline void CopyIn(uint64_t row, uint32_t n)
    {
        LocalTensor<uint8_t> in = inQueue.AllocTensor<uint8_t>();
        CopyRowsIn(InView(in, 0), dyGm[row * cols], n);
        CopyRowsIn(InView(in, 1), x1Gm[row * cols], n);
        CopyRowsIn(InView(in, 2), x2Gm[row * cols], n);
        if constexpr (DSUM) {
            CopyRowsIn(InView(in, 3), dsumGm[row * cols], n);
        }
        CopyFloatsIn(RowView(in, 0), meanGm[row], n);
        CopyFloatsIn(RowView(in, 1), rstdGm[row], n);
        inQueue.EnQue(in);
    }

    __aicore__ inline void CopyOut(uint64_t row, uint32_t n)
    {
        LocalTensor<T> dxLocal = outQueue.DeQue<T>();
        if (cols == rowStride) {
            DataCopy(dxGm[row * cols], dxLocal, n * cols);
        } else {
            uint32_t rowBytes = cols * sizeof(T);
            uint32_t gap = (rowStride * sizeof(T) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(n), rowBytes, gap, 0, 0};
            DataCopyPad(dxGm[row * cols], dxLocal, copyParams);
        }
        outQueue.FreeTensor(dxLocal);
    }

    // dst = src as float.
    __aicore__ inline void ToFloat(const LocalTensor<float>& dst, const LocalTensor<T>& src, uint32_t count)
    {
        if constexpr (IS_FLOAT) {
            Muls(dst, src, 1.0f, count);
        } else {
            Cast(dst, src, RoundMode::CAST_NONE, count);
        }
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        uint32_t count = n * rowStride;
        LocalTensor<uint8_t> in = inQueue.DeQue<uint8_t>();
        LocalTensor<T> dxLocal = outQueue.AllocTensor<T>();
        LocalTensor<float> xh = workBuf0.Get<float>();
        LocalTensor<float> g = workBuf1.Get<float>();
        LocalTensor<float> t = workBuf2.Get<float>();
        LocalTensor<float> mean = RowView(in, 0);
        LocalTensor<float> rstd = RowView(in, 1);
        LocalTensor<float> sumG = sumGBuf.Get<float>();
        LocalTensor<float> sumGx = sumGxBuf.Get<float>();

        // x̂ = (x1 + x2 - mean) * rstd
        ToFloat(xh, InView(in, 1), count);
        ToFloat(t, InView(in, 2), count);
        Add(xh, xh, t, count);
        RowApply<false>(xh, xh, mean, n);
        RowApply<true>(xh, xh, rstd, n);

        // dbeta += dy, dgamma += dy * x̂, g = dy * gamma
        ToFloat(g, InView(in, 0), count);
        AccumulateColumns(dbetaBuf.Get<float>(), g, n);
        Mul(t, g, xh, count);
        AccumulateColumns(dgammaBuf.Get<float>(), t, n);
        Mul(g, g, gammaTileBuf.Get<float>(), count);

        // Row means of g * x̂ and g, times rstd.
        Mul(t, g, xh, count);
        RowReduce<false>(sumGx, t, n);
        Muls(t, g, 1.0f, count);
        RowReduce<false>(sumG, t, n);
        Mul(sumGx, sumGx, rstd, n);
        Muls(sumGx, sumGx, invCols, n);
        Mul(sumG, sumG, rstd, n);
        Muls(sumG, sumG, invCols, n);

        // dx = g * rstd - x̂ * (rstd mean(g x̂)) - rstd mean(g) (+ dsum)
        RowApply<true>(g, g, rstd, n);
        RowApply<true>(t, xh, sumGx, n);
        Sub(g, g, t, count);
        RowApply<false>(g, g, sumG, n);
        if constexpr (DSUM) {
            ToFloat(t, InView(in, 3), count);
            Add(g, g, t, count);
        }
        inQueue.FreeTensor(in);
        if constexpr (IS_FLOAT) {
            Muls(dxLocal, g, 1.0f, count);
        } else {
            Cast(dxLocal, g, RoundMode::CAST_RINT, count);
        }
        outQueue.EnQue<T>(dxLocal);
    }

    // acc[c] += Σ_r src[r][c] over the first cols columns.
    __aicore__ inline void AccumulateColumns(const LocalTensor<float>& acc, const LocalTensor<float>& src, uint32_t n)
    {
        if (batched) {
            // Repeat r adds row r into acc: destination and second source
            // repeat stride 0 (accumulation form of Add).
            uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < n; r0 += MAX_REPEAT) {
                uint32_t rows = MinU32(n - r0, MAX_REPEAT);
                for (uint32_t c = 0; c < cols; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(cols - c, REPEAT_FLOATS);
                    Add(acc[c], src[r0 * rowStride + c], acc[c], static_cast<uint64_t>(lanes),
                        static_cast<uint8_t>(rows), BinaryRepeatParams(1, 1, 1, 0, repStride, 0));
                }
            }
        } else {
            for (uint32_t r = 0; r < n; r++) {
                Add(acc, acc, src[r * rowStride], cols);
            }
        }
    }

    // Column sums of every core meet in the workspace; core k adds them up
    // for columns [k * finalCols, (k + 1) * finalCols).
    __aicore__ inline void ReduceColumns()
    {
        int32_t vMte3 = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE3));
        int32_t mte2V = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::MTE2_V));
        uint64_t wsRow = static_cast<uint64_t>(blockIdx) * 2 * rowStride;
        SetFlag<HardEvent::V_MTE3>(vMte3);
        WaitFlag<HardEvent::V_MTE3>(vMte3);
        DataCopy(wsGm[wsRow], dgammaBuf.Get<float>(), rowStride);
        DataCopy(wsGm[wsRow + rowStride], dbetaBuf.Get<float>(), rowStride);
        SyncAll();

        uint32_t c0 = blockIdx * finalCols;
        if (c0 >= cols) {
            return;
        }
        uint32_t span = MinU32(finalCols, rowStride - c0);  // whole blocks inside a workspace row
        uint32_t outLen = MinU32(finalCols, cols - c0);
        LocalTensor<float> fin = finalBuf.Get<float>();
        LocalTensor<float> finBeta = fin[coreNum * finalCols];
        DataCopyExtParams copyParams{static_cast<uint16_t>(coreNum), static_cast<uint32_t>(span * sizeof(float)),
                                     static_cast<uint32_t>((2 * rowStride - span) * sizeof(float)), 0, 0};
        DataCopyPadExtParams<float> padParams{false, 0, 0, 0};
        DataCopyPad(fin, wsGm[c0], copyParams, padParams);
        DataCopyPad(finBeta, wsGm[rowStride + c0], copyParams, padParams);
        SetFlag<HardEvent::MTE2_V>(mte2V);
        WaitFlag<HardEvent::MTE2_V>(mte2V);
        for (uint32_t k = 1; k < coreNum; k++) {
            Add(fin, fin, fin[k * span], span);
            Add(finBeta, finBeta, finBeta[k * span], span);
        }
        SetFlag<HardEvent::V_MTE3>(vMte3);
        WaitFlag<HardEvent::V_MTE3>(vMte3);
        DataCopyExtParams outParams{1, static_cast<uint32_t>(outLen * sizeof(float)), 0, 0, 0};
        DataCopyPad(dgammaGm[c0], fin, outParams);
        DataCopyPad(dbetaGm[c0], finBeta, outParams);
    }

    // dst[r] = sum (MAX = false) or max (MAX = true, a >= 0) of the first
    // cols lanes of row r of a (a is clobbered).
    template <bool MAX>
    __aicore__ inline void RowReduce(const LocalTensor<float>& dst, const LocalTensor<float>& a, uint32_t nRows)
    {
        LocalTensor<float> part = partBuf.Get<float>();
        if constexpr (!MAX) {
            if (!batched && wholeRows > 0) {
                // Whole 64-lane chunks: one WholeReduceSum gives every
                // chunk's sum of wholeRows rows, a second one adds each row's
                // chunk sums (two instructions per tile instead of a halving
                // tree per row).
                uint32_t chunks = cols / REPEAT_FLOATS;
                for (uint32_t r0 = 0; r0 < nRows; r0 += wholeRows) {
                    uint32_t g = MinU32(nRows - r0, wholeRows);
                    WholeReduceSum(part[r0 * chunks], a[r0 * rowStride], static_cast<int32_t>(REPEAT_FLOATS),
                                   static_cast<int32_t>(g * chunks), 1, 1, 8);
                }
                WholeReduceSum(dst, part, static_cast<int32_t>(chunks), static_cast<int32_t>(nRows), 1, 1,
                               static_cast<int32_t>(chunks / FLOAT_PER_BLOCK));
                return;
            }
        }
        uint32_t firstLanes = MinU32(cols, REPEAT_FLOATS);
        LocalTensor<float> part8 = part;
        if (batched) {
            if (cols < REPEAT_FLOATS) {
                Duplicate(part, 0.0f, rowsUp * FLOAT_PER_BLOCK);  // neutral for sums and for max of |s|
            }
            uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * rowStride;
                for (uint32_t c = REPEAT_FLOATS; c < cols; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(cols - c, REPEAT_FLOATS);
                    BinaryRepeatParams params(1, 1, 1, repStride, repStride, repStride);
                    if constexpr (MAX) {
                        Max(a[base], a[base], a[base + c], static_cast<uint64_t>(lanes),
                            static_cast<uint8_t>(groupRows), params);
                    } else {
                        Add(a[base], a[base], a[base + c], static_cast<uint64_t>(lanes),
                            static_cast<uint8_t>(groupRows), params);
                    }
                }
                BlockReduce<MAX>(part[r0 * FLOAT_PER_BLOCK], a[base], groupRows, firstLanes, repStride);
            }
        } else {
            Duplicate(part, 0.0f, nRows * REPEAT_FLOATS);
            for (uint32_t r = 0; r < nRows; r++) {
                LocalTensor<float> rowA = a[r * rowStride];
                uint32_t len = cols;
                while (len > REPEAT_FLOATS) {
                    uint32_t halfLen = AlignUp((len + 1) / 2, FLOAT_PER_BLOCK);
                    if constexpr (MAX) {
                        Max(rowA, rowA, rowA[halfLen], len - halfLen);
                    } else {
                        Add(rowA, rowA, rowA[halfLen], len - halfLen);
                    }
                    len = halfLen;
                }
                Adds(part[r * REPEAT_FLOATS], rowA, 0.0f, len);
            }
            part8 = part[tileRows * REPEAT_FLOATS];
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t n = MinU32(nRows - r0, GROUP_ROWS);
                BlockReduce<MAX>(part8[r0 * FLOAT_PER_BLOCK], part[r0 * REPEAT_FLOATS], n, REPEAT_FLOATS, 8);
            }
        }
        // 8 lanes -> 1 per row.
        uint32_t blocks = (nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK;
        for (uint32_t b0 = 0; b0 < blocks; b0 += GROUP_ROWS) {
            uint32_t n = MinU32(blocks - b0, GROUP_ROWS);
            BlockReduce<MAX>(dst[b0 * FLOAT_PER_BLOCK], part8[b0 * REPEAT_FLOATS], n, REPEAT_FLOATS, 8);
        }
    }

    template <bool MAX>
    __aicore__ inline void BlockReduce(const LocalTensor<float>& dst, const LocalTensor<float>& src, uint32_t repeat,
                                       uint32_t lanes, uint32_t srcRepStride)
    {
        if constexpr (MAX) {
            BlockReduceMax(dst, src, static_cast<int32_t>(repeat), static_cast<int32_t>(lanes), 1, 1,
                           static_cast<int32_t>(srcRepStride));
        } else {
            BlockReduceSum(dst, src, static_cast<int32_t>(repeat), static_cast<int32_t>(lanes), 1, 1,
                           static_cast<int32_t>(srcRepStride));
        }
    }

    // dst row r = src row r - v[r] (MUL = false) or src row r * v[r] (MUL =
    // true): v[r] in one 32 B block per row (Brcb), read with block
    // stride 0.
    template <bool MUL>
    __aicore__ inline void RowApply(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                    const LocalTensor<float>& v, uint32_t nRows)
    {
        LocalTensor<float> blocks = brcbBuf.Get<float>();
        if (batched) {
            uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * rowStride;
                Brcb(blocks, v[r0], static_cast<uint8_t>((groupRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                     BrcbRepeatParams{1, 8});
                for (uint32_t c = 0; c < cols; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(cols - c, REPEAT_FLOATS);
                    BinaryRepeatParams params(1, 1, 0, repStride, repStride, 1);
                    if constexpr (MUL) {
                        Mul(dst[base + c], src[base + c], blocks, static_cast<uint64_t>(lanes),
                            static_cast<uint8_t>(groupRows), params);
                    } else {
                        Sub(dst[base + c], src[base + c], blocks, static_cast<uint64_t>(lanes),
                            static_cast<uint8_t>(groupRows), params);
                    }
                }
            }
        } else {
            Brcb(blocks, v, static_cast<uint8_t>((nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                 BrcbRepeatParams{1, 8});
            uint32_t repeats = cols / REPEAT_FLOATS;  // whole repeats, then the tail lanes
            uint32_t tail = cols - repeats * REPEAT_FLOATS;
            for (uint32_t r = 0; r < nRows; r++) {
                for (uint32_t k = 0; k < repeats; k += MAX_REPEAT) {
                    uint32_t m = MinU32(repeats - k, MAX_REPEAT);
                    uint32_t off = r * rowStride + k * REPEAT_FLOATS;
                    BinaryRepeatParams params(1, 1, 0, 8, 8, 0);
                    if constexpr (MUL) {
                        Mul(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(REPEAT_FLOATS),
                            static_cast<uint8_t>(m), params);
                    } else {
                        Sub(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(REPEAT_FLOATS),
                            static_cast<uint8_t>(m), params);
                    }
                }
                if (tail > 0) {
                    uint32_t off = r * rowStride + repeats * REPEAT_FLOATS;
                    BinaryRepeatParams params(1, 1, 0, 8, 8, 0);
                    if constexpr (MUL) {
                        Mul(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(tail),
                            1, params);
                    } else {
                        Sub(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(tail),
                            1, params);
                    }
                }
            }
        }
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECIN, 1> stageQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> workBuf0;
    TBuf<TPosition::VECCALC> workBuf1;
    TBuf<TPosition::VECCALC> workBuf2;
    TBuf<TPosition::VECCALC> gammaTileBuf;
    TBuf<TPosition::VECCALC> dgammaBuf;
    TBuf<TPosition::VECCALC> dbetaBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> sumGBuf;
    TBuf<TPosition::VECCALC> sumGxBuf;
    TBuf<TPosition::VECCALC> brcbBuf;
    TBuf<TPosition::VECCALC> partBuf;
    TBuf<TPosition::VECCALC> finalBuf;
    GlobalTensor<T> dyGm;
    GlobalTensor<T> x1Gm;
    GlobalTensor<T> x2Gm;
    GlobalTensor<T> dsumGm;
    GlobalTensor<T> dxGm;
    GlobalTensor<float> rstdGm;
    GlobalTensor<float> meanGm;
    GlobalTensor<float> dgammaGm;
    GlobalTensor<float> dbetaGm;
    GlobalTensor<float> wsGm;
    uint32_t blockIdx = 0;
    uint32_t rowCount = 0;
    uint32_t cols = 0;
    uint32_t rowStride = 0;
    uint32_t tileRows = 0;
    uint32_t tileElems = 0;
    uint32_t rowsUp = 0;
    uint32_t coreNum = 1;
    uint32_t finalCols = 0;
    bool batched = true;
    uint32_t wholeRows = 0;
    float invCols = 0.0f;
};

template <typename T, bool DSUM, typename TilingData>
__aicore__ inline void RunAddLayerNormGrad(GM_ADDR dy, GM_ADDR x1, GM_ADDR x2, GM_ADDR rstd, GM_ADDR mean,
                                           GM_ADDR gamma, GM_ADDR dsum, GM_ADDR dx, GM_ADDR dgamma, GM_ADDR dbeta,
                                           GM_ADDR workspace, const TilingData& tiling, TPipe* pipe)
{
    KernelAddLayerNormGrad<T, DSUM> op;
    op.Init(dy, x1, x2, rstd, mean, gamma, dsum, dx, dgamma, dbeta, workspace, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void add_layer_norm_grad(GM_ADDR dy, GM_ADDR x1, GM_ADDR x2, GM_ADDR rstd,
                                                          GM_ADDR mean, GM_ADDR gamma, GM_ADDR dsum, GM_ADDR dx,
                                                          GM_ADDR dgamma, GM_ADDR dbeta, GM_ADDR workspace,
                                                          GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(10)) {
        RunAddLayerNormGrad<half, false>(dy, x1, x2, rstd, mean, gamma, dsum, dx, dgamma, dbeta, workspace,
                                         tilingData, &pipe);
    } else if (TILING_KEY_IS(11)) {
        RunAddLayerNormGrad<half, true>(dy, x1, x2, rstd, mean, gamma, dsum, dx, dgamma, dbeta, workspace,
                                        tilingData, &pipe);
    } else if (TILING_KEY_IS(20)) {
        RunAddLayerNormGrad<float, false>(dy, x1, x2, rstd, mean, gamma, dsum, dx, dgamma, dbeta, workspace,
                                          tilingData, &pipe);
    } else if (TILING_KEY_IS(21)) {
        RunAddLayerNormGrad<float, true>(dy, x1, x2, rstd, mean, gamma, dsum, dx, dgamma, dbeta, workspace,
                                         tilingData, &pipe);
    } else if (TILING_KEY_IS(30)) {
        RunAddLayerNormGrad<bfloat16_t, false>(dy, x1, x2, rstd, mean, gamma, dsum, dx, dgamma, dbeta, workspace,
                                               tilingData, &pipe);
    } else if (TILING_KEY_IS(31)) {
        RunAddLayerNormGrad<bfloat16_t, true>(dy, x1, x2, rstd, mean, gamma, dsum, dx, dgamma, dbeta, workspace,
                                              tilingData, &pipe);
    }
}
