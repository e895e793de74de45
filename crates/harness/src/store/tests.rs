//! Tests of the run store: migrations, idempotent recording, budgets.

use super::*;
use crate::verdict::{LatencyStats, RuntimeErrorKind};
use tempfile::TempDir;

fn correct(median: f64) -> Verdict {
    let samples = vec![median - 1.0, median, median + 1.0];
    Verdict::Correct {
        latency: LatencyStats::from_samples(&samples).unwrap(),
        samples_us: samples,
        profile: Box::new(ascendopt_device::Profile {
            task_duration_us: median,
            ..Default::default()
        }),
    }
}

fn timings() -> StageTimings {
    StageTimings {
        compile_ms: 1200,
        correctness_ms: 340,
        profile_ms: 56,
    }
}

/// A store with one run and operator `add` (rewind 2, online 3).
fn setup() -> (TempDir, RunStore, RunId) {
    let dir = TempDir::new().unwrap();
    let store = RunStore::open(&dir.path().join("runs.db")).unwrap();
    let run = store
        .create_run(&serde_json::json!({"device": "sim"}))
        .unwrap();
    store
        .register_operator(run, "add", "L1", &[(Stage::Rewind, 2), (Stage::Online, 3)])
        .unwrap();
    (dir, store, run)
}

fn new_eval<'a>(
    run: RunId,
    stage: Stage,
    index: u32,
    hash: &'a SourceHash,
    verdict: &'a Verdict,
) -> NewEvaluation<'a> {
    NewEvaluation {
        run,
        op: "add",
        stage,
        budget_index: index,
        source_hash: hash,
        verdict,
        seed: 42,
        timings: timings(),
        launch: None,
    }
}

/// Everything that makes up the schema, in a comparable form: per table its
/// columns, indexes (with their columns) and foreign keys.
fn schema_of(path: &Path) -> Vec<String> {
    let conn = Connection::open(path).unwrap();
    let mut out = Vec::new();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for t in tables {
        let mut cols = conn.prepare(&format!("PRAGMA table_info({t})")).unwrap();
        for c in cols
            .query_map([], |r| {
                Ok(format!(
                    "{t} col {} {} notnull={} default={:?} pk={}",
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, i64>(5)?
                ))
            })
            .unwrap()
        {
            out.push(c.unwrap());
        }
        let mut idx = conn.prepare(&format!("PRAGMA index_list({t})")).unwrap();
        let indexes: Vec<(String, i64)> = idx
            .query_map([], |r| Ok((r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (name, unique) in indexes {
            let cols: Vec<String> = conn
                .prepare(&format!("PRAGMA index_info({name})"))
                .unwrap()
                .query_map([], |r| r.get(2))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            // Auto-index names carry a creation counter; keep only the shape.
            let label = if name.starts_with("sqlite_autoindex") {
                "auto".to_string()
            } else {
                name
            };
            out.push(format!(
                "{t} index {label} unique={unique} on {}",
                cols.join(",")
            ));
        }
        let mut fks = conn
            .prepare(&format!("PRAGMA foreign_key_list({t})"))
            .unwrap();
        for f in fks
            .query_map([], |r| {
                Ok(format!(
                    "{t} fk {} -> {}.{:?}",
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(4)?
                ))
            })
            .unwrap()
        {
            out.push(f.unwrap());
        }
    }
    out.sort();
    out
}

fn user_version(path: &Path) -> i64 {
    Connection::open(path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn fresh_store_is_latest_version_in_wal_mode() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("runs.db");
    drop(RunStore::open(&path).unwrap());
    assert_eq!(user_version(&path), END_VERSION);
    let mode: String = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // Reopening an up-to-date store changes nothing.
    let before = schema_of(&path);
    drop(RunStore::open(&path).unwrap());
    assert_eq!(schema_of(&path), before);
}

#[test]
fn upgraded_v1_schema_equals_fresh_schema_and_keeps_rows() {
    let dir = TempDir::new().unwrap();
    let fresh = dir.path().join("fresh.db");
    drop(RunStore::open(&fresh).unwrap());

    let old = dir.path().join("old.db");
    {
        let conn = Connection::open(&old).unwrap();
        conn.execute_batch(SCHEMA_V1).unwrap();
        let hash = SourceHash::of("kernel v1");
        conn.execute_batch(&format!(
            "INSERT INTO runs VALUES (1, 5, '{{}}', 'running');
             INSERT INTO operators VALUES (1, 'add', 'L1', 3, 1);
             INSERT INTO stage_budgets VALUES (1, 'add', 'online', 3, 1);
             INSERT INTO sources VALUES ('{hash}', 'kernel v1');
             INSERT INTO evaluations (run, op, stage, budget_index, source_hash, verdict, details, seed, created_ms)
                 VALUES (1, 'add', 'online', 0, '{hash}', 'timeout', '{{\"verdict\":\"timeout\",\"after_ms\":9}}', 7, 5);"
        ))
        .unwrap();
    }
    assert_eq!(user_version(&old), 1);
    assert_ne!(schema_of(&old), schema_of(&fresh));

    // Reopen for the upgrade step, then again to read.
    drop(RunStore::open(&old).unwrap());
    assert_eq!(user_version(&old), END_VERSION);
    assert_eq!(schema_of(&old), schema_of(&fresh));

    let store = RunStore::open(&old).unwrap();
    let rows = store.evaluations(RunId(1), "add").unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].verdict, Verdict::Timeout { after_ms: 9 });
    assert_eq!(rows[0].timings.compile_ms, 0);
    assert_eq!(rows[0].seed, 7);
    assert!(store
        .find_by_source(RunId(1), "add", &SourceHash::of("kernel v1"))
        .unwrap()
        .is_some());
    // Rows from before launch keys have none.
    assert_eq!(rows[0].launch, None);
}

#[test]
fn finds_the_first_evaluation_of_a_launch() {
    let (_dir, store, run) = setup();
    let a = store.put_source("host A").unwrap();
    let b = store.put_source("host B").unwrap();
    let c = store.put_source("host C").unwrap();
    let v = correct(5.0);
    let mut first = new_eval(run, Stage::Online, 0, &a, &v);
    first.launch = Some("k1");
    store.record_evaluation(&first).unwrap();
    let mut other = new_eval(run, Stage::Online, 1, &b, &v);
    other.launch = Some("k2");
    store.record_evaluation(&other).unwrap();
    // A re-measurement of A, without a key, and a later row of k1.
    store
        .record_evaluation(&new_eval(run, Stage::Online, 2, &a, &v))
        .unwrap();
    let mut again = new_eval(run, Stage::Rewind, 0, &c, &v);
    again.launch = Some("k1");
    store.record_evaluation(&again).unwrap();

    let found = store.find_by_launch(run, "add", "k1").unwrap().unwrap();
    assert_eq!((found.source_hash, found.budget_index), (a, 0));
    assert_eq!(found.launch.as_deref(), Some("k1"));
    let found = store.find_by_launch(run, "add", "k2").unwrap().unwrap();
    assert_eq!(found.source_hash, b);
    assert!(store.find_by_launch(run, "add", "k3").unwrap().is_none());
    assert!(store.find_by_launch(run, "mul", "k1").unwrap().is_none());
    let other_run = store.create_run(&serde_json::json!({"n": 2})).unwrap();
    assert!(store
        .find_by_launch(other_run, "add", "k1")
        .unwrap()
        .is_none());
}

#[test]
fn newer_store_is_refused_and_left_unchanged() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("future.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    match RunStore::open(&path) {
        Err(StoreError::IncompatibleVersion {
            found, supported, ..
        }) => {
            assert_eq!((found, supported), (99, END_VERSION));
        }
        other => panic!("expected IncompatibleVersion, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(user_version(&path), 99);
}

#[test]
fn foreign_database_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("other.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE customers (name TEXT);")
        .unwrap();
    assert!(matches!(
        RunStore::open(&path),
        Err(StoreError::Foreign { .. })
    ));
}

#[test]
fn recording_charges_the_budget_once_per_key() {
    let (_dir, store, run) = setup();
    let hash = store.put_source("kernel A").unwrap();
    let verdict = correct(10.0);
    let first = store
        .record_evaluation(&new_eval(run, Stage::Online, 0, &hash, &verdict))
        .unwrap();
    assert!(first.is_new);
    assert_eq!(first.evaluation.verdict, verdict);
    assert_eq!(first.evaluation.timings, timings());
    assert_eq!(store.budget_spent(run, "add", Stage::Online).unwrap(), 1);

    // The same key again (a resumed run replaying its last step): no-op,
    // even if the replay produced another verdict (noise, fresh seed).
    let replay_verdict = correct(11.0);
    let again = store
        .record_evaluation(&new_eval(run, Stage::Online, 0, &hash, &replay_verdict))
        .unwrap();
    assert!(!again.is_new);
    assert_eq!(again.evaluation, first.evaluation);
    assert_eq!(store.budget_spent(run, "add", Stage::Online).unwrap(), 1);
    let op = store.operator(run, "add").unwrap().unwrap();
    assert_eq!((op.budget, op.spent), (5, 1));
    assert_eq!(
        op.stages,
        vec![(Stage::Rewind, 2, 0), (Stage::Online, 3, 1)]
    );

    // Same key, another source: refused, nothing charged.
    let other = store.put_source("kernel B").unwrap();
    let err = store
        .record_evaluation(&new_eval(run, Stage::Online, 0, &other, &verdict))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::KeyConflict { index: 0, .. }),
        "{err}"
    );
    assert_eq!(store.budget_spent(run, "add", Stage::Online).unwrap(), 1);
}

#[test]
fn budget_limits_and_unknown_keys_are_errors() {
    let (_dir, store, run) = setup();
    let hash = store.put_source("kernel").unwrap();
    let v = Verdict::Timeout { after_ms: 1 };
    let err = store
        .record_evaluation(&new_eval(run, Stage::Rewind, 2, &hash, &v))
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::OverBudget {
                index: 2,
                budget: 2,
                stage: Stage::Rewind,
                ..
            }
        ),
        "{err}"
    );
    let mut unknown_op = new_eval(run, Stage::Online, 0, &hash, &v);
    unknown_op.op = "mul";
    assert!(matches!(
        store.record_evaluation(&unknown_op),
        Err(StoreError::UnknownOperator { .. })
    ));
    let missing = SourceHash::of("never stored");
    assert!(matches!(
        store.record_evaluation(&new_eval(run, Stage::Online, 0, &missing, &v)),
        Err(StoreError::MissingSource { .. })
    ));
    assert_eq!(store.budget_spent(run, "add", Stage::Online).unwrap(), 0);
    assert_eq!(store.operator(run, "add").unwrap().unwrap().spent, 0);
}

#[test]
fn queries_by_source_index_and_order() {
    let (_dir, store, run) = setup();
    let a = store.put_source("kernel A").unwrap();
    let b = store.put_source("kernel B").unwrap();
    assert_eq!(store.put_source("kernel A").unwrap(), a, "deduplicated");
    assert_eq!(store.get_source(&b).unwrap().as_deref(), Some("kernel B"));
    assert_eq!(store.get_source(&SourceHash::of("x")).unwrap(), None);

    let crash = Verdict::RuntimeError {
        kind: RuntimeErrorKind::Crash,
        message: "SIGSEGV".into(),
        location: None,
    };
    // Recorded out of order, as a worker pool would.
    store
        .record_evaluation(&new_eval(run, Stage::Online, 2, &a, &correct(9.0)))
        .unwrap();
    store
        .record_evaluation(&new_eval(run, Stage::Online, 0, &b, &crash))
        .unwrap();
    let mut high_seed = new_eval(run, Stage::Rewind, 1, &b, &crash);
    high_seed.seed = u64::MAX - 1;
    store.record_evaluation(&high_seed).unwrap();

    let rows = store.evaluations(run, "add").unwrap();
    let keys: Vec<(Stage, u32)> = rows.iter().map(|e| (e.stage, e.budget_index)).collect();
    assert_eq!(
        keys,
        vec![(Stage::Rewind, 1), (Stage::Online, 0), (Stage::Online, 2)]
    );
    assert_eq!(rows[0].seed, u64::MAX - 1);
    assert_eq!(
        store.recorded_indices(run, "add", Stage::Online).unwrap(),
        vec![0, 2]
    );
    assert_eq!(store.budget_spent(run, "add", Stage::Rewind).unwrap(), 1);
    assert_eq!(store.operator(run, "add").unwrap().unwrap().spent, 3);

    // The first evaluation of B is online #0 (recorded before rewind #1).
    let found = store.find_by_source(run, "add", &b).unwrap().unwrap();
    assert_eq!((found.stage, found.budget_index), (Stage::Online, 0));
    assert_eq!(found.verdict, crash);
    assert!(store.find_by_source(run, "mul", &b).unwrap().is_none());
    assert!(store
        .evaluation_at(run, "add", Stage::Online, 1)
        .unwrap()
        .is_none());

    // The latency columns hold the correct verdict's statistics.
    let median: Option<f64> = store
        .conn
        .query_row(
            "SELECT latency_median_us FROM evaluations WHERE budget_index = 2",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(median, Some(9.0));
}

#[test]
fn runs_and_operator_registration() {
    let (_dir, store, run) = setup();
    assert_eq!(
        store.run(run).unwrap().config,
        serde_json::json!({"device": "sim"})
    );
    store.set_run_status(run, RunStatus::Failed).unwrap();
    assert_eq!(store.run(run).unwrap().status, RunStatus::Failed);
    assert_eq!(store.resume_run(run).unwrap().status, RunStatus::Running);
    assert!(matches!(
        store.resume_run(RunId(99)),
        Err(StoreError::UnknownRun { .. })
    ));
    assert_eq!(store.runs().unwrap().len(), 1);

    // Same budgets (in any order): fine; other budgets: refused.
    store
        .register_operator(run, "add", "L1", &[(Stage::Online, 3), (Stage::Rewind, 2)])
        .unwrap();
    let err = store
        .register_operator(
            run,
            "add",
            "L1",
            &[(Stage::Rewind, 20), (Stage::Online, 210)],
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::BudgetMismatch { .. }), "{err}");
    assert!(matches!(
        store.register_operator(RunId(99), "add", "L1", &[(Stage::Online, 1)]),
        Err(StoreError::UnknownRun { .. })
    ));
}

#[test]
fn llm_calls_are_recorded_listed_and_found_by_request_hash() {
    let dir = TempDir::new().unwrap();
    let store = RunStore::open(&dir.path().join("runs.db")).unwrap();
    let run = store.create_run(&serde_json::json!({})).unwrap();
    let call = |status: &'static str, response: Option<&'static str>, attempt: u32| NewLlmCall {
        run,
        op: "add_custom",
        role: "rewriter",
        request: "{\"model\":\"m\"}",
        response,
        status,
        attempt,
        prompt_tokens: if status == "ok" { 100 } else { 0 },
        completion_tokens: if status == "ok" { 20 } else { 0 },
        cost: (status == "ok").then_some(0.25),
        latency_ms: 12,
        request_hash: "h1",
    };
    let a = store
        .record_llm_call(&call("http_429", Some("slow"), 1))
        .unwrap();
    let b = store
        .record_llm_call(&call("ok", Some("{\"first\":1}"), 2))
        .unwrap();
    let c = store
        .record_llm_call(&call("ok", Some("{\"second\":2}"), 1))
        .unwrap();
    assert!(a < b && b < c);
    let rows = store.llm_calls(run).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].status, "http_429");
    assert_eq!(rows[1].prompt_tokens, 100);
    assert_eq!(rows[1].cost, Some(0.25));
    assert_eq!(rows[0].cost, None);
    assert_eq!(
        store.find_llm_response("h1").unwrap().as_deref(),
        Some("{\"second\":2}")
    );
    assert_eq!(store.find_llm_response("nope").unwrap(), None);
    let usage = store.llm_usage(run).unwrap();
    assert_eq!((usage.calls, usage.ok), (3, 2));
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (200, 40));
    assert!((usage.cost - 0.5).abs() < 1e-12);
    assert_eq!(
        store.llm_usage(RunId(run.0 + 7)).unwrap(),
        LlmUsage::default()
    );
    assert!(store.llm_calls(RunId(run.0 + 7)).unwrap().is_empty());
    assert!(matches!(
        store.record_llm_call(&NewLlmCall {
            run: RunId(run.0 + 7),
            ..call("ok", None, 1)
        }),
        Err(StoreError::UnknownRun { .. })
    ));
}
