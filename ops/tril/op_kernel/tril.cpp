// Tril kernel: y[..., i, j] = x[..., i, j] if j - i <= diagonal, else 0
// (float16, float32, bfloat16).
//
// The keep mask of a tile comes from one Compares against a float pattern
// built once per core: D[t * rowStride + u] = u - (t mod period), the column
// minus the row inside the tile. A tile starting at row r0 of its matrix and
// column c0 keeps element (t, u) iff u - t <= diagonal + r0 - c0, so
// Compares(D <= diagonal + r0 - c0) gives its bit mask and one Select picks
// x or 0 (a bit move, so bfloat16 goes through the half path). Tiles hold
// whole rows of rowStride elements (32 B aligned) so any width works.
//   batch mode (tiling key dtype * 10 + 1): tiles hold whole small matrices
//     (period = matRows, r0 = 0), so the mask is computed once;
//   rows mode (key dtype * 10 + 2): tiles hold rows of one matrix (or a
//     column chunk of one row); only the columns that some row of the tile
//     keeps are read (the mask zeroes the rest), and a tile entirely above
//     the diagonal is not read at all: a zero tile built once is written.
// Queues are double buffered (tiling bufferNum), so MTE2, V and MTE3
// overlap across tiles.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr int32_t MODE_BATCH = 1;
constexpr int32_t MODE_ROWS = 2;
constexpr int64_t FLOAT_EXACT = 1 << 24;  // limits beyond this keep or drop every element

// The select type: float for float, half for the 16-bit types.
template <typename T>
struct SelectType {
    using Type = half;
};
template <>
struct SelectType<float> {
    using Type = float;
};

// T is the storage type; Select runs on C (float for float, half for the
// 16-bit types: the select only moves bits).
template <typename T, int32_t MODE>
class KernelTril {
    using C = typename SelectType<T>::Type;

public:
    __aicore__ inline KernelTril() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
    {
        diagonal = tiling.diagonal;
        matRows = tiling.matRows;
        cols = tiling.cols;
        tileRows = tiling.tileRows;
        chunkCols = tiling.chunkCols;
        rowStride = tiling.rowStride;
        maskCount = tiling.maskCount;

        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t unitStart;
        if (blockIdx < tiling.tailCoreNum) {
            unitStart = blockIdx * (tiling.blockUnits + 1);
            unitCount = tiling.blockUnits + 1;
        } else {
            unitStart = tiling.tailCoreNum * (tiling.blockUnits + 1) + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            unitCount = tiling.blockUnits;
        }
        if (unitStart >= tiling.unitNum) {
            unitCount = 0;
        } else if (unitStart + unitCount > tiling.unitNum) {
            unitCount = static_cast<uint32_t>(tiling.unitNum - unitStart);
        }
        uint64_t unitElems = static_cast<uint64_t>(cols) * (MODE == MODE_BATCH ? matRows : 1);
        rowStart = MODE == MODE_BATCH ? unitStart * matRows : unitStart;
        xGm.SetGlobalBuffer((__gm__ T*)x + unitStart * unitElems, unitCount * unitElems);
        yGm.SetGlobalBuffer((__gm__ T*)y + unitStart * unitElems, unitCount * unitElems);

        uint32_t tileBytes = tileRows * rowStride * sizeof(T);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(zeroBuf, tileBytes);
        pipe->InitBuffer(patternBuf, maskCount * sizeof(float));
        pipe->InitBuffer(maskBuf, (maskCount / 8 + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES);
    }

    __aicore__ inline void Process()
    {
        if (unitCount == 0) {
            return;
        }
        BuildPattern();
        if constexpr (MODE == MODE_BATCH) {
            ProcessBatch();
        } else {
            ProcessRows();
        }
    }

private:
    // D[t * rowStride + u] = u - (t mod period): row 0 from CreateVecIndex,
    // then rows [h, 2h) = rows [0, h) - h, then whole periods copied.
    __aicore__ inline void BuildPattern()
    {
        LocalTensor<float> pattern = patternBuf.Get<float>();
        Duplicate(pattern, 0.0f, maskCount);
        CreateVecIndex(pattern, 0.0f, rowStride);
        uint32_t period = MODE == MODE_BATCH ? matRows : tileRows;
        for (uint32_t h = 1; h < period;) {
            uint32_t n = period - h < h ? period - h : h;
            Adds(pattern[h * rowStride], pattern, -static_cast<float>(h), n * rowStride);
            h += n;
        }
        for (uint32_t h = period; h < tileRows;) {
            uint32_t n = tileRows - h < h ? tileRows - h : h;
            Adds(pattern[h * rowStride], pattern, 0.0f, n * rowStride);
            h += n;
        }
    }

    // Keep mask of a tile of `rows` rows whose (0, 0) element is at
    // (r0, c0) of its matrix.
    __aicore__ inline void MakeMask(int64_t r0, int64_t c0, uint32_t rows)
    {
        int64_t limit = diagonal + r0 - c0;
        if (limit > FLOAT_EXACT) {
            limit = FLOAT_EXACT;
        } else if (limit < -FLOAT_EXACT) {
            limit = -FLOAT_EXACT;
        }
        uint32_t count = (rows * rowStride + 63) / 64 * 64;
        Compares(maskBuf.Get<uint8_t>(), patternBuf.Get<float>(), static_cast<float>(limit), CMPMODE::LE, count);
    }

    // ---- batch mode: whole matrices, one mask ------------------------------
    __aicore__ inline void ProcessBatch()
    {
        MakeMask(0, 0, tileRows);
        uint32_t matPerTile = tileRows / matRows;
        uint32_t tileNum = (unitCount + matPerTile - 1) / matPerTile;
        for (uint32_t i = 0; i < tileNum; i++) {
            uint32_t mats = unitCount - i * matPerTile < matPerTile ? unitCount - i * matPerTile : matPerTile;
            uint64_t offset = static_cast<uint64_t>(i) * matPerTile * matRows * cols;
            uint32_t rows = mats * matRows;
            CopyIn(offset, rows, cols);
            Compute(rows);
            CopyOut(offset, rows, cols);
        }
    }

    // ---- rows mode: rows of one matrix per tile ------------------------------
    __aicore__ inline void ProcessRows()
    {
        LocalTensor<T> zeros = zeroBuf.Get<T>();
        Duplicate(zeros.template ReinterpretCast<C>(), static_cast<C>(0), tileRows * rowStride);
        int32_t eventId = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE3));
        SetFlag<HardEvent::V_MTE3>(eventId);
        WaitFlag<HardEvent::V_MTE3>(eventId);

        uint64_t done = 0;
        while (done < unitCount) {
            uint64_t row = (rowStart + done) % matRows;
            uint64_t rows = unitCount - done;
            if (rows > tileRows) {
                rows = tileRows;
            }
            if (rows > matRows - row) {
                rows = matRows - row;
            }
            for (uint32_t c0 = 0; c0 < cols; c0 += chunkCols) {
                uint32_t width = cols - c0 < chunkCols ? cols - c0 : chunkCols;
                uint64_t offset = done * cols + c0;
                // The last row of the tile keeps the most columns: those
                // left of diagonal + row + rows - c0. Columns right of that
                // are zero in every row, so they are not read.
                int64_t keep = diagonal + static_cast<int64_t>(row + rows) - c0;
                if (keep <= 0) {
                    CopyRows(yGm[offset], zeros, static_cast<uint32_t>(rows), width);
                    continue;
                }
                uint32_t readWidth = keep < width ? static_cast<uint32_t>(keep) : width;
                CopyIn(offset, static_cast<uint32_t>(rows), readWidth);
                MakeMask(static_cast<int64_t>(row), c0, static_cast<uint32_t>(rows));
                Compute(static_cast<uint32_t>(rows));
                CopyOut(offset, static_cast<uint32_t>(rows), width);
            }
            done += rows;
        }
    }

    // ---- shared stages ---------------------------------------------------------
    // Reads the first `readWidth` columns of `rows` rows into UB rows of
    // rowStride elements (the rest of each UB row is not written; the mask
    // drops it).
    __aicore__ inline void CopyIn(uint64_t offset, uint32_t rows, uint32_t readWidth)
    {
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        if (readWidth == cols && readWidth == rowStride) {
            DataCopy(xLocal, xGm[offset], rows * readWidth);
        } else {
            uint32_t rowBlocks = (readWidth * sizeof(T) + BLOCK_BYTES - 1) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(rows), static_cast<uint32_t>(readWidth * sizeof(T)),
                                         static_cast<uint32_t>((cols - readWidth) * sizeof(T)),
                                         static_cast<uint32_t>(rowStride * sizeof(T) / BLOCK_BYTES - rowBlocks), 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, static_cast<T>(0)};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t rows)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        Select(yLocal.template ReinterpretCast<C>(), maskBuf.Get<uint8_t>(), xLocal.template ReinterpretCast<C>(),
               static_cast<C>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, rows * rowStride);
        outQueueY.EnQue<T>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t rows, uint32_t width)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        CopyRows(yGm[offset], yLocal, rows, width);
        outQueueY.FreeTensor(yLocal);
    }

    // Writes `rows` UB rows (rowStride apart) of `width` elements to GM rows
    // `cols` apart.
    __aicore__ inline void CopyRows(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t rows,
                                    uint32_t width)
    {
        if (width == cols && width == rowStride) {
            DataCopy(dst, src, rows * width);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(rows), static_cast<uint32_t>(width * sizeof(T)), 0,
                                         static_cast<uint32_t>((cols - width) * sizeof(T)), 0};
            DataCopyPad(dst, src, copyParams);
        }
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> zeroBuf;
    TBuf<TPosition::VECCALC> patternBuf;
    TBuf<TPosition::VECCALC> maskBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    int64_t diagonal = 0;
    uint64_t rowStart = 0;
    uint32_t unitCount = 0;
    uint32_t matRows = 0;
    uint32_t cols = 0;
    uint32_t tileRows = 0;
    uint32_t chunkCols = 0;
    uint32_t rowStride = 0;
    uint32_t maskCount = 0;
};

template <typename T, int32_t MODE, typename TilingData>
__aicore__ inline void RunTril(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelTril<T, MODE> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void tril(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(11)) {
        RunTril<half, MODE_BATCH>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(12)) {
        RunTril<half, MODE_ROWS>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(21)) {
        RunTril<float, MODE_BATCH>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(22)) {
        RunTril<float, MODE_ROWS>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(31)) {
        RunTril<bfloat16_t, MODE_BATCH>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(32)) {
        RunTril<bfloat16_t, MODE_ROWS>(x, y, tilingData, &pipe);
    }
}
