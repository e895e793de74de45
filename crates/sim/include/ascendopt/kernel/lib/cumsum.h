// ascendopt AscendC emulation, high-level API library: CumSum (guide
// 6.2.4.1.29), the running sums of an [outter, inner] tensor along the
// first axis (down the rows) or the last axis (along each row), in float
// ("内部实现中涉及精度转换": a half tensor is summed in float and rounded
// back), with the last row optionally copied to lastRowTensor.
//
// First axis (line by line, as the guide describes for A2): row i = row
// i-1 + src row i, one Add of `inner` elements per row.
// Last axis: a row cannot be summed lane by lane with vector instructions,
// so it is scanned in log2(inner) rounds (Hillis-Steele): in round d every
// element adds the element d places before it in its row, gathered with one
// Gather by byte offsets (elements in the first d columns add 0). Each
// round is 6 instructions over the whole chunk of rows. The additions are
// in a different order than a sequential sum, with an error of at most
// log2(inner) roundings per element instead of inner - 1.
// Temporary space: last axis, five float arrays (data, index offsets,
// gather offsets, column numbers, gathered values) and a bit mask per
// element, for whole rows at a time (at least one row); first axis, two
// float rows for half (the running sum and the cast row).
#ifndef ASCENDOPT_KERNEL_LIB_CUMSUM_H
#define ASCENDOPT_KERNEL_LIB_CUMSUM_H

#include "common.h"

namespace AscendC {
enum class CumSumAlgorithm { CUMSUM_ALGORITHM_LINEBYLINE = 0, CUMSUM_ALGORITHM_SKLANSKY = 1 };
struct CumSumConfig {
  bool isLastAxis{true};
  bool isReuseSource{false};
  bool outputLastRow{false};
  CumSumAlgorithm algorithm{CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
};
inline constexpr CumSumConfig defaultCumSumConfig = {};
struct CumSumInfo {
  uint32_t outter{0};
  uint32_t inner{0};
};
}  // namespace AscendC

namespace ascendopt {
namespace lib {

template <class T>
inline void cumsum(const LocalTensor<T>& dst, const LocalTensor<T>& last_row, const LocalTensor<T>& src,
                   const LocalTensor<uint8_t>* shared, uint32_t outter, uint32_t inner, bool last_axis,
                   bool output_last_row, const Loc& loc) {
  static_assert(is_float_type<T>(), "CumSum takes half or float tensors (guide 6.2.4.1.29)");
  if (outter == 0 || inner == 0 || (inner * sizeof(T)) % kBlockBytes != 0) {
    fail(loc, "CumSum: cumSumInfo needs outter > 0, inner > 0 and inner * sizeof(T) a multiple of 32 bytes "
              "(outter = %u, inner = %u)", outter, inner);
    return;
  }
  const uint64_t total = (uint64_t)outter * inner;
  const Span operands[2] = {span_of(src, total, "srcTensor"), span_of(dst, total, "dstTensor")};
  const Tmp tmp = tmp_of(shared, loc);
  constexpr bool kHalf = sizeof(T) == 2;
  if (!last_axis) {
    const int32_t n = (int32_t)inner;
    if constexpr (kHalf) {
      const uint32_t need = cumsum_min_tmp(inner, sizeof(T), false);
      if (tmp.bytes() < need)
        fail(loc, "CumSum: the temporary space holds %llu bytes, it needs %u (GetCumSumMaxMinTmpSize)",
             (unsigned long long)tmp.bytes(), need);
      const Span used{tmp.whole.mem, tmp.whole.addr, tmp.whole.addr + need, "sharedTmpBuffer"};
      for (const Span& op : operands)
        if (overlaps(used, op)) fail(loc, "CumSum: the temporary buffer overlaps %s", op.what);
      V acc = LocalTensor<uint8_t>::from_desc(tmp.whole, AscendC::TPosition::VECCALC).template ReinterpretCast<float>();
      acc.desc_.elems = inner;
      V row = acc[(uint32_t)(round_up((uint64_t)inner * 4, kBlockBytes) / 4)];
      row.desc_.elems = inner;
      AscendC::Cast(acc, src, AscendC::RoundMode::CAST_NONE, inner, loc);
      AscendC::Cast(dst, acc, AscendC::RoundMode::CAST_RINT, inner, loc);
      for (uint32_t i = 1; i < outter; ++i) {
        AscendC::Cast(row, src[i * inner], AscendC::RoundMode::CAST_NONE, inner, loc);
        AscendC::Add(acc, acc, row, n, loc);
        AscendC::Cast(dst[i * inner], acc, AscendC::RoundMode::CAST_RINT, inner, loc);
      }
    } else {
      AscendC::Muls(dst, src, (T)1.0f, n, loc);
      for (uint32_t i = 1; i < outter; ++i) AscendC::Add(dst[i * inner], dst[(i - 1) * inner], src[i * inner], n, loc);
    }
  } else {
    Work w = carve("CumSum", cumsum_last_layout(), sizeof(T), tmp, total, operands, 2, loc);
    const uint64_t rows_per = w.chunk / inner;
    if (w.chunk != 0 && rows_per == 0)
      fail(loc, "CumSum: the temporary space holds %llu bytes, one row of %u elements needs %u "
                "(GetCumSumMaxMinTmpSize)", (unsigned long long)tmp.bytes(), inner,
           cumsum_min_tmp(inner, sizeof(T), true));
    if (w.chunk == 0 || rows_per == 0) return;
    for (uint32_t r0 = 0; r0 < outter; r0 += (uint32_t)rows_per) {
      const uint32_t rows = outter - r0 < rows_per ? outter - r0 : (uint32_t)rows_per;
      const int32_t n = (int32_t)(rows * inner);
      const Ops o{n, loc};
      const V data = at(w.node[0], 0, n), col = at(w.node[3], 0, n), got = at(w.node[4], 0, n);
      LocalTensor<int32_t> idx = w.node[1].template ReinterpretCast<int32_t>();
      LocalTensor<int32_t> off = w.node[2].template ReinterpretCast<int32_t>();
      idx.desc_.elems = off.desc_.elems = (uint32_t)n;
      if constexpr (kHalf) {
        AscendC::Cast(data, src[r0 * inner], AscendC::RoundMode::CAST_NONE, (uint32_t)n, loc);
      } else {
        o.copy(data, src[r0 * inner]);
      }
      // col = element index mod inner; idx = byte offsets of the elements.
      AscendC::CreateVecIndex(col, 0.0f, (uint32_t)n, loc);
      AscendC::Divs(got, col, (float)inner, n, loc);
      o.round(got, got, AscendC::RoundMode::CAST_FLOOR);
      o.muls(got, got, (float)inner);
      o.sub(col, col, got);
      AscendC::CreateVecIndex(idx, (int32_t)0, (uint32_t)n, loc);
      AscendC::ShiftLeft(idx, idx, (int32_t)2, n, loc);
      for (uint32_t d = 1; d < inner; d *= 2) {
        AscendC::Adds(off, idx, (int32_t)(-4 * (int32_t)d), n, loc);
        AscendC::Maxs(off, off, (int32_t)0, n, loc);
        AscendC::Gather(got, data, off.template ReinterpretCast<uint32_t>(), 0u, (uint32_t)n, loc);
        o.cmps(w.mask[0], col, (float)d, AscendC::CMPMODE::GE);
        o.sels(got, w.mask[0], got, 0.0f);
        o.add(data, data, got);
      }
      if constexpr (kHalf) {
        AscendC::Cast(dst[r0 * inner], data, AscendC::RoundMode::CAST_RINT, (uint32_t)n, loc);
      } else {
        o.copy(at(dst, r0 * inner, n), data);
      }
    }
  }
  if (output_last_row) AscendC::Muls(last_row, dst[(outter - 1) * inner], (T)1.0f, (int32_t)inner, loc);
}

}  // namespace lib
}  // namespace ascendopt

namespace AscendC {

template <typename T, const CumSumConfig& config = defaultCumSumConfig>
inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                   LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& cumSumInfo, ASC_LOC) {
  ::ascendopt::lib::cumsum(dstTensor, lastRowTensor, srcTensor, &sharedTmpBuffer, cumSumInfo.outter, cumSumInfo.inner,
                           config.isLastAxis, config.outputLastRow, loc_);
}
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                   const CumSumInfo& cumSumInfo, ASC_LOC) {
  ::ascendopt::lib::cumsum(dstTensor, lastRowTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr,
                           cumSumInfo.outter, cumSumInfo.inner, config.isLastAxis, config.outputLastRow, loc_);
}

}  // namespace AscendC

#endif
