// Reshape kernel: y = x's bytes (a new shape needs no data movement beyond a
// contiguous copy), for every dtype.
//
// Every vector core takes a balanced, contiguous byte range (tiling: split
// units, the first tailCoreNum cores take one unit more) and streams it
// through UB in tiles with a double-buffered bound queue (VECIN -> VECOUT):
// MTE2 copies a tile in while MTE3 copies the previous one out; no vector
// instruction touches the data. Full tiles move with DataCopy; a tail tile
// whose size is not a multiple of 32 B moves with DataCopyPad.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

class KernelReshape {
public:
    __aicore__ inline KernelReshape() {}

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
        uint64_t start = startUnit * tiling.unitBytes;
        uint64_t length = units * tiling.unitBytes;
        if (start >= tiling.totalBytes) {
            length = 0;
        } else if (start + length > tiling.totalBytes) {
            length = tiling.totalBytes - start;
        }
        blockBytes = length;
        tileBytes = tiling.tileBytes;

        xGm.SetGlobalBuffer((__gm__ uint8_t*)x + start, blockBytes);
        yGm.SetGlobalBuffer((__gm__ uint8_t*)y + start, blockBytes);
        pipe->InitBuffer(queue, tiling.bufferNum, tileBytes);
    }

    __aicore__ inline void Process()
    {
        if (blockBytes == 0) {
            return;
        }
        uint64_t tileNum = (blockBytes + tileBytes - 1) / tileBytes;
        uint32_t lastBytes = static_cast<uint32_t>(blockBytes - (tileNum - 1) * tileBytes);
        for (uint64_t i = 0; i < tileNum; i++) {
            uint32_t bytes = (i + 1 == tileNum) ? lastBytes : tileBytes;
            uint64_t offset = i * tileBytes;
            CopyIn(offset, bytes);
            CopyOut(offset, bytes);
        }
    }

private:
    __aicore__ inline void CopyIn(uint64_t offset, uint32_t bytes)
    {
        LocalTensor<uint8_t> local = queue.AllocTensor<uint8_t>();
        if (bytes % BLOCK_BYTES == 0) {
            DataCopy(local, xGm[offset], bytes);
        } else {
            DataCopyExtParams copyParams{1, bytes, 0, 0, 0};
            DataCopyPadExtParams<uint8_t> padParams{false, 0, 0, 0};
            DataCopyPad(local, xGm[offset], copyParams, padParams);
        }
        queue.EnQue(local);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t bytes)
    {
        LocalTensor<uint8_t> local = queue.DeQue<uint8_t>();
        if (bytes % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], local, bytes);
        } else {
            DataCopyExtParams copyParams{1, bytes, 0, 0, 0};
            DataCopyPad(yGm[offset], local, copyParams);
        }
        queue.FreeTensor(local);
    }

private:
    TQueBind<QuePosition::VECIN, QuePosition::VECOUT, BUFFER_NUM> queue;
    GlobalTensor<uint8_t> xGm;
    GlobalTensor<uint8_t> yGm;
    uint64_t blockBytes = 0;
    uint32_t tileBytes = 0;
};

extern "C" __global__ __aicore__ void reshape(GM_ADDR x, GM_ADDR shape, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelReshape op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
