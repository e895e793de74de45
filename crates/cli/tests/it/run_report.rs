//! `ascendopt run` end to end on two small operators with a tiny budget,
//! then every report file opened and checked against results.json:
//! report.html parses (strict XML) and holds one SVG chart per chart
//! section whose data points are the results' numbers; report.md's tables
//! are results.json's numbers; bank.jsonl lines parse; packages and
//! before/after traces exist.

use crate::common::small_copy;
use ascendopt_experiments::report::markdown::{fmt_frac, fmt_gm, fmt_pct, fmt_us};
use ascendopt_experiments::report::results::Results;
use ascendopt_experiments::report::stats::FAST_P;
use quick_xml::events::Event;
use quick_xml::Reader;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
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

    // Every bar has a value label; a legend only with several series; the
    // speedup charts mark 1.0.
    for (chart, series) in [
        ("gm-by-level", results.methods().len()),
        ("per-operator", results.methods().len()),
        ("roofline", results.methods().len() + 1),
    ] {
        let count = |class: &str, name: &str| {
            find_all(&nodes, charts[chart], |n| {
                n.name == name && n.attrs.get("class").is_some_and(|c| c == class)
            })
            .len()
        };
        assert_eq!(
            count("value-label", "text"),
            count("bar", "rect"),
            "{chart}"
        );
        assert_eq!(
            count("legend-item", "g"),
            if series > 1 { series } else { 0 },
            "{chart}"
        );
    }
    for chart in ["gm-by-level", "per-operator", "gm-vs-evaluations"] {
        let refs = find_all(&nodes, charts[chart], |n| {
            n.name == "line" && n.attrs.get("class").is_some_and(|c| c == "reference")
        });
        assert_eq!(refs.len(), 1, "{chart}: the 1.0 line");
        assert_eq!(refs[0].attrs["data-value"], "1");
    }
    // The curve ends at the evaluations actually spent.
    for c in &results.curves {
        let spent = results
            .outcomes
            .iter()
            .filter(|o| o.method == c.method)
            .map(|o| o.spent)
            .max()
            .unwrap();
        assert_eq!(c.points.last().unwrap().0, spent, "{}", c.method);
    }

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

/// `git` in `dir`, its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `cmd` with stderr piped and returns (exit status, stdout, stderr
/// lines with the time each arrived, seconds since the start, and the
/// total seconds).
fn run_timed(mut cmd: Command) -> (std::process::ExitStatus, String, Vec<(f64, String)>, f64) {
    use std::io::{BufRead, Read};
    let started = std::time::Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ascendopt starts");
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .map(|l| (started.elapsed().as_secs_f64(), l))
            .collect::<Vec<_>>()
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let total = started.elapsed().as_secs_f64();
    (status, stdout, reader.join().unwrap(), total)
}

/// The README's command shape (`ascendopt run` without --out) from the
/// root of a git repository that holds the operators: a small run (two
/// operators, two methods) writes its folder into the per-user data
/// location, says where at the start and the end, leaves the repository
/// clean, shows progress lines at most 10 s apart on a non-terminal, and
/// its --json document follows the schema. Then every report file is
/// opened and checked against results.json, and report.html is rendered in
/// headless Chromium.
#[test]
fn run_writes_a_complete_report() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let data = dir.path().join("data");
    std::fs::create_dir_all(repo.join("ops")).unwrap();
    for op in OPS {
        small_copy(op, &repo.join("ops"), 1 << 20);
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "operators"]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
    cmd.current_dir(&repo)
        .args(["run", "--json"])
        .args(["--ops", &OPS.join(","), "--methods", &METHODS.join(",")])
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
        .env("ASCENDOPT_OPS_DIR", repo.join("ops"))
        .env("XDG_DATA_HOME", &data)
        .env_remove("ASCENDOPT_DATA_DIR")
        .env_remove("ASCENDOPT_PROGRESS_SECS");
    let (status, stdout, lines, total) = run_timed(cmd);
    let stderr: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    assert!(status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    eprintln!("ascendopt run took {total:.1} s\n{stderr}");
    let out = data.join("ascendopt").join("run");

    // Where the folder is, at the start and at the end.
    assert!(
        lines[0].1.contains(&format!("out {}", out.display())),
        "{}",
        lines[0].1
    );
    assert!(
        stderr.contains(&format!("run folder: {}", out.display())),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("report: {}", out.join("report.html").display())));
    // The repository stays clean.
    let status = git(
        &repo,
        &[
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--ignored",
        ],
    );
    assert!(status.is_empty(), "new files in the repository:\n{status}");

    // Progress on a non-terminal: heartbeat lines at most 10 s apart,
    // from the start to the end.
    let beats: Vec<f64> = lines
        .iter()
        .filter(|(_, l)| l.starts_with("progress "))
        .map(|(t, _)| *t)
        .collect();
    assert!(
        total < 12.0 || !beats.is_empty(),
        "no progress line in {total:.0} s:\n{stderr}"
    );
    let mut marks = vec![0.0];
    marks.extend(&beats);
    marks.push(total);
    let gap = marks.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    assert!(gap <= 11.0, "{gap:.1} s without a progress line:\n{stderr}");
    let beat = lines
        .iter()
        .find(|(_, l)| l.starts_with("progress "))
        .map(|(_, l)| l.as_str());
    if let Some(b) = beat {
        assert!(
            // An eta, or "finishing" when the first beat falls at 100%
            // (a fast machine finishes this small run within one beat).
            b.contains(" evaluations")
                && b.contains("best so far")
                && (b.contains("eta") || b.contains("finishing")),
            "{b}"
        );
    }

    // The --json document.
    let doc: serde_json::Value =
        serde_json::from_str(&stdout).expect("stdout is one JSON document");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../docs/schema/ascendopt-output.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errs: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errs.is_empty(), "{errs:#?}");
    assert_eq!(doc["command"], "run");
    assert_eq!(doc["operators"].as_array().unwrap().len(), OPS.len());

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
    check_in_browser(&out, &results);
}

/// The Chromium binary: `ASCENDOPT_CHROMIUM`, else `chromium` or
/// `chromium-browser` on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ASCENDOPT_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
        .find(|p| p.is_file())
}

/// What the probe script reads from the rendered page.
const PROBE: &str = r#"<script>(function(){
var d = document.documentElement;
var charts = Array.prototype.slice.call(document.querySelectorAll('svg.chart'));
var r = {
  viewport: window.innerWidth,
  scrollWidth: d.scrollWidth,
  clientWidth: d.clientWidth,
  charts: charts.length,
  widest_chart: Math.max.apply(null, charts.map(function(c){ return c.getBoundingClientRect().right; })),
  bars: document.querySelectorAll('svg.chart rect.bar').length,
  drawn_bars: Array.prototype.filter.call(document.querySelectorAll('svg.chart rect.bar'), function(b){ var q = b.getBoundingClientRect(); return q.width > 0 && q.height > 0; }).length,
  value_labels: Array.prototype.map.call(document.querySelectorAll('svg.chart text.value-label'), function(t){ return t.textContent; }),
  references: document.querySelectorAll('svg.chart line.reference').length,
  overflowing_tables: Array.prototype.filter.call(document.querySelectorAll('table'), function(t){ return t.getBoundingClientRect().right > d.clientWidth + 1; }).length,
  about: (document.getElementById('about') || {textContent: ''}).textContent,
  details: document.querySelectorAll('section.operator').length
};
var pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(r);
document.body.appendChild(pre);
})();</script>"#;

/// Renders report.html in headless Chromium at 1280 px and reads the
/// rendered DOM back: every chart is there and fits, every bar is drawn and
/// labelled, no horizontal scroll, the about block and the per-operator
/// details are there. Skipped with a message when Chromium is absent,
/// except in CI (CI=true), where it must run.
fn check_in_browser(out: &Path, results: &Results) {
    let Some(chromium) = chromium() else {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(
            !ci,
            "CI=true but no Chromium to render report.html (apt-get install -y chromium, or set ASCENDOPT_CHROMIUM)"
        );
        eprintln!("SKIPPED the browser check of report.html: no chromium on PATH (apt-get install -y chromium)");
        return;
    };
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let probed = html.replace("</body>", &format!("{PROBE}</body>"));
    let page = out.join("probe.html");
    std::fs::write(&page, probed).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,900",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom.find(r#"<pre id="probe">"#).unwrap_or_else(|| {
        panic!(
            "no probe in the rendered DOM; chromium said:\n{}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let rest = &dom[start + r#"<pre id="probe">"#.len()..];
    let json = rest[..rest.find("</pre>").unwrap()]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let r: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    eprintln!("rendered: {r}");
    assert_eq!(r["viewport"], 1280, "{r}");
    // No horizontal scroll at 1280 px; every chart and table fits.
    assert!(
        r["scrollWidth"].as_f64().unwrap() <= r["clientWidth"].as_f64().unwrap(),
        "{r}"
    );
    assert!(
        r["widest_chart"].as_f64().unwrap() <= r["clientWidth"].as_f64().unwrap() + 0.5,
        "{r}"
    );
    assert_eq!(r["overflowing_tables"], 0, "{r}");
    // Four summary charts plus a pipe chart per method x operator.
    let with_profile = results
        .outcomes
        .iter()
        .filter(|o| o.profile_before.is_some() || o.profile_after.is_some())
        .count();
    assert_eq!(
        with_profile,
        results.outcomes.len(),
        "every outcome has its profiles"
    );
    assert_eq!(
        r["charts"].as_u64().unwrap() as usize,
        4 + with_profile,
        "{r}"
    );
    // Every bar drawn and labelled with a number.
    let bars = r["bars"].as_u64().unwrap();
    assert!(bars > 0);
    assert_eq!(r["drawn_bars"].as_u64().unwrap(), bars, "{r}");
    let labels = r["value_labels"].as_array().unwrap();
    assert!(labels.len() as u64 >= bars, "{r}");
    assert!(labels.iter().all(|l| l
        .as_str()
        .is_some_and(|t| t.chars().any(|c| c.is_ascii_digit()))));
    assert!(
        r["references"].as_u64().unwrap() >= 3,
        "the 1.0 line on the speedup charts"
    );
    let about = r["about"].as_str().unwrap();
    for word in ["version", "device", "budget", "bank", "seed", "wall time"] {
        assert!(about.contains(word), "about block lacks {word}: {about}");
    }
    assert_eq!(
        r["details"].as_u64().unwrap() as usize,
        results.outcomes.len()
    );
}
