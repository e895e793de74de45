// ascendopt AscendC emulation: Copy (a masked, strided copy inside the UB,
// guide 6.2.3.1.3) and GatherMask (keep the elements a bit pattern
// selects, guide 6.2.3.3.4.9). Clean-room: written from the documented
// signatures and semantics only; the runtime computes the result
// (crates/sim/src/runtime/vec/gather_mask.rs) and records one vector
// instruction.
#ifndef ASCENDOPT_KERNEL_VEC_MOVE_H
#define ASCENDOPT_KERNEL_VEC_MOVE_H

#include "vec_arith.h"

namespace AscendC {

// Strides of Copy: data-block strides inside a repeat and repeat strides,
// in 32-byte blocks. The constructor takes any integer types, so a braced
// list of the kernel's own variables (`{1, 1, stride, stride}`) is not a
// narrowing error.
struct CopyRepeatParams {
  uint16_t dstStride = DEFAULT_BLK_STRIDE;
  uint16_t srcStride = DEFAULT_BLK_STRIDE;
  uint16_t dstRepeatSize = DEFAULT_REPEAT_STRIDE;
  uint16_t srcRepeatSize = DEFAULT_REPEAT_STRIDE;
  CopyRepeatParams() {}
  template <class A, class B, class C, class D>
  CopyRepeatParams(A dstStrideIn, B srcStrideIn, C dstRepeatSizeIn, D srcRepeatSizeIn)
      : dstStride((uint16_t)dstStrideIn),
        srcStride((uint16_t)srcStrideIn),
        dstRepeatSize((uint16_t)dstRepeatSizeIn),
        srcRepeatSize((uint16_t)srcRepeatSizeIn) {}
};

// GatherMask's strides and repeat count (guide table 6-367).
struct GatherMaskParams {
  uint8_t src0BlockStride = DEFAULT_BLK_STRIDE;
  uint16_t repeatTimes = 0;
  uint16_t src0RepeatStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src1RepeatStride = DEFAULT_REPEAT_STRIDE;
  GatherMaskParams() {}
  template <class A, class B, class C, class D>
  GatherMaskParams(A src0BlockStrideIn, B repeatTimesIn, C src0RepeatStrideIn, D src1RepeatStrideIn)
      : src0BlockStride((uint8_t)src0BlockStrideIn),
        repeatTimes((uint16_t)repeatTimesIn),
        src0RepeatStride((uint16_t)src0RepeatStrideIn),
        src1RepeatStride((uint8_t)src1RepeatStrideIn) {}
};

// Reserved by the guide ("mode预留参数"): only the default exists.
enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V1;

namespace detail {
template <typename T>
inline AscVecOp copy_op(const LocalTensor<T>& dst, const LocalTensor<T>& src, const CopyRepeatParams& p,
                        const ::ascendopt::Loc& loc) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_COPY, ::ascendopt::dtype_of<T>(), loc);
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  op.dst_blk = p.dstStride;
  op.src0_blk = p.srcStride;
  op.dst_rep = p.dstRepeatSize;
  op.src0_rep = p.srcRepeatSize;
  return op;
}
template <typename T>
inline AscVecOp gather_mask_op(const LocalTensor<T>& dst, const LocalTensor<T>& src0, bool reduceMode,
                               uint32_t mask, const GatherMaskParams& p, const ::ascendopt::Loc& loc) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_GATHER_MASK, ::ascendopt::dtype_of<T>(), loc);
  op.dst = dst.desc_;
  op.src0 = src0.desc_;
  op.p[1] = reduceMode ? 1u : 0u;
  op.mask[0] = mask;
  op.repeat = p.repeatTimes;
  op.src0_blk = p.src0BlockStride;
  op.src0_rep = p.src0RepeatStride;
  op.src1_rep = p.src1RepeatStride;
  return op;
}
}  // namespace detail

// ---- Copy: mask forms (A2 has no count form) -----------------------------------
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const uint8_t repeatTime,
                 const CopyRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = detail::copy_op(dst, src, repeatParams, loc_);
  ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);
  ::ascendopt::vec::issue(op);
}
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask, const uint8_t repeatTime,
                 const CopyRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = detail::copy_op(dst, src, repeatParams, loc_);
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  ::ascendopt::vec::issue(op);
}
// The count form exists on Atlas 350 only (guide 6.2.3.1.3).
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>&, const LocalTensor<T>&, const uint32_t) {
  static_assert(::ascendopt::always_false<T>,
                "not supported by the ascendopt simulator: Copy with a count (the guide has it on Atlas 350 "
                "only; on the 910B use the mask forms or DataCopy)");
}

// ---- GatherMask --------------------------------------------------------------------
// A pattern tensor (uint16_t for 16-bit T, uint32_t for 32-bit T).
template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                       uint64_t& rsvdCnt, ASC_LOC) {
  AscVecOp op = detail::gather_mask_op(dst, src0, reduceMode, mask, gatherMaskParams, loc_);
  op.src1 = src1Pattern.desc_;
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.p[2] = 1;
  rsvdCnt = ASC_RT->vec_result(&op);
}
// A built-in pattern 1..7.
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                       uint64_t& rsvdCnt, ASC_LOC) {
  AscVecOp op = detail::gather_mask_op(dst, src0, reduceMode, mask, gatherMaskParams, loc_);
  op.p[0] = src1Pattern;
  rsvdCnt = ASC_RT->vec_result(&op);
}

// ---- TransDataTo5HD (guide 6.2.3.3.7.2) ----------------------------------------------
constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;

// Which halves 8-bit data use, the repeat count and the repeat strides (in
// 32-byte blocks) of TransDataTo5HD (guide table 6-410).
struct TransDataTo5HDParams {
  bool dstHighHalf = false;
  bool srcHighHalf = false;
  uint8_t repeatTimes = 1;
  uint16_t dstRepStride = 0;
  uint16_t srcRepStride = 0;
  TransDataTo5HDParams() {}
  template <class A, class B, class C, class D, class E>
  TransDataTo5HDParams(A dstHighHalfIn, B srcHighHalfIn, C repeatTimesIn, D dstRepStrideIn, E srcRepStrideIn)
      : dstHighHalf((bool)dstHighHalfIn),
        srcHighHalf((bool)srcHighHalfIn),
        repeatTimes((uint8_t)repeatTimesIn),
        dstRepStride((uint16_t)dstRepStrideIn),
        srcRepStride((uint16_t)srcRepStrideIn) {}
};

namespace detail {
template <typename T>
inline void trans_data_5hd(const uint64_t (&table)[32], const TransDataTo5HDParams& p, const ::ascendopt::Loc& loc) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_TRANS_DATA_5HD, ::ascendopt::dtype_of<T>(), loc);
  const uint64_t at = (uint64_t)(uintptr_t)&table[0];
  op.p[0] = (uint32_t)(at & 0xffffffffu);
  op.p[1] = (uint32_t)(at >> 32);
  op.p[2] = p.dstHighHalf ? 1u : 0u;
  op.p[3] = p.srcHighHalf ? 1u : 0u;
  op.form = ASC_FORM_MASK_CONT;
  op.repeat = p.repeatTimes;
  op.dst_rep = p.dstRepStride;
  op.src0_rep = p.srcRepStride;
  ::ascendopt::vec::issue(op);
}
}  // namespace detail

// Block lists as tensors.
template <typename T>
inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& nchwconvParams, ASC_LOC) {
  uint64_t table[32];
  for (int i = 0; i < 16; ++i) {
    table[i] = dstList[i].desc_.addr;
    table[16 + i] = srcList[i].desc_.addr;
  }
  detail::trans_data_5hd<T>(table, nchwconvParams, loc_);
}
// Block lists as addresses (GetPhyAddr()).
template <typename T>
inline void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& nchwconvParams, ASC_LOC) {
  uint64_t table[32];
  for (int i = 0; i < 16; ++i) {
    table[i] = dstList[i];
    table[16 + i] = srcList[i];
  }
  detail::trans_data_5hd<T>(table, nchwconvParams, loc_);
}
// Block lists stored in the UB, one address per uint64_t.
template <typename T>
inline void TransDataTo5HD(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src,
                           const TransDataTo5HDParams& nchwconvParams, ASC_LOC) {
  uint64_t table[32];
  for (uint32_t i = 0; i < 16; ++i) {
    table[i] = dst.GetValue(i, loc_);
    table[16 + i] = src.GetValue(i, loc_);
  }
  detail::trans_data_5hd<T>(table, nchwconvParams, loc_);
}

// ---- unlocated overloads (see ASC_UNLOCATED_OVERLOAD) ----------------------------------
ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Copy,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                        const uint8_t repeatTime, const CopyRepeatParams& repeatParams),
                       (dst, src, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Copy,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask,
                        const uint8_t repeatTime, const CopyRepeatParams& repeatParams),
                       (dst, src, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode), (T, U, mode), void,
                       GatherMask,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                        const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                        uint64_t& rsvdCnt),
                       (dst, src0, src1Pattern, reduceMode, mask, gatherMaskParams, rsvdCnt))
ASC_UNLOCATED_OVERLOAD((typename T, GatherMaskMode mode = defaultGatherMaskMode), (T, mode), void, GatherMask,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                        const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                        uint64_t& rsvdCnt),
                       (dst, src0, src1Pattern, reduceMode, mask, gatherMaskParams, rsvdCnt))

}  // namespace AscendC

#endif
