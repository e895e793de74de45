#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

class KernelReciprocal {
public:
    __aicore__ inline KernelReciprocal() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t tileLength)
    {
        uint32_t perCore = totalLength / GetBlockNum() / 8 * 8;
        uint32_t start = perCore * GetBlockIdx();
        this->length = perCore;
        if (GetBlockIdx() == GetBlockNum() - 1) {
            this->length = totalLength - start;
        }
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ float*)x + start, this->length);
        yGm.SetGlobalBuffer((__gm__ float*)y + start, this->length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(onesBuf, tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t tiles = (this->length + this->tileLength - 1) / this->tileLength;
        for (uint32_t i = 0; i < tiles; i++) {
            uint32_t n = i == tiles - 1 ? this->length - i * this->tileLength : this->tileLength;
            CopyIn(i, n);
            PipeBarrier<PIPE_ALL>();
            Compute(n);
            PipeBarrier<PIPE_ALL>();
            CopyOut(i, n);
            PipeBarrier<PIPE_ALL>();
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
        LocalTensor<float> ones = onesBuf.Get<float>();
        Duplicate(ones, 1.0f, n);
        Div(yLocal, ones, xLocal, n);
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
    TBuf<TPosition::VECCALC> onesBuf;
    GlobalTensor<float> xGm, yGm;
    uint32_t length;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void reciprocal(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelReciprocal op;
    op.Init(x, y, tilingData.totalLength, tilingData.tileLength);
    op.Process();
}
