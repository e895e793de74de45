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
//! broke the kernel twice in the chain, or once by exhausting a resource
//! (the worker ran out of memory, hit the simulator's instruction limit or
//! timed out): that depends on the operator's sizes, not on the site, so
//! every other site of the motif would fail the same way. (At full size a
//! `vectorize_scalar` removal turns a vector call over ~400 k elements
//! per core into per-element `GetValue`/`SetValue`, one recorded trace
//! instruction each, on all 48 cores at once: the worker exceeds its
//! address-space limit.)

use super::BuiltinProposer;
use crate::proposer::{Proposal, RemovalRequest};
use crate::session::Action;
use ascendopt_motif::{registry, Motif, SiteState};

/// Failed (not correct) removals of one motif after which the chain
/// stops proposing it.
const MAX_BROKEN: usize = 2;

/// Whether a failed attempt ran out of a resource rather than computing
/// something wrong: a time-out, or a runtime error whose message says the
/// worker ran out of memory or hit the instruction limit.
fn exhausted(verdict: &str, reason: &str) -> bool {
    verdict == "timeout"
        || (verdict == "runtime_error"
            && (reason.contains("out of memory") || reason.contains("instruction limit")))
}

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
        "staging_copy" => 3,
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
    // wrong results, no build), or once by exhausting a resource, is given
    // up: its other sites would most likely fail the same way and the
    // budget is small.
    let given_up = |tag: &str| {
        let of: Vec<&(Action, String, String)> = req
            .feedback
            .attempts
            .iter()
            .filter(|(action, _, _)| action.motif.as_deref() == Some(tag))
            .collect();
        of.iter()
            .filter(|(_, verdict, _)| verdict != "correct")
            .count()
            >= MAX_BROKEN
            || of
                .iter()
                .any(|(_, verdict, reason)| exhausted(verdict, reason))
    };
    let mut motifs: Vec<Box<dyn Motif>> = registry()
        .into_iter()
        .filter(|m| !req.removed.iter().any(|r| r == m.tag()))
        .filter(|m| !given_up(m.tag()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proposer::Feedback;
    use ascendopt_motif::Sources;
    use std::path::Path;

    fn fast_gelu_grad() -> Sources {
        Sources::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops/fast_gelu_grad"))
            .unwrap()
    }

    fn proposed(current: &Sources, feedback: &Feedback) -> Vec<Action> {
        removals(
            &BuiltinProposer::new(0),
            &RemovalRequest {
                current,
                op: "fast_gelu_grad",
                removed: &[],
                feedback,
            },
        )
        .into_iter()
        .map(|p| p.action)
        .collect()
    }

    fn failed(action: &Action, verdict: &str, reason: &str) -> (Action, String, String) {
        (action.clone(), verdict.to_string(), reason.to_string())
    }

    #[test]
    fn a_motif_that_exhausted_a_resource_once_is_given_up() {
        let strong = fast_gelu_grad();
        let all = proposed(&strong, &Feedback::default());
        let scalar: Vec<&Action> = all
            .iter()
            .filter(|a| a.motif.as_deref() == Some("vectorize_scalar"))
            .collect();
        assert!(scalar.len() >= 3, "{all:?}");
        let count = |actions: &[Action], tag: &str| {
            actions
                .iter()
                .filter(|a| a.motif.as_deref() == Some(tag))
                .count()
        };
        // One wrong result: the motif's other sites are still proposed.
        let wrong = Feedback {
            attempts: vec![failed(
                scalar[0],
                "incorrect",
                "incorrect:reference: a removal must keep the kernel correct",
            )],
            ..Feedback::default()
        };
        assert_eq!(
            count(&proposed(&strong, &wrong), "vectorize_scalar"),
            scalar.len() - 1
        );
        // Two: given up.
        let twice = Feedback {
            attempts: vec![
                wrong.attempts[0].clone(),
                failed(scalar[1], "incorrect", "x"),
            ],
            ..Feedback::default()
        };
        assert_eq!(count(&proposed(&strong, &twice), "vectorize_scalar"), 0);
        // Out of memory once: given up at once, other motifs unaffected.
        for (verdict, reason) in [
            (
                "runtime_error",
                "runtime_error:crash: a removal must keep the kernel correct (out of memory: \
                 memory allocation of 1048576 bytes failed)",
            ),
            (
                "runtime_error",
                "runtime_error:fault: a removal must keep the kernel correct (instruction limit \
                 of 4000000 per block exceeded)",
            ),
            (
                "timeout",
                "timeout 60000ms: a removal must keep the kernel correct",
            ),
        ] {
            let oom = Feedback {
                attempts: vec![failed(scalar[0], verdict, reason)],
                ..Feedback::default()
            };
            let after = proposed(&strong, &oom);
            assert_eq!(count(&after, "vectorize_scalar"), 0, "{reason}");
            assert_eq!(after.len(), all.len() - scalar.len(), "{reason}");
        }
        // A crash that is not a resource limit counts once, like any break.
        let crash = Feedback {
            attempts: vec![failed(
                scalar[0],
                "runtime_error",
                "runtime_error:crash: a removal must keep the kernel correct (kernel crashed \
                 (SIGSEGV))",
            )],
            ..Feedback::default()
        };
        assert_eq!(
            count(&proposed(&strong, &crash), "vectorize_scalar"),
            scalar.len() - 1
        );
    }
}
