// ForeachNonFiniteCheckAndUnscale host side: tiling function, shape
// inference and the OpDef.
//
// torch._amp_foreach_non_finite_check_and_unscale_, in place
// (shared/ref/operators-l1-l3.md, Level 3): every element of every tensor of
// scaled_grads is multiplied by inv_scale (16-bit floats through float32),
// non-finite values included; found_inf becomes 1.0 when an element is
// +-inf or NaN and is left as it is otherwise. The OpDef has no outputs:
// scaled_grads and found_inf are written in place.
//
// Tiling: the tensors are cut into split units of SPLIT_UNIT_BYTES (512 B
// keeps every core's GM range 512 B aligned inside its tensor); the units of
// all tensors are dealt to the vector cores in list order, the first
// `tailCoreNum` cores taking one unit more. Each core streams its range
// through UB in tiles of at most TILE_BYTES of the storage type, capped so
// that the queues (BUFFER_NUM buffers each), the float32 work tile of the
// 16-bit paths and the non-finite accumulator fit in UB; the tiles are
// evened out over the largest core range. Tiling keys select the dtype path
// of the kernel: 1 float16, 2 float32, 3 bfloat16. The workspace holds one
// 32 B slot per core, where each core publishes whether it saw a non-finite
// value.
#include <cstdint>

#include "foreach_non_finite_check_and_unscale_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint32_t MAX_TENSORS = 256;     // tensorLength entries of the tiling data
constexpr uint32_t QUEUE_NUM = 2;         // the input queue and the output queue
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint64_t UB_RESERVED_BYTES = 1024;  // kept free in UB
constexpr uint64_t REDUCE_BYTES = 512;    // the final reduction's result and scratch

// One dtype path of the kernel.
struct Path {
    uint64_t key;
    uint32_t elemBytes;  // storage type
    bool viaFloat;       // casts to a float32 work tile and back
};

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=32,64,128,256,512,1024,2048
constexpr uint32_t MIN_CORE_BYTES = 4096;   // ascendopt:knob min=512 max=65536 step=pow2

struct ForeachPlan {
    uint32_t coreNum;
    uint32_t unitLength;
    uint32_t blockUnits;
    uint32_t tailCoreNum;
    uint32_t tileLength;
};

// Deals the units of the tensors (`lengths`, `count` of them) to at most
// `aivNum` cores and sizes the UB tile: `perElemBytes` of UB per tile
// element besides the queues, `fixedBytes` once. Returns false when no tile
// fits in `ubBytes`.
bool MakeForeachPlan(const uint64_t* lengths, uint32_t count, const Path& path, uint32_t aivNum, uint64_t ubBytes,
                     uint64_t perElemBytes, uint64_t fixedBytes, ForeachPlan& plan)
{
    uint64_t unitLength = SPLIT_UNIT_BYTES / path.elemBytes;
    if (unitLength == 0) {
        unitLength = 1;
    }
    uint64_t units = 0;
    uint64_t totalBytes = 0;
    for (uint32_t i = 0; i < count; ++i) {
        units += (lengths[i] + unitLength - 1) / unitLength;
        totalBytes += lengths[i] * path.elemBytes;
    }
    if (units == 0) {
        return false;
    }
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Small lists: no core gets less than MIN_CORE_BYTES.
    uint64_t coreCap = (totalBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;

    // Tile: at most TILE_BYTES of the storage type, and everything in UB.
    uint64_t perElem = static_cast<uint64_t>(BUFFER_NUM) * QUEUE_NUM * path.elemBytes + perElemBytes;
    if (ubBytes <= fixedBytes + UB_RESERVED_BYTES) {
        return false;
    }
    uint64_t maxTile = (ubBytes - fixedBytes - UB_RESERVED_BYTES) / perElem;
    if (maxTile > TILE_BYTES / path.elemBytes) {
        maxTile = TILE_BYTES / path.elemBytes;
    }
    uint64_t alignElems = GM_ALIGN_BYTES / path.elemBytes;
    if (maxTile >= alignElems) {
        maxTile = maxTile / alignElems * alignElems;
    } else {
        alignElems = BLOCK_BYTES / path.elemBytes;
        maxTile = maxTile / alignElems * alignElems;
    }
    if (maxTile == 0) {
        return false;
    }
    // Even tiles over the largest core range, rounded up to whole GM bursts
    // (a single tile only to a UB block).
    uint64_t coreMax = (blockUnits + (tailCoreNum > 0 ? 1 : 0)) * unitLength;
    uint64_t tileNum = (coreMax + maxTile - 1) / maxTile;
    uint64_t roundElems = (tileNum > 1 ? GM_ALIGN_BYTES : BLOCK_BYTES) / path.elemBytes;
    if (roundElems == 0 || maxTile % roundElems != 0) {
        roundElems = BLOCK_BYTES / path.elemBytes;
    }
    uint64_t tileLength = (coreMax + tileNum - 1) / tileNum;
    tileLength = (tileLength + roundElems - 1) / roundElems * roundElems;
    if (tileLength > maxTile) {
        tileLength = maxTile;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.unitLength = static_cast<uint32_t>(unitLength);
    plan.blockUnits = static_cast<uint32_t>(blockUnits);
    plan.tailCoreNum = static_cast<uint32_t>(tailCoreNum);
    plan.tileLength = static_cast<uint32_t>(tileLength);
    return true;
}
// ascendopt:tiling-end

// The kernel path for the list's dtype.
bool PathOf(ge::DataType dtype, Path& path)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            path = Path{1, 2, true};
            return true;
        case ge::DT_FLOAT:
            path = Path{2, 4, false};
            return true;
        case ge::DT_BF16:
            path = Path{3, 2, true};
            return true;
        default:
            return false;
    }
}

// The elements of every tensor of list input 0; false when the list is
// missing, empty, too long or holds a tensor of another dtype.
bool ListLengths(gert::TilingContext* context, ge::DataType dtype, uint64_t* lengths, uint32_t& count)
{
    const gert::AnchorInstanceInfo* info = context->GetIrInputInstanceInfo(0);
    if (info == nullptr || info->GetInstantiationNum() == 0 || info->GetInstantiationNum() > MAX_TENSORS) {
        return false;
    }
    count = static_cast<uint32_t>(info->GetInstantiationNum());
    for (uint32_t i = 0; i < count; ++i) {
        const gert::StorageShape* shape = context->GetDynamicInputShape(0, i);
        const gert::CompileTimeTensorDesc* desc = context->GetDynamicInputDesc(0, i);
        if (shape == nullptr || desc == nullptr || desc->GetDataType() != dtype) {
            return false;
        }
        int64_t n = shape->GetStorageShape().GetShapeSize();
        if (n <= 0) {
            return false;
        }
        lengths[i] = static_cast<uint64_t>(n);
    }
    return true;
}

// Input `index` is one float32 value.
bool IsFloatScalar(gert::TilingContext* context, size_t index)
{
    const gert::StorageShape* shape = context->GetInputShape(index);
    const gert::CompileTimeTensorDesc* desc = context->GetInputDesc(index);
    return shape != nullptr && desc != nullptr && shape->GetStorageShape().GetShapeSize() == 1 &&
           desc->GetDataType() == ge::DT_FLOAT;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::CompileTimeTensorDesc* first = context->GetDynamicInputDesc(0, 0);
    if (first == nullptr) {
        return ge::GRAPH_FAILED;
    }
    Path path;
    if (!PathOf(first->GetDataType(), path)) {
        return ge::GRAPH_FAILED;
    }
    uint64_t lengths[MAX_TENSORS] = {0};
    uint32_t count = 0;
    if (!ListLengths(context, first->GetDataType(), lengths, count)) {
        return ge::GRAPH_FAILED;
    }
    // found_inf and inv_scale follow the list: one float32 value each.
    if (!IsFloatScalar(context, count) || !IsFloatScalar(context, count + 1)) {
        return ge::GRAPH_FAILED;
    }
    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    // UB besides the queues: the float32 accumulator of the non-finite
    // check, the float32 work tile of the 16-bit paths, the reduction.
    uint64_t perElemBytes = sizeof(float) + (path.viaFloat ? sizeof(float) : 0);
    ForeachPlan plan;
    if (aivNum == 0 || !MakeForeachPlan(lengths, count, path, aivNum, ubSize, perElemBytes, REDUCE_BYTES, plan)) {
        return ge::GRAPH_FAILED;
    }

    ForeachNonFiniteCheckAndUnscaleTilingData tiling;
    tiling.set_tensorNum(count);
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileLength(plan.tileLength);
    tiling.set_bufferNum(BUFFER_NUM);
    tiling.set_tensorLength(lengths);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(path.key);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    // One 32 B slot per core for the non-finite flags.
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = static_cast<size_t>(plan.coreNum) * BLOCK_BYTES;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class ForeachNonFiniteCheckAndUnscale : public OpDef {
public:
    explicit ForeachNonFiniteCheckAndUnscale(const char* name) : OpDef(name)
    {
        this->Input("scaled_grads")
            .ParamType(DYNAMIC)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("found_inf")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("inv_scale")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ForeachNonFiniteCheckAndUnscale);
}  // namespace ops
