//! How fast the evaluation loop itself is (`ascendopt bench-evals`).
//!
//! Runs N evaluations per operator through the harness pipeline exactly as
//! the agent's loops do (static check → build → hardened correctness over
//! every case → profile with repeats → re-check; recorded in a run store
//! and charged to a ledger), and measures evaluations per minute and the
//! median time of each phase, per operator and by level.
//!
//! Each of the N candidates is the operator's kernel with a distinct
//! trailing comment, so every evaluation compiles its kernel cold like a
//! fresh Stage I candidate (the host and the shared runtime objects stay
//! cached, as they do in a real run).

use ascendopt_device::{Device, RunOutcome};
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::eval::prepare_case;
use ascendopt_harness::ledger::{BudgetConfig, Ledger, LedgerError};
use ascendopt_harness::pipeline::{bench_case, evaluate_batch, PipelineConfig, PipelineError};
use ascendopt_harness::store::{RunStore, Stage, StoreError};
use ascendopt_op::package::OpPackage;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Errors that stop the measurement (a candidate that fails is counted,
/// not an error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalsError {
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The budget ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The pipeline could not attempt an evaluation.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// No evaluation asked for.
    #[error("-n must be at least 1")]
    NoEvaluations,
    /// An operator folder does not load.
    #[error("loading {}: {source}", dir.display())]
    Load {
        /// The folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: ascendopt_op::OpError,
    },
    /// An operator did not build for the breakdown.
    #[error("{op}: {source}")]
    Build {
        /// The operator.
        op: String,
        /// Why.
        #[source]
        source: ascendopt_device::DeviceError,
    },
    /// A case's inputs or golden could not be made for the breakdown.
    #[error(transparent)]
    Prepare(#[from] ascendopt_harness::eval::PrepareError),
    /// A case's launch did not finish for the breakdown.
    #[error("{op} case {case}: {summary}")]
    Run {
        /// The operator.
        op: String,
        /// The case.
        case: String,
        /// The device's summary of how the launch ended.
        summary: String,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path, source: std::io::Error) -> EvalsError {
    EvalsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What `bench-evals` measures.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalsConfig {
    /// Evaluations per operator.
    pub evals: u32,
    /// Evaluations of one operator run in parallel.
    pub jobs: usize,
    /// No measurement noise.
    pub deterministic: bool,
    /// Also time each case once (inputs + golden, and one launch).
    pub breakdown: bool,
}

impl EvalsConfig {
    /// The pipeline configuration the evaluations run with.
    pub fn pipeline(&self) -> PipelineConfig {
        let mut pipeline = PipelineConfig::from_compare(&CompareConfig::RECOMMENDED, 1);
        pipeline.deterministic = self.deterministic;
        pipeline
    }
}

/// Where one evaluation's correctness time goes: per case, input
/// generation + golden, and one launch (functional simulation in a worker).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseCost {
    /// The case.
    pub name: String,
    /// Its input elements.
    pub elements: usize,
    /// Input generation and golden, ms.
    pub prepare_ms: u64,
    /// One launch, ms.
    pub run_ms: u64,
    /// Whether it is the benchmark case (profiled from its run).
    pub bench: bool,
}

impl CaseCost {
    /// Launches of this case per evaluation: every case but the benchmark
    /// one runs twice (the run-twice check), the benchmark case once.
    pub fn launches(&self) -> u64 {
        if self.bench {
            1
        } else {
            2
        }
    }
}

/// One operator's measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct OpSpeed {
    /// The operator.
    pub op: String,
    /// Its level.
    pub level: u8,
    /// Wall time of its N evaluations, ms.
    pub wall_ms: u64,
    /// Per evaluation: compile + correctness + profile, ms.
    pub totals: Vec<u64>,
    /// Per evaluation: compile, ms.
    pub compile: Vec<u64>,
    /// Per evaluation: correctness, ms.
    pub correctness: Vec<u64>,
    /// Per evaluation: profile, ms.
    pub profile: Vec<u64>,
    /// Evaluations that were not correct.
    pub failed: usize,
    /// The verdict kind of the first evaluation that was not correct.
    pub first_failure: Option<String>,
    /// The per-case breakdown (empty unless asked for).
    pub cases: Vec<CaseCost>,
}

impl OpSpeed {
    /// Evaluations per minute of wall time.
    pub fn per_minute(&self) -> f64 {
        per_minute(self.totals.len(), self.wall_ms)
    }
}

/// One level's measurement, over its operators.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelSpeed {
    /// The level.
    pub level: u8,
    /// Operators measured.
    pub operators: usize,
    /// Per evaluation: total, compile, correctness, profile, ms.
    pub totals: Vec<u64>,
    /// Per evaluation: compile, ms.
    pub compile: Vec<u64>,
    /// Per evaluation: correctness, ms.
    pub correctness: Vec<u64>,
    /// Per evaluation: profile, ms.
    pub profile: Vec<u64>,
    /// Wall time, ms.
    pub wall_ms: u64,
    /// Evaluations that were not correct.
    pub failed: usize,
}

impl LevelSpeed {
    /// Evaluations per minute of wall time.
    pub fn per_minute(&self) -> f64 {
        per_minute(self.totals.len(), self.wall_ms)
    }
}

fn per_minute(n: usize, wall_ms: u64) -> f64 {
    if wall_ms > 0 {
        n as f64 * 60_000.0 / wall_ms as f64
    } else {
        0.0
    }
}

/// The median of `v` (0 when empty; the mean of the middle two when even).
pub fn median(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    match v.len() {
        0 => 0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

/// The operators' measurements by level, in level order.
pub fn by_level(ops: &[OpSpeed]) -> Vec<LevelSpeed> {
    let mut levels: BTreeMap<u8, LevelSpeed> = BTreeMap::new();
    for r in ops {
        let l = levels.entry(r.level).or_insert_with(|| LevelSpeed {
            level: r.level,
            operators: 0,
            totals: Vec::new(),
            compile: Vec::new(),
            correctness: Vec::new(),
            profile: Vec::new(),
            wall_ms: 0,
            failed: 0,
        });
        l.operators += 1;
        l.totals.extend(&r.totals);
        l.compile.extend(&r.compile);
        l.correctness.extend(&r.correctness);
        l.profile.extend(&r.profile);
        l.wall_ms += r.wall_ms;
        l.failed += r.failed;
    }
    levels.into_values().collect()
}

/// Evaluations per minute over every operator (None when nothing ran).
pub fn overall_per_minute(ops: &[OpSpeed]) -> Option<f64> {
    let n: usize = ops.iter().map(|r| r.totals.len()).sum();
    let wall: u64 = ops.iter().map(|r| r.wall_ms).sum();
    (wall > 0).then(|| per_minute(n, wall))
}

/// Measures every operator in `dirs` on `device`, calling `on_op` after
/// each one (in order), and returns every measurement. The run store and
/// the candidates live in a scratch folder removed at the end.
pub fn bench_evals(
    device: &dyn Device,
    dirs: &[PathBuf],
    cfg: &EvalsConfig,
    on_op: &mut dyn FnMut(&OpSpeed),
) -> Result<Vec<OpSpeed>, EvalsError> {
    if cfg.evals == 0 {
        return Err(EvalsError::NoEvaluations);
    }
    let scratch = tempfile::tempdir().map_err(|e| io(&std::env::temp_dir(), e))?;
    let store = RunStore::open(&scratch.path().join("runs.sqlite"))?;
    let pipeline = cfg.pipeline();
    let run = store.create_run(&serde_json::json!({ "command": "bench-evals", "n": cfg.evals }))?;
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut rows = Vec::new();
    for dir in dirs {
        let package = OpPackage::load(dir, &ascendopt_golden::BUILTINS).map_err(|source| {
            EvalsError::Load {
                dir: dir.to_path_buf(),
                source,
            }
        })?;
        let cands = variants(&package, cfg.evals, nonce, &scratch.path().join("cands"))?;
        let budgets = BudgetConfig {
            rewind: 0,
            online: cfg.evals,
        };
        let mut ledger = Ledger::open(
            &store,
            run,
            package.name(),
            &format!("L{}", package.spec.level),
            budgets,
        )?;
        let t = Instant::now();
        let evaluated = evaluate_batch(
            device,
            &store,
            &mut ledger,
            run,
            Stage::Online,
            &cands,
            &pipeline,
            cfg.jobs.max(1),
        )?;
        let wall_ms = t.elapsed().as_millis() as u64;
        let stored = store.evaluations(run, package.name())?;
        let mut row = OpSpeed {
            op: package.name().to_string(),
            level: package.spec.level,
            wall_ms,
            totals: Vec::new(),
            compile: Vec::new(),
            correctness: Vec::new(),
            profile: Vec::new(),
            failed: evaluated.iter().filter(|e| !e.verdict.is_success()).count(),
            first_failure: evaluated
                .iter()
                .find(|e| !e.verdict.is_success())
                .map(|e| e.verdict.kind().to_string()),
            cases: if cfg.breakdown {
                case_costs(device, &package)?
            } else {
                Vec::new()
            },
        };
        for e in &stored {
            let t = e.timings;
            row.totals
                .push(t.compile_ms + t.correctness_ms + t.profile_ms);
            row.compile.push(t.compile_ms);
            row.correctness.push(t.correctness_ms);
            row.profile.push(t.profile_ms);
        }
        on_op(&row);
        rows.push(row);
    }
    Ok(rows)
}

fn case_costs(device: &dyn Device, package: &OpPackage) -> Result<Vec<CaseCost>, EvalsError> {
    let artifact = device.build(package).map_err(|source| EvalsError::Build {
        op: package.name().to_string(),
        source,
    })?;
    let bench = bench_case(package).map(|c| c.name.clone());
    let mut out = Vec::new();
    for (i, case) in package.cases().iter().enumerate() {
        let t = Instant::now();
        let prepared = prepare_case(package, case, 11 + i as u64)?;
        let prepare_ms = t.elapsed().as_millis() as u64;
        let t = Instant::now();
        let outcome = device.run(&artifact, &prepared.request);
        let run_ms = t.elapsed().as_millis() as u64;
        if !matches!(outcome, RunOutcome::Finished(_)) {
            return Err(EvalsError::Run {
                op: package.name().to_string(),
                case: case.name.clone(),
                summary: outcome.summary(),
            });
        }
        out.push(CaseCost {
            name: case.name.clone(),
            elements: case.input_elements(),
            prepare_ms,
            run_ms,
            bench: Some(&case.name) == bench.as_ref(),
        });
    }
    Ok(out)
}

/// N variants of `package` that differ only by a comment in each kernel
/// source (so each one compiles cold).
fn variants(
    package: &OpPackage,
    n: u32,
    nonce: u128,
    root: &Path,
) -> Result<Vec<OpPackage>, EvalsError> {
    let mut out = Vec::new();
    for k in 0..n {
        let dir = root.join(format!("{}-{k}", package.name()));
        ascendopt_op::package::copy_tree(&package.dir, &dir, &["build", "target"])
            .map_err(|(p, e)| io(&p, e))?;
        for src in &package.kernel_sources {
            let rel = src.strip_prefix(&package.dir).unwrap_or(src);
            let path = dir.join(rel);
            let mut text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
            text.push_str(&format!("\n// bench-evals candidate {nonce:x}-{k}\n"));
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        }
        out.push(
            OpPackage::load(&dir, &ascendopt_golden::BUILTINS).map_err(|source| {
                EvalsError::Load {
                    dir: dir.clone(),
                    source,
                }
            })?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(level: u8, totals: &[u64], wall_ms: u64, failed: usize) -> OpSpeed {
        OpSpeed {
            op: format!("op{level}"),
            level,
            wall_ms,
            totals: totals.to_vec(),
            compile: totals.iter().map(|t| t / 2).collect(),
            correctness: totals.iter().map(|t| t / 4).collect(),
            profile: totals.iter().map(|t| t / 4).collect(),
            failed,
            first_failure: None,
            cases: Vec::new(),
        }
    }

    #[test]
    fn medians_of_odd_even_and_empty_lists() {
        assert_eq!(median(&[]), 0);
        assert_eq!(median(&[5, 1, 3]), 3);
        assert_eq!(median(&[4, 1, 3, 2]), 2);
    }

    #[test]
    fn levels_pool_their_operators_in_level_order() {
        let ops = [
            op(2, &[100, 300], 600, 0),
            op(1, &[10, 20], 60, 1),
            op(1, &[30], 60, 0),
        ];
        let levels = by_level(&ops);
        assert_eq!(levels.len(), 2);
        assert_eq!((levels[0].level, levels[0].operators), (1, 2));
        assert_eq!(levels[0].totals, vec![10, 20, 30]);
        assert_eq!(levels[0].failed, 1);
        assert_eq!(median(&levels[0].totals), 20);
        assert!((levels[0].per_minute() - 1500.0).abs() < 1e-9);
        assert_eq!(levels[1].wall_ms, 600);
        let all = overall_per_minute(&ops).unwrap();
        assert!((all - 5.0 * 60_000.0 / 720.0).abs() < 1e-9);
        assert_eq!(overall_per_minute(&[]), None);
    }
}
