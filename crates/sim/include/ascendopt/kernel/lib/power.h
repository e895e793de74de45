// ascendopt AscendC emulation, high-level API library: Power (guide
// 6.2.4.1.8), x^y for tensor^tensor, tensor^scalar and scalar^tensor, in
// half, float (exp(y ln|x|), the guide's INTRINSIC formula, with the signs
// and special cases of C's pow) and int32 (square and multiply).
//
// Float semantics: |x|^y = exp(y ln|x|); a negative x gives (-1)^y |x|^y
// for an integral y and NaN otherwise; y = 0 or x = 1 gives 1 (NaN
// included); 0^y is 0 for y > 0 and inf for y < 0. Error: the exp/ln form
// loses |y ln x| * 2^-24 relatively (1e-5 at |y ln x| = 88, where the result
// overflows); err 2.4e-7 for |y ln x| < 1.
// Int32: y < 0 gives 0 (the integer result of x^y for |x| > 1); products
// wrap like int32 multiplication.
#ifndef ASCENDOPT_KERNEL_LIB_POWER_H
#define ASCENDOPT_KERNEL_LIB_POWER_H

#include "common.h"

namespace AscendC {
// Atlas 350 only; accepted on A2.
enum class PowerAlgo { INTRINSIC = 0, DOUBLE_FLOAT_TECH };
struct PowerConfig {
  PowerAlgo algo = PowerAlgo::INTRINSIC;
};
inline constexpr PowerConfig defaultPowerConfig = {};
}  // namespace AscendC

namespace ascendopt {
namespace lib {

// Which operand is a scalar.
enum class PowForm { TensorTensor, TensorScalar, ScalarTensor };

// Float x^y over float arrays b, e (copies of the operands) into out
// (written by the last instruction). 21 instructions.
template <class O>
inline void pow_general(const O& o, const V& out, const V& b, const V& e, const Work& w) {
  const V r = at(w.node[2], 0, o.n), t = at(w.node[3], 0, o.n), s = at(w.node[4], 0, o.n);
  const Mask& m0 = w.mask[0];
  const Mask& m1 = w.mask[1];
  o.abs(t, b);
  o.ln(t, t);
  o.mul(t, t, e);
  o.exp(r, t);  // |b|^e
  // y integral: trunc(y) == y; (-1)^y = 1 - 4 (y/2 - floor(y/2)), exact.
  o.round(t, e, AscendC::RoundMode::CAST_TRUNC);
  AscendC::Compare(m1, t, e, AscendC::CMPMODE::EQ, o.n_cmp(), o.loc);
  o.muls(t, e, 0.5f);
  o.round(s, t, AscendC::RoundMode::CAST_FLOOR);
  o.sub(t, t, s);
  o.muls(t, t, -4.0f);
  o.adds(s, t, 1.0f);
  o.mul(t, r, s);
  o.sels(t, m1, t, __builtin_nanf(""));  // negative base
  o.cmps(m0, b, 0.0f, AscendC::CMPMODE::LT);
  o.sel(r, m0, t, r);
  o.cmps(m1, e, 0.0f, AscendC::CMPMODE::NE);
  o.sels(r, m1, r, 1.0f);  // y = 0
  o.cmps(m1, b, 1.0f, AscendC::CMPMODE::NE);
  o.sels(out, m1, r, 1.0f);  // x = 1
}

// Float x^y with a scalar y: the sign handling is decided on the scalar
// unit. 4 to 9 instructions.
template <class O>
inline void pow_scalar_exp(const O& o, const V& out, const V& b, float y, const Work& w) {
  const V r = at(w.node[2], 0, o.n), t = at(w.node[3], 0, o.n);
  const Mask& m0 = w.mask[0];
  if (y == 0.0f) {
    o.dup(out, 1.0f);
    return;
  }
  o.abs(t, b);
  o.ln(t, t);
  o.muls(t, t, y);
  const bool finite = y - y == 0.0f;
  const bool integral = finite && __builtin_truncf(y) == y;
  const bool odd = integral && __builtin_fabsf(y) < 16777216.0f && ((int64_t)y % 2 != 0);
  const V& last = finite ? out : r;
  if (integral && !odd) {
    o.exp(last, t);
  } else if (odd) {
    o.exp(r, t);
    o.muls(t, r, -1.0f);
    o.cmps(m0, b, 0.0f, AscendC::CMPMODE::LT);
    o.sel(last, m0, t, r);
  } else {
    o.exp(r, t);
    o.cmps(m0, b, 0.0f, AscendC::CMPMODE::GE);
    o.sels(last, m0, r, __builtin_nanf(""));
  }
  if (!finite) {
    o.cmps(m0, b, 1.0f, AscendC::CMPMODE::NE);
    o.sels(out, m0, last, 1.0f);
  }
}

// int32 x^y by square and multiply over `bits` exponent bits; arrays:
// result, base, exponent, two scratch. 8 instructions per bit.
template <class I>
inline void pow_int(const LocalTensor<I>& out, const LocalTensor<I>& b, const LocalTensor<I>& e,
                    const LocalTensor<I>& r, const LocalTensor<I>& h, const LocalTensor<I>& t, const LocalTensor<I>& u,
                    int bits, int32_t n, const Loc& loc) {
  AscendC::Duplicate(r, (I)1, n, loc);
  LocalTensor<I> cur = e, next = h;
  for (int i = 0; i < bits; ++i) {
    AscendC::ShiftRight(next, cur, (I)1, n, loc);
    AscendC::Muls(t, next, (I)-2, n, loc);
    AscendC::Add(t, t, cur, n, loc);  // bit i of y
    AscendC::Adds(u, b, (I)-1, n, loc);
    AscendC::Mul(u, u, t, n, loc);
    AscendC::Adds(u, u, (I)1, n, loc);  // bit ? x^(2^i) : 1
    AscendC::Mul(r, r, u, n, loc);
    if (i + 1 < bits) AscendC::Mul(b, b, b, n, loc);
    LocalTensor<I> s = cur;
    cur = next;
    next = s;
  }
  // y < 0: the sign bit of the original exponent (still in e's top bits
  // after arithmetic shifts) zeroes the result.
  AscendC::ShiftRight(t, cur, (I)31, n, loc);  // -1 for y < 0, else 0
  AscendC::Mul(t, r, t, n, loc);
  AscendC::Add(out, r, t, n, loc);
}

// The Power driver: operands as tensors or scalars (one of them a tensor).
template <class T>
inline void power(PowForm form, const LocalTensor<T>& dst, const LocalTensor<T>* src0, T scalar0,
                  const LocalTensor<T>* src1, T scalar1, const LocalTensor<uint8_t>* shared, uint32_t count,
                  const Loc& loc) {
  static_assert(is_float_type<T>() || std::is_same<T, int32_t>::value,
                "Power takes half, float or int32_t tensors on Atlas A2 (guide 6.2.4.1.8)");
  if (count == 0) return;
  constexpr bool kInt = std::is_same<T, int32_t>::value;
  const TmpLayout layout = power_layout(sizeof(T), kInt);
  Span operands[3] = {span_of(dst, count, "dstTensor"), Span{0, 0, 0, ""}, Span{0, 0, 0, ""}};
  int n_ops = 1;
  if (src0 != nullptr) operands[n_ops++] = span_of(*src0, count, "src0Tensor");
  if (src1 != nullptr) operands[n_ops++] = span_of(*src1, count, "src1Tensor");
  Work w = carve("Power", layout, sizeof(T), tmp_of(shared, loc), count, operands, n_ops, loc);
  for_chunks(count, w.chunk, [&](uint32_t off, int32_t n) {
    if constexpr (kInt) {
      auto node = [&](int i) {
        LocalTensor<int32_t> t = w.node[i].template ReinterpretCast<int32_t>();
        t.desc_.elems = (uint32_t)n;
        return t;
      };
      const LocalTensor<int32_t> b = node(0), e = node(1), r = node(2), h = node(3), t = node(4), u = node(5);
      if (src0 != nullptr) {
        AscendC::Muls(b, (*src0)[off], (int32_t)1, n, loc);
      } else {
        AscendC::Duplicate(b, scalar0, n, loc);
      }
      int bits = 31;
      if (src1 != nullptr) {
        AscendC::Muls(e, (*src1)[off], (int32_t)1, n, loc);
      } else {
        AscendC::Duplicate(e, scalar1, n, loc);
        bits = 1;
        for (int32_t y = scalar1 > 0 ? scalar1 : 0; y > 1; y >>= 1) ++bits;
      }
      pow_int(dst[off], b, e, r, h, t, u, bits, n, loc);
    } else {
      Ops o{n, loc};
      const V b = at(w.node[0], 0, n), e = at(w.node[1], 0, n);
      auto load = [&](const V& d, const LocalTensor<T>* src, T scalar) {
        if (src == nullptr) {
          o.dup(d, (float)scalar);
        } else if constexpr (sizeof(T) == 2) {
          AscendC::Cast(d, (*src)[off], AscendC::RoundMode::CAST_NONE, (uint32_t)n, loc);
        } else {
          o.copy(d, (*src)[off]);
        }
      };
      load(b, src0, scalar0);
      const bool scalar_exp = form == PowForm::TensorScalar;
      if (!scalar_exp) load(e, src1, scalar1);
      V out;
      if constexpr (sizeof(T) == 2) {
        out = at(w.node[2], 0, n);
      } else {
        out = at(dst, off, n);
      }
      if (scalar_exp) {
        pow_scalar_exp(o, out, b, (float)scalar1, w);
      } else {
        pow_general(o, out, b, e, w);
      }
      if constexpr (sizeof(T) == 2) AscendC::Cast(dst[off], out, AscendC::RoundMode::CAST_RINT, (uint32_t)n, loc);
    }
  });
}

}  // namespace lib
}  // namespace ascendopt

namespace AscendC {

#define ASCENDOPT_POWER_TPARAMS typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig
#define ASCENDOPT_POWER_TT(TMP, COUNT)                                                                           \
  ::ascendopt::lib::power(::ascendopt::lib::PowForm::TensorTensor, dstTensor, &src0Tensor, T(), &src1Tensor, T(), \
                          TMP, COUNT, loc_)
#define ASCENDOPT_POWER_TS(TMP, COUNT)                                                                           \
  ::ascendopt::lib::power(::ascendopt::lib::PowForm::TensorScalar, dstTensor, &src0Tensor, T(),                   \
                          (const LocalTensor<T>*)nullptr, src1Scalar, TMP, COUNT, loc_)
#define ASCENDOPT_POWER_ST(TMP, COUNT)                                                                           \
  ::ascendopt::lib::power(::ascendopt::lib::PowForm::ScalarTensor, dstTensor, (const LocalTensor<T>*)nullptr,     \
                          src0Scalar, &src1Tensor, T(), TMP, COUNT, loc_)
#define ASCENDOPT_NO_TMP (const LocalTensor<uint8_t>*)nullptr

// Power(dstTensor, src0Tensor, src1Tensor)
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, ASC_LOC) {
  ASCENDOPT_POWER_TT(&sharedTmpBuffer, calCount);
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, ASC_LOC) {
  ASCENDOPT_POWER_TT(&sharedTmpBuffer, src0Tensor.GetSize());
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                  uint32_t calCount, ASC_LOC) {
  ASCENDOPT_POWER_TT(ASCENDOPT_NO_TMP, calCount);
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                  ASC_LOC) {
  ASCENDOPT_POWER_TT(ASCENDOPT_NO_TMP, src0Tensor.GetSize());
}
// Power(dstTensor, src0Tensor, src1Scalar)
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, ASC_LOC) {
  ASCENDOPT_POWER_TS(&sharedTmpBuffer, calCount);
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, ASC_LOC) {
  ASCENDOPT_POWER_TS(&sharedTmpBuffer, src0Tensor.GetSize());
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                  uint32_t calCount, ASC_LOC) {
  ASCENDOPT_POWER_TS(ASCENDOPT_NO_TMP, calCount);
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar, ASC_LOC) {
  ASCENDOPT_POWER_TS(ASCENDOPT_NO_TMP, src0Tensor.GetSize());
}
// Power(dstTensor, src0Scalar, src1Tensor)
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, ASC_LOC) {
  ASCENDOPT_POWER_ST(&sharedTmpBuffer, calCount);
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, ASC_LOC) {
  ASCENDOPT_POWER_ST(&sharedTmpBuffer, src1Tensor.GetSize());
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                  uint32_t calCount, ASC_LOC) {
  ASCENDOPT_POWER_ST(ASCENDOPT_NO_TMP, calCount);
}
template <ASCENDOPT_POWER_TPARAMS>
inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor, ASC_LOC) {
  ASCENDOPT_POWER_ST(ASCENDOPT_NO_TMP, src1Tensor.GetSize());
}

#undef ASCENDOPT_POWER_TPARAMS
#undef ASCENDOPT_POWER_TT
#undef ASCENDOPT_POWER_TS
#undef ASCENDOPT_POWER_ST
#undef ASCENDOPT_NO_TMP

}  // namespace AscendC

#endif
