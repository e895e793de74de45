//! The run store: every run, operator budget, evaluation and candidate
//! source, in one SQLite file (bundled SQLite, WAL journal,
//! `synchronous=FULL`).
//!
//! Crash safety rests on two rules:
//! - [`RunStore::record_evaluation`] inserts the evaluation row *and*
//!   increments the operator's spent budget in one immediate transaction,
//!   so a process killed at any moment leaves either both or neither.
//! - An evaluation is identified by (run, operator, stage, budget index),
//!   which is UNIQUE: recording the same key again (a resumed run that
//!   replays its last step) is a no-op that returns the stored row, so no
//!   evaluation is ever counted twice.
//!
//! Schema versions follow `PRAGMA user_version` (STYLE.md §4, §13): a fresh
//! file is created straight at [`END_VERSION`]; an older one is upgraded
//! step by step by [`upgrade_from`]; everything happens in one immediate
//! transaction; a file newer than this program is refused with
//! [`StoreError::IncompatibleVersion`] and left untouched.
//!
//! Version history: 1 was the first cut (no stage timings, no source
//! index); 2 adds `compile_ms`, `correctness_ms`, `profile_ms` to
//! `evaluations` and the `evaluations_by_source` index that
//! [`RunStore::find_by_source`] uses; 3 adds the `llm_calls` table (every
//! LLM request and response of a run, for audit and replay); 4 adds the
//! `launch` column of `evaluations` (the candidate's launch key, see
//! `pipeline::launch_key`) and the `evaluations_by_launch` index that
//! [`RunStore::find_by_launch`] uses.

use crate::verdict::Verdict;
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The schema version this code writes.
pub const END_VERSION: i64 = 4;

/// Errors of the run store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite failed.
    #[error("run store {path}: {source}")]
    Sqlite {
        /// The store file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file was written by a newer ascendopt.
    #[error("run store {path} has schema version {found}, newer than the {supported} this program knows; it was left unchanged")]
    IncompatibleVersion {
        /// The store file.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
        /// [`END_VERSION`].
        supported: i64,
    },
    /// The file is an SQLite database of something else.
    #[error("{path} is not an ascendopt run store: it has tables but no schema version")]
    Foreign {
        /// The file.
        path: PathBuf,
    },
    /// No such run.
    #[error("run {run} is not in the store")]
    UnknownRun {
        /// The run asked for.
        run: RunId,
    },
    /// The operator (or this stage of it) was never registered in the run.
    #[error("operator {op} has no {stage} budget in run {run}; register it first")]
    UnknownOperator {
        /// The run.
        run: RunId,
        /// The operator.
        op: String,
        /// The stage.
        stage: Stage,
    },
    /// The operator was registered before with other budgets.
    #[error("operator {op} of run {run} is registered with budgets {stored:?}, not {requested:?}")]
    BudgetMismatch {
        /// The run.
        run: RunId,
        /// The operator.
        op: String,
        /// Budgets in the store, by stage.
        stored: Vec<(Stage, u32)>,
        /// Budgets asked for.
        requested: Vec<(Stage, u32)>,
    },
    /// The budget index lies outside the stage's budget.
    #[error("evaluation #{index} of {op} ({stage}) is outside its budget of {budget}")]
    OverBudget {
        /// The operator.
        op: String,
        /// The stage.
        stage: Stage,
        /// The index given.
        index: u32,
        /// The stage's budget.
        budget: u32,
    },
    /// The key is stored already, with another source.
    #[error("evaluation #{index} of {op} ({stage}) in run {run} is stored with source {stored}, not {given}")]
    KeyConflict {
        /// The run.
        run: RunId,
        /// The operator.
        op: String,
        /// The stage.
        stage: Stage,
        /// The budget index.
        index: u32,
        /// Source hash in the store.
        stored: SourceHash,
        /// Source hash given.
        given: SourceHash,
    },
    /// The evaluation names a source that was never put.
    #[error("source {hash} is not in the store; put_source it first")]
    MissingSource {
        /// The hash.
        hash: SourceHash,
    },
    /// A stored value does not parse.
    #[error("run store {path}: corrupt {what}")]
    Corrupt {
        /// The store file.
        path: PathBuf,
        /// What could not be read.
        what: String,
    },
}

/// A run's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A budget pool of an operator (DESIGN.md: 20 for Rewind, 210 online).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Offline experience building.
    Rewind,
    /// Stage I (kernel refinement) and Stage II (tiling search) together.
    Online,
}

impl Stage {
    /// Every stage, in budget order.
    pub const ALL: [Stage; 2] = [Stage::Rewind, Stage::Online];

    /// Stable name, stored in the `stage` columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Rewind => "rewind",
            Stage::Online => "online",
        }
    }

    /// Parses [`Stage::as_str`].
    pub fn parse(text: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// SHA-256 of a candidate's source, lower-case hex.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceHash(String);

impl SourceHash {
    /// The hash of `content`.
    pub fn of(content: &str) -> SourceHash {
        SourceHash(format!("{:x}", Sha256::digest(content.as_bytes())))
    }

    /// Accepts 64 lower-case hex digits.
    pub fn from_hex(text: &str) -> Option<SourceHash> {
        let ok = text.len() == 64
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| SourceHash(text.to_string()))
    }

    /// The hex text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SourceHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A run's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Created or resumed, not finished.
    Running,
    /// Completed.
    Finished,
    /// Stopped on an error.
    Failed,
}

impl RunStatus {
    /// Stable name, stored in `runs.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Failed => "failed",
        }
    }

    fn parse(text: &str) -> Option<RunStatus> {
        [RunStatus::Running, RunStatus::Finished, RunStatus::Failed]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// A run row.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// Id.
    pub id: RunId,
    /// Creation time, Unix milliseconds.
    pub created_ms: i64,
    /// The run's configuration, as given to [`RunStore::create_run`].
    pub config: serde_json::Value,
    /// Status.
    pub status: RunStatus,
}

/// An operator row with its budgets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorInfo {
    /// Operator name.
    pub op: String,
    /// Level (`L1`, `L2`, `L3`).
    pub level: String,
    /// Budget of all stages together.
    pub budget: u32,
    /// Evaluations recorded, all stages.
    pub spent: u32,
    /// Per stage: (stage, budget, spent).
    pub stages: Vec<(Stage, u32, u32)>,
}

/// Wall-clock time of the three phases of one evaluation, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageTimings {
    /// Static check and compilation.
    pub compile_ms: u64,
    /// Correctness runs.
    pub correctness_ms: u64,
    /// Profiling runs.
    pub profile_ms: u64,
}

/// An evaluation to record.
#[derive(Debug, Clone, Copy)]
pub struct NewEvaluation<'a> {
    /// The run.
    pub run: RunId,
    /// The operator.
    pub op: &'a str,
    /// The budget pool charged.
    pub stage: Stage,
    /// Index of this evaluation in the stage's budget (0-based).
    pub budget_index: u32,
    /// The candidate's source, already [`RunStore::put_source`]d.
    pub source_hash: &'a SourceHash,
    /// The outcome.
    pub verdict: &'a Verdict,
    /// The seed the inputs were drawn from.
    pub seed: u64,
    /// Phase timings.
    pub timings: StageTimings,
    /// What the candidate launched (kernel library and the tiling of every
    /// case, hashed), when the device could tell.
    pub launch: Option<&'a str>,
}

/// A stored evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Row id (insertion order).
    pub id: i64,
    /// The run.
    pub run: RunId,
    /// The operator.
    pub op: String,
    /// The budget pool charged.
    pub stage: Stage,
    /// Index in the stage's budget.
    pub budget_index: u32,
    /// The candidate's source.
    pub source_hash: SourceHash,
    /// The outcome.
    pub verdict: Verdict,
    /// Input seed.
    pub seed: u64,
    /// Phase timings.
    pub timings: StageTimings,
    /// When it was recorded, Unix milliseconds.
    pub created_ms: i64,
    /// The launch key, when the device could tell it.
    pub launch: Option<String>,
}

/// The result of [`RunStore::record_evaluation`].
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The row as stored.
    pub evaluation: Evaluation,
    /// False when the key was stored already (nothing was written).
    pub is_new: bool,
}

/// The run store.
#[derive(Debug)]
pub struct RunStore {
    conn: Connection,
    path: PathBuf,
}

/// Schema of a fresh store, at [`END_VERSION`].
const SCHEMA: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    created_ms INTEGER NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE operators (
    run INTEGER NOT NULL REFERENCES runs(id),
    op TEXT NOT NULL,
    level TEXT NOT NULL,
    budget INTEGER NOT NULL,
    spent INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run, op)
);
CREATE TABLE stage_budgets (
    run INTEGER NOT NULL,
    op TEXT NOT NULL,
    stage TEXT NOT NULL,
    budget INTEGER NOT NULL,
    spent INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run, op, stage),
    FOREIGN KEY (run, op) REFERENCES operators(run, op)
);
CREATE TABLE sources (
    hash TEXT PRIMARY KEY,
    content TEXT NOT NULL
);
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    run INTEGER NOT NULL,
    op TEXT NOT NULL,
    stage TEXT NOT NULL,
    budget_index INTEGER NOT NULL,
    source_hash TEXT NOT NULL REFERENCES sources(hash),
    verdict TEXT NOT NULL,
    details TEXT NOT NULL,
    latency_median_us REAL,
    latency_mean_us REAL,
    latency_stddev_us REAL,
    latency_n INTEGER,
    profile TEXT,
    seed INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    compile_ms INTEGER NOT NULL DEFAULT 0,
    correctness_ms INTEGER NOT NULL DEFAULT 0,
    profile_ms INTEGER NOT NULL DEFAULT 0,
    launch TEXT,
    UNIQUE (run, op, stage, budget_index),
    FOREIGN KEY (run, op) REFERENCES operators(run, op)
);
CREATE INDEX evaluations_by_source ON evaluations(run, op, source_hash);
CREATE INDEX evaluations_by_launch ON evaluations(run, op, launch);
";

/// The `llm_calls` table (version 3): one row per LLM request attempt or
/// replayed answer. Part of a fresh schema and the 2 → 3 upgrade.
const LLM_CALLS_SCHEMA: &str = "
CREATE TABLE llm_calls (
    id INTEGER PRIMARY KEY,
    run INTEGER NOT NULL REFERENCES runs(id),
    op TEXT NOT NULL,
    role TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost REAL,
    latency_ms INTEGER NOT NULL,
    request_hash TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE INDEX llm_calls_by_run ON llm_calls(run, id);
CREATE INDEX llm_calls_by_request ON llm_calls(request_hash, status);
";

/// Schema version 1, the first cut. Kept so that tests can build a v1 file
/// and check that upgrading it gives the fresh schema.
#[cfg(test)]
pub(crate) const SCHEMA_V1: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    created_ms INTEGER NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE operators (
    run INTEGER NOT NULL REFERENCES runs(id),
    op TEXT NOT NULL,
    level TEXT NOT NULL,
    budget INTEGER NOT NULL,
    spent INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run, op)
);
CREATE TABLE stage_budgets (
    run INTEGER NOT NULL,
    op TEXT NOT NULL,
    stage TEXT NOT NULL,
    budget INTEGER NOT NULL,
    spent INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run, op, stage),
    FOREIGN KEY (run, op) REFERENCES operators(run, op)
);
CREATE TABLE sources (
    hash TEXT PRIMARY KEY,
    content TEXT NOT NULL
);
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    run INTEGER NOT NULL,
    op TEXT NOT NULL,
    stage TEXT NOT NULL,
    budget_index INTEGER NOT NULL,
    source_hash TEXT NOT NULL REFERENCES sources(hash),
    verdict TEXT NOT NULL,
    details TEXT NOT NULL,
    latency_median_us REAL,
    latency_mean_us REAL,
    latency_stddev_us REAL,
    latency_n INTEGER,
    profile TEXT,
    seed INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    UNIQUE (run, op, stage, budget_index),
    FOREIGN KEY (run, op) REFERENCES operators(run, op)
);
PRAGMA user_version = 1;
";

/// Creates the latest schema in an empty database.
fn init(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA)?;
    tx.execute_batch(LLM_CALLS_SCHEMA)
}

/// Upgrades the schema from `version` to `version + 1`.
fn upgrade_from(tx: &Transaction<'_>, version: i64) -> rusqlite::Result<()> {
    match version {
        1 => tx.execute_batch(
            "ALTER TABLE evaluations ADD COLUMN compile_ms INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE evaluations ADD COLUMN correctness_ms INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE evaluations ADD COLUMN profile_ms INTEGER NOT NULL DEFAULT 0;
             CREATE INDEX evaluations_by_source ON evaluations(run, op, source_hash);",
        ),
        2 => tx.execute_batch(LLM_CALLS_SCHEMA),
        3 => tx.execute_batch(
            "ALTER TABLE evaluations ADD COLUMN launch TEXT;
             CREATE INDEX evaluations_by_launch ON evaluations(run, op, launch);",
        ),
        // open() never calls this outside 1..END_VERSION.
        _ => Ok(()),
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Columns of `evaluations` read by [`RunStore::row_to_evaluation`].
const EVAL_COLUMNS: &str = "id, run, op, stage, budget_index, source_hash, details, seed, \
                            compile_ms, correctness_ms, profile_ms, created_ms, launch";

/// An evaluation row before its text fields are parsed.
struct RawEvaluation {
    id: i64,
    run: i64,
    op: String,
    stage: String,
    budget_index: i64,
    source_hash: String,
    details: String,
    seed: i64,
    compile_ms: i64,
    correctness_ms: i64,
    profile_ms: i64,
    created_ms: i64,
    launch: Option<String>,
}

fn raw_evaluation(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawEvaluation> {
    Ok(RawEvaluation {
        id: row.get(0)?,
        run: row.get(1)?,
        op: row.get(2)?,
        stage: row.get(3)?,
        budget_index: row.get(4)?,
        source_hash: row.get(5)?,
        details: row.get(6)?,
        seed: row.get(7)?,
        compile_ms: row.get(8)?,
        correctness_ms: row.get(9)?,
        profile_ms: row.get(10)?,
        created_ms: row.get(11)?,
        launch: row.get(12)?,
    })
}

impl RunStore {
    /// Opens (creating if needed) the store at `path` and brings its schema
    /// to [`END_VERSION`].
    pub fn open(path: &Path) -> Result<RunStore, StoreError> {
        let sql = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(sql)?;
        let store = RunStore {
            conn,
            path: path.to_path_buf(),
        };
        // Refuse a newer file before writing anything to it (switching the
        // journal mode writes the header).
        ascendopt_sqlite::refuse_newer(&store.conn, END_VERSION)
            .map_err(|e| store.migrate_error(e))?;
        let _mode: String = store
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(sql)?;
        store
            .conn
            .execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(sql)?;
        store.migrate()?;
        Ok(store)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn corrupt(&self, what: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            what,
        }
    }

    fn immediate(&self) -> Result<Transaction<'_>, StoreError> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| self.sql(e))
    }

    fn migrate(&self) -> Result<(), StoreError> {
        ascendopt_sqlite::migrate(&self.conn, END_VERSION, init, upgrade_from)
            .map_err(|e| self.migrate_error(e))
    }

    fn migrate_error(&self, e: ascendopt_sqlite::MigrateError) -> StoreError {
        match e {
            ascendopt_sqlite::MigrateError::Newer { found, supported } => {
                StoreError::IncompatibleVersion {
                    path: self.path.clone(),
                    found,
                    supported,
                }
            }
            ascendopt_sqlite::MigrateError::Foreign => StoreError::Foreign {
                path: self.path.clone(),
            },
            ascendopt_sqlite::MigrateError::Sql(source) => self.sql(source),
        }
    }

    /// Starts a run with the given configuration; its status is `running`.
    pub fn create_run(&self, config: &serde_json::Value) -> Result<RunId, StoreError> {
        self.conn
            .execute(
                "INSERT INTO runs (created_ms, config, status) VALUES (?1, ?2, ?3)",
                params![now_ms(), config.to_string(), RunStatus::Running.as_str()],
            )
            .map_err(|e| self.sql(e))?;
        Ok(RunId(self.conn.last_insert_rowid()))
    }

    /// The run whose configuration equals `config`, resumed (`true`), or a
    /// new one: how a command that is run again with the same settings
    /// continues where it stopped.
    pub fn find_or_create_run(
        &self,
        config: &serde_json::Value,
    ) -> Result<(RunId, bool), StoreError> {
        for info in self.runs()? {
            if &info.config == config {
                self.resume_run(info.id)?;
                return Ok((info.id, true));
            }
        }
        Ok((self.create_run(config)?, false))
    }

    /// Reopens a run after a stop or a crash: marks it `running` and returns
    /// it. Its evaluations and budgets are as they were.
    pub fn resume_run(&self, run: RunId) -> Result<RunInfo, StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET status = ?1 WHERE id = ?2",
                params![RunStatus::Running.as_str(), run.0],
            )
            .map_err(|e| self.sql(e))?;
        if changed == 0 {
            return Err(StoreError::UnknownRun { run });
        }
        self.run(run)
    }

    /// Sets a run's status.
    pub fn set_run_status(&self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET status = ?1 WHERE id = ?2",
                params![status.as_str(), run.0],
            )
            .map_err(|e| self.sql(e))?;
        if changed == 0 {
            return Err(StoreError::UnknownRun { run });
        }
        Ok(())
    }

    /// One run.
    pub fn run(&self, run: RunId) -> Result<RunInfo, StoreError> {
        let row: Option<(i64, i64, String, String)> = self
            .conn
            .query_row(
                "SELECT id, created_ms, config, status FROM runs WHERE id = ?1",
                [run.0],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let row = row.ok_or(StoreError::UnknownRun { run })?;
        self.run_info(row)
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> Result<Vec<RunInfo>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, created_ms, config, status FROM runs ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql(e))?;
        rows.into_iter().map(|row| self.run_info(row)).collect()
    }

    fn run_info(
        &self,
        (id, created_ms, config, status): (i64, i64, String, String),
    ) -> Result<RunInfo, StoreError> {
        let config = serde_json::from_str(&config)
            .map_err(|e| self.corrupt(format!("config of run {id}: {e}")))?;
        let status = RunStatus::parse(&status)
            .ok_or_else(|| self.corrupt(format!("status {status:?} of run {id}")))?;
        Ok(RunInfo {
            id: RunId(id),
            created_ms,
            config,
            status,
        })
    }

    /// Registers an operator of a run with its budget per stage. Registering
    /// it again with the same budgets (a resumed run) changes nothing; with
    /// other budgets it is an error.
    pub fn register_operator(
        &self,
        run: RunId,
        op: &str,
        level: &str,
        budgets: &[(Stage, u32)],
    ) -> Result<OperatorInfo, StoreError> {
        let mut requested: Vec<(Stage, u32)> = budgets.to_vec();
        requested.sort();
        let tx = self.immediate()?;
        let exists: bool = tx
            .query_row("SELECT count(*) FROM runs WHERE id = ?1", [run.0], |r| {
                r.get::<_, i64>(0)
            })
            .map_err(|e| self.sql(e))?
            > 0;
        if !exists {
            return Err(StoreError::UnknownRun { run });
        }
        let stored = self.stage_rows(&tx, run, op)?;
        if stored.is_empty() {
            let total: u32 = requested.iter().map(|(_, b)| *b).sum();
            tx.execute(
                "INSERT INTO operators (run, op, level, budget, spent) VALUES (?1, ?2, ?3, ?4, 0)",
                params![run.0, op, level, total],
            )
            .map_err(|e| self.sql(e))?;
            for (stage, budget) in &requested {
                tx.execute(
                    "INSERT INTO stage_budgets (run, op, stage, budget, spent) VALUES (?1, ?2, ?3, ?4, 0)",
                    params![run.0, op, stage.as_str(), budget],
                )
                .map_err(|e| self.sql(e))?;
            }
        } else {
            let stored: Vec<(Stage, u32)> = stored.iter().map(|&(s, b, _)| (s, b)).collect();
            if stored != requested {
                return Err(StoreError::BudgetMismatch {
                    run,
                    op: op.to_string(),
                    stored,
                    requested,
                });
            }
        }
        tx.commit().map_err(|e| self.sql(e))?;
        self.operator(run, op)?
            .ok_or_else(|| StoreError::UnknownOperator {
                run,
                op: op.to_string(),
                stage: Stage::Online,
            })
    }

    fn stage_rows(
        &self,
        conn: &Connection,
        run: RunId,
        op: &str,
    ) -> Result<Vec<(Stage, u32, u32)>, StoreError> {
        let mut stmt = conn
            .prepare("SELECT stage, budget, spent FROM stage_budgets WHERE run = ?1 AND op = ?2")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(params![run.0, op], |r| {
                Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<(String, u32, u32)>, _>>()
            .map_err(|e| self.sql(e))?;
        let mut out = rows
            .into_iter()
            .map(|(s, b, sp)| {
                Stage::parse(&s)
                    .map(|st| (st, b, sp))
                    .ok_or_else(|| self.corrupt(format!("stage {s:?} of operator {op}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.sort();
        Ok(out)
    }

    /// An operator of a run, with its budgets; `None` if not registered.
    pub fn operator(&self, run: RunId, op: &str) -> Result<Option<OperatorInfo>, StoreError> {
        let row: Option<(String, u32, u32)> = self
            .conn
            .query_row(
                "SELECT level, budget, spent FROM operators WHERE run = ?1 AND op = ?2",
                params![run.0, op],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let Some((level, budget, spent)) = row else {
            return Ok(None);
        };
        Ok(Some(OperatorInfo {
            op: op.to_string(),
            level,
            budget,
            spent,
            stages: self.stage_rows(&self.conn, run, op)?,
        }))
    }

    /// Stores a candidate's source (deduplicated by hash) and returns its
    /// hash.
    pub fn put_source(&self, content: &str) -> Result<SourceHash, StoreError> {
        let hash = SourceHash::of(content);
        self.conn
            .execute(
                "INSERT OR IGNORE INTO sources (hash, content) VALUES (?1, ?2)",
                params![hash.as_str(), content],
            )
            .map_err(|e| self.sql(e))?;
        Ok(hash)
    }

    /// A stored source.
    pub fn get_source(&self, hash: &SourceHash) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT content FROM sources WHERE hash = ?1",
                [hash.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Records one evaluation and charges it to the operator's budget, in
    /// one transaction. If the key (run, op, stage, budget index) is stored
    /// already with the same source, nothing is written and the stored row
    /// is returned with `is_new == false`.
    pub fn record_evaluation(&self, new: &NewEvaluation<'_>) -> Result<Recorded, StoreError> {
        let tx = self.immediate()?;
        if let Some(existing) =
            self.evaluation_in(&tx, new.run, new.op, new.stage, new.budget_index)?
        {
            if &existing.source_hash != new.source_hash {
                return Err(StoreError::KeyConflict {
                    run: new.run,
                    op: new.op.to_string(),
                    stage: new.stage,
                    index: new.budget_index,
                    stored: existing.source_hash,
                    given: new.source_hash.clone(),
                });
            }
            return Ok(Recorded {
                evaluation: existing,
                is_new: false,
            });
        }
        let budget: Option<u32> = tx
            .query_row(
                "SELECT budget FROM stage_budgets WHERE run = ?1 AND op = ?2 AND stage = ?3",
                params![new.run.0, new.op, new.stage.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let budget = budget.ok_or_else(|| StoreError::UnknownOperator {
            run: new.run,
            op: new.op.to_string(),
            stage: new.stage,
        })?;
        if new.budget_index >= budget {
            return Err(StoreError::OverBudget {
                op: new.op.to_string(),
                stage: new.stage,
                index: new.budget_index,
                budget,
            });
        }
        let have_source: i64 = tx
            .query_row(
                "SELECT count(*) FROM sources WHERE hash = ?1",
                [new.source_hash.as_str()],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))?;
        if have_source == 0 {
            return Err(StoreError::MissingSource {
                hash: new.source_hash.clone(),
            });
        }
        let details = serde_json::to_string(new.verdict)
            .map_err(|e| self.corrupt(format!("verdict does not serialise: {e}")))?;
        let latency = new.verdict.latency();
        // The typed profile becomes JSON here, and only here: inside the
        // verdict's details and, for SQL readers, in its own column.
        let profile = new
            .verdict
            .profile()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| self.corrupt(format!("profile does not serialise: {e}")))?;
        let ms = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        tx.execute(
            "INSERT INTO evaluations (run, op, stage, budget_index, source_hash, verdict, details,
                 latency_median_us, latency_mean_us, latency_stddev_us, latency_n, profile, seed,
                 created_ms, compile_ms, correctness_ms, profile_ms, launch)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
            params![
                new.run.0,
                new.op,
                new.stage.as_str(),
                new.budget_index,
                new.source_hash.as_str(),
                new.verdict.kind(),
                details,
                latency.map(|l| l.median_us),
                latency.map(|l| l.mean_us),
                latency.map(|l| l.stddev_us),
                latency.map(|l| l.n),
                profile,
                // Stored as the same 64 bits; read back with `as u64`.
                new.seed as i64,
                now_ms(),
                ms(new.timings.compile_ms),
                ms(new.timings.correctness_ms),
                ms(new.timings.profile_ms),
                new.launch,
            ],
        )
        .map_err(|e| self.sql(e))?;
        tx.execute(
            "UPDATE stage_budgets SET spent = spent + 1 WHERE run = ?1 AND op = ?2 AND stage = ?3",
            params![new.run.0, new.op, new.stage.as_str()],
        )
        .map_err(|e| self.sql(e))?;
        tx.execute(
            "UPDATE operators SET spent = spent + 1 WHERE run = ?1 AND op = ?2",
            params![new.run.0, new.op],
        )
        .map_err(|e| self.sql(e))?;
        let stored = self
            .evaluation_in(&tx, new.run, new.op, new.stage, new.budget_index)?
            .ok_or_else(|| {
                self.corrupt("evaluation vanished inside its transaction".to_string())
            })?;
        tx.commit().map_err(|e| self.sql(e))?;
        Ok(Recorded {
            evaluation: stored,
            is_new: true,
        })
    }

    fn evaluation_in(
        &self,
        conn: &Connection,
        run: RunId,
        op: &str,
        stage: Stage,
        index: u32,
    ) -> Result<Option<Evaluation>, StoreError> {
        let raw = conn
            .query_row(
                &format!(
                    "SELECT {EVAL_COLUMNS} FROM evaluations
                     WHERE run = ?1 AND op = ?2 AND stage = ?3 AND budget_index = ?4"
                ),
                params![run.0, op, stage.as_str(), index],
                raw_evaluation,
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        raw.map(|r| self.parse_evaluation(r)).transpose()
    }

    fn parse_evaluation(&self, r: RawEvaluation) -> Result<Evaluation, StoreError> {
        let id = r.id;
        let stage = Stage::parse(&r.stage)
            .ok_or_else(|| self.corrupt(format!("stage {:?} of evaluation {id}", r.stage)))?;
        let source_hash = SourceHash::from_hex(&r.source_hash).ok_or_else(|| {
            self.corrupt(format!(
                "source hash {:?} of evaluation {id}",
                r.source_hash
            ))
        })?;
        let verdict: Verdict = serde_json::from_str(&r.details)
            .map_err(|e| self.corrupt(format!("verdict of evaluation {id}: {e}")))?;
        let budget_index = u32::try_from(r.budget_index)
            .map_err(|_| self.corrupt(format!("budget index of evaluation {id}")))?;
        let ms = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(Evaluation {
            id,
            run: RunId(r.run),
            op: r.op,
            stage,
            budget_index,
            source_hash,
            verdict,
            seed: r.seed as u64,
            timings: StageTimings {
                compile_ms: ms(r.compile_ms),
                correctness_ms: ms(r.correctness_ms),
                profile_ms: ms(r.profile_ms),
            },
            created_ms: r.created_ms,
            launch: r.launch,
        })
    }

    fn query_evaluations(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
    ) -> Result<Vec<Evaluation>, StoreError> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.sql(e))?;
        let raws = stmt
            .query_map(args, raw_evaluation)
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql(e))?;
        raws.into_iter().map(|r| self.parse_evaluation(r)).collect()
    }

    /// The evaluation stored under a key.
    pub fn evaluation_at(
        &self,
        run: RunId,
        op: &str,
        stage: Stage,
        budget_index: u32,
    ) -> Result<Option<Evaluation>, StoreError> {
        self.evaluation_in(&self.conn, run, op, stage, budget_index)
    }

    /// Every evaluation of an operator in a run: rewind first, then online,
    /// each by budget index (so the order does not depend on which worker
    /// finished first).
    pub fn evaluations(&self, run: RunId, op: &str) -> Result<Vec<Evaluation>, StoreError> {
        self.query_evaluations(
            &format!(
                "SELECT {EVAL_COLUMNS} FROM evaluations WHERE run = ?1 AND op = ?2
                 ORDER BY CASE stage WHEN 'rewind' THEN 0 ELSE 1 END, budget_index"
            ),
            params![run.0, op],
        )
    }

    /// Evaluations charged to a stage of an operator.
    pub fn budget_spent(&self, run: RunId, op: &str, stage: Stage) -> Result<u32, StoreError> {
        let spent: Option<u32> = self
            .conn
            .query_row(
                "SELECT spent FROM stage_budgets WHERE run = ?1 AND op = ?2 AND stage = ?3",
                params![run.0, op, stage.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        Ok(spent.unwrap_or(0))
    }

    /// Budget indices already recorded for a stage of an operator, ascending.
    pub fn recorded_indices(
        &self,
        run: RunId,
        op: &str,
        stage: Stage,
    ) -> Result<Vec<u32>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT budget_index FROM evaluations WHERE run = ?1 AND op = ?2 AND stage = ?3
                 ORDER BY budget_index",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(params![run.0, op, stage.as_str()], |r| r.get(0))
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<u32>, _>>()
            .map_err(|e| self.sql(e))?;
        Ok(rows)
    }

    /// The first evaluation of this exact source for the operator in the
    /// run, so that an identical candidate is not evaluated (and charged)
    /// again.
    pub fn find_by_source(
        &self,
        run: RunId,
        op: &str,
        hash: &SourceHash,
    ) -> Result<Option<Evaluation>, StoreError> {
        self.first_where(run, op, "source_hash", hash.as_str())
    }

    /// The first evaluation of the operator in the run whose candidate
    /// launched exactly this (`launch`, see `pipeline::launch_key`): a
    /// candidate whose host code differs but whose launches do not is not
    /// evaluated (and charged) again.
    pub fn find_by_launch(
        &self,
        run: RunId,
        op: &str,
        launch: &str,
    ) -> Result<Option<Evaluation>, StoreError> {
        self.first_where(run, op, "launch", launch)
    }

    /// The operator's first evaluation in the run whose `column` (an
    /// indexed one, named here, never by a caller) holds `value`.
    fn first_where(
        &self,
        run: RunId,
        op: &str,
        column: &'static str,
        value: &str,
    ) -> Result<Option<Evaluation>, StoreError> {
        let mut rows = self.query_evaluations(
            &format!(
                "SELECT {EVAL_COLUMNS} FROM evaluations WHERE run = ?1 AND op = ?2 AND {column} = ?3
                 ORDER BY id LIMIT 1"
            ),
            params![run.0, op, value],
        )?;
        Ok(rows.pop())
    }
}

mod llm_calls;
pub use llm_calls::{LlmCall, LlmUsage, NewLlmCall};

#[cfg(test)]
mod tests;
