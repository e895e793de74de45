//! [`JsonFileError`]: why a JSON file of an imported operator (an msopst
//! case file, an msopgen operator description) cannot be read as one.

use std::path::PathBuf;

/// A JSON file that cannot be read, or is not the kind of file asked for.
#[derive(Debug, thiserror::Error)]
pub enum JsonFileError {
    /// The file cannot be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where and why.
        source: serde_json::Error,
    },
    /// The JSON is not what the file should hold.
    #[error("{}: {what}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong (`not a list of msopst cases`).
        what: &'static str,
    },
}

impl JsonFileError {
    /// The JSON value of the file at `path`.
    pub(crate) fn read(path: &std::path::Path) -> Result<serde_json::Value, JsonFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| JsonFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| JsonFileError::Parse {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The file at `path` does not hold what it should.
    pub(crate) fn shape(path: &std::path::Path, what: &'static str) -> JsonFileError {
        JsonFileError::Shape {
            path: path.to_path_buf(),
            what,
        }
    }
}
