//! Calibration and behaviour tests of the timing model on hand-written
//! traces. Each test states the expected direction and bound, and why.

use super::synth::{gm, ub, AddKernel, TraceBuilder};
use super::*;
use crate::trace::{DmaDir, InstrKind, Pipe, ScalarOp, VecOp};
use ascendopt_op::Dtype;

fn hw() -> HwProfile {
    HwProfile::builtin("ascend910b2").unwrap()
}

fn det() -> TimingOptions {
    TimingOptions::deterministic()
}

fn sim(trace: &Trace) -> SimResult {
    simulate(trace, &hw(), &det()).unwrap()
}

/// Duration in cycles of the first span whose instruction matches.
fn span_cycles(result: &SimResult, trace: &Trace, want: impl Fn(&InstrKind) -> bool) -> u64 {
    let block = &result.timeline.blocks[0];
    let span = block
        .spans
        .iter()
        .find(|s| want(&trace.blocks[0].instrs[s.instr as usize].kind))
        .expect("span present");
    span.end - span.start
}

fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got / want - 1.0).abs() <= tolerance
}

// --- DMA ------------------------------------------------------------------

/// One isolated GM->UB copy of `bytes` at GM offset `offset`.
fn single_copy(bytes: u64, offset: u64) -> (Trace, SimResult) {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.copy_in(1, gm(0, offset, bytes), ub(0, bytes.min(192 * 1024)));
    tb.end_block();
    let trace = tb.finish();
    let result = sim(&trace);
    (trace, result)
}

fn copy_gbps(bytes: u64, offset: u64) -> f64 {
    let (trace, result) = single_copy(bytes, offset);
    let cycles = span_cycles(&result, &trace, |k| matches!(k, InstrKind::Dma { .. }));
    bytes as f64 / (cycles as f64 / 1.8e9) / 1e9
}

#[test]
fn single_core_copy_follows_the_guides_curve_within_30_percent() {
    // [G §3.8.5.1-2] via hardware-facts §F: ~2 GB/s at 1 KB, 15 at 8 KB,
    // 29 at 16 KB, 33 at 64 KB, 35 at >= 128 KB (one core, 512 B aligned).
    let curve = [
        (1024u64, 2.0),
        (8 * 1024, 15.0),
        (16 * 1024, 29.0),
        (64 * 1024, 33.0),
        (128 * 1024, 35.0),
        (1024 * 1024, 35.0),
        (4 * 1024 * 1024, 35.0),
    ];
    for (bytes, want) in curve {
        let got = copy_gbps(bytes, 0);
        assert!(
            within(got, want, 0.30),
            "{bytes} B: {got:.2} GB/s vs guide {want}"
        );
    }
    // Copies under ~16 KB are inefficient: below half of the large-copy rate.
    assert!(copy_gbps(8 * 1024, 0) < 0.5 * copy_gbps(1024 * 1024, 0));
}

#[test]
fn a_32_byte_aligned_gm_address_is_slower_than_a_512_byte_aligned_one() {
    // [G §3.8.5.2]: 32 B alignment reaches >= ~70% of the 512 B rate, the
    // worst case being large copies; small copies are latency-bound.
    let big = copy_gbps(1024 * 1024, 32) / copy_gbps(1024 * 1024, 0);
    assert!((0.68..0.80).contains(&big), "1 MB ratio {big}");
    let small = copy_gbps(1024, 32) / copy_gbps(1024, 0);
    assert!(small > big && small < 1.0, "1 KB ratio {small}");
}

// --- Vector API costs -------------------------------------------------------

/// Cycles of one vector call on `n` elements.
fn vec_cycles(op: VecOp, dtype: Dtype, src_dtype: Dtype, n: u64) -> u64 {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    let bytes = n * dtype.size().max(src_dtype.size()) as u64;
    tb.vec_cast(
        1,
        op,
        dtype,
        src_dtype,
        ub(0, bytes),
        &[ub(96 * 1024, bytes)],
        n,
    );
    tb.end_block();
    let trace = tb.finish();
    let result = sim(&trace);
    span_cycles(&result, &trace, |k| matches!(k, InstrKind::Vector { .. }))
}

#[test]
fn per_api_vector_costs_are_within_25_percent_of_the_ge_fits() {
    // [GE] perf_param_v1.cpp (hardware-facts §F): cycles = k * n + b.
    let fits: [(VecOp, Dtype, Dtype, f64, f64); 9] = [
        (VecOp::Add, Dtype::Float16, Dtype::Float16, 0.0103, 22.0),
        (VecOp::Add, Dtype::Float32, Dtype::Float32, 0.0206, 23.0),
        (VecOp::Mul, Dtype::Float32, Dtype::Float32, 0.0206, 23.0),
        (VecOp::Muls, Dtype::Float32, Dtype::Float32, 0.0142, 22.0),
        (VecOp::Exp, Dtype::Float32, Dtype::Float32, 0.031, 28.0),
        (VecOp::Div, Dtype::Float32, Dtype::Float32, 0.046, 29.0),
        (VecOp::Cast, Dtype::Float32, Dtype::Float16, 0.0147, 20.0),
        (
            VecOp::WholeReduceSum,
            Dtype::Float32,
            Dtype::Float32,
            0.109,
            32.0,
        ),
        (
            VecOp::Duplicate,
            Dtype::Float32,
            Dtype::Float32,
            0.0156,
            17.0,
        ),
    ];
    for (op, dtype, src, k, b) in fits {
        for n in [256u64, 2048, 16384] {
            let got = vec_cycles(op, dtype, src, n) as f64;
            let want = k * n as f64 + b;
            assert!(
                within(got, want, 0.25),
                "{op:?} {dtype:?} n={n}: {got} vs fit {want:.1}"
            );
        }
    }
}

#[test]
fn independent_vector_calls_overlap_their_heads_dependent_ones_do_not() {
    // Two Adds on disjoint data: the second starts when the pipe is free
    // (head hidden); on the same data it waits for the first to complete.
    let run = |dependent: bool| {
        let mut tb = TraceBuilder::new();
        tb.begin_block(0);
        tb.vec(
            1,
            VecOp::Add,
            Dtype::Float32,
            ub(0, 4096),
            &[ub(8192, 4096)],
            1024,
        );
        let src = if dependent {
            ub(0, 4096)
        } else {
            ub(16384, 4096)
        };
        tb.vec(2, VecOp::Add, Dtype::Float32, ub(32768, 4096), &[src], 1024);
        tb.end_block();
        sim(&tb.finish()).timeline.makespan
    };
    let busy = (1.3184f64 * 16.0).ceil() as u64; // 16 repeats
    let independent = run(false);
    let dependent = run(true);
    assert_eq!(dependent - independent, 23, "one extra head of Add f32");
    assert!(independent >= 2 * busy + 23);
}

// --- Double buffering, multi-core, HBM ---------------------------------------

#[test]
fn double_buffering_speeds_up_a_balanced_pipeline_by_1_3_to_3_times() {
    // [G §2.9.5.1, §3.8.4.1]: BUFFER_NUM 2 overlaps MTE2, V and MTE3, "up to
    // ~3x". 16 KB fp16 tiles; 7 extra Exp per tile bring PIPE_V near MTE2.
    let mut kernel = AddKernel::new(1, 64 * 8192, 8192, 1);
    kernel.extra_ops = vec![VecOp::Exp; 7];
    let single = sim(&kernel.build());
    kernel.buffer_num = 2;
    let double = sim(&kernel.build());
    // Balanced: vector and MTE2 busy times within 2x of each other.
    let block = single.profile.blocks[0].aiv.clone().unwrap();
    let balance = block.vec_time_us / block.mte2_time_us;
    assert!((0.5..2.0).contains(&balance), "vec/mte2 = {balance}");
    let speedup = single.profile.core_span_us / double.profile.core_span_us;
    assert!((1.3..=3.0).contains(&speedup), "speedup {speedup}");
    // With two buffers the vector pipe is busier (overlap).
    let v2 = double.profile.blocks[0].aiv.clone().unwrap().vec_ratio;
    assert!(v2 > block.vec_ratio, "{v2} vs {}", block.vec_ratio);
}

#[test]
fn add_custom_16m_fp16_scales_with_cores_and_saturates_hbm() {
    // 16M fp16 elements, 16 KB tiles, double buffered.
    let total = 16 * 1024 * 1024;
    let time = |blocks: u32| {
        let kernel = AddKernel::new(blocks, total, 8192, 2);
        sim(&kernel.build()).profile
    };
    let one = time(1);
    for blocks in [2u32, 4, 8] {
        let p = time(blocks);
        let speedup = one.task_duration_us / p.task_duration_us;
        // Near-linear: each core has its own MTE rate; 8 cores use ~0.5 TB/s
        // of the 1.6 TB/s HBM, so only the launch head grows.
        assert!(
            speedup >= 0.9 * f64::from(blocks) && speedup <= f64::from(blocks) * 1.01,
            "{blocks} cores: speedup {speedup:.2}"
        );
    }
    let full = time(48);
    // 96 MiB: all of it in L2 (the previous run left it there), so 48
    // cores go faster than HBM would allow, at most at their own DMA
    // rates (45 GB/s a direction each); no byte touches HBM.
    let hbm = hw().hbm_gbps();
    assert!(full.achieved_gbps > hbm, "{} GB/s", full.achieved_gbps);
    let paths = 48.0 * 2.0 * 25.0 * 1.8;
    assert!(full.achieved_gbps <= paths, "{} GB/s", full.achieved_gbps);
    assert_eq!(
        (full.hbm_read_bytes, full.hbm_write_bytes),
        (Some(0), Some(0))
    );
    assert_eq!(full.gm_read_bytes, Some(2 * total * 2));
    assert_eq!(full.gm_write_bytes, Some(total * 2));
}

#[test]
fn hbm_is_shared_by_reads_and_writes_of_all_cores() {
    // 48 cores each read 4 MiB and write 4 MiB at the same time: 384 MiB,
    // twice the L2, so the reads miss and the dirty lines the writes leave
    // are written back as they are pushed out. HBM then carries the reads
    // and the write-backs together at 1.6 TB/s, although each core alone
    // could move its bytes at 45 GB/s a direction.
    let mut tb = TraceBuilder::new();
    let mb = 1024 * 1024;
    for block in 0..48 {
        tb.begin_block(block);
        for part in 0..32u64 {
            let off = u64::from(block) * 4 * mb + part * 128 * 1024;
            tb.copy_in(1, gm(0, off, 128 * 1024), ub(0, 128 * 1024));
            tb.copy_out(2, ub(0, 128 * 1024), gm(1, off, 128 * 1024));
        }
        tb.end_block();
    }
    let trace = tb.finish();
    let p = sim(&trace).profile;
    let l2_read_hit = p.l2_read_hit_rate_pct.unwrap();
    assert!(l2_read_hit < 1.0, "{l2_read_hit}");
    let (hbm_read, hbm_write) = (p.hbm_read_bytes.unwrap(), p.hbm_write_bytes.unwrap());
    assert_eq!(hbm_read, 192 * mb);
    assert!(hbm_write > 150 * mb, "{hbm_write}");
    let bytes = (hbm_read + hbm_write) as f64;
    let floor_us = bytes / 1.6e12 * 1e6;
    assert!(
        p.core_span_us >= floor_us,
        "{} < {floor_us}",
        p.core_span_us
    );
    assert!(
        p.core_span_us < floor_us * 1.15,
        "{} vs {floor_us}",
        p.core_span_us
    );
}

#[test]
fn cores_reading_the_same_512_byte_ranges_at_once_are_slowed() {
    // [G §3.8.5.6]: requests of several cores to the same 512 B range
    // serialise (10-20%, hardware-facts §F), worse with more cores.
    let span = |blocks: u32, shared: bool| {
        let mut tb = TraceBuilder::new();
        for block in 0..blocks {
            tb.begin_block(block);
            let off = if shared { 0 } else { u64::from(block) * 65536 };
            tb.copy_in(1, gm(0, off, 65536), ub(0, 65536));
            tb.end_block();
        }
        sim(&tb.finish()).profile.core_span_us
    };
    let two = span(2, true) / span(2, false);
    assert!((1.10..=1.20).contains(&two), "2 cores on one range: {two}");
    let sixteen = span(16, true) / span(16, false);
    assert!(sixteen > two, "16 cores: {sixteen} vs 2 cores: {two}");
}

#[test]
fn launch_head_grows_with_block_count() {
    let trace_of = |blocks: u32| AddKernel::new(blocks, u64::from(blocks) * 128, 128, 1).build();
    let p1 = sim(&trace_of(1)).profile;
    let p48 = sim(&trace_of(48)).profile;
    assert!(p48.launch_overhead_us > p1.launch_overhead_us);
    assert!(
        (20.0..=21.0).contains(&p48.launch_overhead_us),
        "{}",
        p48.launch_overhead_us
    );
    // Task Duration = head + core span.
    assert!((p48.task_duration_us - p48.launch_overhead_us - p48.core_span_us).abs() < 1e-9);
}

#[test]
fn more_blocks_than_cores_run_in_waves() {
    // 96 identical blocks on 48 cores take about twice as long as 48.
    let trace_of = |blocks: u32| AddKernel::new(blocks, u64::from(blocks) * 8192, 8192, 1).build();
    let s48 = sim(&trace_of(48)).profile.core_span_us;
    let s96 = sim(&trace_of(96)).profile.core_span_us;
    let ratio = s96 / s48;
    assert!((1.8..=2.2).contains(&ratio), "{ratio}");
}

// --- Scalar ----------------------------------------------------------------

#[test]
fn a_per_element_scalar_loop_is_at_least_10x_slower_than_the_vector_op() {
    // [G §2.6.1, §2.6.3.2] (hardware-facts §H16): GetValue/SetValue are
    // scalar, in order, one element each.
    let n = 4096u64;
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    for i in 0..n {
        tb.scalar(5, ScalarOp::LocalGet, ub(i * 4, 4));
        tb.scalar(6, ScalarOp::LocalSet, ub(32768 + i * 4, 4));
    }
    tb.end_block();
    let scalar = sim(&tb.finish()).profile;
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.vec(
        7,
        VecOp::Muls,
        Dtype::Float32,
        ub(32768, n * 4),
        &[ub(0, n * 4)],
        n,
    );
    tb.end_block();
    let vector = sim(&tb.finish()).profile;
    let ratio = scalar.core_span_us / vector.core_span_us;
    assert!(ratio >= 10.0, "ratio {ratio}");
    let s = scalar.blocks[0].aiv.clone().unwrap();
    assert!(s.scalar_ratio > 0.99, "scalar bound: {}", s.scalar_ratio);
}

#[test]
fn get_value_waits_for_the_vector_op_that_writes_its_element() {
    // Auto-sync (bisheng --cce-auto-sync, [G §2.9.4.1]): the scalar read
    // starts after the Add that writes the element completes.
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.vec(
        1,
        VecOp::Add,
        Dtype::Float32,
        ub(0, 4096),
        &[ub(8192, 4096)],
        1024,
    );
    tb.scalar(2, ScalarOp::LocalGet, ub(4, 4));
    tb.end_block();
    let trace = tb.finish();
    let r = sim(&trace);
    let spans = &r.timeline.blocks[0].spans;
    let add = spans.iter().find(|s| s.instr == 0).unwrap();
    let get = spans.iter().find(|s| s.instr == 1).unwrap();
    assert!(get.start >= add.end, "{get:?} vs {add:?}");
}

// --- Sync --------------------------------------------------------------------

#[test]
fn a_wait_blocks_its_pipe_until_the_flag_is_set() {
    // MTE2 copy, set MTE2->V, V waits then adds: the Add starts after the
    // copy completes plus the flag latency.
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.copy_in(1, gm(0, 0, 4096), ub(0, 4096));
    tb.set_flag(2, Pipe::Mte2, Pipe::V, 0);
    tb.wait_flag(3, Pipe::Mte2, Pipe::V, 0);
    tb.vec(
        4,
        VecOp::Add,
        Dtype::Float32,
        ub(8192, 4096),
        &[ub(0, 4096)],
        1024,
    );
    tb.end_block();
    let trace = tb.finish();
    let r = sim(&trace);
    let spans = &r.timeline.blocks[0].spans;
    let copy = spans.iter().find(|s| s.instr == 0).unwrap();
    let add = spans.iter().find(|s| s.instr == 3).unwrap();
    assert_eq!(add.start, copy.end + 4, "flag latency 4 cycles");
}

#[test]
fn a_wait_that_is_never_set_is_a_deadlock_naming_the_line() {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    tb.wait_flag(7, Pipe::Mte2, Pipe::V, 1);
    tb.vec(
        8,
        VecOp::Add,
        Dtype::Float32,
        ub(0, 256),
        &[ub(256, 256)],
        64,
    );
    tb.end_block();
    let err = simulate(&tb.finish(), &hw(), &det()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("k.cpp:7") && msg.contains("never set"),
        "{msg}"
    );
}

#[test]
fn sync_all_waits_for_the_slowest_block() {
    // Block 0 copies 64 KB, block 1 nothing; after SyncAll both add. Block
    // 1's Add starts after block 0's copy completes.
    let mut tb = TraceBuilder::new();
    for block in 0..2 {
        tb.begin_block(block);
        if block == 0 {
            tb.copy_in(1, gm(0, 0, 65536), ub(0, 65536));
        }
        tb.push(
            Pipe::S,
            InstrKind::SyncAll { generation: 0 },
            vec![],
            vec![],
            "SyncAll",
            2,
        );
        tb.vec(
            3,
            VecOp::Add,
            Dtype::Float32,
            ub(0, 256),
            &[ub(256, 256)],
            64,
        );
        tb.end_block();
    }
    let trace = tb.finish();
    let r = sim(&trace);
    let copy_end = r.timeline.blocks[0]
        .spans
        .iter()
        .find(|s| s.instr == 0)
        .unwrap()
        .end;
    let add1 = r.timeline.blocks[1]
        .spans
        .iter()
        .find(|s| s.instr == 1)
        .unwrap();
    assert!(
        add1.start >= copy_end + 1800,
        "{} vs {copy_end}",
        add1.start
    );
}

#[test]
fn removing_a_redundant_pipe_all_barrier_makes_the_kernel_faster() {
    // The PIPE_ALL barrier at the end of each iteration is redundant (the
    // queues already order every access) but stops the scalar unit until
    // every pipe is drained, so the copy-out of one tile no longer overlaps
    // the copy-in of the next ([G §3.8] motif 17: avoid PIPE_ALL barriers).
    let mut kernel = AddKernel::new(1, 32 * 4096, 4096, 2);
    kernel.barrier_per_tile = true;
    let with = sim(&kernel.build()).profile.core_span_us;
    kernel.barrier_per_tile = false;
    let without = sim(&kernel.build()).profile.core_span_us;
    // Faster by far more than the default noise (sigma ~0.55 us here).
    assert!(without < with * 0.8, "{without} vs {with}");
}

#[test]
fn a_single_pipe_barrier_only_drains_its_own_pipe() {
    // Two independent Adds: PipeBarrier<PIPE_V> between them costs exactly
    // one head (the second waits for the first to complete); a barrier on
    // MTE2 costs nothing on V.
    let run = |barrier: Option<Pipe>| {
        let mut tb = TraceBuilder::new();
        tb.begin_block(0);
        tb.vec(
            1,
            VecOp::Add,
            Dtype::Float32,
            ub(0, 4096),
            &[ub(8192, 4096)],
            1024,
        );
        if let Some(pipe) = barrier {
            tb.barrier(2, Some(pipe));
        }
        tb.vec(
            3,
            VecOp::Add,
            Dtype::Float32,
            ub(16384, 4096),
            &[ub(24576, 4096)],
            1024,
        );
        tb.end_block();
        let trace = tb.finish();
        let r = sim(&trace);
        let spans = &r.timeline.blocks[0].spans;
        let last = trace.blocks[0].instrs.len() as u32 - 1;
        spans.iter().find(|s| s.instr == last).unwrap().start
    };
    let none = run(None);
    let v = run(Some(Pipe::V));
    let mte2 = run(Some(Pipe::Mte2));
    // With the barrier the scalar also spends 2 issue cycles.
    assert!(v >= none + 23 - 2 && v <= none + 23 + 2, "{v} vs {none}");
    assert!(mte2 <= none + 2, "{mte2} vs {none}");
}

#[test]
fn a_full_issue_queue_stalls_the_scalar_unit() {
    // 40 vector calls of 255 repeats: the scalar unit can run ahead by at
    // most the queue depth (32), so the 40th issue happens after the 8th
    // call started.
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    for i in 0..40u64 {
        tb.vec(
            1,
            VecOp::Add,
            Dtype::Float32,
            ub(i * 2048, 2048),
            &[ub(100_000, 2048)],
            16320,
        );
    }
    tb.end_block();
    let r = sim(&tb.finish());
    let starts: Vec<u64> = r.timeline.blocks[0].spans.iter().map(|s| s.start).collect();
    let busy = (1.3184f64 * 255.0).ceil() as u64;
    // Back-to-back on the pipe (each starts when the previous frees it).
    assert_eq!(starts[1] - starts[0], busy);
    // Scalar busy time covers only 40 issues.
    let s = r.profile.blocks[0].aiv.clone().unwrap();
    assert!(s.vec_ratio > 0.9, "{}", s.vec_ratio);
}

// --- Determinism, noise ------------------------------------------------------

#[test]
fn deterministic_mode_gives_identical_latency_every_run() {
    let trace = AddKernel::new(4, 4 * 16384, 4096, 2).build();
    let a = sim(&trace);
    let b = sim(&trace);
    assert_eq!(a, b);
    assert_eq!(a.profile.noise_factor, Some(1.0));
}

#[test]
fn noisy_mode_has_the_configured_coefficient_of_variation() {
    let trace = AddKernel::new(2, 2 * 16384, 4096, 2).build();
    let level = NoiseLevel {
        rel_sigma: 0.03,
        abs_sigma_us: 0.0,
    };
    let samples: Vec<f64> = (0..400u64)
        .map(|seed| {
            let opts = TimingOptions {
                noise: Noise::Seeded { seed, level },
            };
            simulate(&trace, &hw(), &opts)
                .unwrap()
                .profile
                .task_duration_us
        })
        .collect();
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let sd = (samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let cv = sd / mean;
    assert!((0.025..0.035).contains(&cv), "cv {cv}");
    // The same seed reproduces.
    let opts = TimingOptions {
        noise: Noise::Seeded { seed: 3, level },
    };
    let again = simulate(&trace, &hw(), &opts)
        .unwrap()
        .profile
        .task_duration_us;
    assert_eq!(again, samples[3]);
}

#[test]
fn the_default_noise_level_comes_from_the_profile() {
    let hw = hw();
    let opts = TimingOptions::device_default(&hw, 1);
    assert_eq!(
        opts.noise,
        Noise::Seeded {
            seed: 1,
            level: NoiseLevel {
                rel_sigma: 0.01,
                abs_sigma_us: 0.5
            }
        }
    );
    assert!(hw.sources["noise.rel_sigma"].contains("assumption"));
}

// --- Profile, roofline, chrome trace ----------------------------------------

#[test]
fn profile_uses_msprof_field_names_and_round_trips_through_json() {
    let trace = AddKernel::new(2, 2 * 8192, 4096, 2).build();
    let profile = sim(&trace).profile;
    let json = serde_json::to_value(&profile).unwrap();
    for key in [
        "Task Duration(us)",
        "Block Dim",
        "Op Type",
        "achieved_bandwidth(GB/s)",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    let block = &json["blocks"][0];
    for key in [
        "aiv_time(us)",
        "aiv_vec_ratio",
        "aiv_scalar_ratio",
        "aiv_mte2_ratio",
        "aiv_mte3_ratio",
        "aiv_mte2_time(us)",
    ] {
        assert!(block.get(key).is_some(), "missing {key} in {block}");
    }
    assert!(block.get("aic_time(us)").is_none());
    assert_eq!(json["Op Type"], "vector");
    assert_eq!(json["Block Dim"], 2);
    let back: Profile = serde_json::from_value(json).unwrap();
    assert_eq!(back, profile);
}

#[test]
fn render_text_shows_the_msprof_fields_and_the_roofline() {
    let total = 2 * 8192u64;
    let trace = AddKernel::new(2, total, 4096, 2).build();
    let hw = hw();
    let mut profile = sim(&trace).profile;
    let traffic = Traffic {
        read_bytes: total * 2 * 2,
        write_bytes: total * 2,
    };
    let r = roofline(
        &hw,
        traffic,
        Ops::vector(total, Dtype::Float16),
        2,
        LaunchKind::Vector,
    );
    profile.attach_roofline(r.clone());
    let text = profile.render_text();
    for needle in [
        "Task Duration(us)",
        "Block Dim                  2",
        "aiv_vec_ratio",
        "aiv_mte2_ratio",
        "roofline floor(us)",
        "achieved_bandwidth(GB/s)",
        "bottleneck",
    ] {
        assert!(text.contains(needle), "missing {needle}:\n{text}");
    }
    let pct = profile.roofline_reached_pct.unwrap();
    assert!(pct > 0.0 && pct < 100.0, "{pct}");
    // The share reached is of the HBM floor (the quality measure), not of
    // the physical floor the physics guard uses.
    assert!((pct - r.hbm_floor_us / profile.task_duration_us * 100.0).abs() < 1e-9);
    assert!(text.contains("physical floor(us)"), "{text}");
}

#[test]
fn roofline_is_launch_plus_the_larger_of_memory_and_compute() {
    let hw = hw();
    // 64 MiB in, 32 MiB out, all of it in L2: the 48 cores' GM read paths
    // (25 B/cycle each) bound it: 64 MiB / 1200 B/cycle / 1.8 GHz = 31.1
    // us; the L2 (96 MiB at 7 TB/s = 14.4 us) and the write paths (15.5
    // us) are faster; 16M fp16 adds at 48 x 128 per cycle = 1.52 us;
    // launch at 48 blocks = 20.48 us.
    let mib = 1024 * 1024u64;
    let traffic = Traffic {
        read_bytes: 64 * mib,
        write_bytes: 32 * mib,
    };
    let ops = Ops::vector(16 * 1024 * 1024, Dtype::Float16);
    let r = roofline(&hw, traffic, ops, 48, LaunchKind::Vector);
    assert_eq!(r.hbm_us, 0.0);
    assert!((r.l2_us - 96.0 * mib as f64 / 7e12 * 1e6).abs() < 1e-6);
    assert!((r.mte_us - 64.0 * mib as f64 / 1200.0 / 1800.0).abs() < 1e-6);
    assert_eq!(r.memory_us, r.mte_us);
    assert!((r.compute_us - 16.0 * 1024.0 * 1024.0 / (48.0 * 128.0) / 1800.0).abs() < 1e-6);
    assert!((r.launch_us - 20.48).abs() < 1e-9);
    assert!((r.floor_us - (r.launch_us + r.memory_us)).abs() < 1e-9);
    // The HBM floor: all 96 MiB over 1.6 TB/s, above the physical floor.
    assert!((r.hbm_all_us - 96.0 * mib as f64 / 1.6e12 * 1e6).abs() < 1e-6);
    assert!((r.hbm_floor_us - (r.launch_us + r.hbm_all_us)).abs() < 1e-9);
    assert!(r.hbm_floor_us > r.floor_us);
    // 400 MiB of input: what does not fit in L2 (208 MiB) comes from HBM.
    let big = Traffic {
        read_bytes: 400 * mib,
        write_bytes: 0,
    };
    let r = roofline(&hw, big, ops, 48, LaunchKind::Vector);
    assert!((r.hbm_us - 208.0 * mib as f64 / 1.6e12 * 1e6).abs() < 1e-6);
    assert_eq!(r.memory_us, r.hbm_us.max(r.mte_us));
    // A mixed launch also has the cube cores' read paths.
    let mix = roofline(&hw, traffic, ops, 48, LaunchKind::Mix);
    assert!(mix.mte_us < 0.7 * roofline(&hw, traffic, ops, 48, LaunchKind::Vector).mte_us);
    // A compute-heavy cube case: 1 G MACs of fp16 on 24 x 4096 per cycle.
    let cube = Ops {
        vector_elem_ops: 0,
        vector_dtype: Dtype::Float16,
        cube_macs: 1 << 30,
        cube_dtype: Dtype::Float16,
    };
    let r = roofline(&hw, Traffic::default(), cube, 24, LaunchKind::Cube);
    let want = (1u64 << 30) as f64 / (24.0 * 4096.0) / 1800.0;
    assert!((r.compute_us - want).abs() < 1e-6);
}

#[test]
fn chrome_trace_has_a_track_per_used_pipe_slices_that_nest_flows_and_counters() {
    // Three blocks; the first has the kernel's own code before its copies.
    let mut trace = AddKernel::new(3, 3 * 8192, 4096, 2).build();
    let code = crate::trace::ScalarCode {
        alu: 300,
        loads: 20,
        stores: 10,
        ..Default::default()
    };
    trace.locs.push(crate::trace::SrcLoc {
        file: "k.cpp".into(),
        line: 11,
        api: "kernel code".into(),
    });
    trace.blocks[0].instrs.insert(
        1,
        crate::trace::Instr {
            pipe: Pipe::S,
            kind: InstrKind::ScalarCode(code),
            reads: vec![],
            writes: vec![],
            loc: trace.locs.len() as u32 - 1,
        },
    );
    let result = sim(&trace);
    let json: serde_json::Value =
        serde_json::from_str(&chrome_trace_json(&trace, &result)).unwrap();
    chrome::check_nesting(&json).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let mut tracks = std::collections::BTreeMap::new();
    let mut processes = std::collections::BTreeSet::new();
    for e in events.iter().filter(|e| e["ph"] == "M") {
        match e["name"].as_str().unwrap() {
            "thread_name" => {
                let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
                let name = e["args"]["name"].as_str().unwrap().to_string();
                assert!(tracks.insert(key, name).is_none());
            }
            "process_name" => {
                processes.insert(e["pid"].as_u64().unwrap());
            }
            _ => {}
        }
    }
    // Three blocks and the chip's counters.
    assert_eq!(processes.len(), 4);
    let x: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
    for e in &x {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        assert!(tracks.contains_key(&key), "event on an unnamed track: {e}");
        assert!(e["ts"].as_f64().unwrap() >= result.timeline.launch_us);
        assert!(e["dur"].as_f64().unwrap() >= 0.0);
    }
    // No empty track: every named thread holds a slice; the cube pipes
    // are not there at all.
    for (key, name) in &tracks {
        assert!(
            x.iter()
                .any(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()) == *key),
            "empty track {name}"
        );
        let pipe = name.split(' ').next().unwrap();
        assert!(
            !matches!(pipe, "PIPE_M" | "PIPE_MTE1" | "PIPE_FIX"),
            "{name}"
        );
    }
    let names: std::collections::BTreeSet<&str> =
        x.iter().map(|e| e["name"].as_str().unwrap()).collect();
    for api in ["DataCopy", "Add", "DeQue", "kernel code"] {
        assert!(names.contains(api), "{names:?}");
    }
    // Copies in are on MTE2 (tid 4), Adds on V (tid 1), the kernel's code
    // and the issuing on the scalar unit (tid 0).
    assert!(x.iter().any(|e| e["name"] == "Add" && e["tid"] == 1));
    assert!(x.iter().any(|e| e["name"] == "DataCopy" && e["tid"] == 4));
    assert!(x.iter().any(|e| e["name"] == "DataCopy" && e["tid"] == 5));
    assert!(x
        .iter()
        .any(|e| e["name"] == "kernel code" && e["tid"] == 0 && e["pid"] == 0));
    // The scalar track's work is the scalar unit's busy time.
    let scalar_us: f64 = x
        .iter()
        .filter(|e| e["pid"] == 0 && e["tid"] == 0 && e["cat"] != "wait")
        .map(|e| e["dur"].as_f64().unwrap())
        .sum();
    let busy = result.profile.blocks[0].aiv.clone().unwrap().scalar_time_us;
    assert!((scalar_us - busy).abs() < 1e-6, "{scalar_us} vs {busy}");
    // Flows: every EnQue set to the DeQue that waited for it.
    let outs = x.iter().filter(|e| e["flow_out"] == true).count();
    let ins = x.iter().filter(|e| e["flow_in"] == true).count();
    assert!(outs > 0 && outs == ins, "{outs} flows out, {ins} in");
    assert!(x.iter().any(|e| e["flow_in"] == true
        && e["name"] == "DeQue"
        && e["args"]["flow"] == "EnQue->DeQue"));
    // Counters of the chip's bandwidth.
    assert!(events
        .iter()
        .any(|e| e["ph"] == "C" && e["name"] == "L2 bandwidth (GB/s)"));
}

#[test]
fn nesting_check_finds_overlapping_slices() {
    let doc = serde_json::json!({ "traceEvents": [
        { "ph": "X", "pid": 0, "tid": 1, "ts": 0.0, "dur": 10.0, "name": "a" },
        { "ph": "X", "pid": 0, "tid": 1, "ts": 2.0, "dur": 3.0, "name": "inside" },
        { "ph": "X", "pid": 0, "tid": 1, "ts": 10.0, "dur": 1.0, "name": "after" },
        { "ph": "X", "pid": 0, "tid": 2, "ts": 0.5, "dur": 1.0, "name": "other thread" },
    ]});
    chrome::check_nesting(&doc).unwrap();
    let bad = serde_json::json!({ "traceEvents": [
        { "ph": "X", "pid": 0, "tid": 1, "ts": 0.0, "dur": 10.0, "name": "a" },
        { "ph": "X", "pid": 0, "tid": 1, "ts": 5.0, "dur": 10.0, "name": "b" },
    ]});
    let err = chrome::check_nesting(&bad).unwrap_err().to_string();
    assert!(err.contains("`b`") && err.contains("`a`"), "{err}");
}

#[test]
fn cube_side_blocks_report_aic_fields() {
    let mut tb = TraceBuilder::new();
    tb.begin_block(0);
    let l1 = crate::trace::Region {
        mem: crate::trace::Mem::L1,
        space: 0,
        start: 0,
        len: 32768,
    };
    let kind = InstrKind::Dma {
        dir: DmaDir::GmToL1,
        bytes: 32768,
        bursts: 1,
        burst_bytes: 32768,
        gm_offset: 0,
        gm_strided: false,
        atomic: false,
    };
    tb.push(
        Pipe::Mte2,
        kind,
        vec![gm(0, 0, 32768)],
        vec![l1],
        "DataCopy",
        1,
    );
    tb.end_block();
    let p = sim(&tb.finish()).profile;
    assert_eq!(p.op_type, "cube");
    let c = p.blocks[0].aic.clone().unwrap();
    assert!(c.mte2_ratio > 0.9, "{}", c.mte2_ratio);
    assert!(p.blocks[0].aiv.is_none());
}

#[test]
fn simulating_48_blocks_of_2000_instructions_is_fast() {
    // The size of a large case. Wall-clock is measured by the test only;
    // the bound is loose for debug builds on a shared machine (release
    // numbers are in the README).
    let trace = AddKernel::new(48, 48 * 143 * 2048, 2048, 2).build();
    assert!(trace.len() >= 48 * 2000, "{}", trace.len());
    let t0 = std::time::Instant::now();
    let r = sim(&trace);
    let elapsed = t0.elapsed();
    assert!(r.profile.task_duration_us > 0.0);
    assert!(elapsed.as_secs_f64() < 3.0, "{elapsed:?}");
}

// --- L2 ----------------------------------------------------------------------

/// `blocks` blocks, each reading `passes` times its own `slice` bytes of
/// GM space 0 (offset `block * slice`) in 64 KB copies.
fn rereads(blocks: u32, slice: u64, passes: u64) -> Trace {
    let chunk = 64 * 1024;
    let mut tb = TraceBuilder::new();
    for block in 0..blocks {
        tb.begin_block(block);
        for _ in 0..passes {
            for part in 0..slice / chunk {
                let off = u64::from(block) * slice + part * chunk;
                // Two UB buffers in turn, so one copy's latency overlaps
                // the next copy's transfer.
                tb.copy_in(1, gm(0, off, chunk), ub(part % 2 * chunk, chunk));
            }
        }
        tb.end_block();
    }
    let mut trace = tb.finish();
    trace.gm_spaces = vec![u64::from(blocks) * slice];
    trace
}

#[test]
fn rereading_the_same_data_hits_l2_and_leaves_hbm_alone() {
    let mib = 1024 * 1024;
    // 48 cores re-read their MiB of a 48 MiB tensor ten times: all from L2
    // (a benchmark loop leaves it there), nothing from HBM.
    let once = sim(&rereads(48, mib, 1)).profile;
    let ten = sim(&rereads(48, mib, 10)).profile;
    // The launch head is paid once: well below ten times one read.
    assert!(
        ten.task_duration_us < 0.7 * 10.0 * once.task_duration_us,
        "ten reads {} us vs one {} us",
        ten.task_duration_us,
        once.task_duration_us
    );
    assert_eq!(ten.hbm_read_bytes, Some(0));
    assert!((ten.l2_read_hit_rate_pct.unwrap() - 100.0).abs() < 1e-9);
    let block = ten.blocks[0].aiv.clone().unwrap();
    assert!((block.read_hit_rate_pct.unwrap() - 100.0).abs() < 1e-9);
    // The same bytes as one stream of distinct data larger than L2 (480
    // MiB): every byte from HBM, which is slower than the cores' own DMA
    // rates; the re-reads are bound by those rates instead (48 x 45 GB/s
    // against 1.6 TB/s: the L2 gains up to 1.35x for vector cores).
    let stream = sim(&rereads(48, 10 * mib, 1)).profile;
    assert!(
        stream.l2_read_hit_rate_pct.unwrap() < 1.0,
        "{}",
        stream.l2_read_hit_rate_pct.unwrap()
    );
    let gain = stream.core_span_us / ten.core_span_us;
    assert!((1.25..=1.4).contains(&gain), "L2 gain {gain}");
}

#[test]
fn a_stream_larger_than_l2_gets_no_l2_benefit_and_runs_at_hbm_bandwidth() {
    let mib = 1024 * 1024u64;
    // 400 MiB read once by 48 cores: the previous run left the ends of
    // every core's range in L2, which this run's own misses push out
    // before it gets there.
    let slice = 400 * mib / 48 / (64 * 1024) * (64 * 1024);
    let p = sim(&rereads(48, slice, 1)).profile;
    let l2_read_hit = p.l2_read_hit_rate_pct.unwrap();
    assert!(l2_read_hit < 1.0, "{l2_read_hit}");
    let hbm = hw().hbm_gbps();
    assert!(p.achieved_gbps <= hbm * 1.0001, "{} GB/s", p.achieved_gbps);
    assert!(p.achieved_gbps > 0.95 * hbm, "{} GB/s", p.achieved_gbps);
}
