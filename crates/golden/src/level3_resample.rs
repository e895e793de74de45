//! Builtin goldens of the Level-3 anti-aliased resampling operators (issue
//! 27): upsample_bilinear2d_aa and upsample_bilinear2d_aa_backward.
//!
//! Semantics follow shared/ref/operators-l1-l3.md (Level 3). Per axis the
//! scale is taken in float32 as the host code receives it; the triangle
//! filter's weights and the sums are computed in f64 and rounded once to
//! the output dtype.

use crate::common::{arity, bool_attr, f32_scale, list_int};
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::Case;
use ascendopt_op::tensor::{shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "upsample_bilinear2d_aa",
        infer: aa_infer,
        compute: aa_compute,
    },
    Builtin {
        name: "upsample_bilinear2d_aa_backward",
        infer: aa_grad_infer,
        compute: aa_grad_compute,
    },
];

/// The filter of one output index: its first source index and the
/// normalised weights of the sources from there on.
#[derive(Debug, PartialEq)]
pub(crate) struct Taps {
    pub(crate) first: usize,
    pub(crate) weights: Vec<f64>,
}

/// The source step of an axis in float32: align_corners gives (in - 1) /
/// (out - 1) (0 for one output), else 1 / scale when scale > 0, else in /
/// out.
fn aa_scale(input: usize, output: usize, align_corners: bool, scale: f32) -> f32 {
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

/// The triangle (bilinear) filter of every output index of an axis: the
/// support widens with the scale when downsampling (support = max(scale,
/// 1), the argument is divided by the scale), taps run over [trunc(c -
/// support + 0.5), trunc(c + support + 0.5)) clipped to the input, with c =
/// scale (i + 0.5), and the weights are normalised to sum 1.
pub(crate) fn aa_taps(input: usize, output: usize, scale: f32) -> Vec<Taps> {
    let scale = f64::from(scale);
    let (support, inv) = if scale >= 1.0 {
        (scale, 1.0 / scale)
    } else {
        (1.0, 1.0)
    };
    (0..output)
        .map(|i| {
            let c = scale * (i as f64 + 0.5);
            let lo = ((c - support + 0.5).trunc().max(0.0)) as usize;
            let hi = ((c + support + 0.5).trunc() as usize).min(input);
            let mut weights: Vec<f64> = (lo..hi.max(lo))
                .map(|j| (1.0 - ((j as f64 - c + 0.5) * inv).abs()).max(0.0))
                .collect();
            let total: f64 = weights.iter().sum();
            if total != 0.0 {
                for w in &mut weights {
                    *w /= total;
                }
            }
            Taps { first: lo, weights }
        })
        .collect()
}

fn float_dtype(t: &Dtype, what: &str) -> Result<(), Reject> {
    if matches!(t, Dtype::Float16 | Dtype::Float32 | Dtype::Bfloat16) {
        Ok(())
    } else {
        Err(Reject::new(
            "dtype",
            format!("{what} must be float16, float32 or bfloat16"),
        ))
    }
}

/// The filters of the H and W axes for an input [.., h, w] and an output
/// [.., oh, ow]. The reference caps the downscale at 50.
fn axes(case: &Case, input: [usize; 2], output: [usize; 2]) -> Result<[Vec<Taps>; 2], Reject> {
    let ac = bool_attr(case, "align_corners")?;
    let mut out = Vec::new();
    for (a, name) in ["scales_h", "scales_w"].into_iter().enumerate() {
        let s = aa_scale(input[a], output[a], ac, f32_scale(case, name)?);
        if s > 50.0 {
            return Err(Reject::new(
                "attrs",
                format!("the {name} axis downscales by {s}, more than 50"),
            ));
        }
        out.push(aa_taps(input[a], output[a], s));
    }
    let w = out.pop().unwrap_or_default();
    let h = out.pop().unwrap_or_default();
    Ok([h, w])
}

fn aa_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let x = &case.inputs[0];
    float_dtype(&x.dtype, "x")?;
    let size = list_int(case, "output_size", 2)?;
    if x.shape.len() != 4 || x.shape.contains(&0) {
        return Err(Reject::new(
            "shapes",
            format!("x {} must be [N, C, H, W], none 0", shape_str(&x.shape)),
        ));
    }
    axes(case, [x.shape[2], x.shape[3]], [size[0], size[1]])?;
    Ok(vec![vec![x.shape[0], x.shape[1], size[0], size[1]]])
}

/// out[p, i, j] = sum over taps of wh[i][a] ww[j][b] x[p, first_h(i) + a,
/// first_w(j) + b].
fn aa_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let shape = aa_infer(case)?.remove(0);
    let x = &inputs[0];
    let (h, w, oh, ow) = (x.shape[2], x.shape[3], shape[2], shape[3]);
    let [th, tw] = axes(case, [h, w], [oh, ow])?;
    let xv = x.to_f64s();
    let planes = shape[0] * shape[1];
    let mut out = vec![0f64; planes * oh * ow];
    for p in 0..planes {
        let plane = &xv[p * h * w..(p + 1) * h * w];
        for (i, fh) in th.iter().enumerate() {
            for (j, fw) in tw.iter().enumerate() {
                let mut s = 0.0;
                for (a, &wa) in fh.weights.iter().enumerate() {
                    let row = &plane[(fh.first + a) * w..];
                    for (b, &wb) in fw.weights.iter().enumerate() {
                        s += wa * wb * row[fw.first + b];
                    }
                }
                out[(p * oh + i) * ow + j] = s;
            }
        }
    }
    Ok(vec![Tensor::from_f64s(case.outputs[0].dtype, &shape, &out)])
}

fn aa_grad_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 1, 1)?;
    let g = &case.inputs[0];
    float_dtype(&g.dtype, "grad_output")?;
    let out = list_int(case, "output_size", 2)?;
    let inp = list_int(case, "input_size", 4)?;
    if g.shape.len() != 4 || g.shape[2..] != out[..] || inp[..2] != g.shape[..2] {
        return Err(Reject::new(
            "shapes",
            format!(
                "grad_output {} must be [N, C] + output_size {out:?}, with N, C of input_size {inp:?}",
                shape_str(&g.shape)
            ),
        ));
    }
    axes(case, [inp[2], inp[3]], [out[0], out[1]])?;
    Ok(vec![inp])
}

/// grad_input[p, h, w] = sum over (i, j) of wh[i](h) ww[j](w) grad[p, i, j]:
/// every grad_output element scatters into its filter's taps.
fn aa_grad_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let shape = aa_grad_infer(case)?.remove(0);
    let g = &inputs[0];
    let (h, w, oh, ow) = (shape[2], shape[3], g.shape[2], g.shape[3]);
    let [th, tw] = axes(case, [h, w], [oh, ow])?;
    let gv = g.to_f64s();
    let planes = shape[0] * shape[1];
    let mut sums = vec![0f64; planes * h * w];
    for p in 0..planes {
        for (i, fh) in th.iter().enumerate() {
            for (j, fw) in tw.iter().enumerate() {
                let v = gv[(p * oh + i) * ow + j];
                for (a, &wa) in fh.weights.iter().enumerate() {
                    let row = (p * h + fh.first + a) * w;
                    for (b, &wb) in fw.weights.iter().enumerate() {
                        sums[row + fw.first + b] += wa * wb * v;
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

    const AA_SPEC: &str = r#"
[op]
name = "upsample_bilinear2d_aa"
level = 3
op_type = "UpsampleBilinear2dAA"
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
name = "co"
shapes = [[1, 1, 4, 2]]
dtype = "float32"
attrs = { output_size = [8, 4], align_corners = true }
[[cases]]
name = "down"
shapes = [[1, 1, 1, 4]]
dtype = "float32"
attrs = { output_size = [1, 2] }
"#;

    const AA_GRAD_SPEC: &str = r#"
[op]
name = "upsample_bilinear2d_aa_backward"
level = 3
op_type = "UpsampleBilinear2dAABackward"
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
name = "co"
shapes = [[1, 1, 4, 2]]
dtype = "float32"
attrs = { output_size = [4, 2], input_size = [1, 1, 8, 4], align_corners = true }
"#;

    #[test]
    fn aa_taps_of_a_2x_downscale_are_a_widened_triangle() {
        // 4 -> 2: scale 2, support 2, inv 1/2. Output 0: c = 1, taps over
        // [trunc(-0.5), trunc(3.5)) = [0, 3): |j - 0.5| / 2 -> 0.75, 0.75,
        // 0.25, normalised by 1.75: 3/7, 3/7, 1/7.
        let t = aa_taps(4, 2, 2.0);
        assert_eq!(t[0].first, 0);
        let want = [3.0 / 7.0, 3.0 / 7.0, 1.0 / 7.0];
        assert_eq!(t[0].weights.len(), 3);
        for (g, w) in t[0].weights.iter().zip(want) {
            assert!((g - w).abs() < 1e-15, "{g} != {w}");
        }
        // Output 1: c = 3, taps over [trunc(1.5), trunc(5.5)) clipped to
        // [1, 4): |j - 2.5| / 2 -> 0.25, 0.75, 0.75, the mirror image.
        assert_eq!(t[1].first, 1);
        let want = [1.0 / 7.0, 3.0 / 7.0, 3.0 / 7.0];
        for (g, w) in t[1].weights.iter().zip(want) {
            assert!((g - w).abs() < 1e-15, "{g} != {w}");
        }
    }

    #[test]
    fn aa_upsampling_is_bilinear_with_half_pixel_centres() {
        // 2 -> 4 without align_corners: scale 1/2, support 1, inv 1.
        // Output 1: c = 0.75, taps [trunc(0.25), trunc(2.25)) = [0, 2):
        // 1 - |j - 0.25| -> 0.75, 0.25 (torch's bilinear: src 0.25).
        let t = aa_taps(2, 4, 0.5);
        assert_eq!(t[1].first, 0);
        assert_eq!(t[1].weights, vec![0.75, 0.25]);
        // Output 0: c = 0.25, taps [0, 1): only index 0, weight 1 (the
        // clamped border).
        assert_eq!(
            t[0],
            Taps {
                first: 0,
                weights: vec![1.0]
            }
        );
    }

    #[test]
    fn aa_forward_of_the_reference_example() {
        let s = spec(AA_SPEC);
        // [1, 1, 4, 2] = arange(8) -> [8, 4] with align_corners: H scale
        // 3/7, W scale 1/3. Row 0 (c = 3/14, taps [0, 1)): only x row 0.
        // W output 0: c = 1/6, taps [0, 1): x[0][0] = 0. W output 1: c =
        // 1/2, taps [0, 2): 1 - |j| -> 1, 0: x[0][0] = 0. W output 2: c =
        // 5/6, taps [0, 2): 1 - |j - 1/3| -> 2/3, 1/3: 1/3. W output 3: c =
        // 7/6, taps [0, 2): 1 - |j - 2/3| -> 1/3, 2/3: 2/3.
        let x = Tensor::from_f64s(
            Dtype::Float32,
            &[1, 1, 4, 2],
            &(0..8).map(f64::from).collect::<Vec<_>>(),
        );
        let out = run(&s, "co", vec![x]);
        assert_eq!(out[0].shape, vec![1, 1, 8, 4]);
        let row0: Vec<f64> = (0..4).map(|i| out[0].get_f64(i)).collect();
        let want = [0.0, 0.0, 1.0 / 3.0, 2.0 / 3.0];
        for (g, w) in row0.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{row0:?}");
        }
    }

    #[test]
    fn aa_forward_downscale_averages_with_triangle_weights() {
        let s = spec(AA_SPEC);
        // W 4 -> 2 (the taps of the first test): y0 = (3 x0 + 3 x1 + x2) / 7,
        // y1 = (x1 + 3 x2 + 3 x3) / 7; H 1 -> 1 is the identity filter.
        let x = Tensor::from_f64s(Dtype::Float32, &[1, 1, 1, 4], &[7.0, 14.0, 21.0, 0.0]);
        let out = run(&s, "down", vec![x]);
        assert!((out[0].get_f64(0) - 12.0).abs() < 1e-5);
        assert!((out[0].get_f64(1) - 11.0).abs() < 1e-5);
    }

    #[test]
    fn aa_backward_scatters_with_the_forward_weights() {
        let s = spec(AA_GRAD_SPEC);
        // The reference example: input [1, 1, 8, 4] -> [4, 2] with
        // align_corners, grad = arange(8). H: scale 7/3, support 7/3, inv
        // 3/7; W: scale 3, support 3, inv 1/3. The golden must be the
        // adjoint of the forward: <forward(x), g> = <x, backward(g)>.
        let g = Tensor::from_f64s(
            Dtype::Float32,
            &[1, 1, 4, 2],
            &(0..8).map(f64::from).collect::<Vec<_>>(),
        );
        let out = run(&s, "co", vec![g]);
        assert_eq!(out[0].shape, vec![1, 1, 8, 4]);
        let th = aa_taps(8, 4, 7.0 / 3.0);
        let tw = aa_taps(4, 2, 3.0);
        // x = e(h, w) for every input position: forward(x)[i][j] = wh[i](h)
        // ww[j](w), so backward(g)[h][w] = sum of those times g[i][j].
        for h in 0..8usize {
            for w in 0..4usize {
                let mut want = 0.0;
                for (i, fh) in th.iter().enumerate() {
                    for (j, fw) in tw.iter().enumerate() {
                        let a = h.checked_sub(fh.first).and_then(|k| fh.weights.get(k));
                        let b = w.checked_sub(fw.first).and_then(|k| fw.weights.get(k));
                        if let (Some(a), Some(b)) = (a, b) {
                            want += a * b * (i * 2 + j) as f64;
                        }
                    }
                }
                let got = out[0].get_f64(h * 4 + w);
                assert!((got - want).abs() < 1e-5, "({h}, {w}): {got} != {want}");
            }
        }
        // By hand: H output 0 (c = 7/6, support 7/3) has taps [0, 4) with
        // 1 - |j - 2/3| 3/7 -> 5/7, 6/7, 3/7, 0, normalised 5/14 at h = 0;
        // W outputs 0 (c = 3/2, taps [0, 4): 1/4, 3/8, 1/4, 1/8) and 1 (c =
        // 9/2, taps [2, 4): 1/3, 2/3) reach w = 3 with 1/8 and 2/3. Only H
        // output 0 reaches h = 0: 5/14 (1/8 * 0 + 2/3 * 1) = 5/21.
        assert!((out[0].get_f64(3) - 5.0 / 21.0).abs() < 1e-6);
        // Every output row's weights sum to 1, so the gradient keeps the
        // total: sum of grad_input = sum of grad = 28.
        let total: f64 = (0..32).map(|i| out[0].get_f64(i)).sum();
        assert!((total - 28.0).abs() < 1e-4, "{total}");
    }

    #[test]
    fn the_aa_packages_load_and_their_small_cases_compute() {
        use ascendopt_op::compare::{compare, poisoned};
        use ascendopt_op::golden::output_shapes;
        use ascendopt_op::{builtin_ops_dir, gen_inputs, OpPackage};
        for (name, op_type) in [
            ("upsample_bilinear2d_aa", "UpsampleBilinear2dAA"),
            (
                "upsample_bilinear2d_aa_backward",
                "UpsampleBilinear2dAABackward",
            ),
        ] {
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
                if c.input_elements() > 70_000 {
                    continue;
                }
                let inputs = gen_inputs(c, 1);
                let out = p.golden(c, &inputs).unwrap_or_else(|e| panic!("{e}"));
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
