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
//! - Dense retrieval ([`DenseRetrieval`], when an embedding model is
//!   configured) is checked by a preflight before a run; during a run an
//!   embeddings failure falls back to lexical retrieval for that round,
//!   with a warning in the call log.

mod dense;
mod diagnoser;
mod distiller;
mod proposer;

pub use dense::{DenseRetrieval, FALLBACK_STATUS};
pub use diagnoser::LlmDiagnoser;
pub use distiller::LlmDistiller;
pub use proposer::apply_answer;
pub use proposer::LlmProposer;

use crate::proposer::Feedback;
use crate::AgentError;
use crate::ProposeError;
use ascendopt_harness::store::{NewLlmCall, RunId, RunStore};
use ascendopt_llm::audit::{CallLog, CallLogError, CallRecord};
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
    fn record(&self, r: &CallRecord) -> Result<(), CallLogError> {
        let store = self.store.lock().map_err(|_| CallLogError::Poisoned)?;
        let run = {
            let mut slot = self.run.lock().unwrap_or_else(|p| p.into_inner());
            match *slot {
                Some(run) => run,
                None => {
                    let run = store
                        .create_run(&serde_json::json!({"llm_calls": "detached"}))
                        .map_err(storage)?;
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
            .map_err(storage)
    }

    fn replay(&self, request_hash: &str) -> Result<Option<String>, CallLogError> {
        let store = self.store.lock().map_err(|_| CallLogError::Poisoned)?;
        store.find_llm_response(request_hash).map_err(storage)
    }
}

/// A run store failure, as the call log reports it.
fn storage(e: ascendopt_harness::store::StoreError) -> CallLogError {
    CallLogError::Storage(Box::new(e))
}

/// Builds the client for a run: its calls go to the run store at
/// `store_path` under `run`; the key, the endpoint and (when configured)
/// the embedding model are checked ([`LlmClient::preflight`],
/// [`LlmClient::preflight_embeddings`]) before anything is spent.
pub fn connect(
    config: LlmConfig,
    store_path: &Path,
    run: RunId,
) -> Result<Arc<LlmClient>, AgentError> {
    let log = Arc::new(StoreCallLog::open(store_path, run)?);
    let client = LlmClient::new(config, log).map_err(llm_error)?;
    client.preflight().map_err(llm_error)?;
    client.preflight_embeddings().map_err(llm_error)?;
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
    client.preflight_embeddings().map_err(llm_error)?;
    Ok((Arc::new(client), log))
}

/// A client failure as the loops see it (never charged): a prompt too
/// long for the model's context ends the stage that asked (the same
/// operator's next request would be as long), every other failure stops
/// the run.
pub fn llm_error(e: LlmError) -> ProposeError {
    ProposeError {
        proposer: "llm".into(),
        message: e.to_string(),
        ends_stage: matches!(e, LlmError::PromptTooLong { .. }),
    }
}

impl From<LlmError> for AgentError {
    fn from(e: LlmError) -> AgentError {
        AgentError::Propose(llm_error(e))
    }
}

/// Earlier attempts as prompt text (the last `max` of them).
pub fn feedback_text(feedback: &Feedback, max: usize) -> String {
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
pub fn profile_text(profile: Option<&ascendopt_device::Profile>) -> String {
    match profile {
        None => "{}".to_string(),
        Some(p) => {
            let mut json = serde_json::to_value(p).unwrap_or(serde_json::Value::Null);
            // The core count is the device's, not the kernel's; left out so
            // the prompt (and the replay key of a recorded run) is what it
            // was before profiles carried it.
            if let Some(o) = json.as_object_mut() {
                o.remove("cores");
            }
            let p = compact_profile(&json);
            let text = serde_json::to_string_pretty(&p).unwrap_or_else(|_| p.to_string());
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

/// The profile as a prompt shows it: numbers to four significant digits,
/// and the per-block list folded (blocks alike but for their id become one
/// entry naming the ids; with more than four kinds, the slowest and the
/// fastest block and a count). A 48-block profile is otherwise 27 KB of
/// near-identical JSON, more than a small model's whole context.
pub(crate) fn compact_profile(p: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    fn round(v: &Value) -> Value {
        match v {
            Value::Number(n) if n.is_f64() => {
                let x = n.as_f64().unwrap_or(0.0);
                if x == 0.0 || !x.is_finite() {
                    return v.clone();
                }
                let digits = 4 - 1 - x.abs().log10().floor() as i32;
                let scale = 10f64.powi(digits.clamp(-12, 12));
                serde_json::json!((x * scale).round() / scale)
            }
            Value::Array(a) => Value::Array(a.iter().map(round).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), round(v))).collect())
            }
            other => other.clone(),
        }
    }
    fn ids_text(ids: &[i64]) -> String {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < ids.len() {
            let mut j = i;
            while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
                j += 1;
            }
            parts.push(if i == j {
                ids[i].to_string()
            } else {
                format!("{}-{}", ids[i], ids[j])
            });
            i = j + 1;
        }
        parts.join(",")
    }
    let mut out = round(p);
    fold_hotspots(&mut out);
    let Some(blocks) = out.get("blocks").and_then(Value::as_array).cloned() else {
        return out;
    };
    if blocks.len() < 2 {
        return out;
    }
    // Group blocks equal but for their id, in first-seen order.
    let mut kinds: Vec<(Value, Vec<i64>)> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let id = b
            .get("block_id")
            .and_then(Value::as_i64)
            .unwrap_or(i as i64);
        let mut body = b.clone();
        if let Some(o) = body.as_object_mut() {
            o.remove("block_id");
        }
        match kinds.iter_mut().find(|(k, _)| *k == body) {
            Some((_, ids)) => ids.push(id),
            None => kinds.push((body, vec![id])),
        }
    }
    let time = |b: &Value| b.get("aiv_time(us)").and_then(Value::as_f64).unwrap_or(0.0);
    let shown: Vec<&(Value, Vec<i64>)> = if kinds.len() <= 4 {
        kinds.iter().collect()
    } else {
        let slowest = kinds
            .iter()
            .max_by(|a, b| time(&a.0).total_cmp(&time(&b.0)));
        let fastest = kinds
            .iter()
            .min_by(|a, b| time(&a.0).total_cmp(&time(&b.0)));
        slowest.into_iter().chain(fastest).collect()
    };
    let folded: Vec<Value> = shown
        .into_iter()
        .map(|(body, ids)| {
            let mut entry = serde_json::Map::new();
            entry.insert("block_ids".into(), Value::String(ids_text(ids)));
            if let Some(o) = body.as_object() {
                entry.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            Value::Object(entry)
        })
        .collect();
    if let Some(o) = out.as_object_mut() {
        if kinds.len() > 4 {
            o.insert(
                "blocks_note".into(),
                Value::String(format!(
                    "{} blocks of {} kinds: the slowest and the fastest shown",
                    blocks.len(),
                    kinds.len()
                )),
            );
        }
        o.insert("blocks".into(), Value::Array(folded));
    }
    out
}

/// Most per-line hotspots a prompt shows.
const PROMPT_HOTSPOT_LINES: usize = 8;

/// The per-line hotspots as one sentence a line (file:line, API, kind,
/// pipe, the largest of busy, wait and scalar time and its share), the
/// costliest [`PROMPT_HOTSPOT_LINES`] of them: the same facts in a tenth of
/// the JSON.
fn fold_hotspots(profile: &mut serde_json::Value) {
    use serde_json::Value;
    let Some(lines) = profile
        .pointer("/hotspots/lines")
        .and_then(Value::as_array)
        .cloned()
    else {
        return;
    };
    let num = |l: &Value, k: &str| l.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let text = |l: &Value, k: &str| l.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let cost = |l: &Value| {
        num(l, "busy_us")
            .max(num(l, "wait_us"))
            .max(num(l, "scalar_us"))
    };
    let mut ranked: Vec<&Value> = lines.iter().collect();
    ranked.sort_by(|a, b| cost(b).total_cmp(&cost(a)));
    let shown: Vec<Value> = ranked
        .iter()
        .take(PROMPT_HOTSPOT_LINES)
        .map(|l| {
            let (what, us, share) = [
                ("busy", num(l, "busy_us"), num(l, "busy_share")),
                ("waiting", num(l, "wait_us"), num(l, "wait_share")),
                ("scalar", num(l, "scalar_us"), num(l, "scalar_share")),
            ]
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or(("busy", 0.0, 0.0));
            let bytes = num(l, "bytes");
            Value::String(format!(
                "{}:{} {} ({}, {}) x{}: {what} {us} us ({:.0}% of the block){}",
                text(l, "file"),
                l.get("line").and_then(Value::as_u64).unwrap_or(0),
                text(l, "api"),
                text(l, "kind"),
                text(l, "pipe"),
                l.get("count").and_then(Value::as_u64).unwrap_or(0),
                share * 100.0,
                if bytes > 0.0 {
                    format!(", {bytes} bytes")
                } else {
                    String::new()
                }
            ))
        })
        .collect();
    if let Some(h) = profile.get_mut("hotspots").and_then(Value::as_object_mut) {
        if lines.len() > shown.len() {
            h.insert(
                "lines_note".into(),
                Value::String(format!(
                    "the costliest {} of {} lines",
                    shown.len(),
                    lines.len()
                )),
            );
        }
        h.insert("lines".into(), Value::Array(shown));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_of_alike_blocks_is_folded_and_rounded() {
        let block = |id: u32, t: f64| serde_json::json!({"block_id": id, "aiv_time(us)": t, "aiv_mte2_ratio": 0.9832150543706744});
        let mut blocks: Vec<_> = (0..47).map(|i| block(i, 88.53833333333333)).collect();
        blocks.push(block(47, 60.0));
        let p = serde_json::json!({"Task Duration(us)": 109.01833333333333, "blocks": blocks});
        let c = compact_profile(&p);
        assert_eq!(c["Task Duration(us)"], 109.0);
        let b = c["blocks"].as_array().unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0]["block_ids"], "0-46");
        assert_eq!(b[0]["aiv_mte2_ratio"], 0.9832);
        assert_eq!(b[1]["block_ids"], "47");
        assert!(serde_json::to_string_pretty(&c).unwrap().len() < 400);

        // Many kinds: the slowest and the fastest, and how many there were.
        let blocks: Vec<_> = (0..10).map(|i| block(i, 10.0 + f64::from(i))).collect();
        let c = compact_profile(&serde_json::json!({"blocks": blocks}));
        let b = c["blocks"].as_array().unwrap();
        assert_eq!(
            (b[0]["block_ids"].as_str(), b[1]["block_ids"].as_str()),
            (Some("9"), Some("0"))
        );
        assert!(c["blocks_note"]
            .as_str()
            .unwrap()
            .contains("10 blocks of 10 kinds"));
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
