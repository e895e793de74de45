//! The LLM flags shared by every command that proposes (rewind, optimize,
//! run, bench). Turning them into a client configuration is the LLM
//! crate's business (`ascendopt-llm`).

/// Which proposer drives the loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ProposerKind {
    /// The built-in motif engine (no network).
    #[default]
    Builtin,
    /// An LLM over an OpenAI-compatible chat-completions API.
    Llm,
}

/// LLM endpoint flags (also read from the environment and a config file).
#[derive(Debug, Clone, clap::Args, Default)]
pub struct LlmArgs {
    /// Who proposes candidates.
    #[arg(long, value_enum, default_value_t = ProposerKind::Builtin)]
    pub proposer: ProposerKind,
    /// Base URL of the OpenAI-compatible API (e.g. http://localhost:8000/v1).
    #[arg(long)]
    pub llm_base_url: Option<String>,
    /// Model name.
    #[arg(long)]
    pub llm_model: Option<String>,
    /// Name of the environment variable that holds the API key.
    #[arg(long)]
    pub llm_api_key_env: Option<String>,
    /// A TOML file with the LLM settings (flags override it).
    #[arg(long)]
    pub llm_config: Option<std::path::PathBuf>,
    /// Sampling temperature.
    #[arg(long)]
    pub llm_temperature: Option<f64>,
    /// Maximum tokens per response.
    #[arg(long)]
    pub llm_max_tokens: Option<u32>,
    /// Time-out per request, seconds.
    #[arg(long)]
    pub llm_timeout_s: Option<u64>,
    /// Concurrent requests.
    #[arg(long)]
    pub llm_concurrency: Option<usize>,
    /// Retries on 429, 5xx and time-outs.
    #[arg(long)]
    pub llm_retries: Option<u32>,
}
