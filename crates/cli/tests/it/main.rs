//! The integration tests of ascendopt, in one binary
//! (`cargo test -p ascendopt --test it`; one module: `--test it NAME::`).
//! A new integration test goes here as a module (`mod NAME;` below and
//! `tests/it/NAME.rs`), not as a new file in `tests/`: each file there is
//! a binary of its own, linked separately (slower CI, more disk).

mod bank_cli;
mod bench_resume;
mod cli;
mod common;
mod dense_cli;
mod json_schema;
mod local_llm;
mod optimize_cli;
mod rewind_cli;
mod run_report;
mod suite_cli;
mod suite_readme;
mod tidy;
