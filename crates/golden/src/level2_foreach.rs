//! Builtin goldens of the foreach operators of Level 2 (issue 27 item 4):
//! one formula applied to every tensor of a tensor list, with a scalar, a
//! scalar per tensor, or tensor lists of equal shapes beside it. Semantics
//! follow shared/ref/operators-l2.md, "Foreach family".
//!
//! A case's inputs arrive flat: the tensors of list `x` (or `x1`, `x2`,
//! `x3`) in order, each with its `list_index`, then (or, for
//! pow_scalar_and_tensor, before them) the scalar input; the outputs are the
//! tensors of list `y`, one per tensor of the first list.
//!
//! Numeric styles, chosen per member and said in its table row:
//! - **exact**: the transcendental members (acos, erf, sigmoid, ...) are
//!   evaluated in f64 from the exact inputs and rounded once; the op.toml
//!   files allow one bf16 ulp (8e-3) since a float32 kernel is a few f32 ulps
//!   off;
//! - **float32 steps**: the arithmetic members (add_list, addcdiv, lerp, ...)
//!   evaluate the documented formula in f32 one operation at a time, in the
//!   order written, as the kernels compute 16-bit inputs in float32; one
//!   correctly rounded operation (x + s, x * s, x / y) is exact either way;
//! - **int32**: wraps at every step like the vector unit.

use crate::common::{arity, map_into};
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::Case;
use ascendopt_op::tensor::{shape_str, Tensor};
use ascendopt_op::Dtype;

/// How a member's scalar input is typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScalarRule {
    /// The Scalar rule: x's dtype for float16/float32/int32, float32 for
    /// bfloat16 x.
    Scalar,
    /// The ScalarList rule: float32 for float x, int64 for int32 x.
    ScalarList,
    /// x's dtype (addcmul_scalar_list's tensor of scalars).
    SameAsX,
    /// float32 always (an aclScalar: LerpScalar weight, PowScalarAndTensor base).
    Float32,
    /// int8 (round_off_number's roundMode).
    Int8,
}

/// The scalar input of a member: its name, whether it comes before the
/// lists, whether it holds one value per tensor, and its dtype rule.
#[derive(Debug, Clone, Copy)]
struct ScalarInput {
    name: &'static str,
    first: bool,
    per_tensor: bool,
    rule: ScalarRule,
}

/// The element function of a member: float arguments (list elements, then
/// the scalar) to the exact value, and int32 arguments to the wrapped value.
type FloatFn = fn(&[f64]) -> f64;
type IntFn = fn(&[i64]) -> i64;

/// One foreach member.
#[derive(Debug, Clone, Copy)]
struct Member {
    name: &'static str,
    lists: &'static [&'static str],
    scalar: Option<ScalarInput>,
    dtypes: &'static [Dtype],
    float: FloatFn,
    int: Option<IntFn>,
}

const F: &[Dtype] = &[Dtype::Float16, Dtype::Float32, Dtype::Bfloat16];
const FI: &[Dtype] = &[
    Dtype::Float16,
    Dtype::Float32,
    Dtype::Bfloat16,
    Dtype::Int32,
];
const X: &[&str] = &["x"];
const X12: &[&str] = &["x1", "x2"];
const X123: &[&str] = &["x1", "x2", "x3"];

const fn scalar(name: &'static str, rule: ScalarRule) -> Option<ScalarInput> {
    Some(ScalarInput {
        name,
        first: false,
        per_tensor: false,
        rule,
    })
}

const fn scalars(name: &'static str, rule: ScalarRule) -> Option<ScalarInput> {
    Some(ScalarInput {
        name,
        first: false,
        per_tensor: true,
        rule,
    })
}

const fn unary(name: &'static str, dtypes: &'static [Dtype], float: FloatFn) -> Member {
    Member {
        name,
        lists: X,
        scalar: None,
        dtypes,
        float,
        int: None,
    }
}

/// f32 of an f64 argument (the float32-steps style).
#[inline]
fn s(v: f64) -> f32 {
    v as f32
}

/// int32 wrap of an i64.
#[inline]
fn w(v: i64) -> i64 {
    i64::from(v as i32)
}

/// erf by its Maclaurin series near 0 and the continued fraction of erfc
/// beyond, to f64 accuracy (std has no erf).
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.abs() < 2.5 {
        // erf x = 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)).
        let mut sum = 0.0f64;
        let mut term = x;
        let x2 = x * x;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs().max(1e-300) {
            sum += term / (2.0 * n + 1.0);
            n += 1.0;
            term *= -x2 / n;
            if n > 200.0 {
                break;
            }
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else {
        let c = erfc_cf(x.abs());
        if x > 0.0 {
            1.0 - c
        } else {
            c - 1.0
        }
    }
}

/// erfc(a) for a >= 2.5 by its continued fraction (Lentz), to f64 accuracy.
fn erfc_cf(a: f64) -> f64 {
    if a.is_infinite() {
        return 0.0;
    }
    // erfc a = exp(-a^2)/sqrt(pi) * 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...)))).
    let tiny = 1e-300;
    let mut f = a;
    let mut c = a;
    let mut d = 0.0;
    for k in 1..400 {
        let an = f64::from(k) / 2.0;
        d = a + an * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = a + an / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-a * a).exp() / std::f64::consts::PI.sqrt() / f
}

fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x >= 2.5 {
        erfc_cf(x)
    } else if x <= -2.5 {
        2.0 - erfc_cf(-x)
    } else {
        1.0 - erf(x)
    }
}

/// torch.sign: -1, 0 (either zero) or 1; NaN stays NaN.
fn sign(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 {
        x
    } else {
        x.signum()
    }
}

/// torch.maximum / minimum with a NaN-propagating comparison.
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

/// C's pow (f64): the exact value the float kernel approximates.
fn pow(base: f64, e: f64) -> f64 {
    base.powf(e)
}

/// int32 x^e by squaring (wrapping); e < 0 gives 0 (the integer result for
/// |x| > 1; the cases use e >= 0).
fn ipow(x: i64, e: i64) -> i64 {
    if e < 0 {
        return 0;
    }
    let (mut acc, mut base, mut e) = (1i32, x as i32, e as u64);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    i64::from(acc)
}

/// torch.lerp's two-sided form in float32 steps: |w| < 0.5 gives
/// x1 + w (x2 - x1), otherwise x2 + (w - 1)(x2 - x1).
fn lerp(a: &[f64]) -> f64 {
    let (x1, x2, wt) = (s(a[0]), s(a[1]), s(a[2]));
    let d = x2 - x1;
    f64::from(if wt.abs() < 0.5 {
        x1 + wt * d
    } else {
        x2 + (wt - 1.0) * d
    })
}

/// The members, in operators-l2.md order.
const MEMBERS: &[Member] = &[
    unary("foreach_acos", F, |a| a[0].acos()),
    unary("foreach_asin", F, |a| a[0].asin()),
    Member {
        name: "foreach_add_list",
        lists: X12,
        scalar: scalar("alpha", ScalarRule::Scalar),
        dtypes: FI,
        // alpha * x2, then x1 + that, in float32 steps.
        float: |a| f64::from(s(a[0]) + s(a[2]) * s(a[1])),
        int: Some(|a| w(a[0] + w(a[2] * a[1]))),
    },
    Member {
        name: "foreach_add_scalar",
        lists: X,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: FI,
        float: |a| f64::from(s(a[0]) + s(a[1])),
        int: Some(|a| w(a[0] + a[1])),
    },
    Member {
        name: "foreach_add_scalar_list",
        lists: X,
        scalar: scalars("scalars", ScalarRule::ScalarList),
        dtypes: FI,
        // x + float32 scalar, one rounding (float16 computes in float32).
        float: |a| f64::from(s(a[0]) + s(a[1])),
        int: Some(|a| w(a[0] + w(a[1]))),
    },
    Member {
        name: "foreach_addcdiv_scalar",
        lists: X123,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: F,
        // x2 / x3, times the scalar, plus x1, in float32 steps.
        float: |a| f64::from(s(a[0]) + s(a[3]) * (s(a[1]) / s(a[2]))),
        int: None,
    },
    Member {
        name: "foreach_addcmul_scalar",
        lists: X123,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: FI,
        // x2 * x3, times the scalar, plus x1, in float32 steps.
        float: |a| f64::from(s(a[0]) + s(a[3]) * (s(a[1]) * s(a[2]))),
        int: Some(|a| w(a[0] + w(a[3] * w(a[1] * a[2])))),
    },
    Member {
        name: "foreach_addcmul_scalar_list",
        lists: X123,
        scalar: scalars("scalars", ScalarRule::SameAsX),
        dtypes: FI,
        float: |a| f64::from(s(a[0]) + s(a[3]) * (s(a[1]) * s(a[2]))),
        int: Some(|a| w(a[0] + w(a[3] * w(a[1] * a[2])))),
    },
    Member {
        name: "foreach_div_list",
        lists: X12,
        scalar: None,
        dtypes: F,
        float: |a| f64::from(s(a[0]) / s(a[1])),
        int: None,
    },
    Member {
        name: "foreach_div_scalar",
        lists: X,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: F,
        float: |a| f64::from(s(a[0]) / s(a[1])),
        int: None,
    },
    unary("foreach_erf", F, |a| erf(a[0])),
    unary("foreach_erfc", F, |a| erfc(a[0])),
    unary("foreach_exp", F, |a| a[0].exp()),
    Member {
        name: "foreach_lerp_scalar",
        lists: X12,
        scalar: scalar("weight", ScalarRule::Float32),
        dtypes: F,
        float: lerp,
        int: None,
    },
    unary("foreach_log2", F, |a| a[0].log2()),
    Member {
        name: "foreach_maximum_scalar",
        lists: X,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: FI,
        float: |a| nan_max(a[0], a[1]),
        int: Some(|a| a[0].max(a[1])),
    },
    Member {
        name: "foreach_minimum_scalar",
        lists: X,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: FI,
        float: |a| nan_min(a[0], a[1]),
        int: Some(|a| a[0].min(a[1])),
    },
    Member {
        name: "foreach_mul_list",
        lists: X12,
        scalar: None,
        dtypes: FI,
        float: |a| f64::from(s(a[0]) * s(a[1])),
        int: Some(|a| w(a[0] * a[1])),
    },
    Member {
        name: "foreach_mul_scalar",
        lists: X,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: FI,
        float: |a| f64::from(s(a[0]) * s(a[1])),
        int: Some(|a| w(a[0] * a[1])),
    },
    Member {
        name: "foreach_neg",
        lists: X,
        scalar: None,
        dtypes: FI,
        float: |a| -a[0],
        int: Some(|a| w(-a[0])),
    },
    Member {
        name: "foreach_pow_scalar",
        lists: X,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: FI,
        float: |a| pow(a[0], a[1]),
        int: Some(|a| ipow(a[0], a[1])),
    },
    Member {
        name: "foreach_pow_scalar_and_tensor",
        lists: X,
        scalar: Some(ScalarInput {
            name: "scalar",
            first: true,
            per_tensor: false,
            rule: ScalarRule::Float32,
        }),
        dtypes: F,
        float: |a| pow(a[1], a[0]),
        int: None,
    },
    unary("foreach_reciprocal", F, |a| f64::from(1.0 / s(a[0]))),
    Member {
        name: "foreach_round_off_number",
        lists: X,
        scalar: scalar("roundMode", ScalarRule::Int8),
        dtypes: F,
        float: |a| round_mode(a[0], a[1]),
        int: None,
    },
    unary("foreach_sigmoid", F, |a| 1.0 / (1.0 + (-a[0]).exp())),
    Member {
        name: "foreach_sign",
        lists: X,
        scalar: None,
        dtypes: FI,
        float: |a| sign(a[0]),
        int: Some(|a| a[0].signum()),
    },
    unary("foreach_sinh", F, |a| a[0].sinh()),
    unary("foreach_sqrt", F, |a| f64::from(s(a[0]).sqrt())),
    Member {
        name: "foreach_sub_scalar",
        lists: X,
        scalar: scalar("scalar", ScalarRule::Scalar),
        dtypes: FI,
        float: |a| f64::from(s(a[0]) - s(a[1])),
        int: Some(|a| w(a[0] - a[1])),
    },
    unary("foreach_tan", F, |a| a[0].tan()),
    unary("foreach_tanh", F, |a| a[0].tanh()),
];

/// round(x, roundMode) computed on the float32 value: 1 rint, 2 floor,
/// 3 ceil, 4 half away from zero, 5 trunc, 6 round to odd (an inexact x
/// goes to whichever neighbouring integer is odd), 7 frac (x - trunc x);
/// any other mode leaves x unchanged.
fn round_mode(x: f64, mode: f64) -> f64 {
    let x = f64::from(s(x));
    match mode as i64 {
        1 => x.round_ties_even(),
        2 => x.floor(),
        3 => x.ceil(),
        4 => x.round(),
        5 => x.trunc(),
        6 => {
            let t = x.trunc();
            if t == x || !x.is_finite() {
                x
            } else if t.rem_euclid(2.0) == 1.0 {
                t
            } else {
                t + x.signum()
            }
        }
        7 => {
            if x.is_infinite() {
                f64::NAN
            } else {
                x - x.trunc()
            }
        }
        _ => x,
    }
}

/// The case's tensors of one input parameter: indices into `case.inputs`.
fn group(case: &Case, name: &str) -> Vec<usize> {
    case.inputs
        .iter()
        .enumerate()
        .filter(|(_, i)| i.name == name)
        .map(|(k, _)| k)
        .collect()
}

/// The dtype a scalar input must have for x's dtype.
fn scalar_dtype(rule: ScalarRule, x: Dtype) -> Dtype {
    match rule {
        ScalarRule::Scalar if x == Dtype::Bfloat16 => Dtype::Float32,
        ScalarRule::Scalar | ScalarRule::SameAsX => x,
        ScalarRule::ScalarList if x == Dtype::Int32 => Dtype::Int64,
        ScalarRule::ScalarList | ScalarRule::Float32 => Dtype::Float32,
        ScalarRule::Int8 => Dtype::Int8,
    }
}

impl Member {
    fn by_name(name: &str) -> Option<&'static Member> {
        MEMBERS.iter().find(|m| m.name == name)
    }

    /// Checks the case against the member's contract; returns the list
    /// length, x's dtype and the output shapes.
    fn infer(&self, case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
        let first = group(case, self.lists[0]);
        let n = first.len();
        if n == 0 {
            return Err(Reject::new(
                "shapes",
                format!(
                    "{}: the tensor list `{}` is empty",
                    self.name, self.lists[0]
                ),
            ));
        }
        let scalar_count = usize::from(self.scalar.is_some());
        arity(case, n * self.lists.len() + scalar_count, n)?;
        let dtype = case.inputs[first[0]].dtype;
        if !self.dtypes.contains(&dtype) {
            let names: Vec<String> = self.dtypes.iter().map(|d| d.to_string()).collect();
            return Err(Reject::new(
                "dtype",
                format!(
                    "{} takes {}; `{}` is {dtype}",
                    self.name,
                    names.join(", "),
                    self.lists[0]
                ),
            ));
        }
        for list in self.lists {
            let tensors = group(case, list);
            if tensors.len() != n {
                return Err(Reject::new(
                    "shapes",
                    format!(
                        "`{list}` has {} tensors, `{}` has {n}",
                        tensors.len(),
                        self.lists[0]
                    ),
                ));
            }
            for (k, (&t, &f)) in tensors.iter().zip(&first).enumerate() {
                let (ti, fi) = (&case.inputs[t], &case.inputs[f]);
                if ti.dtype != dtype {
                    return Err(Reject::new(
                        "dtype",
                        format!(
                            "`{list}[{k}]` is {}, `{}` is {dtype}",
                            ti.dtype, self.lists[0]
                        ),
                    ));
                }
                if ti.shape != fi.shape {
                    return Err(Reject::new(
                        "shapes",
                        format!(
                            "`{list}[{k}]` {} and `{}[{k}]` {} differ; foreach needs equal shapes",
                            shape_str(&ti.shape),
                            self.lists[0],
                            shape_str(&fi.shape)
                        ),
                    ));
                }
                if ti.shape.iter().product::<usize>() == 0 || ti.shape.len() > 8 {
                    return Err(Reject::new(
                        "shapes",
                        format!(
                            "`{list}[{k}]` {}: foreach tensors are non-empty with at most 8 dims",
                            shape_str(&ti.shape)
                        ),
                    ));
                }
            }
        }
        if let Some(sc) = self.scalar {
            let at = group(case, sc.name);
            let ok_place = if sc.first {
                at == [0]
            } else {
                at == [case.inputs.len() - 1]
            };
            if !ok_place {
                return Err(Reject::new(
                    "shapes",
                    format!(
                        "{} takes one `{}` tensor {} the lists",
                        self.name,
                        sc.name,
                        if sc.first { "before" } else { "after" }
                    ),
                ));
            }
            let input = &case.inputs[at[0]];
            let want_len = if sc.per_tensor { n } else { 1 };
            if input.shape.iter().product::<usize>() != want_len {
                return Err(Reject::new(
                    "shapes",
                    format!(
                        "`{}` {} must hold {want_len} value(s){}",
                        sc.name,
                        shape_str(&input.shape),
                        if sc.per_tensor {
                            ", one per tensor"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            let want = scalar_dtype(sc.rule, dtype);
            if input.dtype != want {
                return Err(Reject::new(
                    "dtypes",
                    format!(
                        "`{}` is {} but must be {want} for {dtype} x",
                        sc.name, input.dtype
                    ),
                ));
            }
        }
        for (k, o) in case.outputs.iter().enumerate() {
            if o.dtype != dtype {
                return Err(Reject::new(
                    "dtypes",
                    format!("output `{}[{k}]` is {}, x is {dtype}", o.name, o.dtype),
                ));
            }
        }
        Ok(first
            .iter()
            .map(|&f| case.inputs[f].shape.clone())
            .collect())
    }

    fn compute(&self, case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
        let first = group(case, self.lists[0]);
        let lists: Vec<Vec<usize>> = self.lists.iter().map(|l| group(case, l)).collect();
        let scalar = self.scalar.map(|sc| &inputs[group(case, sc.name)[0]]);
        let mut outputs = Vec::with_capacity(first.len());
        for (k, &f) in first.iter().enumerate() {
            let out = case
                .outputs
                .get(k)
                .ok_or_else(|| Reject::new("shapes", format!("no output for tensor {k}")))?;
            let mut y = Tensor::zeros(out.dtype, &inputs[f].shape);
            let args: Vec<&Tensor> = lists.iter().map(|l| &inputs[l[k]]).collect();
            let s_index = match self.scalar {
                Some(sc) if sc.per_tensor => k,
                _ => 0,
            };
            if out.dtype.is_float() {
                let sv = scalar.map(|t| t.get_f64(s_index));
                let f = self.float;
                let mut buf = vec![0.0f64; args.len() + 1];
                map_into(&args, &mut y, |a| {
                    buf[..a.len()].copy_from_slice(a);
                    match sv {
                        Some(v) => {
                            buf[a.len()] = v;
                            f(&buf)
                        }
                        None => f(&buf[..a.len()]),
                    }
                });
            } else {
                let g = self.int.ok_or_else(|| {
                    Reject::new("dtype", format!("{} has no integer form", self.name))
                })?;
                let sv = scalar.map(|t| t.get_i64(s_index));
                let mut buf = vec![0i64; args.len() + 1];
                for i in 0..y.numel() {
                    for (b, t) in buf.iter_mut().zip(&args) {
                        *b = t.get_i64(i);
                    }
                    if let Some(v) = sv {
                        buf[args.len()] = v;
                    }
                    let len = args.len() + usize::from(sv.is_some());
                    y.set_i64(i, g(&buf[..len]));
                }
            }
            outputs.push(y);
        }
        Ok(outputs)
    }
}

/// foreach_zero_inplace: x_i := 0, in place (no output argument; the
/// outputs are x's tensors after the launch).
fn zero_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    const ZERO_DTYPES: &[Dtype] = &[
        Dtype::Float16,
        Dtype::Float32,
        Dtype::Bfloat16,
        Dtype::Int16,
        Dtype::Int32,
    ];
    let n = case.inputs.len();
    if n == 0 {
        return Err(Reject::new("shapes", "the tensor list `x` is empty"));
    }
    arity(case, n, n)?;
    let dtype = case.inputs[0].dtype;
    if !ZERO_DTYPES.contains(&dtype) {
        return Err(Reject::new(
            "dtype",
            format!("foreach_zero_inplace takes float16, float32, bfloat16, int16 and int32; x is {dtype}"),
        ));
    }
    for (k, i) in case.inputs.iter().enumerate() {
        if i.dtype != dtype || i.shape.iter().product::<usize>() == 0 {
            return Err(Reject::new(
                "shapes",
                format!(
                    "`x[{k}]` is {} {}; x's tensors share one dtype and are non-empty",
                    i.dtype,
                    shape_str(&i.shape)
                ),
            ));
        }
    }
    Ok(case.inputs.iter().map(|i| i.shape.clone()).collect())
}

fn zero_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    Ok(inputs
        .iter()
        .zip(&case.outputs)
        .map(|(x, o)| Tensor::zeros(o.dtype, &x.shape))
        .collect())
}

/// foreach_copy: y = x, a bit copy of any dtype.
fn copy_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let n = case.inputs.len();
    if n == 0 {
        return Err(Reject::new("shapes", "the tensor list `x` is empty"));
    }
    arity(case, n, n)?;
    let dtype = case.inputs[0].dtype;
    for (k, i) in case.inputs.iter().enumerate() {
        if i.dtype != dtype || i.shape.iter().product::<usize>() == 0 {
            return Err(Reject::new(
                "shapes",
                format!(
                    "`x[{k}]` is {} {}; x's tensors share one dtype and are non-empty",
                    i.dtype,
                    shape_str(&i.shape)
                ),
            ));
        }
    }
    Ok(case.inputs.iter().map(|i| i.shape.clone()).collect())
}

fn copy_compute(_case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    Ok(inputs.to_vec())
}

macro_rules! member_fns {
    ($($infer:ident, $compute:ident, $name:literal;)*) => {
        $(
            fn $infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
                Member::by_name($name)
                    .ok_or_else(|| Reject::new("shapes", concat!("no foreach member ", $name)))?
                    .infer(case)
            }
            fn $compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
                Member::by_name($name)
                    .ok_or_else(|| Reject::new("shapes", concat!("no foreach member ", $name)))?
                    .compute(case, inputs)
            }
        )*
        /// This file's goldens.
        pub(super) const TABLE: &[Builtin] = &[
            $(Builtin { name: $name, infer: $infer, compute: $compute },)*
            Builtin { name: "foreach_copy", infer: copy_infer, compute: copy_compute },
            Builtin { name: "foreach_zero_inplace", infer: zero_infer, compute: zero_compute },
        ];
    };
}

member_fns! {
    acos_infer, acos_compute, "foreach_acos";
    asin_infer, asin_compute, "foreach_asin";
    add_list_infer, add_list_compute, "foreach_add_list";
    add_scalar_infer, add_scalar_compute, "foreach_add_scalar";
    add_scalar_list_infer, add_scalar_list_compute, "foreach_add_scalar_list";
    addcdiv_scalar_infer, addcdiv_scalar_compute, "foreach_addcdiv_scalar";
    addcmul_scalar_infer, addcmul_scalar_compute, "foreach_addcmul_scalar";
    addcmul_scalar_list_infer, addcmul_scalar_list_compute, "foreach_addcmul_scalar_list";
    div_list_infer, div_list_compute, "foreach_div_list";
    div_scalar_infer, div_scalar_compute, "foreach_div_scalar";
    erf_infer, erf_compute, "foreach_erf";
    erfc_infer, erfc_compute, "foreach_erfc";
    exp_infer, exp_compute, "foreach_exp";
    lerp_scalar_infer, lerp_scalar_compute, "foreach_lerp_scalar";
    log2_infer, log2_compute, "foreach_log2";
    maximum_scalar_infer, maximum_scalar_compute, "foreach_maximum_scalar";
    minimum_scalar_infer, minimum_scalar_compute, "foreach_minimum_scalar";
    mul_list_infer, mul_list_compute, "foreach_mul_list";
    mul_scalar_infer, mul_scalar_compute, "foreach_mul_scalar";
    neg_infer, neg_compute, "foreach_neg";
    pow_scalar_infer, pow_scalar_compute, "foreach_pow_scalar";
    pow_scalar_and_tensor_infer, pow_scalar_and_tensor_compute, "foreach_pow_scalar_and_tensor";
    reciprocal_infer, reciprocal_compute, "foreach_reciprocal";
    round_off_number_infer, round_off_number_compute, "foreach_round_off_number";
    sigmoid_infer, sigmoid_compute, "foreach_sigmoid";
    sign_infer, sign_compute, "foreach_sign";
    sinh_infer, sinh_compute, "foreach_sinh";
    sqrt_infer, sqrt_compute, "foreach_sqrt";
    sub_scalar_infer, sub_scalar_compute, "foreach_sub_scalar";
    tan_infer, tan_compute, "foreach_tan";
    tanh_infer, tanh_compute, "foreach_tanh";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_erfc_match_reference_values() {
        // Abramowitz-Stegun table values.
        for (x, e) in [
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (3.0, 0.999_977_909_503_001_4),
        ] {
            assert!((erf(x) - e).abs() < 1e-15, "erf({x}) = {}", erf(x));
            assert!((erf(-x) + e).abs() < 1e-15);
        }
        // erfc(5) = 1.5374597944280349e-12, erfc(10) = 2.0884875837625446e-45.
        assert!((erfc(5.0) / 1.537_459_794_428_035e-12 - 1.0).abs() < 1e-13);
        assert!((erfc(10.0) / 2.088_487_583_762_545e-45 - 1.0).abs() < 1e-13);
        assert_eq!(erfc(-30.0), 2.0);
        assert!(erf(f64::NAN).is_nan());
    }

    #[test]
    fn round_modes_follow_the_reference() {
        let modes: Vec<f64> = (1..=8).map(|m| round_mode(-2.5, f64::from(m))).collect();
        assert_eq!(modes, [-2.0, -3.0, -2.0, -3.0, -2.0, -3.0, -0.5, -2.5]);
        assert_eq!(round_mode(2.5, 6.0), 3.0);
        assert_eq!(round_mode(3.5, 6.0), 3.0);
        assert_eq!(round_mode(4.0, 6.0), 4.0);
        assert_eq!(round_mode(0.5, 4.0), 1.0);
    }

    #[test]
    fn int_forms_wrap_like_the_vector_unit() {
        let add = Member::by_name("foreach_add_list").unwrap().int.unwrap();
        assert_eq!(add(&[i64::from(i32::MAX), 1, 1]), i64::from(i32::MIN));
        let neg = Member::by_name("foreach_neg").unwrap().int.unwrap();
        assert_eq!(neg(&[i64::from(i32::MIN)]), i64::from(i32::MIN));
        assert_eq!(ipow(3, 4), 81);
        assert_eq!(ipow(65536, 2), 0);
        let lerp_high = lerp(&[1.0, 3.0, 0.75]);
        assert_eq!(lerp_high, 2.5);
    }

    #[test]
    fn every_member_has_a_builtin() {
        for m in MEMBERS {
            assert!(TABLE.iter().any(|b| b.name == m.name), "{}", m.name);
        }
        assert_eq!(TABLE.len(), 33);
    }
}
