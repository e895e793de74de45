// Addcmul kernel: y = input_data + value * x1 * x2, elementwise (float16,
// float32, bfloat16, int32). Floats are computed in float32 (16-bit inputs are
// cast in and the result rounded once), int32 wraps. `value` is one element
// (read once per core; tiling key mode 0) or a tensor of the input's shape
// (streamed like the others; mode 1). Per tile: Mul, Muls or Mul, Add, in the
// order t = x1 * x2, t = value * t, y = input_data + t.
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose size is not a
// multiple of 32 B moves with DataCopyPad.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

// T: the dtype in GM; C: the compute dtype (float for floats, int32_t).
template <typename T, typename C, bool TENSOR_VALUE>
class KernelAddcmul {
    static constexpr bool CAST = sizeof(T) != sizeof(C);

public:
    __aicore__ inline KernelAddcmul() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR input, GM_ADDR x1, GM_ADDR x2, GM_ADDR value, GM_ADDR y,
                                const TilingData& tiling, TPipe* pipe)
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

        inGm.SetGlobalBuffer((__gm__ T*)input + start, blockLength);
        x1Gm.SetGlobalBuffer((__gm__ T*)x1 + start, blockLength);
        x2Gm.SetGlobalBuffer((__gm__ T*)x2 + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, blockLength);
        if constexpr (TENSOR_VALUE) {
            valueGm.SetGlobalBuffer((__gm__ T*)value + start, blockLength);
        } else {
            // One element: read it once per core.
            GlobalTensor<T> scalarGm;
            scalarGm.SetGlobalBuffer((__gm__ T*)value, 1);
            scalar = static_cast<C>(scalarGm.GetValue(0));
        }
        uint32_t tileBytes = tileLength * sizeof(T);
        pipe->InitBuffer(inQueueIn, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(inQueueX1, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(inQueueX2, tiling.bufferNum, tileBytes);
        if constexpr (TENSOR_VALUE) {
            pipe->InitBuffer(inQueueValue, tiling.bufferNum, tileBytes);
        }
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileBytes);
        if constexpr (CAST) {
            pipe->InitBuffer(aBuf, tileLength * sizeof(C));
            pipe->InitBuffer(bBuf, tileLength * sizeof(C));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
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
    __aicore__ inline void CopyTileIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t length)
    {
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(dst, src, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(dst, src, copyParams, padParams);
        }
    }

    // All copies of a tile are issued before the EnQue flags, so the DMAs
    // overlap their completion latency.
    __aicore__ inline void CopyIn(uint32_t progress, uint32_t length)
    {
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        LocalTensor<T> inLocal = inQueueIn.AllocTensor<T>();
        LocalTensor<T> x1Local = inQueueX1.AllocTensor<T>();
        LocalTensor<T> x2Local = inQueueX2.AllocTensor<T>();
        CopyTileIn(inLocal, inGm[offset], length);
        CopyTileIn(x1Local, x1Gm[offset], length);
        CopyTileIn(x2Local, x2Gm[offset], length);
        if constexpr (TENSOR_VALUE) {
            LocalTensor<T> valueLocal = inQueueValue.AllocTensor<T>();
            CopyTileIn(valueLocal, valueGm[offset], length);
            inQueueValue.EnQue(valueLocal);
        }
        inQueueIn.EnQue(inLocal);
        inQueueX1.EnQue(x1Local);
        inQueueX2.EnQue(x2Local);
    }

    // dst = in + value * (x1 * x2); x1 may be dst.
    __aicore__ inline void Arith(const LocalTensor<C>& dst, const LocalTensor<C>& in, const LocalTensor<C>& x1,
                                 const LocalTensor<C>& x2, const LocalTensor<C>& value, uint32_t length)
    {
        Mul(dst, x1, x2, length);
        if constexpr (TENSOR_VALUE) {
            Mul(dst, value, dst, length);
        } else {
            Muls(dst, dst, scalar, length);
        }
        Add(dst, in, dst, length);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> inLocal = inQueueIn.DeQue<T>();
        LocalTensor<T> x1Local = inQueueX1.DeQue<T>();
        LocalTensor<T> x2Local = inQueueX2.DeQue<T>();
        LocalTensor<T> valueLocal;
        if constexpr (TENSOR_VALUE) {
            valueLocal = inQueueValue.DeQue<T>();
        }
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        if constexpr (CAST) {
            // Two float32 buffers: a = x1, b = x2, a = a * b, b = value,
            // a = b * a (or a = a * value), b = input_data, a = b + a.
            LocalTensor<C> a = aBuf.Get<C>();
            LocalTensor<C> b = bBuf.Get<C>();
            Cast(a, x1Local, RoundMode::CAST_NONE, length);
            Cast(b, x2Local, RoundMode::CAST_NONE, length);
            Mul(a, a, b, length);
            if constexpr (TENSOR_VALUE) {
                Cast(b, valueLocal, RoundMode::CAST_NONE, length);
                Mul(a, b, a, length);
            } else {
                Muls(a, a, scalar, length);
            }
            Cast(b, inLocal, RoundMode::CAST_NONE, length);
            Add(a, b, a, length);
            Cast(yLocal, a, RoundMode::CAST_RINT, length);
        } else {
            Arith(yLocal, inLocal, x1Local, x2Local, valueLocal, length);
        }
        inQueueIn.FreeTensor(inLocal);
        inQueueX1.FreeTensor(x1Local);
        inQueueX2.FreeTensor(x2Local);
        if constexpr (TENSOR_VALUE) {
            inQueueValue.FreeTensor(valueLocal);
        }
        outQueueY.EnQue<T>(yLocal);
    }

    __aicore__ inline void CopyOut(uint32_t progress, uint32_t length)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueIn;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX1;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX2;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueValue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> aBuf;
    TBuf<TPosition::VECCALC> bBuf;
    GlobalTensor<T> inGm;
    GlobalTensor<T> x1Gm;
    GlobalTensor<T> x2Gm;
    GlobalTensor<T> valueGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
    C scalar = 0;
};

template <typename T, typename C, bool TENSOR_VALUE, typename TilingData>
__aicore__ inline void RunAddcmul(GM_ADDR input, GM_ADDR x1, GM_ADDR x2, GM_ADDR value, GM_ADDR y,
                                  const TilingData& tiling, TPipe* pipe)
{
    KernelAddcmul<T, C, TENSOR_VALUE> op;
    op.Init(input, x1, x2, value, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void addcmul(GM_ADDR input_data, GM_ADDR x1, GM_ADDR x2, GM_ADDR value, GM_ADDR y,
                                              GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(10)) {
        RunAddcmul<half, float, false>(input_data, x1, x2, value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(11)) {
        RunAddcmul<half, float, true>(input_data, x1, x2, value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(20)) {
        RunAddcmul<float, float, false>(input_data, x1, x2, value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(21)) {
        RunAddcmul<float, float, true>(input_data, x1, x2, value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(30)) {
        RunAddcmul<bfloat16_t, float, false>(input_data, x1, x2, value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(31)) {
        RunAddcmul<bfloat16_t, float, true>(input_data, x1, x2, value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(40)) {
        RunAddcmul<int32_t, int32_t, false>(input_data, x1, x2, value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(41)) {
        RunAddcmul<int32_t, int32_t, true>(input_data, x1, x2, value, y, tilingData, &pipe);
    }
}
