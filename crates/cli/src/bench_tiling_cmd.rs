//! `ascendopt bench-tiling`: Stage II's evolutionary tiling search with N
//! evaluations against random search with 2N, per operator, from the
//! input kernel. Prints each operator's best latencies and the ratio
//! random / Stage II (≥ 1: Stage II with half the evaluations is at least
//! as fast), then the mean and geometric mean of the ratios.

use crate::eval_cmd::resolve_op;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_agent::session::RunContext;
use ascendopt_agent::tune::{compare_with_random, TilingComparison};
use ascendopt_device::{SimDevice, SimDeviceConfig};
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunStatus, RunStore};
use ascendopt_op::package::{builtin_ops_dir, package_dirs, OpPackage};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of `ascendopt bench-tiling`.
#[derive(Debug, clap::Args)]
pub struct BenchTilingArgs {
    /// Operator folders or built-in operator names; none = every built-in
    /// operator that has tiling knobs.
    #[arg(long, num_args = 1..)]
    ops: Vec<String>,
    /// Stage II's evaluations per operator (random search gets twice as
    /// many).
    #[arg(long, default_value_t = 20)]
    budget: u32,
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
    let ratios: Vec<f64> = rows.iter().filter_map(|r| r.ratio).collect();
    if !ratios.is_empty() {
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        let _ = writeln!(
            s,
            "mean ratio random@{} / stage2@{budget}: {mean:.3} (geometric {geo:.3}) over {} operators; >= 1 means Stage II with half the evaluations is at least as fast",
            budget * 2,
            ratios.len()
        );
    }
    s
}

/// Runs the command.
pub fn run(args: BenchTilingArgs) -> Result<Status> {
    if args.budget < 2 {
        anyhow::bail!("--budget must be at least 2");
    }
    let dirs = if args.ops.is_empty() {
        package_dirs(&builtin_ops_dir()).context("listing the built-in operators")?
    } else {
        args.ops
            .iter()
            .map(|a| resolve_op(a))
            .collect::<Result<Vec<_>>>()?
    };
    let mut packages = Vec::new();
    for d in &dirs {
        let pkg = OpPackage::load(d).with_context(|| format!("loading {}", d.display()))?;
        if pkg.tiling.knobs().next().is_none() {
            eprintln!("{}: no tiling knobs, skipped", pkg.name());
            continue;
        }
        packages.push(pkg);
    }
    let scratch;
    let root = match &args.workdir {
        Some(d) => d.clone(),
        None => {
            scratch = tempfile::tempdir().context("creating a temporary folder")?;
            scratch.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let store = RunStore::open(&root.join("runs.sqlite"))?;
    let mut device_cfg = SimDeviceConfig::standard()?;
    device_cfg.limits.wall_ms = args.timeout.saturating_mul(1000);
    let device = SimDevice::new(device_cfg);
    let pipeline = PipelineConfig {
        repeats: args.repeats.max(1),
        deterministic: !args.noise,
        seed: args.seed,
    };
    let make = |kind: &str| -> Result<RunContext<'_>> {
        let run = store.create_run(&serde_json::json!({
            "command": "bench-tiling", "search": kind, "budget": args.budget, "seed": args.seed,
        }))?;
        Ok(RunContext {
            device: &device,
            store: &store,
            run,
            pipeline: pipeline.clone(),
            compare: CompareConfig::RECOMMENDED,
            workdir: root.join("work").join(kind),
        })
    };
    let tune_ctx = make("stage2")?;
    let random_ctx = make("random")?;
    let mut rows = Vec::new();
    for pkg in &packages {
        let row = compare_with_random(&tune_ctx, &random_ctx, pkg, args.budget, args.seed)
            .with_context(|| format!("benchmarking {}", pkg.name()))?;
        eprintln!(
            "[{}] stage2 {:?} us ({} evals), random {:?} us ({} evals), ratio {:?}",
            row.op, row.tune_us, row.tune_spent, row.random_us, row.random_spent, row.ratio
        );
        rows.push(row);
    }
    for ctx in [&tune_ctx, &random_ctx] {
        store.set_run_status(ctx.run, RunStatus::Finished)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", table(&rows, args.budget));
    }
    Ok(if rows.iter().all(|r| r.ratio.is_some()) {
        Status::Ok
    } else {
        Status::Failed
    })
}
