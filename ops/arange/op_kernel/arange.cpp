// Arange kernel: out[i] = start + i * step for i < L (L = out's length).
//
// Each vector core takes a balanced, contiguous range of out (tiling: 512 B
// split units, the first tailCoreNum cores take one unit more), builds it in
// UB tiles with vector instructions and streams the tiles out through a
// double-buffered queue (V builds tile i + 1 while MTE3 writes tile i).
// start and step are read once from GM by the scalar unit. Paths (tiling
// key):
//   float16 / float32 / bfloat16 (keys 1, 2, 3): in float32, as the
//     reference does: CreateVecIndex gives (float)i exactly, then Muls by
//     step and Adds start (two float32 roundings), then one Cast (RINT) to
//     16-bit outputs;
//   int32 (key 4): CreateVecIndex, Muls, Adds in int32; the arithmetic wraps
//     mod 2^32 and the true value fits int32, so the result is exact;
//   int64 (key 5): the tile is viewed as int32 pairs (low, high word). With
//     O = start + first * step (int64, on the scalar unit) and j * step
//     exact in int32 (the tile is shortened for steps of 2^31 / tile or
//     more), low_j = O_low + j * step (wrapping int32, computed on every
//     lane from index pairs j = lane >> 1) and high_j = O_high + carry_j,
//     where the carry (0 or +-1) changes at most once inside the tile, at a
//     j the scalar unit computes: two masked Duplicates write the high words.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr int32_t KIND_FLOAT = 1;
constexpr int32_t KIND_INT32 = 2;
constexpr int32_t KIND_INT64 = 3;
constexpr uint32_t INT32_PER_REPEAT = 64;
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint64_t ODD_LANES = 0xAAAAAAAAAAAAAAAAull;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T, int32_t KIND>
class KernelArange {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

public:
    __aicore__ inline KernelArange() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR start, GM_ADDR step, GM_ADDR out, const TilingData& tiling, TPipe* pipe)
    {
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t bigUnits = static_cast<uint64_t>(tiling.blockUnits) + 1;
        uint64_t startUnit;
        uint64_t units;
        if (blockIdx < tiling.tailCoreNum) {
            startUnit = blockIdx * bigUnits;
            units = bigUnits;
        } else {
            startUnit = tiling.tailCoreNum * bigUnits + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            units = tiling.blockUnits;
        }
        uint64_t first = startUnit * tiling.unitLength;
        uint64_t length = units * tiling.unitLength;
        if (first >= tiling.totalLength) {
            length = 0;
        } else if (first + length > tiling.totalLength) {
            length = tiling.totalLength - first;
        }
        firstIndex = first;
        blockLength = static_cast<uint32_t>(length);
        tileLength = tiling.tileLength;
        outGm.SetGlobalBuffer((__gm__ T*)out + first, blockLength);
        startGm.SetGlobalBuffer((__gm__ T*)start, 1);
        stepGm.SetGlobalBuffer((__gm__ T*)step, 1);
        pipe->InitBuffer(outQueue, tiling.bufferNum, tileLength * sizeof(T));
        if constexpr (KIND == KIND_FLOAT && !IS_FLOAT) {
            pipe->InitBuffer(workBuf, tileLength * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        T startValue = startGm.GetValue(0);
        T stepValue = stepGm.GetValue(0);
        uint32_t maxLength = tileLength;
        if constexpr (KIND == KIND_INT64) {
            // j * step must stay exact in int32 inside a tile.
            uint64_t magnitude = stepValue < 0 ? 0 - static_cast<uint64_t>(stepValue) : static_cast<uint64_t>(stepValue);
            uint64_t limit = magnitude < 0x80000000ull ? 0x7FFFFFFFull / (magnitude == 0 ? 1 : magnitude) + 1 : 1;
            if (limit < maxLength) {
                maxLength = static_cast<uint32_t>(limit);
            }
        }
        for (uint32_t done = 0; done < blockLength;) {
            uint32_t length = blockLength - done < maxLength ? blockLength - done : maxLength;
            LocalTensor<T> yLocal = outQueue.AllocTensor<T>();
            Compute(yLocal, firstIndex + done, length, startValue, stepValue);
            outQueue.EnQue<T>(yLocal);
            CopyOut(done, length);
            done += length;
        }
    }

private:
    __aicore__ inline void Compute(const LocalTensor<T>& yLocal, uint64_t index, uint32_t length, T startValue,
                                   T stepValue)
    {
        if constexpr (KIND == KIND_FLOAT) {
            LocalTensor<float> work;
            if constexpr (IS_FLOAT) {
                work = yLocal;
            } else {
                work = workBuf.Get<float>();
            }
            CreateVecIndex(work, static_cast<float>(index), length);
            Muls(work, work, static_cast<float>(stepValue), length);
            Adds(work, work, static_cast<float>(startValue), length);
            if constexpr (!IS_FLOAT) {
                Cast(yLocal, work, RoundMode::CAST_RINT, length);
            }
        } else if constexpr (KIND == KIND_INT32) {
            CreateVecIndex(yLocal, static_cast<int32_t>(index), length);
            Muls(yLocal, yLocal, stepValue, length);
            Adds(yLocal, yLocal, startValue, length);
        } else {
            ComputeInt64(yLocal, index, length, startValue, stepValue);
        }
    }

    __aicore__ inline void ComputeInt64(const LocalTensor<T>& yLocal, uint64_t index, uint32_t length, T startValue,
                                        T stepValue)
    {
        LocalTensor<int32_t> words = yLocal.template ReinterpretCast<int32_t>();
        uint32_t lanes = 2 * length;
        uint64_t origin = static_cast<uint64_t>(startValue) + index * static_cast<uint64_t>(stepValue);
        uint32_t originLow = static_cast<uint32_t>(origin);
        int32_t originHigh = static_cast<int32_t>(static_cast<uint32_t>(origin >> 32));
        // Low words on every lane: lane >> 1 = j, then j * step + O_low.
        CreateVecIndex(words, static_cast<int32_t>(0), lanes);
        ShiftRight(words, words, static_cast<int32_t>(1), lanes);
        Muls(words, words, static_cast<int32_t>(stepValue), lanes);
        Adds(words, words, static_cast<int32_t>(originLow), lanes);
        // High words: O_high, then O_high +- 1 from the j where O_low + j *
        // step leaves [0, 2^32).
        DuplicateOdd(words, originHigh, 0, lanes);
        uint64_t carryFrom = length;
        int32_t carry = 0;
        if (stepValue > 0) {
            uint64_t stepMag = static_cast<uint64_t>(stepValue);
            carryFrom = ((1ull << 32) - originLow + stepMag - 1) / stepMag;
            carry = 1;
        } else if (stepValue < 0) {
            uint64_t stepMag = 0 - static_cast<uint64_t>(stepValue);
            carryFrom = originLow / stepMag + 1;
            carry = -1;
        }
        if (carryFrom < length) {
            DuplicateOdd(words, static_cast<int32_t>(static_cast<uint32_t>(originHigh) + static_cast<uint32_t>(carry)),
                         static_cast<uint32_t>(2 * carryFrom), lanes);
        }
    }

    // words[l] = value for the odd lanes l in [begin, end) (begin even).
    __aicore__ inline void DuplicateOdd(const LocalTensor<int32_t>& words, int32_t value, uint32_t begin, uint32_t end)
    {
        uint32_t repeat = begin / INT32_PER_REPEAT;
        uint32_t lastRepeat = (end - 1) / INT32_PER_REPEAT;
        while (repeat <= lastRepeat) {
            uint64_t mask = ODD_LANES;
            uint32_t count = 1;
            if (repeat * INT32_PER_REPEAT < begin) {
                mask &= ~0ull << (begin - repeat * INT32_PER_REPEAT);
            } else if (repeat < lastRepeat) {
                // Whole repeats up to (not including) the last one.
                count = lastRepeat - repeat < MAX_REPEAT ? lastRepeat - repeat : MAX_REPEAT;
            }
            if (repeat + count - 1 == lastRepeat) {
                uint32_t tail = end - lastRepeat * INT32_PER_REPEAT;
                if (tail < INT32_PER_REPEAT) {
                    mask &= (1ull << tail) - 1;
                }
            }
            uint64_t masks[2] = {mask, 0};
            Duplicate(words[repeat * INT32_PER_REPEAT], value, masks, static_cast<uint8_t>(count), 1, 8);
            repeat += count;
        }
    }

    __aicore__ inline void CopyOut(uint32_t done, uint32_t length)
    {
        LocalTensor<T> yLocal = outQueue.DeQue<T>();
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(outGm[done], yLocal, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPad(outGm[done], yLocal, copyParams);
        }
        outQueue.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> workBuf;
    GlobalTensor<T> outGm;
    GlobalTensor<T> startGm;
    GlobalTensor<T> stepGm;
    uint64_t firstIndex = 0;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, int32_t KIND, typename TilingData>
__aicore__ inline void RunArange(GM_ADDR start, GM_ADDR step, GM_ADDR out, const TilingData& tiling, TPipe* pipe)
{
    KernelArange<T, KIND> op;
    op.Init(start, step, out, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void arange(GM_ADDR start, GM_ADDR end, GM_ADDR step, GM_ADDR out,
                                             GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunArange<half, KIND_FLOAT>(start, step, out, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunArange<float, KIND_FLOAT>(start, step, out, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunArange<bfloat16_t, KIND_FLOAT>(start, step, out, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunArange<int32_t, KIND_INT32>(start, step, out, tilingData, &pipe);
    } else if (TILING_KEY_IS(5)) {
        RunArange<int64_t, KIND_INT64>(start, step, out, tilingData, &pipe);
    }
}
