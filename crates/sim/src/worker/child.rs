//! The worker side: read the job from stdin, run it (or only its host
//! tiling, [`LaunchJob::tiling_only`]), write the reply to the
//! result pipe whose fd number is in env [`RESULT_FD_ENV`]. When the job's
//! tensors are in the arena (fd in env [`ARENA_FD_ENV`]), the kernel works
//! on the arena's regions directly and the outputs stay there.
//!
//! Sealing, in this order (see `seccomp.rs` and docs/threat-model.md):
//! 1. started as PID 1 of its own PID namespace, the worker forks itself:
//!    the first process stays as the namespace's init, waits for the
//!    second and reports its wait status on the pipe in env
//!    [`EXIT_FD_ENV`] (the second closes its copy, so a kernel cannot
//!    forge it); the second is the worker, an ordinary process whose
//!    signals behave as they should;
//! 2. the crash reporter, then the loading filter (no exec, no new
//!    process, no signal to anyone else, no ptrace, no mount, ...);
//! 3. the job is read and the host and kernel libraries are loaded (their
//!    static constructors run here, under the loading filter and the
//!    namespaces);
//! 4. the sealed filter, an allow-list without `open` or any other way to
//!    reach a file or another process; then the launch.
//!
//! Hidden self-test jobs (for the sandbox tests; `kernel_name` starting with
//! `__selftest:`), handled here instead of by `launch::run`:
//! - `__selftest:echo` — returns the input tensors as outputs;
//! - `__selftest:call:<symbol>` — loads `kernel_lib` and calls
//!   `extern "C" long <symbol>(unsigned long seed)`, returning its result as
//!   one 8-byte little-endian output (tests compile misbehaving C functions);
//! - `__selftest:fail` — returns a `LaunchFailure::Fault`;
//! - `__selftest:alloc` — allocates until Rust's allocator gives up (as the
//!   runtime would when a trace grows without bound);
//! - `__selftest:panic` — panics inside the worker.

use super::arena::{Arena, ARENA_FD_ENV};
use super::protocol::{self, Reply};
use crate::launch::{LaunchFailure, LaunchJob, LaunchOutput, TensorMemory, TilingInfo};
use std::fs::File;
use std::io::{self, BufReader, BufWriter};
use std::os::fd::FromRawFd;
use std::process::ExitCode;

/// Env var naming the fd of the result pipe.
pub(crate) const RESULT_FD_ENV: &str = "ASCENDOPT_WORKER_RESULT_FD";
/// Env var naming the fd of the exit-status pipe (see the module docs).
pub(crate) const EXIT_FD_ENV: &str = "ASCENDOPT_WORKER_EXIT_FD";
/// Exit code of a worker that could not talk to its parent.
pub(crate) const EXIT_PROTOCOL: u8 = 86;

/// Prefix of self-test kernel names.
const SELFTEST: &str = "__selftest:";

/// The worker process: see the module docs of [`crate::worker`].
pub fn worker_main() -> ExitCode {
    let fd: i32 = match std::env::var(RESULT_FD_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(fd) if fd > 2 => fd,
        _ => {
            eprintln!(
                "ascendopt-worker runs kernels for ascendopt and is started by it; \
                 it cannot be used on its own ({RESULT_FD_ENV} is not set)"
            );
            return ExitCode::from(EXIT_PROTOCOL);
        }
    };
    // SAFETY: fcntl on an fd number only queries it.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        eprintln!("ascendopt-worker: result fd {fd} is not open");
        return ExitCode::from(EXIT_PROTOCOL);
    }
    let exit_fd: Option<i32> = std::env::var(EXIT_FD_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&fd| fd > 2);
    // SAFETY: getpid only queries.
    if unsafe { libc::getpid() } == 1 {
        if let Some(code) = run_as_init(fd, exit_fd) {
            return code;
        }
    }
    // Only the init writes the exit status.
    if let Some(exit_fd) = exit_fd {
        // SAFETY: closing a descriptor this process owns and never uses.
        unsafe { libc::close(exit_fd) };
    }
    // Keep the result pipe away from any program the kernel might exec.
    // SAFETY: as above; the fd is ours from here on.
    let result_file = unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        File::from_raw_fd(fd)
    };
    super::crash::install();
    // SAFETY: getpid only queries.
    let pid = unsafe { libc::getpid() } as u32;
    if let Err(message) = seal(super::seccomp::loading_filter(pid), "loading") {
        eprintln!("ascendopt-worker: {message}");
        return ExitCode::from(EXIT_PROTOCOL);
    }
    let mut stdin = BufReader::with_capacity(1 << 20, io::stdin().lock());
    let job = protocol::read_job(&mut stdin);
    drop(stdin);
    // The kernel gets an empty stdin.
    if let Ok(null) = File::open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto fd 0, which we no longer read.
        unsafe { libc::dup2(null.as_raw_fd(), 0) };
    }
    let (reply, in_arena) = match job {
        Err(message) => (
            Reply::Refused(format!("cannot read the job: {message}")),
            false,
        ),
        Ok(received) => {
            let arena = match &received.arena_lens {
                None => Ok(None),
                Some(lens) => open_arena(lens).map(Some),
            };
            match arena {
                Err(message) => (
                    Reply::Refused(format!("cannot map the tensor arena: {message}")),
                    false,
                ),
                Ok(mut arena) => {
                    // The libraries load (constructors and all) before the
                    // seal; the launch finds them loaded.
                    let _loaded = preload(&received.job);
                    if let Err(message) = seal(super::seccomp::sealed_filter(pid), "sealed") {
                        eprintln!("ascendopt-worker: {message}");
                        return ExitCode::from(EXIT_PROTOCOL);
                    }
                    // A self-test's outputs travel through the pipe; a
                    // tiling-only job has none.
                    let kernel = arena.is_some()
                        && !received.job.kernel_name.starts_with(SELFTEST)
                        && !received.job.tiling_only;
                    (run(&received.job, arena.as_mut()), kernel)
                }
            }
        }
    };
    let mut writer = BufWriter::with_capacity(1 << 20, result_file);
    match protocol::write_reply(&mut writer, reply, in_arena) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("ascendopt-worker: cannot send the result: {err}");
            ExitCode::from(EXIT_PROTOCOL)
        }
    }
}

/// The init of the worker's PID namespace (the worker is PID 1 there):
/// forks the worker proper and returns None in it; in the init, waits for
/// it, reports its wait status on `exit_fd` and returns the code to exit
/// with. A PID 1 ignores signals it has no handler for (abort, SIGXCPU,
/// SIGXFSZ would not work), hence the second process.
fn run_as_init(result_fd: i32, exit_fd: Option<i32>) -> Option<ExitCode> {
    // SAFETY: the process has one thread here (nothing started any).
    let child = unsafe { libc::fork() };
    if child < 0 {
        eprintln!(
            "ascendopt-worker: cannot start the worker process: {}",
            io::Error::last_os_error()
        );
        return Some(ExitCode::from(EXIT_PROTOCOL));
    }
    if child == 0 {
        return None;
    }
    // SAFETY: closing descriptors only the worker uses, then waiting for
    // our own children.
    unsafe {
        for fd in [0, 1, result_fd, super::sandbox::ARENA_FD] {
            libc::close(fd);
        }
        loop {
            let mut status = 0;
            let pid = libc::waitpid(-1, &mut status, 0);
            if pid == child {
                if let Some(fd) = exit_fd {
                    let bytes = status.to_ne_bytes();
                    libc::write(fd, bytes.as_ptr().cast(), bytes.len());
                }
                // Leaving kills whatever else is in the namespace.
                return Some(ExitCode::SUCCESS);
            }
            if pid < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Some(ExitCode::from(EXIT_PROTOCOL));
            }
        }
    }
}

/// Installs a seccomp filter on every thread; an architecture without
/// filters goes on without.
fn seal(filter: Option<Vec<libc::sock_filter>>, which: &'static str) -> Result<(), SetupError> {
    let Some(filter) = filter else {
        return Ok(());
    };
    super::seccomp::install(&filter).map_err(|source| SetupError::Seccomp { which, source })
}

/// Why the worker cannot take a job: its sandbox or its tensor arena.
#[derive(Debug, thiserror::Error)]
enum SetupError {
    /// A seccomp filter was refused.
    #[error("cannot install the {which} seccomp filter: {source}")]
    Seccomp {
        /// Which filter (`loading`, `running`).
        which: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The arena's fd is not in the environment.
    #[error("{ARENA_FD_ENV} is not set")]
    NoArena,
    /// The arena could not be mapped.
    #[error("{0}")]
    Arena(#[source] std::io::Error),
}

/// Loads the libraries the job will use (running their static
/// constructors) and keeps them loaded until the worker exits: the launch
/// opens them again by the same path, which the dynamic loader answers
/// without touching the file system. A library that fails to load is left
/// to the launch, which reports it.
fn preload(job: &LaunchJob) -> Vec<libloading::Library> {
    let mut paths = vec![&job.host_lib];
    if !job.tiling_only || job.kernel_name.starts_with(SELFTEST) {
        paths.push(&job.kernel_lib);
    }
    paths
        .into_iter()
        .filter(|p| !p.as_os_str().is_empty())
        // SAFETY: this is what the worker exists for: running a user
        // library in a sandboxed process.
        .filter_map(|p| unsafe { libloading::Library::new(p) }.ok())
        .collect()
}

/// Maps the arena whose fd is in [`ARENA_FD_ENV`].
fn open_arena(lens: &[usize]) -> Result<Arena, SetupError> {
    let fd: i32 = std::env::var(ARENA_FD_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&fd| fd > 2)
        .ok_or(SetupError::NoArena)?;
    // Keep the arena away from any program the kernel might exec.
    // SAFETY: fcntl on an fd number only sets a flag.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    Arena::open(fd, lens).map_err(SetupError::Arena)
}

/// Runs the job (on the arena's memory when there is one), turning a panic
/// of the simulator into a reply.
fn run(job: &LaunchJob, arena: Option<&mut Arena>) -> Reply {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if job.tiling_only && !job.kernel_name.starts_with(SELFTEST) {
            if job.describe {
                return Ok(crate::launch::describe_only(job));
            }
            return Ok(crate::launch::tiling_only(job));
        }
        match (job.kernel_name.strip_prefix(SELFTEST), arena) {
            (Some(mode), None) => selftest(mode, job),
            (Some(mode), Some(arena)) => {
                // Self-tests read `data`: give them the arena's contents
                // (their outputs travel through the pipe).
                let mut job = job.clone();
                let tensors = job.inputs.iter_mut().chain(job.outputs.iter_mut());
                for (i, t) in tensors.enumerate().take(arena.count()) {
                    t.data = arena.region(i).to_vec();
                }
                selftest(mode, &job)
            }
            (None, None) => Ok(checked_here(job, crate::launch::run(job))),
            (None, Some(arena)) => {
                let mut regions = arena.regions_mut();
                let outputs = regions.split_off(job.inputs.len().min(regions.len()));
                let memory = TensorMemory {
                    inputs: regions,
                    outputs,
                };
                Ok(checked_here(job, crate::launch::run_in_memory(job, memory)))
            }
        }
    }));
    match outcome {
        Ok(Ok(result)) => Reply::Launch(result),
        Ok(Err(e)) => Reply::Refused(e.to_string()),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            Reply::Panicked(message)
        }
    }
}

/// A finished launch of a job that asks for the hazard check here
/// ([`LaunchJob::check_in_worker`]): its findings instead of the trace.
fn checked_here(
    job: &LaunchJob,
    result: Result<LaunchOutput, LaunchFailure>,
) -> Result<LaunchOutput, LaunchFailure> {
    result.map(|mut out| {
        if job.check_in_worker {
            out.hazards = Some(crate::check::check(&out.trace));
            // Not freed: the worker exits right after replying, and
            // freeing a trace's many small buffers one by one costs more
            // than the process's exit.
            std::mem::forget(std::mem::take(&mut out.trace));
        }
        out
    })
}

/// A launch output carrying only `outputs`.
fn plain_output(outputs: Vec<Vec<u8>>) -> LaunchOutput {
    LaunchOutput {
        tiling: TilingInfo {
            block_dim: 0,
            tiling_key: 0,
            data: Vec::new(),
            workspace: 0,
            output_init: Vec::new(),
        },
        outputs,
        trace: Default::default(),
        findings: Vec::new(),
        printed: String::new(),
        hazards: None,
        description: None,
    }
}

type SelftestResult = Result<Result<LaunchOutput, LaunchFailure>, SelftestError>;

/// Why a self-test job was refused (its message travels back as the
/// worker's refusal).
#[derive(Debug, thiserror::Error)]
enum SelftestError {
    /// The library to call cannot be loaded.
    #[error("cannot load {}: {source}", lib.display())]
    Load {
        /// The library.
        lib: std::path::PathBuf,
        /// Why.
        source: libloading::Error,
    },
    /// The library has no such symbol.
    #[error("no symbol {symbol}: {source}")]
    NoSymbol {
        /// The symbol.
        symbol: String,
        /// Why.
        source: libloading::Error,
    },
    /// Not a self-test.
    #[error("unknown self-test {mode:?}")]
    Unknown {
        /// The mode asked for.
        mode: String,
    },
}

fn selftest(mode: &str, job: &LaunchJob) -> SelftestResult {
    if mode == "echo" {
        return Ok(Ok(plain_output(
            job.inputs.iter().map(|t| t.data.clone()).collect(),
        )));
    }
    if mode == "fail" {
        return Ok(Err(LaunchFailure::Fault {
            block: 0,
            message: "self-test fault".into(),
            loc: None,
        }));
    }
    if mode == "alloc" {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            hoard.push(std::hint::black_box(vec![1u8; 64 << 20]));
        }
    }
    if mode == "panic" {
        panic!("self-test panic");
    }
    if let Some(symbol) = mode.strip_prefix("call:") {
        // SAFETY: this is what the worker exists for: running a user
        // library in a sandboxed process.
        let value = unsafe {
            let lib = libloading::Library::new(&job.kernel_lib).map_err(|source| {
                SelftestError::Load {
                    lib: job.kernel_lib.clone(),
                    source,
                }
            })?;
            let func: libloading::Symbol<unsafe extern "C" fn(u64) -> i64> = lib
                .get(symbol.as_bytes())
                .map_err(|source| SelftestError::NoSymbol {
                    symbol: symbol.to_string(),
                    source,
                })?;
            func(job.seed)
        };
        return Ok(Ok(plain_output(vec![value.to_le_bytes().to_vec()])));
    }
    Err(SelftestError::Unknown {
        mode: mode.to_string(),
    })
}
