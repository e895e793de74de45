//! Builtin goldens of the level1_misc operators (issue: operator suite):
//! angle_v2, arange, eye, icamax, icamin, isamin, reshape (Level 1) and
//! lin_space, tril, triu (Level 2).
//!
//! Semantics follow shared/ref/operators-l1-l3.md and operators-l2.md.
//!
//! Value-dependent output shapes. arange, lin_space and reshape take the
//! size of their output from the *values* of an input (start/end/step, num,
//! shape), but output shapes must be known before a launch, without data.
//! Their `infer` therefore reads the values an input can take from its
//! case distribution: `{ kind = "int", low = v, high = v }` fixes a value
//! (in any dtype), and a bounded `uniform` range is accepted when every
//! value it can produce (after rounding to the dtype) gives the same output
//! shape. Unbounded distributions (`mixed`, `normal`) and injected special
//! values are rejected for such inputs, with a message that says so. The
//! `compute` half recomputes the shape from the drawn values, and
//! [`ascendopt_op::golden::golden`] checks it against the inferred one.

use crate::common::{arity, int_attr};
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::{AttrValue, Case, CaseInput, Dist};
use ascendopt_op::tensor::{numel, shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "angle_v2",
        infer: angle_infer,
        compute: angle_compute,
    },
    Builtin {
        name: "arange",
        infer: arange_infer,
        compute: arange_compute,
    },
    Builtin {
        name: "eye",
        infer: eye_infer,
        compute: eye_compute,
    },
    Builtin {
        name: "icamax",
        infer: icamax_infer,
        compute: icamax_compute,
    },
    Builtin {
        name: "icamin",
        infer: icamax_infer,
        compute: icamin_compute,
    },
    Builtin {
        name: "isamin",
        infer: isamin_infer,
        compute: isamin_compute,
    },
    Builtin {
        name: "reshape",
        infer: reshape_infer,
        compute: reshape_compute,
    },
    Builtin {
        name: "lin_space",
        infer: lin_space_infer,
        compute: lin_space_compute,
    },
    Builtin {
        name: "tril",
        infer: tri_infer,
        compute: tril_compute,
    },
    Builtin {
        name: "triu",
        infer: tri_infer,
        compute: triu_compute,
    },
];

/// Largest output length the value-dependent goldens accept (the kernels
/// index elements with 32-bit counters).
const MAX_LEN: u64 = i32::MAX as u64;

// ---- helpers ----------------------------------------------------------------

fn need_dtypes(t: &CaseInput, op: &str, allowed: &[Dtype]) -> Result<(), Reject> {
    if allowed.contains(&t.dtype) {
        return Ok(());
    }
    let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
    Err(Reject::new(
        "dtype",
        format!(
            "{op}: `{}` is {}, expected one of {}",
            t.name,
            t.dtype,
            names.join(", ")
        ),
    ))
}

fn need_scalar(t: &CaseInput, op: &str) -> Result<(), Reject> {
    if numel(&t.shape) == 1 {
        return Ok(());
    }
    Err(Reject::new(
        "shapes",
        format!(
            "{op}: `{}` is {} but must hold exactly one element",
            t.name,
            shape_str(&t.shape)
        ),
    ))
}

/// The value `v` as stored in `dtype` (rounded for floats, wrapped for
/// integers), as f64.
fn stored_f64(v: f64, dtype: Dtype) -> f64 {
    let mut t = Tensor::zeros(dtype, &[1]);
    t.set_f64(0, v);
    t.get_f64(0)
}

/// The closed range of values an input can hold, as stored in its dtype.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Range {
    /// Integer dtypes: exact bounds.
    Int(i128, i128),
    /// Float dtypes: bounds after rounding to the dtype.
    Float(f64, f64),
}

/// The values `input` can take, from its distribution; `what` says why they
/// matter (for the error).
fn value_range(input: &CaseInput, what: &str) -> Result<Range, Reject> {
    let hint = format!(
        "`{}` {what}, so its values must be bounded: give it \
         `{{ kind = \"int\", low = v, high = v }}` (or a uniform range that cannot change the result)",
        input.name
    );
    if !input.specials.is_empty() {
        return Err(Reject::new(
            "inputs",
            format!("{hint}, and no special values"),
        ));
    }
    let (low, high) = match input.dist {
        Dist::Int { low, high } => {
            if let Some((lo, hi)) = input.dtype.int_range() {
                // The generator clamps integers to the dtype range.
                let clamp = |v: i64| i128::from(v).clamp(lo, hi);
                return Ok(Range::Int(clamp(low), clamp(high)));
            }
            (low as f64, high as f64)
        }
        Dist::Uniform { low, high } => (low, high),
        Dist::Mixed { .. } | Dist::Normal { .. } | Dist::File { .. } => {
            return Err(Reject::new("inputs", hint))
        }
    };
    if let Some((lo, hi)) = input.dtype.int_range() {
        let clamp = |v: f64| (v as i128).clamp(lo, hi);
        return Ok(Range::Int(clamp(low), clamp(high)));
    }
    if input.dtype.is_float() {
        return Ok(Range::Float(
            stored_f64(low, input.dtype),
            stored_f64(high, input.dtype),
        ));
    }
    Err(Reject::new(
        "dtype",
        format!(
            "`{}` is {}, which has no numeric range",
            input.name, input.dtype
        ),
    ))
}

/// The single integer value an input holds in every case run.
fn fixed_int(input: &CaseInput, what: &str) -> Result<i128, Reject> {
    match value_range(input, what)? {
        Range::Int(lo, hi) if lo == hi => Ok(lo),
        Range::Float(lo, hi) if lo == hi && lo.fract() == 0.0 => Ok(lo as i128),
        _ => Err(Reject::new(
            "inputs",
            format!(
                "`{}` {what}, so it needs one fixed value: `{{ kind = \"int\", low = v, high = v }}`",
                input.name
            ),
        )),
    }
}

fn first_index<F: Fn(f32, f32) -> bool>(vals: &[f32], better: F) -> i32 {
    // `better(candidate, best)`: strictly better, so ties keep the first.
    // NaN is the extreme, as in numpy's argmax/argmin: the first NaN wins.
    let mut best: Option<(usize, f32)> = None;
    for (i, &v) in vals.iter().enumerate() {
        best = match best {
            None => Some((i, v)),
            Some((_, b)) if b.is_nan() => best,
            Some(_) if v.is_nan() => Some((i, v)),
            Some((_, b)) if better(v, b) => Some((i, v)),
            keep => keep,
        };
    }
    best.map_or(0, |(i, _)| i as i32 + 1)
}

// ---- angle_v2: the argument of a real number ---------------------------------

fn angle_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let x = &case.inputs[0];
    need_dtypes(
        x,
        "angle_v2",
        &[Dtype::Float16, Dtype::Float32, Dtype::Complex64],
    )?;
    if x.dtype == Dtype::Complex64 && case.outputs[0].dtype != Dtype::Float32 {
        return Err(Reject::new(
            "dtype",
            "angle_v2 of complex64 gives float32 (use dtype = { real_of = \"x\" })",
        ));
    }
    Ok(vec![x.shape.clone()])
}

fn angle_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let x = &inputs[0];
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    if let Some(parts) = x.complex_parts() {
        // torch.angle of a complex tensor: atan2(im, re) in [-pi, pi], with
        // the signs of zero parts (atan2(-0, -1) = -pi), computed in f64
        // and rounded once to float32.
        for i in 0..x.numel() {
            let (re, im) = (parts.get_f64(2 * i), parts.get_f64(2 * i + 1));
            y.set_f64(i, im.atan2(re));
        }
        return Ok(vec![y]);
    }
    // torch.angle of a real tensor: pi for x < 0, 0 for x >= 0 (-0 too),
    // NaN stays NaN. pi is rounded once to the output dtype.
    for i in 0..x.numel() {
        let v = x.get_f64(i);
        let r = if v.is_nan() {
            f64::NAN
        } else if v < 0.0 {
            std::f64::consts::PI
        } else {
            0.0
        };
        y.set_f64(i, r);
    }
    Ok(vec![y])
}

// ---- arange: start, start + step, ... (end excluded) --------------------------

const ARANGE_DTYPES: &[Dtype] = &[
    Dtype::Float32,
    Dtype::Float16,
    Dtype::Bfloat16,
    Dtype::Int32,
    Dtype::Int64,
];

/// A rejection of the values of the case's inputs.
fn bad_input(message: impl Into<String>) -> Reject {
    Reject::new("inputs", message)
}

/// L = ceil((end - start) / step) on integers.
fn arange_len_int(start: i128, end: i128, step: i128) -> Result<u64, Reject> {
    if step == 0 {
        return Err(bad_input("step must not be 0"));
    }
    let span = end - start;
    if span != 0 && (span > 0) != (step > 0) {
        return Err(bad_input(format!(
            "the sign of end - start ({span}) differs from the sign of step ({step})"
        )));
    }
    let (q, r) = (span / step, span % step);
    let len = if r != 0 { q + 1 } else { q };
    u64::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_LEN)
        .ok_or_else(|| bad_input(format!("{len} elements is too many")))
}

/// L = ceil((end - start) / step) on float values (f64 arithmetic on the
/// stored values, as torch computes the size).
fn arange_len_float(start: f64, end: f64, step: f64) -> Result<u64, Reject> {
    if !(start.is_finite() && end.is_finite() && step.is_finite()) {
        return Err(bad_input(format!(
            "start {start}, end {end} and step {step} must be finite"
        )));
    }
    if step == 0.0 {
        return Err(bad_input("step must not be 0"));
    }
    let span = end - start;
    if span != 0.0 && (span > 0.0) != (step > 0.0) {
        return Err(bad_input(format!(
            "the sign of end - start ({span}) differs from the sign of step ({step})"
        )));
    }
    let len = (span / step).ceil();
    if len > MAX_LEN as f64 {
        return Err(bad_input(format!("{len} elements is too many")));
    }
    Ok(len as u64)
}

fn arange_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 1)?;
    let start = &case.inputs[0];
    need_dtypes(start, "arange", ARANGE_DTYPES)?;
    for t in &case.inputs {
        need_scalar(t, "arange")?;
        if t.dtype != start.dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "`{}` is {} but `{}` is {}",
                    t.name, t.dtype, start.name, start.dtype
                ),
            ));
        }
    }
    let what = "decides the output length";
    let ranges = [
        value_range(&case.inputs[0], what)?,
        value_range(&case.inputs[1], what)?,
        value_range(&case.inputs[2], what)?,
    ];
    // L is monotone in each of start, end and step as long as step keeps
    // its sign, so the corners of the ranges bound it.
    let mut lens = Vec::new();
    match ranges {
        [Range::Int(s0, s1), Range::Int(e0, e1), Range::Int(d0, d1)] => {
            if d0 <= 0 && d1 >= 0 {
                return Err(Reject::new(
                    "inputs",
                    format!("step ranges over [{d0}, {d1}], which holds 0"),
                ));
            }
            for s in [s0, s1] {
                for e in [e0, e1] {
                    for d in [d0, d1] {
                        lens.push(arange_len_int(s, e, d)?);
                    }
                }
            }
        }
        [Range::Float(s0, s1), Range::Float(e0, e1), Range::Float(d0, d1)] => {
            if d0 <= 0.0 && d1 >= 0.0 {
                return Err(Reject::new(
                    "inputs",
                    format!("step ranges over [{d0}, {d1}], which holds 0"),
                ));
            }
            for s in [s0, s1] {
                for e in [e0, e1] {
                    for d in [d0, d1] {
                        lens.push(arange_len_float(s, e, d)?);
                    }
                }
            }
        }
        _ => {
            return Err(Reject::new(
                "dtype",
                "start, end and step must share a dtype",
            ))
        }
    }
    let (min, max) = (
        lens.iter().copied().min().unwrap_or(0),
        lens.iter().copied().max().unwrap_or(0),
    );
    if min != max {
        return Err(Reject::new(
            "inputs",
            format!(
                "the output length varies between {min} and {max} over the value ranges of start, end and step; narrow them"
            ),
        ));
    }
    Ok(vec![vec![min as usize]])
}

fn arange_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (start, end, step) = (&inputs[0], &inputs[1], &inputs[2]);
    let out = case.outputs[0].dtype;
    if start.dtype.is_float() {
        let (s, e, d) = (start.get_f64(0), end.get_f64(0), step.get_f64(0));
        let len = arange_len_float(s, e, d)? as usize;
        // Computed in f32 and rounded once to the output dtype, like the
        // kernel: start + (float)i * step, two f32 roundings.
        let (s32, d32) = (s as f32, d as f32);
        let mut y = Tensor::zeros(out, &[len]);
        for i in 0..len {
            y.set_f64(i, f64::from(s32 + i as f32 * d32));
        }
        return Ok(vec![y]);
    }
    let (s, e, d) = (start.get_i128(0), end.get_i128(0), step.get_i128(0));
    let len = arange_len_int(s, e, d)? as usize;
    let mut y = Tensor::zeros(out, &[len]);
    for i in 0..len {
        y.set_i128(i, s + i as i128 * d);
    }
    Ok(vec![y])
}

// ---- eye: identity matrices, broadcast over batch_shape -----------------------

/// (batch_shape, rows, cols) from the attrs.
fn eye_dims(case: &Case) -> Result<(Vec<usize>, usize, usize), Reject> {
    let rows = int_attr(case, "num_rows")?;
    let cols = int_attr(case, "num_columns")?;
    if rows < 0 || cols < 0 {
        return Err(Reject::new(
            "attrs",
            format!("num_rows = {rows} and num_columns = {cols} must not be negative"),
        ));
    }
    let cols = if cols == 0 { rows } else { cols };
    let batch = match case.attr("batch_shape") {
        Some(AttrValue::ListInt(v)) => v.clone(),
        _ => {
            return Err(Reject::new(
                "attrs",
                "attr `batch_shape` must be a list of integers",
            ))
        }
    };
    let mut dims = Vec::with_capacity(batch.len());
    for b in batch {
        let d = usize::try_from(b).map_err(|_| {
            Reject::new(
                "attrs",
                format!("batch_shape holds {b}; dimensions must not be negative"),
            )
        })?;
        dims.push(d);
    }
    Ok((dims, rows as usize, cols as usize))
}

fn eye_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 0, 1)?;
    let y = &case.outputs[0];
    if !matches!(y.dtype, Dtype::Float32 | Dtype::Float16 | Dtype::Int32) {
        return Err(Reject::new(
            "attrs",
            format!("eye: y is {}, expected float32, float16 or int32", y.dtype),
        ));
    }
    let (mut shape, rows, cols) = eye_dims(case)?;
    shape.push(rows);
    shape.push(cols);
    Ok(vec![shape])
}

fn eye_compute(case: &Case, _inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (mut shape, rows, cols) = eye_dims(case)?;
    shape.push(rows);
    shape.push(cols);
    let mut y = Tensor::zeros(case.outputs[0].dtype, &shape);
    let slice = rows * cols;
    let batches = y.numel().checked_div(slice).unwrap_or(0);
    for b in 0..batches {
        for r in 0..rows.min(cols) {
            y.set_f64(b * slice + r * cols + r, 1.0);
        }
    }
    Ok(vec![y])
}

// ---- icamax / icamin / isamin: BLAS index of the extreme ----------------------

/// The number of elements searched: min(attr n, available); n <= 0 searches
/// none (BLAS returns 0 then). Only incx = 1 is supported.
fn blas_n(case: &Case, available: usize) -> Result<usize, Reject> {
    let incx = int_attr(case, "incx")?;
    if incx != 1 {
        return Err(Reject::new(
            "attrs",
            format!("incx = {incx}: only incx = 1 is supported"),
        ));
    }
    let n = int_attr(case, "n")?;
    Ok(usize::try_from(n).map_or(0, |n| n.min(available)))
}

fn icamax_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let x = &case.inputs[0];
    need_dtypes(x, &case.name, &[Dtype::Complex64, Dtype::Float32])?;
    let complex = x.dtype == Dtype::Complex64;
    let ok = if complex {
        x.shape.len() <= 3
    } else {
        x.shape.last() == Some(&2) && x.shape.len() <= 4
    };
    if !ok {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` is {} {}: x is complex64 of at most 3-D, or float32 with a last \
                 dimension of 2 (real, imaginary) and at most 3-D before it",
                x.name,
                x.dtype,
                shape_str(&x.shape)
            ),
        ));
    }
    if case.outputs[0].dtype != Dtype::Int32 {
        return Err(Reject::new("dtype", "the result must be int32"));
    }
    let available = if complex {
        numel(&x.shape)
    } else {
        numel(&x.shape) / 2
    };
    blas_n(case, available)?;
    Ok(vec![vec![1]])
}

/// |Re| + |Im| of the first n complex elements, in f32 (as BLAS ICAMAX); x
/// is complex64 or its float32 pairs.
fn complex_abs1(case: &Case, x: &Tensor) -> Result<Vec<f32>, Reject> {
    let parts = x.complex_parts();
    let x = parts.as_ref().unwrap_or(x);
    let n = blas_n(case, x.numel() / 2)?;
    Ok((0..n)
        .map(|i| (x.get_f64(2 * i) as f32).abs() + (x.get_f64(2 * i + 1) as f32).abs())
        .collect())
}

fn index_result(index: i32) -> Vec<Tensor> {
    vec![Tensor::from_i64s(Dtype::Int32, &[1], &[i64::from(index)])]
}

fn icamax_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let vals = complex_abs1(case, &inputs[0])?;
    Ok(index_result(first_index(&vals, |v, best| v > best)))
}

fn icamin_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let vals = complex_abs1(case, &inputs[0])?;
    Ok(index_result(first_index(&vals, |v, best| v < best)))
}

fn isamin_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let x = &case.inputs[0];
    need_dtypes(x, "isamin", &[Dtype::Float32])?;
    if x.shape.len() > 3 {
        return Err(Reject::new(
            "shapes",
            format!("`{}` is {}: at most 3-D", x.name, shape_str(&x.shape)),
        ));
    }
    if case.outputs[0].dtype != Dtype::Int32 {
        return Err(Reject::new("dtype", "the result must be int32"));
    }
    blas_n(case, numel(&x.shape))?;
    Ok(vec![vec![1]])
}

fn isamin_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let x = &inputs[0];
    let n = blas_n(case, x.numel())?;
    let vals: Vec<f32> = (0..n).map(|i| (x.get_f64(i) as f32).abs()).collect();
    Ok(index_result(first_index(&vals, |v, best| v < best)))
}

// ---- reshape: the same bytes in a new shape (Caffe-style attrs) ---------------

/// The output shape: x's dims [axis, axis + num_axes) are replaced by
/// `spec`, where 0 copies the dim of x at the same position and -1 takes
/// what is left (at most one).
fn reshape_dims(
    x: &[usize],
    spec: &[i128],
    axis: i64,
    num_axes: i64,
) -> Result<Vec<usize>, Reject> {
    let rank = x.len() as i64;
    let start = if axis >= 0 { axis } else { rank + axis + 1 };
    if !(0..=rank).contains(&start) {
        return Err(bad_input(format!(
            "axis = {axis} is out of range for a {rank}-D x"
        )));
    }
    let end = match num_axes {
        -1 => rank,
        n if n >= 0 && start + n <= rank => start + n,
        n => {
            return Err(bad_input(format!(
                "num_axes = {n} is out of range for axis {start} of a {rank}-D x"
            )))
        }
    };
    let (start, end) = (start as usize, end as usize);
    let mut mid = Vec::with_capacity(spec.len());
    let mut infer_at = None;
    for (i, &v) in spec.iter().enumerate() {
        match v {
            0 => match x.get(start + i) {
                Some(&d) if start + i < end => mid.push(d),
                _ => {
                    return Err(bad_input(format!(
                        "shape[{i}] = 0 copies no dimension of x"
                    )))
                }
            },
            -1 if infer_at.is_none() => {
                infer_at = Some(i);
                mid.push(1);
            }
            -1 => return Err(bad_input("shape holds more than one -1")),
            v if v > 0 => mid.push(
                usize::try_from(v)
                    .map_err(|_| bad_input(format!("shape[{i}] = {v} is too large")))?,
            ),
            v => return Err(bad_input(format!("shape[{i}] = {v} is not a dimension"))),
        }
    }
    let total = numel(x);
    let replaced = numel(&x[start..end]);
    let known = numel(&mid);
    if let Some(i) = infer_at {
        if known == 0 || !replaced.is_multiple_of(known) {
            return Err(bad_input(format!(
                "-1 cannot be inferred: {replaced} elements do not split into {known}-element parts"
            )));
        }
        mid[i] = replaced / known;
    } else if known != replaced {
        return Err(bad_input(format!(
            "shape gives {known} elements where x's dims {start}..{end} hold {replaced}"
        )));
    }
    let mut out = x[..start].to_vec();
    out.extend(mid);
    out.extend_from_slice(&x[end..]);
    if numel(&out) != total {
        return Err(bad_input("the element count changes"));
    }
    Ok(out)
}

fn reshape_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    let (x, shape) = (&case.inputs[0], &case.inputs[1]);
    need_dtypes(shape, "reshape", &[Dtype::Int32, Dtype::Int64])?;
    if shape.shape.len() != 1 {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` is {}; it must be 1-D",
                shape.name,
                shape_str(&shape.shape)
            ),
        ));
    }
    let v = fixed_int(shape, "decides the output shape")?;
    let spec = vec![v; shape.shape[0]];
    let dims = reshape_dims(
        &x.shape,
        &spec,
        int_attr(case, "axis")?,
        int_attr(case, "num_axes")?,
    )?;
    Ok(vec![dims])
}

fn reshape_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (x, shape) = (&inputs[0], &inputs[1]);
    let spec: Vec<i128> = (0..shape.numel()).map(|i| shape.get_i128(i)).collect();
    let int = |name: &str| int_attr(case, name);
    let dims = reshape_dims(&x.shape, &spec, int("axis")?, int("num_axes")?)?;
    Ok(vec![Tensor {
        dtype: case.outputs[0].dtype,
        shape: dims,
        data: x.data.clone(),
    }])
}

// ---- lin_space: num evenly spaced values, both ends included ------------------

fn lin_space_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 1)?;
    let (start, stop, num) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    let floats = [Dtype::Float32, Dtype::Float16, Dtype::Bfloat16];
    need_dtypes(start, "lin_space", &floats)?;
    need_dtypes(stop, "lin_space", &floats)?;
    need_dtypes(num, "lin_space", &[Dtype::Int64, Dtype::Int32])?;
    for t in &case.inputs {
        need_scalar(t, "lin_space")?;
    }
    let n = fixed_int(num, "decides the output length")?;
    if n < 0 || n as u64 > MAX_LEN {
        return Err(Reject::new(
            "inputs",
            format!("num = {n} must be in [0, {MAX_LEN}]"),
        ));
    }
    Ok(vec![vec![n as usize]])
}

fn lin_space_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (start, stop, num) = (&inputs[0], &inputs[1], &inputs[2]);
    let n = num.get_i128(0);
    let n = usize::try_from(n).map_err(|_| bad_input(format!("num = {n} is negative")))?;
    // f32 arithmetic, as torch computes float32 linspace and the kernel:
    // step = (stop - start) / (num - 1); the first half counts up from
    // start, the second half down from stop.
    let (s, e) = (start.get_f64(0) as f32, stop.get_f64(0) as f32);
    let mut y = Tensor::zeros(case.outputs[0].dtype, &[n]);
    if n == 1 {
        y.set_f64(0, f64::from(s));
        return Ok(vec![y]);
    }
    let step = (e - s) / (n as f32 - 1.0);
    let half = n / 2;
    for i in 0..n {
        let v = if i < half {
            s + i as f32 * step
        } else {
            e - (n - 1 - i) as f32 * step
        };
        y.set_f64(i, f64::from(v));
    }
    Ok(vec![y])
}

// ---- tril / triu: keep one triangle of the last two dims ----------------------

fn tri_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let x = &case.inputs[0];
    need_dtypes(
        x,
        &case.name,
        &[Dtype::Float16, Dtype::Float32, Dtype::Bfloat16],
    )?;
    if x.shape.len() < 2 {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` is {}; it needs at least 2 dimensions (the matrix)",
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    int_attr(case, "diagonal")?;
    Ok(vec![x.shape.clone()])
}

/// y = x where keep(col - row), else +0.
fn tri(case: &Case, x: &Tensor, keep: impl Fn(i64) -> bool) -> Vec<Tensor> {
    let cols = x.shape[x.shape.len() - 1];
    let rows = x.shape[x.shape.len() - 2];
    let mut y = Tensor::zeros(case.outputs[0].dtype, &x.shape);
    for i in 0..x.numel() {
        let c = (i % cols) as i64;
        let r = ((i / cols) % rows.max(1)) as i64;
        if keep(c - r) {
            y.set_bits(i, x.bits(i));
        }
    }
    vec![y]
}

fn tril_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let k = int_attr(case, "diagonal")?;
    Ok(tri(case, &inputs[0], |d| d <= k))
}

fn triu_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let k = int_attr(case, "diagonal")?;
    Ok(tri(case, &inputs[0], |d| d >= k))
}

#[cfg(test)]
mod tests {
    use crate::testutil::{parse_err, run, spec};

    use ascendopt_op::{Dtype, Tensor};

    fn scalar(dtype: Dtype, v: f64) -> Tensor {
        Tensor::from_f64s(dtype, &[1], &[v])
    }

    const ANGLE: &str = r#"
[op]
name = "angle_v2"
level = 1
op_type = "AngleV2"
[[inputs]]
name = "x"
dtypes = ["float16", "float32"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[cases]]
name = "h"
shapes = [[6]]
dtype = "float16"
[[cases]]
name = "f"
shapes = [[2]]
dtype = "float32"
"#;

    #[test]
    fn angle_is_pi_for_negatives_and_keeps_nan() {
        let s = spec(ANGLE);
        let x = Tensor::from_f64s(
            Dtype::Float16,
            &[6],
            &[-2.0, 3.0, -0.0, 0.0, f64::NAN, f64::NEG_INFINITY],
        );
        let y = run(&s, "h", vec![x])[0].to_f64s();
        // pi in f16: 3.140625 (0x4248).
        assert_eq!(y[0], 3.140625);
        assert_eq!(&y[1..4], &[0.0, 0.0, 0.0]);
        assert!(y[2].is_sign_positive());
        assert!(y[4].is_nan());
        assert_eq!(y[5], 3.140625);
        let x = Tensor::from_f64s(Dtype::Float32, &[2], &[-1e-30, f64::INFINITY]);
        let y = run(&s, "f", vec![x]);
        assert_eq!(y[0].bits(0), 0x4049_0FDB);
        assert_eq!(y[0].get_f64(1), 0.0);
    }

    const ARANGE: &str = r#"
[op]
name = "arange"
level = 1
op_type = "Arange"
[[inputs]]
name = "start"
dtypes = ["float32", "float16", "bfloat16", "int32", "int64"]
[[inputs]]
name = "end"
dtypes = ["float32", "float16", "bfloat16", "int32", "int64"]
dtype = { same_as = "start" }
[[inputs]]
name = "step"
dtypes = ["float32", "float16", "bfloat16", "int32", "int64"]
dtype = { same_as = "start" }
[[outputs]]
name = "out"
dtype = { same_as = "start" }
[[cases]]
name = "i32_neg"
shapes = [[1], [1], [1]]
dtype = "int32"
inputs = { start = { kind = "int", low = 1, high = 1 }, end = { kind = "int", low = -1113, high = -1113 }, step = { kind = "int", low = -5, high = -5 } }
[[cases]]
name = "f16_frac"
shapes = [[1], [1], [1]]
dtype = "float16"
inputs = { start = { kind = "uniform", low = -6.5, high = -6.49 }, end = { kind = "uniform", low = 143.6, high = 143.65 }, step = { kind = "int", low = 1, high = 1 } }
[[cases]]
name = "f32_half"
shapes = [[1], [1], [1]]
dtype = "float32"
inputs = { start = { kind = "uniform", low = 2.0, high = 2.2 }, end = { kind = "uniform", low = 9.3, high = 9.4 }, step = { kind = "uniform", low = 0.5, high = 0.50000001 } }
[[cases]]
name = "i64_carry"
shapes = [[1], [1], [1]]
dtype = "int64"
inputs = { start = { kind = "int", low = 4294967290, high = 4294967290 }, end = { kind = "int", low = 4294967310, high = 4294967310 }, step = { kind = "int", low = 7, high = 7 } }
"#;

    #[test]
    fn arange_length_and_values() {
        let s = spec(ARANGE);
        // [C] example: int32 (1, -1113, -5) gives 223 elements.
        let c = s.case("i32_neg").unwrap();
        assert_eq!(
            ascendopt_op::golden::output_shapes(&s, c).unwrap(),
            Some(vec![vec![223]])
        );
        let i = |v: i64| Tensor::from_i64s(Dtype::Int32, &[1], &[v]);
        let y = run(&s, "i32_neg", vec![i(1), i(-1113), i(-5)]).remove(0);
        let v = y.to_i64s();
        assert_eq!((v[0], v[1], v[222]), (1, -4, -1109));
        // fp16: 143.6 is stored as 143.625, so L = ceil(143.625 + 6.5) = 151.
        let h = |v: f64| scalar(Dtype::Float16, v);
        let y = run(&s, "f16_frac", vec![h(-6.5), h(143.6), h(1.0)]).remove(0);
        assert_eq!(y.shape, vec![151]);
        let v = y.to_f64s();
        assert_eq!((v[0], v[6], v[7], v[150]), (-6.5, -0.5, 0.5, 143.5));
        let f = |v: f64| scalar(Dtype::Float32, v);
        let y = run(&s, "f32_half", vec![f(2.1), f(9.35), f(0.5)]).remove(0);
        assert_eq!(y.shape, vec![15]);
        // f32(2.1) + 14 * 0.5 = 9.1 in f32 arithmetic.
        assert_eq!(y.get_f64(14), f64::from(2.1f32 + 7.0f32));
        // int64 across 2^32: exact.
        let l = |v: i64| Tensor::from_i64s(Dtype::Int64, &[1], &[v]);
        let y = run(&s, "i64_carry", vec![l(4294967290), l(4294967310), l(7)]).remove(0);
        assert_eq!(y.to_i64s(), vec![4294967290, 4294967297, 4294967304]);
    }

    #[test]
    fn arange_rejects_lengths_the_ranges_do_not_fix() {
        let text = ARANGE.replace("low = 143.6, high = 143.65", "low = 143.5, high = 143.65");
        assert!(parse_err(&text).contains(
            "cases[1].inputs: the output length varies between 150 and 151 over the value ranges"
        ));
        let text = ARANGE.replace(
            "step = { kind = \"int\", low = -5, high = -5 }",
            "step = { kind = \"int\", low = 5, high = 5 }",
        );
        assert!(parse_err(&text).contains("differs from the sign of step (5)"));
        let text = ARANGE.replace(
            "step = { kind = \"int\", low = -5, high = -5 }",
            "step = { scale = 3 }",
        );
        assert!(parse_err(&text).contains("`step` decides the output length"));
    }

    const EYE: &str = r#"
[op]
name = "eye"
level = 1
op_type = "Eye"
[[outputs]]
name = "y"
dtypes = ["float32", "float16", "int32"]
dtype = { from_attr = "dtype" }
[[attrs]]
name = "num_rows"
type = "int"
required = true
[[attrs]]
name = "num_columns"
type = "int"
default = 0
[[attrs]]
name = "batch_shape"
type = "list_int"
default = []
[[attrs]]
name = "dtype"
type = "int"
default = 0
[[cases]]
name = "wide"
shapes = []
attrs = { num_rows = 2, num_columns = 3, batch_shape = [2], dtype = 3 }
[[cases]]
name = "square"
shapes = []
attrs = { num_rows = 3, dtype = 1 }
"#;

    #[test]
    fn eye_values_and_shapes() {
        let s = spec(EYE);
        let y = run(&s, "wide", vec![]).remove(0);
        assert_eq!((y.dtype, y.shape.clone()), (Dtype::Int32, vec![2, 2, 3]));
        assert_eq!(y.to_i64s(), vec![1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0]);
        let y = run(&s, "square", vec![]).remove(0);
        assert_eq!((y.dtype, y.shape.clone()), (Dtype::Float16, vec![3, 3]));
        assert_eq!(
            y.to_f64s(),
            vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        );
        let text = EYE.replace("num_rows = 3, dtype = 1", "num_rows = -3, dtype = 1");
        assert!(parse_err(&text).contains("num_rows = -3 and num_columns = 0 must not be negative"));
    }

    const ICAMAX: &str = r#"
[op]
name = "icamax"
level = 1
op_type = "Icamax"
[[inputs]]
name = "x"
dtypes = ["float32"]
[[outputs]]
name = "result"
dtypes = ["int32"]
[[attrs]]
name = "n"
type = "int"
default = 0
[[attrs]]
name = "incx"
type = "int"
default = 1
[[cases]]
name = "all"
shapes = [[5, 2]]
attrs = { n = 5 }
[[cases]]
name = "first3"
shapes = [[5, 2]]
attrs = { n = 3 }
[[cases]]
name = "none"
shapes = [[5, 2]]
"#;

    #[test]
    fn icamax_and_icamin_use_abs_sum_first_index_one_based() {
        let s = spec(ICAMAX);
        // |re| + |im|: 3, 5 (modulus 3.6), 5 (modulus 5), 1, 4.
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[5, 2],
            &[3.0, 0.0, -2.0, 3.0, 0.0, -5.0, 0.5, -0.5, 4.0, 0.0],
        );
        let r = run(&s, "all", vec![x.clone()]);
        assert_eq!((r[0].shape.clone(), r[0].to_i64s()), (vec![1], vec![2]));
        assert_eq!(run(&s, "first3", vec![x.clone()])[0].to_i64s(), vec![2]);
        assert_eq!(run(&s, "none", vec![x.clone()])[0].to_i64s(), vec![0]);
        let min = spec(&ICAMAX.replace("\"icamax\"", "\"icamin\""));
        assert_eq!(run(&min, "all", vec![x.clone()])[0].to_i64s(), vec![4]);
        // Without element 3 (n = 3): the minimum 3 is element 1.
        assert_eq!(run(&min, "first3", vec![x])[0].to_i64s(), vec![1]);
        let text = ICAMAX.replace(
            "shapes = [[5, 2]]\nattrs = { n = 5 }",
            "shapes = [[5, 3]]\nattrs = { n = 5 }",
        );
        assert!(parse_err(&text).contains("last dimension of 2"));
        let text = ICAMAX.replace("attrs = { n = 3 }", "attrs = { n = 3, incx = 2 }");
        assert!(parse_err(&text).contains("only incx = 1 is supported"));
    }

    #[test]
    fn isamin_uses_abs_and_ties_keep_the_first() {
        let text = ICAMAX
            .replace("\"icamax\"", "\"isamin\"")
            .replace("[[5, 2]]", "[[6]]");
        let s = spec(&text);
        let x = Tensor::from_f64s(Dtype::Float32, &[6], &[-5.0, 2.0, -1.5, 1.5, -9.0, 1.0]);
        // n = 5: |x| = 5, 2, 1.5, 1.5, 9 -> the first 1.5 is element 3.
        assert_eq!(run(&s, "all", vec![x.clone()])[0].to_i64s(), vec![3]);
        assert_eq!(run(&s, "first3", vec![x])[0].to_i64s(), vec![3]);
        let x = Tensor::from_f64s(Dtype::Float32, &[6], &[4.0, f64::NAN, 0.0, 1.0, 1.0, 1.0]);
        // NaN is the extreme (numpy).
        assert_eq!(run(&s, "all", vec![x])[0].to_i64s(), vec![2]);
    }

    const RESHAPE: &str = r#"
[op]
name = "reshape"
level = 1
op_type = "Reshape"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "int8"]
[[inputs]]
name = "shape"
dtypes = ["int32", "int64"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[attrs]]
name = "axis"
type = "int"
default = 0
[[attrs]]
name = "num_axes"
type = "int"
default = -1
[[cases]]
name = "flatten"
shapes = [[2, 3, 4], [1]]
dtypes = { x = "float32", shape = "int64" }
inputs = { shape = { kind = "int", low = -1, high = -1 } }
[[cases]]
name = "mid"
shapes = [[2, 3, 4, 5], [1]]
dtypes = { x = "int8", shape = "int32" }
attrs = { axis = 1, num_axes = 2 }
inputs = { shape = { kind = "int", low = -1, high = -1 } }
[[cases]]
name = "keep"
shapes = [[2, 3, 4], [2]]
dtypes = { x = "float16", shape = "int32" }
attrs = { axis = -3 }
inputs = { shape = { kind = "int", low = 0, high = 0 } }
"#;

    #[test]
    fn reshape_shapes_follow_caffe_rules() {
        let s = spec(RESHAPE);
        let shape_of = |case: &str| {
            ascendopt_op::golden::output_shapes(&s, s.case(case).unwrap())
                .unwrap()
                .unwrap()
        };
        assert_eq!(shape_of("flatten"), vec![vec![24]]);
        assert_eq!(shape_of("mid"), vec![vec![2, 12, 5]]);
        // axis -3 of a 3-D x is dim 1: zeros copy dims 1 and 2.
        assert_eq!(shape_of("keep"), vec![vec![2, 3, 4]]);
        let values: Vec<f64> = (0..24).map(f64::from).collect();
        let x = Tensor::from_f64s(Dtype::Float32, &[2, 3, 4], &values);
        let shape = Tensor::from_i64s(Dtype::Int64, &[1], &[-1]);
        let y = run(&s, "flatten", vec![x.clone(), shape]);
        assert_eq!((y[0].shape.clone(), &y[0].data), (vec![24], &x.data));
        // axis -2 starts at dim 2, so the second 0 copies nothing.
        let text = RESHAPE.replace("axis = -3", "axis = -2");
        assert!(parse_err(&text).contains("shape[1] = 0 copies no dimension of x"));
        let text = RESHAPE.replace(
            "inputs = { shape = { kind = \"int\", low = -1, high = -1 } }\n[[cases]]\nname = \"mid\"",
            "inputs = { shape = { kind = \"int\", low = 5, high = 5 } }\n[[cases]]\nname = \"mid\"",
        );
        assert!(parse_err(&text).contains("shape gives 5 elements where x's dims 0..3 hold 24"));
        let text = RESHAPE.replace("low = 0, high = 0", "low = 0, high = 1");
        assert!(parse_err(&text)
            .contains("`shape` decides the output shape, so it needs one fixed value"));
    }

    const LIN_SPACE: &str = r#"
[op]
name = "lin_space"
level = 2
op_type = "LinSpace"
[[inputs]]
name = "start"
dtypes = ["float32", "float16", "bfloat16"]
[[inputs]]
name = "stop"
dtypes = ["float32", "float16", "bfloat16"]
dtype = { same_as = "start" }
[[inputs]]
name = "num"
dtypes = ["int64", "int32"]
[[outputs]]
name = "output"
dtype = { same_as = "start" }
[[cases]]
name = "eight"
shapes = [[1], [1], [1]]
dtypes = { start = "float32", num = "int64" }
inputs = { num = { kind = "int", low = 8, high = 8 } }
[[cases]]
name = "five"
shapes = [[1], [1], [1]]
dtypes = { start = "float16", num = "int32" }
inputs = { num = { kind = "int", low = 5, high = 5 } }
[[cases]]
name = "one"
shapes = [[1], [1], [1]]
dtypes = { start = "float32", num = "int64" }
inputs = { num = { kind = "int", low = 1, high = 1 } }
[[cases]]
name = "zero"
shapes = [[1], [1], [1]]
dtypes = { start = "float32", num = "int64" }
inputs = { num = { kind = "int", low = 0, high = 0 } }
"#;

    #[test]
    fn lin_space_is_symmetric_and_hits_both_ends() {
        let s = spec(LIN_SPACE);
        let f = |v: f64| scalar(Dtype::Float32, v);
        let n = |v: i64| Tensor::from_i64s(Dtype::Int64, &[1], &[v]);
        // [C] example: 0 -> 1 in 8 steps; step = 1/7 in f32.
        let y = run(&s, "eight", vec![f(0.0), f(1.0), n(8)]).remove(0);
        let v = y.to_f64s();
        let step = 1.0f32 / 7.0;
        assert_eq!(v[0], 0.0);
        assert_eq!(v[3], f64::from(3.0 * step));
        // The second half counts down from stop: 1 - 3/7, not 4/7.
        assert_eq!(v[4], f64::from(1.0f32 - 3.0 * step));
        assert_ne!(v[4], f64::from(4.0 * step));
        assert_eq!(v[7], 1.0);
        // fp16 output: (-1, 2, 5) -> step 0.75: -1, -0.25, 0.5, 1.25, 2.
        let h = |v: f64| scalar(Dtype::Float16, v);
        let i = |v: i64| Tensor::from_i64s(Dtype::Int32, &[1], &[v]);
        let y = run(&s, "five", vec![h(-1.0), h(2.0), i(5)]).remove(0);
        assert_eq!(y.to_f64s(), vec![-1.0, -0.25, 0.5, 1.25, 2.0]);
        // num = 1 gives [start] (no 0 * inf); num = 0 gives [].
        let y = run(&s, "one", vec![f(3.5), f(-2.0), n(1)]).remove(0);
        assert_eq!(y.to_f64s(), vec![3.5]);
        let y = run(&s, "zero", vec![f(3.5), f(-2.0), n(0)]).remove(0);
        assert_eq!(y.shape, vec![0]);
        let text = LIN_SPACE.replace("low = 8, high = 8", "low = -8, high = -8");
        assert!(parse_err(&text).contains("num = -8 must be in [0, 2147483647]"));
    }

    const TRIL: &str = r#"
[op]
name = "tril"
level = 2
op_type = "Tril"
[[inputs]]
name = "x"
dtypes = ["float16", "float32"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[attrs]]
name = "diagonal"
type = "int"
default = 0
[[cases]]
name = "k0"
shapes = [[2, 2, 3]]
dtype = "float32"
[[cases]]
name = "k1"
shapes = [[3, 2]]
dtype = "float16"
attrs = { diagonal = 1 }
[[cases]]
name = "km1"
shapes = [[2, 3]]
dtype = "float32"
attrs = { diagonal = -1 }
"#;

    #[test]
    fn tril_and_triu_keep_their_triangle_per_matrix() {
        let s = spec(TRIL);
        let values: Vec<f64> = (1..=12).map(f64::from).collect();
        let x = Tensor::from_f64s(Dtype::Float32, &[2, 2, 3], &values);
        let y = run(&s, "k0", vec![x.clone()]).remove(0);
        assert_eq!(
            y.to_f64s(),
            vec![1.0, 0.0, 0.0, 4.0, 5.0, 0.0, 7.0, 0.0, 0.0, 10.0, 11.0, 0.0]
        );
        let x16 = Tensor::from_f64s(
            Dtype::Float16,
            &[3, 2],
            &[1.0, 2.0, 3.0, f64::NAN, 5.0, 6.0],
        );
        let y = run(&s, "k1", vec![x16]).remove(0).to_f64s();
        assert_eq!(&y[..3], &[1.0, 2.0, 3.0]);
        assert!(y[3].is_nan());
        assert_eq!(&y[4..], &[5.0, 6.0]);
        let x23 = Tensor::from_f64s(Dtype::Float32, &[2, 3], &values[..6]);
        let y = run(&s, "km1", vec![x23.clone()]).remove(0);
        assert_eq!(y.to_f64s(), vec![0.0, 0.0, 0.0, 4.0, 0.0, 0.0]);

        let u = spec(&TRIL.replace("\"tril\"", "\"triu\""));
        let y = run(&u, "k0", vec![x]).remove(0);
        assert_eq!(
            y.to_f64s(),
            vec![1.0, 2.0, 3.0, 0.0, 5.0, 6.0, 7.0, 8.0, 9.0, 0.0, 11.0, 12.0]
        );
        let y = run(&u, "km1", vec![x23]).remove(0);
        assert_eq!(y.to_f64s(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        // A masked NaN becomes +0, a kept -0 stays -0.
        let x = Tensor::from_f64s(
            Dtype::Float16,
            &[3, 2],
            &[f64::NAN, -0.0, 3.0, 4.0, 5.0, 6.0],
        );
        let y = run(&u, "k1", vec![x]).remove(0);
        let bits: Vec<u64> = (0..6).map(|i| y.bits(i)).collect();
        assert_eq!(bits, vec![0, 0x8000, 0, 0, 0, 0]);
        let text = TRIL.replace("shapes = [[3, 2]]", "shapes = [[6]]");
        assert!(parse_err(&text).contains("it needs at least 2 dimensions"));
    }

    /// The ten packages of this file load, follow the package conventions
    /// and compute their small cases for several seeds (the value-dependent
    /// output shapes of arange, lin_space and reshape must not move).
    #[test]
    fn the_packages_load_and_their_small_cases_compute() {
        use ascendopt_op::compare::{compare, poisoned};
        use ascendopt_op::golden::output_shapes;
        use ascendopt_op::{builtin_ops_dir, gen_inputs, OpPackage};
        let packages = [
            ("angle_v2", "AngleV2"),
            ("arange", "Arange"),
            ("eye", "Eye"),
            ("icamax", "Icamax"),
            ("icamin", "Icamin"),
            ("isamin", "Isamin"),
            ("reshape", "Reshape"),
            ("lin_space", "LinSpace"),
            ("tril", "Tril"),
            ("triu", "Triu"),
        ];
        for (name, op_type) in packages {
            let p = OpPackage::load(&builtin_ops_dir().join(name), &crate::BUILTINS)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                (p.spec.kernel.as_str(), p.spec.op_type.as_str()),
                (name, op_type)
            );
            assert!(p.tiling.knobs().any(|k| k.name == "TILE_BYTES"), "{name}");
            assert!(p.cases().len() >= 3, "{name}");
            for c in p.cases() {
                let shapes = output_shapes(&p.spec, c).unwrap().unwrap();
                let elements: usize = shapes.iter().map(|s| ascendopt_op::tensor::numel(s)).sum();
                if c.input_elements().max(elements) > 70_000 {
                    continue;
                }
                for seed in [1, 2, 3] {
                    let inputs = gen_inputs(c, seed);
                    let out = p
                        .golden(c, &inputs)
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    for ((t, co), shape) in out.iter().zip(&c.outputs).zip(&shapes) {
                        assert_eq!(&t.shape, shape, "{name}/{}", c.name);
                        assert!(compare(t, t, co.tolerance).unwrap().passed());
                        // An integer golden may hold the poison value itself.
                        if t.dtype.is_float() {
                            let r = compare(t, &poisoned(t.dtype, &t.shape), co.tolerance).unwrap();
                            assert_eq!(r.unwritten, t.numel(), "{name}/{}", c.name);
                        }
                    }
                }
            }
        }
    }
}
