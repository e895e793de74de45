//! Cast: element type conversion with a round mode (guide 6.2.3.3.5.1).
//!
//! Legal (src, dst, RoundMode) combinations are those of the guide's table
//! for Atlas A2 (表6-373); anything else is `Fault::Unsupported`, as is
//! int4b_t. CAST_NONE means "RINT when the conversion loses precision, no
//! rounding otherwise", which is RINT in both cases. Overflow saturates
//! ("溢出默认按照饱和处理"): float targets to ±max finite (an infinite input
//! stays infinite), integer targets to their range with NaN -> 0 and
//! negative -> 0 for unsigned targets. int32 -> half is the deq-scaled
//! conversion: `round(src * scale)` with the scale set by
//! `SetDeqScale(half)`, which the header passes as the scalar operand.
//!
//! The repeat is defined by the wider type (256 B of it); each operand uses
//! its own block/repeat strides.

use ascendopt_op::Dtype;

use crate::abi::{round, AscVecOp};
use crate::numeric::{
    self, float_value, int_value, round_float, saturate_int, FloatFormat, Overflow, Rounding,
};
use crate::runtime::fault::Fault;

use super::lanes::{plan, Access, Operand, Spec};
use super::{MaskState, VecEffect};

use Dtype::{
    Bfloat16 as BF16, Float16 as F16, Float32 as F32, Int16 as I16, Int32 as I32, Int64 as I64,
    Int8 as I8, Uint8 as U8,
};

const API: &str = "Cast";

/// RINT, FLOOR, CEIL, ROUND, TRUNC.
const R5: &[u8] = &[
    round::RINT,
    round::FLOOR,
    round::CEIL,
    round::ROUND,
    round::TRUNC,
];
/// R5 and NONE.
const R5N: &[u8] = &[
    round::RINT,
    round::FLOOR,
    round::CEIL,
    round::ROUND,
    round::TRUNC,
    round::NONE,
];
/// R5, ODD and NONE (float -> half).
const R5ON: &[u8] = &[
    round::RINT,
    round::FLOOR,
    round::CEIL,
    round::ROUND,
    round::TRUNC,
    round::ODD,
    round::NONE,
];
/// NONE only (exact conversions and integer narrowing).
const N: &[u8] = &[round::NONE];
/// Any mode ("roundMode不生效": int32 -> half with SetDeqScale).
const ANY: &[u8] = &[
    round::NONE,
    round::RINT,
    round::FLOOR,
    round::CEIL,
    round::ROUND,
    round::TRUNC,
    round::ODD,
];

/// The round modes legal for `src -> dst` on Atlas A2 (guide 表6-373).
pub(crate) fn legal_rounds(src: Dtype, dst: Dtype) -> Option<&'static [u8]> {
    Some(match (src, dst) {
        (F16, I32) | (F16, I16) => R5,
        (F16, F32) => N,
        (F16, I8) | (F16, U8) => R5N,
        (F32, F32) | (F32, I32) | (F32, I64) | (F32, I16) | (F32, BF16) => R5,
        (F32, F16) => R5ON,
        (BF16, F32) => N,
        (BF16, I32) => R5,
        (U8, F16) | (I8, F16) => N,
        (I16, F16) => R5N,
        (I16, F32) => N,
        (I32, F32) => R5N,
        (I32, I16) | (I32, I64) => N,
        (I32, F16) => ANY,
        (I64, I32) => N,
        (I64, F32) => R5,
        _ => return None,
    })
}

fn rounding(code: u8) -> Rounding {
    match code {
        round::FLOOR => Rounding::Floor,
        round::CEIL => Rounding::Ceil,
        round::ROUND => Rounding::Round,
        round::TRUNC => Rounding::Trunc,
        round::ODD => Rounding::Odd,
        // NONE: RINT when lossy, exact otherwise.
        _ => Rounding::Rint,
    }
}

fn round_name(code: u8) -> &'static str {
    match code {
        round::NONE => "CAST_NONE",
        round::RINT => "CAST_RINT",
        round::FLOOR => "CAST_FLOOR",
        round::CEIL => "CAST_CEIL",
        round::ROUND => "CAST_ROUND",
        round::TRUNC => "CAST_TRUNC",
        round::ODD => "CAST_ODD",
        round::HYBRID => "CAST_HYBRID",
        _ => "an unknown round mode",
    }
}

/// Converts one element `bits` of `src` into element bits of `dst`.
/// `deq_scale` is the SetDeqScale value (int32 -> half only).
pub(crate) fn convert(bits: u64, src: Dtype, dst: Dtype, mode: Rounding, deq_scale: f64) -> u64 {
    if (src, dst) == (I32, F16) {
        let v = int_value(src, bits).unwrap_or(0) as f64 * deq_scale;
        return round_float(v, numeric::F16, Rounding::Rint, Overflow::Saturate);
    }
    match (FloatFormat::of(src), FloatFormat::of(dst)) {
        (Some(_), Some(fmt)) => {
            let x = float_value(src, bits).unwrap_or(f64::NAN);
            if src == dst {
                round_float(
                    numeric::round_integral(x, mode),
                    fmt,
                    Rounding::Rint,
                    Overflow::Saturate,
                )
            } else {
                round_float(x, fmt, mode, Overflow::Saturate)
            }
        }
        (Some(_), None) => {
            numeric::float_to_int(float_value(src, bits).unwrap_or(f64::NAN), mode, dst)
        }
        (None, Some(fmt)) => numeric::int_to_float(
            int_value(src, bits).unwrap_or(0),
            fmt,
            mode,
            Overflow::Saturate,
        ),
        (None, None) => saturate_int(int_value(src, bits).unwrap_or(0), dst),
    }
}

/// Converts `n` contiguous elements: sources of `S` bytes at `bases[1]`,
/// destinations of `D` bytes at `bases[0]` (independent of each other).
#[inline(always)]
/// The bits of every half value (by its bit pattern) converted to the byte
/// dtype `dst` with `mode`, as [`numeric::float_to_int`] does; built once per
/// process and (mode, dtype).
fn half_to_byte_table(mode: Rounding, dst: Dtype) -> &'static [u8] {
    use std::sync::OnceLock;
    static TABLES: [[OnceLock<Vec<u8>>; 2]; 6] = [const { [const { OnceLock::new() }; 2] }; 6];
    let m = Rounding::ALL.iter().position(|&r| r == mode).unwrap_or(0);
    let d = usize::from(dst == I8);
    TABLES[m][d].get_or_init(|| {
        (0..=u16::MAX)
            .map(|h| {
                let x = half::f16::from_bits(h).to_f32_const();
                numeric::float_to_int(f64::from(x), mode, dst) as u8
            })
            .collect()
    })
}

/// Elements per block of the half conversions below.
const HALF_BLOCK: usize = 256;

/// The contiguous f32 -> f16 Cast with nearest-even: a block at a time
/// through `half`'s slice conversion (F16C where the CPU has it). An
/// element whose half is not finite (NaN, or overflow, which Cast
/// saturates) takes `general`. Source and destination are disjoint (the
/// plan's independent bases).
fn f32_to_f16_rne(ub: &mut [u8], bases: &[usize], n: usize, general: impl Fn(u64) -> u64) {
    use half::slice::HalfFloatSliceExt;
    let mut singles = [0f32; HALF_BLOCK];
    let mut halves = [half::f16::ZERO; HALF_BLOCK];
    let mut start = 0;
    while start < n {
        let m = (n - start).min(HALF_BLOCK);
        let src = &ub[bases[1] + start * 4..bases[1] + (start + m) * 4];
        for (v, b) in singles[..m].iter_mut().zip(src.chunks_exact(4)) {
            *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        halves[..m].convert_from_f32_slice(&singles[..m]);
        let dst = &mut ub[bases[0] + start * 2..bases[0] + (start + m) * 2];
        for (d, (h, v)) in dst
            .chunks_exact_mut(2)
            .zip(halves[..m].iter().zip(&singles[..m]))
        {
            let bits = if h.is_finite() {
                h.to_bits()
            } else {
                general(u64::from(v.to_bits())) as u16
            };
            d.copy_from_slice(&bits.to_le_bytes());
        }
        start += m;
    }
}

/// The contiguous f16 -> f32 Cast (exact): a block at a time through
/// `half`'s slice conversion; NaN takes `general` (its bit pattern).
/// Source and destination are disjoint (the plan's independent bases).
fn f16_to_f32(ub: &mut [u8], bases: &[usize], n: usize, general: impl Fn(u64) -> u64) {
    use half::slice::HalfFloatSliceExt;
    let mut halves = [half::f16::ZERO; HALF_BLOCK];
    let mut singles = [0f32; HALF_BLOCK];
    let mut start = 0;
    while start < n {
        let m = (n - start).min(HALF_BLOCK);
        let src = &ub[bases[1] + start * 2..bases[1] + (start + m) * 2];
        for (h, b) in halves[..m].iter_mut().zip(src.chunks_exact(2)) {
            *h = half::f16::from_bits(u16::from_le_bytes([b[0], b[1]]));
        }
        halves[..m].convert_to_f32_slice(&mut singles[..m]);
        let dst = &mut ub[bases[0] + start * 4..bases[0] + (start + m) * 4];
        for (d, (h, v)) in dst
            .chunks_exact_mut(4)
            .zip(halves[..m].iter().zip(&singles[..m]))
        {
            let bits = if h.is_nan() {
                general(u64::from(h.to_bits())) as u32
            } else {
                v.to_bits()
            };
            d.copy_from_slice(&bits.to_le_bytes());
        }
        start += m;
    }
}

fn run<const S: usize, const D: usize>(
    ub: &mut [u8],
    bases: &[usize],
    n: usize,
    conv: impl Fn(u64) -> u64,
) {
    for i in 0..n {
        let at = bases[1] + i * S;
        let mut raw = [0u8; 8];
        raw[..S].copy_from_slice(&ub[at..at + S]);
        let bits = conv(u64::from_le_bytes(raw));
        let at = bases[0] + i * D;
        ub[at..at + D].copy_from_slice(&bits.to_le_bytes()[..D]);
    }
}

/// Executes one Cast instruction.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    let dtype = |code: u8, what: &str| {
        Dtype::from_abi_code(code).ok_or_else(|| Fault::InvalidArg {
            api: API,
            what: format!("unknown {what} dtype code {code}"),
        })
    };
    let dst = dtype(op.dtype, "destination")?;
    let src = dtype(op.src_dtype, "source")?;
    let legal = legal_rounds(src, dst).ok_or_else(|| Fault::Unsupported {
        api: API,
        what: format!("{src} -> {dst} on Atlas A2"),
    })?;
    if !legal.contains(&op.round) {
        return Err(Fault::Unsupported {
            api: API,
            what: format!("{} for {src} -> {dst} on Atlas A2", round_name(op.round)),
        });
    }
    let deq_scale = if (src, dst) == (I32, F16) {
        if Dtype::from_abi_code(op.scalar_dtype) != Some(F16) {
            return Err(Fault::InvalidArg {
                api: API,
                what: "int32 -> half needs the scale of SetDeqScale(half)".into(),
            });
        }
        float_value(F16, op.scalar_bits & 0xffff).unwrap_or(f64::NAN)
    } else {
        1.0
    };
    let operands = [
        Operand::dst(op, dst.size() as u32, Access::Write),
        Operand::src0(op, src.size() as u32),
    ];
    let plan = plan(&Spec::widest(API, &operands), op, mask, ub.len())?;
    let mode = rounding(op.round);
    if let Some(bases) = plan.independent_bases() {
        let (d, s, n) = (dst.size(), src.size(), plan.len());
        let conv = move |bits: u64| convert(bits, src, dst, mode, deq_scale);
        match (src, dst) {
            // Exact widenings (NaN keeps the general path's bits).
            (F16, F32) => f16_to_f32(ub, bases, n, conv),
            // Narrowing to half with nearest-even: F16C a block at a time;
            // overflow (saturating) and NaN keep the general path.
            (F32, F16) if mode == Rounding::Rint => f32_to_f16_rne(ub, bases, n, conv),
            // bf16 <-> f32: a shift one way, `half`'s nearest-even the
            // other (overflow, which Cast saturates, and NaN keep the
            // general path).
            (BF16, F32) => run::<2, 4>(ub, bases, n, |bits| {
                let h = half::bf16::from_bits(bits as u16);
                if h.is_nan() {
                    conv(bits)
                } else {
                    u64::from(h.to_f32().to_bits())
                }
            }),
            (F32, BF16) if mode == Rounding::Rint => run::<4, 2>(ub, bases, n, |bits| {
                let h = half::bf16::from_f32(f32::from_bits(bits as u32));
                if h.is_finite() {
                    u64::from(h.to_bits())
                } else {
                    conv(bits)
                }
            }),
            // f32 to an integral f32: rounded in f64 (exact: the result is
            // an integer no larger than the input, or the input itself;
            // without a libm call per element on CPUs before SSE4.1); NaN
            // and infinities keep the general path.
            (F32, F32) if mode != Rounding::Odd => run::<4, 4>(ub, bases, n, |bits| {
                let x = f32::from_bits(bits as u32);
                if !x.is_finite() {
                    return conv(bits);
                }
                let r = numeric::round_integral(f64::from(x), mode) as f32;
                u64::from(r.to_bits())
            }),
            (U8 | I8, F16) => {
                // Every byte value is exact in half: 256 entries.
                let signed = src == I8;
                let table: [u16; 256] = std::array::from_fn(|b| {
                    let v = if signed {
                        f32::from(b as u8 as i8)
                    } else {
                        b as f32
                    };
                    half::f16::from_f32_const(v).to_bits()
                });
                run::<1, 2>(ub, bases, n, |bits| u64::from(table[bits as u8 as usize]))
            }
            // Half to a byte: a table over every half bit pattern.
            (F16, U8 | I8) => {
                let table = half_to_byte_table(mode, dst);
                run::<2, 1>(ub, bases, n, |bits| u64::from(table[bits as u16 as usize]))
            }
            // Float to integer: convert's own path without its dispatch.
            (F16, I16 | I32) => {
                let to_int = move |bits: u64| {
                    let x = numeric::half_to_f32(bits as u16);
                    numeric::float_to_int(f64::from(x), mode, dst)
                };
                match dst.size() {
                    1 => run::<2, 1>(ub, bases, n, to_int),
                    2 => run::<2, 2>(ub, bases, n, to_int),
                    _ => run::<2, 4>(ub, bases, n, to_int),
                }
            }
            (F32, I32) => run::<4, 4>(ub, bases, n, move |bits| {
                numeric::float_to_int(f64::from(f32::from_bits(bits as u32)), mode, dst)
            }),
            _ => match (s, d) {
                (2, 1) => run::<2, 1>(ub, bases, n, conv),
                (4, 4) => run::<4, 4>(ub, bases, n, conv),
                (4, 2) => run::<4, 2>(ub, bases, n, conv),
                (2, 4) => run::<2, 4>(ub, bases, n, conv),
                (2, 2) => run::<2, 2>(ub, bases, n, conv),
                _ => {
                    for i in 0..n {
                        let bits = numeric::load_bits(ub, bases[1] + i * s, s);
                        numeric::store_bits(ub, bases[0] + i * d, d, conv(bits));
                    }
                }
            },
        }
        return Ok(plan.effect());
    }
    for chunk in plan.repeat_chunks() {
        let results: Vec<u64> = chunk
            .clone()
            .map(|i| {
                convert(
                    numeric::load(ub, plan.addr(i, 1), src),
                    src,
                    dst,
                    mode,
                    deq_scale,
                )
            })
            .collect();
        for (i, bits) in chunk.zip(results) {
            numeric::store(ub, plan.addr(i, 0), dst, bits);
        }
    }
    Ok(plan.effect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::form;
    use crate::numeric::wrap_int;
    use crate::runtime::vec::lanes::tests::{blank_op, ub};

    const POISON: u8 = 0x5a;

    fn h(x: f64) -> u64 {
        u64::from(half::f16::from_f64(x).to_bits())
    }

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    fn bf(x: f32) -> u64 {
        u64::from(half::bf16::from_f32(x).to_bits())
    }

    const MODES: [u8; 5] = [
        round::RINT,
        round::FLOOR,
        round::CEIL,
        round::ROUND,
        round::TRUNC,
    ];

    fn cast_op(src: Dtype, dst: Dtype, mode: u8, count: u64) -> AscVecOp {
        let mut op = blank_op();
        op.op = 70;
        op.dtype = dst.abi_code();
        op.src_dtype = src.abi_code();
        op.round = mode;
        op.dst = ub(0, op.dtype);
        op.src0 = ub(2048, op.src_dtype);
        op.count = count;
        op
    }

    /// Casts `input` (count form) and returns the dst elements.
    fn cast(src: Dtype, dst: Dtype, mode: u8, input: &[u64]) -> Result<Vec<u64>, Fault> {
        run_cast(cast_op(src, dst, mode, input.len() as u64), input)
    }

    fn run_cast(op: AscVecOp, input: &[u64]) -> Result<Vec<u64>, Fault> {
        let src = Dtype::from_abi_code(op.src_dtype).unwrap();
        let dst = Dtype::from_abi_code(op.dtype).unwrap();
        let mut mem = vec![POISON; 8192];
        for (i, b) in input.iter().enumerate() {
            numeric::store(&mut mem, 2048 + i * src.size(), src, *b);
        }
        super::super::execute(&mut mem, &MaskState::reset(), &op)?;
        Ok((0..input.len())
            .map(|i| numeric::load(&mem, i * dst.size(), dst))
            .collect())
    }

    /// The contiguous fast paths give `convert`'s bits for every source bit
    /// pattern of the pairs they specialise (NaNs and infinities included).
    #[test]
    fn contiguous_casts_match_the_element_conversion() {
        let pairs = [
            (F16, F32),
            (U8, F16),
            (I8, F16),
            (F16, U8),
            (F16, I8),
            (F32, F16),
            (F32, I32),
            (BF16, F32),
            (F32, BF16),
            (F32, F32),
        ];
        for (src, dst) in pairs {
            for &mode in ANY {
                if !legal_rounds(src, dst).is_some_and(|l| l.contains(&mode)) {
                    continue;
                }
                let patterns: Vec<u64> = match src.size() {
                    1 => (0..256).collect(),
                    2 => (0..65536).collect(),
                    // Spread patterns, and every f16 midpoint (ties) and
                    // its neighbours as f32.
                    _ => (0..65536u64)
                        .map(|i| (i * 0x9E37_79B9) & 0xffff_ffff)
                        .chain((0..65536u64).flat_map(|h| {
                            let f = u64::from(numeric::half_to_f32(h as u16).to_bits());
                            [f + 0xfff, f + 0x1000, f + 0x1001]
                        }))
                        // bf16 midpoints, and halves and near-halves of
                        // small integers (signed zeros included).
                        .chain((0..65536u64).flat_map(|b| {
                            [(b << 16) + 0x7fff, (b << 16) + 0x8000, (b << 16) + 0x8001]
                        }))
                        .chain((-2000..2000).flat_map(|k| {
                            let x = k as f32 / 4.0;
                            [x.to_bits(), x.to_bits() + 1, (-x).to_bits()].map(u64::from)
                        }))
                        .collect(),
                };
                for chunk in patterns.chunks(512) {
                    let got = cast(src, dst, mode, chunk).unwrap();
                    for (&bits, &out) in chunk.iter().zip(&got) {
                        let want = convert(bits, src, dst, rounding(mode), 1.0);
                        assert_eq!(out, want, "{src}->{dst} mode {mode} of {bits:#x}");
                    }
                }
            }
        }
    }

    /// A narrowing Cast onto its own source (the same UB address, operands
    /// of different sizes overlapping) gives the element conversion's bits.
    #[test]
    fn in_place_narrowing_matches_the_element_conversion() {
        let input: Vec<u64> = (0..600u64)
            .map(|i| (i * 0x9E37_79B9 + 0x3f80_0000) & 0xffff_ffff)
            .collect();
        let mut op = cast_op(F32, F16, round::RINT, input.len() as u64);
        op.dst = ub(2048, op.dtype);
        let mut mem = vec![POISON; 8192];
        for (i, b) in input.iter().enumerate() {
            numeric::store(&mut mem, 2048 + i * 4, F32, *b);
        }
        super::super::execute(&mut mem, &MaskState::reset(), &op).unwrap();
        for (i, &bits) in input.iter().enumerate() {
            let want = convert(bits, F32, F16, Rounding::Rint, 1.0);
            assert_eq!(numeric::load(&mem, 2048 + i * 2, F16), want, "element {i}");
        }
    }

    /// Expected outputs per mode in MODES order for one input.
    fn each_mode(src: Dtype, dst: Dtype, input: u64, want: [u64; 5]) {
        for (mode, w) in MODES.iter().zip(want) {
            assert_eq!(
                cast(src, dst, *mode, &[input]).unwrap(),
                vec![w],
                "{src}->{dst} {}",
                round_name(*mode)
            );
        }
    }

    #[test]
    fn guide_examples_per_pair() {
        let i = |v: i128, d: Dtype| wrap_int(v, d);
        // half -> int32, input -1.5: RINT -2, FLOOR -2, CEIL -1, ROUND -2, TRUNC -1.
        each_mode(
            F16,
            I32,
            h(-1.5),
            [i(-2, I32), i(-2, I32), i(-1, I32), i(-2, I32), i(-1, I32)],
        );
        // half -> int16, 2^7 - 0.5: 128, 127, 128, 128, 127.
        each_mode(F16, I16, h(127.5), [128, 127, 128, 128, 127]);
        // half -> int8, 2^7 - 0.5: saturates to 127 in every mode.
        each_mode(F16, I8, h(127.5), [127; 5]);
        // half -> uint8, 1.75: 2, 1, 2, 2, 1.
        each_mode(F16, U8, h(1.75), [2, 1, 2, 2, 1]);
        // float -> float, 0.5: 0, 0, 1, 1, 0.
        each_mode(F32, F32, f(0.5), [f(0.0), f(0.0), f(1.0), f(1.0), f(0.0)]);
        // float -> half, 0.5 + 2^-12: 0.5, 0.5, 0.5 + 2^-11, 0.5 + 2^-11, 0.5.
        let up = h(0.5 + 2f64.powi(-11));
        each_mode(
            F32,
            F16,
            f(0.5 + 2f32.powi(-12)),
            [h(0.5), h(0.5), up, up, h(0.5)],
        );
        assert_eq!(
            cast(F32, F16, round::ODD, &[f(0.5 + 2f32.powi(-12))]).unwrap(),
            vec![up]
        );
        assert_eq!(
            cast(F32, F16, round::NONE, &[f(0.5 + 2f32.powi(-12))]).unwrap(),
            vec![h(0.5)]
        );
        // float -> int64 / int32, 2^22 + 0.5: 2^22, 2^22, 2^22 + 1, 2^22 + 1, 2^22.
        let (lo, hi) = (1u64 << 22, (1u64 << 22) + 1);
        each_mode(F32, I64, f(4194304.5), [lo, lo, hi, hi, lo]);
        each_mode(F32, I32, f(4194304.5), [lo, lo, hi, hi, lo]);
        // float -> int16, 2^22 + 0.5: saturates to 2^15 - 1.
        each_mode(F32, I16, f(4194304.5), [0x7fff; 5]);
        // float -> bf16, 0.5 + 2^-9 + 2^-11: 0.5 + 2^-8, 0.5, 0.5 + 2^-8, 0.5 + 2^-8, 0.5.
        let x = f(0.5 + 2f32.powi(-9) + 2f32.powi(-11));
        let up = bf(0.5 + 2f32.powi(-8));
        each_mode(F32, BF16, x, [up, bf(0.5), up, up, bf(0.5)]);
        // bf16 -> int32, 2^6 + 0.5: 64, 64, 65, 65, 64.
        each_mode(BF16, I32, bf(64.5), [64, 64, 65, 65, 64]);
        // int16 -> half, 2^12 + 2: 4096, 4096, 4100, 4100, 4096.
        each_mode(
            I16,
            F16,
            4098,
            [h(4096.0), h(4096.0), h(4100.0), h(4100.0), h(4096.0)],
        );
        // int32 -> float, 2^25 + 3: 2^25 + 4, 2^25, 2^25 + 4, 2^25 + 4, 2^25.
        let (lo, hi) = (f(33554432.0), f(33554436.0));
        each_mode(I32, F32, (1 << 25) + 3, [hi, lo, hi, hi, lo]);
        // int64 -> float, 2^35 + 2^12 + 2^11: RINT/CEIL/ROUND 2^35 + 2^13, FLOOR/TRUNC 2^35 + 2^12.
        let (lo, hi) = (f(34359742464.0), f(34359746560.0));
        each_mode(
            I64,
            F32,
            (1 << 35) + (1 << 12) + (1 << 11),
            [hi, lo, hi, hi, lo],
        );
    }

    #[test]
    fn exact_and_saturating_conversions() {
        let i = |v: i128, d: Dtype| wrap_int(v, d);
        assert_eq!(
            cast(F16, F32, round::NONE, &[h(1.5 - 2f64.powi(-10))]).unwrap(),
            vec![f(1.5 - 2f32.powi(-10))]
        );
        assert_eq!(
            cast(BF16, F32, round::NONE, &[bf(1.5 - 2f32.powi(-6))]).unwrap(),
            vec![f(1.5 - 2f32.powi(-6))]
        );
        assert_eq!(
            cast(I8, F16, round::NONE, &[i(-1, I8), 127]).unwrap(),
            vec![h(-1.0), h(127.0)]
        );
        assert_eq!(cast(U8, F16, round::NONE, &[255]).unwrap(), vec![h(255.0)]);
        assert_eq!(
            cast(I16, F32, round::NONE, &[i(-32768, I16)]).unwrap(),
            vec![f(-32768.0)]
        );
        assert_eq!(
            cast(I32, I16, round::NONE, &[0x7fff_ffff, i(-70000, I32)]).unwrap(),
            vec![0x7fff, 0x8000]
        );
        assert_eq!(
            cast(I32, I64, round::NONE, &[i(-2, I32)]).unwrap(),
            vec![i(-2, I64)]
        );
        assert_eq!(
            cast(I64, I32, round::NONE, &[1 << 31]).unwrap(),
            vec![0x7fff_ffff]
        );
        // Overflow saturates: float -> half 1e6 -> 65504; -inf stays -inf; NaN -> int 0.
        let out = cast(
            F32,
            F16,
            round::RINT,
            &[f(1e6), f(-1e6), f(f32::NEG_INFINITY)],
        )
        .unwrap();
        assert_eq!(out, vec![0x7bff, 0xfbff, 0xfc00]);
        assert_eq!(
            cast(F32, I32, round::RINT, &[f(f32::NAN), f(3e9)]).unwrap(),
            vec![0, 0x7fff_ffff]
        );
        assert_eq!(
            cast(F16, U8, round::RINT, &[h(-3.0), h(300.0)]).unwrap(),
            vec![0, 255]
        );
        // float -> float keeps the sign of a zero result.
        assert_eq!(
            cast(F32, F32, round::CEIL, &[f(-0.5)]).unwrap(),
            vec![f(-0.0)]
        );
    }

    #[test]
    fn int32_to_half_uses_the_deq_scale() {
        let mut op = cast_op(I32, F16, round::NONE, 3);
        op.scalar_dtype = F16.abi_code();
        op.scalar_bits = h(0.5);
        let out = run_cast(op, &[1000, wrap_int(-3, I32), 1 << 20]).unwrap();
        assert_eq!(out, vec![h(500.0), h(-1.5), 0x7bff]);
        let unscaled = cast(I32, F16, round::NONE, &[1]);
        assert!(matches!(unscaled, Err(Fault::InvalidArg { .. })));
    }

    #[test]
    fn illegal_pairs_and_modes() {
        let unsupported =
            |src, dst, mode| matches!(cast(src, dst, mode, &[0]), Err(Fault::Unsupported { .. }));
        assert!(unsupported(F16, I32, round::NONE));
        assert!(unsupported(F16, F32, round::RINT));
        assert!(unsupported(F32, F16, round::HYBRID));
        assert!(unsupported(F32, I32, round::ODD));
        assert!(unsupported(BF16, F16, round::RINT));
        assert!(unsupported(F16, BF16, round::RINT));
        assert!(unsupported(I8, I16, round::NONE));
        assert!(unsupported(F32, Dtype::Float64, round::RINT));
    }

    #[test]
    fn mask_form_uses_the_wider_type_and_per_operand_strides() {
        // Guide sample: half -> int32 CEIL, mask 64, repeat 2, {1, 1, 8, 4}.
        let input = [1.4, 1.5, 1.6, 2.4, 2.5, 2.6];
        let src: Vec<u64> = (0..128).map(|k| h(input[k % 6])).collect();
        let mut op = cast_op(F16, I32, round::CEIL, 0);
        op.form = form::MASK_CONT;
        op.mask = [64, 0];
        op.repeat = 2;
        (op.dst_rep, op.src0_rep) = (8, 4);
        let out = run_cast(op, &src).unwrap();
        let want: Vec<u64> = (0..128).map(|k| [2, 2, 2, 3, 3, 3][k % 6]).collect();
        assert_eq!(out, want);
        for (mode, table) in [
            (round::RINT, [1, 2, 2, 2, 2, 3]),
            (round::FLOOR, [1, 1, 1, 2, 2, 2]),
            (round::ROUND, [1, 2, 2, 2, 3, 3]),
            (round::TRUNC, [1, 1, 1, 2, 2, 2]),
        ] {
            op.round = mode;
            let out = run_cast(op, &src).unwrap();
            let want: Vec<u64> = (0..128).map(|k| table[k % 6]).collect();
            assert_eq!(out, want, "{}", round_name(mode));
        }

        // float -> half, mask 32 of 64 lanes, repeat 2, {1, 1, 4, 8}: the
        // second repeat's halves start 128 bytes after the first.
        let src: Vec<u64> = (0..128).map(|k| f(k as f32)).collect();
        let mut op = cast_op(F32, F16, round::NONE, 0);
        op.form = form::MASK_CONT;
        op.mask = [32, 0];
        op.repeat = 2;
        (op.dst_rep, op.src0_rep) = (4, 8);
        let mut mem = vec![POISON; 8192];
        for (k, b) in src.iter().enumerate() {
            numeric::store(&mut mem, 2048 + 4 * k, F32, *b);
        }
        let eff = super::super::execute(&mut mem, &MaskState::reset(), &op).unwrap();
        assert_eq!((eff.repeats, eff.elems), (2, 64));
        let got = |k: usize| numeric::load(&mem, 2 * k, F16);
        assert_eq!((got(0), got(31), got(32)), (h(0.0), h(31.0), 0x5a5a));
        assert_eq!((got(64), got(95), got(96)), (h(64.0), h(95.0), 0x5a5a));
    }
}
