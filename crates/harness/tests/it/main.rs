//! The integration tests of ascendopt-harness, in one binary
//! (`cargo test -p ascendopt-harness --test it`; one module: `--test it NAME::`).
//! A new integration test goes here as a module (`mod NAME;` below and
//! `tests/it/NAME.rs`), not as a new file in `tests/`: each file there is
//! a binary of its own, linked separately (slower CI, more disk).

mod common;
mod cube_package;
mod launches;
mod redteam;
mod tiling_template;
