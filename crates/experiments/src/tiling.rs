//! Stage II against random search (`ascendopt bench-tiling`): both start
//! from the input kernel; Stage II with `budget` evaluations, random search
//! with twice as many, each in a run of its own.

use ascendopt_agent::attempts::Tried;
use ascendopt_agent::proposer::Proposer;
use ascendopt_agent::session::{Action, OpSession, Phase};
use ascendopt_agent::tune::{random_search, tune, TuneConfig};
use ascendopt_agent::{AgentError, PackageError};
use ascendopt_harness::store::Stage;
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;

/// Stage II against random search on one operator (the `bench-tiling`
/// benchmark): both start from the input kernel, measured once in each run
/// (not counted); Stage II gets `budget` evaluations in `tune_ctx`'s run
/// and random search `2 * budget` in `random_ctx`'s run (separate runs, so
/// neither gets the other's verdicts for free).
pub fn compare_with_random(
    tune_ctx: &ascendopt_agent::session::RunContext<'_>,
    random_ctx: &ascendopt_agent::session::RunContext<'_>,
    pkg: &OpPackage,
    budget: u32,
    seed: u64,
) -> Result<TilingComparison, AgentError> {
    let mut rows = compare_with_random_at(&[tune_ctx], random_ctx, pkg, &[budget], seed)?;
    rows.pop().ok_or_else(|| AgentError::Package {
        dir: pkg.dir.clone(),
        source: PackageError::Unusable("no comparison made".into()),
    })
}

/// [`compare_with_random`] at several budgets at once, one row per budget
/// (in the order given): Stage II runs once per budget, in
/// `tune_ctxs[i]`'s run for `budgets[i]` (one run each, so that no run
/// answers another's candidates from the store); random search runs
/// once with twice the largest budget, and its result at `2 * b` is the
/// best it had found after its first `2 * b` charged evaluations (random
/// search's choices do not depend on what it measures, so that is exactly
/// a run with `2 * b` evaluations).
pub fn compare_with_random_at(
    tune_ctxs: &[&ascendopt_agent::session::RunContext<'_>],
    random_ctx: &ascendopt_agent::session::RunContext<'_>,
    pkg: &OpPackage,
    budgets: &[u32],
    seed: u64,
) -> Result<Vec<TilingComparison>, AgentError> {
    if tune_ctxs.len() != budgets.len() {
        return Err(AgentError::Package {
            dir: pkg.dir.clone(),
            source: PackageError::Unusable(format!(
                "{} Stage II runs for {} budgets",
                tune_ctxs.len(),
                budgets.len()
            )),
        });
    }
    let input = Sources::load(&pkg.dir)?;
    let baseline_action = Action {
        proposer: "input".into(),
        motif: None,
        summary: "the input operator".into(),
        entries: Vec::new(),
    };
    // (input µs, best µs at each requested count, evaluations charged at
    // each requested count)
    type Run = (Option<f64>, Vec<Option<f64>>, Vec<u32>);
    let run = |ctx: &ascendopt_agent::session::RunContext<'_>,
               evals: u32,
               random: bool,
               counts: &[u32]|
     -> Result<Run, AgentError> {
        let budgets = ascendopt_harness::ledger::BudgetConfig {
            rewind: 0,
            online: evals + 1,
        };
        let mut session = OpSession::open(ctx, pkg, budgets)?;
        let base = session.evaluate(Phase::Baseline, &input, baseline_action.clone())?;
        if !base.is_correct() {
            return Ok((None, vec![None; counts.len()], vec![0; counts.len()]));
        }
        let mut tried = Tried::new();
        let cfg = TuneConfig::new(evals, seed);
        if random {
            random_search(&mut session, base.clone(), &cfg, &mut tried, &mut |_| {})?;
            // The best after the first `c` charged evaluations.
            let mut best = Vec::new();
            let mut spent = Vec::new();
            for &c in counts {
                let mut b = base.latency_us();
                let mut n = 0;
                for e in session.log() {
                    if e.phase != Phase::Tune || e.spent.saturating_sub(1) > c {
                        continue;
                    }
                    n = n.max(e.spent.saturating_sub(1));
                    if let Some(l) = e.latency_us {
                        b = Some(b.map_or(l, |x: f64| x.min(l)));
                    }
                }
                best.push(b);
                spent.push(n);
            }
            Ok((base.latency_us(), best, spent))
        } else {
            let out = tune(
                &mut session,
                &mut NoEdits,
                base.clone(),
                &cfg,
                &mut tried,
                &mut |_| {},
            )?;
            Ok((
                base.latency_us(),
                vec![out.incumbent.latency_us()],
                vec![session.spent(Stage::Online).saturating_sub(1)],
            ))
        }
    };
    let max = budgets.iter().copied().max().unwrap_or(0);
    let doubled: Vec<u32> = budgets.iter().map(|b| b.saturating_mul(2)).collect();
    let (_, random_us, random_spent) = run(random_ctx, max.saturating_mul(2), true, &doubled)?;
    let mut rows = Vec::new();
    for (i, &b) in budgets.iter().enumerate() {
        let (baseline_us, tune_us, tune_spent) = run(tune_ctxs[i], b, false, &[b])?;
        let tune_us = tune_us.first().copied().flatten();
        let random_us = random_us[i];
        let ratio = match (tune_us, random_us) {
            (Some(t), Some(r)) if t > 0.0 => Some(r / t),
            _ => None,
        };
        rows.push(TilingComparison {
            op: pkg.name().to_string(),
            budget: b,
            baseline_us,
            tune_us,
            tune_spent: tune_spent.first().copied().unwrap_or(0),
            random_us,
            random_spent: random_spent[i],
            ratio,
        });
    }
    Ok(rows)
}

/// One operator's result of [`compare_with_random`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TilingComparison {
    /// The operator.
    pub op: String,
    /// Stage II's evaluations (random search had twice as many).
    pub budget: u32,
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
pub(crate) struct NoEdits;

impl Proposer for NoEdits {
    fn name(&self) -> &str {
        "none"
    }
    fn removals(
        &mut self,
        _req: &ascendopt_agent::proposer::RemovalRequest<'_>,
    ) -> Result<Vec<ascendopt_agent::proposer::Proposal>, ascendopt_agent::ProposeError> {
        Ok(Vec::new())
    }
    fn rewrites(
        &mut self,
        _req: &ascendopt_agent::proposer::RewriteRequest<'_>,
    ) -> Result<Vec<ascendopt_agent::proposer::Proposal>, ascendopt_agent::ProposeError> {
        Ok(Vec::new())
    }
}
