// Reciprocal kernel: y = 1 / x, elementwise (float16, float32, bfloat16).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose size is not a
// multiple of 32 B moves with DataCopyPad.
//
// The Reciprocal instruction is not accurate enough (guide 6.2.3.3.1.4), so
// y = Div(ones, x) with a tile of ones filled once per core. float32 and
// float16 divide in their own type (correctly rounded, and an fp16 overflow
// gives inf as in torch, where a float32 -> float16 Cast would saturate to
// 65504). bfloat16 has no arithmetic on A2: Cast to float32, Div, Cast back
// with RINT (a float32 quotient beyond the bf16 range is already inf).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

constexpr int32_t PATH_DIRECT = 1;  // Div in T (float16, float32)
constexpr int32_t PATH_WIDEN = 2;   // bfloat16 through float32

// The type a path divides in.
template <typename T, int32_t PATH>
struct ComputeType {
    using Type = float;
};
template <typename T>
struct ComputeType<T, PATH_DIRECT> {
    using Type = T;
};

template <typename T, int32_t PATH>
class KernelReciprocal {
    using C = typename ComputeType<T, PATH>::Type;

public:
    __aicore__ inline KernelReciprocal() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
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

        xGm.SetGlobalBuffer((__gm__ T*)x + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, blockLength);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(onesBuf, tileLength * sizeof(C));
        if constexpr (PATH == PATH_WIDEN) {
            pipe->InitBuffer(floatBuf, tileLength * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        LocalTensor<C> ones = onesBuf.Get<C>();
        Duplicate(ones, static_cast<C>(1.0f), tileLength);
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
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<C> ones = onesBuf.Get<C>();
        if constexpr (PATH == PATH_DIRECT) {
            Div(yLocal, ones, xLocal, length);
        } else {
            LocalTensor<float> xf = floatBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, length);
            Div(xf, ones, xf, length);
            Cast(yLocal, xf, RoundMode::CAST_RINT, length);
        }
        outQueueY.EnQue<T>(yLocal);
        inQueueX.FreeTensor(xLocal);
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
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> floatBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, int32_t PATH, typename TilingData>
__aicore__ inline void RunReciprocal(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelReciprocal<T, PATH> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void reciprocal(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunReciprocal<half, PATH_DIRECT>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunReciprocal<float, PATH_DIRECT>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunReciprocal<bfloat16_t, PATH_WIDEN>(x, y, tilingData, &pipe);
    }
}
