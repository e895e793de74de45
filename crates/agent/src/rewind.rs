//! Rewind (offline): learn experience entries by taking optimisations out
//! of strong kernels.
//!
//! For one operator, starting from its kernel as given (the strong one):
//!
//! 1. the strong kernel is evaluated (one evaluation of the budget);
//! 2. the proposer offers removals of one motif each from the current
//!    kernel; they are evaluated one by one, every attempt charged;
//! 3. a removal is kept only if the degraded kernel compiles, passes the
//!    hardened correctness checks and is slower than the current kernel
//!    beyond noise (the harness's rule, [`OpSession::faster`] of the
//!    current kernel over the candidate), and then **again** on a
//!    confirmation (below);
//! 4. a kept removal is inverted into an entry (slow → fast diff, both
//!    latencies, the profile fields that moved, the slow kernel's
//!    signature, text from the [`Distiller`]) and stored in the bank; the
//!    chain continues from the degraded kernel (2.) until the budget, the
//!    proposals or `max_chain` run out.
//!
//! Tiling is held fixed: only the sources change; op.toml, cases and knob
//! ranges come from the operator's package.
//!
//! # Confirmation
//!
//! One pass of the noise rule is not enough evidence for an entry: the
//! rule lets about 2 % of equal pairs through, and an effect close to
//! τ passes or fails by the luck of one set of samples (a tail_fold
//! removal of fast_gelu_grad passed at a 1.7 % slowdown and re-measured
//! at 0.3 %, under a τ of 0.6 %). So a removal that passes once is
//! measured again before it is stored: the slow candidate is evaluated a
//! second time ([`OpSession::remeasure_or_replay`]: fresh inputs, fresh
//! noise seeds, the full pipeline, correctness included) and compared
//! with an independent re-measurement of the fast (current) kernel; the
//! removal is stored only when that second comparison also finds it
//! slower beyond τ. Each re-measurement is charged to the budget like
//! every evaluation. The fast kernel's re-measurement is the one taken
//! when it was itself confirmed as the slow side of the previous kept
//! removal (for the strong kernel: one re-measurement at the first
//! confirmation), so a confirmation usually costs one evaluation, at
//! most two. Both comparisons are in the entry's evidence
//! (`decision`, `confirm_*`). A removal that passes once when fewer
//! evaluations remain than its confirmation needs is not stored.
//!
//! With measurement noise off (`PipelineConfig::deterministic`) there is
//! nothing to confirm: a re-measurement is the same clean duration of
//! the same trace, so confirmation is skipped and the evidence says so
//! (`confirm:skipped ...`).
//!
//! Every entry carries the evidence needed to check it again: the run
//! store's source hashes of the slow and fast kernels, the seeds and
//! budget indices of their evaluations. [`verify_entry`] rebuilds both
//! kernels from the store and re-evaluates them on fresh inputs and
//! fresh noise, outside the store's cache.
//!
//! Invariants:
//! - Nothing is stored for a removal that failed to compile, was not
//!   correct, or whose slowdown is within noise, at the first measurement
//!   or at the confirmation; such attempts are in the log (accepted =
//!   false, with the reason) and were charged.
//! - The same seeds (pipeline and proposer) on the same operators give
//!   the same bank ([`Bank::content_digest`]): proposals, evaluations and
//!   text are deterministic, and an entry's content hash excludes its
//!   creation time and evidence.

use crate::distill::{DistillRequest, Distiller};
use crate::proposer::{Feedback, Proposer, RemovalRequest};
use crate::session::{Action, LogEntry, OpSession, Phase, RunContext, Trial};
use crate::AgentError;
use crate::ProposeError;
use ascendopt_bank::entry::{family_of, Entry, Origin, Provenance, SourceOp};
use ascendopt_bank::signature::{profile_moved, ProfileSignature};
use ascendopt_bank::store::{Bank, EntryId, Inserted};
use ascendopt_harness::compare::{self, Decision};
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_harness::pipeline::{self, evaluate_package, evaluation_seed};
use ascendopt_harness::store::{SourceHash, Stage};
use ascendopt_harness::verdict::Verdict;
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use std::path::Path;

/// Relative change below which a profile field does not count as moved.
pub const MOVED_MIN_RELATIVE: f64 = 0.02;

/// Salt of the verification seeds (never equal to an evaluation seed of
/// the run that made the entry).
const VERIFY_SALT: u64 = 0x7665_7269_6679_2121;

/// How Rewind runs on each operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindConfig {
    /// Evaluations per operator, the strong kernel's included (20 in the
    /// method's reference setting).
    pub budget: u32,
    /// The proposer's seed, recorded in every entry's evidence (the
    /// evaluations' inputs and noise come from the run's pipeline seed).
    pub seed: u64,
    /// Most removals kept in one operator's chain.
    pub max_chain: u32,
    /// Creation time written into entries (Unix ms); None: the clock.
    /// Entries' content hashes (and so the bank's digest) never depend on
    /// it.
    pub created_ms: Option<i64>,
}

impl Default for RewindConfig {
    fn default() -> RewindConfig {
        RewindConfig {
            budget: 20,
            seed: 0,
            max_chain: 11,
            created_ms: None,
        }
    }
}

/// A kept removal and the entry made from it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptRemoval {
    /// The entry's id in the bank.
    pub id: EntryId,
    /// False when the bank already held an entry with the same content
    /// (an earlier Rewind of the same operator).
    pub new: bool,
    /// The motif removed (`other` when the proposer named none).
    pub motif: String,
    /// The removal, in words.
    pub summary: String,
    /// The degraded kernel's median latency, µs.
    pub slow_us: f64,
    /// The kernel it was degraded from, µs.
    pub fast_us: f64,
    /// The acceptance rule's decision (fast kernel over slow one).
    pub reason: String,
    /// Charged evaluations of the operator when it was kept (its
    /// confirmation included).
    pub at_evaluation: u32,
    /// The confirming second comparison; None when measurement noise is
    /// off (nothing to confirm).
    pub confirmation: Option<Confirmation>,
}

/// The second, independent comparison that confirmed a kept removal.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    /// The slow kernel's re-measured median latency, µs.
    pub slow_us: f64,
    /// The fast kernel's re-measured median latency, µs.
    pub fast_us: f64,
    /// The acceptance rule's decision on the re-measurements.
    pub reason: String,
}

impl KeptRemoval {
    /// slow / fast.
    pub fn slowdown(&self) -> f64 {
        self.slow_us / self.fast_us
    }
}

/// What Rewind did on one operator.
#[derive(Debug, Clone, PartialEq)]
pub struct RewindOutcome {
    /// The operator.
    pub op: String,
    /// Its level.
    pub level: u8,
    /// The strong kernel's median latency, when it was correct.
    pub strong_us: Option<f64>,
    /// Kept removals in chain order, with their entries.
    pub kept: Vec<KeptRemoval>,
    /// Every attempt.
    pub log: Vec<LogEntry>,
    /// Evaluations charged.
    pub spent: u32,
    /// The operator's Rewind budget.
    pub budget: u32,
    /// Why the chain ended.
    pub stop: String,
}

/// Rewinds one operator (module docs) and stores the entries in `bank`.
pub fn rewind_operator(
    ctx: &RunContext<'_>,
    pkg: &OpPackage,
    proposer: &mut dyn Proposer,
    distiller: &mut dyn Distiller,
    bank: &Bank,
    cfg: &RewindConfig,
) -> Result<RewindOutcome, AgentError> {
    rewind_operator_with(ctx, pkg, proposer, distiller, bank, cfg, &mut |_| {})
}

/// [`rewind_operator`], calling `on_attempt` with every settled attempt
/// (progress display).
pub fn rewind_operator_with(
    ctx: &RunContext<'_>,
    pkg: &OpPackage,
    proposer: &mut dyn Proposer,
    distiller: &mut dyn Distiller,
    bank: &Bank,
    cfg: &RewindConfig,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<RewindOutcome, AgentError> {
    let mut session = OpSession::open(
        ctx,
        pkg,
        BudgetConfig {
            rewind: cfg.budget,
            online: 0,
        },
    )?;
    let op = pkg.name().to_string();
    let mut outcome = RewindOutcome {
        op: op.clone(),
        level: pkg.spec.level,
        strong_us: None,
        kept: Vec::new(),
        log: Vec::new(),
        spent: 0,
        budget: cfg.budget,
        stop: String::new(),
    };
    let finish = |session: &OpSession<'_>, mut outcome: RewindOutcome, stop: String| {
        outcome.log = session.log().to_vec();
        outcome.spent = session.spent(Stage::Rewind);
        outcome.stop = stop;
        outcome
    };
    if session.remaining(Stage::Rewind) == 0 {
        return Ok(finish(&session, outcome, "no budget".into()));
    }
    let strong = Sources::load(&pkg.dir)?.with_chip(crate::tune::chip_limits(&session));
    let first = session.evaluate(
        Phase::Rewind,
        &strong,
        Action {
            proposer: proposer.name().to_string(),
            motif: None,
            summary: "the strong kernel as given".into(),
            entries: Vec::new(),
        },
    )?;
    if !first.is_correct() {
        let reason = format!(
            "the strong kernel is not correct ({}): nothing to rewind",
            first.verdict().label()
        );
        session.settle_last(false, reason.clone());
        notify(&session, on_attempt);
        return Ok(finish(&session, outcome, reason));
    }
    session.settle_last(true, "the strong kernel starts the chain");
    notify(&session, on_attempt);
    outcome.strong_us = first.latency_us();

    let mut current = first;
    // An independent re-measurement of `current` (for confirmations).
    let mut current_again: Option<Trial> = None;
    let mut removed: Vec<String> = Vec::new();
    let mut feedback = Feedback::default();
    let stop = 'chain: loop {
        if outcome.kept.len() >= cfg.max_chain as usize {
            break format!("{} removals kept (max chain)", outcome.kept.len());
        }
        if session.remaining(Stage::Rewind) == 0 {
            break "budget spent".to_string();
        }
        let mut why = None;
        let Some(proposals) = ProposeError::stage_ending(
            proposer.removals(&RemovalRequest {
                current: &current.sources,
                op: &op,
                removed: &removed,
                feedback: &feedback,
            }),
            &mut why,
        )?
        else {
            break why.unwrap_or_default();
        };
        if proposals.is_empty() {
            break "no removal left to try".to_string();
        }
        let mut kept_one = false;
        for proposal in proposals {
            if session.remaining(Stage::Rewind) == 0 {
                break 'chain "budget spent".to_string();
            }
            let action = proposal.action;
            let sources = match proposal.candidate {
                Ok(sources) => sources,
                Err(refused) => {
                    session.charge_failed_proposal(Phase::Rewind, action.clone(), &refused)?;
                    notify(&session, on_attempt);
                    feedback
                        .attempts
                        .push((action, "no_edit".into(), refused.reason));
                    continue;
                }
            };
            let trial = session.evaluate(Phase::Rewind, &sources, action.clone())?;
            if !trial.is_correct() {
                let reason = format!(
                    "{}: a removal must keep the kernel correct{}",
                    trial.verdict().label(),
                    failure_detail(trial.verdict())
                );
                settle(&mut session, &mut feedback, &action, &trial, false, reason);
                notify(&session, on_attempt);
                continue;
            }
            let decision = session.faster(&current, &trial);
            if !decision.faster {
                let reason = format!("not slower beyond noise: {}", decision.reason);
                settle(&mut session, &mut feedback, &action, &trial, false, reason);
                notify(&session, on_attempt);
                continue;
            }
            // Passed once: confirm on independent re-measurements.
            let first_index = session.log().len() - 1;
            let confirm = if ctx.pipeline.deterministic {
                Confirm::Skipped
            } else {
                confirm(&mut session, &current, &mut current_again, &trial, &action)?
            };
            let again = match confirm {
                Confirm::Skipped => None,
                Confirm::Confirmed(again) => Some(again),
                Confirm::Rejected { verdict, reason } => {
                    let reason = format!(
                        "slower beyond noise once ({}), but {reason}",
                        decision.reason
                    );
                    session.settle_at(first_index, false, reason.clone());
                    feedback.attempts.push((action.clone(), verdict, reason));
                    notify_from(&session, first_index, on_attempt);
                    continue;
                }
            };
            let entry = match distil(
                ctx,
                pkg,
                distiller,
                cfg,
                &action,
                &trial,
                &current,
                &decision,
                again.as_deref(),
            ) {
                Ok(entry) => entry,
                // The distiller cannot write this operator's entry (its
                // prompt does not fit the model): Rewind ends here.
                Err(AgentError::Propose(e)) if e.ends_stage => {
                    break 'chain format!("the distiller cannot go on here: {e}");
                }
                Err(e) => return Err(e),
            };
            let inserted = bank.insert(&entry)?;
            let (slow_us, fast_us) = (
                entry.slow_us.unwrap_or(f64::NAN),
                entry.fast_us.unwrap_or(f64::NAN),
            );
            let confirmed = again.as_deref().map_or_else(String::new, |a| {
                format!(
                    "; confirmed: {:.3} us vs {:.3} us",
                    a.slow.latency_us().unwrap_or(f64::NAN),
                    a.fast.latency_us().unwrap_or(f64::NAN)
                )
            });
            let reason = format!(
                "kept: {slow_us:.3} us vs {fast_us:.3} us ({:.3}x slower){confirmed}, entry {}{}",
                slow_us / fast_us,
                inserted.id(),
                if matches!(inserted, Inserted::Duplicate(_)) {
                    " (already in the bank)"
                } else {
                    ""
                }
            );
            session.settle_at(first_index, true, reason.clone());
            feedback
                .attempts
                .push((action.clone(), trial.verdict().kind().to_string(), reason));
            notify_from(&session, first_index, on_attempt);
            outcome.kept.push(KeptRemoval {
                id: inserted.id(),
                new: matches!(inserted, Inserted::New(_)),
                motif: entry.motif.clone(),
                summary: action.summary.clone(),
                slow_us,
                fast_us,
                reason: decision.reason.clone(),
                at_evaluation: session.spent(Stage::Rewind),
                confirmation: again.as_deref().map(|a| Confirmation {
                    slow_us: a.slow.latency_us().unwrap_or(f64::NAN),
                    fast_us: a.fast.latency_us().unwrap_or(f64::NAN),
                    reason: a.decision.reason.clone(),
                }),
            });
            if let Some(tag) = &action.motif {
                removed.push(tag.clone());
            }
            // The slow kernel's re-measurement is the next chain link's
            // independent measurement of its fast side.
            current_again = again.map(|a| a.slow);
            current = trial;
            kept_one = true;
            break;
        }
        if !kept_one {
            break "no proposed removal slowed the kernel beyond noise".to_string();
        }
    };
    Ok(finish(&session, outcome, stop))
}

/// Rewinds every operator in turn into `bank`, each with its own budget.
/// `on_attempt` sees every settled attempt of every operator.
pub fn rewind_all(
    ctx: &RunContext<'_>,
    pkgs: &[OpPackage],
    proposer: &mut dyn Proposer,
    distiller: &mut dyn Distiller,
    bank: &Bank,
    cfg: &RewindConfig,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<Vec<RewindOutcome>, AgentError> {
    pkgs.iter()
        .map(|pkg| rewind_operator_with(ctx, pkg, proposer, distiller, bank, cfg, on_attempt))
        .collect()
}

/// What `ascendopt rewind` does after the chains ([`rewind_into`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewindFinish {
    /// Re-evaluate every new entry on fresh seeds ([`verify_entry`]).
    pub verify: bool,
    /// Freeze the bank afterwards (it takes no more entries).
    pub freeze: bool,
}

/// What [`rewind_into`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewound {
    /// One outcome per operator, in order.
    pub outcomes: Vec<RewindOutcome>,
    /// Per operator, the verification of each new entry (with `verify`),
    /// in the order of its kept removals.
    pub verified: Vec<Vec<(KeptRemoval, Verification)>>,
}

/// One `ascendopt rewind` in `ctx`'s run: rewinds every operator in turn
/// into `bank` ([`rewind_operator_with`]; `on_operator` sees each
/// finished one), marks the run finished, then verifies the new entries
/// and freezes the bank as `finish` asks. An error names the operator.
#[allow(clippy::too_many_arguments)]
pub fn rewind_into(
    ctx: &RunContext<'_>,
    pkgs: &[OpPackage],
    proposer: &mut dyn Proposer,
    distiller: &mut dyn Distiller,
    bank: &Bank,
    cfg: &RewindConfig,
    finish: RewindFinish,
    on_attempt: &mut dyn FnMut(&LogEntry),
    on_operator: &mut dyn FnMut(&RewindOutcome),
) -> Result<Rewound, AgentError> {
    let mut outcomes = Vec::new();
    for pkg in pkgs {
        let outcome = rewind_operator_with(ctx, pkg, proposer, distiller, bank, cfg, on_attempt)
            .map_err(|e| AgentError::Operator {
                doing: "rewinding",
                op: pkg.name().to_string(),
                source: Box::new(e),
            })?;
        on_operator(&outcome);
        outcomes.push(outcome);
    }
    ctx.store
        .set_run_status(ctx.run, ascendopt_harness::store::RunStatus::Finished)?;
    let mut verified = vec![Vec::new(); outcomes.len()];
    if finish.verify {
        for (i, (pkg, outcome)) in pkgs.iter().zip(&outcomes).enumerate() {
            for kept in outcome.kept.iter().filter(|k| k.new) {
                let stored = bank.show(kept.id)?;
                verified[i].push((kept.clone(), verify_entry(ctx, pkg, &stored.entry)?));
            }
        }
    }
    if finish.freeze {
        bank.freeze()?;
    }
    Ok(Rewound { outcomes, verified })
}

/// The first line of a runtime error's message, in parentheses (the
/// proposer tells a resource failure, e.g. `out of memory`, from a wrong
/// edit by it); empty for other verdicts.
fn failure_detail(verdict: &Verdict) -> String {
    match verdict {
        Verdict::RuntimeError { message, .. } => {
            let line = message.lines().next().unwrap_or("").trim();
            let short: String = line.chars().take(160).collect();
            if short.is_empty() {
                String::new()
            } else {
                format!(" ({short})")
            }
        }
        _ => String::new(),
    }
}

fn notify(session: &OpSession<'_>, on_attempt: &mut dyn FnMut(&LogEntry)) {
    if let Some(last) = session.log().last() {
        on_attempt(last);
    }
}

/// Reports log entries `from..` (an attempt and its confirmation), once
/// all are settled.
fn notify_from(session: &OpSession<'_>, from: usize, on_attempt: &mut dyn FnMut(&LogEntry)) {
    for entry in session.log().iter().skip(from) {
        on_attempt(entry);
    }
}

/// The re-measurements that confirmed a removal.
struct Again {
    /// The slow candidate, evaluated a second time.
    slow: Trial,
    /// The fast (current) kernel, measured independently of the first
    /// comparison.
    fast: Trial,
    /// The rule on the two re-measurements.
    decision: Decision,
}

/// What the confirmation of a removal found.
enum Confirm {
    /// No measurement noise: nothing to confirm.
    Skipped,
    /// Slower beyond noise again.
    Confirmed(Box<Again>),
    /// Not confirmed: the verdict kind of the slow candidate's second
    /// evaluation (or `correct` when it was the comparison that failed)
    /// and why.
    Rejected {
        /// Verdict kind for the proposer's feedback.
        verdict: String,
        /// Why, in words.
        reason: String,
    },
}

/// Evaluations a confirmation needs: the slow candidate again, plus the
/// fast kernel when it has no independent re-measurement yet.
fn confirmation_cost(current_again: &Option<Trial>) -> u32 {
    1 + u32::from(current_again.is_none())
}

/// Re-measures the fast kernel (unless `current_again` holds an
/// independent measurement of it already) and the slow candidate, both
/// charged, and applies the rule again. Every re-measurement is logged
/// and settled (never accepted: the candidate's own entry carries the
/// outcome).
fn confirm(
    session: &mut OpSession<'_>,
    current: &Trial,
    current_again: &mut Option<Trial>,
    trial: &Trial,
    action: &Action,
) -> Result<Confirm, AgentError> {
    let need = confirmation_cost(current_again);
    let left = session.remaining(Stage::Rewind);
    if left < need {
        return Ok(Confirm::Rejected {
            verdict: "correct".into(),
            reason: format!(
                "its confirmation needs {need} more evaluation{} and {left} remain{}",
                if need == 1 { "" } else { "s" },
                if left == 1 { "s" } else { "" }
            ),
        });
    }
    let remeasure_action = |what: &str| Action {
        proposer: action.proposer.clone(),
        motif: None,
        summary: format!("confirm: re-measure {what} of `{}`", action.summary),
        entries: Vec::new(),
    };
    let fast = match current_again.take() {
        Some(again) => again,
        None => {
            let again = session.remeasure_or_replay(
                Phase::Rewind,
                current,
                remeasure_action("the fast kernel"),
            )?;
            let reason = format!(
                "confirmation: the fast kernel measured again ({})",
                again.verdict().label()
            );
            session.settle_last(false, reason);
            again
        }
    };
    if !fast.is_correct() {
        // The current kernel failed on fresh inputs: no confirmation, and
        // no re-measurement of it to reuse.
        return Ok(Confirm::Rejected {
            verdict: "correct".into(),
            reason: format!(
                "the fast kernel's re-measurement was not correct ({})",
                fast.verdict().label()
            ),
        });
    }
    let slow = session.remeasure_or_replay(
        Phase::Rewind,
        trial,
        remeasure_action("the slow candidate"),
    )?;
    if !slow.is_correct() {
        let reason = format!(
            "its second evaluation was not correct ({})",
            slow.verdict().label()
        );
        session.settle_last(false, format!("confirmation: {reason}"));
        *current_again = Some(fast);
        return Ok(Confirm::Rejected {
            verdict: slow.verdict().kind().to_string(),
            reason,
        });
    }
    let decision = session.faster(&fast, &slow);
    if !decision.faster {
        let reason = format!("not confirmed: {}", decision.reason);
        session.settle_last(false, format!("confirmation: {reason}"));
        *current_again = Some(fast);
        return Ok(Confirm::Rejected {
            verdict: "correct".into(),
            reason,
        });
    }
    session.settle_last(
        false,
        format!("confirmation: slower again: {}", decision.reason),
    );
    Ok(Confirm::Confirmed(Box::new(Again {
        slow,
        fast,
        decision,
    })))
}

fn settle(
    session: &mut OpSession<'_>,
    feedback: &mut Feedback,
    action: &Action,
    trial: &Trial,
    accepted: bool,
    reason: String,
) {
    session.settle_last(accepted, reason.clone());
    feedback
        .attempts
        .push((action.clone(), trial.verdict().kind().to_string(), reason));
}

/// The entry of a kept removal: `slow` is the degraded kernel, `fast` the
/// one it was degraded from.
#[allow(clippy::too_many_arguments)]
fn distil(
    ctx: &RunContext<'_>,
    pkg: &OpPackage,
    distiller: &mut dyn Distiller,
    cfg: &RewindConfig,
    action: &Action,
    slow: &Trial,
    fast: &Trial,
    decision: &Decision,
    again: Option<&Again>,
) -> Result<Entry, AgentError> {
    let op = pkg.name();
    let diff = ascendopt_motif::diff(&slow.sources, &fast.sources);
    let moved = match (slow.profile(), fast.profile()) {
        (Some(s), Some(f)) => profile_moved(s, f, MOVED_MIN_RELATIVE),
        _ => Default::default(),
    };
    let moved_list: Vec<(String, f64, f64)> = moved
        .iter()
        .map(|(name, m)| (name.clone(), m.before, m.after))
        .collect();
    let slow_us = slow.latency_us().unwrap_or(f64::NAN);
    let fast_us = fast.latency_us().unwrap_or(f64::NAN);
    let text = distiller.distill(&DistillRequest {
        op,
        motif: action.motif.as_deref(),
        diff: &diff,
        slow_us,
        fast_us,
        moved: &moved_list,
    })?;
    let tag = action.motif.clone().unwrap_or_else(|| "other".into());
    let family = family_of(&tag)
        .map(str::to_string)
        .or_else(|| ascendopt_motif::by_tag(&tag).map(|m| format!("kernel.{}", m.family())))
        .unwrap_or_else(|| "kernel.other".into());
    let signature = slow
        .profile()
        .and_then(|p| ProfileSignature::from_profile(p).ok());
    let eval_index = |t: &Trial| {
        t.evaluated
            .budget_index
            .map_or_else(|| "cached".to_string(), |i| i.to_string())
    };
    let mut evidence = vec![
        format!("run_store:{}", ctx.store.path().display()),
        format!("run:{}", ctx.run),
        format!("op:{op}"),
        format!("package:{}", pkg.dir.display()),
        format!("removal:{}", action.summary),
        format!("slow_source:{}", slow.evaluated.source_hash.as_str()),
        format!("fast_source:{}", fast.evaluated.source_hash.as_str()),
        format!("slow_eval:{}", eval_index(slow)),
        format!("fast_eval:{}", eval_index(fast)),
        format!("slow_seed:{}", slow.evaluated.seed),
        format!("fast_seed:{}", fast.evaluated.seed),
        format!("slow_us:{slow_us:.4}"),
        format!("fast_us:{fast_us:.4}"),
        format!("pipeline_seed:{}", ctx.pipeline.seed),
        format!("proposer_seed:{}", cfg.seed),
        format!("repeats:{}", ctx.pipeline.repeats),
        format!("deterministic:{}", ctx.pipeline.deterministic),
        format!("decision:{}", decision.reason),
    ];
    match again {
        None => evidence.push(
            "confirm:skipped (no measurement noise: a re-measurement repeats the same clean \
             duration of the same trace)"
                .to_string(),
        ),
        Some(a) => {
            let us = |t: &Trial| format!("{:.4}", t.latency_us().unwrap_or(f64::NAN));
            evidence.extend([
                "confirm:re-measured slow and fast kernels, slower beyond noise again".to_string(),
                format!("confirm_slow_eval:{}", eval_index(&a.slow)),
                format!("confirm_fast_eval:{}", eval_index(&a.fast)),
                format!("confirm_slow_seed:{}", a.slow.evaluated.seed),
                format!("confirm_fast_seed:{}", a.fast.evaluated.seed),
                format!("confirm_slow_us:{}", us(&a.slow)),
                format!("confirm_fast_us:{}", us(&a.fast)),
                format!("confirm_decision:{}", a.decision.reason),
            ]);
        }
    }
    let created_ms = cfg.created_ms.unwrap_or_else(now_ms);
    Ok(Entry {
        title: text.title,
        bottleneck: text.bottleneck,
        applicability: text.applicability,
        expected_effect: text.expected_effect,
        diff,
        motif: tag,
        family,
        source: SourceOp {
            op: op.to_string(),
            level: (1..=3).contains(&pkg.spec.level).then_some(pkg.spec.level),
        },
        slow_us: Some(slow_us),
        fast_us: Some(fast_us),
        profile_moved: moved,
        signature,
        keywords: text.keywords,
        provenance: Provenance {
            created_ms,
            origin: Origin::Rewind,
            evidence,
        },
    })
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The value of evidence item `key:` of an entry.
pub fn evidence<'e>(entry: &'e Entry, key: &str) -> Option<&'e str> {
    entry
        .provenance
        .evidence
        .iter()
        .find_map(|item| item.strip_prefix(key)?.strip_prefix(':'))
}

/// The outcome of re-evaluating an entry's slow and fast kernels.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    /// Whether the fast kernel is again faster than the slow one beyond
    /// noise, both correct.
    pub reproduced: bool,
    /// The slow kernel's verdict label.
    pub slow_verdict: String,
    /// The fast kernel's verdict label.
    pub fast_verdict: String,
    /// Slow kernel's median latency now, when correct.
    pub slow_us: Option<f64>,
    /// Fast kernel's median latency now, when correct.
    pub fast_us: Option<f64>,
    /// The seeds used (slow, fast): neither is a seed of the original run.
    pub seeds: (u64, u64),
    /// Why reproduced or not.
    pub reason: String,
}

impl Verification {
    fn failed(reason: String) -> Verification {
        Verification {
            reproduced: false,
            slow_verdict: String::new(),
            fast_verdict: String::new(),
            slow_us: None,
            fast_us: None,
            seeds: (0, 0),
            reason,
        }
    }
}

/// Re-evaluates a Rewind entry's slow and fast kernels and checks the
/// slowdown again: both kernels are rebuilt from the run store of
/// `ctx` (source hashes in the entry's evidence) on top of `base` (the
/// operator's package: op.toml, cases), written under
/// `<ctx.workdir>/verify/`, and evaluated with
/// [`pipeline::evaluate_package`] on fresh seeds: no store cache, no
/// budget. Missing evidence or sources is a failed verification, not an
/// error; errors are the device's or the store's.
pub fn verify_entry(
    ctx: &RunContext<'_>,
    base: &OpPackage,
    entry: &Entry,
) -> Result<Verification, AgentError> {
    let mut kernels = Vec::new();
    for key in ["slow_source", "fast_source"] {
        let Some(hash) = evidence(entry, key).and_then(SourceHash::from_hex) else {
            return Ok(Verification::failed(format!(
                "the entry has no {key} evidence"
            )));
        };
        let Some(text) = ctx.store.get_source(&hash)? else {
            return Ok(Verification::failed(format!(
                "{key} {} is not in the run store {}",
                hash.as_str(),
                ctx.store.path().display()
            )));
        };
        let dir = ctx
            .workdir
            .join("verify")
            .join(base.name())
            .join(&hash.as_str()[..16]);
        let package = rebuild(base, &text, &dir)?;
        let again = pipeline::candidate_source(&package)?;
        if SourceHash::of(&again) != hash {
            return Ok(Verification::failed(format!(
                "the {key} rebuilt in {} does not hash to {}",
                dir.display(),
                hash.as_str()
            )));
        }
        kernels.push(package);
    }
    // Fresh seeds per entry: salted, and mixed with the slow kernel's hash.
    let mix = evidence(entry, "slow_source")
        .and_then(|h| h.get(..16))
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or(0);
    let seed = |k: u32| {
        evaluation_seed(
            ctx.pipeline.seed ^ VERIFY_SALT ^ mix,
            base.name(),
            Stage::Rewind,
            k,
        )
    };
    let seeds = (seed(0), seed(1));
    let (slow, _) = evaluate_package(ctx.device, &kernels[0], seeds.0, &ctx.pipeline)?;
    let (fast, _) = evaluate_package(ctx.device, &kernels[1], seeds.1, &ctx.pipeline)?;
    let samples = |v: &Verdict| match v {
        Verdict::Correct { samples_us, .. } => samples_us.clone(),
        _ => Vec::new(),
    };
    let mut out = Verification {
        reproduced: false,
        slow_verdict: slow.label(),
        fast_verdict: fast.label(),
        slow_us: slow.latency().map(|l| l.median_us),
        fast_us: fast.latency().map(|l| l.median_us),
        seeds,
        reason: String::new(),
    };
    if !slow.is_success() || !fast.is_success() {
        out.reason = format!(
            "not both correct: slow {}, fast {}",
            out.slow_verdict, out.fast_verdict
        );
        return Ok(out);
    }
    let decision = compare::faster(&samples(&fast), &samples(&slow), &ctx.compare);
    out.reproduced = decision.faster;
    out.reason = decision.reason;
    Ok(out)
}

/// Writes `base` with the files of a run-store source text (sections
/// `//== <relative path> ==`) into `dir` and loads it.
fn rebuild(base: &OpPackage, text: &str, dir: &Path) -> Result<OpPackage, AgentError> {
    let mut sources = Sources::load(&base.dir)?;
    for (path, body) in sections(text) {
        // Only the sections that are sources (the identity's list of the
        // package's other files is not).
        let _ = sources.set(&path, body);
    }
    let staging = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&staging);
    // Writes the base package (op.toml, cases, ...) and then the sources.
    sources.write_to(&staging)?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&staging, dir).map_err(|e| io(dir, e))?;
    OpPackage::load(dir, &ascendopt_golden::BUILTINS).map_err(|e| AgentError::Package {
        dir: dir.to_path_buf(),
        source: e.into(),
    })
}

/// The files of a run-store source text, in order.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        let header = line
            .trim_end_matches('\n')
            .strip_prefix("//== ")
            .and_then(|rest| rest.strip_suffix(" =="));
        match (header, out.last_mut()) {
            (Some(path), _) => out.push((path.to_string(), String::new())),
            (None, Some((_, body))) => body.push_str(line),
            (None, None) => {}
        }
    }
    out
}

fn io(path: &Path, e: std::io::Error) -> AgentError {
    AgentError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_texts_split_back_into_files() {
        let text = "//== op_host/a.cpp ==\nint a;\n//== op_kernel/b.cpp ==\nint b;\n\nint c;\n";
        assert_eq!(
            sections(text),
            [
                ("op_host/a.cpp".to_string(), "int a;\n".to_string()),
                (
                    "op_kernel/b.cpp".to_string(),
                    "int b;\n\nint c;\n".to_string()
                ),
            ]
        );
        assert!(sections("").is_empty());
    }

    #[test]
    fn evidence_items_are_found_by_key() {
        let mut e = ascendopt_bank::entry::Entry {
            title: "t".into(),
            bottleneck: "b".into(),
            applicability: ascendopt_bank::entry::Applicability {
                reuse_when: vec![],
                avoid_when: vec![],
            },
            expected_effect: String::new(),
            diff: String::new(),
            motif: "m".into(),
            family: "f".into(),
            source: SourceOp {
                op: "x".into(),
                level: None,
            },
            slow_us: None,
            fast_us: None,
            profile_moved: Default::default(),
            signature: None,
            keywords: vec![],
            provenance: Provenance {
                created_ms: 0,
                origin: Origin::Manual,
                evidence: vec!["slow_source:abc".into(), "slow_seed:7".into()],
            },
        };
        assert_eq!(evidence(&e, "slow_source"), Some("abc"));
        assert_eq!(evidence(&e, "slow_seed"), Some("7"));
        assert_eq!(evidence(&e, "slow"), None);
        e.provenance.evidence.clear();
        assert_eq!(evidence(&e, "slow_source"), None);
    }
}
