//! Nothing faster than physics: a measured latency below what the hardware
//! can do fails the evaluation ("faster than the hardware limit: the
//! timing model missed work"), whatever the timing model says. The timing
//! model charges the kernel's recorded instructions; work done outside
//! them (plain C++ loops over global memory, a trace the kernel forged in
//! its own process) is what this guard catches.
//!
//! Two floors, both from the profile's roofline as the timing module
//! computes it (`crates/sim/src/timing`: launch head, minimum bytes over
//! the memory bandwidth, operations over the peak):
//!
//! - the output floor: the launch head plus every output byte written once
//!   at the roofline's memory rate. Every output element starts poisoned
//!   and must be written, so no correct kernel is below it; it has no
//!   margin.
//! - the roofline floor itself, with a margin of [`ROOFLINE_MARGIN`]: the
//!   roofline counts every input byte as read once, and an operator that
//!   need not read all of its input legitimately gets above 100% of it
//!   (tril and triu skip the part they zero: at their true floor they
//!   read half the input and write all the output, (I + O) / (I / 2 + O)
//!   = 133% of the counted bytes for I = O). A latency whose share of the
//!   roofline exceeds 100% + the margin fails.
//!
//! Both use the roofline's physical floor ([`Roofline::floor_us`] and its
//! memory time per byte), which accounts for inputs resident in L2 at
//! launch: the lowest time physically possible. The HBM floor
//! ([`Roofline::hbm_floor_us`], every byte over the HBM bandwidth) is the
//! quality measure of the profile and the suite table, not a physical
//! limit: a kernel served from L2 legitimately runs below it.
//!
//! [`Roofline::floor_us`]: ascendopt_device::Roofline::floor_us
//! [`Roofline::hbm_floor_us`]: ascendopt_device::Roofline::hbm_floor_us
//!
//! A third check needs no floor and is the device's to answer
//! (`Device::unmeasured_output_writes`): on the simulator, every output
//! byte must have been written by an instruction of the trace. Output
//! elements start poisoned and a correct kernel wrote all of them; an
//! element that no traced instruction (DataCopy, SetValue, Fixpipe, ...)
//! wrote was stored by plain C++ through a GM pointer, work the timing
//! model cannot see. Without it, such a kernel on a small case hides below
//! the launch head's share of the output floor.

use ascendopt_device::Profile;

/// How far above 100% of the roofline a latency may be (see the module
/// docs): 35%, a little more than the 33% an operator that reads half its
/// input reaches at its true floor.
pub const ROOFLINE_MARGIN: f64 = 0.35;

/// The reason a latency is faster than the hardware allows, or None.
/// `output_bytes` is the size of every output of the case.
pub fn faster_than_physics(profile: &Profile, output_bytes: u64) -> Option<String> {
    let roofline = profile.roofline.as_ref()?;
    let latency = profile.task_duration_us;
    if !(latency.is_finite() && latency > 0.0) {
        return Some(format!(
            "faster than the hardware limit: the timing model missed work (a latency of {latency} us)"
        ));
    }
    let per_byte = if roofline.min_bytes > 0 {
        roofline.memory_us / roofline.min_bytes as f64
    } else {
        0.0
    };
    let output_floor = roofline.launch_us + per_byte * output_bytes as f64;
    if latency < output_floor * (1.0 - 1e-9) {
        return Some(format!(
            "faster than the hardware limit: the timing model missed work ({latency:.3} us, \
             below the {output_floor:.3} us it takes to launch and write the {output_bytes} \
             output bytes once)"
        ));
    }
    let share = roofline.floor_us / latency;
    if share > 1.0 + ROOFLINE_MARGIN {
        return Some(format!(
            "faster than the hardware limit: the timing model missed work ({latency:.3} us is \
             {:.0}% of the roofline floor {:.3} us = launch {:.3} + max(memory {:.3}, compute \
             {:.3}); at most {:.0}% is possible)",
            share * 100.0,
            roofline.floor_us,
            roofline.launch_us,
            roofline.memory_us,
            roofline.compute_us,
            (1.0 + ROOFLINE_MARGIN) * 100.0
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_device::{Ops, Roofline};
    use ascendopt_op::Dtype;

    fn profile(latency: f64) -> Profile {
        let mut p: Profile = serde_json::from_value(serde_json::json!({
            "Soc Version": "Ascend910B2",
            "Op Type": "vector",
            "Task Duration(us)": latency,
            "Block Dim": 8,
            "Current Freq": 1800.0,
            "launch_overhead(us)": 10.0,
            "core_span(us)": latency - 10.0,
            "gm_read_bytes": 0,
            "gm_write_bytes": 0,
            "achieved_bandwidth(GB/s)": 0.0,
            "hbm_bandwidth(GB/s)": 1600.0,
            "noise_factor": 1.0,
            "blocks": [],
        }))
        .unwrap();
        p.attach_roofline(Roofline {
            launch_us: 10.0,
            memory_us: 30.0,
            hbm_us: 30.0,
            l2_us: 10.0,
            mte_us: 20.0,
            compute_us: 5.0,
            floor_us: 40.0,
            // The HBM floor (cold cache) is above the physical one.
            hbm_all_us: 50.0,
            hbm_floor_us: 60.0,
            // Two inputs and one output of 1000 bytes each.
            min_bytes: 3000,
            read_bytes: 2000,
            ops: Ops::vector(250, Dtype::Float32),
        });
        p
    }

    #[test]
    fn honest_latencies_pass_and_impossible_ones_name_the_cause() {
        assert_eq!(faster_than_physics(&profile(45.0), 1000), None);
        // Served from L2: at the physical floor and 150% of the HBM floor,
        // which is a quality measure, not a limit.
        assert_eq!(faster_than_physics(&profile(40.0), 1000), None);
        // A kernel that needs half its input may reach 133%.
        assert_eq!(faster_than_physics(&profile(40.0 / 1.3), 1000), None);
        let beyond = faster_than_physics(&profile(40.0 / 1.5), 1000).unwrap();
        assert!(beyond.starts_with("faster than the hardware limit: the timing model missed work"));
        assert!(beyond.contains("150% of the roofline floor"), "{beyond}");
        // Below launch + writing the outputs once: 10 + 10 us.
        let none = faster_than_physics(&profile(12.0), 1000).unwrap();
        assert!(none.contains("write the 1000 output bytes"), "{none}");
        assert!(faster_than_physics(&profile(0.0), 1000).is_some());
    }
}
