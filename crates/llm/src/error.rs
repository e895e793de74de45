//! Errors of the LLM client. None of them is a candidate's fault: the agent
//! turns them into `ProposeError`s that stop a loop without charging the
//! budget.

use std::path::PathBuf;

/// What went wrong talking to the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The configuration is incomplete or invalid.
    #[error("LLM configuration: {0}")]
    Config(String),
    /// The configuration file could not be read or parsed.
    #[error("LLM configuration file {}: {message}", path.display())]
    ConfigFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The API key variable is not set.
    #[error("no API key: environment variable {var} is not set (set it, name another variable with --llm-api-key-env, or, for an endpoint on this machine, allow no key with --llm-allow-no-key or allow_no_key = true)")]
    MissingKey {
        /// The variable.
        var: String,
    },
    /// The endpoint could not be reached.
    #[error("LLM endpoint {url} is unreachable: {reason}")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// Why.
        reason: String,
    },
    /// The endpoint refused the key.
    #[error("LLM endpoint {url} refused the API key (HTTP {status}): {body}")]
    Unauthorized {
        /// The URL.
        url: String,
        /// 401 or 403.
        status: u16,
        /// Start of the body.
        body: String,
    },
    /// A non-retryable HTTP error (4xx other than 429).
    #[error("LLM endpoint {url} answered HTTP {status}: {body}")]
    Http {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
        /// Start of the body.
        body: String,
    },
    /// Every attempt failed with a retryable error.
    #[error("LLM request failed after {attempts} attempts; last: {last}")]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// The embeddings endpoint failed its preflight check.
    #[error("embeddings endpoint {url} (model {model}) is not usable: {reason}")]
    Embeddings {
        /// The URL.
        url: String,
        /// The embedding model.
        model: String,
        /// Why.
        reason: String,
    },
    /// The prompt leaves too little of the model's context window for an
    /// answer.
    #[error("the prompt ({prompt_tokens} tokens{}) leaves too little of the model's {context}-token context for an answer (at least {} tokens); use a model with a larger context or give its size with --llm-context-tokens", if *estimated { ", estimated" } else { "" }, crate::config::MIN_COMPLETION_TOKENS)]
    PromptTooLong {
        /// Tokens of the prompt (the endpoint's count, or an estimate).
        prompt_tokens: u32,
        /// The context window.
        context: u32,
        /// Whether `prompt_tokens` is this client's estimate.
        estimated: bool,
    },
    /// Replay mode is strict and no recorded answer matches the request.
    #[error("replay: no recorded answer for request {hash}")]
    NotRecorded {
        /// The request hash.
        hash: String,
    },
    /// A template variable was not given.
    #[error("prompt template {template}: variable {{{{{var}}}}} has no value")]
    Template {
        /// The template.
        template: String,
        /// The variable.
        var: String,
    },
    /// The audit log failed (the call is not made or not trusted).
    #[error("LLM call log: {0}")]
    Log(#[from] crate::audit::CallLogError),
}
