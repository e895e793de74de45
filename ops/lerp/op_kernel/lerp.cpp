// Lerp kernel: y = start + weight * (end - start), elementwise (float16,
// float32, bfloat16) with a weight tensor, computed in float32 (16-bit inputs
// are cast in and the result rounded once). Per tile: Sub, Mul, Add in the
// order d = end - start, d = weight * d, y = start + d (the one-sided form of
// the CANN kernel).
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

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T>
class KernelLerp {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

public:
    __aicore__ inline KernelLerp() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR start, GM_ADDR end, GM_ADDR weight, GM_ADDR y, const TilingData& tiling,
                                TPipe* pipe)
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
        uint64_t first = startUnit * tiling.unitLength;
        uint64_t length = units * tiling.unitLength;
        if (first >= tiling.totalLength) {
            length = 0;
        } else if (first + length > tiling.totalLength) {
            length = tiling.totalLength - first;
        }
        blockLength = static_cast<uint32_t>(length);
        tileLength = tiling.tileLength;

        startGm.SetGlobalBuffer((__gm__ T*)start + first, blockLength);
        endGm.SetGlobalBuffer((__gm__ T*)end + first, blockLength);
        weightGm.SetGlobalBuffer((__gm__ T*)weight + first, blockLength);
        yGm.SetGlobalBuffer((__gm__ T*)y + first, blockLength);
        uint32_t tileBytes = tileLength * sizeof(T);
        pipe->InitBuffer(inQueueStart, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(inQueueEnd, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(inQueueWeight, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileBytes);
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(aBuf, tileLength * sizeof(float));
            pipe->InitBuffer(bBuf, tileLength * sizeof(float));
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
        LocalTensor<T> startLocal = inQueueStart.AllocTensor<T>();
        LocalTensor<T> endLocal = inQueueEnd.AllocTensor<T>();
        LocalTensor<T> weightLocal = inQueueWeight.AllocTensor<T>();
        CopyTileIn(startLocal, startGm[offset], length);
        CopyTileIn(endLocal, endGm[offset], length);
        CopyTileIn(weightLocal, weightGm[offset], length);
        inQueueStart.EnQue(startLocal);
        inQueueEnd.EnQue(endLocal);
        inQueueWeight.EnQue(weightLocal);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> startLocal = inQueueStart.DeQue<T>();
        LocalTensor<T> endLocal = inQueueEnd.DeQue<T>();
        LocalTensor<T> weightLocal = inQueueWeight.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            Sub(yLocal, endLocal, startLocal, length);
            Mul(yLocal, weightLocal, yLocal, length);
            Add(yLocal, startLocal, yLocal, length);
        } else {
            // Two float32 buffers: a = end, b = start, a = a - b, b = weight,
            // a = b * a, b = start (cast again), a = b + a.
            LocalTensor<float> a = aBuf.Get<float>();
            LocalTensor<float> b = bBuf.Get<float>();
            Cast(a, endLocal, RoundMode::CAST_NONE, length);
            Cast(b, startLocal, RoundMode::CAST_NONE, length);
            Sub(a, a, b, length);
            Cast(b, weightLocal, RoundMode::CAST_NONE, length);
            Mul(a, b, a, length);
            Cast(b, startLocal, RoundMode::CAST_NONE, length);
            Add(a, b, a, length);
            Cast(yLocal, a, RoundMode::CAST_RINT, length);
        }
        inQueueStart.FreeTensor(startLocal);
        inQueueEnd.FreeTensor(endLocal);
        inQueueWeight.FreeTensor(weightLocal);
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
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueStart;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueEnd;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueWeight;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> aBuf;
    TBuf<TPosition::VECCALC> bBuf;
    GlobalTensor<T> startGm;
    GlobalTensor<T> endGm;
    GlobalTensor<T> weightGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, typename TilingData>
__aicore__ inline void RunLerp(GM_ADDR start, GM_ADDR end, GM_ADDR weight, GM_ADDR y, const TilingData& tiling,
                               TPipe* pipe)
{
    KernelLerp<T> op;
    op.Init(start, end, weight, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void lerp(GM_ADDR start, GM_ADDR end, GM_ADDR weight, GM_ADDR y, GM_ADDR workspace,
                                           GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunLerp<half>(start, end, weight, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunLerp<float>(start, end, weight, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunLerp<bfloat16_t>(start, end, weight, y, tilingData, &pipe);
    }
}
