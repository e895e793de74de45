//! The simulator's own tools that run above the judge: [`compat`] (how far
//! operator folders written elsewhere get on the simulator, `ascendopt
//! compat`), [`import`] (an op.toml for an msopgen project, from what its
//! host library registers, `ascendopt import`) and [`fidelity`] (the
//! timing model against figures measured on real hardware, `ascendopt
//! fidelity`) and [`speed`] (how fast the tool itself compiles and
//! simulates, `ascendopt bench-speed`).
//!
//! They build with the simulator's toolchain directly, describe host
//! libraries in its worker and time hand-written traces, so they need the
//! simulator's types; they live here, above `ascendopt-harness` and
//! `ascendopt-sim`, so that the harness, the bank and the agent stay
//! device-neutral.
//!
//! Invariant: only the CLI and the tests depend on this crate.
#![deny(missing_docs)]

pub mod compat;
pub mod fidelity;
pub mod import;
pub mod speed;
