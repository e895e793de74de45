//! End-to-end checks of the timing model and the race checker on real
//! AscendC kernels: compiled with g++ against the emulation headers, run by
//! the functional runtime (in-process: these kernels are ours and trusted),
//! then timed with `timing::simulate` and checked with `check::check`.
//!
//! One shared object holds every variant (template parameters), so the
//! suite compiles once.

use ascendopt_op::Dtype;
use ascendopt_sim::check::check;
use ascendopt_sim::launch::{run_kernel, JobTensor, LaunchJob, LaunchOutput, TilingInfo};
use ascendopt_sim::timing::{chrome_trace_json, simulate, HwProfile, Profile, TimingOptions};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const KERNELS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

// add_custom ([SAMPLE] shape of the kernel): z = x + y, then EXTRA in-place
// Exp per tile to balance compute against copies.
template <int BUFFER_NUM, int EXTRA, bool BARRIER, bool DROP_OUT_QUEUE>
class KernelAdd {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
    GlobalTensor<int32_t> t;
    t.SetGlobalBuffer((__gm__ int32_t*)tiling, 2);
    int32_t total = t.GetValue(0);
    tile = t.GetValue(1);
    blockLen = total / (int32_t)GetBlockNum();
    xGm.SetGlobalBuffer((__gm__ half*)x + blockLen * GetBlockIdx(), blockLen);
    yGm.SetGlobalBuffer((__gm__ half*)y + blockLen * GetBlockIdx(), blockLen);
    zGm.SetGlobalBuffer((__gm__ half*)z + blockLen * GetBlockIdx(), blockLen);
    pipe.InitBuffer(inQueueX, BUFFER_NUM, tile * sizeof(half));
    pipe.InitBuffer(inQueueY, BUFFER_NUM, tile * sizeof(half));
    pipe.InitBuffer(outQueueZ, BUFFER_NUM, tile * sizeof(half));
  }
  __aicore__ inline void Process() {
    for (int32_t i = 0; i < blockLen / tile; i++) {
      CopyIn(i);
      Compute(i);
      CopyOut(i);
      if (BARRIER) {
        PipeBarrier<PIPE_ALL>();  // LINE_BARRIER
      }
    }
  }

 private:
  __aicore__ inline void CopyIn(int32_t i) {
    LocalTensor<half> x = inQueueX.template AllocTensor<half>();
    LocalTensor<half> y = inQueueY.template AllocTensor<half>();
    DataCopy(x, xGm[i * tile], tile);  // LINE_COPY_X
    DataCopy(y, yGm[i * tile], tile);
    inQueueX.EnQue(x);
    inQueueY.EnQue(y);
  }
  __aicore__ inline void Compute(int32_t i) {
    LocalTensor<half> x = inQueueX.template DeQue<half>();
    LocalTensor<half> y = inQueueY.template DeQue<half>();
    z = outQueueZ.template AllocTensor<half>();
    Add(z, x, y, tile);  // LINE_ADD
    for (int e = 0; e < EXTRA; e++) {
      Exp(z, z, tile);
    }
    if (!DROP_OUT_QUEUE) {
      outQueueZ.EnQue(z);
    }
    inQueueX.FreeTensor(x);
    inQueueY.FreeTensor(y);
  }
  __aicore__ inline void CopyOut(int32_t i) {
    if (!DROP_OUT_QUEUE) {
      z = outQueueZ.template DeQue<half>();
    }
    DataCopy(zGm[i * tile], z, tile);  // LINE_COPY_Z
    outQueueZ.FreeTensor(z);
  }

  TPipe pipe;
  TQue<TPosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
  TQue<TPosition::VECOUT, BUFFER_NUM> outQueueZ;
  GlobalTensor<half> xGm, yGm, zGm;
  LocalTensor<half> z;
  int32_t blockLen = 0;
  int32_t tile = 0;
};

#define ADD_ENTRY(name, B, E, BAR, DROP)                                                      \
  extern "C" __global__ __aicore__ void name(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR ws,   \
                                             GM_ADDR tiling) {                              \
    KernelAdd<B, E, BAR, DROP> op;                                                          \
    op.Init(x, y, z, tiling);                                                               \
    op.Process();                                                                           \
  }

ADD_ENTRY(add_b1_exp7, 1, 7, false, false)
ADD_ENTRY(add_b2_exp7, 2, 7, false, false)
ADD_ENTRY(add_b2, 2, 0, false, false)
ADD_ENTRY(add_b2_barrier, 2, 0, true, false)
ADD_ENTRY(add_b2_drop_out_queue, 2, 0, false, true)

// 4096 floats doubled: per element on the scalar unit, or one Muls.
extern "C" __global__ __aicore__ void double_scalar(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 2 * 4096 * sizeof(float));
  LocalTensor<float> a = buf.Get<float>();
  LocalTensor<float> b = a[4096];
  for (int i = 0; i < 4096; i++) {
    b.SetValue(i, a.GetValue(i) * 2.0f);
  }
}
extern "C" __global__ __aicore__ void double_vector(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 2 * 4096 * sizeof(float));
  LocalTensor<float> a = buf.Get<float>();
  LocalTensor<float> b = a[4096];
  Muls(b, a, 2.0f, 4096);
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

fn line_of(needle: &str) -> u32 {
    KERNELS.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

fn f16_tensor(n: usize) -> JobTensor {
    JobTensor {
        dtype: Dtype::Float16,
        shape: vec![n as i64],
        data: (0..n)
            .flat_map(|i| half::f16::from_f32((i % 7) as f32 * 0.25).to_le_bytes())
            .collect(),
    }
}

fn f32_tensor(n: usize) -> JobTensor {
    JobTensor {
        dtype: Dtype::Float32,
        shape: vec![n as i64],
        data: vec![0; n * 4],
    }
}

/// Runs a kernel of the shared object with tiling data `[total, tile]`.
fn launch(
    name: &str,
    inputs: Vec<JobTensor>,
    outputs: Vec<JobTensor>,
    blocks: u32,
    total: i32,
    tile: i32,
) -> LaunchOutput {
    let job = LaunchJob {
        host_lib: PathBuf::new(),
        kernel_lib: kernels().to_path_buf(),
        kernel_name: name.into(),
        op_type: None,
        inputs,
        outputs,
        attrs: vec![],
        platform: ascendopt_sim::launch::platform_of(&hw()),
        seed: 11,
        max_instrs_per_block: 1_000_000,
        knobs: Vec::new(),
        check_in_worker: false,
        tiling_only: false,
        layout: None,
        describe: false,
    };
    let data = [total.to_le_bytes(), tile.to_le_bytes()].concat();
    let tiling = TilingInfo {
        block_dim: blocks,
        tiling_key: 0,
        data,
        workspace: 0,
        output_init: Vec::new(),
    };
    run_kernel(&job, &tiling).unwrap()
}

fn launch_add(name: &str, blocks: u32, total: usize, tile: usize) -> LaunchOutput {
    launch(
        name,
        vec![f16_tensor(total), f16_tensor(total)],
        vec![f16_tensor(total)],
        blocks,
        total as i32,
        tile as i32,
    )
}

fn profile(out: &LaunchOutput) -> Profile {
    simulate(&out.trace, &hw(), &TimingOptions::deterministic())
        .unwrap()
        .profile
}

#[test]
fn double_buffering_a_balanced_add_speeds_it_up_1_3_to_3_times() {
    // 16 tiles of 8192 halves; 7 Exp per tile make PIPE_V about as busy as
    // MTE2 ([G §3.8.4.1]: CopyIn, Compute, CopyOut of similar length).
    let one = profile(&launch_add("add_b1_exp7", 1, 16 * 8192, 8192));
    let two = profile(&launch_add("add_b2_exp7", 1, 16 * 8192, 8192));
    let row = one.blocks[0].aiv.clone().unwrap();
    let balance = row.vec_time_us / row.mte2_time_us;
    assert!((0.5..2.0).contains(&balance), "vec/mte2 {balance}");
    let speedup = one.task_duration_us / two.task_duration_us;
    assert!((1.3..=3.0).contains(&speedup), "speedup {speedup}");
}

#[test]
fn add_custom_16m_fp16_scales_to_8_cores_and_runs_from_l2_at_48() {
    let total = 16 * 1024 * 1024 - (16 * 1024 * 1024) % (48 * 8192);
    let t1 = profile(&launch_add("add_b2", 1, total, 8192));
    let t8 = profile(&launch_add("add_b2", 8, total, 8192));
    let t48 = profile(&launch_add("add_b2", 48, total, 8192));
    let speedup = t1.task_duration_us / t8.task_duration_us;
    assert!((7.2..=8.0).contains(&speedup), "1 -> 8 cores: {speedup}");
    // 96 MiB: all in L2 (a benchmark loop leaves it there), so the 48
    // cores beat the HBM bandwidth, bound by their own DMA paths (45 GB/s
    // a direction each); nothing touches HBM.
    let hbm = hw().hbm_gbps();
    assert!(t48.achieved_gbps > hbm, "{} GB/s", t48.achieved_gbps);
    assert!(
        t48.achieved_gbps <= 48.0 * 2.0 * 45.0,
        "{} GB/s",
        t48.achieved_gbps
    );
    assert_eq!(
        (t48.hbm_read_bytes, t48.hbm_write_bytes),
        (Some(0), Some(0))
    );
    assert_eq!(t48.gm_read_bytes, Some(2 * total as u64 * 2));
    assert_eq!(t48.gm_write_bytes, Some(total as u64 * 2));
}

#[test]
fn deleting_the_output_enque_deque_pair_is_reported_as_a_race() {
    let clean = launch_add("add_b2", 2, 8 * 4096, 4096);
    assert_eq!(check(&clean.trace), vec![]);
    let broken = launch_add("add_b2_drop_out_queue", 2, 8 * 4096, 4096);
    // The CPU result is still right: the race only exists on hardware.
    assert_eq!(broken.outputs, clean.outputs);
    let findings = check(&broken.trace);
    assert!(!findings.is_empty());
    assert!(findings.iter().all(|f| f.kind == "race"), "{findings:#?}");
    let msg = &findings[0].message;
    let add = format!(
        "Add at {}:{}",
        kernels().with_file_name("k.cpp").display(),
        line_of("LINE_ADD")
    );
    assert!(msg.contains(&add), "{msg}\nexpected {add}");
    assert!(
        msg.contains(&format!(
            "DataCopy at {}:{}",
            kernels().with_file_name("k.cpp").display(),
            line_of("LINE_COPY_Z")
        )),
        "{msg}"
    );
    assert!(msg.contains("PIPE_V") && msg.contains("PIPE_MTE3"), "{msg}");
}

#[test]
fn deleting_a_redundant_pipe_all_barrier_is_faster_and_race_free() {
    let with = launch_add("add_b2_barrier", 1, 16 * 4096, 4096);
    let without = launch_add("add_b2", 1, 16 * 4096, 4096);
    assert_eq!(check(&with.trace), vec![]);
    assert_eq!(check(&without.trace), vec![]);
    let (a, b) = (
        profile(&with).task_duration_us,
        profile(&without).task_duration_us,
    );
    assert!(b < a * 0.85, "without {b} vs with {a}");
}

#[test]
fn a_getvalue_setvalue_loop_is_at_least_10x_slower_than_muls() {
    let scalar = launch(
        "double_scalar",
        vec![f32_tensor(8)],
        vec![f32_tensor(8)],
        1,
        0,
        0,
    );
    let vector = launch(
        "double_vector",
        vec![f32_tensor(8)],
        vec![f32_tensor(8)],
        1,
        0,
        0,
    );
    let (s, v) = (profile(&scalar), profile(&vector));
    let ratio = s.core_span_us / v.core_span_us;
    assert!(ratio >= 10.0, "ratio {ratio}");
    assert_eq!(check(&scalar.trace), vec![]);
}

#[test]
fn deterministic_latency_and_a_chrome_trace_with_a_track_per_used_pipe() {
    let out = launch_add("add_b2", 2, 4 * 4096, 4096);
    let hw = hw();
    let a = simulate(&out.trace, &hw, &TimingOptions::deterministic()).unwrap();
    let again = launch_add("add_b2", 2, 4 * 4096, 4096);
    let b = simulate(&again.trace, &hw, &TimingOptions::deterministic()).unwrap();
    assert_eq!(a.profile, b.profile);

    let json: serde_json::Value = serde_json::from_str(&chrome_trace_json(&out.trace, &a)).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    // Only pipes that did something have a track: no cube pipes here.
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"PIPE_V") && names.contains(&"PIPE_MTE2"),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| matches!(
            n.split(' ').next(),
            Some("PIPE_M" | "PIPE_MTE1" | "PIPE_FIX")
        )),
        "{names:?}"
    );
    ascendopt_sim::timing::chrome::check_nesting(&json).unwrap();
    let copy_line = format!("k.cpp:{}", line_of("LINE_COPY_X"));
    assert!(
        events.iter().any(|e| e["ph"] == "X"
            && e["name"] == "DataCopy"
            && e["args"]["loc"]
                .as_str()
                .unwrap_or("")
                .ends_with(&copy_line)),
        "no DataCopy event at {copy_line}"
    );
    assert!(events.iter().any(|e| e["ph"] == "X" && e["name"] == "Add"));
}
