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
//! Invariants of the child side ([`child_main`]): raw syscalls only on data
//! prepared before the clone (no allocation, no locks, no unwinding);
//! all signals blocked from before the clone until just before `exec`
//! (the parent's handlers never run in the child), every signal disposition
//! reset to default; an `exec` or setup failure is reported as an errno on a
//! close-on-exec pipe and the child `_exit`s.

use super::sandbox::SandboxPlan;
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

/// What to start.
pub(crate) struct SpawnRequest<'a> {
    pub program: &'a Path,
    pub args: &'a [std::ffi::OsString],
    /// The whole environment of the child.
    pub env: &'a [(&'a str, String)],
    pub cwd: &'a Path,
    pub plan: &'a SandboxPlan,
}

/// Everything the child reads, prepared before the clone.
struct ChildArgs<'a> {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
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
/// sandbox applied, and the given environment and working directory.
pub(crate) fn spawn(req: &SpawnRequest<'_>) -> io::Result<Spawned> {
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
    let cwd = os_cstring(req.cwd.as_os_str(), "the work directory")?;
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
        cwd: cwd.as_ptr(),
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
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &args as *const ChildArgs as *mut libc::c_void,
        );
        let clone_error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return Err(clone_error);
        }
        pid
    };
    drop(stack);
    // Our copies of the child's ends.
    drop((stdin_read, stdout_write, stderr_write, error_write));
    // The child is gone from our memory: it exec'd (the error pipe closed
    // on exec, nothing to read) or failed (its errno on the pipe).
    let mut errno = [0u8; 4];
    // SAFETY: reads into a 4-byte buffer from a pipe we own.
    let n = unsafe { libc::read(error_read.as_raw_fd(), errno.as_mut_ptr().cast(), 4) };
    if n == 4 {
        let mut status = 0;
        // SAFETY: reaps our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
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
        if libc::setpgid(0, 0) != 0 {
            fail(a.error_fd);
        }
        for (from, to) in [(a.stdin, 0), (a.stdout, 1), (a.stderr, 2)] {
            if libc::dup2(from, to) < 0 {
                fail(a.error_fd);
            }
        }
        if libc::chdir(a.cwd) != 0 {
            fail(a.error_fd);
        }
        if a.plan.apply().is_err() {
            fail(a.error_fd);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(a.program, a.argv, a.envp);
        fail(a.error_fd)
    }
}

/// Reports the current errno to the parent and ends the child.
///
/// # Safety
/// Only in the child.
unsafe fn fail(error_fd: RawFd) -> ! {
    let errno = io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL);
    let bytes = errno.to_ne_bytes();
    // SAFETY: write and _exit are async-signal-safe.
    unsafe {
        libc::write(error_fd, bytes.as_ptr().cast(), 4);
        libc::_exit(127)
    }
}
