// AngleV2 kernel: y = angle(x) for real x (float16, float32): pi where
// x < 0, 0 where x >= 0 (-0 included), NaN where x is NaN.
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB
// in tiles with double-buffered queues, so MTE2, V and MTE3 overlap. Per
// tile, four vector instructions and no scalar work: Compares(x < 0) and
// Compare(x == x) (false only for NaN) give two bit masks, Select(pi tile or
// 0) and Select(that or NaN). pi is rounded once to the dtype (a constant
// tile built once). The compare count is rounded up to whole 256 B repeats
// (the tile is sized for it; the extra lanes are never written out). Full
// tiles move with DataCopy, a tail whose size is not a multiple of 32 B
// with DataCopyPad.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t REPEAT_BYTES = 256;
constexpr float PI = 3.14159265358979323846f;

template <typename T>
class KernelAngleV2 {
    static constexpr uint32_t REPEAT_ELEMS = REPEAT_BYTES / sizeof(T);

public:
    __aicore__ inline KernelAngleV2() {}

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
        uint32_t maskBytes = (tileLength / 8 + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(piBuf, tileLength * sizeof(T));
        pipe->InitBuffer(negBuf, maskBytes);
        pipe->InitBuffer(numBuf, maskBytes);
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        Duplicate(piBuf.Get<T>(), static_cast<T>(PI), tileLength);
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
            DataCopyPadExtParams<T> padParams{false, 0, 0, static_cast<T>(0)};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<uint8_t> negative = negBuf.Get<uint8_t>();
        LocalTensor<uint8_t> number = numBuf.Get<uint8_t>();
        uint32_t count = (length + REPEAT_ELEMS - 1) / REPEAT_ELEMS * REPEAT_ELEMS;
        Compares(negative, xLocal, static_cast<T>(0.0f), CMPMODE::LT, count);
        Compare(number, xLocal, xLocal, CMPMODE::EQ, count);
        Select(yLocal, negative, piBuf.Get<T>(), static_cast<T>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, length);
        Select(yLocal, number, yLocal, xLocal, SELMODE::VSEL_TENSOR_TENSOR_MODE, length);
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
    TBuf<TPosition::VECCALC> piBuf;
    TBuf<TPosition::VECCALC> negBuf;
    TBuf<TPosition::VECCALC> numBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void angle_v2(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelAngleV2<half> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelAngleV2<float> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
