#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

class KernelAddcmul {
public:
    __aicore__ inline KernelAddcmul() {}
    __aicore__ inline void Init(GM_ADDR input, GM_ADDR x1, GM_ADDR x2, GM_ADDR value, GM_ADDR y,
                                uint32_t totalLength, uint32_t tileLength, uint32_t valueIsScalar)
    {
        uint32_t perCore = (totalLength + GetBlockNum() - 1) / GetBlockNum();
        perCore = (perCore + 7) / 8 * 8;
        uint32_t start = perCore * GetBlockIdx();
        this->length = 0;
        if (start < totalLength) {
            this->length = totalLength - start < perCore ? totalLength - start : perCore;
        }
        this->tileLength = tileLength;
        this->valueIsScalar = valueIsScalar;
        inGm.SetGlobalBuffer((__gm__ float*)input + start, this->length);
        x1Gm.SetGlobalBuffer((__gm__ float*)x1 + start, this->length);
        x2Gm.SetGlobalBuffer((__gm__ float*)x2 + start, this->length);
        if (valueIsScalar) {
            vGm.SetGlobalBuffer((__gm__ float*)value, 1);
            this->scalarValue = vGm.GetValue(0);
        } else {
            vGm.SetGlobalBuffer((__gm__ float*)value + start, this->length);
        }
        yGm.SetGlobalBuffer((__gm__ float*)y + start, this->length);
        pipe.InitBuffer(inQueue, BUFFER_NUM, 4 * tileLength * sizeof(float));
        pipe.InitBuffer(outQueue, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(tmpBuf, tileLength * sizeof(float));
        pipe.InitBuffer(valueBuf, tileLength * sizeof(float));
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
        LocalTensor<float> all = inQueue.AllocTensor<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        DataCopyPad(all, inGm[off], params, pad);
        DataCopyPad(all[this->tileLength], x1Gm[off], params, pad);
        DataCopyPad(all[2 * this->tileLength], x2Gm[off], params, pad);
        if (!this->valueIsScalar) {
            DataCopyPad(all[3 * this->tileLength], vGm[off], params, pad);
        }
        inQueue.EnQue(all);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> all = inQueue.DeQue<float>();
        LocalTensor<float> yLocal = outQueue.AllocTensor<float>();
        LocalTensor<float> t = tmpBuf.Get<float>();
        LocalTensor<float> v = valueBuf.Get<float>();
        Mul(t, all[this->tileLength], all[2 * this->tileLength], n);
        if (this->valueIsScalar) {
            Duplicate(v, this->scalarValue, n);
            Mul(t, t, v, n);
        } else {
            Mul(t, t, all[3 * this->tileLength], n);
        }
        Add(yLocal, all, t, n);
        outQueue.EnQue<float>(yLocal);
        inQueue.FreeTensor(all);
    }
    __aicore__ inline void CopyOut(uint32_t off, uint32_t n)
    {
        LocalTensor<float> yLocal = outQueue.DeQue<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPad(yGm[off], yLocal, params);
        outQueue.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> tmpBuf, valueBuf;
    GlobalTensor<float> inGm, x1Gm, x2Gm, vGm, yGm;
    uint32_t length;
    uint32_t tileLength;
    uint32_t valueIsScalar;
    float scalarValue;
};

extern "C" __global__ __aicore__ void addcmul(GM_ADDR input_data, GM_ADDR x1, GM_ADDR x2, GM_ADDR value, GM_ADDR y,
                                              GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelAddcmul op;
    op.Init(input_data, x1, x2, value, y, t.totalLength, t.tileLength, t.valueIsScalar);
    op.Process();
}
