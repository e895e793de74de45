#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

template <typename T>
class KernelClip {
public:
    __aicore__ inline KernelClip() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR lo, GM_ADDR hi, GM_ADDR y, uint32_t totalLength,
                                uint32_t blockLength, uint32_t tileLength)
    {
        uint32_t start = blockLength * GetBlockIdx();
        this->length = totalLength - start < blockLength ? totalLength - start : blockLength;
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ T*)x + start, this->length);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, this->length);
        loGm.SetGlobalBuffer((__gm__ T*)lo, 1);
        hiGm.SetGlobalBuffer((__gm__ T*)hi, 1);
        this->minValue = loGm.GetValue(0);
        this->maxValue = hiGm.GetValue(0);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(T));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(T));
        pipe.InitBuffer(minBuf, tileLength * sizeof(T));
        pipe.InitBuffer(maxBuf, tileLength * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        uint32_t loops = (this->length + this->tileLength - 1) / this->tileLength;
        for (uint32_t i = 0; i < loops; i++) {
            uint32_t n = this->tileLength;
            if (i == loops - 1) {
                n = this->length - i * this->tileLength;
            }
            CopyIn(i, n);
            Compute(n);
            CopyOut(i, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i, uint32_t n)
    {
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm[i * this->tileLength], params, pad);
        PipeBarrier<PIPE_ALL>();
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<T> minLocal = minBuf.Get<T>();
        LocalTensor<T> maxLocal = maxBuf.Get<T>();
        Duplicate(minLocal, this->minValue, n);
        Duplicate(maxLocal, this->maxValue, n);
        PipeBarrier<PIPE_ALL>();
        Max(yLocal, xLocal, minLocal, n);
        PipeBarrier<PIPE_ALL>();
        Min(yLocal, yLocal, maxLocal, n);
        PipeBarrier<PIPE_ALL>();
        outQueueY.EnQue<T>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t i, uint32_t n)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm[i * this->tileLength], yLocal, params);
        PipeBarrier<PIPE_ALL>();
        outQueueY.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> minBuf, maxBuf;
    GlobalTensor<T> xGm, yGm, loGm, hiGm;
    uint32_t length;
    uint32_t tileLength;
    T minValue;
    T maxValue;
};

extern "C" __global__ __aicore__ void clip_by_value_v2(GM_ADDR x, GM_ADDR clip_value_min, GM_ADDR clip_value_max,
                                                       GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    if (TILING_KEY_IS(1)) {
        KernelClip<half> op;
        op.Init(x, clip_value_min, clip_value_max, y, t.totalLength, t.blockLength, t.tileLength);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelClip<float> op;
        op.Init(x, clip_value_min, clip_value_max, y, t.totalLength, t.blockLength, t.tileLength);
        op.Process();
    } else {
        KernelClip<int32_t> op;
        op.Init(x, clip_value_min, clip_value_max, y, t.totalLength, t.blockLength, t.tileLength);
        op.Process();
    }
}
