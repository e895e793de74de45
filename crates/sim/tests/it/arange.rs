//! Arange (guide 6.2.4.8.1) and ArithProgression, its former name that
//! public kernels still call: the sequence built as the guide's algorithm
//! describes (8 values by SetValue, then Adds blocks of 8 up to 64 and of
//! 64 beyond), race-free, and a count of 0 refused with the call site.

use ascendopt_sim::launch::run_kernel;
use ascendopt_sim::trace::{InstrKind, VecOp};

use crate::kernel_lib::compile;
use crate::runtime_launch::{f32_tensor, f32s, job, tiling};

/// y[0..200) = ArithProgression(1.5, 0.25); y[200..208) = Arange(-3, 2)
/// (8 values: the SetValue head alone); the tiling's first word, when 1,
/// asks for a count of 0.
const SEQUENCE_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void sequence(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TQue<TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, 256 * sizeof(float));
  GlobalTensor<float> yg;
  yg.SetGlobalBuffer((__gm__ float*)y, 208);
  LocalTensor<float> t = q.AllocTensor<float>();
  ArithProgression(t, 1.5f, 0.25f, 200);
  Arange(t[200], -3.0f, 2.0f, 8);
  q.EnQue(t);
  t = q.DeQue<float>();
  DataCopy(yg, t, 208);
  q.FreeTensor(t);
}

extern "C" __global__ __aicore__ void empty_sequence(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TQue<TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, 256 * sizeof(float));
  LocalTensor<float> t = q.AllocTensor<float>();
  Arange(t, 0.0f, 1.0f, 0);
  q.FreeTensor(t);
}
"#;

#[test]
fn arith_progression_and_arange_build_the_sequence_on_the_vector_unit() {
    let (_d, so) = compile(SEQUENCE_KERNEL);
    let out = run_kernel(
        &job(
            &so,
            "sequence",
            vec![f32_tensor(&[0.0; 8])],
            vec![f32_tensor(&[0.0; 208])],
        ),
        &tiling(1),
    )
    .unwrap();
    let mut want: Vec<f32> = (0..200).map(|i| 1.5 + 0.25 * i as f32).collect();
    want.extend((0..8).map(|i| -3.0 + 2.0 * i as f32));
    assert_eq!(f32s(&out.outputs[0]), want);
    // 200 values: 7 Adds of 8 (to 64), 3 of 64 or less (to 200); the
    // 8-value Arange is SetValues alone.
    let adds = out
        .trace
        .blocks
        .iter()
        .flat_map(|b| b.instrs.iter())
        .filter(|i| {
            matches!(
                i.kind,
                InstrKind::Vector {
                    op: VecOp::Adds,
                    ..
                }
            )
        })
        .count();
    assert_eq!(adds, 10);
    let findings = ascendopt_sim::check::check(&out.trace);
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn a_count_of_zero_is_refused_at_the_call() {
    let (_d, so) = compile(SEQUENCE_KERNEL);
    let err = run_kernel(
        &job(
            &so,
            "empty_sequence",
            vec![f32_tensor(&[0.0; 8])],
            vec![f32_tensor(&[0.0; 8])],
        ),
        &tiling(1),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("Arange: count must be greater than 0"),
        "{err}"
    );
}
