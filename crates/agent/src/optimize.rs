//! Online optimisation of one operator: Stage I (kernel refinement) then
//! Stage II (tiling search) under one budget, and the ablation switches
//! of the method's Table 3.
//!
//! [`optimize_operator`] measures the input (Phase::Baseline), runs Stage I
//! ([`crate::refine`]) and/or Stage II ([`crate::tune`]) as the method
//! says, and never ends slower than the input: every step is accepted only
//! when faster beyond noise, and when nothing wins the input stays.
//! [`write_output`] writes the optimised package, the diff, the accepted
//! steps with their evidence, and before/after profiles and traces.
//!
//! Budget split (`OptimizeConfig::budget` includes the baseline): with
//! both stages, Stage I gets `stage1_budget` evaluations when given, else
//! it runs until it stagnates (`stagnation` attempts in a row without an
//! accepted rewrite) or proposes nothing new, keeping at least a quarter of
//! the budget for Stage II; Stage II gets the rest. Single-stage methods
//! give their stage the whole budget.

use crate::attempts::{self, Tried};
use crate::diagnose::Diagnoser;
use crate::outcome::{curve, roofline, OpOutcome, StageStop, Step};
use crate::proposer::Proposer;
use crate::refine::{self, RefineConfig};
use crate::session::{Action, LogEntry, OpSession, Phase, RunContext};
use crate::tune::{self, TuneConfig};
use crate::AgentError;
use ascendopt_bank::retrieval::{Lexical, Retrieval};
use ascendopt_bank::store::Bank;
use ascendopt_device::msprof_csv;
use ascendopt_device::Device;
use ascendopt_device::Profile;
use ascendopt_harness::eval::{self, CaseSelector, CheckConfig};
use ascendopt_harness::fresh;
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_harness::pipeline::bench_case;
use ascendopt_harness::store::RunStatus;
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The variants of the method's Table 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Stage I with the bank, then Stage II.
    Full,
    /// Stage I with the bank only.
    Stage1,
    /// Stage I without experience (no retrieval) only.
    Stage1Noexp,
    /// Stage II (tiling search) only.
    Tiling,
}

impl Method {
    /// Every variant, in table order.
    pub const ALL: [Method; 4] = [
        Method::Full,
        Method::Stage1,
        Method::Stage1Noexp,
        Method::Tiling,
    ];

    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Full => "full",
            Method::Stage1 => "stage1",
            Method::Stage1Noexp => "stage1-noexp",
            Method::Tiling => "tiling",
        }
    }

    /// Parses a name.
    pub fn parse(text: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// How one operator is optimised.
#[derive(Debug, Clone)]
pub struct OptimizeConfig {
    /// Which stages, with or without experience.
    pub method: Method,
    /// Online evaluations for this operator (the baseline measurement
    /// included).
    pub budget: u32,
    /// Evaluations reserved for Stage I when both stages run; None: Stage
    /// I moves on to Stage II when it stagnates.
    pub stage1_budget: Option<u32>,
    /// Entries retrieved per diagnosis.
    pub k: usize,
    /// Stage I stops after this many evaluations in a row without an
    /// accepted rewrite (when `stage1_budget` is None).
    pub stagnation: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// Stage II stops after this many attempts in a row without a new
    /// best candidate (None: it uses its whole share of the budget).
    pub patience: Option<u32>,
    /// How Stage I ranks the bank's entries: lexical
    /// ([`ascendopt_bank::retrieval::Lexical`], the default) or dense
    /// through an embeddings endpoint ([`crate::llm::DenseRetrieval`]).
    pub retrieval: Arc<dyn Retrieval>,
}

impl Default for OptimizeConfig {
    fn default() -> OptimizeConfig {
        OptimizeConfig {
            method: Method::Full,
            budget: 210,
            stage1_budget: None,
            k: ascendopt_bank::retrieve::DEFAULT_K,
            stagnation: 12,
            seed: 0,
            patience: None,
            retrieval: Arc::new(Lexical),
        }
    }
}

impl Method {
    /// Whether Stage I runs.
    pub fn stage1(self) -> bool {
        !matches!(self, Method::Tiling)
    }
    /// Whether Stage I queries the bank.
    pub fn uses_bank(self) -> bool {
        matches!(self, Method::Full | Method::Stage1)
    }
    /// Whether Stage II runs.
    pub fn stage2(self) -> bool {
        matches!(self, Method::Full | Method::Tiling)
    }
    /// The method that runs `stage1`/`stage2` with or without the bank
    /// (None when no stage is selected). Both stages without the bank is
    /// `Full` run with no bank (see [`optimize_operator`]).
    pub fn from_switches(stage1: bool, stage2: bool, retrieval: bool) -> Option<Method> {
        match (stage1, stage2, retrieval) {
            (true, true, _) => Some(Method::Full),
            (true, false, true) => Some(Method::Stage1),
            (true, false, false) => Some(Method::Stage1Noexp),
            (false, true, _) => Some(Method::Tiling),
            (false, false, _) => None,
        }
    }
}

/// Optimises the session's operator with `cfg.method`: measures the input,
/// runs the stages, keeps the incumbent when nothing wins. A method that
/// retrieves but gets no bank runs Stage I without experience (and says so
/// in the outcome's method: `full-noexp`, `stage1-noexp`).
pub fn optimize_operator(
    session: &mut OpSession<'_>,
    bank: Option<&Bank>,
    proposer: &mut dyn Proposer,
    diagnoser: &mut dyn Diagnoser,
    cfg: &OptimizeConfig,
) -> Result<OpOutcome, AgentError> {
    optimize_operator_with(session, bank, proposer, diagnoser, cfg, &mut |_| {})
}

/// What [`optimize_into`] did: the operator's outcome and what was
/// written.
#[derive(Debug, Clone)]
pub struct Optimized {
    /// Both stages' outcome.
    pub outcome: OpOutcome,
    /// The output folder's files and the re-check on fresh inputs.
    pub report: OutputReport,
}

/// One `ascendopt optimize` in `ctx`'s run: opens the operator's session
/// with `cfg.budget` online evaluations, optimises it
/// ([`optimize_operator_with`]), writes the output into `out_dir`
/// ([`write_output`], re-checked on inputs of `check_seed`) and marks the
/// run finished, or failed when the loop stops with an error.
#[allow(clippy::too_many_arguments)]
pub fn optimize_into(
    ctx: &RunContext<'_>,
    pkg: &OpPackage,
    bank: Option<&Bank>,
    proposer: &mut dyn Proposer,
    diagnoser: &mut dyn Diagnoser,
    cfg: &OptimizeConfig,
    out_dir: &Path,
    check_seed: u64,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<Optimized, AgentError> {
    let mut session = OpSession::open(
        ctx,
        pkg,
        BudgetConfig {
            rewind: 0,
            online: cfg.budget,
        },
    )?;
    let outcome =
        match optimize_operator_with(&mut session, bank, proposer, diagnoser, cfg, on_attempt) {
            Ok(o) => o,
            Err(e) => {
                ctx.store.set_run_status(ctx.run, RunStatus::Failed)?;
                return Err(e);
            }
        };
    let report = write_output(ctx.device, &outcome, pkg, out_dir, check_seed)?;
    ctx.store.set_run_status(ctx.run, RunStatus::Finished)?;
    Ok(Optimized { outcome, report })
}

/// [`optimize_operator`], calling `on_attempt` with every settled attempt
/// (progress display).
pub fn optimize_operator_with(
    session: &mut OpSession<'_>,
    bank: Option<&Bank>,
    proposer: &mut dyn Proposer,
    diagnoser: &mut dyn Diagnoser,
    cfg: &OptimizeConfig,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<OpOutcome, AgentError> {
    let base_dir = session.base().dir.clone();
    let input = Sources::load(&base_dir)?.with_chip(tune::chip_limits(session));
    let mut tried = Tried::new();
    tried.insert(&input);
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
    let level = session.base().spec.level;
    let mut outcome = OpOutcome {
        op: session.op().to_string(),
        level,
        method: match (cfg.method, bank.is_some()) {
            (Method::Full, false) => "full-noexp".to_string(),
            (Method::Stage1, false) => Method::Stage1Noexp.as_str().to_string(),
            (m, _) => m.as_str().to_string(),
        },
        baseline_us: baseline.latency_us(),
        final_us: baseline.latency_us(),
        speedup: 1.0,
        spent: 0,
        budget: cfg.budget,
        curve: Vec::new(),
        steps: Vec::new(),
        log: Vec::new(),
        roofline_before: roofline(&baseline),
        roofline_after: roofline(&baseline),
        final_dir: None,
        stops: Vec::new(),
    };
    let Some(baseline_us) = baseline.latency_us() else {
        attempts::settle(
            session,
            on_attempt,
            false,
            format!("the input is not correct: {}", baseline.verdict().label()),
        );
        outcome.spent = session.spent(ascendopt_harness::store::Stage::Online);
        outcome.log = session.log().to_vec();
        return Ok(outcome);
    };
    attempts::settle(session, on_attempt, true, "the input: the first incumbent");
    let rest = cfg.budget.saturating_sub(1);
    let mut incumbent = baseline.clone();
    let mut steps: Vec<Step> = Vec::new();
    let mut used = 0u32;
    let mut stops: Vec<StageStop> = Vec::new();
    // Rounds of Stage I then Stage II until the budget is spent or neither
    // stage has anything new to try: a new tiling can make a kernel rewrite
    // pay (and a new kernel a tiling), so a round that changed the
    // incumbent is followed by another.
    let mut round = 0u32;
    loop {
        round += 1;
        let left = rest.saturating_sub(used);
        // A resumed run replays its stored evaluations for free: the store
        // may hold the whole budget while this process has replayed only
        // part of it (the baseline is one of the stored ones).
        let online = ascendopt_harness::store::Stage::Online;
        let replay_pending = session.spent(online) > used.saturating_add(1);
        if left == 0 || (session.remaining(online) == 0 && !replay_pending) {
            break;
        }
        let before = incumbent.evaluated.source_hash.clone();
        let mut progress = false;
        let mut fresh = 0u32;
        let mut stage1_cut = false;
        if cfg.method.stage1() {
            let (allowance, stagnation) = if cfg.method.stage2() {
                match cfg.stage1_budget {
                    Some(n) if round == 1 => (n.min(left), None),
                    _ => (left - left / 4, Some(cfg.stagnation)),
                }
            } else {
                (left, None)
            };
            let r = refine::refine(
                session,
                bank,
                &*cfg.retrieval,
                proposer,
                diagnoser,
                incumbent,
                &RefineConfig {
                    max_attempts: allowance,
                    k: cfg.k,
                    use_bank: cfg.method.uses_bank(),
                    stagnation,
                },
                &mut tried,
                on_attempt,
            )?;
            used += r.attempts;
            fresh += r.attempts;
            progress |= !r.steps.is_empty();
            // Cut short with candidates left: another round may try them.
            stage1_cut = r.stopped.starts_with("stagnated");
            stops.push(StageStop {
                stage: Phase::Refine.as_str().to_string(),
                round,
                attempts: r.attempts,
                accepted: u32::try_from(r.steps.len()).unwrap_or(u32::MAX),
                reason: r.stopped.clone(),
                tried: r.tried.clone(),
                knobs: Vec::new(),
            });
            steps.extend(r.steps);
            incumbent = r.incumbent;
        }
        if cfg.method.stage2() {
            // Stage I cut short still has candidates: Stage II leaves it
            // half of what is left for the next round.
            let left = rest.saturating_sub(used);
            let left = if stage1_cut { left - left / 2 } else { left };
            let t = tune::tune(
                session,
                proposer,
                incumbent,
                &TuneConfig {
                    patience: cfg.patience,
                    ..TuneConfig::new(left, cfg.seed.wrapping_add(u64::from(round - 1)))
                },
                &mut tried,
                on_attempt,
            )?;
            used += t.attempts;
            fresh += t.attempts;
            progress |= !t.steps.is_empty();
            stops.push(StageStop {
                stage: Phase::Tune.as_str().to_string(),
                round,
                attempts: t.attempts,
                accepted: u32::try_from(t.steps.len()).unwrap_or(u32::MAX),
                reason: t.stopped.clone(),
                tried: t.tried.clone(),
                knobs: t.found.clone(),
            });
            steps.extend(t.steps);
            incumbent = t.incumbent;
        }
        let single_stage = !(cfg.method.stage1() && cfg.method.stage2());
        let changed = progress || incumbent.evaluated.source_hash != before;
        if single_stage || fresh == 0 || !(changed || stage1_cut) {
            break;
        }
    }
    // The found knobs back to plain literals: the same launch, answered by
    // the run store, and the output reads like the input.
    if let Some(plain) = restored(session, &incumbent, &mut tried, on_attempt)? {
        incumbent = plain;
    }
    // Never slower than the input.
    let final_trial = match incumbent.latency_us() {
        Some(l) if l <= baseline_us => incumbent,
        _ => baseline,
    };
    outcome.final_us = final_trial.latency_us();
    outcome.speedup = outcome
        .final_us
        .map_or(1.0, |f| if f > 0.0 { baseline_us / f } else { 1.0 });
    outcome.roofline_after = roofline(&final_trial);
    outcome.final_dir = Some(final_trial.dir.clone());
    outcome.steps = steps;
    outcome.stops = stops;
    outcome.spent = session.spent(ascendopt_harness::store::Stage::Online);
    outcome.log = session.log().to_vec();
    outcome.curve = curve(&outcome.log, baseline_us);
    Ok(outcome)
}

/// The incumbent with its found-knob markers taken out
/// ([`ascendopt_motif::knobfind::restore`]), when it has any and the plain form
/// judges the same (it launches the same kernel with the same tiling, so
/// the run store answers without charge).
fn restored(
    session: &mut OpSession<'_>,
    incumbent: &crate::session::Trial,
    tried: &mut Tried,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<Option<crate::session::Trial>, AgentError> {
    let plain = ascendopt_motif::knobfind::restore(&incumbent.sources);
    if plain == incumbent.sources || !incumbent.is_correct() {
        return Ok(None);
    }
    if session.remaining(ascendopt_harness::store::Stage::Online) == 0 && !session.seen(&plain)? {
        // Only the launch could answer it; without budget a miss would be
        // an error, so the marked form stays.
        let dir = session.materialise(&plain)?;
        let Ok(pkg) = OpPackage::load(&dir, &ascendopt_golden::BUILTINS) else {
            return Ok(None);
        };
        let device = session.context().device;
        let same = match device.build(&pkg) {
            Ok(a) => ascendopt_harness::pipeline::launch_key(device, &a, &pkg).is_some(),
            Err(_) => false,
        };
        if !same {
            return Ok(None);
        }
    }
    tried.insert(&plain);
    let trial = match session.evaluate(
        Phase::Tune,
        &plain,
        Action {
            proposer: "tune".into(),
            motif: None,
            summary: "found knobs back to plain literals (same launch)".into(),
            entries: Vec::new(),
        },
    ) {
        Ok(t) => t,
        Err(AgentError::Pipeline(ascendopt_harness::pipeline::PipelineError::Ledger(_))) => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let same = trial.is_correct() && trial.evaluated.budget_index.is_none();
    attempts::settle(
        session,
        on_attempt,
        false,
        if same {
            "the output with plain literals: the same launch as the incumbent"
        } else {
            "the plain form did not judge the same: the marked form stays"
        },
    );
    Ok(same.then_some(trial))
}

/// What [`write_output`] wrote and checked.
#[derive(Debug, Clone, Serialize)]
pub struct OutputReport {
    /// The optimised package folder.
    pub package: PathBuf,
    /// Every case of the output passed on fresh inputs.
    pub output_passed: bool,
    /// Failing cases of the output (name: verdict).
    pub failures: Vec<String>,
    /// Noise-free latency of the benchmark case, input, µs.
    pub before_us: Option<f64>,
    /// Noise-free latency of the benchmark case, output, µs.
    pub after_us: Option<f64>,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Profile of the benchmark case, input (noise-free).
    #[serde(skip)]
    pub before_profile: Option<Profile>,
    /// Profile of the benchmark case, output (noise-free).
    #[serde(skip)]
    pub after_profile: Option<Profile>,
}

fn io(path: &Path, e: std::io::Error) -> AgentError {
    AgentError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

fn write(path: &Path, text: &str, files: &mut Vec<PathBuf>) -> Result<(), AgentError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    std::fs::write(path, text).map_err(|e| io(path, e))?;
    files.push(path.to_path_buf());
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), AgentError> {
    ascendopt_op::package::copy_tree(from, to, &["build", "target"]).map_err(|(p, e)| io(&p, e))
}

fn load(dir: &Path) -> Result<OpPackage, AgentError> {
    OpPackage::load(dir, &ascendopt_golden::BUILTINS).map_err(|e| AgentError::Package {
        dir: dir.to_path_buf(),
        source: e.into(),
    })
}

/// Profile, Chrome trace and noise-free latency of a benchmark case.
type Measured = (Option<Profile>, Option<String>, Option<f64>);

/// Profile JSON, Chrome trace and noise-free latency of the benchmark case.
fn profile_and_trace(
    device: &dyn Device,
    pkg: &OpPackage,
    seed: u64,
) -> Result<Measured, AgentError> {
    let Some(case) = bench_case(pkg) else {
        return Ok((None, None, None));
    };
    let check = eval::check_op(
        device,
        pkg,
        &CheckConfig {
            case: Some(CaseSelector::Name(case.name.clone())),
            seed,
            profile: true,
            deterministic: true,
            timeline: true,
        },
    )
    .map_err(|e| AgentError::Package {
        dir: pkg.dir.clone(),
        source: e.into(),
    })?;
    let Some(c) = check.cases.first() else {
        return Ok((None, None, None));
    };
    let profile = match &c.profile {
        Some(Ok(p)) => Some(p.clone()),
        _ => None,
    };
    let latency = profile.as_ref().map(|p| p.task_duration_us);
    let trace = match &c.timeline {
        Some(Ok(t)) => Some(t.clone()),
        _ => None,
    };
    Ok((profile, trace, latency))
}

/// Writes the result of [`optimize_operator`] to `out_dir`:
///
/// - `<op>/`: the optimised package, same layout as the input (op.toml,
///   op_host/, op_kernel/, ...), ready for msopgen/CANN; the input itself
///   when nothing won;
/// - `changes.diff`: unified diff input → output;
/// - `steps.json`: the accepted steps with their evidence (latencies
///   before/after, acceptance reason) and the summary numbers;
/// - `log.json`: every attempt;
/// - `before/`, `after/`: `profile.json`, `trace.json` (Chrome trace
///   events) and msprof's `OpBasicInfo.csv` and `PipeUtilization.csv` of
///   the benchmark case, noise-free.
///
/// The output is checked again on every case with fresh inputs (`seed`).
pub fn write_output(
    device: &dyn Device,
    outcome: &OpOutcome,
    input: &OpPackage,
    out_dir: &Path,
    seed: u64,
) -> Result<OutputReport, AgentError> {
    let mut files = Vec::new();
    let final_dir = outcome
        .final_dir
        .clone()
        .unwrap_or_else(|| input.dir.clone());
    let pkg_dir = out_dir.join(&outcome.op);
    if pkg_dir.exists() {
        std::fs::remove_dir_all(&pkg_dir).map_err(|e| io(&pkg_dir, e))?;
    }
    copy_tree(&final_dir, &pkg_dir)?;
    files.push(pkg_dir.clone());
    let before_src = Sources::load(&input.dir)?;
    let after_src = Sources::load(&pkg_dir)?;
    write(
        &out_dir.join("changes.diff"),
        &ascendopt_motif::diff(&before_src, &after_src),
        &mut files,
    )?;
    let output = load(&pkg_dir)?;

    // The hardened judge (every case run twice, the hardware-limit guard,
    // a re-check) on fresh inputs, then fresh shapes near the op.toml's
    // ones that the input passes.
    let check = eval::judge_op(
        device,
        &output,
        &CheckConfig {
            case: None,
            seed,
            profile: false,
            deterministic: true,
            timeline: false,
        },
    )
    .map_err(|e| AgentError::Package {
        dir: pkg_dir.clone(),
        source: e.into(),
    })?;
    let mut failures: Vec<String> = check
        .cases
        .iter()
        .filter(|c| !c.verdict.passed())
        .map(|c| format!("{}: {}", c.name, c.verdict.label()))
        .collect();
    match &check.build {
        Err(e) => failures.push(format!("build: {e}")),
        Ok(artifact) => {
            let fresh_seed = seed ^ 0x6672_6573_6873;
            let cases = match device.build(input) {
                Ok(input_artifact) => fresh::validated(device, input, &input_artifact, fresh_seed),
                Err(_) => Vec::new(),
            };
            if let Err(reason) = fresh::check(device, &output, artifact, &cases, fresh_seed) {
                failures.push(reason.to_string());
            }
        }
    }

    let mut latencies = [None, None];
    let mut profiles = [None, None];
    for (i, (name, pkg)) in [("before", input), ("after", &output)]
        .into_iter()
        .enumerate()
    {
        let (profile, trace, latency) = profile_and_trace(device, pkg, seed)?;
        latencies[i] = latency;
        if let Some(p) = profile {
            let text = serde_json::to_string_pretty(&p).unwrap_or_default();
            write(&out_dir.join(name).join("profile.json"), &text, &mut files)?;
            let dir = out_dir.join(name);
            let written =
                msprof_csv::write_dir(&dir, &pkg.spec.kernel, &p).map_err(|e| io(&dir, e))?;
            files.extend(written);
            profiles[i] = Some(p);
        }
        if let Some(t) = trace {
            write(&out_dir.join(name).join("trace.json"), &t, &mut files)?;
        }
    }

    let evidence = serde_json::json!({
        "op": outcome.op,
        "method": outcome.method,
        "baseline_us": outcome.baseline_us,
        "final_us": outcome.final_us,
        "speedup": outcome.speedup,
        "spent": outcome.spent,
        "budget": outcome.budget,
        "roofline_before": outcome.roofline_before,
        "roofline_after": outcome.roofline_after,
        "noise_free_before_us": latencies[0],
        "noise_free_after_us": latencies[1],
        "output_passed_fresh_inputs": failures.is_empty(),
        "steps": outcome.steps,
        "stops": outcome.stops,
        "curve": outcome.curve,
    });
    let text = serde_json::to_string_pretty(&evidence).unwrap_or_default();
    write(&out_dir.join("steps.json"), &text, &mut files)?;
    let log = serde_json::to_string_pretty(&outcome.log).unwrap_or_default();
    write(&out_dir.join("log.json"), &log, &mut files)?;
    Ok(OutputReport {
        package: pkg_dir,
        output_passed: failures.is_empty(),
        failures,
        before_us: latencies[0],
        after_us: latencies[1],
        files,
        before_profile: profiles[0].take(),
        after_profile: profiles[1].take(),
    })
}
