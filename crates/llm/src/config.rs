//! [`LlmConfig`]: where the model is and how to talk to it.
//!
//! Sources, later ones winning field by field: a TOML file
//! ([`LlmSettings`] with the same field names), the environment
//! (`ASCENDOPT_LLM_BASE_URL`, `ASCENDOPT_LLM_MODEL`,
//! `ASCENDOPT_LLM_API_KEY_ENV`, `ASCENDOPT_LLM_TEMPERATURE`,
//! `ASCENDOPT_LLM_MAX_TOKENS`, `ASCENDOPT_LLM_CONTEXT_TOKENS`,
//! `ASCENDOPT_LLM_TIMEOUT_S`,
//! `ASCENDOPT_LLM_CONCURRENCY`, `ASCENDOPT_LLM_RETRIES`,
//! `ASCENDOPT_LLM_REPLAY`, `ASCENDOPT_LLM_ALLOW_NO_KEY`,
//! `ASCENDOPT_LLM_EMBEDDING_MODEL`), then flags. The
//! key itself is never in the configuration: only the name of the variable
//! that holds it (default `OPENAI_API_KEY`).
//!
//! ```toml
//! base_url = "http://127.0.0.1:8000/v1"
//! model = "deepseek-v3.2"
//! api_key_env = "DEEPSEEK_API_KEY"
//! temperature = 0.6
//! max_tokens = 4096
//! context_tokens = 65536     # the model's context window, when it is small
//! timeout_s = 180
//! concurrency = 4
//! retries = 5
//! price_input_per_mtok = 0.28
//! price_output_per_mtok = 0.42
//! replay = "off"            # off | prefer | strict
//! embedding_model = "text-embedding-3-small"   # dense retrieval in Stage I
//! price_embedding_per_mtok = 0.02
//! ```
//!
//! Embeddings go to `{base_url}/embeddings` (the same endpoint and key as
//! the chat requests).

use crate::error::LlmError;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The fewest completion tokens a request is sent with when a context
/// window is known: a prompt that leaves less fails before it is sent.
pub const MIN_COMPLETION_TOKENS: u32 = 256;

/// The default name of the key variable.
pub const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// Whether recorded answers stand in for the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayMode {
    /// Always ask the endpoint.
    #[default]
    Off,
    /// Use a recorded answer to an identical request when there is one,
    /// else ask the endpoint.
    Prefer,
    /// Only recorded answers; a request never seen is an error (no network).
    Strict,
}

impl ReplayMode {
    /// Parses `off`, `prefer`, `strict`.
    pub fn parse(text: &str) -> Option<ReplayMode> {
        match text {
            "off" => Some(ReplayMode::Off),
            "prefer" => Some(ReplayMode::Prefer),
            "strict" => Some(ReplayMode::Strict),
            _ => None,
        }
    }
}

/// Every setting, each optional: one layer (file, environment or flags).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// API root, e.g. `https://api.deepseek.com` or `http://127.0.0.1:8000/v1`;
    /// requests go to `{base_url}/chat/completions`.
    pub base_url: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Name of the environment variable holding the key.
    pub api_key_env: Option<String>,
    /// Allow a missing key (localhost endpoints only).
    pub allow_no_key: Option<bool>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Maximum completion tokens.
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens (prompt + completion), when
    /// known: a request's completion limit is cut to what the prompt
    /// leaves, and a prompt that leaves too little fails before it is sent.
    pub context_tokens: Option<u32>,
    /// Time limit of one HTTP request, seconds (fractions allowed).
    pub timeout_s: Option<f64>,
    /// Requests in flight at once (all threads sharing a client).
    pub concurrency: Option<usize>,
    /// Retries after the first attempt on 429, 5xx, time-outs, transport
    /// errors and malformed answers.
    pub retries: Option<u32>,
    /// First back-off, milliseconds (doubled each retry, jittered).
    pub backoff_ms: Option<u64>,
    /// Largest back-off (and largest honoured Retry-After), milliseconds.
    pub backoff_max_ms: Option<u64>,
    /// Price of a million prompt tokens (any currency; reports say USD).
    pub price_input_per_mtok: Option<f64>,
    /// Price of a million completion tokens.
    pub price_output_per_mtok: Option<f64>,
    /// Replay of recorded answers.
    pub replay: Option<ReplayMode>,
    /// Embedding model for dense retrieval through the same endpoint.
    pub embedding_model: Option<String>,
    /// Price of a million embedding input tokens.
    pub price_embedding_per_mtok: Option<f64>,
}

impl LlmSettings {
    /// Reads a TOML file.
    pub fn from_file(path: &Path) -> Result<LlmSettings, LlmError> {
        let text = std::fs::read_to_string(path).map_err(|e| LlmError::ConfigFile {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        toml::from_str(&text).map_err(|e| LlmError::ConfigFile {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// Reads the `ASCENDOPT_LLM_*` variables through `get` (so that tests
    /// need not touch the process environment).
    pub fn from_env(get: &dyn Fn(&str) -> Option<String>) -> Result<LlmSettings, LlmError> {
        fn num<T: std::str::FromStr>(
            get: &dyn Fn(&str) -> Option<String>,
            var: &str,
        ) -> Result<Option<T>, LlmError> {
            match get(var) {
                None => Ok(None),
                Some(v) if v.trim().is_empty() => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| LlmError::Config(format!("{var}={v:?} is not a valid number"))),
            }
        }
        let text = |var: &str| get(var).filter(|v| !v.trim().is_empty());
        Ok(LlmSettings {
            base_url: text("ASCENDOPT_LLM_BASE_URL"),
            model: text("ASCENDOPT_LLM_MODEL"),
            api_key_env: text("ASCENDOPT_LLM_API_KEY_ENV"),
            temperature: num(get, "ASCENDOPT_LLM_TEMPERATURE")?,
            max_tokens: num(get, "ASCENDOPT_LLM_MAX_TOKENS")?,
            context_tokens: num(get, "ASCENDOPT_LLM_CONTEXT_TOKENS")?,
            timeout_s: num(get, "ASCENDOPT_LLM_TIMEOUT_S")?,
            concurrency: num(get, "ASCENDOPT_LLM_CONCURRENCY")?,
            retries: num(get, "ASCENDOPT_LLM_RETRIES")?,
            replay: match text("ASCENDOPT_LLM_REPLAY") {
                None => None,
                Some(v) => Some(ReplayMode::parse(v.trim()).ok_or_else(|| {
                    LlmError::Config(format!(
                        "ASCENDOPT_LLM_REPLAY={v:?}: expected off, prefer or strict"
                    ))
                })?),
            },
            allow_no_key: text("ASCENDOPT_LLM_ALLOW_NO_KEY")
                .map(|v| matches!(v.trim(), "1" | "true" | "yes")),
            embedding_model: text("ASCENDOPT_LLM_EMBEDDING_MODEL"),
            ..LlmSettings::default()
        })
    }

    /// `self` with every field that `over` sets replaced.
    pub fn overlay(self, over: LlmSettings) -> LlmSettings {
        LlmSettings {
            base_url: over.base_url.or(self.base_url),
            model: over.model.or(self.model),
            api_key_env: over.api_key_env.or(self.api_key_env),
            allow_no_key: over.allow_no_key.or(self.allow_no_key),
            temperature: over.temperature.or(self.temperature),
            max_tokens: over.max_tokens.or(self.max_tokens),
            context_tokens: over.context_tokens.or(self.context_tokens),
            timeout_s: over.timeout_s.or(self.timeout_s),
            concurrency: over.concurrency.or(self.concurrency),
            retries: over.retries.or(self.retries),
            backoff_ms: over.backoff_ms.or(self.backoff_ms),
            backoff_max_ms: over.backoff_max_ms.or(self.backoff_max_ms),
            price_input_per_mtok: over.price_input_per_mtok.or(self.price_input_per_mtok),
            price_output_per_mtok: over.price_output_per_mtok.or(self.price_output_per_mtok),
            replay: over.replay.or(self.replay),
            embedding_model: over.embedding_model.or(self.embedding_model),
            price_embedding_per_mtok: over
                .price_embedding_per_mtok
                .or(self.price_embedding_per_mtok),
        }
    }
}

/// A complete, validated configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmConfig {
    /// API root (no trailing slash).
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// Name of the environment variable holding the key.
    pub api_key_env: String,
    /// A missing key is allowed (only for localhost endpoints).
    pub allow_no_key: bool,
    /// Sampling temperature.
    pub temperature: f64,
    /// Maximum completion tokens.
    pub max_tokens: u32,
    /// The model's context window in tokens, if known.
    #[serde(default)]
    pub context_tokens: Option<u32>,
    /// Time limit of one HTTP request.
    pub timeout: Duration,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Retries after the first attempt.
    pub retries: u32,
    /// First back-off.
    pub backoff: Duration,
    /// Largest back-off and largest honoured Retry-After.
    pub backoff_max: Duration,
    /// Price of a million prompt tokens, if known.
    pub price_input_per_mtok: Option<f64>,
    /// Price of a million completion tokens, if known.
    pub price_output_per_mtok: Option<f64>,
    /// Replay of recorded answers.
    pub replay: ReplayMode,
    /// Embedding model for dense retrieval, if any.
    pub embedding_model: Option<String>,
    /// Price of a million embedding input tokens, if known.
    pub price_embedding_per_mtok: Option<f64>,
}

impl LlmConfig {
    /// Validates merged settings and fills defaults.
    pub fn from_settings(s: LlmSettings) -> Result<LlmConfig, LlmError> {
        let base_url = s
            .base_url
            .map(|u| u.trim().trim_end_matches('/').to_string())
            .filter(|u| !u.is_empty())
            .ok_or_else(|| {
                LlmError::Config(
                    "no base URL: give --llm-base-url, ASCENDOPT_LLM_BASE_URL or base_url in the config file"
                        .into(),
                )
            })?;
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base URL {base_url:?} must start with http:// or https://"
            )));
        }
        let model = s.model.filter(|m| !m.trim().is_empty()).ok_or_else(|| {
            LlmError::Config(
                "no model: give --llm-model, ASCENDOPT_LLM_MODEL or model in the config file"
                    .into(),
            )
        })?;
        let temperature = s.temperature.unwrap_or(0.6);
        if !(0.0..=2.0).contains(&temperature) {
            return Err(LlmError::Config(format!(
                "temperature {temperature} is outside 0..=2"
            )));
        }
        let timeout_s = s.timeout_s.unwrap_or(180.0);
        if !(timeout_s.is_finite() && timeout_s > 0.0) {
            return Err(LlmError::Config(format!(
                "timeout_s {timeout_s} must be a positive number"
            )));
        }
        let concurrency = s.concurrency.unwrap_or(4);
        if concurrency == 0 {
            return Err(LlmError::Config("concurrency must be at least 1".into()));
        }
        let max_tokens = s.max_tokens.unwrap_or(8192);
        if max_tokens == 0 {
            return Err(LlmError::Config("max_tokens must be at least 1".into()));
        }
        if let Some(c) = s.context_tokens {
            if c < MIN_COMPLETION_TOKENS * 2 {
                return Err(LlmError::Config(format!(
                    "context_tokens {c} is too small (at least {})",
                    MIN_COMPLETION_TOKENS * 2
                )));
            }
        }
        for (name, price) in [
            ("price_input_per_mtok", s.price_input_per_mtok),
            ("price_output_per_mtok", s.price_output_per_mtok),
            ("price_embedding_per_mtok", s.price_embedding_per_mtok),
        ] {
            if let Some(p) = price {
                if !(p.is_finite() && p >= 0.0) {
                    return Err(LlmError::Config(format!("{name} {p} must be >= 0")));
                }
            }
        }
        let backoff_ms = s.backoff_ms.unwrap_or(1000);
        let backoff_max_ms = s.backoff_max_ms.unwrap_or(60_000).max(backoff_ms);
        Ok(LlmConfig {
            base_url,
            model,
            api_key_env: s
                .api_key_env
                .filter(|v| !v.trim().is_empty())
                .unwrap_or_else(|| DEFAULT_KEY_ENV.to_string()),
            allow_no_key: s.allow_no_key.unwrap_or(false),
            temperature,
            max_tokens,
            context_tokens: s.context_tokens,
            timeout: Duration::from_secs_f64(timeout_s),
            concurrency,
            retries: s.retries.unwrap_or(4),
            backoff: Duration::from_millis(backoff_ms),
            backoff_max: Duration::from_millis(backoff_max_ms),
            price_input_per_mtok: s.price_input_per_mtok,
            price_output_per_mtok: s.price_output_per_mtok,
            replay: s.replay.unwrap_or_default(),
            embedding_model: s
                .embedding_model
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty()),
            price_embedding_per_mtok: s.price_embedding_per_mtok,
        })
    }

    /// Merges file < environment < flags and validates: the one way the
    /// CLI builds a configuration.
    pub fn resolve(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
        flags: LlmSettings,
    ) -> Result<LlmConfig, LlmError> {
        let from_file = match file {
            Some(p) => LlmSettings::from_file(p)?,
            None => LlmSettings::default(),
        };
        let merged = from_file
            .overlay(LlmSettings::from_env(env)?)
            .overlay(flags);
        LlmConfig::from_settings(merged)
    }

    /// `{base_url}/chat/completions`.
    pub fn chat_url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// `{base_url}/embeddings` (dense retrieval).
    pub fn embeddings_url(&self) -> String {
        format!("{}/embeddings", self.base_url)
    }

    /// `{base_url}/models` (the preflight probe).
    pub fn models_url(&self) -> String {
        format!("{}/models", self.base_url)
    }

    /// Whether the endpoint's host is this machine (localhost, 127.0.0.0/8,
    /// `[::1]`).
    pub fn is_local(&self) -> bool {
        let rest = self
            .base_url
            .split_once("://")
            .map(|(_, r)| r)
            .unwrap_or(&self.base_url);
        let authority = rest.split('/').next().unwrap_or("");
        let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = if let Some(v6) = authority.strip_prefix('[') {
            v6.split(']').next().unwrap_or("")
        } else {
            authority.split(':').next().unwrap_or("")
        };
        host.eq_ignore_ascii_case("localhost") || host.starts_with("127.") || host == "::1"
    }

    /// The cost of a call, when both prices are configured.
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> Option<f64> {
        match (self.price_input_per_mtok, self.price_output_per_mtok) {
            (Some(i), Some(o)) => {
                Some(prompt_tokens as f64 * i / 1e6 + completion_tokens as f64 * o / 1e6)
            }
            _ => None,
        }
    }

    /// The cost of an embeddings call, when its price is configured.
    pub fn embedding_cost(&self, tokens: u64) -> Option<f64> {
        self.price_embedding_per_mtok
            .map(|p| tokens as f64 * p / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| map.get(k).cloned()
    }

    #[test]
    fn flags_beat_env_beat_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("llm.toml");
        std::fs::write(
            &file,
            "base_url = \"http://file/v1\"\nmodel = \"file-model\"\ntemperature = 0.1\nmax_tokens = 77\nreplay = \"prefer\"\n",
        )
        .unwrap();
        let e = env(&[
            ("ASCENDOPT_LLM_BASE_URL", "http://env/v1/"),
            ("ASCENDOPT_LLM_MODEL", "env-model"),
        ]);
        let flags = LlmSettings {
            model: Some("flag-model".into()),
            ..LlmSettings::default()
        };
        let c = LlmConfig::resolve(Some(&file), &e, flags.clone()).unwrap();
        assert_eq!(c.embedding_model, None);
        let e2 = env(&[
            ("ASCENDOPT_LLM_BASE_URL", "http://env/v1/"),
            ("ASCENDOPT_LLM_EMBEDDING_MODEL", "env-embed"),
        ]);
        let c2 = LlmConfig::resolve(Some(&file), &e2, flags.clone()).unwrap();
        assert_eq!(c2.embedding_model.as_deref(), Some("env-embed"));
        assert_eq!(c2.embeddings_url(), "http://env/v1/embeddings");
        assert_eq!(c.base_url, "http://env/v1");
        assert_eq!(c.model, "flag-model");
        assert_eq!(c.temperature, 0.1);
        assert_eq!(c.max_tokens, 77);
        assert_eq!(c.replay, ReplayMode::Prefer);
        assert_eq!(c.api_key_env, DEFAULT_KEY_ENV);
        assert_eq!(c.chat_url(), "http://env/v1/chat/completions");
    }

    #[test]
    fn missing_fields_and_bad_values_are_clear_errors() {
        let none = env(&[]);
        let err = LlmConfig::resolve(None, &none, LlmSettings::default()).unwrap_err();
        assert!(err.to_string().contains("--llm-base-url"), "{err}");
        let e = env(&[("ASCENDOPT_LLM_BASE_URL", "http://x")]);
        let err = LlmConfig::resolve(None, &e, LlmSettings::default()).unwrap_err();
        assert!(err.to_string().contains("--llm-model"), "{err}");
        let e = env(&[
            ("ASCENDOPT_LLM_BASE_URL", "x"),
            ("ASCENDOPT_LLM_MODEL", "m"),
        ]);
        assert!(LlmConfig::resolve(None, &e, LlmSettings::default()).is_err());
        let e = env(&[("ASCENDOPT_LLM_REPLAY", "sometimes")]);
        let err = LlmConfig::resolve(None, &e, LlmSettings::default()).unwrap_err();
        assert!(err.to_string().contains("ASCENDOPT_LLM_REPLAY"), "{err}");
        let e = env(&[("ASCENDOPT_LLM_RETRIES", "many")]);
        let err = LlmConfig::resolve(None, &e, LlmSettings::default()).unwrap_err();
        assert!(err.to_string().contains("ASCENDOPT_LLM_RETRIES"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, "modle = \"x\"\n").unwrap();
        let err = LlmConfig::resolve(Some(&file), &none, LlmSettings::default()).unwrap_err();
        assert!(err.to_string().contains("bad.toml"), "{err}");
    }

    #[test]
    fn locality_and_cost() {
        let mut c = LlmConfig::from_settings(LlmSettings {
            base_url: Some("http://127.0.0.1:8000/v1".into()),
            model: Some("m".into()),
            ..LlmSettings::default()
        })
        .unwrap();
        assert!(c.is_local());
        c.base_url = "http://localhost/v1".into();
        assert!(c.is_local());
        c.base_url = "http://[::1]:9/v1".into();
        assert!(c.is_local());
        c.base_url = "https://api.deepseek.com".into();
        assert!(!c.is_local());
        c.base_url = "http://localhost.evil.com/v1".into();
        assert!(!c.is_local());
        assert_eq!(c.cost(1000, 1000), None);
        c.price_input_per_mtok = Some(1.0);
        c.price_output_per_mtok = Some(2.0);
        let cost = c.cost(1_000_000, 500_000).unwrap();
        assert!((cost - 2.0).abs() < 1e-12);
    }
}
