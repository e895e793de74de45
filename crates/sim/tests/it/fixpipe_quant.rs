//! Fixpipe's quantisation end to end (guide 6.2.3.2.1.12, table 6-197): an
//! int8 16 x 32 x 32 product in CO1 (int32) leaves through DEQF16 /
//! VDEQF16 (to half) and REQ8 / VREQ8 (to int8, with offsets), with and
//! without ReLU. Expected values are computed here from the guide's
//! formula (scale with a 10-bit mantissa, offset, round to nearest even,
//! saturation), on small integers.

use ascendopt_op::Dtype;
use ascendopt_sim::launch::{
    run_kernel, JobTensor, LaunchFailure, LaunchJob, LaunchOutput, TilingInfo,
};
use ascendopt_sim::timing::HwProfile;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const KERNELS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

// C (16 x 32, int32) = A (16 x 32 int8) x B (32 x 32 int8, given as B^T),
// then Fixpipe to y with MODE. Tiling: int32 [deqScalar low, high]; q:
// 32 uint64 per-channel parameters. NO_WS: a per-channel mode without the
// cbufWorkspace.
template <class OUT, QuantMode_t MODE, bool RELU, bool NO_WS = false>
__aicore__ inline void QuantMm(GM_ADDR a, GM_ADDR b, GM_ADDR q, GM_ADDR y, GM_ADDR tiling) {
  constexpr uint32_t m = 16, n = 32, k = 32;
  GlobalTensor<int32_t> t;
  t.SetGlobalBuffer((__gm__ int32_t*)tiling, 2);
  GlobalTensor<int8_t> aGm, bGm;
  GlobalTensor<uint64_t> qGm;
  GlobalTensor<OUT> yGm;
  aGm.SetGlobalBuffer((__gm__ int8_t*)a, m * k);
  bGm.SetGlobalBuffer((__gm__ int8_t*)b, k * n);
  qGm.SetGlobalBuffer((__gm__ uint64_t*)q, n);
  yGm.SetGlobalBuffer((__gm__ OUT*)y, m * n);
  TPipe pipe;
  TQue<TPosition::A1, 1> qA1, qQ;
  TQue<TPosition::B1, 1> qB1;
  TQue<TPosition::A2, 1> qA2;
  TQue<TPosition::B2, 1> qB2;
  TQue<TPosition::CO1, 1> qC;
  pipe.InitBuffer(qA1, 1, m * k);
  pipe.InitBuffer(qQ, 1, n * sizeof(uint64_t));
  pipe.InitBuffer(qB1, 1, k * n);
  pipe.InitBuffer(qA2, 1, m * k);
  pipe.InitBuffer(qB2, 1, k * n);
  pipe.InitBuffer(qC, 1, m * n * sizeof(int32_t));
  LocalTensor<int8_t> a1 = qA1.AllocTensor<int8_t>();
  DataCopy(a1, aGm, Nd2NzParams(1, m, k, 0, k, m, 1, 0));
  qA1.EnQue(a1);
  LocalTensor<int8_t> b1 = qB1.AllocTensor<int8_t>();
  DataCopy(b1, bGm, Nd2NzParams(1, n, k, 0, k, n, 1, 0));
  qB1.EnQue(b1);
  LocalTensor<uint64_t> ql = qQ.AllocTensor<uint64_t>();
  DataCopy(ql, qGm, n);
  qQ.EnQue(ql);
  a1 = qA1.DeQue<int8_t>();
  b1 = qB1.DeQue<int8_t>();
  LocalTensor<int8_t> a2 = qA2.AllocTensor<int8_t>();
  LoadData(a2, a1, LoadData2DParams(0, 1, 1, 0, 0, false, 0));
  qA2.EnQue(a2);
  LocalTensor<int8_t> b2 = qB2.AllocTensor<int8_t>();
  LoadData(b2, b1, LoadData2DParams(0, 2, 1, 0, 0, false, 0));
  qB2.EnQue(b2);
  a2 = qA2.DeQue<int8_t>();
  b2 = qB2.DeQue<int8_t>();
  LocalTensor<int32_t> c1 = qC.AllocTensor<int32_t>();
  Mmad(c1, a2, b2, MmadParams(m, n, k));
  qC.EnQue(c1);
  c1 = qC.DeQue<int32_t>();
  FixpipeParamsV220 fp(n, m, m, n, RELU);
  fp.quantPre = MODE;
  fp.deqScalar = (uint64_t)(uint32_t)t.GetValue(0) | ((uint64_t)(uint32_t)t.GetValue(1) << 32);
  ql = qQ.DeQue<uint64_t>();
  if (MODE == QuantMode_t::VDEQF16 || MODE == QuantMode_t::VREQ8) {
    if (NO_WS) {
      Fixpipe(yGm, c1, fp);  // LINE_NO_WS
    } else {
      Fixpipe(yGm, c1, ql, fp);
    }
  } else {
    Fixpipe(yGm, c1, fp);
  }
  qQ.FreeTensor(ql);
  qA2.FreeTensor(a2);
  qB2.FreeTensor(b2);
  qA1.FreeTensor(a1);
  qB1.FreeTensor(b1);
  qC.FreeTensor(c1);
}
#define QMM(name, OUT, MODE, RELU, NO_WS)                                                              \
  extern "C" __global__ __aicore__ void name(GM_ADDR a, GM_ADDR b, GM_ADDR q, GM_ADDR y, GM_ADDR ws, \
                                             GM_ADDR t) {                                           \
    QuantMm<OUT, QuantMode_t::MODE, RELU, NO_WS>(a, b, q, y, t);                                    \
  }
QMM(deq, half, DEQF16, false, false)
QMM(deq_relu, half, DEQF16, true, false)
QMM(vdeq, half, VDEQF16, false, false)
QMM(req8, int8_t, REQ8, false, false)
QMM(req8_relu, int8_t, REQ8, true, false)
QMM(vreq8, int8_t, VREQ8, false, false)
QMM(vdeq_no_ws, half, VDEQF16, false, true)
"#;

fn kernels() -> &'static Path {
    static LIB: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, so) = LIB.get_or_init(|| crate::kernel_lib::compile(KERNELS));
    so
}

const M: usize = 16;
const N: usize = 32;
const K: usize = 32;

fn launch(name: &str, q: &[u64], scalar: u64, out: Dtype) -> Result<LaunchOutput, LaunchFailure> {
    let hw = HwProfile::builtin("ascend910b2").unwrap();
    let (a, bt) = operands();
    let bytes = |v: &[i8]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
    let job = LaunchJob {
        host_lib: PathBuf::new(),
        kernel_lib: kernels().to_path_buf(),
        kernel_name: name.into(),
        op_type: None,
        inputs: vec![
            JobTensor {
                dtype: Dtype::Int8,
                shape: vec![(M * K) as i64],
                data: bytes(&a),
            },
            JobTensor {
                dtype: Dtype::Int8,
                shape: vec![(N * K) as i64],
                data: bytes(&bt),
            },
            JobTensor {
                dtype: Dtype::Uint64,
                shape: vec![N as i64],
                data: q.iter().flat_map(|v| v.to_le_bytes()).collect(),
            },
        ],
        outputs: vec![JobTensor {
            dtype: out,
            shape: vec![(M * N) as i64],
            data: vec![0xff; M * N * out.size()],
        }],
        attrs: vec![],
        platform: ascendopt_sim::launch::platform_of(&hw),
        seed: 5,
        max_instrs_per_block: 1_000_000,
        knobs: Vec::new(),
        check_in_worker: false,
        tiling_only: false,
        layout: None,
        describe: false,
    };
    let tiling = TilingInfo {
        block_dim: 1,
        tiling_key: 0,
        data: [scalar as u32, (scalar >> 32) as u32]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        workspace: 0,
        output_init: Vec::new(),
    };
    run_kernel(&job, &tiling)
}

/// A (16 x 32) and B^T (32 x 32): small integers, so C reaches beyond the
/// int8 range (saturation) and has both signs.
fn operands() -> (Vec<i8>, Vec<i8>) {
    let a = (0..M * K)
        .map(|i| ((i * i * 3 + i) % 17) as i8 - 8)
        .collect();
    let bt = (0..N * K)
        .map(|i| ((i * i * 5 + 2 * i + 1) % 13) as i8 - 6)
        .collect();
    (a, bt)
}

/// C[i][j] by a plain product.
fn product() -> Vec<i32> {
    let (a, bt) = operands();
    let mut c = vec![0i32; M * N];
    for i in 0..M {
        for j in 0..N {
            c[i * N + j] = (0..K)
                .map(|kk| i32::from(a[i * K + kk]) * i32::from(bt[j * K + kk]))
                .sum();
        }
    }
    c
}

/// The guide's parameter: the scale's float bits in bits 0-31, the 9-bit
/// offset in 37-45, bit 46 set (6.2.4.2.1.33 SetQuantScalar).
fn param(scale: f32, offset: i32) -> u64 {
    u64::from(scale.to_bits()) | (((offset as u64) & 0x1ff) << 37) | (1 << 46)
}

/// round(c x scale) + offset to nearest even, saturated to int8; the
/// scales used are powers of two, so c x scale is exact.
fn req8(c: i32, scale: f32, offset: i32, relu: bool) -> i8 {
    let v = f64::from(c) * f64::from(scale);
    let floor = v.floor();
    let r = if v - floor == 0.5 {
        if floor % 2.0 == 0.0 {
            floor
        } else {
            floor + 1.0
        }
    } else {
        v.round()
    };
    let q = (r as i32 + offset).clamp(-128, 127);
    (if relu { q.max(0) } else { q }) as i8
}

fn halves(out: &LaunchOutput) -> Vec<f32> {
    out.outputs[0]
        .chunks(2)
        .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
        .collect()
}

#[test]
fn deqf16_scales_the_int32_product_to_half() {
    let c = product();
    assert!(c.iter().any(|&v| v < 0) && c.iter().any(|&v| v > 0));
    let none = [0u64; N];
    let out = launch("deq", &none, param(0.5, 0), Dtype::Float16).unwrap();
    let want: Vec<f32> = c.iter().map(|&v| v as f32 * 0.5).collect();
    assert_eq!(halves(&out), want);
    let out = launch("deq_relu", &none, param(0.5, 0), Dtype::Float16).unwrap();
    let want: Vec<f32> = c.iter().map(|&v| (v as f32 * 0.5).max(0.0)).collect();
    assert_eq!(halves(&out), want);
    // Per channel: column j scaled by 2^-(j % 4).
    let scales: Vec<f32> = (0..N).map(|j| 0.5f32.powi((j % 4) as i32)).collect();
    let q: Vec<u64> = scales.iter().map(|&s| param(s, 0)).collect();
    let out = launch("vdeq", &q, 0, Dtype::Float16).unwrap();
    let want: Vec<f32> = (0..M * N).map(|i| c[i] as f32 * scales[i % N]).collect();
    assert_eq!(halves(&out), want);
}

#[test]
fn req8_scales_offsets_rounds_and_saturates_to_int8() {
    let c = product();
    let none = [0u64; N];
    let s8 = |out: &LaunchOutput| out.outputs[0].iter().map(|&b| b as i8).collect::<Vec<_>>();
    // Scale 1 with offset 5: the products beyond 122 saturate at 127.
    let out = launch("req8", &none, param(1.0, 5), Dtype::Int8).unwrap();
    let want: Vec<i8> = c.iter().map(|&v| req8(v, 1.0, 5, false)).collect();
    assert!(want.contains(&127) && want.contains(&-128), "{want:?}");
    assert_eq!(s8(&out), want);
    // Scale 0.5: the odd products are ties, rounded to even.
    let out = launch("req8_relu", &none, param(0.5, -2), Dtype::Int8).unwrap();
    let want: Vec<i8> = c.iter().map(|&v| req8(v, 0.5, -2, true)).collect();
    assert_eq!(s8(&out), want);
    let out = launch("req8", &none, param(0.25, 0), Dtype::Int8).unwrap();
    assert_eq!(
        s8(&out),
        c.iter()
            .map(|&v| req8(v, 0.25, 0, false))
            .collect::<Vec<_>>()
    );
    // Per channel: scale 2^-(j % 3), offset j - 16.
    let per: Vec<(f32, i32)> = (0..N)
        .map(|j| (0.5f32.powi((j % 3) as i32), j as i32 - 16))
        .collect();
    let q: Vec<u64> = per.iter().map(|&(s, o)| param(s, o)).collect();
    let out = launch("vreq8", &q, 0, Dtype::Int8).unwrap();
    let want: Vec<i8> = (0..M * N)
        .map(|i| req8(c[i], per[i % N].0, per[i % N].1, false))
        .collect();
    assert_eq!(s8(&out), want);
}

#[test]
fn a_per_channel_mode_without_its_parameters_is_refused() {
    let err = launch("vdeq_no_ws", &[0; N], 0, Dtype::Float16)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cbufWorkspace"), "{err}");
}
