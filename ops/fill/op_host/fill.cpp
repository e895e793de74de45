// Fill host side: tiling function, shape inference and the OpDef.
//
// y has shape `dims` and every element equals `value` (a one-element
// tensor); y takes value's dtype (torch.full). The element's bytes are
// copied as they are, so NaN payloads and -0 are kept. `dims` is an int
// list attribute here: the simulated tiling cannot read tensor values
// (ValueDepend), and the CANN operator reads its `dims` tensor on the host
// anyway. Tiling keys by element size (see op_kernel/fill.cpp): 1 int8 and
// bool, 2 float16 and bfloat16, 4 float32 and int32, 8 int64.
//
// Tiling: y is split over the vector cores in units of SPLIT_UNIT_BYTES
// (512 B keeps every core's GM range 512 B aligned); the first `tailCoreNum`
// cores take one unit more. There is no input stream: each core fills one UB
// tile of TILE_BYTES once and copies it out repeatedly (MTE3 only).
#include <cstdint>

#include "fill_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint32_t ATTR_DIMS = 0;         // index of attr `dims`

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=131072 step=pow2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512
constexpr uint32_t MIN_CORE_BYTES = 1024;   // ascendopt:knob min=32 max=65536 step=pow2

struct FillPlan {
  uint32_t coreNum;
  uint32_t unitLength;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileLength;
};

// Splits `total` elements of `elemBytes` bytes over at most `aivNum` cores and
// sizes the UB tile. Returns false when no tile fits in `ubBytes`.
bool MakeFillPlan(uint64_t total, uint32_t elemBytes, uint32_t aivNum, uint64_t ubBytes, FillPlan& plan)
{
    uint64_t unitLength = SPLIT_UNIT_BYTES / elemBytes;
    if (unitLength == 0) {
        unitLength = 1;
    }
    uint64_t units = (total + unitLength - 1) / unitLength;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Tiny tensors: no core gets less than MIN_CORE_BYTES.
    uint64_t coreCap = (total * elemBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;

    // One tile, single-buffered: TILE_BYTES capped by UB, whole GM bursts
    // (a smaller tile whole UB blocks), and no longer than a core's range.
    uint64_t tileBytes = TILE_BYTES < ubBytes ? TILE_BYTES : ubBytes;
    tileBytes = tileBytes >= GM_ALIGN_BYTES ? tileBytes / GM_ALIGN_BYTES * GM_ALIGN_BYTES
                                            : tileBytes / BLOCK_BYTES * BLOCK_BYTES;
    uint64_t tileLength = tileBytes / elemBytes;
    if (tileLength == 0) {
        return false;
    }
    uint64_t coreMax = (blockUnits + (tailCoreNum > 0 ? 1 : 0)) * unitLength;
    if (coreMax > total) {
        coreMax = total;
    }
    uint64_t blockElems = BLOCK_BYTES / elemBytes;
    uint64_t coreTile = (coreMax + blockElems - 1) / blockElems * blockElems;
    if (coreTile > 0 && coreTile < tileLength) {
        tileLength = coreTile;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.unitLength = static_cast<uint32_t>(unitLength);
    plan.blockUnits = static_cast<uint32_t>(blockUnits);
    plan.tailCoreNum = static_cast<uint32_t>(tailCoreNum);
    plan.tileLength = static_cast<uint32_t>(tileLength);
    return true;
}
// ascendopt:tiling-end

bool ElemBytesOf(ge::DataType dtype, uint32_t& elemBytes)
{
    switch (dtype) {
        case ge::DT_INT8:
        case ge::DT_BOOL:
            elemBytes = 1;
            return true;
        case ge::DT_FLOAT16:
        case ge::DT_BF16:
            elemBytes = 2;
            return true;
        case ge::DT_FLOAT:
        case ge::DT_INT32:
            elemBytes = 4;
            return true;
        case ge::DT_INT64:
            elemBytes = 8;
            return true;
        default:
            return false;
    }
}

// The element count of `dims`, or -1 when a dimension is negative.
int64_t DimsSize(const gert::TypedContinuousVector<int64_t>* dims)
{
    int64_t size = 1;
    const int64_t* data = dims->GetData();
    for (size_t i = 0; i < dims->GetSize(); i++) {
        if (data[i] < 0 || (data[i] > 0 && size > INT64_MAX / data[i])) {
            return -1;
        }
        size *= data[i];
    }
    return size;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* valueShape = context->GetInputShape(0);
    const gert::StorageShape* yShape = context->GetOutputShape(0);
    const auto valueDesc = context->GetInputDesc(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (valueShape == nullptr || yShape == nullptr || valueDesc == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::TypedContinuousVector<int64_t>* dims = attrs->GetListInt(ATTR_DIMS);
    if (dims == nullptr || valueShape->GetStorageShape().GetShapeSize() != 1) {
        return ge::GRAPH_FAILED;
    }
    int64_t total = yShape->GetStorageShape().GetShapeSize();
    if (total < 0 || total > UINT32_MAX || DimsSize(dims) != total) {
        return ge::GRAPH_FAILED;
    }
    uint32_t elemBytes = 0;
    if (!ElemBytesOf(valueDesc->GetDataType(), elemBytes)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    FillPlan plan;
    if (aivNum == 0 || !MakeFillPlan(static_cast<uint64_t>(total), elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    FillTilingData tiling;
    tiling.set_totalLength(static_cast<uint32_t>(total));
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileLength(plan.tileLength);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(elemBytes);
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
    gert::Shape* yShape = context->GetOutputShape(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (yShape == nullptr || attrs == nullptr) {
        return GRAPH_FAILED;
    }
    const gert::TypedContinuousVector<int64_t>* dims = attrs->GetListInt(optiling::ATTR_DIMS);
    if (dims == nullptr) {
        return GRAPH_FAILED;
    }
    yShape->SetDimNum(dims->GetSize());
    for (size_t i = 0; i < dims->GetSize(); i++) {
        yShape->SetDim(i, dims->GetData()[i]);
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class Fill : public OpDef {
public:
    explicit Fill(const char* name) : OpDef(name)
    {
        this->Input("value")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32, ge::DT_INT8, ge::DT_INT64,
                       ge::DT_BF16,
                       ge::DT_BOOL})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND,
                     ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32, ge::DT_INT8, ge::DT_INT64,
                       ge::DT_BF16,
                       ge::DT_BOOL})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND,
                     ge::FORMAT_ND});
        this->Attr("dims").AttrType(REQUIRED).ListInt();

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Fill);
}  // namespace ops
