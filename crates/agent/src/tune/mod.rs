//! Stage II: search the tiling with the kernel fixed.
//!
//! The search space is the incumbent's evolvable tiling region: every
//! `// ascendopt:knob` constant with its admitted values
//! (`ascendopt_op::tiling`), and the op.toml constraints between them. A
//! candidate is a choice of one admitted value per knob (a *genome* of
//! value indices), rendered into the host sources with
//! `TilingSpace::render_with`.
//!
//! The evolutionary search ([`tune`]):
//! - the one-knob round: moves of one knob of the incumbent at a time,
//!   widest ranges first (tile sizes and per-core minimums span orders of
//!   magnitude, buffer counts do not); a knob's first move goes to the far
//!   end of its range, its second to the near end when the first changed
//!   nothing (the knob is saturated that way) and otherwise to the
//!   midpoint; every knob moves once before any moves twice, except that a
//!   first move that helped or changed nothing is followed at once by the
//!   knob's second, and a knob whose moves keep improving, or the most
//!   improving knob while at most one of its moves since its best failed
//!   to improve on it, is bisected towards its best value at once
//!   (midpoint between the best value and the nearest value tried on the
//!   wider side, rounded towards the best: a far end that helped and a
//!   midpoint that helped less put the best between them, and it is found
//!   before narrower knobs are probed); the round takes at
//!   most about half the evaluations, so that operators with many knobs
//!   keep evaluations for combinations;
//! - as soon as two knobs have an improving move, every improving move is
//!   applied together in one candidate (recombination), and again when
//!   another knob improves; a failing recombination falls back to one move
//!   fewer;
//! - then children: two parents drawn by binary tournament among the
//!   population members faster than the incumbent (as fast when none is),
//!   uniform
//!   crossover with probability 1/2, then mutation of at least one knob (a
//!   step of up to a quarter of the knob's range, or a random value with
//!   probability 0.15), preferring knobs whose moves changed the latency;
//! - a candidate that violates a constraint is refused without evaluation;
//! - so is one whose host tiling fails on a case ([`screen`]: the host
//!   tiling of the incumbent's parametrised build runs alone with the
//!   candidate's values, a few milliseconds a case): a Matmul tiling whose
//!   blocks do not fit L0A/L0B/L0C or L1 never costs an evaluation; the
//!   infeasible region is learnt as from a failed evaluation;
//! - a candidate that fails (UB overflow, misalignment, out of bounds,
//!   compile error, wrong result, time-out) teaches an *infeasible region*:
//!   relative to the parent it came from, every knob it moved bounds the
//!   region in the direction of the move (`TILE_BYTES >= 65536` when the
//!   tile grew) and every knob it kept is fixed; candidates inside a known
//!   region are never evaluated (resource use grows monotonically with tile
//!   sizes and buffer counts, which is the assumption). Each region also
//!   carries a wider hypothesis, the moved knobs' bounds alone whatever the
//!   other knobs: a candidate inside it is skipped with probability 3/4 and
//!   otherwise evaluated as a probe; a failing probe confirms the
//!   hypothesis (skipped always from then on), a correct one refutes it;
//! - identical assignments are never evaluated twice (and identical
//!   sources are answered by the run store without charge, as are
//!   assignments whose launches equal an evaluated one's on every case:
//!   the same kernel library and tiling, `pipeline::launch_key`; such an
//!   answer still counts as an attempt);
//! - nor are assignments whose latency is known otherwise: with noise-free
//!   measurements, two candidates that measured the same latency ran the
//!   same plan, so the knobs they differ in were overridden by another
//!   knob (a core count above the cap a per-core minimum sets) or ignored;
//!   the box they span is taken to be flat (unless it holds a candidate
//!   that measured otherwise) and nothing inside it is evaluated
//!   ([`TuneOutcome::skipped_redundant`]);
//! - "faster" and "the same" inside the schedule are judged within the
//!   noise of the incumbent's samples (twice the standard error of a
//!   difference of medians), so that noise does not steer the search;
//! - at the end, when measurements are noisy, the best candidate is
//!   measured again on fresh inputs and noise
//!   ([`OpSession::remeasure_or_replay`]) and declared only when that
//!   measurement is faster than the incumbent beyond noise; the last
//!   evaluation is kept for that only once there is a better candidate.
//!   Noise-free measurements (the deterministic pipeline) would repeat
//!   themselves, so then the best is judged on its first measurement (which
//!   already re-checked correctness on fresh inputs).
//!
//! An LLM proposer may also edit the region's branch logic
//! (`Proposer::tiling_edits`): those edits are judged first, and an
//! accepted one becomes the base whose knobs are then searched.
//!
//! [`random_search`] is the baseline the benchmark compares with: uniform
//! random assignments, deduplicated and constraint-checked, no learning.

use crate::attempts::{affordable, notify, settle, Tried};
use crate::outcome::Step;
use crate::proposer::{Feedback, Proposer, TilingEditRequest};
use crate::rng::Rng;
use crate::session::{Action, LogEntry, OpSession, Phase, Trial};
use crate::AgentError;
use crate::ProposeError;
use ascendopt_harness::store::Stage;
use ascendopt_motif::knobfind::{self, ChipLimits};
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use ascendopt_op::tiling::TilingSpace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub mod confirm;
mod planner;
mod screen;

use planner::{noise_tolerance, probe_cap, Origin, Planner};

/// How Stage II runs.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneConfig {
    /// Most attempts (evaluations, the final re-measurement included).
    pub max_attempts: u32,
    /// Candidates kept as parents.
    pub population: usize,
    /// Seed of every random choice.
    pub seed: u64,
    /// Stop after this many attempts in a row without a new best (None:
    /// use every attempt).
    pub patience: Option<u32>,
}

impl TuneConfig {
    /// A configuration with `max_attempts` and the default population (8).
    pub fn new(max_attempts: u32, seed: u64) -> TuneConfig {
        TuneConfig {
            max_attempts,
            population: 8,
            seed,
            patience: None,
        }
    }
}

/// What Stage II (or random search) ends with.
#[derive(Debug, Clone)]
pub struct TuneOutcome {
    /// The final incumbent (the input one when nothing won).
    pub incumbent: Trial,
    /// Declared steps (an accepted tiling edit, the declared tiling).
    pub steps: Vec<Step>,
    /// Attempts made (charged or answered by the store).
    pub attempts: u32,
    /// The fastest correct candidate's first measurement, µs.
    pub best_found_us: Option<f64>,
    /// The fastest correct candidate (not necessarily declared).
    pub best_found: Option<Trial>,
    /// The infeasible regions learnt, in words.
    pub regions: Vec<String>,
    /// Candidates skipped because a learnt region contains them.
    pub skipped_infeasible: u32,
    /// Candidates refused because they violate a constraint.
    pub skipped_constraint: u32,
    /// Candidates refused without an evaluation because their host tiling
    /// fails on a case (run alone, [`screen`]).
    pub skipped_tiling: u32,
    /// Candidates not evaluated because their latency was already known:
    /// measured, or inside a box spanned by two candidates that measured
    /// the same (noise-free), where the knobs they differ in were
    /// overridden by another knob or ignored.
    pub skipped_redundant: u32,
    /// Why the search stopped.
    pub stopped: String,
    /// The knobs found in the host code (kept with their distinct tilings,
    /// or dropped with the reason), one line each with file and line.
    pub found: Vec<String>,
    /// Every attempt, one line each: what and how it ended.
    pub tried: Vec<String>,
}

type Genome = Vec<usize>;

/// The knobs of a package as index spaces.
struct KnobSpace {
    names: Vec<String>,
    values: Vec<Vec<i64>>,
    tiling: TilingSpace,
    dir: std::path::PathBuf,
}

impl KnobSpace {
    fn of(dir: &Path) -> Result<KnobSpace, AgentError> {
        let pkg =
            OpPackage::load(dir, &ascendopt_golden::BUILTINS).map_err(|e| AgentError::Package {
                dir: dir.to_path_buf(),
                source: e.into(),
            })?;
        let mut names = Vec::new();
        let mut values = Vec::new();
        for k in pkg.tiling.knobs() {
            names.push(k.name.clone());
            values.push(k.candidates());
        }
        Ok(KnobSpace {
            names,
            values,
            tiling: pkg.tiling,
            dir: pkg.dir,
        })
    }

    fn current(&self) -> Genome {
        let cur = self.tiling.current();
        self.names
            .iter()
            .zip(&self.values)
            .map(|(n, vals)| {
                let v = cur.get(n).copied().unwrap_or(0);
                vals.iter().position(|x| *x == v).unwrap_or(0)
            })
            .collect()
    }

    fn assignment(&self, g: &Genome) -> BTreeMap<String, i64> {
        self.names
            .iter()
            .zip(&self.values)
            .zip(g)
            .map(|((n, vals), &i)| (n.clone(), vals[i.min(vals.len() - 1)]))
            .collect()
    }

    fn describe(&self, g: &Genome) -> String {
        self.assignment(g)
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `base` with the knobs set to `g`; Err when a constraint refuses it
    /// (or a rendered file lies outside the package).
    fn render(&self, base: &Sources, g: &Genome) -> Result<Sources, RenderError> {
        let files = self.tiling.render_with(&self.assignment(g))?;
        let mut out = base.clone();
        for (path, text) in files {
            out.set_at(&self.dir, &path, text)?;
        }
        Ok(out)
    }
}

/// Why a genome has no sources ([`KnobSpace::render`]).
#[derive(Debug, thiserror::Error)]
enum RenderError {
    /// The tiling refused the values (a constraint, a domain).
    #[error(transparent)]
    Tiling(#[from] ascendopt_op::OpError),
    /// A rendered file could not be set.
    #[error(transparent)]
    Sources(#[from] ascendopt_motif::MotifError),
}

/// A bound on one knob's value index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    AtLeast(usize),
    AtMost(usize),
    Exactly(usize),
}

/// A learnt infeasible region: a box over value indices (`bounds`: the
/// moved knobs bounded in the direction of the move, the others fixed),
/// with a wider hypothesis (`loose`: only the moved knobs' bounds, the
/// others free) that is probed now and then: a failure inside it confirms
/// it (then it is never probed again), a success refutes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Region {
    bounds: Vec<Bound>,
    loose: Option<Vec<Option<Bound>>>,
    confirmed: bool,
    verdict: String,
}

/// Chance that a candidate inside an unconfirmed hypothesis is skipped
/// rather than evaluated as a probe.
const SKIP_UNCONFIRMED: f64 = 0.75;

fn within(b: Bound, v: usize) -> bool {
    match b {
        Bound::AtLeast(x) => v >= x,
        Bound::AtMost(x) => v <= x,
        Bound::Exactly(x) => v == x,
    }
}

impl Region {
    /// The region a failed candidate `x` teaches, relative to `parent`.
    fn learn(x: &Genome, parent: Option<&Genome>, verdict: &str) -> Region {
        let bounds: Vec<Bound> = x
            .iter()
            .enumerate()
            .map(|(i, &v)| match parent.map(|p| p[i]) {
                Some(p) if v > p => Bound::AtLeast(v),
                Some(p) if v < p => Bound::AtMost(v),
                _ => Bound::Exactly(v),
            })
            .collect();
        let loose: Vec<Option<Bound>> = bounds
            .iter()
            .map(|b| match b {
                Bound::Exactly(_) => None,
                other => Some(*other),
            })
            .collect();
        let wider = loose.iter().any(Option::is_some) && loose.iter().any(Option::is_none);
        Region {
            bounds,
            loose: wider.then_some(loose),
            confirmed: false,
            verdict: verdict.to_string(),
        }
    }

    /// Inside the strict box: never evaluated.
    fn contains(&self, g: &Genome) -> bool {
        self.bounds.iter().zip(g).all(|(b, &v)| within(*b, v))
    }

    /// Inside the wider hypothesis.
    fn loosely_contains(&self, g: &Genome) -> bool {
        self.loose.as_ref().is_some_and(|l| {
            l.iter()
                .zip(g)
                .all(|(b, &v)| b.is_none_or(|b| within(b, v)))
        })
    }

    fn describe(&self, space: &KnobSpace) -> String {
        let bound = |i: usize, b: Bound| {
            let (op, idx) = match b {
                Bound::AtLeast(x) => (">=", x),
                Bound::AtMost(x) => ("<=", x),
                Bound::Exactly(x) => ("==", x),
            };
            format!("{} {op} {}", space.names[i], space.values[i][idx])
        };
        let strict: Vec<String> = self
            .bounds
            .iter()
            .enumerate()
            .map(|(i, b)| bound(i, *b))
            .collect();
        let mut out = format!("{} ({})", strict.join(" && "), self.verdict);
        if let Some(l) = &self.loose {
            let wide: Vec<String> = l
                .iter()
                .enumerate()
                .filter_map(|(i, b)| b.map(|b| bound(i, b)))
                .collect();
            out.push_str(&format!(
                "; hypothesis: {} whatever the other knobs",
                wide.join(" && ")
            ));
        }
        out
    }
}

#[derive(Debug, Clone)]
struct Member {
    genome: Genome,
    latency: f64,
    trial: Trial,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Evolution,
    Random,
}

/// Runs Stage II from `incumbent` (a correct, profiled trial), calling
/// `on_attempt` with every settled attempt.
pub fn tune(
    session: &mut OpSession<'_>,
    proposer: &mut dyn Proposer,
    incumbent: Trial,
    cfg: &TuneConfig,
    tried: &mut Tried,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<TuneOutcome, AgentError> {
    let log_start = session.log().len();
    let (mut incumbent, found, marked) = mark_found_knobs(session, incumbent, tried, on_attempt)?;
    let mut steps = Vec::new();
    let mut attempts = u32::from(marked);
    // Branch-logic edits of the tiling region (LLM proposers only).
    // A proposer that cannot make the request here (its prompt does not
    // fit the model's context) ends the edits; the knob search needs no
    // proposer and goes on.
    let mut edits_stop = None;
    let edits = ProposeError::stage_ending(
        proposer.tiling_edits(&TilingEditRequest {
            current: &incumbent.sources,
            op: session.op(),
            profile: incumbent.profile(),
            feedback: &Feedback::default(),
        }),
        &mut edits_stop,
    )?
    .unwrap_or_default();
    for proposal in edits {
        if attempts + 1 >= cfg.max_attempts {
            break;
        }
        let sources = match proposal.candidate {
            Ok(s) => s,
            Err(refused) => {
                if session.remaining(Stage::Online) == 0 {
                    break;
                }
                session.charge_failed_proposal(Phase::Tune, proposal.action, &refused)?;
                notify(session, on_attempt);
                attempts += 1;
                continue;
            }
        };
        if tried.contains(&sources) || !affordable(session, &sources)? {
            continue;
        }
        tried.insert(&sources);
        let trial = session.evaluate(Phase::Tune, &sources, proposal.action.clone())?;
        attempts += 1;
        if trial.is_correct() && OpPackage::load(&trial.dir, &ascendopt_golden::BUILTINS).is_ok() {
            let d = session.accept(&trial, &incumbent);
            settle(session, on_attempt, d.faster, d.reason.clone());
            if d.faster {
                steps.push(Step {
                    phase: Phase::Tune,
                    action: proposal.action,
                    before_us: incumbent.latency_us().unwrap_or(f64::NAN),
                    after_us: trial.latency_us().unwrap_or(f64::NAN),
                    reason: d.reason,
                    at_evaluation: u32::try_from(session.log().len()).unwrap_or(u32::MAX),
                });
                incumbent = trial;
            }
        } else {
            settle(
                session,
                on_attempt,
                false,
                format!("not correct: {}", trial.verdict().label()),
            );
        }
    }
    let rest = TuneConfig {
        max_attempts: cfg.max_attempts.saturating_sub(attempts),
        ..cfg.clone()
    };
    let mut out = search(
        session,
        incumbent,
        &rest,
        tried,
        Strategy::Evolution,
        on_attempt,
    )?;
    out.attempts += attempts;
    steps.append(&mut out.steps);
    out.steps = steps;
    if out.stopped == "no tiling knobs" {
        out.stopped = if found.is_empty() {
            "no tiling knobs: none annotated, and the host code has no integer constant or literal that reaches SetBlockDim or a tiling field".to_string()
        } else {
            format!(
                "no tiling knobs: none annotated, and none of the {} found changes the tiling",
                found.len()
            )
        };
    } else if let Some(rest) = out
        .stopped
        .strip_prefix("no untried admissible assignment left")
    {
        out.stopped = format!(
            "search space exhausted: every admissible knob assignment was tried or is known{rest}"
        );
    }
    if let Some(why) = edits_stop {
        out.stopped = format!("{} (tiling edits skipped: {why})", out.stopped);
    }
    out.found = found;
    out.tried = session.log()[log_start.min(session.log().len())..]
        .iter()
        .map(|e| {
            let lat = e
                .latency_us
                .map(|l| format!(" {l:.2} us"))
                .unwrap_or_default();
            format!("{}: {}{lat} ({})", e.action.summary, e.verdict, e.reason)
        })
        .collect();
    Ok(out)
}

/// The chip limits a found knob's domain is derived from: those of the
/// chip the operator runs on (its op.toml `chip`).
pub fn chip_limits(session: &OpSession<'_>) -> ChipLimits {
    let p = session.context().device.platform_of(session.base());
    ChipLimits {
        cores: p.core_num_aiv.max(1),
        ub_bytes: p.ub_size.max(1),
    }
}

/// Stage II's view of the incumbent: its host code with the knobs found
/// in it marked as evolvable constants, once the host tiling confirmed
/// them ([`confirm`]). The marked sources launch exactly what
/// the incumbent launches (same kernel, same tiling), so the run store
/// answers their evaluation with the incumbent's verdict. Returns the new
/// incumbent, the found knobs in words, and whether an attempt was made.
fn mark_found_knobs(
    session: &mut OpSession<'_>,
    incumbent: Trial,
    tried: &mut Tried,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<(Trial, Vec<String>, bool), AgentError> {
    let plain = knobfind::restore(&incumbent.sources);
    let discovery = knobfind::discover(&plain, &chip_limits(session));
    if discovery.knobs.is_empty() {
        return Ok((incumbent, discovery.not_knobs, false));
    }
    let confirmed = confirm::confirm(session, &plain, &discovery)?;
    let mut notes = discovery.not_knobs.clone();
    notes.extend(confirmed.notes.iter().cloned());
    let Some(marked) = confirmed.sources else {
        return Ok((incumbent, notes, false));
    };
    if marked == incumbent.sources || tried.contains(&marked) {
        return Ok((incumbent, notes, false));
    }
    if !affordable(session, &marked)? {
        return Ok((incumbent, notes, false));
    }
    tried.insert(&marked);
    let names: Vec<String> = confirmed.knobs.iter().map(|k| k.name.clone()).collect();
    let trial = session.evaluate(
        Phase::Tune,
        &marked,
        Action {
            proposer: "tune".into(),
            motif: None,
            summary: format!("mark the found knobs {} (same launch)", names.join(", ")),
            entries: Vec::new(),
        },
    )?;
    if trial.is_correct() {
        settle(
            session,
            on_attempt,
            false,
            "the input with its found knobs marked: the base of the search",
        );
        Ok((trial, notes, true))
    } else {
        let verdict = trial.verdict().label();
        settle(
            session,
            on_attempt,
            false,
            format!(
                "marking the found knobs broke the operator ({verdict}): searched without them"
            ),
        );
        notes.push(format!(
            "the marked host code failed ({verdict}); found knobs not searched"
        ));
        Ok((incumbent, notes, true))
    }
}

/// The baseline: uniform random knob assignments (deduplicated,
/// constraint-checked), `max_attempts` evaluations, no learning and no
/// re-measurement; the incumbent of the outcome is the fastest candidate
/// found (or the input).
pub fn random_search(
    session: &mut OpSession<'_>,
    incumbent: Trial,
    cfg: &TuneConfig,
    tried: &mut Tried,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<TuneOutcome, AgentError> {
    search(session, incumbent, cfg, tried, Strategy::Random, on_attempt)
}

/// A fresh admissible candidate: genome, parent, origin, sources, and the
/// region whose hypothesis it probes.
type Found = (Genome, Option<Genome>, Origin, Sources, Option<usize>);

fn search(
    session: &mut OpSession<'_>,
    incumbent: Trial,
    cfg: &TuneConfig,
    tried: &mut Tried,
    strategy: Strategy,
    on_attempt: &mut dyn FnMut(&LogEntry),
) -> Result<TuneOutcome, AgentError> {
    let mut out = TuneOutcome {
        incumbent: incumbent.clone(),
        steps: Vec::new(),
        attempts: 0,
        best_found_us: incumbent.latency_us(),
        best_found: Some(incumbent.clone()),
        regions: Vec::new(),
        skipped_infeasible: 0,
        skipped_constraint: 0,
        skipped_tiling: 0,
        skipped_redundant: 0,
        stopped: String::new(),
        found: Vec::new(),
        tried: Vec::new(),
    };
    let Some(inc_latency) = incumbent.latency_us() else {
        out.stopped = "the incumbent is not correct".into();
        return Ok(out);
    };
    let space = KnobSpace::of(&incumbent.dir)?;
    if space.names.is_empty() {
        out.stopped = "no tiling knobs".into();
        return Ok(out);
    }
    let mut rng = Rng(cfg.seed ^ 0x5354_4147_4532);
    let screen = screen::TilingScreen::new(session.context().device, &incumbent.dir);
    let base = space.current();
    tried.insert(&incumbent.sources);
    let mut seen: BTreeSet<Genome> = BTreeSet::from([base.clone()]);
    let mut regions: Vec<Region> = Vec::new();
    let mut skipped: BTreeSet<Genome> = BTreeSet::new();
    let mut best = Member {
        genome: base.clone(),
        latency: inc_latency,
        trial: incumbent.clone(),
    };
    // A re-measurement is needed before declaring only when measurements
    // are noisy: a noise-free measurement would repeat itself (and every
    // evaluation already re-checks correctness on fresh inputs).
    let noisy = !session.context().pipeline.deterministic;
    let remeasure = strategy == Strategy::Evolution && noisy;
    // The one-knob round's share is about half of the evaluations the
    // search itself may use.
    let allowance = cfg.max_attempts.saturating_sub(u32::from(remeasure));
    let mut planner = Planner::new(
        space.values.clone(),
        base.clone(),
        inc_latency,
        probe_cap(allowance),
        cfg.population,
        &mut rng,
    )
    .with_tolerance(noise_tolerance(incumbent.samples()));

    let mut since_best = 0u32;
    out.stopped = loop {
        // Keep the last evaluation for the re-measurement only once there
        // is something to re-measure.
        let reserve = u32::from(remeasure && best.latency < inc_latency);
        if out.attempts + reserve >= cfg.max_attempts {
            break "allowance used".to_string();
        }
        if let Some(p) = cfg.patience {
            if since_best >= p {
                break format!("no new best in {p} attempts");
            }
        }
        // Find a fresh, admissible candidate.
        let mut found: Option<Found> = None;
        for _ in 0..2000 {
            let (g, parent, origin) = match strategy {
                Strategy::Random => (
                    space
                        .values
                        .iter()
                        .map(|v| rng.below(v.len()))
                        .collect::<Genome>(),
                    None,
                    Origin::Random,
                ),
                Strategy::Evolution => planner.propose(&mut rng),
            };
            if seen.contains(&g) {
                if strategy == Strategy::Evolution {
                    // A move already measured: its latency is known.
                    planner.assume(&g, origin);
                }
                continue;
            }
            if strategy == Strategy::Evolution && planner.redundant(&g) {
                // Inside a box two equal measurements showed flat: the
                // latency is known.
                planner.assume(&g, origin);
                seen.insert(g);
                continue;
            }
            if regions.iter().any(|r| r.contains(&g)) {
                seen.insert(g);
                out.skipped_infeasible += 1;
                continue;
            }
            let probe = regions.iter().position(|r| r.loosely_contains(&g));
            if let Some(i) = probe {
                if regions[i].confirmed || rng.chance(SKIP_UNCONFIRMED) {
                    if skipped.insert(g) {
                        out.skipped_infeasible += 1;
                    }
                    continue;
                }
            }
            seen.insert(g.clone());
            match space.render(&incumbent.sources, &g) {
                Ok(s) if !tried.contains(&s) => {
                    let refused = screen
                        .as_ref()
                        .and_then(|sc| sc.refuses(&space.assignment(&g)));
                    if let Some(why) = refused {
                        // Infeasible without an evaluation: learnt as if
                        // it had failed.
                        out.skipped_tiling += 1;
                        tried.insert(&s);
                        if strategy == Strategy::Evolution {
                            planner.refused(&g, origin);
                            regions.push(Region::learn(&g, parent.as_ref(), &why));
                        }
                        continue;
                    }
                    found = Some((g, parent, origin, s, probe));
                    break;
                }
                Ok(_) => continue,
                Err(_) => {
                    out.skipped_constraint += 1;
                    continue;
                }
            }
        }
        let Some((genome, parent, origin, sources, probe)) = found else {
            break "no untried admissible assignment left".to_string();
        };
        if !affordable(session, &sources)? {
            break "budget spent".to_string();
        }
        tried.insert(&sources);
        let action = Action {
            proposer: match strategy {
                Strategy::Evolution => "tune".into(),
                Strategy::Random => "random".into(),
            },
            motif: None,
            summary: match origin {
                Origin::Probe(_) => format!("one knob: {}", space.describe(&genome)),
                Origin::Recombined => format!("recombined: {}", space.describe(&genome)),
                Origin::Child | Origin::Random => space.describe(&genome),
            },
            entries: Vec::new(),
        };
        let trial = session.evaluate(Phase::Tune, &sources, action)?;
        out.attempts += 1;
        since_best += 1;
        if let Some(i) = probe {
            // The candidate probed region i's hypothesis.
            if trial.is_correct() {
                regions[i].loose = None;
            } else {
                regions[i].confirmed = true;
            }
        }
        planner.record(&genome, origin, trial.latency_us());
        match trial.latency_us() {
            Some(lat) => {
                if lat < best.latency {
                    since_best = 0;
                    // Not yet the incumbent: declared at the end (after a
                    // re-measurement when measurements are noisy).
                    settle(
                        session,
                        on_attempt,
                        false,
                        format!(
                            "new best of the population ({lat:.3} us < {:.3} us)",
                            best.latency
                        ),
                    );
                    best = Member {
                        genome,
                        latency: lat,
                        trial,
                    };
                } else {
                    settle(
                        session,
                        on_attempt,
                        false,
                        format!("{lat:.3} us, best {:.3} us", best.latency),
                    );
                }
            }
            None => {
                let verdict = trial.verdict().label();
                if strategy == Strategy::Evolution {
                    let region = Region::learn(&genome, parent.as_ref(), &verdict);
                    let words = region.describe(&space);
                    settle(
                        session,
                        on_attempt,
                        false,
                        format!("infeasible: {verdict}; region learnt: {words}"),
                    );
                    regions.push(region);
                } else {
                    settle(session, on_attempt, false, format!("infeasible: {verdict}"));
                }
            }
        }
    };

    if out.skipped_tiling > 0 {
        out.stopped.push_str(&format!(
            " ({} candidates refused without an evaluation: their host tiling fails)",
            out.skipped_tiling
        ));
    }
    out.regions = regions
        .iter()
        .map(|r| {
            let mut d = r.describe(&space);
            if r.confirmed {
                d.push_str(" [hypothesis confirmed]");
            }
            d
        })
        .collect();
    out.skipped_redundant = planner.assumed;
    out.best_found_us = Some(best.latency);
    out.best_found = Some(best.trial.clone());
    if best.genome == base || best.latency >= inc_latency {
        return Ok(out);
    }
    if strategy == Strategy::Random {
        out.incumbent = best.trial;
        return Ok(out);
    }
    let action = Action {
        proposer: "tune".into(),
        motif: None,
        summary: format!("re-measure {}", space.describe(&best.genome)),
        entries: Vec::new(),
    };
    let declared = if remeasure {
        let can = out.attempts < cfg.max_attempts
            && (session.remaining(Stage::Online) > 0 || {
                let n = session
                    .context()
                    .store
                    .evaluations(session.context().run, session.op())?
                    .iter()
                    .filter(|e| e.source_hash == best.trial.evaluated.source_hash)
                    .count();
                n >= 2
            });
        if !can {
            out.stopped
                .push_str("; no budget left to re-measure the best, incumbent kept");
            return Ok(out);
        }
        let again = session.remeasure_or_replay(Phase::Tune, &best.trial, action.clone())?;
        out.attempts += 1;
        if !again.is_correct() {
            settle(
                session,
                on_attempt,
                false,
                format!("re-measurement not correct: {}", again.verdict().label()),
            );
            return Ok(out);
        }
        again
    } else {
        best.trial.clone()
    };
    let d = session.accept(&declared, &incumbent);
    if remeasure {
        settle(session, on_attempt, d.faster, d.reason.clone());
    } else {
        out.stopped.push_str(&format!(
            "; noise-free measurements: best declared without re-measurement ({})",
            d.reason
        ));
        if d.faster {
            // The best's own attempt becomes the accepted one in the log
            // (its evaluation is the declared measurement).
            let hash = best.trial.evaluated.source_hash.as_str();
            if let Some(index) = session
                .log()
                .iter()
                .rposition(|e| e.phase == Phase::Tune && e.source_hash == hash)
            {
                session.settle_at(
                    index,
                    true,
                    format!("declared best without re-measurement: {}", d.reason),
                );
            }
        }
    }
    if d.faster {
        out.steps.push(Step {
            phase: Phase::Tune,
            action: Action {
                summary: space.describe(&best.genome),
                ..action
            },
            before_us: inc_latency,
            after_us: declared.latency_us().unwrap_or(best.latency),
            reason: d.reason,
            at_evaluation: u32::try_from(session.log().len()).unwrap_or(u32::MAX),
        });
        out.incumbent = declared;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::planner::{noise_tolerance, SAME_LATENCY};
    use super::*;

    #[test]
    fn a_region_extends_in_the_direction_of_the_failed_move_only() {
        let parent = vec![2, 1, 5];
        let failed = vec![4, 1, 5];
        let r = Region::learn(&failed, Some(&parent), "runtime_error:ub_overflow");
        assert!(r.contains(&vec![4, 1, 5]));
        assert!(r.contains(&vec![6, 1, 5]));
        assert!(!r.contains(&vec![3, 1, 5]));
        assert!(!r.contains(&vec![4, 0, 5]));
        assert!(!r.contains(&vec![5, 1, 6]));
        let down = Region::learn(&vec![2, 0, 5], Some(&parent), "x");
        assert!(down.contains(&vec![2, 0, 5]));
        assert!(!down.contains(&vec![2, 1, 5]));
        assert!(r.loosely_contains(&vec![4, 0, 9]));
        assert!(!r.loosely_contains(&vec![3, 0, 9]));
        let alone = Region::learn(&failed, None, "x");
        assert!(!alone.loosely_contains(&vec![5, 1, 5]));
        assert!(alone.contains(&failed));
        assert!(!alone.contains(&vec![5, 1, 5]));
    }

    /// Five knobs shaped like the built-in operators': a tile size
    /// (pow2, 7 values), a buffer count (2), a core count (48), a split
    /// unit (5) and a per-core minimum (pow2, 12).
    fn knobs() -> (Vec<Vec<i64>>, Genome) {
        let pow2 = |lo: i64, n: u32| (0..n).map(|i| lo << i).collect::<Vec<i64>>();
        let values = vec![
            pow2(1024, 7),
            vec![1, 2],
            (1..=48).collect(),
            pow2(32, 5),
            pow2(32, 12),
        ];
        // 32768, 2, 48, 512, 1024
        (values, vec![5, 1, 47, 4, 5])
    }

    /// `g` with knob `k` at value index `v`.
    fn with(g: &Genome, k: usize, v: usize) -> Genome {
        let mut g = g.clone();
        g[k] = v;
        g
    }

    /// (knob, value) of each evaluated one-knob probe; panics on any other
    /// origin.
    fn probe_moves(done: &[(Genome, Origin)]) -> Vec<(usize, usize)> {
        done.iter()
            .map(|(g, o)| match o {
                Origin::Probe(k) => (*k, g[*k]),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    /// Drives a planner like the search loop does (identical candidates
    /// skipped), with `latency` as the device; returns what was evaluated.
    fn drive(
        planner: &mut Planner,
        evaluations: usize,
        latency: &dyn Fn(&Genome) -> Option<f64>,
    ) -> Vec<(Genome, Origin)> {
        let mut rng = Rng(11);
        let mut seen = BTreeSet::from([planner.base.clone()]);
        let mut out = Vec::new();
        while out.len() < evaluations {
            let (g, _, origin) = (0..10_000)
                .map(|_| planner.propose(&mut rng))
                .find(|(g, _, _)| !seen.contains(g))
                .expect("a fresh candidate");
            seen.insert(g.clone());
            planner.record(&g, origin, latency(&g));
            out.push((g, origin));
        }
        out
    }

    #[test]
    fn the_one_knob_round_is_capped_at_about_half_the_allowance() {
        let (values, base) = knobs();
        let worse = |g: &Genome| {
            Some(
                11.0 + g
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (i * 64 + v) as f64)
                    .sum::<f64>()
                    / 1e4,
            )
        };
        assert_eq!(probe_cap(10), 5);
        assert_eq!(probe_cap(9), 5);
        assert_eq!(probe_cap(1), 1);
        let mut rng = Rng(3);
        let mut p = Planner::new(
            values.clone(),
            base.clone(),
            10.0,
            probe_cap(10),
            8,
            &mut rng,
        );
        // Nothing helps (every move is slower, no two alike): 5 one-knob
        // moves are tried, then children.
        let done = drive(&mut p, 10, &worse);
        let probes: Vec<&(Genome, Origin)> = done
            .iter()
            .filter(|(_, o)| matches!(o, Origin::Probe(_)))
            .collect();
        assert_eq!(probes.len(), 5, "{done:?}");
        assert!(done[..5].iter().all(|(_, o)| matches!(o, Origin::Probe(_))));
        assert!(done[5..].iter().all(|(_, o)| *o == Origin::Child));
        // The first round moves every knob once, to the far end of its
        // range, widest knobs (per-core minimum, tile, cores) first.
        let knobs: Vec<usize> = probes
            .iter()
            .map(|(_, o)| match o {
                Origin::Probe(k) => *k,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(knobs[..3], [4, 0, 2]);
        let mut sorted = knobs.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
        for (g, o) in &probes {
            let Origin::Probe(k) = o else { unreachable!() };
            let far = if base[*k] * 2 >= values[*k].len() - 1 {
                0
            } else {
                values[*k].len() - 1
            };
            assert_eq!(g[*k], far, "{g:?}");
            let moved = g.iter().zip(&base).filter(|(a, b)| a != b).count();
            assert_eq!(moved, 1);
        }
        // With a larger allowance the round goes on to midpoints.
        let mut p = Planner::new(
            values.clone(),
            base.clone(),
            10.0,
            probe_cap(20),
            8,
            &mut rng,
        );
        let done = drive(&mut p, 20, &worse);
        let probes = done
            .iter()
            .filter(|(_, o)| matches!(o, Origin::Probe(_)))
            .count();
        assert_eq!(probes, 10);
        assert!(done.iter().any(|(g, _)| g[2] == 23), "core count midpoint");
    }

    #[test]
    fn a_knob_saturated_one_way_is_moved_the_other_way_next() {
        let (values, mut base) = knobs();
        // The per-core minimum at 8192 (index 8 of 12): its far end is the
        // bottom, where it changes nothing; only its top end helps.
        base[4] = 8;
        let lat = |g: &Genome| Some(if g[4] > 8 { 7.0 } else { 10.0 } + (g[2] != 47) as u8 as f64);
        let mut rng = Rng(4);
        let mut p = Planner::new(values, base.clone(), 10.0, 10, 8, &mut rng);
        let done = drive(&mut p, 10, &lat);
        let moves = probe_moves(&done);
        // Far ends, widest knobs first; a knob whose far end changed
        // nothing goes to its near end at once (the per-core minimum,
        // which helps there, and is then bisected once, rounding towards
        // its best value: no better; the
        // tile; the split unit, already at its near end: both ends
        // measured the same, so every value between them is taken to be
        // the same and not evaluated); the cores' far end hurt, so their
        // second move (the midpoint) waits for the next round.
        assert_eq!(
            moves,
            [
                (4, 0),
                (4, 11),
                (4, 10),
                (0, 0),
                (0, 6),
                (2, 0),
                (3, 0),
                (1, 0),
                (2, 23),
                (2, 46)
            ]
        );
        assert!(p.redundant(&{
            let mut g = base.clone();
            g[3] = 2;
            g
        }));
        assert_eq!(p.pop[0].1, 7.0);
    }

    #[test]
    fn an_improving_knob_is_bisected_towards_its_best_value() {
        let (values, base) = knobs();
        // Only the per-core minimum matters, best at index 9 (16384),
        // from 1024 (index 5).
        let lat = |g: &Genome| Some(10.0 + (g[4] as f64 - 9.0).abs());
        let mut rng = Rng(2);
        let base_latency = lat(&base).unwrap();
        let mut p = Planner::new(values, base.clone(), base_latency, 5, 8, &mut rng);
        let done = drive(&mut p, 4, &lat);
        let moves = probe_moves(&done);
        // Far end 11 (12 us, better than 14), midpoint 8 (11 us), then
        // between 8 and 11 (the wider side is a tie; 11 was faster than
        // the base): 9, the best; then hemmed in (8, 9, 11 tried, 10 left
        // on the wider side): 10, no better, so on to the next knob.
        assert_eq!(moves, [(4, 11), (4, 8), (4, 9), (4, 10)]);
        assert_eq!(p.pop[0].1, 10.0);
        let next = drive(&mut p, 1, &lat);
        assert_eq!(next[0].1, Origin::Probe(0));
    }

    #[test]
    fn two_improving_moves_are_recombined_at_once() {
        let (values, base) = knobs();
        let mut rng = Rng(5);
        let mut p = Planner::new(values, base.clone(), 10.0, probe_cap(10), 8, &mut rng);
        // Separable: the per-core minimum at its top and the tile at its
        // bottom each save time; together they save both.
        let lat = |g: &Genome| {
            let mut l = 10.0;
            if g[4] == 11 {
                l -= 3.0;
            }
            if g[0] == 0 {
                l -= 2.0;
            }
            Some(l)
        };
        let done = drive(&mut p, 6, &lat);
        // The per-core minimum's far end helps: its midpoint at once (no
        // better), then, as the most improving knob, one bisection step
        // between the two, rounded towards the better (no better either:
        // on to the next knob); then the tile's far end helps too.
        assert_eq!(done[0], (with(&base, 4, 11), Origin::Probe(4)));
        assert_eq!(done[1], (with(&base, 4, 8), Origin::Probe(4)));
        assert_eq!(done[2], (with(&base, 4, 10), Origin::Probe(4)));
        assert_eq!(done[3].1, Origin::Probe(0));
        // Right after the second improving move, both together.
        let mut both = base.clone();
        both[4] = 11;
        both[0] = 0;
        assert_eq!(done[4], (both.clone(), Origin::Recombined));
        assert_eq!(p.pop[0], (both, 5.0));
        // and only once.
        assert!(done[5..].iter().all(|(_, o)| *o != Origin::Recombined));
    }

    #[test]
    fn a_failed_recombination_falls_back_to_fewer_moves() {
        let (values, base) = knobs();
        let mut rng = Rng(5);
        let mut p = Planner::new(values, base.clone(), 10.0, 6, 8, &mut rng);
        // Three knobs with improving moves (per-core minimum, tile, cores:
        // probed in that order); the tile's moves are not correct together
        // with any other move.
        let lat = |g: &Genome| {
            let moved: Vec<usize> = (0..5).filter(|&i| g[i] != base[i]).collect();
            if moved.len() > 1 && moved.contains(&0) {
                return None;
            }
            Some(moved.iter().fold(10.0, |l, &k| {
                l - match k {
                    4 => 3.0,
                    2 => 2.5,
                    0 => 2.0,
                    _ => 0.0,
                }
            }))
        };
        let done = drive(&mut p, 10, &lat);
        let order: Vec<Origin> = done.iter().map(|(_, o)| *o).collect();
        assert_eq!(
            order[..8],
            [
                Origin::Probe(4),
                Origin::Probe(4),
                Origin::Probe(0),
                Origin::Recombined, // {4, 0}: fails
                Origin::Probe(0),
                Origin::Probe(2),
                Origin::Recombined, // {4, 2, 0}: fails
                Origin::Recombined, // {4, 2}: the two best
            ]
        );
        let moved = |g: &Genome| (0..5).filter(|&i| g[i] != base[i]).collect::<Vec<_>>();
        assert_eq!(moved(&done[7].0), vec![2, 4]);
        assert_eq!(p.pop[0].1, 4.5);
        // It beat every single move: no further recombination.
        assert!(order[8..].iter().all(|o| *o != Origin::Recombined));
    }

    #[test]
    fn a_recombination_that_beats_the_single_moves_ends_the_fallback() {
        let (values, base) = knobs();
        let mut rng = Rng(5);
        let mut p = Planner::new(values, base.clone(), 10.0, 5, 8, &mut rng);
        // Three improving moves; all three together are not correct.
        let lat = |g: &Genome| {
            let moved = g.iter().zip(&base).filter(|(a, b)| a != b).count();
            (moved < 3).then_some(10.0 - moved as f64)
        };
        let done = drive(&mut p, 8, &lat);
        let recombined: Vec<&Genome> = done
            .iter()
            .filter(|(_, o)| *o == Origin::Recombined)
            .map(|(g, _)| g)
            .collect();
        let moved = |g: &Genome| g.iter().zip(&base).filter(|(a, b)| a != b).count();
        // Two together after the second probe, three after the third;
        // the three fail, but a pair already beat every single move, so
        // no smaller recombination follows.
        assert_eq!(
            recombined.iter().map(|g| moved(g)).collect::<Vec<_>>(),
            vec![2, 3]
        );
    }

    #[test]
    fn mutation_prefers_the_knobs_whose_moves_changed_the_latency() {
        let (values, mut base) = knobs();
        base[2] = 20;
        // Only the core count matters.
        let lat = |g: &Genome| Some(10.0 + (g[2] as f64 - 30.0).abs() / 10.0);
        let base_latency = lat(&base).unwrap();
        let mut rng = Rng(9);
        let mut p = Planner::new(values, base.clone(), base_latency, 8, 8, &mut rng);
        let done = drive(&mut p, 8, &lat);
        assert!(done.iter().all(|(_, o)| matches!(o, Origin::Probe(_))));
        assert!(p.matters[2]);
        assert!(!p.matters[0] && !p.matters[1] && !p.matters[3] && !p.matters[4]);
        let mut changed = [0usize; 5];
        for _ in 0..400 {
            let mut g = base.clone();
            p.mutate(&mut g, &mut rng);
            for (i, c) in changed.iter_mut().enumerate() {
                *c += usize::from(g[i] != base[i]);
            }
        }
        assert!(changed[2] > 360, "{changed:?}");
        for i in [0, 1, 3, 4] {
            assert!(changed[i] < 120, "{changed:?}");
        }
        // And the search closes in on the best core count.
        drive(&mut p, 15, &lat);
        assert!(p.pop[0].1 < base_latency, "{:?}", p.pop[0]);
    }

    #[test]
    fn the_most_improving_knob_is_bisected_before_narrow_knobs_are_probed() {
        let (values, base) = knobs();
        // The per-core minimum (1024, index 5) is best at 32768 (index
        // 10): its far end (65536) helps, its midpoint (8192) helps less,
        // so the best lies between them. Every other move is slower.
        let lat = |g: &Genome| {
            let min_core = [
                22.0, 22.0, 22.0, 22.0, 22.0, 22.0, 21.0, 19.0, 16.6, 14.4, 14.3, 16.3,
            ];
            let others = (0..4).filter(|&i| g[i] != base[i]).count() as f64;
            Some(min_core[g[4]] + others)
        };
        let mut rng = Rng(6);
        let mut p = Planner::new(values, base.clone(), 22.0, probe_cap(10), 8, &mut rng);
        let done = drive(&mut p, 4, &lat);
        assert_eq!(
            done,
            [
                (with(&base, 4, 11), Origin::Probe(4)),
                (with(&base, 4, 8), Origin::Probe(4)),
                // Bisected towards the far end before any other knob moves.
                (with(&base, 4, 10), Origin::Probe(4)),
                // That helped: bisected again (between 8 and 10).
                (with(&base, 4, 9), Origin::Probe(4)),
            ]
        );
        assert_eq!(p.pop[0], (with(&base, 4, 10), 14.3));
        // Hemmed in: on to the next knob.
        let next = drive(&mut p, 1, &lat);
        assert_eq!(next[0].1, Origin::Probe(0));
    }

    #[test]
    fn a_knob_whose_far_end_hurts_a_lot_gets_its_midpoint_at_once() {
        let (values, base) = knobs();
        // One core (the core count's far end) triples the latency; half
        // the cores is the best. Other far ends hurt a little.
        let lat = |g: &Genome| {
            let cores = match g[2] {
                0 => 30.0,
                47 => 10.0,
                _ => 8.0,
            };
            let others = (0..5).filter(|&i| i != 2 && g[i] != base[i]).count() as f64;
            Some(cores + others * 0.5)
        };
        let mut rng = Rng(3);
        let mut p = Planner::new(values, base.clone(), 10.0, probe_cap(10), 8, &mut rng);
        let done = drive(&mut p, 4, &lat);
        let moves = probe_moves(&done);
        // Per-core minimum and tile far ends (a little slower: on to the
        // next knob), the core count's far end (three times slower: its
        // midpoint at once, before the split unit's far end).
        assert_eq!(moves, [(4, 11), (0, 0), (2, 0), (2, 23)]);
        assert_eq!(p.pop[0].1, 8.0);
    }

    #[test]
    fn a_knob_overridden_by_another_is_not_moved_inside_a_box_seen_flat() {
        let (values, base) = knobs();
        // Cores used: the core count knob, capped by the per-core minimum
        // (1 MiB over cores of at least that many bytes); latency depends
        // on the cores used and the tile only. Above the cap, the core
        // count is overridden.
        let lat = |g: &Genome| {
            let cap = (1usize << 20).div_ceil(32 << g[4]);
            let cores = (g[2] + 1).min(cap) as f64;
            Some(4.0 + 64.0 / cores + cores / 4.0 + (6 - g[0]) as f64 * 0.1)
        };
        let mut rng = Rng(8);
        let base_latency = lat(&base).unwrap();
        let mut p = Planner::new(
            values,
            base.clone(),
            base_latency,
            probe_cap(20),
            8,
            &mut rng,
        );
        let mut seen = BTreeSet::from([base.clone()]);
        let mut evaluated = 0;
        while evaluated < 20 {
            let (g, _, origin) = p.propose(&mut rng);
            if seen.contains(&g) {
                p.assume(&g, origin);
                continue;
            }
            seen.insert(g.clone());
            // Never a candidate whose latency is known: no box learnt so
            // far holds it.
            assert!(!p.redundant(&g), "{g:?} {:?}", p.flat);
            for (lo, hi, _) in &p.flat {
                assert!(!(0..5).all(|i| lo[i] <= g[i] && g[i] <= hi[i]));
            }
            p.record(&g, origin, lat(&g));
            evaluated += 1;
        }
        // Boxes were learnt and candidates skipped for them (the core
        // count above the cap, the split unit and buffers, which never
        // matter), and none holds a measurement of another latency.
        assert!(!p.flat.is_empty());
        assert!(p.assumed > 0, "{p:?}", p = p.flat);
        for (lo, hi, l) in &p.flat {
            for (m, lm) in &p.measured {
                if (0..5).all(|i| lo[i] <= m[i] && m[i] <= hi[i]) {
                    assert!((l - lm).abs() < 1e-9, "{lo:?} {hi:?} {m:?}");
                }
            }
        }
        // The search still finds the best core count's neighbourhood.
        assert!(p.pop[0].1 < base_latency * 0.9, "{:?}", p.pop[0]);
    }

    #[test]
    fn the_noise_tolerance_follows_the_spread_of_the_samples() {
        assert_eq!(noise_tolerance(&[10.0; 10]), SAME_LATENCY);
        assert_eq!(noise_tolerance(&[10.0]), SAME_LATENCY);
        assert_eq!(noise_tolerance(&[]), SAME_LATENCY);
        // About 1 % spread over 10 samples: the medians of two such
        // measurements differ by about 0.6 % (one standard error), the
        // tolerance is twice that.
        let noisy: Vec<f64> = (0..10)
            .map(|i| 10.0 + if i % 2 == 0 { 0.1 } else { -0.1 })
            .collect();
        let tol = noise_tolerance(&noisy);
        assert!(tol > 0.008 && tol < 0.02, "{tol}");
        // Within that tolerance a move is no improvement, and nothing is
        // learnt flat from measurements that only agree within noise.
        let (values, base) = knobs();
        let mut rng = Rng(1);
        let mut p = Planner::new(values, base.clone(), 10.0, 5, 8, &mut rng).with_tolerance(tol);
        p.record(&with(&base, 4, 11), Origin::Probe(4), Some(9.95));
        assert!(p.improving().is_empty());
        assert!(!p.matters[4]);
        p.record(&with(&base, 0, 0), Origin::Probe(0), Some(9.0));
        assert_eq!(p.improving().len(), 1);
        assert!(p.flat.is_empty());
        assert!(!p.redundant(&with(&base, 4, 10)));
    }

    #[test]
    fn the_generator_is_deterministic_and_in_range() {
        let mut a = Rng(7);
        let mut b = Rng(7);
        for _ in 0..100 {
            let x = a.below(10);
            assert_eq!(x, b.below(10));
            assert!(x < 10);
        }
    }
}
