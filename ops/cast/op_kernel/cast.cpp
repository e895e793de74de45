// Cast kernel: y = Cast(x) for the (source, destination, round mode) pair
// selected by the tiling key (see op_host/cast.cpp for the table).
//
// Every vector core takes a balanced, contiguous range (tiling: split units of
// the narrower dtype, the first tailCoreNum cores take one unit more) and
// streams it through UB in tiles with double-buffered queues, so MTE2 (copy
// in), V (one vector Cast per tile) and MTE3 (copy out) overlap. Full tiles
// move with DataCopy; a tail whose byte size is not a multiple of 32 B (in x or
// in y) moves with DataCopyPad.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

template <typename TIn, typename TOut, RoundMode MODE>
class KernelCast {
public:
    __aicore__ inline KernelCast() {}

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

        xGm.SetGlobalBuffer((__gm__ TIn*)x + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ TOut*)y + start, blockLength);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(TIn));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(TOut));
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
        LocalTensor<TIn> xLocal = inQueueX.AllocTensor<TIn>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(TIn)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(TIn)), 0, 0, 0};
            DataCopyPadExtParams<TIn> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<TIn> xLocal = inQueueX.DeQue<TIn>();
        LocalTensor<TOut> yLocal = outQueueY.AllocTensor<TOut>();
        Cast(yLocal, xLocal, MODE, length);
        outQueueY.EnQue<TOut>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }

    __aicore__ inline void CopyOut(uint32_t progress, uint32_t length)
    {
        LocalTensor<TOut> yLocal = outQueueY.DeQue<TOut>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(TOut)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(TOut)), 0, 0, 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    GlobalTensor<TIn> xGm;
    GlobalTensor<TOut> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename TIn, typename TOut, RoundMode MODE, typename TilingData>
__aicore__ inline void RunCast(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelCast<TIn, TOut, MODE> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void cast(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunCast<half, float, RoundMode::CAST_NONE>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunCast<float, half, RoundMode::CAST_RINT>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunCast<float, int32_t, RoundMode::CAST_TRUNC>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunCast<bfloat16_t, float, RoundMode::CAST_NONE>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(5)) {
        RunCast<float, bfloat16_t, RoundMode::CAST_RINT>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(6)) {
        RunCast<half, int32_t, RoundMode::CAST_TRUNC>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(7)) {
        RunCast<int32_t, float, RoundMode::CAST_RINT>(x, y, tilingData, &pipe);
    }
}
