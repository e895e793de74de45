// MulSigmoid kernel, float16 arithmetic throughout (t1..t3 rounded to half):
//   s = 1 / (1 + exp(-(x1 * t1))),  s' = s < t2 ? s : 2 s,
//   out[n] = s'[n] * p,  p = x2 * t3 (x2 broadcast over the rows of x1).
// Ops per tile: Muls, Exp, Adds, Div, Compares, Muls, Select, then one Mul per
// row, or one repeat-strided Mul per 128 columns that covers every row when
// that is fewer instructions. p is computed once per column chunk.
//
// Work units are (chunk, row) pairs in chunk-major order (tiling); a tile
// holds up to tileRows rows of one chunk, moved with one strided DataCopyPad
// (rows padded to 32 B in UB). The x2 chunk is reloaded only when the chunk
// changes. Double-buffered queues overlap MTE2, V and MTE3.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t BLOCK_ELEMS = 16;      // half per 32 B block
constexpr uint32_t REPEAT_ELEMS = 128;    // half per 256 B repeat
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint32_t MAX_REP_STRIDE = 255;  // repeat stride limit, in 32 B blocks

class KernelMulSigmoid {
public:
    __aicore__ inline KernelMulSigmoid() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR out, const TilingData& tiling, TPipe* pipe)
    {
        rows = tiling.rows;
        cols = tiling.cols;
        chunkLen = tiling.chunkLen;
        tileRows = tiling.tileRows;
        tileElems = tiling.tileElems;
        negT1 = -half(tiling.t1);
        t2 = half(tiling.t2);
        t3 = half(tiling.t3);
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        if (blockIdx < tiling.tailCoreNum) {
            unitStart = blockIdx * (tiling.blockUnits + 1);
            unitCount = tiling.blockUnits + 1;
        } else {
            unitStart = tiling.tailCoreNum * (tiling.blockUnits + 1) +
                        (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            unitCount = tiling.blockUnits;
        }
        uint64_t total = static_cast<uint64_t>(rows) * cols;
        x1Gm.SetGlobalBuffer((__gm__ half*)x1, total);
        x2Gm.SetGlobalBuffer((__gm__ half*)x2, cols);
        outGm.SetGlobalBuffer((__gm__ half*)out, total);
        uint32_t chunkBytes = AlignUp(chunkLen, BLOCK_ELEMS) * sizeof(half);
        pipe->InitBuffer(inQueueX1, tiling.bufferNum, tileElems * sizeof(half));
        pipe->InitBuffer(outQueueOut, tiling.bufferNum, tileElems * sizeof(half));
        pipe->InitBuffer(onesBuf, tileElems * sizeof(half));
        pipe->InitBuffer(twiceBuf, tileElems * sizeof(half));
        pipe->InitBuffer(maskBuf, AlignUp(tileElems / 8, BLOCK_BYTES));
        pipe->InitBuffer(inQueueX2, 1, chunkBytes);
        pipe->InitBuffer(pBuf, chunkBytes);
    }

    __aicore__ inline void Process()
    {
        if (unitCount == 0) {
            return;
        }
        Duplicate(onesBuf.Get<half>(), half(1.0f), tileElems);
        uint64_t unit = unitStart;
        uint64_t unitEnd = unitStart + unitCount;
        uint64_t loadedChunk = ~0ull;
        while (unit < unitEnd) {
            uint64_t chunk = unit / rows;
            uint32_t row = static_cast<uint32_t>(unit % rows);
            uint64_t left = unitEnd - unit;
            uint32_t nRows = left < tileRows ? static_cast<uint32_t>(left) : tileRows;
            if (nRows > rows - row) {
                nRows = rows - row;
            }
            uint32_t colOff = static_cast<uint32_t>(chunk) * chunkLen;
            uint32_t len = cols - colOff < chunkLen ? cols - colOff : chunkLen;
            if (chunk != loadedChunk) {
                LoadP(colOff, len);
                loadedChunk = chunk;
            }
            CopyIn(row, nRows, colOff, len);
            Compute(nRows, len);
            CopyOut(row, nRows, colOff, len);
            unit += nRows;
        }
    }

private:
    __aicore__ inline uint32_t AlignUp(uint32_t value, uint32_t align)
    {
        return (value + align - 1) / align * align;
    }

    // p = x2[colOff .. colOff + len) * t3, kept in UB for the chunk.
    __aicore__ inline void LoadP(uint32_t colOff, uint32_t len)
    {
        LocalTensor<half> x2Local = inQueueX2.AllocTensor<half>();
        if ((len * sizeof(half)) % BLOCK_BYTES == 0) {
            DataCopy(x2Local, x2Gm[colOff], len);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(half)), 0, 0, 0};
            DataCopyPadExtParams<half> padParams{false, 0, 0, 0};
            DataCopyPad(x2Local, x2Gm[colOff], copyParams, padParams);
        }
        inQueueX2.EnQue(x2Local);
        x2Local = inQueueX2.DeQue<half>();
        Muls(pBuf.Get<half>(), x2Local, t3, AlignUp(len, BLOCK_ELEMS));
        inQueueX2.FreeTensor(x2Local);
    }

    __aicore__ inline void CopyIn(uint32_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        LocalTensor<half> x1Local = inQueueX1.AllocTensor<half>();
        uint64_t offset = static_cast<uint64_t>(row) * cols + colOff;
        if (nRows == 1 && (len * sizeof(half)) % BLOCK_BYTES == 0) {
            DataCopy(x1Local, x1Gm[offset], len);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(len * sizeof(half)),
                                         static_cast<uint32_t>((cols - len) * sizeof(half)), 0, 0};
            DataCopyPadExtParams<half> padParams{false, 0, 0, 0};
            DataCopyPad(x1Local, x1Gm[offset], copyParams, padParams);
        }
        inQueueX1.EnQue(x1Local);
    }

    __aicore__ inline void Compute(uint32_t nRows, uint32_t len)
    {
        uint32_t stride = AlignUp(len, BLOCK_ELEMS);
        // Compares needs whole 256 B repeats; the buffers are sized for it.
        uint32_t count = AlignUp(nRows * stride, REPEAT_ELEMS);
        LocalTensor<half> x1Local = inQueueX1.DeQue<half>();
        LocalTensor<half> s = outQueueOut.AllocTensor<half>();
        LocalTensor<half> ones = onesBuf.Get<half>();
        LocalTensor<half> twice = twiceBuf.Get<half>();
        LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
        Muls(s, x1Local, negT1, count);
        inQueueX1.FreeTensor(x1Local);
        Exp(s, s, count);
        Adds(s, s, half(1.0f), count);
        Div(s, ones, s, count);
        Compares(mask, s, t2, CMPMODE::LT, count);
        Muls(twice, s, half(2.0f), count);
        Select(s, mask, s, twice, SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
        ScaleRows(s, nRows, len, stride);
        outQueueOut.EnQue<half>(s);
    }

    // s[r] *= p for every row r of the tile.
    __aicore__ inline void ScaleRows(const LocalTensor<half>& s, uint32_t nRows, uint32_t len, uint32_t stride)
    {
        LocalTensor<half> p = pBuf.Get<half>();
        uint32_t groups = (len + REPEAT_ELEMS - 1) / REPEAT_ELEMS;
        uint32_t repStride = stride / BLOCK_ELEMS;
        uint32_t strided = groups * ((nRows + MAX_REPEAT - 1) / MAX_REPEAT);
        if (nRows > 1 && repStride <= MAX_REP_STRIDE && strided < nRows) {
            // One instruction per 128 columns and 255 rows: the row repeat
            // stride walks s, p is re-read (repeat stride 0).
            BinaryRepeatParams params(1, 1, 1, static_cast<uint8_t>(repStride), static_cast<uint8_t>(repStride), 0);
            for (uint32_t r0 = 0; r0 < nRows; r0 += MAX_REPEAT) {
                uint32_t reps = nRows - r0 < MAX_REPEAT ? nRows - r0 : MAX_REPEAT;
                for (uint32_t g = 0; g < groups; g++) {
                    uint32_t lanes = len - g * REPEAT_ELEMS < REPEAT_ELEMS ? len - g * REPEAT_ELEMS : REPEAT_ELEMS;
                    uint32_t base = r0 * stride + g * REPEAT_ELEMS;
                    Mul(s[base], s[base], p[g * REPEAT_ELEMS], static_cast<uint64_t>(lanes),
                        static_cast<uint8_t>(reps), params);
                }
            }
        } else {
            for (uint32_t r = 0; r < nRows; r++) {
                Mul(s[r * stride], s[r * stride], p, len);
            }
        }
    }

    __aicore__ inline void CopyOut(uint32_t row, uint32_t nRows, uint32_t colOff, uint32_t len)
    {
        LocalTensor<half> outLocal = outQueueOut.DeQue<half>();
        uint64_t offset = static_cast<uint64_t>(row) * cols + colOff;
        if (nRows == 1 && (len * sizeof(half)) % BLOCK_BYTES == 0) {
            DataCopy(outGm[offset], outLocal, len);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(len * sizeof(half)), 0,
                                         static_cast<uint32_t>((cols - len) * sizeof(half)), 0};
            DataCopyPad(outGm[offset], outLocal, copyParams);
        }
        outQueueOut.FreeTensor(outLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX1;
    TQue<QuePosition::VECIN, 1> inQueueX2;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueOut;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> twiceBuf;
    TBuf<TPosition::VECCALC> maskBuf;
    TBuf<TPosition::VECCALC> pBuf;
    GlobalTensor<half> x1Gm;
    GlobalTensor<half> x2Gm;
    GlobalTensor<half> outGm;
    uint64_t unitStart = 0;
    uint64_t unitCount = 0;
    uint32_t rows = 0;
    uint32_t cols = 0;
    uint32_t chunkLen = 0;
    uint32_t tileRows = 1;
    uint32_t tileElems = 0;
    half negT1;
    half t2;
    half t3;
};

extern "C" __global__ __aicore__ void mul_sigmoid(GM_ADDR x1, GM_ADDR x2, GM_ADDR out, GM_ADDR workspace,
                                                  GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelMulSigmoid op;
        op.Init(x1, x2, out, tilingData, &pipe);
        op.Process();
    }
}
