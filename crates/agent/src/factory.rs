//! Where a loop's proposers, diagnosers and distillers come from: the
//! [`AgentFactory`] interface, the built-in agents ([`BuiltinAgents`]), and
//! the LLM ones (`crate::llm::LlmAgents`). Commands and the benchmark take a
//! factory and ask it for fresh agents per operator and per run.

use crate::builtin::BuiltinProposer;
use crate::diagnose::Diagnoser;
use crate::diagnose::RuleDiagnoser;
use crate::distill::{BuiltinDistiller, Distiller};
use crate::llm::{
    DenseRetrieval, LlmClient, LlmDiagnoser, LlmDistiller, LlmProposer, StoreCallLog,
};
use crate::proposer::Proposer;
use crate::AgentError;
use ascendopt_bank::retrieval::{Lexical, Retrieval};
use ascendopt_harness::store::RunId;
use std::path::Path;
use std::sync::Arc;

/// Where proposers, diagnosers and distillers come from (the built-in
/// engine, or an LLM configured by the caller).
pub trait AgentFactory: Sync {
    /// Stable name recorded in run configs (`builtin`, `llm:<model>`).
    fn name(&self) -> String;
    /// A fresh proposer.
    fn proposer(&self, seed: u64) -> Result<Box<dyn Proposer>, AgentError>;
    /// A fresh diagnoser.
    fn diagnoser(&self) -> Result<Box<dyn Diagnoser>, AgentError>;
    /// A fresh distiller (Rewind).
    fn distiller(&self) -> Result<Box<dyn Distiller>, AgentError>;
    /// Whether an LLM is configured (the `judge` baseline needs one).
    fn has_llm(&self) -> bool;
    /// The LLM client, when one is configured (the `judge` baseline talks
    /// to it directly).
    fn llm_client(&self) -> Option<std::sync::Arc<ascendopt_llm::client::LlmClient>> {
        None
    }
    /// Dense retrieval for Stage I, when an embeddings endpoint is
    /// configured.
    fn dense(&self) -> Option<DenseRetrieval> {
        None
    }
    /// How Stage I ranks the bank: [`AgentFactory::dense`] when there is
    /// one, else the bank's lexical ranking.
    fn retrieval(&self) -> Arc<dyn Retrieval> {
        match self.dense() {
            Some(d) => Arc::new(d),
            None => Arc::new(Lexical),
        }
    }
    /// The same agents with their LLM calls recorded under `run` in the
    /// store at `store_path` (None: nothing to record, use `self`). The
    /// benchmark asks for this for every run it makes, so that each
    /// method's calls land in that method's run.
    fn for_run(
        &self,
        _store_path: &Path,
        _run: RunId,
    ) -> Result<Option<Box<dyn AgentFactory>>, AgentError> {
        Ok(None)
    }
}

/// The built-in motif engine, rule diagnoser and built-in distiller.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinAgents;

impl AgentFactory for BuiltinAgents {
    fn name(&self) -> String {
        "builtin".into()
    }
    fn proposer(&self, seed: u64) -> Result<Box<dyn Proposer>, AgentError> {
        Ok(Box::new(crate::builtin::BuiltinProposer::new(seed)))
    }
    fn diagnoser(&self) -> Result<Box<dyn Diagnoser>, AgentError> {
        Ok(Box::new(crate::diagnose::RuleDiagnoser::new()))
    }
    fn distiller(&self) -> Result<Box<dyn Distiller>, AgentError> {
        Ok(Box::new(BuiltinDistiller::new()))
    }
    fn has_llm(&self) -> bool {
        false
    }
}

/// The LLM agents for commands and the benchmark (its [`AgentFactory`]):
/// proposer, diagnoser and distiller over one shared client, and dense
/// retrieval through it when the configuration names an embedding model.
/// Built with [`LlmAgents::embeddings_only`], the proposer, diagnoser and
/// distiller are the built-in ones and the client serves only the
/// embeddings of dense retrieval.
#[derive(Clone)]
pub struct LlmAgents {
    client: Arc<LlmClient>,
    chat: bool,
}

impl LlmAgents {
    /// Agents over `client`.
    pub fn new(client: Arc<LlmClient>) -> LlmAgents {
        LlmAgents { client, chat: true }
    }

    /// The built-in agents, with dense retrieval through `client` (whose
    /// configuration should name an embedding model; no chat request is
    /// made).
    pub fn embeddings_only(client: Arc<LlmClient>) -> LlmAgents {
        LlmAgents {
            client,
            chat: false,
        }
    }

    /// The shared client (the coder-plus-judge baseline talks to it).
    pub fn client(&self) -> &Arc<LlmClient> {
        &self.client
    }
}

impl AgentFactory for LlmAgents {
    fn name(&self) -> String {
        let base = if self.chat {
            format!("llm:{}", self.client.config().model)
        } else {
            "builtin".to_string()
        };
        match &self.client.config().embedding_model {
            Some(m) => format!("{base}+embed:{m}"),
            None => base,
        }
    }
    fn proposer(&self, seed: u64) -> Result<Box<dyn Proposer>, AgentError> {
        Ok(if self.chat {
            Box::new(LlmProposer::new(self.client.clone()))
        } else {
            Box::new(BuiltinProposer::new(seed))
        })
    }
    fn diagnoser(&self) -> Result<Box<dyn Diagnoser>, AgentError> {
        Ok(if self.chat {
            Box::new(LlmDiagnoser::new(self.client.clone()))
        } else {
            Box::new(RuleDiagnoser::new())
        })
    }
    fn distiller(&self) -> Result<Box<dyn Distiller>, AgentError> {
        Ok(if self.chat {
            Box::new(LlmDistiller::new(self.client.clone()))
        } else {
            Box::new(BuiltinDistiller::new())
        })
    }
    fn has_llm(&self) -> bool {
        self.chat
    }
    fn llm_client(&self) -> Option<Arc<LlmClient>> {
        self.chat.then(|| self.client.clone())
    }
    fn dense(&self) -> Option<DenseRetrieval> {
        DenseRetrieval::from_client(self.client.clone())
    }
    fn for_run(
        &self,
        store_path: &Path,
        run: RunId,
    ) -> Result<Option<Box<dyn AgentFactory>>, AgentError> {
        let log = Arc::new(StoreCallLog::open(store_path, run)?);
        Ok(Some(Box::new(LlmAgents {
            client: Arc::new(self.client.with_log(log)),
            chat: self.chat,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{LlmConfig, LlmSettings};

    #[test]
    fn dense_retrieval_needs_an_embedding_model() {
        let mut cfg = LlmConfig::from_settings(LlmSettings {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            model: Some("chat".into()),
            ..LlmSettings::default()
        })
        .unwrap();
        let log = Arc::new(ascendopt_llm::audit::MemoryCallLog::new());
        let client =
            Arc::new(LlmClient::with_key(cfg.clone(), Some("k".into()), log.clone()).unwrap());
        assert!(DenseRetrieval::from_client(client.clone()).is_none());
        let agents = LlmAgents::new(client);
        assert!(agents.dense().is_none());
        assert!(agents.retrieval().describe().starts_with("lexical ("));
        assert_eq!(agents.name(), "llm:chat");
        cfg.embedding_model = Some("embed".into());
        let client = Arc::new(LlmClient::with_key(cfg, Some("k".into()), log).unwrap());
        let dense = DenseRetrieval::from_client(client.clone()).unwrap();
        assert_eq!(dense.model(), "embed");
        assert_eq!(dense, dense.clone());
        assert_ne!(dense, dense.with_client(client.clone()));
        let agents = LlmAgents::embeddings_only(client);
        assert_eq!(agents.name(), "builtin+embed:embed");
        assert!(!agents.has_llm() && agents.llm_client().is_none());
        assert_eq!(agents.proposer(1).unwrap().name(), "builtin");
        assert!(agents.dense().is_some());
        assert!(agents
            .retrieval()
            .describe()
            .starts_with("lexical + dense (embed via http://127.0.0.1:9/v1"));
    }
}
