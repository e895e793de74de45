//! The agent layer of ascendopt: what proposes kernel edits and drives the
//! three stages (Rewind, Stage I refinement, Stage II tiling search).
//!
//! - [`motif`]: the built-in motif engine, deterministic source
//!   transformations of AscendC operator packages (kernel and host code),
//!   each optimisation motif with a `remove` direction (strong → weak, used
//!   by Rewind) and an `apply` direction (weak → strong, used by Stage I).
//!   It needs no network; it parses C++ with tree-sitter and rewrites by
//!   byte ranges.
//! - [`session`]: one operator's evaluations in a run (budget ledger,
//!   candidate folders, evaluation log): the only way a candidate is judged.
//! - [`proposer`]: the [`proposer::Proposer`] interface shared by the
//!   built-in engine and the LLM.
//! - [`diagnose`]: the [`diagnose::Diagnoser`] interface and diagnosis type.
//!
//! Invariant: the agent never judges a candidate itself; every candidate
//! is evaluated by `ascendopt-harness` through [`session::OpSession`].
#![deny(missing_docs)]

pub mod baselines;
pub mod bench;
pub mod bench_naive;
pub mod builtin;
pub mod diagnose;
pub mod distill;
pub mod features;
pub mod knobfind;
pub mod llm;
pub mod motif;
pub mod optimize;
pub mod outcome;
pub mod proposer;
pub mod refine;
pub mod report;
pub mod rewind;
mod rng;
pub mod session;
pub mod sim_vs_chip;
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
    Propose(#[from] proposer::ProposeError),
    /// The motif engine could not read or write sources.
    #[error(transparent)]
    Motif(#[from] motif::MotifError),
    /// A package folder is invalid.
    #[error("{}: {message}", dir.display())]
    Package {
        /// The folder.
        dir: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}
