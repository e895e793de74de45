#include "kernel_operator.h"
using namespace AscendC;

class KernelRmsNorm {
public:
    __aicore__ inline KernelRmsNorm() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, uint32_t rows, uint32_t cols,
                                uint32_t tileLength, float epsilon)
    {
        uint32_t perCore = (rows + GetBlockNum() - 1) / GetBlockNum();
        this->rowStart = perCore * GetBlockIdx();
        this->rowCount = 0;
        if (this->rowStart < rows) {
            this->rowCount = rows - this->rowStart < perCore ? rows - this->rowStart : perCore;
        }
        this->cols = cols;
        this->tileLength = tileLength;
        this->epsilon = epsilon;
        xGm.SetGlobalBuffer((__gm__ float*)x, rows * cols);
        gammaGm.SetGlobalBuffer((__gm__ float*)gamma, cols);
        yGm.SetGlobalBuffer((__gm__ float*)y, rows * cols);
        rstdGm.SetGlobalBuffer((__gm__ float*)rstd, rows);
        pipe.InitBuffer(xBuf, tileLength * sizeof(float));
        pipe.InitBuffer(gammaBuf, tileLength * sizeof(float));
        pipe.InitBuffer(yBuf, tileLength * sizeof(float));
        pipe.InitBuffer(sqBuf, tileLength * sizeof(float));
        pipe.InitBuffer(tmpBuf, tileLength * sizeof(float));
        pipe.InitBuffer(sumBuf, 64);
    }
    __aicore__ inline void Process()
    {
        LocalTensor<float> xt = xBuf.Get<float>();
        LocalTensor<float> gt = gammaBuf.Get<float>();
        LocalTensor<float> yt = yBuf.Get<float>();
        LocalTensor<float> sq = sqBuf.Get<float>();
        LocalTensor<float> tmp = tmpBuf.Get<float>();
        LocalTensor<float> s = sumBuf.Get<float>();
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        for (uint32_t r = 0; r < this->rowCount; r++) {
            uint32_t row = this->rowStart + r;
            uint64_t base = (uint64_t)row * this->cols;
            // Pass 1: the sum of squares of the row, tile by tile.
            float sum = 0.0f;
            for (uint32_t off = 0; off < this->cols; off += this->tileLength) {
                uint32_t n = this->cols - off < this->tileLength ? this->cols - off : this->tileLength;
                DataCopyPad(xt, xGm[base + off], DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0}, pad);
                PipeBarrier<PIPE_ALL>();
                Mul(sq, xt, xt, n);
                PipeBarrier<PIPE_V>();
                ReduceSum(s, sq, tmp, n);
                PipeBarrier<PIPE_ALL>();
                sum += s.GetValue(0);
            }
            // rstd = 1 / sqrt(sum / cols + epsilon)
            Duplicate(s, sum / this->cols + this->epsilon, 8);
            PipeBarrier<PIPE_V>();
            Sqrt(s, s, 8);
            PipeBarrier<PIPE_V>();
            Duplicate(tmp, 1.0f, 8);
            PipeBarrier<PIPE_V>();
            Div(s, tmp, s, 8);
            PipeBarrier<PIPE_ALL>();
            float rstd = s.GetValue(0);
            DataCopyPad(rstdGm[row], s, DataCopyExtParams{1, static_cast<uint32_t>(sizeof(float)), 0, 0, 0});
            PipeBarrier<PIPE_ALL>();
            // Pass 2: y = x * rstd * gamma, tile by tile.
            for (uint32_t off = 0; off < this->cols; off += this->tileLength) {
                uint32_t n = this->cols - off < this->tileLength ? this->cols - off : this->tileLength;
                DataCopyPad(xt, xGm[base + off], DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0}, pad);
                DataCopyPad(gt, gammaGm[off], DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0}, pad);
                PipeBarrier<PIPE_ALL>();
                Muls(yt, xt, rstd, n);
                PipeBarrier<PIPE_V>();
                Mul(yt, yt, gt, n);
                PipeBarrier<PIPE_ALL>();
                DataCopyPad(yGm[base + off], yt, DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0});
                PipeBarrier<PIPE_ALL>();
            }
        }
    }

private:
    TPipe pipe;
    TBuf<TPosition::VECCALC> xBuf, gammaBuf, yBuf, sqBuf, tmpBuf, sumBuf;
    GlobalTensor<float> xGm, gammaGm, yGm, rstdGm;
    uint32_t rowStart;
    uint32_t rowCount;
    uint32_t cols;
    uint32_t tileLength;
    float epsilon;
};

extern "C" __global__ __aicore__ void rms_norm(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR workspace,
                                               GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelRmsNorm op;
    op.Init(x, gamma, y, rstd, t.rows, t.cols, t.tileLength, t.epsilon);
    op.Process();
}
