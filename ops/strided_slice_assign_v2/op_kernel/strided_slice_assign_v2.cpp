// StridedSliceAssignV2 kernel: var_out = var with var[begin:end:strides] =
// input_value (a copy: only the element size matters).
//
// Every core owns a balanced contiguous range of var rows (last dim). Phase
// 1 streams those rows GM -> UB -> GM through a double-buffered
// VECIN/VECOUT bound queue (MTE2 and MTE3 overlap, no vector work). Phase 2
// writes the input_value rows whose destination row lies in the range:
// for every index tuple of the outer value dims, the rows along the
// second-to-last dim are consecutive in input_value and `step` rows apart
// in var, so each batch moves with one DataCopyPad in (rows padded to 32 B
// in UB) and one strided DataCopyPad out. Both phases write on MTE3, in
// program order, so the slice overwrites the copied rows.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t MAX_RANK = 8;

template <typename T>
class KernelSliceAssign {
public:
    __aicore__ inline KernelSliceAssign() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR var, GM_ADDR value, GM_ADDR out, const TilingData& t, TPipe* pipe)
    {
        rank = t.rank;
        uint64_t varNum = 1;
        uint64_t valNum = 1;
        for (uint32_t i = 0; i < rank; i++) {
            varDims[i] = t.varDims[i];
            valDims[i] = t.valDims[i];
            begins[i] = t.begins[i];
            steps[i] = t.steps[i];
            varNum *= varDims[i];
            valNum *= valDims[i];
        }
        rowLen = varDims[rank - 1];
        valRowLen = valDims[rank - 1];
        tileElems = t.tileElems;
        valTileRows = t.valTileRows;
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < t.tailCoreNum) {
            rowCount = t.blockRows + 1;
            rowStart = blockIdx * rowCount;
        } else {
            rowCount = t.blockRows;
            rowStart = t.tailCoreNum * (t.blockRows + 1) + (blockIdx - t.tailCoreNum) * t.blockRows;
        }
        varGm.SetGlobalBuffer((__gm__ T*)var, varNum);
        valGm.SetGlobalBuffer((__gm__ T*)value, valNum);
        outGm.SetGlobalBuffer((__gm__ T*)out, varNum);
        pipe->InitBuffer(queue, t.bufferNum, tileElems * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        if (rowCount == 0) {
            return;
        }
        CopyVar();
        PipeBarrier<PIPE_MTE3>();
        WriteValue();
    }

private:
    __aicore__ inline void CopyVar()
    {
        uint64_t start = static_cast<uint64_t>(rowStart) * rowLen;
        uint64_t total = static_cast<uint64_t>(rowCount) * rowLen;
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        for (uint64_t done = 0; done < total; done += tileElems) {
            uint32_t len = total - done < tileElems ? static_cast<uint32_t>(total - done) : tileElems;
            DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            LocalTensor<T> buf = queue.AllocTensor<T>();
            DataCopyPad(buf, varGm[start + done], p, pad);
            queue.EnQue(buf);
            buf = queue.DeQue<T>();
            DataCopyPad(outGm[start + done], buf, p);
            queue.FreeTensor(buf);
        }
    }

    __aicore__ inline void WriteValue()
    {
        if (valRowLen == 0) {
            return;
        }
        // Outer tuples: value dims 0 .. rank-3; rows along dim rank-2.
        uint32_t inner = rank - 2;
        uint32_t innerNum = valDims[inner];
        uint64_t tuples = 1;
        for (uint32_t j = 0; j < inner; j++) {
            tuples *= valDims[j];
        }
        if (innerNum == 0 || tuples == 0) {
            return;
        }
        uint64_t rowEnd = static_cast<uint64_t>(rowStart) + rowCount;
        uint64_t step = steps[inner];
        for (uint64_t tuple = 0; tuple < tuples; tuple++) {
            // Destination row of (tuple, i) = base + i * step.
            uint64_t base = begins[inner];
            uint64_t rest = tuple;
            uint64_t rowScale = varDims[inner];
            for (int32_t j = static_cast<int32_t>(inner) - 1; j >= 0; j--) {
                uint64_t idx = rest % valDims[j];
                rest /= valDims[j];
                base += (begins[j] + idx * steps[j]) * rowScale;
                rowScale *= varDims[j];
            }
            if (base >= rowEnd || base + (innerNum - 1) * step < rowStart) {
                continue;
            }
            uint64_t iLo = base >= rowStart ? 0 : (rowStart - base + step - 1) / step;
            uint64_t iHi = (rowEnd - base + step - 1) / step;
            iHi = iHi < innerNum ? iHi : innerNum;
            for (uint64_t i = iLo; i < iHi; i += valTileRows) {
                uint32_t n = iHi - i < valTileRows ? static_cast<uint32_t>(iHi - i) : valTileRows;
                WriteRows((tuple * innerNum + i) * valRowLen, ((base + i * step) * rowLen) + begins[rank - 1], n,
                          step);
            }
        }
    }

    __aicore__ inline void WriteRows(uint64_t src, uint64_t dst, uint32_t n, uint64_t step)
    {
        LocalTensor<T> buf = queue.AllocTensor<T>();
        DataCopyExtParams in{static_cast<uint16_t>(n), static_cast<uint32_t>(valRowLen * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(buf, valGm[src], in, pad);
        queue.EnQue(buf);
        buf = queue.DeQue<T>();
        DataCopyExtParams out{static_cast<uint16_t>(n), static_cast<uint32_t>(valRowLen * sizeof(T)), 0,
                              static_cast<uint32_t>((step * rowLen - valRowLen) * sizeof(T)), 0};
        DataCopyPad(outGm[dst], buf, out);
        queue.FreeTensor(buf);
    }

private:
    TQueBind<TPosition::VECIN, TPosition::VECOUT, BUFFER_NUM> queue;
    GlobalTensor<T> varGm;
    GlobalTensor<T> valGm;
    GlobalTensor<T> outGm;
    uint32_t rank = 0;
    uint32_t varDims[MAX_RANK] = {};
    uint32_t valDims[MAX_RANK] = {};
    uint32_t begins[MAX_RANK] = {};
    uint32_t steps[MAX_RANK] = {};
    uint32_t rowLen = 0, valRowLen = 0, tileElems = 0, valTileRows = 0;
    uint32_t rowStart = 0, rowCount = 0;
};

template <typename T, typename TilingData>
__aicore__ inline void RunSliceAssign(GM_ADDR var, GM_ADDR value, GM_ADDR out, const TilingData& t, TPipe* pipe)
{
    KernelSliceAssign<T> op;
    op.Init(var, value, out, t, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void strided_slice_assign_v2(GM_ADDR var, GM_ADDR inputValue, GM_ADDR varOut,
                                                              GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunSliceAssign<int8_t>(var, inputValue, varOut, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunSliceAssign<half>(var, inputValue, varOut, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunSliceAssign<float>(var, inputValue, varOut, tilingData, &pipe);
    } else if (TILING_KEY_IS(8)) {
        RunSliceAssign<int64_t>(var, inputValue, varOut, tilingData, &pipe);
    }
}
