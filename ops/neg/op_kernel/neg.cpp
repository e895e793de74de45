// Neg kernel: y = -x, elementwise (float16, float32, int32, bfloat16, int8).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose size is not a
// multiple of 32 B moves with DataCopyPad.
//
// Vector paths (Neg itself is not an Atlas A2 instruction):
//   float16, float32, int32: Muls by -1 (a sign flip for floats, NaN and
//     signed zeros included; int32 wraps);
//   bfloat16: no bf16 arithmetic on A2, so Cast to float32 (exact), Muls by
//     -1, Cast back (exact);
//   int8: no 8-bit arithmetic on A2. The bytes are read as uint8 b in
//     float16 lanes (exact) and -x mod 256 = (256 - b) * min(b, 1) is formed
//     exactly (integers below 2048 are exact in float16), then cast back to
//     uint8, which is the two's complement wrap: -(-128) = -128.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

constexpr int32_t PATH_MULS = 1;  // Muls by -1 in T
constexpr int32_t PATH_BF16 = 2;  // through float32
constexpr int32_t PATH_BYTE = 3;  // int8 through float16

template <typename T, int32_t PATH>
class KernelNeg {
public:
    __aicore__ inline KernelNeg() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
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

        xGm.SetGlobalBuffer((__gm__ T*)x + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, blockLength);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(T));
        if constexpr (PATH == PATH_BF16) {
            pipe->InitBuffer(floatBuf, tileLength * sizeof(float));
        } else if constexpr (PATH == PATH_BYTE) {
            pipe->InitBuffer(halfBuf, tileLength * sizeof(half));
            pipe->InitBuffer(nonZeroBuf, tileLength * sizeof(half));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
        uint32_t lastLength = blockLength - (tileNum - 1) * tileLength;
        for (uint32_t i = 0; i < tileNum; i++) {
            uint32_t length = (i + 1 == tileNum) ? lastLength : tileLength;
            CopyIn(i, length);
            Compute(length);
            CopyOut(i, length);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress, uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        if constexpr (PATH == PATH_MULS) {
            Muls(yLocal, xLocal, static_cast<T>(-1), length);
        } else if constexpr (PATH == PATH_BF16) {
            LocalTensor<float> xf = floatBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, length);
            Muls(xf, xf, -1.0f, length);
            Cast(yLocal, xf, RoundMode::CAST_RINT, length);
        } else {
            // b in [0, 255]; nz = min(b, 1); y = (256 - b) * nz, all exact.
            LocalTensor<half> b = halfBuf.Get<half>();
            LocalTensor<half> nz = nonZeroBuf.Get<half>();
            LocalTensor<uint8_t> xBytes = xLocal.template ReinterpretCast<uint8_t>();
            LocalTensor<uint8_t> yBytes = yLocal.template ReinterpretCast<uint8_t>();
            Cast(b, xBytes, RoundMode::CAST_NONE, length);
            Mins(nz, b, static_cast<half>(1.0f), length);
            Muls(b, b, static_cast<half>(-1.0f), length);
            Adds(b, b, static_cast<half>(256.0f), length);
            Mul(b, b, nz, length);
            Cast(yBytes, b, RoundMode::CAST_NONE, length);
        }
        outQueueY.EnQue<T>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }

    __aicore__ inline void CopyOut(uint32_t progress, uint32_t length)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> floatBuf;
    TBuf<TPosition::VECCALC> halfBuf;
    TBuf<TPosition::VECCALC> nonZeroBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, int32_t PATH, typename TilingData>
__aicore__ inline void RunNeg(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelNeg<T, PATH> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void neg(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunNeg<half, PATH_MULS>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunNeg<float, PATH_MULS>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunNeg<int32_t, PATH_MULS>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(4)) {
        RunNeg<bfloat16_t, PATH_BF16>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(5)) {
        RunNeg<int8_t, PATH_BYTE>(x, y, tilingData, &pipe);
    }
}
