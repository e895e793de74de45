#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

class KernelSwish {
public:
    __aicore__ inline KernelSwish() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t tileNum, float scale)
    {
        uint32_t perCore = (totalLength + GetBlockNum() - 1) / GetBlockNum();
        perCore = (perCore + 7) / 8 * 8;
        uint32_t start = perCore * GetBlockIdx();
        this->length = 0;
        if (start < totalLength) {
            this->length = totalLength - start < perCore ? totalLength - start : perCore;
        }
        this->tileLength = ((perCore + tileNum - 1) / tileNum + 7) / 8 * 8;
        this->scale = scale;
        xGm.SetGlobalBuffer((__gm__ float*)x + start, this->length);
        yGm.SetGlobalBuffer((__gm__ float*)y + start, this->length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, this->tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, this->tileLength * sizeof(float));
        pipe.InitBuffer(tBuf, this->tileLength * sizeof(float));
        pipe.InitBuffer(cBuf, this->tileLength * sizeof(float));
        pipe.InitBuffer(resultBuf, this->tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t off = 0; off < this->length; off += this->tileLength) {
            uint32_t n = this->length - off < this->tileLength ? this->length - off : this->tileLength;
            CopyIn(off, n);
            Compute(n);
            CopyOut(off, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t off, uint32_t n)
    {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm[off], params, pad);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        LocalTensor<float> t = tBuf.Get<float>();
        LocalTensor<float> c = cBuf.Get<float>();
        LocalTensor<float> result = resultBuf.Get<float>();
        // sigmoid(s x) = 1 / (1 + exp(-s x))
        Duplicate(c, -this->scale, n);
        Mul(t, xLocal, c, n);
        Exp(t, t, n);
        Duplicate(c, 1.0f, n);
        Add(t, t, c, n);
        Div(result, xLocal, t, n);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yLocal, result, (n + 7) / 8 * 8);
        PipeBarrier<PIPE_ALL>();
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t off, uint32_t n)
    {
        LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPad(yGm[off], yLocal, params);
        outQueueY.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> tBuf, cBuf, resultBuf;
    GlobalTensor<float> xGm, yGm;
    uint32_t length;
    uint32_t tileLength;
    float scale;
};

extern "C" __global__ __aicore__ void swish(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelSwish op;
    op.Init(x, y, t.totalLength, t.tileNum, t.scale);
    op.Process();
}
