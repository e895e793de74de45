//! Builtin goldens of the Level-3 cube operators added with the cube
//! path's second round (issue 27): complex_mat_mul.
//!
//! Semantics follow shared/ref/operators-l1-l3.md (Level 3). Products sum
//! in f64 from the exact inputs and round once to float32.

use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::Case;
use ascendopt_op::tensor::{shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[Builtin {
    name: "complex_mat_mul",
    infer: complex_mat_mul_infer,
    compute: complex_mat_mul_compute,
}];

// ---- complex_mat_mul: z = x @ y (+ bias), complex64 -------------------------

fn complex_mat_mul_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    if case.omitted.iter().any(|o| o != "bias") {
        return Err(Reject::new("omit", "only `bias` may be omitted"));
    }
    let (x, y) = (&case.inputs[0], &case.inputs[1]);
    let r = x.shape.len();
    if r < 2
        || y.shape.len() != r
        || x.shape[..r - 2] != y.shape[..r - 2]
        || x.shape[r - 1] != y.shape[r - 2]
    {
        return Err(Reject::new(
            "shapes",
            format!(
                "`x` {} and `y` {} must be [..., M, K] and [..., K, N] with equal batch dimensions",
                shape_str(&x.shape),
                shape_str(&y.shape)
            ),
        ));
    }
    let mut z = x.shape.clone();
    z[r - 1] = y.shape[r - 1];
    if let Some(bias) = case.inputs.get(2) {
        if bias.shape != z {
            return Err(Reject::new(
                "shapes",
                format!(
                    "`bias` {} must have z's shape {}",
                    shape_str(&bias.shape),
                    shape_str(&z)
                ),
            ));
        }
    }
    if case.inputs.iter().any(|t| t.dtype != Dtype::Complex64) {
        return Err(Reject::new("dtype", "x, y and bias must be complex64"));
    }
    // The kernel's Nd2NzParams hold a row of 2K or 2N floats in 16 bits.
    if 2 * x.shape[r - 1] > 65535 || 2 * y.shape[r - 1] > 65535 {
        return Err(Reject::new("shapes", "K and N must be at most 32767"));
    }
    Ok(vec![z])
}

fn complex_mat_mul_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (x, y) = (&inputs[0], &inputs[1]);
    let r = x.shape.len();
    let (m, k, n) = (x.shape[r - 2], x.shape[r - 1], y.shape[r - 1]);
    let batch: usize = x.shape[..r - 2].iter().product();
    let parts = |t: &Tensor| -> Result<Vec<f64>, Reject> {
        t.complex_parts()
            .map(|p| p.to_f64s())
            .ok_or_else(|| Reject::new("dtype", "a tensor is not complex"))
    };
    let xv = parts(x)?;
    let yv = parts(y)?;
    let mut z = match inputs.get(2) {
        Some(bias) => parts(bias)?,
        None => vec![0f64; batch * m * n * 2],
    };
    for b in 0..batch {
        let (xb, yb) = (&xv[b * m * k * 2..], &yv[b * k * n * 2..]);
        let zb = &mut z[b * m * n * 2..(b + 1) * m * n * 2];
        for i in 0..m {
            let row = &mut zb[i * n * 2..(i + 1) * n * 2];
            for kk in 0..k {
                let (xr, xi) = (xb[(i * k + kk) * 2], xb[(i * k + kk) * 2 + 1]);
                for (o, yp) in row
                    .chunks_exact_mut(2)
                    .zip(yb[kk * n * 2..(kk + 1) * n * 2].chunks_exact(2))
                {
                    o[0] += xr * yp[0] - xi * yp[1];
                    o[1] += xr * yp[1] + xi * yp[0];
                }
            }
        }
    }
    let mut shape = x.shape.clone();
    shape[r - 1] = n;
    let mut part_shape = shape.clone();
    part_shape.push(2);
    let out = Tensor::from_f64s(Dtype::Float32, &part_shape, &z);
    let out = Tensor::from_complex_parts(&out)
        .ok_or_else(|| Reject::new("dtype", "no complex type of float32 parts"))?;
    debug_assert_eq!(out.dtype, case.outputs[0].dtype);
    Ok(vec![out])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_op::spec::OpSpec;
    use std::path::Path;

    fn spec(shapes: &str, omit: &str) -> OpSpec {
        OpSpec::parse(
            &format!(
                r#"
[op]
name = "complex_mat_mul"
level = 3
op_type = "ComplexMatMul"
[[inputs]]
name = "x"
dtypes = ["complex64"]
[[inputs]]
name = "y"
dtypes = ["complex64"]
[[inputs]]
name = "bias"
dtypes = ["complex64"]
optional = true
[[outputs]]
name = "z"
dtype = {{ same_as = "x" }}
[[cases]]
name = "t"
shapes = {shapes}
omit = {omit}
"#
            ),
            Path::new("t/op.toml"),
            &crate::BUILTINS,
        )
        .expect("spec")
    }

    fn complex(shape: &[usize], v: &[(f64, f64)]) -> Tensor {
        let flat: Vec<f64> = v.iter().flat_map(|&(a, b)| [a, b]).collect();
        let mut s = shape.to_vec();
        s.push(2);
        Tensor::from_complex_parts(&Tensor::from_f64s(Dtype::Float32, &s, &flat)).expect("complex")
    }

    #[test]
    fn complex_mat_mul_multiplies_complex_numbers() {
        // Batch 2 of [1, 2] x [2, 1]. Batch 0: (1+2i)(3+4i) + (0+1i)(0+1i)
        // = (3 - 8 + 10i) + (-1) = -6 + 10i. Batch 1: (2)(1-i) + (-1i)(2i)
        // = 2 - 2i + 2 = 4 - 2i.
        let s = spec("[[2, 1, 2], [2, 2, 1]]", r#"["bias"]"#);
        let case = &s.cases[0];
        assert_eq!(complex_mat_mul_infer(case).expect("infer"), [vec![2, 1, 1]]);
        let x = complex(
            &[2, 1, 2],
            &[(1.0, 2.0), (0.0, 1.0), (2.0, 0.0), (0.0, -1.0)],
        );
        let y = complex(
            &[2, 2, 1],
            &[(3.0, 4.0), (0.0, 1.0), (1.0, -1.0), (0.0, 2.0)],
        );
        let z = complex_mat_mul_compute(case, &[x, y]).expect("compute");
        let p = z[0].complex_parts().expect("parts").to_f64s();
        assert_eq!(p, [-6.0, 10.0, 4.0, -2.0]);
    }

    #[test]
    fn complex_mat_mul_adds_the_bias_and_checks_shapes() {
        // [1, 1] x [1, 2] + bias: (1+i)(1, i) = (1+i, -1+i); + (10, 20i).
        let s = spec("[[1, 1], [1, 2], [1, 2]]", "[]");
        let case = &s.cases[0];
        let x = complex(&[1, 1], &[(1.0, 1.0)]);
        let y = complex(&[1, 2], &[(1.0, 0.0), (0.0, 1.0)]);
        let bias = complex(&[1, 2], &[(10.0, 0.0), (0.0, 20.0)]);
        let z = complex_mat_mul_compute(case, &[x, y, bias]).expect("compute");
        let p = z[0].complex_parts().expect("parts").to_f64s();
        assert_eq!(p, [11.0, 1.0, -1.0, 21.0]);
        let bad = OpSpec::parse(
            r#"
[op]
name = "complex_mat_mul"
level = 3
op_type = "ComplexMatMul"
[[inputs]]
name = "x"
dtypes = ["complex64"]
[[inputs]]
name = "y"
dtypes = ["complex64"]
[[outputs]]
name = "z"
dtype = { same_as = "x" }
[[cases]]
name = "t"
shapes = [[2, 3, 4], [3, 4, 5]]
"#,
            Path::new("t/op.toml"),
            &crate::BUILTINS,
        );
        let err = bad.expect_err("batch dims differ").to_string();
        assert!(err.contains("equal batch dimensions"), "{err}");
    }
}
