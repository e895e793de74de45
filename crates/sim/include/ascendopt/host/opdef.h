// ascendopt host (op_host) emulation: the operator prototype builder
// (ops::OpDef, OpParamDef, OpAttrDef, OpAICoreDef, OpAICoreConfig) and
// OP_ADD, which registers an OpDef for host_entry.cpp to find.
//
// Clean-room, from the AscendC guide 6.4.3 (原型注册与管理). The builder
// records what the simulator uses (inputs and outputs with their dtypes,
// attributes with types and defaults, the tiling function) and accepts the
// options that do not change what a launch computes. Options that would
// (InitValue, AICPU/MC2 definitions, ...) fail to compile with a message.
//
// The member functions that are not templates live in host_entry.cpp.
#ifndef ASCENDOPT_HOST_OPDEF_H
#define ASCENDOPT_HOST_OPDEF_H

#include <vector>

#include "context.h"

// Graph-mode checks (SetCheckSupport / SetOpSelectFormat) take these; the
// simulator never calls such functions, so the types only need to compile.
namespace ge {
class AscendString {
 public:
  AscendString(const char* s = "") : s_(s != nullptr ? s : "") {}
  const char* GetString() const { return s_; }

 private:
  const char* s_;
};
// ge::Shape: built from a dims vector, as the high-level APIs' host tiling
// helpers (GetSoftMaxMinTmpSize(ge::Shape(dims), ...)) take it.
class Shape {
 public:
  Shape() = default;
  explicit Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
  size_t GetDimNum() const { return dims_.size(); }
  int64_t GetDim(size_t idx) const { return idx < dims_.size() ? dims_[idx] : 0; }
  std::vector<int64_t> GetDims() const { return dims_; }
  // The element count; 0 for a shape without dimensions.
  int64_t GetShapeSize() const {
    if (dims_.empty()) return 0;
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }

 private:
  std::vector<int64_t> dims_;
};
class TensorDesc {
 public:
  Shape GetShape() const { return Shape(); }
  Shape GetOriginShape() const { return Shape(); }
  DataType GetDataType() const { return DT_UNDEFINED; }
  Format GetFormat() const { return FORMAT_ND; }
  Format GetOriginFormat() const { return FORMAT_ND; }
};
// Graph-mode shape inference (InferShape / InferDataType of ge::Operator)
// reads constant inputs as a ge::Tensor; the simulator never runs graph
// inference, so these only let such host code compile: an Operator has no
// constant input (GetInputConstData fails) and a Tensor holds no data.
// Dimension markers of an unknown shape (GE's graph types).
constexpr int64_t UNKNOWN_DIM = -1;
constexpr int64_t UNKNOWN_DIM_NUM = -2;
class Tensor {
 public:
  TensorDesc GetTensorDesc() const { return TensorDesc(); }
  const uint8_t* GetData() const { return nullptr; }
  uint8_t* GetData() { return nullptr; }
  size_t GetSize() const { return 0; }
};
class Operator {
 public:
  graphStatus GetInputConstData(const char*, Tensor&) const { return GRAPH_FAILED; }
  TensorDesc GetInputDesc(uint32_t) const { return TensorDesc(); }
  TensorDesc GetOutputDesc(uint32_t) const { return TensorDesc(); }
  TensorDesc GetInputDescByName(const char*) const { return TensorDesc(); }
  TensorDesc GetOutputDescByName(const char*) const { return TensorDesc(); }
  size_t GetInputsSize() const { return 0; }
  size_t GetOutputsSize() const { return 0; }
  template <class T>
  graphStatus GetAttr(const char*, T&) const {
    return GRAPH_FAILED;
  }
};
}  // namespace ge

namespace ops {
class OpDef;
}

namespace ascendopt {
namespace host {
constexpr size_t kMaxParams = 32;
constexpr size_t kMaxAttrs = 32;
// Dtype and format columns per parameter: the corpus has OpDefs with more
// than 64 (Cast lists 99 source/destination combinations).
constexpr size_t kMaxTypeList = 256;

// One OP_ADD: a name and how to build the OpDef (at the first tiling call,
// inside the simulator's error handling, not at library load).
struct OpRegistration {
  const char* name;
  const ops::OpDef* (*create)();
  const OpRegistration* next;
  OpRegistration(const char* op_name, const ops::OpDef* (*factory)());
};
}  // namespace host
}  // namespace ascendopt

namespace ops {
enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };
enum class FollowType { ALL = 0, DTYPE = 1, FORMAT = 2, SHAPE = 3, INVALID_TYPE };
enum class DependScope { ALL = 0, TILING = 1, INVALID_SCOPE };
enum class FormatCheckOption { DEFAULT = 0, STRICT = 1, MAX };
enum class CommentSection { LABEL = 0, BRIEF, CONSTRAINTS, RESTRICTIONS, SEE, THIRDPARTYFWKCOMPAT, CATEGORY, END };
enum class ScalarType : uint32_t {
  UINT64 = 0,
  INT64 = 1,
  UINT32 = 2,
  INT32 = 3,
  UINT16 = 4,
  INT16 = 5,
  UINT8 = 6,
  INT8 = 7,
  FLOAT32 = 8,
  FLOAT16 = 9,
  INVALID_DTYPE = 0xFFFFFFFFu
};
struct ScalarVar {
  ScalarType type = ScalarType::INVALID_DTYPE;
  double value = 0.0;
  ScalarVar() = default;
  template <class V>
  ScalarVar(ScalarType t, V v) : type(t), value((double)v) {}
};

// An input or output of the prototype.
class OpParamDef {
 public:
  OpParamDef() = default;
  explicit OpParamDef(const char* name);

  OpParamDef& ParamType(Option param_type);
  OpParamDef& DataType(std::initializer_list<ge::DataType> types);
  template <class C>
  OpParamDef& DataType(const C& types) {
    n_dtypes_ = 0;
    for (auto t : types) add_dtype(t);
    return *this;
  }
  OpParamDef& DataTypeList(std::initializer_list<ge::DataType> types);
  template <class C>
  OpParamDef& DataTypeList(const C& types) {
    n_dtypes_ = 0;
    dtype_list_ = true;
    for (auto t : types) add_dtype(t);
    return *this;
  }
  // The dtypes whose kernel binary serves each DataType() entry (guide
  // 6.4.3.4.4): the kernel variant a launch runs is the one compiled for
  // these.
  template <class C>
  OpParamDef& DataTypeForBinQuery(const C& types) {
    n_bin_query_ = 0;
    for (auto t : types) add_bin_query(t);
    return *this;
  }
  OpParamDef& DataTypeForBinQuery(std::initializer_list<ge::DataType> types);
  OpParamDef& Format(std::initializer_list<ge::Format> formats);
  template <class C>
  OpParamDef& Format(const C& formats) {
    n_formats_ = 0;
    for (auto f : formats) add_format(f);
    return *this;
  }
  OpParamDef& FormatList(std::initializer_list<ge::Format> formats) { return Format(formats); }
  template <class C>
  OpParamDef& FormatList(const C& formats) {
    return Format(formats);
  }
  template <class C>
  OpParamDef& FormatForBinQuery(const C&) {
    return *this;
  }
  OpParamDef& FormatForBinQuery(std::initializer_list<ge::Format>) { return *this; }
  OpParamDef& UnknownShapeFormat(std::initializer_list<ge::Format>) { return *this; }
  template <class C>
  OpParamDef& UnknownShapeFormat(const C&) {
    return *this;
  }
  // The tiling reads this input's values (Tensor::GetData); REQUIRED or
  // OPTIONAL says whether the values must be there (guide 6.4.3.4.13).
  OpParamDef& ValueDepend(Option value_depend) {
    value_depend_ = value_depend;
    return *this;
  }
  OpParamDef& ValueDepend(Option value_depend, DependScope) { return ValueDepend(value_depend); }
  OpParamDef& AutoContiguous() { return *this; }
  OpParamDef& IgnoreContiguous() { return *this; }
  // The aclnn API takes this input as a host scalar (or a list of them); on
  // the device it is an ordinary tensor.
  OpParamDef& Scalar() {
    scalar_ = 1;
    return *this;
  }
  OpParamDef& ScalarList() {
    scalar_ = 2;
    return *this;
  }
  OpParamDef& To(ge::DataType) { return *this; }
  OpParamDef& To(const char*) { return *this; }
  OpParamDef& Version(uint32_t) { return *this; }
  OpParamDef& Comment(const char*) { return *this; }
  OpParamDef& Follow(const char* param_name);
  OpParamDef& Follow(const char* param_name, FollowType) { return Follow(param_name); }
  // The output's initial value (guide 6.4.3.4.17): before the kernel runs,
  // the output's GM is cleared (InitValue(0), the only uint64_t value the
  // guide allows) or filled with a value of the given ScalarType; the list
  // form gives one value per DataType() column. The simulator fills the
  // output when the tiling of a launch has run (SetNeedAtomic is accepted
  // either way).
  OpParamDef& InitValue(uint64_t value) {
    if (value != 0) error_ = "InitValue(uint64_t) takes only 0 (guide 6.4.3.4.17); give a ScalarVar for another value";
    init_kind_ = 1;
    init_value_ = ScalarVar(ScalarType::UINT64, 0);
    return *this;
  }
  OpParamDef& InitValue(const ScalarVar& value) {
    init_kind_ = 2;
    init_value_ = value;
    return *this;
  }
  OpParamDef& InitValue(std::initializer_list<ScalarVar> values) { return init_list(values); }
  template <class C, class = decltype(((const C*)nullptr)->begin())>
  OpParamDef& InitValue(const C& values) {
    return init_list(values);
  }
  template <class T0 = void>
  OpParamDef& OutputShapeDependOnCompute() {
    static_assert(::ascendopt::host::always_false<T0>,
                  "not supported by the ascendopt simulator: OpParamDef::OutputShapeDependOnCompute");
    return *this;
  }

  // ---- state ----
  void add_dtype(ge::DataType t);
  void add_format(ge::Format f);
  void add_bin_query(ge::DataType t);
  template <class C>
  OpParamDef& init_list(const C& values) {
    size_t n = 0;
    for (auto it = values.begin(); it != values.end(); ++it) ++n;
    // Kept for the life of the library, like the OpDef itself.
    ScalarVar* list = new ScalarVar[n > 0 ? n : 1];
    n = 0;
    for (const ScalarVar& v : values) list[n++] = v;
    init_kind_ = 3;
    init_values_ = list;
    n_init_values_ = n;
    return *this;
  }
  const char* name_ = "";
  Option param_type_ = REQUIRED;
  Option value_depend_ = IGNORE;
  uint8_t scalar_ = 0;  // 1 Scalar(), 2 ScalarList()
  bool is_output_ = false;
  ge::DataType bin_query_[::ascendopt::host::kMaxTypeList] = {};
  size_t n_bin_query_ = 0;
  ge::DataType dtypes_[::ascendopt::host::kMaxTypeList] = {};
  size_t n_dtypes_ = 0;
  bool dtype_list_ = false;
  ge::Format formats_[::ascendopt::host::kMaxTypeList] = {};
  size_t n_formats_ = 0;
  const char* follow_ = nullptr;
  const char* error_ = nullptr;
  // InitValue: 0 none, 1 zero, 2 init_value_ for every column, 3 one of
  // init_values_ per column.
  uint8_t init_kind_ = 0;
  ScalarVar init_value_;
  const ScalarVar* init_values_ = nullptr;
  size_t n_init_values_ = 0;
};

// An attribute of the prototype, with its type and default.
class OpAttrDef {
 public:
  OpAttrDef() = default;
  explicit OpAttrDef(const char* name);

  OpAttrDef& AttrType(Option attr_type);
  OpAttrDef& Bool();
  OpAttrDef& Bool(bool value);
  OpAttrDef& Float();
  OpAttrDef& Float(float value);
  OpAttrDef& Int();
  OpAttrDef& Int(int64_t value);
  OpAttrDef& String();
  OpAttrDef& String(const char* value);
  OpAttrDef& ListBool();
  OpAttrDef& ListBool(std::initializer_list<bool> values);
  template <class C>
  OpAttrDef& ListBool(const C& values) {
    begin_list(::ascendopt::host::AttrKind::ListBool);
    for (bool v : values) push_bool(v);
    return *this;
  }
  OpAttrDef& ListFloat();
  OpAttrDef& ListFloat(std::initializer_list<float> values);
  template <class C>
  OpAttrDef& ListFloat(const C& values) {
    begin_list(::ascendopt::host::AttrKind::ListFloat);
    for (float v : values) push_float(v);
    return *this;
  }
  OpAttrDef& ListInt();
  OpAttrDef& ListInt(std::initializer_list<int64_t> values);
  template <class C>
  OpAttrDef& ListInt(const C& values) {
    begin_list(::ascendopt::host::AttrKind::ListInt);
    for (int64_t v : values) push_int(v);
    return *this;
  }
  OpAttrDef& Version(uint32_t) { return *this; }
  OpAttrDef& Comment(const char*) { return *this; }
  ASCENDOPT_HOST_UNSUPPORTED(ListListInt, "OpAttrDef::ListListInt")

  // ---- state ----
  void set_kind(::ascendopt::host::AttrKind kind);
  void begin_list(::ascendopt::host::AttrKind kind);
  void push_int(int64_t v);
  void push_float(float v);
  void push_bool(bool v);
  const char* name_ = "";
  Option attr_type_ = OPTIONAL;
  ::ascendopt::host::AttrKind kind_ = ::ascendopt::host::AttrKind::None;
  bool has_default_ = false;
  int64_t default_i_ = 0;
  float default_f_ = 0.0f;
  bool default_b_ = false;
  const char* default_s_ = "";
  void* default_list_ = nullptr;  // malloc'ed int64_t / float / bool array
  size_t default_len_ = 0;
};

// Per-SoC configuration; the flags are compile options of CANN's build and
// change nothing in the simulator.
class OpAICoreConfig {
 public:
  OpAICoreConfig() = default;
  explicit OpAICoreConfig(const char*) {}
  OpParamDef& Input(const char* name);
  OpParamDef& Output(const char* name);
  OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
  OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
  OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
  OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
  OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
  OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
  OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }

  // ---- state ----
  OpParamDef params_[::ascendopt::host::kMaxParams];
  size_t n_params_ = 0;
  const char* error_ = nullptr;
};

class OpAICoreDef {
 public:
  OpAICoreDef& SetTiling(::ascendopt::host::TilingFunc func) {
    tiling_ = func;
    return *this;
  }
  // Graph-mode callbacks, never called by the simulator.
  template <class F>
  OpAICoreDef& SetTilingParse(F) {
    return *this;
  }
  template <class F>
  OpAICoreDef& SetCheckSupport(F) {
    return *this;
  }
  template <class F>
  OpAICoreDef& SetOpSelectFormat(F) {
    return *this;
  }
  template <class F>
  OpAICoreDef& SetOpSupportInfo(F) {
    return *this;
  }
  template <class F>
  OpAICoreDef& SetOpSpecInfo(F) {
    return *this;
  }
  // Registers the operator for a SoC (`ascend910b`, ...); chains like the
  // other builder calls. A configuration that redefines inputs or outputs
  // for a SoC replaces the top-level definition for that SoC (kept for the
  // simulator's description of the operator) and disables the tiling
  // call's dtype check against the top-level definition.
  OpAICoreDef& AddConfig(const char* soc);
  OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig& config);

  // ---- state ----
  static constexpr size_t kMaxConfigs = 16;
  ::ascendopt::host::TilingFunc tiling_ = nullptr;
  bool config_redefines_params_ = false;
  const char* config_socs_[kMaxConfigs] = {};
  OpAICoreConfig* configs_[kMaxConfigs] = {};  // owned copies; null when none was given
  size_t n_configs_ = 0;
};

// The operator prototype. A user's op class derives from it and fills it in
// its constructor; OP_ADD registers it.
class OpDef {
 public:
  explicit OpDef(const char* type);
  virtual ~OpDef() = default;

  OpParamDef& Input(const char* name);
  OpParamDef& Output(const char* name);
  OpAttrDef& Attr(const char* name);
  OpDef& SetInferShape(::ascendopt::host::InferShapeFunc func) {
    infer_shape_ = func;
    return *this;
  }
  OpDef& SetInferShapeRange(::ascendopt::host::InferShapeRangeFunc) { return *this; }
  OpDef& SetInferDataType(::ascendopt::host::InferDataTypeFunc func) {
    infer_dtype_ = func;
    return *this;
  }
  OpAICoreDef& AICore() { return aicore_; }
  OpDef& EnableFallBack() { return *this; }
  OpDef& FormatMatchMode(FormatCheckOption) { return *this; }
  template <class... A>
  OpDef& Comment(A&&...) {
    return *this;
  }
  ASCENDOPT_HOST_UNSUPPORTED(AICPU, "OpDef::AICPU")
  ASCENDOPT_HOST_UNSUPPORTED(HostCPU, "OpDef::HostCPU")
  ASCENDOPT_HOST_UNSUPPORTED(MC2, "OpDef::MC2")

  // ---- state ----
  const char* type_ = "";
  OpParamDef inputs_[::ascendopt::host::kMaxParams];
  size_t n_inputs_ = 0;
  OpParamDef outputs_[::ascendopt::host::kMaxParams];
  size_t n_outputs_ = 0;
  OpAttrDef attrs_[::ascendopt::host::kMaxAttrs];
  size_t n_attrs_ = 0;
  OpAICoreDef aicore_;
  ::ascendopt::host::InferShapeFunc infer_shape_ = nullptr;
  ::ascendopt::host::InferDataTypeFunc infer_dtype_ = nullptr;
  const char* error_ = nullptr;  // first builder misuse (too many inputs, ...)
};
}  // namespace ops

// Registers the prototype class `opType` (derived from ops::OpDef) under its
// class name.
// Both the prototype and its registration are const once built (the
// runtime only reads them), so the static check's mutable-state notes do
// not fire on the user's OP_ADD line for state that is not theirs.
#define OP_ADD(opType, ...)                                                                    \
  static const ::ops::OpDef* ascendopt_create_op_##opType() {                                \
    static const opType ascendopt_instance(#opType);                                         \
    return &ascendopt_instance;                                                              \
  }                                                                                          \
  static const ::ascendopt::host::OpRegistration ascendopt_op_registration_##opType(#opType, \
                                                                                    &ascendopt_create_op_##opType)

#endif
