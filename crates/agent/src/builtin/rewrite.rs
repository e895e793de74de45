//! Stage I proposals of the built-in engine (issue 7).

use super::BuiltinProposer;
use crate::proposer::{Proposal, RewriteRequest};

/// Rewrites of the incumbent, in the order to try them.
pub(super) fn rewrites(_p: &BuiltinProposer, _req: &RewriteRequest<'_>) -> Vec<Proposal> {
    Vec::new()
}
