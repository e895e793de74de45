// ForeachZeroInplace kernel: x := 0 in place, for every tensor i of the list
// (shared/ref/operators-l2.md, Foreach family).
//
// The tensors' split units are dealt to the vector cores in list order (see
// the tiling header); a core walks the tensors its units touch, reading each
// tensor's address from the list descriptor (word 0: the byte offset of the
// address table, guide 6.2.6.2).
// A tile of zeros is filled once per core (Duplicate) and stored over every
// range the core owns (no input read); whole 32 B blocks with DataCopy, a tail
// with DataCopyPad. Every dtype is cleared as 16-bit words.
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

// T: the unit the tensors are cleared in (16-bit words; the host scales
// the lengths).
template <typename T>
class KernelForeachZeroInplace {
public:
    __aicore__ inline KernelForeachZeroInplace() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, const TilingData& tiling, TPipe* pipe)
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
        pipe->InitBuffer(queue, 1, tileLength * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        if (startUnit >= endUnit) {
            return;
        }
        // One tile of zeros, handed from V to MTE3 once and stored everywhere.
        LocalTensor<T> zeros = queue.AllocTensor<T>();
        Duplicate(zeros, static_cast<T>(0), tileLength);
        queue.EnQue(zeros);
        zeros = queue.DeQue<T>();
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
                for (uint64_t offset = begin; offset < end; offset += tileLength) {
                    uint32_t count = static_cast<uint32_t>(end - offset < tileLength ? end - offset : tileLength);
                    if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
                        DataCopy(xGm[offset], zeros, count);
                    } else {
                        DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
                        DataCopyPad(xGm[offset], zeros, copyParams);
                    }
                }
            }
            unitBase += units;
        }
        queue.FreeTensor(zeros);
    }

private:
    TQue<QuePosition::VECOUT, 1> queue;
    GlobalTensor<uint64_t> xDesc;
    GlobalTensor<T> xGm;
    const uint64_t* tensorLength = nullptr;
    uint64_t xTable = 0;
    uint64_t startUnit = 0;
    uint64_t endUnit = 0;
    uint32_t tensorNum = 0;
    uint32_t unitLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void foreach_zero_inplace(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelForeachZeroInplace<uint16_t> op;
        op.Init(x, tilingData, &pipe);
        op.Process();
    }
}
