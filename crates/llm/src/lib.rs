//! The LLM side of ascendopt: a blocking client for any OpenAI-compatible
//! chat-completions API (hosted, vLLM, SGLang, Ollama), the prompt
//! templates of the agent's roles, and the search/replace edit blocks that
//! model responses are applied through.
//!
//! - [`config`]: [`config::LlmConfig`] from a TOML file, the environment and
//!   flags (flags > environment > file).
//! - [`client`]: [`client::LlmClient`]: retries with exponential back-off
//!   and jitter on 429, 5xx and time-outs (honouring `Retry-After`), a
//!   concurrency limit, [`client::LlmClient::preflight`] (key and endpoint
//!   checked before any budget is spent), and replay of recorded answers.
//! - [`audit`]: the [`audit::CallLog`] sink that receives every request and
//!   response with token usage, cost, latency and role.
//! - [`edits`]: parsing and applying SEARCH/REPLACE blocks (exact unique
//!   match, else a whitespace-normalised window; ambiguous or unmatched
//!   blocks are rejected with a reason).
//! - [`prompts`]: the role templates (`prompts/*.md`, compiled in) and
//!   their `{{var}}` rendering.
//! - [`apis`]: the AscendC APIs the simulator emulates, for the prompts.
//!
//! This crate sits beside the bank: it knows nothing of the harness or the
//! agent; the agent adapts it to its `Proposer`, `Diagnoser` and
//! `Distiller` interfaces.
#![deny(missing_docs)]

pub mod apis;
pub mod audit;
pub mod client;
pub mod config;
pub mod edits;
pub mod error;
pub mod json;
pub mod prompts;

pub use audit::{CallLog, CallRecord, MemoryCallLog};
pub use client::{ChatReply, EmbeddingReply, LlmClient, Message, Usage};
pub use config::{LlmConfig, LlmSettings, ReplayMode};
pub use error::LlmError;
