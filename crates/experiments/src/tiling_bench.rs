//! `ascendopt bench-tiling` as one call: [`bench_tiling`] benchmarks
//! Stage II against random search ([`crate::tiling::compare_with_random_at`])
//! on a list of operators, `jobs` at a time, each worker with its own run
//! store and runs; [`shrink`] makes the small-shape copies of
//! `--max-elements`; [`by_budget`] sums the ratios up per budget.

use crate::bench::BenchError;
use crate::tiling::{compare_with_random_at, TilingComparison};
use ascendopt_agent::session::RunContext;
use ascendopt_device::Device;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunStatus, RunStore};
use ascendopt_op::package::OpPackage;
use ascendopt_op::spec::edit::SpecEdit;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How the benchmark runs.
#[derive(Debug, Clone, PartialEq)]
pub struct TilingBenchConfig {
    /// Stage II's budgets, ascending, without repeats (random search gets
    /// twice each).
    pub budgets: Vec<u32>,
    /// Seed of the inputs and of both searches.
    pub seed: u64,
    /// Measure with noise.
    pub noise: bool,
    /// Latency samples per evaluation.
    pub repeats: usize,
    /// `--max-elements`: benchmark copies without the larger cases.
    pub max_elements: Option<usize>,
    /// Operators benchmarked at the same time.
    pub jobs: usize,
    /// Folder for the run stores, candidates and shrunk copies.
    pub root: PathBuf,
}

/// Benchmarks every package of `pkgs` that has tiling knobs (shrunk to
/// `cfg.max_elements` first when set), telling `note` which are skipped
/// or shrunk and `on_row` each comparison as it is made. Rows come back
/// in the packages' order, whatever `cfg.jobs`.
pub fn bench_tiling(
    device: &dyn Device,
    pkgs: Vec<OpPackage>,
    cfg: &TilingBenchConfig,
    note: &(dyn Fn(&str) + Sync),
    on_row: &(dyn Fn(&TilingComparison) + Sync),
) -> Result<Vec<TilingComparison>, BenchError> {
    if cfg.budgets.is_empty() || cfg.budgets[0] < 2 {
        return Err(BenchError::Config("--budget must be at least 2".into()));
    }
    if cfg.max_elements == Some(0) {
        return Err(BenchError::Config("--max-elements must be positive".into()));
    }
    let root = &cfg.root;
    std::fs::create_dir_all(root).map_err(|e| crate::bench::io(root, e))?;
    let mut packages = Vec::new();
    for pkg in pkgs {
        if pkg.tiling.knobs().next().is_none() {
            note(&format!("{}: no tiling knobs, skipped", pkg.name()));
            continue;
        }
        let dir = pkg.dir.clone();
        let pkg = match cfg.max_elements {
            None => pkg,
            Some(max) => match shrink(pkg, max, &root.join("ops"))? {
                Shrunk::Unchanged(p) => p,
                Shrunk::Copy(p) => {
                    note(&format!(
                        "{}: cases above {max} elements dropped ({} left)",
                        p.name(),
                        p.cases().len()
                    ));
                    p
                }
                Shrunk::LeftOut(why) => {
                    note(&format!("{}: left out: {why}", dir.display()));
                    continue;
                }
            },
        };
        packages.push(pkg);
    }
    let pipeline = PipelineConfig {
        repeats: cfg.repeats.max(1),
        deterministic: !cfg.noise,
        seed: cfg.seed,
    };
    let budgets = &cfg.budgets;
    let jobs = cfg.jobs.clamp(1, packages.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Vec<TilingComparison>)>> = Mutex::new(Vec::new());
    // One worker: its own run store (SQLite connections are not shared
    // between threads) and its own pair of runs.
    let worker = |w: usize| -> Result<(), BenchError> {
        let store = RunStore::open(&root.join(if jobs == 1 {
            "runs.sqlite".to_string()
        } else {
            format!("runs-{w}.sqlite")
        }))?;
        let make = |kind: &str| -> Result<RunContext<'_>, BenchError> {
            let run = store.create_run(&serde_json::json!({
                "command": "bench-tiling", "search": kind, "budget": budgets,
                "seed": cfg.seed, "max_elements": cfg.max_elements,
            }))?;
            Ok(RunContext {
                device,
                store: &store,
                run,
                pipeline: pipeline.clone(),
                compare: CompareConfig::RECOMMENDED,
                workdir: root.join("work").join(format!("{w}")).join(kind),
            })
        };
        // One Stage II run per budget (a run answers identical candidates
        // from its store, so budgets must not share one).
        let tune_ctxs = budgets
            .iter()
            .map(|b| make(&format!("stage2@{b}")))
            .collect::<Result<Vec<_>, _>>()?;
        let tune_refs: Vec<&RunContext<'_>> = tune_ctxs.iter().collect();
        let random_ctx = make("random")?;
        loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(pkg) = packages.get(i) else {
                break;
            };
            let rows = compare_with_random_at(&tune_refs, &random_ctx, pkg, budgets, cfg.seed)
                .map_err(|e| {
                    BenchError::Agent(ascendopt_agent::AgentError::Operator {
                        doing: "benchmarking",
                        op: pkg.name().to_string(),
                        source: Box::new(e),
                    })
                })?;
            for row in &rows {
                on_row(row);
            }
            results
                .lock()
                .map_err(|_| BenchError::Panicked)?
                .push((i, rows));
        }
        for ctx in tune_refs.iter().copied().chain([&random_ctx]) {
            store.set_run_status(ctx.run, RunStatus::Finished)?;
        }
        Ok(())
    };
    std::thread::scope(|s| -> Result<(), BenchError> {
        let handles: Vec<_> = (0..jobs).map(|w| s.spawn(move || worker(w))).collect();
        for h in handles {
            h.join().map_err(|_| BenchError::Panicked)??;
        }
        Ok(())
    })?;
    let mut results = results.into_inner().map_err(|_| BenchError::Panicked)?;
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().flat_map(|(_, r)| r).collect())
}

/// The ratios random / Stage II at one budget, summed up.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BudgetSummary {
    /// Stage II's budget.
    pub budget: u32,
    /// Random search's (twice as many).
    pub random_budget: u32,
    /// Operators with a ratio.
    pub operators: usize,
    /// Their mean ratio.
    pub mean_ratio: Option<f64>,
    /// Their geometric mean ratio.
    pub geometric_mean_ratio: Option<f64>,
    /// Operators where random search did better (ratio below 1).
    pub below_one: usize,
}

/// One [`BudgetSummary`] per budget of `budgets`, over `rows`.
pub fn by_budget(rows: &[TilingComparison], budgets: &[u32]) -> Vec<BudgetSummary> {
    budgets
        .iter()
        .map(|&b| {
            let ratios: Vec<f64> = rows
                .iter()
                .filter(|r| r.budget == b)
                .filter_map(|r| r.ratio)
                .collect();
            let n = ratios.len();
            BudgetSummary {
                budget: b,
                random_budget: b * 2,
                operators: n,
                mean_ratio: (n > 0).then(|| ratios.iter().sum::<f64>() / n as f64),
                geometric_mean_ratio: (n > 0)
                    .then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / n as f64).exp()),
                below_one: ratios.iter().filter(|r| **r < 1.0).count(),
            }
        })
        .collect()
}

/// What `--max-elements` makes of one operator.
#[derive(Debug)]
pub enum Shrunk {
    /// Nothing to drop: the operator as it is.
    Unchanged(OpPackage),
    /// A copy without the large cases.
    Copy(OpPackage),
    /// Left out, with the reason.
    LeftOut(String),
}

/// The size of a case: its input elements, or its output elements when
/// the golden can tell them and they are more (operators that generate
/// their output from a few scalars: arange, eye, fill).
pub fn case_size(pkg: &OpPackage, case: &ascendopt_op::spec::Case) -> usize {
    let outputs = match ascendopt_op::golden::output_shapes(&pkg.spec, case) {
        Ok(Some(shapes)) => shapes.iter().map(|s| ascendopt_op::tensor::numel(s)).sum(),
        _ => 0,
    };
    case.input_elements().max(outputs)
}

/// A copy of `pkg` under `dst` whose op.toml keeps only the cases of at
/// most `max` elements ([`case_size`]); the operator itself when none is
/// larger; left out when the largest case kept has fewer than `max / 16`
/// elements (its tiling would hardly matter).
pub fn shrink(pkg: OpPackage, max: usize, dst: &Path) -> Result<Shrunk, BenchError> {
    let keep: Vec<&str> = pkg
        .cases()
        .iter()
        .filter(|c| case_size(&pkg, c) <= max)
        .map(|c| c.name.as_str())
        .collect();
    if keep.len() == pkg.cases().len() {
        return Ok(Shrunk::Unchanged(pkg));
    }
    let largest = pkg
        .cases()
        .iter()
        .map(|c| case_size(&pkg, c))
        .filter(|n| *n <= max)
        .max()
        .unwrap_or(0);
    if largest < max / 16 {
        return Ok(Shrunk::LeftOut(format!(
            "its largest case of at most {max} elements has {largest} \
             (< {}): too small for the tiling to matter",
            max / 16
        )));
    }
    let out = dst.join(pkg.name());
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|source| BenchError::Prepare {
            path: out.clone(),
            doing: "removing",
            source,
        })?;
    }
    // The operator's folder without build products.
    ascendopt_op::package::copy_tree(&pkg.dir, &out, &["build"]).map_err(|(path, source)| {
        BenchError::Prepare {
            path,
            doing: "copying",
            source,
        }
    })?;
    let spec = out.join("op.toml");
    let operator = |source| BenchError::Operator {
        path: spec.clone(),
        source,
    };
    let mut edit = SpecEdit::read(&spec).map_err(operator)?;
    edit.retain_cases(|n| keep.contains(&n))
        .map_err(|source| BenchError::Shrink {
            path: spec.clone(),
            source,
        })?;
    edit.write().map_err(operator)?;
    let small = OpPackage::load(&out, &ascendopt_golden::BUILTINS).map_err(|source| {
        BenchError::Operator {
            path: out.clone(),
            source,
        }
    })?;
    if small.cases().len() != keep.len() {
        return Err(BenchError::ShrinkCount {
            path: spec,
            kept: small.cases().len(),
            asked: keep.len(),
        });
    }
    Ok(Shrunk::Copy(small))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_op::package::builtin_ops_dir;

    #[test]
    fn max_elements_drops_the_large_cases_of_a_copy_and_keeps_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let pkg =
            OpPackage::load(&builtin_ops_dir().join("gelu"), &ascendopt_golden::BUILTINS).unwrap();
        let all = pkg.cases().len();
        let small = match shrink(pkg, 400_000, tmp.path()).unwrap() {
            // gelu's 33.6 M-element case goes.
            Shrunk::Copy(p) => p,
            other => panic!("{other:?}"),
        };
        assert!(small.dir.starts_with(tmp.path()));
        assert!(small.cases().len() < all);
        assert!(small
            .cases()
            .iter()
            .all(|c| case_size(&small, c) <= 400_000));
        let bench = ascendopt_harness::pipeline::bench_case(&small).unwrap();
        assert!(bench.input_elements() >= 400_000 / 16);
        // The sources are the operator's.
        assert!(small.dir.join("op_host").is_dir());
        assert!(small.dir.join("op_kernel").is_dir());
        // Nothing to drop: the operator itself.
        let pkg =
            OpPackage::load(&builtin_ops_dir().join("gelu"), &ascendopt_golden::BUILTINS).unwrap();
        assert!(matches!(
            shrink(pkg, usize::MAX, tmp.path()).unwrap(),
            Shrunk::Unchanged(_)
        ));
        // Too small a bound: left out rather than benchmarked on a case
        // where the tiling hardly matters (gelu's cases of at most 3000
        // elements: 100).
        let pkg =
            OpPackage::load(&builtin_ops_dir().join("gelu"), &ascendopt_golden::BUILTINS).unwrap();
        assert!(matches!(
            shrink(pkg, 3000, tmp.path()).unwrap(),
            Shrunk::LeftOut(_)
        ));
    }

    #[test]
    fn ratios_are_summed_up_per_budget() {
        let row = |budget, ratio| TilingComparison {
            op: "x".into(),
            budget,
            baseline_us: Some(2.0),
            tune_us: Some(1.0),
            tune_spent: budget,
            random_us: Some(1.0),
            random_spent: budget * 2,
            ratio,
        };
        let rows = [row(10, Some(2.0)), row(10, Some(0.5)), row(20, None)];
        let s = by_budget(&rows, &[10, 20]);
        assert_eq!(
            (s[0].operators, s[0].below_one, s[0].random_budget),
            (2, 1, 20)
        );
        assert_eq!(s[0].mean_ratio, Some(1.25));
        assert!((s[0].geometric_mean_ratio.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!((s[1].operators, s[1].mean_ratio), (0, None));
    }
}
