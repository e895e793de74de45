#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
class KernelNeg {
public:
    __aicore__ inline KernelNeg() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength)
    {
        uint32_t perCore = (totalLength + GetBlockNum() - 1) / GetBlockNum();
        uint32_t start = perCore * GetBlockIdx();
        this->length = 0;
        if (start < totalLength) {
            this->length = totalLength - start < perCore ? totalLength - start : perCore;
        }
        xGm.SetGlobalBuffer((__gm__ T*)x + start, this->length);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, this->length);
        pipe.InitBuffer(dummy, 32);
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < this->length; i++) {
            T v = xGm.GetValue(i);
            yGm.SetValue(i, -v);
        }
    }

private:
    TPipe pipe;
    TBuf<TPosition::VECCALC> dummy;
    GlobalTensor<T> xGm, yGm;
    uint32_t length;
};

extern "C" __global__ __aicore__ void neg(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    if (TILING_KEY_IS(1)) {
        KernelNeg<float> op;
        op.Init(x, y, t.totalLength);
        op.Process();
    } else {
        KernelNeg<int32_t> op;
        op.Init(x, y, t.totalLength);
        op.Process();
    }
}
