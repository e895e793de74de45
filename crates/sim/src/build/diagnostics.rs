//! Turning g++'s stderr into something a person (or a proposer) can act on:
//! the error lines with their file:line and source snippet, without the
//! notes, warnings and include chains; and a one-line summary of the first
//! error, naming the AscendC API when the simulator lacks it.

use super::api_names::is_api_name;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// At most this many lines are kept in the trimmed diagnostics.
const MAX_LINES: usize = 200;
/// At most this many bytes are kept in the trimmed diagnostics.
const MAX_BYTES: usize = 16 * 1024;

/// The first error of a failed compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FirstError {
    /// File the error is attributed to (a kernel line rather than a header of
    /// the simulator when g++ names one in a "required from here" line).
    pub file: Option<String>,
    /// 1-based line.
    pub line: Option<u32>,
    /// The interpreted message.
    pub message: String,
}

/// A `file:line:col: kind: message` line.
struct Located<'a> {
    file: &'a str,
    line: u32,
    kind: &'a str,
    message: &'a str,
}

/// Parses `file:line:col: kind: message` (also `file:line: kind: message`).
fn parse_located(text: &str) -> Option<Located<'_>> {
    // The file may contain ':' only in odd paths; g++ prints it verbatim, so
    // split at the first ":<digits>:" group.
    let bytes = text.as_bytes();
    let mut idx = 0;
    while let Some(rel) = text[idx..].find(':') {
        let colon = idx + rel;
        let digits_end = bytes[colon + 1..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .map(|p| colon + 1 + p)
            .unwrap_or(bytes.len());
        if digits_end > colon + 1 && bytes.get(digits_end) == Some(&b':') {
            let file = &text[..colon];
            let line: u32 = text[colon + 1..digits_end].parse().ok()?;
            let mut rest = &text[digits_end + 1..];
            // Optional column.
            let col_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            if col_len > 0 && rest.as_bytes().get(col_len) == Some(&b':') {
                rest = &rest[col_len + 1..];
            }
            let rest = rest.trim_start();
            let (kind, message) = match rest.find(": ") {
                Some(p) => (&rest[..p], &rest[p + 2..]),
                None => ("", rest),
            };
            if file.is_empty() {
                return None;
            }
            return Some(Located {
                file,
                line,
                kind,
                message,
            });
        }
        idx = colon + 1;
    }
    None
}

/// Whether a line is a source snippet printed under a diagnostic
/// (`   12 |     Foo(x);` or `      |     ^~~`).
fn is_snippet(line: &str) -> bool {
    let trimmed = line.trim_start();
    if trimmed.len() == line.len() {
        return false;
    }
    let after_digits = trimmed.trim_start_matches(|c: char| c.is_ascii_digit());
    after_digits.starts_with(" |") || after_digits.starts_with('|')
}

/// Keeps the error lines of g++'s stderr with their snippets and the
/// "In function"/"required from" context; drops warnings, notes and include
/// chains. Falls back to the whole text (bounded) when no error line is
/// recognised (e.g. a driver error).
pub(crate) fn trim(stderr: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut keep_snippet = false;
    let mut saw_error = false;
    for line in stderr.lines() {
        if line.starts_with("In file included from") || line.starts_with("                 from ") {
            keep_snippet = false;
            continue;
        }
        if is_snippet(line) {
            if keep_snippet {
                kept.push(line);
            }
            continue;
        }
        if let Some(loc) = parse_located(line) {
            match loc.kind {
                "error" | "fatal error" => {
                    saw_error = true;
                    keep_snippet = true;
                    kept.push(line);
                }
                "warning" | "note" => keep_snippet = false,
                _ => {
                    // "required from here", "required from ..." context.
                    keep_snippet = false;
                    if line.contains("required from") || line.contains("error") {
                        kept.push(line);
                    }
                }
            }
            continue;
        }
        keep_snippet = false;
        let is_context = line.contains(": In ") && line.ends_with(':');
        let is_link = line.contains("undefined reference")
            || line.contains("multiple definition of")
            || line.starts_with("/usr/bin/ld")
            || line.starts_with("collect2:");
        let is_driver = line.starts_with("compilation terminated");
        if is_context || is_link || is_driver || line.contains("error") {
            saw_error |= !is_context;
            kept.push(line);
        }
    }
    let text = if saw_error {
        bound(kept.into_iter())
    } else {
        bound(stderr.lines())
    };
    text.trim_end().to_string()
}

/// Joins lines, stopping at [`MAX_LINES`] / [`MAX_BYTES`].
fn bound<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (count, line) in lines.enumerate() {
        if count >= MAX_LINES || out.len() + line.len() + 1 > MAX_BYTES {
            out.push_str("... (more diagnostics cut)\n");
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The identifier inside the first pair of quotes of `text`, without a
/// namespace or class qualification (`'AscendC::Foo'` gives `Foo`).
fn quoted_name(text: &str) -> Option<&str> {
    let start = text.find(['\'', '`'])? + 1;
    let len = text[start..].find('\'')?;
    let inner = &text[start..start + len];
    let inner = inner.split('(').next().unwrap_or(inner);
    let inner = inner.split('<').next().unwrap_or(inner);
    Some(inner.rsplit("::").next().unwrap_or(inner).trim())
}

/// When `message` says a name is missing and the name is an AscendC API,
/// returns that name (a member as `Class::member` when g++ names the class).
fn unsupported_api(message: &str) -> Option<String> {
    let missing = message.contains("was not declared in this scope")
        || message.contains("is not a member of 'AscendC")
        || message.contains("has not been declared")
        || message.contains("does not name a type")
        || message.contains("has no member named")
        || message.contains("that depend on a template parameter, so a declaration of")
        || message.contains("undefined reference to");
    if !missing {
        return None;
    }
    if let Some(pos) = message.find("has no member named") {
        let member = quoted_name(&message[pos..])?;
        if !is_api_name(member) {
            return None;
        }
        // `'class AscendC::TBuf<AscendC::TPosition::VECCALC>' has no member
        // named 'FreeTensor'` names `TBuf::FreeTensor`.
        let class = quoted_name(&message[..pos])
            .map(|c| c.trim_start_matches("class ").trim_start_matches("struct "))
            .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_alphanumeric() || ch == '_'));
        return Some(match class {
            Some(class) => format!("{class}::{member}"),
            None => member.to_string(),
        });
    }
    let name = quoted_name(message)?;
    is_api_name(name).then(|| name.to_string())
}

/// What the simulator's headers under one directory declare: every
/// identifier that occurs in their code (comments after `//` left out),
/// and the APIs that are only compile-time stubs (declared with
/// `ASCENDOPT_UNSUPPORTED(Name)` or `ASCENDOPT_NOT_ON_A2(Name)`).
pub(crate) struct SimIndex {
    /// Identifiers in the headers' code.
    pub words: HashSet<String>,
    /// Names declared only as stubs that fail to compile when called.
    pub stubs: HashSet<String>,
}

impl SimIndex {
    /// Whether the simulator provides `name` (present, and not a stub).
    pub fn provides(&self, name: &str) -> bool {
        self.words.contains(name) && !self.stubs.contains(name)
    }
}

/// The [`SimIndex`] of the headers under `dir`, read once per process and
/// directory.
pub(crate) fn sim_index(dir: &Path) -> Arc<SimIndex> {
    static MEMO: OnceLock<Mutex<HashMap<PathBuf, Arc<SimIndex>>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(index) = memo.lock().ok().and_then(|m| m.get(dir).cloned()) {
        return index;
    }
    fn walk(dir: &Path, depth: u32, index: &mut SimIndex) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && depth < 8 {
                walk(&path, depth + 1, index);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                for line in text.lines() {
                    let code = line.split("//").next().unwrap_or("");
                    for marker in ["ASCENDOPT_UNSUPPORTED(", "ASCENDOPT_NOT_ON_A2("] {
                        if let Some(rest) = code.trim_start().strip_prefix(marker) {
                            let name: String = rest
                                .chars()
                                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                                .collect();
                            if !name.is_empty() && name != "Name" {
                                index.stubs.insert(name);
                            }
                        }
                    }
                    index.words.extend(
                        code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .filter(|w| !w.is_empty())
                            .map(str::to_string),
                    );
                }
            }
        }
    }
    let mut index = SimIndex {
        words: HashSet::new(),
        stubs: HashSet::new(),
    };
    walk(dir, 0, &mut index);
    let index = Arc::new(index);
    if let Ok(mut m) = memo.lock() {
        m.insert(dir.to_path_buf(), index.clone());
    }
    index
}

/// Raw device intrinsics (bisheng builtins) that public kernels call
/// directly and the simulator does not emulate: their AscendC API
/// equivalents are.
const DEVICE_INTRINSICS: &[&str] = &[
    "copy_cbuf_to_bt",
    "copy_gm_to_cbuf",
    "copy_matrix_cc_to_cbuf",
    "copy_ubuf_to_ubuf",
    "get_ctrl",
    "set_ctrl",
    "set_va_reg_sb",
    "v4dtrans",
    "vcadd",
    "vconv_s42f16",
    "vector_dup",
    "vor",
    "vtranspose",
];

/// The third-party library a header belongs to and the Debian package that
/// installs it, for the ones public operators include.
fn third_party_library(header: &str) -> Option<(&'static str, &'static str)> {
    let header = header.trim_matches(|c| c == '"' || c == '<' || c == '>');
    if header.starts_with("nlohmann/") {
        Some(("nlohmann/json", "nlohmann-json3-dev"))
    } else {
        None
    }
}

/// `VA0` ... `VA7`, the vector address registers kernels name when they
/// call `set_va_reg_sb` and the transposition intrinsics directly.
fn is_va_register(name: &str) -> bool {
    name.len() == 3 && name.starts_with("VA") && name.as_bytes()[2].is_ascii_digit() && name < "VA8"
}

/// The summary of an error line's message: a missing header named as such,
/// a missing API as unsupported, and an API that the simulator has but
/// that g++ did not find where it was called (unqualified, or a member of
/// another class) as such.
fn interpret(kind: &str, message: &str, sim_include: &Path) -> String {
    if kind == "fatal error" {
        if let Some(header) = message.strip_suffix(": No such file or directory") {
            if let Some((library, package)) = third_party_library(header) {
                return format!(
                    "header {header}: from {library}, a third-party library (not part of CANN \
                     or the ascendopt simulator); install it where g++ finds it (Debian/Ubuntu: \
                     apt-get install {package})"
                );
            }
            return format!(
                "header {header}: not in the package and not provided by the ascendopt simulator"
            );
        }
    }
    let Some(api) = unsupported_api(message) else {
        if message.contains("was not declared in this scope") {
            if let Some(name) = quoted_name(message) {
                if DEVICE_INTRINSICS.contains(&name) {
                    return format!(
                        "not supported by the ascendopt simulator: {name} (a raw device intrinsic; \
                         the simulator emulates the AscendC APIs, not the intrinsics under them)"
                    );
                }
                if is_va_register(name) {
                    return format!(
                        "not supported by the ascendopt simulator: {name} (a vector address \
                         register of the raw intrinsic set_va_reg_sb; the simulator emulates \
                         the AscendC APIs, not the intrinsics under them)"
                    );
                }
                if let Some(api) = name
                    .strip_suffix("Impl")
                    .filter(|api| !api.is_empty() && sim_index(sim_include).provides(api))
                {
                    return format!(
                        "not supported by the ascendopt simulator: {name} (an internal function \
                         of CANN's kernel library under {api}, not a documented AscendC API; \
                         the simulator emulates {api} itself)"
                    );
                }
            }
        }
        return message.to_string();
    };
    let plain = !api.contains("::")
        && !message.contains("has no member named")
        && !message.contains("undefined reference to")
        && !message.contains("is not a member of");
    if plain && sim_index(sim_include).provides(&api) {
        return format!(
            "{api} is provided by the ascendopt simulator but not visible here: \
             CANN code names it AscendC::{api} (or after `using namespace AscendC;`)"
        );
    }
    format!("not supported by the ascendopt simulator: {api}")
}

/// A better summary of the first error (the one at line `at` of `stderr`,
/// whose raw message is `raw`) from what surrounds it, or `message`
/// unchanged (no failure: the summary is the one it had):
/// - a stub of an unsupported API called with arguments it cannot take (a
///   braced list) shows as "no matching function for call to 'Name...'";
/// - a stub whose void result is used shows as an error about `void` on a
///   line that calls it (the printed source line);
/// - g++'s "static assertion failed: " prefix of the simulator's own
///   messages is dropped;
/// - a `<<<...>>>` kernel launch (a host-side helper in the kernel file)
///   shows as a syntax error at `<`.
fn in_context(message: String, raw: &str, stderr: &str, at: usize, sim_include: &Path) -> String {
    const OURS: &str = "not supported by the ascendopt simulator: ";
    if let Some(rest) = message.strip_prefix("static assertion failed: ") {
        if rest.starts_with(OURS) || rest.starts_with("GET_TILING_DATA") {
            return rest.to_string();
        }
    }
    let sim = sim_index(sim_include);
    if let Some(pos) = raw.find("no matching function for call to") {
        if let Some(name) = quoted_name(&raw[pos..]) {
            if sim.stubs.contains(name) {
                return format!("{OURS}{name}");
            }
        }
    }
    // The source line g++ printed under the error.
    let snippet = stderr
        .lines()
        .skip(at + 1)
        .take_while(|l| is_snippet(l))
        .find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_once('|').map_or(l, |(_, code)| code))
        .unwrap_or("");
    if raw.contains("void") {
        let called = snippet
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .find(|w| sim.stubs.contains(*w) && snippet.contains(&format!("{w}(")));
        if let Some(name) = called {
            return format!("{OURS}{name}");
        }
    }
    if raw.contains("expected primary-expression before") && snippet.contains("<<<") {
        return "a `<<<...>>>` kernel launch (a host-side launch helper in the kernel file): the \
             simulator compiles op_kernel as CANN's CPU-debug build does, which leaves such \
             helpers out under `#ifndef ASCENDC_CPU_DEBUG`; guard it the same way"
            .to_string();
    }
    message
}

/// The first error of `stderr`, attributed to a line of the operator rather
/// than to a header under `sim_include` when g++ says where it was required
/// from.
pub(crate) fn first_error(stderr: &str, sim_include: &Path) -> Option<FirstError> {
    let sim_prefix = sim_include.to_string_lossy();
    let in_sim = |file: &str| !sim_prefix.is_empty() && file.starts_with(sim_prefix.as_ref());
    let mut required_from: Option<(String, u32)> = None;
    for (index, line) in stderr.lines().enumerate() {
        if let Some(at) = line.find("multiple definition of") {
            // `/usr/bin/ld: a.o: in function `f': /p/x.h:92: multiple
            // definition of `f'; b.o:/p/x.h:92: first defined here`
            let message = line[at..].split(';').next().unwrap_or(&line[at..]);
            // (gold writes `/p/x.h:92: error: multiple definition of ...`)
            let before = line[..at].trim_end().trim_end_matches(':');
            let before = before.strip_suffix("error").unwrap_or(before);
            let before = before.trim_end().trim_end_matches(':');
            let place = before.rsplit(' ').next().unwrap_or("");
            let (file, line_no) = match place.rsplit_once(':') {
                Some((f, l)) if l.parse::<u32>().is_ok() && !f.is_empty() => {
                    (Some(f.to_string()), l.parse().ok())
                }
                _ => (None, None),
            };
            return Some(FirstError {
                file,
                line: line_no,
                message: message.to_string(),
            });
        }
        if let Some(loc) = parse_located(line) {
            match loc.kind {
                "error" | "fatal error" => {
                    let (file, line_no) = match &required_from {
                        Some((file, line_no)) if in_sim(loc.file) => (file.clone(), *line_no),
                        _ => (loc.file.to_string(), loc.line),
                    };
                    let message = interpret(loc.kind, loc.message, sim_include);
                    let message = in_context(message, loc.message, stderr, index, sim_include);
                    return Some(FirstError {
                        file: Some(file),
                        line: Some(line_no),
                        message,
                    });
                }
                "warning" | "note" => {}
                _ => {
                    if line.contains("required from") && !in_sim(loc.file) {
                        required_from = Some((loc.file.to_string(), loc.line));
                    }
                }
            }
            continue;
        }
        if line.contains(": In ") && line.ends_with(':') {
            required_from = None;
        }
        if line.contains("undefined reference to") {
            // `file.cpp:(.text+0x1a): undefined reference to `foo''
            let file = line
                .split(":(")
                .next()
                .filter(|f| !f.contains(' '))
                .map(str::to_string);
            let message = match unsupported_api(line) {
                Some(name) => format!("not supported by the ascendopt simulator: {name}"),
                None => line
                    .split_once(": ")
                    .map(|(_, m)| m)
                    .unwrap_or(line)
                    .to_string(),
            };
            return Some(FirstError {
                file,
                line: None,
                message,
            });
        }
        if let Some(rest) = line.strip_prefix("<command-line>: error: ") {
            return Some(FirstError {
                file: None,
                line: None,
                message: format!("in a define of the build: {rest}"),
            });
        }
        if let Some(rest) = line
            .strip_prefix("g++: error: ")
            .or_else(|| line.strip_prefix("c++: error: "))
        {
            return Some(FirstError {
                file: None,
                line: None,
                message: rest.to_string(),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIM: &str = "/w/crates/sim/include";

    /// Real g++ 12 output (LC_ALL=C) for a kernel that calls an unsupported
    /// API, an undeclared name and a missing AscendC member.
    const STDERR: &str = "\
/op/k.cpp: In function 'void k(GM_ADDR)':
/op/k.cpp:6:3: error: 'FooBar' was not declared in this scope
    6 |   FooBar(a);
      |   ^~~~~~
/op/k.cpp:8:3: error: 'WholeReduceSum' was not declared in this scope
    8 |   WholeReduceSum(a);
      |   ^~~~~~~~~~~~~~
In file included from /w/crates/sim/include/kernel_operator.h:14,
                 from /op/k.cpp:1:
/w/crates/sim/include/ascendopt/kernel/unsupported.h: In instantiation of 'void AscendC::Mmad(As&& ...) [with Ts = {}; As = {int&, int&}]':
/op/k.cpp:5:7:   required from here
/w/crates/sim/include/ascendopt/kernel/unsupported.h:11:32: error: static assertion failed: not supported by the ascendopt simulator: Mmad
   11 |     static_assert(::ascendopt::always_false<Ts..., As...>,
      |                   ~~~~~~~~~~~~~^~~~~~~~~~~~
/w/crates/sim/include/ascendopt/kernel/unsupported.h:16:1: note: in expansion of macro 'ASCENDOPT_UNSUPPORTED'
   16 | ASCENDOPT_UNSUPPORTED(Mmad)
      | ^~~~~~~~~~~~~~~~~~~~~
/op/k.cpp:9:5: warning: unused variable 'z' [-Wunused-variable]
    9 |   int z;
      |     ^
";

    #[test]
    fn trim_keeps_errors_with_snippets_and_drops_notes_warnings_includes() {
        let expected = "\
/op/k.cpp: In function 'void k(GM_ADDR)':
/op/k.cpp:6:3: error: 'FooBar' was not declared in this scope
    6 |   FooBar(a);
      |   ^~~~~~
/op/k.cpp:8:3: error: 'WholeReduceSum' was not declared in this scope
    8 |   WholeReduceSum(a);
      |   ^~~~~~~~~~~~~~
/w/crates/sim/include/ascendopt/kernel/unsupported.h: In instantiation of 'void AscendC::Mmad(As&& ...) [with Ts = {}; As = {int&, int&}]':
/op/k.cpp:5:7:   required from here
/w/crates/sim/include/ascendopt/kernel/unsupported.h:11:32: error: static assertion failed: not supported by the ascendopt simulator: Mmad
   11 |     static_assert(::ascendopt::always_false<Ts..., As...>,
      |                   ~~~~~~~~~~~~~^~~~~~~~~~~~";
        assert_eq!(trim(STDERR), expected);
    }

    #[test]
    fn first_error_is_a_plain_undeclared_name() {
        let first = first_error(STDERR, Path::new(SIM)).unwrap();
        assert_eq!(first.file.as_deref(), Some("/op/k.cpp"));
        assert_eq!(first.line, Some(6));
        assert_eq!(first.message, "'FooBar' was not declared in this scope");
    }

    #[test]
    fn undeclared_api_name_is_reported_as_unsupported() {
        let text = "/op/k.cpp: In function 'void k()':\n\
                    /op/k.cpp:8:3: error: 'WholeReduceSum' was not declared in this scope\n";
        let first = first_error(text, Path::new(SIM)).unwrap();
        assert_eq!(first.line, Some(8));
        assert_eq!(
            first.message,
            "not supported by the ascendopt simulator: WholeReduceSum"
        );

        let text = "/op/k.cpp:7:12: error: 'TBufPool' is not a member of 'AscendC'\n";
        let first = first_error(text, Path::new(SIM)).unwrap();
        assert_eq!(
            first.message,
            "not supported by the ascendopt simulator: TBufPool"
        );

        let text =
            "/op/k.cpp:6:23: error: 'class AscendC::TPipe' has no member named 'InitBufPool'\n";
        let first = first_error(text, Path::new(SIM)).unwrap();
        assert_eq!(
            first.message,
            "not supported by the ascendopt simulator: TPipe::InitBufPool"
        );

        // A member that is not an AscendC API stays g++'s message.
        let text = "/op/k.cpp:6:23: error: 'class AscendC::TPipe' has no member named 'Frob'\n";
        let first = first_error(text, Path::new(SIM)).unwrap();
        assert_eq!(
            first.message,
            "'class AscendC::TPipe' has no member named 'Frob'"
        );
    }

    #[test]
    fn static_assert_in_a_sim_header_is_attributed_to_the_kernel_line() {
        let text = STDERR.lines().skip(7).collect::<Vec<_>>().join("\n");
        let first = first_error(&text, Path::new(SIM)).unwrap();
        assert_eq!(first.file.as_deref(), Some("/op/k.cpp"));
        assert_eq!(first.line, Some(5));
        assert_eq!(
            first.message,
            "not supported by the ascendopt simulator: Mmad"
        );
    }

    #[test]
    fn linker_errors_are_kept_and_summarised() {
        let text = "/usr/bin/ld: /tmp/cc369g9V.o: in function `k':\n\
                    k2.cpp:(.text+0xa): undefined reference to `undefined_thing'\n\
                    collect2: error: ld returned 1 exit status\n";
        assert_eq!(trim(text), text.trim_end());
        let first = first_error(text, Path::new(SIM)).unwrap();
        assert_eq!(first.file.as_deref(), Some("k2.cpp"));
        assert_eq!(first.line, None);
        assert_eq!(first.message, "undefined reference to `undefined_thing'");

        // A function two host sources both define (from one header).
        let text = "/usr/bin/ld: /tmp/b.o: in function `ns::GetMod(long, long)':\n\
                    /p/op_host/t.h:92: multiple definition of `ns::GetMod(long, long)'; /tmp/a.o:/p/op_host/t.h:92: first defined here\n\
                    collect2: error: ld returned 1 exit status\n";
        let first = first_error(text, Path::new(SIM)).unwrap();
        assert_eq!(first.file.as_deref(), Some("/p/op_host/t.h"));
        assert_eq!(first.line, Some(92));
        assert_eq!(
            first.message,
            "multiple definition of `ns::GetMod(long, long)'"
        );

        let text = "k.cpp:(.text+0xa): undefined reference to `AscendC::GatherMask(int)'\n";
        let first = first_error(text, Path::new(SIM)).unwrap();
        assert_eq!(
            first.message,
            "not supported by the ascendopt simulator: GatherMask"
        );
    }

    #[test]
    fn missing_headers_and_apis_called_another_way_say_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("api.h"),
            "namespace AscendC {\ninline int GetBlockNum() { return 1; }\n}\n// FreeTensor in a comment\n",
        )
        .unwrap();
        let sim = dir.path();
        let text = "op_kernel/x.cpp:12:10: fatal error: kernel_tiling/kernel_tiling.h: No such file or directory\n";
        let first = first_error(text, sim).unwrap();
        assert_eq!(first.file.as_deref(), Some("op_kernel/x.cpp"));
        assert_eq!(first.line, Some(12));
        assert_eq!(
            first.message,
            "header kernel_tiling/kernel_tiling.h: not in the package and not provided by the ascendopt simulator"
        );
        // Declared by the simulator, called unqualified.
        let text = "op_kernel/x.cpp:7:20: error: there are no arguments to 'GetBlockNum' that depend on a template parameter, so a declaration of 'GetBlockNum' must be available [-fpermissive]\n";
        let first = first_error(text, sim).unwrap();
        assert!(
            first.message.starts_with(
                "GetBlockNum is provided by the ascendopt simulator but not visible here"
            ),
            "{}",
            first.message
        );
        let text = "op_kernel/x.cpp:7:20: error: 'GetBlockNum' was not declared in this scope\n";
        assert!(first_error(text, sim)
            .unwrap()
            .message
            .contains("AscendC::GetBlockNum"));
        // Not declared anywhere (a comment does not count): unsupported.
        let text = "op_kernel/x.cpp:7:20: error: 'FreeTensor' was not declared in this scope\n";
        assert_eq!(
            first_error(text, sim).unwrap().message,
            "not supported by the ascendopt simulator: FreeTensor"
        );
        // A missing member names its class.
        let text = "op_kernel/x.cpp:9:5: error: 'class AscendC::TBuf<AscendC::TPosition::VECCALC>' has no member named 'FreeTensor'\n";
        assert_eq!(
            first_error(text, sim).unwrap().message,
            "not supported by the ascendopt simulator: TBuf::FreeTensor"
        );
        // A bad define of the build.
        let text = "<command-line>: error: 'half' was not declared in this scope\n";
        assert_eq!(
            first_error(text, sim).unwrap().message,
            "in a define of the build: 'half' was not declared in this scope"
        );
    }

    /// g++'s first error for `body` (a kernel function body) compiled
    /// against the simulator's headers, interpreted.
    fn first_error_of(body: &str) -> FirstError {
        let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("k.cpp");
        std::fs::write(
            &src,
            format!(
                "#include \"kernel_operator.h\"\nusing namespace AscendC;\n\
                 void helper(GM_ADDR x, GM_ADDR y);\n\
                 extern \"C\" void k(GM_ADDR x, LocalTensor<half> a) {{\n{body}\n}}\n"
            ),
        )
        .unwrap();
        let out = std::process::Command::new("g++")
            .args([
                "-std=c++17",
                "-fsyntax-only",
                "-fdiagnostics-color=never",
                "-I",
            ])
            .arg(&include)
            .arg(&src)
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        assert!(!out.status.success());
        first_error(&String::from_utf8_lossy(&out.stderr), &include).unwrap()
    }

    #[test]
    fn unsupported_stubs_called_any_way_name_themselves() {
        // With a braced list (no stub can take one).
        let e = first_error_of("  TopK(a, a, {1, 2, 3});");
        assert_eq!(e.message, "not supported by the ascendopt simulator: TopK");
        assert_eq!(e.line, Some(5));
        // With explicit template arguments a type pack cannot take.
        let e = first_error_of("  LayerNorm<half, false>(a, a, a, 8);");
        assert_eq!(
            e.message,
            "not supported by the ascendopt simulator: LayerNorm"
        );
        // Its void result used in an expression.
        let e = first_error_of("  if (Transpose(a, a) == nullptr) { return; }");
        assert_eq!(
            e.message,
            "not supported by the ascendopt simulator: Transpose"
        );
        // An ordinary call: the stub's own message, without g++'s prefix.
        let e = first_error_of("  Silu(a, a, 16);");
        assert_eq!(e.message, "not supported by the ascendopt simulator: Silu");
        assert_eq!(e.line, Some(5));
        // A Region Proposal instruction the 910B does not have.
        let e = first_error_of("  RpSort16(a, a, 1);");
        assert!(
            e.message.starts_with(
                "not supported by the ascendopt simulator: RpSort16 (a Region Proposal"
            ),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_kernel_launch_in_the_kernel_file_says_how_to_guard_it() {
        let e = first_error_of("}\nvoid k_do(uint32_t n, void* s, GM_ADDR x, LocalTensor<half> a) {\n  k<<<n, nullptr, s>>>(x, a);");
        assert!(
            e.message.contains("`<<<...>>>` kernel launch"),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("#ifndef ASCENDC_CPU_DEBUG"),
            "{}",
            e.message
        );
        assert_eq!(e.line, Some(7));
    }

    #[test]
    fn third_party_headers_say_how_to_install_them() {
        let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
        let m = interpret(
            "fatal error",
            "nlohmann/json.hpp: No such file or directory",
            &include,
        );
        assert!(
            m.starts_with("header nlohmann/json.hpp: from nlohmann/json, a third-party library")
                && m.ends_with("apt-get install nlohmann-json3-dev)"),
            "{m}"
        );
    }

    #[test]
    fn raw_device_intrinsics_say_so() {
        let e = first_error_of("  vcadd(nullptr, nullptr, 1, 1, 1, 8);");
        assert!(
            e.message.starts_with(
                "not supported by the ascendopt simulator: vcadd (a raw device intrinsic"
            ),
            "{}",
            e.message
        );
        let e = first_error_of("  uint64_t va[8] = {0};\n  set_va_reg_sb(VA0, va);");
        assert!(
            e.message.starts_with(
                "not supported by the ascendopt simulator: VA0 (a vector address register"
            ),
            "{}",
            e.message
        );
        // A kernel-library internal under a provided API.
        let e = first_error_of("  DuplicateImpl<int16_t>((int16_t*)nullptr, 0, 16);");
        assert!(
            e.message.starts_with(
                "not supported by the ascendopt simulator: DuplicateImpl (an internal function \
                 of CANN's kernel library under Duplicate"
            ),
            "{}",
            e.message
        );
        // The mask-state intrinsics are provided.
        let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
        assert!(sim_index(&include).provides("set_mask_count"));
    }

    #[test]
    fn stubs_are_not_provided_apis() {
        let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
        let index = sim_index(&include);
        for stub in ["TopK", "LayerNorm", "SimpleSoftMax", "RpSort16", "MrgSort4"] {
            assert!(index.stubs.contains(stub), "{stub}");
            assert!(!index.provides(stub), "{stub}");
        }
        for api in [
            "GatherMask",
            "Sigmoid",
            "Sort32",
            "Add",
            "GetUserWorkspace",
            "TransDataTo5HD",
            "Mmad",
            "LoadData",
            "LoadDataWithTranspose",
            "Fixpipe",
        ] {
            assert!(index.provides(api), "{api}");
        }
    }

    #[test]
    fn driver_errors_fall_back_to_the_whole_text() {
        let text = "g++: error: /op/missing.cpp: No such file or directory\n\
                    g++: fatal error: no input files\ncompilation terminated.\n";
        assert_eq!(trim(text), text.trim_end());
        let first = first_error(text, Path::new(SIM)).unwrap();
        assert_eq!(first.message, "/op/missing.cpp: No such file or directory");
    }

    #[test]
    fn trimmed_text_is_bounded() {
        let many: String = (0..1000)
            .map(|i| format!("/op/k.cpp:{i}:1: error: 'x{i}' was not declared in this scope\n"))
            .collect();
        let out = trim(&many);
        assert_eq!(out.lines().count(), MAX_LINES + 1);
        assert!(out.ends_with("... (more diagnostics cut)"));
    }
}
