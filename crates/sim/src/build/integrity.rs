//! Content hashes of the build cache's files: every library and object
//! ascendopt writes into the cache gets a `<file>.sha256` beside it
//! ([`record`], written before the file itself is renamed into place), and
//! a cached file is used only while its contents still have that hash
//! ([`check`]): a changed or unrecorded file is a cache miss (rebuilt, with
//! a warning), and a library that changed since its build is never loaded
//! by a worker.
//!
//! Hashing a library costs a few milliseconds; a file whose identity
//! (device, inode, size, modification time) is unchanged since it was last
//! hashed by this process is not hashed again.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What [`check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integrity {
    /// The contents have the recorded hash.
    Intact,
    /// No hash is recorded (not written by this build, or by an older one).
    Unrecorded,
    /// The contents changed since they were recorded.
    Changed {
        /// The recorded hash.
        recorded: String,
        /// The hash of the contents now.
        actual: String,
    },
    /// The file cannot be read.
    Unreadable(String),
}

/// The sidecar file holding `path`'s hash.
pub fn sidecar(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    path.with_file_name(name)
}

/// Hex SHA-256 of a file's contents.
fn hash_file(path: &Path) -> io::Result<String> {
    let bytes = fs::read(path)?;
    Ok(format!("{:x}", Sha256::digest(&bytes)))
}

/// A file's identity: if it is unchanged, so are its contents.
type Identity = (u64, u64, u64, i64, i64);

fn identity(meta: &fs::Metadata) -> Identity {
    (
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
    )
}

/// Files hashed by this process: identity and hash when hashed.
static SEEN: Mutex<Option<HashMap<PathBuf, (Identity, String)>>> = Mutex::new(None);

/// The hash of `path`'s contents, from the memo when its identity has not
/// changed.
fn current_hash(path: &Path) -> io::Result<String> {
    let meta = fs::metadata(path)?;
    let id = identity(&meta);
    if let Ok(seen) = SEEN.lock() {
        if let Some((known, hash)) = seen.as_ref().and_then(|m| m.get(path)) {
            if *known == id {
                return Ok(hash.clone());
            }
        }
    }
    let hash = hash_file(path)?;
    if let Ok(mut seen) = SEEN.lock() {
        seen.get_or_insert_with(HashMap::new)
            .insert(path.to_path_buf(), (id, hash.clone()));
    }
    Ok(hash)
}

/// Records the hash of `contents_of` (a finished temporary file) as the
/// hash of `final_path`, atomically; call before renaming the file into
/// place.
pub fn record(contents_of: &Path, final_path: &Path) -> io::Result<()> {
    let hash = hash_file(contents_of)?;
    let side = sidecar(final_path);
    let tmp = side.with_extension(format!("sha256.tmp-{}", std::process::id()));
    fs::write(&tmp, format!("{hash}\n"))?;
    fs::rename(&tmp, &side)
}

/// Whether `path` still has the hash recorded for it.
pub fn check(path: &Path) -> Integrity {
    let recorded = match fs::read_to_string(sidecar(path)) {
        Ok(text) => text.trim().to_string(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Integrity::Unrecorded,
        Err(e) => return Integrity::Unreadable(e.to_string()),
    };
    match current_hash(path) {
        Ok(actual) if actual == recorded => Integrity::Intact,
        Ok(actual) => Integrity::Changed { recorded, actual },
        Err(e) => Integrity::Unreadable(e.to_string()),
    }
}

/// A cached file usable as is: present and intact. A file that is present
/// but changed or unrecorded is removed (with a warning on stderr) so that
/// it is built again.
pub fn cached(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let why = match check(path) {
        Integrity::Intact => return true,
        Integrity::Unrecorded => "no content hash is recorded for it".to_string(),
        Integrity::Changed { recorded, actual } => format!(
            "its contents changed since it was built (sha256 {actual}, recorded {recorded})"
        ),
        Integrity::Unreadable(e) => format!("it cannot be read ({e})"),
    };
    eprintln!(
        "warning: build cache: {} is not used: {why}; building it again",
        path.display()
    );
    let _ = fs::remove_file(path);
    false
}

/// Why a library of the build cache is not loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadRefused {
    /// Its contents changed since it was built.
    #[error("{} changed since it was built (sha256 {actual}, recorded {recorded}): not loaded", path.display())]
    Changed {
        /// The library.
        path: std::path::PathBuf,
        /// The hash of the contents now.
        actual: String,
        /// The recorded hash.
        recorded: String,
    },
    /// It cannot be read to check it.
    #[error("{}: {message}", path.display())]
    Unreadable {
        /// The library.
        path: std::path::PathBuf,
        /// The OS error's text.
        message: String,
    },
}

/// Err when `path` (a library about to be loaded) changed since it was
/// built; a library without a recorded hash (not from the build cache) is
/// let through.
pub fn check_before_load(path: &Path) -> Result<(), LoadRefused> {
    match check(path) {
        Integrity::Intact | Integrity::Unrecorded => Ok(()),
        Integrity::Changed { recorded, actual } => Err(LoadRefused::Changed {
            path: path.to_path_buf(),
            actual,
            recorded,
        }),
        Integrity::Unreadable(message) => Err(LoadRefused::Unreadable {
            path: path.to_path_buf(),
            message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_is_found_and_dropped_from_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join(".tmp-lib");
        let lib = dir.path().join("kernel-abc.so");
        fs::write(&tmp, b"original library").unwrap();
        record(&tmp, &lib).unwrap();
        fs::rename(&tmp, &lib).unwrap();
        assert_eq!(check(&lib), Integrity::Intact);
        assert!(cached(&lib));
        assert!(check_before_load(&lib).is_ok());
        // Another file renamed over it (what a poisoned cache looks like).
        fs::write(&tmp, b"someone else's library").unwrap();
        fs::rename(&tmp, &lib).unwrap();
        assert!(matches!(check(&lib), Integrity::Changed { .. }));
        assert!(check_before_load(&lib)
            .unwrap_err()
            .to_string()
            .contains("changed since it was built"));
        assert!(!cached(&lib));
        assert!(!lib.exists(), "the changed file is removed to be rebuilt");
        // Unrecorded files are misses too, but loading them is allowed.
        let other = dir.path().join("kernel-def.so");
        fs::write(&other, b"x").unwrap();
        assert_eq!(check(&other), Integrity::Unrecorded);
        assert!(check_before_load(&other).is_ok());
        assert!(!cached(&other));
    }
}
