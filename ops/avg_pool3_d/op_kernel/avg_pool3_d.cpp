// AvgPool3D kernel (NDHWC): y[n, od, oh, ow, :] = sum of the window's
// C-vectors / divisor (float16, float32, bfloat16; sums in float32).
//
// In NDHWC every window element is a contiguous C-vector, so pooling is
// whole-vector arithmetic with no gathers. A work item is a chunk of output
// rows of one (n, od):
//   1. D: the chunk's input rows (all W, all C; one DataCopyPad, C-vectors
//      padded to 32 B) of every real depth of the window are summed into a
//      float32 tile;
//   2. H: per output row, the window's input rows are summed into one row
//      of W C-vectors (whole-row Adds);
//   3. W: per output row and window tap, one strided Add (repeat stride =
//      stride * C) adds the tap's C-vectors to every output column at once;
//   4. the divisor is separable: a per-column factor vector (built once) and
//      one scalar per row; the result is cast and leaves with one
//      DataCopyPad.
// Queues are double buffered so copies overlap the vector work.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t FLOAT_PER_REPEAT = 64;
constexpr uint32_t FLOAT_PER_BLOCK = 8;
constexpr uint32_t MAX_REP_STRIDE = 255;
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint32_t MAX_BLOCK_COUNT = 4095;

template <typename T>
class KernelAvgPool3D {
    static constexpr bool IS_FLOAT = sizeof(T) == 4;

public:
    __aicore__ inline KernelAvgPool3D() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& t, TPipe* pipe)
    {
        batch = t.batch;
        c = t.channels;
        cs = t.cStride;
        for (uint32_t i = 0; i < 3; i++) {
            in[i] = t.inSize[i];
            out[i] = t.outSize[i];
            k[i] = t.ksize[i];
            s[i] = t.stride[i];
            p0[i] = t.padBefore[i];
            p1[i] = t.padAfter[i];
        }
        includePad = t.countIncludePad != 0;
        divisor = t.divisorOverride;
        chunkRows = t.chunkRows;
        chunkNum = t.chunkNum;
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < t.tailCoreNum) {
            itemCount = t.blockItems + 1;
            itemStart = blockIdx * itemCount;
        } else {
            itemCount = t.blockItems;
            itemStart = t.tailCoreNum * (t.blockItems + 1) + (blockIdx - t.tailCoreNum) * t.blockItems;
        }
        xGm.SetGlobalBuffer((__gm__ T*)x, static_cast<uint64_t>(batch) * in[0] * in[1] * in[2] * c);
        yGm.SetGlobalBuffer((__gm__ T*)y, static_cast<uint64_t>(batch) * out[0] * out[1] * out[2] * c);
        inElems = t.inRowsCap * in[2] * cs;
        outElems = chunkRows * out[2] * cs;
        pipe->InitBuffer(inQueue, t.bufferNum, inElems * sizeof(T));
        pipe->InitBuffer(accBuf, inElems * sizeof(float));
        pipe->InitBuffer(rowBuf, in[2] * cs * sizeof(float));
        pipe->InitBuffer(outFBuf, outElems * sizeof(float));
        pipe->InitBuffer(outQueue, t.bufferNum, outElems * sizeof(T));
        pipe->InitBuffer(factorBuf, out[2] * cs * sizeof(float));
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(cvtBuf, inElems * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (itemCount == 0) {
            return;
        }
        LocalTensor<float> factor = factorBuf.Get<float>();
        for (uint32_t ow = 0; ow < out[2]; ow++) {
            Duplicate(factor[ow * cs], AxisFactor(2, ow), cs);
        }
        for (uint32_t item = itemStart; item < itemStart + itemCount; item++) {
            uint32_t chunk = item % chunkNum;
            uint32_t rest = item / chunkNum;
            uint32_t od = rest % out[0];
            uint32_t n = rest / out[0];
            uint32_t oh0 = chunk * chunkRows;
            uint32_t rows = out[1] - oh0 < chunkRows ? out[1] - oh0 : chunkRows;
            int32_t hLo;
            int32_t hHi;
            Real(1, oh0, hLo, hHi);
            int32_t hLast0;
            Real(1, oh0 + rows - 1, hLast0, hHi);
            int32_t d0;
            int32_t d1;
            Real(0, od, d0, d1);
            for (int32_t d = d0; d < d1; d++) {
                Accumulate(n, static_cast<uint32_t>(d), static_cast<uint32_t>(hLo), static_cast<uint32_t>(hHi),
                           d == d0);
            }
            LocalTensor<T> y = outQueue.AllocTensor<T>();
            for (uint32_t r = 0; r < rows; r++) {
                PoolRow(oh0 + r, static_cast<uint32_t>(hLo), r, AxisFactor(0, od) * AxisFactor(1, oh0 + r));
            }
            LocalTensor<float> outF = outFBuf.Get<float>();
            uint32_t count = rows * out[2] * cs;
            if constexpr (IS_FLOAT) {
                Adds(y, outF, 0.0f, count);
            } else {
                Cast(y, outF, RoundMode::CAST_RINT, count);
            }
            outQueue.EnQue(y);
            CopyOut(n, od, oh0, rows);
        }
    }

private:
    // Real (unpadded) input range [lo, hi) of output index o on axis a.
    __aicore__ inline void Real(uint32_t a, uint32_t o, int32_t& lo, int32_t& hi)
    {
        int32_t start = static_cast<int32_t>(o * s[a]) - static_cast<int32_t>(p0[a]);
        int32_t end = start + static_cast<int32_t>(k[a]);
        lo = start > 0 ? start : 0;
        hi = end < static_cast<int32_t>(in[a]) ? end : static_cast<int32_t>(in[a]);
    }

    // 1 / (this axis' share of the divisor) of output index o on axis a.
    __aicore__ inline float AxisFactor(uint32_t a, uint32_t o)
    {
        if (divisor > 0) {
            return a == 0 ? 1.0f / static_cast<float>(divisor) : 1.0f;
        }
        int32_t start = static_cast<int32_t>(o * s[a]) - static_cast<int32_t>(p0[a]);
        int32_t end = start + static_cast<int32_t>(k[a]);
        int32_t width;
        if (includePad) {
            int32_t limit = static_cast<int32_t>(in[a] + p1[a]);
            width = (end < limit ? end : limit) - start;
        } else {
            int32_t lo;
            int32_t hi;
            Real(a, o, lo, hi);
            width = hi - lo;
        }
        return 1.0f / static_cast<float>(width);
    }

    // Adds input rows [hLo, hHi) of depth d into the float tile.
    __aicore__ inline void Accumulate(uint32_t n, uint32_t d, uint32_t hLo, uint32_t hHi, bool first)
    {
        uint32_t vecs = (hHi - hLo) * in[2];
        uint64_t src = ((static_cast<uint64_t>(n) * in[0] + d) * in[1] + hLo) * in[2] * c;
        LocalTensor<T> buf = inQueue.AllocTensor<T>();
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        if (c == cs) {
            DataCopyExtParams p{1, static_cast<uint32_t>(vecs * c * sizeof(T)), 0, 0, 0};
            DataCopyPad(buf, xGm[src], p, pad);
        } else {
            for (uint32_t v = 0; v < vecs; v += MAX_BLOCK_COUNT) {
                uint32_t nv = vecs - v < MAX_BLOCK_COUNT ? vecs - v : MAX_BLOCK_COUNT;
                DataCopyExtParams p{static_cast<uint16_t>(nv), static_cast<uint32_t>(c * sizeof(T)), 0, 0, 0};
                DataCopyPad(buf[v * cs], xGm[src + static_cast<uint64_t>(v) * c], p, pad);
            }
        }
        inQueue.EnQue(buf);
        buf = inQueue.DeQue<T>();
        LocalTensor<float> acc = accBuf.Get<float>();
        uint32_t count = vecs * cs;
        if constexpr (IS_FLOAT) {
            if (first) {
                Adds(acc, buf, 0.0f, count);
            } else {
                Add(acc, acc, buf, count);
            }
        } else {
            if (first) {
                Cast(acc, buf, RoundMode::CAST_NONE, count);
            } else {
                LocalTensor<float> cvt = cvtBuf.Get<float>();
                Cast(cvt, buf, RoundMode::CAST_NONE, count);
                Add(acc, acc, cvt, count);
            }
        }
        inQueue.FreeTensor(buf);
    }

    // Output row oh (tile row r): sum its H window into one row, then every
    // W tap into all output columns, then scale.
    __aicore__ inline void PoolRow(uint32_t oh, uint32_t hLo, uint32_t r, float rowFactor)
    {
        LocalTensor<float> acc = accBuf.Get<float>();
        LocalTensor<float> row = rowBuf.Get<float>();
        LocalTensor<float> outF = outFBuf.Get<float>();
        LocalTensor<float> factor = factorBuf.Get<float>();
        uint32_t rowLen = in[2] * cs;
        int32_t h0;
        int32_t h1;
        Real(1, oh, h0, h1);
        Adds(row, acc[(static_cast<uint32_t>(h0) - hLo) * rowLen], 0.0f, rowLen);
        for (int32_t h = h0 + 1; h < h1; h++) {
            Add(row, row, acc[(static_cast<uint32_t>(h) - hLo) * rowLen], rowLen);
        }
        LocalTensor<float> dst = outF[r * out[2] * cs];
        Duplicate(dst, 0.0f, out[2] * cs);
        uint32_t repStride = cs / FLOAT_PER_BLOCK;
        bool strided = repStride * s[2] <= MAX_REP_STRIDE;
        for (uint32_t tap = 0; tap < k[2]; tap++) {
            // Columns ow whose tap lands in the input: ow * s - p0 + tap in [0, W).
            uint32_t owLo = p0[2] > tap ? (p0[2] - tap + s[2] - 1) / s[2] : 0;
            if (in[2] + p0[2] <= tap) {
                continue;
            }
            uint32_t owHi = (in[2] - 1 + p0[2] - tap) / s[2] + 1;
            owHi = owHi < out[2] ? owHi : out[2];
            for (uint32_t ow = owLo; ow < owHi;) {
                uint32_t w = ow * s[2] + tap - p0[2];
                if (!strided) {
                    Add(dst[ow * cs], dst[ow * cs], row[w * cs], cs);
                    ow++;
                    continue;
                }
                uint32_t rep = owHi - ow < MAX_REPEAT ? owHi - ow : MAX_REPEAT;
                for (uint32_t c0 = 0; c0 < cs; c0 += FLOAT_PER_REPEAT) {
                    uint64_t lanes = cs - c0 < FLOAT_PER_REPEAT ? cs - c0 : FLOAT_PER_REPEAT;
                    Add(dst[ow * cs + c0], dst[ow * cs + c0], row[w * cs + c0], lanes, static_cast<uint8_t>(rep),
                        BinaryRepeatParams(1, 1, 1, static_cast<uint8_t>(repStride), static_cast<uint8_t>(repStride),
                                           static_cast<uint8_t>(repStride * s[2])));
                }
                ow += rep;
            }
        }
        Mul(dst, dst, factor, out[2] * cs);
        Muls(dst, dst, rowFactor, out[2] * cs);
    }

    __aicore__ inline void CopyOut(uint32_t n, uint32_t od, uint32_t oh0, uint32_t rows)
    {
        LocalTensor<T> y = outQueue.DeQue<T>();
        uint32_t vecs = rows * out[2];
        uint64_t dst = ((static_cast<uint64_t>(n) * out[0] + od) * out[1] + oh0) * out[2] * c;
        if (c == cs) {
            DataCopyExtParams p{1, static_cast<uint32_t>(vecs * c * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[dst], y, p);
        } else {
            for (uint32_t v = 0; v < vecs; v += MAX_BLOCK_COUNT) {
                uint32_t nv = vecs - v < MAX_BLOCK_COUNT ? vecs - v : MAX_BLOCK_COUNT;
                DataCopyExtParams p{static_cast<uint16_t>(nv), static_cast<uint32_t>(c * sizeof(T)), 0, 0, 0};
                DataCopyPad(yGm[dst + static_cast<uint64_t>(v) * c], y[v * cs], p);
            }
        }
        outQueue.FreeTensor(y);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> accBuf;
    TBuf<TPosition::VECCALC> cvtBuf;
    TBuf<TPosition::VECCALC> rowBuf;
    TBuf<TPosition::VECCALC> outFBuf;
    TBuf<TPosition::VECCALC> factorBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t batch = 0, c = 0, cs = 0;
    uint32_t in[3] = {}, out[3] = {}, k[3] = {}, s[3] = {}, p0[3] = {}, p1[3] = {};
    bool includePad = true;
    uint32_t divisor = 0, chunkRows = 0, chunkNum = 0, inElems = 0, outElems = 0;
    uint32_t itemStart = 0, itemCount = 0;
};

extern "C" __global__ __aicore__ void avg_pool3_d(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelAvgPool3D<half> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelAvgPool3D<float> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelAvgPool3D<bfloat16_t> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
