//! `ascendopt import`: writes the op.toml (and golden.py) of msopgen
//! operator folders written elsewhere.

use crate::Status;
use anyhow::Result;
use ascendopt_simtools::import;
use std::path::PathBuf;

/// Arguments of `ascendopt import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// An operator folder (with op_host/ and op_kernel/), or a folder to
    /// search for them.
    dir: PathBuf,
    /// Overwrite an existing op.toml and golden.py.
    #[arg(long)]
    force: bool,
    /// Print one JSON document instead of the report.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ImportArgs) -> Result<Status> {
    if !args.dir.is_dir() {
        anyhow::bail!("{}: not a folder", args.dir.display());
    }
    let reports = import::import_dir(&crate::hiargs::import_config(args.force)?, &args.dir);
    if reports.is_empty() {
        anyhow::bail!(
            "no operator folder (one with op_host/ and op_kernel/) at or under {}",
            args.dir.display()
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        for r in &reports {
            match &r.error {
                None => println!(
                    "{}: wrote {}",
                    r.dir.display(),
                    r.written
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Some(e) => println!("{}: not imported: {e}", r.dir.display()),
            }
            for n in &r.notes {
                println!("  - {n}");
            }
            if r.ok() {
                println!(
                    "  next: ascendopt eval {} (then ascendopt optimize {})",
                    r.dir.display(),
                    r.dir.display()
                );
            }
        }
    }
    Ok(if reports.iter().all(|r| r.ok()) {
        Status::Ok
    } else {
        Status::Failed
    })
}
