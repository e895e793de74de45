//! What optimising one operator with one method ends with: the numbers the
//! benchmark and the report are made of.

use crate::session::{Action, LogEntry, Phase, Trial};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One accepted step (a new incumbent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The loop that made it.
    pub phase: Phase,
    /// What changed.
    pub action: Action,
    /// Incumbent median latency before, µs.
    pub before_us: f64,
    /// New incumbent median latency, µs.
    pub after_us: f64,
    /// The acceptance rule's reason (speedup, tau).
    pub reason: String,
    /// Charged evaluations of the operator when it was accepted.
    pub at_evaluation: u32,
}

/// The result of one method on one operator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpOutcome {
    /// Operator name.
    pub op: String,
    /// Its level (1, 2, 3).
    pub level: u8,
    /// The method (`full`, `stage1`, `stage1-noexp`, `tiling`, `bon`,
    /// `judge`).
    pub method: String,
    /// The input kernel's median latency, µs (None when the input itself
    /// failed: then nothing could be optimised).
    pub baseline_us: Option<f64>,
    /// The final incumbent's median latency, µs.
    pub final_us: Option<f64>,
    /// baseline / final (1.0 when nothing won or the input failed).
    pub speedup: f64,
    /// Online evaluations charged.
    pub spent: u32,
    /// Online budget.
    pub budget: u32,
    /// Best latency so far after each charged evaluation (evaluation
    /// count, µs), starting with the baseline.
    pub curve: Vec<(u32, f64)>,
    /// Accepted steps, in order.
    pub steps: Vec<Step>,
    /// Every attempt.
    pub log: Vec<LogEntry>,
    /// Roofline fraction of the input (0..1), when profiled.
    pub roofline_before: Option<f64>,
    /// Roofline fraction of the output.
    pub roofline_after: Option<f64>,
    /// The final incumbent's package folder.
    pub final_dir: Option<PathBuf>,
    /// Why each stage stopped, per round of the Stage I → Stage II loop.
    #[serde(default)]
    pub stops: Vec<StageStop>,
}

/// Why one stage of one round stopped, and what it tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageStop {
    /// `stage1` or `stage2`.
    pub stage: String,
    /// Round of the Stage I → Stage II loop, from 1.
    pub round: u32,
    /// Attempts the stage made in the round.
    pub attempts: u32,
    /// Steps it accepted (Stage II: declared).
    pub accepted: u32,
    /// Why it stopped: budget spent, its allowance used, nothing left to
    /// try (with what was tried), no knobs, the search space exhausted.
    pub reason: String,
    /// Every attempt, one line each (what, verdict, why).
    pub tried: Vec<String>,
    /// Stage II: the tiling knobs found in the host code (kept with their
    /// distinct tilings or dropped with the reason, each with file:line).
    pub knobs: Vec<String>,
}

impl StageStop {
    /// One line for a person: `stage1 (round 1): 14 attempts, 3 accepted;
    /// stopped: ...`.
    pub fn line(&self) -> String {
        format!(
            "{} (round {}): {} attempts, {} accepted; stopped: {}",
            self.stage, self.round, self.attempts, self.accepted, self.reason
        )
    }
}

/// The roofline fraction (0..1) of a judged candidate's profile.
pub fn roofline(trial: &Trial) -> Option<f64> {
    trial
        .profile()
        .and_then(|p| p.roofline_reached_pct)
        .map(|p| p / 100.0)
}

/// The best-so-far curve: one point per attempt in the log (attempt
/// number, incumbent latency after it), starting with the baseline.
pub fn curve(log: &[LogEntry], baseline_us: f64) -> Vec<(u32, f64)> {
    let mut best = baseline_us;
    let mut out = Vec::new();
    for (i, e) in log.iter().enumerate() {
        if e.accepted && e.phase != Phase::Baseline {
            if let Some(l) = e.latency_us {
                best = best.min(l);
            }
        }
        out.push((u32::try_from(i + 1).unwrap_or(u32::MAX), best));
    }
    out
}
