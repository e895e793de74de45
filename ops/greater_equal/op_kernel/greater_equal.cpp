// GreaterEqual kernel: y = x1 >= x2, elementwise, bool output (one byte, 0
// or 1).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose byte size is not
// a multiple of 32 B moves with DataCopyPad.
//
// Per tile: a vector Compare writes one bit per element (IEEE: NaN compares
// false, -0 == +0), Select turns the bits into half 1.0 / 0.0, and a Cast
// half -> uint8 gives the bool bytes. Compare works on whole 256 B repeats,
// so it runs over the tile length rounded up to a repeat (the tiling makes
// tiles multiples of 256 elements); the extra lanes are never copied out.
// Paths by dtype (Atlas A2 compares half and float, and int32 only for EQ):
//   PATH_DIRECT  float16, float32: Compare in the dtype;
//   PATH_INT32   int32 ordering: the sign of x1 - x2 without overflow:
//                h = (x1 >> 1) - (x2 >> 1) (no overflow), l = (x1 - x2) - 2h
//                in wrapping int32 arithmetic (the true difference is 2h + l,
//                so l is -1, 0 or 1), d = 2 * float(h) + float(l). float(h)
//                keeps h's sign and |2h| >= 2 > |l| when h != 0, so d has the
//                sign of x1 - x2 exactly; Compares(d, 0).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t REPEAT_BYTES = 256;

constexpr int32_t PATH_DIRECT = 1;
constexpr int32_t PATH_INT32 = 4;

// The type a path compares in.
template <typename T, int32_t PATH>
struct CompareType {
    using Type = T;
};
template <typename T>
struct CompareType<T, PATH_INT32> {
    using Type = float;
};

template <typename T, int32_t PATH, CMPMODE MODE>
class KernelCompare {
    using C = typename CompareType<T, PATH>::Type;
    static constexpr uint32_t CMP_ALIGN = REPEAT_BYTES / sizeof(C);

public:
    __aicore__ inline KernelCompare() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
    {
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t bigUnits = static_cast<uint64_t>(tiling.blockUnits) + 1;
        uint64_t startUnit;
        uint64_t units;
        if (blockIdx < tiling.tailCoreNum) {
            startUnit = blockIdx * bigUnits;
            units = bigUnits;
        } else {
            startUnit = tiling.tailCoreNum * bigUnits + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            units = tiling.blockUnits;
        }
        uint64_t start = startUnit * tiling.unitLength;
        uint64_t length = units * tiling.unitLength;
        if (start >= tiling.totalLength) {
            length = 0;
        } else if (start + length > tiling.totalLength) {
            length = tiling.totalLength - start;
        }
        blockLength = static_cast<uint32_t>(length);
        tileLength = tiling.tileLength;

        x1Gm.SetGlobalBuffer((__gm__ T*)x1 + start, blockLength);
        x2Gm.SetGlobalBuffer((__gm__ T*)x2 + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ uint8_t*)y + start, blockLength);
        pipe->InitBuffer(inQueueX1, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(inQueueX2, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(uint8_t));
        pipe->InitBuffer(maskBuf, tileLength / 8);
        pipe->InitBuffer(onesBuf, tileLength * sizeof(half));
        if constexpr (PATH == PATH_INT32) {
            pipe->InitBuffer(aBuf, tileLength * sizeof(T));
            pipe->InitBuffer(bBuf, tileLength * sizeof(T));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        LocalTensor<half> ones = onesBuf.Get<half>();
        Duplicate(ones, static_cast<half>(1.0f), tileLength);
        uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
        uint32_t lastLength = blockLength - (tileNum - 1) * tileLength;
        for (uint32_t i = 0; i < tileNum; i++) {
            uint32_t length = (i + 1 == tileNum) ? lastLength : tileLength;
            CopyIn(i, length);
            Compute(length);
            CopyOut(i, length);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress, uint32_t length)
    {
        LocalTensor<T> x1Local = inQueueX1.AllocTensor<T>();
        LocalTensor<T> x2Local = inQueueX2.AllocTensor<T>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(x1Local, x1Gm[offset], length);
            DataCopy(x2Local, x2Gm[offset], length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(x1Local, x1Gm[offset], copyParams, padParams);
            DataCopyPad(x2Local, x2Gm[offset], copyParams, padParams);
        }
        inQueueX1.EnQue(x1Local);
        inQueueX2.EnQue(x2Local);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> x1Local = inQueueX1.DeQue<T>();
        LocalTensor<T> x2Local = inQueueX2.DeQue<T>();
        LocalTensor<uint8_t> yLocal = outQueueY.AllocTensor<uint8_t>();
        LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
        uint32_t cmpCount = (length + CMP_ALIGN - 1) / CMP_ALIGN * CMP_ALIGN;
        LocalTensor<half> sel;
        if constexpr (PATH == PATH_DIRECT) {
            Compare(mask, x1Local, x2Local, MODE, cmpCount);
            sel = x1Local.template ReinterpretCast<half>();
        } else if constexpr (PATH == PATH_INT32) {
            LocalTensor<float> d = SignOfDifference(x1Local, x2Local, cmpCount);
            Compares(mask, d, 0.0f, MODE, cmpCount);
            sel = x1Local.template ReinterpretCast<half>();
        }
        Select(sel, mask, onesBuf.Get<half>(), static_cast<half>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, length);
        Cast(yLocal, sel, RoundMode::CAST_NONE, length);
        outQueueY.EnQue<uint8_t>(yLocal);
        inQueueX1.FreeTensor(x1Local);
        inQueueX2.FreeTensor(x2Local);
    }

    // The sign of a - b for `count` int32 lanes as a float32 tensor (bBuf):
    // h = (a >> 1) - (b >> 1) never overflows; l = (a - b) - 2h is -1, 0 or 1
    // in wrapping arithmetic (a - b = 2h + l); d = 2 * float(h) + float(l).
    __aicore__ inline LocalTensor<float> SignOfDifference(const LocalTensor<int32_t>& a, const LocalTensor<int32_t>& b,
                                                          uint32_t count)
    {
        LocalTensor<int32_t> h = aBuf.Get<int32_t>();
        LocalTensor<int32_t> l = bBuf.Get<int32_t>();
        ShiftRight(h, a, static_cast<int32_t>(1), count);
        ShiftRight(l, b, static_cast<int32_t>(1), count);
        Sub(h, h, l, count);  // h = (a >> 1) - (b >> 1)
        Sub(l, a, b, count);  // a - b, wrapping
        Sub(l, l, h, count);
        Sub(l, l, h, count);  // l = (a - b) - 2h in {-1, 0, 1}
        LocalTensor<float> hf = h.template ReinterpretCast<float>();
        LocalTensor<float> d = l.template ReinterpretCast<float>();
        Cast(hf, h, RoundMode::CAST_RINT, count);
        Cast(d, l, RoundMode::CAST_NONE, count);
        Axpy(d, hf, 2.0f, count);  // d = l + 2h
        return d;
    }

    __aicore__ inline void CopyOut(uint32_t progress, uint32_t length)
    {
        LocalTensor<uint8_t> yLocal = outQueueY.DeQue<uint8_t>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if (length % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, length);
        } else {
            DataCopyExtParams copyParams{1, length, 0, 0, 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX1;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX2;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> maskBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> aBuf;
    TBuf<TPosition::VECCALC> bBuf;
    GlobalTensor<T> x1Gm;
    GlobalTensor<T> x2Gm;
    GlobalTensor<uint8_t> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, int32_t PATH, CMPMODE MODE, typename TilingData>
__aicore__ inline void RunCompare(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelCompare<T, PATH, MODE> op;
    op.Init(x1, x2, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void greater_equal(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR workspace,
                                                    GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunCompare<half, PATH_DIRECT, CMPMODE::GE>(x1, x2, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunCompare<float, PATH_DIRECT, CMPMODE::GE>(x1, x2, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(6)) {
        RunCompare<int32_t, PATH_INT32, CMPMODE::GE>(x1, x2, y, tilingData, &pipe);
    }
}
