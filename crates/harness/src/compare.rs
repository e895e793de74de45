//! Noise-aware acceptance: is a candidate faster than the incumbent by more
//! than the profiling noise (the method's τ_noise)?
//!
//! # The rule
//!
//! The caller times candidate and incumbent alternately (c, i, c, i, …), so
//! slow drift of the device hits both alike, and passes the two sample
//! lists. Then:
//!
//! 1. **Noise.** The incumbent's own repeats give its relative spread,
//!    robustly: σ̂ = 1.4826 · MAD(ln iᵢ) (the MAD of the log latencies, scaled
//!    to a normal standard deviation; outliers barely move it).
//! 2. **Threshold.** The sample median of n draws has a standard error of
//!    about 1.2533 · σ/√n, so the difference of two medians (in log space,
//!    i.e. relative) has se = 1.2533 · σ̂ · √(1/n_c + 1/n_i). The threshold is
//!    τ = max(min_effect, z · se) — [`calibrate_tau`].
//! 3. **Decision.** improvement = 1 − median(c)/median(i). The candidate is
//!    faster iff improvement > τ. The reported p-value is the one-sided
//!    normal tail of ln(median(i)/median(c)) / se, for information only.
//!
//! # Measured error rates
//!
//! [`CompareConfig::RECOMMENDED`]: z = 2.2, 30 repeats a side. The
//! simulator's default noise (`profiles/ascend910b2.toml` `[noise]`:
//! 1 % relative and 0.5 µs absolute, independent) is a coefficient of
//! variation cv = √(0.01² + (0.5/latency)²) ([`effective_cv`]). By
//! simulation ([`error_rates`], 10 000 trials each, multiplicative normal
//! noise, "3 % speedup" = latency ÷ 1.03):
//!
//! | kernel latency | cv     | identical called faster | 3 % speedup detected |
//! |----------------|--------|-------------------------|----------------------|
//! | 1000 µs        | 1.00 % | 2.0 %                   | 100 %                |
//! | 50 µs          | 1.41 % | 2.2 %                   | 99.99 %              |
//! | 29 µs          | 1.99 % | 2.3 %                   | 98.5 %               |
//! | 20 µs          | 2.69 % | 2.3 %                   | 86.9 %               |
//! | 10 µs          | 5.10 % | 2.3 %                   | 36 % (99 % with 200 repeats) |
//!
//! So the issue's criteria (< 5 % false accepts, > 90 % power) hold for
//! kernels of about 25 µs or more with 30 repeats. The false-accept rate
//! stays near 2.3 % at any noise level, because τ grows with σ̂; power
//! falls with noise, and the repeats needed grow with cv²
//! ([`repeats_for`] gives the count for a target).
//!
//! Invalid samples (empty, non-finite, not positive) never make a candidate
//! faster: the decision says why.

use crate::verdict::median_sorted;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Consistency factor of the MAD for a normal distribution (1/Φ⁻¹(3/4)).
const MAD_TO_SIGMA: f64 = 1.4826;
/// Asymptotic standard error of the sample median, in units of σ/√n
/// (√(π/2)).
const MEDIAN_SE: f64 = 1.2533;

/// Parameters of the acceptance rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareConfig {
    /// Standard errors the improvement must exceed (one-sided).
    pub z: f64,
    /// The smallest relative improvement ever accepted, however quiet the
    /// device (0.005 = 0.5 %); it is τ when the incumbent shows no spread.
    pub min_effect: f64,
    /// Fewest samples per side for a decision.
    pub min_samples: usize,
    /// Samples per side the caller should take (used by [`error_rates`]).
    pub repeats: usize,
}

impl CompareConfig {
    /// The measured setting: z 2.2, 30 repeats a side, minimum effect 0.5 %,
    /// at least 10 samples. Callers pass it explicitly (no `Default`).
    pub const RECOMMENDED: CompareConfig = CompareConfig {
        z: 2.2,
        min_effect: 0.005,
        min_samples: 10,
        repeats: 30,
    };
}

/// The noise calibration of an incumbent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Relative standard deviation estimated from the incumbent's MAD.
    pub sigma: f64,
    /// Standard error of the relative median difference.
    pub se: f64,
    /// The threshold τ on the relative improvement.
    pub tau: f64,
}

/// The outcome of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Accept the candidate as faster.
    pub faster: bool,
    /// median(incumbent) / median(candidate); > 1 means the candidate is
    /// quicker. NaN when the samples are invalid.
    pub speedup: f64,
    /// 1 − median(candidate) / median(incumbent).
    pub improvement: f64,
    /// The threshold the improvement had to beat.
    pub tau: f64,
    /// One-sided p-value of "no improvement" (normal approximation); None
    /// when the noise estimate is zero or the samples are invalid.
    pub p_value: Option<f64>,
    /// Why, in one sentence.
    pub reason: String,
}

fn valid(samples: &[f64]) -> bool {
    samples.iter().all(|s| s.is_finite() && *s > 0.0)
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Relative spread of `samples` (1.4826 · MAD of the logs); `None` if empty
/// or invalid.
pub fn robust_sigma(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() || !valid(samples) {
        return None;
    }
    let logs = sorted(&samples.iter().map(|s| s.ln()).collect::<Vec<_>>());
    let med = median_sorted(&logs);
    let dev = sorted(&logs.iter().map(|l| (l - med).abs()).collect::<Vec<_>>());
    Some(MAD_TO_SIGMA * median_sorted(&dev))
}

fn calibrate(incumbent: &[f64], n_candidate: usize, cfg: &CompareConfig) -> Option<Calibration> {
    let sigma = robust_sigma(incumbent)?;
    if n_candidate == 0 {
        return None;
    }
    let se = MEDIAN_SE * sigma * (1.0 / n_candidate as f64 + 1.0 / incumbent.len() as f64).sqrt();
    Some(Calibration {
        sigma,
        se,
        tau: (cfg.z * se).max(cfg.min_effect),
    })
}

/// τ_noise from the incumbent's own repeats, for a candidate timed as many
/// times as the incumbent. `None` when the samples are empty or invalid.
pub fn calibrate_tau(incumbent: &[f64], cfg: &CompareConfig) -> Option<Calibration> {
    calibrate(incumbent, incumbent.len(), cfg)
}

/// Decides whether the candidate is faster than the incumbent beyond noise
/// (the rule in the module docs). Samples are latencies measured
/// interleaved.
pub fn faster(candidate: &[f64], incumbent: &[f64], cfg: &CompareConfig) -> Decision {
    let refuse = |reason: String| Decision {
        faster: false,
        speedup: f64::NAN,
        improvement: f64::NAN,
        tau: f64::NAN,
        p_value: None,
        reason,
    };
    let need = cfg.min_samples.max(1);
    if candidate.len() < need || incumbent.len() < need {
        return refuse(format!(
            "too few samples: {} candidate and {} incumbent, need {need} each",
            candidate.len(),
            incumbent.len()
        ));
    }
    if !valid(candidate) || !valid(incumbent) {
        return refuse("a latency sample is not a positive finite number".to_string());
    }
    let Some(cal) = calibrate(incumbent, candidate.len(), cfg) else {
        return refuse("cannot estimate the incumbent's noise".to_string());
    };
    let med_c = median_sorted(&sorted(candidate));
    let med_i = median_sorted(&sorted(incumbent));
    let speedup = med_i / med_c;
    let improvement = 1.0 - med_c / med_i;
    let p_value = (cal.se > 0.0).then(|| normal_sf(speedup.ln() / cal.se));
    let faster = improvement > cal.tau;
    let reason = format!(
        "median {med_c:.4} vs {med_i:.4}: improvement {:.2}% {} tau {:.2}% (noise sigma {:.2}%, {} vs {} samples)",
        improvement * 100.0,
        if faster { ">" } else { "<=" },
        cal.tau * 100.0,
        cal.sigma * 100.0,
        candidate.len(),
        incumbent.len()
    );
    Decision {
        faster,
        speedup,
        improvement,
        tau: cal.tau,
        p_value,
        reason,
    }
}

/// The effective coefficient of variation of a latency of `latency_us`
/// under noise with relative sigma `rel_sigma` and absolute sigma
/// `abs_sigma_us` (independent): √(rel² + (abs/latency)²).
pub fn effective_cv(rel_sigma: f64, abs_sigma_us: f64, latency_us: f64) -> f64 {
    (rel_sigma * rel_sigma + (abs_sigma_us / latency_us).powi(2)).sqrt()
}

/// Upper tail of the standard normal, 1 − Φ(x) (erfc approximation of
/// Numerical Recipes, fractional error < 1.2e-7).
fn normal_sf(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Repeats a side for which the rule detects a true `speedup` (e.g. 1.03)
/// with about 90 % probability or more under noise of coefficient `cv`:
/// the normal-approximation count 2 · (1.2533 · cv · (z + 1.2816) /
/// ln(speedup))², plus 25 % for the uncertainty of σ̂, and never fewer than
/// `cfg.min_samples`. 22 at cv 2 %, 142 for a 10 µs kernel (cv 5.1 %).
pub fn repeats_for(cv: f64, speedup: f64, cfg: &CompareConfig) -> usize {
    const Z_POWER_90: f64 = 1.2816;
    let effect = speedup.ln();
    if effect.is_nan() || effect <= 0.0 || !cv.is_finite() || cv < 0.0 {
        return cfg.min_samples;
    }
    let per_side = 2.0 * (MEDIAN_SE * cv * (cfg.z + Z_POWER_90) / effect).powi(2) * 1.25;
    (per_side.ceil() as usize).max(cfg.min_samples)
}

/// One standard normal draw (Box–Muller).
fn std_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Draws `n` interleaved latency samples of a kernel with true latency
/// `latency`, under multiplicative normal noise of coefficient `cv`.
fn draw(rng: &mut ChaCha8Rng, latency: f64, cv: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| (latency * (1.0 + cv * std_normal(rng))).max(latency * 1e-3))
        .collect()
}

/// Measures the rule by simulation: `trials` comparisons of identical
/// kernels and `trials` of a candidate with a true 3 % speedup (latency
/// ÷ 1.03), `cfg.repeats` samples a side, multiplicative normal noise of
/// coefficient `cv`. Returns (false-accept rate, power).
pub fn error_rates(cfg: &CompareConfig, cv: f64, trials: usize, seed: u64) -> (f64, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = cfg.repeats;
    let base = 100.0;
    let mut false_accepts = 0usize;
    let mut detections = 0usize;
    for _ in 0..trials {
        // Interleaved: one candidate draw, then one incumbent draw.
        let (mut c, mut i) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            c.extend(draw(&mut rng, base, cv, 1));
            i.extend(draw(&mut rng, base, cv, 1));
        }
        false_accepts += usize::from(faster(&c, &i, cfg).faster);
        let (mut c, mut i) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            c.extend(draw(&mut rng, base / 1.03, cv, 1));
            i.extend(draw(&mut rng, base, cv, 1));
        }
        detections += usize::from(faster(&c, &i, cfg).faster);
    }
    let t = trials.max(1) as f64;
    (false_accepts as f64 / t, detections as f64 / t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: CompareConfig = CompareConfig::RECOMMENDED;

    #[test]
    fn robust_sigma_by_hand() {
        // logs of e^0, e^0.1, e^-0.1, e^0.2, e^5: median 0.1; deviations
        // 0.1, 0, 0.2, 0.1, 4.9 → MAD 0.1, despite the outlier.
        let s: Vec<f64> = [0.0f64, 0.1, -0.1, 0.2, 5.0]
            .iter()
            .map(|l| l.exp())
            .collect();
        let sigma = robust_sigma(&s).unwrap();
        assert!((sigma - 0.14826).abs() < 1e-9, "{sigma}");
        assert_eq!(robust_sigma(&[]), None);
        assert_eq!(robust_sigma(&[1.0, -2.0]), None);
    }

    #[test]
    fn tau_by_hand() {
        // 16 samples alternating 99 and 101: median of logs = midpoint,
        // every |dev| = ln(101/99)/2, so sigma = 1.4826 · 0.0100003.
        let inc: Vec<f64> = (0..16)
            .map(|k| if k % 2 == 0 { 99.0 } else { 101.0 })
            .collect();
        let cal = calibrate_tau(&inc, &CFG).unwrap();
        let sigma = 1.4826 * (101.0f64 / 99.0).ln() / 2.0;
        assert!((cal.sigma - sigma).abs() < 1e-12);
        let se = 1.2533 * sigma * (2.0f64 / 16.0).sqrt();
        assert!((cal.se - se).abs() < 1e-12);
        assert!((cal.tau - 2.2 * se).abs() < 1e-12, "{}", cal.tau);
        // A quiet device: tau falls back to the minimum effect.
        let quiet = calibrate_tau(&[50.0; 12], &CFG).unwrap();
        assert_eq!((quiet.sigma, quiet.tau), (0.0, 0.005));
    }

    #[test]
    fn decisions_on_hand_made_samples() {
        let inc: Vec<f64> = (0..16)
            .map(|k| if k % 2 == 0 { 99.0 } else { 101.0 })
            .collect();
        // tau = 2.2 · 1.2533 · 0.014827 · √(2/16) = 1.445 %.
        let shift = |f: f64| inc.iter().map(|x| x * f).collect::<Vec<_>>();
        let d = faster(&shift(0.95), &inc, &CFG);
        assert!(d.faster, "{}", d.reason);
        assert!((d.speedup - 1.0 / 0.95).abs() < 1e-12);
        assert!((d.improvement - 0.05).abs() < 1e-12);
        assert!(d.p_value.unwrap() < 1e-6);
        let d = faster(&shift(0.99), &inc, &CFG);
        assert!(!d.faster, "1% is inside the noise: {}", d.reason);
        assert!(d.p_value.unwrap() > 0.02);
        let d = faster(&inc, &inc, &CFG);
        assert!(!d.faster);
        assert!((d.p_value.unwrap() - 0.5).abs() < 1e-6);
        assert!(
            !faster(&shift(1.2), &inc, &CFG).faster,
            "slower is never faster"
        );
        // Deterministic device: 0.4 % is below the minimum effect, 0.6 % above.
        let flat = [100.0; 10];
        assert!(!faster(&[99.6; 10], &flat, &CFG).faster);
        let d = faster(&[99.4; 10], &flat, &CFG);
        assert!(d.faster && d.p_value.is_none(), "{d:?}");
    }

    #[test]
    fn bad_samples_never_win() {
        let inc = [100.0; 12];
        for bad in [
            vec![1.0; 3],
            vec![f64::NAN; 12],
            vec![0.0; 12],
            vec![-5.0; 12],
        ] {
            let d = faster(&bad, &inc, &CFG);
            assert!(!d.faster, "{bad:?}");
            assert!(d.speedup.is_nan(), "{}", d.reason);
        }
        assert!(faster(&[50.0; 12], &[f64::INFINITY; 12], &CFG)
            .reason
            .contains("positive finite"));
        assert!(faster(&[50.0; 12], &[100.0; 9], &CFG)
            .reason
            .contains("too few samples"));
    }

    #[test]
    fn normal_tail_matches_tables() {
        for (x, p) in [
            (0.0, 0.5),
            (1.0, 0.158_655_25),
            (1.644_854, 0.05),
            (2.0, 0.022_750_13),
            (-1.0, 0.841_344_75),
        ] {
            assert!((normal_sf(x) - p).abs() < 2e-6, "x {x}: {}", normal_sf(x));
        }
    }

    /// The acceptance criteria of issue 4 under 2 % noise (at least the
    /// simulator's default noise for kernels of 29 µs or more).
    #[test]
    fn error_rates_meet_the_issue_at_two_percent_noise() {
        let (false_accept, power) = error_rates(&CFG, 0.02, 4000, 7);
        assert!(false_accept < 0.05, "false accept {false_accept}");
        assert!(power > 0.90, "power {power}");
    }

    /// The simulator's default noise (profiles/ascend910b2.toml `[noise]`:
    /// rel_sigma 1 %, abs_sigma_us 0.5) at a 50 µs kernel.
    #[test]
    fn error_rates_under_the_simulator_default_noise() {
        let cv = effective_cv(0.01, 0.5, 50.0);
        assert!((cv - 0.014_142).abs() < 1e-5);
        let (false_accept, power) = error_rates(&CFG, cv, 4000, 11);
        assert!(false_accept < 0.05, "false accept {false_accept}");
        assert!(power > 0.90, "power {power}");
    }

    /// Too few repeats cannot reach the required power: the repeat count
    /// matters, and the test above can fail.
    #[test]
    fn ten_repeats_are_not_enough_at_two_percent() {
        let few = CompareConfig { repeats: 10, ..CFG };
        let (false_accept, power) = error_rates(&few, 0.02, 2000, 3);
        assert!(false_accept < 0.08, "false accept {false_accept}");
        assert!(power < 0.90, "power {power}");
    }

    #[test]
    fn repeats_for_reaches_the_power_it_promises() {
        assert_eq!(repeats_for(0.02, 1.03, &CFG), 22);
        assert_eq!(repeats_for(0.0, 1.03, &CFG), CFG.min_samples);
        assert_eq!(
            repeats_for(0.02, 0.97, &CFG),
            CFG.min_samples,
            "no effect to detect"
        );
        // A 10 µs kernel under the simulator's default noise.
        let cv = effective_cv(0.01, 0.5, 10.0);
        let n = repeats_for(cv, 1.03, &CFG);
        assert_eq!(n, 142);
        let cfg = CompareConfig { repeats: n, ..CFG };
        let (false_accept, power) = error_rates(&cfg, cv, 1000, 5);
        assert!(false_accept < 0.05, "false accept {false_accept}");
        assert!(power > 0.90, "power {power}");
    }
}
