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
use crate::motif::Sources;
use crate::session::Action;
use ascendopt_bank::store::StoredEntry;

/// One proposed candidate.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// What it is (proposer, motif, summary, guiding entries).
    pub action: Action,
    /// The candidate's sources, or why none could be made.
    pub candidate: Result<Sources, NoCandidate>,
}

/// Why a proposal holds no candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoCandidate {
    /// In words (fed back to the proposer).
    pub reason: String,
    /// Its edits tried to write outside `op_kernel/` and `op_host/` of the
    /// candidate (op.toml, a golden, a path with `..`): refused, never
    /// charged.
    pub outside: bool,
}

impl NoCandidate {
    /// A proposal with no applicable edit (charged like a compile error).
    pub fn no_edit(reason: impl Into<String>) -> NoCandidate {
        NoCandidate {
            reason: reason.into(),
            outside: false,
        }
    }
}

impl std::fmt::Display for NoCandidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
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

/// Errors a proposer reports that are not the candidate's fault, never
/// charged: most stop the run (an unreachable endpoint, a missing key);
/// one with [`ProposeError::ends_stage`] ends only the stage that asked
/// (the request cannot be made for this operator's sources, e.g. its
/// prompt does not fit the model's context), and the run goes on.
#[derive(Debug, thiserror::Error)]
#[error("{proposer}: {message}")]
pub struct ProposeError {
    /// The proposer.
    pub proposer: String,
    /// What went wrong.
    pub message: String,
    /// The stage ends with this as its stop reason; the run goes on.
    pub ends_stage: bool,
}

impl ProposeError {
    /// An error that stops the run.
    pub fn fatal(proposer: impl Into<String>, message: impl Into<String>) -> ProposeError {
        ProposeError {
            proposer: proposer.into(),
            message: message.into(),
            ends_stage: false,
        }
    }

    /// `result`'s value, or None for an error that only ends the stage
    /// (its reason then in `stop`); an error that stops the run stays one.
    pub fn stage_ending<T>(
        result: Result<T, ProposeError>,
        stop: &mut Option<String>,
    ) -> Result<Option<T>, ProposeError> {
        match result {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.ends_stage => {
                *stop = Some(format!("the proposer cannot go on here: {e}"));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
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
