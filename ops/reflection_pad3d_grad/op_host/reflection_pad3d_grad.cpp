// ReflectionPad3dGrad host side: tiling function, shape inference and the
// OpDef.
//
// x is the gradient of a reflection-padded tensor (4-D or 5-D, float16,
// float32 or bfloat16); attr `paddings` holds (before, after) pairs in
// dimension order (2 * rank values, only the last three dims padded, every
// pad smaller than the unpadded size). y has the unpadded shape and
// y[.., d, h, w] = sum of x over the padded positions that reflect to
// (d, h, w) (i = o - before; i < 0 -> -i; i >= len -> 2 (len - 1) - i). (CANN passes paddings as a tensor; the simulated tiling cannot
// read tensor values, so it is an attribute with the same layout.)
//
// Tiling: a work item is (plane, d, chunk of output rows); items are split
// over the vector cores in balanced contiguous ranges. A chunk holds as many
// output rows as fit in UB (at most TILE_BYTES of input rows), plus the pad
// rows it needs; chunks of a slab differ by at most one row. The UB budget
// mirrors the kernel's InitBuffer calls. Tiling key: 1 float16, 2 float32,
// 3 bfloat16.
#include <cstdint>

#include "reflection_pad3d_grad_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr bool REFLECT = true;        // reflection: indices mirror at the border
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t MAX_SPECIAL = 64;  // kernel's limit of output columns that receive pad columns
constexpr uint32_t ATTR_PADDINGS = 0;

uint64_t AlignUp(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

// Output columns of a width-`w` axis that receive padded columns.
uint64_t SpecialCols(uint64_t w, uint64_t before, uint64_t after)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < w; i++) {
        bool special = REFLECT ? ((i >= 1 && i <= before) || (i + 1 + after >= w && i + 2 <= w))
                               : ((i == 0 && before > 0) || (i + 1 == w && after > 0));
        n += special ? 1 : 0;
    }
    return n;
}

struct PadShape {
    uint64_t planes, d, h, w;
    uint64_t pad[6];
};

struct PadPlan {
    uint32_t rowStride, tileRows, chunkNum, baseRows, extraRows, specialCols;
    uint32_t coreNum, blockItems, tailCoreNum;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=2048 max=131072 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1

// UB bytes for chunks of `rows` output rows (mirrors the kernel's InitBuffer calls).
uint64_t UbBytes(const PadShape& s, uint64_t rows, uint64_t rowStride, uint64_t special, uint32_t eb)
{
    uint64_t rowsIn = rows + s.pad[2] + s.pad[3];
    uint64_t outElems = AlignUp(rows * s.w, 8);
    uint64_t bytes = BUFFER_NUM * AlignUp(rowsIn * rowStride * eb, BLOCK_BYTES)  // input rows
                     + (rowsIn * rowStride + special * AlignUp(rows, 8)) * FLOAT_BYTES  // acc + column sums
                     + BUFFER_NUM * AlignUp(rows * s.w * eb, BLOCK_BYTES)           // output
                     + 3 * outElems * FLOAT_BYTES                                   // table + 2 work arrays
                     + 2 * AlignUp(s.w, 8) * FLOAT_BYTES                            // per-column arrays
                     + 2 * AlignUp(rows, 8) * FLOAT_BYTES;                          // column table + temp
    if (eb != FLOAT_BYTES) {
        bytes += rowsIn * rowStride * FLOAT_BYTES + outElems * FLOAT_BYTES;  // float input, float output
    }
    return bytes;
}

bool MakePadPlan(const PadShape& s, uint32_t eb, uint32_t aivNum, uint64_t ubBytes, PadPlan& plan)
{
    uint64_t wo = s.w + s.pad[4] + s.pad[5];
    uint64_t rowStride = AlignUp(wo, BLOCK_BYTES / eb);
    uint64_t special = SpecialCols(s.w, s.pad[4], s.pad[5]);
    if (special > MAX_SPECIAL) {
        return false;
    }
    uint64_t rows = TILE_BYTES / (rowStride * eb);
    if (rows < 1) {
        rows = 1;
    }
    if (rows > s.h) {
        rows = s.h;
    }
    while (rows > 0 && UbBytes(s, rows, rowStride, special, eb) > ubBytes) {
        rows--;
    }
    // Pad rows of a chunk must stay inside the first and last chunks.
    uint64_t padMax = s.pad[2] > s.pad[3] ? s.pad[2] : s.pad[3];
    if (rows == 0 || (rows < s.h && rows < padMax + 2)) {
        return false;
    }
    uint64_t chunkNum = (s.h + rows - 1) / rows;
    plan.rowStride = static_cast<uint32_t>(rowStride);
    plan.chunkNum = static_cast<uint32_t>(chunkNum);
    plan.baseRows = static_cast<uint32_t>(s.h / chunkNum);
    plan.extraRows = static_cast<uint32_t>(s.h % chunkNum);
    plan.tileRows = static_cast<uint32_t>((s.h + chunkNum - 1) / chunkNum);
    plan.specialCols = static_cast<uint32_t>(special);
    uint64_t items = s.planes * s.d * chunkNum;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > items) {
        coreNum = items;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.blockItems = static_cast<uint32_t>(items / coreNum);
    plan.tailCoreNum = static_cast<uint32_t>(items % coreNum);
    return true;
}
// ascendopt:tiling-end

bool KeyOf(ge::DataType dtype, uint64_t& key, uint32_t& eb)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            key = 1;
            eb = 2;
            return true;
        case ge::DT_FLOAT:
            key = 2;
            eb = 4;
            return true;
        case ge::DT_BF16:
            key = 3;
            eb = 2;
            return true;
        default:
            return false;
    }
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const auto xDesc = context->GetInputDesc(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || xDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& x = xShape->GetStorageShape();
    size_t rank = x.GetDimNum();
    const gert::TypedContinuousVector<int64_t>* paddings = attrs->GetListInt(ATTR_PADDINGS);
    if ((rank != 4 && rank != 5) || paddings == nullptr || paddings->GetSize() != 2 * rank) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* p = paddings->GetData();
    PadShape s;
    s.planes = 1;
    for (size_t i = 0; i + 3 < rank; i++) {
        if (p[2 * i] != 0 || p[2 * i + 1] != 0) {
            return ge::GRAPH_FAILED;
        }
        s.planes *= static_cast<uint64_t>(x.GetDim(i));
    }
    uint64_t dims[3];
    for (size_t a = 0; a < 3; a++) {
        int64_t before = p[2 * (rank - 3 + a)];
        int64_t after = p[2 * (rank - 3 + a) + 1];
        int64_t padded = x.GetDim(rank - 3 + a);
        int64_t len = padded - before - after;
        if (before < 0 || after < 0 || len <= 0 || before >= len || after >= len) {
            return ge::GRAPH_FAILED;
        }
        dims[a] = static_cast<uint64_t>(len);
        s.pad[2 * a] = static_cast<uint64_t>(before);
        s.pad[2 * a + 1] = static_cast<uint64_t>(after);
    }
    s.d = dims[0];
    s.h = dims[1];
    s.w = dims[2];
    if (s.planes == 0 || x.GetShapeSize() > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint32_t eb = 0;
    if (!KeyOf(xDesc->GetDataType(), key, eb)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    PadPlan plan;
    if (aivNum == 0 || !MakePadPlan(s, eb, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    ReflectionPad3dGradTilingData tiling;
    tiling.set_planes(static_cast<uint32_t>(s.planes));
    tiling.set_outD(static_cast<uint32_t>(s.d));
    tiling.set_outH(static_cast<uint32_t>(s.h));
    tiling.set_outW(static_cast<uint32_t>(s.w));
    tiling.set_padD0(static_cast<uint32_t>(s.pad[0]));
    tiling.set_padD1(static_cast<uint32_t>(s.pad[1]));
    tiling.set_padH0(static_cast<uint32_t>(s.pad[2]));
    tiling.set_padH1(static_cast<uint32_t>(s.pad[3]));
    tiling.set_padW0(static_cast<uint32_t>(s.pad[4]));
    tiling.set_padW1(static_cast<uint32_t>(s.pad[5]));
    tiling.set_rowStride(plan.rowStride);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_baseRows(plan.baseRows);
    tiling.set_extraRows(plan.extraRows);
    tiling.set_specialCols(plan.specialCols);
    tiling.set_blockItems(plan.blockItems);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(key);
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
    gert::Shape* zShape = context->GetOutputShape(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || zShape == nullptr || attrs == nullptr) {
        return GRAPH_FAILED;
    }
    const gert::TypedContinuousVector<int64_t>* paddings = attrs->GetListInt(0);
    size_t rank = xShape->GetDimNum();
    if (paddings == nullptr || paddings->GetSize() != 2 * rank) {
        return GRAPH_FAILED;
    }
    *zShape = *xShape;
    for (size_t i = 0; i < rank; i++) {
        zShape->SetDim(i, xShape->GetDim(i) - paddings->GetData()[2 * i] - paddings->GetData()[2 * i + 1]);
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class ReflectionPad3dGrad : public OpDef {
public:
    explicit ReflectionPad3dGrad(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("paddings").AttrType(REQUIRED).ListInt();

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ReflectionPad3dGrad);
}  // namespace ops
