//! Measurement noise of the simulated device: a seeded factor applied to
//! every time of a profile, so noise-aware acceptance is exercised without a
//! real NPU.
//!
//! Model: `T' = T * (1 + rel * z1) + abs * z2` with `z1, z2` standard normal
//! draws from a ChaCha8 stream seeded by the caller; every time field is
//! scaled by `T' / T` (ratios stay as they are). The default level lives in
//! the hardware profile (`[noise]`), with the reason for its value.

use super::hw::NoiseLevel;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How a simulated measurement is disturbed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Noise {
    /// No noise: the same trace always gives the same latency (tests).
    Deterministic,
    /// Seeded noise of the given level.
    Seeded {
        /// Seed of this measurement (vary it per repetition).
        seed: u64,
        /// Level (use the profile's `noise` for the device default).
        level: NoiseLevel,
    },
}

/// A standard normal draw (Box-Muller).
fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.gen_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The factor by which a measurement of `duration_us` is scaled; clamped to
/// [0.5, 1.5] so a sample can never be absurd.
pub fn factor(noise: &Noise, duration_us: f64) -> f64 {
    match noise {
        Noise::Deterministic => 1.0,
        Noise::Seeded { seed, level } => {
            let mut rng = ChaCha8Rng::seed_from_u64(*seed);
            let z1 = standard_normal(&mut rng);
            let z2 = standard_normal(&mut rng);
            if duration_us <= 0.0 {
                return 1.0;
            }
            let noisy = duration_us * (1.0 + level.rel_sigma * z1) + level.abs_sigma_us * z2;
            (noisy / duration_us).clamp(0.5, 1.5)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cv(samples: &[f64]) -> f64 {
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        var.sqrt() / mean
    }

    #[test]
    fn deterministic_is_exactly_one() {
        assert_eq!(factor(&Noise::Deterministic, 123.0), 1.0);
    }

    #[test]
    fn same_seed_same_factor_other_seed_other_factor() {
        let level = NoiseLevel {
            rel_sigma: 0.02,
            abs_sigma_us: 0.0,
        };
        let a = factor(&Noise::Seeded { seed: 7, level }, 100.0);
        let b = factor(&Noise::Seeded { seed: 7, level }, 100.0);
        let c = factor(&Noise::Seeded { seed: 8, level }, 100.0);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn coefficient_of_variation_matches_the_level() {
        // Expected CV = sqrt(rel^2 + (abs/T)^2) = sqrt(0.02^2 + (0.5/25)^2)
        // = 0.0283 for T = 25 us; 2000 samples estimate it within ~5%.
        let level = NoiseLevel {
            rel_sigma: 0.02,
            abs_sigma_us: 0.5,
        };
        let samples: Vec<f64> = (0..2000)
            .map(|seed| 25.0 * factor(&Noise::Seeded { seed, level }, 25.0))
            .collect();
        let expected = (0.02f64.powi(2) + (0.5f64 / 25.0).powi(2)).sqrt();
        let got = cv(&samples);
        assert!(
            (got / expected - 1.0).abs() < 0.1,
            "cv {got} expected {expected}"
        );
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        assert!((mean / 25.0 - 1.0).abs() < 0.005, "unbiased: {mean}");
    }
}
