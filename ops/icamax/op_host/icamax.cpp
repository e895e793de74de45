// Icamax host side: tiling function, shape inference and the OpDef.
//
// result (int32, [1]) = the 1-based index of the first maximum of |Re| + |Im|
// (not the modulus) over the first n complex elements of x, BLAS ICAMAX
// semantics. x is complex64 (up to 3-D; interleaved float32 real, imaginary)
// or, equivalently, float32 with a last dimension of 2 (real, imaginary; up
// to 3-D before it); either is searched flat and the kernel reads it as
// float pairs: n = min(attr n, complex elements of x); n <= 0 gives 0; only
// incx = 1 is supported. Ties go to the
// smallest index; a NaN is the extreme (the first NaN wins, as numpy's
// argmax).
//
// Tiling: the searched complex elements are split over the vector cores in
// units of SPLIT_UNIT_BYTES; the first `tailCoreNum` cores take one unit
// more. Each core streams its range through UB in tiles of TILE_BYTES
// (capped so that BUFFER_NUM input buffers, the |Re| + |Im| tile, the
// reduction's work buffer and the per-tile results fit in UB). The workspace
// holds one 32 B result slot per core. Tiling key 1.
#include <cstdint>

#include "icamax_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {
constexpr uint64_t TILING_KEY = 1;
constexpr uint32_t ELEM_WORDS = 2;        // float32 words per searched element (real, imaginary)
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block, also one workspace slot
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint32_t ATTR_N = 0;
constexpr uint32_t ATTR_INCX = 1;

// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 90112;      // ascendopt:knob min=4096 max=98304 step=4096
constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2
constexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t SPLIT_UNIT_BYTES = 512;  // ascendopt:knob choices=256,512
constexpr uint32_t MIN_CORE_BYTES = 16384;  // ascendopt:knob min=512 max=65536 step=pow2

struct IamaxPlan {
  uint32_t coreNum;
  uint32_t unitLength;
  uint32_t blockUnits;
  uint32_t tailCoreNum;
  uint32_t tileLength;
  uint32_t maxTiles;
};

// UB bytes of the kernel for tiles of `tile` elements and `tiles` tiles per
// core (mirrors its InitBuffer calls).
uint64_t UbBytes(uint64_t tile, uint64_t tiles, uint64_t coreNum)
{
    uint64_t bytes = BUFFER_NUM * tile * ELEM_WORDS * FLOAT_BYTES  // input queue
                     + (tile / 16 + 64) * FLOAT_BYTES               // reduction work buffer
                     + (tiles * 2 * FLOAT_BYTES + BLOCK_BYTES)      // per-tile results
                     + coreNum * BLOCK_BYTES + BLOCK_BYTES;         // result slots, output
    if (ELEM_WORDS > 1) {
        bytes += tile * FLOAT_BYTES;  // |re| + |im|
    }
    return bytes;
}

// Splits `total` searched elements over at most `aivNum` cores and sizes the
// UB tile. Returns false when no tile fits in `ubBytes`.
bool MakeIamaxPlan(uint64_t total, uint32_t aivNum, uint64_t ubBytes, IamaxPlan& plan)
{
    uint64_t elemBytes = ELEM_WORDS * FLOAT_BYTES;
    uint64_t unitLength = SPLIT_UNIT_BYTES / elemBytes;
    uint64_t units = (total + unitLength - 1) / unitLength;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    if (coreNum > units) {
        coreNum = units;
    }
    // Small searches: no core gets less than MIN_CORE_BYTES (each extra core
    // costs a SyncAll slot).
    uint64_t coreCap = (total * elemBytes + MIN_CORE_BYTES - 1) / MIN_CORE_BYTES;
    if (coreNum > coreCap) {
        coreNum = coreCap;
    }
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;
    uint64_t coreMax = (blockUnits + (tailCoreNum > 0 ? 1 : 0)) * unitLength;
    if (coreMax > total) {
        coreMax = total;
    }
    uint64_t burst = GM_ALIGN_BYTES / elemBytes;
    uint64_t tile = TILE_BYTES / elemBytes / burst * burst;
    if (tile == 0) {
        tile = burst;
    }
    uint64_t tiles = coreMax == 0 ? 1 : (coreMax + tile - 1) / tile;
    while (tile > burst && UbBytes(tile, tiles, coreNum) > ubBytes) {
        tile -= burst;
        tiles = coreMax == 0 ? 1 : (coreMax + tile - 1) / tile;
    }
    if (UbBytes(tile, tiles, coreNum) > ubBytes) {
        return false;
    }
    plan.coreNum = static_cast<uint32_t>(coreNum);
    plan.unitLength = static_cast<uint32_t>(unitLength);
    plan.blockUnits = static_cast<uint32_t>(blockUnits);
    plan.tailCoreNum = static_cast<uint32_t>(tailCoreNum);
    plan.tileLength = static_cast<uint32_t>(tile);
    plan.maxTiles = static_cast<uint32_t>(tiles);
    return true;
}
// ascendopt:tiling-end
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (xShape == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* n = attrs->GetAttrPointer<int64_t>(ATTR_N);
    const int64_t* incx = attrs->GetAttrPointer<int64_t>(ATTR_INCX);
    const gert::CompileTimeTensorDesc* xDesc = context->GetInputDesc(0);
    if (xDesc == nullptr || n == nullptr || incx == nullptr || *incx != 1) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& shape = xShape->GetStorageShape();
    size_t dimNum = shape.GetDimNum();
    int64_t total = shape.GetShapeSize();
    // float32 words of x: complex64 holds two per element; the float32 form
    // has them in its last dimension of 2.
    bool complex = xDesc->GetDataType() == ge::DT_COMPLEX64;
    if (complex) {
        if (dimNum > 3) {
            return ge::GRAPH_FAILED;
        }
        total *= ELEM_WORDS;
    } else if (dimNum == 0 || shape.GetDim(dimNum - 1) != 2) {
        return ge::GRAPH_FAILED;
    }
    if (total < 0 || total > INT32_MAX) {
        return ge::GRAPH_FAILED;
    }
    uint64_t available = static_cast<uint64_t>(total) / ELEM_WORDS;
    uint64_t search = *n <= 0 ? 0 : static_cast<uint64_t>(*n);
    if (search > available) {
        search = available;
    }

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    IamaxPlan plan;
    if (aivNum == 0 || !MakeIamaxPlan(search, aivNum, ubSize, plan)) {
        return ge::GRAPH_FAILED;
    }

    IcamaxTilingData tiling;
    tiling.set_searchLength(static_cast<uint32_t>(search));
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_coreNum(plan.coreNum);
    tiling.set_tileLength(plan.tileLength);
    tiling.set_maxTiles(plan.maxTiles);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(TILING_KEY);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = static_cast<size_t>(plan.coreNum) * BLOCK_BYTES;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    gert::Shape* resultShape = context->GetOutputShape(0);
    if (resultShape == nullptr) {
        return GRAPH_FAILED;
    }
    resultShape->SetDimNum(0);
    resultShape->AppendDim(1);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class Icamax : public OpDef {
public:
    explicit Icamax(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_COMPLEX64, ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("result").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32}).Format({ge::FORMAT_ND});
        this->Attr("n").AttrType(OPTIONAL).Int(0);
        this->Attr("incx").AttrType(OPTIONAL).Int(1);

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Icamax);
}  // namespace ops
