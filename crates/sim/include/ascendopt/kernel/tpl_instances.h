// ascendopt AscendC emulation: the instances of a kernel whose entry is a
// function template over the tiling-template parameters (guide 2.10.2.5.5,
// 6.4.6; ascendc/host_api/tiling/template_argument.h).
//
// CANN's build compiles one kernel binary per combination ASCENDC_TPL_SEL
// selects and launches the one the tiling key names. The simulator's build
// appends this header and ASCENDOPT_TPL_INSTANCES(<kernel>) to such a kernel
// (crates/sim/src/build/tpl.rs): every selected combination is instantiated
// in the one kernel library and registered, while the library loads, under
// its key and with the kernel type its selection names; the launch finds
// the entry through ascendopt_kernel_tpl_entry (kernel_entry.cpp).
#ifndef ASCENDOPT_KERNEL_TPL_INSTANCES_H
#define ASCENDOPT_KERNEL_TPL_INSTANCES_H

#include <stddef.h>
#include <stdint.h>

#include <utility>

#include "ascendc/host_api/tiling/template_argument.h"
#include "ascendopt/kernel/kernel_type.h"
#include "ascendopt/kernel/tpl_table.h"

namespace ascendopt {
namespace tpl {

// The template arguments of one instance, as a type.
template <uint64_t... V>
struct ValueList {};

static_assert(kMaxCombos <= kMaxInstances, "the instance table holds every combination");

namespace {
inline int add_instance(uint64_t key, int32_t kernel_type, const void* entry) {
  Instances& t = g_tpl_instances;
  if (t.count < kMaxInstances) {
    t.keys[t.count] = key;
    t.entries[t.count] = entry;
    t.count += 1;
  }
  if (kernel_type >= 0) register_key_type(key, kernel_type);
  return 0;
}
}  // namespace

}  // namespace tpl
}  // namespace ascendopt

#define ASCENDOPT_TPL_INSTANCES(KERNEL)                                                                          \
  namespace {                                                                                                    \
  constexpr ::ascendopt::tpl::Plan ascendopt_tpl_plan =                                                         \
      ::ascendopt::tpl::plan(g_tilingDeclareParams, g_tilingSelectParams);                                       \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kTooManyValues,                                    \
                "tiling template: a parameter lists more than 32 numbers (the simulator's limit)");             \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kTooManyParams,                                    \
                "tiling template: more than 12 parameters (the simulator's limit)");                            \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kTooManySets,                                      \
                "tiling template: more than 32 ASCENDC_TPL_ARGS_SEL (the simulator's limit)");                  \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kTooManyCombos,                                    \
                "tiling template: ASCENDC_TPL_SEL selects more than 256 combinations (the simulator's limit)"); \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kKeyTooWide,                                       \
                "tiling template: the parameters' bit widths add up to more than 64");                          \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kBadUintMode,                                      \
                "tiling template: a UINT parameter needs ASCENDC_TPL_UI_RANGE/_LIST/_MIX and its ranges");      \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kValueTooWide,                                     \
                "tiling template: a parameter declares more values than its bit width can number");             \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kSelUnknownParam,                                  \
                "tiling template: an ASCENDC_TPL_*_SEL names a parameter the declaration does not have");       \
  static_assert(ascendopt_tpl_plan.error != ::ascendopt::tpl::kSelValueUndeclared,                               \
                "tiling template: an ASCENDC_TPL_*_SEL selects a value its declaration does not list");         \
  template <uint64_t... V>                                                                                       \
  const void* ascendopt_tpl_address(::ascendopt::tpl::ValueList<V...>) {                                         \
    return reinterpret_cast<const void*>(&KERNEL<V...>);                                                         \
  }                                                                                                              \
  template <size_t I, size_t... J>                                                                               \
  const void* ascendopt_tpl_instance(::std::index_sequence<J...>) {                                              \
    return ascendopt_tpl_address(::ascendopt::tpl::ValueList<ascendopt_tpl_plan.combos[I].args[J]...>{});        \
  }                                                                                                              \
  template <size_t... I>                                                                                         \
  int ascendopt_tpl_register(::std::index_sequence<I...>) {                                                      \
    (::ascendopt::tpl::add_instance(                                                                             \
         ascendopt_tpl_plan.combos[I].key, ascendopt_tpl_plan.combos[I].kernel_type,                             \
         ascendopt_tpl_instance<I>(::std::make_index_sequence<ascendopt_tpl_plan.nargs>{})),                     \
     ...);                                                                                                       \
    return 0;                                                                                                    \
  }                                                                                                              \
  const int ascendopt_tpl_registered =                                                                           \
      ascendopt_tpl_register(::std::make_index_sequence<ascendopt_tpl_plan.count>{});                            \
  }

#endif
