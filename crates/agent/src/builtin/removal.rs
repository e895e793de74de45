//! Rewind proposals of the built-in engine: every `Present` site of every
//! motif not yet removed in the chain, taken out by the motif engine.
//!
//! Order (deterministic): motifs are ranked by how reliably their removal
//! shows as a slowdown beyond noise on the kind of kernel at hand, the
//! subtle ones first (they are measurable only while the kernel is still
//! strong; after a big removal their effect drowns in the larger
//! latency), the big structural ones (core count, tile size) last. Sites
//! are taken round-robin over the ranked motifs (the first site of each
//! motif, then the second, ...), so a budget of 20 evaluations covers as
//! many motifs as possible. Removals the chain's feedback already tried
//! (same summary) are skipped, and so is a motif whose removals already
//! broke the kernel twice in the chain.

use super::BuiltinProposer;
use crate::motif::{registry, Motif, SiteState};
use crate::proposer::{Proposal, RemovalRequest};
use crate::session::Action;

/// Failed (not correct) removals of one motif after which the chain
/// stops proposing it.
const MAX_BROKEN: usize = 2;

/// Rank of a motif in the try order (lower first): subtle motifs early,
/// launch- and tile-level ones last.
fn rank(tag: &str) -> u8 {
    match tag {
        // Before the tail is unfolded: on fast_gelu_grad, un-hoisting a
        // kernel whose tail was already unfolded gave wrong results.
        "hoist_invariant" => 0,
        "fused_vec_ops" => 1,
        "tail_fold" => 2,
        "buffer_reuse" => 3,
        // Before the barriers: PIPE_ALL barriers serialise the pipes, and
        // a second buffer then has nothing to overlap.
        "double_buffer" => 4,
        "strided_copy" => 5,
        "count_mode" => 6,
        "vectorize_scalar" => 7,
        "barrier_elim" => 8,
        "tile_size" => 9,
        "multi_core" => 10,
        _ => 5,
    }
}

/// The one-line summary of a removal (also the key feedback is matched on).
fn summary(tag: &str, file: &str, line: usize, note: &str) -> String {
    format!("remove {tag} at {file}:{line} ({note})")
}

/// Removal candidates for the current kernel, in the order to try them
/// (the order does not depend on the proposer's seed: ranks are distinct
/// and the engine is deterministic).
pub(super) fn removals(_p: &BuiltinProposer, req: &RemovalRequest<'_>) -> Vec<Proposal> {
    let tried: Vec<&str> = req
        .feedback
        .attempts
        .iter()
        .map(|(action, _, _)| action.summary.as_str())
        .collect();
    // A motif whose removals broke the kernel twice in this chain (crash,
    // wrong results, no build) is given up: its other sites would most
    // likely fail the same way and the budget is small.
    let broken = |tag: &str| {
        req.feedback
            .attempts
            .iter()
            .filter(|(action, verdict, _)| {
                action.motif.as_deref() == Some(tag) && verdict != "correct"
            })
            .count()
    };
    let mut motifs: Vec<Box<dyn Motif>> = registry()
        .into_iter()
        .filter(|m| !req.removed.iter().any(|r| r == m.tag()))
        .filter(|m| broken(m.tag()) < MAX_BROKEN)
        .collect();
    motifs.sort_by_key(|m| rank(m.tag()));
    // Every motif's candidates, in site order.
    let per_motif: Vec<Vec<Proposal>> = motifs
        .iter()
        .map(|motif| {
            motif
                .detect(req.current)
                .into_iter()
                .filter(|site| site.state == SiteState::Present)
                .filter_map(|site| {
                    let text = summary(motif.tag(), &site.file, site.line, &site.note);
                    if tried.contains(&text.as_str()) {
                        return None;
                    }
                    let weak = motif.remove(req.current, &site)?;
                    Some(Proposal {
                        action: Action {
                            proposer: "builtin".into(),
                            motif: Some(motif.tag().to_string()),
                            summary: text,
                            entries: Vec::new(),
                        },
                        candidate: Ok(weak),
                    })
                })
                .collect()
        })
        .collect();
    // Round-robin over the ranked motifs.
    let longest = per_motif.iter().map(Vec::len).max().unwrap_or(0);
    let mut queues: Vec<std::vec::IntoIter<Proposal>> =
        per_motif.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    for _ in 0..longest {
        for queue in &mut queues {
            if let Some(proposal) = queue.next() {
                out.push(proposal);
            }
        }
    }
    out
}
