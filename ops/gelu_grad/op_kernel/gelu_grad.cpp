// GeluGrad kernel: the gradient of the tanh-approximate GELU, elementwise
// (float16, float32, bfloat16), computed in float32:
//   px = exp((c0 x^2 + c1) x),  t = 1 / (1 + px),
//   z  = dy * (t + px t^2 x (c2 x^2 + c3)).
// y (the forward output) is an argument of the op but not of the formula: it
// is never read.
// x is first clamped to [-CLAMP, CLAMP]: beyond it t is 0 or 1 in float32 and
// px t^2 x (...) would be inf * 0; with the clamp x = +inf gives dy and
// x = -inf a float32-tiny multiple of dy, the limits of the gradient.
// Ops per tile: Maxs, Mins, Mul, Muls, Adds, Mul, Exp, Muls, Adds, Mul, Adds,
// Div, Mul, Mul, Mul, Add, Mul (16-bit dtypes add two Casts in and one out).
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
constexpr float C0 = -0.0713548163f;
constexpr float C1 = -1.5957691216f;
constexpr float C2 = 0.2140644488f;
constexpr float C3 = 1.5957691216f;
// |x| beyond which t is exactly 0 or 1 in float32 (px = exp(87.3) = 8e37 at
// x = -10 does not overflow; px = 1e-38 at x = 10).
constexpr float CLAMP = 10.0f;

template <typename A, typename B>
struct SameType {
    static constexpr bool value = false;
};
template <typename A>
struct SameType<A, A> {
    static constexpr bool value = true;
};

template <typename T>
class KernelGeluGrad {
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

public:
    __aicore__ inline KernelGeluGrad() {}

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
        pipe->InitBuffer(uBuf, tileLength * sizeof(float));
        pipe->InitBuffer(pBuf, tileLength * sizeof(float));
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

    // zf = dyf * (t + px t^2 q), q = xc (c2 xc^2 + c3), for the clamped x.
    // xf is clobbered (clamped x, then t).
    __aicore__ inline void GradFloat(const LocalTensor<float>& zf, const LocalTensor<float>& dyf,
                                     const LocalTensor<float>& xf, uint32_t length)
    {
        LocalTensor<float> ones = onesBuf.Get<float>();
        LocalTensor<float> u = uBuf.Get<float>();
        LocalTensor<float> p = pBuf.Get<float>();
        Maxs(xf, xf, -CLAMP, length);
        Mins(xf, xf, CLAMP, length);
        Mul(u, xf, xf, length);  // x^2
        Muls(p, u, C0, length);
        Adds(p, p, C1, length);
        Mul(p, p, xf, length);
        Exp(p, p, length);       // px
        Muls(u, u, C2, length);
        Adds(u, u, C3, length);
        Mul(u, u, xf, length);   // q
        Adds(xf, p, 1.0f, length);
        Div(xf, ones, xf, length);  // t
        Mul(p, p, xf, length);
        Mul(p, p, xf, length);   // px t^2
        Mul(p, p, u, length);
        Add(p, p, xf, length);
        Mul(zf, p, dyf, length);
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
    TBuf<TPosition::VECCALC> uBuf;
    TBuf<TPosition::VECCALC> pBuf;
    TBuf<TPosition::VECCALC> dyfBuf;
    TBuf<TPosition::VECCALC> xfBuf;
    GlobalTensor<T> dyGm;
    GlobalTensor<T> xGm;
    GlobalTensor<T> zGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void gelu_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace,
                                                GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        KernelGeluGrad<half> op;
        op.Init(dy, x, z, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelGeluGrad<float> op;
        op.Init(dy, x, z, tilingData, &pipe);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        KernelGeluGrad<bfloat16_t> op;
        op.Init(dy, x, z, tilingData, &pipe);
        op.Process();
    }
}
