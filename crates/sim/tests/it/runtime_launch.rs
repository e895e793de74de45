//! End-to-end tests of the functional runtime: small AscendC kernels
//! compiled with g++ and launched in-process with a fixed tiling.

use ascendopt_op::Dtype;
use ascendopt_sim::launch::{
    run_kernel, JobTensor, LaunchFailure, LaunchJob, OutputInit, Platform, TilingInfo,
};
use ascendopt_sim::trace::{InstrKind, SyncOrigin};
use std::path::{Path, PathBuf};

use crate::kernel_lib::compile;

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

pub(crate) fn f32_tensor(v: &[f32]) -> JobTensor {
    JobTensor {
        dtype: Dtype::Float32,
        shape: vec![v.len() as i64],
        data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

pub(crate) fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub(crate) fn job(
    so: &Path,
    name: &str,
    inputs: Vec<JobTensor>,
    outputs: Vec<JobTensor>,
) -> LaunchJob {
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
        layout: None,
        describe: false,
    }
}

/// 1-based line of the first line of `src` containing `needle`.
pub(crate) fn line_of(src: &str, needle: &str) -> u32 {
    src.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

pub(crate) fn tiling(block_dim: u32) -> TilingInfo {
    TilingInfo {
        block_dim,
        tiling_key: 0,
        data: vec![0; 8],
        workspace: 0,
        output_init: Vec::new(),
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
    DataCopy(t, xg[per + 64], 256);
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
            assert_eq!(loc.line, line_of(&src, "DataCopy(t, xg[per + 64]"));
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
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 120 * 1024);
  LocalTensor<float> first = q.AllocTensor<float>();
  LocalTensor<float> second = q.AllocTensor<float>();
  Duplicate(second, 1.0f, 30 * 1024);
#elif defined(UNINIT_TBUF)
  TBuf<TPosition::VECCALC> never;
  LocalTensor<float> t = never.Get<float>();
  Duplicate(t, 1.0f, 64);
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
  assert(GetBlockIdx() < 0);
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
fn ub_overflow_names_sizes_and_the_line_that_uses_it() {
    let (msg, line, src) = fault_of("UB_OVERFLOW", 1);
    assert!(
        msg.contains("UB overflow") && msg.contains("245760") && msg.contains("uses it"),
        "{msg}"
    );
    assert_eq!(line, Some(line_of(&src, "Duplicate(second")));
}

#[test]
fn a_tbuf_never_initialised_faults_where_its_tensor_is_used() {
    let (msg, line, src) = fault_of("UNINIT_TBUF", 1);
    assert!(
        msg.contains("never initialised") && msg.contains("uses it"),
        "{msg}"
    );
    assert_eq!(line, Some(line_of(&src, "Duplicate(t, 1.0f, 64)")));
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
    assert!(
        msg.contains("Assertion `GetBlockIdx() < 0' failed"),
        "{msg}"
    );
    assert_eq!(line, Some(line_of(&src, "assert(")));
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

/// Walks a tensor list as public kernels do by hand (guide 2.10.9.1): the
/// first word is the byte offset of the pointer table; each description
/// word holds the dimension count (low 32 bits) and the index (high).
/// Writes, per tensor, its element count and the sum of its values into
/// `info`; doubles `inout` in place; records whether `maybe` is null.
const LIST_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void list_kernel(GM_ADDR xs, GM_ADDR maybe, GM_ADDR inout_in, GM_ADDR info,
                                                  GM_ADDR inout_out, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<uint64_t> words;
  words.SetGlobalBuffer((__gm__ uint64_t*)xs);
  uint64_t table = words.GetValue(0) / 8;
  GlobalTensor<float> out;
  out.SetGlobalBuffer((__gm__ float*)info, 16);
  uint64_t at = 1;
  int k = 0;
  while (at < table) {
    uint64_t word = words.GetValue(at);
    uint64_t dims = word & 0xffffffffu;
    uint64_t index = word >> 32;
    uint64_t n = 1;
    for (uint64_t d = 0; d < dims; ++d) n *= words.GetValue(at + 1 + d);
    GlobalTensor<float> t;
    t.SetGlobalBuffer((__gm__ float*)words.GetValue(table + k), n);
    float sum = 0;
    for (uint64_t i = 0; i < n; ++i) sum += t.GetValue(i);
    out.SetValue(2 * k, (float)n + 100.0f * (float)index);
    out.SetValue(2 * k + 1, sum);
    at += 1 + dims;
    ++k;
  }
  out.SetValue(15, maybe == nullptr ? 1.0f : 0.0f);
  out.SetValue(14, inout_in == inout_out ? 1.0f : 0.0f);
  GlobalTensor<float> io;
  io.SetGlobalBuffer((__gm__ float*)inout_out, 4);
  for (int i = 0; i < 4; ++i) io.SetValue(i, io.GetValue(i) * 2.0f);
}
"#;

#[test]
fn tensor_lists_absent_inputs_and_in_place_outputs_reach_the_kernel_as_the_device_passes_them() {
    use ascendopt_op::layout::{ArgLayout, ArgSlot};
    let (_d, so) = compile(LIST_KERNEL);
    let a = JobTensor {
        dtype: Dtype::Float32,
        shape: vec![2, 3],
        data: [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
    };
    let b = f32_tensor(&[10.0, 20.0]);
    let io = f32_tensor(&[1.0, 2.0, 3.0, 4.0]);
    let mut j = job(
        &so,
        "list_kernel",
        vec![a, b, io.clone()],
        vec![f32_tensor(&[f32::NAN; 16]), io],
    );
    j.layout = Some(ArgLayout {
        inputs: vec![ArgSlot::List(vec![0, 1]), ArgSlot::Absent, ArgSlot::One(2)],
        outputs: vec![ArgSlot::One(0), ArgSlot::One(1)],
        in_place: vec![(1, 2)],
        host_values: vec![],
    });
    let out = run_kernel(&j, &tiling(1)).unwrap();
    let info = f32s(&out.outputs[0]);
    assert_eq!(&info[..4], [6.0, 21.0, 102.0, 30.0]);
    assert_eq!(info[14], 1.0, "the in-place output is the input's memory");
    assert_eq!(info[15], 1.0, "an absent optional input is a null address");
    assert_eq!(f32s(&out.outputs[1]), [2.0, 4.0, 6.0, 8.0]);
    // The descriptor's bytes, word by word.
    let bytes =
        ascendopt_sim::launch::list_descriptor(&[(0x1000, &[2, 3][..]), (0x2000, &[2][..])]);
    let words: Vec<u64> = bytes
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, [6 * 8, 2, 2, 3, 1 | (1 << 32), 2, 0x1000, 0x2000]);
}

/// A kernel written the way public operators are: compiler builtins,
/// unqualified names, operator(), whole-tensor operators, an API as a
/// template argument, GatherMask, the high-level sort, workspaces and
/// InitGlobalMemory. Clean-room fixture (issue 21).
const REAL_CODE_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
template <typename T, void (*BIN)(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&)>
__aicore__ inline void Apply(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
  BIN(d, a, b, n);
}
constexpr half HALF_ONE = 1.0f;
extern "C" __global__ __aicore__ void real_code(GM_ADDR x, GM_ADDR y, GM_ADDR idx, GM_ADDR z, GM_ADDR ws,
                                                GM_ADDR tiling) {
  GlobalTensor<float> xg, yg, zg, userg;
  GlobalTensor<uint32_t> idxg;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
  yg.SetGlobalBuffer((__gm__ float*)y, 256);
  idxg.SetGlobalBuffer((__gm__ uint32_t*)idx, 64);
  zg.SetGlobalBuffer((__gm__ float*)z, 64);
  InitGlobalMemory(zg, 64, 3.5f);
  event_t mte3ToMte2 = EVENT_ID0;
  set_flag(PIPE_MTE3, PIPE_MTE2, mte3ToMte2);
  wait_flag(PIPE_MTE3, PIPE_MTE2, mte3ToMte2);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 8192);
  LocalTensor<float> a = buf.AllocTensor<float>();
  LocalTensor<float> b = a[64];
  LocalTensor<float> c = a[128];
  LocalTensor<float> g = a[192];
  LocalTensor<uint32_t> index = a[256].ReinterpretCast<uint32_t>();
  LocalTensor<float> sorted = a[320];
  LocalTensor<float> tmp = a[448];
  LocalTensor<float> values = a[576];
  LocalTensor<uint32_t> order = a[640].ReinterpretCast<uint32_t>();
  LocalTensor<float> out = a[704];
  DataCopy(a, xg, 64);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  Duplicate(b, 2.0f, 64);
  c.SetSize(64);
  pipe_barrier(PIPE_V);
  c = a * b;                                  // 2 x
  Apply<float, Add>(c, c, b, 64);             // 2 x + 2
  uint64_t kept = 0;
  GatherMask(g, a, 1, false, 0, {1, 1, 8, 8}, kept);  // x[0], x[2], ...
  for (int32_t i = 0; i < 64; i++) index(i) = (uint32_t)i;
  if (unlikely(kept != 32)) trap();
  pipe_barrier(PIPE_V);
  Sort<float, true>(sorted, a, index, tmp, 2);
  Extract(values, order, sorted, 2);
  pipe_barrier(PIPE_V);
  out.SetValue(0, (float)kept);
  out(1) = (float)(GetSysWorkSpacePtr() == ws);
  out(2) = (float)((uint64_t)(GetUserWorkspace(ws) - ws) >> 20);
  float16_t h = HALF_ONE;
  float32_t f = h;
  out(3) = f + (float)get_block_num() + (float)(ASCEND_IS_AIV ? 10 : 0);
  userg.SetGlobalBuffer((__gm__ float*)GetUserWorkspace(ws), 64);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
  DataCopy(yg, c, 64);
  DataCopy(yg[64], g, 32);
  DataCopy(yg[128], values, 64);
  DataCopy(yg[192], out, 8);
  DataCopy(idxg, order, 64);
  DataCopy(userg, c, 64);
}
"#;

#[test]
fn real_code_constructs_run_with_hand_computed_results() {
    let (_d, so) = compile(REAL_CODE_KERNEL);
    // Scores with one tie (x[5] == x[9] == 3.0); the rest distinct.
    let x: Vec<f32> = (0..64)
        .map(|i| match i {
            5 | 9 => 3.0,
            _ => ((i * 37) % 64) as f32 + 0.25,
        })
        .collect();
    let y = vec![f32::NAN; 256];
    let idx = vec![0u8; 64 * 4];
    let z = vec![f32::NAN; 64];
    let mut t = tiling(1);
    // The system workspace (16 MiB, what GetLibApiWorkSpaceSize reports)
    // and 256 bytes of the user's.
    t.workspace = (16 << 20) + 256;
    let out = run_kernel(
        &job(
            &so,
            "real_code",
            vec![f32_tensor(&x)],
            vec![
                f32_tensor(&y),
                JobTensor {
                    dtype: Dtype::Uint32,
                    shape: vec![64],
                    data: idx,
                },
                f32_tensor(&z),
            ],
        ),
        &t,
    )
    .unwrap();
    let got = f32s(&out.outputs[0]);
    for i in 0..64 {
        assert_eq!(got[i], 2.0 * x[i] + 2.0, "c[{i}]");
    }
    for k in 0..32 {
        assert_eq!(got[64 + k], x[2 * k], "GatherMask even element {k}");
    }
    // Descending, the tie in input order.
    let mut want: Vec<(f32, u32)> = x.iter().copied().zip(0u32..).collect();
    want.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    let order: Vec<u32> = out.outputs[1]
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (k, (v, i)) in want.iter().enumerate() {
        assert_eq!(got[128 + k], *v, "sorted value {k}");
        assert_eq!(order[k], *i, "sorted index {k}");
    }
    let five = order.iter().position(|&i| i == 5).unwrap();
    assert_eq!(order[five + 1], 9);
    assert_eq!(&got[192..196], &[32.0, 1.0, 16.0, 12.0]);
    assert_eq!(f32s(&out.outputs[2]), vec![3.5; 64]);
    // The instructions the new APIs record: one GatherMask, Sort32 and
    // MrgSort on the vector pipe, InitGlobalMemory's DMA on MTE3.
    let instrs = &out.trace.blocks[0].instrs;
    let vec_ops: Vec<&str> = instrs
        .iter()
        .filter_map(|i| match &i.kind {
            InstrKind::Vector { op, .. } => Some(op.name()),
            _ => None,
        })
        .collect();
    for name in ["GatherMask", "Sort32", "MrgSort", "Mul", "Add", "Copy"] {
        assert!(vec_ops.contains(&name), "{name} missing from {vec_ops:?}");
    }
    let fill = instrs
        .iter()
        .find(|i| {
            out.trace
                .loc_of(i)
                .is_some_and(|l| l.api == "InitGlobalMemory")
        })
        .unwrap();
    assert_eq!(fill.pipe, ascendopt_sim::trace::Pipe::Mte3);
    assert!(matches!(fill.kind, InstrKind::Dma { bytes: 256, .. }));
    // The kernel synchronises as the device needs: no hazard.
    let hazards = ascendopt_sim::check::check(&out.trace);
    assert!(hazards.is_empty(), "{hazards:?}");
}

/// Tiling structs as real tiling headers leave them: one struct without a
/// registration (GET_TILING_DATA reads it), and a struct registered for
/// one tiling key beside the default (GET_TILING_DATA under that key
/// stops with a message; GET_TILING_DATA_WITH_STRUCT reads it).
const TILING_KERNEL: &str = r#"
#define ASCENDOPT_KERNEL_SIDE
#include "register/tilingdata_base.h"
#include "kernel_operator.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(SoleTiling)
  TILING_DATA_FIELD_DEF(uint32_t, a);
  TILING_DATA_FIELD_DEF(uint32_t, b);
END_TILING_DATA_DEF;
}
using namespace AscendC;
extern "C" __global__ __aicore__ void sole(GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA(td, tiling);
  GlobalTensor<uint32_t> yg;
  yg.SetGlobalBuffer((__gm__ uint32_t*)y, 2);
  yg.SetValue(0, td.a + block_idx);
  yg.SetValue(1, td.b * (uint32_t)block_num);
}
"#;

const KEYED_TILING_KERNEL: &str = r#"
#define ASCENDOPT_KERNEL_SIDE
#include "register/tilingdata_base.h"
#include "kernel_operator.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(MainTiling)
  TILING_DATA_FIELD_DEF(uint32_t, a);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Keyed, MainTiling)
BEGIN_TILING_DATA_DEF(KeyThreeTiling)
  TILING_DATA_FIELD_DEF(uint32_t, c);
  TILING_DATA_FIELD_DEF(uint32_t, d);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Keyed_3, KeyThreeTiling)
}
using namespace AscendC;
extern "C" __global__ __aicore__ void keyed(GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<uint32_t> yg;
  yg.SetGlobalBuffer((__gm__ uint32_t*)y, 2);
  if (TILING_KEY_IS(3)) {
    GET_TILING_DATA_WITH_STRUCT(KeyThreeTiling, t3, tiling);
    yg.SetValue(0, t3.d);
  }
  GET_TILING_DATA(td, tiling);
  yg.SetValue(1, td.a);
}
"#;

#[test]
fn tiling_structs_without_a_default_registration() {
    let u32_out = || JobTensor {
        dtype: Dtype::Uint32,
        shape: vec![2],
        data: vec![0xff; 8],
    };
    let u32s = |b: &[u8]| -> Vec<u32> {
        b.chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let words = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let (_d, so) = compile(TILING_KERNEL);
    let mut t = tiling(1);
    t.data = words(&[7, 5]);
    let out = run_kernel(&job(&so, "sole", vec![], vec![u32_out()]), &t).unwrap();
    assert_eq!(u32s(&out.outputs[0]), vec![7, 5]);

    let (_d2, so) = compile(KEYED_TILING_KERNEL);
    let mut t = tiling(1);
    t.data = words(&[11, 12]);
    // Key 1: the default struct.
    t.tiling_key = 1;
    let out = run_kernel(&job(&so, "keyed", vec![], vec![u32_out()]), &t).unwrap();
    assert_eq!(u32s(&out.outputs[0])[1], 11);
    // Key 3: its own struct through GET_TILING_DATA_WITH_STRUCT, then
    // GET_TILING_DATA stops the launch naming the way out.
    t.tiling_key = 3;
    let err = run_kernel(&job(&so, "keyed", vec![], vec![u32_out()]), &t).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("GET_TILING_DATA_WITH_STRUCT"), "{text}");
}

/// More real-code constructs: the reduce-result register, AscendCUtils'
/// mask calls, IsSameType, a tensor list read with ListTensorDesc, queue
/// state members, PopStackBuffer, a TQueConfig queue, the scalar sqrt,
/// the device build's empty ASSERT and AscendC::Std. Clean-room fixture (issue 21).
const REAL_CODE_MORE_KERNEL: &str = r#"
#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"
using namespace AscendC;
// A queue configured at compile time (the guide's TQueConfig).
constexpr TQueConfig kOneBuffer = {false, false, false, 0, 1, 0, {TPosition::MAX}};
// AscendC::Std (guide 6.4.1), checked where the kernel compiles.
static_assert(Std::max<int64_t, int64_t>(1, 2) == 2 && Std::min(7u, 3u) == 3u, "Std::max/min");
static_assert(Std::is_same_v<Std::remove_cvref_t<const half&>, half> && !Std::is_integral<float>::value, "traits");
static_assert(Std::is_same<Std::make_index_sequence<2>, Std::index_sequence<0, 1>>::value, "sequences");
static_assert(Std::get<1>(Std::make_tuple(1, 2.5f)) == 2.5f && Std::Int<4>::value == 4, "tuple, Int");
extern "C" __global__ __aicore__ void more(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> q;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(q, 1, 64 * sizeof(float));
  pipe.InitBuffer(buf, 4096);
  TQue<TPosition::VECOUT, 1, &kOneBuffer> configured;
  pipe.InitBuffer(configured, kOneBuffer.bufferNumber, 64);
  // ASSERT as the device build has it: empty, semicolon missing before it.
  uint32_t tiles = 0;
  tiles = 4 ASSERT(tiles != 0 && "tiles");
  LocalTensor<int16_t> stack;
  PopStackBuffer<int16_t, TPosition::LCM>(stack);
  // A two-tensor list in the workspace, as the launch writes it (each
  // description's first word: dimension count | index << 32):
  // [offset 40][1 | 0 << 32, 64][1 | 1 << 32, 32][&x][&x + 32].
  GlobalTensor<uint64_t> list;
  list.SetGlobalBuffer((__gm__ uint64_t*)ws, 7);
  list.SetValue(0, 40);
  list.SetValue(1, 1); list.SetValue(2, 64);
  list.SetValue(3, 1 | (1ull << 32)); list.SetValue(4, 32);
  list.SetValue(5, (uint64_t)(uintptr_t)x);
  list.SetValue(6, (uint64_t)(uintptr_t)((__gm__ float*)x + 32));
  ListTensorDesc desc((__gm__ void*)ws);
  uint64_t shape[4] = {0, 0, 0, 0};
  TensorDesc<float> second;
  second.SetShapeAddr(shape);
  desc.GetDesc(second, 1);
  GlobalTensor<float> xg = second.GetDataObj();
  LocalTensor<float> in = q.AllocTensor<float>();
  DataCopy(in, xg, 32);
  q.EnQue(in);
  bool queued = q.HasTensorInQue();
  q.DeQue(in);
  LocalTensor<float> work = buf.Get<float>();
  LocalTensor<float> dst = work[512];
  ReduceMax(dst, in, work, 32, true);
  float maxValue = 0, maxIndex = 0;
  GetReduceRepeatMaxMinSpr<float>(maxValue, maxIndex);
  uint64_t reg = get_max_min_cnt();
  float regValue = *reinterpret_cast<float*>(&reg);
  RepeatReduceSum<float>(dst, in, 1, 32, 0, 1, 1, 8);
  float repeatSum = dst.GetValue(0);
  bfloat16_t bf = bfloat16_t((half)1.5f);
  ReduceSum(dst, in, work, 32);
  float sum = GetReduceRepeatSumSpr<float>();
  // AscendCUtils' mask: only the first 4 lanes of the Muls.
  AscendCUtils::SetMask<float>(4);
  Muls<float, false>(in, in, 10.0f, MASK_PLACEHOLDER, 1, {1, 1, 8, 8});
  ResetMask();
  LocalTensor<float> out = work[768];
  out(0) = maxValue;
  out(1) = (float)*reinterpret_cast<uint32_t*>(&maxIndex);
  out(2) = sum;
  out(3) = (float)(IsSameType<decltype(sum), float>::value + IsSameType<float, half>::value);
  out(4) = (float)(desc.GetSize() * 100 + second.GetDim() * 10 + second.GetIndex()) + (float)shape[0] / 1000.0f;
  out(5) = (float)queued + (float)q.HasTensorInQue() * 2.0f + (float)(stack.GetSize() > 0) * 4.0f;
  out(6) = in.GetValue(3);
  out(7) = in.GetValue(4);
  out(8) = regValue;
  out(9) = repeatSum;
  out(10) = (float)half(bf) + (FULL_MASK == ~0ull ? 100.0f : 0.0f);
  LocalTensor<float> spare;
  configured.AllocTensor(spare);
  configured.EnQue(spare);
  configured.DeQue();
  configured.FreeTensor(spare);
  out(11) = 1 / sqrt((float)tiles * 4.0f) + (float)tiles * 10.0f;
  GlobalTensor<float> yg;
  yg.SetGlobalBuffer((__gm__ float*)y, 16);
  set_flag(PIPE_S, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_S, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, out, 16);
  ASSERT_MSG(repeatSum != 12345.0f, "never");
  q.FreeTensor(in);
  assert(maxValue > 0.0f, "max %f", maxValue);
}
"#;

#[test]
fn more_real_code_constructs_with_hand_computed_results() {
    let (_d, so) = compile(REAL_CODE_MORE_KERNEL);
    // x[32 + i] = i - 10 for the list's second tensor; its max 21 at 31.
    let x: Vec<f32> = (0..64).map(|i| (i as f32) - 42.0).collect();
    let mut t = tiling(1);
    t.workspace = 64;
    let out = run_kernel(
        &job(
            &so,
            "more",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&[f32::NAN; 16])],
        ),
        &t,
    )
    .unwrap();
    let got = f32s(&out.outputs[0]);
    let second: Vec<f32> = x[32..].to_vec();
    let sum: f32 = second.iter().sum();
    assert_eq!(got[0], 21.0, "max value");
    assert_eq!(got[1], 31.0, "max index");
    assert_eq!(got[2], sum, "sum (exact in f32)");
    assert_eq!(got[3], 1.0, "IsSameType");
    assert_eq!(got[4], 211.032, "list size 2, dim 1, index 1, extent 32");
    assert_eq!(
        got[5],
        1.0 + 4.0,
        "queued, then de-queued; stack space left"
    );
    assert_eq!(got[6], second[3] * 10.0, "lane 3 masked in");
    assert_eq!(got[7], second[4], "lane 4 masked out");
    assert_eq!(got[8], 21.0, "get_max_min_cnt's low half");
    assert_eq!(got[9], sum, "RepeatReduceSum");
    assert_eq!(got[10], 101.5, "half <-> bfloat16_t, FULL_MASK");
    assert_eq!(got[11], 40.25, "scalar sqrt, ASSERT without its semicolon");

    // A failing assert names its condition, message and line.
    let src = REAL_CODE_MORE_KERNEL.replace("maxValue > 0.0f", "maxValue < 0.0f");
    let (_d2, so) = compile(&src);
    let err = run_kernel(
        &job(
            &so,
            "more",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&[f32::NAN; 16])],
        ),
        &t,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("maxValue < 0.0f") && err.contains("max 21.0"),
        "{err}"
    );
    assert!(
        err.contains(&format!(":{}", line_of(&src, "assert(maxValue"))),
        "{err}"
    );
}

/// TransDataTo5HD as a 16x16 half transpose (guide 6.2.3.3.7.2's example)
/// and InitOutput on a slice.
const TRANSPOSE_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void transpose(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<half> xg, yg;
  GlobalTensor<float> zg;
  xg.SetGlobalBuffer((__gm__ half*)x, 256);
  yg.SetGlobalBuffer((__gm__ half*)y, 256);
  zg.SetGlobalBuffer((__gm__ float*)z, 16);
  InitOutput(zg[8], 8, 2.0f);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 1024);
  LocalTensor<half> src = buf.Get<half>();
  LocalTensor<half> dst = src[256];
  DataCopy(src, xg, 256);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  uint64_t dstList[16], srcList[16];
  for (int i = 0; i < 16; i++) {
    dstList[i] = dst[16 * i].GetPhyAddr();
    srcList[i] = src[16 * i].GetPhyAddr();
  }
  TransDataTo5HDParams params;
  params.repeatTimes = 1;
  TransDataTo5HD<half>(dstList, srcList, params);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, dst, 256);
}
"#;

#[test]
fn trans_data_to_5hd_transposes_and_init_output_fills_a_slice() {
    let (_d, so) = compile(TRANSPOSE_KERNEL);
    let halves = |v: &[f32]| -> Vec<u8> {
        v.iter()
            .flat_map(|x| half::f16::from_f32(*x).to_bits().to_le_bytes())
            .collect()
    };
    let x: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let tensor = |data: Vec<u8>, dtype: Dtype, n: i64| JobTensor {
        dtype,
        shape: vec![n],
        data,
    };
    let out = run_kernel(
        &job(
            &so,
            "transpose",
            vec![tensor(halves(&x), Dtype::Float16, 256)],
            vec![
                tensor(halves(&[0.0; 256]), Dtype::Float16, 256),
                f32_tensor(&[1.0; 16]),
            ],
        ),
        &tiling(1),
    )
    .unwrap();
    let y: Vec<f32> = out.outputs[0]
        .chunks(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    for r in 0..16 {
        for c in 0..16 {
            assert_eq!(y[16 * r + c], (16 * c + r) as f32, "y[{r}][{c}]");
        }
    }
    let z = f32s(&out.outputs[1]);
    assert_eq!(&z[..8], &[1.0; 8]);
    assert_eq!(&z[8..], &[2.0; 8]);
}

/// The whole 192 KB of UB is the kernel's (the guide's TPipe::Reset
/// example allocates `192 * 1024` in one buffer), one block more is not:
/// allocating it passes (the device's TPipe checks nothing, and real
/// kernels allocate buffers they never touch), using it faults.
const FULL_UB_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void full_ub(GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TQue<TPosition::VECOUT, 1> que;
  pipe.InitBuffer(que, 1, 192 * 1024);
#ifdef ONE_MORE
  TBuf<TPosition::VECCALC> more;
  pipe.InitBuffer(more, 32);
#ifdef USE_IT
  Duplicate(more.Get<float>(), 2.0f, 8);
#endif
#endif
  LocalTensor<float> t = que.AllocTensor<float>();
  Duplicate(t, 1.0f, 64);
  que.FreeTensor(t);
}
"#;

#[test]
fn the_whole_192_kb_ub_is_usable_and_no_more() {
    let (_d, so) = compile(FULL_UB_KERNEL);
    run_kernel(
        &job(&so, "full_ub", vec![], vec![f32_tensor(&[0.0; 8])]),
        &tiling(1),
    )
    .unwrap();
    let (_d2, so) = compile(&format!("#define ONE_MORE\n{FULL_UB_KERNEL}"));
    let out = run_kernel(
        &job(&so, "full_ub", vec![], vec![f32_tensor(&[0.0; 8])]),
        &tiling(1),
    )
    .unwrap();
    assert!(
        out.findings
            .iter()
            .any(|n| n.message.contains("UB overflow") && n.message.contains("allocated anyway")),
        "{:?}",
        out.findings
    );
    let (_d3, so) = compile(&format!(
        "#define ONE_MORE\n#define USE_IT\n{FULL_UB_KERNEL}"
    ));
    let err = run_kernel(
        &job(&so, "full_ub", vec![], vec![f32_tensor(&[0.0; 8])]),
        &tiling(1),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("UB overflow") && err.contains("196608") && err.contains("uses it"),
        "{err}"
    );
}

#[test]
fn a_pipe_holds_at_most_64_buffers() {
    let src = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void many(GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 4, 32);
  TBuf<TPosition::VECCALC> bufs[NBUF];
  for (int i = 0; i < NBUF; i++) pipe.InitBuffer(bufs[i], 32);
}
"#;
    let (_d, so) = compile(&format!("#define NBUF 60\n{src}"));
    run_kernel(
        &job(&so, "many", vec![], vec![f32_tensor(&[0.0; 8])]),
        &tiling(1),
    )
    .unwrap();
    let (_d2, so) = compile(&format!("#define NBUF 61\n{src}"));
    let err = run_kernel(
        &job(&so, "many", vec![], vec![f32_tensor(&[0.0; 8])]),
        &tiling(1),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("at most 64"), "{err}");
}

/// A kernel reading and writing the whole 32-byte block at a 3-float
/// tensor's tail stays inside the device allocator's padding (allowed, a
/// note); reaching past it faults.
const TAIL_BLOCK_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void tail(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 3);
  yg.SetGlobalBuffer((__gm__ float*)y, 3);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<float> t = buf.Get<float>();
  DataCopy(t, xg, COUNT);
  set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, t, COUNT);
}
"#;

#[test]
fn the_tail_block_in_the_allocators_padding_is_allowed_and_noted() {
    let (_d, so) = compile(&format!("#define COUNT 8\n{TAIL_BLOCK_KERNEL}"));
    let out = run_kernel(
        &job(
            &so,
            "tail",
            vec![f32_tensor(&[1.0, 2.0, 3.0])],
            vec![f32_tensor(&[0.0; 3])],
        ),
        &tiling(1),
    )
    .unwrap();
    assert_eq!(f32s(&out.outputs[0]), vec![1.0, 2.0, 3.0]);
    let note = out
        .findings
        .iter()
        .find(|f| f.kind == "gm-padding")
        .expect("a padding note");
    assert!(
        note.message.contains("20 byte(s) past the end"),
        "{}",
        note.message
    );
    // 3 floats = 12 bytes span 32 + 32 = 64 bytes; 24 floats = 96 bytes do not fit.
    let (_d2, so) = compile(&format!("#define COUNT 24\n{TAIL_BLOCK_KERNEL}"));
    let err = run_kernel(
        &job(
            &so,
            "tail",
            vec![f32_tensor(&[1.0, 2.0, 3.0])],
            vec![f32_tensor(&[0.0; 3])],
        ),
        &tiling(1),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("64 bytes the device allocator gives it"),
        "{err}"
    );
}

/// A scalar read of the element just past a tensor's end (a kernel whose
/// loop runs one element too far): it starts in the device allocator's
/// padding, which holds no other tensor, so it is allowed and noted like a
/// tail block running into it; a read that starts past the padding faults.
const PAST_END_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void past(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 3);
  yg.SetGlobalBuffer((__gm__ float*)y, 3);
  float extra = xg.GetValue(AT);
  yg.SetValue(0, xg.GetValue(0) + extra * 0.0f);
  yg.SetValue(1, xg.GetValue(1));
  yg.SetValue(2, xg.GetValue(2));
}
"#;

#[test]
fn a_read_starting_in_the_allocators_padding_is_allowed_and_noted() {
    // 3 floats: 12 bytes, span 64; element 3 is bytes [12, 16), element 15
    // bytes [60, 64), element 16 the first byte past the span.
    for at in [3, 15] {
        let (_d, so) = compile(&format!("#define AT {at}\n{PAST_END_KERNEL}"));
        let out = run_kernel(
            &job(
                &so,
                "past",
                vec![f32_tensor(&[1.0, 2.0, 3.0])],
                vec![f32_tensor(&[0.0; 3])],
            ),
            &tiling(1),
        )
        .unwrap();
        assert_eq!(f32s(&out.outputs[0]), vec![1.0, 2.0, 3.0]);
        assert!(
            out.findings.iter().any(|f| f.kind == "gm-padding"),
            "element {at}: no padding note"
        );
    }
    let (_d, so) = compile(&format!("#define AT 16\n{PAST_END_KERNEL}"));
    let err = run_kernel(
        &job(
            &so,
            "past",
            vec![f32_tensor(&[1.0, 2.0, 3.0])],
            vec![f32_tensor(&[0.0; 3])],
        ),
        &tiling(1),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("outside any allocation"), "{err}");
}

/// A whole tile copied in from a tensor far smaller than it (a kernel that
/// reads 1024 indices and uses 8): the chip's DMA reads whatever follows;
/// here the read is allowed, the bytes past the device allocator's span
/// are poison (0xFF) and a note names the line, the tensor and how far.
/// `USE` picks the 8 floats copied out: 0 = the tensor's own 3 and its
/// padding, 16 = bytes [64, 96), past the span. `OUT` is the count copied
/// out to the 3-float output; `FROM` where the read starts.
const OVERREAD_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void over(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 3);
  yg.SetGlobalBuffer((__gm__ float*)y, 3);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 4096);
  LocalTensor<float> t = buf.Get<float>();
  DataCopy(t, xg[FROM], 1024);
  set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, t[USE], OUT);
}
"#;

fn overread(defines: &str) -> Result<ascendopt_sim::launch::LaunchOutput, LaunchFailure> {
    let (_d, so) = compile(&format!("{defines}\n{OVERREAD_KERNEL}"));
    run_kernel(
        &job(
            &so,
            "over",
            vec![f32_tensor(&[1.0, 2.0, 3.0])],
            vec![f32_tensor(&[0.0; 3])],
        ),
        &tiling(1),
    )
}

#[test]
fn a_dma_read_past_the_span_reads_poison_and_is_noted() {
    // Uses only its own elements: correct, with a note at the line.
    let out = overread("#define FROM 0\n#define USE 0\n#define OUT 8").unwrap();
    assert_eq!(f32s(&out.outputs[0]), vec![1.0, 2.0, 3.0]);
    let notes: Vec<_> = out
        .findings
        .iter()
        .filter(|f| f.kind == "gm-overread")
        .collect();
    assert_eq!(notes.len(), 1, "{:#?}", out.findings);
    let line = line_of(OVERREAD_KERNEL, "DataCopy(t, xg[FROM], 1024)") + 3;
    let msg = &notes[0].message;
    assert!(
        msg.contains(&format!(
            "k.cpp:{line}: DataCopy reads past the end of `input 0`"
        )) && msg.contains("(12 bytes; 64 with the device allocator's padding)")
            && msg.contains("4032 byte(s) past it, from byte 0"),
        "{msg}"
    );
    // The trace's region is the memory really read: the span.
    let copy = &out.trace.blocks[0]
        .instrs
        .iter()
        .find(|i| matches!(i.kind, InstrKind::Dma { .. }))
        .unwrap();
    assert_eq!(copy.reads[0].len, 64);
    // Uses bytes past the span: they are poison, never another tensor's.
    let out = overread("#define FROM 0\n#define USE 16\n#define OUT 8").unwrap();
    let bits: Vec<u32> = out.outputs[0]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(bits, vec![0xFFFF_FFFF; 3]);
    // Starting in the padding (element 8, byte 32) is a read of the span
    // too.
    let out = overread("#define FROM 8\n#define USE 0\n#define OUT 8").unwrap();
    assert!(out
        .findings
        .iter()
        .any(|f| f.kind == "gm-overread" && f.message.contains("from byte 32")));
}

/// The cube path's GM read (DataCopy with Nd2NzParams, here into the UB):
/// 32 floats from a 3-float input, one row of four 32-byte fractal rows.
const ND2NZ_OVERREAD_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void nz_over(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 3);
  yg.SetGlobalBuffer((__gm__ float*)y, 32);
  TPipe pipe;
  TBuf<TPosition::VECIN> buf;
  pipe.InitBuffer(buf, 32 * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  DataCopy(t, xg, Nd2NzParams(1, 1, 32, 0, 32, 1, 1, 0));
  set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, t, 32);
}
"#;

#[test]
fn a_cube_path_read_past_the_span_follows_the_same_rule() {
    let (_d, so) = compile(ND2NZ_OVERREAD_KERNEL);
    let out = run_kernel(
        &job(
            &so,
            "nz_over",
            vec![f32_tensor(&[1.0, 2.0, 3.0])],
            vec![f32_tensor(&[0.0; 32])],
        ),
        &tiling(1),
    )
    .unwrap();
    let y = &out.outputs[0];
    assert_eq!(f32s(&y[..12]), vec![1.0, 2.0, 3.0]);
    // Bytes 64..128 lie past the allocator's 64-byte span: poison.
    assert!(y[64..].iter().all(|&b| b == 0xFF), "{:?}", &y[64..]);
    let notes: Vec<_> = out
        .findings
        .iter()
        .filter(|f| f.kind == "gm-overread")
        .collect();
    assert_eq!(notes.len(), 1, "{:#?}", out.findings);
    let line = line_of(ND2NZ_OVERREAD_KERNEL, "Nd2NzParams(1, 1, 32");
    assert!(
        notes[0].message.contains(&format!(
            "k.cpp:{line}: DataCopy reads past the end of `input 0`"
        )) && notes[0].message.contains("64 byte(s) past it, from byte 0"),
        "{}",
        notes[0].message
    );
}

#[test]
fn writes_past_the_span_and_reads_starting_past_it_still_fault() {
    // The 4 KB tile written back to the 3-float output.
    let err = overread("#define FROM 0\n#define USE 0\n#define OUT 1024")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("dst accesses GM") && err.contains("64 bytes the device allocator gives it"),
        "{err}"
    );
    // A read starting at element 16 (byte 64, the first past the span).
    let err = overread("#define FROM 16\n#define USE 0\n#define OUT 8")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("src accesses GM") && err.contains("outside any allocation"),
        "{err}"
    );
}

/// GlobalTensor::operator() (guide 6.2.2.2.6: the element itself), the
/// queue form of InitBuffer called with a TBuf, and <cmath> after
/// kernel_operator.h (clean-room fixture, issue 21).
const GM_REF_KERNEL: &str = r#"
#include "kernel_operator.h"
#include <cmath>
using namespace AscendC;
extern "C" __global__ __aicore__ void gm_ref(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
  yg.SetGlobalBuffer((__gm__ float*)y, 64);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 1, 64 * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  DataCopy(t, xg, 64);
  set_flag(PIPE_MTE2, PIPE_S, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_S, EVENT_ID0);
  for (int32_t i = 0; i < 64; i++) {
    yg(i) = std::sqrt(t.GetValue(i)) + xg(i);
  }
  yg(0) = (float)t.GetSize();
}
"#;

#[test]
fn global_tensor_elements_by_reference_and_a_tbuf_given_a_buffer_count() {
    let (_d, so) = compile(GM_REF_KERNEL);
    let x: Vec<f32> = (0..64).map(|i| (i * i) as f32).collect();
    let out = run_kernel(
        &job(
            &so,
            "gm_ref",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&[f32::NAN; 64])],
        ),
        &tiling(1),
    )
    .unwrap();
    let got = f32s(&out.outputs[0]);
    assert_eq!(got[0], 64.0, "the TBuf holds 1 x 256 bytes");
    for (i, y) in got.iter().enumerate().skip(1) {
        assert_eq!(*y, i as f32 + (i * i) as f32, "y[{i}]");
    }
}

/// Constructs of public kernels (clean-room fixture, issue 21): a TPipe per
/// stage, each taking most of the UB, which only fits when a TPipe going out
/// of scope gives its buffers back (guide 6.2.3.6.1, InitBuffer: released by
/// TPipe's destructor); unqualified scalar min/max on mixed integer types;
/// DataCopyPad and DataCopy of zero blocks or zero-length blocks on an
/// empty tail, which copy nothing.
const STAGED_PIPE_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t kBig = 120 * 1024;
__aicore__ inline void stage(GlobalTensor<float>& xg, GlobalTensor<float>& yg, uint32_t n, float add) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, kBig);
  LocalTensor<float> t = buf.Get<float>();
  DataCopy(t, yg, n);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  Adds(t, t, add, n);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, t, n);
  // An empty tail: nothing left to copy.
  uint32_t left = n - min(n, (int64_t)n);
  DataCopyExtParams none{1, (uint32_t)(left * sizeof(float)), 0, 0, 0};
  DataCopyPad(yg[n], t, none);
  DataCopyParams zero{0, 1, 0, 0};
  DataCopy(t, xg, zero);
  set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
  wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
}
extern "C" __global__ __aicore__ void staged(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
  yg.SetGlobalBuffer((__gm__ float*)y, 64);
  {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, kBig);
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, xg, 64);
    set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    DataCopy(yg, t, 64);
    set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
    wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
  }
  uint32_t n = 64;
  int64_t cap = 1000;
  for (int32_t s = 0; s < 3; s++) {
    stage(xg, yg, (uint32_t)min(n, cap), (float)max(s, 1u));
  }
}
"#;

#[test]
fn a_tpipe_per_stage_min_max_and_empty_copies() {
    let (_d, so) = compile(STAGED_PIPE_KERNEL);
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let out = run_kernel(
        &job(
            &so,
            "staged",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&[f32::NAN; 64])],
        ),
        &tiling(1),
    )
    .unwrap();
    let got = f32s(&out.outputs[0]);
    for (i, y) in got.iter().enumerate() {
        // Adds of max(0, 1u) = 1, max(1, 1u) = 1, max(2, 1u) = 2.
        assert_eq!(*y, i as f32 + 4.0, "y[{i}]");
    }
    let empty: Vec<_> = out
        .findings
        .iter()
        .filter(|f| f.kind == "empty-copy")
        .map(|f| f.message.as_str())
        .collect();
    assert!(
        empty
            .iter()
            .any(|m| m.starts_with("DataCopyPad with blockCount = 1 and blockLen = 0"))
            && empty
                .iter()
                .any(|m| m.starts_with("DataCopy with blockCount = 0")),
        "{:?}",
        out.findings
    );
}

/// Broadcast / BroadCast (guide 6.2.4.10.9; clean-room fixture, issue 21):
/// [16, 1] -> [16, 72] with a sharedTmpBuffer of one 8-row group (two
/// Brcb passes, 256-byte repeats and a masked tail), [3, 1] -> [3, 5] (rows
/// off the 32-byte grid), [1, 8] -> [4, 8], and [1] -> [40] with framework
/// temporary space.
const BROADCAST_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void bcast(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 16);
  yg.SetGlobalBuffer((__gm__ float*)y, 1240);
  TPipe pipe;
  TBuf<TPosition::VECCALC> in, a, b, c, d, tmp;
  pipe.InitBuffer(in, 16 * 4);
  pipe.InitBuffer(a, 1152 * 4);
  pipe.InitBuffer(b, 16 * 4);
  pipe.InitBuffer(c, 32 * 4);
  pipe.InitBuffer(d, 40 * 4);
  pipe.InitBuffer(tmp, 256);
  LocalTensor<float> xl = in.Get<float>(), al = a.Get<float>(), bl = b.Get<float>(), cl = c.Get<float>(),
                     dl = d.Get<float>();
  LocalTensor<uint8_t> tl = tmp.Get<uint8_t>();
  DataCopy(xl, xg, 16);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  const uint32_t aDst[2] = {16, 72}, aSrc[2] = {16, 1};
  Broadcast<float, 2, 1>(al, xl, aDst, aSrc, tl);
  const uint32_t bDst[2] = {3, 5}, bSrc[2] = {3, 1};
  Duplicate(bl, -1.0f, 16);
  BroadCast<float, 2, 1>(bl, xl, bDst, bSrc, tl);
  const uint32_t cDst[2] = {4, 8}, cSrc[2] = {1, 8};
  BroadCast<float, 2, 0>(cl, xl, cDst, cSrc);
  const uint32_t dDst[1] = {40}, dSrc[1] = {1};
  Broadcast<float, 1, 0>(dl, xl[8], dDst, dSrc);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, al, 1152);
  DataCopy(yg[1152], bl, 16);
  DataCopy(yg[1168], cl, 32);
  DataCopy(yg[1200], dl, 40);
}
"#;

#[test]
fn broadcast_rows_columns_and_one_element() {
    let (_d, so) = compile(BROADCAST_KERNEL);
    let x: Vec<f32> = (0..16).map(|i| 1.5 * i as f32 - 3.0).collect();
    let out = run_kernel(
        &job(
            &so,
            "bcast",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&[f32::NAN; 1240])],
        ),
        &tiling(1),
    )
    .unwrap();
    let got = f32s(&out.outputs[0]);
    let mut want = Vec::new();
    for &v in &x {
        want.extend(std::iter::repeat_n(v, 72));
    }
    for &v in &x[..3] {
        want.extend(std::iter::repeat_n(v, 5));
    }
    want.push(-1.0);
    for _ in 0..4 {
        want.extend_from_slice(&x[..8]);
    }
    want.extend(std::iter::repeat_n(x[8], 40));
    assert_eq!(got, want);
}

/// DataCopy with SliceInfo (guide 6.2.3.1.1.4; clean-room fixture, issue
/// 21): the guide's own example shape, rows 0 and 2 of a [3, 87] int32
/// source, two segments of 3 blocks each 7 elements apart, into a [2, 48]
/// destination, then the destination back out with a slice of one segment
/// per row.
const SLICE_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void slice(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<int32_t> xg, yg;
  xg.SetGlobalBuffer((__gm__ int32_t*)x, 3 * 87);
  yg.SetGlobalBuffer((__gm__ int32_t*)y, 96);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 96 * sizeof(int32_t));
  LocalTensor<int32_t> t = buf.Get<int32_t>();
  SliceInfo srcSlice[] = {{16, 70, 7, 3, 87}, {0, 2, 1, 1, 3}};
  SliceInfo dstSlice[] = {{0, 47, 0, 3, 48}, {0, 1, 0, 1, 2}};
  DataCopy(t, xg, dstSlice, srcSlice, 2);
  set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
  SliceInfo whole[] = {{0, 95, 0, 12, 96}};
  DataCopy(yg, t, whole, whole);
}
"#;

#[test]
fn data_copy_with_slice_info() {
    let (_d, so) = compile(SLICE_KERNEL);
    let x: Vec<i32> = (0..3 * 87).map(|i| i * 3 - 100).collect();
    let tensor = |v: &[i32]| JobTensor {
        dtype: Dtype::Int32,
        shape: vec![v.len() as i64],
        data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    };
    let out = run_kernel(
        &job(&so, "slice", vec![tensor(&x)], vec![tensor(&[0; 96])]),
        &tiling(1),
    )
    .unwrap();
    let got: Vec<i32> = out.outputs[0]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut want = Vec::new();
    for row in [0usize, 2] {
        want.extend_from_slice(&x[row * 87 + 16..row * 87 + 40]);
        want.extend_from_slice(&x[row * 87 + 47..row * 87 + 71]);
    }
    assert_eq!(got, want);
}

/// Every block adds its slice of x into the whole of y with atomic adds
/// (y = x[0..8] + x[8..16]); z is never written. The outputs arrive
/// poisoned, so y is right only once the launch applies the OpDef's
/// initial values (InitValue(0) for y, 1.5f for z, guide 6.4.3.4.17).
const ATOMIC_SUM_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void atomic_sum(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR ws, GM_ADDR tiling) {
  TPipe pipe;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, 8 * sizeof(float));
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x + 8 * GetBlockIdx(), 8);
  yg.SetGlobalBuffer((__gm__ float*)y, 8);
  auto t = q.AllocTensor<float>();
  DataCopy(t, xg, 8);
  q.EnQue(t);
  auto u = q.DeQue<float>();
  SetAtomicAdd<float>();
  DataCopy(yg, u, 8);
  SetAtomicNone();
  q.FreeTensor(u);
}
"#;

#[test]
fn output_initial_values_are_set_before_the_kernel_runs() {
    let (_d, so) = compile(ATOMIC_SUM_KERNEL);
    let x: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let j = job(
        &so,
        "atomic_sum",
        vec![f32_tensor(&x)],
        vec![f32_tensor(&[f32::NAN; 8]), f32_tensor(&[f32::NAN; 8])],
    );
    let mut t = tiling(2);
    t.output_init = vec![
        OutputInit {
            output: 0,
            pattern: vec![0; 8],
        },
        OutputInit {
            output: 1,
            pattern: 1.5f32.to_le_bytes().to_vec(),
        },
    ];
    let out = run_kernel(&j, &t).unwrap();
    // y[i] = i + (i + 8).
    let want: Vec<f32> = (0..8).map(|i| (2 * i + 8) as f32).collect();
    assert_eq!(f32s(&out.outputs[0]), want);
    assert_eq!(f32s(&out.outputs[1]), vec![1.5; 8]);
    // Without them the poison stays: NaN + x is NaN.
    let out = run_kernel(&j, &tiling(2)).unwrap();
    assert!(f32s(&out.outputs[0]).iter().all(|v| v.is_nan()));
}

/// Duplicate's element types differ by product (guide 6.2.3.3.8.1): the
/// Atlas A2 list has bfloat16, the Atlas 200I/500 A2 (Ascend 310B) list
/// does not; a fault on the 310B names its family, not "Atlas A2".
const DUP_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void dup(GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<ELEM> yg;
  yg.SetGlobalBuffer((__gm__ ELEM*)y, 16);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<ELEM> t = buf.Get<ELEM>();
  Duplicate(t, (ELEM)1, 16);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, t, 16);
}
"#;

#[test]
fn duplicate_follows_the_product_list_and_a_310b_fault_names_its_family() {
    let bf16_out = || JobTensor {
        dtype: Dtype::Bfloat16,
        shape: vec![16],
        data: vec![0u8; 32],
    };
    let (_d, so) = compile(&format!("#define ELEM bfloat16_t\n{DUP_KERNEL}"));
    let out = run_kernel(&job(&so, "dup", vec![], vec![bf16_out()]), &tiling(1)).unwrap();
    // bfloat16 1.0 is 0x3f80.
    assert_eq!(&out.outputs[0][..2], &[0x80, 0x3f]);
    let mut on_310b = job(&so, "dup", vec![], vec![bf16_out()]);
    on_310b.platform.soc_version = "Ascend310B1".into();
    let err = run_kernel(&on_310b, &tiling(1)).unwrap_err().to_string();
    assert!(
        err.contains("Duplicate does not support bfloat16 on Atlas 200I/500 A2"),
        "{err}"
    );
    // A one-byte type is in neither list; on the 310B the message names it.
    let (_d2, so) = compile(&format!("#define ELEM uint8_t\n{DUP_KERNEL}"));
    let u8_out = JobTensor {
        dtype: Dtype::Uint8,
        shape: vec![16],
        data: vec![0u8; 16],
    };
    let mut on_310b = job(&so, "dup", vec![], vec![u8_out]);
    on_310b.platform.soc_version = "Ascend310B1".into();
    let err = run_kernel(&on_310b, &tiling(1)).unwrap_err().to_string();
    assert!(
        err.contains("uint8 on Atlas 200I/500 A2") && !err.contains("on Atlas A2"),
        "{err}"
    );
}

/// TOTAL_VEC_LOCAL_SIZE, the UB a kernel's own buffers may take (184 KB on
/// the 910B), as older Matmul samples size a format buffer with it: a
/// buffer of that size is allocatable.
const VEC_LOCAL_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void vec_local(GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> yg;
  yg.SetGlobalBuffer((__gm__ float*)y, 8);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, TOTAL_VEC_LOCAL_SIZE + EXTRA);
  yg.SetValue(0, (float)TOTAL_VEC_LOCAL_SIZE);
}
"#;

#[test]
fn total_vec_local_size_is_the_ub_left_to_kernels() {
    let (_d, so) = compile(&format!("#define EXTRA 0\n{VEC_LOCAL_KERNEL}"));
    let out = run_kernel(
        &job(&so, "vec_local", vec![], vec![f32_tensor(&[0.0; 8])]),
        &tiling(1),
    )
    .unwrap();
    assert_eq!(f32s(&out.outputs[0])[0], 188416.0);
}

/// A copy out of two tiles from a one-tile buffer while the vector unit
/// fills the second tile (a race on it); with `REWRITE` the second tile is
/// copied out again once it is filled, in MTE3's order, so no output
/// depends on the race: a race-benign note instead of a race.
const COPY_PAST_TILE_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void past_tile(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 256);
  yg.SetGlobalBuffer((__gm__ float*)y, 512);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 512 * sizeof(float));
  LocalTensor<float> a = buf.Get<float>();
  LocalTensor<float> b = a[256];
  DataCopy(a, xg, 256);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  Adds(a, a, 1.0f, 256);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  DataCopy(yg, a, 512);
  Adds(b, a, 1.0f, 256);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
#ifdef REWRITE
  DataCopy(yg[256], b, 256);
#endif
}
"#;

#[test]
fn a_copy_out_race_is_a_note_only_when_its_bytes_are_rewritten() {
    let x: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let run = |defines: &str| {
        let (_d, so) = compile(&format!("{defines}\n{COPY_PAST_TILE_KERNEL}"));
        run_kernel(
            &job(
                &so,
                "past_tile",
                vec![f32_tensor(&x)],
                vec![f32_tensor(&[0.0; 512])],
            ),
            &tiling(1),
        )
        .unwrap()
    };
    let out = run("#define REWRITE");
    let y = f32s(&out.outputs[0]);
    assert_eq!(y[..256], x.iter().map(|v| v + 1.0).collect::<Vec<_>>()[..]);
    assert_eq!(y[256..], x.iter().map(|v| v + 2.0).collect::<Vec<_>>()[..]);
    let findings = ascendopt_sim::check::check(&out.trace);
    let kinds: Vec<&str> = findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(
        kinds,
        vec![ascendopt_sim::check::BENIGN_RACE],
        "{findings:#?}"
    );
    // Without the second copy, y[256..] keeps what the racy copy read.
    let out = run("");
    let findings = ascendopt_sim::check::check(&out.trace);
    let kinds: Vec<&str> = findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, vec!["race"], "{findings:#?}");
}

/// A Local -> Local DataCopy between a VECIN and a VECOUT queue, the way
/// kernels move a tile without computing on it (clean-room fixture, issue
/// 21): the UB -> UB copy runs on PIPE_V (CANN's asc_copy_ub2ub: 流水类型
/// PIPE_V), so the queues' EnQue/DeQue order it against the MTE2 load
/// before and the MTE3 store after, with no race. The copy-out also writes
/// the last element through the public `address_` member, as real kernels
/// do for a tail shorter than a block.
const UB_TO_UB_QUEUE_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void ub_relay(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 129);
  yg.SetGlobalBuffer((__gm__ float*)y, 129);
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qin;
  TQue<TPosition::VECOUT, 2> qout;
  pipe.InitBuffer(qin, 2, 64 * sizeof(float));
  pipe.InitBuffer(qout, 2, 64 * sizeof(float));
  for (int t = 0; t < 2; ++t) {
    LocalTensor<float> a = qin.AllocTensor<float>();
    DataCopy(a, xg[t * 64], 64);
    qin.EnQue(a);
    LocalTensor<float> b = qin.DeQue<float>();
    LocalTensor<float> c = qout.AllocTensor<float>();
    DataCopy(c, b, 64);
    qout.EnQue<float>(c);
    qin.FreeTensor(b);
    LocalTensor<float> d = qout.DeQue<float>();
    DataCopy(yg[t * 64], d, 64);
    qout.FreeTensor(d);
  }
  __gm__ float* last = yg.address_ + 128;
  *last = xg.GetValue(128) * 2.0f;
}
"#;

#[test]
fn a_local_to_local_copy_between_queues_is_ordered_by_them() {
    let (_d, so) = compile(UB_TO_UB_QUEUE_KERNEL);
    let x: Vec<f32> = (0..129).map(|i| i as f32 - 7.5).collect();
    let out = run_kernel(
        &job(
            &so,
            "ub_relay",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&[f32::NAN; 129])],
        ),
        &tiling(1),
    )
    .unwrap();
    let y = f32s(&out.outputs[0]);
    assert_eq!(y[..128], x[..128]);
    assert_eq!(y[128], 2.0 * x[128]);
    let local = out.trace.blocks[0]
        .instrs
        .iter()
        .filter(|i| {
            matches!(
                i.kind,
                InstrKind::Dma {
                    dir: ascendopt_sim::trace::DmaDir::UbToUb,
                    ..
                }
            )
        })
        .map(ascendopt_sim::timing::cost::exec_pipe)
        .collect::<Vec<_>>();
    assert_eq!(local, vec![ascendopt_sim::trace::Pipe::V; 2]);
    let hazards = ascendopt_sim::check::check(&out.trace);
    assert!(hazards.is_empty(), "{hazards:#?}");
}
