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
//! - generation 0: the incumbent's neighbours (each knob one value up or
//!   down, or at an end of its range), in a seeded random order;
//! - then children: two parents drawn by binary tournament from the
//!   population (the `population` fastest correct candidates), uniform
//!   crossover with probability 1/2, then mutation of at least one knob
//!   (a step of up to 1/8 of the knob's range, or a random value with
//!   probability 0.3);
//! - a candidate that violates a constraint is refused without evaluation;
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
//!   sources are answered by the run store without charge);
//! - at the end the best candidate is measured again on fresh inputs and
//!   noise ([`OpSession::remeasure_or_replay`]) and declared only when that
//!   measurement is faster than the incumbent beyond noise.
//!
//! An LLM proposer may also edit the region's branch logic
//! (`Proposer::tiling_edits`): those edits are judged first, and an
//! accepted one becomes the base whose knobs are then searched.
//!
//! [`random_search`] is the baseline the benchmark compares with: uniform
//! random assignments, deduplicated and constraint-checked, no learning.

use crate::motif::Sources;
use crate::outcome::Step;
use crate::proposer::{Feedback, Proposer, TilingEditRequest};
use crate::refine::{affordable, notify, settle, Tried};
use crate::rng::Rng;
use crate::session::{Action, LogEntry, OpSession, Phase, Trial};
use crate::AgentError;
use ascendopt_harness::store::Stage;
use ascendopt_op::package::OpPackage;
use ascendopt_op::tiling::TilingSpace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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
    /// Why the search stopped.
    pub stopped: String,
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
        let pkg = OpPackage::load(dir).map_err(|e| AgentError::Package {
            dir: dir.to_path_buf(),
            message: e.to_string(),
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

    /// `base` with the knobs set to `g`; Err when a constraint refuses it.
    fn render(&self, base: &Sources, g: &Genome) -> Result<Sources, String> {
        let files = self
            .tiling
            .render_with(&self.assignment(g))
            .map_err(|e| e.to_string())?;
        let mut out = base.clone();
        for (path, text) in files {
            let rel = path.strip_prefix(&self.dir).unwrap_or(&path);
            let key = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.set(&key, text);
        }
        Ok(out)
    }
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
    let mut incumbent = incumbent;
    let mut steps = Vec::new();
    let mut attempts = 0u32;
    // Branch-logic edits of the tiling region (LLM proposers only).
    let edits = proposer.tiling_edits(&TilingEditRequest {
        current: &incumbent.sources,
        op: session.op(),
        profile: incumbent.profile(),
        feedback: &Feedback::default(),
    })?;
    for proposal in edits {
        if attempts + 1 >= cfg.max_attempts {
            break;
        }
        let sources = match proposal.candidate {
            Ok(s) => s,
            Err(reason) => {
                if session.remaining(Stage::Online) == 0 {
                    break;
                }
                session.charge_failed_proposal(Phase::Tune, proposal.action, &reason)?;
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
        if trial.is_correct() && OpPackage::load(&trial.dir).is_ok() {
            let d = session.faster(&trial, &incumbent);
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
    Ok(out)
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

/// Generation 0: neighbours of `base` (one knob one value up or down, or
/// at an end of its range), shuffled.
fn neighbours(space: &KnobSpace, base: &Genome, rng: &mut Rng) -> Vec<Genome> {
    let mut out: Vec<Genome> = Vec::new();
    for (i, vals) in space.values.iter().enumerate() {
        let n = vals.len();
        let cur = base[i];
        let mut moves = Vec::new();
        if cur + 1 < n {
            moves.push(cur + 1);
        }
        if cur > 0 {
            moves.push(cur - 1);
        }
        if n > 0 {
            moves.push(0);
            moves.push(n - 1);
        }
        for m in moves {
            if m != cur {
                let mut g = base.clone();
                g[i] = m;
                if !out.contains(&g) {
                    out.push(g);
                }
            }
        }
    }
    for i in (1..out.len()).rev() {
        let j = rng.below(i + 1);
        out.swap(i, j);
    }
    out
}

fn tournament<'m>(pop: &'m [Member], rng: &mut Rng) -> &'m Member {
    let a = &pop[rng.below(pop.len())];
    let b = &pop[rng.below(pop.len())];
    if a.latency <= b.latency {
        a
    } else {
        b
    }
}

fn mutate(space: &KnobSpace, g: &mut Genome, rng: &mut Rng) {
    let k = g.len();
    let movable: Vec<usize> = (0..k).filter(|&i| space.values[i].len() > 1).collect();
    if movable.is_empty() {
        return;
    }
    let forced = movable[rng.below(movable.len())];
    for &i in &movable {
        if i != forced && !rng.chance(1.0 / movable.len() as f64) {
            continue;
        }
        let n = space.values[i].len();
        let new = if rng.chance(0.3) {
            rng.below(n)
        } else {
            let reach = (n / 8).max(1);
            let step = 1 + rng.below(reach);
            if rng.chance(0.5) {
                (g[i] + step).min(n - 1)
            } else {
                g[i].saturating_sub(step)
            }
        };
        g[i] = new;
    }
}

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
        stopped: String::new(),
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
    let base = space.current();
    tried.insert(&incumbent.sources);
    let mut seen: BTreeSet<Genome> = BTreeSet::from([base.clone()]);
    let mut regions: Vec<Region> = Vec::new();
    let mut skipped: BTreeSet<Genome> = BTreeSet::new();
    let mut pop: Vec<Member> = vec![Member {
        genome: base.clone(),
        latency: inc_latency,
        trial: incumbent.clone(),
    }];
    let mut queue: Vec<Genome> = match strategy {
        Strategy::Evolution => neighbours(&space, &base, &mut rng),
        Strategy::Random => Vec::new(),
    };
    queue.reverse();
    let reserve = u32::from(strategy == Strategy::Evolution);
    let limit = cfg.max_attempts.saturating_sub(reserve);
    let population = cfg.population.max(2);

    let mut since_best = 0u32;
    out.stopped = loop {
        if out.attempts >= limit {
            break "allowance used".to_string();
        }
        if let Some(p) = cfg.patience {
            if since_best >= p {
                break format!("no new best in {p} attempts");
            }
        }
        // Find a fresh, admissible candidate.
        let mut found: Option<(Genome, Option<Genome>, Sources, Option<usize>)> = None;
        for _ in 0..2000 {
            let (g, parent) = match strategy {
                Strategy::Random => (
                    space
                        .values
                        .iter()
                        .map(|v| rng.below(v.len()))
                        .collect::<Genome>(),
                    None,
                ),
                Strategy::Evolution => match queue.pop() {
                    Some(g) => (g, Some(base.clone())),
                    None => {
                        let p1 = tournament(&pop, &mut rng).genome.clone();
                        let mut child = p1.clone();
                        if pop.len() >= 2 && rng.chance(0.5) {
                            let p2 = tournament(&pop, &mut rng).genome.clone();
                            for (i, c) in child.iter_mut().enumerate() {
                                if rng.chance(0.5) {
                                    *c = p2[i];
                                }
                            }
                        }
                        mutate(&space, &mut child, &mut rng);
                        (child, Some(p1))
                    }
                },
            };
            if seen.contains(&g) {
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
                    found = Some((g, parent, s, probe));
                    break;
                }
                Ok(_) => continue,
                Err(_) => {
                    out.skipped_constraint += 1;
                    continue;
                }
            }
        }
        let Some((genome, parent, sources, probe)) = found else {
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
            summary: space.describe(&genome),
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
        match trial.latency_us() {
            Some(lat) => {
                let best = pop.iter().map(|m| m.latency).fold(f64::INFINITY, f64::min);
                if lat < best {
                    since_best = 0;
                    // Not yet the incumbent: declared only after the
                    // re-measurement at the end.
                    settle(
                        session,
                        on_attempt,
                        false,
                        format!("new best of the population ({lat:.3} us < {best:.3} us)"),
                    );
                } else {
                    settle(
                        session,
                        on_attempt,
                        false,
                        format!("{lat:.3} us, best {best:.3} us"),
                    );
                }
                pop.push(Member {
                    genome,
                    latency: lat,
                    trial,
                });
                pop.sort_by(|a, b| a.latency.total_cmp(&b.latency));
                pop.truncate(population);
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
                    out.regions.push(words);
                    regions.push(region);
                } else {
                    settle(session, on_attempt, false, format!("infeasible: {verdict}"));
                }
            }
        }
    };

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
    let best = pop[0].clone();
    out.best_found_us = Some(best.latency);
    out.best_found = Some(best.trial.clone());
    if best.genome == base || best.latency >= inc_latency {
        return Ok(out);
    }
    match strategy {
        Strategy::Random => {
            out.incumbent = best.trial;
        }
        Strategy::Evolution => {
            let can = session.remaining(Stage::Online) > 0 || {
                let n = session
                    .context()
                    .store
                    .evaluations(session.context().run, session.op())?
                    .iter()
                    .filter(|e| e.source_hash == best.trial.evaluated.source_hash)
                    .count();
                n >= 2
            };
            if !can {
                out.stopped
                    .push_str("; no budget left to re-measure the best, incumbent kept");
                return Ok(out);
            }
            let action = Action {
                proposer: "tune".into(),
                motif: None,
                summary: format!("re-measure {}", space.describe(&best.genome)),
                entries: Vec::new(),
            };
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
            let d = session.faster(&again, &incumbent);
            settle(session, on_attempt, d.faster, d.reason.clone());
            if d.faster {
                out.steps.push(Step {
                    phase: Phase::Tune,
                    action: Action {
                        summary: space.describe(&best.genome),
                        ..action
                    },
                    before_us: inc_latency,
                    after_us: again.latency_us().unwrap_or(best.latency),
                    reason: d.reason,
                    at_evaluation: u32::try_from(session.log().len()).unwrap_or(u32::MAX),
                });
                out.incumbent = again;
            }
        }
    }
    Ok(out)
}

/// Stage II against random search on one operator (the `bench-tiling`
/// benchmark): both start from the input kernel, measured once in each run
/// (not counted); Stage II gets `budget` evaluations in `tune_ctx`'s run
/// and random search `2 * budget` in `random_ctx`'s run (separate runs, so
/// neither gets the other's verdicts for free).
pub fn compare_with_random(
    tune_ctx: &crate::session::RunContext<'_>,
    random_ctx: &crate::session::RunContext<'_>,
    pkg: &OpPackage,
    budget: u32,
    seed: u64,
) -> Result<TilingComparison, AgentError> {
    let input = Sources::load(&pkg.dir)?;
    let baseline_action = Action {
        proposer: "input".into(),
        motif: None,
        summary: "the input operator".into(),
        entries: Vec::new(),
    };
    let run = |ctx: &crate::session::RunContext<'_>, evals: u32, random: bool| {
        let budgets = ascendopt_harness::ledger::BudgetConfig {
            rewind: 0,
            online: evals + 1,
        };
        let mut session = OpSession::open(ctx, pkg, budgets)?;
        let base = session.evaluate(Phase::Baseline, &input, baseline_action.clone())?;
        if !base.is_correct() {
            return Ok::<_, AgentError>((None, None, 0));
        }
        let mut tried = Tried::new();
        let cfg = TuneConfig::new(evals, seed);
        let out = if random {
            random_search(&mut session, base.clone(), &cfg, &mut tried, &mut |_| {})?
        } else {
            tune(
                &mut session,
                &mut NoEdits,
                base.clone(),
                &cfg,
                &mut tried,
                &mut |_| {},
            )?
        };
        let best = if random {
            out.best_found_us
        } else {
            out.incumbent.latency_us()
        };
        Ok((
            base.latency_us(),
            best,
            session.spent(Stage::Online).saturating_sub(1),
        ))
    };
    let (baseline_us, tune_us, tune_spent) = run(tune_ctx, budget, false)?;
    let (_, random_us, random_spent) = run(random_ctx, budget.saturating_mul(2), true)?;
    let ratio = match (tune_us, random_us) {
        (Some(t), Some(r)) if t > 0.0 => Some(r / t),
        _ => None,
    };
    Ok(TilingComparison {
        op: pkg.name().to_string(),
        baseline_us,
        tune_us,
        tune_spent,
        random_us,
        random_spent,
        ratio,
    })
}

/// One operator's result of [`compare_with_random`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TilingComparison {
    /// The operator.
    pub op: String,
    /// The input's latency, µs (None when it is not correct).
    pub baseline_us: Option<f64>,
    /// Stage II's declared latency, µs.
    pub tune_us: Option<f64>,
    /// Evaluations Stage II charged.
    pub tune_spent: u32,
    /// Random search's best latency, µs.
    pub random_us: Option<f64>,
    /// Evaluations random search charged.
    pub random_spent: u32,
    /// random / Stage II: at least 1 when Stage II with half the
    /// evaluations is at least as fast.
    pub ratio: Option<f64>,
}

/// A proposer with no tiling edits (knob search only).
struct NoEdits;

impl Proposer for NoEdits {
    fn name(&self) -> &str {
        "none"
    }
    fn removals(
        &mut self,
        _req: &crate::proposer::RemovalRequest<'_>,
    ) -> Result<Vec<crate::proposer::Proposal>, crate::proposer::ProposeError> {
        Ok(Vec::new())
    }
    fn rewrites(
        &mut self,
        _req: &crate::proposer::RewriteRequest<'_>,
    ) -> Result<Vec<crate::proposer::Proposal>, crate::proposer::ProposeError> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
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
