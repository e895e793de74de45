// ascendopt AscendC emulation: DataCopy and DataCopyPad (hardware-facts.md
// section B; guide 6.2.3.1). Every overload becomes one AscCopyOp; the
// runtime checks alignment and bounds, moves the bytes and records a DMA.
#ifndef ASCENDOPT_KERNEL_COPY_H
#define ASCENDOPT_KERNEL_COPY_H

#include "tensor.h"

namespace AscendC {

struct DataCopyParams {
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;
  union {
    uint16_t srcGap = 0;
    uint16_t srcStride;
  };
  union {
    uint16_t dstGap = 0;
    uint16_t dstStride;
  };
  DataCopyParams() {}
  DataCopyParams(uint16_t count, uint16_t len, uint16_t srcGapIn, uint16_t dstGapIn)
      : blockCount(count), blockLen(len) {
    srcGap = srcGapIn;
    dstGap = dstGapIn;
  }
};

struct DataCopyExtParams {
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
  DataCopyExtParams() {}
  // All five fields, rsv included (the guide's examples write
  // `{1, len, 0, 0, 0}`): a four-element braced list is a DataCopyParams,
  // so a DataCopyPad call with `{1, len, 0, 0}` is not ambiguous.
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn, uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
};

template <class T>
struct DataCopyPadExtParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T(0);
  DataCopyPadExtParams() {}
  DataCopyPadExtParams(bool isPadIn, uint8_t left, uint8_t right, T value)
      : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

struct DataCopyPadParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
  DataCopyPadParams() {}
  DataCopyPadParams(bool isPadIn, uint8_t left, uint8_t right, uint64_t value)
      : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

namespace detail {
template <class T>
inline AscAddr local_addr(const LocalTensor<T>& t) {
  AscAddr a{};
  a.mem = t.desc_.mem;
  a.addr = t.desc_.addr;
  a.gm = nullptr;
  return a;
}
template <class T>
inline AscAddr global_addr(const GlobalTensor<T>& t) {
  AscAddr a{};
  a.mem = ASC_MEM_GM;
  a.addr = 0;
  a.gm = (void*)t.address_;
  return a;
}
template <class T>
inline AscCopyOp base_op(uint8_t kind, AscAddr dst, AscAddr src, const ::ascendopt::Loc& loc) {
  AscCopyOp op;
  memset(&op, 0, sizeof(op));
  op.kind = kind;
  op.dtype = ::ascendopt::dtype_of<T>();
  op.dst = dst;
  op.src = src;
  op.loc = loc.c();
  return op;
}
template <class T>
inline void copy_count(AscAddr dst, AscAddr src, uint32_t count, const ::ascendopt::Loc& loc) {
  AscCopyOp op = base_op<T>(ASC_COPY_COUNT, dst, src, loc);
  op.count = count;
  ASC_RT->copy(&op);
}
template <class T>
inline void copy_params(AscAddr dst, AscAddr src, const DataCopyParams& p, const ::ascendopt::Loc& loc) {
  AscCopyOp op = base_op<T>(ASC_COPY_PARAMS, dst, src, loc);
  op.block_count = p.blockCount;
  op.block_len = p.blockLen;
  op.src_gap = p.srcGap;
  op.dst_gap = p.dstGap;
  ASC_RT->copy(&op);
}
template <class T>
inline void copy_pad(AscAddr dst, AscAddr src, uint32_t count, uint32_t len, uint32_t srcStride, uint32_t dstStride,
                     bool isPad, uint8_t left, uint8_t right, uint64_t padBits, const ::ascendopt::Loc& loc) {
  AscCopyOp op = base_op<T>(ASC_COPY_PAD, dst, src, loc);
  op.block_count = count;
  op.block_len = len;
  op.src_gap = srcStride;
  op.dst_gap = dstStride;
  op.is_pad = isPad ? 1 : 0;
  op.left_pad = left;
  op.right_pad = right;
  op.pad_bits = padBits;
  ASC_RT->copy(&op);
}
}  // namespace detail

// ---- DataCopy, count form (count*sizeof(T) must be a multiple of 32 B;
// the hardware rounds the length down otherwise) ----
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count, ASC_LOC) {
  detail::copy_count<T>(detail::local_addr(dst), detail::global_addr(src), count, loc_);
}
template <class T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, ASC_LOC) {
  detail::copy_count<T>(detail::global_addr(dst), detail::local_addr(src), count, loc_);
}
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, ASC_LOC) {
  detail::copy_count<T>(detail::local_addr(dst), detail::local_addr(src), count, loc_);
}

// ---- DataCopy with DataCopyParams (blockLen and gaps in 32 B blocks) ----
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p, ASC_LOC) {
  detail::copy_params<T>(detail::local_addr(dst), detail::global_addr(src), p, loc_);
}
template <class T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, ASC_LOC) {
  detail::copy_params<T>(detail::global_addr(dst), detail::local_addr(src), p, loc_);
}
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, ASC_LOC) {
  detail::copy_params<T>(detail::local_addr(dst), detail::local_addr(src), p, loc_);
}

// ---- DataCopyPad (blockLen in bytes; GM strides in bytes, UB strides in
// 32 B blocks) ----
template <class T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad, ASC_LOC) {
  detail::copy_pad<T>(detail::local_addr(dst), detail::global_addr(src), p.blockCount, p.blockLen, p.srcStride,
                      p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding,
                      ::ascendopt::to_bits<T>(pad.paddingValue), loc_);
}
template <class T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p, ASC_LOC) {
  detail::copy_pad<T>(detail::global_addr(dst), detail::local_addr(src), p.blockCount, p.blockLen, p.srcStride,
                      p.dstStride, false, 0, 0, 0, loc_);
}
template <class T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                        const DataCopyPadParams& pad, ASC_LOC) {
  detail::copy_pad<T>(detail::local_addr(dst), detail::global_addr(src), p.blockCount, p.blockLen, p.srcStride,
                      p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding, pad.paddingValue, loc_);
}
template <class T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, ASC_LOC) {
  detail::copy_pad<T>(detail::global_addr(dst), detail::local_addr(src), p.blockCount, p.blockLen, p.srcStride,
                      p.dstStride, false, 0, 0, 0, loc_);
}

// ---- slice copy (guide 6.2.3.1.1.4) ---------------------------------------------------
// One SliceInfo per dimension, the innermost first: in dimension 0,
// segments of burstLen 32-byte blocks from startIndex, stride elements
// apart, that end at or before endIndex (inclusive); in each outer
// dimension the indices startIndex, startIndex + 1 + stride, ... up to
// endIndex; shapeValue is the dimension's length. The source's and the
// destination's segments, in order (outer dimensions outermost), are paired
// and each moved as one DataCopy; their counts must agree, as must the
// burstLen of the two sides.
struct SliceInfo {
  uint32_t startIndex = 0;
  uint32_t endIndex = 0;
  uint32_t stride = 0;
  uint32_t burstLen = 0;
  uint32_t shapeValue = 0;
};
namespace detail {
// How many indices a slice selects in dimension d (segments in dimension 0).
inline uint64_t slice_count(const SliceInfo& in, uint32_t d, uint32_t seg) {
  if (d == 0) {
    if (seg == 0 || (uint64_t)in.startIndex + seg - 1 > in.endIndex) return 0;
    return ((uint64_t)in.endIndex + 1 - in.startIndex - seg) / ((uint64_t)seg + in.stride) + 1;
  }
  if (in.startIndex > in.endIndex) return 0;
  return ((uint64_t)in.endIndex - in.startIndex) / (1ull + in.stride) + 1;
}
inline uint64_t slice_total(const SliceInfo* info, uint32_t dims, uint32_t seg) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < dims; ++d) n *= slice_count(info[d], d, seg);
  return n;
}
// Element offset of the i-th segment (dimension 0 varies fastest).
inline uint64_t slice_offset(const SliceInfo* info, uint32_t dims, uint32_t seg, uint64_t i) {
  uint64_t off = 0, lower = 1;
  for (uint32_t d = 0; d < dims; ++d) {
    const uint64_t c = slice_count(info[d], d, seg);
    const uint64_t j = i % c;
    i /= c;
    const uint64_t step = d == 0 ? (uint64_t)seg + info[d].stride : 1ull + info[d].stride;
    off += (info[d].startIndex + j * step) * lower;
    lower *= info[d].shapeValue;
  }
  return off;
}
template <class D, class S, class T>
inline void slice_copy(const D& dst, const S& src, const SliceInfo dstInfo[], const SliceInfo srcInfo[],
                       uint32_t dims, const ::ascendopt::Loc& loc) {
  if (dims == 0 || dims > 8) {
    ASC_RT->trap("DataCopy with SliceInfo: dimValue must be 1..8 (guide 6.2.3.1.1.4)", loc.c());
    return;
  }
  for (uint32_t d = 0; d < dims; ++d) {
    if (srcInfo[d].burstLen != dstInfo[d].burstLen || (d > 0 && srcInfo[d].burstLen != 1)) {
      ASC_RT->trap("DataCopy with SliceInfo: burstLen must be equal on both sides, and 1 beyond dimension 0 "
                   "(guide 6.2.3.1.1.4)",
                   loc.c());
      return;
    }
  }
  const uint32_t seg = srcInfo[0].burstLen * 32u / (uint32_t)sizeof(T);
  const uint64_t ns = slice_total(srcInfo, dims, seg), nd = slice_total(dstInfo, dims, seg);
  if (ns != nd) {
    char msg[160];
    __builtin_snprintf(msg, sizeof(msg), "DataCopy with SliceInfo: the source selects %llu segments, the destination %llu",
                       (unsigned long long)ns, (unsigned long long)nd);
    ASC_RT->trap(msg, loc.c());
    return;
  }
  for (uint64_t i = 0; i < ns; ++i)
    DataCopy(dst[slice_offset(dstInfo, dims, seg, i)], src[slice_offset(srcInfo, dims, seg, i)], seg, loc);
}
}  // namespace detail
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const SliceInfo dstSliceInfo[],
                     const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1, ASC_LOC) {
  detail::slice_copy<LocalTensor<T>, GlobalTensor<T>, T>(dst, src, dstSliceInfo, srcSliceInfo, dimValue, loc_);
}
template <class T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const SliceInfo dstSliceInfo[],
                     const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1, ASC_LOC) {
  detail::slice_copy<GlobalTensor<T>, LocalTensor<T>, T>(dst, src, dstSliceInfo, srcSliceInfo, dimValue, loc_);
}

// ---- unlocated overloads (see ASC_UNLOCATED_OVERLOAD) ----------------------------------
#define ASCENDOPT_COPY_UNLOCATED(DST, SRC, SIZE)                                                                  \
  ASC_UNLOCATED_OVERLOAD((class T), (T), void, DataCopy, (const DST<T>& dst, const SRC<T>& src, SIZE),           \
                         (dst, src, p))
ASCENDOPT_COPY_UNLOCATED(LocalTensor, GlobalTensor, const DataCopyParams& p)
ASCENDOPT_COPY_UNLOCATED(GlobalTensor, LocalTensor, const DataCopyParams& p)
ASCENDOPT_COPY_UNLOCATED(LocalTensor, LocalTensor, const DataCopyParams& p)
ASCENDOPT_COPY_UNLOCATED(LocalTensor, GlobalTensor, uint32_t p)
ASCENDOPT_COPY_UNLOCATED(GlobalTensor, LocalTensor, uint32_t p)
ASCENDOPT_COPY_UNLOCATED(LocalTensor, LocalTensor, uint32_t p)
#undef ASCENDOPT_COPY_UNLOCATED
ASC_UNLOCATED_OVERLOAD((class T), (T), void, DataCopyPad,
                       (const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad),
                       (dst, src, p, pad))
ASC_UNLOCATED_OVERLOAD((class T), (T), void, DataCopyPad,
                       (const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p),
                       (dst, src, p))
ASC_UNLOCATED_OVERLOAD((class T), (T), void, DataCopyPad,
                       (const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                        const DataCopyPadParams& pad),
                       (dst, src, p, pad))
ASC_UNLOCATED_OVERLOAD((class T), (T), void, DataCopyPad,
                       (const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p), (dst, src, p))

}  // namespace AscendC

#endif
