//! `ascendopt bench-tiling`: Stage II's evolutionary tiling search with N
//! evaluations against random search with 2N, per operator, from the
//! input kernel. Prints each operator's best latencies and the ratio
//! random / Stage II (≥ 1: Stage II with half the evaluations is at least
//! as fast), then the mean and geometric mean of the ratios.
//!
//! Several budgets can be measured in one go (`--budget 10,20`): Stage II
//! runs once per budget, random search once with twice the largest budget
//! (its result at 2N is its best after its first 2N evaluations, which is
//! what a run with 2N evaluations finds, since its choices do not depend on
//! its measurements).
//!
//! `--max-elements N` benchmarks temporary copies of the operators without
//! their cases of more than N elements (input elements, or output elements
//! when there are more: operators that generate their output from a few
//! scalars). The benchmark compares tilings, not kernels, so small shapes
//! are a fair and fast test bed; but the benchmark case (the largest case
//! left) must still be one where the tiling matters: an operator whose
//! largest remaining case has fewer than N / 16 elements is left out with
//! a note (raise N to include it).

use crate::hiargs::resolve_op;
use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_agent::session::RunContext;
use ascendopt_experiments::tiling::{compare_with_random_at, TilingComparison};
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunStatus, RunStore};
use ascendopt_op::package::{builtin_ops_dir, package_dirs, OpPackage};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Arguments of `ascendopt bench-tiling`.
#[derive(Debug, clap::Args)]
pub struct BenchTilingArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Operator folders or built-in operator names; none = every built-in
    /// operator that has tiling knobs.
    #[arg(long, num_args = 1..)]
    ops: Vec<String>,
    /// Stage II's evaluations per operator (random search gets twice as
    /// many); several budgets separated by commas (`10,20`) are measured
    /// in one go, one table each.
    #[arg(long, default_values_t = [20], value_delimiter = ',')]
    budget: Vec<u32>,
    /// Seed of the inputs and of both searches.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Measure with noise (default: noise-free, so the comparison is
    /// about the search, not the measurement).
    #[arg(long)]
    noise: bool,
    /// Latency samples per evaluation.
    #[arg(long, default_value_t = 10)]
    repeats: usize,
    /// Benchmark copies of the operators without their cases of more than
    /// N elements, input or output (faster; the largest case left is the benchmark
    /// case, and an operator whose largest case left has fewer than N/16
    /// elements is left out, since its tiling would hardly matter).
    #[arg(long, value_name = "N")]
    max_elements: Option<usize>,
    /// Operators benchmarked at the same time.
    #[arg(short = 'j', long, default_value_t = 1)]
    jobs: usize,
    /// Folder for the run store and candidate packages (default: a
    /// temporary folder, removed at the end).
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Wall-clock limit of one launch, in seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
}

fn table(rows: &[&TilingComparison], budget: u32) -> String {
    let mut s = String::new();
    let us = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.3}"));
    let _ = writeln!(
        s,
        "{:<28} {:>10} {:>14} {:>16} {:>8}",
        "operator",
        "input us",
        format!("stage2@{budget}"),
        format!("random@{}", budget * 2),
        "ratio"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<28} {:>10} {:>14} {:>16} {:>8}",
            r.op,
            us(r.baseline_us),
            us(r.tune_us),
            us(r.random_us),
            r.ratio
                .map_or_else(|| "-".to_string(), |x| format!("{x:.3}"))
        );
    }
    let ratios: Vec<f64> = rows.iter().filter_map(|r| r.ratio).collect();
    if !ratios.is_empty() {
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        let below = ratios.iter().filter(|r| **r < 1.0).count();
        let _ = writeln!(
            s,
            "mean ratio random@{} / stage2@{budget}: {mean:.3} (geometric {geo:.3}) over {} operators ({below} below 1); >= 1 means Stage II with half the evaluations is at least as fast",
            budget * 2,
            ratios.len()
        );
    }
    s
}

/// Copies an operator folder (without build products).
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    ascendopt_op::package::copy_tree(from, to, &["build"])
        .map_err(|(p, e)| anyhow::anyhow!("copying {}: {e}", p.display()))
}

/// What `--max-elements` makes of one operator.
#[derive(Debug)]
enum Shrunk {
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
fn case_size(pkg: &OpPackage, case: &ascendopt_op::spec::Case) -> usize {
    let outputs = match ascendopt_op::golden::output_shapes(&pkg.spec, case) {
        Ok(Some(shapes)) => shapes.iter().map(|s| ascendopt_op::tensor::numel(s)).sum(),
        _ => 0,
    };
    case.input_elements().max(outputs)
}

/// A copy of `pkg` under `dst` whose op.toml keeps only the cases of at
/// most `max` elements ([`case_size`]).
fn shrink(pkg: OpPackage, max: usize, dst: &Path) -> Result<Shrunk> {
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
        std::fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
    copy_dir(&pkg.dir, &out)?;
    let spec = out.join("op.toml");
    let text =
        std::fs::read_to_string(&spec).with_context(|| format!("reading {}", spec.display()))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("parsing {}", spec.display()))?;
    let Some(cases) = doc
        .get_mut("cases")
        .and_then(toml_edit::Item::as_array_of_tables_mut)
    else {
        anyhow::bail!(
            "{}: cases are not written as [[cases]] tables; cannot drop the large ones",
            spec.display()
        );
    };
    cases.retain(|t| {
        t.get("name")
            .and_then(toml_edit::Item::as_str)
            .is_some_and(|n| keep.contains(&n))
    });
    std::fs::write(&spec, doc.to_string())
        .with_context(|| format!("writing {}", spec.display()))?;
    let small = OpPackage::load(&out, &ascendopt_golden::BUILTINS)
        .with_context(|| format!("loading {}", out.display()))?;
    if small.cases().len() != keep.len() {
        anyhow::bail!(
            "{}: {} cases kept instead of {}",
            spec.display(),
            small.cases().len(),
            keep.len()
        );
    }
    Ok(Shrunk::Copy(small))
}

/// Runs the command.
pub fn run(args: BenchTilingArgs) -> Result<Status> {
    let mut budgets = args.budget.clone();
    budgets.sort_unstable();
    budgets.dedup();
    if budgets.is_empty() || budgets[0] < 2 {
        anyhow::bail!("--budget must be at least 2");
    }
    if args.max_elements == Some(0) {
        anyhow::bail!("--max-elements must be positive");
    }
    let dirs = if args.ops.is_empty() {
        package_dirs(&builtin_ops_dir()).context("listing the built-in operators")?
    } else {
        args.ops
            .iter()
            .map(|a| resolve_op(a))
            .collect::<Result<Vec<_>>>()?
    };
    let scratch;
    let root = match &args.workdir {
        Some(d) => d.clone(),
        None => {
            scratch = tempfile::tempdir().context("creating a temporary folder")?;
            scratch.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let mut packages = Vec::new();
    for d in &dirs {
        let pkg = OpPackage::load(d, &ascendopt_golden::BUILTINS)
            .with_context(|| format!("loading {}", d.display()))?;
        if pkg.tiling.knobs().next().is_none() {
            eprintln!("{}: no tiling knobs, skipped", pkg.name());
            continue;
        }
        let pkg = match args.max_elements {
            None => pkg,
            Some(max) => match shrink(pkg, max, &root.join("ops"))? {
                Shrunk::Unchanged(p) => p,
                Shrunk::Copy(p) => {
                    eprintln!(
                        "{}: cases above {max} elements dropped ({} left)",
                        p.name(),
                        p.cases().len()
                    );
                    p
                }
                Shrunk::LeftOut(why) => {
                    eprintln!("{}: left out: {why}", d.display());
                    continue;
                }
            },
        };
        packages.push(pkg);
    }
    let device = crate::hiargs::device(&args.device, Some(args.timeout), args.repeats.max(1))?;
    let pipeline = PipelineConfig {
        repeats: args.repeats.max(1),
        deterministic: !args.noise,
        seed: args.seed,
    };
    let jobs = args.jobs.clamp(1, packages.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Vec<TilingComparison>)>> = Mutex::new(Vec::new());
    // One worker: its own run store (SQLite connections are not shared
    // between threads) and its own pair of runs.
    let worker = |w: usize| -> Result<()> {
        let store = RunStore::open(&root.join(if jobs == 1 {
            "runs.sqlite".to_string()
        } else {
            format!("runs-{w}.sqlite")
        }))?;
        let make = |kind: &str| -> Result<RunContext<'_>> {
            let run = store.create_run(&serde_json::json!({
                "command": "bench-tiling", "search": kind, "budget": budgets,
                "seed": args.seed, "max_elements": args.max_elements,
            }))?;
            Ok(RunContext {
                device: &*device,
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
            .collect::<Result<Vec<_>>>()?;
        let tune_refs: Vec<&RunContext<'_>> = tune_ctxs.iter().collect();
        let random_ctx = make("random")?;
        loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(pkg) = packages.get(i) else {
                break;
            };
            let rows = compare_with_random_at(&tune_refs, &random_ctx, pkg, &budgets, args.seed)
                .with_context(|| format!("benchmarking {}", pkg.name()))?;
            for row in &rows {
                eprintln!(
                    "[{}] budget {}: stage2 {:?} us ({} evals), random {:?} us ({} evals), ratio {:?}",
                    row.op,
                    row.budget,
                    row.tune_us,
                    row.tune_spent,
                    row.random_us,
                    row.random_spent,
                    row.ratio
                );
            }
            results
                .lock()
                .map_err(|_| anyhow::anyhow!("a benchmark thread panicked"))?
                .push((i, rows));
        }
        for ctx in tune_refs.iter().copied().chain([&random_ctx]) {
            store.set_run_status(ctx.run, RunStatus::Finished)?;
        }
        Ok(())
    };
    std::thread::scope(|s| -> Result<()> {
        let handles: Vec<_> = (0..jobs).map(|w| s.spawn(move || worker(w))).collect();
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("a benchmark thread panicked"))??;
        }
        Ok(())
    })?;
    let mut results = results
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a benchmark thread panicked"))?;
    results.sort_by_key(|(i, _)| *i);
    let rows: Vec<TilingComparison> = results.into_iter().flat_map(|(_, r)| r).collect();
    if args.json {
        let mut doc = JsonDoc::new("bench-tiling");
        let mut ops: Vec<&str> = Vec::new();
        for r in &rows {
            if !ops.contains(&r.op.as_str()) {
                ops.push(&r.op);
            }
        }
        for op in ops {
            let comparisons: Vec<&TilingComparison> = rows.iter().filter(|r| r.op == op).collect();
            doc.operator(serde_json::json!({ "op": op, "comparisons": comparisons }));
        }
        let summary: Vec<serde_json::Value> = budgets
            .iter()
            .map(|&b| {
                let ratios: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.budget == b)
                    .filter_map(|r| r.ratio)
                    .collect();
                let n = ratios.len();
                let mean = (n > 0).then(|| ratios.iter().sum::<f64>() / n as f64);
                let geo =
                    (n > 0).then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / n as f64).exp());
                serde_json::json!({
                    "budget": b,
                    "random_budget": b * 2,
                    "operators": n,
                    "mean_ratio": mean,
                    "geometric_mean_ratio": geo,
                    "below_one": ratios.iter().filter(|r| **r < 1.0).count(),
                })
            })
            .collect();
        doc.field("summary", serde_json::json!({ "by_budget": summary }));
        doc.field(
            "config",
            serde_json::json!({
                "budgets": budgets,
                "seed": args.seed,
                "noise": args.noise,
                "repeats": args.repeats,
                "max_elements": args.max_elements,
            }),
        );
        doc.print()?;
    } else {
        for (n, &b) in budgets.iter().enumerate() {
            if n > 0 {
                println!();
            }
            let at: Vec<&TilingComparison> = rows.iter().filter(|r| r.budget == b).collect();
            print!("{}", table(&at, b));
        }
    }
    Ok(if rows.iter().all(|r| r.ratio.is_some()) {
        Status::Ok
    } else {
        Status::Failed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
