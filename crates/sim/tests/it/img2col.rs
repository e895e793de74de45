//! Load3Dv2 (img2col) end to end: a convolution kernel written for these
//! tests from the guide's Load3D description (6.2.3.2.1.4): the feature
//! map (C1 x H x W x C0 half) GM -> A1, img2col A1 -> A2, the weights
//! (given as W^T, n x k) GM -> B1 by ND2NZ and B1 -> B2 by LoadData, one
//! Mmad, Fixpipe to GM. The result is compared bit for bit with a direct
//! convolution (small integers: every sum exact in f32).

use ascendopt_op::Dtype;
use ascendopt_sim::check::check;
use ascendopt_sim::launch::{
    run_kernel, JobTensor, LaunchFailure, LaunchJob, LaunchOutput, TilingInfo,
};
use ascendopt_sim::timing::HwProfile;
use ascendopt_sim::trace::{DmaDir, InstrKind, Pipe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const KERNELS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

// At namespace scope: g++ 12 fails with an internal compiler error on a
// function-local static used as a reference template argument inside a
// function template (the guide's examples declare it in the function).
static constexpr IsResetLoad3dConfig CONFIG = {false, false};

// Tiling: int32 [H, W, pad (every side), stride, K (kernel side),
// dilation, C1]. y (float, Ho*Wo x 16) = img2col(x) x W.
// VIA_REGS: the feature map and the padding value come from SetFmatrix and
// SetLoadDataPaddingValue; the call's own fields are junk.
template <bool VIA_REGS>
__aicore__ inline void Conv(GM_ADDR x, GM_ADDR w, GM_ADDR y, GM_ADDR tiling) {
  GlobalTensor<int32_t> t;
  t.SetGlobalBuffer((__gm__ int32_t*)tiling, 7);
  uint16_t H = t.GetValue(0), W = t.GetValue(1);
  uint8_t pad = t.GetValue(2), stride = t.GetValue(3), K = t.GetValue(4), dil = t.GetValue(5);
  uint16_t C1 = t.GetValue(6);
  uint32_t Ho = (H + 2 * pad - dil * (K - 1) - 1) / stride + 1;
  uint32_t Wo = (W + 2 * pad - dil * (K - 1) - 1) / stride + 1;
  uint32_t m = Ho * Wo, mA = AlignUp(m, 16), k = C1 * K * K * 16, n = 16;
  GlobalTensor<half> xGm, wGm;
  GlobalTensor<float> yGm;
  xGm.SetGlobalBuffer((__gm__ half*)x, C1 * H * W * 16);
  wGm.SetGlobalBuffer((__gm__ half*)w, k * n);
  yGm.SetGlobalBuffer((__gm__ float*)y, m * n);
  TPipe pipe;
  TQue<TPosition::A1, 1> qA1;
  TQue<TPosition::B1, 1> qB1;
  TQue<TPosition::A2, 1> qA2;
  TQue<TPosition::B2, 1> qB2;
  TQue<TPosition::CO1, 1> qC;
  pipe.InitBuffer(qA1, 1, C1 * H * W * 16 * sizeof(half));
  pipe.InitBuffer(qB1, 1, k * n * sizeof(half));
  pipe.InitBuffer(qA2, 1, mA * k * sizeof(half));
  pipe.InitBuffer(qB2, 1, k * n * sizeof(half));
  pipe.InitBuffer(qC, 1, mA * n * sizeof(float));
  LocalTensor<half> a1 = qA1.AllocTensor<half>();
  DataCopy(a1, xGm, C1 * H * W * 16);
  qA1.EnQue(a1);
  LocalTensor<half> b1 = qB1.AllocTensor<half>();
  // W^T (n x k) as NZ: its 16 x 16 fractals are W's ZN fractals.
  DataCopy(b1, wGm, Nd2NzParams(1, n, k, 0, k, n, 1, 0));
  qB1.EnQue(b1);
  a1 = qA1.DeQue<half>();
  b1 = qB1.DeQue<half>();
  LocalTensor<half> a2 = qA2.AllocTensor<half>();
  uint8_t padList[4] = {pad, pad, pad, pad};
  if (VIA_REGS) {
    SetFmatrix(H, W, padList, FmatrixMode::FMATRIX_LEFT);
    SetLoadDataPaddingValue(half(0));
    SetLoadDataRepeat({0, 1, 0});
    SetLoadDataBoundary((uint32_t)0);
    uint8_t junk[4] = {9, 9, 9, 9};
    LoadData<half, CONFIG>(a2, a1, {junk, 1, 1, (uint16_t)(C1 * 16), (uint16_t)k, (uint16_t)mA, 0, 0, stride,
                                    stride, K, K, dil, dil, false, false, half(7)});
  } else {
    LoadData(a2, a1,
             LoadData3DParamsV2<half>(padList, H, W, C1 * 16, k, mA, 0, 0, stride, stride, K, K, dil, dil, false,
                                      false, half(0)));
  }
  qA2.EnQue(a2);
  LocalTensor<half> b2 = qB2.AllocTensor<half>();
  LoadData(b2, b1, LoadData2DParams(0, k / 16, 1, 0, 0, false, 0));
  qB2.EnQue(b2);
  a2 = qA2.DeQue<half>();
  b2 = qB2.DeQue<half>();
  LocalTensor<float> c1 = qC.AllocTensor<float>();
  Mmad(c1, a2, b2, MmadParams(m, n, k));
  qA2.FreeTensor(a2);
  qB2.FreeTensor(b2);
  qA1.FreeTensor(a1);
  qB1.FreeTensor(b1);
  qC.EnQue(c1);
  c1 = qC.DeQue<float>();
  Fixpipe(yGm, c1, FixpipeParamsV220(n, m, mA, n, false));
  qC.FreeTensor(c1);
}
extern "C" __global__ __aicore__ void conv(GM_ADDR x, GM_ADDR w, GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  Conv<false>(x, w, y, t);
}
extern "C" __global__ __aicore__ void conv_regs(GM_ADDR x, GM_ADDR w, GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  Conv<true>(x, w, y, t);
}

// Load3Dv1 is not on Atlas A2: the call is refused.
extern "C" __global__ __aicore__ void load3d_v1(GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  TPipe pipe;
  TBuf<TPosition::A1> b1;
  TBuf<TPosition::A2> b2;
  pipe.InitBuffer(b1, 4096);
  pipe.InitBuffer(b2, 4096);
  uint8_t padList[4] = {0, 0, 0, 0};
  LocalTensor<half> a1 = b1.Get<half>();
  LocalTensor<half> a2 = b2.Get<half>();
  LoadData(a2, a1, {padList, 4, 4, 0, 0, 0, 0, 0, 1, 1, 2, 2, 1, 1, 1, 0, 1, 0, (half)(0)});  // LINE_V1
}
"#;

fn kernels() -> &'static Path {
    static LIB: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, so) = LIB.get_or_init(|| crate::kernel_lib::compile(KERNELS));
    so
}

fn launch(
    name: &str,
    inputs: Vec<JobTensor>,
    outputs: Vec<JobTensor>,
    tiling: &[i32],
) -> Result<LaunchOutput, LaunchFailure> {
    let hw = HwProfile::builtin("ascend910b2").unwrap();
    let job = LaunchJob {
        host_lib: PathBuf::new(),
        kernel_lib: kernels().to_path_buf(),
        kernel_name: name.into(),
        op_type: None,
        inputs,
        outputs,
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
        data: tiling.iter().flat_map(|v| v.to_le_bytes()).collect(),
        workspace: 0,
        output_init: Vec::new(),
    };
    run_kernel(&job, &tiling)
}

fn tensor(dtype: Dtype, v: &[f32]) -> JobTensor {
    let data = match dtype {
        Dtype::Float16 => v
            .iter()
            .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
            .collect(),
        _ => v.iter().flat_map(|&x| x.to_le_bytes()).collect(),
    };
    JobTensor {
        dtype,
        shape: vec![v.len() as i64],
        data,
    }
}

/// The convolution geometry of one case.
#[derive(Clone, Copy)]
struct Case {
    h: usize,
    w: usize,
    pad: usize,
    stride: usize,
    kernel: usize,
    dilation: usize,
    c1: usize,
}

/// Runs `name` on a case and returns (y as computed, y by a direct
/// convolution, the launch).
fn conv(name: &str, c: Case) -> (Vec<f32>, Vec<f32>, LaunchOutput) {
    let out_side =
        |side: usize| (side + 2 * c.pad - c.dilation * (c.kernel - 1) - 1) / c.stride + 1;
    let (ho, wo) = (out_side(c.h), out_side(c.w));
    let channels = 16 * c.c1;
    let k = channels * c.kernel * c.kernel;
    // x[c][h][w] stored as C1 x H x W x C0; W^T[j][(c1, kh, kw, c0)].
    let x_at = |ch: usize, h: usize, w: usize| ((ch * 5 + h * 3 + w * 7) % 9) as f32 - 4.0;
    let w_at =
        |j: usize, ch: usize, kh: usize, kw: usize| ((j + 2 * ch + 3 * kh + kw) % 5) as f32 - 2.0;
    let mut x = Vec::new();
    for c1 in 0..c.c1 {
        for h in 0..c.h {
            for w in 0..c.w {
                for c0 in 0..16 {
                    x.push(x_at(16 * c1 + c0, h, w));
                }
            }
        }
    }
    let mut wt = Vec::new();
    for j in 0..16 {
        for c1 in 0..c.c1 {
            for kh in 0..c.kernel {
                for kw in 0..c.kernel {
                    for c0 in 0..16 {
                        wt.push(w_at(j, 16 * c1 + c0, kh, kw));
                    }
                }
            }
        }
    }
    assert_eq!(wt.len(), 16 * k);
    let mut want = vec![0f32; ho * wo * 16];
    for oh in 0..ho {
        for ow in 0..wo {
            for j in 0..16 {
                let mut sum = 0f32;
                for ch in 0..channels {
                    for kh in 0..c.kernel {
                        for kw in 0..c.kernel {
                            let h = (oh * c.stride + kh * c.dilation) as isize - c.pad as isize;
                            let w = (ow * c.stride + kw * c.dilation) as isize - c.pad as isize;
                            if h >= 0 && w >= 0 && (h as usize) < c.h && (w as usize) < c.w {
                                sum += x_at(ch, h as usize, w as usize) * w_at(j, ch, kh, kw);
                            }
                        }
                    }
                }
                want[(oh * wo + ow) * 16 + j] = sum;
            }
        }
    }
    let tiling = [c.h, c.w, c.pad, c.stride, c.kernel, c.dilation, c.c1].map(|v| v as i32);
    let out = launch(
        name,
        vec![tensor(Dtype::Float16, &x), tensor(Dtype::Float16, &wt)],
        vec![tensor(Dtype::Float32, &vec![f32::NAN; ho * wo * 16])],
        &tiling,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let got = out.outputs[0]
        .chunks(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    (got, want, out)
}

/// 5 x 5, padding 1, stride 2, 3 x 3 kernel: a 3 x 3 output; 6 x 5 with
/// dilation 2 and two channel blocks; 7 x 4, padding 2, stride 3.
#[test]
fn a_convolution_by_img2col_matches_the_direct_one() {
    let cases = [
        Case {
            h: 5,
            w: 5,
            pad: 1,
            stride: 2,
            kernel: 3,
            dilation: 1,
            c1: 1,
        },
        Case {
            h: 6,
            w: 5,
            pad: 0,
            stride: 1,
            kernel: 2,
            dilation: 2,
            c1: 2,
        },
        Case {
            h: 7,
            w: 4,
            pad: 2,
            stride: 3,
            kernel: 2,
            dilation: 1,
            c1: 1,
        },
    ];
    for c in cases {
        let (got, want, out) = conv("conv", c);
        assert_eq!(
            got, want,
            "{}x{} pad {} stride {}",
            c.h, c.w, c.pad, c.stride
        );
        let instrs = &out.trace.blocks[0].instrs;
        let img2col = instrs
            .iter()
            .filter(|i| {
                i.pipe == Pipe::Mte1
                    && matches!(
                        i.kind,
                        InstrKind::Dma {
                            dir: DmaDir::L1Img2Col,
                            ..
                        }
                    )
            })
            .count();
        assert_eq!(img2col, 1);
        assert_eq!(check(&out.trace), vec![]);
    }
}

/// SetFmatrix and SetLoadDataPaddingValue with IsResetLoad3dConfig
/// {false, false}: the call's own l1H, l1W, padList and padValue (junk)
/// are ignored, the registers' are used.
#[test]
fn the_feature_map_registers_replace_the_call_fields() {
    let c = Case {
        h: 5,
        w: 5,
        pad: 1,
        stride: 2,
        kernel: 3,
        dilation: 1,
        c1: 1,
    };
    let (got, want, _) = conv("conv_regs", c);
    assert_eq!(got, want);
}

#[test]
fn load3d_v1_is_refused_on_atlas_a2() {
    let err = launch(
        "load3d_v1",
        vec![],
        vec![tensor(Dtype::Float32, &[0.0; 4])],
        &[0],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("Load3Dv1") && err.contains("6-168"), "{err}");
}
