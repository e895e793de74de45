// ascendopt AscendC emulation: compare and select, reductions, Brcb, Gather
// and CreateVecIndex (guide 6.2.3.3.4.1/.3/.7, 6.2.3.3.6.1-10,
// 6.2.3.3.8.2-3, 6.2.3.3.10.1). Clean-room: written from the documented
// signatures and semantics only.
//
// Every call builds one zero-initialised AscVecOp (ascendopt::vec::make of
// vec_arith.h) and hands it to the runtime, which checks the operands,
// computes the result in UB and records one vector instruction. Forms map
// as in vec_arith.h (count -> ASC_FORM_COUNT, mask[] -> ASC_FORM_MASK_BITS,
// mask -> ASC_FORM_MASK_CONT, isSetMask=false -> ASC_FORM_MASK_CUR).
// Op-specific fields (see AscVecOpCode in abi.h):
//   Compare/Compares  dtype = dst (uint8_t/int8_t), src_dtype = T, round = CMPMODE
//   Select            src2 = selMask, p[0] = SELMODE, scalar set only by the
//                     tensor-scalar overloads
//   ReduceX           src1 = sharedTmpBuffer, p[0] = calIndex, srcRepStride
//                     in src0_rep, repeatTime (may exceed 255) in repeat
//   WholeReduceX      p[0] = dstRepStride, p[1] = srcBlkStride,
//                     p[2] = srcRepStride, p[3] = ReduceOrder
//   BlockReduceX, PairReduceSum   p[0..2] as WholeReduceX
//   Brcb              p[0] = dstBlkStride, p[1] = dstRepStride
//   Gather            src1 = srcOffset (uint32_t bytes), p[0] = srcBaseAddr
//   CreateVecIndex    scalar = firstValue
// Not emulated (compile error naming them): the cmpMask-register forms
// (Compare without dst, Select without selMask/mask, GetCmpMask,
// SetCmpMask), the mask forms of Gather and CreateVecIndex.
#ifndef ASCENDOPT_KERNEL_VEC_MORE_H
#define ASCENDOPT_KERNEL_VEC_MORE_H

#include "vec_arith.h"

namespace ascendopt {
namespace vec {
// Int32 repeat counts are passed whole (the runtime range-checks them);
// cont_form/bits_form take a uint8_t and would truncate.
inline void cont_form32(AscVecOp& op, uint64_t mask, int32_t repeat, bool isSetMask) {
  cont_form(op, mask, 0, isSetMask);
  op.repeat = (uint32_t)repeat;
}
inline void bits_form32(AscVecOp& op, const uint64_t* mask, size_t widest, int32_t repeat, bool isSetMask) {
  bits_form(op, mask, widest, 0, isSetMask);
  op.repeat = (uint32_t)repeat;
}
inline void reduce_strides(AscVecOp& op, int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride) {
  op.p[0] = (uint32_t)dstRepStride;
  op.p[1] = (uint32_t)srcBlkStride;
  op.p[2] = (uint32_t)srcRepStride;
}
}  // namespace vec
}  // namespace ascendopt

namespace AscendC {

// ---- Compare / Compares ------------------------------------------------------

template <typename T, typename U>
inline AscVecOp ascendopt_cmp_op(uint32_t code, const LocalTensor<U>& dst, const LocalTensor<T>& src0, CMPMODE cmpMode,
                                 const ::ascendopt::Loc& loc) {
  AscVecOp op = ::ascendopt::vec::make(code, ::ascendopt::dtype_of<U>(), loc);
  op.src_dtype = ::ascendopt::dtype_of<T>();
  op.round = (uint8_t)cmpMode;
  op.dst = dst.desc_;
  op.src0 = src0.desc_;
  return op;
}

template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    uint32_t count, ASC_LOC) {
  AscVecOp op = ascendopt_cmp_op(ASC_VOP_COMPARE, dst, src0, cmpMode, loc_);
  op.src1 = src1.desc_;
  ::ascendopt::vec::count_form(op, (int64_t)count, true);
  ::ascendopt::vec::issue(op);
}

template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    const uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ascendopt_cmp_op(ASC_VOP_COMPARE, dst, src0, cmpMode, loc_);
  op.src1 = src1.desc_;
  ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    const uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ascendopt_cmp_op(ASC_VOP_COMPARE, dst, src0, cmpMode, loc_);
  op.src1 = src1.desc_;
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

// Compare into the cmpMask register (no dst): not emulated.
template <typename T, bool isSetMask = true, typename M>
inline void Compare(const LocalTensor<T>&, const LocalTensor<T>&, CMPMODE, M, const BinaryRepeatParams&) {
  static_assert(::ascendopt::always_false<T, M>,
                "not supported by the ascendopt simulator: Compare into the cmpMask register (use a dst tensor)");
}

template <typename T, typename U>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                     uint32_t count, ASC_LOC) {
  AscVecOp op = ascendopt_cmp_op(ASC_VOP_COMPARES, dst, src0, cmpMode, loc_);
  ::ascendopt::vec::scalar(op, src1Scalar);
  ::ascendopt::vec::count_form(op, (int64_t)count, true);
  ::ascendopt::vec::issue(op);
}

template <typename T, typename U, bool isSetMask = true>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                     const uint64_t mask[], uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ascendopt_cmp_op(ASC_VOP_COMPARES, dst, src0, cmpMode, loc_);
  ::ascendopt::vec::scalar(op, src1Scalar);
  ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

template <typename T, typename U, bool isSetMask = true>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                     const uint64_t mask, uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ascendopt_cmp_op(ASC_VOP_COMPARES, dst, src0, cmpMode, loc_);
  ::ascendopt::vec::scalar(op, src1Scalar);
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

template <typename T>
inline void GetCmpMask(const LocalTensor<T>&) {
  static_assert(::ascendopt::always_false<T>, "not supported by the ascendopt simulator: GetCmpMask");
}
template <typename T>
inline void SetCmpMask(const LocalTensor<T>&) {
  static_assert(::ascendopt::always_false<T>, "not supported by the ascendopt simulator: SetCmpMask");
}

// Old name of Compares (guide 6.6.3 接口变更说明: CompareScalar -> Compares).
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                          uint32_t count, ASC_LOC) {
  Compares(dst, src0, src1Scalar, cmpMode, count, loc_);
}
template <typename T, typename U, bool isSetMask = true>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                          const uint64_t mask[], uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {
  Compares<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, mask, repeatTime, repeatParams, loc_);
}
template <typename T, typename U, bool isSetMask = true>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                          const uint64_t mask, uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {
  Compares<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, mask, repeatTime, repeatParams, loc_);
}

// `dst = src0 < src1` and the other whole-tensor comparisons (guide
// 6.2.3.3.4.1): the count is src0's size.
namespace detail {
template <class T>
struct TensorCmpExpr {
  using ascendopt_tensor_expr = void;
  LocalTensor<T> a;
  LocalTensor<T> b;
  CMPMODE mode;
  template <class U>
  void assign_to(const LocalTensor<U>& dst) const {
    Compare(dst, a, b, mode, a.GetSize(), ::ascendopt::Loc::none());
  }
};
}  // namespace detail
#define ASCENDOPT_TENSOR_CMP_OP(SYM, MODE)                                                           \
  template <class T>                                                                                 \
  inline detail::TensorCmpExpr<T> operator SYM(const LocalTensor<T>& a, const LocalTensor<T>& b) {   \
    return {a, b, CMPMODE::MODE};                                                                     \
  }
ASCENDOPT_TENSOR_CMP_OP(<, LT)
ASCENDOPT_TENSOR_CMP_OP(>, GT)
ASCENDOPT_TENSOR_CMP_OP(<=, LE)
ASCENDOPT_TENSOR_CMP_OP(>=, GE)
ASCENDOPT_TENSOR_CMP_OP(==, EQ)
ASCENDOPT_TENSOR_CMP_OP(!=, NE)
#undef ASCENDOPT_TENSOR_CMP_OP

// ---- Select --------------------------------------------------------------------

template <typename T, typename U>
inline AscVecOp ascendopt_sel_op(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                                 SELMODE selMode, const ::ascendopt::Loc& loc) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_SELECT, ::ascendopt::dtype_of<T>(), loc);
  op.dst = dst.desc_;
  op.src0 = src0.desc_;
  op.src2 = selMask.desc_;
  op.p[0] = (uint32_t)selMode;
  return op;
}

// Tensor-scalar (mode 1), count form.
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
                   SELMODE selMode, uint32_t count, ASC_LOC) {
  AscVecOp op = ascendopt_sel_op(dst, selMask, src0, selMode, loc_);
  ::ascendopt::vec::scalar(op, src1);
  ::ascendopt::vec::count_form(op, (int64_t)count, true);
  ::ascendopt::vec::issue(op);
}

// Tensor-tensor (modes 0 and 2), count form.
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint32_t count, ASC_LOC) {
  AscVecOp op = ascendopt_sel_op(dst, selMask, src0, selMode, loc_);
  op.src1 = src1.desc_;
  ::ascendopt::vec::count_form(op, (int64_t)count, true);
  ::ascendopt::vec::issue(op);
}

// Tensor-scalar (mode 1), mask forms.
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
                   SELMODE selMode, const uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams& repeatParams,
                   ASC_LOC) {
  AscVecOp op = ascendopt_sel_op(dst, selMask, src0, selMode, loc_);
  ::ascendopt::vec::scalar(op, src1);
  ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
                   SELMODE selMode, uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams,
                   ASC_LOC) {
  AscVecOp op = ascendopt_sel_op(dst, selMask, src0, selMode, loc_);
  ::ascendopt::vec::scalar(op, src1);
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

// Tensor-tensor (modes 0 and 2), mask forms.
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
                   const BinaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ascendopt_sel_op(dst, selMask, src0, selMode, loc_);
  op.src1 = src1.desc_;
  ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
                   const BinaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ascendopt_sel_op(dst, selMask, src0, selMode, loc_);
  op.src1 = src1.desc_;
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

// Forms that take the selection or the scalar from the cmpMask register
// (SetCmpMask): not emulated.
template <typename T, typename U>
inline void Select(const LocalTensor<T>&, const LocalTensor<U>&, const LocalTensor<T>&, uint8_t,
                   const BinaryRepeatParams&) {
  static_assert(::ascendopt::always_false<T, U>,
                "not supported by the ascendopt simulator: Select with the scalar in the cmpMask register");
}
template <typename T, SELMODE selMode>
inline void Select(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, uint8_t,
                   const BinaryRepeatParams&) {
  static_assert(::ascendopt::always_false<T>,
                "not supported by the ascendopt simulator: Select with the selMask in the cmpMask register");
}

// ---- ReduceSum / ReduceMax / ReduceMin -------------------------------------------

template <typename T>
inline AscVecOp ascendopt_reduce_op(uint32_t code, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                    const LocalTensor<T>& sharedTmpBuffer, bool calIndex,
                                    const ::ascendopt::Loc& loc) {
  AscVecOp op = ::ascendopt::vec::make(code, ::ascendopt::dtype_of<T>(), loc);
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  op.src1 = sharedTmpBuffer.desc_;
  op.p[0] = calIndex ? 1u : 0u;
  return op;
}

#define ASCENDOPT_VEC_REDUCE_ALL(Name, CODE, INDEX_PARAM, INDEX_VALUE)                                          \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer, \
                   const int32_t count INDEX_PARAM, ASC_LOC) {                                                 \
    AscVecOp op = ascendopt_reduce_op(CODE, dst, src, sharedTmpBuffer, INDEX_VALUE, loc_);                     \
    ::ascendopt::vec::count_form(op, count, isSetMask);                                                        \
    ::ascendopt::vec::issue(op);                                                                               \
  }                                                                                                            \
  template <typename T>                                                                                        \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer, \
                   const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride INDEX_PARAM,    \
                   ASC_LOC) {                                                                                  \
    AscVecOp op = ascendopt_reduce_op(CODE, dst, src, sharedTmpBuffer, INDEX_VALUE, loc_);                     \
    ::ascendopt::vec::bits_form32(op, mask, sizeof(T), repeatTime, true);                                      \
    op.src0_rep = (uint32_t)srcRepStride;                                                                      \
    ::ascendopt::vec::issue(op);                                                                               \
  }                                                                                                            \
  template <typename T>                                                                                        \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer, \
                   const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride INDEX_PARAM,       \
                   ASC_LOC) {                                                                                  \
    AscVecOp op = ascendopt_reduce_op(CODE, dst, src, sharedTmpBuffer, INDEX_VALUE, loc_);                     \
    ::ascendopt::vec::cont_form32(op, (uint64_t)(int64_t)mask, repeatTime, true);                              \
    op.src0_rep = (uint32_t)srcRepStride;                                                                      \
    ::ascendopt::vec::issue(op);                                                                               \
  }

#define ASCENDOPT_VM_NOTHING
#define ASCENDOPT_VEC_CAL_INDEX , bool calIndex = 0
ASCENDOPT_VEC_REDUCE_ALL(ReduceSum, ASC_VOP_REDUCE_SUM, ASCENDOPT_VM_NOTHING, false)
ASCENDOPT_VEC_REDUCE_ALL(ReduceMax, ASC_VOP_REDUCE_MAX, ASCENDOPT_VEC_CAL_INDEX, calIndex)
ASCENDOPT_VEC_REDUCE_ALL(ReduceMin, ASC_VOP_REDUCE_MIN, ASCENDOPT_VEC_CAL_INDEX, calIndex)
#undef ASCENDOPT_VEC_CAL_INDEX
#undef ASCENDOPT_VEC_REDUCE_ALL

// ---- RepeatReduceSum (guide 6.2.3.3.6.11) -------------------------------------------------
// The sum of each repeat, as WholeReduceSum with a continuous mask:
// (dst, src, repeatTime, mask, dstBlkStride (unused), srcBlkStride,
// dstRepStride in results, srcRepStride in blocks).
template <typename T, bool isSetMask = true>
inline void RepeatReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                            const int32_t mask, const int32_t dstBlkStride, const int32_t srcBlkStride,
                            const int32_t dstRepStride, const int32_t srcRepStride, ASC_LOC) {
  (void)dstBlkStride;
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_WHOLE_REDUCE_SUM, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  ::ascendopt::vec::cont_form32(op, (uint64_t)(int64_t)mask, repeatTime, isSetMask);
  ::ascendopt::vec::reduce_strides(op, dstRepStride, srcBlkStride, srcRepStride);
  ::ascendopt::vec::issue(op);
}

// ---- the reduce-result register (guide 6.2.3.3.6.12/13) ----------------------------------
// The sum of the last ReduceSum (count form) or WholeReduceSum.
template <typename T>
inline T GetReduceRepeatSumSpr() {
  return ::ascendopt::from_bits<T>(::ascendopt::vec::g_reduce_spr & ((1ull << (8 * sizeof(T))) - 1));
}
// The value and index of the last ReduceMax/ReduceMin/WholeReduceMax/Min;
// the index's integer bits are stored in a T (as the guide says: read
// them back with a reinterpret_cast).
template <typename T>
inline void GetReduceRepeatMaxMinSpr(T& maxMinValue, T& maxMinIndex) {
  const uint64_t low = (1ull << (8 * sizeof(T))) - 1;
  maxMinValue = ::ascendopt::from_bits<T>(::ascendopt::vec::g_reduce_spr & low);
  maxMinIndex = ::ascendopt::from_bits<T>((::ascendopt::vec::g_reduce_spr >> 32) & low);
}
template <typename T>
inline void GetReduceRepeatMaxMinSpr(T& maxMinValue) {
  maxMinValue = ::ascendopt::from_bits<T>(::ascendopt::vec::g_reduce_spr & ((1ull << (8 * sizeof(T))) - 1));
}
// Every lane of a mask register half (`SetVectorMask<T>(FULL_MASK,
// FULL_MASK)` in public operators).
constexpr uint64_t FULL_MASK = UINT64_MAX;

// Older names (guide 6.6.3 接口变更说明).
template <typename T>
inline T GetAccVal() {
  return GetReduceRepeatSumSpr<T>();
}
// Without a type: the register's raw bits.
inline uint64_t GetAccVal() { return ::ascendopt::vec::g_reduce_spr; }
template <typename T>
inline void GetReduceMaxMinCount(T& maxMinValue, T& maxMinIndex) {
  GetReduceRepeatMaxMinSpr<T>(maxMinValue, maxMinIndex);
}
template <typename T>
inline void GetReduceMaxMinCount(T& maxMinValue) {
  GetReduceRepeatMaxMinSpr<T>(maxMinValue);
}

// ---- WholeReduceSum / WholeReduceMax / WholeReduceMin ---------------------------------

#define ASCENDOPT_VEC_WHOLE_REDUCE(Name, CODE, ORDER_PARAM, ORDER_VALUE)                                        \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                 \
                   const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,           \
                   const int32_t srcRepStride ORDER_PARAM, ASC_LOC) {                                          \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                               \
    op.dst = dst.desc_;                                                                                        \
    op.src0 = src.desc_;                                                                                       \
    ::ascendopt::vec::bits_form32(op, mask, sizeof(T), repeatTime, isSetMask);                                 \
    ::ascendopt::vec::reduce_strides(op, dstRepStride, srcBlkStride, srcRepStride);                            \
    op.p[3] = (uint32_t)(ORDER_VALUE);                                                                         \
    ::ascendopt::vec::issue(op);                                                                               \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,                    \
                   const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,           \
                   const int32_t srcRepStride ORDER_PARAM, ASC_LOC) {                                          \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                               \
    op.dst = dst.desc_;                                                                                        \
    op.src0 = src.desc_;                                                                                       \
    ::ascendopt::vec::cont_form32(op, (uint64_t)(int64_t)mask, repeatTime, isSetMask);                         \
    ::ascendopt::vec::reduce_strides(op, dstRepStride, srcBlkStride, srcRepStride);                            \
    op.p[3] = (uint32_t)(ORDER_VALUE);                                                                         \
    ::ascendopt::vec::issue(op);                                                                               \
  }

#define ASCENDOPT_VEC_ORDER , ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX
ASCENDOPT_VEC_WHOLE_REDUCE(WholeReduceSum, ASC_VOP_WHOLE_REDUCE_SUM, ASCENDOPT_VM_NOTHING, 0)
ASCENDOPT_VEC_WHOLE_REDUCE(WholeReduceMax, ASC_VOP_WHOLE_REDUCE_MAX, ASCENDOPT_VEC_ORDER, order)
ASCENDOPT_VEC_WHOLE_REDUCE(WholeReduceMin, ASC_VOP_WHOLE_REDUCE_MIN, ASCENDOPT_VEC_ORDER, order)
#undef ASCENDOPT_VEC_ORDER
#undef ASCENDOPT_VEC_WHOLE_REDUCE

// ---- BlockReduceSum / BlockReduceMax / BlockReduceMin, PairReduceSum -------------------

#define ASCENDOPT_VEC_BLOCK_REDUCE(Name, CODE)                                                                 \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,              \
                   const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,             \
                   const int32_t srcRepStride, ASC_LOC) {                                                      \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                               \
    op.dst = dst.desc_;                                                                                        \
    op.src0 = src.desc_;                                                                                       \
    ::ascendopt::vec::bits_form32(op, mask, sizeof(T), repeatTime, isSetMask);                                 \
    ::ascendopt::vec::reduce_strides(op, dstRepStride, srcBlkStride, srcRepStride);                            \
    ::ascendopt::vec::issue(op);                                                                               \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,              \
                   const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,                \
                   const int32_t srcRepStride, ASC_LOC) {                                                      \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                               \
    op.dst = dst.desc_;                                                                                        \
    op.src0 = src.desc_;                                                                                       \
    ::ascendopt::vec::cont_form32(op, (uint64_t)(int64_t)mask, repeatTime, isSetMask);                         \
    ::ascendopt::vec::reduce_strides(op, dstRepStride, srcBlkStride, srcRepStride);                            \
    ::ascendopt::vec::issue(op);                                                                               \
  }

ASCENDOPT_VEC_BLOCK_REDUCE(BlockReduceSum, ASC_VOP_BLOCK_REDUCE_SUM)
ASCENDOPT_VEC_BLOCK_REDUCE(BlockReduceMax, ASC_VOP_BLOCK_REDUCE_MAX)
ASCENDOPT_VEC_BLOCK_REDUCE(BlockReduceMin, ASC_VOP_BLOCK_REDUCE_MIN)
ASCENDOPT_VEC_BLOCK_REDUCE(PairReduceSum, ASC_VOP_PAIR_REDUCE_SUM)
#undef ASCENDOPT_VEC_BLOCK_REDUCE
#undef ASCENDOPT_VM_NOTHING

// ---- Brcb ------------------------------------------------------------------------------

// Strides of Brcb (only dstBlkStride and dstRepStride are used).
struct BrcbRepeatParams {
  BrcbRepeatParams() {}
  BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
      : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t repeatTime,
                 const BrcbRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_BRCB, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  op.src0 = src0.desc_;
  op.form = ASC_FORM_MASK_CONT;
  op.mask[0] = 256 / sizeof(T);
  op.repeat = repeatTime;
  op.p[0] = repeatParams.dstBlkStride;
  op.p[1] = repeatParams.dstRepStride;
  ::ascendopt::vec::issue(op);
}

// ---- Gather ------------------------------------------------------------------------------

template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                   const uint32_t srcBaseAddr, const uint32_t count, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_GATHER, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  op.src1 = srcOffset.desc_;
  op.p[0] = srcBaseAddr;
  ::ascendopt::vec::count_form(op, (int64_t)count, true);
  ::ascendopt::vec::issue(op);
}

template <typename T, typename M>
inline void Gather(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint32_t>&, const uint32_t, M,
                   const uint8_t, const uint16_t) {
  static_assert(::ascendopt::always_false<T, M>,
                "not supported by the ascendopt simulator: Gather mask forms (use the count form)");
}

// ---- CreateVecIndex -------------------------------------------------------------------------

template <typename T>
inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_CREATE_VEC_INDEX, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  ::ascendopt::vec::scalar(op, firstValue);
  ::ascendopt::vec::count_form(op, (int64_t)count, true);
  ::ascendopt::vec::issue(op);
}

template <typename T, typename M>
inline void CreateVecIndex(LocalTensor<T>&, const T&, M, uint8_t, uint16_t, uint8_t) {
  static_assert(::ascendopt::always_false<T, M>,
                "not supported by the ascendopt simulator: CreateVecIndex mask forms (use the count form)");
}

// ---- unlocated overloads (see ASC_UNLOCATED_OVERLOAD) ----------------------------------
#define ASCENDOPT_CMP_UNLOCATED(Name, SCALAR_T)                                                                   \
  ASC_UNLOCATED_OVERLOAD((typename T, typename U), (T, U), void, Name,                                           \
                         (const LocalTensor<U>& dst, const LocalTensor<T>& src0, SCALAR_T src1, CMPMODE cmpMode, \
                          uint32_t count),                                                                       \
                         (dst, src0, src1, cmpMode, count))
ASCENDOPT_CMP_UNLOCATED(Compare, const LocalTensor<T>&)
ASCENDOPT_CMP_UNLOCATED(Compares, const T)
ASCENDOPT_CMP_UNLOCATED(CompareScalar, const T)
#undef ASCENDOPT_CMP_UNLOCATED
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Compare,
                       (const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                        CMPMODE cmpMode, const uint64_t mask[], uint8_t repeatTime,
                        const BinaryRepeatParams& repeatParams),
                       (dst, src0, src1, cmpMode, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Compare,
                       (const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                        CMPMODE cmpMode, const uint64_t mask, uint8_t repeatTime,
                        const BinaryRepeatParams& repeatParams),
                       (dst, src0, src1, cmpMode, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Compares,
                       (const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                        const uint64_t mask[], uint8_t repeatTime, const UnaryRepeatParams& repeatParams),
                       (dst, src0, src1Scalar, cmpMode, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Compares,
                       (const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                        const uint64_t mask, uint8_t repeatTime, const UnaryRepeatParams& repeatParams),
                       (dst, src0, src1Scalar, cmpMode, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U), (T, U), void, Select,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
                        SELMODE selMode, uint32_t count),
                       (dst, selMask, src0, src1, selMode, count))
ASC_UNLOCATED_OVERLOAD((typename T, typename U), (T, U), void, Select,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                        const LocalTensor<T>& src1, SELMODE selMode, uint32_t count),
                       (dst, selMask, src0, src1, selMode, count))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Select,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                        const LocalTensor<T>& src1, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
                        const BinaryRepeatParams& repeatParams),
                       (dst, selMask, src0, src1, selMode, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Select,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                        const LocalTensor<T>& src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
                        const BinaryRepeatParams& repeatParams),
                       (dst, selMask, src0, src1, selMode, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, ReduceSum,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                        const int32_t count),
                       (dst, src, sharedTmpBuffer, count))
#define ASCENDOPT_REDUCE_UNLOCATED(Name)                                                                          \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                        \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src,                                  \
                          const LocalTensor<T>& sharedTmpBuffer, const int32_t count, bool calIndex),            \
                         (dst, src, sharedTmpBuffer, count, calIndex))
ASCENDOPT_REDUCE_UNLOCATED(ReduceMax)
ASCENDOPT_REDUCE_UNLOCATED(ReduceMin)
#undef ASCENDOPT_REDUCE_UNLOCATED
#define ASCENDOPT_WHOLE_REDUCE_UNLOCATED(Name)                                                                    \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                        \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,             \
                          const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,      \
                          const int32_t srcRepStride),                                                           \
                         (dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride))
ASCENDOPT_WHOLE_REDUCE_UNLOCATED(WholeReduceSum)
ASCENDOPT_WHOLE_REDUCE_UNLOCATED(WholeReduceMax)
ASCENDOPT_WHOLE_REDUCE_UNLOCATED(WholeReduceMin)
#undef ASCENDOPT_WHOLE_REDUCE_UNLOCATED
#define ASCENDOPT_BLOCK_REDUCE_UNLOCATED(Name)                                                                    \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                        \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,        \
                          const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,            \
                          const int32_t srcRepStride),                                                           \
                         (dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride))
ASCENDOPT_BLOCK_REDUCE_UNLOCATED(BlockReduceSum)
ASCENDOPT_BLOCK_REDUCE_UNLOCATED(BlockReduceMax)
ASCENDOPT_BLOCK_REDUCE_UNLOCATED(BlockReduceMin)
ASCENDOPT_BLOCK_REDUCE_UNLOCATED(PairReduceSum)
#undef ASCENDOPT_BLOCK_REDUCE_UNLOCATED
ASC_UNLOCATED_OVERLOAD((typename T), (T), void, Brcb,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t repeatTime,
                        const BrcbRepeatParams& repeatParams),
                       (dst, src0, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T), (T), void, Gather,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                        const uint32_t srcBaseAddr, const uint32_t count),
                       (dst, src, srcOffset, srcBaseAddr, count))

}  // namespace AscendC

// The device intrinsic that reads the reduce-result register directly:
// the value's bits in the low half, the index's in the high half.
inline uint64_t get_max_min_cnt() { return ::ascendopt::vec::g_reduce_spr; }

#endif
