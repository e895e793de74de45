//! [`SharedError`]: a device's own typed error, held where the data that
//! carries it must stay `Clone` and comparable (a [`crate::DeviceError`],
//! a [`crate::QueryError`], a run's [`crate::Measurement`]).
//!
//! It shows as the error it wraps and hands on that error's source, so a
//! chain printed with `{:#}` reads the same as the wrapped error's own.

use std::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A typed error shared by reference: cloning shares it; two are equal
/// when they say the same (their messages, sources included, agree).
#[derive(Clone)]
pub struct SharedError(Arc<dyn Error + Send + Sync + 'static>);

impl SharedError {
    /// Wraps `error`.
    pub fn new(error: impl Error + Send + Sync + 'static) -> SharedError {
        SharedError(Arc::new(error))
    }

    /// Wraps `error`, met at `path` (shown as `path: error`).
    pub fn at(path: &Path, error: impl Error + Send + Sync + 'static) -> SharedError {
        SharedError::new(AtPath {
            path: path.to_path_buf(),
            source: Box::new(error),
        })
    }

    /// The wrapped error, when it is an `E`.
    pub fn downcast_ref<E: Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }
}

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl Error for SharedError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for SharedError {
    fn eq(&self, other: &SharedError) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || chain(self) == chain(other)
    }
}

impl Eq for SharedError {}

/// Every message of the chain from `e` down.
fn chain(e: &dyn Error) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut next = e.source();
    while let Some(s) = next {
        out.push(s.to_string());
        next = s.source();
    }
    out
}

/// An error met at a file or folder.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
struct AtPath {
    path: PathBuf,
    source: Box<dyn Error + Send + Sync + 'static>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_and_compares_as_the_wrapped_error() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let a = SharedError::at(Path::new("/x/op.toml"), io());
        assert_eq!(a.to_string(), "/x/op.toml: gone");
        assert_eq!(a.source().map(|s| s.to_string()).as_deref(), Some("gone"));
        assert_eq!(a, a.clone());
        assert_eq!(a, SharedError::at(Path::new("/x/op.toml"), io()));
        assert_ne!(a, SharedError::at(Path::new("/y/op.toml"), io()));
        assert_ne!(a, SharedError::new(io()));
        assert!(SharedError::new(io())
            .downcast_ref::<std::io::Error>()
            .is_some());
    }
}
