// BevPool host side: tiling function, shape inference and the OpDef.
//
// depth [B, N, D, fH, fW] and feat [B, N, fH, fW, C] (float16 or float32),
// ranks_depth / ranks_feat / ranks_bev int32 [P], interval_starts /
// interval_lengths int32 [K], attr bev_feat_shape [B, Dz, Dy, Dx, C] ->
// out [B, C, Dz, Dy, Dx] (shared/ref/operators-l1-l3.md, "bev_pool").
//
// Tiling: the output grid is partitioned so that the cores never share a
// cell (see the tiling header). The slice of an item is sized for about one
// item per core, capped by the UB budget (which mirrors the kernel's
// InitBuffer calls), and made equal within a batch. Tiling key: 1 float16,
// 2 float32.
#include <cstdint>

#include "bev_pool_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t LANES = 64;

// ascendopt:tiling-begin
constexpr uint32_t CHUNK_ENTRIES = 1024;   // ascendopt:knob min=64 max=4096 step=64
constexpr uint32_t CHUNK_INTERVALS = 512;  // ascendopt:knob min=8 max=4096 step=8
constexpr uint32_t MAX_CORE_NUM = 48;      // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t ITEMS_PER_CORE = 1;     // ascendopt:knob min=1 max=8 step=1

uint64_t AlignUp(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

// UB bytes of the kernel's buffers for a slice of `cells` cells.
uint64_t UbBytes(uint64_t cells, uint64_t channels, uint64_t elemBytes)
{
    uint64_t pitch = AlignUp(cells, BLOCK_BYTES / elemBytes);
    uint64_t slice = channels * pitch;
    uint64_t bytes = 2 * AlignUp(slice * elemBytes, BLOCK_BYTES) + slice * 4;  // acc, out, table
    bytes += 2 * CHUNK_ENTRIES * 4;                                             // rank queue
    bytes += 5 * CHUNK_ENTRIES * 4;                                             // scratch rows
    bytes += 3 * AlignUp(CHUNK_ENTRIES / 8, BLOCK_BYTES);                        // masks
    bytes += 2 * CHUNK_INTERVALS * 4;                                           // intervals
    return bytes;
}
// ascendopt:tiling-end
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::TypedContinuousVector<int64_t>* bev = attrs->GetListInt(0);
    if (bev == nullptr || bev->GetSize() != 5) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* bs = bev->GetData();
    for (int i = 0; i < 5; ++i) {
        if (bs[i] < 1) {
            return ge::GRAPH_FAILED;
        }
    }
    const gert::StorageShape* shapes[7];
    for (int i = 0; i < 7; ++i) {
        shapes[i] = context->GetInputShape(i);
        if (shapes[i] == nullptr) {
            return ge::GRAPH_FAILED;
        }
    }
    const gert::Shape& ds = shapes[0]->GetStorageShape();
    const gert::Shape& fs = shapes[1]->GetStorageShape();
    if (ds.GetDimNum() != 5 || fs.GetDimNum() != 5 || ds.GetDim(0) != bs[0] || fs.GetDim(4) != bs[4]) {
        return ge::GRAPH_FAILED;
    }
    int64_t points = shapes[2]->GetStorageShape().GetShapeSize();
    int64_t intervals = shapes[5]->GetStorageShape().GetShapeSize();
    int64_t depthNum = ds.GetShapeSize();
    int64_t featNum = fs.GetShapeSize();
    int64_t batch = bs[0];
    int64_t cells = bs[1] * bs[2] * bs[3];
    int64_t channels = bs[4];
    int64_t gNum = batch * cells * channels;
    if (points < 0 || intervals < 0 || depthNum > INT32_MAX || featNum > INT32_MAX || gNum > INT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    const auto desc = context->GetInputDesc(0);
    if (desc == nullptr) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint64_t elemBytes = 0;
    if (desc->GetDataType() == ge::DT_FLOAT16) {
        key = 1;
        elemBytes = 2;
    } else if (desc->GetDataType() == ge::DT_FLOAT) {
        key = 2;
        elemBytes = 4;
    } else {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    if (aivNum == 0) {
        return ge::GRAPH_FAILED;
    }
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;

    // Slice: about ITEMS_PER_CORE items per core, at most what UB holds.
    uint64_t wanted = coreNum * ITEMS_PER_CORE;
    uint64_t slice = (static_cast<uint64_t>(batch * cells) + wanted - 1) / wanted;
    slice = slice < static_cast<uint64_t>(cells) ? slice : static_cast<uint64_t>(cells);
    while (slice > 1 && UbBytes(slice, channels, elemBytes) > ubSize) {
        slice = slice * 7 / 8;
    }
    if (slice == 0 || UbBytes(slice, channels, elemBytes) > ubSize) {
        return ge::GRAPH_FAILED;
    }
    uint64_t perBatch = (static_cast<uint64_t>(cells) + slice - 1) / slice;
    slice = (static_cast<uint64_t>(cells) + perBatch - 1) / perBatch;
    uint64_t items = perBatch * batch;
    coreNum = coreNum < items ? coreNum : items;

    BevPoolTilingData tiling;
    tiling.set_depthNum(static_cast<uint32_t>(depthNum));
    tiling.set_featNum(static_cast<uint32_t>(featNum));
    tiling.set_points(static_cast<uint32_t>(points));
    tiling.set_intervals(static_cast<uint32_t>(intervals));
    tiling.set_channels(static_cast<uint32_t>(channels));
    tiling.set_cells(static_cast<uint32_t>(cells));
    tiling.set_sliceCells(static_cast<uint32_t>(slice));
    tiling.set_itemsPerBatch(static_cast<uint32_t>(perBatch));
    tiling.set_items(static_cast<uint32_t>(items));
    tiling.set_blockItems(static_cast<uint32_t>(items / coreNum));
    tiling.set_tailCoreNum(static_cast<uint32_t>(items % coreNum));
    tiling.set_chunkEntries(CHUNK_ENTRIES / LANES * LANES);
    tiling.set_chunkIntervals(CHUNK_INTERVALS / 8 * 8);
    tiling.set_rowPitch(static_cast<uint32_t>(AlignUp(slice, BLOCK_BYTES / elemBytes)));

    context->SetBlockDim(static_cast<uint32_t>(coreNum));
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
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    gert::Shape* outShape = context->GetOutputShape(0);
    if (attrs == nullptr || outShape == nullptr) {
        return GRAPH_FAILED;
    }
    const gert::TypedContinuousVector<int64_t>* bev = attrs->GetListInt(0);
    if (bev == nullptr || bev->GetSize() != 5) {
        return GRAPH_FAILED;
    }
    const int64_t* bs = bev->GetData();
    outShape->SetDimNum(5);
    outShape->SetDim(0, bs[0]);
    outShape->SetDim(1, bs[4]);
    outShape->SetDim(2, bs[1]);
    outShape->SetDim(3, bs[2]);
    outShape->SetDim(4, bs[3]);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class BevPool : public OpDef {
public:
    explicit BevPool(const char* name) : OpDef(name)
    {
        this->Input("depth").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("feat").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("ranks_depth").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("ranks_feat").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("ranks_bev").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("interval_starts").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("interval_lengths").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("bev_feat_shape").AttrType(REQUIRED).ListInt();

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(BevPool);
}  // namespace ops
