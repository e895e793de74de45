// GeGluV3 kernel: x = [A | B] along dim (rows of two halves of rowLen
// elements, see op_host/ge_glu_v3_tiling.h); the activated half X (B, or A
// with activate_left) and the other half Z give
//   gelu = GELU(X)        y = gelu * Z
// computed in float32 (16-bit tiles are cast up in UB and rounded back with
// RINT). GELU is composed of basic vector ops:
//   tanh form: GELU(x) = x / (1 + exp(-x * (K0 + K1 x^2))), which equals
//     0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), K0 = 2 sqrt(2/pi),
//     K1 = 0.044715 K0;
//   erf form:  GELU(x) = relu(x) - |x| h(x), h = 0.5 erfc(|x| / sqrt 2) from
//     Abramowitz & Stegun 7.1.26: erfc(z) = t P(t) exp(-z^2),
//     t = 1 / (1 + p z), |error of erf| <= 1.5e-7 (1 / v as a Div: the
//     device's Reciprocal is not accurate enough).
//
// Every vector core takes a balanced range of units (rows, or row chunks for
// long rows) and streams it through UB with double-buffered queues, so MTE2,
// V and MTE3 overlap. Both halves of a tile share one input queue slot and
// both outputs one output slot, so a tile costs one EnQue/DeQue per
// direction (one DMA completion latency, not one per copy). In rows mode a
// tile holds several rows: each half is one strided DataCopyPad (blockCount
// = rows, the other half skipped by the source stride), each row padded to a
// 32 B block in UB, and every vector op covers the whole tile.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t REPEAT_FLOATS = 64;  // floats per 256 B vector repeat
constexpr uint32_t MAX_REPEAT = 255;
constexpr int32_t MODE_ROWS = 1;
constexpr int32_t MODE_SPLIT = 2;

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

// dst = 1 / src as a Div whose dividend is one 256 B block of ones read with
// repeat stride 0 (Reciprocal misses 1e-4 on float, guide 6.2.3.3.1.4).
__aicore__ inline void DivInto1(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                const LocalTensor<float>& ones, uint32_t count)
{
    uint32_t repeats = count / REPEAT_FLOATS;
    for (uint32_t r = 0; r < repeats; r += MAX_REPEAT) {
        uint32_t n = repeats - r < MAX_REPEAT ? repeats - r : MAX_REPEAT;
        Div(dst[r * REPEAT_FLOATS], ones, src[r * REPEAT_FLOATS], static_cast<uint64_t>(REPEAT_FLOATS),
            static_cast<uint8_t>(n), BinaryRepeatParams(1, 1, 1, 8, 0, 8));
    }
    uint32_t tail = count - repeats * REPEAT_FLOATS;
    if (tail > 0) {
        Div(dst[repeats * REPEAT_FLOATS], ones, src[repeats * REPEAT_FLOATS], static_cast<uint64_t>(tail), 1,
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
    DivInto1(t, t, ones, count);
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

template <typename T, int32_t APPROX, int32_t MODE>
class KernelGeGlu {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;
    static constexpr uint32_t ELEMS_PER_BLOCK = BLOCK_BYTES / sizeof(T);

public:
    __aicore__ inline KernelGeGlu() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR gelu, const TilingData& tiling, TPipe* pipe)
    {
        rowLen = tiling.rowLen;
        rowStride = tiling.rowStride;
        chunkLen = tiling.chunkLen;
        chunksPerRow = tiling.chunksPerRow;
        tileRows = tiling.tileRows;
        actOffset = tiling.actOffset;
        linOffset = tiling.linOffset;

        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t units = static_cast<uint64_t>(tiling.rows) * chunksPerRow;
        uint64_t big = static_cast<uint64_t>(tiling.blockUnits) + 1;
        if (blockIdx < tiling.tailCoreNum) {
            unitStart = blockIdx * big;
            unitCount = big;
        } else {
            unitStart = tiling.tailCoreNum * big + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            unitCount = tiling.blockUnits;
        }
        if (unitStart >= units) {
            unitCount = 0;
        } else if (unitStart + unitCount > units) {
            unitCount = units - unitStart;
        }

        uint64_t total = static_cast<uint64_t>(tiling.rows) * rowLen;
        xGm.SetGlobalBuffer((__gm__ T*)x, 2 * total);
        yGm.SetGlobalBuffer((__gm__ T*)y, total);
        geluGm.SetGlobalBuffer((__gm__ T*)gelu, total);

        tileElems = tiling.tileElems;
        uint32_t bufferNum = tiling.bufferNum;
        pipe->InitBuffer(inQueue, bufferNum, 2 * tileElems * sizeof(T));    // activated half, other half
        pipe->InitBuffer(outQueue, bufferNum, 2 * tileElems * sizeof(T));   // gelu, y
        pipe->InitBuffer(tmpBuf0, tileElems * sizeof(float));
        if constexpr (APPROX == 0) {
            pipe->InitBuffer(tmpBuf1, tileElems * sizeof(float));
            pipe->InitBuffer(tmpBuf2, tileElems * sizeof(float));
            pipe->InitBuffer(onesBuf, REPEAT_FLOATS * sizeof(float));
            Duplicate(onesBuf.Get<float>(), 1.0f, REPEAT_FLOATS);
        }
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(castBuf, tileElems * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (unitCount == 0) {
            return;
        }
        if constexpr (MODE == MODE_ROWS) {
            uint32_t tileNum = (unitCount + tileRows - 1) / tileRows;
            for (uint32_t i = 0; i < tileNum; i++) {
                uint64_t row = unitStart + static_cast<uint64_t>(i) * tileRows;
                uint32_t nRows = unitCount - i * tileRows < tileRows ? unitCount - i * tileRows : tileRows;
                CopyInRows(row, nRows);
                Compute(nRows * rowStride);
                CopyOutRows(row, nRows);
            }
        } else {
            for (uint64_t u = unitStart; u < unitStart + unitCount; u++) {
                uint64_t row = u / chunksPerRow;
                uint32_t start = static_cast<uint32_t>(u % chunksPerRow) * chunkLen;
                uint32_t len = rowLen - start < chunkLen ? rowLen - start : chunkLen;
                uint64_t inOff = row * 2 * rowLen + start;
                uint64_t outOff = row * rowLen + start;
                CopyInChunk(inOff, len);
                Compute(AlignUp(len, ELEMS_PER_BLOCK));
                CopyOutChunk(outOff, len);
            }
        }
    }

private:
    // Rows [row, row + nRows) of one half: one strided copy, each row padded
    // to rowStride elements in UB.
    __aicore__ inline void CopyHalfRows(const LocalTensor<T>& local, uint64_t row, uint32_t nRows, uint32_t halfOffset)
    {
        DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(rowLen * sizeof(T)),
                                     static_cast<uint32_t>(rowLen * sizeof(T)), 0, 0};
        DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
        DataCopyPad(local, xGm[row * 2 * rowLen + halfOffset], copyParams, padParams);
    }

    __aicore__ inline void CopyInRows(uint64_t row, uint32_t nRows)
    {
        LocalTensor<T> local = inQueue.AllocTensor<T>();
        CopyHalfRows(local, row, nRows, actOffset);
        CopyHalfRows(local[tileElems], row, nRows, linOffset);
        inQueue.EnQue(local);
    }

    __aicore__ inline void CopyRowsOut(const GlobalTensor<T>& gm, const LocalTensor<T>& local, uint64_t row,
                                       uint32_t nRows)
    {
        if (rowLen == rowStride) {
            DataCopy(gm[row * rowLen], local, nRows * rowLen);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(rowLen * sizeof(T)), 0,
                                         0, 0};
            DataCopyPad(gm[row * rowLen], local, copyParams);
        }
    }

    __aicore__ inline void CopyOutRows(uint64_t row, uint32_t nRows)
    {
        LocalTensor<T> local = outQueue.DeQue<T>();
        CopyRowsOut(geluGm, local, row, nRows);
        CopyRowsOut(yGm, local[tileElems], row, nRows);
        outQueue.FreeTensor(local);
    }

    __aicore__ inline void CopyChunk(const LocalTensor<T>& local, uint64_t offset, uint32_t len)
    {
        if ((len * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(local, xGm[offset], len);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(local, xGm[offset], copyParams, padParams);
        }
    }

    __aicore__ inline void CopyInChunk(uint64_t inOff, uint32_t len)
    {
        LocalTensor<T> local = inQueue.AllocTensor<T>();
        CopyChunk(local, inOff + actOffset, len);
        CopyChunk(local[tileElems], inOff + linOffset, len);
        inQueue.EnQue(local);
    }

    __aicore__ inline void CopyChunkOut(const GlobalTensor<T>& gm, const LocalTensor<T>& local, uint64_t offset,
                                        uint32_t len)
    {
        if ((len * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(gm[offset], local, len);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            DataCopyPad(gm[offset], local, copyParams);
        }
    }

    __aicore__ inline void CopyOutChunk(uint64_t outOff, uint32_t len)
    {
        LocalTensor<T> local = outQueue.DeQue<T>();
        CopyChunkOut(geluGm, local, outOff, len);
        CopyChunkOut(yGm, local[tileElems], outOff, len);
        outQueue.FreeTensor(local);
    }

    __aicore__ inline void Gelu(const LocalTensor<float>& g, const LocalTensor<float>& x, uint32_t count)
    {
        LocalTensor<float> t0 = tmpBuf0.Get<float>();
        if constexpr (APPROX == 0) {
            GeluErf(g, x, t0, tmpBuf1.Get<float>(), tmpBuf2.Get<float>(), onesBuf.Get<float>(), count);
        } else {
            GeluTanh(g, x, t0, count);
        }
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<T> inLocal = inQueue.DeQue<T>();
        LocalTensor<T> outLocal = outQueue.AllocTensor<T>();
        LocalTensor<T> actLocal = inLocal;
        LocalTensor<T> linLocal = inLocal[tileElems];
        LocalTensor<T> geluLocal = outLocal;
        LocalTensor<T> yLocal = outLocal[tileElems];
        if constexpr (IS_FLOAT) {
            Gelu(geluLocal, actLocal, count);
            Mul(yLocal, linLocal, geluLocal, count);
        } else {
            LocalTensor<float> xf = castBuf.Get<float>();
            LocalTensor<float> gf = tmpBuf0.Get<float>();
            Cast(xf, actLocal, RoundMode::CAST_NONE, count);
            Gelu(gf, xf, count);
            Cast(geluLocal, gf, RoundMode::CAST_RINT, count);
            Cast(xf, linLocal, RoundMode::CAST_NONE, count);
            Mul(xf, xf, gf, count);
            Cast(yLocal, xf, RoundMode::CAST_RINT, count);
        }
        inQueue.FreeTensor(inLocal);
        outQueue.EnQue<T>(outLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> tmpBuf0;
    TBuf<TPosition::VECCALC> tmpBuf1;
    TBuf<TPosition::VECCALC> tmpBuf2;
    TBuf<TPosition::VECCALC> castBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    GlobalTensor<T> geluGm;
    uint64_t unitStart = 0;
    uint32_t unitCount = 0;
    uint32_t tileElems = 0;
    uint32_t rowLen = 0;
    uint32_t rowStride = 0;
    uint32_t chunkLen = 0;
    uint32_t chunksPerRow = 1;
    uint32_t tileRows = 1;
    uint32_t actOffset = 0;
    uint32_t linOffset = 0;
};

template <typename T, int32_t APPROX, int32_t MODE, typename TilingData>
__aicore__ inline void RunGeGlu(GM_ADDR x, GM_ADDR y, GM_ADDR gelu, const TilingData& tiling, TPipe* pipe)
{
    KernelGeGlu<T, APPROX, MODE> op;
    op.Init(x, y, gelu, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void ge_glu_v3(GM_ADDR x, GM_ADDR y, GM_ADDR gelu, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(101)) {
        RunGeGlu<half, 0, MODE_ROWS>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(102)) {
        RunGeGlu<half, 0, MODE_SPLIT>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(111)) {
        RunGeGlu<half, 1, MODE_ROWS>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(112)) {
        RunGeGlu<half, 1, MODE_SPLIT>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(201)) {
        RunGeGlu<float, 0, MODE_ROWS>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(202)) {
        RunGeGlu<float, 0, MODE_SPLIT>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(211)) {
        RunGeGlu<float, 1, MODE_ROWS>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(212)) {
        RunGeGlu<float, 1, MODE_SPLIT>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(301)) {
        RunGeGlu<bfloat16_t, 0, MODE_ROWS>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(302)) {
        RunGeGlu<bfloat16_t, 0, MODE_SPLIT>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(311)) {
        RunGeGlu<bfloat16_t, 1, MODE_ROWS>(x, y, gelu, tilingData, &pipe);
    } else if (TILING_KEY_IS(312)) {
        RunGeGlu<bfloat16_t, 1, MODE_SPLIT>(x, y, gelu, tilingData, &pipe);
    }
}
