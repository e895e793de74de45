// SwiGluGrad kernel: the backward of y = SiLU(A) * B, A and B the halves of x
// along `dim`, viewed as [rows, 2, cols] (float16, float32, bfloat16;
// computed in float32). With g = y_grad and s = sigmoid(A):
//   dB = (A * s) * g,
//   dA = ((s * (1 + A * (1 - s))) * B) * g,
// written to the two halves of x_grad (laid out like x).
// sigmoid in an overflow-free form: s = exp(min(A, 0)) / (1 + exp(-|A|)).
// The bounded factors are formed first, so a product overflows only when the
// result does. Ops per tile: Abs, Muls, Exp, Adds, Mins, Exp, Div, then Mul,
// Mul for dB and Muls, Adds, Mul, Adds, Mul, Mul, Mul for dA (16-bit dtypes add
// three Casts in and two out).
//
// Work units are (row, column chunk) pairs split over the cores (tiling).
// With one chunk per row a tile holds tileRows rows, moved with one strided
// DataCopyPad per operand (rows padded to 32 B in UB); otherwise a tile is
// one chunk of a row. Double-buffered queues overlap MTE2, V and MTE3.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T>
class KernelSwiGluGrad {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;
    static constexpr uint32_t BLOCK_ELEMS = BLOCK_BYTES / sizeof(T);

public:
    __aicore__ inline KernelSwiGluGrad() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR yGrad, GM_ADDR x, GM_ADDR xGrad, const TilingData& tiling, TPipe* pipe)
    {
        cols = tiling.cols;
        chunkLen = tiling.chunkLen;
        chunkNum = tiling.chunkNum;
        tileRows = tiling.tileRows;
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        if (blockIdx < tiling.tailCoreNum) {
            unitStart = blockIdx * (tiling.blockUnits + 1);
            unitCount = tiling.blockUnits + 1;
        } else {
            unitStart = tiling.tailCoreNum * (tiling.blockUnits + 1) +
                        (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            unitCount = tiling.blockUnits;
        }
        uint64_t halfElems = static_cast<uint64_t>(tiling.rows) * cols;
        gGm.SetGlobalBuffer((__gm__ T*)yGrad, halfElems);
        xGm.SetGlobalBuffer((__gm__ T*)x, halfElems * 2);
        dxGm.SetGlobalBuffer((__gm__ T*)xGrad, halfElems * 2);
        uint32_t tileBytes = tiling.tileElems * sizeof(T);
        uint32_t floatBytes = tiling.tileElems * sizeof(float);
        pipe->InitBuffer(inQueueA, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(inQueueB, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(inQueueG, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(outQueueDa, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(outQueueDb, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(t0Buf, floatBytes);
        pipe->InitBuffer(t1Buf, floatBytes);
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(t2Buf, floatBytes);
            pipe->InitBuffer(t3Buf, floatBytes);
        }
    }

    __aicore__ inline void Process()
    {
        uint64_t unit = unitStart;
        uint64_t unitEnd = unitStart + unitCount;
        while (unit < unitEnd) {
            uint64_t row;
            uint32_t nRows;
            uint32_t colOff;
            uint32_t len;
            if (chunkNum == 1) {
                row = unit;
                nRows = unitEnd - unit < tileRows ? static_cast<uint32_t>(unitEnd - unit) : tileRows;
                colOff = 0;
                len = cols;
            } else {
                row = unit / chunkNum;
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

    // nRows runs of len elements, `gap` elements apart in GM, into UB rows
    // padded to 32 B.
    __aicore__ inline void CopyRowsIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t nRows,
                                      uint32_t len, uint64_t gap)
    {
        if (nRows == 1 && (len * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(dst, src, len);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(len * sizeof(T)),
                                         static_cast<uint32_t>(gap * sizeof(T)), 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(dst, src, copyParams, padParams);
        }
    }

    __aicore__ inline void CopyRowsOut(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t nRows,
                                       uint32_t len, uint64_t gap)
    {
        if (nRows == 1 && (len * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(dst, src, len);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(len * sizeof(T)), 0,
                                         static_cast<uint32_t>(gap * sizeof(T)), 0};
            DataCopyPad(dst, src, copyParams);
        }
    }

    __aicore__ inline void CopyIn(uint64_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        uint64_t aOffset = row * cols * 2 + colOff;
        uint64_t xGap = static_cast<uint64_t>(cols) * 2 - len;
        LocalTensor<T> aLocal = inQueueA.AllocTensor<T>();
        LocalTensor<T> bLocal = inQueueB.AllocTensor<T>();
        LocalTensor<T> gLocal = inQueueG.AllocTensor<T>();
        CopyRowsIn(aLocal, xGm[aOffset], nRows, len, xGap);
        CopyRowsIn(bLocal, xGm[aOffset + cols], nRows, len, xGap);
        CopyRowsIn(gLocal, gGm[row * cols + colOff], nRows, len, cols - len);
        inQueueA.EnQue(aLocal);
        inQueueB.EnQue(bLocal);
        inQueueG.EnQue(gLocal);
    }

    // d = 1 + exp(-|a|), s = exp(min(a, 0)) / d.
    __aicore__ inline void Sigmoid(const LocalTensor<float>& s, const LocalTensor<float>& d,
                                   const LocalTensor<float>& a, uint32_t count)
    {
        Abs(d, a, count);
        Muls(d, d, -1.0f, count);
        Exp(d, d, count);
        Adds(d, d, 1.0f, count);
        Mins(s, a, 0.0f, count);
        Exp(s, s, count);
        Div(s, s, d, count);
    }

    // k = s * (1 + a * (1 - s)), in place of t.
    __aicore__ inline void Factor(const LocalTensor<float>& t, const LocalTensor<float>& s,
                                  const LocalTensor<float>& a, uint32_t count)
    {
        Muls(t, s, -1.0f, count);
        Adds(t, t, 1.0f, count);
        Mul(t, t, a, count);
        Adds(t, t, 1.0f, count);
        Mul(t, t, s, count);
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<T> aLocal = inQueueA.DeQue<T>();
        LocalTensor<T> bLocal = inQueueB.DeQue<T>();
        LocalTensor<T> gLocal = inQueueG.DeQue<T>();
        LocalTensor<T> daLocal = outQueueDa.AllocTensor<T>();
        LocalTensor<T> dbLocal = outQueueDb.AllocTensor<T>();
        LocalTensor<float> t0 = t0Buf.Get<float>();
        LocalTensor<float> t1 = t1Buf.Get<float>();
        if constexpr (IS_FLOAT) {
            Sigmoid(t1, t0, aLocal, count);  // t1 = s
            Mul(t0, aLocal, t1, count);
            Mul(dbLocal, t0, gLocal, count);
            Factor(t0, t1, aLocal, count);
            Mul(t0, t0, bLocal, count);
            Mul(daLocal, t0, gLocal, count);
        } else {
            LocalTensor<float> t2 = t2Buf.Get<float>();
            LocalTensor<float> t3 = t3Buf.Get<float>();
            Cast(t0, aLocal, RoundMode::CAST_NONE, count);  // a
            Sigmoid(t2, t1, t0, count);                       // t2 = s
            Cast(t1, gLocal, RoundMode::CAST_NONE, count);   // g
            Mul(t3, t0, t2, count);
            Mul(t3, t3, t1, count);
            Cast(dbLocal, t3, RoundMode::CAST_RINT, count);
            Factor(t3, t2, t0, count);
            Cast(t0, bLocal, RoundMode::CAST_NONE, count);   // b
            Mul(t3, t3, t0, count);
            Mul(t3, t3, t1, count);
            Cast(daLocal, t3, RoundMode::CAST_RINT, count);
        }
        inQueueA.FreeTensor(aLocal);
        inQueueB.FreeTensor(bLocal);
        inQueueG.FreeTensor(gLocal);
        outQueueDa.EnQue<T>(daLocal);
        outQueueDb.EnQue<T>(dbLocal);
    }

    __aicore__ inline void CopyOut(uint64_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        uint64_t aOffset = row * cols * 2 + colOff;
        uint64_t gap = static_cast<uint64_t>(cols) * 2 - len;
        LocalTensor<T> daLocal = outQueueDa.DeQue<T>();
        LocalTensor<T> dbLocal = outQueueDb.DeQue<T>();
        CopyRowsOut(dxGm[aOffset], daLocal, nRows, len, gap);
        CopyRowsOut(dxGm[aOffset + cols], dbLocal, nRows, len, gap);
        outQueueDa.FreeTensor(daLocal);
        outQueueDb.FreeTensor(dbLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueA;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueB;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueG;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueDa;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueDb;
    TBuf<TPosition::VECCALC> t0Buf;
    TBuf<TPosition::VECCALC> t1Buf;
    TBuf<TPosition::VECCALC> t2Buf;
    TBuf<TPosition::VECCALC> t3Buf;
    GlobalTensor<T> gGm;
    GlobalTensor<T> xGm;
    GlobalTensor<T> dxGm;
    uint64_t unitStart = 0;
    uint64_t unitCount = 0;
    uint32_t cols = 0;
    uint32_t chunkLen = 0;
    uint32_t chunkNum = 1;
    uint32_t tileRows = 1;
};

extern "C" __global__ __aicore__ void swi_glu_grad(GM_ADDR y_grad, GM_ADDR x, GM_ADDR x_grad, GM_ADDR workspace,
                                                   GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelSwiGluGrad<half> op;
        op.Init(y_grad, x, x_grad, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelSwiGluGrad<float> op;
        op.Init(y_grad, x, x_grad, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelSwiGluGrad<bfloat16_t> op;
        op.Init(y_grad, x, x_grad, tilingData, &pipe);
        op.Process();
    }
}
