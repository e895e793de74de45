// Eye kernel: y[b, i, j] = 1 if i == j else 0 (float16, float32, int32). Every
// element is written, so y needs no zero initialisation.
//
// In a matrix of R x C the ones sit at flat positions k * (C + 1) for
// k < min(R, C). Each core builds one pattern tile in UB, once, with vector
// arithmetic on a float index (no per-element scalar work):
//   s = index mod L (L = R * C in batch mode: the tile holds whole matrices;
//       no wrap in periodic mode: the tile holds whole periods of C + 1),
//   j = floor(s / (C + 1)), r = s - j * (C + 1),
//   one = (r + max(j - (min(R, C) - 1), 0)) == 0,
// where floor(a / b) is Cast-FLOOR(a * (1 / b) + 0.5 / b), exact for the
// integers of a tile. Then MTE3 only streams: batch mode writes the pattern
// once per group of matrices; periodic mode writes, per matrix piece, zeros
// up to the first diagonal one, the pattern (every DMA starts at a one, so
// the period lines up), and zeros after the last one. No DMA waits for
// vector work, so they run back to back.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_PER_REPEAT = 64;
constexpr int32_t MODE_BATCH = 1;
constexpr int32_t MODE_PERIODIC = 2;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T, int32_t MODE>
class KernelEye {
public:
    __aicore__ inline KernelEye() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR y, const TilingData& tiling, TPipe* pipe)
    {
        matRows = tiling.matRows;
        cols = tiling.cols;
        patternElems = tiling.patternElems;
        zeroElems = tiling.zeroElems;

        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        if (blockIdx < tiling.tailCoreNum) {
            unitStart = blockIdx * (tiling.blockUnits + 1);
            unitCount = tiling.blockUnits + 1;
        } else {
            unitStart = tiling.tailCoreNum * (tiling.blockUnits + 1) + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            unitCount = tiling.blockUnits;
        }
        if (unitStart >= tiling.unitNum) {
            unitCount = 0;
        } else if (unitStart + unitCount > tiling.unitNum) {
            unitCount = static_cast<uint32_t>(tiling.unitNum - unitStart);
        }
        yGm.SetGlobalBuffer((__gm__ T*)y);
        pipe->InitBuffer(patternBuf, AlignBytes(patternElems * sizeof(T)));
        pipe->InitBuffer(zeroBuf, AlignBytes(zeroElems * sizeof(T)));
    }

    __aicore__ inline void Process()
    {
        if (unitCount == 0) {
            return;
        }
        BuildPattern();
        Duplicate(zeroBuf.Get<T>(), static_cast<T>(0.0f), zeroElems);
        int32_t eventId = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE3));
        SetFlag<HardEvent::V_MTE3>(eventId);
        WaitFlag<HardEvent::V_MTE3>(eventId);
        if constexpr (MODE == MODE_BATCH) {
            ProcessBatch();
        } else {
            ProcessPeriodic();
        }
    }

private:
    __aicore__ inline static uint32_t AlignBytes(uint32_t bytes)
    {
        return (bytes + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
    }

    // dst = src - floor(src / divisor) * divisor, and quot = floor(src /
    // divisor), for non-negative integer-valued src.
    __aicore__ inline void Mod(const LocalTensor<float>& src, const LocalTensor<float>& quot, float divisor,
                               uint32_t count)
    {
        Muls(quot, src, 1.0f / divisor, count);
        Adds(quot, quot, 0.5f / divisor, count);
        Cast(quot, quot, RoundMode::CAST_FLOOR, count);
        Muls(quot, quot, -divisor, count);
        Add(src, src, quot, count);
    }

    // The pattern, in chunks computed in float in the zero tile (3 vectors
    // of `chunk` floats; the zero tile is filled after).
    __aicore__ inline void BuildPattern()
    {
        LocalTensor<T> pattern = patternBuf.Get<T>();
        LocalTensor<float> scratch = zeroBuf.Get<float>();
        uint32_t chunk = zeroElems * sizeof(T) / sizeof(float) / 3 / FLOAT_PER_REPEAT * FLOAT_PER_REPEAT;
        LocalTensor<float> pos = scratch;
        LocalTensor<float> quot = scratch[chunk];
        LocalTensor<float> excess = scratch[2 * chunk];
        float period = static_cast<float>(cols) + 1.0f;
        float diagLast = static_cast<float>((matRows < cols ? matRows : cols)) - 1.0f;
        for (uint32_t base = 0; base < patternElems; base += chunk) {
            uint32_t n = patternElems - base < chunk ? patternElems - base : chunk;
            CreateVecIndex(pos, static_cast<float>(base), n);
            if constexpr (MODE == MODE_BATCH) {
                Mod(pos, quot, static_cast<float>(matRows) * static_cast<float>(cols), n);
            }
            // pos = s mod period; quot = -period * j.
            Mod(pos, quot, period, n);
            if constexpr (MODE == MODE_BATCH) {
                // excess = max(j - diagLast, 0): ones only on the first
                // min(R, C) rows.
                Muls(excess, quot, -1.0f / period, n);
                Adds(excess, excess, -diagLast, n);
                Maxs(excess, excess, 0.0f, n);
                Add(pos, pos, excess, n);
            }
            // one = 1 - min(v, 1) for the integer v >= 0.
            Mins(pos, pos, 1.0f, n);
            Muls(pos, pos, -1.0f, n);
            if constexpr (SameType<T, float>::value) {
                Adds(pattern[base], pos, 1.0f, n);
            } else {
                Adds(pos, pos, 1.0f, n);
                if constexpr (SameType<T, half>::value) {
                    Cast(pattern[base], pos, RoundMode::CAST_NONE, n);
                } else {
                    Cast(pattern[base], pos, RoundMode::CAST_RINT, n);
                }
            }
        }
    }

    // y[offset, offset + count) = the first `count` elements of `src`.
    __aicore__ inline void Write(uint64_t offset, const LocalTensor<T>& src, uint32_t count)
    {
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm[offset], src, copyParams);
    }

    __aicore__ inline void WriteZeros(uint64_t offset, uint64_t count)
    {
        LocalTensor<T> zeros = zeroBuf.Get<T>();
        while (count > 0) {
            uint32_t n = count < zeroElems ? static_cast<uint32_t>(count) : zeroElems;
            Write(offset, zeros, n);
            offset += n;
            count -= n;
        }
    }

    // ---- batch mode: the pattern holds whole matrices ----------------------
    __aicore__ inline void ProcessBatch()
    {
        LocalTensor<T> pattern = patternBuf.Get<T>();
        uint64_t matElems = static_cast<uint64_t>(matRows) * cols;
        uint32_t matPerTile = static_cast<uint32_t>(patternElems / matElems);
        for (uint32_t done = 0; done < unitCount; done += matPerTile) {
            uint32_t mats = unitCount - done < matPerTile ? unitCount - done : matPerTile;
            Write((unitStart + done) * matElems, pattern, static_cast<uint32_t>(mats * matElems));
        }
    }

    // ---- periodic mode: rows [unitStart, unitStart + unitCount) ----------
    __aicore__ inline void ProcessPeriodic()
    {
        uint64_t end = unitStart + unitCount;
        for (uint64_t row = unitStart; row < end;) {
            uint64_t mat = row / matRows;
            uint64_t first = row - mat * matRows;
            uint64_t last = matRows < first + (end - row) ? matRows : first + (end - row);
            WriteRows(mat * matRows * cols, first, last);
            row += last - first;
        }
    }

    // Rows [first, last) of the matrix at flat offset `base`.
    __aicore__ inline void WriteRows(uint64_t base, uint64_t first, uint64_t last)
    {
        LocalTensor<T> pattern = patternBuf.Get<T>();
        uint64_t period = static_cast<uint64_t>(cols) + 1;
        uint64_t diagNum = matRows < cols ? matRows : cols;
        uint64_t begin = first * cols;
        uint64_t stop = last * cols;
        // The first one at or after `begin`, and the end of the last one.
        uint64_t k0 = (begin + period - 1) / period;
        if (k0 >= diagNum || k0 * period >= stop) {
            WriteZeros(base + begin, stop - begin);
            return;
        }
        uint64_t bodyStart = k0 * period;
        uint64_t bodyEnd = (diagNum - 1) * period + 1;
        if (bodyEnd > stop) {
            bodyEnd = stop;
        }
        WriteZeros(base + begin, bodyStart - begin);
        for (uint64_t pos = bodyStart; pos < bodyEnd;) {
            // pos is at a one: the pattern starts with one.
            uint32_t n = bodyEnd - pos < patternElems ? static_cast<uint32_t>(bodyEnd - pos) : patternElems;
            Write(base + pos, pattern, n);
            pos += n;
            // A period longer than the pattern: the rest of it is zeros.
            uint64_t phase = (pos - bodyStart) % period;
            if (phase != 0 && pos < bodyEnd) {
                uint64_t zeros = period - phase < bodyEnd - pos ? period - phase : bodyEnd - pos;
                WriteZeros(base + pos, zeros);
                pos += zeros;
            }
        }
        WriteZeros(base + bodyEnd, stop - bodyEnd);
    }

private:
    TBuf<TPosition::VECCALC> patternBuf;
    TBuf<TPosition::VECCALC> zeroBuf;
    GlobalTensor<T> yGm;
    uint64_t unitStart = 0;
    uint32_t unitCount = 0;
    uint32_t matRows = 0;
    uint32_t cols = 0;
    uint32_t patternElems = 0;
    uint32_t zeroElems = 0;
};

template <typename T, int32_t MODE, typename TilingData>
__aicore__ inline void RunEye(GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelEye<T, MODE> op;
    op.Init(y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void eye(GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(11)) {
        RunEye<half, MODE_BATCH>(y, tilingData, &pipe);
    } else if (TILING_KEY_IS(12)) {
        RunEye<half, MODE_PERIODIC>(y, tilingData, &pipe);
    } else if (TILING_KEY_IS(21)) {
        RunEye<float, MODE_BATCH>(y, tilingData, &pipe);
    } else if (TILING_KEY_IS(22)) {
        RunEye<float, MODE_PERIODIC>(y, tilingData, &pipe);
    } else if (TILING_KEY_IS(31)) {
        RunEye<int32_t, MODE_BATCH>(y, tilingData, &pipe);
    } else if (TILING_KEY_IS(32)) {
        RunEye<int32_t, MODE_PERIODIC>(y, tilingData, &pipe);
    }
}
