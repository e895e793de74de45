#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

// gelu(x) = x / (1 + exp(-1.5957691 * (x + 0.044715 * x^3)))
class KernelGelu {
public:
    __aicore__ inline KernelGelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t blockLength, uint32_t tileLength)
    {
        uint32_t start = blockLength * GetBlockIdx();
        this->length = 0;
        if (start < totalLength) {
            this->length = totalLength - start < blockLength ? totalLength - start : blockLength;
        }
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ float*)x + start, this->length);
        yGm.SetGlobalBuffer((__gm__ float*)y + start, this->length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(xBuf, tileLength * sizeof(float));
        pipe.InitBuffer(tmpBuf, tileLength * sizeof(float));
        pipe.InitBuffer(constBuf, tileLength * sizeof(float));
        pipe.InitBuffer(resBuf, tileLength * sizeof(float));
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
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm[i * this->tileLength], params, pad);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        LocalTensor<float> x = xBuf.Get<float>();
        LocalTensor<float> t = tmpBuf.Get<float>();
        LocalTensor<float> c = constBuf.Get<float>();
        LocalTensor<float> res = resBuf.Get<float>();
        uint32_t aligned = (n + 7) / 8 * 8;
        DataCopy(x, xLocal, aligned);  // keep a working copy of x
        PipeBarrier<PIPE_ALL>();
        Mul(t, x, x, n);
        Mul(t, t, x, n);
        Duplicate(c, 0.044715f, n);
        Mul(t, t, c, n);
        Add(t, t, x, n);
        Duplicate(c, -1.5957691216057308f, n);
        Mul(t, t, c, n);
        Exp(t, t, n);
        Duplicate(c, 1.0f, n);
        Add(t, t, c, n);
        Div(res, x, t, n);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yLocal, res, aligned);
        PipeBarrier<PIPE_ALL>();
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t i, uint32_t n)
    {
        LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPad(yGm[i * this->tileLength], yLocal, params);
        outQueueY.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> xBuf, tmpBuf, constBuf, resBuf;
    GlobalTensor<float> xGm, yGm;
    uint32_t length;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void gelu(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelGelu op;
    op.Init(x, y, tilingData.totalLength, tilingData.blockLength, tilingData.tileLength);
    op.Process();
}
