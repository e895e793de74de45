//! The LLM proposer end to end against a scripted OpenAI-protocol server on
//! loopback (real HTTP, recorded replies), with the real evaluation
//! pipeline (g++ build, hardened correctness, deterministic simulator
//! profile) and the real run store and bank:
//!
//! - Rewind with the LLM inverse agent removes double buffering from
//!   ops/add_custom (a real SEARCH/REPLACE on its source), the LLM
//!   distiller writes the entry, and the bank holds it;
//! - Stage I with the LLM diagnoser and rewriter re-applies it to the weak
//!   kernel and the rewrite is accepted, after every fault of the issue
//!   (429 with Retry-After, 500, a time-out, malformed JSON, an answer with
//!   no edit block, an edit that does not apply), with the budget and the
//!   run store consistent afterwards;
//! - a missing key or an unreachable endpoint is a clear error before any
//!   budget is spent;
//! - the tiling mutator's edits are confined to the tiling region.

use crate::llm_common;
use ascendopt_testkit::llm_server as server;
use llm_common::{add_custom_with_cases, device};

use ascendopt_agent::attempts::Tried;
use ascendopt_agent::llm::{self, LlmDiagnoser, LlmDistiller, LlmProposer, StoreCallLog};
use ascendopt_agent::proposer::{Feedback, Proposer, TilingEditRequest};
use ascendopt_agent::refine::{refine, RefineConfig};
use ascendopt_agent::rewind::{rewind_operator, RewindConfig};
use ascendopt_agent::session::{Action, OpSession, Phase, RunContext};
use ascendopt_agent::AgentError;
use ascendopt_bank::retrieval::Lexical;
use ascendopt_bank::store::{Bank, EntryFilter};
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunStore, Stage};
use ascendopt_llm::client::LlmClient;
use ascendopt_llm::config::{LlmConfig, LlmSettings, ReplayMode};
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use server::{dead_base_url, Scripted, ScriptedServer};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A tail case and 48 cores x 8 tiles of 32 KB (with fewer tiles per core
/// the simulator shows no gain from double buffering on this kernel).
fn cases() -> String {
    ascendopt_testkit::binary_cases(48, 131072)
}

const HOST: &str = "op_host/add_custom.cpp";
const DB_LINE: &str = "constexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2";
const TILE_LINE: &str =
    "constexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2";
const SB_LINE: &str = "constexpr uint32_t BUFFER_NUM = 1;          // ascendopt:knob choices=1,2";

/// ops/add_custom with the small cases, under `root/<name>/add_custom`;
/// `weak` switches double buffering off.
fn package(root: &Path, name: &str, weak: bool) -> OpPackage {
    let dir = root.join(name).join("add_custom");
    add_custom_with_cases(&dir, &cases());
    if weak {
        let host = std::fs::read_to_string(dir.join(HOST)).unwrap();
        assert!(host.contains(DB_LINE), "add_custom's host code changed");
        std::fs::write(dir.join(HOST), host.replace(DB_LINE, SB_LINE)).unwrap();
    }
    OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap()
}

fn llm_config(base: &str) -> LlmConfig {
    LlmConfig::from_settings(LlmSettings {
        base_url: Some(base.to_string()),
        model: Some("scripted".into()),
        timeout_s: Some(0.5),
        retries: Some(3),
        backoff_ms: Some(10),
        backoff_max_ms: Some(3000),
        price_input_per_mtok: Some(0.28),
        price_output_per_mtok: Some(0.42),
        ..LlmSettings::default()
    })
    .unwrap()
}

fn client(base: &str, store: &Path, run: ascendopt_harness::store::RunId) -> Arc<LlmClient> {
    let log = Arc::new(StoreCallLog::open(store, run).unwrap());
    let c = LlmClient::with_key(llm_config(base), Some("sk-test".into()), log).unwrap();
    c.preflight().unwrap();
    Arc::new(c)
}

fn edit(search: &str, replace: &str) -> String {
    format!("{HOST}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}

const DISTILLED: &str = r#"Here is the entry:
```json
{"title": "Double-buffer the tile queues",
 "bottleneck": "MTE2 copy-in, vector compute and MTE3 copy-out of successive tiles serialise: one buffer per queue",
 "reuse_when": ["a tile loop streams several tiles per core through TQue queues"],
 "avoid_when": ["each core handles a single tile"],
 "expected_effect": "copy of tile i+1 overlaps compute of tile i",
 "keywords": ["double buffering", "BUFFER_NUM"]}
```"#;

const DIAGNOSED: &str = r#"{"kind": "mte2_bound_no_overlap", "bottleneck": "copy-in, compute and copy-out do not overlap: the queues hold a single buffer", "reasoning": "low busy ratios on every pipe; BUFFER_NUM = 1", "motifs": ["double_buffer"]}"#;

#[test]
fn rewind_and_stage1_with_the_llm_proposer_through_every_fault() {
    let tmp = tempfile::tempdir().unwrap();
    let store_path = tmp.path().join("runs.sqlite");
    let store = RunStore::open(&store_path).unwrap();
    let dev = device();
    let bank = Bank::open(&tmp.path().join("bank.sqlite")).unwrap();
    let server = ScriptedServer::start(Vec::new());

    // ---- Rewind: the inverse agent removes double buffering. ----
    let run = store
        .create_run(&serde_json::json!({"test": "rewind"}))
        .unwrap();
    let ctx = RunContext {
        device: &dev,
        store: &store,
        run,
        pipeline: PipelineConfig {
            repeats: 10,
            deterministic: true,
            seed: 11,
        },
        compare: CompareConfig::RECOMMENDED,
        workdir: tmp.path().join("work-rewind"),
    };
    let strong = package(tmp.path(), "strong", false);
    server.push(vec![
        Scripted::content_with_usage(
            &format!(
                "MOTIF: double_buffer\nSUMMARY: one buffer per queue (BUFFER_NUM 2 -> 1)\n\n{}",
                edit(DB_LINE, SB_LINE)
            ),
            3000,
            200,
        ),
        Scripted::content_with_usage(DISTILLED, 1500, 150),
    ]);
    let c = client(&server.base_url(), &store_path, run);
    let mut proposer = LlmProposer::new(c.clone());
    let mut distiller = LlmDistiller::new(c.clone());
    let outcome = rewind_operator(
        &ctx,
        &strong,
        &mut proposer,
        &mut distiller,
        &bank,
        &RewindConfig {
            budget: 4,
            seed: 0,
            max_chain: 1,
            created_ms: Some(1),
        },
    )
    .unwrap();
    assert_eq!(outcome.kept.len(), 1, "{outcome:#?}");
    let kept = &outcome.kept[0];
    assert_eq!(kept.motif, "double_buffer");
    assert!(kept.slow_us > kept.fast_us, "{kept:?}");
    assert_eq!(outcome.spent, 2);
    let entries = bank.list(&EntryFilter::all()).unwrap();
    assert_eq!(entries.len(), 1);
    let e = &entries[0].entry;
    assert_eq!(e.title, "Double-buffer the tile queues");
    assert_eq!(e.motif, "double_buffer");
    assert!(e.diff.contains(&format!("-{SB_LINE}")), "{}", e.diff);
    assert!(e.diff.contains(&format!("+{DB_LINE}")), "{}", e.diff);
    assert!(
        e.applicability.reuse_when[0].contains("single-buffer"),
        "{:?}",
        e.applicability
    );
    assert!(e.keywords.iter().any(|k| k == "double_buffer"));
    // The inverse prompt carried the motif menu, the API list and the code.
    let posts = server.posts();
    let inverse = posts[0].last_user_message();
    assert!(inverse.contains("- double_buffer:"), "{inverse}");
    assert!(inverse.contains("DataCopyPad") && inverse.contains("NOT available"));
    assert!(inverse.contains(DB_LINE));
    assert!(posts[1]
        .last_user_message()
        .contains(&format!("+{DB_LINE}")));
    let calls = store.llm_calls(run).unwrap();
    let roles: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.role.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(roles, [("inverse", "ok"), ("distiller", "ok")]);
    assert_eq!(calls[0].prompt_tokens, 3000);
    assert!((calls[0].cost.unwrap() - (3000.0 * 0.28 + 200.0 * 0.42) / 1e6).abs() < 1e-12);
    assert!(calls.iter().all(|c| c.op == "add_custom"));

    // ---- Stage I on the weak kernel, through every fault. ----
    let run2 = store
        .create_run(&serde_json::json!({"test": "stage1"}))
        .unwrap();
    let ctx2 = RunContext {
        run: run2,
        workdir: tmp.path().join("work-stage1"),
        ..ctx
    };
    let weak = package(tmp.path(), "weak", true);
    let entry_id = entries[0].id.0;
    server.push(vec![
        // Diagnosis: rate-limited once, then an answer.
        Scripted::status(429, "{\"error\":{\"message\":\"rate limit\"}}")
            .header("Retry-After", "1"),
        Scripted::content(DIAGNOSED),
        // Rewrite: a 500, a time-out, malformed JSON, then an answer with
        // no edit block (charged), ...
        Scripted::status(500, "{\"error\":\"internal\"}"),
        Scripted::content("slow").delayed(Duration::from_millis(1500)),
        Scripted::status(200, "{\"choices\": [{\"message\": {\"content\": \"trunc"),
        Scripted::content("ENTRIES: none\nSUMMARY: thinking\nI would double-buffer the queues."),
        // ... an edit whose SEARCH text is not in the file (charged), ...
        Scripted::content(&format!(
            "ENTRIES: {entry_id}\nSUMMARY: two buffers\n{}",
            edit(
                "constexpr uint32_t BUFFERS = 1;",
                "constexpr uint32_t BUFFERS = 2;"
            )
        )),
        // ... then the right one.
        Scripted::content(&format!(
            "ENTRIES: {entry_id}\nSUMMARY: two buffers per queue\n{}",
            edit(SB_LINE, DB_LINE)
        )),
        // The next round's diagnosis holds no JSON: the rules stand in.
        Scripted::content("The kernel looks fine to me."),
        // No retrieved entry applies any more: past the bank, the
        // rewriter works from the diagnosis alone; its smaller tiles are
        // correct and slower, and the allowance is used.
        Scripted::content(&format!(
            "ENTRIES: none\nSUMMARY: smaller tiles\n{}",
            edit(TILE_LINE, &TILE_LINE.replace("32768", "16384"))
        )),
    ]);
    let c2 = client(&server.base_url(), &store_path, run2);
    let mut proposer = LlmProposer::new(c2.clone());
    proposer.repairs = 2;
    let mut diagnoser = LlmDiagnoser::new(c2.clone());
    let mut session = OpSession::open(
        &ctx2,
        &weak,
        BudgetConfig {
            rewind: 0,
            online: 8,
        },
    )
    .unwrap();
    let weak_sources = Sources::load(&weak.dir).unwrap();
    let baseline = session
        .evaluate(
            Phase::Baseline,
            &weak_sources,
            Action {
                proposer: "input".into(),
                summary: "the input kernel".into(),
                ..Action::default()
            },
        )
        .unwrap();
    assert!(baseline.is_correct());
    let weak_us = baseline.latency_us().unwrap();
    let mut tried = Tried::new();
    let refined = refine(
        &mut session,
        Some(&bank),
        &Lexical,
        &mut proposer,
        &mut diagnoser,
        baseline,
        &RefineConfig {
            max_attempts: 4,
            k: 3,
            use_bank: true,
            stagnation: None,
        },
        &mut tried,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(refined.steps.len(), 1, "{:#?}", session.log());
    let step = &refined.steps[0];
    assert_eq!(step.action.proposer, "llm");
    assert_eq!(step.action.motif.as_deref(), Some("double_buffer"));
    assert_eq!(step.action.entries, [entry_id]);
    assert!(step.after_us < weak_us);
    assert_eq!(
        refined.incumbent.sources.get(HOST).unwrap(),
        strong_host(&strong)
    );
    assert_eq!(refined.diagnoses.len(), 2);
    assert_eq!(refined.diagnoses[0].kind, "mte2_bound_no_overlap");
    assert!(refined.diagnoses[1].rule.starts_with("llm answer unusable"));
    assert_eq!(refined.stopped, "allowance used");

    // The log: baseline, two charged failures, the accepted rewrite, the
    // rewrite past the bank.
    let verdicts: Vec<(&str, bool)> = session
        .log()
        .iter()
        .map(|e| (e.verdict.as_str(), e.accepted))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("correct", false),
            ("no_edit", false),
            ("no_edit", false),
            ("correct", true),
            ("correct", false)
        ]
    );
    assert_eq!(session.log()[4].action.summary, "smaller tiles");
    assert!(session.log()[4].action.entries.is_empty());
    assert!(session.log()[1]
        .reason
        .contains("no SEARCH/REPLACE edit block"));
    assert!(session.log()[2].reason.contains("not found"));
    // Budget and store agree.
    assert_eq!(session.spent(Stage::Online), 5);
    assert_eq!(
        store
            .budget_spent(run2, "add_custom", Stage::Online)
            .unwrap(),
        5
    );
    let evals = store.evaluations(run2, "add_custom").unwrap();
    assert_eq!(evals.len(), 5);
    let indices: Vec<u32> = evals.iter().map(|e| e.budget_index).collect();
    assert_eq!(indices, [0, 1, 2, 3, 4]);
    assert!(
        evals[1].verdict.label().contains("no applicable edit")
            || evals[1].verdict.kind() == "rejected_static"
    );
    // Every attempt is in llm_calls, tokens only on answers.
    let calls = store.llm_calls(run2).unwrap();
    let seen: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.role.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("diagnoser", "http_429"),
            ("diagnoser", "ok"),
            ("rewriter", "http_500"),
            ("rewriter", "timeout"),
            ("rewriter", "malformed"),
            ("rewriter", "ok"),
            ("rewriter", "ok"),
            ("rewriter", "ok"),
            ("diagnoser", "ok"),
            ("rewriter", "ok"),
        ]
    );
    assert!(calls
        .iter()
        .all(|c| (c.status == "ok") == (c.prompt_tokens > 0)));
    // The reasons were fed back: the repair prompts quote them.
    let posts = server.posts();
    let n = posts.len();
    let repair1 = posts[n - 4].json();
    let repair2 = posts[n - 3].json();
    let last_user = |v: &serde_json::Value| {
        v["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(last_user(&repair1).contains("no SEARCH/REPLACE edit block"));
    assert!(last_user(&repair2).contains("not found"));
    // The rewriter prompt carried the retrieved entry and its diff.
    let rewriter_prompt = posts[n - 5].last_user_message();
    assert!(rewriter_prompt.contains(&format!("Entry {entry_id}")));
    assert!(rewriter_prompt.contains(&format!("+{DB_LINE}")));
    // Past the bank the prompt holds no entry.
    let unguided = posts[n - 1].last_user_message();
    assert!(
        !unguided.contains(&format!("Entry {entry_id}")),
        "{unguided}"
    );
    assert_eq!(server.remaining(), 0);

    // ---- Replay: the same Stage I from the store, with no endpoint. ----
    let run3 = store
        .create_run(&serde_json::json!({"test": "replay"}))
        .unwrap();
    let ctx3 = RunContext {
        run: run3,
        workdir: tmp.path().join("work-replay"),
        ..ctx2
    };
    let mut cfg = llm_config(&dead_base_url());
    cfg.replay = ReplayMode::Strict;
    let log = Arc::new(StoreCallLog::open(&store_path, run3).unwrap());
    let c3 = Arc::new(LlmClient::with_key(cfg, None, log).unwrap());
    c3.preflight().unwrap();
    let mut proposer = LlmProposer::new(c3.clone());
    proposer.repairs = 2;
    let mut diagnoser = LlmDiagnoser::new(c3);
    let mut session = OpSession::open(
        &ctx3,
        &weak,
        BudgetConfig {
            rewind: 0,
            online: 8,
        },
    )
    .unwrap();
    let baseline = session
        .evaluate(Phase::Baseline, &weak_sources, Action::default())
        .unwrap();
    let replayed = refine(
        &mut session,
        Some(&bank),
        &Lexical,
        &mut proposer,
        &mut diagnoser,
        baseline,
        &RefineConfig {
            max_attempts: 4,
            k: 3,
            use_bank: true,
            stagnation: None,
        },
        &mut Tried::new(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(replayed.steps.len(), 1);
    assert_eq!(replayed.steps[0].action, refined.steps[0].action);
    assert_eq!(session.spent(Stage::Online), 5);
    let calls = store.llm_calls(run3).unwrap();
    assert_eq!(calls.len(), 6, "{calls:#?}");
    assert!(calls.iter().all(|c| c.status == "replayed"));
    assert_eq!(
        server.posts().len(),
        n,
        "replay must not reach the endpoint"
    );
}

fn strong_host(strong: &OpPackage) -> String {
    std::fs::read_to_string(strong.dir.join(HOST)).unwrap()
}

#[test]
fn no_key_or_an_unreachable_endpoint_fails_before_any_budget_is_spent() {
    let tmp = tempfile::tempdir().unwrap();
    let store_path = tmp.path().join("runs.sqlite");
    let store = RunStore::open(&store_path).unwrap();
    let run = store.create_run(&serde_json::json!({})).unwrap();

    let mut cfg = llm_config("https://api.example.invalid/v1");
    cfg.api_key_env = "ASCENDOPT_LLM_E2E_SURELY_UNSET_KEY".into();
    let err = llm::connect(cfg, &store_path, run).unwrap_err();
    assert!(matches!(err, AgentError::Propose(_)), "{err}");
    assert!(
        err.to_string()
            .contains("ASCENDOPT_LLM_E2E_SURELY_UNSET_KEY"),
        "{err}"
    );

    let mut cfg = llm_config(&dead_base_url());
    cfg.api_key_env = "ASCENDOPT_LLM_E2E_SURELY_UNSET_KEY".into();
    cfg.allow_no_key = true;
    let err = llm::connect(cfg, &store_path, run).unwrap_err();
    assert!(err.to_string().contains("unreachable"), "{err}");

    assert!(store.llm_calls(run).unwrap().is_empty());
    assert!(store.operator(run, "add_custom").unwrap().is_none());
}

#[test]
fn tiling_edits_are_confined_to_the_tiling_region() {
    let tmp = tempfile::tempdir().unwrap();
    let store_path = tmp.path().join("runs.sqlite");
    let store = RunStore::open(&store_path).unwrap();
    let run = store.create_run(&serde_json::json!({})).unwrap();
    let strong = package(tmp.path(), "strong", false);
    let sources = Sources::load(&strong.dir).unwrap();
    let host = sources.get(HOST).unwrap();
    let end = host.find("// ascendopt:tiling-end").unwrap();
    let after_region = host[end..]
        .lines()
        .skip(1)
        .find(|l| !l.trim().is_empty())
        .unwrap();
    let server = ScriptedServer::start(vec![
        // Outside the region: rejected.
        Scripted::content(&format!(
            "SUMMARY: touch the rest\n{}",
            edit(after_region, &format!("{after_region} // edited"))
        )),
        // Inside: a different default tile size.
        Scripted::content(&format!(
            "SUMMARY: bigger tiles\n{}",
            edit(
                "constexpr uint32_t TILE_BYTES = 32768;",
                "constexpr uint32_t TILE_BYTES = 65536;"
            )
        )),
    ]);
    let c = client(&server.base_url(), &store_path, run);
    let mut proposer = LlmProposer::new(c);
    let proposals = proposer
        .tiling_edits(&TilingEditRequest {
            current: &sources,
            op: "add_custom",
            profile: None,
            feedback: &Feedback::default(),
        })
        .unwrap();
    assert_eq!(proposals.len(), 2);
    let err = proposals[0].candidate.as_ref().unwrap_err();
    assert!(err.reason.contains("outside"), "{err}");
    let ok = proposals[1].candidate.as_ref().unwrap();
    assert!(ok.get(HOST).unwrap().contains("TILE_BYTES = 65536;"));
    assert_eq!(proposals[1].action.summary, "bigger tiles");
    let prompt = server.posts()[0].last_user_message();
    assert!(prompt.contains("// ascendopt:tiling-begin"));
}

#[test]
fn edits_that_leave_the_sources_are_refused_and_cost_nothing() {
    // Hostile answers (issue 22): one edits op.toml through
    // `op_kernel/../op.toml` to drop the benchmark case, one writes
    // through `op_kernel/../../../tmp/...`. Neither reaches the disk, both
    // are logged with the reason, neither is charged.
    let tmp = tempfile::tempdir().unwrap();
    let store_path = tmp.path().join("runs.sqlite");
    let store = RunStore::open(&store_path).unwrap();
    let run = store.create_run(&serde_json::json!({})).unwrap();
    let dev = device();
    let ctx = RunContext {
        device: &dev,
        store: &store,
        run,
        pipeline: PipelineConfig {
            repeats: 5,
            deterministic: true,
            seed: 3,
        },
        compare: CompareConfig::RECOMMENDED,
        workdir: tmp.path().join("work"),
    };
    let weak = package(tmp.path(), "weak", true);
    let spec_before = std::fs::read_to_string(weak.dir.join("op.toml")).unwrap();
    let bench_case = "name = \"f16_bench\"";
    assert!(spec_before.contains(bench_case));
    let escape_name = format!("ascendopt-redteam-escape-{}", std::process::id());
    let block = |path: &str, search: &str, replace: &str| {
        format!("{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
    };
    let server = ScriptedServer::start(vec![
        Scripted::content(DIAGNOSED),
        Scripted::content(&format!(
            "SUMMARY: a faster spec\n{}",
            block("op_kernel/../op.toml", bench_case, "name = \"gone\"")
        )),
        Scripted::content(&format!(
            "SUMMARY: a note outside\n{}",
            block(
                &format!("op_kernel/../../../tmp/{escape_name}"),
                "",
                "owned"
            )
        )),
    ]);
    let c = client(&server.base_url(), &store_path, run);
    let mut proposer = LlmProposer::new(c.clone());
    proposer.repairs = 1;
    let mut diagnoser = LlmDiagnoser::new(c);
    let mut session = OpSession::open(
        &ctx,
        &weak,
        BudgetConfig {
            rewind: 0,
            online: 4,
        },
    )
    .unwrap();
    let sources = Sources::load(&weak.dir).unwrap();
    let baseline = session
        .evaluate(Phase::Baseline, &sources, Action::default())
        .unwrap();
    assert!(baseline.is_correct());
    let spent = session.spent(Stage::Online);
    let refined = refine(
        &mut session,
        None,
        &Lexical,
        &mut proposer,
        &mut diagnoser,
        baseline,
        &RefineConfig {
            max_attempts: 2,
            k: 3,
            use_bank: false,
            stagnation: None,
        },
        &mut Tried::new(),
        &mut |_| {},
    )
    .unwrap();
    assert!(refined.steps.is_empty());
    // Nothing charged, nothing evaluated.
    assert_eq!(session.spent(Stage::Online), spent);
    assert_eq!(
        store.evaluations(run, "add_custom").unwrap().len() as u32,
        spent
    );
    // Both logged as refused edits, with the reason.
    let refused: Vec<&str> = session
        .log()
        .iter()
        .filter(|e| e.verdict == "rejected_edit")
        .map(|e| e.reason.as_str())
        .collect();
    assert_eq!(refused.len(), 2, "{:#?}", session.log());
    assert!(refused[0].contains("op.toml"), "{}", refused[0]);
    assert!(refused[1].contains("tmp"), "{}", refused[1]);
    // The spec and the file system are untouched.
    assert_eq!(
        std::fs::read_to_string(weak.dir.join("op.toml")).unwrap(),
        spec_before
    );
    assert!(!Path::new("/tmp").join(&escape_name).exists());
    let mut stack = vec![tmp.path().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            assert_ne!(entry.file_name().to_string_lossy(), escape_name);
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
}

/// A model whose context is too small for the operator's prompts: Stage
/// I ends with the reason (no request is sent), Stage II searches the
/// tiling without the model's edits, and the optimisation finishes with
/// both stops recorded.
#[test]
fn a_prompt_too_long_for_the_model_ends_the_stage_and_the_run_goes_on() {
    use ascendopt_agent::optimize::{optimize_operator, OptimizeConfig};
    let tmp = tempfile::tempdir().unwrap();
    let store_path = tmp.path().join("runs.sqlite");
    let store = RunStore::open(&store_path).unwrap();
    let dev = device();
    let server = ScriptedServer::start(Vec::new());
    let run = store
        .create_run(&serde_json::json!({"test": "too-long"}))
        .unwrap();
    let ctx = RunContext {
        device: &dev,
        store: &store,
        run,
        pipeline: PipelineConfig {
            repeats: 1,
            deterministic: true,
            seed: 3,
        },
        compare: CompareConfig::RECOMMENDED,
        workdir: tmp.path().join("work"),
    };
    let pkg = package(tmp.path(), "long", false);
    let mut cfg = llm_config(&server.base_url());
    cfg.context_tokens = Some(1024);
    let log = Arc::new(StoreCallLog::open(&store_path, run).unwrap());
    let c = Arc::new(LlmClient::with_key(cfg, Some("sk-test".into()), log).unwrap());
    let mut proposer = LlmProposer::new(c.clone());
    let mut diagnoser = LlmDiagnoser::new(c);
    let mut session = OpSession::open(
        &ctx,
        &pkg,
        BudgetConfig {
            rewind: 0,
            online: 4,
        },
    )
    .unwrap();
    let out = optimize_operator(
        &mut session,
        None,
        &mut proposer,
        &mut diagnoser,
        &OptimizeConfig {
            budget: 4,
            ..OptimizeConfig::default()
        },
    )
    .unwrap();
    let stage1 = out.stops.iter().find(|s| s.stage == "stage1").unwrap();
    assert_eq!(stage1.attempts, 0, "{stage1:?}");
    assert!(
        stage1.reason.contains("cannot go on") && stage1.reason.contains("context"),
        "{stage1:?}"
    );
    let stage2 = out.stops.iter().find(|s| s.stage == "stage2").unwrap();
    assert!(stage2.attempts > 0, "{stage2:?}");
    assert!(stage2.reason.contains("tiling edits skipped"), "{stage2:?}");
    assert!(out.spent > 1, "{out:?}");
    assert!(server.posts().is_empty());
}
