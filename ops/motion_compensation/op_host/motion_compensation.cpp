// MotionCompensation host side: tiling function, shape inference and the
// OpDef.
//
// points float32 [ndim >= 3, N] (rows x, y, z, extras), timestamp uint64
// [N] -> out float32 [ndim, N]: every LiDAR point is moved to the pose at
// timestamp_max (shared/ref/operators-l1-l3.md, "motion_compensation").
// Attrs: timestamp_min / timestamp_max (int64), translation_min / _max (3
// floats), quaterniond_min / _max (4 floats, w x y z).
//
// The host folds the two poses into constants (in double, rounded once to
// float): T = R(conj q_max) (t_min - t_max); q_rel = normalise(conj q_max
// (x) q_min) with d = q_rel.w; rotation iff |d| < 1 - 1e-8; theta =
// acos |d|. The kernel's per-point algebra is in the tiling header. Like the
// CANN kernel, tau uses the low 32 bits of the timestamps (an int32
// difference of the low words).
//
// Work split: N columns in units of UNIT_POINTS over the vector cores, the
// first tailCoreNum cores one unit more; tiles of TILE_POINTS columns
// (capped by the UB budget, which mirrors the kernel's InitBuffer calls).
#include <cmath>
#include <cstdint>

#include "motion_compensation_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace optiling {
namespace {
constexpr uint32_t ATTR_T_MIN = 0;
constexpr uint32_t ATTR_T_MAX = 1;
constexpr uint32_t ATTR_TR_MIN = 2;
constexpr uint32_t ATTR_TR_MAX = 3;
constexpr uint32_t ATTR_Q_MIN = 4;
constexpr uint32_t ATTR_Q_MAX = 5;
constexpr uint32_t FLOAT_BYTES = 4;
constexpr uint32_t LANES = 64;  // floats per 256 B repeat
constexpr uint32_t TILE_ALIGN = 128;  // points: 512 B, so every row copy starts 512 B aligned

// ascendopt:tiling-begin
constexpr uint32_t TILE_POINTS = 1280;   // ascendopt:knob min=128 max=4096 step=128
constexpr uint32_t BUFFER_NUM = 2;       // the kernel reads one tile ahead: 2 buffers per queue
constexpr uint32_t MAX_CORE_NUM = 48;    // ascendopt:knob min=1 max=48 step=1
constexpr uint32_t UNIT_POINTS = 128;    // ascendopt:knob choices=8,16,32,64,128,256,512
constexpr uint32_t MIN_CORE_POINTS = 1024;  // ascendopt:knob min=64 max=65536 step=pow2

// UB bytes per tile point: queues (3 rows in, 2 timestamp words, 3 rows
// out, 1 extra row, each BUFFER_NUM deep), 10 float scratch rows, the
// tMax constant and the 2 constant, and the compare mask (1 bit).
uint64_t UbBytes(uint64_t points, uint64_t sinTmp)
{
    uint64_t queues = BUFFER_NUM * (3 + 2 + 3 + 1) * FLOAT_BYTES * points;
    uint64_t scratch = (10 + 2) * FLOAT_BYTES * points + points / 8 + 32;
    return queues + scratch + sinTmp;
}
// ascendopt:tiling-end

// Temporary space of the Sin API for a tile: what one call over its 2 x
// points lanes can use, in 32 B blocks.
uint32_t SinTmp(uint64_t points)
{
    uint32_t maxTmp = 0;
    uint32_t minTmp = 0;
    AscendC::GetSinMaxMinTmpSize(ge::Shape({static_cast<int64_t>(2 * points)}), FLOAT_BYTES, false, maxTmp, minTmp);
    uint32_t tmp = maxTmp > minTmp ? maxTmp : minTmp;
    return (tmp + 31) / 32 * 32;
}

struct Pose {
    double q[4];
    double t[3];
};

// Hamilton product a (x) b, w x y z.
void QMul(const double* a, const double* b, double* out)
{
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

// R(q) p with scale 2 / |q|^2 (0 for q = 0).
void Rotate(const double* q, const double* p, double* out)
{
    double n = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    double s = n > 0.0 ? 2.0 / n : 0.0;
    double w = q[0], x = q[1], y = q[2], z = q[3];
    out[0] = (1.0 - s * (y * y + z * z)) * p[0] + s * (x * y - w * z) * p[1] + s * (x * z + w * y) * p[2];
    out[1] = s * (x * y + w * z) * p[0] + (1.0 - s * (x * x + z * z)) * p[1] + s * (y * z - w * x) * p[2];
    out[2] = s * (x * z - w * y) * p[0] + s * (y * z + w * x) * p[1] + (1.0 - s * (x * x + y * y)) * p[2];
}

bool ReadList(const gert::RuntimeAttrs* attrs, uint32_t index, size_t count, double* out)
{
    const gert::TypedContinuousVector<float>* v = attrs->GetListFloat(index);
    if (v == nullptr || v->GetSize() != count) {
        return false;
    }
    const float* d = v->GetData();
    for (size_t i = 0; i < count; ++i) {
        if (!std::isfinite(d[i])) {
            return false;
        }
        out[i] = static_cast<double>(d[i]);
    }
    return true;
}
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::StorageShape* pShape = context->GetInputShape(0);
    const gert::StorageShape* tsShape = context->GetInputShape(1);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (pShape == nullptr || tsShape == nullptr || attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& ps = pShape->GetStorageShape();
    const gert::Shape& ts = tsShape->GetStorageShape();
    if (ps.GetDimNum() != 2 || ts.GetDimNum() != 1) {
        return ge::GRAPH_FAILED;
    }
    int64_t ndim = ps.GetDim(0);
    int64_t n = ps.GetDim(1);
    if (ndim < 3 || n < 0 || ts.GetDim(0) != n || ndim * n > static_cast<int64_t>(UINT32_MAX)) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* tMinP = attrs->GetInt(ATTR_T_MIN);
    const int64_t* tMaxP = attrs->GetInt(ATTR_T_MAX);
    Pose lo;
    Pose hi;
    if (tMinP == nullptr || tMaxP == nullptr || !ReadList(attrs, ATTR_TR_MIN, 3, lo.t) ||
        !ReadList(attrs, ATTR_TR_MAX, 3, hi.t) || !ReadList(attrs, ATTR_Q_MIN, 4, lo.q) ||
        !ReadList(attrs, ATTR_Q_MAX, 4, hi.q)) {
        return ge::GRAPH_FAILED;
    }
    int64_t tMin = *tMinP;
    int64_t tMax = *tMaxP;

    MotionCompensationTilingData tiling;
    // f = 1 / (tmax - tmin) in double (the difference of two int64 may
    // overflow int64; it cannot overflow double).
    double span = static_cast<double>(tMax) - static_cast<double>(tMin);
    double f = tMax != tMin ? 1.0 / span : 0.0;
    tiling.set_tMaxLow32(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(tMax) & 0xffffffffu)));

    double conj[4] = {hi.q[0], -hi.q[1], -hi.q[2], -hi.q[3]};
    double dt[3] = {lo.t[0] - hi.t[0], lo.t[1] - hi.t[1], lo.t[2] - hi.t[2]};
    double tr[3];
    Rotate(conj, dt, tr);
    float tf[3] = {static_cast<float>(tr[0] * f), static_cast<float>(tr[1] * f), static_cast<float>(tr[2] * f)};
    tiling.set_t(tf);

    double rel[4];
    QMul(conj, lo.q, rel);
    double norm = std::sqrt(rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2] + rel[3] * rel[3]);
    if (norm > 0.0) {
        for (double& c : rel) {
            c /= norm;
        }
    }
    double d = rel[0];
    bool rotate = std::fabs(d) < 1.0 - 1e-8;
    double theta = std::acos(std::fabs(d) > 1.0 ? 1.0 : std::fabs(d));
    double sinTheta = std::sin(theta);
    if (rotate && !(sinTheta > 0.0)) {
        return ge::GRAPH_FAILED;  // as the CANN host: no interpolation for sin theta = 0
    }
    double sign = d >= 0.0 ? 1.0 : -1.0;
    tiling.set_rotate(rotate ? 1 : 0);
    tiling.set_theta(static_cast<float>(theta));
    tiling.set_thetaF(static_cast<float>(theta * f));
    tiling.set_sign(static_cast<float>(sign));
    tiling.set_qw(static_cast<float>(rel[0]));
    double vv = rel[1] * rel[1] + rel[2] * rel[2] + rel[3] * rel[3];
    tiling.set_vv(static_cast<float>(vv));
    float vf[3] = {static_cast<float>(rel[1]), static_cast<float>(rel[2]), static_cast<float>(rel[3])};
    tiling.set_v(vf);

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    if (aivNum == 0) {
        return ge::GRAPH_FAILED;
    }

    // Work split over the cores.
    uint64_t total = static_cast<uint64_t>(n);
    uint64_t units = (total + UNIT_POINTS - 1) / UNIT_POINTS;
    uint64_t coreNum = aivNum < MAX_CORE_NUM ? aivNum : MAX_CORE_NUM;
    uint64_t coreCap = (total + MIN_CORE_POINTS - 1) / MIN_CORE_POINTS;
    coreNum = coreNum < units ? coreNum : units;
    coreNum = coreNum < coreCap ? coreNum : coreCap;
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t blockUnits = units / coreNum;
    uint64_t tailCoreNum = units % coreNum;
    uint64_t coreMax = (blockUnits + (tailCoreNum > 0 ? 1 : 0)) * UNIT_POINTS;

    // Tile: the fewest tiles of at most TILE_POINTS (and what fits in UB)
    // that cover the largest core range, each a multiple of TILE_ALIGN
    // points. The Sin API gets the space of one call over all 2 x tile
    // lanes.
    uint64_t cap = TILE_POINTS / TILE_ALIGN * TILE_ALIGN;
    while (cap > TILE_ALIGN && UbBytes(cap, SinTmp(cap)) > ubSize) {
        cap -= TILE_ALIGN;
    }
    if (cap == 0) {
        return ge::GRAPH_FAILED;
    }
    uint64_t tileNum = coreMax == 0 ? 1 : (coreMax + cap - 1) / cap;
    uint64_t tile = (coreMax + tileNum - 1) / tileNum;
    tile = (tile + TILE_ALIGN - 1) / TILE_ALIGN * TILE_ALIGN;
    if (tile == 0) {
        tile = TILE_ALIGN;
    }
    uint32_t maxTmp = SinTmp(tile);
    if (UbBytes(tile, maxTmp) > ubSize) {
        return ge::GRAPH_FAILED;
    }

    tiling.set_n(static_cast<uint32_t>(n));
    tiling.set_ndim(static_cast<uint32_t>(ndim));
    tiling.set_unitPoints(UNIT_POINTS);
    tiling.set_blockUnits(static_cast<uint32_t>(blockUnits));
    tiling.set_tailCoreNum(static_cast<uint32_t>(tailCoreNum));
    tiling.set_tilePoints(static_cast<uint32_t>(tile));
    tiling.set_sinTmpBytes(maxTmp);
    tiling.set_bufferNum(BUFFER_NUM);

    context->SetBlockDim(static_cast<uint32_t>(coreNum));
    context->SetTilingKey(1);
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
    const gert::Shape* pShape = context->GetInputShape(0);
    gert::Shape* outShape = context->GetOutputShape(0);
    if (pShape == nullptr || outShape == nullptr) {
        return GRAPH_FAILED;
    }
    *outShape = *pShape;
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class MotionCompensation : public OpDef {
public:
    explicit MotionCompensation(const char* name) : OpDef(name)
    {
        this->Input("points").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("timestamp").ParamType(REQUIRED).DataType({ge::DT_UINT64}).Format({ge::FORMAT_ND});
        this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("timestamp_min").Int();
        this->Attr("timestamp_max").Int();
        this->Attr("translation_min").ListFloat();
        this->Attr("translation_max").ListFloat();
        this->Attr("quaterniond_min").ListFloat();
        this->Attr("quaterniond_max").ListFloat();

        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(MotionCompensation);
}  // namespace ops
