//! The integration tests of ascendopt-device, in one binary
//! (`cargo test -p ascendopt-device --test it`; one module: `--test it NAME::`).
//! A new integration test goes here as a module (`mod NAME;` below and
//! `tests/it/NAME.rs`), not as a new file in `tests/`: each file there is
//! a binary of its own, linked separately (slower CI, more disk).

mod cann_build;
mod doctor;
mod msprof_output;
