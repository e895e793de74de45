//! `ascendopt optimize` (under construction).

use crate::Status;

/// Arguments (under construction).
#[derive(Debug, clap::Args)]
pub struct OptimizeArgs {}

/// Runs the command.
pub fn run(_args: OptimizeArgs) -> anyhow::Result<Status> {
    anyhow::bail!("`optimize` is under construction")
}
