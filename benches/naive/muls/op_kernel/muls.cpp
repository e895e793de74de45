#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

template <typename T>
class KernelMuls {
public:
    __aicore__ inline KernelMuls() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t tileNum, float value)
    {
        // every core gets an equal share rounded up to whole 32-byte blocks;
        // the last cores may get less (or nothing)
        uint32_t align = 32 / sizeof(T);
        uint32_t perCore = (totalLength + GetBlockNum() - 1) / GetBlockNum();
        perCore = (perCore + align - 1) / align * align;
        uint32_t start = perCore * GetBlockIdx();
        uint32_t len = 0;
        if (start < totalLength) {
            len = totalLength - start < perCore ? totalLength - start : perCore;
        }
        this->blockLength = len;
        this->tileLength = (perCore + tileNum - 1) / tileNum;
        this->tileLength = (this->tileLength + align - 1) / align * align;
        this->scalar = static_cast<T>(value);
        xGm.SetGlobalBuffer((__gm__ T*)x + start, len);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, len);
        pipe.InitBuffer(inQueue, BUFFER_NUM, this->tileLength * sizeof(T));
        pipe.InitBuffer(outQueue, BUFFER_NUM, this->tileLength * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        uint32_t done = 0;
        while (done < this->blockLength) {
            uint32_t n = this->blockLength - done < this->tileLength ? this->blockLength - done : this->tileLength;
            CopyIn(done, n);
            Compute(n);
            CopyOut(done, n);
            done += n;
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t offset, uint32_t n)
    {
        LocalTensor<T> xLocal = inQueue.AllocTensor<T>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm[offset], params, pad);
        inQueue.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<T> xLocal = inQueue.DeQue<T>();
        LocalTensor<T> yLocal = outQueue.AllocTensor<T>();
        PipeBarrier<PIPE_ALL>();
        for (uint32_t i = 0; i < n; i++) {
            yLocal.SetValue(i, xLocal.GetValue(i) * scalar);
        }
        PipeBarrier<PIPE_ALL>();
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t offset, uint32_t n)
    {
        LocalTensor<T> yLocal = outQueue.DeQue<T>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm[offset], yLocal, params);
        outQueue.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    GlobalTensor<T> xGm, yGm;
    uint32_t blockLength;
    uint32_t tileLength;
    T scalar;
};

extern "C" __global__ __aicore__ void muls(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    if (TILING_KEY_IS(1)) {
        KernelMuls<half> op;
        op.Init(x, y, tilingData.totalLength, tilingData.tileNum, tilingData.factor);
        op.Process();
    } else {
        KernelMuls<float> op;
        op.Init(x, y, tilingData.totalLength, tilingData.tileNum, tilingData.factor);
        op.Process();
    }
}
