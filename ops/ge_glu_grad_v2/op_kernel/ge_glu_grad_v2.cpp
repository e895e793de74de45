// GeGluGradV2 kernel: x = [A | B] along dim (rows of two halves of rowLen
// elements, see op_host/ge_glu_grad_v2_tiling.h); X is the activated half
// (B, or A with activate_left), Z the other. With dy and the saved forward
// output gelu (rows x rowLen):
//   dx[Z's place] = dy * gelu
//   dx[X's place] = dy * Z * GELU'(X)
// computed in float32 (16-bit tiles are cast up in UB and rounded back with
// RINT). GELU' is composed of basic vector ops:
//   tanh form: s = 1 / (1 + exp(-x (K0 + K1 x^2))) (= 0.5 (1 + tanh(u))),
//     GELU'(x) = s + x (C3 + C2 x^2) s (1 - s), the exact derivative of the
//     tanh form (C3 = K0, C2 = 3 K1);
//   erf form: GELU'(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2/2)/sqrt(2 pi),
//     Phi(x) = 1 - h (x >= 0) or h (x < 0), h = 0.5 erfc(|x| / sqrt 2) from
//     Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7); the branch is a
//     Compares bit mask and a Select.
// Divisions 1 / v are Divs (the device's Reciprocal is not accurate enough).
//
// Every vector core takes a balanced range of units (rows, or row chunks for
// long rows) and streams it through UB with double-buffered queues, so MTE2,
// V and MTE3 overlap. The four inputs of a tile share one input queue slot
// and the two halves of dx one output slot, so a tile costs one EnQue/DeQue
// per direction (one DMA completion latency, not one per copy). In rows mode
// a tile holds several rows: each half of x (and of dx) moves with one
// strided DataCopyPad, each row padded to a 32 B block in UB, and every
// vector op covers the whole tile (rounded up to a whole 256 B repeat, as
// Compares needs).
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
constexpr float GELU_C2 = 0.2140644488178027f;   // 3 K1
// erf form (A&S 7.1.26 on z = |x| / sqrt 2, coefficients halved for 0.5 erfc).
constexpr float ERF_P = 0.2316418889f;           // 0.3275911 / sqrt 2
constexpr float ERF_A1 = 0.127414796f;
constexpr float ERF_A2 = -0.142248368f;
constexpr float ERF_A3 = 0.7107068705f;
constexpr float ERF_A4 = -0.7265760135f;
constexpr float ERF_A5 = 0.5307027145f;
constexpr float ERF_CLAMP = 40.0f;               // exp(-x^2/2) = 0 in float beyond this |x|
constexpr float INV_SQRT_2PI = 0.3989422804014327f;

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

// dst = 1 / src (count a multiple of 64) as a Div whose dividend is one 256 B
// block of ones read with repeat stride 0.
__aicore__ inline void DivInto1(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                const LocalTensor<float>& ones, uint32_t count)
{
    uint32_t repeats = count / REPEAT_FLOATS;
    for (uint32_t r = 0; r < repeats; r += MAX_REPEAT) {
        uint32_t n = repeats - r < MAX_REPEAT ? repeats - r : MAX_REPEAT;
        Div(dst[r * REPEAT_FLOATS], ones, src[r * REPEAT_FLOATS], static_cast<uint64_t>(REPEAT_FLOATS),
            static_cast<uint8_t>(n), BinaryRepeatParams(1, 1, 1, 8, 0, 8));
    }
}

// b = GELU'(x), tanh form; a, b, c are work buffers.
__aicore__ inline void GeluGradTanh(const LocalTensor<float>& x, const LocalTensor<float>& a,
                                    const LocalTensor<float>& b, const LocalTensor<float>& c,
                                    const LocalTensor<float>& ones, uint32_t count)
{
    Mul(a, x, x, count);
    Muls(c, a, -GELU_K1, count);
    Adds(c, c, -GELU_K0, count);
    Mul(c, c, x, count);
    Exp(c, c, count);
    Adds(c, c, 1.0f, count);
    DivInto1(c, c, ones, count);  // c = s
    Muls(b, a, GELU_C2, count);
    Adds(b, b, GELU_K0, count);
    Mul(b, b, x, count);          // b = x (C3 + C2 x^2)
    Mul(a, c, c, count);
    Sub(a, c, a, count);          // a = s (1 - s)
    Mul(b, b, a, count);
    Add(b, b, c, count);
}

// t = GELU'(x), erf form; m, t, p are work buffers, mask holds count bits.
__aicore__ inline void GeluGradErf(const LocalTensor<float>& x, const LocalTensor<float>& m,
                                   const LocalTensor<float>& t, const LocalTensor<float>& p,
                                   const LocalTensor<uint8_t>& mask, const LocalTensor<float>& ones, uint32_t count)
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
    Mul(p, p, t, count);          // p = 0.5 t P(t)
    Mul(t, m, m, count);
    Muls(t, t, -0.5f, count);
    Exp(t, t, count);             // t = exp(-x^2 / 2)
    Mul(p, p, t, count);          // p = h = Phi(-|x|)
    Mul(m, x, t, count);
    Muls(m, m, INV_SQRT_2PI, count);  // m = x phi(x)
    Muls(t, p, -1.0f, count);
    Adds(t, t, 1.0f, count);      // t = 1 - h
    Compares(mask, x, 0.0f, CMPMODE::GE, count);
    Select(t, mask, t, p, SELMODE::VSEL_TENSOR_TENSOR_MODE, count);  // t = Phi(x)
    Add(t, t, m, count);
}

template <typename T, int32_t APPROX, int32_t MODE>
class KernelGeGluGrad {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;
    static constexpr uint32_t ELEMS_PER_BLOCK = BLOCK_BYTES / sizeof(T);

public:
    __aicore__ inline KernelGeGluGrad() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR dy, GM_ADDR x, GM_ADDR gelu, GM_ADDR dx, const TilingData& tiling,
                                TPipe* pipe)
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
        dyGm.SetGlobalBuffer((__gm__ T*)dy, total);
        xGm.SetGlobalBuffer((__gm__ T*)x, 2 * total);
        geluGm.SetGlobalBuffer((__gm__ T*)gelu, total);
        dxGm.SetGlobalBuffer((__gm__ T*)dx, 2 * total);

        tileElems = tiling.tileElems;
        uint32_t bufferNum = tiling.bufferNum;
        pipe->InitBuffer(inQueue, bufferNum, IN_NUM * tileElems * sizeof(T));
        pipe->InitBuffer(outQueue, bufferNum, OUT_NUM * tileElems * sizeof(T));
        pipe->InitBuffer(tmpBuf0, tileElems * sizeof(float));
        pipe->InitBuffer(tmpBuf1, tileElems * sizeof(float));
        pipe->InitBuffer(tmpBuf2, tileElems * sizeof(float));
        pipe->InitBuffer(maskBuf, tileElems / 8);
        pipe->InitBuffer(onesBuf, REPEAT_FLOATS * sizeof(float));
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(castBuf0, tileElems * sizeof(float));
            pipe->InitBuffer(castBuf1, tileElems * sizeof(float));
        }
        Duplicate(onesBuf.Get<float>(), 1.0f, REPEAT_FLOATS);
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
                Compute(AlignUp(nRows * rowStride, REPEAT_FLOATS));
                CopyOutRows(row, nRows);
            }
        } else {
            for (uint64_t u = unitStart; u < unitStart + unitCount; u++) {
                uint64_t row = u / chunksPerRow;
                uint32_t start = static_cast<uint32_t>(u % chunksPerRow) * chunkLen;
                uint32_t len = rowLen - start < chunkLen ? rowLen - start : chunkLen;
                CopyInChunk(row, start, len);
                Compute(AlignUp(len, REPEAT_FLOATS));
                CopyOutChunk(row, start, len);
            }
        }
    }

private:
    // Sub-tiles of the input slot (dy, gelu, Z, X) and of the output slot
    // (dZ, dX).
    static constexpr uint32_t IN_NUM = 4;
    static constexpr uint32_t OUT_NUM = 2;
    static constexpr uint32_t DY = 0;
    static constexpr uint32_t GELU = 1;
    static constexpr uint32_t LIN = 2;
    static constexpr uint32_t ACT = 3;
    static constexpr uint32_t D_LIN = 0;
    static constexpr uint32_t D_ACT = 1;

    // nRows rows of rowLen elements at gm[offset], `srcGap` elements apart,
    // into UB rows of rowStride elements.
    __aicore__ inline void CopyRowsIn(const LocalTensor<T>& local, const GlobalTensor<T>& gm, uint64_t offset,
                                      uint32_t nRows, uint32_t srcGap)
    {
        if (srcGap == 0 && rowLen == rowStride) {
            DataCopy(local, gm[offset], nRows * rowLen);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(rowLen * sizeof(T)),
                                         static_cast<uint32_t>(srcGap * sizeof(T)), 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(local, gm[offset], copyParams, padParams);
        }
    }

    __aicore__ inline void CopyInRows(uint64_t row, uint32_t nRows)
    {
        LocalTensor<T> local = inQueue.AllocTensor<T>();
        CopyRowsIn(local[DY * tileElems], dyGm, row * rowLen, nRows, 0);
        CopyRowsIn(local[GELU * tileElems], geluGm, row * rowLen, nRows, 0);
        CopyRowsIn(local[LIN * tileElems], xGm, row * 2 * rowLen + linOffset, nRows, rowLen);
        CopyRowsIn(local[ACT * tileElems], xGm, row * 2 * rowLen + actOffset, nRows, rowLen);
        inQueue.EnQue(local);
    }

    __aicore__ inline void CopyRowsOut(const LocalTensor<T>& local, uint64_t offset, uint32_t nRows)
    {
        DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(rowLen * sizeof(T)), 0,
                                     static_cast<uint32_t>(rowLen * sizeof(T)), 0};
        DataCopyPad(dxGm[offset], local, copyParams);
    }

    __aicore__ inline void CopyOutRows(uint64_t row, uint32_t nRows)
    {
        LocalTensor<T> local = outQueue.DeQue<T>();
        CopyRowsOut(local[D_LIN * tileElems], row * 2 * rowLen + linOffset, nRows);
        CopyRowsOut(local[D_ACT * tileElems], row * 2 * rowLen + actOffset, nRows);
        outQueue.FreeTensor(local);
    }

    __aicore__ inline void CopyChunkIn(const LocalTensor<T>& local, const GlobalTensor<T>& gm, uint64_t offset,
                                       uint32_t len)
    {
        if ((len * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(local, gm[offset], len);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(local, gm[offset], copyParams, padParams);
        }
    }

    __aicore__ inline void CopyInChunk(uint64_t row, uint32_t start, uint32_t len)
    {
        LocalTensor<T> local = inQueue.AllocTensor<T>();
        CopyChunkIn(local[DY * tileElems], dyGm, row * rowLen + start, len);
        CopyChunkIn(local[GELU * tileElems], geluGm, row * rowLen + start, len);
        CopyChunkIn(local[LIN * tileElems], xGm, row * 2 * rowLen + linOffset + start, len);
        CopyChunkIn(local[ACT * tileElems], xGm, row * 2 * rowLen + actOffset + start, len);
        inQueue.EnQue(local);
    }

    __aicore__ inline void CopyChunkOut(const LocalTensor<T>& local, uint64_t offset, uint32_t len)
    {
        if ((len * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(dxGm[offset], local, len);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            DataCopyPad(dxGm[offset], local, copyParams);
        }
    }

    __aicore__ inline void CopyOutChunk(uint64_t row, uint32_t start, uint32_t len)
    {
        LocalTensor<T> local = outQueue.DeQue<T>();
        CopyChunkOut(local[D_LIN * tileElems], row * 2 * rowLen + linOffset + start, len);
        CopyChunkOut(local[D_ACT * tileElems], row * 2 * rowLen + actOffset + start, len);
        outQueue.FreeTensor(local);
    }

    // GELU'(x) into one of the work buffers, returned.
    __aicore__ inline LocalTensor<float> GeluGrad(const LocalTensor<float>& x, uint32_t count)
    {
        LocalTensor<float> t0 = tmpBuf0.Get<float>();
        LocalTensor<float> t1 = tmpBuf1.Get<float>();
        LocalTensor<float> t2 = tmpBuf2.Get<float>();
        LocalTensor<float> ones = onesBuf.Get<float>();
        if constexpr (APPROX == 0) {
            GeluGradErf(x, t0, t1, t2, maskBuf.Get<uint8_t>(), ones, count);
        } else {
            GeluGradTanh(x, t0, t1, t2, ones, count);
        }
        return t1;
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<T> inLocal = inQueue.DeQue<T>();
        LocalTensor<T> outLocal = outQueue.AllocTensor<T>();
        LocalTensor<T> dyLocal = inLocal[DY * tileElems];
        LocalTensor<T> geluLocal = inLocal[GELU * tileElems];
        LocalTensor<T> linLocal = inLocal[LIN * tileElems];
        LocalTensor<T> actLocal = inLocal[ACT * tileElems];
        LocalTensor<T> dLinLocal = outLocal[D_LIN * tileElems];
        LocalTensor<T> dActLocal = outLocal[D_ACT * tileElems];
        if constexpr (IS_FLOAT) {
            Mul(dLinLocal, dyLocal, geluLocal, count);
            Mul(linLocal, linLocal, dyLocal, count);  // dy * Z
            LocalTensor<float> grad = GeluGrad(actLocal, count);
            Mul(dActLocal, grad, linLocal, count);
        } else {
            LocalTensor<float> dyZ = castBuf0.Get<float>();
            LocalTensor<float> xf = castBuf1.Get<float>();
            LocalTensor<float> t0 = tmpBuf0.Get<float>();
            Cast(dyZ, dyLocal, RoundMode::CAST_NONE, count);
            Cast(t0, geluLocal, RoundMode::CAST_NONE, count);
            Mul(t0, t0, dyZ, count);
            Cast(dLinLocal, t0, RoundMode::CAST_RINT, count);
            Cast(t0, linLocal, RoundMode::CAST_NONE, count);
            Mul(dyZ, dyZ, t0, count);
            Cast(xf, actLocal, RoundMode::CAST_NONE, count);
            LocalTensor<float> grad = GeluGrad(xf, count);
            Mul(grad, grad, dyZ, count);
            Cast(dActLocal, grad, RoundMode::CAST_RINT, count);
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
    TBuf<TPosition::VECCALC> castBuf0;
    TBuf<TPosition::VECCALC> castBuf1;
    TBuf<TPosition::VECCALC> maskBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    GlobalTensor<T> dyGm;
    GlobalTensor<T> xGm;
    GlobalTensor<T> geluGm;
    GlobalTensor<T> dxGm;
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
__aicore__ inline void RunGeGluGrad(GM_ADDR dy, GM_ADDR x, GM_ADDR gelu, GM_ADDR dx, const TilingData& tiling,
                                    TPipe* pipe)
{
    KernelGeGluGrad<T, APPROX, MODE> op;
    op.Init(dy, x, gelu, dx, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void ge_glu_grad_v2(GM_ADDR dy, GM_ADDR x, GM_ADDR gelu, GM_ADDR dx,
                                                     GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(101)) {
        RunGeGluGrad<half, 0, MODE_ROWS>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(102)) {
        RunGeGluGrad<half, 0, MODE_SPLIT>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(111)) {
        RunGeGluGrad<half, 1, MODE_ROWS>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(112)) {
        RunGeGluGrad<half, 1, MODE_SPLIT>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(201)) {
        RunGeGluGrad<float, 0, MODE_ROWS>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(202)) {
        RunGeGluGrad<float, 0, MODE_SPLIT>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(211)) {
        RunGeGluGrad<float, 1, MODE_ROWS>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(212)) {
        RunGeGluGrad<float, 1, MODE_SPLIT>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(301)) {
        RunGeGluGrad<bfloat16_t, 0, MODE_ROWS>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(302)) {
        RunGeGluGrad<bfloat16_t, 0, MODE_SPLIT>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(311)) {
        RunGeGluGrad<bfloat16_t, 1, MODE_ROWS>(dy, x, gelu, dx, tilingData, &pipe);
    } else if (TILING_KEY_IS(312)) {
        RunGeGluGrad<bfloat16_t, 1, MODE_SPLIT>(dy, x, gelu, dx, tilingData, &pipe);
    }
}
