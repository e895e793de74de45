//! The `llm_calls` table (schema version 3): every request an LLM client
//! sent for a run, with its response, status, token usage, cost and
//! latency, for audit; and the look-up by request hash that replay uses.

use super::{now_ms, RunId, RunStore, StoreError};
use rusqlite::{params, OptionalExtension};

/// An LLM call to record.
#[derive(Debug, Clone, Copy)]
pub struct NewLlmCall<'a> {
    /// The run.
    pub run: RunId,
    /// The operator it was about (empty when none).
    pub op: &'a str,
    /// The role (`inverse`, `rewriter`, `diagnoser`, ...).
    pub role: &'a str,
    /// The request body, JSON text.
    pub request: &'a str,
    /// The raw response body, if one arrived.
    pub response: Option<&'a str>,
    /// `ok`, `replayed`, `http_429`, `timeout`, `malformed`, ...
    pub status: &'a str,
    /// 1-based attempt (0 for a replayed answer).
    pub attempt: u32,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Cost, when prices are configured.
    pub cost: Option<f64>,
    /// Wall time, milliseconds.
    pub latency_ms: u64,
    /// SHA-256 of the request body.
    pub request_hash: &'a str,
}

/// A stored LLM call.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmCall {
    /// Row id (insertion order).
    pub id: i64,
    /// The run.
    pub run: RunId,
    /// The operator.
    pub op: String,
    /// The role.
    pub role: String,
    /// The request body, JSON text.
    pub request: String,
    /// The raw response body.
    pub response: Option<String>,
    /// The status.
    pub status: String,
    /// The attempt.
    pub attempt: u32,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Cost.
    pub cost: Option<f64>,
    /// Wall time, milliseconds.
    pub latency_ms: u64,
    /// SHA-256 of the request body.
    pub request_hash: String,
    /// When it was recorded, Unix milliseconds.
    pub created_ms: i64,
}

/// Totals of a run's LLM calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LlmUsage {
    /// Rows (attempts and replayed answers).
    pub calls: u64,
    /// Rows whose status is `ok`.
    pub ok: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Cost of the calls whose cost is known.
    pub cost: f64,
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl RunStore {
    /// Records one LLM call; returns its row id.
    pub fn record_llm_call(&self, call: &NewLlmCall<'_>) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO llm_calls (run, op, role, request, response, status, attempt,
                    prompt_tokens, completion_tokens, cost, latency_ms, request_hash, created_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    call.run.0,
                    call.op,
                    call.role,
                    call.request,
                    call.response,
                    call.status,
                    call.attempt,
                    to_i64(call.prompt_tokens),
                    to_i64(call.completion_tokens),
                    call.cost,
                    to_i64(call.latency_ms),
                    call.request_hash,
                    now_ms(),
                ],
            )
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    StoreError::UnknownRun { run: call.run }
                }
                e => self.sql(e),
            })?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Every LLM call of a run, in the order recorded.
    pub fn llm_calls(&self, run: RunId) -> Result<Vec<LlmCall>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, run, op, role, request, response, status, attempt, prompt_tokens,
                        completion_tokens, cost, latency_ms, request_hash, created_ms
                 FROM llm_calls WHERE run = ?1 ORDER BY id",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([run.0], |r| {
                Ok(LlmCall {
                    id: r.get(0)?,
                    run: RunId(r.get(1)?),
                    op: r.get(2)?,
                    role: r.get(3)?,
                    request: r.get(4)?,
                    response: r.get(5)?,
                    status: r.get(6)?,
                    attempt: u32::try_from(r.get::<_, i64>(7)?).unwrap_or(0),
                    prompt_tokens: u64::try_from(r.get::<_, i64>(8)?).unwrap_or(0),
                    completion_tokens: u64::try_from(r.get::<_, i64>(9)?).unwrap_or(0),
                    cost: r.get(10)?,
                    latency_ms: u64::try_from(r.get::<_, i64>(11)?).unwrap_or(0),
                    request_hash: r.get(12)?,
                    created_ms: r.get(13)?,
                })
            })
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql(e))?;
        Ok(rows)
    }

    /// Token and cost totals of a run's calls.
    pub fn llm_usage(&self, run: RunId) -> Result<LlmUsage, StoreError> {
        self.conn
            .query_row(
                "SELECT count(*), coalesce(sum(status = 'ok'), 0), coalesce(sum(prompt_tokens), 0),
                        coalesce(sum(completion_tokens), 0), coalesce(sum(cost), 0.0)
                 FROM llm_calls WHERE run = ?1",
                [run.0],
                |r| {
                    Ok(LlmUsage {
                        calls: u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                        ok: u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                        prompt_tokens: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                        completion_tokens: u64::try_from(r.get::<_, i64>(3)?).unwrap_or(0),
                        cost: r.get(4)?,
                    })
                },
            )
            .map_err(|e| self.sql(e))
    }

    /// The response of the latest successful (`ok`) call with this request
    /// hash, in any run: what replay answers with.
    pub fn find_llm_response(&self, request_hash: &str) -> Result<Option<String>, StoreError> {
        let found: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT response FROM llm_calls WHERE request_hash = ?1 AND status = 'ok'
                 ORDER BY id DESC LIMIT 1",
                [request_hash],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        Ok(found.flatten())
    }
}
