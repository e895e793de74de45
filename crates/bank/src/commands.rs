//! The library calls behind `ascendopt bank list|show|search|export|
//! import|from-docs`, and the text they print. The CLI parses arguments,
//! calls one function here, prints the `render_*` text; nothing else.
//!
//! Invariant: commands that only read a bank never create one
//! ([`open_existing`]); `import` and `from-docs` create the file if needed.

use crate::docs::{self, SkippedSection};
use crate::entry::Entry;
use crate::error::BankError;
use crate::retrieve::Hit;
use crate::store::{Bank, EntryId, ImportReport, Inserted, StoredEntry};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

/// Opens a bank that must exist already (`list`, `show`, `search`,
/// `export`).
pub fn open_existing(path: &Path) -> Result<Bank, BankError> {
    if !path.is_file() {
        return Err(BankError::NoSuchBank {
            path: path.to_path_buf(),
        });
    }
    Bank::open(path)
}

/// Writes the bank as JSONL to `out`; returns the number of entries.
pub fn export_to_file(bank: &Bank, out: &Path) -> Result<usize, BankError> {
    let file = File::create(out).map_err(|source| BankError::Io {
        what: format!("creating {}", out.display()),
        source,
    })?;
    let mut writer = BufWriter::new(file);
    bank.export_jsonl(&mut writer)
}

/// Imports the JSONL file `input` into the bank.
pub fn import_from_file(bank: &Bank, input: &Path) -> Result<ImportReport, BankError> {
    let file = File::open(input).map_err(|source| BankError::Io {
        what: format!("opening {}", input.display()),
        source,
    })?;
    bank.import_jsonl(&mut BufReader::new(file))
}

/// What [`from_docs_into`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromDocsReport {
    /// Ids of the new entries.
    pub inserted: Vec<EntryId>,
    /// Ids of entries that were in the bank already.
    pub duplicates: Vec<EntryId>,
    /// Practices that gave no entry.
    pub skipped: Vec<SkippedSection>,
}

/// Builds the documentation-derived entries of the guide under `dir`
/// ([`docs::from_docs`]) and stores them in `bank`.
pub fn from_docs_into(
    bank: &Bank,
    dir: &Path,
    created_ms: i64,
) -> Result<FromDocsReport, BankError> {
    let read = docs::from_docs(dir, created_ms)?;
    let mut report = FromDocsReport {
        inserted: Vec::new(),
        duplicates: Vec::new(),
        skipped: read.skipped,
    };
    for entry in &read.entries {
        match bank.insert(entry)? {
            Inserted::New(id) => report.inserted.push(id),
            Inserted::Duplicate(id) => report.duplicates.push(id),
        }
    }
    Ok(report)
}

fn level_text(entry: &Entry) -> String {
    entry
        .source
        .level
        .map_or_else(|| "-".to_string(), |l| format!("L{l}"))
}

fn speedup_text(entry: &Entry) -> String {
    entry
        .speedup()
        .map_or_else(|| "-".to_string(), |s| format!("{s:.2}x"))
}

/// One line per entry: id, motif, origin, source, speedup, title.
pub fn render_list(entries: &[StoredEntry]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>5}  {:<22} {:<7} {:<22} {:>8}  title",
        "id", "motif", "origin", "source", "speedup"
    );
    for stored in entries {
        let e = &stored.entry;
        let source = format!("{} ({})", e.source.op, level_text(e));
        let _ = writeln!(
            s,
            "{:>5}  {:<22} {:<7} {:<22} {:>8}  {}",
            stored.id.0,
            e.motif,
            // as_str: Display of Origin ignores the width.
            e.provenance.origin.as_str(),
            source,
            speedup_text(e),
            e.title
        );
    }
    let _ = writeln!(s, "{} entries", entries.len());
    s
}

fn bullet_list(s: &mut String, label: &str, items: &[String]) {
    if items.is_empty() {
        let _ = writeln!(s, "{label:<11}-");
    }
    for (i, item) in items.iter().enumerate() {
        let head = if i == 0 { label } else { "" };
        let _ = writeln!(s, "{head:<11}- {item}");
    }
}

/// Every field of one entry, the diff last.
pub fn render_entry(stored: &StoredEntry) -> String {
    let e = &stored.entry;
    let mut s = String::new();
    let _ = writeln!(s, "{} {}", stored.id, e.title);
    let _ = writeln!(s, "{:<11}{} ({})", "motif", e.motif, e.family);
    let _ = writeln!(
        s,
        "{:<11}{} ({}), origin {}, created_ms {}",
        "source",
        e.source.op,
        level_text(e),
        e.provenance.origin,
        e.provenance.created_ms
    );
    match (e.slow_us, e.fast_us) {
        (Some(slow), Some(fast)) => {
            let _ = writeln!(
                s,
                "{:<11}{slow:.3} us -> {fast:.3} us ({})",
                "latency",
                speedup_text(e)
            );
        }
        _ => {
            let _ = writeln!(s, "{:<11}not measured", "latency");
        }
    }
    let _ = writeln!(s, "{:<11}{}", "bottleneck", e.bottleneck);
    bullet_list(&mut s, "reuse when", &e.applicability.reuse_when);
    bullet_list(&mut s, "avoid when", &e.applicability.avoid_when);
    let _ = writeln!(s, "{:<11}{}", "effect", e.expected_effect);
    let _ = writeln!(s, "{:<11}{}", "keywords", e.keywords.join(", "));
    for (i, (name, moved)) in e.profile_moved.iter().enumerate() {
        let head = if i == 0 { "profile" } else { "" };
        let _ = writeln!(s, "{head:<11}{name}: {} -> {}", moved.before, moved.after);
    }
    if let Some(sig) = &e.signature {
        let fields: Vec<String> = sig
            .fields()
            .iter()
            .map(|(name, v)| format!("{name} {v}"))
            .collect();
        let _ = writeln!(s, "{:<11}{}", "signature", fields.join(", "));
    }
    let _ = writeln!(s, "{:<11}{}", "evidence", e.provenance.evidence.join(", "));
    let _ = writeln!(s, "{:<11}{}", "hash", stored.hash);
    let _ = writeln!(s, "diff (slow -> fast):");
    s.push_str(&e.diff);
    if !e.diff.is_empty() && !e.diff.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Ranked hits with their scores and explanations.
pub fn render_hits(hits: &[Hit]) -> String {
    let mut s = String::new();
    if hits.is_empty() {
        let _ = writeln!(s, "no entry matches");
    }
    for (rank, hit) in hits.iter().enumerate() {
        let e = &hit.entry.entry;
        let _ = writeln!(
            s,
            "{}. {} [{}] {}  score {:.3}",
            rank + 1,
            hit.entry.id,
            e.motif,
            e.title,
            hit.score
        );
        let _ = writeln!(s, "   {}", hit.explanation);
    }
    s
}

/// Summary of an import.
pub fn render_import(report: &ImportReport) -> String {
    let mut s = format!(
        "imported {} entries, skipped {} duplicates\n",
        report.inserted.len(),
        report.duplicates.len()
    );
    for (line, id) in &report.duplicates {
        let _ = writeln!(s, "  line {line}: same content as {id}");
    }
    s
}

/// Summary of a documentation import.
pub fn render_from_docs(report: &FromDocsReport) -> String {
    let mut s = format!(
        "{} entries from the guide ({} new, {} already in the bank), {} practices skipped\n",
        report.inserted.len() + report.duplicates.len(),
        report.inserted.len(),
        report.duplicates.len(),
        report.skipped.len()
    );
    for skipped in &report.skipped {
        let _ = writeln!(
            s,
            "  skipped {} {}: {}",
            skipped.number, skipped.title, skipped.reason
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::tests::sample;
    use crate::entry::Moved;
    use crate::retrieve::{Query, DEFAULT_K};

    fn guide_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/guide")
    }

    #[test]
    fn read_commands_do_not_create_a_bank() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.sqlite");
        assert!(matches!(
            open_existing(&path),
            Err(BankError::NoSuchBank { .. })
        ));
        assert!(!path.exists());
    }

    #[test]
    fn list_and_show_render_every_field() {
        let bank = Bank::open_in_memory().unwrap();
        let mut e = sample("double_buffer");
        e.profile_moved.insert(
            "aiv_vec_ratio".into(),
            Moved {
                before: 0.25,
                after: 0.5,
            },
        );
        bank.insert(&e).unwrap();
        let stored = bank.show(EntryId(1)).unwrap();
        let list = render_list(std::slice::from_ref(&stored));
        let lines: Vec<&str> = list.lines().collect();
        assert_eq!(lines.len(), 3, "{list}");
        assert!(lines[1].contains("double_buffer"), "{list}");
        assert!(lines[1].contains("add_custom (L1)"), "{list}");
        assert!(lines[1].contains("2.00x"), "{list}");
        assert_eq!(lines[2], "1 entries");

        let text = render_entry(&stored);
        for wanted in [
            "#1 double_buffer title",
            "motif      double_buffer (kernel.pipeline.double_buffer)",
            "latency    20.500 us -> 10.250 us (2.00x)",
            "reuse when - double_buffer helps",
            "avoid when -",
            "profile    aiv_vec_ratio: 0.25 -> 0.5",
            "evidence   eval:1",
            "diff (slow -> fast):\n--- a/k.cpp\n+++ b/k.cpp\n@@ -1 +1 @@\n-a\n+b\n",
        ] {
            assert!(text.contains(wanted), "missing {wanted:?} in\n{text}");
        }
        assert!(text.contains(&format!("hash       {}", stored.hash)));
    }

    #[test]
    fn export_import_files_and_from_docs_end_to_end() {
        let dir = tempfile::tempdir().unwrap();
        let bank_path = dir.path().join("docs.sqlite");
        let bank = Bank::open(&bank_path).unwrap();
        let report = from_docs_into(&bank, &guide_dir(), 7).unwrap();
        assert_eq!(report.inserted.len(), 3);
        assert!(report.duplicates.is_empty());
        let text = render_from_docs(&report);
        assert!(
            text.starts_with(
                "3 entries from the guide (3 new, 0 already in the bank), 1 practices skipped\n"
            ),
            "{text}"
        );
        assert!(text.contains("skipped 9.1.3 地址对齐"), "{text}");
        // Running it again adds nothing.
        let again = from_docs_into(&bank, &guide_dir(), 8).unwrap();
        assert_eq!(again.duplicates, report.inserted);

        // The docs bank answers the double-buffering query with its
        // double-buffering practice, under the same retriever.
        let hits = bank
            .search(
                &Query::text("Vector单元在等待搬运, 双缓冲 InitBuffer"),
                DEFAULT_K,
            )
            .unwrap();
        assert_eq!(
            hits[0].entry.entry.motif,
            "double_buffer",
            "{}",
            render_hits(&hits)
        );
        assert!(render_hits(&hits).starts_with("1. #1 [double_buffer] 开启双缓冲  score 1."));

        let jsonl = dir.path().join("bank.jsonl");
        assert_eq!(export_to_file(&bank, &jsonl).unwrap(), 3);
        let copy = Bank::open(&dir.path().join("copy.sqlite")).unwrap();
        let imported = import_from_file(&copy, &jsonl).unwrap();
        assert_eq!(imported.inserted.len(), 3);
        assert_eq!(
            render_import(&imported),
            "imported 3 entries, skipped 0 duplicates\n"
        );
        assert_eq!(
            copy.content_digest().unwrap(),
            bank.content_digest().unwrap()
        );
        let dup = import_from_file(&copy, &jsonl).unwrap();
        assert!(render_import(&dup).contains("line 1: same content as #1"));

        drop(bank);
        let reopened = open_existing(&bank_path).unwrap();
        assert_eq!(reopened.len().unwrap(), 3);
    }
}
