//! [`Retrieval`]: how Stage I asks the bank for entries, handed to the
//! method as a trait object. [`Lexical`] is the bank's own ranking
//! ([`Bank::search`]: FTS5/BM25, profile signature, applicability); the
//! dense retrieval that fuses it with embedding similarity lives with the
//! LLM client that makes the embeddings (`ascendopt_agent::llm::
//! DenseRetrieval`), so the method names neither: it calls
//! [`Retrieval::search`].

use crate::error::BankError;
use crate::retrieve::{Hit, Query};
use crate::store::Bank;
use std::fmt;

/// A way of ranking the bank's entries for a query.
pub trait Retrieval: fmt::Debug + Send + Sync {
    /// The top `k` entries of `bank` for `query` about operator `op` (the
    /// operator names the requests a retrieval makes, e.g. in a call log).
    fn search(&self, bank: &Bank, query: &Query, k: usize, op: &str)
        -> Result<Vec<Hit>, BankError>;

    /// One line saying how entries are ranked (progress output).
    fn describe(&self) -> String;

    /// Warnings of rounds that fell back to a simpler ranking (none for a
    /// retrieval that cannot fall back).
    fn fallbacks(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The bank's own ranking, [`Bank::search`]: no network, no fallback.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lexical;

impl Retrieval for Lexical {
    fn search(
        &self,
        bank: &Bank,
        query: &Query,
        k: usize,
        _op: &str,
    ) -> Result<Vec<Hit>, BankError> {
        bank.search(query, k)
    }

    fn describe(&self) -> String {
        "lexical (BM25, profile signature, applicability)".to_string()
    }
}
