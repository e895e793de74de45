//! [`DenseRetrieval`]: Stage I's retrieval through an embeddings endpoint.
//!
//! When the LLM configuration names an embedding model, Stage I ranks the
//! bank by reciprocal-rank fusion of the lexical ranking (FTS5/BM25,
//! profile signature, applicability) and the cosine similarity of the
//! query and entry embeddings ([`Bank::search_fused`]). The vectors come
//! from `POST {base}/embeddings` through the shared [`LlmClient`], so each
//! embeddings request is retried, rate-limited, recorded in the run store
//! (`llm_calls`, role `embeddings`, with its tokens and cost) and replayed
//! like a chat request. Entry (and query) vectors are cached in the bank
//! file, keyed by model and text: an entry is embedded once per model.
//!
//! Failure policy:
//! - before a run: [`DenseRetrieval::preflight`] (one probe request, not
//!   recorded) turns an unusable endpoint or model into a clear error
//!   before any budget is spent;
//! - during a run: a failed embeddings request (retries exhausted, an HTTP
//!   error, a malformed answer) does not stop the loop. That round falls
//!   back to lexical retrieval, the warning is recorded in the call log
//!   (role `embeddings`, status [`FALLBACK_STATUS`], the reason as its
//!   response) and kept for the caller ([`DenseRetrieval::fallbacks`]).

use ascendopt_bank::embed::{EmbedError, Embedder};
use ascendopt_bank::error::BankError;
use ascendopt_bank::retrieval::Retrieval;
use ascendopt_bank::retrieve::{Hit, Query};
use ascendopt_bank::store::Bank;
use ascendopt_llm::client::LlmClient;
use ascendopt_llm::error::LlmError;
use std::fmt;
use std::sync::{Arc, Mutex};

/// Status of the call-log row that records a fallback to lexical
/// retrieval.
pub const FALLBACK_STATUS: &str = "fallback_lexical";

/// Dense retrieval for Stage I over an LLM client whose configuration names
/// an embedding model. Clones share the client and the fallback list.
#[derive(Clone)]
pub struct DenseRetrieval {
    client: Arc<LlmClient>,
    model: String,
    fallbacks: Arc<Mutex<Vec<String>>>,
}

impl fmt::Debug for DenseRetrieval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DenseRetrieval")
            .field("model", &self.model)
            .field("endpoint", &self.client.config().embeddings_url())
            .finish()
    }
}

/// Equal when they share the client and the fallback list (clones).
impl PartialEq for DenseRetrieval {
    fn eq(&self, other: &DenseRetrieval) -> bool {
        Arc::ptr_eq(&self.client, &other.client) && Arc::ptr_eq(&self.fallbacks, &other.fallbacks)
    }
}

impl DenseRetrieval {
    /// Dense retrieval through `client`, when its configuration names an
    /// embedding model (None otherwise: lexical retrieval).
    pub fn from_client(client: Arc<LlmClient>) -> Option<DenseRetrieval> {
        let model = client.config().embedding_model.clone()?;
        Some(DenseRetrieval {
            client,
            model,
            fallbacks: Arc::new(Mutex::new(Vec::new())),
        })
    }

    /// The embedding model.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The client the vectors come through.
    pub fn client(&self) -> &Arc<LlmClient> {
        &self.client
    }

    /// The same retrieval over another client (e.g. the same endpoint
    /// recording into another run), with a fallback list of its own.
    pub fn with_client(&self, client: Arc<LlmClient>) -> DenseRetrieval {
        DenseRetrieval {
            client,
            model: self.model.clone(),
            fallbacks: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Checks that the endpoint embeds with the model (one probe request,
    /// not recorded): call before any budget is spent.
    pub fn preflight(&self) -> Result<(), LlmError> {
        self.client.preflight_embeddings()
    }

    /// The top `k` entries for `query` about operator `op`, by fusion of
    /// the lexical and dense rankings ([`Bank::search_fused`]). An
    /// embeddings failure is returned; [`DenseRetrieval::search_or_fallback`]
    /// is what Stage I uses.
    pub fn search(
        &self,
        bank: &Bank,
        query: &Query,
        k: usize,
        op: &str,
    ) -> Result<Vec<Hit>, BankError> {
        let embedder = OpEmbedder { dense: self, op };
        bank.search_fused(query, k, &embedder)
    }

    /// [`DenseRetrieval::search`], falling back to [`Bank::search`] when
    /// the embeddings fail: the warning goes to the call log and to
    /// [`DenseRetrieval::fallbacks`]. Bank errors other than the
    /// embeddings' are returned.
    pub fn search_or_fallback(
        &self,
        bank: &Bank,
        query: &Query,
        k: usize,
        op: &str,
    ) -> Result<Vec<Hit>, BankError> {
        match self.search(bank, query, k, op) {
            Ok(hits) => Ok(hits),
            Err(e @ BankError::Embeddings { .. }) => {
                let warning =
                    format!("dense retrieval failed, lexical retrieval used for this round: {e}");
                // The call log may fail too; the warning is still kept.
                let logged = self
                    .client
                    .note("embeddings", op, FALLBACK_STATUS, &warning);
                let mut list = self.fallbacks.lock().unwrap_or_else(|p| p.into_inner());
                list.push(match logged {
                    Ok(()) => warning,
                    Err(log) => format!("{warning} (not recorded: {log})"),
                });
                drop(list);
                bank.search(query, k)
            }
            Err(e) => Err(e),
        }
    }

    /// The fallback warnings so far (this value and its clones).
    pub fn fallbacks(&self) -> Vec<String> {
        self.fallbacks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Stage I's dense retrieval: [`DenseRetrieval::search_or_fallback`].
impl Retrieval for DenseRetrieval {
    fn search(
        &self,
        bank: &Bank,
        query: &Query,
        k: usize,
        op: &str,
    ) -> Result<Vec<Hit>, BankError> {
        self.search_or_fallback(bank, query, k, op)
    }

    fn describe(&self) -> String {
        format!(
            "lexical + dense ({} via {}), reciprocal-rank fusion",
            self.model,
            self.client.config().embeddings_url()
        )
    }

    fn fallbacks(&self) -> Vec<String> {
        DenseRetrieval::fallbacks(self)
    }
}

/// The bank's view of the client, for one operator's requests.
struct OpEmbedder<'a> {
    dense: &'a DenseRetrieval,
    op: &'a str,
}

impl Embedder for OpEmbedder<'_> {
    fn model(&self) -> &str {
        &self.dense.model
    }

    fn endpoint(&self) -> String {
        self.dense.client.config().embeddings_url()
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.dense
            .client
            .embed(self.op, texts)
            .map(|r| r.vectors)
            .map_err(EmbedError::from)
    }
}
