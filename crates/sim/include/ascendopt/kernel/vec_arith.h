// ascendopt AscendC emulation: vector arithmetic, Duplicate, Cast and the
// mask-state API (guide 6.2.3.3.1-3, 6.2.3.3.5.1, 6.2.3.3.8.1, 6.2.3.3.11,
// 6.2.3.3.12.1; repeat-parameter structs 6.2.6.4/6.2.6.5). Clean-room:
// written from the documented signatures and semantics only.
//
// Every call builds one zero-initialised AscVecOp and hands it to the
// runtime (ASC_RT->vec), which checks the operands, computes the result in
// UB and records one vector instruction:
//   - tensor-前n个 (count) form          -> ASC_FORM_COUNT
//   - mask continuous form, isSetMask   -> ASC_FORM_MASK_CONT
//   - mask bit form, isSetMask          -> ASC_FORM_MASK_BITS
//   - isSetMask = false (any form)      -> ASC_FORM_MASK_CUR (SetVectorMask)
// Every API ends with the defaulted ASC_LOC parameter (caller file/line).
#ifndef ASCENDOPT_KERNEL_VEC_ARITH_H
#define ASCENDOPT_KERNEL_VEC_ARITH_H

#include "tensor.h"

namespace AscendC {

constexpr int32_t DEFAULT_BLK_STRIDE = 1;

// Strides of a two-source instruction, in 32-byte blocks (guide 6.2.6.5).
struct BinaryRepeatParams {
  BinaryRepeatParams() {}
  BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn, const uint8_t src1BlkStrideIn,
                     const uint8_t dstRepStrideIn, const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
      : dstBlkStride(dstBlkStrideIn),
        src0BlkStride(src0BlkStrideIn),
        src1BlkStride(src1BlkStrideIn),
        dstRepStride(dstRepStrideIn),
        src0RepStride(src0RepStrideIn),
        src1RepStride(src1RepStrideIn) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

// Strides of a one-source instruction, in 32-byte blocks (guide 6.2.6.4).
struct UnaryRepeatParams {
  UnaryRepeatParams() {}
  UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                    const uint8_t srcRepStrideIn)
      : dstBlkStride(dstBlkStrideIn),
        srcBlkStride(srcBlkStrideIn),
        dstRepStride(dstRepStrideIn),
        srcRepStride(srcRepStrideIn) {}
  UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                    const uint8_t srcRepStrideIn, const bool halfBlockIn)
      : dstBlkStride(dstBlkStrideIn),
        srcBlkStride(srcBlkStrideIn),
        dstRepStride(dstRepStrideIn),
        srcRepStride(srcRepStrideIn),
        halfBlock(halfBlockIn) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
  uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
  bool halfBlock = false;
};

}  // namespace AscendC

namespace ascendopt {
// DEQSCALE register (SetDeqScale(half)) of the calling core, per thread.
inline thread_local uint16_t g_deq_scale_bits = 0;
inline thread_local bool g_deq_scale_set = false;

namespace vec {
// A zeroed op with default strides (1 inside a repeat, 8 between repeats).
inline AscVecOp make(uint32_t code, uint8_t dtype, const Loc& loc) {
  AscVecOp op;
  memset(&op, 0, sizeof(op));
  op.op = code;
  op.dtype = dtype;
  op.src_dtype = dtype;
  op.dst_blk = op.src0_blk = op.src1_blk = 1;
  op.dst_rep = op.src0_rep = op.src1_rep = 8;
  op.loc = loc.c();
  return op;
}
// tensor-前n个 form; the int32 count is sign-extended so that a negative
// count reaches the runtime as an invalid value.
inline void count_form(AscVecOp& op, int64_t count, bool isSetMask) {
  if (isSetMask) {
    op.form = ASC_FORM_COUNT;
    op.count = (uint64_t)count;
  } else {
    op.form = ASC_FORM_MASK_CUR;
    op.repeat = 1;
  }
}
inline void cont_form(AscVecOp& op, uint64_t mask, uint8_t repeat, bool isSetMask) {
  op.form = isSetMask ? ASC_FORM_MASK_CONT : ASC_FORM_MASK_CUR;
  op.mask[0] = isSetMask ? mask : 0;
  op.repeat = repeat;
}
// mask[] has two words only when a repeat has 128 lanes (16-bit widest type).
inline void bits_form(AscVecOp& op, const uint64_t* mask, size_t widest, uint8_t repeat, bool isSetMask) {
  op.form = isSetMask ? ASC_FORM_MASK_BITS : ASC_FORM_MASK_CUR;
  if (isSetMask && mask != nullptr) {
    op.mask[0] = mask[0];
    op.mask[1] = widest <= 2 ? mask[1] : 0;
  }
  op.repeat = repeat;
}
inline void strides(AscVecOp& op, const AscendC::BinaryRepeatParams& p) {
  op.dst_blk = p.dstBlkStride;
  op.src0_blk = p.src0BlkStride;
  op.src1_blk = p.src1BlkStride;
  op.dst_rep = p.dstRepStride;
  op.src0_rep = p.src0RepStride;
  op.src1_rep = p.src1RepStride;
}
inline void strides(AscVecOp& op, const AscendC::UnaryRepeatParams& p) {
  op.dst_blk = p.dstBlkStride;
  op.src0_blk = p.srcBlkStride;
  op.dst_rep = p.dstRepStride;
  op.src0_rep = p.srcRepStride;
}
template <class T>
inline void scalar(AscVecOp& op, const T& value) {
  op.scalar_bits = to_bits<T>(value);
  op.scalar_dtype = dtype_of<T>();
}
// The reduce-result register of this core (block): the value (and index)
// of the last ReduceX / WholeReduceX, read by GetReduceRepeatSumSpr and
// GetReduceRepeatMaxMinSpr.
inline thread_local uint64_t g_reduce_spr = 0;
inline void issue(const AscVecOp& op) {
  if (op.op >= ASC_VOP_REDUCE_SUM && op.op <= ASC_VOP_WHOLE_REDUCE_MIN) {
    g_reduce_spr = ASC_RT->vec_result(&op);
  } else {
    ASC_RT->vec(&op);
  }
}
}  // namespace vec
}  // namespace ascendopt

// The unlocated overloads of each family (see ASC_UNLOCATED_OVERLOAD).
#define ASCENDOPT_VEC_BINARY_UNLOCATED(Name)                                                                 \
  ASC_UNLOCATED_OVERLOAD((typename T), (T), void, Name,                                                      \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                          const int32_t& count),                                                             \
                         (dst, src0, src1, count))                                                           \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                    \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                          const uint64_t mask[], const uint8_t repeatTime,                                   \
                          const BinaryRepeatParams& repeatParams),                                           \
                         (dst, src0, src1, mask, repeatTime, repeatParams))                                  \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                    \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                          uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams),  \
                         (dst, src0, src1, mask, repeatTime, repeatParams))
#define ASCENDOPT_VEC_UNARY_UNLOCATED(Name)                                                                  \
  ASC_UNLOCATED_OVERLOAD((typename T), (T), void, Name,                                                      \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count),       \
                         (dst, src, count))                                                                  \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                    \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],       \
                          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams),                  \
                         (dst, src, mask, repeatTime, repeatParams))                                         \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                    \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,               \
                          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams),                  \
                         (dst, src, mask, repeatTime, repeatParams))
#define ASCENDOPT_VEC_SCALAR_UNLOCATED(Name, EXTRA, EXTRA_ARG)                                               \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                    \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,        \
                          const int32_t& count),                                                             \
                         (dst, src, scalarValue, count))                                                     \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                    \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,        \
                          const uint64_t mask[], const uint8_t repeatTime,                                   \
                          const UnaryRepeatParams& repeatParams ASC_STRIP EXTRA),                            \
                         (dst, src, scalarValue, mask, repeatTime, repeatParams ASC_STRIP EXTRA_ARG))                  \
  ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Name,                    \
                         (const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,        \
                          uint64_t mask, const uint8_t repeatTime,                                           \
                          const UnaryRepeatParams& repeatParams ASC_STRIP EXTRA),                            \
                         (dst, src, scalarValue, mask, repeatTime, repeatParams ASC_STRIP EXTRA_ARG))

// ---- wrapper generators -------------------------------------------------------
// dst = f(src0, src1): count form + bit-mask and continuous-mask forms.
#define ASCENDOPT_VEC_BINARY(Name, CODE)                                                                     \
  template <typename T>                                                                                      \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,        \
                   const int32_t& count, ASC_LOC) {                                                          \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src0.desc_;                                                                                    \
    op.src1 = src1.desc_;                                                                                    \
    ::ascendopt::vec::count_form(op, count, true);                                                           \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                          \
  template <typename T, bool isSetMask = true>                                                               \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,        \
                   const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams,  \
                   ASC_LOC) {                                                                                \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src0.desc_;                                                                                    \
    op.src1 = src1.desc_;                                                                                    \
    ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);                                 \
    ::ascendopt::vec::strides(op, repeatParams);                                                             \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                          \
  template <typename T, bool isSetMask = true>                                                               \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,        \
                   uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, ASC_LOC) { \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src0.desc_;                                                                                    \
    op.src1 = src1.desc_;                                                                                    \
    ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);                                            \
    ::ascendopt::vec::strides(op, repeatParams);                                                             \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                            \
  ASCENDOPT_VEC_BINARY_UNLOCATED(Name)

// dst = f(src): count form + mask forms with UnaryRepeatParams.
#define ASCENDOPT_VEC_UNARY(Name, CODE)                                                                      \
  template <typename T>                                                                                      \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, ASC_LOC) {    \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src.desc_;                                                                                     \
    ::ascendopt::vec::count_form(op, count, true);                                                           \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                          \
  template <typename T, bool isSetMask = true>                                                               \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],              \
                   const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {               \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src.desc_;                                                                                     \
    ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);                                 \
    ::ascendopt::vec::strides(op, repeatParams);                                                             \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                          \
  template <typename T, bool isSetMask = true>                                                               \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,                      \
                   const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {               \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src.desc_;                                                                                     \
    ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);                                            \
    ::ascendopt::vec::strides(op, repeatParams);                                                             \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                            \
  ASCENDOPT_VEC_UNARY_UNLOCATED(Name)

// dst = f(src, scalar): count form (with isSetMask) + mask forms. EXTRA is
// an extra trailing parameter declaration of the mask forms (ShiftRight's
// roundEn) and SETP stores it into the op.
#define ASCENDOPT_VEC_SCALAR_EX(Name, CODE, EXTRA, SETP, EXTRA_ARG)                                                   \
  template <typename T, bool isSetMask = true>                                                               \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,               \
                   const int32_t& count, ASC_LOC) {                                                          \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src.desc_;                                                                                     \
    ::ascendopt::vec::scalar(op, scalarValue);                                                               \
    ::ascendopt::vec::count_form(op, count, isSetMask);                                                      \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                          \
  template <typename T, bool isSetMask = true>                                                               \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,               \
                   const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams    \
                   EXTRA, ASC_LOC) {                                                                         \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src.desc_;                                                                                     \
    ::ascendopt::vec::scalar(op, scalarValue);                                                               \
    ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);                                 \
    ::ascendopt::vec::strides(op, repeatParams);                                                             \
    SETP;                                                                                                    \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                          \
  template <typename T, bool isSetMask = true>                                                               \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,               \
                   uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams EXTRA,     \
                   ASC_LOC) {                                                                                \
    AscVecOp op = ::ascendopt::vec::make(CODE, ::ascendopt::dtype_of<T>(), loc_);                            \
    op.dst = dst.desc_;                                                                                      \
    op.src0 = src.desc_;                                                                                     \
    ::ascendopt::vec::scalar(op, scalarValue);                                                               \
    ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);                                            \
    ::ascendopt::vec::strides(op, repeatParams);                                                             \
    SETP;                                                                                                    \
    ::ascendopt::vec::issue(op);                                                                             \
  }                                                                                                            \
  ASCENDOPT_VEC_SCALAR_UNLOCATED(Name, (EXTRA), (EXTRA_ARG))

#define ASCENDOPT_VEC_NOTHING
#define ASCENDOPT_VEC_COMMA ,
#define ASCENDOPT_VEC_SCALAR(Name, CODE) \
  ASCENDOPT_VEC_SCALAR_EX(Name, CODE, ASCENDOPT_VEC_NOTHING, (void)0, ASCENDOPT_VEC_NOTHING)

namespace AscendC {

// ---- mask state (6.2.3.3.11) -----------------------------------------------
inline void SetMaskCount(ASC_LOC) { ASC_RT->sync(ASC_SYNC_MASK_COUNT, 0, 0, loc_.c()); }
inline void SetMaskNorm(ASC_LOC) { ASC_RT->sync(ASC_SYNC_MASK_NORM, 0, 0, loc_.c()); }
inline void ResetMask(ASC_LOC) { ASC_RT->sync(ASC_SYNC_RESET_MASK, 0, 0, loc_.c()); }

// Normal mode: bit mask (high 64 lanes, low 64 lanes). Counter mode:
// maskLow is the element count, maskHigh must be 0.
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow, ASC_LOC) {
  ASC_RT->set_vector_mask(::ascendopt::dtype_of<T>(), maskHigh, maskLow, loc_.c());
}

// Normal mode: the first `len` lanes (continuous mask). Counter mode: the
// element count.
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len, ASC_LOC) {
  uint64_t hi = 0;
  uint64_t lo = 0;
  if (mode == MaskMode::COUNTER) {
    lo = (uint64_t)(int64_t)len;
  } else if (len > 0) {
    lo = len >= 64 ? ~0ull : ((1ull << len) - 1);
    hi = len >= 128 ? ~0ull : (len > 64 ? ((1ull << (len - 64)) - 1) : 0);
  }
  ASC_RT->set_vector_mask(::ascendopt::dtype_of<T>(), hi, lo, loc_.c());
}

// ---- quantisation setting (6.2.3.3.12.1): scale of an int32 -> half Cast ----
inline void SetDeqScale(half scale) {
  ::ascendopt::g_deq_scale_bits = scale.bits_;
  ::ascendopt::g_deq_scale_set = true;
}

// ---- binary ----------------------------------------------------------------
ASCENDOPT_VEC_BINARY(Add, ASC_VOP_ADD)
ASCENDOPT_VEC_BINARY(Sub, ASC_VOP_SUB)
ASCENDOPT_VEC_BINARY(Mul, ASC_VOP_MUL)
ASCENDOPT_VEC_BINARY(Div, ASC_VOP_DIV)
ASCENDOPT_VEC_BINARY(Max, ASC_VOP_MAX)
ASCENDOPT_VEC_BINARY(Min, ASC_VOP_MIN)
ASCENDOPT_VEC_BINARY(And, ASC_VOP_AND)
ASCENDOPT_VEC_BINARY(Or, ASC_VOP_OR)
ASCENDOPT_VEC_BINARY(AddRelu, ASC_VOP_ADD_RELU)
ASCENDOPT_VEC_BINARY(SubRelu, ASC_VOP_SUB_RELU)
// dst = src0 * dst + src1
ASCENDOPT_VEC_BINARY(FusedMulAdd, ASC_VOP_FUSED_MUL_ADD)

// dst = src0 * src1 + dst; the sources may be half with a float dst.
template <typename T, typename U>
inline void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,
                      const int32_t& count, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_MUL_ADD_DST, ::ascendopt::dtype_of<T>(), loc_);
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.dst = dst.desc_;
  op.src0 = src0.desc_;
  op.src1 = src1.desc_;
  ::ascendopt::vec::count_form(op, count, true);
  ::ascendopt::vec::issue(op);
}
template <typename T, typename U, bool isSetMask = true>
inline void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,
                      const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams,
                      ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_MUL_ADD_DST, ::ascendopt::dtype_of<T>(), loc_);
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.dst = dst.desc_;
  op.src0 = src0.desc_;
  op.src1 = src1.desc_;
  ::ascendopt::vec::bits_form(op, mask, sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U), repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}
template <typename T, typename U, bool isSetMask = true>
inline void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,
                      uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_MUL_ADD_DST, ::ascendopt::dtype_of<T>(), loc_);
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.dst = dst.desc_;
  op.src0 = src0.desc_;
  op.src1 = src1.desc_;
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

// ---- unary -----------------------------------------------------------------
ASCENDOPT_VEC_UNARY(Exp, ASC_VOP_EXP)
ASCENDOPT_VEC_UNARY(Ln, ASC_VOP_LN)
ASCENDOPT_VEC_UNARY(Abs, ASC_VOP_ABS)
ASCENDOPT_VEC_UNARY(Reciprocal, ASC_VOP_RECIPROCAL)
ASCENDOPT_VEC_UNARY(Sqrt, ASC_VOP_SQRT)
ASCENDOPT_VEC_UNARY(Rsqrt, ASC_VOP_RSQRT)
ASCENDOPT_VEC_UNARY(Relu, ASC_VOP_RELU)
ASCENDOPT_VEC_UNARY(Not, ASC_VOP_NOT)

// Neg has only the count form in the guide.
template <typename T>
inline void Neg(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_NEG, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  ::ascendopt::vec::count_form(op, (int64_t)count, true);
  ::ascendopt::vec::issue(op);
}

// ---- vector-scalar -----------------------------------------------------------
ASCENDOPT_VEC_SCALAR(Adds, ASC_VOP_ADDS)
ASCENDOPT_VEC_SCALAR(Muls, ASC_VOP_MULS)
ASCENDOPT_VEC_SCALAR(Maxs, ASC_VOP_MAXS)
ASCENDOPT_VEC_SCALAR(Mins, ASC_VOP_MINS)
ASCENDOPT_VEC_SCALAR(Subs, ASC_VOP_SUBS)
ASCENDOPT_VEC_SCALAR(Divs, ASC_VOP_DIVS)
// dst = src >= 0 ? src : src * scalarValue
ASCENDOPT_VEC_SCALAR(LeakyRelu, ASC_VOP_LEAKY_RELU)
ASCENDOPT_VEC_SCALAR(ShiftLeft, ASC_VOP_SHIFT_LEFT)
// roundEn adds the last bit shifted out (signed types).
ASCENDOPT_VEC_SCALAR_EX(ShiftRight, ASC_VOP_SHIFT_RIGHT, ASCENDOPT_VEC_COMMA bool roundEn = false,
                        op.p[0] = roundEn ? 1u : 0u, ASCENDOPT_VEC_COMMA roundEn)

// dst += scalarValue * src; src and the scalar may be half with a float dst.
template <typename T, typename U>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, const int32_t& count,
                 ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_AXPY, ::ascendopt::dtype_of<T>(), loc_);
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  ::ascendopt::vec::scalar(op, scalarValue);
  ::ascendopt::vec::count_form(op, count, true);
  ::ascendopt::vec::issue(op);
}
template <typename T, typename U, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, const uint64_t mask[],
                 const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_AXPY, ::ascendopt::dtype_of<T>(), loc_);
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  ::ascendopt::vec::scalar(op, scalarValue);
  ::ascendopt::vec::bits_form(op, mask, sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U), repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}
template <typename T, typename U, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, uint64_t mask,
                 const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_AXPY, ::ascendopt::dtype_of<T>(), loc_);
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  ::ascendopt::vec::scalar(op, scalarValue);
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

// ---- Duplicate (6.2.3.3.8.1) ---------------------------------------------------
template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_DUPLICATE, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  ::ascendopt::vec::scalar(op, scalarValue);
  ::ascendopt::vec::count_form(op, count, true);
  ::ascendopt::vec::issue(op);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[],
                      const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride,
                      ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_DUPLICATE, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  ::ascendopt::vec::scalar(op, scalarValue);
  ::ascendopt::vec::bits_form(op, mask, sizeof(T), repeatTime, isSetMask);
  op.dst_blk = dstBlockStride;
  op.dst_rep = dstRepeatStride;
  ::ascendopt::vec::issue(op);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_DUPLICATE, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  ::ascendopt::vec::scalar(op, scalarValue);
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  op.dst_blk = dstBlockStride;
  op.dst_rep = dstRepeatStride;
  ::ascendopt::vec::issue(op);
}

// ---- Cast (6.2.3.3.5.1): T = dst type, U = src type -------------------------------
namespace detail {
template <typename T, typename U>
inline AscVecOp cast_op(const LocalTensor<T>& dst, const LocalTensor<U>& src, RoundMode roundMode,
                        const ::ascendopt::Loc& loc) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_CAST, ::ascendopt::dtype_of<T>(), loc);
  op.src_dtype = ::ascendopt::dtype_of<U>();
  op.round = (uint8_t)roundMode;
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  if (::ascendopt::g_deq_scale_set) {
    op.scalar_bits = ::ascendopt::g_deq_scale_bits;
    op.scalar_dtype = ASC_DT_F16;
  }
  return op;
}
}  // namespace detail

template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint32_t count, ASC_LOC) {
  AscVecOp op = detail::cast_op(dst, src, roundMode, loc_);
  ::ascendopt::vec::count_form(op, (int64_t)count, true);
  ::ascendopt::vec::issue(op);
}
template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = detail::cast_op(dst, src, roundMode, loc_);
  ::ascendopt::vec::bits_form(op, mask, sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U), repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}
template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, ASC_LOC) {
  AscVecOp op = detail::cast_op(dst, src, roundMode, loc_);
  ::ascendopt::vec::cont_form(op, mask, repeatTime, isSetMask);
  ::ascendopt::vec::strides(op, repeatParams);
  ::ascendopt::vec::issue(op);
}

// ---- unlocated overloads (see ASC_UNLOCATED_OVERLOAD) ----------------------------------
ASC_UNLOCATED_OVERLOAD((typename T, typename U), (T, U), void, MulAddDst,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,
                        const int32_t& count),
                       (dst, src0, src1, count))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, MulAddDst,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,
                        const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams),
                       (dst, src0, src1, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, MulAddDst,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,
                        uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams),
                       (dst, src0, src1, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T), (T), void, Neg,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count), (dst, src, count))
ASC_UNLOCATED_OVERLOAD((typename T, typename U), (T, U), void, Axpy,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                        const int32_t& count),
                       (dst, src, scalarValue, count))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Axpy,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                        const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams),
                       (dst, src, scalarValue, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Axpy,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, uint64_t mask,
                        const uint8_t repeatTime, const UnaryRepeatParams& repeatParams),
                       (dst, src, scalarValue, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T), (T), void, Duplicate,
                       (const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count),
                       (dst, scalarValue, count))
ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Duplicate,
                       (const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[],
                        const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride),
                       (dst, scalarValue, mask, repeatTime, dstBlockStride, dstRepeatStride))
ASC_UNLOCATED_OVERLOAD((typename T, bool isSetMask = true), (T, isSetMask), void, Duplicate,
                       (const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
                        const uint16_t dstBlockStride, const uint8_t dstRepeatStride),
                       (dst, scalarValue, mask, repeatTime, dstBlockStride, dstRepeatStride))
ASC_UNLOCATED_OVERLOAD((typename T, typename U), (T, U), void, Cast,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                        const uint32_t count),
                       (dst, src, roundMode, count))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Cast,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                        const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams),
                       (dst, src, roundMode, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, typename U, bool isSetMask = true), (T, U, isSetMask), void, Cast,
                       (const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                        const uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams),
                       (dst, src, roundMode, mask, repeatTime, repeatParams))
ASC_UNLOCATED_OVERLOAD((typename T, MaskMode mode = MaskMode::NORMAL), (T, mode), void, SetVectorMask,
                       (const uint64_t maskHigh, const uint64_t maskLow), (maskHigh, maskLow))
ASC_UNLOCATED_OVERLOAD((typename T, MaskMode mode = MaskMode::NORMAL), (T, mode), void, SetVectorMask,
                       (int32_t len), (len))

// ---- whole-tensor operators: `dst = src0 + src1` (count = dst's size) ------------
namespace detail {
enum class TensorBinOp : uint8_t { Add, Sub, Mul, Div, And, Or };
template <class T, TensorBinOp OP>
struct TensorBinExpr {
  using ascendopt_tensor_expr = void;
  LocalTensor<T> a;
  LocalTensor<T> b;
  // The operator has no call site of its own to report: a fault names the
  // API without a location.
  void assign_to(const LocalTensor<T>& dst) const {
    const int32_t n = (int32_t)dst.GetSize();
    const ::ascendopt::Loc loc = ::ascendopt::Loc::none();
    switch (OP) {
      case TensorBinOp::Add: Add(dst, a, b, n, loc); break;
      case TensorBinOp::Sub: Sub(dst, a, b, n, loc); break;
      case TensorBinOp::Mul: Mul(dst, a, b, n, loc); break;
      case TensorBinOp::Div: Div(dst, a, b, n, loc); break;
      case TensorBinOp::And: And(dst, a, b, n, loc); break;
      case TensorBinOp::Or: Or(dst, a, b, n, loc); break;
    }
  }
};
}  // namespace detail

#define ASCENDOPT_TENSOR_BIN_OP(SYM, OP)                                                              \
  template <class T>                                                                                 \
  inline detail::TensorBinExpr<T, detail::TensorBinOp::OP> operator SYM(const LocalTensor<T>& a,      \
                                                                       const LocalTensor<T>& b) {     \
    return {a, b};                                                                                   \
  }
ASCENDOPT_TENSOR_BIN_OP(+, Add)
ASCENDOPT_TENSOR_BIN_OP(-, Sub)
ASCENDOPT_TENSOR_BIN_OP(*, Mul)
ASCENDOPT_TENSOR_BIN_OP(/, Div)
ASCENDOPT_TENSOR_BIN_OP(&, And)
ASCENDOPT_TENSOR_BIN_OP(|, Or)
#undef ASCENDOPT_TENSOR_BIN_OP

template <class T>
template <class Expr, class>
inline LocalTensor<T>& LocalTensor<T>::operator=(const Expr& e) {
  e.assign_to(*this);
  return *this;
}

}  // namespace AscendC

// The device compiler's intrinsics of the mask state, which kernels call
// directly: the same state as SetMaskCount / SetMaskNorm / SetVectorMask.
inline void set_mask_count(ASC_LOC) { ASC_RT->sync(ASC_SYNC_MASK_COUNT, 0, 0, loc_.c()); }
inline void set_mask_norm(ASC_LOC) { ASC_RT->sync(ASC_SYNC_MASK_NORM, 0, 0, loc_.c()); }
inline void set_vector_mask(uint64_t maskHigh, uint64_t maskLow, ASC_LOC) {
  ASC_RT->set_vector_mask(ASC_DT_NONE, maskHigh, maskLow, loc_.c());
}

#undef ASCENDOPT_VEC_BINARY
#undef ASCENDOPT_VEC_BINARY_UNLOCATED
#undef ASCENDOPT_VEC_UNARY_UNLOCATED
#undef ASCENDOPT_VEC_SCALAR_UNLOCATED
#undef ASCENDOPT_VEC_UNARY
#undef ASCENDOPT_VEC_SCALAR_EX
#undef ASCENDOPT_VEC_SCALAR
#undef ASCENDOPT_VEC_NOTHING
#undef ASCENDOPT_VEC_COMMA

#endif
