// GroupNormSwish kernel: x (N, C, *) in NCHW is a sequence of contiguous
// groups of groupLen = (C / numGroups) * hw elements (see
// op_host/group_norm_swish_tiling.h). Per group, in float32:
//   mean = E[x], rstd = 1 / sqrt(E[(x - mean)^2] + eps)
//   z = (x - mean) * rstd * gamma_c + beta_c,  y = z / (1 + exp(-scale z))
// (the swish factor only with activate_swish), and mean / rstd are output
// per group in gamma's dtype.
//
// A tile holds tileGroups whole groups, each padded to groupStride elements
// in UB, and every step covers the whole tile: group sums by strided Adds
// that fold every group onto 64 lanes plus two BlockReduceSum (64 -> 8 -> 1;
// groups of more than 2040 floats are folded one by one); per-group values
// are spread to one 32 B block per group by Brcb and applied by a Sub/Mul
// reading that block with stride 0. The per-element gamma_c and beta_c of a
// group are Gathers of the float gamma / beta rows (byte offsets
// 4 * (i / hw), built once with CreateVecIndex, base = the group's first
// channel): once per core for numGroups + tileGroups - 1 consecutive groups
// when that fits (a tile starting at group u reads the rows from
// u % numGroups on), else per tile. Groups are split over the vector cores
// (balanced to one group) and streamed through UB with double-buffered
// queues; y, mean and rstd share one output slot.
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

template <typename T, typename P>
class KernelGroupNormSwish {
    static constexpr bool X_FLOAT = SameType<T, float>::value;
    static constexpr bool P_FLOAT = SameType<P, float>::value;

public:
    __aicore__ inline KernelGroupNormSwish() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR mean, GM_ADDR rstd,
                                const TilingData& tiling, TPipe* pipe)
    {
        numGroups = tiling.numGroups;
        chPerGroup = tiling.chPerGroup;
        groupLen = tiling.groupLen;
        groupStride = tiling.groupStride;
        tileGroups = tiling.tileGroups;
        cyclic = tiling.cyclic != 0;
        batched = tiling.batched != 0;
        swish = tiling.swish != 0;
        eps = tiling.eps;
        swishScale = tiling.swishScale;
        invGroupLen = tiling.invGroupLen;

        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        if (blockIdx < tiling.tailCoreNum) {
            groupStart = blockIdx * (tiling.blockGroups + 1);
            groupCount = tiling.blockGroups + 1;
        } else {
            groupStart = tiling.tailCoreNum * (tiling.blockGroups + 1) +
                         (blockIdx - tiling.tailCoreNum) * tiling.blockGroups;
            groupCount = tiling.blockGroups;
        }
        if (groupStart >= tiling.groups) {
            groupCount = 0;
        } else if (groupStart + groupCount > tiling.groups) {
            groupCount = static_cast<uint32_t>(tiling.groups - groupStart);
        }
        uint64_t len = static_cast<uint64_t>(groupCount) * groupLen;
        xGm.SetGlobalBuffer((__gm__ T*)x + groupStart * groupLen, len);
        yGm.SetGlobalBuffer((__gm__ T*)y + groupStart * groupLen, len);
        meanGm.SetGlobalBuffer((__gm__ P*)mean + groupStart, groupCount);
        rstdGm.SetGlobalBuffer((__gm__ P*)rstd + groupStart, groupCount);

        uint32_t channels = tiling.channels;
        tileElems = tileGroups * groupStride;
        rowsUp = AlignUp(tileGroups, FLOAT_PER_BLOCK);
        // Rows of whole 512-lane multiples (no padding lanes) reduce with
        // WholeReduceSum; up to 255 chunk results per call.
        if (groupLen == groupStride && groupLen % (FLOAT_PER_BLOCK * REPEAT_FLOATS) == 0 &&
            groupLen <= REPEAT_FLOATS * REPEAT_FLOATS) {
            wholeRows = MAX_REPEAT / (groupLen / REPEAT_FLOATS);
        }
        yBytes = AlignUp(tileElems * sizeof(T), BLOCK_BYTES);
        outRowBytes = AlignUp(rowsUp * sizeof(P), BLOCK_BYTES);
        paramRows = cyclic ? tileGroups + numGroups - 1 : tileGroups;
        uint32_t bufferNum = tiling.bufferNum;
        pipe->InitBuffer(inQueue, bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(outQueue, bufferNum, yBytes + 2 * outRowBytes);  // y, mean, rstd
        pipe->InitBuffer(workBuf0, tileElems * sizeof(float));
        pipe->InitBuffer(workBuf1, tileElems * sizeof(float));
        pipe->InitBuffer(workBuf2, tileElems * sizeof(float));
        pipe->InitBuffer(gammaTileBuf, paramRows * groupStride * sizeof(float));
        pipe->InitBuffer(betaTileBuf, paramRows * groupStride * sizeof(float));
        pipe->InitBuffer(gammaBuf, AlignUp(channels, FLOAT_PER_BLOCK) * sizeof(float));
        pipe->InitBuffer(betaBuf, AlignUp(channels, FLOAT_PER_BLOCK) * sizeof(float));
        pipe->InitBuffer(stageQueue, 1, AlignUp(channels, 16) * sizeof(float));
        pipe->InitBuffer(offsetBuf, groupStride * sizeof(uint32_t));
        pipe->InitBuffer(onesBuf, REPEAT_FLOATS * sizeof(float));
        pipe->InitBuffer(sumBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(meanBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(rstdBuf, rowsUp * sizeof(float));
        pipe->InitBuffer(brcbBuf, rowsUp * BLOCK_BYTES);
        if (batched) {
            pipe->InitBuffer(partBuf, rowsUp * BLOCK_BYTES);
        } else {
            // 64-lane partials of every group, then their 8-lane sums.
            pipe->InitBuffer(partBuf, tileGroups * REPEAT_FLOATS * sizeof(float) + rowsUp * BLOCK_BYTES);
        }
        Duplicate(onesBuf.Get<float>(), 1.0f, REPEAT_FLOATS);
        LoadChannels(gammaBuf.Get<float>(), gamma, channels);
        LoadChannels(betaBuf.Get<float>(), beta, channels);

        // Gather byte offsets 4 * floor((i + 0.5) / hw) of element i of a group.
        LocalTensor<float> idx = workBuf0.Get<float>();
        LocalTensor<int32_t> offsets = offsetBuf.Get<int32_t>();
        CreateVecIndex(idx, 0.0f, groupStride);
        Adds(idx, idx, 0.5f, groupStride);
        Muls(idx, idx, 1.0f / static_cast<float>(tiling.hw), groupStride);
        Cast(offsets, idx, RoundMode::CAST_FLOOR, groupStride);
        Muls(offsets, offsets, static_cast<int32_t>(sizeof(float)), groupStride);
        if (cyclic) {
            for (uint32_t k = 0; k < paramRows; k++) {
                GatherParams(k, k % numGroups);
            }
        }
    }

    __aicore__ inline void Process()
    {
        if (groupCount == 0) {
            return;
        }
        // The load of tile i + 1 is issued before the compute of tile i, so
        // that it does not wait behind the compute's vector instructions in
        // the issue queue.
        uint32_t tileNum = (groupCount + tileGroups - 1) / tileGroups;
        CopyIn(0, MinU32(groupCount, tileGroups));
        for (uint32_t i = 0; i < tileNum; i++) {
            uint64_t first = static_cast<uint64_t>(i) * tileGroups;
            uint32_t n = MinU32(groupCount - i * tileGroups, tileGroups);
            if (i + 1 < tileNum) {
                CopyIn(first + tileGroups, MinU32(groupCount - (i + 1) * tileGroups, tileGroups));
            }
            Compute(first, n);
            CopyOut(first, n);
        }
    }

private:
    // dst = the C values of a per-channel parameter, as float.
    __aicore__ inline void LoadChannels(const LocalTensor<float>& dst, GM_ADDR param, uint32_t channels)
    {
        GlobalTensor<P> gm;
        gm.SetGlobalBuffer((__gm__ P*)param, channels);
        LocalTensor<P> stage = stageQueue.AllocTensor<P>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(channels * sizeof(P)), 0, 0, 0};
        DataCopyPadExtParams<P> padParams{false, 0, 0, 0};
        DataCopyPad(stage, gm, copyParams, padParams);
        stageQueue.EnQue(stage);
        stage = stageQueue.DeQue<P>();
        if constexpr (P_FLOAT) {
            Muls(dst, stage, 1.0f, AlignUp(channels, FLOAT_PER_BLOCK));
        } else {
            Cast(dst, stage, RoundMode::CAST_NONE, AlignUp(channels, FLOAT_PER_BLOCK));
        }
        stageQueue.FreeTensor(stage);
    }

    // Parameter row `row` = gamma_c / beta_c of every element of a group of
    // group index g (0 .. numGroups - 1).
    __aicore__ inline void GatherParams(uint32_t row, uint32_t g)
    {
        LocalTensor<uint32_t> offsets = offsetBuf.Get<uint32_t>();
        uint32_t base = g * chPerGroup * static_cast<uint32_t>(sizeof(float));
        Gather(gammaTileBuf.Get<float>()[row * groupStride], gammaBuf.Get<float>(), offsets, base, groupLen);
        Gather(betaTileBuf.Get<float>()[row * groupStride], betaBuf.Get<float>(), offsets, base, groupLen);
    }

    __aicore__ inline void CopyIn(uint64_t first, uint32_t n)
    {
        LocalTensor<T> xLocal = inQueue.AllocTensor<T>();
        if (groupLen == groupStride) {
            DataCopy(xLocal, xGm[first * groupLen], n * groupLen);
        } else {
            uint32_t rowBytes = groupLen * sizeof(T);
            uint32_t gap = (groupStride * sizeof(T) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(n), rowBytes, 0, gap, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[first * groupLen], copyParams, padParams);
        }
        inQueue.EnQue(xLocal);
    }

    __aicore__ inline void CopyRowsOut(const GlobalTensor<P>& gm, const LocalTensor<P>& local, uint32_t n)
    {
        if ((n * sizeof(P)) % BLOCK_BYTES == 0) {
            DataCopy(gm, local, n);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(n * sizeof(P)), 0, 0, 0};
            DataCopyPad(gm, local, copyParams);
        }
    }

    __aicore__ inline void CopyOut(uint64_t first, uint32_t n)
    {
        LocalTensor<uint8_t> outLocal = outQueue.DeQue<uint8_t>();
        LocalTensor<T> yLocal = outLocal.template ReinterpretCast<T>();
        if (groupLen == groupStride) {
            DataCopy(yGm[first * groupLen], yLocal, n * groupLen);
        } else {
            uint32_t rowBytes = groupLen * sizeof(T);
            uint32_t gap = (groupStride * sizeof(T) - AlignUp(rowBytes, BLOCK_BYTES)) / BLOCK_BYTES;
            DataCopyExtParams copyParams{static_cast<uint16_t>(n), rowBytes, gap, 0, 0};
            DataCopyPad(yGm[first * groupLen], yLocal, copyParams);
        }
        CopyRowsOut(meanGm[first], outLocal[yBytes].template ReinterpretCast<P>(), n);
        CopyRowsOut(rstdGm[first], outLocal[yBytes + outRowBytes].template ReinterpretCast<P>(), n);
        outQueue.FreeTensor(outLocal);
    }

    // Per-group float values into the output slot in gamma's dtype.
    __aicore__ inline void StoreRows(const LocalTensor<P>& dst, const LocalTensor<float>& src, uint32_t n)
    {
        if constexpr (P_FLOAT) {
            Muls(dst, src, 1.0f, n);
        } else {
            Cast(dst, src, RoundMode::CAST_RINT, n);
        }
    }

    __aicore__ inline void Compute(uint64_t first, uint32_t n)
    {
        uint32_t count = n * groupStride;
        LocalTensor<T> xLocal = inQueue.DeQue<T>();
        LocalTensor<uint8_t> outLocal = outQueue.AllocTensor<uint8_t>();
        LocalTensor<float> xf = workBuf0.Get<float>();
        LocalTensor<float> t = workBuf1.Get<float>();
        LocalTensor<float> e = workBuf2.Get<float>();
        LocalTensor<float> sums = sumBuf.Get<float>();
        LocalTensor<float> mean = meanBuf.Get<float>();
        LocalTensor<float> rstd = rstdBuf.Get<float>();
        if constexpr (X_FLOAT) {
            Muls(xf, xLocal, 1.0f, count);
        } else {
            Cast(xf, xLocal, RoundMode::CAST_NONE, count);
        }
        inQueue.FreeTensor(xLocal);

        // mean, then t = x - mean and rstd from the centred squares.
        Muls(t, xf, 1.0f, count);
        RowReduce<false>(sums, t, n);
        Muls(mean, sums, invGroupLen, n);
        RowApply<false>(t, xf, mean, n);
        Mul(xf, t, t, count);
        RowReduce<false>(sums, xf, n);
        Muls(sums, sums, invGroupLen, n);
        Adds(sums, sums, eps, n);
        Sqrt(sums, sums, n);
        DivFromConst(rstd, onesBuf.Get<float>(), sums, n);
        RowApply<true>(t, t, rstd, n);

        // z = t * gamma_c + beta_c
        uint32_t paramRow = 0;
        if (cyclic) {
            paramRow = static_cast<uint32_t>((groupStart + first) % numGroups);
        } else {
            for (uint32_t j = 0; j < n; j++) {
                GatherParams(j, static_cast<uint32_t>((groupStart + first + j) % numGroups));
            }
        }
        Mul(t, t, gammaTileBuf.Get<float>()[paramRow * groupStride], count);
        Add(t, t, betaTileBuf.Get<float>()[paramRow * groupStride], count);
        if (swish) {
            Muls(e, t, -swishScale, count);
            Exp(e, e, count);
            Adds(e, e, 1.0f, count);
            Div(t, t, e, count);
        }
        LocalTensor<T> yLocal = outLocal.template ReinterpretCast<T>();
        if constexpr (X_FLOAT) {
            Muls(yLocal, t, 1.0f, count);
        } else {
            Cast(yLocal, t, RoundMode::CAST_RINT, count);
        }
        StoreRows(outLocal[yBytes].template ReinterpretCast<P>(), mean, n);
        StoreRows(outLocal[yBytes + outRowBytes].template ReinterpretCast<P>(), rstd, n);
        outQueue.EnQue<uint8_t>(outLocal);
    }

    // dst[r] = sum (MAX = false) or max (MAX = true, a >= 0) of the first
    // groupLen lanes of row r of a (a is clobbered).
    template <bool MAX>
    __aicore__ inline void RowReduce(const LocalTensor<float>& dst, const LocalTensor<float>& a, uint32_t nRows)
    {
        LocalTensor<float> part = partBuf.Get<float>();
        if constexpr (!MAX) {
            if (!batched && wholeRows > 0) {
                // Whole 64-lane chunks: one WholeReduceSum gives every
                // chunk's sum of wholeRows rows, a second one adds each row's
                // chunk sums (two instructions per tile instead of a halving
                // tree per row).
                uint32_t chunks = groupLen / REPEAT_FLOATS;
                for (uint32_t r0 = 0; r0 < nRows; r0 += wholeRows) {
                    uint32_t g = MinU32(nRows - r0, wholeRows);
                    WholeReduceSum(part[r0 * chunks], a[r0 * groupStride], static_cast<int32_t>(REPEAT_FLOATS),
                                   static_cast<int32_t>(g * chunks), 1, 1, 8);
                }
                WholeReduceSum(dst, part, static_cast<int32_t>(chunks), static_cast<int32_t>(nRows), 1, 1,
                               static_cast<int32_t>(chunks / FLOAT_PER_BLOCK));
                return;
            }
        }
        uint32_t firstLanes = MinU32(groupLen, REPEAT_FLOATS);
        LocalTensor<float> part8 = part;
        if (batched) {
            if (groupLen < REPEAT_FLOATS) {
                Duplicate(part, 0.0f, rowsUp * FLOAT_PER_BLOCK);  // neutral for sums and for max of |s|
            }
            uint8_t repStride = static_cast<uint8_t>(groupStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * groupStride;
                for (uint32_t c = REPEAT_FLOATS; c < groupLen; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(groupLen - c, REPEAT_FLOATS);
                    BinaryRepeatParams params(1, 1, 1, repStride, repStride, repStride);
                    if constexpr (MAX) {
                        Max(a[base], a[base], a[base + c], static_cast<uint64_t>(lanes),
                            static_cast<uint8_t>(groupRows), params);
                    } else {
                        Add(a[base], a[base], a[base + c], static_cast<uint64_t>(lanes),
                            static_cast<uint8_t>(groupRows), params);
                    }
                }
                BlockReduce<MAX>(part[r0 * FLOAT_PER_BLOCK], a[base], groupRows, firstLanes, repStride);
            }
        } else {
            Duplicate(part, 0.0f, nRows * REPEAT_FLOATS);
            for (uint32_t r = 0; r < nRows; r++) {
                LocalTensor<float> rowA = a[r * groupStride];
                uint32_t len = groupLen;
                while (len > REPEAT_FLOATS) {
                    uint32_t halfLen = AlignUp((len + 1) / 2, FLOAT_PER_BLOCK);
                    if constexpr (MAX) {
                        Max(rowA, rowA, rowA[halfLen], len - halfLen);
                    } else {
                        Add(rowA, rowA, rowA[halfLen], len - halfLen);
                    }
                    len = halfLen;
                }
                Adds(part[r * REPEAT_FLOATS], rowA, 0.0f, len);
            }
            part8 = part[tileGroups * REPEAT_FLOATS];
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t n = MinU32(nRows - r0, GROUP_ROWS);
                BlockReduce<MAX>(part8[r0 * FLOAT_PER_BLOCK], part[r0 * REPEAT_FLOATS], n, REPEAT_FLOATS, 8);
            }
        }
        // 8 lanes -> 1 per row.
        uint32_t blocks = (nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK;
        for (uint32_t b0 = 0; b0 < blocks; b0 += GROUP_ROWS) {
            uint32_t n = MinU32(blocks - b0, GROUP_ROWS);
            BlockReduce<MAX>(dst[b0 * FLOAT_PER_BLOCK], part8[b0 * REPEAT_FLOATS], n, REPEAT_FLOATS, 8);
        }
    }

    template <bool MAX>
    __aicore__ inline void BlockReduce(const LocalTensor<float>& dst, const LocalTensor<float>& src, uint32_t repeat,
                                       uint32_t lanes, uint32_t srcRepStride)
    {
        if constexpr (MAX) {
            BlockReduceMax(dst, src, static_cast<int32_t>(repeat), static_cast<int32_t>(lanes), 1, 1,
                           static_cast<int32_t>(srcRepStride));
        } else {
            BlockReduceSum(dst, src, static_cast<int32_t>(repeat), static_cast<int32_t>(lanes), 1, 1,
                           static_cast<int32_t>(srcRepStride));
        }
    }

    // dst row r = src row r - v[r] (MUL = false) or src row r * v[r] (MUL =
    // true): v[r] in one 32 B block per group (Brcb), read with block
    // stride 0.
    template <bool MUL>
    __aicore__ inline void RowApply(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                    const LocalTensor<float>& v, uint32_t nRows)
    {
        LocalTensor<float> blocks = brcbBuf.Get<float>();
        if (batched) {
            uint8_t repStride = static_cast<uint8_t>(groupStride / FLOAT_PER_BLOCK);
            for (uint32_t r0 = 0; r0 < nRows; r0 += GROUP_ROWS) {
                uint32_t groupRows = MinU32(nRows - r0, GROUP_ROWS);
                uint32_t base = r0 * groupStride;
                Brcb(blocks, v[r0], static_cast<uint8_t>((groupRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                     BrcbRepeatParams{1, 8});
                for (uint32_t c = 0; c < groupLen; c += REPEAT_FLOATS) {
                    uint32_t lanes = MinU32(groupLen - c, REPEAT_FLOATS);
                    BinaryRepeatParams params(1, 1, 0, repStride, repStride, 1);
                    if constexpr (MUL) {
                        Mul(dst[base + c], src[base + c], blocks, static_cast<uint64_t>(lanes),
                            static_cast<uint8_t>(groupRows), params);
                    } else {
                        Sub(dst[base + c], src[base + c], blocks, static_cast<uint64_t>(lanes),
                            static_cast<uint8_t>(groupRows), params);
                    }
                }
            }
        } else {
            Brcb(blocks, v, static_cast<uint8_t>((nRows + FLOAT_PER_BLOCK - 1) / FLOAT_PER_BLOCK),
                 BrcbRepeatParams{1, 8});
            uint32_t repeats = groupLen / REPEAT_FLOATS;  // whole repeats, then the tail lanes
            uint32_t tail = groupLen - repeats * REPEAT_FLOATS;
            for (uint32_t r = 0; r < nRows; r++) {
                for (uint32_t k = 0; k < repeats; k += MAX_REPEAT) {
                    uint32_t m = MinU32(repeats - k, MAX_REPEAT);
                    uint32_t off = r * groupStride + k * REPEAT_FLOATS;
                    BinaryRepeatParams params(1, 1, 0, 8, 8, 0);
                    if constexpr (MUL) {
                        Mul(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(REPEAT_FLOATS),
                            static_cast<uint8_t>(m), params);
                    } else {
                        Sub(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(REPEAT_FLOATS),
                            static_cast<uint8_t>(m), params);
                    }
                }
                if (tail > 0) {
                    uint32_t off = r * groupStride + repeats * REPEAT_FLOATS;
                    BinaryRepeatParams params(1, 1, 0, 8, 8, 0);
                    if constexpr (MUL) {
                        Mul(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(tail),
                            1, params);
                    } else {
                        Sub(dst[off], src[off], blocks[r * FLOAT_PER_BLOCK], static_cast<uint64_t>(tail),
                            1, params);
                    }
                }
            }
        }
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECIN, 1> stageQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> workBuf0;
    TBuf<TPosition::VECCALC> workBuf1;
    TBuf<TPosition::VECCALC> workBuf2;
    TBuf<TPosition::VECCALC> gammaTileBuf;
    TBuf<TPosition::VECCALC> betaTileBuf;
    TBuf<TPosition::VECCALC> gammaBuf;
    TBuf<TPosition::VECCALC> betaBuf;
    TBuf<TPosition::VECCALC> offsetBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> sumBuf;
    TBuf<TPosition::VECCALC> meanBuf;
    TBuf<TPosition::VECCALC> rstdBuf;
    TBuf<TPosition::VECCALC> brcbBuf;
    TBuf<TPosition::VECCALC> partBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    GlobalTensor<P> meanGm;
    GlobalTensor<P> rstdGm;
    uint64_t groupStart = 0;
    uint32_t groupCount = 0;
    uint32_t numGroups = 1;
    uint32_t chPerGroup = 1;
    uint32_t groupLen = 0;
    uint32_t groupStride = 0;
    uint32_t tileGroups = 0;
    uint32_t tileElems = 0;
    uint32_t rowsUp = 0;
    uint32_t yBytes = 0;
    uint32_t outRowBytes = 0;
    uint32_t paramRows = 0;
    bool cyclic = false;
    bool batched = true;
    uint32_t wholeRows = 0;
    bool swish = true;
    float eps = 0.0f;
    float swishScale = 1.0f;
    float invGroupLen = 0.0f;
};

template <typename T, typename P, typename TilingData>
__aicore__ inline void RunGroupNormSwish(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR mean,
                                         GM_ADDR rstd, const TilingData& tiling, TPipe* pipe)
{
    KernelGroupNormSwish<T, P> op;
    op.Init(x, gamma, beta, y, mean, rstd, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void group_norm_swish(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y,
                                                       GM_ADDR mean, GM_ADDR rstd, GM_ADDR workspace,
                                                       GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(10)) {
        RunGroupNormSwish<half, half>(x, gamma, beta, y, mean, rstd, tilingData, &pipe);
    } else if (TILING_KEY_IS(11)) {
        RunGroupNormSwish<half, float>(x, gamma, beta, y, mean, rstd, tilingData, &pipe);
    } else if (TILING_KEY_IS(21)) {
        RunGroupNormSwish<float, float>(x, gamma, beta, y, mean, rstd, tilingData, &pipe);
    } else if (TILING_KEY_IS(30)) {
        RunGroupNormSwish<bfloat16_t, bfloat16_t>(x, gamma, beta, y, mean, rstd, tilingData, &pipe);
    } else if (TILING_KEY_IS(31)) {
        RunGroupNormSwish<bfloat16_t, float>(x, gamma, beta, y, mean, rstd, tilingData, &pipe);
    }
}
