// Fill kernel: every element of y equals `value` (one element in GM).
//
// Every vector core takes a balanced, contiguous range of y (tiling: split
// units, the first tailCoreNum cores take one unit more). There is nothing to
// stream in: each core reads the value once (a scalar GM read), fills one UB
// tile with it (one Duplicate; V -> MTE3 flag), then copies that same tile to
// GM tile after tile, so only MTE3 works in the loop and every copy is as
// large as the tile. A tail whose byte size is not a multiple of 32 B moves
// with DataCopyPad.
//
// The value is moved as raw bits (the tiling key is the element size), so
// NaN payloads and -0 are kept:
//   2 and 4 bytes: Duplicate on uint16 / uint32;
//   1 byte: Duplicate on uint16 of the byte doubled (b | b << 8);
//   8 bytes: Duplicate the low word on all uint32 lanes, then the high word
//     on the odd lanes (a lane-masked Duplicate, in chunks of at most
//     CHUNK_REPEATS repeats).
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t WORD_LANES = 64;                   // uint32 lanes per 256 B repeat
constexpr uint32_t CHUNK_REPEATS = 248;               // <= 255 repeats per mask-form call
constexpr uint64_t ODD_LANES = 0xAAAAAAAAAAAAAAAAull;  // high words of int64

template <typename T>
class KernelFill {
public:
    __aicore__ inline KernelFill() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR value, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
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
        uint64_t start = startUnit * tiling.unitLength;
        uint64_t length = units * tiling.unitLength;
        if (start >= tiling.totalLength) {
            length = 0;
        } else if (start + length > tiling.totalLength) {
            length = tiling.totalLength - start;
        }
        blockLength = static_cast<uint32_t>(length);
        tileLength = tiling.tileLength;

        yGm.SetGlobalBuffer((__gm__ T*)y + start, blockLength);
        valueGm.SetGlobalBuffer((__gm__ T*)value, 1);
        pipe->InitBuffer(tileBuf, tileLength * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        LocalTensor<T> tile = tileBuf.Get<T>();
        FillTile(tile, valueGm.GetValue(0));
        int32_t eventId = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE3));
        SetFlag<HardEvent::V_MTE3>(eventId);
        WaitFlag<HardEvent::V_MTE3>(eventId);
        uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
        uint32_t lastLength = blockLength - (tileNum - 1) * tileLength;
        for (uint32_t i = 0; i < tileNum; i++) {
            uint32_t length = (i + 1 == tileNum) ? lastLength : tileLength;
            uint64_t offset = static_cast<uint64_t>(i) * tileLength;
            if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
                DataCopy(yGm[offset], tile, length);
            } else {
                DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
                DataCopyPad(yGm[offset], tile, copyParams);
            }
        }
    }

private:
    __aicore__ inline void FillTile(const LocalTensor<T>& tile, T bits)
    {
        if constexpr (sizeof(T) == 1) {
            uint16_t word = static_cast<uint16_t>(static_cast<uint16_t>(bits) * 0x0101u);
            Duplicate(tile.template ReinterpretCast<uint16_t>(), word, static_cast<int32_t>((tileLength + 1) / 2));
        } else if constexpr (sizeof(T) == 8) {
            LocalTensor<uint32_t> words = tile.template ReinterpretCast<uint32_t>();
            uint32_t count = tileLength * 2;
            Duplicate(words, static_cast<uint32_t>(bits), static_cast<int32_t>(count));
            uint32_t high = static_cast<uint32_t>(bits >> 32);
            uint64_t odd[2] = {ODD_LANES, 0};
            for (uint32_t lane = 0; lane < count; lane += CHUNK_REPEATS * WORD_LANES) {
                uint32_t repeats = (count - lane + WORD_LANES - 1) / WORD_LANES;
                repeats = repeats < CHUNK_REPEATS ? repeats : CHUNK_REPEATS;
                Duplicate(words[lane], high, odd, static_cast<uint8_t>(repeats), 1, 8);
            }
        } else {
            Duplicate(tile, bits, static_cast<int32_t>(tileLength));
        }
    }

    TBuf<TPosition::VECCALC> tileBuf;
    GlobalTensor<T> valueGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, typename TilingData>
__aicore__ inline void RunFill(GM_ADDR value, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelFill<T> op;
    op.Init(value, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void fill(GM_ADDR value, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunFill<uint8_t>(value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunFill<uint16_t>(value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunFill<uint32_t>(value, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(8)) {
        RunFill<uint64_t>(value, y, tilingData, &pipe);
    }
}
