//! The worker's seccomp-bpf filters, written as classic BPF by hand (no C
//! library): [`loading_filter`] while the kernel and host libraries load,
//! and [`sealed_filter`], the allow-list the launch itself runs under.
//!
//! Both filters first check the architecture (a system call of another
//! ABI, i386 `int 0x80` or x32 on x86_64, is refused) and then the system
//! call number. A refused call raises SIGSYS (`SECCOMP_RET_TRAP`), which
//! the worker's crash reporter turns into one stderr line naming the call
//! (`crash.rs`) before the worker dies of it, so the parent can say which
//! forbidden call the kernel made.
//!
//! Filters stack: the sealed filter is installed on top of the loading
//! filter, and a call must pass both.
//!
//! The allow-list holds what the simulator's runtime really calls once the
//! libraries are loaded (found with `strace -f` on launches of every
//! built-in operator, see docs/threat-model.md): memory management,
//! threads (`clone` with `CLONE_THREAD` only) and their synchronisation,
//! signal masks and the alternate signal stack, reads and writes on the
//! descriptors the worker already holds, clocks, `getrandom`, and signals
//! to itself. No `open`, `exec`, `socket`, `ptrace`, `process_vm_*`, no
//! signal to another process, no new file descriptor of any kind except by
//! `mmap`-free means the runtime never uses.

use std::io;

/// What a rule does with a matching call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Let it through.
    Allow,
    /// SIGSYS to the calling thread (reported, then fatal).
    Trap,
    /// Fail with this errno.
    Errno(u32),
}

impl Action {
    fn ret(self) -> u32 {
        match self {
            Action::Allow => libc::SECCOMP_RET_ALLOW,
            Action::Trap => libc::SECCOMP_RET_TRAP,
            Action::Errno(e) => libc::SECCOMP_RET_ERRNO | (e & libc::SECCOMP_RET_DATA),
        }
    }
}

/// A condition on one argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArgTest {
    /// The argument's low 32 bits are one of these values (what the kernel
    /// reads of an `int` argument).
    OneOf(usize, Vec<u32>),
    /// The argument's low 32 bits have this bit set.
    HasBits(usize, u32),
    /// The whole 64-bit argument is zero (a null pointer).
    Zero(usize),
    /// The argument's low 32 bits are none of these values.
    NoneOf(usize, Vec<u32>),
}

/// One rule: a call number, and the conditions under which `then` applies
/// (all must hold); otherwise `otherwise`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub nr: i64,
    pub tests: Vec<ArgTest>,
    pub then: Action,
    pub otherwise: Action,
}

impl Rule {
    fn plain(nr: i64, action: Action) -> Rule {
        Rule {
            nr,
            tests: Vec::new(),
            then: action,
            otherwise: action,
        }
    }
}

// Classic BPF opcodes (linux/filter.h).
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;

// struct seccomp_data: nr (u32 at 0), arch (u32 at 4), args at 16, 8 bytes
// each, low half first on the little-endian machines we support.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
fn offset_arg_low(i: usize) -> u32 {
    16 + 8 * i as u32
}
fn offset_arg_high(i: usize) -> u32 {
    offset_arg_low(i) + 4
}

/// x32 system calls on x86_64 have this bit set in `nr`.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

#[cfg(all(target_arch = "x86_64", target_endian = "little"))]
const AUDIT_ARCH: Option<u32> = Some(0xC000_003E);
#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7);
#[cfg(not(any(
    all(target_arch = "x86_64", target_endian = "little"),
    all(target_arch = "aarch64", target_endian = "little")
)))]
const AUDIT_ARCH: Option<u32> = None;

/// Whether this architecture has the filters (x86_64 and aarch64).
pub(crate) fn filters_available() -> bool {
    AUDIT_ARCH.is_some()
}

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Assembles rules into a program whose calls not matched by any rule get
/// `default`. Every rule's code is self-contained (its tests end in
/// returns), so no jump goes further than one rule: programs of any length
/// stay within classic BPF's 8-bit jump offsets.
pub(crate) fn assemble(rules: &[Rule], default: Action) -> Option<Vec<libc::sock_filter>> {
    let arch = AUDIT_ARCH?;
    let refuse = Action::Trap.ret();
    let mut p = vec![
        ins(LD_W_ABS, 0, 0, OFFSET_ARCH),
        ins(JEQ_K, 1, 0, arch),
        ins(RET_K, 0, 0, refuse),
        ins(LD_W_ABS, 0, 0, OFFSET_NR),
    ];
    if cfg!(target_arch = "x86_64") {
        p.push(ins(JGE_K, 0, 1, X32_SYSCALL_BIT));
        p.push(ins(RET_K, 0, 0, refuse));
    }
    for rule in rules {
        let body = rule_body(rule);
        let skip = u8::try_from(body.len()).ok()?;
        p.push(ins(JEQ_K, 0, skip, rule.nr as u32));
        p.extend(body);
    }
    p.push(ins(RET_K, 0, 0, default.ret()));
    u16::try_from(p.len()).ok()?;
    Some(p)
}

/// The code of one rule, entered with the call number matched; it always
/// returns.
fn rule_body(rule: &Rule) -> Vec<libc::sock_filter> {
    let then = ins(RET_K, 0, 0, rule.then.ret());
    let otherwise = ins(RET_K, 0, 0, rule.otherwise.ret());
    if rule.tests.is_empty() {
        return vec![then];
    }
    // Each test jumps to `otherwise` (the second to last instruction) when
    // it fails, and falls through to the next test when it holds.
    let mut tests: Vec<Vec<libc::sock_filter>> = Vec::new();
    for test in &rule.tests {
        let mut code = Vec::new();
        match test {
            ArgTest::OneOf(arg, values) => {
                code.push(ins(LD_W_ABS, 0, 0, offset_arg_low(*arg)));
                // jeq v1 -> past the list; ...; last: jeq vn ? past : fail.
                let n = values.len();
                for (k, v) in values.iter().enumerate() {
                    let to_pass = (n - 1 - k) as u8 + 1; // over the rest and the "ja fail"
                    code.push(ins(JEQ_K, to_pass, 0, *v));
                }
                code.push(FAIL_MARK);
            }
            ArgTest::HasBits(arg, bits) => {
                code.push(ins(LD_W_ABS, 0, 0, offset_arg_low(*arg)));
                code.push(ins(JSET_K, 1, 0, *bits));
                code.push(FAIL_MARK);
            }
            ArgTest::NoneOf(arg, values) => {
                code.push(ins(LD_W_ABS, 0, 0, offset_arg_low(*arg)));
                let n = values.len();
                for (k, v) in values.iter().enumerate() {
                    // Over the rest and the jump that skips the failure.
                    let to_fail = (n - 1 - k) as u8 + 1;
                    code.push(ins(JEQ_K, to_fail, 0, *v));
                }
                code.push(ins(JEQ_K, 1, 1, 0));
                code.push(FAIL_MARK);
            }
            ArgTest::Zero(arg) => {
                for offset in [offset_arg_low(*arg), offset_arg_high(*arg)] {
                    code.push(ins(LD_W_ABS, 0, 0, offset));
                    code.push(ins(JEQ_K, 1, 0, 0));
                    code.push(FAIL_MARK);
                }
            }
        }
        tests.push(code);
    }
    // Resolve FAIL_MARKs into jumps to `otherwise`: "jeq 0,0 with jt=jf=d"
    // is an unconditional jump of d.
    let total: usize = tests.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total + 2);
    for code in tests {
        for i in code {
            out.push(i);
        }
    }
    let then_at = out.len();
    out.push(then);
    out.push(otherwise);
    let otherwise_at = then_at + 1;
    for (idx, i) in out.iter_mut().enumerate() {
        if is_fail_mark(i) {
            let d = (otherwise_at - idx - 1) as u8;
            *i = ins(JEQ_K, d, d, 0);
        }
    }
    out
}

/// Placeholder for "jump to the rule's failure return".
const FAIL_MARK: libc::sock_filter = libc::sock_filter {
    code: 0xffff,
    jt: 0,
    jf: 0,
    k: 0xdead,
};

fn is_fail_mark(i: &libc::sock_filter) -> bool {
    i.code == 0xffff && i.k == 0xdead
}

/// Signals a worker may send to itself: the ones `abort`, `raise` and a
/// crash reporter use.
const SELF_SIGNALS: [i32; 8] = [
    libc::SIGABRT,
    libc::SIGKILL,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGSYS,
    libc::SIGTRAP,
];

fn self_signal_rules(pid: u32) -> Vec<Rule> {
    let sigs: Vec<u32> = SELF_SIGNALS.iter().map(|&s| s as u32).collect();
    vec![
        // kill(pid, sig): only this process, only a fatal signal.
        Rule {
            nr: libc::SYS_kill,
            tests: vec![
                ArgTest::OneOf(0, vec![pid]),
                ArgTest::OneOf(1, sigs.clone()),
            ],
            then: Action::Allow,
            otherwise: Action::Trap,
        },
        // tgkill(tgid, tid, sig): a thread of this process.
        Rule {
            nr: libc::SYS_tgkill,
            tests: vec![ArgTest::OneOf(0, vec![pid]), ArgTest::OneOf(2, sigs)],
            then: Action::Allow,
            otherwise: Action::Trap,
        },
        // tkill names a thread of any process: never.
        Rule::plain(libc::SYS_tkill, Action::Trap),
    ]
}

/// `clone` for threads only; `clone3`, whose flags a filter cannot read,
/// fails with ENOSYS so that the C library falls back to `clone`.
fn thread_rules() -> Vec<Rule> {
    let mut rules = vec![
        Rule {
            nr: libc::SYS_clone,
            tests: vec![ArgTest::HasBits(0, libc::CLONE_THREAD as u32)],
            then: Action::Allow,
            otherwise: Action::Trap,
        },
        Rule::plain(libc::SYS_clone3, Action::Errno(libc::ENOSYS as u32)),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        rules.push(Rule::plain(libc::SYS_fork, Action::Trap));
        rules.push(Rule::plain(libc::SYS_vfork, Action::Trap));
    }
    rules
}

/// `fcntl` commands that aim signals at other processes.
const FCNTL_SIGNALS: [u32; 3] = [
    libc::F_SETOWN as u32,
    10, // F_SETSIG
    15, // F_SETOWN_EX
];

/// `fcntl` but the commands that aim signals at other processes.
fn fcntl_no_signals_rule() -> Rule {
    Rule {
        nr: libc::SYS_fcntl,
        tests: vec![ArgTest::NoneOf(1, FCNTL_SIGNALS.to_vec())],
        then: Action::Allow,
        otherwise: Action::Trap,
    }
}

/// `fcntl` commands that only look at or set flags of an fd the worker
/// holds (F_SETOWN and F_SETSIG, which aim signals at other processes, and
/// the duplicating ones are not among them).
fn fcntl_rule() -> Rule {
    Rule {
        nr: libc::SYS_fcntl,
        tests: vec![ArgTest::OneOf(
            1,
            vec![
                libc::F_GETFD as u32,
                libc::F_SETFD as u32,
                libc::F_GETFL as u32,
                libc::F_SETFL as u32,
            ],
        )],
        then: Action::Allow,
        otherwise: Action::Trap,
    }
}

/// `prlimit64` that only reads a limit (what `getrlimit` is made of).
fn read_limit_rule() -> Rule {
    Rule {
        nr: libc::SYS_prlimit64,
        tests: vec![ArgTest::Zero(2)],
        then: Action::Allow,
        otherwise: Action::Trap,
    }
}

/// The filter of the worker from its start until the libraries are loaded
/// (their static constructors run under it): everything but what reaches
/// other processes, the kernel or new programs. `pid` is the worker's own
/// process id (in its PID namespace).
pub(crate) fn loading_filter(pid: u32) -> Option<Vec<libc::sock_filter>> {
    let mut rules = thread_rules();
    rules.extend(self_signal_rules(pid));
    rules.push(fcntl_no_signals_rule());
    rules.push(read_limit_rule());
    let denied: &[i64] = &[
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_send_signal,
        libc::SYS_pidfd_getfd,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_tgsigqueueinfo,
        libc::SYS_kcmp,
        libc::SYS_process_madvise,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_socket,
        libc::SYS_socketpair,
        libc::SYS_connect,
        libc::SYS_bind,
        libc::SYS_setpgid,
        libc::SYS_setsid,
        libc::SYS_setuid,
        libc::SYS_setgid,
        libc::SYS_setreuid,
        libc::SYS_setregid,
        libc::SYS_setresuid,
        libc::SYS_setresgid,
        libc::SYS_setgroups,
        libc::SYS_capset,
        libc::SYS_setrlimit,
        libc::SYS_ioctl,
        libc::SYS_migrate_pages,
        libc::SYS_move_pages,
        libc::SYS_fanotify_init,
        libc::SYS_inotify_init1,
        libc::SYS_memfd_create,
        libc::SYS_mknodat,
    ];
    rules.extend(denied.iter().map(|&nr| Rule::plain(nr, Action::Trap)));
    #[cfg(target_arch = "x86_64")]
    {
        for nr in [
            libc::SYS_iopl,
            libc::SYS_ioperm,
            libc::SYS_uselib,
            libc::SYS_mknod,
            libc::SYS_inotify_init,
        ] {
            rules.push(Rule::plain(nr, Action::Trap));
        }
    }
    assemble(&rules, Action::Allow)
}

/// The allow-list the launch runs under, installed once the kernel and
/// host libraries are loaded. `pid` is the worker's own process id.
pub(crate) fn sealed_filter(pid: u32) -> Option<Vec<libc::sock_filter>> {
    let mut rules = thread_rules();
    rules.extend(self_signal_rules(pid));
    rules.push(fcntl_rule());
    rules.push(read_limit_rule());
    // prctl: thread names (std names every block thread) only.
    rules.push(Rule {
        nr: libc::SYS_prctl,
        tests: vec![ArgTest::OneOf(
            0,
            vec![libc::PR_SET_NAME as u32, libc::PR_GET_NAME as u32],
        )],
        then: Action::Allow,
        otherwise: Action::Trap,
    });
    let allowed: &[i64] = &[
        // Descriptors the worker holds: reply pipe, stdout/stderr pipes,
        // /dev/null, the tensor arena.
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_readv,
        libc::SYS_writev,
        libc::SYS_close,
        libc::SYS_lseek,
        libc::SYS_fstat,
        libc::SYS_newfstatat,
        libc::SYS_statx,
        // Memory.
        libc::SYS_mmap,
        libc::SYS_munmap,
        libc::SYS_mremap,
        libc::SYS_mprotect,
        libc::SYS_madvise,
        libc::SYS_brk,
        libc::SYS_membarrier,
        // Threads and their synchronisation.
        libc::SYS_futex,
        libc::SYS_set_robust_list,
        libc::SYS_get_robust_list,
        libc::SYS_rseq,
        libc::SYS_set_tid_address,
        libc::SYS_sched_yield,
        libc::SYS_sched_getaffinity,
        libc::SYS_gettid,
        libc::SYS_getpid,
        libc::SYS_exit,
        libc::SYS_exit_group,
        // Signals: masks, the alternate stack, returning from a handler.
        libc::SYS_rt_sigprocmask,
        libc::SYS_rt_sigaction,
        libc::SYS_rt_sigreturn,
        libc::SYS_sigaltstack,
        // Clocks and randomness (hash map seeds).
        libc::SYS_clock_gettime,
        libc::SYS_clock_getres,
        libc::SYS_gettimeofday,
        libc::SYS_clock_nanosleep,
        libc::SYS_nanosleep,
        libc::SYS_getrandom,
        libc::SYS_getrlimit,
        libc::SYS_uname,
        libc::SYS_getcwd,
        // glibc's qsort asks for the memory size.
        libc::SYS_sysinfo,
    ];
    rules.extend(allowed.iter().map(|&nr| Rule::plain(nr, Action::Allow)));
    assemble(&rules, Action::Trap)
}

/// Installs `filter` on every thread of the calling process (the calling
/// process must have no_new_privs or CAP_SYS_ADMIN).
pub(crate) fn install(filter: &[libc::sock_filter]) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: filter.len() as libc::c_ushort,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `prog` points into `filter`, alive for the call; the flags
    // ask the kernel to apply the filter to every thread.
    let rc = unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_TSYNC,
            &prog as *const libc::sock_fprog,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The name of a system call number, for reports (the ones a hostile
/// kernel reaches for; others are shown by number).
pub(crate) fn syscall_name(nr: i64) -> Option<&'static str> {
    let names: &[(i64, &str)] = &[
        (libc::SYS_openat, "openat"),
        (libc::SYS_openat2, "openat2"),
        (libc::SYS_execve, "execve"),
        (libc::SYS_execveat, "execveat"),
        (libc::SYS_clone, "clone"),
        (libc::SYS_kill, "kill"),
        (libc::SYS_tgkill, "tgkill"),
        (libc::SYS_tkill, "tkill"),
        (libc::SYS_ptrace, "ptrace"),
        (libc::SYS_process_vm_readv, "process_vm_readv"),
        (libc::SYS_process_vm_writev, "process_vm_writev"),
        (libc::SYS_socket, "socket"),
        (libc::SYS_connect, "connect"),
        (libc::SYS_ioctl, "ioctl"),
        (libc::SYS_prctl, "prctl"),
        (libc::SYS_fcntl, "fcntl"),
        (libc::SYS_dup3, "dup3"),
        (libc::SYS_mkdirat, "mkdirat"),
        (libc::SYS_unlinkat, "unlinkat"),
        (libc::SYS_renameat2, "renameat2"),
        (libc::SYS_symlinkat, "symlinkat"),
        (libc::SYS_linkat, "linkat"),
        (libc::SYS_pread64, "pread64"),
        (libc::SYS_pwrite64, "pwrite64"),
        (libc::SYS_getdents64, "getdents64"),
        (libc::SYS_readlinkat, "readlinkat"),
        (libc::SYS_faccessat, "faccessat"),
        (libc::SYS_faccessat2, "faccessat2"),
        (libc::SYS_memfd_create, "memfd_create"),
        (libc::SYS_mount, "mount"),
        (libc::SYS_unshare, "unshare"),
        (libc::SYS_setns, "setns"),
        (libc::SYS_pidfd_open, "pidfd_open"),
        (libc::SYS_pidfd_send_signal, "pidfd_send_signal"),
        (libc::SYS_rt_sigaction, "rt_sigaction"),
        (libc::SYS_wait4, "wait4"),
        (libc::SYS_waitid, "waitid"),
        (libc::SYS_setpgid, "setpgid"),
        (libc::SYS_setsid, "setsid"),
        (libc::SYS_chdir, "chdir"),
        (libc::SYS_fchdir, "fchdir"),
        (libc::SYS_truncate, "truncate"),
        (libc::SYS_ftruncate, "ftruncate"),
        (libc::SYS_sendfile, "sendfile"),
        (libc::SYS_splice, "splice"),
        (libc::SYS_clock_nanosleep, "clock_nanosleep"),
        (libc::SYS_getcwd, "getcwd"),
        (libc::SYS_socketpair, "socketpair"),
        (libc::SYS_bind, "bind"),
        (libc::SYS_sendto, "sendto"),
        (libc::SYS_io_uring_setup, "io_uring_setup"),
        (libc::SYS_userfaultfd, "userfaultfd"),
        (libc::SYS_bpf, "bpf"),
        (libc::SYS_perf_event_open, "perf_event_open"),
        (libc::SYS_close_range, "close_range"),
        (libc::SYS_mknodat, "mknodat"),
        (libc::SYS_fchmodat, "fchmodat"),
        (libc::SYS_fchownat, "fchownat"),
        (libc::SYS_statfs, "statfs"),
        (libc::SYS_inotify_init1, "inotify_init1"),
        (libc::SYS_eventfd2, "eventfd2"),
        (libc::SYS_pipe2, "pipe2"),
        (libc::SYS_ppoll, "ppoll"),
        (libc::SYS_pselect6, "pselect6"),
        (libc::SYS_epoll_create1, "epoll_create1"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_open, "open"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_fork, "fork"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_vfork, "vfork"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_access, "access"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_stat, "stat"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_dup2, "dup2"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_pause, "pause"),
    ];
    names.iter().find(|(n, _)| *n == nr).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a classic BPF program over one `seccomp_data` (the subset of
    /// the instruction set the assembler emits).
    fn run(prog: &[libc::sock_filter], nr: i64, arch: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let i = prog[pc];
            match i.code {
                LD_W_ABS => {
                    let k = i.k as usize;
                    acc = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
                    pc += 1;
                }
                JEQ_K | JGE_K | JSET_K => {
                    let taken = match i.code {
                        JEQ_K => acc == i.k,
                        JGE_K => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += 1 + if taken { i.jt } else { i.jf } as usize;
                }
                RET_K => return i.k,
                other => panic!("opcode {other:#x} at {pc}"),
            }
            assert!(pc < prog.len(), "ran off the program");
        }
    }

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const TRAP: u32 = libc::SECCOMP_RET_TRAP;

    #[test]
    fn the_sealed_filter_allows_the_runtime_and_traps_the_rest() {
        let Some(arch) = AUDIT_ARCH else { return };
        let pid = 7;
        let prog = sealed_filter(pid).unwrap();
        let call = |nr: i64, args: [u64; 6]| run(&prog, nr, arch, args);
        assert_eq!(call(libc::SYS_mmap, [0; 6]), ALLOW);
        assert_eq!(call(libc::SYS_futex, [0; 6]), ALLOW);
        assert_eq!(call(libc::SYS_write, [2, 0, 0, 0, 0, 0]), ALLOW);
        assert_eq!(call(libc::SYS_openat, [0; 6]), TRAP);
        assert_eq!(call(libc::SYS_execve, [0; 6]), TRAP);
        assert_eq!(call(libc::SYS_socket, [0; 6]), TRAP);
        assert_eq!(call(libc::SYS_ptrace, [0; 6]), TRAP);
        assert_eq!(call(libc::SYS_process_vm_readv, [0; 6]), TRAP);
        // Threads yes, processes no.
        let thread = (libc::CLONE_VM | libc::CLONE_THREAD) as u64;
        assert_eq!(call(libc::SYS_clone, [thread, 0, 0, 0, 0, 0]), ALLOW);
        assert_eq!(
            call(libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
            TRAP
        );
        assert_eq!(
            call(libc::SYS_clone3, [0; 6]),
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32
        );
        // Signals: to itself, fatal ones only.
        let abrt = libc::SIGABRT as u64;
        assert_eq!(call(libc::SYS_kill, [7, abrt, 0, 0, 0, 0]), ALLOW);
        assert_eq!(call(libc::SYS_kill, [8, abrt, 0, 0, 0, 0]), TRAP);
        assert_eq!(call(libc::SYS_kill, [0, abrt, 0, 0, 0, 0]), TRAP);
        assert_eq!(call(libc::SYS_kill, [u32::MAX as u64, 9, 0, 0, 0, 0]), TRAP);
        let stop = libc::SIGSTOP as u64;
        assert_eq!(call(libc::SYS_kill, [7, stop, 0, 0, 0, 0]), TRAP);
        assert_eq!(call(libc::SYS_tgkill, [7, 9, abrt, 0, 0, 0]), ALLOW);
        assert_eq!(call(libc::SYS_tgkill, [1, 9, abrt, 0, 0, 0]), TRAP);
        assert_eq!(call(libc::SYS_tkill, [7, abrt, 0, 0, 0, 0]), TRAP);
        // fcntl: flags only.
        let f = |cmd: i32| call(libc::SYS_fcntl, [1, cmd as u64, 0, 0, 0, 0]);
        assert_eq!(f(libc::F_GETFL), ALLOW);
        assert_eq!(f(libc::F_SETOWN), TRAP);
        assert_eq!(f(libc::F_DUPFD), TRAP);
        // prctl: names only.
        let pr = |op: i32| call(libc::SYS_prctl, [op as u64, 0, 0, 0, 0, 0]);
        assert_eq!(pr(libc::PR_SET_NAME), ALLOW);
        assert_eq!(pr(libc::PR_SET_DUMPABLE), TRAP);
        // prlimit64: reading only (a null new limit, all 64 bits of it).
        let lim = |new: u64| call(libc::SYS_prlimit64, [0, 3, new, 0x1000, 0, 0]);
        assert_eq!(lim(0), ALLOW);
        assert_eq!(lim(0x7f00_0000_0000), TRAP);
        assert_eq!(lim(0x1000), TRAP);
        // Another ABI is refused outright.
        assert_eq!(run(&prog, libc::SYS_mmap, 0x4000_0003, [0; 6]), TRAP);
        if cfg!(target_arch = "x86_64") {
            assert_eq!(call(libc::SYS_mmap | X32_SYSCALL_BIT as i64, [0; 6]), TRAP);
        }
    }

    #[test]
    fn the_loading_filter_lets_libraries_load_but_reaches_nobody_else() {
        let Some(arch) = AUDIT_ARCH else { return };
        let prog = loading_filter(2).unwrap();
        let call = |nr: i64, args: [u64; 6]| run(&prog, nr, arch, args);
        assert_eq!(call(libc::SYS_openat, [0; 6]), ALLOW);
        assert_eq!(call(libc::SYS_mmap, [0; 6]), ALLOW);
        assert_eq!(call(libc::SYS_execve, [0; 6]), TRAP);
        assert_eq!(call(libc::SYS_execveat, [0; 6]), TRAP);
        assert_eq!(call(libc::SYS_ptrace, [0; 6]), TRAP);
        assert_eq!(call(libc::SYS_kill, [1, 9, 0, 0, 0, 0]), TRAP);
        assert_eq!(call(libc::SYS_kill, [2, 9, 0, 0, 0, 0]), ALLOW);
        assert_eq!(
            call(libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
            TRAP
        );
        assert_eq!(call(libc::SYS_io_uring_setup, [0; 6]), TRAP);
        let f = |cmd: i32| call(libc::SYS_fcntl, [1, cmd as u64, 0, 0, 0, 0]);
        assert_eq!(f(10 /* F_SETSIG */), TRAP);
        assert_eq!(f(libc::F_SETOWN), TRAP);
        assert_eq!(f(libc::F_SETFD), ALLOW);
        assert_eq!(f(libc::F_GET_SEALS), ALLOW);
    }

    #[test]
    fn every_jump_lands_inside_the_program() {
        for prog in [sealed_filter(3), loading_filter(3)].into_iter().flatten() {
            for (idx, i) in prog.iter().enumerate() {
                if matches!(i.code, JEQ_K | JGE_K | JSET_K) {
                    for off in [i.jt, i.jf] {
                        assert!(idx + 1 + (off as usize) < prog.len(), "jump out at {idx}");
                    }
                }
                assert!(!is_fail_mark(i), "unresolved jump at {idx}");
            }
            assert_eq!(prog.last().unwrap().code, RET_K);
        }
    }
}
