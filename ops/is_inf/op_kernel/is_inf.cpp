// IsInf kernel: y = isinf(x), elementwise (float16, float32, bfloat16), bool
// output (one byte, 0 or 1): true for +inf and -inf, false for NaN.
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose byte size is not
// a multiple of 32 B moves with DataCopyPad.
//
// Per tile: Abs (in place), Compares |x| > the largest finite value of the
// compare type (only +inf is; NaN compares false) into one bit per element,
// Select turns the bits into half 1.0 / 0.0 and a Cast half -> uint8 gives
// the bool bytes. Compares works on whole 256 B repeats, so it runs over the
// tile length rounded up to a repeat (tiles are multiples of 256 elements);
// the extra lanes are never copied out. bfloat16 (no bf16 compare on A2) is
// Cast to float32 first (exact, infinities kept).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t REPEAT_BYTES = 256;

constexpr int32_t PATH_DIRECT = 1;  // float16, float32
constexpr int32_t PATH_WIDEN = 2;   // bfloat16 through float32

constexpr float HALF_MAX = 65504.0f;
constexpr float FLOAT_MAX = 3.40282346638528859812e+38f;

// The type a path compares in, and its largest finite value.
template <typename T, int32_t PATH>
struct CompareType {
    using Type = float;
    static constexpr float MAX = FLOAT_MAX;
};
template <>
struct CompareType<half, PATH_DIRECT> {
    using Type = half;
    static constexpr float MAX = HALF_MAX;
};

template <typename T, int32_t PATH>
class KernelIsInf {
    using C = typename CompareType<T, PATH>::Type;
    static constexpr uint32_t CMP_ALIGN = REPEAT_BYTES / sizeof(C);

public:
    __aicore__ inline KernelIsInf() {}

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
        yGm.SetGlobalBuffer((__gm__ uint8_t*)y + start, blockLength);
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(uint8_t));
        pipe->InitBuffer(maskBuf, tileLength / 8);
        pipe->InitBuffer(onesBuf, tileLength * sizeof(half));
        if constexpr (PATH == PATH_WIDEN) {
            pipe->InitBuffer(floatBuf, tileLength * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        LocalTensor<half> ones = onesBuf.Get<half>();
        Duplicate(ones, static_cast<half>(1.0f), tileLength);
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
        LocalTensor<uint8_t> yLocal = outQueueY.AllocTensor<uint8_t>();
        LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
        uint32_t cmpCount = (length + CMP_ALIGN - 1) / CMP_ALIGN * CMP_ALIGN;
        LocalTensor<C> xc;
        if constexpr (PATH == PATH_DIRECT) {
            xc = xLocal;
        } else {
            xc = floatBuf.Get<float>();
            Cast(xc, xLocal, RoundMode::CAST_NONE, cmpCount);
        }
        Abs(xc, xc, cmpCount);
        Compares(mask, xc, static_cast<C>(CompareType<T, PATH>::MAX), CMPMODE::GT, cmpCount);
        LocalTensor<half> sel = xc.template ReinterpretCast<half>();
        Select(sel, mask, onesBuf.Get<half>(), static_cast<half>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, length);
        Cast(yLocal, sel, RoundMode::CAST_NONE, length);
        outQueueY.EnQue<uint8_t>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }

    __aicore__ inline void CopyOut(uint32_t progress, uint32_t length)
    {
        LocalTensor<uint8_t> yLocal = outQueueY.DeQue<uint8_t>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if (length % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, length);
        } else {
            DataCopyExtParams copyParams{1, length, 0, 0, 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> maskBuf;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> floatBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<uint8_t> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, int32_t PATH, typename TilingData>
__aicore__ inline void RunIsInf(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelIsInf<T, PATH> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void is_inf(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunIsInf<half, PATH_DIRECT>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunIsInf<float, PATH_DIRECT>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunIsInf<bfloat16_t, PATH_WIDEN>(x, y, tilingData, &pipe);
    }
}
