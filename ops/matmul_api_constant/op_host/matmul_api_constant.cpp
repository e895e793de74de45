// MatmulApiConstant host side: tiling function, shape inference and the
// OpDef.
//
// c = a @ b + bias; a [M, K] and b [K, N] float16, bias [N] and c float32
// (shared/ref/operators-l1-l3.md "matmul_api_constant").
//
// Tiling: the Matmul API's own (matmul_tiling::MultiCoreMatmulTiling)
// splits M and N over up to 2 x the cube cores vector cores (a MIX launch:
// each AI core runs one cube core serving two vector cores), base blocks
// of BASE_M x BASE_N (the kernel's constant Matmul configuration names the
// same base block), K whole per core. Block Dim is the AI cores: half the
// vector cores the split uses, rounded up.
#include <cstdint>

#include "matmul_api_constant_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace optiling {
namespace {
constexpr uint32_t MIX_RATIO = 2;  // vector cores per AI core (AIC:AIV 1:2)

// The Matmul tiling the host may choose (guide 6.2.4.2.2): SetFixSplit's
// base block (BASE_K -1: the tiling's own), SetTraverse's order (1 FIRSTM,
// 2 FIRSTN), SetBufferSpace's L1 bytes (-1: all of L1, which with the
// base block sets how many K blocks one L1 load holds), SetDim's cores;
// then GetTiling's steps and L1 depth adjusted as the guide allows (a
// TCubeTiling from GetTiling may be changed within table 6-1073's
// constraints): STEP_K K blocks per GM -> L1 load of A and of B (0:
// GetTiling's), L1_DB loads of each kept in L1 (depthA1 = stepM x stepKa x
// L1_DB; 2 double-buffers, 1 leaves room for a whole K). A choice whose
// blocks do not fit L0A/L0B/L0C or L1 fails the tiling.
// ascendopt:tiling-begin
// The base block is the kernel's constant MatmulConfig (basicM/N/K =
// 128/128/64, tiling constantisation): the runtime tiling must agree, so
// it is no knob here (the simulator traps on a disagreement).
constexpr int32_t BASE_M = 128;
constexpr int32_t BASE_N = 128;
constexpr int32_t BASE_K = 64;
constexpr int32_t TRAVERSE = 1;        // ascendopt:knob choices=1,2
constexpr int32_t L1_BYTES = -1;       // ascendopt:knob choices=-1,131072,262144,393216
constexpr uint32_t MAX_VEC_CORES = 48;  // ascendopt:knob min=2 max=48 step=2
constexpr int32_t STEP_K = 0;          // ascendopt:knob choices=0,1,2,4,8,16,32
constexpr int32_t L1_DB = 2;           // ascendopt:knob choices=1,2
// ascendopt:tiling-end
constexpr int32_t IN_BYTES = 2;    // float16 A and B
constexpr int32_t BIAS_BYTES = 4;  // the bias row's element in L1 (0: no bias)

// STEP_K and L1_DB applied to GetTiling's `t`; false when the A and B
// blocks and the bias row then do not fit `l1Bytes` (table 6-1073:
// baseM x baseK x depthA1 + baseN x baseK x depthB1 elements + the bias
// row <= L1).
bool AdjustL1(optiling::TCubeTiling& t, int64_t l1Bytes)
{
    const int32_t kBlocks = (t.get_singleCoreK() + t.get_baseK() - 1) / t.get_baseK();
    int32_t step = t.get_stepKa();
    if (STEP_K > 0) {
        step = STEP_K < kBlocks ? STEP_K : kBlocks;
    }
    t.set_stepKa(step);
    t.set_stepKb(step);
    t.set_depthA1(t.get_stepM() * step * L1_DB);
    t.set_depthB1(t.get_stepN() * step * L1_DB);
    const int64_t need = static_cast<int64_t>(t.get_baseM()) * t.get_baseK() * t.get_depthA1() * IN_BYTES +
                         static_cast<int64_t>(t.get_baseN()) * t.get_baseK() * t.get_depthB1() * IN_BYTES +
                         static_cast<int64_t>(t.get_baseN()) * BIAS_BYTES;
    return need <= l1Bytes;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* aShape = context->GetInputShape(0);
    const gert::StorageShape* bShape = context->GetInputShape(1);
    const gert::StorageShape* biasShape = context->GetInputShape(2);
    if (aShape == nullptr || bShape == nullptr || biasShape == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& a = aShape->GetStorageShape();
    const gert::Shape& b = bShape->GetStorageShape();
    if (a.GetDimNum() != 2 || b.GetDimNum() != 2 || a.GetDim(1) != b.GetDim(0)) {
        return ge::GRAPH_FAILED;
    }
    const int32_t m = static_cast<int32_t>(a.GetDim(0));
    const int32_t k = static_cast<int32_t>(a.GetDim(1));
    const int32_t n = static_cast<int32_t>(b.GetDim(1));
    if (biasShape->GetStorageShape().GetShapeSize() != n) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t vecCores = ascendcPlatform.GetCoreNumAic() * MIX_RATIO;
    if (vecCores > MAX_VEC_CORES) {
        vecCores = MAX_VEC_CORES;
    }
    matmul_tiling::MultiCoreMatmulTiling cubeTiling(ascendcPlatform);
    cubeTiling.SetDim(static_cast<int32_t>(vecCores));
    cubeTiling.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT16);
    cubeTiling.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT16);
    cubeTiling.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT);
    cubeTiling.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                           matmul_tiling::DataType::DT_FLOAT);
    cubeTiling.SetShape(m, n, k);
    cubeTiling.SetOrgShape(m, n, k);
    cubeTiling.SetFixSplit(BASE_M, BASE_N, BASE_K);
    cubeTiling.SetTraverse(static_cast<matmul_tiling::MatrixTraverse>(TRAVERSE));
    cubeTiling.SetBias(true);
    cubeTiling.SetBufferSpace(L1_BYTES, -1, -1);
    MatmulApiConstantTilingData tiling;
    if (cubeTiling.GetTiling(tiling.cubeTilingData) == -1) {
        return ge::GRAPH_FAILED;
    }
    uint64_t l1Size = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1Size);
    if (!AdjustL1(tiling.cubeTilingData, L1_BYTES > 0 ? L1_BYTES : static_cast<int64_t>(l1Size))) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t used = static_cast<uint32_t>(tiling.cubeTilingData.usedCoreNum);
    context->SetBlockDim((used + MIX_RATIO - 1) / MIX_RATIO);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = static_cast<size_t>(ascendcPlatform.GetLibApiWorkSpaceSize());
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* a = context->GetInputShape(0);
    const gert::Shape* b = context->GetInputShape(1);
    gert::Shape* c = context->GetOutputShape(0);
    if (a == nullptr || b == nullptr || c == nullptr) {
        return GRAPH_FAILED;
    }
    *c = {a->GetDim(0), b->GetDim(1)};
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class MatmulApiConstant : public OpDef {
public:
    explicit MatmulApiConstant(const char* name) : OpDef(name)
    {
        this->Input("a").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("b").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("bias").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("c").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(MatmulApiConstant);
}  // namespace ops
