// ascendopt AscendC emulation, high-level API library: the element-wise math
// functions of guide 6.2.4.1 (Tanh, Asin, Sin, Acos, Cos, Log/Log2/Log10,
// Atan, Sinh, Cosh, Tan, Trunc, Frac, Erf, Erfc, Sign, Floor, Ceil, Round,
// Axpy, Exp) and Sigmoid (6.2.4.3.9), with every documented overload
// (sharedTmpBuffer or framework temporary space, calCount or the whole
// source) and template parameters (isReuseSource, which is reserved, and
// the config structs; the configs only choose algorithms on the Atlas 350,
// so on A2 they are accepted and change nothing).
//
// Each function is a sequence of basic vector instructions in float work
// arrays (see common.h; a half source is cast to float first and the result
// cast back with rounding to nearest even). The algorithms are our own,
// written from the documented formulas; the polynomial coefficients are our
// own fits (weighted least squares on Chebyshev nodes). Accuracy, measured
// in float32 against long double over the sweeps named (2e6 points each,
// uniform plus a log-spread of small magnitudes): "err" is the largest of
// min(|abs error|, |rel error|), the quantity the correctness check bounds
// (an element fails only when both exceed the tolerance). Half results add
// at most the final rounding (2^-11 relative).
//
// Attribution: every instruction carries the API's call site.
#ifndef ASCENDOPT_KERNEL_LIB_MATH_H
#define ASCENDOPT_KERNEL_LIB_MATH_H

#include "common.h"

namespace AscendC {

// ---- config types (guide 6.2.4.1; Atlas 350 only, accepted on A2) --------------
enum class TanhAlgo { INTRINSIC = 0, SUBSECTION_COMPENSATION };
struct TanhConfig {
  TanhAlgo algo = TanhAlgo::INTRINSIC;
};
inline constexpr TanhConfig DEFAULT_TANH_CONFIG = {};
enum class SinAlgo { POLYNOMIAL_APPROXIMATION = 0, RADIAN_REDUCTION };
struct SinConfig {
  SinAlgo algo = SinAlgo::POLYNOMIAL_APPROXIMATION;
};
inline constexpr SinConfig defaultSinConfig = {};
enum class CosAlgo { POLYNOMIAL_APPROXIMATION = 0, RADIAN_REDUCTION };
struct CosConfig {
  CosAlgo algo = CosAlgo::POLYNOMIAL_APPROXIMATION;
};
inline constexpr CosConfig defaultCosConfig = {};
enum class AtanAlgo { TAYLOR_EXPANSION = 0, POLYNOMIAL_APPROXIMATION };
struct AtanConfig {
  AtanAlgo algo = AtanAlgo::TAYLOR_EXPANSION;
};
inline constexpr AtanConfig defaultAtanConfig = {};
enum class ErfAlgo { PADE_APPROXIMATION = 0, SUBSECTION_POLYNOMIAL_APPROXIMATION };
struct ErfConfig {
  ErfAlgo algo = ErfAlgo::PADE_APPROXIMATION;
};
inline constexpr ErfConfig defaultErfConfig = {};
struct FmaConfig {
  bool isReuseSource;
};
inline constexpr FmaConfig DEFAULT_FMA_CONFIG = {false};

}  // namespace AscendC

namespace ascendopt {
namespace lib {
namespace k {
// pi and pi/2 in parts: P1..P3 have 8 significant bits, so k * Pi is exact
// for |k| < 2^16 (|x| <= 65504, the documented range of Sin/Cos/Tan), and
// P1 + P2 + P3 + P4 is pi to 48 bits (Cody-Waite reduction).
constexpr float kPi1 = 3.140625f;
constexpr float kPi2 = 9.651184082e-04f;
constexpr float kPi3 = 2.533197403e-06f;
constexpr float kPi4 = 1.984187259e-09f;
constexpr float kInvPi = 0.318309886183790671f;
constexpr float kTwoOverPi = 0.636619772367581343f;
constexpr float kHalfPi = 1.57079632679489662f;
constexpr float kQuarterPi = 0.785398163397448310f;
constexpr float kPi = 3.14159265358979324f;
// sin r = r + r^3 S(r^2) on |r| <= pi/2 (weighted error 6e-9).
constexpr float kSinS[4] = {2.605780310e-06f, -1.980960224e-04f, 8.333066478e-03f, -1.666665971e-01f};
// cos r = 1 + r^2 C(r^2) on |r| <= pi/2 (1.1e-9).
constexpr float kCosC[5] = {-2.584254162e-07f, 2.474706525e-05f, -1.388807665e-03f, 4.166661203e-02f,
                            -5.000000000e-01f};
// asin s = s + s z P(z), z = s^2 <= 1/4 (4.8e-9).
constexpr float kAsinP[5] = {4.216628522e-02f, 2.417952567e-02f, 4.547037557e-02f, 7.495297492e-02f,
                             1.666675210e-01f};
// atan t = t + t z A(z), z = t^2, |t| <= tan(pi/8) (2.1e-8).
constexpr float kAtanA[4] = {8.053711802e-02f, -1.387767494e-01f, 1.997770965e-01f, -3.333294988e-01f};
constexpr float kTanPi8 = 0.414213562373095049f;
constexpr float kTan3Pi8 = 2.41421356237309505f;
// erf x = x E(x^2) for |x| < 1 (3.4e-8).
constexpr float kErfE[6] = {-5.660153111e-04f, 4.924789071e-03f, -2.671770751e-02f, 1.128041148e-01f,
                            -3.761235476e-01f, 1.128379107e+00f};
// erfc x = t exp(-x^2 + Q(t)), t = 1 / (1 + x/2), x >= 0 (Q error 7.5e-8).
constexpr float kErfcQ[10] = {1.746979952e-01f,  -8.402635455e-01f, 1.524625063e+00f, -1.174587965e+00f,
                              3.044165075e-01f,  -1.963223070e-01f, 9.910778701e-02f, 3.737980723e-01f,
                              1.000040889e+00f,  -1.265512586e+00f};
// e^|x| / 2 = e^(|x| - L1) * kExpL1Half with L1 = 355/512 (exact in |x| - L1).
constexpr float kL1 = 0.693359375f;
constexpr float kExpL1Half = 1.000212193e+00f;
constexpr float kInvLn2 = 1.44269504088896341f;
constexpr float kInvLn10 = 0.434294481903251828f;
}  // namespace k

// Cody-Waite reduction r = x - m * (pi * scale) with p as scratch; scale is
// 1 or 1/2 (exact on the parts).
template <class O>
inline void reduce_pi(const O& o, const V& r, const V& x, const V& m, const V& p, float scale) {
  o.muls(p, m, k::kPi1 * scale);
  o.sub(r, x, p);
  o.muls(p, m, k::kPi2 * scale);
  o.sub(r, r, p);
  o.muls(p, m, k::kPi3 * scale);
  o.sub(r, r, p);
  o.muls(p, m, k::kPi4 * scale);
  o.sub(r, r, p);
}

// k (integral) -> (-1)^k = 1 - 2k + 4 floor(k/2), exact; t is scratch.
template <class O>
inline void parity_sign(const O& o, const V& k, const V& t) {
  o.muls(t, k, 0.5f);
  o.round(t, t, AscendC::RoundMode::CAST_FLOOR);
  o.muls(t, t, 4.0f);
  o.muls(k, k, -2.0f);
  o.adds(k, k, 1.0f);
  o.add(k, k, t);
}

// p = sin r for |r| <= pi/2; z = r^2 on return.
template <class O>
inline void sin_poly(const O& o, const V& p, const V& r, const V& z) {
  o.mul(z, r, r);
  o.horner(p, z, k::kSinS, 4);
  o.mul(p, p, z);
  o.mul(p, p, r);
  o.add(p, p, r);
}

// asin of a = |x| <= 1 into p, with m0 = (a > 1/2):
//   a <= 1/2: asin a = a + a z P(z), z = a^2;
//   a >  1/2: asin a = pi/2 - 2 asin s, s = sqrt((1 - a)/2).
// Leaves r = asin s (or asin a) in p and s, z as scratch.
template <class O>
inline void asin_core(const O& o, const V& p, const V& a, const V& z, const V& s, const Mask& m0) {
  o.cmps(m0, a, 0.5f, AscendC::CMPMODE::GT);
  o.muls(z, a, -0.5f);
  o.adds(z, z, 0.5f);
  o.mul(p, a, a);
  o.sel(z, m0, z, p);
  o.sqrt(s, z);
  o.sel(s, m0, s, a);
  o.horner(p, z, k::kAsinP, 5);
  o.mul(p, p, z);
  o.mul(p, p, s);
  o.add(p, p, s);
}

// erfc(a) for a = |x| into q (t scratch; a becomes a^2):
// t = 1/(1 + a/2), q = t exp(Q(t) - a^2).
template <class O>
inline void erfc_core(const O& o, const V& q, const V& a, const V& t) {
  o.muls(t, a, 0.5f);
  o.adds(t, t, 1.0f);
  o.recip(t, t);
  o.horner(q, t, k::kErfcQ, 10);
  o.mul(a, a, a);
  o.sub(q, q, a);
  o.exp(q, q);
  o.mul(q, q, t);
}

// ---- the element-wise bodies: (ops, out, x, work) -----------------------------------
// Sigmoid: 1 / (1 + e^-x). 4 instructions.
// err 8.9e-8 on [-100, 100].
struct SigmoidBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V t = at(w.node[0], 0, o.n);
    o.muls(t, x, -1.0f);
    o.exp(t, t);
    o.adds(t, t, 1.0f);
    o.recip(out, t);
  }
};
// Tanh: (e^2x - 1) / (e^2x + 1) with x clamped to [-9.5, 9.5] (the guide's
// INTRINSIC formula). 7 instructions. err 1.3e-7 on [-20, 20]; near 0 the
// error is absolute (1e-7), not relative.
struct TanhBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V t = at(w.node[0], 0, o.n), u = at(w.node[1], 0, o.n);
    o.mins(t, x, 9.5f);
    o.maxs(t, t, -9.5f);
    o.muls(t, t, 2.0f);
    o.exp(t, t);
    o.adds(u, t, -1.0f);
    o.adds(t, t, 1.0f);
    o.div(out, u, t);
  }
};
// Sin: k = rint(x/pi), r = x - k pi (Cody-Waite, 4 parts), sin x =
// (-1)^k sin r with an odd degree-9 polynomial. 27 instructions.
// err 1.2e-7 on [-65504, 65504] (absolute near the zeros of sin).
struct SinBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V kk = at(w.node[0], 0, o.n), r = at(w.node[1], 0, o.n), z = at(w.node[2], 0, o.n),
            p = at(w.node[3], 0, o.n);
    o.muls(kk, x, k::kInvPi);
    o.round(kk, kk, AscendC::RoundMode::CAST_RINT);
    reduce_pi(o, r, x, kk, p, 1.0f);
    parity_sign(o, kk, z);
    sin_poly(o, p, r, z);
    o.mul(out, p, kk);
  }
};
// Cos: k = floor(x/pi), r = x - (k + 1/2) pi, cos x = -(-1)^k sin r.
// 29 instructions. err 1.3e-7 on [-65504, 65504].
struct CosBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V kk = at(w.node[0], 0, o.n), r = at(w.node[1], 0, o.n), z = at(w.node[2], 0, o.n),
            p = at(w.node[3], 0, o.n);
    o.muls(kk, x, k::kInvPi);
    o.round(kk, kk, AscendC::RoundMode::CAST_FLOOR);
    o.adds(z, kk, 0.5f);
    reduce_pi(o, r, x, z, p, 1.0f);
    parity_sign(o, kk, z);
    o.muls(kk, kk, -1.0f);
    sin_poly(o, p, r, z);
    o.mul(out, p, kk);
  }
};
// Tan: k = rint(2x/pi), r = x - k pi/2 in [-pi/4, pi/4], tan x = sin r /
// cos r for even k and -cos r / sin r for odd k. 41 instructions.
// err 2.2e-7 on [-3, 3]; 2e-4 at worst on [-65504, 65504] (the float
// nearest a pole of tan, |tan| ~ 6e7, where the remaining reduction error
// is relative to r ~ 1e-8).
struct TanBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V kk = at(w.node[0], 0, o.n), r = at(w.node[1], 0, o.n), z = at(w.node[2], 0, o.n),
            p = at(w.node[3], 0, o.n);
    o.muls(kk, x, k::kTwoOverPi);
    o.round(kk, kk, AscendC::RoundMode::CAST_RINT);
    reduce_pi(o, r, x, kk, p, 0.5f);
    parity_sign(o, kk, z);
    sin_poly(o, p, r, z);       // p = sin r, z = r^2
    o.horner(r, z, k::kCosC, 5);  // r = cos r
    o.mul(r, r, z);
    o.adds(r, r, 1.0f);
    o.cmps(w.mask[0], kk, 0.0f, AscendC::CMPMODE::GT);  // even k
    o.sel(z, w.mask[0], p, r);
    o.sel(p, w.mask[0], r, p);
    o.div(z, z, p);
    o.mul(out, z, kk);
  }
};
// Asin on [-1, 1] (outside: NaN): see asin_core, then the sign of x.
// 27 instructions. err 1.6e-7.
struct AsinBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V a = at(w.node[0], 0, o.n), z = at(w.node[1], 0, o.n), s = at(w.node[2], 0, o.n),
            p = at(w.node[3], 0, o.n);
    o.abs(a, x);
    asin_core(o, p, a, z, s, w.mask[0]);
    o.muls(s, p, -2.0f);
    o.adds(s, s, k::kHalfPi);
    o.sel(p, w.mask[0], s, p);
    o.sign(a, x);
    o.mul(out, p, a);
  }
};
// Acos on [-1, 1]: with r from asin_core, x >= 0: |x| > 1/2 ? 2r : pi/2 - r;
// x < 0: |x| > 1/2 ? pi - 2r : pi/2 + r. 32 instructions. err 1.4e-7.
struct AcosBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V a = at(w.node[0], 0, o.n), z = at(w.node[1], 0, o.n), s = at(w.node[2], 0, o.n),
            p = at(w.node[3], 0, o.n);
    o.abs(a, x);
    asin_core(o, p, a, z, s, w.mask[0]);
    o.sign(a, x);
    o.mul(s, p, a);
    o.muls(s, s, -1.0f);
    o.adds(s, s, k::kHalfPi);  // pi/2 - sign(x) r
    o.add(z, p, p);            // 2r
    o.cmps(w.mask[1], a, 0.0f, AscendC::CMPMODE::LT);
    o.muls(p, z, -1.0f);
    o.adds(p, p, k::kPi);      // pi - 2r
    o.sel(z, w.mask[1], p, z);
    o.sel(out, w.mask[0], z, s);
  }
};
// Atan: a = |x|; a > tan(3pi/8): pi/2 + atan(-1/a); a > tan(pi/8):
// pi/4 + atan((a-1)/(a+1)); else atan a, with atan t = t + t z A(z); then
// the sign of x. 29 instructions. err 1.2e-7 on [-1e6, 1e6].
struct AtanBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V a = at(w.node[0], 0, o.n), t = at(w.node[1], 0, o.n), z = at(w.node[2], 0, o.n),
            p = at(w.node[3], 0, o.n);
    const Mask& big = w.mask[0];
    const Mask& mid = w.mask[1];
    o.abs(a, x);
    o.cmps(mid, a, k::kTanPi8, AscendC::CMPMODE::GT);
    o.cmps(big, a, k::kTan3Pi8, AscendC::CMPMODE::GT);
    o.adds(t, a, -1.0f);
    o.adds(z, a, 1.0f);
    o.div(t, t, z);
    o.sel(t, mid, t, a);
    o.recip(z, a);
    o.muls(z, z, -1.0f);
    o.sel(t, big, z, t);
    o.mul(z, t, t);
    o.horner(p, z, k::kAtanA, 4);
    o.mul(p, p, z);
    o.mul(p, p, t);
    o.add(p, p, t);
    o.adds(t, p, k::kQuarterPi);
    o.sel(t, mid, t, p);
    o.adds(z, p, k::kHalfPi);
    o.sel(t, big, z, t);
    o.sign(a, x);
    o.mul(out, t, a);
  }
};
// Sinh: |x| < 1/2: x + x^3/6 + x^5/120 + x^7/5040; else
// e^|x|/2 - e^-|x|/2 with e^|x|/2 = e^(|x| - L1) * e^L1/2 (no overflow
// below |x| = 89.4); then the sign of x. 22 instructions.
// err 2.1e-7 on [-89, 89].
struct SinhBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V a = at(w.node[0], 0, o.n), e = at(w.node[1], 0, o.n), p = at(w.node[2], 0, o.n);
    o.abs(a, x);
    o.cmps(w.mask[0], a, 0.5f, AscendC::CMPMODE::LT);
    o.mul(e, a, a);
    o.muls(p, e, 1.0f / 5040.0f);
    o.adds(p, p, 1.0f / 120.0f);
    o.mul(p, p, e);
    o.adds(p, p, 1.0f / 6.0f);
    o.mul(p, p, e);
    o.mul(p, p, a);
    o.add(p, p, a);
    o.adds(e, a, -k::kL1);
    o.exp(e, e);
    o.muls(e, e, k::kExpL1Half);
    o.recip(a, e);
    o.muls(a, a, 0.25f);
    o.sub(e, e, a);
    o.sel(e, w.mask[0], p, e);
    o.sign(a, x);
    o.mul(out, e, a);
  }
};
// Cosh: e^|x|/2 + e^-|x|/2 (as Sinh). 7 instructions. err 2.0e-7 on [-89, 89].
struct CoshBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V a = at(w.node[0], 0, o.n), e = at(w.node[1], 0, o.n);
    o.abs(a, x);
    o.adds(a, a, -k::kL1);
    o.exp(a, a);
    o.muls(a, a, k::kExpL1Half);
    o.recip(e, a);
    o.muls(e, e, 0.25f);
    o.add(out, a, e);
  }
};
// Erfc: erfc |x| = t exp(Q(t) - x^2), t = 1/(1 + |x|/2) (a degree-9 Q of our
// own fit); erfc x = 2 - erfc |x| for x < 0. 31 instructions.
// err 5.6e-7 on [-10, 12]; relative error grows as 2x^2 * 6e-8 for large x
// (7.6e-6 at x = 8, where erfc = 1e-29), the float rounding of x^2.
struct ErfcBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V a = at(w.node[0], 0, o.n), t = at(w.node[1], 0, o.n), q = at(w.node[2], 0, o.n);
    o.copy(a, x);
    o.cmps(w.mask[0], a, 0.0f, AscendC::CMPMODE::LT);
    o.abs(a, a);
    erfc_core(o, q, a, t);
    o.muls(t, q, -1.0f);
    o.adds(t, t, 2.0f);
    o.sel(out, w.mask[0], t, q);
  }
};
// Erf: |x| < 1: x E(x^2) (degree-5 E of our own fit); else
// sign(x) (1 - erfc |x|) as in Erfc. 46 instructions. err 1.2e-7 on [-10, 10].
struct ErfBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V a = at(w.node[0], 0, o.n), t = at(w.node[1], 0, o.n), q = at(w.node[2], 0, o.n);
    o.abs(a, x);
    o.cmps(w.mask[0], a, 1.0f, AscendC::CMPMODE::LT);
    erfc_core(o, q, a, t);  // a = x^2
    o.muls(q, q, -1.0f);
    o.adds(q, q, 1.0f);
    o.sign(t, x);
    o.mul(q, q, t);
    o.horner(t, a, k::kErfE, 6);
    o.mul(t, t, x);
    o.sel(out, w.mask[0], t, q);
  }
};
// Sign: x * 2^150 saturated to [-1, 1] (0 stays 0, NaN stays NaN).
// 4 instructions, exact.
struct SignBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V t = at(w.node[0], 0, o.n);
    o.muls(t, x, 1.2676506002282294e30f);
    o.muls(t, t, 1125899906842624.0f);
    o.mins(t, t, 1.0f);
    o.maxs(out, t, -1.0f);
  }
};
// Exp with a Taylor expansion of `level` terms (the guide's formula):
// e^x = e^floor(x) * sum_{k<=level} f^k / k!, f = x - floor(x), x clamped to
// [-104, 89] (beyond, the result is 0 or inf anyway). 6 + 2 level
// instructions (7 for level 1); level 0 is the Exp instruction. err (level 10) 1.5e-7 on
// [-80, 80]; fewer terms are as accurate as the truncated series.
template <uint8_t kLevel>
struct ExpTaylorBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    if constexpr (kLevel == 0) {
      o.exp(out, x);
    } else {
      const V i = at(w.node[0], 0, o.n), f = at(w.node[1], 0, o.n), p = at(w.node[2], 0, o.n);
      float c[kLevel + 1];
      float fact = 1.0f;
      c[kLevel] = 1.0f;
      for (int j = 1; j <= kLevel; ++j) {
        fact *= (float)j;
        c[kLevel - j] = 1.0f / fact;
      }
      o.mins(f, x, 89.0f);
      o.maxs(f, f, -104.0f);
      o.round(i, f, AscendC::RoundMode::CAST_FLOOR);
      o.sub(f, f, i);
      o.exp(i, i);
      if (kLevel == 1) {
        o.adds(p, f, 1.0f);
      } else {
        o.horner(p, f, c, kLevel + 1);
      }
      o.mul(out, p, i);
    }
  }
};
// Log2 of a half source computed in float: ln x / ln 2. 2 instructions.
struct Log2Body {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work&) const {
    o.ln(out, x);
    o.muls(out, out, k::kInvLn2);
  }
};
// Floor, Ceil, Round (half to even), Trunc: the float -> float Cast with
// that rounding; Frac: x - trunc(x).
template <AscendC::RoundMode kMode>
struct RoundBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work&) const { o.round(out, x, kMode); }
};
struct FracBody {
  template <class O>
  void operator()(const O& o, const V& out, const V& x, const Work& w) const {
    const V t = at(w.node[0], 0, o.n);
    o.round(t, x, AscendC::RoundMode::CAST_TRUNC);
    o.sub(out, x, t);
  }
};

// Log and Log10 in the source type (they take no temporary space).
template <class T>
inline void log_n(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, float scale,
                  const Loc& loc) {
  static_assert(is_float_type<T>(), "Log takes half or float tensors (guide 6.2.4.1.6)");
  if (count == 0) return;
  AscendC::Ln(dst, src, (int32_t)count, loc);
  if (scale != 1.0f) AscendC::Muls(dst, dst, (T)scale, (int32_t)count, loc);
}

}  // namespace lib
}  // namespace ascendopt

// The four documented overloads of an element-wise API: (sharedTmpBuffer,
// calCount), (sharedTmpBuffer), (calCount), (); the forms without calCount
// compute srcTensor.GetSize() elements. Each has an unlocated twin (the
// documented parameters and an empty trailing pack, common.h) so that
// `Sin<half, false>` names a function of the documented type, as real
// kernels pass these APIs as template arguments; ordinary calls keep their
// call site.
#define ASCENDOPT_LIB_UNARY(Name, LAYOUT, BODY, TPARAMS, TARGS)                                            \
  template <typename T, bool isReuseSource = false TPARAMS>                                                \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                       \
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, ASC_LOC) {        \
    ::ascendopt::lib::unary(#Name, ::ascendopt::lib::LAYOUT(sizeof(T)), dstTensor, srcTensor,              \
                            &sharedTmpBuffer, calCount, loc_, BODY{});                                     \
  }                                                                                                        \
  template <typename T, bool isReuseSource = false TPARAMS>                                                \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                       \
                   const LocalTensor<uint8_t>& sharedTmpBuffer, ASC_LOC) {                                 \
    ::ascendopt::lib::unary(#Name, ::ascendopt::lib::LAYOUT(sizeof(T)), dstTensor, srcTensor,              \
                            &sharedTmpBuffer, srcTensor.GetSize(), loc_, BODY{});                          \
  }                                                                                                        \
  template <typename T, bool isReuseSource = false TPARAMS>                                                \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount, \
                   ASC_LOC) {                                                                              \
    ::ascendopt::lib::unary(#Name, ::ascendopt::lib::LAYOUT(sizeof(T)), dstTensor, srcTensor,              \
                            (const LocalTensor<uint8_t>*)nullptr, calCount, loc_, BODY{});                 \
  }                                                                                                        \
  template <typename T, bool isReuseSource = false TPARAMS>                                                \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, ASC_LOC) {           \
    ::ascendopt::lib::unary(#Name, ::ascendopt::lib::LAYOUT(sizeof(T)), dstTensor, srcTensor,              \
                            (const LocalTensor<uint8_t>*)nullptr, srcTensor.GetSize(), loc_, BODY{});      \
  }                                                                                                        \
  template <typename T, bool isReuseSource = false TPARAMS, ASCENDOPT_LIB_UNLOCATED_PACK>                  \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                       \
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount,                   \
                   ascendopt_unlocated_...) {                                                              \
    Name<T, isReuseSource TARGS>(dstTensor, srcTensor, sharedTmpBuffer, calCount, ::ascendopt::Loc(nullptr, 0)); \
  }                                                                                                        \
  template <typename T, bool isReuseSource = false TPARAMS, ASCENDOPT_LIB_UNLOCATED_PACK>                  \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                       \
                   const LocalTensor<uint8_t>& sharedTmpBuffer, ascendopt_unlocated_...) {                 \
    Name<T, isReuseSource TARGS>(dstTensor, srcTensor, sharedTmpBuffer, ::ascendopt::Loc(nullptr, 0));     \
  }                                                                                                        \
  template <typename T, bool isReuseSource = false TPARAMS, ASCENDOPT_LIB_UNLOCATED_PACK>                  \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount, \
                   ascendopt_unlocated_...) {                                                              \
    Name<T, isReuseSource TARGS>(dstTensor, srcTensor, calCount, ::ascendopt::Loc(nullptr, 0));            \
  }                                                                                                        \
  template <typename T, bool isReuseSource = false TPARAMS, ASCENDOPT_LIB_UNLOCATED_PACK>                  \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, ascendopt_unlocated_...) { \
    Name<T, isReuseSource TARGS>(dstTensor, srcTensor, ::ascendopt::Loc(nullptr, 0));                     \
  }

#define ASCENDOPT_LIB_NOTHING
#define ASCENDOPT_LIB_CFG(Type, def) , const Type& config = def
#define ASCENDOPT_LIB_CFG_ARG , config

namespace AscendC {

ASCENDOPT_LIB_UNARY(Sigmoid, sigmoid_layout, ::ascendopt::lib::SigmoidBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Tanh, tanh_layout, ::ascendopt::lib::TanhBody, ASCENDOPT_LIB_CFG(TanhConfig, DEFAULT_TANH_CONFIG), ASCENDOPT_LIB_CFG_ARG)
ASCENDOPT_LIB_UNARY(Sin, sin_layout, ::ascendopt::lib::SinBody, ASCENDOPT_LIB_CFG(SinConfig, defaultSinConfig), ASCENDOPT_LIB_CFG_ARG)
ASCENDOPT_LIB_UNARY(Cos, cos_layout, ::ascendopt::lib::CosBody, ASCENDOPT_LIB_CFG(CosConfig, defaultCosConfig), ASCENDOPT_LIB_CFG_ARG)
ASCENDOPT_LIB_UNARY(Tan, tan_layout, ::ascendopt::lib::TanBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Asin, asin_layout, ::ascendopt::lib::AsinBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Acos, acos_layout, ::ascendopt::lib::AcosBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Atan, atan_layout, ::ascendopt::lib::AtanBody, ASCENDOPT_LIB_CFG(AtanConfig, defaultAtanConfig), ASCENDOPT_LIB_CFG_ARG)
ASCENDOPT_LIB_UNARY(Sinh, sinh_layout, ::ascendopt::lib::SinhBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Cosh, cosh_layout, ::ascendopt::lib::CoshBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Erf, erf_layout, ::ascendopt::lib::ErfBody, ASCENDOPT_LIB_CFG(ErfConfig, defaultErfConfig), ASCENDOPT_LIB_CFG_ARG)
ASCENDOPT_LIB_UNARY(Erfc, erfc_layout, ::ascendopt::lib::ErfcBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Sign, sign_layout, ::ascendopt::lib::SignBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Floor, round_layout, ::ascendopt::lib::RoundBody<RoundMode::CAST_FLOOR>, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Ceil, round_layout, ::ascendopt::lib::RoundBody<RoundMode::CAST_CEIL>, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Round, round_layout, ::ascendopt::lib::RoundBody<RoundMode::CAST_RINT>, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Trunc, round_layout, ::ascendopt::lib::RoundBody<RoundMode::CAST_TRUNC>, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)
ASCENDOPT_LIB_UNARY(Frac, round_layout, ::ascendopt::lib::FracBody, ASCENDOPT_LIB_NOTHING, ASCENDOPT_LIB_NOTHING)

// ---- Log, Log2, Log10 (6.2.4.1.6) ------------------------------------------------------
// Log and Log10 take no temporary space (the guide lists no sharedTmpBuffer
// form; one passed is accepted and unused). Log2 of half computes in float.
template <typename T, bool isReuseSource = false>
inline void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount, ASC_LOC) {
  ::ascendopt::lib::log_n(dstTensor, srcTensor, calCount, 1.0f, loc_);
}
template <typename T, bool isReuseSource = false>
inline void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, ASC_LOC) {
  ::ascendopt::lib::log_n(dstTensor, srcTensor, srcTensor.GetSize(), 1.0f, loc_);
}
template <typename T, bool isReuseSource = false>
inline void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>&,
                uint32_t calCount, ASC_LOC) {
  ::ascendopt::lib::log_n(dstTensor, srcTensor, calCount, 1.0f, loc_);
}
template <typename T, bool isReuseSource = false>
inline void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount, ASC_LOC) {
  ::ascendopt::lib::log_n(dstTensor, srcTensor, calCount, ::ascendopt::lib::k::kInvLn10, loc_);
}
template <typename T, bool isReuseSource = false>
inline void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, ASC_LOC) {
  ::ascendopt::lib::log_n(dstTensor, srcTensor, srcTensor.GetSize(), ::ascendopt::lib::k::kInvLn10, loc_);
}
template <typename T, bool isReuseSource = false>
inline void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>&,
                  uint32_t calCount, ASC_LOC) {
  ::ascendopt::lib::log_n(dstTensor, srcTensor, calCount, ::ascendopt::lib::k::kInvLn10, loc_);
}

namespace detail {
template <typename T>
inline void log2_impl(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                      uint32_t count, const ::ascendopt::Loc& loc) {
  if constexpr (sizeof(T) == 4) {
    (void)tmp;
    ::ascendopt::lib::log_n(dst, src, count, ::ascendopt::lib::k::kInvLn2, loc);
  } else {
    ::ascendopt::lib::unary("Log2", ::ascendopt::lib::log2_layout(sizeof(T)), dst, src, tmp, count, loc,
                            ::ascendopt::lib::Log2Body{});
  }
}
}  // namespace detail
template <typename T, bool isReuseSource = false>
inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, ASC_LOC) {
  detail::log2_impl(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc_);
}
template <typename T, bool isReuseSource = false>
inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, ASC_LOC) {
  detail::log2_impl(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc_);
}
template <typename T, bool isReuseSource = false>
inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount, ASC_LOC) {
  detail::log2_impl(dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr, calCount, loc_);
}
template <typename T, bool isReuseSource = false>
inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, ASC_LOC) {
  detail::log2_impl(dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr, srcTensor.GetSize(), loc_);
}

// Unlocated twins (see ASCENDOPT_LIB_UNARY).
#define ASCENDOPT_LIB_UNLOCATED_LOG(Name)                                                                   \
  template <typename T, bool isReuseSource = false, ASCENDOPT_LIB_UNLOCATED_PACK>                           \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount,     \
                   ascendopt_unlocated_...) {                                                               \
    Name<T, isReuseSource>(dstTensor, srcTensor, calCount, ::ascendopt::Loc(nullptr, 0));                   \
  }                                                                                                         \
  template <typename T, bool isReuseSource = false, ASCENDOPT_LIB_UNLOCATED_PACK>                           \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, ascendopt_unlocated_...) { \
    Name<T, isReuseSource>(dstTensor, srcTensor, ::ascendopt::Loc(nullptr, 0));                             \
  }                                                                                                         \
  template <typename T, bool isReuseSource = false, ASCENDOPT_LIB_UNLOCATED_PACK>                           \
  inline void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                        \
                   const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, ascendopt_unlocated_...) { \
    Name<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, calCount, ::ascendopt::Loc(nullptr, 0));  \
  }
ASCENDOPT_LIB_UNLOCATED_LOG(Log)
ASCENDOPT_LIB_UNLOCATED_LOG(Log2)
ASCENDOPT_LIB_UNLOCATED_LOG(Log10)
#undef ASCENDOPT_LIB_UNLOCATED_LOG
template <typename T, bool isReuseSource = false, ASCENDOPT_LIB_UNLOCATED_PACK>
inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, ascendopt_unlocated_...) {
  Log2<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, ::ascendopt::Loc(nullptr, 0));
}

// ---- Exp with a Taylor expansion (6.2.4.1.25) --------------------------------------------
// Beside the basic Exp (vec_arith.h): these take the expansion level as a
// second template argument.
template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false>
inline void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, ASC_LOC) {
  ::ascendopt::lib::unary("Exp", ::ascendopt::lib::exp_layout(sizeof(T)), dstLocal, srcLocal, &sharedTmpBuffer,
                          calCount, loc_, ::ascendopt::lib::ExpTaylorBody<taylorExpandLevel>{});
}
template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false>
inline void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t calCount, ASC_LOC) {
  ::ascendopt::lib::unary("Exp", ::ascendopt::lib::exp_layout(sizeof(T)), dstLocal, srcLocal,
                          (const LocalTensor<uint8_t>*)nullptr, calCount, loc_,
                          ::ascendopt::lib::ExpTaylorBody<taylorExpandLevel>{});
}

template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false, ASCENDOPT_LIB_UNLOCATED_PACK>
inline void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, ascendopt_unlocated_...) {
  Exp<T, taylorExpandLevel, isReuseSource>(dstLocal, srcLocal, sharedTmpBuffer, calCount,
                                           ::ascendopt::Loc(nullptr, 0));
}
template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false, ASCENDOPT_LIB_UNLOCATED_PACK>
inline void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t calCount,
                ascendopt_unlocated_...) {
  Exp<T, taylorExpandLevel, isReuseSource>(dstLocal, srcLocal, calCount, ::ascendopt::Loc(nullptr, 0));
}

// ---- Axpy with a temporary buffer (6.2.4.1.24) --------------------------------------------
// dst += src * scalar as a Muls into the temporary space and an Add (the
// guide: "通过Muls和Add组合计算，从而提供更优的精度"); a half source with a float
// destination is cast to float first.
template <typename T, typename U, bool isReuseSource = false>
inline void Axpy(const LocalTensor<T>& dstTensor, const LocalTensor<U>& srcTensor, const U scalarValue,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, ASC_LOC) {
  static_assert(::ascendopt::lib::is_float_type<T>() && ::ascendopt::lib::is_float_type<U>() && sizeof(T) >= sizeof(U),
                "Axpy takes half or float, the destination at least as wide as the source (guide 6.2.4.1.24)");
  using namespace ::ascendopt::lib;
  if (calCount == 0) return;
  const Span operands[2] = {span_of(srcTensor, calCount, "srcTensor"), span_of(dstTensor, calCount, "dstTensor")};
  // The product, in the destination's type, in one work array.
  Work w = carve("Axpy", axpy_layout(sizeof(U)), sizeof(U), tmp_of(&sharedTmpBuffer, loc_), calCount, operands, 2,
                 loc_);
  for_chunks(calCount, w.chunk, [&](uint32_t off, int32_t n) {
    LocalTensor<T> p = w.node[0].template ReinterpretCast<T>();
    p.desc_.elems = (uint32_t)n;
    if constexpr (sizeof(T) == sizeof(U)) {
      AscendC::Muls(p, srcTensor[off], scalarValue, n, loc_);
    } else {
      AscendC::Cast(p, srcTensor[off], RoundMode::CAST_NONE, (uint32_t)n, loc_);
      AscendC::Muls(p, p, (T)(float)scalarValue, n, loc_);
    }
    AscendC::Add(dstTensor[off], dstTensor[off], p, n, loc_);
  });
}

// ---- Fma (6.2.4.1.33) ---------------------------------------------------------------
// dst = src0 * src1 + src2 in float (a half operand is cast: "涉及精度转换"),
// by the FusedMulAdd instruction (one rounding of the float product-sum).
// Temporary space: one float array (float), three (half: the operands).
namespace detail {
template <typename T>
inline void fma_impl(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                     const LocalTensor<T>& src2, const LocalTensor<uint8_t>* tmp, uint32_t count,
                     const ::ascendopt::Loc& loc) {
  using namespace ::ascendopt::lib;
  static_assert(is_float_type<T>(), "Fma takes half or float tensors (guide 6.2.4.1.33)");
  if (count == 0) return;
  const Span operands[4] = {span_of(dst, count, "dst"), span_of(src0, count, "src0"), span_of(src1, count, "src1"),
                            span_of(src2, count, "src2")};
  Work w = carve("Fma", fma_layout(sizeof(T)), sizeof(T), tmp_of(tmp, loc), count, operands, 4, loc);
  for_chunks(count, w.chunk, [&](uint32_t off, int32_t n) {
    const Ops o{n, loc};
    const V p = at(w.node[0], 0, n);
    if constexpr (sizeof(T) == 4) {
      o.copy(p, at(src1, off, n));
      AscendC::FusedMulAdd(p, at(src0, off, n), at(src2, off, n), n, loc);
      o.copy(at(dst, off, n), p);
    } else {
      const V a = at(w.node[1], 0, n), c = at(w.node[2], 0, n);
      AscendC::Cast(p, src1[off], RoundMode::CAST_NONE, (uint32_t)n, loc);
      AscendC::Cast(a, src0[off], RoundMode::CAST_NONE, (uint32_t)n, loc);
      AscendC::Cast(c, src2[off], RoundMode::CAST_NONE, (uint32_t)n, loc);
      AscendC::FusedMulAdd(p, a, c, n, loc);
      AscendC::Cast(dst[off], p, RoundMode::CAST_RINT, (uint32_t)n, loc);
    }
  });
}
}  // namespace detail
template <const FmaConfig& config = DEFAULT_FMA_CONFIG, typename T>
inline void Fma(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const LocalTensor<T>& src2, const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t count,
                ASC_LOC) {
  detail::fma_impl(dst, src0, src1, src2, &sharedTmpBuffer, count, loc_);
}
template <const FmaConfig& config = DEFAULT_FMA_CONFIG, typename T>
inline void Fma(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const LocalTensor<T>& src2, const uint32_t count, ASC_LOC) {
  detail::fma_impl(dst, src0, src1, src2, (const LocalTensor<uint8_t>*)nullptr, count, loc_);
}

}  // namespace AscendC

#endif
