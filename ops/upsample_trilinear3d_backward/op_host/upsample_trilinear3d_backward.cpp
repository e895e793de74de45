// UpsampleTrilinear3dBackward host side: tiling function and the OpDef.
//
// grad_output [N, C, Dout, Hout, Wout] (float16, float32, bfloat16) ->
// grad_input [N, C, Din, Hin, Win]. Attrs output_size [Dout, Hout, Wout],
// input_size [N, C, Din, Hin, Win], align_corners, scales_d / scales_h /
// scales_w (ratio 1 / scale when > 0, else in / out; an axis with in == out
// is the identity). Every grad_output voxel adds g * ld * lh * lw into its
// eight source voxels (torch geometry in float32, operators-l1-l3.md).
//
// The kernel sums D in scatter form (each grad_output depth slice loaded
// once, added into the two X depths it reaches), then H and W in gather
// form. Per axis, X index i draws on `terms` consecutive Y indices from
// base(i); the host finds `terms` by evaluating the exact weights (the
// kernel's float formulas) and plans the H sums as runs of vector
// instructions. Work items (plane, chunk of rows, range of depths) are
// split over the vector cores in balanced contiguous ranges; depth ranges
// are used only when (plane, chunk) items are too few for the cores. The
// UB budget mirrors the kernel's InitBuffer calls.
// Tiling key: 1 float16, 2 float32, 3 bfloat16.
#include <cmath>
#include <cstdint>

#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "upsample_trilinear3d_backward_tiling.h"

namespace optiling {
namespace {
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
constexpr uint32_t ATTR_SCALES_D = 3;

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
    float s = a.ac ? a.ratio * static_cast<float>(o) : a.ratio * (static_cast<float>(o) + 0.5f) - 0.5f;
    s = s < 0.0f ? 0.0f : s;
    int64_t i0 = static_cast<int64_t>(std::floor(s));
    i0 = i0 < a.dst - 1 ? i0 : a.dst - 1;
    int64_t i1 = i0 + 1 < a.dst - 1 ? i0 + 1 : a.dst - 1;
    float l1 = s - static_cast<float>(i0);
    float l0 = 1.0f - l1;
    return (i0 == i ? l0 : 0.0f) + (i1 == i ? l1 : 0.0f);
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
    uint32_t dParts, baseD, extraD;
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

// The H sums of every chunk as runs of vector instructions (the kernel's
// BuildRowPlans, done once here instead of on every core's scalar unit).
constexpr uint32_t HOST_CHUNKS = 16;
constexpr uint32_t HOST_RUNS = 64;
constexpr uint32_t HOST_TERMS = 8;
constexpr uint32_t HOST_ROWS = 256;

struct RowPlan {
    uint32_t runs = 0;  // 0: not planned
    uint32_t start[HOST_CHUNKS + 1] = {};
    uint32_t rows[HOST_RUNS] = {};  // r0 | n << 8 | kind << 16
    uint32_t src[HOST_RUNS] = {};   // s0 | ds << 16
    float w[HOST_RUNS] = {};
};

// The two X indices source index o adds into and their weights (the
// kernel's float formulas).
void Taps(const MapAxis& a, int64_t o, int64_t& i0, int64_t& i1, float& l0, float& l1)
{
    float s = a.ac ? a.ratio * static_cast<float>(o) : a.ratio * (static_cast<float>(o) + 0.5f) - 0.5f;
    s = s < 0.0f ? 0.0f : s;
    i0 = static_cast<int64_t>(s);
    i0 = i0 < a.dst - 1 ? i0 : a.dst - 1;
    i1 = i0 + 1 < a.dst - 1 ? i0 + 1 : a.dst - 1;
    l1 = s - static_cast<float>(i0);
    l0 = 1.0f - l1;
}

bool PlanRows(const MapAxis& a, uint32_t chunkNum, uint32_t baseRows, uint32_t extraRows, uint32_t ys, RowPlan& p)
{
    constexpr uint32_t FLOATS_PER_BLOCK = 8;
    p.runs = 0;
    if (chunkNum > HOST_CHUNKS || ys / FLOATS_PER_BLOCK > MAX_REPEAT) {
        return false;
    }
    uint32_t n = 0;
    for (uint32_t c = 0; c < chunkNum; c++) {
        uint32_t rows = baseRows + (c < extraRows ? 1 : 0);
        uint32_t h0 = c * baseRows + (c < extraRows ? c : extraRows);
        if (rows > HOST_ROWS) {
            return false;
        }
        int64_t lo;
        int64_t hi;
        SrcRows(a, h0, h0 + rows, lo, hi);
        if (hi - lo > 32767) {
            return false;
        }
        int32_t srcOf[HOST_ROWS][HOST_TERMS];
        float wOf[HOST_ROWS][HOST_TERMS];
        uint32_t countOf[HOST_ROWS] = {};
        uint32_t maxCount = 0;
        for (int64_t o = lo; o < hi; o++) {
            int64_t is[2];
            float ws[2];
            Taps(a, o, is[0], is[1], ws[0], ws[1]);
            if (is[1] == is[0]) {
                ws[0] = ws[0] + ws[1];
                ws[1] = 0.0f;
            }
            for (uint32_t k = 0; k < 2; k++) {
                int64_t r = is[k] - h0;
                if (ws[k] == 0.0f || r < 0 || r >= rows) {
                    continue;
                }
                uint32_t m = countOf[r];
                if (m == HOST_TERMS) {
                    return false;
                }
                srcOf[r][m] = static_cast<int32_t>(o - lo);
                wOf[r][m] = ws[k];
                countOf[r] = m + 1;
                maxCount = m + 1 > maxCount ? m + 1 : maxCount;
            }
        }
        p.start[c] = n;
        for (uint32_t r = 0; r < rows; r++) {
            if (countOf[r] == 0) {
                if (n == HOST_RUNS) {
                    return false;
                }
                p.rows[n] = r | (1u << 8);
                n++;
            }
        }
        for (uint32_t j = 0; j < maxCount; j++) {
            uint32_t r0 = 0;
            while (r0 < rows) {
                if (countOf[r0] <= j) {
                    r0++;
                    continue;
                }
                uint32_t len = 1;
                int32_t ds = 0;
                if (r0 + 1 < rows && countOf[r0 + 1] > j && wOf[r0 + 1][j] == wOf[r0][j]) {
                    ds = srcOf[r0 + 1][j] - srcOf[r0][j];
                    if (ds >= 0 && static_cast<uint32_t>(ds) * ys / FLOATS_PER_BLOCK <= MAX_REPEAT) {
                        len = 2;
                        while (len < MAX_REPEAT && r0 + len < rows && countOf[r0 + len] > j &&
                               wOf[r0 + len][j] == wOf[r0][j] &&
                               srcOf[r0 + len][j] == srcOf[r0][j] + static_cast<int32_t>(len) * ds) {
                            len++;
                        }
                    } else {
                        ds = 0;
                    }
                }
                if (n == HOST_RUNS) {
                    return false;
                }
                p.rows[n] = r0 | (len << 8) | ((j == 0 ? 1u : 2u) << 16);
                p.src[n] = static_cast<uint32_t>(srcOf[r0][j]) | (static_cast<uint32_t>(ds) << 16);
                p.w[n] = wOf[r0][j];
                n++;
                r0 += len;
            }
        }
    }
    p.start[chunkNum] = n;
    p.runs = n;
    return true;
}

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=2048 max=131072 step=pow2
constexpr uint32_t TABLE_ELEMS = 1024;      // ascendopt:knob min=256 max=16384 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MAX_D_PARTS = 64;        // ascendopt:knob min=1 max=256 step=pow2

uint64_t UbBytes(const MapAxis* ax, uint64_t srcRows, uint64_t tableRows, uint64_t rows, uint64_t ys, uint64_t ws,
                 uint32_t eb)
{
    uint64_t tw = static_cast<uint64_t>(ax[2].terms);
    uint64_t half = eb == FLOAT_BYTES ? 0 : 1;  // 16-bit types: cast scratch and float X
    uint64_t bytes = BUFFER_NUM * AlignUp(srcRows * ys * eb, BLOCK_BYTES)  // Y rows
                     + (2 + half) * srcRows * ys * FLOAT_BYTES             // two depth accumulators (+ cast scratch)
                     + rows * ys * FLOAT_BYTES                             // H sums
                     + tw * (tableRows + 1) * ws * FLOAT_BYTES             // gather tables + weights
                     + (1 + half) * rows * ws * FLOAT_BYTES                // gathered (+ float X)
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
    // X depths are split into ranges when (plane, chunk) items are too
    // few to balance the cores; a range reloads the grad_output slices at
    // its ends that its neighbour also reads. Cost of a split: the most
    // items of a core times the slices an item loads.
    uint64_t cores = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    cores = cores == 0 ? 1 : cores;
    uint64_t base = planes * plan.chunkNum;
    uint64_t depth = static_cast<uint64_t>(ax[0].dst);
    uint64_t slices = static_cast<uint64_t>(ax[0].src);
    uint64_t halo = static_cast<uint64_t>(ax[0].terms);
    uint64_t bestParts = 1;
    uint64_t bestCost = UINT64_MAX;
    for (uint64_t parts = 1; parts <= depth && parts <= MAX_D_PARTS; parts++) {
        uint64_t perCore = (base * parts + cores - 1) / cores;
        uint64_t load = (slices + parts - 1) / parts + (parts > 1 ? halo : 0) + (depth + parts - 1) / parts;
        uint64_t cost = perCore * load;
        if (cost < bestCost) {
            bestCost = cost;
            bestParts = parts;
        }
    }
    plan.dParts = static_cast<uint32_t>(bestParts);
    plan.baseD = static_cast<uint32_t>(depth / bestParts);
    plan.extraD = static_cast<uint32_t>(depth % bestParts);
    uint64_t items = base * bestParts;
    uint64_t coreNum = cores > items ? items : cores;
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
    if (in == out) {
        a.ratio = 1.0f;  // an identity axis (torch skips it, whatever the scale)
    } else if (ac) {
        a.ratio = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
    } else {
        a.ratio = scaleAttr > 0.0f ? 1.0f / scaleAttr : static_cast<float>(in) / static_cast<float>(out);
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
    const float* scales[3];
    for (uint32_t a = 0; a < 3; a++) {
        scales[a] = attrs->GetAttrPointer<float>(ATTR_SCALES_D + a);
    }
    if (g.GetDimNum() != 5 || outSize == nullptr || inSize == nullptr || ac == nullptr || scales[0] == nullptr ||
        scales[1] == nullptr || scales[2] == nullptr || outSize->GetSize() != 3 || inSize->GetSize() != 5) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* o = outSize->GetData();
    const int64_t* in = inSize->GetData();
    if (in[0] != g.GetDim(0) || in[1] != g.GetDim(1) || g.GetShapeSize() > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    MapAxis ax[3];
    for (uint32_t a = 0; a < 3; a++) {
        if (o[a] != g.GetDim(2 + a) || o[a] <= 0 || in[2 + a] <= 0) {
            return ge::GRAPH_FAILED;
        }
        ax[a] = BilinearAxis(in[2 + a], o[a], *ac, *scales[a]);
        if (!FindTerms(ax[a])) {
            return ge::GRAPH_FAILED;
        }
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

    RowPlan rowPlan;
    if (!PlanRows(ax[1], plan.chunkNum, plan.baseRows, plan.extraRows, plan.srcStride, rowPlan)) {
        rowPlan.runs = 0;
    }

    UpsampleTrilinear3dBackwardTilingData tiling;
    tiling.set_planRuns(rowPlan.runs);
    tiling.set_planStart(rowPlan.start);
    tiling.set_runRows(rowPlan.rows);
    tiling.set_runSrc(rowPlan.src);
    tiling.set_runW(rowPlan.w);
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
    tiling.set_dParts(plan.dParts);
    tiling.set_baseD(plan.baseD);
    tiling.set_extraD(plan.extraD);
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
class UpsampleTrilinear3dBackward : public OpDef {
public:
    explicit UpsampleTrilinear3dBackward(const char* name) : OpDef(name)
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
        this->Attr("scales_d").AttrType(OPTIONAL).Float(0.0f);
        this->Attr("scales_h").AttrType(OPTIONAL).Float(0.0f);
        this->Attr("scales_w").AttrType(OPTIONAL).Float(0.0f);

        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(UpsampleTrilinear3dBackward);
}  // namespace ops
