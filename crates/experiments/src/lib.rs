//! The experiments around the method: what measures it, compares it with
//! baselines and reports it, as opposed to the method itself
//! (`ascendopt-agent`), which they drive through its public API.
//!
//! - [`bench`]: the benchmark behind `ascendopt run` and `ascendopt bench`
//!   (Rewind builds a bank, then every method runs at equal budget per
//!   operator; resumable, results independent of the thread count);
//! - [`bench_naive`]: the same over first-attempt ("naive") operators;
//! - [`baselines`]: best-of-N sampling and coder + judge;
//! - [`report`]: `results.json`, `report.md`, `report.html`;
//! - [`evals`]: how fast the evaluation loop itself is (`ascendopt bench-evals`);
//! - [`tiling`]: Stage II against random search on one operator, and
//!   [`tiling_bench`], the benchmark over many (`ascendopt bench-tiling`);
//! - [`rule_bench`]: the acceptance rule's false-accept rate and power on
//!   the device (`ascendopt bench-rule`);
//! - [`suite`]: the operator-suite quality table (`ascendopt suite`).
//!
//! Invariant: an experiment never judges a candidate itself; every
//! candidate goes through the method's `session::OpSession` (or, for the
//! device-level benches, the harness), and nothing below this crate
//! names it.
#![deny(missing_docs)]

pub mod baselines;
pub mod bench;
pub mod bench_naive;
pub mod evals;
pub mod report;
pub mod rule_bench;
pub mod sim_vs_chip;
pub mod suite;
pub mod tiling;
pub mod tiling_bench;
