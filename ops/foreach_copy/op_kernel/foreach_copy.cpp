// ForeachCopy kernel: y = x (a bit copy), for every tensor i of the list
// (shared/ref/operators-l2.md, Foreach family).
//
// The tensors' split units are dealt to the vector cores in list order (see
// the tiling header); a core walks the tensors its units touch, reading each
// tensor's address from the list descriptor (word 0: the byte offset of the
// address table, guide 6.2.6.2).
// Every dtype moves as bytes through a bound VECIN/VECOUT queue (TQueBind), so
// MTE2 and MTE3 overlap with no vector work; whole 32 B blocks move with
// DataCopy, a tail with DataCopyPad.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

// Address of tensor `index` of a tensor list whose address table starts at
// word `table` of the descriptor.
__aicore__ inline uint64_t ListAddress(GlobalTensor<uint64_t>& desc, uint64_t table, uint32_t index)
{
    return desc.GetValue(table + index);
}

// T: the unit the tensors are moved in (bytes; the host scales the lengths).
template <typename T>
class KernelForeachCopy {
public:
    __aicore__ inline KernelForeachCopy() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
    {
        tensorNum = tiling.tensorNum;
        unitLength = tiling.unitLength;
        tileLength = tiling.tileLength;
        tensorLength = tiling.tensorLength;
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t bigUnits = static_cast<uint64_t>(tiling.blockUnits) + 1;
        if (blockIdx < tiling.tailCoreNum) {
            startUnit = blockIdx * bigUnits;
            endUnit = startUnit + bigUnits;
        } else {
            startUnit = tiling.tailCoreNum * bigUnits + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            endUnit = startUnit + tiling.blockUnits;
        }
        xDesc.SetGlobalBuffer((__gm__ uint64_t*)x);
        xTable = xDesc.GetValue(0) / sizeof(uint64_t);
        yDesc.SetGlobalBuffer((__gm__ uint64_t*)y);
        yTable = yDesc.GetValue(0) / sizeof(uint64_t);
        pipe->InitBuffer(queue, tiling.bufferNum, tileLength * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        uint64_t unitBase = 0;
        for (uint32_t t = 0; t < tensorNum && unitBase < endUnit; ++t) {
            uint64_t length = tensorLength[t];
            uint64_t units = (length + unitLength - 1) / unitLength;
            uint64_t lo = startUnit > unitBase ? startUnit : unitBase;
            uint64_t hi = endUnit < unitBase + units ? endUnit : unitBase + units;
            if (lo < hi) {
                uint64_t begin = (lo - unitBase) * unitLength;
                uint64_t end = (hi - unitBase) * unitLength;
                if (end > length) {
                    end = length;
                }
                xGm.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(xDesc, xTable, t), length);
                yGm.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(yDesc, yTable, t), length);
                for (uint64_t offset = begin; offset < end; offset += tileLength) {
                    uint32_t count = static_cast<uint32_t>(end - offset < tileLength ? end - offset : tileLength);
                    CopyIn(offset, count);
                    CopyOut(offset, count);
                }
            }
            unitBase += units;
        }
    }

private:
    // GM -> UB; the bound queue hands the tile from MTE2 to MTE3 directly.
    __aicore__ inline void CopyIn(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> local = queue.AllocTensor<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(local, xGm[offset], count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(local, xGm[offset], copyParams, padParams);
        }
        queue.EnQue(local);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> local = queue.DeQue<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], local, count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[offset], local, copyParams);
        }
        queue.FreeTensor(local);
    }

private:
    TQueBind<TPosition::VECIN, TPosition::VECOUT, BUFFER_NUM> queue;
    GlobalTensor<uint64_t> xDesc;
    GlobalTensor<uint64_t> yDesc;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    const uint64_t* tensorLength = nullptr;
    uint64_t xTable = 0;
    uint64_t yTable = 0;
    uint64_t startUnit = 0;
    uint64_t endUnit = 0;
    uint32_t tensorNum = 0;
    uint32_t unitLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void foreach_copy(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelForeachCopy<uint8_t> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
