//! The embeddings side of the client against the scripted OpenAI-protocol
//! server on loopback: the request format, retries, the audit record with
//! tokens and cost, replay, the preflight probe, and a shared concurrency
//! limit across clients made with `with_log`.

use ascendopt_llm::client::LlmClient;
use ascendopt_llm::config::{LlmConfig, LlmSettings, ReplayMode};
use ascendopt_llm::{LlmError, MemoryCallLog, Message};
use ascendopt_testkit::llm_server::{dead_base_url, Scripted, ScriptedServer};
use std::sync::Arc;
use std::time::Duration;

fn config(base: &str) -> LlmConfig {
    LlmConfig::from_settings(LlmSettings {
        base_url: Some(base.to_string()),
        model: Some("chat-model".into()),
        embedding_model: Some("embed-model".into()),
        timeout_s: Some(0.4),
        retries: Some(2),
        backoff_ms: Some(10),
        backoff_max_ms: Some(100),
        price_embedding_per_mtok: Some(0.02),
        ..LlmSettings::default()
    })
    .unwrap()
}

fn texts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Length and number of vowels: enough to tell texts apart.
fn toy(inputs: &[String]) -> Vec<Vec<f32>> {
    inputs
        .iter()
        .map(|t| {
            vec![
                t.len() as f32,
                t.chars().filter(|c| "aeiou".contains(*c)).count() as f32,
            ]
        })
        .collect()
}

#[test]
fn embeddings_are_requested_retried_recorded_and_replayed() {
    let server = ScriptedServer::start_with_embedder(Vec::new(), toy);
    let log = Arc::new(MemoryCallLog::new());
    let client =
        LlmClient::with_key(config(&server.base_url()), Some("sk-e".into()), log.clone()).unwrap();
    client.preflight_embeddings().unwrap();
    server.push_embeddings(vec![
        Scripted::status(503, "{\"error\":\"loading model\"}"),
        Scripted::status(200, "{\"data\": [{\"embedding\": [1,"),
    ]);
    let input = texts(&["double buffer", "scalar loop"]);
    let reply = client.embed("add_custom", &input).unwrap();
    assert_eq!(reply.vectors, toy(&input));
    assert_eq!(reply.attempts, 3);
    assert!(!reply.replayed);
    assert_eq!(reply.usage.prompt_tokens, 10);
    assert!((reply.cost.unwrap() - 10.0 * 0.02 / 1e6).abs() < 1e-15);

    let posts = server.posts();
    // The preflight probe, then three attempts of the same request.
    assert_eq!(posts.len(), 4);
    assert!(posts.iter().all(|p| p.path == "/v1/embeddings"));
    assert_eq!(posts[0].json()["input"], serde_json::json!(["preflight"]));
    assert_eq!(
        posts[1].json(),
        serde_json::json!({"model": "embed-model", "input": ["double buffer", "scalar loop"]})
    );
    assert_eq!(posts[1].authorization.as_deref(), Some("Bearer sk-e"));

    // Every attempt is audited (the probe is not), tokens on the answer.
    let records = log.records();
    let seen: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| (r.role.as_str(), r.op.as_str(), r.status.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("embeddings", "add_custom", "http_503"),
            ("embeddings", "add_custom", "malformed"),
            ("embeddings", "add_custom", "ok"),
        ]
    );
    assert_eq!(records[2].prompt_tokens, 10);
    assert_eq!(records[2].completion_tokens, 0);
    assert_eq!(records[2].cost, reply.cost);

    // Replay: the recorded answer stands in, with no request.
    let mut cfg = config(&dead_base_url());
    cfg.replay = ReplayMode::Strict;
    let replaying = LlmClient::with_key(cfg, None, log.clone()).unwrap();
    let again = replaying.embed("add_custom", &input).unwrap();
    assert!(again.replayed);
    assert_eq!(again.vectors, reply.vectors);
    assert_eq!(server.posts().len(), 4);
    assert!(matches!(
        replaying.embed("add_custom", &texts(&["never embedded"])),
        Err(LlmError::NotRecorded { .. })
    ));
    // No model configured: a configuration error, nothing sent.
    let mut plain = config(&server.base_url());
    plain.embedding_model = None;
    let plain = LlmClient::with_key(plain, Some("k".into()), log).unwrap();
    plain.preflight_embeddings().unwrap();
    let err = plain.embed("", &input).unwrap_err();
    assert!(err.to_string().contains("--llm-embedding-model"), "{err}");
    assert_eq!(server.posts().len(), 4);
    // Chat requests still go to the chat path with the chat model.
    server.push(vec![Scripted::content("hi")]);
    let chat = LlmClient::with_key(
        config(&server.base_url()),
        Some("k".into()),
        Arc::new(MemoryCallLog::new()),
    )
    .unwrap();
    assert_eq!(
        chat.chat("r", "", &[Message::user("x")]).unwrap().content,
        "hi"
    );
    let last = server.posts().pop().unwrap();
    assert_eq!(last.path, "/v1/chat/completions");
    assert_eq!(last.json()["model"], "chat-model");
}

#[test]
fn the_embeddings_preflight_names_the_endpoint_and_the_model() {
    // A server without embeddings (chat only): 404 on the probe.
    let server = ScriptedServer::start(Vec::new());
    server.push_embeddings(vec![Scripted::status(404, "{\"error\":\"no such route\"}")]);
    let log = Arc::new(MemoryCallLog::new());
    let client =
        LlmClient::with_key(config(&server.base_url()), Some("k".into()), log.clone()).unwrap();
    client.preflight().unwrap();
    let err = client.preflight_embeddings().unwrap_err();
    match &err {
        LlmError::Embeddings { url, model, reason } => {
            assert!(url.ends_with("/v1/embeddings"), "{url}");
            assert_eq!(model, "embed-model");
            assert!(reason.contains("404"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // An answer without vectors fails too; a refused key is Unauthorized.
    server.push_embeddings(vec![
        Scripted::status(200, "{\"data\": []}"),
        Scripted::status(401, "{\"error\":\"bad key\"}"),
    ]);
    assert!(matches!(
        client.preflight_embeddings(),
        Err(LlmError::Embeddings { .. })
    ));
    assert!(matches!(
        client.preflight_embeddings(),
        Err(LlmError::Unauthorized { status: 401, .. })
    ));
    // Unreachable.
    let dead =
        LlmClient::with_key(config(&dead_base_url()), Some("k".into()), log.clone()).unwrap();
    assert!(matches!(
        dead.preflight_embeddings(),
        Err(LlmError::Embeddings { .. })
    ));
    assert!(log.records().is_empty(), "probes are not recorded");
}

#[test]
fn clients_made_with_another_log_share_the_concurrency_limit() {
    let server = ScriptedServer::start(Vec::new());
    let slow = |v: f32| Scripted::embeddings(&[vec![v]], 1).delayed(Duration::from_millis(150));
    server.push_embeddings((0..4).map(|i| slow(i as f32 + 1.0)).collect());
    let mut cfg = config(&server.base_url());
    cfg.concurrency = 1;
    cfg.timeout = Duration::from_secs(5);
    let a_log = Arc::new(MemoryCallLog::new());
    let b_log = Arc::new(MemoryCallLog::new());
    let a = Arc::new(LlmClient::with_key(cfg, Some("k".into()), a_log.clone()).unwrap());
    let b = Arc::new(a.with_log(b_log.clone()));
    std::thread::scope(|s| {
        for (i, c) in [a.clone(), b.clone(), a.clone(), b.clone()]
            .into_iter()
            .enumerate()
        {
            s.spawn(move || c.embed("", &[format!("text {i}")]).unwrap());
        }
    });
    assert_eq!(server.max_in_flight(), 1);
    assert_eq!(a_log.records().len(), 2);
    assert_eq!(b_log.records().len(), 2);
}
