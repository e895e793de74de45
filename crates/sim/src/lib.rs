//! The Ascend 910B2 simulator: AscendC emulation headers (in `include/`),
//! the Rust runtime behind them, the instruction trace, the timing model and
//! the checkers.
//!
//! Flow: [`build`] compiles an operator's host and kernel sources with g++
//! into shared objects; [`worker`] runs them in a sandboxed child process
//! (`ascendopt-worker`), where [`launch`] calls the host tiling function and
//! then the kernel on every block against [`runtime`], which computes the
//! results and records a [`trace::Trace`]; [`timing`] turns the trace into
//! an msprof-style profile. [`device::SimDevice`] puts it all behind the
//! device-neutral `ascendopt_device::Device` trait, whose data types
//! (profile, platform, tiling, findings) this crate uses and re-exports at
//! their old paths.
//!
//! Invariants:
//! - Kernel code never runs in the caller's process: only the worker loads
//!   a user's shared object.
//! - The runtime never reads time; the timing model never reads tensor
//!   values (it sees only the trace).
#![deny(missing_docs)]

pub mod abi;
pub mod build;
pub mod check;
pub mod device;
pub mod host;
pub mod host_abi;
pub mod launch;
pub mod numeric;
pub mod open;
pub mod runtime;
pub mod timing;
pub mod trace;
pub mod worker;

pub use device::{SimDevice, SimDeviceConfig};

#[cfg(test)]
mod test_rng;
