//! `ascendopt optimize` and `ascendopt bench-tiling` through the binary:
//! the output folder, resuming an interrupted run to the same result, the
//! bank requirement, and the benchmark's ratio line.

use ascendopt_harness::store::RunStore;
use ascendopt_motif::{by_tag, SiteState, Sources};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn ops_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops")
}

/// A copy of built-in `op` in `dst` keeping only cases of at most 70 000
/// elements (an evaluation then takes about a second), with `remove`
/// motifs taken out.
fn small_weak_copy(op: &str, dst: &Path, remove: &[&str]) -> PathBuf {
    let mut s = Sources::load(&ops_dir().join(op)).unwrap();
    for tag in remove {
        let m = by_tag(tag).unwrap();
        let site = m
            .detect(&s)
            .into_iter()
            .find(|x| x.state == SiteState::Present)
            .unwrap();
        s = m.remove(&s, &site).unwrap();
    }
    let dir = dst.join(op);
    s.write_to(&dir).unwrap();
    let text = std::fs::read_to_string(dir.join("op.toml")).unwrap();
    let mut parts = text.split("\n[[cases]]");
    let mut out = parts.next().unwrap().to_string();
    for block in parts {
        let line = block
            .lines()
            .find(|l| l.trim_start().starts_with("shapes"))
            .unwrap();
        let start = line.find("[[").unwrap() + 2;
        let end = line[start..].find(']').unwrap() + start;
        let n: u64 = line[start..end]
            .split(',')
            .map(|x| x.trim().parse::<u64>().unwrap())
            .product();
        if n <= 70_000 {
            out.push_str("\n[[cases]]");
            out.push_str(block);
        }
    }
    std::fs::write(dir.join("op.toml"), out).unwrap();
    dir
}

fn optimize_cmd(op: &Path, out: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
    c.args(["optimize"])
        .arg(op)
        .args([
            "--no-retrieval",
            "--budget",
            "7",
            "--stage1-budget",
            "3",
            "--deterministic",
        ])
        .args(["--repeats", "10", "--seed", "3", "--out"])
        .arg(out);
    c
}

fn run(mut c: Command) -> Output {
    c.output().unwrap()
}

fn evaluations(out: &Path) -> usize {
    let store = RunStore::open(&out.join("runs.sqlite")).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1, "one run per configuration");
    store.evaluations(runs[0].id, "muls").unwrap().len()
}

fn steps(out: &Path) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("steps.json")).unwrap()).unwrap();
    serde_json::json!({"steps": v["steps"], "final_us": v["final_us"], "spent": v["spent"]})
}

#[test]
fn optimize_writes_the_package_and_an_interrupted_run_resumes_to_the_same_result() {
    let tmp = tempfile::tempdir().unwrap();
    let op = small_weak_copy("muls", tmp.path(), &["multi_core", "tile_size"]);

    // Uninterrupted reference run.
    let reference = tmp.path().join("reference");
    let o = run(optimize_cmd(&op, &reference));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stderr}\n{stdout}");
    assert!(stdout.contains("speedup"), "{stdout}");
    assert!(
        stdout.contains("every case passes on fresh inputs"),
        "{stdout}"
    );
    for f in [
        "muls/op.toml",
        "muls/op_host/muls.cpp",
        "muls/op_kernel/muls.cpp",
        "changes.diff",
        "steps.json",
        "log.json",
        "before/profile.json",
        "before/trace.json",
        "after/profile.json",
        "after/trace.json",
    ] {
        assert!(reference.join(f).is_file(), "{f} missing");
    }
    let diff = std::fs::read_to_string(reference.join("changes.diff")).unwrap();
    assert!(
        diff.contains("MAX_CORE_NUM") || diff.contains("TILE_BYTES"),
        "{diff}"
    );
    let spent = evaluations(&reference);
    assert!(spent <= 7);
    let result = steps(&reference);

    // The same command again: the run is resumed and replayed for free.
    let o = run(optimize_cmd(&op, &reference));
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("(resumed)"));
    assert_eq!(evaluations(&reference), spent, "a replay charges nothing");
    assert_eq!(steps(&reference), result);

    // Interrupted after three attempts, then resumed: same result as the
    // reference.
    let out = tmp.path().join("interrupted");
    let mut child = optimize_cmd(&op, &out)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut attempts = 0;
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        if line.starts_with("[muls]") {
            attempts += 1;
            if attempts == 3 {
                break;
            }
        }
    }
    child.kill().unwrap();
    let _ = child.wait();
    let o = run(optimize_cmd(&op, &out));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("(resumed)"));
    assert_eq!(steps(&out), result);
    assert_eq!(evaluations(&out), spent);
}

#[test]
fn stage1_with_experience_needs_a_bank() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run({
        let mut c = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
        c.args(["optimize", "add_custom", "--budget", "5", "--out"])
            .arg(tmp.path().join("o"));
        c
    });
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--bank"));
    let o = run({
        let mut c = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
        c.args([
            "optimize",
            "add_custom",
            "--budget",
            "5",
            "--stages",
            "3",
            "--out",
        ])
        .arg(tmp.path().join("o"));
        c
    });
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bench_tiling_prints_per_operator_latencies_and_the_mean_ratio() {
    let tmp = tempfile::tempdir().unwrap();
    let op = small_weak_copy("muls", tmp.path(), &[]);
    let o = run({
        let mut c = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
        c.args(["bench-tiling", "--budget", "3", "--ops"]).arg(&op);
        c
    });
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    let row = stdout.lines().find(|l| l.starts_with("muls")).unwrap();
    let ratio: f64 = row.split_whitespace().last().unwrap().parse().unwrap();
    assert!(ratio > 0.0);
    assert!(
        stdout.contains("mean ratio random@6 / stage2@3"),
        "{stdout}"
    );
}
