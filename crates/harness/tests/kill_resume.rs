//! Crash safety of the run store (issue 4): a process writing a 50-evaluation
//! run is SIGKILLed midway, twice; resuming yields exactly the rows of an
//! uninterrupted run and every evaluation is charged once.
//!
//! This test binary has its own `main` (`harness = false`): started with
//! `ASCENDOPT_KILL_WRITER=<db>` it is the writer child; otherwise it runs the
//! test, spawning itself as the child.

use ascendopt_harness::ledger::{BudgetConfig, Charge, Ledger, LedgerError};
use ascendopt_harness::store::{RunId, RunStore, Stage, StageTimings};
use ascendopt_harness::verdict::{
    BadElement, CorrectnessCheck, LatencyStats, Mismatch, RuntimeErrorKind, Verdict,
};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

const WRITER_ENV: &str = "ASCENDOPT_KILL_WRITER";
const DELAY_ENV: &str = "ASCENDOPT_KILL_WRITER_DELAY_MS";
const TEST_NAME: &str = "kill_9_mid_run_resumes_without_double_counting";
const OP: &str = "add_custom";
const BUDGET: BudgetConfig = BudgetConfig {
    rewind: 10,
    online: 40,
};
const N_CANDIDATES: u32 = 50;

/// The deterministic "evaluation" of candidate `i`: every verdict kind.
fn fake_verdict(i: u32) -> Verdict {
    match i % 6 {
        0 => Verdict::CompileError {
            diagnostics: format!("op_kernel/add.cpp:{i}: error: 'Foo' was not declared"),
        },
        1 => Verdict::RuntimeError {
            kind: RuntimeErrorKind::UbOverflow,
            message: format!("UB needs {} bytes", 196_608 + i),
            location: Some(format!("op_kernel/add.cpp:{i}")),
        },
        2 => Verdict::Timeout {
            after_ms: 1000 + u64::from(i),
        },
        3 => Verdict::Incorrect {
            details: Box::new(Mismatch {
                check: CorrectnessCheck::Rerun,
                case: format!("case{i}"),
                output: "z".into(),
                total: 1024,
                mismatches: u64::from(i),
                max_abs_err: f64::INFINITY,
                max_rel_err: 0.5,
                first_bad: Some(BadElement {
                    index: u64::from(i),
                    expected: "-0".into(),
                    actual: "nan".into(),
                }),
            }),
        },
        4 => Verdict::RejectedStatic {
            reason: format!("inline-asm at op_kernel/add.cpp:{i}: inline assembly (`asm`)"),
        },
        _ => {
            let samples: Vec<f64> = (0..5)
                .map(|k| 100.0 - f64::from(i) * 0.5 + f64::from(k) * 0.1)
                .collect();
            Verdict::Correct {
                latency: LatencyStats::from_samples(&samples).expect("finite samples"),
                samples_us: samples,
                profile: Box::new(ascendopt_device::Profile {
                    block_dim: i,
                    task_duration_us: 100.0,
                    ..Default::default()
                }),
            }
        }
    }
}

fn stage_of(i: u32) -> Stage {
    if i < BUDGET.rewind {
        Stage::Rewind
    } else {
        Stage::Online
    }
}

/// The run loop of an agent, reduced to what matters for crash safety:
/// deterministic candidates; one already evaluated (same source) is taken
/// from the store without spending; otherwise spend, evaluate, record.
fn run_writer(db: &Path, delay: Duration, progress: &mut dyn Write) -> RunId {
    let store = RunStore::open(db).expect("open store");
    let run = match store.runs().expect("runs").first() {
        Some(r) => store.resume_run(r.id).expect("resume").id,
        None => store
            .create_run(&serde_json::json!({"budget": [10, 40], "op": OP}))
            .expect("create run"),
    };
    let mut ledger = Ledger::open(&store, run, OP, "L1", BUDGET).expect("ledger");
    for i in 0..N_CANDIDATES {
        let source = format!(
            "// candidate {i}\nextern \"C\" __global__ __aicore__ void add_custom() {{}}\n"
        );
        let hash = store.put_source(&source).expect("put source");
        if store
            .find_by_source(run, OP, &hash)
            .expect("find")
            .is_some()
        {
            continue;
        }
        let ticket = ledger.try_spend(stage_of(i)).expect("budget");
        std::thread::sleep(delay); // the evaluation itself
        let verdict = fake_verdict(i);
        let recorded = ledger
            .record(
                ticket,
                Charge {
                    source_hash: &hash,
                    verdict: &verdict,
                    seed: 0x9e37_79b9_7f4a_7c15 ^ u64::from(i),
                    timings: StageTimings {
                        compile_ms: u64::from(i),
                        correctness_ms: 2 * u64::from(i),
                        profile_ms: 3 * u64::from(i),
                    },
                    launch: None,
                },
            )
            .expect("record");
        assert!(recorded.is_new);
        // The parent counts these lines.
        let _ = writeln!(progress, "recorded {i}");
        let _ = progress.flush();
    }
    run
}

/// Everything that must match between runs, per evaluation.
fn rows(db: &Path, run: RunId) -> Vec<String> {
    let store = RunStore::open(db).unwrap();
    store
        .evaluations(run, OP)
        .unwrap()
        .into_iter()
        .map(|e| {
            format!(
                "{} #{} {} {} seed={} t={:?} {}",
                e.stage,
                e.budget_index,
                e.source_hash,
                e.verdict.label(),
                e.seed,
                e.timings,
                serde_json::to_string(&e.verdict).unwrap()
            )
        })
        .collect()
}

/// Starts the writer child and SIGKILLs it once it has reported `after`
/// more evaluations. Returns how many rows the store holds afterwards.
fn kill_writer_after(db: &Path, after: usize) -> usize {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .env(WRITER_ENV, db)
        .env(DELAY_ENV, "15")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    for _ in 0..after {
        let line = lines.next().expect("writer stopped early").unwrap();
        assert!(line.starts_with("recorded "), "{line}");
    }
    // Land the kill at a varying point of the next evaluation.
    std::thread::sleep(Duration::from_millis(after as u64 % 13));
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "writer was not killed: {status:?}"
    );
    let store = RunStore::open(db).unwrap();
    let run = store.runs().unwrap()[0].id;
    store.evaluations(run, OP).unwrap().len()
}

fn kill_9_mid_run_resumes_without_double_counting() {
    let dir = tempfile::TempDir::new().unwrap();

    // Reference: one uninterrupted run.
    let reference_db = dir.path().join("reference.db");
    let reference_run = run_writer(&reference_db, Duration::ZERO, &mut std::io::sink());
    let reference = rows(&reference_db, reference_run);
    assert_eq!(reference.len(), 50);

    // Interrupted: killed after 20 evaluations, resumed and killed again
    // after 12 more, then resumed to the end.
    let db = dir.path().join("killed.db");
    let after_first = kill_writer_after(&db, 20);
    assert!(
        (20..50).contains(&after_first),
        "first kill left {after_first} rows"
    );
    let after_second = kill_writer_after(&db, 12);
    assert!(
        (after_first + 12..50).contains(&after_second),
        "second kill left {after_second} rows (first {after_first})"
    );
    let run = run_writer(&db, Duration::ZERO, &mut std::io::sink());
    assert_eq!(run, RunId(1));

    assert_eq!(rows(&db, run), reference);
    let store = RunStore::open(&db).unwrap();
    let op = store.operator(run, OP).unwrap().unwrap();
    assert_eq!((op.budget, op.spent), (50, 50), "budget counted once");
    assert_eq!(
        op.stages,
        vec![(Stage::Rewind, 10, 10), (Stage::Online, 40, 40)]
    );
    assert_eq!(store.budget_spent(run, OP, Stage::Online).unwrap(), 40);
    let mut ledger = Ledger::open(&store, run, OP, "L1", BUDGET).unwrap();
    for stage in Stage::ALL {
        assert!(matches!(
            ledger.try_spend(stage),
            Err(LedgerError::Exhausted { .. })
        ));
    }
    // Resuming a finished run evaluates nothing.
    run_writer(&db, Duration::ZERO, &mut std::io::sink());
    assert_eq!(store.operator(run, OP).unwrap().unwrap().spent, 50);
}

fn main() -> ExitCode {
    if let Some(db) = std::env::var_os(WRITER_ENV) {
        let delay = std::env::var(DELAY_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        run_writer(
            Path::new(&db),
            Duration::from_millis(delay),
            &mut std::io::stdout(),
        );
        return ExitCode::SUCCESS;
    }
    // Honour a name filter the way libtest does (substring match).
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !filters.is_empty() && !filters.iter().any(|f| TEST_NAME.contains(f.as_str())) {
        println!("test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out");
        return ExitCode::SUCCESS;
    }
    println!("running 1 test");
    let outcome = std::panic::catch_unwind(kill_9_mid_run_resumes_without_double_counting);
    match outcome {
        Ok(()) => {
            println!("test {TEST_NAME} ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
            ExitCode::SUCCESS
        }
        Err(_) => {
            println!("test {TEST_NAME} ... FAILED\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out");
            ExitCode::FAILURE
        }
    }
}
