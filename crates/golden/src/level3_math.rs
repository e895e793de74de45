//! Builtin goldens of the Level-3 math and foreach operators (issue 27 item
//! 4): strideslice_neg_concat_v2, add_sigmoid_mul_reduce_sum_d,
//! foreach_non_finite_check_and_unscale, scatter_reduce.
//!
//! Semantics follow shared/ref/operators-l1-l3.md (Level 3), with the public
//! docs' known errors corrected there.

use crate::common::{arity, bool_attr, int_attr, str_attr};
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::Case;
use ascendopt_op::tensor::{shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "strideslice_neg_concat_v2",
        infer: snc_infer,
        compute: snc_compute,
    },
    Builtin {
        name: "add_sigmoid_mul_reduce_sum_d",
        infer: asmr_infer,
        compute: asmr_compute,
    },
    Builtin {
        name: "foreach_non_finite_check_and_unscale",
        infer: nfcu_infer,
        compute: nfcu_compute,
    },
    Builtin {
        name: "scatter_reduce",
        infer: scatter_infer,
        compute: scatter_compute,
    },
];

/// The float dtypes of the Level-3 vector operators.
const FLOATS: &[Dtype] = &[Dtype::Float16, Dtype::Float32, Dtype::Bfloat16];

/// Rejects an input whose dtype is not one of `allowed`.
fn dtype_in(case: &Case, k: usize, allowed: &[Dtype], op: &str) -> Result<Dtype, Reject> {
    let i = &case.inputs[k];
    if allowed.contains(&i.dtype) {
        return Ok(i.dtype);
    }
    let names: Vec<String> = allowed.iter().map(|d| d.to_string()).collect();
    Err(Reject::new(
        "dtype",
        format!(
            "{op} takes {} for `{}`; it is {}",
            names.join(", "),
            i.name,
            i.dtype
        ),
    ))
}

// ---- strideslice_neg_concat_v2: y = concat(x[..., :m], -x[..., m:]) ---------

fn snc_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    dtype_in(case, 0, FLOATS, "strideslice_neg_concat_v2")?;
    let x = &case.inputs[0];
    if x.shape.is_empty() || x.shape.iter().product::<usize>() == 0 {
        return Err(Reject::new(
            "shapes",
            format!(
                "`{}` {}: strideslice_neg_concat_v2 needs a non-empty tensor with a last dimension",
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    Ok(vec![x.shape.clone()])
}

/// Flips the sign bit of every element whose column (index along the last
/// dimension) is at least C / 2: exact for every value, NaN included.
fn snc_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let x = &inputs[0];
    let cols = *x
        .shape
        .last()
        .ok_or_else(|| Reject::new("shapes", "input has no last dimension"))?;
    let half = cols / 2;
    let size = x.dtype.size();
    let mut y = x.clone();
    y.dtype = case.outputs[0].dtype;
    for (i, element) in y.data.chunks_exact_mut(size).enumerate() {
        if i % cols >= half {
            // Little-endian: the sign bit is the top bit of the last byte.
            element[size - 1] ^= 0x80;
        }
    }
    Ok(vec![y])
}

// ---- add_sigmoid_mul_reduce_sum_d -------------------------------------------
// out[b, h] = sum_s sigmoid((a0[b, s, h] + a1[h]) * m0) * m1[b, s] * m2[b, s, h]

fn asmr_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 5, 1)?;
    for k in 0..5 {
        dtype_in(case, k, &[Dtype::Float16], "add_sigmoid_mul_reduce_sum_d")?;
    }
    let a0 = &case.inputs[0].shape;
    let [b, s, h] = a0[..] else {
        return Err(Reject::new(
            "shapes",
            format!("`add_0_input0` {} must be [B, S, H]", shape_str(a0)),
        ));
    };
    if b * s * h == 0 {
        return Err(Reject::new(
            "shapes",
            format!("`add_0_input0` {} is empty", shape_str(a0)),
        ));
    }
    let want: [(usize, Vec<usize>); 4] = [
        (1, vec![1, 1, h]),
        (2, vec![1]),
        (3, vec![b, s, 1]),
        (4, vec![b, s, h]),
    ];
    for (k, shape) in want {
        let i = &case.inputs[k];
        if i.shape != shape {
            return Err(Reject::new(
                "shapes",
                format!(
                    "`{}` is {} but must be {} for add_0_input0 {}",
                    i.name,
                    shape_str(&i.shape),
                    shape_str(&shape),
                    shape_str(a0)
                ),
            ));
        }
    }
    Ok(vec![vec![b, h]])
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

fn asmr_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (a0, a1, m0, m1, m2) = (&inputs[0], &inputs[1], &inputs[2], &inputs[3], &inputs[4]);
    let (b, s, h) = (a0.shape[0], a0.shape[1], a0.shape[2]);
    let a1v = a1.to_f64s();
    let scale = m0.get_f64(0);
    let mut out = vec![0f64; b * h];
    let mut row0 = vec![0f64; h];
    let mut row2 = vec![0f64; h];
    for bi in 0..b {
        let acc = &mut out[bi * h..(bi + 1) * h];
        for si in 0..s {
            let row = bi * s + si;
            a0.read_f64s(row * h, &mut row0);
            m2.read_f64s(row * h, &mut row2);
            let w = m1.get_f64(row);
            for (((o, &x), &y), &c) in acc.iter_mut().zip(&row0).zip(&row2).zip(&a1v) {
                *o += sigmoid((x + c) * scale) * w * y;
            }
        }
    }
    Ok(vec![Tensor::from_f64s(
        case.outputs[0].dtype,
        &[b, h],
        &out,
    )])
}

// ---- foreach_non_finite_check_and_unscale ----------------------------------
// In place: scaled_grads[i] *= inv_scale; found_inf = 1.0 when an element of
// the list is inf or NaN, else unchanged.

/// The positions in `case.inputs` of the tensors of list `scaled_grads`.
fn grads_of(case: &Case) -> Vec<usize> {
    (0..case.inputs.len())
        .filter(|&k| case.inputs[k].name == "scaled_grads")
        .collect()
}

fn nfcu_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let grads = grads_of(case);
    let n = grads.len();
    if n == 0 || grads != (0..n).collect::<Vec<_>>() {
        return Err(Reject::new(
            "shapes",
            "the tensor list `scaled_grads` must come first and hold at least one tensor",
        ));
    }
    if n > 256 {
        return Err(Reject::new(
            "shapes",
            format!("`scaled_grads` holds {n} tensors; at most 256 are allowed"),
        ));
    }
    arity(case, n + 2, n + 1)?;
    let dtype = dtype_in(case, 0, FLOATS, "foreach_non_finite_check_and_unscale")?;
    for (k, i) in case.inputs[..n].iter().enumerate() {
        if i.dtype != dtype || i.shape.iter().product::<usize>() == 0 || i.shape.len() > 8 {
            return Err(Reject::new(
                "shapes",
                format!(
                    "`scaled_grads[{k}]` is {} {}; the tensors share one dtype, are non-empty and have at most 8 dims",
                    i.dtype,
                    shape_str(&i.shape)
                ),
            ));
        }
    }
    for k in [n, n + 1] {
        let i = &case.inputs[k];
        if i.dtype != Dtype::Float32 || i.shape.iter().product::<usize>() != 1 {
            return Err(Reject::new(
                "shapes",
                format!(
                    "`{}` is {} {} but must be one float32 value",
                    i.name,
                    i.dtype,
                    shape_str(&i.shape)
                ),
            ));
        }
    }
    let mut shapes: Vec<Vec<usize>> = case.inputs[..n].iter().map(|i| i.shape.clone()).collect();
    shapes.push(case.inputs[n].shape.clone());
    Ok(shapes)
}

fn nfcu_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let n = grads_of(case).len();
    let scale = inputs[n + 1].get_f64(0) as f32;
    let mut found = false;
    let mut outputs = Vec::with_capacity(n + 1);
    for (x, out) in inputs[..n].iter().zip(&case.outputs) {
        let mut y = Tensor::zeros(out.dtype, &x.shape);
        crate::common::map_into(&[x], &mut y, |a| {
            found |= !a[0].is_finite();
            // The float32 product, rounded once more to a 16-bit output.
            f64::from(a[0] as f32 * scale)
        });
        outputs.push(y);
    }
    let mut found_inf = inputs[n].clone();
    found_inf.dtype = case.outputs[n].dtype;
    if found {
        found_inf.set_f64(0, 1.0);
    }
    outputs.push(found_inf);
    Ok(outputs)
}

// ---- scatter_reduce: torch.scatter_reduce(x, dim, index, src, reduce, include_self)

/// The reductions of scatter_reduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reduce {
    Sum,
    Prod,
    Mean,
    Amax,
    Amin,
}

impl Reduce {
    fn parse(name: &str) -> Option<Reduce> {
        Some(match name {
            "sum" => Reduce::Sum,
            "prod" => Reduce::Prod,
            "mean" => Reduce::Mean,
            "amax" => Reduce::Amax,
            "amin" => Reduce::Amin,
            _ => return None,
        })
    }

    /// `acc` combined with `v` (amax and amin propagate NaN, as torch does).
    fn step(self, acc: f64, v: f64) -> f64 {
        match self {
            Reduce::Sum | Reduce::Mean => acc + v,
            Reduce::Prod => acc * v,
            Reduce::Amax if acc.is_nan() || v.is_nan() => f64::NAN,
            Reduce::Amin if acc.is_nan() || v.is_nan() => f64::NAN,
            Reduce::Amax => acc.max(v),
            Reduce::Amin => acc.min(v),
        }
    }
}

/// The case's `dim` as an axis of a rank-`rank` tensor (negative counts from
/// the end).
fn scatter_axis(case: &Case, rank: usize) -> Result<usize, Reject> {
    let dim = int_attr(case, "dim")?;
    let r = rank as i64;
    if dim < -r || dim >= r {
        return Err(Reject::new(
            "attrs",
            format!("dim = {dim} is outside [-{r}, {r}) for a rank-{r} x"),
        ));
    }
    Ok(if dim < 0 {
        (dim + r) as usize
    } else {
        dim as usize
    })
}

fn scatter_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 1)?;
    let dtype = dtype_in(case, 0, &[Dtype::Float32, Dtype::Float16], "scatter_reduce")?;
    dtype_in(case, 1, &[Dtype::Int32], "scatter_reduce")?;
    let (x, index, src) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    if src.dtype != dtype {
        return Err(Reject::new(
            "dtype",
            format!("`src` is {} but `x` is {dtype}", src.dtype),
        ));
    }
    let reduce = str_attr(case, "reduce")?;
    if Reduce::parse(reduce).is_none() {
        return Err(Reject::new(
            "attrs",
            format!("reduce = \"{reduce}\" is not one of sum, prod, mean, amax, amin"),
        ));
    }
    bool_attr(case, "include_self")?;
    if x.shape.is_empty() || x.shape.iter().product::<usize>() == 0 {
        return Err(Reject::new(
            "shapes",
            format!("`x` {} must be a non-empty tensor", shape_str(&x.shape)),
        ));
    }
    let axis = scatter_axis(case, x.shape.len())?;
    let same_but_axis = index.shape.len() == x.shape.len()
        && index
            .shape
            .iter()
            .zip(&x.shape)
            .enumerate()
            .all(|(d, (i, x))| d == axis || i == x);
    if index.shape != src.shape || !same_but_axis || index.shape[axis] == 0 {
        return Err(Reject::new(
            "shapes",
            format!(
                "`index` {} and `src` {} must be equal and match `x` {} except along dim {axis} (where they are non-empty)",
                shape_str(&index.shape),
                shape_str(&src.shape),
                shape_str(&x.shape)
            ),
        ));
    }
    Ok(vec![x.shape.clone()])
}

fn scatter_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (x, index, src) = (&inputs[0], &inputs[1], &inputs[2]);
    let axis = scatter_axis(case, x.shape.len())?;
    let reduce = Reduce::parse(str_attr(case, "reduce")?)
        .ok_or_else(|| Reject::new("attrs", "reduce is not one of sum, prod, mean, amax, amin"))?;
    let include_self = bool_attr(case, "include_self")?;
    // x as [outer, dim_x, inner], index and src as [outer, dim_src, inner].
    let outer: usize = x.shape[..axis].iter().product();
    let inner: usize = x.shape[axis + 1..].iter().product();
    let (dim_x, dim_src) = (x.shape[axis], index.shape[axis]);
    let mut acc = x.to_f64s();
    let mut count = vec![u32::from(include_self); acc.len()];
    for b in 0..outer {
        for j in 0..dim_src {
            for s in 0..inner {
                let at = (b * dim_src + j) * inner + s;
                let t = index.get_i64(at);
                if t < 0 || t >= dim_x as i64 {
                    return Err(Reject::new(
                        "inputs",
                        format!("index value {t} at element {at} is outside [0, {dim_x})"),
                    )
                    .into());
                }
                let target = (b * dim_x + t as usize) * inner + s;
                let v = src.get_f64(at);
                acc[target] = if count[target] == 0 {
                    v
                } else {
                    reduce.step(acc[target], v)
                };
                count[target] += 1;
            }
        }
    }
    if reduce == Reduce::Mean {
        for (a, &c) in acc.iter_mut().zip(&count) {
            if c > 0 {
                *a /= f64::from(c);
            }
        }
    }
    Ok(vec![Tensor::from_f64s(
        case.outputs[0].dtype,
        &x.shape,
        &acc,
    )])
}

#[cfg(test)]
mod tests {
    use crate::testutil::{bits, run, spec};
    use ascendopt_op::{Dtype, Tensor};

    const SNC: &str = r#"
[op]
name = "strideslice_neg_concat_v2"
level = 3
op_type = "StridesliceNegConcatV2"
[[inputs]]
name = "input"
dtypes = ["float16", "float32", "bfloat16"]
[[outputs]]
name = "output"
dtype = { same_as = "input" }
[[cases]]
name = "odd"
shapes = [[2, 5]]
dtype = "float32"
[[cases]]
name = "c1"
shapes = [[3, 1]]
dtype = "bfloat16"
"#;

    #[test]
    fn strideslice_neg_concat_negates_the_second_half_of_each_row() {
        let s = spec(SNC);
        // Odd C = 5: m = 2, so columns 2, 3, 4 are negated (no half swap);
        // -0 becomes +0, NaN stays NaN with its sign flipped, inf flips.
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[2, 5],
            &[
                1.0,
                -2.0,
                3.0,
                -0.0,
                f64::INFINITY,
                6.0,
                7.0,
                8.5,
                f64::NAN,
                -10.0,
            ],
        );
        let y = &run(&s, "odd", vec![x])[0];
        let got: Vec<f64> = (0..10).map(|i| y.get_f64(i)).collect();
        assert_eq!(
            &got[..8],
            &[1.0, -2.0, -3.0, 0.0, f64::NEG_INFINITY, 6.0, 7.0, -8.5]
        );
        assert!(got[3].is_sign_positive());
        assert!(got[8].is_nan() && got[8].is_sign_negative());
        assert_eq!(got[9], 10.0);
        // C = 1: m = 0, every element is negated.
        let x = Tensor::from_f64s(Dtype::Bfloat16, &[3, 1], &[1.5, -2.0, 0.0]);
        let y = &run(&s, "c1", vec![x])[0];
        let want = Tensor::from_f64s(Dtype::Bfloat16, &[3, 1], &[-1.5, 2.0, -0.0]);
        assert_eq!(bits(y), bits(&want));
    }

    #[test]
    fn strideslice_neg_concat_rejects_integers_and_scalars() {
        let err = crate::testutil::parse_err(
            &SNC.replace(
                "dtypes = [\"float16\", \"float32\", \"bfloat16\"]",
                "dtypes = [\"float16\", \"int32\"]",
            )
            .replace("dtype = \"float32\"", "dtype = \"int32\"")
            .replace("dtype = \"bfloat16\"", "dtype = \"float16\""),
        );
        assert!(err.contains("int32"), "{err}");
        let err = crate::testutil::parse_err(&SNC.replace("shapes = [[2, 5]]", "shapes = [[]]"));
        assert!(err.contains("last dimension"), "{err}");
    }

    const ASMR: &str = r#"
[op]
name = "add_sigmoid_mul_reduce_sum_d"
level = 3
op_type = "AddSigmoidMulReduceSumD"
[[inputs]]
name = "add_0_input0"
dtypes = ["float16"]
[[inputs]]
name = "add_0_input1"
dtypes = ["float16"]
[[inputs]]
name = "mul_0_input1"
dtypes = ["float16"]
[[inputs]]
name = "mult_1_input1"
dtypes = ["float16"]
[[inputs]]
name = "mult_2_input1"
dtypes = ["float16"]
[[outputs]]
name = "out"
dtype = { fixed = "float16" }
[[cases]]
name = "t"
shapes = [[1, 2, 2], [1, 1, 2], [1], [1, 2, 1], [1, 2, 2]]
"#;

    #[test]
    fn add_sigmoid_mul_reduce_sum_sums_over_the_middle_dimension() {
        let s = spec(ASMR);
        let f = |shape: &[usize], v: &[f64]| Tensor::from_f64s(Dtype::Float16, shape, v);
        // a0 + a1 = [[0, ln 3], [-ln 3 (about), 0]] scaled by m0 = 1:
        // a0 = [[-1, 1.0986], [-2.0986, 0]], a1 = [1, 0].
        // Row 0: sigmoid(0) = 0.5, sigmoid(1.0986) = 0.75 (ln 3 to f16);
        // row 1: sigmoid(-1.0986) = 0.25, sigmoid(1) = 0.7311.
        let a0 = f(&[1, 2, 2], &[-1.0, 1.098_6, -2.098_6, 1.0]);
        let a1 = f(&[1, 1, 2], &[1.0, 0.0]);
        let m0 = f(&[1], &[1.0]);
        let m1 = f(&[1, 2, 1], &[2.0, -4.0]);
        let m2 = f(&[1, 2, 2], &[1.0, 4.0, 0.5, 1.0]);
        let out = &run(&s, "t", vec![a0.clone(), a1, m0, m1, m2])[0];
        assert_eq!(out.shape, vec![1, 2]);
        // h = 0: 0.5 * 2 * 1 + sigmoid(-1.0986) * -4 * 0.5 = 1 - 0.5 = 0.5;
        // h = 1: 0.75 * 2 * 4 + sigmoid(1) * -4 * 1 = 6 - 2.9242 = 3.0758.
        let x0 = a0.get_f64(2) + 1.0;
        let want0 = 1.0 - 2.0 / (1.0 + (-x0).exp());
        let want1 = 8.0 / (1.0 + (-a0.get_f64(1)).exp()) - 4.0 / (1.0 + (-1f64).exp());
        assert!((out.get_f64(0) - want0).abs() < 1e-3, "{}", out.get_f64(0));
        assert!((out.get_f64(0) - 0.5).abs() < 2e-3);
        assert!((out.get_f64(1) - want1).abs() < 4e-3, "{}", out.get_f64(1));
        assert!((out.get_f64(1) - 3.0758).abs() < 4e-3);
        // A wrong m1 shape is rejected naming the input.
        let err = crate::testutil::parse_err(
            &ASMR.replace("[1, 2, 1], [1, 2, 2]]", "[2, 1], [1, 2, 2]]"),
        );
        assert!(err.contains("mult_1_input1"), "{err}");
    }

    const NFCU: &str = r#"
[op]
name = "foreach_non_finite_check_and_unscale"
level = 3
op_type = "ForeachNonFiniteCheckAndUnscale"
[[inputs]]
name = "scaled_grads"
dtypes = ["float16", "float32", "bfloat16"]
kind = "list"
[[inputs]]
name = "found_inf"
dtypes = ["float32"]
[[inputs]]
name = "inv_scale"
dtypes = ["float32"]
[[outputs]]
name = "grads_out"
kind = "list"
inplace = "scaled_grads"
argument = false
dtype = { same_as = "scaled_grads" }
[[outputs]]
name = "found_inf_out"
inplace = "found_inf"
argument = false
dtype = { same_as = "found_inf" }
[[cases]]
name = "f16"
shapes = [[[3], [2]], [1], [1]]
dtype = "float16"
dtypes = { found_inf = "float32", inv_scale = "float32" }
"#;

    /// The outputs for grads `a` (3 values) and `b` (2 values), found_inf
    /// `found` and inv_scale `scale`.
    fn nfcu(a: &[f64], b: &[f64], found: f64, scale: f64) -> Vec<Tensor> {
        let s = spec(NFCU);
        let f = |v: &[f64]| Tensor::from_f64s(Dtype::Float16, &[v.len()], v);
        let g = |v: f64| Tensor::from_f64s(Dtype::Float32, &[1], &[v]);
        run(&s, "f16", vec![f(a), f(b), g(found), g(scale)])
    }

    #[test]
    fn non_finite_check_scales_every_element_and_keeps_found_inf_when_finite() {
        // All finite: scaled, found_inf unchanged (0.25 stays 0.25, not 0).
        let out = nfcu(&[1.0, -2.0, 0.5], &[65504.0, 0.0], 0.25, 0.5);
        assert_eq!(out.len(), 3);
        let vals: Vec<f64> = (0..3).map(|i| out[0].get_f64(i)).collect();
        assert_eq!(vals, [0.5, -1.0, 0.25]);
        assert_eq!((out[1].get_f64(0), out[1].get_f64(1)), (32752.0, 0.0));
        assert_eq!(out[2].get_f64(0), 0.25);
        // Scaling up overflows float16 after the check: no flag.
        let out = nfcu(&[65504.0, 1.0, 1.0], &[1.0, 1.0], 0.0, 4.0);
        assert_eq!(out[0].get_f64(0), f64::INFINITY);
        assert_eq!(out[2].get_f64(0), 0.0);
        // 2^-16 is a float16 subnormal, kept exactly.
        let out = nfcu(&[1.0, 1.0, 1.0], &[1.0, 1.0], 0.0, 1.0 / 65536.0);
        assert_eq!(out[0].get_f64(0), 1.0 / 65536.0);
    }

    #[test]
    fn non_finite_check_flags_nan_or_inf_at_element_zero_and_scales_them() {
        // NaN at element 0 of the first tensor.
        let out = nfcu(&[f64::NAN, 1.0, 2.0], &[3.0, 4.0], 0.0, 2.0);
        assert!(out[0].get_f64(0).is_nan());
        assert_eq!(out[0].get_f64(2), 4.0);
        assert_eq!(out[2].get_f64(0), 1.0);
        // -inf at element 0 of the second tensor; found_inf was 0.25.
        let out = nfcu(&[1.0, 1.0, 1.0], &[f64::NEG_INFINITY, 4.0], 0.25, 0.5);
        assert_eq!(out[1].get_f64(0), f64::NEG_INFINITY);
        assert_eq!(out[2].get_f64(0), 1.0);
        // inf * 0 is NaN (the scale is applied to non-finite values too).
        let out = nfcu(&[f64::INFINITY, 1.0, 1.0], &[1.0, 1.0], 0.0, 0.0);
        assert!(out[0].get_f64(0).is_nan());
        assert_eq!(out[0].get_f64(1), 0.0);
    }

    const SCATTER: &str = r#"
[op]
name = "scatter_reduce"
level = 3
op_type = "ScatterReduce"
[[inputs]]
name = "x"
dtypes = ["float32", "float16"]
[[inputs]]
name = "index"
dtypes = ["int32"]
[[inputs]]
name = "src"
dtypes = ["float32", "float16"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[attrs]]
name = "dim"
type = "int"
required = true
[[attrs]]
name = "reduce"
type = "str"
required = true
[[attrs]]
name = "include_self"
type = "bool"
default = true
[[cases]]
name = "t"
shapes = [[3, 2], [4, 2], [4, 2]]
dtype = "float32"
dtypes = { index = "int32" }
attrs = { dim = 0, reduce = "sum" }
"#;

    /// y for x = [[1, 2], [3, 4], [5, 6]], src = [[10, 20], [30, 40],
    /// [50, 60], [70, 80]] and index = [[0, 2], [0, 2], [2, 2], [0, 0]]
    /// along dim 0: column 0 sends 10, 30, 70 to row 0 and 50 to row 2;
    /// column 1 sends 20, 40, 60 to row 2 and 80 to row 0; row 1 is never
    /// a target.
    fn scatter(reduce: &str, include_self: bool) -> Vec<f64> {
        let text = SCATTER.replace(
            "reduce = \"sum\" }",
            &format!("reduce = \"{reduce}\", include_self = {include_self} }}"),
        );
        let s = spec(&text);
        let x = Tensor::from_f64s(Dtype::Float32, &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let index = Tensor::from_i64s(Dtype::Int32, &[4, 2], &[0, 2, 0, 2, 2, 2, 0, 0]);
        let src = Tensor::from_f64s(
            Dtype::Float32,
            &[4, 2],
            &[10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0],
        );
        let y = &run(&s, "t", vec![x, index, src])[0];
        (0..6).map(|i| y.get_f64(i)).collect()
    }

    #[test]
    fn scatter_reduce_every_reduction_with_and_without_self() {
        // Targets: (0,0) <- 10, 30, 70; (2,0) <- 50; (0,1) <- 80;
        // (2,1) <- 20, 40, 60; (1, *) untouched.
        assert_eq!(scatter("sum", true), [111.0, 82.0, 3.0, 4.0, 55.0, 126.0]);
        assert_eq!(scatter("sum", false), [110.0, 80.0, 3.0, 4.0, 50.0, 120.0]);
        assert_eq!(
            scatter("prod", true),
            [21000.0, 160.0, 3.0, 4.0, 250.0, 288_000.0]
        );
        assert_eq!(
            scatter("prod", false),
            [21000.0, 80.0, 3.0, 4.0, 50.0, 48_000.0]
        );
        // Mean with self divides by count + 1: (1 + 110) / 4, (2 + 80) / 2,
        // (5 + 50) / 2, (6 + 120) / 4.
        assert_eq!(scatter("mean", true), [27.75, 41.0, 3.0, 4.0, 27.5, 31.5]);
        assert_eq!(
            scatter("mean", false),
            [
                f64::from((110.0f64 / 3.0) as f32),
                80.0,
                3.0,
                4.0,
                50.0,
                40.0
            ]
        );
        assert_eq!(scatter("amax", true), [70.0, 80.0, 3.0, 4.0, 50.0, 60.0]);
        assert_eq!(scatter("amin", true), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        // Without self the untouched row keeps x and the targets hold the
        // scattered values only.
        assert_eq!(scatter("amin", false), [10.0, 80.0, 3.0, 4.0, 50.0, 20.0]);
        assert_eq!(scatter("amax", false), [70.0, 80.0, 3.0, 4.0, 50.0, 60.0]);
    }

    #[test]
    fn scatter_reduce_rejects_bad_indices_and_shapes() {
        let s = spec(SCATTER);
        let x = Tensor::from_f64s(Dtype::Float32, &[3, 2], &[0.0; 6]);
        let index = Tensor::from_i64s(Dtype::Int32, &[4, 2], &[0, 1, 2, 3, 0, 0, 0, 0]);
        let src = Tensor::from_f64s(Dtype::Float32, &[4, 2], &[1.0; 8]);
        let err = ascendopt_op::golden::golden(&s, s.case("t").unwrap(), &[x, index, src])
            .unwrap_err()
            .to_string();
        assert!(err.contains("index value 3 at element 3"), "{err}");
        let err = crate::testutil::parse_err(
            &SCATTER.replace("[[3, 2], [4, 2], [4, 2]]", "[[3, 2], [4, 3], [4, 3]]"),
        );
        assert!(err.contains("except along dim 0"), "{err}");
        let err =
            crate::testutil::parse_err(&SCATTER.replace("reduce = \"sum\"", "reduce = \"max\""));
        assert!(err.contains("not one of"), "{err}");
    }

    /// The four packages of this file load, follow the package conventions
    /// and compute their small cases for several seeds.
    #[test]
    fn the_packages_load_and_their_small_cases_compute() {
        use ascendopt_op::compare::{compare, poisoned};
        use ascendopt_op::golden::output_shapes;
        use ascendopt_op::{builtin_ops_dir, gen_inputs, OpPackage};
        let packages = [
            ("strideslice_neg_concat_v2", "StridesliceNegConcatV2"),
            ("add_sigmoid_mul_reduce_sum_d", "AddSigmoidMulReduceSumD"),
            (
                "foreach_non_finite_check_and_unscale",
                "ForeachNonFiniteCheckAndUnscale",
            ),
            ("scatter_reduce", "ScatterReduce"),
        ];
        for (name, op_type) in packages {
            let p = OpPackage::load(&builtin_ops_dir().join(name), &crate::BUILTINS)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                (
                    p.spec.kernel.as_str(),
                    p.spec.op_type.as_str(),
                    p.spec.level
                ),
                (name, op_type, 3)
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
                        let r = compare(t, &poisoned(t.dtype, &t.shape), co.tolerance).unwrap();
                        assert_eq!(r.unwritten, t.numel(), "{name}/{}", c.name);
                    }
                }
            }
        }
    }
}
