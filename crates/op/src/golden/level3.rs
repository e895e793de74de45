//! Builtin goldens of the Level-3 operators (issue 27):
//! matmul_api_constant.
//!
//! Semantics follow shared/ref/operators-l1-l3.md (Level 3). The matrix
//! products sum in f64 from the exact inputs and round once to the output
//! dtype (the cube sums float32; the op.toml cases keep every sum exact or
//! say which tolerance covers the difference).

use super::common::arity;
use super::{Builtin, Reject};
use crate::spec::Case;
use crate::tensor::{shape_str, Tensor};
use crate::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[Builtin {
    name: "matmul_api_constant",
    infer: matmul_bias_infer,
    compute: matmul_bias_compute,
}];

// ---- matmul_api_constant: c = a @ b + bias ---------------------------------

fn matmul_bias_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    arity(case, 3, 1)?;
    let (a, b, bias) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    if a.shape.len() != 2 || b.shape.len() != 2 || a.shape[1] != b.shape[0] {
        return Err(Reject::new(
            "shapes",
            format!(
                "`a` {} and `b` {} must be [M, K] and [K, N]",
                shape_str(&a.shape),
                shape_str(&b.shape)
            ),
        ));
    }
    if bias.shape != [b.shape[1]] {
        return Err(Reject::new(
            "shapes",
            format!(
                "`bias` {} must be [N] = [{}]",
                shape_str(&bias.shape),
                b.shape[1]
            ),
        ));
    }
    // The kernel copies the bias row to the cube in 32-byte blocks.
    if b.shape[1] % 8 != 0 {
        return Err(Reject::new(
            "shapes",
            format!("N = {} must be a multiple of 8 (the float bias row moves in 32-byte blocks)", b.shape[1]),
        ));
    }
    if a.dtype != Dtype::Float16 || b.dtype != Dtype::Float16 || bias.dtype != Dtype::Float32 {
        return Err(Reject::new(
            "dtype",
            "a and b must be float16 and bias float32",
        ));
    }
    Ok(vec![vec![a.shape[0], b.shape[1]]])
}

fn matmul_bias_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    let (a, b, bias) = (&inputs[0], &inputs[1], &inputs[2]);
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    let av = a.to_f64s();
    let bv = b.to_f64s();
    let biasv = bias.to_f64s();
    let mut out = vec![0f64; m * n];
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        row.copy_from_slice(&biasv);
        for kk in 0..k {
            let x = av[i * k + kk];
            let brow = &bv[kk * n..(kk + 1) * n];
            for (o, &y) in row.iter_mut().zip(brow) {
                *o += x * y;
            }
        }
    }
    Ok(vec![Tensor::from_f64s(case.outputs[0].dtype, &[m, n], &out)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::OpSpec;
    use std::path::Path;

    #[test]
    fn matmul_api_constant_adds_the_bias_to_every_row() {
        let spec = OpSpec::parse(
            r#"
[op]
name = "matmul_api_constant"
level = 3
op_type = "MatmulApiConstant"
[[inputs]]
name = "a"
dtypes = ["float16"]
[[inputs]]
name = "b"
dtypes = ["float16"]
[[inputs]]
name = "bias"
dtypes = ["float32"]
[[outputs]]
name = "c"
dtype = { fixed = "float32" }
[[cases]]
name = "t"
shapes = [[2, 3], [3, 8], [8]]
"#,
            Path::new("t/op.toml"),
        )
        .expect("spec");
        let case = &spec.cases[0];
        let a = Tensor::from_f64s(Dtype::Float16, &[2, 3], &[1.0, 2.0, 3.0, -1.0, 0.5, 2.0]);
        let b = Tensor::from_f64s(Dtype::Float16, &[3, 8], &(0..24).map(f64::from).collect::<Vec<_>>());
        let bias = Tensor::from_f64s(Dtype::Float32, &[8], &[10.0; 8]);
        let c = matmul_bias_compute(case, &[a, b, bias]).expect("compute");
        // Row 0, column 0: 1*0 + 2*8 + 3*16 + 10 = 74; row 1, column 7:
        // -7 + 0.5*15 + 2*23 + 10 = 56.5.
        assert_eq!(c[0].get_f64(0), 74.0);
        assert_eq!(c[0].get_f64(15), 56.5);
        let bad = matmul_bias_infer(case);
        assert!(bad.is_ok());
    }
}
