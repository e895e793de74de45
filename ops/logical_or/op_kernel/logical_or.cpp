// LogicalOr kernel: y = x1 or x2, elementwise, on bool (one byte): 1 where
// either byte is non-zero, else 0 (any non-zero byte counts as true, as in
// torch).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose byte size is not
// a multiple of 32 B moves with DataCopyPad.
//
// There is no 8-bit instruction on Atlas A2: one Or on the tiles read as
// uint16 ORs two bytes per lane (bitwise, so exactly bytewise), then the
// bytes are normalised to 0/1: Cast to float16 (exact), Mins with 1, Cast
// back to uint8.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

class KernelLogicalOr {
public:
    __aicore__ inline KernelLogicalOr() {}

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

        x1Gm.SetGlobalBuffer((__gm__ uint8_t*)x1 + start, blockLength);
        x2Gm.SetGlobalBuffer((__gm__ uint8_t*)x2 + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ uint8_t*)y + start, blockLength);
        pipe->InitBuffer(inQueueX1, tiling.bufferNum, tileLength * sizeof(uint8_t));
        pipe->InitBuffer(inQueueX2, tiling.bufferNum, tileLength * sizeof(uint8_t));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(uint8_t));
        pipe->InitBuffer(halfBuf, tileLength * sizeof(half));
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
        LocalTensor<uint8_t> x1Local = inQueueX1.AllocTensor<uint8_t>();
        LocalTensor<uint8_t> x2Local = inQueueX2.AllocTensor<uint8_t>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if (length % BLOCK_BYTES == 0) {
            DataCopy(x1Local, x1Gm[offset], length);
            DataCopy(x2Local, x2Gm[offset], length);
        } else {
            DataCopyExtParams copyParams{1, length, 0, 0, 0};
            DataCopyPadExtParams<uint8_t> padParams{false, 0, 0, 0};
            DataCopyPad(x1Local, x1Gm[offset], copyParams, padParams);
            DataCopyPad(x2Local, x2Gm[offset], copyParams, padParams);
        }
        inQueueX1.EnQue(x1Local);
        inQueueX2.EnQue(x2Local);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<uint8_t> x1Local = inQueueX1.DeQue<uint8_t>();
        LocalTensor<uint8_t> x2Local = inQueueX2.DeQue<uint8_t>();
        LocalTensor<uint8_t> yLocal = outQueueY.AllocTensor<uint8_t>();
        LocalTensor<half> b = halfBuf.Get<half>();
        // Two bytes per uint16 lane; an odd tail byte pairs with padding that
        // is never copied out.
        LocalTensor<uint16_t> x1Words = x1Local.template ReinterpretCast<uint16_t>();
        LocalTensor<uint16_t> x2Words = x2Local.template ReinterpretCast<uint16_t>();
        Or(x1Words, x1Words, x2Words, static_cast<int32_t>((length + 1) / 2));
        Cast(b, x1Local, RoundMode::CAST_NONE, length);
        Mins(b, b, static_cast<half>(1.0f), length);
        Cast(yLocal, b, RoundMode::CAST_NONE, length);
        outQueueY.EnQue<uint8_t>(yLocal);
        inQueueX1.FreeTensor(x1Local);
        inQueueX2.FreeTensor(x2Local);
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
    TBuf<TPosition::VECCALC> halfBuf;
    GlobalTensor<uint8_t> x1Gm;
    GlobalTensor<uint8_t> x2Gm;
    GlobalTensor<uint8_t> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void logical_or(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelLogicalOr op;
        op.Init(x1, x2, y, tilingData, &pipe);
        op.Process();
    }
}
