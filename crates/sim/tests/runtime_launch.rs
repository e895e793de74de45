//! End-to-end tests of the functional runtime: small AscendC kernels
//! compiled with g++ and launched in-process with a fixed tiling.

use ascendopt_op::Dtype;
use ascendopt_sim::launch::{run_kernel, JobTensor, LaunchFailure, LaunchJob, Platform, TilingInfo};
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
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
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
    b.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
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
    let out = run_kernel(&job(&so, "copy_kernel", vec![f32_tensor(&x)], vec![f32_tensor(&y)]), &tiling(2)).unwrap();
    let got = f32s(&out.outputs[0]);
    let one = run_kernel(&job(&so, "copy_kernel", vec![f32_tensor(&x)], vec![f32_tensor(&y)]), &tiling(1)).unwrap();
    assert_eq!(one.outputs, out.outputs);
    for (i, (g, e)) in got.iter().zip(&x).enumerate() {
        let want = if i % 256 == 0 { e + 1.0 } else { *e };
        assert_eq!(*g, want, "element {i}");
    }
    assert_eq!(out.trace.blocks.len(), 2);
    let b0 = &one.trace.blocks[0].instrs;
    // per tile: DMA in, EnQue set, DeQue wait, GetValue, SetValue, DMA out,
    // FreeTensor set (+ an AllocTensor wait from the third tile on).
    assert!(b0.iter().any(|i| matches!(i.kind, InstrKind::SetFlag { origin: SyncOrigin::EnQue, .. })));
    assert!(b0.iter().any(|i| matches!(i.kind, InstrKind::WaitFlag { origin: SyncOrigin::AllocTensor, .. })));
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
    let err = run_kernel(&job(&so, "copy_kernel", vec![f32_tensor(&x)], vec![f32_tensor(&x)]), &tiling(2)).unwrap_err();
    match err {
        LaunchFailure::Fault { block, message, loc } => {
            assert_eq!(block, 1);
            assert!(message.contains("outside") || message.contains("past its end"), "{message}");
            let loc = loc.unwrap();
            assert_eq!(loc.api, "DataCopy");
            assert_eq!(loc.line, line_of(&src, "DataCopy(t, xg[per]"));
        }
        other => panic!("expected a fault, got {other:?}"),
    }
}
