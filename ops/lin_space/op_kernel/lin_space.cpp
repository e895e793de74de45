// LinSpace kernel: output[i] = start + i * step for i < num / 2 and
// stop - (num - 1 - i) * step after, step = (stop - start) / (num - 1), in
// float32 (float16 / bfloat16 outputs are rounded once with a Cast RINT);
// num = 1 gives [start].
//
// Each vector core takes a balanced, contiguous range of the output (tiling:
// 512 B split units, the first tailCoreNum cores take one unit more), builds
// it in UB tiles with vector instructions and streams the tiles out through
// a double-buffered queue (V builds tile i + 1 while MTE3 writes tile i).
// start and stop are read once from GM by the scalar unit, which also
// computes step. Per tile: CreateVecIndex (exact float indices), Muls by
// step, Adds start; the second half uses index i - (num - 1) and Adds stop,
// which is stop - (num - 1 - i) * step exactly. A tile that straddles
// num / 2 computes the second half from the 32 B block before the switch
// point first, then the first half up to it over the top.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_PER_BLOCK = 8;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T>
class KernelLinSpace {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

public:
    __aicore__ inline KernelLinSpace() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR start, GM_ADDR stop, GM_ADDR output, const TilingData& tiling, TPipe* pipe)
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
        num = tiling.totalLength;
        firstIndex = static_cast<uint32_t>(first);
        blockLength = static_cast<uint32_t>(length);
        tileLength = tiling.tileLength;
        outGm.SetGlobalBuffer((__gm__ T*)output + first, blockLength);
        startGm.SetGlobalBuffer((__gm__ T*)start, 1);
        stopGm.SetGlobalBuffer((__gm__ T*)stop, 1);
        pipe->InitBuffer(outQueue, tiling.bufferNum, tileLength * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(workBuf, tileLength * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        startValue = static_cast<float>(startGm.GetValue(0));
        stopValue = static_cast<float>(stopGm.GetValue(0));
        if (num == 1) {
            stepValue = 0.0f;
            halfPoint = 1;
        } else {
            stepValue = (stopValue - startValue) / static_cast<float>(num - 1);
            halfPoint = num / 2;
        }
        for (uint32_t done = 0; done < blockLength;) {
            uint32_t length = blockLength - done < tileLength ? blockLength - done : tileLength;
            LocalTensor<T> yLocal = outQueue.AllocTensor<T>();
            Compute(yLocal, firstIndex + done, length);
            outQueue.EnQue<T>(yLocal);
            CopyOut(done, length);
            done += length;
        }
    }

private:
    // yLocal[0, length) = the elements from index `index` on.
    __aicore__ inline void Compute(const LocalTensor<T>& yLocal, uint32_t index, uint32_t length)
    {
        LocalTensor<float> work;
        if constexpr (IS_FLOAT) {
            work = yLocal;
        } else {
            work = workBuf.Get<float>();
        }
        // Elements [0, lower) count up from start, [lower, length) down from
        // stop.
        uint32_t lower = 0;
        if (index < halfPoint) {
            lower = halfPoint - index < length ? halfPoint - index : length;
        }
        if (lower < length) {
            uint32_t from = lower / FLOAT_PER_BLOCK * FLOAT_PER_BLOCK;
            LocalTensor<float> upper = work[from];
            uint32_t count = length - from;
            CreateVecIndex(upper, static_cast<float>(index + from) - static_cast<float>(num - 1), count);
            Muls(upper, upper, stepValue, count);
            Adds(upper, upper, stopValue, count);
        }
        if (lower > 0) {
            CreateVecIndex(work, static_cast<float>(index), lower);
            Muls(work, work, stepValue, lower);
            Adds(work, work, startValue, lower);
        }
        if constexpr (!IS_FLOAT) {
            Cast(yLocal, work, RoundMode::CAST_RINT, length);
        }
    }

    __aicore__ inline void CopyOut(uint32_t done, uint32_t length)
    {
        LocalTensor<T> yLocal = outQueue.DeQue<T>();
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(outGm[done], yLocal, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPad(outGm[done], yLocal, copyParams);
        }
        outQueue.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> workBuf;
    GlobalTensor<T> outGm;
    GlobalTensor<T> startGm;
    GlobalTensor<T> stopGm;
    uint32_t num = 0;
    uint32_t halfPoint = 0;
    uint32_t firstIndex = 0;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
    float startValue = 0.0f;
    float stopValue = 0.0f;
    float stepValue = 0.0f;
};

template <typename T, typename TilingData>
__aicore__ inline void RunLinSpace(GM_ADDR start, GM_ADDR stop, GM_ADDR output, const TilingData& tiling, TPipe* pipe)
{
    KernelLinSpace<T> op;
    op.Init(start, stop, output, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void lin_space(GM_ADDR start, GM_ADDR stop, GM_ADDR num, GM_ADDR output,
                                                GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunLinSpace<half>(start, stop, output, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunLinSpace<float>(start, stop, output, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunLinSpace<bfloat16_t>(start, stop, output, tilingData, &pipe);
    }
}
