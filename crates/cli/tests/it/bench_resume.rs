//! Kill `ascendopt bench` midway and run it again on the same folder: the
//! final tables equal those of an uninterrupted run.

use crate::common::small_copy;
use ascendopt_experiments::report::results::Results;
use ascendopt_harness::store::{RunStore, Stage};

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const OP: &str = "add_custom";

fn bench(op: &Path, out: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
    c.args(["bench", "--methods", "full", "--ops"])
        .arg(op)
        .args([
            "--budget",
            "9",
            "--rewind-budget",
            "2",
            "--repeats",
            "5",
            "--seed",
            "7",
        ])
        .arg("--out")
        .arg(out)
        .env("CI", "true");
    c
}

/// Online evaluations recorded in the folder's run store so far.
fn online_evaluations(out: &Path) -> usize {
    let path = out.join("runs.sqlite");
    if !path.is_file() {
        return 0;
    }
    let Ok(store) = RunStore::open(&path) else {
        return 0;
    };
    let Ok(runs) = store.runs() else { return 0 };
    runs.iter()
        .filter(|r| r.config.get("kind").and_then(|k| k.as_str()) == Some("bench"))
        .filter_map(|r| store.evaluations(r.id, OP).ok())
        .map(|evs| evs.iter().filter(|e| e.stage == Stage::Online).count())
        .sum()
}

fn results(out: &Path) -> Results {
    serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
}

/// The parts of report.md that are tables.
fn tables(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("report.md"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(str::to_string)
        .collect()
}

#[test]
fn killed_bench_resumes_to_the_same_tables() {
    let dir = tempfile::tempdir().unwrap();
    let op = small_copy(OP, dir.path(), 1 << 20);
    let whole = dir.path().join("whole");
    let cut = dir.path().join("cut");

    let t = Instant::now();
    let status = bench(&op, &whole)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    eprintln!("uninterrupted run: {:?}", t.elapsed());

    // Start again in another folder and kill it once a few online
    // evaluations are in the store.
    let mut child = bench(&op, &cut)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let killed_at = loop {
        let n = online_evaluations(&cut);
        if n >= 3 {
            child.kill().unwrap();
            child.wait().unwrap();
            break n;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the bench finished ({status}) before it could be killed");
        }
        assert!(
            Instant::now() < deadline,
            "no online evaluation recorded in time"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        !cut.join("results.json").exists(),
        "killed before the report"
    );
    eprintln!("killed after {killed_at} online evaluations");

    let t = Instant::now();
    let status = bench(&op, &cut)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    eprintln!("resumed run: {:?}", t.elapsed());
    assert!(online_evaluations(&cut) >= killed_at);

    let (a, b) = (results(&whole), results(&cut));
    assert_eq!(a.tables, b.tables, "final tables");
    assert_eq!(a.curves, b.curves, "GM against evaluations");
    assert_eq!(a.outcomes.len(), b.outcomes.len());
    for (x, y) in a.outcomes.iter().zip(&b.outcomes) {
        assert_eq!(
            (x.baseline_us, x.final_us, x.speedup),
            (y.baseline_us, y.final_us, y.speedup)
        );
        assert_eq!(x.spent, y.spent, "{}: evaluations charged", x.op);
        assert_eq!(x.steps, y.steps);
    }
    assert_eq!(tables(&whole), tables(&cut), "report.md tables");
    // And the store was not charged twice: the same number of online
    // evaluations as the uninterrupted run.
    assert_eq!(online_evaluations(&whole), online_evaluations(&cut));

    // Run again, unchanged: the finished pair is kept, and the run says so.
    let before = online_evaluations(&whole);
    let again = bench(&op, &whole).stdout(Stdio::null()).output().unwrap();
    assert!(again.status.success());
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("1 finished pair(s) kept"), "{said}");
    assert_eq!(online_evaluations(&whole), before, "nothing measured again");

    // The operator changed (as in another checkout): the folder's finished
    // pair is not taken for it; it is measured anew in a new run.
    let kernel = std::fs::read_dir(op.join("op_kernel"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "cpp"))
        .unwrap();
    let mut text = std::fs::read_to_string(&kernel).unwrap();
    text.push_str("\n// changed after the first run\n");
    std::fs::write(&kernel, text).unwrap();
    let changed = bench(&op, &whole).stdout(Stdio::null()).output().unwrap();
    assert!(changed.status.success());
    let said = String::from_utf8_lossy(&changed.stderr);
    assert!(!said.contains("finished pair(s) kept"), "{said}");
    assert!(online_evaluations(&whole) > before, "measured again");
}
