// GeluQuant kernel: g = GELU(x) in float32, then int8 quantisation of every
// row of C = cols elements (see op_host/gelu_quant_tiling.h):
//   static:  y = sat_int8(rint(g * scale + offset)), out_scale = 0
//   dynamic: s = g * scale, m = max|s| of the row, out_scale = m / 127,
//            y = sat_int8(rint(s * 127 / m))   (m = 0 gives y = 0)
// scale and offset are absent, one value (a scalar read once) or per
// channel (a float tile of tileRows replicated rows, built once per core, so
// every tile applies them with one full-tile Mul/Add).
//
// GELU is composed of basic vector ops (tanh form: x / (1 + exp(-x (K0 +
// K1 x^2))); erf form: relu(x) - |x| h(x), h = 0.5 erfc(|x| / sqrt 2) from
// Abramowitz & Stegun 7.1.26). Row maxima of |s|: for rows of at most 2040
// floats (`batched`) every row of the tile is folded onto its first 64
// lanes with one strided Max per 64-lane column chunk, then two
// BlockReduceMax (64 -> 8 -> 1 per row) give all the maxima; 127 / m is spread to one 32 B block per row by Brcb
// and a Mul with src1 block stride 0 scales every row. Longer rows are
// folded row by row with a tree of Maxs, the 64-lane partials reduced
// together, and each row scaled by a Mul reading its Brcb block with
// stride 0. Quantisation is
// Cast float -> float with RINT, -> half (exact for integers) -> int8; the
// casts saturate out-of-range values (Cast's default overflow behaviour).
//
// Rows are split over the vector cores (balanced to one row) and streamed
// through UB with double-buffered queues (MTE2, V, MTE3 overlap); rows are
// padded to rowStride (a multiple of 32) elements in UB, so the int8 rows
// are whole 32 B blocks as well.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t REPEAT_FLOATS = 64;  // floats per 256 B vector repeat
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint32_t GROUP_ROWS = 248;    // rows per repeat-form instruction: <= 255, multiple of 8
constexpr uint32_t REDUCE_ROWS = 254;   // rows per WholeReduceMax of partials: <= 255, even (dst alignment)
constexpr int32_t MODE_STATIC = 1;
constexpr int32_t MODE_DYNAMIC = 2;
constexpr float MIN_NORMAL = 1.17549435e-38f;

// tanh form constants.
constexpr float GELU_K0 = 1.5957691216057308f;   // 2 sqrt(2/pi)
constexpr float GELU_K1 = 0.0713548162726009f;   // 0.044715 * 2 sqrt(2/pi)
// erf form (A&S 7.1.26 on z = |x| / sqrt 2, coefficients halved for 0.5 erfc).
constexpr float ERF_P = 0.2316418889f;           // 0.3275911 / sqrt 2
constexpr float ERF_A1 = 0.127414796f;
constexpr float ERF_A2 = -0.142248368f;
constexpr float ERF_A3 = 0.7107068705f;
constexpr float ERF_A4 = -0.7265760135f;
constexpr float ERF_A5 = 0.5307027145f;
constexpr float ERF_CLAMP = 40.0f;               // h(x) = 0 in float beyond this |x|

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

// g = GELU(x), tanh form; t is a work buffer (g may be t).
__aicore__ inline void GeluTanh(const LocalTensor<float>& g, const LocalTensor<float>& x,
                                const LocalTensor<float>& t, uint32_t count)
{
    Mul(t, x, x, count);
    Muls(t, t, -GELU_K1, count);
    Adds(t, t, -GELU_K0, count);
    Mul(t, t, x, count);
    Exp(t, t, count);
    Adds(t, t, 1.0f, count);
    Div(g, x, t, count);
}

// g = GELU(x), erf form; m, t, p are work buffers (g may be m), ones holds
// 64 ones.
__aicore__ inline void GeluErf(const LocalTensor<float>& g, const LocalTensor<float>& x,
                               const LocalTensor<float>& m, const LocalTensor<float>& t,
                               const LocalTensor<float>& p, const LocalTensor<float>& ones, uint32_t count)
{
    Abs(m, x, count);
    Mins(m, m, ERF_CLAMP, count);
    Muls(t, m, ERF_P, count);
    Adds(t, t, 1.0f, count);
    DivFromConst(t, ones, t, count);
    Muls(p, t, ERF_A5, count);
    Adds(p, p, ERF_A4, count);
    Mul(p, p, t, count);
    Adds(p, p, ERF_A3, count);
    Mul(p, p, t, count);
    Adds(p, p, ERF_A2, count);
    Mul(p, p, t, count);
    Adds(p, p, ERF_A1, count);
    Mul(p, p, t, count);       // p = 0.5 t P(t)
    Mul(t, m, m, count);
    Muls(t, t, -0.5f, count);
    Exp(t, t, count);          // t = exp(-x^2 / 2)
    Mul(p, p, t, count);       // p = h(x)
    Mul(p, p, m, count);       // p = |x| h(x)
    Relu(g, x, count);
    Sub(g, g, p, count);
}

template <typename T, int32_t TANH, int32_t MODE>
class KernelGeluQuant {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

public:
    __aicore__ inline KernelGeluQuant() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR scale, GM_ADDR offset, GM_ADDR y, GM_ADDR outScale,
                                const TilingData& tiling, TPipe* pipe)
    {
        cols = tiling.cols;
        rowStride = tiling.rowStride;
        tileRows = tiling.tileRows;
        scaleMode = tiling.scaleMode;
        offsetMode = tiling.offsetMode;
        batched = tiling.batched != 0;

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
        xGm.SetGlobalBuffer((__gm__ T*)x + rowStart * cols, static_cast<uint64_t>(rowCount) * cols);
        yGm.SetGlobalBuffer((__gm__ int8_t*)y + rowStart * cols, static_cast<uint64_t>(rowCount) * cols);
        outScaleGm.SetGlobalBuffer((__gm__ float*)outScale + rowStart, rowCount);
        scaleGm.SetGlobalBuffer((__gm__ T*)scale, scaleMode == 2 ? cols : 1);
        offsetGm.SetGlobalBuffer((__gm__ T*)offset, offsetMode == 2 ? cols : 1);

        uint32_t tileElems = tileRows * rowStride;
        uint32_t rowBytes = AlignUp(tileRows * sizeof(float), BLOCK_BYTES);
        uint32_t bufferNum = tiling.bufferNum;
        pipe->InitBuffer(xQueue, bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(yQueue, bufferNum, tileElems);
        pipe->InitBuffer(outScaleQueue, bufferNum, rowBytes);
        pipe->InitBuffer(workBuf0, tileElems * sizeof(float));
        pipe->InitBuffer(workBuf1, tileElems * sizeof(float));
        if constexpr (TANH == 0) {
            pipe->InitBuffer(workBuf2, tileElems * sizeof(float));
            pipe->InitBuffer(workBuf3, tileElems * sizeof(float));
        }
        if (scaleMode == 2) {
            pipe->InitBuffer(scaleTileBuf, tileElems * sizeof(float));
        }
        if (offsetMode == 2) {
            pipe->InitBuffer(offsetTileBuf, tileElems * sizeof(float));
        }
        pipe->InitBuffer(stageQueue, 1, rowStride * sizeof(T));
        pipe->InitBuffer(onesBuf, REPEAT_FLOATS * sizeof(float));
        pipe->InitBuffer(c127Buf, REPEAT_FLOATS * sizeof(float));
        if constexpr (MODE == MODE_DYNAMIC) {
            pipe->InitBuffer(maxBuf, AlignUp(tileRows, FLOAT_PER_BLOCK) * sizeof(float));
            pipe->InitBuffer(invBuf, rowBytes);
            pipe->InitBuffer(brcbBuf, AlignUp(tileRows, FLOAT_PER_BLOCK) * BLOCK_BYTES);
            if (batched) {
                pipe->InitBuffer(partBuf, AlignUp(tileRows, FLOAT_PER_BLOCK) * BLOCK_BYTES);
            } else {
                pipe->InitBuffer(partBuf, tileRows * REPEAT_FLOATS * sizeof(float));
            }
        }
        Duplicate(onesBuf.Get<float>(), 1.0f, REPEAT_FLOATS);
        Duplicate(c127Buf.Get<float>(), 127.0f, REPEAT_FLOATS);

        // Parameters: a scalar is read once; a per-channel vector becomes a
        // float tile of tileRows identical rows.
        if (scaleMode == 1) {
            scaleValue = static_cast<float>(scaleGm.GetValue(0));
        } else if (scaleMode == 2) {
            LoadParamTile(scaleTileBuf.Get<float>(), scaleGm);
        }
        if (offsetMode == 1) {
            offsetValue = static_cast<float>(offsetGm.GetValue(0));
        } else if (offsetMode == 2) {
            LoadParamTile(offsetTileBuf.Get<float>(), offsetGm);
        }
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
    // tile = tileRows copies of the parameter row (cols values, as float).
    __aicore__ inline void LoadParamTile(const LocalTensor<float>& tile, const GlobalTensor<T>& gm)
    {
        LocalTensor<T> stage = stageQueue.AllocTensor<T>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
        DataCopyPad(stage, gm, copyParams, padParams);
        stageQueue.EnQue(stage);
        stage = stageQueue.DeQue<T>();
        if constexpr (IS_FLOAT) {
            Muls(tile, stage, 1.0f, rowStride);
        } else {
            Cast(tile, stage, RoundMode::CAST_NONE, rowStride);
        }
        stageQueue.FreeTensor(stage);
        // Doubling: rows [0, k) -> [k, 2k) (Muls by 1 copies floats exactly).
        for (uint32_t k = 1; k < tileRows; k *= 2) {
            uint32_t n = MinU32(k, tileRows - k);
            Muls(tile[k * rowStride], tile, 1.0f, n * rowStride);
        }
    }

    __aicore__ inline void CopyIn(uint64_t row, uint32_t nRows)
    {
        LocalTensor<T> xLocal = xQueue.AllocTensor<T>();
        if (cols == rowStride) {
            DataCopy(xLocal, xGm[row * cols], nRows * cols);
        } else {
            // Each row is padded to a 32 B block by the copy; the destination
            // gap pads it further to rowStride elements.
            uint32_t rowBytes = cols * sizeof(T);
            uint32_t gapBlocks = (rowStride * sizeof(T) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), rowBytes, 0, gapBlocks, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[row * cols], copyParams, padParams);
        }
        xQueue.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t nRows)
    {
        uint32_t count = nRows * rowStride;
        LocalTensor<T> xLocal = xQueue.DeQue<T>();
        LocalTensor<int8_t> yLocal = yQueue.AllocTensor<int8_t>();
        LocalTensor<float> scaleLocal = outScaleQueue.AllocTensor<float>();
        LocalTensor<float> xf;
        if constexpr (IS_FLOAT) {
            xf = xLocal;
        } else {
            xf = workBuf0.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, count);
        }
        LocalTensor<float> s = workBuf1.Get<float>();
        if constexpr (TANH == 1) {
            GeluTanh(s, xf, s, count);
        } else {
            GeluErf(s, xf, s, workBuf2.Get<float>(), workBuf3.Get<float>(), onesBuf.Get<float>(), count);
        }
        if (scaleMode == 1) {
            Muls(s, s, scaleValue, count);
        } else if (scaleMode == 2) {
            Mul(s, s, scaleTileBuf.Get<float>(), count);
        }
        if constexpr (MODE == MODE_STATIC) {
            if (offsetMode == 1) {
                Adds(s, s, offsetValue, count);
            } else if (offsetMode == 2) {
                Add(s, s, offsetTileBuf.Get<float>(), count);
            }
            Duplicate(scaleLocal, 0.0f, nRows);
        } else {
            ScaleRows(s, xf, scaleLocal, nRows);
        }
        // sat_int8(rint(s)): round in float, then casts that are exact for
        // integers and saturate beyond the target range (Cast overflow
        // saturates by default, guide 6.2.3.3.5.1).
        Cast(s, s, RoundMode::CAST_RINT, count);
        LocalTensor<half> h = xf.template ReinterpretCast<half>();
        Cast(h, s, RoundMode::CAST_NONE, count);
        Cast(yLocal, h, RoundMode::CAST_NONE, count);
        xQueue.FreeTensor(xLocal);
        yQueue.EnQue<int8_t>(yLocal);
        outScaleQueue.EnQue<float>(scaleLocal);
    }

    // Dynamic mode: per row m = max|s|, out_scale = m / 127, s *= 127 / m.
    // a is a work buffer of the tile's size.
    __aicore__ inline void ScaleRows(const LocalTensor<float>& s, const LocalTensor<float>& a,
                                     const LocalTensor<float>& scaleLocal, uint32_t nRows)
    {
        uint32_t count = nRows * rowStride;
        LocalTensor<float> maxes = maxBuf.Get<float>();
        LocalTensor<float> inv = invBuf.Get<float>();
        Abs(a, s, count);
        uint32_t firstLanes = MinU32(cols, REPEAT_FLOATS);
        if (batched) {
            // Fold every row onto 64 lanes, BlockReduceMax them to 8 per row
            // (dense), and BlockReduceMax those 8 to one.
            LocalTensor<float> part = partBuf.Get<float>();
            if (cols < REPEAT_FLOATS) {
                Duplicate(part, 0.0f, AlignUp(nRows, FLOAT_PER_BLOCK) * FLOAT_PER_BLOCK);  // |s| >= 0
            }
            uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * rowStride;
                for (uint32_t c = REPEAT_FLOATS; c < cols; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(cols - c, REPEAT_FLOATS);
                    Max(a[base], a[base], a[base + c], static_cast<uint64_t>(lanes), static_cast<uint8_t>(groupRows),
                        BinaryRepeatParams(1, 1, 1, repStride, repStride, repStride));
                }
                BlockReduceMax(part[r0 * FLOAT_PER_BLOCK], a[base], static_cast<int32_t>(groupRows),
                               static_cast<int32_t>(firstLanes), 1, 1, repStride);
            }
            uint32_t blocks = (nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK;
            for (uint32_t b0 = 0; b0 < blocks; b0 += GROUP_ROWS) {
                uint32_t n = MinU32(blocks - b0, GROUP_ROWS);
                BlockReduceMax(maxes[b0 * FLOAT_PER_BLOCK], part[b0 * REPEAT_FLOATS], static_cast<int32_t>(n),
                               static_cast<int32_t>(REPEAT_FLOATS), 1, 1, 8);
            }
        } else {
            // Long rows: a tree of Max per row down to 64 lanes, the 64-lane
            // partials (zero filled: |s| >= 0) reduced together.
            LocalTensor<float> part = partBuf.Get<float>();
            Duplicate(part, 0.0f, nRows * REPEAT_FLOATS);
            for (uint32_t r = 0; r < nRows; r++) {
                LocalTensor<float> rowA = a[r * rowStride];
                uint32_t len = cols;
                while (len > REPEAT_FLOATS) {
                    uint32_t half = AlignUp((len + 1) / 2, FLOAT_PER_BLOCK);
                    Max(rowA, rowA, rowA[half], len - half);
                    len = half;
                }
                Muls(part[r * REPEAT_FLOATS], rowA, 1.0f, len);
            }
            for (uint32_t r0 = 0; r0 < nRows; r0 += REDUCE_ROWS) {
                uint32_t n = MinU32(nRows - r0, REDUCE_ROWS);
                WholeReduceMax(maxes[r0], part[r0 * REPEAT_FLOATS], static_cast<int32_t>(REPEAT_FLOATS),
                               static_cast<int32_t>(n), 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
            }
        }
        Muls(scaleLocal, maxes, 1.0f / 127.0f, nRows);
        Maxs(maxes, maxes, MIN_NORMAL, nRows);
        DivFromConst(inv, c127Buf.Get<float>(), maxes, nRows);
        if (batched) {
            LocalTensor<float> blocks = brcbBuf.Get<float>();
            uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * rowStride;
                Brcb(blocks, inv[r0], static_cast<uint8_t>((groupRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                     BrcbRepeatParams{1, 8});
                for (uint32_t c = 0; c < cols; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(cols - c, REPEAT_FLOATS);
                    Mul(s[base + c], s[base + c], blocks, static_cast<uint64_t>(lanes),
                        static_cast<uint8_t>(groupRows), BinaryRepeatParams(1, 1, 0, repStride, repStride, 1));
                }
            }
        } else {
            // Long rows: the factor of row r in one 32 B block (Brcb), read
            // with block and repeat stride 0 over the whole row.
            LocalTensor<float> blocks = brcbBuf.Get<float>();
            Brcb(blocks, inv, static_cast<uint8_t>((nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                 BrcbRepeatParams{1, 8});
            uint32_t repeats = cols / REPEAT_FLOATS;  // whole repeats, then the tail lanes
            uint32_t tail = cols - repeats * REPEAT_FLOATS;
            for (uint32_t r = 0; r < nRows; r++) {
                for (uint32_t k = 0; k < repeats; k += MAX_REPEAT) {
                    uint32_t n = MinU32(repeats - k, MAX_REPEAT);
                    uint32_t off = r * rowStride + k * REPEAT_FLOATS;
                    Mul(s[off], s[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(REPEAT_FLOATS),
                        static_cast<uint8_t>(n), BinaryRepeatParams(1, 1, 0, 8, 8, 0));
                }
                if (tail > 0) {
                    uint32_t off = r * rowStride + repeats * REPEAT_FLOATS;
                    Mul(s[off], s[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(tail),
                        1, BinaryRepeatParams(1, 1, 0, 8, 8, 0));
                }
            }
        }
    }

    __aicore__ inline void CopyOut(uint64_t row, uint32_t nRows)
    {
        LocalTensor<int8_t> yLocal = yQueue.DeQue<int8_t>();
        if (cols == rowStride) {
            DataCopy(yGm[row * cols], yLocal, nRows * cols);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(cols), 0, 0, 0};
            DataCopyPad(yGm[row * cols], yLocal, copyParams);
        }
        yQueue.FreeTensor(yLocal);
        LocalTensor<float> scaleLocal = outScaleQueue.DeQue<float>();
        if ((nRows * sizeof(float)) % BLOCK_BYTES == 0) {
            DataCopy(outScaleGm[row], scaleLocal, nRows);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(nRows * sizeof(float)), 0, 0, 0};
            DataCopyPad(outScaleGm[row], scaleLocal, copyParams);
        }
        outScaleQueue.FreeTensor(scaleLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> xQueue;
    TQue<QuePosition::VECIN, 1> stageQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> yQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outScaleQueue;
    TBuf<TPosition::VECCALC> workBuf0;
    TBuf<TPosition::VECCALC> workBuf1;
    TBuf<TPosition::VECCALC> workBuf2;
    TBuf<TPosition::VECCALC> workBuf3;
    TBuf<TPosition::VECCALC> scaleTileBuf;
    TBuf<TPosition::VECCALC> offsetTileBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> c127Buf;
    TBuf<TPosition::VECCALC> maxBuf;
    TBuf<TPosition::VECCALC> invBuf;
    TBuf<TPosition::VECCALC> brcbBuf;
    TBuf<TPosition::VECCALC> partBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> scaleGm;
    GlobalTensor<T> offsetGm;
    GlobalTensor<int8_t> yGm;
    GlobalTensor<float> outScaleGm;
    uint32_t rowCount = 0;
    uint32_t cols = 0;
    uint32_t rowStride = 0;
    uint32_t tileRows = 0;
    uint32_t scaleMode = 0;
    uint32_t offsetMode = 0;
    bool batched = true;
    float scaleValue = 1.0f;
    float offsetValue = 0.0f;
};

template <typename T, int32_t TANH, int32_t MODE, typename TilingData>
__aicore__ inline void RunGeluQuant(GM_ADDR x, GM_ADDR scale, GM_ADDR offset, GM_ADDR y, GM_ADDR outScale,
                                    const TilingData& tiling, TPipe* pipe)
{
    KernelGeluQuant<T, TANH, MODE> op;
    op.Init(x, scale, offset, y, outScale, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void gelu_quant(GM_ADDR x, GM_ADDR input_scale, GM_ADDR input_offset, GM_ADDR y,
                                                 GM_ADDR out_scale, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(101)) {
        RunGeluQuant<half, 0, MODE_STATIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(102)) {
        RunGeluQuant<half, 0, MODE_DYNAMIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(111)) {
        RunGeluQuant<half, 1, MODE_STATIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(112)) {
        RunGeluQuant<half, 1, MODE_DYNAMIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(201)) {
        RunGeluQuant<float, 0, MODE_STATIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(202)) {
        RunGeluQuant<float, 0, MODE_DYNAMIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(211)) {
        RunGeluQuant<float, 1, MODE_STATIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(212)) {
        RunGeluQuant<float, 1, MODE_DYNAMIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(301)) {
        RunGeluQuant<bfloat16_t, 0, MODE_STATIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(302)) {
        RunGeluQuant<bfloat16_t, 0, MODE_DYNAMIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(311)) {
        RunGeluQuant<bfloat16_t, 1, MODE_STATIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    } else if (TILING_KEY_IS(312)) {
        RunGeluQuant<bfloat16_t, 1, MODE_DYNAMIC>(x, input_scale, input_offset, y, out_scale, tilingData, &pipe);
    }
}
