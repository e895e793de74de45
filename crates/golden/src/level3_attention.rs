//! Builtin golden of the Level-3 attention operator:
//! flash_attention_score_with_large_head_dim.
//!
//! Semantics follow shared/ref/operators-l1-l3.md
//! ("flash_attention_score_with_large_head_dim"): per batch `b`, head `n`
//! and query row `i`, the scores s_j = scale_value * q_i . k_j over the S2
//! key rows of the head's KV group, m = max_j s_j, l = sum_j exp(s_j - m),
//! out_i = sum_j exp(s_j - m) v_j / l. The inputs are exact (float16); the
//! golden sums in f64 and rounds once to the output dtypes.

use crate::common::{float_attr, int_attr};
use ascendopt_op::golden::{Builtin, GoldenError, Reject};
use ascendopt_op::spec::Case;
use ascendopt_op::tensor::{shape_str, Tensor};
use ascendopt_op::Dtype;

/// This file's goldens.
pub(super) const TABLE: &[Builtin] = &[Builtin {
    name: "flash_attention_score_with_large_head_dim",
    infer: fa_infer,
    compute: fa_compute,
}];

/// The largest head dimension of the operator (operators-l1-l3.md: D <= 576).
const MAX_HEAD_DIM: usize = 576;

/// The longest query or key row the kernel copies (a 16-bit stride).
const MAX_ROW_STRIDE: usize = 65535;

/// The values every softmax statistic is repeated to (one 32-byte block of
/// float32 per row, as the operator writes them).
const STAT_REPEAT: usize = 8;

/// The attention's dimensions, from the case's shapes and head_num.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dims {
    b: usize,
    s1: usize,
    s2: usize,
    /// Query heads.
    n: usize,
    /// Key/value heads (n is a multiple).
    nkv: usize,
    /// Head dimension.
    d: usize,
}

fn dims(case: &Case) -> Result<Dims, Reject> {
    if case.inputs.len() != 3 || case.outputs.len() != 3 {
        return Err(Reject::new(
            "shapes",
            "the operator takes query, key, value and gives softmax_max, softmax_sum, attention_out",
        ));
    }
    let (q, k, v) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    if q.shape.len() != 3 || k.shape.len() != 3 || v.shape != k.shape {
        return Err(Reject::new(
            "shapes",
            format!(
                "query {} must be [B, S1, H] and key {} and value {} one [B, S2, Hkv] shape",
                shape_str(&q.shape),
                shape_str(&k.shape),
                shape_str(&v.shape)
            ),
        ));
    }
    if k.shape[0] != q.shape[0] {
        return Err(Reject::new(
            "shapes",
            format!(
                "query {} and key {} differ in the batch B",
                shape_str(&q.shape),
                shape_str(&k.shape)
            ),
        ));
    }
    if case.inputs.iter().any(|t| t.dtype != Dtype::Float16) {
        return Err(Reject::new("dtype", "query, key and value must be float16"));
    }
    let (b, s1, h) = (q.shape[0], q.shape[1], q.shape[2]);
    let (s2, hkv) = (k.shape[1], k.shape[2]);
    if b == 0 || s1 == 0 || s2 == 0 || h == 0 {
        return Err(Reject::new("shapes", "B, S1, S2 and H must be positive"));
    }
    let n = int_attr(case, "head_num")?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n > 0 && h % n == 0)
        .ok_or_else(|| {
            Reject::new(
                "attrs",
                format!("head_num {n} must be positive and divide H = {h}"),
            )
        })?;
    let d = h / n;
    if d > MAX_HEAD_DIM {
        return Err(Reject::new(
            "attrs",
            format!("the head dimension H / head_num = {d} exceeds {MAX_HEAD_DIM}"),
        ));
    }
    if hkv == 0 || hkv % d != 0 || n % (hkv / d) != 0 {
        return Err(Reject::new(
            "shapes",
            format!(
                "key's Hkv = {hkv} must be a multiple of the head dimension {d} whose head count divides head_num {n}"
            ),
        ));
    }
    // The kernel's GM -> L1 copies (Nd2NzParams) take a row stride of at
    // most 65535 elements.
    if h > MAX_ROW_STRIDE || hkv > MAX_ROW_STRIDE {
        return Err(Reject::new(
            "shapes",
            format!("H = {h} and Hkv = {hkv} must be at most {MAX_ROW_STRIDE}"),
        ));
    }
    if !float_attr(case, "scale_value")?.is_finite() {
        return Err(Reject::new("attrs", "scale_value must be finite"));
    }
    Ok(Dims {
        b,
        s1,
        s2,
        n,
        nkv: hkv / d,
        d,
    })
}

fn fa_infer(case: &Case) -> Result<Vec<Vec<usize>>, Reject> {
    let Dims { b, s1, n, .. } = dims(case)?;
    let stat = vec![b, n, s1, STAT_REPEAT];
    Ok(vec![stat.clone(), stat, case.inputs[0].shape.clone()])
}

fn fa_compute(case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, GoldenError> {
    let dm = dims(case)?;
    let Dims {
        b,
        s1,
        s2,
        n,
        nkv,
        d,
    } = dm;
    let scale = float_attr(case, "scale_value")?;
    let (h, hkv) = (n * d, nkv * d);
    let (q, k, v) = (
        inputs[0].to_f64s(),
        inputs[1].to_f64s(),
        inputs[2].to_f64s(),
    );
    let group = n / nkv;
    let mut mx = vec![0f64; b * n * s1 * STAT_REPEAT];
    let mut sm = vec![0f64; b * n * s1 * STAT_REPEAT];
    let mut out = vec![0f64; b * s1 * h];
    let mut s = vec![0f64; s2];
    let mut acc = vec![0f64; d];
    for bi in 0..b {
        for ni in 0..n {
            let g = ni / group;
            for i in 0..s1 {
                let qrow = &q[(bi * s1 + i) * h + ni * d..][..d];
                for (j, sj) in s.iter_mut().enumerate() {
                    let krow = &k[(bi * s2 + j) * hkv + g * d..][..d];
                    *sj = scale * qrow.iter().zip(krow).map(|(a, b)| a * b).sum::<f64>();
                }
                let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                acc.iter_mut().for_each(|a| *a = 0.0);
                let mut l = 0f64;
                for (j, sj) in s.iter().enumerate() {
                    let p = (sj - m).exp();
                    l += p;
                    let vrow = &v[(bi * s2 + j) * hkv + g * d..][..d];
                    for (a, x) in acc.iter_mut().zip(vrow) {
                        *a += p * x;
                    }
                }
                let row = ((bi * n + ni) * s1 + i) * STAT_REPEAT;
                mx[row..row + STAT_REPEAT].fill(m);
                sm[row..row + STAT_REPEAT].fill(l);
                for (o, a) in out[(bi * s1 + i) * h + ni * d..][..d].iter_mut().zip(&acc) {
                    *o = a / l;
                }
            }
        }
    }
    let stat = [b, n, s1, STAT_REPEAT];
    Ok(vec![
        Tensor::from_f64s(case.outputs[0].dtype, &stat, &mx),
        Tensor::from_f64s(case.outputs[1].dtype, &stat, &sm),
        Tensor::from_f64s(case.outputs[2].dtype, &inputs[0].shape, &out),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_op::spec::OpSpec;
    use std::path::Path;

    fn spec(shapes: &str, head_num: i64, scale: f64) -> Result<OpSpec, String> {
        OpSpec::parse(
            &format!(
                r#"
[op]
name = "flash_attention_score_with_large_head_dim"
level = 3
op_type = "FlashAttentionScoreWithLargeHeadDim"
[[inputs]]
name = "query"
dtypes = ["float16"]
[[inputs]]
name = "key"
dtypes = ["float16"]
[[inputs]]
name = "value"
dtypes = ["float16"]
[[outputs]]
name = "softmax_max"
dtype = {{ fixed = "float32" }}
[[outputs]]
name = "softmax_sum"
dtype = {{ fixed = "float32" }}
[[outputs]]
name = "attention_out"
dtype = {{ same_as = "query" }}
[[attrs]]
name = "scale_value"
type = "float"
default = 1.0
[[attrs]]
name = "head_num"
type = "int"
required = true
[[cases]]
name = "t"
shapes = {shapes}
attrs = {{ head_num = {head_num}, scale_value = {scale} }}
"#
            ),
            Path::new("t/op.toml"),
            &crate::BUILTINS,
        )
        .map_err(|e| e.to_string())
    }

    fn half(shape: &[usize], v: &[f64]) -> Tensor {
        Tensor::from_f64s(Dtype::Float16, shape, v)
    }

    #[test]
    fn attention_of_one_head_by_hand() {
        // B 1, S1 1, S2 2, H = D = 2, scale 0.5. q = (2, 0); k0 = (1, 0),
        // k1 = (0, 1): s = (1, 0), m = 1, l = 1 + e^-1; v0 = (4, 0),
        // v1 = (0, 8): out = (4, 8 e^-1) / (1 + e^-1).
        let s = spec("[[1, 1, 2], [1, 2, 2], [1, 2, 2]]", 1, 0.5).expect("spec");
        let case = &s.cases[0];
        assert_eq!(
            fa_infer(case).expect("infer"),
            [vec![1, 1, 1, 8], vec![1, 1, 1, 8], vec![1, 1, 2]]
        );
        let q = half(&[1, 1, 2], &[2.0, 0.0]);
        let k = half(&[1, 2, 2], &[1.0, 0.0, 0.0, 1.0]);
        let v = half(&[1, 2, 2], &[4.0, 0.0, 0.0, 8.0]);
        let out = fa_compute(case, &[q, k, v]).expect("compute");
        let e = (-1f64).exp();
        assert_eq!(out[0].to_f64s(), vec![1.0; 8]);
        assert_eq!(out[1].to_f64s(), vec![(1.0 + e) as f32 as f64; 8]);
        let o = out[2].to_f64s();
        let want = [4.0 / (1.0 + e), 8.0 * e / (1.0 + e)];
        for (got, w) in o.iter().zip(want) {
            assert_eq!(
                *got,
                Tensor::from_f64s(Dtype::Float16, &[1], &[w]).to_f64s()[0]
            );
        }
    }

    #[test]
    fn grouped_heads_share_their_key_and_value() {
        // N = 2 query heads of D = 1 on one KV head: S1 1, S2 2, scale 1.
        // k = (0, 0) gives equal scores, so each head's output is the mean
        // of v = (2, 6) = 4 whatever its query; max 0, sum 2.
        let s = spec("[[1, 1, 2], [1, 2, 1], [1, 2, 1]]", 2, 1.0).expect("spec");
        let case = &s.cases[0];
        let q = half(&[1, 1, 2], &[3.0, -5.0]);
        let k = half(&[1, 2, 1], &[0.0, 0.0]);
        let v = half(&[1, 2, 1], &[2.0, 6.0]);
        let out = fa_compute(case, &[q, k, v]).expect("compute");
        assert_eq!(out[0].shape, [1, 2, 1, 8]);
        assert_eq!(out[0].to_f64s(), vec![0.0; 16]);
        assert_eq!(out[1].to_f64s(), vec![2.0; 16]);
        assert_eq!(out[2].to_f64s(), [4.0, 4.0]);
    }

    #[test]
    fn bad_head_counts_are_rejected() {
        let err =
            spec("[[1, 4, 6], [1, 4, 6], [1, 4, 6]]", 4, 1.0).expect_err("4 does not divide 6");
        assert!(err.contains("must be positive and divide H = 6"), "{err}");
        // D = 2, Hkv = 4: 2 KV heads do not divide 3 query heads.
        let err = spec("[[1, 4, 6], [1, 4, 4], [1, 4, 4]]", 3, 1.0).expect_err("groups");
        assert!(err.contains("whose head count divides head_num 3"), "{err}");
        let err = spec("[[1, 4, 1154], [1, 4, 1154], [1, 4, 1154]]", 2, 1.0).expect_err("D 577");
        assert!(err.contains("577 exceeds 576"), "{err}");
        let err = spec("[[1, 1, 65536], [1, 1, 512], [1, 1, 512]]", 128, 1.0).expect_err("H");
        assert!(
            err.contains("H = 65536 and Hkv = 512 must be at most 65535"),
            "{err}"
        );
    }
}
