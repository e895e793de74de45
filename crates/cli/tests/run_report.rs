//! `ascendopt run` end to end on two small operators with a tiny budget,
//! then every report file opened and checked against results.json:
//! report.html parses (strict XML) and holds one SVG chart per chart
//! section whose data points are the results' numbers; report.md's tables
//! are results.json's numbers; bank.jsonl lines parse; packages and
//! before/after traces exist.

mod common;

use ascendopt_agent::report::markdown::{fmt_frac, fmt_gm, fmt_pct, fmt_us};
use ascendopt_agent::report::results::Results;
use ascendopt_agent::report::stats::FAST_P;
use common::small_copy;
use quick_xml::events::Event;
use quick_xml::Reader;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const OPS: [&str; 2] = ["add_custom", "gelu"];
const METHODS: [&str; 2] = ["full", "tiling"];

/// A node of the parsed page.
#[derive(Debug, Default)]
struct Node {
    name: String,
    attrs: BTreeMap<String, String>,
    children: Vec<usize>,
}

/// Parses `text` as XML (strict: end tags must match) into a node arena;
/// node 0 is a synthetic root.
fn parse_xml(text: &str) -> Vec<Node> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(true);
    let mut nodes = vec![Node {
        name: "#root".into(),
        ..Node::default()
    }];
    let mut stack = vec![0usize];
    let open =
        |nodes: &mut Vec<Node>, stack: &[usize], e: &quick_xml::events::BytesStart| -> usize {
            let mut node = Node {
                name: String::from_utf8(e.name().as_ref().to_vec()).unwrap(),
                ..Node::default()
            };
            for a in e.attributes() {
                let a = a.expect("attribute parses");
                node.attrs.insert(
                    String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                    a.unescape_value()
                        .expect("attribute value unescapes")
                        .into_owned(),
                );
            }
            nodes.push(node);
            let id = nodes.len() - 1;
            let parent = *stack.last().unwrap();
            nodes[parent].children.push(id);
            id
        };
    loop {
        match reader.read_event().expect("report.html is well-formed") {
            Event::Start(e) => {
                let id = open(&mut nodes, &stack, &e);
                stack.push(id);
            }
            Event::Empty(e) => {
                open(&mut nodes, &stack, &e);
            }
            Event::End(e) => {
                let top = stack.pop().expect("balanced tags");
                assert_eq!(nodes[top].name.as_bytes(), e.name().as_ref());
            }
            Event::Text(t) => {
                t.unescape().expect("text unescapes");
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(stack, vec![0], "every element closed");
    nodes
}

fn descendants(nodes: &[Node], id: usize, out: &mut Vec<usize>) {
    for &c in &nodes[id].children {
        out.push(c);
        descendants(nodes, c, out);
    }
}

fn find_all(nodes: &[Node], root: usize, pred: impl Fn(&Node) -> bool) -> Vec<&Node> {
    let mut ids = Vec::new();
    descendants(nodes, root, &mut ids);
    ids.into_iter()
        .map(|i| &nodes[i])
        .filter(|n| pred(n))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The Markdown table under the heading that starts with `heading`:
/// data rows as cells.
fn md_table(md: &str, heading: &str) -> Vec<Vec<String>> {
    let mut lines = md.lines().skip_while(|l| !l.starts_with(heading));
    assert!(lines.next().is_some(), "heading {heading:?} in report.md");
    lines
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn check_html(results: &Results, html: &str) {
    let nodes = parse_xml(html);
    let sections = find_all(&nodes, 0, |n| {
        n.name == "section" && n.attrs.get("class").is_some_and(|c| c == "chart-section")
    });
    let ids: Vec<&str> = sections.iter().map(|s| s.attrs["id"].as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "gm-by-level",
            "gm-vs-evaluations",
            "per-operator",
            "roofline"
        ]
    );
    let arena_id = |n: &Node| nodes.iter().position(|m| std::ptr::eq(m, n)).unwrap();
    let mut charts = BTreeMap::new();
    for s in &sections {
        let svgs = find_all(&nodes, arena_id(s), |n| n.name == "svg");
        assert_eq!(svgs.len(), 1, "one SVG in section {}", s.attrs["id"]);
        assert_eq!(svgs[0].attrs["data-chart"], s.attrs["id"]);
        charts.insert(s.attrs["id"].clone(), arena_id(svgs[0]));
    }
    let bars = |chart: &str| -> BTreeMap<(String, String), f64> {
        find_all(&nodes, charts[chart], |n| {
            n.name == "rect" && n.attrs.get("class").is_some_and(|c| c == "bar")
        })
        .into_iter()
        .map(|n| {
            (
                (
                    n.attrs["data-group"].clone(),
                    n.attrs["data-series"].clone(),
                ),
                n.attrs["data-value"].parse::<f64>().unwrap(),
            )
        })
        .collect()
    };

    // GM by level and method: every table row, plus `all` per method.
    let gm = bars("gm-by-level");
    let mut expected = BTreeMap::new();
    for r in &results.tables.by_level {
        expected.insert((r.level.clone(), r.method.clone()), r.stats.gm.unwrap());
    }
    for r in &results.tables.by_method {
        expected.insert(("all".to_string(), r.method.clone()), r.stats.gm.unwrap());
    }
    assert_eq!(gm.len(), expected.len());
    for (k, v) in &expected {
        assert!(close(gm[k], *v), "gm bar {k:?}: {} vs {v}", gm[k]);
    }

    // GM against evaluations: one line per method with the curve's points.
    let lines = find_all(&nodes, charts["gm-vs-evaluations"], |n| {
        n.name == "polyline"
    });
    assert_eq!(lines.len(), results.curves.len());
    for (line, curve) in lines.iter().zip(&results.curves) {
        assert_eq!(line.attrs["data-series"], curve.method);
        let points: Vec<(u32, f64)> = line.attrs["data-points"]
            .split(' ')
            .map(|p| {
                let (x, y) = p.split_once(':').unwrap();
                (x.parse::<f64>().unwrap() as u32, y.parse().unwrap())
            })
            .collect();
        assert_eq!(points.len(), curve.points.len());
        for (a, b) in points.iter().zip(&curve.points) {
            assert_eq!(a.0, b.0);
            assert!(close(a.1, b.1));
        }
        assert!(!points.is_empty());
    }

    // Per-operator speedups.
    let per_op = bars("per-operator");
    assert_eq!(per_op.len(), results.outcomes.len());
    for o in &results.outcomes {
        assert!(close(per_op[&(o.op.clone(), o.method.clone())], o.speedup));
    }

    // Roofline before/after.
    let roof = bars("roofline");
    let mut expected = BTreeMap::new();
    for o in &results.outcomes {
        if let Some(b) = o.roofline_before {
            expected
                .entry((o.op.clone(), "before".to_string()))
                .or_insert(b);
        }
        if let Some(a) = o.roofline_after {
            expected.insert((o.op.clone(), format!("after {}", o.method)), a);
        }
    }
    assert!(!expected.is_empty(), "profiles carry roofline fractions");
    assert_eq!(roof.len(), expected.len());
    for (k, v) in &expected {
        assert!(close(roof[k], *v), "roofline bar {k:?}");
    }
}

fn check_markdown(results: &Results, md: &str) {
    let t2 = md_table(md, "## By level and method (Table 2)");
    assert_eq!(t2.len(), results.tables.by_level.len());
    for (row, r) in t2.iter().zip(&results.tables.by_level) {
        let mut want = vec![
            r.level.clone(),
            r.method.clone(),
            r.stats.n.to_string(),
            fmt_gm(r.stats.gm),
        ];
        want.extend(FAST_P.iter().map(|&p| fmt_pct(r.stats.fast_at(p))));
        assert_eq!(row, &want);
    }
    let t3 = md_table(md, "## By method, every operator (Table 3)");
    assert_eq!(t3.len(), results.tables.by_method.len());
    for (row, r) in t3.iter().zip(&results.tables.by_method) {
        let mut want = vec![r.method.clone(), r.stats.n.to_string(), fmt_gm(r.stats.gm)];
        want.extend(FAST_P.iter().map(|&p| fmt_pct(r.stats.fast_at(p))));
        assert_eq!(row, &want);
    }
    let per_op = md_table(md, "## Per operator");
    assert_eq!(per_op.len(), results.outcomes.len());
    for (row, o) in per_op.iter().zip(&results.outcomes) {
        assert_eq!(row[0], o.op);
        assert_eq!(row[1], format!("L{}", o.level));
        assert_eq!(row[2], o.method);
        assert_eq!(row[3], fmt_us(o.baseline_us));
        assert_eq!(row[4], fmt_us(o.final_us));
        assert_eq!(row[5], fmt_gm(Some(o.speedup)));
        assert_eq!(row[6], format!("{}/{}", o.spent, o.budget));
        assert_eq!(row[7], fmt_frac(o.roofline_before));
        assert_eq!(row[8], fmt_frac(o.roofline_after));
    }
    // The tables' own arithmetic, recomputed from the outcomes.
    for r in &results.tables.by_method {
        let s: Vec<f64> = results
            .outcomes
            .iter()
            .filter(|o| o.method == r.method)
            .map(|o| o.speedup)
            .collect();
        let gm = (s.iter().map(|v| v.ln()).sum::<f64>() / s.len() as f64).exp();
        assert!(close(gm, r.stats.gm.unwrap()));
        let fast1 = s.iter().filter(|v| **v > 1.0).count() as f64 / s.len() as f64;
        assert!(close(fast1, r.stats.fast_at(1.0)));
    }
}

fn check_files(out: &Path, results: &Results) {
    let jsonl = std::fs::read_to_string(out.join("bank.jsonl")).unwrap();
    let lines: Vec<&str> = jsonl.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), results.meta.bank_entries);
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).expect("bank.jsonl line parses");
        assert!(
            v.get("title")
                .and_then(|t| t.as_str())
                .is_some_and(|t| !t.is_empty()),
            "{l}"
        );
        assert!(v.get("diff").is_some());
    }
    for o in &results.outcomes {
        let pkg = out.join(o.package.as_ref().expect("package path"));
        assert!(pkg.join("op.toml").is_file(), "{}", pkg.display());
        for t in [&o.trace_before, &o.trace_after] {
            let path = out.join(t.as_ref().expect("trace path"));
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let events = v
                .get("traceEvents")
                .and_then(|e| e.as_array())
                .or_else(|| v.as_array())
                .expect("Chrome trace events");
            assert!(!events.is_empty());
        }
    }
}

#[test]
fn run_writes_a_complete_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let started = std::time::Instant::now();
    let ops: Vec<String> = OPS
        .iter()
        .map(|op| small_copy(op, dir.path(), 1 << 20).display().to_string())
        .collect();
    let output = Command::new(env!("CARGO_BIN_EXE_ascendopt"))
        .args(["run", "--out"])
        .arg(&out)
        .args(["--ops", &ops.join(","), "--methods", &METHODS.join(",")])
        .args([
            "--budget",
            "6",
            "--rewind-budget",
            "2",
            "--repeats",
            "5",
            "--deterministic",
            "-j",
            "2",
        ])
        .env("CI", "true")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    eprintln!("ascendopt run took {:?}\n{stdout}", started.elapsed());
    assert!(stdout.contains(&format!("report: {}", out.join("report.html").display())));

    let results: Results =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results.outcomes.len(), OPS.len() * METHODS.len());
    let ops: BTreeSet<&str> = results.outcomes.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(ops, OPS.into_iter().collect());
    assert_eq!(results.methods(), METHODS.map(String::from).to_vec());
    for o in &results.outcomes {
        assert!(o.error.is_none(), "{}/{}: {:?}", o.method, o.op, o.error);
        assert!(o.baseline_us.is_some() && o.final_us.is_some());
        assert!(o.spent >= 1 && o.spent <= o.budget);
        let want = if o.method == "full" { 4 } else { 6 };
        assert_eq!(
            o.budget, want,
            "{}: Rewind's share comes out of the budget",
            o.method
        );
    }
    assert_eq!(results.meta.setting, "transductive");
    // Levels present: L1 and L2, each with a row per method.
    let levels: BTreeSet<&str> = results
        .tables
        .by_level
        .iter()
        .map(|r| r.level.as_str())
        .collect();
    assert_eq!(levels, ["L1", "L2"].into_iter().collect());

    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains("href=\"http"), "no external links");
    assert!(!html.contains("<script"), "no scripts");
    assert!(!html.contains(" src="), "no external assets");
    check_html(&results, &html);
    check_markdown(
        &results,
        &std::fs::read_to_string(out.join("report.md")).unwrap(),
    );
    check_files(&out, &results);
}
