// ascendopt emulation of CANN's register/tilingdata_base.h: the TilingData
// definition macros, for both sides of an operator.
//
// An op's `<name>_tiling.h` is compiled twice: into the host library (here
// the struct gets set_/get_ accessors, SaveToBuffer and GetDataSize) and,
// force-included with -DASCENDOPT_KERNEL_SIDE, into the kernel library
// (GET_TILING_DATA reads the same struct from GM). On both sides the macros
// expand to the same standard-layout struct: the fields are public members
// named as declared, in declaration order, with natural C++ alignment, and
// the struct's bytes are the tiling data (GetDataSize() == sizeof).
// The constructor zeroes the whole struct, padding included, so the bytes
// are deterministic.
//
// Clean-room, from the AscendC guide 6.4.4 (TilingData结构定义/注册).
#ifndef ASCENDOPT_REGISTER_TILINGDATA_BASE_H
#define ASCENDOPT_REGISTER_TILINGDATA_BASE_H

// CANN's header brings GE's types and the gert contexts with it, and tiling
// headers use them beside their TilingData (ge::DataType members, a
// gert::TilingContext pointer, compile-info helpers); the kernel unit, which
// compiles the same header, sees them too, but not the host's standard
// library bundle: its <cmath> would clash with a kernel named like a C math
// function (extern "C" void cos(GM_ADDR, ...)).
#ifndef ASCENDOPT_KERNEL_SIDE
#include "../ascendopt/host/std_bundle.h"
#endif
#include "../ascendopt/host/core.h"
#include "../ascendopt/host/context.h"
#ifdef ASCENDOPT_KERNEL_SIDE
#include "../ascendopt/kernel/tiling.h"
#endif

#ifdef ASCENDOPT_KERNEL_SIDE
#define ASCENDOPT_TILING_HOST_METHODS(class_name)
#else
namespace ascendopt {
namespace host {
inline void save_tiling(void* buf, size_t capacity, const void* data, size_t size, const char* name) {
  if (buf == nullptr) fail("%s::SaveToBuffer: the buffer is null", name);
  if (size > capacity)
    fail("%s::SaveToBuffer: the tiling data is %zu bytes, the buffer holds %zu", name, size, capacity);
  memcpy(buf, data, size);
}
}  // namespace host
}  // namespace ascendopt
#define ASCENDOPT_TILING_HOST_METHODS(class_name)                                                 \
  void SaveToBuffer(void* buf, size_t capacity) const {                                           \
    ::ascendopt::host::save_tiling(buf, capacity, this, sizeof(*this), #class_name);               \
  }                                                                                               \
  size_t GetDataSize() const { return sizeof(*this); }
#endif

#ifdef ASCENDOPT_KERNEL_SIDE
// GET_TILING_DATA's fallback: the only struct the header defines
// (ascendopt/kernel/tiling.h).
#define ASCENDOPT_TILING_SOLE_STRUCT(class_name) \
  class class_name;                              \
  class_name ascendopt_sole_tiling_struct(::optiling::AscendoptTilingUniq<class_name>);
#else
#define ASCENDOPT_TILING_SOLE_STRUCT(class_name)
#endif

#define BEGIN_TILING_DATA_DEF(class_name)                      \
  ASCENDOPT_TILING_SOLE_STRUCT(class_name)                     \
  class class_name {                                           \
   public:                                                     \
    class_name() { memset((void*)this, 0, sizeof(*this)); }    \
    ASCENDOPT_TILING_HOST_METHODS(class_name)

// The setters' parameters have names no field takes (a field named `value`
// would otherwise be assigned to itself in `set_value`).
#define TILING_DATA_FIELD_DEF(data_type, field_name)           \
  data_type field_name;                                        \
  void set_##field_name(data_type ascendopt_new_value) { field_name = ascendopt_new_value; } \
  data_type get_##field_name() const { return field_name; }

// set_ copies `arr_size` elements from the pointer (guide 6.4.4.2).
#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name)            \
  arr_type field_name[arr_size];                                             \
  void set_##field_name(const arr_type* ascendopt_new_values) {              \
    if (ascendopt_new_values != nullptr)                                     \
      memcpy(field_name, ascendopt_new_values, sizeof(field_name));          \
  }                                                                          \
  arr_type* get_##field_name() { return field_name; }                        \
  const arr_type* get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name)                     \
  struct_type field_name;                                                        \
  void set_##field_name(const struct_type& ascendopt_new_value) { field_name = ascendopt_new_value; } \
  struct_type& get_##field_name() { return field_name; }                          \
  const struct_type& get_##field_name() const { return field_name; }

#define END_TILING_DATA_DEF \
  }                         \
  ;

#define ASCENDOPT_TILING_LAYOUT_CHECK(class_name)                                        \
  static_assert(__is_standard_layout(class_name) && __is_trivially_copyable(class_name), \
                "tiling struct " #class_name " must be standard-layout and trivially copyable");

#ifdef ASCENDOPT_KERNEL_SIDE
// Tiling structs are named unqualified in kernels, as CANN generates them
// outside any namespace for the kernel.
namespace optiling {}
using namespace optiling;
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) \
  ASCENDOPT_TILING_LAYOUT_CHECK(class_name)             \
  ASCENDOPT_KERNEL_REGISTER_TILING_DATA_CLASS(op_type, class_name)
#else
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) ASCENDOPT_TILING_LAYOUT_CHECK(class_name)
#endif

#endif
