//! The integration tests of ascendopt-experiments, in one binary
//! (`cargo test -p ascendopt-experiments --test it`; one module: `--test it NAME::`).
//! A new integration test goes here as a module (`mod NAME;` below and
//! `tests/it/NAME.rs`), not as a new file in `tests/`: each file there is
//! a binary of its own, linked separately (slower CI, more disk).

mod llm_baselines;
mod llm_bench;
#[path = "../../../agent/tests/it/llm_common.rs"]
mod llm_common;
