//! Running a trusted tool whose input is not (g++ on a candidate's sources)
//! so that nothing it starts outlives it or ascendopt: its own process
//! group, its own PID namespace where the system allows one (every process
//! of a compile dies with the driver), a parent-death signal, and limits on
//! CPU time, address space and file size; on a time-out the whole group is
//! killed and reaped.

use super::sandbox::{Rlimits, SandboxPlan};
use super::spawn;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Limits of one contained run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainedLimits {
    /// Wall-clock limit; the process group is killed after it.
    pub wall: Duration,
    /// Address space of each process (RLIMIT_AS), bytes.
    pub address_space_bytes: u64,
    /// Largest file a process may write (RLIMIT_FSIZE), bytes.
    pub file_size_bytes: u64,
    /// Bytes kept of stdout and of stderr each.
    pub capture_bytes: usize,
}

/// How a contained run ended.
#[derive(Debug)]
pub struct Contained {
    /// The exit status; None when the wall limit stopped it.
    pub status: Option<ExitStatus>,
    /// What it wrote to stdout (at most `capture_bytes`).
    pub stdout: Vec<u8>,
    /// What it wrote to stderr (at most `capture_bytes`).
    pub stderr: Vec<u8>,
}

/// Whether PID namespaces failed once (not tried again).
static NO_PID_NAMESPACE: AtomicBool = AtomicBool::new(false);

/// Runs `program args` with `env` added to ours (stdin empty) under
/// `limits`.
pub fn run(
    program: &Path,
    args: &[OsString],
    env: &[(&str, &str)],
    limits: &ContainedLimits,
) -> io::Result<Contained> {
    let start = Instant::now();
    let rlimits = Rlimits {
        address_space: limits.address_space_bytes,
        // The wall limit normally stops it first; this bounds a process
        // that escaped the group somehow.
        cpu_seconds: limits.wall.as_secs().saturating_add(2),
        file_size: limits.file_size_bytes,
        open_files: 1024,
        processes: None,
    };
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !env.iter().any(|(e, _)| e == k))
        .collect();
    vars.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    // The worker spawner takes &str keys.
    let keys: Vec<String> = vars.iter().map(|(k, _)| k.clone()).collect();
    let env: Vec<(&str, String)> = keys
        .iter()
        .zip(&vars)
        .map(|(k, (_, v))| (k.as_str(), v.clone()))
        .collect();
    let program = resolve(program)?;
    let spawned = loop {
        let namespace = !NO_PID_NAMESPACE.load(Ordering::Relaxed);
        let plan = SandboxPlan::for_compiler(rlimits, namespace)?;
        match spawn::spawn(&spawn::SpawnRequest {
            program: &program,
            args,
            env: &env,
            plan: &plan,
        }) {
            Err(err) if namespace && err.is_sandbox() => {
                NO_PID_NAMESPACE.store(true, Ordering::Relaxed);
            }
            Err(err) => {
                return Err(io::Error::new(err.error.kind(), err.to_string()));
            }
            Ok(spawned) => break spawned,
        }
    };
    drop(spawned.stdin);
    let pid = spawned.pid;
    let mut outputs: [Option<OwnedFd>; 2] = [Some(spawned.stdout), Some(spawned.stderr)];
    for fd in outputs.iter().flatten() {
        super::set_nonblocking(fd.as_raw_fd());
    }
    let mut captured: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let deadline = start + limits.wall;
    let mut buf = vec![0u8; 64 << 10];
    let mut status = None;
    let mut timed_out = false;
    loop {
        if status.is_none() && !timed_out {
            if super::exited_nowait(pid) {
                // Kill what it left in its group before reaping the leader.
                super::kill_group(pid);
                status = Some(super::wait(pid)?);
            } else if Instant::now() >= deadline {
                super::kill_group(pid);
                super::wait(pid)?;
                timed_out = true;
            }
        }
        let ended = status.is_some() || timed_out;
        let mut pollfds: Vec<libc::pollfd> = outputs
            .iter()
            .flatten()
            .map(|fd| libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        if pollfds.is_empty() {
            if ended {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        // SAFETY: a valid array of its length.
        unsafe { libc::poll(pollfds.as_mut_ptr(), pollfds.len() as libc::nfds_t, 20) };
        for (slot, out) in outputs.iter_mut().zip(captured.iter_mut()) {
            let Some(fd) = slot else { continue };
            let eof = super::drain(fd.as_raw_fd(), &mut buf, |data| {
                let room = limits.capture_bytes.saturating_sub(out.len());
                out.extend_from_slice(&data[..data.len().min(room)]);
            });
            if eof || ended {
                *slot = None;
            }
        }
    }
    let [stdout, stderr] = captured;
    Ok(Contained {
        status: if timed_out { None } else { status },
        stdout,
        stderr,
    })
}

/// `program` as a path: itself when it names a folder, else found on PATH.
pub fn resolve(program: &Path) -> io::Result<std::path::PathBuf> {
    if program.components().count() > 1 {
        return Ok(program.to_path_buf());
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} not found on PATH", program.display()),
            )
        })
}

/// The signal that ended `status`, if any.
pub fn signal_of(status: &ExitStatus) -> Option<i32> {
    status.signal()
}
