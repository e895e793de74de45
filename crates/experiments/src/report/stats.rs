//! The method's summary statistics: geometric-mean speedup (GM) and
//! fast_p, overall and by level.
//!
//! Definitions (ref/method.md §6 "Metrics"):
//! - speedup = T_baseline / T_generated, per operator; an operator whose
//!   method found nothing better keeps its input kernel, speedup 1.0.
//! - GM = the geometric mean of the speedups of every operator of the
//!   group (exp of the mean of ln speedup).
//! - fast_p = the share of the group's operators that are **correct and
//!   strictly faster than p**: `correct && speedup > p`, divided by the
//!   number of operators in the group (failed ones included in the
//!   denominator). So fast_1.0 is the share strictly faster than its input,
//!   and an operator at exactly p does not count for fast_p.
//!
//! An operator is *correct* when its final kernel passed the harness (the
//! input itself was measured: `baseline_us` is known); an operator whose
//! input failed contributes speedup 1.0 to GM and never counts for fast_p.

use serde::{Deserialize, Serialize};

/// The thresholds of the report's tables: the method's 1.2/1.4/1.8/2.0
/// plus 1.0 (share strictly faster than the input).
pub const FAST_P: [f64; 5] = [1.0, 1.2, 1.4, 1.8, 2.0];

/// One operator's result as the statistics see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// baseline / final (1.0 when nothing won).
    pub speedup: f64,
    /// The final kernel passed the harness.
    pub correct: bool,
}

/// Geometric mean of `values`; None when empty or any value is not a
/// finite positive number.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return None;
    }
    let mean_ln = values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64;
    Some(mean_ln.exp())
}

/// fast_p: the share (0..=1) of `samples` that are correct with speedup
/// strictly greater than `p`; None when there are no samples.
pub fn fast_p(samples: &[Sample], p: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let hits = samples
        .iter()
        .filter(|s| s.correct && s.speedup > p)
        .count();
    Some(hits as f64 / samples.len() as f64)
}

/// GM and fast_p of one group of operators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStats {
    /// Operators in the group.
    pub n: usize,
    /// Geometric-mean speedup (None for an empty group).
    pub gm: Option<f64>,
    /// (p, share 0..=1) for each p of [`FAST_P`].
    pub fast: Vec<(f64, f64)>,
}

impl GroupStats {
    /// The statistics of `samples`.
    pub fn of(samples: &[Sample]) -> GroupStats {
        let speedups: Vec<f64> = samples.iter().map(|s| s.speedup).collect();
        GroupStats {
            n: samples.len(),
            gm: geometric_mean(&speedups),
            fast: FAST_P
                .iter()
                .map(|&p| (p, fast_p(samples, p).unwrap_or(0.0)))
                .collect(),
        }
    }

    /// fast_p for one of [`FAST_P`] (0 when absent).
    pub fn fast_at(&self, p: f64) -> f64 {
        self.fast
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map(|(_, v)| *v)
            .unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(speedup: f64) -> Sample {
        Sample {
            speedup,
            correct: true,
        }
    }

    #[test]
    fn geometric_mean_hand_worked() {
        // (2 * 8)^(1/2) = 4.
        assert!((geometric_mean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        // (1 * 3 * 9)^(1/3) = 27^(1/3) = 3.
        assert!((geometric_mean(&[1.0, 3.0, 9.0]).unwrap() - 3.0).abs() < 1e-12);
        // (0.5 * 2)^(1/2) = 1: a slowdown cancels a speedup.
        assert!((geometric_mean(&[0.5, 2.0]).unwrap() - 1.0).abs() < 1e-12);
        // (1.21 * 1.0)^(1/2) = 1.1.
        assert!((geometric_mean(&[1.21, 1.0]).unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
        assert_eq!(geometric_mean(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn fast_p_is_strict_and_counts_only_correct() {
        // Five operators: 1.0 (unchanged), 1.2 exactly, 1.5, 2.5, and a
        // 3.0 that is not correct.
        let samples = [
            s(1.0),
            s(1.2),
            s(1.5),
            s(2.5),
            Sample {
                speedup: 3.0,
                correct: false,
            },
        ];
        // > 1.0: 1.2, 1.5, 2.5 → 3/5.
        assert_eq!(fast_p(&samples, 1.0), Some(0.6));
        // > 1.2: 1.5, 2.5 (1.2 itself is not > 1.2) → 2/5.
        assert_eq!(fast_p(&samples, 1.2), Some(0.4));
        // > 1.4: 1.5, 2.5 → 2/5.
        assert_eq!(fast_p(&samples, 1.4), Some(0.4));
        // > 1.8: 2.5 → 1/5.
        assert_eq!(fast_p(&samples, 1.8), Some(0.2));
        // > 2.0: 2.5 → 1/5 (the incorrect 3.0 never counts).
        assert_eq!(fast_p(&samples, 2.0), Some(0.2));
        assert_eq!(fast_p(&[], 1.0), None);
    }

    #[test]
    fn group_stats_hand_worked() {
        // Table-2 style group of four: speedups 1, 1, 2, 4.
        // GM = (1*1*2*4)^(1/4) = 8^(1/4) = 1.6818...
        let g = GroupStats::of(&[s(1.0), s(1.0), s(2.0), s(4.0)]);
        assert_eq!(g.n, 4);
        assert!((g.gm.unwrap() - 8f64.powf(0.25)).abs() < 1e-12);
        assert_eq!(g.fast_at(1.0), 0.5);
        assert_eq!(g.fast_at(1.2), 0.5);
        assert_eq!(g.fast_at(1.8), 0.5);
        // 2.0 is not > 2.0: only the 4x counts.
        assert_eq!(g.fast_at(2.0), 0.25);
        let empty = GroupStats::of(&[]);
        assert_eq!(empty.n, 0);
        assert_eq!(empty.gm, None);
        assert_eq!(empty.fast_at(1.0), 0.0);
    }
}
