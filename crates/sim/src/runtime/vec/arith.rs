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

use Dtype::{
    Bfloat16 as BF16, Float16 as F16, Float32 as F32, Int16 as I16, Int32 as I32, Uint16 as U16,
    Uint32 as U32,
};

/// The raw inputs of one element: src0, src1 and the old dst (bits).
#[derive(Debug, Clone, Copy, Default)]
struct Inputs {
    src0: u64,
    src1: u64,
    dst: u64,
}

/// Computes destination elements: one at a time from its inputs, and for
/// the common float dtype pairs also a whole contiguous run at once.
struct ElemFn {
    one: Box<dyn Fn(Inputs) -> u64>,
    run: Option<RunFn>,
}

/// Computes a contiguous run of elements with the same results as
/// [`ElemFn::one`]: `(src0, src1, dst)` bytes, the sources `n` elements
/// each (zeros for an absent source), `dst` holding the old destination
/// values and receiving the results.
type RunFn = Box<dyn Fn(&[u8], &[u8], &mut [u8])>;

impl ElemFn {
    fn call(&self, x: Inputs) -> u64 {
        (self.one)(x)
    }
}

/// An element function without a run form.
fn one(f: impl Fn(Inputs) -> u64 + 'static) -> ElemFn {
    ElemFn {
        one: Box::new(f),
        run: None,
    }
}

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
        Adds | Muls | Maxs | Mins | Subs | Divs | LeakyRelu | ShiftLeft | ShiftRight => {
            Shape::Scalar
        }
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
/// computes in f64 and rounds once to `dst`. The common dtype pairs get a
/// closure with the decoding and rounding inlined (same results: decoding
/// is exact, and rounding takes [`numeric::to_bits_rne`]'s own fast path).
fn float_fn(src: Dtype, dst: Dtype, f: impl Fn(f64, f64, f64) -> f64 + Copy + 'static) -> ElemFn {
    match (src, dst) {
        (F32, F32) => ElemFn {
            one: Box::new(move |x: Inputs| {
                round_f32(f(from_f32(x.src0), from_f32(x.src1), from_f32(x.dst)))
            }),
            run: Some(run::float::<run::F32, run::F32>(f)),
        },
        (F16, F16) => ElemFn {
            one: Box::new(move |x: Inputs| {
                numeric::to_bits_rne(f(from_f16(x.src0), from_f16(x.src1), from_f16(x.dst)), F16)
            }),
            run: Some(run::float::<run::F16, run::F16>(f)),
        },
        (F16, F32) => ElemFn {
            one: Box::new(move |x: Inputs| {
                round_f32(f(from_f16(x.src0), from_f16(x.src1), from_f32(x.dst)))
            }),
            run: Some(run::float::<run::F16, run::F32>(f)),
        },
        _ => one(move |x: Inputs| {
            let a = float_value(src, x.src0).unwrap_or(f64::NAN);
            let b = float_value(src, x.src1).unwrap_or(f64::NAN);
            let d = float_value(dst, x.dst).unwrap_or(f64::NAN);
            numeric::to_bits_rne(f(a, b, d), dst)
        }),
    }
}

#[inline(always)]
fn from_f32(bits: u64) -> f64 {
    f64::from(f32::from_bits(bits as u32))
}

#[inline(always)]
fn from_f16(bits: u64) -> f64 {
    f64::from(numeric::half_to_f32(bits as u16))
}

/// `to_bits_rne(x, F32)`: `as` rounds to nearest even with IEEE overflow;
/// NaN takes the general path for its bit pattern.
#[inline(always)]
fn round_f32(x: f64) -> u64 {
    if x.is_nan() {
        numeric::to_bits_rne(x, F32)
    } else {
        u64::from((x as f32).to_bits())
    }
}

/// An integer element function: computes exactly and wraps to `dtype`.
fn int_fn(dtype: Dtype, f: impl Fn(i128, i128, i128) -> i128 + 'static) -> ElemFn {
    one(move |x: Inputs| {
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
    let bits = if size >= 64 {
        op.scalar_bits
    } else {
        op.scalar_bits & ((1u64 << size) - 1)
    };
    Ok(ScalarArg {
        bits,
        float: float_value(expected, bits).unwrap_or(f64::NAN),
        int: int_value(expected, bits).unwrap_or(0),
    })
}

/// Builds the element function of `kind` for (dst, src) dtypes.
fn elem_fn(
    api: &'static str,
    kind: VecOp,
    op: &AscVecOp,
    dst: Dtype,
    src: Dtype,
) -> Result<ElemFn, Fault> {
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
        And => one(|x: Inputs| x.src0 & x.src1),
        Or => one(|x: Inputs| x.src0 | x.src1),
        AddRelu if float => float_fn(src, dst, |a, b, _| relu(a + b)),
        AddRelu => one(move |x: Inputs| {
            let sum = int_value(
                dst,
                wrap_int(decode_int(dst, x.src0) + decode_int(dst, x.src1), dst),
            );
            wrap_int(sum.unwrap_or(0).max(0), dst)
        }),
        SubRelu if float => float_fn(src, dst, |a, b, _| relu(a - b)),
        SubRelu => one(move |x: Inputs| {
            let diff = int_value(
                dst,
                wrap_int(decode_int(dst, x.src0) - decode_int(dst, x.src1), dst),
            );
            wrap_int(diff.unwrap_or(0).max(0), dst)
        }),
        // The products below are of f16/f32 values, exact in f64 (at most
        // 48 significant bits, far from f64's range limits), so `a * b + d`
        // rounds once in f64 exactly like a fused multiply-add would (and
        // costs no software fma).
        // dst = src0 * dst + src1
        FusedMulAdd => float_fn(src, dst, |a, b, d| a * d + b),
        // dst = src0 * src1 + dst (src may be half with a float dst)
        MulAddDst => float_fn(src, dst, |a, b, d| a * b + d),
        Exp => float_fn(src, dst, |a, _, _| a.exp()),
        Ln => float_fn(src, dst, |a, _, _| a.ln()),
        Abs => one(move |x: Inputs| x.src0 & !sign_bit),
        Reciprocal => float_fn(src, dst, |a, _, _| 1.0 / a),
        Sqrt => float_fn(src, dst, |a, _, _| a.sqrt()),
        Rsqrt => float_fn(src, dst, |a, _, _| 1.0 / a.sqrt()),
        Relu if float => float_fn(src, dst, |a, _, _| relu(a)),
        Relu => int_fn(dst, |a, _, _| a.max(0)),
        Not => one(|x: Inputs| !x.src0),
        Neg if float => one(move |x: Inputs| x.src0 ^ sign_bit),
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
            float_fn(src, dst, move |a, _, d| s * a + d)
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
            one(move |_| s)
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
        VecOp::Axpy | VecOp::MulAddDst if op.src_dtype != 0 => {
            dtype_of(api, op.src_dtype, "source")?
        }
        _ => dst,
    };
    if !supported(kind).contains(&(dst, src)) {
        let listed = supported(kind)
            .iter()
            .map(|&(d, s)| {
                if d == s {
                    d.to_string()
                } else {
                    format!("{d} from {s}")
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        let what = if src == dst {
            format!("{dst} on Atlas A2 (the guide lists {listed})")
        } else {
            format!("{src} sources with a {dst} destination on Atlas A2 (the guide lists {listed})")
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
    if let Some(bases) = plan.independent_bases() {
        run_independent(ub, bases, plan.len(), dst, src, reads_dst, &f);
        return Ok(plan.effect());
    }
    if plan.strided_independent() {
        // Strided but independent: the operands' runs gathered into one
        // contiguous buffer, computed there as above, the results
        // scattered back.
        let n_src = operands.len() - 1;
        let (ds, ss) = (dst.size(), src.size());
        let n = plan.len();
        GATHER.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf.clear();
            buf.resize(n * (ds + n_src * ss), 0);
            let offsets = [0, n * ds, n * ds + n * ss];
            let runs = plan.strided_runs();
            let first = if reads_dst { 0 } else { 1 };
            for run in &runs {
                let operands = offsets.iter().zip(run.addrs).enumerate();
                for (k, (&off, addr)) in operands.take(1 + n_src).skip(first) {
                    let size = if k == 0 { ds } else { ss };
                    let at = off + run.start * size;
                    buf[at..at + run.len * size].copy_from_slice(&ub[addr..addr + run.len * size]);
                }
            }
            run_independent(&mut buf, &offsets[..1 + n_src], n, dst, src, reads_dst, &f);
            for run in &runs {
                let (at, addr) = (run.start * ds, run.addrs[0]);
                ub[addr..addr + run.len * ds].copy_from_slice(&buf[at..at + run.len * ds]);
            }
        });
        return Ok(plan.effect());
    }
    // One buffer for every repeat: a repeat's results are computed from
    // its inputs before any is stored (operands may overlap).
    let mut results: Vec<u64> = Vec::new();
    for chunk in plan.repeat_chunks() {
        results.clear();
        results.extend(chunk.clone().map(|i| {
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
            f.call(x)
        }));
        for (i, &bits) in chunk.zip(&results) {
            numeric::store(ub, plan.addr(i, 0), dst, bits);
        }
    }
    Ok(plan.effect())
}

thread_local! {
    /// The gathered operands of a strided instruction (reused).
    static GATHER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Computes `n` contiguous independent elements in `buf`: the destination
/// at `bases[0]`, the sources at the other bases.
fn run_independent(
    buf: &mut [u8],
    bases: &[usize],
    n: usize,
    dst: Dtype,
    src: Dtype,
    reads_dst: bool,
    f: &ElemFn,
) {
    let sources = &bases[1..];
    if let Some(run) = &f.run {
        run::contiguous(buf, bases[0], sources, n, dst.size(), src.size(), run);
        return;
    }
    match (dst.size(), src.size()) {
        (4, 4) => flat::run::<4, 4>(buf, bases[0], sources, n, reads_dst, f),
        (2, 2) => flat::run::<2, 2>(buf, bases[0], sources, n, reads_dst, f),
        (4, 2) => flat::run::<4, 2>(buf, bases[0], sources, n, reads_dst, f),
        (1, 1) => flat::run::<1, 1>(buf, bases[0], sources, n, reads_dst, f),
        (8, 8) => flat::run::<8, 8>(buf, bases[0], sources, n, reads_dst, f),
        _ => flat::run_any(buf, bases, n, dst, src, reads_dst, f),
    }
}

/// Whole-run float element loops: the inputs decoded and the result
/// rounded inline, no call per element.
mod run {
    use super::{round_f32, RunFn};
    use crate::numeric;
    use ascendopt_op::Dtype;
    use std::cell::RefCell;

    /// A float element type of the run loops.
    pub(super) trait Float {
        /// Bytes per element.
        const SIZE: usize;
        /// The exact value of the element in `b` (`SIZE` bytes).
        fn decode(b: &[u8]) -> f64;
        /// Rounds `x` once to nearest even (IEEE overflow) into `out`.
        fn encode(x: f64, out: &mut [u8]);
    }

    /// binary32.
    pub(super) struct F32;
    /// binary16.
    pub(super) struct F16;

    impl Float for F32 {
        const SIZE: usize = 4;
        #[inline(always)]
        fn decode(b: &[u8]) -> f64 {
            f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
        #[inline(always)]
        fn encode(x: f64, out: &mut [u8]) {
            out.copy_from_slice(&(round_f32(x) as u32).to_le_bytes());
        }
    }

    impl Float for F16 {
        const SIZE: usize = 2;
        #[inline(always)]
        fn decode(b: &[u8]) -> f64 {
            f64::from(numeric::half_to_f32(u16::from_le_bytes([b[0], b[1]])))
        }
        #[inline(always)]
        fn encode(x: f64, out: &mut [u8]) {
            let bits = numeric::to_bits_rne(x, Dtype::Float16) as u16;
            out.copy_from_slice(&bits.to_le_bytes());
        }
    }

    /// The run form of a float element function with sources `S` and
    /// destination `D`.
    pub(super) fn float<S: Float, D: Float>(f: impl Fn(f64, f64, f64) -> f64 + 'static) -> RunFn {
        Box::new(move |a: &[u8], b: &[u8], d: &mut [u8]| {
            let sources = a.chunks_exact(S::SIZE).zip(b.chunks_exact(S::SIZE));
            for (out, (x, y)) in d.chunks_exact_mut(D::SIZE).zip(sources) {
                let r = f(S::decode(x), S::decode(y), D::decode(out));
                D::encode(r, out);
            }
        })
    }

    thread_local! {
        /// Per-thread copies of the sources (a block is a thread).
        static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    }

    /// Runs `run` over `n` contiguous independent elements: destination
    /// elements of `dst_size` bytes at `dst`, sources of `src_size` bytes
    /// at `sources` (0, 1 or 2 bases). The sources are copied first so the
    /// destination can be borrowed mutably (in place included).
    pub(super) fn contiguous(
        ub: &mut [u8],
        dst: usize,
        sources: &[usize],
        n: usize,
        dst_size: usize,
        src_size: usize,
        run: &RunFn,
    ) {
        let len = n * src_size;
        let dst_range = dst..dst + n * dst_size;
        if let Some((a, b, out)) = super::apart(ub, dst_range.clone(), sources, len) {
            // Sources apart from the destination: used where they lie.
            run(a, b, out);
            return;
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let (a, b) = &mut *scratch;
            for (k, buf) in [&mut *a, &mut *b].into_iter().enumerate() {
                buf.clear();
                match sources.get(k) {
                    Some(&base) => buf.extend_from_slice(&ub[base..base + len]),
                    None => buf.resize(len, 0),
                }
            }
            run(a, b, &mut ub[dst..dst + n * dst_size]);
        });
    }
}

/// Zero bytes standing for an absent source (the scratch path's zeroed
/// buffer), for instructions up to this many source bytes.
static ZEROS: [u8; 1 << 19] = [0; 1 << 19];

/// The sources (`len` bytes from each base; an absent one reads as zero
/// bytes) and the destination `dst` as separate borrows of `ub`, when no
/// source shares a byte with the destination.
fn apart<'u>(
    ub: &'u mut [u8],
    dst: std::ops::Range<usize>,
    sources: &[usize],
    len: usize,
) -> Option<(&'u [u8], &'u [u8], &'u mut [u8])> {
    let range = |k: usize| sources.get(k).map(|&b| b..b + len);
    if (0..sources.len())
        .filter_map(range)
        .any(|r| r.end > ub.len() || (r.start < dst.end && dst.start < r.end && len > 0))
        || dst.end > ub.len()
        || len > ZEROS.len()
    {
        return None;
    }
    let (left, rest) = ub.split_at_mut(dst.start);
    let (out, right) = rest.split_at_mut(dst.end - dst.start);
    let (left, right): (&'u [u8], &'u [u8]) = (left, right);
    let source = |k: usize| -> &'u [u8] {
        match range(k) {
            None => &ZEROS[..len],
            Some(r) if r.end <= dst.start => &left[r],
            Some(r) => &right[r.start - dst.end..r.end - dst.end],
        }
    };
    Some((source(0), source(1), out))
}

/// Element-by-element execution of an instruction whose operands are
/// contiguous and independent (see [`Plan::independent_bases`]): the same
/// results as the repeat-by-repeat path without its bookkeeping.
mod flat {
    use super::{ElemFn, Inputs};
    use crate::numeric;
    use ascendopt_op::Dtype;

    #[inline(always)]
    fn read<const S: usize>(ub: &[u8], addr: usize) -> u64 {
        let b = &ub[addr..addr + S];
        match S {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
            4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        }
    }

    #[inline(always)]
    fn write<const S: usize>(ub: &mut [u8], addr: usize, bits: u64) {
        ub[addr..addr + S].copy_from_slice(&bits.to_le_bytes()[..S]);
    }

    /// Runs `f` over `n` elements: destination elements of `D` bytes at
    /// `dst`, source elements of `S` bytes at `sources` (0, 1 or 2 bases).
    pub(super) fn run<const D: usize, const S: usize>(
        ub: &mut [u8],
        dst: usize,
        sources: &[usize],
        n: usize,
        reads_dst: bool,
        f: &ElemFn,
    ) {
        let s0 = sources.first().copied();
        let s1 = sources.get(1).copied();
        for i in 0..n {
            let mut x = Inputs::default();
            if let Some(b) = s0 {
                x.src0 = read::<S>(ub, b + i * S);
            }
            if let Some(b) = s1 {
                x.src1 = read::<S>(ub, b + i * S);
            }
            if reads_dst {
                x.dst = read::<D>(ub, dst + i * D);
            }
            write::<D>(ub, dst + i * D, f.call(x));
        }
    }

    /// [`run`] for any pair of element sizes.
    pub(super) fn run_any(
        ub: &mut [u8],
        bases: &[usize],
        n: usize,
        dst: Dtype,
        src: Dtype,
        reads_dst: bool,
        f: &ElemFn,
    ) {
        let (ds, ss) = (dst.size(), src.size());
        for i in 0..n {
            let mut x = Inputs::default();
            if let Some(b) = bases.get(1) {
                x.src0 = numeric::load_bits(ub, b + i * ss, ss);
            }
            if let Some(b) = bases.get(2) {
                x.src1 = numeric::load_bits(ub, b + i * ss, ss);
            }
            if reads_dst {
                x.dst = numeric::load_bits(ub, bases[0] + i * ds, ds);
            }
            numeric::store_bits(ub, bases[0] + i * ds, ds, f.call(x));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::form;
    use crate::runtime::vec::lanes::tests::{blank_op, ub};
    use crate::trace::{Mem, Region};

    const POISON: u8 = 0xa5;

    fn h(x: f64) -> u64 {
        u64::from(half::f16::from_f64(x).to_bits())
    }

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    /// A poisoned 8 KiB UB.
    fn new_ub() -> Vec<u8> {
        vec![POISON; 8192]
    }

    fn put(ub: &mut [u8], addr: usize, dtype: Dtype, bits: &[u64]) {
        for (i, b) in bits.iter().enumerate() {
            numeric::store(ub, addr + i * dtype.size(), dtype, *b);
        }
    }

    fn get(ub: &[u8], addr: usize, dtype: Dtype, n: usize) -> Vec<u64> {
        (0..n)
            .map(|i| numeric::load(ub, addr + i * dtype.size(), dtype))
            .collect()
    }

    fn poison(dtype: Dtype) -> u64 {
        numeric::load(&[POISON; 8], 0, dtype)
    }

    /// A count-form op of `kind` on `dtype`: dst at 0, src0 at 1024, src1 at 2048.
    fn count_op(kind: u32, dtype: Dtype, count: u64) -> AscVecOp {
        let mut op = blank_op();
        op.op = kind;
        op.dtype = dtype.abi_code();
        op.src_dtype = dtype.abi_code();
        op.dst = ub(0, op.dtype);
        op.src0 = ub(1024, op.dtype);
        op.src1 = ub(2048, op.dtype);
        op.count = count;
        op
    }

    fn with_scalar(mut op: AscVecOp, dtype: Dtype, bits: u64) -> AscVecOp {
        op.scalar_dtype = dtype.abi_code();
        op.scalar_bits = bits;
        op
    }

    fn run(ub: &mut [u8], op: &AscVecOp) -> Result<VecEffect, Fault> {
        super::super::execute(ub, &MaskState::reset(), op)
    }

    /// Runs a count-form op with two sources and returns dst.
    fn binary(kind: u32, dtype: Dtype, a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut ub = new_ub();
        put(&mut ub, 1024, dtype, a);
        put(&mut ub, 2048, dtype, b);
        run(&mut ub, &count_op(kind, dtype, a.len() as u64)).unwrap();
        get(&ub, 0, dtype, a.len())
    }

    /// Runs a count-form op with one source (and an optional scalar).
    fn unary(op: AscVecOp, dtype: Dtype, a: &[u64]) -> Result<Vec<u64>, Fault> {
        let mut ub = new_ub();
        put(&mut ub, 1024, dtype, a);
        let mut op = op;
        op.count = a.len() as u64;
        run(&mut ub, &op)?;
        Ok(get(&ub, 0, dtype, a.len()))
    }

    /// Equal element bits, except that any NaN equals any NaN: the sign of
    /// a NaN produced by f64 arithmetic is unspecified (IEEE 754 leaves it
    /// open and LLVM may commute operands), so two compilations of one
    /// formula may disagree on it.
    fn assert_same(got: &[u64], want: &[u64], dtype: Dtype, what: &str) {
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            let nan = |b| float_value(dtype, b).is_some_and(f64::is_nan);
            assert!(
                g == w || (nan(g) && nan(w)),
                "{what}: element {i}: {g:#x} vs {w:#x}"
            );
        }
        assert_eq!(got.len(), want.len(), "{what}");
    }

    /// The run form of every float operation gives the element form's
    /// bits (NaN signs aside) on random inputs with specials (NaN, infinities, zeros,
    /// subnormals), in place and out of place.
    #[test]
    fn run_form_matches_the_element_form() {
        let mut rng = crate::test_rng::SplitMix64::new(0x0dd_ba11);
        let mut next = || rng.next_u64();
        let specials32 = [
            0x7fc0_0000,
            0x7f80_0000,
            0xff80_0000,
            0x8000_0000,
            0,
            1,
            0x0080_0000,
        ];
        let specials16 = [0x7e00, 0x7c00, 0xfc00, 0x8000, 0, 1, 0x0400];
        let mut checked = 0;
        for code in 1..=80u32 {
            let Some(kind) = VecOp::from_code(code) else {
                continue;
            };
            let Some(shape) = shape(kind) else { continue };
            for (dst, src) in [(F32, F32), (F16, F16), (F32, F16)] {
                if !supported(kind).contains(&(dst, src)) || !dst.is_float() {
                    continue;
                }
                let n = 200;
                let mut value = |dtype: Dtype| -> u64 {
                    let r = next();
                    match (r % 8, dtype) {
                        (0, Dtype::Float32) => specials32[(r >> 8) as usize % 7],
                        (0, _) => specials16[(r >> 8) as usize % 7],
                        (_, Dtype::Float32) => r >> 32,
                        _ => r >> 48,
                    }
                };
                let a: Vec<u64> = (0..n).map(|_| value(src)).collect();
                let b: Vec<u64> = (0..n).map(|_| value(src)).collect();
                let d: Vec<u64> = (0..n).map(|_| value(dst)).collect();
                let mut op = count_op(code, dst, n as u64);
                op.src_dtype = src.abi_code();
                let scalar_type = if kind == VecOp::Axpy { src } else { dst };
                op.scalar_dtype = scalar_type.abi_code();
                op.scalar_bits = value(scalar_type);
                if matches!(kind, VecOp::ShiftLeft | VecOp::ShiftRight) {
                    continue;
                }
                let f = elem_fn("test", kind, &op, dst, src).unwrap();
                // Bit operations (Abs, Neg, Duplicate) have no run form.
                if f.run.is_none() {
                    continue;
                }
                let want: Vec<u64> = (0..n)
                    .map(|i| {
                        f.call(Inputs {
                            src0: a[i],
                            src1: b[i],
                            dst: d[i],
                        })
                    })
                    .collect();
                // Out of place.
                let mut mem = new_ub();
                put(&mut mem, 0, dst, &d);
                put(&mut mem, 1024, src, &a);
                put(&mut mem, 2048, src, &b);
                run(&mut mem, &op).unwrap();
                assert_same(
                    &get(&mem, 0, dst, n),
                    &want,
                    dst,
                    &format!("{kind:?} {src}->{dst}"),
                );
                // In place on src0 (same dtype only).
                if src == dst && shape != Shape::Fill {
                    let mut mem = new_ub();
                    put(&mut mem, 1024, src, &a);
                    put(&mut mem, 2048, src, &b);
                    let mut op = op;
                    op.dst = op.src0;
                    run(&mut mem, &op).unwrap();
                    let accumulate =
                        matches!(shape, Shape::BinaryAccumulate | Shape::ScalarAccumulate);
                    let want: Vec<u64> = (0..n)
                        .map(|i| {
                            f.call(Inputs {
                                src0: a[i],
                                src1: b[i],
                                dst: if accumulate { a[i] } else { d[i] },
                            })
                        })
                        .collect();
                    let got = get(&mem, 1024, dst, n);
                    assert_same(&got, &want, dst, &format!("in place {kind:?} {src}"));
                }
                checked += 1;
            }
        }
        assert!(
            checked >= 40,
            "only {checked} operation/dtype pairs checked"
        );
    }

    #[test]
    fn half_add_rounds_once_to_nearest_even() {
        let tie = 2f64.powi(-11);
        let out = binary(
            1,
            F16,
            &[h(1.0), h(1.0 + 2f64.powi(-10)), h(-1.0), h(65504.0)],
            &[h(tie), h(tie), h(-tie), h(32.0)],
        );
        // 1 + 2^-11 ties to 1; 1 + 3*2^-11 ties up to the even 1 + 2^-9;
        // -1 - 2^-11 ties to -1; 65504 + 32 = 65536 ties to even = 2^16 -> inf.
        assert_eq!(out, vec![0x3c00, 0x3c02, 0xbc00, 0x7c00]);
        // Sub and Mul, exact in f64 then rounded: 0.1 * 3 in half.
        let out = binary(3, F16, &[h(0.1)], &[h(3.0)]);
        // 0.1 in half is 0x2e66 = 0.0999755859375; * 3 = 0.2999267578125 -> 0x34cc (0.2998046875) or 0x34cd?
        // 0.2999267578125 / 2^-12 = 1228.5 -> halfway, ties to even 1228 -> 0x34cc.
        assert_eq!(out, vec![0x34cc]);
        // f32: 1 - 2^-25 is halfway between 1 - 2^-24 (odd) and 1: ties to 1.
        let out = binary(
            2,
            F32,
            &[f(1.0), f(1.0)],
            &[f(f32::EPSILON / 4.0), f(f32::EPSILON * 0.375)],
        );
        assert_eq!(out, vec![f(1.0), f(1.0 - f32::EPSILON / 2.0)]);
    }

    #[test]
    fn integer_arithmetic_wraps() {
        let w = |v: i128, d| wrap_int(v, d);
        let out = binary(
            1,
            I16,
            &[w(32767, I16), w(-5, I16)],
            &[w(1, I16), w(3, I16)],
        );
        assert_eq!(out, vec![0x8000, w(-2, I16)]);
        let out = binary(
            3,
            I32,
            &[w(65536, I32), w(-7, I32)],
            &[w(65536, I32), w(6, I32)],
        );
        assert_eq!(out, vec![0, w(-42, I32)]);
        let out = binary(2, I32, &[w(i32::MIN.into(), I32)], &[w(1, I32)]);
        assert_eq!(out, vec![0x7fff_ffff]);
        let out = binary(5, I16, &[w(-3, I16), w(7, I16)], &[w(2, I16), w(-9, I16)]);
        assert_eq!(out, vec![w(2, I16), w(7, I16)]);
        let out = binary(6, I32, &[w(-3, I32)], &[w(2, I32)]);
        assert_eq!(out, vec![w(-3, I32)]);
        // AddRelu int16 wraps first: 30000 + 30000 -> -5536 -> 0.
        let out = binary(
            9,
            I16,
            &[w(30000, I16), w(-3, I16)],
            &[w(30000, I16), w(10, I16)],
        );
        assert_eq!(out, vec![0, 7]);
    }

    #[test]
    fn float_binary_family() {
        let out = binary(
            4,
            F32,
            &[f(1.0), f(1.0), f(-1.0)],
            &[f(3.0), f(0.0), f(0.0)],
        );
        assert_eq!(
            out,
            vec![f(1.0 / 3.0), f(f32::INFINITY), f(f32::NEG_INFINITY)]
        );
        let out = binary(4, F16, &[h(1.0)], &[h(3.0)]);
        assert_eq!(out, vec![0x3555]); // 1/3 in half
        let nan = f(f32::NAN);
        let out = binary(5, F32, &[f(1.0), nan, f(-2.0)], &[f(2.0), f(1.0), f(-3.0)]);
        assert!(f32::from_bits(out[1] as u32).is_nan());
        assert_eq!((out[0], out[2]), (f(2.0), f(-2.0)));
        let out = binary(6, F16, &[h(1.0), h(-0.5)], &[h(2.0), h(-0.25)]);
        assert_eq!(out, vec![h(1.0), h(-0.5)]);
        let out = binary(12, F32, &[f(1.0), f(5.0)], &[f(2.0), f(2.5)]); // SubRelu
        assert_eq!(out, vec![f(0.0), f(2.5)]);
        let out = binary(9, F16, &[h(-4.0), h(1.5)], &[h(1.0), h(1.0)]); // AddRelu
        assert_eq!(out, vec![h(0.0), h(2.5)]);
        let out = binary(7, U16, &[0xf0f0], &[0x3c3c]); // And
        assert_eq!(out, vec![0x3030]);
        let out = binary(8, I16, &[0xf0f0], &[0x0f01]); // Or
        assert_eq!(out, vec![0xfff1]);
    }

    #[test]
    fn unary_family() {
        let exp = unary(count_op(20, F32, 0), F32, &[f(1.0), f(0.0), f(-200.0)]).unwrap();
        assert_eq!(exp, vec![0x402d_f854, f(1.0), f(0.0)]); // e = 2.71828175 in f32
        let ln = unary(count_op(21, F16, 0), F16, &[h(1.0), h(0.0), h(-1.0)]).unwrap();
        assert_eq!((ln[0], ln[1]), (h(0.0), 0xfc00));
        assert_eq!(ln[2] & 0x7c00, 0x7c00);
        assert_ne!(ln[2] & 0x03ff, 0); // NaN
        let abs = unary(count_op(22, F16, 0), F16, &[h(-2.5), 0x8000, 0xfe00]).unwrap();
        assert_eq!(abs, vec![h(2.5), 0x0000, 0x7e00]);
        let rec = unary(count_op(23, F32, 0), F32, &[f(4.0), f(-0.0)]).unwrap();
        assert_eq!(rec, vec![f(0.25), f(f32::NEG_INFINITY)]);
        let sqrt = unary(count_op(24, F16, 0), F16, &[h(2.0), h(9.0)]).unwrap();
        assert_eq!(sqrt, vec![0x3da8, h(3.0)]); // sqrt(2) = 1.4140625 in half
        let rsqrt = unary(count_op(25, F32, 0), F32, &[f(4.0), f(0.0)]).unwrap();
        assert_eq!(rsqrt, vec![f(0.5), f(f32::INFINITY)]);
        let relu = unary(count_op(26, I32, 0), I32, &[wrap_int(-3, I32), 5]).unwrap();
        assert_eq!(relu, vec![0, 5]);
        let relu = unary(count_op(26, F16, 0), F16, &[h(-3.0), h(0.5)]).unwrap();
        assert_eq!(relu, vec![h(0.0), h(0.5)]);
        let not = unary(count_op(27, U16, 0), U16, &[0x00ff]).unwrap();
        assert_eq!(not, vec![0xff00]);
        let neg = unary(count_op(28, I16, 0), I16, &[wrap_int(-32768, I16), 5]).unwrap();
        assert_eq!(neg, vec![0x8000, wrap_int(-5, I16)]);
        let neg = unary(count_op(28, F32, 0), F32, &[f(1.5)]).unwrap();
        assert_eq!(neg, vec![f(-1.5)]);
    }

    #[test]
    fn scalar_family() {
        let op = |kind, d: Dtype, s: u64| with_scalar(count_op(kind, d, 0), d, s);
        let adds = unary(op(40, F16, h(2f64.powi(-11))), F16, &[h(1.0), h(2.0)]).unwrap();
        assert_eq!(adds, vec![h(1.0), h(2.0)]);
        let muls = unary(op(41, I16, 300), I16, &[300, wrap_int(-2, I16)]).unwrap();
        assert_eq!(
            muls,
            vec![wrap_int(90000 - 131072, I16), wrap_int(-600, I16)]
        );
        let maxs = unary(op(42, F32, f(0.5)), F32, &[f(0.25), f(1.0)]).unwrap();
        assert_eq!(maxs, vec![f(0.5), f(1.0)]);
        let mins = unary(op(43, I32, 3), I32, &[wrap_int(-9, I32), 8]).unwrap();
        assert_eq!(mins, vec![wrap_int(-9, I32), 3]);
        let subs = unary(op(44, F32, f(1.0)), F32, &[f(0.5)]).unwrap();
        assert_eq!(subs, vec![f(-0.5)]);
        let divs = unary(op(45, F16, h(4.0)), F16, &[h(1.0)]).unwrap();
        assert_eq!(divs, vec![h(0.25)]);
        let leaky = unary(op(46, F32, f(0.1)), F32, &[f(-2.0), f(3.0), f(0.0)]).unwrap();
        assert_eq!(leaky, vec![f(-0.2), f(3.0), f(0.0)]);
        let shl = unary(op(48, U16, 4), U16, &[0x1234, 0xffff]).unwrap();
        assert_eq!(shl, vec![0x2340, 0xfff0]);
        let shl16 = unary(op(48, I16, 16), I16, &[0x1234]).unwrap();
        assert_eq!(shl16, vec![0]);
        let shr = unary(op(49, I16, 1), I16, &[0xaaaa]).unwrap();
        assert_eq!(shr, vec![0xd555]); // arithmetic (guide example)
        let shr = unary(op(49, I16, 3), I16, &[0xaaaa]).unwrap();
        assert_eq!(shr, vec![0xf555]);
        let shr = unary(op(49, U16, 1), U16, &[0xaaaa]).unwrap();
        assert_eq!(shr, vec![0x5555]); // logical
                                       // roundEn: 17 >> 5 with bit 4 set -> 0 + 1 (guide example).
        let mut rounded = op(49, I32, 5);
        rounded.p[0] = 1;
        assert_eq!(unary(rounded, I32, &[17, 15]).unwrap(), vec![1, 0]);
        let bad = unary(op(48, I16, 17), I16, &[1]);
        assert!(matches!(bad, Err(Fault::InvalidArg { .. })));
        // The scalar must have the operand type.
        let mismatch = unary(
            with_scalar(count_op(40, F16, 0), F32, f(1.0)),
            F16,
            &[h(1.0)],
        );
        assert!(matches!(mismatch, Err(Fault::InvalidArg { .. })));
    }

    #[test]
    fn fused_and_accumulating_ops() {
        // FusedMulAdd: dst = src0 * dst + src1.
        let mut ub = new_ub();
        put(&mut ub, 0, F16, &[h(3.0), h(0.5)]);
        put(&mut ub, 1024, F16, &[h(2.0), h(-4.0)]);
        put(&mut ub, 2048, F16, &[h(1.0), h(0.25)]);
        run(&mut ub, &count_op(10, F16, 2)).unwrap();
        assert_eq!(get(&ub, 0, F16, 2), vec![h(7.0), h(-1.75)]);

        // MulAddDst half x half + float, mask form with src rep stride 4:
        // 64 lanes per repeat, 2 repeats, contiguous.
        let mut ub = new_ub();
        let a: Vec<u64> = (0..128).map(|i| h(f64::from(i))).collect();
        let b: Vec<u64> = (0..128).map(|_| h(0.5)).collect();
        let d: Vec<u64> = (0..128).map(|i| f(i as f32)).collect();
        put(&mut ub, 0, F32, &d);
        put(&mut ub, 1024, F16, &a);
        put(&mut ub, 2048, F16, &b);
        let mut op = count_op(11, F32, 0);
        op.src_dtype = F16.abi_code();
        op.form = form::MASK_CONT;
        op.mask = [64, 0];
        op.repeat = 2;
        (op.src0_rep, op.src1_rep) = (4, 4);
        let eff = run(&mut ub, &op).unwrap();
        let want: Vec<u64> = (0..128).map(|i| f(i as f32 * 1.5)).collect();
        assert_eq!(get(&ub, 0, F32, 128), want);
        assert_eq!((eff.repeats, eff.elems), (2, 128));
        assert_eq!(
            eff.reads[0],
            Region {
                mem: Mem::Ub,
                space: 0,
                start: 0,
                len: 512
            }
        );
        assert_eq!(eff.writes, vec![eff.reads[0]]);
        assert_eq!(
            eff.reads[1],
            Region {
                mem: Mem::Ub,
                space: 0,
                start: 1024,
                len: 256
            }
        );

        // Axpy, half source and scalar into a float dst: dst += 0.1h * src.
        let mut ub = new_ub();
        put(&mut ub, 0, F32, &[f(1.0), f(-1.0)]);
        put(&mut ub, 1024, F16, &[h(2.0), h(10.0)]);
        let mut op = with_scalar(count_op(47, F32, 2), F16, h(0.1));
        op.src_dtype = F16.abi_code();
        run(&mut ub, &op).unwrap();
        let tenth = 0.0999755859375f64; // 0.1 in half
        let want = [
            f((1.0 + 2.0 * tenth) as f32),
            f((-1.0 + 10.0 * tenth) as f32),
        ];
        assert_eq!(get(&ub, 0, F32, 2), want);
        // Axpy float <- float source with a half scalar is rejected.
        let mut bad = with_scalar(count_op(47, F32, 2), F16, h(0.1));
        bad.src_dtype = F32.abi_code();
        assert!(matches!(
            run(&mut new_ub(), &bad),
            Err(Fault::InvalidArg { .. })
        ));
    }

    #[test]
    fn mask_forms_with_strides_leave_inactive_lanes() {
        // Add float, continuous mask 3, 2 repeats; dst block stride 2, repeat
        // stride 4 (4 blocks); src0 repeat stride 1; src1 block stride 0.
        let mut ub = new_ub();
        let a: Vec<u64> = (0..64).map(|i| f(i as f32)).collect();
        put(&mut ub, 1024, F32, &a);
        put(&mut ub, 2048, F32, &[f(100.0), f(200.0), f(300.0)]);
        let mut op = count_op(1, F32, 0);
        op.form = form::MASK_CONT;
        op.mask = [3, 0];
        op.repeat = 2;
        (op.dst_blk, op.dst_rep) = (2, 4);
        op.src0_rep = 1;
        (op.src1_blk, op.src1_rep) = (0, 0);
        let eff = run(&mut ub, &op).unwrap();
        assert_eq!((eff.repeats, eff.elems), (2, 6));
        let out = get(&ub, 0, F32, 40);
        // repeat 0 -> dst floats 0..3 = src0[0..3] + src1[0..3]
        assert_eq!(&out[0..3], &[f(100.0), f(201.0), f(302.0)]);
        assert_eq!(out[3], poison(F32));
        // repeat 1 -> dst floats 32..35 = src0[8..11] + src1[0..3]
        assert_eq!(&out[32..35], &[f(108.0), f(209.0), f(310.0)]);
        assert_eq!(out[35], poison(F32));
        assert!(out[4..32].iter().all(|&b| b == poison(F32)));

        // Bit mask on half: lanes 0 and 127 of one repeat; lane 127 lies in
        // block 7, with dst block stride 2 at byte 7*64 + 15*2.
        let mut ub = new_ub();
        put(&mut ub, 1024, F16, &vec![h(1.0); 128]);
        put(&mut ub, 2048, F16, &vec![h(2.0); 128]);
        let mut op = count_op(3, F16, 0);
        op.form = form::MASK_BITS;
        op.mask = [1, 1 << 63];
        op.repeat = 1;
        op.dst_blk = 2;
        run(&mut ub, &op).unwrap();
        assert_eq!(numeric::load(&ub, 0, F16), h(2.0));
        assert_eq!(numeric::load(&ub, 2, F16), poison(F16));
        assert_eq!(numeric::load(&ub, 7 * 64 + 30, F16), h(2.0));
        assert_eq!(numeric::load(&ub, 7 * 64 + 28, F16), poison(F16));
    }

    /// Strided and masked instructions (random strides, masks, repeats,
    /// counter mode, operands apart, in place or overlapping) leave the UB
    /// exactly as the hardware's repeat-by-repeat order does: every
    /// repeat's active lanes read, then written, at the addresses of the
    /// lane formula, computed here independently of the planner.
    #[test]
    fn strided_instructions_follow_the_repeat_order() {
        let mut rng = crate::test_rng::SplitMix64::new(0x57_81de);
        let mut next = |m: u64| rng.next_u64() % m;
        let mut checked = 0;
        for trial in 0..3000 {
            let dtype = if next(2) == 0 { F32 } else { F16 };
            let size = dtype.size();
            let lanes = 256 / size;
            let kind = [1u32, 3, 11][next(3) as usize];
            let mut op = count_op(kind, dtype, 0);
            let counter = next(4) == 0;
            let mut mask = MaskState::reset();
            let active: Vec<usize> = if counter {
                op.form = form::MASK_CUR;
                mask = MaskState {
                    counter: true,
                    lo: 1 + next(3 * lanes as u64),
                    hi: 0,
                };
                (0..lanes).collect()
            } else if next(2) == 0 {
                op.form = form::MASK_CONT;
                op.mask = [1 + next(lanes as u64), 0];
                (0..op.mask[0] as usize).collect()
            } else {
                op.form = form::MASK_BITS;
                op.mask = [
                    next(u64::MAX) | 1,
                    if lanes > 64 { next(u64::MAX) } else { 0 },
                ];
                (0..lanes.min(128))
                    .filter(|&l| (op.mask[l / 64] >> (l % 64)) & 1 == 1)
                    .collect()
            };
            op.repeat = 1 + next(5) as u32;
            let strides = |n: &mut dyn FnMut(u64) -> u64| {
                (
                    [0u32, 1, 1, 2][n(4) as usize],
                    [0u32, 1, 4, 8, 8, 16][n(6) as usize],
                )
            };
            (op.dst_blk, op.dst_rep) = strides(&mut next);
            (op.src0_blk, op.src0_rep) = strides(&mut next);
            (op.src1_blk, op.src1_rep) = strides(&mut next);
            let place = |n: &mut dyn FnMut(u64) -> u64| (n(96) * 32) as u32;
            op.dst.addr = place(&mut next);
            op.src0.addr = place(&mut next);
            op.src1.addr = place(&mut next);
            match next(4) {
                // In place: a source is the destination.
                0 => {
                    op.src0 = op.dst;
                    (op.src0_blk, op.src0_rep) = (op.dst_blk, op.dst_rep);
                }
                // Apart: sources above the destination's reach.
                1 => {
                    op.dst.addr = 0;
                    op.src0.addr = 4096 + place(&mut next) / 64 * 32;
                    op.src1.addr = 4096 + place(&mut next) / 64 * 32;
                }
                _ => {}
            }
            let mut ub = new_ub();
            for (i, b) in ub.iter_mut().enumerate() {
                // Small integers and halves: exact in f16 and f32.
                let v = (i as u64).wrapping_mul(0x9e37_79b9) >> 7;
                *b = if i % size == size - 1 {
                    0x40 | (v as u8 & 0x8f)
                } else {
                    v as u8
                };
            }
            // The reference.
            let mut want = ub.clone();
            let n = if counter {
                mask.lo as usize
            } else {
                op.repeat as usize * active.len()
            };
            let repeats = n.div_ceil(active.len());
            let at = |base: u32, blk: u32, rep: u32, r: usize, l: usize| {
                let per = 32 / size;
                base as usize
                    + r * rep as usize * 32
                    + (l / per) * blk as usize * 32
                    + (l % per) * size
            };
            let mut out_of_range = false;
            for r in 0..repeats {
                let in_repeat = (n - r * active.len()).min(active.len());
                let mut results = Vec::new();
                for &l in &active[..in_repeat] {
                    let d = at(op.dst.addr, op.dst_blk, op.dst_rep, r, l);
                    let a = at(op.src0.addr, op.src0_blk, op.src0_rep, r, l);
                    let b = at(op.src1.addr, op.src1_blk, op.src1_rep, r, l);
                    if [d, a, b].iter().any(|&x| x + size > want.len()) {
                        out_of_range = true;
                        break;
                    }
                    let val = |addr| float_value(dtype, numeric::load(&want, addr, dtype)).unwrap();
                    let (x, y, z) = (val(a), val(b), val(d));
                    let v = match kind {
                        1 => x + y,
                        3 => x * y,
                        _ => x * y + z,
                    };
                    results.push((d, numeric::to_bits_rne(v, dtype)));
                }
                for (d, bits) in results {
                    numeric::store(&mut want, d, dtype, bits);
                }
            }
            let got = super::super::execute(&mut ub, &mask, &op);
            if out_of_range {
                assert!(got.is_err(), "trial {trial}: out of range accepted");
                continue;
            }
            got.unwrap_or_else(|e| panic!("trial {trial}: {e}"));
            assert!(ub == want, "trial {trial}: {op:?} {mask:?}");
            checked += 1;
        }
        assert!(checked > 1500, "only {checked} trials in range");
    }

    /// Count-form float arithmetic gives the same bits wherever its
    /// operands lie: sources below, around or above the destination, one
    /// of them the destination itself, or overlapping it.
    #[test]
    fn operand_placement_does_not_change_results() {
        let a: Vec<u64> = (0..200).map(|i| f(i as f32 * 0.75 - 40.0)).collect();
        let b: Vec<u64> = (0..200).map(|i| f(3.5 - i as f32 * 0.5)).collect();
        let want: Vec<u64> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| f(f32::from_bits(x as u32) * f32::from_bits(y as u32) + 1.0))
            .collect();
        // (dst, src0, src1) byte addresses; MulAddDst reads dst (preset to 1.0).
        for (d, s0, s1) in [
            (4096, 0, 1024),
            (1024, 0, 2048),
            (0, 1024, 2048),
            (2048, 1024, 0),
        ] {
            let mut mem = new_ub();
            put(&mut mem, s0, F32, &a);
            put(&mut mem, s1, F32, &b);
            put(&mut mem, d, F32, &vec![f(1.0); 200]);
            let mut op = count_op(11, F32, 200);
            op.dst = ub(d as u32, op.dtype);
            op.src0 = ub(s0 as u32, op.dtype);
            op.src1 = ub(s1 as u32, op.dtype);
            run(&mut mem, &op).unwrap();
            assert_eq!(get(&mem, d, F32, 200), want, "dst {d} src0 {s0} src1 {s1}");
        }
    }

    #[test]
    fn repeat_stride_zero_accumulates() {
        // Add(dst, src0, dst) with dst/src1 repeat stride 0: each repeat reads
        // the dst written by the previous one (hardware-facts C, overlap rule).
        let mut ub = new_ub();
        put(&mut ub, 0, F32, &vec![f(0.0); 64]);
        let a: Vec<u64> = (0..192).map(|i| f((i / 64 + 1) as f32)).collect();
        put(&mut ub, 1024, F32, &a);
        let mut op = count_op(1, F32, 0);
        op.src1 = op.dst;
        op.form = form::MASK_CONT;
        op.mask = [64, 0];
        op.repeat = 3;
        (op.dst_rep, op.src1_rep) = (0, 0);
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F32, 64), vec![f(6.0); 64]);
    }

    #[test]
    fn counter_mode_and_duplicate() {
        // SetMaskCount + SetVectorMask(len = 70) + Duplicate<float, false>(..., 1, 1, 8).
        let mut ub = new_ub();
        let mut op = with_scalar(count_op(60, F32, 0), F32, f(-1.5));
        op.form = form::MASK_CUR;
        op.repeat = 1;
        let counter = MaskState {
            counter: true,
            lo: 70,
            hi: 0,
        };
        let eff = super::super::execute(&mut ub, &counter, &op).unwrap();
        assert_eq!((eff.repeats, eff.elems), (2, 70));
        let out = get(&ub, 0, F32, 72);
        assert!(out[..70].iter().all(|&b| b == f(-1.5)));
        assert_eq!(out[70], poison(F32));

        // Duplicate bf16 with a bit mask, dst block stride 1 repeat stride 16.
        let mut ub = new_ub();
        let mut op = with_scalar(count_op(60, BF16, 0), BF16, 0x3fc0);
        op.form = form::MASK_BITS;
        op.mask = [0b11, 0];
        op.repeat = 2;
        op.dst_rep = 16;
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, BF16, 3), vec![0x3fc0, 0x3fc0, poison(BF16)]);
        assert_eq!(get(&ub, 512, BF16, 3), vec![0x3fc0, 0x3fc0, poison(BF16)]);
        assert_eq!(get(&ub, 256, BF16, 2), vec![poison(BF16); 2]);
    }

    #[test]
    fn unsupported_dtypes_and_bad_operands() {
        let unsupported = |kind: u32, d: Dtype| {
            let mut ub = new_ub();
            let op = with_scalar(count_op(kind, d, 16), d, 0);
            matches!(run(&mut ub, &op), Err(Fault::Unsupported { .. }))
        };
        assert!(unsupported(4, I16)); // Div int16
        assert!(unsupported(20, I32)); // Exp int32
        assert!(unsupported(1, BF16)); // Add bfloat16
        assert!(unsupported(7, F16)); // And half
        assert!(unsupported(26, I16)); // Relu int16
        assert!(unsupported(60, Dtype::Int8)); // Duplicate int8
        assert!(unsupported(48, F32)); // ShiftLeft float
                                       // int32 division names the dtypes the guide lists for Div on A2.
        let mut mem = new_ub();
        let err = run(&mut mem, &count_op(4, I32, 16)).unwrap_err();
        assert!(
            matches!(&err, Fault::Unsupported { api: "Div", what }
                if what == "int32 on Atlas A2 (the guide lists float16, float32)"),
            "{err:?}"
        );
        // Misaligned dst and out-of-range src1 in the executed op.
        let mut mem = new_ub();
        let mut op = count_op(1, F16, 16);
        op.dst = ub(16, F16.abi_code());
        let err = run(&mut mem, &op).unwrap_err();
        assert!(matches!(
            err,
            Fault::Unaligned {
                operand: "dst",
                addr: 16,
                ..
            }
        ));
        op.dst = ub(0, F16.abi_code());
        op.src1 = ub(8192 - 32, F16.abi_code());
        op.count = 32;
        let err = run(&mut mem, &op).unwrap_err();
        assert!(
            matches!(
                err,
                Fault::LocalOutOfRange {
                    operand: "src1",
                    end: 8224,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(
            mem.iter().all(|&b| b == POISON),
            "a faulting op writes nothing"
        );
    }
}
