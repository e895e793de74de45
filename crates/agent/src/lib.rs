//! The agent layer of ascendopt: what proposes kernel edits and drives the
//! three stages (Rewind, Stage I refinement, Stage II tiling search).
//!
//! - [`session`]: one operator's evaluations in a run (budget ledger,
//!   candidate folders, evaluation log): the only way a candidate is judged.
//! - [`proposer`]: the [`proposer::Proposer`] interface shared by the
//!   built-in engine and the LLM.
//! - [`diagnose`]: the [`diagnose::Diagnoser`] interface and diagnosis type.
//! - [`factory`]: where a loop's proposers, diagnosers and distillers come
//!   from (built-in or LLM).
//! - [`rewind`], [`refine`] (Stage I), [`tune`] (Stage II) and
//!   [`optimize`] (both stages on one operator): the loops.
//!
//! The candidates come from the motif engine (`ascendopt-motif`) or an
//! LLM ([`llm`]); the experiments that measure the method (benchmark,
//! baselines, reports) are `ascendopt-experiments`, above this crate.
//!
//! Invariant: the agent never judges a candidate itself; every candidate
//! is evaluated by `ascendopt-harness` through [`session::OpSession`].
#![deny(missing_docs)]

pub mod attempts;
pub mod builtin;
pub mod diagnose;
pub mod distill;
pub mod factory;
pub mod features;
pub mod llm;
pub mod optimize;
pub mod outcome;
pub mod proposer;
pub mod refine;
pub mod rewind;
pub mod rng;
pub mod session;
pub mod tune;

use std::path::PathBuf;

/// Errors that stop a loop (never a candidate's fault: those are verdicts).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The harness could not attempt an evaluation (budget spent, store
    /// failure, device setup).
    #[error(transparent)]
    Pipeline(#[from] ascendopt_harness::pipeline::PipelineError),
    /// The budget ledger failed or the budget is spent.
    #[error(transparent)]
    Ledger(#[from] ascendopt_harness::ledger::LedgerError),
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] ascendopt_harness::store::StoreError),
    /// The bank failed.
    #[error(transparent)]
    Bank(#[from] ascendopt_bank::error::BankError),
    /// A proposer or diagnoser failed in a way that is not the candidate's
    /// fault (unreachable endpoint, no API key).
    #[error(transparent)]
    Propose(#[from] ProposeError),
    /// The motif engine could not read or write sources.
    #[error(transparent)]
    Motif(#[from] ascendopt_motif::MotifError),
    /// A loop over several operators failed on one of them.
    #[error("{doing} {op}")]
    Operator {
        /// What was being done (`rewinding`).
        doing: &'static str,
        /// The operator.
        op: String,
        /// Why.
        #[source]
        source: Box<AgentError>,
    },
    /// A package folder cannot be used.
    #[error("{}: {source}", dir.display())]
    Package {
        /// The folder.
        dir: PathBuf,
        /// What is wrong.
        source: PackageError,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A record could not be written as JSON.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file it was for.
        path: PathBuf,
        /// What went wrong.
        source: serde_json::Error,
    },
}

/// Why a package folder cannot be used ([`AgentError::Package`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackageError {
    /// It does not load (its op.toml, its golden, its sources).
    #[error(transparent)]
    Load(#[from] ascendopt_op::OpError),
    /// Its cases cannot be selected as asked.
    #[error(transparent)]
    Cases(#[from] ascendopt_harness::eval::SelectError),
    /// Its sources cannot be scanned.
    #[error(transparent)]
    Scan(#[from] ascendopt_harness::static_check::StaticCheckError),
    /// A path of a candidate leaves the package.
    #[error(transparent)]
    Path(#[from] ascendopt_llm::edits::PathRefused),
    /// It cannot serve as asked: what the caller found (a comparison
    /// that produced nothing, a candidate missing from the store).
    #[error("{0}")]
    Unusable(String),
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
