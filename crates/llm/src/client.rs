//! [`LlmClient`]: blocking chat completions over HTTP (`POST
//! {base}/chat/completions`, OpenAI format) and embeddings (`POST
//! {base}/embeddings`, for dense retrieval), with
//!
//! - retries on 429, 5xx, time-outs, transport errors and malformed
//!   answers: exponential back-off from `backoff` doubling up to
//!   `backoff_max`, each wait drawn uniformly from its upper half (jitter);
//!   a `Retry-After: <seconds>` header replaces the computed wait (capped at
//!   `backoff_max`); other 4xx fail at once;
//! - a concurrency limit shared by every thread using the client;
//! - an audit record per attempt ([`CallLog`]), and replay of recorded
//!   answers keyed by the request hash ([`ReplayMode`]);
//! - [`LlmClient::preflight`] (and [`LlmClient::preflight_embeddings`] when
//!   an embedding model is configured): the key, the endpoint and the
//!   embedding model are checked before the caller spends any budget. These
//!   probes carry no run data and are not recorded.

use crate::audit::{request_hash, CallLog, CallRecord};
use crate::config::{LlmConfig, ReplayMode, MIN_COMPLETION_TOKENS};
use crate::error::LlmError;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: "system".into(),
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: "user".into(),
            content: content.into(),
        }
    }
}

/// Token usage of one answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    /// `choices[0].message.content` (empty when the model said nothing).
    pub content: String,
    /// Token usage of the successful attempt.
    pub usage: Usage,
    /// Its cost, when prices are configured.
    pub cost: Option<f64>,
    /// HTTP attempts made (0 when replayed).
    pub attempts: u32,
    /// Whether a recorded answer stood in for the endpoint.
    pub replayed: bool,
    /// The request hash (replay key).
    pub request_hash: String,
}

/// A successful embeddings answer.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingReply {
    /// One vector per input, in input order.
    pub vectors: Vec<Vec<f32>>,
    /// Token usage (`usage.prompt_tokens`; completion is 0).
    pub usage: Usage,
    /// Its cost, when the embedding price is configured.
    pub cost: Option<f64>,
    /// HTTP attempts made (0 when replayed).
    pub attempts: u32,
    /// Whether a recorded answer stood in for the endpoint.
    pub replayed: bool,
}

/// A counting semaphore.
#[derive(Debug)]
struct Gate {
    free: Mutex<usize>,
    freed: Condvar,
}

struct GateGuard<'a>(&'a Gate);

impl Gate {
    fn acquire(&self) -> GateGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        GateGuard(self)
    }
}

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(|p| p.into_inner());
        *free += 1;
        self.0.freed.notify_one();
    }
}

/// The chat client. `Sync`: share one (in an `Arc`) between threads so
/// that the concurrency limit holds for all of them.
pub struct LlmClient {
    config: LlmConfig,
    key: Option<String>,
    agent: ureq::Agent,
    log: Arc<dyn CallLog>,
    gate: Arc<Gate>,
    rng: Mutex<u64>,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("config", &self.config)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// How one attempt ended.
enum Attempt<T> {
    Done(T, Usage, Option<f64>),
    Retry {
        why: String,
        after: Option<Duration>,
    },
    Fatal(LlmError),
}

impl LlmClient {
    /// A client whose key is read from the configured variable. A missing
    /// key is an error unless `allow_no_key` is set and the endpoint is on
    /// this machine, or replay is strict (no network at all).
    pub fn new(config: LlmConfig, log: Arc<dyn CallLog>) -> Result<LlmClient, LlmError> {
        let key = std::env::var(&config.api_key_env)
            .ok()
            .filter(|k| !k.trim().is_empty());
        LlmClient::with_key(config, key, log)
    }

    /// A client with this key (None: no key).
    pub fn with_key(
        config: LlmConfig,
        key: Option<String>,
        log: Arc<dyn CallLog>,
    ) -> Result<LlmClient, LlmError> {
        if key.is_none()
            && config.replay != ReplayMode::Strict
            && !(config.allow_no_key && config.is_local())
        {
            return Err(LlmError::MissingKey {
                var: config.api_key_env.clone(),
            });
        }
        let agent = ureq::AgentBuilder::new().timeout(config.timeout).build();
        Ok(LlmClient {
            gate: Arc::new(Gate {
                free: Mutex::new(config.concurrency),
                freed: Condvar::new(),
            }),
            config,
            key,
            agent,
            log,
            rng: Mutex::new(seed()),
        })
    }

    /// The same client (configuration, key, connection pool and
    /// concurrency limit, shared) recording its calls into `log`: one
    /// client per run of a benchmark, one limit for all of them.
    pub fn with_log(&self, log: Arc<dyn CallLog>) -> LlmClient {
        LlmClient {
            config: self.config.clone(),
            key: self.key.clone(),
            agent: self.agent.clone(),
            log,
            gate: Arc::clone(&self.gate),
            rng: Mutex::new(seed()),
        }
    }

    /// Records a note about the client's use (e.g. a fallback after a
    /// failed call) in the call log: a row with this role, operator and
    /// status, the message as its response, no tokens.
    pub fn note(&self, role: &str, op: &str, status: &str, message: &str) -> Result<(), LlmError> {
        self.log
            .record(&CallRecord {
                role: role.to_string(),
                op: op.to_string(),
                request: serde_json::json!({ "note": status }),
                response: Some(message.to_string()),
                status: status.to_string(),
                attempt: 0,
                prompt_tokens: 0,
                completion_tokens: 0,
                cost: None,
                latency_ms: 0,
                request_hash: String::new(),
            })
            .map_err(LlmError::Log)
    }

    /// The configuration.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Checks, without spending anything, that the endpoint answers and
    /// accepts the key: `GET {base}/models`. 2xx, 404 and 405 (servers
    /// without a model list) pass; 401/403 is [`LlmError::Unauthorized`];
    /// no answer or another status is [`LlmError::Unreachable`]. Strict
    /// replay needs no endpoint and always passes.
    pub fn preflight(&self) -> Result<(), LlmError> {
        if self.config.replay == ReplayMode::Strict {
            return Ok(());
        }
        let url = self.config.models_url();
        let mut request = self.agent.get(&url);
        if let Some(key) = &self.key {
            request = request.set("Authorization", &format!("Bearer {key}"));
        }
        match request.call() {
            Ok(_) => Ok(()),
            Err(ureq::Error::Status(404 | 405, _)) => Ok(()),
            Err(ureq::Error::Status(status @ (401 | 403), r)) => Err(LlmError::Unauthorized {
                url,
                status,
                body: excerpt(&r.into_string().unwrap_or_default()),
            }),
            Err(ureq::Error::Status(status, r)) => Err(LlmError::Unreachable {
                url,
                reason: format!(
                    "HTTP {status}: {}",
                    excerpt(&r.into_string().unwrap_or_default())
                ),
            }),
            Err(ureq::Error::Transport(t)) => Err(LlmError::Unreachable {
                url,
                reason: t.to_string(),
            }),
        }
    }

    /// Checks, when an embedding model is configured, that the endpoint
    /// embeds with it: one `POST {base}/embeddings` of a one-word input,
    /// not recorded, not retried. Any failure (no answer, an HTTP error, an
    /// answer without a vector) is [`LlmError::Embeddings`] naming the URL
    /// and the model, or [`LlmError::Unauthorized`]. Passes without a
    /// request when no embedding model is configured or replay is strict.
    pub fn preflight_embeddings(&self) -> Result<(), LlmError> {
        let Some(model) = self.config.embedding_model.clone() else {
            return Ok(());
        };
        if self.config.replay == ReplayMode::Strict {
            return Ok(());
        }
        let url = self.config.embeddings_url();
        let fail = |reason: String| LlmError::Embeddings {
            url: url.clone(),
            model: model.clone(),
            reason,
        };
        let body = serde_json::json!({ "model": model, "input": ["preflight"] });
        let mut request = self
            .agent
            .post(&url)
            .set("Content-Type", "application/json");
        if let Some(key) = &self.key {
            request = request.set("Authorization", &format!("Bearer {key}"));
        }
        match request.send_string(&body.to_string()) {
            Ok(r) => {
                let raw = r
                    .into_string()
                    .map_err(|e| fail(format!("reading the answer: {e}")))?;
                parse_embeddings(&raw, 1)
                    .map(|_| ())
                    .map_err(|e| fail(e.to_string()))
            }
            Err(ureq::Error::Status(status @ (401 | 403), r)) => Err(LlmError::Unauthorized {
                url: url.clone(),
                status,
                body: excerpt(&r.into_string().unwrap_or_default()),
            }),
            Err(ureq::Error::Status(status, r)) => Err(fail(format!(
                "HTTP {status}: {}",
                excerpt(&r.into_string().unwrap_or_default())
            ))),
            Err(ureq::Error::Transport(t)) => Err(fail(t.to_string())),
        }
    }

    /// The request body sent for `messages`: the configured completion
    /// limit, cut to what the prompt leaves of a known context window
    /// ([`LlmError::PromptTooLong`] when that is under
    /// [`MIN_COMPLETION_TOKENS`]).
    pub fn request_body(&self, messages: &[Message]) -> Result<serde_json::Value, LlmError> {
        Ok(self.body_with_limit(messages, self.completion_limit(messages)?))
    }

    /// The completion limit a request of `messages` is sent with.
    fn completion_limit(&self, messages: &[Message]) -> Result<u32, LlmError> {
        let Some(context) = self.config.context_tokens else {
            return Ok(self.config.max_tokens);
        };
        let estimated = estimate_prompt_tokens(messages);
        let room = context.saturating_sub(estimated);
        if room < MIN_COMPLETION_TOKENS {
            return Err(LlmError::PromptTooLong {
                prompt_tokens: estimated,
                context,
                estimated: true,
            });
        }
        Ok(self.config.max_tokens.min(room))
    }

    fn body_with_limit(&self, messages: &[Message], max_tokens: u32) -> serde_json::Value {
        serde_json::json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": max_tokens,
            "stream": false,
        })
    }

    /// Sends one chat request for `role` about operator `op` (empty when
    /// none), retrying as configured; every attempt is recorded.
    ///
    /// An endpoint that refuses the request because prompt and completion
    /// exceed its context window (HTTP 400 saying both numbers, as OpenAI,
    /// vLLM and llama.cpp's servers do) is asked once more with the
    /// completion limit the prompt leaves, when that is at least
    /// [`MIN_COMPLETION_TOKENS`]; otherwise the answer is
    /// [`LlmError::PromptTooLong`].
    pub fn chat(&self, role: &str, op: &str, messages: &[Message]) -> Result<ChatReply, LlmError> {
        let body = self.request_body(messages)?;
        match self.chat_body(role, op, body) {
            Err(LlmError::Http {
                status: 400,
                body: answer,
                url,
            }) => match context_refusal(&answer) {
                Some((context, prompt_tokens)) => {
                    let room = context.saturating_sub(prompt_tokens).saturating_sub(16);
                    let sent = self.completion_limit(messages)?;
                    if room >= MIN_COMPLETION_TOKENS && room < sent {
                        self.chat_body(role, op, self.body_with_limit(messages, room))
                    } else {
                        Err(LlmError::PromptTooLong {
                            prompt_tokens,
                            context,
                            estimated: false,
                        })
                    }
                }
                None => Err(LlmError::Http {
                    url,
                    status: 400,
                    body: answer,
                }),
            },
            other => other,
        }
    }

    fn chat_body(
        &self,
        role: &str,
        op: &str,
        body: serde_json::Value,
    ) -> Result<ChatReply, LlmError> {
        let hash = request_hash(&body);
        if self.config.replay != ReplayMode::Off {
            if let Some(raw) = self.log.replay(&hash).map_err(LlmError::Log)? {
                if let Ok((content, usage)) = parse_answer(&raw) {
                    self.log
                        .record(&replayed_record(role, op, &body, raw, &hash))
                        .map_err(LlmError::Log)?;
                    return Ok(ChatReply {
                        content,
                        usage,
                        cost: None,
                        attempts: 0,
                        replayed: true,
                        request_hash: hash,
                    });
                }
            }
            if self.config.replay == ReplayMode::Strict {
                return Err(LlmError::NotRecorded { hash });
            }
        }
        let url = self.config.chat_url();
        let (content, usage, cost, attempts) =
            self.send(&url, role, op, &body, &hash, &|raw: &str| {
                let (content, usage) = parse_answer(raw)?;
                let cost = self
                    .config
                    .cost(usage.prompt_tokens, usage.completion_tokens);
                Ok((content, usage, cost))
            })?;
        Ok(ChatReply {
            content,
            usage,
            cost,
            attempts,
            replayed: false,
            request_hash: hash,
        })
    }

    /// The request body sent to embed `texts`.
    pub fn embeddings_body(&self, model: &str, texts: &[String]) -> serde_json::Value {
        serde_json::json!({ "model": model, "input": texts })
    }

    /// Embeds `texts` with the configured embedding model (`POST
    /// {base}/embeddings`) for operator `op` (empty when none): retried,
    /// recorded (role `embeddings`) and replayed exactly like a chat
    /// request. No embedding model configured is [`LlmError::Config`].
    pub fn embed(&self, op: &str, texts: &[String]) -> Result<EmbeddingReply, LlmError> {
        let model = self.config.embedding_model.clone().ok_or_else(|| {
            LlmError::Config(
                "no embedding model: give --llm-embedding-model, ASCENDOPT_LLM_EMBEDDING_MODEL or embedding_model in the config file".into(),
            )
        })?;
        if texts.is_empty() {
            return Ok(EmbeddingReply {
                vectors: Vec::new(),
                usage: Usage::default(),
                cost: None,
                attempts: 0,
                replayed: false,
            });
        }
        const ROLE: &str = "embeddings";
        let body = self.embeddings_body(&model, texts);
        let hash = request_hash(&body);
        if self.config.replay != ReplayMode::Off {
            if let Some(raw) = self.log.replay(&hash).map_err(LlmError::Log)? {
                if let Ok((vectors, usage)) = parse_embeddings(&raw, texts.len()) {
                    self.log
                        .record(&replayed_record(ROLE, op, &body, raw, &hash))
                        .map_err(LlmError::Log)?;
                    return Ok(EmbeddingReply {
                        vectors,
                        usage,
                        cost: None,
                        attempts: 0,
                        replayed: true,
                    });
                }
            }
            if self.config.replay == ReplayMode::Strict {
                return Err(LlmError::NotRecorded { hash });
            }
        }
        let url = self.config.embeddings_url();
        let n = texts.len();
        let (vectors, usage, cost, attempts) =
            self.send(&url, ROLE, op, &body, &hash, &|raw: &str| {
                let (vectors, usage) = parse_embeddings(raw, n)?;
                let cost = self.config.embedding_cost(usage.prompt_tokens);
                Ok((vectors, usage, cost))
            })?;
        Ok(EmbeddingReply {
            vectors,
            usage,
            cost,
            attempts,
            replayed: false,
        })
    }

    /// Posts `body` to `url` under the concurrency limit, retrying as
    /// configured; every attempt is recorded. `parse` turns a 200 body
    /// into the answer, its usage and cost (an error is a malformed
    /// answer, retried).
    #[allow(clippy::type_complexity)]
    fn send<T>(
        &self,
        url: &str,
        role: &str,
        op: &str,
        body: &serde_json::Value,
        hash: &str,
        parse: &dyn Fn(&str) -> Result<(T, Usage, Option<f64>), MalformedAnswer>,
    ) -> Result<(T, Usage, Option<f64>, u32), LlmError> {
        let text = body.to_string();
        let _slot = self.gate.acquire();
        let attempts = self.config.retries.saturating_add(1);
        let mut last = String::new();
        for attempt in 1..=attempts {
            match self.attempt(url, role, op, body, &text, hash, attempt, parse)? {
                Attempt::Done(value, usage, cost) => return Ok((value, usage, cost, attempt)),
                Attempt::Fatal(e) => return Err(e),
                Attempt::Retry { why, after } => {
                    last = why;
                    if attempt < attempts {
                        std::thread::sleep(self.wait(attempt, after));
                    }
                }
            }
        }
        Err(LlmError::Exhausted { attempts, last })
    }

    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn attempt<T>(
        &self,
        url: &str,
        role: &str,
        op: &str,
        body: &serde_json::Value,
        text: &str,
        hash: &str,
        attempt: u32,
        parse: &dyn Fn(&str) -> Result<(T, Usage, Option<f64>), MalformedAnswer>,
    ) -> Result<Attempt<T>, LlmError> {
        let url = url.to_string();
        let mut request = self
            .agent
            .post(&url)
            .set("Content-Type", "application/json");
        if let Some(key) = &self.key {
            request = request.set("Authorization", &format!("Bearer {key}"));
        }
        let start = Instant::now();
        let sent = request.send_string(text);
        let (status, raw, outcome) = match sent {
            Ok(response) => match response.into_string() {
                Ok(raw) => match parse(&raw) {
                    Ok((value, usage, cost)) => (
                        "ok".to_string(),
                        Some(raw),
                        Attempt::Done(value, usage, cost),
                    ),
                    Err(why) => (
                        "malformed".to_string(),
                        Some(raw),
                        Attempt::Retry {
                            why: format!("malformed answer: {why}"),
                            after: None,
                        },
                    ),
                },
                Err(e) => (
                    classify_io(&e).to_string(),
                    None,
                    Attempt::Retry {
                        why: format!("reading the answer: {e}"),
                        after: None,
                    },
                ),
            },
            Err(ureq::Error::Status(code, response)) => {
                let after = response.header("Retry-After").and_then(parse_retry_after);
                let raw = response.into_string().unwrap_or_default();
                let outcome = if code == 429 || code >= 500 {
                    Attempt::Retry {
                        why: format!("HTTP {code}: {}", excerpt(&raw)),
                        after,
                    }
                } else if code == 401 || code == 403 {
                    Attempt::Fatal(LlmError::Unauthorized {
                        url: url.clone(),
                        status: code,
                        body: excerpt(&raw),
                    })
                } else {
                    Attempt::Fatal(LlmError::Http {
                        url: url.clone(),
                        status: code,
                        body: excerpt(&raw),
                    })
                };
                (format!("http_{code}"), Some(raw), outcome)
            }
            Err(ureq::Error::Transport(t)) => {
                let timed_out = is_timeout(&t);
                (
                    if timed_out { "timeout" } else { "transport" }.to_string(),
                    None,
                    Attempt::Retry {
                        why: t.to_string(),
                        after: None,
                    },
                )
            }
        };
        let latency_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (prompt_tokens, completion_tokens, cost) = match &outcome {
            Attempt::Done(_, usage, cost) => (usage.prompt_tokens, usage.completion_tokens, *cost),
            _ => (0, 0, None),
        };
        self.log
            .record(&CallRecord {
                role: role.to_string(),
                op: op.to_string(),
                request: body.clone(),
                response: raw,
                status,
                attempt,
                prompt_tokens,
                completion_tokens,
                cost,
                latency_ms,
                request_hash: hash.to_string(),
            })
            .map_err(LlmError::Log)?;
        Ok(outcome)
    }

    /// The wait before attempt `attempt + 1`.
    fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(after) = retry_after {
            return after.min(self.config.backoff_max);
        }
        let exp = self
            .config
            .backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
        let ceiling = exp.min(self.config.backoff_max);
        let unit = {
            let mut state = self.rng.lock().unwrap_or_else(|p| p.into_inner());
            *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64
        };
        ceiling.mul_f64(0.5 + 0.5 * unit)
    }
}

/// Why an answer body of the chat or the embeddings endpoint does not
/// read as an answer (the call is retried).
#[derive(Debug, thiserror::Error)]
pub enum MalformedAnswer {
    /// The body is not JSON.
    #[error("not JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    /// A chat answer without `choices[0].message`.
    #[error("no choices[0].message")]
    NoMessage,
    /// A chat answer whose `content` is neither a string nor null.
    #[error("content is not a string: {0}")]
    ContentNotString(serde_json::Value),
    /// An embeddings answer without its `data` array.
    #[error("no `data` array")]
    NoData,
    /// An embedding placed past the inputs.
    #[error("index {index} for {inputs} inputs")]
    IndexOutOfRange {
        /// Its `index`.
        index: usize,
        /// How many inputs were sent.
        inputs: usize,
    },
    /// An item of `data` without its vector.
    #[error("item {item} has no `embedding` array")]
    NoEmbedding {
        /// The item's position in `data`.
        item: usize,
    },
    /// A vector with something else than numbers.
    #[error("item {item} has a non-number in its embedding")]
    NotANumber {
        /// The item's position in `data`.
        item: usize,
    },
    /// An empty vector.
    #[error("item {item} has an empty embedding")]
    EmptyEmbedding {
        /// The item's position in `data`.
        item: usize,
    },
    /// An input the answer gave no vector for.
    #[error("no embedding for input {input}")]
    MissingInput {
        /// The input's position.
        input: usize,
    },
}

/// `choices[0].message.content` and `usage` of an answer body.
pub fn parse_answer(raw: &str) -> Result<(String, Usage), MalformedAnswer> {
    let json: serde_json::Value = serde_json::from_str(raw).map_err(MalformedAnswer::NotJson)?;
    let message = json
        .get("choices")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .and_then(|c| c.get("message"))
        .ok_or(MalformedAnswer::NoMessage)?;
    let content = match message.get("content") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => return Err(MalformedAnswer::ContentNotString(other.clone())),
    };
    let usage = json.get("usage");
    let field = |name: &str| {
        usage
            .and_then(|u| u.get(name))
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    };
    Ok((
        content,
        Usage {
            prompt_tokens: field("prompt_tokens"),
            completion_tokens: field("completion_tokens"),
        },
    ))
}

/// The vectors of an embeddings answer body (`data[i].embedding`, placed
/// by `data[i].index` when given) for `n` inputs, and its usage.
pub fn parse_embeddings(raw: &str, n: usize) -> Result<(Vec<Vec<f32>>, Usage), MalformedAnswer> {
    let json: serde_json::Value = serde_json::from_str(raw).map_err(MalformedAnswer::NotJson)?;
    let data = json
        .get("data")
        .and_then(|d| d.as_array())
        .ok_or(MalformedAnswer::NoData)?;
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(|i| i.as_u64())
            .map_or(position, |i| usize::try_from(i).unwrap_or(usize::MAX));
        let slot = out
            .get_mut(index)
            .ok_or(MalformedAnswer::IndexOutOfRange { index, inputs: n })?;
        let vector = item
            .get("embedding")
            .and_then(|e| e.as_array())
            .ok_or(MalformedAnswer::NoEmbedding { item: position })?
            .iter()
            .map(|x| x.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or(MalformedAnswer::NotANumber { item: position })?;
        if vector.is_empty() {
            return Err(MalformedAnswer::EmptyEmbedding { item: position });
        }
        *slot = Some(vector);
    }
    let vectors = out
        .into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or(MalformedAnswer::MissingInput { input: i }))
        .collect::<Result<Vec<_>, _>>()?;
    let tokens = json
        .get("usage")
        .and_then(|u| u.get("prompt_tokens").or_else(|| u.get("total_tokens")))
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    Ok((
        vectors,
        Usage {
            prompt_tokens: tokens,
            completion_tokens: 0,
        },
    ))
}

/// The audit record of a call answered from the log: nothing was spent
/// (the tokens were paid for by the recorded call).
fn replayed_record(
    role: &str,
    op: &str,
    body: &serde_json::Value,
    raw: String,
    hash: &str,
) -> CallRecord {
    CallRecord {
        role: role.to_string(),
        op: op.to_string(),
        request: body.clone(),
        response: Some(raw),
        status: "replayed".into(),
        attempt: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost: None,
        latency_ms: 0,
        request_hash: hash.to_string(),
    }
}
fn seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x9e37_79b9_7f4a_7c15)
        | 1
}

/// `Retry-After` in seconds (integer or decimal); HTTP dates are ignored
/// (the computed back-off applies).
fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

fn is_timeout(t: &ureq::Transport) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(t);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            );
        }
        source = s.source();
    }
    t.to_string().contains("timed out")
}

fn classify_io(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => "timeout",
        _ => "transport",
    }
}

fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(300).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// A rough upper-middle estimate of a prompt's tokens: three bytes a token
/// (English prose runs about four, code and JSON numbers nearer two) and a
/// few tokens of framing a message. Only used to cut the completion limit
/// against a known context window; the endpoint's own count corrects it.
pub fn estimate_prompt_tokens(messages: &[Message]) -> u32 {
    let tokens: usize = messages
        .iter()
        .map(|m| m.content.len().div_ceil(3) + 4)
        .sum();
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The context window and the prompt's tokens from an endpoint's refusal
/// of a request that does not fit ("maximum context length is 8192 tokens.
/// However, you requested 13966 tokens (13198 in the messages, 768 in the
/// completion)"), when the answer says both.
pub fn context_refusal(answer: &str) -> Option<(u32, u32)> {
    fn number_after(text: &str, key: &str) -> Option<u32> {
        let at = text.find(key)? + key.len();
        let digits: String = text[at..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().ok()
    }
    fn number_before(text: &str, key: &str) -> Option<u32> {
        let head = text[..text.find(key)?].trim_end();
        let start = head
            .rfind(|c: char| !c.is_ascii_digit())
            .map_or(0, |i| i + 1);
        head[start..].parse().ok()
    }
    let lower = answer.to_ascii_lowercase();
    let context = number_after(&lower, "maximum context length is")?;
    let prompt = number_before(&lower, "in the messages")
        .or_else(|| number_before(&lower, "tokens in the prompt"))?;
    Some((context, prompt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_answers_and_rejects_malformed_ones() {
        let ok = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
        assert_eq!(
            parse_answer(ok).unwrap(),
            (
                "hi".to_string(),
                Usage {
                    prompt_tokens: 3,
                    completion_tokens: 1
                }
            )
        );
        assert!(parse_answer("{\"choices\": [").is_err());
        assert!(parse_answer("{\"choices\": []}").is_err());
        assert!(parse_answer(r#"{"choices":[{"message":{"content":5}}]}"#).is_err());
        assert_eq!(
            parse_answer(r#"{"choices":[{"message":{"content":null}}]}"#)
                .unwrap()
                .0,
            ""
        );
    }

    #[test]
    fn parses_embeddings_by_index_and_rejects_short_answers() {
        let raw = r#"{"data":[{"index":1,"embedding":[0.5,1]},{"index":0,"embedding":[2,0]}],"usage":{"prompt_tokens":7,"total_tokens":7}}"#;
        let (v, usage) = parse_embeddings(raw, 2).unwrap();
        assert_eq!(v, vec![vec![2.0, 0.0], vec![0.5, 1.0]]);
        assert_eq!(usage.prompt_tokens, 7);
        assert_eq!(
            parse_embeddings(raw, 3).unwrap_err().to_string(),
            "no embedding for input 2"
        );
        assert_eq!(
            parse_embeddings(raw, 1).unwrap_err().to_string(),
            "index 1 for 1 inputs"
        );
        assert!(parse_embeddings("{}", 1).is_err());
        assert!(parse_embeddings(r#"{"data":[{"embedding":["x"]}]}"#, 1).is_err());
    }

    #[test]
    fn retry_after_seconds() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }
}
