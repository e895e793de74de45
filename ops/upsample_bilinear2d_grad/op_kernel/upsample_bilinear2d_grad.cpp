// UpsampleBilinear2dGrad kernel (float16, float32, bfloat16; float32 math).
//
// grad_input X = A_H * grad_output Y * A_W^T per plane, where A holds the
// bilinear weights of torch's forward (float32 formulas). Gather form, one
// chunk of X rows per work item:
//   1. the Y rows the chunk draws on are copied in with one DataCopyPad
//      (rows padded to 32 B) and cast to float32 (a trivial depth axis
//      weighs them by 1); the copy of the next item is issued before this
//      item's vector work, so MTE2 runs ahead;
//   2. H: each X row is first a weighted sum of `terms` source rows (Muls,
//      Axpy with scalar weights computed on the scalar unit with the same
//      formulas);
//   3. W: for each of the `terms` source offsets t, one Gather per block of
//      rows picks column base(w) + t of every row (byte-offset tables built
//      once per core) and a Mul / MulAddDst with the per-column weight row
//      (repeat stride 0, so one instruction covers all rows) accumulates
//      the weighted sum;
//   4. cast and one DataCopyPad out.
// The per-column weights and offsets are computed once per core with vector
// ops from the torch formulas, so they equal the golden's float32 values.
// Queues are double buffered.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t MODE_BILINEAR = 0;
constexpr uint32_t MODE_ADAPTIVE = 1;
constexpr uint32_t MODE = MODE_BILINEAR;
constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t FLOAT_PER_REPEAT = 64;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t SETUP_ARRAYS = 10;
// H row plans (see BuildRowPlans): at most this many chunks, rows per
// chunk, source rows per X row and vector runs per core; beyond them the
// rows are summed one by one.
constexpr uint32_t PLAN_CHUNKS = 16;
constexpr uint32_t PLAN_ROWS = 256;
constexpr uint32_t PLAN_TERMS = 4;
constexpr uint32_t PLAN_RUNS = 512;
constexpr uint32_t PLAN_MAX_STEP = 8;
constexpr uint32_t PLAN_DEPTHS = 256;
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
        pipe->InitBuffer(ycombBuf, srcRowsCap * ys * sizeof(float));
        pipe->InitBuffer(cvtBuf, srcRowsCap * ys * sizeof(float));
        pipe->InitBuffer(vBuf, tileRows * ys * sizeof(float));
        pipe->InitBuffer(gatBuf, tileRows * ws * sizeof(float));
        pipe->InitBuffer(tableBuf, terms[2] * tableRows * ws * sizeof(uint32_t));
        pipe->InitBuffer(weightBuf, terms[2] * ws * sizeof(float));
        pipe->InitBuffer(xfBuf, tileRows * ws * sizeof(float));
        pipe->InitBuffer(outQueue, t.bufferNum, tileRows * ws * sizeof(T));
        pipe->InitBuffer(setupBuf, SETUP_ARRAYS * ws * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        if (itemCount == 0) {
            return;
        }
        BuildColumnTables();
        BuildRowPlans();
        // One-ahead pipeline over the (item, depth source) loads: the next
        // load is issued before the current item's vector work.
        Load cur;
        cur.item = itemStart;
        cur.term = 0;
        Advance(cur);
        Issue(cur);
        while (cur.item < itemStart + itemCount) {
            Load nxt = cur;
            nxt.term++;
            Advance(nxt);
            if (nxt.item < itemStart + itemCount) {
                Issue(nxt);
            }
            bool last = nxt.item != cur.item;
            if constexpr (IS_FLOAT) {
                if (last && cur.first && cur.od >= 0 && cur.w == 1.0f) {
                    // A single unit-weight source: use the copied rows as they are.
                    LocalTensor<float> in = inQueue.DeQue<float>();
                    SumRows(cur, in);
                    inQueue.FreeTensor(in);
                    SumColumnsAndStore(cur);
                    cur = nxt;
                    continue;
                }
            }
            Consume(cur);
            if (last) {
                SumRows(cur, ycombBuf.Get<float>());
                SumColumnsAndStore(cur);
            }
            cur = nxt;
        }
    }

private:
    // One depth source of one work item (od < 0: the item has none).
    struct Load {
        uint32_t item;
        uint32_t term;
        uint32_t p, d, chunk, h0, rows, lo, srcRows;
        uint32_t copies;  // output depths d, d + 1, ... that get this tile
        int32_t od;
        float w;
        bool first;
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
        // The depth sources of every output depth: (t, od, w) of each
        // valid term, as Advance would find them one by one.
        depthPlanned = false;
        if (dst[0] <= PLAN_DEPTHS && terms[0] <= PLAN_TERMS) {
            for (uint32_t d = 0; d < dst[0]; d++) {
                uint32_t k = 0;
                int32_t base = Base(0, d);
                for (uint32_t t = 0; t < terms[0]; t++) {
                    int32_t od = base + static_cast<int32_t>(t);
                    if (od < 0 || od >= static_cast<int32_t>(src[0])) {
                        continue;
                    }
                    float w = Weight(0, static_cast<int32_t>(d), od);
                    if (w == 0.0f) {
                        continue;
                    }
                    depthT[d][k] = t;
                    depthOd[d][k] = od;
                    depthW[d][k] = w;
                    k++;
                }
                depthCount[d] = k;
                bool same = d > 0 && k == depthCount[d - 1];
                for (uint32_t j = 0; same && j < k; j++) {
                    same = depthT[d][j] == depthT[d - 1][j] && depthOd[d][j] == depthOd[d - 1][j] &&
                           depthW[d][j] == depthW[d - 1][j];
                }
                depthSameAsPrev[d] = same;
            }
            depthPlanned = true;
        }
        planned = false;
        if (chunkNum > PLAN_CHUNKS || terms[1] > PLAN_TERMS || ys / FLOAT_PER_BLOCK > MAX_REPEAT) {
            return;
        }
        int32_t srcOf[PLAN_ROWS][PLAN_TERMS];
        float wOf[PLAN_ROWS][PLAN_TERMS];
        uint32_t countOf[PLAN_ROWS];
        bool taken[PLAN_ROWS];
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
            uint32_t maxCount = 0;
            for (uint32_t r = 0; r < rows; r++) {
                uint32_t h = h0 + r;
                int32_t base = Base(1, h);
                uint32_t k = 0;
                for (uint32_t t = 0; t < terms[1]; t++) {
                    int32_t oh = base + static_cast<int32_t>(t);
                    if (oh < static_cast<int32_t>(lo) || oh >= static_cast<int32_t>(lo + srcRows)) {
                        continue;
                    }
                    float w = Weight(1, static_cast<int32_t>(h), oh);
                    if (w == 0.0f) {
                        continue;
                    }
                    srcOf[r][k] = oh - static_cast<int32_t>(lo);
                    wOf[r][k] = w;
                    k++;
                }
                countOf[r] = k;
                maxCount = k > maxCount ? k : maxCount;
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
            for (uint32_t j = 0; j < maxCount; j++) {
                for (uint32_t r = 0; r < rows; r++) {
                    taken[r] = countOf[r] <= j;
                }
                for (uint32_t r0 = 0; r0 < rows; r0++) {
                    if (taken[r0]) {
                        continue;
                    }
                    // The longest run from r0 over row steps 1..PLAN_MAX_STEP.
                    uint32_t bestN = 1, bestDr = 1;
                    int32_t bestDs = 0;
                    for (uint32_t dr = 1; dr <= PLAN_MAX_STEP && r0 + dr < rows; dr++) {
                        uint32_t r1 = r0 + dr;
                        if (taken[r1] || wOf[r1][j] != wOf[r0][j]) {
                            continue;
                        }
                        int32_t ds = srcOf[r1][j] - srcOf[r0][j];
                        if (ds < 0 || dr * ys / FLOAT_PER_BLOCK > MAX_REPEAT ||
                            static_cast<uint32_t>(ds) * ys / FLOAT_PER_BLOCK > MAX_REPEAT) {
                            continue;
                        }
                        uint32_t len = 2;
                        while (len < MAX_REPEAT && r0 + len * dr < rows) {
                            uint32_t r = r0 + len * dr;
                            if (taken[r] || wOf[r][j] != wOf[r0][j] ||
                                srcOf[r][j] != srcOf[r0][j] + static_cast<int32_t>(len) * ds) {
                                break;
                            }
                            len++;
                        }
                        if (len > bestN) {
                            bestN = len;
                            bestDr = dr;
                            bestDs = ds;
                        }
                        if (r0 + len * dr >= rows) {
                            break;  // the run reaches the chunk's end: no longer one exists
                        }
                    }
                    if (n == PLAN_RUNS) {
                        return;
                    }
                    for (uint32_t m = 0; m < bestN; m++) {
                        taken[r0 + m * bestDr] = true;
                    }
                    plan[n++] = RowRun{r0, bestDr, bestN, srcOf[r0][j], bestDs, wOf[r0][j],
                                       j == 0 ? RUN_FIRST : RUN_ADD};
                }
            }
        }
        planStart[chunkNum] = n;
        planned = true;
    }

    // Moves `l` to the first valid source at or after (l.item, l.term).
    __aicore__ inline void Advance(Load& l)
    {
        while (l.item < itemStart + itemCount) {
            uint32_t chunk = l.item % chunkNum;
            uint32_t rest = l.item / chunkNum;
            l.d = rest % dst[0];
            l.p = rest / dst[0];
            l.chunk = chunk;
            if (planned) {
                l.rows = chunkRowsOf[chunk];
                l.h0 = chunkH0Of[chunk];
                l.lo = chunkLoOf[chunk];
                l.srcRows = chunkSrcRowsOf[chunk];
            } else {
                ChunkRows(chunk, l.rows, l.h0, l.lo, l.srcRows);
            }
            l.copies = 1;
            if (depthPlanned) {
                // Following output depths with the same sources (an
                // integer depth factor) get the same tile: one item
                // computes it and stores it to each of them.
                if (chunkNum == 1) {
                    while (l.item + l.copies < itemStart + itemCount && l.d + l.copies < dst[0] &&
                           depthSameAsPrev[l.d + l.copies]) {
                        l.copies++;
                    }
                }
                // The depth sources of l.d, listed once per core.
                uint32_t count = depthCount[l.d];
                for (uint32_t k = 0; k < count; k++) {
                    if (depthT[l.d][k] >= l.term) {
                        l.term = depthT[l.d][k];
                        l.od = depthOd[l.d][k];
                        l.w = depthW[l.d][k];
                        l.first = k == 0;
                        return;
                    }
                }
                if (count == 0 && l.term == 0) {
                    l.od = -1;  // no source: the item is zero
                    l.first = true;
                    return;
                }
                l.item += l.copies;
                l.term = 0;
                continue;
            }
            bool any = false;
            int32_t base = Base(0, l.d);
            for (uint32_t t = 0; t < terms[0]; t++) {
                int32_t od = base + static_cast<int32_t>(t);
                if (od < 0 || od >= static_cast<int32_t>(src[0])) {
                    continue;
                }
                float w = Weight(0, static_cast<int32_t>(l.d), od);
                if (w == 0.0f) {
                    continue;
                }
                if (t >= l.term) {
                    l.term = t;
                    l.od = od;
                    l.w = w;
                    l.first = !any;
                    return;
                }
                any = true;
            }
            if (!any && l.term == 0) {
                l.od = -1;  // no source: the item is zero
                l.first = true;
                return;
            }
            l.item++;
            l.term = 0;
        }
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

    // Adds the load, weighted, to the float Y tile.
    __aicore__ inline void Consume(const Load& l)
    {
        LocalTensor<float> ycomb = ycombBuf.Get<float>();
        uint32_t count = l.srcRows * ys;
        if (l.od < 0) {
            Duplicate(ycomb, 0.0f, count);
            return;
        }
        LocalTensor<T> in = inQueue.DeQue<T>();
        if constexpr (IS_FLOAT) {
            if (l.first) {
                Muls(ycomb, in, l.w, count);
            } else {
                Axpy(ycomb, in, l.w, count);
            }
        } else {
            if (l.first) {
                Cast(ycomb, in, RoundMode::CAST_NONE, count);
                if (l.w != 1.0f) {
                    Muls(ycomb, ycomb, l.w, count);
                }
            } else {
                LocalTensor<float> cvt = cvtBuf.Get<float>();
                Cast(cvt, in, RoundMode::CAST_NONE, count);
                Axpy(ycomb, cvt, l.w, count);
            }
        }
        inQueue.FreeTensor(in);
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
        if constexpr (MODE == MODE_BILINEAR) {
            float s = alignCorners ? ratio[a] * static_cast<float>(o)
                                   : ratio[a] * (static_cast<float>(o) + 0.5f) - 0.5f;
            s = s < 0.0f ? 0.0f : s;
            int32_t i0 = static_cast<int32_t>(s);
            i0 = i0 < dstLen - 1 ? i0 : dstLen - 1;
            int32_t i1 = i0 + 1 < dstLen - 1 ? i0 + 1 : dstLen - 1;
            float l1 = s - static_cast<float>(i0);
            float l0 = 1.0f - l1;
            return (i0 == i ? l0 : 0.0f) + (i1 == i ? l1 : 0.0f);
        } else {
            int32_t srcLen = static_cast<int32_t>(src[a]);
            int32_t st = o * dstLen / srcLen;
            int32_t en = ((o + 1) * dstLen + srcLen - 1) / srcLen;
            return (st <= i && i < en) ? 1.0f / static_cast<float>(en - st) : 0.0f;
        }
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
            if constexpr (MODE == MODE_BILINEAR) {
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
            } else {
                // window [st, en) of source o: st = floor(o * L / S),
                // en = ceil((o + 1) * L / S)
                Muls(t1, o, dstLen, n);
                Adds(t2, t1, 0.5f, n);
                Muls(t2, t2, 1.0f / srcLen, n);
                Floor(t2, scratch, n);  // t2 = st
                Adds(t3, t1, dstLen - 0.5f, n);
                Muls(t3, t3, 1.0f / srcLen, n);
                Floor(t3, scratch, n);
                Adds(t3, t3, 1.0f, n);  // t3 = en
                Sub(t4, idx, t2, n);    // [w >= st]
                Adds(t4, t4, 1.0f, n);
                Step(t4, n);
                Sub(t1, t3, idx, n);  // [w < en]
                Step(t1, n);
                Mul(t4, t4, t1, n);
                Sub(t1, t3, t2, n);
                Div(w, t4, t1, n);
            }
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

    // H: vrow[r] = sum over t of wH(h0 + r, base + t) * source row (base + t).
    __aicore__ inline void SumRows(const Load& l, const LocalTensor<float>& source)
    {
        LocalTensor<float> v = vBuf.Get<float>();
        if (planned) {
            uint8_t blocks = static_cast<uint8_t>(ys / FLOAT_PER_BLOCK);
            for (uint32_t i = planStart[l.chunk]; i < planStart[l.chunk + 1]; i++) {
                const RowRun& u = plan[i];
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
    __aicore__ inline void SumColumnsAndStore(const Load& l)
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
        for (uint32_t t = 0; t < terms[2]; t++) {
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
        for (uint32_t k = 0; k < l.copies; k++) {
            DataCopyPad(xGm[((static_cast<uint64_t>(l.p) * dst[0] + l.d + k) * dst[1] + l.h0) * dst[2]], out, cp);
        }
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
    uint32_t planStart[PLAN_CHUNKS + 1] = {};
    uint32_t chunkRowsOf[PLAN_CHUNKS] = {}, chunkH0Of[PLAN_CHUNKS] = {}, chunkLoOf[PLAN_CHUNKS] = {},
             chunkSrcRowsOf[PLAN_CHUNKS] = {};
    bool depthPlanned = false;
    uint32_t depthCount[PLAN_DEPTHS];
    bool depthSameAsPrev[PLAN_DEPTHS];
    uint32_t depthT[PLAN_DEPTHS][PLAN_TERMS];
    int32_t depthOd[PLAN_DEPTHS][PLAN_TERMS];
    float depthW[PLAN_DEPTHS][PLAN_TERMS];
    RowRun plan[PLAN_RUNS];
};

extern "C" __global__ __aicore__ void upsample_bilinear2d_grad(GM_ADDR gradOutput, GM_ADDR gradInput,
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
