// AddRmsNormQuant kernel: for every row of D = cols elements
//   x    = x1 + x2                               (output, x1's dtype)
//   rstd = 1 / sqrt(mean(x^2) + epsilon)         (float32)
//   y    = x * rstd * gamma
//   y1   = sat_int8(rint(y / scales1 + zero_points1)),  y2 = 0
// float16: the add is a float16 Add, x * rstd is rounded to float16 and
// multiplied by gamma in float16 (as the CANN kernel does); bfloat16: the
// sum and the norm stay in float32, only the x output is rounded.
//
// gamma, scales1 and zero_points1 are per channel: each becomes a tile of
// tileRows identical rows (built once per core by doubling copies), so a
// tile applies them with one full-tile Mul/Div/Add. Rows are split over the
// vector cores (balanced to one row) and streamed through UB with
// double-buffered queues; x1 and x2 share one input slot and x, y1, y2 one
// output slot (one DMA completion wait per tile and direction). Rows are
// padded to rowStride (a multiple of 32) elements in UB.
// Row sums of x^2: for rows of at most 2040 floats (`batched`) every row
// of the tile is folded onto 64 lanes with one strided Add per 64-lane
// column chunk, then two BlockReduceSum (64 -> 8 -> 1 per row); rstd is
// spread to one 32 B block per row by Brcb and a Mul with src1 block stride
// 0 scales every row. Longer rows are folded row by row (a tree of Adds)
// and scaled by a Mul per row reading its Brcb block with stride 0. Quantisation: Cast float -> float with
// RINT, -> half (exact for integers) -> int8, saturating.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t REPEAT_FLOATS = 64;  // floats per 256 B vector repeat
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint32_t GROUP_ROWS = 248;    // rows per repeat-form instruction: <= 255, multiple of 8

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

__aicore__ inline uint32_t MinU32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

// dst = c / src, with c one 256 B block of a constant read with repeat
// stride 0 (a Div, as the device's Reciprocal is not accurate enough).
__aicore__ inline void DivFromConst(const LocalTensor<float>& dst, const LocalTensor<float>& consts,
                                   const LocalTensor<float>& src, uint32_t count)
{
    uint32_t repeats = count / REPEAT_FLOATS;
    for (uint32_t r = 0; r < repeats; r += MAX_REPEAT) {
        uint32_t n = MinU32(repeats - r, MAX_REPEAT);
        Div(dst[r * REPEAT_FLOATS], consts, src[r * REPEAT_FLOATS], static_cast<uint64_t>(REPEAT_FLOATS),
            static_cast<uint8_t>(n), BinaryRepeatParams(1, 1, 1, 8, 0, 8));
    }
    uint32_t tail = count - repeats * REPEAT_FLOATS;
    if (tail > 0) {
        Div(dst[repeats * REPEAT_FLOATS], consts, src[repeats * REPEAT_FLOATS], static_cast<uint64_t>(tail), 1,
            BinaryRepeatParams(1, 1, 1, 8, 0, 8));
    }
}

template <typename T>
class KernelAddRmsNormQuant {
    static constexpr bool IS_HALF = SameType<T, half>::value;

public:
    __aicore__ inline KernelAddRmsNormQuant() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR gamma, GM_ADDR scales1, GM_ADDR zeroPoints1,
                                GM_ADDR y1, GM_ADDR y2, GM_ADDR x, const TilingData& tiling, TPipe* pipe)
    {
        cols = tiling.cols;
        rowStride = tiling.rowStride;
        tileRows = tiling.tileRows;
        hasZeroPoint = tiling.hasZeroPoint != 0;
        batched = tiling.batched != 0;
        epsilon = tiling.epsilon;
        invCols = tiling.invCols;

        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t rowStart;
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
        uint64_t base = rowStart * cols;
        uint64_t len = static_cast<uint64_t>(rowCount) * cols;
        x1Gm.SetGlobalBuffer((__gm__ T*)x1 + base, len);
        x2Gm.SetGlobalBuffer((__gm__ T*)x2 + base, len);
        xGm.SetGlobalBuffer((__gm__ T*)x + base, len);
        y1Gm.SetGlobalBuffer((__gm__ int8_t*)y1 + base, len);
        y2Gm.SetGlobalBuffer((__gm__ int8_t*)y2 + base, len);

        tileElems = tileRows * rowStride;
        uint32_t rowsUp = AlignUp(tileRows, FLOAT_PER_BLOCK);
        // Rows of whole 512-lane multiples (no padding lanes) reduce with
        // WholeReduceSum; up to 255 chunk results per call.
        if (cols == rowStride && cols % (FLOAT_PER_BLOCK * REPEAT_FLOATS) == 0 &&
            cols <= REPEAT_FLOATS * REPEAT_FLOATS) {
            wholeRows = MAX_REPEAT / (cols / REPEAT_FLOATS);
        }
        uint32_t bufferNum = tiling.bufferNum;
        pipe->InitBuffer(inQueue, bufferNum, 2 * tileElems * sizeof(T));            // x1, x2
        pipe->InitBuffer(outQueue, bufferNum, tileElems * sizeof(T) + 2 * tileElems);  // x, y1, y2
        pipe->InitBuffer(xfBuf, tileElems * sizeof(float));
        pipe->InitBuffer(workBuf, tileElems * sizeof(float));
        pipe->InitBuffer(gammaBuf, tileElems * (IS_HALF ? sizeof(half) : sizeof(float)));
        pipe->InitBuffer(scaleBuf, tileElems * sizeof(float));
        if (hasZeroPoint) {
            pipe->InitBuffer(zpBuf, tileElems * sizeof(float));
        }
        pipe->InitBuffer(stageQueue, 1, rowStride * sizeof(float));
        pipe->InitBuffer(onesBuf, REPEAT_FLOATS * sizeof(float));
        pipe->InitBuffer(rstdBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(brcbBuf, rowsUp * BLOCK_BYTES);
        if (batched) {
            pipe->InitBuffer(partBuf, rowsUp * BLOCK_BYTES);
        } else {
            // 64-lane partials of every row, then their 8-lane sums.
            pipe->InitBuffer(partBuf, tileRows * REPEAT_FLOATS * sizeof(float) + rowsUp * BLOCK_BYTES);
        }
        Duplicate(onesBuf.Get<float>(), 1.0f, REPEAT_FLOATS);

        // Per-channel parameters as tiles of tileRows identical rows.
        GlobalTensor<T> gammaGm;
        gammaGm.SetGlobalBuffer((__gm__ T*)gamma, cols);
        LocalTensor<T> stage = LoadRow(gammaGm);
        if constexpr (IS_HALF) {
            Muls(gammaBuf.Get<half>(), stage, static_cast<half>(1.0f), rowStride);
            FreeRow(stage);
            Replicate(gammaBuf.Get<half>());
        } else {
            Cast(gammaBuf.Get<float>(), stage, RoundMode::CAST_NONE, rowStride);
            FreeRow(stage);
            Replicate(gammaBuf.Get<float>());
        }
        GlobalTensor<float> scaleGm;
        scaleGm.SetGlobalBuffer((__gm__ float*)scales1, cols);
        LocalTensor<float> scaleStage = LoadRow(scaleGm);
        Muls(scaleBuf.Get<float>(), scaleStage, 1.0f, rowStride);
        FreeRow(scaleStage);
        Replicate(scaleBuf.Get<float>());
        if (hasZeroPoint) {
            GlobalTensor<int32_t> zpGm;
            zpGm.SetGlobalBuffer((__gm__ int32_t*)zeroPoints1, cols);
            LocalTensor<int32_t> zpStage = LoadRow(zpGm);
            Cast(zpBuf.Get<float>(), zpStage, RoundMode::CAST_NONE, rowStride);
            FreeRow(zpStage);
            Replicate(zpBuf.Get<float>());
        }
    }

    __aicore__ inline void Process()
    {
        if (rowCount == 0) {
            return;
        }
        // The load of tile i + 1 is issued before the compute of tile i, so
        // that it does not wait behind the compute's vector instructions in
        // the issue queue.
        uint32_t tileNum = (rowCount + tileRows - 1) / tileRows;
        CopyIn(0, MinU32(rowCount, tileRows));
        for (uint32_t i = 0; i < tileNum; i++) {
            uint64_t row = static_cast<uint64_t>(i) * tileRows;
            uint32_t nRows = MinU32(rowCount - i * tileRows, tileRows);
            if (i + 1 < tileNum) {
                CopyIn(row + tileRows, MinU32(rowCount - (i + 1) * tileRows, tileRows));
            }
            Compute(nRows);
            CopyOut(row, nRows);
        }
    }

private:
    // One parameter row (cols elements) in the staging slot.
    template <typename P>
    __aicore__ inline LocalTensor<P> LoadRow(const GlobalTensor<P>& gm)
    {
        LocalTensor<P> stage = stageQueue.AllocTensor<P>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(cols * sizeof(P)), 0, 0, 0};
        DataCopyPadExtParams<P> padParams{false, 0, 0, 0};
        DataCopyPad(stage, gm, copyParams, padParams);
        stageQueue.EnQue(stage);
        return stageQueue.DeQue<P>();
    }

    template <typename P>
    __aicore__ inline void FreeRow(LocalTensor<P>& stage)
    {
        stageQueue.FreeTensor(stage);
    }

    // Rows [0, k) -> [k, 2k) until tileRows rows (Muls by 1 copies exactly).
    template <typename P>
    __aicore__ inline void Replicate(const LocalTensor<P>& tile)
    {
        for (uint32_t k = 1; k < tileRows; k *= 2) {
            uint32_t n = MinU32(k, tileRows - k);
            Muls(tile[k * rowStride], tile, static_cast<P>(1.0f), n * rowStride);
        }
    }

    // nRows rows of cols elements into UB rows of rowStride elements.
    __aicore__ inline void CopyRowsIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t nRows)
    {
        if (cols == rowStride) {
            DataCopy(dst, src, nRows * cols);
        } else {
            uint32_t rowBytes = cols * sizeof(T);
            uint32_t gap = (rowStride * sizeof(T) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), rowBytes, 0, gap, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(dst, src, copyParams, padParams);
        }
    }

    template <typename P>
    __aicore__ inline void CopyRowsOut(const GlobalTensor<P>& dst, const LocalTensor<P>& src, uint32_t nRows)
    {
        if (cols == rowStride) {
            DataCopy(dst, src, nRows * cols);
        } else {
            uint32_t rowBytes = cols * sizeof(P);
            uint32_t gap = (rowStride * sizeof(P) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), rowBytes, gap, 0, 0};
            DataCopyPad(dst, src, copyParams);
        }
    }

    __aicore__ inline void CopyIn(uint64_t row, uint32_t nRows)
    {
        LocalTensor<T> inLocal = inQueue.AllocTensor<T>();
        CopyRowsIn(inLocal, x1Gm[row * cols], nRows);
        CopyRowsIn(inLocal[tileElems], x2Gm[row * cols], nRows);
        inQueue.EnQue(inLocal);
    }

    __aicore__ inline void CopyOut(uint64_t row, uint32_t nRows)
    {
        LocalTensor<uint8_t> outLocal = outQueue.DeQue<uint8_t>();
        CopyRowsOut(xGm[row * cols], outLocal.ReinterpretCast<T>(), nRows);
        LocalTensor<int8_t> yBytes = outLocal[tileElems * sizeof(T)].template ReinterpretCast<int8_t>();
        CopyRowsOut(y1Gm[row * cols], yBytes, nRows);
        CopyRowsOut(y2Gm[row * cols], yBytes[tileElems], nRows);
        outQueue.FreeTensor(outLocal);
    }

    __aicore__ inline void Compute(uint32_t nRows)
    {
        uint32_t count = nRows * rowStride;
        LocalTensor<T> inLocal = inQueue.DeQue<T>();
        LocalTensor<uint8_t> outLocal = outQueue.AllocTensor<uint8_t>();
        LocalTensor<T> xOut = outLocal.ReinterpretCast<T>();
        LocalTensor<int8_t> y1Local = outLocal[tileElems * sizeof(T)].template ReinterpretCast<int8_t>();
        LocalTensor<half> y2Half = outLocal[tileElems * sizeof(T) + tileElems].template ReinterpretCast<half>();
        LocalTensor<float> xf = xfBuf.Get<float>();
        LocalTensor<float> w = workBuf.Get<float>();

        // x = x1 + x2
        if constexpr (IS_HALF) {
            Add(xOut, inLocal, inLocal[tileElems], count);
            Cast(xf, xOut, RoundMode::CAST_NONE, count);
        } else {
            Cast(xf, inLocal, RoundMode::CAST_NONE, count);
            Cast(w, inLocal[tileElems], RoundMode::CAST_NONE, count);
            Add(xf, xf, w, count);
            Cast(xOut, xf, RoundMode::CAST_RINT, count);
        }
        inQueue.FreeTensor(inLocal);

        // rstd per row, then w = x * rstd.
        Mul(w, xf, xf, count);
        LocalTensor<float> rstd = rstdBuf.Get<float>();
        RowSums(rstd, w, nRows);
        Muls(rstd, rstd, invCols, nRows);
        Adds(rstd, rstd, epsilon, nRows);
        Sqrt(rstd, rstd, nRows);
        DivFromConst(rstd, onesBuf.Get<float>(), rstd, nRows);
        ScaleRows(w, xf, rstd, nRows);

        // y = (x * rstd) * gamma
        if constexpr (IS_HALF) {
            LocalTensor<half> th = xf.ReinterpretCast<half>();
            Cast(th, w, RoundMode::CAST_RINT, count);
            Mul(th, th, gammaBuf.Get<half>(), count);
            Cast(w, th, RoundMode::CAST_NONE, count);
        } else {
            Mul(w, w, gammaBuf.Get<float>(), count);
        }
        // y1 = sat_int8(rint(y / scales1 + zero_points1))
        Div(w, w, scaleBuf.Get<float>(), count);
        if (hasZeroPoint) {
            Add(w, w, zpBuf.Get<float>(), count);
        }
        Cast(w, w, RoundMode::CAST_RINT, count);
        LocalTensor<half> h = xf.ReinterpretCast<half>();
        Cast(h, w, RoundMode::CAST_NONE, count);
        Cast(y1Local, h, RoundMode::CAST_NONE, count);
        Duplicate(y2Half, static_cast<half>(0.0f), count / 2);
        outQueue.EnQue<uint8_t>(outLocal);
    }

    // sums[r] = sum of the first cols lanes of row r of a (a is clobbered).
    __aicore__ inline void RowSums(const LocalTensor<float>& sums, const LocalTensor<float>& a, uint32_t nRows)
    {
        LocalTensor<float> part = partBuf.Get<float>();
        if (!batched && wholeRows > 0) {
            // Whole 64-lane chunks: one WholeReduceSum gives every
            // chunk's sum of wholeRows rows, a second one adds each row's
            // chunk sums (two instructions per tile instead of a halving
            // tree per row).
            uint32_t chunks = cols / REPEAT_FLOATS;
            for (uint32_t r0 = 0; r0 < nRows; r0 += wholeRows) {
                uint32_t g = MinU32(nRows - r0, wholeRows);
                WholeReduceSum(part[r0 * chunks], a[r0 * rowStride], static_cast<int32_t>(REPEAT_FLOATS),
                               static_cast<int32_t>(g * chunks), 1, 1, 8);
            }
            WholeReduceSum(sums, part, static_cast<int32_t>(chunks), static_cast<int32_t>(nRows), 1, 1,
                           static_cast<int32_t>(chunks / FLOAT_PER_BLOCK));
            return;
        }
        uint32_t firstLanes = MinU32(cols, REPEAT_FLOATS);
        if (batched) {
            if (cols < REPEAT_FLOATS) {
                Duplicate(part, 0.0f, AlignUp(nRows, FLOAT_PER_BLOCK) * FLOAT_PER_BLOCK);
            }
            uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * rowStride;
                for (uint32_t c = REPEAT_FLOATS; c < cols; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(cols - c, REPEAT_FLOATS);
                    Add(a[base], a[base], a[base + c], static_cast<uint64_t>(lanes), static_cast<uint8_t>(groupRows),
                        BinaryRepeatParams(1, 1, 1, repStride, repStride, repStride));
                }
                BlockReduceSum(part[r0 * FLOAT_PER_BLOCK], a[base], static_cast<int32_t>(groupRows),
                               static_cast<int32_t>(firstLanes), 1, 1, repStride);
            }
            BlockSums(sums, part, nRows);
        } else {
            Duplicate(part, 0.0f, nRows * REPEAT_FLOATS);
            for (uint32_t r = 0; r < nRows; r++) {
                LocalTensor<float> rowA = a[r * rowStride];
                uint32_t len = cols;
                while (len > REPEAT_FLOATS) {
                    uint32_t halfLen = AlignUp((len + 1) / 2, FLOAT_PER_BLOCK);
                    Add(rowA, rowA, rowA[halfLen], len - halfLen);
                    len = halfLen;
                }
                Adds(part[r * REPEAT_FLOATS], rowA, 0.0f, len);
            }
            // 64 lanes -> 8 -> 1 per row.
            LocalTensor<float> part8 = part[tileRows * REPEAT_FLOATS];
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t n = MinU32(nRows - r0, GROUP_ROWS);
                BlockReduceSum(part8[r0 * FLOAT_PER_BLOCK], part[r0 * REPEAT_FLOATS], static_cast<int32_t>(n),
                               static_cast<int32_t>(REPEAT_FLOATS), 1, 1, 8);
            }
            BlockSums(sums, part8, nRows);
        }
    }

    // sums[r] = sum of part[8r .. 8r + 8).
    __aicore__ inline void BlockSums(const LocalTensor<float>& sums, const LocalTensor<float>& part, uint32_t nRows)
    {
        uint32_t blocks = (nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK;
        for (uint32_t b0 = 0; b0 < blocks; b0 += GROUP_ROWS) {
            uint32_t n = MinU32(blocks - b0, GROUP_ROWS);
            BlockReduceSum(sums[b0 * FLOAT_PER_BLOCK], part[b0 * REPEAT_FLOATS], static_cast<int32_t>(n),
                           static_cast<int32_t>(REPEAT_FLOATS), 1, 1, 8);
        }
    }

    // dst row r = src row r * factor[r].
    __aicore__ inline void ScaleRows(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                     const LocalTensor<float>& factor, uint32_t nRows)
    {
        if (batched) {
            LocalTensor<float> blocks = brcbBuf.Get<float>();
            uint8_t repStride = static_cast<uint8_t>(rowStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * rowStride;
                Brcb(blocks, factor[r0], static_cast<uint8_t>((groupRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                     BrcbRepeatParams{1, 8});
                for (uint32_t c = 0; c < cols; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(cols - c, REPEAT_FLOATS);
                    Mul(dst[base + c], src[base + c], blocks, static_cast<uint64_t>(lanes),
                        static_cast<uint8_t>(groupRows), BinaryRepeatParams(1, 1, 0, repStride, repStride, 1));
                }
            }
        } else {
            // Long rows: the factor of row r in one 32 B block (Brcb), read
            // with block and repeat stride 0 over the whole row.
            LocalTensor<float> blocks = brcbBuf.Get<float>();
            Brcb(blocks, factor, static_cast<uint8_t>((nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                 BrcbRepeatParams{1, 8});
            uint32_t repeats = cols / REPEAT_FLOATS;  // whole repeats, then the tail lanes
            uint32_t tail = cols - repeats * REPEAT_FLOATS;
            for (uint32_t r = 0; r < nRows; r++) {
                for (uint32_t k = 0; k < repeats; k += MAX_REPEAT) {
                    uint32_t n = MinU32(repeats - k, MAX_REPEAT);
                    uint32_t off = r * rowStride + k * REPEAT_FLOATS;
                    Mul(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(REPEAT_FLOATS),
                        static_cast<uint8_t>(n), BinaryRepeatParams(1, 1, 0, 8, 8, 0));
                }
                if (tail > 0) {
                    uint32_t off = r * rowStride + repeats * REPEAT_FLOATS;
                    Mul(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(tail),
                        1, BinaryRepeatParams(1, 1, 0, 8, 8, 0));
                }
            }
        }
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECIN, 1> stageQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> xfBuf;
    TBuf<TPosition::VECCALC> workBuf;
    TBuf<TPosition::VECCALC> gammaBuf;
    TBuf<TPosition::VECCALC> scaleBuf;
    TBuf<TPosition::VECCALC> zpBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> rstdBuf;
    TBuf<TPosition::VECCALC> brcbBuf;
    TBuf<TPosition::VECCALC> partBuf;
    GlobalTensor<T> x1Gm;
    GlobalTensor<T> x2Gm;
    GlobalTensor<T> xGm;
    GlobalTensor<int8_t> y1Gm;
    GlobalTensor<int8_t> y2Gm;
    uint32_t rowCount = 0;
    uint32_t cols = 0;
    uint32_t rowStride = 0;
    uint32_t tileRows = 0;
    uint32_t tileElems = 0;
    bool hasZeroPoint = false;
    bool batched = true;
    uint32_t wholeRows = 0;
    float epsilon = 0.0f;
    float invCols = 0.0f;
};

template <typename T, typename TilingData>
__aicore__ inline void RunAddRmsNormQuant(GM_ADDR x1, GM_ADDR x2, GM_ADDR gamma, GM_ADDR scales1,
                                          GM_ADDR zeroPoints1, GM_ADDR y1, GM_ADDR y2, GM_ADDR x,
                                          const TilingData& tiling, TPipe* pipe)
{
    KernelAddRmsNormQuant<T> op;
    op.Init(x1, x2, gamma, scales1, zeroPoints1, y1, y2, x, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void add_rms_norm_quant(GM_ADDR x1, GM_ADDR x2, GM_ADDR gamma, GM_ADDR scales1,
                                                         GM_ADDR scales2, GM_ADDR zero_points1,
                                                         GM_ADDR zero_points2, GM_ADDR y1, GM_ADDR y2, GM_ADDR x,
                                                         GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunAddRmsNormQuant<half>(x1, x2, gamma, scales1, zero_points1, y1, y2, x, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunAddRmsNormQuant<bfloat16_t>(x1, x2, gamma, scales1, zero_points1, y1, y2, x, tilingData, &pipe);
    }
}
