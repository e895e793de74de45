//! Rewind proposals of the built-in engine (issue 6).

use super::BuiltinProposer;
use crate::proposer::{Proposal, RemovalRequest};

/// Removal candidates for the current kernel, in the order to try them.
pub(super) fn removals(_p: &BuiltinProposer, _req: &RemovalRequest<'_>) -> Vec<Proposal> {
    Vec::new()
}
