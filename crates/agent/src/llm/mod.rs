//! The LLM behind the agent's interfaces: [`LlmProposer`] (Rewind's
//! inverse agent, Stage I's rewriter, Stage II's tiling mutator),
//! [`LlmDiagnoser`] and [`LlmDistiller`], all over one shared
//! [`LlmClient`], plus [`StoreCallLog`], the audit sink that writes every
//! request and response into the run store (`llm_calls`) and answers
//! replay look-ups from it.
//!
//! Failure rules:
//! - An answer that yields no applicable edit is a
//!   [`Proposal`](crate::proposer::Proposal) with
//!   `candidate = Err(reason)`: the loop charges it like a compile error and
//!   the reason reaches the next prompt through [`Feedback`]. With
//!   `repairs > 0` the proposer immediately asks again with the reason
//!   (each failed answer is still its own charged proposal).
//! - A client error (no key, unreachable endpoint, retries exhausted) is a
//!   [`ProposeError`]: the loop stops, nothing is charged for it.
//! - The diagnoser and distiller fall back to the built-in ones when an
//!   answer holds no usable JSON, and say so in the text.

mod diagnoser;
mod distiller;
mod proposer;

pub use diagnoser::LlmDiagnoser;
pub use distiller::LlmDistiller;
pub(crate) use proposer::apply_answer;
pub use proposer::LlmProposer;

use crate::bench::{AgentFactory, BenchError};
use crate::diagnose::Diagnoser;
use crate::distill::Distiller;
use crate::proposer::{Feedback, ProposeError, Proposer};
use crate::AgentError;
use ascendopt_bank::embed::EmbeddingConfig;
use ascendopt_harness::store::{NewLlmCall, RunId, RunStore};
use ascendopt_llm::audit::{CallLog, CallRecord};
use ascendopt_llm::error::LlmError;

pub use ascendopt_llm::client::LlmClient;
pub use ascendopt_llm::config::{LlmConfig, LlmSettings, ReplayMode};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A [`CallLog`] over the run store: one `llm_calls` row per attempt, and
/// replay from any run's successful calls. It holds its own connection to
/// the store file (SQLite in WAL mode serves both). It may be opened
/// before its run exists ([`StoreCallLog::open_detached`], so that the
/// endpoint is checked before a run is created) and attached later. A
/// call made while detached (the benchmark makes its runs itself) is
/// recorded under a run of its own, created on the first such call with
/// the configuration `{"llm_calls": "detached"}`, so that no call goes
/// unaudited.
pub struct StoreCallLog {
    store: Mutex<RunStore>,
    run: Mutex<Option<RunId>>,
}

impl StoreCallLog {
    /// Opens the store at `path` for the calls of `run`.
    pub fn open(path: &Path, run: RunId) -> Result<StoreCallLog, AgentError> {
        let log = StoreCallLog::open_detached(path)?;
        log.attach(run);
        Ok(log)
    }

    /// Opens the store at `path`, not yet attached to a run.
    pub fn open_detached(path: &Path) -> Result<StoreCallLog, AgentError> {
        Ok(StoreCallLog {
            store: Mutex::new(RunStore::open(path)?),
            run: Mutex::new(None),
        })
    }

    /// Records the following calls under `run`.
    pub fn attach(&self, run: RunId) {
        *self.run.lock().unwrap_or_else(|p| p.into_inner()) = Some(run);
    }
}

impl CallLog for StoreCallLog {
    fn record(&self, r: &CallRecord) -> Result<(), String> {
        let store = self
            .store
            .lock()
            .map_err(|_| "store lock poisoned".to_string())?;
        let run = {
            let mut slot = self.run.lock().unwrap_or_else(|p| p.into_inner());
            match *slot {
                Some(run) => run,
                None => {
                    let run = store
                        .create_run(&serde_json::json!({"llm_calls": "detached"}))
                        .map_err(|e| e.to_string())?;
                    *slot = Some(run);
                    run
                }
            }
        };
        let request = r.request.to_string();
        store
            .record_llm_call(&NewLlmCall {
                run,
                op: &r.op,
                role: &r.role,
                request: &request,
                response: r.response.as_deref(),
                status: &r.status,
                attempt: r.attempt,
                prompt_tokens: r.prompt_tokens,
                completion_tokens: r.completion_tokens,
                cost: r.cost,
                latency_ms: r.latency_ms,
                request_hash: &r.request_hash,
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn replay(&self, request_hash: &str) -> Result<Option<String>, String> {
        let store = self
            .store
            .lock()
            .map_err(|_| "store lock poisoned".to_string())?;
        store
            .find_llm_response(request_hash)
            .map_err(|e| e.to_string())
    }
}

/// The LLM agents for commands and the benchmark: proposer, diagnoser and
/// distiller over one shared client (the benchmark's [`AgentFactory`]).
#[derive(Clone)]
pub struct LlmAgents {
    client: Arc<LlmClient>,
}

impl LlmAgents {
    /// Agents over `client`.
    pub fn new(client: Arc<LlmClient>) -> LlmAgents {
        LlmAgents { client }
    }

    /// The shared client (the coder-plus-judge baseline talks to it).
    pub fn client(&self) -> &Arc<LlmClient> {
        &self.client
    }
}

impl AgentFactory for LlmAgents {
    fn name(&self) -> String {
        format!("llm:{}", self.client.config().model)
    }
    fn proposer(&self, _seed: u64) -> Result<Box<dyn Proposer>, BenchError> {
        Ok(Box::new(LlmProposer::new(self.client.clone())))
    }
    fn diagnoser(&self) -> Result<Box<dyn Diagnoser>, BenchError> {
        Ok(Box::new(LlmDiagnoser::new(self.client.clone())))
    }
    fn distiller(&self) -> Result<Box<dyn Distiller>, BenchError> {
        Ok(Box::new(LlmDistiller::new(self.client.clone())))
    }
    fn has_llm(&self) -> bool {
        true
    }
    fn llm_client(&self) -> Option<Arc<LlmClient>> {
        Some(self.client.clone())
    }
}

/// Builds the client for a run: its calls go to the run store at
/// `store_path` under `run`; the key and the endpoint are checked
/// ([`LlmClient::preflight`]) before anything is spent.
pub fn connect(
    config: LlmConfig,
    store_path: &Path,
    run: RunId,
) -> Result<Arc<LlmClient>, AgentError> {
    let log = Arc::new(StoreCallLog::open(store_path, run)?);
    let client = LlmClient::new(config, log).map_err(llm_error)?;
    client.preflight().map_err(llm_error)?;
    Ok(Arc::new(client))
}

/// [`connect`] before the run exists: the returned log must be
/// [`StoreCallLog::attach`]ed to the run before the first call.
pub fn connect_detached(
    config: LlmConfig,
    store_path: &Path,
) -> Result<(Arc<LlmClient>, Arc<StoreCallLog>), AgentError> {
    let log = Arc::new(StoreCallLog::open_detached(store_path)?);
    let client = LlmClient::new(config, log.clone()).map_err(llm_error)?;
    client.preflight().map_err(llm_error)?;
    Ok((Arc::new(client), log))
}

/// Dense retrieval through the same endpoint's embeddings API, when the
/// configuration names an embedding model.
pub fn embedding_config(config: &LlmConfig) -> Option<EmbeddingConfig> {
    let model = config.embedding_model.clone()?;
    let key_set = std::env::var(&config.api_key_env).is_ok_and(|k| !k.trim().is_empty());
    Some(EmbeddingConfig {
        base_url: config.base_url.clone(),
        model,
        api_key_env: (key_set || !(config.allow_no_key && config.is_local()))
            .then(|| config.api_key_env.clone()),
        timeout: config.timeout,
    })
}

/// A client failure as the loops see it (stops the loop, never charged).
pub fn llm_error(e: LlmError) -> ProposeError {
    ProposeError {
        proposer: "llm".into(),
        message: e.to_string(),
    }
}

impl From<LlmError> for AgentError {
    fn from(e: LlmError) -> AgentError {
        AgentError::Propose(llm_error(e))
    }
}

/// Earlier attempts as prompt text (the last `max` of them).
pub(crate) fn feedback_text(feedback: &Feedback, max: usize) -> String {
    if feedback.attempts.is_empty() {
        return "none yet".to_string();
    }
    let skip = feedback.attempts.len().saturating_sub(max);
    feedback.attempts[skip..]
        .iter()
        .map(|(action, verdict, reason)| {
            let mut reason: String = reason.chars().take(400).collect();
            if reason.is_empty() {
                reason = "-".into();
            }
            format!("- [{verdict}] {}: {reason}", action.summary)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The profile JSON for a prompt (pretty, bounded).
pub(crate) fn profile_text(profile: Option<&serde_json::Value>) -> String {
    match profile {
        None => "{}".to_string(),
        Some(p) => {
            let text = serde_json::to_string_pretty(p).unwrap_or_else(|_| p.to_string());
            if text.len() > 12_000 {
                let mut cut = 12_000;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}\n... (truncated)", &text[..cut])
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_go_through_the_same_endpoint_when_a_model_is_named() {
        let mut cfg = LlmConfig::from_settings(LlmSettings {
            base_url: Some("http://127.0.0.1:8000/v1".into()),
            model: Some("chat".into()),
            api_key_env: Some("ASCENDOPT_AGENT_TEST_SURELY_UNSET_KEY".into()),
            ..LlmSettings::default()
        })
        .unwrap();
        assert!(embedding_config(&cfg).is_none());
        cfg.embedding_model = Some("embed".into());
        let e = embedding_config(&cfg).unwrap();
        assert_eq!(e.endpoint(), "http://127.0.0.1:8000/v1/embeddings");
        assert_eq!(e.model, "embed");
        // A required key is passed on (the bank reports it missing).
        assert_eq!(
            e.api_key_env.as_deref(),
            Some("ASCENDOPT_AGENT_TEST_SURELY_UNSET_KEY")
        );
        cfg.allow_no_key = true;
        assert_eq!(embedding_config(&cfg).unwrap().api_key_env, None);
    }

    #[test]
    fn a_detached_log_records_under_a_run_of_its_own_until_attached() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.sqlite");
        let log = StoreCallLog::open_detached(&path).unwrap();
        let record = CallRecord {
            role: "rewriter".into(),
            op: "op".into(),
            request: serde_json::json!({"model": "m"}),
            response: Some("{}".into()),
            status: "ok".into(),
            attempt: 1,
            prompt_tokens: 5,
            completion_tokens: 1,
            cost: None,
            latency_ms: 3,
            request_hash: "h".into(),
        };
        log.record(&record).unwrap();
        log.record(&record).unwrap();
        let store = RunStore::open(&path).unwrap();
        let runs = store.runs().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].config["llm_calls"], "detached");
        assert_eq!(store.llm_calls(runs[0].id).unwrap().len(), 2);
        let mine = store.create_run(&serde_json::json!({})).unwrap();
        log.attach(mine);
        log.record(&record).unwrap();
        assert_eq!(store.llm_calls(mine).unwrap().len(), 1);
        assert_eq!(log.replay("h").unwrap().as_deref(), Some("{}"));
    }

    #[test]
    fn feedback_lists_the_latest_attempts() {
        let mut f = Feedback::default();
        assert_eq!(feedback_text(&f, 2), "none yet");
        for i in 0..3 {
            f.attempts.push((
                crate::session::Action {
                    summary: format!("try {i}"),
                    ..Default::default()
                },
                "no_edit".into(),
                format!("reason {i}"),
            ));
        }
        let text = feedback_text(&f, 2);
        assert!(!text.contains("try 0"));
        assert!(text.contains("- [no_edit] try 2: reason 2"));
    }
}
