// AngleV2 host side: tiling function, shape inference and the OpDef.
//
// y = torch.angle(x). Real x (float16, float32; y has x's dtype): pi where
// x < 0, 0 where x >= 0 (-0 included), NaN where x is NaN. complex64 x
// (interleaved float32 re, im; the kernel reads it as float pairs): y =
// atan2(im, re) in float32.
//
// Tiling: the flat tensor is split over the vector cores in units of
// SPLIT_UNIT_BYTES (512 B keeps every core's GM range 512 B aligned); the
// first `tailCoreNum` cores take one unit more. Each core streams its range
// through UB in tiles of TILE_BYTES (a whole number of 256 B repeats, which
// the count form of Compare needs), capped so that both queues with
// BUFFER_NUM buffers, the constant pi tile and the two compare masks fit in
// UB (complex64: both queues, the six float32 work tiles of the atan2, the
// gather offsets, the sign-bit constants and five masks). Tiling keys:
// 1 float16, 2 float32, 3 complex64.
#include <cstdint>

#include "angle_v2_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t TILING_KEY_FP16 = 1;
constexpr uint64_t TILING_KEY_FP32 = 2;
constexpr uint64_t TILING_KEY_C64 = 3;
constexpr uint32_t C64_WORK_TILES = 9;    // re, im, 4 work tiles, offsets, 2 sign-bit constants (float32 each)
constexpr uint32_t C64_MASKS = 5;         // bit masks of the complex kernel
constexpr uint32_t QUEUE_NUM = 2;         // x in, y out
constexpr uint32_t REPEAT_BYTES = 256;    // one vector repeat; Compare counts whole repeats
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=256,512
constexpr uint32_t MIN_CORE_BYTES = 4096;   // ascendopt:knob min=32 max=65536 step=pow2

struct AnglePlan {
  uint32_t coreNum;
  uint32_t unitLength;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileLength;
};

// Splits `total` elements of `elemBytes` bytes over at most `aivNum` cores
// and sizes the UB tile. Returns false when no tile fits in `ubBytes`.
// complex64 elements (8 bytes) are computed as float32 parts.
bool MakeAnglePlan(uint64_t total, uint32_t elemBytes, uint32_t aivNum, uint64_t ubBytes, AnglePlan& plan)
{
    bool complex = elemBytes == 8;
    uint64_t repeatElems = REPEAT_BYTES / (complex ? 4 : elemBytes);
    uint64_t unitLength = SPLIT_UNIT_BYTES / elemBytes;
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

    // Per tile byte: QUEUE_NUM * BUFFER_NUM buffers, the pi tile, and two
    // masks of one bit per element.
    uint64_t tileBytes = ubBytes * 8 / (8 * (QUEUE_NUM * BUFFER_NUM + 1) + 2 * 8 / elemBytes + 8);
    if (complex) {
        // Bits per complex element: x (8 B) and y (4 B) buffers, the work
        // tiles and the masks; tileBytes counts x bytes.
        uint64_t bits = 8 * (BUFFER_NUM * (8 + 4) + C64_WORK_TILES * 4) + C64_MASKS + 8;
        tileBytes = ubBytes * 8 / bits * elemBytes;
    }
    if (tileBytes > TILE_BYTES) {
        tileBytes = TILE_BYTES;
    }
    uint64_t repeatBytes = repeatElems * elemBytes;
    tileBytes = tileBytes >= GM_ALIGN_BYTES && GM_ALIGN_BYTES % repeatBytes == 0
                    ? tileBytes / GM_ALIGN_BYTES * GM_ALIGN_BYTES
                    : tileBytes / repeatBytes * repeatBytes;
    uint64_t maxTile = tileBytes / elemBytes;
    if (maxTile == 0) {
        return false;
    }
    // Equal tiles: the fewest tiles of at most maxTile elements that cover
    // the largest core range, rounded up to whole GM bursts (one tile: to a
    // vector repeat).
    uint64_t coreMax = (blockUnits + (tailCoreNum > 0 ? 1 : 0)) * unitLength;
    if (coreMax > total) {
        coreMax = total;
    }
    uint64_t tileNum = coreMax == 0 ? 1 : (coreMax + maxTile - 1) / maxTile;
    uint64_t alignElems = tileNum > 1 ? GM_ALIGN_BYTES / elemBytes : repeatElems;
    if (alignElems % repeatElems != 0 || maxTile % alignElems != 0) {
        alignElems = repeatElems;
    }
    uint64_t tileLength = (coreMax + tileNum - 1) / tileNum;
    tileLength = (tileLength + alignElems - 1) / alignElems * alignElems;
    if (tileLength == 0) {
        tileLength = alignElems;
    }
    if (tileLength > maxTile) {
        return false;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.unitLength = static_cast<uint32_t>(unitLength);
    plan.blockUnits = static_cast<uint32_t>(blockUnits);
    plan.tailCoreNum = static_cast<uint32_t>(tailCoreNum);
    plan.tileLength = static_cast<uint32_t>(tileLength);
    return true;
}
// ascendopt:tiling-end

bool KeyOf(ge::DataType dtype, uint64_t& key, uint32_t& elemBytes)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
            key = TILING_KEY_FP16;
            elemBytes = 2;
            return true;
        case ge::DT_FLOAT:
            key = TILING_KEY_FP32;
            elemBytes = 4;
            return true;
        case ge::DT_COMPLEX64:
            key = TILING_KEY_C64;
            elemBytes = 8;
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
    if (xShape == nullptr || xDesc == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int64_t total = xShape->GetStorageShape().GetShapeSize();
    if (total < 0 || total > UINT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t key = 0;
    uint32_t elemBytes = 0;
    if (!KeyOf(xDesc->GetDataType(), key, elemBytes)) {
        return ge::GRAPH_FAILED;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    AnglePlan plan;
    if (aivNum == 0 || !MakeAnglePlan(static_cast<uint64_t>(total), elemBytes, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    AngleV2TilingData tiling;
    tiling.set_totalLength(static_cast<uint32_t>(total));
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileLength(plan.tileLength);
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
    if (xShape == nullptr || yShape == nullptr) {
        return GRAPH_FAILED;
    }
    *yShape = *xShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AngleV2 : public OpDef {
public:
    explicit AngleV2(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_COMPLEX64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AngleV2);
}  // namespace ops
