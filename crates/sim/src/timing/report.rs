//! The profile of one launch with the field names of `msprof op`
//! (OpBasicInfo.csv and PipeUtilization.csv, [G §3.7], hardware-facts.md
//! §G), plus bytes moved, achieved bandwidth and the roofline floor.
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
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Vector-core fields of PipeUtilization.csv for one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AivFields {
    /// Block span.
    #[serde(rename = "aiv_time(us)")]
    pub time_us: f64,
    /// Block span in cycles.
    #[serde(rename = "aiv_total_cycles")]
    pub total_cycles: u64,
    /// PIPE_V busy time.
    #[serde(rename = "aiv_vec_time(us)")]
    pub vec_time_us: f64,
    /// PIPE_V busy ratio.
    #[serde(rename = "aiv_vec_ratio")]
    pub vec_ratio: f64,
    /// Scalar busy time.
    #[serde(rename = "aiv_scalar_time(us)")]
    pub scalar_time_us: f64,
    /// Scalar busy ratio.
    #[serde(rename = "aiv_scalar_ratio")]
    pub scalar_ratio: f64,
    /// MTE2 busy time.
    #[serde(rename = "aiv_mte2_time(us)")]
    pub mte2_time_us: f64,
    /// MTE2 busy ratio.
    #[serde(rename = "aiv_mte2_ratio")]
    pub mte2_ratio: f64,
    /// MTE3 busy time.
    #[serde(rename = "aiv_mte3_time(us)")]
    pub mte3_time_us: f64,
    /// MTE3 busy ratio.
    #[serde(rename = "aiv_mte3_ratio")]
    pub mte3_ratio: f64,
}

/// Cube-core fields of PipeUtilization.csv for one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AicFields {
    /// Block span.
    #[serde(rename = "aic_time(us)")]
    pub time_us: f64,
    /// Block span in cycles.
    #[serde(rename = "aic_total_cycles")]
    pub total_cycles: u64,
    /// PIPE_M busy time.
    #[serde(rename = "aic_cube_time(us)")]
    pub cube_time_us: f64,
    /// PIPE_M busy ratio.
    #[serde(rename = "aic_cube_ratio")]
    pub cube_ratio: f64,
    /// Scalar busy time.
    #[serde(rename = "aic_scalar_time(us)")]
    pub scalar_time_us: f64,
    /// Scalar busy ratio.
    #[serde(rename = "aic_scalar_ratio")]
    pub scalar_ratio: f64,
    /// MTE1 busy time.
    #[serde(rename = "aic_mte1_time(us)")]
    pub mte1_time_us: f64,
    /// MTE1 busy ratio.
    #[serde(rename = "aic_mte1_ratio")]
    pub mte1_ratio: f64,
    /// MTE2 busy time.
    #[serde(rename = "aic_mte2_time(us)")]
    pub mte2_time_us: f64,
    /// MTE2 busy ratio.
    #[serde(rename = "aic_mte2_ratio")]
    pub mte2_ratio: f64,
    /// MTE3 busy time.
    #[serde(rename = "aic_mte3_time(us)")]
    pub mte3_time_us: f64,
    /// MTE3 busy ratio.
    #[serde(rename = "aic_mte3_ratio")]
    pub mte3_ratio: f64,
    /// FixPipe busy time.
    #[serde(rename = "aic_fixpipe_time(us)")]
    pub fixpipe_time_us: f64,
    /// FixPipe busy ratio.
    #[serde(rename = "aic_fixpipe_ratio")]
    pub fixpipe_ratio: f64,
}

/// One row of PipeUtilization.csv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockProfile {
    /// Block index.
    pub block_id: u32,
    /// `aiv` or `aic`.
    pub core_type: CoreType,
    /// Vector-core fields (vector blocks).
    #[serde(flatten, skip_serializing_if = "Option::is_none", default)]
    pub aiv: Option<AivFields>,
    /// Cube-core fields (cube blocks).
    #[serde(flatten, skip_serializing_if = "Option::is_none", default)]
    pub aic: Option<AicFields>,
}

impl BlockProfile {
    /// The block's span in µs.
    pub fn time_us(&self) -> f64 {
        match (&self.aiv, &self.aic) {
            (Some(v), _) => v.time_us,
            (None, Some(c)) => c.time_us,
            (None, None) => 0.0,
        }
    }

    /// (msprof field name, ratio) of every pipe of this block.
    pub fn ratios(&self) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        if let Some(v) = &self.aiv {
            out.extend([
                ("aiv_vec_ratio", v.vec_ratio),
                ("aiv_scalar_ratio", v.scalar_ratio),
                ("aiv_mte2_ratio", v.mte2_ratio),
                ("aiv_mte3_ratio", v.mte3_ratio),
            ]);
        }
        if let Some(c) = &self.aic {
            out.extend([
                ("aic_cube_ratio", c.cube_ratio),
                ("aic_scalar_ratio", c.scalar_ratio),
                ("aic_mte1_ratio", c.mte1_ratio),
                ("aic_mte2_ratio", c.mte2_ratio),
                ("aic_mte3_ratio", c.mte3_ratio),
                ("aic_fixpipe_ratio", c.fixpipe_ratio),
            ]);
        }
        out
    }
}

/// Operations of a case, for the roofline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ops {
    /// Element operations on the vector unit (one per output element per
    /// elementary op).
    pub vector_elem_ops: u64,
    /// Element type of the vector work.
    pub vector_dtype: Dtype,
    /// Multiply-accumulates on the cube unit.
    pub cube_macs: u64,
    /// Input element type of the cube work.
    pub cube_dtype: Dtype,
}

impl Ops {
    /// Pure vector work.
    pub fn vector(elem_ops: u64, dtype: Dtype) -> Ops {
        Ops {
            vector_elem_ops: elem_ops,
            vector_dtype: dtype,
            cube_macs: 0,
            cube_dtype: Dtype::Float16,
        }
    }
}

/// The roofline floor of a case: launch head + max(memory, compute).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roofline {
    /// Launch head for the case's Block Dim, µs.
    pub launch_us: f64,
    /// Minimum GM bytes over the HBM bandwidth, µs.
    pub memory_us: f64,
    /// Operations over the chip's peak, µs.
    pub compute_us: f64,
    /// The floor, µs.
    pub floor_us: f64,
    /// Minimum bytes the case must move.
    pub min_bytes: u64,
    /// The operations.
    pub ops: Ops,
}

/// The roofline floor of a case on `hw`: launch head for `block_dim` plus
/// the larger of `min_bytes` over the HBM bandwidth and the operations over
/// the whole chip's peak ([G §3.7.2]).
pub fn roofline(hw: &HwProfile, min_bytes: u64, ops: Ops, block_dim: u32) -> Roofline {
    let cores = if ops.cube_macs > 0 && ops.vector_elem_ops == 0 {
        hw.aic_cores
    } else {
        hw.aiv_cores
    };
    let launch_us = hw.launch_overhead_us(block_dim.max(1), cores);
    let memory_us = min_bytes as f64 / (hw.hbm_bytes_per_cycle * hw.clock_hz) * 1e6;
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
        compute_us,
        floor_us: launch_us + memory_us.max(compute_us),
        min_bytes,
        ops,
    }
}

/// The profile of one launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// SoC simulated.
    #[serde(rename = "Soc Version")]
    pub soc_version: String,
    /// `vector`, `cube` or `mix`.
    #[serde(rename = "Op Type")]
    pub op_type: String,
    /// Launch head plus the cores' span, µs.
    #[serde(rename = "Task Duration(us)")]
    pub task_duration_us: f64,
    /// Blocks launched.
    #[serde(rename = "Block Dim")]
    pub block_dim: u32,
    /// Core clock, MHz.
    #[serde(rename = "Current Freq")]
    pub freq_mhz: f64,
    /// Launch head, µs.
    #[serde(rename = "launch_overhead(us)")]
    pub launch_overhead_us: f64,
    /// First block start to last block end, µs.
    #[serde(rename = "core_span(us)")]
    pub core_span_us: f64,
    /// GM bytes read by DMAs.
    #[serde(rename = "gm_read_bytes")]
    pub gm_read_bytes: u64,
    /// GM bytes written by DMAs.
    #[serde(rename = "gm_write_bytes")]
    pub gm_write_bytes: u64,
    /// (read + write) / core span.
    #[serde(rename = "achieved_bandwidth(GB/s)")]
    pub achieved_gbps: f64,
    /// The chip's HBM bandwidth, for comparison.
    #[serde(rename = "hbm_bandwidth(GB/s)")]
    pub hbm_gbps: f64,
    /// Measurement noise factor applied to every time (1 when
    /// deterministic).
    pub noise_factor: f64,
    /// Per block rows.
    pub blocks: Vec<BlockProfile>,
    /// The roofline floor, when the caller gave the case's work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofline: Option<Roofline>,
    /// Floor / Task Duration, percent.
    #[serde(
        rename = "roofline_reached(%)",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub roofline_reached_pct: Option<f64>,
    /// Where the slowest block's time goes, by kernel source line, when
    /// the device attached it ([`super::hotspots`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hotspots: Option<super::Hotspots>,
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
        freq_mhz: hw.clock_hz / 1e6,
        launch_overhead_us: launch_us * noise_factor,
        core_span_us,
        gm_read_bytes: out.gm_read,
        gm_write_bytes: out.gm_write,
        achieved_gbps,
        hbm_gbps: hw.hbm_gbps(),
        noise_factor,
        blocks,
        roofline: None,
        roofline_reached_pct: None,
        hotspots: None,
    }
}

impl Profile {
    /// Records the case's roofline and the percentage of it reached.
    pub fn attach_roofline(&mut self, roofline: Roofline) {
        self.roofline_reached_pct = if self.task_duration_us > 0.0 {
            Some(roofline.floor_us / self.task_duration_us * 100.0)
        } else {
            None
        };
        self.roofline = Some(roofline);
    }

    /// The slowest block.
    pub fn slowest_block(&self) -> Option<&BlockProfile> {
        self.blocks
            .iter()
            .max_by(|a, b| a.time_us().total_cmp(&b.time_us()))
    }

    /// The busiest pipe of the slowest block: (msprof ratio name, ratio).
    pub fn bottleneck(&self) -> Option<(&'static str, f64)> {
        self.slowest_block()?
            .ratios()
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The text `ascendopt eval --profile` prints.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Op Type                    {}", self.op_type);
        let _ = writeln!(s, "Task Duration(us)          {:.3}", self.task_duration_us);
        let _ = writeln!(s, "Block Dim                  {}", self.block_dim);
        let _ = writeln!(
            s,
            "Soc / Freq                 {} @ {:.0} MHz",
            self.soc_version, self.freq_mhz
        );
        let _ = writeln!(
            s,
            "launch_overhead(us)        {:.3}   core_span(us) {:.3}",
            self.launch_overhead_us, self.core_span_us
        );
        let total = self.gm_read_bytes + self.gm_write_bytes;
        let _ = writeln!(
            s,
            "GM bytes                   {} (read {}, write {})",
            total, self.gm_read_bytes, self.gm_write_bytes
        );
        let _ = writeln!(
            s,
            "achieved_bandwidth(GB/s)   {:.1} of {:.0} HBM ({:.1}%)",
            self.achieved_gbps,
            self.hbm_gbps,
            if self.hbm_gbps > 0.0 {
                self.achieved_gbps / self.hbm_gbps * 100.0
            } else {
                0.0
            }
        );
        if let (Some(r), Some(pct)) = (&self.roofline, self.roofline_reached_pct) {
            let _ = writeln!(
                s,
                "roofline floor(us)         {:.3} = launch {:.3} + max(memory {:.3}, compute {:.3}); reached {:.1}%",
                r.floor_us, r.launch_us, r.memory_us, r.compute_us, pct
            );
        }
        if let Some((name, value)) = self.bottleneck() {
            let _ = writeln!(
                s,
                "bottleneck                 {name} = {value:.3} (slowest block)"
            );
        }
        if (self.noise_factor - 1.0).abs() > 0.0 {
            let _ = writeln!(s, "noise factor               {:.4}", self.noise_factor);
        }
        let has_aiv = self.blocks.iter().any(|b| b.aiv.is_some());
        let has_aic = self.blocks.iter().any(|b| b.aic.is_some());
        if has_aiv {
            let _ = writeln!(
                s,
                "{:>8} {:>12} {:>13} {:>16} {:>14} {:>14}",
                "block_id",
                "aiv_time(us)",
                "aiv_vec_ratio",
                "aiv_scalar_ratio",
                "aiv_mte2_ratio",
                "aiv_mte3_ratio"
            );
            for block in &self.blocks {
                if let Some(v) = &block.aiv {
                    let _ = writeln!(
                        s,
                        "{:>8} {:>12.3} {:>13.3} {:>16.3} {:>14.3} {:>14.3}",
                        block.block_id,
                        v.time_us,
                        v.vec_ratio,
                        v.scalar_ratio,
                        v.mte2_ratio,
                        v.mte3_ratio
                    );
                }
            }
        }
        if has_aic {
            let _ = writeln!(
                s,
                "{:>8} {:>12} {:>14} {:>16} {:>14} {:>14} {:>14} {:>17}",
                "block_id",
                "aic_time(us)",
                "aic_cube_ratio",
                "aic_scalar_ratio",
                "aic_mte1_ratio",
                "aic_mte2_ratio",
                "aic_mte3_ratio",
                "aic_fixpipe_ratio"
            );
            for block in &self.blocks {
                if let Some(c) = &block.aic {
                    let _ = writeln!(
                        s,
                        "{:>8} {:>12.3} {:>14.3} {:>16.3} {:>14.3} {:>14.3} {:>14.3} {:>17.3}",
                        block.block_id,
                        c.time_us,
                        c.cube_ratio,
                        c.scalar_ratio,
                        c.mte1_ratio,
                        c.mte2_ratio,
                        c.mte3_ratio,
                        c.fixpipe_ratio
                    );
                }
            }
        }
        s
    }
}
