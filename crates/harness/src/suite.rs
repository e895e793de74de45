//! The operator-suite table (`ops/README.md`): every operator checked on
//! every case, its largest case profiled without noise, and its latency
//! compared with the roofline floor.
//!
//! Quality bar: every case passes, and every memory-bound operator reaches
//! at least [`ROOFLINE_BAR`] of its roofline on its largest case, or its
//! op.toml says why in a comment line starting with `# roofline:`.

use crate::eval::{check_op, CheckConfig, OpCheck};
use crate::pipeline::bench_case;
use ascendopt_device::Device;
use ascendopt_op::package::OpPackage;
use std::fmt::Write as _;

/// Fraction of the roofline a memory-bound operator must reach.
pub const ROOFLINE_BAR: f64 = 0.70;

/// One operator's row.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteRow {
    /// Operator.
    pub op: String,
    /// Benchmark level.
    pub level: u8,
    /// Dtypes its cases use.
    pub dtypes: Vec<String>,
    /// Cases passed / total.
    pub passed: usize,
    /// Total cases.
    pub cases: usize,
    /// Name and input signature of the largest case.
    pub largest: String,
    /// Simulated latency of the largest case, µs.
    pub latency_us: Option<f64>,
    /// Roofline floor of the largest case, µs.
    pub floor_us: Option<f64>,
    /// Memory-bound (the memory term of the roofline dominates).
    pub memory_bound: bool,
    /// The op.toml's `# roofline:` explanation, if any.
    pub note: Option<String>,
    /// First failure, when a case failed.
    pub failure: Option<String>,
}

impl SuiteRow {
    /// Floor / latency, the fraction of the roofline reached.
    pub fn roofline_fraction(&self) -> Option<f64> {
        match (self.latency_us, self.floor_us) {
            (Some(l), Some(f)) if l > 0.0 => Some(f / l),
            _ => None,
        }
    }

    /// True when the row meets the quality bar.
    pub fn meets_bar(&self) -> bool {
        if self.passed != self.cases || self.failure.is_some() {
            return false;
        }
        match self.roofline_fraction() {
            Some(f) if self.memory_bound && f < ROOFLINE_BAR => self.note.is_some(),
            Some(_) => true,
            None => false,
        }
    }
}

/// The `# roofline:` note of an op.toml.
pub fn roofline_note(package: &OpPackage) -> Option<String> {
    let text = std::fs::read_to_string(package.dir.join("op.toml")).ok()?;
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("# roofline:"))
        .map(|l| l.trim().to_string())
        .reduce(|a, b| format!("{a} {b}"))
}

fn first_failure(check: &OpCheck) -> Option<String> {
    if let Err(e) = &check.build {
        return Some(format!("build: {e}"));
    }
    check.cases.iter().find(|c| !c.verdict.passed()).map(|c| {
        let detail = match &c.verdict {
            crate::eval::CaseVerdict::RunFailed(o) => o.summary(),
            crate::eval::CaseVerdict::GoldenFailed(m) => m.clone(),
            crate::eval::CaseVerdict::Hazard => c
                .run
                .as_ref()
                .and_then(|r| r.hazards.first())
                .map(|h| h.message.clone())
                .unwrap_or_default(),
            _ => c
                .outputs
                .iter()
                .find(|o| !o.report.passed())
                .map(|o| format!("{}: {}", o.name, o.report))
                .unwrap_or_default(),
        };
        format!("{}: {} {}", c.name, c.verdict.label(), detail)
    })
}

/// Checks every case of `package` and profiles its largest case.
pub fn suite_row(device: &dyn Device, package: &OpPackage, seed: u64) -> SuiteRow {
    let cfg = CheckConfig {
        case: None,
        seed,
        profile: true,
        deterministic: true,
        timeline: false,
    };
    let mut dtypes: Vec<String> = package
        .cases()
        .iter()
        .flat_map(|c| c.inputs.iter().map(|i| i.dtype.name().to_string()))
        .collect();
    dtypes.sort();
    dtypes.dedup();
    let largest = bench_case(package);
    let mut row = SuiteRow {
        op: package.name().to_string(),
        level: package.spec.level,
        dtypes,
        passed: 0,
        cases: package.cases().len(),
        largest: largest.map(|c| c.name.clone()).unwrap_or_default(),
        latency_us: None,
        floor_us: None,
        memory_bound: true,
        note: roofline_note(package),
        failure: None,
    };
    let check = match check_op(device, package, &cfg) {
        Ok(c) => c,
        Err(e) => {
            row.failure = Some(e.to_string());
            return row;
        }
    };
    row.passed = check.cases.iter().filter(|c| c.verdict.passed()).count();
    row.failure = first_failure(&check);
    if let Some(c) = check.cases.iter().find(|c| Some(&c.name) == largest.map(|l| &l.name)) {
        if let Some(Ok(profile)) = &c.profile {
            row.latency_us = Some(profile.task_duration_us);
            if let Some(r) = &profile.roofline {
                row.floor_us = Some(r.floor_us);
                row.memory_bound = r.memory_us >= r.compute_us;
            }
        }
    }
    row
}

/// The Markdown of `ops/README.md`.
pub fn render_markdown(rows: &[SuiteRow], command: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Built-in operators\n");
    let _ = writeln!(
        s,
        "Generated by `{command}` — do not edit by hand. Latency is the simulated Ascend 910B2 \
         Task Duration of the largest case (no measurement noise); the roofline floor is the \
         launch head plus the larger of minimum bytes over HBM bandwidth and operations over \
         peak. Memory-bound operators must reach {:.0}% of it, or say why.\n",
        ROOFLINE_BAR * 100.0
    );
    let _ = writeln!(
        s,
        "| operator | level | dtypes | cases passed | largest case | latency (µs) | roofline floor (µs) | of roofline | bound | note |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let pct = r
            .roofline_fraction()
            .map(|f| format!("{:.0}%", f * 100.0))
            .unwrap_or_else(|| "—".into());
        let num = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "—".into());
        let mut note = r.note.clone().unwrap_or_default();
        if let Some(f) = &r.failure {
            note = format!("FAILED {}", f.replace('|', "/").lines().next().unwrap_or(""));
        }
        let _ = writeln!(
            s,
            "| {} | {} | {} | {}/{} | {} | {} | {} | {} | {} | {} |",
            r.op,
            r.level,
            r.dtypes.join(", "),
            r.passed,
            r.cases,
            r.largest,
            num(r.latency_us),
            num(r.floor_us),
            pct,
            if r.memory_bound { "memory" } else { "compute" },
            note
        );
    }
    let meets = rows.iter().filter(|r| r.meets_bar()).count();
    let _ = writeln!(s, "\n{meets} of {} operators meet the quality bar.", rows.len());
    s
}
