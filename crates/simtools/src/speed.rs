//! How fast the tool itself is (`ascendopt bench-speed`): per operator the
//! compile time (cold, then cached), and the functional run and the timing
//! of its largest case (on a chip: the chip's build, run and profile, no
//! instruction count); then the medians.

use ascendopt_device::{Device, ProfileRequest, RunOutcome};
use ascendopt_harness::eval::{prepare_case, profile_request};
use ascendopt_harness::pipeline::bench_case;
use ascendopt_op::package::OpPackage;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// One operator's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SpeedRow {
    /// It did not build.
    BuildFailed {
        /// The operator.
        op: String,
        /// `build failed: ...`.
        error: String,
    },
    /// It built, but its largest case did not finish.
    RunFailed {
        /// The operator.
        op: String,
        /// Cold compile, ms (0 when the build was found cached).
        compile_ms: u64,
        /// The same build again, cached, ms.
        cached_ms: u64,
        /// The case.
        case: String,
        /// The device's summary of the outcome.
        error: String,
    },
    /// Everything measured.
    Measured {
        /// The operator.
        op: String,
        /// Cold compile, ms (0 when the build was found cached).
        compile_ms: u64,
        /// The same build again, cached, ms.
        cached_ms: u64,
        /// The case.
        case: String,
        /// The launch (worker, functional run), ms.
        run_ms: u64,
        /// The profile (the timing model on the simulator), ms.
        timing_ms: u64,
        /// Instructions traced (0 on a chip).
        instructions: usize,
    },
}

/// The medians over the operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SpeedSummary {
    /// Median cold compile (operators compiled cold only), ms.
    pub median_compile_ms: u64,
    /// Median run + timing of the largest case, ms.
    pub median_simulation_ms: u64,
}

/// Why the figures could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum SpeedError {
    /// The largest case's inputs or golden could not be made.
    #[error("{op}: preparing the largest case: {source}")]
    Prepare {
        /// The operator.
        op: String,
        /// Why.
        #[source]
        source: ascendopt_harness::eval::PrepareError,
    },
    /// The private build cache could not be cleared.
    #[error("{}: {error}", path.display())]
    Cache {
        /// The cache folder.
        path: std::path::PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

/// Measures every package of `pkgs` on `device` in turn (a package
/// without cases is left out), telling `on_row` each row. `cache` is the
/// device's private build cache, when it has one: after the first
/// operator's builds everything but the shared runtime objects (`rt-*`)
/// is removed from it, so that every figure is one operator's.
pub fn measure(
    device: &dyn Device,
    pkgs: &[OpPackage],
    cache: Option<&Path>,
    on_row: &mut dyn FnMut(&SpeedRow),
) -> Result<SpeedSummary, SpeedError> {
    let mut compile = Vec::new();
    let mut sim = Vec::new();
    for (i, pkg) in pkgs.iter().enumerate() {
        if i == 0 {
            // Warm the shared runtime objects so every figure is one operator.
            let _ = device.build(pkg);
            if let Some(dir) = cache {
                let entries = std::fs::read_dir(dir).map_err(|error| SpeedError::Cache {
                    path: dir.to_path_buf(),
                    error,
                })?;
                for entry in entries.flatten() {
                    if !entry.file_name().to_string_lossy().starts_with("rt-") {
                        let _ = std::fs::remove_file(entry.path());
                    }
                }
            }
        }
        let op = pkg.name().to_string();
        let t = Instant::now();
        let first = device.build(pkg);
        let cold = t.elapsed().as_millis() as u64;
        let t = Instant::now();
        let artifact = match device.build(pkg) {
            Ok(a) => a,
            Err(e) => {
                on_row(&SpeedRow::BuildFailed {
                    op,
                    error: format!("build failed: {e}"),
                });
                continue;
            }
        };
        let cached = t.elapsed().as_millis() as u64;
        let cold = if first.as_ref().map(|a| a.cached).unwrap_or(false) {
            0
        } else {
            cold
        };
        let Some(case) = bench_case(pkg) else {
            continue;
        };
        let prepared = prepare_case(pkg, case, 1).map_err(|source| SpeedError::Prepare {
            op: op.clone(),
            source,
        })?;
        let t = Instant::now();
        let outcome = device.run(&artifact, &prepared.request);
        let run_ms = t.elapsed().as_millis() as u64;
        let RunOutcome::Finished(result) = outcome else {
            on_row(&SpeedRow::RunFailed {
                op,
                compile_ms: cold,
                cached_ms: cached,
                case: case.name.clone(),
                error: outcome.summary(),
            });
            continue;
        };
        let req: ProfileRequest = profile_request(&prepared, 1, true);
        let t = Instant::now();
        let _ = device.profile(&result, &req);
        let timing_ms = t.elapsed().as_millis() as u64;
        let instructions = ascendopt_sim::device::trace_of(&result).map_or(0, |t| t.len());
        on_row(&SpeedRow::Measured {
            op,
            compile_ms: cold,
            cached_ms: cached,
            case: case.name.clone(),
            run_ms,
            timing_ms,
            instructions,
        });
        if cold > 0 {
            compile.push(cold);
        }
        sim.push(run_ms + timing_ms);
    }
    Ok(SpeedSummary {
        median_compile_ms: median(&mut compile),
        median_simulation_ms: median(&mut sim),
    })
}

/// The upper median (0 for none).
fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_upper_one_and_zero_for_none() {
        assert_eq!(median(&mut []), 0);
        assert_eq!(median(&mut [5, 1, 3]), 3);
        assert_eq!(median(&mut [4, 1, 3, 2]), 3);
    }
}
