//! `report.html`: one self-contained page (inline CSS and SVG, no scripts,
//! no external assets) with four chart sections, each holding exactly one
//! SVG chart whose data points are carried as attributes (see
//! [`super::svg`]), then the Table 2/3 tables and the per-operator table.
//!
//! Chart sections (`<section class="chart-section" id=..>`):
//! - [`GM_BY_LEVEL`]: bars, groups = levels then `all`, series = methods,
//!   value = GM;
//! - [`GM_VS_EVALS`]: lines, one per method, points = results.json curves;
//! - [`PER_OPERATOR`]: bars, groups = operators, series = methods, value =
//!   speedup;
//! - [`ROOFLINE`]: bars, groups = operators, series = `before` then
//!   `after <method>`, value = roofline fraction (0..1).
//!
//! The page is well-formed XML (XHTML syntax) so that it parses with a
//! strict parser.

use crate::report::markdown::{fast_headers, fmt_frac, fmt_gm, fmt_pct, fmt_us};
use crate::report::results::Results;
use crate::report::stats::{GroupStats, FAST_P};
use crate::report::svg::{esc, Bars, Lines};
use std::fmt::Write as _;

/// Section id: GM by level and method.
pub const GM_BY_LEVEL: &str = "gm-by-level";
/// Section id: GM against evaluations spent.
pub const GM_VS_EVALS: &str = "gm-vs-evaluations";
/// Section id: per-operator speedups.
pub const PER_OPERATOR: &str = "per-operator";
/// Section id: roofline fraction before and after.
pub const ROOFLINE: &str = "roofline";

/// The charts of a report, in page order.
pub fn charts(results: &Results) -> (Bars, Lines, Bars, Bars) {
    let methods = results.methods();
    let ops = results.operators();

    let mut groups: Vec<String> = Vec::new();
    for r in &results.tables.by_level {
        if !groups.contains(&r.level) {
            groups.push(r.level.clone());
        }
    }
    let mut values: Vec<Vec<Option<f64>>> = groups
        .iter()
        .map(|g| {
            methods
                .iter()
                .map(|m| {
                    results
                        .tables
                        .by_level
                        .iter()
                        .find(|r| &r.level == g && &r.method == m)
                        .and_then(|r| r.stats.gm)
                })
                .collect()
        })
        .collect();
    groups.push("all".into());
    values.push(
        methods
            .iter()
            .map(|m| {
                results
                    .tables
                    .by_method
                    .iter()
                    .find(|r| &r.method == m)
                    .and_then(|r| r.stats.gm)
            })
            .collect(),
    );
    let gm = Bars {
        id: GM_BY_LEVEL.into(),
        title: "Geometric-mean speedup by level and method".into(),
        y_label: "GM speedup".into(),
        groups,
        series: methods.clone(),
        values,
        reference: Some(1.0),
    };

    let curve = Lines {
        id: GM_VS_EVALS.into(),
        title: "Geometric-mean speedup against online evaluations spent".into(),
        x_label: "evaluations per operator".into(),
        y_label: "GM speedup (best so far)".into(),
        series: results
            .curves
            .iter()
            .map(|c| {
                (
                    c.method.clone(),
                    c.points.iter().map(|(x, y)| (*x as f64, *y)).collect(),
                )
            })
            .collect(),
    };

    let per_op = Bars {
        id: PER_OPERATOR.into(),
        title: "Speedup per operator".into(),
        y_label: "speedup".into(),
        groups: ops.iter().map(|(_, op)| op.clone()).collect(),
        series: methods.clone(),
        values: ops
            .iter()
            .map(|(_, op)| {
                methods
                    .iter()
                    .map(|m| results.outcome(m, op).map(|o| o.speedup))
                    .collect()
            })
            .collect(),
        reference: Some(1.0),
    };

    let mut series = vec!["before".to_string()];
    series.extend(methods.iter().map(|m| format!("after {m}")));
    let roof = Bars {
        id: ROOFLINE.into(),
        title: "Roofline fraction reached, input and output".into(),
        y_label: "fraction of roofline".into(),
        groups: ops.iter().map(|(_, op)| op.clone()).collect(),
        series,
        values: ops
            .iter()
            .map(|(_, op)| {
                let before = methods
                    .iter()
                    .find_map(|m| results.outcome(m, op).and_then(|o| o.roofline_before));
                let mut row = vec![before];
                row.extend(
                    methods
                        .iter()
                        .map(|m| results.outcome(m, op).and_then(|o| o.roofline_after)),
                );
                row
            })
            .collect(),
        reference: Some(1.0),
    };
    (gm, curve, per_op, roof)
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}section{margin:2em 0}.chart{overflow:visible}\
.note{background:#fff8e0;border-left:4px solid #e6b800;padding:4px 10px}.scroll{overflow-x:auto}";

fn stats_cells(s: &GroupStats) -> String {
    let mut out = format!("<td>{}</td><td>{}</td>", s.n, fmt_gm(s.gm));
    for p in FAST_P {
        let _ = write!(out, "<td>{}</td>", fmt_pct(s.fast_at(p)));
    }
    out
}

fn link(path: &Option<String>, label: &str) -> String {
    match path {
        Some(p) => format!(r#"<a href="{}">{}</a>"#, esc(p), esc(label)),
        None => "-".into(),
    }
}

/// The HTML page.
pub fn render(results: &Results) -> String {
    let m = &results.meta;
    let (gm, curve, per_op, roof) = charts(results);
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n");
    s.push_str(
        r#"<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8"/>"#,
    );
    s.push_str("<title>ascendopt benchmark report</title>");
    let _ = write!(s, "<style>{CSS}</style></head><body>");
    s.push_str("<h1>ascendopt benchmark report</h1>");
    let _ = write!(
        s,
        "<p>{} on {}. Methods: {}. Budget: {} evaluations per operator and method, all stages together \
         (methods that use the bank spend {} of them on Rewind). Operators: {}. Bank: {} entries from {} operator(s) ({} setting). Seed {}{}.</p>",
        esc(&m.tool),
        esc(&m.device),
        esc(&m.methods.join(", ")),
        m.budget,
        m.rewind_budget,
        esc(&m.eval_ops.join(", ")),
        m.bank_entries,
        m.bank_ops.len(),
        esc(&m.setting),
        m.seed,
        if m.deterministic {
            ", no measurement noise"
        } else {
            ""
        },
    );
    s.push_str(
        "<p>speedup = baseline latency / final latency (1.0 when nothing beat the input); \
         GM = geometric mean of the speedups; fast_p = share (%) of operators whose final \
         kernel is correct and strictly faster than p times the input.</p>",
    );
    for note in &m.notes {
        let _ = write!(s, r#"<p class="note">{}</p>"#, esc(note));
    }
    for (method, why) in &m.skipped {
        let _ = write!(
            s,
            r#"<p class="note">Skipped method <code>{}</code>: {}</p>"#,
            esc(method),
            esc(why)
        );
    }
    for (id, heading, svg) in [
        (GM_BY_LEVEL, gm.title.clone(), gm.render()),
        (GM_VS_EVALS, curve.title.clone(), curve.render()),
        (PER_OPERATOR, per_op.title.clone(), per_op.render()),
        (ROOFLINE, roof.title.clone(), roof.render()),
    ] {
        let _ = write!(
            s,
            r#"<section class="chart-section" id="{id}"><h2>{}</h2><div class="scroll">{svg}</div></section>"#,
            esc(&heading)
        );
    }

    let fast: String = fast_headers()
        .iter()
        .map(|h| format!("<th>{}</th>", esc(h)))
        .collect();
    s.push_str(r#"<section id="table-2"><h2>By level and method (Table 2)</h2><table>"#);
    let _ = write!(
        s,
        "<tr><th>Level</th><th>Method</th><th>n</th><th>GM</th>{fast}</tr>"
    );
    for r in &results.tables.by_level {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td>{}</tr>",
            esc(&r.level),
            esc(&r.method),
            stats_cells(&r.stats)
        );
    }
    s.push_str("</table></section>");
    s.push_str(r#"<section id="table-3"><h2>By method, every operator (Table 3)</h2><table>"#);
    let _ = write!(s, "<tr><th>Method</th><th>n</th><th>GM</th>{fast}</tr>");
    for r in &results.tables.by_method {
        let _ = write!(
            s,
            "<tr><td>{}</td>{}</tr>",
            esc(&r.method),
            stats_cells(&r.stats)
        );
    }
    s.push_str("</table></section>");

    s.push_str(r#"<section id="operators"><h2>Per operator</h2><div class="scroll"><table>"#);
    s.push_str(
        "<tr><th>Operator</th><th>Level</th><th>Method</th><th>Baseline us</th><th>Final us</th>\
         <th>Speedup</th><th>Evaluations</th><th>Roofline before %</th><th>Roofline after %</th>\
         <th>Package</th><th>Trace before</th><th>Trace after</th><th>Steps</th></tr>",
    );
    for o in &results.outcomes {
        let steps: String = match &o.error {
            Some(e) => format!("error: {}", esc(e)),
            None => o
                .steps
                .iter()
                .map(|st| {
                    format!(
                        "{} @{}: {} ({} → {} us)",
                        esc(&st.phase),
                        st.at_evaluation,
                        esc(&st.summary),
                        fmt_us(Some(st.before_us)),
                        fmt_us(Some(st.after_us))
                    )
                })
                .collect::<Vec<_>>()
                .join("<br/>"),
        };
        let _ = write!(
            s,
            "<tr><td>{}</td><td>L{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td style=\"text-align:left\">{}</td></tr>",
            esc(&o.op),
            o.level,
            esc(&o.method),
            fmt_us(o.baseline_us),
            fmt_us(o.final_us),
            fmt_gm(Some(o.speedup)),
            o.spent,
            o.budget,
            fmt_frac(o.roofline_before),
            fmt_frac(o.roofline_after),
            link(&o.package, "package"),
            link(&o.trace_before, "before"),
            link(&o.trace_after, "after"),
            steps,
        );
    }
    s.push_str("</table></div></section>");
    s.push_str(
        "<p>Traces are Chrome trace files: open them in chrome://tracing or ui.perfetto.dev. \
         Every number on this page is in results.json.</p>",
    );
    s.push_str("</body></html>\n");
    s
}
