//! The [`Proposer`] interface: where candidate kernels come from. The
//! built-in motif engine and the LLM both implement it; the loops (Rewind,
//! Stage I, Stage II, baselines) are the same for both.
//!
//! A proposer never judges: it returns [`Proposal`]s and the loop sends
//! each through [`crate::session::OpSession::evaluate`]. A proposal that
//! could not be turned into sources (an LLM response with no applicable
//! edit block) is a [`Proposal`] with `candidate = Err(reason)`; the loop
//! charges it as one failed evaluation and feeds the reason back, except
//! when its edits tried to write outside the candidate's sources
//! ([`NoCandidate::outside`]): refused, logged with the reason, never
//! charged (nothing was evaluated).

use crate::diagnose::Diagnosis;
use crate::session::{Action, NoCandidate};
use crate::ProposeError;
use ascendopt_bank::store::StoredEntry;
use ascendopt_motif::Sources;

/// One proposed candidate.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// What it is (proposer, motif, summary, guiding entries).
    pub action: Action,
    /// The candidate's sources, or why none could be made.
    pub candidate: Result<Sources, NoCandidate>,
}

/// What the loop tells a proposer about earlier attempts, so that it does
/// not propose a rejected edit again and can learn from failures.
#[derive(Debug, Clone, Default)]
pub struct Feedback {
    /// Earlier attempts of this loop with their outcome, oldest first:
    /// (action, verdict kind, one-line reason).
    pub attempts: Vec<(Action, String, String)>,
    /// Indices into `attempts` of the ones that became the incumbent.
    pub accepted: Vec<usize>,
}

/// Rewind's request: remove exactly one optimisation from `current`.
#[derive(Debug, Clone)]
pub struct RemovalRequest<'a> {
    /// The current (strong, or already degraded) kernel.
    pub current: &'a Sources,
    /// The operator's name.
    pub op: &'a str,
    /// Motifs already removed in this chain (their tags).
    pub removed: &'a [String],
    /// Earlier attempts of this chain.
    pub feedback: &'a Feedback,
}

/// Stage I's request: rewrite `current` to remove its bottleneck, guided
/// by the retrieved entries (none in the no-experience ablation).
#[derive(Debug, Clone)]
pub struct RewriteRequest<'a> {
    /// The incumbent kernel.
    pub current: &'a Sources,
    /// The operator's name.
    pub op: &'a str,
    /// The diagnosis of the incumbent.
    pub diagnosis: &'a Diagnosis,
    /// Retrieved entries, best first.
    pub entries: &'a [StoredEntry],
    /// Earlier attempts of this loop.
    pub feedback: &'a Feedback,
}

/// Stage II's request (LLM proposers only): edit the small branch logic of
/// the evolvable tiling region; the integer knobs are searched by the loop.
#[derive(Debug, Clone)]
pub struct TilingEditRequest<'a> {
    /// The incumbent kernel (fixed) with its host code.
    pub current: &'a Sources,
    /// The operator's name.
    pub op: &'a str,
    /// The incumbent's profile.
    pub profile: Option<&'a ascendopt_device::Profile>,
    /// Earlier attempts of this loop.
    pub feedback: &'a Feedback,
}

/// Where candidates come from.
pub trait Proposer {
    /// Stable name (`builtin`, `llm`).
    fn name(&self) -> &str;

    /// Rewind: candidates that each remove one motif from the current
    /// kernel, in the order the loop should try them. An empty list ends
    /// the chain.
    fn removals(&mut self, req: &RemovalRequest<'_>) -> Result<Vec<Proposal>, ProposeError>;

    /// Stage I: rewrites of the incumbent, in the order the loop should
    /// try them. An empty list means the proposer has nothing more.
    fn rewrites(&mut self, req: &RewriteRequest<'_>) -> Result<Vec<Proposal>, ProposeError>;

    /// Stage II: edits of the tiling region's branch logic (knob values
    /// are the loop's business). The default proposes none.
    fn tiling_edits(
        &mut self,
        _req: &TilingEditRequest<'_>,
    ) -> Result<Vec<Proposal>, ProposeError> {
        Ok(Vec::new())
    }
}
