#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 1;

class KernelLerp {
public:
    __aicore__ inline KernelLerp() {}
    __aicore__ inline void Init(GM_ADDR start, GM_ADDR end, GM_ADDR weight, GM_ADDR y, uint32_t totalLength,
                                uint32_t tileNum)
    {
        uint32_t perCore = (totalLength + AscendC::GetBlockNum() - 1) / AscendC::GetBlockNum();
        perCore = (perCore + 7) / 8 * 8;
        uint32_t offset = perCore * AscendC::GetBlockIdx();
        this->length = 0;
        if (offset < totalLength) {
            this->length = totalLength - offset < perCore ? totalLength - offset : perCore;
        }
        this->tileLength = ((perCore + tileNum - 1) / tileNum + 7) / 8 * 8;
        sGm.SetGlobalBuffer((__gm__ float*)start + offset, this->length);
        eGm.SetGlobalBuffer((__gm__ float*)end + offset, this->length);
        wGm.SetGlobalBuffer((__gm__ float*)weight + offset, this->length);
        yGm.SetGlobalBuffer((__gm__ float*)y + offset, this->length);
        pipe.InitBuffer(inQueueS, BUFFER_NUM, this->tileLength * sizeof(float));
        pipe.InitBuffer(inQueueE, BUFFER_NUM, this->tileLength * sizeof(float));
        pipe.InitBuffer(inQueueW, BUFFER_NUM, this->tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, this->tileLength * sizeof(float));
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
        AscendC::LocalTensor<float> sLocal = inQueueS.AllocTensor<float>();
        AscendC::LocalTensor<float> eLocal = inQueueE.AllocTensor<float>();
        AscendC::LocalTensor<float> wLocal = inQueueW.AllocTensor<float>();
        AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(sLocal, sGm[off], params, pad);
        AscendC::DataCopyPad(eLocal, eGm[off], params, pad);
        AscendC::DataCopyPad(wLocal, wGm[off], params, pad);
        inQueueS.EnQue(sLocal);
        inQueueE.EnQue(eLocal);
        inQueueW.EnQue(wLocal);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        AscendC::LocalTensor<float> sLocal = inQueueS.DeQue<float>();
        AscendC::LocalTensor<float> eLocal = inQueueE.DeQue<float>();
        AscendC::LocalTensor<float> wLocal = inQueueW.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        AscendC::Sub(yLocal, eLocal, sLocal, n);
        AscendC::PipeBarrier<AscendC::PIPE_ALL>();
        AscendC::Mul(yLocal, yLocal, wLocal, n);
        AscendC::PipeBarrier<AscendC::PIPE_ALL>();
        AscendC::Add(yLocal, yLocal, sLocal, n);
        AscendC::PipeBarrier<AscendC::PIPE_ALL>();
        outQueueY.EnQue<float>(yLocal);
        inQueueS.FreeTensor(sLocal);
        inQueueE.FreeTensor(eLocal);
        inQueueW.FreeTensor(wLocal);
    }
    __aicore__ inline void CopyOut(uint32_t off, uint32_t n)
    {
        AscendC::LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPad(yGm[off], yLocal, params);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueS, inQueueE, inQueueW;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::GlobalTensor<float> sGm, eGm, wGm, yGm;
    uint32_t length;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void lerp(GM_ADDR start, GM_ADDR end, GM_ADDR weight, GM_ADDR y, GM_ADDR workspace,
                                           GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelLerp op;
    op.Init(start, end, weight, y, tilingData.totalLength, tilingData.tileNum);
    op.Process();
}
