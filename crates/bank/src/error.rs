//! The bank's error type. Every variant names its culprit: the bank file,
//! the entry, the JSONL line, the guide page or the embeddings endpoint.

use std::path::PathBuf;

/// Errors of the experience bank.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BankError {
    /// SQLite failed.
    #[error("bank {path}: {source}")]
    Sqlite {
        /// The bank file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file was written by a newer ascendopt.
    #[error("bank {path} has schema version {found}, newer than the {supported} this program knows; it was left unchanged")]
    IncompatibleVersion {
        /// The bank file.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
        /// The version this code writes.
        supported: i64,
    },
    /// The file is an SQLite database of something else.
    #[error("{path} is not an ascendopt experience bank: it has tables but no schema version")]
    Foreign {
        /// The file.
        path: PathBuf,
    },
    /// A command that reads a bank was given a file that does not exist.
    #[error("no bank at {path}")]
    NoSuchBank {
        /// The path given.
        path: PathBuf,
    },
    /// The bank was frozen (after Rewind) and takes no more entries.
    #[error("bank {path} is frozen: entries cannot be added")]
    Frozen {
        /// The bank file.
        path: PathBuf,
    },
    /// No entry has this id.
    #[error("bank {path} has no entry #{id}")]
    UnknownEntry {
        /// The bank file.
        path: PathBuf,
        /// The id asked for.
        id: i64,
    },
    /// An entry breaks a rule of [`crate::entry::Entry::validate`].
    #[error("invalid entry {title:?}: {field}: {reason}")]
    InvalidEntry {
        /// The entry's title.
        title: String,
        /// The offending field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A stored entry body does not parse.
    #[error("bank {path}: entry #{id} is corrupt: {reason}")]
    Corrupt {
        /// The bank file.
        path: PathBuf,
        /// The entry.
        id: i64,
        /// What could not be read.
        reason: String,
    },
    /// A JSONL line does not parse as an entry (nothing was imported).
    #[error("JSONL line {line}: {reason}")]
    BadJsonl {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing a file or stream failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being read or written.
        what: String,
        /// The IO error.
        source: std::io::Error,
    },
    /// The tuning guide could not be read.
    #[error("guide {path}: {reason}")]
    Guide {
        /// The guide folder or page.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The embedder failed.
    #[error("embeddings endpoint {url}: {source}")]
    Embeddings {
        /// Where the vectors came from ([`crate::embed::Embedder::endpoint`]).
        url: String,
        /// The embedder's own error.
        source: crate::embed::EmbedError,
    },
    /// The embedder answered a batch with another number of vectors.
    #[error("embeddings of model {model}: {vectors} vectors for {texts} texts")]
    EmbeddingCount {
        /// The embedder's model.
        model: String,
        /// Vectors answered.
        vectors: usize,
        /// Texts sent.
        texts: usize,
    },
    /// A profile JSON lacks what a signature needs.
    #[error("profile JSON: {reason}")]
    BadProfile {
        /// What is missing or malformed.
        reason: String,
    },
}
