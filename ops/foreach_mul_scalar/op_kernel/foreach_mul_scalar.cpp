// ForeachMulScalar kernel: y = x * scalar, for every tensor i of the list
// (shared/ref/operators-l2.md, Foreach family).
//
// The tensors' split units are dealt to the vector cores in list order (see
// the tiling header); a core walks the tensors its units touch, reading each
// tensor's address from the list descriptor (word 0: the byte offset of the
// address table, guide 6.2.6.2), and streams its part through UB in tiles
// with double-buffered queues, so MTE2 (copy in), V (compute) and MTE3
// (copy out) overlap across tiles and tensors. Whole 32 B blocks move with
// DataCopy, a tail with DataCopyPad.
// bfloat16 computes in float32 with a float32 scalar.
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

// A scalar input's value in the compute type (16-bit floats through float).
template <typename C, typename S>
__aicore__ inline C ScalarAs(S value)
{
    if constexpr (IsSameType<S, half>::value || IsSameType<S, bfloat16_t>::value) {
        return static_cast<C>(static_cast<float>(value));
    } else {
        return static_cast<C>(value);
    }
}

// T: storage type of the tensors; C: compute type (T, or float when the
// path casts); S: storage type of the scalar input (unused without one).
template <typename T, typename C, typename S>
class KernelForeachMulScalar {
public:
    static constexpr bool VIA_FLOAT = !IsSameType<T, C>::value;

    __aicore__ inline KernelForeachMulScalar() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR scalar, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
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
        listDesc0.SetGlobalBuffer((__gm__ uint64_t*)x);
        listTable0 = listDesc0.GetValue(0) / sizeof(uint64_t);
        yDesc.SetGlobalBuffer((__gm__ uint64_t*)y);
        yTable = yDesc.GetValue(0) / sizeof(uint64_t);
        GlobalTensor<S> scalarGm;
        scalarGm.SetGlobalBuffer((__gm__ S*)scalar, 1);
        scalarValue = ScalarAs<C>(scalarGm.GetValue(0));
        pipe->InitBuffer(inQueue0, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueue, tiling.bufferNum, tileLength * sizeof(T));
        if constexpr (VIA_FLOAT) {
            pipe->InitBuffer(workBuf0, tileLength * sizeof(float));
            pipe->InitBuffer(workBufY, tileLength * sizeof(float));
        }

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
                SetTensor(t);
                for (uint64_t offset = begin; offset < end; offset += tileLength) {
                    uint32_t count = static_cast<uint32_t>(end - offset < tileLength ? end - offset : tileLength);
                    CopyIn(offset, count);
                    Compute(count);
                    CopyOut(offset, count);
                }
            }
            unitBase += units;
        }
    }

private:
    __aicore__ inline void SetTensor(uint32_t t)
    {
        xGm0.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(listDesc0, listTable0, t), tensorLength[t]);
        yGm.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(yDesc, yTable, t), tensorLength[t]);
    }

    __aicore__ inline void CopyIn(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> xLocal0 = inQueue0.AllocTensor<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal0, xGm0[offset], count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal0, xGm0[offset], copyParams, padParams);
        }
        inQueue0.EnQue(xLocal0);
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<T> x0 = inQueue0.DeQue<T>();
        LocalTensor<T> yLocal = outQueue.AllocTensor<T>();
        if constexpr (VIA_FLOAT) {
            LocalTensor<float> f0 = workBuf0.Get<float>();
            Cast(f0, x0, RoundMode::CAST_NONE, n);
            inQueue0.FreeTensor(x0);
            LocalTensor<float> fy = workBufY.Get<float>();
            Body(fy, f0, n);
            Cast(yLocal, fy, RoundMode::CAST_RINT, n);
        } else {
            Body(yLocal, x0, n);
            inQueue0.FreeTensor(x0);
        }
        outQueue.EnQue(yLocal);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> yLocal = outQueue.DeQue<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueue.FreeTensor(yLocal);
    }

    // The operator's formula on n elements in the compute type.
    __aicore__ inline void Body(const LocalTensor<C>& y, const LocalTensor<C>& a, uint32_t n)
    {
        Muls(y, a, scalarValue, n);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue0;
    GlobalTensor<uint64_t> listDesc0;
    GlobalTensor<T> xGm0;
    uint64_t listTable0 = 0;
    GlobalTensor<uint64_t> yDesc;
    uint64_t yTable = 0;
    TBuf<TPosition::VECCALC> workBuf0;
    TBuf<TPosition::VECCALC> workBufY;
    C scalarValue = 0;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    GlobalTensor<T> yGm;
    const uint64_t* tensorLength = nullptr;
    uint64_t startUnit = 0;
    uint64_t endUnit = 0;
    uint32_t tensorNum = 0;
    uint32_t unitLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void foreach_mul_scalar(GM_ADDR x, GM_ADDR scalar, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelForeachMulScalar<half, half, half> op;
        op.Init(x, scalar, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelForeachMulScalar<float, float, float> op;
        op.Init(x, scalar, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelForeachMulScalar<bfloat16_t, float, float> op;
        op.Init(x, scalar, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(4)) {
        KernelForeachMulScalar<int32_t, int32_t, int32_t> op;
        op.Init(x, scalar, y, tilingData, &pipe);
        op.Process();
    }
}
