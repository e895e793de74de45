//! `ascendopt bench-evals`: how fast the evaluation loop itself is.
//!
//! Runs N evaluations per operator through the harness pipeline exactly as
//! the agent's loops do (static check → build → hardened correctness over
//! every case → profile with repeats → re-check; recorded in a run store
//! and charged to a ledger), and prints evaluations per minute and the
//! median time of each phase, per operator and by level.
//!
//! Each of the N candidates is the operator's kernel with a distinct
//! trailing comment, so every evaluation compiles its kernel cold like a
//! fresh Stage I candidate (the host and the shared runtime objects stay
//! cached, as they do in a real run).

use crate::eval_cmd::resolve_op;
use crate::json_doc::JsonDoc;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_device::{Device, RunOutcome};
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::eval::prepare_case;
use ascendopt_harness::ledger::{BudgetConfig, Ledger};
use ascendopt_harness::pipeline::bench_case;
use ascendopt_harness::pipeline::{evaluate_batch, PipelineConfig};
use ascendopt_harness::store::{RunStore, Stage};
use ascendopt_op::package::{builtin_ops_dir, package_dirs, OpPackage};
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Arguments of `ascendopt bench-evals`.
#[derive(Debug, clap::Args)]
pub struct BenchEvalsArgs {
    /// Operators (names of built-in ones or folders), comma-separated;
    /// default: every built-in Level-1 operator.
    #[arg(long, value_delimiter = ',')]
    ops: Vec<String>,
    /// Evaluations per operator.
    #[arg(short = 'n', long = "evals", default_value_t = 3)]
    n: u32,
    /// Evaluations of one operator run in parallel.
    #[arg(short = 'j', long = "jobs", default_value_t = 1)]
    jobs: usize,
    /// No measurement noise (latency samples are the clean model value).
    #[arg(long)]
    deterministic: bool,
    /// Also time each case once (input generation + golden, and one
    /// launch) to show where the correctness phase goes.
    #[arg(long)]
    breakdown: bool,
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// on stdout; the tables go to stderr.
    #[arg(long)]
    json: bool,
}

/// `println!` on stdout, or on stderr when stdout carries the JSON
/// document.
macro_rules! say {
    ($json:expr) => {
        if $json { eprintln!() } else { println!() }
    };
    ($json:expr, $($t:tt)*) => {
        if $json { eprintln!($($t)*) } else { println!($($t)*) }
    };
}

/// Where one evaluation's correctness time goes: per case, input
/// generation + golden, and one launch (functional simulation in a worker).
struct CaseCost {
    name: String,
    elements: usize,
    prepare_ms: u64,
    run_ms: u64,
    bench: bool,
}

fn case_costs(device: &dyn Device, package: &OpPackage) -> Result<Vec<CaseCost>> {
    let artifact = device
        .build(package)
        .map_err(|e| anyhow::anyhow!("{}: {e}", package.name()))?;
    let bench = bench_case(package).map(|c| c.name.clone());
    let mut out = Vec::new();
    for (i, case) in package.cases().iter().enumerate() {
        let t = Instant::now();
        let prepared = prepare_case(package, case, 11 + i as u64).map_err(anyhow::Error::msg)?;
        let prepare_ms = t.elapsed().as_millis() as u64;
        let t = Instant::now();
        let outcome = device.run(&artifact, &prepared.request);
        let run_ms = t.elapsed().as_millis() as u64;
        if !matches!(outcome, RunOutcome::Finished(_)) {
            anyhow::bail!(
                "{} case {}: {}",
                package.name(),
                case.name,
                outcome.summary()
            );
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

struct Row {
    op: String,
    level: u8,
    wall_ms: u64,
    totals: Vec<u64>,
    compile: Vec<u64>,
    correctness: Vec<u64>,
    profile: Vec<u64>,
    failed: usize,
    cases: Vec<CaseCost>,
}

fn median(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    match v.len() {
        0 => 0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    ascendopt_op::package::copy_tree(from, to, &["build", "target"])
        .map_err(|(p, e)| anyhow::anyhow!("copying {}: {e}", p.display()))
}

/// N variants of `package` that differ only by a comment in each kernel
/// source (so each one compiles cold).
fn variants(package: &OpPackage, n: u32, nonce: u128, root: &Path) -> Result<Vec<OpPackage>> {
    let mut out = Vec::new();
    for k in 0..n {
        let dir = root.join(format!("{}-{k}", package.name()));
        copy_dir(&package.dir, &dir)?;
        for src in &package.kernel_sources {
            let rel = src.strip_prefix(&package.dir).unwrap_or(src);
            let path = dir.join(rel);
            let mut text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            text.push_str(&format!("\n// bench-evals candidate {nonce:x}-{k}\n"));
            std::fs::write(&path, text)?;
        }
        out.push(OpPackage::load(&dir).with_context(|| format!("loading {}", dir.display()))?);
    }
    Ok(out)
}

pub fn run(args: BenchEvalsArgs) -> Result<Status> {
    let dirs = if args.ops.is_empty() {
        let mut l1 = Vec::new();
        for dir in package_dirs(&builtin_ops_dir()).context("listing the built-in operators")? {
            if OpPackage::load(&dir)
                .map(|p| p.spec.level == 1)
                .unwrap_or(false)
            {
                l1.push(dir);
            }
        }
        l1
    } else {
        args.ops
            .iter()
            .map(|a| resolve_op(a))
            .collect::<Result<Vec<_>>>()?
    };
    anyhow::ensure!(args.n > 0, "-n must be at least 1");
    let json = args.json;
    let mut doc = JsonDoc::new("bench-evals");
    let device = SimDevice::new(SimDeviceConfig::standard()?);
    let scratch = tempfile::tempdir()?;
    let store = RunStore::open(&scratch.path().join("runs.sqlite"))?;
    let compare = CompareConfig::RECOMMENDED;
    let mut pipeline = PipelineConfig::from_compare(&compare, 1);
    pipeline.deterministic = args.deterministic;
    let run = store.create_run(&serde_json::json!({ "command": "bench-evals", "n": args.n }))?;
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    say!(
        json,
        "{} evaluations per operator, {} latency samples each, -j {}{}",
        args.n,
        pipeline.repeats,
        args.jobs,
        if args.deterministic {
            ", deterministic"
        } else {
            ""
        }
    );
    say!(
        json,
        "{:<28} {:>5} {:>6} {:>10} {:>11} {:>14} {:>11} {:>9}",
        "operator",
        "level",
        "evals",
        "median ms",
        "compile ms",
        "correctness ms",
        "profile ms",
        "evals/min"
    );
    let mut rows = Vec::new();
    for dir in &dirs {
        let package = OpPackage::load(dir).with_context(|| format!("loading {}", dir.display()))?;
        let cands = variants(&package, args.n, nonce, &scratch.path().join("cands"))?;
        let budgets = BudgetConfig {
            rewind: 0,
            online: args.n,
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
            &device,
            &store,
            &mut ledger,
            run,
            Stage::Online,
            &cands,
            &pipeline,
            args.jobs.max(1),
        )?;
        let wall_ms = t.elapsed().as_millis() as u64;
        let stored = store.evaluations(run, package.name())?;
        let mut row = Row {
            op: package.name().to_string(),
            level: package.spec.level,
            wall_ms,
            totals: Vec::new(),
            compile: Vec::new(),
            correctness: Vec::new(),
            profile: Vec::new(),
            failed: evaluated.iter().filter(|e| !e.verdict.is_success()).count(),
            cases: if args.breakdown {
                case_costs(&device, &package)?
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
        let per_min = if wall_ms > 0 {
            row.totals.len() as f64 * 60_000.0 / wall_ms as f64
        } else {
            0.0
        };
        say!(
            json,
            "{:<28} {:>5} {:>6} {:>10} {:>11} {:>14} {:>11} {:>9.1}{}",
            row.op,
            format!("L{}", row.level),
            row.totals.len(),
            median(&row.totals),
            median(&row.compile),
            median(&row.correctness),
            median(&row.profile),
            per_min,
            if row.failed > 0 {
                format!(
                    "  ({} not correct: {})",
                    row.failed,
                    evaluated
                        .iter()
                        .find(|e| !e.verdict.is_success())
                        .map(|e| e.verdict.kind())
                        .unwrap_or("")
                )
            } else {
                String::new()
            }
        );
        if !row.cases.is_empty() {
            // One evaluation: every case prepared once; every case but the
            // benchmark one launched twice (the run-twice check), the
            // benchmark case once (it is profiled from that run); the
            // re-check of the next-largest case is left out of the estimate.
            let times = |c: &CaseCost| if c.bench { 1 } else { 2 };
            let est: u64 = row
                .cases
                .iter()
                .map(|c| c.prepare_ms + times(c) * c.run_ms)
                .sum::<u64>();
            for c in &row.cases {
                let share = c.prepare_ms + times(c) * c.run_ms;
                say!(json,
                    "    case {:<22} {:>10} elements: inputs+golden {:>6} ms, launch {:>6} ms ({}x per evaluation: {:.0}% of correctness)",
                    c.name,
                    c.elements,
                    c.prepare_ms,
                    c.run_ms,
                    times(c),
                    if est > 0 { share as f64 * 100.0 / est as f64 } else { 0.0 }
                );
            }
        }
        doc.operator(serde_json::json!({
            "op": row.op,
            "level": row.level,
            "evaluations": row.totals.len(),
            "failed": row.failed,
            "wall_ms": row.wall_ms,
            "median_ms": median(&row.totals),
            "median_compile_ms": median(&row.compile),
            "median_correctness_ms": median(&row.correctness),
            "median_profile_ms": median(&row.profile),
            "evaluations_per_minute": per_min,
            "cases": row.cases.iter().map(|c| serde_json::json!({
                "name": c.name,
                "elements": c.elements,
                "prepare_ms": c.prepare_ms,
                "run_ms": c.run_ms,
                "benchmark_case": c.bench,
            })).collect::<Vec<_>>(),
        }));
        rows.push(row);
    }
    let mut by_level: BTreeMap<u8, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        by_level.entry(r.level).or_default().push(r);
    }
    say!(json);
    say!(
        json,
        "{:<6} {:>5} {:>6} {:>9} {:>10} {:>11} {:>14} {:>11}",
        "level",
        "ops",
        "evals",
        "evals/min",
        "median ms",
        "compile ms",
        "correctness ms",
        "profile ms"
    );
    let mut levels_json = Vec::new();
    let mut l1_median = None;
    let mut l1_failed = 0usize;
    let mut all_rate = (0usize, 0u64);
    for (level, rs) in &by_level {
        let cat = |f: fn(&Row) -> &Vec<u64>| {
            rs.iter()
                .flat_map(|r| f(r).iter().copied())
                .collect::<Vec<u64>>()
        };
        let totals = cat(|r| &r.totals);
        let wall: u64 = rs.iter().map(|r| r.wall_ms).sum();
        let rate = if wall > 0 {
            totals.len() as f64 * 60_000.0 / wall as f64
        } else {
            0.0
        };
        all_rate.0 += totals.len();
        all_rate.1 += wall;
        say!(
            json,
            "{:<6} {:>5} {:>6} {:>9.1} {:>10} {:>11} {:>14} {:>11}",
            format!("L{level}"),
            rs.len(),
            totals.len(),
            rate,
            median(&totals),
            median(&cat(|r| &r.compile)),
            median(&cat(|r| &r.correctness)),
            median(&cat(|r| &r.profile)),
        );
        levels_json.push(serde_json::json!({
            "level": format!("L{level}"),
            "operators": rs.len(),
            "evaluations": totals.len(),
            "evaluations_per_minute": rate,
            "median_ms": median(&totals),
            "median_compile_ms": median(&cat(|r| &r.compile)),
            "median_correctness_ms": median(&cat(|r| &r.correctness)),
            "median_profile_ms": median(&cat(|r| &r.profile)),
        }));
        if *level == 1 {
            l1_median = Some(median(&totals));
            l1_failed = rs.iter().map(|r| r.failed).sum();
        }
    }
    if all_rate.1 > 0 {
        let rate = all_rate.0 as f64 * 60_000.0 / all_rate.1 as f64;
        let hours = 101.0 * 230.0 / rate / 60.0;
        say!(json,
            "\noverall {:.1} evaluations/min with -j {}: a 101-operator x 230-evaluation benchmark \
             would take about {:.1} h per method at this rate, an upper bound: every evaluation here compiles its \
             kernel, while a real run's tiling steps reuse the cached one, and a run leaves unspent the budget of \
             candidates whose launches repeat an evaluated one's (the published hardware loop: ~2 min per \
             evaluation)",
            rate, args.jobs, hours
        );
    }
    if let Some(m) = l1_median {
        // A failed evaluation stops early: its time says nothing of a
        // correct one's, so the target is only judged when all passed.
        let judged = if l1_failed > 0 {
            format!("not judged, {l1_failed} evaluations were not correct")
        } else if args.jobs > 1 {
            format!(
                "not judged with -j {} (parallel evaluations share the cores; the target is for one at a time)",
                args.jobs
            )
        } else if m < 1500 {
            "met".to_string()
        } else {
            "NOT met".to_string()
        };
        say!(
            json,
            "Level-1 median evaluation {:.2} s (target < 1.5 s): {judged}",
            m as f64 / 1000.0,
        );
    }
    if json {
        doc.field(
            "config",
            serde_json::json!({
                "evaluations_per_operator": args.n,
                "jobs": args.jobs,
                "deterministic": args.deterministic,
                "repeats": pipeline.repeats,
            }),
        );
        doc.field("summary", serde_json::json!({ "by_level": levels_json }));
        doc.print()?;
    }
    Ok(Status::Ok)
}
