//! The naive-kernel benchmark behind `ascendopt bench-naive`: how far the
//! full method takes correct but naive operators (first attempts written
//! like code from elsewhere, no knob markers) towards the built-in strong
//! operators of the same computation.
//!
//! For every naive package (a folder whose `op.toml` names a built-in
//! operator: same tensors, attrs and golden, its own cases):
//! - the strong reference: the built-in operator's `op_host/` and
//!   `op_kernel/` with the naive package's `op.toml` (so both run the same
//!   cases), measured once;
//! - the full method (Stage I with the built-in motif engine, no bank:
//!   every applicable motif; then Stage II with the knobs it finds) at
//!   each budget, every budget an independent run ([`run_bench`]).
//!
//! Per operator and budget: speedup over the naive kernel, the share of
//! the naive-to-strong gap closed ((naive - final) / (naive - strong) in
//! latency, and the same on a log scale), evaluations spent and why each
//! stage stopped. Over the operators: the geometric mean speedup, the
//! geometric mean speedup of the strong kernels over the naive ones (what
//! closing every gap would give), the mean share of the gap closed, and
//! the evaluations spent. Output folder: `strong/` (the references),
//! `budget-<N>/` (one benchmark folder per budget, resumable), and
//! `naive.json` (the rows and the summary).

use crate::bench::{run_bench, BenchConfig, BenchError, BenchEvent, BenchMethod};
use crate::report::results::OutcomeSummary;
use ascendopt_agent::factory::AgentFactory;
use ascendopt_agent::optimize::Method;
use ascendopt_op::package::OpPackage;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What the naive benchmark runs.
#[derive(Debug, Clone)]
pub struct NaiveBenchConfig {
    /// The naive packages.
    pub ops: Vec<OpPackage>,
    /// Where the strong built-in operators live (`ops/`).
    pub strong_dir: PathBuf,
    /// Budgets (all evaluations of an operator, its input's included).
    pub budgets: Vec<u32>,
    /// Output folder.
    pub out: PathBuf,
    /// Operators run in parallel.
    pub jobs: usize,
    /// Base seed.
    pub seed: u64,
    /// Where candidates are evaluated (`--device`; recorded in each
    /// budget's run configuration, so a resumed run stays on its device).
    pub device: ascendopt_device::select::DeviceChoice,
}

/// One operator at one budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaiveAtBudget {
    /// The budget.
    pub budget: u32,
    /// The optimised kernel's median latency, µs.
    pub final_us: Option<f64>,
    /// naive / final.
    pub speedup: f64,
    /// (naive - final) / (naive - strong).
    pub gap_closed: Option<f64>,
    /// ln(naive / final) / ln(naive / strong).
    pub log_gap_closed: Option<f64>,
    /// Evaluations charged.
    pub spent: u32,
    /// Why each stage stopped.
    pub why: Vec<String>,
}

/// One naive operator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaiveRow {
    /// Operator.
    pub op: String,
    /// The naive kernel's median latency, µs.
    pub naive_us: Option<f64>,
    /// The strong built-in kernel's median latency on the same cases, µs.
    pub strong_us: Option<f64>,
    /// Per budget.
    pub budgets: Vec<NaiveAtBudget>,
}

/// The summary of one budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaiveSummary {
    /// The budget.
    pub budget: u32,
    /// Operators counted (those whose naive and strong kernels both ran).
    pub n: usize,
    /// Geometric mean speedup over the naive kernels.
    pub gm_speedup: f64,
    /// Geometric mean speedup of the strong kernels over the naive ones.
    pub gm_strong: f64,
    /// Mean share of the gap closed (latency).
    pub mean_gap_closed: f64,
    /// Share of the log gap closed by the geometric means:
    /// ln(gm_speedup) / ln(gm_strong).
    pub gm_gap_closed: f64,
    /// Evaluations charged in all.
    pub spent: u32,
}

/// What the naive benchmark found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaiveReport {
    /// Per operator.
    pub rows: Vec<NaiveRow>,
    /// Per budget.
    pub summaries: Vec<NaiveSummary>,
}

/// The strong reference package of a naive one: the built-in operator's
/// sources with the naive `op.toml`, under `out/strong/<op>`.
fn strong_package(
    cfg: &NaiveBenchConfig,
    naive: &OpPackage,
) -> Result<Option<OpPackage>, BenchError> {
    let src = cfg.strong_dir.join(naive.name());
    if !src.join("op_kernel").is_dir() {
        return Ok(None);
    }
    let dst = cfg.out.join("strong").join(naive.name());
    let _ = std::fs::remove_dir_all(&dst);
    for sub in ["op_host", "op_kernel"] {
        copy_dir(&src.join(sub), &dst.join(sub))?;
    }
    let toml = naive.dir.join("op.toml");
    std::fs::copy(&toml, dst.join("op.toml")).map_err(|e| crate::bench::io(&toml, e))?;
    OpPackage::load(&dst, &ascendopt_golden::BUILTINS)
        .map(Some)
        .map_err(|source| BenchError::Operator { path: dst, source })
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), BenchError> {
    ascendopt_op::package::copy_tree(from, to, &[])
        .map_err(|(path, source)| BenchError::Io { path, source })
}

fn bench_config(
    cfg: &NaiveBenchConfig,
    ops: Vec<OpPackage>,
    budget: u32,
    out: PathBuf,
) -> BenchConfig {
    let mut b = BenchConfig::new(vec![BenchMethod::Optimize(Method::Full)], ops, out);
    b.budget = budget;
    b.rewind_budget = 0;
    b.bank_ops = Vec::new();
    b.jobs = cfg.jobs;
    b.seed = cfg.seed;
    b.device = cfg.device;
    b
}

fn find<'a>(outcomes: &'a [OutcomeSummary], op: &str) -> Option<&'a OutcomeSummary> {
    outcomes.iter().find(|o| o.op == op)
}

/// Runs the naive benchmark.
pub fn run_naive_bench(
    cfg: &NaiveBenchConfig,
    device: &dyn ascendopt_device::Device,
    agents: &dyn AgentFactory,
    progress: &(dyn Fn(&BenchEvent) + Sync),
) -> Result<NaiveReport, BenchError> {
    if cfg.ops.is_empty() {
        return Err(BenchError::Config("no naive operator to run".into()));
    }
    if cfg.budgets.iter().any(|&b| b < 2) {
        return Err(BenchError::Config(
            "every budget must be at least 2 (the input's own measurement and one candidate)"
                .into(),
        ));
    }
    std::fs::create_dir_all(&cfg.out).map_err(|e| crate::bench::io(&cfg.out, e))?;
    // The strong references: one measurement each.
    let mut strong = Vec::new();
    for op in &cfg.ops {
        match strong_package(cfg, op)? {
            Some(p) => strong.push(p),
            None => progress(&BenchEvent::Note(format!(
                "{}: no built-in operator of that name in {}: no strong reference",
                op.name(),
                cfg.strong_dir.display()
            ))),
        }
    }
    progress(&BenchEvent::Note("measuring the strong references".into()));
    let strong_report = run_bench(
        &bench_config(cfg, strong, 1, cfg.out.join("strong-runs")),
        device,
        agents,
        progress,
    )?;
    let mut per_budget: Vec<(u32, Vec<OutcomeSummary>)> = Vec::new();
    for &budget in &cfg.budgets {
        progress(&BenchEvent::Note(format!("budget {budget}")));
        let report = run_bench(
            &bench_config(
                cfg,
                cfg.ops.clone(),
                budget,
                cfg.out.join(format!("budget-{budget}")),
            ),
            device,
            agents,
            progress,
        )?;
        per_budget.push((budget, report.results.outcomes));
    }
    let mut rows = Vec::new();
    for op in &cfg.ops {
        let strong_us =
            find(&strong_report.results.outcomes, op.name()).and_then(|o| o.baseline_us);
        let naive_us = per_budget
            .iter()
            .find_map(|(_, outs)| find(outs, op.name()).and_then(|o| o.baseline_us));
        let budgets = per_budget
            .iter()
            .map(|(budget, outs)| {
                let o = find(outs, op.name());
                let final_us = o.and_then(|o| o.final_us);
                let speedup = o.map_or(1.0, |o| o.speedup);
                let (gap, log_gap) = match (naive_us, strong_us, final_us) {
                    (Some(n), Some(s), Some(f)) if n > s && s > 0.0 && f > 0.0 => {
                        (Some((n - f) / (n - s)), Some((n / f).ln() / (n / s).ln()))
                    }
                    _ => (None, None),
                };
                NaiveAtBudget {
                    budget: *budget,
                    final_us,
                    speedup,
                    gap_closed: gap,
                    log_gap_closed: log_gap,
                    spent: o.map_or(0, |o| o.spent),
                    why: o.map(|o| o.why()).unwrap_or_default(),
                }
            })
            .collect();
        rows.push(NaiveRow {
            op: op.name().to_string(),
            naive_us,
            strong_us,
            budgets,
        });
    }
    let summaries = cfg
        .budgets
        .iter()
        .enumerate()
        .map(|(i, &budget)| summarise(&rows, i, budget))
        .collect();
    let report = NaiveReport { rows, summaries };
    let path = cfg.out.join("naive.json");
    let text = serde_json::to_string_pretty(&report).map_err(|e| crate::bench::json(&path, e))?;
    std::fs::write(&path, text).map_err(|e| crate::bench::io(&path, e))?;
    Ok(report)
}

fn gm(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 1.0;
    }
    (values
        .iter()
        .map(|v| v.max(f64::MIN_POSITIVE).ln())
        .sum::<f64>()
        / values.len() as f64)
        .exp()
}

fn summarise(rows: &[NaiveRow], i: usize, budget: u32) -> NaiveSummary {
    let counted: Vec<(&NaiveRow, &NaiveAtBudget)> = rows
        .iter()
        .filter_map(|r| {
            let b = r.budgets.get(i)?;
            (r.naive_us.is_some() && r.strong_us.is_some()).then_some((r, b))
        })
        .collect();
    let speedups: Vec<f64> = counted.iter().map(|(_, b)| b.speedup).collect();
    let strong: Vec<f64> = counted
        .iter()
        .filter_map(|(r, _)| Some(r.naive_us? / r.strong_us?))
        .collect();
    let gaps: Vec<f64> = counted.iter().filter_map(|(_, b)| b.gap_closed).collect();
    let gm_speedup = gm(&speedups);
    let gm_strong = gm(&strong);
    NaiveSummary {
        budget,
        n: counted.len(),
        gm_speedup,
        gm_strong,
        mean_gap_closed: if gaps.is_empty() {
            0.0
        } else {
            gaps.iter().sum::<f64>() / gaps.len() as f64
        },
        gm_gap_closed: if gm_strong > 1.0 {
            gm_speedup.ln() / gm_strong.ln()
        } else {
            0.0
        },
        spent: rows
            .iter()
            .filter_map(|r| r.budgets.get(i))
            .map(|b| b.spent)
            .sum(),
    }
}

impl NaiveReport {
    /// The report as text: one row per operator, a summary per budget, and
    /// why each stage stopped at the largest budget.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let us = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}"));
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{:.0}%", x * 100.0));
        let mut head = format!("{:<18} {:>10} {:>10}", "operator", "naive us", "strong us");
        for b in self.summaries.iter().map(|x| x.budget) {
            let _ = write!(
                head,
                " | {:>9} {:>8} {:>6} {:>5}",
                format!("@{b} us"),
                "speedup",
                "gap",
                "evals"
            );
        }
        let _ = writeln!(s, "{head}");
        for r in &self.rows {
            let mut line = format!(
                "{:<18} {:>10} {:>10}",
                r.op,
                us(r.naive_us),
                us(r.strong_us)
            );
            for b in &r.budgets {
                let _ = write!(
                    line,
                    " | {:>9} {:>7.2}x {:>6} {:>5}",
                    us(b.final_us),
                    b.speedup,
                    pct(b.gap_closed),
                    b.spent
                );
            }
            let _ = writeln!(s, "{line}");
        }
        let _ = writeln!(s);
        for x in &self.summaries {
            let _ = writeln!(
                s,
                "budget {:>4}: GM speedup {:.2}x over {} naive kernels (strong kernels: {:.2}x); gap closed: {:.0}% mean per operator, {:.0}% of the GM log gap; {} evaluations spent",
                x.budget,
                x.gm_speedup,
                x.n,
                x.gm_strong,
                x.mean_gap_closed * 100.0,
                x.gm_gap_closed * 100.0,
                x.spent
            );
        }
        if let Some(last) = self.summaries.last() {
            let _ = writeln!(s, "\nwhy each stage stopped (budget {}):", last.budget);
            let i = self.summaries.len() - 1;
            for r in &self.rows {
                if let Some(b) = r.budgets.get(i) {
                    for w in &b.why {
                        let _ = writeln!(s, "  {}: {w}", r.op);
                    }
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, naive: f64, strong: f64, fin: f64) -> NaiveRow {
        NaiveRow {
            op: op.into(),
            naive_us: Some(naive),
            strong_us: Some(strong),
            budgets: vec![NaiveAtBudget {
                budget: 60,
                final_us: Some(fin),
                speedup: naive / fin,
                gap_closed: Some((naive - fin) / (naive - strong)),
                log_gap_closed: Some((naive / fin).ln() / (naive / strong).ln()),
                spent: 10,
                why: vec!["stage1 (round 1): ...".into()],
            }],
        }
    }

    #[test]
    fn summaries_are_geometric_means_and_gap_shares() {
        let rows = vec![row("a", 100.0, 10.0, 20.0), row("b", 40.0, 10.0, 10.0)];
        let s = summarise(&rows, 0, 60);
        assert_eq!(s.n, 2);
        assert!((s.gm_speedup - (5.0f64 * 4.0).sqrt()).abs() < 1e-9);
        assert!((s.gm_strong - (10.0f64 * 4.0).sqrt()).abs() < 1e-9);
        // (80/90 + 30/30) / 2
        assert!((s.mean_gap_closed - (80.0 / 90.0 + 1.0) / 2.0).abs() < 1e-9);
        assert!((s.gm_gap_closed - 20f64.sqrt().ln() / 40f64.sqrt().ln()).abs() < 1e-9);
        assert_eq!(s.spent, 20);
        let text = NaiveReport {
            rows,
            summaries: vec![s],
        }
        .render();
        assert!(
            text.contains(
                "budget   60: GM speedup 4.47x over 2 naive kernels (strong kernels: 6.32x)"
            ),
            "{text}"
        );
        assert!(text.contains("  a: stage1 (round 1): ..."), "{text}");
    }
}
