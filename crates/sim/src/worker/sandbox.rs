//! The confinement applied to the worker between `fork` and `exec`
//! ([`SandboxPlan::apply`], run from `Command::pre_exec`), and the seccomp
//! filter that stops it from creating processes.
//!
//! Everything in [`SandboxPlan::apply`] is async-signal-safe: raw syscalls
//! on data prepared before the fork, no allocation, no locks.

use std::io;
use std::os::fd::RawFd;

/// Status bit: the worker got its own network namespace.
pub(crate) const STATUS_NET: u8 = 1;
/// Status bit: a user namespace was needed for that (not root).
pub(crate) const STATUS_USERNS: u8 = 2;
/// Status bit: the no-new-processes seccomp filter is installed.
pub(crate) const STATUS_SECCOMP: u8 = 4;
/// Always set, so a status byte of 0 never happens.
pub(crate) const STATUS_VALID: u8 = 0x80;

/// Resource limits, as `setrlimit` wants them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rlimits {
    pub address_space: u64,
    pub cpu_seconds: u64,
    pub file_size: u64,
    pub open_files: u64,
}

/// What the child does before `exec`.
pub(crate) struct SandboxPlan {
    pub rlimits: Rlimits,
    /// The seccomp program, built before the fork (None: not available on
    /// this architecture).
    pub filter: Option<Vec<libc::sock_filter>>,
    /// Write end of the status pipe (close-on-exec).
    pub status_fd: RawFd,
    /// Write end of the result pipe: its close-on-exec flag is cleared so
    /// the worker inherits it.
    pub result_fd: RawFd,
    /// The tensor arena's fd (close-on-exec cleared likewise), or -1.
    pub arena_fd: RawFd,
}

impl SandboxPlan {
    /// Applies the plan to the calling (freshly forked) process.
    ///
    /// # Safety
    /// Only call in the child between fork and exec.
    pub(crate) unsafe fn apply(&self) -> io::Result<()> {
        let mut status = STATUS_VALID;

        // No network: a private network namespace has only a loopback
        // device, and it is down. Root can create one directly; others need
        // a user namespace first. If neither is allowed, go on without.
        // SAFETY: plain syscalls.
        unsafe {
            if libc::geteuid() == 0 && libc::unshare(libc::CLONE_NEWNET) == 0 {
                status |= STATUS_NET;
            } else if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0 {
                status |= STATUS_NET | STATUS_USERNS;
            }
        }

        let limits = self.rlimits;
        set_limit(libc::RLIMIT_AS, limits.address_space, limits.address_space)?;
        // Soft CPU limit sends SIGXCPU, the hard one a second later SIGKILL.
        set_limit(
            libc::RLIMIT_CPU,
            limits.cpu_seconds,
            limits.cpu_seconds.saturating_add(1),
        )?;
        set_limit(libc::RLIMIT_FSIZE, limits.file_size, limits.file_size)?;
        set_limit(libc::RLIMIT_CORE, 0, 0)?;
        set_limit(libc::RLIMIT_NOFILE, limits.open_files, limits.open_files)?;

        if let Some(filter) = &self.filter {
            let prog = libc::sock_fprog {
                len: filter.len() as libc::c_ushort,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            // SAFETY: `prog` points into `filter`, alive for the call.
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                    && libc::prctl(
                        libc::PR_SET_SECCOMP,
                        libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                        &prog as *const libc::sock_fprog as libc::c_ulong,
                    ) == 0
                {
                    status |= STATUS_SECCOMP;
                }
            }
        }

        // SAFETY: plain syscalls on fds we own.
        unsafe {
            let _ = libc::write(self.status_fd, (&status as *const u8).cast(), 1);
            if libc::fcntl(self.result_fd, libc::F_SETFD, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if self.arena_fd >= 0 && libc::fcntl(self.arena_fd, libc::F_SETFD, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Lowers a resource limit, never above the current hard limit (raising it
/// would need privileges).
fn set_limit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> io::Result<()> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls with a valid pointer.
    unsafe {
        if libc::getrlimit(resource, &mut current) != 0 {
            return Err(io::Error::last_os_error());
        }
        let hard = hard.min(current.rlim_max);
        let limit = libc::rlimit {
            rlim_cur: soft.min(hard),
            rlim_max: hard,
        };
        if libc::setrlimit(resource, &limit) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

// Classic BPF opcodes (linux/filter.h).
const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JMP_JGE_K: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
const BPF_JMP_JSET_K: u16 = 0x05 | 0x40; // BPF_JMP | BPF_JSET | BPF_K
const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K

// struct seccomp_data offsets: nr (u32 at 0), arch (u32 at 4), args[0] at 16
// (low half first on little-endian machines).
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
const OFFSET_ARG0_LOW: u32 = 16;

const CLONE_THREAD: u32 = 0x0001_0000;
/// x32 syscalls on x86_64 have this bit set in `nr`.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Syscall numbers of the architecture the worker runs on.
struct Arch {
    audit_arch: u32,
    fork: Option<u32>,
    vfork: Option<u32>,
    clone: u32,
    clone3: u32,
}

#[cfg(all(target_arch = "x86_64", target_endian = "little"))]
const ARCH: Option<Arch> = Some(Arch {
    audit_arch: 0xC000_003E, // AUDIT_ARCH_X86_64
    fork: Some(57),
    vfork: Some(58),
    clone: 56,
    clone3: 435,
});

#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
const ARCH: Option<Arch> = Some(Arch {
    audit_arch: 0xC000_00B7, // AUDIT_ARCH_AARCH64
    fork: None,
    vfork: None,
    clone: 220,
    clone3: 435,
});

#[cfg(not(any(
    all(target_arch = "x86_64", target_endian = "little"),
    all(target_arch = "aarch64", target_endian = "little")
)))]
const ARCH: Option<Arch> = None;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// A seccomp program that lets threads be created (`clone` with
/// `CLONE_THREAD`) but no process: `fork`, `vfork` and `clone` without
/// `CLONE_THREAD` fail with EPERM, `clone3` (whose flags a filter cannot
/// read) with ENOSYS so that glibc falls back to `clone` for threads. System
/// calls of a foreign ABI (i386 `int 0x80`, x32) fail with ENOSYS.
pub(crate) fn no_new_processes_filter() -> Option<Vec<libc::sock_filter>> {
    let arch = ARCH?;
    // A syscall number that never occurs, for architectures without fork.
    let never = u32::MAX;
    let ret_allow = libc::SECCOMP_RET_ALLOW;
    let ret_eperm = libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32 & libc::SECCOMP_RET_DATA);
    let ret_enosys = libc::SECCOMP_RET_ERRNO | (libc::ENOSYS as u32 & libc::SECCOMP_RET_DATA);
    // Layout (index: instruction); jumps are relative to the next one.
    //  0 ld arch            1 jeq ARCH ? 2 : ENOSYS
    //  2 ld nr              3 jge X32 ? ENOSYS : 4
    //  4 jeq fork ? EPERM   5 jeq vfork ? EPERM    6 jeq clone3 ? ENOSYS
    //  7 jeq clone ? 8 : ALLOW
    //  8 ld args[0]         9 jset CLONE_THREAD ? ALLOW : EPERM
    // 10 ALLOW             11 EPERM               12 ENOSYS
    const ALLOW: u8 = 10;
    const EPERM: u8 = 11;
    const ENOSYS: u8 = 12;
    let to = |from: u8, target: u8| target - from - 1;
    Some(vec![
        stmt(BPF_LD_W_ABS, OFFSET_ARCH),
        jump(BPF_JMP_JEQ_K, arch.audit_arch, 0, to(1, ENOSYS)),
        stmt(BPF_LD_W_ABS, OFFSET_NR),
        jump(BPF_JMP_JGE_K, X32_SYSCALL_BIT, to(3, ENOSYS), 0),
        jump(BPF_JMP_JEQ_K, arch.fork.unwrap_or(never), to(4, EPERM), 0),
        jump(BPF_JMP_JEQ_K, arch.vfork.unwrap_or(never), to(5, EPERM), 0),
        jump(BPF_JMP_JEQ_K, arch.clone3, to(6, ENOSYS), 0),
        jump(BPF_JMP_JEQ_K, arch.clone, 0, to(7, ALLOW)),
        stmt(BPF_LD_W_ABS, OFFSET_ARG0_LOW),
        jump(BPF_JMP_JSET_K, CLONE_THREAD, to(9, ALLOW), to(9, EPERM)),
        stmt(BPF_RET_K, ret_allow),
        stmt(BPF_RET_K, ret_eperm),
        stmt(BPF_RET_K, ret_enosys),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_jumps_land_on_return_instructions() {
        let Some(filter) = no_new_processes_filter() else {
            return; // architecture without a filter: nothing to check
        };
        assert_eq!(filter.len(), 13);
        for (idx, ins) in filter.iter().enumerate() {
            if ins.code & 0x07 == 0x05 {
                for offset in [ins.jt, ins.jf] {
                    let target = idx + 1 + offset as usize;
                    assert!(target < filter.len(), "jump out of the program at {idx}");
                }
            }
        }
        // The three returns, in order: allow, EPERM, ENOSYS.
        let rets: Vec<u32> = filter[10..].iter().map(|i| i.k).collect();
        assert_eq!(
            rets,
            vec![
                0x7fff_0000,
                0x0005_0000 | libc::EPERM as u32,
                0x0005_0000 | libc::ENOSYS as u32
            ]
        );
        // clone without CLONE_THREAD goes to EPERM, with it to ALLOW.
        assert_eq!(9 + 1 + filter[9].jt as usize, 10);
        assert_eq!(9 + 1 + filter[9].jf as usize, 11);
    }
}
