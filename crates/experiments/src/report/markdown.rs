//! `report.md`: the method's Table 2 (GM and fast_p by level and method)
//! and Table 3 (by method over every operator), then one row per method ×
//! operator. Every number is formatted by the functions here
//! ([`fmt_gm`], [`fmt_pct`], [`fmt_us`], [`fmt_frac`]) so a reader of
//! results.json can reproduce the text exactly.

use crate::report::results::Results;
use crate::report::stats::{GroupStats, FAST_P};
use std::fmt::Write as _;

/// A GM or speedup: three decimals (`1.213`), `-` when absent.
pub fn fmt_gm(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.3}"),
        _ => "-".into(),
    }
}

/// A share as a percentage with two decimals (`18.81`).
pub fn fmt_pct(share: f64) -> String {
    format!("{:.2}", share * 100.0)
}

/// A latency in µs with two decimals, `-` when absent.
pub fn fmt_us(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.2}"),
        _ => "-".into(),
    }
}

/// A roofline fraction as a percentage with one decimal, `-` when absent.
pub fn fmt_frac(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{:.1}", v * 100.0),
        _ => "-".into(),
    }
}

/// The fast_p column headers (`fast1.0`, `fast1.2`, ...).
pub fn fast_headers() -> Vec<String> {
    FAST_P.iter().map(|p| format!("fast{p:.1}")).collect()
}

fn stats_cells(s: &GroupStats) -> Vec<String> {
    let mut cells = vec![s.n.to_string(), fmt_gm(s.gm)];
    cells.extend(FAST_P.iter().map(|&p| fmt_pct(s.fast_at(p))));
    cells
}

fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

fn header(cells: &[&str]) -> String {
    let owned: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
    let sep: Vec<String> = cells.iter().map(|_| "---".to_string()).collect();
    format!("{}\n{}", row(&owned), row(&sep))
}

fn escape_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown report.
pub fn render(results: &Results) -> String {
    let m = &results.meta;
    let mut s = String::new();
    let _ = writeln!(s, "# ascendopt benchmark report\n");
    let _ = writeln!(
        s,
        "{} on {}. Methods: {}. Budget: {} evaluations per operator and method, all stages together{}. \
         Operators evaluated: {} ({}). Bank: {} entries built by Rewind on {} operator(s) \
         ({} setting). Seed {}{}.\n",
        if m.tool.is_empty() {
            "ascendopt"
        } else {
            &m.tool
        },
        if m.device.is_empty() {
            "the simulator"
        } else {
            &m.device
        },
        m.methods.join(", "),
        m.budget,
        if m.rewind_budget > 0 {
            format!(
                " (methods that use the bank spend {} of them on Rewind)",
                m.rewind_budget
            )
        } else {
            String::new()
        },
        m.eval_ops.len(),
        m.eval_ops.join(", "),
        m.bank_entries,
        m.bank_ops.len(),
        if m.setting.is_empty() {
            "-"
        } else {
            &m.setting
        },
        m.seed,
        if m.deterministic {
            ", no measurement noise"
        } else {
            ""
        },
    );
    let _ = writeln!(
        s,
        "speedup = baseline latency / final latency (1.0 when nothing beat the input); \
         GM = geometric mean of the speedups; fast_p = share (%) of operators whose final \
         kernel is correct and strictly faster than p × the input (fast1.0 = share strictly \
         faster).\n"
    );
    for note in &m.notes {
        let _ = writeln!(s, "> Note: {note}\n");
    }
    for (method, why) in &m.skipped {
        let _ = writeln!(s, "> Skipped method `{method}`: {why}\n");
    }

    let fast = fast_headers();
    // Table 2.
    let _ = writeln!(s, "## By level and method (Table 2)\n");
    let mut h = vec!["Level", "Method", "n", "GM"];
    h.extend(fast.iter().map(String::as_str));
    let _ = writeln!(s, "{}", header(&h));
    for r in &results.tables.by_level {
        let mut cells = vec![r.level.clone(), r.method.clone()];
        cells.extend(stats_cells(&r.stats));
        let _ = writeln!(s, "{}", row(&cells));
    }
    let _ = writeln!(s);

    // Table 3.
    let _ = writeln!(s, "## By method, every operator (Table 3)\n");
    let mut h = vec!["Method", "n", "GM"];
    h.extend(fast.iter().map(String::as_str));
    let _ = writeln!(s, "{}", header(&h));
    for r in &results.tables.by_method {
        let mut cells = vec![r.method.clone()];
        cells.extend(stats_cells(&r.stats));
        let _ = writeln!(s, "{}", row(&cells));
    }
    let _ = writeln!(s);

    // Per operator.
    let _ = writeln!(s, "## Per operator\n");
    let _ = writeln!(
        s,
        "{}",
        header(&[
            "Operator",
            "Level",
            "Method",
            "Baseline us",
            "Final us",
            "Speedup",
            "Evaluations",
            "Roofline before %",
            "Roofline after %",
            "Steps",
        ])
    );
    for o in &results.outcomes {
        let steps = match &o.error {
            Some(e) => format!("error: {}", escape_cell(e)),
            None => o.steps.len().to_string(),
        };
        let cells = vec![
            o.op.clone(),
            format!("L{}", o.level),
            o.method.clone(),
            fmt_us(o.baseline_us),
            fmt_us(o.final_us),
            fmt_gm(Some(o.speedup)),
            format!("{}/{}", o.spent, o.budget),
            fmt_frac(o.roofline_before),
            fmt_frac(o.roofline_after),
            steps,
        ];
        let _ = writeln!(s, "{}", row(&cells));
    }
    let _ = writeln!(s);

    // Accepted steps.
    let with_steps: Vec<_> = results
        .outcomes
        .iter()
        .filter(|o| !o.steps.is_empty())
        .collect();
    if !with_steps.is_empty() {
        let _ = writeln!(s, "## Accepted steps\n");
        for o in with_steps {
            let _ = writeln!(s, "- **{} / {}**", o.method, o.op);
            for st in &o.steps {
                let _ = writeln!(
                    s,
                    "  - eval {} ({}): {} — {} → {} us",
                    st.at_evaluation,
                    st.phase,
                    st.summary.replace('\n', " "),
                    fmt_us(Some(st.before_us)),
                    fmt_us(Some(st.after_us)),
                );
            }
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "Files: `results.json` (every number above), `report.html` (charts), `bank.jsonl` (the \
         experience bank), `ops/<method>/<op>/` (optimised packages with before/after traces)."
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt_gm(Some(1.21449)), "1.214");
        assert_eq!(fmt_gm(None), "-");
        assert_eq!(fmt_pct(0.188118), "18.81");
        assert_eq!(fmt_pct(0.0), "0.00");
        assert_eq!(fmt_us(Some(12.346)), "12.35");
        assert_eq!(fmt_frac(Some(0.7234)), "72.3");
        assert_eq!(fast_headers()[0], "fast1.0");
        assert_eq!(fast_headers()[4], "fast2.0");
    }
}
