// ascendopt host (op_host) emulation: gert::OpImplRegisterV2 and the
// IMPL_OP family of macros, which register an operator's implementation
// functions by op type, apart from its OpDef:
//
//   IMPL_OP_OPTILING(AddLayerNorm)
//       .Tiling(Tiling4AddLayerNorm)
//       .TilingParse<AddLayerNormCompileInfo>(TilingPrepare4AddLayerNorm);
//   IMPL_OP_INFERSHAPE(AddLayerNorm).InferShape(InferShape4AddLayerNorm);
//
// The simulator runs the registered tiling function of an op type whose
// OpDef sets none (AICore().SetTiling), and before it the TilingParse
// function on a fresh compile-info object of the registered type, whose
// address the tiling reads back with TilingContext::GetCompileInfo. The
// other registrations are recorded (inputs whose values the tiling
// reads, private attributes) or accepted.
//
// Clean-room, from the AscendC guide 2.10.3 (算子入图(GE图)开发: the
// registration of shape inference and tiling by op type, data-dependent
// inputs) and the registration calls real op_host code makes.
#ifndef ASCENDOPT_HOST_IMPL_REGISTRY_H
#define ASCENDOPT_HOST_IMPL_REGISTRY_H

#include "std_bundle.h"
#include "context.h"

namespace ascendopt {
namespace host {
constexpr size_t kMaxDependencies = 32;
constexpr size_t kMaxPrivateAttrs = 16;

// A private attribute: one the implementation adds after the OpDef's own,
// with its default value (GetAttrs() indexes it after them).
struct PrivateAttr {
  const char* name = "";
  AttrKind kind = AttrKind::None;
  int64_t i = 0;
  float f = 0.0f;
  bool b = false;
  const char* s = "";
  const void* list = nullptr;  // int64_t or float array, malloc'ed
  size_t list_len = 0;
};

// One IMPL_OP* registration (heap-allocated at load time, never freed:
// the builder objects copied around by the macros share it).
struct ImplRegistration {
  const char* op_type = "";
  TilingFunc tiling = nullptr;
  TilingParseFunc tiling_parse = nullptr;
  void* (*new_compile_info)() = nullptr;
  void (*delete_compile_info)(void*) = nullptr;
  InferShapeFunc infer_shape = nullptr;
  InferDataTypeFunc infer_dtype = nullptr;
  // Input indices whose values the tiling reads (TilingInputsDataDependency).
  int32_t tiling_depends[kMaxDependencies] = {};
  size_t n_tiling_depends = 0;
  PrivateAttr private_attrs[kMaxPrivateAttrs];
  size_t n_private_attrs = 0;
  const char* error = nullptr;
  ImplRegistration* next = nullptr;
};

// Links a new registration for `op_type` (host_entry.cpp).
ImplRegistration* register_impl(const char* op_type);
// The first registration of `op_type` that sets `what` (1 tiling, 2
// tiling parse), or null (host_entry.cpp).
const ImplRegistration* find_impl(const char* op_type, int what);

template <class T>
void* new_compile_info() {
  return new T();
}
template <class T>
void delete_compile_info(void* p) {
  delete static_cast<T*>(p);
}

// PrivateAttr values by C++ type.
inline void set_private(PrivateAttr& a, bool v) {
  a.kind = AttrKind::Bool;
  a.b = v;
}
inline void set_private(PrivateAttr& a, float v) {
  a.kind = AttrKind::Float;
  a.f = v;
}
inline void set_private(PrivateAttr& a, double v) { set_private(a, (float)v); }
inline void set_private(PrivateAttr& a, int64_t v) {
  a.kind = AttrKind::Int;
  a.i = v;
}
inline void set_private(PrivateAttr& a, int32_t v) { set_private(a, (int64_t)v); }
inline void set_private(PrivateAttr& a, uint32_t v) { set_private(a, (int64_t)v); }
inline void set_private(PrivateAttr& a, const char* v) {
  a.kind = AttrKind::Str;
  a.s = strdup(v != nullptr ? v : "");
}
template <class C>
void set_private_list(PrivateAttr& a, const C& values, AttrKind kind) {
  a.kind = kind;
  size_t n = 0;
  for (auto it = values.begin(); it != values.end(); ++it) ++n;
  if (kind == AttrKind::ListInt) {
    int64_t* list = static_cast<int64_t*>(calloc(n > 0 ? n : 1, sizeof(int64_t)));
    size_t k = 0;
    if (list != nullptr)
      for (auto v : values) list[k++] = (int64_t)v;
    a.list = list;
  } else {
    float* list = static_cast<float*>(calloc(n > 0 ? n : 1, sizeof(float)));
    size_t k = 0;
    if (list != nullptr)
      for (auto v : values) list[k++] = (float)v;
    a.list = list;
  }
  a.list_len = n;
}
}  // namespace host
}  // namespace ascendopt

namespace gert {
// The builder IMPL_OP and its relatives return. Copies share one
// registration.
class OpImplRegisterV2 {
 public:
  using TilingKernelFunc = ::ascendopt::host::TilingFunc;
  using TilingParseKernelFunc = ::ascendopt::host::TilingParseFunc;
  using InferShapeKernelFunc = ::ascendopt::host::InferShapeFunc;
  using InferDataTypeKernelFunc = ::ascendopt::host::InferDataTypeFunc;
  using InferShapeRangeKernelFunc = ::ascendopt::host::InferShapeRangeFunc;

  explicit OpImplRegisterV2(const char* op_type) : reg_(::ascendopt::host::register_impl(op_type)) {}

  OpImplRegisterV2& Tiling(TilingKernelFunc func, size_t = 0) {
    reg_->tiling = func;
    return *this;
  }
  // `T` is the compile info the parse function fills (GetCompiledInfo<T>).
  template <class T>
  OpImplRegisterV2& TilingParse(TilingParseKernelFunc func) {
    reg_->tiling_parse = func;
    reg_->new_compile_info = &::ascendopt::host::new_compile_info<T>;
    reg_->delete_compile_info = &::ascendopt::host::delete_compile_info<T>;
    return *this;
  }
  OpImplRegisterV2& InferShape(InferShapeKernelFunc func) {
    reg_->infer_shape = func;
    return *this;
  }
  OpImplRegisterV2& InferDataType(InferDataTypeKernelFunc func) {
    reg_->infer_dtype = func;
    return *this;
  }
  OpImplRegisterV2& InferShapeRange(InferShapeRangeKernelFunc) { return *this; }
  template <class F>
  OpImplRegisterV2& InferFormat(F) {
    return *this;
  }
  template <class F>
  OpImplRegisterV2& InferOutShapeRange(F) {
    return *this;
  }
  // Inputs whose values the tiling reads (their data reach
  // Tensor::GetData); the same as ValueDepend in the OpDef.
  OpImplRegisterV2& TilingInputsDataDependency(std::initializer_list<int32_t> indices) {
    for (int32_t i : indices) {
      if (reg_->n_tiling_depends >= ::ascendopt::host::kMaxDependencies) {
        reg_->error = "more than 32 data-dependent inputs";
        break;
      }
      reg_->tiling_depends[reg_->n_tiling_depends++] = i;
    }
    return *this;
  }
  template <class... A>
  OpImplRegisterV2& TilingInputsDataDependency(std::initializer_list<int32_t> indices, A&&...) {
    return TilingInputsDataDependency(indices);
  }
  // Inputs whose values shape inference reads; the simulator does not
  // infer shapes.
  OpImplRegisterV2& InputsDataDependency(std::initializer_list<int32_t>) { return *this; }
  template <class C>
  OpImplRegisterV2& InputsDataDependency(const C&) {
    return *this;
  }
  OpImplRegisterV2& PrivateAttr(const char* name, bool v) { return add_private(name, v); }
  OpImplRegisterV2& PrivateAttr(const char* name, float v) { return add_private(name, v); }
  OpImplRegisterV2& PrivateAttr(const char* name, double v) { return add_private(name, v); }
  OpImplRegisterV2& PrivateAttr(const char* name, int64_t v) { return add_private(name, v); }
  OpImplRegisterV2& PrivateAttr(const char* name, int32_t v) { return add_private(name, v); }
  OpImplRegisterV2& PrivateAttr(const char* name, uint32_t v) { return add_private(name, v); }
  OpImplRegisterV2& PrivateAttr(const char* name, const char* v) { return add_private(name, v); }
  OpImplRegisterV2& PrivateAttr(const char* name, const std::string& v) { return add_private(name, v.c_str()); }
  OpImplRegisterV2& PrivateAttr(const char* name, const std::vector<int64_t>& v) {
    return add_private_list(name, v, ::ascendopt::host::AttrKind::ListInt);
  }
  OpImplRegisterV2& PrivateAttr(const char* name, const std::vector<float>& v) {
    return add_private_list(name, v, ::ascendopt::host::AttrKind::ListFloat);
  }
  OpImplRegisterV2& PrivateAttr(const char* name) {
    ::ascendopt::host::PrivateAttr* a = next_private(name);
    if (a != nullptr) a->kind = ::ascendopt::host::AttrKind::None;
    return *this;
  }
  template <class F>
  OpImplRegisterV2& GenSimplifiedKey(F) {
    return *this;
  }

 private:
  ::ascendopt::host::PrivateAttr* next_private(const char* name) {
    if (reg_->n_private_attrs >= ::ascendopt::host::kMaxPrivateAttrs) {
      reg_->error = "more than 16 private attributes";
      return nullptr;
    }
    ::ascendopt::host::PrivateAttr* a = &reg_->private_attrs[reg_->n_private_attrs++];
    a->name = strdup(name != nullptr ? name : "");
    return a;
  }
  template <class V>
  OpImplRegisterV2& add_private(const char* name, V v) {
    ::ascendopt::host::PrivateAttr* a = next_private(name);
    if (a != nullptr) ::ascendopt::host::set_private(*a, v);
    return *this;
  }
  template <class C>
  OpImplRegisterV2& add_private_list(const char* name, const C& v, ::ascendopt::host::AttrKind kind) {
    ::ascendopt::host::PrivateAttr* a = next_private(name);
    if (a != nullptr) ::ascendopt::host::set_private_list(*a, v, kind);
    return *this;
  }
  ::ascendopt::host::ImplRegistration* reg_;
};
}  // namespace gert

#define ASCENDOPT_IMPL_CONCAT2(a, b) a##b
#define ASCENDOPT_IMPL_CONCAT(a, b) ASCENDOPT_IMPL_CONCAT2(a, b)
// One registration object per use, named uniquely in the translation unit.
#define IMPL_OP(op_type)                                                                       \
  static ::gert::OpImplRegisterV2 ASCENDOPT_IMPL_CONCAT(ascendopt_impl_##op_type##_, __COUNTER__) \
      __attribute__((unused)) = ::gert::OpImplRegisterV2(#op_type)
#define IMPL_OP_OPTILING(op_type) IMPL_OP(op_type)
#define IMPL_OP_INFERSHAPE(op_type) IMPL_OP(op_type)
#define IMPL_OP_DEFAULT() IMPL_OP(DefaultImpl)

#endif
