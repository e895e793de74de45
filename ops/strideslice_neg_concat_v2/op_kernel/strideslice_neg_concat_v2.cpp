// StridesliceNegConcatV2 kernel: with C the last dimension and m = C / 2,
// y[..., :m] = x[..., :m] and y[..., m:] = -x[..., m:] (float16, float32,
// bfloat16).
//
// Every vector core takes a balanced run of whole rows (tiling: the first
// tailCoreNum cores take one row more) and streams it through UB with
// double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out) overlap.
// Full tiles move with DataCopy; a tile whose size is not a multiple of 32 B
// moves with DataCopyPad.
//
// Short rows (a tile holds tileRows whole rows): since every tile starts at
// a row, one sign pattern serves every tile. It is built once per core with
// vector instructions: the index i of each element, its column
// i - C * floor((i + 1/2) / C) (exact in float32 for the tile sizes used),
// and the sign 1 - 2 * clamp(col - m + 1, 0, 1). A tile is then one Mul by
// the pattern (a sign flip or a copy per element, exact for NaN, infinities
// and signed zeros).
// Long rows (C larger than a tile): each half of a row moves in chunks, one
// Muls by +1 or -1 per chunk.
// bfloat16 has no arithmetic on A2: Cast to float32 (exact), Mul, Cast back
// (exact).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

template <typename T, bool LONG_ROWS>
class KernelStridesliceNegConcat {
public:
    __aicore__ inline KernelStridesliceNegConcat() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
    {
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t bigRows = static_cast<uint64_t>(tiling.blockRows) + 1;
        uint64_t startRow;
        if (blockIdx < tiling.tailCoreNum) {
            startRow = blockIdx * bigRows;
            rowCount = static_cast<uint32_t>(bigRows);
        } else {
            startRow = tiling.tailCoreNum * bigRows + (blockIdx - tiling.tailCoreNum) * tiling.blockRows;
            rowCount = tiling.blockRows;
        }
        if (startRow >= tiling.rows) {
            rowCount = 0;
        } else if (startRow + rowCount > tiling.rows) {
            rowCount = static_cast<uint32_t>(tiling.rows - startRow);
        }
        cols = tiling.cols;
        halfCols = tiling.half;
        tileRows = tiling.tileRows;
        tileCap = tiling.tileCap;
        uint64_t start = startRow * cols;
        uint64_t length = static_cast<uint64_t>(rowCount) * cols;
        xGm.SetGlobalBuffer((__gm__ T*)x + start, length);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, length);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileCap * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileCap * sizeof(T));
        pipe->InitBuffer(scratchBuf, tileCap * sizeof(float));
        if constexpr (!LONG_ROWS) {
            pipe->InitBuffer(patternBuf, tileCap * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (rowCount == 0) {
            return;
        }
        if constexpr (LONG_ROWS) {
            for (uint32_t r = 0; r < rowCount; r++) {
                uint64_t rowStart = static_cast<uint64_t>(r) * cols;
                Stream(rowStart, halfCols, 1.0f);
                Stream(rowStart + halfCols, cols - halfCols, -1.0f);
            }
        } else {
            BuildPattern();
            uint32_t tileNum = (rowCount + tileRows - 1) / tileRows;
            for (uint32_t t = 0; t < tileNum; t++) {
                uint32_t rowsHere = (t + 1 == tileNum) ? rowCount - t * tileRows : tileRows;
                uint64_t offset = static_cast<uint64_t>(t) * tileRows * cols;
                uint32_t length = rowsHere * cols;
                CopyIn(offset, length);
                ComputePattern(length);
                CopyOut(offset, length);
            }
        }
    }

private:
    // The +1/-1 pattern of tileRows rows: float32 in patternBuf (float32 and
    // bfloat16 paths) or float16 in scratchBuf (float16 path).
    __aicore__ inline void BuildPattern()
    {
        uint32_t n = tileRows * cols;
        LocalTensor<float> index = scratchBuf.Get<float>();
        LocalTensor<float> pat = patternBuf.Get<float>();
        LocalTensor<int32_t> patInt = pat.template ReinterpretCast<int32_t>();
        CreateVecIndex(index, 0.0f, n);
        Adds(pat, index, 0.5f, n);
        Muls(pat, pat, 1.0f / static_cast<float>(cols), n);
        Cast(patInt, pat, RoundMode::CAST_FLOOR, n);  // row of each element
        Cast(pat, patInt, RoundMode::CAST_NONE, n);
        Muls(pat, pat, -static_cast<float>(cols), n);
        Add(pat, pat, index, n);  // column
        Adds(pat, pat, 1.0f - static_cast<float>(halfCols), n);
        Maxs(pat, pat, 0.0f, n);
        Mins(pat, pat, 1.0f, n);  // 0 on the kept half, 1 on the negated half
        Muls(pat, pat, -2.0f, n);
        Adds(pat, pat, 1.0f, n);
        if constexpr (IsSameType<T, half>::value) {
            LocalTensor<half> patHalf = scratchBuf.Get<half>();
            Cast(patHalf, pat, RoundMode::CAST_NONE, n);
        }
    }

    __aicore__ inline void ComputePattern(uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        if constexpr (IsSameType<T, half>::value) {
            Mul(yLocal, xLocal, scratchBuf.Get<half>(), length);
        } else if constexpr (IsSameType<T, float>::value) {
            Mul(yLocal, xLocal, patternBuf.Get<float>(), length);
        } else {
            LocalTensor<float> xf = scratchBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, length);
            Mul(xf, xf, patternBuf.Get<float>(), length);
            Cast(yLocal, xf, RoundMode::CAST_RINT, length);
        }
        outQueueY.EnQue<T>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }

    // Elements [start, start + count) of the core's range times `sign`.
    __aicore__ inline void Stream(uint64_t start, uint32_t count, float sign)
    {
        for (uint32_t done = 0; done < count; done += tileCap) {
            uint32_t length = count - done < tileCap ? count - done : tileCap;
            CopyIn(start + done, length);
            LocalTensor<T> xLocal = inQueueX.DeQue<T>();
            LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
            if constexpr (IsSameType<T, bfloat16_t>::value) {
                LocalTensor<float> xf = scratchBuf.Get<float>();
                Cast(xf, xLocal, RoundMode::CAST_NONE, length);
                Muls(xf, xf, sign, length);
                Cast(yLocal, xf, RoundMode::CAST_RINT, length);
            } else {
                Muls(yLocal, xLocal, static_cast<T>(sign), length);
            }
            outQueueY.EnQue<T>(yLocal);
            inQueueX.FreeTensor(xLocal);
            CopyOut(start + done, length);
        }
    }

    __aicore__ inline void CopyIn(uint64_t offset, uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t length)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> scratchBuf;
    TBuf<TPosition::VECCALC> patternBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t rowCount = 0;
    uint32_t cols = 0;
    uint32_t halfCols = 0;
    uint32_t tileRows = 0;
    uint32_t tileCap = 0;
};

template <typename T, bool LONG_ROWS, typename TilingData>
__aicore__ inline void RunStridesliceNegConcat(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelStridesliceNegConcat<T, LONG_ROWS> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void strideslice_neg_concat_v2(GM_ADDR input, GM_ADDR output, GM_ADDR workspace,
                                                                GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunStridesliceNegConcat<half, false>(input, output, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunStridesliceNegConcat<float, false>(input, output, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunStridesliceNegConcat<bfloat16_t, false>(input, output, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunStridesliceNegConcat<half, true>(input, output, tilingData, &pipe);
    } else if (TILING_KEY_IS(5)) {
        RunStridesliceNegConcat<float, true>(input, output, tilingData, &pipe);
    } else if (TILING_KEY_IS(6)) {
        RunStridesliceNegConcat<bfloat16_t, true>(input, output, tilingData, &pipe);
    }
}
