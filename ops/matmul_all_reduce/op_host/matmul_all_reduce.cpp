// MatmulAllReduce host side: tiling function, shape inference and the
// OpDef.
//
// y = AllReduce_sum over the ranks of (x1 @ x2); x1 [M, K] (or [K, M] with
// is_trans_a), x2 [K, N] (or [N, K] with is_trans_b), y [M, N], all float16,
// accumulated in float32 (shared/ref/operators-l1-l3.md "matmul_all_reduce").
//
// One card: the simulator has one device and no HCCL, so the all-reduce
// runs over one rank, as the operator's benchmark configures it
// (RANK_NUM = 1), where it is the identity; the kernel's result is the
// rank's product. The optional bias is not supported (a case may not give
// it; the golden rejects it).
//
// Tiling: the Matmul API's (matmul_tiling::MultiCoreMatmulTiling) over up
// to 2 x the cube cores vector cores, base blocks BASE_M x BASE_N, K whole
// per core; Block Dim is the AI cores (a MIX 1:2 launch).
#include <cstdint>
#include <cstring>

#include "matmul_all_reduce_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace optiling {
namespace {
constexpr uint32_t MIX_RATIO = 2;  // vector cores per AI core (AIC:AIV 1:2)
constexpr uint32_t RANK_NUM = 1;   // one card

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
constexpr int32_t BASE_M = 128;        // ascendopt:knob choices=64,128,256
constexpr int32_t BASE_N = 256;        // ascendopt:knob choices=64,128,256
constexpr int32_t BASE_K = -1;         // ascendopt:knob choices=-1,32,64,128,256
constexpr int32_t TRAVERSE = 1;        // ascendopt:knob choices=1,2
constexpr int32_t L1_BYTES = -1;       // ascendopt:knob choices=-1,131072,262144,393216
constexpr uint32_t MAX_VEC_CORES = 48;  // ascendopt:knob min=2 max=48 step=2
constexpr int32_t STEP_K = 0;          // ascendopt:knob choices=0,1,2,4,8,16,32
constexpr int32_t L1_DB = 2;           // ascendopt:knob choices=1,2
// ascendopt:tiling-end
constexpr int32_t IN_BYTES = 2;    // float16 A and B
constexpr int32_t BIAS_BYTES = 0;  // the bias row's element in L1 (0: no bias)

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
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (aShape == nullptr || bShape == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const char* reduceOp = attrs->GetAttrPointer<char>(1);
    const bool* transAPtr = attrs->GetAttrPointer<bool>(2);
    const bool* transBPtr = attrs->GetAttrPointer<bool>(3);
    if (reduceOp != nullptr && std::strcmp(reduceOp, "sum") != 0) {
        return ge::GRAPH_FAILED;
    }
    const bool transA = transAPtr != nullptr && *transAPtr;
    const bool transB = transBPtr != nullptr && *transBPtr;
    const gert::Shape& a = aShape->GetStorageShape();
    const gert::Shape& b = bShape->GetStorageShape();
    if (a.GetDimNum() != 2 || b.GetDimNum() != 2) {
        return ge::GRAPH_FAILED;
    }
    const int32_t m = static_cast<int32_t>(transA ? a.GetDim(1) : a.GetDim(0));
    const int32_t k = static_cast<int32_t>(transA ? a.GetDim(0) : a.GetDim(1));
    const int32_t kb = static_cast<int32_t>(transB ? b.GetDim(1) : b.GetDim(0));
    const int32_t n = static_cast<int32_t>(transB ? b.GetDim(0) : b.GetDim(1));
    if (k != kb) {
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
                        matmul_tiling::DataType::DT_FLOAT16, transA);
    cubeTiling.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT16, transB);
    cubeTiling.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT16);
    cubeTiling.SetShape(m, n, k);
    cubeTiling.SetOrgShape(m, n, k);
    cubeTiling.SetFixSplit(BASE_M, BASE_N, BASE_K);
    cubeTiling.SetTraverse(static_cast<matmul_tiling::MatrixTraverse>(TRAVERSE));
    cubeTiling.SetBias(false);
    cubeTiling.SetBufferSpace(L1_BYTES, -1, -1);
    MatmulAllReduceTilingData tiling;
    if (cubeTiling.GetTiling(tiling.cubeTilingData) == -1) {
        return ge::GRAPH_FAILED;
    }
    uint64_t l1Size = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1Size);
    if (!AdjustL1(tiling.cubeTilingData, L1_BYTES > 0 ? L1_BYTES : static_cast<int64_t>(l1Size))) {
        return ge::GRAPH_FAILED;
    }
    tiling.set_transA(transA ? 1 : 0);
    tiling.set_transB(transB ? 1 : 0);
    tiling.set_rankNum(RANK_NUM);
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
    gert::Shape* y = context->GetOutputShape(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (a == nullptr || b == nullptr || y == nullptr || attrs == nullptr) {
        return GRAPH_FAILED;
    }
    const bool* transA = attrs->GetAttrPointer<bool>(2);
    const bool* transB = attrs->GetAttrPointer<bool>(3);
    const int64_t m = (transA != nullptr && *transA) ? a->GetDim(1) : a->GetDim(0);
    const int64_t n = (transB != nullptr && *transB) ? b->GetDim(0) : b->GetDim(1);
    *y = {m, n};
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class MatmulAllReduce : public OpDef {
public:
    explicit MatmulAllReduce(const char* name) : OpDef(name)
    {
        this->Input("x1").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("x2").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("bias").ParamType(OPTIONAL).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Attr("group").String();
        this->Attr("reduce_op").AttrType(OPTIONAL).String("sum");
        this->Attr("is_trans_a").AttrType(OPTIONAL).Bool(false);
        this->Attr("is_trans_b").AttrType(OPTIONAL).Bool(false);
        this->Attr("comm_turn").AttrType(OPTIONAL).Int(0);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(MatmulAllReduce);
}  // namespace ops
