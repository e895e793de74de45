//! `ascendopt bank`: inspect and move experience banks. Every subcommand
//! takes its bank from `hiargs.rs`, makes one call of
//! `ascendopt_bank::commands` (or the bank's API) and one `render_*`
//! print. Commands that only read a bank never create one.

use crate::hiargs;
use crate::json_doc::JsonDoc;
use crate::rewind_cmd::side_dir;
use crate::Status;
use anyhow::{Context, Result};
use ascendopt_bank::commands::{
    export_to_file, from_docs_into, import_from_file, render_entry, render_from_docs, render_hits,
    render_import, render_list,
};
use ascendopt_bank::entry::Origin;
use ascendopt_bank::retrieve::{AvoidPolicy, Query, DEFAULT_K};
use ascendopt_bank::signature::ProfileSignature;
use ascendopt_bank::store::{Bank, EntryFilter, EntryId, StoredEntry};
use std::path::{Path, PathBuf};

/// Arguments of `ascendopt bank`.
#[derive(Debug, clap::Args)]
pub struct BankArgs {
    /// The bank file.
    #[arg(long, value_name = "FILE", global = true)]
    bank: Option<PathBuf>,
    /// Print one JSON document (docs/schema/ascendopt-output.schema.json)
    /// instead of text (list, show, search).
    #[arg(long, global = true)]
    json: bool,
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
    /// Every field of one entry, its diff last; without an id, the bank
    /// itself: entries, frozen or not, and Rewind's side folder
    /// (`<bank>.rewind/`: its run store and candidate packages).
    Show {
        /// The entry's id (`3` or `#3`).
        id: Option<String>,
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

/// An entry as JSON: id, content hash, then every field of the entry;
/// `extra` (rank, score, explanation) merged in.
fn entry_json(stored: &StoredEntry, extra: serde_json::Value) -> serde_json::Value {
    let mut v = serde_json::to_value(&stored.entry).unwrap_or(serde_json::Value::Null);
    if let Some(obj) = v.as_object_mut() {
        obj.insert("id".into(), serde_json::json!(stored.id.0));
        obj.insert("hash".into(), serde_json::json!(stored.hash.as_str()));
        if let serde_json::Value::Object(more) = extra {
            obj.extend(more);
        }
    }
    v
}

/// The entries grouped by the operator they were learnt from (first-seen
/// order, so a search keeps its ranking across groups).
fn by_operator(doc: &mut JsonDoc, entries: Vec<(&StoredEntry, serde_json::Value)>) {
    let mut groups: Vec<(String, Option<u8>, Vec<serde_json::Value>)> = Vec::new();
    for (stored, extra) in entries {
        let src = &stored.entry.source;
        let item = entry_json(stored, extra);
        match groups.iter_mut().find(|g| g.0 == src.op) {
            Some(g) => g.2.push(item),
            None => groups.push((src.op.clone(), src.level, vec![item])),
        }
    }
    for (op, level, entries) in groups {
        doc.operator(serde_json::json!({ "op": op, "level": level, "entries": entries }));
    }
}

/// Files and folders under `dir` with their sizes, one level deep.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    fn size(p: &Path) -> u64 {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => std::fs::read_dir(p)
                .map(|rd| rd.flatten().map(|e| size(&e.path())).sum())
                .unwrap_or(0),
            Ok(m) => m.len(),
            Err(_) => 0,
        }
    }
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let mut name = e.file_name().to_string_lossy().into_owned();
                    if e.path().is_dir() {
                        name.push('/');
                    }
                    (name, size(&e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// `bank show` without an id: the bank, then Rewind's side folder.
fn show_bank(path: &Path, bank: &Bank, json: bool) -> Result<()> {
    let entries = bank.list(&EntryFilter {
        motif: None,
        family: None,
        origin: None,
        source_op: None,
    })?;
    let frozen = bank.is_frozen()?;
    let digest = bank.content_digest()?;
    let side = side_dir(path);
    let files = if side.is_dir() {
        listing(&side)
    } else {
        Vec::new()
    };
    if json {
        let mut doc = JsonDoc::new("bank show");
        by_operator(
            &mut doc,
            entries.iter().map(|e| (e, serde_json::json!({}))).collect(),
        );
        doc.field(
            "bank",
            serde_json::json!({
                "path": path.display().to_string(),
                "entries": entries.len(),
                "frozen": frozen,
                "digest": digest,
                "side_folder": side.is_dir().then(|| side.display().to_string()),
                "side_files": files.iter().map(|(n, b)| serde_json::json!({"name": n, "bytes": b})).collect::<Vec<_>>(),
            }),
        );
        return doc.print();
    }
    let mut ops: Vec<&str> = entries.iter().map(|e| e.entry.source.op.as_str()).collect();
    ops.sort_unstable();
    ops.dedup();
    println!("bank       {}", path.display());
    println!(
        "entries    {} entries from {} operator(s){}",
        entries.len(),
        ops.len(),
        if ops.is_empty() {
            String::new()
        } else {
            format!(": {}", ops.join(", "))
        }
    );
    println!("frozen     {}", if frozen { "yes" } else { "no" });
    println!("digest     {digest}");
    if side.is_dir() {
        println!(
            "rewind     {} (Rewind's run store and candidates)",
            side.display()
        );
        for (name, bytes) in &files {
            println!("           {name:<24} {bytes:>12} bytes");
        }
    } else {
        println!(
            "rewind     no side folder ({} does not exist)",
            side.display()
        );
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Runs the command.
pub fn run(args: BankArgs) -> Result<Status> {
    let path = bank_path(&args)?.clone();
    let json = args.json;
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
            let bank = hiargs::existing_bank(&path)?;
            let entries = bank.list(&EntryFilter {
                motif,
                family,
                origin,
                source_op: op,
            })?;
            if json {
                let mut doc = JsonDoc::new("bank list");
                by_operator(
                    &mut doc,
                    entries.iter().map(|e| (e, serde_json::json!({}))).collect(),
                );
                doc.field("bank", serde_json::json!({ "path": path.display().to_string(), "entries": entries.len() }));
                doc.print()?;
            } else {
                print!("{}", render_list(&entries));
            }
        }
        BankCommand::Show { id: None } => {
            let bank = hiargs::existing_bank(&path)?;
            show_bank(&path, &bank, json)?;
        }
        BankCommand::Show { id: Some(id) } => {
            let id = parse_id(&id)?;
            let bank = hiargs::existing_bank(&path)?;
            let stored = bank.show(id)?;
            if json {
                let mut doc = JsonDoc::new("bank show");
                by_operator(&mut doc, vec![(&stored, serde_json::json!({}))]);
                doc.field(
                    "bank",
                    serde_json::json!({ "path": path.display().to_string() }),
                );
                doc.print()?;
            } else {
                print!("{}", render_entry(&stored));
            }
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
            let bank = hiargs::existing_bank(&path)?;
            let query_text = text.clone();
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
            let hits = bank.search(&query, k)?;
            if json {
                let mut doc = JsonDoc::new("bank search");
                by_operator(
                    &mut doc,
                    hits.iter()
                        .enumerate()
                        .map(|(i, h)| {
                            (
                                &h.entry,
                                serde_json::json!({
                                    "rank": i + 1,
                                    "score": h.score,
                                    "explanation": h.explanation.to_string(),
                                }),
                            )
                        })
                        .collect(),
                );
                doc.field(
                    "bank",
                    serde_json::json!({ "path": path.display().to_string() }),
                );
                doc.field(
                    "query",
                    serde_json::json!({
                        "text": query_text,
                        "k": k,
                        "features": query.code_features,
                        "demote_avoided": demote_avoided,
                        "signature": query.signature.as_ref().map(|s| s.fields().iter().map(|(n, v)| (n.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>()),
                    }),
                );
                doc.print()?;
            } else {
                print!("{}", render_hits(&hits));
            }
        }
        BankCommand::Export { out } => {
            let bank = hiargs::existing_bank(&path)?;
            let n = export_to_file(&bank, &out)?;
            println!("exported {n} entries to {}", out.display());
        }
        BankCommand::Import { file } => {
            let bank = hiargs::bank_to_fill(&path)?;
            print!("{}", render_import(&import_from_file(&bank, &file)?));
        }
        BankCommand::FromDocs { dir, created_ms } => {
            let bank = hiargs::bank_to_fill(&path)?;
            let report = from_docs_into(&bank, &dir, created_ms.unwrap_or_else(now_ms))?;
            print!("{}", render_from_docs(&report));
        }
        BankCommand::Freeze => {
            let bank = hiargs::existing_bank(&path)?;
            bank.freeze()?;
            println!("bank {} frozen ({} entries)", path.display(), bank.len()?);
        }
    }
    Ok(Status::Ok)
}
