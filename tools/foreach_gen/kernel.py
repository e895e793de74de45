"""The C++ sources of one foreach package: tiling header, host code, kernel.

One design for every member of the family (see README.md beside this file):
the tensors of the list(s) are split over all vector cores in units of
SPLIT_UNIT_BYTES (each unit inside one tensor), every core streams its
units through UB in 512 B aligned tiles with double-buffered queues, tails
move with DataCopyPad, and the per-operator body runs on each tile in the
compute type (float for bfloat16 and for the members that compute float16
in float32).
"""

TILING_HEADER = """\
// Tiling data of @OPTYPE@ (@FORMULA@), shared by the host tiling function
// and the kernel (GET_TILING_DATA).
//
// Work split: every tensor of the list is cut into split units of
// `unitLength` elements (the last unit of a tensor may be shorter); the
// units of all tensors, in list order, are dealt to the cores: every core
// takes `blockUnits` consecutive units and the first `tailCoreNum` cores
// one more. A core streams its units through UB in tiles of at most
// `tileLength` elements with `bufferNum` buffers per queue.
#ifndef @GUARD@
#define @GUARD@

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(@OPTYPE@TilingData)
TILING_DATA_FIELD_DEF(uint32_t, tensorNum);    // tensors in the list
TILING_DATA_FIELD_DEF(uint32_t, unitLength);   // elements per split unit
TILING_DATA_FIELD_DEF(uint32_t, blockUnits);   // units of a non-tail core
TILING_DATA_FIELD_DEF(uint32_t, tailCoreNum);  // cores that take one unit more
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per full UB tile
TILING_DATA_FIELD_DEF(uint32_t, bufferNum);    // buffers per queue (2 = double buffering)
TILING_DATA_FIELD_DEF(uint32_t, tmpBytes);     // temporary space of the math API (0: none)
TILING_DATA_FIELD_DEF(uint32_t, reserved);     // keeps the array 8-byte aligned
TILING_DATA_FIELD_DEF_ARR(uint64_t, 64, tensorLength);  // elements of each tensor
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(@OPTYPE@, @OPTYPE@TilingData)
}  // namespace optiling

#endif  // @GUARD@
"""

HOST = """\
// @OPTYPE@ host side: tiling function, shape inference and the OpDef.
//
// @FORMULA@, for every tensor i of the list (shared/ref/operators-l2.md,
// Foreach family).
//
// Tiling: the tensors are cut into split units of SPLIT_UNIT_BYTES (512 B
// keeps every core's GM range 512 B aligned inside its tensor); the units of
// all tensors are dealt to the vector cores in list order, the first
// `tailCoreNum` cores taking one unit more. Each core streams its range
// through UB in tiles of at most TILE_BYTES of the storage type, capped so
// that the queues (BUFFER_NUM buffers each), the float32 work tiles of the
// paths that compute in float32 and the math API's temporary space fit in
// UB; the tiles are evened out over the largest core range. Tiling keys
// select the dtype path of the kernel:
@KEYS_NOTE@
#include <cstdint>

#include "@NAME@_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
@EXTRA_INCLUDE@
namespace optiling {
namespace {
constexpr uint32_t MAX_TENSORS = 64;      // tensorLength entries of the tiling data
constexpr uint32_t LIST_INPUTS = @NIN@;       // input tensor lists
constexpr uint32_t QUEUE_NUM = @NQUEUE@;         // input queues and the output queue
constexpr uint32_t BLOCK_BYTES = 32;      // UB data block
constexpr uint32_t GM_ALIGN_BYTES = 512;  // preferred GM burst alignment
constexpr uint64_t UB_RESERVED_BYTES = 1024;  // kept free in UB

// One dtype path of the kernel.
struct Path {
    uint64_t key;
    uint32_t elemBytes;     // storage type
    uint32_t computeBytes;  // compute type
    bool viaFloat;          // casts to float32 work tiles and back
    uint32_t lengthScale;   // storage elements per tensor element
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
    uint64_t queueBytes = static_cast<uint64_t>(BUFFER_NUM) * QUEUE_NUM * path.elemBytes;
    uint64_t perElem = queueBytes + perElemBytes;
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

// The kernel path for the list's dtype (and the key's compute type).
bool PathOf(ge::DataType dtype, Path& path)
{
    switch (dtype) {
@PATH_CASES@
        default:
            return false;
    }
}

// The elements of every tensor of list input `irIndex`; false when the list
// is missing, empty, too long or holds a tensor of another dtype.
bool ListLengths(gert::TilingContext* context, size_t irIndex, ge::DataType dtype, uint64_t* lengths,
                 uint32_t& count)
{
    const gert::AnchorInstanceInfo* info = context->GetIrInputInstanceInfo(irIndex);
    if (info == nullptr || info->GetInstantiationNum() == 0 || info->GetInstantiationNum() > MAX_TENSORS) {
        return false;
    }
    count = static_cast<uint32_t>(info->GetInstantiationNum());
    for (uint32_t i = 0; i < count; ++i) {
        const gert::StorageShape* shape = context->GetDynamicInputShape(irIndex, i);
        const gert::CompileTimeTensorDesc* desc = context->GetDynamicInputDesc(irIndex, i);
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
}  // namespace

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::CompileTimeTensorDesc* first = context->GetDynamicInputDesc(@LIST0_IR@, 0);
    if (first == nullptr) {
        return ge::GRAPH_FAILED;
    }
    ge::DataType dtype = first->GetDataType();
    Path path;
    if (!PathOf(dtype, path)) {
        return ge::GRAPH_FAILED;
    }
    uint64_t lengths[MAX_TENSORS] = {0};
    uint32_t count = 0;
    if (!ListLengths(context, @LIST0_IR@, dtype, lengths, count)) {
        return ge::GRAPH_FAILED;
    }
@OTHER_LISTS@@EXTRA_CHECKS@
    for (uint32_t i = 0; i < count; ++i) {
        lengths[i] *= path.lengthScale;
    }
    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t aivNum = ascendcPlatform.GetCoreNumAiv();
    uint64_t ubSize = 0;
    ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

    // UB besides the queues: float32 work tiles (inputs and result) on the
    // float path, @AUX_NOTE@, and the math API's temporary space.
    uint64_t perElemBytes = path.viaFloat ? static_cast<uint64_t>(LIST_INPUTS + 1) * sizeof(float) : 0;
    uint64_t fixedBytes = 0;
    uint32_t tmpLive = 0;
    uint32_t tmpExtra = 0;
@TMP_CODE@
    perElemBytes += static_cast<uint64_t>(tmpLive) * path.computeBytes;
    fixedBytes += tmpExtra;

    ForeachPlan plan;
    if (aivNum == 0 ||
        !MakeForeachPlan(lengths, count, path, aivNum, ubSize, perElemBytes, fixedBytes, plan)) {
        return ge::GRAPH_FAILED;
    }
    uint64_t tmpBytes = static_cast<uint64_t>(tmpLive) * path.computeBytes * plan.tileLength + tmpExtra;
    tmpBytes = (tmpBytes + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;

    @OPTYPE@TilingData tiling;
    tiling.set_tensorNum(count);
    tiling.set_unitLength(plan.unitLength);
    tiling.set_blockUnits(plan.blockUnits);
    tiling.set_tailCoreNum(plan.tailCoreNum);
    tiling.set_tileLength(plan.tileLength);
    tiling.set_bufferNum(BUFFER_NUM);
    tiling.set_tmpBytes(static_cast<uint32_t>(tmpBytes));
    tiling.set_reserved(0);
    tiling.set_tensorLength(lengths);

    context->SetBlockDim(plan.coreNum);
    context->SetTilingKey(path.key);
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
@INFER_BODY@
}
}  // namespace ge

namespace ops {
class @OPTYPE@ : public OpDef {
public:
    explicit @OPTYPE@(const char* name) : OpDef(name)
    {
@OPDEF_PARAMS@
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(@OPTYPE@);
}  // namespace ops
"""

INFER_LIST = """\
    // y[i] has the shape of x[i].
    const gert::AnchorInstanceInfo* info = context->GetIrInputInstanceInfo(@LIST0_IR@);
    if (info == nullptr) {
        return GRAPH_FAILED;
    }
    for (size_t i = 0; i < info->GetInstantiationNum(); ++i) {
        const gert::Shape* xShape = context->GetDynamicInputShape(@LIST0_IR@, i);
        gert::Shape* yShape = context->GetOutputShape(i);
        if (xShape == nullptr || yShape == nullptr) {
            return GRAPH_FAILED;
        }
        *yShape = *xShape;
    }
    return GRAPH_SUCCESS;"""

INFER_NONE = """\
    // In place: x is both input and output; there is no output to shape.
    (void)context;
    return GRAPH_SUCCESS;"""

KERNEL = """\
// @OPTYPE@ kernel: @FORMULA@, for every tensor i of the list
// (shared/ref/operators-l2.md, Foreach family).
//
// The tensors' split units are dealt to the vector cores in list order (see
// the tiling header); a core walks the tensors its units touch, reading each
// tensor's address from the list descriptor (word 0: the byte offset of the
// address table, guide 6.2.6.2), and streams its part through UB in tiles
// with double-buffered queues, so MTE2 (copy in), V (compute) and MTE3
// (copy out) overlap across tiles and tensors. Whole 32 B blocks move with
// DataCopy, a tail with DataCopyPad.
@PATH_NOTE@
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

// Address of tensor `index` of a tensor list whose address table starts at
// word `table` of the descriptor.
__aicore__ inline uint64_t ListAddress(GlobalTensor<uint64_t>& desc, uint64_t table, uint32_t index)
{
    return desc.GetValue(table + index);
}

// A scalar input's value in the compute type (16-bit floats through float).
template <typename C, typename S>
__aicore__ inline C ScalarAs(S value)
{
    if constexpr (IsSameType<S, half>::value || IsSameType<S, bfloat16_t>::value) {
        return static_cast<C>(static_cast<float>(value));
    } else {
        return static_cast<C>(value);
    }
}

// T: storage type of the tensors; C: compute type (T, or float when the
// path casts); S: storage type of the scalar input (unused without one).
template <typename T, typename C, typename S>
class Kernel@OPTYPE@ {
public:
    static constexpr bool VIA_FLOAT = !IsSameType<T, C>::value;

    __aicore__ inline Kernel@OPTYPE@() {}

    template <typename TilingData>
    __aicore__ inline void Init(@INIT_PARAMS@, const TilingData& tiling, TPipe* pipe)
    {
        tensorNum = tiling.tensorNum;
        unitLength = tiling.unitLength;
        tileLength = tiling.tileLength;
        tensorLength = tiling.tensorLength;
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t bigUnits = static_cast<uint64_t>(tiling.blockUnits) + 1;
        if (blockIdx < tiling.tailCoreNum) {
            startUnit = blockIdx * bigUnits;
            endUnit = startUnit + bigUnits;
        } else {
            startUnit = tiling.tailCoreNum * bigUnits + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            endUnit = startUnit + tiling.blockUnits;
        }
@INIT_LISTS@
@INIT_SCALAR@
@INIT_QUEUES@
        if constexpr (VIA_FLOAT) {
@INIT_WORK@
        }
@INIT_EXTRA@
    }

    __aicore__ inline void Process()
    {
        uint64_t unitBase = 0;
        for (uint32_t t = 0; t < tensorNum && unitBase < endUnit; ++t) {
            uint64_t length = tensorLength[t];
            uint64_t units = (length + unitLength - 1) / unitLength;
            uint64_t lo = startUnit > unitBase ? startUnit : unitBase;
            uint64_t hi = endUnit < unitBase + units ? endUnit : unitBase + units;
            if (lo < hi) {
                uint64_t begin = (lo - unitBase) * unitLength;
                uint64_t end = (hi - unitBase) * unitLength;
                if (end > length) {
                    end = length;
                }
                SetTensor(t);
                for (uint64_t offset = begin; offset < end; offset += tileLength) {
                    uint32_t count = static_cast<uint32_t>(end - offset < tileLength ? end - offset : tileLength);
                    CopyIn(offset, count);
                    Compute(count);
                    CopyOut(offset, count);
                }
            }
            unitBase += units;
        }
    }

private:
    __aicore__ inline void SetTensor(uint32_t t)
    {
@SET_TENSOR@
    }

    __aicore__ inline void CopyIn(uint64_t offset, uint32_t count)
    {
@COPY_IN@
    }

    __aicore__ inline void Compute(uint32_t n)
    {
@COMPUTE@
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> yLocal = outQueue.DeQue<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], yLocal, count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[offset], yLocal, copyParams);
        }
        outQueue.FreeTensor(yLocal);
    }

    // The operator's formula on n elements in the compute type.
    __aicore__ inline void Body(@BODY_PARAMS@, uint32_t n)
    {
@BODY@
    }
@EXTRA_METHODS@
private:
@MEMBERS@
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    GlobalTensor<T> yGm;
    const uint64_t* tensorLength = nullptr;
    uint64_t startUnit = 0;
    uint64_t endUnit = 0;
    uint32_t tensorNum = 0;
    uint32_t unitLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void @NAME@(@ENTRY_PARAMS@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
@DISPATCH@
}
"""

# foreach_copy and foreach_zero_inplace move bits only: the kernel sees
# every dtype as bytes (copy) or 16-bit words (zero), the host scales the
# tensor lengths accordingly.
KERNEL_MOVE_HEAD = """\
// @OPTYPE@ kernel: @FORMULA@, for every tensor i of the list
// (shared/ref/operators-l2.md, Foreach family).
//
// The tensors' split units are dealt to the vector cores in list order (see
// the tiling header); a core walks the tensors its units touch, reading each
// tensor's address from the list descriptor (word 0: the byte offset of the
// address table, guide 6.2.6.2).
@PATH_NOTE@
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;  // queue depth; buffers per queue = tiling bufferNum
constexpr uint32_t BLOCK_BYTES = 32;

// Address of tensor `index` of a tensor list whose address table starts at
// word `table` of the descriptor.
__aicore__ inline uint64_t ListAddress(GlobalTensor<uint64_t>& desc, uint64_t table, uint32_t index)
{
    return desc.GetValue(table + index);
}
"""

KERNEL_COPY = KERNEL_MOVE_HEAD + """
// T: the unit the tensors are moved in (bytes; the host scales the lengths).
template <typename T>
class Kernel@OPTYPE@ {
public:
    __aicore__ inline Kernel@OPTYPE@() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TilingData& tiling, TPipe* pipe)
    {
        tensorNum = tiling.tensorNum;
        unitLength = tiling.unitLength;
        tileLength = tiling.tileLength;
        tensorLength = tiling.tensorLength;
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t bigUnits = static_cast<uint64_t>(tiling.blockUnits) + 1;
        if (blockIdx < tiling.tailCoreNum) {
            startUnit = blockIdx * bigUnits;
            endUnit = startUnit + bigUnits;
        } else {
            startUnit = tiling.tailCoreNum * bigUnits + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            endUnit = startUnit + tiling.blockUnits;
        }
        xDesc.SetGlobalBuffer((__gm__ uint64_t*)x);
        xTable = xDesc.GetValue(0) / sizeof(uint64_t);
        yDesc.SetGlobalBuffer((__gm__ uint64_t*)y);
        yTable = yDesc.GetValue(0) / sizeof(uint64_t);
        pipe->InitBuffer(queue, tiling.bufferNum, tileLength * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        uint64_t unitBase = 0;
        for (uint32_t t = 0; t < tensorNum && unitBase < endUnit; ++t) {
            uint64_t length = tensorLength[t];
            uint64_t units = (length + unitLength - 1) / unitLength;
            uint64_t lo = startUnit > unitBase ? startUnit : unitBase;
            uint64_t hi = endUnit < unitBase + units ? endUnit : unitBase + units;
            if (lo < hi) {
                uint64_t begin = (lo - unitBase) * unitLength;
                uint64_t end = (hi - unitBase) * unitLength;
                if (end > length) {
                    end = length;
                }
                xGm.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(xDesc, xTable, t), length);
                yGm.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(yDesc, yTable, t), length);
                for (uint64_t offset = begin; offset < end; offset += tileLength) {
                    uint32_t count = static_cast<uint32_t>(end - offset < tileLength ? end - offset : tileLength);
                    CopyIn(offset, count);
                    CopyOut(offset, count);
                }
            }
            unitBase += units;
        }
    }

private:
    // GM -> UB; the bound queue hands the tile from MTE2 to MTE3 directly.
    __aicore__ inline void CopyIn(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> local = queue.AllocTensor<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(local, xGm[offset], count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
            DataCopyPad(local, xGm[offset], copyParams, padParams);
        }
        queue.EnQue(local);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> local = queue.DeQue<T>();
        if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
            DataCopy(yGm[offset], local, count);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[offset], local, copyParams);
        }
        queue.FreeTensor(local);
    }

private:
    TQueBind<TPosition::VECIN, TPosition::VECOUT, BUFFER_NUM> queue;
    GlobalTensor<uint64_t> xDesc;
    GlobalTensor<uint64_t> yDesc;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    const uint64_t* tensorLength = nullptr;
    uint64_t xTable = 0;
    uint64_t yTable = 0;
    uint64_t startUnit = 0;
    uint64_t endUnit = 0;
    uint32_t tensorNum = 0;
    uint32_t unitLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void @NAME@(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        Kernel@OPTYPE@<uint8_t> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
    }
}
"""

KERNEL_ZERO = KERNEL_MOVE_HEAD + """
// T: the unit the tensors are cleared in (16-bit words; the host scales
// the lengths).
template <typename T>
class Kernel@OPTYPE@ {
public:
    __aicore__ inline Kernel@OPTYPE@() {}

    template <typename TilingData>
    __aicore__ inline void Init(GM_ADDR x, const TilingData& tiling, TPipe* pipe)
    {
        tensorNum = tiling.tensorNum;
        unitLength = tiling.unitLength;
        tileLength = tiling.tileLength;
        tensorLength = tiling.tensorLength;
        uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        uint64_t bigUnits = static_cast<uint64_t>(tiling.blockUnits) + 1;
        if (blockIdx < tiling.tailCoreNum) {
            startUnit = blockIdx * bigUnits;
            endUnit = startUnit + bigUnits;
        } else {
            startUnit = tiling.tailCoreNum * bigUnits + (blockIdx - tiling.tailCoreNum) * tiling.blockUnits;
            endUnit = startUnit + tiling.blockUnits;
        }
        xDesc.SetGlobalBuffer((__gm__ uint64_t*)x);
        xTable = xDesc.GetValue(0) / sizeof(uint64_t);
        pipe->InitBuffer(queue, 1, tileLength * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        if (startUnit >= endUnit) {
            return;
        }
        // One tile of zeros, handed from V to MTE3 once and stored everywhere.
        LocalTensor<T> zeros = queue.AllocTensor<T>();
        Duplicate(zeros, static_cast<T>(0), tileLength);
        queue.EnQue(zeros);
        zeros = queue.DeQue<T>();
        uint64_t unitBase = 0;
        for (uint32_t t = 0; t < tensorNum && unitBase < endUnit; ++t) {
            uint64_t length = tensorLength[t];
            uint64_t units = (length + unitLength - 1) / unitLength;
            uint64_t lo = startUnit > unitBase ? startUnit : unitBase;
            uint64_t hi = endUnit < unitBase + units ? endUnit : unitBase + units;
            if (lo < hi) {
                uint64_t begin = (lo - unitBase) * unitLength;
                uint64_t end = (hi - unitBase) * unitLength;
                if (end > length) {
                    end = length;
                }
                xGm.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(xDesc, xTable, t), length);
                for (uint64_t offset = begin; offset < end; offset += tileLength) {
                    uint32_t count = static_cast<uint32_t>(end - offset < tileLength ? end - offset : tileLength);
                    if ((count * sizeof(T)) % BLOCK_BYTES == 0) {
                        DataCopy(xGm[offset], zeros, count);
                    } else {
                        DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
                        DataCopyPad(xGm[offset], zeros, copyParams);
                    }
                }
            }
            unitBase += units;
        }
        queue.FreeTensor(zeros);
    }

private:
    TQue<QuePosition::VECOUT, 1> queue;
    GlobalTensor<uint64_t> xDesc;
    GlobalTensor<T> xGm;
    const uint64_t* tensorLength = nullptr;
    uint64_t xTable = 0;
    uint64_t startUnit = 0;
    uint64_t endUnit = 0;
    uint32_t tensorNum = 0;
    uint32_t unitLength = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void @NAME@(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    if (TILING_KEY_IS(1)) {
        Kernel@OPTYPE@<uint16_t> op;
        op.Init(x, tilingData, &pipe);
        op.Process();
    }
}
"""
