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
    ("syscall", Form::Any, "raw system calls"),
    ("fork", Form::Any, "process creation"),
    ("vfork", Form::Any, "process creation"),
    ("clone", Form::Call, "process creation"),
    ("execl", Form::Any, "program execution"),
    ("execle", Form::Any, "program execution"),
    ("execlp", Form::Any, "program execution"),
    ("execv", Form::Any, "program execution"),
    ("execve", Form::Any, "program execution"),
    ("execvp", Form::Any, "program execution"),
    ("execvpe", Form::Any, "program execution"),
    ("fexecve", Form::Any, "program execution"),
    ("posix_spawn", Form::Any, "program execution"),
    ("posix_spawnp", Form::Any, "program execution"),
    ("system", Form::Call, "shell commands"),
    ("popen", Form::Any, "shell commands"),
    ("pclose", Form::Any, "shell commands"),
    ("wait", Form::Call, "process control"),
    ("waitpid", Form::Any, "process control"),
    ("waitid", Form::Any, "process control"),
    ("kill", Form::Call, "signals"),
    ("raise", Form::Call, "signals"),
    ("signal", Form::Call, "signals"),
    ("sigaction", Form::Any, "signals"),
    ("alarm", Form::Call, "signals"),
    ("abort", Form::Call, "process exit"),
    ("exit", Form::Call, "process exit"),
    ("_exit", Form::Any, "process exit"),
    ("_Exit", Form::Any, "process exit"),
    ("quick_exit", Form::Any, "process exit"),
    ("atexit", Form::Any, "exit handlers"),
    ("at_quick_exit", Form::Any, "exit handlers"),
    ("setjmp", Form::Any, "non-local jumps"),
    ("longjmp", Form::Any, "non-local jumps"),
    ("ptrace", Form::Any, "process control"),
    ("prctl", Form::Any, "process control"),
    ("getpid", Form::Any, "process identity"),
    ("getppid", Form::Any, "process identity"),
    ("setrlimit", Form::Any, "resource limits"),
    ("daemon", Form::Call, "process control"),
    ("setsid", Form::Any, "process control"),
    ("setuid", Form::Any, "process identity"),
    ("setgid", Form::Any, "process identity"),
    ("unshare", Form::Any, "namespaces"),
    ("setns", Form::Any, "namespaces"),
    ("mount", Form::Call, "file system"),
    ("personality", Form::Any, "process control"),
    ("process_vm_readv", Form::Any, "other processes' memory"),
    ("process_vm_writev", Form::Any, "other processes' memory"),
    ("perf_event_open", Form::Any, "system calls"),
    ("userfaultfd", Form::Any, "system calls"),
    ("chroot", Form::Any, "file system"),
    // Files and streams.
    ("fopen", Form::Any, "file I/O"),
    ("freopen", Form::Any, "file I/O"),
    ("fdopen", Form::Any, "file I/O"),
    ("tmpfile", Form::Any, "file I/O"),
    ("mkstemp", Form::Any, "file I/O"),
    ("open", Form::Call, "file I/O"),
    ("openat", Form::Any, "file I/O"),
    ("creat", Form::Any, "file I/O"),
    ("read", Form::Call, "file I/O"),
    ("write", Form::Call, "file I/O"),
    ("pread", Form::Any, "file I/O"),
    ("pwrite", Form::Any, "file I/O"),
    ("close", Form::Call, "file I/O"),
    ("lseek", Form::Any, "file I/O"),
    ("readv", Form::Any, "file I/O"),
    ("writev", Form::Any, "file I/O"),
    ("sendfile", Form::Any, "file I/O"),
    ("splice", Form::Call, "file I/O"),
    ("copy_file_range", Form::Any, "file I/O"),
    ("getline", Form::Call, "file I/O"),
    ("getdelim", Form::Any, "file I/O"),
    ("fread", Form::Any, "file I/O"),
    ("fwrite", Form::Any, "file I/O"),
    ("fgets", Form::Any, "file I/O"),
    ("fgetc", Form::Any, "file I/O"),
    ("getc", Form::Call, "file I/O"),
    ("getchar", Form::Any, "file I/O"),
    ("gets", Form::Any, "file I/O"),
    ("scanf", Form::Any, "file I/O"),
    ("fscanf", Form::Any, "file I/O"),
    ("fputs", Form::Any, "file I/O"),
    ("fputc", Form::Any, "file I/O"),
    ("putc", Form::Call, "file I/O"),
    ("putchar", Form::Any, "file I/O"),
    ("puts", Form::Any, "file I/O"),
    ("fprintf", Form::Any, "file I/O"),
    ("vfprintf", Form::Any, "file I/O"),
    ("dprintf", Form::Any, "file I/O"),
    ("fflush", Form::Any, "file I/O"),
    ("stdin", Form::Any, "file I/O"),
    ("cin", Form::Any, "file I/O"),
    ("FILE", Form::Any, "file I/O"),
    ("fstream", Form::Any, "file I/O"),
    ("ifstream", Form::Any, "file I/O"),
    ("ofstream", Form::Any, "file I/O"),
    ("filebuf", Form::Any, "file I/O"),
    ("filesystem", Form::Any, "file system"),
    ("remove", Form::Call, "file system"),
    ("rename", Form::Call, "file system"),
    ("unlink", Form::Any, "file system"),
    ("unlinkat", Form::Any, "file system"),
    ("link", Form::Call, "file system"),
    ("symlink", Form::Any, "file system"),
    ("readlink", Form::Any, "file system"),
    ("mkdir", Form::Any, "file system"),
    ("rmdir", Form::Any, "file system"),
    ("chdir", Form::Any, "file system"),
    ("chmod", Form::Any, "file system"),
    ("chown", Form::Any, "file system"),
    ("opendir", Form::Any, "file system"),
    ("readdir", Form::Any, "file system"),
    ("stat", Form::Call, "file system"),
    ("lstat", Form::Any, "file system"),
    ("fstat", Form::Any, "file system"),
    ("access", Form::Call, "file system"),
    ("truncate", Form::Call, "file system"),
    ("ftruncate", Form::Any, "file system"),
    ("ioctl", Form::Any, "device control"),
    ("fcntl", Form::Any, "file descriptors"),
    ("dup", Form::Call, "file descriptors"),
    ("dup2", Form::Any, "file descriptors"),
    ("dup3", Form::Any, "file descriptors"),
    ("pipe", Form::Call, "file descriptors"),
    ("mkfifo", Form::Any, "file descriptors"),
    // Network.
    ("socket", Form::Call, "network"),
    ("socketpair", Form::Any, "network"),
    ("connect", Form::Call, "network"),
    ("bind", Form::CallNotStd, "network"),
    ("listen", Form::Call, "network"),
    ("accept", Form::Call, "network"),
    ("accept4", Form::Any, "network"),
    ("send", Form::Call, "network"),
    ("sendto", Form::Any, "network"),
    ("sendmsg", Form::Any, "network"),
    ("recv", Form::Call, "network"),
    ("recvfrom", Form::Any, "network"),
    ("recvmsg", Form::Any, "network"),
    ("getaddrinfo", Form::Any, "network"),
    ("gethostbyname", Form::Any, "network"),
    ("setsockopt", Form::Any, "network"),
    ("select", Form::Call, "network"),
    ("poll", Form::Call, "network"),
    // Environment.
    ("getenv", Form::Any, "the environment"),
    ("secure_getenv", Form::Any, "the environment"),
    ("setenv", Form::Any, "the environment"),
    ("unsetenv", Form::Any, "the environment"),
    ("putenv", Form::Any, "the environment"),
    ("clearenv", Form::Any, "the environment"),
    ("environ", Form::Any, "the environment"),
    ("__environ", Form::Any, "the environment"),
    // Threads.
    ("thread", Form::Any, "threads"),
    ("jthread", Form::Any, "threads"),
    ("this_thread", Form::Any, "threads"),
    ("async", Form::Any, "threads"),
    ("thrd_create", Form::Any, "threads"),
    // Dynamic loading and memory mapping.
    ("dlopen", Form::Any, "dynamic loading"),
    ("dlmopen", Form::Any, "dynamic loading"),
    ("dlsym", Form::Any, "dynamic loading"),
    ("dlvsym", Form::Any, "dynamic loading"),
    ("dlclose", Form::Any, "dynamic loading"),
    ("mmap", Form::Any, "memory mapping"),
    ("mmap64", Form::Any, "memory mapping"),
    ("munmap", Form::Any, "memory mapping"),
    ("mprotect", Form::Any, "memory mapping"),
    ("mremap", Form::Any, "memory mapping"),
    ("brk", Form::Call, "memory mapping"),
    ("sbrk", Form::Any, "memory mapping"),
    ("shmget", Form::Any, "shared memory"),
    ("shmat", Form::Any, "shared memory"),
    ("memfd_create", Form::Any, "shared memory"),
    ("alloca", Form::Any, "unbounded stack allocation"),
    ("__builtin_alloca", Form::Any, "unbounded stack allocation"),
    // Clocks and sleeping (results must not depend on time).
    ("time", Form::Call, "clocks"),
    ("clock", Form::Call, "clocks"),
    ("clock_gettime", Form::Any, "clocks"),
    ("gettimeofday", Form::Any, "clocks"),
    ("chrono", Form::Any, "clocks"),
    ("__rdtsc", Form::Any, "clocks"),
    ("__builtin_ia32_rdtsc", Form::Any, "clocks"),
    ("__builtin_readcyclecounter", Form::Any, "clocks"),
    ("sleep", Form::Call, "sleeping"),
    ("usleep", Form::Any, "sleeping"),
    ("nanosleep", Form::Any, "sleeping"),
    ("clock_nanosleep", Form::Any, "sleeping"),
    ("sleep_for", Form::Any, "sleeping"),
    ("sleep_until", Form::Any, "sleeping"),
    // Hidden global state.
    ("rand", Form::Call, "libc random state"),
    ("srand", Form::Any, "libc random state"),
    ("random", Form::Call, "libc random state"),
    ("srandom", Form::Any, "libc random state"),
    ("drand48", Form::Any, "libc random state"),
    ("lrand48", Form::Any, "libc random state"),
    ("random_device", Form::Any, "the OS random source"),
];

/// Prefixes of forbidden API families.
const FORBIDDEN_PREFIXES: &[(&str, &str)] = &[
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

fn is_member(toks: &[Tok], i: usize) -> bool {
    i > 0
        && matches!(toks[i - 1].text.as_str(), "." | "->" | ".*" | "->*")
        && toks[i - 1].kind == TokKind::Punct
}

fn form_matches(toks: &[Tok], i: usize, form: Form) -> bool {
    if is_member(toks, i) {
        return false;
    }
    let q = qualifier(toks, i);
    let call = is(toks.get(i + 1), "(");
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

/// Name rules on code tokens.
pub(crate) fn check_tokens(toks: &[Tok], role: Role, push: &mut impl FnMut(u32, Rule, String)) {
    for (i, t) in toks.iter().enumerate() {
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
        if let Some(&(_, form, what)) = FORBIDDEN.iter().find(|(n, _, _)| *n == name) {
            if form_matches(toks, i, form) {
                push(t.line, Rule::ForbiddenApi, format!("`{name}` ({what})"));
            }
            continue;
        }
        if let Some(&(_, what)) = FORBIDDEN_PREFIXES.iter().find(|(p, _)| name.starts_with(p)) {
            if form_matches(toks, i, Form::Any) {
                push(t.line, Rule::ForbiddenApi, format!("`{name}` ({what})"));
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
                    .is_some_and(|&(_, form)| form_matches(toks, i, form)),
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
    push: &mut impl FnMut(u32, Rule, String),
) {
    check_tokens(toks, role, push);
}

/// Directive rules: which directives and pragmas, and token pasting.
pub(crate) fn check_directives(dirs: &[Directive], push: &mut impl FnMut(u32, Rule, String)) {
    for d in dirs {
        let name = d.name.as_str();
        if name == "pragma" {
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
        } else if name != "include" && !PLAIN_DIRECTIVES.contains(&name) {
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
                    "token pasting (`##`) can assemble forbidden names".to_string(),
                );
            }
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

/// Analyses a finished statement (at its `;`).
fn end_statement(scope: Scope, stmt: &[Tok], push: &mut impl FnMut(u32, Rule, String)) {
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
