//! Builtin goldens of Level-3 image and geometry operators (issue 27):
//! motion_compensation, bev_pool, upsample_trilinear3d_backward.
//!
//! Semantics follow shared/ref/operators-l1-l3.md (Level 3), with its
//! corrections of the public docs. Each golden computes in f64 from the
//! exact inputs and rounds once to the output dtype, unless its section
//! says otherwise.

use crate::common::{arity, f32_scale, int_attr, list_int};
use ascendopt_op::float::round_f64;
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::{AttrValue, Case};
use ascendopt_op::tensor::{shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "motion_compensation",
        infer: motion_compensation_infer,
        compute: motion_compensation_compute,
    },
    Builtin {
        name: "bev_pool",
        infer: bev_pool_infer,
        compute: bev_pool_compute,
    },
    Builtin {
        name: "upsample_trilinear3d_backward",
        infer: trilinear_grad_infer,
        compute: trilinear_grad_compute,
    },
];

/// The float list attr `name` with exactly `len` values, each rounded to
/// float32 as the host code receives it.
fn f32_list(case: &Case, name: &str, len: usize) -> Result<Vec<f64>, Reject> {
    match case.attr(name) {
        Some(AttrValue::ListFloat(v)) if v.len() == len => {
            if v.iter().any(|x| !x.is_finite()) {
                return Err(Reject::new(
                    "attrs",
                    format!("attr `{name}` must hold finite values"),
                ));
            }
            Ok(v.iter().map(|&x| f64::from(x as f32)).collect())
        }
        _ => Err(Reject::new(
            "attrs",
            format!("attr `{name}` must be a list of {len} floats"),
        )),
    }
}

// ---- motion_compensation ---------------------------------------------------

/// Hamilton product a (x) b of quaternions (w, x, y, z).
fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// R(q) p with scale 2 / |q|^2 (0 when q = 0), so q need not be a unit.
fn rotate(q: [f64; 4], p: [f64; 3]) -> [f64; 3] {
    let n = q.iter().map(|c| c * c).sum::<f64>();
    let s = if n > 0.0 { 2.0 / n } else { 0.0 };
    let [w, x, y, z] = q;
    [
        (1.0 - s * (y * y + z * z)) * p[0]
            + s * (x * y - w * z) * p[1]
            + s * (x * z + w * y) * p[2],
        s * (x * y + w * z) * p[0]
            + (1.0 - s * (x * x + z * z)) * p[1]
            + s * (y * z - w * x) * p[2],
        s * (x * z - w * y) * p[0]
            + s * (y * z + w * x) * p[1]
            + (1.0 - s * (x * x + y * y)) * p[2],
    ]
}

/// The per-launch constants of motion_compensation.
struct Motion {
    /// Low 32 bits of timestamp_max.
    t_max_low: u32,
    /// 1 / (tmax - tmin), 0 when equal.
    f: f64,
    /// T = R(conj q_max) (t_min - t_max).
    t: [f64; 3],
    /// normalise(conj q_max (x) q_min).
    q_rel: [f64; 4],
    /// Some((theta, sign of d)) when the rotation is interpolated.
    slerp: Option<(f64, f64)>,
}

impl Motion {
    fn of(case: &Case) -> Result<Motion, Reject> {
        let t_min = int_attr(case, "timestamp_min")?;
        let t_max = int_attr(case, "timestamp_max")?;
        let tr_min = f32_list(case, "translation_min", 3)?;
        let tr_max = f32_list(case, "translation_max", 3)?;
        let q_min = f32_list(case, "quaterniond_min", 4)?;
        let q_max = f32_list(case, "quaterniond_max", 4)?;
        let f = if t_max != t_min {
            1.0 / (t_max as f64 - t_min as f64)
        } else {
            0.0
        };
        let conj = [q_max[0], -q_max[1], -q_max[2], -q_max[3]];
        let t = rotate(
            conj,
            [
                tr_min[0] - tr_max[0],
                tr_min[1] - tr_max[1],
                tr_min[2] - tr_max[2],
            ],
        );
        let mut q_rel = quat_mul(conj, [q_min[0], q_min[1], q_min[2], q_min[3]]);
        let norm = q_rel.iter().map(|c| c * c).sum::<f64>().sqrt();
        if norm > 0.0 {
            for c in &mut q_rel {
                *c /= norm;
            }
        }
        let d = q_rel[0];
        let slerp = if d.abs() < 1.0 - 1e-8 {
            let theta = d.abs().min(1.0).acos();
            if theta.sin() <= 0.0 {
                return Err(Reject::new(
                    "attrs",
                    "the quaternions give sin(theta) = 0 (the CANN host rejects them)",
                ));
            }
            Some((theta, if d >= 0.0 { 1.0 } else { -1.0 }))
        } else {
            None
        };
        Ok(Motion {
            t_max_low: t_max as u64 as u32,
            f,
            t,
            q_rel,
            slerp,
        })
    }

    /// tau of a timestamp: the int32 difference of the low 32 bits (the
    /// CANN kernel's quirk) times f.
    fn tau(&self, ts: u64) -> f64 {
        f64::from(self.t_max_low.wrapping_sub(ts as u32) as i32) * self.f
    }

    /// The moved point (x is not NaN).
    fn apply(&self, tau: f64, p: [f64; 3]) -> [f64; 3] {
        let moved = match self.slerp {
            Some((theta, sign)) => {
                let c0 = ((1.0 - tau) * theta).sin() / theta.sin();
                let c1 = sign * (tau * theta).sin() / theta.sin();
                let q = [
                    c0 + c1 * self.q_rel[0],
                    c1 * self.q_rel[1],
                    c1 * self.q_rel[2],
                    c1 * self.q_rel[3],
                ];
                rotate(q, p)
            }
            None => p,
        };
        [
            moved[0] + tau * self.t[0],
            moved[1] + tau * self.t[1],
            moved[2] + tau * self.t[2],
        ]
    }
}

fn motion_compensation_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 2, 1)?;
    let (p, ts) = (&case.inputs[0], &case.inputs[1]);
    if p.shape.len() != 2 || p.shape[0] < 3 || ts.shape != [p.shape[1]] {
        return Err(Reject::new(
            "shapes",
            format!(
                "`points` {} and `timestamp` {} must be [ndim >= 3, N] and [N]",
                shape_str(&p.shape),
                shape_str(&ts.shape)
            ),
        ));
    }
    if p.dtype != Dtype::Float32 || ts.dtype != Dtype::Uint64 {
        return Err(Reject::new(
            "dtype",
            "points must be float32 and timestamp uint64",
        ));
    }
    Motion::of(case)?;
    Ok(vec![p.shape.clone()])
}

fn motion_compensation_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let motion = Motion::of(case)?;
    let (points, ts) = (&inputs[0], &inputs[1]);
    let (ndim, n) = (points.shape[0], points.shape[1]);
    let p = points.to_f64s();
    let mut out = p.clone();
    for i in 0..n {
        let col = [p[i], p[n + i], p[2 * n + i]];
        if col[0].is_nan() {
            continue;
        }
        let moved = motion.apply(motion.tau(ts.bits(i)), col);
        for (r, v) in moved.into_iter().enumerate() {
            out[r * n + i] = v;
        }
    }
    Ok(vec![Tensor::from_f64s(Dtype::Float32, &[ndim, n], &out)])
}

// ---- bev_pool ---------------------------------------------------------------

/// The `bev_feat_shape` attr [B, Dz, Dy, Dx, C], each at least 1.
fn bev_shape(case: &Case) -> Result<[usize; 5], Reject> {
    match case.attr("bev_feat_shape") {
        Some(AttrValue::ListInt(v)) if v.len() == 5 && v.iter().all(|&d| d >= 1) => {
            Ok([v[0], v[1], v[2], v[3], v[4]].map(|d| d as usize))
        }
        _ => Err(Reject::new(
            "attrs",
            "attr `bev_feat_shape` must be [B, Dz, Dy, Dx, C], each at least 1",
        )),
    }
}

fn bev_pool_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 7, 1)?;
    let [b, dz, dy, dx, c] = bev_shape(case)?;
    let (depth, feat) = (&case.inputs[0], &case.inputs[1]);
    let ok = depth.shape.len() == 5
        && feat.shape.len() == 5
        && depth.shape[0] == b
        && feat.shape[..2] == depth.shape[..2]
        && feat.shape[2..4] == depth.shape[3..5]
        && feat.shape[4] == c;
    if !ok {
        return Err(Reject::new(
            "shapes",
            format!(
                "`depth` {} and `feat` {} must be [B, N, D, fH, fW] and [B, N, fH, fW, C] with B and C of bev_feat_shape",
                shape_str(&depth.shape),
                shape_str(&feat.shape)
            ),
        ));
    }
    let p = case.inputs[2].shape.clone();
    let k = case.inputs[5].shape.clone();
    for i in &case.inputs[2..5] {
        if i.shape.len() != 1 || i.shape != p {
            return Err(Reject::new(
                "shapes",
                format!(
                    "the three ranks must be [P] of one length; `{}` is {}",
                    i.name,
                    shape_str(&i.shape)
                ),
            ));
        }
    }
    if k.len() != 1 || case.inputs[6].shape != k {
        return Err(Reject::new(
            "shapes",
            "interval_starts and interval_lengths must be [K] of one length",
        ));
    }
    if depth.dtype != feat.dtype || !matches!(depth.dtype, Dtype::Float16 | Dtype::Float32) {
        return Err(Reject::new(
            "dtype",
            "depth and feat must both be float16 or both float32",
        ));
    }
    if case.inputs[2..].iter().any(|i| i.dtype != Dtype::Int32) {
        return Err(Reject::new("dtype", "ranks and intervals must be int32"));
    }
    Ok(vec![vec![b, c, dz, dy, dx]])
}

/// g[ranks_bev[j]] += depth.flat[ranks_depth[j]] * feat.flat[ranks_feat[j]]
/// for every interval in order and every j of it in order, each product
/// and each sum rounded to the dtype (the fp16 reference accumulates in
/// fp16); then out = g transposed to [B, C, Dz, Dy, Dx]. Interval entries
/// outside [0, P) and points whose ranks fall outside their tensors are
/// skipped (the kernel does the same; the reference data never has them).
fn bev_pool_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let [b, dz, dy, dx, c] = bev_shape(case)?;
    let dtype = case.outputs[0].dtype;
    let depth = inputs[0].to_f64s();
    let feat = inputs[1].to_f64s();
    let [rd, rf, rb, starts, lens] = [2, 3, 4, 5, 6].map(|i| inputs[i].to_i64s());
    let p = rd.len() as i64;
    let cells = dz * dy * dx;
    let mut g = vec![0f64; b * cells * c];
    let at = |v: &[f64], i: i64| usize::try_from(i).ok().and_then(|i| v.get(i).copied());
    for (&s, &l) in starts.iter().zip(&lens) {
        for j in s.max(0)..s.saturating_add(l).min(p) {
            let j = j as usize;
            let (Some(d), Some(f)) = (at(&depth, rd[j]), at(&feat, rf[j])) else {
                continue;
            };
            let Some(slot) = usize::try_from(rb[j]).ok().filter(|&r| r < g.len()) else {
                continue;
            };
            let prod = round_f64(d * f, dtype);
            g[slot] = round_f64(g[slot] + prod, dtype);
        }
    }
    let mut out = vec![0f64; g.len()];
    for (i, &v) in g.iter().enumerate() {
        let (bi, rest) = (i / (cells * c), i % (cells * c));
        let (cell, ci) = (rest / c, rest % c);
        out[(bi * c + ci) * cells + cell] = v;
    }
    Ok(vec![Tensor::from_f64s(dtype, &[b, c, dz, dy, dx], &out)])
}

// ---- upsample_trilinear3d_backward -------------------------------------------

/// One output index of linear interpolation on an axis, in f32 as torch
/// computes it: (i0, i1, lambda0, lambda1). An axis whose sizes are equal
/// is the identity.
fn linear_src(
    o: usize,
    ratio: f32,
    align_corners: bool,
    input: usize,
    output: usize,
) -> (usize, usize, f32, f32) {
    if input == output {
        return (o, o, 1.0, 0.0);
    }
    let src = if align_corners {
        ratio * o as f32
    } else {
        (ratio * (o as f32 + 0.5) - 0.5).max(0.0)
    };
    let i0 = (src.floor() as usize).min(input - 1);
    let i1 = if i0 < input - 1 { i0 + 1 } else { i0 };
    let l1 = src - i0 as f32;
    (i0, i1, 1.0 - l1, l1)
}

/// torch `area_pixel_compute_scale`: the source step of an axis.
fn linear_ratio(input: usize, output: usize, align_corners: bool, scale: f32) -> f32 {
    if align_corners {
        if output > 1 {
            (input - 1) as f32 / (output - 1) as f32
        } else {
            0.0
        }
    } else if scale > 0.0 {
        1.0 / scale
    } else {
        input as f32 / output as f32
    }
}

fn trilinear_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let g = &case.inputs[0];
    if !matches!(g.dtype, Dtype::Float16 | Dtype::Float32 | Dtype::Bfloat16) {
        return Err(Reject::new(
            "dtype",
            "grad_output must be float16, float32 or bfloat16",
        ));
    }
    let out = list_int(case, "output_size", 3)?;
    let inp = list_int(case, "input_size", 5)?;
    if g.shape.len() != 5 || g.shape[2..] != out[..] || inp[..2] != g.shape[..2] {
        return Err(Reject::new(
            "shapes",
            format!(
                "grad_output {} must be [N, C] + output_size {out:?}, with N, C of input_size {inp:?}",
                shape_str(&g.shape)
            ),
        ));
    }
    crate::common::bool_attr(case, "align_corners")?;
    for name in ["scales_d", "scales_h", "scales_w"] {
        f32_scale(case, name)?;
    }
    Ok(vec![inp])
}

/// grad_input = the sum over output voxels of grad * lambda_d lambda_h
/// lambda_w into their 8 source voxels, in f64 from the f32 weights,
/// rounded once.
fn trilinear_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let shape = trilinear_grad_infer(case)?.remove(0);
    let ac = crate::common::bool_attr(case, "align_corners")?;
    let g = &inputs[0];
    let gv = g.to_f64s();
    let (ins, outs) = (
        [shape[2], shape[3], shape[4]],
        [g.shape[2], g.shape[3], g.shape[4]],
    );
    let mut maps = Vec::new();
    for (a, name) in ["scales_d", "scales_h", "scales_w"].into_iter().enumerate() {
        let r = linear_ratio(ins[a], outs[a], ac, f32_scale(case, name)?);
        maps.push(
            (0..outs[a])
                .map(|o| linear_src(o, r, ac, ins[a], outs[a]))
                .collect::<Vec<_>>(),
        );
    }
    let planes = shape[0] * shape[1];
    let (in_vol, out_vol) = (
        ins.iter().product::<usize>(),
        outs.iter().product::<usize>(),
    );
    let mut sums = vec![0f64; planes * in_vol];
    for p in 0..planes {
        let mut o = p * out_vol;
        for &(d0, d1, ld0, ld1) in &maps[0] {
            for &(h0, h1, lh0, lh1) in &maps[1] {
                for &(w0, w1, lw0, lw1) in &maps[2] {
                    let v = gv[o];
                    o += 1;
                    for (d, ld) in [(d0, ld0), (d1, ld1)] {
                        for (h, lh) in [(h0, lh0), (h1, lh1)] {
                            for (w, lw) in [(w0, lw0), (w1, lw1)] {
                                let at = p * in_vol + (d * ins[1] + h) * ins[2] + w;
                                sums[at] += f64::from(ld) * f64::from(lh) * f64::from(lw) * v;
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(vec![Tensor::from_f64s(
        case.outputs[0].dtype,
        &shape,
        &sums,
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{run, spec};

    const MOTION_SPEC: &str = r#"
[op]
name = "motion_compensation"
level = 3
op_type = "MotionCompensation"
[[inputs]]
name = "points"
dtypes = ["float32"]
[[inputs]]
name = "timestamp"
dtypes = ["uint64"]
[[outputs]]
name = "out"
dtype = { fixed = "float32" }
[[attrs]]
name = "timestamp_min"
type = "int"
required = true
[[attrs]]
name = "timestamp_max"
type = "int"
required = true
[[attrs]]
name = "translation_min"
type = "list_float"
required = true
[[attrs]]
name = "translation_max"
type = "list_float"
required = true
[[attrs]]
name = "quaterniond_min"
type = "list_float"
required = true
[[attrs]]
name = "quaterniond_max"
type = "list_float"
required = true
[[cases]]
name = "quarter_turn"
shapes = [[4, 3], [3]]
attrs = { timestamp_min = 100, timestamp_max = 200, translation_min = [1, 2, 3], translation_max = [0, 0, 0], quaterniond_min = [0.70710678, 0, 0, 0.70710678], quaterniond_max = [1, 0, 0, 0] }
[[cases]]
name = "equal_times"
shapes = [[3, 2], [2]]
attrs = { timestamp_min = 7, timestamp_max = 7, translation_min = [1, 2, 3], translation_max = [4, 5, 6], quaterniond_min = [0.70710678, 0, 0, 0.70710678], quaterniond_max = [1, 0, 0, 0] }
[[cases]]
name = "no_rotation"
shapes = [[3, 1], [1]]
attrs = { timestamp_min = 0, timestamp_max = 4, translation_min = [4, 0, -8], translation_max = [0, 0, 0], quaterniond_min = [0, 1, 0, 0], quaterniond_max = [0, 1, 0, 0] }
"#;

    fn points(shape: &[usize], values: &[f64]) -> Tensor {
        Tensor::from_f64s(Dtype::Float32, shape, values)
    }

    fn stamps(values: &[i64]) -> Tensor {
        Tensor::from_i64s(Dtype::Uint64, &[values.len()], values)
    }

    #[test]
    fn motion_compensation_interpolates_a_quarter_turn() {
        let s = spec(MOTION_SPEC);
        // q_min is a 90-degree turn about z, q_max the identity: q_rel =
        // q_min, d = cos 45 deg, theta = pi/4. T = t_min - t_max = (1, 2, 3).
        // Column 0: ts = tmax, tau = 0: unchanged. Column 1: ts = tmin,
        // tau = 1: q = q_rel, (1, 0, 0) -> (0, 1, 0), + T = (1, 3, 3).
        // Column 2: x is NaN: the whole column is copied.
        let p = points(
            &[4, 3],
            &[
                1.0,
                1.0,
                f64::NAN, // x
                0.0,
                0.0,
                5.0, // y
                0.0,
                0.0,
                6.0, // z
                9.0,
                8.0,
                7.0, // extra row
            ],
        );
        let out = run(&s, "quarter_turn", vec![p, stamps(&[200, 100, 150])]);
        let v: Vec<f64> = (0..12).map(|i| out[0].get_f64(i)).collect();
        let want = [1.0, 1.0, 0.0, 0.0, 3.0, 5.0, 0.0, 3.0, 6.0, 9.0, 8.0, 7.0];
        for (i, (&got, &w)) in v.iter().zip(&want).enumerate() {
            if i == 2 {
                assert!(got.is_nan(), "the NaN x is copied");
            } else {
                assert!((got - w).abs() < 1e-6, "element {i}: {got} != {w}");
            }
        }
    }

    #[test]
    fn motion_compensation_tau_halfway_turns_by_half_the_angle() {
        let s = spec(MOTION_SPEC);
        // ts = 150: tau = 1/2, a 45-degree turn about z: (1, 0, 0) ->
        // (cos 45, sin 45, 0), + T / 2 = (0.5, 1, 1.5).
        let p = points(
            &[4, 3],
            &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        );
        let out = run(&s, "quarter_turn", vec![p, stamps(&[150, 150, 150])]);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((out[0].get_f64(0) - (h + 0.5)).abs() < 1e-6);
        assert!((out[0].get_f64(3) - (h + 1.0)).abs() < 1e-6);
        assert!((out[0].get_f64(6) - 1.5).abs() < 1e-6);
    }

    #[test]
    fn motion_compensation_equal_timestamps_give_f_zero() {
        let s = spec(MOTION_SPEC);
        // f = 0: tau = 0 for every point, q = identity, no translation.
        let p = points(&[3, 2], &[1.5, -2.0, 3.0, 4.0, -5.0, 6.0]);
        let out = run(&s, "equal_times", vec![p.clone(), stamps(&[0, 1_000_000])]);
        for i in 0..6 {
            assert!((out[0].get_f64(i) - p.get_f64(i)).abs() < 1e-6);
        }
    }

    #[test]
    fn motion_compensation_without_rotation_only_translates() {
        let s = spec(MOTION_SPEC);
        // q_min = q_max: d = 1, no rotation. tau = (4 - 1) / 4 = 0.75; T =
        // R(conj q_max) (4, 0, -8) with q_max a half turn about x: (4, 0, 8).
        let p = points(&[3, 1], &[1.0, 1.0, 1.0]);
        let out = run(&s, "no_rotation", vec![p, stamps(&[1])]);
        let got: Vec<f64> = (0..3).map(|i| out[0].get_f64(i)).collect();
        assert_eq!(got, vec![4.0, 1.0, 7.0]);
    }

    #[test]
    fn motion_compensation_tau_uses_the_low_32_bits() {
        let m = Motion {
            t_max_low: 5,
            f: 0.5,
            t: [0.0; 3],
            q_rel: [1.0, 0.0, 0.0, 0.0],
            slerp: None,
        };
        // 2^32 + 3: low word 3, tau = (5 - 3) / 2 = 1; a low word above
        // tmax's gives a negative int32 difference.
        assert_eq!(m.tau((1u64 << 32) + 3), 1.0);
        assert_eq!(m.tau(9), -2.0);
        assert_eq!(m.tau(0xffff_ffff), 3.0);
    }

    const BEV_SPEC: &str = r#"
[op]
name = "bev_pool"
level = 3
op_type = "BevPool"
[[inputs]]
name = "depth"
dtypes = ["float16", "float32"]
[[inputs]]
name = "feat"
dtypes = ["float16", "float32"]
dtype = { same_as = "depth" }
[[inputs]]
name = "ranks_depth"
dtypes = ["int32"]
[[inputs]]
name = "ranks_feat"
dtypes = ["int32"]
[[inputs]]
name = "ranks_bev"
dtypes = ["int32"]
[[inputs]]
name = "interval_starts"
dtypes = ["int32"]
[[inputs]]
name = "interval_lengths"
dtypes = ["int32"]
[[outputs]]
name = "out"
dtype = { same_as = "depth" }
[[attrs]]
name = "bev_feat_shape"
type = "list_int"
required = true
[[cases]]
name = "f32"
shapes = [[1, 1, 2, 1, 1], [1, 1, 1, 1, 2], [3], [3], [3], [2], [2]]
dtypes = { depth = "float32" }
attrs = { bev_feat_shape = [1, 1, 1, 2, 2] }
[[cases]]
name = "f16"
shapes = [[1, 1, 2, 1, 1], [1, 1, 1, 1, 2], [3], [3], [3], [1], [1]]
dtypes = { depth = "float16" }
attrs = { bev_feat_shape = [1, 1, 1, 2, 2] }
"#;

    fn ints(values: &[i64]) -> Tensor {
        Tensor::from_i64s(Dtype::Int32, &[values.len()], values)
    }

    #[test]
    fn bev_pool_sums_overlapping_intervals_and_transposes() {
        let s = spec(BEV_SPEC);
        // depth = [2, 0.5], feat = [4, 3] (C = 2). Entry 0: 2 * 3 into g[1]
        // (cell 0, c 1); entry 1: 0.5 * 4 into g[2] (cell 1, c 0); entry 2:
        // 2 * 4 into g[1]. Intervals [0, 2) and [1, 3) overlap at entry 1,
        // which counts twice: g = [0, 14, 4, 0]; out [1, 2, 1, 1, 2] holds
        // c 0 (cells 0, 1) then c 1: [0, 4, 14, 0].
        let depth = Tensor::from_f64s(Dtype::Float32, &[1, 1, 2, 1, 1], &[2.0, 0.5]);
        let feat = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 1, 2], &[4.0, 3.0]);
        let inputs = vec![
            depth,
            feat,
            ints(&[0, 1, 0]),
            ints(&[1, 0, 0]),
            ints(&[1, 2, 1]),
            ints(&[0, 1]),
            ints(&[2, 2]),
        ];
        let out = run(&s, "f32", inputs);
        assert_eq!(out[0].shape, vec![1, 2, 1, 1, 2]);
        let got: Vec<f64> = (0..4).map(|i| out[0].get_f64(i)).collect();
        assert_eq!(got, vec![0.0, 4.0, 14.0, 0.0]);
    }

    #[test]
    fn bev_pool_fp16_accumulates_in_fp16_in_order() {
        let s = spec(BEV_SPEC);
        // 2048 + 1 + 1 in fp16: 2049 is a tie and rounds to 2048 (even),
        // twice; float32 would give 2050.
        let depth = Tensor::from_f64s(Dtype::Float16, &[1, 1, 2, 1, 1], &[2048.0, 1.0]);
        let feat = Tensor::from_f64s(Dtype::Float16, &[1, 1, 1, 1, 2], &[1.0, 1.0]);
        let inputs = vec![
            depth,
            feat,
            ints(&[0, 1, 1]),
            ints(&[0, 0, 1]),
            ints(&[0, 0, 0]),
            ints(&[0]),
            ints(&[3]),
        ];
        let out = run(&s, "f16", inputs);
        assert_eq!(out[0].get_f64(0), 2048.0);
    }

    #[test]
    fn bev_pool_skips_entries_outside_the_tensors() {
        let s = spec(BEV_SPEC);
        // Entry 0 has a depth rank past the end, entry 1 a negative bev
        // rank; the interval reaches past P. Only entry 2 counts: 2 * 4.
        let depth = Tensor::from_f64s(Dtype::Float32, &[1, 1, 2, 1, 1], &[2.0, 0.5]);
        let feat = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 1, 2], &[4.0, 3.0]);
        let inputs = vec![
            depth,
            feat,
            ints(&[2, 1, 0]),
            ints(&[1, 0, 0]),
            ints(&[1, -1, 3]),
            ints(&[-1, 0]),
            ints(&[9, 0]),
        ];
        let out = run(&s, "f32", inputs);
        let got: Vec<f64> = (0..4).map(|i| out[0].get_f64(i)).collect();
        assert_eq!(got, vec![0.0, 0.0, 0.0, 8.0]);
    }

    const TRI_SPEC: &str = r#"
[op]
name = "upsample_trilinear3d_backward"
level = 3
op_type = "UpsampleTrilinear3dBackward"
[[inputs]]
name = "grad_output"
dtypes = ["float16", "float32", "bfloat16"]
[[outputs]]
name = "grad_input"
dtype = { same_as = "grad_output" }
[[attrs]]
name = "output_size"
type = "list_int"
required = true
[[attrs]]
name = "input_size"
type = "list_int"
required = true
[[attrs]]
name = "align_corners"
type = "bool"
default = false
[[attrs]]
name = "scales_d"
type = "float"
default = 0.0
[[attrs]]
name = "scales_h"
type = "float"
default = 0.0
[[attrs]]
name = "scales_w"
type = "float"
default = 0.0
[[cases]]
name = "co"
shapes = [[2, 2, 2, 2, 2]]
dtype = "float32"
attrs = { output_size = [2, 2, 2], input_size = [2, 2, 1, 1, 1] }
[[cases]]
name = "w_only"
shapes = [[1, 1, 1, 1, 4]]
dtype = "float32"
attrs = { output_size = [1, 1, 4], input_size = [1, 1, 1, 1, 2] }
[[cases]]
name = "ac_identity_d"
shapes = [[1, 1, 2, 3, 1]]
dtype = "float32"
attrs = { output_size = [2, 3, 1], input_size = [1, 1, 2, 2, 1], align_corners = true, scales_d = 3.0 }
"#;

    #[test]
    fn trilinear_backward_sums_every_output_voxel_into_one_source() {
        let s = spec(TRI_SPEC);
        // The reference example: input [2, 2, 1, 1, 1], every output voxel
        // of a plane reads the one source voxel with total weight 1; grad
        // 1..32 sums to 36, 100, 164, 228 per plane.
        let g = Tensor::from_f64s(
            Dtype::Float32,
            &[2, 2, 2, 2, 2],
            &(1..=32).map(f64::from).collect::<Vec<_>>(),
        );
        let out = run(&s, "co", vec![g]);
        assert_eq!(out[0].shape, vec![2, 2, 1, 1, 1]);
        let got: Vec<f64> = (0..4).map(|i| out[0].get_f64(i)).collect();
        assert_eq!(got, vec![36.0, 100.0, 164.0, 228.0]);
    }

    #[test]
    fn trilinear_backward_half_pixel_weights() {
        let s = spec(TRI_SPEC);
        // W: 2 -> 4, ratio 1/2: sources 0, 0.25, 0.75 and 1.25 (clamped to
        // index 1): in0 = 1 + 2 * 0.75 + 3 * 0.25, in1 = 2 * 0.25 + 3 * 0.75 + 4.
        let g = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 1, 4], &[1.0, 2.0, 3.0, 4.0]);
        let out = run(&s, "w_only", vec![g]);
        assert_eq!((out[0].get_f64(0), out[0].get_f64(1)), (3.25, 6.75));
    }

    #[test]
    fn trilinear_backward_align_corners_and_an_identity_axis() {
        let s = spec(TRI_SPEC);
        // D: 2 -> 2 is the identity whatever scales_d says. H: 2 -> 3 with
        // align_corners, ratio 1/2: sources 0, 0.5 and 1 (the last index:
        // all of its weight stays on row 1). Depth 0 holds grad 1, 2, 3:
        // h0 = 1 + 2 / 2, h1 = 2 / 2 + 3; depth 1 holds 4, 5, 6.
        let g = Tensor::from_f64s(
            Dtype::Float32,
            &[1, 1, 2, 3, 1],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        );
        let out = run(&s, "ac_identity_d", vec![g]);
        assert_eq!(out[0].shape, vec![1, 1, 2, 2, 1]);
        let got: Vec<f64> = (0..4).map(|i| out[0].get_f64(i)).collect();
        assert_eq!(got, vec![2.0, 4.0, 6.5, 8.5]);
    }

    #[test]
    fn the_trilinear_package_loads_and_its_small_cases_compute() {
        use ascendopt_op::compare::{compare, poisoned};
        use ascendopt_op::golden::output_shapes;
        use ascendopt_op::{builtin_ops_dir, gen_inputs, OpPackage};
        let name = "upsample_trilinear3d_backward";
        let p = OpPackage::load(&builtin_ops_dir().join(name), &crate::BUILTINS)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (
                p.spec.kernel.as_str(),
                p.spec.op_type.as_str(),
                p.spec.level
            ),
            (name, "UpsampleTrilinear3dBackward", 3)
        );
        assert!(p.tiling.knobs().any(|k| k.name == "TILE_BYTES"));
        assert!(p.cases().len() >= 3);
        for c in p.cases() {
            let shapes = output_shapes(&p.spec, c).unwrap().unwrap();
            if c.input_elements() > 70_000 {
                continue;
            }
            let inputs = gen_inputs(c, 1);
            let out = p.golden(c, &inputs).unwrap_or_else(|e| panic!("{e}"));
            for ((t, co), shape) in out.iter().zip(&c.outputs).zip(&shapes) {
                assert_eq!(&t.shape, shape, "{}", c.name);
                assert!(compare(t, t, co.tolerance).unwrap().passed());
                let r = compare(t, &poisoned(t.dtype, &t.shape), co.tolerance).unwrap();
                assert_eq!(r.unwritten, t.numel(), "{}", c.name);
            }
        }
    }
}
