//! The agent layer of ascendopt: what proposes kernel edits and drives the
//! three stages (Rewind, Stage I refinement, Stage II tiling search).
//!
//! - [`motif`]: the built-in motif engine, deterministic source
//!   transformations of AscendC operator packages (kernel and host code),
//!   each optimisation motif with a `remove` direction (strong → weak, used
//!   by Rewind) and an `apply` direction (weak → strong, used by Stage I).
//!   It needs no network; it parses C++ with tree-sitter and rewrites by
//!   byte ranges.
//!
//! Invariant: the agent never judges a candidate itself; every candidate
//! is evaluated by `ascendopt-harness`.
#![deny(missing_docs)]

pub mod motif;
