//! A CANN tool run as a child process with a wall-clock limit: its own
//! process group (so a runner's helpers die with it), stdout and stderr
//! kept in files, the whole group killed when the limit passes.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How a child ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited (or died of a signal) within the limit.
    Exited {
        /// Its status.
        status: ExitStatus,
        /// Its stdout and stderr, in that order.
        output: String,
    },
    /// The limit passed; the group was killed.
    TimedOut {
        /// Milliseconds it ran.
        after_ms: u64,
        /// What it printed until then.
        output: String,
    },
}

/// Why a child could not be run to its end.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// Its output file could not be created.
    #[error("{}: {source}", path.display())]
    Log {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It could not be started.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program, as the command names it.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for it failed.
    #[error("waiting for {program}: {source}")]
    Wait {
        /// The program, as the command names it.
        program: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Runs `cmd` (stdin closed) with `limit`, its output captured in
/// `<log>.out`; Err when it cannot be started.
pub fn run(mut cmd: Command, limit: Duration, log: &Path) -> Result<Ended, ChildError> {
    let out_path = log.with_extension("out");
    let err_path = log.with_extension("err");
    let create = |path: PathBuf| {
        std::fs::File::create(&path).map_err(|source| ChildError::Log { path, source })
    };
    let out = create(out_path.clone())?;
    let err = create(err_path.clone())?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0);
    let program = format!("{:?}", cmd.get_program());
    let mut child = cmd.spawn().map_err(|source| ChildError::Spawn {
        program: program.clone(),
        source,
    })?;
    let start = Instant::now();
    let read = || {
        let mut text = std::fs::read_to_string(&out_path).unwrap_or_default();
        text.push_str(&std::fs::read_to_string(&err_path).unwrap_or_default());
        text
    };
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                // Whatever the child left running in its group goes too.
                kill_group(child.id());
                return Ok(Ended::Exited {
                    status,
                    output: read(),
                });
            }
            Ok(None) => {}
            Err(source) => return Err(ChildError::Wait { program, source }),
        }
        if start.elapsed() >= limit {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Ended::TimedOut {
                after_ms: start.elapsed().as_millis() as u64,
                output: read(),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn kill_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: killpg only sends a signal; the group is the child's own
    // (process_group(0) made it its leader).
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
    }
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
