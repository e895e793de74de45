// AddRmsNormDynamicQuant kernel: for every row of D = cols elements, in
// float32:
//   x       = x1 + x2                          (output, x1's dtype)
//   y       = x * rstd * gamma,  rstd = 1 / sqrt(mean(x^2) + epsilon)
//   s_k     = y * smooth_scale_k               (y without smooth scales)
//   scale_k = max|s_k| / 127                   (output, float32)
//   y_k     = sat_int8(rint(s_k * 127 / max|s_k|))   (a row of zeros: 0)
// y2 and scale2 are 0 without smooth_scale2.
//
// rstd > 0 factors out of the row maxima: with t_k = x * (gamma *
// smooth_scale_k) and m_k = max|t_k|, scale_k = m_k * rstd / 127 and y_k =
// rint(t_k * 127 / m_k), so the norm is never applied to the whole tile.
// gamma * smooth_scale_k (gamma alone without smooth scales) becomes a float
// tile of tileRows identical rows (built once per core by doubling copies),
// applied with one full-tile Mul.
// Rows are split over the vector cores (balanced to one row) and streamed
// through UB with double-buffered queues; x1 and x2 share one input slot and
// x, y1, y2, scale1, scale2 one output slot (one DMA completion wait per
// tile and direction). Rows are padded to rowStride (a multiple of 32)
// elements in UB. Row reductions (sum of x^2, max of |s_k|): for rows of at
// most 2040 floats (`batched`) every row of the tile is folded onto 64 lanes
// with one strided Add/Max per 64-lane column chunk, then two BlockReduce
// (64 -> 8 -> 1 per row); per-row factors are spread to one 32 B block per
// row by Brcb and applied by a Mul with src1 block stride 0. Longer rows
// are folded row by row (a tree of Adds/Maxs) and scaled by a Mul per row
// reading its Brcb block with stride 0. Quantisation: Cast float -> float with RINT, -> half (exact for
// integers) -> int8. Divisions 1 / v are Divs (the device's Reciprocal is
// not accurate enough).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t REPEAT_FLOATS = 64;  // floats per 256 B vector repeat
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint32_t GROUP_ROWS = 248;    // rows per repeat-form instruction: <= 255, multiple of 8
constexpr float MIN_NORMAL = 1.17549435e-38f;

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

template <typename T>
class KernelAddRmsNormDynamicQuant {
public:
    __aicore__ inline KernelAddRmsNormDynamicQuant() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR gamma, GM_ADDR smooth1, GM_ADDR smooth2, GM_ADDR y1,
                                GM_ADDR y2, GM_ADDR x, GM_ADDR scale1, GM_ADDR scale2, const TilingData& tiling,
                                TPipe* pipe)
    {
        cols = tiling.cols;
        rowStride = tiling.rowStride;
        tileRows = tiling.tileRows;
        smoothNum = tiling.smoothNum;
        batched = tiling.batched != 0;
        epsilon = tiling.epsilon;
        invCols = tiling.invCols;

        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t rowStart;
        if (blockIdx < tiling.tailCoreNum) {
            rowStart = blockIdx * (tiling.blockRows + 1);
            rowCount = tiling.blockRows + 1;
        } else {
            rowStart = tiling.tailCoreNum * (tiling.blockRows + 1) + (blockIdx - tiling.tailCoreNum) * tiling.blockRows;
            rowCount = tiling.blockRows;
        }
        if (rowStart >= tiling.rows) {
            rowCount = 0;
        } else if (rowStart + rowCount > tiling.rows) {
            rowCount = static_cast<uint32_t>(tiling.rows - rowStart);
        }
        uint64_t base = rowStart * cols;
        uint64_t len = static_cast<uint64_t>(rowCount) * cols;
        x1Gm.SetGlobalBuffer((__gm__ T*)x1 + base, len);
        x2Gm.SetGlobalBuffer((__gm__ T*)x2 + base, len);
        xGm.SetGlobalBuffer((__gm__ T*)x + base, len);
        y1Gm.SetGlobalBuffer((__gm__ int8_t*)y1 + base, len);
        y2Gm.SetGlobalBuffer((__gm__ int8_t*)y2 + base, len);
        scale1Gm.SetGlobalBuffer((__gm__ float*)scale1 + rowStart, rowCount);
        scale2Gm.SetGlobalBuffer((__gm__ float*)scale2 + rowStart, rowCount);

        tileElems = tileRows * rowStride;
        rowsUp = AlignUp(tileRows, FLOAT_PER_BLOCK);
        // Rows of whole 512-lane multiples (no padding lanes) reduce with
        // WholeReduceSum; up to 255 chunk results per call.
        if (cols == rowStride && cols % (FLOAT_PER_BLOCK * REPEAT_FLOATS) == 0 &&
            cols <= REPEAT_FLOATS * REPEAT_FLOATS) {
            wholeRows = MAX_REPEAT / (cols / REPEAT_FLOATS);
        }
        uint32_t bufferNum = tiling.bufferNum;
        pipe->InitBuffer(inQueue, bufferNum, 2 * tileElems * sizeof(T));  // x1, x2
        // x, y1, y2, scale1, scale2
        pipe->InitBuffer(outQueue, bufferNum, tileElems * sizeof(T) + 2 * tileElems + 2 * rowsUp * sizeof(float));
        pipe->InitBuffer(yBuf, tileElems * sizeof(float));
        pipe->InitBuffer(sBuf, tileElems * sizeof(float));
        pipe->InitBuffer(aBuf, tileElems * sizeof(float));
        pipe->InitBuffer(param1Buf, tileElems * sizeof(float));
        if (smoothNum >= 2) {
            pipe->InitBuffer(param2Buf, tileElems * sizeof(float));
        }
        pipe->InitBuffer(stageQueue, 1, rowStride * sizeof(T));
        pipe->InitBuffer(onesBuf, REPEAT_FLOATS * sizeof(float));
        pipe->InitBuffer(c127Buf, REPEAT_FLOATS * sizeof(float));
        pipe->InitBuffer(rowBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(rstdBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(factorBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(brcbBuf, rowsUp * BLOCK_BYTES);
        if (batched) {
            pipe->InitBuffer(partBuf, rowsUp * BLOCK_BYTES);
        } else {
            // 64-lane partials of every row, then their 8-lane reductions.
            pipe->InitBuffer(partBuf, tileRows * REPEAT_FLOATS * sizeof(float) + rowsUp * BLOCK_BYTES);
        }
        Duplicate(onesBuf.Get<float>(), 1.0f, REPEAT_FLOATS);
        Duplicate(c127Buf.Get<float>(), 127.0f, REPEAT_FLOATS);

        // Parameter rows: gamma, or gamma * smooth_scale1 (and gamma *
        // smooth_scale2), then replicated to tileRows rows.
        LocalTensor<float> p1 = param1Buf.Get<float>();
        if (smoothNum == 0) {
            LoadParamRow(p1, gamma);
        } else {
            LocalTensor<float> g = aBuf.Get<float>();
            LoadParamRow(g, gamma);
            LoadParamRow(p1, smooth1);
            Mul(p1, p1, g, rowStride);
            if (smoothNum == 2) {
                LocalTensor<float> p2 = param2Buf.Get<float>();
                LoadParamRow(p2, smooth2);
                Mul(p2, p2, g, rowStride);
                Replicate(p2);
            }
        }
        Replicate(p1);
    }

    __aicore__ inline void Process()
    {
        if (rowCount == 0) {
            return;
        }
        // The load of tile i + 1 is issued before the compute of tile i, so
        // that it does not wait behind the compute's vector instructions in
        // the issue queue.
        uint32_t tileNum = (rowCount + tileRows - 1) / tileRows;
        CopyIn(0, MinU32(rowCount, tileRows));
        for (uint32_t i = 0; i < tileNum; i++) {
            uint64_t row = static_cast<uint64_t>(i) * tileRows;
            uint32_t nRows = MinU32(rowCount - i * tileRows, tileRows);
            if (i + 1 < tileNum) {
                CopyIn(row + tileRows, MinU32(rowCount - (i + 1) * tileRows, tileRows));
            }
            Compute(nRows);
            CopyOut(row, nRows);
        }
    }

private:
    // row = a parameter row of cols elements, as float.
    __aicore__ inline void LoadParamRow(const LocalTensor<float>& row, GM_ADDR param)
    {
        GlobalTensor<T> gm;
        gm.SetGlobalBuffer((__gm__ T*)param, cols);
        LocalTensor<T> stage = stageQueue.AllocTensor<T>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
        DataCopyPad(stage, gm, copyParams, padParams);
        stageQueue.EnQue(stage);
        stage = stageQueue.DeQue<T>();
        Cast(row, stage, RoundMode::CAST_NONE, rowStride);
        stageQueue.FreeTensor(stage);
    }

    // Rows [0, k) -> [k, 2k) until tileRows rows (Muls by 1 copies floats
    // exactly).
    __aicore__ inline void Replicate(const LocalTensor<float>& tile)
    {
        for (uint32_t k = 1; k < tileRows; k *= 2) {
            uint32_t n = MinU32(k, tileRows - k);
            Muls(tile[k * rowStride], tile, 1.0f, n * rowStride);
        }
    }

    // nRows rows of cols elements into UB rows of rowStride elements.
    __aicore__ inline void CopyRowsIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t nRows)
    {
        if (cols == rowStride) {
            DataCopy(dst, src, nRows * cols);
        } else {
            uint32_t rowBytes = cols * sizeof(T);
            uint32_t gap = (rowStride * sizeof(T) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), rowBytes, 0, gap, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(dst, src, copyParams, padParams);
        }
    }

    template <typename P>
    __aicore__ inline void CopyRowsOut(const GlobalTensor<P>& dst, const LocalTensor<P>& src, uint32_t nRows)
    {
        if (cols == rowStride) {
            DataCopy(dst, src, nRows * cols);
        } else {
            uint32_t rowBytes = cols * sizeof(P);
            uint32_t gap = (rowStride * sizeof(P) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), rowBytes, gap, 0, 0};
            DataCopyPad(dst, src, copyParams);
        }
    }

    __aicore__ inline void CopyScalesOut(const GlobalTensor<float>& dst, const LocalTensor<float>& src,
                                         uint32_t nRows)
    {
        if ((nRows * sizeof(float)) % BLOCK_BYTES == 0) {
            DataCopy(dst, src, nRows);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(nRows * sizeof(float)), 0, 0, 0};
            DataCopyPad(dst, src, copyParams);
        }
    }

    __aicore__ inline void CopyIn(uint64_t row, uint32_t nRows)
    {
        LocalTensor<T> inLocal = inQueue.AllocTensor<T>();
        CopyRowsIn(inLocal, x1Gm[row * cols], nRows);
        CopyRowsIn(inLocal[tileElems], x2Gm[row * cols], nRows);
        inQueue.EnQue(inLocal);
    }

    // Views of the output slot: x, y1, y2 (int8), scale1, scale2 (float).
    __aicore__ inline LocalTensor<int8_t> YView(const LocalTensor<uint8_t>& out, uint32_t k)
    {
        return out[tileElems * sizeof(T) + k * tileElems].template ReinterpretCast<int8_t>();
    }

    __aicore__ inline LocalTensor<float> ScaleView(const LocalTensor<uint8_t>& out, uint32_t k)
    {
        return out[tileElems * sizeof(T) + 2 * tileElems + k * rowsUp * sizeof(float)]
            .template ReinterpretCast<float>();
    }

    __aicore__ inline void CopyOut(uint64_t row, uint32_t nRows)
    {
        LocalTensor<uint8_t> outLocal = outQueue.DeQue<uint8_t>();
        CopyRowsOut(xGm[row * cols], outLocal.template ReinterpretCast<T>(), nRows);
        CopyRowsOut(y1Gm[row * cols], YView(outLocal, 0), nRows);
        CopyRowsOut(y2Gm[row * cols], YView(outLocal, 1), nRows);
        CopyScalesOut(scale1Gm[row], ScaleView(outLocal, 0), nRows);
        CopyScalesOut(scale2Gm[row], ScaleView(outLocal, 1), nRows);
        outQueue.FreeTensor(outLocal);
    }

    __aicore__ inline void Compute(uint32_t nRows)
    {
        uint32_t count = nRows * rowStride;
        LocalTensor<T> inLocal = inQueue.DeQue<T>();
        LocalTensor<uint8_t> outLocal = outQueue.AllocTensor<uint8_t>();
        LocalTensor<float> y = yBuf.Get<float>();
        LocalTensor<float> s = sBuf.Get<float>();
        LocalTensor<float> a = aBuf.Get<float>();

        // x = x1 + x2 in float32.
        Cast(y, inLocal, RoundMode::CAST_NONE, count);
        Cast(s, inLocal[tileElems], RoundMode::CAST_NONE, count);
        Add(y, y, s, count);
        inQueue.FreeTensor(inLocal);
        Cast(outLocal.template ReinterpretCast<T>(), y, RoundMode::CAST_RINT, count);

        // rstd = 1 / sqrt(mean(x^2) + epsilon) per row.
        LocalTensor<float> rowVals = rowBuf.Get<float>();
        LocalTensor<float> rstd = rstdBuf.Get<float>();
        Mul(s, y, y, count);
        RowReduce<false>(rowVals, s, nRows);
        Muls(rowVals, rowVals, invCols, nRows);
        Adds(rowVals, rowVals, epsilon, nRows);
        Sqrt(rowVals, rowVals, nRows);
        DivFromConst(rstd, onesBuf.Get<float>(), rowVals, nRows);

        // Quantisations of t_k = x * gamma * smooth_scale_k.
        Mul(s, y, param1Buf.Get<float>(), count);
        Quantize(outLocal, 0, s, rstd, nRows);
        if (smoothNum == 2) {
            Mul(s, y, param2Buf.Get<float>(), count);
            Quantize(outLocal, 1, s, rstd, nRows);
        } else {
            Duplicate(YView(outLocal, 1).template ReinterpretCast<half>(), static_cast<half>(0.0f), count / 2);
            Duplicate(ScaleView(outLocal, 1), 0.0f, nRows);
        }
        outQueue.EnQue<uint8_t>(outLocal);
    }

    // Quantisation k of t (clobbered): scale_k = max|t| * rstd / 127 per row,
    // y_k = rint(t * 127 / max|t|).
    __aicore__ inline void Quantize(const LocalTensor<uint8_t>& outLocal, uint32_t k, const LocalTensor<float>& s,
                                    const LocalTensor<float>& rstd, uint32_t nRows)
    {
        uint32_t count = nRows * rowStride;
        LocalTensor<float> a = aBuf.Get<float>();
        LocalTensor<float> maxes = rowBuf.Get<float>();
        LocalTensor<float> factor = factorBuf.Get<float>();
        Abs(a, s, count);
        RowReduce<true>(maxes, a, nRows);
        LocalTensor<float> scaleOut = ScaleView(outLocal, k);
        Mul(scaleOut, maxes, rstd, nRows);
        Muls(scaleOut, scaleOut, 1.0f / 127.0f, nRows);
        Maxs(maxes, maxes, MIN_NORMAL, nRows);
        DivFromConst(factor, c127Buf.Get<float>(), maxes, nRows);
        ScaleRows(s, s, factor, nRows);
        Cast(s, s, RoundMode::CAST_RINT, count);
        LocalTensor<half> h = a.ReinterpretCast<half>();
        Cast(h, s, RoundMode::CAST_NONE, count);
        Cast(YView(outLocal, k), h, RoundMode::CAST_NONE, count);
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

    // dst row r = src row r * factor[r].
    __aicore__ inline void ScaleRows(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                     const LocalTensor<float>& factor, uint32_t nRows)
    {
        if (batched) {
            LocalTensor<float> blocks = brcbBuf.Get<float>();
            uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * rowStride;
                Brcb(blocks, factor[r0], static_cast<uint8_t>((groupRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                     BrcbRepeatParams{1, 8});
                for (uint32_t c = 0; c < cols; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(cols - c, REPEAT_FLOATS);
                    Mul(dst[base + c], src[base + c], blocks, static_cast<uint64_t>(lanes),
                        static_cast<uint8_t>(groupRows), BinaryRepeatParams(1, 1, 0, repStride, repStride, 1));
                }
            }
        } else {
            // Long rows: the factor of row r in one 32 B block (Brcb), read
            // with block and repeat stride 0 over the whole row.
            LocalTensor<float> blocks = brcbBuf.Get<float>();
            Brcb(blocks, factor, static_cast<uint8_t>((nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                 BrcbRepeatParams{1, 8});
            uint32_t repeats = cols / REPEAT_FLOATS;  // whole repeats, then the tail lanes
            uint32_t tail = cols - repeats * REPEAT_FLOATS;
            for (uint32_t r = 0; r < nRows; r++) {
                for (uint32_t k = 0; k < repeats; k += MAX_REPEAT) {
                    uint32_t n = MinU32(repeats - k, MAX_REPEAT);
                    uint32_t off = r * rowStride + k * REPEAT_FLOATS;
                    Mul(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(REPEAT_FLOATS),
                        static_cast<uint8_t>(n), BinaryRepeatParams(1, 1, 0, 8, 8, 0));
                }
                if (tail > 0) {
                    uint32_t off = r * rowStride + repeats * REPEAT_FLOATS;
                    Mul(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(tail),
                        1, BinaryRepeatParams(1, 1, 0, 8, 8, 0));
                }
            }
        }
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECIN, 1> stageQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> yBuf;
    TBuf<TPosition::VECCALC> sBuf;
    TBuf<TPosition::VECCALC> aBuf;
    TBuf<TPosition::VECCALC> param1Buf;
    TBuf<TPosition::VECCALC> param2Buf;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> c127Buf;
    TBuf<TPosition::VECCALC> rowBuf;
    TBuf<TPosition::VECCALC> rstdBuf;
    TBuf<TPosition::VECCALC> factorBuf;
    TBuf<TPosition::VECCALC> brcbBuf;
    TBuf<TPosition::VECCALC> partBuf;
    GlobalTensor<T> x1Gm;
    GlobalTensor<T> x2Gm;
    GlobalTensor<T> xGm;
    GlobalTensor<int8_t> y1Gm;
    GlobalTensor<int8_t> y2Gm;
    GlobalTensor<float> scale1Gm;
    GlobalTensor<float> scale2Gm;
    uint32_t rowCount = 0;
    uint32_t cols = 0;
    uint32_t rowStride = 0;
    uint32_t tileRows = 0;
    uint32_t tileElems = 0;
    uint32_t rowsUp = 0;
    uint32_t smoothNum = 0;
    bool batched = true;
    uint32_t wholeRows = 0;
    float epsilon = 0.0f;
    float invCols = 0.0f;
};

template <typename T, typename TilingData>
__aicore__ inline void RunAddRmsNormDynamicQuant(GM_ADDR x1, GM_ADDR x2, GM_ADDR gamma, GM_ADDR smooth1,
                                                 GM_ADDR smooth2, GM_ADDR y1, GM_ADDR y2, GM_ADDR x, GM_ADDR scale1,
                                                 GM_ADDR scale2, const TilingData& tiling, TPipe* pipe)
{
    KernelAddRmsNormDynamicQuant<T> op;
    op.Init(x1, x2, gamma, smooth1, smooth2, y1, y2, x, scale1, scale2, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void add_rms_norm_dynamic_quant(GM_ADDR x1, GM_ADDR x2, GM_ADDR gamma,
                                                                 GM_ADDR smooth_scale1, GM_ADDR smooth_scale2,
                                                                 GM_ADDR y1, GM_ADDR y2, GM_ADDR x, GM_ADDR scale1,
                                                                 GM_ADDR scale2, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunAddRmsNormDynamicQuant<half>(x1, x2, gamma, smooth_scale1, smooth_scale2, y1, y2, x, scale1, scale2,
                                        tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunAddRmsNormDynamicQuant<bfloat16_t>(x1, x2, gamma, smooth_scale1, smooth_scale2, y1, y2, x, scale1,
                                              scale2, tilingData, &pipe);
    }
}
