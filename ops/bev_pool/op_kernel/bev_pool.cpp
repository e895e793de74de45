// BevPool kernel: out [B, C, Dz, Dy, Dx] from g[ranks_bev[j]] +=
// depth.flat[ranks_depth[j]] * feat.flat[ranks_feat[j]] over every
// interval in order (shared/ref/operators-l1-l3.md, "bev_pool"; the ranks
// are flat element indices, C included), float16 or float32.
//
// Partition by output, so no two cores touch one cell and every cell sees
// its additions in the reference's order (the float16 sums round as the
// fp16 reference's do). A core's item is a run of whole cells of one batch
// (tiling header); for each item the core
// - zeroes the item's g slice in UB (Duplicate);
// - reads the intervals in chunks (DataCopyPad) and, per interval, the
//   ranks_bev entries in chunks of chunkEntries: a vector filter (Adds
//   -lo, Cast to float, two Compares for 0 <= rank - lo < span, one for the
//   chunk's length, And) and two GatherMasks compact the offsets in the
//   slice and the entry numbers of the entries that land in the slice;
// - adds those few entries in scalar code (their depth and feat ranks and
//   values are read from GM; entries whose ranks fall outside depth or
//   feat are skipped, as in the golden);
// - transposes the slice [cells][C] to [C][cells] with one Gather (an
//   offset table built once per core) and stores it with one DataCopyPad
//   of C rows.
// The rank chunks are double-buffered (a VECIN queue); flags order the
// scalar reads and writes of UB against the vector and DMA pipes.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t QUE_DEPTH = 2;
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t LANES = 64;  // 32-bit elements per 256 B repeat

template <typename T>
class KernelBevPool {
public:
    __aicore__ inline KernelBevPool() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR depth, GM_ADDR feat, GM_ADDR ranksDepth, GM_ADDR ranksFeat,
                                GM_ADDR ranksBev, GM_ADDR starts, GM_ADDR lengths, GM_ADDR out,
                                const TilingData& td, TPipe* pipe)
    {
        depthNum_ = td.depthNum;
        featNum_ = td.featNum;
        points_ = td.points;
        intervals_ = td.intervals;
        channels_ = td.channels;
        cells_ = td.cells;
        sliceCells_ = td.sliceCells;
        itemsPerBatch_ = td.itemsPerBatch;
        chunkEntries_ = td.chunkEntries;
        chunkIntervals_ = td.chunkIntervals;
        rowPitch_ = td.rowPitch;
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < td.tailCoreNum) {
            firstItem_ = blockIdx * (td.blockItems + 1);
            itemNum_ = td.blockItems + 1;
        } else {
            firstItem_ = td.tailCoreNum * (td.blockItems + 1) + (blockIdx - td.tailCoreNum) * td.blockItems;
            itemNum_ = td.blockItems;
        }

        depthGm.SetGlobalBuffer((__gm__ T*)depth, depthNum_);
        featGm.SetGlobalBuffer((__gm__ T*)feat, featNum_);
        rdGm.SetGlobalBuffer((__gm__ int32_t*)ranksDepth, points_);
        rfGm.SetGlobalBuffer((__gm__ int32_t*)ranksFeat, points_);
        rbGm.SetGlobalBuffer((__gm__ int32_t*)ranksBev, points_);
        startGm.SetGlobalBuffer((__gm__ int32_t*)starts, intervals_);
        lenGm.SetGlobalBuffer((__gm__ int32_t*)lengths, intervals_);
        uint64_t outNum = static_cast<uint64_t>(td.items / (itemsPerBatch_ == 0 ? 1 : itemsPerBatch_)) *
                          channels_ * cells_;
        outGm.SetGlobalBuffer((__gm__ T*)out, outNum);

        uint32_t sliceElems = channels_ * rowPitch_;
        pipe->InitBuffer(rbQ, QUE_DEPTH, chunkEntries_ * sizeof(int32_t));
        pipe->InitBuffer(accBuf, AlignUp(sliceElems * sizeof(T)));
        pipe->InitBuffer(outBuf, AlignUp(sliceElems * sizeof(T)));
        pipe->InitBuffer(tableBuf, sliceElems * sizeof(int32_t));
        pipe->InitBuffer(rankFBuf, chunkEntries_ * sizeof(float));
        pipe->InitBuffer(idxBuf, chunkEntries_ * sizeof(int32_t));
        pipe->InitBuffer(idxFBuf, chunkEntries_ * sizeof(float));
        pipe->InitBuffer(offBuf, chunkEntries_ * sizeof(int32_t));
        pipe->InitBuffer(entryBuf, chunkEntries_ * sizeof(int32_t));
        pipe->InitBuffer(maskBuf, 3 * AlignUp(chunkEntries_ / 8));
        pipe->InitBuffer(intervalBuf, 2 * chunkIntervals_ * sizeof(int32_t));

        acc = accBuf.Get<T>();
        outT = outBuf.Get<T>();
        table = tableBuf.Get<int32_t>();
        rankF = rankFBuf.Get<float>();
        idx = idxBuf.Get<int32_t>();
        idxF = idxFBuf.Get<float>();
        offs = offBuf.Get<int32_t>();
        entries = entryBuf.Get<int32_t>();
        LocalTensor<uint8_t> masks = maskBuf.Get<uint8_t>();
        uint32_t maskBytes = AlignUp(chunkEntries_ / 8);
        m0 = masks;
        m1 = masks[maskBytes];
        m2 = masks[2 * maskBytes];
        startsL = intervalBuf.Get<int32_t>();
        lensL = startsL[chunkIntervals_];

        // Entry numbers 0..chunkEntries-1 (int32 and float) and the
        // transpose table: row c, column k reads cell k, channel c.
        CreateVecIndex(idx, static_cast<int32_t>(0), chunkEntries_);
        Cast(idxF, idx, RoundMode::CAST_NONE, chunkEntries_);
        CreateVecIndex(table, static_cast<int32_t>(0), rowPitch_);
        Muls(table, table, static_cast<int32_t>(channels_ * sizeof(T)), rowPitch_);
        for (uint32_t c = 1; c < channels_; ++c) {
            Adds(table[c * rowPitch_], table, static_cast<int32_t>(c * sizeof(T)), rowPitch_);
        }
        vsEvent_ = static_cast<int32_t>(pipe->FetchEventID(HardEvent::V_S));
        svEvent_ = static_cast<int32_t>(pipe->FetchEventID(HardEvent::S_V));
        mte2sEvent_ = static_cast<int32_t>(pipe->FetchEventID(HardEvent::MTE2_S));
        smte2Event_ = static_cast<int32_t>(pipe->FetchEventID(HardEvent::S_MTE2));
        vmte3Event_ = static_cast<int32_t>(pipe->FetchEventID(HardEvent::V_MTE3));
        mte3vEvent_ = static_cast<int32_t>(pipe->FetchEventID(HardEvent::MTE3_V));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < itemNum_; ++i) {
            Item(firstItem_ + i, i > 0);
        }
    }

private:
    __aicore__ static inline uint32_t AlignUp(uint32_t bytes)
    {
        return (bytes + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
    }

    __aicore__ inline void Item(uint32_t item, bool afterStore)
    {
        uint32_t b = item / itemsPerBatch_;
        uint32_t k0 = (item % itemsPerBatch_) * sliceCells_;
        uint32_t k1 = k0 + sliceCells_ < cells_ ? k0 + sliceCells_ : cells_;
        uint32_t kc = k1 - k0;
        int32_t lo = static_cast<int32_t>((static_cast<uint64_t>(b) * cells_ + k0) * channels_);
        uint32_t span = kc * channels_;

        Duplicate(acc, static_cast<T>(0.0f), channels_ * rowPitch_);
        SetFlag<HardEvent::V_S>(vsEvent_);
        WaitFlag<HardEvent::V_S>(vsEvent_);

        for (uint32_t i0 = 0; i0 < intervals_; i0 += chunkIntervals_) {
            uint32_t n = intervals_ - i0 < chunkIntervals_ ? intervals_ - i0 : chunkIntervals_;
            DataCopyExtParams words{1, static_cast<uint32_t>(n * sizeof(int32_t)), 0, 0, 0};
            DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
            DataCopyPad(startsL, startGm[i0], words, pad);
            DataCopyPad(lensL, lenGm[i0], words, pad);
            SetFlag<HardEvent::MTE2_S>(mte2sEvent_);
            WaitFlag<HardEvent::MTE2_S>(mte2sEvent_);
            for (uint32_t i = 0; i < n; ++i) {
                int64_t s = startsL.GetValue(i);
                int64_t e = s + lensL.GetValue(i);
                s = s < 0 ? 0 : s;
                e = e > static_cast<int64_t>(points_) ? static_cast<int64_t>(points_) : e;
                for (int64_t j0 = s; j0 < e; j0 += chunkEntries_) {
                    uint32_t cnt = e - j0 < static_cast<int64_t>(chunkEntries_) ? static_cast<uint32_t>(e - j0)
                                                                                 : chunkEntries_;
                    Scan(static_cast<uint32_t>(j0), cnt, lo, span);
                }
            }
            SetFlag<HardEvent::S_MTE2>(smte2Event_);
            WaitFlag<HardEvent::S_MTE2>(smte2Event_);
        }

        // Transpose the slice to [C][kc] and store C rows.
        SetFlag<HardEvent::S_V>(svEvent_);
        WaitFlag<HardEvent::S_V>(svEvent_);
        if (afterStore) {
            WaitFlag<HardEvent::MTE3_V>(mte3vEvent_);
        }
        Gather(outT, acc, table.ReinterpretCast<uint32_t>(), 0u, channels_ * rowPitch_);
        SetFlag<HardEvent::V_MTE3>(vmte3Event_);
        WaitFlag<HardEvent::V_MTE3>(vmte3Event_);
        uint32_t rowBlocks = rowPitch_ * sizeof(T) / BLOCK_BYTES;
        uint32_t usedBlocks = AlignUp(kc * sizeof(T)) / BLOCK_BYTES;
        DataCopyExtParams rows{static_cast<uint16_t>(channels_), static_cast<uint32_t>(kc * sizeof(T)),
                               rowBlocks - usedBlocks, static_cast<uint32_t>((cells_ - kc) * sizeof(T)), 0};
        DataCopyPad(outGm[static_cast<uint64_t>(b) * channels_ * cells_ + k0], outT, rows);
        if (item + 1 < firstItem_ + itemNum_) {
            SetFlag<HardEvent::MTE3_V>(mte3vEvent_);
        }
    }

    // Entries j0 .. j0 + cnt - 1 of one interval: keep those whose
    // ranks_bev falls in [lo, lo + span) and add them in order.
    __aicore__ inline void Scan(uint32_t j0, uint32_t cnt, int32_t lo, uint32_t span)
    {
        uint32_t m = (cnt + LANES - 1) / LANES * LANES;
        LocalTensor<int32_t> rb = rbQ.AllocTensor<int32_t>();
        DataCopyExtParams words{1, static_cast<uint32_t>(cnt * sizeof(int32_t)), 0, 0, 0};
        DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
        DataCopyPad(rb, rbGm[j0], words, pad);
        rbQ.EnQue(rb);
        rb = rbQ.DeQue<int32_t>();
        // rank - lo wraps in int32; in float it is exact inside the slice
        // (span < 2^24) and stays outside [0, span) elsewhere.
        Adds(rb, rb, -lo, m);
        Cast(rankF, rb, RoundMode::CAST_NONE, m);
        Compares(m0, rankF, 0.0f, CMPMODE::GE, m);
        Compares(m1, rankF, static_cast<float>(span), CMPMODE::LT, m);
        Compares(m2, idxF, static_cast<float>(cnt), CMPMODE::LT, m);
        LocalTensor<uint16_t> w0 = m0.ReinterpretCast<uint16_t>();
        And(w0, w0, m1.ReinterpretCast<uint16_t>(), m / 16);
        And(w0, w0, m2.ReinterpretCast<uint16_t>(), m / 16);
        uint64_t kept = 0;
        uint64_t keptEntries = 0;
        // Counter mode: one repeat of m elements, the pattern bits read on
        // continuously.
        GatherMaskParams gp(1, 1, 8, 0);
        GatherMask(offs, rb, m0.ReinterpretCast<uint32_t>(), true, m, gp, kept);
        GatherMask(entries, idx, m0.ReinterpretCast<uint32_t>(), true, m, gp, keptEntries);
        rbQ.FreeTensor(rb);
        SetFlag<HardEvent::V_S>(vsEvent_);
        WaitFlag<HardEvent::V_S>(vsEvent_);
        for (uint32_t k = 0; k < static_cast<uint32_t>(kept); ++k) {
            uint32_t at = static_cast<uint32_t>(offs.GetValue(k));
            uint32_t j = j0 + static_cast<uint32_t>(entries.GetValue(k));
            int32_t rd = rdGm.GetValue(j);
            int32_t rf = rfGm.GetValue(j);
            if (rd < 0 || static_cast<uint32_t>(rd) >= depthNum_ || rf < 0 || static_cast<uint32_t>(rf) >= featNum_) {
                continue;
            }
            float prod = static_cast<float>(depthGm.GetValue(rd)) * static_cast<float>(featGm.GetValue(rf));
            T rounded = static_cast<T>(prod);
            float sum = static_cast<float>(acc.GetValue(at)) + static_cast<float>(rounded);
            acc.SetValue(at, static_cast<T>(sum));
        }
        SetFlag<HardEvent::S_V>(svEvent_);
        WaitFlag<HardEvent::S_V>(svEvent_);
    }

private:
    TQue<QuePosition::VECIN, QUE_DEPTH> rbQ;
    TBuf<QuePosition::VECCALC> accBuf;
    TBuf<QuePosition::VECCALC> outBuf;
    TBuf<QuePosition::VECCALC> tableBuf;
    TBuf<QuePosition::VECCALC> rankFBuf;
    TBuf<QuePosition::VECCALC> idxBuf;
    TBuf<QuePosition::VECCALC> idxFBuf;
    TBuf<QuePosition::VECCALC> offBuf;
    TBuf<QuePosition::VECCALC> entryBuf;
    TBuf<QuePosition::VECCALC> maskBuf;
    TBuf<QuePosition::VECCALC> intervalBuf;
    GlobalTensor<T> depthGm;
    GlobalTensor<T> featGm;
    GlobalTensor<int32_t> rdGm;
    GlobalTensor<int32_t> rfGm;
    GlobalTensor<int32_t> rbGm;
    GlobalTensor<int32_t> startGm;
    GlobalTensor<int32_t> lenGm;
    GlobalTensor<T> outGm;
    LocalTensor<T> acc;
    LocalTensor<T> outT;
    LocalTensor<int32_t> table;
    LocalTensor<float> rankF;
    LocalTensor<int32_t> idx;
    LocalTensor<float> idxF;
    LocalTensor<int32_t> offs;
    LocalTensor<int32_t> entries;
    LocalTensor<uint8_t> m0;
    LocalTensor<uint8_t> m1;
    LocalTensor<uint8_t> m2;
    LocalTensor<int32_t> startsL;
    LocalTensor<int32_t> lensL;
    uint32_t depthNum_ = 0;
    uint32_t featNum_ = 0;
    uint32_t points_ = 0;
    uint32_t intervals_ = 0;
    uint32_t channels_ = 0;
    uint32_t cells_ = 0;
    uint32_t sliceCells_ = 0;
    uint32_t itemsPerBatch_ = 1;
    uint32_t chunkEntries_ = 0;
    uint32_t chunkIntervals_ = 0;
    uint32_t rowPitch_ = 0;
    uint32_t firstItem_ = 0;
    uint32_t itemNum_ = 0;
    int32_t vsEvent_ = 0;
    int32_t svEvent_ = 0;
    int32_t mte2sEvent_ = 0;
    int32_t smte2Event_ = 0;
    int32_t vmte3Event_ = 0;
    int32_t mte3vEvent_ = 0;
};

extern "C" __global__ __aicore__ void bev_pool(GM_ADDR depth, GM_ADDR feat, GM_ADDR ranksDepth, GM_ADDR ranksFeat,
                                               GM_ADDR ranksBev, GM_ADDR starts, GM_ADDR lengths, GM_ADDR out,
                                               GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelBevPool<half> op;
        op.Init(depth, feat, ranksDepth, ranksFeat, ranksBev, starts, lengths, out, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelBevPool<float> op;
        op.Init(depth, feat, ranksDepth, ranksFeat, ranksBev, starts, lengths, out, tilingData, &pipe);
        op.Process();
    }
}
