// ascendopt AscendC emulation, high-level API library: Broadcast (guide
// 6.2.4.10.9; older CANN code calls it BroadCast), ND data of one or two
// dimensions:
//   dim 1:           [1]    -> [n]     (every element the source's one);
//   dim 2, axis 1:   [m, 1] -> [m, k]  (row r filled with src[r]);
//   dim 2, axis 0:   [1, k] -> [m, k]  (every row a copy of the source row;
//                                       the guide requires k * sizeof(T) to
//                                       be a multiple of 32 bytes).
// Types as the guide lists them for A2: int8_t, uint8_t, half, float.
//
// The guide's steps for [m, 1] -> [m, k] on the vector unit: Brcb (each
// element to a 32-byte block), then the block copied along the row. Here:
// Brcb of 8 rows at a time into the temporary space, then per row a Copy
// whose source block and repeat strides are 0 (one block read over and
// over), in whole 256-byte repeats and a masked last one. [1, k] -> [m, k]
// is one UB -> UB DataCopy per row and needs no temporary space. Where the
// vector path cannot address the result (8-bit data, which Brcb and Copy
// do not take, or rows of [m, k] that do not start on 32 bytes, which the
// chip handles with a GatherMask step), the elements are written by the
// scalar unit after a full barrier: the same values, a slower trace.
// Temporary space (host: GetBroadCastMaxMinTmpSize): 8 blocks of 32 bytes
// at least, one block per row of a chunk at most.
#ifndef ASCENDOPT_KERNEL_LIB_BROADCAST_H
#define ASCENDOPT_KERNEL_LIB_BROADCAST_H

#include "../copy.h"
#include "../sync.h"
#include "common.h"

namespace ascendopt {
namespace lib {

template <class T>
inline void broadcast_scalar_path(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t m, uint32_t k,
                                  int axis, const Loc& loc) {
  AscendC::PipeBarrier<PIPE_ALL>(loc);
  for (uint32_t r = 0; r < m; ++r) {
    for (uint32_t c = 0; c < k; ++c) {
      const T v = axis == 1 ? src.GetValue(r, loc) : src.GetValue(c, loc);
      dst.SetValue(r * k + c, v, loc);
    }
  }
  AscendC::PipeBarrier<PIPE_ALL>(loc);
}

template <class T>
inline void broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, int dim, int axis,
                      const uint32_t* dst_shape, const uint32_t* src_shape, const LocalTensor<uint8_t>* shared,
                      const Loc& loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value || std::is_same<T, int8_t>::value ||
                    std::is_same<T, uint8_t>::value,
                "Broadcast takes int8_t, uint8_t, half or float (guide 6.2.4.10.9, Atlas A2)");
  uint32_t m = 1, k = 1;
  if (dim == 1) {
    if (src_shape[0] != 1) {
      fail(loc, "Broadcast: dim 1 broadcasts a source of one element (srcShape[0] = %u)", src_shape[0]);
      return;
    }
    k = dst_shape[0];
    axis = 1;
  } else {
    m = dst_shape[0];
    k = dst_shape[1];
    const bool ok = axis == 1 ? src_shape[0] == m && src_shape[1] == 1 : src_shape[0] == 1 && src_shape[1] == k;
    if (!ok) {
      fail(loc, "Broadcast<dim 2, axis %d>: srcShape [%u, %u] does not broadcast to dstShape [%u, %u]", axis,
           src_shape[0], src_shape[1], m, k);
      return;
    }
  }
  if (m == 0 || k == 0) return;
  const Span ops[2] = {span_of(dst, (uint64_t)m * k, "dstLocal"),
                       span_of(src, axis == 1 ? (uint64_t)m : (uint64_t)k, "srcLocal")};
  if (overlaps(ops[0], ops[1])) fail(loc, "Broadcast: source and destination overlap (the guide does not allow it)");
  const bool row_aligned = ((uint64_t)k * sizeof(T)) % kBlockBytes == 0;
  if (axis == 0) {
    if (!row_aligned) {
      fail(loc, "Broadcast<dim 2, axis 0>: srcShape[1] = %u elements is not a multiple of 32 bytes (the guide "
                "requires it)", k);
      return;
    }
    for (uint32_t r = 0; r < m; ++r) AscendC::DataCopy(dst[r * k], src, k, loc);
    return;
  }
  if (sizeof(T) == 1 || (m > 1 && !row_aligned)) {
    broadcast_scalar_path(dst, src, m, k, axis, loc);
    return;
  }
  const Tmp tmp = tmp_of(shared, loc);
  constexpr uint32_t blk = kBlockBytes / sizeof(T);
  constexpr uint32_t lanes = 256 / sizeof(T);
  const uint64_t rows_fit = tmp.bytes() / kBlockBytes / 8 * 8;
  if (rows_fit == 0) {
    fail(loc, "Broadcast: the temporary space holds %llu bytes, it needs at least 256 (GetBroadCastMaxMinTmpSize)",
         (unsigned long long)tmp.bytes());
    return;
  }
  if (tmp.whole.addr % kBlockBytes != 0) fail(loc, "Broadcast: sharedTmpBuffer is not 32-byte aligned");
  const uint32_t chunk = (uint32_t)(rows_fit < 8 * 255 ? rows_fit : 8 * 255);
  const Span used{tmp.whole.mem, tmp.whole.addr,
                  tmp.whole.addr + (uint64_t)round_up(m < chunk ? m : chunk, 8) * kBlockBytes, "sharedTmpBuffer"};
  for (const Span& s : ops)
    if (overlaps(used, s)) fail(loc, "Broadcast: sharedTmpBuffer overlaps %s (the guide does not allow it)", s.what);
  const LocalTensor<T> blocks =
      LocalTensor<uint8_t>::from_desc(tmp.whole, AscendC::TPosition::VECCALC).template ReinterpretCast<T>();
  const uint32_t full = k / lanes, tail = k % lanes;
  for (uint32_t g = 0; g < m; g += chunk) {
    const uint32_t rows = m - g < chunk ? m - g : chunk;
    AscendC::Brcb(blocks, src[g], (uint8_t)((rows + 7) / 8), AscendC::BrcbRepeatParams(1, 8), loc);
    for (uint32_t r = 0; r < rows; ++r) {
      const LocalTensor<T> row = dst[(g + r) * k];
      const LocalTensor<T> b = blocks[r * blk];
      for (uint32_t j = 0; j < full; j += 255) {
        const uint32_t reps = full - j < 255 ? full - j : 255;
        AscendC::Copy(row[j * lanes], b, (uint64_t)lanes, (uint8_t)reps, AscendC::CopyRepeatParams(1, 0, 8, 0), loc);
      }
      if (tail != 0) {
        AscendC::Copy(row[full * lanes], b, (uint64_t)tail, (uint8_t)1, AscendC::CopyRepeatParams(1, 0, 8, 0), loc);
      }
    }
  }
}

}  // namespace lib
}  // namespace ascendopt

namespace AscendC {

template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], LocalTensor<uint8_t>& sharedTmpBuffer, ASC_LOC) {
  static_assert(dim == 1 || dim == 2, "Broadcast: dim is 1 or 2 (guide 6.2.4.10.9)");
  static_assert(axis == 0 || axis == 1, "Broadcast: axis is 0 or 1 (guide 6.2.4.10.9)");
  ::ascendopt::lib::broadcast(dstLocal, srcLocal, dim, axis, dstShape, srcShape, &sharedTmpBuffer, loc_);
}
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], ASC_LOC) {
  static_assert(dim == 1 || dim == 2, "Broadcast: dim is 1 or 2 (guide 6.2.4.10.9)");
  static_assert(axis == 0 || axis == 1, "Broadcast: axis is 0 or 1 (guide 6.2.4.10.9)");
  ::ascendopt::lib::broadcast(dstLocal, srcLocal, dim, axis, dstShape, srcShape,
                              (const LocalTensor<uint8_t>*)nullptr, loc_);
}
// The name older CANN code calls it by.
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], LocalTensor<uint8_t>& sharedTmpBuffer, ASC_LOC) {
  Broadcast<T, dim, axis, isReuseSource>(dstLocal, srcLocal, dstShape, srcShape, sharedTmpBuffer, loc_);
}
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], ASC_LOC) {
  Broadcast<T, dim, axis, isReuseSource>(dstLocal, srcLocal, dstShape, srcShape, loc_);
}

}  // namespace AscendC

#endif
