// UpsampleNearestExact3d host side: tiling function, shape inference and
// the OpDef.
//
// x [N, C, D, H, W] (float16, float32 or bfloat16) -> y [N, C, Do, Ho, Wo]
// with attrs output_size [Do, Ho, Wo] and scale_d/h/w (already inverted as
// aclnn passes them; 0 means in / out). y[n, c, od, oh, ow] =
// x[n, c, sd, sh, sw] with s = min(floor((o + 0.5) * ratio), in - 1).
//
// Tiling: the kernel gathers each output tile from an input tile in UB with
// one Gather over a precomputed byte-offset table. Every tile is one
// contiguous range of y: whole planes when a plane fits a tile (mode 0),
// else consecutive Ho x Wo slabs (mode 1), else chunks of output rows of a
// slab (mode 2). Work items are split over the vector cores in balanced
// contiguous ranges. Tiles hold about TILE_BYTES of output; the UB budget mirrors the
// kernel's InitBuffer calls. Tiling key: 1 float16, 2 float32, 3 bfloat16.
#include <cstdint>

#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "upsample_nearest_exact3d_tiling.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t INDEX_BYTES = 4;         // float / uint32 table element
constexpr uint32_t INDEX_BUFFERS = 3;       // table + two float work arrays
constexpr uint64_t MAX_BLOCK_COUNT = 4095;  // DataCopyPad blockCount limit
constexpr uint32_t ATTR_OUTPUT_SIZE = 0;
constexpr uint32_t ATTR_SCALE_D = 1;

uint64_t AlignUp(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

// Source index of output index `dst` (the kernel's float formula).
uint64_t SrcIndex(uint64_t dst, float ratio, uint64_t in)
{
    float v = (static_cast<float>(dst) + 0.5f) * ratio;
    uint64_t s = v > 0.0f ? static_cast<uint64_t>(v) : 0;
    return s < in - 1 ? s : in - 1;
}

struct NearestShape {
    uint64_t nc, d, h, w, od, oh, ow;
    float rd, rh, rw;
};

struct NearestPlan {
    uint32_t mode, slabs, rowsPerChunk, chunkNum, inSlot, inCap, outCap;
    uint32_t coreNum, blockItems, tailCoreNum;
};

constexpr uint32_t MODE_VOLUME = 0;
constexpr uint32_t MODE_SLAB = 1;
constexpr uint32_t MODE_CHUNK = 2;

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 16384;      // ascendopt:knob min=2048 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 3;          // ascendopt:knob choices=1,2,3,4
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t MIN_CORE_ITEMS = 2;      // ascendopt:knob min=1 max=16 step=1

uint64_t UbBytes(uint64_t inCap, uint64_t outCap, uint32_t eb)
{
    return BUFFER_NUM * (AlignUp(inCap * eb, BLOCK_BYTES) + AlignUp(outCap * eb, BLOCK_BYTES)) +
           INDEX_BUFFERS * AlignUp(outCap * INDEX_BYTES, BLOCK_BYTES);
}

// At most `units` per tile such that there are MIN_CORE_ITEMS items per core
// where the tensor allows it.
uint64_t Balanced(uint64_t perTile, uint64_t units, uint64_t coreCap)
{
    uint64_t balance = units / (coreCap * MIN_CORE_ITEMS);
    if (balance < 1) {
        balance = 1;
    }
    return perTile < balance ? perTile : balance;
}

bool MakeNearestPlan(const NearestShape& s, uint32_t eb, uint32_t aivNum, uint64_t ubBytes, NearestPlan& plan)
{
    uint64_t epb = BLOCK_BYTES / eb;
    uint64_t outSlab = s.oh * s.ow;
    uint64_t outVol = s.od * outSlab;
    uint64_t inSlab = s.h * s.w;
    uint64_t inVol = s.d * inSlab;
    uint64_t tileElems = TILE_BYTES / eb;
    uint64_t coreCap = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreCap == 0) {
        coreCap = 1;
    }
    uint64_t items = 0;
    plan.slabs = 0;
    if (outVol <= tileElems) {
        // Whole planes: one contiguous copy each way.
        uint64_t planes = Balanced(tileElems / outVol, s.nc, coreCap);
        while (planes > 0 && UbBytes(planes * inVol, planes * outVol, eb) > ubBytes) {
            planes--;
        }
        if (planes > 0) {
            plan.mode = MODE_VOLUME;
            plan.slabs = static_cast<uint32_t>(planes);
            plan.inSlot = static_cast<uint32_t>(inVol);
            plan.inCap = static_cast<uint32_t>(AlignUp(planes * inVol, epb));
            plan.outCap = static_cast<uint32_t>(AlignUp(planes * outVol, epb));
            items = (s.nc + planes - 1) / planes;
        }
    }
    if (plan.slabs == 0 && outSlab <= tileElems) {
        // Consecutive slabs of the flat (plane, od) order.
        uint64_t inSlot = AlignUp(inSlab, epb);
        uint64_t slabs = Balanced(tileElems / outSlab, s.nc * s.od, coreCap);
        while (slabs > 0 && UbBytes(slabs * inSlot, slabs * outSlab, eb) > ubBytes) {
            slabs--;
        }
        if (slabs > 0) {
            plan.mode = MODE_SLAB;
            plan.slabs = static_cast<uint32_t>(slabs);
            plan.inSlot = static_cast<uint32_t>(inSlot);
            plan.inCap = static_cast<uint32_t>(slabs * inSlot);
            plan.outCap = static_cast<uint32_t>(AlignUp(slabs * outSlab, epb));
            items = (s.nc * s.od + slabs - 1) / slabs;
        }
    }
    if (plan.slabs > 0) {
        plan.rowsPerChunk = static_cast<uint32_t>(s.oh);
        plan.chunkNum = 1;
    } else {
        // Chunks of output rows of one slab.
        uint64_t rows = tileElems / s.ow;
        if (rows == 0) {
            rows = 1;
        }
        if (rows > s.oh) {
            rows = s.oh;
        }
        for (;;) {
            uint64_t chunkNum = (s.oh + rows - 1) / rows;
            uint64_t inRows = 0;
            for (uint64_t j = 0; j < chunkNum; j++) {
                uint64_t oh0 = j * rows;
                uint64_t oh1 = oh0 + rows < s.oh ? oh0 + rows : s.oh;
                uint64_t r = SrcIndex(oh1 - 1, s.rh, s.h) - SrcIndex(oh0, s.rh, s.h) + 1;
                inRows = r > inRows ? r : inRows;
            }
            uint64_t inCap = AlignUp(inRows * s.w, epb);
            uint64_t outCap = AlignUp(rows * s.ow, epb);
            if (UbBytes(inCap, outCap, eb) <= ubBytes) {
                plan.mode = MODE_CHUNK;
                plan.slabs = 1;
                plan.rowsPerChunk = static_cast<uint32_t>(rows);
                plan.chunkNum = static_cast<uint32_t>(chunkNum);
                plan.inSlot = static_cast<uint32_t>(inCap);
                plan.inCap = static_cast<uint32_t>(inCap);
                plan.outCap = static_cast<uint32_t>(outCap);
                items = chunkNum * s.nc * s.od;
                break;
            }
            if (rows == 1) {
                return false;  // one output row and its source rows do not fit
            }
            rows /= 2;
        }
    }
    uint64_t coreNum = coreCap < items ? coreCap : items;
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

float Ratio(float attr, uint64_t in, uint64_t out)
{
    return attr > 0.0f ? attr : static_cast<float>(in) / static_cast<float>(out);
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
    const gert::TypedContinuousVector<int64_t>* outSize = attrs->GetListInt(ATTR_OUTPUT_SIZE);
    if (x.GetDimNum() != 5 || outSize == nullptr || outSize->GetSize() != 3) {
        return ge::GRAPH_FAILED;
    }
    NearestShape s;
    s.nc = static_cast<uint64_t>(x.GetDim(0) * x.GetDim(1));
    s.d = static_cast<uint64_t>(x.GetDim(2));
    s.h = static_cast<uint64_t>(x.GetDim(3));
    s.w = static_cast<uint64_t>(x.GetDim(4));
    const int64_t* o = outSize->GetData();
    if (o[0] <= 0 || o[1] <= 0 || o[2] <= 0 || s.nc == 0 || s.d == 0 || s.h == 0 || s.w == 0) {
        return ge::GRAPH_FAILED;
    }
    s.od = static_cast<uint64_t>(o[0]);
    s.oh = static_cast<uint64_t>(o[1]);
    s.ow = static_cast<uint64_t>(o[2]);
    if (s.nc * s.od * s.oh * s.ow > UINT32_MAX || s.nc * s.d * s.h * s.w > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    float scales[3];
    for (uint32_t i = 0; i < 3; i++) {
        const float* v = attrs->GetAttrPointer<float>(ATTR_SCALE_D + i);
        if (v == nullptr) {
            return ge::GRAPH_FAILED;
        }
        scales[i] = *v;
    }
    s.rd = Ratio(scales[0], s.d, s.od);
    s.rh = Ratio(scales[1], s.h, s.oh);
    s.rw = Ratio(scales[2], s.w, s.ow);
    uint64_t key = 0;
    uint32_t eb = 0;
    if (!KeyOf(xDesc->GetDataType(), key, eb)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    NearestPlan plan;
    if (aivNum == 0 || !MakeNearestPlan(s, eb, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    UpsampleNearestExact3dTilingData tiling;
    tiling.set_nc(static_cast<uint32_t>(s.nc));
    tiling.set_inD(static_cast<uint32_t>(s.d));
    tiling.set_inH(static_cast<uint32_t>(s.h));
    tiling.set_inW(static_cast<uint32_t>(s.w));
    tiling.set_outD(static_cast<uint32_t>(s.od));
    tiling.set_outH(static_cast<uint32_t>(s.oh));
    tiling.set_outW(static_cast<uint32_t>(s.ow));
    tiling.set_ratioD(s.rd);
    tiling.set_ratioH(s.rh);
    tiling.set_ratioW(s.rw);
    tiling.set_mode(plan.mode);
    tiling.set_slabs(plan.slabs);
    tiling.set_rowsPerChunk(plan.rowsPerChunk);
    tiling.set_chunkNum(plan.chunkNum);
    tiling.set_inSlot(plan.inSlot);
    tiling.set_inCap(plan.inCap);
    tiling.set_outCap(plan.outCap);
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
    gert::Shape* yShape = context->GetOutputShape(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || yShape == nullptr || attrs == nullptr || xShape->GetDimNum() != 5) {
        return GRAPH_FAILED;
    }
    const gert::TypedContinuousVector<int64_t>* outSize = attrs->GetListInt(0);
    if (outSize == nullptr || outSize->GetSize() != 3) {
        return GRAPH_FAILED;
    }
    *yShape = *xShape;
    for (size_t i = 0; i < 3; i++) {
        yShape->SetDim(2 + i, outSize->GetData()[i]);
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class UpsampleNearestExact3d : public OpDef {
public:
    explicit UpsampleNearestExact3d(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("output_size").AttrType(REQUIRED).ListInt();
        this->Attr("scale_d").AttrType(OPTIONAL).Float(0.0f);
        this->Attr("scale_h").AttrType(OPTIONAL).Float(0.0f);
        this->Attr("scale_w").AttrType(OPTIONAL).Float(0.0f);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(UpsampleNearestExact3d);
}  // namespace ops
