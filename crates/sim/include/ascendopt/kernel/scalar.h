// ascendopt AscendC emulation: the scalar-unit helpers of guide 6.2.3.5
// (GetBitCount, CountLeadingZero, CountBitsCntSameAsSignBit, GetSFFValue,
// the scalar Cast overloads, Nop, Read/WriteGmByPassDCache) and their
// older names that real code still calls (guide 6.6.3 接口变更说明:
// ScalarGetCountOfValue, ScalarCountLeadingZero, ScalarGetSFFValue,
// ScalarCast, ToBfloat16, ToFloat). Clean-room, from the documented
// behaviour and examples. They run on the scalar unit: plain C++ here,
// except the GM accesses, which go through the runtime.
//
// Where the guide is silent (an assumption): a float -> int32 Cast
// saturates at the int32 range and takes NaN to 0.
#ifndef ASCENDOPT_KERNEL_SCALAR_H
#define ASCENDOPT_KERNEL_SCALAR_H

#include "tensor.h"

namespace AscendC {

// How many bits of valueIn are `countValue` (0 or 1).
template <int countValue>
inline int64_t GetBitCount(uint64_t valueIn) {
  static_assert(countValue == 0 || countValue == 1, "GetBitCount counts 0 or 1 bits");
  int64_t ones = __builtin_popcountll(valueIn);
  return countValue == 1 ? ones : 64 - ones;
}

// Zero bits above the highest 1 (64 for 0).
inline int64_t CountLeadingZero(uint64_t valueIn) { return valueIn == 0 ? 64 : __builtin_clzll(valueIn); }

// Bits below the sign bit, from the top, equal to it; -1 for 0 and -1.
inline int64_t CountBitsCntSameAsSignBit(int64_t valueIn) {
  if (valueIn == 0 || valueIn == -1) return -1;
  uint64_t v = valueIn < 0 ? ~(uint64_t)valueIn : (uint64_t)valueIn;
  return (int64_t)__builtin_clzll(v) - 1;
}

// Position of the lowest bit equal to `countValue`, -1 if none.
template <int countValue>
inline int64_t GetSFFValue(uint64_t valueIn) {
  static_assert(countValue == 0 || countValue == 1, "GetSFFValue looks for a 0 or a 1 bit");
  uint64_t v = countValue == 1 ? valueIn : ~valueIn;
  return v == 0 ? -1 : __builtin_ctzll(v);
}

namespace detail {
// float -> binary16 rounded to odd: the value truncated toward zero, its
// lowest bit set when that was inexact.
inline uint16_t f32_to_f16_odd(float f) {
  uint16_t h = ::ascendopt::f32_to_f16_bits(f);
  if (f != f || __builtin_isinf(f)) return h;
  float back = ::ascendopt::f16_bits_to_f32(h);
  if (back == f) return h;
  // Round-to-nearest may have gone away from zero: step back toward it.
  if (__builtin_fabsf(back) > __builtin_fabsf(f)) h = (uint16_t)(h - 1);
  return (uint16_t)(h | 1u);
}
inline int32_t f32_to_i32(float f, RoundMode mode) {
  if (f != f) return 0;
  float r = mode == RoundMode::CAST_FLOOR   ? __builtin_floorf(f)
            : mode == RoundMode::CAST_CEIL  ? __builtin_ceilf(f)
            : mode == RoundMode::CAST_ROUND ? __builtin_roundf(f)
            : mode == RoundMode::CAST_TRUNC ? __builtin_truncf(f)
                                            : __builtin_rintf(f);
  if (r >= 2147483648.0f) return INT32_MAX;
  if (r < -2147483648.0f) return INT32_MIN;
  return (int32_t)r;
}
}  // namespace detail

// float -> half (CAST_ODD) or int32_t (CAST_ROUND, CAST_CEIL, CAST_FLOOR,
// CAST_RINT), guide 6.2.3.5.5.
template <typename T, typename U, RoundMode roundMode>
inline U Cast(T valueIn) {
  static_assert(std::is_same<T, float>::value, "the scalar Cast converts a float");
  if constexpr (std::is_same<U, half>::value) {
    static_assert(roundMode == RoundMode::CAST_ODD, "float -> half scalar Cast supports CAST_ODD");
    return half::from_bits(detail::f32_to_f16_odd(valueIn));
  } else {
    static_assert(std::is_same<U, int32_t>::value, "the scalar Cast converts to half or int32_t");
    static_assert(roundMode == RoundMode::CAST_ROUND || roundMode == RoundMode::CAST_CEIL ||
                      roundMode == RoundMode::CAST_FLOOR || roundMode == RoundMode::CAST_RINT,
                  "float -> int32_t scalar Cast supports CAST_ROUND, CAST_CEIL, CAST_FLOOR and CAST_RINT");
    return detail::f32_to_i32(valueIn, roundMode);
  }
}
// float -> bfloat16_t (guide 6.2.3.5.6) and bfloat16_t -> float (6.2.3.5.7).
inline bfloat16_t Cast(const float& fVal) { return bfloat16_t(fVal); }
inline float Cast(const bfloat16_t& bVal) { return (float)bVal; }
template <typename T, typename U = float,
          typename = typename std::enable_if<std::is_same<T, bfloat16_t>::value>::type>
inline U Cast(T bVal) {
  return (U)(float)bVal;
}

// Delay `count` cycles.
template <int count = 1>
inline void Nop() {}

// GM access that bypasses the data cache (guide 6.2.3.5.9/10).
template <typename T>
inline void WriteGmByPassDCache(__gm__ T* addr, T value, ASC_LOC) {
  ASC_RT->gm_set((void*)addr, ::ascendopt::dtype_of<T>(), ::ascendopt::to_bits<T>(value), loc_.c());
}
template <typename T>
inline T ReadGmByPassDCache(__gm__ T* addr, ASC_LOC) {
  return ::ascendopt::from_bits<T>(ASC_RT->gm_get((const void*)addr, ::ascendopt::dtype_of<T>(), loc_.c()));
}

// Older names.
template <int countValue>
inline int64_t ScalarGetCountOfValue(uint64_t valueIn) {
  return GetBitCount<countValue>(valueIn);
}
inline int64_t ScalarCountLeadingZero(uint64_t valueIn) { return CountLeadingZero(valueIn); }
template <int countValue>
inline int64_t ScalarGetSFFValue(uint64_t valueIn) {
  return GetSFFValue<countValue>(valueIn);
}
template <typename T, typename U, RoundMode roundMode>
inline U ScalarCast(T valueIn) {
  return Cast<T, U, roundMode>(valueIn);
}
inline bfloat16_t ToBfloat16(const float& fVal) { return bfloat16_t(fVal); }
template <typename T>
inline float ToFloat(const T& value) {
  return (float)value;
}

}  // namespace AscendC

// The scalar square root the device compiler provides to kernel code
// (kernels call it unqualified on float scalars, e.g. 1 / sqrt(var + eps)).
// Our own C++ function template for float and double, not <cmath>'s
// extern "C" function: a kernel named sqrt (extern "C" void sqrt(GM_ADDR,
// ...)) still declares beside it, and a kernel that includes <cmath> or
// <math.h> itself gets the C library's sqrt beside the template (a
// template overloads a function of the same name; the plain function wins
// a tie, and both compute the correctly rounded root).
namespace ascendopt {
template <class T>
struct scalar_sqrt {};
template <>
struct scalar_sqrt<float> {
  static float of(float x) { return __builtin_sqrtf(x); }
};
template <>
struct scalar_sqrt<double> {
  static double of(double x) { return __builtin_sqrt(x); }
};
}  // namespace ascendopt
template <class T>
inline auto sqrt(T x) -> decltype(::ascendopt::scalar_sqrt<T>::of(x)) {
  return ::ascendopt::scalar_sqrt<T>::of(x);
}

// Scalar min and max as kernel code calls them unqualified on integers and
// floats (`min(tileLen, remain)`), which the device compiler accepts: the
// smaller / larger of two arithmetic values in their common type (as the
// built-in arithmetic conversions give it: min(uint32_t, int64_t) is an
// int64_t). Function templates of two parameters, so that beside
// `using namespace std;` std::min(const T&, const T&) stays the more
// specialised choice for two operands of one type (same value) and these
// take the mixed calls std::min refuses; a kernel's own min/max (a plain
// function or a one-type template) wins over them the same way. The names
// are parenthesised so that a kernel defining min/max as macros first
// still compiles.
template <class A, class B,
          class = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>::type>
constexpr typename std::common_type<A, B>::type(min)(A a, B b) {
  using C = typename std::common_type<A, B>::type;
  return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <class A, class B,
          class = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>::type>
constexpr typename std::common_type<A, B>::type(max)(A a, B b) {
  using C = typename std::common_type<A, B>::type;
  return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
}

#endif
