// Trunc kernel: y = trunc(x), elementwise (float16, float32, bfloat16; int8,
// uint8 and int32 are copied).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose size is not a
// multiple of 32 B moves with DataCopyPad.
//
// Floats: one Cast float32 -> float32 with CAST_TRUNC rounds toward zero and
// keeps the sign, inf and NaN (no round trip through an integer type, which
// breaks for |x| >= 2^31). float16 and bfloat16 are Cast to float32 (exact),
// truncated, and Cast back (exact, the values are whole or inf/NaN).
// Integers are already whole: y is a copy through one VECIN->VECOUT bound
// queue (MTE2 in, MTE3 out, no vector work), double buffered like the rest.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

constexpr int32_t PATH_FLOAT = 1;  // float32
constexpr int32_t PATH_WIDEN = 2;  // float16 / bfloat16 through float32

template <typename T, int32_t PATH>
class KernelTrunc {
public:
    __aicore__ inline KernelTrunc() {}

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
        if constexpr (PATH == PATH_WIDEN) {
            pipe->InitBuffer(floatBuf, tileLength * sizeof(float));
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
        if constexpr (PATH == PATH_FLOAT) {
            Cast(yLocal, xLocal, RoundMode::CAST_TRUNC, length);
        } else {
            LocalTensor<float> xf = floatBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, length);
            Cast(xf, xf, RoundMode::CAST_TRUNC, length);
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
    TBuf<TPosition::VECCALC> floatBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

// Integer dtypes: y = x, one bound queue, no vector work.
template <typename T>
class KernelTruncCopy {
public:
    __aicore__ inline KernelTruncCopy() {}

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
        pipe->InitBuffer(queue, tiling.bufferNum, tileLength * sizeof(T));
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
            uint64_t offset = static_cast<uint64_t>(i) * tileLength;
            bool whole = (length * sizeof(T)) % BLOCK_BYTES == 0;
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            LocalTensor<T> local = queue.template AllocTensor<T>();
            if (whole) {
                DataCopy(local, xGm[offset], length);
            } else {
                DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
                DataCopyPad(local, xGm[offset], copyParams, padParams);
            }
            queue.EnQue(local);
            local = queue.template DeQue<T>();
            if (whole) {
                DataCopy(yGm[offset], local, length);
            } else {
                DataCopyPad(yGm[offset], local, copyParams);
            }
            queue.FreeTensor(local);
        }
    }

private:
    TQueBind<QuePosition::VECIN, QuePosition::VECOUT, BUFFER_NUM> queue;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, typename TilingData>
__aicore__ inline void RunTruncCopy(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelTruncCopy<T> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

template <typename T, int32_t PATH, typename TilingData>
__aicore__ inline void RunTrunc(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelTrunc<T, PATH> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void trunc(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunTrunc<half, PATH_WIDEN>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunTrunc<float, PATH_FLOAT>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunTrunc<bfloat16_t, PATH_WIDEN>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunTruncCopy<uint8_t>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(5)) {
        RunTruncCopy<int32_t>(x, y, tilingData, &pipe);
    }
}
