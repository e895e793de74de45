//! The LLM flags shared by every command that proposes (rewind, optimize,
//! run, bench), and [`agents`]: the one constructor of the proposer,
//! diagnoser and distiller every command uses.
//!
//! Configuration precedence: flags > environment (`ASCENDOPT_LLM_*`) >
//! the `--llm-config` TOML file (see `ascendopt_llm::config`).

use ascendopt_agent::builtin::BuiltinProposer;
use ascendopt_agent::diagnose::{Diagnoser, RuleDiagnoser};
use ascendopt_agent::distill::{BuiltinDistiller, Distiller};
use ascendopt_agent::llm::{
    self, LlmAgents, LlmClient, LlmConfig, LlmDiagnoser, LlmDistiller, LlmProposer, LlmSettings,
    ReplayMode, StoreCallLog,
};
use ascendopt_agent::proposer::Proposer;
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
            timeout_s: self.llm_timeout_s.map(|s| s as f64),
            concurrency: self.llm_concurrency,
            retries: self.llm_retries,
            replay: self.llm_replay.as_deref().and_then(ReplayMode::parse),
            allow_no_key: self.llm_allow_no_key.then_some(true),
            ..LlmSettings::default()
        }
    }

    /// The LLM configuration: flags > environment > `--llm-config` file.
    pub fn config(&self) -> anyhow::Result<LlmConfig> {
        Ok(LlmConfig::resolve(
            self.llm_config.as_deref(),
            &|var| std::env::var(var).ok(),
            self.settings(),
        )?)
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
    /// The LLM client and its call log, with `--proposer llm`.
    pub llm: Option<(Arc<LlmClient>, Arc<StoreCallLog>)>,
}

impl Agents {
    /// Records the LLM's calls under `run` (call once the run exists,
    /// before the first proposal).
    pub fn attach_run(&self, run: RunId) {
        if let Some((_, log)) = &self.llm {
            log.attach(run);
        }
    }

    /// `builtin` or `llm:<model>`, for run configurations.
    pub fn describe(&self) -> String {
        match &self.llm {
            Some((c, _)) => format!("llm:{}", c.config().model),
            None => "builtin".to_string(),
        }
    }

    /// The benchmark's factory for the same agents.
    pub fn llm_factory(&self) -> Option<LlmAgents> {
        self.llm.as_ref().map(|(c, _)| LlmAgents::new(c.clone()))
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
        ProposerKind::Builtin => Ok(Agents {
            proposer: Box::new(BuiltinProposer::new(seed)),
            diagnoser: Box::new(RuleDiagnoser::new()),
            distiller: Box::new(BuiltinDistiller::new()),
            llm: None,
        }),
        ProposerKind::Llm => {
            let config = args.config()?;
            let (client, log) = llm::connect_detached(config, store_path)
                .map_err(|e| anyhow::anyhow!("--proposer llm: {e}"))?;
            Ok(Agents {
                proposer: Box::new(LlmProposer::new(client.clone())),
                diagnoser: Box::new(LlmDiagnoser::new(client.clone())),
                distiller: Box::new(LlmDistiller::new(client.clone())),
                llm: Some((client, log)),
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
    fn the_builtin_agents_need_no_endpoint() {
        let dir = tempfile::tempdir().unwrap();
        let a = agents(&LlmArgs::default(), 1, &dir.path().join("runs.sqlite")).unwrap();
        assert_eq!(a.proposer.name(), "builtin");
        assert_eq!(a.describe(), "builtin");
        assert!(a.llm_factory().is_none());
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
