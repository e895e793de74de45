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
    ascendopt_testkit::map_cases(&dir, |block| {
        let n = ascendopt_testkit::first_shape_elements(block).expect("a case's shapes");
        (n <= 70_000).then(|| block.to_string())
    });
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

/// The scripted stand-in of the CANN tools (tests only).
fn standin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../device/tests/standin")
}

/// `ascendopt <args>` with the CANN stand-in first on PATH, a fake
/// toolkit, and the device's work under `root/cache`.
fn on_cann_standin(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
    c.args(args)
        .env(
            "PATH",
            format!(
                "{}:{}",
                standin().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("ASCEND_HOME_PATH", root.join("toolkit"))
        .env("ASCENDOPT_CACHE_DIR", root.join("cache"))
        .env_remove("ASCENDOPT_DEVICE");
    c
}

#[test]
fn optimize_runs_end_to_end_on_the_cann_stand_in() {
    let tmp = tempfile::tempdir().unwrap();
    let op = small_weak_copy("add_custom", tmp.path(), &[]);
    let out = tmp.path().join("out");
    let mut c = on_cann_standin(
        tmp.path(),
        &[
            "optimize",
            "--device",
            "cann",
            "--no-retrieval",
            "--budget",
            "4",
            "--stage1-budget",
            "1",
            "--repeats",
            "10",
            "--seed",
            "3",
        ],
    );
    c.arg(&op).arg("--out").arg(&out);
    let o = run(c);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stderr}\n{stdout}");
    assert!(stderr.contains("optimize add_custom"), "{stderr}");
    // Every evaluation ran on the stand-in chip: one msopgen build folder
    // per distinct candidate, each with its runner.
    let builds: Vec<PathBuf> = std::fs::read_dir(tmp.path().join("cache/cann/builds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!builds.is_empty());
    for b in &builds {
        assert!(b
            .join("work/AddCustom/build_out/op_api/lib/libcust_opapi.so")
            .is_file());
    }
    let store = RunStore::open(&out.join("runs.sqlite")).unwrap();
    let runs = store.runs().unwrap();
    let evals = store.evaluations(runs[0].id, "add_custom").unwrap();
    assert!(evals.len() >= 2 && evals.len() <= 4, "{}", evals.len());
    let correct: Vec<_> = evals
        .iter()
        .filter(|e| e.verdict.latency().is_some())
        .collect();
    assert!(!correct.is_empty());
    let builds_used = builds.len();
    assert!(builds_used <= evals.len());
    // The chip's profile: what msprof reports, nothing made up.
    let p = correct[0].verdict.profile().unwrap();
    assert!(p.task_duration_us > 4.0, "{p:?}");
    assert_eq!(p.block_dim, 40, "{p:?}");
    assert!(p.launch_overhead_us.is_nan(), "{p:?}");
    assert!(p.l2_read_hit_rate_pct.is_none(), "{p:?}");
    assert!(p.roofline.is_none(), "{p:?}");
    assert!(out.join("add_custom/op_kernel/add_custom.cpp").is_file());
    assert!(out.join("before/profile.json").is_file());
}

#[test]
fn bench_rule_and_fidelity_measure_on_the_cann_stand_in() {
    let tmp = tempfile::tempdir().unwrap();
    let op = small_weak_copy("add_custom", tmp.path(), &[]);
    let op = op.display().to_string();

    // The acceptance rule on the chip's own samples (one runner process
    // measures every trial's).
    let o = run(on_cann_standin(
        tmp.path(),
        &[
            "bench-rule",
            "--device",
            "cann",
            "--trials",
            "40",
            "--json",
            &op,
        ],
    ));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let schema = crate::json_schema::schema();
    assert_eq!(
        crate::json_schema::errors(&schema, &doc),
        Vec::<String>::new()
    );
    let row = &doc["operators"][0];
    assert_eq!(row["op"], "add_custom");
    assert!(row["false_accept"].as_f64().is_some(), "{row}");

    // The simulator against the stand-in chip over a Stage II search.
    let o = run(on_cann_standin(
        tmp.path(),
        &[
            "fidelity", "--device", "cann", "--budget", "4", "--json", &op,
        ],
    ));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        crate::json_schema::errors(&schema, &doc),
        Vec::<String>::new()
    );
    assert_eq!(doc["command"], "fidelity device");
    assert_eq!(doc["device"], "cann-ascend910b2:0");
    let row = &doc["operators"][0];
    let (sim, chip) = (
        row["sim_us"].as_f64().unwrap(),
        row["chip_us"].as_f64().unwrap(),
    );
    assert!(
        (row["ratio"].as_f64().unwrap() - chip / sim).abs() < 1e-9,
        "{row}"
    );
    let candidates = row["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty());
    assert!(candidates.iter().all(|c| c[1].as_f64().is_some()), "{row}");
    if candidates.len() >= 2 {
        let rho = row["spearman"].as_f64();
        assert!(rho.is_none_or(|r| (-1.0..=1.0).contains(&r)), "{row}");
    }
}

/// The device comes from `--device`, else `ASCENDOPT_DEVICE`, else the
/// configuration file (`ASCENDOPT_CONFIG`), whose `[cann]` table also
/// gives the toolkit and the work folder; a bad value names its source,
/// the file's with its line.
#[test]
fn the_device_comes_from_the_flag_the_environment_or_the_config_file() {
    let tmp = tempfile::tempdir().unwrap();
    let op = small_weak_copy("add_custom", tmp.path(), &[]);
    let op = op.display().to_string();
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "# the lab's NPU\ndevice = \"cann:0\"\n\n[cann]\ntoolkit = \"{}\"\nwork_dir = \"{}\"\nrepeats = 12\n",
            tmp.path().join("toolkit").display(),
            tmp.path().join("from-config").display()
        ),
    )
    .unwrap();
    let eval = |device_env: Option<&str>, flag: Option<&str>| {
        let mut args = vec!["eval", op.as_str()];
        if let Some(f) = flag {
            args.extend(["--device", f]);
        }
        let mut c = on_cann_standin(tmp.path(), &args);
        c.env_remove("ASCEND_HOME_PATH")
            .env_remove("ASCENDOPT_CACHE_DIR")
            .env("ASCENDOPT_CONFIG", &config);
        if let Some(d) = device_env {
            c.env("ASCENDOPT_DEVICE", d);
        }
        let o = run(c);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // The file alone: the stand-in chip, built where the file says.
    let (code, stdout, stderr) = eval(None, None);
    assert_eq!(code, Some(0), "{stderr}\n{stdout}");
    assert!(stdout.contains("cann-ascend910b2:0"), "{stdout}");
    assert!(tmp.path().join("from-config/builds").is_dir());
    // The environment beats the file, the flag beats the environment.
    let (code, stdout, stderr) = eval(Some("sim"), None);
    assert_eq!(code, Some(0), "{stderr}\n{stdout}");
    assert!(stdout.contains("sim-ascend910b2"), "{stdout}");
    let (code, stdout, stderr) = eval(Some("sim"), Some("cann"));
    assert_eq!(code, Some(0), "{stderr}\n{stdout}");
    assert!(stdout.contains("cann-ascend910b2:0"), "{stdout}");
    // A bad value names its source.
    let (code, _, stderr) = eval(Some("gpu"), None);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("ASCENDOPT_DEVICE: device `gpu`"),
        "{stderr}"
    );
    std::fs::write(&config, "\ndevice = \"npu\"\n").unwrap();
    let (code, _, stderr) = eval(None, None);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains(&format!("{}:2: device: device `npu`", config.display())),
        "{stderr}"
    );
    std::fs::write(&config, "[cann]\nwarmup = -1\n").unwrap();
    let (code, _, stderr) = eval(None, None);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains(&format!("{}:2: ", config.display())),
        "{stderr}"
    );
    std::fs::remove_file(&config).unwrap();
    let (code, _, stderr) = eval(None, Some("sim"));
    assert_eq!(code, Some(2), "a named file that is missing is an error");
    assert!(stderr.contains("ASCENDOPT_CONFIG="), "{stderr}");
}

/// The other commands that evaluate take `--device` too: each runs on the
/// stand-in chip.
#[test]
fn bench_evals_bench_speed_and_compat_run_on_the_cann_stand_in() {
    let tmp = tempfile::tempdir().unwrap();
    let op = small_weak_copy("add_custom", tmp.path(), &[]);
    let op = op.display().to_string();
    for args in [
        vec!["bench-evals", "--device", "cann", "-n", "1", "--ops", &op],
        vec!["bench-speed", "--device", "cann", &op],
        vec!["compat", "--device", "cann", &op],
    ] {
        let o = run(on_cann_standin(tmp.path(), &args));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}\n{stdout}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert!(tmp.path().join("cache/cann/builds").is_dir());
}
