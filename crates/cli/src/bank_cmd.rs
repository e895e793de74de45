//! `ascendopt bank` (under construction).

use crate::Status;

/// Arguments (under construction).
#[derive(Debug, clap::Args)]
pub struct BankArgs {}

/// Runs the command.
pub fn run(_args: BankArgs) -> anyhow::Result<Status> {
    anyhow::bail!("`bank` is under construction")
}
