// LogicalNot kernel: y = not x, elementwise, on bool (one byte): 1 where the
// byte of x is 0, else 0 (any non-zero byte counts as true, as in torch).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose byte size is not
// a multiple of 32 B moves with DataCopyPad.
//
// There is no 8-bit arithmetic on Atlas A2: the bytes b are Cast to float16
// (exact, 0..255) and y = -min(b - 1, 0) is 1 for b = 0 and 0 otherwise
// (Adds, Mins, Muls; exact), then Cast back to uint8.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

class KernelLogicalNot {
public:
    __aicore__ inline KernelLogicalNot() {}

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

        xGm.SetGlobalBuffer((__gm__ uint8_t*)x + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ uint8_t*)y + start, blockLength);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(uint8_t));
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
        LocalTensor<uint8_t> xLocal = inQueueX.AllocTensor<uint8_t>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if (length % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], length);
        } else {
            DataCopyExtParams copyParams{1, length, 0, 0, 0};
            DataCopyPadExtParams<uint8_t> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<uint8_t> xLocal = inQueueX.DeQue<uint8_t>();
        LocalTensor<uint8_t> yLocal = outQueueY.AllocTensor<uint8_t>();
        LocalTensor<half> b = halfBuf.Get<half>();
        Cast(b, xLocal, RoundMode::CAST_NONE, length);
        Adds(b, b, static_cast<half>(-1.0f), length);  // b - 1 in [-1, 254]
        Mins(b, b, static_cast<half>(0.0f), length);   // -1 for b = 0, else 0
        Muls(b, b, static_cast<half>(-1.0f), length);  // 1 for b = 0, else 0
        Cast(yLocal, b, RoundMode::CAST_NONE, length);
        outQueueY.EnQue<uint8_t>(yLocal);
        inQueueX.FreeTensor(xLocal);
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
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> halfBuf;
    GlobalTensor<uint8_t> xGm;
    GlobalTensor<uint8_t> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void logical_not(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelLogicalNot op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
