//! A queue carrying another queue's buffer (EnQue of a tensor that another
//! queue allocated or de-queued): legal as the guide describes a stage
//! (2.9.3: memory "by AllocTensor, or by DeQue from the upstream queue",
//! then EnQue), with the flags that keep it ordered; the race of a buffer
//! given back by its own queue while another still copies it out; the user
//! tag travelling with the buffer; the faults the guide does call for.

use ascendopt_sim::launch::{run_kernel, LaunchFailure, LaunchOutput};
use ascendopt_sim::trace::{InstrKind, Pipe, SyncOrigin};

use crate::kernel_lib::compile;
use crate::runtime_launch::{f32_tensor, f32s, job, line_of, tiling};

/// Each tile goes in through `inQ`, gets its tag added in place and is
/// handed to `outQ` as it is (the buffer stays `inQ`'s), which copies it
/// out; MODE picks a misuse instead.
const HANDOVER_KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void handover(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, TILES * 64);
  yg.SetGlobalBuffer((__gm__ float*)y, TILES * 64 + TILES);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> inQ;
  TQue<TPosition::VECOUT, 1> outQ;
  TQue<TPosition::A1, 1> l1Q;
  TBuf<TPosition::VECCALC> tmp;
  pipe.InitBuffer(inQ, 1, 64 * sizeof(float));
  pipe.InitBuffer(outQ, 1, 64 * sizeof(float));
  pipe.InitBuffer(l1Q, 1, 64 * sizeof(float));
  pipe.InitBuffer(tmp, 64 * sizeof(float));
  for (int i = 0; i < TILES; ++i) {
    LocalTensor<float> a = inQ.AllocTensor<float>();
    DataCopy(a, xg[i * 64], 64);
    a.SetUserTag(i + 10);
    inQ.EnQue(a);
    LocalTensor<float> b = inQ.DeQue<float>();
    Adds(b, b, (float)b.GetUserTag(), 64);
#if MODE == 2
    outQ.EnQue(tmp.Get<float>());
#elif MODE == 3
    l1Q.EnQue(b);
#endif
    outQ.EnQue(b);
#if MODE == 1
    inQ.FreeTensor(b);
#elif MODE == 4
    inQ.EnQue(b);
#endif
    LocalTensor<float> c = outQ.DeQue<float>();
    yg.SetValue(TILES * 64 + i, (float)c.GetUserTag());
    DataCopy(yg[i * 64], c, 64);
    outQ.FreeTensor(c);
#if MODE == 5
    inQ.FreeTensor(c);
#endif
  }
}
"#;

fn handover(tiles: usize, mode: u32) -> Result<LaunchOutput, LaunchFailure> {
    let (_d, so) = compile(&format!(
        "#define TILES {tiles}\n#define MODE {mode}\n{HANDOVER_KERNEL}"
    ));
    let x: Vec<f32> = (0..tiles * 64).map(|i| i as f32).collect();
    run_kernel(
        &job(
            &so,
            "handover",
            vec![f32_tensor(&x)],
            vec![f32_tensor(&vec![0.0; tiles * 65])],
        ),
        &tiling(1),
    )
}

/// y as the kernel computes it: each tile plus its tag, then the tags.
fn expected(tiles: usize) -> Vec<f32> {
    let tag = |i: usize| (i + 10) as f32;
    (0..tiles * 64)
        .map(|i| i as f32 + tag(i / 64))
        .chain((0..tiles).map(tag))
        .collect()
}

#[test]
fn a_queue_carries_another_queues_buffer_with_its_flags_and_tag() {
    let out = handover(3, 0).unwrap();
    assert_eq!(f32s(&out.outputs[0]), expected(3));
    let findings = ascendopt_sim::check::check(&out.trace);
    assert!(findings.is_empty(), "{findings:#?}");
    assert!(
        out.findings.iter().all(|f| f.kind != "queue-lend"),
        "{:#?}",
        out.findings
    );
    // outQ's FreeTensor gives inQ's buffer back from MTE3 (its consumer),
    // and inQ's next AllocTensor waits for it on MTE2 (inQ's producer).
    let waits: Vec<(Pipe, Pipe)> = out.trace.blocks[0]
        .instrs
        .iter()
        .filter_map(|i| match i.kind {
            InstrKind::WaitFlag {
                src,
                dst,
                origin: SyncOrigin::AllocTensor,
                ..
            } => Some((src, dst)),
            _ => None,
        })
        .collect();
    assert_eq!(waits, vec![(Pipe::Mte3, Pipe::Mte2); 2]);
}

#[test]
fn a_buffer_given_back_while_another_queue_copies_it_out_races() {
    // One tile: nothing reuses the buffer, so nothing races; the note
    // says what the early FreeTensor means.
    let out = handover(1, 1).unwrap();
    assert_eq!(f32s(&out.outputs[0]), expected(1));
    assert!(ascendopt_sim::check::check(&out.trace).is_empty());
    let notes: Vec<_> = out
        .findings
        .iter()
        .filter(|f| f.kind == "queue-lend")
        .collect();
    assert_eq!(notes.len(), 1, "{:#?}", out.findings);
    let line = line_of(HANDOVER_KERNEL, "inQ.FreeTensor(b);") + 2;
    assert!(
        notes[0].message.contains(&format!(
            "k.cpp:{line}: FreeTensor gives back a buffer another queue still holds (the queue \
             initialised at "
        )),
        "{}",
        notes[0].message
    );
    // Two tiles: the second copy in overwrites the buffer while the first
    // copy out may still read it (inQ's AllocTensor waits only for PIPE_V).
    let out = handover(2, 1).unwrap();
    assert_eq!(f32s(&out.outputs[0]), expected(2));
    let findings = ascendopt_sim::check::check(&out.trace);
    assert!(
        findings.iter().any(|f| f.kind == "race"
            && f.message.contains(&format!(
                "k.cpp:{}",
                line_of(HANDOVER_KERNEL, "DataCopy(a, xg[i * 64], 64);") + 2
            ))),
        "{findings:#?}"
    );
}

fn fault_of(mode: u32) -> String {
    match handover(1, mode) {
        Err(LaunchFailure::Fault { message, .. }) => message,
        other => panic!("expected a fault, got {other:?}"),
    }
}

#[test]
fn what_the_guide_rules_out_still_faults_with_the_reason() {
    let tbuf = fault_of(2);
    assert!(
        tbuf.contains("is a TBuf's: TBuf memory takes part in computation only")
            && tbuf.contains("guide 2.2.3.3.1"),
        "{tbuf}"
    );
    let l1 = fault_of(3);
    assert!(
        l1.contains("a queue in L1 cannot carry a tensor in UB"),
        "{l1}"
    );
    let twice = fault_of(4);
    assert!(
        twice.contains("tensor is already in another queue (DeQue it there first)"),
        "{twice}"
    );
    let freed = fault_of(5);
    assert!(
        freed.contains("tensor freed twice (or never allocated)"),
        "{freed}"
    );
}
