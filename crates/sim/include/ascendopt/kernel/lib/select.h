// ascendopt AscendC emulation, high-level API library: Select with a byte
// mask (guide 6.2.4.9.1; the name older CANN code calls it by,
// SelectWithBytesMask, too): dst[r, c] = mask[r, c] == 0 ? src0 : src1 for
// r < firstAxis, c < srcLastAxis, one of src0/src1 a tensor and the other a
// scalar; mask rows are maskLastAxis >= srcLastAxis elements long (the rest
// of a row is ignored).
//
// The guide's steps: the mask rows narrowed to srcLastAxis (one Cast per row
// when the lengths differ, else one Cast over all), cast to a float type
// (half for half data and a 1- or 2-byte mask, else float, through half for
// a narrow mask), compared with 0 (Compares into a bit mask), then one
// Select over the data. The mask is
// never modified (isReuseMask only permits it). Temporary space: the cast
// mask and the bit mask of the rows processed at once (at least one row;
// select_tmp_bytes, GetSelectMin/MaxTmpSize on the host).
#ifndef ASCENDOPT_KERNEL_LIB_SELECT_H
#define ASCENDOPT_KERNEL_LIB_SELECT_H

#include "common.h"
#include "params.h"

namespace ascendopt {
namespace lib {

template <class T, class U>
inline void select_bytes(const LocalTensor<T>& dst, const LocalTensor<T>* src0, T scalar0,
                         const LocalTensor<T>* src1, T scalar1, const LocalTensor<U>& mask,
                         const LocalTensor<uint8_t>& shared, const AscendC::SelectWithBytesMaskShapeInfo& info,
                         const Loc& loc) {
  static_assert(is_float_type<T>(), "Select with a byte mask takes half or float data (guide 6.2.4.9.1)");
  static_assert(std::is_integral<U>::value && sizeof(U) <= 4,
                "Select with a byte mask takes a bool or 8/16/32-bit integer mask (guide 6.2.4.9.1)");
  const uint32_t m = info.firstAxis, k1 = info.srcLastAxis, k2 = info.maskLastAxis;
  if (m == 0 || k1 == 0) return;
  if (k2 < k1 || (k1 * sizeof(T)) % kBlockBytes != 0 || (k2 * sizeof(U)) % kBlockBytes != 0) {
    fail(loc, "Select: SelectWithBytesMaskShapeInfo needs maskLastAxis >= srcLastAxis and both rows 32-byte "
              "aligned (srcLastAxis = %u, maskLastAxis = %u)", k1, k2);
    return;
  }
  constexpr uint32_t cs = select_cast_size(sizeof(T), sizeof(U));
  constexpr bool kStage = cs == 4 && sizeof(U) < 4;
  const Tmp tmp{shared.desc_, false};
  uint64_t rows_per = 0;
  while (rows_per < m && select_tmp_bytes(rows_per + 1, k1, sizeof(T), sizeof(U)) <= tmp.bytes()) ++rows_per;
  if (rows_per == 0) {
    fail(loc, "Select: sharedTmpBuffer holds %llu bytes, one row of %u elements needs %llu (GetSelectMinTmpSize)",
         (unsigned long long)tmp.bytes(), k1, (unsigned long long)select_tmp_bytes(1, k1, sizeof(T), sizeof(U)));
    return;
  }
  if (tmp.whole.addr % kBlockBytes != 0) fail(loc, "Select: sharedTmpBuffer is not 32-byte aligned");
  const Span used{tmp.whole.mem, tmp.whole.addr,
                  tmp.whole.addr + select_tmp_bytes(rows_per, k1, sizeof(T), sizeof(U)), "sharedTmpBuffer"};
  const Span ops[2] = {span_of(mask, (uint64_t)m * k2, "mask"), span_of(dst, (uint64_t)m * k1, "dst")};
  for (const Span& s : ops)
    if (overlaps(used, s)) fail(loc, "Select: sharedTmpBuffer overlaps %s (the guide does not allow it)", s.what);
  using C = typename std::conditional<cs == 4, float, half>::type;
  // The mask's bits as the signed or unsigned integer Cast takes (a value
  // is zero or not whatever its signedness).
  using I = typename std::conditional<
      sizeof(U) == 1, typename std::conditional<std::is_signed<U>::value, int8_t, uint8_t>::type,
      typename std::conditional<sizeof(U) == 2, int16_t, int32_t>::type>::type;
  const LocalTensor<I> imask = mask.template ReinterpretCast<I>();
  const uint64_t cap = round_up(rows_per * k1, kRepeatBytes / cs);
  const LocalTensor<uint8_t> raw = LocalTensor<uint8_t>::from_desc(tmp.whole, AscendC::TPosition::VECCALC);
  LocalTensor<C> mc = raw.template ReinterpretCast<C>();
  mc.desc_.elems = (uint32_t)cap;
  LocalTensor<uint8_t> bits = raw[(uint32_t)(cap * cs)];
  bits.desc_.elems = (uint32_t)mask_bytes(cap);
  LocalTensor<half> stage = raw[(uint32_t)(cap * cs + mask_bytes(cap))].template ReinterpretCast<half>();
  stage.desc_.elems = (uint32_t)cap;
  // Casts `count` mask elements at `from` into mc[at].
  auto cast_mask = [&](uint32_t at, uint32_t from, uint32_t count) {
    if constexpr (kStage) {
      AscendC::Cast(stage, imask[from], AscendC::RoundMode::CAST_NONE, count, loc);
      AscendC::Cast(mc[at], stage, AscendC::RoundMode::CAST_NONE, count, loc);
    } else {
      AscendC::Cast(mc[at], imask[from], AscendC::RoundMode::CAST_NONE, count, loc);
    }
  };
  for (uint32_t r0 = 0; r0 < m; r0 += (uint32_t)rows_per) {
    const uint32_t rows = m - r0 < rows_per ? m - r0 : (uint32_t)rows_per;
    const uint32_t n = rows * k1;
    if (k1 == k2) {
      cast_mask(0, r0 * k2, n);
    } else {
      for (uint32_t r = 0; r < rows; ++r) cast_mask(r * k1, (r0 + r) * k2, k1);
    }
    const uint32_t n_cmp = (uint32_t)round_up(n, kRepeatBytes / cs);
    if (src0 != nullptr) {
      // mask == 0 ? src0 : scalar
      AscendC::Compares(bits, mc, (C)0.0f, AscendC::CMPMODE::EQ, n_cmp, loc);
      AscendC::Select(dst[r0 * k1], bits, (*src0)[r0 * k1], scalar1, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, n,
                      loc);
    } else {
      // mask != 0 ? src1 : scalar
      AscendC::Compares(bits, mc, (C)0.0f, AscendC::CMPMODE::NE, n_cmp, loc);
      AscendC::Select(dst[r0 * k1], bits, (*src1)[r0 * k1], scalar0, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, n,
                      loc);
    }
  }
}

// The scalar's type comes from the tensors alone.
template <class T>
struct NoDeduce {
  using type = T;
};

}  // namespace lib
}  // namespace ascendopt

namespace AscendC {

// src0 a tensor, src1 a scalar: mask == 0 ? src0 : src1. The scalar is
// converted to T (it does not take part in deducing T).
template <typename T, typename U, bool isReuseMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                   typename ::ascendopt::lib::NoDeduce<T>::type src1, const LocalTensor<U>& mask,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info, ASC_LOC) {
  ::ascendopt::lib::select_bytes(dst, &src0, T(), (const LocalTensor<T>*)nullptr, src1, mask, sharedTmpBuffer, info,
                                 loc_);
}
// src0 a scalar, src1 a tensor: mask == 0 ? src0 : src1.
template <typename T, typename U, bool isReuseMask = true>
inline void Select(const LocalTensor<T>& dst, typename ::ascendopt::lib::NoDeduce<T>::type src0,
                   const LocalTensor<T>& src1, const LocalTensor<U>& mask,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info, ASC_LOC) {
  ::ascendopt::lib::select_bytes(dst, (const LocalTensor<T>*)nullptr, src0, &src1, T(), mask, sharedTmpBuffer, info,
                                 loc_);
}
template <typename T, typename U, bool isReuseMask = true>
inline void SelectWithBytesMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                                typename ::ascendopt::lib::NoDeduce<T>::type src1,
                                const LocalTensor<U>& mask, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                const SelectWithBytesMaskShapeInfo& info, ASC_LOC) {
  ::ascendopt::lib::select_bytes(dst, &src0, T(), (const LocalTensor<T>*)nullptr, src1, mask, sharedTmpBuffer, info,
                                 loc_);
}
template <typename T, typename U, bool isReuseMask = true>
inline void SelectWithBytesMask(const LocalTensor<T>& dst, typename ::ascendopt::lib::NoDeduce<T>::type src0,
                                const LocalTensor<T>& src1,
                                const LocalTensor<U>& mask, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                const SelectWithBytesMaskShapeInfo& info, ASC_LOC) {
  ::ascendopt::lib::select_bytes(dst, (const LocalTensor<T>*)nullptr, src0, &src1, T(), mask, sharedTmpBuffer, info,
                                 loc_);
}

}  // namespace AscendC

#endif
