// ComplexMatMul host side: tiling function, shape inference and the OpDef.
//
// z = x @ y (+ bias), complex64; x [..., M, K], y [..., K, N], equal batch
// dimensions, an optional bias of z's full shape [..., M, N]
// (shared/ref/operators-l1-l3.md "complex_mat_mul").
//
// The kernel does the complex product as ONE real matrix product per batch
// on the cube: x read as float [M, 2K] (its real and imaginary parts
// interleaved, as complex64 lies in memory) times a float B' [2K, 2N] whose
// row 2k is y's row k as it is (yr, yi, ...) and whose row 2k + 1 is
// (-yi, yr, ...); the product [M, 2N] is z in its own interleaved layout:
//   z[m, 2n]     = sum_k xr yr - xi yi,   z[m, 2n + 1] = sum_k xr yi + xi yr.
// The vector cores build B' in the workspace first (a pair swap with a
// sign, one Gather per UB tile).
//
// Tiling: the Matmul API's (matmul_tiling::MultiCoreMatmulTiling) of
// [M, 2N, 2K] with float A, B (not transposed) and C over the vector cores
// one batch gets (the cores / batch), so that the batches' blocks together
// fill the cores; the kernel hands the batch x blocks work items out
// round-robin. Block Dim is the AI cores those items need (a MIX 1:2
// launch). The B' build cuts y's rows into UB tiles of UB_TILE floats.
#include <cstdint>

#include "complex_mat_mul_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace optiling {
namespace {
constexpr uint32_t MIX_RATIO = 2;     // vector cores per AI core (AIC:AIV 1:2)
constexpr uint32_t UB_TILE = 4096;    // floats of one B' build tile (the kernel's constant)
constexpr int64_t MAX_ND_VALUE = 65535;  // Nd2NzParams' 16-bit row lengths (2K, 2N)

// The Matmul tiling the host may choose (guide 6.2.4.2.2): SetFixSplit's
// base block (a float B not transposed needs baseK a multiple of 16),
// SetTraverse's order (1 FIRSTM, 2 FIRSTN), SetBufferSpace's L1 bytes
// (-1: all of L1) and the vector cores.
// ascendopt:tiling-begin
constexpr int32_t BASE_M = 80;         // ascendopt:knob min=16 max=256 step=16
constexpr int32_t BASE_N = 336;         // ascendopt:knob min=16 max=512 step=16
constexpr int32_t BASE_K = 16;          // ascendopt:knob choices=16,32,64
constexpr int32_t TRAVERSE = 1;         // ascendopt:knob choices=1,2
constexpr int32_t L1_BYTES = -1;        // ascendopt:knob choices=-1,131072,262144,393216
constexpr uint32_t MAX_VEC_CORES = 48;  // ascendopt:knob min=2 max=48 step=2
constexpr int32_t STEP_K = 8;           // ascendopt:knob choices=0,1,2,4,8,16
constexpr int32_t L1_DB = 2;            // ascendopt:knob choices=1,2
// ascendopt:tiling-end
constexpr int32_t IN_BYTES = 4;  // float A and B

// STEP_K (K base blocks per GM -> L1 load of A and of B; 0: GetTiling's)
// and L1_DB (loads of each kept in L1) applied to GetTiling's `t`, as the
// guide allows within table 6-1073's constraints; false when the A and B
// blocks then do not fit `l1Bytes`.
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
                         static_cast<int64_t>(t.get_baseN()) * t.get_baseK() * t.get_depthB1() * IN_BYTES;
    return need <= l1Bytes;
}

int64_t BatchOf(const gert::Shape& s)
{
    int64_t b = 1;
    for (size_t i = 0; i + 2 < s.GetDimNum(); ++i) {
        b *= s.GetDim(i);
    }
    return b;
}

bool SameBatchDims(const gert::Shape& a, const gert::Shape& b)
{
    if (a.GetDimNum() != b.GetDimNum()) {
        return false;
    }
    for (size_t i = 0; i + 2 < a.GetDimNum(); ++i) {
        if (a.GetDim(i) != b.GetDim(i)) {
            return false;
        }
    }
    return true;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const gert::StorageShape* yShape = context->GetInputShape(1);
    const gert::StorageShape* biasShape = context->GetOptionalInputShape(2);
    if (xShape == nullptr || yShape == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x = xShape->GetStorageShape();
    const gert::Shape& y = yShape->GetStorageShape();
    const size_t dims = x.GetDimNum();
    if (dims < 2 || !SameBatchDims(x, y) || x.GetDim(dims - 1) != y.GetDim(dims - 2)) {
        return ge::GRAPH_FAILED;
    }
    const int64_t batch = BatchOf(x);
    const int64_t m = x.GetDim(dims - 2);
    const int64_t k = x.GetDim(dims - 1);
    const int64_t n = y.GetDim(dims - 1);
    if (batch <= 0 || m <= 0 || k <= 0 || n <= 0 || 2 * k > MAX_ND_VALUE || 2 * n > MAX_ND_VALUE) {
        return ge::GRAPH_FAILED;
    }
    const bool hasBias = biasShape != nullptr;
    if (hasBias) {
        const gert::Shape& b = biasShape->GetStorageShape();
        if (!SameBatchDims(x, b) || b.GetDim(dims - 2) != m || b.GetDim(dims - 1) != n) {
            return ge::GRAPH_FAILED;
        }
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint32_t aicNum = ascendcPlatform.GetCoreNumAic();
    uint32_t vecCores = aicNum * MIX_RATIO;
    if (vecCores > MAX_VEC_CORES) {
        vecCores = MAX_VEC_CORES;
    }
    // The cores one batch's product is split over.
    int64_t perBatch = static_cast<int64_t>(vecCores) / batch;
    if (perBatch < 1) {
        perBatch = 1;
    }
    matmul_tiling::MultiCoreMatmulTiling cubeTiling(ascendcPlatform);
    cubeTiling.SetDim(static_cast<int32_t>(perBatch));
    cubeTiling.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT);
    cubeTiling.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT);
    cubeTiling.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT);
    cubeTiling.SetShape(static_cast<int32_t>(m), static_cast<int32_t>(2 * n), static_cast<int32_t>(2 * k));
    cubeTiling.SetOrgShape(static_cast<int32_t>(m), static_cast<int32_t>(2 * n), static_cast<int32_t>(2 * k));
    cubeTiling.SetFixSplit(BASE_M, BASE_N, BASE_K);
    cubeTiling.SetTraverse(static_cast<matmul_tiling::MatrixTraverse>(TRAVERSE));
    cubeTiling.SetBias(false);
    cubeTiling.SetBufferSpace(L1_BYTES, -1, -1);
    ComplexMatMulTilingData tiling;
    if (cubeTiling.GetTiling(tiling.cubeTilingData) == -1) {
        return ge::GRAPH_FAILED;
    }
    uint64_t l1Size = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1Size);
    if (!AdjustL1(tiling.cubeTilingData, L1_BYTES > 0 ? L1_BYTES : static_cast<int64_t>(l1Size))) {
        return ge::GRAPH_FAILED;
    }
    const int64_t blocks = tiling.cubeTilingData.get_usedCoreNum();
    const int64_t items = blocks * batch;
    int64_t blockDim = (items + MIX_RATIO - 1) / MIX_RATIO;
    if (blockDim > static_cast<int64_t>(vecCores / MIX_RATIO)) {
        blockDim = vecCores / MIX_RATIO;
    }
    // The B' build: whole rows of y per UB tile when a row fits (the row
    // pitch in UB rounded up to 32 bytes), else one row in pieces.
    const int64_t width = 2 * n;
    const int64_t pitch = (width + 7) / 8 * 8;
    int64_t rowsPerTile = 1;
    int64_t segLen = width;
    if (pitch <= UB_TILE) {
        rowsPerTile = UB_TILE / pitch;
    } else {
        segLen = UB_TILE;
    }
    tiling.set_batch(static_cast<uint32_t>(batch));
    tiling.set_m(static_cast<uint32_t>(m));
    tiling.set_k(static_cast<uint32_t>(k));
    tiling.set_n(static_cast<uint32_t>(n));
    tiling.set_hasBias(hasBias ? 1 : 0);
    tiling.set_rowsPerTile(static_cast<uint32_t>(rowsPerTile));
    tiling.set_segLen(static_cast<uint32_t>(segLen));
    tiling.set_blocksPerBatch(static_cast<uint32_t>(blocks));
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    // The system workspace, then B' of every batch: [batch, 2K, 2N] floats.
    workspaces[0] = static_cast<size_t>(ascendcPlatform.GetLibApiWorkSpaceSize()) +
                    static_cast<size_t>(batch * 2 * k * 2 * n) * sizeof(float);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    const gert::Shape* y = context->GetInputShape(1);
    gert::Shape* z = context->GetOutputShape(0);
    if (x == nullptr || y == nullptr || z == nullptr || x->GetDimNum() < 2) {
        return GRAPH_FAILED;
    }
    *z = *x;
    z->SetDim(x->GetDimNum() - 1, y->GetDim(y->GetDimNum() - 1));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class ComplexMatMul : public OpDef {
public:
    explicit ComplexMatMul(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_COMPLEX64}).Format({ge::FORMAT_ND});
        this->Input("y").ParamType(REQUIRED).DataType({ge::DT_COMPLEX64}).Format({ge::FORMAT_ND});
        this->Input("bias").ParamType(OPTIONAL).DataType({ge::DT_COMPLEX64}).Format({ge::FORMAT_ND});
        this->Output("z").ParamType(REQUIRED).DataType({ge::DT_COMPLEX64}).Format({ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ComplexMatMul);
}  // namespace ops
