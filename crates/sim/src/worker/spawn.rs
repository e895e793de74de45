//! Starting the worker without copying the parent's address space.
//!
//! `std::process::Command` with a `pre_exec` hook must `fork`, which copies
//! the page tables of the whole parent (gigabytes of tensors while a
//! benchmark case is in flight) only for the child to throw them away at
//! `exec`, and makes every parent write until then a copy-on-write fault.
//! Here the child is created with `clone(CLONE_VM | CLONE_VFORK)`, the way
//! `posix_spawn` does it: it runs on its own small stack in the parent's
//! memory while the parent waits, applies the sandbox ([`SandboxPlan`]),
//! and `exec`s.
//!
//! The namespaces of the sandbox ([`SandboxPlan::clone_flags`]) are
//! created by this same `clone`, so that the worker is the first process
//! (PID 1) of its own PID namespace.
//!
//! Invariants of the child side ([`child_main`]): raw syscalls only on data
//! prepared before the clone (no allocation, no locks, no unwinding);
//! all signals blocked from before the clone until just before `exec`
//! (the parent's handlers never run in the child), every signal disposition
//! reset to default; a setup or `exec` failure is reported as the failing
//! stage and its errno on a close-on-exec pipe and the child `_exit`s.

use super::sandbox::{self, SandboxPlan};
use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A started worker: its pid (also its process group) and the parent's ends
/// of its stdin, stdout and stderr pipes.
pub(crate) struct Spawned {
    pub pid: libc::pid_t,
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Why a worker could not be started: the sandbox stage that failed (see
/// [`sandbox::stage_name`]) and the system's error.
#[derive(Debug)]
pub(crate) struct SpawnError {
    pub stage: u32,
    pub error: io::Error,
}

impl SpawnError {
    fn io(error: io::Error) -> SpawnError {
        SpawnError { stage: 0, error }
    }

    /// Whether the sandbox (not the worker executable) failed: a weaker
    /// level may work.
    pub fn is_sandbox(&self) -> bool {
        self.stage != EXEC_STAGE
    }
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.stage == EXEC_STAGE {
            write!(f, "{}", self.error)
        } else {
            write!(f, "{}: {}", sandbox::stage_name(self.stage), self.error)
        }
    }
}

/// The stage number of a failed `exec`.
const EXEC_STAGE: u32 = 60;

/// What to start.
pub(crate) struct SpawnRequest<'a> {
    pub program: &'a Path,
    pub args: &'a [std::ffi::OsString],
    /// The whole environment of the child.
    pub env: &'a [(&'a str, String)],
    pub plan: &'a SandboxPlan,
}

/// Everything the child reads, prepared before the clone.
struct ChildArgs<'a> {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    stdin: RawFd,
    stdout: RawFd,
    stderr: RawFd,
    error_fd: RawFd,
    plan: &'a SandboxPlan,
}

fn cstring(bytes: &[u8], what: &str) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} contains a NUL byte"),
        )
    })
}

fn os_cstring(s: &OsStr, what: &str) -> io::Result<CString> {
    cstring(s.as_bytes(), what)
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills two fds on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Bytes of the child's stack (it only makes syscalls).
const CHILD_STACK: usize = 256 << 10;

/// Starts `req.program` in a new process group with piped stdio, the
/// sandbox applied, and the given environment.
pub(crate) fn spawn(req: &SpawnRequest<'_>) -> Result<Spawned, SpawnError> {
    spawn_inner(req).map_err(|e| match e {
        Failed::Io(error) => SpawnError::io(error),
        Failed::Child(stage, errno) => SpawnError {
            stage,
            error: io::Error::from_raw_os_error(errno),
        },
    })
}

enum Failed {
    Io(io::Error),
    Child(u32, i32),
}

impl From<io::Error> for Failed {
    fn from(e: io::Error) -> Failed {
        Failed::Io(e)
    }
}

fn spawn_inner(req: &SpawnRequest<'_>) -> Result<Spawned, Failed> {
    let program = os_cstring(req.program.as_os_str(), "the worker path")?;
    let mut argv_owned = vec![program.clone()];
    for arg in req.args {
        argv_owned.push(os_cstring(arg, "a worker argument")?);
    }
    let env_owned: Vec<CString> = req
        .env
        .iter()
        .map(|(k, v)| cstring(format!("{k}={v}").as_bytes(), "the worker environment"))
        .collect::<io::Result<_>>()?;
    let argv: Vec<*const libc::c_char> = argv_owned
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const libc::c_char> = env_owned
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();

    let (stdin_read, stdin_write) = pipe()?;
    let (stdout_read, stdout_write) = pipe()?;
    let (stderr_read, stderr_write) = pipe()?;
    let (error_read, error_write) = pipe()?;
    let args = ChildArgs {
        program: program.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        stdin: stdin_read.as_raw_fd(),
        stdout: stdout_write.as_raw_fd(),
        stderr: stderr_write.as_raw_fd(),
        error_fd: error_write.as_raw_fd(),
        plan: req.plan,
    };
    let mut stack = vec![0u8; CHILD_STACK];
    // The stack grows down: pass its (16-byte aligned) top.
    let top = (stack.as_mut_ptr() as usize + CHILD_STACK) & !15;

    // SAFETY: signal masks of this thread, restored right after the clone;
    // `clone` with CLONE_VM | CLONE_VFORK suspends this thread until the
    // child execs or exits, so `args`, the C strings and the stack outlive
    // every use the child makes of them; `child_main` only makes syscalls.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            child_main,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | req.plan.clone_flags(),
            &args as *const ChildArgs as *mut libc::c_void,
        );
        let clone_error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return Err(Failed::Child(0, clone_error.raw_os_error().unwrap_or(0)));
        }
        pid
    };
    drop(stack);
    // Our copies of the child's ends.
    drop((stdin_read, stdout_write, stderr_write, error_write));
    // The child is gone from our memory: it exec'd (the error pipe closed
    // on exec, nothing to read) or failed (stage and errno on the pipe).
    let mut report = [0u8; 8];
    // SAFETY: reads into an 8-byte buffer from a pipe we own.
    let n = unsafe { libc::read(error_read.as_raw_fd(), report.as_mut_ptr().cast(), 8) };
    if n == 8 {
        let mut status = 0;
        // SAFETY: reaps our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let stage = u32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
        let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
        return Err(Failed::Child(stage, errno));
    }
    Ok(Spawned {
        pid,
        stdin: stdin_write,
        stdout: stdout_read,
        stderr: stderr_read,
    })
}

/// The child between clone and exec. See the module invariants.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `ChildArgs`, alive while the parent is
    // suspended by CLONE_VFORK.
    let a = unsafe { &*(arg as *const ChildArgs) };
    let mut error_fd = a.error_fd;
    // SAFETY: syscalls on the child's own fd table and signal state (no
    // CLONE_FILES / CLONE_SIGHAND), with pointers prepared by the parent.
    unsafe {
        // Default dispositions (the parent ignores SIGPIPE, and ignored
        // signals would stay ignored across exec).
        for sig in 1..libc::SIGRTMAX() {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        if let Err((stage, errno)) = a.plan.apply([a.stdin, a.stdout, a.stderr], &mut error_fd) {
            fail(error_fd, stage, errno);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(a.program, a.argv, a.envp);
        let errno = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL);
        fail(error_fd, EXEC_STAGE, errno)
    }
}

/// Reports the failed stage and `errno` to the parent and ends the child.
///
/// # Safety
/// Only in the child.
unsafe fn fail(error_fd: RawFd, stage: u32, errno: i32) -> ! {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&stage.to_ne_bytes());
    bytes[4..].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: write and _exit are async-signal-safe.
    unsafe {
        libc::write(error_fd, bytes.as_ptr().cast(), 8);
        libc::_exit(127)
    }
}
