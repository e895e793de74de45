// ascendopt AscendC emulation, high-level API library: Sum and Mean (guide
// 6.2.4.6.1-2), the sum and the mean of each row of an [outter, inner]
// tensor over its first n elements (inner is n rounded up to 32 bytes).
//
// As the guide says, the sums add the way ReduceSum and WholeReduceSum do:
// rows of at most one repeat (256 bytes) are reduced by one WholeReduceSum
// for up to 255 rows at a time; a longer row by one ReduceSum (count form:
// a tree inside each repeat, the repeats in order). Sums are in the element
// type (a half sum rounds and saturates like those instructions); Mean
// divides by n (Divs), and with a wider accType (half data, float sums)
// casts each row to float first.
// Temporary space (tmp_layout.h, for the host helpers too): none for the
// sums (a kernel's sharedTmpBuffer of any size is accepted); Mean with a
// wider accType holds one row in float and 16 float row results.
#ifndef ASCENDOPT_KERNEL_LIB_REDUCE_H
#define ASCENDOPT_KERNEL_LIB_REDUCE_H

#include "common.h"

#include "params.h"

namespace ascendopt {
namespace lib {

// dst[0] = sum of src[0..n) (one row): ReduceSum's count form, which
// needs no work space (`work` is passed as the instruction's operand).
template <class T>
inline void row_sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t n, const LocalTensor<T>& work,
                    const Loc& loc) {
  const uint32_t e = kRepeatBytes / sizeof(T);
  if (n <= e) {
    AscendC::WholeReduceSum(dst, src, (int32_t)n, 1, 1, 1, 8, loc);
  } else {
    AscendC::ReduceSum(dst, src, work, (int32_t)n, loc);
  }
}

// Sums (divide == false) or means of the rows of src into dst[0..outter).
template <class T>
inline void row_sums(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                     const LocalTensor<uint8_t>* shared, uint32_t outter, uint32_t inner, uint32_t n, bool divide,
                     const Loc& loc) {
  if (outter == 0) return;
  if (n == 0 || n > inner || (inner * sizeof(T)) % kBlockBytes != 0) {
    fail(loc, "%s: params must have 1 <= n <= inner and inner * sizeof(T) a multiple of 32 bytes (n = %u, inner = %u)",
         api, n, inner);
    return;
  }
  const uint32_t e = kRepeatBytes / sizeof(T);
  if (n <= e) {
    // One WholeReduceSum for up to 255 rows.
    for (uint32_t r = 0; r < outter; r += 255) {
      const uint32_t rows = outter - r < 255 ? outter - r : 255;
      AscendC::WholeReduceSum(dst[r], src[r * inner], (int32_t)n, (int32_t)rows, 1, 1,
                              (int32_t)(inner * sizeof(T) / kBlockBytes), loc);
    }
  } else {
    const Tmp tmp = tmp_of(shared, loc);
    const LocalTensor<T> work = LocalTensor<T>::from_desc(tmp.whole, AscendC::TPosition::VECCALC);
    for (uint32_t r = 0; r < outter; ++r) row_sum(dst[r], src[r * inner], n, work, loc);
  }
  if (divide) AscendC::Divs(dst, dst, (T)(float)n, (int32_t)outter, loc);
}

// Mean of half rows with float sums: each row cast to float, summed, and
// 16 row means at a time cast back.
template <class T, class Acc>
inline void row_means_wide(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* shared,
                           uint32_t outter, uint32_t inner, uint32_t n, const Loc& loc) {
  static_assert(sizeof(Acc) > sizeof(T), "accType wider than T");
  if (outter == 0) return;
  if (n == 0 || n > inner || (inner * sizeof(T)) % kBlockBytes != 0) {
    fail(loc, "Mean: params must have 1 <= n <= inner and inner * sizeof(T) a multiple of 32 bytes (n = %u, inner = %u)",
         n, inner);
    return;
  }
  const Tmp tmp = tmp_of(shared, loc);
  const uint32_t need = mean_tmp_bytes(n, sizeof(T), sizeof(Acc));
  if (tmp.bytes() < need)
    fail(loc, "Mean: the temporary space holds %llu bytes, it needs %u (GetMeanMaxMinTmpSize)",
         (unsigned long long)tmp.bytes(), need);
  const Span used{tmp.whole.mem, tmp.whole.addr, tmp.whole.addr + need, "sharedTmpBuffer"};
  if (overlaps(used, span_of(src, (uint64_t)outter * inner, "")) || overlaps(used, span_of(dst, outter, "")))
    fail(loc, "Mean: the temporary buffer overlaps srcTensor or dstTensor (the guide does not allow it)");
  LocalTensor<Acc> all = LocalTensor<uint8_t>::from_desc(tmp.whole, AscendC::TPosition::VECCALC)
                             .template ReinterpretCast<Acc>();
  const uint32_t row_elems = (uint32_t)(round_up((uint64_t)n * sizeof(Acc), kBlockBytes) / sizeof(Acc));
  LocalTensor<Acc> row = all;
  LocalTensor<Acc> means = all[row_elems];
  for (uint32_t r0 = 0; r0 < outter; r0 += 16) {
    const uint32_t rows = outter - r0 < 16 ? outter - r0 : 16;
    for (uint32_t i = 0; i < rows; ++i) {
      AscendC::Cast(row, src[(r0 + i) * inner], AscendC::RoundMode::CAST_NONE, n, loc);
      row_sum(means[i], row, n, row, loc);
    }
    AscendC::Divs(means, means, (Acc)(float)n, (int32_t)rows, loc);
    AscendC::Cast(dst[r0], means, AscendC::RoundMode::CAST_RINT, rows, loc);
  }
}

}  // namespace lib
}  // namespace ascendopt

namespace AscendC {

template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                const LocalTensor<uint8_t>& sharedTmpBuffer, const SumParams& sumParams, ASC_LOC) {
  static_assert(::ascendopt::lib::is_float_type<T>(), "Sum takes half or float tensors (guide 6.2.4.6.1)");
  ::ascendopt::lib::row_sums("Sum", dstTensor, srcTensor, &sharedTmpBuffer, sumParams.outter, sumParams.inner,
                             sumParams.n, false, loc_);
}
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SumParams& sumParams,
                ASC_LOC) {
  static_assert(::ascendopt::lib::is_float_type<T>(), "Sum takes half or float tensors (guide 6.2.4.6.1)");
  ::ascendopt::lib::row_sums("Sum", dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr, sumParams.outter,
                             sumParams.inner, sumParams.n, false, loc_);
}

namespace detail {
template <typename T, typename accType>
inline void mean_impl(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                      const MeanParams& p, const ::ascendopt::Loc& loc) {
  static_assert(::ascendopt::lib::is_float_type<T>() && ::ascendopt::lib::is_float_type<accType>() &&
                    sizeof(accType) >= sizeof(T),
                "Mean takes half or float tensors and an accType at least as wide (guide 6.2.4.6.2)");
  if constexpr (sizeof(accType) > sizeof(T)) {
    ::ascendopt::lib::row_means_wide<T, accType>(dst, src, tmp, p.outter, p.inner, p.n, loc);
  } else {
    ::ascendopt::lib::row_sums("Mean", dst, src, tmp, p.outter, p.inner, p.n, true, loc);
  }
}
}  // namespace detail

template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false,
          int32_t reduceDim = -1>
inline void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const MeanParams& meanParams, ASC_LOC) {
  detail::mean_impl<T, accType>(dstTensor, srcTensor, &sharedTmpBuffer, meanParams, loc_);
}
template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false,
          int32_t reduceDim = -1>
inline void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const MeanParams& meanParams,
                 ASC_LOC) {
  detail::mean_impl<T, accType>(dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr, meanParams, loc_);
}

}  // namespace AscendC

#endif
