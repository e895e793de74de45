// Icamax kernel: result = 1 + the index of the first maximum of |Re| + |Im|
// over the first searchLength complex elements of x (float32 pairs), 0 when
// nothing is searched.
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB
// in tiles with a double-buffered input queue, so MTE2 overlaps the vector
// work. Per tile: Abs over the interleaved words, PairReduceSum (|Re| + |Im|
// of each element, one float32 rounding), then one ReduceMax with index (the
// first occurrence wins ties, a NaN wins over numbers), its (value, index)
// pair kept in UB. After the last tile the scalar unit picks the core's
// winner from the per-tile pairs (one read per tile, not per element). With
// several cores, each writes its pair to a 32 B workspace slot, SyncAll, and
// core 0 picks the winner among the cores in core order (so ties keep the
// smallest index) and writes the 1-based index.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t SLOT_FLOATS = 8;  // one 32 B workspace slot per core
constexpr uint32_t FLOAT_PER_REPEAT = 64;
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint32_t ELEM_WORDS = 2;  // float32 words per searched element (real, imaginary)
constexpr bool FIND_MAX = true;      // the extreme searched: maximum

class KernelIcamax {
public:
    __aicore__ inline KernelIcamax() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR result, GM_ADDR workspace, const TilingData& tiling, TPipe* pipe)
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
        if (first >= tiling.searchLength) {
            length = 0;
        } else if (first + length > tiling.searchLength) {
            length = tiling.searchLength - first;
        }
        blockIndex = static_cast<uint32_t>(blockIdx);
        firstIndex = static_cast<uint32_t>(first);
        blockLength = static_cast<uint32_t>(length);
        tileLength = tiling.tileLength;
        coreNum = tiling.coreNum;

        xGm.SetGlobalBuffer((__gm__ float*)x + first * ELEM_WORDS, length * ELEM_WORDS);
        resultGm.SetGlobalBuffer((__gm__ int32_t*)result, 1);
        slotGm.SetGlobalBuffer((__gm__ float*)workspace, coreNum * SLOT_FLOATS);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * ELEM_WORDS * sizeof(float));
        if constexpr (ELEM_WORDS > 1) {
            pipe->InitBuffer(sumBuf, tileLength * sizeof(float));
        }
        pipe->InitBuffer(workBuf, (tileLength / 16 + 64) * sizeof(float));
        pipe->InitBuffer(tileBuf, (tiling.maxTiles * 2 * sizeof(float) + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES);
        pipe->InitBuffer(slotBuf, coreNum * BLOCK_BYTES);
        pipe->InitBuffer(outBuf, BLOCK_BYTES);
    }

    __aicore__ inline void Process()
    {
        float best = 0.0f;
        int32_t bestIndex = -1;
        if (blockLength > 0) {
            uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
            for (uint32_t i = 0; i < tileNum; i++) {
                uint32_t length = blockLength - i * tileLength < tileLength ? blockLength - i * tileLength : tileLength;
                CopyIn(i, length);
                Compute(i, length);
            }
            PickTile(tileNum, best, bestIndex);
        }
        if (coreNum == 1) {
            WriteResult(bestIndex);
            return;
        }
        // Publish this core's pair, then core 0 picks among the cores.
        LocalTensor<float> slot = slotBuf.Get<float>();
        slot.SetValue(0, best);
        slot.ReinterpretCast<int32_t>().SetValue(1, bestIndex);
        DataCopy(slotGm[blockIndex * SLOT_FLOATS], slot, SLOT_FLOATS);
        SyncAll();
        if (blockIndex != 0) {
            return;
        }
        DataCopy(slot, slotGm, coreNum * SLOT_FLOATS);
        best = 0.0f;
        bestIndex = -1;
        for (uint32_t c = 0; c < coreNum; c++) {
            int32_t index = slot.ReinterpretCast<int32_t>().GetValue(c * SLOT_FLOATS + 1);
            if (index >= 0) {
                Consider(slot.GetValue(c * SLOT_FLOATS), index, best, bestIndex);
            }
        }
        WriteResult(bestIndex);
    }

private:
    // Keeps (value, index) if it beats the best so far: strictly better, so
    // ties keep the earlier; a NaN beats every number and the first NaN stays.
    __aicore__ inline static void Consider(float value, int32_t index, float& best, int32_t& bestIndex)
    {
        bool bestNan = best != best;
        bool valueNan = value != value;
        bool better = FIND_MAX ? value > best : value < best;
        if (bestIndex < 0 || (!bestNan && (valueNan || better))) {
            best = value;
            bestIndex = index;
        }
    }

    __aicore__ inline void CopyIn(uint32_t progress, uint32_t length)
    {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength * ELEM_WORDS;
        uint32_t words = length * ELEM_WORDS;
        if ((words * sizeof(float)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], words);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(words * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> padParams{false, 0, 0, 0.0f};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    // The tile's extreme and its index: tileBuf[2 * progress] = value,
    // [2 * progress + 1] = index (uint32 bits).
    __aicore__ inline void Compute(uint32_t progress, uint32_t length)
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> values = xLocal;
        Abs(xLocal, xLocal, length * ELEM_WORDS);
        if constexpr (ELEM_WORDS > 1) {
            values = sumBuf.Get<float>();
            PairSums(values, xLocal, length * ELEM_WORDS);
        }
        LocalTensor<float> pair = tileBuf.Get<float>()[2 * progress];
        if constexpr (FIND_MAX) {
            ReduceMax(pair, values, workBuf.Get<float>(), static_cast<int32_t>(length), true);
        } else {
            ReduceMin(pair, values, workBuf.Get<float>(), static_cast<int32_t>(length), true);
        }
        inQueueX.FreeTensor(xLocal);
    }

    // dst[i] = src[2i] + src[2i + 1] for `words` words of src (even).
    __aicore__ inline void PairSums(const LocalTensor<float>& dst, const LocalTensor<float>& src, uint32_t words)
    {
        uint32_t repeats = words / FLOAT_PER_REPEAT;
        for (uint32_t r = 0; r < repeats; r += MAX_REPEAT) {
            uint32_t n = repeats - r < MAX_REPEAT ? repeats - r : MAX_REPEAT;
            PairReduceSum(dst[r * FLOAT_PER_REPEAT / 2], src[r * FLOAT_PER_REPEAT], static_cast<int32_t>(n),
                          static_cast<int32_t>(FLOAT_PER_REPEAT), 1, 1, 8);
        }
        uint32_t rest = words - repeats * FLOAT_PER_REPEAT;
        if (rest > 0) {
            PairReduceSum(dst[repeats * FLOAT_PER_REPEAT / 2], src[repeats * FLOAT_PER_REPEAT], 1,
                          static_cast<int32_t>(rest), 1, 1, 8);
        }
    }

    // The core's winner among its tiles (global index).
    __aicore__ inline void PickTile(uint32_t tileNum, float& best, int32_t& bestIndex)
    {
        LocalTensor<float> pairs = tileBuf.Get<float>();
        LocalTensor<uint32_t> indices = pairs.ReinterpretCast<uint32_t>();
        for (uint32_t i = 0; i < tileNum; i++) {
            int32_t index = static_cast<int32_t>(firstIndex + i * tileLength + indices.GetValue(2 * i + 1));
            Consider(pairs.GetValue(2 * i), index, best, bestIndex);
        }
    }

    // result = bestIndex + 1 (0 when nothing was searched).
    __aicore__ inline void WriteResult(int32_t bestIndex)
    {
        LocalTensor<int32_t> out = outBuf.Get<int32_t>();
        out.SetValue(0, bestIndex + 1);
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(sizeof(int32_t)), 0, 0, 0};
        DataCopyPad(resultGm, out, copyParams);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TBuf<TPosition::VECCALC> sumBuf;
    TBuf<TPosition::VECCALC> workBuf;
    TBuf<TPosition::VECCALC> tileBuf;
    TBuf<TPosition::VECCALC> slotBuf;
    TBuf<TPosition::VECCALC> outBuf;
    GlobalTensor<float> xGm;
    GlobalTensor<int32_t> resultGm;
    GlobalTensor<float> slotGm;
    uint32_t blockIndex = 0;
    uint32_t firstIndex = 0;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
    uint32_t coreNum = 1;
};

extern "C" __global__ __aicore__ void icamax(GM_ADDR x, GM_ADDR result, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelIcamax op;
        op.Init(x, result, workspace, tilingData, &pipe);
        op.Process();
    }
}
