// ascendopt AscendC emulation, high-level API library: SoftMax (guide
// 6.2.4.3.1.1) on ND data, row by row over the last axis:
//   max = rowmax(x); e = exp(x - max); sum = rowsum(e); dst = e / sum,
// with max and sum also written as one 32-byte block per row (every
// element of the block the row's value), the steps the guide's algorithm
// figure lists (reducemax, broadcast, sub, exp, reducesum, broadcast, div).
//
// The shape is [srcM, srcK] from the SoftMaxShapeInfo (or the tiling when
// that is all zero); the row reductions cover the first oriSrcK columns
// (the valid ones), while the element-wise steps run over all srcK columns,
// so padding columns get values that mean nothing, as the guide warns.
// Everything is computed in float (a half source is cast); the results are
// cast back with rounding to nearest even.
//
// Instructions, for a chunk of h rows of k columns (k <= 2040): a column
// fold of ceil(k/64) Max / Add instructions over all h rows plus one
// WholeReduceMax / WholeReduceSum, a Brcb, ceil(k/64) Sub and Div with the
// row's block broadcast, and one Exp; longer rows fold row by row with
// repeat-stride-0 accumulation.
// Temporary space for h rows (softmax_tmp_bytes; GetSoftMaxMin/MaxTmpSize
// of lib_tiling.h give h = 1 and h = srcM): the rows in float, 64 float
// partials per row, the row maxima and sums and their broadcast blocks.
// SoftmaxGrad (6.2.4.3.1.4) shares the row reductions and broadcasts.
// NZ data (isDataFormatNZ) is not emulated.
#ifndef ASCENDOPT_KERNEL_LIB_SOFTMAX_H
#define ASCENDOPT_KERNEL_LIB_SOFTMAX_H

#include "../../lib/softmax_tiling.h"
#include "common.h"

namespace AscendC {
struct SoftMaxShapeInfo {
  uint32_t srcM;
  uint32_t srcK;
  uint32_t oriSrcM;
  uint32_t oriSrcK;
};
enum class SoftmaxMode { SOFTMAX_NORMAL = 0, SOFTMAX_OUTPUT_WITHOUT_BRC = 1 };
struct SoftmaxConfig {
  bool isCheckTiling = true;
  uint32_t oriSrcM = 0;
  uint32_t oriSrcK = 0;
  SoftmaxMode mode = SoftmaxMode::SOFTMAX_NORMAL;
};
inline constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0, SoftmaxMode::SOFTMAX_NORMAL};
}  // namespace AscendC

namespace ascendopt {
namespace lib {

// Rows per instruction of the row-strided forms: a multiple of 8 (the
// reductions' destinations stay 32-byte aligned) within the 255 repeats.
constexpr uint32_t kRowGroup = 248;

enum class RowOp { Max, Sum };

// m[r] = max / sum of x[r, 0..kv) for r < h (x rows of k floats), p the
// partial array (64 floats per row).
template <class VT>
inline void reduce_rows(RowOp op, const VT& m, const VT& x, const VT& p, uint32_t h, uint32_t k, uint32_t kv,
                        const Loc& loc) {
  const bool strided = k / 8 <= 255;
  auto fold = [&](const VT& d, const VT& a, const VT& b, uint64_t mask, uint8_t rep,
                  const AscendC::BinaryRepeatParams& rp) {
    if (op == RowOp::Max)
      AscendC::Max(d, a, b, mask, rep, rp, loc);
    else
      AscendC::Add(d, a, b, mask, rep, rp, loc);
  };
  auto whole = [&](const VT& d, const VT& s, int32_t mask, int32_t rep, int32_t src_rep) {
    if (op == RowOp::Max)
      AscendC::WholeReduceMax(d, s, mask, rep, 1, 1, src_rep, AscendC::ReduceOrder::ORDER_ONLY_VALUE, loc);
    else
      AscendC::WholeReduceSum(d, s, mask, rep, 1, 1, src_rep, loc);
  };
  if (kv <= 64 && strided) {
    for (uint32_t g = 0; g < h; g += kRowGroup) {
      const uint32_t rows = h - g < kRowGroup ? h - g : kRowGroup;
      whole(m[g], x[g * k], (int32_t)kv, (int32_t)rows, (int32_t)(k / 8));
    }
    return;
  }
  const uint32_t lanes = kv < 64 ? kv : 64;
  const uint32_t full = kv / 64;
  const uint32_t tail = kv % 64;
  if (strided) {
    for (uint32_t g = 0; g < h; g += kRowGroup) {
      const uint8_t rows = (uint8_t)(h - g < kRowGroup ? h - g : kRowGroup);
      const uint8_t ks = (uint8_t)(k / 8);
      AscendC::Muls(p[g * 64], x[g * k], 1.0f, (uint64_t)lanes, rows, AscendC::UnaryRepeatParams(1, 1, 8, ks), loc);
      const AscendC::BinaryRepeatParams rp(1, 1, 1, 8, 8, ks);
      for (uint32_t j = 1; j < full; ++j) fold(p[g * 64], p[g * 64], x[g * k + 64 * j], 64, rows, rp);
      if (full > 0 && tail > 0) fold(p[g * 64], p[g * 64], x[g * k + 64 * full], tail, rows, rp);
    }
  } else {
    const AscendC::BinaryRepeatParams acc(1, 1, 1, 0, 0, 8);
    for (uint32_t r = 0; r < h; ++r) {
      const VT pr = p[r * 64];
      AscendC::Muls(pr, x[r * k], 1.0f, (int32_t)lanes, loc);
      for (uint32_t j = 1; j < full; j += 255) {
        const uint32_t rep = full - j < 255 ? full - j : 255;
        fold(pr, pr, x[r * k + 64 * j], 64, (uint8_t)rep, acc);
      }
      if (full > 0 && tail > 0) fold(pr, pr, x[r * k + 64 * full], tail, 1, acc);
    }
  }
  for (uint32_t g = 0; g < h; g += kRowGroup) {
    const uint32_t rows = h - g < kRowGroup ? h - g : kRowGroup;
    whole(m[g], p[g * 64], (int32_t)lanes, (int32_t)rows, 8);
  }
}

// x[r, 0..k) = x[r, ..] op b[r] (b: one 8-float block per row), op = Sub
// or Div.
template <class VT>
inline void broadcast_rows(bool div, const VT& x, const VT& b, uint32_t h, uint32_t k, const Loc& loc) {
  auto apply = [&](const VT& d, const VT& a, const VT& bb, uint64_t mask, uint8_t rep,
                   const AscendC::BinaryRepeatParams& rp) {
    if (div)
      AscendC::Div(d, a, bb, mask, rep, rp, loc);
    else
      AscendC::Sub(d, a, bb, mask, rep, rp, loc);
  };
  const uint32_t blocks = (k + 63) / 64;
  if (k / 8 <= 255) {
    const uint8_t ks = (uint8_t)(k / 8);
    const AscendC::BinaryRepeatParams rp(1, 1, 0, ks, ks, 1);
    for (uint32_t g = 0; g < h; g += 255) {
      const uint8_t rows = (uint8_t)(h - g < 255 ? h - g : 255);
      for (uint32_t j = 0; j < blocks; ++j) {
        const uint32_t mask = k - 64 * j < 64 ? k - 64 * j : 64;
        apply(x[g * k + 64 * j], x[g * k + 64 * j], b[g * 8], mask, rows, rp);
      }
    }
  } else {
    const AscendC::BinaryRepeatParams rp(1, 1, 0, 8, 8, 0);
    for (uint32_t r = 0; r < h; ++r) {
      const uint32_t full = k / 64;
      for (uint32_t j = 0; j < full; j += 255) {
        const uint32_t rep = full - j < 255 ? full - j : 255;
        apply(x[r * k + 64 * j], x[r * k + 64 * j], b[r * 8], 64, (uint8_t)rep, rp);
      }
      if (k % 64 != 0) apply(x[r * k + 64 * full], x[r * k + 64 * full], b[r * 8], k % 64, 1, rp);
    }
  }
}

// Writes the row values m (h floats, with room for a multiple of 8) as one
// 32-byte block per row into out[0 .. h blocks) of U; `scratch` holds the
// half conversion.
template <class U>
inline void write_blocks(const LocalTensor<U>& out, const V& m, const V& mb, const V& scratch, uint32_t h,
                         const Loc& loc) {
  const uint8_t reps = (uint8_t)((h + 7) / 8);
  if constexpr (sizeof(U) == 4) {
    AscendC::Muls(out, mb, 1.0f, (int32_t)(h * 8), loc);
  } else {
    LocalTensor<U> mh = scratch.template ReinterpretCast<U>();
    LocalTensor<U> blocks = mh[(uint32_t)round_up((uint64_t)(h + 7) / 8 * 8, 16)];
    AscendC::Cast(mh, m, AscendC::RoundMode::CAST_RINT, (h + 7) / 8 * 8, loc);
    AscendC::Brcb(blocks, mh, reps, AscendC::BrcbRepeatParams(1, 8), loc);
    AscendC::Muls(out, blocks, (U)1.0f, (int32_t)(h * 16), loc);
  }
}

template <class T, class U>
inline void softmax(const LocalTensor<T>& dst, const LocalTensor<U>* sum, const LocalTensor<U>* max,
                    const LocalTensor<T>& src, const LocalTensor<uint8_t>* shared, const ::AscendC::tiling::SoftMaxTiling& tiling,
                    const AscendC::SoftMaxShapeInfo& info, const Loc& loc) {
  static_assert(is_float_type<T>() && is_float_type<U>(), "SoftMax takes half or float tensors (guide 6.2.4.3.1.1)");
  uint32_t m = info.srcM, k = info.srcK;
  if (m == 0 && k == 0) {
    m = tiling.srcM;
    k = tiling.srcK;
  }
  if (m == 0) return;
  if (k == 0 || (k * sizeof(T)) % kBlockBytes != 0) {
    fail(loc, "SoftMax: srcK = %u; the last axis must be a positive multiple of 32 bytes", k);
    return;
  }
  const uint32_t kv = info.oriSrcK > 0 && info.oriSrcK <= k ? info.oriSrcK : k;
  const Tmp tmp = tmp_of(shared, loc);
  uint64_t rows_per = 0;
  while (rows_per < m && rows_per < kRowGroup && softmax_tmp_bytes(rows_per + 1, k) <= tmp.bytes()) ++rows_per;
  if (rows_per == 0) {
    fail(loc, "SoftMax: the temporary space holds %llu bytes, one row of %u columns needs %llu "
              "(GetSoftMaxMinTmpSize)", (unsigned long long)tmp.bytes(), k,
         (unsigned long long)softmax_tmp_bytes(1, k));
    return;
  }
  if (tmp.whole.addr % kBlockBytes != 0) fail(loc, "SoftMax: sharedTmpBuffer is not 32-byte aligned");
  const uint64_t total = (uint64_t)m * k;
  const Span used{tmp.whole.mem, tmp.whole.addr, tmp.whole.addr + softmax_tmp_bytes(rows_per, k), "sharedTmpBuffer"};
  const Span ops[2] = {span_of(src, total, "srcTensor"), span_of(dst, total, "dstTensor")};
  for (const Span& s : ops)
    if (overlaps(used, s)) fail(loc, "SoftMax: the temporary buffer overlaps %s (the guide does not allow it)", s.what);

  const uint32_t groups = (uint32_t)round_up(rows_per, 8);
  V base = LocalTensor<uint8_t>::from_desc(tmp.whole, AscendC::TPosition::VECCALC).template ReinterpretCast<float>();
  const V x = base;
  const V p = base[(uint32_t)(rows_per * k)];
  const V mx = p[groups * 64];
  const V sm = mx[groups];
  const V mb = sm[groups];
  const V sb = mb[groups * 8];
  const uint32_t blk_u = 32 / sizeof(U);
  for (uint32_t r0 = 0; r0 < m; r0 += (uint32_t)rows_per) {
    const uint32_t h = m - r0 < rows_per ? m - r0 : (uint32_t)rows_per;
    const int32_t n = (int32_t)(h * k);
    if constexpr (sizeof(T) == 2) {
      AscendC::Cast(x, src[r0 * k], AscendC::RoundMode::CAST_NONE, (uint32_t)n, loc);
    } else {
      AscendC::Muls(x, src[r0 * k], 1.0f, n, loc);
    }
    reduce_rows(RowOp::Max, mx, x, p, h, k, kv, loc);
    AscendC::Brcb(mb, mx, (uint8_t)((h + 7) / 8), AscendC::BrcbRepeatParams(1, 8), loc);
    if (max != nullptr) write_blocks((*max)[r0 * blk_u], mx, mb, p, h, loc);
    broadcast_rows(false, x, mb, h, k, loc);
    AscendC::Exp(x, x, n, loc);
    reduce_rows(RowOp::Sum, sm, x, p, h, k, kv, loc);
    AscendC::Brcb(sb, sm, (uint8_t)((h + 7) / 8), AscendC::BrcbRepeatParams(1, 8), loc);
    if (sum != nullptr) write_blocks((*sum)[r0 * blk_u], sm, sb, p, h, loc);
    broadcast_rows(true, x, sb, h, k, loc);
    if constexpr (sizeof(T) == 2) {
      AscendC::Cast(dst[r0 * k], x, AscendC::RoundMode::CAST_RINT, (uint32_t)n, loc);
    } else {
      AscendC::Muls(dst[r0 * k], x, 1.0f, n, loc);
    }
  }
}

// SoftmaxGrad (6.2.4.3.1.4): s = rowsum(grad * src) over the valid columns;
// isFront: dst = s as one 32-byte block per row; else dst = (grad - s) * src,
// the guide's algorithm steps (mul, reducesum, broadcast, sub, mul), in float.
template <class T>
inline void softmax_grad(const LocalTensor<T>& dst, const LocalTensor<T>& grad, const LocalTensor<T>& src,
                         const LocalTensor<uint8_t>* shared, const ::AscendC::tiling::SoftMaxTiling& tiling,
                         bool is_front, const AscendC::SoftMaxShapeInfo& info, const Loc& loc) {
  static_assert(is_float_type<T>(), "SoftmaxGrad takes half or float tensors (guide 6.2.4.3.1.4)");
  uint32_t m = info.srcM, k = info.srcK;
  if (m == 0 && k == 0) {
    m = tiling.srcM;
    k = tiling.srcK;
  }
  if (m == 0) return;
  if (k == 0 || (k * sizeof(T)) % kBlockBytes != 0) {
    fail(loc, "SoftmaxGrad: srcK = %u; the last axis must be a positive multiple of 32 bytes", k);
    return;
  }
  const uint32_t kv = info.oriSrcK > 0 && info.oriSrcK <= k ? info.oriSrcK : k;
  const Tmp tmp = tmp_of(shared, loc);
  uint64_t rows_per = 0;
  while (rows_per < m && rows_per < kRowGroup && softmax_grad_tmp_bytes(rows_per + 1, k) <= tmp.bytes()) ++rows_per;
  if (rows_per == 0) {
    fail(loc, "SoftmaxGrad: the temporary space holds %llu bytes, one row of %u columns needs %llu "
              "(GetSoftMaxGradMinTmpSize)", (unsigned long long)tmp.bytes(), k,
         (unsigned long long)softmax_grad_tmp_bytes(1, k));
    return;
  }
  if (tmp.whole.addr % kBlockBytes != 0) fail(loc, "SoftmaxGrad: sharedTmpBuffer is not 32-byte aligned");
  const uint64_t total = (uint64_t)m * k;
  const Span used{tmp.whole.mem, tmp.whole.addr, tmp.whole.addr + softmax_grad_tmp_bytes(rows_per, k),
                  "sharedTmpBuffer"};
  const Span ops[3] = {span_of(src, total, "srcTensor"), span_of(grad, total, "gradTensor"),
                       span_of(dst, is_front ? (uint64_t)m * (32 / sizeof(T)) : total, "dstTensor")};
  for (const Span& s : ops)
    if (overlaps(used, s)) fail(loc, "SoftmaxGrad: the temporary buffer overlaps %s (the guide does not allow it)", s.what);
  const uint32_t groups = (uint32_t)round_up(rows_per, 8);
  V base = LocalTensor<uint8_t>::from_desc(tmp.whole, AscendC::TPosition::VECCALC).template ReinterpretCast<float>();
  const V g = base;
  const V y = base[(uint32_t)(rows_per * k)];
  const V prod = y[(uint32_t)(rows_per * k)];
  const V p = prod[(uint32_t)(rows_per * k)];
  const V sm = p[groups * 64];
  const V sb = sm[groups];
  for (uint32_t r0 = 0; r0 < m; r0 += (uint32_t)rows_per) {
    const uint32_t h = m - r0 < rows_per ? m - r0 : (uint32_t)rows_per;
    const int32_t n = (int32_t)(h * k);
    if constexpr (sizeof(T) == 2) {
      AscendC::Cast(g, grad[r0 * k], AscendC::RoundMode::CAST_NONE, (uint32_t)n, loc);
      AscendC::Cast(y, src[r0 * k], AscendC::RoundMode::CAST_NONE, (uint32_t)n, loc);
    } else {
      AscendC::Muls(g, grad[r0 * k], 1.0f, n, loc);
      AscendC::Muls(y, src[r0 * k], 1.0f, n, loc);
    }
    AscendC::Mul(prod, g, y, n, loc);
    reduce_rows(RowOp::Sum, sm, prod, p, h, k, kv, loc);
    AscendC::Brcb(sb, sm, (uint8_t)((h + 7) / 8), AscendC::BrcbRepeatParams(1, 8), loc);
    if (is_front) {
      write_blocks(dst[r0 * (32 / sizeof(T))], sm, sb, p, h, loc);
      continue;
    }
    broadcast_rows(false, g, sb, h, k, loc);
    AscendC::Mul(g, g, y, n, loc);
    if constexpr (sizeof(T) == 2) {
      AscendC::Cast(dst[r0 * k], g, AscendC::RoundMode::CAST_RINT, (uint32_t)n, loc);
    } else {
      AscendC::Muls(dst[r0 * k], g, 1.0f, n, loc);
    }
  }
}

}  // namespace lib
}  // namespace ascendopt

namespace AscendC {

#define ASCENDOPT_SOFTMAX_NZ_CHECK                                                                         \
  static_assert(!isDataFormatNZ, "not supported by the ascendopt simulator: SoftMax with isDataFormatNZ " \
                                 "(NZ data); ND data is emulated")

// With sumTensor and maxTensor, all of one type.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                    const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASC_LOC) {
  ASCENDOPT_SOFTMAX_NZ_CHECK;
  ::ascendopt::lib::softmax(dstTensor, &sumTensor, &maxTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr,
                            tiling, softmaxShapeInfo, loc_);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                    const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASC_LOC) {
  ASCENDOPT_SOFTMAX_NZ_CHECK;
  ::ascendopt::lib::softmax(dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer, tiling, softmaxShapeInfo,
                            loc_);
}
// half data with float sumTensor and maxTensor.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                    const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASC_LOC) {
  ASCENDOPT_SOFTMAX_NZ_CHECK;
  ::ascendopt::lib::softmax(dstTensor, &sumTensor, &maxTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr,
                            tiling, softmaxShapeInfo, loc_);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                    const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASC_LOC) {
  ASCENDOPT_SOFTMAX_NZ_CHECK;
  ::ascendopt::lib::softmax(dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer, tiling, softmaxShapeInfo,
                            loc_);
}
// Without sumTensor and maxTensor.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASC_LOC) {
  ::ascendopt::lib::softmax(dstTensor, (const LocalTensor<T>*)nullptr, (const LocalTensor<T>*)nullptr, srcTensor,
                            (const LocalTensor<uint8_t>*)nullptr, tiling, softmaxShapeInfo, loc_);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASC_LOC) {
  ::ascendopt::lib::softmax(dstTensor, (const LocalTensor<T>*)nullptr, (const LocalTensor<T>*)nullptr, srcTensor,
                            &sharedTmpBuffer, tiling, softmaxShapeInfo, loc_);
}

template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
inline void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                        const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling, bool isFront = false,
                        const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASC_LOC) {
  ASCENDOPT_SOFTMAX_NZ_CHECK;
  ::ascendopt::lib::softmax_grad(dstTensor, gradTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr, tiling,
                                 isFront, softmaxShapeInfo, loc_);
}
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
inline void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                        const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                        const SoftMaxTiling& tiling, bool isFront = false,
                        const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASC_LOC) {
  ASCENDOPT_SOFTMAX_NZ_CHECK;
  ::ascendopt::lib::softmax_grad(dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, tiling, isFront,
                                 softmaxShapeInfo, loc_);
}

#undef ASCENDOPT_SOFTMAX_NZ_CHECK

}  // namespace AscendC

#endif
