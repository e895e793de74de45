//! Stage I proposals of the built-in engine.
//!
//! With experience, each retrieved entry names a motif: the motif is
//! applied at every `Absent` site of the incumbent; the entries that named
//! a motif are the action's entry ids. Without experience (no entries),
//! the diagnosis's own motif order is used the same way, with no entry
//! ids. The motifs take turns (entry or diagnosis order): the first
//! candidate of each, then the second of each, and so on.
//!
//! A candidate equal to the incumbent or produced twice is left out; the
//! loop skips candidates it judged before (same sources), which is what
//! keeps a rejected rewrite from being tried again. The feedback is not
//! used to filter by action: the same edit on a new incumbent is a new
//! candidate.

use super::BuiltinProposer;
use crate::proposer::{Proposal, RewriteRequest};
use crate::session::Action;
use ascendopt_motif::{by_tag, SiteState, Sources};

/// Rewrites of the incumbent, in the order to try them.
pub(super) fn rewrites(_p: &BuiltinProposer, req: &RewriteRequest<'_>) -> Vec<Proposal> {
    // (motif, entry ids that named it), in order of first appearance.
    let mut plan: Vec<(String, Vec<i64>)> = Vec::new();
    if req.entries.is_empty() {
        for m in &req.diagnosis.motifs {
            if !plan.iter().any(|(t, _)| t == m) {
                plan.push((m.clone(), Vec::new()));
            }
        }
    } else {
        for e in req.entries {
            match plan.iter_mut().find(|(t, _)| *t == e.entry.motif) {
                Some((_, ids)) => ids.push(e.id.0),
                None => plan.push((e.entry.motif.clone(), vec![e.id.0])),
            }
        }
    }
    // Each motif's candidates in site order; then the motifs taken in
    // turn (the first candidate of every motif, then the second, ...): a
    // motif with many sites or a long ladder of values does not hold up
    // the others, and a ladder's next rung still follows its first.
    let mut made: Vec<Sources> = Vec::new();
    let mut queues: Vec<std::collections::VecDeque<Proposal>> = Vec::new();
    for (tag, ids) in plan {
        let Some(motif) = by_tag(&tag) else { continue };
        let mut queue = std::collections::VecDeque::new();
        for site in motif.detect(req.current) {
            if site.state != SiteState::Absent {
                continue;
            }
            let Some(candidate) = motif.apply(req.current, &site) else {
                continue;
            };
            if &candidate == req.current || made.contains(&candidate) {
                continue;
            }
            let summary = format!("apply {tag} at {}:{} ({})", site.file, site.line, site.note);
            made.push(candidate.clone());
            queue.push_back(Proposal {
                action: Action {
                    proposer: "builtin".to_string(),
                    motif: Some(tag.clone()),
                    summary,
                    entries: ids.clone(),
                },
                candidate: Ok(candidate),
            });
        }
        queues.push(queue);
    }
    // What the loop already learnt: candidates like ones tried before
    // (same motif and site, line numbers aside) and moves of a knob to a
    // value at least as far as one that failed since the last accepted
    // rewrite go after the fresh ones.
    let tried: Vec<String> = req
        .feedback
        .attempts
        .iter()
        .map(|(a, _, _)| key(a))
        .collect();
    let since = req.feedback.accepted.last().map_or(0, |i| i + 1);
    let failed: Vec<(String, i64)> = req.feedback.attempts
        [since.min(req.feedback.attempts.len())..]
        .iter()
        .filter(|(_, verdict, _)| !verdict.starts_with("correct"))
        .filter_map(|(a, _, _)| knob_move(&a.summary))
        .collect();
    let stale = |p: &Proposal| {
        tried.contains(&key(&p.action))
            || knob_move(&p.action.summary)
                .is_some_and(|(name, v)| failed.iter().any(|(n, fv)| *n == name && v >= *fv))
    };
    let mut fresh: Vec<Proposal> = Vec::new();
    let mut later: Vec<Proposal> = Vec::new();
    while queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if let Some(p) = q.pop_front() {
                if stale(&p) {
                    later.push(p);
                } else {
                    fresh.push(p);
                }
            }
        }
    }
    fresh.extend(later);
    fresh
}

/// What an attempt was, line numbers aside (they move as code changes).
fn key(action: &Action) -> String {
    let tag = action.motif.clone().unwrap_or_default();
    let text: String = action
        .summary
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .collect();
    format!("{tag}|{text}")
}

/// The knob and value of a knob move (`... (TILE_LENGTH -> 8192 ...`,
/// `... (tileLength = 1024 -> 4096 ...`, `... (TILE_BYTES = 2048 -> 65536
/// (domain ...`).
fn knob_move(summary: &str) -> Option<(String, i64)> {
    let open = summary.find(" (")? + 2;
    let rest = &summary[open..];
    let arrow = rest.find(" -> ")?;
    let name = rest[..arrow].split(" = ").next()?.trim().to_string();
    let value: String = rest[arrow + 4..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    Some((name, value.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knob_moves_are_read_from_summaries() {
        assert_eq!(
            knob_move("apply tile_size at op_host/g.cpp:6 (TILE_LENGTH -> 16384 (found: tile or UB size; tiling field tileLength))"),
            Some(("TILE_LENGTH".to_string(), 16384))
        );
        assert_eq!(
            knob_move("apply tile_size at op_host/g.cpp:9 (tileLength = 1024 -> 4096 (found: x))"),
            Some(("tileLength".to_string(), 4096))
        );
        assert_eq!(
            knob_move("apply tile_size at op_host/a.cpp:3 (TILE_BYTES = 2048 -> 65536 (domain min=1024 max=65536 step=pow2))"),
            Some(("TILE_BYTES".to_string(), 65536))
        );
        assert_eq!(
            knob_move("apply barrier_elim at op_kernel/k.cpp:1 (3 PipeBarrier)"),
            None
        );
    }
}
