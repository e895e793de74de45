// MatmulApiConstant kernel: c = a @ b + bias with the high-level Matmul
// API and a constant base block (guide 6.2.4.2.1: GetMMConfig with
// MatmulShapeParams); the rest of the shape comes from the runtime
// TCubeTiling.
//
// A MIX kernel (the Matmul API makes it AIC:AIV 1:2): vector core
// GetBlockIdx() takes the singleCoreM x singleCoreN block (mi, ni) of C,
// M first, clipped at the matrix edge (SetTail), and has its AI core's cube
// core compute it with one IterateAll into GM.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace AscendC;

namespace {
constexpr matmul::MatmulShapeParams SHAPE = {0, 0, 0, 128, 128, 64};
constexpr matmul::MatmulConfig MM_CONFIG = matmul::GetMMConfig<matmul::MatmulConfigMode::CONFIG_NORM>(SHAPE);

using AType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, half>;
using BType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, half>;
using CType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;
using BiasType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;
}  // namespace

extern "C" __global__ __aicore__ void matmul_api_constant(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                          GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    TPipe pipe;
    matmul::Matmul<AType, BType, CType, BiasType, MM_CONFIG> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tilingData.cubeTilingData);
    const TCubeTiling& t = tilingData.cubeTilingData;
    const int32_t idx = static_cast<int32_t>(GetBlockIdx());
    if (idx >= t.usedCoreNum) {
        return;
    }
    const int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
    const int32_t mi = idx % mBlocks;
    const int32_t ni = idx / mBlocks;
    const int32_t m0 = mi * t.singleCoreM;
    const int32_t n0 = ni * t.singleCoreN;
    const int32_t tailM = t.M - m0 < t.singleCoreM ? t.M - m0 : t.singleCoreM;
    const int32_t tailN = t.N - n0 < t.singleCoreN ? t.N - n0 : t.singleCoreN;
    if (tailM <= 0 || tailN <= 0) {
        return;
    }
    GlobalTensor<half> aGm;
    GlobalTensor<half> bGm;
    GlobalTensor<float> biasGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a) + static_cast<int64_t>(m0) * t.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b) + n0);
    biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias) + n0);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c) + static_cast<int64_t>(m0) * t.N + n0);
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm);
    mm.SetBias(biasGm);
    if (tailM != t.singleCoreM || tailN != t.singleCoreN) {
        mm.SetTail(tailM, tailN);
    }
    mm.IterateAll(cGm);
    mm.End();
}
