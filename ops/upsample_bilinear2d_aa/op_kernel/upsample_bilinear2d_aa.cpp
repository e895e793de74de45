// UpsampleBilinear2dAA kernel (float16, float32, bfloat16; float32 math).
//
// y = A_H * x * A_W^T per plane, where row i of A is the normalised triangle
// filter of output i (operators-l1-l3.md). Gather form, one chunk of output
// rows per work item:
//   1. the input rows the chunk draws on are copied in with one
//      DataCopyPad (rows padded to 32 B; the next item's copy is issued
//      before this item's vector work, so MTE2 runs ahead), cast to float32
//      for 16-bit types;
//   2. H: each output row is a weighted sum of input rows, with the runs
//      planned on the host (Muls, Axpy with scalar weights, one
//      instruction per run of rows with a constant source step);
//   3. W: for each of the `terms` source offsets t, one Gather per block of
//      rows picks column base(w) + t of every row (byte-offset tables built
//      once per core) and a Mul / MulAddDst with the per-column weight row
//      (repeat stride 0) accumulates the sum;
//   4. cast and one DataCopyPad out.
// The per-column weights are computed once per core with vector ops from
// the same float formulas as the host's (window, triangle, normalisation).
// The work items keep the (plane, chunk, depth range) layout of the
// separable-map kernels this one shares its structure with; the depth axis
// is trivial here (1 -> 1).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t FLOAT_PER_REPEAT = 64;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t SETUP_ARRAYS = 14;
// H row plans (planned on the host): at most this many chunks and runs;
// beyond them the rows are summed one by one.
constexpr uint32_t PLAN_CHUNKS = 16;
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
            support[a] = t.support[a];
            inv[a] = t.inv[a];
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
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(cvtBuf, srcRowsCap * ys * sizeof(float));
            pipe->InitBuffer(xfBuf, tileRows * ws * sizeof(float));
        }
        pipe->InitBuffer(vBuf, tileRows * ys * sizeof(float));
        pipe->InitBuffer(gatBuf, tileRows * ws * sizeof(float));
        pipe->InitBuffer(tableBuf, terms[2] * tableRows * ws * sizeof(uint32_t));
        pipe->InitBuffer(weightBuf, terms[2] * tableRows * ws * sizeof(float));
        pipe->InitBuffer(outQueue, t.bufferNum, tileRows * ws * sizeof(T));
        pipe->InitBuffer(setupBuf, SETUP_ARRAYS * ws * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        if (itemCount == 0) {
            return;
        }
        BuildColumnTables();
        // Without the host's plan, SumRows sums the rows one by one.
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

    // The 2-D resize has no depth axis: each item is one load, summed along
    // H straight from the copied rows (float32) or their float32 cast,
    // then along W, and stored.
    __aicore__ inline void Consume(const Load& l, bool lastOfItem)
    {
        (void)lastOfItem;
        if (l.od < 0) {
            SumColumnsAndStore(l, l.dA, true);
            return;
        }
        LocalTensor<T> in = inQueue.DeQue<T>();
        if constexpr (IS_FLOAT) {
            SumRows(l, in);
        } else {
            LocalTensor<float> cvt = cvtBuf.Get<float>();
            Cast(cvt, in, RoundMode::CAST_NONE, l.srcRows * ys);
            SumRows(l, cvt);
        }
        inQueue.FreeTensor(in);
        SumColumnsAndStore(l, l.dA, false);
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

    // Weight of source index o in output index i on axis a (a >= 1: the
    // normalised triangle filter; the same float formulas as the host).
    __aicore__ inline float Weight(uint32_t a, int32_t i, int32_t o)
    {
        float c = ratio[a] * (static_cast<float>(i) + 0.5f);
        int32_t lo = static_cast<int32_t>(c - support[a] + 0.5f);
        lo = lo < 0 ? 0 : lo;
        int32_t hi = static_cast<int32_t>(c + support[a] + 0.5f);
        hi = hi > static_cast<int32_t>(src[a]) ? static_cast<int32_t>(src[a]) : hi;
        if (o < lo || o >= hi) {
            return 0.0f;
        }
        float total = 0.0f;
        float w = 0.0f;
        for (int32_t j = lo; j < hi; j++) {
            float x = (static_cast<float>(j) - c + 0.5f) * inv[a];
            x = x < 0.0f ? -x : x;
            float v = x < 1.0f ? 1.0f - x : 0.0f;
            total += v;
            if (j == o) {
                w = v;
            }
        }
        return total != 0.0f ? w / total : 0.0f;
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
        CreateVecIndex(idx, 0.0f, n);
        Adds(base, idx, baseOff[2], n);
        Muls(base, base, baseScale[2], n);
        Adds(base, base, baseAdd[2], n);
        Floor(base, scratch, n);
        Adds(base, base, static_cast<float>(baseShift[2]), n);
        LocalTensor<float> c = setup[9 * n];
        LocalTensor<float> lo = setup[10 * n];
        LocalTensor<float> hi = setup[11 * n];
        LocalTensor<float> total = setup[12 * n];
        // The filter of output column w: centre c = scale (w + 0.5), taps
        // over [max(floor(c - support + 0.5), 0), min(floor(c + support +
        // 0.5), in)) (trunc and floor agree after the clamp at 0).
        Adds(c, idx, 0.5f, n);
        Muls(c, c, ratio[2], n);
        Adds(lo, c, -support[2], n);  // (c - support) + 0.5, the host's order
        Adds(lo, lo, 0.5f, n);
        Floor(lo, scratch, n);
        Maxs(lo, lo, 0.0f, n);
        Adds(hi, c, support[2], n);
        Adds(hi, hi, 0.5f, n);
        Floor(hi, scratch, n);
        Mins(hi, hi, srcLen, n);
        Duplicate(total, 0.0f, n);
        LocalTensor<float> weights = weightBuf.Get<float>();
        LocalTensor<int32_t> tables = tableBuf.Get<int32_t>();
        for (uint32_t t = 0; t < terms[2]; t++) {
            Adds(o, base, static_cast<float>(t), n);
            // valid = [o >= lo] * [o < hi] (o, lo, hi integral)
            Sub(valid, o, lo, n);
            Adds(valid, valid, 1.0f, n);
            Step(valid, n);
            Sub(t1, hi, o, n);
            Step(t1, n);
            Mul(valid, valid, t1, n);
            // triangle: max(0, 1 - |(o - c + 0.5) inv|)
            LocalTensor<float> w = weights[t * tableRows * n];
            Sub(t1, o, c, n);
            Adds(t1, t1, 0.5f, n);
            Muls(t1, t1, inv[2], n);
            Abs(t1, t1, n);
            Muls(t1, t1, -1.0f, n);
            Adds(t1, t1, 1.0f, n);
            Maxs(t1, t1, 0.0f, n);
            Mul(w, t1, valid, n);
            Add(total, total, w, n);
            // Row 0 of the table, then doubling: row r = row 0 + r * ys * 4.
            Maxs(o, o, 0.0f, n);
            Mins(o, o, srcLen - 1.0f, n);
            LocalTensor<int32_t> table = tables[t * tableRows * n];
            Muls(t1, o, 4.0f, n);
            Cast(table, t1, RoundMode::CAST_RINT, n);
            for (uint32_t done = 1; done < tableRows; done *= 2) {
                uint32_t m = tableRows - done < done ? tableRows - done : done;
                Adds(table[done * n], table, static_cast<int32_t>(done * ys * sizeof(float)), m * n);
            }
        }
        // Normalise (a column without taps keeps weights 0: 0 / tiny).
        Maxs(total, total, 1e-30f, n);
        for (uint32_t t = 0; t < terms[2]; t++) {
            LocalTensor<float> w = weights[t * tableRows * n];
            Div(w, w, total, n);
            // Row 0 repeated for every table row (one count-mode product
            // per block of rows).
            for (uint32_t done = 1; done < tableRows; done *= 2) {
                uint32_t m = tableRows - done < done ? tableRows - done : done;
                Adds(w[done * n], w, 0.0f, m * n);
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
        if (zero) {
            Duplicate(xf, 0.0f, l.rows * ws);
        }
        for (uint32_t t = 0; t < terms[2] && !zero; t++) {
            for (uint32_t rb = 0; rb < l.rows; rb += tableRows) {
                uint32_t nr = l.rows - rb < tableRows ? l.rows - rb : tableRows;
                Gather(gat[rb * ws], v, tables[t * tableRows * ws], rb * ys * sizeof(float), nr * ws);
                if (t == 0) {
                    Mul(xf[rb * ws], gat[rb * ws], weights[t * tableRows * ws], nr * ws);
                } else {
                    MulAddDst(xf[rb * ws], gat[rb * ws], weights[t * tableRows * ws], nr * ws);
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
    float support[3] = {}, inv[3] = {};
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
    RowRun plan[PLAN_RUNS];
};

extern "C" __global__ __aicore__ void upsample_bilinear2d_aa(GM_ADDR gradOutput, GM_ADDR gradInput,
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
