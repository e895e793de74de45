//! The typed outcome of one evaluation.
//!
//! A [`Verdict`] is data, never an `Err`: a candidate that does not compile,
//! crashes or computes the wrong thing still ends as one verdict, is charged
//! to the budget and is stored as a run-store row (`verdict` column =
//! [`Verdict::kind`], `details` column = the JSON of the whole verdict).
//!
//! Floating-point fields may hold NaN or infinities (an output that is NaN
//! where the reference is finite has an infinite error); they are written to
//! JSON as numbers when finite and as the strings `"nan"`, `"inf"`, `"-inf"`
//! otherwise, so that a stored row always reads back equal.

use ascendopt_device::Profile;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What one evaluation ended with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A static check refused the sources before anything was compiled.
    RejectedStatic {
        /// Every finding, one per line (`rule at file:line: message`).
        reason: String,
    },
    /// The host or kernel sources did not compile.
    CompileError {
        /// The compiler's diagnostics.
        diagnostics: String,
    },
    /// The kernel or the tiling function failed while running.
    RuntimeError {
        /// Class of failure.
        kind: RuntimeErrorKind,
        /// What happened.
        message: String,
        /// The source location (`file:line`), when known.
        location: Option<String>,
    },
    /// The worker did not finish in time and was killed.
    Timeout {
        /// Wall-clock milliseconds after which it was killed.
        after_ms: u64,
    },
    /// The kernel ran but its outputs are wrong.
    Incorrect {
        /// What was wrong, and where.
        details: Box<Mismatch>,
    },
    /// Every correctness check passed; the candidate was profiled.
    Correct {
        /// Latency statistics over the profiling repeats.
        latency: LatencyStats,
        /// The profiling samples, microseconds, in measurement order.
        samples_us: Vec<f64>,
        /// The device's profile of the benchmark case (pipe busy ratios,
        /// bytes moved, ...), noise-free; serialised by the run store.
        profile: Box<Profile>,
    },
}

/// Class of a runtime failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeErrorKind {
    /// On-chip buffers need more memory than the core has.
    UbOverflow,
    /// A global-memory access outside every allocation.
    OutOfBounds,
    /// Unsynchronised access of two pipes to the same buffer.
    Race,
    /// The worker died (signal, abort, resource limit).
    Crash,
    /// Blocks wait on each other forever.
    Deadlock,
    /// Any other fault the runtime detected inside an API call.
    Fault,
    /// The measured latency is below what the hardware can do: the timing
    /// model missed work (`physics.rs`).
    FasterThanHardware,
}

/// Which correctness check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CorrectnessCheck {
    /// Outputs against the golden reference.
    Reference,
    /// Second run on the same inputs differs from the first (reads of
    /// uninitialised memory, state kept across launches).
    Rerun,
    /// The check after profiling, on fresh inputs.
    Recheck,
}

/// Details of an incorrect result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    /// The check that failed.
    pub check: CorrectnessCheck,
    /// The test case (name or index in op.toml).
    pub case: String,
    /// The output tensor (name or argument index).
    pub output: String,
    /// Elements compared.
    pub total: u64,
    /// Elements outside the tolerance.
    pub mismatches: u64,
    /// Largest absolute error over the compared elements.
    #[serde(with = "float_serde")]
    pub max_abs_err: f64,
    /// Largest relative error over the compared elements.
    #[serde(with = "float_serde")]
    pub max_rel_err: f64,
    /// The first element outside the tolerance.
    pub first_bad: Option<BadElement>,
}

/// One wrong element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BadElement {
    /// Flat (row-major) index.
    pub index: u64,
    /// The reference value, as text (exact for integers, `nan`, `-0`, ...).
    pub expected: String,
    /// The candidate's value, as text.
    pub actual: String,
}

/// Latency statistics of the profiling repeats, microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Number of samples.
    pub n: u32,
    /// Median.
    #[serde(with = "float_serde")]
    pub median_us: f64,
    /// Mean.
    #[serde(with = "float_serde")]
    pub mean_us: f64,
    /// Sample standard deviation (n − 1 denominator; 0 for one sample).
    #[serde(with = "float_serde")]
    pub stddev_us: f64,
    /// Smallest sample.
    #[serde(with = "float_serde")]
    pub min_us: f64,
    /// Largest sample.
    #[serde(with = "float_serde")]
    pub max_us: f64,
}

impl LatencyStats {
    /// Statistics of `samples`; `None` when there are none or one is not a
    /// finite number.
    pub fn from_samples(samples: &[f64]) -> Option<LatencyStats> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let n = samples.len();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            samples.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(LatencyStats {
            n: u32::try_from(n).unwrap_or(u32::MAX),
            median_us: median_sorted(&sorted),
            mean_us: mean,
            stddev_us: var.sqrt(),
            min_us: sorted[0],
            max_us: sorted[n - 1],
        })
    }
}

/// Median of an ascending, non-empty slice (mean of the two middle values
/// for an even count).
pub(crate) fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

impl Verdict {
    /// True only for [`Verdict::Correct`].
    pub fn is_success(&self) -> bool {
        matches!(self, Verdict::Correct { .. })
    }

    /// The variant's stable name, stored in the run store's `verdict` column:
    /// `rejected_static`, `compile_error`, `runtime_error`, `timeout`,
    /// `incorrect` or `correct`.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::RejectedStatic { .. } => "rejected_static",
            Verdict::CompileError { .. } => "compile_error",
            Verdict::RuntimeError { .. } => "runtime_error",
            Verdict::Timeout { .. } => "timeout",
            Verdict::Incorrect { .. } => "incorrect",
            Verdict::Correct { .. } => "correct",
        }
    }

    /// A short label for progress lines and reports, e.g. `correct 12.3us`,
    /// `runtime_error:race`, `incorrect:rerun`.
    pub fn label(&self) -> String {
        match self {
            Verdict::RuntimeError { kind, .. } => format!("runtime_error:{}", kind.name()),
            Verdict::Incorrect { details } => format!("incorrect:{}", details.check.name()),
            Verdict::Timeout { after_ms } => format!("timeout {after_ms}ms"),
            Verdict::Correct { latency, .. } => format!("correct {:.1}us", latency.median_us),
            other => other.kind().to_string(),
        }
    }

    /// The latency statistics of a correct verdict.
    pub fn latency(&self) -> Option<&LatencyStats> {
        match self {
            Verdict::Correct { latency, .. } => Some(latency),
            _ => None,
        }
    }

    /// The profile of a correct verdict.
    pub fn profile(&self) -> Option<&Profile> {
        match self {
            Verdict::Correct { profile, .. } => Some(profile.as_ref()),
            _ => None,
        }
    }
}

impl RuntimeErrorKind {
    /// Stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeErrorKind::UbOverflow => "ub_overflow",
            RuntimeErrorKind::OutOfBounds => "out_of_bounds",
            RuntimeErrorKind::Race => "race",
            RuntimeErrorKind::Crash => "crash",
            RuntimeErrorKind::Deadlock => "deadlock",
            RuntimeErrorKind::Fault => "fault",
            RuntimeErrorKind::FasterThanHardware => "faster_than_hardware",
        }
    }
}

impl CorrectnessCheck {
    /// Stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            CorrectnessCheck::Reference => "reference",
            CorrectnessCheck::Rerun => "rerun",
            CorrectnessCheck::Recheck => "recheck",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::RejectedStatic { reason } => write!(f, "rejected by static check: {reason}"),
            Verdict::CompileError { diagnostics } => write!(f, "compile error:\n{diagnostics}"),
            Verdict::RuntimeError {
                kind,
                message,
                location,
            } => {
                write!(f, "runtime error ({}): {message}", kind.name())?;
                if let Some(loc) = location {
                    write!(f, " at {loc}")?;
                }
                Ok(())
            }
            Verdict::Timeout { after_ms } => write!(f, "timed out after {after_ms} ms"),
            Verdict::Incorrect { details: d } => {
                write!(
                    f,
                    "incorrect ({} check), case {}, output {}: {} of {} elements wrong, max abs err {}, max rel err {}",
                    d.check.name(),
                    d.case,
                    d.output,
                    d.mismatches,
                    d.total,
                    d.max_abs_err,
                    d.max_rel_err
                )?;
                if let Some(b) = &d.first_bad {
                    write!(
                        f,
                        "; first at index {}: expected {}, got {}",
                        b.index, b.expected, b.actual
                    )?;
                }
                Ok(())
            }
            Verdict::Correct { latency: l, .. } => write!(
                f,
                "correct: median {:.3} us (mean {:.3}, sd {:.3}, n {})",
                l.median_us, l.mean_us, l.stddev_us, l.n
            ),
        }
    }
}

/// Serde for `f64` that survives JSON: finite values as numbers, others as
/// `"nan"`, `"inf"`, `"-inf"`.
mod float_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("nan")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumOrText {
        Num(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match NumOrText::deserialize(d)? {
            NumOrText::Num(v) => Ok(v),
            NumOrText::Text(t) => match t.as_str() {
                "nan" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                other => Err(serde::de::Error::custom(format!(
                    "expected a number, \"nan\", \"inf\" or \"-inf\", found {other:?}"
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(v: &Verdict) -> Verdict {
        let text = serde_json::to_string(v).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn latency_stats_by_hand() {
        // samples 4, 1, 3, 2: sorted 1 2 3 4, median 2.5, mean 2.5,
        // var = (2.25 + 0.25 + 0.25 + 2.25) / 3 = 5/3.
        let s = LatencyStats::from_samples(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.n, 4);
        assert_eq!(s.median_us, 2.5);
        assert_eq!(s.mean_us, 2.5);
        assert!((s.stddev_us - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!((s.min_us, s.max_us), (1.0, 4.0));
        let odd = LatencyStats::from_samples(&[5.0, 1.0, 9.0]).unwrap();
        assert_eq!(odd.median_us, 5.0);
        let one = LatencyStats::from_samples(&[7.0]).unwrap();
        assert_eq!((one.median_us, one.stddev_us), (7.0, 0.0));
        assert_eq!(LatencyStats::from_samples(&[]), None);
        assert_eq!(LatencyStats::from_samples(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn non_finite_errors_survive_json() {
        let v = Verdict::Incorrect {
            details: Box::new(Mismatch {
                check: CorrectnessCheck::Reference,
                case: "tail_1023".into(),
                output: "z".into(),
                total: 1023,
                mismatches: 2,
                max_abs_err: f64::INFINITY,
                max_rel_err: f64::NEG_INFINITY,
                first_bad: Some(BadElement {
                    index: 17,
                    expected: "nan".into(),
                    actual: "0".into(),
                }),
            }),
        };
        let text = serde_json::to_string(&v).unwrap();
        assert!(text.contains(r#""max_abs_err":"inf""#), "{text}");
        assert!(text.contains(r#""verdict":"incorrect""#), "{text}");
        assert_eq!(roundtrip(&v), v);
        // NaN does not compare equal, so check it field by field.
        let nan = Verdict::Incorrect {
            details: Box::new(Mismatch {
                max_abs_err: f64::NAN,
                ..match &v {
                    Verdict::Incorrect { details } => (**details).clone(),
                    _ => unreachable!(),
                }
            }),
        };
        match roundtrip(&nan) {
            Verdict::Incorrect { details } => assert!(details.max_abs_err.is_nan()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn kinds_labels_and_success() {
        let runtime = Verdict::RuntimeError {
            kind: RuntimeErrorKind::UbOverflow,
            message: "needs 200 KB".into(),
            location: Some("op_kernel/x.cpp:12".into()),
        };
        assert_eq!(runtime.kind(), "runtime_error");
        assert_eq!(runtime.label(), "runtime_error:ub_overflow");
        assert_eq!(roundtrip(&runtime), runtime);
        assert!(!runtime.is_success());
        assert_eq!(
            runtime.to_string(),
            "runtime error (ub_overflow): needs 200 KB at op_kernel/x.cpp:12"
        );

        let correct = Verdict::Correct {
            latency: LatencyStats::from_samples(&[10.0, 12.0, 11.0]).unwrap(),
            samples_us: vec![10.0, 12.0, 11.0],
            profile: Box::new(Profile {
                task_duration_us: 11.0,
                ..Profile::default()
            }),
        };
        assert!(correct.is_success());
        assert_eq!(correct.label(), "correct 11.0us");
        assert_eq!(correct.latency().map(|l| l.median_us), Some(11.0));
        assert_eq!(roundtrip(&correct), correct);

        let timeout = Verdict::Timeout { after_ms: 30_000 };
        assert_eq!(
            (timeout.kind(), timeout.label().as_str()),
            ("timeout", "timeout 30000ms")
        );
        assert_eq!(
            Verdict::CompileError {
                diagnostics: "x".into()
            }
            .kind(),
            "compile_error"
        );
        assert_eq!(
            Verdict::RejectedStatic { reason: "x".into() }.label(),
            "rejected_static"
        );
    }

    #[test]
    fn unknown_float_text_is_an_error() {
        let text = r#"{"n":1,"median_us":"fast","mean_us":1,"stddev_us":0,"min_us":1,"max_us":1}"#;
        let err = serde_json::from_str::<LatencyStats>(text).unwrap_err();
        assert!(err.to_string().contains("\"fast\""), "{err}");
    }
}
