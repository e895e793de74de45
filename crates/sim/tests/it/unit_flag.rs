//! unitFlag on Mmad and Fixpipe (guide 6.2.3.2.1.12 table 6-197 and
//! 6.2.3.2.2.1: with it the hardware moves each fractal of C out as soon
//! as the cube finished it; Mmad 3 on its last call, Fixpipe 3): a
//! 128 x 128 x 128 half tile with one Mmad into a CO1 buffer and one
//! Fixpipe out of it. With unitFlag on both and no flag between them the
//! checker is silent and the Fixpipe overlaps the Mmad; without unitFlag
//! the same kernel is a race; with a flag it waits for the whole Mmad.

use ascendopt_op::Dtype;
use ascendopt_sim::check::check;
use ascendopt_sim::launch::{run_kernel, JobTensor, LaunchJob, LaunchOutput, TilingInfo};
use ascendopt_sim::timing::{simulate, HwProfile, SimResult, TimingOptions};
use ascendopt_sim::trace::{InstrKind, Pipe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const KERNELS: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;

// A and B (all ones here) straight from GM into L0A/L0B, C = A x B into a
// TBuf in CO1, out to GM as float. UNIT: unitFlag 3 on the Mmad and the
// Fixpipe; SYNC: an M -> FIX flag between them.
template <bool UNIT, bool SYNC>
__aicore__ inline void UnitTile(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  constexpr uint32_t S = 128;
  TPipe pipe;
  TBuf<TPosition::A2> bufA;
  TBuf<TPosition::B2> bufB;
  TBuf<TPosition::CO1> bufC;
  pipe.InitBuffer(bufA, S * S * sizeof(half));
  pipe.InitBuffer(bufB, S * S * sizeof(half));
  pipe.InitBuffer(bufC, S * S * sizeof(float));
  GlobalTensor<half> aGm, bGm;
  GlobalTensor<float> cGm;
  aGm.SetGlobalBuffer((__gm__ half*)a, S * S);
  bGm.SetGlobalBuffer((__gm__ half*)b, S * S);
  cGm.SetGlobalBuffer((__gm__ float*)c, S * S);
  LocalTensor<half> a2 = bufA.Get<half>();
  LocalTensor<half> b2 = bufB.Get<half>();
  LocalTensor<float> c1 = bufC.Get<float>();
  LoadData(a2, aGm, LoadData2DParams(0, S * S / 256, 1, 0, 0, false, 0));
  LoadData(b2, bGm, LoadData2DParams(0, S * S / 256, 1, 0, 0, false, 0));
  SetFlag<HardEvent::MTE2_M>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_M>(EVENT_ID0);
  MmadParams p(S, S, S);
  p.unitFlag = UNIT ? 3 : 0;
  Mmad(c1, a2, b2, p);
  if (SYNC) {
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
  }
  FixpipeParamsV220 fp(S, S, S, S, false);
  fp.unitFlag = UNIT ? 3 : 0;
  Fixpipe(cGm, c1, fp);
}
extern "C" __global__ __aicore__ void unit(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  UnitTile<true, false>(a, b, c);
}
extern "C" __global__ __aicore__ void plain_unsynced(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  UnitTile<false, false>(a, b, c);
}
extern "C" __global__ __aicore__ void plain_synced(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR t) {
  UnitTile<false, true>(a, b, c);
}
"#;

fn kernels() -> &'static Path {
    static LIB: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, so) = LIB.get_or_init(|| crate::kernel_lib::compile(KERNELS));
    so
}

fn hw() -> HwProfile {
    HwProfile::builtin("ascend910b2").unwrap()
}

const S: usize = 128;

fn launch(name: &str) -> LaunchOutput {
    let ones: Vec<u8> = (0..S * S)
        .flat_map(|_| half::f16::from_f32(1.0).to_le_bytes())
        .collect();
    let tensor = |dtype, data: Vec<u8>| JobTensor {
        dtype,
        shape: vec![(S * S) as i64],
        data,
    };
    let job = LaunchJob {
        host_lib: PathBuf::new(),
        kernel_lib: kernels().to_path_buf(),
        kernel_name: name.into(),
        op_type: None,
        inputs: vec![
            tensor(Dtype::Float16, ones.clone()),
            tensor(Dtype::Float16, ones),
        ],
        outputs: vec![tensor(Dtype::Float32, vec![0xff; S * S * 4])],
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
        data: vec![0; 4],
        workspace: 0,
        output_init: Vec::new(),
    };
    let out = run_kernel(&job, &tiling).unwrap_or_else(|e| panic!("{name}: {e}"));
    let c: Vec<f32> = out.outputs[0]
        .chunks(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    assert!(c.iter().all(|&v| v == S as f32), "{name}: C is not all {S}");
    out
}

/// (Mmad start, Mmad end, Fixpipe start, Fixpipe transfer end, Fixpipe
/// end) in cycles.
fn spans(out: &LaunchOutput, sim: &SimResult) -> (u64, u64, u64, u64, u64) {
    let instrs = &out.trace.blocks[0].instrs;
    let spans = &sim.timeline.blocks[0].spans;
    let find = |want: &dyn Fn(&InstrKind, Pipe) -> bool| {
        spans
            .iter()
            .find(|s| want(&instrs[s.instr as usize].kind, s.pipe))
            .expect("span")
    };
    let mmad = find(&|k, _| matches!(k, InstrKind::Mmad(_)));
    let fix = find(&|k, p| matches!(k, InstrKind::Dma { .. }) && p == Pipe::Fix);
    (mmad.start, mmad.end, fix.start, fix.busy_end, fix.end)
}

#[test]
fn unit_flag_lets_the_fixpipe_overlap_its_mmad() {
    let sim =
        |out: &LaunchOutput| simulate(&out.trace, &hw(), &TimingOptions::deterministic()).unwrap();
    let unit = launch("unit");
    assert_eq!(check(&unit.trace), vec![]);
    let racy = launch("plain_unsynced");
    let findings = check(&racy.trace);
    assert!(
        findings
            .iter()
            .any(|f| f.kind == "race" && f.message.contains("L0C")),
        "{findings:?}"
    );
    let synced = launch("plain_synced");
    assert_eq!(check(&synced.trace), vec![]);

    let (unit_sim, synced_sim) = (sim(&unit), sim(&synced));
    let (m_start, m_end, _, f_busy, _) = spans(&unit, &unit_sim);
    // 8 x 8 x 8 = 512 cube steps over 64 fractals of C, done 20 cycles
    // after the last step; the Fixpipe moves 64 KB at 32 B/cycle (2048
    // cycles). Its transfer starts with the first fractal (8 steps + 20
    // after the Mmad starts), so it ends well before a transfer begun
    // after the Mmad would, and after the Mmad's last result plus that
    // fractal's share (2048 / 64 = 32 cycles).
    assert_eq!(m_end - m_start, 512 + 20);
    assert!(
        f_busy >= m_start + 8 + 20 + 2048,
        "transfer ends {f_busy}, Mmad starts {m_start}"
    );
    assert!(
        f_busy < m_end + 2048,
        "transfer ends {f_busy}, Mmad ends {m_end}"
    );
    assert!(
        f_busy >= m_end + 32,
        "transfer ends {f_busy}, Mmad ends {m_end}"
    );
    let (_, s_m_end, s_f_start, _, _) = spans(&synced, &synced_sim);
    assert!(
        s_f_start >= s_m_end,
        "synced Fixpipe {s_f_start}, Mmad {s_m_end}"
    );
    assert!(
        unit_sim.profile.task_duration_us < synced_sim.profile.task_duration_us,
        "unitFlag {} us, synced {} us",
        unit_sim.profile.task_duration_us,
        synced_sim.profile.task_duration_us
    );
}
