//! The benchmark with the LLM agents against the scripted OpenAI-protocol
//! server on loopback: every method run's LLM calls land in that run's
//! `llm_calls` rows (and Rewind's in the Rewind run), none in a detached
//! run, and `results.json` sums tokens and cost per run.

use crate::llm_common;
use ascendopt_testkit::llm_server as server;
use llm_common::add_custom_with_cases;

use ascendopt_agent::factory::{AgentFactory, LlmAgents};
use ascendopt_agent::llm;
use ascendopt_agent::optimize::Method;
use ascendopt_experiments::bench::{run_bench, BenchConfig, BenchMethod};
use ascendopt_experiments::report::results::Results;
use ascendopt_harness::store::RunStore;
use ascendopt_llm::config::{LlmConfig, LlmSettings};
use ascendopt_op::package::OpPackage;
use server::{Scripted, ScriptedServer};
use std::path::Path;

fn package(root: &Path) -> OpPackage {
    add_custom_with_cases(
        &root.join("ops").join("add_custom"),
        &ascendopt_testkit::binary_cases(8, 4096),
    )
}

fn config(base: &str, embeddings: bool) -> LlmConfig {
    LlmConfig::from_settings(LlmSettings {
        base_url: Some(base.into()),
        model: Some("scripted".into()),
        embedding_model: embeddings.then(|| "toy-embed".to_string()),
        allow_no_key: Some(true),
        api_key_env: Some("ASCENDOPT_LLM_BENCH_TEST_SURELY_UNSET_KEY".into()),
        retries: Some(0),
        price_input_per_mtok: Some(1.0),
        price_output_per_mtok: Some(2.0),
        ..LlmSettings::default()
    })
    .unwrap()
}

#[test]
fn every_method_run_holds_its_own_llm_calls_and_the_results_sum_them() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bench");
    std::fs::create_dir_all(&out).unwrap();
    let store_path = out.join("runs.sqlite");
    // The model never proposes an applicable edit: every proposal is a
    // charged failure (no build), every diagnosis falls back to the rules.
    let server = ScriptedServer::start(
        (0..200)
            .map(|_| Scripted::content_with_usage("SUMMARY: no change\nLooks fine.", 100, 10))
            .collect(),
    );
    // As the CLI does: the client is checked and made before any run.
    let (client, _log) =
        llm::connect_detached(config(&server.base_url(), false), &store_path).unwrap();
    let agents = LlmAgents::new(client);
    let mut cfg = BenchConfig::new(
        vec![BenchMethod::BestOfN, BenchMethod::Optimize(Method::Full)],
        vec![package(tmp.path())],
        out.clone(),
    );
    cfg.budget = 5;
    cfg.rewind_budget = 2;
    cfg.repeats = 3;
    cfg.deterministic = true;
    let report = run_bench(&cfg, &llm_common::device(), &agents, &|_| {}).unwrap();

    let store = RunStore::open(&store_path).unwrap();
    let runs = store.runs().unwrap();
    assert!(
        runs.iter().all(|r| r.config.get("llm_calls").is_none()),
        "no call may go to a detached run: {runs:#?}"
    );
    let usage = &report.results.meta.llm_usage;
    let names: Vec<&str> = usage.iter().map(|u| u.method.as_str()).collect();
    assert_eq!(names, ["rewind", "bon", "full"]);
    let mut total_rows = 0;
    for u in usage {
        let calls = store
            .llm_calls(ascendopt_harness::store::RunId(u.run))
            .unwrap();
        assert!(!calls.is_empty(), "{}: no calls", u.method);
        assert_eq!(u.rows, calls.len() as u64);
        assert_eq!(
            u.requests,
            calls.iter().filter(|c| c.status == "ok").count() as u64
        );
        assert_eq!(u.prompt_tokens, 100 * u.requests, "{u:?}");
        assert_eq!(u.completion_tokens, 10 * u.requests);
        assert_eq!(u.embedding_tokens, 0);
        let cost = u.cost.unwrap();
        assert!((cost - u.requests as f64 * (100.0 + 20.0) / 1e6).abs() < 1e-12);
        assert!(calls.iter().all(|c| c.op == "add_custom"));
        total_rows += calls.len();
        let roles: std::collections::BTreeSet<&str> =
            calls.iter().map(|c| c.role.as_str()).collect();
        match u.method.as_str() {
            "rewind" => assert!(roles.contains("inverse"), "{roles:?}"),
            "bon" => assert!(!roles.contains("inverse") && !roles.contains("diagnoser")),
            "full" => assert!(!roles.contains("inverse"), "{roles:?}"),
            other => panic!("{other}"),
        }
        // The run is the method's run.
        if u.method != "rewind" {
            assert!(report
                .results
                .meta
                .runs
                .contains(&(u.method.clone(), u.run)));
        }
    }
    // Every request the server answered is in exactly one run.
    assert_eq!(total_rows, server.posts().len());
    // results.json carries the same rows.
    let json: Results =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(&json.meta.llm_usage, usage);
}

#[test]
fn a_run_scoped_factory_records_embeddings_in_its_run() {
    let tmp = tempfile::tempdir().unwrap();
    let store_path = tmp.path().join("runs.sqlite");
    let server = ScriptedServer::start_with_embedder(Vec::new(), |inputs| {
        inputs.iter().map(|t| vec![t.len() as f32, 1.0]).collect()
    });
    let (client, _log) =
        llm::connect_detached(config(&server.base_url(), true), &store_path).unwrap();
    let agents = LlmAgents::embeddings_only(client);
    assert_eq!(agents.name(), "builtin+embed:toy-embed");
    assert!(agents.llm_client().is_none());
    let store = RunStore::open(&store_path).unwrap();
    let run = store.create_run(&serde_json::json!({"m": 1})).unwrap();
    let scoped = agents.for_run(&store_path, run).unwrap().unwrap();
    assert_eq!(scoped.name(), agents.name());
    assert_eq!(scoped.proposer(1).unwrap().name(), "builtin");
    let dense = scoped.dense().unwrap();
    let v = dense.client().embed("op", &["abc".to_string()]).unwrap();
    assert_eq!(v.vectors, [vec![3.0, 1.0]]);
    let calls = store.llm_calls(run).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (calls[0].role.as_str(), calls[0].status.as_str()),
        ("embeddings", "ok")
    );
    assert_eq!(store.runs().unwrap().len(), 1, "nothing detached");
}
