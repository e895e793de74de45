//! Builtin goldens of the level2_math operators (issue: operator suite):
//! addcdiv, addcmul, lerp, gelu, gelu_grad, fast_gelu_grad, swish,
//! mul_sigmoid, gcd, swi_glu, swi_glu_grad. Semantics follow
//! shared/ref/operators-l2.md.
//!
//! Two numeric styles, chosen per operator and said in its section:
//! - **float32 steps** (addcdiv, addcmul, lerp): the documented formula is
//!   evaluated in f32 one operation at a time, in the order written, and the
//!   result rounded once to the output dtype, as the CANN kernels compute
//!   16-bit inputs in float32. Cancellation of large terms then gives the same
//!   answer as the device instead of a more exact one.
//! - **exact** (gelu, gelu_grad, fast_gelu_grad, swish, swi_glu,
//!   swi_glu_grad): the formula is evaluated in f64 from the exact inputs and
//!   rounded once. A float32 kernel differs by a few f32 ulps, which is at
//!   most one ulp of a 16-bit output; the op.toml files raise the bfloat16
//!   tolerance to one bf16 ulp (8e-3) accordingly, as `rms_norm` does.
//!
//! mul_sigmoid is specified in float16 arithmetic and gcd in integers; their
//! sections say how.

use super::{Builtin, Reject};
use crate::spec::{AttrValue, Case};
use crate::tensor::{shape_str, Tensor};
use crate::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "gelu",
        infer: gelu_infer,
        compute: gelu_compute,
    },
    Builtin {
        name: "swish",
        infer: swish_infer,
        compute: swish_compute,
    },
    Builtin {
        name: "fast_gelu_grad",
        infer: fast_gelu_grad_infer,
        compute: fast_gelu_grad_compute,
    },
    Builtin {
        name: "gelu_grad",
        infer: gelu_grad_infer,
        compute: gelu_grad_compute,
    },
    Builtin {
        name: "addcmul",
        infer: addcmul_infer,
        compute: addcmul_compute,
    },
    Builtin {
        name: "addcdiv",
        infer: addcdiv_infer,
        compute: addcdiv_compute,
    },
    Builtin {
        name: "lerp",
        infer: lerp_infer,
        compute: lerp_compute,
    },
];

// ---- helpers ----------------------------------------------------------------

/// The case has `inputs` inputs and `outputs` outputs.
fn arity(case: &Case, inputs: usize, outputs: usize) -> Result<(), Reject> {
    if case.inputs.len() != inputs || case.outputs.len() != outputs {
        return Err(Reject::new(
            "shapes",
            format!(
                "this golden needs {inputs} input(s) and {outputs} output(s), the spec declares {} and {}",
                case.inputs.len(),
                case.outputs.len()
            ),
        ));
    }
    Ok(())
}

/// Every input is one of float16, float32, bfloat16 and all share a dtype;
/// every output has that dtype too.
fn float_same_dtype(case: &Case, op: &str) -> Result<Dtype, Reject> {
    let first = &case.inputs[0];
    if !matches!(
        first.dtype,
        Dtype::Float16 | Dtype::Float32 | Dtype::Bfloat16
    ) {
        return Err(Reject::new(
            "dtype",
            format!(
                "{op} is defined for float16, float32 and bfloat16; input `{}` is {}",
                first.name, first.dtype
            ),
        ));
    }
    same_dtype(case, first.dtype)?;
    Ok(first.dtype)
}

/// Every input and output has dtype `dtype`.
fn same_dtype(case: &Case, dtype: Dtype) -> Result<(), Reject> {
    let first = &case.inputs[0];
    for i in &case.inputs[1..] {
        if i.dtype != dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "`{}` is {} but `{}` is {}",
                    i.name, i.dtype, first.name, first.dtype
                ),
            ));
        }
    }
    for o in &case.outputs {
        if o.dtype != dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "output `{}` is {} but the inputs are {dtype}",
                    o.name, o.dtype
                ),
            ));
        }
    }
    Ok(())
}

/// Every input has the shape of the first one.
fn same_shapes(case: &Case, op: &str) -> Result<Vec<usize>, Reject> {
    let first = &case.inputs[0];
    for i in &case.inputs[1..] {
        if i.shape != first.shape {
            return Err(Reject::new(
                "shapes",
                format!(
                    "`{}` {} and `{}` {} differ; {op} needs equal shapes",
                    first.name,
                    shape_str(&first.shape),
                    i.name,
                    shape_str(&i.shape)
                ),
            ));
        }
    }
    Ok(first.shape.clone())
}

fn float_attr(case: &Case, name: &str) -> Result<f64, String> {
    case.attr(name)
        .and_then(AttrValue::as_f64)
        .ok_or_else(|| format!("attr `{name}` has no numeric value"))
}

/// out[i] = f(inputs[0][i], inputs[1][i], ...) computed in f64 from the exact
/// inputs and rounded once to `out`.
fn map_exact(inputs: &[Tensor], out: Dtype, f: impl Fn(&[f64]) -> f64) -> Tensor {
    let mut y = Tensor::zeros(out, &inputs[0].shape);
    let mut args = vec![0.0; inputs.len()];
    for i in 0..y.numel() {
        for (a, t) in args.iter_mut().zip(inputs) {
            *a = t.get_f64(i);
        }
        y.set_f64(i, f(&args));
    }
    y
}

/// out[i] = f(inputs[0][i], inputs[1][i], ...) computed in f32 (`f` does one
/// f32 operation per step) and rounded once to `out`; float64 is computed
/// in f64 by `wide`.
fn map_f32(
    inputs: &[&Tensor],
    out: Dtype,
    f: impl Fn(&[f32]) -> f32,
    wide: impl Fn(&[f64]) -> f64,
) -> Tensor {
    let mut y = Tensor::zeros(out, &inputs[0].shape);
    let is_wide = out == Dtype::Float64;
    let mut args = vec![0.0f32; inputs.len()];
    let mut wide_args = vec![0.0f64; inputs.len()];
    for i in 0..y.numel() {
        if is_wide {
            for (a, t) in wide_args.iter_mut().zip(inputs) {
                *a = t.get_f64(i);
            }
            y.set_f64(i, wide(&wide_args));
        } else {
            for (a, t) in args.iter_mut().zip(inputs) {
                *a = t.get_f64(i) as f32;
            }
            y.set_f64(i, f64::from(f(&args)));
        }
    }
    y
}

// ---- gelu: tanh approximation in sigmoid form (exact) -------------------------

/// sqrt(8 / pi), the factor of the sigmoid form of the tanh approximation.
const SQRT_8_OVER_PI: f64 = 1.595_769_121_605_730_7;
/// The cubic coefficient of the tanh approximation.
const GELU_CUBIC: f64 = 0.044_715;

/// GELU (tanh form): x / (1 + exp(-sqrt(8/pi) (x + 0.044715 x^3))). Literal
/// IEEE evaluation: gelu(+inf) = inf, gelu(-inf) = -inf / inf = NaN (torch's
/// tanh form gives NaN too), large negative x gives -0.
fn gelu_value(x: f64) -> f64 {
    x / (1.0 + (-SQRT_8_OVER_PI * (x + GELU_CUBIC * x * x * x)).exp())
}

fn gelu_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    float_same_dtype(case, "gelu")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn gelu_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    Ok(vec![map_exact(inputs, case.outputs[0].dtype, |a| {
        gelu_value(a[0])
    })])
}

// ---- swish: y = x * sigmoid(scale * x) (exact) ---------------------------------

fn swish_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    float_same_dtype(case, "swish")?;
    Ok(vec![case.inputs[0].shape.clone()])
}

fn swish_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    // The OpDef attr is a float (f32). x / (1 + exp(-scale x)): swish(-inf)
    // with scale > 0 is -inf / inf = NaN, as torch's x * sigmoid(scale x).
    let scale = f64::from(float_attr(case, "scale")? as f32);
    Ok(vec![map_exact(inputs, case.outputs[0].dtype, |a| {
        a[0] / (1.0 + (-scale * a[0]).exp())
    })])
}

// ---- gelu_grad: z = dy * GELU'(x), tanh form (exact) --------------------------

/// The documented coefficients: px = exp((C0 x^2 + C1) x),
/// GELU'(x) = t + px t^2 x (C2 x^2 + C3) with t = 1 / (1 + px).
const GELU_GRAD_C0: f64 = -0.071_354_816_3;
const GELU_GRAD_C1: f64 = -1.595_769_121_6;
const GELU_GRAD_C2: f64 = 0.214_064_448_8;
const GELU_GRAD_C3: f64 = 1.595_769_121_6;

/// GELU'(x) of the tanh approximation, without overflow: for a positive
/// exponent a, px t^2 = n / (1 + n)^2 and t = n / (1 + n) with n = exp(-a).
/// At x = +-inf the value is the limit, 1 or 0.
fn gelu_grad_factor(x: f64) -> f64 {
    if x.is_infinite() {
        return if x > 0.0 { 1.0 } else { 0.0 };
    }
    let a = (GELU_GRAD_C0 * x * x + GELU_GRAD_C1) * x;
    let (t, px_t2) = if a > 0.0 {
        let n = (-a).exp();
        (n / (1.0 + n), n / ((1.0 + n) * (1.0 + n)))
    } else {
        let px = a.exp();
        let t = 1.0 / (1.0 + px);
        (t, px * t * t)
    };
    t + px_t2 * x * (GELU_GRAD_C2 * x * x + GELU_GRAD_C3)
}

fn gelu_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 1)?;
    float_same_dtype(case, "gelu_grad")?;
    Ok(vec![same_shapes(case, "gelu_grad")?])
}

fn gelu_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    // Inputs: dy, x, y; y (the forward output) is not used by the formula.
    Ok(vec![map_exact(&inputs[..2], case.outputs[0].dtype, |a| {
        a[0] * gelu_grad_factor(a[1])
    })])
}

// ---- fast_gelu_grad: z = dy * d/dx [x sigmoid(1.702 x)] (exact) -------------

/// The FastGelu factor 1.702.
const FAST_GELU_ALPHA: f64 = 1.702;

/// d/dx [x sigmoid(1.702 x)] in the documented overflow-free form
/// (m + 1.702 x m + exp(1.702 (x - |x|))) / (m + 1)^2, m = exp(-1.702 |x|).
/// At x = +-inf the form is inf * 0; the value there is the limit, 1 or 0.
fn fast_gelu_grad_factor(x: f64) -> f64 {
    if x.is_infinite() {
        return if x > 0.0 { 1.0 } else { 0.0 };
    }
    let m = (-FAST_GELU_ALPHA * x.abs()).exp();
    let last = (FAST_GELU_ALPHA * (x - x.abs())).exp();
    (m + FAST_GELU_ALPHA * x * m + last) / ((m + 1.0) * (m + 1.0))
}

fn fast_gelu_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    float_same_dtype(case, "fast_gelu_grad")?;
    Ok(vec![same_shapes(case, "fast_gelu_grad")?])
}

fn fast_gelu_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    // Inputs: dy, x.
    Ok(vec![map_exact(inputs, case.outputs[0].dtype, |a| {
        a[0] * fast_gelu_grad_factor(a[1])
    })])
}

// ---- addcmul / addcdiv: y = input_data + value * (x1 op x2) (float32 steps) ----

/// Shapes of addcmul / addcdiv: input_data, x1 and x2 equal; value one
/// element or the same shape. `ints` allows int32.
fn addc_infer(case: &Case, op: &str, ints: bool) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 4, 1)?;
    let dtype = case.inputs[0].dtype;
    let ok = matches!(
        dtype,
        Dtype::Float16 | Dtype::Float32 | Dtype::Bfloat16
    ) || (ints && dtype == Dtype::Int32);
    if !ok {
        let allowed = if ints {
            "float16, float32, bfloat16 and int32"
        } else {
            "float16, float32 and bfloat16"
        };
        return Err(Reject::new(
            "dtype",
            format!(
                "{op} is defined for {allowed}; input `{}` is {dtype}",
                case.inputs[0].name
            ),
        ));
    }
    same_dtype(case, dtype)?;
    let (input, value) = (&case.inputs[0], &case.inputs[3]);
    for t in &case.inputs[1..3] {
        if t.shape != input.shape {
            return Err(Reject::new(
                "shapes",
                format!(
                    "`{}` {} and `{}` {} differ; {op} needs equal shapes",
                    input.name,
                    shape_str(&input.shape),
                    t.name,
                    shape_str(&t.shape)
                ),
            ));
        }
    }
    if crate::tensor::numel(&value.shape) != 1 && value.shape != input.shape {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` is {}: it must hold one element or have the shape {} of `{}`",
                value.name,
                shape_str(&value.shape),
                shape_str(&input.shape),
                input.name
            ),
        ));
    }
    Ok(vec![input.shape.clone()])
}

/// `value` broadcast to the input's shape when it holds one element.
fn addc_value(inputs: &[Tensor]) -> Tensor {
    let (input, value) = (&inputs[0], &inputs[3]);
    if value.numel() == 1 && input.numel() != 1 {
        Tensor::filled(value.dtype, &input.shape, &value.data)
    } else {
        let mut v = value.clone();
        v.shape = input.shape.clone();
        v
    }
}

fn addcmul_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    addc_infer(case, "addcmul", true)
}

fn addcmul_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    // t = x1 * x2; t = value * t; y = input_data + t. Floats in f32 steps,
    // int32 wraps.
    let value = addc_value(inputs);
    let (input, x1, x2) = (&inputs[0], &inputs[1], &inputs[2]);
    let out = case.outputs[0].dtype;
    if !out.is_float() {
        let mut y = Tensor::zeros(out, &input.shape);
        for i in 0..y.numel() {
            let t = x1.get_i128(i) * x2.get_i128(i);
            // Wrap each step to 32 bits like the vector unit.
            let t = (t as i32) as i128 * value.get_i128(i);
            y.set_i128(i, input.get_i128(i) + (t as i32) as i128);
        }
        return Ok(vec![y]);
    }
    Ok(vec![map_f32(
        &[input, x1, x2, &value],
        out,
        |a| a[0] + a[3] * (a[1] * a[2]),
        |a| a[0] + a[3] * (a[1] * a[2]),
    )])
}

fn addcdiv_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    addc_infer(case, "addcdiv", false)
}

fn addcdiv_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    // t = x1 / x2; t = value * t; y = input_data + t, in f32 steps (IEEE:
    // x / 0 = +-inf, 0 / 0 = NaN).
    let value = addc_value(inputs);
    let (input, x1, x2) = (&inputs[0], &inputs[1], &inputs[2]);
    Ok(vec![map_f32(
        &[input, x1, x2, &value],
        case.outputs[0].dtype,
        |a| a[0] + a[3] * (a[1] / a[2]),
        |a| a[0] + a[3] * (a[1] / a[2]),
    )])
}

// ---- lerp: y = start + weight * (end - start) (float32 steps) -------------------

fn lerp_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 1)?;
    float_same_dtype(case, "lerp")?;
    Ok(vec![same_shapes(case, "lerp")?])
}

fn lerp_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    // The one-sided form of the CANN kernel: d = end - start; d = weight * d;
    // y = start + d, in f32 steps. (torch.lerp switches to
    // end - (end - start) * (1 - weight) for |weight| >= 0.5, which differs by
    // about one f32 ulp.)
    let (start, end, weight) = (&inputs[0], &inputs[1], &inputs[2]);
    Ok(vec![map_f32(
        &[start, end, weight],
        case.outputs[0].dtype,
        |a| a[0] + a[2] * (a[1] - a[0]),
        |a| a[0] + a[2] * (a[1] - a[0]),
    )])
}

#[cfg(test)]
mod tests {
    use crate::golden::golden;
    use crate::spec::OpSpec;
    use crate::{Dtype, Tensor};
    use std::path::Path;

    fn spec(text: &str) -> OpSpec {
        OpSpec::parse(text, Path::new("t/op.toml")).unwrap()
    }

    fn parse_err(text: &str) -> String {
        OpSpec::parse(text, Path::new("t/op.toml"))
            .unwrap_err()
            .to_string()
    }

    fn run(spec: &OpSpec, case: &str, inputs: Vec<Tensor>) -> Vec<Tensor> {
        golden(spec, spec.case(case).unwrap(), &inputs).unwrap()
    }

    const GELU: &str = r#"
[op]
name = "gelu"
level = 2
op_type = "Gelu"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16", "int32"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[cases]]
name = "f"
shapes = [[7]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[2]]
dtype = "float16"
"#;

    #[test]
    fn gelu_tanh_form_values_and_limits() {
        let s = spec(GELU);
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[7],
            &[1.0, -1.0, 0.0, 3.0, -30.0, f64::INFINITY, f64::NEG_INFINITY],
        );
        let y = run(&s, "f", vec![x])[0].to_f64s();
        // 0.5 * (1 + tanh(0.7978845608 * 1.044715)) = 0.5 * (1 + 0.6858) ->
        // 0.8411920; gelu(-1) = -1 + gelu(1) (x - gelu(x) = gelu(-x)).
        assert!((y[0] - 0.841_192_0).abs() < 1e-6, "{}", y[0]);
        assert!((y[1] + 0.158_808_0).abs() < 1e-6, "{}", y[1]);
        assert_eq!(y[2], 0.0);
        // gelu(3) = 3 / (1 + exp(-1.5957691 * 4.207305)) = 3 / 1.0012138.
        assert!((y[3] - 2.996_362_6).abs() < 1e-6, "{}", y[3]);
        // Large negative: -30 / exp(1931.6) = -0 (f64 exp overflows to inf).
        assert!(y[4] == 0.0 && y[4].is_sign_negative());
        assert_eq!(y[5], f64::INFINITY);
        assert!(y[6].is_nan());
        // fp16: one rounding of the exact value: gelu(1) = 0.84119 -> 1723/2048.
        let x = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, 0.5]);
        let y = run(&s, "h", vec![x])[0].to_f64s();
        assert_eq!(y[0], 1723.0 / 2048.0);
        // gelu(0.5) = 0.5 / (1 + exp(-0.8068453)) = 0.3457140 -> 1416/4096.
        assert_eq!(y[1], 1416.0 / 4096.0);
        let text = GELU.replace("dtype = \"float16\"", "dtype = \"int32\"");
        assert!(parse_err(&text).ends_with(
            "cases[1].dtype: gelu is defined for float16, float32 and bfloat16; input `x` is int32"
        ));
    }

    const SWISH: &str = r#"
[op]
name = "swish"
level = 2
op_type = "Swish"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[attrs]]
name = "scale"
type = "float"
default = 1.0
[[cases]]
name = "silu"
shapes = [[4]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[1]]
dtype = "float16"
attrs = { scale = 1.2 }
[[cases]]
name = "zero"
shapes = [[1]]
dtype = "float32"
attrs = { scale = 0 }
"#;

    #[test]
    fn swish_scale_default_zero_and_infinities() {
        let s = spec(SWISH);
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[4],
            &[1.0, f64::INFINITY, f64::NEG_INFINITY, -100.0],
        );
        let y = run(&s, "silu", vec![x])[0].to_f64s();
        // Default scale 1 (SiLU): 1 / (1 + e^-1) = 0.7310586.
        assert_eq!(y[0], f64::from(0.731_058_6_f32));
        assert_eq!(y[1], f64::INFINITY);
        assert!(y[2].is_nan());
        // -100 / (1 + e^100) = -3.7e-42: an f32 subnormal, negative.
        assert!(y[3] < 0.0 && y[3] > -1e-41, "{}", y[3]);
        // fp16, scale = f32(1.2): -2 / (1 + e^2.4) = -0.16634538 -> -1363/8192.
        let x = Tensor::from_f64s(Dtype::Float16, &[1], &[-2.0]);
        assert_eq!(run(&s, "h", vec![x])[0].to_f64s(), vec![-1363.0 / 8192.0]);
        // scale = 0: x / 2.
        let x = Tensor::from_f64s(Dtype::Float32, &[1], &[3.0]);
        assert_eq!(run(&s, "zero", vec![x])[0].to_f64s(), vec![1.5]);
    }

    const FAST_GELU_GRAD: &str = r#"
[op]
name = "fast_gelu_grad"
level = 2
op_type = "FastGeluGrad"
[[inputs]]
name = "dy"
dtypes = ["float16", "float32"]
[[inputs]]
name = "x"
dtypes = ["float16", "float32"]
dtype = { same_as = "dy" }
[[outputs]]
name = "z"
dtype = { same_as = "dy" }
[[cases]]
name = "f"
shapes = [[7], [7]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[2], [2]]
dtype = "float16"
"#;

    #[test]
    fn fast_gelu_grad_values_limits_and_shapes() {
        let s = spec(FAST_GELU_GRAD);
        let dy = Tensor::from_f64s(Dtype::Float32, &[7], &[1.0, 1.0, 1.0, 3.0, 2.0, 2.0, 1.0]);
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[7],
            &[0.0, 1.0, -1.0, 60.0, -60.0, f64::INFINITY, f64::NEG_INFINITY],
        );
        let z = run(&s, "f", vec![dy, x])[0].to_f64s();
        // x = 0: (1 + 0 + 1) / 4 = 0.5.
        assert_eq!(z[0], 0.5);
        // s = sigmoid(1.702) = 0.845795, s + 1.702 s (1 - s) = 1.0677796;
        // the gradient at -x is 1 - (gradient at x).
        assert!((z[1] - 1.067_779_6).abs() < 1e-6, "{}", z[1]);
        assert!((z[2] + 0.067_779_6).abs() < 1e-6, "{}", z[2]);
        assert_eq!(z[3], 3.0);
        // 2 * (-60 * 1.702 * e^-102.12) = -9.0e-43, an f32 subnormal.
        assert!(z[4] < 0.0 && z[4] > -1e-42, "{}", z[4]);
        // Limits at the infinities.
        assert_eq!(z[5], 2.0);
        assert_eq!(z[6], 0.0);
        // fp16: 2 * 1.0677796 = 2.1355592 -> 2186/1024; -1.5 * -0.0677796 =
        // 0.1016694 -> 1666/16384.
        let dy = Tensor::from_f64s(Dtype::Float16, &[2], &[2.0, -1.5]);
        let x = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, -1.0]);
        assert_eq!(
            run(&s, "h", vec![dy, x])[0].to_f64s(),
            vec![2186.0 / 1024.0, 1666.0 / 16384.0]
        );
        let text = FAST_GELU_GRAD.replace("shapes = [[2], [2]]", "shapes = [[2], [3]]");
        assert!(parse_err(&text).ends_with(
            "cases[1].shapes: `dy` [2] and `x` [3] differ; fast_gelu_grad needs equal shapes"
        ));
    }

    const GELU_GRAD: &str = r#"
[op]
name = "gelu_grad"
level = 2
op_type = "GeluGrad"
[[inputs]]
name = "dy"
dtypes = ["float16", "float32", "bfloat16"]
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "dy" }
[[inputs]]
name = "y"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "dy" }
[[outputs]]
name = "z"
dtype = { same_as = "dy" }
[[cases]]
name = "f"
shapes = [[8], [8], [8]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[2], [2], [2]]
dtype = "float16"
"#;

    #[test]
    fn gelu_grad_values_limits_and_unused_y() {
        let s = spec(GELU_GRAD);
        let dy = Tensor::from_f64s(Dtype::Float32, &[8], &[1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0]);
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[8],
            &[0.0, 1.0, -1.0, 5.0, -8.0, -40.0, f64::INFINITY, f64::NEG_INFINITY],
        );
        // y is ignored: NaN there changes nothing.
        let y = Tensor::from_f64s(Dtype::Float32, &[8], &[f64::NAN; 8]);
        let z = run(&s, "f", vec![dy, x, y])[0].to_f64s();
        // x = 0: px = 1, t = 1/2, the second term has a factor x: 0.5.
        assert_eq!(z[0], 0.5);
        // x = 1: px = exp(-1.6671239) = 0.1887706, t = 0.8412, GELU'(1) =
        // 1.0829641; GELU'(-x) = 1 - GELU'(x).
        assert!((z[1] - 1.082_964_1).abs() < 1e-6, "{}", z[1]);
        assert!((z[2] + 0.082_964_1).abs() < 1e-6, "{}", z[2]);
        // x = 5: 1 + 1.546e-6.
        assert!((z[3] - 1.000_001_546).abs() < 1e-8, "{}", z[3]);
        // x = -8: 2 * -4.7147844e-20 (the exponent 53.3 needs the n = exp(-a)
        // branch to stay exact).
        assert!((z[4] + 9.429_569e-20).abs() < 1e-25, "{}", z[4]);
        // x = -40: exp(-a) underflows in f64: 0 from the overflow-free form
        // (the literal one is inf * 0).
        assert_eq!(z[5], 0.0);
        assert_eq!(&z[6..], &[1.0, 0.0]);
        // fp16: 3 * 1.0829641 = 3.2488923 -> 3326/1024; 0.5 * -0.0829641 ->
        // -1359/32768.
        let dy = Tensor::from_f64s(Dtype::Float16, &[2], &[3.0, 0.5]);
        let x = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, -1.0]);
        let y = Tensor::zeros(Dtype::Float16, &[2]);
        assert_eq!(
            run(&s, "h", vec![dy, x, y])[0].to_f64s(),
            vec![3326.0 / 1024.0, -1359.0 / 32768.0]
        );
    }
}
