// ScatterReduce kernel: y = torch.scatter_reduce(x, dim, index, src, reduce,
// include_self) for float32 and float16 (float32 inside).
//
// x is [outer, dimX, inner] and index/src are [outer, dimSrc, inner] around
// dim; src[b, j, s] goes to y[b, index[b, j, s], s], so targets of different
// (b, s) never mix. A work unit (tiling) is one outer slice b, one chunk of
// inner columns [h0, h0 + w) and one block of target rows [r0, r0 + R):
//   1. its targets, x[b, r0:r0+R, h0:h0+w], come to UB as float32 in one
//      strided DataCopyPad (float16: one copy and one Cast); the counts
//      start at 1 (include_self) or 0;
//   2. the src and index rows stream through double-buffered queues, each
//      tile one strided DataCopyPad per tensor (float16 src cast to float32
//      with one Cast), and the scalar unit reduces every element whose index
//      falls in the row block into its target (a read, the reduction and a
//      write per element: A2 has no vector scatter, so this is the
//      operator's scalar part);
//   3. mean divides by the counts (Maxs, Div); float16 casts back once;
//   4. the block goes back to y in one strided DataCopyPad.
// The vector path (include_self and not mean, when the host's cost model
// prefers it) replaces step 2's scalar loop: per target row r of the block,
// CompareScalar(index tile == r) makes a mask, Select takes the values
// where it is set and the reduction's identity elsewhere, a halving tree
// (Add, Mul, Max or Min) folds the tile's rows and one more instruction
// combines the result into row r of the targets. Max and Min propagate NaN.
// Without include_self a target's first value replaces x, so a target never
// hit keeps x and a hit one holds the reduction of its values only.
// amax and amin propagate NaN as torch does. Index values outside the row
// block are skipped (those outside [0, dimX) are never applied).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t ALIGN_ELEMS = 16;  // columns per UB row step (32 B of float16)

constexpr int32_t RED_SUM = 0;
constexpr int32_t RED_PROD = 1;
constexpr int32_t RED_MEAN = 2;
constexpr int32_t RED_AMAX = 3;
constexpr int32_t RED_AMIN = 4;

template <typename T, int32_t RED, bool SELF, bool VEC>
class KernelScatterReduce {
public:
    static constexpr bool COUNTED = RED == RED_MEAN || !SELF;
    static_assert(!(VEC && COUNTED), "the vector path keeps no counts");
    static constexpr bool HALF = IsSameType<T, half>::value;

    __aicore__ inline KernelScatterReduce() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR src, GM_ADDR y, const TilingData& tiling,
                                TPipe* pipe)
    {
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < tiling.tailCoreNum) {
            firstUnit = blockIdx * (tiling.blockUnits + 1);
            unitCount = tiling.blockUnits + 1;
        } else {
            firstUnit = tiling.tailCoreNum * (tiling.blockUnits + 1) + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            unitCount = tiling.blockUnits;
        }
        dimX = tiling.dimX;
        dimSrc = tiling.dimSrc;
        inner = tiling.inner;
        chunkLen = tiling.chunkLen;
        chunkNum = tiling.chunkNum;
        blockRows = tiling.blockRows;
        rowBlockNum = tiling.rowBlockNum;
        tileRows = tiling.tileRows;
        uint64_t xLen = static_cast<uint64_t>(tiling.outer) * dimX * inner;
        uint64_t srcLen = static_cast<uint64_t>(tiling.outer) * dimSrc * inner;
        xGm.SetGlobalBuffer((__gm__ T*)x, xLen);
        yGm.SetGlobalBuffer((__gm__ T*)y, xLen);
        srcGm.SetGlobalBuffer((__gm__ T*)src, srcLen);
        indexGm.SetGlobalBuffer((__gm__ int32_t*)index, srcLen);

        uint32_t targets = blockRows * chunkLen;
        tileElems = (tileRows * chunkLen + 63) / 64 * 64;
        pipe->InitBuffer(accBuf, targets * sizeof(float));
        if constexpr (COUNTED) {
            pipe->InitBuffer(countBuf, targets * sizeof(float));
        }
        if constexpr (HALF) {
            pipe->InitBuffer(stageBuf, targets * sizeof(half));
            pipe->InitBuffer(srcFloatBuf, tileElems * sizeof(float));
        }
        pipe->InitBuffer(srcQueue, tiling.bufferNum, tileElems * sizeof(T));
        pipe->InitBuffer(indexQueue, tiling.bufferNum, tileElems * sizeof(int32_t));
        if constexpr (VEC) {
            pipe->InitBuffer(indexFloatBuf, tileElems * sizeof(float));
            pipe->InitBuffer(selectBuf, tileElems * sizeof(float));
            pipe->InitBuffer(maskBuf, (tileElems / 8 + 31) / 32 * 32);
        }
        vsEvent = static_cast<int32_t>(pipe->FetchEventID(HardEvent::V_S));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t u = 0; u < unitCount; u++) {
            uint32_t unit = firstUnit + u;
            uint32_t rowBlock = unit % rowBlockNum;
            uint32_t rest = unit / rowBlockNum;
            uint32_t chunk = rest % chunkNum;
            uint32_t b = rest / chunkNum;
            uint32_t h0 = chunk * chunkLen;
            uint32_t r0 = rowBlock * blockRows;
            uint32_t width = inner - h0 < chunkLen ? inner - h0 : chunkLen;
            uint32_t rows = dimX - r0 < blockRows ? dimX - r0 : blockRows;
            Unit(b, h0, width, r0, rows);
        }
    }

private:
    __aicore__ inline void Unit(uint32_t b, uint32_t h0, uint32_t width, uint32_t r0, uint32_t rows)
    {
        uint32_t wPad = (width + ALIGN_ELEMS - 1) / ALIGN_ELEMS * ALIGN_ELEMS;
        uint32_t n = rows * wPad;
        uint64_t xOffset = (static_cast<uint64_t>(b) * dimX + r0) * inner + h0;
        LocalTensor<float> acc = accBuf.Get<float>();
        // 1. The targets (the previous unit's store must be done first).
        PipeBarrier<PIPE_ALL>();
        if constexpr (HALF) {
            LocalTensor<half> stage = stageBuf.Get<half>();
            CopyRowsIn(stage, xGm, xOffset, rows, width, wPad);
            PipeBarrier<PIPE_ALL>();
            Cast(acc, stage, RoundMode::CAST_NONE, n);
        } else {
            CopyRowsIn(acc, xGm, xOffset, rows, width, wPad);
        }
        if constexpr (COUNTED) {
            Duplicate(countBuf.Get<float>(), SELF ? 1.0f : 0.0f, n);
        }
        PipeBarrier<PIPE_ALL>();
        // 2. Every src row of the slice.
        uint64_t srcBase = static_cast<uint64_t>(b) * dimSrc * inner + h0;
        for (uint32_t j0 = 0; j0 < dimSrc; j0 += tileRows) {
            uint32_t tile = dimSrc - j0 < tileRows ? dimSrc - j0 : tileRows;
            CopyIn(srcBase + static_cast<uint64_t>(j0) * inner, tile, width, wPad);
            Reduce(tile, width, wPad, r0, rows);
        }
        // 3. Mean, the cast back; 4. the store.
        PipeBarrier<PIPE_ALL>();
        if constexpr (RED == RED_MEAN) {
            LocalTensor<float> count = countBuf.Get<float>();
            if constexpr (!SELF) {
                Maxs(count, count, 1.0f, n);
            }
            Div(acc, acc, count, n);
        }
        if constexpr (HALF) {
            LocalTensor<half> stage = stageBuf.Get<half>();
            Cast(stage, acc, RoundMode::CAST_RINT, n);
            PipeBarrier<PIPE_ALL>();
            CopyRowsOut(yGm, xOffset, stage, rows, width, wPad);
        } else {
            PipeBarrier<PIPE_ALL>();
            CopyRowsOut(yGm, xOffset, acc, rows, width, wPad);
        }
    }

    // `rows` rows of `width` elements from gm[offset], `inner` apart, into UB
    // rows of wPad elements.
    template <typename U>
    __aicore__ inline void CopyRowsIn(const LocalTensor<U>& dst, const GlobalTensor<U>& gm, uint64_t offset,
                                      uint32_t rows, uint32_t width, uint32_t wPad)
    {
        uint32_t used = (width * sizeof(U) + BLOCK_BYTES - 1) / BLOCK_BYTES;
        uint32_t gap = wPad * sizeof(U) / BLOCK_BYTES - used;
        DataCopyExtParams params{static_cast<uint16_t>(rows), static_cast<uint32_t>(width * sizeof(U)),
                                 static_cast<uint32_t>((inner - width) * sizeof(U)), gap, 0};
        DataCopyPadExtParams<U> pad{false, 0, 0, static_cast<U>(0)};
        DataCopyPad(dst, gm[offset], params, pad);
    }

    template <typename U>
    __aicore__ inline void CopyRowsOut(const GlobalTensor<U>& gm, uint64_t offset, const LocalTensor<U>& src,
                                       uint32_t rows, uint32_t width, uint32_t wPad)
    {
        uint32_t used = (width * sizeof(U) + BLOCK_BYTES - 1) / BLOCK_BYTES;
        uint32_t gap = wPad * sizeof(U) / BLOCK_BYTES - used;
        DataCopyExtParams params{static_cast<uint16_t>(rows), static_cast<uint32_t>(width * sizeof(U)), gap,
                                 static_cast<uint32_t>((inner - width) * sizeof(U)), 0};
        DataCopyPad(gm[offset], src, params);
    }

    __aicore__ inline void CopyIn(uint64_t offset, uint32_t tile, uint32_t width, uint32_t wPad)
    {
        LocalTensor<T> srcLocal = srcQueue.AllocTensor<T>();
        LocalTensor<int32_t> indexLocal = indexQueue.AllocTensor<int32_t>();
        CopyRowsIn(srcLocal, srcGm, offset, tile, width, wPad);
        CopyRowsIn(indexLocal, indexGm, offset, tile, width, wPad);
        srcQueue.EnQue(srcLocal);
        indexQueue.EnQue(indexLocal);
    }

    __aicore__ inline void Reduce(uint32_t tile, uint32_t width, uint32_t wPad, uint32_t r0, uint32_t rows)
    {
        LocalTensor<T> srcLocal = srcQueue.DeQue<T>();
        LocalTensor<int32_t> indexLocal = indexQueue.DeQue<int32_t>();
        LocalTensor<float> values;
        if constexpr (HALF) {
            values = srcFloatBuf.Get<float>();
            Cast(values, srcLocal, RoundMode::CAST_NONE, VEC ? tileElems : tile * wPad);
            if constexpr (!VEC) {
                SetFlag<HardEvent::V_S>(vsEvent);
                WaitFlag<HardEvent::V_S>(vsEvent);
            }
        } else {
            values = srcLocal;
        }
        if constexpr (VEC) {
            ReduceVector(values, indexLocal, tile, wPad, r0, rows);
            srcQueue.FreeTensor(srcLocal);
            indexQueue.FreeTensor(indexLocal);
            return;
        }
        LocalTensor<float> acc = accBuf.Get<float>();
        LocalTensor<float> count;
        if constexpr (COUNTED) {
            count = countBuf.Get<float>();
        }
        for (uint32_t j = 0; j < tile; j++) {
            uint32_t base = j * wPad;
            for (uint32_t s = 0; s < width; s++) {
                uint32_t t = static_cast<uint32_t>(indexLocal.GetValue(base + s) - static_cast<int32_t>(r0));
                if (t >= rows) {
                    continue;
                }
                uint32_t p = t * wPad + s;
                float v = values.GetValue(base + s);
                float a = acc.GetValue(p);
                if constexpr (COUNTED) {
                    float c = count.GetValue(p);
                    a = (!SELF && c == 0.0f) ? v : Step(a, v);
                    count.SetValue(p, c + 1.0f);
                } else {
                    a = Step(a, v);
                }
                acc.SetValue(p, a);
            }
        }
        srcQueue.FreeTensor(srcLocal);
        indexQueue.FreeTensor(indexLocal);
    }

    // The one-hot vector reduction of a tile into the block's target rows.
    __aicore__ inline void ReduceVector(const LocalTensor<float>& values, const LocalTensor<int32_t>& indexLocal,
                                        uint32_t tile, uint32_t wPad, uint32_t r0, uint32_t rows)
    {
        LocalTensor<float> acc = accBuf.Get<float>();
        LocalTensor<float> index = indexFloatBuf.Get<float>();
        LocalTensor<float> picked = selectBuf.Get<float>();
        LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
        Cast(index, indexLocal, RoundMode::CAST_NONE, tileElems);  // exact below 2^24
        float big = 3.0e38f;
        float inf = big * big;
        float identity = RED == RED_PROD ? 1.0f : (RED == RED_AMAX ? -inf : (RED == RED_AMIN ? inf : 0.0f));
        for (uint32_t r = 0; r < rows; r++) {
            CompareScalar(mask, index, static_cast<float>(r0 + r), CMPMODE::EQ, tileElems);
            Select(picked, mask, values, identity, SELMODE::VSEL_TENSOR_SCALAR_MODE, tileElems);
            uint32_t left = tile;
            while (left > 1) {
                uint32_t moved = left / 2;
                Combine(picked, picked, picked[(left - moved) * wPad], moved * wPad);
                left -= moved;
            }
            Combine(acc[r * wPad], acc[r * wPad], picked, wPad);
        }
    }

    __aicore__ inline void Combine(const LocalTensor<float>& dst, const LocalTensor<float>& a,
                                   const LocalTensor<float>& b, uint32_t n)
    {
        if constexpr (RED == RED_SUM || RED == RED_MEAN) {
            Add(dst, a, b, n);
        } else if constexpr (RED == RED_PROD) {
            Mul(dst, a, b, n);
        } else if constexpr (RED == RED_AMAX) {
            Max(dst, a, b, n);
        } else {
            Min(dst, a, b, n);
        }
    }

    __aicore__ inline float Step(float a, float v)
    {
        if constexpr (RED == RED_SUM || RED == RED_MEAN) {
            return a + v;
        } else if constexpr (RED == RED_PROD) {
            return a * v;
        } else if constexpr (RED == RED_AMAX) {
            return (v != v || v > a) ? v : a;  // a NaN a stays
        } else {
            return (v != v || v < a) ? v : a;
        }
    }

private:
    TBuf<TPosition::VECCALC> accBuf;
    TBuf<TPosition::VECCALC> countBuf;
    TBuf<TPosition::VECCALC> stageBuf;
    TBuf<TPosition::VECCALC> srcFloatBuf;
    TBuf<TPosition::VECCALC> indexFloatBuf;
    TBuf<TPosition::VECCALC> selectBuf;
    TBuf<TPosition::VECCALC> maskBuf;
    TQue<QuePosition::VECIN, BUFFER_NUM> srcQueue;
    TQue<QuePosition::VECIN, BUFFER_NUM> indexQueue;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    GlobalTensor<T> srcGm;
    GlobalTensor<int32_t> indexGm;
    int32_t vsEvent = 0;
    uint32_t firstUnit = 0;
    uint32_t unitCount = 0;
    uint32_t dimX = 0;
    uint32_t dimSrc = 0;
    uint32_t inner = 0;
    uint32_t chunkLen = 0;
    uint32_t chunkNum = 0;
    uint32_t blockRows = 0;
    uint32_t rowBlockNum = 0;
    uint32_t tileRows = 0;
    uint32_t tileElems = 0;
};

template <typename T, int32_t RED, bool SELF, bool VEC = false, typename TilingData>
__aicore__ inline void RunScatterReduce(GM_ADDR x, GM_ADDR index, GM_ADDR src, GM_ADDR y, const TilingData& tiling,
                                        TPipe* pipe)
{
    KernelScatterReduce<T, RED, SELF, VEC> op;
    op.Init(x, index, src, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void scatter_reduce(GM_ADDR x, GM_ADDR index, GM_ADDR src, GM_ADDR y,
                                                     GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunScatterReduce<float, RED_SUM, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunScatterReduce<float, RED_SUM, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunScatterReduce<float, RED_PROD, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunScatterReduce<float, RED_PROD, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(5)) {
        RunScatterReduce<float, RED_MEAN, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(6)) {
        RunScatterReduce<float, RED_MEAN, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(7)) {
        RunScatterReduce<float, RED_AMAX, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(8)) {
        RunScatterReduce<float, RED_AMAX, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(9)) {
        RunScatterReduce<float, RED_AMIN, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(10)) {
        RunScatterReduce<float, RED_AMIN, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(11)) {
        RunScatterReduce<half, RED_SUM, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(12)) {
        RunScatterReduce<half, RED_SUM, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(13)) {
        RunScatterReduce<half, RED_PROD, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(14)) {
        RunScatterReduce<half, RED_PROD, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(15)) {
        RunScatterReduce<half, RED_MEAN, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(16)) {
        RunScatterReduce<half, RED_MEAN, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(17)) {
        RunScatterReduce<half, RED_AMAX, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(18)) {
        RunScatterReduce<half, RED_AMAX, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(19)) {
        RunScatterReduce<half, RED_AMIN, false>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(20)) {
        RunScatterReduce<half, RED_AMIN, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(22)) {
        RunScatterReduce<float, RED_SUM, true, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(24)) {
        RunScatterReduce<float, RED_PROD, true, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(28)) {
        RunScatterReduce<float, RED_AMAX, true, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(30)) {
        RunScatterReduce<float, RED_AMIN, true, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(32)) {
        RunScatterReduce<half, RED_SUM, true, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(34)) {
        RunScatterReduce<half, RED_PROD, true, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(38)) {
        RunScatterReduce<half, RED_AMAX, true, true>(x, index, src, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(40)) {
        RunScatterReduce<half, RED_AMIN, true, true>(x, index, src, y, tilingData, &pipe);
    }
}
