// UpsampleNearestExact3d kernel: y[p, od, oh, ow] = x[p, sd, sh, sw] with
// s = min(floor((o + 0.5) * ratio), in - 1) per axis (float16, float32,
// bfloat16; a pure copy, so no arithmetic on the data).
//
// Every work item is one contiguous range of y (tiling modes: whole planes,
// consecutive Ho x Wo slabs, or rows of one slab). Its sources are copied to
// UB with DataCopyPad (one copy for planes and row chunks, one per source
// slab run otherwise); one Gather with a byte-offset table builds the whole
// output tile, which leaves with one DataCopyPad. The table depends only on
// the mode and the row chunk, so it is built once per chunk with vector ops
// (index -> (slot, depth, row, column) -> source offset, with the same float
// formula as torch). In chunk mode consecutive depths with the same source
// depth copy the same tile out again without reloading. Queues are double
// buffered so copy-in, Gather and copy-out overlap.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 4;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t MODE_VOLUME = 0;
constexpr uint32_t MODE_SLAB = 1;
constexpr uint32_t MODE_CHUNK = 2;

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
        mode = t.mode;
        slabs = t.slabs;
        rowsPerChunk = t.rowsPerChunk;
        inSlot = t.inSlot;
        outCap = t.outCap;
        inSlab = inH * inW;
        outSlab = outH * outW;
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < t.tailCoreNum) {
            itemCount = t.blockItems + 1;
            itemStart = blockIdx * itemCount;
        } else {
            itemCount = t.blockItems;
            itemStart = t.tailCoreNum * (t.blockItems + 1) + (blockIdx - t.tailCoreNum) * t.blockItems;
        }
        xGm.SetGlobalBuffer((__gm__ T*)x, static_cast<uint64_t>(nc) * inD * inSlab);
        yGm.SetGlobalBuffer((__gm__ T*)y, static_cast<uint64_t>(nc) * outD * outSlab);
        pipe->InitBuffer(inQueue, t.bufferNum, t.inCap * sizeof(T));
        pipe->InitBuffer(outQueue, t.bufferNum, outCap * sizeof(T));
        pipe->InitBuffer(tableBuf, outCap * sizeof(uint32_t));
        pipe->InitBuffer(workA, outCap * sizeof(float));
        pipe->InitBuffer(workB, outCap * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        if (itemCount == 0) {
            return;
        }
        if (mode == MODE_CHUNK) {
            ProcessChunks();
            return;
        }
        BuildTable(0);
        uint32_t unitNum = mode == MODE_VOLUME ? nc : nc * outD;
        uint64_t unitIn = mode == MODE_VOLUME ? static_cast<uint64_t>(inD) * inSlab : inSlab;
        uint64_t unitOut = mode == MODE_VOLUME ? static_cast<uint64_t>(outD) * outSlab : outSlab;
        for (uint32_t item = itemStart; item < itemStart + itemCount; item++) {
            uint32_t u0 = item * slabs;
            uint32_t un = unitNum - u0 < slabs ? unitNum - u0 : slabs;
            LocalTensor<T> in = inQueue.AllocTensor<T>();
            if (mode == MODE_VOLUME) {
                CopyRange(in, static_cast<uint64_t>(u0) * unitIn, un * unitIn);
            } else {
                CopySlabs(in, u0, un);
            }
            inQueue.EnQue(in);
            Compute(static_cast<uint32_t>(un * unitOut));
            CopyOut(static_cast<uint64_t>(u0) * unitOut, static_cast<uint32_t>(un * unitOut), 1, 0);
        }
    }

private:
    // Chunk mode: items (chunk, plane * Do + od), chunk-major; a run of
    // depths with the same source depth shares one tile.
    __aicore__ inline void ProcessChunks()
    {
        uint32_t perChunk = nc * outD;
        uint32_t end = itemStart + itemCount;
        uint32_t builtChunk = 0xFFFFFFFFu;
        uint32_t item = itemStart;
        while (item < end) {
            uint32_t chunk = item / perChunk;
            uint32_t q = item - chunk * perChunk;
            uint32_t plane = q / outD;
            uint32_t od = q - plane * outD;
            uint32_t sd = Src(od, ratioD, inD);
            uint32_t run = 1;
            while (item + run < end && od + run < outD && Src(od + run, ratioD, inD) == sd) {
                run++;
            }
            if (chunk != builtChunk) {
                BuildTable(chunk);
                builtChunk = chunk;
            }
            uint32_t oh0 = chunk * rowsPerChunk;
            uint32_t rowNum = outH - oh0 < rowsPerChunk ? outH - oh0 : rowsPerChunk;
            uint32_t srcRow0 = Src(oh0, ratioH, inH);
            uint32_t srcRowNum = Src(oh0 + rowNum - 1, ratioH, inH) - srcRow0 + 1;
            LocalTensor<T> in = inQueue.AllocTensor<T>();
            CopyRange(in, ((static_cast<uint64_t>(plane) * inD + sd) * inH + srcRow0) * inW, srcRowNum * inW);
            inQueue.EnQue(in);
            Compute(rowNum * outW);
            CopyOut(static_cast<uint64_t>(q) * outSlab + static_cast<uint64_t>(oh0) * outW, rowNum * outW, run,
                    outSlab);
            item += run;
        }
    }

    // Source index of output index `dst` on an axis (scalar float, as the
    // vector table and torch compute it).
    __aicore__ inline uint32_t Src(uint32_t dst, float ratio, uint32_t in)
    {
        float v = (static_cast<float>(dst) + 0.5f) * ratio;
        uint32_t s = v > 0.0f ? static_cast<uint32_t>(v) : 0;
        return s < in - 1 ? s : in - 1;
    }

    __aicore__ inline void CopyRange(const LocalTensor<T>& dst, uint64_t offset, uint64_t count)
    {
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyExtParams p{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
        DataCopyPad(dst, xGm[offset], p, pad);
    }

    // Slab mode: the source slab of output slab u0 + k lands at k * inSlot;
    // runs of slabs whose sources follow each other in x move in one copy
    // when the slots are unpadded.
    __aicore__ inline void CopySlabs(const LocalTensor<T>& in, uint32_t u0, uint32_t un)
    {
        uint32_t runStart = 0;
        uint64_t runSrc = 0;
        for (uint32_t k = 0; k < un; k++) {
            uint32_t q = u0 + k;
            uint32_t plane = q / outD;
            uint32_t od = q - plane * outD;
            uint64_t src = (static_cast<uint64_t>(plane) * inD + Src(od, ratioD, inD)) * inSlab;
            if (k == 0) {
                runSrc = src;
            } else if (inSlot != inSlab || src != runSrc + static_cast<uint64_t>(k - runStart) * inSlab) {
                CopyRange(in[runStart * inSlot], runSrc, static_cast<uint64_t>(k - runStart) * inSlab);
                runStart = k;
                runSrc = src;
            }
        }
        CopyRange(in[runStart * inSlot], runSrc, static_cast<uint64_t>(un - runStart) * inSlab);
    }

    // floor(v) in place, through the int32 view of `scratch`.
    __aicore__ inline void Floor(const LocalTensor<float>& v, const LocalTensor<int32_t>& scratch, uint32_t n)
    {
        Cast(scratch, v, RoundMode::CAST_FLOOR, n);
        Cast(v, scratch, RoundMode::CAST_NONE, n);
    }

    // q = floor(i / unit) in t, i -= q * unit in a.
    __aicore__ inline void DivMod(const LocalTensor<float>& a, const LocalTensor<float>& t,
                                  const LocalTensor<int32_t>& ti, uint32_t unit, uint32_t n)
    {
        Adds(t, a, 0.5f, n);
        Muls(t, t, 1.0f / static_cast<float>(unit), n);
        Floor(t, ti, n);
        Axpy(a, t, -static_cast<float>(unit), n);
    }

    // s = min(floor((t + base + 0.5) * ratio), in - 1) in place.
    __aicore__ inline void SrcVec(const LocalTensor<float>& t, const LocalTensor<int32_t>& ti, float base,
                                  float ratio, uint32_t in, uint32_t n)
    {
        Adds(t, t, base + 0.5f, n);
        Muls(t, t, ratio, n);
        Floor(t, ti, n);
        Mins(t, t, static_cast<float>(in - 1), n);
    }

    // table[i] = byte offset in the input tile of output element i: i ->
    // (slot k, depth, row, column) -> k * inSlot + sd * H * W + sh * W +
    // sw (chunk mode: (sh(row0 + row) - sh(row0)) * W + sw, as only the
    // chunk's source rows are loaded). (Floor's scratch is t's
    // own buffer, so t is consumed before a is floored.)
    __aicore__ inline void BuildTable(uint32_t chunk)
    {
        LocalTensor<float> a = workA.Get<float>();
        LocalTensor<float> b = workB.Get<float>();
        LocalTensor<float> t = tableBuf.Get<float>();
        LocalTensor<int32_t> ti = tableBuf.Get<int32_t>();
        uint32_t n = outCap;
        uint32_t row0 = chunk * rowsPerChunk;
        CreateVecIndex(a, 0.0f, n);
        if (mode == MODE_CHUNK) {
            Duplicate(b, 0.0f, n);
        } else {
            DivMod(a, t, ti, mode == MODE_VOLUME ? outD * outSlab : outSlab, n);
            Muls(b, t, static_cast<float>(inSlot), n);
        }
        if (mode == MODE_VOLUME) {
            DivMod(a, t, ti, outSlab, n);
            SrcVec(t, ti, 0.0f, ratioD, inD, n);
            Axpy(b, t, static_cast<float>(inSlab), n);
        }
        DivMod(a, t, ti, outW, n);
        SrcVec(t, ti, static_cast<float>(row0), ratioH, inH, n);
        if (mode == MODE_CHUNK) {
            Adds(t, t, -static_cast<float>(Src(row0, ratioH, inH)), n);
        }
        Axpy(b, t, static_cast<float>(inW), n);
        SrcVec(a, ti, 0.0f, ratioW, inW, n);
        Add(b, b, a, n);
        Muls(b, b, static_cast<float>(sizeof(T)), n);
        Cast(ti, b, RoundMode::CAST_RINT, n);
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<T> in = inQueue.DeQue<T>();
        LocalTensor<T> out = outQueue.AllocTensor<T>();
        LocalTensor<uint32_t> table = tableBuf.Get<uint32_t>();
        Gather(out, in, table, 0, count);
        outQueue.EnQue(out);
        inQueue.FreeTensor(in);
    }

    // The tile to `copies` places `step` elements apart, from `offset`.
    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count, uint32_t copies, uint64_t step)
    {
        LocalTensor<T> out = outQueue.DeQue<T>();
        DataCopyExtParams p{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
        for (uint32_t r = 0; r < copies; r++) {
            DataCopyPad(yGm[offset + r * step], out, p);
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
    uint32_t nc = 0, inD = 0, inH = 0, inW = 0, outD = 0, outH = 0, outW = 0, inSlab = 0, outSlab = 0;
    float ratioD = 0.0f, ratioH = 0.0f, ratioW = 0.0f;
    uint32_t mode = 0, slabs = 0, rowsPerChunk = 0, inSlot = 0, outCap = 0;
    uint32_t itemStart = 0, itemCount = 0;
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
