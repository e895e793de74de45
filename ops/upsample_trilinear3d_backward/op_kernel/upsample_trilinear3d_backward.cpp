// UpsampleTrilinear3dBackward kernel (float16, float32, bfloat16; float32
// math).
//
// grad_input X[p] = sum over od of wD(d, od) * A_H * grad_output Y[p, od] *
// A_W^T, where the A hold the linear weights of torch's forward (float32
// formulas). A work item is (plane, chunk of X rows, range of X depths):
//   1. D, scatter form: the grad_output rows the chunk draws on are copied
//      in, one depth slice at a time, each slice once, with one
//      DataCopyPad (rows padded to 32 B; the next slice's copy is issued
//      before this one's vector work, so MTE2 runs ahead) and added with
//      its two depth weights into the float32 accumulators of the X depths
//      it reaches (two slots, d % 2: at most two depths are open at once);
//   2. when no later slice reaches X depth d, its accumulator is summed
//      along H with the runs planned on the host (Muls, Axpy with scalar
//      weights, one instruction per run of rows with a constant source
//      step), then
//   3. along W: for each of the `terms` source offsets t, one Gather per
//      block of rows picks column base(w) + t of every row (byte-offset
//      tables built once per core) and a Mul / MulAddDst with the
//      per-column weight row (repeat stride 0) accumulates the sum;
//   4. cast and one DataCopyPad out.
// The per-column weights and offsets are computed once per core with vector
// ops from the torch formulas, so they equal the golden's float32 values.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t FLOAT_PER_REPEAT = 64;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t SETUP_ARRAYS = 10;
// H row plans (see BuildRowPlans): at most this many chunks, rows per
// chunk, source rows per X row and vector runs per core; beyond them the
// rows are summed one by one.
constexpr uint32_t PLAN_CHUNKS = 16;
constexpr uint32_t PLAN_ROWS = 256;
constexpr uint32_t PLAN_TERMS = 8;
constexpr uint32_t PLAN_RUNS = 512;
constexpr uint32_t MAX_REPEAT = 255;

template <typename T>
class KernelSeparableMap {
    static constexpr bool IS_FLOAT = sizeof(T) == 4;

public:
    __aicore__ inline KernelSeparableMap() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR y, GM_ADDR x, const TilingData& t, TPipe* pipe)
    {
        planes = t.planes;
        for (uint32_t a = 0; a < 3; a++) {
            src[a] = t.src[a];
            dst[a] = t.dst[a];
            terms[a] = t.terms[a];
            ratio[a] = t.ratio[a];
            baseOff[a] = t.baseOff[a];
            baseScale[a] = t.baseScale[a];
            baseAdd[a] = t.baseAdd[a];
            baseShift[a] = t.baseShift[a];
        }
        alignCorners = t.alignCorners != 0;
        ys = t.srcStride;
        ws = t.dstStride;
        srcRowsCap = t.srcRowsCap;
        tableRows = t.tableRows;
        tileRows = t.tileRows;
        chunkNum = t.chunkNum;
        baseRows = t.baseRows;
        extraRows = t.extraRows;
        dParts = t.dParts;
        if (t.planRuns > 0 && chunkNum <= PLAN_CHUNKS) {
            // The host planned the H sums: read its runs where they are.
            for (uint32_t c = 0; c < chunkNum; c++) {
                ChunkRows(c, chunkRowsOf[c], chunkH0Of[c], chunkLoOf[c], chunkSrcRowsOf[c]);
                planStart[c] = t.planStart[c];
            }
            planStart[chunkNum] = t.planStart[chunkNum];
            hostRows = t.runRows;
            hostSrc = t.runSrc;
            hostW = t.runW;
            planned = true;
        }
        baseD = t.baseD;
        extraD = t.extraD;
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < t.tailCoreNum) {
            itemCount = t.blockItems + 1;
            itemStart = blockIdx * itemCount;
        } else {
            itemCount = t.blockItems;
            itemStart = t.tailCoreNum * (t.blockItems + 1) + (blockIdx - t.tailCoreNum) * t.blockItems;
        }
        yGm.SetGlobalBuffer((__gm__ T*)y, static_cast<uint64_t>(planes) * src[0] * src[1] * src[2]);
        xGm.SetGlobalBuffer((__gm__ T*)x, static_cast<uint64_t>(planes) * dst[0] * dst[1] * dst[2]);
        pipe->InitBuffer(inQueue, t.bufferNum, srcRowsCap * ys * sizeof(T));
        pipe->InitBuffer(ycombBuf, 2 * srcRowsCap * ys * sizeof(float));
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(cvtBuf, srcRowsCap * ys * sizeof(float));
            pipe->InitBuffer(xfBuf, tileRows * ws * sizeof(float));
        }
        pipe->InitBuffer(vBuf, tileRows * ys * sizeof(float));
        pipe->InitBuffer(gatBuf, tileRows * ws * sizeof(float));
        pipe->InitBuffer(tableBuf, terms[2] * tableRows * ws * sizeof(uint32_t));
        pipe->InitBuffer(weightBuf, terms[2] * ws * sizeof(float));
        pipe->InitBuffer(outQueue, t.bufferNum, tileRows * ws * sizeof(T));
        pipe->InitBuffer(setupBuf, SETUP_ARRAYS * ws * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        if (itemCount == 0) {
            return;
        }
        BuildColumnTables();
        if (!planned) {
            BuildRowPlans();
        }
        // One-ahead pipeline over the (item, od) loads: the next load is
        // issued before the current one's vector work, so MTE2 runs ahead.
        Load cur;
        First(itemStart, cur);
        Issue(cur);
        while (cur.item < itemStart + itemCount) {
            Load nxt = cur;
            Next(nxt);
            if (nxt.item < itemStart + itemCount) {
                Issue(nxt);
            }
            Consume(cur, nxt.item != cur.item);
            cur = nxt;
        }
    }

private:
    // One grad_output depth slice (od) of one work item (od < 0: the item
    // draws on none). An item is (plane p, chunk of X rows, X depths [dA, dB)).
    struct Load {
        uint32_t item;
        uint32_t p, chunk, h0, rows, lo, srcRows;
        uint32_t dA, dB;
        int32_t od, odEnd;
    };

    // The X rows [h0, h0 + rows) of chunk `chunk` and the Y rows [lo, lo +
    // srcRows) they draw on (the same for every plane and depth).
    __aicore__ inline void ChunkRows(uint32_t chunk, uint32_t& rows, uint32_t& h0, uint32_t& lo, uint32_t& srcRows)
    {
        rows = baseRows + (chunk < extraRows ? 1 : 0);
        h0 = chunk * baseRows + (chunk < extraRows ? chunk : extraRows);
        int32_t first = Base(1, h0);
        first = first < 0 ? 0 : first;
        int32_t hi = Base(1, h0 + rows - 1) + static_cast<int32_t>(terms[1]);
        hi = hi > static_cast<int32_t>(src[1]) ? static_cast<int32_t>(src[1]) : hi;
        hi = hi <= first ? first + 1 : hi;
        lo = static_cast<uint32_t>(first);
        srcRows = static_cast<uint32_t>(hi - first);
    }

    // The H sums of every chunk, planned once per core as runs of vector
    // instructions: the j-th source of X rows r0, r0 + dr, ... (n rows) is
    // Y row s0, s0 + ds, ... of the chunk's tile with one weight w, so one
    // Muls (j = 0) or Axpy (j > 0) with repeat n and strides dr, ds rows
    // covers them all (e.g. an integer factor k: k runs per term for the
    // whole chunk). This takes the per-row weight arithmetic off the scalar
    // unit: it runs once per core, not once per (plane, depth, row).
    __aicore__ inline void BuildRowPlans()
    {
        planned = false;
        if (chunkNum > PLAN_CHUNKS || ys / FLOAT_PER_BLOCK > MAX_REPEAT) {
            return;
        }
        int32_t srcOf[PLAN_ROWS][PLAN_TERMS];
        float wOf[PLAN_ROWS][PLAN_TERMS];
        uint32_t countOf[PLAN_ROWS];
        uint32_t n = 0;
        for (uint32_t c = 0; c < chunkNum; c++) {
            uint32_t rows, h0, lo, srcRows;
            ChunkRows(c, rows, h0, lo, srcRows);
            if (rows > PLAN_ROWS) {
                return;
            }
            chunkRowsOf[c] = rows;
            chunkH0Of[c] = h0;
            chunkLoOf[c] = lo;
            chunkSrcRowsOf[c] = srcRows;
            for (uint32_t r = 0; r < rows; r++) {
                countOf[r] = 0;
            }
            // Scatter form: each source row of the tile names its two X
            // rows (in increasing source order, as the gather form sums).
            uint32_t maxCount = 0;
            for (uint32_t s = 0; s < srcRows; s++) {
                int32_t i0, i1;
                float l0, l1;
                Taps(1, static_cast<int32_t>(lo + s), i0, i1, l0, l1);
                if (i1 == i0) {
                    l0 = l0 + l1;
                    l1 = 0.0f;
                }
                int32_t is[2] = {i0, i1};
                float wsum[2] = {l0, l1};
                for (uint32_t k = 0; k < 2; k++) {
                    int32_t r = is[k] - static_cast<int32_t>(h0);
                    if (wsum[k] == 0.0f || r < 0 || r >= static_cast<int32_t>(rows)) {
                        continue;
                    }
                    uint32_t m = countOf[r];
                    if (m == PLAN_TERMS) {
                        return;
                    }
                    srcOf[r][m] = static_cast<int32_t>(s);
                    wOf[r][m] = wsum[k];
                    countOf[r] = m + 1;
                    maxCount = m + 1 > maxCount ? m + 1 : maxCount;
                }
            }
            planStart[c] = n;
            // Rows without a source are zero.
            for (uint32_t r = 0; r < rows; r++) {
                if (countOf[r] == 0) {
                    if (n == PLAN_RUNS) {
                        return;
                    }
                    plan[n++] = RowRun{r, 1, 1, 0, 0, 0.0f, RUN_ZERO};
                }
            }
            // Runs of consecutive rows whose j-th source has one weight and
            // steps by a constant number of source rows.
            for (uint32_t j = 0; j < maxCount; j++) {
                uint32_t r0 = 0;
                while (r0 < rows) {
                    if (countOf[r0] <= j) {
                        r0++;
                        continue;
                    }
                    uint32_t len = 1;
                    int32_t ds = 0;
                    if (r0 + 1 < rows && countOf[r0 + 1] > j && wOf[r0 + 1][j] == wOf[r0][j]) {
                        ds = srcOf[r0 + 1][j] - srcOf[r0][j];
                        if (ds >= 0 && static_cast<uint32_t>(ds) * ys / FLOAT_PER_BLOCK <= MAX_REPEAT) {
                            len = 2;
                            while (len < MAX_REPEAT && r0 + len < rows && countOf[r0 + len] > j &&
                                   wOf[r0 + len][j] == wOf[r0][j] &&
                                   srcOf[r0 + len][j] == srcOf[r0][j] + static_cast<int32_t>(len) * ds) {
                                len++;
                            }
                        } else {
                            ds = 0;
                        }
                    }
                    if (n == PLAN_RUNS) {
                        return;
                    }
                    plan[n++] = RowRun{r0, 1, len, srcOf[r0][j], ds, wOf[r0][j], j == 0 ? RUN_FIRST : RUN_ADD};
                    r0 += len;
                }
            }
        }
        planStart[chunkNum] = n;
        planned = true;
    }

    // The two X depths grad_output depth od adds into and their weights
    // (torch's float32 formulas; i1 = i0 at the last index).
    __aicore__ inline void Taps(uint32_t a, int32_t od, int32_t& i0, int32_t& i1, float& l0, float& l1)
    {
        int32_t dstLen = static_cast<int32_t>(dst[a]);
        float s = alignCorners ? ratio[a] * static_cast<float>(od) : ratio[a] * (static_cast<float>(od) + 0.5f) - 0.5f;
        s = s < 0.0f ? 0.0f : s;
        i0 = static_cast<int32_t>(s);
        i0 = i0 < dstLen - 1 ? i0 : dstLen - 1;
        i1 = i0 + 1 < dstLen - 1 ? i0 + 1 : dstLen - 1;
        l1 = s - static_cast<float>(i0);
        l0 = 1.0f - l1;
    }

    // The first load of `item` (item past the core's range: l.item marks the end).
    __aicore__ inline void First(uint32_t item, Load& l)
    {
        l.item = item;
        if (item >= itemStart + itemCount) {
            return;
        }
        uint32_t part = item % dParts;
        uint32_t rest = item / dParts;
        uint32_t chunk = rest % chunkNum;
        l.p = rest / chunkNum;
        l.chunk = chunk;
        if (planned) {
            l.rows = chunkRowsOf[chunk];
            l.h0 = chunkH0Of[chunk];
            l.lo = chunkLoOf[chunk];
            l.srcRows = chunkSrcRowsOf[chunk];
        } else {
            ChunkRows(chunk, l.rows, l.h0, l.lo, l.srcRows);
        }
        l.dA = part * baseD + (part < extraD ? part : extraD);
        l.dB = l.dA + baseD + (part < extraD ? 1 : 0);
        // The depth slices that reach [dA, dB): from the gather base of dA
        // to that of dB - 1 plus its terms, trimmed to the exact taps.
        int32_t lo = Base(0, l.dA);
        lo = lo < 0 ? 0 : lo;
        int32_t hi = Base(0, l.dB - 1) + static_cast<int32_t>(terms[0]);
        hi = hi > static_cast<int32_t>(src[0]) ? static_cast<int32_t>(src[0]) : hi;
        int32_t i0, i1;
        float l0, l1;
        while (lo < hi) {
            Taps(0, lo, i0, i1, l0, l1);
            if (i1 >= static_cast<int32_t>(l.dA)) {
                break;
            }
            lo++;
        }
        while (hi > lo) {
            Taps(0, hi - 1, i0, i1, l0, l1);
            if (i0 < static_cast<int32_t>(l.dB)) {
                break;
            }
            hi--;
        }
        l.od = lo < hi ? lo : -1;
        l.odEnd = hi;
    }

    // The load after `l`: the next depth slice of the item, else the next item.
    __aicore__ inline void Next(Load& l)
    {
        if (l.od >= 0 && l.od + 1 < l.odEnd) {
            l.od++;
            return;
        }
        First(l.item + 1, l);
    }

    __aicore__ inline void Issue(const Load& l)
    {
        if (l.od < 0) {
            return;
        }
        LocalTensor<T> in = inQueue.AllocTensor<T>();
        uint32_t gap = (ys * sizeof(T) - (src[2] * sizeof(T) + 31) / 32 * 32) / 32;
        DataCopyExtParams cp{static_cast<uint16_t>(l.srcRows), static_cast<uint32_t>(src[2] * sizeof(T)), 0, gap, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        uint64_t off = ((static_cast<uint64_t>(l.p) * src[0] + l.od) * src[1] + l.lo) * src[2];
        DataCopyPad(in, yGm[off], cp, pad);
        inQueue.EnQue(in);
    }

    // Adds the loaded slice, weighted, into the accumulators of the X
    // depths it reaches (slot d % 2: at most two depths are open at a
    // time), then finishes every depth no later slice reaches.
    __aicore__ inline void Consume(const Load& l, bool lastOfItem)
    {
        if (l.od < 0) {
            for (uint32_t d = l.dA; d < l.dB; d++) {
                Finish(l, d, false);
            }
            return;
        }
        if (l.item != openItem) {
            openItem = l.item;
            nextD = l.dA;
            held[0] = -1;
            held[1] = -1;
        }
        LocalTensor<T> in = inQueue.DeQue<T>();
        uint32_t count = l.srcRows * ys;
        int32_t d0, d1;
        float w0, w1;
        Taps(0, l.od, d0, d1, w0, w1);
        if (d1 == d0) {
            w0 = w0 + w1;
            w1 = 0.0f;
        }
        LocalTensor<float> srcF;
        if constexpr (IS_FLOAT) {
            srcF = in;
        } else {
            srcF = cvtBuf.Get<float>();
            Cast(srcF, in, RoundMode::CAST_NONE, count);
        }
        int32_t ds[2] = {d0, d1};
        float ws2[2] = {w0, w1};
        for (uint32_t k = 0; k < 2; k++) {
            int32_t d = ds[k];
            if (ws2[k] == 0.0f || d < static_cast<int32_t>(l.dA) || d >= static_cast<int32_t>(l.dB)) {
                continue;
            }
            uint32_t slot = static_cast<uint32_t>(d) & 1u;
            LocalTensor<float> acc = ycombBuf.Get<float>()[slot * srcRowsCap * ys];
            if (held[slot] != d) {
                Muls(acc, srcF, ws2[k], count);
                held[slot] = d;
            } else {
                Axpy(acc, srcF, ws2[k], count);
            }
        }
        inQueue.FreeTensor(in);
        // Depths below the next slice's first tap are complete.
        uint32_t upTo = l.dB;
        if (!lastOfItem) {
            int32_t n0, n1;
            float m0, m1;
            Taps(0, l.od + 1, n0, n1, m0, m1);
            upTo = static_cast<uint32_t>(n0) < l.dB ? static_cast<uint32_t>(n0) : l.dB;
        }
        while (nextD < upTo) {
            Finish(l, nextD, held[nextD & 1u] == static_cast<int32_t>(nextD));
            nextD++;
        }
    }

    // H and W sums of X depth d from its accumulator (or zeros), stored.
    __aicore__ inline void Finish(const Load& l, uint32_t d, bool any)
    {
        if (any) {
            SumRows(l, ycombBuf.Get<float>()[(d & 1u) * srcRowsCap * ys]);
            SumColumnsAndStore(l, d, false);
        } else {
            SumColumnsAndStore(l, d, true);
        }
    }

    // First source index that output index i of axis a may draw on.
    __aicore__ inline int32_t Base(uint32_t a, uint32_t i)
    {
        float v = (static_cast<float>(i) + baseOff[a]) * baseScale[a];
        v = v + baseAdd[a];
        int32_t f = static_cast<int32_t>(v);
        if (static_cast<float>(f) > v) {
            f--;
        }
        return f + baseShift[a];
    }

    // Weight of source index o in output index i on axis a (torch float math).
    __aicore__ inline float Weight(uint32_t a, int32_t i, int32_t o)
    {
        int32_t dstLen = static_cast<int32_t>(dst[a]);
        float s = alignCorners ? ratio[a] * static_cast<float>(o) : ratio[a] * (static_cast<float>(o) + 0.5f) - 0.5f;
        s = s < 0.0f ? 0.0f : s;
        int32_t i0 = static_cast<int32_t>(s);
        i0 = i0 < dstLen - 1 ? i0 : dstLen - 1;
        int32_t i1 = i0 + 1 < dstLen - 1 ? i0 + 1 : dstLen - 1;
        float l1 = s - static_cast<float>(i0);
        float l0 = 1.0f - l1;
        return (i0 == i ? l0 : 0.0f) + (i1 == i ? l1 : 0.0f);
    }

    __aicore__ inline void Floor(const LocalTensor<float>& v, const LocalTensor<int32_t>& scratch, uint32_t n)
    {
        Cast(scratch, v, RoundMode::CAST_FLOOR, n);
        Cast(v, scratch, RoundMode::CAST_NONE, n);
    }

    // 1 where v >= 1, 0 where v <= 0 (v integral): min(max(v, 0), 1).
    __aicore__ inline void Step(const LocalTensor<float>& v, uint32_t n)
    {
        Maxs(v, v, 0.0f, n);
        Mins(v, v, 1.0f, n);
    }

    // Per column w and offset t: weights[t][w] = weight of source column
    // base(w) + t (0 outside the source), tables[t][r][w] = byte offset of
    // that column in source row r of the float Y tile.
    __aicore__ inline void BuildColumnTables()
    {
        LocalTensor<float> setup = setupBuf.Get<float>();
        uint32_t n = ws;
        LocalTensor<float> idx = setup;
        LocalTensor<float> base = setup[n];
        LocalTensor<float> o = setup[2 * n];
        LocalTensor<float> valid = setup[3 * n];
        LocalTensor<float> t1 = setup[4 * n];
        LocalTensor<float> t2 = setup[5 * n];
        LocalTensor<float> t3 = setup[6 * n];
        LocalTensor<float> t4 = setup[7 * n];
        LocalTensor<int32_t> scratch = setup[8 * n].ReinterpretCast<int32_t>();
        float srcLen = static_cast<float>(src[2]);
        float dstLen = static_cast<float>(dst[2]);
        CreateVecIndex(idx, 0.0f, n);
        Adds(base, idx, baseOff[2], n);
        Muls(base, base, baseScale[2], n);
        Adds(base, base, baseAdd[2], n);
        Floor(base, scratch, n);
        Adds(base, base, static_cast<float>(baseShift[2]), n);
        LocalTensor<float> weights = weightBuf.Get<float>();
        LocalTensor<int32_t> tables = tableBuf.Get<int32_t>();
        for (uint32_t t = 0; t < terms[2]; t++) {
            Adds(o, base, static_cast<float>(t), n);
            // valid = [o >= 0] * [o <= src - 1]
            Adds(valid, o, 1.0f, n);
            Step(valid, n);
            Muls(t1, o, -1.0f, n);
            Adds(t1, t1, srcLen, n);
            Step(t1, n);
            Mul(valid, valid, t1, n);
            Maxs(o, o, 0.0f, n);
            Mins(o, o, srcLen - 1.0f, n);
            LocalTensor<float> w = weights[t * n];
            if (alignCorners) {
                Muls(t1, o, ratio[2], n);
            } else {
                Adds(t1, o, 0.5f, n);
                Muls(t1, t1, ratio[2], n);
                Adds(t1, t1, -0.5f, n);
            }
            Maxs(t1, t1, 0.0f, n);  // t1 = source coordinate
            Adds(t2, t1, 0.0f, n);
            Floor(t2, scratch, n);
            Mins(t2, t2, dstLen - 1.0f, n);  // t2 = i0
            Adds(t3, t2, 1.0f, n);
            Mins(t3, t3, dstLen - 1.0f, n);  // t3 = i1
            Sub(t1, t1, t2, n);              // t1 = lambda1
            Sub(t4, t2, idx, n);             // t4 = [i0 == w]
            Abs(t4, t4, n);
            Mins(t4, t4, 1.0f, n);
            Muls(t4, t4, -1.0f, n);
            Adds(t4, t4, 1.0f, n);
            Muls(t2, t1, -1.0f, n);  // t2 = lambda0
            Adds(t2, t2, 1.0f, n);
            Mul(t4, t4, t2, n);
            Sub(t2, t3, idx, n);  // t2 = [i1 == w]
            Abs(t2, t2, n);
            Mins(t2, t2, 1.0f, n);
            Muls(t2, t2, -1.0f, n);
            Adds(t2, t2, 1.0f, n);
            Mul(t2, t2, t1, n);
            Add(w, t4, t2, n);
            Mul(w, w, valid, n);
            // Row 0 of the table, then doubling: row r = row 0 + r * ys * 4.
            LocalTensor<int32_t> table = tables[t * tableRows * n];
            Muls(t1, o, 4.0f, n);
            Cast(table, t1, RoundMode::CAST_RINT, n);
            for (uint32_t done = 1; done < tableRows; done *= 2) {
                uint32_t m = tableRows - done < done ? tableRows - done : done;
                Adds(table[done * n], table, static_cast<int32_t>(done * ys * sizeof(float)), m * n);
            }
        }
    }

    // Run i of the plan: the host's (packed), else the kernel's.
    __aicore__ inline auto RunAt(uint32_t i)
    {
        if (hostRows == nullptr) {
            return plan[i];
        }
        uint32_t rows = hostRows[i];
        uint32_t src = hostSrc[i];
        return RowRun{rows & 0xffu, 1, (rows >> 8) & 0xffu, static_cast<int32_t>(src & 0xffffu),
                      static_cast<int32_t>(src >> 16), hostW[i], static_cast<uint8_t>(rows >> 16)};
    }

    // H: vrow[r] = sum over t of wH(h0 + r, base + t) * source row (base + t).
    __aicore__ inline void SumRows(const Load& l, const LocalTensor<float>& source)
    {
        LocalTensor<float> v = vBuf.Get<float>();
        if (planned) {
            uint8_t blocks = static_cast<uint8_t>(ys / FLOAT_PER_BLOCK);
            for (uint32_t i = planStart[l.chunk]; i < planStart[l.chunk + 1]; i++) {
                RowRun u = RunAt(i);
                LocalTensor<float> dstRow = v[u.r0 * ys];
                if (u.kind == RUN_ZERO) {
                    Duplicate(dstRow, 0.0f, ys);
                    continue;
                }
                LocalTensor<float> srcRow = source[static_cast<uint32_t>(u.s0) * ys];
                if (u.n <= (ys + FLOAT_PER_REPEAT - 1) / FLOAT_PER_REPEAT) {
                    // Fewer rows than 64-lane column blocks: one instruction per row.
                    for (uint32_t m = 0; m < u.n; m++) {
                        LocalTensor<float> d1 = v[(u.r0 + m * u.dr) * ys];
                        LocalTensor<float> s1 = source[(static_cast<uint32_t>(u.s0) + m * static_cast<uint32_t>(u.ds)) * ys];
                        if (u.kind == RUN_FIRST) {
                            Muls(d1, s1, u.w, ys);
                        } else {
                            Axpy(d1, s1, u.w, ys);
                        }
                    }
                    continue;
                }
                UnaryRepeatParams rp(1, 1, static_cast<uint8_t>(u.dr * blocks),
                                     static_cast<uint8_t>(static_cast<uint32_t>(u.ds) * blocks));
                for (uint32_t c0 = 0; c0 < ys; c0 += FLOAT_PER_REPEAT) {
                    uint64_t lanes = ys - c0 < FLOAT_PER_REPEAT ? ys - c0 : FLOAT_PER_REPEAT;
                    if (u.kind == RUN_FIRST) {
                        Muls(dstRow[c0], srcRow[c0], u.w, lanes, static_cast<uint8_t>(u.n), rp);
                    } else {
                        Axpy(dstRow[c0], srcRow[c0], u.w, lanes, static_cast<uint8_t>(u.n), rp);
                    }
                }
            }
            return;
        }
        for (uint32_t r = 0; r < l.rows; r++) {
            uint32_t h = l.h0 + r;
            LocalTensor<float> vrow = v[r * ys];
            bool first = true;
            int32_t base = Base(1, h);
            for (uint32_t t = 0; t < terms[1]; t++) {
                int32_t oh = base + static_cast<int32_t>(t);
                if (oh < static_cast<int32_t>(l.lo) || oh >= static_cast<int32_t>(l.lo + l.srcRows)) {
                    continue;
                }
                float w = Weight(1, static_cast<int32_t>(h), oh);
                if (w == 0.0f) {
                    continue;
                }
                LocalTensor<float> srow = source[(static_cast<uint32_t>(oh) - l.lo) * ys];
                if (first) {
                    Muls(vrow, srow, w, ys);
                } else {
                    Axpy(vrow, srow, w, ys);
                }
                first = false;
            }
            if (first) {
                Duplicate(vrow, 0.0f, ys);
            }
        }
    }

    // W: x[r][w] = sum over t of weights[t][w] * v[r][base(w) + t]; cast
    // and store the chunk.
    __aicore__ inline void SumColumnsAndStore(const Load& l, uint32_t d, bool zero)
    {
        LocalTensor<float> v = vBuf.Get<float>();
        LocalTensor<float> gat = gatBuf.Get<float>();
        LocalTensor<uint32_t> tables = tableBuf.Get<uint32_t>();
        LocalTensor<float> weights = weightBuf.Get<float>();
        LocalTensor<T> out = outQueue.AllocTensor<T>();
        LocalTensor<float> xf;
        if constexpr (IS_FLOAT) {
            xf = out;
        } else {
            xf = xfBuf.Get<float>();
        }
        uint8_t rep = static_cast<uint8_t>(ws / FLOAT_PER_BLOCK);
        BinaryRepeatParams rp(1, 1, 1, rep, rep, 0);
        if (zero) {
            Duplicate(xf, 0.0f, l.rows * ws);
        }
        for (uint32_t t = 0; t < terms[2] && !zero; t++) {
            for (uint32_t rb = 0; rb < l.rows; rb += tableRows) {
                uint32_t nr = l.rows - rb < tableRows ? l.rows - rb : tableRows;
                Gather(gat[rb * ws], v, tables[t * tableRows * ws], rb * ys * sizeof(float), nr * ws);
                for (uint32_t c0 = 0; c0 < ws; c0 += FLOAT_PER_REPEAT) {
                    uint64_t lanes = ws - c0 < FLOAT_PER_REPEAT ? ws - c0 : FLOAT_PER_REPEAT;
                    if (t == 0) {
                        Mul(xf[rb * ws + c0], gat[rb * ws + c0], weights[c0], lanes, static_cast<uint8_t>(nr), rp);
                    } else {
                        MulAddDst(xf[rb * ws + c0], gat[rb * ws + c0], weights[t * ws + c0], lanes,
                                  static_cast<uint8_t>(nr), rp);
                    }
                }
            }
        }
        if constexpr (!IS_FLOAT) {
            Cast(out, xf, RoundMode::CAST_RINT, l.rows * ws);
        }
        outQueue.EnQue(out);
        out = outQueue.DeQue<T>();
        uint32_t gap = (ws * sizeof(T) - (dst[2] * sizeof(T) + 31) / 32 * 32) / 32;
        DataCopyExtParams cp{static_cast<uint16_t>(l.rows), static_cast<uint32_t>(dst[2] * sizeof(T)), gap, 0, 0};
        DataCopyPad(xGm[((static_cast<uint64_t>(l.p) * dst[0] + d) * dst[1] + l.h0) * dst[2]], out, cp);
        outQueue.FreeTensor(out);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> ycombBuf;
    TBuf<TPosition::VECCALC> cvtBuf;
    TBuf<TPosition::VECCALC> gatBuf;
    TBuf<TPosition::VECCALC> vBuf;
    TBuf<TPosition::VECCALC> tableBuf;
    TBuf<TPosition::VECCALC> weightBuf;
    TBuf<TPosition::VECCALC> xfBuf;
    TBuf<TPosition::VECCALC> setupBuf;
    GlobalTensor<T> yGm;
    GlobalTensor<T> xGm;
    uint32_t planes = 0;
    uint32_t src[3] = {}, dst[3] = {}, terms[3] = {};
    float ratio[3] = {}, baseOff[3] = {}, baseScale[3] = {}, baseAdd[3] = {};
    int32_t baseShift[3] = {};
    bool alignCorners = false;
    uint32_t ys = 0, ws = 0, srcRowsCap = 0, tableRows = 0, tileRows = 0, chunkNum = 0, baseRows = 0,
             extraRows = 0;
    uint32_t itemStart = 0, itemCount = 0;
    // H row plans (BuildRowPlans): runs of chunk c are plan[planStart[c]..planStart[c + 1]).
    static constexpr uint8_t RUN_ZERO = 0, RUN_FIRST = 1, RUN_ADD = 2;
    struct RowRun {
        uint32_t r0, dr, n;
        int32_t s0, ds;
        float w;
        uint8_t kind;
    };
    bool planned = false;
    const uint32_t* hostRows = nullptr;
    const uint32_t* hostSrc = nullptr;
    const float* hostW = nullptr;
    uint32_t planStart[PLAN_CHUNKS + 1] = {};
    uint32_t chunkRowsOf[PLAN_CHUNKS] = {}, chunkH0Of[PLAN_CHUNKS] = {}, chunkLoOf[PLAN_CHUNKS] = {},
             chunkSrcRowsOf[PLAN_CHUNKS] = {};
    uint32_t dParts = 1, baseD = 0, extraD = 0;
    // The open X depths of the item being consumed: accumulator slot k
    // holds depth held[k] (-1: none); depths below nextD are stored.
    uint32_t openItem = 0xffffffffu;
    uint32_t nextD = 0;
    int32_t held[2] = {-1, -1};
    RowRun plan[PLAN_RUNS];
};

extern "C" __global__ __aicore__ void upsample_trilinear3d_backward(GM_ADDR gradOutput, GM_ADDR gradInput,
                                                               GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelSeparableMap<half> op;
        op.Init(gradOutput, gradInput, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelSeparableMap<float> op;
        op.Init(gradOutput, gradInput, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelSeparableMap<bfloat16_t> op;
        op.Init(gradOutput, gradInput, tilingData, &pipe);
        op.Process();
    }
}
