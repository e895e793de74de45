#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 1;

template <typename T>
class KernelTriu {
public:
    __aicore__ inline KernelTriu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t height, uint32_t width,
                                int32_t diagonal, uint32_t rowsPerCore, uint32_t tileRows)
    {
        this->rowStart = rowsPerCore * GetBlockIdx();
        this->myRows = 0;
        if (this->rowStart < rows) {
            this->myRows = rows - this->rowStart < rowsPerCore ? rows - this->rowStart : rowsPerCore;
        }
        this->height = height;
        this->width = width;
        this->diagonal = diagonal;
        this->tileRows = tileRows;
        // UB rows start on 32-byte blocks
        this->pitch = (width * sizeof(T) + 31) / 32 * 32 / sizeof(T);
        xGm.SetGlobalBuffer((__gm__ T*)x + static_cast<uint64_t>(this->rowStart) * width);
        yGm.SetGlobalBuffer((__gm__ T*)y + static_cast<uint64_t>(this->rowStart) * width);
        pipe.InitBuffer(inQueue, BUFFER_NUM, tileRows * this->pitch * sizeof(T));
        pipe.InitBuffer(outQueue, BUFFER_NUM, tileRows * this->pitch * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t t = 0; t < this->myRows; t += this->tileRows) {
            uint32_t n = this->myRows - t < this->tileRows ? this->myRows - t : this->tileRows;
            CopyIn(t, n);
            Compute(t, n);
            CopyOut(t, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t t, uint32_t n)
    {
        LocalTensor<T> xLocal = inQueue.AllocTensor<T>();
        for (uint32_t r = 0; r < n; r++) {
            DataCopyExtParams params{1, static_cast<uint32_t>(this->width * sizeof(T)), 0, 0, 0};
            DataCopyPad(xLocal[r * this->pitch], xGm[(t + r) * this->width], params, DataCopyPadExtParams<T>{false, 0, 0, 0});
        }
        inQueue.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t t, uint32_t n)
    {
        LocalTensor<T> xLocal = inQueue.DeQue<T>();
        LocalTensor<T> yLocal = outQueue.AllocTensor<T>();
        Adds(yLocal, xLocal, static_cast<T>(0), n * this->pitch);
        PipeBarrier<PIPE_ALL>();
        for (uint32_t r = 0; r < n; r++) {
            int32_t i = static_cast<int32_t>((this->rowStart + t + r) % this->height);
            int32_t zeros = i + this->diagonal;
            if (zeros < 0) {
                zeros = 0;
            }
            if (zeros > static_cast<int32_t>(this->width)) {
                zeros = static_cast<int32_t>(this->width);
            }
            for (int32_t j = 0; j < zeros; j++) {
                yLocal.SetValue(r * this->pitch + j, static_cast<T>(0));
            }
        }
        PipeBarrier<PIPE_ALL>();
        outQueue.EnQue<T>(yLocal);
        inQueue.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t t, uint32_t n)
    {
        LocalTensor<T> yLocal = outQueue.DeQue<T>();
        for (uint32_t r = 0; r < n; r++) {
            DataCopyExtParams params{1, static_cast<uint32_t>(this->width * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[(t + r) * this->width], yLocal[r * this->pitch], params);
        }
        outQueue.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    GlobalTensor<T> xGm, yGm;
    uint32_t rowStart, myRows, height, width, pitch, tileRows;
    int32_t diagonal;
};

extern "C" __global__ __aicore__ void triu(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    if (TILING_KEY_IS(1)) {
        KernelTriu<half> op;
        op.Init(x, y, t.rows, t.height, t.width, t.diagonal, t.rowsPerCore, t.tileRows);
        op.Process();
    } else {
        KernelTriu<float> op;
        op.Init(x, y, t.rows, t.height, t.width, t.diagonal, t.rowsPerCore, t.tileRows);
        op.Process();
    }
}
