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

use crate::common::{arity, broadcast_shape, float_attr, Odometer, PerValue};
use ascendopt_op::float::round_f64;
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::{AttrValue, Case};
use ascendopt_op::tensor::{shape_str, Tensor};
use ascendopt_op::Dtype;

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
    Builtin {
        name: "swi_glu",
        infer: swi_glu_infer,
        compute: swi_glu_compute,
    },
    Builtin {
        name: "swi_glu_grad",
        infer: swi_glu_grad_infer,
        compute: swi_glu_grad_compute,
    },
    Builtin {
        name: "mul_sigmoid",
        infer: mul_sigmoid_infer,
        compute: mul_sigmoid_compute,
    },
    Builtin {
        name: "gcd",
        infer: gcd_infer,
        compute: gcd_compute,
    },
];

// ---- helpers ----------------------------------------------------------------

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

/// out[i] = f(inputs[0][i], inputs[1][i], ...) computed in f64 from the exact
/// inputs and rounded once to `out`.
fn map_exact(inputs: &[Tensor], out: Dtype, f: impl Fn(&[f64]) -> f64) -> Tensor {
    if let [x] = inputs {
        let direct = |t: &Tensor| map_exact_direct(std::slice::from_ref(t), out, &f);
        if let Some(y) = crate::common::unary_by_table16(x, out, direct) {
            return y;
        }
    }
    map_exact_direct(inputs, out, f)
}

/// [`map_exact`] element by element.
fn map_exact_direct(inputs: &[Tensor], out: Dtype, f: impl Fn(&[f64]) -> f64) -> Tensor {
    let mut y = Tensor::zeros(out, &inputs[0].shape);
    let refs: Vec<&Tensor> = inputs.iter().collect();
    crate::common::map_into(&refs, &mut y, f);
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
    if out == Dtype::Float64 {
        crate::common::map_into(inputs, &mut y, wide);
    } else {
        let mut args = vec![0.0f32; inputs.len()];
        crate::common::map_into(inputs, &mut y, |wide_args| {
            for (a, &w) in args.iter_mut().zip(wide_args) {
                *a = w as f32;
            }
            f64::from(f(&args))
        });
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

fn gelu_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
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

fn swish_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
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

fn gelu_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // Inputs: dy, x, y; y (the forward output) is not used by the formula.
    Ok(vec![times_factor(
        &inputs[0],
        &inputs[1],
        case.outputs[0].dtype,
        gelu_grad_factor,
    )])
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

fn fast_gelu_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // Inputs: dy, x.
    Ok(vec![times_factor(
        &inputs[0],
        &inputs[1],
        case.outputs[0].dtype,
        fast_gelu_grad_factor,
    )])
}

/// out[i] = dy[i] * factor(x[i]) in f64, rounded once to `out` (the
/// factor looked up per value where [`PerValue`] can).
fn times_factor(dy: &Tensor, x: &Tensor, out: Dtype, factor: impl Fn(f64) -> f64) -> Tensor {
    let factor = PerValue::new(x, factor);
    let mut y = Tensor::zeros(out, &dy.shape);
    for i in 0..y.numel() {
        y.set_f64(i, dy.get_f64(i) * factor.at(x, i));
    }
    y
}

// ---- addcmul / addcdiv: y = input_data + value * (x1 op x2) (float32 steps) ----

/// Shapes of addcmul / addcdiv: input_data, x1 and x2 equal; value one
/// element or the same shape. `ints` allows int32.
fn addc_infer(case: &Case, op: &str, ints: bool) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 4, 1)?;
    let dtype = case.inputs[0].dtype;
    let ok = matches!(dtype, Dtype::Float16 | Dtype::Float32 | Dtype::Bfloat16)
        || (ints && dtype == Dtype::Int32);
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
    if ascendopt_op::tensor::numel(&value.shape) != 1 && value.shape != input.shape {
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

fn addcmul_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
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

fn addcdiv_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
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

fn lerp_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
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

// ---- swi_glu: y = SiLU(A) * B, A/B the halves of x along dim (exact) ------------

/// An x split in halves along `dim`: x viewed as [rows, 2, cols].
struct HalfView {
    /// Product of the dims before `dim`.
    rows: usize,
    /// (size of `dim`) / 2 times the product of the dims after it.
    cols: usize,
    /// The shape of one half.
    half_shape: Vec<usize>,
}

/// Splits `x` (input `name`) in halves along the `dim` attr (negative counts
/// from the end); the size of `dim` must be even.
fn half_view(case: &Case, x: &ascendopt_op::spec::CaseInput) -> Result<HalfView, Reject> {
    let dim = case
        .attr("dim")
        .and_then(AttrValue::as_i64)
        .ok_or_else(|| Reject::new("attrs", "attr `dim` has no integer value"))?;
    let rank = x.shape.len() as i64;
    let d = if dim < 0 { dim + rank } else { dim };
    if !(0..rank).contains(&d) {
        return Err(Reject::new(
            "attrs",
            format!(
                "dim = {dim} is out of range for `{}` {}",
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    let d = d as usize;
    if !x.shape[d].is_multiple_of(2) {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` {} has an odd size {} along dim {dim}; it must split in halves",
                x.name,
                shape_str(&x.shape),
                x.shape[d]
            ),
        ));
    }
    let mut half_shape = x.shape.clone();
    half_shape[d] /= 2;
    Ok(HalfView {
        rows: x.shape[..d].iter().product(),
        cols: half_shape[d..].iter().product(),
        half_shape,
    })
}

/// sigmoid without overflow: exp(min(a, 0)) / (1 + exp(-|a|)).
fn sigmoid(a: f64) -> f64 {
    a.min(0.0).exp() / (1.0 + (-a.abs()).exp())
}

/// The sigmoid as the device holds it: in float32, the compute type of
/// every dtype. Below about -103 it is 0 there, which decides the inf * 0
/// cases of SwiGLU (an infinite B times a vanishing gate is NaN on the
/// device and in torch's float32, not the infinity an f64 sigmoid gives);
/// elsewhere it moves the result by one f32 ulp at most.
fn sigmoid_f32(a: f64) -> f64 {
    f64::from(sigmoid(a) as f32)
}

fn swi_glu_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    float_same_dtype(case, "swi_glu")?;
    Ok(vec![half_view(case, &case.inputs[0])?.half_shape])
}

fn swi_glu_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // y = (A * sigmoid(A)) * B: SiLU(-inf) = -inf * 0 = NaN, as torch.
    let view = half_view(case, &case.inputs[0])?;
    let x = &inputs[0];
    let mut y = Tensor::zeros(case.outputs[0].dtype, &view.half_shape);
    let silu = PerValue::new(x, |a| a * sigmoid_f32(a));
    // A row at a time: B decoded once, the row stored once (A * B in
    // that order, as the element form computed it).
    let mut b = vec![0.0f64; view.cols];
    let mut row = vec![0.0f64; view.cols];
    for r in 0..view.rows {
        x.read_f64s(r * 2 * view.cols + view.cols, &mut b);
        for (j, (o, b)) in row.iter_mut().zip(&b).enumerate() {
            *o = silu.at(x, r * 2 * view.cols + j) * b;
        }
        y.write_f64s(r * view.cols, &row);
    }
    Ok(vec![y])
}

// ---- swi_glu_grad: x_grad = cat(dA, dB) (exact) -------------------------------------

fn swi_glu_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    float_same_dtype(case, "swi_glu_grad")?;
    let (grad, x) = (&case.inputs[0], &case.inputs[1]);
    let view = half_view(case, x)?;
    if grad.shape != view.half_shape {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` is {} but must be {}: `{}` {} with dim halved",
                grad.name,
                shape_str(&grad.shape),
                shape_str(&view.half_shape),
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    Ok(vec![x.shape.clone()])
}

fn swi_glu_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // s = sigmoid(A); dA = g * B * (s * (1 + A * (1 - s))); dB = g * (A * s).
    // At A = +-inf, A * (1 - s) and A * s are inf * 0 = NaN, as autograd of
    // torch's SiLU.
    let view = half_view(case, &case.inputs[1])?;
    let (grad, x) = (&inputs[0], &inputs[1]);
    let mut dx = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    // The two factors of A, looked up per value where PerValue can.
    let da = PerValue::new(x, |a| {
        let s = sigmoid_f32(a);
        s * (1.0 + a * (1.0 - s))
    });
    let db = PerValue::new(x, |a| a * sigmoid_f32(a));
    for r in 0..view.rows {
        for j in 0..view.cols {
            let ia = r * 2 * view.cols + j;
            let ib = ia + view.cols;
            let b = x.get_f64(ib);
            let g = grad.get_f64(r * view.cols + j);
            dx.set_f64(ia, g * b * da.at(x, ia));
            dx.set_f64(ib, g * db.at(x, ia));
        }
    }
    Ok(vec![dx])
}

// ---- mul_sigmoid: float16 arithmetic, step by step --------------------------------

/// `v` rounded to float16 (nearest even, IEEE overflow), as f64.
fn f16r(v: f64) -> f64 {
    round_f64(v, Dtype::Float16)
}

fn mul_sigmoid_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    let (x1, x2) = (&case.inputs[0], &case.inputs[1]);
    if x1.dtype != Dtype::Float16 {
        return Err(Reject::new(
            "dtype",
            format!(
                "mul_sigmoid is defined for float16; input `{}` is {}",
                x1.name, x1.dtype
            ),
        ));
    }
    same_dtype(case, Dtype::Float16)?;
    let &[rows, cols] = x1.shape.as_slice() else {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` is {} but must be 2-D [N, L]",
                x1.name,
                shape_str(&x1.shape)
            ),
        ));
    };
    match x2.shape.as_slice() {
        &[1, a, b] if a * b == cols => Ok(vec![vec![rows, a, b]]),
        _ => Err(Reject::new(
            "shapes",
            format!(
                "`{}` is {} but must be [1, a, b] with a * b = {cols}, the row length of `{}` {}",
                x2.name,
                shape_str(&x2.shape),
                x1.name,
                shape_str(&x1.shape)
            ),
        )),
    }
}

fn mul_sigmoid_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // Every step rounds to float16, t1..t3 included (attr f32 -> half):
    // a = x1 * t1; e = exp(-a); d = 1 + e; s = 1 / d; s' = s < t2 ? s : 2 s;
    // p = x2 * t3; out = s' * p.
    let t =
        |name: &str| -> Result<f64, Reject> { Ok(f16r(f64::from(float_attr(case, name)? as f32))) };
    let (t1, t2, t3) = (t("t1")?, t("t2")?, t("t3")?);
    let (x1, x2) = (&inputs[0], &inputs[1]);
    let cols = x2.numel();
    let p: Vec<f64> = (0..cols).map(|j| f16r(x2.get_f64(j) * t3)).collect();
    let rows = x1.shape[0];
    let mut out_shape = x2.shape.clone();
    out_shape[0] = rows;
    let mut out = Tensor::zeros(case.outputs[0].dtype, &out_shape);
    let gate = PerValue::new(x1, |x| {
        let a = f16r(x * t1);
        let e = f16r((-a).exp());
        let d = f16r(1.0 + e);
        let s = f16r(1.0 / d);
        if s < t2 {
            s
        } else {
            f16r(2.0 * s)
        }
    });
    // A row of `cols` elements at a time, stored once.
    let mut row = vec![0.0f64; cols];
    let n = x1.numel();
    for start in (0..n).step_by(cols.max(1)) {
        let m = cols.min(n - start);
        for (j, (o, pj)) in row[..m].iter_mut().zip(&p).enumerate() {
            *o = gate.at(x1, start + j) * pj;
        }
        out.write_f64s(start, &row[..m]);
    }
    Ok(vec![out])
}

// ---- gcd: y = gcd(|x1|, |x2|), numpy broadcasting (integers) ----------------------

fn gcd_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    let (x1, x2) = (&case.inputs[0], &case.inputs[1]);
    if !matches!(x1.dtype, Dtype::Int16 | Dtype::Int32 | Dtype::Int64) {
        return Err(Reject::new(
            "dtype",
            format!(
                "gcd is defined for int16, int32 and int64; input `{}` is {}",
                x1.name, x1.dtype
            ),
        ));
    }
    same_dtype(case, x1.dtype)?;
    broadcast_shape(&x1.shape, &x2.shape)
        .map(|shape| vec![shape])
        .ok_or_else(|| {
            Reject::new(
                "shapes",
                format!(
                    "`{}` {} and `{}` {} do not broadcast",
                    x1.name,
                    shape_str(&x1.shape),
                    x2.name,
                    shape_str(&x2.shape)
                ),
            )
        })
}

fn gcd_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    // gcd(|a|, |b|) >= 0 with gcd(0, 0) = 0, exact in i128, then wrapped to
    // the dtype: gcd(INT32_MIN, 0) = 2^31 wraps to INT32_MIN (numpy, torch).
    let (x1, x2) = (&inputs[0], &inputs[1]);
    let shape = broadcast_shape(&x1.shape, &x2.shape)
        .ok_or_else(|| Reject::new("shapes", "the input shapes do not broadcast"))?;
    let mut y = Tensor::zeros(case.outputs[0].dtype, &shape);
    let sources =
        Odometer::broadcast(&x1.shape, &shape).zip(Odometer::broadcast(&x2.shape, &shape));
    for (i, (i1, i2)) in sources.enumerate() {
        let mut a = x1.get_i128(i1).abs();
        let mut b = x2.get_i128(i2).abs();
        while b != 0 {
            (a, b) = (b, a % b);
        }
        y.set_i128(i, a);
    }
    Ok(vec![y])
}

#[cfg(test)]
mod tests {
    use crate::testutil::{parse_err, run, spec};

    use ascendopt_op::{Dtype, Tensor};

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
            &[
                0.0,
                1.0,
                -1.0,
                60.0,
                -60.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ],
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
        let dy = Tensor::from_f64s(
            Dtype::Float32,
            &[8],
            &[1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0],
        );
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[8],
            &[
                0.0,
                1.0,
                -1.0,
                5.0,
                -8.0,
                -40.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ],
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

    const ADDCMUL: &str = r#"
[op]
name = "addcmul"
level = 2
op_type = "Addcmul"
[[inputs]]
name = "input_data"
dtypes = ["float16", "float32", "bfloat16", "int32"]
[[inputs]]
name = "x1"
dtypes = ["float16", "float32", "bfloat16", "int32"]
dtype = { same_as = "input_data" }
[[inputs]]
name = "x2"
dtypes = ["float16", "float32", "bfloat16", "int32"]
dtype = { same_as = "input_data" }
[[inputs]]
name = "value"
dtypes = ["float16", "float32", "bfloat16", "int32"]
dtype = { same_as = "input_data" }
[[outputs]]
name = "y"
dtype = { same_as = "input_data" }
[[cases]]
name = "f"
shapes = [[2], [2], [2], [1]]
dtype = "float32"
[[cases]]
name = "t"
shapes = [[2], [2], [2], [2]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[2], [2], [2], []]
dtype = "float16"
[[cases]]
name = "i"
shapes = [[2], [2], [2], [1]]
dtype = "int32"
"#;

    fn f32s(shape: &[usize], v: &[f64]) -> Tensor {
        Tensor::from_f64s(Dtype::Float32, shape, v)
    }

    #[test]
    fn addcmul_scalar_and_tensor_value_rounding_and_wrap() {
        let s = spec(ADDCMUL);
        let (input, x1, x2) = (
            f32s(&[2], &[1.0, 2.0]),
            f32s(&[2], &[2.0, 3.0]),
            f32s(&[2], &[3.0, -1.0]),
        );
        // 1 + 0.5 * 6 = 4; 2 + 0.5 * -3 = 0.5.
        let y = run(
            &s,
            "f",
            vec![input.clone(), x1.clone(), x2.clone(), f32s(&[1], &[0.5])],
        );
        assert_eq!(y[0].to_f64s(), vec![4.0, 0.5]);
        // Per-element value: 1 + 2 * 6 = 13; 2 + -1 * -3 = 5.
        let y = run(&s, "t", vec![input, x1, x2, f32s(&[2], &[2.0, -1.0])]);
        assert_eq!(y[0].to_f64s(), vec![13.0, 5.0]);
        // fp16, 0-d value: 2048 + 1 * 1 * 1 = 2049 ties to 2048; 2048 + 3 =
        // 2051 ties to 2052 (one rounding of the f32 result).
        let h = |v: &[f64]| Tensor::from_f64s(Dtype::Float16, &[v.len()], v);
        let value = Tensor::from_f64s(Dtype::Float16, &[], &[1.0]);
        let y = run(
            &s,
            "h",
            vec![h(&[2048.0, 2048.0]), h(&[1.0, 3.0]), h(&[1.0, 1.0]), value],
        );
        assert_eq!(y[0].to_f64s(), vec![2048.0, 2052.0]);
        // int32 wraps: 1 + 3 * (65536 * 65536 = 2^32 -> 0) = 1;
        // MAX + 3 * 1 * 1 -> MIN + 2.
        let i = |v: &[i64]| Tensor::from_i64s(Dtype::Int32, &[v.len()], v);
        let y = run(
            &s,
            "i",
            vec![
                i(&[1, i64::from(i32::MAX)]),
                i(&[65536, 1]),
                i(&[65536, 1]),
                i(&[3]),
            ],
        );
        assert_eq!(y[0].to_i64s(), vec![1, i64::from(i32::MIN) + 2]);
        let text = ADDCMUL.replace(
            "shapes = [[2], [2], [2], [2]]",
            "shapes = [[2], [2], [2], [3]]",
        );
        assert!(parse_err(&text).ends_with(
            "cases[1].shapes: `value` is [3]: it must hold one element or have the shape [2] of `input_data`"
        ));
    }

    const ADDCDIV: &str = r#"
[op]
name = "addcdiv"
level = 2
op_type = "Addcdiv"
[[inputs]]
name = "input_data"
dtypes = ["float16", "float32", "int32"]
[[inputs]]
name = "x1"
dtypes = ["float16", "float32", "int32"]
dtype = { same_as = "input_data" }
[[inputs]]
name = "x2"
dtypes = ["float16", "float32", "int32"]
dtype = { same_as = "input_data" }
[[inputs]]
name = "value"
dtypes = ["float16", "float32", "int32"]
dtype = { same_as = "input_data" }
[[outputs]]
name = "y"
dtype = { same_as = "input_data" }
[[cases]]
name = "f"
shapes = [[4], [4], [4], [1]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[1], [1], [1], [1]]
dtype = "float16"
"#;

    #[test]
    fn addcdiv_values_division_by_zero_and_dtypes() {
        let s = spec(ADDCDIV);
        let y = run(
            &s,
            "f",
            vec![
                f32s(&[4], &[1.0, 1.0, 1.0, 5.0]),
                f32s(&[4], &[3.0, 1.0, 0.0, -1.0]),
                f32s(&[4], &[2.0, 0.0, 0.0, -0.0]),
                f32s(&[1], &[0.5]),
            ],
        );
        let y = y[0].to_f64s();
        // 1 + 0.5 * 1.5 = 1.75; 1 / 0 = inf; 0 / 0 = NaN; -1 / -0 = inf.
        assert_eq!(y[0], 1.75);
        assert_eq!(y[1], f64::INFINITY);
        assert!(y[2].is_nan());
        assert_eq!(y[3], f64::INFINITY);
        // fp16: 1 + f32(1/3) = 1.3333334 -> 1365/1024.
        let h = |v: f64| Tensor::from_f64s(Dtype::Float16, &[1], &[v]);
        let y = run(&s, "h", vec![h(1.0), h(1.0), h(3.0), h(1.0)]);
        assert_eq!(y[0].to_f64s(), vec![1365.0 / 1024.0]);
        let text = ADDCDIV.replace("dtype = \"float16\"", "dtype = \"int32\"");
        assert!(parse_err(&text).ends_with(
            "cases[1].dtype: addcdiv is defined for float16, float32 and bfloat16; input `input_data` is int32"
        ));
    }

    const LERP: &str = r#"
[op]
name = "lerp"
level = 2
op_type = "Lerp"
[[inputs]]
name = "start"
dtypes = ["float16", "float32"]
[[inputs]]
name = "end"
dtypes = ["float16", "float32"]
dtype = { same_as = "start" }
[[inputs]]
name = "weight"
dtypes = ["float16", "float32"]
dtype = { same_as = "start" }
[[outputs]]
name = "y"
dtype = { same_as = "start" }
[[cases]]
name = "f"
shapes = [[4], [4], [4]]
dtype = "float32"
[[cases]]
name = "h"
shapes = [[1], [1], [1]]
dtype = "float16"
"#;

    #[test]
    fn lerp_one_sided_float32_steps() {
        let s = spec(LERP);
        let y = run(
            &s,
            "f",
            vec![
                f32s(&[4], &[1.0, 1.0, f64::INFINITY, 1e38]),
                f32s(&[4], &[3.0, 3.0, f64::INFINITY, -3e38]),
                f32s(&[4], &[0.25, -1.0, 0.5, 0.5]),
            ],
        );
        let y = y[0].to_f64s();
        // 1 + 0.25 * 2 = 1.5; extrapolation 1 - 2 = -1; inf - inf = NaN;
        // -3e38 - 1e38 overflows in f32 before the weight halves it: -inf.
        assert_eq!(&y[..2], &[1.5, -1.0]);
        assert!(y[2].is_nan());
        assert_eq!(y[3], f64::NEG_INFINITY);
        // fp16: 2048 + 0.25 * 4 = 2049 ties to 2048.
        let h = |v: f64| Tensor::from_f64s(Dtype::Float16, &[1], &[v]);
        let y = run(&s, "h", vec![h(2048.0), h(2052.0), h(0.25)]);
        assert_eq!(y[0].to_f64s(), vec![2048.0]);
    }

    const SWI_GLU: &str = r#"
[op]
name = "swi_glu"
level = 2
op_type = "SwiGlu"
[[inputs]]
name = "x"
dtypes = ["float16", "float32"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[attrs]]
name = "dim"
type = "int"
default = -1
[[cases]]
name = "last"
shapes = [[1, 6]]
dtype = "float32"
[[cases]]
name = "first"
shapes = [[2, 2]]
dtype = "float32"
attrs = { dim = 0 }
"#;

    #[test]
    fn swi_glu_halves_along_dim_and_limits() {
        let s = spec(SWI_GLU);
        // A = [1, -1, -inf], B = [2, 3, 1].
        let x = f32s(&[1, 6], &[1.0, -1.0, f64::NEG_INFINITY, 2.0, 3.0, 1.0]);
        let y = run(&s, "last", vec![x])[0].clone();
        assert_eq!(y.shape, vec![1, 3]);
        let y = y.to_f64s();
        // SiLU(1) = 0.7310586, SiLU(-1) = -0.2689414; SiLU(-inf) = NaN.
        assert!((y[0] - 1.462_117_2).abs() < 1e-6, "{}", y[0]);
        assert!((y[1] + 0.806_824_3).abs() < 1e-6, "{}", y[1]);
        assert!(y[2].is_nan());
        // dim 0: A is row 0, B row 1.
        let x = f32s(&[2, 2], &[1.0, 0.0, 2.0, 5.0]);
        let y = run(&s, "first", vec![x])[0].clone();
        assert_eq!(y.shape, vec![1, 2]);
        assert!((y.get_f64(0) - 1.462_117_2).abs() < 1e-6);
        assert_eq!(y.get_f64(1), 0.0);
        let text = SWI_GLU.replace("shapes = [[1, 6]]", "shapes = [[1, 5]]");
        assert!(parse_err(&text).ends_with(
            "cases[0].shapes: `x` [1, 5] has an odd size 5 along dim -1; it must split in halves"
        ));
    }

    const SWI_GLU_GRAD: &str = r#"
[op]
name = "swi_glu_grad"
level = 2
op_type = "SwiGluGrad"
[[inputs]]
name = "y_grad"
dtypes = ["float32"]
[[inputs]]
name = "x"
dtypes = ["float32"]
[[outputs]]
name = "x_grad"
dtype = { same_as = "y_grad" }
[[attrs]]
name = "dim"
type = "int"
default = -1
[[cases]]
name = "f"
shapes = [[2, 1], [2, 2]]
"#;

    #[test]
    fn swi_glu_grad_values_and_shapes() {
        let s = spec(SWI_GLU_GRAD);
        // Row 0: A = 1, B = 2, g = 1; row 1: A = -200, B = 1, g = 3.
        let g = f32s(&[2, 1], &[1.0, 3.0]);
        let x = f32s(&[2, 2], &[1.0, 2.0, -200.0, 1.0]);
        let dx = run(&s, "f", vec![g, x])[0].to_f64s();
        // s = 0.7310586: dA = 2 s (1 + (1 - s)) = 1.8553410, dB = s.
        assert!((dx[0] - 1.855_341_0).abs() < 1e-6, "{}", dx[0]);
        assert!((dx[1] - 0.731_058_6).abs() < 1e-6, "{}", dx[1]);
        // A = -200: s = e^-200 (no overflow): dA = 3 e^-200 (1 - 200) and
        // dB = -600 e^-200 both underflow f32 to -0.
        assert!(dx[2] == 0.0 && dx[2].is_sign_negative());
        assert!(dx[3] == 0.0 && dx[3].is_sign_negative());
        let text = SWI_GLU_GRAD.replace("shapes = [[2, 1], [2, 2]]", "shapes = [[2, 2], [2, 2]]");
        assert!(parse_err(&text).ends_with(
            "cases[0].shapes: `y_grad` is [2, 2] but must be [2, 1]: `x` [2, 2] with dim halved"
        ));
    }

    const MUL_SIGMOID: &str = r#"
[op]
name = "mul_sigmoid"
level = 2
op_type = "MulSigmoid"
[[inputs]]
name = "x1"
dtypes = ["float16"]
[[inputs]]
name = "x2"
dtypes = ["float16"]
[[outputs]]
name = "out"
dtypes = ["float16"]
[[attrs]]
name = "t1"
type = "float"
required = true
[[attrs]]
name = "t2"
type = "float"
required = true
[[attrs]]
name = "t3"
type = "float"
required = true
[[cases]]
name = "h"
shapes = [[2, 2], [1, 1, 2]]
attrs = { t1 = 0.3, t2 = 0.1, t3 = 0.8 }
"#;

    #[test]
    fn mul_sigmoid_float16_steps_threshold_and_broadcast() {
        let s = spec(MUL_SIGMOID);
        let x1 = Tensor::from_f64s(Dtype::Float16, &[2, 2], &[1.0, -20.0, 0.0, -40.0]);
        let x2 = Tensor::from_f64s(Dtype::Float16, &[1, 1, 2], &[2.0, -1.0]);
        let out = run(&s, "h", vec![x1, x2])[0].clone();
        assert_eq!(out.shape, vec![2, 1, 2]);
        let v = out.to_f64s();
        // x1 = 1: a = h(0.3) = 0.30005, e = h(exp(-a)) = 0.7407, d = 1.74,
        // s = 0.5747 >= 0.1 -> 2 s = 1.1494; p = h(2 * h(0.8)) = 2 * 0.79980 =
        // 1.599609375; h(1.1494 * 1.5996) = 1.8388671875.
        assert_eq!(v[0], 1.838_867_187_5);
        // x1 = -20: a = -6.0, e = 403.5, s = h(1/404.5) = 0.002472 < 0.1 kept;
        // times p = h(-1 * 0.8) = -0.7998: -0.001977.
        assert!((v[1] + 0.001_977).abs() < 2e-6, "{}", v[1]);
        // x1 = 0: s = 0.5 -> 1.0 * p.
        assert_eq!(v[2], 1.599_609_375);
        // x1 = -40: a = -12, e = 162755 overflows float16 to inf, s = 0.
        assert_eq!(v[3], 0.0);
        let text = MUL_SIGMOID.replace("[1, 1, 2]", "[1, 1, 3]");
        assert!(parse_err(&text).contains(
            "`x2` is [1, 1, 3] but must be [1, a, b] with a * b = 2, the row length of `x1` [2, 2]"
        ));
    }

    const GCD: &str = r#"
[op]
name = "gcd"
level = 2
op_type = "Gcd"
[[inputs]]
name = "x1"
dtypes = ["int16", "int32", "int64", "float32"]
[[inputs]]
name = "x2"
dtypes = ["int16", "int32", "int64", "float32"]
dtype = { same_as = "x1" }
[[outputs]]
name = "y"
dtype = { same_as = "x1" }
[[cases]]
name = "i32"
shapes = [[7], [7]]
dtype = "int32"
[[cases]]
name = "i16"
shapes = [[2], [2]]
dtype = "int16"
[[cases]]
name = "bcast"
shapes = [[2, 1], [3]]
dtype = "int64"
"#;

    #[test]
    fn gcd_signs_zeros_wrap_and_broadcasting() {
        let s = spec(GCD);
        let i32s = |v: &[i64]| Tensor::from_i64s(Dtype::Int32, &[v.len()], v);
        let min = i64::from(i32::MIN);
        let y = run(
            &s,
            "i32",
            vec![
                i32s(&[6, -4, 0, 0, min, 7, min]),
                i32s(&[9, -6, 0, 5, 0, 13, 1 << 20]),
            ],
        );
        // gcd(INT32_MIN, 0) = 2^31 wraps to INT32_MIN; gcd(2^31, 2^20) = 2^20.
        assert_eq!(y[0].to_i64s(), vec![3, 2, 0, 5, min, 1, 1 << 20]);
        let i16s = |v: &[i64]| Tensor::from_i64s(Dtype::Int16, &[v.len()], v);
        let y = run(&s, "i16", vec![i16s(&[-32768, -32768]), i16s(&[0, 12])]);
        assert_eq!(y[0].to_i64s(), vec![-32768, 4]);
        // [2, 1] with [3] -> [2, 3].
        let a = Tensor::from_i64s(Dtype::Int64, &[2, 1], &[12, 1_000_000_000_000]);
        let b = Tensor::from_i64s(Dtype::Int64, &[3], &[18, 8, 250_000_000_000]);
        let y = run(&s, "bcast", vec![a, b])[0].clone();
        assert_eq!(y.shape, vec![2, 3]);
        assert_eq!(y.to_i64s(), vec![6, 4, 4, 2, 8, 250_000_000_000]);
        let text = GCD.replace("shapes = [[2, 1], [3]]", "shapes = [[2, 2], [3]]");
        assert!(parse_err(&text)
            .ends_with("cases[2].shapes: `x1` [2, 2] and `x2` [3] do not broadcast"));
        let text = GCD.replace("dtype = \"int16\"", "dtype = \"float32\"");
        assert!(parse_err(&text).ends_with(
            "cases[1].dtype: gcd is defined for int16, int32 and int64; input `x1` is float32"
        ));
    }
}
