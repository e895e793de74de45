//! The benchmark's baselines at equal budget:
//!
//! - [`best_of_n`]: N independent samples from the *input* kernel, keep the
//!   best correct one. With the built-in proposer a sample is a random
//!   combination of applicable motif applications plus random knob values;
//!   with any other proposer (the LLM) a sample is one answer to a rewrite
//!   request on the input with no experience and no feedback (samples are
//!   independent by construction).
//! - [`coder_judge`]: a CudaForge-style loop over the LLM. Each round the
//!   judge reads the best kernel's profile and names one bottleneck and one
//!   fix (`{bottleneck, method, plan}`), or, after a failed attempt, the
//!   critical issue (`{critical_issue, why_it_matters, minimal_fix_hint}`);
//!   the coder implements it on the best-so-far kernel; a correct candidate
//!   faster beyond noise becomes the new best.
//!
//! Both spend the operator's online budget through [`OpSession`] (the
//! input's own measurement included), charge an answer with no applicable
//! edit like a compile error, and return an [`OpOutcome`] comparable with
//! the method's.

use ascendopt_agent::diagnose::Diagnosis;
use ascendopt_agent::features::code_features;
use ascendopt_agent::llm::{apply_answer, feedback_text, llm_error, profile_text};
use ascendopt_agent::outcome::{curve, roofline, OpOutcome, Step};
use ascendopt_agent::proposer::{Feedback, Proposal, Proposer, RewriteRequest};
use ascendopt_agent::rng::Rng;
use ascendopt_agent::session::{Action, LogEntry, OpSession, Phase, Trial};
use ascendopt_agent::AgentError;
use ascendopt_bank::signature::ProfileSignature;
use ascendopt_harness::store::Stage;
use ascendopt_llm::client::{LlmClient, Message};
use ascendopt_llm::json::first_object;
use ascendopt_llm::prompts::{self, show_files};
use ascendopt_motif::{registry, SiteState, Sources};
use std::collections::{BTreeMap, BTreeSet};

/// Evaluates the input; returns the outcome skeleton and the baseline
/// trial (None when the input is not correct: nothing to optimise).
fn start(
    session: &mut OpSession<'_>,
    method: &str,
    budget: u32,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<(OpOutcome, Sources, Option<Trial>), AgentError> {
    let input =
        Sources::load(&session.base().dir)?.with_chip(ascendopt_agent::tune::chip_limits(session));
    let baseline = session.evaluate(
        Phase::Baseline,
        &input,
        Action {
            proposer: "input".into(),
            motif: None,
            summary: "the input operator".into(),
            entries: Vec::new(),
        },
    )?;
    let outcome = OpOutcome {
        op: session.op().to_string(),
        level: session.base().spec.level,
        method: method.to_string(),
        baseline_us: baseline.latency_us(),
        final_us: baseline.latency_us(),
        speedup: 1.0,
        spent: 0,
        budget,
        curve: Vec::new(),
        steps: Vec::new(),
        log: Vec::new(),
        roofline_before: roofline(&baseline),
        roofline_after: roofline(&baseline),
        stops: Vec::new(),
        final_dir: Some(baseline.dir.clone()),
    };
    if baseline.is_correct() {
        session.settle_last(true, "the input: the first incumbent");
        notify(session, on_attempt);
        Ok((outcome, input, Some(baseline)))
    } else {
        let reason = format!("the input is not correct: {}", baseline.verdict().label());
        session.settle_last(false, reason);
        notify(session, on_attempt);
        Ok((outcome, input, None))
    }
}

fn notify(session: &OpSession<'_>, on_attempt: &mut dyn FnMut(&LogEntry)) {
    if let Some(e) = session.log().last() {
        on_attempt(e);
    }
}

fn finish(session: &OpSession<'_>, mut outcome: OpOutcome, best: Option<Trial>) -> OpOutcome {
    if let (Some(best), Some(base)) = (best, outcome.baseline_us) {
        outcome.final_us = best.latency_us();
        outcome.speedup = outcome
            .final_us
            .map_or(1.0, |f| if f > 0.0 { base / f } else { 1.0 });
        outcome.roofline_after = roofline(&best);
        outcome.final_dir = Some(best.dir.clone());
    }
    outcome.spent = session.spent(Stage::Online);
    outcome.log = session.log().to_vec();
    outcome.curve = curve(&outcome.log, outcome.baseline_us.unwrap_or(f64::NAN));
    outcome
}

/// Charged evaluations left for this method.
fn left(session: &OpSession<'_>, budget: u32) -> u32 {
    budget
        .saturating_sub(session.spent(Stage::Online))
        .min(session.remaining(Stage::Online))
}

/// One random built-in sample from `input`: random knob values, then each
/// applicable motif with probability 1/2 at a random `Absent` site.
fn random_sample(session: &OpSession<'_>, input: &Sources, rng: &mut Rng) -> (Sources, String) {
    let mut out = input.clone();
    let mut what: Vec<String> = Vec::new();
    let base = session.base();
    let space = &base.tiling;
    let knobs: Vec<_> = space.knobs().collect();
    if !knobs.is_empty() {
        for _ in 0..8 {
            let values: BTreeMap<String, i64> = knobs
                .iter()
                .map(|k| {
                    let c = k.candidates();
                    (
                        k.name.clone(),
                        c.get(rng.below(c.len())).copied().unwrap_or(k.value),
                    )
                })
                .collect();
            if let Ok(files) = space.render_with(&values) {
                for (path, text) in files {
                    // Rendered tiling files of the package's own sources.
                    let _ = out.set_at(&base.dir, &path, text);
                }
                what.push(
                    values
                        .iter()
                        .map(|(n, v)| format!("{n}={v}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                );
                break;
            }
        }
    }
    for motif in registry() {
        if !rng.coin() {
            continue;
        }
        let sites: Vec<_> = motif
            .detect(&out)
            .into_iter()
            .filter(|s| s.state == SiteState::Absent)
            .collect();
        if sites.is_empty() {
            continue;
        }
        let site = &sites[rng.below(sites.len())];
        if let Some(next) = motif.apply(&out, site) {
            what.push(format!("{} at {}:{}", motif.tag(), site.file, site.line));
            out = next;
        }
    }
    let summary = if what.is_empty() {
        "random sample: the input unchanged".to_string()
    } else {
        format!("random sample: {}", what.join(", "))
    };
    (out, summary)
}

/// Judges one proposal of a baseline: charges a failed one, evaluates a
/// candidate, accepts it when faster than `best` beyond noise. Returns the
/// verdict line for feedback.
fn judge_proposal(
    session: &mut OpSession<'_>,
    proposal: Proposal,
    best: &mut Trial,
    steps: &mut Vec<Step>,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<(String, String), AgentError> {
    let sources = match proposal.candidate {
        Ok(s) => s,
        Err(refused) => {
            session.charge_failed_proposal(Phase::Method, proposal.action, &refused)?;
            notify(session, on_attempt);
            let kind = if refused.outside {
                "rejected_edit"
            } else {
                "no_edit"
            };
            return Ok((kind.into(), refused.reason));
        }
    };
    let trial = session.evaluate(Phase::Method, &sources, proposal.action.clone())?;
    let verdict = trial.verdict().label();
    if !trial.is_correct() {
        let detail = verdict_detail(&trial);
        session.settle_last(false, format!("not correct: {verdict}"));
        notify(session, on_attempt);
        return Ok((verdict, detail));
    }
    let decision = session.accept(&trial, best);
    session.settle_last(decision.faster, decision.reason.clone());
    notify(session, on_attempt);
    if decision.faster {
        steps.push(Step {
            phase: Phase::Method,
            action: proposal.action,
            before_us: best.latency_us().unwrap_or(f64::NAN),
            after_us: trial.latency_us().unwrap_or(f64::NAN),
            reason: decision.reason.clone(),
            at_evaluation: session.spent(Stage::Online),
        });
        *best = trial;
    }
    Ok((verdict, decision.reason))
}

/// The verdict with its details (compile errors, mismatches), bounded.
fn verdict_detail(trial: &Trial) -> String {
    let text = serde_json::to_string(trial.verdict()).unwrap_or_else(|_| trial.verdict().label());
    text.chars().take(1500).collect()
}

/// Best-of-N (module docs): `budget` charged evaluations in all, the
/// input's included.
pub fn best_of_n(
    session: &mut OpSession<'_>,
    proposer: &mut dyn Proposer,
    budget: u32,
    seed: u64,
) -> Result<OpOutcome, AgentError> {
    best_of_n_with(session, proposer, budget, seed, &mut |_| {})
}

/// [`best_of_n`], calling `on_attempt` with every settled attempt.
pub fn best_of_n_with(
    session: &mut OpSession<'_>,
    proposer: &mut dyn Proposer,
    budget: u32,
    seed: u64,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<OpOutcome, AgentError> {
    let (mut outcome, input, baseline) = start(session, "bon", budget, on_attempt)?;
    let Some(baseline) = baseline else {
        return Ok(finish(session, outcome, None));
    };
    let mut best = baseline.clone();
    let mut steps = Vec::new();
    let mut rng = Rng(seed ^ 0x626f_6e5f_7361_6d70);
    let builtin = proposer.name() == "builtin";
    let mut seen: BTreeSet<Vec<(String, String)>> = BTreeSet::new();
    seen.insert(key(&input));
    let mut misses = 0u32;
    let diagnosis = Diagnosis {
        kind: "unknown".into(),
        text: "Optimise this kernel: find its main bottleneck and remove it.".into(),
        rule: "best-of-N sample: no diagnosis, no experience".into(),
        signature: baseline
            .profile()
            .and_then(|p| ProfileSignature::from_profile(p).ok()),
        code_features: code_features(&input),
        motifs: Vec::new(),
    };
    let feedback = Feedback::default();
    while left(session, budget) > 0 {
        let proposals: Vec<Proposal> = if builtin {
            let (sample, summary) = random_sample(session, &input, &mut rng);
            if !seen.insert(key(&sample)) {
                // The same sample again: no information, draw another.
                misses += 1;
                if misses > 64 {
                    break;
                }
                continue;
            }
            vec![Proposal {
                action: Action {
                    proposer: "random".into(),
                    motif: None,
                    summary,
                    entries: Vec::new(),
                },
                candidate: Ok(sample),
            }]
        } else {
            let got = proposer.rewrites(&RewriteRequest {
                current: &input,
                op: session.op(),
                diagnosis: &diagnosis,
                entries: &[],
                feedback: &feedback,
            })?;
            if got.is_empty() {
                break;
            }
            got
        };
        for proposal in proposals {
            if left(session, budget) == 0 {
                break;
            }
            judge_proposal(session, proposal, &mut best, &mut steps, on_attempt)?;
        }
    }
    outcome.steps = steps;
    Ok(finish(session, outcome, Some(best)))
}

fn key(s: &Sources) -> Vec<(String, String)> {
    s.files()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

/// The coder-plus-judge loop (module docs): rounds until `budget` charged
/// evaluations (the input's included) are spent.
pub fn coder_judge(
    session: &mut OpSession<'_>,
    llm: &LlmClient,
    budget: u32,
) -> Result<OpOutcome, AgentError> {
    coder_judge_with(session, llm, budget, &mut |_| {})
}

/// [`coder_judge`], calling `on_attempt` with every settled attempt.
pub fn coder_judge_with(
    session: &mut OpSession<'_>,
    llm: &LlmClient,
    budget: u32,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<OpOutcome, AgentError> {
    let (mut outcome, _input, baseline) = start(session, "judge", budget, on_attempt)?;
    let Some(baseline) = baseline else {
        return Ok(finish(session, outcome, None));
    };
    let mut best = baseline;
    let mut steps = Vec::new();
    let mut feedback = Feedback::default();
    let mut last: Option<(bool, String)> = None; // (failed, text)
    let system = prompts::SYSTEM.render(&[]).map_err(llm_error)?;
    let mut round = 0u32;
    while left(session, budget) > 0 {
        round += 1;
        let op = session.op().to_string();
        let files = show_files(best.sources.files());
        let profile = profile_text(best.profile());
        let (situation, last_text) = match &last {
            None => (
                "first round: no attempt yet".to_string(),
                "none".to_string(),
            ),
            Some((true, t)) => ("the last attempt FAILED".to_string(), t.clone()),
            Some((false, t)) => (
                "the last attempt was correct (answer with bottleneck/method/plan)".to_string(),
                t.clone(),
            ),
        };
        let round_text = round.to_string();
        let judge_prompt = prompts::JUDGE
            .render(&[
                ("op", &op),
                ("round", &round_text),
                ("situation", &situation),
                ("profile", &profile),
                ("last_outcome", &last_text),
                ("files", &files),
            ])
            .map_err(llm_error)?;
        let advice = llm
            .chat(
                "judge",
                &op,
                &[Message::system(system.clone()), Message::user(judge_prompt)],
            )
            .map_err(llm_error)?
            .content;
        let advice_json = match first_object(&advice) {
            Ok(v) => serde_json::to_string_pretty(&v).unwrap_or(advice.clone()),
            Err(_) => advice.trim().to_string(),
        };
        let fb = feedback_text(&feedback, 12);
        let coder_prompt = prompts::CODER
            .render(&[
                ("op", &op),
                ("advice", &advice_json),
                ("feedback", &fb),
                ("files", &files),
            ])
            .map_err(llm_error)?;
        let answer = llm
            .chat(
                "coder",
                &op,
                &[Message::system(system.clone()), Message::user(coder_prompt)],
            )
            .map_err(llm_error)?
            .content;
        let summary = answer
            .lines()
            .find_map(|l| l.trim().strip_prefix("SUMMARY:"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| format!("coder round {round}"));
        let action = Action {
            proposer: "llm".into(),
            motif: None,
            summary,
            entries: Vec::new(),
        };
        let candidate = apply_answer(&best.sources, &answer).map(|(s, _)| s);
        let (verdict, reason) = judge_proposal(
            session,
            Proposal {
                action: action.clone(),
                candidate,
            },
            &mut best,
            &mut steps,
            on_attempt,
        )?;
        let failed = !verdict.starts_with("correct");
        last = Some((failed, format!("{verdict}: {reason}")));
        feedback.attempts.push((action, verdict, reason));
    }
    outcome.steps = steps;
    Ok(finish(session, outcome, Some(best)))
}
