// FastGeluGrad kernel: z = dy * (s + 1.702 x s (1 - s)), s = sigmoid(1.702 x),
// the gradient of FastGelu y = x * sigmoid(1.702 x), elementwise (float16,
// float32), computed in float32.
//
// With a = 1.702 x, e = exp(-a), s = 1 / (1 + e) and 1 - s = e * s:
//   z = dy * s * (1 + a * e * s).
// x is first clamped to [-CLAMP, CLAMP]: beyond it s is 0 or 1 in float32 and
// the product a * e * s would be inf * 0; with the clamp x = +inf gives dy and
// x = -inf a float32-tiny multiple of dy, the limits of the gradient.
// Ops per tile: Maxs, Mins, Muls, Muls, Exp, Adds, Div, Mul, Mul, Adds, Mul,
// Mul (16-bit dtypes add two Casts in and one out).
//
// Every vector core takes a balanced, contiguous range (tiling: split units,
// the first tailCoreNum cores take one unit more) and streams it through UB in
// tiles with double-buffered queues, so MTE2 (copy in), V and MTE3 (copy out)
// overlap. Full tiles move with DataCopy; a tail tile whose size is not a
// multiple of 32 B moves with DataCopyPad.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;
constexpr float ALPHA = 1.702f;
// |x| beyond which s is exactly 0 or 1 in float32 (exp(-1.702 * 50) = 1e-37,
// and exp(1.702 * 50) = 9e36 does not overflow).
constexpr float CLAMP = 50.0f;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T>
class KernelFastGeluGrad {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

public:
    __aicore__ inline KernelFastGeluGrad() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR dy, GM_ADDR x, GM_ADDR z, const TilingData& tiling, TPipe* pipe)
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

        dyGm.SetGlobalBuffer((__gm__ T*)dy + start, blockLength);
        xGm.SetGlobalBuffer((__gm__ T*)x + start, blockLength);
        zGm.SetGlobalBuffer((__gm__ T*)z + start, blockLength);
        pipe->InitBuffer(inQueueDy, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(outQueueZ, tiling.bufferNum, tileLength * sizeof(T));
        pipe->InitBuffer(onesBuf, tileLength * sizeof(float));
        pipe->InitBuffer(aBuf, tileLength * sizeof(float));
        pipe->InitBuffer(eBuf, tileLength * sizeof(float));
        if constexpr (!IS_FLOAT) {
            pipe->InitBuffer(dyfBuf, tileLength * sizeof(float));
            pipe->InitBuffer(xfBuf, tileLength * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (blockLength == 0) {
            return;
        }
        Duplicate(onesBuf.Get<float>(), 1.0f, tileLength);
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
    __aicore__ inline void CopyTileIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t length)
    {
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(dst, src, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(dst, src, copyParams, padParams);
        }
    }

    __aicore__ inline void CopyIn(uint32_t progress, uint32_t length)
    {
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        LocalTensor<T> dyLocal = inQueueDy.AllocTensor<T>();
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        CopyTileIn(dyLocal, dyGm[offset], length);
        CopyTileIn(xLocal, xGm[offset], length);
        inQueueDy.EnQue(dyLocal);
        inQueueX.EnQue(xLocal);
    }

    // zf = dyf * s * (1 + a * e * s) with a = 1.702 xc, e = exp(-a),
    // s = 1 / (1 + e). xf is clobbered (clamped x, then s).
    __aicore__ inline void GradFloat(const LocalTensor<float>& zf, const LocalTensor<float>& dyf,
                                     const LocalTensor<float>& xf, uint32_t length)
    {
        LocalTensor<float> ones = onesBuf.Get<float>();
        LocalTensor<float> a = aBuf.Get<float>();
        LocalTensor<float> e = eBuf.Get<float>();
        Maxs(xf, xf, -CLAMP, length);
        Mins(xf, xf, CLAMP, length);
        Muls(a, xf, ALPHA, length);
        Muls(e, xf, -ALPHA, length);
        Exp(e, e, length);
        Adds(xf, e, 1.0f, length);
        Div(xf, ones, xf, length);  // s
        Mul(e, e, xf, length);      // 1 - s
        Mul(e, e, a, length);
        Adds(e, e, 1.0f, length);
        Mul(e, e, xf, length);
        Mul(zf, e, dyf, length);
    }

    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> dyLocal = inQueueDy.DeQue<T>();
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            GradFloat(zLocal, dyLocal, xLocal, length);
        } else {
            LocalTensor<float> dyf = dyfBuf.Get<float>();
            LocalTensor<float> xf = xfBuf.Get<float>();
            Cast(dyf, dyLocal, RoundMode::CAST_NONE, length);
            Cast(xf, xLocal, RoundMode::CAST_NONE, length);
            GradFloat(dyf, dyf, xf, length);
            Cast(zLocal, dyf, RoundMode::CAST_RINT, length);
        }
        inQueueDy.FreeTensor(dyLocal);
        inQueueX.FreeTensor(xLocal);
        outQueueZ.EnQue<T>(zLocal);
    }

    __aicore__ inline void CopyOut(uint32_t progress, uint32_t length)
    {
        LocalTensor<T> zLocal = outQueueZ.DeQue<T>();
        uint64_t offset = static_cast<uint64_t>(progress) * tileLength;
        if ((length * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(zGm[offset], zLocal, length);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(T)), 0, 0, 0};
            DataCopyPad(zGm[offset], zLocal, copyParams);
        }
        outQueueZ.FreeTensor(zLocal);
    }

private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueDy;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    TBuf<TPosition::VECCALC> onesBuf;
    TBuf<TPosition::VECCALC> aBuf;
    TBuf<TPosition::VECCALC> eBuf;
    TBuf<TPosition::VECCALC> dyfBuf;
    TBuf<TPosition::VECCALC> xfBuf;
    GlobalTensor<T> dyGm;
    GlobalTensor<T> xGm;
    GlobalTensor<T> zGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void fast_gelu_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR z, GM_ADDR workspace,
                                                     GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelFastGeluGrad<half> op;
        op.Init(dy, x, z, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelFastGeluGrad<float> op;
        op.Init(dy, x, z, tilingData, &pipe);
        op.Process();
    }
}
