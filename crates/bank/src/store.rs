//! The bank file: entries in SQLite (bundled, with FTS5, rollback
//! journal), a full-text index beside them, the frozen flag and the
//! embedding cache.
//!
//! Invariants:
//! - Entries are immutable: the API has no update or delete, and triggers
//!   make SQLite refuse `UPDATE`/`DELETE` on `entries` too.
//! - A frozen bank (see [`Bank::freeze`]) takes no entries, through the
//!   API ([`BankError::Frozen`]) or SQL (a trigger). The embedding cache is
//!   not an entry and stays writable.
//! - Two entries never share a [`ContentHash`]; inserting a duplicate
//!   returns the stored id and writes nothing.
//! - Ids grow in insertion order; listing, export and search ties follow
//!   ids, so the same inserts give the same bank, byte for byte.
//!
//! Schema versions follow `PRAGMA user_version` as the run store does
//! (STYLE.md §4, §13): a fresh file is created at [`END_VERSION`], an
//! older one is upgraded step by step in one immediate transaction, a
//! newer one is refused ([`BankError::IncompatibleVersion`]) and left
//! untouched. Version history: 1 is the first.

use crate::entry::{ContentHash, Entry, Origin};
use crate::error::BankError;
use crate::text;
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema version this code writes.
pub const END_VERSION: i64 = 1;

/// Schema of a fresh bank, at [`END_VERSION`].
const SCHEMA: &str = "
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    motif TEXT NOT NULL,
    family TEXT NOT NULL,
    source_op TEXT NOT NULL,
    origin TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX entries_by_motif ON entries(motif);
CREATE VIRTUAL TABLE entries_fts USING fts5(
    title, bottleneck, applicability, keywords,
    tokenize = 'porter unicode61'
);
CREATE TABLE embeddings (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
);
CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
BEGIN SELECT RAISE(ABORT, 'bank entries are immutable'); END;
CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
BEGIN SELECT RAISE(ABORT, 'bank entries are immutable'); END;
CREATE TRIGGER entries_frozen BEFORE INSERT ON entries
WHEN (SELECT value FROM meta WHERE key = 'frozen') = '1'
BEGIN SELECT RAISE(ABORT, 'the bank is frozen'); END;
";

/// Creates the latest schema in an empty database.
fn init(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA)
}

/// Upgrades the schema from `version` to `version + 1`. No upgrade exists
/// yet; `open` never calls this outside `1..END_VERSION`.
fn upgrade_from(_tx: &Transaction<'_>, _version: i64) -> rusqlite::Result<()> {
    Ok(())
}

/// An entry's id in its bank (insertion order, from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryId(pub i64);

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// An entry as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEntry {
    /// Its id.
    pub id: EntryId,
    /// Its content hash.
    pub hash: ContentHash,
    /// The entry.
    pub entry: Entry,
}

/// What [`Bank::insert`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// Stored under this new id.
    New(EntryId),
    /// An entry with the same content hash is stored under this id;
    /// nothing was written.
    Duplicate(EntryId),
}

impl Inserted {
    /// The id of the entry, new or old.
    pub fn id(self) -> EntryId {
        match self {
            Inserted::New(id) | Inserted::Duplicate(id) => id,
        }
    }
}

/// Which entries [`Bank::list`] returns; `None` fields do not filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryFilter {
    /// Only this motif tag.
    pub motif: Option<String>,
    /// Only this canonical family, or families under it (`kernel.memory`
    /// takes `kernel.memory.copy_size`).
    pub family: Option<String>,
    /// Only this origin.
    pub origin: Option<Origin>,
    /// Only entries learnt from this operator.
    pub source_op: Option<String>,
}

impl EntryFilter {
    /// A filter that takes every entry.
    pub fn all() -> EntryFilter {
        EntryFilter {
            motif: None,
            family: None,
            origin: None,
            source_op: None,
        }
    }
}

/// What [`Bank::import_jsonl`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    /// Ids of the entries stored, in file order.
    pub inserted: Vec<EntryId>,
    /// (1-based line, id of the entry already stored) of every line skipped
    /// as a duplicate (of the bank or of an earlier line).
    pub duplicates: Vec<(usize, EntryId)>,
}

/// The experience bank.
#[derive(Debug)]
pub struct Bank {
    conn: Connection,
    path: PathBuf,
}

/// Columns read by [`Bank::row_to_stored`].
const ENTRY_COLUMNS: &str = "id, hash, body";

impl Bank {
    /// Opens (creating if needed) the bank at `path` and brings its schema
    /// to [`END_VERSION`].
    pub fn open(path: &Path) -> Result<Bank, BankError> {
        let sql = |source| BankError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(sql)?;
        Bank::setup(conn, path.to_path_buf())
    }

    /// A bank that lives in memory only (tests, one-off comparisons).
    pub fn open_in_memory() -> Result<Bank, BankError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| BankError::Sqlite {
            path: path.clone(),
            source,
        })?;
        Bank::setup(conn, path)
    }

    fn setup(conn: Connection, path: PathBuf) -> Result<Bank, BankError> {
        let sql = |source| BankError::Sqlite {
            path: path.clone(),
            source,
        };
        conn.busy_timeout(Duration::from_secs(30)).map_err(sql)?;
        let bank = Bank { conn, path };
        // Refuse a newer file before writing anything to it.
        ascendopt_sqlite::refuse_newer(&bank.conn, END_VERSION)
            .map_err(|e| bank.migrate_error(e))?;
        // Rollback journal (not WAL): the bank stays one self-contained
        // file that can be copied or shipped; it has one writer (Rewind).
        bank.conn
            .execute_batch("PRAGMA synchronous = FULL;")
            .map_err(|e| bank.sql(e))?;
        bank.migrate()?;
        Ok(bank)
    }

    /// The file this bank lives in (`:memory:` for in-memory banks).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn sql(&self, source: rusqlite::Error) -> BankError {
        BankError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    fn immediate(&self) -> Result<Transaction<'_>, BankError> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| self.sql(e))
    }

    fn migrate(&self) -> Result<(), BankError> {
        ascendopt_sqlite::migrate(&self.conn, END_VERSION, init, upgrade_from)
            .map_err(|e| self.migrate_error(e))
    }

    fn migrate_error(&self, e: ascendopt_sqlite::MigrateError) -> BankError {
        match e {
            ascendopt_sqlite::MigrateError::Newer { found, supported } => {
                BankError::IncompatibleVersion {
                    path: self.path.clone(),
                    found,
                    supported,
                }
            }
            ascendopt_sqlite::MigrateError::Foreign => BankError::Foreign {
                path: self.path.clone(),
            },
            ascendopt_sqlite::MigrateError::Sql(source) => self.sql(source),
        }
    }

    /// Whether [`Bank::freeze`] was called on this bank (ever, by anyone).
    pub fn is_frozen(&self) -> Result<bool, BankError> {
        let value: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'frozen'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql(e))?;
        Ok(value.as_deref() == Some("1"))
    }

    /// Marks the bank read-only for entries, for good (the bank is frozen
    /// after Rewind). Idempotent.
    pub fn freeze(&self) -> Result<(), BankError> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES ('frozen', '1')
                 ON CONFLICT (key) DO UPDATE SET value = '1'",
                [],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    fn ensure_writable(&self) -> Result<(), BankError> {
        if self.is_frozen()? {
            return Err(BankError::Frozen {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    fn id_of_hash(
        &self,
        conn: &Connection,
        hash: &ContentHash,
    ) -> Result<Option<EntryId>, BankError> {
        conn.query_row(
            "SELECT id FROM entries WHERE hash = ?1",
            params![hash.as_str()],
            |r| r.get(0).map(EntryId),
        )
        .optional()
        .map_err(|e| self.sql(e))
    }

    /// Inserts a validated entry inside `tx`.
    fn insert_in(&self, tx: &Transaction<'_>, entry: &Entry) -> Result<Inserted, BankError> {
        let hash = entry.content_hash();
        if let Some(id) = self.id_of_hash(tx, &hash)? {
            return Ok(Inserted::Duplicate(id));
        }
        let body = serde_json::to_string(entry).map_err(|e| BankError::InvalidEntry {
            title: entry.title.clone(),
            field: "body",
            reason: e.to_string(),
        })?;
        tx.execute(
            "INSERT INTO entries (hash, title, motif, family, source_op, origin, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                hash.as_str(),
                entry.title,
                entry.motif,
                entry.family,
                entry.source.op,
                entry.provenance.origin.as_str(),
                body
            ],
        )
        .map_err(|e| self.sql(e))?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO entries_fts (rowid, title, bottleneck, applicability, keywords)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                id,
                text::index_text(&entry.title),
                text::index_text(&entry.bottleneck),
                text::index_text(&entry.applicability.reuse_when.join("\n")),
                text::index_text(&entry.keywords.join(" ")),
            ],
        )
        .map_err(|e| self.sql(e))?;
        Ok(Inserted::New(EntryId(id)))
    }

    /// Stores `entry` after [`Entry::validate`]; a duplicate (same
    /// [`Entry::content_hash`]) is not stored again.
    pub fn insert(&self, entry: &Entry) -> Result<Inserted, BankError> {
        entry.validate()?;
        let tx = self.immediate()?;
        if is_frozen_in(&tx).map_err(|e| self.sql(e))? {
            return Err(BankError::Frozen {
                path: self.path.clone(),
            });
        }
        let inserted = self.insert_in(&tx, entry)?;
        tx.commit().map_err(|e| self.sql(e))?;
        Ok(inserted)
    }

    fn row_to_stored(&self, id: i64, hash: String, body: String) -> Result<StoredEntry, BankError> {
        let entry: Entry = serde_json::from_str(&body).map_err(|e| BankError::Corrupt {
            path: self.path.clone(),
            id,
            reason: e.to_string(),
        })?;
        Ok(StoredEntry {
            id: EntryId(id),
            hash: ContentHash::from_stored(hash),
            entry,
        })
    }

    /// The entry with this id.
    pub fn get(&self, id: EntryId) -> Result<Option<StoredEntry>, BankError> {
        let row: Option<(i64, String, String)> = self
            .conn
            .query_row(
                &format!("SELECT {ENTRY_COLUMNS} FROM entries WHERE id = ?1"),
                params![id.0],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        row.map(|(id, hash, body)| self.row_to_stored(id, hash, body))
            .transpose()
    }

    /// The entry with this id, or [`BankError::UnknownEntry`].
    pub fn show(&self, id: EntryId) -> Result<StoredEntry, BankError> {
        self.get(id)?.ok_or_else(|| BankError::UnknownEntry {
            path: self.path.clone(),
            id: id.0,
        })
    }

    /// The entries that pass `filter`, by id.
    pub fn list(&self, filter: &EntryFilter) -> Result<Vec<StoredEntry>, BankError> {
        let family_prefix = filter.family.as_ref().map(|f| format!("{f}."));
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {ENTRY_COLUMNS} FROM entries
                 WHERE (?1 IS NULL OR motif = ?1)
                   AND (?2 IS NULL OR family = ?2 OR substr(family, 1, length(?3)) = ?3)
                   AND (?4 IS NULL OR origin = ?4)
                   AND (?5 IS NULL OR source_op = ?5)
                 ORDER BY id"
            ))
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(
                params![
                    filter.motif,
                    filter.family,
                    family_prefix,
                    filter.origin.map(Origin::as_str),
                    filter.source_op
                ],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                },
            )
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql(e))?;
        rows.into_iter()
            .map(|(id, hash, body)| self.row_to_stored(id, hash, body))
            .collect()
    }

    /// Number of entries.
    pub fn len(&self) -> Result<usize, BankError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
            .map_err(|e| self.sql(e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Whether the bank has no entry.
    pub fn is_empty(&self) -> Result<bool, BankError> {
        Ok(self.len()? == 0)
    }

    /// SHA-256 (hex) of the content hashes of all entries in id order:
    /// two banks with the same digest hold the same entries in the same
    /// order (provenance times and evidence aside).
    pub fn content_digest(&self) -> Result<String, BankError> {
        let mut stmt = self
            .conn
            .prepare("SELECT hash FROM entries ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let hashes = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql(e))?;
        let digest = Sha256::digest(hashes.join("\n").as_bytes());
        Ok(format!("{digest:x}"))
    }

    /// Writes every entry as one JSON line, by id; returns the count.
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<usize, BankError> {
        let entries = self.list(&EntryFilter::all())?;
        let io = |source| BankError::Io {
            what: "writing the JSONL export".into(),
            source,
        };
        for stored in &entries {
            let line = serde_json::to_string(&stored.entry).map_err(|e| BankError::Corrupt {
                path: self.path.clone(),
                id: stored.id.0,
                reason: e.to_string(),
            })?;
            out.write_all(line.as_bytes()).map_err(io)?;
            out.write_all(b"\n").map_err(io)?;
        }
        out.flush().map_err(io)?;
        Ok(entries.len())
    }

    /// Reads entries, one JSON object a line (blank lines skipped), and
    /// stores them in one transaction: a line that does not parse or
    /// validate fails the whole import ([`BankError::BadJsonl`]) and
    /// nothing is stored. Duplicates are skipped and reported.
    pub fn import_jsonl(&self, input: &mut dyn BufRead) -> Result<ImportReport, BankError> {
        self.ensure_writable()?;
        let mut parsed = Vec::new();
        let mut line_no = 0;
        let mut line = String::new();
        loop {
            line.clear();
            let n = input.read_line(&mut line).map_err(|source| BankError::Io {
                what: format!("reading JSONL line {}", line_no + 1),
                source,
            })?;
            if n == 0 {
                break;
            }
            line_no += 1;
            if line.trim().is_empty() {
                continue;
            }
            let entry: Entry =
                serde_json::from_str(line.trim_end_matches(['\n', '\r'])).map_err(|e| {
                    BankError::BadJsonl {
                        line: line_no,
                        reason: e.to_string(),
                    }
                })?;
            entry.validate().map_err(|e| BankError::BadJsonl {
                line: line_no,
                reason: e.to_string(),
            })?;
            parsed.push((line_no, entry));
        }
        let tx = self.immediate()?;
        let mut report = ImportReport {
            inserted: Vec::new(),
            duplicates: Vec::new(),
        };
        for (line_no, entry) in &parsed {
            match self.insert_in(&tx, entry)? {
                Inserted::New(id) => report.inserted.push(id),
                Inserted::Duplicate(id) => report.duplicates.push((*line_no, id)),
            }
        }
        tx.commit().map_err(|e| self.sql(e))?;
        Ok(report)
    }
}

fn is_frozen_in(conn: &Connection) -> rusqlite::Result<bool> {
    let value: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'frozen'", [], |r| {
            r.get(0)
        })
        .optional()?;
    Ok(value.as_deref() == Some("1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::tests::sample;
    use crate::entry::{Moved, Origin};
    use crate::signature::ProfileSignature;

    fn temp_bank() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bank.sqlite");
        (dir, path)
    }

    /// Tables, indexes and triggers of a database, as SQL text.
    fn schema_of(path: &Path) -> Vec<(String, String)> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn
            .prepare("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn fresh_bank_has_the_schema_and_version_and_fts5_works() {
        let (_dir, path) = temp_bank();
        Bank::open(&path).unwrap();
        let conn = Connection::open(&path).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, END_VERSION);
        let names: Vec<String> = schema_of(&path).into_iter().map(|(n, _)| n).collect();
        for wanted in [
            "entries",
            "entries_fts",
            "meta",
            "embeddings",
            "entries_no_update",
            "entries_no_delete",
            "entries_frozen",
        ] {
            assert!(
                names.iter().any(|n| n == wanted),
                "{wanted} missing: {names:?}"
            );
        }
        // The bundled SQLite has FTS5 with bm25.
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(x); INSERT INTO t VALUES ('double buffer');",
        )
        .unwrap();
        let score: f64 = conn
            .query_row("SELECT bm25(t) FROM t WHERE t MATCH 'buffer'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(score < 0.0, "{score}");
        // Reopening keeps everything.
        drop(conn);
        let before = schema_of(&path);
        Bank::open(&path).unwrap();
        assert_eq!(schema_of(&path), before);
    }

    #[test]
    fn newer_file_is_refused_and_left_unchanged() {
        let (_dir, path) = temp_bank();
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 7;")
                .unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        match Bank::open(&path) {
            Err(BankError::IncompatibleVersion {
                found, supported, ..
            }) => assert_eq!((found, supported), (7, END_VERSION)),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }

    #[test]
    fn foreign_database_is_refused() {
        let (_dir, path) = temp_bank();
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE x (y);")
            .unwrap();
        assert!(matches!(Bank::open(&path), Err(BankError::Foreign { .. })));
    }

    #[test]
    fn insert_get_list_and_duplicates() {
        let (_dir, path) = temp_bank();
        let bank = Bank::open(&path).unwrap();
        assert!(bank.is_empty().unwrap());
        let a = sample("double_buffer");
        let mut b = sample("tile_size");
        b.source.op = "muls".into();
        b.provenance.origin = Origin::Manual;
        let id_a = bank.insert(&a).unwrap();
        let id_b = bank.insert(&b).unwrap();
        assert_eq!(id_a, Inserted::New(EntryId(1)));
        assert_eq!(id_b, Inserted::New(EntryId(2)));
        // Same content, other provenance: a duplicate.
        let mut again = a.clone();
        again.provenance.created_ms = 12345;
        again.provenance.evidence = vec!["eval:99".into()];
        assert_eq!(
            bank.insert(&again).unwrap(),
            Inserted::Duplicate(EntryId(1))
        );
        assert_eq!(bank.len().unwrap(), 2);

        let got = bank.get(EntryId(1)).unwrap().unwrap();
        assert_eq!(got.entry, a);
        assert_eq!(got.hash, a.content_hash());
        assert_eq!(bank.get(EntryId(3)).unwrap(), None);
        assert!(matches!(
            bank.show(EntryId(3)),
            Err(BankError::UnknownEntry { id: 3, .. })
        ));

        let ids = |f: &EntryFilter| -> Vec<i64> {
            bank.list(f).unwrap().iter().map(|s| s.id.0).collect()
        };
        assert_eq!(ids(&EntryFilter::all()), [1, 2]);
        let mut f = EntryFilter::all();
        f.motif = Some("tile_size".into());
        assert_eq!(ids(&f), [2]);
        let mut f = EntryFilter::all();
        f.family = Some("kernel.memory".into());
        assert_eq!(ids(&f), [2]);
        f.family = Some("kernel.mem".into()); // not a family boundary
        assert_eq!(ids(&f), Vec::<i64>::new());
        let mut f = EntryFilter::all();
        f.origin = Some(Origin::Rewind);
        assert_eq!(ids(&f), [1]);
        let mut f = EntryFilter::all();
        f.source_op = Some("muls".into());
        assert_eq!(ids(&f), [2]);

        // Reopened, the entries are the same.
        drop(bank);
        let bank = Bank::open(&path).unwrap();
        assert_eq!(bank.get(EntryId(2)).unwrap().unwrap().entry, b);
    }

    #[test]
    fn invalid_entries_are_not_stored() {
        let bank = Bank::open_in_memory().unwrap();
        let mut e = sample("double_buffer");
        e.fast_us = Some(30.0); // slower after the "optimisation"
        assert!(matches!(
            bank.insert(&e),
            Err(BankError::InvalidEntry {
                field: "slow_us",
                ..
            })
        ));
        assert_eq!(bank.len().unwrap(), 0);
    }

    #[test]
    fn entries_cannot_be_changed_even_through_sql() {
        let bank = Bank::open_in_memory().unwrap();
        bank.insert(&sample("double_buffer")).unwrap();
        assert!(bank
            .conn()
            .execute("UPDATE entries SET title = 'x'", [])
            .is_err());
        assert!(bank.conn().execute("DELETE FROM entries", []).is_err());
        assert_eq!(bank.len().unwrap(), 1);
    }

    #[test]
    fn freeze_makes_insert_and_import_fail() {
        let (_dir, path) = temp_bank();
        let bank = Bank::open(&path).unwrap();
        bank.insert(&sample("double_buffer")).unwrap();
        assert!(!bank.is_frozen().unwrap());
        bank.freeze().unwrap();
        bank.freeze().unwrap();
        drop(bank);
        let bank = Bank::open(&path).unwrap();
        assert!(bank.is_frozen().unwrap());
        assert!(matches!(
            bank.insert(&sample("tile_size")),
            Err(BankError::Frozen { .. })
        ));
        let line = serde_json::to_string(&sample("count_mode")).unwrap();
        assert!(matches!(
            bank.import_jsonl(&mut line.as_bytes()),
            Err(BankError::Frozen { .. })
        ));
        // The trigger refuses a raw insert as well.
        assert!(bank
            .conn()
            .execute(
                "INSERT INTO entries (hash, title, motif, family, source_op, origin, body)
                 VALUES ('h', 't', 'm', 'f', 'o', 'rewind', '{}')",
                []
            )
            .is_err());
        assert_eq!(bank.len().unwrap(), 1);
        // Reading still works.
        assert_eq!(bank.list(&EntryFilter::all()).unwrap().len(), 1);
    }

    /// An entry with awkward floats, a signature, moved fields and CJK
    /// text, to stress the round trip.
    fn rich_entry() -> Entry {
        let mut e = sample("double_buffer");
        e.title = "使能DoubleBuffer \"quoted\"\ttab".into();
        e.slow_us = Some(0.1 + 0.2);
        e.fast_us = Some(1.0 / 3.0 * 0.5);
        e.profile_moved.insert(
            "aiv_mte2_ratio".into(),
            Moved {
                before: 0.123_456_789_012_345_68,
                after: 5e-324,
            },
        );
        e.profile_moved.insert(
            "Task Duration(us)".into(),
            Moved {
                before: 1.7976931348623157e308,
                after: 2.2250738585072014e-308,
            },
        );
        let mut sig = ProfileSignature::empty();
        sig.vec_ratio = Some(0.1 + 0.7);
        sig.avg_copy_bytes = Some(16384.0);
        e.signature = Some(sig);
        e
    }

    #[test]
    fn jsonl_round_trip_is_exact_and_dedupes() {
        let src = Bank::open_in_memory().unwrap();
        let rich = rich_entry();
        src.insert(&rich).unwrap();
        src.insert(&sample("tile_size")).unwrap();
        let mut docs = sample("count_mode");
        docs.provenance.origin = Origin::Docs;
        docs.slow_us = None;
        docs.fast_us = None;
        src.insert(&docs).unwrap();
        let mut first = Vec::new();
        assert_eq!(src.export_jsonl(&mut first).unwrap(), 3);
        assert_eq!(first.iter().filter(|b| **b == b'\n').count(), 3);

        let dst = Bank::open_in_memory().unwrap();
        let report = dst.import_jsonl(&mut first.as_slice()).unwrap();
        assert_eq!(report.inserted, [EntryId(1), EntryId(2), EntryId(3)]);
        assert!(report.duplicates.is_empty());
        assert_eq!(dst.get(EntryId(1)).unwrap().unwrap().entry, rich);
        let mut second = Vec::new();
        dst.export_jsonl(&mut second).unwrap();
        assert_eq!(
            first, second,
            "export -> import -> export is byte-identical"
        );
        assert_eq!(src.content_digest().unwrap(), dst.content_digest().unwrap());

        // Importing again: all duplicates, nothing stored. A blank line is
        // skipped but counted in the line numbers.
        let mut with_blank = b"\n".to_vec();
        with_blank.extend_from_slice(&first);
        let report = dst.import_jsonl(&mut with_blank.as_slice()).unwrap();
        assert!(report.inserted.is_empty());
        assert_eq!(
            report.duplicates,
            [(2, EntryId(1)), (3, EntryId(2)), (4, EntryId(3))]
        );
        assert_eq!(dst.len().unwrap(), 3);
    }

    #[test]
    fn a_bad_line_fails_the_whole_import() {
        let bank = Bank::open_in_memory().unwrap();
        let good = serde_json::to_string(&sample("tile_size")).unwrap();
        let mut invalid = sample("double_buffer");
        invalid.slow_us = Some(1.0); // not slower than fast_us
        let invalid = serde_json::to_string(&invalid).unwrap();
        let text = format!("{good}\n{{\"title\": 1}}\n");
        match bank.import_jsonl(&mut text.as_bytes()) {
            Err(BankError::BadJsonl { line: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
        let text = format!("{good}\n{invalid}\n");
        match bank.import_jsonl(&mut text.as_bytes()) {
            Err(BankError::BadJsonl { line: 2, reason }) => {
                assert!(reason.contains("slow_us"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        // Unknown fields are refused rather than silently dropped.
        let extra = good.replacen('{', "{\"surprise\":1,", 1);
        assert!(matches!(
            bank.import_jsonl(&mut extra.as_bytes()),
            Err(BankError::BadJsonl { line: 1, .. })
        ));
        assert_eq!(bank.len().unwrap(), 0);
    }

    #[test]
    fn same_inserts_give_the_same_digest() {
        let make = |order: &[&str]| {
            let bank = Bank::open_in_memory().unwrap();
            for m in order {
                bank.insert(&sample(m)).unwrap();
            }
            bank.content_digest().unwrap()
        };
        assert_eq!(make(&["a", "b"]), make(&["a", "b"]));
        assert_ne!(make(&["a", "b"]), make(&["b", "a"]));
    }
}
