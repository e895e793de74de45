// ascendopt AscendC emulation, kernel side of the tiling data:
// GET_TILING_DATA, GET_TILING_DATA_WITH_STRUCT, GET_TILING_DATA_MEMBER,
// GET_TILING_DATA_PTR_WITH_STRUCT, REGISTER_TILING_DEFAULT and TILING_KEY_IS.
//
// The tiling struct is the same standard-layout struct the host wrote
// (register/tilingdata_base.h expands the same macros on both sides);
// GET_TILING_DATA copies its bytes from GM through the runtime
// (gm_read_bytes), so the copy is bounds-checked and traced.
//
// Which struct GET_TILING_DATA uses: REGISTER_TILING_DEFAULT(T) in the
// kernel function if present, else the struct registered with
// REGISTER_TILING_DATA_CLASS(<OpType>, T) (the same T registered for
// several op types counts once), else the only struct the tiling header
// defines. Registrations of nested structs (`<Struct>Op`) are not
// candidates; a per-tiling-key registration (`<OpType>_<key>`) is read with
// GET_TILING_DATA_WITH_STRUCT, and GET_TILING_DATA under that key stops the
// launch with a message (the simulator compiles one kernel for all keys,
// so it cannot pick the key's struct). The choice is made by overload
// resolution on declarations the macros leave behind (see
// ascendopt_default_tiling_struct).
//
// Clean-room, from the AscendC guide 2.10.2.5 and 6.4.4.
#ifndef ASCENDOPT_KERNEL_TILING_H
#define ASCENDOPT_KERNEL_TILING_H

#include "types.h"

namespace optiling {
template <bool IsDefault>
struct AscendoptTilingTag {};
// Keyed on the registered class: registering one class for several op
// types (a project's common header registers its shared struct for every
// operator) declares the same function again, not a second overload.
template <class T>
struct AscendoptTilingUniq {};
// Converts to every AscendoptTilingUniq<T>, so one call matches the
// default registration whatever its class.
struct AscendoptTilingAny {
  template <class T>
  operator AscendoptTilingUniq<T>() const {
    return {};
  }
};
// Per-instance structs of a tiling-template kernel
// (ASCENDOPT_REGISTER_TILING_FOR_TEMPLATE): GET_TILING_DATA first asks
// ascendopt_keyed_tiling_struct with an AscendoptKeyedCall, which converts
// only to the parameter of a registration whose condition holds
// (AscendoptKeyedFor<line>; an AscendoptTilingNever<line> otherwise);
// when none holds it reads the default struct as before.
// Each registration site has its own parameter types (a registration's
// declaration names one function for every instance of the kernel, so the
// true and false forms must differ per site, not per condition).
template <int N>
struct AscendoptKeyedFor {};
template <int N>
struct AscendoptTilingNever {
  AscendoptTilingNever() = delete;
};
struct AscendoptKeyedCall {
  template <int N>
  operator AscendoptKeyedFor<N>() const {
    return {};
  }
};
struct AscendoptNoDefaultTiling {};
struct AscendoptTrue {
  static constexpr bool value = true;
};
struct AscendoptFalse {
  static constexpr bool value = false;
};

// Fallbacks, chosen only when no registration matches (an ellipsis is the
// worst conversion).
AscendoptNoDefaultTiling ascendopt_default_tiling_struct(AscendoptTilingTag<true>, ...);
AscendoptNoDefaultTiling ascendopt_keyed_tiling_struct(AscendoptTilingTag<true>, ...);

// `<OpType>_<digits>`: a struct for one tiling key.
constexpr bool ascendopt_is_keyed_registration(const char* op) {
  size_t n = 0;
  while (op[n] != 0) ++n;
  size_t i = n;
  while (i > 0 && op[i - 1] >= '0' && op[i - 1] <= '9') --i;
  return i < n && i > 0 && op[i - 1] == '_';
}
// `<Struct>Op`: a nested struct registered for the framework's checks.
constexpr bool ascendopt_is_struct_registration(const char* op, const char* cls) {
  size_t i = 0;
  while (cls[i] != 0 && op[i] == cls[i]) ++i;
  return cls[i] == 0 && op[i] == 'O' && op[i + 1] == 'p' && op[i + 2] == 0;
}
constexpr bool ascendopt_is_default_registration(const char* op, const char* cls) {
  return !ascendopt_is_keyed_registration(op) && !ascendopt_is_struct_registration(op, cls);
}
// The tiling key of a keyed registration (`<OpType>_<digits>`), else
// UINT64_MAX.
constexpr uint64_t ascendopt_tiling_key_of(const char* op) {
  if (!ascendopt_is_keyed_registration(op)) return UINT64_MAX;
  size_t n = 0;
  while (op[n] != 0) ++n;
  size_t i = n;
  while (i > 0 && op[i - 1] >= '0' && op[i - 1] <= '9') --i;
  uint64_t key = 0;
  for (; i < n; ++i) key = key * 10 + (uint64_t)(op[i] - '0');
  return key;
}

// The struct GET_TILING_DATA reads when the tiling header registers no
// default one: the only struct it defines (AscendoptNoDefaultTiling when
// there is none; ambiguous, hence an error, when there are several).
AscendoptNoDefaultTiling ascendopt_sole_tiling_struct(...);
// Several structs make the call ambiguous: a substitution failure here,
// so "no struct" rather than a raw overload error.
template <class Any, class = void>
struct AscendoptSoleTiling {
  using type = AscendoptNoDefaultTiling;
};
template <class Any>
struct AscendoptSoleTiling<Any, ::std::void_t<decltype(ascendopt_sole_tiling_struct(Any{}))>> {
  using type = decltype(ascendopt_sole_tiling_struct(Any{}));
};
template <class Default, class Any>
struct AscendoptTilingPick {
  using type = Default;
};
template <class Any>
struct AscendoptTilingPick<AscendoptNoDefaultTiling, Any> {
  using type = typename AscendoptSoleTiling<Any>::type;
};
template <class Keyed, class Default>
struct AscendoptKeyedPick {
  using type = Keyed;
};
template <class Default>
struct AscendoptKeyedPick<AscendoptNoDefaultTiling, Default> {
  using type = Default;
};
}  // namespace optiling

namespace ascendopt {
// Tiling keys that have a struct of their own (REGISTER_TILING_DATA_CLASS(
// <OpType>_<key>, ...)), noted when the kernel library is loaded.
inline uint64_t g_keyed_tiling_keys[64];
inline uint32_t g_keyed_tiling_count = 0;
inline bool note_keyed_tiling(uint64_t key) {
  if (key != UINT64_MAX && g_keyed_tiling_count < 64) g_keyed_tiling_keys[g_keyed_tiling_count++] = key;
  return true;
}
// GET_TILING_DATA reads the default struct: under a tiling key with a
// struct of its own that would be the wrong one, so the launch stops.
inline void check_default_tiling(const Loc& loc) {
  uint64_t key = ASC_RT->tiling_key();
  for (uint32_t i = 0; i < g_keyed_tiling_count; ++i) {
    if (g_keyed_tiling_keys[i] == key) {
      ASC_RT->trap(
          "GET_TILING_DATA under a tiling key whose struct is registered on its own "
          "(REGISTER_TILING_DATA_CLASS(<OpType>_<key>, ...)): the simulator reads the default struct there; "
          "use GET_TILING_DATA_WITH_STRUCT(<Struct>, ...)",
          loc.c());
    }
  }
}
}  // namespace ascendopt

#define ASCENDOPT_TILING_CAT2(a, b) a##b
#define ASCENDOPT_TILING_CAT(a, b) ASCENDOPT_TILING_CAT2(a, b)

// Kernel-side REGISTER_TILING_DATA_CLASS (used by register/tilingdata_base.h
// when ASCENDOPT_KERNEL_SIDE is defined): leaves declarations that
// GET_TILING_DATA finds by argument-dependent lookup in namespace optiling.
#define ASCENDOPT_KERNEL_REGISTER_TILING_DATA_CLASS(op_type, class_name)                              \
  class_name ascendopt_default_tiling_struct(                                                         \
      ::optiling::AscendoptTilingTag<::optiling::ascendopt_is_default_registration(#op_type, #class_name)>, \
      ::optiling::AscendoptTilingUniq<class_name>);                                                   \
  static const bool ASCENDOPT_TILING_CAT(ascendopt_keyed_tiling_, __COUNTER__) =                    \
      ::ascendopt::note_keyed_tiling(::optiling::ascendopt_tiling_key_of(#op_type));

// Makes `tiling_type` the struct of GET_TILING_DATA in this kernel function
// (standard C++ tiling structs). A block-scope declaration hides every
// namespace-scope one.
#define REGISTER_TILING_DEFAULT(tiling_type)                                                          \
  tiling_type ascendopt_default_tiling_struct(::optiling::AscendoptTilingTag<true>,                  \
                                              ::optiling::AscendoptTilingAny)

#define REGISTER_TILING_FOR_TILINGKEY(condition, tiling_type)                                         \
  static_assert(::ascendopt::always_false<tiling_type>,                                              \
                "not supported by the ascendopt simulator: REGISTER_TILING_FOR_TILINGKEY outside a "        \
                "tiling-template kernel (template <...> __global__ __aicore__ void ...)")

// REGISTER_TILING_FOR_TILINGKEY("<condition>", T) in a tiling-template
// kernel (guide 2.10.2.5.5): the build (crates/sim/src/build/tpl.rs) turns
// the condition string into the expression over the template parameters,
// so GET_TILING_DATA in the instance where it holds reads T. Two conditions
// that hold in one instance make the declarations clash (a compile error).
#define ASCENDOPT_REGISTER_TILING_FOR_TEMPLATE(condition, tiling_type) \
  ASCENDOPT_REGISTER_TILING_FOR_TEMPLATE_AT(condition, tiling_type, __COUNTER__)
#define ASCENDOPT_REGISTER_TILING_FOR_TEMPLATE_AT(condition, tiling_type, site)                     \
  ::optiling::AscendoptNoDefaultTiling ascendopt_keyed_tiling_struct(::optiling::AscendoptTilingTag<true>, ...); \
  tiling_type ascendopt_keyed_tiling_struct(                                                       \
      ::optiling::AscendoptTilingTag<true>,                                                        \
      ::std::conditional_t<(condition), ::optiling::AscendoptKeyedFor<site>,                       \
                           ::optiling::AscendoptTilingNever<site>>)

#define ASCENDOPT_READ_TILING(var, tiling_arg) \
  ASC_RT->gm_read_bytes((const void*)(tiling_arg), (void*)&(var), sizeof(var), ::ascendopt::Loc().c())

// Declares `tiling_data` of the default tiling struct and fills it from GM.
#define GET_TILING_DATA(tiling_data, tiling_arg)                                                       \
  using ascendopt_tiling_type_##tiling_data = typename ::optiling::AscendoptKeyedPick<                \
      decltype(ascendopt_keyed_tiling_struct(::optiling::AscendoptTilingTag<true>{},                  \
                                             ::optiling::AscendoptKeyedCall{})),                      \
      typename ::optiling::AscendoptTilingPick<                                                       \
          decltype(ascendopt_default_tiling_struct(::optiling::AscendoptTilingTag<true>{},            \
                                                   ::optiling::AscendoptTilingAny{})),                \
          ::optiling::AscendoptTilingAny>::type>::type;                                               \
  static_assert(!::std::is_same<ascendopt_tiling_type_##tiling_data, ::optiling::AscendoptNoDefaultTiling>::value, \
                "GET_TILING_DATA: no default tiling struct (the tiling header registers none with "       \
                "REGISTER_TILING_DATA_CLASS(<OpType>, <Struct>) and defines none or several); register "  \
                "one, use REGISTER_TILING_DEFAULT(<Struct>) in the kernel, or GET_TILING_DATA_WITH_STRUCT"); \
  ::ascendopt::check_default_tiling(::ascendopt::Loc());                                              \
  ascendopt_tiling_type_##tiling_data tiling_data;                                                    \
  ASCENDOPT_READ_TILING(tiling_data, tiling_arg)

// Declares `tiling_data` of type `tiling_type` and fills it from GM.
#define GET_TILING_DATA_WITH_STRUCT(tiling_type, tiling_data, tiling_arg) \
  tiling_type tiling_data;                                                \
  ASCENDOPT_READ_TILING(tiling_data, tiling_arg)

// Declares `tiling_data` as a pointer to a local copy of the struct.
#define GET_TILING_DATA_PTR_WITH_STRUCT(tiling_type, tiling_data, tiling_arg) \
  tiling_type ascendopt_tiling_copy_##tiling_data;                            \
  ASCENDOPT_READ_TILING(ascendopt_tiling_copy_##tiling_data, tiling_arg);     \
  const tiling_type* tiling_data = &ascendopt_tiling_copy_##tiling_data

// Declares `var` as member `member` of `tiling_type` and reads only it.
#define GET_TILING_DATA_MEMBER(tiling_type, member, var, tiling_arg)                         \
  decltype(tiling_type::member) var;                                                       \
  ASC_RT->gm_read_bytes((const void*)((const uint8_t*)(tiling_arg) + __builtin_offsetof(tiling_type, member)), \
                        (void*)&(var), sizeof(var), ::ascendopt::Loc().c())

// True when the host set tiling key `key`.
#define TILING_KEY_IS(key) (ASC_RT->tiling_key() == (uint64_t)(key))

#endif
