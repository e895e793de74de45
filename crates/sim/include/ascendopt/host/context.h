// ascendopt host (op_host) emulation: the runtime contexts a tiling, InferShape
// or InferDataType function receives (gert::TilingContext & co.), shapes,
// tensor descriptions and attributes.
//
// The simulator's host_entry.cpp fills a TilingContext from the worker's
// request (shapes, dtypes, attributes matched to the OpDef, platform). The
// members after "state" below are that plumbing, not CANN API.
//
// Clean-room, from the AscendC guide 2.10.2.5 (Host tiling) and 6.4.
#ifndef ASCENDOPT_HOST_CONTEXT_H
#define ASCENDOPT_HOST_CONTEXT_H

#include "../host_abi.h"
#include "core.h"

namespace fe {
// What GetPlatformInfo() hands to platform_ascendc::PlatformAscendC.
// The on-chip memories a tiling asks PlatFormInfos::GetLocalMemSize about
// (cann-ops tilings call it with UB, as platform_ascendc's GetCoreMemSize).
enum class LocalMemType { L0_A = 0, L0_B, L0_C, L1, L2, UB, HBM, RESERVED };

class PlatFormInfos {
 public:
  // The cores a vector operator runs on: the same count as
  // platform_ascendc::PlatformAscendC::GetCoreNum (the AIV cores of the
  // A2's separated architecture, guide 6.4.2.1).
  uint32_t GetCoreNum() const { return info_.core_num_aiv; }
  // A memory's size in bytes, the platform's figure (as GetCoreMemSize
  // before any ReserveLocalMemory); 0 for one the platform does not give.
  void GetLocalMemSize(const LocalMemType& mem_type, uint64_t& size) const {
    switch (mem_type) {
      case LocalMemType::L0_A: size = info_.l0a_size; return;
      case LocalMemType::L0_B: size = info_.l0b_size; return;
      case LocalMemType::L0_C: size = info_.l0c_size; return;
      case LocalMemType::L1: size = info_.l1_size; return;
      case LocalMemType::L2: size = info_.l2_size; return;
      case LocalMemType::UB: size = info_.ub_size; return;
      case LocalMemType::HBM: size = info_.hbm_size; return;
      default: size = 0; return;
    }
  }
  AscHostPlatform info_;
};
}  // namespace fe

namespace gert {

// A tensor shape of up to kMaxDimNum dimensions.
class Shape {
 public:
  static constexpr size_t kMaxDimNum = 25;

  Shape() : dim_num_(0), dims_{} {}
  Shape(std::initializer_list<int64_t> dims) : dim_num_(0), dims_{} {
    for (int64_t d : dims) AppendDim(d);
  }

  size_t GetDimNum() const { return dim_num_; }
  void SetDimNum(size_t num) {
    if (num > kMaxDimNum) ::ascendopt::host::fail("Shape::SetDimNum(%zu): at most %zu dimensions", num, kMaxDimNum);
    for (size_t i = dim_num_; i < num; ++i) dims_[i] = 0;
    dim_num_ = num;
  }
  int64_t GetDim(size_t idx) const {
    check(idx, "GetDim");
    return dims_[idx];
  }
  void SetDim(size_t idx, int64_t value) {
    check(idx, "SetDim");
    dims_[idx] = value;
  }
  Shape& AppendDim(int64_t value) {
    if (dim_num_ >= kMaxDimNum) ::ascendopt::host::fail("Shape::AppendDim: at most %zu dimensions", kMaxDimNum);
    dims_[dim_num_++] = value;
    return *this;
  }
  // Number of elements; 1 for a scalar (no dimension).
  int64_t GetShapeSize() const {
    int64_t n = 1;
    for (size_t i = 0; i < dim_num_; ++i) n *= dims_[i];
    return n;
  }
  bool IsScalar() const { return dim_num_ == 0; }
  int64_t operator[](size_t idx) const { return GetDim(idx); }
  int64_t& operator[](size_t idx) {
    check(idx, "operator[]");
    return dims_[idx];
  }
  bool operator==(const Shape& o) const {
    if (dim_num_ != o.dim_num_) return false;
    for (size_t i = 0; i < dim_num_; ++i)
      if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  void check(size_t idx, const char* what) const {
    if (idx >= dim_num_)
      ::ascendopt::host::fail("Shape::%s(%zu): the shape has %zu dimensions", what, idx, dim_num_);
  }
  size_t dim_num_;
  int64_t dims_[kMaxDimNum];
};

// Origin and storage shapes of a tensor (the same for FORMAT_ND).
class StorageShape {
 public:
  StorageShape() = default;
  StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
      : origin_(origin), storage_(storage) {}
  const Shape& GetOriginShape() const { return origin_; }
  const Shape& GetStorageShape() const { return storage_; }
  Shape& MutableOriginShape() { return origin_; }
  Shape& MutableStorageShape() { return storage_; }
  // Equal when both shapes are.
  bool operator==(const StorageShape& o) const { return origin_ == o.origin_ && storage_ == o.storage_; }
  bool operator!=(const StorageShape& o) const { return !(*this == o); }

  Shape origin_;
  Shape storage_;
};

// Origin and storage formats of a tensor.
class StorageFormat {
 public:
  StorageFormat() = default;
  StorageFormat(ge::Format origin, ge::Format storage) : origin_(origin), storage_(storage) {}
  ge::Format GetOriginFormat() const { return origin_; }
  ge::Format GetStorageFormat() const { return storage_; }
  void SetOriginFormat(ge::Format f) { origin_ = f; }
  void SetStorageFormat(ge::Format f) { storage_ = f; }

  ge::Format origin_ = ge::FORMAT_ND;
  ge::Format storage_ = ge::FORMAT_ND;
};

// The compile-time description of an input or output (GetInputDesc).
class CompileTimeTensorDesc {
 public:
  ge::DataType GetDataType() const { return dtype_; }
  const StorageFormat& GetFormat() const { return format_; }
  ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
  ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }

  ge::DataType dtype_ = ge::DT_UNDEFINED;
  StorageFormat format_;
};

// A runtime tensor as the tiling sees it: shape, dtype, format, no data.
class Tensor {
 public:
  int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
  ge::DataType GetDataType() const { return dtype_; }
  const StorageShape& GetShape() const { return shape_; }
  const Shape& GetStorageShape() const { return shape_.GetStorageShape(); }
  const Shape& GetOriginShape() const { return shape_.GetOriginShape(); }
  const StorageFormat& GetFormat() const { return format_; }
  ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
  ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }
  // The tensor's values, for the inputs whose values the tiling reads
  // (ValueDepend in the OpDef, TilingInputsDataDependency); the simulator
  // gives them for the inputs op.toml marks `value_depend = true`.
  template <class T>
  const T* GetData() const {
    return static_cast<const T*>(values("GetData"));
  }
  const void* GetAddr() const { return values("GetAddr"); }
  // Bytes of the values.
  size_t GetSize() const { return (size_t)data_len_; }

  // ---- state (filled by host_entry.cpp) ----
  const void* values(const char* what) const {
    if (data_ == nullptr)
      ::ascendopt::host::fail(
          "Tensor::%s of '%s': the request gives the tiling no values for it (the simulator passes the values of "
          "value-depend inputs: mark it `value_depend = true` in op.toml)",
          what, name_);
    return data_;
  }
  StorageShape shape_;
  ge::DataType dtype_ = ge::DT_UNDEFINED;
  StorageFormat format_;
  const void* data_ = nullptr;
  uint64_t data_len_ = 0;
  const char* name_ = "";
};

// Where the tensors of one OpDef parameter are among a context's inputs
// (GetIrInputInstanceInfo): a tensor list has several, an absent optional
// input none.
class AnchorInstanceInfo {
 public:
  AnchorInstanceInfo() = default;
  AnchorInstanceInfo(uint32_t start, uint32_t num) : start_(start), num_(num) {}
  size_t GetInstanceStart() const { return start_; }
  size_t GetInstantiationNum() const { return num_; }

  uint32_t start_ = 0;
  uint32_t num_ = 0;
};

// A list attribute's values.
class ContinuousVector {
 public:
  size_t GetSize() const { return size_; }
  size_t GetCapacity() const { return size_; }
  const void* GetData() const { return data_; }

  const void* data_ = nullptr;
  size_t size_ = 0;
};

template <class T>
class TypedContinuousVector : public ContinuousVector {
 public:
  const T* GetData() const { return static_cast<const T*>(data_); }
};
}  // namespace gert

namespace ascendopt {
namespace host {
enum class AttrKind : uint8_t { None = 0, Int, Float, Bool, Str, ListInt, ListFloat, ListBool };

// One attribute value as the tiling function sees it.
struct AttrSlot {
  const char* name = "";
  AttrKind kind = AttrKind::None;
  int64_t i = 0;
  float f = 0.0f;
  bool b = false;
  const char* s = "";
  gert::TypedContinuousVector<int64_t> list_i;
  gert::TypedContinuousVector<float> list_f;
  gert::TypedContinuousVector<bool> list_b;
};

const char* attr_kind_name(AttrKind k);
[[noreturn]] void attr_kind_error(const AttrSlot& slot, size_t index, const char* wanted);
// The attribute's bytes as CANN's RuntimeAttrs stores them (an Int as
// int64_t, a Float as float, a Bool as one byte, a String as its chars, a
// list as a ContinuousVector: capacity and size as size_t, then the
// elements), zero-padded. GetAttrPointer<T> does not check T against the
// attribute in CANN: a scalar view of another kind reads these bytes.
const void* attr_raw(const AttrSlot& slot);

// GetAttrPointer<T>: which C++ types view which attribute kinds.
template <class T>
struct AttrAccess {
  template <class U = T>
  static const T* get(const AttrSlot&, size_t) {
    static_assert(always_false<U>,
                  "not supported by the ascendopt simulator: GetAttrPointer<T> with this T "
                  "(use int64_t, float, bool, char, gert::ContinuousVector or "
                  "gert::TypedContinuousVector<int64_t|float|bool>)");
    return nullptr;
  }
};
// GE stores Int attributes as int64_t; narrower views read its low bytes
// (little-endian), as they do in CANN. A scalar view of an attribute of
// another kind reads its stored bytes (attr_raw), unchecked as in CANN; a
// list view of another kind fails (its bytes would be no list here).
#define ASCENDOPT_ATTR_ACCESS(T, KIND, FIELD)                               \
  template <>                                                              \
  struct AttrAccess<T> {                                                   \
    static const T* get(const AttrSlot& s, size_t index) {                 \
      if (s.kind != AttrKind::KIND) attr_kind_error(s, index, #T);         \
      return reinterpret_cast<const T*>(&s.FIELD);                         \
    }                                                                      \
  };
#define ASCENDOPT_ATTR_SCALAR_ACCESS(T, KIND, FIELD)                        \
  template <>                                                              \
  struct AttrAccess<T> {                                                   \
    static const T* get(const AttrSlot& s, size_t) {                       \
      if (s.kind != AttrKind::KIND) return static_cast<const T*>(attr_raw(s)); \
      return reinterpret_cast<const T*>(&s.FIELD);                         \
    }                                                                      \
  };
ASCENDOPT_ATTR_SCALAR_ACCESS(int64_t, Int, i)
ASCENDOPT_ATTR_SCALAR_ACCESS(uint64_t, Int, i)
ASCENDOPT_ATTR_SCALAR_ACCESS(int32_t, Int, i)
ASCENDOPT_ATTR_SCALAR_ACCESS(uint32_t, Int, i)
ASCENDOPT_ATTR_SCALAR_ACCESS(float, Float, f)
ASCENDOPT_ATTR_SCALAR_ACCESS(bool, Bool, b)
#undef ASCENDOPT_ATTR_SCALAR_ACCESS
ASCENDOPT_ATTR_ACCESS(gert::TypedContinuousVector<int64_t>, ListInt, list_i)
ASCENDOPT_ATTR_ACCESS(gert::TypedContinuousVector<float>, ListFloat, list_f)
ASCENDOPT_ATTR_ACCESS(gert::TypedContinuousVector<bool>, ListBool, list_b)
#undef ASCENDOPT_ATTR_ACCESS
template <>
struct AttrAccess<char> {
  static const char* get(const AttrSlot& s, size_t) {
    if (s.kind != AttrKind::Str) return static_cast<const char*>(attr_raw(s));
    return s.s;
  }
};
template <>
struct AttrAccess<gert::ContinuousVector> {
  static const gert::ContinuousVector* get(const AttrSlot& s, size_t index) {
    switch (s.kind) {
      case AttrKind::ListInt:
        return &s.list_i;
      case AttrKind::ListFloat:
        return &s.list_f;
      case AttrKind::ListBool:
        return &s.list_b;
      default:
        attr_kind_error(s, index, "gert::ContinuousVector");
    }
  }
};
}  // namespace host
}  // namespace ascendopt

namespace gert {

// The operator's attributes, in OpDef Attr() declaration order.
class RuntimeAttrs {
 public:
  template <class T>
  const T* GetAttrPointer(size_t index) const {
    return ::ascendopt::host::AttrAccess<T>::get(slot(index), index);
  }
  const int64_t* GetInt(size_t index) const { return GetAttrPointer<int64_t>(index); }
  const float* GetFloat(size_t index) const { return GetAttrPointer<float>(index); }
  const bool* GetBool(size_t index) const { return GetAttrPointer<bool>(index); }
  const char* GetStr(size_t index) const { return GetAttrPointer<char>(index); }
  const TypedContinuousVector<int64_t>* GetListInt(size_t index) const {
    return GetAttrPointer<TypedContinuousVector<int64_t>>(index);
  }
  const TypedContinuousVector<float>* GetListFloat(size_t index) const {
    return GetAttrPointer<TypedContinuousVector<float>>(index);
  }
  const TypedContinuousVector<bool>* GetListBool(size_t index) const {
    return GetAttrPointer<TypedContinuousVector<bool>>(index);
  }
  size_t GetAttrNum() const { return n_; }
  ASCENDOPT_HOST_UNSUPPORTED(GetListListInt, "RuntimeAttrs::GetListListInt")

  // ---- state (filled by host_entry.cpp) ----
  const ::ascendopt::host::AttrSlot& slot(size_t index) const {
    if (index >= n_)
      ::ascendopt::host::fail("GetAttrs()->Get...(%zu): OpDef %s declares %zu attribute(s)", index, op_, n_);
    return slots_[index];
  }
  const ::ascendopt::host::AttrSlot* slots_ = nullptr;
  size_t n_ = 0;
  const char* op_ = "";
};

// The raw tiling data buffer (GetRawTilingData).
class TilingData {
 public:
  void* GetData() { return data_; }
  const void* GetData() const { return data_; }
  size_t GetCapacity() const { return capacity_; }
  size_t GetDataSize() const { return size_; }
  void SetDataSize(size_t size) {
    if (size > capacity_)
      ::ascendopt::host::fail("TilingData::SetDataSize(%zu): the tiling buffer holds %zu bytes", size, capacity_);
    size_ = size;
  }
  // Appends the bytes of `data` after the current data size.
  template <class T>
  ge::graphStatus Append(const T& data) {
    if (size_ + sizeof(T) > capacity_) return ge::GRAPH_FAILED;
    memcpy(static_cast<uint8_t*>(data_) + size_, &data, sizeof(T));
    size_ += sizeof(T);
    return ge::GRAPH_SUCCESS;
  }

  void* data_ = nullptr;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

// Tensors of one side (inputs or outputs) of a context: the tensors in
// parameter order, and where each OpDef parameter's tensors are.
struct AscendoptTensors {
  const Tensor& at(size_t index, const char* what) const {
    if (index >= n_)
      ::ascendopt::host::fail("%s(%zu): the operator has %zu %s", what, index, n_, side_);
    return tensors_[index];
  }
  // The instances of OpDef parameter `ir`; fails past the OpDef's
  // parameters.
  const AnchorInstanceInfo& param(size_t ir, const char* what) const {
    if (ir >= n_params_)
      ::ascendopt::host::fail("%s(%zu): the OpDef declares %zu %s", what, ir, n_params_, side_);
    return params_[ir];
  }
  // Tensor `relative` of parameter `ir`, or null when it has fewer.
  const Tensor* instance(size_t ir, size_t relative, const char* what) const {
    const AnchorInstanceInfo& p = param(ir, what);
    return relative < p.num_ ? &tensors_[p.start_ + relative] : nullptr;
  }
  size_t instance_index(size_t ir, size_t relative, const char* what) const {
    const AnchorInstanceInfo& p = param(ir, what);
    return relative < p.num_ ? p.start_ + relative : (size_t)-1;
  }
  Tensor* tensors_ = nullptr;
  CompileTimeTensorDesc* descs_ = nullptr;
  size_t n_ = 0;
  const char* side_ = "inputs";
  const AnchorInstanceInfo* params_ = nullptr;
  size_t n_params_ = 0;
};

// The node a context belongs to, as GE describes it (name, type, how many
// tensors it has: instances, and parameters of the OpDef).
class ComputeNodeInfo {
 public:
  const char* GetNodeName() const { return node_type_; }
  const char* GetNodeType() const { return node_type_; }
  size_t GetInputsNum() const { return inputs_; }
  size_t GetOutputsNum() const { return outputs_; }
  size_t GetIrInputsNum() const { return ir_inputs_; }
  size_t GetIrOutputsNum() const { return ir_outputs_; }
  const RuntimeAttrs* GetAttrs() const { return attrs_; }

  // ---- state (filled by the context that hands it out) ----
  const char* node_type_ = "";
  size_t inputs_ = 0;
  size_t outputs_ = 0;
  size_t ir_inputs_ = 0;
  size_t ir_outputs_ = 0;
  const RuntimeAttrs* attrs_ = nullptr;
};

// What a tiling function reads and sets.
class TilingContext {
 public:
  const StorageShape* GetInputShape(size_t index) const { return &inputs_.at(index, "GetInputShape").shape_; }
  const StorageShape* GetOutputShape(size_t index) const { return &outputs_.at(index, "GetOutputShape").shape_; }
  // By OpDef index (the index of Input() in the prototype): an optional
  // input the launch leaves out is null (guide 2.10.3.2).
  const StorageShape* GetOptionalInputShape(size_t ir_index) const {
    const Tensor* t = inputs_.instance(ir_index, 0, "GetOptionalInputShape");
    return t != nullptr ? &t->shape_ : nullptr;
  }
  const Tensor* GetInputTensor(size_t index) const { return &inputs_.at(index, "GetInputTensor"); }
  const Tensor* GetOutputTensor(size_t index) const { return &outputs_.at(index, "GetOutputTensor"); }
  const Tensor* GetOptionalInputTensor(size_t ir_index) const {
    return inputs_.instance(ir_index, 0, "GetOptionalInputTensor");
  }
  const CompileTimeTensorDesc* GetInputDesc(size_t index) const {
    inputs_.at(index, "GetInputDesc");
    return &inputs_.descs_[index];
  }
  const CompileTimeTensorDesc* GetOutputDesc(size_t index) const {
    outputs_.at(index, "GetOutputDesc");
    return &outputs_.descs_[index];
  }
  const CompileTimeTensorDesc* GetOptionalInputDesc(size_t ir_index) const {
    size_t i = inputs_.instance_index(ir_index, 0, "GetOptionalInputDesc");
    return i != (size_t)-1 ? &inputs_.descs_[i] : nullptr;
  }
  // A tensor list (DYNAMIC input) by OpDef index and position in the list;
  // null past the list's end (guide 2.10.3.2).
  const StorageShape* GetDynamicInputShape(size_t ir_index, size_t relative_index) const {
    const Tensor* t = inputs_.instance(ir_index, relative_index, "GetDynamicInputShape");
    return t != nullptr ? &t->shape_ : nullptr;
  }
  const Tensor* GetDynamicInputTensor(size_t ir_index, size_t relative_index) const {
    return inputs_.instance(ir_index, relative_index, "GetDynamicInputTensor");
  }
  const CompileTimeTensorDesc* GetDynamicInputDesc(size_t ir_index, size_t relative_index) const {
    size_t i = inputs_.instance_index(ir_index, relative_index, "GetDynamicInputDesc");
    return i != (size_t)-1 ? &inputs_.descs_[i] : nullptr;
  }
  const StorageShape* GetDynamicOutputShape(size_t ir_index, size_t relative_index) const {
    const Tensor* t = outputs_.instance(ir_index, relative_index, "GetDynamicOutputShape");
    return t != nullptr ? &t->shape_ : nullptr;
  }
  const CompileTimeTensorDesc* GetDynamicOutputDesc(size_t ir_index, size_t relative_index) const {
    size_t i = outputs_.instance_index(ir_index, relative_index, "GetDynamicOutputDesc");
    return i != (size_t)-1 ? &outputs_.descs_[i] : nullptr;
  }
  const AnchorInstanceInfo* GetIrInputInstanceInfo(size_t ir_index) const {
    return &inputs_.param(ir_index, "GetIrInputInstanceInfo");
  }
  const AnchorInstanceInfo* GetIrOutputInstanceInfo(size_t ir_index) const {
    return &outputs_.param(ir_index, "GetIrOutputInstanceInfo");
  }
  size_t GetComputeNodeInputNum() const { return inputs_.n_; }
  size_t GetComputeNodeOutputNum() const { return outputs_.n_; }
  const RuntimeAttrs* GetAttrs() const { return &attrs_; }
  fe::PlatFormInfos* GetPlatformInfo() const { return platform_; }
  const char* GetNodeName() const { return node_type_; }
  const char* GetNodeType() const { return node_type_; }
  const ComputeNodeInfo* GetComputeNodeInfo() const {
    node_info_.node_type_ = node_type_;
    node_info_.inputs_ = inputs_.n_;
    node_info_.outputs_ = outputs_.n_;
    node_info_.ir_inputs_ = inputs_.n_params_;
    node_info_.ir_outputs_ = outputs_.n_params_;
    node_info_.attrs_ = &attrs_;
    return &node_info_;
  }

  ge::graphStatus SetBlockDim(uint32_t block_dim) {
    block_dim_ = block_dim;
    return ge::GRAPH_SUCCESS;
  }
  uint32_t GetBlockDim() const { return block_dim_; }
  ge::graphStatus SetTilingKey(uint64_t key) {
    tiling_key_ = key;
    return ge::GRAPH_SUCCESS;
  }
  uint64_t GetTilingKey() const { return tiling_key_; }
  // Batch scheduling of all blocks at once; the simulator runs every block
  // anyway, so the mode changes nothing.
  ge::graphStatus SetScheduleMode(uint32_t mode) {
    schedule_mode_ = mode;
    return ge::GRAPH_SUCCESS;
  }
  uint32_t GetScheduleMode() const { return schedule_mode_; }
  // Outputs are poisoned, never cleared, by the simulator; see InitValue.
  ge::graphStatus SetNeedAtomic(bool atomic) {
    need_atomic_ = atomic;
    return ge::GRAPH_SUCCESS;
  }
  bool NeedAtomic() const { return need_atomic_; }
  int32_t GetDeterministic() const { return 0; }

  // The compile info the op type's TilingParse function filled
  // (IMPL_OP_OPTILING(...).TilingParse<T>); null when it registers none.
  const void* GetCompileInfo() const { return compile_info_; }
  template <class T>
  const T* GetCompileInfo() const {
    return static_cast<const T*>(compile_info_);
  }

  TilingData* GetRawTilingData() { return &raw_tiling_; }
  // Standard-C++ tiling structs: the struct lives in the raw buffer, whose
  // data size becomes sizeof(T).
  template <class T>
  T* GetTilingData() {
    if (sizeof(T) > raw_tiling_.capacity_)
      ::ascendopt::host::fail("GetTilingData<T>(): T is %zu bytes, the tiling buffer holds %zu", sizeof(T),
                              raw_tiling_.capacity_);
    raw_tiling_.size_ = sizeof(T);
    return static_cast<T*>(raw_tiling_.data_);
  }
  size_t* GetWorkspaceSizes(size_t num) {
    if (num > ASC_HOST_MAX_WORKSPACES)
      ::ascendopt::host::fail("GetWorkspaceSizes(%zu): the simulator supports at most %d workspaces", num,
                              ASC_HOST_MAX_WORKSPACES);
    if (num > n_workspaces_) n_workspaces_ = num;
    return workspaces_;
  }
  size_t GetWorkspaceNum() const { return n_workspaces_; }

  // ---- state (filled by host_entry.cpp) ----
  AscendoptTensors inputs_;
  AscendoptTensors outputs_;
  RuntimeAttrs attrs_;
  fe::PlatFormInfos* platform_ = nullptr;
  const char* node_type_ = "";
  const void* compile_info_ = nullptr;
  uint32_t block_dim_ = 0;
  uint64_t tiling_key_ = 0;
  uint32_t schedule_mode_ = 0;
  bool need_atomic_ = false;
  TilingData raw_tiling_;
  size_t workspaces_[ASC_HOST_MAX_WORKSPACES] = {};
  size_t n_workspaces_ = 0;
  mutable ComputeNodeInfo node_info_;
};

// What an InferShape function reads and sets. The simulator takes output
// shapes from the test case and does not call InferShape; the class lets
// op_host files that define one compile.
class InferShapeContext {
 public:
  const Shape* GetInputShape(size_t index) const { return &in_.at(index, "GetInputShape").shape_.storage_; }
  const Shape* GetOptionalInputShape(size_t ir_index) const {
    const Tensor* t = in_.instance(ir_index, 0, "GetOptionalInputShape");
    return t != nullptr ? &t->shape_.storage_ : nullptr;
  }
  const Shape* GetDynamicInputShape(size_t ir_index, size_t relative_index) const {
    const Tensor* t = in_.instance(ir_index, relative_index, "GetDynamicInputShape");
    return t != nullptr ? &t->shape_.storage_ : nullptr;
  }
  const Tensor* GetInputTensor(size_t index) const { return &in_.at(index, "GetInputTensor"); }
  const Tensor* GetOptionalInputTensor(size_t ir_index) const {
    return in_.instance(ir_index, 0, "GetOptionalInputTensor");
  }
  const CompileTimeTensorDesc* GetInputDesc(size_t index) const {
    in_.at(index, "GetInputDesc");
    return &in_.descs_[index];
  }
  const CompileTimeTensorDesc* GetOptionalInputDesc(size_t ir_index) const {
    size_t i = in_.instance_index(ir_index, 0, "GetOptionalInputDesc");
    return i != (size_t)-1 ? &in_.descs_[i] : nullptr;
  }
  const CompileTimeTensorDesc* GetOutputDesc(size_t index) const {
    out_.at(index, "GetOutputDesc");
    return &out_.descs_[index];
  }
  Shape* GetOutputShape(size_t index) {
    out_.at(index, "GetOutputShape");
    return &out_.tensors_[index].shape_.storage_;
  }
  const AnchorInstanceInfo* GetIrInputInstanceInfo(size_t ir_index) const {
    return &in_.param(ir_index, "GetIrInputInstanceInfo");
  }
  const RuntimeAttrs* GetAttrs() const { return &attrs_; }
  const char* GetNodeName() const { return node_type_; }
  const char* GetNodeType() const { return node_type_; }
  size_t GetComputeNodeInputNum() const { return in_.n_; }
  size_t GetComputeNodeOutputNum() const { return out_.n_; }

  AscendoptTensors in_;
  AscendoptTensors out_;
  RuntimeAttrs attrs_;
  const char* node_type_ = "";
};

// What an InferDataType function reads and sets (not called by the
// simulator, see InferShapeContext).
class InferDataTypeContext {
 public:
  ge::DataType GetInputDataType(size_t index) const { return in_.at(index, "GetInputDataType").dtype_; }
  ge::DataType GetOptionalInputDataType(size_t ir_index) const {
    const Tensor* t = in_.instance(ir_index, 0, "GetOptionalInputDataType");
    return t != nullptr ? t->dtype_ : ge::DT_UNDEFINED;
  }
  ge::DataType GetDynamicInputDataType(size_t ir_index, size_t relative_index) const {
    const Tensor* t = in_.instance(ir_index, relative_index, "GetDynamicInputDataType");
    return t != nullptr ? t->dtype_ : ge::DT_UNDEFINED;
  }
  size_t GetComputeNodeInputNum() const { return in_.n_; }
  size_t GetComputeNodeOutputNum() const { return out_.n_; }
  ge::DataType GetOutputDataType(size_t index) const { return out_.at(index, "GetOutputDataType").dtype_; }
  ge::graphStatus SetOutputDataType(size_t index, ge::DataType dtype) {
    out_.at(index, "SetOutputDataType");
    out_.tensors_[index].dtype_ = dtype;
    return ge::GRAPH_SUCCESS;
  }
  const RuntimeAttrs* GetAttrs() const { return &attrs_; }
  const char* GetNodeName() const { return node_type_; }
  const char* GetNodeType() const { return node_type_; }

  AscendoptTensors in_;
  AscendoptTensors out_;
  RuntimeAttrs attrs_;
  const char* node_type_ = "";
};

// Shape-range inference context: declared so that functions taking it
// compile; the simulator never calls them.
class InferShapeRangeContext {};

// What a TilingParse function (IMPL_OP_OPTILING(...).TilingParse<T>)
// reads and fills: the operator's compile info, computed once before the
// tiling runs, typically from the platform (core count, UB size). The
// tiling function reads it back with TilingContext::GetCompileInfo.
class TilingParseContext {
 public:
  template <class T>
  T* GetCompiledInfo() {
    return static_cast<T*>(compile_info_);
  }
  template <class T>
  const T* GetCompiledInfo() const {
    return static_cast<const T*>(compile_info_);
  }
  fe::PlatFormInfos* GetPlatformInfo() const { return platform_; }
  const char* GetNodeName() const { return node_type_; }
  const char* GetNodeType() const { return node_type_; }
  const RuntimeAttrs* GetAttrs() const { return attrs_; }
  // The compile info of graph mode's JSON description; the simulator has
  // none to give.
  const char* GetCompileJson() const { return "{}"; }

  // ---- state (filled by host_entry.cpp) ----
  void* compile_info_ = nullptr;
  fe::PlatFormInfos* platform_ = nullptr;
  const char* node_type_ = "";
  const RuntimeAttrs* attrs_ = nullptr;
};

}  // namespace gert

namespace ascendopt {
namespace host {
// The function types of an operator's implementation (what
// gert::OpImplRegisterV2 and OpDef register).
using TilingFunc = uint32_t (*)(gert::TilingContext*);
using TilingParseFunc = uint32_t (*)(gert::TilingParseContext*);
using InferShapeFunc = uint32_t (*)(gert::InferShapeContext*);
using InferDataTypeFunc = uint32_t (*)(gert::InferDataTypeContext*);
using InferShapeRangeFunc = uint32_t (*)(gert::InferShapeRangeContext*);
}  // namespace host
}  // namespace ascendopt

#endif
