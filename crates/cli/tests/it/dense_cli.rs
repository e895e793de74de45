//! `ascendopt optimize` with dense retrieval through the binary: the
//! built-in proposer with `--llm-embedding-model` against the scripted
//! OpenAI-protocol server on loopback (`/v1/embeddings` answered with a toy
//! embedding). The endpoint is checked before the run, Stage I's retrieval
//! embeds through it, and the calls are in the run's `llm_calls`; with an
//! unreachable endpoint the command fails before any run exists.

use ascendopt_testkit::llm_server as server;

use ascendopt_bank::entry::{family_of, Applicability, Entry, Origin, Provenance, SourceOp};
use ascendopt_bank::store::Bank;
use ascendopt_harness::store::RunStore;
use server::{dead_base_url, ScriptedServer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weak_add_custom(root: &Path) -> PathBuf {
    let dir = root.join("add_custom");
    ascendopt_testkit::with_cases(
        "add_custom",
        &dir,
        &ascendopt_testkit::binary_cases(8, 4096),
    );
    let host_path = dir.join("op_host/add_custom.cpp");
    let host = std::fs::read_to_string(&host_path).unwrap();
    let weak = host.replace("BUFFER_NUM = 2;", "BUFFER_NUM = 1;");
    assert_ne!(host, weak);
    std::fs::write(&host_path, weak).unwrap();
    dir
}

fn bank(path: &Path) {
    let bank = Bank::open(path).unwrap();
    for (title, bottleneck) in [
        (
            "Two buffers per queue",
            "copy-in waits for compute: one buffer",
        ),
        ("Overlap copies", "copies do not overlap compute"),
    ] {
        bank.insert(&Entry {
            title: title.into(),
            bottleneck: bottleneck.into(),
            applicability: Applicability {
                reuse_when: vec![],
                avoid_when: vec![],
            },
            expected_effect: "faster".into(),
            diff: "--- a/k\n+++ b/k\n@@ -1 +1 @@\n-BUFFER_NUM = 1\n+BUFFER_NUM = 2\n".into(),
            motif: "double_buffer".into(),
            family: family_of("double_buffer").unwrap().into(),
            source: SourceOp {
                op: "other".into(),
                level: Some(1),
            },
            slow_us: Some(2.0),
            fast_us: Some(1.0),
            profile_moved: BTreeMap::new(),
            signature: None,
            keywords: vec![],
            provenance: Provenance {
                created_ms: 0,
                origin: Origin::Manual,
                evidence: vec![],
            },
        })
        .unwrap();
    }
    bank.freeze().unwrap();
}

fn optimize(op: &Path, bank: &Path, out: &Path, base_url: &str) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
    c.arg("optimize")
        .arg(op)
        .arg("--bank")
        .arg(bank)
        .args([
            "--budget",
            "3",
            "--stages",
            "1",
            "--deterministic",
            "--repeats",
            "3",
            "--llm-base-url",
            base_url,
            "--llm-embedding-model",
            "toy-embed",
            "--llm-allow-no-key",
            "--llm-api-key-env",
            "ASCENDOPT_DENSE_CLI_TEST_SURELY_UNSET_KEY",
        ])
        .arg("--out")
        .arg(out);
    for (var, _) in std::env::vars() {
        if var.starts_with("ASCENDOPT_LLM_") {
            c.env_remove(var);
        }
    }
    c.output().unwrap()
}

#[test]
fn optimize_with_the_builtin_proposer_retrieves_through_the_embeddings_endpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let op = weak_add_custom(tmp.path());
    let bank_path = tmp.path().join("bank.sqlite");
    bank(&bank_path);
    let server = ScriptedServer::start_with_embedder(Vec::new(), |inputs| {
        inputs
            .iter()
            .map(|t| vec![t.len() as f32, t.matches("buffer").count() as f32, 1.0])
            .collect()
    });
    let out = tmp.path().join("out");
    let o = optimize(&op, &bank_path, &out, &server.base_url());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("retrieval: lexical + dense (toy-embed via http://127.0.0.1:"),
        "{stderr}"
    );
    assert!(!stderr.contains("warning:"), "{stderr}");
    // The probe, then Stage I's requests; no chat request.
    let posts = server.posts();
    assert!(posts.len() >= 2, "{posts:?}");
    assert!(posts.iter().all(|p| p.path == "/v1/embeddings"));
    assert_eq!(posts[0].json()["input"], serde_json::json!(["preflight"]));
    let first = posts[1].json();
    assert_eq!(first["model"], "toy-embed");
    // The query and the two entries.
    assert_eq!(first["input"].as_array().unwrap().len(), 3);
    // One run, holding every embeddings request (the probe is not one).
    let store = RunStore::open(&out.join("runs.sqlite")).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0].config["proposer"], "builtin+embed:toy-embed");
    let calls = store.llm_calls(runs[0].id).unwrap();
    assert_eq!(calls.len(), posts.len() - 1);
    assert!(calls
        .iter()
        .all(|c| c.role == "embeddings" && c.status == "ok" && c.op == "add_custom"));
    assert_eq!(calls[0].prompt_tokens, 15);
    // The entry vectors are cached in the bank.
    let bank = Bank::open(&bank_path).unwrap();
    for e in bank
        .list(&ascendopt_bank::store::EntryFilter::all())
        .unwrap()
    {
        assert!(bank
            .cached_embedding("toy-embed", &e.entry.search_text())
            .unwrap()
            .is_some());
    }

    // An endpoint that does not answer: a clear error, no run.
    let out2 = tmp.path().join("out2");
    let o = optimize(&op, &bank_path, &out2, &dead_base_url());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(stderr.contains("dense retrieval"), "{stderr}");
    assert!(stderr.contains("unreachable"), "{stderr}");
    let runs = RunStore::open(&out2.join("runs.sqlite"))
        .map(|s| s.runs().unwrap().len())
        .unwrap_or(0);
    assert_eq!(runs, 0);
}
