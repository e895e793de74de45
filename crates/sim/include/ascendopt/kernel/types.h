// ascendopt AscendC emulation: basic types, qualifiers, positions, events and
// the runtime table pointer. Clean-room, written from the AscendC API
// reference (guide chapter 06) and ref/hardware-facts.md section A.
#ifndef ASCENDOPT_KERNEL_TYPES_H
#define ASCENDOPT_KERNEL_TYPES_H

#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "../abi.h"

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
struct Loc {
  const char* file;
  int line;
  Loc(const char* f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
  AscLoc c() const { return AscLoc{file, line}; }
};

template <class... T>
inline constexpr bool always_false = false;
}  // namespace ascendopt

// Every API takes a trailing defaulted location parameter.
#define ASC_LOC ::ascendopt::Loc loc_ = ::ascendopt::Loc()
#define ASC_RT (::ascendopt::g_rt)

// ---- half and bfloat16_t ---------------------------------------------------
namespace ascendopt {
inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
// float -> binary16, round to nearest even, overflow to inf, NaN kept quiet.
inline uint16_t f32_to_f16_bits(float f) {
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
inline float f16_bits_to_f32(uint16_t h) {
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
inline uint16_t f32_to_bf16_bits(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return (uint16_t)(x >> 16);
}
inline float bf16_bits_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }
}  // namespace ascendopt

// IEEE binary16 as AscendC's `half`. Arithmetic goes through float and
// rounds back to nearest even, like the scalar unit.
struct half {
  uint16_t bits_;
  half() = default;
  template <class T, class = typename std::enable_if<std::is_arithmetic<T>::value>::type>
  half(T v) : bits_(ascendopt::f32_to_f16_bits((float)v)) {}
  static half from_bits(uint16_t b) {
    half h;
    h.bits_ = b;
    return h;
  }
  operator float() const { return ascendopt::f16_bits_to_f32(bits_); }
  half& operator+=(half o) { return *this = half((float)*this + (float)o); }
  half& operator-=(half o) { return *this = half((float)*this - (float)o); }
  half& operator*=(half o) { return *this = half((float)*this * (float)o); }
  half& operator/=(half o) { return *this = half((float)*this / (float)o); }
  half operator-() const { return from_bits((uint16_t)(bits_ ^ 0x8000u)); }
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
  bfloat16_t(T v) : bits_(ascendopt::f32_to_bf16_bits((float)v)) {}
  static bfloat16_t from_bits(uint16_t b) {
    bfloat16_t h;
    h.bits_ = b;
    return h;
  }
  operator float() const { return ascendopt::bf16_bits_to_f32(bits_); }
  bfloat16_t operator-() const { return from_bits((uint16_t)(bits_ ^ 0x8000u)); }
};

namespace bfloat16 {
using bfloat16_t = ::bfloat16_t;
}

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
enum pipe_t : uint8_t {
  PIPE_S = ASC_PIPE_S,
  PIPE_V = ASC_PIPE_V,
  PIPE_M = ASC_PIPE_M,
  PIPE_MTE1 = ASC_PIPE_MTE1,
  PIPE_MTE2 = ASC_PIPE_MTE2,
  PIPE_MTE3 = ASC_PIPE_MTE3,
  PIPE_FIX = ASC_PIPE_FIX,
  PIPE_ALL = ASC_PIPE_ALL
};

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

// Kernel task types (KERNEL_TASK_TYPE_DEFAULT); recorded, not enforced.
enum KernelMetaType {
  KERNEL_TYPE_AIV_ONLY = 0,
  KERNEL_TYPE_AIC_ONLY,
  KERNEL_TYPE_MIX_AIV_1_0,
  KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1,
  KERNEL_TYPE_MIX_AIC_1_2
};

constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr uint64_t MASK_PLACEHOLDER = 0;

// ---- identity -------------------------------------------------------------
inline int64_t GetBlockIdx() { return ASC_RT->block_idx(); }
inline int64_t GetBlockNum() { return ASC_RT->block_num(); }
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetTaskRation() { return 1; }
inline int64_t GetSystemCycle() { return (int64_t)ASC_RT->system_cycle(); }

template <class T>
inline T Ceil(T a, T b) {
  return (a + b - 1) / b;
}
}  // namespace AscendC

#define KERNEL_TASK_TYPE_DEFAULT(t) ((void)(t))
#define KERNEL_TASK_TYPE(key, t) ((void)(key), (void)(t))

#endif
