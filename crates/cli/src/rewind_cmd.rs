//! `ascendopt rewind` (under construction).

use crate::Status;

/// Arguments (under construction).
#[derive(Debug, clap::Args)]
pub struct RewindArgs {}

/// Runs the command.
pub fn run(_args: RewindArgs) -> anyhow::Result<Status> {
    anyhow::bail!("`rewind` is under construction")
}
