// ascendopt AscendC emulation: basic types, qualifiers, positions, events and
// the runtime table pointer. Clean-room, written from the AscendC API
// reference (guide chapter 06) and ref/hardware-facts.md section A.
#ifndef ASCENDOPT_KERNEL_TYPES_H
#define ASCENDOPT_KERNEL_TYPES_H

#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "../abi.h"
#include "builtins.h"

// ---- qualifiers: meaningful to bisheng, empty on the CPU -----------------
#ifndef __global__
#define __global__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __vector__
#define __vector__
#endif
#ifndef __inline__
#define __inline__ inline
#endif
#ifndef __cce_aicore__
#define __cce_aicore__
#endif

typedef uint8_t* GM_ADDR;

namespace ascendopt {
// The runtime table, set by ascendopt_kernel_attach (kernel_entry.cpp).
extern const AscRuntime* g_rt;

// Caller location, captured by default arguments at every API call site.
// explicit: a stray argument after an API's own parameters is an error,
// not a location.
struct Loc {
  const char* file;
  int line;
  explicit Loc(const char* f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
  // No location: the API was called through a function pointer or as a
  // template argument (see ASC_UNLOCATED).
  static Loc none() { return Loc(nullptr, 0); }
  AscLoc c() const { return AscLoc{file, line}; }
};

template <class... T>
inline constexpr bool always_false = false;
}  // namespace ascendopt

// Every API takes a trailing defaulted location parameter.
#define ASC_LOC ::ascendopt::Loc loc_ = ::ascendopt::Loc()
#define ASC_RT (::ascendopt::g_rt)

// The location parameter is part of a function's type, so `&Add<float>`,
// a function-pointer parameter or a template argument naming an API would
// not match the type the guide documents. Every API therefore has a second
// overload with the documented parameters followed by an empty trailing
// parameter pack, which forwards to the located one with no location:
// - an ordinary call matches both, and partial ordering prefers the
//   located one (a template with a trailing function parameter pack is
//   less specialised, [temp.deduct.partial]/11), so calls keep their
//   file:line;
// - taking the address for a target type (a function-pointer variable or
//   parameter, a non-type template argument) deduces the pack empty and
//   picks the unlocated one, whose type is the documented one;
// - the pack must stay empty: a call with one argument too many matches
//   neither.
// ASC_UNLOCATED_OVERLOAD(template params, template args, return type, name,
// params, args) writes that overload for one API (each list in parentheses).
#define ASC_UNLOCATED_PACK \
  class... ascendopt_unlocated_, typename ::std::enable_if<sizeof...(ascendopt_unlocated_) == 0, int>::type = 0
#define ASC_STRIP(...) __VA_ARGS__
#define ASC_UNLOCATED_OVERLOAD(TPL, TARGS, RET, NAME, PARAMS, ARGS)                      \
  template <ASC_STRIP TPL, ASC_UNLOCATED_PACK>                                          \
  inline RET NAME(ASC_STRIP PARAMS, ascendopt_unlocated_...) {                          \
    return NAME<ASC_STRIP TARGS>(ASC_STRIP ARGS, ::ascendopt::Loc::none());             \
  }

// ---- half and bfloat16_t ---------------------------------------------------
namespace ascendopt {
// Bit casts usable in constant expressions (a `constexpr half` is common in
// kernels, e.g. `constexpr half ONE = 1.0f;`).
constexpr uint32_t f32_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
constexpr float bits_f32(uint32_t u) { return __builtin_bit_cast(float, u); }
// float -> binary16, round to nearest even, overflow to inf, NaN kept quiet.
constexpr uint16_t f32_to_f16_bits(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half_man = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_man & 1u))) half_man++;
    return (uint16_t)(sign | half_man);
  }
  uint32_t half_man = man >> 13;
  uint32_t rem = man & 0x1fffu;
  uint32_t out = sign | ((uint32_t)e << 10) | half_man;
  if (rem > 0x1000u || (rem == 0x1000u && (half_man & 1u))) out++;
  return (uint16_t)out;
}
constexpr float f16_bits_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    if (man == 0) return bits_f32(sign);
    float v = (float)man * (1.0f / 16777216.0f);  // man * 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return bits_f32(sign | 0x7f800000u | (man << 13));
  return bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}
constexpr uint16_t f32_to_bf16_bits(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return (uint16_t)(x >> 16);
}
constexpr float bf16_bits_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }
}  // namespace ascendopt

struct bfloat16_t;

// IEEE binary16 as AscendC's `half`. Arithmetic goes through float and
// rounds back to nearest even, like the scalar unit.
struct half {
  uint16_t bits_;
  half() = default;
  template <class T, class = typename std::enable_if<std::is_arithmetic<T>::value>::type>
  constexpr half(T v) : bits_(ascendopt::f32_to_f16_bits((float)v)) {}
  explicit constexpr half(const bfloat16_t& b);
  static constexpr half from_bits(uint16_t b) {
    half h{};
    h.bits_ = b;
    return h;
  }
  constexpr operator float() const { return ascendopt::f16_bits_to_f32(bits_); }
  half& operator+=(half o) { return *this = half((float)*this + (float)o); }
  half& operator-=(half o) { return *this = half((float)*this - (float)o); }
  half& operator*=(half o) { return *this = half((float)*this * (float)o); }
  half& operator/=(half o) { return *this = half((float)*this / (float)o); }
  constexpr half operator-() const { return from_bits((uint16_t)(bits_ ^ 0x8000u)); }
};
inline half operator+(half a, half b) { return half((float)a + (float)b); }
inline half operator-(half a, half b) { return half((float)a - (float)b); }
inline half operator*(half a, half b) { return half((float)a * (float)b); }
inline half operator/(half a, half b) { return half((float)a / (float)b); }

// bfloat16 as AscendC's `bfloat16_t`.
struct bfloat16_t {
  uint16_t bits_;
  bfloat16_t() = default;
  template <class T, class = typename std::enable_if<std::is_arithmetic<T>::value>::type>
  constexpr bfloat16_t(T v) : bits_(ascendopt::f32_to_bf16_bits((float)v)) {}
  explicit constexpr bfloat16_t(half h);
  static constexpr bfloat16_t from_bits(uint16_t b) {
    bfloat16_t h{};
    h.bits_ = b;
    return h;
  }
  constexpr operator float() const { return ascendopt::bf16_bits_to_f32(bits_); }
  constexpr bfloat16_t operator-() const { return from_bits((uint16_t)(bits_ ^ 0x8000u)); }
};

// The device converts between its two 16-bit floats directly (explicit
// here, so mixed half/bfloat16_t arithmetic still goes through float).
constexpr bfloat16_t::bfloat16_t(half h) : bits_(ascendopt::f32_to_bf16_bits((float)h)) {}
constexpr half::half(const bfloat16_t& b) : bits_(ascendopt::f32_to_f16_bits((float)b)) {}

namespace bfloat16 {
using bfloat16_t = ::bfloat16_t;
}

// The device compiler's name of binary16 (builtins.h has float32_t).
typedef half float16_t;

namespace ascendopt {
// AscDtype code of a C++ element type.
template <class T>
struct DtypeOf {
  static_assert(always_false<T>, "ascendopt simulator: unsupported tensor element type");
};
#define ASC_DTYPE_OF(T, code) \
  template <>                 \
  struct DtypeOf<T> {         \
    static constexpr uint8_t value = code; \
  };
ASC_DTYPE_OF(half, ASC_DT_F16)
ASC_DTYPE_OF(bfloat16_t, ASC_DT_BF16)
ASC_DTYPE_OF(float, ASC_DT_F32)
ASC_DTYPE_OF(int8_t, ASC_DT_I8)
ASC_DTYPE_OF(uint8_t, ASC_DT_U8)
ASC_DTYPE_OF(int16_t, ASC_DT_I16)
ASC_DTYPE_OF(uint16_t, ASC_DT_U16)
ASC_DTYPE_OF(int32_t, ASC_DT_I32)
ASC_DTYPE_OF(uint32_t, ASC_DT_U32)
ASC_DTYPE_OF(int64_t, ASC_DT_I64)
ASC_DTYPE_OF(uint64_t, ASC_DT_U64)
ASC_DTYPE_OF(bool, ASC_DT_BOOL)
ASC_DTYPE_OF(double, ASC_DT_F64)
#undef ASC_DTYPE_OF
template <class T>
constexpr uint8_t dtype_of() {
  return DtypeOf<typename std::remove_cv<T>::type>::value;
}

// Value <-> raw bits (zero-extended to 64 bits) for the scalar ABI.
template <class T>
inline uint64_t to_bits(T v) {
  uint64_t b = 0;
  memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
inline T from_bits(uint64_t b) {
  T v;
  memcpy(&v, &b, sizeof(T));
  return v;
}
}  // namespace ascendopt

namespace AscendC {
using ::half;
using ::bfloat16_t;

// ---- positions ----------------------------------------------------------
enum class TPosition : uint8_t {
  GM = 0,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM,
  SPM,
  SHM,
  TSCM,
  C2PIPE2GM,
  MAX
};
using QuePosition = TPosition;

// Memory kind (AscMem) that backs a position on A2 (hardware-facts A).
constexpr uint8_t mem_of(TPosition p) {
  return (p == TPosition::GM)                                                     ? ASC_MEM_GM
         : (p == TPosition::A1 || p == TPosition::B1 || p == TPosition::C1 ||
            p == TPosition::TSCM)                                                 ? ASC_MEM_L1
         : (p == TPosition::A2)                                                   ? ASC_MEM_L0A
         : (p == TPosition::B2)                                                   ? ASC_MEM_L0B
         : (p == TPosition::CO1)                                                  ? ASC_MEM_L0C
         : (p == TPosition::C2)                                                   ? ASC_MEM_BT
                                                                                  : ASC_MEM_UB;
}

// ---- pipes and events -----------------------------------------------------
// pipe_t and event_t are the compiler's, at global scope (builtins.h).
using ::pipe_t;
using ::PIPE_S;
using ::PIPE_V;
using ::PIPE_M;
using ::PIPE_MTE1;
using ::PIPE_MTE2;
using ::PIPE_MTE3;
using ::PIPE_FIX;
using ::PIPE_ALL;
using ::event_t;
using ::EVENT_ID0;
using ::EVENT_ID1;
using ::EVENT_ID2;
using ::EVENT_ID3;
using ::EVENT_ID4;
using ::EVENT_ID5;
using ::EVENT_ID6;
using ::EVENT_ID7;

#define ASC_EVT(s, d) ((uint8_t)((s) * 8 + (d)))
enum class HardEvent : uint8_t {
  MTE2_MTE1 = ASC_EVT(ASC_PIPE_MTE2, ASC_PIPE_MTE1),
  MTE1_MTE2 = ASC_EVT(ASC_PIPE_MTE1, ASC_PIPE_MTE2),
  MTE1_M = ASC_EVT(ASC_PIPE_MTE1, ASC_PIPE_M),
  M_MTE1 = ASC_EVT(ASC_PIPE_M, ASC_PIPE_MTE1),
  MTE2_V = ASC_EVT(ASC_PIPE_MTE2, ASC_PIPE_V),
  V_MTE2 = ASC_EVT(ASC_PIPE_V, ASC_PIPE_MTE2),
  MTE3_V = ASC_EVT(ASC_PIPE_MTE3, ASC_PIPE_V),
  V_MTE3 = ASC_EVT(ASC_PIPE_V, ASC_PIPE_MTE3),
  M_V = ASC_EVT(ASC_PIPE_M, ASC_PIPE_V),
  V_M = ASC_EVT(ASC_PIPE_V, ASC_PIPE_M),
  V_V = ASC_EVT(ASC_PIPE_V, ASC_PIPE_V),
  MTE3_MTE1 = ASC_EVT(ASC_PIPE_MTE3, ASC_PIPE_MTE1),
  MTE1_MTE3 = ASC_EVT(ASC_PIPE_MTE1, ASC_PIPE_MTE3),
  MTE1_V = ASC_EVT(ASC_PIPE_MTE1, ASC_PIPE_V),
  MTE2_M = ASC_EVT(ASC_PIPE_MTE2, ASC_PIPE_M),
  M_MTE2 = ASC_EVT(ASC_PIPE_M, ASC_PIPE_MTE2),
  V_MTE1 = ASC_EVT(ASC_PIPE_V, ASC_PIPE_MTE1),
  M_FIX = ASC_EVT(ASC_PIPE_M, ASC_PIPE_FIX),
  FIX_M = ASC_EVT(ASC_PIPE_FIX, ASC_PIPE_M),
  MTE3_MTE2 = ASC_EVT(ASC_PIPE_MTE3, ASC_PIPE_MTE2),
  MTE2_MTE3 = ASC_EVT(ASC_PIPE_MTE2, ASC_PIPE_MTE3),
  S_V = ASC_EVT(ASC_PIPE_S, ASC_PIPE_V),
  V_S = ASC_EVT(ASC_PIPE_V, ASC_PIPE_S),
  S_MTE2 = ASC_EVT(ASC_PIPE_S, ASC_PIPE_MTE2),
  MTE2_S = ASC_EVT(ASC_PIPE_MTE2, ASC_PIPE_S),
  S_MTE3 = ASC_EVT(ASC_PIPE_S, ASC_PIPE_MTE3),
  MTE3_S = ASC_EVT(ASC_PIPE_MTE3, ASC_PIPE_S),
  MTE2_FIX = ASC_EVT(ASC_PIPE_MTE2, ASC_PIPE_FIX),
  FIX_MTE2 = ASC_EVT(ASC_PIPE_FIX, ASC_PIPE_MTE2),
  FIX_S = ASC_EVT(ASC_PIPE_FIX, ASC_PIPE_S),
  M_S = ASC_EVT(ASC_PIPE_M, ASC_PIPE_S),
  FIX_MTE3 = ASC_EVT(ASC_PIPE_FIX, ASC_PIPE_MTE3),
  MAX = 255
};
#undef ASC_EVT
using TEventID = int8_t;
// A tensor's user tag (guide 6.2.2.1.10 GetUserTag).
using TTagType = int32_t;

// ---- vector enums ---------------------------------------------------------
enum class RoundMode : uint8_t {
  CAST_NONE = ASC_RND_NONE,
  CAST_RINT = ASC_RND_RINT,
  CAST_FLOOR = ASC_RND_FLOOR,
  CAST_CEIL = ASC_RND_CEIL,
  CAST_ROUND = ASC_RND_ROUND,
  CAST_TRUNC = ASC_RND_TRUNC,
  CAST_ODD = ASC_RND_ODD,
  CAST_HYBRID = ASC_RND_HYBRID
};
enum class CMPMODE : uint8_t {
  LT = ASC_CMP_LT,
  GT = ASC_CMP_GT,
  EQ = ASC_CMP_EQ,
  LE = ASC_CMP_LE,
  GE = ASC_CMP_GE,
  NE = ASC_CMP_NE
};
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE = 1, VSEL_TENSOR_TENSOR_MODE = 2 };
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE = 1, ORDER_ONLY_VALUE = 2, ORDER_ONLY_INDEX = 3 };
enum class MaskMode : uint8_t { NORMAL = 0, COUNTER = 1 };

// Kernel task types (guide 6.2.3.14.12; KERNEL_TASK_TYPE_DEFAULT in
// kernel_type.h registers them, runtime/mix.rs starts the cores they name).
enum KernelMetaType {
  KERNEL_TYPE_AIV_ONLY = 0,
  KERNEL_TYPE_AIC_ONLY,
  KERNEL_TYPE_MIX_AIV_1_0,
  KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1,
  KERNEL_TYPE_MIX_AIC_1_2,
  KERNEL_TYPE_AICORE,
  KERNEL_TYPE_VECTORCORE,
  KERNEL_TYPE_MIX_AICORE,
  KERNEL_TYPE_MIX_VECTOR_CORE,
  KERNEL_TYPE_MAX
};

constexpr int32_t ONE_BLK_SIZE = 32;
// The UB bytes the kernel library leaves to a kernel's own buffers: 184 KB
// on both chips of the simulator (__NPU_ARCH__ 2201, the 910B's 192 KB UB,
// and 3002, the 310B's 248 KB). Not in the guide: the kernel library's
// constants header (hicann/asc-devkit impl/basic_api/utils/
// kernel_utils_constants.h @28e7aba2, its 2201 and 3002 branches). Older
// samples size a Matmul format buffer with it.
constexpr int32_t TOTAL_VEC_LOCAL_SIZE = 184 * 1024;
// The UB's size, which the guide's own samples allocate by name (3.10.4.13
// `InitBuffer(ubBuf, TOTAL_UB_SIZE)`): 192 KB on the 910B (__NPU_ARCH__
// 2201), 248 KB on the 310B (3002); the same constants header as above.
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3002
constexpr uint32_t TOTAL_UB_SIZE = 248 * 1024;
#else
constexpr uint32_t TOTAL_UB_SIZE = 192 * 1024;
#endif
// Bytes of one C0 block (the guide's CV-fusion sample divides by it to give
// DataCopyParams block counts) and of one vector repeat as the kernel
// library names them (same constants header: 32 and 256).
constexpr int32_t DEFAULT_C0_SIZE = 32;
constexpr int32_t DEFAULT_BLOCK_SIZE = 256;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr uint64_t MASK_PLACEHOLDER = 0;

// ---- identity (guide 6.2.3.9) ----------------------------------------------
inline int64_t GetBlockIdx() { return ASC_RT->block_idx(); }
inline int64_t GetBlockNum() { return ASC_RT->block_num(); }
// The core within its AI core (guide 6.2.3.9.7-8): GetSubBlockNum is 2 on
// the AIVs of a MIX 1:2 launch and 1 elsewhere; GetSubBlockIdx the AIV's
// index (0 on an AIC and in an untyped launch). GetTaskRatio (6.2.3.13.3;
// GetTaskRation is the older name real code still calls) is the number of
// cores of the caller's type per AI core, the same number.
inline int64_t GetSubBlockIdx() { return ASC_RT->core_info(1); }
inline int64_t GetSubBlockNum() { return ASC_RT->core_info(2); }
inline int64_t GetTaskRatio() { return ASC_RT->core_info(2); }
inline int64_t GetTaskRation() { return ASC_RT->core_info(2); }
inline int64_t GetSystemCycle() { return (int64_t)ASC_RT->system_cycle(); }
// Bytes of one data block (guide 6.2.3.9.3) and of one vector repeat
// (6.2.3.13.6 GetVecLen) on the A2 vector unit: 32 and 256
// (hardware-facts.md section C).
constexpr int16_t GetDataBlockSizeInBytes() { return 32; }
constexpr uint32_t GetVecLen() { return 256; }

// ---- integer helpers --------------------------------------------------------
template <class T>
inline T Ceil(T a, T b) {
  return (a + b - 1) / b;
}
// ceil(a / b) (guide 6.2.3.13.7).
constexpr int32_t CeilDivision(int32_t num1, int32_t num2) { return num2 == 0 ? 0 : (num1 + num2 - 1) / num2; }
// ceil(a / b) and a rounded up to a multiple of b, as the guide's examples
// call them with mixed integer types (`AscendC::DivCeil(n * sizeof(T), 128)`,
// `AscendC::AlignUp(m, AscendC::BLOCK_CUBE)`); the result has a's type.
template <class T, class U>
constexpr T DivCeil(T a, U b) {
  return b == 0 ? (T)0 : (T)((a + b - 1) / b);
}
template <class T, class U>
constexpr T AlignUp(T a, U b) {
  return b == 0 ? a : (T)(((a + b - 1) / b) * b);
}
}  // namespace AscendC

// Real kernels call these unqualified, without `using namespace AscendC`
// (the device compiler's builtins and CANN's own headers make them visible
// everywhere).
using AscendC::GetBlockIdx;
using AscendC::GetBlockNum;
inline int64_t get_block_idx() { return AscendC::GetBlockIdx(); }
inline int64_t get_block_num() { return AscendC::GetBlockNum(); }
inline int64_t get_subblockid() { return AscendC::GetSubBlockIdx(); }
inline int64_t get_subblockdim() { return AscendC::GetSubBlockNum(); }

#include "kernel_type.h"

#endif
