//! One ascendopt process per output folder: [`lock`] takes an exclusive
//! `flock` on `<dir>/.ascendopt.lock` for the life of the returned
//! [`OutLock`] and writes the holder's pid into it. A second process on
//! the same folder gets [`OutLockError::Held`], naming that pid, instead of
//! two runs writing one run store and one work folder. The kernel releases
//! the lock when the holder exits, however it exits (`kill -9` included),
//! so a stale lock file never blocks a resume.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The lock file's name inside the folder.
pub const LOCK_FILE: &str = ".ascendopt.lock";

/// Why the folder could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum OutLockError {
    /// Another process holds it.
    #[error("{} is in use by another ascendopt process ({}); wait for it to finish or choose another --out", .dir.display(), .holder.map_or_else(|| "pid unknown".to_string(), |p| format!("pid {p}")))]
    Held {
        /// The folder.
        dir: PathBuf,
        /// The holder's pid, as it wrote it.
        holder: Option<u32>,
    },
    /// The lock file could not be created or locked.
    #[error("cannot lock {}: {source}", .path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// The held lock; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct OutLock {
    _file: File,
    path: PathBuf,
}

impl OutLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Locks `dir` (created if missing) for this process.
pub fn lock(dir: &Path) -> Result<OutLock, OutLockError> {
    let path = dir.join(LOCK_FILE);
    let io_err = |source| OutLockError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io_err)?;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_err)?;
    // SAFETY: flock on a descriptor we own.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::WouldBlock {
            return Err(io_err(err));
        }
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        return Err(OutLockError::Held {
            dir: dir.to_path_buf(),
            holder: text.trim().parse().ok(),
        });
    }
    file.set_len(0).map_err(io_err)?;
    file.seek(SeekFrom::Start(0)).map_err(io_err)?;
    writeln!(file, "{}", std::process::id()).map_err(io_err)?;
    file.flush().map_err(io_err)?;
    Ok(OutLock { _file: file, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = lock(&out).unwrap();
        assert_eq!(
            std::fs::read_to_string(first.path()).unwrap().trim(),
            std::process::id().to_string()
        );
        // flock locks belong to the open file: a second open in this
        // process is refused like another process would be.
        let err = lock(&out).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&format!("pid {}", std::process::id())) && text.contains("--out"),
            "{text}"
        );
        drop(first);
        assert!(lock(&out).is_ok(), "released on drop");
    }
}
