//! Running a [`LaunchJob`] in a sandboxed child process, so that a kernel
//! that crashes, hangs, eats memory or misbehaves ends as a failed run while
//! ascendopt goes on.
//!
//! Parent side: [`run_job`] / [`run_job_with`]. Child side: [`worker_main`],
//! the whole of the `ascendopt-worker` binary (and of `ascendopt __worker`).
//!
//! Protocol (see `protocol.rs`): the job goes to the worker's stdin; the
//! reply comes back on a dedicated pipe whose fd number the worker finds in
//! env `ASCENDOPT_WORKER_RESULT_FD`, because the kernel may print to stdout.
//! The worker's stdout and stderr are pipes that the parent drains in the
//! same `poll` loop that feeds stdin and reads the reply (no deadlock
//! whatever the sizes); only their last [`WorkerLimits::capture_bytes`] are
//! kept. Tensor contents do not go through pipes: the parent puts inputs
//! and poisoned outputs in a sealed memfd (the tensor arena, `arena.rs`)
//! that the worker maps and the kernel works on in place; the parent reads
//! the outputs from its own mapping once the worker is gone. Where no memfd
//! can be made they travel as raw bytes after the bincode headers.
//!
//! Sandbox (Linux; `sandbox.rs`, `seccomp.rs`, docs/threat-model.md): the
//! child is cloned straight into its own user (unless root), PID, mount,
//! IPC and network namespaces (`spawn.rs`: it shares the parent's memory
//! until it execs, so no page table of the parent is copied) and, before
//! `exec`, gets a read-only view of the system folders with a private
//! `/tmp` and no `/proc`, uid 65534, no_new_privs, resource limits, a
//! parent-death signal and nothing but the protocol's descriptors. The
//! worker then installs a seccomp filter for the time its libraries load
//! and, once they are loaded, an allow-list without `open`, `exec`,
//! sockets or any way to reach another process (`child.rs`). Where the
//! system refuses the namespaces, a Landlock domain confines the file
//! system instead, and where there is no Landlock either the worker runs
//! with the rest; the first worker below the strongest level says so once
//! on stderr ([`describe_sandbox`]). The parent kills the worker's whole
//! process group (SIGKILL) when it exits or [`WorkerLimits::wall_ms`]
//! passes; in its PID namespace, the death of its init ends every process
//! in it. The kernel's refused system calls end the worker with SIGSYS and
//! a line naming the call ([`WorkerOutcome::Crashed`]'s `location`).
//!
//! The work folder (`ascendopt-worker-<pid>-...` under the temp dir) is
//! the mount point of the new root, or the worker's writable folder
//! without namespaces; it is deleted afterwards, and the first worker of a
//! process deletes those of processes that are gone.
//!
//! Crash locations: the worker installs handlers for SIGSEGV, SIGBUS,
//! SIGFPE and SIGILL that print the faulting library and offset before the
//! worker dies of the signal; the parent maps that to a function and
//! `file:line` with `addr2line` when the library is the job's kernel or host
//! library (see `crash.rs`), in [`WorkerOutcome::Crashed`]'s `location`.
//!
//! Invariants: [`run_job`] never panics and never returns an error type:
//! every failure of the child is a [`WorkerOutcome`]. Kernel code never runs
//! in the calling process.

mod arena;
mod child;
mod confinement;
pub mod contained;
mod crash;
mod protocol;
mod sandbox;
mod seccomp;
mod spawn;

pub use child::worker_main;
pub use confinement::describe as describe_sandbox;
pub use sandbox::Level as SandboxLevel;

use crate::launch::{LaunchFailure, LaunchJob, LaunchOutput};
use protocol::Reply;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Limits of one worker run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerLimits {
    /// Wall-clock limit; the process group is killed after it.
    pub wall_ms: u64,
    /// CPU-time limit (RLIMIT_CPU), seconds.
    pub cpu_seconds: u64,
    /// Virtual memory limit (RLIMIT_AS), bytes.
    pub address_space_bytes: u64,
    /// Largest file the worker may write (RLIMIT_FSIZE), bytes.
    pub file_size_bytes: u64,
    /// Open file descriptors (RLIMIT_NOFILE).
    pub open_files: u64,
    /// How much of the end of stdout and of stderr is kept.
    pub capture_bytes: usize,
    /// A reply larger than this is a protocol error.
    pub max_reply_bytes: u64,
}

impl WorkerLimits {
    /// 60 s wall, 120 s CPU, 4 GiB address space, 16 MiB files, 256 fds,
    /// 64 KiB of stdout/stderr, 4 GiB reply.
    pub fn standard() -> WorkerLimits {
        WorkerLimits {
            wall_ms: 60_000,
            cpu_seconds: 120,
            address_space_bytes: 4 << 30,
            file_size_bytes: 16 << 20,
            open_files: 256,
            capture_bytes: 64 << 10,
            max_reply_bytes: 4 << 30,
        }
    }
}

/// Which limit stopped a run that took too long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeLimit {
    /// [`WorkerLimits::wall_ms`].
    Wall,
    /// [`WorkerLimits::cpu_seconds`] (SIGXCPU / SIGKILL from the kernel).
    Cpu,
}

/// How a worker run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerOutcome {
    /// The launch ran to the end.
    Finished(LaunchOutput),
    /// The runtime reported a fault (or the tiling/loading failed).
    Failed(LaunchFailure),
    /// The worker died of a signal (SIGSEGV, SIGABRT, SIGXFSZ for a file
    /// over the size limit, ...).
    Crashed {
        /// Signal number.
        signal: i32,
        /// Its name, e.g. `SIGSEGV`.
        signal_name: String,
        /// Where it happened, for SIGSEGV/SIGBUS/SIGFPE/SIGILL: function and
        /// `file:line` when the kernel or host library has line tables
        /// (`-g1`), else `library+offset`.
        location: Option<String>,
        /// The end of the worker's stderr.
        stderr_tail: String,
    },
    /// A time limit stopped it.
    TimedOut {
        /// Wall time when it was stopped.
        after_ms: u64,
        /// Which limit.
        limit: TimeLimit,
        /// The end of the worker's stderr.
        stderr_tail: String,
    },
    /// An allocation failed under the address-space limit (told apart by
    /// the abort message of Rust's allocator or of C++'s `std::bad_alloc`;
    /// a kernel that dereferences a failed `malloc` shows as `Crashed`).
    OutOfMemory {
        /// The end of the worker's stderr.
        stderr_tail: String,
    },
    /// The worker exited without sending a result (the kernel called
    /// `exit`?).
    Exited {
        /// Exit code.
        code: i32,
        /// The end of the worker's stderr.
        stderr_tail: String,
    },
    /// The worker could not be started or did not follow the protocol.
    WorkerError {
        /// What went wrong.
        message: String,
    },
}

impl WorkerOutcome {
    /// One line for a person.
    pub fn summary(&self) -> String {
        match self {
            WorkerOutcome::Finished(_) => "finished".into(),
            WorkerOutcome::Failed(failure) => format!("failed: {failure}"),
            WorkerOutcome::Crashed {
                signal_name,
                location,
                ..
            } => match (signal_name.as_str(), location) {
                ("SIGXFSZ", _) => "crashed: wrote a file larger than the limit (SIGXFSZ)".into(),
                ("SIGSYS", Some(call)) => {
                    format!("stopped by the sandbox: the kernel made a {call} (SIGSYS)")
                }
                (name, Some(location)) => format!("crashed ({name}) in {location}"),
                (name, None) => format!("crashed ({name})"),
            },
            WorkerOutcome::TimedOut {
                after_ms, limit, ..
            } => match limit {
                TimeLimit::Wall => format!("timed out after {after_ms} ms"),
                TimeLimit::Cpu => format!("CPU time limit exceeded after {after_ms} ms"),
            },
            WorkerOutcome::OutOfMemory { .. } => "out of memory".into(),
            WorkerOutcome::Exited { code, .. } => {
                format!("exited with code {code} without a result")
            }
            WorkerOutcome::WorkerError { message } => format!("worker error: {message}"),
        }
    }
}

/// What confinement the worker actually got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxStatus {
    /// The level it ran at (None: it never started).
    pub level: Option<SandboxLevel>,
    /// The worker had a private network namespace.
    pub network_isolated: bool,
    /// A user namespace was created for it (not running as root).
    pub user_namespace: bool,
    /// The seccomp filters (no new processes, the allow-list) were
    /// installed: always on x86_64 and aarch64, where the worker refuses
    /// to run without them.
    pub processes_blocked: bool,
}

impl SandboxStatus {
    fn none() -> SandboxStatus {
        SandboxStatus {
            level: None,
            network_isolated: false,
            user_namespace: false,
            processes_blocked: false,
        }
    }

    fn at(level: SandboxLevel) -> SandboxStatus {
        let namespaces = level == SandboxLevel::Namespaces;
        SandboxStatus {
            level: Some(level),
            network_isolated: namespaces,
            // SAFETY: a plain query.
            user_namespace: namespaces && unsafe { libc::geteuid() } != 0,
            processes_blocked: seccomp::filters_available(),
        }
    }
}

/// A worker run with everything observed about it.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerReport {
    /// How it ended.
    pub outcome: WorkerOutcome,
    /// The confinement it got (all false if it never started).
    pub sandbox: SandboxStatus,
    /// Wall time from spawn to the end of the run.
    pub wall_ms: u64,
    /// The end of what the worker wrote to stdout.
    pub stdout_tail: String,
    /// The end of what the worker wrote to stderr.
    pub stderr_tail: String,
    /// The private working directory (already deleted).
    pub work_dir: PathBuf,
}

/// How to start a worker process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments (`["__worker"]` for the ascendopt CLI).
    pub args: Vec<OsString>,
}

/// No worker executable could be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WorkerNotFound {
    /// What was tried and how to fix it.
    pub message: String,
}

/// Set once by an executable that serves `__worker` itself (the CLI).
static SELF_HOSTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Declares that the running executable answers `<exe> __worker` with
/// [`worker_main`], so [`WorkerCommand::locate`] uses it whatever its file
/// name (a renamed or copied `ascendopt` binary keeps working).
pub fn serve_worker_from_this_executable() {
    SELF_HOSTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

impl WorkerCommand {
    /// Env `ASCENDOPT_WORKER` (a path); else the current executable with
    /// `__worker` if it serves the worker ([`serve_worker_from_this_executable`])
    /// or is named `ascendopt`; else `ascendopt-worker` next to the
    /// current executable or in its parent directory (where cargo puts
    /// binaries when the current one is a test in `target/<profile>/deps`).
    pub fn locate() -> Result<WorkerCommand, WorkerNotFound> {
        locate_with(
            std::env::var_os("ASCENDOPT_WORKER"),
            std::env::current_exe(),
            SELF_HOSTED.load(std::sync::atomic::Ordering::Relaxed),
        )
    }
}

/// [`WorkerCommand::locate`] with the environment passed in.
fn locate_with(
    env_worker: Option<OsString>,
    current_exe: io::Result<PathBuf>,
    self_hosted: bool,
) -> Result<WorkerCommand, WorkerNotFound> {
    if let Some(path) = env_worker.filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        if path.is_file() {
            return Ok(WorkerCommand {
                program: std::path::absolute(&path).unwrap_or(path),
                args: Vec::new(),
            });
        }
        return Err(WorkerNotFound {
            message: format!("ASCENDOPT_WORKER={} is not a file", path.display()),
        });
    }
    let exe = current_exe.map_err(|e| WorkerNotFound {
        message: format!("cannot find the current executable ({e}); set ASCENDOPT_WORKER"),
    })?;
    if self_hosted || exe.file_stem().and_then(|s| s.to_str()) == Some("ascendopt") {
        return Ok(WorkerCommand {
            program: exe,
            args: vec!["__worker".into()],
        });
    }
    let name = format!("ascendopt-worker{}", std::env::consts::EXE_SUFFIX);
    let dir = exe.parent().unwrap_or(Path::new("."));
    for candidate in [Some(dir.join(&name)), dir.parent().map(|p| p.join(&name))]
        .into_iter()
        .flatten()
    {
        if candidate.is_file() {
            return Ok(WorkerCommand {
                program: candidate,
                args: Vec::new(),
            });
        }
    }
    Err(WorkerNotFound {
        message: format!(
            "{name} not found next to {} or in its parent directory: build it with \
             `cargo build -p ascendopt-sim --bin ascendopt-worker`, or set ASCENDOPT_WORKER",
            exe.display()
        ),
    })
}

/// Runs `job` in a worker found by [`WorkerCommand::locate`].
pub fn run_job(job: &LaunchJob, limits: &WorkerLimits) -> WorkerOutcome {
    match WorkerCommand::locate() {
        Ok(command) => run_job_with(&command, job, limits).outcome,
        Err(err) => WorkerOutcome::WorkerError {
            message: err.to_string(),
        },
    }
}

/// Why a host library's OpDefs could not be described.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DescribeError {
    /// The worker finished without a description.
    #[error("the worker sent no description")]
    NoDescription,
    /// The worker did not finish (crash, fault, time-out, refusal).
    #[error("{}", .0.summary())]
    Unfinished(Box<WorkerOutcome>),
    /// The description does not parse or names no usable OpDef.
    #[error(transparent)]
    OpDef(#[from] ascendopt_op::opdef::OpDefError),
}

/// The JSON description of the OpDefs a host library registers
/// (`ascendopt_host_describe`), computed in a worker: building an OpDef
/// runs the user's constructor, so it is confined like any launch.
pub fn describe_host(
    host_lib: &std::path::Path,
    limits: &WorkerLimits,
) -> Result<String, DescribeError> {
    let job = LaunchJob {
        host_lib: host_lib.to_path_buf(),
        kernel_lib: host_lib.to_path_buf(),
        kernel_name: String::new(),
        op_type: None,
        inputs: Vec::new(),
        outputs: Vec::new(),
        attrs: Vec::new(),
        platform: crate::launch::Platform {
            soc_version: String::new(),
            core_num_aiv: 0,
            core_num_aic: 0,
            ub_size: 0,
            l1_size: 0,
            l0a_size: 0,
            l0b_size: 0,
            l0c_size: 0,
            l2_size: 0,
            hbm_size: 0,
        },
        seed: 0,
        max_instrs_per_block: 0,
        knobs: Vec::new(),
        check_in_worker: false,
        tiling_only: true,
        layout: None,
        describe: true,
    };
    match run_job(&job, limits) {
        WorkerOutcome::Finished(out) => out.description.ok_or(DescribeError::NoDescription),
        other => Err(DescribeError::Unfinished(Box::new(other))),
    }
}

/// Like [`run_job`] with the tensor contents borrowed from the caller
/// instead of copied into `job`: `job`'s tensors give dtypes and shapes
/// (their `data` is ignored), `inputs[i]` and `outputs[i]` their bytes.
/// Saves a copy of every tensor per launch.
pub fn run_job_borrowed(
    job: &LaunchJob,
    inputs: &[&[u8]],
    outputs: &[&[u8]],
    limits: &WorkerLimits,
) -> WorkerOutcome {
    match WorkerCommand::locate() {
        Ok(command) => run_job_inner(&command, job, Some((inputs, outputs)), limits).outcome,
        Err(err) => WorkerOutcome::WorkerError {
            message: err.to_string(),
        },
    }
}

/// Runs `job` in a worker started with `command`.
pub fn run_job_with(
    command: &WorkerCommand,
    job: &LaunchJob,
    limits: &WorkerLimits,
) -> WorkerReport {
    run_job_inner(command, job, None, limits)
}

/// Tensor contents given apart from the job: inputs, outputs.
type Bulk<'a> = (&'a [&'a [u8]], &'a [&'a [u8]]);

fn run_job_inner(
    command: &WorkerCommand,
    job: &LaunchJob,
    bulk: Option<Bulk<'_>>,
    limits: &WorkerLimits,
) -> WorkerReport {
    let start = Instant::now();
    let work_dir = match make_work_dir() {
        Ok(dir) => dir,
        Err(err) => {
            return not_started(
                start,
                PathBuf::new(),
                format!("cannot create a work directory: {err}"),
            )
        }
    };
    let report = run_in(command, job, bulk, limits, &work_dir, start);
    let _ = std::fs::remove_dir_all(&work_dir);
    report
}

fn not_started(start: Instant, work_dir: PathBuf, message: String) -> WorkerReport {
    WorkerReport {
        outcome: WorkerOutcome::WorkerError { message },
        sandbox: SandboxStatus::none(),
        wall_ms: elapsed_ms(start),
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        work_dir,
    }
}

fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

static WORK_DIR_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Prefix of the work folders of workers.
const WORK_DIR_PREFIX: &str = "ascendopt-worker-";

/// A fresh private (0700) directory under the system temp dir, owned by
/// the worker's uid when we are root (the worker drops to it). The first
/// call of a process removes the folders left by processes that are gone
/// (a killed ascendopt cannot clean up after itself).
fn make_work_dir() -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    static CLEANED: std::sync::Once = std::sync::Once::new();
    CLEANED.call_once(|| remove_stale_work_dirs(&std::env::temp_dir()));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "{WORK_DIR_PREFIX}{}-{}-{nanos}",
        std::process::id(),
        WORK_DIR_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    // SAFETY: a plain query.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&dir, Some(sandbox::WORKER_ID), Some(sandbox::WORKER_ID))?;
    }
    Ok(dir)
}

/// Removes `ascendopt-worker-<pid>-*` folders under `tmp` whose process no
/// longer exists.
fn remove_stale_work_dirs(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(WORK_DIR_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest
            .split('-')
            .next()
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid > 0 && !process_exists(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether a process `pid` exists (signal 0 reaches it or is refused).
fn process_exists(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A pipe whose both ends are close-on-exec: (read, write).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills two fds on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Asks for a 1 MiB pipe buffer (fewer wake-ups for big tensors); ignored
/// when the system refuses.
fn grow_pipe(fd: RawFd) {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, 1 << 20);
    }
}

/// The last `cap` bytes of a stream.
struct Tail {
    bytes: Vec<u8>,
    cap: usize,
    total: u64,
}

impl Tail {
    fn new(cap: usize) -> Tail {
        Tail {
            bytes: Vec::new(),
            cap,
            total: 0,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > self.cap.saturating_mul(2).max(4096) {
            let cut = self.bytes.len() - self.cap;
            self.bytes.drain(..cut);
        }
    }

    fn text(&self) -> String {
        let start = self.bytes.len().saturating_sub(self.cap);
        let text = String::from_utf8_lossy(&self.bytes[start..]).into_owned();
        let kept = (self.bytes.len() - start) as u64;
        if self.total > kept {
            format!("[... {} bytes cut]\n{text}", self.total - kept)
        } else {
            text
        }
    }
}

/// Where the reply bytes go.
struct ReplyBuf {
    bytes: Vec<u8>,
    max: u64,
    overflow: bool,
}

/// Whether the child has exited, without reaping it (so its process group
/// stays reserved until we kill it).
fn exited_nowait(pid: libc::pid_t) -> bool {
    // SAFETY: waitid with a zeroed siginfo; WNOWAIT leaves the child alone.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let rc = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        // ECHILD: someone else reaped it (SIGCHLD ignored by the embedder).
        (rc == 0 && info.si_pid() != 0)
            || (rc != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
    }
}

fn kill_group(pid: libc::pid_t) {
    // SAFETY: signals the worker's own process group (pgid == its pid).
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
    }
}

/// Everything the I/O loop collected.
struct Collected {
    status: Option<ExitStatus>,
    timed_out: bool,
    stdout: Tail,
    stderr: Tail,
    reply: ReplyBuf,
    wait_error: Option<String>,
}

fn run_in(
    command: &WorkerCommand,
    job: &LaunchJob,
    bulk: Option<Bulk<'_>>,
    limits: &WorkerLimits,
    work_dir: &Path,
    start: Instant,
) -> WorkerReport {
    let fail = |message: String| not_started(start, work_dir.to_path_buf(), message);
    let owned: (Vec<&[u8]>, Vec<&[u8]>);
    let (inputs, outputs): (&[&[u8]], &[&[u8]]) = match bulk {
        Some(parts) => parts,
        None => {
            owned = (
                job.inputs.iter().map(|t| t.data.as_slice()).collect(),
                job.outputs.iter().map(|t| t.data.as_slice()).collect(),
            );
            (&owned.0, &owned.1)
        }
    };
    // Tensors go through the arena; through the pipe only when no arena
    // can be made (no memfd on this system).
    let arena = fill_arena(inputs, outputs);
    let encoded = protocol::encode_job_parts(job, inputs, outputs, arena.is_some());
    let encoded = match encoded {
        Ok(encoded) => encoded,
        Err(err) => return fail(err.to_string()),
    };
    let (reply_read, reply_write) = match pipe() {
        Ok(p) => p,
        Err(err) => return fail(format!("cannot create a pipe: {err}")),
    };
    grow_pipe(reply_write.as_raw_fd());
    let (exit_read, exit_write) = match pipe() {
        Ok(p) => p,
        Err(err) => return fail(format!("cannot create a pipe: {err}")),
    };
    let mut env = vec![
        ("PATH", "/usr/bin:/bin".to_string()),
        // glibc reserves 64 MiB of address space per malloc arena, up to 8
        // per core; with one thread per block that would eat the RLIMIT_AS
        // budget on a big machine.
        ("MALLOC_ARENA_MAX", "4".to_string()),
        // glibc opens /proc/sys/vm/overcommit_memory the first time it
        // would give a thread arena's memory back to the system, which the
        // sealed worker may not: it keeps its memory instead (it lives for
        // one launch).
        ("MALLOC_TRIM_THRESHOLD_", (1u64 << 40).to_string()),
        ("LC_ALL", "C".to_string()),
        (child::RESULT_FD_ENV, sandbox::RESULT_FD.to_string()),
        (
            arena::ARENA_FD_ENV,
            if arena.is_some() {
                sandbox::ARENA_FD.to_string()
            } else {
                "-1".to_string()
            },
        ),
        (child::EXIT_FD_ENV, sandbox::EXIT_FD.to_string()),
    ];
    if !job.knobs.is_empty() {
        env.push((
            crate::launch::HOST_KNOBS_ENV,
            crate::launch::knobs_env_value(&job.knobs),
        ));
    }
    let libraries: Vec<&Path> = [job.kernel_lib.as_path(), job.host_lib.as_path()]
        .into_iter()
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    // A library of the build cache is loaded only as it was built.
    for lib in &libraries {
        if let Err(message) = crate::build::integrity::check_before_load(lib) {
            return fail(format!("refused to load a library: {message}"));
        }
    }
    let exposed = sandbox::Exposed {
        program: &command.program,
        libraries,
    };
    let rlimits = sandbox::Rlimits {
        address_space: limits.address_space_bytes,
        cpu_seconds: limits.cpu_seconds.max(1),
        file_size: limits.file_size_bytes,
        open_files: limits.open_files.max(16),
        processes: Some(u64::from(crate::launch::MAX_BLOCK_DIM) + 64),
    };
    let pass = [
        reply_write.as_raw_fd(),
        arena.as_ref().map_or(-1, |a| a.fd()),
        exit_write.as_raw_fd(),
    ];
    // The strongest level this system allows, found by trying (and
    // remembered: a level that failed once is not tried again).
    let mut level = confinement::start_level();
    let (spawned, level) = loop {
        let scratch_dir = if level == sandbox::Level::Namespaces {
            "/tmp".to_string()
        } else {
            work_dir.to_string_lossy().into_owned()
        };
        let mut env = env.clone();
        env.push(("HOME", scratch_dir.clone()));
        env.push(("TMPDIR", scratch_dir));
        let plan = match sandbox::SandboxPlan::new(
            level,
            rlimits,
            work_dir,
            &exposed,
            limits.file_size_bytes.saturating_mul(4),
            pass,
        ) {
            Ok(plan) => plan,
            Err(err) => match level.weaker() {
                Some(weaker) => {
                    confinement::fell_back(level, weaker, &err.to_string());
                    level = weaker;
                    continue;
                }
                None => return fail(format!("cannot prepare the sandbox: {err}")),
            },
        };
        let spawned = spawn::spawn(&spawn::SpawnRequest {
            program: &command.program,
            args: &command.args,
            env: &env,
            plan: &plan,
        });
        match spawned {
            Err(err) if err.is_sandbox() => match level.weaker() {
                Some(weaker) => {
                    confinement::fell_back(level, weaker, &err.to_string());
                    level = weaker;
                }
                None => break (Err(err), level),
            },
            other => break (other, level),
        }
    };
    // Our copies of the child's ends.
    drop(reply_write);
    drop(exit_write);
    let child = match spawned {
        Ok(child) => child,
        Err(err) => {
            return fail(format!(
                "cannot start the worker {}: {err}",
                command.program.display()
            ))
        }
    };
    confinement::started(level);
    let sandbox = SandboxStatus::at(level);

    let mut collected = pump(child, &encoded, reply_read, limits, start);
    // In its own PID namespace the worker is started by an init of ours
    // that reports how the worker itself ended.
    if let Some(status) = read_exit_status(&exit_read) {
        if !collected.timed_out {
            collected.status = Some(status);
        }
    }
    drop(exit_read);
    let wall_ms = elapsed_ms(start);
    let stdout_tail = collected.stdout.text();
    let stderr_tail = collected.stderr.text();
    let libraries = [job.kernel_lib.as_path(), job.host_lib.as_path()];
    // The worker is gone: the arena's output regions are final.
    let arena_outputs: Option<Vec<&[u8]>> = arena
        .as_ref()
        .map(|a| (inputs.len()..a.count()).map(|i| a.region(i)).collect());
    let outcome = classify(
        &collected,
        &stderr_tail,
        wall_ms,
        &libraries,
        arena_outputs.as_deref(),
    );
    let outcome = check_slack(outcome, arena.as_ref(), inputs.len());
    // Kept for the next launch only when the worker was reaped: no process
    // maps it any more.
    if let (Some(arena), Some(_)) = (arena, collected.status) {
        ARENAS.with(|kept| {
            let mut kept = kept.borrow_mut();
            kept.insert(0, arena);
            kept.truncate(KEPT_ARENAS);
        });
    }
    WorkerReport {
        outcome,
        sandbox,
        wall_ms,
        stdout_tail,
        stderr_tail,
        work_dir: work_dir.to_path_buf(),
    }
}

/// The wait status the worker's init reported on the exit pipe, if any.
fn read_exit_status(fd: &OwnedFd) -> Option<ExitStatus> {
    set_nonblocking(fd.as_raw_fd());
    let mut bytes = [0u8; 4];
    // SAFETY: reads into a 4-byte local from a pipe we own; every writer
    // is gone (the worker was reaped).
    let n = unsafe { libc::read(fd.as_raw_fd(), bytes.as_mut_ptr().cast(), 4) };
    (n == 4).then(|| ExitStatus::from_raw(i32::from_ne_bytes(bytes)))
}

/// Feeds the job, drains stdout/stderr/reply, enforces the wall limit, kills
/// the process group at the end and reaps the child.
fn pump(
    child: spawn::Spawned,
    encoded: &protocol::EncodedJob<'_>,
    reply_read: OwnedFd,
    limits: &WorkerLimits,
    start: Instant,
) -> Collected {
    let pid = child.pid;
    let deadline = start + Duration::from_millis(limits.wall_ms);
    let grace = Duration::from_millis(500);
    let mut stdin: Option<OwnedFd> = Some(child.stdin);
    let mut stdout: Option<OwnedFd> = Some(child.stdout);
    let mut stderr: Option<OwnedFd> = Some(child.stderr);
    let mut reply_fd = Some(reply_read);
    for fd in [&stdin, &stdout, &stderr, &reply_fd].into_iter().flatten() {
        set_nonblocking(fd.as_raw_fd());
    }
    if let Some(fd) = &stdin {
        grow_pipe(fd.as_raw_fd());
    }
    let mut out = Collected {
        status: None,
        timed_out: false,
        stdout: Tail::new(limits.capture_bytes),
        stderr: Tail::new(limits.capture_bytes),
        reply: ReplyBuf {
            bytes: Vec::new(),
            max: limits.max_reply_bytes,
            overflow: false,
        },
        wait_error: None,
    };
    let segments: Vec<&[u8]> = std::iter::once(encoded.head.as_slice())
        .chain(encoded.bulk.iter().copied())
        .filter(|s| !s.is_empty())
        .collect();
    let (mut seg_idx, mut seg_off) = (0usize, 0usize);
    let mut buf = vec![0u8; 256 << 10];
    let mut ended_at: Option<Instant> = None;

    loop {
        let now = Instant::now();
        if ended_at.is_none() {
            let exited = exited_nowait(pid);
            if exited || now >= deadline {
                out.timed_out = !exited;
                // Kill leftovers while the leader still holds the group id.
                kill_group(pid);
                match wait(pid) {
                    Ok(status) => out.status = Some(status),
                    Err(err) => out.wait_error = Some(err.to_string()),
                }
                stdin = None;
                ended_at = Some(now);
            }
        }
        let readers_open = stdout.is_some() || stderr.is_some() || reply_fd.is_some();
        if let Some(ended) = ended_at {
            if !readers_open || now >= ended + grace {
                break;
            }
        }
        if stdin.is_some() && seg_idx >= segments.len() {
            stdin = None; // all written: EOF for the worker
        }

        let mut pollfds: Vec<libc::pollfd> = Vec::with_capacity(4);
        let mut roles: Vec<u8> = Vec::with_capacity(4);
        for (role, fd, events) in [
            (0u8, &stdin, libc::POLLOUT),
            (1, &stdout, libc::POLLIN),
            (2, &stderr, libc::POLLIN),
            (3, &reply_fd, libc::POLLIN),
        ] {
            if let Some(fd) = fd {
                pollfds.push(libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events,
                    revents: 0,
                });
                roles.push(role);
            }
        }
        let limit = match ended_at {
            Some(ended) => (ended + grace).saturating_duration_since(now),
            None => deadline.saturating_duration_since(now),
        };
        // Wake up now and then to notice an exit whose pipes stay open
        // elsewhere; pipes closing wake us up at once in the common case.
        let tick = if pollfds.is_empty() { 5 } else { 50 };
        let timeout_ms = limit.as_millis().min(tick) as libc::c_int;
        // SAFETY: pollfds is a valid array of its length.
        let rc = unsafe {
            libc::poll(
                pollfds.as_mut_ptr(),
                pollfds.len() as libc::nfds_t,
                timeout_ms,
            )
        };
        if rc <= 0 {
            continue;
        }
        for (pfd, role) in pollfds.iter().zip(&roles) {
            if pfd.revents == 0 {
                continue;
            }
            match role {
                0 => {
                    let mut close = pfd.revents & (libc::POLLERR | libc::POLLHUP) != 0;
                    while !close && seg_idx < segments.len() {
                        let seg = &segments[seg_idx][seg_off..];
                        // SAFETY: writes from a valid slice.
                        let n = unsafe { libc::write(pfd.fd, seg.as_ptr().cast(), seg.len()) };
                        if n < 0 {
                            let err = io::Error::last_os_error();
                            if err.kind() != io::ErrorKind::WouldBlock
                                && err.kind() != io::ErrorKind::Interrupted
                            {
                                close = true; // EPIPE: the worker is gone
                            }
                            break;
                        }
                        seg_off += n as usize;
                        if seg_off == segments[seg_idx].len() {
                            seg_idx += 1;
                            seg_off = 0;
                        }
                    }
                    if close || seg_idx >= segments.len() {
                        stdin = None;
                    }
                }
                _ => {
                    let eof = drain(pfd.fd, &mut buf, |data| match role {
                        1 => out.stdout.push(data),
                        2 => out.stderr.push(data),
                        _ => {
                            if out.reply.bytes.len() as u64 + data.len() as u64 > out.reply.max {
                                out.reply.overflow = true;
                            } else {
                                out.reply.bytes.extend_from_slice(data);
                            }
                        }
                    });
                    let overflow = *role == 3 && out.reply.overflow;
                    if eof || overflow {
                        match role {
                            1 => stdout = None,
                            2 => stderr = None,
                            _ => reply_fd = None,
                        }
                    }
                }
            }
        }
    }
    if ended_at.is_none() {
        kill_group(pid);
        let _ = wait(pid);
    }
    out
}

thread_local! {
    /// Arenas of this thread's recent launches, newest first. Each
    /// evaluation launches the same cases again, so an arena of the right
    /// size is usually at hand and its pages need not be allocated and
    /// zeroed again (a large case's arena is hundreds of megabytes).
    static ARENAS: std::cell::RefCell<Vec<arena::Arena>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Arenas kept per thread.
const KEPT_ARENAS: usize = 8;

/// A tensor arena holding `inputs` then `outputs` (a kept one of the right
/// size, or a new one), or None when the system cannot make one.
fn fill_arena(inputs: &[&[u8]], outputs: &[&[u8]]) -> Option<arena::Arena> {
    let lens: Vec<usize> = inputs.iter().chain(outputs).map(|d| d.len()).collect();
    let kept = ARENAS.with(|kept| {
        let mut kept = kept.borrow_mut();
        let i = kept.iter_mut().position(|a| a.relayout(&lens))?;
        Some(kept.remove(i))
    });
    let mut arena = match kept {
        Some(arena) => arena,
        None => arena::Arena::create(&lens).ok()?,
    };
    for (i, data) in inputs.iter().chain(outputs).enumerate() {
        arena.region_mut(i).copy_from_slice(data);
    }
    arena.arm(canary());
    Some(arena)
}

/// The byte the arena's slack holds during a launch: one per process, not
/// known to a kernel built in advance (a kernel that learns it at run time
/// and writes it back gains nothing: the slack is no other tensor's).
fn canary() -> u8 {
    static CANARY: std::sync::OnceLock<u8> = std::sync::OnceLock::new();
    *CANARY.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        // Never 0 (what an untouched page holds).
        (nanos.wrapping_mul(2_654_435_761) >> 24) as u8 | 1
    })
}

/// A finished launch whose kernel wrote into an arena region's slack
/// (past the device allocator's padding; [`arena::Arena::damage`]) is a
/// failed one, naming the tensor and the offset.
fn check_slack(
    outcome: WorkerOutcome,
    arena: Option<&arena::Arena>,
    inputs: usize,
) -> WorkerOutcome {
    let (WorkerOutcome::Finished(_), Some(arena)) = (&outcome, arena) else {
        return outcome;
    };
    let Some((region, offset, changed)) = arena.damage(canary()) else {
        return outcome;
    };
    let name = if region < inputs {
        format!("input {region}")
    } else {
        format!("output {}", region - inputs)
    };
    let len = arena.region(region).len();
    WorkerOutcome::Failed(LaunchFailure::Fault {
        block: 0,
        message: format!(
            "(which block is not known) the kernel wrote {changed} byte(s) past `{name}` ({len} \
             bytes), from byte {offset}, past the {} bytes the device allocator gives it: a store \
             that no instrumentation saw accesses GM bytes outside any allocation",
            crate::runtime::gm::device_span(len)
        ),
        loc: None,
    })
}

/// Reaps the worker `pid`.
fn wait(pid: libc::pid_t) -> io::Result<ExitStatus> {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return Ok(ExitStatus::from_raw(status));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reads what is available; true at end of file (or on an error).
fn drain(fd: RawFd, buf: &mut [u8], mut sink: impl FnMut(&[u8])) -> bool {
    loop {
        // SAFETY: reads into a valid buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            sink(&buf[..n as usize]);
            continue;
        }
        if n == 0 {
            return true;
        }
        let err = io::Error::last_os_error();
        return match err.kind() {
            io::ErrorKind::WouldBlock => false,
            io::ErrorKind::Interrupted => continue,
            _ => true,
        };
    }
}

/// Whether stderr shows a failed allocation.
fn looks_out_of_memory(stderr: &str) -> bool {
    stderr.contains("memory allocation of")
        || stderr.contains("std::bad_alloc")
        || stderr.contains("Cannot allocate memory")
        || stderr.contains("out of memory")
}

fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGSYS => "SIGSYS",
        libc::SIGTRAP => "SIGTRAP",
        other => return format!("signal {other}"),
    };
    name.to_string()
}

/// A fault located by a code address (a plain C++ access of the kernel's
/// own code, `runtime::table::CODE_ADDRESS`) gets the kernel's `file:line`
/// from the library's line tables: the innermost frame of the inlining
/// chain outside any `include` folder (the simulator's headers and the
/// system's), so `zGm(i) = 1` names the kernel's line, not the header's
/// `operator()`.
fn resolve_code_address(failure: LaunchFailure, libraries: &[&Path]) -> LaunchFailure {
    let LaunchFailure::Fault {
        block,
        message,
        loc: Some(mut loc),
    } = failure
    else {
        return failure;
    };
    let code = loc
        .file
        .strip_prefix(crate::runtime::table::CODE_ADDRESS)
        .and_then(|rest| rest.rsplit_once("+0x"))
        .and_then(|(object, offset)| Some((object, u64::from_str_radix(offset, 16).ok()?)));
    if let Some((object, offset)) = code {
        match crash::source_line(object, offset, libraries, "/include/") {
            Some((file, line, function)) => {
                loc.file = file;
                loc.line = line;
                loc.api = format!("kernel code of {function}");
            }
            None => loc.file = format!("{object}+0x{offset:x}"),
        }
    }
    LaunchFailure::Fault {
        block,
        message,
        loc: Some(loc),
    }
}

fn classify(
    collected: &Collected,
    stderr_tail: &str,
    wall_ms: u64,
    libraries: &[&Path],
    arena_outputs: Option<&[&[u8]]>,
) -> WorkerOutcome {
    let stderr_tail = stderr_tail.to_string();
    if collected.timed_out {
        return WorkerOutcome::TimedOut {
            after_ms: wall_ms,
            limit: TimeLimit::Wall,
            stderr_tail,
        };
    }
    // A complete reply wins: the launch is over even if teardown went wrong.
    let mut decode_error = None;
    if !collected.reply.bytes.is_empty() && !collected.reply.overflow {
        match protocol::decode_reply(&collected.reply.bytes, arena_outputs) {
            Err(err) => decode_error = Some(err.to_string()),
            Ok(reply) => {
                return match reply {
                    Reply::Launch(Ok(output)) => WorkerOutcome::Finished(output),
                    Reply::Launch(Err(failure)) => {
                        WorkerOutcome::Failed(resolve_code_address(failure, libraries))
                    }
                    Reply::Refused(message) => WorkerOutcome::WorkerError {
                        message: format!("the worker refused the job: {message}"),
                    },
                    Reply::Panicked(message) => WorkerOutcome::WorkerError {
                        message: format!("the simulator panicked: {message}"),
                    },
                }
            }
        }
    }
    let Some(status) = collected.status else {
        return WorkerOutcome::WorkerError {
            message: format!(
                "lost track of the worker: {}",
                collected.wait_error.as_deref().unwrap_or("unknown")
            ),
        };
    };
    if let Some(signal) = status.signal() {
        if signal == libc::SIGXCPU {
            return WorkerOutcome::TimedOut {
                after_ms: wall_ms,
                limit: TimeLimit::Cpu,
                stderr_tail,
            };
        }
        if looks_out_of_memory(&stderr_tail) {
            return WorkerOutcome::OutOfMemory { stderr_tail };
        }
        let location = if signal == libc::SIGSYS {
            crash::forbidden_call(&stderr_tail).map(|call| format!("{}{call}", crash::FORBIDDEN))
        } else {
            crash::locate(&stderr_tail, libraries)
        };
        return WorkerOutcome::Crashed {
            signal,
            signal_name: signal_name(signal),
            location,
            stderr_tail,
        };
    }
    if collected.reply.overflow {
        return WorkerOutcome::WorkerError {
            message: format!("the reply exceeds {} bytes", collected.reply.max),
        };
    }
    let code = status.code().unwrap_or(-1);
    if code == i32::from(child::EXIT_PROTOCOL) {
        return WorkerOutcome::WorkerError {
            message: format!("the worker failed: {}", stderr_tail.trim()),
        };
    }
    if !collected.reply.bytes.is_empty() {
        return WorkerOutcome::WorkerError {
            message: format!(
                "unreadable reply of {} bytes ({}): the worker may be another build of \
                 ascendopt; rebuild it (`cargo build -p ascendopt-sim --bin ascendopt-worker`) \
                 or point ASCENDOPT_WORKER at this build's",
                collected.reply.bytes.len(),
                decode_error.as_deref().unwrap_or("no decodable frame")
            ),
        };
    }
    if looks_out_of_memory(&stderr_tail) {
        return WorkerOutcome::OutOfMemory { stderr_tail };
    }
    WorkerOutcome::Exited { code, stderr_tail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_prefers_the_env_var_then_the_cli_then_a_sibling_binary() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("debug/deps")).unwrap();
        let worker = root.join("debug/ascendopt-worker");
        std::fs::write(&worker, b"").unwrap();
        let test_exe = root.join("debug/deps/worker-0123abcd");

        // The env var wins, and must name a file.
        let found = locate_with(Some(worker.clone().into()), Ok(test_exe.clone()), false).unwrap();
        assert_eq!(found.program, worker);
        assert!(found.args.is_empty());
        let err =
            locate_with(Some(root.join("nope").into()), Ok(test_exe.clone()), false).unwrap_err();
        assert!(err.message.starts_with("ASCENDOPT_WORKER="), "{err}");

        // The CLI is its own worker.
        let cli = root.join("bin/ascendopt");
        let found = locate_with(None, Ok(cli.clone()), false).unwrap();
        assert_eq!(found.program, cli);
        assert_eq!(found.args, vec![OsString::from("__worker")]);
        // A renamed copy of the CLI serves the worker too once it says so.
        let renamed = root.join("bin/ascendopt-2b902db");
        let found = locate_with(None, Ok(renamed.clone()), true).unwrap();
        assert_eq!(found.program, renamed);
        assert_eq!(found.args, vec![OsString::from("__worker")]);
        assert!(locate_with(None, Ok(renamed), false).is_err());

        // A test binary in target/debug/deps finds target/debug/ascendopt-worker;
        // a binary in target/debug finds its sibling.
        let found = locate_with(None, Ok(test_exe), false).unwrap();
        assert_eq!(found.program, worker);
        let found = locate_with(None, Ok(root.join("debug/other-tool")), false).unwrap();
        assert_eq!(found.program, worker);

        // Nothing: say how to build it.
        let err = locate_with(None, Ok(root.join("elsewhere/tool")), false).unwrap_err();
        assert!(
            err.message
                .contains("cargo build -p ascendopt-sim --bin ascendopt-worker"),
            "{err}"
        );
    }

    #[test]
    fn tail_keeps_the_end_and_says_how_much_was_cut() {
        let mut tail = Tail::new(4);
        tail.push(b"hello ");
        tail.push(b"world");
        assert_eq!(tail.text(), "[... 7 bytes cut]\norld");
        let mut short = Tail::new(100);
        short.push(b"ok");
        assert_eq!(short.text(), "ok");
        // Lots of small pushes stay bounded in memory.
        let mut big = Tail::new(10);
        for _ in 0..100_000 {
            big.push(b"0123456789");
        }
        assert!(big.bytes.len() <= 4096 + 10);
        assert!(big.text().ends_with("0123456789"));
    }

    #[test]
    fn summaries_name_the_cause() {
        let crashed = WorkerOutcome::Crashed {
            signal: libc::SIGXFSZ,
            signal_name: signal_name(libc::SIGXFSZ),
            location: None,
            stderr_tail: String::new(),
        };
        assert_eq!(
            crashed.summary(),
            "crashed: wrote a file larger than the limit (SIGXFSZ)"
        );
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(64), "signal 64");
        let timed = WorkerOutcome::TimedOut {
            after_ms: 1200,
            limit: TimeLimit::Wall,
            stderr_tail: String::new(),
        };
        assert_eq!(timed.summary(), "timed out after 1200 ms");
    }

    #[test]
    fn out_of_memory_is_told_apart_by_the_abort_message() {
        assert!(looks_out_of_memory(
            "memory allocation of 4294967296 bytes failed\n"
        ));
        assert!(looks_out_of_memory(
            "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc"
        ));
        assert!(!looks_out_of_memory("Segmentation fault"));
    }
}
