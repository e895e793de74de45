//! `ascendopt bench` (under construction).

use crate::Status;

/// Arguments (under construction).
#[derive(Debug, clap::Args)]
pub struct BenchArgs {}

/// Runs the command.
pub fn run(_args: BenchArgs) -> anyhow::Result<Status> {
    anyhow::bail!("`bench` is under construction")
}
