//! The integration tests of ascendopt-sim, in one binary
//! (`cargo test -p ascendopt-sim --test it`; one module: `--test it NAME::`).
//! A new integration test goes here as a module (`mod NAME;` below and
//! `tests/it/NAME.rs`), not as a new file in `tests/`: each file there is
//! a binary of its own, linked separately (slower CI, more disk).

mod arange;
mod cube;
mod fixpipe_quant;
mod host_headers;
mod img2col;
mod kernel_lib;
mod lib_api;
mod op_frame;
mod queue_handover;
mod runtime_launch;
mod timing_e2e;
mod unit_flag;
mod worker;
