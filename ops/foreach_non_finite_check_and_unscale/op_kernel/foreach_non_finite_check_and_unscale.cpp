// ForeachNonFiniteCheckAndUnscale kernel (torch's
// _amp_foreach_non_finite_check_and_unscale_, in place): every element of
// every tensor of scaled_grads becomes x * inv_scale (16-bit floats through
// float32, rounded once), and found_inf becomes 1.0 when an element is
// +-inf or NaN; otherwise found_inf is not written.
//
// The tensors' split units are dealt to the vector cores in list order (see
// the tiling header); a core walks the tensors its units touch, reading each
// tensor's address from the list descriptor (word 0: the byte offset of the
// address table, guide 6.2.6.2), and streams its part through UB in tiles
// with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Whole 32 B blocks move with DataCopy, a tail with DataCopyPad.
//
// The check costs one fused vector instruction per tile: acc += x * 0
// (Axpy) leaves acc at zero while every element is finite, and turns the
// lane NaN for good once an element is inf or NaN (inf * 0 and NaN * 0 are
// NaN). After its last tile a core folds acc to one value (a halving Add
// tree, then ReduceSum over at most 64 lanes), publishes 1.0 or 0.0 in its
// 32 B workspace slot and waits for every core (SyncAll); core 0 then reads
// the slots and stores found_inf: 1.0 when a core saw a non-finite value,
// else the value found_inf had (one writer, so no core can overwrite
// another's 1.0).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_BLOCK = 8;    // float32 elements per 32 B block
constexpr uint32_t FLOAT_REPEAT = 64;  // float32 lanes of one repeat
constexpr uint32_t SLOT_FLOATS = 8;    // one 32 B workspace slot per core

// T: storage type of the tensors (half and bfloat16 compute in float32).
template <typename T>
class KernelNonFiniteCheckAndUnscale {
public:
    static constexpr bool VIA_FLOAT = !IsSameType<T, float>::value;

    __aicore__ inline KernelNonFiniteCheckAndUnscale() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR grads, GM_ADDR foundInf, GM_ADDR invScale, GM_ADDR workspace,
                                const TilingData& tiling, TPipe* pipe)
    {
        coreNum = GetBlockNum();
        blockIndex = GetBlockIdx();
        slotGm.SetGlobalBuffer((__gm__ float*)workspace, coreNum * SLOT_FLOATS);
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
        listDesc.SetGlobalBuffer((__gm__ uint64_t*)grads);
        listTable = listDesc.GetValue(0) / sizeof(uint64_t);
        foundInfGm.SetGlobalBuffer((__gm__ float*)foundInf, 1);
        GlobalTensor<float> invScaleGm;
        invScaleGm.SetGlobalBuffer((__gm__ float*)invScale, 1);
        scale = invScaleGm.GetValue(0);
        pipe->InitBuffer(inQueue, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueue, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(accBuf, tileLength * sizeof(float));
        if constexpr (VIA_FLOAT) {
            pipe->InitBuffer(workBuf, tileLength * sizeof(float));
        }
        pipe->InitBuffer(sumBuf, BLOCK_BYTES);
        pipe->InitBuffer(slotBuf, coreNum * BLOCK_BYTES);
        pipe->InitBuffer(reduceTmpBuf, FLOAT_REPEAT * sizeof(float));
        vsEvent = static_cast<int32_t>(pipe->FetchEventID(HardEvent::V_S));
    }

    __aicore__ inline void Process()
    {
        LocalTensor<float> acc = accBuf.Get<float>();
        Duplicate(acc, 0.0f, tileLength);
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
                gradGm.SetGlobalBuffer((__gm__ T*)(uintptr_t)listDesc.GetValue(listTable + t), length);
                for (uint64_t offset = begin; offset < end; offset += tileLength) {
                    uint32_t count = static_cast<uint32_t>(end - offset < tileLength ? end - offset : tileLength);
                    CopyIn(offset, count);
                    Compute(acc, count);
                    CopyOut(offset, count);
                }
            }
            unitBase += units;
        }
        bool found = SawNonFinite(acc);
        // Publish this core's flag; core 0 writes found_inf.
        LocalTensor<float> slot = slotBuf.Get<float>();
        slot.SetValue(0, found ? 1.0f : 0.0f);
        SetFlag<HardEvent::S_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
        DataCopy(slotGm[blockIndex * SLOT_FLOATS], slot, SLOT_FLOATS);
        SyncAll();
        if (blockIndex != 0) {
            return;
        }
        DataCopy(slot, slotGm, coreNum * SLOT_FLOATS);
        SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
        for (uint32_t c = 0; c < coreNum; c++) {
            found = found || slot.GetValue(c * SLOT_FLOATS) != 0.0f;
        }
        foundInfGm.SetValue(0, found ? 1.0f : foundInfGm.GetValue(0));
        DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(foundInfGm);
    }

private:
    __aicore__ inline void CopyIn(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> xLocal = inQueue.AllocTensor<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, gradGm[offset], count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, gradGm[offset], copyParams, padParams);
        }
        inQueue.EnQue(xLocal);
    }

    __aicore__ inline void Compute(const LocalTensor<float>& acc, uint32_t n)
    {
        LocalTensor<T> xLocal = inQueue.DeQue<T>();
        LocalTensor<T> yLocal = outQueue.AllocTensor<T>();
        if constexpr (VIA_FLOAT) {
            LocalTensor<float> xf = workBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, n);
            inQueue.FreeTensor(xLocal);
            Axpy(acc, xf, 0.0f, n);
            Muls(xf, xf, scale, n);
            Cast(yLocal, xf, RoundMode::CAST_RINT, n);
        } else {
            Axpy(acc, xLocal, 0.0f, n);
            Muls(yLocal, xLocal, scale, n);
            inQueue.FreeTensor(xLocal);
        }
        outQueue.EnQue(yLocal);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> yLocal = outQueue.DeQue<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(gradGm[offset], yLocal, count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPad(gradGm[offset], yLocal, copyParams);
        }
        outQueue.FreeTensor(yLocal);
    }

    // Folds acc (tileLength lanes) to one value: NaN when a lane is NaN.
    __aicore__ inline bool SawNonFinite(const LocalTensor<float>& acc)
    {
        uint32_t len = tileLength;
        while (len > FLOAT_REPEAT) {
            // Second half starting on a 32 B block.
            uint32_t keep = (len / 2 + FLOAT_BLOCK - 1) / FLOAT_BLOCK * FLOAT_BLOCK;
            Add(acc, acc, acc[keep], len - keep);
            len = keep;
        }
        LocalTensor<float> sum = sumBuf.Get<float>();
        ReduceSum(sum, acc, reduceTmpBuf.Get<float>(), static_cast<int32_t>(len));
        SetFlag<HardEvent::V_S>(vsEvent);
        WaitFlag<HardEvent::V_S>(vsEvent);
        float value = sum.GetValue(0);
        return value != value;
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> accBuf;
    TBuf<TPosition::VECCALC> workBuf;
    TBuf<TPosition::VECCALC> sumBuf;
    TBuf<TPosition::VECCALC> slotBuf;
    GlobalTensor<float> slotGm;
    TBuf<TPosition::VECCALC> reduceTmpBuf;
    GlobalTensor<uint64_t> listDesc;
    GlobalTensor<T> gradGm;
    GlobalTensor<float> foundInfGm;
    const uint64_t* tensorLength = nullptr;
    uint64_t listTable = 0;
    uint64_t startUnit = 0;
    uint64_t endUnit = 0;
    float scale = 0.0f;
    int32_t vsEvent = 0;
    uint32_t coreNum = 0;
    uint32_t blockIndex = 0;
    uint32_t tensorNum = 0;
    uint32_t unitLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, typename TilingData>
__aicore__ inline void RunNonFiniteCheckAndUnscale(GM_ADDR grads, GM_ADDR foundInf, GM_ADDR invScale,
                                                   GM_ADDR workspace, const TilingData& tiling, TPipe* pipe)
{
    KernelNonFiniteCheckAndUnscale<T> op;
    op.Init(grads, foundInf, invScale, workspace, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void foreach_non_finite_check_and_unscale(GM_ADDR scaled_grads, GM_ADDR found_inf,
                                                                           GM_ADDR inv_scale, GM_ADDR workspace,
                                                                           GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunNonFiniteCheckAndUnscale<half>(scaled_grads, found_inf, inv_scale, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunNonFiniteCheckAndUnscale<float>(scaled_grads, found_inf, inv_scale, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunNonFiniteCheckAndUnscale<bfloat16_t>(scaled_grads, found_inf, inv_scale, workspace, tilingData, &pipe);
    }
}
