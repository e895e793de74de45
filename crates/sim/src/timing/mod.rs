//! Timing model of the Ascend 910B2: a pure function from an instruction
//! trace and a hardware profile to a latency, an `msprof op`-style profile
//! and a timeline.
//!
//! Entry points: [`HwProfile::builtin`] / [`HwProfile::load`], [`simulate`],
//! [`Profile::render_text`], [`chrome_trace_json`], [`roofline`].
//!
//! The model (details in [`engine`]): per block, an in-order scalar unit
//! issues every API call into the issue queue (32 deep) of the pipe that runs
//! it (Vector, Cube, MTE1, MTE2, MTE3, FixPipe); pipes run their queues in
//! order; the kernel's own compiled code between API calls (counted by the
//! build's instrumentation, [`crate::build::instrument`]) occupies the
//! scalar unit for its instructions plus a GM round trip per data-cache
//! miss, so the API calls after it issue later; queue
//! EnQue/DeQue/FreeTensor/AllocTensor (lowered to flags by the
//! runtime), SetFlag/WaitFlag, PipeBarrier and SyncAll are the dependencies
//! between pipes; a vector call costs `head + per_repeat * repeats`; a DMA
//! costs `issue + bytes / rate + latency`, the rate being the lesser of the
//! core's cap (the path's rate, or its L2-hit rate for the bytes L2 holds;
//! cut for GM addresses that are not 512 B aligned; at most one burst per
//! `dma.burst_cycles`) and its max-min fair share of the L2 and HBM
//! bandwidths, which the GM traffic of every core in flight shares; the
//! launch head grows with the block count. Every number comes
//! from `profiles/<chip>.toml` with its source.
//!
//! Invariants:
//! - `timing` reads only the trace and the profile: never tensor values,
//!   never wall-clock time. Same inputs, same result (noise is seeded).
//! - Time never goes back (asserted in the event loop).

pub mod chrome;
pub mod cost;
pub mod engine;
mod hbm;
pub mod hotspots;
pub mod hw;
mod l2;
pub mod noise;
pub mod report;

pub use ascendopt_device::msprof_csv;

pub mod fidelity;
pub mod fidelity_cube;
pub(crate) mod synth;
pub(crate) mod synth_matmul;
#[cfg(test)]
mod tests;

pub use chrome::chrome_trace_json;
pub use engine::{BlockTimeline, CodeStats, CoreType, Cycle, L2Stats, Span, SpanKind};
pub use hotspots::{hotspots, Hotspots};
pub use hw::{HwProfile, HwProfileError, NoiseLevel};
pub use noise::Noise;
pub use report::{roofline, BlockProfile, KernelCode, LaunchKind, Ops, Profile, Roofline, Traffic};

use crate::trace::Trace;
use thiserror::Error;

/// Why a trace could not be timed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TimingError {
    /// Some block can never finish: on the device the kernel would hang.
    #[error("deadlock: block {block} never finishes: {detail}")]
    Deadlock {
        /// The first block that is stuck.
        block: u32,
        /// What it waits for, with the API call and source line.
        detail: String,
    },
}

/// Options of one simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingOptions {
    /// Measurement noise.
    pub noise: Noise,
}

impl TimingOptions {
    /// No noise: identical latency on every run.
    pub fn deterministic() -> TimingOptions {
        TimingOptions {
            noise: Noise::Deterministic,
        }
    }

    /// The device's default noise level (from the profile), seeded.
    pub fn device_default(hw: &HwProfile, seed: u64) -> TimingOptions {
        TimingOptions {
            noise: Noise::Seeded {
                seed,
                level: hw.noise,
            },
        }
    }
}

/// The instruction-level timeline of a launch (noise-free).
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Core clock, Hz (to turn cycles into time).
    pub clock_hz: f64,
    /// Launch head before the first block starts, µs.
    pub launch_us: f64,
    /// Cycle the last block ended (from the first block start).
    pub makespan: Cycle,
    /// Per block, by block index.
    pub blocks: Vec<BlockTimeline>,
    /// Bytes per cycle moving through L2 and through HBM from each change
    /// on: (cycle, [L2, HBM]).
    pub bandwidth: Vec<(Cycle, [f64; 2])>,
    /// Events the simulation processed.
    pub events: u64,
}

/// What [`simulate`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    /// The msprof-style profile (with noise applied).
    pub profile: Profile,
    /// The timeline (noise-free).
    pub timeline: Timeline,
}

/// Times a trace on a chip.
pub fn simulate(
    trace: &Trace,
    hw: &HwProfile,
    opts: &TimingOptions,
) -> Result<SimResult, TimingError> {
    let out = engine::run(trace, hw)?;
    let block_dim = if trace.block_dim > 0 {
        trace.block_dim
    } else {
        trace.blocks.len() as u32
    };
    let only_cube =
        !out.blocks.is_empty() && out.blocks.iter().all(|b| b.core_type == CoreType::Aic);
    let cores = if only_cube {
        hw.aic_cores
    } else {
        hw.aiv_cores
    };
    let launch_us = hw.launch_overhead_us(block_dim, cores);
    let clean_us = launch_us + hw.cycles_to_us(out.makespan as f64);
    let factor = noise::factor(&opts.noise, clean_us);
    let profile = report::build(hw, &out, block_dim, launch_us, factor);
    Ok(SimResult {
        profile,
        timeline: Timeline {
            clock_hz: hw.clock_hz,
            launch_us,
            makespan: out.makespan,
            blocks: out.blocks,
            bandwidth: out.bandwidth,
            events: out.events,
        },
    })
}
