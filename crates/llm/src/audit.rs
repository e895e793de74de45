//! The audit sink: every HTTP attempt of the client (and every replayed
//! answer) is handed to a [`CallLog`] with its request, response, status,
//! token usage, cost and latency, so that a run can be audited and replayed.
//! The agent implements it over the run store; [`MemoryCallLog`] keeps
//! records in memory (tests, dry runs).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Mutex;

/// One attempt (or replayed answer) of one chat request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The role that asked (`inverse`, `rewriter`, `diagnoser`, ...).
    pub role: String,
    /// The operator it was about (empty when none).
    pub op: String,
    /// The request body as sent.
    pub request: serde_json::Value,
    /// The raw response body, when one arrived.
    pub response: Option<String>,
    /// `ok`, `replayed`, `http_429`, `http_500`, `timeout`, `transport`,
    /// `malformed`, `http_400`, ...
    pub status: String,
    /// 1-based attempt number of this request.
    pub attempt: u32,
    /// Prompt tokens reported by the endpoint (0 when unknown).
    pub prompt_tokens: u64,
    /// Completion tokens reported by the endpoint.
    pub completion_tokens: u64,
    /// Cost, when prices are configured.
    pub cost: Option<f64>,
    /// Wall time of the attempt, milliseconds.
    pub latency_ms: u64,
    /// SHA-256 of the request body (the replay key).
    pub request_hash: String,
}

impl CallRecord {
    /// Whether the attempt produced a usable answer.
    pub fn is_ok(&self) -> bool {
        self.status == "ok" || self.status == "replayed"
    }
}

/// The replay key of a request body: SHA-256 of its JSON text (keys are
/// sorted, so equal requests give equal keys).
pub fn request_hash(body: &serde_json::Value) -> String {
    format!("{:x}", Sha256::digest(body.to_string().as_bytes()))
}

/// Why a [`CallLog`] could not record a call or answer a look-up.
#[derive(Debug, thiserror::Error)]
pub enum CallLogError {
    /// A thread panicked while holding the log's lock.
    #[error("call log lock poisoned")]
    Poisoned,
    /// The storage behind the log failed (e.g. the run store).
    #[error(transparent)]
    Storage(Box<dyn std::error::Error + Send + Sync>),
}

/// Receives every call; answers replay look-ups.
pub trait CallLog: Send + Sync {
    /// Stores one record. An error stops the call (an unaudited call must
    /// not feed the loop).
    fn record(&self, record: &CallRecord) -> Result<(), CallLogError>;

    /// The raw response body of an earlier successful call with this
    /// request hash, if any.
    fn replay(&self, request_hash: &str) -> Result<Option<String>, CallLogError>;
}

/// A [`CallLog`] in memory.
#[derive(Debug, Default)]
pub struct MemoryCallLog {
    records: Mutex<Vec<CallRecord>>,
}

impl MemoryCallLog {
    /// An empty log.
    pub fn new() -> MemoryCallLog {
        MemoryCallLog::default()
    }

    /// Every record so far, in order.
    pub fn records(&self) -> Vec<CallRecord> {
        self.records
            .lock()
            .map(|r| r.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }
}

impl CallLog for MemoryCallLog {
    fn record(&self, record: &CallRecord) -> Result<(), CallLogError> {
        self.records
            .lock()
            .map_err(|_| CallLogError::Poisoned)?
            .push(record.clone());
        Ok(())
    }

    fn replay(&self, request_hash: &str) -> Result<Option<String>, CallLogError> {
        let records = self.records.lock().map_err(|_| CallLogError::Poisoned)?;
        Ok(records
            .iter()
            .rev()
            .find(|r| r.request_hash == request_hash && r.status == "ok")
            .and_then(|r| r.response.clone()))
    }
}
