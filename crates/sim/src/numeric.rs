//! Numerics of the hardware: element loads and stores by dtype, f16/bf16
//! rounding, the Cast round modes, saturation and integer wrap-around.
//!
//! Everything rounds through one exact path: a value is taken as an exact
//! binary number `±m · 2^e` (every f16/bf16/f32/f64 and every integer is
//! one) and rounded once to the target format with a [`Rounding`]
//! direction. Rounding rules are those of the Cast page of the guide
//! (6.2.3.3.5.1, "二进制的舍入规则"):
//! - RINT: nearest, ties to even; ROUND: nearest, ties away from zero;
//! - FLOOR: toward -inf; CEIL: toward +inf; TRUNC: toward zero;
//! - ODD: truncate, then set the last kept bit when anything was dropped
//!   (round to odd, "Von Neumann rounding").
//!
//! Overflow: the vector arithmetic of the simulator follows IEEE 754
//! ([`Overflow::Ieee`]: a finite result too large becomes ±inf in the
//! nearest modes); Cast stores "溢出默认按照饱和处理" (overflow saturates
//! by default), so casts use [`Overflow::Saturate`] (±max finite; an
//! infinite *input* stays infinite, NaN stays NaN). Integer targets of a
//! Cast saturate to their range and take NaN to 0. Integer arithmetic
//! wraps (truncation mode, the default of the integer saturation control).

use ascendopt_op::Dtype;

/// A rounding direction of a conversion (the Cast `RoundMode`s that round;
/// CAST_NONE and CAST_HYBRID are resolved by the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Nearest, ties to even (CAST_RINT).
    Rint,
    /// Toward negative infinity (CAST_FLOOR).
    Floor,
    /// Toward positive infinity (CAST_CEIL).
    Ceil,
    /// Nearest, ties away from zero (CAST_ROUND).
    Round,
    /// Toward zero (CAST_TRUNC).
    Trunc,
    /// Round to odd (CAST_ODD).
    Odd,
}

impl Rounding {
    /// Every mode.
    pub const ALL: [Rounding; 6] = [
        Rounding::Rint,
        Rounding::Floor,
        Rounding::Ceil,
        Rounding::Round,
        Rounding::Trunc,
        Rounding::Odd,
    ];
}

/// What a finite value beyond the largest finite number of a float format
/// becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// IEEE 754: ±inf or ±max depending on the rounding direction.
    Ieee,
    /// ±max finite whatever the rounding direction (Cast default).
    Saturate,
}

/// A binary floating-point format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloatFormat {
    /// Stored mantissa (fraction) bits.
    pub man_bits: u32,
    /// Exponent bits.
    pub exp_bits: u32,
}

/// IEEE binary16 (`half`).
pub const F16: FloatFormat = FloatFormat {
    man_bits: 10,
    exp_bits: 5,
};
/// bfloat16.
pub const BF16: FloatFormat = FloatFormat {
    man_bits: 7,
    exp_bits: 8,
};
/// IEEE binary32.
pub const F32: FloatFormat = FloatFormat {
    man_bits: 23,
    exp_bits: 8,
};
/// IEEE binary64.
pub const F64: FloatFormat = FloatFormat {
    man_bits: 52,
    exp_bits: 11,
};

impl FloatFormat {
    /// The format of a float dtype, `None` for integer types.
    pub fn of(dtype: Dtype) -> Option<FloatFormat> {
        match dtype {
            Dtype::Float16 => Some(F16),
            Dtype::Bfloat16 => Some(BF16),
            Dtype::Float32 => Some(F32),
            Dtype::Float64 => Some(F64),
            _ => None,
        }
    }

    fn total_bits(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    fn bias(self) -> i64 {
        (1i64 << (self.exp_bits - 1)) - 1
    }

    fn sign_bit(self) -> u64 {
        1u64 << (self.total_bits() - 1)
    }

    fn inf_bits(self) -> u64 {
        ((1u64 << self.exp_bits) - 1) << self.man_bits
    }

    fn max_bits(self) -> u64 {
        self.inf_bits() - 1
    }

    fn quiet_nan_bits(self) -> u64 {
        self.inf_bits() | (1u64 << (self.man_bits - 1))
    }

    /// Bits of ±max finite.
    pub fn max_finite(self, negative: bool) -> u64 {
        self.max_bits() | if negative { self.sign_bit() } else { 0 }
    }
}

// ---- element access ------------------------------------------------------

/// Reads `size` bytes at `addr` as a little-endian integer (zero-extended).
/// The caller has bounds-checked the access.
#[inline]
pub fn load_bits(bytes: &[u8], addr: usize, size: usize) -> u64 {
    // Fixed-width reads for the element sizes (no memcpy call per element).
    match size {
        1 => u64::from(bytes[addr]),
        2 => u64::from(u16::from_le_bytes([bytes[addr], bytes[addr + 1]])),
        4 => {
            let b = &bytes[addr..addr + 4];
            u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
        8 => {
            let b = &bytes[addr..addr + 8];
            u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
        }
        _ => {
            let mut out = [0u8; 8];
            out[..size].copy_from_slice(&bytes[addr..addr + size]);
            u64::from_le_bytes(out)
        }
    }
}

/// Writes the low `size` bytes of `bits` at `addr`, little-endian.
#[inline]
pub fn store_bits(bytes: &mut [u8], addr: usize, size: usize, bits: u64) {
    match size {
        1 => bytes[addr] = bits as u8,
        2 => bytes[addr..addr + 2].copy_from_slice(&(bits as u16).to_le_bytes()),
        4 => bytes[addr..addr + 4].copy_from_slice(&(bits as u32).to_le_bytes()),
        8 => bytes[addr..addr + 8].copy_from_slice(&bits.to_le_bytes()),
        _ => bytes[addr..addr + size].copy_from_slice(&bits.to_le_bytes()[..size]),
    }
}

/// Reads one element of `dtype`.
#[inline]
pub fn load(bytes: &[u8], addr: usize, dtype: Dtype) -> u64 {
    load_bits(bytes, addr, dtype.size())
}

/// Writes one element of `dtype`.
#[inline]
pub fn store(bytes: &mut [u8], addr: usize, dtype: Dtype, bits: u64) {
    store_bits(bytes, addr, dtype.size(), bits)
}

/// The value of a float element (exact: every f16/bf16/f32 is an f64),
/// `None` for integer types.
pub fn float_value(dtype: Dtype, bits: u64) -> Option<f64> {
    Some(match dtype {
        // Through the table: f16 -> f32 -> f64 is exact, NaN payloads
        // included (tested against `half`'s direct conversion).
        Dtype::Float16 => f64::from(half_to_f32(bits as u16)),
        Dtype::Bfloat16 => half::bf16::from_bits(bits as u16).to_f64(),
        Dtype::Float32 => f64::from(f32::from_bits(bits as u32)),
        Dtype::Float64 => f64::from_bits(bits),
        _ => return None,
    })
}

/// The value of an integer element (sign-extended for signed types, `Bool`
/// as 0/1), `None` for float types.
pub fn int_value(dtype: Dtype, bits: u64) -> Option<i128> {
    Some(match dtype {
        Dtype::Int8 => i128::from(bits as u8 as i8),
        Dtype::Uint8 | Dtype::Bool => i128::from(bits as u8),
        Dtype::Int16 => i128::from(bits as u16 as i16),
        Dtype::Uint16 => i128::from(bits as u16),
        Dtype::Int32 => i128::from(bits as u32 as i32),
        Dtype::Uint32 => i128::from(bits as u32),
        Dtype::Int64 => i128::from(bits as i64),
        Dtype::Uint64 => i128::from(bits),
        _ => return None,
    })
}

/// Range of an integer dtype, `None` for float types.
#[inline]
pub fn int_range(dtype: Dtype) -> Option<(i128, i128)> {
    let bits = 8 * dtype.size() as u32;
    if dtype.is_signed_int() {
        Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1))
    } else if dtype.is_float() {
        None
    } else {
        Some((0, (1i128 << bits) - 1))
    }
}

/// Two's-complement wrap of `v` into an integer dtype (keeps the low bits).
#[inline]
pub fn wrap_int(v: i128, dtype: Dtype) -> u64 {
    let bits = 8 * dtype.size() as u32;
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    (v as u64) & mask
}

/// `v` clamped into the range of an integer dtype, as element bits.
#[inline]
pub fn saturate_int(v: i128, dtype: Dtype) -> u64 {
    let (lo, hi) = int_range(dtype).unwrap_or((i128::MIN, i128::MAX));
    wrap_int(v.clamp(lo, hi), dtype)
}

// ---- exact rounding ------------------------------------------------------

/// An exact binary number `(-1)^negative · mant · 2^exp`.
#[derive(Debug, Clone, Copy)]
struct Exact {
    negative: bool,
    mant: u128,
    exp: i64,
}

impl Exact {
    /// A finite f64 exactly.
    fn from_f64(x: f64) -> Exact {
        let bits = x.to_bits();
        let negative = bits >> 63 == 1;
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (mant, exp) = if biased == 0 {
            (u128::from(frac), -1074)
        } else {
            (u128::from(frac | (1u64 << 52)), biased - 1075)
        };
        Exact {
            negative,
            mant,
            exp,
        }
    }

    fn from_int(v: i128) -> Exact {
        Exact {
            negative: v < 0,
            mant: v.unsigned_abs(),
            exp: 0,
        }
    }
}

/// Where the dropped part lies relative to half a unit of the last place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tail {
    Zero,
    Below,
    Half,
    Above,
}

/// `mant · 2^exp` split at quantum `2^q`: (integer part in units of 2^q,
/// the dropped tail). Requires nothing about the sizes.
fn split(mant: u128, exp: i64, q: i64) -> (u128, Tail) {
    let shift = q - exp;
    if shift <= 0 {
        // Exact; callers keep the result within their precision.
        return (mant << (-shift).min(127) as u32, Tail::Zero);
    }
    if shift > 128 {
        return (0, if mant == 0 { Tail::Zero } else { Tail::Below });
    }
    let (n, rem, half) = if shift == 128 {
        (0, mant, 1u128 << 127)
    } else {
        let s = shift as u32;
        (mant >> s, mant & ((1u128 << s) - 1), 1u128 << (s - 1))
    };
    let tail = if rem == 0 {
        Tail::Zero
    } else if rem < half {
        Tail::Below
    } else if rem == half {
        Tail::Half
    } else {
        Tail::Above
    };
    (n, tail)
}

/// Rounds the integer part `n` (with its tail) in direction `rounding`.
fn round_units(n: u128, tail: Tail, negative: bool, rounding: Rounding) -> u128 {
    let inexact = tail != Tail::Zero;
    let up = match rounding {
        Rounding::Rint => tail == Tail::Above || (tail == Tail::Half && n & 1 == 1),
        Rounding::Round => matches!(tail, Tail::Half | Tail::Above),
        Rounding::Trunc => false,
        Rounding::Floor => negative && inexact,
        Rounding::Ceil => !negative && inexact,
        Rounding::Odd => inexact && n & 1 == 0,
    };
    n + u128::from(up)
}

fn bit_len(n: u128) -> i64 {
    128 - i64::from(n.leading_zeros())
}

/// Rounds an exact number to `fmt`; returns the element bits.
fn round_exact(x: Exact, fmt: FloatFormat, rounding: Rounding, overflow: Overflow) -> u64 {
    let sign = if x.negative { fmt.sign_bit() } else { 0 };
    if x.mant == 0 {
        return sign;
    }
    let p = i64::from(fmt.man_bits) + 1;
    let emin = 1 - fmt.bias();
    let emax = fmt.bias();
    let top = bit_len(x.mant) - 1 + x.exp; // value in [2^top, 2^(top+1))
    let mut q = top.max(emin) - (p - 1);
    let (n, tail) = split(x.mant, x.exp, q);
    let mut n = round_units(n, tail, x.negative, rounding);
    if n == 1u128 << p {
        n >>= 1;
        q += 1;
    }
    if n == 0 {
        return sign;
    }
    let e = bit_len(n) - 1 + q;
    if e > emax {
        let to_inf = match overflow {
            Overflow::Saturate => false,
            Overflow::Ieee => match rounding {
                Rounding::Rint | Rounding::Round => true,
                Rounding::Trunc | Rounding::Odd => false,
                Rounding::Floor => x.negative,
                Rounding::Ceil => !x.negative,
            },
        };
        return sign
            | if to_inf {
                fmt.inf_bits()
            } else {
                fmt.max_bits()
            };
    }
    let hidden = 1u128 << (p - 1);
    if n < hidden {
        // Subnormal: q is emin - (p - 1), biased exponent 0.
        return sign | n as u64;
    }
    let biased = (e + fmt.bias()) as u64;
    sign | (biased << fmt.man_bits) | (n - hidden) as u64
}

/// Rounds `x` to the float format `fmt` once; NaN becomes the quiet NaN of
/// `fmt` (sign kept), ±inf stays ±inf.
pub fn round_float(x: f64, fmt: FloatFormat, rounding: Rounding, overflow: Overflow) -> u64 {
    let sign = if x.is_sign_negative() {
        fmt.sign_bit()
    } else {
        0
    };
    if x.is_nan() {
        return sign | fmt.quiet_nan_bits();
    }
    if x.is_infinite() {
        return sign | fmt.inf_bits();
    }
    if let Some(bits) = round_float_native(x, fmt, rounding, overflow) {
        return bits;
    }
    round_exact(Exact::from_f64(x), fmt, rounding, overflow)
}

/// The hardware conversions' answer for the cases they settle alone, the
/// same bits as [`round_exact`]: a finite `x` that the format holds exactly
/// (every mode agrees), and nearest-even to binary32 when the result stays
/// finite (`as` rounds to nearest even, subnormals included). `None` when
/// the general path must decide (other modes, overflow).
#[inline]
fn round_float_native(
    x: f64,
    fmt: FloatFormat,
    rounding: Rounding,
    overflow: Overflow,
) -> Option<u64> {
    let single = x as f32;
    if fmt == F32 {
        let exact = f64::from(single) == x;
        return ((exact || rounding == Rounding::Rint) && single.is_finite())
            .then(|| u64::from(single.to_bits()));
    }
    let single = if f64::from(single) == x {
        single
    } else if rounding == Rounding::Rint {
        // Nearest even from an inexact `x`: through its round-to-odd f32.
        odd_single(x, single)?
    } else {
        return None;
    };
    // `single` is `x` or its round-to-odd f32: the crate rounds it once to
    // nearest even, to infinity on overflow; exact results hold in every
    // mode.
    let (value, bits) = if fmt == F16 {
        // (F16C where the CPU has it; the same bits as the software path.)
        let h = half::f16::from_f32(single);
        (half_to_f32(h.to_bits()), h.to_bits())
    } else if fmt == BF16 {
        let h = half::bf16::from_f32_const(single);
        (h.to_f32_const(), h.to_bits())
    } else {
        return None;
    };
    let fine = value == single || (rounding == Rounding::Rint && value.is_finite());
    let ieee_overflow = rounding == Rounding::Rint && overflow == Overflow::Ieee;
    (fine || ieee_overflow).then_some(u64::from(bits))
}

/// `x` (finite, not an f32) rounded to odd in binary32 from `single`
/// (`x as f32`; see `ascendopt_op::float::round_to_odd_f32`), or `None`
/// beyond binary32's range (`single` infinite), where the overflow rule of
/// the rounding decides.
#[inline]
fn odd_single(x: f64, single: f32) -> Option<f32> {
    single
        .is_finite()
        .then(|| ascendopt_op::float::round_to_odd_f32(x, single))
}

/// Rounds the integer `v` to the float format `fmt` once.
pub fn int_to_float(v: i128, fmt: FloatFormat, rounding: Rounding, overflow: Overflow) -> u64 {
    // Below 2^53 the integer is an exact f64 and rounds the same way.
    if v.unsigned_abs() < 1u128 << 53 {
        return round_float(v as i64 as f64, fmt, rounding, overflow);
    }
    round_exact(Exact::from_int(v), fmt, rounding, overflow)
}

/// Rounds `x` to an integer in direction `rounding`. `None` for NaN;
/// infinities and huge values give `i128::MIN`/`i128::MAX` (so that any
/// later saturation clamps them).
#[inline]
pub fn round_to_int(x: f64, rounding: Rounding) -> Option<i128> {
    if x.is_nan() {
        return None;
    }
    if x.is_infinite() || x.abs() >= 2f64.powi(120) {
        return Some(if x < 0.0 { i128::MIN } else { i128::MAX });
    }
    if let Some(n) = round_small(x, rounding) {
        return Some(n as i64 as i128);
    }
    Some(round_to_int_exact(x, rounding))
}

/// `x` rounded to an integral value in direction `rounding` with hardware
/// f64 arithmetic, for a finite `x` below 2^52 in magnitude (where the
/// truncation `x as i64` and the difference `x - t` are exact); `None`
/// outside that range and for round-to-odd. Matches [`round_to_int_exact`].
#[inline]
fn round_small(x: f64, rounding: Rounding) -> Option<f64> {
    // NaN fails the comparison too.
    if x.is_nan() || x.abs() >= 4_503_599_627_370_496.0 {
        return None;
    }
    let t = x as i64 as f64;
    let away = t + x.signum();
    Some(match rounding {
        Rounding::Trunc => t,
        Rounding::Floor => {
            if t > x {
                t - 1.0
            } else {
                t
            }
        }
        Rounding::Ceil => {
            if t < x {
                t + 1.0
            } else {
                t
            }
        }
        Rounding::Round => {
            if (x - t).abs() >= 0.5 {
                away
            } else {
                t
            }
        }
        Rounding::Rint => {
            let d = (x - t).abs();
            if d > 0.5 || (d == 0.5 && (x as i64) & 1 != 0) {
                away
            } else {
                t
            }
        }
        Rounding::Odd => return None,
    })
}

/// [`round_to_int`] of a finite `x` below 2^120 by exact arithmetic.
fn round_to_int_exact(x: f64, rounding: Rounding) -> i128 {
    let exact = Exact::from_f64(x);
    let (n, tail) = split(exact.mant, exact.exp, 0);
    let n = round_units(n, tail, exact.negative, rounding) as i128;
    if exact.negative {
        -n
    } else {
        n
    }
}

/// Rounds `x` to an integral value kept in floating point (a float->float
/// Cast with a rounding mode); the sign of zero follows `x`.
pub fn round_integral(x: f64, rounding: Rounding) -> f64 {
    if !x.is_finite() || x.abs() >= 2f64.powi(52) {
        return x;
    }
    let n = match round_small(x, rounding) {
        Some(n) => n,
        None => round_to_int(x, rounding).unwrap_or(0) as f64,
    };
    if n == 0.0 && x.is_sign_negative() {
        -0.0
    } else {
        n
    }
}

/// A float value converted to an integer dtype: rounded in direction
/// `rounding`, saturated to the range, NaN to 0.
#[inline]
pub fn float_to_int(x: f64, rounding: Rounding, dtype: Dtype) -> u64 {
    match round_to_int(x, rounding) {
        Some(v) => saturate_int(v, dtype),
        None => 0,
    }
}

/// The value of the half with bits `h`, from a table of all 65536 built on
/// first use in the process (the same bits as `half`'s conversion; a table
/// lookup is cheaper than the software conversion in the vector run loops).
#[inline(always)]
pub fn half_to_f32(h: u16) -> f32 {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Vec<f32>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..=u16::MAX)
            .map(|h| half::f16::from_bits(h).to_f32_const())
            .collect()
    });
    table[usize::from(h)]
}

/// Element bits of `x` rounded to nearest-even into the float `dtype`
/// (IEEE overflow): the single rounding of a vector arithmetic result.
/// Integer dtypes get `x` truncated and wrapped (callers use exact integer
/// paths instead).
#[inline]
pub fn to_bits_rne(x: f64, dtype: Dtype) -> u64 {
    // Fast path: a non-NaN value that is exactly an f32 rounds once from
    // f32: `as` and `half` round to nearest even with subnormals and
    // overflow to infinity, the same result as the general path.
    if !x.is_nan() {
        let single = x as f32;
        match dtype {
            Dtype::Float32 => return u64::from(single.to_bits()),
            // `half`'s F16C instruction where the CPU has it (its software
            // rounding otherwise: the same bits, tested below, several
            // times slower); bf16's software rounding is a few bit
            // operations, inlined.
            Dtype::Float16 | Dtype::Bfloat16 => {
                // An inexact `x` through its round-to-odd f32 (the same
                // single rounding, see `odd_single`).
                let single = if f64::from(single) == x {
                    Some(single)
                } else {
                    odd_single(x, single)
                };
                if let Some(single) = single {
                    return if dtype == Dtype::Float16 {
                        u64::from(half::f16::from_f32(single).to_bits())
                    } else {
                        u64::from(half::bf16::from_f32_const(single).to_bits())
                    };
                }
            }
            _ => {}
        }
    }
    match FloatFormat::of(dtype) {
        Some(fmt) => round_float(x, fmt, Rounding::Rint, Overflow::Ieee),
        None => wrap_int(x as i128, dtype),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hardware_and_software_half_rounding_agree_off_nan() {
        // A stride over every f32 bit pattern, plus every f32 near the
        // half range's rounding boundaries (ties, subnormals, overflow).
        let strided = (0..=u32::MAX).step_by(1021);
        let near = (0..=u16::MAX).flat_map(|h| {
            let mid = half::f16::from_bits(h).to_f32().to_bits();
            (mid.saturating_sub(4096)..=mid.saturating_add(4096)).step_by(256)
        });
        for bits in strided.chain(near) {
            let x = f32::from_bits(bits);
            if x.is_nan() {
                continue;
            }
            assert_eq!(
                half::f16::from_f32(x).to_bits(),
                half::f16::from_f32_const(x).to_bits(),
                "{bits:#010x}"
            );
        }
    }

    #[test]
    fn the_half_table_matches_the_conversion_bit_for_bit() {
        for h in 0..=u16::MAX {
            let want = half::f16::from_bits(h).to_f32();
            assert_eq!(half_to_f32(h).to_bits(), want.to_bits(), "{h:#06x}");
            let wide = half::f16::from_bits(h).to_f64();
            let got = float_value(Dtype::Float16, u64::from(h)).unwrap();
            assert_eq!(got.to_bits(), wide.to_bits(), "{h:#06x} as f64");
        }
    }

    fn f16(x: f64, r: Rounding) -> u16 {
        round_float(x, F16, r, Overflow::Ieee) as u16
    }

    fn f16v(bits: u16) -> f64 {
        float_value(Dtype::Float16, u64::from(bits)).unwrap()
    }

    const ALL: [Rounding; 6] = Rounding::ALL;

    #[test]
    fn the_rne_fast_path_agrees_with_the_general_rounding() {
        let mut rng = crate::test_rng::SplitMix64::new(0xfeed_beef);
        let mut next = || rng.next_u64();
        for k in 0..300_000u32 {
            let raw = next();
            let bits = match k % 4 {
                1 => ((raw as u32) & !0x1FFF) | 0x1000,
                2 => ((raw as u32) & !0xFFFF) | 0x8000,
                _ => raw as u32,
            };
            let narrow = f64::from(f32::from_bits(bits));
            // Also values that are not exactly an f32 (round-to-odd first
            // for f16/bf16, `as` for f32), of every magnitude and of the
            // halves' range, near their midpoints.
            let wide = f64::from_bits(raw);
            for x in [narrow, wide, near_half_midpoint(k, raw)] {
                for (dtype, fmt) in [
                    (Dtype::Float16, F16),
                    (Dtype::Bfloat16, BF16),
                    (Dtype::Float32, F32),
                ] {
                    assert_eq!(
                        to_bits_rne(x, dtype),
                        general(x, fmt, Rounding::Rint, Overflow::Ieee),
                        "{dtype:?} of {x:e}"
                    );
                }
            }
        }
    }

    /// An f64 that is not an f32, in the range of binary16 and bfloat16:
    /// by `k % 3`, a binary16 midpoint, a bfloat16 midpoint (each moved by
    /// a few f64 quanta either way, or not at all), or a random significand
    /// at a binade from 2^-30 to 2^20.
    fn near_half_midpoint(k: u32, raw: u64) -> f64 {
        let nudge = [0i64, 1, -1, 3, -3, 1 << 20, -(1 << 20)][(raw >> 40) as usize % 7];
        let mid = match k % 3 {
            0 => {
                let h = (raw as u16) & 0x7bff; // finite, below the top binade
                let a = half::f16::from_bits(h).to_f64();
                let b = half::f16::from_bits(h + 1).to_f64();
                (a + b) / 2.0
            }
            1 => {
                let h = (raw as u16) & 0x7f7f;
                let a = half::bf16::from_bits(h).to_f64();
                let b = half::bf16::from_bits(h + 1).to_f64();
                (a + b) / 2.0
            }
            _ => {
                let e = 1023 - 30 + (raw >> 52) % 51;
                f64::from_bits((e << 52) | (raw & ((1 << 52) - 1)))
            }
        };
        let x = f64::from_bits((mid.to_bits() as i64 + nudge) as u64);
        if raw >> 63 == 1 {
            -x
        } else {
            x
        }
    }

    /// `round_float` without its native fast path.
    fn general(x: f64, fmt: FloatFormat, rounding: Rounding, overflow: Overflow) -> u64 {
        let sign = if x.is_sign_negative() {
            fmt.sign_bit()
        } else {
            0
        };
        if x.is_nan() {
            sign | fmt.quiet_nan_bits()
        } else if x.is_infinite() {
            sign | fmt.inf_bits()
        } else {
            round_exact(Exact::from_f64(x), fmt, rounding, overflow)
        }
    }

    /// The native fast paths of round_float, int_to_float and round_to_int
    /// give the exact paths' bits on random values of every magnitude:
    /// exact f32/f16 values, halfway cases, integers and arbitrary f64s,
    /// in every rounding mode, with both overflow rules.
    #[test]
    fn native_roundings_agree_with_the_exact_paths() {
        let mut rng = crate::test_rng::SplitMix64::new(0x005e_ed0f_ca57);
        let mut next = || rng.next_u64();
        for k in 0..200_000u32 {
            let raw = next();
            let x = match k % 11 {
                // Just off a binary16 / bfloat16 rounding midpoint by less
                // than a binary32 quantum (where rounding first to nearest
                // f32 would round twice), and arbitrary f64s of their range.
                8..=10 => near_half_midpoint(k, raw),
                0 => f64::from(f32::from_bits(raw as u32)),
                // f32 values halfway between two f16 / two bf16 values.
                6 => f64::from(f32::from_bits(((raw as u32) & !0x1FFF) | 0x1000)),
                7 => f64::from(f32::from_bits(((raw as u32) & !0xFFFF) | 0x8000)),
                1 => f64::from(half::f16::from_bits(raw as u16).to_f32()),
                // Halves and quarters around integers (ties of the roundings).
                2 => ((raw >> 12) as i64 % 100_000) as f64 / 4.0,
                // Integers of up to 2^60 (exact and inexact in f32).
                3 => ((raw >> 4) as i64 >> (raw % 40)) as f64,
                // Halfway between two adjacent f32 values.
                4 => {
                    let a = f32::from_bits((raw as u32) & 0x7f7f_ffff);
                    (f64::from(a) + f64::from(f32::from_bits(a.to_bits() + 1))) / 2.0
                }
                _ => f64::from_bits(raw),
            };
            for fmt in [F16, BF16, F32] {
                for rounding in ALL {
                    for overflow in [Overflow::Ieee, Overflow::Saturate] {
                        assert_eq!(
                            round_float(x, fmt, rounding, overflow),
                            general(x, fmt, rounding, overflow),
                            "{fmt:?} {rounding:?} {overflow:?} of {x:e}"
                        );
                    }
                }
            }
            let v = (raw as i64 >> (raw % 60)) as i128;
            for fmt in [F16, BF16, F32] {
                for rounding in ALL {
                    assert_eq!(
                        int_to_float(v, fmt, rounding, Overflow::Saturate),
                        round_exact(Exact::from_int(v), fmt, rounding, Overflow::Saturate),
                        "{fmt:?} {rounding:?} of {v}"
                    );
                }
            }
            if x.is_finite() && x.abs() < 2f64.powi(120) {
                for rounding in ALL {
                    let exact = round_to_int_exact(x, rounding);
                    assert_eq!(
                        round_to_int(x, rounding),
                        Some(exact),
                        "{rounding:?} of {x:e}"
                    );
                    if x.abs() < 2f64.powi(52) {
                        let integral = round_integral(x, rounding);
                        assert_eq!(integral, exact as f64, "{rounding:?} of {x:e}");
                        assert_eq!(
                            integral.is_sign_negative(),
                            x.is_sign_negative(),
                            "sign of {rounding:?} of {x:e}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn load_store_little_endian() {
        let mut ub = vec![0u8; 16];
        store(&mut ub, 2, Dtype::Float32, 0x3f80_0000);
        assert_eq!(&ub[2..6], &[0x00, 0x00, 0x80, 0x3f]);
        assert_eq!(load(&ub, 2, Dtype::Float32), 0x3f80_0000);
        store(&mut ub, 8, Dtype::Int16, wrap_int(-2, Dtype::Int16));
        assert_eq!(&ub[8..10], &[0xfe, 0xff]);
        assert_eq!(
            int_value(Dtype::Int16, load(&ub, 8, Dtype::Int16)),
            Some(-2)
        );
        assert_eq!(
            int_value(Dtype::Uint16, load(&ub, 8, Dtype::Uint16)),
            Some(65534)
        );
        assert_eq!(float_value(Dtype::Float32, 0x3f80_0000), Some(1.0));
        assert_eq!(float_value(Dtype::Bfloat16, 0x3fc0), Some(1.5));
        assert_eq!(float_value(Dtype::Int32, 1), None);
    }

    #[test]
    fn f16_ties_at_one_plus_half_ulp() {
        // 1 + 2^-11 is exactly halfway between 1 and 1 + 2^-10.
        let x = 1.0 + 2f64.powi(-11);
        assert_eq!(f16(x, Rounding::Rint), 0x3c00); // even: 1.0
        assert_eq!(f16(x, Rounding::Round), 0x3c01); // away: 1 + 2^-10
        assert_eq!(f16(x, Rounding::Floor), 0x3c00);
        assert_eq!(f16(x, Rounding::Ceil), 0x3c01);
        assert_eq!(f16(x, Rounding::Trunc), 0x3c00);
        assert_eq!(f16(x, Rounding::Odd), 0x3c01);
        // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: even goes up.
        let y = 1.0 + 3.0 * 2f64.powi(-11);
        assert_eq!(f16(y, Rounding::Rint), 0x3c02);
        assert_eq!(f16(y, Rounding::Odd), 0x3c01);
        // Negative tie: directions mirror.
        assert_eq!(f16(-x, Rounding::Rint), 0xbc00);
        assert_eq!(f16(-x, Rounding::Round), 0xbc01);
        assert_eq!(f16(-x, Rounding::Floor), 0xbc01); // toward -inf grows the magnitude
        assert_eq!(f16(-x, Rounding::Ceil), 0xbc00);
        assert_eq!(f16(-x, Rounding::Trunc), 0xbc00);
    }

    #[test]
    fn guide_example_float_to_half() {
        // Cast page: 0.5 + 2^-12 -> RINT 0.5, FLOOR 0.5, CEIL 0.5 + 2^-11,
        // ROUND 0.5 + 2^-11, TRUNC 0.5, ODD 0.5 + 2^-11.
        let x = 0.5 + 2f64.powi(-12);
        let up = 0.5 + 2f64.powi(-11);
        let want = [0.5, 0.5, up, up, 0.5, up];
        for (r, w) in ALL.iter().zip(want) {
            assert_eq!(f16v(f16(x, *r)), w, "{r:?}");
        }
    }

    #[test]
    fn guide_example_float_to_bf16() {
        // Cast page: 0.5 + 2^-9 + 2^-11 -> RINT/CEIL/ROUND 0.5 + 2^-8, FLOOR/TRUNC 0.5.
        let x = 0.5 + 2f64.powi(-9) + 2f64.powi(-11);
        let up = 0.5 + 2f64.powi(-8);
        for (r, w) in [
            (Rounding::Rint, up),
            (Rounding::Floor, 0.5),
            (Rounding::Ceil, up),
            (Rounding::Round, up),
            (Rounding::Trunc, 0.5),
        ] {
            let bits = round_float(x, BF16, r, Overflow::Saturate);
            assert_eq!(float_value(Dtype::Bfloat16, bits), Some(w), "{r:?}");
        }
    }

    #[test]
    fn guide_example_int_to_float() {
        // int32 2^25 + 3 -> float: RINT/CEIL/ROUND 2^25 + 4, FLOOR/TRUNC 2^25.
        let v = (1i128 << 25) + 3;
        let hi = 2f64.powi(25) + 4.0;
        let lo = 2f64.powi(25);
        for (r, w) in [
            (Rounding::Rint, hi),
            (Rounding::Floor, lo),
            (Rounding::Ceil, hi),
            (Rounding::Round, hi),
            (Rounding::Trunc, lo),
        ] {
            let bits = int_to_float(v, F32, r, Overflow::Ieee);
            assert_eq!(float_value(Dtype::Float32, bits), Some(w), "{r:?}");
        }
        // int16 2^12 + 2 -> half: RINT/FLOOR/TRUNC 2^12, CEIL/ROUND 2^12 + 4.
        let v = 4096 + 2;
        assert_eq!(
            f16v(int_to_float(v, F16, Rounding::Rint, Overflow::Ieee) as u16),
            4096.0
        );
        assert_eq!(
            f16v(int_to_float(v, F16, Rounding::Ceil, Overflow::Ieee) as u16),
            4100.0
        );
        assert_eq!(
            f16v(int_to_float(v, F16, Rounding::Round, Overflow::Ieee) as u16),
            4100.0
        );
        assert_eq!(
            f16v(int_to_float(-v, F16, Rounding::Floor, Overflow::Ieee) as u16),
            -4100.0
        );
        // int64 2^35 + 2^12 + 2^11 -> float: RINT 2^35 + 2^13 (tie to even), TRUNC 2^35 + 2^12.
        let v = (1i128 << 35) + (1 << 12) + (1 << 11);
        let rint = int_to_float(v, F32, Rounding::Rint, Overflow::Ieee);
        assert_eq!(
            float_value(Dtype::Float32, rint),
            Some(2f64.powi(35) + 8192.0)
        );
        let trunc = int_to_float(v, F32, Rounding::Trunc, Overflow::Ieee);
        assert_eq!(
            float_value(Dtype::Float32, trunc),
            Some(2f64.powi(35) + 4096.0)
        );
        // int64 beyond f64's 53 bits rounds once (no double rounding):
        // 2^60 + 2^36 + 1 is just above the tie between 2^60 and 2^60 + 2^37.
        let v = (1i128 << 60) + (1 << 36) + 1;
        let bits = int_to_float(v, F32, Rounding::Rint, Overflow::Ieee);
        assert_eq!(
            float_value(Dtype::Float32, bits),
            Some(2f64.powi(60) + 2f64.powi(37))
        );
    }

    #[test]
    fn round_to_int_every_mode_with_ties_and_negatives() {
        let cases: [(f64, [i128; 6]); 6] = [
            // x, [rint, floor, ceil, round, trunc, odd]
            (0.5, [0, 0, 1, 1, 0, 1]),
            (1.5, [2, 1, 2, 2, 1, 1]),
            (2.5, [2, 2, 3, 3, 2, 3]),
            (-1.5, [-2, -2, -1, -2, -1, -1]),
            (-2.5, [-2, -3, -2, -3, -2, -3]),
            (-0.25, [0, -1, 0, 0, 0, -1]),
        ];
        for (x, want) in cases {
            for (r, w) in ALL.iter().zip(want) {
                assert_eq!(round_to_int(x, *r), Some(w), "{x} {r:?}");
            }
        }
        assert_eq!(round_to_int(f64::NAN, Rounding::Rint), None);
        assert_eq!(
            round_integral(-0.25, Rounding::Ceil).to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(round_integral(0.5, Rounding::Rint), 0.0);
        assert_eq!(round_integral(0.5, Rounding::Round), 1.0);
    }

    #[test]
    fn float_to_int_saturates() {
        // Guide: half 2^7 - 0.5 = 127.5 -> int8: RINT/CEIL/ROUND saturate to 127, FLOOR/TRUNC 127.
        for r in [
            Rounding::Rint,
            Rounding::Ceil,
            Rounding::Round,
            Rounding::Floor,
            Rounding::Trunc,
        ] {
            assert_eq!(float_to_int(127.5, r, Dtype::Int8), 127);
        }
        assert_eq!(float_to_int(-129.0, Rounding::Rint, Dtype::Int8), 0x80);
        // Guide: float 2^22 + 0.5 -> int16 saturates to 2^15 - 1.
        assert_eq!(
            float_to_int(4194304.5, Rounding::Trunc, Dtype::Int16),
            0x7fff
        );
        assert_eq!(float_to_int(-1.75, Rounding::Rint, Dtype::Uint8), 0);
        assert_eq!(float_to_int(1.75, Rounding::Trunc, Dtype::Uint8), 1);
        assert_eq!(float_to_int(f64::NAN, Rounding::Rint, Dtype::Int32), 0);
        assert_eq!(
            float_to_int(f64::INFINITY, Rounding::Rint, Dtype::Int32),
            0x7fff_ffff
        );
        assert_eq!(
            float_to_int(f64::NEG_INFINITY, Rounding::Rint, Dtype::Int64),
            1 << 63
        );
        assert_eq!(
            float_to_int(-3e9, Rounding::Rint, Dtype::Int32),
            0x8000_0000
        );
    }

    #[test]
    fn overflow_ieee_versus_saturate() {
        let big = 70000.0;
        assert_eq!(f16(big, Rounding::Rint), 0x7c00);
        assert_eq!(f16(-big, Rounding::Rint), 0xfc00);
        assert_eq!(f16(big, Rounding::Trunc), 0x7bff);
        assert_eq!(f16(big, Rounding::Floor), 0x7bff);
        assert_eq!(f16(-big, Rounding::Floor), 0xfc00);
        assert_eq!(f16(-big, Rounding::Ceil), 0xfbff);
        assert_eq!(f16(big, Rounding::Odd), 0x7bff);
        // 65520 is the f16 rounding boundary: RINT ties to even = 2^16 -> inf.
        assert_eq!(f16(65520.0, Rounding::Rint), 0x7c00);
        assert_eq!(f16(65519.0, Rounding::Rint), 0x7bff);
        let sat = |x: f64| round_float(x, F16, Rounding::Rint, Overflow::Saturate);
        assert_eq!(sat(big), 0x7bff);
        assert_eq!(sat(-big), 0xfbff);
        assert_eq!(sat(f64::INFINITY), 0x7c00); // an infinite input stays infinite
        assert_eq!(sat(f64::NAN) & 0x7e00, 0x7e00);
        let bf = round_float(1e39, BF16, Rounding::Rint, Overflow::Saturate);
        assert_eq!(bf, 0x7f7f);
    }

    #[test]
    fn subnormals_and_zeros() {
        // Smallest f16 subnormal 2^-24; half of it ties to even zero.
        assert_eq!(f16(2f64.powi(-24), Rounding::Rint), 0x0001);
        assert_eq!(f16(2f64.powi(-25), Rounding::Rint), 0x0000);
        assert_eq!(f16(2f64.powi(-25), Rounding::Round), 0x0001);
        assert_eq!(f16(-2f64.powi(-26), Rounding::Floor), 0x8001);
        assert_eq!(f16(2f64.powi(-26), Rounding::Odd), 0x0001);
        assert_eq!(f16(1e-30, Rounding::Rint), 0x0000);
        assert_eq!(f16(-0.0, Rounding::Rint), 0x8000);
        // Largest subnormal rounds up into the smallest normal.
        let x = 2f64.powi(-14) - 2f64.powi(-26);
        assert_eq!(f16(x, Rounding::Rint), 0x0400);
        // f32 subnormal and min normal.
        let bits = round_float(2f64.powi(-149), F32, Rounding::Rint, Overflow::Ieee);
        assert_eq!(bits, 1);
    }

    #[test]
    fn rne_matches_the_half_crate() {
        // Cross-check the generic path with `half` over many f32 values.
        let mut x: u32 = 0x1234_5678;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let v = f32::from_bits(x);
            if v.is_nan() {
                continue;
            }
            let ours = round_float(f64::from(v), F16, Rounding::Rint, Overflow::Ieee) as u16;
            assert_eq!(ours, half::f16::from_f32(v).to_bits(), "{v:e}");
            let ours = round_float(f64::from(v), BF16, Rounding::Rint, Overflow::Ieee) as u16;
            assert_eq!(ours, half::bf16::from_f32(v).to_bits(), "{v:e}");
            let w = f64::from(v) * 1.000000123;
            let ours = round_float(w, F32, Rounding::Rint, Overflow::Ieee) as u32;
            assert_eq!(ours, (w as f32).to_bits(), "{w:e}");
        }
    }

    #[test]
    fn integer_wrap_and_saturate() {
        assert_eq!(wrap_int(32768, Dtype::Int16), 0x8000);
        assert_eq!(wrap_int(-1, Dtype::Int32), 0xffff_ffff);
        assert_eq!(wrap_int(-1, Dtype::Uint64), u64::MAX);
        assert_eq!(saturate_int(40000, Dtype::Int16), 0x7fff);
        assert_eq!(saturate_int(-40000, Dtype::Int16), 0x8000);
        assert_eq!(saturate_int(1 << 40, Dtype::Int32), 0x7fff_ffff);
        assert_eq!(saturate_int(300, Dtype::Uint8), 255);
        assert_eq!(int_range(Dtype::Float32), None);
    }
}
