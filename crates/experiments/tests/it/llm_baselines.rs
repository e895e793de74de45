//! The baselines at equal budget, through the real evaluation pipeline:
//! best-of-N with the built-in sampler and with the LLM, and the
//! coder-plus-judge loop against a scripted OpenAI-protocol server.

use crate::llm_common;
use ascendopt_testkit::llm_server as server;
use llm_common::{add_custom_with_cases, device};

use ascendopt_agent::builtin::BuiltinProposer;
use ascendopt_agent::llm::{LlmProposer, StoreCallLog};
use ascendopt_agent::session::{OpSession, RunContext};
use ascendopt_experiments::baselines::{best_of_n, coder_judge};
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunStore, Stage};
use ascendopt_llm::client::LlmClient;
use ascendopt_llm::config::{LlmConfig, LlmSettings};
use ascendopt_op::package::OpPackage;
use server::{Scripted, ScriptedServer};
use std::path::Path;
use std::sync::Arc;

const HOST: &str = "op_host/add_custom.cpp";
const TILE: &str = "constexpr uint32_t TILE_BYTES = 32768;";

fn package(root: &Path) -> OpPackage {
    add_custom_with_cases(
        &root.join("add_custom"),
        &ascendopt_testkit::binary_cases(48, 32768),
    )
}

fn pipeline() -> PipelineConfig {
    PipelineConfig {
        repeats: 10,
        deterministic: true,
        seed: 5,
    }
}

fn client(base: &str, store: &Path, run: ascendopt_harness::store::RunId) -> Arc<LlmClient> {
    let cfg = LlmConfig::from_settings(LlmSettings {
        base_url: Some(base.into()),
        model: Some("scripted".into()),
        retries: Some(0),
        ..LlmSettings::default()
    })
    .unwrap();
    let log = Arc::new(StoreCallLog::open(store, run).unwrap());
    Arc::new(LlmClient::with_key(cfg, Some("k".into()), log).unwrap())
}

fn tile_edit(bytes: u32) -> String {
    format!(
        "SUMMARY: tiles of {bytes} bytes\n{HOST}\n<<<<<<< SEARCH\n{TILE}\n=======\nconstexpr uint32_t TILE_BYTES = {bytes};\n>>>>>>> REPLACE\n"
    )
}

#[test]
fn best_of_n_with_the_builtin_sampler_spends_exactly_its_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let store = RunStore::open(&tmp.path().join("runs.sqlite")).unwrap();
    let run = store.create_run(&serde_json::json!({})).unwrap();
    let dev = device();
    let ctx = RunContext {
        device: &dev,
        store: &store,
        run,
        pipeline: pipeline(),
        compare: CompareConfig::RECOMMENDED,
        workdir: tmp.path().join("work"),
    };
    let pkg = package(tmp.path());
    let mut session = OpSession::open(
        &ctx,
        &pkg,
        BudgetConfig {
            rewind: 0,
            online: 4,
        },
    )
    .unwrap();
    let outcome = best_of_n(&mut session, &mut BuiltinProposer::new(3), 4, 3).unwrap();
    assert_eq!(outcome.method, "bon");
    assert_eq!(outcome.spent, 4);
    assert_eq!(outcome.log.len(), 4);
    assert!(outcome.log[1..]
        .iter()
        .all(|e| e.action.proposer == "random"));
    assert!(outcome.log[1..]
        .iter()
        .all(|e| e.action.summary.starts_with("random sample")));
    // Four different candidates were judged (samples are deduplicated).
    let hashes: std::collections::BTreeSet<&str> =
        outcome.log.iter().map(|e| e.source_hash.as_str()).collect();
    assert_eq!(hashes.len(), 4);
    let base = outcome.baseline_us.unwrap();
    assert!(outcome.final_us.unwrap() <= base);
    assert_eq!(
        outcome.steps.len(),
        outcome.log.iter().filter(|e| e.accepted).count() - 1
    );
    assert_eq!(
        store
            .budget_spent(run, "add_custom", Stage::Online)
            .unwrap(),
        4
    );
    assert_eq!(outcome.curve.len(), 4);
}

#[test]
fn coder_judge_and_llm_best_of_n_against_a_scripted_endpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let store_path = tmp.path().join("runs.sqlite");
    let store = RunStore::open(&store_path).unwrap();
    let dev = device();
    let pkg = package(tmp.path());

    // ---- coder + judge: 3 evaluations = the input and two rounds. ----
    let run = store
        .create_run(&serde_json::json!({"m": "judge"}))
        .unwrap();
    let ctx = RunContext {
        device: &dev,
        store: &store,
        run,
        pipeline: pipeline(),
        compare: CompareConfig::RECOMMENDED,
        workdir: tmp.path().join("work-judge"),
    };
    let server = ScriptedServer::start(vec![
        Scripted::content(
            r#"{"bottleneck": "MTE2 busy 90%", "method": "larger tiles", "plan": "raise TILE_BYTES"}"#,
        ),
        Scripted::content("SUMMARY: I will raise the tile size.\nNo code today."),
        Scripted::content(
            r#"{"critical_issue": "no edit block", "why_it_matters": "nothing was built", "minimal_fix_hint": "send one SEARCH/REPLACE block"}"#,
        ),
        Scripted::content(&tile_edit(16384)),
    ]);
    let c = client(&server.base_url(), &store_path, run);
    let mut session = OpSession::open(
        &ctx,
        &pkg,
        BudgetConfig {
            rewind: 0,
            online: 3,
        },
    )
    .unwrap();
    let outcome = coder_judge(&mut session, &c, 3).unwrap();
    assert_eq!(outcome.method, "judge");
    assert_eq!(outcome.spent, 3);
    let verdicts: Vec<&str> = outcome.log.iter().map(|e| e.verdict.as_str()).collect();
    assert_eq!(verdicts, ["correct", "no_edit", "correct"]);
    assert_eq!(outcome.log[2].action.summary, "tiles of 16384 bytes");
    let posts = server.posts();
    assert_eq!(posts.len(), 4);
    let judge2 = posts[2].last_user_message();
    assert!(judge2.contains("FAILED"), "{judge2}");
    assert!(judge2.contains("no SEARCH/REPLACE edit block"), "{judge2}");
    // The judge read the profile of the best kernel.
    assert!(posts[0].last_user_message().contains("Task Duration(us)"));
    let coder2 = posts[3].last_user_message();
    assert!(coder2.contains("minimal_fix_hint"), "{coder2}");
    let roles: Vec<String> = store
        .llm_calls(run)
        .unwrap()
        .into_iter()
        .map(|c| c.role)
        .collect();
    assert_eq!(roles, ["judge", "coder", "judge", "coder"]);
    assert_eq!(
        store
            .budget_spent(run, "add_custom", Stage::Online)
            .unwrap(),
        3
    );

    // ---- best-of-N with the LLM: each sample asks about the input. ----
    let run2 = store.create_run(&serde_json::json!({"m": "bon"})).unwrap();
    let ctx2 = RunContext {
        run: run2,
        workdir: tmp.path().join("work-bon"),
        ..ctx
    };
    server.push(vec![
        Scripted::content("no blocks here"),
        Scripted::content(&tile_edit(8192)),
        Scripted::content(&tile_edit(16384)),
    ]);
    let c2 = client(&server.base_url(), &store_path, run2);
    let mut proposer = LlmProposer::new(c2);
    let mut session = OpSession::open(
        &ctx2,
        &pkg,
        BudgetConfig {
            rewind: 0,
            online: 4,
        },
    )
    .unwrap();
    let outcome = best_of_n(&mut session, &mut proposer, 4, 0).unwrap();
    assert_eq!(outcome.spent, 4);
    let verdicts: Vec<&str> = outcome.log.iter().map(|e| e.verdict.as_str()).collect();
    assert_eq!(verdicts, ["correct", "no_edit", "correct", "correct"]);
    // The third sample started from the input again, not from the second.
    let posts = server.posts();
    let third = posts.last().unwrap().last_user_message();
    assert!(third.contains(TILE), "samples must be independent");
    assert_eq!(server.remaining(), 0);
}
