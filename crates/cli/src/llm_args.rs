//! The LLM flags shared by every command that proposes (rewind, optimize,
//! run, bench), and [`agents`]: the one constructor of the proposer,
//! diagnoser and distiller every command uses.
//!
//! Configuration precedence: flags > environment (`ASCENDOPT_LLM_*`) >
//! the `--llm-config` TOML file (see `ascendopt_llm::config`).
//!
//! Dense retrieval: when an embedding model is configured
//! (`--llm-embedding-model`, `ASCENDOPT_LLM_EMBEDDING_MODEL` or
//! `embedding_model` in the file), Stage I ranks the bank by fusion of the
//! lexical and embedding rankings, with vectors from
//! `<base>/embeddings`. It works with either proposer: with `--proposer
//! builtin` only the base URL (and key) are needed, and the chat model
//! defaults to the embedding model (no chat request is made). The endpoint
//! and the model are checked here, before any run is created.

use ascendopt_agent::builtin::BuiltinProposer;
use ascendopt_agent::diagnose::{Diagnoser, RuleDiagnoser};
use ascendopt_agent::distill::{BuiltinDistiller, Distiller};
use ascendopt_agent::factory::{AgentFactory, LlmAgents};
use ascendopt_agent::llm::{
    self, DenseRetrieval, LlmClient, LlmConfig, LlmDiagnoser, LlmDistiller, LlmProposer,
    LlmSettings, ReplayMode, StoreCallLog,
};
use ascendopt_agent::proposer::Proposer;
use ascendopt_bank::retrieval::{Lexical, Retrieval};
use ascendopt_harness::store::RunId;
use std::path::Path;
use std::sync::Arc;

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
    /// Base URL of the OpenAI-compatible API (e.g. http://localhost:8000/v1);
    /// requests go to <base>/chat/completions. Env: ASCENDOPT_LLM_BASE_URL.
    #[arg(long)]
    pub llm_base_url: Option<String>,
    /// Model name. Env: ASCENDOPT_LLM_MODEL.
    #[arg(long)]
    pub llm_model: Option<String>,
    /// Name of the environment variable that holds the API key (default
    /// OPENAI_API_KEY). Env: ASCENDOPT_LLM_API_KEY_ENV.
    #[arg(long)]
    pub llm_api_key_env: Option<String>,
    /// A TOML file with the LLM settings (flags and environment override it).
    #[arg(long)]
    pub llm_config: Option<std::path::PathBuf>,
    /// Sampling temperature.
    #[arg(long)]
    pub llm_temperature: Option<f64>,
    /// Maximum tokens per response.
    #[arg(long)]
    pub llm_max_tokens: Option<u32>,
    /// The model's context window in tokens (prompt + completion), for
    /// models with a small one: each request's completion limit is cut to
    /// what its prompt leaves. Env: ASCENDOPT_LLM_CONTEXT_TOKENS.
    #[arg(long)]
    pub llm_context_tokens: Option<u32>,
    /// Time-out per request, seconds.
    #[arg(long)]
    pub llm_timeout_s: Option<u64>,
    /// Concurrent requests.
    #[arg(long)]
    pub llm_concurrency: Option<usize>,
    /// Retries on 429, 5xx and time-outs.
    #[arg(long)]
    pub llm_retries: Option<u32>,
    /// Replay recorded answers from the run store: off, prefer (recorded
    /// answer when the same request was made before) or strict (recorded
    /// answers only, no network).
    #[arg(long, value_parser = ["off", "prefer", "strict"])]
    pub llm_replay: Option<String>,
    /// Allow a missing API key (only for endpoints on this machine:
    /// localhost, 127.0.0.0/8, [::1]).
    #[arg(long)]
    pub llm_allow_no_key: bool,
    /// Embedding model for dense retrieval in Stage I (vectors from
    /// <base>/embeddings, fused with the lexical ranking); works with
    /// either proposer. Env: ASCENDOPT_LLM_EMBEDDING_MODEL.
    #[arg(long)]
    pub llm_embedding_model: Option<String>,
}

impl LlmArgs {
    /// The flags as a settings layer.
    pub fn settings(&self) -> LlmSettings {
        LlmSettings {
            base_url: self.llm_base_url.clone(),
            model: self.llm_model.clone(),
            api_key_env: self.llm_api_key_env.clone(),
            temperature: self.llm_temperature,
            max_tokens: self.llm_max_tokens,
            context_tokens: self.llm_context_tokens,
            timeout_s: self.llm_timeout_s.map(|s| s as f64),
            concurrency: self.llm_concurrency,
            retries: self.llm_retries,
            replay: self.llm_replay.as_deref().and_then(ReplayMode::parse),
            allow_no_key: self.llm_allow_no_key.then_some(true),
            embedding_model: self.llm_embedding_model.clone(),
            ..LlmSettings::default()
        }
    }

    /// The LLM configuration: flags > environment > `--llm-config` file.
    pub fn config(&self) -> anyhow::Result<LlmConfig> {
        self.config_with(&|var| std::env::var(var).ok())
    }

    fn config_with(&self, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<LlmConfig> {
        Ok(LlmConfig::resolve(
            self.llm_config.as_deref(),
            env,
            self.settings(),
        )?)
    }

    /// With `--proposer builtin`: the configuration of the embeddings
    /// client when an embedding model is configured (flags, environment or
    /// file), the chat model defaulting to the embedding model; None when
    /// no embedding model is configured.
    pub fn embeddings_config(&self) -> anyhow::Result<Option<LlmConfig>> {
        self.embeddings_config_with(&|var| std::env::var(var).ok())
    }

    fn embeddings_config_with(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Option<LlmConfig>> {
        let file = match &self.llm_config {
            Some(p) => LlmSettings::from_file(p)?,
            None => LlmSettings::default(),
        };
        let merged = file
            .overlay(LlmSettings::from_env(env)?)
            .overlay(self.settings());
        let Some(model) = merged.embedding_model.clone() else {
            return Ok(None);
        };
        let merged = LlmSettings {
            model: merged.model.clone().or(Some(model)),
            ..merged
        };
        Ok(Some(LlmConfig::from_settings(merged)?))
    }
}

/// What a command proposes, diagnoses and distils with.
pub struct Agents {
    /// The proposer.
    pub proposer: Box<dyn Proposer>,
    /// The diagnoser (Stage I).
    pub diagnoser: Box<dyn Diagnoser>,
    /// The distiller (Rewind).
    pub distiller: Box<dyn Distiller>,
    /// The LLM client and its call log, with `--proposer llm` (or, with
    /// the built-in proposer, the embeddings client of dense retrieval).
    pub llm: Option<(Arc<LlmClient>, Arc<StoreCallLog>)>,
    /// Whether the proposer, diagnoser and distiller are the LLM's.
    pub chat: bool,
    /// Dense retrieval for Stage I, when an embedding model is configured.
    pub dense: Option<DenseRetrieval>,
}

impl Agents {
    /// Records the LLM's calls under `run` (call once the run exists,
    /// before the first proposal).
    pub fn attach_run(&self, run: RunId) {
        if let Some((_, log)) = &self.llm {
            log.attach(run);
        }
    }

    /// How Stage I ranks the bank: the dense retrieval when there is one,
    /// else the bank's lexical ranking.
    pub fn retrieval(&self) -> Arc<dyn Retrieval> {
        match &self.dense {
            Some(d) => Arc::new(d.clone()),
            None => Arc::new(Lexical),
        }
    }

    /// `builtin` or `llm:<model>`, with `+embed:<model>` when dense
    /// retrieval is on, for run configurations.
    pub fn describe(&self) -> String {
        match self.llm_factory() {
            Some(f) => AgentFactory::name(&f),
            None => "builtin".to_string(),
        }
    }

    /// The benchmark's factory for the same agents (None: the built-in
    /// agents without an endpoint).
    pub fn llm_factory(&self) -> Option<LlmAgents> {
        self.llm.as_ref().map(|(c, _)| {
            if self.chat {
                LlmAgents::new(c.clone())
            } else {
                LlmAgents::embeddings_only(c.clone())
            }
        })
    }
}

/// The agents the flags ask for: the built-in engine, rule diagnoser and
/// built-in distiller; or, with `--proposer llm`, the LLM roles over one
/// client whose calls go to the run store at `store_path`. For the LLM the
/// configuration, the key and the endpoint are checked here, before any
/// run is created or any budget spent; attach the run with
/// [`Agents::attach_run`].
pub fn agents(args: &LlmArgs, seed: u64, store_path: &Path) -> anyhow::Result<Agents> {
    match args.proposer {
        ProposerKind::Builtin => {
            let llm = match args.embeddings_config()? {
                Some(config) => Some(
                    llm::connect_detached(config, store_path)
                        .map_err(|e| anyhow::anyhow!("dense retrieval: {e}"))?,
                ),
                None => None,
            };
            Ok(Agents {
                proposer: Box::new(BuiltinProposer::new(seed)),
                diagnoser: Box::new(RuleDiagnoser::new()),
                distiller: Box::new(BuiltinDistiller::new()),
                dense: llm
                    .as_ref()
                    .and_then(|(c, _)| DenseRetrieval::from_client(c.clone())),
                llm,
                chat: false,
            })
        }
        ProposerKind::Llm => {
            let config = args.config()?;
            let (client, log) = llm::connect_detached(config, store_path)
                .map_err(|e| anyhow::anyhow!("--proposer llm: {e}"))?;
            Ok(Agents {
                proposer: Box::new(LlmProposer::new(client.clone())),
                diagnoser: Box::new(LlmDiagnoser::new(client.clone())),
                distiller: Box::new(LlmDistiller::new(client.clone())),
                dense: DenseRetrieval::from_client(client.clone()),
                llm: Some((client, log)),
                chat: true,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_the_top_settings_layer() {
        let args = LlmArgs {
            proposer: ProposerKind::Llm,
            llm_base_url: Some("http://127.0.0.1:9/v1".into()),
            llm_model: Some("m".into()),
            llm_timeout_s: Some(7),
            ..LlmArgs::default()
        };
        let c = args.config().unwrap();
        assert_eq!(c.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(c.timeout, std::time::Duration::from_secs(7));
    }

    #[test]
    fn an_embedding_model_alone_configures_dense_retrieval_for_the_builtin_proposer() {
        let none = |_: &str| None;
        assert!(LlmArgs::default()
            .embeddings_config_with(&none)
            .unwrap()
            .is_none());
        let args = LlmArgs {
            llm_base_url: Some("http://127.0.0.1:9/v1".into()),
            llm_embedding_model: Some("embed".into()),
            ..LlmArgs::default()
        };
        let c = args.embeddings_config_with(&none).unwrap().unwrap();
        assert_eq!(c.embedding_model.as_deref(), Some("embed"));
        assert_eq!(c.model, "embed");
        assert_eq!(c.embeddings_url(), "http://127.0.0.1:9/v1/embeddings");
        // From the environment too, with the chat model kept.
        let env = |v: &str| match v {
            "ASCENDOPT_LLM_BASE_URL" => Some("http://127.0.0.1:9/v1".to_string()),
            "ASCENDOPT_LLM_EMBEDDING_MODEL" => Some("env-embed".to_string()),
            "ASCENDOPT_LLM_MODEL" => Some("chat".to_string()),
            _ => None,
        };
        let c = LlmArgs::default()
            .embeddings_config_with(&env)
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.model.as_str(), c.embedding_model.as_deref()),
            ("chat", Some("env-embed"))
        );
        assert_eq!(
            LlmArgs::default()
                .config_with(&env)
                .unwrap()
                .embedding_model,
            c.embedding_model
        );
    }

    #[test]
    fn an_unusable_embeddings_endpoint_fails_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("runs.sqlite");
        // Nothing listens on a released loopback port.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let args = LlmArgs {
            llm_base_url: Some(format!("http://127.0.0.1:{port}/v1")),
            llm_embedding_model: Some("embed".into()),
            llm_allow_no_key: true,
            ..LlmArgs::default()
        };
        let err = agents(&args, 1, &store).err().unwrap().to_string();
        assert!(err.contains("dense retrieval"), "{err}");
        assert!(
            !store.exists() || {
                let s = ascendopt_harness::store::RunStore::open(&store).unwrap();
                s.runs().unwrap().is_empty()
            }
        );
    }

    #[test]
    fn the_builtin_agents_need_no_endpoint() {
        let dir = tempfile::tempdir().unwrap();
        let a = agents(&LlmArgs::default(), 1, &dir.path().join("runs.sqlite")).unwrap();
        assert_eq!(a.proposer.name(), "builtin");
        assert_eq!(a.describe(), "builtin");
        assert!(a.llm_factory().is_none());
        assert!(a.dense.is_none());
    }

    #[test]
    fn an_llm_without_key_fails_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("runs.sqlite");
        let args = LlmArgs {
            proposer: ProposerKind::Llm,
            llm_base_url: Some("https://api.example.invalid/v1".into()),
            llm_model: Some("m".into()),
            llm_api_key_env: Some("ASCENDOPT_CLI_TEST_SURELY_UNSET_KEY".into()),
            ..LlmArgs::default()
        };
        let err = agents(&args, 1, &store).err().unwrap().to_string();
        assert!(err.contains("ASCENDOPT_CLI_TEST_SURELY_UNSET_KEY"), "{err}");
    }
}
