//! The integration tests of ascendopt-simtools, in one binary
//! (`cargo test -p ascendopt-simtools --test it`; one module: `--test it NAME::`).
//! A new integration test goes here as a module (`mod NAME;` below and
//! `tests/it/NAME.rs`), not as a new file in `tests/`.

mod common;
mod compat_import;
mod fidelity;
