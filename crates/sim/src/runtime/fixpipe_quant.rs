//! The conversions Fixpipe applies to each L0C element on its way out
//! (guide 6.2.3.2.1.12, table 6-197 quantPre and reluEn; the quantisation
//! parameter's format from 6.2.4.2.1.33 SetQuantScalar and the float32
//! note of 6.2.3.2.1.12's constraints).
//!
//! The guide's facts:
//!
//! - F322F16 / F322BF16: float to half / bfloat16 in CAST_RINT (round to
//!   nearest, ties to even);
//! - DEQF16 (scalar) / VDEQF16 (one parameter per column): int32 to half,
//!   "the result does not support INF/NAN";
//! - QF322B8_PRE / VQF322B8_PRE: float to int8/uint8; REQ8 / VREQ8: int32
//!   to int8/uint8;
//! - a 64-bit parameter holds the scale as a float32 whose mantissa keeps
//!   only its top 10 bits (the 13 low bits are cleared: the processor's
//!   float32 has 1 + 8 + 10 bits) in bits 0-31, and a 9-bit signed offset
//!   in bits 37-45 (bit 46 set by SetQuantScalar);
//! - ReLU is applied before ClipRelu, which comes after the quantisation.
//!
//! Our reading where the guide is silent: the scale multiplies the value in
//! float32 (an int32 converted to float32 first, to nearest even); for the
//! 8-bit results the product is rounded to nearest even, then the integer
//! offset is added and the sum saturated to [-128, 127] (int8) or [0, 255]
//! (uint8), NaN giving 0 (so a tie rounds by the product's parity, not the
//! sum's); the DEQF16 result saturates at +-65504 instead of
//! overflowing to infinity ("no INF/NAN"), NaN giving 0; ReLU acts on the
//! quantised value (after scale and offset), like ClipRelu after it.

use ascendopt_op::Dtype;

/// One quantisation parameter (a `deqScalar` or a `cbufWorkspace` entry).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantParam {
    /// The scale with its mantissa cut to 10 bits.
    pub scale: f32,
    /// The offset (-256..=255).
    pub offset: i32,
}

impl QuantParam {
    /// Decodes the 64-bit form.
    pub fn from_bits(bits: u64) -> QuantParam {
        let scale = f32::from_bits((bits as u32) & 0xffff_e000);
        let raw = ((bits >> 37) & 0x1ff) as i32;
        let offset = if raw >= 256 { raw - 512 } else { raw };
        QuantParam { scale, offset }
    }
}

/// What Fixpipe does to an element, by quantPre.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// NoQuant: float stays float, int32 stays int32.
    Keep,
    /// F322F16.
    ToHalf,
    /// F322BF16.
    ToBf16,
    /// DEQF16 / VDEQF16: int32 x scale -> half.
    DeqHalf,
    /// QF322B8_PRE / VQF322B8_PRE (from float) and REQ8 / VREQ8 (from
    /// int32): x x scale + offset -> int8 or uint8.
    Quant8,
}

/// Rounds to nearest, ties to even.
fn rint(v: f32) -> f32 {
    v.round_ties_even()
}

/// Converts one L0C element (`raw`, int32 or float as `src`) to `dst`'s
/// bytes, appended to `out`. `param` is the element's quantisation
/// parameter (ignored by the modes without one).
pub fn convert(
    conv: Conversion,
    src: Dtype,
    dst: Dtype,
    raw: [u8; 4],
    param: QuantParam,
    relu: bool,
    out: &mut Vec<u8>,
) {
    let as_f32 = |raw: [u8; 4]| {
        if src == Dtype::Int32 {
            i32::from_le_bytes(raw) as f32
        } else {
            f32::from_le_bytes(raw)
        }
    };
    match conv {
        Conversion::Keep if src == Dtype::Int32 => {
            let mut v = i32::from_le_bytes(raw);
            if relu {
                v = v.max(0);
            }
            out.extend_from_slice(&v.to_le_bytes());
        }
        Conversion::Keep | Conversion::ToHalf | Conversion::ToBf16 => {
            let mut v = f32::from_le_bytes(raw);
            if relu && v < 0.0 {
                v = 0.0;
            }
            match conv {
                Conversion::ToHalf => out.extend_from_slice(&half::f16::from_f32(v).to_le_bytes()),
                Conversion::ToBf16 => out.extend_from_slice(&half::bf16::from_f32(v).to_le_bytes()),
                _ => out.extend_from_slice(&v.to_le_bytes()),
            }
        }
        Conversion::DeqHalf => {
            let v = as_f32(raw) * param.scale;
            let mut h = if v.is_nan() {
                half::f16::ZERO
            } else {
                half::f16::from_f32(v.clamp(-65504.0, 65504.0))
            };
            if relu && h.to_f32() < 0.0 {
                h = half::f16::ZERO;
            }
            out.extend_from_slice(&h.to_le_bytes());
        }
        Conversion::Quant8 => {
            let v = rint(as_f32(raw) * param.scale);
            let (lo, hi) = if dst == Dtype::Uint8 {
                (0.0, 255.0)
            } else {
                (-128.0, 127.0)
            };
            // The integer offset joins the rounded value (f64: exact).
            let mut q = if v.is_nan() {
                0.0
            } else {
                (f64::from(v) + f64::from(param.offset)).clamp(lo, hi)
            };
            if relu && q < 0.0 {
                q = 0.0;
            }
            let byte = if dst == Dtype::Uint8 {
                q as u8
            } else {
                q as i8 as u8
            };
            out.push(byte);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(conv: Conversion, src: Dtype, dst: Dtype, raw: [u8; 4], p: u64, relu: bool) -> Vec<u8> {
        let mut out = Vec::new();
        convert(
            conv,
            src,
            dst,
            raw,
            QuantParam::from_bits(p),
            relu,
            &mut out,
        );
        out
    }

    fn s32(v: i32) -> [u8; 4] {
        v.to_le_bytes()
    }

    fn f32b(v: f32) -> [u8; 4] {
        v.to_le_bytes()
    }

    /// The guide's way to build a parameter: the float's bits as int32,
    /// widened (sign-extended) to uint64.
    fn scale(v: f32) -> u64 {
        v.to_bits() as i32 as i64 as u64
    }

    /// SetQuantScalar's format (6.2.4.2.1.33): scale bits 0-31, bit 46 set,
    /// offset in bits 37-45.
    fn with_offset(v: f32, offset: i32) -> u64 {
        ((u64::from(v.to_bits()) | (1 << 46)) & 0x4000_ffff_ffff)
            | (((offset as u64) & 0x1ff) << 37)
    }

    #[test]
    fn parameters_keep_a_ten_bit_mantissa_and_a_nine_bit_offset() {
        // 0.1 = 0x3dcccccd; the 13 low bits cleared: 0x3dccc000.
        let p = QuantParam::from_bits(scale(0.1));
        assert_eq!(p.scale.to_bits(), 0x3dcc_c000);
        assert_eq!(p.offset, 0);
        assert_eq!(QuantParam::from_bits(with_offset(0.5, -3)).offset, -3);
        assert_eq!(QuantParam::from_bits(with_offset(0.5, 255)).offset, 255);
        assert_eq!(QuantParam::from_bits(with_offset(0.5, -256)).offset, -256);
        assert_eq!(QuantParam::from_bits(with_offset(0.5, 7)).scale, 0.5);
    }

    /// DEQF16: 1000 x 0.5 = 500; -7 x 0.25 = -1.75; 100000 x 1 saturates at
    /// 65504 (no infinity); 3 x 0.1 with the cut scale 0x3dccc000 =
    /// 0.0999755859375: 0.2999267578125 = 1228.5 steps of 2^-12 (the half
    /// step between 0.25 and 0.5), rounded to half, ties to even: 1228 /
    /// 4096.
    #[test]
    fn deqf16_scales_int32_to_half_and_saturates() {
        let h = |raw, p, relu| {
            let b = one(
                Conversion::DeqHalf,
                Dtype::Int32,
                Dtype::Float16,
                raw,
                p,
                relu,
            );
            half::f16::from_le_bytes([b[0], b[1]]).to_f32()
        };
        assert_eq!(h(s32(1000), scale(0.5), false), 500.0);
        assert_eq!(h(s32(-7), scale(0.25), false), -1.75);
        assert_eq!(h(s32(-7), scale(0.25), true), 0.0);
        assert_eq!(h(s32(100_000), scale(1.0), false), 65504.0);
        assert_eq!(h(s32(-100_000), scale(1.0), false), -65504.0);
        assert_eq!(h(s32(3), scale(0.1), false), 1228.0 / 4096.0);
        // A negative scale, then ReLU: -4 x -0.5 = 2 survives.
        assert_eq!(h(s32(-4), scale(-0.5), true), 2.0);
    }

    /// REQ8: 37 x 0.25 = 9.25 -> 9; 10 x 0.25 = 2.5 -> 2 (ties to even);
    /// 14 x 0.25 = 3.5 -> 4; with offset -3: 9.25 - 3 = 6.25 -> 6; 1000 x 1
    /// saturates at 127 (int8) or 255 (uint8); -1000 at -128 or 0.
    #[test]
    fn req8_scales_offsets_rounds_and_saturates() {
        let q = |raw, p, dst, relu| one(Conversion::Quant8, Dtype::Int32, dst, raw, p, relu)[0];
        let s8 = |raw, p| q(raw, p, Dtype::Int8, false) as i8;
        assert_eq!(s8(s32(37), scale(0.25)), 9);
        assert_eq!(s8(s32(10), scale(0.25)), 2);
        assert_eq!(s8(s32(14), scale(0.25)), 4);
        assert_eq!(s8(s32(-10), scale(0.25)), -2);
        assert_eq!(s8(s32(37), with_offset(0.25, -3)), 6);
        // A tie: 10 x 0.25 = 2.5 -> 2 (even), then + 1 = 3 (not round(3.5) = 4).
        assert_eq!(s8(s32(10), with_offset(0.25, 1)), 3);
        assert_eq!(s8(s32(-10), with_offset(0.25, -1)), -3);
        assert_eq!(s8(s32(1000), scale(1.0)), 127);
        assert_eq!(s8(s32(-1000), scale(1.0)), -128);
        assert_eq!(q(s32(1000), scale(1.0), Dtype::Uint8, false), 255);
        assert_eq!(q(s32(-1000), scale(1.0), Dtype::Uint8, false), 0);
        assert_eq!(q(s32(-20), scale(0.25), Dtype::Int8, true), 0);
        // QF322B8_PRE from float: 2.7 x 2 = 5.4 -> 5, + offset 100 -> 105.
        let f = one(
            Conversion::Quant8,
            Dtype::Float32,
            Dtype::Int8,
            f32b(2.7),
            with_offset(2.0, 100),
            false,
        );
        assert_eq!(f[0] as i8, 105);
        let nan = one(
            Conversion::Quant8,
            Dtype::Float32,
            Dtype::Int8,
            f32b(f32::NAN),
            scale(1.0),
            false,
        );
        assert_eq!(nan[0], 0);
    }

    #[test]
    fn casts_round_to_nearest_even_and_relu_clears_negatives() {
        // 1 + 2^-11 is halfway between two halves: ties to even gives 1.
        let b = one(
            Conversion::ToHalf,
            Dtype::Float32,
            Dtype::Float16,
            f32b(1.0 + 2f32.powi(-11)),
            0,
            false,
        );
        assert_eq!(half::f16::from_le_bytes([b[0], b[1]]).to_f32(), 1.0);
        let b = one(
            Conversion::ToBf16,
            Dtype::Float32,
            Dtype::Bfloat16,
            f32b(-3.0),
            0,
            true,
        );
        assert_eq!(half::bf16::from_le_bytes([b[0], b[1]]).to_f32(), 0.0);
        let b = one(
            Conversion::Keep,
            Dtype::Int32,
            Dtype::Int32,
            s32(-5),
            0,
            true,
        );
        assert_eq!(b, 0i32.to_le_bytes());
        let b = one(
            Conversion::Keep,
            Dtype::Int32,
            Dtype::Int32,
            s32(-5),
            0,
            false,
        );
        assert_eq!(b, (-5i32).to_le_bytes());
    }

    #[test]
    fn rint_ties_to_even() {
        assert_eq!(
            [0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6].map(rint),
            [0.0, 2.0, 2.0, -0.0, -2.0, 2.0, 3.0]
        );
    }
}
