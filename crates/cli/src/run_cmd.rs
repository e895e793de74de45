//! `ascendopt run` (under construction).

use crate::Status;

/// Arguments (under construction).
#[derive(Debug, clap::Args)]
pub struct RunArgs {}

/// Runs the command.
pub fn run(_args: RunArgs) -> anyhow::Result<Status> {
    anyhow::bail!("`run` is under construction")
}
