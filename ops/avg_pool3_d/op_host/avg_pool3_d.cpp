// AvgPool3D host side: tiling function, shape inference and the OpDef.
//
// x [N, D, H, W, C] (data_format NDHWC, the kernel's layout; aclnn
// transposes NCDHW to it) of float16, float32 or bfloat16 -> y
// [N, Do, Ho, Wo, C]: the window sum divided by divisor_override if > 0,
// else by the window clipped to the padded extent (count_include_pad) or
// by the number of real elements. Attrs: ksize (1 or 3 values), strides (0,
// 1 or 3; none = ksize), pads (1, 3 or 6 = (before, after) per dim, each
// <= ksize / 2), ceil_mode, count_include_pad, divisor_override,
// data_format. Output size per axis: floor or ceil((L + p0 + p1 - k) / s)
// + 1, dropping a last ceil window that starts at or after L + p0.
//
// Tiling: a work item is (n, od, chunk of output rows); items are split
// over the vector cores in balanced contiguous ranges. A tile holds the
// input rows (all W, all C) of a chunk, at most about TILE_BYTES; the UB
// budget mirrors the kernel's InitBuffer calls. Tiling key: 1 float16,
// 2 float32, 3 bfloat16.
#include <cstdint>
#include <cstring>

#include "avg_pool3_d_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t ATTR_KSIZE = 0;
constexpr uint32_t ATTR_STRIDES = 1;
constexpr uint32_t ATTR_PADS = 2;
constexpr uint32_t ATTR_CEIL_MODE = 3;
constexpr uint32_t ATTR_COUNT_INCLUDE_PAD = 4;
constexpr uint32_t ATTR_DIVISOR_OVERRIDE = 5;
constexpr uint32_t ATTR_DATA_FORMAT = 6;

uint64_t AlignUp(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

struct PoolShape {
    uint64_t n, c, in[3], out[3], k[3], s[3];
};

struct PoolPlan {
    uint32_t cStride, chunkRows, chunkNum, inRowsCap, coreNum, blockItems, tailCoreNum;
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=2048 max=131072 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1

// UB bytes of a tile of `rows` output rows (mirrors the kernel's InitBuffer calls).
uint64_t UbBytes(const PoolShape& s, uint64_t rows, uint64_t cs, uint32_t eb)
{
    uint64_t inRows = (rows - 1) * s.s[1] + s.k[1];
    uint64_t inElems = inRows * s.in[2] * cs;
    uint64_t outElems = rows * s.out[2] * cs;
    uint64_t bytes = BUFFER_NUM * AlignUp(inElems * eb, BLOCK_BYTES)  // input rows
                     + inElems * FLOAT_BYTES                           // float sum over D
                     + s.in[2] * cs * FLOAT_BYTES                      // sum over H of one output row
                     + outElems * FLOAT_BYTES                          // float output
                     + BUFFER_NUM * AlignUp(outElems * eb, BLOCK_BYTES)  // output
                     + s.out[2] * cs * FLOAT_BYTES;                    // per-column factors
    if (eb != FLOAT_BYTES) {
        bytes += inElems * FLOAT_BYTES;  // float copy of the input rows
    }
    return bytes;
}

bool MakePoolPlan(const PoolShape& s, uint32_t eb, uint32_t aivNum, uint64_t ubBytes, PoolPlan& plan)
{
    uint64_t cs = AlignUp(s.c, BLOCK_BYTES / eb);
    uint64_t rowBytes = s.in[2] * cs * eb;
    uint64_t rows = 1;
    while (rows < s.out[1] && ((rows) * s.s[1] + s.k[1]) * rowBytes <= TILE_BYTES &&
           UbBytes(s, rows + 1, cs, eb) <= ubBytes) {
        rows++;
    }
    if (UbBytes(s, rows, cs, eb) > ubBytes) {
        return false;
    }
    uint64_t chunkNum = (s.out[1] + rows - 1) / rows;
    rows = (s.out[1] + chunkNum - 1) / chunkNum;
    plan.cStride = static_cast<uint32_t>(cs);
    plan.chunkRows = static_cast<uint32_t>(rows);
    plan.chunkNum = static_cast<uint32_t>(chunkNum);
    plan.inRowsCap = static_cast<uint32_t>((rows - 1) * s.s[1] + s.k[1]);
    uint64_t items = s.n * s.out[0] * chunkNum;
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

// 1 or 3 values (0 allowed when `empty` gives the default) -> 3 values.
bool Three(const gert::TypedContinuousVector<int64_t>* v, const int64_t* empty, int64_t out[3])
{
    if (v == nullptr) {
        return false;
    }
    size_t n = v->GetSize();
    const int64_t* d = v->GetData();
    if (n == 0 && empty != nullptr) {
        out[0] = empty[0];
        out[1] = empty[1];
        out[2] = empty[2];
        return true;
    }
    if (n != 1 && n != 3) {
        return false;
    }
    for (size_t i = 0; i < 3; i++) {
        out[i] = d[n == 1 ? 0 : i];
    }
    return true;
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
    const char* format = attrs->GetStr(ATTR_DATA_FORMAT);
    if (x.GetDimNum() != 5 || format == nullptr || strcmp(format, "NDHWC") != 0) {
        return ge::GRAPH_FAILED;  // the kernel takes NDHWC (aclnn transposes NCDHW)
    }
    int64_t k[3];
    int64_t s[3];
    if (!Three(attrs->GetListInt(ATTR_KSIZE), nullptr, k) || !Three(attrs->GetListInt(ATTR_STRIDES), k, s)) {
        return ge::GRAPH_FAILED;
    }
    const gert::TypedContinuousVector<int64_t>* pads = attrs->GetListInt(ATTR_PADS);
    const bool* ceilMode = attrs->GetBool(ATTR_CEIL_MODE);
    const bool* includePad = attrs->GetBool(ATTR_COUNT_INCLUDE_PAD);
    const int64_t* divisor = attrs->GetInt(ATTR_DIVISOR_OVERRIDE);
    if (pads == nullptr || ceilMode == nullptr || includePad == nullptr || divisor == nullptr || *divisor < 0) {
        return ge::GRAPH_FAILED;
    }
    int64_t p0[3];
    int64_t p1[3];
    size_t np = pads->GetSize();
    for (size_t i = 0; i < 3; i++) {
        if (np == 1) {
            p0[i] = p1[i] = pads->GetData()[0];
        } else if (np == 3) {
            p0[i] = p1[i] = pads->GetData()[i];
        } else if (np == 6) {
            p0[i] = pads->GetData()[2 * i];
            p1[i] = pads->GetData()[2 * i + 1];
        } else {
            return ge::GRAPH_FAILED;
        }
    }
    PoolShape shape;
    shape.n = static_cast<uint64_t>(x.GetDim(0));
    shape.c = static_cast<uint64_t>(x.GetDim(4));
    for (size_t i = 0; i < 3; i++) {
        int64_t len = x.GetDim(1 + i);
        if (k[i] <= 0 || s[i] <= 0 || p0[i] < 0 || p1[i] < 0 || 2 * p0[i] > k[i] || 2 * p1[i] > k[i] || len <= 0) {
            return ge::GRAPH_FAILED;
        }
        int64_t span = len + p0[i] + p1[i] - k[i];
        if (span < 0) {
            return ge::GRAPH_FAILED;
        }
        int64_t out = *ceilMode ? (span + s[i] - 1) / s[i] + 1 : span / s[i] + 1;
        if (*ceilMode && (out - 1) * s[i] >= len + p0[i]) {
            out--;
        }
        shape.in[i] = static_cast<uint64_t>(len);
        shape.out[i] = static_cast<uint64_t>(out);
        shape.k[i] = static_cast<uint64_t>(k[i]);
        shape.s[i] = static_cast<uint64_t>(s[i]);
    }
    if (shape.n == 0 || shape.c == 0 || x.GetShapeSize() > UINT32_MAX) {
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
    PoolPlan plan;
    if (aivNum == 0 || !MakePoolPlan(shape, eb, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    AvgPool3DTilingData tiling;
    uint32_t v[6][3];
    for (size_t i = 0; i < 3; i++) {
        v[0][i] = static_cast<uint32_t>(shape.in[i]);
        v[1][i] = static_cast<uint32_t>(shape.out[i]);
        v[2][i] = static_cast<uint32_t>(shape.k[i]);
        v[3][i] = static_cast<uint32_t>(shape.s[i]);
        v[4][i] = static_cast<uint32_t>(p0[i]);
        v[5][i] = static_cast<uint32_t>(p1[i]);
    }
    tiling.set_batch(static_cast<uint32_t>(shape.n));
    tiling.set_channels(static_cast<uint32_t>(shape.c));
    tiling.set_cStride(plan.cStride);
    tiling.set_inSize(v[0]);
    tiling.set_outSize(v[1]);
    tiling.set_ksize(v[2]);
    tiling.set_stride(v[3]);
    tiling.set_padBefore(v[4]);
    tiling.set_padAfter(v[5]);
    tiling.set_countIncludePad(*includePad ? 1 : 0);
    tiling.set_divisorOverride(static_cast<uint32_t>(*divisor));
    tiling.set_chunkRows(plan.chunkRows);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_inRowsCap(plan.inRowsCap);
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

namespace ops {
class AvgPool3D : public OpDef {
public:
    explicit AvgPool3D(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("ksize").AttrType(REQUIRED).ListInt();
        this->Attr("strides").AttrType(OPTIONAL).ListInt({});
        this->Attr("pads").AttrType(OPTIONAL).ListInt({0});
        this->Attr("ceil_mode").AttrType(OPTIONAL).Bool(false);
        this->Attr("count_include_pad").AttrType(OPTIONAL).Bool(true);
        this->Attr("divisor_override").AttrType(OPTIONAL).Int(0);
        this->Attr("data_format").AttrType(OPTIONAL).String("NDHWC");

        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AvgPool3D);
}  // namespace ops
