//! The chat client against a scripted OpenAI-protocol server on loopback:
//! retries (429 with Retry-After, 5xx, time-out, malformed JSON), fatal
//! errors, preflight (no key, unreachable, refused key), usage and cost in
//! the audit log, replay, and the concurrency limit.

use ascendopt_llm::client::LlmClient;
use ascendopt_llm::config::{LlmConfig, LlmSettings, ReplayMode};
use ascendopt_llm::{CallLog, LlmError, MemoryCallLog, Message};
use ascendopt_testkit::llm_server::{dead_base_url, Scripted, ScriptedServer};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn config(base: &str) -> LlmConfig {
    LlmConfig::from_settings(LlmSettings {
        base_url: Some(base.to_string()),
        model: Some("scripted-model".into()),
        temperature: Some(0.0),
        max_tokens: Some(512),
        timeout_s: Some(0.4),
        retries: Some(3),
        backoff_ms: Some(20),
        backoff_max_ms: Some(2000),
        price_input_per_mtok: Some(0.5),
        price_output_per_mtok: Some(2.0),
        ..LlmSettings::default()
    })
    .unwrap()
}

fn client(cfg: LlmConfig, log: &Arc<MemoryCallLog>) -> LlmClient {
    LlmClient::with_key(cfg, Some("sk-test".into()), log.clone() as Arc<dyn CallLog>).unwrap()
}

fn ask() -> Vec<Message> {
    vec![Message::system("be brief"), Message::user("say hi")]
}

#[test]
fn a_plain_answer_records_usage_cost_and_the_request() {
    let server = ScriptedServer::start(vec![Scripted::content_with_usage("hi", 1000, 500)]);
    let log = Arc::new(MemoryCallLog::new());
    let c = client(config(&server.base_url()), &log);
    c.preflight().unwrap();
    let reply = c.chat("diagnoser", "add_custom", &ask()).unwrap();
    assert_eq!(reply.content, "hi");
    assert_eq!(reply.attempts, 1);
    assert_eq!(reply.usage.prompt_tokens, 1000);
    let cost = reply.cost.unwrap();
    assert!((cost - (1000.0 * 0.5 + 500.0 * 2.0) / 1e6).abs() < 1e-12);

    let posts = server.posts();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].path, "/v1/chat/completions");
    assert_eq!(posts[0].authorization.as_deref(), Some("Bearer sk-test"));
    let body = posts[0].json();
    assert_eq!(body["model"], "scripted-model");
    assert_eq!(body["messages"][1]["content"], "say hi");
    assert_eq!(body["max_tokens"], 512);

    let records = log.records();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(
        (r.role.as_str(), r.op.as_str(), r.status.as_str()),
        ("diagnoser", "add_custom", "ok")
    );
    assert_eq!((r.prompt_tokens, r.completion_tokens), (1000, 500));
    assert_eq!(r.cost, Some(cost));
    assert_eq!(r.request, body);
    assert!(r.response.as_deref().unwrap().contains("\"hi\""));
    assert_eq!(r.request_hash, reply.request_hash);
}

#[test]
fn retryable_faults_are_retried_and_each_attempt_is_logged() {
    let server = ScriptedServer::start(vec![
        Scripted::status(429, "{\"error\":\"slow down\"}").header("Retry-After", "1"),
        Scripted::status(500, "{\"error\":\"boom\"}"),
        Scripted::content("late").delayed(Duration::from_millis(1500)),
        Scripted::status(200, "{\"choices\": [ {\"message\": "),
        Scripted::content("finally"),
    ]);
    let log = Arc::new(MemoryCallLog::new());
    let mut cfg = config(&server.base_url());
    cfg.retries = 4;
    let c = client(cfg, &log);
    let start = Instant::now();
    let reply = c.chat("rewriter", "add_custom", &ask()).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(reply.content, "finally");
    assert_eq!(reply.attempts, 5);
    // Retry-After: 1 was honoured (the other waits are tens of ms).
    assert!(elapsed >= Duration::from_millis(1000), "{elapsed:?}");
    let statuses: Vec<String> = log.records().iter().map(|r| r.status.clone()).collect();
    assert_eq!(
        statuses,
        ["http_429", "http_500", "timeout", "malformed", "ok"]
    );
    let posts = server.posts();
    assert_eq!(posts.len(), 5);
    // The request after the 429 came at least a second later.
    assert!(posts[1].at.duration_since(posts[0].at) >= Duration::from_millis(950));
    // Only the successful attempt carries tokens.
    let tokens: u64 = log.records().iter().map(|r| r.prompt_tokens).sum();
    assert_eq!(tokens, 120);
}

#[test]
fn exhausted_retries_and_fatal_statuses_are_errors() {
    let server = ScriptedServer::start(vec![
        Scripted::status(503, "busy"),
        Scripted::status(502, "bad gateway"),
        Scripted::status(400, "{\"error\":\"context too long\"}"),
        Scripted::status(401, "{\"error\":\"bad key\"}"),
    ]);
    let log = Arc::new(MemoryCallLog::new());
    let mut cfg = config(&server.base_url());
    cfg.retries = 1;
    let c = client(cfg, &log);
    match c.chat("inverse", "x", &ask()) {
        Err(LlmError::Exhausted { attempts, last }) => {
            assert_eq!(attempts, 2);
            assert!(last.contains("502"), "{last}");
        }
        other => panic!("{other:?}"),
    }
    match c.chat("inverse", "x", &ask()) {
        Err(LlmError::Http {
            status: 400, body, ..
        }) => assert!(body.contains("context")),
        other => panic!("{other:?}"),
    }
    match c.chat("inverse", "x", &ask()) {
        Err(LlmError::Unauthorized { status: 401, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(server.posts().len(), 4);
    assert_eq!(log.records().len(), 4);
}

#[test]
fn no_key_and_unreachable_endpoints_fail_before_any_request() {
    let log = Arc::new(MemoryCallLog::new());
    let mut cfg = config("https://api.example.invalid/v1");
    cfg.api_key_env = "ASCENDOPT_LLM_TEST_SURELY_UNSET_KEY".into();
    match LlmClient::new(cfg.clone(), log.clone()) {
        Err(e @ LlmError::MissingKey { .. }) => {
            assert!(e
                .to_string()
                .contains("ASCENDOPT_LLM_TEST_SURELY_UNSET_KEY"))
        }
        other => panic!("{other:?}"),
    }
    // allow_no_key is honoured only for endpoints on this machine.
    cfg.allow_no_key = true;
    assert!(matches!(
        LlmClient::new(cfg.clone(), log.clone()),
        Err(LlmError::MissingKey { .. })
    ));
    let mut local = config(&dead_base_url());
    local.api_key_env = "ASCENDOPT_LLM_TEST_SURELY_UNSET_KEY".into();
    local.allow_no_key = true;
    let c = LlmClient::new(local, log.clone()).unwrap();
    match c.preflight() {
        Err(e @ LlmError::Unreachable { .. }) => assert!(e.to_string().contains("unreachable")),
        other => panic!("{other:?}"),
    }
    assert!(log.records().is_empty());
}

#[test]
fn preflight_reports_a_refused_key() {
    // A server that refuses every request with 401, /models included.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 2048];
        let _ = s.read(&mut buf);
        let body = "{\"error\":\"invalid api key\"}";
        let _ = write!(
            s,
            "HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    });
    let log = Arc::new(MemoryCallLog::new());
    let c = client(config(&format!("http://{addr}/v1")), &log);
    match c.preflight() {
        Err(LlmError::Unauthorized {
            status: 401, body, ..
        }) => assert!(body.contains("invalid")),
        other => panic!("{other:?}"),
    }
    t.join().unwrap();
}

#[test]
fn replay_answers_from_the_log_without_the_network() {
    let server = ScriptedServer::start(vec![Scripted::content("recorded answer")]);
    let log = Arc::new(MemoryCallLog::new());
    let live = client(config(&server.base_url()), &log);
    let first = live.chat("diagnoser", "op", &ask()).unwrap();
    assert!(!first.replayed);

    // Strict replay: no endpoint, no key.
    let mut cfg = config(&dead_base_url());
    cfg.replay = ReplayMode::Strict;
    cfg.api_key_env = "ASCENDOPT_LLM_TEST_SURELY_UNSET_KEY".into();
    let replay = LlmClient::new(cfg, log.clone()).unwrap();
    replay.preflight().unwrap();
    let again = replay.chat("diagnoser", "op", &ask()).unwrap();
    assert!(again.replayed);
    assert_eq!(again.content, "recorded answer");
    assert_eq!(again.request_hash, first.request_hash);
    match replay.chat("diagnoser", "op", &[Message::user("never asked")]) {
        Err(LlmError::NotRecorded { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(server.posts().len(), 1);
    let statuses: Vec<String> = log.records().iter().map(|r| r.status.clone()).collect();
    assert_eq!(statuses, ["ok", "replayed"]);

    // Prefer: recorded answers first, the endpoint for new requests.
    server.push(vec![Scripted::content("fresh")]);
    let mut cfg = config(&server.base_url());
    cfg.replay = ReplayMode::Prefer;
    let prefer = client(cfg, &log);
    assert_eq!(
        prefer.chat("diagnoser", "op", &ask()).unwrap().content,
        "recorded answer"
    );
    assert_eq!(
        prefer
            .chat("diagnoser", "op", &[Message::user("new")])
            .unwrap()
            .content,
        "fresh"
    );
    assert_eq!(server.posts().len(), 2);
}

#[test]
fn the_concurrency_limit_holds_across_threads() {
    let replies: Vec<Scripted> = (0..4)
        .map(|i| Scripted::content(&format!("r{i}")).delayed(Duration::from_millis(150)))
        .collect();
    let server = ScriptedServer::start(replies);
    let log = Arc::new(MemoryCallLog::new());
    let mut cfg = config(&server.base_url());
    cfg.concurrency = 2;
    cfg.timeout = Duration::from_secs(5);
    let c = Arc::new(client(cfg, &log));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || c.chat("rewriter", "op", &[Message::user(format!("q{i}"))]))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    assert_eq!(server.max_in_flight(), 2);
    assert_eq!(log.records().len(), 4);
}

/// llama.cpp's and vLLM's words when prompt + completion exceed the window.
fn context_refusal_body(context: u32, prompt: u32, completion: u32) -> String {
    format!(
        "{{\"error\":{{\"message\":\"This model's maximum context length is {context} tokens. However, you requested {} tokens ({prompt} in the messages, {completion} in the completion). Please reduce the length of the messages or completion.\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}}}",
        prompt + completion
    )
}

#[test]
fn a_context_refusal_is_asked_again_with_the_completion_limit_the_prompt_leaves() {
    let server = ScriptedServer::start(vec![
        Scripted::status(400, &context_refusal_body(1000, 700, 512)),
        Scripted::content_with_usage("hi", 700, 20),
    ]);
    let log = Arc::new(MemoryCallLog::new());
    let c = client(config(&server.base_url()), &log);
    let reply = c.chat("diagnoser", "add_custom", &ask()).unwrap();
    assert_eq!(reply.content, "hi");
    let posts = server.posts();
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[0].json()["max_tokens"], 512);
    // 1000 - 700 - a margin of 16.
    assert_eq!(posts[1].json()["max_tokens"], 284);
    assert_eq!(
        log.records().len(),
        2,
        "both exchanges are in the audit log"
    );
}

#[test]
fn a_prompt_that_leaves_no_room_is_refused_with_both_numbers() {
    // The endpoint's count leaves 100 tokens: no second request.
    let server = ScriptedServer::start(vec![Scripted::status(
        400,
        &context_refusal_body(1000, 900, 512),
    )]);
    let log = Arc::new(MemoryCallLog::new());
    let c = client(config(&server.base_url()), &log);
    let e = c.chat("diagnoser", "add_custom", &ask()).unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::PromptTooLong {
                prompt_tokens: 900,
                context: 1000,
                estimated: false
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("--llm-context-tokens"), "{e}");
    assert_eq!(server.posts().len(), 1);

    // A known window cuts the limit before sending, and a prompt too long
    // for it is refused without a request.
    let server = ScriptedServer::start(vec![Scripted::content_with_usage("ok", 10, 1)]);
    let mut cfg = config(&server.base_url());
    cfg.context_tokens = Some(520);
    let c = client(cfg.clone(), &log);
    c.chat("diagnoser", "add_custom", &ask()).unwrap();
    let limit = server.posts()[0].json()["max_tokens"].as_u64().unwrap();
    assert!(
        (256..512).contains(&limit),
        "cut to what the prompt leaves: {limit}"
    );
    let long = vec![Message::user("x".repeat(3000))];
    let e = client(cfg, &log)
        .chat("diagnoser", "add_custom", &long)
        .unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::PromptTooLong {
                estimated: true,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(server.posts().len(), 1, "nothing sent for the long prompt");
}
