//! End-to-end tests of the functional runtime: small AscendC kernels
//! compiled with g++ and launched in-process with a fixed tiling.

use ascendopt_op::Dtype;
use ascendopt_sim::launch::{
    run_kernel, JobTensor, LaunchFailure, LaunchJob, Platform, TilingInfo,
};
use ascendopt_sim::trace::{InstrKind, SyncOrigin};
use std::path::{Path, PathBuf};
use std::process::Command;

fn sim_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles a kernel source into a shared library in a temp dir.
fn compile(src: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cpp = dir.path().join("k.cpp");
    std::fs::write(&cpp, src).unwrap();
    let so = dir.path().join("libk.so");
    let out = Command::new("g++")
        .args(["-std=c++17", "-O1", "-fPIC", "-shared", "-I"])
        .arg(sim_dir().join("include"))
        .arg(&cpp)
        .arg(sim_dir().join("runtime_src/kernel_entry.cpp"))
        .arg("-o")
        .arg(&so)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, so)
}

fn platform() -> Platform {
    Platform {
        soc_version: "Ascend910B2".into(),
        core_num_aiv: 48,
        core_num_aic: 24,
        ub_size: 196_352,
        l1_size: 524_288,
        l0a_size: 65_536,
        l0b_size: 65_536,
        l0c_size: 131_072,
        l2_size: 201_326_592,
        hbm_size: 64 << 30,
    }
}

fn f32_tensor(v: &[f32]) -> JobTensor {
    JobTensor {
        dtype: Dtype::Float32,
        shape: vec![v.len() as i64],
        data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn job(so: &Path, name: &str, inputs: Vec<JobTensor>, outputs: Vec<JobTensor>) -> LaunchJob {
    LaunchJob {
        host_lib: PathBuf::new(),
        kernel_lib: so.to_path_buf(),
        kernel_name: name.into(),
        op_type: None,
        inputs,
        outputs,
        attrs: vec![],
        platform: platform(),
        seed: 7,
        max_instrs_per_block: 100_000,
        knobs: Vec::new(),
        check_in_worker: false,
        tiling_only: false,
        describe: false,
    }
}

/// 1-based line of the first line of `src` containing `needle`.
fn line_of(src: &str, needle: &str) -> u32 {
    src.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

fn tiling(block_dim: u32) -> TilingInfo {
    TilingInfo {
        block_dim,
        tiling_key: 0,
        data: vec![0; 8],
        workspace: 0,
    }
}

const COPY_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void copy_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 2, 256 * sizeof(float));
  GlobalTensor<float> xg, yg;
  int64_t per = 1024 / GetBlockNum();
  xg.SetGlobalBuffer((__gm__ float*)x + per * GetBlockIdx(), per);
  yg.SetGlobalBuffer((__gm__ float*)y + per * GetBlockIdx(), per);
  for (int i = 0; i < per / 256; i++) {
    auto t = q.AllocTensor<float>();
    DataCopy(t, xg[i * 256], 256);
    q.EnQue(t);
    auto u = q.DeQue<float>();
    u.SetValue(0, u.GetValue(0) + 1.0f);
    DataCopy(yg[i * 256], u, 256);
    q.FreeTensor(u);
  }
#ifdef OOB
  if (GetBlockIdx() == 1) {
    auto t = q.AllocTensor<float>();
    DataCopy(t, xg[per], 256);
  }
#endif
}
"#;

#[test]
fn copy_kernel_runs_on_every_block_and_records_queue_flags() {
    let (_d, so) = compile(COPY_KERNEL);
    let x: Vec<f32> = (0..1024).map(|i| i as f32 * 0.5).collect();
    let y = vec![f32::NAN; 1024];
    let out = run_kernel(
        &job(
            &so,
            "copy_kernel",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&y)],
        ),
        &tiling(2),
    )
    .unwrap();
    let got = f32s(&out.outputs[0]);
    let one = run_kernel(
        &job(
            &so,
            "copy_kernel",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&y)],
        ),
        &tiling(1),
    )
    .unwrap();
    assert_eq!(one.outputs, out.outputs);
    for (i, (g, e)) in got.iter().zip(&x).enumerate() {
        let want = if i % 256 == 0 { e + 1.0 } else { *e };
        assert_eq!(*g, want, "element {i}");
    }
    assert_eq!(out.trace.blocks.len(), 2);
    let b0 = &one.trace.blocks[0].instrs;
    // per tile: DMA in, EnQue set, DeQue wait, GetValue, SetValue, DMA out,
    // FreeTensor set (+ an AllocTensor wait from the third tile on).
    assert!(b0.iter().any(|i| matches!(
        i.kind,
        InstrKind::SetFlag {
            origin: SyncOrigin::EnQue,
            ..
        }
    )));
    assert!(b0.iter().any(|i| matches!(
        i.kind,
        InstrKind::WaitFlag {
            origin: SyncOrigin::AllocTensor,
            ..
        }
    )));
    let loc = out.trace.loc_of(&b0[0]).unwrap();
    assert_eq!(loc.api, "DataCopy");
    assert!(loc.file.ends_with("k.cpp"), "{}", loc.file);
    assert_eq!(loc.line, line_of(COPY_KERNEL, "DataCopy(t, xg[i * 256]"));
}

#[test]
fn gm_out_of_bounds_is_a_fault_naming_the_line() {
    let src = format!("#define OOB\n{COPY_KERNEL}");
    let (_d, so) = compile(&src);
    let x = vec![1.0f32; 1024];
    let err = run_kernel(
        &job(
            &so,
            "copy_kernel",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&x)],
        ),
        &tiling(2),
    )
    .unwrap_err();
    match err {
        LaunchFailure::Fault {
            block,
            message,
            loc,
        } => {
            assert_eq!(block, 1);
            assert!(
                message.contains("outside") || message.contains("past its end"),
                "{message}"
            );
            let loc = loc.unwrap();
            assert_eq!(loc.api, "DataCopy");
            assert_eq!(loc.line, line_of(&src, "DataCopy(t, xg[per]"));
        }
        other => panic!("expected a fault, got {other:?}"),
    }
}

const COPY_FORMS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
// x: 256 floats. y: 256 floats (outputs of the strided forms, see test).
extern "C" __global__ __aicore__ void copy_forms(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 4096);
  LocalTensor<float> ub = buf.Get<float>();
  GlobalTensor<float> xg, yg, zg;
  xg.SetGlobalBuffer((__gm__ float*)x, 256);
  yg.SetGlobalBuffer((__gm__ float*)y, 256);
  zg.SetGlobalBuffer((__gm__ float*)z, 64);
  // 1) 4 bursts of 1 block (8 floats), skipping 1 block between source
  //    bursts and leaving 2 blocks between destination bursts.
  DataCopyParams p(4, 1, 1, 2);
  DataCopy(ub, xg, p);
  PipeBarrier<PIPE_ALL>();
  // write the 4 destination bursts back contiguously: 4 bursts of 1 block,
  // source gap 2 blocks, destination gap 0.
  DataCopyParams q(4, 1, 2, 0);
  DataCopy(yg, ub, q);
  PipeBarrier<PIPE_ALL>();
  // 2) DataCopyPad GM->UB: 3 bursts of 5 floats (20 B) with a GM stride of
  //    4 bytes; each burst padded to 32 B with padding value 9.
  DataCopyExtParams e(3, 20, 4, 0, 0);
  DataCopyPadExtParams<float> pad(true, 0, 2, 9.0f);
  LocalTensor<float> ub2 = ub[512];
  DataCopyPad(ub2, xg, e, pad);
  PipeBarrier<PIPE_ALL>();
  // copy the three padded blocks (24 floats) out in full ...
  DataCopy(zg, ub2, 24);
  PipeBarrier<PIPE_ALL>();
  // ... and unpad: 3 bursts of 20 B from UB (each in its own 32 B block)
  // into GM at z[32..47] packed tight.
  DataCopyExtParams o(3, 20, 0, 0, 0);
  DataCopyPad(zg[32], ub2, o);
  // 3) no padding asked: dummies repeat the burst's first element.
  DataCopyExtParams e2(1, 12, 0, 0, 0);
  DataCopyPadExtParams<float> nopad(false, 0, 0, 0.0f);
  LocalTensor<float> ub3 = ub[768];
  PipeBarrier<PIPE_ALL>();
  DataCopyPad(ub3, xg[100], e2, nopad);
  PipeBarrier<PIPE_ALL>();
  DataCopy(zg[56], ub3, 8);
}
"#;

#[test]
fn datacopy_params_gaps_and_datacopypad_padding() {
    let (_d, so) = compile(COPY_FORMS);
    let x: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let y = vec![-1.0f32; 256];
    let z = vec![-1.0f32; 64];
    let out = run_kernel(
        &job(
            &so,
            "copy_forms",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&y), f32_tensor(&z)],
        ),
        &tiling(1),
    )
    .unwrap();
    let y = f32s(&out.outputs[0]);
    // source bursts start at x[0], x[16], x[32], x[48] (1 block + 1 gap).
    let want: Vec<f32> = [0, 16, 32, 48]
        .iter()
        .flat_map(|&s| (s..s + 8).map(|v| v as f32))
        .collect();
    assert_eq!(&y[..32], &want[..]);
    assert!(y[32..].iter().all(|&v| v == -1.0));
    let z = f32s(&out.outputs[1]);
    // bursts of 5 floats at x[0], x[6], x[12] (20 B + 4 B stride), each
    // followed by 3 pad values (2 right padding + 1 dummy) = 9.
    let mut want = Vec::new();
    for s in [0, 6, 12] {
        want.extend((s..s + 5).map(|v| v as f32));
        want.extend([9.0; 3]);
    }
    assert_eq!(&z[..24], &want[..]);
    let packed: Vec<f32> = [0, 6, 12]
        .iter()
        .flat_map(|&s| (s..s + 5).map(|v| v as f32))
        .collect();
    assert_eq!(&z[32..47], &packed[..]);
    assert_eq!(z[47], -1.0, "unpadding must not write past the payload");
    assert_eq!(
        &z[56..64],
        &[100.0, 101.0, 102.0, 100.0, 100.0, 100.0, 100.0, 100.0]
    );
}

const FAULTS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void faults(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
#if defined(UB_OVERFLOW)
  TQue<TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 2, 120 * 1024);
#elif defined(UNALIGNED)
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 1024);
  LocalTensor<float> t = b.Get<float>();
  DataCopy(t[3], xg, 16);
#elif defined(DEQUE_EMPTY)
  TQue<TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 2, 1024);
  LocalTensor<float> t = q.DeQue<float>();
#elif defined(TRAP)
  ASSERT(GetBlockIdx() < 0);
#elif defined(SPIN)
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 1024);
  LocalTensor<float> t = b.Get<float>();
  for (;;) t.SetValue(0, 1.0f);
#elif defined(SYNCALL)
  if (GetBlockIdx() == 0) return;
  SyncAll();
#endif
}
"#;

fn fault_of(define: &str, blocks: u32) -> (String, Option<u32>, String) {
    let src = format!("#define {define}\n{FAULTS}");
    let (_d, so) = compile(&src);
    let x = vec![0.0f32; 64];
    match run_kernel(
        &job(&so, "faults", vec![f32_tensor(&x)], vec![f32_tensor(&x)]),
        &tiling(blocks),
    ) {
        Err(LaunchFailure::Fault { message, loc, .. }) => {
            let line = loc.as_ref().map(|l| l.line);
            (message, line, src)
        }
        other => panic!("{define}: expected a fault, got {other:?}"),
    }
}

#[test]
fn ub_overflow_names_sizes_and_line() {
    let (msg, line, src) = fault_of("UB_OVERFLOW", 1);
    assert!(
        msg.contains("UB overflow") && msg.contains("245760"),
        "{msg}"
    );
    assert_eq!(line, Some(line_of(&src, "InitBuffer(q, 2, 120 * 1024)")));
}

#[test]
fn unaligned_ub_address_is_rejected() {
    let (msg, line, src) = fault_of("UNALIGNED", 1);
    assert!(msg.contains("not 32-byte aligned"), "{msg}");
    assert_eq!(line, Some(line_of(&src, "DataCopy(t[3]")));
}

#[test]
fn deque_of_empty_queue_is_a_deadlock() {
    let (msg, _, _) = fault_of("DEQUE_EMPTY", 1);
    assert!(
        msg.contains("deadlock") && msg.contains("empty queue"),
        "{msg}"
    );
}

#[test]
fn assert_traps() {
    let (msg, line, src) = fault_of("TRAP", 2);
    assert!(msg.contains("assertion failed"), "{msg}");
    assert_eq!(line, Some(line_of(&src, "ASSERT(")));
}

#[test]
fn endless_api_loop_hits_the_instruction_limit() {
    let (msg, _, _) = fault_of("SPIN", 1);
    assert!(msg.contains("instruction limit"), "{msg}");
}

#[test]
fn syncall_with_a_missing_block_is_a_deadlock() {
    let (msg, _, _) = fault_of("SYNCALL", 4);
    assert!(msg.contains("SyncAll"), "{msg}");
}

const SYNC_AND_ATOMICS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
// 4 blocks. y[0..8): every block atomically adds (idx+1) to all 8 floats.
// z[b*8..b*8+8): after SyncAll, block b reads the value block (b+1)%4 wrote
// into w[] before the barrier.
extern "C" __global__ __aicore__ void sync_atomics(GM_ADDR y, GM_ADDR z, GM_ADDR w, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<float> t = buf.Get<float>();
  int64_t b = GetBlockIdx();
  GlobalTensor<float> yg, zg, wg;
  yg.SetGlobalBuffer((__gm__ float*)y, 8);
  zg.SetGlobalBuffer((__gm__ float*)z, 32);
  wg.SetGlobalBuffer((__gm__ float*)w, 32);
  for (int i = 0; i < 8; i++) t.SetValue(i, (float)(b + 1));
  TEventID ev = GetTPipePtr()->FetchEventID(HardEvent::S_MTE3);
  SetFlag<HardEvent::S_MTE3>(ev);
  WaitFlag<HardEvent::S_MTE3>(ev);
  SetAtomicAdd<float>();
  DataCopy(yg, t, 8);
  SetAtomicNone();
  DataCopy(wg[b * 8], t, 8);
  SyncAll();
  LocalTensor<int32_t> bits = t.ReinterpretCast<int32_t>();
  int64_t peer = (b + 1) % GetBlockNum();
  float v = wg.GetValue(peer * 8);
  zg.SetValue(b * 8, v);
  if (b == 0) printf("blocks=%d bits=%x\n", (int)GetBlockNum(), (unsigned)bits.GetValue(0));
}
"#;

#[test]
fn atomic_add_syncall_scalar_gm_and_printf() {
    let (_d, so) = compile(SYNC_AND_ATOMICS);
    let y = vec![0.5f32; 8];
    let z = vec![0.0f32; 32];
    let w = vec![0.0f32; 32];
    let out = run_kernel(
        &job(
            &so,
            "sync_atomics",
            vec![],
            vec![f32_tensor(&y), f32_tensor(&z), f32_tensor(&w)],
        ),
        &tiling(4),
    )
    .unwrap();
    let y = f32s(&out.outputs[0]);
    assert_eq!(y, vec![0.5 + 1.0 + 2.0 + 3.0 + 4.0; 8]);
    let z = f32s(&out.outputs[1]);
    for b in 0..4 {
        assert_eq!(z[b * 8], ((b + 1) % 4 + 1) as f32, "block {b}");
    }
    assert_eq!(
        out.printed,
        format!("blocks=4 bits={:x}\n", 1.0f32.to_bits())
    );
    let b0 = &out.trace.blocks[0].instrs;
    assert!(b0
        .iter()
        .any(|i| matches!(i.kind, InstrKind::SyncAll { generation: 0 })));
    assert!(b0
        .iter()
        .any(|i| matches!(i.kind, InstrKind::Dma { atomic: true, .. })));
}
