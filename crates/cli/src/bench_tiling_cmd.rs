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

use crate::hiargs::{self, resolve_op};
use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_experiments::tiling::TilingComparison;
use ascendopt_experiments::tiling_bench::{bench_tiling, by_budget, TilingBenchConfig};
use ascendopt_op::package::{builtin_ops_dir, package_dirs};
use std::fmt::Write as _;
use std::path::PathBuf;

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

fn table(rows: &[TilingComparison], budget: u32) -> String {
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
    for sum in by_budget(rows, &[budget]) {
        if let (Some(mean), Some(geo)) = (sum.mean_ratio, sum.geometric_mean_ratio) {
            let _ = writeln!(
                s,
                "mean ratio random@{} / stage2@{budget}: {mean:.3} (geometric {geo:.3}) over {} operators ({} below 1); >= 1 means Stage II with half the evaluations is at least as fast",
                sum.random_budget,
                sum.operators,
                sum.below_one
            );
        }
    }
    s
}

/// Runs the command.
pub fn run(args: BenchTilingArgs) -> Result<Status> {
    let mut budgets = args.budget.clone();
    budgets.sort_unstable();
    budgets.dedup();
    let dirs = if args.ops.is_empty() {
        package_dirs(&builtin_ops_dir()).context("listing the built-in operators")?
    } else {
        args.ops
            .iter()
            .map(|a| resolve_op(a))
            .collect::<Result<Vec<_>>>()?
    };
    let packages = hiargs::load_packages(&dirs)?;
    let scratch;
    let root = match &args.workdir {
        Some(d) => d.clone(),
        None => {
            scratch = tempfile::tempdir().context("creating a temporary folder")?;
            scratch.path().to_path_buf()
        }
    };
    let device = hiargs::device(&args.device, Some(args.timeout), args.repeats.max(1))?;
    let cfg = TilingBenchConfig {
        budgets,
        seed: args.seed,
        noise: args.noise,
        repeats: args.repeats,
        max_elements: args.max_elements,
        jobs: args.jobs,
        root,
    };
    let rows = bench_tiling(
        &*device,
        packages,
        &cfg,
        &|note| eprintln!("{note}"),
        &|row| {
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
        },
    )?;
    let budgets = &cfg.budgets;
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
        doc.field(
            "summary",
            serde_json::json!({ "by_budget": by_budget(&rows, budgets) }),
        );
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
            let at: Vec<TilingComparison> =
                rows.iter().filter(|r| r.budget == b).cloned().collect();
            print!("{}", table(&at, b));
        }
    }
    Ok(if rows.iter().all(|r| r.ratio.is_some()) {
        Status::Ok
    } else {
        Status::Failed
    })
}
