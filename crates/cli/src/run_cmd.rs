//! `ascendopt run`: the whole system on a fresh machine, no network:
//! Rewind over built-in operators into a bank, then Stage I and Stage II
//! (the `full` method) on a representative subset spanning the levels, on
//! the built-in simulator with the built-in proposer. Ends with a summary
//! table and the path of the report.

use crate::bench_cmd::{execute, json_report, load_ops, parse_methods, render_summary};
use crate::llm_args::LlmArgs;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_experiments::bench::BenchConfig;
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
    /// Output folder (resumed when it exists); default: `run/` in the
    /// per-user data folder ($ASCENDOPT_DATA_DIR, else
    /// $XDG_DATA_HOME/ascendopt, else ~/.local/share/ascendopt), so the
    /// current folder (a repository, say) stays clean.
    #[arg(long)]
    out: Option<PathBuf>,
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
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// on stdout; the summary table goes to stderr.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    llm: LlmArgs,
}

/// The per-user data folder of ascendopt: `$ASCENDOPT_DATA_DIR`, else
/// `$XDG_DATA_HOME/ascendopt`, else `$HOME/.local/share/ascendopt`; None
/// when none of them is set.
pub fn data_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("ASCENDOPT_DATA_DIR")
        .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("ascendopt")))
        .or_else(|| var("HOME").map(|h| h.join(".local/share/ascendopt")))
}

/// Where `ascendopt run` writes without `--out`: `run/` in the per-user
/// data folder, or, when there is none, `./ascendopt-run` with a
/// `.gitignore` of its own that ignores everything in it.
pub fn default_out() -> Result<PathBuf> {
    if let Some(dir) = data_dir() {
        return Ok(dir.join("run"));
    }
    let out = PathBuf::from("ascendopt-run");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let ignore = out.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(
            &ignore,
            "# ascendopt run output: not for version control\n*\n",
        )
        .with_context(|| format!("writing {}", ignore.display()))?;
    }
    Ok(out)
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
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => default_out()?,
    };
    // One process per output folder (held until this command returns).
    let _lock = ascendopt_harness::out_lock::lock(&out)?;
    let mut cfg = BenchConfig::new(parse_methods(&args.methods)?, ops, out);
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
    let text = render_summary(&report) + &format!("run folder: {}\n", cfg.out.display());
    if args.json {
        eprint!("{text}");
        json_report("run", &report).print()?;
    } else {
        print!("{text}");
    }
    Ok(Status::Ok)
}
