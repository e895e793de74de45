// RmsNorm kernel: for every row of x (last dim D = cols),
//   rstd = 1 / sqrt(mean(x^2) + epsilon)     (float32, one value per row)
//   y    = x * rstd * gamma                  (x's dtype)
// computed in float32 (float16 and bfloat16 rows are cast to float in UB).
//
// Rows are split over the vector cores (balanced: the first tailCoreNum cores
// take one row more). In UB a row occupies rowStride elements, zero padded
// by DataCopyPad, so any D works and the padding adds nothing to the sums.
// Four paths, chosen by the tiling key (dtype * 10 + mode):
//   mode 1, batched rows (short rows): each vector instruction covers all the
//     rows of a tile through repeat strides: x^2 is folded to 64 lanes per row
//     with strided Adds, one WholeReduceSum gives every row sum, Brcb spreads
//     rstd to one 32 B block per row and a Mul with block stride 0 broadcasts
//     it along the row;
//   mode 2, row by row (long rows): per row a tree of Adds down to 64 lanes,
//     WholeReduceSum, then Muls by the row's rstd (one scalar read per row) and
//     Mul by gamma;
//   mode 3, split rows (rows that do not fit in UB): per row, pass 1 streams
//     the row in chunks and accumulates the sum of squares in 64 lanes, pass 2
//     streams x and gamma again and writes y;
//   mode 4, split columns (a few long rows): every core takes a column range
//     of all rows (resident in UB as one slab when it fits, else streamed in
//     chunks as in mode 3), writes its partial sums of squares to the
//     workspace, SyncAll, adds up every core's partials, then writes its part
//     of y (core 0 also writes rstd).
// The streaming queues are double buffered (tiling bufferNum), so MTE2, V and
// MTE3 overlap across tiles; scalar reads of rstd wait on a V_S flag.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t FLOAT_PER_REPEAT = 64;  // 256 B of float per vector repeat
constexpr uint32_t GROUP_ROWS = 248;       // rows per repeat-form instruction: <= 255, multiple of 8
constexpr int32_t MODE_BATCH = 1;
constexpr int32_t MODE_ROW = 2;
constexpr int32_t MODE_SPLIT = 3;
constexpr int32_t MODE_COLS = 4;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

__aicore__ inline uint32_t AlignUp(uint32_t value, uint32_t align)
{
    return (value + align - 1) / align * align;
}

template <typename T, int32_t MODE>
class KernelRmsNorm {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;
    static constexpr uint32_t ELEMS_PER_BLOCK = BLOCK_BYTES / sizeof(T);

public:
    __aicore__ inline KernelRmsNorm() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR workspace,
                                const TilingData& tiling, TPipe* pipe)
    {
        cols = tiling.cols;
        rowStride = tiling.rowStride;
        tileRows = tiling.tileRows;
        chunkLen = tiling.chunkLen;
        epsilon = tiling.epsilon;
        invCols = tiling.invCols;

        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t rowStart;
        if constexpr (MODE == MODE_COLS) {
            InitColumns(gamma, rstd, workspace, tiling, pipe, blockIdx);
            xGm.SetGlobalBuffer((__gm__ T*)x, static_cast<uint64_t>(tiling.rows) * cols);
            yGm.SetGlobalBuffer((__gm__ T*)y, static_cast<uint64_t>(tiling.rows) * cols);
            return;
        }
        if (blockIdx < tiling.tailCoreNum) {
            rowStart = blockIdx * (tiling.blockRows + 1);
            rowCount = tiling.blockRows + 1;
        } else {
            rowStart = tiling.tailCoreNum * (tiling.blockRows + 1) + (blockIdx - tiling.tailCoreNum) * tiling.blockRows;
            rowCount = tiling.blockRows;
        }
        if (rowStart >= tiling.rows) {
            rowCount = 0;
        } else if (rowStart + rowCount > tiling.rows) {
            rowCount = static_cast<uint32_t>(tiling.rows - rowStart);
        }

        segCols = cols;
        colStart = 0;
        xGm.SetGlobalBuffer((__gm__ T*)x + rowStart * cols, static_cast<uint64_t>(rowCount) * cols);
        yGm.SetGlobalBuffer((__gm__ T*)y + rowStart * cols, static_cast<uint64_t>(rowCount) * cols);
        rstdGm.SetGlobalBuffer((__gm__ float*)rstd + rowStart, rowCount);
        gammaGm.SetGlobalBuffer((__gm__ T*)gamma, cols);

        uint32_t bufferNum = tiling.bufferNum;
        if constexpr (MODE == MODE_SPLIT) {
            pipe->InitBuffer(inQueueX, bufferNum, chunkLen * sizeof(T));
            pipe->InitBuffer(gammaQueue, bufferNum, chunkLen * sizeof(T));
            pipe->InitBuffer(outQueueY, bufferNum, chunkLen * sizeof(T));
            pipe->InitBuffer(outQueueRstd, bufferNum, BLOCK_BYTES);
            pipe->InitBuffer(tmpBuf, chunkLen * sizeof(float));
            pipe->InitBuffer(accBuf, FLOAT_PER_REPEAT * sizeof(float));
            pipe->InitBuffer(sumBuf, BLOCK_BYTES);
            pipe->InitBuffer(onesBuf, BLOCK_BYTES);
            if constexpr (!IS_FLOAT) {
                pipe->InitBuffer(xfBuf, chunkLen * sizeof(float));
                pipe->InitBuffer(gammaFBuf, chunkLen * sizeof(float));
            }
        } else {
            uint32_t tileElems = tileRows * rowStride;
            uint32_t rowBytes = AlignUp(tileRows * sizeof(float), BLOCK_BYTES);
            pipe->InitBuffer(inQueueX, bufferNum, tileElems * sizeof(T));
            pipe->InitBuffer(outQueueY, bufferNum, tileElems * sizeof(T));
            pipe->InitBuffer(outQueueRstd, bufferNum, rowBytes);
            pipe->InitBuffer(gammaQueue, 1, rowStride * sizeof(T));
            pipe->InitBuffer(tmpBuf, tileElems * sizeof(float));
            pipe->InitBuffer(sumBuf, rowBytes);
            pipe->InitBuffer(onesBuf, rowBytes);
            if constexpr (!IS_FLOAT) {
                pipe->InitBuffer(xfBuf, tileElems * sizeof(float));
                pipe->InitBuffer(gammaFBuf, rowStride * sizeof(float));
            }
            if constexpr (MODE == MODE_BATCH) {
                pipe->InitBuffer(brcbBuf, AlignUp(tileRows, FLOAT_PER_BLOCK) * BLOCK_BYTES);
            }
        }
    }

    __aicore__ inline void Process()
    {
        if (rowCount == 0) {
            return;
        }
        // One V->S event id for every scalar read of rstd (each SetFlag is
        // waited before the next).
        vToSEvent = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
        if constexpr (MODE == MODE_COLS) {
            ProcessColumns();
        } else if constexpr (MODE == MODE_SPLIT) {
            ProcessSplit();
        } else {
            ProcessTiles();
        }
    }

private:
    // ---- modes 1 and 2: whole rows per tile -----------------------------
    __aicore__ inline void ProcessTiles()
    {
        LocalTensor<float> ones = onesBuf.Get<float>();
        Duplicate(ones, 1.0f, tileRows);
        LoadGamma();
        uint32_t tileNum = (rowCount + tileRows - 1) / tileRows;
        uint32_t lastRows = rowCount - (tileNum - 1) * tileRows;
        for (uint32_t i = 0; i < tileNum; i++) {
            uint32_t nRows = (i + 1 == tileNum) ? lastRows : tileRows;
            CopyInRows(i, nRows);
            ComputeRows(nRows);
            CopyOutRows(i, nRows);
        }
        if constexpr (IS_FLOAT) {
            gammaQueue.FreeTensor(gammaF);
        }
    }

    // gamma stays in UB (as float) for the whole kernel.
    __aicore__ inline void LoadGamma()
    {
        LocalTensor<T> gammaLocal = gammaQueue.AllocTensor<T>();
        CopyRowsIn(gammaLocal, gammaGm[colStart], 1);
        gammaQueue.EnQue(gammaLocal);
        gammaLocal = gammaQueue.DeQue<T>();
        if constexpr (IS_FLOAT) {
            gammaF = gammaLocal;
        } else {
            gammaF = gammaFBuf.Get<float>();
            Cast(gammaF, gammaLocal, RoundMode::CAST_NONE, rowStride);
            gammaQueue.FreeTensor(gammaLocal);
        }
    }

    // Copies nRows rows of segCols elements (GM rows `cols` apart) into UB
    // rows of rowStride elements, zero filling the padding of each row: one
    // contiguous DataCopy when nothing is padded or skipped, else one strided
    // DataCopyPad.
    __aicore__ inline void CopyRowsIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t nRows)
    {
        if (segCols == rowStride && segCols == cols) {
            DataCopy(dst, src, nRows * cols);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(segCols * sizeof(T)),
                                         static_cast<uint32_t>((cols - segCols) * sizeof(T)), 0, 0};
            DataCopyPadExtParams<T> padParams{true, 0, static_cast<uint8_t>(rowStride - segCols), 0};
            DataCopyPad(dst, src, copyParams, padParams);
        }
    }

    __aicore__ inline void CopyInRows(uint32_t progress, uint32_t nRows)
    {
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        CopyRowsIn(xLocal, xGm[static_cast<uint64_t>(progress) * tileRows * cols], nRows);
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void ComputeRows(uint32_t nRows)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<float> rstdLocal = outQueueRstd.AllocTensor<float>();
        LocalTensor<float> tmp = tmpBuf.Get<float>();
        LocalTensor<float> sums = sumBuf.Get<float>();
        LocalTensor<float> ones = onesBuf.Get<float>();
        uint32_t count = nRows * rowStride;

        LocalTensor<float> xf;
        LocalTensor<float> yf;
        if constexpr (IS_FLOAT) {
            xf = xLocal;
            yf = yLocal;
        } else {
            xf = xfBuf.Get<float>();
            yf = tmp;
            Cast(xf, xLocal, RoundMode::CAST_NONE, count);
            inQueueX.FreeTensor(xLocal);
        }

        // Sum of squares of every row (the zero padding adds nothing).
        Mul(tmp, xf, xf, count);
        if constexpr (MODE == MODE_BATCH) {
            BatchRowSums(sums, tmp, nRows);
        } else {
            for (uint32_t r = 0; r < nRows; r++) {
                TreeSum(sums[r], tmp[r * rowStride], rowStride);
            }
        }

        // rstd = 1 / sqrt(sum / D + epsilon); Sqrt then Div keeps float accuracy.
        Muls(sums, sums, invCols, nRows);
        Adds(sums, sums, epsilon, nRows);
        Sqrt(sums, sums, nRows);
        Div(rstdLocal, ones, sums, nRows);

        // y = x * rstd * gamma
        if constexpr (MODE == MODE_BATCH) {
            BatchScale(yf, xf, rstdLocal, nRows);
        } else {
            SetFlag<HardEvent::V_S>(vToSEvent);
            WaitFlag<HardEvent::V_S>(vToSEvent);
            for (uint32_t r = 0; r < nRows; r++) {
                float rowRstd = rstdLocal.GetValue(r);
                Muls(yf[r * rowStride], xf[r * rowStride], rowRstd, segCols);
                Mul(yf[r * rowStride], yf[r * rowStride], gammaF, segCols);
            }
        }

        if constexpr (IS_FLOAT) {
            inQueueX.FreeTensor(xLocal);
        } else {
            Cast(yLocal, yf, RoundMode::CAST_RINT, count);
        }
        outQueueY.EnQue<T>(yLocal);
        outQueueRstd.EnQue<float>(rstdLocal);
    }

    // Row sums for short rows (rowStride <= 2040 floats, so the repeat stride
    // rowStride / 8 fits in 8 bits): fold every row onto its first 64 lanes
    // with one strided Add per 64-lane chunk, then one WholeReduceSum.
    __aicore__ inline void BatchRowSums(const LocalTensor<float>& sums, const LocalTensor<float>& sq, uint32_t nRows)
    {
        uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
        uint32_t firstLanes = rowStride < FLOAT_PER_REPEAT ? rowStride : FLOAT_PER_REPEAT;
        for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
            uint32_t groupRows = nRows - r0 < GROUP_ROWS ? nRows - r0 : GROUP_ROWS;
            uint32_t base = r0 * rowStride;
            for (uint32_t c = FLOAT_PER_REPEAT; c < rowStride; c += FLOAT_PER_REPEAT) {
                uint32_t lanes = rowStride - c < FLOAT_PER_REPEAT ? rowStride - c : FLOAT_PER_REPEAT;
                Add(sq[base], sq[base], sq[base + c], static_cast<uint64_t>(lanes), static_cast<uint8_t>(groupRows),
                    BinaryRepeatParams(1, 1, 1, repStride, repStride, repStride));
            }
            WholeReduceSum(sums[r0], sq[base], static_cast<int32_t>(firstLanes), static_cast<int32_t>(groupRows), 1, 1,
                           repStride);
        }
    }

    // y = x * rstd (per row) * gamma for short rows: Brcb writes each row's
    // rstd into its own 32 B block, a Mul with src1 block stride 0 broadcasts
    // it over the row, and a Mul with src1 repeat stride 0 applies gamma to
    // every row.
    __aicore__ inline void BatchScale(const LocalTensor<float>& yf, const LocalTensor<float>& xf,
                                      const LocalTensor<float>& rstdLocal, uint32_t nRows)
    {
        LocalTensor<float> rstdBlocks = brcbBuf.Get<float>();
        Brcb(rstdBlocks, rstdLocal, static_cast<uint8_t>((nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
             BrcbRepeatParams{1, 8});
        uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
        for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
            uint32_t groupRows = nRows - r0 < GROUP_ROWS ? nRows - r0 : GROUP_ROWS;
            uint32_t base = r0 * rowStride;
            for (uint32_t c = 0; c < segCols; c += FLOAT_PER_REPEAT) {
                uint32_t lanes = segCols - c < FLOAT_PER_REPEAT ? segCols - c : FLOAT_PER_REPEAT;
                Mul(yf[base + c], xf[base + c], rstdBlocks[r0 * FLOAT_PER_BLOCK], static_cast<uint64_t>(lanes),
                    static_cast<uint8_t>(groupRows), BinaryRepeatParams(1, 1, 0, repStride, repStride, 1));
                Mul(yf[base + c], yf[base + c], gammaF[c], static_cast<uint64_t>(lanes),
                    static_cast<uint8_t>(groupRows), BinaryRepeatParams(1, 1, 1, repStride, repStride, 0));
            }
        }
    }

    __aicore__ inline void CopyOutRows(uint32_t progress, uint32_t nRows)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        uint64_t rowOffset = static_cast<uint64_t>(progress) * tileRows;
        CopyRowsOut(yGm[rowOffset * cols], yLocal, nRows);
        outQueueY.FreeTensor(yLocal);

        LocalTensor<float> rstdLocal = outQueueRstd.DeQue<float>();
        if ((nRows * sizeof(float)) % BLOCK_BYTES == 0) {
            DataCopy(rstdGm[rowOffset], rstdLocal, nRows);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(nRows * sizeof(float)), 0, 0, 0};
            DataCopyPad(rstdGm[rowOffset], rstdLocal, copyParams);
        }
        outQueueRstd.FreeTensor(rstdLocal);
    }

    // Copies nRows UB rows (rowStride apart) of segCols elements to GM rows
    // `cols` apart: one DataCopy when contiguous, else one strided DataCopyPad.
    __aicore__ inline void CopyRowsOut(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t nRows)
    {
        if (segCols == rowStride && segCols == cols) {
            DataCopy(dst, src, nRows * cols);
        } else {
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(segCols * sizeof(T)), 0,
                                         static_cast<uint32_t>((cols - segCols) * sizeof(T)), 0};
            DataCopyPad(dst, src, copyParams);
        }
    }

    // dst[0] = sum of src[0 .. len): Adds fold the upper part onto the lower
    // part (32 B aligned halves) down to 64 lanes, then one WholeReduceSum.
    // src is clobbered; len is a multiple of 8.
    __aicore__ inline void TreeSum(const LocalTensor<float>& dst, const LocalTensor<float>& src, uint32_t len)
    {
        len = FoldTo64(src, len);
        WholeReduceSum(dst, src, static_cast<int32_t>(len), 1, 1, 1, 8);
    }

    // Folds src[0 .. len) onto its first <= 64 lanes; returns the lanes left.
    __aicore__ inline uint32_t FoldTo64(const LocalTensor<float>& src, uint32_t len)
    {
        while (len > FLOAT_PER_REPEAT) {
            uint32_t half = (len + 2 * FLOAT_PER_BLOCK - 1) / (2 * FLOAT_PER_BLOCK) * FLOAT_PER_BLOCK;
            Add(src, src, src[half], len - half);
            len = half;
        }
        return len;
    }

    // ---- mode 4: columns split over the cores ------------------------------
    // Every core takes columns [colStart, colStart + colCount) of all rows.
    // When that slab fits in UB (tiling chunkLen == 0) it is loaded once with
    // one strided copy and stays resident; otherwise rows are streamed in
    // chunks twice, as in mode 3.
    template <typename TilingData>
    __aicore__ inline void InitColumns(GM_ADDR gamma, GM_ADDR rstd, GM_ADDR workspace, const TilingData& tiling,
                                       TPipe* pipe, uint64_t blockIdx)
    {
        rowCount = tiling.rows;
        rowsPad = AlignUp(rowCount, FLOAT_PER_BLOCK);
        blockIndex = static_cast<uint32_t>(blockIdx);
        blockCount = static_cast<uint32_t>(GetBlockNum());
        uint64_t bigUnits = static_cast<uint64_t>(tiling.colBlockUnits) + 1;
        uint64_t startUnit;
        uint64_t units;
        if (blockIdx < tiling.colTailCoreNum) {
            startUnit = blockIdx * bigUnits;
            units = bigUnits;
        } else {
            startUnit = tiling.colTailCoreNum * bigUnits + (blockIdx - tiling.colTailCoreNum) * tiling.colBlockUnits;
            units = tiling.colBlockUnits;
        }
        uint64_t start = startUnit * tiling.colUnit;
        uint64_t count = units * tiling.colUnit;
        if (start >= cols) {
            start = 0;
            count = 0;
        } else if (start + count > cols) {
            count = cols - start;
        }
        colStart = static_cast<uint32_t>(start);
        colCount = static_cast<uint32_t>(count);
        segCols = colCount;
        // This core's UB row stride; the buffers are sized for the widest core.
        rowStride = AlignUp(colCount, ELEMS_PER_BLOCK);

        rstdGm.SetGlobalBuffer((__gm__ float*)rstd, rowCount);
        gammaGm.SetGlobalBuffer((__gm__ T*)gamma, cols);
        wsGm.SetGlobalBuffer((__gm__ float*)workspace, static_cast<uint64_t>(blockCount) * rowsPad);

        uint32_t rowBytes = rowsPad * sizeof(float);
        pipe->InitBuffer(partQueue, 1, rowBytes);
        pipe->InitBuffer(allPartQueue, 1, blockCount * rowBytes);
        pipe->InitBuffer(sumBuf, rowBytes);
        pipe->InitBuffer(onesBuf, rowBytes);
        if (chunkLen == 0) {
            uint32_t maxStride = tiling.rowStride;
            uint32_t slabElems = rowsPad * maxStride;
            pipe->InitBuffer(inQueueX, 1, slabElems * sizeof(T));
            pipe->InitBuffer(outQueueY, 1, slabElems * sizeof(T));
            pipe->InitBuffer(gammaQueue, 1, maxStride * sizeof(T));
            pipe->InitBuffer(tmpBuf, slabElems * sizeof(float));
            pipe->InitBuffer(brcbBuf, rowsPad * BLOCK_BYTES);
            if constexpr (!IS_FLOAT) {
                pipe->InitBuffer(xfBuf, slabElems * sizeof(float));
                pipe->InitBuffer(gammaFBuf, maxStride * sizeof(float));
            }
        } else {
            uint32_t bufferNum = tiling.bufferNum;
            pipe->InitBuffer(inQueueX, bufferNum, chunkLen * sizeof(T));
            pipe->InitBuffer(gammaQueue, bufferNum, chunkLen * sizeof(T));
            pipe->InitBuffer(outQueueY, bufferNum, chunkLen * sizeof(T));
            pipe->InitBuffer(tmpBuf, chunkLen * sizeof(float));
            pipe->InitBuffer(accBuf, FLOAT_PER_REPEAT * sizeof(float));
            if constexpr (!IS_FLOAT) {
                pipe->InitBuffer(xfBuf, chunkLen * sizeof(float));
                pipe->InitBuffer(gammaFBuf, chunkLen * sizeof(float));
            }
        }
    }

    __aicore__ inline void ProcessColumns()
    {
        LocalTensor<float> ones = onesBuf.Get<float>();
        Duplicate(ones, 1.0f, rowsPad);
        if (chunkLen == 0) {
            ProcessColumnSlab();
        } else {
            ProcessColumnChunks();
        }
    }

    __aicore__ inline void ProcessColumnSlab()
    {
        LocalTensor<float> part = partQueue.AllocTensor<float>();
        Duplicate(part, 0.0f, rowsPad);
        if (colCount == 0) {
            ExchangeRowSums(part);
            return;
        }
        // x first: gamma is needed only after the exchange, so its copy
        // overlaps the sums.
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        CopyRowsIn(xLocal, xGm[colStart], rowCount);
        inQueueX.EnQue(xLocal);
        LocalTensor<T> gammaLocal = gammaQueue.AllocTensor<T>();
        CopyRowsIn(gammaLocal, gammaGm[colStart], 1);
        gammaQueue.EnQue(gammaLocal);
        xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<float> tmp = tmpBuf.Get<float>();
        uint32_t count = rowCount * rowStride;
        LocalTensor<float> xf;
        LocalTensor<float> yf;
        if constexpr (IS_FLOAT) {
            xf = xLocal;
            yf = yLocal;
        } else {
            xf = xfBuf.Get<float>();
            yf = tmp;
            Cast(xf, xLocal, RoundMode::CAST_NONE, count);
            inQueueX.FreeTensor(xLocal);
        }
        Mul(tmp, xf, xf, count);
        bool batched = UseBatchedRows(rowCount);
        if (batched) {
            BatchRowSums(part, tmp, rowCount);
        } else {
            for (uint32_t r = 0; r < rowCount; r++) {
                TreeSum(part[r], tmp[r * rowStride], rowStride);
            }
        }
        LocalTensor<float> rstdValues = ExchangeRowSums(part);
        gammaLocal = gammaQueue.DeQue<T>();
        if constexpr (IS_FLOAT) {
            gammaF = gammaLocal;
        } else {
            gammaF = gammaFBuf.Get<float>();
            Cast(gammaF, gammaLocal, RoundMode::CAST_NONE, rowStride);
            gammaQueue.FreeTensor(gammaLocal);
        }
        if (batched) {
            BatchScale(yf, xf, rstdValues, rowCount);
        } else {
            for (uint32_t r = 0; r < rowCount; r++) {
                float rowRstd = rstdValues.GetValue(r);
                Muls(yf[r * rowStride], xf[r * rowStride], rowRstd, segCols);
                Mul(yf[r * rowStride], yf[r * rowStride], gammaF, segCols);
            }
        }
        if constexpr (IS_FLOAT) {
            inQueueX.FreeTensor(xLocal);
            gammaQueue.FreeTensor(gammaF);
        } else {
            Cast(yLocal, yf, RoundMode::CAST_RINT, count);
        }
        outQueueY.EnQue<T>(yLocal);
        yLocal = outQueueY.DeQue<T>();
        CopyRowsOut(yGm[colStart], yLocal, rowCount);
        outQueueY.FreeTensor(yLocal);
    }

    // Batched rows pay about 3 vector instructions per 64-lane chunk of a
    // row whatever the row count, row by row about (fold steps + 3) per row
    // (the host's mode 1 / mode 2 rule, for this core's slab).
    __aicore__ inline bool UseBatchedRows(uint32_t nRows)
    {
        if (rowStride > FLOAT_PER_BLOCK * 255) {
            return false;
        }
        uint32_t chunks = (rowStride + FLOAT_PER_REPEAT - 1) / FLOAT_PER_REPEAT;
        uint32_t foldSteps = 0;
        for (uint32_t lanes = rowStride; lanes > FLOAT_PER_REPEAT; lanes = (lanes + 1) / 2) {
            foldSteps++;
        }
        return 3 * chunks < nRows * (foldSteps + 3);
    }

    __aicore__ inline void ProcessColumnChunks()
    {
        uint32_t chunkNum = (colCount + chunkLen - 1) / chunkLen;
        // Pass 1: partial sums of squares of this core's columns, every row.
        LocalTensor<float> part = partQueue.AllocTensor<float>();
        Duplicate(part, 0.0f, rowsPad);
        for (uint32_t r = 0; r < rowCount && chunkNum > 0; r++) {
            uint64_t base = static_cast<uint64_t>(r) * cols + colStart;
            LocalTensor<float> acc = accBuf.Get<float>();
            Duplicate(acc, 0.0f, FLOAT_PER_REPEAT);
            for (uint32_t k = 0; k < chunkNum; k++) {
                uint32_t len = SegmentChunkLength(k);
                CopyInChunk(inQueueX, xGm[base + k * chunkLen], len);
                AccumulateSquares(acc, len);
            }
            WholeReduceSum(part[r], acc, static_cast<int32_t>(FLOAT_PER_REPEAT), 1, 1, 1, 8);
        }
        LocalTensor<float> rstdValues = ExchangeRowSums(part);
        // Pass 2: y = x * rstd * gamma on this core's columns.
        for (uint32_t r = 0; r < rowCount && chunkNum > 0; r++) {
            float rowRstd = rstdValues.GetValue(r);
            uint64_t base = static_cast<uint64_t>(r) * cols + colStart;
            for (uint32_t k = 0; k < chunkNum; k++) {
                uint32_t len = SegmentChunkLength(k);
                CopyInChunk(inQueueX, xGm[base + k * chunkLen], len);
                CopyInChunk(gammaQueue, gammaGm[colStart + static_cast<uint64_t>(k) * chunkLen], len);
                ScaleChunk(rowRstd, len);
                CopyOutChunk(yGm[base + k * chunkLen], len);
            }
        }
    }

    // Publishes this core's partial sums (`part`, rowsPad floats) in its
    // 32 B-aligned workspace block, waits for every core (SyncAll), adds up
    // all the blocks (tree of Adds) and returns rstd of every row; core 0
    // writes rstd to GM. The scalar unit may read the result on return.
    __aicore__ inline LocalTensor<float> ExchangeRowSums(LocalTensor<float>& part)
    {
        partQueue.EnQue<float>(part);
        part = partQueue.DeQue<float>();
        DataCopy(wsGm[static_cast<uint64_t>(blockIndex) * rowsPad], part, rowsPad);
        partQueue.FreeTensor(part);
        int32_t mte3Event = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::MTE3_S));
        SetFlag<HardEvent::MTE3_S>(mte3Event);
        WaitFlag<HardEvent::MTE3_S>(mte3Event);
        SyncAll();

        LocalTensor<float> all = allPartQueue.AllocTensor<float>();
        DataCopy(all, wsGm, blockCount * rowsPad);
        allPartQueue.EnQue<float>(all);
        all = allPartQueue.DeQue<float>();
        for (uint32_t n = blockCount; n > 1;) {
            uint32_t half = (n + 1) / 2;
            Add(all, all, all[half * rowsPad], (n - half) * rowsPad);
            n = half;
        }
        LocalTensor<float> ones = onesBuf.Get<float>();
        LocalTensor<float> rstdValues = sumBuf.Get<float>();
        Muls(all, all, invCols, rowCount);
        Adds(all, all, epsilon, rowCount);
        Sqrt(all, all, rowCount);
        Div(rstdValues, ones, all, rowCount);
        allPartQueue.FreeTensor(all);

        if (blockIndex == 0) {
            int32_t vEvent = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE3));
            SetFlag<HardEvent::V_MTE3>(vEvent);
            WaitFlag<HardEvent::V_MTE3>(vEvent);
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(rowCount * sizeof(float)), 0, 0, 0};
            DataCopyPad(rstdGm, rstdValues, copyParams);
        }
        SetFlag<HardEvent::V_S>(vToSEvent);
        WaitFlag<HardEvent::V_S>(vToSEvent);
        return rstdValues;
    }

    __aicore__ inline uint32_t SegmentChunkLength(uint32_t k)
    {
        uint32_t start = k * chunkLen;
        return colCount - start < chunkLen ? colCount - start : chunkLen;
    }

    // ---- mode 3: rows split into chunks ----------------------------------
    __aicore__ inline void ProcessSplit()
    {
        LocalTensor<float> ones = onesBuf.Get<float>();
        Duplicate(ones, 1.0f, FLOAT_PER_BLOCK);
        uint32_t chunkNum = (cols + chunkLen - 1) / chunkLen;
        for (uint32_t r = 0; r < rowCount; r++) {
            uint64_t rowBase = static_cast<uint64_t>(r) * cols;
            // Pass 1: sum of squares, accumulated in 64 lanes.
            LocalTensor<float> acc = accBuf.Get<float>();
            Duplicate(acc, 0.0f, FLOAT_PER_REPEAT);
            for (uint32_t k = 0; k < chunkNum; k++) {
                uint32_t len = ChunkLength(k);
                CopyInChunk(inQueueX, xGm[rowBase + k * chunkLen], len);
                AccumulateSquares(acc, len);
            }
            float rowRstd = RowRstd(acc, r);
            // Pass 2: y = x * rstd * gamma, chunk by chunk.
            for (uint32_t k = 0; k < chunkNum; k++) {
                uint32_t len = ChunkLength(k);
                CopyInChunk(inQueueX, xGm[rowBase + k * chunkLen], len);
                CopyInChunk(gammaQueue, gammaGm[static_cast<uint64_t>(k) * chunkLen], len);
                ScaleChunk(rowRstd, len);
                CopyOutChunk(yGm[rowBase + k * chunkLen], len);
            }
        }
    }

    __aicore__ inline uint32_t ChunkLength(uint32_t k)
    {
        uint32_t start = k * chunkLen;
        return cols - start < chunkLen ? cols - start : chunkLen;
    }

    // Copies len elements, zero padding them to a whole 32 B block.
    __aicore__ inline void CopyInChunk(TQue<QuePosition::VECIN, BUFFER_NUM>& queue, const GlobalTensor<T>& src,
                                       uint32_t len)
    {
        LocalTensor<T> local = queue.AllocTensor<T>();
        uint32_t padded = AlignUp(len, ELEMS_PER_BLOCK);
        if (padded == len) {
            DataCopy(local, src, len);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{true, 0, static_cast<uint8_t>(padded - len), 0};
            DataCopyPad(local, src, copyParams, padParams);
        }
        queue.EnQue(local);
    }

    __aicore__ inline void AccumulateSquares(const LocalTensor<float>& acc, uint32_t len)
    {
        uint32_t padded = AlignUp(len, ELEMS_PER_BLOCK);
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<float> tmp = tmpBuf.Get<float>();
        if constexpr (IS_FLOAT) {
            Mul(tmp, xLocal, xLocal, padded);
        } else {
            LocalTensor<float> xf = xfBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, padded);
            Mul(tmp, xf, xf, padded);
        }
        inQueueX.FreeTensor(xLocal);
        uint32_t lanes = FoldTo64(tmp, padded);
        Add(acc, acc, tmp, lanes);
    }

    // rstd of row r from its 64-lane sum of squares; writes it to GM and
    // returns it for the scalar broadcast of pass 2.
    __aicore__ inline float RowRstd(const LocalTensor<float>& acc, uint32_t r)
    {
        LocalTensor<float> sums = sumBuf.Get<float>();
        LocalTensor<float> ones = onesBuf.Get<float>();
        LocalTensor<float> rstdLocal = outQueueRstd.AllocTensor<float>();
        WholeReduceSum(sums, acc, static_cast<int32_t>(FLOAT_PER_REPEAT), 1, 1, 1, 8);
        Muls(sums, sums, invCols, 1);
        Adds(sums, sums, epsilon, 1);
        Sqrt(sums, sums, 1);
        Div(rstdLocal, ones, sums, 1);
        SetFlag<HardEvent::V_S>(vToSEvent);
        WaitFlag<HardEvent::V_S>(vToSEvent);
        float rowRstd = rstdLocal.GetValue(0);
        outQueueRstd.EnQue<float>(rstdLocal);
        rstdLocal = outQueueRstd.DeQue<float>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(sizeof(float)), 0, 0, 0};
        DataCopyPad(rstdGm[r], rstdLocal, copyParams);
        outQueueRstd.FreeTensor(rstdLocal);
        return rowRstd;
    }

    __aicore__ inline void ScaleChunk(float rowRstd, uint32_t len)
    {
        uint32_t padded = AlignUp(len, ELEMS_PER_BLOCK);
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> gammaLocal = gammaQueue.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            Muls(yLocal, xLocal, rowRstd, padded);
            Mul(yLocal, yLocal, gammaLocal, padded);
        } else {
            LocalTensor<float> xf = xfBuf.Get<float>();
            LocalTensor<float> gf = gammaFBuf.Get<float>();
            LocalTensor<float> yf = tmpBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, padded);
            Cast(gf, gammaLocal, RoundMode::CAST_NONE, padded);
            Muls(yf, xf, rowRstd, padded);
            Mul(yf, yf, gf, padded);
            Cast(yLocal, yf, RoundMode::CAST_RINT, padded);
        }
        inQueueX.FreeTensor(xLocal);
        gammaQueue.FreeTensor(gammaLocal);
        outQueueY.EnQue<T>(yLocal);
    }

    __aicore__ inline void CopyOutChunk(const GlobalTensor<T>& dst, uint32_t len)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        if ((len * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(dst, yLocal, len);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            DataCopyPad(dst, yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECIN, BUFFER_NUM> gammaQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueRstd;
    TBuf<TPosition::VECCALC> tmpBuf;
    TBuf<TPosition::VECCALC> xfBuf;
    TBuf<TPosition::VECCALC> gammaFBuf;
    TBuf<TPosition::VECCALC> sumBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> brcbBuf;
    TBuf<TPosition::VECCALC> accBuf;
    TQue<QuePosition::VECOUT, 1> partQueue;
    TQue<QuePosition::VECIN, 1> allPartQueue;
    GlobalTensor<float> wsGm;
    GlobalTensor<T> xGm;
    GlobalTensor<T> gammaGm;
    GlobalTensor<T> yGm;
    GlobalTensor<float> rstdGm;
    LocalTensor<float> gammaF;
    uint32_t rowCount = 0;
    uint32_t cols = 0;
    uint32_t rowStride = 0;
    uint32_t tileRows = 0;
    uint32_t chunkLen = 0;
    uint32_t segCols = 0;
    uint32_t colStart = 0;
    uint32_t colCount = 0;
    uint32_t rowsPad = 0;
    uint32_t blockIndex = 0;
    uint32_t blockCount = 1;
    int32_t vToSEvent = 0;
    float epsilon = 0.0f;
    float invCols = 0.0f;
};

template <typename T, int32_t MODE, typename TilingData>
__aicore__ inline void RunRmsNorm(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR workspace,
                                  const TilingData& tiling, TPipe* pipe)
{
    KernelRmsNorm<T, MODE> op;
    op.Init(x, gamma, y, rstd, workspace, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void rms_norm(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR workspace,
                                               GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(11)) {
        RunRmsNorm<half, MODE_BATCH>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(12)) {
        RunRmsNorm<half, MODE_ROW>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(13)) {
        RunRmsNorm<half, MODE_SPLIT>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(14)) {
        RunRmsNorm<half, MODE_COLS>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(21)) {
        RunRmsNorm<float, MODE_BATCH>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(22)) {
        RunRmsNorm<float, MODE_ROW>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(23)) {
        RunRmsNorm<float, MODE_SPLIT>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(24)) {
        RunRmsNorm<float, MODE_COLS>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(31)) {
        RunRmsNorm<bfloat16_t, MODE_BATCH>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(32)) {
        RunRmsNorm<bfloat16_t, MODE_ROW>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(33)) {
        RunRmsNorm<bfloat16_t, MODE_SPLIT>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    } else if (TILING_KEY_IS(34)) {
        RunRmsNorm<bfloat16_t, MODE_COLS>(x, gamma, y, rstd, workspace, tilingData, &pipe);
    }
}
