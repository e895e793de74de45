// AngleV2 kernel: y = angle(x). Real x (float16, float32): pi where x < 0,
// 0 where x >= 0 (-0 included), NaN where x is NaN. complex64 x: y =
// atan2(im, re) in float32 (KernelAngleC64 below).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB
// in tiles with double-buffered queues, so MTE2, V and MTE3 overlap. Per
// tile, four vector instructions and no scalar work: Compares(x < 0) and
// Compare(x == x) (false only for NaN) give two bit masks, Select(pi tile or
// 0) and Select(that or NaN). pi is rounded once to the dtype (a constant
// tile built once). The compare count is rounded up to whole 256 B repeats
// (the tile is sized for it; the extra lanes are never written out). Full
// tiles move with DataCopy, a tail whose size is not a multiple of 32 B
// with DataCopyPad.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t REPEAT_BYTES = 256;
constexpr float PI = 3.14159265358979323846f;

template <typename T>
class KernelAngleV2 {
    static constexpr uint32_t REPEAT_ELEMS = REPEAT_BYTES / sizeof(T);

public:
    __aicore__ inline KernelAngleV2() {}

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
        uint32_t maskBytes = (tileLength / 8 + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(piBuf, tileLength * sizeof(T));
        pipe->InitBuffer(negBuf, maskBytes);
        pipe->InitBuffer(numBuf, maskBytes);
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        Duplicate(piBuf.Get<T>(), static_cast<T>(PI), tileLength);
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
            DataCopyPadExtParams<T> padParams{false, 0, 0, static_cast<T>(0)};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        LocalTensor<uint8_t> negative = negBuf.Get<uint8_t>();
        LocalTensor<uint8_t> number = numBuf.Get<uint8_t>();
        uint32_t count = (length + REPEAT_ELEMS - 1) / REPEAT_ELEMS * REPEAT_ELEMS;
        Compares(negative, xLocal, static_cast<T>(0.0f), CMPMODE::LT, count);
        Compare(number, xLocal, xLocal, CMPMODE::EQ, count);
        Select(yLocal, negative, piBuf.Get<T>(), static_cast<T>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, length);
        Select(yLocal, number, yLocal, xLocal, SELMODE::VSEL_TENSOR_TENSOR_MODE, length);
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
    TBuf<TPosition::VECCALC> piBuf;
    TBuf<TPosition::VECCALC> negBuf;
    TBuf<TPosition::VECCALC> numBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

// complex64 x, read as float pairs (re, im): y = atan2(im, re) in float32.
//
// Same split and double-buffered streaming as above; a tile of n complex
// elements is 2n floats in and n floats out. Per tile, vector work only:
// two Gathers (byte offsets 8i and 8i + 4, built once) split re and im;
// a = |re|, b = |im|; t = min / max in [0, 1]; atan(t) by the Cephes
// single-precision polynomial after reducing t > tan(pi/8) with
// atan(t) = pi/4 + atan((t - 1) / (t + 1)) (both forms computed, Select
// picks); then pi/2 - r where b > a, pi - r where re has its sign bit set
// (And/Or on the bits: -0 counts as negative, as atan2 wants), the sign
// bit of im copied onto r, 0 for 0/0 and pi/4 for inf/inf, NaN where a
// part is NaN.
class KernelAngleC64 {
    static constexpr uint32_t REPEAT_ELEMS = REPEAT_BYTES / sizeof(float);
    static constexpr float PI_4 = 0.785398163397448309616f;
    static constexpr float PI_2 = 1.57079632679489661923f;
    static constexpr float TAN_PI_8 = 0.414213562373095048802f;
    static constexpr float C0 = 8.05374449538e-2f;
    static constexpr float C1 = -1.38776856032e-1f;
    static constexpr float C2 = 1.99777106478e-1f;
    static constexpr float C3 = -3.33329491539e-1f;

public:
    __aicore__ inline KernelAngleC64() {}

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

        xGm.SetGlobalBuffer((__gm__ float*)x + 2 * start, 2 * blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y + start, blockLength);
        uint32_t tileBytes = tileLength * sizeof(float);
        uint32_t maskBytes = (tileLength / 8 + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
        pipe->InitBuffer(inQueueX, tiling.bufferNum, 2 * tileBytes);
        pipe->InitBuffer(outQueueY, tiling.bufferNum, tileBytes);
        pipe->InitBuffer(reBuf, tileBytes);
        pipe->InitBuffer(imBuf, tileBytes);
        pipe->InitBuffer(aBuf, tileBytes);
        pipe->InitBuffer(bBuf, tileBytes);
        pipe->InitBuffer(hiBuf, tileBytes);
        pipe->InitBuffer(loBuf, tileBytes);
        pipe->InitBuffer(offBuf, tileBytes);
        pipe->InitBuffer(signBuf, tileBytes);
        pipe->InitBuffer(oneBuf, tileBytes);
        pipe->InitBuffer(swapMask, maskBytes);
        pipe->InitBuffer(zeroMask, maskBytes);
        pipe->InitBuffer(infMask, maskBytes);
        pipe->InitBuffer(bigMask, maskBytes);
        pipe->InitBuffer(negMask, maskBytes);
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        // Constants, once: gather byte offsets 8i, the float32 sign bit and
        // the bits of 1.0f.
        LocalTensor<int32_t> index = offBuf.Get<int32_t>();
        CreateVecIndex(index, static_cast<int32_t>(0), tileLength);
        Muls(index, index, static_cast<int32_t>(2 * sizeof(float)), tileLength);
        Duplicate(signBuf.Get<uint32_t>(), static_cast<uint32_t>(0x80000000u), tileLength);
        Duplicate(oneBuf.Get<uint32_t>(), static_cast<uint32_t>(0x3F800000u), tileLength);
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
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        uint64_t offset = 2 * static_cast<uint64_t>(progress) * tileLength;
        uint32_t words = 2 * length;
        if ((words * sizeof(float)) % BLOCK_BYTES == 0) {
            DataCopy(xLocal, xGm[offset], words);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(words * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> padParams{false, 0, 0, 0.0f};
            DataCopyPad(xLocal, xGm[offset], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> y = outQueueY.AllocTensor<float>();
        LocalTensor<float> re = reBuf.Get<float>();
        LocalTensor<float> im = imBuf.Get<float>();
        LocalTensor<float> a = aBuf.Get<float>();
        LocalTensor<float> b = bBuf.Get<float>();
        LocalTensor<float> hi = hiBuf.Get<float>();
        LocalTensor<float> lo = loBuf.Get<float>();
        LocalTensor<uint32_t> offsets = offBuf.Get<uint32_t>();
        LocalTensor<uint8_t> swap = swapMask.Get<uint8_t>();
        LocalTensor<uint8_t> zero = zeroMask.Get<uint8_t>();
        LocalTensor<uint8_t> inf = infMask.Get<uint8_t>();
        LocalTensor<uint8_t> big = bigMask.Get<uint8_t>();
        LocalTensor<uint8_t> neg = negMask.Get<uint8_t>();
        // Whole repeats (the tile holds them; extra lanes are never written
        // out).
        uint32_t n = (length + REPEAT_ELEMS - 1) / REPEAT_ELEMS * REPEAT_ELEMS;

        Gather(re, xLocal, offsets, 0, n);
        Gather(im, xLocal, offsets, static_cast<uint32_t>(sizeof(float)), n);
        inQueueX.FreeTensor(xLocal);
        Abs(a, re, n);
        Abs(b, im, n);
        Compare(swap, b, a, CMPMODE::GT, n);
        Max(hi, a, b, n);
        Min(lo, a, b, n);
        Compares(zero, hi, 0.0f, CMPMODE::NE, n);
        Compares(inf, lo, __builtin_huge_valf(), CMPMODE::NE, n);
        // t = lo / hi in [0, 1]; u = t or (t - 1) / (t + 1).
        Div(a, lo, hi, n);
        Compares(big, a, TAN_PI_8, CMPMODE::GT, n);
        Adds(hi, a, -1.0f, n);
        Adds(lo, a, 1.0f, n);
        Div(hi, hi, lo, n);
        Select(b, big, hi, a, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        // atan(u) = u + u z (((C0 z + C1) z + C2) z + C3), z = u^2.
        Mul(a, b, b, n);
        Muls(hi, a, C0, n);
        Adds(hi, hi, C1, n);
        Mul(hi, hi, a, n);
        Adds(hi, hi, C2, n);
        Mul(hi, hi, a, n);
        Adds(hi, hi, C3, n);
        Mul(hi, hi, a, n);
        Mul(hi, hi, b, n);
        Add(y, hi, b, n);
        Adds(lo, y, PI_4, n);
        Select(y, big, lo, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        // Octant and quadrant: pi/2 - r where |im| > |re|, 0 for 0/0,
        // pi/4 for inf/inf, pi - r where re is negative (sign bit).
        Muls(lo, y, -1.0f, n);
        Adds(lo, lo, PI_2, n);
        Select(y, swap, lo, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        Select(y, zero, y, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        Select(y, inf, y, PI_4, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        LocalTensor<uint16_t> hiBits = hi.ReinterpretCast<uint16_t>();
        LocalTensor<uint16_t> signBits = signBuf.Get<uint16_t>();
        And(hiBits, re.ReinterpretCast<uint16_t>(), signBits, 2 * n);
        Or(hiBits, hiBits, oneBuf.Get<uint16_t>(), 2 * n);
        Compares(neg, hi, 0.0f, CMPMODE::LT, n);
        Muls(lo, y, -1.0f, n);
        Adds(lo, lo, PI, n);
        Select(y, neg, lo, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        // The sign of im; NaN where a part is NaN.
        And(hiBits, im.ReinterpretCast<uint16_t>(), signBits, 2 * n);
        Or(y.ReinterpretCast<uint16_t>(), y.ReinterpretCast<uint16_t>(), hiBits, 2 * n);
        Compare(big, re, re, CMPMODE::EQ, n);
        Select(y, big, y, __builtin_nanf(""), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        Compare(big, im, im, CMPMODE::EQ, n);
        Select(y, big, y, __builtin_nanf(""), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        outQueueY.EnQue<float>(y);
    }

    __aicore__ inline void CopyOut(uint32_t progress, uint32_t length)
    {
        LocalTensor<float> y = outQueueY.DeQue<float>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(float)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], y, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(float)), 0, 0, 0};
            DataCopyPad(yGm[offset], y, copyParams);
        }
        outQueueY.FreeTensor(y);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<TPosition::VECCALC> reBuf;
    TBuf<TPosition::VECCALC> imBuf;
    TBuf<TPosition::VECCALC> aBuf;
    TBuf<TPosition::VECCALC> bBuf;
    TBuf<TPosition::VECCALC> hiBuf;
    TBuf<TPosition::VECCALC> loBuf;
    TBuf<TPosition::VECCALC> offBuf;
    TBuf<TPosition::VECCALC> signBuf;
    TBuf<TPosition::VECCALC> oneBuf;
    TBuf<TPosition::VECCALC> swapMask;
    TBuf<TPosition::VECCALC> zeroMask;
    TBuf<TPosition::VECCALC> infMask;
    TBuf<TPosition::VECCALC> bigMask;
    TBuf<TPosition::VECCALC> negMask;
    GlobalTensor<float> xGm;
    GlobalTensor<float> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void angle_v2(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelAngleV2<half> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelAngleV2<float> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelAngleC64 op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
