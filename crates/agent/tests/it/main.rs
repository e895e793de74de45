//! The integration tests of ascendopt-agent, in one binary
//! (`cargo test -p ascendopt-agent --test it`; one module: `--test it NAME::`).
//! A new integration test goes here as a module (`mod NAME;` below and
//! `tests/it/NAME.rs`), not as a new file in `tests/`: each file there is
//! a binary of its own, linked separately (slower CI, more disk).

mod common;
mod cube_diagnosis;
mod llm_common;
mod llm_dense;
mod llm_e2e;
mod naive;
mod optimize;
mod optimize_ablation;
mod rewind;
mod tune_schedule;
