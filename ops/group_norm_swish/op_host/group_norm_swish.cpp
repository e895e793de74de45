// GroupNormSwish host side: tiling function, shape inference and the OpDef.
//
// Inputs x (N, C, *; float16, float32 or bfloat16; NCHW), gamma and beta
// ([C], x's dtype or float32). Attrs `num_groups` (required, divides C),
// `data_format` ("NCHW" only), `eps` (1e-5), `activate_swish` (true) and
// `swish_scale` (1.0). Per group of C / num_groups channels of a sample:
//   mean = E[x], rstd = 1 / sqrt(Var[x] + eps) (biased variance)
//   z = (x - mean) * rstd * gamma_c + beta_c
//   y = z * sigmoid(swish_scale * z) if activate_swish, else z
// computed in float32; outputs y (x's shape and dtype), mean and rstd
// ([N, num_groups], gamma's dtype).
//
// Tiling: groups are split over the vector cores (balanced to one group); a
// tile holds as many whole groups as fit in UB next to the kernel's buffers
// (the budget below mirrors its InitBuffer calls), capped by TILE_ELEMS,
// preferring a parameter tile built once per core (cyclic) when it fits.
// The tiling key is xDtype * 10 + (gamma is float32), xDtype 1 float16,
// 2 float32, 3 bfloat16.
#include <cstdint>
#include <cstring>

#include "group_norm_swish_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;         // UB data block
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t GROUP_ALIGN = 16;         // group stride in elements: whole blocks for 16-bit types
constexpr uint32_t MAX_BATCH_STRIDE = 2040;  // repeat stride limit (255 blocks) in floats
constexpr uint32_t BATCH_LANES = 64;         // floats per 256 B repeat: columns per strided instruction
constexpr uint32_t MAX_COPY_ROWS = 4095;     // DataCopyPad blockCount limit
constexpr uint32_t CONST_BYTES = 256;        // one repeat of ones
constexpr uint32_t ATTR_NUM_GROUPS = 0;
constexpr uint32_t ATTR_DATA_FORMAT = 1;
constexpr uint32_t ATTR_EPS = 2;
constexpr uint32_t ATTR_ACTIVATE_SWISH = 3;
constexpr uint32_t ATTR_SWISH_SCALE = 4;

uint64_t AlignUp(uint64_t value, uint64_t align)
{
    return (value + align - 1) / align * align;
}

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

struct GroupShape {
    uint64_t stride;      // groupStride
    uint64_t channels;    // C
    uint32_t elemBytes;   // x
    uint32_t paramBytes;  // gamma, mean, rstd
    bool batched;
};

// UB bytes of a tile of `rows` groups with `paramRows` parameter rows
// (mirrors the kernel's InitBuffer calls).
uint64_t UbBytes(uint64_t rows, uint64_t paramRows, const GroupShape& s, uint32_t bufferNum)
{
    uint64_t elems = rows * s.stride;
    uint64_t rowsUp = AlignUp(rows, 8);
    uint64_t outRows = AlignUp(rowsUp * s.paramBytes, BLOCK_BYTES);
    uint64_t bytes = bufferNum * AlignUp(elems * s.elemBytes, BLOCK_BYTES)           // x
                     + bufferNum * (AlignUp(elems * s.elemBytes, BLOCK_BYTES) + 2 * outRows)  // y, mean, rstd
                     + 3 * elems * FLOAT_BYTES                                       // float work
                     + 2 * paramRows * s.stride * FLOAT_BYTES                        // gamma, beta tiles
                     + 2 * AlignUp(s.channels, 8) * FLOAT_BYTES                      // gamma, beta (float)
                     + AlignUp(s.channels, 16) * FLOAT_BYTES                         // parameter staging
                     + s.stride * FLOAT_BYTES                                        // gather offsets
                     + CONST_BYTES                                                   // ones
                     + 3 * rowsUp * FLOAT_BYTES                                      // sums, mean, rstd
                     + rowsUp * BLOCK_BYTES                                          // Brcb blocks
                     + (s.batched ? rowsUp * BLOCK_BYTES                             // 8-lane partials
                                  : rows * CONST_BYTES + rowsUp * BLOCK_BYTES);      // 64- and 8-lane partials
    return bytes;
}

struct GroupPlan {
    uint32_t coreNum;
    uint32_t blockGroups;
    uint32_t tailCoreNum;
    uint32_t tileGroups;
    uint32_t cyclic;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_ELEMS = 8192;       // ascendopt:knob min=512 max=32768 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_BYTES = 2048;   // ascendopt:knob min=32 max=65536 step=pow2

// Largest tile (in groups) of at most `cap` groups that fits in UB.
uint64_t FitRows(uint64_t cap, uint64_t extraParamRows, const GroupShape& s, uint64_t ubBytes)
{
    uint64_t rows = cap;
    while (rows > 0 && UbBytes(rows, rows + extraParamRows, s, BUFFER_NUM) > ubBytes) {
        rows--;
    }
    return rows;
}

// Splits `groups` groups over at most `aivNum` cores and sizes the tile.
// Returns false when not even one group fits in UB.
bool MakeGroupPlan(uint64_t groups, uint64_t numGroups, const GroupShape& s, uint32_t aivNum, uint64_t ubBytes,
                   GroupPlan& plan)
{
    uint64_t target = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t coreCap = CeilDiv(groups * s.stride * s.elemBytes, MIN_CORE_BYTES);
    if (target > coreCap) {
        target = coreCap;
    }
    if (target > groups) {
        target = groups;
    }
    if (target == 0) {
        target = 1;
    }
    uint64_t perCore = CeilDiv(groups, target);
    uint64_t coreNum = CeilDiv(groups, perCore);
    uint64_t cap = TILE_ELEMS / s.stride;
    if (cap == 0) {
        cap = 1;
    }
    if (cap > MAX_COPY_ROWS) {
        cap = MAX_COPY_ROWS;
    }
    if (cap > perCore) {
        cap = perCore;
    }
    // Prefer a parameter tile built once (numGroups - 1 extra rows) when it
    // keeps at least half of the tile.
    uint64_t cyclicRows = FitRows(cap, numGroups - 1, s, ubBytes);
    uint64_t gatherRows = FitRows(cap, 0, s, ubBytes);
    bool cyclic = cyclicRows > 0 && 2 * cyclicRows >= gatherRows;
    uint64_t tileGroups = cyclic ? cyclicRows : gatherRows;
    if (tileGroups == 0) {
        return false;
    }
    uint64_t tileNum = CeilDiv(perCore, tileGroups);
    tileGroups = CeilDiv(perCore, tileNum);
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.blockGroups = static_cast<uint32_t>(groups / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(groups % coreNum);
    plan.tileGroups = static_cast<uint32_t>(tileGroups);
    plan.cyclic = cyclic ? 1 : 0;
    return true;
}
// ascendopt:tiling-end

bool DtypeCode(ge::DataType dtype, uint64_t& code, uint32_t& bytes)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            code = 1;
            bytes = 2;
            return true;
        case ge::DT_FLOAT:
            code = 2;
            bytes = 4;
            return true;
        case ge::DT_BF16:
            code = 3;
            bytes = 2;
            return true;
        default:
            return false;
    }
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const gert::StorageShape* gammaShape = context->GetInputShape(1);
    const gert::StorageShape* betaShape = context->GetInputShape(2);
    const auto xDesc = context->GetInputDesc(0);
    const auto gammaDesc = context->GetInputDesc(1);
    const auto betaDesc = context->GetInputDesc(2);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || gammaShape == nullptr || betaShape == nullptr || xDesc == nullptr ||
        gammaDesc == nullptr || betaDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* numGroups = attrs->GetAttrPointer<int64_t>(ATTR_NUM_GROUPS);
    const char* dataFormat = attrs->GetAttrPointer<char>(ATTR_DATA_FORMAT);
    const float* eps = attrs->GetAttrPointer<float>(ATTR_EPS);
    const bool* swish = attrs->GetAttrPointer<bool>(ATTR_ACTIVATE_SWISH);
    const float* swishScale = attrs->GetAttrPointer<float>(ATTR_SWISH_SCALE);
    if (numGroups == nullptr || dataFormat == nullptr || eps == nullptr || swish == nullptr ||
        swishScale == nullptr || strcmp(dataFormat, "NCHW") != 0) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x = xShape->GetStorageShape();
    if (x.GetDimNum() < 2) {
        return ge::GRAPH_FAILED;
    }
    int64_t n = x.GetDim(0);
    int64_t c = x.GetDim(1);
    int64_t total = x.GetShapeSize();
    if (n <= 0 || c <= 0 || total <= 0 || total > UINT32_MAX || *numGroups <= 0 || c % *numGroups != 0 ||
        gammaShape->GetStorageShape().GetShapeSize() != c || betaShape->GetStorageShape().GetShapeSize() != c) {
        return ge::GRAPH_FAILED;
    }
    uint64_t xCode = 0;
    uint64_t pCode = 0;
    uint32_t xBytes = 0;
    uint32_t pBytes = 0;
    if (!DtypeCode(xDesc->GetDataType(), xCode, xBytes) || !DtypeCode(gammaDesc->GetDataType(), pCode, pBytes) ||
        betaDesc->GetDataType() != gammaDesc->GetDataType() || (pCode != xCode && pCode != 2)) {
        return ge::GRAPH_FAILED;
    }
    uint64_t hw = static_cast<uint64_t>(total / (n * c));
    uint64_t chPerGroup = static_cast<uint64_t>(c / *numGroups);
    uint64_t groupLen = chPerGroup * hw;
    uint64_t groups = static_cast<uint64_t>(n) * static_cast<uint64_t>(*numGroups);
    GroupShape s;
    s.stride = AlignUp(groupLen, GROUP_ALIGN);
    s.channels = static_cast<uint64_t>(c);
    s.elemBytes = xBytes;
    s.paramBytes = pBytes;
    s.batched = s.stride <= MAX_BATCH_STRIDE;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    GroupPlan plan;
    if (aivNum == 0 || !MakeGroupPlan(groups, static_cast<uint64_t>(*numGroups), s, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }
    // Strided group operations issue one instruction per 64-lane column chunk
    // covering all groups; worth it only when a tile has at least that many.
    if (s.batched && static_cast<uint64_t>(plan.tileGroups) * BATCH_LANES < s.stride) {
        s.batched = false;
        if (!MakeGroupPlan(groups, static_cast<uint64_t>(*numGroups), s, aivNum, ubSize, plan)) {
            return ge::GRAPH_FAILED;
        }
    }

    GroupNormSwishTilingData tiling;
    tiling.set_groups(static_cast<uint32_t>(groups));
    tiling.set_numGroups(static_cast<uint32_t>(*numGroups));
    tiling.set_channels(static_cast<uint32_t>(c));
    tiling.set_chPerGroup(static_cast<uint32_t>(chPerGroup));
    tiling.set_hw(static_cast<uint32_t>(hw));
    tiling.set_groupLen(static_cast<uint32_t>(groupLen));
    tiling.set_groupStride(static_cast<uint32_t>(s.stride));
    tiling.set_blockGroups(plan.blockGroups);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileGroups(plan.tileGroups);
    tiling.set_cyclic(plan.cyclic);
    tiling.set_batched(s.batched ? 1 : 0);
    tiling.set_swish(*swish ? 1 : 0);
    tiling.set_bufferNum(BUFFER_NUM);
    tiling.set_eps(*eps);
    tiling.set_swishScale(*swishScale);
    tiling.set_invGroupLen(static_cast<float>(1.0 / static_cast<double>(groupLen)));

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(xCode * 10 + (pCode == 2 ? 1 : 0));
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* xShape = context->GetInputShape(0);
    gert::Shape* yShape = context->GetOutputShape(0);
    gert::Shape* meanShape = context->GetOutputShape(1);
    gert::Shape* rstdShape = context->GetOutputShape(2);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || yShape == nullptr || meanShape == nullptr || rstdShape == nullptr || attrs == nullptr ||
        xShape->GetDimNum() < 2) {
        return GRAPH_FAILED;
    }
    const int64_t* numGroups = attrs->GetAttrPointer<int64_t>(optiling::ATTR_NUM_GROUPS);
    if (numGroups == nullptr) {
        return GRAPH_FAILED;
    }
    *yShape = *xShape;
    meanShape->SetDimNum(2);
    meanShape->SetDim(0, xShape->GetDim(0));
    meanShape->SetDim(1, *numGroups);
    *rstdShape = *meanShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class GroupNormSwish : public OpDef {
public:
    explicit GroupNormSwish(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("gamma")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("beta")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("mean")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("rstd")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("num_groups").AttrType(REQUIRED).Int();
        this->Attr("data_format").AttrType(OPTIONAL).String("NCHW");
        this->Attr("eps").AttrType(OPTIONAL).Float(1e-5);
        this->Attr("activate_swish").AttrType(OPTIONAL).Bool(true);
        this->Attr("swish_scale").AttrType(OPTIONAL).Float(1.0);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(GroupNormSwish);
}  // namespace ops
