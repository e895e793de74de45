// ascendopt AscendC emulation, high-level API library: Arange (guide
// 6.2.4.8.1) and ArithProgression, its former name (the guide's
// GetArangeMaxMinTmpSize page names GetArithProgressionMaxMinTmpSize as the
// deprecated twin; real kernels still call ArithProgression): dst[i] =
// firstValue + i * diffValue for i < count, for int16_t, half, int32_t and
// float, without temporary space.
//
// Built on the vector unit as the guide's algorithm describes: the first
// (up to) 8 elements by SetValue; then blocks of 8 up to 64 elements, each
// the first 8 plus 8k * diffValue (one Adds each); then blocks of 64, each
// the first 64 plus 64k * diffValue, until count. So a float sequence
// carries the chip's rounding (the sum of a rounded head and a rounded
// offset), not firstValue + i * diffValue rounded once. The scalar writes
// are ordered before the vector reads by a barrier.
#ifndef ASCENDOPT_KERNEL_LIB_ARANGE_H
#define ASCENDOPT_KERNEL_LIB_ARANGE_H

#include "../sync.h"
#include "common.h"

namespace ascendopt {
namespace lib {

template <class T>
inline T arange_offset(T diff, int64_t steps) {
  if constexpr (std::is_integral<T>::value) {
    return (T)((int64_t)diff * steps);
  } else {
    return (T)((float)diff * (float)steps);
  }
}

template <class T>
inline void arange(const LocalTensor<T>& dst, T first, T diff, int32_t count, const Loc& loc) {
  static_assert(std::is_same<T, int16_t>::value || std::is_same<T, half>::value ||
                    std::is_same<T, int32_t>::value || std::is_same<T, float>::value,
                "Arange takes int16_t, half, int32_t or float (guide 6.2.4.8.1)");
  if (count <= 0) {
    fail(loc, "Arange: count must be greater than 0 (count = %d)", count);
    return;
  }
  const int32_t head = count < 8 ? count : 8;
  for (int32_t i = 0; i < head; ++i) {
    T v;
    if constexpr (std::is_integral<T>::value) {
      v = (T)((int64_t)first + (int64_t)arange_offset(diff, i));
    } else {
      v = (T)((float)first + (float)arange_offset(diff, i));
    }
    dst.SetValue((uint32_t)i, v, loc);
  }
  if (count <= 8) return;
  AscendC::PipeBarrier<PIPE_ALL>(loc);
  const int32_t mid = count < 64 ? count : 64;
  for (int32_t at = 8; at < mid; at += 8) {
    const int32_t n = mid - at < 8 ? mid - at : 8;
    AscendC::Adds(dst[(uint32_t)at], dst, arange_offset(diff, at), n, loc);
  }
  for (int32_t at = 64; at < count; at += 64) {
    const int32_t n = count - at < 64 ? count - at : 64;
    AscendC::Adds(dst[(uint32_t)at], dst, arange_offset(diff, at), n, loc);
  }
}

}  // namespace lib
}  // namespace ascendopt

namespace AscendC {

template <typename T>
inline void Arange(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count, ASC_LOC) {
  ::ascendopt::lib::arange(dst, firstValue, diffValue, count, loc_);
}
template <typename T>
inline void ArithProgression(const LocalTensor<T>& dstLocal, const T firstValue, const T diffValue,
                             const int32_t count, ASC_LOC) {
  ::ascendopt::lib::arange(dstLocal, firstValue, diffValue, count, loc_);
}

}  // namespace AscendC

#endif
