//! `ascendopt optimize`: make one operator faster with Stage I (kernel
//! rewrites guided by a frozen bank) and Stage II (tiling search) under one
//! evaluation budget.
//!
//! Writes into `--out DIR`: the optimised package `DIR/<op>/` (same layout
//! as the input, op.toml and all), `changes.diff`, `steps.json` (accepted
//! steps with their evidence), `log.json` (every attempt), `before/` and
//! `after/` (profile JSON, Chrome trace and msprof's OpBasicInfo.csv and
//! PipeUtilization.csv of the benchmark case), and the
//! run store `DIR/runs.sqlite`. Rerunning the same command with the same
//! `--out` resumes the same run: the store answers every candidate judged
//! before without charge, so the deterministic loop replays up to where it
//! stopped and goes on from there.
//!
//! Progress (one line per attempt) goes to stderr, the summary to stdout.
//! Exit code 1 when the input is not correct or the output fails its
//! re-check on fresh inputs; 2 on bad input.

use crate::hiargs::{self, resolve_op, MethodArgs, MethodRun};
use crate::json_doc::JsonDoc;
use crate::llm_args::LlmArgs;
use crate::progress::Heartbeat;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_agent::optimize::{optimize_into, Method, OptimizeConfig, Optimized, OutputReport};
use ascendopt_agent::outcome::OpOutcome;
use ascendopt_agent::session::LogEntry;
use ascendopt_harness::store::RunId;
use ascendopt_op::package::OpPackage;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of `ascendopt optimize`.
#[derive(Debug, clap::Args)]
pub struct OptimizeArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// The operator: a folder with op.toml, or a built-in operator's name.
    op: String,
    /// The frozen experience bank Stage I retrieves from (not needed with
    /// `--no-retrieval` or `--stages 2`).
    #[arg(long, value_name = "FILE")]
    bank: Option<PathBuf>,
    /// Online evaluations, the input's own measurement included.
    #[arg(long, default_value_t = 210)]
    budget: u32,
    /// Output folder (optimised package, diff, steps, profiles, traces, run
    /// store).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Stages to run: `1`, `2` or `1,2`.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    stages: Vec<u8>,
    /// Stage I without experience (no bank retrieval; the diagnoser's own
    /// motif guesses).
    #[arg(long)]
    no_retrieval: bool,
    /// Evaluations for Stage I when both stages run (default: until it
    /// stagnates, at most three quarters of the budget).
    #[arg(long)]
    stage1_budget: Option<u32>,
    /// Stage I stops after this many attempts in a row without an
    /// accepted rewrite (when both stages run and --stage1-budget is not
    /// given).
    #[arg(long, default_value_t = 12)]
    stagnation: u32,
    /// Stage II stops after this many attempts in a row without a new best
    /// (default: it uses its whole share).
    #[arg(long)]
    patience: Option<u32>,
    /// Entries retrieved per diagnosis.
    #[arg(short = 'k', long = "k", default_value_t = ascendopt_bank::retrieve::DEFAULT_K)]
    k: usize,
    /// Seed of the inputs, the measurement noise and every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Profile without measurement noise (the acceptance threshold is then
    /// the rule's minimum effect).
    #[arg(long)]
    deterministic: bool,
    /// Latency samples per evaluation (default: the acceptance rule's 30).
    #[arg(long)]
    repeats: Option<usize>,
    /// Wall-clock limit of one launch, in seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// on stdout; the summary goes to stderr.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    llm: LlmArgs,
}

/// The `--json` document: the operator's outcome (every accepted step
/// with its evidence; the attempt log is in log.json) and what was written.
fn json_doc(
    outcome: &OpOutcome,
    report: &OutputReport,
    config: &serde_json::Value,
    run: RunId,
    out: &std::path::Path,
) -> JsonDoc {
    let mut doc = JsonDoc::new("optimize");
    doc.operator(serde_json::json!({
        "op": outcome.op,
        "level": outcome.level,
        "method": outcome.method,
        "baseline_us": outcome.baseline_us,
        "final_us": outcome.final_us,
        "speedup": outcome.speedup,
        "spent": outcome.spent,
        "budget": outcome.budget,
        "roofline_before": outcome.roofline_before,
        "roofline_after": outcome.roofline_after,
        "curve": outcome.curve,
        "steps": outcome.steps,
        "output": {
            "package": report.package.display().to_string(),
            "passed": report.output_passed,
            "failures": report.failures,
            "noise_free_before_us": report.before_us,
            "noise_free_after_us": report.after_us,
            "files": report.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        },
    }));
    doc.field("config", config.clone());
    doc.field(
        "files",
        serde_json::json!({
            "out": out.display().to_string(),
            "runs": out.join("runs.sqlite").display().to_string(),
            "run": run.0,
        }),
    );
    doc
}

fn progress(entry: &LogEntry) {
    let latency = entry
        .latency_us
        .map_or_else(String::new, |us| format!(" {us:.3} us"));
    let charged = match entry.budget_index {
        Some(_) => format!("#{}", entry.spent),
        None => "stored".to_string(),
    };
    eprintln!(
        "[{}] {} {charged} {}{latency} {} {}: {}",
        entry.op,
        entry.phase.as_str(),
        entry.verdict,
        if entry.accepted {
            "ACCEPTED"
        } else {
            "rejected"
        },
        entry.action.summary,
        entry.reason
    );
}

fn summary(
    outcome: &OpOutcome,
    out: &std::path::Path,
    passed: bool,
    failures: &[String],
) -> String {
    let mut s = String::new();
    let us = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.3} us"));
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{:.1}%", x * 100.0));
    let _ = writeln!(
        s,
        "operator        {} (level {})",
        outcome.op, outcome.level
    );
    let _ = writeln!(s, "method          {}", outcome.method);
    let _ = writeln!(s, "input           {}", us(outcome.baseline_us));
    let _ = writeln!(s, "output          {}", us(outcome.final_us));
    let _ = writeln!(s, "speedup         {:.3}x", outcome.speedup);
    let _ = writeln!(
        s,
        "roofline        {} -> {}",
        pct(outcome.roofline_before),
        pct(outcome.roofline_after)
    );
    let _ = writeln!(s, "evaluations     {} of {}", outcome.spent, outcome.budget);
    let _ = writeln!(s, "accepted steps  {}", outcome.steps.len());
    for st in &outcome.steps {
        let _ = writeln!(
            s,
            "  [{}] {:.3} -> {:.3} us  {}",
            st.phase.as_str(),
            st.before_us,
            st.after_us,
            st.action.summary
        );
    }
    let knobs: Vec<&String> = outcome.stops.iter().flat_map(|st| &st.knobs).collect();
    if !knobs.is_empty() {
        let _ = writeln!(s, "tiling knobs found in the host code:");
        let mut seen: Vec<&String> = Vec::new();
        for k in knobs {
            if !seen.contains(&k) {
                let _ = writeln!(s, "  {k}");
                seen.push(k);
            }
        }
    }
    let _ = writeln!(s, "why each stage stopped:");
    for st in &outcome.stops {
        let _ = writeln!(s, "  {}", st.line());
    }
    let _ = writeln!(
        s,
        "re-check        {}",
        if passed {
            "every case passes on fresh inputs".to_string()
        } else {
            format!("FAILED: {}", failures.join("; "))
        }
    );
    let _ = writeln!(s, "written to      {}", out.display());
    s
}

/// Runs the command.
pub fn run(args: OptimizeArgs) -> Result<Status> {
    let dir = resolve_op(&args.op)?;
    let pkg = OpPackage::load(&dir, &ascendopt_golden::BUILTINS)
        .with_context(|| format!("loading {}", dir.display()))?;
    if args.budget < 2 {
        anyhow::bail!(
            "--budget must be at least 2 (the input's own measurement and one candidate)"
        );
    }
    let stage1 = args.stages.contains(&1);
    let stage2 = args.stages.contains(&2);
    if let Some(bad) = args.stages.iter().find(|s| **s != 1 && **s != 2) {
        anyhow::bail!("--stages: unknown stage {bad} (expected 1, 2 or 1,2)");
    }
    let method = Method::from_switches(stage1, stage2, !args.no_retrieval)
        .ok_or_else(|| anyhow::anyhow!("--stages selects no stage"))?;
    let bank = hiargs::stage1_bank(
        args.bank.as_deref(),
        method.uses_bank() && !args.no_retrieval,
    )?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    // One process per output folder (held until this command returns).
    let _lock = ascendopt_harness::out_lock::lock(&args.out)?;
    let input = std::fs::canonicalize(&dir).unwrap_or(dir.clone());
    let bank_digest = match &bank {
        Some(b) => Some(b.content_digest()?),
        None => None,
    };
    let method_args = MethodArgs {
        device: &args.device,
        llm: &args.llm,
        seed: args.seed,
        repeats: args.repeats,
        deterministic: args.deterministic,
        timeout_s: args.timeout,
        runs: args.out.join("runs.sqlite"),
        workdir: args.out.join("work"),
        resume: true,
    };
    let MethodRun { mut agents, env } = MethodRun::open(&method_args, |agents, pipeline| {
        serde_json::json!({
            "command": "optimize",
            "op": pkg.name(),
            "input": input.display().to_string(),
            "method": method.as_str(),
            "retrieval": !args.no_retrieval,
            "budget": args.budget,
            "stage1_budget": args.stage1_budget,
            "stagnation": args.stagnation,
            "patience": args.patience,
            "k": args.k,
            "seed": args.seed,
            "deterministic": args.deterministic,
            "repeats": pipeline.repeats,
            "proposer": agents.describe(),
            "diagnoser": agents.diagnoser.name(),
            "bank": bank_digest,
        })
    })?;
    let run = env.run;
    eprintln!(
        "optimize {}: method {}, budget {}, run {run} ({}) in {}",
        pkg.name(),
        method.as_str(),
        args.budget,
        if env.resumed { "resumed" } else { "new" },
        env.runs.display()
    );
    let cfg = OptimizeConfig {
        method,
        budget: args.budget,
        stage1_budget: args.stage1_budget,
        k: args.k,
        stagnation: args.stagnation,
        seed: args.seed,
        patience: args.patience,
        retrieval: agents.retrieval(),
    };
    if agents.dense.is_some() {
        eprintln!("retrieval: {}", cfg.retrieval.describe());
    }
    // Without a terminal, a heartbeat line every few seconds as well (an
    // LLM's answer or a heavy evaluation can take minutes).
    let heartbeat = Heartbeat::start("optimize", u64::from(args.budget));
    let mut baseline: Option<f64> = None;
    let mut best: Option<f64> = None;
    let mut on_attempt = |entry: &LogEntry| {
        progress(entry);
        heartbeat.done(u64::from(entry.spent), Some(u64::from(entry.spent)));
        if let Some(us) = entry.latency_us {
            if baseline.is_none() {
                baseline = Some(us);
            }
            if entry.accepted || best.is_none() {
                best = Some(best.map_or(us, |b: f64| b.min(us)));
            }
        }
        if let (Some(b), Some(f)) = (baseline, best) {
            heartbeat.best(format!("{} {:.3}x accepted", entry.op, b / f));
        }
    };
    let result = optimize_into(
        &env.ctx(),
        &pkg,
        bank.as_ref(),
        agents.proposer.as_mut(),
        agents.diagnoser.as_mut(),
        &cfg,
        &args.out,
        args.seed ^ 0x6672_6573_6821,
        &mut on_attempt,
    );
    drop(heartbeat);
    for warning in cfg.retrieval.fallbacks() {
        eprintln!("warning: {warning}");
    }
    let Optimized { outcome, report } =
        result.with_context(|| format!("optimizing {}", pkg.name()))?;
    let text = summary(&outcome, &args.out, report.output_passed, &report.failures);
    if args.json {
        eprint!("{text}");
        json_doc(&outcome, &report, &env.config, run, &args.out).print()?;
    } else {
        print!("{text}");
    }
    if outcome.baseline_us.is_none() {
        eprintln!("the input operator is not correct: nothing was optimised");
        return Ok(Status::Failed);
    }
    Ok(if report.output_passed {
        Status::Ok
    } else {
        Status::Failed
    })
}
