//! `ascendopt bank`: inspect and move experience banks. Every subcommand
//! is one call of `ascendopt_bank::commands` (or the bank's API) and one
//! `render_*` print. Commands that only read a bank never create one.

use crate::Status;
use anyhow::{Context, Result};
use ascendopt_bank::commands::{
    export_to_file, from_docs_into, import_from_file, open_existing, render_entry,
    render_from_docs, render_hits, render_import, render_list,
};
use ascendopt_bank::entry::Origin;
use ascendopt_bank::retrieve::{AvoidPolicy, Query, DEFAULT_K};
use ascendopt_bank::signature::ProfileSignature;
use ascendopt_bank::store::{Bank, EntryFilter, EntryId};
use std::path::PathBuf;

/// Arguments of `ascendopt bank`.
#[derive(Debug, clap::Args)]
pub struct BankArgs {
    /// The bank file.
    #[arg(long, value_name = "FILE", global = true)]
    bank: Option<PathBuf>,
    #[command(subcommand)]
    command: BankCommand,
}

#[derive(Debug, clap::Subcommand)]
enum BankCommand {
    /// One line per entry (id, motif, origin, source, speedup, title).
    List {
        /// Only this motif tag.
        #[arg(long)]
        motif: Option<String>,
        /// Only this family or families under it (`kernel.memory`).
        #[arg(long)]
        family: Option<String>,
        /// Only this origin (rewind, docs, manual).
        #[arg(long)]
        origin: Option<String>,
        /// Only entries learnt from this operator.
        #[arg(long)]
        op: Option<String>,
    },
    /// Every field of one entry, its diff last.
    Show {
        /// The entry's id (`3` or `#3`).
        id: String,
    },
    /// The top-k entries for a bottleneck description.
    Search {
        /// The bottleneck, in words.
        text: String,
        /// Entries to return.
        #[arg(long, short, default_value_t = DEFAULT_K)]
        k: usize,
        /// Code features of the kernel (`single-buffer`, `scalar-loop`);
        /// repeatable.
        #[arg(long = "feature")]
        features: Vec<String>,
        /// A profile JSON (as the harness stores it) to take the kernel's
        /// signature from.
        #[arg(long, value_name = "FILE")]
        profile: Option<PathBuf>,
        /// Keep entries whose avoid_when names a feature (demoted) instead
        /// of dropping them.
        #[arg(long)]
        demote_avoided: bool,
    },
    /// Write every entry as JSON lines.
    Export {
        /// The JSONL file to write.
        #[arg(long, short, value_name = "FILE")]
        out: PathBuf,
    },
    /// Add the entries of a JSONL file (duplicates skipped; a bad line
    /// imports nothing).
    Import {
        /// The JSONL file.
        file: PathBuf,
    },
    /// Build entries from a tuning guide (a folder of Markdown pages).
    FromDocs {
        /// The guide folder.
        dir: PathBuf,
        /// Creation time written into the entries (Unix ms; default now).
        #[arg(long)]
        created_ms: Option<i64>,
    },
    /// Freeze the bank: no entry can be added afterwards.
    Freeze,
}

fn bank_path(args: &BankArgs) -> Result<&PathBuf> {
    args.bank
        .as_ref()
        .context("--bank FILE is required (the bank to work on)")
}

fn parse_id(text: &str) -> Result<EntryId> {
    let digits = text.trim().trim_start_matches('#');
    let id: i64 = digits
        .parse()
        .with_context(|| format!("{text:?} is not an entry id (a number such as 3 or #3)"))?;
    Ok(EntryId(id))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Runs the command.
pub fn run(args: BankArgs) -> Result<Status> {
    let path = bank_path(&args)?.clone();
    match args.command {
        BankCommand::List {
            motif,
            family,
            origin,
            op,
        } => {
            let origin =
                match origin {
                    Some(o) => Some(Origin::parse(&o).with_context(|| {
                        format!("--origin {o:?}: expected rewind, docs or manual")
                    })?),
                    None => None,
                };
            let bank = open_existing(&path)?;
            let entries = bank.list(&EntryFilter {
                motif,
                family,
                origin,
                source_op: op,
            })?;
            print!("{}", render_list(&entries));
        }
        BankCommand::Show { id } => {
            let id = parse_id(&id)?;
            let bank = open_existing(&path)?;
            print!("{}", render_entry(&bank.show(id)?));
        }
        BankCommand::Search {
            text,
            k,
            features,
            profile,
            demote_avoided,
        } => {
            let signature = match profile {
                Some(file) => {
                    let json = std::fs::read_to_string(&file)
                        .with_context(|| format!("reading {}", file.display()))?;
                    let value: serde_json::Value = serde_json::from_str(&json)
                        .with_context(|| format!("{} is not JSON", file.display()))?;
                    Some(
                        ProfileSignature::from_profile_json(&value)
                            .with_context(|| format!("signature of {}", file.display()))?,
                    )
                }
                None => None,
            };
            let bank = open_existing(&path)?;
            let query = Query {
                text,
                signature,
                code_features: features,
                only_motifs: Vec::new(),
                exclude_motifs: Vec::new(),
                avoid: if demote_avoided {
                    AvoidPolicy::Demote
                } else {
                    AvoidPolicy::Drop
                },
            };
            print!("{}", render_hits(&bank.search(&query, k)?));
        }
        BankCommand::Export { out } => {
            let bank = open_existing(&path)?;
            let n = export_to_file(&bank, &out)?;
            println!("exported {n} entries to {}", out.display());
        }
        BankCommand::Import { file } => {
            let bank = Bank::open(&path)?;
            print!("{}", render_import(&import_from_file(&bank, &file)?));
        }
        BankCommand::FromDocs { dir, created_ms } => {
            let bank = Bank::open(&path)?;
            let report = from_docs_into(&bank, &dir, created_ms.unwrap_or_else(now_ms))?;
            print!("{}", render_from_docs(&report));
        }
        BankCommand::Freeze => {
            let bank = open_existing(&path)?;
            bank.freeze()?;
            println!("bank {} frozen ({} entries)", path.display(), bank.len()?);
        }
    }
    Ok(Status::Ok)
}
