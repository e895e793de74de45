// Cos kernel: y = cos(x), elementwise (float16, float32, bfloat16), computed
// in float32 (16-bit inputs are Cast up exactly and the result is rounded
// once on the way back).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose size is not a
// multiple of 32 B moves with DataCopyPad.
//
// There is no Cos instruction (the high-level Cos API is a composition), so
// the kernel composes it from basic vector instructions, all on whole tiles:
//   1. range reduction: n = rint(x / pi) (Muls, Cast f32->f32 CAST_RINT),
//      r = x - n*pi with pi split Cody-Waite style into P1 (8 significant
//      bits) + P2 (9 bits) + P3, three Axpy. n*P1 and n*P2 are exact for
//      |n| < 2^15, i.e. for every float16 input (|x| <= 65504), and
//      x - n*P1 is exact (Sterbenz), so |r| <= pi/2 to about 1e-7;
//   2. cos(r) = 1 + z*(c1 + z*(c2 + z*(c3 + z*(c4 + z*c5)))), z = r^2, a
//      least-squares fit on [0, (pi/2)^2] (error 1.2e-7 in float32 Horner),
//      Muls/Adds/Mul;
//   3. cos(x) = (-1)^n cos(r): n as int32 (Cast CAST_RINT), ShiftLeft by 31
//      puts its parity in the sign bit, and an Or on the 16-bit halves sets
//      the sign of cos(r) >= 0.
// inf gives n = inf and r = inf - inf = NaN, so cos(+-inf) = NaN as in torch;
// NaN propagates. float32 inputs are reduced accurately for |x| < 1e5 (n*P1
// stays exact up to |n| < 2^16); beyond that the reduction error grows
// with |x| (a Payne-Hanek reduction would be needed).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

constexpr int32_t PATH_FLOAT = 1;  // float32 in place
constexpr int32_t PATH_WIDEN = 2;  // float16 / bfloat16 through float32

constexpr float INV_PI = 0.318309886183790671538f;
constexpr float PI_1 = 3.140625f;                   // 201 * 2^-6
constexpr float PI_2 = 0.0009670257568359375f;      // 507 * 2^-19
constexpr float PI_3 = 6.278329465203569e-07f;      // pi - PI_1 - PI_2, rounded
constexpr float COS_C1 = -0.5f;
constexpr float COS_C2 = 0.04166664183139801f;
constexpr float COS_C3 = -0.00138884037733078f;
constexpr float COS_C4 = 2.4761877284618095e-05f;
constexpr float COS_C5 = -2.607694966627605e-07f;

template <typename T, int32_t PATH>
class KernelCos {
public:
    __aicore__ inline KernelCos() {}

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
        pipe->InitBuffer(nBuf, tileLength * sizeof(float));
        pipe->InitBuffer(signBuf, tileLength * sizeof(int32_t));
        if constexpr (PATH == PATH_WIDEN) {
            pipe->InitBuffer(floatBuf, tileLength * sizeof(float));
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
        if constexpr (PATH == PATH_FLOAT) {
            // x is reduced in place in the input buffer; the result lands in y.
            CosFloat(yLocal, xLocal, length);
        } else {
            LocalTensor<float> xf = floatBuf.Get<float>();
            Cast(xf, xLocal, RoundMode::CAST_NONE, length);
            CosFloat(xf, xf, length);
            Cast(yLocal, xf, RoundMode::CAST_RINT, length);
        }
        outQueueY.EnQue<T>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }

    // dst = cos(x) for `length` floats; x is overwritten (dst may be x).
    __aicore__ inline void CosFloat(const LocalTensor<float>& dst, const LocalTensor<float>& x, uint32_t length)
    {
        LocalTensor<float> n = nBuf.Get<float>();
        LocalTensor<int32_t> sign = signBuf.Get<int32_t>();
        // n = rint(x / pi), as float and as int32.
        Muls(n, x, INV_PI, length);
        Cast(n, n, RoundMode::CAST_RINT, length);
        Cast(sign, n, RoundMode::CAST_RINT, length);
        // r = x - n * pi, in x.
        Axpy(x, n, -PI_1, length);
        Axpy(x, n, -PI_2, length);
        Axpy(x, n, -PI_3, length);
        // z = r^2 in n; p(z) in x.
        Mul(n, x, x, length);
        Muls(x, n, COS_C5, length);
        Adds(x, x, COS_C4, length);
        Mul(x, x, n, length);
        Adds(x, x, COS_C3, length);
        Mul(x, x, n, length);
        Adds(x, x, COS_C2, length);
        Mul(x, x, n, length);
        Adds(x, x, COS_C1, length);
        Mul(x, x, n, length);
        Adds(x, x, 1.0f, length);
        // The parity of n into the sign bit: (-1)^n * p.
        ShiftLeft(sign, sign, static_cast<int32_t>(31), length);
        LocalTensor<uint16_t> dstBits = dst.template ReinterpretCast<uint16_t>();
        LocalTensor<uint16_t> pBits = x.template ReinterpretCast<uint16_t>();
        LocalTensor<uint16_t> signBits = sign.template ReinterpretCast<uint16_t>();
        Or(dstBits, pBits, signBits, static_cast<int32_t>(length * 2));
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
    TBuf<TPosition::VECCALC> nBuf;
    TBuf<TPosition::VECCALC> signBuf;
    TBuf<TPosition::VECCALC> floatBuf;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

template <typename T, int32_t PATH, typename TilingData>
__aicore__ inline void RunCos(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
{
    KernelCos<T, PATH> op;
    op.Init(x, y, tiling, pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void cos(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        RunCos<half, PATH_WIDEN>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(2)) {
        RunCos<float, PATH_FLOAT>(x, y, tilingData, &pipe);
    } else if (TILING_KEY_IS(3)) {
        RunCos<bfloat16_t, PATH_WIDEN>(x, y, tilingData, &pipe);
    }
}
