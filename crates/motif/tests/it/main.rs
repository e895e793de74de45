//! The integration tests of ascendopt-motif, in one binary
//! (`cargo test -p ascendopt-motif --test it`; one module: `--test it NAME::`).
//! A new integration test goes here as a module (`mod NAME;` below and
//! `tests/it/NAME.rs`), not as a new file in `tests/`: each file there is
//! a binary of its own, linked separately (slower CI, more disk).

mod cube_motifs;
mod motif_survey;
mod motifs;
