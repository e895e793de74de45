//! Correctly rounded conversions into the floating-point formats of
//! [`Dtype`]: round-to-nearest-even from f64 and from integers, with
//! subnormals, overflow to infinity and quiet NaNs.
//!
//! The `half` crate is not used for narrowing because its `f64 -> f16` goes
//! through `f32` on x86 (double rounding) and its `f64 -> bf16` drops the low
//! mantissa bits before rounding (a lost sticky bit), and the golden must
//! round once.

use crate::Dtype;

/// Exponent and stored-mantissa widths of a binary floating-point format.
#[derive(Debug, Clone, Copy)]
struct Format {
    exp_bits: u32,
    man_bits: u32,
}

fn format_of(dtype: Dtype) -> Option<Format> {
    let (exp_bits, man_bits) = match dtype {
        Dtype::Float16 => (5, 10),
        Dtype::Bfloat16 => (8, 7),
        Dtype::Float32 => (8, 23),
        Dtype::Float64 => (11, 52),
        _ => return None,
    };
    Some(Format { exp_bits, man_bits })
}

/// Bits of the canonical quiet NaN of a float dtype (0 for other dtypes).
pub fn quiet_nan_bits(dtype: Dtype) -> u64 {
    match format_of(dtype) {
        Some(f) => (((1u64 << f.exp_bits) - 1) << f.man_bits) | (1u64 << (f.man_bits - 1)),
        None => 0,
    }
}

/// Largest finite value of a float dtype (0 for other dtypes).
pub fn max_finite(dtype: Dtype) -> f64 {
    match format_of(dtype) {
        Some(f) => {
            let bias = (1i32 << (f.exp_bits - 1)) - 1;
            let mant = 2.0 - 2f64.powi(-(f.man_bits as i32));
            mant * 2f64.powi(bias)
        }
        None => 0.0,
    }
}

/// Smallest positive normal value of a float dtype (0 for other dtypes).
pub fn min_normal(dtype: Dtype) -> f64 {
    match format_of(dtype) {
        Some(f) => {
            let bias = (1i32 << (f.exp_bits - 1)) - 1;
            2f64.powi(1 - bias)
        }
        None => 0.0,
    }
}

/// Smallest positive subnormal value of a float dtype (0 for other dtypes).
pub fn min_subnormal(dtype: Dtype) -> f64 {
    match format_of(dtype) {
        Some(f) => {
            let bias = (1i32 << (f.exp_bits - 1)) - 1;
            // 2^(1 - bias - man_bits); for f64 this is 2^-1074, which powi
            // cannot reach in one step.
            2f64.powi(1 - bias) * 2f64.powi(-(f.man_bits as i32))
        }
        None => 0.0,
    }
}

/// Rounds `v` to the nearest value of the float `dtype` (ties to even) and
/// returns its bit pattern. NaN becomes the canonical quiet NaN. Returns 0 for
/// non-float dtypes.
pub fn round_f64_to_bits(v: f64, dtype: Dtype) -> u64 {
    if format_of(dtype).is_none() {
        return 0;
    }
    if dtype == Dtype::Float64 {
        return if v.is_nan() {
            quiet_nan_bits(dtype)
        } else {
            v.to_bits()
        };
    }
    if dtype == Dtype::Float32 {
        // Rust's `as` rounds to nearest even, with subnormals and overflow.
        return if v.is_nan() {
            quiet_nan_bits(dtype)
        } else {
            u64::from((v as f32).to_bits())
        };
    }
    if v.is_nan() {
        return quiet_nan_bits(dtype);
    }
    // Fast path: a value that is exactly an f32 rounds once from f32, which
    // `half` does to nearest even (with subnormals and overflow to
    // infinity). Goldens computed in f32 and generated inputs take it.
    let single = v as f32;
    let single = if f64::from(single) == v {
        single
    } else {
        // Inexact: round to odd, then to nearest even once more (the
        // single rounding of `v`, see `round_to_odd_f32`).
        round_to_odd_f32(v, single)
    };
    match dtype {
        Dtype::Float16 => u64::from(half::f16::from_f32(single).to_bits()),
        _ => u64::from(half::bf16::from_f32(single).to_bits()),
    }
}

/// A non-NaN `v` that is not an f32, rounded to odd in binary32 from
/// `single = v as f32`: truncated toward zero, the last bit set. binary32
/// keeps more than two bits below the quantum of binary16 and bfloat16 at
/// every magnitude, so rounding this once more to nearest even gives the
/// single nearest-even rounding of `v` (Boldo & Melquiond, "Emulation of
/// FMA and correctly rounded sums: proved algorithms using rounding to
/// odd", IEEE TC 2008). Beyond binary32's range it gives f32::MAX | 1,
/// which rounds to infinity in both formats, as `v` itself does.
#[inline]
pub fn round_to_odd_f32(v: f64, single: f32) -> f32 {
    let bits = single.to_bits();
    let toward_zero = if f64::from(single).abs() > v.abs() {
        bits - 1
    } else {
        bits
    };
    f32::from_bits(toward_zero | 1)
}

/// `v.round_ties_even()` without the libm call that CPUs before SSE4.1
/// need: below 2^52, adding and subtracting 2^52 rounds the magnitude to
/// an integer, to nearest even (the default rounding); the sign is put
/// back (so -0.3 gives -0); larger values, infinities and NaN are integral
/// already or pass through.
#[inline]
pub fn rint(v: f64) -> f64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    if v.abs() < TWO_52 {
        ((v.abs() + TWO_52) - TWO_52).copysign(v)
    } else {
        v
    }
}

/// The general f64 -> f16/bf16 rounding on the integer significand: the
/// reference the round-to-odd path is tested against.
#[cfg(test)]
fn round_wide(v: f64, fmt: Format) -> u64 {
    let width = 1 + fmt.exp_bits + fmt.man_bits;
    let sign = if v.is_sign_negative() && !v.is_nan() {
        1u64 << (width - 1)
    } else {
        0
    };
    let exp_all_ones = ((1u64 << fmt.exp_bits) - 1) << fmt.man_bits;
    if v.is_infinite() {
        return sign | exp_all_ones;
    }
    let bits = v.abs().to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Zero or an f64 subnormal: far below half the smallest subnormal of
        // f16/bf16.
        return sign;
    }
    let e = biased - 1023;
    let sig = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let bias = (1i32 << (fmt.exp_bits - 1)) - 1;
    let emin = 1 - bias;
    let m = fmt.man_bits as i32;
    // The result is n * 2^q with q the quantum of the target at this
    // magnitude; sig * 2^(e - 52) is the exact value.
    let q = e.max(emin) - m;
    let shift = q - (e - 52);
    let mut n = if shift >= 54 {
        0
    } else {
        let shift = shift as u32;
        let n = sig >> shift;
        let rem = sig & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if rem > half || (rem == half && n & 1 == 1) {
            n + 1
        } else {
            n
        }
    };
    let mut q = q;
    if n == 1u64 << (m + 1) {
        n >>= 1;
        q += 1;
    }
    if n >= 1u64 << m {
        let biased_exp = q + m + bias;
        if biased_exp >= (1 << fmt.exp_bits) - 1 {
            return sign | exp_all_ones;
        }
        sign | ((biased_exp as u64) << fmt.man_bits) | (n - (1u64 << m))
    } else {
        sign | n
    }
}

/// `v` rounded to the float `dtype` (nearest even, as
/// [`round_f64_to_bits`]) and read back as f64.
#[inline]
pub fn round_f64(v: f64, dtype: Dtype) -> f64 {
    if dtype == Dtype::Float32 && !v.is_nan() {
        // `as` rounds to nearest even once (round_f64_to_bits' own path).
        return f64::from(v as f32);
    }
    bits_to_f64(round_f64_to_bits(v, dtype), dtype)
}

/// The value of a float dtype's bit pattern, exactly, as f64.
pub fn bits_to_f64(bits: u64, dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Float16 => f64::from(half::f16::from_bits(bits as u16).to_f32()),
        Dtype::Bfloat16 => f64::from(half::bf16::from_bits(bits as u16).to_f32()),
        Dtype::Float32 => f64::from(f32::from_bits(bits as u32)),
        Dtype::Float64 => f64::from_bits(bits),
        _ => 0.0,
    }
}

/// Rounds the integer `v` to the nearest value of the float `dtype` (ties to
/// even, one rounding, overflow to infinity) and returns its bits.
pub fn int_to_float_bits(v: i128, dtype: Dtype) -> u64 {
    let Some(fmt) = format_of(dtype) else {
        return 0;
    };
    let negative = v < 0;
    let mag = v.unsigned_abs();
    let precision = fmt.man_bits + 1;
    let len = 128 - mag.leading_zeros();
    let rounded = if len <= precision {
        mag as f64
    } else {
        let shift = len - precision;
        let n = mag >> shift;
        let rem = mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let n = if rem > half || (rem == half && n & 1 == 1) {
            n + 1
        } else {
            n
        };
        // n <= 2^precision <= 2^53 is exact in f64, and so is the scaling.
        (n as f64) * 2f64.powi(shift as i32)
    };
    let value = if negative { -rounded } else { rounded };
    // `value` is representable in `dtype` unless it overflows, in which case
    // the f64 -> dtype rounding below produces the infinity.
    round_f64_to_bits(value, dtype)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn f16(v: f64) -> u64 {
        round_f64_to_bits(v, Dtype::Float16)
    }
    fn bf16(v: f64) -> u64 {
        round_f64_to_bits(v, Dtype::Bfloat16)
    }

    /// SplitMix64 from `seed`: the test patterns' generator.
    pub(crate) fn split_mix(mut s: u64) -> impl FnMut() -> u64 {
        move || {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }

    #[test]
    fn rint_is_round_ties_even() {
        let mut next = split_mix(0x0417);
        let specials = [
            0.5,
            1.5,
            2.5,
            -0.5,
            -2.5,
            -0.0,
            0.0,
            -0.3,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            f64::INFINITY,
            -f64::INFINITY,
            f64::MIN_POSITIVE,
            1e300,
        ];
        for k in 0..200_000u32 {
            let raw = next();
            let v = match k % 3 {
                0 => f64::from_bits(raw),
                // Halves and near-halves of every size below 2^53.
                1 => {
                    ((raw >> 11) >> (raw % 53)) as f64 / 2.0 * if raw & 1 == 1 { -1.0 } else { 1.0 }
                }
                _ => specials[k as usize / 3 % specials.len()],
            };
            assert_eq!(rint(v).to_bits(), v.round_ties_even().to_bits(), "{v:e}");
        }
        assert!(rint(f64::NAN).is_nan());
    }

    #[test]
    fn the_f32_fast_path_agrees_with_the_general_rounding() {
        // SplitMix64 over f32 bit patterns: every exponent, subnormals,
        // ties (low mantissa bits at the midpoint) and overflow.
        let mut next = split_mix(0x1234_5678);
        for k in 0..400_000u32 {
            let raw = next() as u32;
            // Every fourth pattern forces a midpoint of f16 (13 low bits)
            // or bf16 (16 low bits).
            let bits = match k % 4 {
                1 => (raw & !0x1FFF) | 0x1000,
                2 => (raw & !0xFFFF) | 0x8000,
                _ => raw,
            };
            let x = f32::from_bits(bits);
            if x.is_nan() {
                continue;
            }
            let v = f64::from(x);
            for (dtype, fmt) in [
                (Dtype::Float16, format_of(Dtype::Float16)),
                (Dtype::Bfloat16, format_of(Dtype::Bfloat16)),
            ] {
                let Some(fmt) = fmt else { unreachable!() };
                let slow = if v.is_infinite() {
                    round_f64_to_bits(v, dtype)
                } else {
                    round_wide(v, fmt)
                };
                assert_eq!(
                    round_f64_to_bits(v, dtype),
                    slow,
                    "{dtype} of {x:e} ({bits:#x})"
                );
            }
        }
    }

    #[test]
    fn round_to_odd_agrees_with_the_general_rounding_on_f64_values() {
        // f64 values that are not f32s: random patterns over the f16/bf16
        // range and beyond, values next to every f16/bf16 midpoint (just
        // below, at, just above), and the overflow thresholds.
        let mut next = split_mix(0xfeed_beef);
        let mut values = vec![
            65520.0,
            65_519.999_999_999_99,
            65_520.000_000_000_01,
            f64::from(f32::MAX) * 1.5,
            3.396_2e38,
            -1e300,
            5.960_464_477_539_063e-8 / 2.0,
            1e-300,
        ];
        for k in 0..400_000u32 {
            let r = next();
            let v = match k % 3 {
                // Exponents around the f16 and bf16 ranges.
                0 => f64::from_bits(
                    (r & 0x800F_FFFF_FFFF_FFFF) | (((r >> 52) % 300 + 1023 - 150) << 52),
                ),
                // Midpoints of f16 (bit 41 of the f64 significand at f16
                // precision) and bf16 (bit 44), nudged by a few ulps.
                1 => {
                    let base = f64::from_bits(
                        (r & 0x800F_FE00_0000_0000)
                            | (1 << 41)
                            | (((r >> 52) % 60 + 1023 - 30) << 52),
                    );
                    f64::from_bits(base.to_bits().wrapping_add((r & 7).wrapping_sub(3)))
                }
                _ => {
                    let base = f64::from_bits(
                        (r & 0x800F_F000_0000_0000)
                            | (1 << 44)
                            | (((r >> 52) % 260 + 1023 - 130) << 52),
                    );
                    f64::from_bits(base.to_bits().wrapping_add((r & 7).wrapping_sub(3)))
                }
            };
            values.push(v);
        }
        for v in values {
            for dtype in [Dtype::Float16, Dtype::Bfloat16] {
                let Some(fmt) = format_of(dtype) else {
                    unreachable!()
                };
                assert_eq!(
                    round_f64_to_bits(v, dtype),
                    round_wide(v, fmt),
                    "{dtype} of {v:e}"
                );
            }
        }
    }

    #[test]
    fn f16_rounding_hand_checked() {
        assert_eq!(f16(1.0), 0x3C00);
        assert_eq!(f16(-2.0), 0xC000);
        assert_eq!(f16(65504.0), 0x7BFF);
        // 65520 is the midpoint between 65504 and 65536 (= overflow): ties to
        // even goes up, so infinity; just below stays at max.
        assert_eq!(f16(65519.99), 0x7BFF);
        assert_eq!(f16(65520.0), 0x7C00);
        assert_eq!(f16(-1e6), 0xFC00);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1.
        assert_eq!(f16(1.0 + 2f64.powi(-11)), 0x3C00);
        // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9: -> even.
        assert_eq!(f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3C02);
        // Just above a midpoint rounds up (a sticky bit far below f32
        // precision: the f32 route would round down).
        assert_eq!(f16(1.0 + 2f64.powi(-11) + 2f64.powi(-40)), 0x3C01);
        // Subnormals: 2^-24 is the smallest, 2^-25 ties to 0, 3*2^-25 -> 2^-23.
        assert_eq!(f16(2f64.powi(-24)), 0x0001);
        assert_eq!(f16(2f64.powi(-25)), 0x0000);
        assert_eq!(f16(3.0 * 2f64.powi(-25)), 0x0002);
        assert_eq!(f16(-0.0), 0x8000);
        // Largest subnormal rounding up into the smallest normal.
        assert_eq!(f16(2f64.powi(-14) - 2f64.powi(-26)), 0x0400);
        assert_eq!(f16(f64::NAN), 0x7E00);
        assert_eq!(f16(f64::NEG_INFINITY), 0xFC00);
        // 0.1 -> 0x2E66 (0.0999755859375).
        assert_eq!(f16(0.1), 0x2E66);
    }

    #[test]
    fn bf16_rounding_hand_checked() {
        assert_eq!(bf16(1.0), 0x3F80);
        // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even -> 1.0.
        assert_eq!(bf16(1.0 + 2f64.powi(-8)), 0x3F80);
        // A sticky bit below the truncated 32 bits must round up.
        assert_eq!(bf16(1.0 + 2f64.powi(-8) + 2f64.powi(-40)), 0x3F81);
        assert_eq!(bf16(3.0e38), 0x7F62);
        assert_eq!(bf16(3.4e38), 0x7F80);
        assert_eq!(bf16(f64::NAN), 0x7FC0);
        assert_eq!(bf16(-0.0), 0x8000);
    }

    #[test]
    fn f32_and_f64_paths() {
        assert_eq!(round_f64_to_bits(0.1, Dtype::Float32), 0x3DCC_CCCD);
        assert_eq!(round_f64_to_bits(1e39, Dtype::Float32), 0x7F80_0000);
        assert_eq!(round_f64_to_bits(0.1, Dtype::Float64), 0.1f64.to_bits());
        assert_eq!(round_f64_to_bits(1.0, Dtype::Int32), 0);
    }

    #[test]
    fn int_to_float_rounds_once() {
        // 2049 is a tie between 2048 and 2050 in f16: even -> 2048.
        assert_eq!(int_to_float_bits(2049, Dtype::Float16), f16(2048.0));
        assert_eq!(int_to_float_bits(2051, Dtype::Float16), f16(2052.0));
        assert_eq!(int_to_float_bits(65520, Dtype::Float16), 0x7C00);
        assert_eq!(int_to_float_bits(-65519, Dtype::Float16), 0xFBFF);
        // 2^60 + 2^52 + 1 is just above the bf16 midpoint between 2^60 and
        // 2^60 + 2^53; rounding through f64 or f32 would land on the midpoint
        // and go to even (2^60).
        let v: i128 = (1 << 60) + (1 << 52) + 1;
        assert_eq!(
            int_to_float_bits(v, Dtype::Bfloat16),
            bf16(2f64.powi(60) + 2f64.powi(53))
        );
        assert_eq!(
            int_to_float_bits(16_777_217, Dtype::Float32),
            u64::from(16_777_216f32.to_bits())
        );
        assert_eq!(int_to_float_bits(0, Dtype::Float32), 0);
        assert_eq!(int_to_float_bits(-3, Dtype::Float64), (-3.0f64).to_bits());
    }

    #[test]
    fn limits() {
        assert_eq!(max_finite(Dtype::Float16), 65504.0);
        assert_eq!(min_normal(Dtype::Float16), 2f64.powi(-14));
        assert_eq!(min_subnormal(Dtype::Float16), 2f64.powi(-24));
        assert_eq!(max_finite(Dtype::Float32), f64::from(f32::MAX));
        assert_eq!(min_subnormal(Dtype::Bfloat16), 2f64.powi(-133));
        assert_eq!(min_subnormal(Dtype::Float64), f64::from_bits(1));
    }
}
