//! Builtin goldens of the level1_math operators (issue: operator suite):
//! cos, neg, reciprocal, rsqrt, trunc, equal, greater_equal, less,
//! less_equal, logical_not, logical_or, is_inf, heaviside and fill.
//!
//! Semantics follow shared/ref/operators-l1-l3.md (the PyTorch operator of
//! the same name). Transcendental and square-root results (cos, rsqrt) are
//! computed in f64 from the exact inputs and rounded once to the output
//! dtype; reciprocal is computed in f32 for 16/32-bit floats ("16-bit via
//! fp32"), which is the correctly rounded quotient since f32 carries more
//! than twice the precision of f16/bf16 plus two bits. Comparisons are
//! exact (IEEE for floats: NaN compares false, +0 == -0; exact integers).

use crate::common::{arity, broadcast_shape, float_inputs, Odometer};
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::{AttrValue, Case};
use ascendopt_op::tensor::{numel, shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "cos",
        infer: float_unary_infer,
        compute: cos_compute,
    },
    Builtin {
        name: "neg",
        infer: neg_infer,
        compute: neg_compute,
    },
    Builtin {
        name: "reciprocal",
        infer: float_unary_infer,
        compute: reciprocal_compute,
    },
    Builtin {
        name: "rsqrt",
        infer: float_unary_infer,
        compute: rsqrt_compute,
    },
    Builtin {
        name: "trunc",
        infer: trunc_infer,
        compute: trunc_compute,
    },
    Builtin {
        name: "equal",
        infer: compare_infer,
        compute: equal_compute,
    },
    Builtin {
        name: "greater_equal",
        infer: compare_infer,
        compute: greater_equal_compute,
    },
    Builtin {
        name: "less",
        infer: compare_infer,
        compute: less_compute,
    },
    Builtin {
        name: "less_equal",
        infer: compare_infer,
        compute: less_equal_compute,
    },
    Builtin {
        name: "logical_not",
        infer: logical_not_infer,
        compute: logical_not_compute,
    },
    Builtin {
        name: "logical_or",
        infer: logical_or_infer,
        compute: logical_or_compute,
    },
    Builtin {
        name: "is_inf",
        infer: is_inf_infer,
        compute: is_inf_compute,
    },
    Builtin {
        name: "heaviside",
        infer: heaviside_infer,
        compute: heaviside_compute,
    },
    Builtin {
        name: "fill",
        infer: fill_infer,
        compute: fill_compute,
    },
];

// ---- helpers --------------------------------------------------------------

fn no_bool_inputs(case: &Case, op: &str) -> Result<(), Reject> {
    for i in &case.inputs {
        if i.dtype == Dtype::Bool {
            return Err(Reject::new(
                "dtype",
                format!("{op} is not defined for bool; input `{}` is bool", i.name),
            ));
        }
    }
    Ok(())
}

fn bool_output(case: &Case, op: &str) -> Result<(), Reject> {
    let out = &case.outputs[0];
    if out.dtype != Dtype::Bool {
        return Err(Reject::new(
            "dtype",
            format!("{op} outputs bool; output `{}` is {}", out.name, out.dtype),
        ));
    }
    Ok(())
}

/// Two inputs of one shape and one dtype (binary element-wise operators).
fn same_shape_and_dtype(case: &Case, op: &str) -> Result<(), Reject> {
    let (a, b) = (&case.inputs[0], &case.inputs[1]);
    if a.shape != b.shape {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` {} and `{}` {} differ; {op} needs equal shapes",
                a.name,
                shape_str(&a.shape),
                b.name,
                shape_str(&b.shape)
            ),
        ));
    }
    if a.dtype != b.dtype {
        return Err(Reject::new(
            "dtype",
            format!(
                "`{}` is {} but `{}` is {}",
                a.name, a.dtype, b.name, b.dtype
            ),
        ));
    }
    Ok(())
}

/// A unary element-wise float op computed in f64 from the exact input and
/// rounded once to `out`.
fn map_exact(x: &Tensor, out: Dtype, f: impl Fn(f64) -> f64) -> Tensor {
    let direct = |t: &Tensor| map_exact_direct(t, out, &f);
    crate::common::unary_by_table16(x, out, direct).unwrap_or_else(|| direct(x))
}

/// [`map_exact`] element by element.
fn map_exact_direct(x: &Tensor, out: Dtype, f: impl Fn(f64) -> f64) -> Tensor {
    let mut y = Tensor::zeros(out, &x.shape);
    crate::common::map_into(&[x], &mut y, |a| f(a[0]));
    y
}

/// A bool tensor of `x`'s shape with `pred(i)` per element.
fn bool_map(shape: &[usize], pred: impl Fn(usize) -> bool) -> Tensor {
    let mut y = Tensor::zeros(Dtype::Bool, shape);
    // One byte per bool.
    for (i, b) in y.data.iter_mut().enumerate() {
        *b = u8::from(pred(i));
    }
    y
}

/// True when element `i` of `t` is non-zero (NaN is non-zero, -0 is zero).
#[inline]
fn truthy(t: &Tensor, i: usize) -> bool {
    if t.dtype.is_float() {
        t.get_f64(i) != 0.0
    } else if t.dtype.size() == 1 {
        t.data[i] != 0
    } else {
        t.bits(i) != 0
    }
}

// ---- unary float ops: cos, reciprocal, rsqrt --------------------------------

fn float_unary_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    float_inputs(case, "this operator")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn cos_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // cos(±inf) = NaN, cos(NaN) = NaN, cos(±0) = 1.
    Ok(vec![map_exact(&inputs[0], case.outputs[0].dtype, f64::cos)])
}

fn reciprocal_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // 1/±0 = ±inf, 1/±inf = ±0. f32 arithmetic for 16/32-bit floats (one
    // rounding to f32, exact enough to round once more to f16/bf16).
    let x = &inputs[0];
    let out = case.outputs[0].dtype;
    let mut y = Tensor::zeros(out, &x.shape);
    let wide = x.dtype == Dtype::Float64 || out == Dtype::Float64;
    for i in 0..x.numel() {
        let v = x.get_f64(i);
        let r = if wide {
            1.0 / v
        } else {
            f64::from(1.0f32 / v as f32)
        };
        y.set_f64(i, r);
    }
    Ok(vec![y])
}

fn rsqrt_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // 1/sqrt(x): +0 -> +inf, -0 -> -inf (1/sqrt(-0) = 1/-0, as torch),
    // x < 0 -> NaN, +inf -> +0.
    Ok(vec![map_exact(&inputs[0], case.outputs[0].dtype, |v| {
        1.0 / v.sqrt()
    })])
}

// ---- neg: y = -x ------------------------------------------------------------

fn neg_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    no_bool_inputs(case, "neg")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn neg_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // Floats flip the sign (exact; -0 <-> +0, NaN stays NaN). Integers wrap:
    // -(-128) = -128 in int8 (set_i128 reduces modulo 2^width).
    let x = &inputs[0];
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    for i in 0..x.numel() {
        if x.dtype.is_float() {
            y.set_f64(i, -x.get_f64(i));
        } else {
            y.set_i128(i, -x.get_i128(i));
        }
    }
    Ok(vec![y])
}

// ---- trunc: round toward zero -------------------------------------------------

fn trunc_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    no_bool_inputs(case, "trunc")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn trunc_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // f64::trunc keeps the sign (trunc(-0.5) = -0.0) and keeps inf and NaN;
    // integers are copied.
    let x = &inputs[0];
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    for i in 0..x.numel() {
        if x.dtype.is_float() {
            y.set_f64(i, x.get_f64(i).trunc());
        } else {
            y.set_i128(i, x.get_i128(i));
        }
    }
    Ok(vec![y])
}

// ---- comparisons: equal, greater_equal, less, less_equal ----------------------

fn compare_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    no_bool_inputs(case, "this comparison")?;
    same_shape_and_dtype(case, "this comparison")?;
    bool_output(case, "this comparison")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

/// `y[i] = cmp(x1[i], x2[i])` with IEEE float semantics (any comparison
/// with NaN is false; -0 == +0) and exact integers.
fn compare_with(
    inputs: &[Tensor],
    float_cmp: impl Fn(f64, f64) -> bool,
    int_cmp: impl Fn(i128, i128) -> bool,
) -> Vec<Tensor> {
    let (a, b) = (&inputs[0], &inputs[1]);
    let y = if a.dtype.is_float() {
        bool_map(&a.shape, |i| float_cmp(a.get_f64(i), b.get_f64(i)))
    } else {
        bool_map(&a.shape, |i| int_cmp(a.get_i128(i), b.get_i128(i)))
    };
    vec![y]
}

fn equal_compute(_case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    Ok(compare_with(inputs, |a, b| a == b, |a, b| a == b))
}

fn greater_equal_compute(_case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    Ok(compare_with(inputs, |a, b| a >= b, |a, b| a >= b))
}

fn less_compute(_case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    Ok(compare_with(inputs, |a, b| a < b, |a, b| a < b))
}

fn less_equal_compute(_case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    Ok(compare_with(inputs, |a, b| a <= b, |a, b| a <= b))
}

// ---- logical_not, logical_or ----------------------------------------------------

fn logical_not_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    bool_output(case, "logical_not")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn logical_not_compute(_case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // Any non-zero byte (or non-zero number, NaN included) is true.
    let x = &inputs[0];
    Ok(vec![bool_map(&x.shape, |i| !truthy(x, i))])
}

fn logical_or_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    same_shape_and_dtype(case, "logical_or")?;
    bool_output(case, "logical_or")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn logical_or_compute(_case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (a, b) = (&inputs[0], &inputs[1]);
    Ok(vec![bool_map(&a.shape, |i| truthy(a, i) || truthy(b, i))])
}

// ---- is_inf -------------------------------------------------------------------

fn is_inf_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    float_inputs(case, "is_inf")?;
    bool_output(case, "is_inf")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn is_inf_compute(_case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // True for +inf and -inf only (NaN is not infinite).
    let x = &inputs[0];
    Ok(vec![bool_map(&x.shape, |i| x.get_f64(i).is_infinite())])
}

// ---- heaviside: 0 for x < 0, values for x == 0, 1 for x > 0 --------------------

fn heaviside_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    float_inputs(case, "heaviside")?;
    let (x, v) = (&case.inputs[0], &case.inputs[1]);
    if x.dtype != v.dtype {
        return Err(Reject::new(
            "dtype",
            format!(
                "`{}` is {} but `{}` is {}",
                x.name, x.dtype, v.name, v.dtype
            ),
        ));
    }
    let shape = broadcast_shape(&x.shape, &v.shape).ok_or_else(|| {
        Reject::new(
            "shapes",
            format!(
                "`{}` {} and `{}` {} do not broadcast",
                x.name,
                shape_str(&x.shape),
                v.name,
                shape_str(&v.shape)
            ),
        )
    })?;
    Ok(vec![shape])
}

fn heaviside_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // NaN input gives 0 (it is neither < 0, == 0 nor > 0); -0 counts as 0.
    let (x, v) = (&inputs[0], &inputs[1]);
    let shape = broadcast_shape(&x.shape, &v.shape)
        .ok_or_else(|| Reject::new("shapes", "heaviside: the inputs do not broadcast"))?;
    let mut y = Tensor::zeros(case.outputs[0].dtype, &shape);
    let sources = Odometer::broadcast(&x.shape, &shape).zip(Odometer::broadcast(&v.shape, &shape));
    for (i, (xi, vi)) in sources.enumerate() {
        let xv = x.get_f64(xi);
        let r = if xv > 0.0 {
            1.0
        } else if xv == 0.0 {
            v.get_f64(vi)
        } else {
            0.0
        };
        y.set_f64(i, r);
    }
    Ok(vec![y])
}

// ---- fill: y of shape `dims`, every element `value` -------------------------------

/// The output shape from attr `dims` (non-negative integers).
fn fill_dims(case: &Case) -> Result<Vec<usize>, Reject> {
    let Some(AttrValue::ListInt(dims)) = case.attr("dims") else {
        return Err(Reject::new("attrs", "fill needs a list_int attr `dims`"));
    };
    dims.iter()
        .map(|&d| {
            usize::try_from(d)
                .map_err(|_| Reject::new("attrs", format!("dims has the negative size {d}")))
        })
        .collect()
}

fn fill_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let value = &case.inputs[0];
    if numel(&value.shape) != 1 {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` {} must hold exactly one element",
                value.name,
                shape_str(&value.shape)
            ),
        ));
    }
    if case.outputs[0].dtype != value.dtype {
        return Err(Reject::new(
            "dtype",
            format!(
                "the output is {} but `{}` is {}; fill keeps value's dtype",
                case.outputs[0].dtype, value.name, value.dtype
            ),
        ));
    }
    Ok(vec![fill_dims(case)?])
}

fn fill_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // The element's bytes are copied as they are (the output dtype is the
    // value's dtype), so NaN payloads and -0 are kept.
    let shape = fill_dims(case)?;
    let value = &inputs[0];
    let size = value.dtype.size();
    Ok(vec![Tensor::filled(
        case.outputs[0].dtype,
        &shape,
        &value.data[..size],
    )])
}

#[cfg(test)]
mod tests {
    use crate::testutil::{self, bits, parse_err, spec};

    use ascendopt_op::spec::OpSpec;
    use ascendopt_op::{Dtype, Tensor};

    fn run(spec: &OpSpec, case: &str, inputs: Vec<Tensor>) -> Tensor {
        testutil::run(spec, case, inputs).remove(0)
    }

    /// A one-input spec named `op` with cases `h` (float16 [n]), `b`
    /// (bfloat16 [n]) and `f` (float32 [n]), output same dtype.
    fn unary_spec(op: &str, n: usize, dtypes: &str) -> String {
        format!(
            r#"
[op]
name = "{op}"
level = 1
op_type = "X"
[[inputs]]
name = "x"
dtypes = [{dtypes}]
[[outputs]]
name = "y"
dtype = {{ same_as = "x" }}
[[cases]]
name = "h"
shapes = [[{n}]]
dtype = "float16"
[[cases]]
name = "b"
shapes = [[{n}]]
dtype = "bfloat16"
[[cases]]
name = "f"
shapes = [[{n}]]
dtype = "float32"
"#
        )
    }

    const FLOATS: &str = r#""float16", "bfloat16", "float32", "int32""#;

    #[test]
    fn cos_values_and_specials() {
        let s = spec(&unary_spec("cos", 6, FLOATS));
        let xs = [
            0.0,
            -0.0,
            std::f64::consts::PI,
            f64::INFINITY,
            f64::NAN,
            1.0,
        ];
        let y = run(&s, "f", vec![Tensor::from_f64s(Dtype::Float32, &[6], &xs)]);
        let v = y.to_f64s();
        assert_eq!(&v[..2], &[1.0, 1.0]);
        // cos(f32(pi)) = -1 + 4.4e-16: rounds to -1 in f32.
        assert_eq!(v[2], -1.0);
        assert!(v[3].is_nan() && v[4].is_nan());
        // cos(1) = 0.5403023058681398 -> f32 0x3F0A5140.
        assert_eq!(y.bits(5), 0x3F0A_5140);
        // f16: cos(1) = 0.5403 -> 1106.54/2048 -> 1107/2048.
        let y = run(&s, "h", vec![Tensor::from_f64s(Dtype::Float16, &[6], &xs)]);
        assert_eq!(y.get_f64(5), 1107.0 / 2048.0);
        // bf16: steps of 1/256 in [0.5, 1): 138.3 -> 138/256.
        let y = run(&s, "b", vec![Tensor::from_f64s(Dtype::Bfloat16, &[6], &xs)]);
        assert_eq!(y.get_f64(5), 138.0 / 256.0);
        // The 16-bit x is exact: bf16(pi) = 3.140625, cos = -0.99999953 ->
        // rounds to -1 (step 2^-9 below 1).
        assert_eq!(y.get_f64(2), -1.0);
        let text = unary_spec("cos", 6, FLOATS).replace("\"float32\"\n", "\"int32\"\n");
        assert!(parse_err(&text).ends_with(
            "cases[2].dtype: this operator is defined for float dtypes; input `x` is int32"
        ));
    }

    #[test]
    fn reciprocal_signed_zeros_and_rounding() {
        let s = spec(&unary_spec("reciprocal", 5, FLOATS));
        let xs = [0.0, -0.0, 3.0, f64::NEG_INFINITY, 4.0];
        let v = run(&s, "f", vec![Tensor::from_f64s(Dtype::Float32, &[5], &xs)]).to_f64s();
        assert_eq!(&v[..2], &[f64::INFINITY, f64::NEG_INFINITY]);
        assert_eq!(v[2], f64::from(1.0f32 / 3.0));
        assert!(v[3] == 0.0 && v[3].is_sign_negative());
        assert_eq!(v[4], 0.25);
        // f16: 1/3 = 0.33333 -> 1365.33/4096 -> 1365/4096.
        let y = run(&s, "h", vec![Tensor::from_f64s(Dtype::Float16, &[5], &xs)]);
        assert_eq!(y.get_f64(2), 1365.0 / 4096.0);
    }

    #[test]
    fn rsqrt_edges() {
        let s = spec(&unary_spec("rsqrt", 6, FLOATS));
        let xs = [0.0, -0.0, -4.0, f64::INFINITY, 4.0, 2.0];
        let y = run(&s, "f", vec![Tensor::from_f64s(Dtype::Float32, &[6], &xs)]);
        let v = y.to_f64s();
        assert_eq!(&v[..2], &[f64::INFINITY, f64::NEG_INFINITY]);
        assert!(v[2].is_nan());
        assert!(v[3] == 0.0 && v[3].is_sign_positive());
        assert_eq!(v[4], 0.5);
        // 1/sqrt(2) = 0.70710678118 -> f32 0x3F3504F3 (one rounding).
        assert_eq!(y.bits(5), 0x3F35_04F3);
        // bf16: 0.7071 in steps of 1/256 -> 181.02 -> 181/256.
        let y = run(&s, "b", vec![Tensor::from_f64s(Dtype::Bfloat16, &[6], &xs)]);
        assert_eq!(y.get_f64(5), 181.0 / 256.0);
    }

    const NEG: &str = r#"
[op]
name = "neg"
level = 1
op_type = "Neg"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16", "int32", "int8", "bool"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[cases]]
name = "h"
shapes = [[4]]
dtype = "float16"
[[cases]]
name = "i8"
shapes = [[4]]
dtype = "int8"
[[cases]]
name = "i32"
shapes = [[2]]
dtype = "int32"
"#;

    #[test]
    fn neg_flips_signs_and_integers_wrap() {
        let s = spec(NEG);
        let x = Tensor::from_f64s(Dtype::Float16, &[4], &[0.0, -0.0, 1.5, f64::INFINITY]);
        let y = run(&s, "h", vec![x]);
        assert_eq!(bits(&y), vec![0x8000, 0x0000, 0xBE00, 0xFC00]);
        let x = Tensor::from_i64s(Dtype::Int8, &[4], &[-128, 127, 0, -5]);
        assert_eq!(run(&s, "i8", vec![x]).to_i64s(), vec![-128, -127, 0, 5]);
        let x = Tensor::from_i64s(Dtype::Int32, &[2], &[i64::from(i32::MIN), 7]);
        assert_eq!(
            run(&s, "i32", vec![x]).to_i64s(),
            vec![i64::from(i32::MIN), -7]
        );
        let text = NEG.replace("dtype = \"int32\"", "dtype = \"bool\"");
        assert!(parse_err(&text)
            .ends_with("cases[2].dtype: neg is not defined for bool; input `x` is bool"));
    }

    #[test]
    fn trunc_keeps_sign_inf_nan_and_copies_integers() {
        let s = spec(
            &unary_spec("trunc", 7, r#""float16", "bfloat16", "float32", "uint8""#).replace(
                "name = \"b\"\nshapes = [[7]]\ndtype = \"bfloat16\"",
                "name = \"b\"\nshapes = [[7]]\ndtype = \"uint8\"",
            ),
        );
        let xs = [-0.5, 2.7, -2.7, f64::INFINITY, f64::NAN, 1e10, -0.0];
        let y = run(&s, "f", vec![Tensor::from_f64s(Dtype::Float32, &[7], &xs)]);
        let v = y.to_f64s();
        assert!(v[0] == 0.0 && v[0].is_sign_negative());
        assert_eq!(&v[1..4], &[2.0, -2.0, f64::INFINITY]);
        assert!(v[4].is_nan());
        assert_eq!(v[5], 1e10);
        assert!(v[6] == 0.0 && v[6].is_sign_negative());
        // f16 65504 stays; 1023.5 -> 1023.
        let x = Tensor::from_f64s(
            Dtype::Float16,
            &[7],
            &[65504.0, 1023.5, -1023.5, 0.0, 0.0, 0.0, 0.0],
        );
        let v = run(&s, "h", vec![x]).to_f64s();
        assert_eq!(&v[..3], &[65504.0, 1023.0, -1023.0]);
        let x = Tensor::from_i64s(Dtype::Uint8, &[7], &[0, 1, 255, 128, 7, 8, 9]);
        assert_eq!(
            run(&s, "b", vec![x]).to_i64s(),
            vec![0, 1, 255, 128, 7, 8, 9]
        );
    }

    /// A comparison spec: inputs x1, x2 of `dtypes`, bool output; cases
    /// `f` (float32 [n]), `h` (float16 [n]) and `i` (int32 [n]).
    fn cmp_spec(op: &str, n: usize) -> String {
        format!(
            r#"
[op]
name = "{op}"
level = 1
op_type = "X"
[[inputs]]
name = "x1"
dtypes = ["float16", "float32", "int32", "int8", "uint8", "int64", "bool"]
[[inputs]]
name = "x2"
dtypes = ["float16", "float32", "int32", "int8", "uint8", "int64", "bool"]
dtype = {{ same_as = "x1" }}
[[outputs]]
name = "y"
dtype = {{ fixed = "bool" }}
[[cases]]
name = "f"
shapes = [[{n}], [{n}]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[{n}], [{n}]]
dtype = "float16"
[[cases]]
name = "i"
shapes = [[{n}], [{n}]]
dtype = "int32"
[[cases]]
name = "l"
shapes = [[{n}], [{n}]]
dtype = "int64"
"#
        )
    }

    const NAN: f64 = f64::NAN;
    const INF: f64 = f64::INFINITY;

    /// Float operands covering NaN, signed zeros, infinities and order.
    const A: [f64; 7] = [NAN, 0.0, INF, 1.0, 2.0, NAN, -INF];
    const B: [f64; 7] = [NAN, -0.0, INF, 2.0, 1.0, 1.0, -INF];

    fn cmp_floats(op: &str) -> Vec<u8> {
        let s = spec(&cmp_spec(op, 7));
        let a = Tensor::from_f64s(Dtype::Float32, &[7], &A);
        let b = Tensor::from_f64s(Dtype::Float32, &[7], &B);
        let y = run(&s, "f", vec![a, b]);
        assert_eq!(y.dtype, Dtype::Bool);
        // float16 gives the same answers.
        let a = Tensor::from_f64s(Dtype::Float16, &[7], &A);
        let b = Tensor::from_f64s(Dtype::Float16, &[7], &B);
        assert_eq!(run(&s, "h", vec![a, b]).data, y.data);
        y.data
    }

    fn cmp_ints(op: &str, case: &str, dtype: Dtype) -> Vec<u8> {
        let s = spec(&cmp_spec(op, 4));
        let (lo, hi) = if dtype == Dtype::Int64 {
            (i64::MIN, i64::MAX)
        } else {
            (i64::from(i32::MIN), i64::from(i32::MAX))
        };
        // Differences that overflow the type: (min, max), (max, min); a tie;
        // neighbours (exact compare, no float rounding).
        let a = Tensor::from_i64s(dtype, &[4], &[lo, hi, 5, (1 << 24) + 1]);
        let b = Tensor::from_i64s(dtype, &[4], &[hi, lo, 5, 1 << 24]);
        run(&s, case, vec![a, b]).data
    }

    #[test]
    fn equal_is_ieee_and_exact() {
        assert_eq!(cmp_floats("equal"), vec![0, 1, 1, 0, 0, 0, 1]);
        assert_eq!(cmp_ints("equal", "i", Dtype::Int32), vec![0, 0, 1, 0]);
    }

    #[test]
    fn greater_equal_less_less_equal() {
        assert_eq!(cmp_floats("greater_equal"), vec![0, 1, 1, 0, 1, 0, 1]);
        assert_eq!(cmp_floats("less"), vec![0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(cmp_floats("less_equal"), vec![0, 1, 1, 1, 0, 0, 1]);
        assert_eq!(
            cmp_ints("greater_equal", "i", Dtype::Int32),
            vec![0, 1, 1, 1]
        );
        assert_eq!(cmp_ints("less", "i", Dtype::Int32), vec![1, 0, 0, 0]);
        assert_eq!(cmp_ints("less", "l", Dtype::Int64), vec![1, 0, 0, 0]);
        assert_eq!(cmp_ints("less_equal", "l", Dtype::Int64), vec![1, 0, 1, 0]);
    }

    #[test]
    fn comparison_needs_equal_shapes_and_bool_output() {
        let text = cmp_spec("less", 7).replace(
            "shapes = [[7], [7]]\ndtype = \"float16\"",
            "shapes = [[7], [8]]\ndtype = \"float16\"",
        );
        assert!(parse_err(&text).ends_with(
            "cases[1].shapes: `x1` [7] and `x2` [8] differ; this comparison needs equal shapes"
        ));
        let text = cmp_spec("less", 7).replace("fixed = \"bool\"", "same_as = \"x1\"");
        assert!(parse_err(&text)
            .ends_with("cases[0].dtype: this comparison outputs bool; output `y` is float32"));
    }

    const LOGICAL: &str = r#"
[op]
name = "logical_or"
level = 1
op_type = "LogicalOr"
[[inputs]]
name = "x1"
dtypes = ["bool", "float32"]
[[inputs]]
name = "x2"
dtypes = ["bool", "float32"]
dtype = { same_as = "x1" }
[[outputs]]
name = "y"
dtype = { fixed = "bool" }
[[cases]]
name = "b"
shapes = [[4], [4]]
dtype = "bool"
[[cases]]
name = "f"
shapes = [[3], [3]]
dtype = "float32"
"#;

    #[test]
    fn logical_or_and_not_treat_any_nonzero_as_true() {
        let s = spec(LOGICAL);
        let mut a = Tensor::zeros(Dtype::Bool, &[4]);
        let mut b = Tensor::zeros(Dtype::Bool, &[4]);
        a.data = vec![0, 1, 0, 7];
        b.data = vec![0, 0, 1, 0];
        assert_eq!(run(&s, "b", vec![a.clone(), b]).data, vec![0, 1, 1, 1]);
        let a32 = Tensor::from_f64s(Dtype::Float32, &[3], &[-0.0, NAN, 0.0]);
        let b32 = Tensor::from_f64s(Dtype::Float32, &[3], &[0.0, 0.0, 0.5]);
        assert_eq!(run(&s, "f", vec![a32, b32]).data, vec![0, 1, 1]);
        let not = LOGICAL
            .replace("name = \"logical_or\"", "name = \"logical_not\"")
            .replace("[[inputs]]\nname = \"x2\"\ndtypes = [\"bool\", \"float32\"]\ndtype = { same_as = \"x1\" }\n", "")
            .replace("shapes = [[4], [4]]", "shapes = [[4]]")
            .replace("shapes = [[3], [3]]", "shapes = [[3]]");
        let s = spec(&not);
        assert_eq!(run(&s, "b", vec![a]).data, vec![1, 0, 1, 0]);
    }

    #[test]
    fn is_inf_only_for_infinities() {
        let text = unary_spec("is_inf", 6, FLOATS).replace("same_as = \"x\"", "fixed = \"bool\"");
        let s = spec(&text);
        let xs = [INF, -INF, NAN, 65504.0, 0.0, 1e300];
        let y = run(&s, "h", vec![Tensor::from_f64s(Dtype::Float16, &[6], &xs)]);
        // 1e300 overflows to +inf when stored in f16.
        assert_eq!(y.data, vec![1, 1, 0, 0, 0, 1]);
        let y = run(&s, "f", vec![Tensor::from_f64s(Dtype::Float32, &[6], &xs)]);
        assert_eq!(y.data, vec![1, 1, 0, 0, 0, 1]);
        let y = run(&s, "b", vec![Tensor::from_f64s(Dtype::Bfloat16, &[6], &xs)]);
        assert_eq!(y.data, vec![1, 1, 0, 0, 0, 1]);
    }

    const HEAVISIDE: &str = r#"
[op]
name = "heaviside"
level = 1
op_type = "Heaviside"
[[inputs]]
name = "input"
dtypes = ["float16", "float32"]
[[inputs]]
name = "values"
dtypes = ["float16", "float32"]
dtype = { same_as = "input" }
[[outputs]]
name = "out"
dtype = { same_as = "input" }
[[cases]]
name = "same"
shapes = [[6], [6]]
dtype = "float32"
[[cases]]
name = "scalar"
shapes = [[2, 3], [1]]
dtype = "float16"
[[cases]]
name = "rows"
shapes = [[2, 1], [3]]
dtype = "float32"
"#;

    #[test]
    fn heaviside_zero_takes_values_and_nan_gives_zero() {
        let s = spec(HEAVISIDE);
        let x = Tensor::from_f64s(Dtype::Float32, &[6], &[-2.0, 0.0, -0.0, 3.0, NAN, -INF]);
        let v = Tensor::from_f64s(Dtype::Float32, &[6], &[9.0, 0.5, -7.0, 9.0, 9.0, 9.0]);
        assert_eq!(
            run(&s, "same", vec![x, v]).to_f64s(),
            vec![0.0, 0.5, -7.0, 1.0, 0.0, 0.0]
        );
        let x = Tensor::from_f64s(Dtype::Float16, &[2, 3], &[0.0, 1.0, -1.0, -0.0, INF, 0.0]);
        let v = Tensor::from_f64s(Dtype::Float16, &[1], &[0.25]);
        assert_eq!(
            run(&s, "scalar", vec![x, v]).to_f64s(),
            vec![0.25, 1.0, 0.0, 0.25, 1.0, 0.25]
        );
        // [2, 1] with [3] broadcasts to [2, 3].
        let x = Tensor::from_f64s(Dtype::Float32, &[2, 1], &[0.0, 5.0]);
        let v = Tensor::from_f64s(Dtype::Float32, &[3], &[1.5, 2.5, 3.5]);
        let y = run(&s, "rows", vec![x, v]);
        assert_eq!(y.shape, vec![2, 3]);
        assert_eq!(y.to_f64s(), vec![1.5, 2.5, 3.5, 1.0, 1.0, 1.0]);
        let text = HEAVISIDE.replace("shapes = [[2, 1], [3]]", "shapes = [[2, 2], [3]]");
        assert!(parse_err(&text)
            .ends_with("cases[2].shapes: `input` [2, 2] and `values` [3] do not broadcast"));
    }

    const FILL: &str = r#"
[op]
name = "fill"
level = 1
op_type = "Fill"
[[inputs]]
name = "value"
dtypes = ["float16", "float32", "int64", "bool", "int8"]
[[outputs]]
name = "y"
dtype = { same_as = "value" }
[[attrs]]
name = "dims"
type = "list_int"
required = true
[[cases]]
name = "h"
shapes = [[1]]
dtype = "float16"
attrs = { dims = [2, 3] }
[[cases]]
name = "l"
shapes = [[]]
dtype = "int64"
attrs = { dims = [5] }
[[cases]]
name = "e"
shapes = [[1]]
dtype = "int8"
attrs = { dims = [4, 0] }
"#;

    #[test]
    fn fill_repeats_the_value_bytes() {
        let s = spec(FILL);
        let v = Tensor::from_f64s(Dtype::Float16, &[1], &[-0.0]);
        let y = run(&s, "h", vec![v]);
        assert_eq!(y.shape, vec![2, 3]);
        assert_eq!(bits(&y), vec![0x8000; 6]);
        let v = Tensor::from_i64s(Dtype::Int64, &[], &[-(1 << 40) - 3]);
        assert_eq!(run(&s, "l", vec![v]).to_i64s(), vec![-(1 << 40) - 3; 5]);
        let v = Tensor::from_i64s(Dtype::Int8, &[1], &[-7]);
        let y = run(&s, "e", vec![v]);
        assert_eq!((y.shape.clone(), y.numel()), (vec![4, 0], 0));
        let text = FILL.replace(
            "shapes = [[1]]\ndtype = \"float16\"",
            "shapes = [[2]]\ndtype = \"float16\"",
        );
        assert!(parse_err(&text)
            .ends_with("cases[0].shapes: `value` [2] must hold exactly one element"));
        let text = FILL.replace("dims = [5]", "dims = [5, -1]");
        assert!(parse_err(&text).ends_with("cases[1].attrs: dims has the negative size -1"));
    }
}
