//! Builtin goldens of the level2_move operators (issue: operator suite):
//! pad_v3_grad_replication, reflection_pad3d_grad, strided_slice_assign_v2,
//! upsample_bilinear2d_grad, upsample_nearest_exact3d,
//! adaptive_avg_pool3d_grad and avg_pool3_d. Semantics follow
//! shared/ref/operators-l2.md.
//!
//! Numerics: the movement operators (upsample_nearest_exact3d,
//! strided_slice_assign_v2) copy bits. The accumulating ones sum in f64 from
//! the exact inputs and round once to the output dtype; index maps and
//! interpolation weights are computed in f32 exactly as torch computes them
//! (`area_pixel_compute_scale` / `compute_scales_value` in float), so the
//! kernels, which compute the same f32 values with vector ops, pick the same
//! source elements.
//!
//! Value-dependent index inputs: the simulated tiling cannot read tensor
//! values (`ValueDepend` is not emulated), and a case cannot give an input
//! fixed per-element values. So the index operands that CANN passes as
//! tensors (`paddings` of the two pad gradients; `begin`, `end`, `strides`,
//! `axes` of strided_slice_assign_v2) are `list_int` attributes here, with
//! the same layout and meaning (as the older CANN `*D` operators do).

use crate::common::{arity, bool_attr, int_attr, str_attr, Odometer};
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::{AttrValue, Case};
use ascendopt_op::tensor::{numel, shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "upsample_nearest_exact3d",
        infer: nearest_infer,
        compute: nearest_compute,
    },
    Builtin {
        name: "pad_v3_grad_replication",
        infer: pad_grad_infer,
        compute: replication_grad_compute,
    },
    Builtin {
        name: "reflection_pad3d_grad",
        infer: pad_grad_infer,
        compute: reflection_grad_compute,
    },
    Builtin {
        name: "adaptive_avg_pool3d_grad",
        infer: adaptive_grad_infer,
        compute: adaptive_grad_compute,
    },
    Builtin {
        name: "avg_pool3_d",
        infer: avg_pool_infer,
        compute: avg_pool_compute,
    },
    Builtin {
        name: "upsample_bilinear2d_grad",
        infer: bilinear_grad_infer,
        compute: bilinear_grad_compute,
    },
    Builtin {
        name: "strided_slice_assign_v2",
        infer: slice_assign_infer,
        compute: slice_assign_compute,
    },
];

// ---- helpers ----------------------------------------------------------------

/// Input 0 is float16, float32 or bfloat16 and every other input and
/// output shares its dtype (inputs listed in `skip` are exempt).
fn float_dtype(case: &Case, op: &str, skip: &[usize]) -> Result<Dtype, Reject> {
    let first = &case.inputs[0];
    if !matches!(
        first.dtype,
        Dtype::Float16 | Dtype::Float32 | Dtype::Bfloat16
    ) {
        return Err(Reject::new(
            "dtype",
            format!(
                "{op} is defined for float16, float32 and bfloat16; `{}` is {}",
                first.name, first.dtype
            ),
        ));
    }
    for (i, t) in case.inputs.iter().enumerate() {
        if !skip.contains(&i) && t.dtype != first.dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "`{}` is {} but `{}` is {}",
                    t.name, t.dtype, first.name, first.dtype
                ),
            ));
        }
    }
    for o in &case.outputs {
        if o.dtype != first.dtype {
            return Err(Reject::new(
                "dtype",
                format!(
                    "output `{}` must be {}, not {}",
                    o.name, first.dtype, o.dtype
                ),
            ));
        }
    }
    Ok(first.dtype)
}

fn list_attr<'a>(case: &'a Case, name: &str) -> Result<&'a [i64], Reject> {
    match case.attr(name) {
        Some(AttrValue::ListInt(v)) => Ok(v),
        _ => Err(Reject::new(
            "attrs",
            format!("attr `{name}` must be a list of integers"),
        )),
    }
}

/// A float attr as the f32 the OpDef stores.
fn f32_attr(case: &Case, name: &str) -> Result<f32, Reject> {
    case.attr(name)
        .and_then(AttrValue::as_f64)
        .map(|v| v as f32)
        .ok_or_else(|| Reject::new("attrs", format!("attr `{name}` must be a number")))
}

fn need_rank(name: &str, shape: &[usize], ranks: &[usize], op: &str) -> Result<(), Reject> {
    if !ranks.contains(&shape.len()) {
        let want: Vec<String> = ranks.iter().map(|r| format!("{r}-D")).collect();
        return Err(Reject::new(
            "shapes",
            format!(
                "{op}: `{name}` {} must be {}",
                shape_str(shape),
                want.join(" or ")
            ),
        ));
    }
    if shape.contains(&0) {
        return Err(Reject::new(
            "shapes",
            format!("{op}: `{name}` {} has an empty dimension", shape_str(shape)),
        ));
    }
    Ok(())
}

/// A tensor of `dtype` from f64 values, each rounded once.
fn round_sums(dtype: Dtype, shape: &[usize], sums: &[f64]) -> Tensor {
    let mut t = Tensor::zeros(dtype, shape);
    t.write_f64s(0, sums);
    t
}

/// Row-major strides of a shape.
fn strides_of(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Calls `f(out_flat, in_flat)` for the separable 3-D index map of the last
/// three dims: output index `o` on axis `a` reads input indices `maps[a][o]`
/// (one or more), the leading dims map one to one.
fn for_each_separable(
    lead: usize,
    in3: [usize; 3],
    out3: [usize; 3],
    maps: &[Vec<Vec<usize>>; 3],
    mut f: impl FnMut(usize, usize),
) {
    let in_vol = in3[0] * in3[1] * in3[2];
    let out_vol = out3[0] * out3[1] * out3[2];
    for l in 0..lead {
        for (od, ds) in maps[0].iter().enumerate() {
            for (oh, hs) in maps[1].iter().enumerate() {
                for (ow, ws) in maps[2].iter().enumerate() {
                    let o = l * out_vol + (od * out3[1] + oh) * out3[2] + ow;
                    for &d in ds {
                        for &h in hs {
                            for &w in ws {
                                f(o, l * in_vol + (d * in3[1] + h) * in3[2] + w);
                            }
                        }
                    }
                }
            }
        }
    }
}

// ---- upsample_nearest_exact3d -------------------------------------------------

/// torch `nearest_neighbor_exact_compute_source_index`: the product is
/// exact in double and rounded to float before `floorf`, which equals the
/// f32 product for indices below 2^23.
fn nearest_exact_src(dst: usize, ratio: f32, input: usize) -> usize {
    let v = (dst as f32 + 0.5) * ratio;
    (v.floor().max(0.0) as usize).min(input - 1)
}

/// The op's scale attr is already inverted (aclnn passes 1/scale); 0 means
/// in/out, computed in float as torch's `compute_scales_value`.
fn inverse_scale(attr: f32, input: usize, output: usize) -> f32 {
    if attr > 0.0 {
        attr
    } else {
        input as f32 / output as f32
    }
}

fn nearest_sizes(case: &Case) -> Result<[usize; 3], Reject> {
    let sizes = list_attr(case, "output_size")?;
    if sizes.len() != 3 || sizes.iter().any(|&s| s <= 0) {
        return Err(Reject::new(
            "attrs",
            format!("output_size must be 3 positive sizes [Do, Ho, Wo], not {sizes:?}"),
        ));
    }
    Ok([sizes[0] as usize, sizes[1] as usize, sizes[2] as usize])
}

fn nearest_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let op = "upsample_nearest_exact3d";
    arity(case, 1, 1)?;
    float_dtype(case, op, &[])?;
    let x = &case.inputs[0];
    need_rank(&x.name, &x.shape, &[5], op)?;
    let out = nearest_sizes(case)?;
    for name in ["scale_d", "scale_h", "scale_w"] {
        let s = f32_attr(case, name)?;
        if !s.is_finite() || s < 0.0 {
            return Err(Reject::new(
                "attrs",
                format!("{name} = {s} must be finite and >= 0 (0: in/out)"),
            ));
        }
    }
    Ok(vec![vec![x.shape[0], x.shape[1], out[0], out[1], out[2]]])
}

fn nearest_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let x = &inputs[0];
    let out = nearest_sizes(case)?;
    let in3 = [x.shape[2], x.shape[3], x.shape[4]];
    let mut maps: [Vec<Vec<usize>>; 3] = Default::default();
    for (a, name) in ["scale_d", "scale_h", "scale_w"].iter().enumerate() {
        let r = inverse_scale(f32_attr(case, name)?, in3[a], out[a]);
        maps[a] = (0..out[a])
            .map(|o| vec![nearest_exact_src(o, r, in3[a])])
            .collect();
    }
    let shape = vec![x.shape[0], x.shape[1], out[0], out[1], out[2]];
    let mut y = Tensor::zeros(case.outputs[0].dtype, &shape);
    for_each_separable(x.shape[0] * x.shape[1], in3, out, &maps, |o, i| {
        y.set_bits(o, x.bits(i));
    });
    Ok(vec![y])
}

// ---- pad_v3_grad_replication, reflection_pad3d_grad ------------------------------

/// (before, after) pads of the last three dims from `paddings` (pairs in
/// dimension order, 2 * rank values; the leading dims must have 0).
fn pad_pairs(case: &Case, rank: usize) -> Result<[(usize, usize); 3], Reject> {
    let p = list_attr(case, "paddings")?;
    if p.len() != 2 * rank {
        return Err(Reject::new(
            "attrs",
            format!(
                "paddings has {} values; a {rank}-D x needs {} ((before, after) per dim)",
                p.len(),
                2 * rank
            ),
        ));
    }
    if p[..2 * (rank - 3)].iter().any(|&v| v != 0) {
        return Err(Reject::new(
            "attrs",
            format!("paddings {p:?}: only the last three dims may be padded"),
        ));
    }
    if p.iter().any(|&v| v < 0) {
        return Err(Reject::new("attrs", format!("paddings {p:?} must be >= 0")));
    }
    let o = 2 * (rank - 3);
    Ok([
        (p[o] as usize, p[o + 1] as usize),
        (p[o + 2] as usize, p[o + 3] as usize),
        (p[o + 4] as usize, p[o + 5] as usize),
    ])
}

fn pad_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let op = "pad gradient";
    arity(case, 1, 1)?;
    float_dtype(case, op, &[])?;
    let x = &case.inputs[0];
    need_rank(&x.name, &x.shape, &[4, 5], op)?;
    let rank = x.shape.len();
    let pads = pad_pairs(case, rank)?;
    let mut out = x.shape.clone();
    for (a, (b, e)) in pads.iter().enumerate() {
        let dim = x.shape[rank - 3 + a];
        if b + e >= dim {
            return Err(Reject::new(
                "attrs",
                format!(
                    "pads ({b}, {e}) leave nothing of dim {} ({dim})",
                    rank - 3 + a
                ),
            ));
        }
        let input = dim - b - e;
        if *b >= input || *e >= input {
            return Err(Reject::new(
                "attrs",
                format!(
                    "pads ({b}, {e}) of dim {} must be smaller than the unpadded size {input}",
                    rank - 3 + a
                ),
            ));
        }
        out[rank - 3 + a] = input;
    }
    Ok(vec![out])
}

/// For each unpadded index, the padded indices whose gradient it receives.
fn pad_preimages(len: usize, before: usize, after: usize, reflect: bool) -> Vec<Vec<usize>> {
    let mut pre = vec![Vec::new(); len];
    for o in 0..len + before + after {
        let i = o as i64 - before as i64;
        let src = if reflect {
            let i = if i < 0 { -i } else { i };
            if i >= len as i64 {
                2 * (len as i64 - 1) - i
            } else {
                i
            }
        } else {
            i.clamp(0, len as i64 - 1)
        };
        pre[src as usize].push(o);
    }
    pre
}

fn pad_grad_compute(
    case: &Case,
    inputs: &[Tensor],
    reflect: bool,
) -> Result<Vec<Tensor>, GoldenError> {
    let x = &inputs[0];
    let shapes = pad_grad_infer(case)?;
    let rank = x.shape.len();
    let pads = pad_pairs(case, rank)?;
    let out_shape = &shapes[0];
    let lead: usize = out_shape[..rank - 3].iter().product();
    let out3 = [
        out_shape[rank - 3],
        out_shape[rank - 2],
        out_shape[rank - 1],
    ];
    let in3 = [x.shape[rank - 3], x.shape[rank - 2], x.shape[rank - 1]];
    let maps = [0, 1, 2].map(|a| pad_preimages(out3[a], pads[a].0, pads[a].1, reflect));
    let mut sums = vec![0.0f64; numel(out_shape)];
    for_each_separable(lead, in3, out3, &maps, |o, i| sums[o] += x.get_f64(i));
    Ok(vec![round_sums(case.outputs[0].dtype, out_shape, &sums)])
}

fn replication_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    pad_grad_compute(case, inputs, false)
}

fn reflection_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    pad_grad_compute(case, inputs, true)
}

// ---- adaptive_avg_pool3d_grad ---------------------------------------------------

/// Adaptive window of output index `o`: [floor(o*In/Out), ceil((o+1)*In/Out)).
fn adaptive_window(o: usize, input: usize, output: usize) -> (usize, usize) {
    (o * input / output, ((o + 1) * input).div_ceil(output))
}

fn adaptive_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let op = "adaptive_avg_pool3d_grad";
    arity(case, 2, 1)?;
    float_dtype(case, op, &[1])?;
    let (g, x) = (&case.inputs[0], &case.inputs[1]);
    need_rank(&g.name, &g.shape, &[4, 5], op)?;
    need_rank(&x.name, &x.shape, &[4, 5], op)?;
    let r = g.shape.len();
    if x.shape.len() != r || x.shape[..r - 3] != g.shape[..r - 3] {
        return Err(Reject::new(
            "shapes",
            format!(
                "{op}: `{}` {} and `{}` {} must agree in rank and leading dims",
                g.name,
                shape_str(&g.shape),
                x.name,
                shape_str(&x.shape)
            ),
        ));
    }
    Ok(vec![x.shape.clone()])
}

fn adaptive_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (g, x) = (&inputs[0], &inputs[1]);
    let r = g.shape.len();
    let lead: usize = g.shape[..r - 3].iter().product();
    let o3 = [g.shape[r - 3], g.shape[r - 2], g.shape[r - 1]];
    let i3 = [x.shape[r - 3], x.shape[r - 2], x.shape[r - 1]];
    let win = |a: usize, o: usize| adaptive_window(o, i3[a], o3[a]);
    let mut sums = vec![0.0f64; numel(&x.shape)];
    let in_vol = i3[0] * i3[1] * i3[2];
    let out_vol = o3[0] * o3[1] * o3[2];
    for l in 0..lead {
        for od in 0..o3[0] {
            let (d0, d1) = win(0, od);
            for oh in 0..o3[1] {
                let (h0, h1) = win(1, oh);
                for ow in 0..o3[2] {
                    let (w0, w1) = win(2, ow);
                    let k = ((d1 - d0) * (h1 - h0) * (w1 - w0)) as f64;
                    let v = g.get_f64(l * out_vol + (od * o3[1] + oh) * o3[2] + ow) / k;
                    for d in d0..d1 {
                        for h in h0..h1 {
                            for w in w0..w1 {
                                sums[l * in_vol + (d * i3[1] + h) * i3[2] + w] += v;
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(vec![round_sums(case.outputs[0].dtype, &x.shape, &sums)])
}

// ---- avg_pool3_d ------------------------------------------------------------------

/// Geometry of one pooled axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PoolAxis {
    input: usize,
    k: usize,
    s: usize,
    before: usize,
    after: usize,
    output: usize,
}

impl PoolAxis {
    /// (window start clipped to the padded extent, clipped to the input)
    /// of output index `o`: ((start, end) in padded coordinates relative to
    /// the input, (start, end) of real elements).
    fn window(&self, o: usize) -> ((i64, i64), (usize, usize)) {
        let start = (o * self.s) as i64 - self.before as i64;
        let end = (start + self.k as i64).min((self.input + self.after) as i64);
        let real0 = start.max(0) as usize;
        let real1 = end.min(self.input as i64).max(0) as usize;
        ((start, end), (real0, real1.max(real0)))
    }
}

/// Per-axis geometry (D, H, W) of avg_pool3_d, and whether x is NDHWC.
fn avg_pool_geometry(case: &Case) -> Result<([PoolAxis; 3], bool), Reject> {
    let x = &case.inputs[0];
    let format = str_attr(case, "data_format")?;
    let ndhwc = match format {
        "NDHWC" => true,
        "NCDHW" => false,
        other => {
            return Err(Reject::new(
                "attrs",
                format!("data_format {other:?} must be \"NDHWC\" or \"NCDHW\""),
            ))
        }
    };
    let spatial = if ndhwc {
        [x.shape[1], x.shape[2], x.shape[3]]
    } else {
        [x.shape[2], x.shape[3], x.shape[4]]
    };
    let three = |name: &str, v: &[i64], allow_empty: bool| -> Result<Option<[i64; 3]>, Reject> {
        match v.len() {
            0 if allow_empty => Ok(None),
            1 => Ok(Some([v[0]; 3])),
            3 => Ok(Some([v[0], v[1], v[2]])),
            n => Err(Reject::new(
                "attrs",
                format!("{name} has {n} values; give 1 or 3"),
            )),
        }
    };
    let k = three("ksize", list_attr(case, "ksize")?, false)?.unwrap_or([1; 3]);
    let s = three("strides", list_attr(case, "strides")?, true)?.unwrap_or(k);
    let pads = list_attr(case, "pads")?;
    let p: [(i64, i64); 3] = match pads.len() {
        1 => [(pads[0], pads[0]); 3],
        3 => [(pads[0], pads[0]), (pads[1], pads[1]), (pads[2], pads[2])],
        6 => [(pads[0], pads[1]), (pads[2], pads[3]), (pads[4], pads[5])],
        n => {
            return Err(Reject::new(
                "attrs",
                format!("pads has {n} values; give 1, 3 or 6"),
            ))
        }
    };
    let ceil_mode = bool_attr(case, "ceil_mode")?;
    let mut axes = [PoolAxis {
        input: 0,
        k: 0,
        s: 0,
        before: 0,
        after: 0,
        output: 0,
    }; 3];
    for a in 0..3 {
        let (kk, ss, (pb, pa)) = (k[a], s[a], p[a]);
        if kk <= 0 || ss <= 0 {
            return Err(Reject::new(
                "attrs",
                format!("ksize {kk} and strides {ss} must be positive"),
            ));
        }
        if pb < 0 || pa < 0 || 2 * pb > kk || 2 * pa > kk {
            return Err(Reject::new(
                "attrs",
                format!("pads ({pb}, {pa}) must be in [0, ksize/2] (ksize {kk})"),
            ));
        }
        let span = spatial[a] as i64 + pb + pa - kk;
        if span < 0 {
            return Err(Reject::new(
                "attrs",
                format!(
                    "window {kk} is larger than the padded input {}",
                    spatial[a] as i64 + pb + pa
                ),
            ));
        }
        let mut out = if ceil_mode {
            (span + ss - 1) / ss + 1
        } else {
            span / ss + 1
        };
        // torch: with ceil_mode the last window must start inside the input
        // or the front padding.
        if ceil_mode && (out - 1) * ss >= spatial[a] as i64 + pb {
            out -= 1;
        }
        axes[a] = PoolAxis {
            input: spatial[a],
            k: kk as usize,
            s: ss as usize,
            before: pb as usize,
            after: pa as usize,
            output: out as usize,
        };
    }
    Ok((axes, ndhwc))
}

fn avg_pool_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let op = "avg_pool3_d";
    arity(case, 1, 1)?;
    float_dtype(case, op, &[])?;
    let x = &case.inputs[0];
    need_rank(&x.name, &x.shape, &[5], op)?;
    let (axes, ndhwc) = avg_pool_geometry(case)?;
    if int_attr(case, "divisor_override")? < 0 {
        return Err(Reject::new("attrs", "divisor_override must be >= 0"));
    }
    bool_attr(case, "count_include_pad")?;
    let o = [axes[0].output, axes[1].output, axes[2].output];
    Ok(vec![if ndhwc {
        vec![x.shape[0], o[0], o[1], o[2], x.shape[4]]
    } else {
        vec![x.shape[0], x.shape[1], o[0], o[1], o[2]]
    }])
}

fn avg_pool_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let x = &inputs[0];
    let (axes, ndhwc) = avg_pool_geometry(case)?;
    let shape = avg_pool_infer(case)?.remove(0);
    let divisor = int_attr(case, "divisor_override")?;
    let include_pad = bool_attr(case, "count_include_pad")?;
    let (n, c) = if ndhwc {
        (x.shape[0], x.shape[4])
    } else {
        (x.shape[0], x.shape[1])
    };
    let xs = strides_of(&x.shape);
    let ys = strides_of(&shape);
    // (n, c, d, h, w) -> flat index in NDHWC or NCDHW.
    let at = |st: &[usize], n: usize, c: usize, d: usize, h: usize, w: usize| {
        if ndhwc {
            n * st[0] + d * st[1] + h * st[2] + w * st[3] + c
        } else {
            n * st[0] + c * st[1] + d * st[2] + h * st[3] + w
        }
    };
    let mut sums = vec![0.0f64; numel(&shape)];
    for nn in 0..n {
        for od in 0..axes[0].output {
            let ((pd0, pd1), (d0, d1)) = axes[0].window(od);
            for oh in 0..axes[1].output {
                let ((ph0, ph1), (h0, h1)) = axes[1].window(oh);
                for ow in 0..axes[2].output {
                    let ((pw0, pw1), (w0, w1)) = axes[2].window(ow);
                    let div = if divisor > 0 {
                        divisor as f64
                    } else if include_pad {
                        ((pd1 - pd0) * (ph1 - ph0) * (pw1 - pw0)) as f64
                    } else {
                        ((d1 - d0) * (h1 - h0) * (w1 - w0)) as f64
                    };
                    for cc in 0..c {
                        let mut s = 0.0f64;
                        for d in d0..d1 {
                            for h in h0..h1 {
                                for w in w0..w1 {
                                    s += x.get_f64(at(&xs, nn, cc, d, h, w));
                                }
                            }
                        }
                        sums[at(&ys, nn, cc, od, oh, ow)] = s / div;
                    }
                }
            }
        }
    }
    Ok(vec![round_sums(case.outputs[0].dtype, &shape, &sums)])
}

// ---- upsample_bilinear2d_grad -------------------------------------------------------

/// Source index and weights of one output index of bilinear interpolation,
/// in f32 as torch computes them: (i0, i1, lambda0, lambda1).
fn bilinear_src(
    dst: usize,
    ratio: f32,
    align_corners: bool,
    input: usize,
) -> (usize, usize, f32, f32) {
    let src = if align_corners {
        ratio * dst as f32
    } else {
        let s = ratio * (dst as f32 + 0.5) - 0.5;
        if s < 0.0 {
            0.0
        } else {
            s
        }
    };
    let i0 = (src.floor() as usize).min(input - 1);
    let i1 = if i0 < input - 1 { i0 + 1 } else { i0 };
    let l1 = src - i0 as f32;
    (i0, i1, 1.0 - l1, l1)
}

/// torch `area_pixel_compute_scale` with the op's already inverted scale.
fn bilinear_ratio(input: usize, output: usize, align_corners: bool, attr: f32) -> f32 {
    if align_corners {
        if output > 1 {
            (input - 1) as f32 / (output - 1) as f32
        } else {
            0.0
        }
    } else {
        inverse_scale(attr, input, output)
    }
}

fn bilinear_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let op = "upsample_bilinear2d_grad";
    arity(case, 1, 1)?;
    float_dtype(case, op, &[])?;
    let g = &case.inputs[0];
    need_rank(&g.name, &g.shape, &[4], op)?;
    let out = list_attr(case, "output_size")?;
    let inp = list_attr(case, "input_size")?;
    if out.len() != 2 || out[0] as usize != g.shape[2] || out[1] as usize != g.shape[3] {
        return Err(Reject::new(
            "attrs",
            format!(
                "output_size {out:?} must be [Hout, Wout] = [{}, {}] of `{}`",
                g.shape[2], g.shape[3], g.name
            ),
        ));
    }
    if inp.len() != 4
        || inp[0] as usize != g.shape[0]
        || inp[1] as usize != g.shape[1]
        || inp[2] <= 0
        || inp[3] <= 0
    {
        return Err(Reject::new(
            "attrs",
            format!(
                "input_size {inp:?} must be [N, C, Hin, Win] with N, C = {}, {}",
                g.shape[0], g.shape[1]
            ),
        ));
    }
    bool_attr(case, "align_corners")?;
    for name in ["scales_h", "scales_w"] {
        let s = f32_attr(case, name)?;
        if !s.is_finite() || s < 0.0 {
            return Err(Reject::new(
                "attrs",
                format!("{name} = {s} must be finite and >= 0 (0: in/out)"),
            ));
        }
    }
    Ok(vec![inp.iter().map(|&v| v as usize).collect()])
}

fn bilinear_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let g = &inputs[0];
    let shape = bilinear_grad_infer(case)?.remove(0);
    let ac = bool_attr(case, "align_corners")?;
    let (hin, win, hout, wout) = (shape[2], shape[3], g.shape[2], g.shape[3]);
    let rh = bilinear_ratio(hin, hout, ac, f32_attr(case, "scales_h")?);
    let rw = bilinear_ratio(win, wout, ac, f32_attr(case, "scales_w")?);
    let hs: Vec<_> = (0..hout).map(|o| bilinear_src(o, rh, ac, hin)).collect();
    let ws: Vec<_> = (0..wout).map(|o| bilinear_src(o, rw, ac, win)).collect();
    let planes = shape[0] * shape[1];
    let mut sums = vec![0.0f64; numel(&shape)];
    for p in 0..planes {
        for (oh, &(h0, h1, lh0, lh1)) in hs.iter().enumerate() {
            for (ow, &(w0, w1, lw0, lw1)) in ws.iter().enumerate() {
                let v = g.get_f64((p * hout + oh) * wout + ow);
                let base = p * hin * win;
                for (h, lh) in [(h0, lh0), (h1, lh1)] {
                    for (w, lw) in [(w0, lw0), (w1, lw1)] {
                        sums[base + h * win + w] += f64::from(lh) * f64::from(lw) * v;
                    }
                }
            }
        }
    }
    Ok(vec![round_sums(case.outputs[0].dtype, &shape, &sums)])
}

// ---- strided_slice_assign_v2 --------------------------------------------------------

/// Per dim of `var`: (begin, stride, count) of the assigned slice.
fn slice_geometry(case: &Case) -> Result<Vec<(usize, usize, usize)>, Reject> {
    let var = &case.inputs[0];
    let rank = var.shape.len();
    let begin = list_attr(case, "begin")?;
    let end = list_attr(case, "end")?;
    let strides = list_attr(case, "strides")?;
    let axes = list_attr(case, "axes")?;
    let k = begin.len();
    if end.len() != k || strides.len() != k || (!axes.is_empty() && axes.len() != k) {
        return Err(Reject::new(
            "attrs",
            format!(
                "begin, end, strides (and axes if given) must have the same length: {k}, {}, {}, {}",
                end.len(),
                strides.len(),
                axes.len()
            ),
        ));
    }
    let mut geo: Vec<(usize, usize, usize)> = var.shape.iter().map(|&d| (0, 1, d)).collect();
    let mut seen = vec![false; rank];
    for i in 0..k {
        let axis = if axes.is_empty() { i as i64 } else { axes[i] };
        let axis = if axis < 0 { axis + rank as i64 } else { axis };
        if axis < 0 || axis >= rank as i64 || seen[axis as usize] {
            return Err(Reject::new(
                "attrs",
                format!(
                    "axis {} is out of range or repeated for rank {rank}",
                    axes.get(i).copied().unwrap_or(i as i64)
                ),
            ));
        }
        let a = axis as usize;
        seen[a] = true;
        let dim = var.shape[a] as i64;
        let norm = |v: i64| (if v < 0 { v + dim } else { v }).clamp(0, dim);
        let (b, e, s) = (norm(begin[i]), norm(end[i]), strides[i]);
        if s <= 0 {
            return Err(Reject::new(
                "attrs",
                format!("strides[{i}] = {s} must be > 0"),
            ));
        }
        if a == rank - 1 && s != 1 {
            return Err(Reject::new("attrs", "the stride of the last dim must be 1"));
        }
        let count = if e > b { (e - b + s - 1) / s } else { 0 };
        geo[a] = (b as usize, s as usize, count as usize);
    }
    Ok(geo)
}

fn slice_assign_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let op = "strided_slice_assign_v2";
    arity(case, 2, 1)?;
    let (var, val) = (&case.inputs[0], &case.inputs[1]);
    if var.dtype != val.dtype || case.outputs[0].dtype != var.dtype {
        return Err(Reject::new(
            "dtype",
            format!(
                "{op}: `{}`, `{}` and the output must share a dtype",
                var.name, val.name
            ),
        ));
    }
    if var.shape.is_empty() {
        return Err(Reject::new(
            "shapes",
            format!("{op}: `{}` is a scalar", var.name),
        ));
    }
    let geo = slice_geometry(case)?;
    let want: Vec<usize> = geo.iter().map(|g| g.2).collect();
    if val.shape != want {
        return Err(Reject::new(
            "shapes",
            format!(
                "{op}: `{}` is {} but the slice of `{}` {} is {}",
                val.name,
                shape_str(&val.shape),
                var.name,
                shape_str(&var.shape),
                shape_str(&want)
            ),
        ));
    }
    Ok(vec![var.shape.clone()])
}

fn slice_assign_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (var, val) = (&inputs[0], &inputs[1]);
    let geo = slice_geometry(case)?;
    let mut out = var.clone();
    let vs = strides_of(&var.shape);
    // Element `idx` of val goes to var[b + idx * s] in every dimension.
    let base: usize = geo.iter().zip(&vs).map(|(&(b, _, _), &st)| b * st).sum();
    let steps: Vec<usize> = geo
        .iter()
        .zip(&vs)
        .map(|(&(_, s, _), &st)| s * st)
        .collect();
    for (i, flat) in Odometer::new(&val.shape, &steps, base).enumerate() {
        out.set_bits(flat, val.bits(i));
    }
    Ok(vec![out])
}

#[cfg(test)]
mod tests {
    use crate::testutil::{parse_err, run, spec};

    use ascendopt_op::{Dtype, Tensor};

    fn iota(dtype: Dtype, shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        let v: Vec<f64> = (0..n).map(|i| i as f64).collect();
        Tensor::from_f64s(dtype, shape, &v)
    }

    const NEAREST: &str = r#"
[op]
name = "upsample_nearest_exact3d"
level = 2
op_type = "UpsampleNearestExact3d"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[attrs]]
name = "output_size"
type = "list_int"
required = true
[[attrs]]
name = "scale_d"
type = "float"
default = 0.0
[[attrs]]
name = "scale_h"
type = "float"
default = 0.0
[[attrs]]
name = "scale_w"
type = "float"
default = 0.0
[[cases]]
name = "down"
shapes = [[1, 1, 2, 2, 3]]
dtype = "float32"
attrs = { output_size = [1, 1, 2] }
[[cases]]
name = "up"
shapes = [[1, 1, 1, 2, 3]]
dtype = "float16"
attrs = { output_size = [2, 3, 5] }
[[cases]]
name = "scaled"
shapes = [[1, 1, 1, 1, 4]]
dtype = "float32"
attrs = { output_size = [1, 1, 3], scale_w = 0.5 }
"#;

    #[test]
    fn nearest_exact_picks_centres() {
        let s = spec(NEAREST);
        // D 2->1: (0.5)*2 = 1; H 2->1: 1; W 3->2: (0.5)*1.5 = 0.75 -> 0,
        // 1.5*1.5 = 2.25 -> 2. So y = x[0,0,1,1,{0,2}] = {9, 11}.
        let y = &run(&s, "down", vec![iota(Dtype::Float32, &[1, 1, 2, 2, 3])])[0];
        assert_eq!(y.shape, vec![1, 1, 1, 1, 2]);
        assert_eq!(y.to_f64s(), vec![9.0, 11.0]);
        // H 2->3: r = 2/3: 0.333 -> 0, 1.0 -> 1, 1.667 -> 1;
        // W 3->5: r = 0.6: 0.3, 0.9, 1.5, 2.1, 2.7 -> 0, 0, 1, 2, 2.
        let y = &run(&s, "up", vec![iota(Dtype::Float16, &[1, 1, 1, 2, 3])])[0];
        let row0 = [0.0, 0.0, 1.0, 2.0, 2.0];
        let row1 = [3.0, 3.0, 4.0, 5.0, 5.0];
        let mut plane = Vec::new();
        plane.extend(row0);
        plane.extend(row1);
        plane.extend(row1);
        let mut want = plane.clone();
        want.extend(plane);
        assert_eq!(y.to_f64s(), want);
        // An explicit (inverted) scale 0.5 overrides 4/3: 0.25, 0.75, 1.25
        // -> 0, 0, 1.
        let y = &run(&s, "scaled", vec![iota(Dtype::Float32, &[1, 1, 1, 1, 4])])[0];
        assert_eq!(y.to_f64s(), vec![0.0, 0.0, 1.0]);
    }

    #[test]
    fn nearest_rejects_bad_output_size() {
        let text = NEAREST.replace("output_size = [1, 1, 2]", "output_size = [1, 0, 2]");
        assert!(parse_err(&text).contains("output_size must be 3 positive sizes"));
    }

    const PAD: &str = r#"
[op]
name = "pad_v3_grad_replication"
level = 2
op_type = "PadV3GradReplication"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
[[outputs]]
name = "z"
dtype = { same_as = "x" }
[[attrs]]
name = "paddings"
type = "list_int"
required = true
[[cases]]
name = "w"
shapes = [[1, 1, 1, 1, 6]]
dtype = "float32"
attrs = { paddings = [0, 0, 0, 0, 0, 0, 0, 0, 2, 1] }
[[cases]]
name = "cube"
shapes = [[1, 4, 4, 4]]
dtype = "float32"
attrs = { paddings = [0, 0, 1, 1, 1, 1, 1, 1] }
"#;

    #[test]
    fn replication_grad_sums_edge_strips() {
        let s = spec(PAD);
        // W 3 padded (2, 1): padded o -> clamp(o - 2): 0,0,0,1,2,2.
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[1, 1, 1, 1, 6],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        );
        let z = &run(&s, "w", vec![x])[0];
        assert_eq!(z.shape, vec![1, 1, 1, 1, 3]);
        assert_eq!(z.to_f64s(), vec![6.0, 4.0, 11.0]);
        // 4-D [1, 4, 4, 4] padded 1 everywhere -> [1, 2, 2, 2]; all ones:
        // each output cell gets 2 * 2 * 2 = 8 (the [CO] example shape).
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 4, 4, 4], &[1.0; 64]);
        let z = &run(&s, "cube", vec![x])[0];
        assert_eq!(z.shape, vec![1, 2, 2, 2]);
        assert_eq!(z.to_f64s(), vec![8.0; 8]);
    }

    #[test]
    fn pad_grad_rejects_bad_paddings() {
        let text = PAD.replace(
            "[0, 0, 0, 0, 0, 0, 0, 0, 2, 1]",
            "[0, 1, 0, 0, 0, 0, 0, 0, 2, 1]",
        );
        assert!(parse_err(&text).contains("only the last three dims may be padded"));
        let text = PAD.replace(
            "[0, 0, 0, 0, 0, 0, 0, 0, 2, 1]",
            "[0, 0, 0, 0, 0, 0, 0, 0, 3, 1]",
        );
        assert!(parse_err(&text).contains("must be smaller than the unpadded size 2"));
        let text = PAD.replace("[0, 0, 0, 0, 0, 0, 0, 0, 2, 1]", "[0, 0, 0, 0, 2, 1]");
        assert!(parse_err(&text).contains("paddings has 6 values; a 5-D x needs 10"));
    }

    #[test]
    fn reflection_grad_folds_mirrors() {
        let text = PAD
            .replace("pad_v3_grad_replication", "reflection_pad3d_grad")
            .replace("PadV3GradReplication", "ReflectionPad3dGrad");
        let s = spec(&text);
        // W 3 padded (2, 1): o -> i = o - 2: -2, -1, 0, 1, 2, 3 -> reflect
        // 2, 1, 0, 1, 2, 1. z = [3, 2 + 4 + 6, 1 + 5].
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[1, 1, 1, 1, 6],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        );
        let z = &run(&s, "w", vec![x])[0];
        assert_eq!(z.to_f64s(), vec![3.0, 12.0, 6.0]);
        // Unpadded 2 per axis, pad 1: index map 1, 0, 1, 0 on each axis, so
        // every cell gets 2 * 2 * 2 ones.
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 4, 4, 4], &[1.0; 64]);
        assert_eq!(run(&s, "cube", vec![x])[0].to_f64s(), vec![8.0; 8]);
    }

    const ADAPTIVE: &str = r#"
[op]
name = "adaptive_avg_pool3d_grad"
level = 2
op_type = "AdaptiveAvgPool3dGrad"
[[inputs]]
name = "y_grad"
dtypes = ["float16", "float32", "bfloat16"]
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
dtype = { same_as = "y_grad" }
[[outputs]]
name = "x_grad"
dtype = { same_as = "y_grad" }
[[cases]]
name = "co"
shapes = [[2, 2, 1, 1, 2], [2, 2, 1, 1, 4]]
dtype = "float32"
[[cases]]
name = "overlap"
shapes = [[1, 1, 1, 1, 2], [1, 1, 1, 1, 3]]
dtype = "float32"
"#;

    #[test]
    fn adaptive_grad_spreads_over_windows() {
        let s = spec(ADAPTIVE);
        // [CO] example: W 4 -> 2, windows [0, 2) and [2, 4): each input gets
        // g / 2.
        let g = Tensor::from_f64s(
            Dtype::Float32,
            &[2, 2, 1, 1, 2],
            &[2.0, 4.0, 6.0, 8.0, 1.0, 3.0, 5.0, 7.0],
        );
        let x = Tensor::zeros(Dtype::Float32, &[2, 2, 1, 1, 4]);
        let out = &run(&s, "co", vec![g, x])[0];
        assert_eq!(out.shape, vec![2, 2, 1, 1, 4]);
        assert_eq!(
            &out.to_f64s()[..8],
            &[1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]
        );
        // W 3 -> 2: windows [0, 2) and [1, 3) overlap at 1.
        let g = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 1, 2], &[2.0, 6.0]);
        let x = Tensor::zeros(Dtype::Float32, &[1, 1, 1, 1, 3]);
        assert_eq!(
            run(&s, "overlap", vec![g, x])[0].to_f64s(),
            vec![1.0, 4.0, 3.0]
        );
    }

    const AVG: &str = r#"
[op]
name = "avg_pool3_d"
level = 2
op_type = "AvgPool3D"
[[inputs]]
name = "x"
dtypes = ["float16", "float32", "bfloat16"]
[[outputs]]
name = "y"
dtype = { same_as = "x" }
[[attrs]]
name = "ksize"
type = "list_int"
required = true
[[attrs]]
name = "strides"
type = "list_int"
default = []
[[attrs]]
name = "pads"
type = "list_int"
default = [0]
[[attrs]]
name = "ceil_mode"
type = "bool"
default = false
[[attrs]]
name = "count_include_pad"
type = "bool"
default = true
[[attrs]]
name = "divisor_override"
type = "int"
default = 0
[[attrs]]
name = "data_format"
type = "str"
default = "NDHWC"
[[cases]]
name = "plain"
shapes = [[1, 2, 2, 2, 1]]
dtype = "float32"
attrs = { ksize = [2] }
[[cases]]
name = "pad_incl"
shapes = [[1, 1, 1, 3, 1]]
dtype = "float32"
attrs = { ksize = [1, 1, 2], strides = [1, 1, 2], pads = [0, 0, 1] }
[[cases]]
name = "pad_excl"
shapes = [[1, 1, 1, 3, 1]]
dtype = "float32"
attrs = { ksize = [1, 1, 2], strides = [1, 1, 2], pads = [0, 0, 1], count_include_pad = false }
[[cases]]
name = "ceil"
shapes = [[1, 1, 1, 4, 1]]
dtype = "float32"
attrs = { ksize = [1, 1, 2], strides = [1, 1, 3], ceil_mode = true }
[[cases]]
name = "divisor"
shapes = [[1, 2, 2, 2, 1]]
dtype = "float32"
attrs = { ksize = [2], divisor_override = 3 }
[[cases]]
name = "ncdhw"
shapes = [[1, 1, 2, 2, 2]]
dtype = "float32"
attrs = { ksize = [2], data_format = "NCDHW" }
"#;

    #[test]
    fn avg_pool_divisors() {
        let s = spec(AVG);
        let x = iota(Dtype::Float32, &[1, 2, 2, 2, 1]);
        // Sum 0..8 = 28 over 8 cells.
        assert_eq!(run(&s, "plain", vec![x.clone()])[0].to_f64s(), vec![3.5]);
        assert_eq!(
            run(&s, "divisor", vec![x])[0].to_f64s(),
            vec![f64::from(28.0f32 / 3.0)]
        );
        let x = iota(Dtype::Float32, &[1, 1, 2, 2, 2]);
        assert_eq!(run(&s, "ncdhw", vec![x])[0].to_f64s(), vec![3.5]);
        // W = [4, 1, 2] (the 3 is W here: NDHWC [1, D=1, H=1, W=3, C=1]),
        // k 2, s 2, pad 1: windows [-1, 1) and [1, 3); both 2 wide with the
        // pad counted: [4/2, 3/2]; without it: [4/1, 3/2].
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 3, 1], &[4.0, 1.0, 2.0]);
        let y = &run(&s, "pad_incl", vec![x.clone()])[0];
        assert_eq!(y.shape, vec![1, 1, 1, 2, 1]);
        assert_eq!(y.to_f64s(), vec![2.0, 1.5]);
        assert_eq!(run(&s, "pad_excl", vec![x])[0].to_f64s(), vec![4.0, 1.5]);
        // W 4, k 2, s 3, ceil: (4 - 2 + 2) / 3 + 1 = 2 windows: [0, 2), [3, 5)
        // clipped to [3, 4) -> divisor 1 (the window stops at the input end).
        let x = iota(Dtype::Float32, &[1, 1, 1, 4, 1]);
        let y = &run(&s, "ceil", vec![x])[0];
        assert_eq!(y.to_f64s(), vec![0.5, 3.0]);
    }

    #[test]
    fn avg_pool_pad_counts_differ_at_the_border() {
        let text = AVG.replace(
            "shapes = [[1, 1, 1, 3, 1]]\ndtype = \"float32\"\nattrs = { ksize = [1, 1, 2], strides = [1, 1, 2], pads = [0, 0, 1] }",
            "shapes = [[1, 1, 1, 3, 1]]\ndtype = \"float32\"\nattrs = { ksize = [1, 1, 3], strides = [1, 1, 1], pads = [0, 0, 1] }",
        );
        let s = spec(&text);
        // k 3, s 1, pad 1 over [0, 1, 2]: windows [-1, 2), [0, 3), [1, 4)
        // clipped to the padded extent [-1, 4): all 3 wide.
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 3, 1], &[3.0, 6.0, 9.0]);
        assert_eq!(
            run(&s, "pad_incl", vec![x])[0].to_f64s(),
            vec![3.0, 6.0, 5.0]
        );
    }

    const BILINEAR: &str = r#"
[op]
name = "upsample_bilinear2d_grad"
level = 2
op_type = "UpsampleBilinear2dGrad"
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
name = "scales_h"
type = "float"
default = 0.0
[[attrs]]
name = "scales_w"
type = "float"
default = 0.0
[[cases]]
name = "ac"
shapes = [[1, 1, 1, 3]]
dtype = "float32"
attrs = { output_size = [1, 3], input_size = [1, 1, 1, 2], align_corners = true }
[[cases]]
name = "half_pixel"
shapes = [[1, 1, 1, 4]]
dtype = "float32"
attrs = { output_size = [1, 4], input_size = [1, 1, 1, 2] }
[[cases]]
name = "co"
shapes = [[1, 1, 6, 6]]
dtype = "float32"
attrs = { output_size = [6, 6], input_size = [1, 1, 3, 3], align_corners = true }
"#;

    #[test]
    fn bilinear_grad_weights() {
        let s = spec(BILINEAR);
        // align_corners, W 2 -> 3: r = 1/2; src 0, 0.5, 1 -> weights
        // (1 on 0), (0.5, 0.5), (1 on 1).
        let g = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 3], &[2.0, 4.0, 8.0]);
        assert_eq!(run(&s, "ac", vec![g])[0].to_f64s(), vec![4.0, 10.0]);
        // Half-pixel, W 2 -> 4: r = 0.5; src = max(0.5 (o + 0.5) - 0.5, 0)
        // = 0, 0.25, 0.75, 1.25 -> i0 = 0, 0, 0, 1 (1 is the last: i1 = 1).
        // x0 gets 1*1 + 0.75*2 + 0.25*4 = 3.5, x1 gets 0.25*2 + 0.75*4 + 8 =
        // 11.5.
        let g = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 4], &[1.0, 2.0, 4.0, 8.0]);
        assert_eq!(run(&s, "half_pixel", vec![g])[0].to_f64s(), vec![3.5, 11.5]);
        // [CO] example: ones [6, 6] -> [3, 3] with align_corners: the weights
        // of every grad pixel sum to 1, so the total is 36; per axis the
        // input 0 gets 1 + 0.6 + 0.2 = 1.8, input 1 gets 2.4.
        let g = Tensor::from_f64s(Dtype::Float32, &[1, 1, 6, 6], &[1.0; 36]);
        let r = run(&s, "co", vec![g])[0].to_f64s();
        let axis = [1.8, 2.4, 1.8];
        for (i, v) in r.iter().enumerate() {
            let want = axis[i / 3] * axis[i % 3];
            assert!((v - want).abs() < 1e-5, "{i}: {v} vs {want}");
        }
        assert!((r.iter().sum::<f64>() - 36.0).abs() < 1e-5);
    }

    const SLICE: &str = r#"
[op]
name = "strided_slice_assign_v2"
level = 2
op_type = "StridedSliceAssignV2"
[[inputs]]
name = "var"
dtypes = ["float16", "float32", "int32"]
[[inputs]]
name = "input_value"
dtypes = ["float16", "float32", "int32"]
dtype = { same_as = "var" }
[[outputs]]
name = "var_out"
dtype = { same_as = "var" }
[[attrs]]
name = "begin"
type = "list_int"
required = true
[[attrs]]
name = "end"
type = "list_int"
required = true
[[attrs]]
name = "strides"
type = "list_int"
required = true
[[attrs]]
name = "axes"
type = "list_int"
default = []
[[cases]]
name = "nkb"
shapes = [[4, 3], [2, 2]]
dtype = "int32"
attrs = { begin = [1, 0], end = [4, 2], strides = [2, 1] }
[[cases]]
name = "neg_axes"
shapes = [[3, 4], [3, 2]]
dtype = "float32"
attrs = { begin = [-2], end = [100], strides = [1], axes = [-1] }
"#;

    #[test]
    fn slice_assign_writes_the_slice_only() {
        let s = spec(SLICE);
        let var = Tensor::from_i64s(Dtype::Int32, &[4, 3], &[0; 12]);
        let val = Tensor::from_i64s(Dtype::Int32, &[2, 2], &[1, 2, 3, 4]);
        let out = &run(&s, "nkb", vec![var, val])[0];
        assert_eq!(out.to_i64s(), vec![0, 0, 0, 1, 2, 0, 0, 0, 0, 3, 4, 0]);
        // axes [-1], begin -2 -> 2, end 100 -> clamped to 4.
        let var = Tensor::from_f64s(Dtype::Float32, &[3, 4], &[0.0; 12]);
        let val = Tensor::from_f64s(Dtype::Float32, &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let out = &run(&s, "neg_axes", vec![var, val])[0];
        assert_eq!(
            out.to_f64s(),
            vec![0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0, 5.0, 6.0]
        );
    }

    #[test]
    fn slice_assign_checks_the_value_shape() {
        let text = SLICE.replace("shapes = [[4, 3], [2, 2]]", "shapes = [[4, 3], [2, 3]]");
        assert!(parse_err(&text)
            .contains("`input_value` is [2, 3] but the slice of `var` [4, 3] is [2, 2]"));
        let text = SLICE.replace("strides = [2, 1] }", "strides = [1, 2] }");
        assert!(parse_err(&text).contains("the stride of the last dim must be 1"));
    }
}
