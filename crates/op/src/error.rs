//! The error type of the crate. Every variant names its culprit: the op.toml
//! file with line, column and key path, the source line of a tiling region,
//! or the test case.

use std::fmt;
use std::path::{Path, PathBuf};

/// One step of a key path into op.toml: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSeg {
    /// A key of a table (`shapes`).
    Key(String),
    /// An index into an array or array of tables (`[2]`).
    Index(usize),
}

/// A key path into op.toml such as `cases[2].shapes`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KeyPath(pub Vec<PathSeg>);

impl KeyPath {
    /// The empty path (the whole document).
    pub fn root() -> KeyPath {
        KeyPath(Vec::new())
    }

    /// This path extended by a key.
    pub fn key(&self, key: &str) -> KeyPath {
        let mut segs = self.0.clone();
        segs.push(PathSeg::Key(key.to_string()));
        KeyPath(segs)
    }

    /// This path extended by an index.
    pub fn index(&self, index: usize) -> KeyPath {
        let mut segs = self.0.clone();
        segs.push(PathSeg::Index(index));
        KeyPath(segs)
    }

    /// True for the root path.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                PathSeg::Key(k) if i == 0 => write!(f, "{k}")?,
                PathSeg::Key(k) => write!(f, ".{k}")?,
                PathSeg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// A problem in an op.toml file, with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The op.toml file.
    pub file: PathBuf,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// Key path of the offending item (empty for the whole file).
    pub path: KeyPath,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        if !self.path.is_root() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Errors of operator packages.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// op.toml is malformed or inconsistent.
    #[error("{0}")]
    Spec(Box<SpecError>),
    /// A file could not be read, written or listed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was attempted (`read`, `write`, `list`).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A source file (tiling region, knob annotation) is malformed.
    #[error("{}:{line}: {message}", file.display())]
    Source {
        /// The source file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Knob values given to a tiling render or check are not acceptable.
    #[error("tiling: {message}")]
    Tiling {
        /// What is wrong.
        message: String,
    },
    /// A case cannot be generated or computed (shape errors, unsupported
    /// dtype combinations, inputs that do not match the case).
    #[error("case `{case}`: {message}")]
    Case {
        /// The case name.
        case: String,
        /// What is wrong.
        message: String,
    },
    /// A builtin golden cannot compute the case.
    #[error("case `{case}`: builtin `{builtin}`: {source}")]
    Golden {
        /// The case name.
        case: String,
        /// The builtin's name.
        builtin: &'static str,
        /// Why.
        #[source]
        source: crate::golden::GoldenError,
    },
    /// A golden script failed or returned unusable outputs.
    #[error("golden script {}: {message}", script.display())]
    Script {
        /// The script.
        script: PathBuf,
        /// What went wrong (exit status, stderr, bad output).
        message: String,
    },
    /// A `.npy` buffer is malformed or of an unsupported kind.
    #[error("npy {what}: {message}")]
    Npy {
        /// Which array (file name or tensor name).
        what: String,
        /// What is wrong.
        message: String,
    },
    /// Two tensors cannot be compared (dtype, shape or size differ).
    #[error("cannot compare: {message}")]
    Compare {
        /// What differs.
        message: String,
    },
}

impl OpError {
    /// A [`OpError::Spec`] error.
    pub fn spec(
        file: &Path,
        position: Option<(usize, usize)>,
        path: KeyPath,
        message: impl Into<String>,
    ) -> OpError {
        OpError::Spec(Box::new(SpecError {
            file: file.to_path_buf(),
            position,
            path,
            message: message.into(),
        }))
    }

    /// A [`OpError::Case`] error.
    pub fn case(case: &str, message: impl Into<String>) -> OpError {
        OpError::Case {
            case: case.to_string(),
            message: message.into(),
        }
    }

    /// A [`OpError::Io`] error.
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> OpError {
        OpError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_error_display_has_file_position_and_path() {
        let path = KeyPath::root().key("cases").index(2).key("shapes");
        let err = OpError::spec(
            Path::new("ops/add_custom/op.toml"),
            Some((14, 1)),
            path,
            "1 shape given but the operator has 2 inputs",
        );
        assert_eq!(
            err.to_string(),
            "ops/add_custom/op.toml:14:1: cases[2].shapes: 1 shape given but the operator has 2 inputs"
        );
        let err = OpError::spec(Path::new("a/op.toml"), None, KeyPath::root(), "bad");
        assert_eq!(err.to_string(), "a/op.toml: bad");
    }
}
