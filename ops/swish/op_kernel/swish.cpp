// Swish kernel: y = x * sigmoid(scale * x) = x / (1 + exp(-scale * x)),
// elementwise (float16, float32, bfloat16), computed in float32: Muls, Exp,
// Adds, Div (16-bit dtypes add a Cast in and a Cast out).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose size is not a
// multiple of 32 B moves with DataCopyPad.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T>
class KernelSwish {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

public:
    __aicore__ inline KernelSwish() {}

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
        negScale = -tiling.scale;

        xGm.SetGlobalBuffer((__gm__ T*)x + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, blockLength);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(tmpBuf, tileLength * sizeof(float));
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(xfBuf, tileLength * sizeof(float));
        }
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
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    // yf = xf / (1 + exp(-scale * xf)); t is float32 scratch.
    __aicore__ inline void SwishFloat(const LocalTensor<float>& yf, const LocalTensor<float>& xf,
                                      const LocalTensor<float>& t, uint32_t length)
    {
        Muls(t, xf, negScale, length);
        Exp(t, t, length);
        Adds(t, t, 1.0f, length);
        Div(yf, xf, t, length);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<float> t = tmpBuf.Get<float>();
        if constexpr (IS_FLOAT) {
            SwishFloat(yLocal, xLocal, t, length);
            inQueueX.FreeTensor(xLocal);
        } else {
            LocalTensor<float> xf = xfBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, length);
            inQueueX.FreeTensor(xLocal);
            SwishFloat(t, xf, t, length);
            Cast(yLocal, t, RoundMode::CAST_RINT, length);
        }
        outQueueY.EnQue<T>(yLocal);
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
    TBuf<TPosition::VECCALC> tmpBuf;
    TBuf<TPosition::VECCALC> xfBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
    float negScale = -1.0f;
};

extern "C" __global__ __aicore__ void swish(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelSwish<half> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelSwish<float> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelSwish<bfloat16_t> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
