//! Static checks on untrusted operator sources (kernel and host tiling code)
//! before anything is compiled.
//!
//! The checks work on tokens from a small C/C++ lexer of our own (`lex.rs`, no tree-sitter):
//! comments are dropped and string/character literals are opaque, so text
//! in them never trips a rule, and line continuations and digraphs cannot
//! hide a name. Each rejection is a [`Finding`] naming the [`Rule`], the
//! file and the line.
//!
//! Rules (see [`Rule`] for each one's exact scope):
//! - includes only from the AscendC header family (`kernel_operator.h`,
//!   `lib/`, `register/`, `tiling/`, `graph/`, `exe_graph/`, `platform/`), a
//!   short list of side-effect-free standard headers, and the operator's own
//!   files (resolved like g++ would: the includer's folder, `op_host/`,
//!   `op_kernel/`; never outside the operator folder);
//! - no inline assembly, no process, file, network, environment, thread,
//!   dynamic-loading, memory-mapping, clock or libc-random APIs; no heap
//!   allocation in kernel code;
//! - no state that survives a launch: no mutable variables at namespace
//!   scope, no mutable `static` locals or static data members, no
//!   `thread_local` (`static constexpr`/`static const` and static member
//!   functions are fine);
//! - no `volatile`, no constructor/destructor/section attributes, no
//!   `#pragma` beyond `once`, `pack`, `unroll` and diagnostics, no `extern`
//!   declarations, no token pasting (`##`), no trigraphs, no unusual
//!   directives.
//!
//! Kernel rules apply to every file the kernel unit compiles: files under
//! `op_kernel/`, the tiling header the build force-includes
//! (`op_host/*_tiling.h`) and any operator file they include.
//!
//! This is a first line of defence that explains itself; the sandboxed
//! worker process is the real one (a checker without a preprocessor cannot
//! see through every macro).

mod lex;
mod rules;

use lex::lex;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// A rule of the static check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// An `#include` outside the allowed headers and the operator's files.
    Include,
    /// A preprocessor directive other than include/define/undef/conditionals/
    /// pragma/error/warning (`#line`, `#include_next`, `#import`, ...).
    Directive,
    /// A `#pragma` (or `_Pragma`) that is not `once`, `pack`, `unroll` or a
    /// diagnostic setting, e.g. `GCC optimize`.
    Pragma,
    /// `asm`, `__asm__`, `__asm`.
    InlineAsm,
    /// A process, file, network, environment, thread, clock, dynamic-loading,
    /// memory-mapping or libc-random API.
    ForbiddenApi,
    /// Heap allocation in kernel code (`new`, `malloc`, `std::vector`, ...).
    KernelHeap,
    /// State that survives a launch: mutable namespace-scope variables,
    /// mutable `static` locals and static data members, `thread_local`.
    MutableStatic,
    /// The `volatile` qualifier.
    Volatile,
    /// `__attribute__`/`[[gnu::...]]` constructor, destructor, init_priority,
    /// section, ifunc, alias, weakref, optimize or target.
    Attribute,
    /// An `extern` declaration (e.g. of a libc function).
    ExternDecl,
    /// Token pasting (`##`), which can assemble a forbidden name.
    TokenPaste,
    /// A trigraph (`??=` ...).
    Trigraph,
    /// The file cannot be lexed (unterminated comment or literal).
    Lexical,
}

impl Rule {
    /// Stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Include => "include",
            Rule::Directive => "directive",
            Rule::Pragma => "pragma",
            Rule::InlineAsm => "inline-asm",
            Rule::ForbiddenApi => "forbidden-api",
            Rule::KernelHeap => "kernel-heap",
            Rule::MutableStatic => "mutable-static",
            Rule::Volatile => "volatile",
            Rule::Attribute => "attribute",
            Rule::ExternDecl => "extern-decl",
            Rule::TokenPaste => "token-paste",
            Rule::Trigraph => "trigraph",
            Rule::Lexical => "lexical",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One violation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// File, relative to the operator folder (`op_kernel/add.cpp`).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// The rule broken.
    pub rule: Rule,
    /// What was found.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}:{}: {}",
            self.rule, self.file, self.line, self.message
        )
    }
}

/// A source file of a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Path relative to the operator folder, `/`-separated
    /// (`op_kernel/add_custom.cpp`).
    pub path: String,
    /// Contents.
    pub text: String,
}

/// Which unit a file is compiled into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The host (tiling) library only.
    Host,
    /// The kernel library (stricter: no heap, fewer standard headers).
    Kernel,
}

/// Errors reading an operator folder.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StaticCheckError {
    /// A file or folder could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Extensions of C/C++ sources and headers.
const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "inl", "ipp", "tpp",
];

/// Folders the build compiles and searches for includes (`-I op_host
/// -I op_kernel`).
const SOURCE_DIRS: &[&str] = &["op_kernel", "op_host"];

/// Reads every C/C++ file under `op_dir/op_kernel` and `op_dir/op_host` and
/// checks them.
pub fn check_operator_dir(op_dir: &Path) -> Result<Vec<Finding>, StaticCheckError> {
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        let root = op_dir.join(dir);
        if root.is_dir() {
            collect(&root, dir, &mut files)?;
        }
    }
    Ok(check_sources(&files))
}

fn collect(dir: &Path, rel: &str, out: &mut Vec<SourceFile>) -> Result<(), StaticCheckError> {
    let read_err = |source| StaticCheckError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .collect::<Result<_, _>>()
        .map_err(read_err)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let rel_path = format!("{rel}/{name}");
        if path.is_dir() {
            collect(&path, &rel_path, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e))
        {
            let bytes = std::fs::read(&path).map_err(|source| StaticCheckError::Read {
                path: path.clone(),
                source,
            })?;
            out.push(SourceFile {
                path: rel_path,
                text: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
    }
    Ok(())
}

/// Checks a candidate's files (paths relative to the operator folder).
/// Findings are sorted by file and line; empty means accepted.
pub fn check_sources(files: &[SourceFile]) -> Vec<Finding> {
    let known: BTreeSet<String> = files.iter().map(|f| f.path.clone()).collect();
    let lexed: Vec<_> = files.iter().map(|f| lex(&f.text)).collect();

    // Include graph over the operator's own files, to find the kernel unit.
    let mut findings = Vec::new();
    let mut edges: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut resolved: Vec<Vec<(u32, IncludeTarget)>> = Vec::new();
    for (file, lx) in files.iter().zip(&lexed) {
        let mut targets = Vec::new();
        for d in &lx.directives {
            if d.name == "include" {
                let target = resolve_include(&file.path, d.header.as_ref(), &known);
                if let IncludeTarget::OpFile(p) = &target {
                    edges.entry(file.path.as_str()).or_default().push(p.clone());
                }
                targets.push((d.line, target));
            }
        }
        resolved.push(targets);
    }
    let mut kernel_side: BTreeSet<String> = files
        .iter()
        .filter(|f| f.path.starts_with("op_kernel/") || is_forced_tiling_header(&f.path))
        .map(|f| f.path.clone())
        .collect();
    let mut stack: Vec<String> = kernel_side.iter().cloned().collect();
    while let Some(p) = stack.pop() {
        for next in edges.get(p.as_str()).into_iter().flatten() {
            if kernel_side.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }

    for ((file, lx), targets) in files.iter().zip(&lexed).zip(&resolved) {
        let role = if kernel_side.contains(&file.path) {
            Role::Kernel
        } else {
            Role::Host
        };
        let mut push = |line: u32, rule: Rule, message: String| {
            findings.push(Finding {
                file: file.path.clone(),
                line,
                rule,
                message,
            })
        };
        for (line, target) in targets {
            match target {
                IncludeTarget::Family | IncludeTarget::OpFile(_) => {}
                IncludeTarget::Std(name) => {
                    if !std_header_allowed(name, role) {
                        push(
                            *line,
                            Rule::Include,
                            format!(
                                "<{name}> is not allowed in {} code (allowed: the AscendC headers and {})",
                                role_name(role),
                                allowed_std_list(role)
                            ),
                        );
                    }
                }
                IncludeTarget::Refused(why) => push(*line, Rule::Include, why.clone()),
            }
        }
        for (line, msg) in &lx.errors {
            push(*line, Rule::Lexical, msg.clone());
        }
        for line in &lx.trigraphs {
            push(
                *line,
                Rule::Trigraph,
                "trigraph sequence (`??` + punctuation)".to_string(),
            );
        }
        rules::check_directives(&lx.directives, &mut push);
        rules::check_tokens(&lx.code, role, &mut push);
        for d in &lx.directives {
            rules::check_tokens_in_directive(&d.tokens, role, &mut push);
        }
        rules::check_scopes(&lx.code, &mut push);
    }
    findings.sort();
    findings.dedup();
    findings
}

/// One line per finding, for [`crate::verdict::Verdict::RejectedStatic`];
/// `None` when there are none.
pub fn rejection_reason(findings: &[Finding]) -> Option<String> {
    if findings.is_empty() {
        return None;
    }
    Some(
        findings
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Host => "host",
        Role::Kernel => "kernel",
    }
}

/// `op_host/<op>_tiling.h`, which the build force-includes into the kernel.
fn is_forced_tiling_header(path: &str) -> bool {
    path.strip_prefix("op_host/")
        .is_some_and(|rest| !rest.contains('/') && rest.ends_with("_tiling.h"))
}

/// Where an include leads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum IncludeTarget {
    /// The AscendC header family.
    Family,
    /// A standard header (allowed or not depending on the role).
    Std(String),
    /// One of the operator's files.
    OpFile(String),
    /// Not allowed, with the reason.
    Refused(String),
}

/// Prefixes of the AscendC header family (as CANN installs them).
const FAMILY_PREFIXES: &[&str] = &[
    "lib/",
    "register/",
    "tiling/",
    "graph/",
    "exe_graph/",
    "platform/",
];

/// Standard headers without side effects, allowed everywhere.
const STD_COMMON: &[&str] = &[
    "algorithm",
    "array",
    "assert.h",
    "cassert",
    "cfloat",
    "cinttypes",
    "climits",
    "cmath",
    "cstddef",
    "cstdint",
    "cstring",
    "float.h",
    "initializer_list",
    "inttypes.h",
    "limits",
    "limits.h",
    "math.h",
    "numeric",
    "stddef.h",
    "stdint.h",
    "string.h",
    "tuple",
    "type_traits",
    "utility",
];

/// Standard headers allowed in host code only (they allocate).
const STD_HOST_ONLY: &[&str] = &[
    "functional",
    "map",
    "memory",
    "optional",
    "set",
    "string",
    "string_view",
    "unordered_map",
    "unordered_set",
    "vector",
];

fn std_header_allowed(name: &str, role: Role) -> bool {
    STD_COMMON.contains(&name) || (role == Role::Host && STD_HOST_ONLY.contains(&name))
}

fn allowed_std_list(role: Role) -> String {
    let mut all: Vec<&str> = STD_COMMON.to_vec();
    if role == Role::Host {
        all.extend_from_slice(STD_HOST_ONLY);
    }
    all.sort_unstable();
    all.iter()
        .map(|h| format!("<{h}>"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Normalises `a/./b/../c`; `None` if it climbs above the root.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn resolve_include(
    includer: &str,
    header: Option<&(String, bool)>,
    known: &BTreeSet<String>,
) -> IncludeTarget {
    let Some((name, angled)) = header else {
        return IncludeTarget::Refused("#include of a macro or malformed header name".to_string());
    };
    let shown = if *angled {
        format!("<{name}>")
    } else {
        format!("\"{name}\"")
    };
    if name.is_empty() || name.starts_with('/') || name.contains('\\') || name.contains(':') {
        return IncludeTarget::Refused(format!("{shown}: absolute or non-portable include path"));
    }
    // The includer's folder (quoted includes only), then -I op_host, -I op_kernel.
    let mut bases: Vec<String> = Vec::new();
    if !angled {
        bases.push(
            includer
                .rsplit_once('/')
                .map(|(dir, _)| dir.to_string())
                .unwrap_or_default(),
        );
    }
    bases.extend(["op_host".to_string(), "op_kernel".to_string()]);
    for base in &bases {
        let joined = if base.is_empty() {
            name.clone()
        } else {
            format!("{base}/{name}")
        };
        if let Some(p) = normalise(&joined) {
            if known.contains(&p) {
                return IncludeTarget::OpFile(p);
            }
        }
    }
    if name.split('/').any(|p| p == "..") {
        return IncludeTarget::Refused(format!(
            "{shown} leaves the operator folder or names a missing file"
        ));
    }
    if name == "kernel_operator.h" || FAMILY_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return IncludeTarget::Family;
    }
    if !name.contains('/')
        && (STD_COMMON.contains(&name.as_str()) || STD_HOST_ONLY.contains(&name.as_str()))
    {
        return IncludeTarget::Std(name.clone());
    }
    IncludeTarget::Refused(format!(
        "{shown} is neither an AscendC header (kernel_operator.h, {}) nor an allowed standard header nor a file of the operator",
        FAMILY_PREFIXES.iter().map(|p| format!("{p}...")).collect::<Vec<_>>().join(", ")
    ))
}

#[cfg(test)]
mod tests;
