//! The built-in proposer: the motif engine driven without a network.
//!
//! - Rewind ([`removal`]): each `Present` site of each motif not yet
//!   removed in the chain, removed, in a deterministic order.
//! - Stage I ([`rewrite`]): the motifs of the retrieved entries (or, with
//!   no experience, the diagnosis's own guesses) applied at their `Absent`
//!   sites of the incumbent.

mod removal;
mod rewrite;

use crate::proposer::{Proposal, Proposer, RemovalRequest, RewriteRequest};
use crate::ProposeError;

/// The built-in motif-engine proposer.
#[derive(Debug, Clone, Default)]
pub struct BuiltinProposer {
    /// Seed for any ordering choice (the engine itself is deterministic).
    pub seed: u64,
}

impl BuiltinProposer {
    /// A proposer with this seed.
    pub fn new(seed: u64) -> BuiltinProposer {
        BuiltinProposer { seed }
    }
}

impl Proposer for BuiltinProposer {
    fn name(&self) -> &str {
        "builtin"
    }

    fn removals(&mut self, req: &RemovalRequest<'_>) -> Result<Vec<Proposal>, ProposeError> {
        Ok(removal::removals(self, req))
    }

    fn rewrites(&mut self, req: &RewriteRequest<'_>) -> Result<Vec<Proposal>, ProposeError> {
        Ok(rewrite::rewrites(self, req))
    }
}
