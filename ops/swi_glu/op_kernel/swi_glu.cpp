// SwiGlu kernel: y = SiLU(A) * B = A * sigmoid(A) * B, A and B the halves of
// x along `dim`, viewed as [rows, 2, cols] (float16, float32, bfloat16;
// computed in float32).
//
// sigmoid in an overflow-free form: with m = exp(-|A|),
//   sigmoid(A) = exp(min(A, 0)) / (1 + m),
// so a large negative A gives its tiny sigmoid instead of A / inf = 0, and
// y = (sigmoid(A) * A) * B overflows only when the result does. Ops per
// tile: Abs, Muls, Exp, Adds, Mins, Exp, Div, Mul, Mul (16-bit dtypes add two
// Casts in and one out).
//
// Work units are (row, column chunk) pairs split over the cores (tiling).
// With one chunk per row a tile holds tileRows rows, moved with one strided
// DataCopyPad per operand (A and B skip each other's half, rows padded to
// 32 B in UB); otherwise a tile is one chunk of a row. Double-buffered
// queues overlap MTE2 (copy in), V and MTE3 (copy out).
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
class KernelSwiGlu {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;
    static constexpr uint32_t BLOCK_ELEMS = BLOCK_BYTES / sizeof(T);

public:
    __aicore__ inline KernelSwiGlu() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
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
        xGm.SetGlobalBuffer((__gm__ T*)x, static_cast<uint64_t>(tiling.rows) * cols * 2);
        yGm.SetGlobalBuffer((__gm__ T*)y, static_cast<uint64_t>(tiling.rows) * cols);
        uint32_t tileElems = tiling.tileElems;
        pipe->InitBuffer(inQueueA, tiling.bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(inQueueB, tiling.bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(dBuf, tileElems * sizeof(float));
        pipe->InitBuffer(sBuf, tileElems * sizeof(float));
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(afBuf, tileElems * sizeof(float));
            pipe->InitBuffer(bfBuf, tileElems * sizeof(float));
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
    __aicore__ inline void CopyRows(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t nRows,
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

    __aicore__ inline void CopyIn(uint64_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        uint64_t aOffset = row * cols * 2 + colOff;
        uint64_t gap = static_cast<uint64_t>(cols) * 2 - len;
        LocalTensor<T> aLocal = inQueueA.AllocTensor<T>();
        LocalTensor<T> bLocal = inQueueB.AllocTensor<T>();
        CopyRows(aLocal, xGm[aOffset], nRows, len, gap);
        CopyRows(bLocal, xGm[aOffset + cols], nRows, len, gap);
        inQueueA.EnQue(aLocal);
        inQueueB.EnQue(bLocal);
    }

    // yf = (sigmoid(af) * af) * bf, sigmoid(a) = exp(min(a, 0)) / (1 + exp(-|a|)).
    __aicore__ inline void SwiGluFloat(const LocalTensor<float>& yf, const LocalTensor<float>& af,
                                       const LocalTensor<float>& bf, uint32_t count)
    {
        LocalTensor<float> d = dBuf.Get<float>();
        LocalTensor<float> s = sBuf.Get<float>();
        Abs(d, af, count);
        Muls(d, d, -1.0f, count);
        Exp(d, d, count);
        Adds(d, d, 1.0f, count);
        Mins(s, af, 0.0f, count);
        Exp(s, s, count);
        Div(s, s, d, count);
        Mul(s, s, af, count);
        Mul(yf, s, bf, count);
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<T> aLocal = inQueueA.DeQue<T>();
        LocalTensor<T> bLocal = inQueueB.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            SwiGluFloat(yLocal, aLocal, bLocal, count);
        } else {
            LocalTensor<float> af = afBuf.Get<float>();
            LocalTensor<float> bf = bfBuf.Get<float>();
            Cast(af, aLocal, RoundMode::CAST_NONE, count);
            Cast(bf, bLocal, RoundMode::CAST_NONE, count);
            SwiGluFloat(af, af, bf, count);
            Cast(yLocal, af, RoundMode::CAST_RINT, count);
        }
        inQueueA.FreeTensor(aLocal);
        inQueueB.FreeTensor(bLocal);
        outQueueY.EnQue<T>(yLocal);
    }

    __aicore__ inline void CopyOut(uint64_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        uint64_t offset = row * cols + colOff;
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
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueA;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueB;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> dBuf;
    TBuf<TPosition::VECCALC> sBuf;
    TBuf<TPosition::VECCALC> afBuf;
    TBuf<TPosition::VECCALC> bfBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint64_t unitStart = 0;
    uint64_t unitCount = 0;
    uint32_t cols = 0;
    uint32_t chunkLen = 0;
    uint32_t chunkNum = 1;
    uint32_t tileRows = 1;
};

extern "C" __global__ __aicore__ void swi_glu(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelSwiGlu<half> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelSwiGlu<float> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelSwiGlu<bfloat16_t> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
