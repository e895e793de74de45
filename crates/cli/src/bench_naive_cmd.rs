//! `ascendopt bench-naive`: the full method on correct but naive operators
//! (first attempts, no knob markers; `benches/naive/` by default) at one or
//! more budgets, against the strong built-in operators of the same
//! computation: GM speedup, share of the naive-to-strong gap closed,
//! evaluations spent, and why each stage stopped. Resumable like `bench`.

use crate::bench_cmd::Progress;
use crate::hiargs::resolve_op;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_agent::factory::BuiltinAgents;
use ascendopt_experiments::bench_naive::{run_naive_bench, NaiveBenchConfig};
use ascendopt_op::package::{builtin_ops_dir, package_dirs, OpPackage};
use std::path::PathBuf;

/// Arguments of `ascendopt bench-naive`.
#[derive(Debug, clap::Args)]
pub struct BenchNaiveArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Folder of naive operator packages (each named after the built-in
    /// operator it computes).
    #[arg(long, default_value = "benches/naive")]
    dir: PathBuf,
    /// Only these operators (names in --dir, or folders), comma-separated.
    #[arg(long, value_delimiter = ',')]
    ops: Vec<String>,
    /// Evaluations per operator, the input's own included; several budgets
    /// separated by commas, each an independent run.
    #[arg(long, value_delimiter = ',', default_values_t = [60, 230])]
    budget: Vec<u32>,
    /// Operators run in parallel.
    #[arg(short = 'j', long = "jobs", default_value_t = 1)]
    jobs: usize,
    /// Output folder (resumed when it exists).
    #[arg(long, default_value = "ascendopt-bench-naive")]
    out: PathBuf,
    /// Seed of inputs, measurement noise and proposers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs the command.
pub fn run(args: BenchNaiveArgs) -> Result<Status> {
    if !args.dir.is_dir() {
        anyhow::bail!(
            "{}: no such folder of naive operators (pass --dir)",
            args.dir.display()
        );
    }
    let dirs: Vec<PathBuf> = if args.ops.is_empty() {
        package_dirs(&args.dir).with_context(|| format!("listing {}", args.dir.display()))?
    } else {
        args.ops
            .iter()
            .map(|o| {
                let inside = args.dir.join(o);
                if inside.join("op.toml").is_file() {
                    Ok(inside)
                } else {
                    resolve_op(o)
                }
            })
            .collect::<Result<Vec<_>>>()?
    };
    let ops = dirs
        .iter()
        .map(|d| {
            OpPackage::load(d, &ascendopt_golden::BUILTINS)
                .with_context(|| format!("loading {}", d.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let cfg = NaiveBenchConfig {
        ops,
        strong_dir: builtin_ops_dir(),
        budgets: args.budget.clone(),
        out: args.out.clone(),
        jobs: args.jobs,
        seed: args.seed,
        device: args.device.choice()?,
    };
    let device = crate::hiargs::device_of(
        cfg.device,
        None,
        ascendopt_harness::compare::CompareConfig::RECOMMENDED.repeats,
    )?;
    let progress = Progress::new();
    let report = run_naive_bench(&cfg, &*device, &BuiltinAgents, &|e| progress.handle(e));
    progress.finish();
    let report = report?;
    println!();
    print!("{}", report.render());
    println!("\nresults: {}", args.out.join("naive.json").display());
    Ok(Status::Ok)
}
