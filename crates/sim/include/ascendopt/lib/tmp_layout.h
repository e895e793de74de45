// ascendopt AscendC emulation: how much temporary space the high-level
// element-wise APIs use, shared by the kernel side (which carves its work
// arrays from a sharedTmpBuffer or from the free UB) and the host side
// (GetXxxMaxMinTmpSize / GetXxxTmpBufferFactorSize), so both always agree.
//
// Model (our own implementation, written from the guide's description of
// these APIs, 6.2.4.1 and 6.2.4.3): an API computes in float work arrays
// ("nodes") of one chunk each, plus `masks` compare-result bit masks of one
// chunk. A chunk is a whole number of granules; a granule is one repeat
// (256 bytes) of the source type, as the guide's rule "currentShapeSize *
// typeSize < 256B 时按照 256B/typeSize 向上取整" describes. With a buffer of
// B bytes the API processes its calCount elements in as few chunks as fit
// in B; the smallest buffer that works holds one granule, the largest one
// that helps holds the whole calCount.
//
// Plain C++, no AscendC types: included by both sides.
#ifndef ASCENDOPT_LIB_TMP_LAYOUT_H
#define ASCENDOPT_LIB_TMP_LAYOUT_H

#include <stdint.h>

namespace ascendopt {
namespace lib {

// The work arrays of one API for one source type.
struct TmpLayout {
  uint32_t nodes;  // float arrays of one chunk each
  uint32_t masks;  // bit masks (one bit per element) of one chunk each
  constexpr bool empty() const { return nodes == 0 && masks == 0; }
};

constexpr uint32_t kRepeatBytes = 256;
constexpr uint32_t kBlockBytes = 32;

constexpr uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

// Elements of the source type in one granule.
constexpr uint32_t granule(uint32_t type_size) { return type_size == 0 ? 0 : kRepeatBytes / type_size; }

// Bytes of one bit mask of `chunk` elements (32-byte aligned).
constexpr uint64_t mask_bytes(uint64_t chunk) { return round_up((chunk + 7) / 8, kBlockBytes); }

// Bytes a chunk of `chunk` elements needs.
constexpr uint64_t chunk_bytes(const TmpLayout& l, uint64_t chunk) {
  return (uint64_t)l.nodes * chunk * 4 + (uint64_t)l.masks * mask_bytes(chunk);
}

// The smallest buffer that works (one granule), 0 when the API needs none.
constexpr uint32_t min_tmp_bytes(const TmpLayout& l, uint32_t type_size) {
  return l.empty() ? 0 : (uint32_t)chunk_bytes(l, granule(type_size));
}

// The largest buffer that helps: one chunk holding all `count` elements.
constexpr uint32_t max_tmp_bytes(const TmpLayout& l, uint32_t type_size, uint64_t count) {
  if (l.empty()) return 0;
  uint64_t whole = chunk_bytes(l, round_up(count == 0 ? 1 : count, granule(type_size)));
  return whole > 0xffffffffull ? 0xffffffffu : (uint32_t)whole;
}

// The chunk (elements, a multiple of the granule, at most `count` rounded
// up to the granule) a buffer of `bytes` allows; 0 when not even one
// granule fits.
constexpr uint64_t chunk_for(const TmpLayout& l, uint32_t type_size, uint64_t bytes, uint64_t count) {
  const uint64_t g = granule(type_size);
  const uint64_t all = round_up(count == 0 ? 1 : count, g);
  // Per 8 elements: 32 bytes per node and 1 per mask; the masks' rounding
  // to 32 bytes is settled by the loop below.
  const uint64_t per8 = (uint64_t)l.nodes * 32 + l.masks;
  uint64_t c = per8 == 0 ? all : bytes * 8 / per8 / g * g;
  if (c > all) c = all;
  while (c > 0 && chunk_bytes(l, c) > bytes) c -= g;
  return c;
}

// GetXxxTmpBufferFactorSize: the buffer is maxLiveNodeCount elements of the
// source type per element computed, plus extraBuf bytes.
inline void factor_size(const TmpLayout& l, uint32_t type_size, uint32_t& max_live_node_count,
                        uint32_t& extra_buf) {
  if (l.empty() || type_size == 0) {
    max_live_node_count = 0;
    extra_buf = 0;
    return;
  }
  const uint32_t per8 = l.nodes * 32 + l.masks;  // bytes per 8 elements
  max_live_node_count = (per8 + 8 * type_size - 1) / (8 * type_size);
  extra_buf = l.masks * kBlockBytes;
}

// ---- the layouts of the element-wise APIs -----------------------------------
// `half_in` adds the float copy of a half (or bfloat16) source. See each
// API's comment in ascendopt/kernel/lib/math.h for what the arrays hold.
constexpr TmpLayout with_src(TmpLayout l, uint32_t type_size) {
  return TmpLayout{l.nodes + (type_size < 4 ? 1u : 0u), l.masks};
}
constexpr TmpLayout sigmoid_layout(uint32_t ts) { return with_src(TmpLayout{1, 0}, ts); }
constexpr TmpLayout tanh_layout(uint32_t ts) { return with_src(TmpLayout{2, 0}, ts); }
constexpr TmpLayout sin_layout(uint32_t ts) { return with_src(TmpLayout{4, 0}, ts); }
constexpr TmpLayout cos_layout(uint32_t ts) { return with_src(TmpLayout{4, 0}, ts); }
constexpr TmpLayout tan_layout(uint32_t ts) { return with_src(TmpLayout{4, 1}, ts); }
constexpr TmpLayout asin_layout(uint32_t ts) { return with_src(TmpLayout{4, 1}, ts); }
constexpr TmpLayout acos_layout(uint32_t ts) { return with_src(TmpLayout{4, 2}, ts); }
constexpr TmpLayout atan_layout(uint32_t ts) { return with_src(TmpLayout{4, 2}, ts); }
constexpr TmpLayout sinh_layout(uint32_t ts) { return with_src(TmpLayout{3, 1}, ts); }
constexpr TmpLayout cosh_layout(uint32_t ts) { return with_src(TmpLayout{2, 0}, ts); }
constexpr TmpLayout erf_layout(uint32_t ts) { return with_src(TmpLayout{3, 1}, ts); }
constexpr TmpLayout erfc_layout(uint32_t ts) { return with_src(TmpLayout{3, 1}, ts); }
constexpr TmpLayout sign_layout(uint32_t ts) { return with_src(TmpLayout{1, 0}, ts); }
// Exp with taylorExpandLevel > 0 (level 0 is the plain Exp instruction).
constexpr TmpLayout exp_layout(uint32_t ts) { return with_src(TmpLayout{3, 0}, ts); }
// Log and Log10 need none; Log2 needs one float array for a half source.
constexpr TmpLayout log_layout(uint32_t) { return TmpLayout{0, 0}; }
constexpr TmpLayout log2_layout(uint32_t ts) { return TmpLayout{ts < 4 ? 1u : 0u, 0}; }
// Power: both operands as float, the result and two scratch arrays, masks
// for the sign and the special cases; int32 Power squares and multiplies in
// six int32 arrays of the same size.
constexpr TmpLayout power_layout(uint32_t, bool type_is_int) {
  return type_is_int ? TmpLayout{6, 0} : TmpLayout{5, 2};
}
// Rounding family: Floor, Ceil, Round, Trunc, Frac.
constexpr TmpLayout round_layout(uint32_t ts) { return with_src(TmpLayout{1, 0}, ts); }
// Fma: the product-sum (float) or the three operands cast (half).
constexpr TmpLayout fma_layout(uint32_t ts) { return TmpLayout{ts < 4 ? 3u : 1u, 0}; }
// High-level Axpy: the product src * scalar.
constexpr TmpLayout axpy_layout(uint32_t) { return TmpLayout{1, 0}; }
// ---- the row APIs ------------------------------------------------------------------
// Sum and Mean (kernel/lib/reduce.h): the sums need no temporary space
// (one block is reported, so that a kernel can always allocate it); Mean
// with a wider accType holds one row in that type and 16 row results.
constexpr uint32_t sum_tmp_bytes(uint32_t, uint32_t) { return kBlockBytes; }
constexpr uint32_t mean_tmp_bytes(uint32_t n, uint32_t src_size, uint32_t acc_size) {
  if (acc_size <= src_size) return sum_tmp_bytes(n, src_size);
  return (uint32_t)round_up((uint64_t)n * acc_size, kBlockBytes) + 16 * acc_size;
}

// CumSum (kernel/lib/cumsum.h).
constexpr TmpLayout cumsum_last_layout() { return TmpLayout{5, 1}; }

// Temporary bytes of CumSum (min: one row of the last axis / the first
// axis's rows; max: every row of the last axis).
constexpr uint32_t cumsum_min_tmp(uint32_t inner, uint32_t type_size, bool last_axis) {
  if (last_axis) return (uint32_t)chunk_bytes(cumsum_last_layout(), round_up(inner, granule(type_size)));
  return type_size < 4 ? (uint32_t)(2 * round_up((uint64_t)inner * 4, kBlockBytes)) : kBlockBytes;
}
constexpr uint32_t cumsum_max_tmp(uint32_t outter, uint32_t inner, uint32_t type_size, bool last_axis) {
  if (!last_axis) return cumsum_min_tmp(inner, type_size, false);
  return (uint32_t)chunk_bytes(cumsum_last_layout(), round_up((uint64_t)outter * inner, granule(type_size)));
}

// SoftMax (kernel/lib/softmax.h): the rows in float, 64 float partials per
// row, the row maxima and sums and their 32-byte broadcast blocks, in
// groups of 8 rows.
// Bytes of the temporary space for `rows` rows of `k` columns.
constexpr uint64_t softmax_tmp_bytes(uint64_t rows, uint64_t k) {
  const uint64_t groups = round_up(rows, 8);
  return 4 * rows * k + groups * (256 + 4 + 4 + 32 + 32);
}

// SoftmaxGrad: the gradient, the source and their product in float, and
// SoftMax's per-row arrays.
constexpr uint64_t softmax_grad_tmp_bytes(uint64_t rows, uint64_t k) {
  return softmax_tmp_bytes(rows, k) + 8 * rows * k;
}

// Select with a byte mask: the mask of `rows` rows cast to half (data and
// mask of at most 2 bytes) or float, a half staging copy where a 1- or
// 2-byte mask goes to float, and the compare bits.
constexpr uint32_t select_cast_size(uint32_t src_size, uint32_t mask_size) {
  return src_size == 4 || mask_size == 4 ? 4 : 2;
}
constexpr uint64_t select_tmp_bytes(uint64_t rows, uint64_t k1, uint32_t src_size, uint32_t mask_size) {
  const uint32_t cs = select_cast_size(src_size, mask_size);
  const uint64_t cap = round_up(rows * k1, kRepeatBytes / cs);
  const uint64_t stage = cs == 4 && mask_size < 4 ? round_up(cap * 2, kBlockBytes) : 0;
  return cap * cs + mask_bytes(cap) + stage;
}

}  // namespace lib
}  // namespace ascendopt

#endif
