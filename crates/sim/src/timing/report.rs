//! The simulator's profile of one launch: the device-neutral
//! [`Profile`] (`ascendopt_device::profile`, the field names of `msprof
//! op`, [G §3.7], hardware-facts.md §G) built from the engine's output,
//! and the roofline floor of a case on a hardware profile.
//!
//! Conventions:
//! - "Task Duration(us)" = launch head + the span of the cores (first block
//!   start to last block end), times the noise factor.
//! - Per block, "aiv_time(us)" is the block's own span; a pipe's time is the
//!   union of the intervals its instructions ran (start to completion), the
//!   scalar's time is the cycles it spent issuing and on scalar accesses;
//!   ratio = pipe time / block time.
//! - "achieved_bandwidth(GB/s)" = GM bytes moved / the cores' span (launch
//!   head excluded), as msprof's Memory.csv divides by core time.

use super::engine::{BlockTimeline, CoreType, EngineOutput, SpanKind};
use super::hw::HwProfile;
use crate::trace::Pipe;
use ascendopt_op::Dtype;

pub use ascendopt_device::profile::{
    AicFields, AivFields, BlockProfile, KernelCode, LaunchKind, Ops, Profile, Roofline, Traffic,
};

/// `ops` with the cube work of a trace: its Mmads' m x n x k
/// multiply-accumulates (the package cannot declare them; the MmadParams
/// are the shapes the kernel multiplies, tails unpadded) and the input type
/// of the first one. Unchanged when the trace has no Mmad or `ops` already
/// counts more.
pub fn with_traced_cube(ops: Ops, trace: &crate::trace::Trace) -> Ops {
    let mut macs = 0u64;
    let mut dtype = None;
    for instr in trace.blocks.iter().flat_map(|b| &b.instrs) {
        if let crate::trace::InstrKind::Mmad(s) = &instr.kind {
            macs += u64::from(s.m) * u64::from(s.n) * u64::from(s.k);
            dtype.get_or_insert(s.dtype);
        }
    }
    match dtype {
        Some(d) if macs > ops.cube_macs => Ops {
            cube_macs: macs,
            cube_dtype: d,
            ..ops
        },
        _ => ops,
    }
}

/// The roofline floor of a case on `hw`: launch head for `block_dim` plus
/// the larger of the memory time of `traffic` and the operations over the
/// whole chip's peak ([G §3.7.2]).
///
/// The memory time is the least the timing model can take for those
/// bytes, so an honest kernel never runs below the floor (a latency below
/// it means the model missed work): the largest of
/// - the input bytes beyond the L2 capacity over the HBM bandwidth: the
///   model holds the inputs in L2 at launch (timing/l2.rs), so only what
///   does not fit must come from HBM; the outputs stay in L2 (write-back);
/// - all bytes over the L2 bandwidth (every GM byte passes through L2);
/// - the inputs over the GM read paths and the outputs over the GM write
///   paths of every core the launch kind uses (a DMA never moves faster
///   than its core's path rate: `dma.*.l2_hit_bytes_per_cycle` for the
///   reads, the inputs being in L2, `dma.*.bytes_per_cycle` for the
///   writes).
///
/// With every input resident this floor is below the plain HBM floor
/// (bytes / HBM bandwidth) that a cold cache would give: L2 serves the
/// bytes faster than HBM. That HBM floor is computed too
/// ([`Roofline::hbm_floor_us`]): it is the quality measure, the one a
/// roofline on real hardware is drawn against (issue 23: "the roofline
/// floor stays the HBM floor").
pub fn roofline(
    hw: &HwProfile,
    traffic: Traffic,
    ops: Ops,
    block_dim: u32,
    kind: LaunchKind,
) -> Roofline {
    let cores = match kind {
        LaunchKind::Cube => hw.aic_cores,
        _ => hw.aiv_cores,
    };
    let launch_us = hw.launch_overhead_us(block_dim.max(1), cores);
    let bytes_us = |bytes: f64, per_cycle: f64| {
        if bytes <= 0.0 {
            0.0
        } else {
            hw.cycles_to_us(bytes / per_cycle)
        }
    };
    let min_bytes = traffic.read_bytes + traffic.write_bytes;
    let beyond_l2 = traffic.read_bytes.saturating_sub(hw.l2_bytes);
    let hbm_us = bytes_us(beyond_l2 as f64, hw.hbm_bytes_per_cycle);
    let l2_us = bytes_us(min_bytes as f64, hw.l2_bytes_per_cycle);
    let (aiv, aic) = match kind {
        LaunchKind::Vector => (f64::from(hw.aiv_cores), 0.0),
        LaunchKind::Cube => (0.0, f64::from(hw.aic_cores)),
        LaunchKind::Mix => (f64::from(hw.aiv_cores), f64::from(hw.aic_cores)),
    };
    // Inputs held in L2: the reads' L2-hit rates (the GM rates where a
    // path has none), at least the GM rate.
    let hit_rate = |p: &super::hw::DmaPath| p.l2_hit_bytes_per_cycle.max(p.bytes_per_cycle);
    let read_rate = aiv * hit_rate(&hw.dma.gm_to_ub) + aic * hit_rate(&hw.dma.gm_to_l1);
    let write_rate = aiv * hw.dma.ub_to_gm.bytes_per_cycle
        + aic
            * hw.dma
                .ub_to_gm
                .bytes_per_cycle
                .max(hw.dma.l0c_out.bytes_per_cycle);
    let mte_us = bytes_us(traffic.read_bytes as f64, read_rate)
        .max(bytes_us(traffic.write_bytes as f64, write_rate));
    let memory_us = hbm_us.max(l2_us).max(mte_us);
    let hbm_all_us = bytes_us(min_bytes as f64, hw.hbm_bytes_per_cycle);
    let vec_per_cycle =
        hw.peak.vector_bytes_per_cycle / ops.vector_dtype.size() as f64 * f64::from(hw.aiv_cores);
    let cube_factor = match ops.cube_dtype {
        Dtype::Int8 | Dtype::Uint8 => 2.0,
        Dtype::Float32 => 0.25,
        _ => 1.0,
    };
    let cube_per_cycle = hw.peak.cube_macs_f16_per_cycle * cube_factor * f64::from(hw.aic_cores);
    let vec_us = hw.cycles_to_us(ops.vector_elem_ops as f64 / vec_per_cycle);
    let cube_us = hw.cycles_to_us(ops.cube_macs as f64 / cube_per_cycle);
    let compute_us = vec_us.max(cube_us);
    Roofline {
        launch_us,
        memory_us,
        hbm_us,
        l2_us,
        mte_us,
        compute_us,
        floor_us: launch_us + memory_us.max(compute_us),
        hbm_all_us,
        hbm_floor_us: launch_us + hbm_all_us.max(compute_us),
        min_bytes,
        read_bytes: traffic.read_bytes,
        ops,
    }
}

/// Union length of the work intervals of one pipe.
fn busy_cycles(block: &BlockTimeline, pipe: Pipe) -> u64 {
    if pipe == Pipe::S {
        return block.scalar_busy;
    }
    let mut intervals: Vec<(u64, u64)> = block
        .spans
        .iter()
        .filter(|s| s.pipe == pipe && s.kind == SpanKind::Work)
        .map(|s| (s.start, s.end))
        .collect();
    intervals.sort_unstable();
    let mut total = 0;
    let mut cover_end = 0;
    for (start, end) in intervals {
        if end <= cover_end {
            continue;
        }
        total += end - start.max(cover_end);
        cover_end = end;
    }
    total
}

/// `part` of `whole` in percent (0 when there is no whole).
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

fn ratio(busy: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        (busy as f64 / total as f64).min(1.0)
    }
}

/// Builds the profile from the engine's output.
pub(crate) fn build(
    hw: &HwProfile,
    out: &EngineOutput,
    block_dim: u32,
    launch_us: f64,
    noise_factor: f64,
) -> Profile {
    let to_us = |cycles: u64| hw.cycles_to_us(cycles as f64) * noise_factor;
    let mut blocks = Vec::with_capacity(out.blocks.len());
    let mut any_aiv = false;
    let mut any_aic = false;
    for block in &out.blocks {
        let total = block.end.saturating_sub(block.start);
        let field = |pipe: Pipe| {
            let busy = busy_cycles(block, pipe);
            (to_us(busy), ratio(busy, total))
        };
        let l2 = &block.l2;
        let read_hit = percent(l2.read_hit_bytes, l2.read_bytes);
        let write_hit = percent(l2.write_hit_bytes, l2.write_bytes);
        let total_hit = percent(
            l2.read_hit_bytes + l2.write_hit_bytes,
            l2.read_bytes + l2.write_bytes,
        );
        let (aiv, aic) = match block.core_type {
            CoreType::Aiv => {
                any_aiv = true;
                let (vec_time_us, vec_ratio) = field(Pipe::V);
                let (scalar_time_us, scalar_ratio) = field(Pipe::S);
                let (mte2_time_us, mte2_ratio) = field(Pipe::Mte2);
                let (mte3_time_us, mte3_ratio) = field(Pipe::Mte3);
                let fields = AivFields {
                    time_us: to_us(total),
                    total_cycles: total,
                    vec_time_us,
                    vec_ratio,
                    scalar_time_us,
                    scalar_ratio,
                    mte2_time_us,
                    mte2_ratio,
                    mte3_time_us,
                    mte3_ratio,
                    read_hit_rate_pct: Some(read_hit),
                    write_hit_rate_pct: Some(write_hit),
                    total_hit_rate_pct: Some(total_hit),
                };
                (Some(fields), None)
            }
            CoreType::Aic => {
                any_aic = true;
                let (cube_time_us, cube_ratio) = field(Pipe::M);
                let (scalar_time_us, scalar_ratio) = field(Pipe::S);
                let (mte1_time_us, mte1_ratio) = field(Pipe::Mte1);
                let (mte2_time_us, mte2_ratio) = field(Pipe::Mte2);
                let (mte3_time_us, mte3_ratio) = field(Pipe::Mte3);
                let (fixpipe_time_us, fixpipe_ratio) = field(Pipe::Fix);
                let fields = AicFields {
                    time_us: to_us(total),
                    total_cycles: total,
                    cube_time_us,
                    cube_ratio,
                    scalar_time_us,
                    scalar_ratio,
                    mte1_time_us,
                    mte1_ratio,
                    mte2_time_us,
                    mte2_ratio,
                    mte3_time_us,
                    mte3_ratio,
                    fixpipe_time_us,
                    fixpipe_ratio,
                    read_hit_rate_pct: Some(read_hit),
                    write_hit_rate_pct: Some(write_hit),
                    total_hit_rate_pct: Some(total_hit),
                };
                (None, Some(fields))
            }
        };
        blocks.push(BlockProfile {
            block_id: block.block,
            core_type: block.core_type,
            aiv,
            aic,
        });
    }
    let first_start = out.blocks.iter().map(|b| b.start).min().unwrap_or(0);
    let span_cycles = out.makespan.saturating_sub(first_start);
    let core_span_us = to_us(span_cycles);
    let bytes = (out.gm_read + out.gm_write) as f64;
    let achieved_gbps = if core_span_us > 0.0 {
        bytes / (core_span_us * 1e-6) / 1e9
    } else {
        0.0
    };
    let op_type = match (any_aiv, any_aic) {
        (_, false) => "vector",
        (false, true) => "cube",
        (true, true) => "mix",
    };
    Profile {
        soc_version: hw.soc_version.clone(),
        op_type: op_type.to_string(),
        task_duration_us: launch_us * noise_factor + core_span_us,
        block_dim,
        cores: Some(if op_type == "vector" {
            hw.aiv_cores
        } else {
            hw.aic_cores
        }),
        freq_mhz: hw.clock_hz / 1e6,
        launch_overhead_us: launch_us * noise_factor,
        core_span_us,
        gm_read_bytes: Some(out.gm_read),
        gm_write_bytes: Some(out.gm_write),
        achieved_gbps,
        hbm_read_bytes: Some(out.hbm_read),
        hbm_write_bytes: Some(out.hbm_write),
        l2_read_hit_rate_pct: Some(percent(
            out.blocks.iter().map(|b| b.l2.read_hit_bytes).sum(),
            out.blocks.iter().map(|b| b.l2.read_bytes).sum(),
        )),
        l2_write_hit_rate_pct: Some(percent(
            out.blocks.iter().map(|b| b.l2.write_hit_bytes).sum(),
            out.blocks.iter().map(|b| b.l2.write_bytes).sum(),
        )),
        hbm_gbps: hw.hbm_gbps(),
        noise_factor: Some(noise_factor),
        kernel_code: Some(KernelCode {
            instructions: out.blocks.iter().map(|b| b.code.instructions).sum(),
            time_us: to_us(out.blocks.iter().map(|b| b.code.cycles).sum()),
            gm_accesses: out.blocks.iter().map(|b| b.code.gm_accesses).sum(),
            dcache_misses: out.blocks.iter().map(|b| b.code.misses).sum(),
        }),
        blocks,
        roofline: None,
        roofline_reached_pct: None,
        hotspots: None,
    }
}
