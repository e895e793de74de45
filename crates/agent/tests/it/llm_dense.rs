//! Dense retrieval in Stage I against the scripted OpenAI-protocol server
//! on loopback (real HTTP: chat completions for the LLM diagnoser and
//! rewriter, `/v1/embeddings` answered with a toy embedding of the request's
//! inputs), with the real evaluation pipeline, run store and bank:
//!
//! - a bank built so that the lexical ranking puts entry A first and the
//!   fusion with the embedding ranking puts entry B first: the rewriter
//!   prompt lists A first without dense retrieval and B first with it;
//! - the embeddings requests are in the run's `llm_calls` (role
//!   `embeddings`, tokens), entry vectors are cached in the bank file and
//!   not asked for again;
//! - an embeddings endpoint that fails during a run: that round falls back
//!   to lexical retrieval, the loop goes on, and the warning is in the log.

use crate::llm_common;
use ascendopt_testkit::llm_server as server;
use llm_common::{add_custom_with_cases, device};

use ascendopt_agent::attempts::Tried;
use ascendopt_agent::features::applicable_motifs;
use ascendopt_agent::llm::{
    DenseRetrieval, LlmDiagnoser, LlmProposer, StoreCallLog, FALLBACK_STATUS,
};
use ascendopt_agent::refine::{refine, RefineConfig, RefineOutcome};
use ascendopt_agent::session::{Action, OpSession, Phase, RunContext};
use ascendopt_bank::entry::{family_of, Applicability, Entry, Origin, Provenance, SourceOp};
use ascendopt_bank::retrieval::{Lexical, Retrieval};
use ascendopt_bank::store::Bank;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunId, RunStore};
use ascendopt_llm::client::LlmClient;
use ascendopt_llm::config::{LlmConfig, LlmSettings};
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use server::{Scripted, ScriptedServer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// ops/add_custom with small cases, double buffering off.
fn weak_package(root: &Path) -> OpPackage {
    let dir = root.join("add_custom");
    add_custom_with_cases(&dir, &ascendopt_testkit::binary_cases(8, 4096));
    let host_path = dir.join("op_host/add_custom.cpp");
    let host = std::fs::read_to_string(&host_path).unwrap();
    let weak = host.replace("BUFFER_NUM = 2;", "BUFFER_NUM = 1;");
    assert_ne!(host, weak, "add_custom's host code changed");
    std::fs::write(&host_path, weak).unwrap();
    OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap()
}

fn entry(motif: &str, title: &str, bottleneck: &str) -> Entry {
    Entry {
        title: title.into(),
        bottleneck: bottleneck.into(),
        applicability: Applicability {
            reuse_when: vec![],
            avoid_when: vec![],
        },
        expected_effect: "faster".into(),
        diff: format!("--- a/k\n+++ b/k\n@@ -1 +1 @@\n-{motif} off\n+{motif} on\n"),
        motif: motif.into(),
        family: family_of(motif).unwrap_or("kernel.other").into(),
        source: SourceOp {
            op: "other_op".into(),
            level: Some(1),
        },
        slow_us: Some(20.0),
        fast_us: Some(10.0),
        profile_moved: BTreeMap::new(),
        signature: None,
        keywords: vec![],
        provenance: Provenance {
            created_ms: 0,
            origin: Origin::Manual,
            evidence: vec![],
        },
    }
}

/// A toy embedding model: dimension 0 counts "stall"/"stagger", 1 counts
/// "element", 2 is constant. It reads "stall" as "stagger", which BM25
/// cannot.
fn toy(inputs: &[String]) -> Vec<Vec<f32>> {
    inputs
        .iter()
        .map(|t| {
            let t = t.to_lowercase();
            let n = |ws: &[&str]| ws.iter().map(|w| t.matches(w).count()).sum::<usize>() as f32;
            vec![n(&["stall", "stagger"]), n(&["element"]), 0.1]
        })
        .collect()
}

fn diagnosed(bottleneck: &str) -> String {
    serde_json::json!({
        "kind": "mte2_bound",
        "bottleneck": bottleneck,
        "reasoning": "test",
        "motifs": []
    })
    .to_string()
}

fn client(base: &str, store: &Path, run: RunId, embeddings: bool) -> Arc<LlmClient> {
    let cfg = LlmConfig::from_settings(LlmSettings {
        base_url: Some(base.into()),
        model: Some("scripted".into()),
        embedding_model: embeddings.then(|| "toy-embed".to_string()),
        retries: Some(1),
        backoff_ms: Some(5),
        backoff_max_ms: Some(20),
        price_input_per_mtok: Some(1.0),
        price_output_per_mtok: Some(2.0),
        price_embedding_per_mtok: Some(0.1),
        ..LlmSettings::default()
    })
    .unwrap();
    let log = Arc::new(StoreCallLog::open(store, run).unwrap());
    let c = LlmClient::with_key(cfg, Some("sk".into()), log).unwrap();
    c.preflight().unwrap();
    c.preflight_embeddings().unwrap();
    Arc::new(c)
}

struct Setup {
    _tmp: tempfile::TempDir,
    store_path: PathBuf,
    bank: Bank,
    pkg: OpPackage,
    /// Entry ids A, B, C.
    ids: [i64; 3],
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = weak_package(tmp.path());
    // Stage I retrieves only entries whose motif applies to the kernel:
    // double buffering, here; the three entries share it.
    let motifs = applicable_motifs(&Sources::load(&pkg.dir).unwrap());
    assert!(motifs.contains(&"double_buffer"), "{motifs:?}");
    let bank = Bank::open(&tmp.path().join("bank.sqlite")).unwrap();
    // Lexically "copies" favours A (said twice) over B; C has no query
    // word. The toy embedding reads the query's "stall" as B's "stagger"
    // (twice) and C's (once): L = [A, B], D = [B, C, A], fused [B, A, C].
    let mut ids = [0i64; 3];
    for (i, bottleneck) in [
        "copies copies bound",
        "copies bound, stagger stagger",
        "elementwise chain, stagger",
    ]
    .iter()
    .enumerate()
    {
        let e = entry("double_buffer", &format!("entry {i}"), bottleneck);
        ids[i] = bank.insert(&e).unwrap().id().0;
    }
    bank.freeze().unwrap();
    Setup {
        store_path: tmp.path().join("runs.sqlite"),
        _tmp: tmp,
        bank,
        pkg,
        ids,
    }
}

/// Stage I for one round on the weak kernel: the diagnoser says
/// `bottleneck`, the rewriter answers without an edit (one charged
/// attempt). Returns the outcome and the rewriter's prompt.
fn one_round(
    s: &Setup,
    server: &ScriptedServer,
    run: RunId,
    bottleneck: &str,
    dense: Option<DenseRetrieval>,
    client: Arc<LlmClient>,
) -> (RefineOutcome, String) {
    let store = RunStore::open(&s.store_path).unwrap();
    let dev = device();
    let ctx = RunContext {
        device: &dev,
        store: &store,
        run,
        pipeline: PipelineConfig {
            repeats: 3,
            deterministic: true,
            seed: 3,
        },
        compare: CompareConfig::RECOMMENDED,
        workdir: s.store_path.with_file_name(format!("work-{}", run.0)),
    };
    server.push(vec![
        Scripted::content(&diagnosed(bottleneck)),
        Scripted::content("SUMMARY: nothing to change\nThe kernel is fine."),
    ]);
    let before = server.posts().len();
    let mut session = OpSession::open(
        &ctx,
        &s.pkg,
        BudgetConfig {
            rewind: 0,
            online: 3,
        },
    )
    .unwrap();
    let baseline = session
        .evaluate(
            Phase::Baseline,
            &Sources::load(&s.pkg.dir).unwrap(),
            Action::default(),
        )
        .unwrap();
    assert!(baseline.is_correct());
    let mut proposer = LlmProposer::new(client.clone());
    proposer.repairs = 0;
    let mut diagnoser = LlmDiagnoser::new(client);
    let outcome = refine(
        &mut session,
        Some(&s.bank),
        match &dense {
            Some(d) => d as &dyn Retrieval,
            None => &Lexical,
        },
        &mut proposer,
        &mut diagnoser,
        baseline,
        &RefineConfig {
            max_attempts: 1,
            k: 3,
            use_bank: true,
            stagnation: None,
        },
        &mut Tried::new(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(outcome.attempts, 1);
    let rewriter = server.posts()[before..]
        .iter()
        .filter(|p| p.path.ends_with("/chat/completions"))
        .nth(1)
        .expect("a rewriter request")
        .last_user_message();
    (outcome, rewriter)
}

/// Entry ids in the order the rewriter prompt lists them.
fn listed(prompt: &str, ids: &[i64]) -> Vec<i64> {
    let mut found: Vec<(usize, i64)> = ids
        .iter()
        .filter_map(|id| prompt.find(&format!("#### Entry {id} ")).map(|p| (p, *id)))
        .collect();
    found.sort();
    found.into_iter().map(|(_, id)| id).collect()
}

#[test]
fn dense_retrieval_changes_the_first_entry_and_its_calls_are_logged() {
    let s = setup();
    let [a, b, c] = s.ids;
    let server = ScriptedServer::start_with_embedder(Vec::new(), toy);
    let store = RunStore::open(&s.store_path).unwrap();

    // Lexical only: A first, C (no query word) not retrieved.
    let run1 = store
        .create_run(&serde_json::json!({"t": "lexical"}))
        .unwrap();
    let c1 = client(&server.base_url(), &s.store_path, run1, false);
    let (_, prompt) = one_round(&s, &server, run1, "copies stall", None, c1);
    assert_eq!(listed(&prompt, &s.ids), [a, b], "{prompt}");
    assert!(store
        .llm_calls(run1)
        .unwrap()
        .iter()
        .all(|c| c.role != "embeddings"));

    // Dense: the fusion puts B first, then A, then C.
    let run2 = store
        .create_run(&serde_json::json!({"t": "dense"}))
        .unwrap();
    let c2 = client(&server.base_url(), &s.store_path, run2, true);
    let dense = DenseRetrieval::from_client(c2.clone()).unwrap();
    let (outcome, prompt) = one_round(&s, &server, run2, "copies stall", Some(dense.clone()), c2);
    assert_eq!(listed(&prompt, &s.ids), [b, a, c], "{prompt}");
    // The answer, then the measured sentences the diagnoser adds.
    assert!(outcome.diagnoses[0]
        .text
        .starts_with("copies stall Measured: "));
    assert!(dense.fallbacks().is_empty());
    // The embeddings request is in the run's log: the query and the three
    // entries in one request, with tokens and cost.
    let calls = store.llm_calls(run2).unwrap();
    let roles: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.role.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(
        roles,
        [
            ("diagnoser", "ok"),
            ("embeddings", "ok"),
            ("rewriter", "ok")
        ]
    );
    let embed = &calls[1];
    let request: serde_json::Value = serde_json::from_str(&embed.request).unwrap();
    assert_eq!(request["model"], "toy-embed");
    let inputs = request["input"].as_array().unwrap();
    assert_eq!(inputs.len(), 4);
    // The query is the diagnosis: the answer and the measured sentences.
    assert!(inputs[0]
        .as_str()
        .unwrap()
        .starts_with("copies stall Measured: "));
    assert_eq!(embed.op, "add_custom");
    assert_eq!(embed.prompt_tokens, 20);
    assert!((embed.cost.unwrap() - 20.0 * 0.1 / 1e6).abs() < 1e-15);
    let embed_posts = |srv: &ScriptedServer| {
        srv.posts()
            .iter()
            .filter(|p| p.path == "/v1/embeddings")
            .count()
    };
    // Preflight probe + one request.
    assert_eq!(embed_posts(&server), 2);
    // Entry vectors are cached in the bank file.
    for stored in s
        .bank
        .list(&ascendopt_bank::store::EntryFilter::all())
        .unwrap()
    {
        assert!(s
            .bank
            .cached_embedding("toy-embed", &stored.entry.search_text())
            .unwrap()
            .is_some());
    }

    // A new diagnosis text: only the query is embedded; the endpoint fails
    // (both attempts): that round falls back to lexical retrieval.
    let run3 = store
        .create_run(&serde_json::json!({"t": "fallback"}))
        .unwrap();
    let c3 = client(&server.base_url(), &s.store_path, run3, true);
    server.push_embeddings(vec![
        Scripted::status(500, "{\"error\":\"embedder down\"}"),
        Scripted::status(500, "{\"error\":\"embedder down\"}"),
    ]);
    let dense3 = DenseRetrieval::from_client(c3.clone()).unwrap();
    let (outcome, prompt) = one_round(
        &s,
        &server,
        run3,
        "copies stall again",
        Some(dense3.clone()),
        c3,
    );
    assert_eq!(listed(&prompt, &s.ids), [a, b], "{prompt}");
    assert_eq!(outcome.attempts, 1);
    let warnings = dense3.fallbacks();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].contains("lexical retrieval used"),
        "{warnings:?}"
    );
    assert!(warnings[0].contains("embedder down"), "{warnings:?}");
    let calls = store.llm_calls(run3).unwrap();
    let roles: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.role.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(
        roles,
        [
            ("diagnoser", "ok"),
            ("embeddings", "http_500"),
            ("embeddings", "http_500"),
            ("embeddings", FALLBACK_STATUS),
            ("rewriter", "ok")
        ]
    );
    assert!(calls[3]
        .response
        .as_deref()
        .unwrap()
        .contains("embedder down"));
    // Probe + 2 failed attempts; the entries were not asked for again.
    assert_eq!(embed_posts(&server), 2 + 1 + 2);
    let last: serde_json::Value = server
        .posts()
        .iter()
        .rev()
        .find(|p| p.path == "/v1/embeddings")
        .unwrap()
        .json();
    let input = last["input"].as_array().unwrap();
    assert_eq!(input.len(), 1, "only the new query is embedded");
    assert!(input[0]
        .as_str()
        .unwrap()
        .starts_with("copies stall again Measured: "));
}
