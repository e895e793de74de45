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
use ascendopt_sim::trace::{DmaDir, Instr, InstrKind, Mem, Pipe};
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
        output_init: Vec::new(),
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
    // The roofline counts the traced Mmads' MACs on the cube's peak.
    let ops = ascendopt_sim::timing::report::with_traced_cube(
        ascendopt_sim::timing::Ops::vector(128 * 128, Dtype::Float32),
        &out.trace,
    );
    assert_eq!(
        (ops.cube_macs, ops.cube_dtype),
        (128 * 128 * 256, Dtype::Float16)
    );
    // The K split into 3 Mmads costs the same cube steps (plus two heads).
    let (_, _, split) = matmul("mm_f16_ksplit", (T::F16, T::F32), (128, 128, 256), false);
    let split_ops = ascendopt_sim::timing::report::with_traced_cube(
        ascendopt_sim::timing::Ops::vector(1, Dtype::Float32),
        &split.trace,
    );
    assert_eq!(split_ops.cube_macs, 128 * 128 * 256);
    let s = profile(&split).blocks[0].aic.clone().unwrap();
    assert!(s.cube_time_us * cycles_per_us >= cube_cycles);
}

// ---- MIX kernels: one AIC and two AIVs per AI core ---------------------------------
//
// A second library (its kernel type is declared once for the whole
// library, as the device compiler reads it).
const MIX_KERNELS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

// Every core writes who it is: slot GetBlockIdx() of the AIVs' table
// (8 int32 each), the AICs' table 64 slots further.
extern "C" __global__ __aicore__ void mix_identity(GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  GlobalTensor<int32_t> yGm;
  yGm.SetGlobalBuffer((__gm__ int32_t*)y, 1024);
  int64_t slot = (ASCEND_IS_AIC ? 64 : 0) + GetBlockIdx() * 8;
  yGm.SetValue(slot + 0, (int32_t)GetBlockIdx());
  yGm.SetValue(slot + 1, (int32_t)GetBlockNum());
  yGm.SetValue(slot + 2, (int32_t)GetSubBlockIdx());
  yGm.SetValue(slot + 3, (int32_t)GetSubBlockNum());
  yGm.SetValue(slot + 4, (int32_t)GetTaskRation());
  yGm.SetValue(slot + 5, (int32_t)g_coreType);
  DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(yGm);
}

// The AIC of each AI core multiplies its 16 x 16 x 16 tile (A rows
// 16 * GetBlockIdx()..) into a float workspace with Fixpipe and tells its
// AIVs (mode 2, on PIPE_FIX); each AIV takes 8 of the 16 rows, doubles
// them and writes y; then both AIVs tell the AIC (mode 2, on PIPE_MTE3),
// which waits for them. WAIT = false leaves the AIVs' wait out (a race on
// the workspace). SET_PIPE_S puts the AIC's set on the scalar unit, which
// does not wait for the Fixpipe (a race too).
template <bool WAIT, bool SET_PIPE_S>
__aicore__ inline void MixPipeline(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR ws) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  int64_t core = ASCEND_IS_AIC ? GetBlockIdx() : GetBlockIdx() / GetSubBlockNum();
  GlobalTensor<float> wGm, yGm;
  wGm.SetGlobalBuffer((__gm__ float*)ws + core * 256, 256);
  yGm.SetGlobalBuffer((__gm__ float*)y + core * 256, 256);
  TPipe pipe;
  if ASCEND_IS_AIC {
    GlobalTensor<half> aGm, bGm;
    aGm.SetGlobalBuffer((__gm__ half*)a + core * 256, 256);
    bGm.SetGlobalBuffer((__gm__ half*)b, 256);
    TQue<TPosition::A1, 1> qA1;
    TQue<TPosition::B1, 1> qB1;
    TQue<TPosition::A2, 1> qA2;
    TQue<TPosition::B2, 1> qB2;
    TQue<TPosition::CO1, 1> qC;
    pipe.InitBuffer(qA1, 1, 512);
    pipe.InitBuffer(qB1, 1, 512);
    pipe.InitBuffer(qA2, 1, 512);
    pipe.InitBuffer(qB2, 1, 512);
    pipe.InitBuffer(qC, 1, 1024);
    LocalTensor<half> a1 = qA1.AllocTensor<half>();
    DataCopy(a1, aGm, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    qA1.EnQue(a1);
    LocalTensor<half> b1 = qB1.AllocTensor<half>();
    DataCopy(b1, bGm, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    qB1.EnQue(b1);
    a1 = qA1.DeQue<half>();
    b1 = qB1.DeQue<half>();
    LocalTensor<half> a2 = qA2.AllocTensor<half>();
    LoadData(a2, a1, LoadData2DParams(0, 1, 1, 0, 0, false, 0));
    qA2.EnQue(a2);
    LocalTensor<half> b2 = qB2.AllocTensor<half>();
    LoadData(b2, b1, LoadData2DParams(0, 1, 1, 0, 0, true, 0));
    qB2.EnQue(b2);
    a2 = qA2.DeQue<half>();
    b2 = qB2.DeQue<half>();
    LocalTensor<float> c1 = qC.AllocTensor<float>();
    Mmad(c1, a2, b2, MmadParams(16, 16, 16));
    qC.EnQue(c1);
    c1 = qC.DeQue<float>();
    Fixpipe(wGm, c1, FixpipeParamsV220(16, 16, 16, 16, false));
    qC.FreeTensor(c1);
    qA1.FreeTensor(a1);
    qB1.FreeTensor(b1);
    qA2.FreeTensor(a2);
    qB2.FreeTensor(b2);
    if (SET_PIPE_S) {
      CrossCoreSetFlag<2, PIPE_S>(3);
    } else {
      CrossCoreSetFlag<2, PIPE_FIX>(3);
    }
    CrossCoreWaitFlag(4);
  }
  if ASCEND_IS_AIV {
    int64_t sub = GetSubBlockIdx();
    TQue<TPosition::VECIN, 1> qIn;
    TQue<TPosition::VECOUT, 1> qOut;
    pipe.InitBuffer(qIn, 1, 128 * sizeof(float));
    pipe.InitBuffer(qOut, 1, 128 * sizeof(float));
    if (WAIT) CrossCoreWaitFlag(3);
    LocalTensor<float> x = qIn.AllocTensor<float>();
    DataCopy(x, wGm[sub * 128], 128);
    qIn.EnQue(x);
    x = qIn.DeQue<float>();
    LocalTensor<float> z = qOut.AllocTensor<float>();
    Muls(z, x, 2.0f, 128);
    qOut.EnQue(z);
    qIn.FreeTensor(x);
    z = qOut.DeQue<float>();
    DataCopy(yGm[sub * 128], z, 128);
    qOut.FreeTensor(z);
    CrossCoreSetFlag<2, PIPE_MTE3>(4);
  }
}

extern "C" __global__ __aicore__ void mix_pipeline(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  MixPipeline<true, false>(a, b, y, ws);
}
extern "C" __global__ __aicore__ void mix_pipeline_no_wait(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  MixPipeline<false, false>(a, b, y, ws);
}
extern "C" __global__ __aicore__ void mix_pipeline_set_on_s(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  MixPipeline<true, true>(a, b, y, ws);
}

// An AIV waits for a flag its AIC never sets.
extern "C" __global__ __aicore__ void mix_hang(GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  if ASCEND_IS_AIV {
    CrossCoreWaitFlag(5);  // LINE_HANG
  }
}

// A vector instruction on the AIC.
extern "C" __global__ __aicore__ void mix_vector_on_aic(GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 1, 256);
  LocalTensor<float> x = q.AllocTensor<float>();
  Duplicate(x, 1.0f, 64);  // LINE_VEC_ON_AIC
  q.FreeTensor(x);
}

// Mode 1 between the two AIVs and SyncAll<true> over every AIV: AIV 1 of
// each AI core writes its slot, sets mode 1; both wait; AIV 0 copies
// AIV 1's value into its own slot. Then SyncAll over the AIVs, and AIV 0
// of AI core 0 sums every slot.
extern "C" __global__ __aicore__ void mix_aiv_sync(GM_ADDR y, GM_ADDR ws, GM_ADDR t) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  if ASCEND_IS_AIC {
    return;
  }
  GlobalTensor<int32_t> yGm;
  yGm.SetGlobalBuffer((__gm__ int32_t*)y, 64);
  int64_t idx = GetBlockIdx();
  if (GetSubBlockIdx() == 1) {
    yGm.SetValue(idx * 8, (int32_t)(idx + 10));
    DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(yGm);
  }
  CrossCoreSetFlag<1, PIPE_S>(2);
  CrossCoreWaitFlag(2);
  if (GetSubBlockIdx() == 0) {
    DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(yGm);
    yGm.SetValue(idx * 8, yGm.GetValue((idx + 1) * 8) * 2);
    DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(yGm);
  }
  SyncAll<true>();
  if (idx == 0) {
    DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_ALL>(yGm);
    int32_t sum = 0;
    for (int i = 0; i < (int)GetBlockNum() * 2; i++) sum += yGm.GetValue(i * 8);
    yGm.SetValue(63, sum);
    DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(yGm);
  }
}

// ---- the high-level Matmul API (lib/matmul_intf.h), written for these
// tests from the guide's description (6.2.4.2.1): each AIV of a 1:2 launch
// takes singleCoreM rows of C (GetBlockIdx() picks them) and asks its AIC
// for them. The other paths public kernels include it by come too.
#include "lib/matmul_intf.h"
#include "lib/matrix/matmul/matmul.h"
#include "lib/matrix/matmul/tiling.h"

template <bool UB, class IN = half, const matmul::MatmulConfig& CFG = matmul::CFG_NORM>
__aicore__ inline void MmApi(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tiling) {
  using A = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, IN>;
  using B = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, IN>;
  using C = matmul::MatmulType<UB ? TPosition::VECIN : TPosition::GM, matmul::CubeFormat::ND, float>;
  using Bias = matmul::MatmulType<TPosition::GM, matmul::CubeFormat::ND, float>;
  TCubeTiling t = *(__gm__ TCubeTiling*)tiling;
  TPipe pipe;
  matmul::Matmul<A, B, C, Bias, CFG> mm;
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
  int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
  int32_t mi = GetBlockIdx() % mBlocks, ni = GetBlockIdx() / mBlocks;
  GlobalTensor<IN> aGm, bGm;
  GlobalTensor<float> biasGm, cGm;
  aGm.SetGlobalBuffer((__gm__ IN*)a + mi * t.singleCoreM * t.Ka);
  bGm.SetGlobalBuffer((__gm__ IN*)b + ni * t.singleCoreN);
  biasGm.SetGlobalBuffer((__gm__ float*)bias + ni * t.singleCoreN);
  cGm.SetGlobalBuffer((__gm__ float*)c + mi * t.singleCoreM * t.N + ni * t.singleCoreN);
  mm.SetTensorA(aGm);
  mm.SetTensorB(bGm);
  if (t.isBias) mm.SetBias(biasGm);
  if (!UB) {
    mm.IterateAll(cGm);
  } else {
    // Tile by tile into UB, doubled there, out to C (tiles M first).
    TQue<TPosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 1, t.baseM * t.baseN * sizeof(float));
    int32_t tilesM = (t.singleCoreM + t.baseM - 1) / t.baseM;
    int32_t count = 0;
    while (mm.Iterate()) {
      LocalTensor<float> x = q.AllocTensor<float>();
      mm.GetTensorC(x);
      Muls(x, x, 2.0f, t.baseM * t.baseN);
      q.EnQue(x);
      x = q.DeQue<float>();
      int32_t r0 = (count % tilesM) * t.baseM, c0 = (count / tilesM) * t.baseN;
      int32_t w = t.singleCoreN - c0 < t.baseN ? t.singleCoreN - c0 : t.baseN;
      DataCopyParams p((uint16_t)t.baseM, (uint16_t)(w * sizeof(float) / 32),
                       (uint16_t)((t.baseN - w) * sizeof(float) / 32), (uint16_t)((t.N - w) * sizeof(float) / 32));
      DataCopy(cGm[r0 * t.N + c0], x, p);
      q.FreeTensor(x);
      count++;
    }
  }
  mm.End();
}

extern "C" __global__ __aicore__ void mm_api_gm(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MmApi<false>(a, b, bias, c, t);
}
extern "C" __global__ __aicore__ void mm_api_ub(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  MmApi<true>(a, b, bias, c, t);
}
// float A and B, B not transposed (LoadDataWithTranspose to L0B).
extern "C" __global__ __aicore__ void mm_api_gm_f32(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR ws,
                                                    GM_ADDR t) {
  MmApi<false, float>(a, b, bias, c, t);
}
// Tiling key 7 runs on the cube cores alone: each AIC computes in place.
extern "C" __global__ __aicore__ void mm_api_cube_only(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR ws,
                                                       GM_ADDR t) {
  KERNEL_TASK_TYPE(7, KERNEL_TYPE_AIC_ONLY);
  MmApi<false>(a, b, bias, c, t);
}
// The MDL template, without and with MTE2 Preload of B (doMTE2Preload 2).
constexpr matmul::MatmulConfig MDL_PLAIN = matmul::GetMDLConfig();
constexpr matmul::MatmulConfig MDL_PRELOAD_B = matmul::GetMDLConfig(false, false, 2);
extern "C" __global__ __aicore__ void mm_api_mdl(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR ws,
                                                 GM_ADDR t) {
  KERNEL_TASK_TYPE(7, KERNEL_TYPE_AIC_ONLY);
  MmApi<false, half, MDL_PLAIN>(a, b, bias, c, t);
}
extern "C" __global__ __aicore__ void mm_api_mdl_preload_b(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                           GM_ADDR ws, GM_ADDR t) {
  KERNEL_TASK_TYPE(7, KERNEL_TYPE_AIC_ONLY);
  MmApi<false, half, MDL_PRELOAD_B>(a, b, bias, c, t);
}
"#;

fn mix_kernels() -> &'static Path {
    static LIB: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, so) = LIB.get_or_init(|| {
        crate::kernel_lib::compile_sources("libmix.so", &[("mix.cpp", MIX_KERNELS)])
    });
    so
}

fn mix_launch(
    name: &str,
    inputs: Vec<JobTensor>,
    outputs: Vec<JobTensor>,
    block_dim: u32,
    workspace: u64,
) -> Result<LaunchOutput, LaunchFailure> {
    mix_launch_with(name, inputs, outputs, block_dim, workspace, 0, vec![0; 8])
}

fn mix_launch_with(
    name: &str,
    inputs: Vec<JobTensor>,
    outputs: Vec<JobTensor>,
    block_dim: u32,
    workspace: u64,
    tiling_key: u64,
    data: Vec<u8>,
) -> Result<LaunchOutput, LaunchFailure> {
    let job = LaunchJob {
        host_lib: PathBuf::new(),
        kernel_lib: mix_kernels().to_path_buf(),
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
        block_dim,
        tiling_key,
        data,
        workspace,
        output_init: Vec::new(),
    };
    run_kernel(&job, &tiling)
}

fn mix_source_line(marker: &str) -> u32 {
    MIX_KERNELS
        .lines()
        .position(|l| l.contains(marker))
        .map(|i| i as u32 + 1)
        .unwrap()
}

/// Block Dim 2 of a MIX 1:2 kernel starts 2 AICs and 4 AIVs; each sees the
/// identity the guide's tables give it.
#[test]
fn a_mix_1_2_launch_starts_one_aic_and_two_aivs_per_ai_core() {
    let out = mix_launch(
        "mix_identity",
        vec![],
        vec![T::S32.tensor(&vec![-1.0; 1024])],
        2,
        64,
    )
    .unwrap();
    let y = T::S32.decode(&out.outputs[0]);
    let row = |slot: usize| y[slot..slot + 6].to_vec();
    // AIVs: block idx = AI core * 2 + sub, block num 2, sub num / ratio 2, AIV = 2.
    assert_eq!(row(0), vec![0.0, 2.0, 0.0, 2.0, 2.0, 2.0]);
    assert_eq!(row(8), vec![1.0, 2.0, 1.0, 2.0, 2.0, 2.0]);
    assert_eq!(row(16), vec![2.0, 2.0, 0.0, 2.0, 2.0, 2.0]);
    assert_eq!(row(24), vec![3.0, 2.0, 1.0, 2.0, 2.0, 2.0]);
    // AICs: block idx = AI core, sub 0 of 1, AIC = 1.
    assert_eq!(row(64), vec![0.0, 2.0, 0.0, 1.0, 1.0, 1.0]);
    assert_eq!(row(72), vec![1.0, 2.0, 0.0, 1.0, 1.0, 1.0]);
    assert_eq!(out.trace.blocks.len(), 6);
    let p = profile(&out);
    assert_eq!(p.blocks.len(), 6);
}

/// The AIC's product reaches the AIVs through the workspace once they
/// waited for its flag: y = 2 A B exactly; the AIVs' first load starts
/// after the Fixpipe ended plus the cross-core latency; the checker is
/// silent.
#[test]
fn aic_to_aiv_through_the_workspace_with_cross_core_flags() {
    let a = values(2 * 256, 1);
    let b = values(256, 2);
    let mut want = vec![0f32; 2 * 256];
    for core in 0..2 {
        for i in 0..16 {
            for j in 0..16 {
                let s: f32 = (0..16)
                    .map(|kk| a[core * 256 + i * 16 + kk] * b[kk * 16 + j])
                    .sum();
                want[core * 256 + i * 16 + j] = 2.0 * s;
            }
        }
    }
    let run = |name: &str| {
        mix_launch(
            name,
            vec![T::F16.tensor(&a), T::F16.tensor(&b)],
            vec![T::F32.tensor(&vec![f32::NAN; 512])],
            2,
            2 * 1024,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let out = run("mix_pipeline");
    assert_eq!(T::F32.decode(&out.outputs[0]), want);
    let findings = check(&out.trace);
    assert!(findings.is_empty(), "{findings:?}");
    let timed = simulate(&out.trace, &hw(), &TimingOptions::deterministic()).unwrap();
    let spans = |block: usize| &timed.timeline.blocks[block].spans;
    let trace = &out.trace;
    let fix_end = spans(0)
        .iter()
        .filter(|s| s.pipe == Pipe::Fix)
        .map(|s| s.end)
        .max()
        .expect("a Fixpipe");
    for aiv in [1usize, 2] {
        let first_load = spans(aiv)
            .iter()
            .filter(|s| {
                matches!(
                    trace.blocks[aiv].instrs[s.instr as usize].kind,
                    InstrKind::Dma {
                        dir: DmaDir::GmToUb,
                        ..
                    }
                )
            })
            .map(|s| s.start)
            .min()
            .expect("a load");
        assert!(
            first_load >= fix_end + hw().sync.cross_core_cycles as u64,
            "AIV {aiv} loads at {first_load}, the Fixpipe ends at {fix_end}"
        );
    }
    let p = timed.profile;
    assert_eq!(p.blocks.len(), 6);
    assert!(p.blocks.iter().any(|b| b.aic.is_some()));

    // Without the AIVs' wait, or with the AIC's set on the scalar unit
    // (which does not wait for the Fixpipe), the checker reports the
    // race on the workspace between the cores.
    for name in ["mix_pipeline_no_wait", "mix_pipeline_set_on_s"] {
        let out = run(name);
        let findings = check(&out.trace);
        assert!(
            findings
                .iter()
                .any(|f| f.kind == "race" && f.message.contains("AIC of AI core")),
            "{name}: {findings:?}"
        );
    }
}

/// A wait no core will ever satisfy ends the launch with a deadlock fault
/// at its line; a vector instruction on the AIC is a fault too.
#[test]
fn cross_core_misuse_is_a_fault_at_its_line() {
    let err =
        mix_launch("mix_hang", vec![], vec![T::S32.tensor(&[0.0; 8])], 1, 64).expect_err("hangs");
    let text = err.to_string();
    assert!(text.contains("CrossCoreWaitFlag(5)"), "{text}");
    assert!(
        text.contains(&format!(":{}", mix_source_line("LINE_HANG"))),
        "{text}"
    );
    let err = mix_launch(
        "mix_vector_on_aic",
        vec![],
        vec![T::S32.tensor(&[0.0; 8])],
        1,
        64,
    )
    .expect_err("vector on AIC");
    let text = err.to_string();
    assert!(text.contains("AIC of AI core 0"), "{text}");
}

/// Mode 1 orders the two AIVs of an AI core; SyncAll<true> waits for every
/// AIV and not for the AICs (which returned at once).
#[test]
fn mode_1_and_syncall_over_the_vector_cores() {
    let out = mix_launch(
        "mix_aiv_sync",
        vec![],
        vec![T::S32.tensor(&[0.0; 64])],
        3,
        64,
    )
    .unwrap();
    let y = T::S32.decode(&out.outputs[0]);
    // AIV 1 of core c (block 2c+1) wrote 2c+11; AIV 0 (block 2c) twice that.
    let want: f32 = (0..3).map(|c| 3.0 * (2 * c + 11) as f32).sum();
    assert_eq!(y[63], want);
    assert!(check(&out.trace).is_empty());
    profile(&out);
}

/// TCubeTiling's 32 int32 fields in the guide's order (table 6-1072).
fn cube_tiling(
    (m, n, k): (i32, i32, i32),
    (single_m, single_n): (i32, i32),
    (base_m, base_n, base_k): (i32, i32, i32),
    bias: bool,
) -> Vec<u8> {
    let mut f = [0i32; 32];
    f[0] = (m / single_m) * (n / single_n);
    f[1] = m;
    f[2] = n;
    f[3] = k;
    f[4] = k;
    f[5] = single_m;
    f[6] = single_n;
    f[7] = k;
    f[8] = base_m;
    f[9] = base_n;
    f[10] = base_k;
    f[11] = 2;
    f[12] = 2;
    f[13] = 1;
    f[14] = 1;
    // stepKa = stepKb = 2: two base blocks of K per L1 load (with K = 40
    // and baseK 16: a chunk of 32, then one of 8).
    f[15] = 2;
    f[16] = 2;
    f[17] = i32::from(bias);
    f[20] = 2;
    f[21] = 2;
    f[22] = 1;
    f.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The Matmul API on a 64 x 48 x 40 product with a bias, M split over the
/// two AIVs of one AI core (singleCoreM 32), base blocks 32 x 32 x 16
/// (tails in N and K): IterateAll into GM, Iterate/GetTensorC into UB
/// (doubled there), and the same kernel on the cube cores alone; every
/// result is the exact product (small integers), the checker is silent,
/// and the cube work is on the AICs.
#[test]
fn the_matmul_api_computes_on_the_cube_for_the_vector_cores() {
    let (m, n, k) = (64usize, 48usize, 40usize);
    let a = values(m * k, 3);
    let b = values(k * n, 4);
    let bias: Vec<f32> = (0..n).map(|j| (j % 5) as f32).collect();
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = bias[j] + (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum::<f32>();
        }
    }
    let tiling = cube_tiling((64, 48, 40), (32, 48), (32, 32, 16), true);
    let run = |name: &str, block_dim: u32, key: u64| {
        mix_launch_with(
            name,
            vec![T::F16.tensor(&a), T::F16.tensor(&b), T::F32.tensor(&bias)],
            vec![T::F32.tensor(&vec![f32::NAN; m * n])],
            block_dim,
            (16 << 20) + 64,
            key,
            tiling.clone(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let out = run("mm_api_gm", 1, 0);
    assert_eq!(T::F32.decode(&out.outputs[0]), want);
    let findings = check(&out.trace);
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(out.trace.blocks.len(), 3);
    let mmads = |b: usize| {
        out.trace.blocks[b]
            .instrs
            .iter()
            .filter(|i| matches!(i.kind, InstrKind::Mmad(_)))
            .count()
    };
    // 2 AIVs x (1 x 2 tiles) x 3 K blocks, all on the AIC.
    assert_eq!((mmads(0), mmads(1), mmads(2)), (12, 0, 0));
    profile(&out);

    let out = run("mm_api_ub", 1, 0);
    let doubled: Vec<f32> = want.iter().map(|v| 2.0 * v).collect();
    // The tiles in UB are 32 x 32 with rows of 32; the kernel copies the
    // 16 valid columns of the tail tiles.
    assert_eq!(T::F32.decode(&out.outputs[0]), doubled);
    let findings = check(&out.trace);
    assert!(findings.is_empty(), "{findings:?}");

    // Cube only: two AICs (Block Dim 2), each its own rows.
    let out = run("mm_api_cube_only", 2, 7);
    assert_eq!(out.trace.blocks.len(), 2);
    assert_eq!(T::F32.decode(&out.outputs[0]), want);
    assert!(check(&out.trace).is_empty());
}

/// dbL0A / dbL0B (guide 6.2.4.2.2 TCubeTiling: whether MTE1 of the left /
/// right matrix double-buffers, 1 or 2): with 2 the loads of consecutive K
/// blocks alternate between two L0A (L0B) buffers, so MTE1 fills one while
/// the cube reads the other; with 1 every load goes to the one buffer and
/// waits for the Mmad before it. Same product, half the L0A and L0B
/// addresses, and a longer run.
#[test]
fn the_matmul_api_double_buffers_l0_as_db_l0a_and_db_l0b_say() {
    let (m, n, k) = (64usize, 48usize, 40usize);
    let a = values(m * k, 3);
    let b = values(k * n, 4);
    let bias: Vec<f32> = (0..n).map(|j| (j % 5) as f32).collect();
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = bias[j] + (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum::<f32>();
        }
    }
    let run = |db: i32| {
        let mut tiling = cube_tiling((64, 48, 40), (32, 48), (32, 32, 16), true);
        // Fields 20 and 21: dbL0A, dbL0B.
        tiling[80..84].copy_from_slice(&db.to_le_bytes());
        tiling[84..88].copy_from_slice(&db.to_le_bytes());
        let out = mix_launch_with(
            "mm_api_gm",
            vec![T::F16.tensor(&a), T::F16.tensor(&b), T::F32.tensor(&bias)],
            vec![T::F32.tensor(&vec![f32::NAN; m * n])],
            1,
            (16 << 20) + 64,
            0,
            tiling,
        )
        .unwrap_or_else(|e| panic!("dbL0 {db}: {e}"));
        assert_eq!(T::F32.decode(&out.outputs[0]), want, "dbL0 {db}");
        assert!(check(&out.trace).is_empty(), "dbL0 {db}");
        let l0_addresses = |mem: Mem| {
            out.trace.blocks[0]
                .instrs
                .iter()
                .filter(|i| i.pipe == Pipe::Mte1)
                .flat_map(|i| i.writes.iter())
                .filter(|r| r.mem == mem)
                .map(|r| r.start)
                .collect::<std::collections::BTreeSet<u64>>()
                .len()
        };
        let duration = profile(&out).task_duration_us;
        (l0_addresses(Mem::L0a), l0_addresses(Mem::L0b), duration)
    };
    let (a1, b1, single) = run(1);
    let (a2, b2, double) = run(2);
    // A's 32-row tiles load as two fractal rows (two LoadData, two start
    // addresses per buffer); B's in one LoadData.
    assert_eq!((a1, b1, a2, b2), (2, 1, 4, 2));
    assert!(single > double, "dbL0 1: {single} us, 2: {double} us");
}

/// A float B that is not transposed goes to L0B by LoadDataWithTranspose
/// (guide 6.2.3.2.1.5): on 64 x 40 x 40 with base blocks 32 x 32 x 16 the
/// N tail (8 of a 16-column square) and the K tail (8 rows of a 16-row
/// square, in an L1 load of its own) are exercised; the result is the exact
/// product, every B load to L0B is a transposing one, and the checker is
/// silent.
#[test]
fn the_matmul_api_takes_a_float_b_as_it_is_in_gm() {
    let (m, n, k) = (64usize, 40usize, 40usize);
    let a = values(m * k, 7);
    let b = values(k * n, 8);
    let bias: Vec<f32> = (0..n).map(|j| (j % 3) as f32).collect();
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = bias[j] + (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum::<f32>();
        }
    }
    let tiling = cube_tiling((64, 40, 40), (32, 40), (32, 32, 16), true);
    let out = mix_launch_with(
        "mm_api_gm_f32",
        vec![T::F32.tensor(&a), T::F32.tensor(&b), T::F32.tensor(&bias)],
        vec![T::F32.tensor(&vec![f32::NAN; m * n])],
        1,
        (16 << 20) + 64,
        0,
        tiling,
    )
    .unwrap_or_else(|e| panic!("mm_api_gm_f32: {e}"));
    assert_eq!(T::F32.decode(&out.outputs[0]), want);
    let findings = check(&out.trace);
    assert!(findings.is_empty(), "{findings:?}");
    let aic = &out.trace.blocks[0].instrs;
    let loads = |api: &str| {
        aic.iter()
            .filter(|i| out.trace.locs[i.loc as usize].api == api)
            .count()
    };
    // Per AIV: 2 tiles x 3 K blocks; per block one LoadDataWithTranspose per
    // 16-row square (1, 1, 1: K blocks of 16, 16, 8).
    assert_eq!(loads("LoadDataWithTranspose"), 2 * 2 * 3);
}

/// The Matmul API keeps the blocks it loaded in L1 as the tiling's depth
/// and step say (guide 6.2.4.2.2 TCubeTiling: A1 holds depthA1 baseM x
/// baseK blocks, depthA1 = stepM * stepKa * db) and does not move them from
/// GM again: on a 64 x 48 x 32 product in 2 x 2 tiles of 32 x 32 with the
/// whole K in one load (baseK 16, stepKa = stepKb = 2), the GM -> L1 bytes
/// are A and B once each when A1/B1 hold two loads, and grow only by the
/// reloads the iterate order forces when they hold one. Every run gives the
/// exact product.
#[test]
fn the_matmul_api_reads_a_block_in_l1_from_gm_once() {
    let (m, n, k) = (64usize, 48usize, 32usize);
    let a = values(m * k, 5);
    let b = values(k * n, 6);
    let bias: Vec<f32> = (0..n).map(|j| (j % 3) as f32).collect();
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = bias[j] + (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum::<f32>();
        }
    }
    let gm_to_l1_with = |depth: i32, step: i32, order: i32| -> u64 {
        let mut tiling = cube_tiling((64, 48, 32), (64, 48), (32, 32, 16), true);
        let mut set = |field: usize, v: i32| {
            tiling[field * 4..field * 4 + 4].copy_from_slice(&v.to_le_bytes())
        };
        set(11, depth); // depthA1
        set(12, depth); // depthB1
        set(13, step); // stepM
        set(14, step); // stepN
        set(19, order); // iterateOrder
        let out = mix_launch_with(
            "mm_api_cube_only",
            vec![T::F16.tensor(&a), T::F16.tensor(&b), T::F32.tensor(&bias)],
            vec![T::F32.tensor(&vec![f32::NAN; m * n])],
            1,
            (16 << 20) + 64,
            7,
            tiling,
        )
        .unwrap_or_else(|e| panic!("depth {depth} order {order}: {e}"));
        assert_eq!(
            T::F32.decode(&out.outputs[0]),
            want,
            "depth {depth} order {order}"
        );
        assert!(check(&out.trace).is_empty(), "depth {depth} order {order}");
        out.trace
            .blocks
            .iter()
            .flat_map(|b| &b.instrs)
            .filter_map(|i| match i.kind {
                InstrKind::Dma {
                    dir: DmaDir::GmToL1,
                    bytes,
                    ..
                } => Some(bytes),
                _ => None,
            })
            .sum()
    };
    let gm_to_l1 = |depth: i32, order: i32| gm_to_l1_with(depth, 1, order);
    // A group (32 rows x 32 of K, half): 2 KB; B groups 32 x 32 and 32 x
    // 16: 2 KB and 1 KB; the bias row of each tile (GM -> C1): 128 or 64 B.
    let (a_grp, b_full, bias_rows) = (2048u64, 2048 + 1024u64, 2 * 128 + 2 * 64u64);
    // Two loads per buffer (db = 2): A and B each once.
    assert_eq!(gm_to_l1(4, 0), 2 * a_grp + b_full + bias_rows);
    // One load per buffer, M first: B stays over the M tiles of its
    // column, A goes m0 m1 m0 m1.
    assert_eq!(gm_to_l1(2, 0), 4 * a_grp + b_full + bias_rows);
    // One load per buffer, N first: A stays over the N tiles of its row.
    assert_eq!(gm_to_l1(2, 1), 2 * a_grp + 2 * b_full + bias_rows);
    // stepM = stepN = 2 (depth 2 x 2 x 1): one load of each holds both
    // tiles' blocks, the second tile reads its half of it.
    assert_eq!(gm_to_l1_with(4, 2, 0), 2 * a_grp + b_full + bias_rows);
}

/// MTE2 Preload (guide 3.10.4.14; MatmulConfig doMTE2Preload 2 of the MDL
/// template): with K in one load and two B1 buffers (depthB1 = stepN x
/// stepKb x 2), entering an N tile also loads the next tile's B, so its GM
/// -> L1 copy overlaps this tile's MTE1, cube and Fixpipe work. On a
/// 32 x 128 x 64 product in four 32 x 32 tiles (baseK 16, stepKa = stepKb
/// = 4: K in one load), both give the exact product and move the same GM
/// bytes; with preload the second tile's B copy is issued before the first
/// tile's Fixpipe (without: after it), and the launch is faster.
#[test]
fn mdl_mte2_preload_loads_the_next_tiles_b_while_this_tile_computes() {
    let (m, n, k) = (32usize, 128usize, 64usize);
    let a = values(m * k, 3);
    let b = values(k * n, 4);
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum::<f32>();
        }
    }
    let run = |kernel: &str| {
        let mut tiling = cube_tiling((32, 128, 64), (32, 128), (32, 32, 16), false);
        let mut set = |field: usize, v: i32| {
            tiling[field * 4..field * 4 + 4].copy_from_slice(&v.to_le_bytes())
        };
        set(11, 8); // depthA1 = stepM x stepKa x 2
        set(12, 8); // depthB1 = stepN x stepKb x 2
        set(15, 4); // stepKa
        set(16, 4); // stepKb
        let out = mix_launch_with(
            kernel,
            vec![
                T::F16.tensor(&a),
                T::F16.tensor(&b),
                T::F32.tensor(&vec![0f32; n]),
            ],
            vec![T::F32.tensor(&vec![f32::NAN; m * n])],
            1,
            (16 << 20) + 64,
            7,
            tiling,
        )
        .unwrap_or_else(|e| panic!("{kernel}: {e}"));
        assert_eq!(T::F32.decode(&out.outputs[0]), want, "{kernel}");
        let findings = check(&out.trace);
        assert!(findings.is_empty(), "{kernel}: {findings:?}");
        let instrs = &out.trace.blocks[0].instrs;
        let is_b_load = |i: &Instr| {
            matches!(
                i.kind,
                InstrKind::Dma {
                    dir: DmaDir::GmToL1,
                    ..
                }
            ) && i.reads.iter().any(|r| r.mem == Mem::Gm && r.space == 1)
        };
        let first_fixpipe = instrs
            .iter()
            .position(|i| {
                matches!(
                    i.kind,
                    InstrKind::Dma {
                        dir: DmaDir::L0cOut,
                        ..
                    }
                )
            })
            .unwrap_or_else(|| panic!("{kernel}: no Fixpipe"));
        let early_b = instrs[..first_fixpipe]
            .iter()
            .filter(|i| is_b_load(i))
            .count();
        let gm_to_l1: u64 = instrs
            .iter()
            .filter_map(|i| match i.kind {
                InstrKind::Dma {
                    dir: DmaDir::GmToL1,
                    bytes,
                    ..
                } => Some(bytes),
                _ => None,
            })
            .sum();
        (early_b, gm_to_l1, profile(&out).task_duration_us)
    };
    let (plain_early, plain_bytes, plain_us) = run("mm_api_mdl");
    let (pre_early, pre_bytes, pre_us) = run("mm_api_mdl_preload_b");
    assert_eq!((plain_early, pre_early), (1, 2));
    // A (32 x 64 halves) once, B (64 x 128 halves) once, either way.
    assert_eq!(plain_bytes, 32 * 64 * 2 + 64 * 128 * 2);
    assert_eq!(pre_bytes, plain_bytes);
    eprintln!("MTE2 Preload: {pre_us} us, without: {plain_us} us");
    assert!(
        pre_us < plain_us,
        "preload {pre_us} us, plain {plain_us} us"
    );
}

/// With two L1 buffers per matrix (depthA1 = stepM x stepKa x 2, the
/// guide's db = 2, 6.2.4.2.2 TCubeTiling) the Matmul API moves the next K
/// chunk from GM while MTE1 and the cube work on this one; with one it
/// cannot start before this chunk's last L1 -> L0 read. On 128 x 128 x 512
/// half in one 128 x 128 x 64 tile, 2 K blocks per L1 load (4 chunks of A
/// and B, 32 KB each): depth 4 starts the copy of chunk c + 1 before
/// chunk c's first L1 -> L0 load and keeps it in flight over chunk c's
/// Mmads; depth 2 starts it after chunk c's last load. Both
/// give the exact product with the checker silent, the same GM -> L1
/// bytes, and depth 4 ends sooner.
#[test]
fn the_matmul_api_copies_the_next_k_chunk_during_this_one_with_two_l1_buffers() {
    let (m, n, k) = (128usize, 128usize, 512usize);
    let a = values(m * k, 9);
    let b = values(k * n, 10);
    let bias: Vec<f32> = (0..n).map(|j| (j % 4) as f32).collect();
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = bias[j] + (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum::<f32>();
        }
    }
    // Per chunk c: (copy start, copy end) of A's and B's loads, first
    // L1 -> L0 load start, last L1 -> L0 load end, first Mmad start, last
    // Mmad end; and the makespan and GM -> L1 bytes.
    struct Chunks {
        copies: Vec<[(u64, u64); 2]>,
        loads: Vec<(u64, u64)>,
        mmads: Vec<(u64, u64)>,
        makespan: u64,
        gm_to_l1: u64,
    }
    let run = |depth: i32| -> Chunks {
        let mut tiling = cube_tiling((128, 128, 512), (128, 128), (128, 128, 64), true);
        tiling[11 * 4..11 * 4 + 4].copy_from_slice(&depth.to_le_bytes()); // depthA1
        tiling[12 * 4..12 * 4 + 4].copy_from_slice(&depth.to_le_bytes()); // depthB1
        let out = mix_launch_with(
            "mm_api_cube_only",
            vec![T::F16.tensor(&a), T::F16.tensor(&b), T::F32.tensor(&bias)],
            vec![T::F32.tensor(&vec![f32::NAN; m * n])],
            1,
            (16 << 20) + 64,
            7,
            tiling,
        )
        .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        assert_eq!(T::F32.decode(&out.outputs[0]), want, "depth {depth}");
        let findings = check(&out.trace);
        assert!(findings.is_empty(), "depth {depth}: {findings:?}");
        let sim = simulate(&out.trace, &hw(), &TimingOptions::deterministic()).unwrap();
        let tl = &sim.timeline.blocks[0];
        let span = |i: usize| {
            let s = tl
                .spans
                .iter()
                .find(|s| s.instr as usize == i)
                .unwrap_or_else(|| panic!("no span for instruction {i}"));
            (s.start, s.end)
        };
        let (mut copies, mut loads, mut mmads) = (Vec::new(), Vec::new(), Vec::new());
        let mut gm_to_l1 = 0;
        let mut block = 0usize; // K base block of the next Mmad
        for (i, ins) in out.trace.blocks[0].instrs.iter().enumerate() {
            match ins.kind {
                // A and B chunks (32 KB); the bias row (512 B) is not one.
                InstrKind::Dma {
                    dir: DmaDir::GmToL1,
                    bytes,
                    ..
                } => {
                    gm_to_l1 += bytes;
                    if bytes >= 4096 {
                        copies.push(span(i));
                    }
                }
                // A's and B's L1 -> L0 loads (2 and 4 KB); the bias row's
                // C1 -> C2 copy (512 B) is none.
                InstrKind::Dma {
                    dir: DmaDir::L1ToL0,
                    bytes,
                    ..
                } if bytes >= 1024 => {
                    let (s, e) = span(i);
                    let c = block / 2;
                    if loads.len() <= c {
                        loads.push((s, e));
                    }
                    loads[c].1 = loads[c].1.max(e);
                }
                InstrKind::Mmad(_) => {
                    let (s, e) = span(i);
                    let c = block / 2;
                    if mmads.len() <= c {
                        mmads.push((s, e));
                    }
                    mmads[c].1 = e;
                    block += 1;
                }
                _ => {}
            }
        }
        assert_eq!((copies.len(), block), (8, 8), "depth {depth}");
        Chunks {
            copies: copies.chunks(2).map(|p| [p[0], p[1]]).collect(),
            loads,
            mmads,
            makespan: sim.timeline.makespan,
            gm_to_l1,
        }
    };
    let two = run(4);
    let one = run(2);
    for c in 0..3 {
        // MTE2 is the slower pipe here (a 32 KB copy takes about three
        // chunks' Mmads), so B's copy queues behind A's: the first copy of
        // chunk c + 1 is the one that must be under way over chunk c.
        let (start, end) = two.copies[c + 1][0];
        assert!(
            start < two.loads[c].0 && end > two.mmads[c].0,
            "depth 4: A chunk {} copy {start}..{end} not over chunk {c} (loads from {}, Mmads {:?})",
            c + 1,
            two.loads[c].0,
            two.mmads[c]
        );
        for (x, name) in [(0, "A"), (1, "B")] {
            let (start, _) = one.copies[c + 1][x];
            assert!(
                start >= one.loads[c].1,
                "depth 2: {name} chunk {} copy starts at {start}, before chunk {c}'s loads end at {}",
                c + 1,
                one.loads[c].1
            );
        }
    }
    assert_eq!(two.gm_to_l1, one.gm_to_l1);
    assert!(
        two.makespan < one.makespan,
        "depth 4 {} cycles, depth 2 {}",
        two.makespan,
        one.makespan
    );
}
