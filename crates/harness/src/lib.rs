//! The evaluation harness: the judge of every candidate kernel.
//!
//! An *evaluation* is static check → build → correctness → profile of one
//! candidate ([`pipeline`]; [`eval`] checks a package on a device, the
//! engine of `ascendopt eval` that the pipeline calls). This crate also
//! holds the parts that pipeline stands on:
//!
//! - [`verdict`]: the typed outcome of one evaluation ([`verdict::Verdict`]),
//!   a run-store row;
//! - [`static_check`]: rules checked on untrusted kernel and tiling sources
//!   before they are compiled;
//! - [`store`]: the SQLite run store (runs, operators and budgets,
//!   evaluations, sources by hash), crash-safe and resumable;
//! - [`ledger`]: the evaluation budget of an operator per stage;
//! - [`compare`]: the noise-aware "is the candidate faster?" rule and its
//!   measured error rates;
//! - [`physics`]: the guard that fails a latency below the hardware's
//!   limit;
//! - [`pool`]: `-j N` parallel evaluation with results in job order;
//! - [`out_lock`]: one process per output folder;
//! - [`fresh`]: shapes a kernel has not seen, for the final judgement.
//!
//! Invariants:
//! - Every evaluation that runs costs one unit of its operator's stage
//!   budget, whatever its verdict; a failure is a [`verdict::Verdict`],
//!   never an `Err`. A candidate whose sources or launches equal an
//!   evaluated one's is answered with that verdict without charge.
//! - An evaluation row and its budget charge are written in one
//!   transaction, keyed by (run, operator, stage, budget index): a process
//!   killed at any moment loses no recorded evaluation and counts none
//!   twice.
//! - A candidate is accepted as faster only when its improvement exceeds
//!   the noise threshold calibrated on the incumbent's own repeats; invalid
//!   or too few samples never win.
//! - Results do not depend on the number of worker threads.
//! - The harness never runs kernel code in its own process (the device's
//!   worker does), and it knows nothing of the agent or the CLI.
//! - Device-neutral: it speaks to a device only through
//!   `ascendopt_device::Device` and its data; no simulator type appears
//!   here (the simulator's own tools above the judge are in
//!   `ascendopt-simtools`).
#![deny(missing_docs)]

pub mod candidate;
pub mod compare;
pub mod eval;
pub mod fresh;
pub mod ledger;
pub mod memory;
pub mod out_lock;
pub mod physics;
pub mod pipeline;
pub mod pool;
pub mod static_check;
pub mod store;
pub mod verdict;
