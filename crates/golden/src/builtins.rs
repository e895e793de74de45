//! Builtin goldens: one `infer` + `compute` pair per operator, registered in
//! [`TABLE`]. Semantics follow shared/ref/operators-l1-l3.md and
//! operators-l2.md. Floats narrower than f32 are computed in f32 and rounded
//! once to the output type: for `+ - * / sqrt`, f32 has more than twice the
//! precision of f16/bf16 plus two bits, so this equals the correctly rounded
//! 16-bit result (no double-rounding error). float64 is computed in f64.

use crate::common::{arity, float_attr, float_inputs};
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::{AttrValue, Case};
use ascendopt_op::tensor::{numel, shape_str, Tensor};
use ascendopt_op::Dtype;

/// The registry. Adding an operator is one `Builtin` line plus its two
/// functions.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "add_custom",
        infer: add_infer,
        compute: add_compute,
    },
    Builtin {
        name: "muls",
        infer: muls_infer,
        compute: muls_compute,
    },
    Builtin {
        name: "sqrt",
        infer: sqrt_infer,
        compute: sqrt_compute,
    },
    Builtin {
        name: "cast",
        infer: cast_infer,
        compute: cast_compute,
    },
    Builtin {
        name: "clip_by_value_v2",
        infer: clip_infer,
        compute: clip_compute,
    },
    Builtin {
        name: "rms_norm",
        infer: rms_norm_infer,
        compute: rms_norm_compute,
    },
];

// ---- helpers --------------------------------------------------------------

fn no_bool(case: &Case, op: &str) -> Result<(), Reject> {
    for i in &case.inputs {
        if i.dtype == Dtype::Bool {
            return Err(Reject::new(
                "dtype",
                format!("{op} is not defined for bool"),
            ));
        }
    }
    Ok(())
}

/// A unary element-wise float op: f32 arithmetic for 16/32-bit floats (one
/// rounding to the output), f64 for float64.
fn map_float(
    x: &Tensor,
    out: Dtype,
    f32op: impl Fn(f32) -> f32,
    f64op: impl Fn(f64) -> f64,
) -> Tensor {
    let direct = |t: &Tensor| map_float_direct(t, out, &f32op, &f64op);
    crate::common::unary_by_table16(x, out, direct).unwrap_or_else(|| direct(x))
}

/// [`map_float`] element by element.
fn map_float_direct(
    x: &Tensor,
    out: Dtype,
    f32op: impl Fn(f32) -> f32,
    f64op: impl Fn(f64) -> f64,
) -> Tensor {
    let mut y = Tensor::zeros(out, &x.shape);
    if x.dtype == Dtype::Float64 || out == Dtype::Float64 {
        crate::common::map_into(&[x], &mut y, |a| f64op(a[0]));
    } else {
        crate::common::map_into(&[x], &mut y, |a| f64::from(f32op(a[0] as f32)));
    }
    y
}

// ---- add_custom: z = x + y --------------------------------------------------

fn add_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    no_bool(case, "add_custom")?;
    let (x, y) = (&case.inputs[0], &case.inputs[1]);
    if x.shape != y.shape {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` {} and `{}` {} differ; add_custom needs equal shapes",
                x.name,
                shape_str(&x.shape),
                y.name,
                shape_str(&y.shape)
            ),
        ));
    }
    if x.dtype != y.dtype {
        return Err(Reject::new(
            "dtype",
            format!(
                "`{}` is {} but `{}` is {}",
                x.name, x.dtype, y.name, y.dtype
            ),
        ));
    }
    Ok(vec![x.shape.clone()])
}

fn add_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (x, y) = (&inputs[0], &inputs[1]);
    let out = case.outputs[0].dtype;
    let mut z = Tensor::zeros(out, &x.shape);
    if x.dtype == Dtype::Float64 {
        crate::common::map_into(&[x, y], &mut z, |a| a[0] + a[1]);
    } else if x.dtype.is_float() {
        crate::common::map_into(&[x, y], &mut z, |a| f64::from(a[0] as f32 + a[1] as f32));
    } else {
        // Integers wrap (set_i128 reduces modulo 2^width).
        for i in 0..x.numel() {
            z.set_i128(i, x.get_i128(i) + y.get_i128(i));
        }
    }
    Ok(vec![z])
}

// ---- muls: y = x * value ----------------------------------------------------

fn muls_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    no_bool(case, "muls")?;
    let x = &case.inputs[0];
    if !x.dtype.is_float() {
        let v = case
            .attr("value")
            .and_then(AttrValue::as_f64)
            .unwrap_or(0.0);
        if v.fract() != 0.0 {
            return Err(Reject::new(
                "attrs",
                format!("value = {v} is not an integer, but x is {}", x.dtype),
            ));
        }
    }
    Ok(vec![x.shape.clone()])
}

fn muls_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let x = &inputs[0];
    let value = float_attr(case, "value")?;
    let out = case.outputs[0].dtype;
    if x.dtype.is_float() {
        // The OpDef attr is a float (f32); the product is computed in f32.
        let v32 = value as f32;
        return Ok(vec![map_float(x, out, |a| a * v32, |a| a * value)]);
    }
    let mut y = Tensor::zeros(out, &x.shape);
    for i in 0..x.numel() {
        y.set_i128(i, x.get_i128(i).wrapping_mul(value as i128));
    }
    Ok(vec![y])
}

// ---- sqrt: y = sqrt(x) ------------------------------------------------------

fn sqrt_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    float_inputs(case, "sqrt")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn sqrt_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // IEEE sqrt: sqrt(-0) = -0, sqrt(x < 0) = NaN, sqrt(inf) = inf.
    Ok(vec![map_float(
        &inputs[0],
        case.outputs[0].dtype,
        f32::sqrt,
        f64::sqrt,
    )])
}

// ---- cast: y = x converted to dst_type ----------------------------------------

/// Pairs the operator does not support (operators-l1-l3.md, "cast").
const CAST_UNSUPPORTED: &[(Dtype, Dtype)] = &[
    (Dtype::Float16, Dtype::Int64),
    (Dtype::Uint8, Dtype::Bool),
    (Dtype::Bool, Dtype::Int16),
    (Dtype::Bfloat16, Dtype::Int64),
    (Dtype::Bfloat16, Dtype::Int16),
    (Dtype::Int16, Dtype::Bool),
    (Dtype::Int16, Dtype::Bfloat16),
];

fn cast_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let (src, dst) = (case.inputs[0].dtype, case.outputs[0].dtype);
    if CAST_UNSUPPORTED.contains(&(src, dst)) {
        return Err(Reject::new(
            "attrs",
            format!("cast from {src} to {dst} is not supported by the operator"),
        ));
    }
    Ok(vec![case.inputs[0].shape.clone()])
}

fn cast_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // float -> float: exact read, one rounding to nearest even.
    // float -> int: truncation toward zero, then wrap to the width (NaN -> 0;
    //   out-of-range values are undefined on the device, cases avoid them).
    // float -> bool: x != 0, NaN is true.
    // int -> float: one rounding to nearest even; int -> int wraps;
    // bool -> number is 0/1; number -> bool is x != 0.
    let x = &inputs[0];
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    for i in 0..x.numel() {
        if x.dtype.is_float() {
            y.set_f64(i, x.get_f64(i));
        } else {
            y.set_i128(i, x.get_i128(i));
        }
    }
    Ok(vec![y])
}

// ---- clip_by_value_v2: y = min(max(x, lo), hi), lo/hi = element 0 -------------

fn clip_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 1)?;
    no_bool(case, "clip_by_value_v2")?;
    let x = &case.inputs[0];
    for t in &case.inputs[1..] {
        if numel(&t.shape) == 0 {
            return Err(Reject::new(
                "shapes",
                format!("`{}` is empty; element 0 is the bound", t.name),
            ));
        }
        if t.dtype != x.dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "`{}` is {} but `{}` is {}",
                    t.name, t.dtype, x.name, x.dtype
                ),
            ));
        }
    }
    Ok(vec![x.shape.clone()])
}

fn clip_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (x, lo, hi) = (&inputs[0], &inputs[1], &inputs[2]);
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    if x.dtype.is_float() {
        // NaN in x or in a bound gives NaN (torch.clamp); lo > hi gives hi.
        let (l, h) = (lo.get_f64(0), hi.get_f64(0));
        for i in 0..x.numel() {
            let v = x.get_f64(i);
            let r = if v.is_nan() || l.is_nan() || h.is_nan() {
                f64::NAN
            } else {
                let m = if v < l { l } else { v };
                if m > h {
                    h
                } else {
                    m
                }
            };
            y.set_f64(i, r);
        }
    } else {
        let (l, h) = (lo.get_i128(0), hi.get_i128(0));
        for i in 0..x.numel() {
            y.set_i128(i, x.get_i128(i).max(l).min(h));
        }
    }
    Ok(vec![y])
}

// ---- rms_norm: y = x * rstd * gamma, rstd = 1/sqrt(mean(x^2) + eps) -----------

fn rms_norm_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 2)?;
    float_inputs(case, "rms_norm")?;
    let (x, gamma) = (&case.inputs[0], &case.inputs[1]);
    let Some(&d) = x.shape.last() else {
        return Err(Reject::new(
            "shapes",
            format!("`{}` must have at least one dimension", x.name),
        ));
    };
    if gamma.shape != [d] {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` is {} but must be [{d}], the last dimension of `{}` {}",
                gamma.name,
                shape_str(&gamma.shape),
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    if d == 0 {
        return Err(Reject::new("shapes", "the normalised dimension is empty"));
    }
    if case.outputs[1].dtype != Dtype::Float32 {
        return Err(Reject::new("dtype", "rstd must be float32"));
    }
    let mut rstd_shape = x.shape.clone();
    if let Some(last) = rstd_shape.last_mut() {
        *last = 1;
    }
    Ok(vec![x.shape.clone(), rstd_shape])
}

fn rms_norm_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (x, gamma) = (&inputs[0], &inputs[1]);
    // The OpDef attr is a float (f32); everything else is computed in f64
    // from the exact inputs and rounded once.
    let eps = f64::from(float_attr(case, "epsilon")? as f32);
    let d = gamma.numel();
    let rows = x.numel() / d;
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    let mut rstd_shape = x.shape.clone();
    if let Some(last) = rstd_shape.last_mut() {
        *last = 1;
    }
    let mut rstd = Tensor::zeros(case.outputs[1].dtype, &rstd_shape);
    let g: Vec<f64> = gamma.to_f64s();
    // A row at a time: decoded once, stored once.
    let mut row = vec![0.0f64; d];
    let mut out = vec![0.0f64; d];
    for r in 0..rows {
        let base = r * d;
        x.read_f64s(base, &mut row);
        let sum_sq: f64 = row.iter().map(|v| v.powi(2)).sum();
        let inv = 1.0 / (sum_sq / d as f64 + eps).sqrt();
        rstd.set_f64(r, inv);
        for ((o, v), gj) in out.iter_mut().zip(&row).zip(&g) {
            *o = v * inv * gj;
        }
        y.write_f64s(base, &out);
    }
    Ok(vec![y, rstd])
}

#[cfg(test)]
mod tests {
    use crate::testutil::{bits, parse_err, run, spec};
    use ascendopt_op::golden::golden;

    use ascendopt_op::{Dtype, OpError, Tensor};

    const ADD: &str = r#"
[op]
name = "add_custom"
level = 1
op_type = "AddCustom"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "int8", "int32"]
[[inputs]]
name = "y"
dtypes = ["float16", "float32", "int8", "int32"]
dtype = { same_as = "x" }
[[outputs]]
name = "z"
dtype = { same_as = "x" }
[[cases]]
name = "h"
shapes = [[7], [7]]
dtype = "float16"
[[cases]]
name = "i8"
shapes = [[2], [2]]
dtype = "int8"
[[cases]]
name = "i32"
shapes = [[1], [1]]
dtype = "int32"
"#;

    #[test]
    fn add_custom_fp16_rounds_once_to_even() {
        let s = spec(ADD);
        let x = Tensor::from_f64s(
            Dtype::Float16,
            &[7],
            &[
                2048.0,
                2048.0,
                0.1,
                65504.0,
                65504.0,
                f64::NAN,
                f64::INFINITY,
            ],
        );
        let y = Tensor::from_f64s(
            Dtype::Float16,
            &[7],
            &[1.0, 3.0, 0.2, 8.0, 16.0, 1.0, f64::NEG_INFINITY],
        );
        let z = &run(&s, "h", vec![x, y])[0];
        assert_eq!(z.dtype, Dtype::Float16);
        let v = z.to_f64s();
        // 2049 ties to 2048 (even), 2051 ties to 2052 (even).
        assert_eq!(&v[..2], &[2048.0, 2052.0]);
        // f16(0.1) + f16(0.2) = 4914/16384, a tie in steps of 4/16384 -> 4912.
        assert_eq!(v[2], 0.2998046875);
        assert_eq!(v[3], 65504.0);
        assert_eq!(v[4], f64::INFINITY);
        assert!(v[5].is_nan() && v[6].is_nan());
    }

    #[test]
    fn add_custom_integers_wrap() {
        let s = spec(ADD);
        let x = Tensor::from_i64s(Dtype::Int8, &[2], &[100, -128]);
        let y = Tensor::from_i64s(Dtype::Int8, &[2], &[100, -1]);
        assert_eq!(run(&s, "i8", vec![x, y])[0].to_i64s(), vec![-56, 127]);
        let x = Tensor::from_i64s(Dtype::Int32, &[1], &[i64::from(i32::MAX)]);
        let y = Tensor::from_i64s(Dtype::Int32, &[1], &[1]);
        assert_eq!(
            run(&s, "i32", vec![x, y])[0].to_i64s(),
            vec![i64::from(i32::MIN)]
        );
    }

    #[test]
    fn add_custom_shape_errors_name_the_case() {
        let text = ADD.replace("shapes = [[7], [7]]", "shapes = [[4, 8], [4, 9]]");
        assert_eq!(
            parse_err(&text),
            "t/op.toml:18:1: cases[0].shapes: `x` [4, 8] and `y` [4, 9] differ; add_custom needs equal shapes"
        );
        // Inputs that do not match the case are a case error too.
        let s = spec(ADD);
        let x = Tensor::zeros(Dtype::Float16, &[7]);
        let y = Tensor::zeros(Dtype::Float16, &[6]);
        let e = golden(&s, s.case("h").unwrap(), &[x, y]).unwrap_err();
        assert!(matches!(e, OpError::Case { .. }));
        assert_eq!(
            e.to_string(),
            "case `h`: input `y` is float16 [6] (12 bytes), the case wants float16 [7]"
        );
    }

    const MULS: &str = r#"
[op]
name = "muls"
level = 1
op_type = "Muls"
[[inputs]]
name = "x"
dtypes = ["float16", "float32"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[attrs]]
name = "value"
type = "float"
default = 1.0
[[cases]]
name = "h"
shapes = [[3]]
dtype = "float16"
attrs = { value = 0.1 }
[[cases]]
name = "f"
shapes = [[2]]
dtype = "float32"
attrs = { value = 0.1 }
[[cases]]
name = "default"
shapes = [[1]]
dtype = "float32"
"#;

    #[test]
    fn muls_computes_in_f32_and_rounds_once() {
        let s = spec(MULS);
        let x = Tensor::from_f64s(Dtype::Float16, &[3], &[3.0, -0.0, 65504.0]);
        let y = run(&s, "h", vec![x])[0].to_f64s();
        // 3 * f32(0.1) = 0.30000001192 in f32; in f16 steps of 2^-12 that is
        // 1228.8 -> 1229/4096. (Rounding 0.1 to f16 first would give 1228.)
        assert_eq!(y[0], 1229.0 / 4096.0);
        assert!(y[1] == 0.0 && y[1].is_sign_negative());
        // 65504 * 0.1 = 6550.4 -> f16 step 4 -> 6552.
        assert_eq!(y[2], 6552.0);
        let x = Tensor::from_f64s(Dtype::Float32, &[2], &[3.0, 1e38]);
        let y = run(&s, "f", vec![x])[0].clone();
        assert_eq!(y.bits(0), u64::from(0.3f32.to_bits()));
        assert_eq!(y.get_f64(1), f64::from(1e38f32 * 0.1f32));
        let x = Tensor::from_f64s(Dtype::Float32, &[1], &[-2.5]);
        assert_eq!(run(&s, "default", vec![x])[0].to_f64s(), vec![-2.5]);
    }

    const SQRT: &str = r#"
[op]
name = "sqrt"
level = 1
op_type = "Sqrt"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "int32"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[cases]]
name = "h"
shapes = [[6]]
dtype = "float16"
[[cases]]
name = "f"
shapes = [[1]]
dtype = "float32"
"#;

    #[test]
    fn sqrt_values() {
        let s = spec(SQRT);
        let x = Tensor::from_f64s(
            Dtype::Float16,
            &[6],
            &[2.0, 0.25, -1.0, -0.0, f64::INFINITY, 0.0],
        );
        let y = run(&s, "h", vec![x])[0].to_f64s();
        // sqrt(2) = 1.41421356 -> 1448.15/1024 -> 1448/1024.
        assert_eq!(y[0], 1.4140625);
        assert_eq!(y[1], 0.5);
        assert!(y[2].is_nan());
        assert!(y[3] == 0.0 && y[3].is_sign_negative());
        assert_eq!(y[4], f64::INFINITY);
        assert!(y[5] == 0.0 && y[5].is_sign_positive());
        let x = Tensor::from_f64s(Dtype::Float32, &[1], &[2.0]);
        assert_eq!(run(&s, "f", vec![x])[0].bits(0), 0x3FB5_04F3);
        let text = SQRT.replace("dtype = \"float32\"", "dtype = \"int32\"");
        assert!(parse_err(&text)
            .ends_with("cases[1].dtype: sqrt is defined for float dtypes; input `x` is int32"));
    }

    const CAST: &str = r#"
[op]
name = "cast"
level = 1
op_type = "Cast"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "int32", "int8", "uint8", "bool", "int64", "bfloat16", "int16"]
[[outputs]]
name = "y"
dtypes = ["float16", "float32", "int32", "int8", "uint8", "bool", "int64", "bfloat16", "int16"]
dtype = { from_attr = "dst_type" }
[[attrs]]
name = "dst_type"
type = "int"
required = true
[[cases]]
name = "f32_f16"
shapes = [[5]]
dtype = "float32"
attrs = { dst_type = 1 }
[[cases]]
name = "f16_f32"
shapes = [[2]]
dtype = "float16"
attrs = { dst_type = 0 }
[[cases]]
name = "f32_i32"
shapes = [[4]]
dtype = "float32"
attrs = { dst_type = 3 }
[[cases]]
name = "f32_i8"
shapes = [[2]]
dtype = "float32"
attrs = { dst_type = 2 }
[[cases]]
name = "i32_i8"
shapes = [[2]]
dtype = "int32"
attrs = { dst_type = 2 }
[[cases]]
name = "i32_f16"
shapes = [[2]]
dtype = "int32"
attrs = { dst_type = 1 }
[[cases]]
name = "f32_bool"
shapes = [[3]]
dtype = "float32"
attrs = { dst_type = 12 }
[[cases]]
name = "bool_i8"
shapes = [[2]]
dtype = "bool"
attrs = { dst_type = 2 }
[[cases]]
name = "f32_bf16"
shapes = [[2]]
dtype = "float32"
attrs = { dst_type = 27 }
"#;

    #[test]
    fn cast_rounding_rules() {
        let s = spec(CAST);
        let c = |name: &str, x: Tensor| run(&s, name, vec![x]).remove(0);
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[5],
            &[
                0.1,
                65520.0,
                1.0 + 2f64.powi(-11),
                1.0 + 3.0 * 2f64.powi(-11),
                -1e-9,
            ],
        );
        let y = c("f32_f16", x);
        assert_eq!(y.dtype, Dtype::Float16);
        // f32(0.1) -> 0x2E66; 65520 ties up to inf; ties to even; -1e-9 -> -0.
        assert_eq!(bits(&y), vec![0x2E66, 0x7C00, 0x3C00, 0x3C02, 0x8000]);
        let x = Tensor::from_f64s(Dtype::Float16, &[2], &[0.1, -65504.0]);
        assert_eq!(c("f16_f32", x).to_f64s(), vec![0.0999755859375, -65504.0]);
        let x = Tensor::from_f64s(Dtype::Float32, &[4], &[2.7, -2.7, -0.5, 5.0]);
        assert_eq!(c("f32_i32", x).to_i64s(), vec![2, -2, 0, 5]);
        // Truncate, then wrap mod 2^8: 300 -> 44, -129 -> 127.
        let x = Tensor::from_f64s(Dtype::Float32, &[2], &[300.7, -129.9]);
        assert_eq!(c("f32_i8", x).to_i64s(), vec![44, 127]);
        let x = Tensor::from_i64s(Dtype::Int32, &[2], &[200, -129]);
        assert_eq!(c("i32_i8", x).to_i64s(), vec![-56, 127]);
        let x = Tensor::from_i64s(Dtype::Int32, &[2], &[2049, 70000]);
        assert_eq!(c("i32_f16", x).to_f64s(), vec![2048.0, f64::INFINITY]);
        let x = Tensor::from_f64s(Dtype::Float32, &[3], &[f64::NAN, -0.0, 0.5]);
        assert_eq!(c("f32_bool", x).data, vec![1, 0, 1]);
        let x = Tensor::from_i64s(Dtype::Bool, &[2], &[0, 1]);
        assert_eq!(c("bool_i8", x).to_i64s(), vec![0, 1]);
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[2],
            &[1.0 + 2f64.powi(-8), 1.0 + 2f64.powi(-8) + 2f64.powi(-20)],
        );
        assert_eq!(c("f32_bf16", x).to_f64s(), vec![1.0, 1.0078125]);
    }

    #[test]
    fn cast_unsupported_pair_is_rejected_at_load() {
        let text = CAST.replace(
            "name = \"f16_f32\"\nshapes = [[2]]\ndtype = \"float16\"\nattrs = { dst_type = 0 }",
            "name = \"f16_f32\"\nshapes = [[2]]\ndtype = \"float16\"\nattrs = { dst_type = 9 }",
        );
        assert_eq!(
            parse_err(&text),
            "t/op.toml:26:1: cases[1].attrs: cast from float16 to int64 is not supported by the operator"
        );
    }

    const CLIP: &str = r#"
[op]
name = "clip_by_value_v2"
level = 2
op_type = "ClipByValueV2"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "int32"]
[[inputs]]
name = "clip_value_min"
dtypes = ["float16", "float32", "int32"]
dtype = { same_as = "x" }
[[inputs]]
name = "clip_value_max"
dtypes = ["float16", "float32", "int32"]
dtype = { same_as = "x" }
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[cases]]
name = "f"
shapes = [[6], [2], [2]]
dtype = "float32"
[[cases]]
name = "i"
shapes = [[3], [1], [1]]
dtype = "int32"
"#;

    #[test]
    fn clip_uses_element_zero_and_min_above_max_gives_max() {
        let s = spec(CLIP);
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[6],
            &[-3.0, 0.5, 7.0, f64::NAN, f64::NEG_INFINITY, f64::INFINITY],
        );
        let lo = Tensor::from_f64s(Dtype::Float32, &[2], &[-1.0, 100.0]);
        let hi = Tensor::from_f64s(Dtype::Float32, &[2], &[2.0, -100.0]);
        let y = run(&s, "f", vec![x.clone(), lo, hi])[0].to_f64s();
        assert_eq!(&y[..3], &[-1.0, 0.5, 2.0]);
        assert!(y[3].is_nan());
        assert_eq!(&y[4..], &[-1.0, 2.0]);
        let lo = Tensor::from_f64s(Dtype::Float32, &[2], &[3.0, 0.0]);
        let hi = Tensor::from_f64s(Dtype::Float32, &[2], &[1.0, 0.0]);
        let y = run(&s, "f", vec![x, lo, hi])[0].to_f64s();
        assert_eq!(&y[..3], &[1.0, 1.0, 1.0]);
        assert!(y[3].is_nan());
        assert_eq!(&y[4..], &[1.0, 1.0]);
        let x = Tensor::from_i64s(Dtype::Int32, &[3], &[-5, 5, 0]);
        let lo = Tensor::from_i64s(Dtype::Int32, &[1], &[-2]);
        let hi = Tensor::from_i64s(Dtype::Int32, &[1], &[3]);
        assert_eq!(run(&s, "i", vec![x, lo, hi])[0].to_i64s(), vec![-2, 3, 0]);
    }

    const RMS: &str = r#"
[op]
name = "rms_norm"
level = 2
op_type = "RmsNorm"
[[inputs]]
name = "x"
dtypes = ["float16", "float32"]
[[inputs]]
name = "gamma"
dtypes = ["float16", "float32"]
dtype = { same_as = "x" }
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[outputs]]
name = "rstd"
dtype = { fixed = "float32" }
[[attrs]]
name = "epsilon"
type = "float"
default = 1e-6
[[cases]]
name = "f"
shapes = [[2, 4], [4]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[1, 2], [2]]
dtype = "float16"
attrs = { epsilon = 0.0 }
"#;

    #[test]
    fn rms_norm_values_and_shapes() {
        let s = spec(RMS);
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[2, 4],
            &[1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0],
        );
        let g = Tensor::from_f64s(Dtype::Float32, &[4], &[1.0, 0.5, 2.0, -1.0]);
        let out = run(&s, "f", vec![x, g]);
        let (y, rstd) = (&out[0], &out[1]);
        assert_eq!(rstd.shape, vec![2, 1]);
        assert_eq!(rstd.dtype, Dtype::Float32);
        // mean(x^2) = 30/4 = 7.5, rstd = 1/sqrt(7.5 + 1e-6) = 0.36514835...
        let r0 = rstd.get_f64(0);
        assert!((r0 - 0.365_148_35).abs() < 1e-7, "{r0}");
        assert_eq!(
            r0,
            f64::from((1.0 / (7.5 + f64::from(1e-6f32)).sqrt()) as f32)
        );
        // All-zero row: 1/sqrt(1e-6) = 1000 (f32).
        assert_eq!(rstd.get_f64(1), 1000.0);
        let yv = y.to_f64s();
        let expect = [0.365_148_35, 0.365_148_35, 2.190_890_2, -1.460_593_4];
        for (a, b) in yv[..4].iter().zip(expect) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
        assert_eq!(&yv[4..], &[0.0, 0.0, 0.0, 0.0]);
        // fp16 with eps = 0: x = [3, 4], rstd = 1/sqrt(12.5); y0 = 0.8485281
        // -> 1737.8/2048 -> 1738/2048; y1 = 1.1313708 -> 1158.5/1024 -> 1159.
        let x = Tensor::from_f64s(Dtype::Float16, &[1, 2], &[3.0, 4.0]);
        let g = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, 1.0]);
        let out = run(&s, "h", vec![x, g]);
        assert_eq!(out[0].to_f64s(), vec![1738.0 / 2048.0, 1159.0 / 1024.0]);
        assert_eq!(out[1].shape, vec![1, 1]);
        let text = RMS.replace("shapes = [[2, 4], [4]]", "shapes = [[2, 4], [5]]");
        assert!(parse_err(&text).contains(
            "cases[0].shapes: `gamma` is [5] but must be [4], the last dimension of `x` [2, 4]"
        ));
    }
}
