// UpsampleNearestExact3d kernel: y[p, od, oh, ow] = x[p, sd, sh, sw] with
// s = min(floor((o + 0.5) * ratio), in - 1) per axis (float16, float32,
// bfloat16; a pure copy, so no arithmetic on the data).
//
// Each work item is an output tile: `slabs` whole Ho x Wo slabs of planes
// g*slabs.. at depth od (slab mode) or `rowsPerChunk` rows of one slab
// (chunk mode). Its source is one contiguous (chunk) or strided (slab) block
// of x, copied to UB with one DataCopyPad; one Gather with a byte-offset
// table then builds the whole output tile, which leaves with one
// DataCopyPad. The table depends only on the chunk, so it is built once per
// chunk with vector ops (index -> (slab, row, column) -> source offset, the
// same float formula as torch). Consecutive od with the same source depth
// copy the same tile out again without reloading. Queues are double
// buffered so copy-in, Gather and copy-out overlap.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t BLOCK_BYTES = 32;

template <typename T>
class KernelUpsampleNearestExact3d {
public:
    __aicore__ inline KernelUpsampleNearestExact3d() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& t, TPipe* pipe)
    {
        nc = t.nc;
        inD = t.inD;
        inH = t.inH;
        inW = t.inW;
        outD = t.outD;
        outH = t.outH;
        outW = t.outW;
        ratioD = t.ratioD;
        ratioH = t.ratioH;
        ratioW = t.ratioW;
        slabs = t.slabs;
        groups = t.groups;
        rowsPerChunk = t.rowsPerChunk;
        inSlabPad = t.inSlabPad;
        outSlabPad = t.outSlabPad;
        outCap = t.outCap;
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < t.tailCoreNum) {
            itemCount = t.blockItems + 1;
            itemStart = blockIdx * itemCount;
        } else {
            itemCount = t.blockItems;
            itemStart = t.tailCoreNum * (t.blockItems + 1) + (blockIdx - t.tailCoreNum) * t.blockItems;
        }
        xGm.SetGlobalBuffer((__gm__ T*)x, static_cast<uint64_t>(nc) * inD * inH * inW);
        yGm.SetGlobalBuffer((__gm__ T*)y, static_cast<uint64_t>(nc) * outD * outH * outW);
        pipe->InitBuffer(inQueue, t.bufferNum, t.inCap * sizeof(T));
        pipe->InitBuffer(outQueue, t.bufferNum, outCap * sizeof(T));
        pipe->InitBuffer(tableBuf, outCap * sizeof(uint32_t));
        pipe->InitBuffer(workA, outCap * sizeof(float));
        pipe->InitBuffer(workB, outCap * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        uint32_t perChunk = groups * outD;
        uint32_t end = itemStart + itemCount;
        uint32_t builtChunk = 0xFFFFFFFFu;
        uint32_t item = itemStart;
        while (item < end) {
            uint32_t chunk = item / perChunk;
            uint32_t rest = item - chunk * perChunk;
            uint32_t g = rest / outD;
            uint32_t od = rest - g * outD;
            uint32_t sd = Src(od, ratioD, inD);
            uint32_t run = 1;
            while (item + run < end && od + run < outD && Src(od + run, ratioD, inD) == sd) {
                run++;
            }
            if (chunk != builtChunk) {
                BuildTable(chunk);
                builtChunk = chunk;
            }
            TileGeometry(chunk, g);
            CopyIn(sd);
            Compute();
            CopyOut(od, run);
            item += run;
        }
    }

private:
    // Source index of output index `dst` on an axis (scalar float, as the
    // vector table and torch compute it).
    __aicore__ inline uint32_t Src(uint32_t dst, float ratio, uint32_t in)
    {
        float v = (static_cast<float>(dst) + 0.5f) * ratio;
        uint32_t s = v > 0.0f ? static_cast<uint32_t>(v) : 0;
        return s < in - 1 ? s : in - 1;
    }

    // Planes, rows and source rows of the current tile.
    __aicore__ inline void TileGeometry(uint32_t chunk, uint32_t g)
    {
        plane0 = g * slabs;
        planeNum = nc - plane0 < slabs ? nc - plane0 : slabs;
        oh0 = chunk * rowsPerChunk;
        rowNum = outH - oh0 < rowsPerChunk ? outH - oh0 : rowsPerChunk;
        srcRow0 = Src(oh0, ratioH, inH);
        srcRowNum = Src(oh0 + rowNum - 1, ratioH, inH) - srcRow0 + 1;
    }

    // floor(v) in place, through the int32 view of `scratch`.
    __aicore__ inline void Floor(const LocalTensor<float>& v, const LocalTensor<int32_t>& scratch, uint32_t n)
    {
        Cast(scratch, v, RoundMode::CAST_FLOOR, n);
        Cast(v, scratch, RoundMode::CAST_NONE, n);
    }

    // table[i] = byte offset in the input tile of output element i of a
    // tile of `chunk`: i -> (slab k, row r, column c) -> k * inSlabPad +
    // (sh(oh0 + r) - sh(oh0)) * W + sw(c). Padding entries stay in range.
    __aicore__ inline void BuildTable(uint32_t chunk)
    {
        LocalTensor<float> a = workA.Get<float>();
        LocalTensor<float> b = workB.Get<float>();
        LocalTensor<float> t = tableBuf.Get<float>();
        LocalTensor<int32_t> ti = tableBuf.Get<int32_t>();
        uint32_t n = outCap;
        uint32_t rowBase = chunk * rowsPerChunk;
        CreateVecIndex(a, 0.0f, n);
        if (slabs > 1) {
            Adds(b, a, 0.5f, n);
            Muls(b, b, 1.0f / static_cast<float>(outSlabPad), n);
            Floor(b, ti, n);
            Axpy(a, b, -static_cast<float>(outSlabPad), n);
            Muls(b, b, static_cast<float>(inSlabPad), n);
        } else {
            Duplicate(b, 0.0f, n);
        }
        // t = row in the slab, a = column. (Floor's scratch is t's own
        // buffer, so t is finished before a is floored.)
        Adds(t, a, 0.5f, n);
        Muls(t, t, 1.0f / static_cast<float>(outW), n);
        Floor(t, ti, n);
        Axpy(a, t, -static_cast<float>(outW), n);
        // b += (sh(rowBase + row) - sh(rowBase)) * W
        Adds(t, t, static_cast<float>(rowBase) + 0.5f, n);
        Muls(t, t, ratioH, n);
        Floor(t, ti, n);
        Mins(t, t, static_cast<float>(inH - 1), n);
        Adds(t, t, -static_cast<float>(Src(rowBase, ratioH, inH)), n);
        Axpy(b, t, static_cast<float>(inW), n);
        // b += sw(column)
        Adds(a, a, 0.5f, n);
        Muls(a, a, ratioW, n);
        Floor(a, ti, n);
        Mins(a, a, static_cast<float>(inW - 1), n);
        Add(b, b, a, n);
        Muls(b, b, static_cast<float>(sizeof(T)), n);
        Cast(ti, b, RoundMode::CAST_RINT, n);
    }

    // Rows srcRow0.. of depth sd of each plane of the tile; plane k lands at
    // k * inSlabPad in UB.
    __aicore__ inline void CopyIn(uint32_t sd)
    {
        LocalTensor<T> in = inQueue.AllocTensor<T>();
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        uint64_t rowsLen = static_cast<uint64_t>(srcRowNum) * inW;
        uint64_t planeLen = static_cast<uint64_t>(inD) * inH * inW;
        uint32_t ubGap = static_cast<uint32_t>((inSlabPad * sizeof(T) - AlignBlock(rowsLen * sizeof(T))) / BLOCK_BYTES);
        DataCopyExtParams p{static_cast<uint16_t>(planeNum), static_cast<uint32_t>(rowsLen * sizeof(T)),
                            static_cast<uint32_t>((planeLen - rowsLen) * sizeof(T)), ubGap, 0};
        DataCopyPad(in, xGm[((static_cast<uint64_t>(plane0) * inD + sd) * inH + srcRow0) * inW], p, pad);
        inQueue.EnQue(in);
    }

    __aicore__ inline uint64_t AlignBlock(uint64_t bytes)
    {
        return (bytes + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
    }

    __aicore__ inline void Compute()
    {
        LocalTensor<T> in = inQueue.DeQue<T>();
        LocalTensor<T> out = outQueue.AllocTensor<T>();
        LocalTensor<uint32_t> table = tableBuf.Get<uint32_t>();
        uint32_t count = (planeNum - 1) * outSlabPad + rowNum * outW;
        Gather(out, in, table, 0, count);
        outQueue.EnQue(out);
        inQueue.FreeTensor(in);
    }

    // The tile to depth od .. od + run - 1 (same source depth): one strided
    // DataCopyPad per depth.
    __aicore__ inline void CopyOut(uint32_t od, uint32_t run)
    {
        LocalTensor<T> out = outQueue.DeQue<T>();
        uint64_t rowsLen = static_cast<uint64_t>(rowNum) * outW;
        uint64_t planeLen = static_cast<uint64_t>(outD) * outH * outW;
        uint32_t ubGap = static_cast<uint32_t>((outSlabPad * sizeof(T) - AlignBlock(rowsLen * sizeof(T))) / BLOCK_BYTES);
        DataCopyExtParams p{static_cast<uint16_t>(planeNum), static_cast<uint32_t>(rowsLen * sizeof(T)), ubGap,
                            static_cast<uint32_t>((planeLen - rowsLen) * sizeof(T)), 0};
        for (uint32_t r = 0; r < run; r++) {
            uint64_t base = ((static_cast<uint64_t>(plane0) * outD + od + r) * outH + oh0) * outW;
            DataCopyPad(yGm[base], out, p);
        }
        outQueue.FreeTensor(out);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> tableBuf;
    TBuf<TPosition::VECCALC> workA;
    TBuf<TPosition::VECCALC> workB;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t nc = 0, inD = 0, inH = 0, inW = 0, outD = 0, outH = 0, outW = 0;
    float ratioD = 0.0f, ratioH = 0.0f, ratioW = 0.0f;
    uint32_t slabs = 0, groups = 0, rowsPerChunk = 0, inSlabPad = 0, outSlabPad = 0, outCap = 0;
    uint32_t itemStart = 0, itemCount = 0;
    uint32_t plane0 = 0, planeNum = 0, oh0 = 0, rowNum = 0, srcRow0 = 0, srcRowNum = 0;
};

extern "C" __global__ __aicore__ void upsample_nearest_exact3d(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                               GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelUpsampleNearestExact3d<half> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelUpsampleNearestExact3d<float> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelUpsampleNearestExact3d<bfloat16_t> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
