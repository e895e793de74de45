//! Builtin goldens of the Level-3 operators (issue 27):
//! matmul_api_constant, matmul_all_reduce.
//!
//! Semantics follow shared/ref/operators-l1-l3.md (Level 3). The matrix
//! products sum in f64 from the exact inputs and round once to the output
//! dtype (the cube sums float32; the op.toml cases keep every sum exact or
//! say which tolerance covers the difference).

use crate::common::arity;
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::Case;
use ascendopt_op::tensor::{shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "matmul_api_constant",
        infer: matmul_bias_infer,
        compute: matmul_bias_compute,
    },
    Builtin {
        name: "matmul_all_reduce",
        infer: matmul_all_reduce_infer,
        compute: matmul_all_reduce_compute,
    },
];

/// C (m x n) = A (m x k) B (k x n) in f64; `a_at(i, kk)`, `b_at(kk, j)`
/// read the operands.
fn product(
    (m, k, n): (usize, usize, usize),
    a_at: impl Fn(usize, usize) -> f64,
    b_at: impl Fn(usize, usize) -> f64,
) -> Vec<f64> {
    let mut out = vec![0f64; m * n];
    // B as k x n rows once, so the inner loop runs over a row.
    let b: Vec<f64> = (0..k * n).map(|x| b_at(x / n, x % n)).collect();
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        for kk in 0..k {
            let x = a_at(i, kk);
            for (o, &y) in row.iter_mut().zip(&b[kk * n..(kk + 1) * n]) {
                *o += x * y;
            }
        }
    }
    out
}

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
            format!(
                "N = {} must be a multiple of 8 (the float bias row moves in 32-byte blocks)",
                b.shape[1]
            ),
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

fn matmul_bias_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (a, b, bias) = (&inputs[0], &inputs[1], &inputs[2]);
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    let av = a.to_f64s();
    let bv = b.to_f64s();
    let biasv = bias.to_f64s();
    let mut out = product((m, k, n), |i, kk| av[i * k + kk], |kk, j| bv[kk * n + j]);
    for (x, i) in out.iter_mut().zip(0..) {
        *x += biasv[i % n];
    }
    Ok(vec![Tensor::from_f64s(
        case.outputs[0].dtype,
        &[m, n],
        &out,
    )])
}

// ---- matmul_all_reduce: y = AllReduce_sum(x1 @ x2), one rank ---------------

fn bool_attr(case: &Case, name: &str) -> bool {
    matches!(
        case.attr(name),
        Some(ascendopt_op::spec::AttrValue::Bool(true))
    )
}

fn matmul_all_reduce_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    if !case.omitted.is_empty() && case.omitted.iter().any(|o| o != "bias") {
        return Err(Reject::new("omit", "only `bias` may be omitted"));
    }
    if case.inputs.len() != 2 {
        return Err(Reject::new(
            "omit",
            "the bias (ignored by the operator's baseline) is not supported: omit it",
        ));
    }
    let (a, b) = (&case.inputs[0], &case.inputs[1]);
    if a.shape.len() != 2 || b.shape.len() != 2 {
        return Err(Reject::new("shapes", "x1 and x2 must be matrices"));
    }
    let (ta, tb) = (bool_attr(case, "is_trans_a"), bool_attr(case, "is_trans_b"));
    let (m, k) = if ta {
        (a.shape[1], a.shape[0])
    } else {
        (a.shape[0], a.shape[1])
    };
    let (kb, n) = if tb {
        (b.shape[1], b.shape[0])
    } else {
        (b.shape[0], b.shape[1])
    };
    if k != kb {
        return Err(Reject::new(
            "shapes",
            format!(
                "x1 {} and x2 {} do not chain (K {k} and {kb})",
                shape_str(&a.shape),
                shape_str(&b.shape)
            ),
        ));
    }
    if a.dtype != Dtype::Float16 || b.dtype != Dtype::Float16 {
        return Err(Reject::new("dtype", "x1 and x2 must be float16"));
    }
    match case.attr("reduce_op") {
        Some(ascendopt_op::spec::AttrValue::Str(s)) if s != "sum" => {
            return Err(Reject::new("attrs", "reduce_op must be \"sum\""))
        }
        _ => {}
    }
    Ok(vec![vec![m, n]])
}

fn matmul_all_reduce_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let (a, b) = (&inputs[0], &inputs[1]);
    let (ta, tb) = (bool_attr(case, "is_trans_a"), bool_attr(case, "is_trans_b"));
    let (m, k) = if ta {
        (a.shape[1], a.shape[0])
    } else {
        (a.shape[0], a.shape[1])
    };
    let n = if tb { b.shape[0] } else { b.shape[1] };
    let av = a.to_f64s();
    let bv = b.to_f64s();
    let y = product(
        (m, k, n),
        |i, kk| if ta { av[kk * m + i] } else { av[i * k + kk] },
        |kk, j| if tb { bv[j * k + kk] } else { bv[kk * n + j] },
    );
    // One rank: the all-reduce of this card's product is the product.
    Ok(vec![Tensor::from_f64s(case.outputs[0].dtype, &[m, n], &y)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_op::spec::OpSpec;
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
            &crate::BUILTINS,
        )
        .expect("spec");
        let case = &spec.cases[0];
        let a = Tensor::from_f64s(Dtype::Float16, &[2, 3], &[1.0, 2.0, 3.0, -1.0, 0.5, 2.0]);
        let b = Tensor::from_f64s(
            Dtype::Float16,
            &[3, 8],
            &(0..24).map(f64::from).collect::<Vec<_>>(),
        );
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
