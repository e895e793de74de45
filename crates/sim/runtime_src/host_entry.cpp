// ascendopt simulator: linked into every host (op_host) library. Holds the
// OpDef registry filled by OP_ADD, the out-of-line parts of the OpDef
// builder, and `ascendopt_host_tiling` (see ascendopt/host_abi.h): it finds
// the registered op, builds a gert::TilingContext from the worker's request
// (shapes, dtypes, attributes matched by name to the OpDef's Attr order with
// the OpDef's defaults, platform), calls the tiling function and reports
// what it set.
//
// Nothing escapes as an exception: request errors, API misuse inside the
// tiling function (ascendopt::host::fail) and exceptions thrown by user code
// all become a status != 0 with a message.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "ascendopt/abi.h"
#include "ascendopt/host_abi.h"
#include "register/op_def_registry.h"
#include "ascendopt/host/log.h"

namespace ascendopt {
namespace host {

// What fail() throws.
struct HostFailure {
  char message[900];
};

void fail(const char* fmt, ...) {
  HostFailure f;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f.message, sizeof f.message, fmt, ap);
  va_end(ap);
  throw f;
}

// ---- host logs (ascendopt/host/log.h) ----------------------------------------
// The last error the host code logged during the current call.
static thread_local char g_last_error[512];

void vlog(int level, const char* op, const char* fmt, va_list ap) {
  if (level < kLogWarn || fmt == nullptr) return;
  char text[512];
  vsnprintf(text, sizeof text, fmt, ap);
  fprintf(stderr, "[%s] %s%s%s\n", level >= kLogError ? "ERROR" : "WARNING", op != nullptr ? op : "",
          op != nullptr && op[0] != '\0' ? ": " : "", text);
  if (level >= kLogError) snprintf(g_last_error, sizeof g_last_error, "%s", text);
}

// A request error (ASC_HOST_ERR_REQUEST) found before the tiling runs.
struct RequestError {
  char message[900];
};

[[noreturn]] static void request_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void request_error(const char* fmt, ...) {
  RequestError e;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e.message, sizeof e.message, fmt, ap);
  va_end(ap);
  throw e;
}

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Int:
      return "Int";
    case AttrKind::Float:
      return "Float";
    case AttrKind::Bool:
      return "Bool";
    case AttrKind::Str:
      return "String";
    case AttrKind::ListInt:
      return "ListInt";
    case AttrKind::ListFloat:
      return "ListFloat";
    case AttrKind::ListBool:
      return "ListBool";
    default:
      return "untyped";
  }
}

void attr_kind_error(const AttrSlot& slot, size_t index, const char* wanted) {
  fail("GetAttrPointer<%s>(%zu): attribute '%s' is %s", wanted, index, slot.name, attr_kind_name(slot.kind));
}

const void* attr_raw(const AttrSlot& slot) {
  // The images live for the process's life (one per slot and content).
  static thread_local std::vector<std::pair<const AttrSlot*, std::vector<uint64_t>>> images;
  std::vector<unsigned char> bytes;
  auto put = [&](const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    bytes.insert(bytes.end(), b, b + n);
  };
  auto list = [&](const void* data, size_t n, size_t elem) {
    size_t header[2] = {n, n};  // capacity, size
    put(header, sizeof header);
    if (n > 0 && data != nullptr) put(data, n * elem);
  };
  switch (slot.kind) {
    case AttrKind::Int:
      put(&slot.i, sizeof slot.i);
      break;
    case AttrKind::Float:
      put(&slot.f, sizeof slot.f);
      break;
    case AttrKind::Bool:
      put(&slot.b, 1);
      break;
    case AttrKind::Str:
      put(slot.s, strlen(slot.s) + 1);
      break;
    case AttrKind::ListInt:
      list(slot.list_i.GetData(), slot.list_i.GetSize(), sizeof(int64_t));
      break;
    case AttrKind::ListFloat:
      list(slot.list_f.GetData(), slot.list_f.GetSize(), sizeof(float));
      break;
    case AttrKind::ListBool:
      list(slot.list_b.GetData(), slot.list_b.GetSize(), sizeof(bool));
      break;
    case AttrKind::None:
      break;
  }
  std::vector<uint64_t> words(bytes.size() / 8 + 2, 0);  // zero-padded, 8-byte aligned
  memcpy(words.data(), bytes.data(), bytes.size());
  // Pointers handed out stay valid: an image is never replaced (moving
  // the outer vector keeps each inner buffer).
  for (auto& e : images) {
    if (e.first == &slot && e.second == words) return e.second.data();
  }
  images.emplace_back(&slot, std::move(words));
  return images.back().second.data();
}

// ---- registry ----------------------------------------------------------------
static const OpRegistration* g_registry_head = nullptr;

OpRegistration::OpRegistration(const char* op_name, const ops::OpDef* (*factory)())
    : name(op_name), create(factory), next(g_registry_head) {
  g_registry_head = this;
}

static const char* dup_str(const char* s) {
  if (s == nullptr) return "";
  char* d = strdup(s);
  return d != nullptr ? d : "";
}

// ---- IMPL_OP registrations ---------------------------------------------------
static ImplRegistration* g_impl_head = nullptr;

ImplRegistration* register_impl(const char* op_type) {
  ImplRegistration* r = new ImplRegistration();
  r->op_type = dup_str(op_type);
  r->next = g_impl_head;
  g_impl_head = r;
  return r;
}

const ImplRegistration* find_impl(const char* op_type, int what) {
  for (const ImplRegistration* r = g_impl_head; r != nullptr; r = r->next) {
    if (strcmp(r->op_type, op_type) != 0) continue;
    if ((what == 1 && r->tiling != nullptr) || (what == 2 && r->tiling_parse != nullptr)) return r;
  }
  return nullptr;
}

// ---- platform of the call in progress (PlatformAscendCManager) -------------
static thread_local fe::PlatFormInfos* g_current_platform = nullptr;

}  // namespace host
}  // namespace ascendopt

namespace platform_ascendc {
PlatformAscendC* PlatformAscendCManager::GetInstance() {
  static thread_local PlatformAscendC instance(nullptr);
  if (ascendopt::host::g_current_platform == nullptr)
    ascendopt::host::fail("PlatformAscendCManager::GetInstance() outside a tiling call");
  instance = PlatformAscendC(ascendopt::host::g_current_platform);
  return &instance;
}
PlatformAscendC* PlatformAscendCManager::GetInstance(const char*) { return GetInstance(); }
}  // namespace platform_ascendc

// ---- OpDef builder ------------------------------------------------------------
namespace ops {
using ascendopt::host::AttrKind;
using ascendopt::host::dup_str;
using ascendopt::host::kMaxAttrs;
using ascendopt::host::kMaxParams;
using ascendopt::host::kMaxTypeList;

OpParamDef::OpParamDef(const char* name) : name_(dup_str(name)) {}
OpParamDef& OpParamDef::ParamType(Option param_type) {
  param_type_ = param_type;
  return *this;
}
OpParamDef& OpParamDef::DataType(std::initializer_list<ge::DataType> types) {
  n_dtypes_ = 0;
  for (ge::DataType t : types) add_dtype(t);
  return *this;
}
OpParamDef& OpParamDef::DataTypeList(std::initializer_list<ge::DataType> types) {
  n_dtypes_ = 0;
  dtype_list_ = true;
  for (ge::DataType t : types) add_dtype(t);
  return *this;
}
OpParamDef& OpParamDef::Format(std::initializer_list<ge::Format> formats) {
  n_formats_ = 0;
  for (ge::Format f : formats) add_format(f);
  return *this;
}
OpParamDef& OpParamDef::Follow(const char* param_name) {
  follow_ = dup_str(param_name);
  return *this;
}
void OpParamDef::add_dtype(ge::DataType t) {
  if (n_dtypes_ >= kMaxTypeList) {
    error_ = "more than 256 entries in DataType()";
    return;
  }
  dtypes_[n_dtypes_++] = t;
}
OpParamDef& OpParamDef::DataTypeForBinQuery(std::initializer_list<ge::DataType> types) {
  n_bin_query_ = 0;
  for (ge::DataType t : types) add_bin_query(t);
  return *this;
}
void OpParamDef::add_bin_query(ge::DataType t) {
  if (n_bin_query_ >= kMaxTypeList) {
    error_ = "more than 256 entries in DataTypeForBinQuery()";
    return;
  }
  bin_query_[n_bin_query_++] = t;
}
void OpParamDef::add_format(ge::Format f) {
  if (n_formats_ >= kMaxTypeList) {
    error_ = "more than 256 entries in Format()";
    return;
  }
  formats_[n_formats_++] = f;
}

OpAttrDef::OpAttrDef(const char* name) : name_(dup_str(name)) {}
OpAttrDef& OpAttrDef::AttrType(Option attr_type) {
  attr_type_ = attr_type;
  return *this;
}
void OpAttrDef::set_kind(AttrKind kind) {
  kind_ = kind;
  has_default_ = false;
}
OpAttrDef& OpAttrDef::Bool() {
  set_kind(AttrKind::Bool);
  return *this;
}
OpAttrDef& OpAttrDef::Bool(bool value) {
  set_kind(AttrKind::Bool);
  default_b_ = value;
  has_default_ = true;
  return *this;
}
OpAttrDef& OpAttrDef::Float() {
  set_kind(AttrKind::Float);
  return *this;
}
OpAttrDef& OpAttrDef::Float(float value) {
  set_kind(AttrKind::Float);
  default_f_ = value;
  has_default_ = true;
  return *this;
}
OpAttrDef& OpAttrDef::Int() {
  set_kind(AttrKind::Int);
  return *this;
}
OpAttrDef& OpAttrDef::Int(int64_t value) {
  set_kind(AttrKind::Int);
  default_i_ = value;
  has_default_ = true;
  return *this;
}
OpAttrDef& OpAttrDef::String() {
  set_kind(AttrKind::Str);
  return *this;
}
OpAttrDef& OpAttrDef::String(const char* value) {
  set_kind(AttrKind::Str);
  default_s_ = dup_str(value);
  has_default_ = true;
  return *this;
}
void OpAttrDef::begin_list(AttrKind kind) {
  set_kind(kind);
  free(default_list_);
  default_list_ = nullptr;
  default_len_ = 0;
  has_default_ = true;
}
template <class T>
static void push_list(void*& list, size_t& len, T v) {
  void* grown = realloc(list, (len + 1) * sizeof(T));
  if (grown == nullptr) return;
  list = grown;
  static_cast<T*>(list)[len++] = v;
}
void OpAttrDef::push_int(int64_t v) { push_list(default_list_, default_len_, v); }
void OpAttrDef::push_float(float v) { push_list(default_list_, default_len_, v); }
void OpAttrDef::push_bool(bool v) { push_list(default_list_, default_len_, v); }
OpAttrDef& OpAttrDef::ListBool() {
  set_kind(AttrKind::ListBool);
  return *this;
}
OpAttrDef& OpAttrDef::ListBool(std::initializer_list<bool> values) {
  begin_list(AttrKind::ListBool);
  for (bool v : values) push_bool(v);
  return *this;
}
OpAttrDef& OpAttrDef::ListFloat() {
  set_kind(AttrKind::ListFloat);
  return *this;
}
OpAttrDef& OpAttrDef::ListFloat(std::initializer_list<float> values) {
  begin_list(AttrKind::ListFloat);
  for (float v : values) push_float(v);
  return *this;
}
OpAttrDef& OpAttrDef::ListInt() {
  set_kind(AttrKind::ListInt);
  return *this;
}
OpAttrDef& OpAttrDef::ListInt(std::initializer_list<int64_t> values) {
  begin_list(AttrKind::ListInt);
  for (int64_t v : values) push_int(v);
  return *this;
}

// The param named `name` in `params`, appended when new.
static OpParamDef& find_or_add(OpParamDef* params, size_t& n, const char* name, const char*& error,
                               const char* too_many) {
  for (size_t i = 0; i < n; ++i)
    if (strcmp(params[i].name_, name != nullptr ? name : "") == 0) return params[i];
  if (n >= kMaxParams) {
    error = too_many;
    static thread_local OpParamDef overflow;
    overflow = OpParamDef(name);
    return overflow;
  }
  params[n] = OpParamDef(name);
  return params[n++];
}

OpParamDef& OpAICoreConfig::Input(const char* name) {
  return find_or_add(params_, n_params_, name, error_, "more than 32 parameters in OpAICoreConfig");
}
OpParamDef& OpAICoreConfig::Output(const char* name) {
  OpParamDef& p = find_or_add(params_, n_params_, name, error_, "more than 32 parameters in OpAICoreConfig");
  p.is_output_ = true;
  return p;
}

OpAICoreDef& OpAICoreDef::AddConfig(const char* soc) {
  if (n_configs_ < kMaxConfigs) config_socs_[n_configs_++] = dup_str(soc);
  return *this;
}
OpAICoreDef& OpAICoreDef::AddConfig(const char* soc, OpAICoreConfig& config) {
  if (config.n_params_ > 0) config_redefines_params_ = true;
  if (n_configs_ < kMaxConfigs) {
    config_socs_[n_configs_] = dup_str(soc);
    configs_[n_configs_] = new OpAICoreConfig(config);
    ++n_configs_;
  }
  return *this;
}

OpDef::OpDef(const char* type) : type_(ascendopt::host::dup_str(type)) {}
OpParamDef& OpDef::Input(const char* name) {
  return find_or_add(inputs_, n_inputs_, name, error_, "more than 32 inputs");
}
OpParamDef& OpDef::Output(const char* name) {
  OpParamDef& p = find_or_add(outputs_, n_outputs_, name, error_, "more than 32 outputs");
  p.is_output_ = true;
  return p;
}
OpAttrDef& OpDef::Attr(const char* name) {
  for (size_t i = 0; i < n_attrs_; ++i)
    if (strcmp(attrs_[i].name_, name != nullptr ? name : "") == 0) return attrs_[i];
  if (n_attrs_ >= kMaxAttrs) {
    error_ = "more than 32 attributes";
    static thread_local OpAttrDef overflow;
    overflow = OpAttrDef(name);
    return overflow;
  }
  attrs_[n_attrs_] = OpAttrDef(name);
  return attrs_[n_attrs_++];
}
}  // namespace ops

// ---- the tiling call ------------------------------------------------------------
namespace ascendopt {
namespace host {
namespace {

constexpr size_t kMaxTensors = 64;

const char* ge_dtype_name(ge::DataType t) {
  switch (t) {
    case ge::DT_FLOAT:
      return "DT_FLOAT";
    case ge::DT_FLOAT16:
      return "DT_FLOAT16";
    case ge::DT_BF16:
      return "DT_BF16";
    case ge::DT_INT8:
      return "DT_INT8";
    case ge::DT_UINT8:
      return "DT_UINT8";
    case ge::DT_INT16:
      return "DT_INT16";
    case ge::DT_UINT16:
      return "DT_UINT16";
    case ge::DT_INT32:
      return "DT_INT32";
    case ge::DT_UINT32:
      return "DT_UINT32";
    case ge::DT_INT64:
      return "DT_INT64";
    case ge::DT_UINT64:
      return "DT_UINT64";
    case ge::DT_BOOL:
      return "DT_BOOL";
    case ge::DT_DOUBLE:
      return "DT_DOUBLE";
    case ge::DT_COMPLEX64:
      return "DT_COMPLEX64";
    default:
      return "DT_?";
  }
}

// AscDtype (abi.h) -> GE's code.
bool ge_dtype_of(uint32_t asc, ge::DataType& out) {
  switch (asc) {
    case ASC_DT_F16:
      out = ge::DT_FLOAT16;
      return true;
    case ASC_DT_BF16:
      out = ge::DT_BF16;
      return true;
    case ASC_DT_F32:
      out = ge::DT_FLOAT;
      return true;
    case ASC_DT_I8:
      out = ge::DT_INT8;
      return true;
    case ASC_DT_U8:
      out = ge::DT_UINT8;
      return true;
    case ASC_DT_I16:
      out = ge::DT_INT16;
      return true;
    case ASC_DT_U16:
      out = ge::DT_UINT16;
      return true;
    case ASC_DT_I32:
      out = ge::DT_INT32;
      return true;
    case ASC_DT_U32:
      out = ge::DT_UINT32;
      return true;
    case ASC_DT_I64:
      out = ge::DT_INT64;
      return true;
    case ASC_DT_U64:
      out = ge::DT_UINT64;
      return true;
    case ASC_DT_BOOL:
      out = ge::DT_BOOL;
      return true;
    case ASC_DT_F64:
      out = ge::DT_DOUBLE;
      return true;
    case ASC_DT_C64:
      out = ge::DT_COMPLEX64;
      return true;
    default:
      return false;
  }
}

const char* req_kind_name(uint32_t kind) {
  switch (kind) {
    case ASC_ATTR_INT:
      return "Int";
    case ASC_ATTR_FLOAT:
      return "Float";
    case ASC_ATTR_BOOL:
      return "Bool";
    case ASC_ATTR_STR:
      return "String";
    case ASC_ATTR_LIST_INT:
      return "ListInt";
    case ASC_ATTR_LIST_FLOAT:
      return "ListFloat";
    default:
      return "unknown kind";
  }
}

// Buffers that live for one call (converted attribute lists).
struct Arena {
  void* blocks[kMaxAttrs] = {};
  size_t n = 0;
  void* alloc(size_t bytes) {
    if (n >= kMaxAttrs) request_error("too many converted attribute lists");
    void* p = calloc(bytes == 0 ? 1 : bytes, 1);
    if (p == nullptr) request_error("out of memory");
    blocks[n++] = p;
    return p;
  }
  ~Arena() {
    for (size_t i = 0; i < n; ++i) free(blocks[i]);
  }
};

const ops::OpDef* find_op(const char* op_type) {
  size_t count = 0;
  char names[512];
  names[0] = 0;
  for (const OpRegistration* r = g_registry_head; r != nullptr; r = r->next) {
    if (op_type != nullptr && strcmp(r->name, op_type) == 0) return r->create();
    ++count;
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", r->name);
  }
  if (count == 0) request_error("the host library registers no operator (no OP_ADD)");
  if (op_type != nullptr) request_error("no operator '%s' in the host library (it registers: %s)", op_type, names);
  if (count > 1) request_error("the host library registers %zu operators (%s); name one with op_type", count, names);
  return g_registry_head->create();
}

// Fills the tensors of one side and, per OpDef parameter, where its
// tensors are (`infos`, one per parameter of `params`).
void fill_tensors(const ops::OpDef& def, const char* side, uint32_t n, const AscHostTensor* src,
                  gert::Tensor* tensors, gert::CompileTimeTensorDesc* descs, const ops::OpParamDef* params,
                  size_t n_params, gert::AnchorInstanceInfo* infos) {
  const char* op = def.type_;
  if (n > kMaxTensors) request_error("%u %ss: the simulator supports at most %zu", n, side, kMaxTensors);
  if (n > 0 && src == nullptr) request_error("%ss: null tensor array", side);
  for (size_t p = 0; p < n_params; ++p) infos[p] = gert::AnchorInstanceInfo(0, 0);
  uint32_t last_param = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const AscHostTensor& t = src[i];
    if (t.ndim > ASC_HOST_MAX_DIMS)
      request_error("%s %u of %s has %u dimensions; at most %d", side, i, op, t.ndim, ASC_HOST_MAX_DIMS);
    ge::DataType dt;
    if (!ge_dtype_of(t.dtype, dt)) request_error("%s %u of %s: unknown AscDtype code %u", side, i, op, t.dtype);
    if (t.param >= n_params) request_error("the request gives %u %ss but OpDef %s declares %zu", n, side, op, n_params);
    if (t.param < last_param) request_error("%ss are not in OpDef parameter order", side);
    last_param = t.param;
    gert::AnchorInstanceInfo& info = infos[t.param];
    if (info.num_ == 0) info.start_ = i;
    ++info.num_;
    gert::Shape shape;
    for (uint32_t d = 0; d < t.ndim; ++d) shape.AppendDim(t.dims[d]);
    tensors[i].shape_.origin_ = shape;
    tensors[i].shape_.storage_ = shape;
    tensors[i].dtype_ = dt;
    tensors[i].data_ = t.data;
    tensors[i].data_len_ = t.data != nullptr ? t.data_len : 0;
    tensors[i].name_ = params[t.param].name_;
    descs[i].dtype_ = dt;
  }
}

// Checks each OpDef parameter of one side: how many tensors it has
// (REQUIRED one, OPTIONAL at most one, DYNAMIC any) and their dtypes
// (unless a per-SoC configuration redefines the parameters).
void check_params(const ops::OpDef& def, const char* side, const ops::OpParamDef* params, size_t n_params,
                  const gert::AnchorInstanceInfo* infos, const gert::Tensor* tensors, bool check_dtypes) {
  for (size_t k = 0; k < n_params; ++k) {
    const ops::OpParamDef& p = params[k];
    uint32_t num = infos[k].num_;
    if (p.param_type_ == ops::REQUIRED && num != 1) {
      if (num == 0)
        request_error("the request gives no %s '%s' but OpDef %s makes it REQUIRED", side, p.name_, def.type_);
      request_error("the request gives %u tensors for %s '%s' of OpDef %s, which is not DYNAMIC (a tensor list)",
                    num, side, p.name_, def.type_);
    }
    if (p.param_type_ == ops::OPTIONAL && num > 1)
      request_error("the request gives %u tensors for the OPTIONAL %s '%s' of OpDef %s", num, side, p.name_,
                    def.type_);
    if (!check_dtypes || p.n_dtypes_ == 0) continue;
    for (uint32_t r = 0; r < num; ++r) {
      uint32_t i = infos[k].start_ + r;
      bool ok = false;
      for (size_t d = 0; d < p.n_dtypes_; ++d) ok = ok || p.dtypes_[d] == tensors[i].dtype_;
      if (ok) continue;
      char allowed[400];
      allowed[0] = 0;
      for (size_t d = 0; d < p.n_dtypes_; ++d) {
        size_t used = strlen(allowed);
        snprintf(allowed + used, sizeof allowed - used, "%s%s", d ? ", " : "", ge_dtype_name(p.dtypes_[d]));
      }
      request_error("%s %u ('%s') of %s has dtype %s; the OpDef allows %s", side, i, p.name_, def.type_,
                    ge_dtype_name(tensors[i].dtype_), allowed);
    }
  }
}

// Sets `slot` from the request's value for attribute `decl`.
void attr_from_request(const ops::OpAttrDef& decl, const AscHostAttr& a, AttrSlot& slot, Arena& arena) {
  const char* op_kind = attr_kind_name(decl.kind_);
  auto mismatch = [&]() {
    request_error("attribute '%s' is %s in the OpDef but the request gives %s", decl.name_, op_kind,
                  req_kind_name(a.kind));
  };
  bool is_list = a.kind == ASC_ATTR_LIST_INT || a.kind == ASC_ATTR_LIST_FLOAT;
  if (is_list && a.list_len > 0 && (a.kind == ASC_ATTR_LIST_INT ? a.list_i == nullptr : a.list_f == nullptr))
    request_error("attribute '%s': null list", decl.name_);
  switch (decl.kind_) {
    case AttrKind::Int:
      if (a.kind != ASC_ATTR_INT) mismatch();
      slot.i = a.i;
      break;
    case AttrKind::Float:
      if (a.kind == ASC_ATTR_FLOAT)
        slot.f = (float)a.f;
      else if (a.kind == ASC_ATTR_INT)
        slot.f = (float)a.i;
      else
        mismatch();
      break;
    case AttrKind::Bool:
      if (a.kind != ASC_ATTR_BOOL) mismatch();
      slot.b = a.i != 0;
      break;
    case AttrKind::Str:
      if (a.kind != ASC_ATTR_STR) mismatch();
      slot.s = a.s != nullptr ? a.s : "";
      break;
    case AttrKind::ListInt: {
      if (a.kind == ASC_ATTR_LIST_FLOAT && a.list_len == 0) {
        slot.list_i.data_ = arena.alloc(0);
      } else {
        if (a.kind != ASC_ATTR_LIST_INT) mismatch();
        slot.list_i.data_ = a.list_len > 0 ? (const void*)a.list_i : arena.alloc(0);
      }
      slot.list_i.size_ = a.list_len;
      break;
    }
    case AttrKind::ListFloat: {
      if (!is_list) mismatch();
      float* values = static_cast<float*>(arena.alloc(a.list_len * sizeof(float)));
      for (uint32_t k = 0; k < a.list_len; ++k)
        values[k] = a.kind == ASC_ATTR_LIST_FLOAT ? a.list_f[k] : (float)a.list_i[k];
      slot.list_f.data_ = values;
      slot.list_f.size_ = a.list_len;
      break;
    }
    case AttrKind::ListBool: {
      if (!is_list || (a.kind == ASC_ATTR_LIST_FLOAT && a.list_len > 0)) mismatch();
      bool* values = static_cast<bool*>(arena.alloc(a.list_len * sizeof(bool)));
      for (uint32_t k = 0; k < a.list_len; ++k) {
        if (a.list_i[k] != 0 && a.list_i[k] != 1)
          request_error("attribute '%s' is ListBool; element %u of the request is %lld", decl.name_, k,
                        (long long)a.list_i[k]);
        values[k] = a.list_i[k] != 0;
      }
      slot.list_b.data_ = values;
      slot.list_b.size_ = a.list_len;
      break;
    }
    default:
      request_error("attribute '%s' has no type in OpDef (call Int(), Float(), ...)", decl.name_);
  }
}

// Sets `slot` from the OpDef default of `decl`.
void attr_from_default(const ops::OpAttrDef& decl, AttrSlot& slot) {
  slot.i = decl.default_i_;
  slot.f = decl.default_f_;
  slot.b = decl.default_b_;
  slot.s = decl.default_s_;
  slot.list_i.data_ = decl.default_list_;
  slot.list_i.size_ = decl.default_len_;
  slot.list_f.data_ = decl.default_list_;
  slot.list_f.size_ = decl.default_len_;
  slot.list_b.data_ = decl.default_list_;
  slot.list_b.size_ = decl.default_len_;
}

void fill_attrs(const ops::OpDef& def, const AscHostTilingIn& in, AttrSlot* slots, Arena& arena) {
  if (in.n_attrs > 0 && in.attrs == nullptr) request_error("null attribute array");
  for (uint32_t r = 0; r < in.n_attrs; ++r) {
    const char* name = in.attrs[r].name != nullptr ? in.attrs[r].name : "";
    bool declared = false;
    for (size_t k = 0; k < def.n_attrs_; ++k) declared = declared || strcmp(def.attrs_[k].name_, name) == 0;
    if (!declared) {
      char names[400];
      names[0] = 0;
      for (size_t k = 0; k < def.n_attrs_; ++k) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "", def.attrs_[k].name_);
      }
      request_error("the request gives attribute '%s', which OpDef %s does not declare (it declares: %s)", name,
                    def.type_, def.n_attrs_ ? names : "none");
    }
    for (uint32_t q = 0; q < r; ++q)
      if (in.attrs[q].name != nullptr && strcmp(in.attrs[q].name, name) == 0)
        request_error("the request gives attribute '%s' twice", name);
  }
  for (size_t k = 0; k < def.n_attrs_; ++k) {
    const ops::OpAttrDef& decl = def.attrs_[k];
    AttrSlot& slot = slots[k];
    slot.name = decl.name_;
    slot.kind = decl.kind_;
    if (decl.kind_ == AttrKind::None)
      request_error("attribute '%s' of OpDef %s has no type (call Int(), Float(), ...)", decl.name_, def.type_);
    const AscHostAttr* given = nullptr;
    for (uint32_t r = 0; r < in.n_attrs; ++r)
      if (in.attrs[r].name != nullptr && strcmp(in.attrs[r].name, decl.name_) == 0) given = &in.attrs[r];
    if (given != nullptr) {
      attr_from_request(decl, *given, slot, arena);
    } else if (decl.attr_type_ == ops::REQUIRED) {
      request_error("attribute '%s' of OpDef %s is REQUIRED and the request does not give it", decl.name_,
                    def.type_);
    } else if (!decl.has_default_) {
      request_error("attribute '%s' of OpDef %s is OPTIONAL without a default, and the request does not give it",
                    decl.name_, def.type_);
    } else {
      attr_from_default(decl, slot);
    }
  }
}

void set_message(AscHostTilingOut* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void set_message(AscHostTilingOut* out, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->message, sizeof out->message, fmt, ap);
  va_end(ap);
}

// Everything the tiling function sees, for one call.
struct CallState {
  gert::Tensor inputs[kMaxTensors];
  gert::CompileTimeTensorDesc input_descs[kMaxTensors];
  gert::Tensor outputs[kMaxTensors];
  gert::CompileTimeTensorDesc output_descs[kMaxTensors];
  gert::AnchorInstanceInfo input_params[kMaxParams];
  gert::AnchorInstanceInfo output_params[kMaxParams];
  AttrSlot attrs[kMaxAttrs];
  fe::PlatFormInfos platform;
  gert::TilingContext ctx;
};

// The bits of a ScalarVar as an element of its ScalarType, and that
// element's width in bytes (0 for a type InitValue does not take).
uint32_t scalar_bits(const ops::ScalarVar& v, uint64_t* bits) {
  double x = v.value;
  int64_t i = x < -9.2e18 ? INT64_MIN : x > 9.2e18 ? INT64_MAX : (int64_t)x;
  switch (v.type) {
    case ops::ScalarType::UINT64:
      *bits = x < 0 ? (uint64_t)i : x >= 1.8e19 ? UINT64_MAX : (uint64_t)x;
      return 8;
    case ops::ScalarType::INT64:
      *bits = (uint64_t)i;
      return 8;
    case ops::ScalarType::UINT32:
    case ops::ScalarType::INT32:
      *bits = (uint32_t)i;
      return 4;
    case ops::ScalarType::UINT16:
    case ops::ScalarType::INT16:
      *bits = (uint16_t)i;
      return 2;
    case ops::ScalarType::UINT8:
    case ops::ScalarType::INT8:
      *bits = (uint8_t)i;
      return 1;
    case ops::ScalarType::FLOAT32: {
      float f = (float)x;
      uint32_t u;
      memcpy(&u, &f, 4);
      *bits = u;
      return 4;
    }
    case ops::ScalarType::FLOAT16: {
      // float -> IEEE half, round to nearest even, overflow to inf.
      float f = (float)x;
      uint32_t u;
      memcpy(&u, &f, 4);
      uint32_t sign = (u >> 16) & 0x8000u;
      uint32_t e = (u >> 23) & 0xFFu, m = u & 0x7FFFFFu;
      uint32_t h;
      if (e == 0xFFu) {
        h = 0x7C00u | (m != 0 ? 0x200u : 0u);
      } else {
        int32_t he = (int32_t)e - 127 + 15;
        if (he >= 31) {
          h = 0x7C00u;
        } else if (he <= 0) {
          if (he < -10) {
            h = 0;
          } else {
            uint32_t mm = m | 0x800000u;
            uint32_t shift = (uint32_t)(14 - he);
            uint32_t q = mm >> shift, rem = mm & ((1u << shift) - 1), half = 1u << (shift - 1);
            h = q + (rem > half || (rem == half && (q & 1u)) ? 1u : 0u);
          }
        } else {
          uint32_t q = ((uint32_t)he << 10) | (m >> 13), rem = m & 0x1FFFu;
          h = q + (rem > 0x1000u || (rem == 0x1000u && (q & 1u)) ? 1u : 0u);
        }
      }
      *bits = sign | h;
      return 2;
    }
    default:
      return 0;
  }
}

// The initial values of the outputs that declare one (InitValue), one
// entry per output tensor of the request.
void output_inits(const ops::OpDef& def, const gert::AnchorInstanceInfo* infos, const gert::Tensor* tensors,
                  AscHostTilingOut* out) {
  for (size_t k = 0; k < def.n_outputs_; ++k) {
    const ops::OpParamDef& p = def.outputs_[k];
    if (p.init_kind_ == 0) continue;
    for (uint32_t r = 0; r < infos[k].num_; ++r) {
      uint32_t i = infos[k].start_ + r;
      const ops::ScalarVar* v = &p.init_value_;
      if (p.init_kind_ == 3) {
        size_t col = p.n_dtypes_;
        for (size_t d = 0; d < p.n_dtypes_ && col == p.n_dtypes_; ++d)
          if (p.dtypes_[d] == tensors[i].dtype_) col = d;
        if (col >= p.n_init_values_)
          request_error("output '%s' of %s has InitValue with %zu values, none for its dtype %s (column %zu)", p.name_,
                        def.type_, p.n_init_values_, ge_dtype_name(tensors[i].dtype_), col);
        v = &p.init_values_[col];
      }
      uint64_t bits = 0;
      uint32_t width = scalar_bits(*v, &bits);
      if (width == 0)
        request_error("output '%s' of %s has an InitValue of ScalarType %u, which the guide does not list", p.name_,
                      def.type_, (unsigned)v->type);
      if (out->n_output_inits == ASC_HOST_MAX_OUTPUT_INITS)
        request_error("more than %d output tensors with an InitValue", ASC_HOST_MAX_OUTPUT_INITS);
      AscHostOutputInit& e = out->output_inits[out->n_output_inits++];
      e.output = i;
      e.width = width;
      e.bits = bits;
    }
  }
}

// Restores the PlatformAscendCManager platform when the call ends.
struct CurrentPlatform {
  explicit CurrentPlatform(fe::PlatFormInfos* p) { g_current_platform = p; }
  ~CurrentPlatform() { g_current_platform = nullptr; }
};

void run(const AscHostTilingIn* in, AscHostTilingOut* out) {
  if (in == nullptr) request_error("null request");
  if (in->abi_version != ASC_HOST_ABI_VERSION)
    request_error("host ABI version %u, the library speaks %u", in->abi_version, ASC_HOST_ABI_VERSION);
  const ops::OpDef* def = find_op(in->op_type);
  if (def->error_ != nullptr) request_error("OpDef %s: %s", def->type_, def->error_);
  for (size_t i = 0; i < def->n_inputs_; ++i)
    if (def->inputs_[i].error_ != nullptr)
      request_error("OpDef %s input '%s': %s", def->type_, def->inputs_[i].name_, def->inputs_[i].error_);
  for (size_t i = 0; i < def->n_outputs_; ++i)
    if (def->outputs_[i].error_ != nullptr)
      request_error("OpDef %s output '%s': %s", def->type_, def->outputs_[i].name_, def->outputs_[i].error_);
  TilingFunc tiling = def->aicore_.tiling_;
  if (tiling == nullptr) {
    const ImplRegistration* impl = find_impl(def->type_, 1);
    if (impl != nullptr) tiling = impl->tiling;
  }
  if (tiling == nullptr)
    request_error("OpDef %s has no tiling function (AICore().SetTiling, or IMPL_OP_OPTILING(%s).Tiling)",
                  def->type_, def->type_);
  const ImplRegistration* parse = find_impl(def->type_, 2);

  CallState* st = new CallState();
  struct Owner {
    CallState* p;
    ~Owner() { delete p; }
  } owner{st};
  Arena arena;
  fill_tensors(*def, "input", in->n_inputs, in->inputs, st->inputs, st->input_descs, def->inputs_, def->n_inputs_,
               st->input_params);
  fill_tensors(*def, "output", in->n_outputs, in->outputs, st->outputs, st->output_descs, def->outputs_,
               def->n_outputs_, st->output_params);
  bool check_dtypes = !def->aicore_.config_redefines_params_;
  check_params(*def, "input", def->inputs_, def->n_inputs_, st->input_params, st->inputs, check_dtypes);
  check_params(*def, "output", def->outputs_, def->n_outputs_, st->output_params, st->outputs, check_dtypes);
  fill_attrs(*def, *in, st->attrs, arena);
  st->platform.info_ = in->platform;
  if (in->tiling_capacity > 0 && in->tiling_buf == nullptr) request_error("null tiling buffer");
  if (in->tiling_buf != nullptr) memset(in->tiling_buf, 0, in->tiling_capacity);

  gert::TilingContext& ctx = st->ctx;
  ctx.inputs_ = {st->inputs, st->input_descs, in->n_inputs, "inputs", st->input_params, def->n_inputs_};
  ctx.outputs_ = {st->outputs, st->output_descs, in->n_outputs, "outputs", st->output_params, def->n_outputs_};
  ctx.attrs_.slots_ = st->attrs;
  ctx.attrs_.n_ = def->n_attrs_;
  ctx.attrs_.op_ = def->type_;
  ctx.platform_ = &st->platform;
  ctx.node_type_ = def->type_;
  ctx.raw_tiling_.data_ = in->tiling_buf;
  ctx.raw_tiling_.capacity_ = in->tiling_capacity;

  // The compile info of a TilingParse registration, alive for the call.
  struct CompileInfo {
    const ImplRegistration* reg;
    void* p;
    ~CompileInfo() {
      if (p != nullptr) reg->delete_compile_info(p);
    }
  } info{parse, parse != nullptr ? parse->new_compile_info() : nullptr};
  gert::TilingParseContext parse_ctx;
  parse_ctx.compile_info_ = info.p;
  parse_ctx.platform_ = &st->platform;
  parse_ctx.node_type_ = def->type_;
  parse_ctx.attrs_ = &ctx.attrs_;
  ctx.compile_info_ = info.p;

  uint32_t status;
  g_last_error[0] = '\0';
  {
    CurrentPlatform current(&st->platform);
    try {
      if (parse != nullptr) {
        uint32_t parsed = parse->tiling_parse(&parse_ctx);
        if (parsed != ge::GRAPH_SUCCESS) {
          out->status = (int32_t)ge::GRAPH_FAILED;
          out->error_kind = ASC_HOST_ERR_TILING;
          set_message(out, "the TilingParse function of %s returned %u%s%s", def->type_, parsed,
                      g_last_error[0] ? "; it logged: " : "", g_last_error);
          return;
        }
      }
      status = tiling(&ctx);
    } catch (const HostFailure& f) {
      out->status = (int32_t)ge::GRAPH_FAILED;
      out->error_kind = ASC_HOST_ERR_TILING;
      set_message(out, "in the tiling function of %s: %s", def->type_, f.message);
      return;
    } catch (const std::exception& e) {
      out->status = (int32_t)ge::GRAPH_FAILED;
      out->error_kind = ASC_HOST_ERR_TILING;
      set_message(out, "the tiling function of %s threw: %s", def->type_, e.what());
      return;
    } catch (...) {
      out->status = (int32_t)ge::GRAPH_FAILED;
      out->error_kind = ASC_HOST_ERR_TILING;
      set_message(out, "the tiling function of %s threw an exception", def->type_);
      return;
    }
  }
  out->status = (int32_t)status;
  if (status == ge::GRAPH_SUCCESS) output_inits(*def, st->output_params, st->outputs, out);
  out->block_dim = ctx.block_dim_;
  out->tiling_key = ctx.tiling_key_;
  out->tiling_size = ctx.raw_tiling_.size_;
  out->n_workspaces = (uint32_t)ctx.n_workspaces_;
  for (size_t i = 0; i < ctx.n_workspaces_; ++i) out->workspaces[i] = ctx.workspaces_[i];
  if (status != ge::GRAPH_SUCCESS) {
    out->error_kind = ASC_HOST_ERR_TILING;
    set_message(out, "the tiling function of %s returned %u%s%s%s", def->type_, status,
                status == ge::GRAPH_FAILED ? " (GRAPH_FAILED)" : "", g_last_error[0] ? "; it logged: " : "",
                g_last_error);
  }
}

}  // namespace
}  // namespace host
}  // namespace ascendopt

// ---- the description of the registered operators ---------------------------
// `ascendopt_host_describe` writes every OpDef the library registers as one
// JSON document (inputs and outputs with their parameter types, dtype and
// format lists, attributes with types and defaults, per-SoC
// configurations), so that ascendopt learns an operator's interface from
// the very code CANN would register, macros and helper vectors included.
namespace ascendopt {
namespace host {
namespace {

void json_str(std::string& out, const char* s) {
  out += '"';
  for (const char* c = s != nullptr ? s : ""; *c != '\0'; ++c) {
    unsigned char ch = (unsigned char)*c;
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += (char)ch;
    } else if (ch < 0x20) {
      char esc[8];
      snprintf(esc, sizeof esc, "\\u%04x", ch);
      out += esc;
    } else {
      out += (char)ch;
    }
  }
  out += '"';
}

void json_dtype(std::string& out, ge::DataType t) {
  const char* name = ge_dtype_name(t);
  if (strcmp(name, "DT_?") != 0) {
    json_str(out, name);
  } else {
    char code[24];
    snprintf(code, sizeof code, "DT_%d", (int)t);
    json_str(out, code);
  }
}

const char* ge_format_name(ge::Format f) {
  switch (f) {
    case ge::FORMAT_NCHW:
      return "FORMAT_NCHW";
    case ge::FORMAT_NHWC:
      return "FORMAT_NHWC";
    case ge::FORMAT_ND:
      return "FORMAT_ND";
    case ge::FORMAT_NC1HWC0:
      return "FORMAT_NC1HWC0";
    case ge::FORMAT_FRACTAL_Z:
      return "FORMAT_FRACTAL_Z";
    case ge::FORMAT_HWCN:
      return "FORMAT_HWCN";
    case ge::FORMAT_NDHWC:
      return "FORMAT_NDHWC";
    case ge::FORMAT_FRACTAL_NZ:
      return "FORMAT_FRACTAL_NZ";
    case ge::FORMAT_NCDHW:
      return "FORMAT_NCDHW";
    case ge::FORMAT_DHWCN:
      return "FORMAT_DHWCN";
    case ge::FORMAT_NDC1HWC0:
      return "FORMAT_NDC1HWC0";
    case ge::FORMAT_CN:
      return "FORMAT_CN";
    case ge::FORMAT_NC:
      return "FORMAT_NC";
    case ge::FORMAT_NCL:
      return "FORMAT_NCL";
    default:
      return nullptr;
  }
}

const char* option_name(ops::Option o) {
  switch (o) {
    case ops::IGNORE:
      return "ignore";
    case ops::OPTIONAL:
      return "optional";
    case ops::REQUIRED:
      return "required";
    case ops::DYNAMIC:
      return "dynamic";
    case ops::VIRTUAL:
      return "virtual";
  }
  return "unknown";
}

void json_param(std::string& out, const ops::OpParamDef& p) {
  out += "{\"name\":";
  json_str(out, p.name_);
  out += ",\"param_type\":";
  json_str(out, option_name(p.param_type_));
  out += ",\"dtypes\":[";
  for (size_t k = 0; k < p.n_dtypes_; ++k) {
    if (k) out += ',';
    json_dtype(out, p.dtypes_[k]);
  }
  out += "],\"dtype_list\":";
  out += p.dtype_list_ ? "true" : "false";
  out += ",\"formats\":[";
  for (size_t k = 0; k < p.n_formats_; ++k) {
    if (k) out += ',';
    const char* name = ge_format_name(p.formats_[k]);
    char code[32];
    if (name == nullptr) {
      snprintf(code, sizeof code, "FORMAT_%d", (int)p.formats_[k]);
      name = code;
    }
    json_str(out, name);
  }
  out += "],\"bin_query\":[";
  for (size_t k = 0; k < p.n_bin_query_; ++k) {
    if (k) out += ',';
    json_dtype(out, p.bin_query_[k]);
  }
  out += "],\"value_depend\":";
  json_str(out, option_name(p.value_depend_));
  out += ",\"scalar\":";
  out += p.scalar_ == 1 ? "\"scalar\"" : p.scalar_ == 2 ? "\"scalar_list\"" : "null";
  out += ",\"follow\":";
  if (p.follow_ != nullptr) {
    json_str(out, p.follow_);
  } else {
    out += "null";
  }
  out += ",\"error\":";
  if (p.error_ != nullptr) {
    json_str(out, p.error_);
  } else {
    out += "null";
  }
  out += '}';
}

void json_params(std::string& out, const ops::OpParamDef* params, size_t n, bool outputs) {
  out += '[';
  bool first = true;
  for (size_t i = 0; i < n; ++i) {
    if (params[i].is_output_ != outputs) continue;
    if (!first) out += ',';
    first = false;
    json_param(out, params[i]);
  }
  out += ']';
}

void json_number(std::string& out, double v) {
  char num[40];
  if (v != v || v - v != 0) {
    out += "null";  // NaN and infinities have no JSON form
    return;
  }
  snprintf(num, sizeof num, "%.9g", v);
  out += num;
}

void json_attr(std::string& out, const ops::OpAttrDef& a) {
  out += "{\"name\":";
  json_str(out, a.name_);
  out += ",\"type\":";
  json_str(out, a.kind_ == AttrKind::None ? "None" : attr_kind_name(a.kind_));
  out += ",\"required\":";
  out += a.attr_type_ == ops::REQUIRED ? "true" : "false";
  out += ",\"default\":";
  if (!a.has_default_) {
    out += "null";
  } else {
    char num[40];
    switch (a.kind_) {
      case AttrKind::Int:
        snprintf(num, sizeof num, "%lld", (long long)a.default_i_);
        out += num;
        break;
      case AttrKind::Float:
        json_number(out, a.default_f_);
        break;
      case AttrKind::Bool:
        out += a.default_b_ ? "true" : "false";
        break;
      case AttrKind::Str:
        json_str(out, a.default_s_);
        break;
      case AttrKind::ListInt:
      case AttrKind::ListFloat:
      case AttrKind::ListBool: {
        out += '[';
        for (size_t k = 0; k < a.default_len_; ++k) {
          if (k) out += ',';
          if (a.kind_ == AttrKind::ListInt) {
            snprintf(num, sizeof num, "%lld", (long long)static_cast<const int64_t*>(a.default_list_)[k]);
            out += num;
          } else if (a.kind_ == AttrKind::ListFloat) {
            json_number(out, static_cast<const float*>(a.default_list_)[k]);
          } else {
            out += static_cast<const bool*>(a.default_list_)[k] ? "true" : "false";
          }
        }
        out += ']';
        break;
      }
      default:
        out += "null";
    }
  }
  out += '}';
}

void json_op(std::string& out, const OpRegistration* r) {
  out += "{\"op_type\":";
  json_str(out, r->name);
  const ops::OpDef* def = nullptr;
  char failure[960];
  failure[0] = 0;
  try {
    def = r->create();
  } catch (const HostFailure& f) {
    snprintf(failure, sizeof failure, "%s", f.message);
  } catch (const std::exception& e) {
    snprintf(failure, sizeof failure, "building the OpDef threw: %s", e.what());
  } catch (...) {
    snprintf(failure, sizeof failure, "building the OpDef threw an exception");
  }
  if (def == nullptr) {
    out += ",\"error\":";
    json_str(out, failure[0] ? failure : "the OpDef could not be built");
    out += '}';
    return;
  }
  out += ",\"error\":";
  if (def->error_ != nullptr) {
    json_str(out, def->error_);
  } else {
    out += "null";
  }
  out += ",\"tiling\":";
  out += (def->aicore_.tiling_ != nullptr || find_impl(def->type_, 1) != nullptr) ? "true" : "false";
  out += ",\"inputs\":";
  json_params(out, def->inputs_, def->n_inputs_, false);
  out += ",\"outputs\":";
  json_params(out, def->outputs_, def->n_outputs_, true);
  out += ",\"attrs\":[";
  for (size_t k = 0; k < def->n_attrs_; ++k) {
    if (k) out += ',';
    json_attr(out, def->attrs_[k]);
  }
  out += "],\"configs\":[";
  for (size_t k = 0; k < def->aicore_.n_configs_; ++k) {
    if (k) out += ',';
    out += "{\"soc\":";
    json_str(out, def->aicore_.config_socs_[k]);
    const ops::OpAICoreConfig* c = def->aicore_.configs_[k];
    if (c != nullptr && c->n_params_ > 0) {
      out += ",\"inputs\":";
      json_params(out, c->params_, c->n_params_, false);
      out += ",\"outputs\":";
      json_params(out, c->params_, c->n_params_, true);
    }
    out += '}';
  }
  out += "]}";
}

}  // namespace
}  // namespace host
}  // namespace ascendopt

// Writes the description (JSON, NUL-terminated when it fits) into `buf`
// and its length without the NUL into *len; returns 0, or -1 when it did
// not fit (call again with a buffer of *len + 1 bytes).
extern "C" __attribute__((visibility("default"))) int32_t ascendopt_host_describe(char* buf, uint64_t cap,
                                                                                  uint64_t* len) {
  using namespace ascendopt::host;
  std::string out = "{\"ops\":[";
  bool first = true;
  for (const OpRegistration* r = g_registry_head; r != nullptr; r = r->next) {
    if (!first) out += ',';
    first = false;
    json_op(out, r);
  }
  out += "]}";
  if (len != nullptr) *len = out.size();
  if (buf == nullptr || cap < out.size() + 1) return -1;
  memcpy(buf, out.c_str(), out.size() + 1);
  return 0;
}

// ---- run-time knobs of a parametrised build (ascendopt/host/knob_value.h) --
namespace {
long long g_knobs[256];
int g_knob_count = -1;  // -1: ASCENDOPT_HOST_KNOBS not read yet

void read_knobs() {
  g_knob_count = 0;
  const char* text = getenv("ASCENDOPT_HOST_KNOBS");
  while (text != nullptr && *text != '\0' && g_knob_count < 256) {
    char* end = nullptr;
    g_knobs[g_knob_count++] = strtoll(text, &end, 10);
    if (end == text) break;
    text = *end == ',' ? end + 1 : end;
  }
}
}  // namespace

extern "C" __attribute__((visibility("default"))) long long ascendopt_knob_value(int index) {
  if (g_knob_count < 0) read_knobs();
  if (index < 0 || index >= g_knob_count) {
    ascendopt::host::fail("knob %d of the parametrised host library has no value in ASCENDOPT_HOST_KNOBS", index);
  }
  return g_knobs[index];
}

extern "C" __attribute__((visibility("default"))) int32_t ascendopt_host_tiling(const AscHostTilingIn* in,
                                                                                AscHostTilingOut* out) {
  using namespace ascendopt::host;
  if (out == nullptr) return (int32_t)ge::GRAPH_FAILED;
  memset(out, 0, sizeof *out);
  try {
    run(in, out);
  } catch (const RequestError& e) {
    out->status = (int32_t)ge::GRAPH_FAILED;
    out->error_kind = ASC_HOST_ERR_REQUEST;
    set_message(out, "%s", e.message);
  } catch (const HostFailure& f) {
    // fail() outside the tiling function: building the OpDef.
    out->status = (int32_t)ge::GRAPH_FAILED;
    out->error_kind = ASC_HOST_ERR_REQUEST;
    set_message(out, "%s", f.message);
  } catch (const std::exception& e) {
    out->status = (int32_t)ge::GRAPH_FAILED;
    out->error_kind = ASC_HOST_ERR_REQUEST;
    set_message(out, "building the OpDef threw: %s", e.what());
  } catch (...) {
    out->status = (int32_t)ge::GRAPH_FAILED;
    out->error_kind = ASC_HOST_ERR_REQUEST;
    set_message(out, "building the OpDef threw an exception");
  }
  return out->status;
}
