#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

template <typename T>
class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength)
    {
        uint32_t blockNum = AscendC::GetBlockNum();
        uint32_t blockIdx = AscendC::GetBlockIdx();
        uint32_t perCore = totalLength / blockNum;
        uint32_t offset = perCore * blockIdx;
        this->blockLength = perCore;
        if (blockIdx == blockNum - 1) {
            this->blockLength = totalLength - offset;  // the last core takes the rest
        }
        this->tileLength = tileLength;
        this->tileNum = this->blockLength / tileLength;
        this->tailLength = this->blockLength - this->tileNum * tileLength;

        xGm.SetGlobalBuffer((__gm__ T*)x + offset, this->blockLength);
        yGm.SetGlobalBuffer((__gm__ T*)y + offset, this->blockLength);
        zGm.SetGlobalBuffer((__gm__ T*)z + offset, this->blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, this->tileLength * sizeof(T));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, this->tileLength * sizeof(T));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, this->tileLength * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < this->tileNum; i++) {
            CopyIn(i);
            AscendC::PipeBarrier<PIPE_ALL>();
            Compute(i);
            AscendC::PipeBarrier<PIPE_ALL>();
            CopyOut(i);
            AscendC::PipeBarrier<PIPE_ALL>();
        }
        // elements that do not fill a tile
        uint32_t base = this->tileNum * this->tileLength;
        for (uint32_t i = 0; i < this->tailLength; i++) {
            zGm.SetValue(base + i, xGm.GetValue(base + i) + yGm.GetValue(base + i));
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress)
    {
        AscendC::LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        AscendC::LocalTensor<T> yLocal = inQueueY.AllocTensor<T>();
        AscendC::DataCopy(xLocal, xGm[progress * this->tileLength], this->tileLength);
        AscendC::DataCopy(yLocal, yGm[progress * this->tileLength], this->tileLength);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(uint32_t progress)
    {
        AscendC::LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        AscendC::LocalTensor<T> yLocal = inQueueY.DeQue<T>();
        AscendC::LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();
        AscendC::Add(zLocal, xLocal, yLocal, this->tileLength);
        outQueueZ.EnQue<T>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t progress)
    {
        AscendC::LocalTensor<T> zLocal = outQueueZ.DeQue<T>();
        AscendC::DataCopy(zGm[progress * this->tileLength], zLocal, this->tileLength);
        outQueueZ.FreeTensor(zLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<T> xGm;
    AscendC::GlobalTensor<T> yGm;
    AscendC::GlobalTensor<T> zGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
    uint32_t tailLength;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    if (TILING_KEY_IS(1)) {
        KernelAdd<half> op;
        op.Init(x, y, z, tiling_data.totalLength, tiling_data.tileLength);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelAdd<float> op;
        op.Init(x, y, z, tiling_data.totalLength, tiling_data.tileLength);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelAdd<int32_t> op;
        op.Init(x, y, z, tiling_data.totalLength, tiling_data.tileLength);
        op.Process();
    }
}
