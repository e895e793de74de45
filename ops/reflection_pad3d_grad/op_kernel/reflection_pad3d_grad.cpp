// ReflectionPad3dGrad kernel: y[p, d, h, w] = sum of x[p, od, oh, ow] over
// the padded positions whose reflected index is (d, h, w) (float16,
// float32, bfloat16; sums in float32).
//
// The map is separable, and on each axis an output index receives its own
// padded index (i + before) plus, for the indices within `before` of the
// start or `after` of the end, one mirrored pad index each ("extras"). A work item is a chunk of output rows of one
// (plane, d) slab:
//   1. D: the chunk's input rows (one contiguous DataCopyPad, the pad rows
//      above and below included for the first and last chunks) of the
//      primary slab d + before and of every extra slab are summed into a
//      float32 tile (row stride = padded width rounded to 32 B);
//   2. H: the extra rows of the border rows are added to their primary rows
//      (whole-row vector Adds);
//   3. W: for each output column that receives a pad column, one Gather per
//      source column collects that column over all rows of the tile and the
//      results are summed into a compact column vector;
//   4. one Gather with a precomputed byte-offset table builds the compact
//      output rows (interior columns from the shifted tile, border columns
//      from the column vectors); it is cast to the output dtype and leaves
//      with one contiguous DataCopyPad.
// The tables depend only on the tiling, so they are built once per core
// with vector ops. Queues are double buffered.
#include "kernel_operator.h"

using namespace AscendC;

constexpr bool REFLECT = true;  // reflection: indices mirror at the border
constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t MAX_SPECIAL = 64;
constexpr uint32_t FLOAT_BYTES = 4;

template <typename T>
class KernelPadGrad {
    static constexpr bool IS_FLOAT = sizeof(T) == 4;

public:
    __aicore__ inline KernelPadGrad() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, const TilingData& t, TPipe* pipe)
    {
        planes = t.planes;
        outD = t.outD;
        outH = t.outH;
        outW = t.outW;
        padD0 = t.padD0;
        padD1 = t.padD1;
        padH0 = t.padH0;
        padH1 = t.padH1;
        padW0 = t.padW0;
        padW1 = t.padW1;
        inD = outD + padD0 + padD1;
        inH = outH + padH0 + padH1;
        inW = outW + padW0 + padW1;
        rowStride = t.rowStride;
        tileRows = t.tileRows;
        chunkNum = t.chunkNum;
        baseRows = t.baseRows;
        extraRows = t.extraRows;
        specialCols = t.specialCols;
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < t.tailCoreNum) {
            itemCount = t.blockItems + 1;
            itemStart = blockIdx * itemCount;
        } else {
            itemCount = t.blockItems;
            itemStart = t.tailCoreNum * (t.blockItems + 1) + (blockIdx - t.tailCoreNum) * t.blockItems;
        }
        xGm.SetGlobalBuffer((__gm__ T*)x, static_cast<uint64_t>(planes) * inD * inH * inW);
        zGm.SetGlobalBuffer((__gm__ T*)z, static_cast<uint64_t>(planes) * outD * outH * outW);

        uint32_t rowsIn = tileRows + padH0 + padH1;
        accElems = rowsIn * rowStride;
        specStride = AlignUp(tileRows, 8);
        outElems = AlignUp(tileRows * outW, 8);
        pipe->InitBuffer(inQueue, t.bufferNum, accElems * sizeof(T));
        pipe->InitBuffer(accBuf, (accElems + specialCols * specStride) * FLOAT_BYTES);
        pipe->InitBuffer(outQueue, t.bufferNum, tileRows * outW * sizeof(T));
        pipe->InitBuffer(tableBuf, outElems * FLOAT_BYTES);
        pipe->InitBuffer(workA, outElems * FLOAT_BYTES);
        pipe->InitBuffer(workB, outElems * FLOAT_BYTES);
        pipe->InitBuffer(colBaseBuf, AlignUp(outW, 8) * FLOAT_BYTES);
        pipe->InitBuffer(colIncBuf, AlignUp(outW, 8) * FLOAT_BYTES);
        pipe->InitBuffer(colTableBuf, specStride * FLOAT_BYTES);
        pipe->InitBuffer(colTmpBuf, specStride * FLOAT_BYTES);
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(cvtBuf, accElems * FLOAT_BYTES);
            pipe->InitBuffer(gatBuf, outElems * FLOAT_BYTES);
        }
    }

    __aicore__ inline void Process()
    {
        if (itemCount == 0) {
            return;
        }
        FindSpecials();
        BuildTables();
        for (uint32_t item = itemStart; item < itemStart + itemCount; item++) {
            uint32_t chunk = item % chunkNum;
            uint32_t rest = item / chunkNum;
            uint32_t d = rest % outD;
            uint32_t plane = rest / outD;
            uint32_t rows = baseRows + (chunk < extraRows ? 1 : 0);
            uint32_t h0 = chunk * baseRows + (chunk < extraRows ? chunk : extraRows);
            uint32_t h1 = h0 + rows;
            uint32_t lo = h0 == 0 ? 0 : h0 + padH0;
            uint32_t hi = h1 == outH ? inH : h1 + padH0;
            Accumulate(plane, d + padD0, lo, hi, h0, true);
            uint32_t r[4];
            Extras(d, outD, padD0, padD1, r);
            for (uint32_t k = 0; k < 4; k += 2) {
                for (uint32_t slab = r[k]; slab < r[k + 1]; slab++) {
                    Accumulate(plane, slab, lo, hi, h0, false);
                }
            }
            FoldRows(h0, h1);
            FoldColumns(rows);
            Output(plane, d, h0, rows);
        }
    }

private:
    __aicore__ inline uint32_t AlignUp(uint32_t v, uint32_t a)
    {
        return (v + a - 1) / a * a;
    }

    // Pad indices (beyond its own i + before) that output index i of an
    // axis of length len receives: [r0, r1) and [r2, r3).
    __aicore__ inline void Extras(uint32_t i, uint32_t len, uint32_t before, uint32_t after, uint32_t r[4])
    {
        r[0] = r[1] = r[2] = r[3] = 0;
        if constexpr (REFLECT) {
            if (i >= 1 && i <= before) {
                r[0] = before - i;
                r[1] = r[0] + 1;
            }
            if (i + 1 + after >= len && i + 2 <= len) {
                r[2] = 2 * (len - 1) - i + before;
                r[3] = r[2] + 1;
            }
        } else {
            if (i == 0) {
                r[0] = 0;
                r[1] = before;
            }
            if (i + 1 == len) {
                r[2] = len + before;
                r[3] = len + before + after;
            }
        }
    }

    __aicore__ inline void FindSpecials()
    {
        uint32_t s = 0;
        for (uint32_t w = 0; w < outW && s < MAX_SPECIAL; w++) {
            uint32_t r[4];
            Extras(w, outW, padW0, padW1, r);
            if (r[1] > r[0] || r[3] > r[2]) {
                specialW[s++] = w;
            }
        }
    }

    // floor(v) in place, through the int32 view of `scratch`.
    __aicore__ inline void Floor(const LocalTensor<float>& v, const LocalTensor<int32_t>& scratch, uint32_t n)
    {
        Cast(scratch, v, RoundMode::CAST_FLOOR, n);
        Cast(v, scratch, RoundMode::CAST_NONE, n);
    }

    // colTable[r] = byte offset of tile row r's primary row; table[r * W + w]
    // = byte offset of output (r, w) in the accumulator: (r + padH0) *
    // rowStride + w + padW0, or the column vector of a border column.
    __aicore__ inline void BuildTables()
    {
        LocalTensor<float> colTmp = colTmpBuf.Get<float>();
        LocalTensor<int32_t> colTable = colTableBuf.Get<int32_t>();
        CreateVecIndex(colTmp, static_cast<float>(padH0), tileRows);
        Muls(colTmp, colTmp, static_cast<float>(rowStride * FLOAT_BYTES), tileRows);
        Cast(colTable, colTmp, RoundMode::CAST_RINT, tileRows);

        LocalTensor<float> colBase = colBaseBuf.Get<float>();
        LocalTensor<float> colInc = colIncBuf.Get<float>();
        CreateVecIndex(colBase, static_cast<float>(padH0 * rowStride + padW0), outW);
        Duplicate(colInc, static_cast<float>(rowStride), outW);
        if (specialCols > 0) {
            int32_t vs = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(vs);
            WaitFlag<HardEvent::V_S>(vs);
            for (uint32_t s = 0; s < specialCols; s++) {
                colBase.SetValue(specialW[s], static_cast<float>(accElems + s * specStride));
                colInc.SetValue(specialW[s], 1.0f);
            }
            int32_t sv = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::S_V));
            SetFlag<HardEvent::S_V>(sv);
            WaitFlag<HardEvent::S_V>(sv);
        }

        LocalTensor<float> a = workA.Get<float>();
        LocalTensor<float> b = workB.Get<float>();
        LocalTensor<float> t = tableBuf.Get<float>();
        LocalTensor<int32_t> ti = tableBuf.Get<int32_t>();
        LocalTensor<uint32_t> tu = tableBuf.Get<uint32_t>();
        uint32_t n = outElems;
        CreateVecIndex(a, 0.0f, n);
        Adds(b, a, 0.5f, n);
        Muls(b, b, 1.0f / static_cast<float>(outW), n);
        Floor(b, ti, n);                           // b = row
        Axpy(a, b, -static_cast<float>(outW), n);  // a = column
        Muls(a, a, static_cast<float>(FLOAT_BYTES), n);
        Cast(ti, a, RoundMode::CAST_RINT, n);  // column byte offsets
        Gather(a, colInc, tu, 0, n);
        Mul(b, b, a, n);
        Gather(a, colBase, tu, 0, n);
        Add(b, b, a, n);
        Muls(b, b, static_cast<float>(FLOAT_BYTES), n);
        Cast(ti, b, RoundMode::CAST_RINT, n);
    }

    // Adds input rows [lo, hi) of padded slab `slab` into the accumulator
    // (input row i at tile row i - h0); `first` overwrites instead.
    __aicore__ inline void Accumulate(uint32_t plane, uint32_t slab, uint32_t lo, uint32_t hi, uint32_t h0,
                                      bool first)
    {
        uint32_t off = (lo - h0) * rowStride;
        uint32_t count = (hi - lo) * rowStride;
        LocalTensor<T> in = inQueue.AllocTensor<T>();
        DataCopyExtParams p{static_cast<uint16_t>(hi - lo), static_cast<uint32_t>(inW * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(in[off], xGm[((static_cast<uint64_t>(plane) * inD + slab) * inH + lo) * inW], p, pad);
        inQueue.EnQue(in);
        in = inQueue.DeQue<T>();
        LocalTensor<float> acc = accBuf.Get<float>();
        if constexpr (IS_FLOAT) {
            if (first) {
                Adds(acc[off], in[off], 0.0f, count);
            } else {
                Add(acc[off], acc[off], in[off], count);
            }
        } else {
            if (first) {
                Cast(acc[off], in[off], RoundMode::CAST_NONE, count);
            } else {
                LocalTensor<float> cvt = cvtBuf.Get<float>();
                Cast(cvt[off], in[off], RoundMode::CAST_NONE, count);
                Add(acc[off], acc[off], cvt[off], count);
            }
        }
        inQueue.FreeTensor(in);
    }

    // H: adds the extra rows of the border rows of [h0, h1) to their
    // primary rows.
    __aicore__ inline void FoldRows(uint32_t h0, uint32_t h1)
    {
        LocalTensor<float> acc = accBuf.Get<float>();
        uint32_t topEnd = padH0 + 1 < h1 ? padH0 + 1 : h1;
        uint32_t bottom = outH > padH1 + 1 ? outH - 1 - padH1 : 0;
        bottom = bottom > h0 ? bottom : h0;
        bottom = bottom > topEnd ? bottom : topEnd;
        for (uint32_t pass = 0; pass < 2; pass++) {
            uint32_t from = pass == 0 ? h0 : bottom;
            uint32_t to = pass == 0 ? topEnd : h1;
            for (uint32_t h = from; h < to; h++) {
                uint32_t r[4];
                Extras(h, outH, padH0, padH1, r);
                for (uint32_t k = 0; k < 4; k += 2) {
                    for (uint32_t j = r[k]; j < r[k + 1]; j++) {
                        Add(acc[(h + padH0 - h0) * rowStride], acc[(h + padH0 - h0) * rowStride],
                            acc[(j - h0) * rowStride], inW);
                    }
                }
            }
        }
    }

    // W: column vector of each border column = sum of its source columns
    // over the tile's rows.
    __aicore__ inline void FoldColumns(uint32_t rows)
    {
        LocalTensor<float> acc = accBuf.Get<float>();
        LocalTensor<float> colTmp = colTmpBuf.Get<float>();
        LocalTensor<uint32_t> colTable = colTableBuf.Get<uint32_t>();
        for (uint32_t s = 0; s < specialCols; s++) {
            uint32_t w = specialW[s];
            LocalTensor<float> col = acc[accElems + s * specStride];
            Gather(col, acc, colTable, (w + padW0) * FLOAT_BYTES, rows);
            uint32_t r[4];
            Extras(w, outW, padW0, padW1, r);
            for (uint32_t k = 0; k < 4; k += 2) {
                for (uint32_t j = r[k]; j < r[k + 1]; j++) {
                    Gather(colTmp, acc, colTable, j * FLOAT_BYTES, rows);
                    Add(col, col, colTmp, rows);
                }
            }
        }
    }

    __aicore__ inline void Output(uint32_t plane, uint32_t d, uint32_t h0, uint32_t rows)
    {
        LocalTensor<float> acc = accBuf.Get<float>();
        LocalTensor<uint32_t> table = tableBuf.Get<uint32_t>();
        LocalTensor<T> out = outQueue.AllocTensor<T>();
        uint32_t count = rows * outW;
        if constexpr (IS_FLOAT) {
            Gather(out, acc, table, 0, count);
        } else {
            LocalTensor<float> gat = gatBuf.Get<float>();
            Gather(gat, acc, table, 0, count);
            Cast(out, gat, RoundMode::CAST_RINT, count);
        }
        outQueue.EnQue(out);
        out = outQueue.DeQue<T>();
        DataCopyExtParams p{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
        DataCopyPad(zGm[((static_cast<uint64_t>(plane) * outD + d) * outH + h0) * outW], out, p);
        outQueue.FreeTensor(out);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> accBuf;
    TBuf<TPosition::VECCALC> cvtBuf;
    TBuf<TPosition::VECCALC> gatBuf;
    TBuf<TPosition::VECCALC> tableBuf;
    TBuf<TPosition::VECCALC> workA;
    TBuf<TPosition::VECCALC> workB;
    TBuf<TPosition::VECCALC> colBaseBuf;
    TBuf<TPosition::VECCALC> colIncBuf;
    TBuf<TPosition::VECCALC> colTableBuf;
    TBuf<TPosition::VECCALC> colTmpBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> zGm;
    uint32_t planes = 0, outD = 0, outH = 0, outW = 0, inD = 0, inH = 0, inW = 0;
    uint32_t padD0 = 0, padD1 = 0, padH0 = 0, padH1 = 0, padW0 = 0, padW1 = 0;
    uint32_t rowStride = 0, tileRows = 0, chunkNum = 0, baseRows = 0, extraRows = 0, specialCols = 0;
    uint32_t accElems = 0, specStride = 0, outElems = 0;
    uint32_t itemStart = 0, itemCount = 0;
    uint32_t specialW[MAX_SPECIAL] = {};
};

extern "C" __global__ __aicore__ void reflection_pad3d_grad(GM_ADDR x, GM_ADDR z, GM_ADDR workspace,
                                                              GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelPadGrad<half> op;
        op.Init(x, z, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelPadGrad<float> op;
        op.Init(x, z, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelPadGrad<bfloat16_t> op;
        op.Init(x, z, tilingData, &pipe);
        op.Process();
    }
}
