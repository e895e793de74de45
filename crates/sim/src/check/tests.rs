//! Tests of the race and flag checker on hand-written traces.

use super::check;
use crate::launch::Finding;
use crate::timing::synth::{gm, ub, AddKernel, TraceBuilder};
use crate::trace::{InstrKind, Pipe, ScalarOp, VecOp};
use ascendopt_op::Dtype;

fn kinds(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.kind.as_str()).collect()
}

#[test]
fn a_correct_queued_kernel_has_no_findings() {
    for buffers in [1, 2] {
        let trace = AddKernel::new(3, 3 * 4 * 2048, 2048, buffers).build();
        assert_eq!(check(&trace), vec![], "BUFFER_NUM {buffers}");
    }
}

#[test]
fn deleting_a_needed_enque_deque_pair_is_a_race_naming_both_calls() {
    // Without EnQue/DeQue of the output queue (id 2) in the first tile, the
    // copy-out may read z before the Add has written it.
    let mut tb = TraceBuilder::new();
    tb.drop_pairs = vec![(2, true, true)];
    let trace = AddKernel::new(1, 4 * 2048, 2048, 2).build_with(tb);
    let findings = check(&trace);
    assert_eq!(kinds(&findings), vec!["race"], "{findings:#?}");
    let msg = &findings[0].message;
    assert!(msg.contains("Add at k.cpp:33"), "{msg}");
    assert!(msg.contains("DataCopy at k.cpp:41"), "{msg}");
    assert!(msg.contains("PIPE_V") && msg.contains("PIPE_MTE3"), "{msg}");
    // z's first slot: after two x and two y slots of 4 KB.
    assert!(msg.contains("UB [0x4000, 0x5000)"), "{msg}");
}

#[test]
fn deleting_the_x_pair_is_covered_by_the_y_pair() {
    // EnQue(y) is a SetFlag on MTE2 that fires only when every earlier MTE2
    // copy (x's too) is done, and DeQue(y) precedes the Add: still ordered.
    let mut tb = TraceBuilder::new();
    tb.drop_pairs = vec![(0, true, true)];
    let trace = AddKernel::new(1, 4 * 2048, 2048, 2).build_with(tb);
    assert_eq!(check(&trace), vec![]);
    // Without both input pairs of the first tile the Add races with both
    // copies.
    let mut tb = TraceBuilder::new();
    tb.drop_pairs = vec![(0, true, true), (1, true, true)];
    let trace = AddKernel::new(1, 4 * 2048, 2048, 2).build_with(tb);
    let findings = check(&trace);
    assert_eq!(kinds(&findings), vec!["race", "race"], "{findings:#?}");
    assert!(findings
        .iter()
        .all(|f| f.message.contains("Add at k.cpp:33")));
    assert!(
        findings[0].message.contains("DataCopy at k.cpp:22"),
        "{findings:#?}"
    );
    assert!(
        findings[1].message.contains("DataCopy at k.cpp:23"),
        "{findings:#?}"
    );
}

#[test]
fn a_redundant_pipe_all_barrier_and_its_removal_are_both_race_free() {
    let mut kernel = AddKernel::new(2, 2 * 4 * 2048, 2048, 2);
    kernel.barrier_per_tile = true;
    assert_eq!(check(&kernel.build()), vec![]);
    kernel.barrier_per_tile = false;
    assert_eq!(check(&kernel.build()), vec![]);
}

#[test]
fn a_pipe_all_barrier_orders_a_copy_before_a_vector_read() {
    let build = |barrier: bool| {
        let mut tb = TraceBuilder::new();
        tb.begin_block(0);
        tb.copy_in(1, gm(0, 0, 1024), ub(0, 1024));
        if barrier {
            tb.barrier(2, None);
        }
        tb.vec(
            3,
            VecOp::Abs,
            Dtype::Float32,
            ub(4096, 1024),
            &[ub(0, 1024)],
            256,
        );
        tb.end_block();
        tb.finish()
    };
    assert_eq!(check(&build(true)), vec![]);
    assert_eq!(kinds(&check(&build(false))), vec!["race"]);
}

#[test]
fn a_single_pipe_barrier_does_not_order_other_pipes() {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.copy_in(1, gm(0, 0, 1024), ub(0, 1024));
    tb.barrier(2, Some(Pipe::V));
    tb.vec(
        3,
        VecOp::Abs,
        Dtype::Float32,
        ub(4096, 1024),
        &[ub(0, 1024)],
        256,
    );
    tb.end_block();
    assert_eq!(kinds(&check(&tb.finish())), vec!["race"]);
}

#[test]
fn user_flags_order_vector_write_before_copy_out() {
    let build = |flags: bool| {
        let mut tb = TraceBuilder::new();
        tb.begin_block(0);
        tb.vec(1, VecOp::Duplicate, Dtype::Float32, ub(0, 1024), &[], 256);
        if flags {
            tb.set_flag(2, Pipe::V, Pipe::Mte3, 0);
            tb.wait_flag(3, Pipe::V, Pipe::Mte3, 0);
        }
        tb.copy_out(4, ub(0, 1024), gm(0, 0, 1024));
        tb.end_block();
        tb.finish()
    };
    assert_eq!(check(&build(true)), vec![]);
    let findings = check(&build(false));
    assert_eq!(kinds(&findings), vec!["race"]);
    assert!(
        findings[0].message.contains("Duplicate at k.cpp:1"),
        "{findings:?}"
    );
    assert!(
        findings[0].message.contains("DataCopy at k.cpp:4"),
        "{findings:?}"
    );
}

#[test]
fn write_after_read_across_pipes_is_a_race_too() {
    // MTE3 reads UB for a copy-out; V overwrites the same bytes without
    // waiting for MTE3 (the FreeTensor/AllocTensor pair is missing).
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.vec(1, VecOp::Duplicate, Dtype::Float32, ub(0, 1024), &[], 256);
    tb.set_flag(2, Pipe::V, Pipe::Mte3, 0);
    tb.wait_flag(3, Pipe::V, Pipe::Mte3, 0);
    tb.copy_out(4, ub(0, 1024), gm(0, 0, 1024));
    tb.vec(5, VecOp::Duplicate, Dtype::Float32, ub(512, 256), &[], 64);
    tb.end_block();
    let findings = check(&tb.finish());
    assert_eq!(kinds(&findings), vec!["race"], "{findings:?}");
    let msg = &findings[0].message;
    assert!(msg.contains("reads") && msg.contains("writes"), "{msg}");
    assert!(msg.contains("UB [0x200, 0x300)"), "{msg}");
}

#[test]
fn same_pipe_overlaps_and_scalar_accesses_are_not_races() {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.vec(1, VecOp::Duplicate, Dtype::Float32, ub(0, 1024), &[], 256);
    tb.vec(
        2,
        VecOp::Abs,
        Dtype::Float32,
        ub(0, 1024),
        &[ub(0, 1024)],
        256,
    );
    tb.scalar(3, ScalarOp::LocalGet, ub(4, 4));
    tb.scalar(4, ScalarOp::LocalSet, ub(8, 4));
    tb.end_block();
    assert_eq!(check(&tb.finish()), vec![]);
}

#[test]
fn a_wait_issued_before_its_set_in_program_order_is_fine() {
    // V waits first (its queue blocks), MTE2 copies and sets: legal.
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.wait_flag(1, Pipe::Mte2, Pipe::V, 0);
    tb.copy_in(2, gm(0, 0, 1024), ub(0, 1024));
    tb.set_flag(3, Pipe::Mte2, Pipe::V, 1);
    tb.wait_flag(4, Pipe::Mte2, Pipe::V, 1);
    tb.vec(
        5,
        VecOp::Abs,
        Dtype::Float32,
        ub(4096, 1024),
        &[ub(0, 1024)],
        256,
    );
    tb.set_flag(6, Pipe::Mte2, Pipe::V, 0);
    tb.end_block();
    assert_eq!(check(&tb.finish()), vec![]);
}

#[test]
fn a_flag_set_twice_without_a_wait_is_an_error() {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.set_flag(10, Pipe::Mte2, Pipe::V, 2);
    tb.set_flag(11, Pipe::Mte2, Pipe::V, 2);
    tb.wait_flag(12, Pipe::Mte2, Pipe::V, 2);
    tb.wait_flag(13, Pipe::Mte2, Pipe::V, 2);
    tb.end_block();
    let findings = check(&tb.finish());
    assert_eq!(kinds(&findings), vec!["flag-double-set"]);
    let msg = &findings[0].message;
    assert!(
        msg.contains("k.cpp:11") && msg.contains("k.cpp:10"),
        "{msg}"
    );
    assert!(msg.contains("PIPE_MTE2->PIPE_V event id 2"), "{msg}");
}

#[test]
fn a_flag_left_set_at_the_end_is_an_error_but_freed_slots_are_not() {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.set_flag(20, Pipe::V, Pipe::Mte3, 3);
    tb.end_block();
    let findings = check(&tb.finish());
    assert_eq!(kinds(&findings), vec!["flag-leak"]);
    assert!(
        findings[0].message.contains("SetFlag at k.cpp:20"),
        "{findings:?}"
    );

    // An EnQue never dequeued leaks; the queue kernel's final FreeTensor
    // flags are left set by design and are not reported.
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    let mut q = tb.queue(Pipe::Mte2, Pipe::V, 0, 1, 1024);
    let s = tb.alloc(30, &mut q);
    tb.copy_in(31, gm(0, 0, 1024), TraceBuilder::slot(&q, s));
    tb.enque(32, &mut q, s);
    tb.end_block();
    let findings = check(&tb.finish());
    assert_eq!(kinds(&findings), vec!["flag-leak"]);
    assert!(
        findings[0].message.contains("enqueued but never dequeued"),
        "{findings:?}"
    );
    assert!(
        findings[0].message.contains("EnQue at k.cpp:32"),
        "{findings:?}"
    );
}

#[test]
fn a_wait_that_can_never_be_satisfied_is_a_deadlock() {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.wait_flag(40, Pipe::Mte3, Pipe::V, 4);
    tb.vec(
        41,
        VecOp::Abs,
        Dtype::Float32,
        ub(0, 256),
        &[ub(256, 256)],
        64,
    );
    tb.end_block();
    let findings = check(&tb.finish());
    assert!(kinds(&findings).contains(&"deadlock"), "{findings:?}");
    let msg = &findings
        .iter()
        .find(|f| f.kind == "deadlock")
        .unwrap()
        .message;
    assert!(msg.contains("WaitFlag at k.cpp:40"), "{msg}");
}

#[test]
fn pipe_barrier_on_the_scalar_pipe_is_reported() {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.push(
        Pipe::S,
        InstrKind::Barrier {
            pipe: Some(Pipe::S),
        },
        vec![],
        vec![],
        "PipeBarrier",
        50,
    );
    tb.end_block();
    let findings = check(&tb.finish());
    assert_eq!(kinds(&findings), vec!["invalid-barrier"]);
    assert!(findings[0].message.contains("k.cpp:50"));
}

#[test]
fn the_same_race_in_every_block_is_reported_once() {
    let mut tb = TraceBuilder::new();
    for block in 0..4 {
        tb.begin_block(block);
        tb.copy_in(1, gm(0, u64::from(block) * 1024, 1024), ub(0, 1024));
        tb.vec(
            3,
            VecOp::Abs,
            Dtype::Float32,
            ub(4096, 1024),
            &[ub(0, 1024)],
            256,
        );
        tb.end_block();
    }
    let findings = check(&tb.finish());
    assert_eq!(kinds(&findings), vec!["race"]);
}

#[test]
fn a_long_correct_kernel_stays_clean_and_fast() {
    // 48 blocks x ~2000 instructions: pruning keeps the live set small.
    let trace = AddKernel::new(48, 48 * 143 * 2048, 2048, 2).build();
    let t0 = std::time::Instant::now();
    assert_eq!(check(&trace), vec![]);
    assert!(t0.elapsed().as_secs_f64() < 3.0, "{:?}", t0.elapsed());
}

#[test]
fn a_scalar_access_in_between_orders_two_pipes_through_auto_sync() {
    // MTE2 writes, the scalar reads the same bytes (auto-synced after the
    // copy), then MTE3 copies them out: issued after the scalar read, the
    // copy-out is ordered after the copy-in.
    let build = |scalar: bool| {
        let mut tb = TraceBuilder::new();
        tb.begin_block(0);
        tb.copy_in(1, gm(0, 0, 1024), ub(0, 1024));
        if scalar {
            tb.scalar(2, ScalarOp::LocalGet, ub(0, 4));
        }
        tb.copy_out(3, ub(0, 1024), gm(1, 0, 1024));
        tb.end_block();
        tb.finish()
    };
    assert_eq!(check(&build(true)), vec![]);
    assert_eq!(kinds(&check(&build(false))), vec!["race"]);
}

/// A copy out of a whole block's length from a half-size buffer (UB
/// [0, 8 KB) to GM [0, 8 KB)) while the vector unit fills the other half
/// ([4 KB, 8 KB)); `rewrite`: the second half copied out again after it is
/// filled, in MTE3's order; `read_back`: a copy in of that GM half.
fn copy_out_past_its_buffer(rewrite: bool, read_back: bool) -> crate::trace::Trace {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.vec(1, VecOp::Duplicate, Dtype::Float32, ub(0, 4096), &[], 1024);
    tb.set_flag(2, Pipe::V, Pipe::Mte3, 0);
    tb.wait_flag(3, Pipe::V, Pipe::Mte3, 0);
    tb.copy_out(4, ub(0, 8192), gm(1, 0, 8192));
    tb.vec(
        5,
        VecOp::Duplicate,
        Dtype::Float32,
        ub(4096, 4096),
        &[],
        1024,
    );
    tb.set_flag(6, Pipe::V, Pipe::Mte3, 1);
    tb.wait_flag(7, Pipe::V, Pipe::Mte3, 1);
    if rewrite {
        tb.copy_out(8, ub(4096, 4096), gm(1, 4096, 4096));
    }
    if read_back {
        tb.barrier(9, None);
        tb.copy_in(10, gm(1, 6144, 64), ub(16384, 64));
    }
    tb.end_block();
    tb.finish()
}

#[test]
fn a_race_whose_copied_bytes_are_rewritten_before_any_read_is_a_note() {
    let findings = check(&copy_out_past_its_buffer(true, false));
    assert_eq!(kinds(&findings), vec![super::BENIGN_RACE], "{findings:#?}");
    let msg = &findings[0].message;
    assert!(
        msg.contains("UB [0x1000, 0x2000)")
            && msg.contains("GM allocation #1 bytes [0x1000, 0x2000)")
            && msg.contains("DataCopy at k.cpp:8 overwrites"),
        "{msg}"
    );
    let (hazards, notes) = super::split_notes(findings);
    assert_eq!((hazards.len(), notes.len()), (0, 1));
}

#[test]
fn a_race_whose_copied_bytes_survive_or_are_read_stays_a_race() {
    // Never rewritten: GM keeps whatever the racy read got.
    let findings = check(&copy_out_past_its_buffer(false, false));
    assert_eq!(kinds(&findings), vec!["race"], "{findings:#?}");
    // Rewritten, but read in between... or anywhere (kept strict).
    let findings = check(&copy_out_past_its_buffer(true, true));
    assert_eq!(kinds(&findings), vec!["race"], "{findings:#?}");
}
