//! `ascendopt bench`: compare methods at equal budget per operator and
//! write a report folder (results.json, report.md, report.html, the bank,
//! optimised packages, traces). Resumable: run it again with the same
//! `--out` and flags and it continues where it stopped.

use crate::json_doc::JsonDoc;
use crate::llm_args::LlmArgs;
use crate::progress::{self, Heartbeat};
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_agent::factory::BuiltinAgents;
use ascendopt_experiments::bench::{run_bench, BenchConfig, BenchEvent, BenchMethod, BenchReport};
use ascendopt_experiments::report::markdown::{fmt_gm, fmt_pct};
use ascendopt_experiments::report::stats::FAST_P;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_op::package::OpPackage;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;

/// Arguments of `ascendopt bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    device: crate::device_arg::DeviceArg,
    /// Methods, comma-separated: full, stage1, stage1-noexp, tiling, bon,
    /// judge (judge needs an LLM).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "full,stage1,stage1-noexp,tiling,bon"
    )]
    methods: Vec<String>,
    /// Evaluations per operator and method, all stages together (methods
    /// that use the bank spend --rewind-budget of it on Rewind).
    #[arg(long, default_value_t = 230)]
    budget: u32,
    /// Rewind evaluations per bank operator.
    #[arg(long, default_value_t = 20)]
    rewind_budget: u32,
    /// Operators (built-in names or folders), comma-separated; both the
    /// bank and the evaluation set. Default: every built-in operator.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["bank_ops", "eval_ops"])]
    ops: Vec<String>,
    /// Operators the bank is built on (held-out transfer with --eval-ops).
    #[arg(long, value_delimiter = ',')]
    bank_ops: Vec<String>,
    /// Operators evaluated (default: --bank-ops, or every built-in).
    #[arg(long, value_delimiter = ',')]
    eval_ops: Vec<String>,
    /// Operators run in parallel.
    #[arg(short = 'j', long = "jobs", default_value_t = 1)]
    jobs: usize,
    /// Output folder (resumed when it exists).
    #[arg(long, default_value = "ascendopt-bench")]
    out: PathBuf,
    /// Seed of inputs, measurement noise and proposers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// No measurement noise.
    #[arg(long)]
    deterministic: bool,
    /// Latency samples per evaluation (default: the acceptance rule's 30).
    #[arg(long)]
    repeats: Option<usize>,
    /// Stage I's share of the online budget in `full` (default: until it
    /// stagnates).
    #[arg(long)]
    stage1_budget: Option<u32>,
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// on stdout; the summary table goes to stderr.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    llm: LlmArgs,
}

/// The `--json` document of a benchmark (`bench` and `run`): one item per
/// operator with its outcome under every method, then the run's meta,
/// tables, curves and report paths.
pub(crate) fn json_report(command: &'static str, report: &BenchReport) -> JsonDoc {
    let r = &report.results;
    let mut doc = JsonDoc::new(command);
    for (level, op) in r.operators() {
        let outcomes: Vec<&_> = r.outcomes.iter().filter(|o| o.op == op).collect();
        doc.operator(serde_json::json!({ "op": op, "level": level, "outcomes": outcomes }));
    }
    doc.field("meta", serde_json::json!(r.meta));
    doc.field("tables", serde_json::json!(r.tables));
    doc.field("curves", serde_json::json!(r.curves));
    doc.field(
        "files",
        serde_json::json!({
            "out": report.out.display().to_string(),
            "report_html": report.report_html.display().to_string(),
            "results_json": report.out.join(ascendopt_experiments::report::RESULTS_JSON).display().to_string(),
        }),
    );
    doc
}

/// Loads operator packages from names or folders; empty = every built-in.
pub(crate) fn load_ops(args: &[String]) -> Result<Vec<OpPackage>> {
    crate::hiargs::load_packages(&crate::hiargs::op_dirs(args)?)
}

/// Parses `--methods`.
pub(crate) fn parse_methods(names: &[String]) -> Result<Vec<BenchMethod>> {
    names
        .iter()
        .map(|n| {
            BenchMethod::parse(n.trim()).with_context(|| {
                format!("unknown method {n:?} (expected full, stage1, stage1-noexp, tiling, bon or judge)")
            })
        })
        .collect()
}

/// Progress on stderr: a bar per phase on a terminal; otherwise (and when
/// CI=true) plain lines: one per finished operator and a heartbeat line
/// every few seconds ([`Heartbeat`]).
pub(crate) struct Progress {
    bar: Mutex<Option<ProgressBar>>,
    fancy: bool,
    heartbeat: Heartbeat,
}

impl Progress {
    pub(crate) fn new() -> Progress {
        Progress {
            bar: Mutex::new(None),
            fancy: !progress::plain_output(),
            heartbeat: Heartbeat::start("starting", 0),
        }
    }

    fn line(&self, text: &str) {
        match self.bar.lock().ok().and_then(|b| b.clone()) {
            Some(bar) if self.fancy => bar.println(text),
            _ => eprintln!("{text}"),
        }
    }

    pub(crate) fn handle(&self, event: &BenchEvent) {
        match event {
            BenchEvent::Phase { name, total } => {
                if let Ok(mut slot) = self.bar.lock() {
                    if let Some(old) = slot.take() {
                        old.finish_and_clear();
                    }
                    if self.fancy {
                        let bar = ProgressBar::with_draw_target(
                            Some(*total),
                            ProgressDrawTarget::stderr(),
                        );
                        let style = ProgressStyle::with_template(
                            "{prefix:>7} [{bar:40}] {pos}/{len} evaluations  {elapsed_precise} (eta {eta})",
                        )
                        .map(|s| s.progress_chars("=> "))
                        .unwrap_or_else(|_| ProgressStyle::default_bar());
                        bar.set_style(style);
                        bar.set_prefix(name.clone());
                        *slot = Some(bar);
                    }
                }
                if !self.fancy {
                    eprintln!("{name}: up to {total} evaluations");
                }
                self.heartbeat.phase(name, *total);
            }
            BenchEvent::Progress {
                done,
                charged,
                best,
            } => {
                if let Some(bar) = self.bar.lock().ok().and_then(|b| b.clone()) {
                    bar.set_position(*done);
                }
                self.heartbeat.done(*done, *charged);
                if let Some((what, speedup)) = best {
                    self.heartbeat
                        .best(format!("{what} {speedup:.3}x measured"));
                }
            }
            BenchEvent::Finished {
                method,
                op,
                summary,
            } => self.line(&format!("  [{method}] {op}: {summary}")),
            BenchEvent::Note(text) => self.line(&format!("note: {text}")),
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            bar.finish_and_clear();
        }
    }
}

/// The summary table printed at the end (Table 3 style, then by level).
pub(crate) fn render_summary(report: &BenchReport) -> String {
    let mut s = String::new();
    let r = &report.results;
    let fast: Vec<String> = FAST_P.iter().map(|p| format!(">{p:.1}")).collect();
    s.push('\n');
    let _ = writeln!(
        s,
        "{:<14} {:>4} {:>7} {}",
        "method",
        "n",
        "GM",
        fast.iter().map(|f| format!("{f:>7}")).collect::<String>()
    );
    for row in &r.tables.by_method {
        let _ = writeln!(
            s,
            "{:<14} {:>4} {:>7} {}",
            row.method,
            row.stats.n,
            fmt_gm(row.stats.gm),
            FAST_P
                .iter()
                .map(|&p| format!("{:>7}", fmt_pct(row.stats.fast_at(p))))
                .collect::<String>()
        );
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "{:<6} {:<14} {:>4} {:>7} {}",
        "level",
        "method",
        "n",
        "GM",
        fast.iter().map(|f| format!("{f:>7}")).collect::<String>()
    );
    for row in &r.tables.by_level {
        let _ = writeln!(
            s,
            "{:<6} {:<14} {:>4} {:>7} {}",
            row.level,
            row.method,
            row.stats.n,
            fmt_gm(row.stats.gm),
            FAST_P
                .iter()
                .map(|&p| format!("{:>7}", fmt_pct(row.stats.fast_at(p))))
                .collect::<String>()
        );
    }
    if !r.meta.llm_usage.is_empty() {
        let priced = r.meta.llm_usage.iter().any(|u| u.cost.is_some());
        s.push('\n');
        let _ = writeln!(
            s,
            "{:<14} {:>9} {:>12} {:>12} {:>12}{}",
            "LLM usage",
            "requests",
            "prompt tok",
            "output tok",
            "embed tok",
            if priced { "        cost" } else { "" }
        );
        for u in &r.meta.llm_usage {
            let cost = match (priced, u.cost) {
                (false, _) => String::new(),
                (true, Some(c)) => format!(" {c:>11.4}"),
                (true, None) => format!(" {:>11}", "-"),
            };
            let _ = writeln!(
                s,
                "{:<14} {:>9} {:>12} {:>12} {:>12}{cost}",
                u.method, u.requests, u.prompt_tokens, u.completion_tokens, u.embedding_tokens
            );
            if u.dense_fallbacks > 0 {
                let _ = writeln!(
        s,
                    "  warning: {} Stage I round(s) of {} fell back to lexical retrieval (embeddings failed; see llm_calls of run {})",
                    u.dense_fallbacks, u.method, u.run
                );
            }
        }
    }
    let whys: Vec<(String, Vec<String>)> = r
        .outcomes
        .iter()
        .map(|o| (format!("{} ({})", o.op, o.method), o.why()))
        .filter(|(_, w)| !w.is_empty())
        .collect();
    if !whys.is_empty() {
        let _ = writeln!(s, "\nwhy each stage stopped:");
        for (who, lines) in whys {
            for line in lines {
                let _ = writeln!(s, "  {who}: {line}");
            }
        }
    }
    for (m, why) in &r.meta.skipped {
        let _ = writeln!(s, "skipped {m}: {why}");
    }
    for note in &r.meta.notes {
        let _ = writeln!(s, "note: {note}");
    }
    let _ = writeln!(
        s,
        "\nfast_p columns: % of operators correct and strictly faster than p x the input."
    );
    let _ = writeln!(s, "report: {}", report.report_html.display());
    s
}

/// Runs the benchmark with the flags' agents (built-in, or the LLM) and
/// the progress display.
pub(crate) fn execute(cfg: &BenchConfig, llm: &LlmArgs) -> Result<BenchReport> {
    std::fs::create_dir_all(&cfg.out).with_context(|| format!("creating {}", cfg.out.display()))?;
    let agents = crate::llm_args::agents(llm, cfg.seed, &cfg.out.join("runs.sqlite"))?;
    let device = crate::hiargs::device_of(cfg.device, None, cfg.repeats)?;
    let device = &*device;
    let progress = Progress::new();
    let result = match agents.llm_factory() {
        Some(factory) => run_bench(cfg, device, &factory, &|e| progress.handle(e)),
        None => run_bench(cfg, device, &BuiltinAgents, &|e| progress.handle(e)),
    };
    progress.finish();
    Ok(result?)
}

/// Runs the command.
pub fn run(args: BenchArgs) -> Result<Status> {
    let methods = parse_methods(&args.methods)?;
    let (bank_ops, eval_ops) = if !args.ops.is_empty() {
        let ops = load_ops(&args.ops)?;
        (ops.clone(), ops)
    } else {
        match (args.bank_ops.is_empty(), args.eval_ops.is_empty()) {
            (true, true) => {
                let all = load_ops(&[])?;
                (all.clone(), all)
            }
            (false, true) => {
                let b = load_ops(&args.bank_ops)?;
                (b.clone(), b)
            }
            (true, false) => {
                let e = load_ops(&args.eval_ops)?;
                (e.clone(), e)
            }
            (false, false) => (load_ops(&args.bank_ops)?, load_ops(&args.eval_ops)?),
        }
    };
    // One process per output folder (held until this command returns).
    let _lock = ascendopt_harness::out_lock::lock(&args.out)?;
    let mut cfg = BenchConfig::new(methods, eval_ops, args.out.clone());
    cfg.bank_ops = bank_ops;
    cfg.budget = args.budget;
    cfg.rewind_budget = args.rewind_budget;
    cfg.jobs = args.jobs.max(1);
    cfg.seed = args.seed;
    cfg.device = args.device.choice()?;
    cfg.deterministic = args.deterministic;
    cfg.repeats = args
        .repeats
        .unwrap_or(CompareConfig::RECOMMENDED.repeats)
        .max(1);
    cfg.stage1_budget = args.stage1_budget;
    if !cfg.eval_ops.iter().any(|p| p.spec.level == 3) {
        cfg.notes
            .push("no Level-3 operator is evaluated (none is in this selection)".into());
    }
    eprintln!(
        "bench: {} method(s) x {} operator(s), budget {} per operator, -j {}, out {}",
        cfg.methods.len(),
        cfg.eval_ops.len(),
        cfg.budget,
        cfg.jobs,
        cfg.out.display()
    );
    let fresh = !cfg.out.join("runs.sqlite").exists();
    let started = std::time::Instant::now();
    let report = execute(&cfg, &args.llm)?;
    let text = render_summary(&report) + &render_pace(&report, started.elapsed(), fresh, cfg.jobs);
    if args.json {
        eprint!("{text}");
        json_report("bench", &report).print()?;
    } else {
        print!("{text}");
    }
    Ok(Status::Ok)
}

/// What the run cost: the online budget each method spent, and the wall
/// time with the pace it implies for a 101-operator suite (the method's
/// benchmark; only for a run that started afresh, not a resumed one).
fn render_pace(
    report: &BenchReport,
    wall: std::time::Duration,
    fresh: bool,
    jobs: usize,
) -> String {
    let mut s = String::new();
    let r = &report.results;
    s.push('\n');
    for method in &r.meta.methods {
        let mine = r.outcomes.iter().filter(|o| &o.method == method);
        let (spent, budget, n) = mine.fold((0u64, 0u64, 0usize), |(s, b, n), o| {
            (s + u64::from(o.spent), b + u64::from(o.budget), n + 1)
        });
        let _ = writeln!(
            s,
            "{method}: {spent} of {budget} online evaluations spent over {n} operator(s) \
             (the rest: candidates whose sources or launches repeat an evaluated one's, \
             answered from the run store)"
        );
    }
    let secs = wall.as_secs();
    let clock = format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    let pairs = r.meta.eval_ops.len() * r.meta.methods.len();
    if fresh && pairs > 0 {
        let per_pair = wall.as_secs_f64() / pairs as f64;
        let _ = writeln!(
            s,
            "wall time {clock} with -j {jobs}: {:.1} min per operator and method (Rewind \
             included); at this pace 101 operators take about {:.1} h per method",
            per_pair / 60.0,
            per_pair * 101.0 / 3600.0
        );
    } else {
        let _ = writeln!(
            s,
            "wall time {clock} with -j {jobs} (a resumed run: no pace derived)"
        );
    }
    s
}
