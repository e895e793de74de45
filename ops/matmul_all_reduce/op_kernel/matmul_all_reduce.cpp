// MatmulAllReduce kernel: y = AllReduce_sum over the ranks of (x1 @ x2),
// on one card (rankNum 1: the all-reduce is the identity, see the host
// code), with the high-level Matmul API.
//
// A MIX kernel (the Matmul API makes it AIC:AIV 1:2): vector core
// GetBlockIdx() takes the singleCoreM x singleCoreN block (mi, ni) of y,
// M first, clipped at the matrix edge (SetTail), and has its AI core's cube
// core compute it with one IterateAll into GM (float32 accumulation,
// rounded once to float16 by the Fixpipe).
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace AscendC;

namespace {
using AType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, half>;
using BType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, half>;
using CType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, half>;
using BiasType = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;
}  // namespace

extern "C" __global__ __aicore__ void matmul_all_reduce(GM_ADDR x1, GM_ADDR x2, GM_ADDR bias, GM_ADDR y,
                                                        GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    TPipe pipe;
    matmul::Matmul<AType, BType, CType, BiasType> mm;
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
    const bool transA = tilingData.transA != 0;
    const bool transB = tilingData.transB != 0;
    GlobalTensor<half> aGm;
    GlobalTensor<half> bGm;
    GlobalTensor<half> yGm;
    // x1 [M, K]: rows m0..; transposed [K, M]: columns m0...
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x1) + (transA ? m0 : static_cast<int64_t>(m0) * t.Ka));
    // x2 [K, N]: columns n0..; transposed [N, K]: rows n0...
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x2) + (transB ? static_cast<int64_t>(n0) * t.Kb : n0));
    yGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(y) + static_cast<int64_t>(m0) * t.N + n0);
    mm.SetTensorA(aGm, transA);
    mm.SetTensorB(bGm, transB);
    if (tailM != t.singleCoreM || tailN != t.singleCoreN) {
        mm.SetTail(tailM, tailN);
    }
    mm.IterateAll(yGm);
    mm.End();
    // The all-reduce over rankNum ranks: with one rank, this card's product
    // is the sum; there is nothing to exchange.
    (void)bias;
    (void)workspace;
}
