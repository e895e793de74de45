// UpsampleBilinear2dGrad host side: tiling function, shape inference and
// the OpDef.
//
// grad_output [N, C, Hout, Wout] (float16, float32, bfloat16) -> grad_input
// [N, C, Hin, Win]. Attrs output_size [Hout, Wout], input_size
// [N, C, Hin, Win], align_corners, scales_h / scales_w (already inverted;
// 0 = in / out). Every grad_output pixel adds g * wh * ww into its four
// source pixels (torch geometry in float32, operators-l2.md).
//
// The kernel evaluates it in gather form, separably: for a chunk of
// grad_input rows it loads the grad_output rows they draw on, forms the
// H-axis sums with per-row scaled adds, then the W-axis sums with Gathers
// and per-column weights. Per axis, input index i draws on `terms`
// consecutive output indices from base(i); the host finds `terms` by
// evaluating the exact weights (the kernel's float formulas). Work items
// (plane, chunk of rows) are split over the vector cores in balanced
// contiguous ranges; the UB budget mirrors the kernel's InitBuffer calls.
// Tiling key: 1 float16, 2 float32, 3 bfloat16.
#include <cmath>
#include <cstdint>

#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "upsample_bilinear2d_grad_tiling.h"

namespace optiling {
namespace {
constexpr uint32_t MODE_BILINEAR = 0;
constexpr uint32_t MODE_ADAPTIVE = 1;
constexpr uint32_t MODE = MODE_BILINEAR;
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t ROW_ALIGN = 16;    // row strides in elements (32 B for 16-bit types)
constexpr int64_t MAX_TERMS = 16;     // kernel limit of source indices per output index
constexpr uint32_t SETUP_ARRAYS = 10;  // float arrays of one X row used to build the W tables
constexpr uint32_t MAX_REP_STRIDE_ELEMS = 2040;  // 255 blocks of 8 floats
constexpr uint32_t MAX_REPEAT = 255;
constexpr uint32_t ATTR_OUTPUT_SIZE = 0;
constexpr uint32_t ATTR_INPUT_SIZE = 1;
constexpr uint32_t ATTR_ALIGN_CORNERS = 2;
constexpr uint32_t ATTR_SCALES_H = 3;

uint64_t AlignUp(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

// One axis of the separable map: Y has `src` indices, X has `dst`.
struct MapAxis {
    int64_t src, dst;
    float ratio, off, scale, add;
    bool ac;
    int64_t shift;
    int64_t terms;
};

// Weight of source index o in output index i (the kernel's float formulas).
float Weight(const MapAxis& a, int64_t i, int64_t o)
{
    if (MODE == MODE_BILINEAR) {
        float s = a.ac ? a.ratio * static_cast<float>(o) : a.ratio * (static_cast<float>(o) + 0.5f) - 0.5f;
        s = s < 0.0f ? 0.0f : s;
        int64_t i0 = static_cast<int64_t>(std::floor(s));
        i0 = i0 < a.dst - 1 ? i0 : a.dst - 1;
        int64_t i1 = i0 + 1 < a.dst - 1 ? i0 + 1 : a.dst - 1;
        float l1 = s - static_cast<float>(i0);
        float l0 = 1.0f - l1;
        return (i0 == i ? l0 : 0.0f) + (i1 == i ? l1 : 0.0f);
    }
    int64_t st = o * a.dst / a.src;
    int64_t en = ((o + 1) * a.dst + a.src - 1) / a.src;
    return (st <= i && i < en) ? 1.0f / static_cast<float>(en - st) : 0.0f;
}

int64_t Base(const MapAxis& a, int64_t i)
{
    float v = (static_cast<float>(i) + a.off) * a.scale;
    v = v + a.add;
    return static_cast<int64_t>(std::floor(v)) + a.shift;
}

// Sets a.terms for a.shift; false when an index draws on more than
// MAX_TERMS sources or the base misses one.
bool TermsForShift(MapAxis& a)
{
    a.terms = 1;
    for (int64_t i = 0; i < a.dst; i++) {
        int64_t base = Base(a, i);
        int64_t last = base;
        for (int64_t o = base - 3; o < base + MAX_TERMS + 1; o++) {
            if (o < 0 || o >= a.src || Weight(a, i, o) == 0.0f) {
                continue;
            }
            if (o < base || o >= base + MAX_TERMS) {
                return false;
            }
            last = o;
        }
        if (last - base + 1 > a.terms) {
            a.terms = last - base + 1;
        }
    }
    return true;
}

// The largest base shift (fewest terms) that still covers every source.
bool FindTerms(MapAxis& a)
{
    for (int64_t shift = 1; shift >= -2; shift--) {
        a.shift = shift;
        if (TermsForShift(a)) {
            return true;
        }
    }
    return false;
}

struct MapPlan {
    uint32_t srcStride, dstStride, srcRowsCap, tableRows, tileRows, chunkNum, baseRows, extraRows;
    uint32_t coreNum, blockItems, tailCoreNum;
};

// Source rows of X rows [h0, h1).
void SrcRows(const MapAxis& a, int64_t h0, int64_t h1, int64_t& lo, int64_t& hi)
{
    lo = Base(a, h0);
    lo = lo < 0 ? 0 : lo;
    hi = Base(a, h1 - 1) + a.terms;
    hi = hi > a.src ? a.src : hi;
    if (hi <= lo) {
        hi = lo + 1;
    }
}

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=2048 max=131072 step=pow2
constexpr uint32_t TABLE_ELEMS = 4096;      // ascendopt:knob min=256 max=16384 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1

uint64_t UbBytes(const MapAxis* ax, uint64_t srcRows, uint64_t tableRows, uint64_t rows, uint64_t ys, uint64_t ws,
                 uint32_t eb)
{
    uint64_t tw = static_cast<uint64_t>(ax[2].terms);
    uint64_t bytes = BUFFER_NUM * AlignUp(srcRows * ys * eb, BLOCK_BYTES)  // Y rows
                     + 2 * srcRows * ys * FLOAT_BYTES                      // float Y (+ cast scratch)
                     + rows * ys * FLOAT_BYTES                             // H sums
                     + tw * (tableRows + 1) * ws * FLOAT_BYTES             // gather tables + weights
                     + 2 * rows * ws * FLOAT_BYTES                         // gathered, float X
                     + BUFFER_NUM * AlignUp(rows * ws * eb, BLOCK_BYTES)  // X out
                     + SETUP_ARRAYS * ws * FLOAT_BYTES;                    // table set-up
    return bytes;
}

bool MakeMapPlan(const MapAxis* ax, uint64_t planes, uint32_t eb, uint32_t aivNum, uint64_t ubBytes,
                 MapPlan& plan)
{
    uint64_t ys = AlignUp(static_cast<uint64_t>(ax[2].src), ROW_ALIGN);
    uint64_t ws = AlignUp(static_cast<uint64_t>(ax[2].dst), ROW_ALIGN);
    if (ws > MAX_REP_STRIDE_ELEMS) {
        return false;
    }
    uint64_t h = static_cast<uint64_t>(ax[1].dst);
    uint64_t rows = TILE_BYTES / (ws * FLOAT_BYTES);
    rows = rows < 1 ? 1 : (rows > h ? h : rows);
    for (;;) {
        uint64_t chunkNum = (h + rows - 1) / rows;
        uint64_t base = h / chunkNum;
        uint64_t extra = h % chunkNum;
        uint64_t srcRows = 0;
        uint64_t h0 = 0;
        for (uint64_t c = 0; c < chunkNum; c++) {
            uint64_t n = base + (c < extra ? 1 : 0);
            int64_t lo;
            int64_t hi;
            SrcRows(ax[1], static_cast<int64_t>(h0), static_cast<int64_t>(h0 + n), lo, hi);
            srcRows = static_cast<uint64_t>(hi - lo) > srcRows ? static_cast<uint64_t>(hi - lo) : srcRows;
            h0 += n;
        }
        uint64_t tableRows = TABLE_ELEMS / ws;
        tableRows = tableRows < 1 ? 1 : tableRows;
        uint64_t tileRows = (h + chunkNum - 1) / chunkNum;
        tableRows = tableRows > tileRows ? tileRows : tableRows;
        tableRows = tableRows > MAX_REPEAT ? MAX_REPEAT : tableRows;
        if (UbBytes(ax, srcRows, tableRows, tileRows, ys, ws, eb) <= ubBytes) {
            plan.srcStride = static_cast<uint32_t>(ys);
            plan.dstStride = static_cast<uint32_t>(ws);
            plan.srcRowsCap = static_cast<uint32_t>(srcRows);
            plan.tableRows = static_cast<uint32_t>(tableRows);
            plan.tileRows = static_cast<uint32_t>(tileRows);
            plan.chunkNum = static_cast<uint32_t>(chunkNum);
            plan.baseRows = static_cast<uint32_t>(base);
            plan.extraRows = static_cast<uint32_t>(extra);
            break;
        }
        if (rows == 1) {
            return false;
        }
        rows = rows / 2;
    }
    uint64_t items = planes * static_cast<uint64_t>(ax[0].dst) * plan.chunkNum;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    coreNum = coreNum > items ? items : coreNum;
    coreNum = coreNum == 0 ? 1 : coreNum;
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

// Bilinear axis: X (grad_input) has `in` indices, Y (grad_output) `out`.
MapAxis BilinearAxis(int64_t in, int64_t out, bool ac, float scaleAttr)
{
    MapAxis a;
    a.src = out;
    a.dst = in;
    a.ac = ac;
    if (ac) {
        a.ratio = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
    } else {
        a.ratio = scaleAttr > 0.0f ? scaleAttr : static_cast<float>(in) / static_cast<float>(out);
    }
    // First source with i0 >= i - 1: ratio (o + 0.5) - 0.5 >= i - 1, or
    // ratio o >= i - 1 with align_corners.
    a.off = ac ? -1.0f : -0.5f;
    a.scale = a.ratio > 0.0f ? 1.0f / a.ratio : 0.0f;
    a.add = ac ? 0.0f : -0.5f;
    a.shift = 0;
    a.terms = 1;
    return a;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* gShape = context->GetInputShape(0);
    const auto gDesc = context->GetInputDesc(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (gShape == nullptr || gDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& g = gShape->GetStorageShape();
    const gert::TypedContinuousVector<int64_t>* outSize = attrs->GetListInt(ATTR_OUTPUT_SIZE);
    const gert::TypedContinuousVector<int64_t>* inSize = attrs->GetListInt(ATTR_INPUT_SIZE);
    const bool* ac = attrs->GetBool(ATTR_ALIGN_CORNERS);
    const float* scaleH = attrs->GetAttrPointer<float>(ATTR_SCALES_H);
    const float* scaleW = attrs->GetAttrPointer<float>(ATTR_SCALES_H + 1);
    if (g.GetDimNum() != 4 || outSize == nullptr || inSize == nullptr || ac == nullptr || scaleH == nullptr ||
        scaleW == nullptr || outSize->GetSize() != 2 || inSize->GetSize() != 4) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* o = outSize->GetData();
    const int64_t* in = inSize->GetData();
    if (o[0] != g.GetDim(2) || o[1] != g.GetDim(3) || in[0] != g.GetDim(0) || in[1] != g.GetDim(1) || in[2] <= 0 ||
        in[3] <= 0 || o[0] <= 0 || o[1] <= 0 || g.GetShapeSize() > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    MapAxis ax[3];
    ax[0] = BilinearAxis(1, 1, false, 0.0f);
    ax[0].off = 0.0f;
    ax[0].scale = 1.0f;
    ax[0].add = 0.0f;
    ax[1] = BilinearAxis(in[2], o[0], *ac, *scaleH);
    ax[2] = BilinearAxis(in[3], o[1], *ac, *scaleW);
    if (!FindTerms(ax[0]) || !FindTerms(ax[1]) || !FindTerms(ax[2])) {
        return ge::GRAPH_FAILED;
    }
    uint64_t planes = static_cast<uint64_t>(in[0] * in[1]);
    uint64_t key = 0;
    uint32_t eb = 0;
    if (planes == 0 || !KeyOf(gDesc->GetDataType(), key, eb)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    MapPlan plan;
    if (aivNum == 0 || !MakeMapPlan(ax, planes, eb, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    UpsampleBilinear2dGradTilingData tiling;
    uint32_t src[3];
    uint32_t dst[3];
    uint32_t terms[3];
    float ratio[3];
    float off[3];
    float scale[3];
    float add[3];
    int32_t shift[3];
    for (size_t a = 0; a < 3; a++) {
        shift[a] = static_cast<int32_t>(ax[a].shift);
        src[a] = static_cast<uint32_t>(ax[a].src);
        dst[a] = static_cast<uint32_t>(ax[a].dst);
        terms[a] = static_cast<uint32_t>(ax[a].terms);
        ratio[a] = ax[a].ratio;
        off[a] = ax[a].off;
        scale[a] = ax[a].scale;
        add[a] = ax[a].add;
    }
    tiling.set_planes(static_cast<uint32_t>(planes));
    tiling.set_src(src);
    tiling.set_dst(dst);
    tiling.set_terms(terms);
    tiling.set_ratio(ratio);
    tiling.set_baseOff(off);
    tiling.set_baseScale(scale);
    tiling.set_baseAdd(add);
    tiling.set_baseShift(shift);
    tiling.set_alignCorners(*ac ? 1 : 0);
    tiling.set_srcStride(plan.srcStride);
    tiling.set_dstStride(plan.dstStride);
    tiling.set_srcRowsCap(plan.srcRowsCap);
    tiling.set_tableRows(plan.tableRows);
    tiling.set_tileRows(plan.tileRows);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_baseRows(plan.baseRows);
    tiling.set_extraRows(plan.extraRows);
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
class UpsampleBilinear2dGrad : public OpDef {
public:
    explicit UpsampleBilinear2dGrad(const char* name) : OpDef(name)
    {
        this->Input("grad_output")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("grad_input")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("output_size").AttrType(REQUIRED).ListInt();
        this->Attr("input_size").AttrType(REQUIRED).ListInt();
        this->Attr("align_corners").AttrType(OPTIONAL).Bool(false);
        this->Attr("scales_h").AttrType(OPTIONAL).Float(0.0f);
        this->Attr("scales_w").AttrType(OPTIONAL).Float(0.0f);

        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(UpsampleBilinear2dGrad);
}  // namespace ops
