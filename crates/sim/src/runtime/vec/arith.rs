//! Arithmetic vector families: binary (Add, Sub, Mul, Div, Max, Min, And,
//! Or, AddRelu, SubRelu, FusedMulAdd, MulAddDst), unary (Exp, Ln, Abs,
//! Reciprocal, Sqrt, Rsqrt, Relu, Not, Neg), vector-scalar (Adds, Muls,
//! Maxs, Mins, Subs, Divs, LeakyRelu, Axpy, ShiftLeft, ShiftRight) and
//! Duplicate.
//!
//! Numerics: a float result is computed in f64 from the exact inputs and
//! rounded once to the destination type, nearest-even, IEEE overflow (for
//! f16/bf16 the f64 result of + - * is exact; for f32 the single rounding
//! of + - * / sqrt equals native f32 arithmetic). NaN propagates through
//! Max/Min. Integer results wrap to the destination width. Subnormals are
//! kept (no flush to zero). Each repeat reads all its inputs before it
//! writes, like the vector unit.
//!
//! Supported dtypes are those the guide lists for Atlas A2 (6.2.3.3.1-3,
//! 6.2.3.3.8.1); Subs, Divs and Neg exist only on Atlas 350 in the guide
//! and are given the dtypes of their A2 siblings (Adds / Div / Muls).

use ascendopt_op::Dtype;

use crate::abi::AscVecOp;
use crate::numeric::{self, float_value, int_value, wrap_int};
use crate::runtime::fault::Fault;
use crate::trace::VecOp;

use super::lanes::{plan, Access, Operand, Spec};
use super::{MaskState, VecEffect};

use Dtype::{Bfloat16 as BF16, Float16 as F16, Float32 as F32, Int16 as I16, Int32 as I32, Uint16 as U16, Uint32 as U32};

/// The raw inputs of one element: src0, src1 and the old dst (bits).
#[derive(Debug, Clone, Copy, Default)]
struct Inputs {
    src0: u64,
    src1: u64,
    dst: u64,
}

/// Computes one destination element from its inputs.
type ElemFn = Box<dyn Fn(Inputs) -> u64>;

/// How an op is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// dst = f(src0, src1).
    Binary,
    /// dst = f(src0, src1, dst).
    BinaryAccumulate,
    /// dst = f(src0).
    Unary,
    /// dst = f(src0, scalar).
    Scalar,
    /// dst = f(src0, scalar, dst).
    ScalarAccumulate,
    /// dst = scalar.
    Fill,
}

fn shape(kind: VecOp) -> Option<Shape> {
    use VecOp::*;
    Some(match kind {
        Add | Sub | Mul | Div | Max | Min | And | Or | AddRelu | SubRelu => Shape::Binary,
        FusedMulAdd | MulAddDst => Shape::BinaryAccumulate,
        Exp | Ln | Abs | Reciprocal | Sqrt | Rsqrt | Relu | Not | Neg => Shape::Unary,
        Adds | Muls | Maxs | Mins | Subs | Divs | LeakyRelu | ShiftLeft | ShiftRight => Shape::Scalar,
        Axpy => Shape::ScalarAccumulate,
        Duplicate => Shape::Fill,
        _ => return None,
    })
}

/// The (dst, src) dtype pairs an op accepts on A2; a plain `T` op lists
/// `(T, T)`.
fn supported(kind: VecOp) -> &'static [(Dtype, Dtype)] {
    use VecOp::*;
    const FLOAT: &[(Dtype, Dtype)] = &[(F16, F16), (F32, F32)];
    const FLOAT_INT: &[(Dtype, Dtype)] = &[(F16, F16), (F32, F32), (I16, I16), (I32, I32)];
    const FLOAT_I16: &[(Dtype, Dtype)] = &[(F16, F16), (F32, F32), (I16, I16)];
    const MIXED: &[(Dtype, Dtype)] = &[(F16, F16), (F32, F32), (F32, F16)];
    const BITS16: &[(Dtype, Dtype)] = &[(I16, I16), (U16, U16)];
    const SHIFT: &[(Dtype, Dtype)] = &[(U16, U16), (I16, I16), (U32, U32), (I32, I32)];
    const RELU: &[(Dtype, Dtype)] = &[(F16, F16), (F32, F32), (I32, I32)];
    const DUP: &[(Dtype, Dtype)] = &[
        (I16, I16),
        (U16, U16),
        (F16, F16),
        (BF16, BF16),
        (I32, I32),
        (U32, U32),
        (F32, F32),
    ];
    match kind {
        Add | Sub | Mul | Max | Min | Adds | Muls | Maxs | Mins | Subs | Neg => FLOAT_INT,
        Div | Divs | Exp | Ln | Abs | Reciprocal | Sqrt | Rsqrt | LeakyRelu | FusedMulAdd => FLOAT,
        AddRelu | SubRelu => FLOAT_I16,
        MulAddDst | Axpy => MIXED,
        And | Or | Not => BITS16,
        ShiftLeft | ShiftRight => SHIFT,
        Relu => RELU,
        Duplicate => DUP,
        _ => &[],
    }
}

fn dtype_of(api: &'static str, code: u8, what: &str) -> Result<Dtype, Fault> {
    Dtype::from_abi_code(code).ok_or_else(|| Fault::InvalidArg {
        api,
        what: format!("unknown {what} dtype code {code}"),
    })
}

/// A float element function: decodes the inputs with their dtypes,
/// computes in f64 and rounds once to `dst`.
fn float_fn(src: Dtype, dst: Dtype, f: impl Fn(f64, f64, f64) -> f64 + 'static) -> ElemFn {
    Box::new(move |x: Inputs| {
        let a = float_value(src, x.src0).unwrap_or(f64::NAN);
        let b = float_value(src, x.src1).unwrap_or(f64::NAN);
        let d = float_value(dst, x.dst).unwrap_or(f64::NAN);
        numeric::to_bits_rne(f(a, b, d), dst)
    })
}

/// An integer element function: computes exactly and wraps to `dtype`.
fn int_fn(dtype: Dtype, f: impl Fn(i128, i128, i128) -> i128 + 'static) -> ElemFn {
    Box::new(move |x: Inputs| {
        let a = int_value(dtype, x.src0).unwrap_or(0);
        let b = int_value(dtype, x.src1).unwrap_or(0);
        let d = int_value(dtype, x.dst).unwrap_or(0);
        wrap_int(f(a, b, d), dtype)
    })
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

fn relu(a: f64) -> f64 {
    if a > 0.0 || a.is_nan() {
        a
    } else {
        0.0
    }
}

/// The scalar operand, checked against its expected dtype; as f64 for
/// floats, and as an exact integer.
struct ScalarArg {
    bits: u64,
    float: f64,
    int: i128,
}

fn scalar_arg(api: &'static str, op: &AscVecOp, expected: Dtype) -> Result<ScalarArg, Fault> {
    let got = dtype_of(api, op.scalar_dtype, "scalar")?;
    if got != expected {
        return Err(Fault::InvalidArg {
            api,
            what: format!("scalar is {got}, the operation needs {expected}"),
        });
    }
    let size = 8 * expected.size() as u32;
    let bits = if size >= 64 { op.scalar_bits } else { op.scalar_bits & ((1u64 << size) - 1) };
    Ok(ScalarArg {
        bits,
        float: float_value(expected, bits).unwrap_or(f64::NAN),
        int: int_value(expected, bits).unwrap_or(0),
    })
}

/// Builds the element function of `kind` for (dst, src) dtypes.
fn elem_fn(api: &'static str, kind: VecOp, op: &AscVecOp, dst: Dtype, src: Dtype) -> Result<ElemFn, Fault> {
    use VecOp::*;
    let float = dst.is_float();
    let sign_bit = 1u64 << (8 * dst.size() - 1);
    Ok(match kind {
        Add if float => float_fn(src, dst, |a, b, _| a + b),
        Add => int_fn(dst, |a, b, _| a + b),
        Sub if float => float_fn(src, dst, |a, b, _| a - b),
        Sub => int_fn(dst, |a, b, _| a - b),
        Mul if float => float_fn(src, dst, |a, b, _| a * b),
        Mul => int_fn(dst, |a, b, _| a * b),
        Div => float_fn(src, dst, |a, b, _| a / b),
        Max if float => float_fn(src, dst, |a, b, _| nan_max(a, b)),
        Max => int_fn(dst, |a, b, _| a.max(b)),
        Min if float => float_fn(src, dst, |a, b, _| nan_min(a, b)),
        Min => int_fn(dst, |a, b, _| a.min(b)),
        And => Box::new(|x: Inputs| x.src0 & x.src1),
        Or => Box::new(|x: Inputs| x.src0 | x.src1),
        AddRelu if float => float_fn(src, dst, |a, b, _| relu(a + b)),
        AddRelu => Box::new(move |x: Inputs| {
            let sum = int_value(dst, wrap_int(decode_int(dst, x.src0) + decode_int(dst, x.src1), dst));
            wrap_int(sum.unwrap_or(0).max(0), dst)
        }),
        SubRelu if float => float_fn(src, dst, |a, b, _| relu(a - b)),
        SubRelu => Box::new(move |x: Inputs| {
            let diff = int_value(dst, wrap_int(decode_int(dst, x.src0) - decode_int(dst, x.src1), dst));
            wrap_int(diff.unwrap_or(0).max(0), dst)
        }),
        // dst = src0 * dst + src1
        FusedMulAdd => float_fn(src, dst, |a, b, d| a.mul_add(d, b)),
        // dst = src0 * src1 + dst (src may be half with a float dst)
        MulAddDst => float_fn(src, dst, |a, b, d| a.mul_add(b, d)),
        Exp => float_fn(src, dst, |a, _, _| a.exp()),
        Ln => float_fn(src, dst, |a, _, _| a.ln()),
        Abs => Box::new(move |x: Inputs| x.src0 & !sign_bit),
        Reciprocal => float_fn(src, dst, |a, _, _| 1.0 / a),
        Sqrt => float_fn(src, dst, |a, _, _| a.sqrt()),
        Rsqrt => float_fn(src, dst, |a, _, _| 1.0 / a.sqrt()),
        Relu if float => float_fn(src, dst, |a, _, _| relu(a)),
        Relu => int_fn(dst, |a, _, _| a.max(0)),
        Not => Box::new(|x: Inputs| !x.src0),
        Neg if float => Box::new(move |x: Inputs| x.src0 ^ sign_bit),
        Neg => int_fn(dst, |a, _, _| -a),
        Adds | Muls | Maxs | Mins | Subs | Divs | LeakyRelu => {
            let s = scalar_arg(api, op, dst)?;
            let (sf, si) = (s.float, s.int);
            match (kind, float) {
                (Adds, true) => float_fn(src, dst, move |a, _, _| a + sf),
                (Adds, false) => int_fn(dst, move |a, _, _| a + si),
                (Muls, true) => float_fn(src, dst, move |a, _, _| a * sf),
                (Muls, false) => int_fn(dst, move |a, _, _| a * si),
                (Maxs, true) => float_fn(src, dst, move |a, _, _| nan_max(a, sf)),
                (Maxs, false) => int_fn(dst, move |a, _, _| a.max(si)),
                (Mins, true) => float_fn(src, dst, move |a, _, _| nan_min(a, sf)),
                (Mins, false) => int_fn(dst, move |a, _, _| a.min(si)),
                (Subs, true) => float_fn(src, dst, move |a, _, _| a - sf),
                (Subs, false) => int_fn(dst, move |a, _, _| a - si),
                (Divs, _) => float_fn(src, dst, move |a, _, _| a / sf),
                _ => float_fn(src, dst, move |a, _, _| if a >= 0.0 { a } else { a * sf }),
            }
        }
        // dst += scalar * src0, the scalar in the source type.
        Axpy => {
            let s = scalar_arg(api, op, src)?.float;
            float_fn(src, dst, move |a, _, d| s.mul_add(a, d))
        }
        ShiftLeft | ShiftRight => {
            let s = scalar_arg(api, op, dst)?;
            let width = 8 * dst.size() as i128;
            if !(0..=width).contains(&s.int) {
                return Err(Fault::InvalidArg {
                    api,
                    what: format!("shift count {} is outside [0, {width}] for {dst}", s.int),
                });
            }
            let n = s.int as u32;
            if kind == ShiftLeft {
                int_fn(dst, move |a, _, _| a << n)
            } else {
                // Unsigned: logical; signed: arithmetic (i128 >> sign-extends),
                // with roundEn (p[0]) adding the last bit shifted out.
                let round = op.p[0] != 0 && dst.is_signed_int() && n > 0;
                int_fn(dst, move |a, _, _| {
                    let shifted = a >> n;
                    if round {
                        shifted + ((a >> (n - 1)) & 1)
                    } else {
                        shifted
                    }
                })
            }
        }
        Duplicate => {
            let s = scalar_arg(api, op, dst)?.bits;
            Box::new(move |_| s)
        }
        _ => {
            return Err(Fault::Unsupported {
                api,
                what: "this operation in the arithmetic family".into(),
            })
        }
    })
}

fn decode_int(dtype: Dtype, bits: u64) -> i128 {
    int_value(dtype, bits).unwrap_or(0)
}

/// Executes one arithmetic-family instruction.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    let kind = VecOp::from_code(op.op).ok_or_else(|| Fault::InvalidArg {
        api: "vector",
        what: format!("unknown vector op code {}", op.op),
    })?;
    let api = kind.name();
    let shape = shape(kind).ok_or_else(|| Fault::Unsupported {
        api,
        what: "this operation in the arithmetic family".into(),
    })?;
    let dst = dtype_of(api, op.dtype, "destination")?;
    let src = match kind {
        VecOp::Axpy | VecOp::MulAddDst if op.src_dtype != 0 => dtype_of(api, op.src_dtype, "source")?,
        _ => dst,
    };
    if !supported(kind).contains(&(dst, src)) {
        let what = if src == dst {
            format!("{dst} on Atlas A2")
        } else {
            format!("{src} sources with a {dst} destination on Atlas A2")
        };
        return Err(Fault::Unsupported { api, what });
    }
    let dst_size = dst.size() as u32;
    let src_size = src.size() as u32;
    let dst_access = match shape {
        Shape::BinaryAccumulate | Shape::ScalarAccumulate => Access::ReadWrite,
        _ => Access::Write,
    };
    let mut operands = vec![Operand::dst(op, dst_size, dst_access)];
    if shape != Shape::Fill {
        operands.push(Operand::src0(op, src_size));
    }
    if matches!(shape, Shape::Binary | Shape::BinaryAccumulate) {
        operands.push(Operand::src1(op, src_size));
    }
    let plan = plan(&Spec::widest(api, &operands), op, mask, ub.len())?;
    let f = elem_fn(api, kind, op, dst, src)?;
    let reads_dst = dst_access == Access::ReadWrite;
    for chunk in plan.repeat_chunks() {
        let results: Vec<u64> = chunk
            .clone()
            .map(|i| {
                let mut x = Inputs::default();
                if operands.len() > 1 {
                    x.src0 = numeric::load(ub, plan.addr(i, 1), src);
                }
                if operands.len() > 2 {
                    x.src1 = numeric::load(ub, plan.addr(i, 2), src);
                }
                if reads_dst {
                    x.dst = numeric::load(ub, plan.addr(i, 0), dst);
                }
                f(x)
            })
            .collect();
        for (i, bits) in chunk.zip(results) {
            numeric::store(ub, plan.addr(i, 0), dst, bits);
        }
    }
    Ok(plan.effect())
}
