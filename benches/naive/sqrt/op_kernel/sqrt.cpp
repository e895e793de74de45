#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelSqrt {
public:
    __aicore__ inline KernelSqrt() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t tileLength)
    {
        uint32_t perCore = totalLength / GetBlockNum() / tileLength * tileLength;
        uint32_t start = perCore * GetBlockIdx();
        this->length = GetBlockIdx() == GetBlockNum() - 1 ? totalLength - start : perCore;
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ float*)x + start, this->length);
        yGm.SetGlobalBuffer((__gm__ float*)y + start, this->length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t off = 0; off < this->length; off += this->tileLength) {
            uint32_t n = this->length - off < this->tileLength ? this->length - off : this->tileLength;
            CopyIn(off, n);
            PipeBarrier<PIPE_ALL>();
            Compute(n);
            PipeBarrier<PIPE_ALL>();
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
        Sqrt(yLocal, xLocal, n);
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
    GlobalTensor<float> xGm, yGm;
    uint32_t length;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void sqrt(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelSqrt op;
    op.Init(x, y, t.totalLength, t.tileLength);
    op.Process();
}
