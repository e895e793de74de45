// Heaviside kernel: out = 0 where input < 0, values where input == 0 (-0
// included), 1 where input > 0; NaN input gives 0 (float16, float32).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose byte size is not
// a multiple of 32 B moves with DataCopyPad.
//
// Per tile: Compares(input > 0) -> bits, Select(ones, 0) gives the step
// (NaN compares false: 0); then
//   values of input's shape: Compares(input == 0), Select(values, step);
//   a single value v (read once per core): Compares(input != 0) (true for
//     NaN), Select(step, v).
// Compares works on whole 256 B repeats, so it runs over the tile length
// rounded up to a repeat (tiles are multiples of 256 elements); the extra
// lanes are never copied out.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t REPEAT_BYTES = 256;

template <typename T, bool SCALAR_VALUES>
class KernelHeaviside {
    static constexpr uint32_t CMP_ALIGN = REPEAT_BYTES / sizeof(T);

public:
    __aicore__ inline KernelHeaviside() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR input, GM_ADDR values, GM_ADDR out, const TilingData& tiling, TPipe* pipe)
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

        xGm.SetGlobalBuffer((__gm__ T*)input + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ T*)out + start, blockLength);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(maskBuf, tileLength / 8);
        pipe->InitBuffer(onesBuf, tileLength * sizeof(T));
        if constexpr (SCALAR_VALUES) {
            // The single value: read once per core.
            GlobalTensor<T> valueGm;
            valueGm.SetGlobalBuffer((__gm__ T*)values, 1);
            value = valueGm.GetValue(0);
        } else {
            vGm.SetGlobalBuffer((__gm__ T*)values + start, blockLength);
            pipe->InitBuffer(inQueueV, tiling.bufferNum, tileLength * sizeof(T));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        LocalTensor<T> ones = onesBuf.Get<T>();
        Duplicate(ones, static_cast<T>(1.0f), tileLength);
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
        LocalTensor<T> vLocal;
        if constexpr (!SCALAR_VALUES) {
            vLocal = inQueueV.AllocTensor<T>();
        }
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], length);
            if constexpr (!SCALAR_VALUES) {
                DataCopy(vLocal, vGm[offset], length);
            }
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
            if constexpr (!SCALAR_VALUES) {
                DataCopyPad(vLocal, vGm[offset], copyParams, padParams);
            }
        }
        inQueueX.EnQue(xLocal);
        if constexpr (!SCALAR_VALUES) {
            inQueueV.EnQue(vLocal);
        }
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
        uint32_t cmpCount = (length + CMP_ALIGN - 1) / CMP_ALIGN * CMP_ALIGN;
        const T zero = static_cast<T>(0.0f);
        // The step: 1 where input > 0, else 0 (NaN too).
        Compares(mask, xLocal, zero, CMPMODE::GT, cmpCount);
        Select(yLocal, mask, onesBuf.Get<T>(), zero, SELMODE::VSEL_TENSOR_SCALAR_MODE, length);
        if constexpr (SCALAR_VALUES) {
            // Keep the step where input != 0 (NaN included), else the value.
            Compares(mask, xLocal, zero, CMPMODE::NE, cmpCount);
            Select(yLocal, mask, yLocal, value, SELMODE::VSEL_TENSOR_SCALAR_MODE, length);
        } else {
            LocalTensor<T> vLocal = inQueueV.DeQue<T>();
            Compares(mask, xLocal, zero, CMPMODE::EQ, cmpCount);
            Select(yLocal, mask, vLocal, yLocal, SELMODE::VSEL_TENSOR_TENSOR_MODE, length);
            inQueueV.FreeTensor(vLocal);
        }
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
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueV;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> maskBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> vGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
    T value;
};

template <typename T, bool SCALAR_VALUES, typename TilingData>
__aicore__ inline void RunHeaviside(GM_ADDR input, GM_ADDR values, GM_ADDR out, const TilingData& tiling,
                                    TPipe* pipe)
{
    KernelHeaviside<T, SCALAR_VALUES> op;
    op.Init(input, values, out, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void heaviside(GM_ADDR input, GM_ADDR values, GM_ADDR out, GM_ADDR workspace,
                                                GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunHeaviside<half, false>(input, values, out, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunHeaviside<float, false>(input, values, out, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunHeaviside<half, true>(input, values, out, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunHeaviside<float, true>(input, values, out, tilingData, &pipe);
    }
}
