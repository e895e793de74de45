//! The cube data path end to end: AscendC kernels written for these tests
//! from the guide's description of the basic cube flow (GM -> A1/B1 by
//! DataCopy with Nd2NzParams, -> A2/B2 by LoadData, Mmad into CO1, Fixpipe
//! out to GM), compiled with g++ against the emulation headers, run by the
//! functional runtime and timed by the model. Inputs are small integers,
//! so every sum is exact and the results are compared bit for bit with a
//! plain matrix product.
//!
//! One shared object holds every variant (template instances), so the
//! binary compiles once.

use ascendopt_op::Dtype;
use ascendopt_sim::check::check;
use ascendopt_sim::launch::{
    run_kernel, JobTensor, LaunchFailure, LaunchJob, LaunchOutput, TilingInfo,
};
use ascendopt_sim::timing::{simulate, HwProfile, Profile, TimingOptions};
use ascendopt_sim::trace::{DmaDir, InstrKind, Pipe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const KERNELS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

// C (m x n) = A (m x k) x B (k x n) on one AI core in one tile, K cut into
// K_SPLIT parts accumulated in L0C. TRANS_B: B is given as B^T (n x k,
// row-major). BIAS: a float row of n added to every row of C, through
// C1 (L1) and C2 (the bias table). Tiling: int32 [m, n, k].
template <class AT, class LT, class CT, bool TRANS_B, int K_SPLIT, bool RELU, bool WRONG_POS = false,
          bool BIAS = false>
__aicore__ inline void MatmulTile(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tiling, GM_ADDR bias = nullptr) {
  GlobalTensor<int32_t> t;
  t.SetGlobalBuffer((__gm__ int32_t*)tiling, 3);
  uint32_t m = t.GetValue(0), n = t.GetValue(1), k = t.GetValue(2);
  constexpr uint32_t C0 = 32 / sizeof(AT);
  constexpr uint32_t FRAC = 512 / sizeof(AT);  // elements of an A/B fractal
  uint32_t mA = AlignUp(m, 16), nA = AlignUp(n, 16), kA = AlignUp(k, C0);
  uint32_t mB = mA / 16, nB = nA / 16, kB = kA / C0;
  uint32_t kPart = (kB + K_SPLIT - 1) / K_SPLIT;  // fractals of K per part
  GlobalTensor<AT> aGm, bGm;
  GlobalTensor<CT> cGm;
  aGm.SetGlobalBuffer((__gm__ AT*)a, m * k);
  bGm.SetGlobalBuffer((__gm__ AT*)b, k * n);
  cGm.SetGlobalBuffer((__gm__ CT*)c, m * n);
  TPipe pipe;
  TQue<TPosition::A1, 1> qA1;
  TQue<TPosition::B1, 1> qB1;
  TQue<TPosition::A2, 1> qA2;
  TQue<TPosition::B2, 1> qB2;
  TQue<TPosition::CO1, 1> qC;
  pipe.InitBuffer(qA1, 1, mA * kA * sizeof(AT));
  pipe.InitBuffer(qB1, 1, kA * nA * sizeof(AT));
  pipe.InitBuffer(qA2, 1, mA * kPart * C0 * sizeof(AT));
  pipe.InitBuffer(qB2, 1, kPart * C0 * nA * sizeof(AT));
  pipe.InitBuffer(qC, 1, mA * nA * sizeof(LT));
  TQue<TPosition::C1, 1> qBias1;
  TQue<TPosition::C2, 1> qBias2;
  if (BIAS) {
    pipe.InitBuffer(qBias1, 1, nA * sizeof(LT));
    pipe.InitBuffer(qBias2, 1, nA * sizeof(LT));
    GlobalTensor<LT> biasGm;
    biasGm.SetGlobalBuffer((__gm__ LT*)bias, n);
    LocalTensor<LT> bias1 = qBias1.AllocTensor<LT>();
    DataCopy(bias1, biasGm, nA);
    qBias1.EnQue(bias1);
    bias1 = qBias1.DeQue<LT>();
    LocalTensor<LT> bias2 = qBias2.AllocTensor<LT>();
    DataCopy(bias2, bias1, nA);
    qBias2.EnQue(bias2);
    qBias1.FreeTensor(bias1);
  }

  // GM -> L1, ND -> NZ: A's rows become C0-wide column blocks of mA rows.
  LocalTensor<AT> a1 = qA1.AllocTensor<AT>();
  DataCopy(a1, aGm, Nd2NzParams(1, m, k, 0, k, mA, 1, 0));
  qA1.EnQue(a1);
  LocalTensor<AT> b1 = qB1.AllocTensor<AT>();
  if (TRANS_B) {
    // NZ of B^T (n x k): its 16 x C0 fractals are B's C0 x 16 ZN fractals.
    DataCopy(b1, bGm, Nd2NzParams(1, n, k, 0, k, nA, 1, 0));
  } else {
    DataCopy(b1, bGm, Nd2NzParams(1, k, n, 0, n, kA, 1, 0));
  }
  qB1.EnQue(b1);
  a1 = qA1.DeQue<AT>();
  b1 = qB1.DeQue<AT>();

  LocalTensor<LT> c1 = qC.AllocTensor<LT>();
  for (int s = 0; s < K_SPLIT; s++) {
    uint32_t k0 = s * kPart;  // first K fractal of this part
    if (k0 >= kB) break;
    uint32_t kn = (k0 + kPart <= kB) ? kPart : kB - k0;
    // L1 -> L0A: fractal row i of A holds fractals (i, k0..k0+kn), which
    // lie mB apart in L1's NZ.
    LocalTensor<AT> a2 = qA2.AllocTensor<AT>();
    for (uint32_t i = 0; i < mB; i++) {
      LoadData(a2[i * kn * FRAC], a1, LoadData2DParams(k0 * mB + i, kn, mB, 0, 0, false, 0));
    }
    qA2.EnQue(a2);
    // L1 -> L0B in ZN: K fractal row kb, all nB fractals along N.
    LocalTensor<AT> b2 = qB2.AllocTensor<AT>();
    if (TRANS_B) {
      LoadData(b2, b1, LoadData2DParams(k0 * nB, kn * nB, 1, 0, 0, false, 0));
    } else {
      for (uint32_t kb = 0; kb < kn; kb++) {
        LoadData(b2[kb * nB * FRAC], b1, LoadData2DParams(k0 + kb, nB, kB, 0, 0, true, 0));
      }
    }
    qB2.EnQue(b2);
    a2 = qA2.DeQue<AT>();
    b2 = qB2.DeQue<AT>();
    MmadParams p;
    p.m = m;
    p.n = n;
    p.k = (k0 + kn) * C0 <= k ? kn * C0 : k - k0 * C0;
    p.cmatrixInitVal = (s == 0);
    if (WRONG_POS) {
      Mmad(c1, b2, a2, p);  // LINE_WRONG_POS
    } else if (BIAS && s == 0) {
      LocalTensor<LT> bias2 = qBias2.DeQue<LT>();
      Mmad(c1, a2, b2, bias2, p);
      qBias2.FreeTensor(bias2);
    } else {
      Mmad(c1, a2, b2, p);
    }
    qA2.FreeTensor(a2);
    qB2.FreeTensor(b2);
  }
  qA1.FreeTensor(a1);
  qB1.FreeTensor(b1);
  qC.EnQue(c1);
  c1 = qC.DeQue<LT>();
  FixpipeParamsV220 fp;
  fp.nSize = n;
  fp.mSize = m;
  fp.srcStride = mA;
  fp.dstStride = n;
  fp.ndNum = 1;
  fp.reluEn = RELU;
  if (sizeof(CT) == 2) {
    fp.quantPre = IsSameType<CT, half>::value ? QuantMode_t::F322F16 : QuantMode_t::F322BF16;
  }
  Fixpipe(cGm, c1, fp);
  qC.FreeTensor(c1);
}

extern "C" __global__ __aicore__ void mm_f16(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MatmulTile<half, float, float, false, 1, false>(a, b, c, t);
}
extern "C" __global__ __aicore__ void mm_f16_ksplit(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MatmulTile<half, float, float, false, 3, false>(a, b, c, t);
}
extern "C" __global__ __aicore__ void mm_f16_half_relu(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MatmulTile<half, float, half, false, 1, true>(a, b, c, t);
}
extern "C" __global__ __aicore__ void mm_bf16_tb(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MatmulTile<bfloat16_t, float, bfloat16_t, true, 2, false>(a, b, c, t);
}
extern "C" __global__ __aicore__ void mm_f32_tb(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MatmulTile<float, float, float, true, 1, false>(a, b, c, t);
}
extern "C" __global__ __aicore__ void mm_s8_tb(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MatmulTile<int8_t, int32_t, int32_t, true, 2, false>(a, b, c, t);
}
extern "C" __global__ __aicore__ void mm_f16_bias(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR ws,
                                                  GM_ADDR t) {
  MatmulTile<half, float, float, false, 2, false, false, true>(a, b, c, t, bias);
}
extern "C" __global__ __aicore__ void mm_wrong_pos(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MatmulTile<half, float, float, false, 1, false, true>(a, b, c, t);
}

// 16 x 16 x 16 half straight from GM into L0A/L0B by LoadData (MTE2): A
// as one ZZ fractal (row-major), B as one ZN fractal (B^T row-major). The
// Mmad (PIPE_M) reads what MTE2 wrote: SYNC orders them with a flag.
// ATOMIC: the Fixpipe adds to what C holds (SetAtomicAdd).
template <bool SYNC, bool ATOMIC = false>
__aicore__ inline void GmFractals(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  TPipe pipe;
  TBuf<TPosition::A2> bufA;
  TBuf<TPosition::B2> bufB;
  TQue<TPosition::CO1, 1> qC;
  pipe.InitBuffer(bufA, 512);
  pipe.InitBuffer(bufB, 512);
  pipe.InitBuffer(qC, 1, 1024);
  GlobalTensor<half> aGm, bGm;
  GlobalTensor<float> cGm;
  aGm.SetGlobalBuffer((__gm__ half*)a, 256);
  bGm.SetGlobalBuffer((__gm__ half*)b, 256);
  cGm.SetGlobalBuffer((__gm__ float*)c, 256);
  LocalTensor<half> a2 = bufA.Get<half>();
  LocalTensor<half> b2 = bufB.Get<half>();
  LoadData(a2, aGm, LoadData2DParams(0, 1, 1, 0, 0, false, 0));
  LoadData(b2, bGm, LoadData2DParams(0, 1, 1, 0, 0, false, 0));
  if (SYNC) {
    SetFlag<HardEvent::MTE2_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_M>(EVENT_ID0);
  }
  LocalTensor<float> c1 = qC.AllocTensor<float>();
  Mmad(c1, a2, b2, MmadParams(16, 16, 16));  // LINE_GM_MMAD
  qC.EnQue(c1);
  c1 = qC.DeQue<float>();
  if (ATOMIC) SetAtomicAdd<float>();
  Fixpipe(cGm, c1, FixpipeParamsV220(16, 16, 16, 16, false));
  if (ATOMIC) SetAtomicNone();
  qC.FreeTensor(c1);
}
extern "C" __global__ __aicore__ void gm_fractals_atomic(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  GmFractals<true, true>(a, b, c);
}
extern "C" __global__ __aicore__ void gm_fractals(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  GmFractals<true>(a, b, c);
}
extern "C" __global__ __aicore__ void gm_fractals_unsynced(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  GmFractals<false>(a, b, c);
}

// Fill (guide 6.2.3.2.1.1): A in L0A set to ones (one 512 B block), B
// from GM, C = column sums of B; and an L1 tensor filled with 2 in blocks
// 0 and 2 (dstGap 1), dumped to y.
extern "C" __global__ __aicore__ void fill_kernel(GM_ADDR b, GM_ADDR c, GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  TPipe pipe;
  TBuf<TPosition::A2> bufA;
  TBuf<TPosition::B2> bufB;
  TBuf<TPosition::A1> bufL1;
  TQue<TPosition::CO1, 1> qC;
  pipe.InitBuffer(bufA, 512);
  pipe.InitBuffer(bufB, 512);
  pipe.InitBuffer(bufL1, 96);
  pipe.InitBuffer(qC, 1, 1024);
  GlobalTensor<half> bGm, yGm;
  GlobalTensor<float> cGm;
  bGm.SetGlobalBuffer((__gm__ half*)b, 256);
  cGm.SetGlobalBuffer((__gm__ float*)c, 256);
  yGm.SetGlobalBuffer((__gm__ half*)y, 48);
  LocalTensor<half> a2 = bufA.Get<half>();
  LocalTensor<half> b2 = bufB.Get<half>();
  Fill(a2, InitConstValueParams<half>(1, 1, 0, half(1.0f)));
  LoadData(b2, bGm, LoadData2DParams(0, 1, 1, 0, 0, false, 0));
  SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
  WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
  SetFlag<HardEvent::MTE2_M>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_M>(EVENT_ID0);
  LocalTensor<float> c1 = qC.AllocTensor<float>();
  Mmad(c1, a2, b2, MmadParams(16, 16, 16));
  qC.EnQue(c1);
  c1 = qC.DeQue<float>();
  Fixpipe(cGm, c1, FixpipeParamsV220(16, 16, 16, 16, false));
  qC.FreeTensor(c1);
  LocalTensor<half> l1 = bufL1.Get<half>();
  InitConstValue(l1, InitConstValueParams<half>(2, 1, 1, half(2.0f)));
  SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
  for (int i = 0; i < 48; i++) yGm.SetValue(i, l1.GetValue(i));
}

// The guide's ND2NZ example (6.2.3.1.1.5, figure 6-5): two 2 x 24 half
// matrices, rows 48 apart, 144 apart from each other; dumps the first 512
// halves of L1 into `y` (the positions the example does not write hold
// L1's garbage; the test compares the ones it names).
extern "C" __global__ __aicore__ void nd2nz_example(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  GlobalTensor<half> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ half*)x, 288);
  yGm.SetGlobalBuffer((__gm__ half*)y, 512);
  TPipe pipe;
  TQue<TPosition::A1, 1> q;
  pipe.InitBuffer(q, 1, 512 * sizeof(half));
  LocalTensor<half> l1 = q.AllocTensor<half>();
  DataCopy(l1, xGm, Nd2NzParams(2, 2, 24, 144, 48, 11, 2, 96));
  q.EnQue(l1);
  l1 = q.DeQue<half>();
  for (int i = 0; i < 512; i++) yGm.SetValue(i, l1.GetValue(i));
  q.FreeTensor(l1);
}
"#;

/// Compiles KERNELS once for the whole test binary.
fn kernels() -> &'static Path {
    static LIB: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, so) = LIB.get_or_init(|| crate::kernel_lib::compile(KERNELS));
    so
}

fn hw() -> HwProfile {
    HwProfile::builtin("ascend910b2").unwrap()
}

fn try_launch(
    name: &str,
    inputs: Vec<JobTensor>,
    outputs: Vec<JobTensor>,
    tiling: &[i32],
) -> Result<LaunchOutput, LaunchFailure> {
    let job = LaunchJob {
        host_lib: PathBuf::new(),
        kernel_lib: kernels().to_path_buf(),
        kernel_name: name.into(),
        op_type: None,
        inputs,
        outputs,
        attrs: vec![],
        platform: ascendopt_sim::launch::platform_of(&hw()),
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
    };
    run_kernel(&job, &tiling)
}

/// An element type of the tests with its encoding.
#[derive(Clone, Copy)]
enum T {
    F16,
    Bf16,
    F32,
    S8,
    S32,
}

impl T {
    fn dtype(self) -> Dtype {
        match self {
            T::F16 => Dtype::Float16,
            T::Bf16 => Dtype::Bfloat16,
            T::F32 => Dtype::Float32,
            T::S8 => Dtype::Int8,
            T::S32 => Dtype::Int32,
        }
    }

    fn encode(self, v: &[f32]) -> Vec<u8> {
        v.iter()
            .flat_map(|&x| match self {
                T::F16 => half::f16::from_f32(x).to_le_bytes().to_vec(),
                T::Bf16 => half::bf16::from_f32(x).to_le_bytes().to_vec(),
                T::F32 => x.to_le_bytes().to_vec(),
                T::S8 => vec![x as i8 as u8],
                T::S32 => (x as i32).to_le_bytes().to_vec(),
            })
            .collect()
    }

    fn decode(self, b: &[u8]) -> Vec<f32> {
        match self {
            T::F16 => b
                .chunks(2)
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
            T::Bf16 => b
                .chunks(2)
                .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
            T::F32 => b
                .chunks(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            T::S8 => b.iter().map(|&x| f32::from(x as i8)).collect(),
            T::S32 => b
                .chunks(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f32)
                .collect(),
        }
    }

    fn tensor(self, v: &[f32]) -> JobTensor {
        JobTensor {
            dtype: self.dtype(),
            shape: vec![v.len() as i64],
            data: self.encode(v),
        }
    }
}

/// Small integers (exact in every input type, every sum exact in f32).
fn values(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7 + seed * 3) % 9) as f32 - 4.0)
        .collect()
}

/// Runs a matmul kernel on A (m x k) and B (k x n; given transposed when
/// `trans_b`) and returns (C as computed, C by a plain product).
fn matmul(
    name: &str,
    (input, output): (T, T),
    (m, n, k): (usize, usize, usize),
    trans_b: bool,
) -> (Vec<f32>, Vec<f32>, LaunchOutput) {
    let a = values(m * k, 1);
    let b = values(k * n, 2);
    let b_at = |kk: usize, j: usize| {
        if trans_b {
            b[j * k + kk]
        } else {
            b[kk * n + j]
        }
    };
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|kk| a[i * k + kk] * b_at(kk, j)).sum();
        }
    }
    let out = try_launch(
        name,
        vec![input.tensor(&a), input.tensor(&b)],
        vec![output.tensor(&vec![f32::NAN; m * n])],
        &[m as i32, n as i32, k as i32],
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    (output.decode(&out.outputs[0]), want, out)
}

#[test]
fn half_matmul_with_tails_in_m_n_and_k_matches_the_product() {
    // m, n not multiples of 16, k not a multiple of C0 = 16: the padding
    // rows are dropped by Fixpipe, the padding columns zeroed by ND2NZ.
    let (got, want, out) = matmul("mm_f16", (T::F16, T::F32), (20, 24, 40), false);
    assert_eq!(got, want);
    let instrs = &out.trace.blocks[0].instrs;
    let count =
        |f: &dyn Fn(&InstrKind, Pipe) -> bool| instrs.iter().filter(|i| f(&i.kind, i.pipe)).count();
    let dma = |want: DmaDir, pipe: Pipe| {
        count(&|k, p| matches!(k, InstrKind::Dma { dir, .. } if *dir == want) && p == pipe)
    };
    assert_eq!(
        count(&|k, p| matches!(k, InstrKind::Mmad(_)) && p == Pipe::M),
        1
    );
    assert_eq!(dma(DmaDir::GmToL1, Pipe::Mte2), 2, "ND2NZ of A and B");
    // One LoadData per fractal row of A (2) and per K fractal row of B (3).
    assert_eq!(dma(DmaDir::L1ToL0, Pipe::Mte1), 5);
    assert_eq!(dma(DmaDir::L0cOut, Pipe::Fix), 1);
    // The queues order every pipe: no race, no flag left set.
    assert_eq!(check(&out.trace), vec![]);
}

#[test]
fn k_split_accumulates_in_l0c() {
    let (got, want, out) = matmul("mm_f16_ksplit", (T::F16, T::F32), (20, 24, 40), false);
    assert_eq!(got, want);
    let inits: Vec<bool> = out.trace.blocks[0]
        .instrs
        .iter()
        .filter_map(|i| match i.kind {
            InstrKind::Mmad(s) => Some(s.init),
            _ => None,
        })
        .collect();
    assert_eq!(inits, [true, false, false]);
    assert_eq!(check(&out.trace), vec![]);
}

#[test]
fn fixpipe_converts_to_half_and_applies_relu() {
    let (got, want, _) = matmul("mm_f16_half_relu", (T::F16, T::F16), (32, 16, 32), false);
    let want: Vec<f32> = want.iter().map(|v| v.max(0.0)).collect();
    assert!(want.contains(&0.0) && want.iter().any(|&v| v > 0.0));
    assert_eq!(got, want);
}

#[test]
fn bf16_f32_and_int8_with_b_transposed() {
    let (got, want, _) = matmul("mm_bf16_tb", (T::Bf16, T::Bf16), (16, 32, 48), true);
    assert_eq!(got, want);
    // float: C0 = 8, k = 40 is five fractals of K.
    let (got, want, _) = matmul("mm_f32_tb", (T::F32, T::F32), (18, 16, 40), true);
    assert_eq!(got, want);
    // int8: C0 = 32, k = 40 pads to 64.
    let (got, want, _) = matmul("mm_s8_tb", (T::S8, T::S32), (16, 20, 40), true);
    assert_eq!(got, want);
}

/// The public mmad operator's way with a bias: GM -> C1 (L1) -> C2 (the
/// bias table) by DataCopy, then Mmad with the bias operand, which starts
/// every row of C from it; a second Mmad over the rest of K accumulates.
#[test]
fn a_bias_row_from_the_bias_table_starts_every_row() {
    let (m, n, k) = (20, 24, 40);
    let a = values(m * k, 1);
    let b = values(k * n, 2);
    let bias: Vec<f32> = (0..32).map(|j| (j as f32) * 0.5 - 3.0).collect();
    let out = try_launch(
        "mm_f16_bias",
        vec![T::F16.tensor(&a), T::F16.tensor(&b), T::F32.tensor(&bias)],
        vec![T::F32.tensor(&vec![f32::NAN; m * n])],
        &[m as i32, n as i32, k as i32],
    )
    .unwrap();
    let got = T::F32.decode(&out.outputs[0]);
    for i in 0..m {
        for j in 0..n {
            let want = bias[j] + (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum::<f32>();
            assert_eq!(got[i * n + j], want, "C[{i}][{j}]");
        }
    }
    assert_eq!(check(&out.trace), vec![]);
}

/// LoadData from GM into L0A/L0B, a Fixpipe under SetAtomicAdd, and the
/// race checker on the cube pipes:
/// without the MTE2 -> M flag the Mmad reads L0A and L0B while MTE2 may
/// still write them, and the checker says so; with it the trace is clean.
#[test]
fn an_mmad_that_does_not_wait_for_its_loads_is_a_race() {
    let a = values(256, 3);
    let bt = values(256, 4);
    let run = |name: &str, c: f32| {
        try_launch(
            name,
            vec![T::F16.tensor(&a), T::F16.tensor(&bt)],
            vec![T::F32.tensor(&[c; 256])],
            &[0],
        )
        .unwrap()
    };
    let synced = run("gm_fractals", f32::NAN);
    // With SetAtomicAdd the Fixpipe adds to C's 1.5.
    let atomic = run("gm_fractals_atomic", 1.5);
    let (got, added) = (
        T::F32.decode(&synced.outputs[0]),
        T::F32.decode(&atomic.outputs[0]),
    );
    for i in 0..16 {
        for j in 0..16 {
            let want: f32 = (0..16).map(|kk| a[i * 16 + kk] * bt[j * 16 + kk]).sum();
            assert_eq!(got[i * 16 + j], want, "C[{i}][{j}]");
            assert_eq!(added[i * 16 + j], want + 1.5, "atomic C[{i}][{j}]");
        }
    }
    assert_eq!(check(&synced.trace), vec![]);
    let findings = check(&run("gm_fractals_unsynced", 0.0).trace);
    assert!(
        findings
            .iter()
            .any(|f| f.kind == "race" && f.message.contains("Mmad")),
        "{findings:?}"
    );
}

#[test]
fn fill_sets_l0_fractals_and_l1_blocks() {
    let bt = values(256, 5);
    let out = try_launch(
        "fill_kernel",
        vec![T::F16.tensor(&bt)],
        vec![T::F32.tensor(&[f32::NAN; 256]), T::F16.tensor(&[0.0; 48])],
        &[0],
    )
    .unwrap();
    let c = T::F32.decode(&out.outputs[0]);
    for j in 0..16 {
        let want: f32 = (0..16).map(|kk| bt[j * 16 + kk]).sum();
        for i in 0..16 {
            assert_eq!(c[i * 16 + j], want, "C[{i}][{j}]");
        }
    }
    let y = T::F16.decode(&out.outputs[1]);
    assert!(y[..16].iter().chain(&y[32..48]).all(|&v| v == 2.0), "{y:?}");
}

#[test]
fn mmad_with_operands_in_the_wrong_positions_names_them_and_the_line() {
    let a = values(16 * 16, 1);
    let Err(err) = try_launch(
        "mm_wrong_pos",
        vec![T::F16.tensor(&a), T::F16.tensor(&a)],
        vec![T::F32.tensor(&a)],
        &[16, 16, 16],
    ) else {
        panic!("the kernel ran");
    };
    let LaunchFailure::Fault { message, loc, .. } = err else {
        panic!("{err}");
    };
    assert!(
        message.contains("fm is in L0B, it must be in A2 (L0A)"),
        "{message}"
    );
    let line = KERNELS
        .lines()
        .position(|l| l.contains("LINE_WRONG_POS"))
        .unwrap() as u32
        + 1;
    assert_eq!(loc.map(|l| (l.api, l.line)), Some(("Mmad".into(), line)));
}

/// The guide's example of figure 6-5: ndNum 2, nValue 2, dValue 24,
/// srcNdMatrixStride 144, srcDValue 48, dstNzC0Stride 11, dstNzNStride 2,
/// dstNzMatrixStride 96. By the guide's description: A1 (row 0, first 16
/// elements) at block 0, A2 (its last 8, then 8 zeros) at block 11, B1
/// (row 1) at block 2, B2 at block 13; the second matrix 96 elements (6
/// blocks) later.
#[test]
fn nd2nz_follows_the_guides_example() {
    let x: Vec<f32> = (0..288).map(|i| (i % 1000) as f32).collect();
    let out = try_launch(
        "nd2nz_example",
        vec![T::F16.tensor(&x)],
        vec![T::F16.tensor(&vec![0.0; 512])],
        &[0],
    )
    .unwrap();
    let y = T::F16.decode(&out.outputs[0]);
    let block = |b: usize| &y[b * 16..b * 16 + 16];
    let src = |start: usize, len: usize| -> Vec<f32> {
        let mut v: Vec<f32> = x[start..start + len].to_vec();
        v.resize(16, 0.0);
        v
    };
    for (nd, base) in [(0usize, 0usize), (1, 6)] {
        let s = nd * 144;
        assert_eq!(block(base), src(s, 16).as_slice(), "A1 of matrix {nd}");
        assert_eq!(
            block(base + 11),
            src(s + 16, 8).as_slice(),
            "A2 of matrix {nd}"
        );
        assert_eq!(
            block(base + 2),
            src(s + 48, 16).as_slice(),
            "B1 of matrix {nd}"
        );
        assert_eq!(
            block(base + 13),
            src(s + 64, 8).as_slice(),
            "B2 of matrix {nd}"
        );
    }
}

fn profile(out: &LaunchOutput) -> Profile {
    simulate(&out.trace, &hw(), &TimingOptions::deterministic())
        .unwrap()
        .profile
}

/// A 128 x 128 x 256 half tile: the Mmad occupies the cube for
/// 8 x 8 x 16 = 1024 steps of 16 x 16 x 16 (plus its head), which the
/// profile reports as aic_cube_time; the loads and the Fixpipe show as
/// MTE1 and FIXPIPE time; the block is a cube block.
#[test]
fn the_profile_shows_the_cube_pipes() {
    let (got, want, out) = matmul("mm_f16", (T::F16, T::F32), (128, 128, 256), false);
    assert_eq!(got, want);
    let p = profile(&out);
    assert_eq!(p.op_type, "cube");
    let c = p.blocks[0].aic.clone().expect("aic fields");
    let cycles_per_us = hw().clock_hz / 1e6;
    let cube_cycles = c.cube_time_us * cycles_per_us;
    assert!(
        (1024.0..=1100.0).contains(&cube_cycles),
        "cube busy {cube_cycles} cycles"
    );
    assert!(c.cube_ratio > 0.0 && c.mte1_ratio > 0.0 && c.fixpipe_ratio > 0.0);
    assert!(c.mte2_ratio > c.cube_ratio, "{c:?}");
    // The K split into 3 Mmads costs the same cube steps (plus two heads).
    let (_, _, split) = matmul("mm_f16_ksplit", (T::F16, T::F32), (128, 128, 256), false);
    let s = profile(&split).blocks[0].aic.clone().unwrap();
    assert!(s.cube_time_us * cycles_per_us >= cube_cycles);
}
