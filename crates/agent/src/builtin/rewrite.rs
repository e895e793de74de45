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
use crate::motif::{by_tag, SiteState, Sources};
use crate::proposer::{Proposal, RewriteRequest};
use crate::session::Action;

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
    let mut out: Vec<Proposal> = Vec::new();
    while queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if let Some(p) = q.pop_front() {
                out.push(p);
            }
        }
    }
    out
}
