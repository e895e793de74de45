//! Distillation: turning a verified removal (slow kernel, fast kernel,
//! evidence) into the text fields of an experience entry. The built-in
//! distiller fills them from the motif's description; the LLM distiller
//! (LLM issue) writes them from the diff and the evidence.

use crate::proposer::ProposeError;
use ascendopt_bank::entry::Applicability;

/// What a distiller sees: the inverted edit (slow → fast) and its evidence.
#[derive(Debug, Clone)]
pub struct DistillRequest<'a> {
    /// The operator it came from.
    pub op: &'a str,
    /// The motif tag the removal took out (None when unknown).
    pub motif: Option<&'a str>,
    /// Unified diff, slow → fast.
    pub diff: &'a str,
    /// Slow and fast median latencies, µs.
    pub slow_us: f64,
    /// Fast median latency, µs.
    pub fast_us: f64,
    /// Profile fields that moved: (name, slow value, fast value).
    pub moved: &'a [(String, f64, f64)],
}

/// The text fields of an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryText {
    /// One line: the optimisation.
    pub title: String,
    /// The bottleneck it removes.
    pub bottleneck: String,
    /// When to reuse it and when not to.
    pub applicability: Applicability,
    /// The expected effect.
    pub expected_effect: String,
    /// Retrieval keywords.
    pub keywords: Vec<String>,
}

/// Writes entries' text.
pub trait Distiller {
    /// Stable name (`builtin`, `llm`).
    fn name(&self) -> &str;
    /// The entry's text fields.
    fn distill(&mut self, req: &DistillRequest<'_>) -> Result<EntryText, ProposeError>;
}
