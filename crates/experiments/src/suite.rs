//! The operator-suite table (`ops/README.md`): every operator checked on
//! every case, its largest case profiled without noise, and its latency
//! compared with the roofline floor.
//!
//! Quality bar: every case passes; every memory-bound operator reaches at
//! least [`ROOFLINE_BAR`] of its roofline on its largest case, or its op.toml
//! says why in a comment line starting with `# roofline:`; and the launch
//! head is under [`LAUNCH_BAR`] of the largest case's Task Duration (so that
//! the largest case measures the kernel, not the launch).

use ascendopt_device::Device;
use ascendopt_harness::eval::{check_op, CheckConfig, OpCheck};
use ascendopt_harness::pipeline::bench_case;
use ascendopt_op::package::OpPackage;
use std::fmt::Write as _;

/// Fraction of the roofline a memory-bound operator must reach.
pub const ROOFLINE_BAR: f64 = 0.70;

/// Largest share of the largest case's Task Duration the launch head may
/// take.
pub const LAUNCH_BAR: f64 = 0.20;

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
    /// HBM roofline floor of the largest case ([`Roofline::hbm_floor_us`]),
    /// µs.
    ///
    /// [`Roofline::hbm_floor_us`]: ascendopt_device::Roofline::hbm_floor_us
    pub floor_us: Option<f64>,
    /// Launch head of the largest case (part of its latency), µs.
    pub launch_us: Option<f64>,
    /// Memory-bound (the memory term of the roofline dominates).
    pub memory_bound: bool,
    /// The op.toml's `# roofline:` explanation, if any.
    pub note: Option<String>,
    /// The op.toml's `# deviation:` note: where its interface differs from
    /// CANN's.
    pub deviation: Option<String>,
    /// First failure, when a case failed.
    pub failure: Option<String>,
}

impl SuiteRow {
    /// The row of an operator that could not be checked at all (e.g. its
    /// package does not load).
    pub fn failed(op: &str, failure: String) -> SuiteRow {
        SuiteRow {
            op: op.to_string(),
            level: 0,
            dtypes: Vec::new(),
            passed: 0,
            cases: 0,
            largest: String::new(),
            latency_us: None,
            floor_us: None,
            launch_us: None,
            memory_bound: true,
            note: None,
            deviation: None,
            failure: Some(failure),
        }
    }

    /// Floor / latency, the fraction of the roofline reached.
    pub fn roofline_fraction(&self) -> Option<f64> {
        match (self.latency_us, self.floor_us) {
            (Some(l), Some(f)) if l > 0.0 => Some(f / l),
            _ => None,
        }
    }

    /// Launch head / latency of the largest case.
    pub fn launch_share(&self) -> Option<f64> {
        match (self.launch_us, self.latency_us) {
            (Some(h), Some(l)) if l > 0.0 => Some(h / l),
            _ => None,
        }
    }

    /// True when the launch head takes more than [`LAUNCH_BAR`] of the
    /// largest case (or is unknown).
    pub fn launch_dominated(&self) -> bool {
        self.launch_share().is_none_or(|s| s >= LAUNCH_BAR)
    }

    /// True when the row meets the quality bar.
    pub fn meets_bar(&self) -> bool {
        if self.passed != self.cases || self.failure.is_some() || self.launch_dominated() {
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
    toml_note(package, "# roofline:")
}

/// The `# deviation:` note of an op.toml (how its interface differs from
/// CANN's).
pub fn deviation_note(package: &OpPackage) -> Option<String> {
    toml_note(package, "# deviation:")
}

/// The comment lines of an op.toml that start with `prefix`, joined (a long
/// note repeats the prefix on every line).
fn toml_note(package: &OpPackage, prefix: &str) -> Option<String> {
    let text = std::fs::read_to_string(package.dir.join("op.toml")).ok()?;
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(prefix))
        .map(|l| l.trim().to_string())
        .reduce(|a, b| format!("{a} {b}"))
}

fn first_failure(check: &OpCheck) -> Option<String> {
    if let Err(e) = &check.build {
        return Some(format!("build: {e}"));
    }
    check.cases.iter().find(|c| !c.verdict.passed()).map(|c| {
        let detail = match &c.verdict {
            ascendopt_harness::eval::CaseVerdict::RunFailed(o) => o.summary(),
            ascendopt_harness::eval::CaseVerdict::GoldenFailed(m)
            | ascendopt_harness::eval::CaseVerdict::Refused(m) => m.clone(),
            ascendopt_harness::eval::CaseVerdict::Hazard => c
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
        launch_us: None,
        memory_bound: true,
        note: roofline_note(package),
        deviation: deviation_note(package),
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
    if let Some(c) = check
        .cases
        .iter()
        .find(|c| Some(&c.name) == largest.map(|l| &l.name))
    {
        if let Some(Ok(profile)) = &c.profile {
            row.latency_us = Some(profile.task_duration_us);
            row.launch_us = Some(profile.launch_overhead_us);
            if let Some(r) = &profile.roofline {
                // The HBM floor (issue 23): the physical floor, lower when
                // the inputs are resident in L2, is the physics guard's.
                row.floor_us = Some(r.hbm_floor_us);
                row.memory_bound = r.hbm_all_us >= r.compute_us;
            }
        }
    }
    row
}

/// The first line of the generated table's description; a test checks it.
pub const GENERATED_BY: &str = "Generated by";

/// The Markdown of `ops/README.md`: the table, the count of operators that
/// meet the bar, and the documented deviations from CANN.
pub fn render_markdown(rows: &[SuiteRow], command: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Built-in operators\n");
    let _ = writeln!(
        s,
        "{GENERATED_BY} `{command}` — do not edit by hand. Latency is the simulated Ascend 910B2 \
         Task Duration of the largest case (no measurement noise; the kernel's own scalar code \
         is charged, and the 192 MB L2 holds what the previous run of the same launch left, as \
         in a benchmark loop); the roofline floor is the HBM floor, the launch head plus the \
         larger of every input and output byte once over the HBM bandwidth and operations over \
         peak, so a case served from L2 can exceed 100% (the judge's physics guard uses the \
         lower, L2-aware physical floor); launch \
         is the launch head's share of the latency. Quality bar: every case passes; \
         memory-bound operators reach {:.0}% of the roofline, or say why; the launch head is \
         under {:.0}% of the largest case.\n",
        ROOFLINE_BAR * 100.0,
        LAUNCH_BAR * 100.0
    );
    let _ = writeln!(
        s,
        "| operator | level | dtypes | cases passed | largest case | latency (µs) | roofline floor (µs) | of roofline | launch | bound | note |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|");
    let pct = |v: Option<f64>| {
        v.map(|f| format!("{:.0}%", f * 100.0))
            .unwrap_or_else(|| "—".into())
    };
    for r in rows {
        let num = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "—".into());
        let mut note = r.note.clone().unwrap_or_default();
        if let Some(f) = &r.failure {
            note = format!("FAILED {}", f.lines().next().unwrap_or(""));
        } else if r.launch_share().is_some() && r.launch_dominated() {
            note = format!("FAILED launch head over {:.0}%. {note}", LAUNCH_BAR * 100.0);
        } else if !r.meets_bar() {
            note = format!("FAILED below the roofline bar. {note}");
        }
        let _ = writeln!(
            s,
            "| {} | {} | {} | {}/{} | {} | {} | {} | {} | {} | {} | {} |",
            r.op,
            r.level,
            r.dtypes.join(", "),
            r.passed,
            r.cases,
            r.largest,
            num(r.latency_us),
            num(r.floor_us),
            pct(r.roofline_fraction()),
            pct(r.launch_share()),
            if r.memory_bound { "memory" } else { "compute" },
            note.trim().replace('|', "/")
        );
    }
    let meets = rows.iter().filter(|r| r.meets_bar()).count();
    let _ = writeln!(
        s,
        "\n{meets} of {} operators meet the quality bar.",
        rows.len()
    );
    let deviations: Vec<&SuiteRow> = rows.iter().filter(|r| r.deviation.is_some()).collect();
    if !deviations.is_empty() {
        let _ = writeln!(s, "\n## Deviations from CANN\n");
        for r in deviations {
            let _ = writeln!(s, "- {}: {}", r.op, r.deviation.as_deref().unwrap_or(""));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn row(latency: f64, floor: f64, launch: f64, note: Option<&str>) -> SuiteRow {
        SuiteRow {
            op: "op".into(),
            level: 1,
            dtypes: vec!["float16".into()],
            passed: 3,
            cases: 3,
            largest: "large".into(),
            latency_us: Some(latency),
            floor_us: Some(floor),
            launch_us: Some(launch),
            memory_bound: true,
            note: note.map(str::to_string),
            deviation: None,
            failure: None,
        }
    }

    #[test]
    fn the_bar_needs_the_roofline_and_a_small_launch_share() {
        let good = row(100.0, 80.0, 19.0, None);
        assert!(good.meets_bar());
        assert!((good.launch_share().unwrap() - 0.19).abs() < 1e-12);
        // Launch head at 20% or more fails, whatever the note says.
        assert!(!row(100.0, 80.0, 20.0, None).meets_bar());
        assert!(!row(100.0, 80.0, 30.0, Some("why")).meets_bar());
        // Below the roofline bar: fails without a note, passes with one.
        assert!(!row(100.0, 60.0, 10.0, None).meets_bar());
        assert!(row(100.0, 60.0, 10.0, Some("vector-bound")).meets_bar());
        // A failed case fails the row.
        let mut failed = row(100.0, 80.0, 10.0, None);
        failed.passed = 2;
        assert!(!failed.meets_bar());
        assert!(!SuiteRow::failed("x", "does not load".into()).meets_bar());
    }

    #[test]
    fn the_table_shows_the_launch_share_and_flags_failures() {
        let mut launchy = row(50.0, 40.0, 20.5, None);
        launchy.op = "launchy".into();
        let mut deviating = row(100.0, 80.0, 18.0, None);
        deviating.op = "deviating".into();
        deviating.deviation = Some("takes pads as an attribute".into());
        let md = render_markdown(&[row(100.0, 80.0, 18.0, None), launchy, deviating], "cmd");
        expect![[r#"
            # Built-in operators

            Generated by `cmd` — do not edit by hand. Latency is the simulated Ascend 910B2 Task Duration of the largest case (no measurement noise; the kernel's own scalar code is charged, and the 192 MB L2 holds what the previous run of the same launch left, as in a benchmark loop); the roofline floor is the HBM floor, the launch head plus the larger of every input and output byte once over the HBM bandwidth and operations over peak, so a case served from L2 can exceed 100% (the judge's physics guard uses the lower, L2-aware physical floor); launch is the launch head's share of the latency. Quality bar: every case passes; memory-bound operators reach 70% of the roofline, or say why; the launch head is under 20% of the largest case.

            | operator | level | dtypes | cases passed | largest case | latency (µs) | roofline floor (µs) | of roofline | launch | bound | note |
            |---|---|---|---|---|---|---|---|---|---|---|
            | op | 1 | float16 | 3/3 | large | 100.0 | 80.0 | 80% | 18% | memory |  |
            | launchy | 1 | float16 | 3/3 | large | 50.0 | 40.0 | 80% | 41% | memory | FAILED launch head over 20%. |
            | deviating | 1 | float16 | 3/3 | large | 100.0 | 80.0 | 80% | 18% | memory |  |

            2 of 3 operators meet the quality bar.

            ## Deviations from CANN

            - deviating: takes pads as an attribute
        "#]].assert_eq(&md);
    }
}
