// ascendopt AscendC emulation: tiling templates (guide 2.10.2.5.5 "Tiling模板
//编程" and 6.4.6 "Tiling 模板编程": ASCENDC_TPL_ARGS_DECL, ASCENDC_TPL_SEL,
// GET_TPL_TILING_KEY, ASCENDC_TPL_SEL_PARAM).
//
// An operator declares its template parameters (ASCENDC_TPL_ARGS_DECL) and
// the combinations it supports (ASCENDC_TPL_SEL) in a header both units
// include. The host encodes the values it chose into the tiling key
// (GET_TPL_TILING_KEY); the kernel entry is a function template over the
// same parameters, in the same order, and CANN's build compiles one
// instance per selected combination and launches the one the key names.
// The simulator does the same inside one kernel library: the build appends
// ascendopt/kernel/tpl_instances.h to a kernel whose entry is a template,
// which instantiates every selected combination and registers it under its
// key; the launch looks the key up (crates/sim/src/launch.rs).
//
// The encoding, our reading of the guide: parameters in declaration order,
// the first in the lowest bits, each in its bit width (8 for data types,
// formats and kernel types, 1 for bool, the declared width for UINT); a
// field holds the value's position in the declared list ("穷举的位置决定了
// 后续tilingkey编码值"), or the value itself when the declaration lists no
// values (a data type given only as ASCENDC_TPL_INPUT(i)). Host and kernel
// both use this header, so they agree; a key a project computes by hand
// is not expected to match CANN's.
//
// Differences from the guide, stated: the parameter lists are fixed-size
// constexpr objects here (the kernel side needs them at compile time), not
// std::vector; GET_TPL_TILING_KEY fails the tiling with a message when the
// values are not declared or not a selected combination.
//
// Clean-room, from the guide's description; no CANN code.
#ifndef ASCENDOPT_TEMPLATE_ARGUMENT_H
#define ASCENDOPT_TEMPLATE_ARGUMENT_H

#include <stddef.h>
#include <stdint.h>

#include <initializer_list>

// Parameter kinds.
#define ASCENDC_TPL_DTYPE 0u
#define ASCENDC_TPL_FORMAT 1u
#define ASCENDC_TPL_UINT 2u
#define ASCENDC_TPL_BOOL 3u
#define ASCENDC_TPL_KERNEL_TYPE 4u
#define ASCENDC_TPL_DETERMINISTIC 5u
#define ASCENDC_TPL_SHARED_KERNEL_TYPE 6u
// A combination's own tiling struct (ASCENDC_TPL_TILING_STRUCT_SEL): not a
// template parameter; the kernel registers the same struct with
// REGISTER_TILING_FOR_TILINGKEY, which is what the simulator reads.
#define ASCENDOPT_TPL_TILING_STRUCT 7u

// Bit widths.
#define ASCENDC_TPL_1_BW 1u
#define ASCENDC_TPL_2_BW 2u
#define ASCENDC_TPL_4_BW 4u
#define ASCENDC_TPL_8_BW 8u
#define ASCENDC_TPL_16_BW 16u
#define ASCENDC_TPL_32_BW 32u

// UINT value modes: ranges (count, then first/last pairs), a list, or
// ranges followed by a list.
#define ASCENDC_TPL_UI_RANGE 0u
#define ASCENDC_TPL_UI_LIST 1u
#define ASCENDC_TPL_UI_MIX 2u

// A data type or format tied to an input or output of the kernel instead of
// listed values (only the first marker counts).
#define ASCENDOPT_TPL_MARKER (1ull << 62)
#define ASCENDC_TPL_INPUT(x) (ASCENDOPT_TPL_MARKER | (uint64_t)(x))
#define ASCENDC_TPL_OUTPUT(x) (ASCENDOPT_TPL_MARKER | (1ull << 61) | (uint64_t)(x))

// Kernel types, numbered as KERNEL_TYPE_* of KERNEL_TASK_TYPE_DEFAULT
// (guide 6.2.3.14.12; ascendopt/kernel/types.h).
#define ASCENDC_TPL_AIV_ONLY 0u
#define ASCENDC_TPL_AIC_ONLY 1u
#define ASCENDC_TPL_MIX_AIV_1_0 2u
#define ASCENDC_TPL_MIX_AIC_1_0 3u
#define ASCENDC_TPL_MIX_AIC_1_1 4u
#define ASCENDC_TPL_MIX_AIC_1_2 5u
#define ASCENDC_TPL_AICORE 6u
#define ASCENDC_TPL_VECTORCORE 7u
#define ASCENDC_TPL_MIX_AICORE 8u
#define ASCENDC_TPL_MIX_VECTOR_CORE 9u

// Native data types: GE's codes (ge::DataType), which is what a tiling
// passes (`static_cast<int>(context->GetInputDesc(0)->GetDataType())`).
enum AscendoptTplDataType : uint64_t {
  C_DT_FLOAT = 0,
  C_DT_FLOAT16 = 1,
  C_DT_INT8 = 2,
  C_DT_INT32 = 3,
  C_DT_UINT8 = 4,
  C_DT_INT16 = 6,
  C_DT_UINT16 = 7,
  C_DT_UINT32 = 8,
  C_DT_INT64 = 9,
  C_DT_UINT64 = 10,
  C_DT_DOUBLE = 11,
  C_DT_BOOL = 12,
  C_DT_COMPLEX64 = 16,
  C_DT_BF16 = 27,
  C_DT_INT4 = 29
};

// Native formats: GE's codes (ge::Format), the ones the simulator's host
// headers know.
enum AscendoptTplFormat : uint64_t {
  C_FORMAT_NCHW = 0,
  C_FORMAT_NHWC = 1,
  C_FORMAT_ND = 2,
  C_FORMAT_NC1HWC0 = 3,
  C_FORMAT_FRACTAL_Z = 4,
  C_FORMAT_NC1HWC0_C04 = 12,
  C_FORMAT_FRACTAL_Z_C04 = 13,
  C_FORMAT_CHWN = 14,
  C_FORMAT_HWCN = 16,
  C_FORMAT_MD = 26,
  C_FORMAT_NDHWC = 27,
  C_FORMAT_FRACTAL_ZZ = 28,
  C_FORMAT_FRACTAL_NZ = 29,
  C_FORMAT_NCDHW = 30,
  C_FORMAT_DHWCN = 31
};

namespace ascendopt {
namespace tpl {

constexpr size_t kMaxValues = 32;
constexpr size_t kMaxParams = 12;
constexpr size_t kMaxSets = 32;
constexpr size_t kMaxCombos = 256;

// What went wrong in a declaration (0: nothing).
enum Error : uint32_t {
  kOk = 0,
  kTooManyValues,      // more than kMaxValues numbers in one parameter
  kTooManyParams,      // more than kMaxParams parameters
  kTooManySets,        // more than kMaxSets ASCENDC_TPL_ARGS_SEL
  kTooManyCombos,      // the selected combinations exceed kMaxCombos
  kKeyTooWide,         // the bit widths add up to more than 64
  kBadUintMode,        // a UINT parameter without RANGE/LIST/MIX or with a short range list
  kValueTooWide,       // a declared list longer than its bit width can number
  kSelUnknownParam,    // ASCENDC_TPL_*_SEL names no declared parameter
  kSelValueUndeclared  // a selected value the declaration does not list
};

}  // namespace tpl
}  // namespace ascendopt

// One declared or selected parameter (the guide's ParamStruct; its values
// are a fixed-size array here).
struct ParamStruct {
  const char* name = "";
  uint32_t paramType = 0;
  uint8_t bitWidth = 0;
  uint64_t vals[ascendopt::tpl::kMaxValues] = {};
  uint32_t count = 0;
  bool overflow = false;
  const char* macroType = "";
  constexpr ParamStruct() = default;
  constexpr ParamStruct(const char* inName, uint32_t inParamType, uint32_t inBitWidth,
                        std::initializer_list<uint64_t> inVals, const char* inMacroType)
      : name(inName), paramType(inParamType), bitWidth((uint8_t)inBitWidth), macroType(inMacroType) {
    for (uint64_t v : inVals) {
      if (count == ascendopt::tpl::kMaxValues) {
        overflow = true;
        break;
      }
      vals[count++] = v;
    }
  }
};

// The declaration: ASCENDC_TPL_ARGS_DECL's parameters in order.
struct TilingDeclareParams {
  ParamStruct params[ascendopt::tpl::kMaxParams] = {};
  uint32_t count = 0;
  bool overflow = false;
  constexpr TilingDeclareParams(std::initializer_list<ParamStruct> in) {
    for (const ParamStruct& p : in) {
      if (count == ascendopt::tpl::kMaxParams) {
        overflow = true;
        break;
      }
      params[count++] = p;
    }
  }
};

// One ASCENDC_TPL_ARGS_SEL: a combination set.
struct AscendoptTplSelSet {
  ParamStruct params[ascendopt::tpl::kMaxParams] = {};
  uint32_t count = 0;
  bool overflow = false;
  constexpr AscendoptTplSelSet() = default;
  constexpr AscendoptTplSelSet(std::initializer_list<ParamStruct> in) {
    for (const ParamStruct& p : in) {
      if (count == ascendopt::tpl::kMaxParams) {
        overflow = true;
        break;
      }
      params[count++] = p;
    }
  }
};

// ASCENDC_TPL_SEL: every combination set.
struct TilingSelectParams {
  AscendoptTplSelSet sets[ascendopt::tpl::kMaxSets] = {};
  uint32_t count = 0;
  bool overflow = false;
  constexpr TilingSelectParams(std::initializer_list<AscendoptTplSelSet> in) {
    for (const AscendoptTplSelSet& s : in) {
      if (count == ascendopt::tpl::kMaxSets) {
        overflow = true;
        break;
      }
      sets[count++] = s;
    }
  }
};

// Declarations.
#define ASCENDC_TPL_DTYPE_DECL(x, ...) ParamStruct{#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_DATATYPE_DECL(x, ...) ParamStruct{#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_FORMAT_DECL(x, ...) ParamStruct{#x, ASCENDC_TPL_FORMAT, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_UINT_DECL(x, bw, ...) ParamStruct{#x, ASCENDC_TPL_UINT, bw, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_BOOL_DECL(x, ...) ParamStruct{#x, ASCENDC_TPL_BOOL, ASCENDC_TPL_1_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_KERNEL_TYPE_DECL(x, ...) \
  ParamStruct{#x, ASCENDC_TPL_SHARED_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "DECL"}

// Selections.
#define ASCENDC_TPL_DTYPE_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_DATATYPE_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_FORMAT_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_FORMAT, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_UINT_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_UINT, 0, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_BOOL_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_BOOL, ASCENDC_TPL_1_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_KERNEL_TYPE_SEL(...) \
  ParamStruct{"kernel_type", ASCENDC_TPL_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_DETERMINISTIC_SEL(...) \
  ParamStruct{"deterministic", ASCENDC_TPL_DETERMINISTIC, ASCENDC_TPL_1_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_SHARED_KERNEL_TYPE_SEL(x, ...) \
  ParamStruct{#x, ASCENDC_TPL_SHARED_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
// The struct is named, not used: neither unit needs to see its type.
#define ASCENDC_TPL_TILING_STRUCT_SEL(x) ParamStruct{#x, ASCENDOPT_TPL_TILING_STRUCT, 0, {}, "SEL"}

// The first argument of ASCENDC_TPL_ARGS_DECL (the op type) names the
// declaration; it is not a parameter.
#define ASCENDC_TPL_ARGS_DECL(x, ...) static constexpr TilingDeclareParams g_tilingDeclareParams{__VA_ARGS__}
#define ASCENDC_TPL_ARGS_SEL(...) AscendoptTplSelSet{__VA_ARGS__}
#define ASCENDC_TPL_SEL(...) static constexpr TilingSelectParams g_tilingSelectParams{__VA_ARGS__}

namespace ascendopt {
namespace tpl {

constexpr bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

constexpr bool is_marker(uint64_t v) { return (v & ASCENDOPT_TPL_MARKER) != 0; }

// Parameters that are template arguments of the kernel (kernel_type and
// deterministic selections are not).
constexpr bool is_template_param(const ParamStruct& p) {
  return p.paramType != ASCENDC_TPL_KERNEL_TYPE && p.paramType != ASCENDC_TPL_DETERMINISTIC &&
         p.paramType != ASCENDOPT_TPL_TILING_STRUCT;
}

// Where a UINT parameter's numbers start: the mode comes first, then (RANGE,
// MIX) the range count and the pairs. Returns the number of ranges and
// where the plain list starts; false when malformed.
constexpr bool uint_layout(const ParamStruct& p, uint32_t* ranges, uint32_t* list_start) {
  if (p.count == 0) return false;
  uint64_t mode = p.vals[0];
  if (mode == ASCENDC_TPL_UI_LIST) {
    *ranges = 0;
    *list_start = 1;
    return true;
  }
  if (mode != ASCENDC_TPL_UI_RANGE && mode != ASCENDC_TPL_UI_MIX) return false;
  if (p.count < 2) return false;
  uint64_t n = p.vals[1];
  if (2 + 2 * n > p.count) return false;
  if (mode == ASCENDC_TPL_UI_RANGE && 2 + 2 * n != p.count) return false;
  *ranges = (uint32_t)n;
  *list_start = (uint32_t)(2 + 2 * n);
  return true;
}

// How many values a parameter lists (markers left out); -1 when malformed.
constexpr int64_t value_count(const ParamStruct& p) {
  if (p.paramType == ASCENDC_TPL_UINT) {
    uint32_t ranges = 0, start = 0;
    if (!uint_layout(p, &ranges, &start)) return -1;
    int64_t n = 0;
    for (uint32_t r = 0; r < ranges; ++r) {
      uint64_t lo = p.vals[2 + 2 * r], hi = p.vals[3 + 2 * r];
      if (hi < lo) return -1;
      n += (int64_t)(hi - lo + 1);
    }
    return n + (int64_t)(p.count - start);
  }
  int64_t n = 0;
  for (uint32_t i = 0; i < p.count; ++i) {
    if (!is_marker(p.vals[i])) ++n;
  }
  return n;
}

// The i-th value a parameter lists.
constexpr uint64_t nth_value(const ParamStruct& p, int64_t i) {
  if (p.paramType == ASCENDC_TPL_UINT) {
    uint32_t ranges = 0, start = 0;
    uint_layout(p, &ranges, &start);
    for (uint32_t r = 0; r < ranges; ++r) {
      uint64_t lo = p.vals[2 + 2 * r], hi = p.vals[3 + 2 * r];
      int64_t len = (int64_t)(hi - lo + 1);
      if (i < len) return lo + (uint64_t)i;
      i -= len;
    }
    return p.vals[start + (uint32_t)i];
  }
  for (uint32_t k = 0; k < p.count; ++k) {
    if (is_marker(p.vals[k])) continue;
    if (i == 0) return p.vals[k];
    --i;
  }
  return 0;
}

// The position of `v` among a parameter's values, -1 when absent.
constexpr int64_t index_of(const ParamStruct& p, uint64_t v) {
  int64_t n = value_count(p);
  for (int64_t i = 0; i < n; ++i) {
    if (nth_value(p, i) == v) return i;
  }
  return -1;
}

// The field a declared parameter's value takes in the key; -1 when the
// value is not declared.
constexpr int64_t field_of(const ParamStruct& decl, uint64_t v) {
  if (value_count(decl) == 0) return (int64_t)v;  // tied to an input: the value itself
  return index_of(decl, v);
}

// The declared template parameters (kernel template arguments) in order.
struct DeclView {
  uint32_t index[kMaxParams] = {};
  uint32_t count = 0;
};

constexpr DeclView template_params(const TilingDeclareParams& d) {
  DeclView v;
  for (uint32_t i = 0; i < d.count; ++i) {
    if (is_template_param(d.params[i])) v.index[v.count++] = i;
  }
  return v;
}

// Checks the declaration alone.
constexpr Error check_declaration(const TilingDeclareParams& d) {
  if (d.overflow) return kTooManyParams;
  uint32_t bits = 0;
  for (uint32_t i = 0; i < d.count; ++i) {
    const ParamStruct& p = d.params[i];
    if (p.overflow) return kTooManyValues;
    int64_t n = value_count(p);
    if (n < 0) return kBadUintMode;
    if (p.bitWidth < 64 && n > ((int64_t)1 << p.bitWidth)) return kValueTooWide;
    bits += p.bitWidth;
  }
  if (bits > 64) return kKeyTooWide;
  return kOk;
}

// The selection of `decl` in `set`, or null when the set leaves it out
// (then every declared value is selected).
constexpr const ParamStruct* selected(const AscendoptTplSelSet& set, const ParamStruct& decl) {
  for (uint32_t k = 0; k < set.count; ++k) {
    if (is_template_param(set.params[k]) && same_name(set.params[k].name, decl.name)) return &set.params[k];
  }
  return nullptr;
}

constexpr int64_t choices(const AscendoptTplSelSet& set, const ParamStruct& decl) {
  const ParamStruct* s = selected(set, decl);
  return value_count(s != nullptr ? *s : decl);
}

constexpr uint64_t choice(const AscendoptTplSelSet& set, const ParamStruct& decl, int64_t i) {
  const ParamStruct* s = selected(set, decl);
  return nth_value(s != nullptr ? *s : decl, i);
}

// The kernel type a set selects, -1 when it selects none.
constexpr int32_t set_kernel_type(const AscendoptTplSelSet& set) {
  for (uint32_t k = 0; k < set.count; ++k) {
    const ParamStruct& p = set.params[k];
    if ((p.paramType == ASCENDC_TPL_KERNEL_TYPE || p.paramType == ASCENDC_TPL_SHARED_KERNEL_TYPE) && p.count > 0)
      return (int32_t)p.vals[0];
  }
  return -1;
}

// Checks the selection against the declaration.
constexpr Error check_selection(const TilingDeclareParams& d, const TilingSelectParams& s) {
  if (s.overflow) return kTooManySets;
  for (uint32_t i = 0; i < s.count; ++i) {
    const AscendoptTplSelSet& set = s.sets[i];
    if (set.overflow) return kTooManyParams;
    for (uint32_t k = 0; k < set.count; ++k) {
      const ParamStruct& p = set.params[k];
      if (p.overflow) return kTooManyValues;
      if (!is_template_param(p)) continue;
      const ParamStruct* decl = nullptr;
      for (uint32_t j = 0; j < d.count; ++j) {
        if (same_name(d.params[j].name, p.name)) decl = &d.params[j];
      }
      if (decl == nullptr) return kSelUnknownParam;
      int64_t n = value_count(p);
      if (n < 0) return kBadUintMode;
      for (int64_t v = 0; v < n; ++v) {
        if (field_of(*decl, nth_value(p, v)) < 0) return kSelValueUndeclared;
      }
    }
  }
  return kOk;
}

// The key of declared-parameter values (one per declared parameter, in
// order); -1 in `bad` names the first value that is not declared.
constexpr uint64_t encode(const TilingDeclareParams& d, const uint64_t* values, int32_t* bad) {
  uint64_t key = 0;
  uint32_t shift = 0;
  *bad = -1;
  for (uint32_t i = 0; i < d.count; ++i) {
    int64_t field = field_of(d.params[i], values[i]);
    if (field < 0 && *bad < 0) *bad = (int32_t)i;
    if (field > 0 && shift < 64) key |= (uint64_t)field << shift;
    shift += d.params[i].bitWidth;
  }
  return key;
}

// One selected combination: its key, kernel type (-1: the kernel's own)
// and the template arguments (declared template parameters in order).
struct Combo {
  uint64_t key = 0;
  int32_t kernel_type = -1;
  uint64_t args[kMaxParams] = {};
};

struct Plan {
  Error error = kOk;
  uint32_t nargs = 0;
  uint32_t count = 0;
  Combo combos[kMaxCombos] = {};
};

// Every selected combination, set by set, the last parameter varying
// fastest; a key selected twice is listed once.
constexpr Plan plan(const TilingDeclareParams& d, const TilingSelectParams& s) {
  Plan out;
  out.error = check_declaration(d);
  if (out.error == kOk) out.error = check_selection(d, s);
  if (out.error != kOk) return out;
  DeclView tp = template_params(d);
  out.nargs = tp.count;
  for (uint32_t si = 0; si < s.count; ++si) {
    const AscendoptTplSelSet& set = s.sets[si];
    int64_t total = 1;
    for (uint32_t i = 0; i < d.count; ++i) total *= choices(set, d.params[i]);
    for (int64_t c = 0; c < total; ++c) {
      uint64_t values[kMaxParams] = {};
      int64_t rest = c;
      for (int64_t i = (int64_t)d.count - 1; i >= 0; --i) {
        int64_t n = choices(set, d.params[i]);
        values[i] = choice(set, d.params[i], rest % n);
        rest /= n;
      }
      int32_t bad = -1;
      uint64_t key = encode(d, values, &bad);
      bool seen = false;
      for (uint32_t k = 0; k < out.count; ++k) seen = seen || out.combos[k].key == key;
      if (seen) continue;
      if (out.count == kMaxCombos) {
        out.error = kTooManyCombos;
        return out;
      }
      Combo& combo = out.combos[out.count++];
      combo.key = key;
      combo.kernel_type = set_kernel_type(set);
      for (uint32_t a = 0; a < tp.count; ++a) combo.args[a] = values[tp.index[a]];
    }
  }
  return out;
}

constexpr const char* error_text(Error e) {
  switch (e) {
    case kOk:
      return "";
    case kTooManyValues:
      return "a template parameter lists more than 32 numbers (the simulator's limit)";
    case kTooManyParams:
      return "more than 12 template parameters (the simulator's limit)";
    case kTooManySets:
      return "more than 32 ASCENDC_TPL_ARGS_SEL (the simulator's limit)";
    case kTooManyCombos:
      return "the selected combinations exceed 256 (the simulator's limit)";
    case kKeyTooWide:
      return "the template parameters' bit widths add up to more than the 64 of a tiling key";
    case kBadUintMode:
      return "a UINT template parameter does not start with ASCENDC_TPL_UI_RANGE, _LIST or _MIX followed by "
             "its ranges";
    case kValueTooWide:
      return "a template parameter declares more values than its bit width can number";
    case kSelUnknownParam:
      return "an ASCENDC_TPL_*_SEL names a parameter ASCENDC_TPL_ARGS_DECL does not declare";
    case kSelValueUndeclared:
      return "an ASCENDC_TPL_*_SEL selects a value its ASCENDC_TPL_*_DECL does not declare";
  }
  return "unknown";
}

}  // namespace tpl
}  // namespace ascendopt

#ifndef ASCENDOPT_KERNEL_SIDE
#include <vector>

#include "ascendopt/host/core.h"

namespace AscendC {

// The tiling key of `tilingParams` (one value per declared parameter, in
// declaration order). Fails the tiling (with the reason) when the count is
// wrong, a value is not declared, or the combination is not selected.
inline uint64_t EncodeTilingKey(const TilingDeclareParams& declareParams, const TilingSelectParams& selectParams,
                                std::vector<uint64_t> tilingParams) {
  using namespace ascendopt::tpl;
  Error e = check_declaration(declareParams);
  if (e == kOk) e = check_selection(declareParams, selectParams);
  if (e != kOk) ascendopt::host::fail("GET_TPL_TILING_KEY: %s", error_text(e));
  if (tilingParams.size() != declareParams.count) {
    ascendopt::host::fail("GET_TPL_TILING_KEY: %zu values for the %u parameters ASCENDC_TPL_ARGS_DECL declares",
                          tilingParams.size(), (unsigned)declareParams.count);
  }
  int32_t bad = -1;
  uint64_t key = encode(declareParams, tilingParams.data(), &bad);
  if (bad >= 0) {
    ascendopt::host::fail("GET_TPL_TILING_KEY: %s = %llu is not among the values its declaration lists",
                          declareParams.params[bad].name, (unsigned long long)tilingParams[(size_t)bad]);
  }
  for (uint32_t si = 0; si < selectParams.count; ++si) {
    const AscendoptTplSelSet& set = selectParams.sets[si];
    bool all = true;
    for (uint32_t i = 0; i < declareParams.count && all; ++i) {
      const ParamStruct* s = selected(set, declareParams.params[i]);
      all = index_of(s != nullptr ? *s : declareParams.params[i], tilingParams[i]) >= 0 ||
            (s == nullptr && value_count(declareParams.params[i]) == 0);
    }
    if (all) return key;
  }
  ascendopt::host::fail("GET_TPL_TILING_KEY: the values are declared but no ASCENDC_TPL_ARGS_SEL selects this "
                        "combination (tiling key %llu)",
                        (unsigned long long)key);
}

}  // namespace AscendC

#define GET_TPL_TILING_KEY(...) ::AscendC::EncodeTilingKey(g_tilingDeclareParams, g_tilingSelectParams, {__VA_ARGS__})

#define ASCENDC_TPL_SEL_PARAM(context, ...)         \
  do {                                              \
    uint64_t key = GET_TPL_TILING_KEY(__VA_ARGS__); \
    (context)->SetTilingKey(key);                   \
  } while (0)
#endif  // ASCENDOPT_KERNEL_SIDE

#endif
