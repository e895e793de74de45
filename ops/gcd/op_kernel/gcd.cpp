// Gcd kernel: y = gcd(|x1|, |x2|) with numpy broadcasting (int16, int32).
//
// Euclid, vectorised over a tile with the nearest-integer quotient
// (|r| <= b / 2 + 1, about 25 steps at most for 31-bit values):
//   float Euclid, exact while every value of the tile is below 2^23 (always
//   for int16; for int32 when a ReduceMax says so):
//     q = rint(a / max(b, 1)); r = |a - q * b|; (a, b) = (b, r)
//     (Maxs, Div, Cast rint, Mul, Sub, Abs: q * b and a - q * b stay exact);
//   int32 Euclid, for tiles with larger values: the quotient is estimated in
//     float32 and the remainder computed exactly in int32 (wrapping):
//     q = rint(fa / fb); r = a - q * b; r = max(r, -r) below 2^24, where the
//     floats are exact; above, a second estimate q = rint(float(r) / fb);
//     r = r - q * b absorbs the error of the rounded floats.
// A lane is done when b == 0 (then it keeps swapping (g, 0) <-> (0, g), so
// the result is a + b). From minIters steps on, every checkEvery steps a Min
// and a ReduceMax of min(a, b) tell whether the whole tile is done. |x| is taken exactly:
// |INT32_MIN| = 2^31 is INT32_MIN's bits in int32 (the remainders are exact
// modulo 2^32) and 2^31 in float; a gcd of 2^31 (2^15 for int16) wraps to the
// dtype's minimum, as numpy.
//
// Layout: the broadcast output is [outDims, cols] (tiling). A tile is up to
// tileRows rows of one outDims[3] run (or one column chunk of a row); an input
// contiguous in cols is moved with one strided DataCopyPad (a row broadcast
// along the rows with one copy per row), an input broadcast along cols is one
// GM value per row, filled with Duplicate. Double-buffered queues overlap
// MTE2, V and MTE3.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t OUTER_DIMS = 4;
constexpr uint32_t MAX_ITERS = 96;          // guard only: tiles finish far earlier
constexpr float FLOAT_EXACT = 8388608.0f;   // 2^23: the float Euclid is exact below it
constexpr float INT_ONE_STEP = 16777216.0f; // 2^24: one quotient estimate per step below it
constexpr float WRAP16 = 32768.0f;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T>
class KernelGcd {
    static constexpr bool IS_INT32 = SameType<T, int32_t>::value;
    static constexpr uint32_t BLOCK_ELEMS = BLOCK_BYTES / sizeof(T);

public:
    __aicore__ inline KernelGcd() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
    {
        for (uint32_t d = 0; d < OUTER_DIMS; d++) {
            outDims[d] = tiling.outDims[d];
            strides1[d] = tiling.x1Strides[d];
            strides2[d] = tiling.x2Strides[d];
        }
        rows = tiling.rows;
        cols = tiling.cols;
        inner1 = tiling.x1Inner;
        inner2 = tiling.x2Inner;
        chunkLen = tiling.chunkLen;
        chunkNum = tiling.chunkNum;
        tileRows = tiling.tileRows;
        minIters = tiling.minIters;
        checkEvery = tiling.checkEvery == 0 ? 1 : tiling.checkEvery;
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        if (blockIdx < tiling.tailCoreNum) {
            unitStart = blockIdx * (tiling.blockUnits + 1);
            unitCount = tiling.blockUnits + 1;
        } else {
            unitStart = tiling.tailCoreNum * (tiling.blockUnits + 1) +
                        (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            unitCount = tiling.blockUnits;
        }
        uint64_t size1 = 1;
        uint64_t size2 = 1;
        for (uint32_t d = 0; d < OUTER_DIMS; d++) {
            size1 += static_cast<uint64_t>(outDims[d] - 1) * strides1[d];
            size2 += static_cast<uint64_t>(outDims[d] - 1) * strides2[d];
        }
        size1 += inner1 != 0 ? cols - 1 : 0;
        size2 += inner2 != 0 ? cols - 1 : 0;
        x1Gm.SetGlobalBuffer((__gm__ T*)x1, size1);
        x2Gm.SetGlobalBuffer((__gm__ T*)x2, size2);
        yGm.SetGlobalBuffer((__gm__ T*)y, static_cast<uint64_t>(rows) * cols);
        uint32_t tileElems = tiling.tileElems;
        pipe->InitBuffer(inQueueX1, tiling.bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(inQueueX2, tiling.bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(fBuf[0], tileElems * sizeof(float));
        pipe->InitBuffer(fBuf[1], tileElems * sizeof(float));
        pipe->InitBuffer(fBuf[2], tileElems * sizeof(float));
        if constexpr (IS_INT32) {
            pipe->InitBuffer(fBuf[3], tileElems * sizeof(float));
            pipe->InitBuffer(fBuf[4], tileElems * sizeof(float));
            pipe->InitBuffer(iBuf[0], tileElems * sizeof(int32_t));
            pipe->InitBuffer(iBuf[1], tileElems * sizeof(int32_t));
        }
        // ReduceMax: the result (32 B) and its scratch (2 floats per repeat).
        uint32_t scratch = (tileElems / 32 * sizeof(float) + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
        pipe->InitBuffer(redBuf, BLOCK_BYTES);
        pipe->InitBuffer(redTmpBuf, scratch < BLOCK_BYTES ? BLOCK_BYTES : scratch);
        // One V->S event for the reduce-then-read checks, held for the kernel.
        vsEvent = static_cast<int32_t>(pipe->FetchEventID(HardEvent::V_S));
    }

    __aicore__ inline void Process()
    {
        uint64_t unit = unitStart;
        uint64_t unitEnd = unitStart + unitCount;
        uint32_t group = outDims[OUTER_DIMS - 1];
        while (unit < unitEnd) {
            uint32_t row;
            uint32_t nRows;
            uint32_t colOff;
            uint32_t len;
            if (chunkNum == 1) {
                row = static_cast<uint32_t>(unit);
                uint64_t left = unitEnd - unit;
                nRows = left < tileRows ? static_cast<uint32_t>(left) : tileRows;
                uint32_t runLeft = group - row % group;
                if (nRows > runLeft) {
                    nRows = runLeft;
                }
                colOff = 0;
                len = cols;
            } else {
                row = static_cast<uint32_t>(unit / chunkNum);
                colOff = static_cast<uint32_t>(unit % chunkNum) * chunkLen;
                nRows = 1;
                len = cols - colOff < chunkLen ? cols - colOff : chunkLen;
            }
            CopyIn(row, nRows, colOff, len);
            Compute(nRows * AlignUp(len));
            CopyOut(row, nRows, colOff, len);
            unit += nRows;
        }
    }

private:
    __aicore__ inline uint32_t AlignUp(uint32_t len)
    {
        return (len + BLOCK_ELEMS - 1) / BLOCK_ELEMS * BLOCK_ELEMS;
    }

    // Element offset of `row` in an input with these outer strides.
    __aicore__ inline uint64_t RowOffset(uint32_t row, const uint32_t* strides)
    {
        uint64_t offset = 0;
        for (uint32_t d = OUTER_DIMS; d-- > 0;) {
            offset += static_cast<uint64_t>(row % outDims[d]) * strides[d];
            row /= outDims[d];
        }
        return offset;
    }

    // Rows [row, row + nRows) x columns [colOff, colOff + len) of one input,
    // into UB rows of AlignUp(len) elements.
    __aicore__ inline void LoadInput(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t* strides,
                                     uint32_t inner, uint32_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        uint64_t base = RowOffset(row, strides);
        uint64_t step = strides[OUTER_DIMS - 1];
        uint32_t stride = AlignUp(len);
        if (inner == 0) {
            // One value per row, broadcast along the row.
            for (uint32_t r = 0; r < nRows; r++) {
                T value = src.GetValue(base + r * step);
                Duplicate(dst[r * stride], value, stride);
            }
            return;
        }
        DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
        if (nRows == 1 || step >= len) {
            if (nRows == 1 && (len * sizeof(T)) % BLOCK_BYTES == 0) {
                DataCopy(dst, src[base + colOff], len);
            } else {
                uint64_t gap = nRows == 1 ? 0 : step - len;
                DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(len * sizeof(T)),
                                             static_cast<uint32_t>(gap * sizeof(T)), 0, 0};
                DataCopyPad(dst, src[base + colOff], copyParams, padParams);
            }
            return;
        }
        // The same GM row for every row of the tile (broadcast along rows).
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
        for (uint32_t r = 0; r < nRows; r++) {
            DataCopyPad(dst[r * stride], src[base + r * step + colOff], copyParams, padParams);
        }
    }

    __aicore__ inline void CopyIn(uint32_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        LocalTensor<T> x1Local = inQueueX1.AllocTensor<T>();
        LocalTensor<T> x2Local = inQueueX2.AllocTensor<T>();
        LoadInput(x1Local, x1Gm, strides1, inner1, row, nRows, colOff, len);
        LoadInput(x2Local, x2Gm, strides2, inner2, row, nRows, colOff, len);
        inQueueX1.EnQue(x1Local);
        inQueueX2.EnQue(x2Local);
    }

    // True when every lane is done: min(a, b) == 0 (a, b >= 0; a done lane
    // alternates between (g, 0) and (0, g)). `scratch` is clobbered.
    __aicore__ inline bool AllDone(const LocalTensor<float>& a, const LocalTensor<float>& b,
                                   const LocalTensor<float>& scratch, uint32_t count)
    {
        LocalTensor<float> red = redBuf.Get<float>();
        Min(scratch, a, b, count);
        ReduceMax(red, scratch, redTmpBuf.Get<float>(), static_cast<int32_t>(count));
        SetFlag<HardEvent::V_S>(vsEvent);
        WaitFlag<HardEvent::V_S>(vsEvent);
        return red.GetValue(0) == 0.0f;
    }

    // Largest element of m[0 .. count) (clobbers nothing but the reduce buffers).
    __aicore__ inline float MaxOf(const LocalTensor<float>& m, uint32_t count)
    {
        LocalTensor<float> red = redBuf.Get<float>();
        ReduceMax(red, m, redTmpBuf.Get<float>(), static_cast<int32_t>(count));
        SetFlag<HardEvent::V_S>(vsEvent);
        WaitFlag<HardEvent::V_S>(vsEvent);
        return red.GetValue(0);
    }

    __aicore__ inline bool CheckNow(uint32_t iter)
    {
        return iter >= minIters && (iter - minIters) % checkEvery == 0;
    }

    // Float Euclid on exact non-negative integers below 2^23; fa + fb is the
    // gcd afterwards. The three buffers rotate.
    __aicore__ inline void FloatEuclid(LocalTensor<float>& fa, LocalTensor<float>& fb, LocalTensor<float>& t,
                                       uint32_t count)
    {
        for (uint32_t iter = 1; iter <= MAX_ITERS; iter++) {
            Maxs(t, fb, 1.0f, count);
            Div(t, fa, t, count);
            Cast(t, t, RoundMode::CAST_RINT, count);
            Mul(t, t, fb, count);
            Sub(t, fa, t, count);
            Abs(t, t, count);
            LocalTensor<float> old = fa;
            fa = fb;
            fb = t;
            t = old;
            if (CheckNow(iter) && AllDone(fa, fb, t, count)) {
                return;
            }
        }
    }

    // int32 Euclid with float32 quotient estimates; ia + ib is the gcd
    // afterwards. fa, fb hold |a|, |b| as float; ia, ib the int32 bits. Below
    // 2^24 the floats are exact and one estimate per step leaves |r| < b;
    // above, a second estimate absorbs the error of the rounded floats.
    template <bool TWO_STEP>
    __aicore__ inline void IntEuclid(LocalTensor<int32_t>& ia, LocalTensor<int32_t>& ib, LocalTensor<float>& fa,
                                     LocalTensor<float>& fb, uint32_t count)
    {
        LocalTensor<float> fr = fBuf[2].Get<float>();
        LocalTensor<float> fs = fBuf[3].Get<float>();
        LocalTensor<float> fq = fBuf[4].Get<float>();
        LocalTensor<int32_t> ir = iBuf[0].Get<int32_t>();
        LocalTensor<int32_t> iq = iBuf[1].Get<int32_t>();
        for (uint32_t iter = 1; iter <= MAX_ITERS; iter++) {
            Maxs(fs, fb, 1.0f, count);
            Div(fq, fa, fs, count);
            Cast(iq, fq, RoundMode::CAST_RINT, count);
            Mul(iq, iq, ib, count);
            Sub(ir, ia, iq, count);
            if constexpr (TWO_STEP) {
                Cast(fq, ir, RoundMode::CAST_RINT, count);
                Div(fq, fq, fs, count);
                Cast(iq, fq, RoundMode::CAST_RINT, count);
                Mul(iq, iq, ib, count);
                Sub(ir, ir, iq, count);
            }
            Muls(iq, ir, -1, count);
            Max(ir, ir, iq, count);
            Cast(fr, ir, RoundMode::CAST_RINT, count);
            LocalTensor<int32_t> oldI = ia;
            ia = ib;
            ib = ir;
            ir = oldI;
            LocalTensor<float> oldF = fa;
            fa = fb;
            fb = fr;
            fr = oldF;
            if (CheckNow(iter) && AllDone(fa, fb, fq, count)) {
                return;
            }
        }
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<T> x1Local = inQueueX1.DeQue<T>();
        LocalTensor<T> x2Local = inQueueX2.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<float> fa = fBuf[0].Get<float>();
        LocalTensor<float> fb = fBuf[1].Get<float>();
        LocalTensor<float> t = fBuf[2].Get<float>();
        if constexpr (IS_INT32) {
            Cast(fa, x1Local, RoundMode::CAST_RINT, count);
            Cast(fb, x2Local, RoundMode::CAST_RINT, count);
            Abs(fa, fa, count);
            Abs(fb, fb, count);
            Max(t, fa, fb, count);
            float largest = MaxOf(t, count);
            if (largest < FLOAT_EXACT) {
                FloatEuclid(fa, fb, t, count);
                Add(fa, fa, fb, count);
                Cast(yLocal, fa, RoundMode::CAST_RINT, count);
            } else {
                // |x| in int32 (INT32_MIN stays INT32_MIN, i.e. 2^31 mod 2^32).
                LocalTensor<int32_t> tmp = iBuf[0].Get<int32_t>();
                Muls(tmp, x1Local, -1, count);
                Max(x1Local, x1Local, tmp, count);
                Muls(tmp, x2Local, -1, count);
                Max(x2Local, x2Local, tmp, count);
                LocalTensor<int32_t> ia = x1Local;
                LocalTensor<int32_t> ib = x2Local;
                if (largest < INT_ONE_STEP) {
                    IntEuclid<false>(ia, ib, fa, fb, count);
                } else {
                    IntEuclid<true>(ia, ib, fa, fb, count);
                }
                Add(yLocal, ia, ib, count);
            }
        } else {
            Cast(fa, x1Local, RoundMode::CAST_NONE, count);
            Cast(fb, x2Local, RoundMode::CAST_NONE, count);
            Abs(fa, fa, count);
            Abs(fb, fb, count);
            FloatEuclid(fa, fb, t, count);
            Add(fa, fa, fb, count);
            // 2^15 wraps to -2^15: g - 65536 * floor(g / 32768), g <= 32768.
            Muls(t, fa, 1.0f / WRAP16, count);
            Cast(t, t, RoundMode::CAST_FLOOR, count);
            Muls(t, t, 2.0f * WRAP16, count);
            Sub(fa, fa, t, count);
            Cast(yLocal, fa, RoundMode::CAST_RINT, count);
        }
        inQueueX1.FreeTensor(x1Local);
        inQueueX2.FreeTensor(x2Local);
        outQueueY.EnQue<T>(yLocal);
    }

    __aicore__ inline void CopyOut(uint32_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        uint64_t offset = static_cast<uint64_t>(row) * cols + colOff;
        if (nRows == 1 && (len * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, len);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(len * sizeof(T)), 0,
                                         static_cast<uint32_t>((cols - len) * sizeof(T)), 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX1;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX2;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> fBuf[5];
    TBuf<TPosition::VECCALC> iBuf[2];
    TBuf<TPosition::VECCALC> redBuf;
    TBuf<TPosition::VECCALC> redTmpBuf;
    GlobalTensor<T> x1Gm;
    GlobalTensor<T> x2Gm;
    GlobalTensor<T> yGm;
    uint32_t outDims[OUTER_DIMS];
    uint32_t strides1[OUTER_DIMS];
    uint32_t strides2[OUTER_DIMS];
    uint64_t unitStart = 0;
    uint64_t unitCount = 0;
    uint32_t rows = 0;
    uint32_t cols = 0;
    uint32_t inner1 = 1;
    uint32_t inner2 = 1;
    uint32_t chunkLen = 0;
    uint32_t chunkNum = 1;
    uint32_t tileRows = 1;
    uint32_t minIters = 1;
    uint32_t checkEvery = 1;
    int32_t vsEvent = 0;
};

extern "C" __global__ __aicore__ void gcd(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelGcd<int16_t> op;
        op.Init(x1, x2, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelGcd<int32_t> op;
        op.Init(x1, x2, y, tilingData, &pipe);
        op.Process();
    }
}
