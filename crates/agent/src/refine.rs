//! Stage I: refine the kernel.
//!
//! Loop: diagnose the incumbent from its profile and sources → retrieve
//! the top-k bank entries for the diagnosis (with experience) → ask the
//! proposer for rewrites → judge them one by one through the session →
//! take the first that is correct and faster beyond noise under the
//! current tiling as the new incumbent, and diagnose again.
//!
//! - A candidate judged before in this optimisation (same sources) is
//!   never proposed to the harness again (the `tried` set), so a rejected
//!   rewrite is not retried; the proposer gets the attempts as feedback.
//! - Retrieval is whatever [`Retrieval`] the caller passes: lexical
//!   ([`ascendopt_bank::retrieval::Lexical`], [`Bank::search`]) or dense
//!   ([`crate::llm::DenseRetrieval`], a reciprocal-rank fusion of that
//!   ranking and the embedding similarity, [`Bank::search_fused`]).
//! - With experience, motifs whose rewrites were all rejected on the
//!   current incumbent are excluded from the next retrieval, so that
//!   lower-ranked entries get their turn; the exclusions reset when the
//!   incumbent changes.
//! - The loop ends when its evaluation allowance is used, when the run's
//!   budget is spent (and the next candidate is not already judged in the
//!   store), after `stagnation` attempts in a row without an accepted
//!   rewrite, or when nothing new is proposed.
//!
//! Every attempt counts against the allowance whether the store charged it
//! or returned an earlier verdict; that is what makes a resumed run replay
//! the same decisions.

use crate::attempts::{affordable, notify, settle, Tried};
use crate::diagnose::{DiagnoseRequest, Diagnoser, Diagnosis};
use crate::features::applicable_motifs;
use crate::outcome::Step;
use crate::proposer::{Feedback, Proposer, RewriteRequest};
use crate::session::{LogEntry, OpSession, Phase, Trial};
use crate::AgentError;
use crate::ProposeError;
use ascendopt_bank::retrieval::Retrieval;
use ascendopt_bank::retrieve::{AvoidPolicy, Query};
use ascendopt_bank::store::{Bank, StoredEntry};
use ascendopt_harness::store::Stage;
use ascendopt_motif::Sources;
use std::collections::BTreeSet;

/// How Stage I runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RefineConfig {
    /// Most attempts (evaluations) this stage may make.
    pub max_attempts: u32,
    /// Entries retrieved per diagnosis.
    pub k: usize,
    /// Query the bank (false: the no-experience ablation).
    pub use_bank: bool,
    /// Stop after this many attempts in a row without an accepted rewrite
    /// (None: never for this reason).
    pub stagnation: Option<u32>,
}

/// What Stage I ends with.
#[derive(Debug, Clone)]
pub struct RefineOutcome {
    /// The final incumbent.
    pub incumbent: Trial,
    /// Accepted rewrites, in order.
    pub steps: Vec<Step>,
    /// Attempts made (charged or answered by the store).
    pub attempts: u32,
    /// Diagnoses made, in order.
    pub diagnoses: Vec<Diagnosis>,
    /// Why the loop stopped.
    pub stopped: String,
    /// Every attempt, one line each: what, verdict, why.
    pub tried: Vec<String>,
}

/// The entries retrieved for a diagnosis, restricted to motifs the engine
/// could apply to `current` and not in `exclude`.
fn retrieve(
    bank: &Bank,
    retrieval: &dyn Retrieval,
    op: &str,
    diagnosis: &Diagnosis,
    current: &Sources,
    exclude: &BTreeSet<String>,
    k: usize,
) -> Result<Vec<StoredEntry>, AgentError> {
    let applicable: Vec<String> = applicable_motifs(current)
        .into_iter()
        .filter(|m| !exclude.contains(*m))
        .map(str::to_string)
        .collect();
    if applicable.is_empty() {
        return Ok(Vec::new());
    }
    let query = Query {
        text: diagnosis.text.clone(),
        signature: diagnosis.signature.clone(),
        code_features: diagnosis.code_features.clone(),
        only_motifs: applicable,
        exclude_motifs: exclude.iter().cloned().collect(),
        avoid: AvoidPolicy::Demote,
    };
    let hits = retrieval.search(bank, &query, k, op)?;
    Ok(hits.into_iter().map(|h| h.entry).collect())
}

/// Runs Stage I from `incumbent` (a correct, profiled trial), ranking the
/// bank's entries with `retrieval`, calling `on_attempt` with every
/// settled attempt.
#[allow(clippy::too_many_arguments)]
pub fn refine(
    session: &mut OpSession<'_>,
    bank: Option<&Bank>,
    retrieval: &dyn Retrieval,
    proposer: &mut dyn Proposer,
    diagnoser: &mut dyn Diagnoser,
    incumbent: Trial,
    cfg: &RefineConfig,
    tried: &mut Tried,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<RefineOutcome, AgentError> {
    let mut incumbent = incumbent;
    tried.insert(&incumbent.sources);
    let mut steps = Vec::new();
    let mut diagnoses = Vec::new();
    let mut feedback = Feedback::default();
    let mut attempts = 0u32;
    let mut since_accept = 0u32;
    let mut exhausted: BTreeSet<String> = BTreeSet::new();
    let bank = if cfg.use_bank { bank } else { None };
    // Past the bank: once no retrieved entry gives a new candidate, every
    // motif the engine can apply (the diagnosis's first) is tried; the
    // bank decides the order, not the reach.
    let mut unguided = bank.is_none();
    let mut lines: Vec<String> = Vec::new();

    let stopped = 'outer: loop {
        if attempts >= cfg.max_attempts {
            break "allowance used".to_string();
        }
        let Some(profile) = incumbent.profile().cloned() else {
            break "the incumbent has no profile".to_string();
        };
        let mut stop = None;
        let Some(diagnosis) = ProposeError::stage_ending(
            diagnoser.diagnose(&DiagnoseRequest {
                sources: &incumbent.sources,
                op: session.op(),
                profile: &profile,
                compiler_diagnostics: "",
            }),
            &mut stop,
        )?
        else {
            break stop.unwrap_or_default();
        };
        let entries = match bank {
            Some(bank) if !unguided => {
                let entries = retrieve(
                    bank,
                    retrieval,
                    session.op(),
                    &diagnosis,
                    &incumbent.sources,
                    &exhausted,
                    cfg.k,
                )?;
                if entries.is_empty() {
                    unguided = true;
                }
                entries
            }
            _ => Vec::new(),
        };
        diagnoses.push(diagnosis.clone());
        let Some(proposals) = ProposeError::stage_ending(
            proposer.rewrites(&RewriteRequest {
                current: &incumbent.sources,
                op: session.op(),
                diagnosis: &diagnosis,
                entries: &entries,
                feedback: &feedback,
            }),
            &mut stop,
        )?
        else {
            break stop.unwrap_or_default();
        };
        let fresh: Vec<_> = proposals
            .into_iter()
            .filter(|p| match &p.candidate {
                Ok(s) => !tried.contains(s),
                Err(_) => true,
            })
            .collect();
        let round_motifs: BTreeSet<String> =
            entries.iter().map(|e| e.entry.motif.clone()).collect();
        if fresh.is_empty() {
            if !unguided {
                exhausted.extend(round_motifs);
                if entries.is_empty() {
                    unguided = true;
                }
                continue;
            }
            break format!(
                "nothing left to try: {}",
                what_was_tried(&feedback, &diagnosis)
            );
        }
        let mut accepted = false;
        for proposal in fresh {
            if attempts >= cfg.max_attempts {
                break 'outer "allowance used".to_string();
            }
            if let Some(limit) = cfg.stagnation {
                if since_accept >= limit {
                    break 'outer format!(
                        "stagnated: {limit} attempts without an accepted rewrite"
                    );
                }
            }
            let sources = match proposal.candidate {
                Ok(s) => s,
                Err(refused) => {
                    if session.remaining(Stage::Online) == 0 {
                        break 'outer "budget spent".to_string();
                    }
                    session.charge_failed_proposal(
                        Phase::Refine,
                        proposal.action.clone(),
                        &refused,
                    )?;
                    notify(session, on_attempt);
                    attempts += 1;
                    since_accept += 1;
                    lines.push(format!(
                        "{}: no_edit ({})",
                        proposal.action.summary, refused.reason
                    ));
                    feedback
                        .attempts
                        .push((proposal.action, "no_edit".into(), refused.reason));
                    continue;
                }
            };
            if tried.contains(&sources) {
                continue;
            }
            if !affordable(session, &sources)? {
                break 'outer "budget spent".to_string();
            }
            tried.insert(&sources);
            let trial = session.evaluate(Phase::Refine, &sources, proposal.action.clone())?;
            attempts += 1;
            let verdict = trial.verdict().label();
            if trial.is_correct() {
                let decision = session.accept(&trial, &incumbent);
                if decision.faster {
                    settle(session, on_attempt, true, decision.reason.clone());
                    let before = incumbent.latency_us().unwrap_or(f64::NAN);
                    let after = trial.latency_us().unwrap_or(f64::NAN);
                    lines.push(format!(
                        "{}: accepted ({before:.2} -> {after:.2} us)",
                        proposal.action.summary
                    ));
                    steps.push(Step {
                        phase: Phase::Refine,
                        action: proposal.action.clone(),
                        before_us: before,
                        after_us: after,
                        reason: decision.reason.clone(),
                        at_evaluation: u32::try_from(session.log().len()).unwrap_or(u32::MAX),
                    });
                    feedback.accepted.push(feedback.attempts.len());
                    feedback
                        .attempts
                        .push((proposal.action, verdict, decision.reason));
                    incumbent = trial;
                    since_accept = 0;
                    exhausted.clear();
                    unguided = bank.is_none();
                    accepted = true;
                    break;
                }
                settle(session, on_attempt, false, decision.reason.clone());
                lines.push(format!(
                    "{}: not faster ({})",
                    proposal.action.summary, decision.reason
                ));
                feedback
                    .attempts
                    .push((proposal.action, verdict, decision.reason));
            } else {
                let reason = format!("not correct: {verdict}");
                settle(session, on_attempt, false, reason.clone());
                lines.push(format!("{}: {verdict}", proposal.action.summary));
                feedback.attempts.push((proposal.action, verdict, reason));
            }
            since_accept += 1;
        }
        if !accepted && !unguided {
            // Every candidate of these entries' motifs was tried on this
            // incumbent: the next retrieval excludes them.
            exhausted.extend(round_motifs);
        }
    };
    Ok(RefineOutcome {
        incumbent,
        steps,
        attempts,
        diagnoses,
        stopped,
        tried: lines,
    })
}

/// The attempts of a loop in a few words: how many per motif and how they
/// ended, and the motifs the diagnosis named that the engine could not
/// apply.
pub(crate) fn what_was_tried(feedback: &Feedback, diagnosis: &Diagnosis) -> String {
    let mut per: Vec<(String, u32, u32)> = Vec::new();
    for (action, verdict, _) in &feedback.attempts {
        let tag = action
            .motif
            .clone()
            .unwrap_or_else(|| action.proposer.clone());
        let ok = u32::from(verdict.starts_with("correct"));
        match per.iter_mut().find(|(t, _, _)| *t == tag) {
            Some(e) => {
                e.1 += 1;
                e.2 += ok;
            }
            None => per.push((tag, 1, ok)),
        }
    }
    if per.is_empty() {
        return format!(
            "no motif applies to this kernel (diagnosis: {})",
            diagnosis.kind
        );
    }
    let parts: Vec<String> = per
        .iter()
        .map(|(t, n, ok)| format!("{t} x{n} ({ok} correct)"))
        .collect();
    format!("every applicable candidate was tried: {}", parts.join(", "))
}
