//! Measuring the acceptance rule on the device itself: how often an
//! identical kernel is called faster (false accepts) and how often a true
//! speedup is detected (power), with the device's own measurement noise.
//!
//! The benchmark case of an operator is run once; its latency is then
//! measured `repeats` times per side per trial through the device's
//! profiler, interleaving candidate and incumbent samples as the agent does.
//! A "true speedup" candidate is the same measurement scaled by 1/speedup.

use ascendopt_device::{Device, DeviceError, QueryError, RunOutcome};
use ascendopt_harness::compare::{faster, CompareConfig};
use ascendopt_harness::eval::{prepare_case, profile_request};
use ascendopt_harness::pipeline::bench_case;
use ascendopt_op::package::OpPackage;

/// The result of [`rule_bench`].
#[derive(Debug, Clone, PartialEq)]
pub struct RuleBench {
    /// The case measured.
    pub case: String,
    /// Median latency, µs.
    pub latency_us: f64,
    /// Coefficient of variation of the device's samples.
    pub cv: f64,
    /// Fraction of trials in which an identical kernel was called faster.
    pub false_accept: f64,
    /// Fraction of trials in which a true speedup was detected.
    pub power: f64,
    /// The speedup used for the power.
    pub speedup: f64,
    /// Trials run.
    pub trials: usize,
    /// Samples per side.
    pub repeats: usize,
}

/// Why the rule could not be measured on an operator.
#[derive(Debug, thiserror::Error)]
pub enum RuleBenchError {
    /// The operator has no case to measure.
    #[error("the operator has no cases")]
    NoCases,
    /// The operator did not build.
    #[error(transparent)]
    Build(#[from] DeviceError),
    /// The benchmark case's inputs or golden could not be made.
    #[error("preparing the benchmark case: {0}")]
    Prepare(#[source] ascendopt_harness::eval::PrepareError),
    /// The launch did not finish (fault, timeout, crash), as the device
    /// summed it up.
    #[error("{0}")]
    Run(String),
    /// The device could not profile the run or sample its latency.
    #[error(transparent)]
    Measure(#[from] QueryError),
}

/// Measures the rule on `package`'s benchmark case.
pub fn rule_bench(
    device: &dyn Device,
    package: &OpPackage,
    cfg: &CompareConfig,
    speedup: f64,
    trials: usize,
    seed: u64,
) -> Result<RuleBench, RuleBenchError> {
    let case = bench_case(package).ok_or(RuleBenchError::NoCases)?;
    let artifact = device.build(package)?;
    let prepared = prepare_case(package, case, seed).map_err(RuleBenchError::Prepare)?;
    let result = match device.run(&artifact, &prepared.request) {
        RunOutcome::Finished(r) => r,
        other => return Err(RuleBenchError::Run(other.summary())),
    };
    let per_trial = 3 * cfg.repeats;
    let seeds: Vec<u64> = (0..(trials * per_trial) as u64)
        .map(|k| seed.wrapping_add(k).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    // The noise-free profile the device measures its samples around.
    let clean = device.profile(&result, &profile_request(&prepared, seed, true))?;
    let samples = device.latency_samples(&result, &clean, &seeds)?;
    let (mut fa, mut hits) = (0usize, 0usize);
    let mut all = Vec::new();
    for trial in samples.chunks(per_trial) {
        // Interleaved: candidate, quick candidate, incumbent, candidate, ...
        let (mut same, mut inc, mut quick) = (Vec::new(), Vec::new(), Vec::new());
        for s in trial.chunks(3) {
            if let [a, b, c] = s {
                same.push(*a);
                quick.push(*b / speedup);
                inc.push(*c);
            }
        }
        all.extend_from_slice(&inc);
        if faster(&same, &inc, cfg).faster {
            fa += 1;
        }
        if faster(&quick, &inc, cfg).faster {
            hits += 1;
        }
    }
    let mean = all.iter().sum::<f64>() / all.len().max(1) as f64;
    let var = all.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (all.len().max(2) - 1) as f64;
    let mut sorted = all.clone();
    sorted.sort_by(f64::total_cmp);
    Ok(RuleBench {
        case: case.name.clone(),
        latency_us: sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN),
        cv: var.sqrt() / mean,
        false_accept: fa as f64 / trials.max(1) as f64,
        power: hits as f64 / trials.max(1) as f64,
        speedup,
        trials,
        repeats: cfg.repeats,
    })
}
