//! `report.html`: one self-contained page (inline CSS and SVG, no scripts,
//! no external assets) as wide as the window:
//!
//! - `#about`: about this run (tool version, device, methods, budget,
//!   operators, bank, seed, noise, wall time, LLM usage);
//! - four chart sections (`<section class="chart-section" id=..>`), each
//!   holding exactly one SVG chart whose data points are carried as
//!   attributes (see [`super::svg`]):
//!   - [`GM_BY_LEVEL`]: bars, groups = levels then `all`, series = methods,
//!     value = GM, growing from 1.0;
//!   - [`GM_VS_EVALS`]: step lines, one per method, points = results.json
//!     curves (x up to the evaluations actually spent);
//!   - [`PER_OPERATOR`]: bars, groups = operators, series = methods, value
//!     = speedup, growing from 1.0;
//!   - [`ROOFLINE`]: bars, groups = operators, series = `before` then
//!     `after <method>`, value = roofline fraction (0..1);
//! - the Table 2/3 tables and the per-operator table (cells wrap);
//! - `#details`: per method × operator, the accepted change (the diff,
//!   read from the report folder) beside the before/after profile of the
//!   benchmark case (pipe ratios of the slowest block as a bar chart,
//!   `data-chart="pipes-<method>-<op>"`), with links to the package, the
//!   diff, the traces and msprof's CSV files.
//!
//! The page is well-formed XML (XHTML syntax) so that it parses with a
//! strict parser.

use crate::report::markdown::{fast_headers, fmt_frac, fmt_gm, fmt_pct, fmt_us};
use crate::report::results::{OutcomeSummary, ProfileBrief, Results};
use crate::report::stats::{GroupStats, FAST_P};
use crate::report::svg::{esc, Bars, Label, Lines, WIDTH};
use std::fmt::Write as _;
use std::path::Path;

/// Section id: GM by level and method.
pub const GM_BY_LEVEL: &str = "gm-by-level";
/// Section id: GM against evaluations spent.
pub const GM_VS_EVALS: &str = "gm-vs-evaluations";
/// Section id: per-operator speedups.
pub const PER_OPERATOR: &str = "per-operator";
/// Section id: roofline fraction before and after.
pub const ROOFLINE: &str = "roofline";

/// Lines of a diff shown inline (the rest is one link away).
const DIFF_LINES: usize = 400;

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
        y_label: "GM speedup (1.0 = the input kernel)".into(),
        groups,
        series: methods.clone(),
        values,
        base: 1.0,
        reference: Some(1.0),
        label: Label::Plain,
        width: WIDTH,
    };

    let curve = Lines {
        id: GM_VS_EVALS.into(),
        title: "Geometric-mean speedup against online evaluations spent".into(),
        x_label: "evaluations spent per operator".into(),
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
        reference: Some(1.0),
    };

    let per_op = Bars {
        id: PER_OPERATOR.into(),
        title: "Speedup per operator".into(),
        y_label: "speedup (1.0 = the input kernel)".into(),
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
        base: 1.0,
        reference: Some(1.0),
        label: Label::Times,
        width: WIDTH,
    };

    let mut series = vec!["before".to_string()];
    series.extend(methods.iter().map(|m| format!("after {m}")));
    let roof = Bars {
        id: ROOFLINE.into(),
        title: "Roofline fraction reached, input and output".into(),
        y_label: "share of the roofline floor reached".into(),
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
        base: 0.0,
        reference: Some(1.0),
        label: Label::Percent,
        width: WIDTH,
    };
    (gm, curve, per_op, roof)
}

/// The pipe-ratio chart of one outcome: groups = msprof ratio names,
/// series = `before`, `after`.
pub fn pipes_chart(o: &OutcomeSummary) -> Option<Bars> {
    let before = o.profile_before.as_ref();
    let after = o.profile_after.as_ref();
    let names: Vec<String> = before
        .or(after)?
        .ratios
        .iter()
        .map(|r| r.0.clone())
        .collect();
    let get = |p: Option<&ProfileBrief>, name: &str| {
        p.and_then(|p| p.ratios.iter().find(|r| r.0 == name).map(|r| r.1))
    };
    Some(Bars {
        id: format!("pipes-{}-{}", o.method, o.op),
        title: format!(
            "{} ({}): pipe busy ratios of the slowest block",
            o.op, o.method
        ),
        y_label: "busy ratio (msprof PipeUtilization)".into(),
        values: names
            .iter()
            .map(|n| vec![get(before, n), get(after, n)])
            .collect(),
        groups: names,
        series: vec!["before".into(), "after".into()],
        base: 0.0,
        reference: None,
        label: Label::Percent,
        width: 600.0,
    })
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1em 2em;color:#222;line-height:1.4}\
h1{margin-top:0}table{border-collapse:collapse;margin:1em 0;width:100%}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;vertical-align:top;overflow-wrap:break-word}\
td:first-child,th:first-child{text-align:left}td.text{text-align:left}\
section{margin:1.5em 0}svg.chart{display:block;max-width:100%;height:auto}\
.note{background:#fff8e0;border-left:4px solid #e6b800;padding:4px 10px}\
dl.about{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 1.5em}\
dl.about dt{font-weight:600}dl.about dd{margin:0;overflow-wrap:anywhere}\
.side{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1.5em}\
@media (max-width:900px){.side{grid-template-columns:minmax(0,1fr)}}\
pre.diff{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;padding:6px;max-height:40em;overflow-y:auto;font-size:12px}\
.add{color:#075e07}.del{color:#a00}.hunk{color:#555}\
section.operator{border-top:1px solid #ddd;padding-top:.5em}";

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

fn clock(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn about(s: &mut String, results: &Results) {
    let m = &results.meta;
    let row = |s: &mut String, k: &str, v: String| {
        let _ = write!(s, "<dt>{}</dt><dd>{v}</dd>", esc(k));
    };
    s.push_str(r#"<section id="about"><h2>About this run</h2><dl class="about">"#);
    row(
        s,
        "version",
        esc(if m.tool.is_empty() {
            "ascendopt"
        } else {
            &m.tool
        }),
    );
    row(
        s,
        "device",
        esc(if m.device.is_empty() { "-" } else { &m.device }),
    );
    row(s, "methods", esc(&m.methods.join(", ")));
    row(
        s,
        "budget",
        format!(
            "{} evaluations per operator and method, all stages together{}",
            m.budget,
            if m.rewind_budget > 0 {
                format!(
                    " (methods that use the bank spend {} of them on Rewind)",
                    m.rewind_budget
                )
            } else {
                String::new()
            }
        ),
    );
    row(
        s,
        "operators",
        format!("{}: {}", m.eval_ops.len(), esc(&m.eval_ops.join(", "))),
    );
    row(
        s,
        "bank",
        if m.bank_entries == 0 && m.bank_ops.is_empty() {
            "none".to_string()
        } else {
            format!(
                "{} entries learnt by Rewind on {} operator(s) ({}), {} setting{}",
                m.bank_entries,
                m.bank_ops.len(),
                esc(&m.bank_ops.join(", ")),
                esc(&m.setting),
                m.bank_file
                    .as_ref()
                    .map(|f| format!(", file {}", link(&Some(f.clone()), f)))
                    .unwrap_or_default()
            )
        },
    );
    row(s, "seed", m.seed.to_string());
    row(
        s,
        "measurement noise",
        if m.deterministic {
            "off"
        } else {
            "on (the simulator's default)"
        }
        .into(),
    );
    row(
        s,
        "wall time",
        match m.wall_seconds {
            Some(w) => format!(
                "{}{}",
                clock(w),
                if m.resumed {
                    " (this invocation, which resumed an earlier one)"
                } else {
                    ""
                }
            ),
            None => "-".into(),
        },
    );
    for u in &m.llm_usage {
        row(
            s,
            &format!("LLM ({})", u.method),
            format!(
                "{} requests, {} prompt + {} completion tokens, {} embedding tokens{}",
                u.requests,
                u.prompt_tokens,
                u.completion_tokens,
                u.embedding_tokens,
                u.cost.map(|c| format!(", cost {c:.4}")).unwrap_or_default()
            ),
        );
    }
    s.push_str("</dl></section>");
}

fn diff_html(text: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for l in lines.iter().take(DIFF_LINES) {
        let class = if l.starts_with("+++") || l.starts_with("---") {
            "hunk"
        } else if l.starts_with('+') {
            "add"
        } else if l.starts_with('-') {
            "del"
        } else if l.starts_with("@@") {
            "hunk"
        } else {
            ""
        };
        if class.is_empty() {
            let _ = writeln!(out, "{}", esc(l));
        } else {
            let _ = writeln!(out, r#"<span class="{class}">{}</span>"#, esc(l));
        }
    }
    if lines.len() > DIFF_LINES {
        let _ = writeln!(out, "... {} more lines", lines.len() - DIFF_LINES);
    }
    out
}

/// One row of the profile table: the field's name and how a profile
/// shows it.
type ProfileRow = (&'static str, fn(&ProfileBrief) -> String);

fn profile_table(o: &OutcomeSummary) -> String {
    let (b, a) = (o.profile_before.as_ref(), o.profile_after.as_ref());
    let cell = |p: Option<&ProfileBrief>, f: fn(&ProfileBrief) -> String| {
        p.map_or_else(|| "-".to_string(), f)
    };
    let mut s = String::from(
        "<table class=\"profile\"><tr><th>msprof field</th><th>before</th><th>after</th></tr>",
    );
    let rows: [ProfileRow; 4] = [
        ("Task Duration(us)", |p| {
            format!("{:.3}", p.task_duration_us)
        }),
        ("Block Dim", |p| p.block_dim.to_string()),
        ("Op Type", |p| esc(&p.op_type)),
        ("achieved GB/s", |p| format!("{:.1}", p.achieved_gbps)),
    ];
    for (name, f) in rows {
        let _ = write!(
            s,
            "<tr><td>{name}</td><td>{}</td><td>{}</td></tr>",
            cell(b, f),
            cell(a, f)
        );
    }
    s.push_str("</table>");
    s
}

fn details(s: &mut String, results: &Results, dir: Option<&Path>) {
    s.push_str(r#"<section id="details"><h2>Per operator: the accepted change and the profile before and after</h2>"#);
    for o in &results.outcomes {
        let _ = write!(
            s,
            r#"<section class="operator" id="op-{m}-{op}"><h3>{op} ({m}): {sp}x, {b} → {f} us, {spent}/{budget} evaluations</h3>"#,
            m = esc(&o.method),
            op = esc(&o.op),
            sp = fmt_gm(Some(o.speedup)),
            b = fmt_us(o.baseline_us),
            f = fmt_us(o.final_us),
            spent = o.spent,
            budget = o.budget,
        );
        if let Some(e) = &o.error {
            let _ = write!(s, r#"<p class="note">error: {}</p>"#, esc(e));
        }
        let folder = o.package.as_ref().and_then(|p| {
            Path::new(p)
                .parent()
                .map(|d| d.to_string_lossy().replace('\\', "/"))
        });
        let msprof = |side: &str| {
            folder
                .as_ref()
                .map(|d| format!("{d}/{side}/PipeUtilization.csv"))
        };
        let _ = write!(
            s,
            "<p>{} · {} · trace {} / {} · msprof {} / {}</p>",
            link(&o.package, "optimised package"),
            link(&o.diff, "changes.diff"),
            link(&o.trace_before, "before"),
            link(&o.trace_after, "after"),
            link(&msprof("before"), "before"),
            link(&msprof("after"), "after"),
        );
        s.push_str(r#"<div class="side"><div class="change"><h4>Accepted change</h4>"#);
        let text = match (dir, &o.diff) {
            (Some(d), Some(rel)) => std::fs::read_to_string(d.join(rel)).ok(),
            _ => None,
        };
        match text {
            Some(t) if !t.trim().is_empty() => {
                let _ = write!(s, r#"<pre class="diff">{}</pre>"#, diff_html(&t));
            }
            Some(_) => s.push_str("<p>No change was accepted: the output is the input.</p>"),
            None => s.push_str("<p>No diff recorded.</p>"),
        }
        if !o.steps.is_empty() {
            s.push_str("<ol class=\"steps\">");
            for st in &o.steps {
                let _ = write!(
                    s,
                    "<li>{} at evaluation {}: {} ({} → {} us)</li>",
                    esc(&st.phase),
                    st.at_evaluation,
                    esc(&st.summary),
                    fmt_us(Some(st.before_us)),
                    fmt_us(Some(st.after_us))
                );
            }
            s.push_str("</ol>");
        }
        s.push_str(r#"</div><div class="profile"><h4>Profile of the benchmark case, before and after</h4>"#);
        if o.profile_before.is_some() || o.profile_after.is_some() {
            s.push_str(&profile_table(o));
        }
        match pipes_chart(o) {
            Some(chart) => s.push_str(&chart.render()),
            None => s.push_str("<p>No profile recorded.</p>"),
        }
        s.push_str("</div></div></section>");
    }
    s.push_str("</section>");
}

/// The HTML page; diffs are read from `dir` (the report folder; None: not
/// shown).
pub fn render(results: &Results, dir: Option<&Path>) -> String {
    let m = &results.meta;
    let (gm, curve, per_op, roof) = charts(results);
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n");
    s.push_str(
        r#"<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/>"#,
    );
    s.push_str("<title>ascendopt benchmark report</title>");
    let _ = write!(s, "<style>{CSS}</style></head><body>");
    s.push_str("<h1>ascendopt benchmark report</h1>");
    about(&mut s, results);
    s.push_str(
        "<p>speedup = baseline latency / final latency (1.0 when nothing beat the input); \
         GM = geometric mean of the speedups; fast_p = share (%) of operators whose final \
         kernel is correct and strictly faster than p times the input. Speedup charts grow \
         from 1.0 (the red dashed line).</p>",
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
            r#"<section class="chart-section" id="{id}"><h2>{}</h2>{svg}</section>"#,
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

    s.push_str(r#"<section id="operators"><h2>Per operator</h2><table>"#);
    s.push_str(
        "<tr><th>Operator</th><th>Level</th><th>Method</th><th>Baseline us</th><th>Final us</th>\
         <th>Speedup</th><th>Evaluations</th><th>Roofline before %</th><th>Roofline after %</th>\
         <th>Links</th><th>Steps</th></tr>",
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
            "<tr><td><a href=\"#op-{m}-{op}\">{op}</a></td><td>L{}</td><td>{m}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td>\
             <td>{}</td><td>{}</td><td class=\"text\">{} {} {}</td><td class=\"text\">{}</td></tr>",
            o.level,
            fmt_us(o.baseline_us),
            fmt_us(o.final_us),
            fmt_gm(Some(o.speedup)),
            o.spent,
            o.budget,
            fmt_frac(o.roofline_before),
            fmt_frac(o.roofline_after),
            link(&o.package, "package"),
            link(&o.trace_before, "trace before"),
            link(&o.trace_after, "trace after"),
            steps,
            m = esc(&o.method),
            op = esc(&o.op),
        );
    }
    s.push_str("</table></section>");
    details(&mut s, results, dir);
    s.push_str(
        "<p>Traces are Chrome trace files: open them in chrome://tracing or ui.perfetto.dev. \
         The msprof links are the CSV files <code>msprof op</code> writes (OpBasicInfo.csv, \
         PipeUtilization.csv). Every number on this page is in results.json.</p>",
    );
    s.push_str("</body></html>\n");
    s
}
