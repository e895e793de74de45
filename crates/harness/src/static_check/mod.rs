//! Static checks on untrusted operator sources (kernel and host tiling code)
//! before anything is compiled.
//!
//! The checks work on tokens from a small C/C++ lexer of our own (`lex.rs`, no tree-sitter):
//! comments are dropped and string/character literals are opaque, so text
//! in them never trips a rule, and line continuations and digraphs cannot
//! hide a name. The token rules run on the units as g++ compiles them
//! (`g++ -E` with the build's flags, [`check_package`]; tokens mapped back
//! to the operator's file and line, `preprocessed.rs`), so a macro cannot
//! hide a `static`, an `extern "C"`, an attribute or a pasted name; where
//! no preprocessed unit is at hand they run on the files as written. Each
//! finding is a [`Finding`] naming the [`Rule`], the file and the line.
//!
//! A finding either rejects the candidate ([`Severity::Reject`]: what
//! reaches outside the kernel, or cannot run on the NPU) or is a note
//! ([`Severity::Note`]): what the sandbox makes harmless or is a matter of
//! style. State that survives a launch is such a note: every launch runs
//! in a fresh sealed process, so a namespace-scope variable of a tiling
//! function (common in public host code) cannot carry anything from one
//! launch to the next. A user's own operator is never refused for a note.
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

pub mod imports;
mod lex;
mod preprocessed;
mod rules;

use lex::lex;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// A rule of the static check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// An `#include` of a header that is neither an AscendC header, an
    /// allowed standard header nor a file of the operator (the compiler
    /// decides whether it exists; a note).
    Include,
    /// An `#include` that leaves the operator folder (`..`, an absolute
    /// path, a macro): it could read any file into the library.
    IncludePath,
    /// A preprocessor directive other than include/define/undef/conditionals/
    /// pragma/error/warning (`#line`, `#include_next`, `#import`, ...).
    Directive,
    /// A `#pragma` (or `_Pragma`) that is not `once`, `pack`, `unroll` or a
    /// diagnostic setting, e.g. `GCC optimize`.
    Pragma,
    /// `asm`, `__asm__`, `__asm`.
    InlineAsm,
    /// A process, file, network, thread, dynamic-loading or memory-mapping
    /// API.
    ForbiddenApi,
    /// An API the sandbox makes harmless (environment, process ids, clocks,
    /// sleeping, libc random state): a note.
    SandboxedApi,
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
    /// The built library imports a system function outside the allowed
    /// ones (`imports.rs`).
    Import,
}

impl Rule {
    /// Stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Include => "include",
            Rule::IncludePath => "include-path",
            Rule::Directive => "directive",
            Rule::Pragma => "pragma",
            Rule::InlineAsm => "inline-asm",
            Rule::ForbiddenApi => "forbidden-api",
            Rule::SandboxedApi => "sandboxed-api",
            Rule::KernelHeap => "kernel-heap",
            Rule::MutableStatic => "mutable-static",
            Rule::Volatile => "volatile",
            Rule::Attribute => "attribute",
            Rule::ExternDecl => "extern-decl",
            Rule::TokenPaste => "token-paste",
            Rule::Trigraph => "trigraph",
            Rule::Lexical => "lexical",
            Rule::Import => "import",
        }
    }
}

/// How a finding weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The candidate is refused.
    Reject,
    /// Reported, not refused (the sandbox makes it harmless, or it is
    /// style).
    Note,
}

impl Rule {
    /// Whether the rule refuses a candidate or only notes the finding.
    pub fn severity(self) -> Severity {
        match self {
            Rule::IncludePath
            | Rule::Directive
            | Rule::InlineAsm
            | Rule::ForbiddenApi
            | Rule::Attribute
            | Rule::Import => Severity::Reject,
            // Heap in kernel code runs in the sandbox (and in CANN's CPU
            // debug builds, whose branches the simulator compiles); an
            // extern declaration only names a function, whose use the
            // name and import rules judge.
            Rule::KernelHeap
            | Rule::SandboxedApi
            | Rule::ExternDecl
            | Rule::Include
            | Rule::MutableStatic
            | Rule::Volatile
            | Rule::Pragma
            | Rule::TokenPaste
            | Rule::Trigraph
            | Rule::Lexical => Severity::Note,
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

impl Finding {
    /// Whether it refuses the candidate.
    pub fn rejects(&self) -> bool {
        self.rule.severity() == Severity::Reject
    }
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

/// Extensions of C/C++ headers and sources.
const HEADER_EXTENSIONS: &[&str] = &[
    "h", "hh", "hpp", "hxx", "inl", "ipp", "tpp", "inc", "c", "cc", "cpp", "cxx",
];

/// Folders the build compiles and searches for includes (`-I op_host
/// -I op_kernel`).
const SOURCE_DIRS: &[&str] = &["op_kernel", "op_host"];

/// Reads every C/C++ file under `op_dir/op_kernel` and `op_dir/op_host` and
/// checks them as written (no preprocessing).
pub fn check_operator_dir(op_dir: &Path) -> Result<Vec<Finding>, StaticCheckError> {
    let files = read_sources(op_dir)?;
    let roots = compiled_roots(&files);
    Ok(check_sources_with(&files, None, Some(&roots)))
}

/// The files the build compiles: `op_kernel/*.cpp`, `op_host/*.cpp`
/// except the op-API layer (`aclnn*`), and the tiling header it
/// force-includes. Their includes are compiled with them; other files of
/// the folders are not checked (nothing compiles them).
fn compiled_roots(files: &[SourceFile]) -> BTreeSet<String> {
    files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| {
            let top = |dir: &str| {
                p.strip_prefix(dir)
                    .is_some_and(|rest| !rest.contains('/') && rest.ends_with(".cpp"))
            };
            top("op_kernel/")
                || (top("op_host/") && !ascendopt_op::package::is_op_api_source(Path::new(p)))
                || is_forced_tiling_header(p)
        })
        .map(str::to_string)
        .collect()
}

/// Every C/C++ file under `op_dir/op_kernel` and `op_dir/op_host`.
pub fn read_sources(op_dir: &Path) -> Result<Vec<SourceFile>, StaticCheckError> {
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        let root = op_dir.join(dir);
        if root.is_dir() {
            collect(&root, dir, &mut files)?;
        }
    }
    Ok(files)
}

/// The preprocessed text of one unit of an operator (`g++ -E` with the
/// build's flags, line markers kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreprocessedUnit {
    /// `kernel` or `host`.
    pub unit: String,
    /// What g++ printed.
    pub text: String,
}

/// Checks the operator in `op_dir` with its preprocessed `units`: the token
/// rules of every file the units compile run on the preprocessed tokens
/// (macros expanded); files no unit compiles, and the include, directive,
/// trigraph and lexical rules, use the files as written.
pub fn check_with_units(
    op_dir: &Path,
    units: &[PreprocessedUnit],
) -> Result<Vec<Finding>, StaticCheckError> {
    let files = read_sources(op_dir)?;
    let mut streams: BTreeMap<String, preprocessed::FileStream> = BTreeMap::new();
    for unit in units {
        for (file, stream) in preprocessed::streams(&unit.text, op_dir) {
            // A header both units compile: its tokens once.
            streams.entry(file).or_insert(stream);
        }
    }
    let roots = compiled_roots(&files);
    Ok(check_sources_with(&files, Some(&streams), Some(&roots)))
}

/// The static check of `package` as `device` compiles it: on the
/// device's preprocessed units when it has them (see
/// [`check_with_units`]), else on the files as written. Memoised per
/// process on the package's C/C++ sources (the emulation headers and
/// flags do not change within a process), so a candidate judged again
/// costs no preprocessing.
pub fn check_package(
    device: &dyn ascendopt_device::Device,
    package: &ascendopt_op::package::OpPackage,
) -> Result<Vec<Finding>, StaticCheckError> {
    use sha2::{Digest, Sha256};
    use std::collections::HashMap;
    use std::sync::Mutex;
    static MEMO: Mutex<Option<HashMap<[u8; 32], Vec<Finding>>>> = Mutex::new(None);
    let files = read_sources(&package.dir)?;
    let mut h = Sha256::new();
    h.update(device.name().as_bytes());
    for f in &files {
        h.update((f.path.len() as u64).to_le_bytes());
        h.update(f.path.as_bytes());
        h.update((f.text.len() as u64).to_le_bytes());
        h.update(f.text.as_bytes());
    }
    let key: [u8; 32] = h.finalize().into();
    if let Some(found) = MEMO
        .lock()
        .ok()
        .and_then(|m| m.as_ref().and_then(|m| m.get(&key).cloned()))
    {
        return Ok(found);
    }
    let findings = match device.preprocess(package) {
        Some(Ok(units)) => {
            let units: Vec<PreprocessedUnit> = units
                .into_iter()
                .map(|(unit, text)| PreprocessedUnit { unit, text })
                .collect();
            check_with_units(&package.dir, &units)?
        }
        // Not preprocessable (the build will report why) or no
        // preprocessor: the files as written.
        _ => check_sources(&files),
    };
    if let Ok(mut memo) = MEMO.lock() {
        let memo = memo.get_or_insert_with(HashMap::new);
        if memo.len() >= 4096 {
            memo.clear();
        }
        memo.insert(key, findings.clone());
    }
    Ok(findings)
}

/// Findings of the imports of `artifact`'s libraries ([`imports`]), each
/// placed at the first use of the imported name in `package`'s sources
/// when there is one.
pub fn check_imports(
    package: &ascendopt_op::package::OpPackage,
    artifact: &ascendopt_device::Artifact,
) -> Vec<Finding> {
    let files = read_sources(&package.dir).unwrap_or_default();
    let lexed: Vec<(String, lex::Lexed)> = files
        .iter()
        .map(|f| (f.path.clone(), lex(&f.text)))
        .collect();
    let locate = |name: &str| -> Option<(String, u32)> {
        lexed.iter().find_map(|(path, lx)| {
            lx.code
                .iter()
                .chain(lx.directives.iter().flat_map(|d| d.tokens.iter()))
                .find(|t| t.kind == lex::TokKind::Ident && t.text == name)
                .map(|t| (path.clone(), t.line))
        })
    };
    let mut libraries: Vec<(&Path, &str)> = vec![(artifact.host_lib.as_path(), "host")];
    libraries.push((artifact.kernel_lib.as_path(), "kernel"));
    for variant in &artifact.kernel_variants {
        libraries.push((variant.lib.as_path(), "kernel"));
    }
    libraries.sort();
    libraries.dedup();
    let mut out: Vec<Finding> = libraries
        .into_iter()
        .flat_map(|(lib, unit)| imports::check_library(lib, unit, &locate))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// What an input operator's findings are counted by (lines move with
/// edits; the file, the rule and what was found do not).
type FindingKind = (String, Rule, String);

/// The findings of the operators given as input, by operator name.
static INPUTS: std::sync::Mutex<Option<BTreeMap<String, BTreeMap<FindingKind, usize>>>> =
    std::sync::Mutex::new(None);

/// Registers `package` as an input operator (the user's own, or a built-in
/// a search starts from): its findings, of the sources and of its
/// libraries' imports, never refuse it, and its candidates may keep them
/// (never more of each kind than the input has: a candidate that adds a
/// `syscall` to a file that had one is refused). Real operators log with
/// `syscall(SYS_gettid)` or read a debug switch with `getenv`; the sandbox
/// holds whatever the sources do. Returns the input's findings.
pub fn register_input(
    device: &dyn ascendopt_device::Device,
    package: &ascendopt_op::package::OpPackage,
) -> Result<Vec<Finding>, StaticCheckError> {
    let mut findings = check_package(device, package)?;
    if let Ok(artifact) = device.build(package) {
        findings.extend(check_imports(package, &artifact));
    }
    let mut counts: BTreeMap<FindingKind, usize> = BTreeMap::new();
    for f in findings.iter().filter(|f| f.rejects()) {
        *counts
            .entry((f.file.clone(), f.rule, f.message.clone()))
            .or_default() += 1;
    }
    if let Ok(mut inputs) = INPUTS.lock() {
        inputs
            .get_or_insert_with(BTreeMap::new)
            .insert(package.name().to_string(), counts);
    }
    Ok(findings)
}

/// [`rejection_reason`] for a candidate of operator `op`: the findings its
/// registered input operator already has ([`register_input`]) are
/// tolerated, up to the input's count of each.
pub fn rejection_reason_for(op: &str, findings: &[Finding]) -> Option<String> {
    let tolerated = INPUTS
        .lock()
        .ok()
        .and_then(|inputs| inputs.as_ref().and_then(|i| i.get(op).cloned()))
        .unwrap_or_default();
    let mut left = tolerated;
    let rest: Vec<Finding> = findings
        .iter()
        .filter(|f| {
            let key = (f.file.clone(), f.rule, f.message.clone());
            match left.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            }
        })
        .cloned()
        .collect();
    rejection_reason(&rest)
}

/// One line per note (the findings that do not reject).
pub fn notes(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .filter(|f| !f.rejects())
        .map(|f| f.to_string())
        .collect()
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

/// Checks a candidate's files (paths relative to the operator folder) as
/// written. Findings are sorted by file and line.
pub fn check_sources(files: &[SourceFile]) -> Vec<Finding> {
    check_sources_with(files, None, None)
}

/// [`check_sources`], with the token rules of the files in `streams` run
/// on their preprocessed tokens instead, and (with `roots`) only the
/// files compiled from `roots` checked.
fn check_sources_with(
    files: &[SourceFile],
    streams: Option<&BTreeMap<String, preprocessed::FileStream>>,
    roots: Option<&BTreeSet<String>>,
) -> Vec<Finding> {
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

    // What the build compiles: the roots and everything they include.
    let compiled: Option<BTreeSet<String>> = roots.map(|roots| {
        let mut seen: BTreeSet<String> = roots.clone();
        let mut stack: Vec<String> = roots.iter().cloned().collect();
        while let Some(p) = stack.pop() {
            for next in edges.get(p.as_str()).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    });
    // Names any compiled file declares as variables (a member `pipe` of
    // a class in a header, used as `&pipe` in the source).
    let mut unit_variables: BTreeSet<String> = BTreeSet::new();
    for (file, lx) in files.iter().zip(&lexed) {
        if compiled.as_ref().is_some_and(|c| !c.contains(&file.path)) {
            continue;
        }
        match streams.and_then(|s| s.get(&file.path)) {
            Some(stream) => {
                unit_variables.extend(rules::declared_names(&stream.code));
                unit_variables.extend(rules::declared_functions(&stream.code));
            }
            None => {
                unit_variables.extend(rules::declared_names(&lx.code));
                unit_variables.extend(rules::declared_functions(&lx.code));
            }
        }
    }

    for ((file, lx), targets) in files.iter().zip(&lexed).zip(&resolved) {
        if compiled.as_ref().is_some_and(|c| !c.contains(&file.path)) {
            continue;
        }
        // Kernel rules for the kernel's own files (op_kernel/ and the
        // tiling header it force-includes); host helpers a tiling header
        // happens to include are host code.
        let own_kernel_file =
            file.path.starts_with("op_kernel/") || is_forced_tiling_header(&file.path);
        let role = if kernel_side.contains(&file.path) && own_kernel_file {
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
                IncludeTarget::Unknown(why) => push(*line, Rule::Include, why.clone()),
                IncludeTarget::Escapes(why) => push(*line, Rule::IncludePath, why.clone()),
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
        match streams.and_then(|s| s.get(&file.path)) {
            Some(stream) => {
                // What g++ compiles: directives other than pragmas are
                // gone, macros expanded where they are used.
                rules::check_directives(&lx.directives, &mut push);
                rules::check_pragmas(&stream.pragmas, &mut push);
                rules::check_tokens(&stream.code, role, &unit_variables, &mut push);
                rules::check_scopes(&stream.code, &mut push);
            }
            None => {
                rules::check_directives(&lx.directives, &mut push);
                rules::check_pragmas(&lx.directives, &mut push);
                rules::check_tokens(&lx.code, role, &unit_variables, &mut push);
                for d in &lx.directives {
                    rules::check_tokens_in_directive(&d.tokens, role, &unit_variables, &mut push);
                }
                rules::check_scopes(&lx.code, &mut push);
            }
        }
    }
    findings.sort();
    findings.dedup();
    findings
}

/// One line per rejecting finding, for
/// [`crate::verdict::Verdict::RejectedStatic`]; `None` when none rejects.
pub fn rejection_reason(findings: &[Finding]) -> Option<String> {
    let lines: Vec<String> = findings
        .iter()
        .filter(|f| f.rejects())
        .map(|f| f.to_string())
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
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
    /// A header outside the allowed ones (a note), with the reason.
    Unknown(String),
    /// A path that leaves the operator folder, with the reason.
    Escapes(String),
}

/// Prefixes of the AscendC header family (as CANN installs them).
const FAMILY_PREFIXES: &[&str] = &[
    "lib/",
    "register/",
    "tiling/",
    "graph/",
    "exe_graph/",
    "platform/",
    // ascendc/host_api/tiling/template_argument.h (tiling templates).
    "ascendc/",
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
        return IncludeTarget::Escapes("#include of a macro or malformed header name".to_string());
    };
    let shown = if *angled {
        format!("<{name}>")
    } else {
        format!("\"{name}\"")
    };
    if name.is_empty() || name.starts_with('/') || name.contains('\\') || name.contains(':') {
        return IncludeTarget::Escapes(format!("{shown}: absolute or non-portable include path"));
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
        // Public operators share headers with sibling folders
        // (`../inc/platform.h`): a header by its name is the compiler's
        // business; anything else read into the library is not.
        let header = name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| HEADER_EXTENSIONS.contains(&ext));
        return if header {
            IncludeTarget::Unknown(format!(
                "{shown} is a header outside the operator folder (the build must find it)"
            ))
        } else {
            IncludeTarget::Escapes(format!(
                "{shown} leaves the operator folder and is not a C/C++ header"
            ))
        };
    }
    if name == "kernel_operator.h" || FAMILY_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return IncludeTarget::Family;
    }
    if !name.contains('/')
        && (STD_COMMON.contains(&name.as_str()) || STD_HOST_ONLY.contains(&name.as_str()))
    {
        return IncludeTarget::Std(name.clone());
    }
    IncludeTarget::Unknown(format!(
        "{shown} is neither an AscendC header (kernel_operator.h, {}) nor an allowed standard header nor a file of the operator",
        FAMILY_PREFIXES.iter().map(|p| format!("{p}...")).collect::<Vec<_>>().join(", ")
    ))
}

#[cfg(test)]
mod tests;
