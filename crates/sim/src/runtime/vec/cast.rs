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
    Bfloat16 as BF16, Float16 as F16, Float32 as F32, Int16 as I16, Int32 as I32, Int64 as I64, Int8 as I8,
    Uint8 as U8,
};

const API: &str = "Cast";

/// RINT, FLOOR, CEIL, ROUND, TRUNC.
const R5: &[u8] = &[round::RINT, round::FLOOR, round::CEIL, round::ROUND, round::TRUNC];
/// R5 and NONE.
const R5N: &[u8] = &[round::RINT, round::FLOOR, round::CEIL, round::ROUND, round::TRUNC, round::NONE];
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
                round_float(numeric::round_integral(x, mode), fmt, Rounding::Rint, Overflow::Saturate)
            } else {
                round_float(x, fmt, mode, Overflow::Saturate)
            }
        }
        (Some(_), None) => numeric::float_to_int(float_value(src, bits).unwrap_or(f64::NAN), mode, dst),
        (None, Some(fmt)) => numeric::int_to_float(int_value(src, bits).unwrap_or(0), fmt, mode, Overflow::Saturate),
        (None, None) => saturate_int(int_value(src, bits).unwrap_or(0), dst),
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
    for chunk in plan.repeat_chunks() {
        let results: Vec<u64> = chunk
            .clone()
            .map(|i| convert(numeric::load(ub, plan.addr(i, 1), src), src, dst, mode, deq_scale))
            .collect();
        for (i, bits) in chunk.zip(results) {
            numeric::store(ub, plan.addr(i, 0), dst, bits);
        }
    }
    Ok(plan.effect())
}
