//! `ascendopt bench-evals` (under construction).

use crate::Status;

/// Arguments (under construction).
#[derive(Debug, clap::Args)]
pub struct BenchEvalsArgs {}

/// Runs the command.
pub fn run(_args: BenchEvalsArgs) -> anyhow::Result<Status> {
    anyhow::bail!("`bench-evals` is under construction")
}
