//! `ascendopt run`: the whole system on a fresh machine, no network:
//! Rewind over built-in operators into a bank, then Stage I and Stage II
//! (the `full` method) on a representative subset spanning the levels, on
//! the built-in simulator with the built-in proposer. Ends with a summary
//! table and the path of the report.

use crate::bench_cmd::{execute, load_ops, parse_methods, print_summary};
use crate::llm_args::LlmArgs;
use crate::Status;
use anyhow::Result;
use ascendopt_agent::bench::BenchConfig;
use ascendopt_harness::compare::CompareConfig;
use std::path::PathBuf;

/// The default subset: Level-1 and Level-2 operators of different kinds
/// (elementwise math, comparison, fused activation, normalisation-style
/// reduction). The built-in suite has no Level-3 operator yet.
pub const DEFAULT_OPS: [&str; 4] = ["add_custom", "cos", "gelu", "swi_glu"];

/// Operators Rewind learns from by default (the subset itself: the
/// transductive setting; use `ascendopt bench --bank-ops/--eval-ops` for
/// held-out transfer).
pub const DEFAULT_BANK_OPS: [&str; 4] = DEFAULT_OPS;

/// Arguments of `ascendopt run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Output folder (resumed when it exists).
    #[arg(long, default_value = "ascendopt-run")]
    out: PathBuf,
    /// Every built-in operator instead of the representative subset (hours,
    /// not minutes).
    #[arg(long)]
    all: bool,
    /// Evaluations per operator, Rewind's included.
    #[arg(long, default_value_t = 18)]
    budget: u32,
    /// Rewind evaluations per operator (a kept removal costs about three:
    /// the removal, its confirmation and a re-measurement of the faster
    /// kernel).
    #[arg(long, default_value_t = 6)]
    rewind_budget: u32,
    /// Operators run in parallel.
    #[arg(short = 'j', long = "jobs", default_value_t = 2)]
    jobs: usize,
    /// Operators (names or folders), comma-separated, instead of the
    /// default subset.
    #[arg(long, value_delimiter = ',', hide = true)]
    ops: Vec<String>,
    /// Methods (default: full).
    #[arg(long, value_delimiter = ',', default_value = "full", hide = true)]
    methods: Vec<String>,
    /// No measurement noise (tests).
    #[arg(long, hide = true)]
    deterministic: bool,
    /// Latency samples per evaluation (default: the acceptance rule's 30).
    #[arg(long, hide = true)]
    repeats: Option<usize>,
    /// Seed of inputs, measurement noise and proposers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    llm: LlmArgs,
}

/// Runs the command.
pub fn run(args: RunArgs) -> Result<Status> {
    let ops = if args.all {
        load_ops(&[])?
    } else if !args.ops.is_empty() {
        load_ops(&args.ops)?
    } else {
        load_ops(&DEFAULT_OPS.map(String::from))?
    };
    let bank_ops = if args.all || !args.ops.is_empty() {
        ops.clone()
    } else {
        load_ops(&DEFAULT_BANK_OPS.map(String::from))?
    };
    // One process per output folder (held until this command returns).
    let _lock = ascendopt_harness::out_lock::lock(&args.out)?;
    let mut cfg = BenchConfig::new(parse_methods(&args.methods)?, ops, args.out.clone());
    cfg.bank_ops = bank_ops;
    cfg.budget = args.budget;
    cfg.rewind_budget = args.rewind_budget;
    cfg.jobs = args.jobs.max(1);
    cfg.seed = args.seed;
    cfg.deterministic = args.deterministic;
    cfg.repeats = args
        .repeats
        .unwrap_or(CompareConfig::RECOMMENDED.repeats)
        .max(1);
    if !cfg.eval_ops.iter().any(|p| p.spec.level == 3) {
        cfg.notes
            .push("no Level-3 operator is evaluated: the built-in suite has none yet".into());
    }
    if !args.all && args.ops.is_empty() {
        cfg.notes.push(format!(
            "representative subset ({}); `ascendopt run --all` runs every built-in operator",
            cfg.eval_ops
                .iter()
                .map(|p| format!("{} L{}", p.name(), p.spec.level))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    eprintln!(
        "run: Rewind on {} operator(s) ({} evaluations each), then Stage I + II on {} operator(s) \
         ({} evaluations each, Rewind's included), -j {}, out {}",
        cfg.bank_ops.len(),
        cfg.rewind_budget,
        cfg.eval_ops.len(),
        cfg.budget,
        cfg.jobs,
        cfg.out.display()
    );
    let report = execute(&cfg, &args.llm)?;
    print_summary(&report);
    Ok(Status::Ok)
}
