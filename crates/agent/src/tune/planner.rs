//! Stage II's evolutionary schedule, free of evaluation: which knobs the
//! one-knob round moves and how, when improving moves are recombined, and
//! how children are bred. [`super::search`] evaluates what it proposes and
//! tells it the latencies.

use super::Genome;
use crate::rng::Rng;
use std::collections::{BTreeMap, BTreeSet};

/// The order in which the one-knob round visits the knobs: widest first
/// (most orders of magnitude spanned, then most admitted values: tile
/// sizes and core counts before buffer counts and flags), ties in seeded
/// random order. Knobs with a single admitted value are left out.
pub(super) fn knob_order(values: &[Vec<i64>], rng: &mut Rng) -> Vec<usize> {
    let width = |vals: &Vec<i64>| -> f64 {
        let n = vals.len() as f64;
        let (lo, hi) = match (vals.first(), vals.last()) {
            (Some(&lo), Some(&hi)) => (lo, hi),
            _ => return 0.0,
        };
        let span = if lo > 0 {
            (hi as f64 / lo as f64).log2()
        } else {
            n.log2()
        };
        span.max(0.0) + n.log2() / 8.0
    };
    let mut order: Vec<(usize, f64, u64)> = values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.len() > 1)
        .map(|(i, v)| (i, width(v), rng.next_u64()))
        .collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    order.into_iter().map(|(i, _, _)| i).collect()
}

/// Where a candidate of the search comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// A one-knob move from the base.
    Probe(usize),
    /// The improving one-knob moves applied together.
    Recombined,
    /// A child of the population (crossover and mutation).
    Child,
    /// A uniform random assignment (the baseline).
    Random,
}

/// The evolutionary schedule, free of evaluation: it proposes candidates
/// and is told their latencies.
///
/// 1. The one-knob round moves one knob of the base at a time, widest
///    knobs first ([`knob_order`]), each knob adaptively
///    ([`Planner::next_move`]: far end, then the near end when the far one
///    changed nothing, else the midpoint; then bisection towards its best
///    value, rounded towards it), every knob once before any knob twice
///    except that a first move that helped, changed nothing or changed the
///    latency a lot is followed by the knob's second move at once, and the
///    most improving knob is
///    bisected at once while its bisection keeps paying
///    ([`Planner::next_probe`]). It uses at most `probe_cap` evaluations
///    (about half the allowance), so that operators with many knobs keep
///    evaluations for combinations.
/// 2. As soon as two knobs have an improving move, the candidate that
///    applies every knob's best improving move together is proposed (ahead
///    of the remaining one-knob moves); when it is refused or no faster
///    than the best single move, the combination of one move fewer (the
///    least improving one dropped) follows.
/// 3. Then children: two parents by binary tournament among the
///    population members faster than the base (as fast when none is; the population:
///    the fastest correct candidates), uniform crossover with probability
///    1/2, then mutation of at least one knob (a step of up to a quarter
///    of its range, or a random value with probability 0.15), preferring
///    knobs whose one-knob moves changed the latency (a knob that left it
///    unchanged everywhere is mutated only alongside another, at half the
///    rate).
///
/// Throughout, a candidate whose latency is already known is not proposed
/// but learnt from at once ([`Planner::assume`]): one measured before, or
/// one inside a *flat box* ([`Planner::flat`]): noise-free, two candidates
/// that measured the same latency ran the same plan, so the knobs they
/// differ in were overridden by another knob (a core count above the cap
/// a per-core minimum sets) or ignored, and every candidate between them
/// is taken to run it too (unless one measured otherwise). "Faster" and
/// "the same" are judged within the noise of the incumbent's samples
/// ([`noise_tolerance`]), so noise does not steer the schedule.
pub(super) struct Planner {
    pub(super) values: Vec<Vec<i64>>,
    pub(super) base: Genome,
    pub(super) base_latency: f64,
    /// The knobs, widest first ([`knob_order`]).
    pub(super) order: Vec<usize>,
    /// Each knob's one-knob moves so far: (value index, µs when measured
    /// and correct).
    pub(super) probe_log: Vec<Vec<(usize, Option<f64>)>>,
    pub(super) probe_cap: u32,
    pub(super) probes_spent: u32,
    /// Each knob's fastest correct one-knob move: (value index, µs).
    pub(super) best_move: Vec<Option<(usize, f64)>>,
    /// Each knob: some one-knob move of it changed the latency.
    pub(super) matters: Vec<bool>,
    /// Each knob: some one-knob move of it was measured.
    pub(super) probed: Vec<bool>,
    /// Recombinations already proposed.
    pub(super) recombined: BTreeSet<Genome>,
    /// The fastest recombination measured, µs.
    pub(super) best_recombined: f64,
    /// The fastest correct candidates, fastest first.
    pub(super) pop: Vec<(Genome, f64)>,
    pub(super) population: usize,
    /// Relative latency difference within which two measurements count
    /// as the same ([`SAME_LATENCY`] when measurements are noise-free;
    /// see [`noise_tolerance`]).
    pub(super) tol: f64,
    /// Every correct candidate measured (the base included), µs.
    pub(super) measured: BTreeMap<Genome, f64>,
    /// Flat boxes: two measured candidates with the same latency span a
    /// box (each knob between its two values) in which the knobs that
    /// differ were overridden or ignored; every candidate inside is taken
    /// to have that latency and is not evaluated ([`Planner::redundant`]).
    /// Learnt only from noise-free measurements, where the same latency
    /// means the same plan. (lower corner, upper corner, µs)
    pub(super) flat: Vec<(Genome, Genome, f64)>,
    /// Candidates learnt from without evaluation because a flat box holds
    /// them ([`Planner::assume`]).
    pub(super) assumed: u32,
}

/// Relative latency difference below which a move "changed nothing"
/// when measurements are noise-free.
pub(super) const SAME_LATENCY: f64 = 1e-6;

/// Relative latency change of a knob's first move beyond which the knob
/// counts as sensitive: its second move (the midpoint) follows at once even
/// when the first hurt, since a knob that moves the latency that much
/// likely has its best value inside its range.
pub(super) const SENSITIVE: f64 = 0.25;

/// Children bred before one whose latency is not yet known is given up.
const CHILD_TRIES: usize = 32;

/// The relative difference within which two latencies count as the same,
/// from the incumbent's latency samples: twice the standard error of the
/// difference of two medians of that many samples (the median's standard
/// error is about 1.25 σ/√n), at least [`SAME_LATENCY`]. Noise-free samples
/// give [`SAME_LATENCY`]: then only a byte-identical plan measures the same.
pub(super) fn noise_tolerance(samples: &[f64]) -> f64 {
    let n = samples.len();
    if n < 2 {
        return SAME_LATENCY;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[n / 2];
    if median <= 0.0 || !var.is_finite() {
        return SAME_LATENCY;
    }
    let se = 1.2533 * var.sqrt() / median / (n as f64).sqrt();
    (2.0 * std::f64::consts::SQRT_2 * se).max(SAME_LATENCY)
}

impl Planner {
    pub(super) fn new(
        values: Vec<Vec<i64>>,
        base: Genome,
        base_latency: f64,
        probe_cap: u32,
        population: usize,
        rng: &mut Rng,
    ) -> Planner {
        let order = knob_order(&values, rng);
        let k = values.len();
        let measured = BTreeMap::from([(base.clone(), base_latency)]);
        Planner {
            pop: vec![(base.clone(), base_latency)],
            values,
            base,
            base_latency,
            order,
            probe_log: vec![Vec::new(); k],
            probe_cap,
            probes_spent: 0,
            best_move: vec![None; k],
            matters: vec![false; k],
            probed: vec![false; k],
            recombined: BTreeSet::new(),
            best_recombined: f64::INFINITY,
            population: population.max(2),
            tol: SAME_LATENCY,
            measured,
            flat: Vec::new(),
            assumed: 0,
        }
    }

    /// The same planner judging "same" and "faster" within relative
    /// tolerance `tol` (at least [`SAME_LATENCY`]).
    pub(super) fn with_tolerance(mut self, tol: f64) -> Planner {
        self.tol = tol.max(SAME_LATENCY);
        self
    }

    /// `a` and `b` are the same latency within the tolerance.
    pub(super) fn same(&self, a: f64, b: f64) -> bool {
        (a - b).abs() <= self.tol * a.max(b)
    }

    /// `a` is faster than `than` beyond the tolerance.
    pub(super) fn faster(&self, a: f64, than: f64) -> bool {
        a < than * (1.0 - self.tol)
    }

    /// `g`'s latency is already known without evaluating it: it was
    /// measured, or it lies in a flat box ([`Planner::flat`]), so it would
    /// teach nothing.
    pub(super) fn redundant(&self, g: &Genome) -> bool {
        self.known_latency(g).is_some()
    }

    /// The latency `g` is known to have (measured, or its flat box's).
    pub(super) fn known_latency(&self, g: &Genome) -> Option<f64> {
        if let Some(l) = self.measured.get(g) {
            return Some(*l);
        }
        let inside = |(lo, hi, _): &&(Genome, Genome, f64)| {
            g.iter()
                .zip(lo.iter().zip(hi))
                .all(|(v, (a, b))| a <= v && v <= b)
        };
        self.flat.iter().find(inside).map(|b| b.2)
    }

    /// Learns flat boxes from a new measurement of `g` (noise-free
    /// measurements only): with every measured candidate of the same
    /// latency, the box the two span, unless it holds a measured candidate
    /// of another latency; known boxes that hold `g` and another latency
    /// are dropped.
    fn learn_flat(&mut self, g: &Genome, latency: f64) {
        if self.tol > SAME_LATENCY {
            return;
        }
        let mut found = Vec::new();
        for (h, &lh) in &self.measured {
            if h == g || !self.same(latency, lh) {
                continue;
            }
            let lo: Genome = g.iter().zip(h).map(|(a, b)| *a.min(b)).collect();
            let hi: Genome = g.iter().zip(h).map(|(a, b)| *a.max(b)).collect();
            found.push((lo, hi, lh));
        }
        // A box that holds a measured candidate of another latency is not
        // flat; nor is a known box that the new measurement contradicts.
        let holds_other = |lo: &Genome, hi: &Genome, l: f64| {
            self.measured.iter().any(|(m, &lm)| {
                !self.same(l, lm)
                    && m.iter()
                        .zip(lo.iter().zip(hi))
                        .all(|(v, (a, b))| a <= v && v <= b)
            })
        };
        found.retain(|(lo, hi, l)| !holds_other(lo, hi, *l));
        let tol = self.tol;
        self.flat.retain(|(lo, hi, l)| {
            (latency - l).abs() <= tol * latency.max(*l)
                || !g
                    .iter()
                    .zip(lo.iter().zip(hi))
                    .all(|(v, (a, b))| a <= v && v <= b)
        });
        for b in found {
            if !self.flat.iter().any(|f| f.0 == b.0 && f.1 == b.1) {
                self.flat.push(b);
            }
        }
    }

    /// Knobs with an improving one-knob move, most improving first.
    pub(super) fn improving(&self) -> Vec<(usize, usize, f64)> {
        let mut out: Vec<(usize, usize, f64)> = self
            .best_move
            .iter()
            .enumerate()
            .filter_map(|(k, m)| m.map(|(v, l)| (k, v, l)))
            .filter(|(_, _, l)| self.faster(*l, self.base_latency))
            .collect();
        out.sort_by(|a, b| a.2.total_cmp(&b.2));
        out
    }

    /// The next recombination to try, if any: every improving move
    /// together when that assignment is new; otherwise, while no
    /// recombination has beaten the best single move, one move fewer at a
    /// time (the least improving dropped).
    pub(super) fn recombination(&mut self) -> Option<Genome> {
        let imp = self.improving();
        if imp.len() < 2 {
            return None;
        }
        let combo = |m: usize| {
            let mut g = self.base.clone();
            for &(k, v, _) in &imp[..m] {
                g[k] = v;
            }
            g
        };
        let all = combo(imp.len());
        if self.recombined.insert(all.clone()) {
            return Some(all);
        }
        if self.best_recombined < imp[0].2 {
            return None;
        }
        for m in (2..imp.len()).rev() {
            let g = combo(m);
            if self.recombined.insert(g.clone()) {
                return Some(g);
            }
        }
        None
    }

    /// The next candidate and the parent it was derived from.
    /// Recombinations and one-knob moves whose latency is already known
    /// (measured, or inside a flat box: [`Planner::redundant`]) are
    /// learnt from at once ([`Planner::assume`]) and not proposed.
    pub(super) fn propose(&mut self, rng: &mut Rng) -> (Genome, Option<Genome>, Origin) {
        loop {
            let (g, origin) = if let Some(g) = self.recombination() {
                (g, Origin::Recombined)
            } else if self.probes_spent < self.probe_cap {
                match self.next_probe() {
                    Some((k, v)) => {
                        let mut g = self.base.clone();
                        g[k] = v;
                        (g, Origin::Probe(k))
                    }
                    None => break,
                }
            } else {
                break;
            };
            if self.redundant(&g) {
                self.assume(&g, origin);
                continue;
            }
            return (g, Some(self.base.clone()), origin);
        }
        // A child whose latency is already known (measured, or inside a
        // flat box) is bred again, a few times.
        let mut bred = None;
        for _ in 0..CHILD_TRIES {
            let p1 = self.tournament(rng).clone();
            let mut child = p1.clone();
            if rng.chance(0.5) {
                let p2 = self.tournament(rng).clone();
                for (i, c) in child.iter_mut().enumerate() {
                    if rng.chance(0.5) {
                        *c = p2[i];
                    }
                }
            }
            self.mutate(&mut child, rng);
            let fresh = !self.redundant(&child);
            bred = Some((child, p1));
            if fresh {
                break;
            }
        }
        let (child, p1) = bred.unwrap_or_else(|| (self.base.clone(), self.base.clone()));
        (child, Some(p1), Origin::Child)
    }

    pub(super) fn same_as_base(&self, latency: f64) -> bool {
        self.same(latency, self.base_latency)
    }

    /// Knob `k`'s next one-knob move (a value index), given its moves so
    /// far: first the far end of its range; then, when that changed
    /// nothing (the knob is saturated that way), the near end and the
    /// midpoint towards it; otherwise the midpoint towards the far end
    /// (between a move that helped and the base, or short of one that
    /// hurt), then the near end; last one value up and down.
    pub(super) fn next_move(&self, k: usize) -> Option<usize> {
        let n = self.values[k].len();
        if n < 2 {
            return None;
        }
        let last = n - 1;
        let cur = self.base[k].min(last);
        let (far, near) = if cur >= last - cur {
            (0, last)
        } else {
            (last, 0)
        };
        let log = &self.probe_log[k];
        if log.len() >= 2 {
            if let Some(v) = self.refine_move(k) {
                return Some(v);
            }
        }
        let seq: Vec<usize> = match log.first() {
            None => vec![far],
            Some((_, Some(l))) if self.same_as_base(*l) => {
                vec![near, (cur + near) / 2, cur + 1, cur.saturating_sub(1)]
            }
            Some(_) => vec![
                (cur + far) / 2,
                near,
                (cur + near) / 2,
                cur + 1,
                cur.saturating_sub(1),
            ],
        };
        seq.into_iter()
            .find(|&v| v < n && v != cur && !log.iter().any(|(x, _)| *x == v))
    }

    /// Knob `k`'s best measured move when it beats the base: (value
    /// index, µs).
    pub(super) fn best_of(&self, k: usize) -> Option<(usize, f64)> {
        self.probe_log[k]
            .iter()
            .filter_map(|(v, l)| l.map(|l| (*v, l)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .filter(|(_, l)| self.faster(*l, self.base_latency))
    }

    /// Bisection along knob `k` once one of its moves beat the base: the
    /// midpoint between its best value and the nearest value tried on the
    /// side with the wider gap (on a tie, the side whose neighbour was
    /// faster); None when the best is hemmed in by values tried.
    pub(super) fn refine_move(&self, k: usize) -> Option<usize> {
        let (best, _) = self.best_of(k)?;
        let log = &self.probe_log[k];
        let cur = self.base[k];
        let latency = |v: usize| -> f64 {
            if v == cur {
                return self.base_latency;
            }
            log.iter()
                .find(|(x, _)| *x == v)
                .and_then(|(_, l)| *l)
                .unwrap_or(f64::INFINITY)
        };
        let tried = || log.iter().map(|(v, _)| *v).chain([cur]);
        let left = tried().filter(|&v| v < best).max();
        let right = tried().filter(|&v| v > best).min();
        let gap = |nb: Option<usize>| nb.map_or(0, |v| v.abs_diff(best));
        let (gl, gr) = (gap(left), gap(right));
        let side = match (gl.cmp(&gr), left, right) {
            (std::cmp::Ordering::Greater, Some(l), _) => l,
            (std::cmp::Ordering::Less, _, Some(r)) => r,
            (std::cmp::Ordering::Equal, Some(l), Some(r)) => {
                if latency(l) <= latency(r) {
                    l
                } else {
                    r
                }
            }
            _ => return None,
        };
        if side.abs_diff(best) < 2 {
            return None;
        }
        // Rounded towards the best value.
        let mid = if side < best {
            (side + best).div_ceil(2)
        } else {
            (side + best) / 2
        };
        (!log.iter().any(|(x, _)| *x == mid) && mid != cur).then_some(mid)
    }

    /// Knob `k`'s one-knob moves measured after its fastest one (0 when
    /// its latest move is its fastest).
    pub(super) fn moves_since_best(&self, k: usize) -> usize {
        let log = &self.probe_log[k];
        let best = log
            .iter()
            .enumerate()
            .filter_map(|(i, (_, l))| l.map(|l| (i, l)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        best.map_or(log.len(), |(i, _)| log.len() - 1 - i)
    }

    /// The next one-knob move: the knob with the fewest moves so far,
    /// widest first, except that some moves come at once:
    /// - a knob's second move when its first helped (worth refining),
    ///   changed nothing (worth trying the other way) or changed the
    ///   latency by more than [`SENSITIVE`] (its best value is likely
    ///   inside its range);
    /// - a bisection step of a knob whose latest move beat the base and
    ///   all its earlier moves;
    /// - a bisection step of the most improving knob (its best move is the
    ///   fastest one-knob move so far) while at most one of its moves since
    ///   its best failed to improve on it: the best value of the knob that
    ///   matters most is narrowed down before narrower knobs are probed
    ///   (a far end that helped and a midpoint that helped less leave the
    ///   best between them).
    pub(super) fn next_probe(&mut self) -> Option<(usize, usize)> {
        let top = self.improving().first().map(|m| m.0);
        let mut pick: Option<((usize, usize), usize, usize)> = None;
        for (rank, &k) in self.order.iter().enumerate() {
            let Some(v) = self.next_move(k) else {
                continue;
            };
            let log = &self.probe_log[k];
            let first = log.len() == 1
                && log[0].1.is_some_and(|l| {
                    self.faster(l, self.base_latency)
                        || self.same_as_base(l)
                        || (l - self.base_latency).abs() > SENSITIVE * self.base_latency
                });
            // The latest move beat the base and every earlier move.
            let progressing = log.len() >= 2
                && log.last().and_then(|(_, l)| *l).is_some_and(|last| {
                    log[..log.len() - 1]
                        .iter()
                        .filter_map(|(_, l)| *l)
                        .all(|l| self.faster(last, l))
                        && self.faster(last, self.base_latency)
                });
            let refining = top == Some(k)
                && log.len() >= 2
                && self.moves_since_best(k) <= 1
                && self.refine_move(k) == Some(v);
            let urgent = first || progressing || refining;
            let key = (if urgent { 0 } else { log.len() }, rank);
            if pick.as_ref().is_none_or(|(best, _, _)| key < *best) {
                pick = Some((key, k, v));
            }
        }
        let (_, k, v) = pick?;
        self.probe_log[k].push((v, None));
        Some((k, v))
    }

    /// Binary tournament among the members faster than the base, or when
    /// there are none, as fast (a move that made things worse is no
    /// parent).
    pub(super) fn tournament(&self, rng: &mut Rng) -> &Genome {
        let faster = self
            .pop
            .iter()
            .take_while(|m| self.faster(m.1, self.base_latency))
            .count();
        let fit = if faster > 0 {
            faster
        } else {
            self.pop
                .iter()
                .take_while(|m| !self.faster(self.base_latency, m.1))
                .count()
                .max(1)
        };
        let a = &self.pop[rng.below(fit)];
        let b = &self.pop[rng.below(fit)];
        if a.1 <= b.1 {
            &a.0
        } else {
            &b.0
        }
    }

    pub(super) fn mutate(&self, g: &mut Genome, rng: &mut Rng) {
        let movable: Vec<usize> = (0..g.len()).filter(|&i| self.values[i].len() > 1).collect();
        if movable.is_empty() {
            return;
        }
        // Knobs that matter (or are not known not to).
        let active: Vec<usize> = movable
            .iter()
            .copied()
            .filter(|&i| self.matters[i] || !self.probed[i])
            .collect();
        let pick_from = if active.is_empty() { &movable } else { &active };
        let forced = pick_from[rng.below(pick_from.len())];
        // Alongside it, each other knob with probability 1/k, halved for a
        // knob whose one-knob moves changed nothing.
        for &i in &movable {
            let odds = if active.contains(&i) { 1.0 } else { 0.5 } / movable.len() as f64;
            if i != forced && !rng.chance(odds) {
                continue;
            }
            let n = self.values[i].len();
            g[i] = if rng.chance(0.15) {
                rng.below(n)
            } else {
                let reach = (n / 4).max(1);
                let step = 1 + rng.below(reach);
                if rng.coin() {
                    (g[i] + step).min(n - 1)
                } else {
                    g[i].saturating_sub(step)
                }
            };
        }
    }

    /// Tells the planner the outcome of an evaluated candidate (`None`:
    /// not correct).
    pub(super) fn record(&mut self, g: &Genome, origin: Origin, latency: Option<f64>) {
        if let Origin::Probe(_) = origin {
            self.probes_spent += 1;
        }
        self.learn(g, origin, latency);
    }

    /// Tells the planner that a proposed candidate was refused without an
    /// evaluation because its host tiling fails (`screen`): learnt from
    /// as an infeasible one, without spending a probe.
    pub(super) fn refused(&mut self, g: &Genome, origin: Origin) {
        self.learn(g, origin, None);
    }

    /// Tells the planner that a proposed candidate was not evaluated
    /// because its latency is already known ([`Planner::redundant`]): it
    /// is learnt from as if measured, without spending an evaluation.
    /// Returns the known latency.
    pub(super) fn assume(&mut self, g: &Genome, origin: Origin) -> Option<f64> {
        let latency = self.known_latency(g);
        if latency.is_some() {
            if !self.measured.contains_key(g) {
                self.assumed += 1;
            }
            self.learn(g, origin, latency);
        }
        latency
    }

    fn learn(&mut self, g: &Genome, origin: Origin, latency: Option<f64>) {
        match origin {
            Origin::Probe(k) => {
                if let Some(e) = self.probe_log[k].iter_mut().find(|(v, _)| *v == g[k]) {
                    e.1 = latency;
                }
                if let Some(l) = latency {
                    self.probed[k] = true;
                    if !self.same_as_base(l) {
                        self.matters[k] = true;
                    }
                    if self.best_move[k].is_none_or(|(_, b)| l < b) {
                        self.best_move[k] = Some((g[k], l));
                    }
                }
            }
            Origin::Recombined => {
                if let Some(l) = latency {
                    self.best_recombined = self.best_recombined.min(l);
                }
            }
            Origin::Child | Origin::Random => {}
        }
        if let Some(l) = latency {
            self.learn_flat(g, l);
            if self.measured.insert(g.clone(), l).is_none() {
                self.pop.push((g.clone(), l));
                self.pop.sort_by(|a, b| a.1.total_cmp(&b.1));
                self.pop.truncate(self.population);
            }
        }
    }
}

/// How many evaluations the one-knob round may use out of `allowance`:
/// about half.
pub(super) fn probe_cap(allowance: u32) -> u32 {
    allowance.div_ceil(2).max(1)
}
