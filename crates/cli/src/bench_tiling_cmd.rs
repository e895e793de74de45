//! `ascendopt bench-tiling` (under construction).

use crate::Status;

/// Arguments (under construction).
#[derive(Debug, clap::Args)]
pub struct BenchTilingArgs {}

/// Runs the command.
pub fn run(_args: BenchTilingArgs) -> anyhow::Result<Status> {
    anyhow::bail!("`bench-tiling` is under construction")
}
