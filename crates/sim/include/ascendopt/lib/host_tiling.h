// ascendopt AscendC emulation, host side of the high-level API library: the
// tiling helpers op_host code calls to size the temporary space of the
// kernel-side APIs (guide 6.2.4: GetXxxMaxMinTmpSize,
// GetXxxTmpBufferFactorSize, GetSoftMaxMin/MaxTmpSize, SoftMaxTilingFunc,
// IsBasicBlockInSoftMax) and the SoftMaxTiling struct.
//
// Every size is computed by the same formulas (ascendopt/lib/tmp_layout.h)
// that the kernel-side emulation (ascendopt/kernel/lib) uses to carve its
// work arrays, so minValue is the smallest space the kernel accepts and
// maxValue the largest it can use. Meant to be included by
// tiling/tiling_api.h; in a kernel unit (ASCENDOPT_KERNEL_SIDE) it declares
// the SoftMaxTiling struct only.
#ifndef ASCENDOPT_LIB_HOST_TILING_H
#define ASCENDOPT_LIB_HOST_TILING_H

#include "softmax_tiling.h"
#include "tmp_layout.h"

#if !defined(ASCENDOPT_KERNEL_SIDE) && !defined(ASCENDOPT_KERNEL_OPERATOR_H)

#include "../host/opdef.h"
#include "../host/platform.h"

namespace AscendC {

namespace detail {
inline uint64_t shape_elems(const ge::Shape& s) {
  const int64_t n = s.GetShapeSize();
  return n > 0 ? (uint64_t)n : 0;
}
inline void max_min(const ::ascendopt::lib::TmpLayout& l, const ge::Shape& shape, uint32_t type_size,
                    uint32_t& maxValue, uint32_t& minValue) {
  minValue = ::ascendopt::lib::min_tmp_bytes(l, type_size);
  maxValue = ::ascendopt::lib::max_tmp_bytes(l, type_size, shape_elems(shape));
}
// [m, k]: the product of all but the last dimension, and the last one.
inline void rows_cols(const ge::Shape& s, uint64_t& m, uint64_t& k) {
  const size_t d = s.GetDimNum();
  k = d == 0 ? 0 : (uint64_t)(s.GetDim(d - 1) > 0 ? s.GetDim(d - 1) : 0);
  m = 1;
  for (size_t i = 0; i + 1 < d; ++i) m *= (uint64_t)(s.GetDim(i) > 0 ? s.GetDim(i) : 0);
}
inline uint32_t clamp32(uint64_t v) { return v > 0xffffffffull ? 0xffffffffu : (uint32_t)v; }
}  // namespace detail

// ---- element-wise APIs -------------------------------------------------------------
// (The names are spelled out, not pasted, so that a scan of these headers
// for the APIs they provide finds them.)
#define ASCENDOPT_HOST_TMP_SIZE(MAX_MIN, FACTOR, LAYOUT)                                                        \
  inline void MAX_MIN(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,             \
                      uint32_t& maxValue, uint32_t& minValue) {                                                 \
    (void)isReuseSource;                                                                                         \
    detail::max_min(::ascendopt::lib::LAYOUT(typeSize), srcShape, typeSize, maxValue, minValue);                 \
  }                                                                                                              \
  inline void FACTOR(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {                 \
    ::ascendopt::lib::factor_size(::ascendopt::lib::LAYOUT(typeSize), typeSize, maxLiveNodeCount, extraBuf);     \
  }

ASCENDOPT_HOST_TMP_SIZE(GetSigmoidMaxMinTmpSize, GetSigmoidTmpBufferFactorSize, sigmoid_layout)
ASCENDOPT_HOST_TMP_SIZE(GetTanhMaxMinTmpSize, GetTanhTmpBufferFactorSize, tanh_layout)
ASCENDOPT_HOST_TMP_SIZE(GetSinMaxMinTmpSize, GetSinTmpBufferFactorSize, sin_layout)
ASCENDOPT_HOST_TMP_SIZE(GetCosMaxMinTmpSize, GetCosTmpBufferFactorSize, cos_layout)
ASCENDOPT_HOST_TMP_SIZE(GetTanMaxMinTmpSize, GetTanTmpBufferFactorSize, tan_layout)
ASCENDOPT_HOST_TMP_SIZE(GetAsinMaxMinTmpSize, GetAsinTmpBufferFactorSize, asin_layout)
ASCENDOPT_HOST_TMP_SIZE(GetAcosMaxMinTmpSize, GetAcosTmpBufferFactorSize, acos_layout)
ASCENDOPT_HOST_TMP_SIZE(GetAtanMaxMinTmpSize, GetAtanTmpBufferFactorSize, atan_layout)
ASCENDOPT_HOST_TMP_SIZE(GetSinhMaxMinTmpSize, GetSinhTmpBufferFactorSize, sinh_layout)
ASCENDOPT_HOST_TMP_SIZE(GetCoshMaxMinTmpSize, GetCoshTmpBufferFactorSize, cosh_layout)
ASCENDOPT_HOST_TMP_SIZE(GetErfMaxMinTmpSize, GetErfTmpBufferFactorSize, erf_layout)
ASCENDOPT_HOST_TMP_SIZE(GetErfcMaxMinTmpSize, GetErfcTmpBufferFactorSize, erfc_layout)
ASCENDOPT_HOST_TMP_SIZE(GetSignMaxMinTmpSize, GetSignTmpBufferFactorSize, sign_layout)
ASCENDOPT_HOST_TMP_SIZE(GetFloorMaxMinTmpSize, GetFloorTmpBufferFactorSize, round_layout)
ASCENDOPT_HOST_TMP_SIZE(GetCeilMaxMinTmpSize, GetCeilTmpBufferFactorSize, round_layout)
ASCENDOPT_HOST_TMP_SIZE(GetTruncMaxMinTmpSize, GetTruncTmpBufferFactorSize, round_layout)
ASCENDOPT_HOST_TMP_SIZE(GetFracMaxMinTmpSize, GetFracTmpBufferFactorSize, round_layout)
ASCENDOPT_HOST_TMP_SIZE(GetAxpyMaxMinTmpSize, GetAxpyTmpBufferFactorSize, axpy_layout)
ASCENDOPT_HOST_TMP_SIZE(GetLogMaxMinTmpSize, GetLogTmpBufferFactorSize, log_layout)
ASCENDOPT_HOST_TMP_SIZE(GetLog10MaxMinTmpSize, GetLog10TmpBufferFactorSize, log_layout)
ASCENDOPT_HOST_TMP_SIZE(GetLog2MaxMinTmpSize, GetLog2TmpBufferFactorSize, log2_layout)
#undef ASCENDOPT_HOST_TMP_SIZE

// The Sin and Cos forms with a config (the algorithm choice is the Atlas
// 350's; on A2 it changes nothing).
template <class Config>
inline void GetSinMaxMinTmpSize(const Config&, const ge::Shape& srcShape, const uint32_t typeSize,
                                const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  GetSinMaxMinTmpSize(srcShape, typeSize, isReuseSource, maxValue, minValue);
}
template <class Config>
inline void GetSinTmpBufferFactorSize(const Config&, const uint32_t typeSize, uint32_t& maxLiveNodeCount,
                                      uint32_t& extraBuf) {
  GetSinTmpBufferFactorSize(typeSize, maxLiveNodeCount, extraBuf);
}
template <class Config>
inline void GetCosMaxMinTmpSize(const Config&, const ge::Shape& srcShape, const uint32_t typeSize,
                                const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  GetCosMaxMinTmpSize(srcShape, typeSize, isReuseSource, maxValue, minValue);
}
template <class Config>
inline void GetCosTmpBufferFactorSize(const Config&, const uint32_t typeSize, uint32_t& maxLiveNodeCount,
                                      uint32_t& extraBuf) {
  GetCosTmpBufferFactorSize(typeSize, maxLiveNodeCount, extraBuf);
}

// Round takes the platform first.
inline void GetRoundMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const ge::Shape& srcShape,
                                  const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                  uint32_t& minValue) {
  (void)isReuseSource;
  detail::max_min(::ascendopt::lib::round_layout(typeSize), srcShape, typeSize, maxValue, minValue);
}
inline void GetRoundTmpBufferFactorSize(const platform_ascendc::PlatformAscendC&, const uint32_t typeSize,
                                        uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
  ::ascendopt::lib::factor_size(::ascendopt::lib::round_layout(typeSize), typeSize, maxLiveNodeCount, extraBuf);
}

// Fma takes the platform first.
inline void GetFmaMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const ge::Shape& srcShape,
                                const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                uint32_t& minValue) {
  (void)isReuseSource;
  detail::max_min(::ascendopt::lib::fma_layout(typeSize), srcShape, typeSize, maxValue, minValue);
}
inline void GetFmaTmpBufferFactorSize(const platform_ascendc::PlatformAscendC&, const uint32_t typeSize,
                                      uint32_t& maxLivedNodeCount, uint32_t& extraBuf) {
  ::ascendopt::lib::factor_size(::ascendopt::lib::fma_layout(typeSize), typeSize, maxLivedNodeCount, extraBuf);
}

// Exp with a Taylor expansion; returns whether the sizes were computed.
inline bool GetExpMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  if (typeSize != 2 && typeSize != 4) return false;
  detail::max_min(::ascendopt::lib::exp_layout(typeSize), srcShape, typeSize, maxValue, minValue);
  return true;
}
inline void GetExpTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
  ::ascendopt::lib::factor_size(::ascendopt::lib::exp_layout(typeSize), typeSize, maxLiveNodeCount, extraBuf);
}

// Power: the larger of the two operands' shapes (a scalar operand has an
// empty shape).
inline void GetPowerMaxMinTmpSize(const ge::Shape& srcShape1, const ge::Shape& srcShape2, const bool typeIsInt,
                                  const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                  uint32_t& minValue) {
  (void)isReuseSource;
  const ::ascendopt::lib::TmpLayout l = ::ascendopt::lib::power_layout(typeSize, typeIsInt);
  const uint64_t n1 = detail::shape_elems(srcShape1), n2 = detail::shape_elems(srcShape2);
  minValue = ::ascendopt::lib::min_tmp_bytes(l, typeSize);
  maxValue = ::ascendopt::lib::max_tmp_bytes(l, typeSize, n1 > n2 ? n1 : n2);
}
inline void GetPowerTmpBufferFactorSize(const bool baseIsTensor, const bool expIsTensor, const bool typeIsInt,
                                        const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
  (void)baseIsTensor;
  (void)expIsTensor;
  ::ascendopt::lib::factor_size(::ascendopt::lib::power_layout(typeSize, typeIsInt), typeSize, maxLiveNodeCount,
                                extraBuf);
}

// ---- row APIs -----------------------------------------------------------------------
// Sum of rows of n elements: the partial sums (max = min).
inline void GetSumMaxMinTmpSize(const uint32_t n, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxSize, uint32_t& minSize) {
  (void)isReuseSource;
  minSize = maxSize = typeSize == 0 ? 0 : ::ascendopt::lib::sum_tmp_bytes(n, typeSize);
}
inline void GetMeanMaxMinTmpSize(const uint32_t n, const uint32_t srcTypeSize, const uint32_t accTypeSize,
                                 const bool isReuseSource, uint32_t& maxSize, uint32_t& minSize) {
  (void)isReuseSource;
  minSize = maxSize = srcTypeSize == 0 ? 0 : ::ascendopt::lib::mean_tmp_bytes(n, srcTypeSize, accTypeSize);
}
// Arange needs no temporary space (guide 6.2.4.8.2); ArithProgression is
// its former name.
inline void GetArangeMaxMinTmpSize(uint32_t& maxValue, uint32_t& minValue) { maxValue = minValue = 0; }
inline void GetArithProgressionMaxMinTmpSize(uint32_t& maxValue, uint32_t& minValue) {
  maxValue = minValue = 0;
}
// CumSum of an [outter, inner] shape.
inline void GetCumSumMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isLastAxis,
                                   const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  uint64_t m = 0, k = 0;
  detail::rows_cols(srcShape, m, k);
  if (typeSize == 0 || k == 0) {
    maxValue = minValue = 0;
    return;
  }
  minValue = ::ascendopt::lib::cumsum_min_tmp((uint32_t)k, typeSize, isLastAxis);
  maxValue = ::ascendopt::lib::cumsum_max_tmp((uint32_t)m, (uint32_t)k, typeSize, isLastAxis);
}

// ---- Select with a byte mask ----------------------------------------------------------
// [m, k1]: the tensor operand's shape (the scalar one has fewer elements).
namespace detail {
inline uint64_t select_bytes(const ge::Shape& src0Shape, const ge::Shape& src1Shape, uint32_t srcTypeSize,
                             uint32_t maskTypeSize, bool all_rows) {
  const ge::Shape& s = shape_elems(src0Shape) >= shape_elems(src1Shape) ? src0Shape : src1Shape;
  uint64_t m = 0, k = 0;
  rows_cols(s, m, k);
  if (m == 0 || k == 0 || srcTypeSize == 0 || maskTypeSize == 0) return 0;
  return ::ascendopt::lib::select_tmp_bytes(all_rows ? m : 1, k, srcTypeSize, maskTypeSize);
}
}  // namespace detail
inline uint32_t GetSelectMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape, const uint32_t srcTypeSize,
                                    const ge::Shape& maskShape, const uint32_t maskTypeSize, const bool isReuseMask) {
  (void)maskShape;
  (void)isReuseMask;
  return detail::clamp32(detail::select_bytes(src0Shape, src1Shape, srcTypeSize, maskTypeSize, false));
}
inline uint32_t GetSelectMaxTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape, const uint32_t srcTypeSize,
                                    const ge::Shape& maskShape, const uint32_t maskTypeSize, const bool isReuseMask) {
  (void)maskShape;
  (void)isReuseMask;
  return detail::clamp32(detail::select_bytes(src0Shape, src1Shape, srcTypeSize, maskTypeSize, true));
}
inline void GetSelectMaxMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape, const uint32_t srcTypeSize,
                                   const ge::Shape& maskShape, const uint32_t maskTypeSize, const bool isReuseMask,
                                   uint32_t& maxValue, uint32_t& minValue) {
  maxValue = GetSelectMaxTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
  minValue = GetSelectMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
}
// The older names the guide lists as deprecated.
inline uint32_t GetSelectWithBytesMaskMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape,
                                                 const uint32_t srcTypeSize, const ge::Shape& maskShape,
                                                 const uint32_t maskTypeSize, const bool isReuseMask) {
  return GetSelectMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
}
inline uint32_t GetSelectWithBytesMaskMaxTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape,
                                                 const uint32_t srcTypeSize, const ge::Shape& maskShape,
                                                 const uint32_t maskTypeSize, const bool isReuseMask) {
  return GetSelectMaxTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
}
inline void GetSelectWithBytesMaskMaxMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape,
                                                const uint32_t srcTypeSize, const ge::Shape& maskShape,
                                                const uint32_t maskTypeSize, const bool isReuseMask,
                                                uint32_t& maxValue, uint32_t& minValue) {
  GetSelectMaxMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask, maxValue, minValue);
}

// ---- Broadcast (6.2.4.10.10) ------------------------------------------------------------
// The kernel (ascendopt/kernel/lib/broadcast.h) needs temporary space only
// for [m, 1] -> [m, k] (and [1] -> [n]) of 16- and 32-bit data: one 32-byte
// block per row, in groups of 8 rows; at least one group, at most all rows.
inline void GetBroadCastMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const ge::Shape& srcShape,
                                      const ge::Shape& dstShape, uint32_t typeSize, const bool isReuseSource,
                                      uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  maxValue = 0;
  minValue = 0;
  const size_t dims = srcShape.GetDimNum();
  if (typeSize < 2 || dims == 0 || dims != dstShape.GetDimNum()) return;
  const bool last_broadcast = srcShape.GetDim(dims - 1) == 1 && dstShape.GetDim(dims - 1) > 1;
  if (!last_broadcast) return;
  const uint64_t rows = dims == 2 && dstShape.GetDim(0) > 0 ? (uint64_t)dstShape.GetDim(0) : 1;
  minValue = 8 * ::ascendopt::lib::kBlockBytes;
  maxValue = detail::clamp32(::ascendopt::lib::round_up(rows, 8) * ::ascendopt::lib::kBlockBytes);
}

// ---- SoftMax ----------------------------------------------------------------------------
// The kernel computes in float whatever the data type, on rows whose length
// is rounded up to 32 bytes of half (16 elements) at most.
namespace detail {
inline uint64_t softmax_cols(uint64_t k) { return ::ascendopt::lib::round_up(k, 16); }
}  // namespace detail
inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
  (void)dataTypeSize;
  (void)isReuseSource;
  uint64_t m = 0, k = 0;
  detail::rows_cols(srcShape, m, k);
  if (m == 0 || k == 0) return 0;
  return detail::clamp32(::ascendopt::lib::softmax_tmp_bytes(m, detail::softmax_cols(k)));
}
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
  (void)dataTypeSize;
  (void)isReuseSource;
  uint64_t m = 0, k = 0;
  detail::rows_cols(srcShape, m, k);
  if (m == 0 || k == 0) return 0;
  return detail::clamp32(::ascendopt::lib::softmax_tmp_bytes(1, detail::softmax_cols(k)));
}

namespace detail {
// Fills any struct with the sixteen SoftMaxTiling fields: srcM/srcK the
// shape (k rounded up to 32 bytes of dataTypeSize), outMax the [m, 32 B]
// max/sum outputs, split the rows that fit in localWorkSpaceSize (at
// least one), reduce one 32-byte block per row, rangeM whole splits and
// tailM the rows left.
template <class Tiling>
inline void softmax_tiling(const ge::Shape& srcShape, uint32_t dataTypeSize, uint32_t localWorkSpaceSize,
                           Tiling& t) {
  uint64_t m = 0, k = 0;
  rows_cols(srcShape, m, k);
  const uint32_t ts = dataTypeSize == 0 ? 4 : dataTypeSize;
  const uint64_t kk = ::ascendopt::lib::round_up(k, 32 / ts > 0 ? 32 / ts : 1);
  uint64_t split = 0;
  while (split < m && ::ascendopt::lib::softmax_tmp_bytes(split + 1, softmax_cols(k)) <= localWorkSpaceSize) ++split;
  if (split == 0) split = 1;
  const uint64_t blk = 32 / ts;
  t.srcM = clamp32(m);
  t.srcK = clamp32(kk);
  t.srcSize = clamp32(m * kk);
  t.outMaxM = clamp32(m);
  t.outMaxK = clamp32(blk);
  t.outMaxSize = clamp32(m * blk);
  t.splitM = clamp32(split);
  t.splitK = clamp32(kk);
  t.splitSize = clamp32(split * kk);
  t.reduceM = clamp32(split);
  t.reduceK = clamp32(blk);
  t.reduceSize = clamp32(split * blk);
  t.rangeM = clamp32(m / split);
  t.tailM = clamp32(m % split);
  t.tailSplitSize = clamp32((m % split) * kk);
  t.tailReduceSize = clamp32((m % split) * blk);
}
}  // namespace detail

inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                              const uint32_t localWorkSpaceSize, optiling::SoftMaxTiling& softmaxTiling) {
  detail::softmax_tiling(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}
inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                              const uint32_t localWorkSpaceSize, AscendC::tiling::SoftMaxTiling& softmaxTiling) {
  detail::softmax_tiling(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}
// SoftmaxGrad: the same tiling fields; the space also holds the gradient
// and the product.
inline uint32_t GetSoftMaxGradMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isFront,
                                         const bool isReuseSource) {
  (void)dataTypeSize;
  (void)isFront;
  (void)isReuseSource;
  uint64_t m = 0, k = 0;
  detail::rows_cols(srcShape, m, k);
  if (m == 0 || k == 0) return 0;
  return detail::clamp32(::ascendopt::lib::softmax_grad_tmp_bytes(m, detail::softmax_cols(k)));
}
inline uint32_t GetSoftMaxGradMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isFront,
                                         const bool isReuseSource) {
  (void)dataTypeSize;
  (void)isFront;
  (void)isReuseSource;
  uint64_t m = 0, k = 0;
  detail::rows_cols(srcShape, m, k);
  if (m == 0 || k == 0) return 0;
  return detail::clamp32(::ascendopt::lib::softmax_grad_tmp_bytes(1, detail::softmax_cols(k)));
}
inline void SoftMaxGradTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                  const uint32_t localWorkSpaceSize, optiling::SoftMaxTiling& softmaxGradTiling,
                                  const bool isFront = false) {
  (void)isFront;
  detail::softmax_tiling(srcShape, dataTypeSize, localWorkSpaceSize, softmaxGradTiling);
}
inline void SoftMaxGradTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                  const uint32_t localWorkSpaceSize,
                                  AscendC::tiling::SoftMaxTiling& softmaxGradTiling, const bool isFront = false) {
  (void)isFront;
  detail::softmax_tiling(srcShape, dataTypeSize, localWorkSpaceSize, softmaxGradTiling);
}

// Basic blocks (guide: 64 <= ... n < 2048, n a multiple of 64, m a
// multiple of 8, n at least 256 bytes); the emulation runs every shape the
// same way, this only answers the question.
template <class Tiling>
inline bool IsBasicBlockInSoftMax(Tiling& tiling, const uint32_t dataTypeSize = 2) {
  const uint32_t ts = dataTypeSize == 0 ? 2 : dataTypeSize;
  return tiling.srcK < 2048 && tiling.srcK * ts >= 256 && tiling.srcK % 64 == 0 && tiling.splitM % 8 == 0;
}

}  // namespace AscendC

#endif  // host unit
#endif
