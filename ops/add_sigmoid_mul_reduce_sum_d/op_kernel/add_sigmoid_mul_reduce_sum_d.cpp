// AddSigmoidMulReduceSumD kernel (float16 in and out, float32 inside):
// out[b, h] = sum over s of sigmoid((a0[b, s, h] + a1[h]) * m0) * m1[b, s] * m2[b, s, h].
//
// Work units (tiling): one batch b, one part of the S rows and one chunk of
// hidden columns [h0, h0 + w); every core takes a run of units. A unit
// streams its rows
// through UB in tiles of tileRows rows with double-buffered queues for a0,
// m2 and m1, so the copies overlap the vector work. A tile of a0 or m2 is
// one strided DataCopyPad (rows of w elements, H apart in GM; each row
// starts a 32 B block in UB, wPad columns apart), or one DataCopy when the
// chunk is the whole, block-aligned row.
//
// Per tile, in float32 (n = rows * wPad):
//   t = a0 + a1           Add with a zero repeat stride on a1 (one
//                         instruction per 64 columns covers every row)
//   t = exp(-m0 * t)      Muls, Exp
//   u = m2 / (1 + t)      Adds, Div: m2 * sigmoid((a0 + a1) * m0)
//   u = u * m1[row]       m1 broadcast to one 32 B block per row (Brcb),
//                         then Mul with a zero block stride on it
//   sum += rows of u      a halving Add tree over the rows, then one Add
// At the end of a unit the float32 sums are rounded to float16 once and
// stored (DataCopyPad for a chunk that is not a multiple of 32 B). When S is
// split into parts (so that B * parts * chunks units spread evenly over the
// cores), a unit stores its float32 partial sums in the workspace instead,
// every core waits at SyncAll, and the final units (batch, chunk) add the
// parts up (one strided copy, a halving Add tree), round once and store.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t HALF_BLOCK = 16;  // float16 elements per 32 B block
constexpr uint32_t FLOAT_REPEAT = 64;  // float32 lanes of one repeat

class KernelAddSigmoidMulReduceSum {
public:
    __aicore__ inline KernelAddSigmoidMulReduceSum() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR a0, GM_ADDR a1, GM_ADDR m0, GM_ADDR m1, GM_ADDR m2, GM_ADDR out,
                                GM_ADDR workspace, const TilingData& tiling, TPipe* pipe)
    {
        uint32_t blockIdx = GetBlockIdx();
        if (blockIdx < tiling.finalTailCoreNum) {
            firstFinal = blockIdx * (tiling.finalUnits + 1);
            finalCount = tiling.finalUnits + 1;
        } else {
            firstFinal = tiling.finalTailCoreNum * (tiling.finalUnits + 1) +
                         (blockIdx - tiling.finalTailCoreNum) * tiling.finalUnits;
            finalCount = tiling.finalUnits;
        }
        parts = tiling.parts;
        partRows = tiling.partRows;
        if (blockIdx < tiling.tailCoreNum) {
            firstUnit = blockIdx * (tiling.blockUnits + 1);
            unitCount = tiling.blockUnits + 1;
        } else {
            firstUnit = tiling.tailCoreNum * (tiling.blockUnits + 1) + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            unitCount = tiling.blockUnits;
        }
        seq = tiling.seq;
        hidden = tiling.hidden;
        chunkLen = tiling.chunkLen;
        chunkNum = tiling.chunkNum;
        tileRows = tiling.tileRows;
        uint64_t rows = static_cast<uint64_t>(tiling.batch) * seq;
        a0Gm.SetGlobalBuffer((__gm__ half*)a0, rows * hidden);
        a1Gm.SetGlobalBuffer((__gm__ half*)a1, hidden);
        m0Gm.SetGlobalBuffer((__gm__ half*)m0, 1);
        m1Gm.SetGlobalBuffer((__gm__ half*)m1, rows);
        m2Gm.SetGlobalBuffer((__gm__ half*)m2, rows * hidden);
        outGm.SetGlobalBuffer((__gm__ half*)out, static_cast<uint64_t>(tiling.batch) * hidden);
        if (parts > 1) {
            partGm.SetGlobalBuffer((__gm__ float*)workspace, static_cast<uint64_t>(tiling.batch) * parts * hidden);
        }

        uint32_t rows16 = (tileRows + HALF_BLOCK - 1) / HALF_BLOCK * HALF_BLOCK;
        uint32_t tileElems = tileRows * chunkLen;
        pipe->InitBuffer(inQueueA0, tiling.bufferNum, tileElems * sizeof(half));
        pipe->InitBuffer(inQueueM2, tiling.bufferNum, tileElems * sizeof(half));
        pipe->InitBuffer(inQueueM1, tiling.bufferNum, rows16 * sizeof(half));
        pipe->InitBuffer(outQueue, 1, chunkLen * sizeof(float));
        pipe->InitBuffer(tBuf, tileElems * sizeof(float));
        pipe->InitBuffer(uBuf, tileElems * sizeof(float));
        pipe->InitBuffer(m1FloatBuf, rows16 * sizeof(float));
        pipe->InitBuffer(m1BlockBuf, rows16 * 8 * sizeof(float));
        pipe->InitBuffer(inQueueA1, 1, chunkLen * sizeof(half));
        pipe->InitBuffer(a1FloatBuf, chunkLen * sizeof(float));
        pipe->InitBuffer(sumBuf, chunkLen * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        negScale = -static_cast<float>(m0Gm.GetValue(0));
        for (uint32_t u = 0; u < unitCount; u++) {
            uint32_t unit = firstUnit + u;
            uint32_t chunk = unit % chunkNum;
            uint32_t rest = unit / chunkNum;
            uint32_t part = rest % parts;
            uint32_t b = rest / parts;
            uint32_t h0 = chunk * chunkLen;
            uint32_t width = hidden - h0 < chunkLen ? hidden - h0 : chunkLen;
            uint32_t s0 = part * partRows;
            uint32_t rows = seq - s0 < partRows ? seq - s0 : partRows;
            Unit(b, part, s0, rows, h0, width);
        }
        if (parts == 1) {
            return;
        }
        SyncAll();
        for (uint32_t u = 0; u < finalCount; u++) {
            uint32_t unit = firstFinal + u;
            uint32_t b = unit / chunkNum;
            uint32_t h0 = (unit - b * chunkNum) * chunkLen;
            uint32_t width = hidden - h0 < chunkLen ? hidden - h0 : chunkLen;
            Final(b, h0, width);
        }
    }

private:
    __aicore__ inline void Unit(uint32_t b, uint32_t part, uint32_t first, uint32_t count, uint32_t h0,
                                uint32_t width)
    {
        uint32_t wPad = (width + HALF_BLOCK - 1) / HALF_BLOCK * HALF_BLOCK;
        // a1 of the chunk, in float32; the sums start at zero.
        LocalTensor<half> a1Half = inQueueA1.AllocTensor<half>();
        LocalTensor<float> a1 = a1FloatBuf.Get<float>();
        LocalTensor<float> sum = sumBuf.Get<float>();
        CopyRows(a1Half, a1Gm, h0, 1, width, wPad);
        inQueueA1.EnQue(a1Half);
        a1Half = inQueueA1.DeQue<half>();
        Cast(a1, a1Half, RoundMode::CAST_NONE, wPad);
        inQueueA1.FreeTensor(a1Half);
        Duplicate(sum, 0.0f, wPad);

        uint64_t rowBase = static_cast<uint64_t>(b) * seq + first;
        uint32_t tileNum = (count + tileRows - 1) / tileRows;
        for (uint32_t t = 0; t < tileNum; t++) {
            uint32_t s0 = t * tileRows;
            uint32_t rows = count - s0 < tileRows ? count - s0 : tileRows;
            CopyIn(rowBase + s0, h0, rows, width, wPad);
            Compute(rows, wPad, a1, sum);
        }

        if (parts == 1) {
            StoreSum(sum, b, h0, width, wPad);
            return;
        }
        // The float32 partial sums of this part, into the workspace.
        LocalTensor<float> partLocal = outQueue.AllocTensor<float>();
        Adds(partLocal, sum, 0.0f, wPad);
        outQueue.EnQue(partLocal);
        partLocal = outQueue.DeQue<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(width * sizeof(float)), 0, 0, 0};
        DataCopyPad(partGm[(static_cast<uint64_t>(b) * parts + part) * hidden + h0], partLocal, params);
        outQueue.FreeTensor(partLocal);
    }

    // Rounds the sums of (b, chunk) to float16 once and stores them.
    __aicore__ inline void StoreSum(const LocalTensor<float>& sum, uint32_t b, uint32_t h0, uint32_t width,
                                    uint32_t wPad)
    {
        LocalTensor<half> outLocal = outQueue.AllocTensor<half>();
        Cast(outLocal, sum, RoundMode::CAST_RINT, wPad);
        outQueue.EnQue(outLocal);
        outLocal = outQueue.DeQue<half>();
        CopyRowsOut(static_cast<uint64_t>(b) * hidden + h0, outLocal, width);
        outQueue.FreeTensor(outLocal);
    }

    // Adds up the parts' partial sums of (b, chunk) and stores them.
    __aicore__ inline void Final(uint32_t b, uint32_t h0, uint32_t width)
    {
        uint32_t wPad = (width + HALF_BLOCK - 1) / HALF_BLOCK * HALF_BLOCK;
        uint32_t used = (width * sizeof(float) + 31) / 32;
        uint32_t gap = wPad * sizeof(float) / 32 - used;
        LocalTensor<float> t = tBuf.Get<float>();
        LocalTensor<float> sum = sumBuf.Get<float>();
        PipeBarrier<PIPE_ALL>();
        Duplicate(sum, 0.0f, wPad);
        for (uint32_t q0 = 0; q0 < parts; q0 += tileRows) {
            uint32_t group = parts - q0 < tileRows ? parts - q0 : tileRows;
            DataCopyExtParams params{static_cast<uint16_t>(group), static_cast<uint32_t>(width * sizeof(float)),
                                     static_cast<uint32_t>((hidden - width) * sizeof(float)), gap, 0};
            DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
            DataCopyPad(t, partGm[(static_cast<uint64_t>(b) * parts + q0) * hidden + h0], params, pad);
            PipeBarrier<PIPE_ALL>();
            uint32_t left = group;
            while (left > 1) {
                uint32_t moved = left / 2;
                Add(t, t, t[(left - moved) * wPad], moved * wPad);
                left -= moved;
            }
            Add(sum, sum, t, wPad);
            PipeBarrier<PIPE_ALL>();
        }
        StoreSum(sum, b, h0, width, wPad);
    }

    // `rows` rows of `width` elements from gm[offset], H apart, into UB
    // rows wPad apart.
    __aicore__ inline void CopyRows(const LocalTensor<half>& dst, const GlobalTensor<half>& gm, uint64_t offset,
                                    uint32_t rows, uint32_t width, uint32_t wPad)
    {
        if (width == wPad && (width == hidden || rows == 1)) {
            DataCopy(dst, gm[offset], rows * width);
        } else {
            DataCopyExtParams params{static_cast<uint16_t>(rows), static_cast<uint32_t>(width * sizeof(half)),
                                     static_cast<uint32_t>((hidden - width) * sizeof(half)), 0, 0};
            DataCopyPadExtParams<half> pad{true, 0, static_cast<uint8_t>(wPad - width), static_cast<half>(0.0f)};
            DataCopyPad(dst, gm[offset], params, pad);
        }
    }

    __aicore__ inline void CopyIn(uint64_t row, uint32_t h0, uint32_t rows, uint32_t width, uint32_t wPad)
    {
        LocalTensor<half> a0Local = inQueueA0.AllocTensor<half>();
        LocalTensor<half> m2Local = inQueueM2.AllocTensor<half>();
        LocalTensor<half> m1Local = inQueueM1.AllocTensor<half>();
        uint64_t offset = row * hidden + h0;
        CopyRows(a0Local, a0Gm, offset, rows, width, wPad);
        CopyRows(m2Local, m2Gm, offset, rows, width, wPad);
        if (rows % HALF_BLOCK == 0) {
            DataCopy(m1Local, m1Gm[row], rows);
        } else {
            DataCopyExtParams params{1, static_cast<uint32_t>(rows * sizeof(half)), 0, 0, 0};
            DataCopyPadExtParams<half> pad{false, 0, 0, static_cast<half>(0.0f)};
            DataCopyPad(m1Local, m1Gm[row], params, pad);
        }
        inQueueA0.EnQue(a0Local);
        inQueueM2.EnQue(m2Local);
        inQueueM1.EnQue(m1Local);
    }

    __aicore__ inline void Compute(uint32_t rows, uint32_t wPad, const LocalTensor<float>& a1,
                                   const LocalTensor<float>& sum)
    {
        LocalTensor<half> a0Local = inQueueA0.DeQue<half>();
        LocalTensor<half> m2Local = inQueueM2.DeQue<half>();
        LocalTensor<half> m1Local = inQueueM1.DeQue<half>();
        LocalTensor<float> t = tBuf.Get<float>();
        LocalTensor<float> u = uBuf.Get<float>();
        LocalTensor<float> m1f = m1FloatBuf.Get<float>();
        LocalTensor<float> m1b = m1BlockBuf.Get<float>();
        uint32_t n = rows * wPad;
        uint8_t rowBlocks = static_cast<uint8_t>(wPad / 8);  // float32 blocks per row

        Cast(t, a0Local, RoundMode::CAST_NONE, n);
        Cast(u, m2Local, RoundMode::CAST_NONE, n);
        inQueueA0.FreeTensor(a0Local);
        inQueueM2.FreeTensor(m2Local);
        // t += a1 on every row: src1 repeats with stride 0.
        for (uint32_t c = 0; c < wPad; c += FLOAT_REPEAT) {
            uint64_t lanes = wPad - c < FLOAT_REPEAT ? wPad - c : FLOAT_REPEAT;
            Add(t[c], t[c], a1[c], lanes, static_cast<uint8_t>(rows), {1, 1, 1, rowBlocks, rowBlocks, 0});
        }
        Muls(t, t, negScale, n);
        Exp(t, t, n);
        Adds(t, t, 1.0f, n);
        Div(u, u, t, n);
        // u *= m1[row]: each m1 value fills one 32 B block (Brcb), read with
        // block stride 0 across the row.
        uint32_t rows8 = (rows + 7) / 8 * 8;
        Cast(m1f, m1Local, RoundMode::CAST_NONE, rows8);
        inQueueM1.FreeTensor(m1Local);
        Brcb(m1b, m1f, static_cast<uint8_t>(rows8 / 8), {1, 8});
        for (uint32_t c = 0; c < wPad; c += FLOAT_REPEAT) {
            uint64_t lanes = wPad - c < FLOAT_REPEAT ? wPad - c : FLOAT_REPEAT;
            Mul(u[c], u[c], m1b, lanes, static_cast<uint8_t>(rows), {1, 1, 0, rowBlocks, rowBlocks, 1});
        }
        // Sum the rows: halve the row count with one Add each time.
        uint32_t left = rows;
        while (left > 1) {
            uint32_t moved = left / 2;
            Add(u, u, u[(left - moved) * wPad], moved * wPad);
            left -= moved;
        }
        Add(sum, sum, u, wPad);
    }

    __aicore__ inline void CopyRowsOut(uint64_t offset, const LocalTensor<half>& src, uint32_t width)
    {
        if (width % HALF_BLOCK == 0) {
            DataCopy(outGm[offset], src, width);
        } else {
            DataCopyExtParams params{1, static_cast<uint32_t>(width * sizeof(half)), 0, 0, 0};
            DataCopyPad(outGm[offset], src, params);
        }
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueA0;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueM2;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueM1;
    TQue<QuePosition::VECIN, 1> inQueueA1;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<TPosition::VECCALC> tBuf;
    TBuf<TPosition::VECCALC> uBuf;
    TBuf<TPosition::VECCALC> m1FloatBuf;
    TBuf<TPosition::VECCALC> m1BlockBuf;
    TBuf<TPosition::VECCALC> a1FloatBuf;
    TBuf<TPosition::VECCALC> sumBuf;
    GlobalTensor<half> a0Gm;
    GlobalTensor<half> a1Gm;
    GlobalTensor<half> m0Gm;
    GlobalTensor<half> m1Gm;
    GlobalTensor<half> m2Gm;
    GlobalTensor<half> outGm;
    GlobalTensor<float> partGm;
    float negScale = 0.0f;
    uint32_t firstUnit = 0;
    uint32_t firstFinal = 0;
    uint32_t finalCount = 0;
    uint32_t parts = 1;
    uint32_t partRows = 0;
    uint32_t unitCount = 0;
    uint32_t seq = 0;
    uint32_t hidden = 0;
    uint32_t chunkLen = 0;
    uint32_t chunkNum = 0;
    uint32_t tileRows = 0;
};

extern "C" __global__ __aicore__ void add_sigmoid_mul_reduce_sum_d(GM_ADDR add_0_input0, GM_ADDR add_0_input1,
                                                                   GM_ADDR mul_0_input1, GM_ADDR mult_1_input1,
                                                                   GM_ADDR mult_2_input1, GM_ADDR out,
                                                                   GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelAddSigmoidMulReduceSum op;
        op.Init(add_0_input0, add_0_input1, mul_0_input1, mult_1_input1, mult_2_input1, out, workspace, tilingData,
                &pipe);
        op.Process();
    }
}
