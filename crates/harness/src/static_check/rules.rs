//! The token rules of the static check: forbidden names, directives and
//! pragmas, and a light scope tracker that finds state surviving a launch
//! and `extern` declarations.

use super::lex::{Directive, Tok, TokKind};
use super::{Role, Rule};

/// How a forbidden name must appear to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Any use that is not a member access or a qualification by a
    /// namespace other than `std`/the global one.
    Any,
    /// Only as a call (`name(`), same qualification rules.
    Call,
    /// Only as a call that is not `std::`-qualified (`::bind(`, `bind(`, but
    /// `std::bind` is fine).
    CallNotStd,
    /// Only when qualified by `std::`.
    StdOnly,
}

/// Forbidden APIs in all code: (name, form, what it gives access to).
const FORBIDDEN: &[(&str, Form, &str)] = &[
    // Processes, signals, exits.
    ("syscall", Form::Call, "raw system calls"),
    ("fork", Form::Call, "process creation"),
    ("vfork", Form::Call, "process creation"),
    ("clone", Form::Call, "process creation"),
    ("execl", Form::Call, "program execution"),
    ("execle", Form::Call, "program execution"),
    ("execlp", Form::Call, "program execution"),
    ("execv", Form::Call, "program execution"),
    ("execve", Form::Call, "program execution"),
    ("execvp", Form::Call, "program execution"),
    ("execvpe", Form::Call, "program execution"),
    ("fexecve", Form::Call, "program execution"),
    ("posix_spawn", Form::Call, "program execution"),
    ("posix_spawnp", Form::Call, "program execution"),
    ("system", Form::Call, "shell commands"),
    ("popen", Form::Call, "shell commands"),
    ("pclose", Form::Call, "shell commands"),
    ("wait", Form::Call, "process control"),
    ("waitpid", Form::Call, "process control"),
    ("waitid", Form::Call, "process control"),
    ("kill", Form::Call, "signals"),
    ("raise", Form::Call, "signals"),
    ("signal", Form::Call, "signals"),
    ("sigaction", Form::Call, "signals"),
    ("alarm", Form::Call, "signals"),
    ("abort", Form::Call, "process exit"),
    ("exit", Form::Call, "process exit"),
    ("_exit", Form::Call, "process exit"),
    ("_Exit", Form::Call, "process exit"),
    ("quick_exit", Form::Call, "process exit"),
    ("atexit", Form::Call, "exit handlers"),
    ("at_quick_exit", Form::Call, "exit handlers"),
    ("setjmp", Form::Call, "non-local jumps"),
    ("longjmp", Form::Call, "non-local jumps"),
    ("ptrace", Form::Call, "process control"),
    ("prctl", Form::Call, "process control"),
    ("getpid", Form::Call, "process identity"),
    ("getppid", Form::Call, "process identity"),
    ("setrlimit", Form::Call, "resource limits"),
    ("daemon", Form::Call, "process control"),
    ("setsid", Form::Call, "process control"),
    ("setuid", Form::Call, "process identity"),
    ("setgid", Form::Call, "process identity"),
    ("unshare", Form::Call, "namespaces"),
    ("setns", Form::Call, "namespaces"),
    ("mount", Form::Call, "file system"),
    ("personality", Form::Call, "process control"),
    ("process_vm_readv", Form::Call, "other processes' memory"),
    ("process_vm_writev", Form::Call, "other processes' memory"),
    ("perf_event_open", Form::Call, "system calls"),
    ("userfaultfd", Form::Call, "system calls"),
    ("chroot", Form::Call, "file system"),
    ("pidfd_open", Form::Call, "other processes"),
    ("pidfd_send_signal", Form::Call, "signals"),
    ("tgkill", Form::Call, "signals"),
    ("tkill", Form::Call, "signals"),
    ("sigqueue", Form::Call, "signals"),
    ("killpg", Form::Call, "signals"),
    ("pause", Form::Call, "signals"),
    ("sigsuspend", Form::Call, "signals"),
    ("sigwait", Form::Call, "signals"),
    ("setpgid", Form::Call, "process control"),
    ("setresuid", Form::Call, "process identity"),
    ("setresgid", Form::Call, "process identity"),
    ("seteuid", Form::Call, "process identity"),
    ("setegid", Form::Call, "process identity"),
    ("setgroups", Form::Call, "process identity"),
    ("capset", Form::Call, "process identity"),
    ("umount", Form::Call, "file system"),
    ("umount2", Form::Call, "file system"),
    ("pivot_root", Form::Call, "file system"),
    ("seccomp", Form::Call, "system calls"),
    ("bpf", Form::Call, "system calls"),
    ("keyctl", Form::Call, "system calls"),
    ("dlerror", Form::Call, "dynamic loading"),
    ("dladdr", Form::Call, "dynamic loading"),
    ("dl_iterate_phdr", Form::Call, "dynamic loading"),
    // Files and streams.
    ("fopen", Form::Call, "file I/O"),
    ("freopen", Form::Call, "file I/O"),
    ("fdopen", Form::Call, "file I/O"),
    ("tmpfile", Form::Call, "file I/O"),
    ("mkstemp", Form::Call, "file I/O"),
    ("open", Form::Call, "file I/O"),
    ("open64", Form::Call, "file I/O"),
    ("openat", Form::Call, "file I/O"),
    ("openat64", Form::Call, "file I/O"),
    ("openat2", Form::Call, "file I/O"),
    ("fopen64", Form::Call, "file I/O"),
    ("freopen64", Form::Call, "file I/O"),
    ("tmpfile64", Form::Call, "file I/O"),
    ("mkostemp", Form::Call, "file I/O"),
    ("mkstemps", Form::Call, "file I/O"),
    ("mkdtemp", Form::Call, "file I/O"),
    ("mktemp", Form::Call, "file I/O"),
    ("tmpnam", Form::Call, "file I/O"),
    ("tempnam", Form::Call, "file I/O"),
    ("pread64", Form::Call, "file I/O"),
    ("pwrite64", Form::Call, "file I/O"),
    ("preadv", Form::Call, "file I/O"),
    ("pwritev", Form::Call, "file I/O"),
    ("preadv2", Form::Call, "file I/O"),
    ("pwritev2", Form::Call, "file I/O"),
    ("lseek64", Form::Call, "file I/O"),
    ("fseek", Form::Call, "file I/O"),
    ("ftell", Form::Call, "file I/O"),
    ("rewind", Form::Call, "file I/O"),
    ("fileno", Form::Call, "file I/O"),
    ("setvbuf", Form::Call, "file I/O"),
    ("fcloseall", Form::Call, "file I/O"),
    ("fclose", Form::Call, "file I/O"),
    ("creat", Form::Call, "file I/O"),
    ("read", Form::Call, "file I/O"),
    ("write", Form::Call, "file I/O"),
    ("pread", Form::Call, "file I/O"),
    ("pwrite", Form::Call, "file I/O"),
    ("close", Form::Call, "file I/O"),
    ("lseek", Form::Call, "file I/O"),
    ("readv", Form::Call, "file I/O"),
    ("writev", Form::Call, "file I/O"),
    ("sendfile", Form::Call, "file I/O"),
    ("splice", Form::Call, "file I/O"),
    ("copy_file_range", Form::Call, "file I/O"),
    ("getline", Form::Call, "file I/O"),
    ("getdelim", Form::Call, "file I/O"),
    ("fread", Form::Call, "file I/O"),
    ("fgets", Form::Call, "file I/O"),
    ("fgetc", Form::Call, "file I/O"),
    ("getc", Form::Call, "file I/O"),
    ("getchar", Form::Call, "file I/O"),
    ("gets", Form::Call, "file I/O"),
    ("scanf", Form::Call, "file I/O"),
    ("fscanf", Form::Call, "file I/O"),
    ("stdin", Form::Any, "file I/O"),
    ("cin", Form::StdOnly, "file I/O"),
    ("FILE", Form::Any, "file I/O"),
    ("fstream", Form::StdOnly, "file I/O"),
    ("ifstream", Form::StdOnly, "file I/O"),
    ("ofstream", Form::StdOnly, "file I/O"),
    ("filebuf", Form::StdOnly, "file I/O"),
    ("filesystem", Form::StdOnly, "file system"),
    ("remove", Form::Call, "file system"),
    ("rename", Form::Call, "file system"),
    ("unlink", Form::Call, "file system"),
    ("unlinkat", Form::Call, "file system"),
    ("link", Form::Call, "file system"),
    ("symlink", Form::Call, "file system"),
    ("symlinkat", Form::Call, "file system"),
    ("linkat", Form::Call, "file system"),
    ("renameat", Form::Call, "file system"),
    ("renameat2", Form::Call, "file system"),
    ("mkdirat", Form::Call, "file system"),
    ("mknod", Form::Call, "file system"),
    ("mknodat", Form::Call, "file system"),
    ("fchmod", Form::Call, "file system"),
    ("fchmodat", Form::Call, "file system"),
    ("fchown", Form::Call, "file system"),
    ("fchownat", Form::Call, "file system"),
    ("lchown", Form::Call, "file system"),
    ("faccessat", Form::Call, "file system"),
    ("euidaccess", Form::Call, "file system"),
    ("utime", Form::Call, "file system"),
    ("utimes", Form::Call, "file system"),
    ("utimensat", Form::Call, "file system"),
    ("futimens", Form::Call, "file system"),
    ("readlinkat", Form::Call, "file system"),
    ("realpath", Form::Call, "file system"),
    ("canonicalize_file_name", Form::Call, "file system"),
    ("getcwd", Form::Call, "file system"),
    ("fchdir", Form::Call, "file system"),
    ("glob", Form::Call, "file system"),
    ("globfree", Form::Call, "file system"),
    ("ftw", Form::Call, "file system"),
    ("nftw", Form::Call, "file system"),
    ("scandir", Form::Call, "file system"),
    ("fdopendir", Form::Call, "file system"),
    ("getdents", Form::Call, "file system"),
    ("getdents64", Form::Call, "file system"),
    ("statx", Form::Call, "file system"),
    ("stat64", Form::Call, "file system"),
    ("lstat64", Form::Call, "file system"),
    ("fstat64", Form::Call, "file system"),
    ("fstatat", Form::Call, "file system"),
    ("fstatat64", Form::Call, "file system"),
    ("statfs", Form::Call, "file system"),
    ("statvfs", Form::Call, "file system"),
    ("inotify_init", Form::Call, "file system"),
    ("inotify_init1", Form::Call, "file system"),
    ("inotify_add_watch", Form::Call, "file system"),
    ("truncate64", Form::Call, "file system"),
    ("ftruncate64", Form::Call, "file system"),
    ("fallocate", Form::Call, "file system"),
    ("posix_fallocate", Form::Call, "file system"),
    ("sync", Form::Call, "file system"),
    ("fsync", Form::Call, "file system"),
    ("readlink", Form::Call, "file system"),
    ("mkdir", Form::Call, "file system"),
    ("rmdir", Form::Call, "file system"),
    ("chdir", Form::Call, "file system"),
    ("chmod", Form::Call, "file system"),
    ("chown", Form::Call, "file system"),
    ("opendir", Form::Call, "file system"),
    ("readdir", Form::Call, "file system"),
    ("stat", Form::Call, "file system"),
    ("lstat", Form::Call, "file system"),
    ("fstat", Form::Call, "file system"),
    ("access", Form::Call, "file system"),
    ("truncate", Form::Call, "file system"),
    ("ftruncate", Form::Call, "file system"),
    ("ioctl", Form::Call, "device control"),
    ("fcntl", Form::Call, "file descriptors"),
    ("fcntl64", Form::Call, "file descriptors"),
    ("close_range", Form::Call, "file descriptors"),
    ("pipe2", Form::Call, "file descriptors"),
    ("eventfd", Form::Call, "file descriptors"),
    ("signalfd", Form::Call, "file descriptors"),
    ("timerfd_create", Form::Call, "file descriptors"),
    ("dup", Form::Call, "file descriptors"),
    ("dup2", Form::Call, "file descriptors"),
    ("dup3", Form::Call, "file descriptors"),
    ("pipe", Form::Call, "file descriptors"),
    ("mkfifo", Form::Call, "file descriptors"),
    // Network.
    ("socket", Form::Call, "network"),
    ("socketpair", Form::Call, "network"),
    ("connect", Form::Call, "network"),
    ("bind", Form::CallNotStd, "network"),
    ("listen", Form::Call, "network"),
    ("accept", Form::Call, "network"),
    ("accept4", Form::Call, "network"),
    ("send", Form::Call, "network"),
    ("sendto", Form::Call, "network"),
    ("sendmsg", Form::Call, "network"),
    ("recv", Form::Call, "network"),
    ("recvfrom", Form::Call, "network"),
    ("recvmsg", Form::Call, "network"),
    ("getaddrinfo", Form::Call, "network"),
    ("gethostbyname", Form::Call, "network"),
    ("setsockopt", Form::Call, "network"),
    ("select", Form::Call, "network"),
    ("poll", Form::Call, "network"),
    ("ppoll", Form::Call, "network"),
    ("pselect", Form::Call, "network"),
    ("getsockopt", Form::Call, "network"),
    ("getpeername", Form::Call, "network"),
    ("gethostbyaddr", Form::Call, "network"),
    ("inet_pton", Form::Call, "network"),
    ("inet_addr", Form::Call, "network"),
    // Environment.
    ("getenv", Form::Call, "the environment"),
    ("secure_getenv", Form::Call, "the environment"),
    ("setenv", Form::Call, "the environment"),
    ("unsetenv", Form::Call, "the environment"),
    ("putenv", Form::Call, "the environment"),
    ("clearenv", Form::Call, "the environment"),
    ("environ", Form::Any, "the environment"),
    ("__environ", Form::Any, "the environment"),
    ("getauxval", Form::Call, "the environment"),
    ("getlogin", Form::Call, "the environment"),
    ("getpwnam", Form::Call, "the environment"),
    ("getpwuid", Form::Call, "the environment"),
    ("gethostname", Form::Call, "the environment"),
    ("uname", Form::Call, "the environment"),
    ("sysconf", Form::Call, "the environment"),
    ("sysinfo", Form::Call, "the environment"),
    // Threads.
    ("thread", Form::StdOnly, "threads"),
    ("jthread", Form::StdOnly, "threads"),
    ("this_thread", Form::StdOnly, "threads"),
    ("async", Form::StdOnly, "threads"),
    ("thrd_create", Form::Call, "threads"),
    // Dynamic loading and memory mapping.
    ("dlopen", Form::Call, "dynamic loading"),
    ("dlmopen", Form::Call, "dynamic loading"),
    ("dlsym", Form::Call, "dynamic loading"),
    ("dlvsym", Form::Call, "dynamic loading"),
    ("dlclose", Form::Call, "dynamic loading"),
    ("mmap", Form::Call, "memory mapping"),
    ("mmap64", Form::Call, "memory mapping"),
    ("munmap", Form::Call, "memory mapping"),
    ("madvise", Form::Call, "memory mapping"),
    ("mlock", Form::Call, "memory mapping"),
    ("mincore", Form::Call, "memory mapping"),
    ("msync", Form::Call, "memory mapping"),
    ("shmdt", Form::Call, "shared memory"),
    ("shmctl", Form::Call, "shared memory"),
    ("mprotect", Form::Call, "memory mapping"),
    ("mremap", Form::Call, "memory mapping"),
    ("brk", Form::Call, "memory mapping"),
    ("sbrk", Form::Call, "memory mapping"),
    ("shmget", Form::Call, "shared memory"),
    ("shmat", Form::Call, "shared memory"),
    ("memfd_create", Form::Call, "shared memory"),
    ("alloca", Form::Call, "unbounded stack allocation"),
    ("__builtin_alloca", Form::Call, "unbounded stack allocation"),
    // Clocks and sleeping (results must not depend on time).
    ("time", Form::Call, "clocks"),
    ("clock", Form::Call, "clocks"),
    ("clock_gettime", Form::Call, "clocks"),
    ("gettimeofday", Form::Call, "clocks"),
    ("clock_getres", Form::Call, "clocks"),
    ("getrusage", Form::Call, "clocks"),
    ("times", Form::Call, "clocks"),
    ("timer_create", Form::Call, "clocks"),
    ("setitimer", Form::Call, "clocks"),
    ("chrono", Form::StdOnly, "clocks"),
    ("__rdtsc", Form::Call, "clocks"),
    ("__builtin_ia32_rdtsc", Form::Call, "clocks"),
    ("__builtin_readcyclecounter", Form::Call, "clocks"),
    ("sleep", Form::Call, "sleeping"),
    ("usleep", Form::Call, "sleeping"),
    ("nanosleep", Form::Call, "sleeping"),
    ("clock_nanosleep", Form::Call, "sleeping"),
    ("sleep_for", Form::StdOnly, "sleeping"),
    ("sleep_until", Form::StdOnly, "sleeping"),
    // Hidden global state.
    ("rand", Form::Call, "libc random state"),
    ("srand", Form::Call, "libc random state"),
    ("random", Form::Call, "libc random state"),
    ("srandom", Form::Call, "libc random state"),
    ("drand48", Form::Call, "libc random state"),
    ("lrand48", Form::Call, "libc random state"),
    ("random_device", Form::StdOnly, "the OS random source"),
];

/// Forbidden names the sandbox makes harmless, reported as notes (rule
/// [`Rule::SandboxedApi`]): the worker's environment, process ids, clocks
/// and random state are the same for every launch of a candidate, and its
/// sleep only spends its own time limit. Public operators use them for
/// logging and debug switches.
const SANDBOXED: &[&str] = &[
    "getenv",
    "secure_getenv",
    "getpid",
    "getppid",
    "gettid",
    "time",
    "clock",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "getrusage",
    "times",
    "chrono",
    "sleep",
    "usleep",
    "nanosleep",
    "clock_nanosleep",
    "sleep_for",
    "sleep_until",
    "rand",
    "srand",
    "random",
    "srandom",
    "drand48",
    "lrand48",
    "random_device",
    "uname",
    "sysconf",
    "sysinfo",
    "gethostname",
    "getlogin",
    "getauxval",
    "getpwnam",
    "getpwuid",
    "pthread_self",
    "pthread_t",
    "pthread_equal",
];

/// Prefixes of forbidden API families.
const FORBIDDEN_PREFIXES: &[(&str, &str)] = &[
    ("posix_spawn", "program execution"),
    ("__builtin_exec", "program execution"),
    ("__builtin_fork", "process creation"),
    ("__builtin__exit", "process exit"),
    ("__builtin_fopen", "file I/O"),
    ("__builtin_open", "file I/O"),
    ("__builtin_fprintf", "file I/O"),
    ("__builtin_fputs", "file I/O"),
    ("__builtin_fwrite", "file I/O"),
    ("__builtin_puts", "file I/O"),
    ("__builtin_putchar", "file I/O"),
    ("__builtin_abort", "process exit"),
    ("__builtin_exit", "process exit"),
    ("sigaction", "signals"),
    ("sigprocmask", "signals"),
    ("pthread_", "threads"),
    ("omp_", "threads"),
    ("epoll_", "network"),
    ("shm_", "shared memory"),
    ("sched_", "process control"),
    ("__libc_", "libc internals"),
    ("io_uring_", "system calls"),
];

/// Heap allocation, forbidden in kernel code.
const KERNEL_HEAP: &[(&str, Form)] = &[
    ("malloc", Form::Any),
    ("calloc", Form::Any),
    ("realloc", Form::Any),
    ("aligned_alloc", Form::Any),
    ("posix_memalign", Form::Any),
    ("memalign", Form::Any),
    ("valloc", Form::Any),
    ("pvalloc", Form::Any),
    ("free", Form::Call),
    ("vector", Form::StdOnly),
    ("string", Form::StdOnly),
    ("basic_string", Form::StdOnly),
    ("map", Form::StdOnly),
    ("unordered_map", Form::StdOnly),
    ("set", Form::StdOnly),
    ("unordered_set", Form::StdOnly),
    ("list", Form::StdOnly),
    ("forward_list", Form::StdOnly),
    ("deque", Form::StdOnly),
    ("function", Form::StdOnly),
    ("unique_ptr", Form::StdOnly),
    ("shared_ptr", Form::StdOnly),
    ("make_unique", Form::StdOnly),
    ("make_shared", Form::StdOnly),
    ("allocator", Form::StdOnly),
];

/// Attribute names that run code outside a launch or change code
/// generation (compared without surrounding underscores).
const BAD_ATTRIBUTES: &[&str] = &[
    "constructor",
    "destructor",
    "init_priority",
    "section",
    "ifunc",
    "alias",
    "weakref",
    "optimize",
    "target",
];

/// Directives allowed besides `include` and `pragma`.
const PLAIN_DIRECTIVES: &[&str] = &[
    "", "define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif",
    "error", "warning",
];

fn is(t: Option<&Tok>, text: &str) -> bool {
    t.is_some_and(|t| t.kind != TokKind::Str && t.kind != TokKind::Char && t.text == text)
}

/// How a name at `i` is qualified: None = unqualified, Some("") = `::name`,
/// Some("std") = `std::name`, Some(other) = `other::name`.
fn qualifier(toks: &[Tok], i: usize) -> Option<&str> {
    if i == 0 || !is(toks.get(i - 1), "::") {
        return None;
    }
    match i.checked_sub(2).and_then(|j| toks.get(j)) {
        Some(t) if t.kind == TokKind::Ident => Some(t.text.as_str()),
        _ => Some(""),
    }
}

/// Index of the first token of the (possibly qualified) name ending at `i`.
fn name_start(toks: &[Tok], i: usize) -> usize {
    let mut k = i;
    while k >= 1 && is(toks.get(k - 1), "::") {
        if k >= 2 && toks[k - 2].kind == TokKind::Ident {
            k -= 2;
        } else {
            k -= 1;
            break;
        }
    }
    k
}

fn is_member(toks: &[Tok], i: usize) -> bool {
    i > 0
        && matches!(toks[i - 1].text.as_str(), "." | "->" | ".*" | "->*")
        && toks[i - 1].kind == TokKind::Punct
}

/// Namespaces that stand for `std` or the global namespace: aliases
/// (`namespace n = std;`) and namespaces that pull names in from them
/// (`namespace n { using namespace std; }`, `using ::open;`), so that
/// `n::getenv` is treated as `std::getenv`.
pub(crate) fn std_like_namespaces(toks: &[Tok]) -> std::collections::BTreeSet<String> {
    let mut out: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    // Aliases, resolved to a fixed point.
    let mut aliases: Vec<(String, String)> = Vec::new();
    for w in toks.windows(4) {
        if id(&w[0], "namespace") && w[1].kind == TokKind::Ident && p(&w[2], "=") {
            let target = if p(&w[3], "::") {
                ""
            } else {
                w[3].text.as_str()
            };
            aliases.push((w[1].text.clone(), target.to_string()));
        }
    }
    // Namespaces (by their innermost name) that hold a using of std/::.
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut pending: Option<String> = None;
    for (k, t) in toks.iter().enumerate() {
        if id(t, "namespace") {
            pending = toks
                .get(k + 1)
                .filter(|n| n.kind == TokKind::Ident)
                .map(|n| n.text.clone());
            continue;
        }
        if p(t, "{") {
            stack.push(pending.take());
            continue;
        }
        if p(t, ";") {
            pending = None;
        }
        if p(t, "}") {
            stack.pop();
            continue;
        }
        if id(t, "using") {
            let next = toks.get(k + 1);
            let after = toks.get(k + 2);
            let pulls = (next.is_some_and(|n| id(n, "namespace"))
                && after.is_some_and(|a| id(a, "std") || p(a, "::")))
                || next.is_some_and(|n| p(n, "::") || id(n, "std"));
            if pulls {
                if let Some(Some(name)) = stack.last() {
                    out.insert(name.clone());
                }
            }
        }
    }
    loop {
        let before = out.len();
        for (alias, target) in &aliases {
            if target.is_empty() || target == "std" || out.contains(target) {
                out.insert(alias.clone());
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

/// Whether the name at `i` is called, also through parentheses
/// (`(open)(...)`, `(::open)(...)`); a name after a type (`void wait()`)
/// is declared, not called.
fn is_called(toks: &[Tok], i: usize) -> bool {
    let start = name_start(toks, i);
    if is(toks.get(i + 1), "(") {
        let declared = start >= 1
            && match &toks[start - 1] {
                t if t.kind == TokKind::Ident => !NOT_A_TYPE.contains(&t.text.as_str()),
                t => t.kind == TokKind::Punct && matches!(t.text.as_str(), "*" | "&" | ">"),
            };
        return !declared;
    }
    start >= 1
        && is(toks.get(start - 1), "(")
        && is(toks.get(i + 1), ")")
        && is(toks.get(i + 2), "(")
}

/// Whether the name at `i` has its address taken (`&open`, `&::open`).
fn address_taken(toks: &[Tok], i: usize) -> bool {
    let start = name_start(toks, i);
    if start == 0 || !is(toks.get(start - 1), "&") {
        return false;
    }
    // Unary `&`: what precedes it cannot end an operand.
    match start.checked_sub(2).and_then(|j| toks.get(j)) {
        None => true,
        Some(t) => match t.kind {
            TokKind::Punct => !matches!(t.text.as_str(), ")" | "]"),
            TokKind::Ident => matches!(t.text.as_str(), "return" | "case"),
            _ => false,
        },
    }
}

/// Names the tokens declare as variables or parameters (`TPipe pipe;`,
/// `int read = 0`, `f(int write)`): taking their address is not taking a
/// function's.
pub(crate) fn declared_names(toks: &[Tok]) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let is_type = |t: &Tok| match t.kind {
        TokKind::Ident => !NOT_A_TYPE.contains(&t.text.as_str()),
        TokKind::Punct => t.text == ">",
        _ => false,
    };
    for (k, w) in toks.windows(3).enumerate() {
        // `T name`, `T* name`, `T& name` (a `*` or `&` after a type, not
        // after an operator: `= &open;` takes an address).
        let typed = is_type(&w[0])
            || (w[0].kind == TokKind::Punct
                && matches!(w[0].text.as_str(), "*" | "&" | "&&")
                && k > 0
                && is_type(&toks[k - 1]));
        if typed
            && w[1].kind == TokKind::Ident
            && w[2].kind == TokKind::Punct
            && matches!(w[2].text.as_str(), ";" | "=" | "," | ")" | "[" | "{")
        {
            out.insert(w[1].text.clone());
        }
    }
    out
}

/// Names the tokens declare as functions of their own (`aifunc void
/// wait() {`, `int open(Foo);`): calling them is calling the operator's
/// function (whatever C++ resolves it to, the library's imports show).
pub(crate) fn declared_functions(toks: &[Tok]) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for (k, w) in toks.windows(3).enumerate() {
        let typed = match w[0].kind {
            TokKind::Ident => !NOT_A_TYPE.contains(&w[0].text.as_str()) && w[0].text != "operator",
            TokKind::Punct => matches!(w[0].text.as_str(), "*" | "&" | ">") && k > 0,
            _ => false,
        };
        if typed
            && w[1].kind == TokKind::Ident
            && p(&w[2], "(")
            && !is(toks.get(k.wrapping_sub(1)), "::")
            && has_body(toks, k + 2)
        {
            out.insert(w[1].text.clone());
        }
    }
    out
}

/// Whether the parameter list opening at `open` is followed by a function
/// body (a definition, not a mere declaration of a library function).
fn has_body(toks: &[Tok], open: usize) -> bool {
    let mut depth = 0i32;
    let mut k = open;
    while let Some(t) = toks.get(k) {
        if p(t, "(") {
            depth += 1;
        } else if p(t, ")") {
            depth -= 1;
            if depth == 0 {
                break;
            }
        }
        k += 1;
    }
    for t in toks.iter().skip(k + 1).take(4) {
        if p(t, "{") || p(t, ":") {
            return true;
        }
        if !matches!(
            t.text.as_str(),
            "const" | "noexcept" | "override" | "final" | "volatile" | "&" | "&&"
        ) {
            return false;
        }
    }
    false
}

/// What the checks of one token stream know about its names.
pub(crate) struct Names {
    /// Namespaces that stand for `std` ([`std_like_namespaces`]).
    std_like: std::collections::BTreeSet<String>,
    /// Names declared as variables ([`declared_names`]) or as functions of
    /// the operator's own ([`declared_functions`]).
    variables: std::collections::BTreeSet<String>,
}

impl Names {
    fn of(toks: &[Tok]) -> Names {
        Names {
            std_like: std_like_namespaces(toks),
            variables: declared_names(toks),
        }
    }
}

fn form_matches(toks: &[Tok], i: usize, form: Form, names: &Names) -> bool {
    if is_member(toks, i) {
        return false;
    }
    let q = match qualifier(toks, i) {
        Some(q) if names.std_like.contains(q) => Some("std"),
        q => q,
    };
    let own = names.variables.contains(&toks[i].text);
    let call = !own && (is_called(toks, i) || address_taken(toks, i));
    match form {
        Form::Any => matches!(q, None | Some("") | Some("std")),
        Form::Call => call && matches!(q, None | Some("") | Some("std")),
        Form::CallNotStd => call && matches!(q, None | Some("")),
        Form::StdOnly => q == Some("std"),
    }
}

fn strip_underscores(name: &str) -> &str {
    name.trim_start_matches("__").trim_end_matches("__")
}

/// Name rules on code tokens; `unit_variables` are the names the other
/// files of the unit declare as variables ([`declared_names`]).
pub(crate) fn check_tokens(
    toks: &[Tok],
    role: Role,
    unit_variables: &std::collections::BTreeSet<String>,
    push: &mut impl FnMut(u32, Rule, String),
) {
    let mut names = Names::of(toks);
    names.variables.extend(unit_variables.iter().cloned());
    for (i, t) in toks.iter().enumerate() {
        if p(t, "[") && is(toks.get(i + 1), "[") {
            check_attribute_list(toks, i, push);
            continue;
        }
        if t.kind != TokKind::Ident {
            continue;
        }
        let name = t.text.as_str();
        match name {
            "asm" | "__asm__" | "__asm" => {
                push(
                    t.line,
                    Rule::InlineAsm,
                    format!("inline assembly (`{name}`)"),
                );
                continue;
            }
            "volatile" | "__volatile__" | "__volatile" => {
                push(
                    t.line,
                    Rule::Volatile,
                    "`volatile` is not allowed".to_string(),
                );
                continue;
            }
            "thread_local" | "__thread" | "_Thread_local" => {
                push(
                    t.line,
                    Rule::MutableStatic,
                    format!("`{name}` state survives a launch"),
                );
                continue;
            }
            "_Pragma" | "__pragma" => {
                push(t.line, Rule::Pragma, format!("`{name}` operator"));
                continue;
            }
            "__attribute__" | "__attribute" => {
                check_attribute(toks, i, push);
                continue;
            }
            _ => {}
        }
        // [[gnu::constructor]] and friends.
        if BAD_ATTRIBUTES.contains(&strip_underscores(name))
            && is(toks.get(i.wrapping_sub(1)), "::")
            && i >= 2
            && matches!(toks[i - 2].text.as_str(), "gnu" | "__gnu__" | "clang")
        {
            push(
                t.line,
                Rule::Attribute,
                format!("attribute `{}::{name}`", toks[i - 2].text),
            );
            continue;
        }
        let rule = if SANDBOXED.contains(&name) {
            Rule::SandboxedApi
        } else {
            Rule::ForbiddenApi
        };
        if let Some(&(_, form, what)) = FORBIDDEN.iter().find(|(n, _, _)| *n == name) {
            if form_matches(toks, i, form, &names) {
                push(t.line, rule, format!("`{name}` ({what})"));
            }
            continue;
        }
        if let Some(&(_, what)) = FORBIDDEN_PREFIXES.iter().find(|(p, _)| name.starts_with(p)) {
            if form_matches(toks, i, Form::Any, &names) {
                push(t.line, rule, format!("`{name}` ({what})"));
            }
            continue;
        }
        if role == Role::Kernel {
            let heap = match name {
                "new" => !is_member(toks, i),
                "delete" => !is_member(toks, i) && !is(toks.get(i.wrapping_sub(1)), "="),
                _ => KERNEL_HEAP
                    .iter()
                    .find(|(n, _)| *n == name)
                    .is_some_and(|&(_, form)| form_matches(toks, i, form, &names)),
            };
            if heap {
                push(
                    t.line,
                    Rule::KernelHeap,
                    format!("`{name}`: kernel code may not allocate heap memory; use TPipe/TBuf/TQue buffers"),
                );
            }
        }
    }
}

/// `[[ ... ]]` at `i`: flags bad attributes named with a namespace, the
/// `[[gnu::constructor]]` form (found by [`check_tokens`] itself) and the
/// `[[using gnu: constructor, ...]]` form.
fn check_attribute_list(toks: &[Tok], i: usize, push: &mut impl FnMut(u32, Rule, String)) {
    let mut k = i + 2;
    let mut ns: Option<&str> = None;
    if is(toks.get(k), "using") && is(toks.get(k + 2), ":") {
        ns = toks.get(k + 1).map(|t| t.text.as_str());
        k += 3;
    }
    let Some(ns) = ns else { return };
    if !matches!(ns, "gnu" | "__gnu__" | "clang") {
        return;
    }
    let mut depth = 0i32;
    while let Some(t) = toks.get(k) {
        match t.text.as_str() {
            "(" | "[" if t.kind == TokKind::Punct => depth += 1,
            ")" if t.kind == TokKind::Punct => depth -= 1,
            "]" if t.kind == TokKind::Punct => {
                if depth == 0 {
                    return;
                }
                depth -= 1;
            }
            name if t.kind == TokKind::Ident
                && depth == 0
                && BAD_ATTRIBUTES.contains(&strip_underscores(name)) =>
            {
                push(
                    t.line,
                    Rule::Attribute,
                    format!("attribute `{name}` (in `[[using {ns}: ...]]`)"),
                );
            }
            _ => {}
        }
        k += 1;
    }
}

/// `__attribute__((...))`: flags the bad names inside the parentheses.
fn check_attribute(toks: &[Tok], i: usize, push: &mut impl FnMut(u32, Rule, String)) {
    let mut depth = 0i32;
    for t in toks.iter().skip(i + 1) {
        match t.text.as_str() {
            "(" if t.kind == TokKind::Punct => depth += 1,
            ")" if t.kind == TokKind::Punct => {
                depth -= 1;
                if depth <= 0 {
                    return;
                }
            }
            name if t.kind == TokKind::Ident
                && depth >= 2
                && BAD_ATTRIBUTES.contains(&strip_underscores(name)) =>
            {
                push(
                    t.line,
                    Rule::Attribute,
                    format!("`__attribute__(({name}))`"),
                );
            }
            _ => {}
        }
        if depth == 0 {
            return;
        }
    }
}

/// Name rules on the tokens of a directive (macro bodies, conditions).
pub(crate) fn check_tokens_in_directive(
    toks: &[Tok],
    role: Role,
    unit_variables: &std::collections::BTreeSet<String>,
    push: &mut impl FnMut(u32, Rule, String),
) {
    check_tokens(toks, role, unit_variables, push);
}

/// Directive rules: which directives, and token pasting.
pub(crate) fn check_directives(dirs: &[Directive], push: &mut impl FnMut(u32, Rule, String)) {
    for d in dirs {
        let name = d.name.as_str();
        if name != "pragma" && name != "include" && !PLAIN_DIRECTIVES.contains(&name) {
            push(
                d.line,
                Rule::Directive,
                format!("`#{name}` directive is not allowed"),
            );
        }
        for t in &d.tokens {
            if t.kind == TokKind::Punct && t.text == "##" {
                push(
                    t.line,
                    Rule::TokenPaste,
                    "token pasting (`##`) can assemble names; what it assembles is checked after preprocessing".to_string(),
                );
            }
        }
    }
}

/// Pragma rules: `#pragma` lines other than once, pack, unroll and
/// diagnostics (e.g. `GCC optimize`).
pub(crate) fn check_pragmas(dirs: &[Directive], push: &mut impl FnMut(u32, Rule, String)) {
    for d in dirs.iter().filter(|d| d.name == "pragma") {
        let words: Vec<&str> = d.tokens.iter().take(2).map(|t| t.text.as_str()).collect();
        let ok = matches!(
            words.as_slice(),
            ["once", ..]
                | ["pack", ..]
                | ["unroll", ..]
                | ["GCC" | "clang", "unroll" | "diagnostic"]
        );
        if !ok {
            let text: Vec<&str> = d.tokens.iter().map(|t| t.text.as_str()).collect();
            push(
                d.line,
                Rule::Pragma,
                format!(
                    "`#pragma {}` (allowed: once, pack, unroll, GCC/clang unroll and diagnostic)",
                    text.join(" ")
                ),
            );
        }
    }
}

/// A scope of the tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Global or namespace scope; `extern_c` inside `extern "C" { }`.
    Namespace { extern_c: bool },
    /// A class, struct or union body.
    Class,
    /// A function body or a block inside one.
    Function,
    /// Braces of an initializer, enum or argument: skipped.
    Expr,
}

struct Frame {
    scope: Scope,
    /// Tokens of the statement being read (not used in `Expr`).
    stmt: Vec<Tok>,
    /// Parenthesis/bracket depth inside the statement.
    depth: i32,
}

fn placeholder(line: u32) -> Tok {
    Tok {
        kind: TokKind::Ident,
        text: "<class>".to_string(),
        line,
    }
}

/// Tokens not inside `[[ ... ]]`.
fn without_attributes(stmt: &[Tok]) -> Vec<&Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < stmt.len() {
        if is(stmt.get(i), "[") && is(stmt.get(i + 1), "[") {
            let mut depth = 0i32;
            while i < stmt.len() {
                match stmt[i].text.as_str() {
                    "[" if stmt[i].kind == TokKind::Punct => depth += 1,
                    "]" if stmt[i].kind == TokKind::Punct => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
            continue;
        }
        out.push(&stmt[i]);
        i += 1;
    }
    out
}

fn p(t: &Tok, text: &str) -> bool {
    t.kind == TokKind::Punct && t.text == text
}

fn id(t: &Tok, text: &str) -> bool {
    t.kind == TokKind::Ident && t.text == text
}

/// Words after which an identifier is not a declared name.
const NOT_A_NAME: &[&str] = &[
    "const",
    "constexpr",
    "override",
    "final",
    "noexcept",
    "volatile",
    "mutable",
    "static",
    "inline",
    "extern",
    "default",
    "delete",
    "explicit",
    "virtual",
    "return",
    "throw",
    "__aicore__",
    "__global__",
];

/// Words that cannot precede a declared name as its type.
const NOT_A_TYPE: &[&str] = &[
    "return",
    "throw",
    "case",
    "goto",
    "else",
    "do",
    "new",
    "delete",
    "sizeof",
    "co_return",
    "co_yield",
    "typedef",
    "using",
];

/// The declarator head: tokens before the first top-level `=`, `{`, `[` or
/// `:` (initializer, array bound, bit field).
fn head<'a>(toks: &[&'a Tok]) -> Vec<&'a Tok> {
    let mut depth = 0i32;
    let mut out = Vec::new();
    for &t in toks {
        if t.kind == TokKind::Punct {
            match t.text.as_str() {
                "(" => depth += 1,
                ")" => depth -= 1,
                "=" | "{" | "[" | ":" if depth == 0 => break,
                _ => {}
            }
        }
        out.push(t);
    }
    out
}

/// Does the statement declare a variable (not a function, type or macro
/// call)? Returns the variable's name.
fn declared_variable(stmt: &[Tok]) -> Option<String> {
    let toks = without_attributes(stmt);
    let head = head(&toks);
    if head.iter().any(|t| id(t, "operator")) {
        return None;
    }
    let last = *head.last()?;
    if p(last, ")") {
        // Matching '('.
        let mut depth = 0i32;
        let mut open = None;
        for (k, t) in head.iter().enumerate().rev() {
            if p(t, ")") {
                depth += 1;
            } else if p(t, "(") {
                depth -= 1;
                if depth == 0 {
                    open = Some(k);
                    break;
                }
            }
        }
        let open = open?;
        // `int x(0);`: direct initialisation with a literal.
        let first_arg = head.get(open + 1)?;
        let literal = matches!(
            first_arg.kind,
            TokKind::Number | TokKind::Str | TokKind::Char
        ) || id(first_arg, "true")
            || id(first_arg, "false")
            || id(first_arg, "nullptr");
        if literal && open > 0 && head[open - 1].kind == TokKind::Ident {
            return Some(head[open - 1].text.clone());
        }
        // `void (*fp)(int)`: a pointer or reference declarator in parens.
        let mut depth = 0i32;
        for (k, t) in head.iter().enumerate() {
            if p(t, "(") {
                if depth == 0 {
                    if let Some(n) = head.get(k + 1) {
                        if n.kind == TokKind::Punct
                            && matches!(n.text.as_str(), "*" | "&" | "&&" | "^")
                        {
                            let name = head[k + 1..]
                                .iter()
                                .find(|t| t.kind == TokKind::Ident)
                                .map(|t| t.text.clone())
                                .unwrap_or_default();
                            return Some(name);
                        }
                    }
                }
                depth += 1;
            } else if p(t, ")") {
                depth -= 1;
            }
        }
        return None;
    }
    if last.kind != TokKind::Ident || NOT_A_NAME.contains(&last.text.as_str()) {
        return None;
    }
    // Skip a qualified name (`Foo::count`) back to what precedes it.
    let mut k = head.len() - 1;
    while k >= 2 && p(head[k - 1], "::") && head[k - 2].kind == TokKind::Ident {
        k -= 2;
    }
    if k >= 1 && p(head[k - 1], "::") {
        k -= 1;
    }
    let before = head.get(k.checked_sub(1)?)?;
    let typed = match before.kind {
        TokKind::Ident => !NOT_A_TYPE.contains(&before.text.as_str()),
        TokKind::Punct => matches!(before.text.as_str(), "*" | "&" | "&&" | ">" | ">>"),
        _ => false,
    };
    typed.then(|| last.text.clone())
}

/// Is the declared object itself const (`constexpr`, or `const` with no
/// pointer after it)?
fn is_const(stmt: &[Tok]) -> bool {
    let toks = without_attributes(stmt);
    let head = head(&toks);
    if head.iter().any(|t| id(t, "constexpr")) {
        return true;
    }
    let last_star = head.iter().rposition(|t| p(t, "*"));
    head.iter()
        .enumerate()
        .any(|(k, t)| id(t, "const") && !matches!(last_star, Some(s) if k <= s))
}

fn top_level_has(stmt: &[Tok], text: &str) -> bool {
    let mut depth = 0i32;
    for t in stmt {
        if depth == 0 && t.text == text && t.kind != TokKind::Str && t.kind != TokKind::Char {
            return true;
        }
        if t.kind == TokKind::Punct {
            match t.text.as_str() {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                _ => {}
            }
        }
    }
    false
}

fn first_line(stmt: &[Tok]) -> u32 {
    stmt.iter()
        .find(|t| t.text != "<class>")
        .map_or(0, |t| t.line)
}

/// Kind of the braces opened at namespace or class scope.
fn classify_brace(stmt: &[Tok], parent: Scope) -> Scope {
    let toks = without_attributes(stmt);
    if toks.is_empty() {
        return Scope::Expr;
    }
    if id(toks[0], "namespace")
        || (id(toks[0], "inline") && toks.get(1).is_some_and(|t| id(t, "namespace")))
    {
        let extern_c = matches!(parent, Scope::Namespace { extern_c: true });
        return Scope::Namespace { extern_c };
    }
    if toks.len() == 2 && id(toks[0], "extern") && toks[1].kind == TokKind::Str {
        return Scope::Namespace { extern_c: true };
    }
    // Skip `template < ... >`.
    let mut k = 0;
    if id(toks[0], "template") && toks.get(1).is_some_and(|t| p(t, "<")) {
        let mut depth = 0i32;
        k = 1;
        while k < toks.len() {
            match toks[k].text.as_str() {
                "<" if toks[k].kind == TokKind::Punct => depth += 1,
                ">" if toks[k].kind == TokKind::Punct => depth -= 1,
                ">>" if toks[k].kind == TokKind::Punct => depth -= 2,
                _ => {}
            }
            k += 1;
            if depth <= 0 {
                break;
            }
        }
    }
    if let Some(t) = toks.get(k) {
        if id(t, "class") || id(t, "struct") || id(t, "union") {
            return Scope::Class;
        }
        if id(t, "enum") {
            return Scope::Expr;
        }
    }
    let has_paren = toks.iter().any(|t| p(t, "("));
    if toks.iter().any(|t| id(t, "operator")) && has_paren {
        return Scope::Function;
    }
    let mut depth = 0i32;
    let mut seen_close = false;
    let mut in_init_list = false;
    for t in &toks {
        match t.text.as_str() {
            "(" if t.kind == TokKind::Punct => depth += 1,
            ")" if t.kind == TokKind::Punct => {
                depth -= 1;
                if depth == 0 {
                    seen_close = true;
                }
            }
            "=" if t.kind == TokKind::Punct && depth == 0 => return Scope::Expr,
            ":" if t.kind == TokKind::Punct && depth == 0 && seen_close => in_init_list = true,
            _ => {}
        }
    }
    if !has_paren {
        return Scope::Expr;
    }
    let last = toks[toks.len() - 1];
    if in_init_list && (last.kind == TokKind::Ident || p(last, ">")) {
        // `: member{...}` inside a constructor's initializer list.
        return Scope::Expr;
    }
    Scope::Function
}

/// Does `{` open a block (true) or an initializer (false) in a function?
fn opens_block(stmt: &[Tok]) -> bool {
    let Some(last) = stmt.last() else { return true };
    match last.kind {
        TokKind::Ident => matches!(
            last.text.as_str(),
            "else" | "do" | "try" | "const" | "noexcept" | "mutable" | "override" | "final"
        ),
        TokKind::Punct => !matches!(last.text.as_str(), ">" | ">>" | "=" | "," | "("),
        _ => false,
    }
}

/// The statement without a leading `template <...>` header.
fn without_template_header(stmt: &[Tok]) -> &[Tok] {
    if !(stmt.first().is_some_and(|t| id(t, "template")) && is(stmt.get(1), "<")) {
        return stmt;
    }
    let mut depth = 0i32;
    for (k, t) in stmt.iter().enumerate().skip(1) {
        if t.kind == TokKind::Punct {
            match t.text.as_str() {
                "<" => depth += 1,
                ">" => depth -= 1,
                ">>" => depth -= 2,
                _ => {}
            }
        }
        if depth <= 0 {
            return &stmt[k + 1..];
        }
    }
    stmt
}

/// Analyses a finished statement (at its `;`).
fn end_statement(scope: Scope, stmt: &[Tok], push: &mut impl FnMut(u32, Rule, String)) {
    // A variable template is a variable like any other.
    let stmt = without_template_header(stmt);
    let toks = without_attributes(stmt);
    let Some(first) = toks.first() else { return };
    let line = first_line(stmt);
    if matches!(
        first.text.as_str(),
        "using"
            | "typedef"
            | "template"
            | "static_assert"
            | "friend"
            | "namespace"
            | "class"
            | "struct"
            | "union"
            | "enum"
    ) && first.kind == TokKind::Ident
    {
        return;
    }
    if toks.iter().any(|t| id(t, "extern")) {
        let name = toks
            .iter()
            .take_while(|t| !p(t, "(") && !p(t, "="))
            .filter(|t| t.kind == TokKind::Ident)
            .last()
            .map_or_else(String::new, |t| t.text.clone());
        push(
            line,
            Rule::ExternDecl,
            format!("`extern` declaration of `{name}` (declare nothing from outside the operator)"),
        );
        return;
    }
    match scope {
        Scope::Namespace { extern_c } => {
            if extern_c && top_level_has(stmt, "(") {
                push(
                    line,
                    Rule::ExternDecl,
                    "function declared inside an `extern \"C\"` block".to_string(),
                );
                return;
            }
            if let Some(name) = declared_variable(stmt) {
                if !is_const(stmt) {
                    push(
                        line,
                        Rule::MutableStatic,
                        format!("mutable variable `{name}` at namespace scope survives a launch (make it constexpr or move it into the kernel)"),
                    );
                }
            }
        }
        Scope::Class | Scope::Function => {
            if !top_level_has(stmt, "static") {
                return;
            }
            if let Some(name) = declared_variable(stmt) {
                if !is_const(stmt) {
                    let what = if scope == Scope::Class {
                        "static data member"
                    } else {
                        "static local variable"
                    };
                    push(
                        line,
                        Rule::MutableStatic,
                        format!("mutable {what} `{name}` survives a launch (use static constexpr or a member)"),
                    );
                }
            }
        }
        Scope::Expr => {}
    }
}

/// Tracks scopes over the code tokens and reports mutable state that
/// survives a launch and `extern` declarations.
pub(crate) fn check_scopes(toks: &[Tok], push: &mut impl FnMut(u32, Rule, String)) {
    let mut frames = vec![Frame {
        scope: Scope::Namespace { extern_c: false },
        stmt: Vec::new(),
        depth: 0,
    }];
    let mut prev: Option<&Tok> = None;
    for t in toks {
        let punct = t.kind == TokKind::Punct;
        let top = frames.len() - 1;
        let scope = frames[top].scope;
        if scope == Scope::Expr {
            if punct && t.text == "{" {
                let lambda =
                    prev.is_some_and(|pv| p(pv, ")") || id(pv, "mutable") || id(pv, "noexcept"));
                frames.push(Frame {
                    scope: if lambda { Scope::Function } else { Scope::Expr },
                    stmt: Vec::new(),
                    depth: 0,
                });
            } else if punct && t.text == "}" {
                close(&mut frames, t);
            }
            prev = Some(t);
            continue;
        }
        let frame = &mut frames[top];
        if punct {
            match t.text.as_str() {
                "(" | "[" => {
                    frame.depth += 1;
                    frame.stmt.push(t.clone());
                }
                ")" | "]" => {
                    frame.depth = (frame.depth - 1).max(0);
                    frame.stmt.push(t.clone());
                }
                "{" => {
                    if frame.depth > 0 {
                        frame.stmt.push(t.clone());
                        frames.push(Frame {
                            scope: Scope::Expr,
                            stmt: Vec::new(),
                            depth: 0,
                        });
                    } else if scope == Scope::Function {
                        if opens_block(&frame.stmt) {
                            frame.stmt.clear();
                            frames.push(Frame {
                                scope: Scope::Function,
                                stmt: Vec::new(),
                                depth: 0,
                            });
                        } else {
                            frame.stmt.push(t.clone());
                            frames.push(Frame {
                                scope: Scope::Expr,
                                stmt: Vec::new(),
                                depth: 0,
                            });
                        }
                    } else {
                        let inner = classify_brace(&frame.stmt, scope);
                        match inner {
                            Scope::Expr => frame.stmt.push(t.clone()),
                            Scope::Class => frame.stmt = vec![placeholder(t.line)],
                            _ => frame.stmt.clear(),
                        }
                        frames.push(Frame {
                            scope: inner,
                            stmt: Vec::new(),
                            depth: 0,
                        });
                    }
                }
                "}" => close(&mut frames, t),
                ";" if frame.depth == 0 => {
                    let stmt = std::mem::take(&mut frame.stmt);
                    end_statement(scope, &stmt, push);
                }
                ":" if scope == Scope::Class
                    && frame.depth == 0
                    && frame.stmt.len() == 1
                    && matches!(
                        frame.stmt[0].text.as_str(),
                        "public" | "private" | "protected"
                    ) =>
                {
                    frame.stmt.clear();
                }
                _ => frame.stmt.push(t.clone()),
            }
        } else {
            frame.stmt.push(t.clone());
        }
        prev = Some(t);
    }
}

/// Handles `}`: pops the innermost scope; an initializer's braces stay part
/// of the enclosing statement.
fn close(frames: &mut Vec<Frame>, t: &Tok) {
    if frames.len() <= 1 {
        return;
    }
    let popped = frames.pop().map(|f| f.scope);
    if popped == Some(Scope::Expr) {
        if let Some(parent) = frames.last_mut() {
            if parent.scope != Scope::Expr {
                parent.stmt.push(t.clone());
            }
        }
    }
}
