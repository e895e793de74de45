//! Builtin goldens of the level2_fused operators (issue: operator suite):
//! ge_glu_v2, ge_glu_v3, ge_glu_grad_v2, gelu_quant, add_rms_norm_quant,
//! add_rms_norm_dynamic_quant, add_layer_norm_grad and group_norm_swish.
//!
//! Semantics follow shared/ref/operators-l2.md. Every golden computes in f64
//! from the exact inputs and rounds once to the output dtype (the kernels
//! compute in f32; the tolerances of the op.toml files cover the
//! difference). Float attributes are OpDef floats, so they are rounded to
//! f32 first. int8 quantisation is `sat_int8(rint(v))`: round half to even,
//! then clamp to [-128, 127].
//!
//! Optional inputs: the case format has no absent tensors, so an optional
//! input given with zero elements (shape `[0]`) is absent. The host code of
//! the operators follows the same convention.

use crate::common::{arity, bool_attr, str_attr, PerValue};
use ascendopt_op::float::round_f64;
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::{AttrValue, Case, CaseInput};
use ascendopt_op::tensor::{numel, shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "ge_glu_v2",
        infer: ge_glu_infer,
        compute: ge_glu_compute,
    },
    Builtin {
        name: "ge_glu_v3",
        infer: ge_glu_infer,
        compute: ge_glu_compute,
    },
    Builtin {
        name: "ge_glu_grad_v2",
        infer: ge_glu_grad_infer,
        compute: ge_glu_grad_compute,
    },
    Builtin {
        name: "gelu_quant",
        infer: gelu_quant_infer,
        compute: gelu_quant_compute,
    },
    Builtin {
        name: "add_rms_norm_quant",
        infer: add_rms_norm_quant_infer,
        compute: add_rms_norm_quant_compute,
    },
    Builtin {
        name: "add_rms_norm_dynamic_quant",
        infer: add_rms_norm_dynamic_quant_infer,
        compute: add_rms_norm_dynamic_quant_compute,
    },
    Builtin {
        name: "group_norm_swish",
        infer: group_norm_swish_infer,
        compute: group_norm_swish_compute,
    },
    Builtin {
        name: "add_layer_norm_grad",
        infer: add_layer_norm_grad_infer,
        compute: add_layer_norm_grad_compute,
    },
];

// ---- helpers ----------------------------------------------------------------

fn need_float(t: &CaseInput, op: &str) -> Result<(), Reject> {
    if !t.dtype.is_float() {
        return Err(Reject::new(
            "dtype",
            format!("{op}: `{}` must be a float dtype, not {}", t.name, t.dtype),
        ));
    }
    Ok(())
}

fn need_dtype(t: &CaseInput, dtypes: &[Dtype], op: &str) -> Result<(), Reject> {
    if !dtypes.contains(&t.dtype) {
        let names: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
        return Err(Reject::new(
            "dtype",
            format!(
                "{op}: `{}` is {}, expected {}",
                t.name,
                t.dtype,
                names.join(" or ")
            ),
        ));
    }
    Ok(())
}

fn same_shape(a: &CaseInput, b: &CaseInput, op: &str) -> Result<(), Reject> {
    if a.shape != b.shape {
        return Err(Reject::new(
            "shapes",
            format!(
                "{op}: `{}` {} and `{}` {} must have the same shape",
                a.name,
                shape_str(&a.shape),
                b.name,
                shape_str(&b.shape)
            ),
        ));
    }
    Ok(())
}

fn attr_int(case: &Case, name: &str) -> Result<i64, Reject> {
    case.attr(name)
        .and_then(AttrValue::as_i64)
        .ok_or_else(|| Reject::new("attrs", format!("attr `{name}` must be an integer")))
}

/// A float attr as the f32 the OpDef stores, widened to f64.
fn attr_f32(case: &Case, name: &str) -> Result<f64, Reject> {
    case.attr(name)
        .and_then(AttrValue::as_f64)
        .map(|v| f64::from(v as f32))
        .ok_or_else(|| Reject::new("attrs", format!("attr `{name}` must be a number")))
}

/// `dim` in [-rank, rank) normalised to [0, rank).
fn norm_dim(dim: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let d = if dim < 0 { dim + r } else { dim };
    (0..r).contains(&d).then_some(d as usize)
}

/// round half to even, then saturate to int8.
fn quant_int8(v: f64) -> f64 {
    if v.is_nan() {
        return 0.0;
    }
    ascendopt_op::float::rint(v).clamp(-128.0, 127.0)
}

// ---- GELU and its derivative in f64 -------------------------------------------

const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
const GELU_TANH_K: f64 = 0.044715;
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// erf(x) to ~1e-15: the Maclaurin series below 3, the continued fraction of
/// erfc above.
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let ax = x.abs();
    if ax < 3.0 {
        // erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
        let x2 = x * x;
        let mut term = x; // (-1)^n x^(2n+1) / n!
        let mut sum = x;
        let mut n = 0.0;
        while n < 200.0 {
            n += 1.0;
            term *= -x2 / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            if add.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else {
        let r = 1.0 - erfc_large(ax);
        if x < 0.0 {
            -r
        } else {
            r
        }
    }
}

/// erfc(x) for x >= 3: exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
fn erfc_large(x: f64) -> f64 {
    if x.is_infinite() {
        return 0.0;
    }
    let mut f = x;
    for k in (1..=60).rev() {
        f = x + (k as f64 / 2.0) / f;
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

/// Standard normal CDF Phi(x) = 0.5 (1 + erf(x / sqrt 2)), accurate in the
/// lower tail.
fn phi_cdf(x: f64) -> f64 {
    let z = x * std::f64::consts::FRAC_1_SQRT_2;
    if z < -3.0 {
        0.5 * erfc_large(-z)
    } else {
        0.5 * (1.0 + erf(z))
    }
}

/// GELU, erf form (`approximate` = 0) or tanh form (1).
fn gelu(x: f64, tanh_form: bool) -> f64 {
    if tanh_form {
        0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + GELU_TANH_K * x * x * x)).tanh())
    } else {
        x * phi_cdf(x)
    }
}

/// d GELU / dx of the same form.
fn gelu_grad(x: f64, tanh_form: bool) -> f64 {
    if tanh_form {
        let t = (SQRT_2_OVER_PI * (x + GELU_TANH_K * x * x * x)).tanh();
        0.5 * (1.0 + t)
            + 0.5 * x * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_K * x * x)
    } else {
        phi_cdf(x) + x * FRAC_1_SQRT_2PI * (-0.5 * x * x).exp()
    }
}

// ---- ge_glu_v2 / ge_glu_v3 ------------------------------------------------------

/// x viewed as [pre, 2, half] around `dim`: `half` = (size of dim / 2) *
/// (product of the dims after it).
struct GluView {
    pre: usize,
    half: usize,
}

fn glu_view(x: &CaseInput, case: &Case, op: &str) -> Result<(GluView, Vec<usize>), Reject> {
    let rank = x.shape.len();
    let dim = attr_int(case, "dim")?;
    let d = norm_dim(dim, rank).ok_or_else(|| {
        Reject::new(
            "attrs",
            format!(
                "{op}: dim = {dim} is out of range for `{}` {}",
                x.name,
                shape_str(&x.shape)
            ),
        )
    })?;
    let size = x.shape[d];
    if size == 0 || !size.is_multiple_of(2) {
        return Err(Reject::new(
            "shapes",
            format!(
                "{op}: dimension {d} of `{}` {} must be even and non-zero",
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    let approximate = attr_int(case, "approximate")?;
    if approximate != 0 && approximate != 1 {
        return Err(Reject::new(
            "attrs",
            format!("{op}: approximate = {approximate}; expected 0 (erf) or 1 (tanh)"),
        ));
    }
    bool_attr(case, "activate_left")?;
    let mut half_shape = x.shape.clone();
    half_shape[d] = size / 2;
    let pre = numel(&x.shape[..d]);
    let post = numel(&x.shape[d + 1..]);
    Ok((
        GluView {
            pre,
            half: size / 2 * post,
        },
        half_shape,
    ))
}

fn ge_glu_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 2)?;
    let x = &case.inputs[0];
    need_float(x, "ge_glu")?;
    let (_, half) = glu_view(x, case, "ge_glu")?;
    Ok(vec![half.clone(), half])
}

fn ge_glu_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (view, half_shape) = glu_view(&case.inputs[0], case, "ge_glu")?;
    let tanh_form = attr_int(case, "approximate")? == 1;
    let left = bool_attr(case, "activate_left")?;
    let x = &inputs[0];
    let mut y = Tensor::zeros(case.outputs[0].dtype, &half_shape);
    let mut g = Tensor::zeros(case.outputs[1].dtype, &half_shape);
    let l = view.half;
    let gelu_of = PerValue::new(x, |v| gelu(v, tanh_form));
    for p in 0..view.pre {
        for j in 0..l {
            let (ia, ib) = (p * 2 * l + j, p * 2 * l + l + j);
            let (act, lin) = if left { (ia, ib) } else { (ib, ia) };
            let ga = gelu_of.at(x, act);
            let lin = x.get_f64(lin);
            g.set_f64(p * l + j, ga);
            y.set_f64(p * l + j, ga * lin);
        }
    }
    Ok(vec![y, g])
}

// ---- ge_glu_grad_v2 -----------------------------------------------------------------

fn ge_glu_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 1)?;
    let (dy, x, g) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    for t in [dy, x, g] {
        need_float(t, "ge_glu_grad_v2")?;
    }
    if dy.dtype != x.dtype || g.dtype != x.dtype {
        return Err(Reject::new(
            "dtype",
            "ge_glu_grad_v2: dy, x and gelu must share one dtype",
        ));
    }
    let (_, half) = glu_view(x, case, "ge_glu_grad_v2")?;
    for t in [dy, g] {
        if t.shape != half {
            return Err(Reject::new(
                "shapes",
                format!(
                    "ge_glu_grad_v2: `{}` is {} but must be {} (`{}` {} with dim halved)",
                    t.name,
                    shape_str(&t.shape),
                    shape_str(&half),
                    x.name,
                    shape_str(&x.shape)
                ),
            ));
        }
    }
    Ok(vec![x.shape.clone()])
}

fn ge_glu_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (view, _) = glu_view(&case.inputs[1], case, "ge_glu_grad_v2")?;
    let tanh_form = attr_int(case, "approximate")? == 1;
    let left = bool_attr(case, "activate_left")?;
    let (dy, x, g) = (&inputs[0], &inputs[1], &inputs[2]);
    let mut dx = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    let l = view.half;
    let (act_off, lin_off) = if left { (0, l) } else { (l, 0) };
    // GELU' of a 16-bit x by table (the same value per bit pattern).
    let grad_of = PerValue::new(x, |v| gelu_grad(v, tanh_form));
    for p in 0..view.pre {
        for j in 0..l {
            let d = dy.get_f64(p * l + j);
            let act = p * 2 * l + act_off + j;
            let lin = x.get_f64(p * 2 * l + lin_off + j);
            dx.set_f64(p * 2 * l + lin_off + j, d * g.get_f64(p * l + j));
            dx.set_f64(act, d * lin * grad_of.at(x, act));
        }
    }
    Ok(vec![dx])
}

// ---- gelu_quant -----------------------------------------------------------------------

/// A per-channel parameter: absent (0 elements), one value for every
/// channel, or one value per channel.
fn channel_param(t: &CaseInput, channels: usize, op: &str) -> Result<(), Reject> {
    let n = numel(&t.shape);
    if t.shape.len() != 1 || (n != 0 && n != 1 && n != channels) {
        return Err(Reject::new(
            "shapes",
            format!(
                "{op}: `{}` is {} but must be [{channels}], [1] or [0] (absent)",
                t.name,
                shape_str(&t.shape)
            ),
        ));
    }
    Ok(())
}

/// Element `c` of a per-channel parameter, or `absent` when it is empty.
fn channel_value(t: &Tensor, c: usize, absent: f64) -> f64 {
    match t.numel() {
        0 => absent,
        1 => t.get_f64(0),
        _ => t.get_f64(c),
    }
}

fn gelu_quant_modes(case: &Case) -> Result<(bool, bool), Reject> {
    let tanh_form = match str_attr(case, "approximate")? {
        "none" => false,
        "tanh" => true,
        other => {
            return Err(Reject::new(
                "attrs",
                format!("gelu_quant: approximate = {other:?}; expected \"none\" or \"tanh\""),
            ))
        }
    };
    let dynamic = match str_attr(case, "quant_mode")? {
        "static" => false,
        "dynamic" => true,
        other => {
            return Err(Reject::new(
                "attrs",
                format!("gelu_quant: quant_mode = {other:?}; expected \"static\" or \"dynamic\""),
            ))
        }
    };
    Ok((tanh_form, dynamic))
}

fn gelu_quant_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 2)?;
    let (x, scale, offset) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    need_float(x, "gelu_quant")?;
    if !(2..=8).contains(&x.shape.len()) {
        return Err(Reject::new(
            "shapes",
            format!(
                "gelu_quant: `{}` {} must have 2 to 8 dimensions",
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    let channels = x.shape[x.shape.len() - 1];
    for t in [scale, offset] {
        need_float(t, "gelu_quant")?;
        channel_param(t, channels, "gelu_quant")?;
    }
    let (_, dynamic) = gelu_quant_modes(case)?;
    if !dynamic && numel(&scale.shape) == 0 {
        return Err(Reject::new(
            "shapes",
            "gelu_quant: static quantisation needs `input_scale`",
        ));
    }
    need_dtype_out(case, 0, Dtype::Int8, "gelu_quant")?;
    need_dtype_out(case, 1, Dtype::Float32, "gelu_quant")?;
    Ok(vec![x.shape.clone(), x.shape[..x.shape.len() - 1].to_vec()])
}

fn need_dtype_out(case: &Case, index: usize, dtype: Dtype, op: &str) -> Result<(), Reject> {
    let o = &case.outputs[index];
    if o.dtype != dtype {
        return Err(Reject::new(
            "dtype",
            format!("{op}: output `{}` must be {dtype}, not {}", o.name, o.dtype),
        ));
    }
    Ok(())
}

fn gelu_quant_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (tanh_form, dynamic) = gelu_quant_modes(case)?;
    let (x, scale, offset) = (&inputs[0], &inputs[1], &inputs[2]);
    let channels = x.shape[x.shape.len() - 1];
    let rows = x.numel() / channels.max(1);
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    let mut out_scale = Tensor::zeros(case.outputs[1].dtype, &x.shape[..x.shape.len() - 1]);
    let mut s = vec![0.0; channels];
    let gelu_of = PerValue::new(x, |v| gelu(v, tanh_form));
    let scales: Vec<f64> = (0..channels)
        .map(|c| channel_value(scale, c, 1.0))
        .collect();
    for r in 0..rows {
        for (c, v) in s.iter_mut().enumerate() {
            *v = gelu_of.at(x, r * channels + c) * scales[c];
        }
        if dynamic {
            let max = s.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let row_scale = max / 127.0;
            out_scale.set_f64(r, row_scale);
            for (c, v) in s.iter().enumerate() {
                let q = if max > 0.0 {
                    quant_int8(v / row_scale)
                } else {
                    0.0
                };
                y.set_f64(r * channels + c, q);
            }
        } else {
            // out_scale is not used by static quantisation: 0.
            for (c, v) in s.iter().enumerate() {
                y.set_f64(
                    r * channels + c,
                    quant_int8(v + channel_value(offset, c, 0.0)),
                );
            }
        }
    }
    Ok(vec![y, out_scale])
}

// ---- add_rms_norm_quant ------------------------------------------------------------

/// Checks x1, x2 (equal shapes, >= 1 dim, float16 or bfloat16) and gamma
/// ([D], D = last dim of x1, x1's dtype); returns D.
fn add_norm_inputs(case: &Case, op: &str) -> Result<usize, Reject> {
    let (x1, x2, gamma) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    need_dtype(x1, &[Dtype::Float16, Dtype::Bfloat16], op)?;
    same_shape(x1, x2, op)?;
    for t in [x2, gamma] {
        if t.dtype != x1.dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "{op}: `{}` is {} but `{}` is {}",
                    t.name, t.dtype, x1.name, x1.dtype
                ),
            ));
        }
    }
    let d = match x1.shape.last() {
        Some(&d) if d > 0 => d,
        _ => {
            return Err(Reject::new(
                "shapes",
                format!(
                    "{op}: `{}` {} needs a non-empty last dimension",
                    x1.name,
                    shape_str(&x1.shape)
                ),
            ))
        }
    };
    if gamma.shape != [d] {
        return Err(Reject::new(
            "shapes",
            format!(
                "{op}: `{}` is {} but must be [{d}], the last dimension of `{}` {}",
                gamma.name,
                shape_str(&gamma.shape),
                x1.name,
                shape_str(&x1.shape)
            ),
        ));
    }
    Ok(d)
}

fn add_rms_norm_quant_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    const OP: &str = "add_rms_norm_quant";
    arity(case, 7, 3)?;
    let d = add_norm_inputs(case, OP)?;
    let (scales1, zp1) = (&case.inputs[3], &case.inputs[5]);
    need_dtype(scales1, &[Dtype::Float32], OP)?;
    need_dtype(zp1, &[Dtype::Int32], OP)?;
    if scales1.shape != [d] {
        return Err(Reject::new(
            "shapes",
            format!(
                "{OP}: `{}` is {} but must be [{d}]",
                scales1.name,
                shape_str(&scales1.shape)
            ),
        ));
    }
    if zp1.shape != [d] && zp1.shape != [0] {
        return Err(Reject::new(
            "shapes",
            format!(
                "{OP}: `{}` is {} but must be [{d}] or [0] (absent)",
                zp1.name,
                shape_str(&zp1.shape)
            ),
        ));
    }
    if attr_int(case, "axis")? != -1 {
        return Err(Reject::new(
            "attrs",
            format!("{OP}: only axis = -1 is supported"),
        ));
    }
    if !bool_attr(case, "div_mode")? {
        return Err(Reject::new(
            "attrs",
            format!("{OP}: only div_mode = true is supported"),
        ));
    }
    attr_f32(case, "epsilon")?;
    need_dtype_out(case, 0, Dtype::Int8, OP)?;
    need_dtype_out(case, 1, Dtype::Int8, OP)?;
    let x = &case.inputs[0].shape;
    Ok(vec![x.clone(), x.clone(), x.clone()])
}

fn add_rms_norm_quant_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (x1, x2, gamma, scales1, zp1) =
        (&inputs[0], &inputs[1], &inputs[2], &inputs[3], &inputs[5]);
    let eps = attr_f32(case, "epsilon")?;
    let dtype = x1.dtype;
    let half = dtype == Dtype::Float16;
    let d = gamma.numel();
    let rows = x1.numel() / d;
    let mut y1 = Tensor::zeros(case.outputs[0].dtype, &x1.shape);
    let y2 = Tensor::zeros(case.outputs[1].dtype, &x1.shape);
    let mut xo = Tensor::zeros(case.outputs[2].dtype, &x1.shape);
    // The per-column parameters, decoded once.
    let column = |t: &Tensor| -> Vec<f64> { (0..d).map(|c| t.get_f64(c)).collect() };
    let (gamma, scales1) = (column(gamma), column(scales1));
    let zp1 = if zp1.numel() == 0 {
        vec![0.0; d]
    } else {
        column(zp1)
    };
    // A row at a time: decoded and stored a slice at a time.
    let (mut a, mut b, mut x, mut y) = (vec![0.0; d], vec![0.0; d], vec![0.0; d], vec![0.0; d]);
    for r in 0..rows {
        x1.read_f64s(r * d, &mut a);
        x2.read_f64s(r * d, &mut b);
        for ((v, &p), &q) in x.iter_mut().zip(&a).zip(&b) {
            // float16 adds in float16; bfloat16 keeps the float32 sum for the
            // norm and rounds only the x output.
            *v = round_f64(p + q, if half { dtype } else { Dtype::Float32 });
        }
        xo.write_f64s(r * d, &x);
        let mean_sq = x.iter().map(|v| v * v).sum::<f64>() / d as f64;
        let rstd = 1.0 / (mean_sq + eps).sqrt();
        for (c, (o, &v)) in y.iter_mut().zip(&x).enumerate() {
            let scaled = if half {
                // float16: x * rstd rounded to float16, times gamma in float16.
                round_f64(round_f64(v * rstd, dtype) * gamma[c], dtype)
            } else {
                v * rstd * gamma[c]
            };
            *o = quant_int8(scaled / scales1[c] + zp1[c]);
        }
        y1.write_f64s(r * d, &y);
    }
    Ok(vec![y1, y2, xo])
}

// ---- add_rms_norm_dynamic_quant ------------------------------------------------------

fn add_rms_norm_dynamic_quant_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    const OP: &str = "add_rms_norm_dynamic_quant";
    arity(case, 5, 5)?;
    let d = add_norm_inputs(case, OP)?;
    let x = &case.inputs[0];
    if x.shape.len() < 2 {
        return Err(Reject::new(
            "shapes",
            format!(
                "{OP}: `{}` {} must have at least 2 dimensions",
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    let (s1, s2) = (&case.inputs[3], &case.inputs[4]);
    for t in [s1, s2] {
        if t.dtype != x.dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "{OP}: `{}` is {} but `{}` is {}",
                    t.name, t.dtype, x.name, x.dtype
                ),
            ));
        }
        if t.shape != [d] && t.shape != [0] {
            return Err(Reject::new(
                "shapes",
                format!(
                    "{OP}: `{}` is {} but must be [{d}] or [0] (absent)",
                    t.name,
                    shape_str(&t.shape)
                ),
            ));
        }
    }
    if numel(&s1.shape) == 0 && numel(&s2.shape) != 0 {
        return Err(Reject::new(
            "shapes",
            format!("{OP}: `{}` needs `{}`", s2.name, s1.name),
        ));
    }
    attr_f32(case, "epsilon")?;
    need_dtype_out(case, 0, Dtype::Int8, OP)?;
    need_dtype_out(case, 1, Dtype::Int8, OP)?;
    need_dtype_out(case, 3, Dtype::Float32, OP)?;
    need_dtype_out(case, 4, Dtype::Float32, OP)?;
    let rows = x.shape[..x.shape.len() - 1].to_vec();
    Ok(vec![
        x.shape.clone(),
        x.shape.clone(),
        x.shape.clone(),
        rows.clone(),
        rows,
    ])
}

fn add_rms_norm_dynamic_quant_compute(
    case: &Case,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>, GoldenError> {
    let (x1, x2, gamma, s1, s2) = (&inputs[0], &inputs[1], &inputs[2], &inputs[3], &inputs[4]);
    let eps = attr_f32(case, "epsilon")?;
    let d = gamma.numel();
    let rows = x1.numel() / d;
    let row_shape = &x1.shape[..x1.shape.len() - 1];
    let mut y1 = Tensor::zeros(case.outputs[0].dtype, &x1.shape);
    let mut y2 = Tensor::zeros(case.outputs[1].dtype, &x1.shape);
    let mut xo = Tensor::zeros(case.outputs[2].dtype, &x1.shape);
    let mut scale1 = Tensor::zeros(case.outputs[3].dtype, row_shape);
    let mut scale2 = Tensor::zeros(case.outputs[4].dtype, row_shape);
    let mut x = vec![0.0; d];
    let mut s = vec![0.0; d];
    for r in 0..rows {
        for (c, v) in x.iter_mut().enumerate() {
            // The sum in float32 (exact for most 16-bit inputs).
            *v = round_f64(
                x1.get_f64(r * d + c) + x2.get_f64(r * d + c),
                Dtype::Float32,
            );
            xo.set_f64(r * d + c, *v);
        }
        let mean_sq = x.iter().map(|v| v * v).sum::<f64>() / d as f64;
        let rstd = 1.0 / (mean_sq + eps).sqrt();
        // Quantisation k uses smooth scale k; without smooth_scale2, y2 and
        // scale2 are 0 (not produced).
        for (k, smooth) in [s1, s2].into_iter().enumerate() {
            if k == 1 && smooth.numel() == 0 {
                break;
            }
            for (c, v) in s.iter_mut().enumerate() {
                let sm = if smooth.numel() == 0 {
                    1.0
                } else {
                    smooth.get_f64(c)
                };
                *v = x[c] * rstd * gamma.get_f64(c) * sm;
            }
            let max = s.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let row_scale = max / 127.0;
            let (y, scale) = if k == 0 {
                (&mut y1, &mut scale1)
            } else {
                (&mut y2, &mut scale2)
            };
            scale.set_f64(r, row_scale);
            for (c, v) in s.iter().enumerate() {
                let q = if max > 0.0 {
                    quant_int8(v / row_scale)
                } else {
                    0.0
                };
                y.set_f64(r * d + c, q);
            }
        }
    }
    Ok(vec![y1, y2, xo, scale1, scale2])
}

// ---- group_norm_swish -------------------------------------------------------------------

/// (N, C, HW, G) of a group_norm_swish case.
fn group_dims(case: &Case) -> Result<(usize, usize, usize, usize), Reject> {
    const OP: &str = "group_norm_swish";
    let (x, gamma, beta) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    if x.shape.len() < 2 {
        return Err(Reject::new(
            "shapes",
            format!(
                "{OP}: `{}` {} must be [N, C, ...]",
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    let (n, c) = (x.shape[0], x.shape[1]);
    let hw = numel(&x.shape[2..]);
    let groups = attr_int(case, "num_groups")?;
    if groups <= 0 || !c.is_multiple_of(groups as usize) {
        return Err(Reject::new(
            "attrs",
            format!("{OP}: num_groups = {groups} must be positive and divide C = {c}"),
        ));
    }
    for t in [gamma, beta] {
        if t.shape != [c] {
            return Err(Reject::new(
                "shapes",
                format!(
                    "{OP}: `{}` is {} but must be [{c}]",
                    t.name,
                    shape_str(&t.shape)
                ),
            ));
        }
    }
    Ok((n, c, hw, groups as usize))
}

fn group_norm_swish_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    const OP: &str = "group_norm_swish";
    arity(case, 3, 3)?;
    let (x, gamma, beta) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    need_float(x, OP)?;
    for t in [gamma, beta] {
        if t.dtype != x.dtype && t.dtype != Dtype::Float32 {
            return Err(Reject::new(
                "dtype",
                format!(
                    "{OP}: `{}` must be {} (x's dtype) or float32, not {}",
                    t.name, x.dtype, t.dtype
                ),
            ));
        }
    }
    if beta.dtype != gamma.dtype {
        return Err(Reject::new(
            "dtype",
            format!("{OP}: gamma and beta must share one dtype"),
        ));
    }
    if str_attr(case, "data_format")? != "NCHW" {
        return Err(Reject::new(
            "attrs",
            format!("{OP}: data_format must be \"NCHW\""),
        ));
    }
    attr_f32(case, "eps")?;
    attr_f32(case, "swish_scale")?;
    bool_attr(case, "activate_swish")?;
    let (n, _, _, g) = group_dims(case)?;
    Ok(vec![x.shape.clone(), vec![n, g], vec![n, g]])
}

fn group_norm_swish_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (n, c, hw, groups) = group_dims(case)?;
    let eps = attr_f32(case, "eps")?;
    let swish = bool_attr(case, "activate_swish")?;
    let scale = attr_f32(case, "swish_scale")?;
    let (x, gamma, beta) = (&inputs[0], &inputs[1], &inputs[2]);
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    let mut mean_t = Tensor::zeros(case.outputs[1].dtype, &[n, groups]);
    let mut rstd_t = Tensor::zeros(case.outputs[2].dtype, &[n, groups]);
    let cpg = c / groups;
    let size = cpg * hw;
    for b in 0..n {
        for g in 0..groups {
            let base = (b * groups + g) * size;
            let vals: Vec<f64> = (0..size).map(|i| x.get_f64(base + i)).collect();
            let mean = vals.iter().sum::<f64>() / size as f64;
            let var = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / size as f64;
            let rstd = 1.0 / (var + eps).sqrt();
            mean_t.set_f64(b * groups + g, mean);
            rstd_t.set_f64(b * groups + g, rstd);
            for (i, v) in vals.iter().enumerate() {
                let ch = g * cpg + i / hw;
                let z = (v - mean) * rstd * gamma.get_f64(ch) + beta.get_f64(ch);
                let out = if swish {
                    z / (1.0 + (-scale * z).exp())
                } else {
                    z
                };
                y.set_f64(base + i, out);
            }
        }
    }
    Ok(vec![y, mean_t, rstd_t])
}

// ---- add_layer_norm_grad ------------------------------------------------------------------

fn add_layer_norm_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    const OP: &str = "add_layer_norm_grad";
    arity(case, 7, 3)?;
    let (dy, x1, x2) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    let (rstd, mean, gamma, dsum) = (
        &case.inputs[3],
        &case.inputs[4],
        &case.inputs[5],
        &case.inputs[6],
    );
    need_float(dy, OP)?;
    for t in [x1, x2, gamma, dsum] {
        if t.dtype != dy.dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "{OP}: `{}` is {} but `{}` is {}",
                    t.name, t.dtype, dy.name, dy.dtype
                ),
            ));
        }
    }
    need_dtype(rstd, &[Dtype::Float32], OP)?;
    need_dtype(mean, &[Dtype::Float32], OP)?;
    same_shape(dy, x1, OP)?;
    same_shape(dy, x2, OP)?;
    // gamma covers the trailing normalised dims of dy.
    let r = gamma.shape.len();
    if r == 0
        || r > dy.shape.len()
        || dy.shape[dy.shape.len() - r..] != gamma.shape[..]
        || numel(&gamma.shape) == 0
    {
        return Err(Reject::new(
            "shapes",
            format!(
                "{OP}: `{}` {} must be the trailing dims of `{}` {}",
                gamma.name,
                shape_str(&gamma.shape),
                dy.name,
                shape_str(&dy.shape)
            ),
        ));
    }
    let rows = numel(&dy.shape) / numel(&gamma.shape);
    for t in [rstd, mean] {
        if numel(&t.shape) != rows {
            return Err(Reject::new(
                "shapes",
                format!(
                    "{OP}: `{}` {} must hold one value per row ({rows})",
                    t.name,
                    shape_str(&t.shape)
                ),
            ));
        }
    }
    if dsum.shape != dy.shape && dsum.shape != [0] {
        return Err(Reject::new(
            "shapes",
            format!(
                "{OP}: `{}` is {} but must be dy's shape or [0] (absent)",
                dsum.name,
                shape_str(&dsum.shape)
            ),
        ));
    }
    need_dtype_out(case, 1, Dtype::Float32, OP)?;
    need_dtype_out(case, 2, Dtype::Float32, OP)?;
    Ok(vec![
        dy.shape.clone(),
        gamma.shape.clone(),
        gamma.shape.clone(),
    ])
}

fn add_layer_norm_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (dy, x1, x2, rstd, mean, gamma, dsum) = (
        &inputs[0], &inputs[1], &inputs[2], &inputs[3], &inputs[4], &inputs[5], &inputs[6],
    );
    let d = gamma.numel();
    let rows = dy.numel() / d;
    let mut dx = Tensor::zeros(case.outputs[0].dtype, &dy.shape);
    let mut dgamma = vec![0.0; d];
    let mut dbeta = vec![0.0; d];
    let mut xhat = vec![0.0; d];
    let mut g = vec![0.0; d];
    for r in 0..rows {
        let (m, rs) = (mean.get_f64(r), rstd.get_f64(r));
        let (mut sum_g, mut sum_gx) = (0.0, 0.0);
        for c in 0..d {
            let i = r * d + c;
            xhat[c] = (x1.get_f64(i) + x2.get_f64(i) - m) * rs;
            let dyv = dy.get_f64(i);
            g[c] = dyv * gamma.get_f64(c);
            sum_g += g[c];
            sum_gx += g[c] * xhat[c];
            dgamma[c] += dyv * xhat[c];
            dbeta[c] += dyv;
        }
        let (mg, mgx) = (sum_g / d as f64, sum_gx / d as f64);
        for c in 0..d {
            let i = r * d + c;
            let extra = if dsum.numel() == 0 {
                0.0
            } else {
                dsum.get_f64(i)
            };
            dx.set_f64(i, rs * (g[c] - mg - xhat[c] * mgx) + extra);
        }
    }
    let out = |v: &[f64], k: usize| {
        let mut t = Tensor::zeros(case.outputs[k].dtype, &gamma.shape);
        for (i, x) in v.iter().enumerate() {
            t.set_f64(i, *x);
        }
        t
    };
    Ok(vec![dx, out(&dgamma, 1), out(&dbeta, 2)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{parse_err, run, spec};

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    #[test]
    fn erf_and_gelu_match_published_values() {
        // erf values from Abramowitz & Stegun table 7.1 / any CAS.
        close(erf(0.5), 0.520_499_877_813_046_5, 1e-15);
        close(erf(1.0), 0.842_700_792_949_714_9, 1e-15);
        close(erf(2.0), 0.995_322_265_018_952_7, 1e-15);
        close(erf(-3.0), -0.999_977_909_503_001_4, 1e-15);
        close(erfc_large(3.0), 2.209_049_699_858_544e-5, 1e-18);
        close(erfc_large(5.0), 1.537_459_794_428_035e-12, 1e-24);
        assert_eq!(erf(0.0), 0.0);
        // Phi(-6) = 9.8658765e-10: the lower tail keeps its relative accuracy.
        close(phi_cdf(-6.0) / 9.865_876_450_377_012e-10, 1.0, 1e-12);
        // gelu_erf(1) = Phi(1) = 0.8413447460685429; gelu_erf(-1) = -0.158655...
        close(gelu(1.0, false), 0.841_344_746_068_542_9, 1e-15);
        close(gelu(-1.0, false), -0.158_655_253_931_457_05, 1e-15);
        // tanh form: 0.5 (1 + tanh(0.7978845608 * 1.044715)) = 0.8411919906
        close(gelu(1.0, true), 0.841_191_990_608_276_8, 1e-15);
        assert!(gelu(f64::NEG_INFINITY, true).is_nan());
        assert_eq!(gelu(f64::INFINITY, false), f64::INFINITY);
        // Derivatives at 0 are 1/2; erf form at 1: Phi(1) + phi(1).
        close(gelu_grad(0.0, true), 0.5, 1e-15);
        close(gelu_grad(0.0, false), 0.5, 1e-15);
        close(
            gelu_grad(1.0, false),
            0.841_344_746_068_542_9 + 0.241_970_724_519_143_37,
            1e-15,
        );
        // The tanh-form derivative equals a finite difference of gelu.
        for &x in &[-2.5, -0.3, 0.7, 3.0] {
            let h = 1e-6;
            let fd = (gelu(x + h, true) - gelu(x - h, true)) / (2.0 * h);
            close(gelu_grad(x, true), fd, 1e-8);
            let fd = (gelu(x + h, false) - gelu(x - h, false)) / (2.0 * h);
            close(gelu_grad(x, false), fd, 1e-8);
        }
    }

    const GLU: &str = r#"
[op]
name = "ge_glu_v2"
level = 2
op_type = "GeGluV2"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[outputs]]
name = "gelu"
dtype = { same_as = "x" }
[[attrs]]
name = "dim"
type = "int"
default = -1
[[attrs]]
name = "approximate"
type = "int"
default = 1
[[attrs]]
name = "activate_left"
type = "bool"
default = false
[[cases]]
name = "last"
shapes = [[1, 4]]
dtype = "float32"
[[cases]]
name = "dim0_left_erf"
shapes = [[2, 2]]
dtype = "float32"
attrs = { dim = 0, approximate = 0, activate_left = true }
[[cases]]
name = "h"
shapes = [[1, 2]]
dtype = "float16"
"#;

    #[test]
    fn ge_glu_splits_along_dim_and_activates_the_right_half() {
        let s = spec(GLU);
        // x = [a0 a1 | b0 b1]; activate_left = false: gelu = GELU(b), y = a * gelu.
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 4], &[2.0, -3.0, 1.0, 0.0]);
        let out = run(&s, "last", vec![x]);
        assert_eq!(out[0].shape, vec![1, 2]);
        let g = out[1].to_f64s();
        close(g[0], 0.841_191_990_608_276_8, 1e-7);
        assert_eq!(g[1], 0.0);
        let y = out[0].to_f64s();
        close(y[0], 2.0 * 0.841_191_990_608_276_8, 2e-7);
        assert_eq!(y[1], 0.0);
        // dim 0 of [[1, -1], [3, 4]]: A = [1, -1], B = [3, 4]; erf form on A.
        let x = Tensor::from_f64s(Dtype::Float32, &[2, 2], &[1.0, -1.0, 3.0, 4.0]);
        let out = run(&s, "dim0_left_erf", vec![x]);
        assert_eq!(out[1].shape, vec![1, 2]);
        let g = out[1].to_f64s();
        close(g[0], 0.841_344_746_068_542_9, 1e-7);
        close(g[1], -0.158_655_253_931_457_05, 1e-8);
        let y = out[0].to_f64s();
        close(y[0], 3.0 * 0.841_344_746_068_542_9, 3e-7);
        close(y[1], 4.0 * -0.158_655_253_931_457_05, 1e-7);
        // fp16: y = 1 * GELU(1) = 0.841192 -> 1722.76/2048 -> 1723/2048, once rounded.
        let x = Tensor::from_f64s(Dtype::Float16, &[1, 2], &[1.0, 1.0]);
        let out = run(&s, "h", vec![x]);
        assert_eq!(out[0].to_f64s(), vec![1723.0 / 2048.0]);
        assert_eq!(out[1].to_f64s(), vec![1723.0 / 2048.0]);
    }

    #[test]
    fn ge_glu_rejects_odd_dims_and_bad_attrs() {
        let text = GLU.replace("shapes = [[1, 4]]", "shapes = [[1, 5]]");
        assert!(parse_err(&text).contains("dimension 1 of `x` [1, 5] must be even"));
        let text = GLU.replace("dim = 0, approximate = 0", "dim = 2, approximate = 0");
        assert!(parse_err(&text).contains("dim = 2 is out of range"));
        let text = GLU.replace("dim = 0, approximate = 0", "dim = 0, approximate = 2");
        assert!(parse_err(&text).contains("approximate = 2"));
    }

    const GLU_GRAD: &str = r#"
[op]
name = "ge_glu_grad_v2"
level = 2
op_type = "GeGluGradV2"
[[inputs]]
name = "dy"
dtypes = ["float16", "float32", "bfloat16"]
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "dy" }
[[inputs]]
name = "gelu"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "dy" }
[[outputs]]
name = "dx"
dtype = { same_as = "dy" }
[[attrs]]
name = "dim"
type = "int"
default = -1
[[attrs]]
name = "approximate"
type = "int"
default = 1
[[attrs]]
name = "activate_left"
type = "bool"
default = false
[[cases]]
name = "right_tanh"
shapes = [[1, 1], [1, 2], [1, 1]]
dtype = "float32"
[[cases]]
name = "left_erf"
shapes = [[1, 1], [2, 1], [1, 1]]
dtype = "float32"
attrs = { dim = 0, approximate = 0, activate_left = true }
"#;

    #[test]
    fn ge_glu_grad_scatters_both_halves() {
        let s = spec(GLU_GRAD);
        // x = [A=3 | B=0], dy = 2, gelu = 5: dA = dy*gelu = 10,
        // dB = dy*A*GELU'(0) = 2*3*0.5 = 3.
        let dy = Tensor::from_f64s(Dtype::Float32, &[1, 1], &[2.0]);
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 2], &[3.0, 0.0]);
        let g = Tensor::from_f64s(Dtype::Float32, &[1, 1], &[5.0]);
        let dx = run(&s, "right_tanh", vec![dy, x, g]).remove(0);
        assert_eq!(dx.to_f64s(), vec![10.0, 3.0]);
        // activate_left, erf, dim 0: x = [A=1; B=-2], dy = 0.5, gelu = 4:
        // dB = 0.5*4 = 2; dA = 0.5*(-2)*(Phi(1)+phi(1)) = -1.083315470587686.
        let dy = Tensor::from_f64s(Dtype::Float32, &[1, 1], &[0.5]);
        let x = Tensor::from_f64s(Dtype::Float32, &[2, 1], &[1.0, -2.0]);
        let g = Tensor::from_f64s(Dtype::Float32, &[1, 1], &[4.0]);
        let dx = run(&s, "left_erf", vec![dy, x, g]).remove(0).to_f64s();
        close(dx[0], -1.083_315_470_587_686, 1e-7);
        assert_eq!(dx[1], 2.0);
        let text = GLU_GRAD.replace(
            "shapes = [[1, 1], [1, 2], [1, 1]]",
            "shapes = [[1, 2], [1, 2], [1, 1]]",
        );
        assert!(parse_err(&text).contains("`dy` is [1, 2] but must be [1, 1]"));
    }

    const GELU_QUANT: &str = r#"
[op]
name = "gelu_quant"
level = 2
op_type = "GeluQuant"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
[[inputs]]
name = "input_scale"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "x" }
[[inputs]]
name = "input_offset"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "x" }
[[outputs]]
name = "y"
dtypes = ["int8"]
[[outputs]]
name = "out_scale"
dtypes = ["float32"]
[[attrs]]
name = "approximate"
type = "str"
default = "none"
[[attrs]]
name = "quant_mode"
type = "str"
default = "dynamic"
[[cases]]
name = "static"
shapes = [[1, 4], [4], [1]]
dtype = "float32"
attrs = { quant_mode = "static", approximate = "tanh" }
[[cases]]
name = "dynamic"
shapes = [[2, 3], [0], [0]]
dtype = "float32"
"#;

    #[test]
    fn gelu_quant_static_and_dynamic() {
        let s = spec(GELU_QUANT);
        // static: y = rint(GELU_tanh(x) * scale[c] + offset); offset one value.
        // GELU(0)=0 -> 0*2 + 0.5 = 0.5 -> 0 (ties to even); GELU(1) = 0.841192
        // * 3 = 2.52 + 0.5 = 3.02 -> 3; GELU(10) = 10 * 100 + 0.5 -> 127
        // (saturated); GELU(-3) = -0.003638 * 1 + 0.5 = 0.496 -> 0.
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 4], &[0.0, 1.0, 10.0, -3.0]);
        let sc = Tensor::from_f64s(Dtype::Float32, &[4], &[2.0, 3.0, 100.0, 1.0]);
        let off = Tensor::from_f64s(Dtype::Float32, &[1], &[0.5]);
        let out = run(&s, "static", vec![x, sc, off]);
        assert_eq!(out[0].to_i64s(), vec![0, 3, 127, 0]);
        assert_eq!(out[1].shape, vec![1]);
        assert_eq!(out[1].to_f64s(), vec![0.0]);
        // dynamic, no scale: row 0 = GELU_erf([2, -1, 0]) = [1.9545, -0.158655, 0];
        // out_scale = 1.9545/127; y = [127, rint(-0.158655/1.9545*127) =
        // rint(-10.309) = -10, 0]. Row 1 all zeros: out_scale 0, y 0.
        let x = Tensor::from_f64s(Dtype::Float32, &[2, 3], &[2.0, -1.0, 0.0, 0.0, -0.0, 0.0]);
        let empty = Tensor::zeros(Dtype::Float32, &[0]);
        let out = run(&s, "dynamic", vec![x, empty.clone(), empty]);
        assert_eq!(out[0].to_i64s(), vec![127, -10, 0, 0, 0, 0]);
        let g2 = 2.0 * 0.977_249_868_051_820_8;
        close(out[1].get_f64(0), g2 / 127.0, 1e-9);
        assert_eq!(out[1].get_f64(1), 0.0);
        // Static mode without a scale, and a scale of the wrong length.
        let text = GELU_QUANT.replace("shapes = [[1, 4], [4], [1]]", "shapes = [[1, 4], [0], [1]]");
        assert!(parse_err(&text).contains("static quantisation needs `input_scale`"));
        let text = GELU_QUANT.replace("shapes = [[1, 4], [4], [1]]", "shapes = [[1, 4], [3], [1]]");
        assert!(
            parse_err(&text).contains("`input_scale` is [3] but must be [4], [1] or [0] (absent)")
        );
        assert_eq!(quant_int8(2.5), 2.0);
        assert_eq!(quant_int8(f64::NAN), 0.0);
        assert_eq!(quant_int8(-3.5), -4.0);
        assert_eq!(quant_int8(-200.0), -128.0);
    }

    const ARNQ: &str = r#"
[op]
name = "add_rms_norm_quant"
level = 2
op_type = "AddRmsNormQuant"
[[inputs]]
name = "x1"
dtypes = ["float16", "bfloat16"]
[[inputs]]
name = "x2"
dtypes = ["float16", "bfloat16"]
dtype = { same_as = "x1" }
[[inputs]]
name = "gamma"
dtypes = ["float16", "bfloat16"]
dtype = { same_as = "x1" }
[[inputs]]
name = "scales1"
dtypes = ["float32"]
[[inputs]]
name = "scales2"
dtypes = ["float32"]
[[inputs]]
name = "zero_points1"
dtypes = ["int32"]
[[inputs]]
name = "zero_points2"
dtypes = ["int32"]
[[outputs]]
name = "y1"
dtypes = ["int8"]
[[outputs]]
name = "y2"
dtypes = ["int8"]
[[outputs]]
name = "x"
dtype = { same_as = "x1" }
[[attrs]]
name = "axis"
type = "int"
default = -1
[[attrs]]
name = "epsilon"
type = "float"
default = 1e-6
[[attrs]]
name = "div_mode"
type = "bool"
default = true
[[cases]]
name = "h"
shapes = [[1, 2], [1, 2], [2], [2], [0], [2], [0]]
dtypes = { x1 = "float16" }
attrs = { epsilon = 0.0 }
[[cases]]
name = "b"
shapes = [[1, 2], [1, 2], [2], [2], [0], [0], [0]]
dtypes = { x1 = "bfloat16" }
attrs = { epsilon = 0.0 }
"#;

    #[test]
    fn add_rms_norm_quant_rounds_like_the_kernel() {
        let s = spec(ARNQ);
        // float16: x = [1 + 2^-11, 3] rounds the first sum to 1 (ties to
        // even); mean(x^2) = 5, rstd = 1/sqrt 5; x*rstd = [0.4472136,
        // 1.3416408] -> f16 [916/2048, 1374/1024]; * gamma [1, 2] ->
        // [0.447265625, 2.68359375]; / scales [0.01, 0.1] + zp [3, -1] ->
        // [47.73 -> 48, 25.84 -> 26].
        let x1 = Tensor::from_f64s(Dtype::Float16, &[1, 2], &[1.0, 1.0]);
        let x2 = Tensor::from_f64s(Dtype::Float16, &[1, 2], &[2f64.powi(-11), 2.0]);
        let g = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, 2.0]);
        let sc = Tensor::from_f64s(Dtype::Float32, &[2], &[0.01, 0.1]);
        let zp = Tensor::from_i64s(Dtype::Int32, &[2], &[3, -1]);
        let e = Tensor::zeros(Dtype::Float32, &[0]);
        let ez = Tensor::zeros(Dtype::Int32, &[0]);
        let out = run(&s, "h", vec![x1, x2, g, sc, e.clone(), zp, ez.clone()]);
        assert_eq!(out[2].to_f64s(), vec![1.0, 3.0]);
        assert_eq!(out[0].to_i64s(), vec![48, 26]);
        assert_eq!(out[1].to_i64s(), vec![0, 0]);
        // bfloat16: x = [1 + 2^-9, 100]: the x output rounds to [1, 100], the
        // norm uses the float32 sum. Scales make y saturate: y = x * rstd
        // * gamma; rstd = 1/sqrt((1.001955^2 + 10000)/2) = 0.014142;
        // y = [0.014170, 1.414204] / [1e-4, 1e-3] = [141.7 -> 127, 1414 -> 127].
        let x1 = Tensor::from_f64s(Dtype::Bfloat16, &[1, 2], &[1.0, 100.0]);
        let x2 = Tensor::from_f64s(Dtype::Bfloat16, &[1, 2], &[2f64.powi(-9), 0.0]);
        let g = Tensor::from_f64s(Dtype::Bfloat16, &[2], &[1.0, 1.0]);
        let sc = Tensor::from_f64s(Dtype::Float32, &[2], &[1e-4, -1e-3]);
        let out = run(&s, "b", vec![x1, x2, g, sc, e.clone(), ez.clone(), ez]);
        assert_eq!(out[2].to_f64s(), vec![1.0, 100.0]);
        assert_eq!(out[0].to_i64s(), vec![127, -128]);
        let text = ARNQ.replace(
            "[[1, 2], [1, 2], [2], [2], [0], [2], [0]]",
            "[[1, 2], [1, 2], [2], [3], [0], [2], [0]]",
        );
        assert!(parse_err(&text).contains("`scales1` is [3] but must be [2]"));
    }

    const ARNDQ: &str = r#"
[op]
name = "add_rms_norm_dynamic_quant"
level = 2
op_type = "AddRmsNormDynamicQuant"
[[inputs]]
name = "x1"
dtypes = ["float16", "bfloat16"]
[[inputs]]
name = "x2"
dtypes = ["float16", "bfloat16"]
dtype = { same_as = "x1" }
[[inputs]]
name = "gamma"
dtypes = ["float16", "bfloat16"]
dtype = { same_as = "x1" }
[[inputs]]
name = "smooth_scale1"
dtypes = ["float16", "bfloat16"]
dtype = { same_as = "x1" }
[[inputs]]
name = "smooth_scale2"
dtypes = ["float16", "bfloat16"]
dtype = { same_as = "x1" }
[[outputs]]
name = "y1"
dtypes = ["int8"]
[[outputs]]
name = "y2"
dtypes = ["int8"]
[[outputs]]
name = "x"
dtype = { same_as = "x1" }
[[outputs]]
name = "scale1"
dtypes = ["float32"]
[[outputs]]
name = "scale2"
dtypes = ["float32"]
[[attrs]]
name = "epsilon"
type = "float"
default = 1e-6
[[cases]]
name = "two"
shapes = [[1, 2], [1, 2], [2], [2], [2]]
dtype = "float16"
attrs = { epsilon = 0.0 }
[[cases]]
name = "none"
shapes = [[1, 2], [1, 2], [2], [0], [0]]
dtype = "float16"
attrs = { epsilon = 0.0 }
"#;

    #[test]
    fn add_rms_norm_dynamic_quant_scales_each_row() {
        let s = spec(ARNDQ);
        // x = [3, -4]: rstd = 1/sqrt(12.5); y = x * rstd * [1, 0.5] =
        // [0.848528, -0.565685]. smooth1 = [1, 2]: s1 = [0.848528, -1.131371],
        // scale1 = 1.131371/127, y1 = [rint(95.25) = 95, -127]. smooth2 =
        // [0.5, 0.25]: s2 = [0.424264, -0.141421], y2 = [127, rint(-42.33) = -42].
        let x1 = Tensor::from_f64s(Dtype::Float16, &[1, 2], &[1.0, -1.0]);
        let x2 = Tensor::from_f64s(Dtype::Float16, &[1, 2], &[2.0, -3.0]);
        let g = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, 0.5]);
        let sm1 = Tensor::from_f64s(Dtype::Float16, &[2], &[1.0, 2.0]);
        let sm2 = Tensor::from_f64s(Dtype::Float16, &[2], &[0.5, 0.25]);
        let out = run(&s, "two", vec![x1.clone(), x2.clone(), g.clone(), sm1, sm2]);
        assert_eq!(out[0].to_i64s(), vec![95, -127]);
        assert_eq!(out[1].to_i64s(), vec![127, -42]);
        assert_eq!(out[2].to_f64s(), vec![3.0, -4.0]);
        assert_eq!(out[3].shape, vec![1]);
        close(out[3].get_f64(0), 1.131_370_849_898_476 / 127.0, 1e-9);
        close(out[4].get_f64(0), 0.424_264_068_711_928_5 / 127.0, 1e-9);
        // No smooth scales: s = y; y2 and scale2 are 0.
        let e = Tensor::zeros(Dtype::Float16, &[0]);
        let out = run(&s, "none", vec![x1, x2, g, e.clone(), e]);
        assert_eq!(out[0].to_i64s(), vec![127, -85]);
        assert_eq!(out[1].to_i64s(), vec![0, 0]);
        assert_eq!(out[4].to_f64s(), vec![0.0]);
        let text = ARNDQ.replace(
            "shapes = [[1, 2], [1, 2], [2], [0], [0]]",
            "shapes = [[1, 2], [1, 2], [2], [0], [2]]",
        );
        assert!(parse_err(&text).contains("`smooth_scale2` needs `smooth_scale1`"));
    }

    const GNS: &str = r#"
[op]
name = "group_norm_swish"
level = 2
op_type = "GroupNormSwish"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
[[inputs]]
name = "gamma"
dtypes = ["float16", "float32", "bfloat16"]
[[inputs]]
name = "beta"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "gamma" }
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[outputs]]
name = "mean"
dtype = { same_as = "gamma" }
[[outputs]]
name = "rstd"
dtype = { same_as = "gamma" }
[[attrs]]
name = "num_groups"
type = "int"
required = true
[[attrs]]
name = "data_format"
type = "str"
default = "NCHW"
[[attrs]]
name = "eps"
type = "float"
default = 1e-5
[[attrs]]
name = "activate_swish"
type = "bool"
default = true
[[attrs]]
name = "swish_scale"
type = "float"
default = 1.0
[[cases]]
name = "f"
shapes = [[1, 4, 2], [4], [4]]
dtype = "float32"
attrs = { num_groups = 2, eps = 0.0, activate_swish = false }
[[cases]]
name = "swish"
shapes = [[1, 2], [2], [2]]
dtype = "float32"
attrs = { num_groups = 1, eps = 0.0, swish_scale = 2.0 }
"#;

    #[test]
    fn group_norm_swish_normalises_each_group() {
        let s = spec(GNS);
        // Group 0 = channels 0, 1 = [1, 3, 5, 7]: mean 4, var 5, rstd =
        // 1/sqrt 5; z = (x - 4)/sqrt 5 * gamma_c + beta_c. Group 1 = [2, 2, 2,
        // 2]: var 0, eps 0 -> rstd inf, z = 0 * inf = NaN.
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[1, 4, 2],
            &[1.0, 3.0, 5.0, 7.0, 2.0, 2.0, 2.0, 2.0],
        );
        let g = Tensor::from_f64s(Dtype::Float32, &[4], &[1.0, 2.0, 1.0, 1.0]);
        let b = Tensor::from_f64s(Dtype::Float32, &[4], &[0.0, 1.0, 0.0, 0.0]);
        let out = run(&s, "f", vec![x, g, b]);
        assert_eq!(out[1].shape, vec![1, 2]);
        assert_eq!(out[1].to_f64s(), vec![4.0, 2.0]);
        close(out[2].get_f64(0), 1.0 / 5f64.sqrt(), 1e-7);
        assert_eq!(out[2].get_f64(1), f64::INFINITY);
        let y = out[0].to_f64s();
        let r = 1.0 / 5f64.sqrt();
        for (a, e) in y[..4]
            .iter()
            .zip([-3.0 * r, -r, 2.0 * r + 1.0, 6.0 * r + 1.0])
        {
            close(*a, e, 1e-6);
        }
        assert!(y[4].is_nan());
        // Swish with scale 2 on [-1, 1] (one group): z = [-1, 1] (rstd = 1);
        // y = z * sigmoid(2z) = [-0.1192029, 0.8807971].
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 2], &[-1.0, 1.0]);
        let g = Tensor::from_f64s(Dtype::Float32, &[2], &[1.0, 1.0]);
        let b = Tensor::from_f64s(Dtype::Float32, &[2], &[0.0, 0.0]);
        let y = run(&s, "swish", vec![x, g, b]).remove(0).to_f64s();
        close(y[0], -0.119_202_922_022_118, 1e-7);
        close(y[1], 0.880_797_077_977_882_3, 1e-7);
        let text = GNS.replace("num_groups = 2,", "num_groups = 3,");
        assert!(parse_err(&text).contains("num_groups = 3 must be positive and divide C = 4"));
    }

    const ALNG: &str = r#"
[op]
name = "add_layer_norm_grad"
level = 2
op_type = "AddLayerNormGrad"
[[inputs]]
name = "dy"
dtypes = ["float16", "float32", "bfloat16"]
[[inputs]]
name = "x1"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "dy" }
[[inputs]]
name = "x2"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "dy" }
[[inputs]]
name = "rstd"
dtypes = ["float32"]
[[inputs]]
name = "mean"
dtypes = ["float32"]
[[inputs]]
name = "gamma"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "dy" }
[[inputs]]
name = "dsum"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "dy" }
[[outputs]]
name = "dx"
dtype = { same_as = "dy" }
[[outputs]]
name = "dgamma"
dtypes = ["float32"]
[[outputs]]
name = "dbeta"
dtypes = ["float32"]
[[cases]]
name = "f"
shapes = [[2, 2], [2, 2], [2, 2], [2, 1], [2, 1], [2], [2, 2]]
dtypes = { dy = "float32" }
[[cases]]
name = "nodsum"
shapes = [[1, 2], [1, 2], [1, 2], [1, 1], [1, 1], [2], [0]]
dtypes = { dy = "float32" }
"#;

    #[test]
    fn add_layer_norm_grad_matches_hand_values() {
        let s = spec(ALNG);
        // Row 0: x = [1, 3], mean 2, rstd 1 -> xhat = [-1, 1]; dy = [1, 2],
        // gamma = [1, 1]: g = [1, 2], mean(g) = 1.5, mean(g xhat) = 0.5;
        // dx = 1 * ([1, 2] - 1.5 - [-1, 1] * 0.5) = [0, 0]; + dsum [1, -1].
        // Row 1: x = [0, 4], mean 1, rstd 0.5 -> xhat = [-0.5, 1.5]; dy =
        // [2, 0]: g = [2, 0], mean(g) = 1, mean(g xhat) = -0.5; dx = 0.5 *
        // ([2, 0] - 1 + [-0.25, 0.75]) = [0.375, -0.125]; + dsum [0, 0].
        // dgamma = [1*-1 + 2*-0.5, 2*1 + 0] = [-2, 2]; dbeta = [3, 2].
        let dy = Tensor::from_f64s(Dtype::Float32, &[2, 2], &[1.0, 2.0, 2.0, 0.0]);
        let x1 = Tensor::from_f64s(Dtype::Float32, &[2, 2], &[1.0, 1.0, 0.0, 2.0]);
        let x2 = Tensor::from_f64s(Dtype::Float32, &[2, 2], &[0.0, 2.0, 0.0, 2.0]);
        let rstd = Tensor::from_f64s(Dtype::Float32, &[2, 1], &[1.0, 0.5]);
        let mean = Tensor::from_f64s(Dtype::Float32, &[2, 1], &[2.0, 1.0]);
        let g = Tensor::from_f64s(Dtype::Float32, &[2], &[1.0, 1.0]);
        let dsum = Tensor::from_f64s(Dtype::Float32, &[2, 2], &[1.0, -1.0, 0.0, 0.0]);
        let out = run(&s, "f", vec![dy, x1, x2, rstd, mean, g, dsum]);
        assert_eq!(out[0].to_f64s(), vec![1.0, -1.0, 0.375, -0.125]);
        assert_eq!(out[1].to_f64s(), vec![-2.0, 2.0]);
        assert_eq!(out[2].to_f64s(), vec![3.0, 2.0]);
        // No dsum; gamma scales g: dy = [1, 1], gamma = [2, 0], xhat = [-1, 1]:
        // g = [2, 0], mean 1, mean(g xhat) = -1; dx = [2 - 1 - 1, 0 - 1 + 1] = [0, 0].
        let dy = Tensor::from_f64s(Dtype::Float32, &[1, 2], &[1.0, 1.0]);
        let x1 = Tensor::from_f64s(Dtype::Float32, &[1, 2], &[-1.0, 1.0]);
        let x2 = Tensor::zeros(Dtype::Float32, &[1, 2]);
        let one = Tensor::from_f64s(Dtype::Float32, &[1, 1], &[1.0]);
        let zero = Tensor::zeros(Dtype::Float32, &[1, 1]);
        let g = Tensor::from_f64s(Dtype::Float32, &[2], &[2.0, 0.0]);
        let e = Tensor::zeros(Dtype::Float32, &[0]);
        let out = run(&s, "nodsum", vec![dy, x1, x2, one, zero, g, e]);
        assert_eq!(out[0].to_f64s(), vec![0.0, 0.0]);
        assert_eq!(out[2].to_f64s(), vec![1.0, 1.0]);
        let text = ALNG.replace(
            "[[1, 2], [1, 2], [1, 2], [1, 1], [1, 1], [2], [0]]",
            "[[1, 2], [1, 2], [1, 2], [1, 1], [1, 1], [3], [0]]",
        );
        assert!(parse_err(&text).contains("`gamma` [3] must be the trailing dims of `dy` [1, 2]"));
    }
}
