//! The profile of a launch on the chip, from what `msprof op` reported
//! ([`super::msprof::KernelProfile`]: OpBasicInfo and PipeUtilization),
//! in the same typed [`Profile`] as the simulator's.
//!
//! Only what the chip reported is filled. A time, rate or ratio it does
//! not report is NaN, which the run store's JSON holds as `null` (absent),
//! never a made-up zero: the launch head, the cores' span, the achieved
//! and HBM bandwidths, the noise factor, the L2 hit rates (L2Cache.csv is
//! not read) and, without `Current Freq`, the clock. The byte counters
//! (`gm_*_bytes`, `hbm_*_bytes`) and the kernel-code counters are absent
//! (`None`, left out of the stored JSON); [`UNREPORTED`] names every field
//! a chip profile leaves out. The roofline is not attached: it is the
//! simulator's hardware model, not a measurement.

use super::msprof::KernelProfile;
use crate::profile::Profile;

/// The profile fields `msprof op`'s OpBasicInfo and PipeUtilization do
/// not report (their value in a chip profile is NaN, or `None` for the
/// optional fields).
pub const UNREPORTED: &[&str] = &[
    "launch_overhead(us)",
    "core_span(us)",
    "gm_read_bytes",
    "gm_write_bytes",
    "achieved_bandwidth(GB/s)",
    "hbm_read_bytes",
    "hbm_write_bytes",
    "l2_read_hit_rate(%)",
    "l2_write_hit_rate(%)",
    "hbm_bandwidth(GB/s)",
    "noise_factor",
    "kernel_code",
    "aiv_read_hit_rate(%)",
    "aiv_write_hit_rate(%)",
    "aiv_total_hit_rate(%)",
    "aic_read_hit_rate(%)",
    "aic_write_hit_rate(%)",
    "aic_total_hit_rate(%)",
];

/// The chip's profile of one kernel on SoC `soc_version`.
pub fn from_msprof(kernel: &KernelProfile, soc_version: &str) -> Profile {
    let basic = &kernel.basic;
    let blocks = kernel
        .pipes
        .iter()
        .map(|row| {
            let mut block = row.block.clone();
            if let Some(v) = block.aiv.as_mut() {
                v.read_hit_rate_pct = None;
                v.write_hit_rate_pct = None;
                v.total_hit_rate_pct = None;
            }
            if let Some(c) = block.aic.as_mut() {
                c.read_hit_rate_pct = None;
                c.write_hit_rate_pct = None;
                c.total_hit_rate_pct = None;
            }
            block
        })
        .collect();
    Profile {
        soc_version: soc_version.to_string(),
        op_type: basic.op_type.clone(),
        task_duration_us: basic.task_duration_us,
        block_dim: basic.block_dim,
        cores: None,
        freq_mhz: basic.current_freq_mhz.unwrap_or(f64::NAN),
        launch_overhead_us: f64::NAN,
        core_span_us: f64::NAN,
        gm_read_bytes: None,
        gm_write_bytes: None,
        achieved_gbps: f64::NAN,
        hbm_read_bytes: None,
        hbm_write_bytes: None,
        l2_read_hit_rate_pct: None,
        l2_write_hit_rate_pct: None,
        hbm_gbps: f64::NAN,
        noise_factor: None,
        kernel_code: None,
        blocks,
        roofline: None,
        roofline_reached_pct: None,
        hotspots: None,
    }
}
