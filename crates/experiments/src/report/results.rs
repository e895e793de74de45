//! `results.json`: what a benchmark run measured, in one document that the
//! Markdown and HTML reports are rendered from (and that tests compare them
//! with).
//!
//! Schema (version [`SCHEMA_VERSION`]):
//! - `meta`: the run's configuration (methods, budgets, operators, bank,
//!   seed, run ids in the run store) and notes (skipped methods, missing
//!   levels);
//! - `outcomes`: one [`OutcomeSummary`] per method × operator;
//! - `tables`: GM and fast_p by level and method ([`LevelRow`], Table 2
//!   style) and by method over every operator ([`MethodRow`], Table 3
//!   style);
//! - `curves`: per method, the GM over operators of the best speedup so
//!   far against online evaluations spent ([`MethodCurve`]).

use crate::report::stats::{GroupStats, Sample};
use ascendopt_agent::outcome::OpOutcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Version of the results.json layout.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// The run's configuration.
    pub meta: RunMeta,
    /// One per method × operator, methods in the order asked, operators by
    /// name.
    pub outcomes: Vec<OutcomeSummary>,
    /// The summary tables.
    pub tables: Tables,
    /// GM against evaluations spent, per method.
    pub curves: Vec<MethodCurve>,
}

/// The run's configuration and notes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunMeta {
    /// `ascendopt <version>`.
    pub tool: String,
    /// The device the evaluations ran on.
    pub device: String,
    /// Methods, in the order asked (skipped ones included).
    pub methods: Vec<String>,
    /// Online evaluations per operator and method.
    pub budget: u32,
    /// Rewind evaluations per bank operator.
    pub rewind_budget: u32,
    /// Operators evaluated.
    pub eval_ops: Vec<String>,
    /// Operators the bank was built on.
    pub bank_ops: Vec<String>,
    /// Entries in the bank.
    pub bank_entries: usize,
    /// `transductive` (bank built on the evaluated operators), `held-out`
    /// (no overlap) or `mixed`.
    pub setting: String,
    /// Base seed.
    pub seed: u64,
    /// Measurement noise off.
    pub deterministic: bool,
    /// (method, run id in the run store).
    pub runs: Vec<(String, i64)>,
    /// Methods not run, with why.
    pub skipped: Vec<(String, String)>,
    /// Anything a reader should know (missing levels, failures).
    pub notes: Vec<String>,
    /// LLM and embeddings usage per run, when an endpoint was configured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub llm_usage: Vec<LlmUsageRow>,
    /// Wall time of the invocation that wrote the report, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    /// The invocation resumed an earlier one (its wall time is then only
    /// the resumed part).
    #[serde(default)]
    pub resumed: bool,
    /// The bank file the methods retrieved from, relative to the report
    /// folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_file: Option<String>,
}

/// The profile of a benchmark case in brief, for the report: msprof's
/// top-line fields and the pipe ratios of the slowest block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileBrief {
    /// `Task Duration(us)` (noise-free).
    pub task_duration_us: f64,
    /// `Block Dim`.
    pub block_dim: u32,
    /// `vector`, `cube` or `mix`.
    pub op_type: String,
    /// GM bytes over the cores' span, GB/s.
    pub achieved_gbps: f64,
    /// (msprof ratio name, ratio) of the slowest block.
    pub ratios: Vec<(String, f64)>,
}

impl ProfileBrief {
    /// The brief of `p`.
    pub fn of(p: &ascendopt_device::Profile) -> ProfileBrief {
        ProfileBrief {
            task_duration_us: p.task_duration_us,
            block_dim: p.block_dim,
            op_type: p.op_type.clone(),
            achieved_gbps: p.achieved_gbps,
            ratios: p
                .slowest_block()
                .map(|b| {
                    b.ratios()
                        .into_iter()
                        .map(|(n, v)| (n.to_string(), v))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// The LLM calls of one run of a benchmark (a method, or `rewind`), from
/// the run store's `llm_calls`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LlmUsageRow {
    /// The method, or `rewind`.
    pub method: String,
    /// The run id in the run store.
    pub run: i64,
    /// Requests answered (`ok` rows: chat and embeddings).
    pub requests: u64,
    /// Every recorded row (attempts, replays, fallbacks).
    pub rows: u64,
    /// Prompt tokens of the chat requests.
    pub prompt_tokens: u64,
    /// Completion tokens of the chat requests.
    pub completion_tokens: u64,
    /// Input tokens of the embeddings requests.
    pub embedding_tokens: u64,
    /// Total cost, when prices are configured.
    pub cost: Option<f64>,
    /// Rounds of Stage I that fell back to lexical retrieval.
    pub dense_fallbacks: u64,
}

/// One accepted step, for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    /// `stage1`, `stage2`, `method`.
    pub phase: String,
    /// What changed.
    pub summary: String,
    /// Latency before, µs.
    pub before_us: f64,
    /// Latency after, µs.
    pub after_us: f64,
    /// Charged evaluations when accepted.
    pub at_evaluation: u32,
}

/// One method on one operator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutcomeSummary {
    /// Method.
    pub method: String,
    /// Operator.
    pub op: String,
    /// Level (1, 2, 3).
    pub level: u8,
    /// The input kernel's median latency, µs.
    pub baseline_us: Option<f64>,
    /// The final kernel's median latency, µs.
    pub final_us: Option<f64>,
    /// baseline / final (1.0 when nothing won or the run failed).
    pub speedup: f64,
    /// The final kernel passed the harness (see [`super::stats`]).
    pub correct: bool,
    /// Online evaluations charged.
    pub spent: u32,
    /// Online budget.
    pub budget: u32,
    /// (evaluations charged, best latency so far µs).
    pub curve: Vec<(u32, f64)>,
    /// Accepted steps.
    pub steps: Vec<StepSummary>,
    /// Roofline fraction of the input.
    pub roofline_before: Option<f64>,
    /// Roofline fraction of the output.
    pub roofline_after: Option<f64>,
    /// The optimised package, relative to the report folder.
    pub package: Option<String>,
    /// Chrome trace of the input, relative to the report folder.
    pub trace_before: Option<String>,
    /// Chrome trace of the output, relative to the report folder.
    pub trace_after: Option<String>,
    /// Why the method stopped without a result (an infrastructure error,
    /// not a verdict).
    pub error: Option<String>,
    /// Why each stage stopped, per round, with what it tried and the knobs
    /// it found.
    #[serde(default)]
    pub stops: Vec<ascendopt_agent::outcome::StageStop>,
    /// The unified diff input → output (`changes.diff`), relative to the
    /// report folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The input's profile of the benchmark case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_before: Option<ProfileBrief>,
    /// The output's profile of the benchmark case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_after: Option<ProfileBrief>,
}

impl OutcomeSummary {
    /// The summary of an [`OpOutcome`] (paths are filled by the caller).
    pub fn from_outcome(o: &OpOutcome) -> OutcomeSummary {
        let speedup = if o.speedup.is_finite() && o.speedup > 0.0 {
            o.speedup
        } else {
            1.0
        };
        OutcomeSummary {
            method: o.method.clone(),
            op: o.op.clone(),
            level: o.level,
            baseline_us: o.baseline_us,
            final_us: o.final_us,
            speedup,
            correct: o.baseline_us.is_some() && o.final_us.is_some(),
            spent: o.spent,
            budget: o.budget,
            curve: o.curve.clone(),
            steps: o
                .steps
                .iter()
                .map(|s| StepSummary {
                    phase: s.phase.as_str().to_string(),
                    summary: s.action.summary.clone(),
                    before_us: s.before_us,
                    after_us: s.after_us,
                    at_evaluation: s.at_evaluation,
                })
                .collect(),
            roofline_before: o.roofline_before,
            roofline_after: o.roofline_after,
            package: None,
            trace_before: None,
            trace_after: None,
            error: None,
            stops: o.stops.clone(),
            diff: None,
            profile_before: None,
            profile_after: None,
        }
    }

    /// A method that stopped on an error for this operator: it keeps the
    /// input (speedup 1.0) and counts as not correct.
    pub fn failed(method: &str, op: &str, level: u8, budget: u32, error: String) -> OutcomeSummary {
        OutcomeSummary {
            method: method.to_string(),
            op: op.to_string(),
            level,
            baseline_us: None,
            final_us: None,
            speedup: 1.0,
            correct: false,
            spent: 0,
            budget,
            curve: Vec::new(),
            steps: Vec::new(),
            roofline_before: None,
            roofline_after: None,
            package: None,
            trace_before: None,
            trace_after: None,
            error: Some(error),
            stops: Vec::new(),
            diff: None,
            profile_before: None,
            profile_after: None,
        }
    }

    /// Why the method ended on this operator, one line per stage and
    /// round (the error, when it stopped on one).
    pub fn why(&self) -> Vec<String> {
        let mut out: Vec<String> = self.stops.iter().map(|s| s.line()).collect();
        if let Some(e) = &self.error {
            out.push(format!("stopped on an error: {e}"));
        }
        out
    }

    /// The statistics' view.
    pub fn sample(&self) -> Sample {
        Sample {
            speedup: self.speedup,
            correct: self.correct,
        }
    }

    /// The best speedup reached within `evaluations` charged evaluations.
    pub fn speedup_at(&self, evaluations: u32) -> f64 {
        let Some(base) = self.baseline_us else {
            return 1.0;
        };
        let best = self
            .curve
            .iter()
            .filter(|(e, _)| *e <= evaluations)
            .map(|(_, us)| *us)
            .fold(f64::INFINITY, f64::min);
        if best.is_finite() && best > 0.0 {
            (base / best).max(f64::MIN_POSITIVE)
        } else {
            1.0
        }
    }
}

/// The summary tables.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Table 2 style: per level (`L1`, `L2`, `L3` present ones) and method.
    pub by_level: Vec<LevelRow>,
    /// Table 3 style: per method over every operator.
    pub by_method: Vec<MethodRow>,
}

/// One row of the by-level table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelRow {
    /// `L1`, `L2`, `L3`.
    pub level: String,
    /// Method.
    pub method: String,
    /// GM and fast_p.
    pub stats: GroupStats,
}

/// One row of the by-method table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodRow {
    /// Method.
    pub method: String,
    /// GM and fast_p over every operator.
    pub stats: GroupStats,
}

/// GM against evaluations spent for one method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodCurve {
    /// Method.
    pub method: String,
    /// (evaluations, GM over operators of the best speedup so far), at
    /// every evaluation count where some operator's best changed, plus 0
    /// and the most evaluations any operator actually spent.
    pub points: Vec<(u32, f64)>,
}

/// `L<level>`.
pub fn level_label(level: u8) -> String {
    format!("L{level}")
}

/// Methods in `outcomes`, in first-seen order.
pub fn methods_in(outcomes: &[OutcomeSummary]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for o in outcomes {
        if !out.contains(&o.method) {
            out.push(o.method.clone());
        }
    }
    out
}

/// Computes the tables from the outcomes.
pub fn tables(outcomes: &[OutcomeSummary]) -> Tables {
    let methods = methods_in(outcomes);
    let levels: BTreeSet<u8> = outcomes.iter().map(|o| o.level).collect();
    let mut by_level = Vec::new();
    for level in &levels {
        for m in &methods {
            let samples: Vec<Sample> = outcomes
                .iter()
                .filter(|o| o.level == *level && &o.method == m)
                .map(OutcomeSummary::sample)
                .collect();
            by_level.push(LevelRow {
                level: level_label(*level),
                method: m.clone(),
                stats: GroupStats::of(&samples),
            });
        }
    }
    let by_method = methods
        .iter()
        .map(|m| {
            let samples: Vec<Sample> = outcomes
                .iter()
                .filter(|o| &o.method == m)
                .map(OutcomeSummary::sample)
                .collect();
            MethodRow {
                method: m.clone(),
                stats: GroupStats::of(&samples),
            }
        })
        .collect();
    Tables {
        by_level,
        by_method,
    }
}

/// Computes the GM-against-evaluations curves.
pub fn curves(outcomes: &[OutcomeSummary]) -> Vec<MethodCurve> {
    methods_in(outcomes)
        .into_iter()
        .map(|m| {
            let ops: Vec<&OutcomeSummary> = outcomes.iter().filter(|o| o.method == m).collect();
            let spent = ops.iter().map(|o| o.spent).max().unwrap_or(0);
            let mut xs: BTreeSet<u32> = ops
                .iter()
                .flat_map(|o| o.curve.iter().map(|(e, _)| *e))
                .filter(|e| *e <= spent)
                .collect();
            xs.insert(0);
            xs.insert(spent);
            let points = xs
                .into_iter()
                .map(|e| {
                    let speedups: Vec<f64> = ops.iter().map(|o| o.speedup_at(e)).collect();
                    let gm = super::stats::geometric_mean(&speedups).unwrap_or(1.0);
                    (e, gm)
                })
                .collect();
            MethodCurve { method: m, points }
        })
        .collect()
}

impl Results {
    /// Assembles the document: sorts the outcomes (methods in `meta`
    /// order, then operator name) and computes tables and curves.
    pub fn new(meta: RunMeta, mut outcomes: Vec<OutcomeSummary>) -> Results {
        let rank = |m: &str| {
            meta.methods
                .iter()
                .position(|x| x == m)
                .unwrap_or(usize::MAX)
        };
        outcomes.sort_by(|a, b| {
            rank(&a.method)
                .cmp(&rank(&b.method))
                .then_with(|| a.method.cmp(&b.method))
                .then_with(|| a.op.cmp(&b.op))
        });
        let tables = tables(&outcomes);
        let curves = curves(&outcomes);
        Results {
            schema: SCHEMA_VERSION,
            meta,
            outcomes,
            tables,
            curves,
        }
    }

    /// Operators in the outcomes, sorted by (level, name).
    pub fn operators(&self) -> Vec<(u8, String)> {
        let set: BTreeSet<(u8, String)> = self
            .outcomes
            .iter()
            .map(|o| (o.level, o.op.clone()))
            .collect();
        set.into_iter().collect()
    }

    /// Methods with outcomes, in order.
    pub fn methods(&self) -> Vec<String> {
        methods_in(&self.outcomes)
    }

    /// The outcome of `method` on `op`.
    pub fn outcome(&self, method: &str, op: &str) -> Option<&OutcomeSummary> {
        self.outcomes
            .iter()
            .find(|o| o.method == method && o.op == op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(
        method: &str,
        op: &str,
        level: u8,
        base: f64,
        curve: &[(u32, f64)],
    ) -> OutcomeSummary {
        let best = curve.iter().map(|c| c.1).fold(base, f64::min);
        OutcomeSummary {
            method: method.into(),
            op: op.into(),
            level,
            baseline_us: Some(base),
            final_us: Some(best),
            speedup: base / best,
            correct: true,
            spent: curve.last().map(|c| c.0).unwrap_or(0),
            budget: 10,
            curve: curve.to_vec(),
            steps: vec![],
            roofline_before: None,
            roofline_after: None,
            package: None,
            trace_before: None,
            trace_after: None,
            error: None,
            stops: Vec::new(),
            diff: None,
            profile_before: None,
            profile_after: None,
        }
    }

    #[test]
    fn tables_and_curves_hand_worked() {
        let outs = vec![
            outcome("full", "b", 2, 100.0, &[(1, 100.0), (4, 50.0)]),
            outcome("full", "a", 1, 90.0, &[(1, 90.0), (2, 45.0), (6, 30.0)]),
            outcome("tiling", "a", 1, 90.0, &[(1, 90.0)]),
            outcome("tiling", "b", 2, 100.0, &[(1, 100.0)]),
        ];
        let meta = RunMeta {
            methods: vec!["full".into(), "tiling".into()],
            ..RunMeta::default()
        };
        let r = Results::new(meta, outs);
        // Sorted by method order then op.
        let order: Vec<(&str, &str)> = r
            .outcomes
            .iter()
            .map(|o| (o.method.as_str(), o.op.as_str()))
            .collect();
        assert_eq!(
            order,
            vec![
                ("full", "a"),
                ("full", "b"),
                ("tiling", "a"),
                ("tiling", "b")
            ]
        );
        // full: speedups a = 3, b = 2 → GM = sqrt(6).
        let full = &r.tables.by_method[0];
        assert_eq!(full.method, "full");
        assert!((full.stats.gm.unwrap() - 6f64.sqrt()).abs() < 1e-12);
        assert_eq!(full.stats.fast_at(2.0), 0.5);
        let tiling = &r.tables.by_method[1];
        assert_eq!(tiling.stats.gm, Some(1.0));
        assert_eq!(tiling.stats.fast_at(1.0), 0.0);
        // by level: L1/full, L1/tiling, L2/full, L2/tiling.
        let rows: Vec<(&str, &str)> = r
            .tables
            .by_level
            .iter()
            .map(|l| (l.level.as_str(), l.method.as_str()))
            .collect();
        assert_eq!(
            rows,
            vec![
                ("L1", "full"),
                ("L1", "tiling"),
                ("L2", "full"),
                ("L2", "tiling")
            ]
        );
        assert!((r.tables.by_level[0].stats.gm.unwrap() - 3.0).abs() < 1e-12);
        // Curve of full: x = 0,1,2,4,6 (6: the most evaluations spent,
        // not the budget of 10).
        let c = &r.curves[0];
        let xs: Vec<u32> = c.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, vec![0, 1, 2, 4, 6]);
        let at = |e: u32| c.points.iter().find(|p| p.0 == e).unwrap().1;
        assert!((at(0) - 1.0).abs() < 1e-12);
        assert!((at(1) - 1.0).abs() < 1e-12);
        // e=2: a = 2, b = 1 → sqrt 2.
        assert!((at(2) - 2f64.sqrt()).abs() < 1e-12);
        // e=4: a = 2, b = 2 → 2.
        assert!((at(4) - 2.0).abs() < 1e-12);
        // e=6, the end: a = 3, b = 2 → sqrt 6.
        assert!((at(6) - 6f64.sqrt()).abs() < 1e-12);
        // JSON round trip.
        let text = serde_json::to_string(&r).unwrap();
        let back: Results = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
    }
}
