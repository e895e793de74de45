//! Diagnosis: the main bottleneck of a judged kernel, as text plus a
//! profile signature and code features, which is what retrieval queries
//! the bank with.
//!
//! The [`Diagnoser`] trait has two implementations: the built-in
//! rule-based one (`rules`, which explains the rule it fired) and the LLM
//! one (LLM issue).

use crate::ProposeError;
use ascendopt_bank::signature::ProfileSignature;
use ascendopt_motif::Sources;
use serde::{Deserialize, Serialize};

/// The main bottleneck of a kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// Short stable class (`mte2_bound_no_overlap`, `scalar_bound`,
    /// `small_copies`, `idle_cores`, `vector_long_chains`,
    /// `tail_imbalance`, `balanced`, ...).
    pub kind: String,
    /// One or two sentences: the bottleneck in words (the retrieval query
    /// text).
    pub text: String,
    /// Why: the rule that fired with the numbers it saw (built-in), or the
    /// model's reasoning (LLM).
    pub rule: String,
    /// The profile signature of the kernel.
    pub signature: Option<ProfileSignature>,
    /// Code features (`single_buffer`, `one_core`, `scalar_loop`, ...),
    /// matched against entries' applicability.
    pub code_features: Vec<String>,
    /// Motif tags the diagnosis points at, best first (may be empty).
    pub motifs: Vec<String>,
}

/// What a diagnoser sees.
#[derive(Debug, Clone)]
pub struct DiagnoseRequest<'a> {
    /// The kernel and host sources.
    pub sources: &'a Sources,
    /// The operator's name.
    pub op: &'a str,
    /// The profile of its benchmark case.
    pub profile: &'a ascendopt_device::Profile,
    /// Compiler diagnostics (warnings), if any.
    pub compiler_diagnostics: &'a str,
}

/// Names the main bottleneck.
pub trait Diagnoser {
    /// Stable name (`rules`, `llm`).
    fn name(&self) -> &str;
    /// The diagnosis.
    fn diagnose(&mut self, req: &DiagnoseRequest<'_>) -> Result<Diagnosis, ProposeError>;
}

pub mod measured;
mod rules;

pub use rules::RuleDiagnoser;
