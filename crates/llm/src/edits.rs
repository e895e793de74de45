//! Search/replace edit blocks: how a model's answer becomes sources.
//!
//! Format (the prompts teach it): a line naming the file, then
//!
//! ```text
//! op_kernel/add_custom.cpp
//! <<<<<<< SEARCH
//! exact lines of the current file
//! =======
//! the lines that replace them
//! >>>>>>> REPLACE
//! ```
//!
//! A block without its own file line edits the previous block's file. A
//! block applies where its SEARCH text occurs exactly once (a SEARCH that
//! quotes only part of a line is matched without its final newline); else
//! where its
//! lines occur exactly once after normalising whitespace (runs of spaces
//! collapsed, ends trimmed, blank lines ignored); otherwise it is rejected
//! with a reason (unknown file, not found, ambiguous, no change), which the
//! caller feeds back to the model. Blocks apply in order, each to the text
//! the previous ones left. An empty SEARCH creates a file that does not
//! exist yet.
//!
//! Confinement: a block may only write a C/C++ file inside `op_kernel/` or
//! `op_host/` of the candidate ([`confined_path`]). Its path is normalised
//! first (`./`, `//`, `dir/..`); a path that leaves those folders (
//! `op_kernel/../op.toml`, `../../tmp/x`, an absolute path) or names
//! anything else (op.toml, a golden script, a test) is rejected with the
//! reason and [`Rejection::outside`] set, and never reaches the disk.

use std::collections::BTreeMap;
use std::fmt;

/// One parsed block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditBlock {
    /// The file it names, as written.
    pub path: String,
    /// Text to find (whole lines, each ending in `\n`; empty for a new file).
    pub search: String,
    /// Text to put in its place.
    pub replace: String,
}

/// The blocks of an answer and what could not be parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Complete blocks, in order.
    pub blocks: Vec<EditBlock>,
    /// Malformed blocks, in words.
    pub problems: Vec<String>,
}

/// How a block matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The SEARCH text occurs once, byte for byte.
    Exact,
    /// The SEARCH lines occur once up to whitespace.
    Normalised,
    /// The block created a new file.
    Created,
}

/// A block that applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedBlock {
    /// 1-based index of the block in the answer.
    pub index: usize,
    /// The file (as resolved).
    pub path: String,
    /// 1-based first line replaced.
    pub line: usize,
    /// How it matched.
    pub how: MatchKind,
}

/// A block that did not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// 1-based index of the block in the answer (0 for a parse problem).
    pub index: usize,
    /// The file it named.
    pub path: String,
    /// Why, in words for the model.
    pub reason: String,
    /// It tried to write outside the candidate's sources.
    pub outside: bool,
}

/// The folders of a candidate a proposer may write.
pub const WRITABLE_DIRS: [&str; 2] = ["op_kernel", "op_host"];

/// Extensions of the files a proposer may write (C/C++ sources and headers).
pub const WRITABLE_EXTENSIONS: [&str; 11] = [
    "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "inl", "ipp", "tpp",
];

/// Why [`confined_path`] refused a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconfined {
    /// A backslash or a control character.
    BadCharacter,
    /// An absolute (or home-relative) path.
    Absolute,
    /// `..` climbs out of the candidate's folder.
    LeavesFolder,
    /// Normalised, it lies outside `op_kernel/` and `op_host/`.
    OutsideSourceDirs {
        /// The normalised path.
        normal: String,
    },
    /// Not a C/C++ source or header.
    NotSource,
}

impl fmt::Display for Unconfined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unconfined::BadCharacter => write!(f, "has a backslash or control character"),
            Unconfined::Absolute => write!(f, "is absolute"),
            Unconfined::LeavesFolder => write!(f, "leaves the candidate's folder"),
            Unconfined::OutsideSourceDirs { normal } => write!(
                f,
                "is {normal:?} once normalised, outside op_kernel/ and op_host/"
            ),
            Unconfined::NotSource => write!(f, "is not a C/C++ source or header"),
        }
    }
}

/// A path a proposer may not write ([`confined_path`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path:?} {why}: a proposer writes only C/C++ files under op_kernel/ and op_host/ of the candidate (never op.toml, goldens, tests or anything else)")]
pub struct PathRefused {
    /// The path as given.
    pub path: String,
    /// Why it is refused.
    pub why: Unconfined,
}

/// `path` normalised (`./`, empty components and `dir/..` resolved), when it
/// names a C/C++ file inside `op_kernel/` or `op_host/` of a candidate;
/// otherwise why a proposer may not write it.
pub fn confined_path(path: &str) -> Result<String, PathRefused> {
    let refuse = |why: Unconfined| {
        Err(PathRefused {
            path: path.to_string(),
            why,
        })
    };
    if path.contains(['\\', '\0']) || path.chars().any(char::is_control) {
        return refuse(Unconfined::BadCharacter);
    }
    if path.starts_with('/') || path.starts_with('~') {
        return refuse(Unconfined::Absolute);
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return refuse(Unconfined::LeavesFolder);
                }
            }
            p => parts.push(p),
        }
    }
    let normal = parts.join("/");
    if parts.len() < 2 || !WRITABLE_DIRS.contains(&parts[0]) {
        return refuse(Unconfined::OutsideSourceDirs { normal });
    }
    let ext = parts[parts.len() - 1].rsplit_once('.').map(|(_, e)| e);
    if !ext.is_some_and(|e| WRITABLE_EXTENSIONS.contains(&e)) {
        return refuse(Unconfined::NotSource);
    }
    Ok(normal)
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.index == 0 {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "block {} ({}): {}", self.index, self.path, self.reason)
        }
    }
}

/// The result of applying an answer's blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// Every file after the edits (changed or not).
    pub files: BTreeMap<String, String>,
    /// Blocks that applied.
    pub applied: Vec<AppliedBlock>,
    /// Blocks that did not, and parse problems.
    pub rejected: Vec<Rejection>,
}

impl Applied {
    /// Whether at least one block applied and changed something.
    pub fn changed(&self) -> bool {
        !self.applied.is_empty()
    }

    /// One line per rejection (empty when none).
    pub fn rejection_text(&self) -> String {
        self.rejected
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn is_search_marker(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("<<<<<<<") && t.contains("SEARCH")
}

fn is_divider(line: &str) -> bool {
    line.trim() == "======="
}

fn is_replace_marker(line: &str) -> bool {
    let t = line.trim();
    t.starts_with(">>>>>>>") && t.contains("REPLACE")
}

/// The file a line names, if it looks like a path line (`op_kernel/x.cpp`,
/// `File: op_host/x.cpp`, `` `x.cpp` ``, `### op_kernel/x.cpp:`).
fn path_of(line: &str) -> Option<String> {
    let mut t = line.trim();
    if t.starts_with("```") {
        return None;
    }
    t = t.trim_start_matches('#').trim();
    for prefix in ["File:", "file:", "FILE:", "Path:", "path:"] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest.trim();
        }
    }
    let t = t
        .trim_matches(|c| c == '`' || c == '*' || c == '"' || c == '\'')
        .trim_end_matches(':')
        .trim();
    let plausible = !t.is_empty()
        && !t.contains(char::is_whitespace)
        && t.contains('.')
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
    plausible.then(|| t.to_string())
}

/// Parses every block of an answer.
pub fn parse_blocks(text: &str) -> Parsed {
    enum State {
        Outside,
        Search,
        Replace,
    }
    let mut parsed = Parsed::default();
    let mut state = State::Outside;
    let mut last_path: Option<String> = None;
    let mut pending_path: Option<String> = None;
    let mut block_path: Option<String> = None;
    let mut search = String::new();
    let mut replace = String::new();
    for line in text.lines() {
        match state {
            State::Outside => {
                if is_search_marker(line) {
                    block_path = pending_path.take().or_else(|| last_path.clone());
                    search.clear();
                    replace.clear();
                    state = State::Search;
                } else if !line.trim().is_empty() {
                    if let Some(p) = path_of(line) {
                        pending_path = Some(p);
                    } else if !line.trim().starts_with("```") {
                        pending_path = None;
                    }
                }
            }
            State::Search => {
                if is_divider(line) {
                    state = State::Replace;
                } else if is_search_marker(line) || is_replace_marker(line) {
                    parsed
                        .problems
                        .push("a SEARCH block has no ======= divider".to_string());
                    state = State::Outside;
                } else {
                    search.push_str(line);
                    search.push('\n');
                }
            }
            State::Replace => {
                if is_replace_marker(line) {
                    match block_path.take() {
                        Some(path) => {
                            last_path = Some(path.clone());
                            parsed.blocks.push(EditBlock {
                                path,
                                search: std::mem::take(&mut search),
                                replace: std::mem::take(&mut replace),
                            });
                        }
                        None => parsed.problems.push(
                            "a SEARCH/REPLACE block names no file (put the file's path on the line before <<<<<<< SEARCH)"
                                .to_string(),
                        ),
                    }
                    state = State::Outside;
                } else {
                    replace.push_str(line);
                    replace.push('\n');
                }
            }
        }
    }
    if !matches!(state, State::Outside) {
        parsed
            .problems
            .push("the last SEARCH/REPLACE block is not closed with >>>>>>> REPLACE".to_string());
    }
    parsed
}

/// Why an edit block's path names no one file of the kernel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Unresolved {
    /// No file has that path.
    #[error("no file {path} in this kernel (files: {})", files.join(", "))]
    NoSuchFile {
        /// The path as given.
        path: String,
        /// The kernel's files.
        files: Vec<String>,
    },
    /// Several files end with that path.
    #[error("{path} could be any of {}", candidates.join(", "))]
    Ambiguous {
        /// The path as given.
        path: String,
        /// The files it could mean.
        candidates: Vec<String>,
    },
}

/// The key of `files` that `path` names: itself, or the one key it ends
/// with (or that ends with it) at a `/` boundary.
fn resolve(files: &BTreeMap<String, String>, path: &str) -> Result<String, Unresolved> {
    let path = path.trim_start_matches("./");
    if files.contains_key(path) {
        return Ok(path.to_string());
    }
    let hits: Vec<&String> = files
        .keys()
        .filter(|k| path.ends_with(&format!("/{k}")) || k.ends_with(&format!("/{path}")))
        .collect();
    match hits.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Unresolved::NoSuchFile {
            path: path.to_string(),
            files: files.keys().cloned().collect(),
        }),
        many => Err(Unresolved::Ambiguous {
            path: path.to_string(),
            candidates: many.iter().map(|s| s.to_string()).collect(),
        }),
    }
}

fn normalise(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].bytes().filter(|b| *b == b'\n').count() + 1
}

/// Byte ranges (start, end) of every whitespace-normalised occurrence of
/// `search`'s non-blank lines in `text`.
fn normalised_windows(text: &str, search: &str) -> Vec<(usize, usize)> {
    let wanted: Vec<String> = search
        .lines()
        .map(normalise)
        .filter(|l| !l.is_empty())
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    // (normalised line, start byte, end byte including its newline)
    let mut lines: Vec<(String, usize, usize)> = Vec::new();
    let mut pos = 0;
    for raw in text.split_inclusive('\n') {
        let n = normalise(raw);
        if !n.is_empty() {
            lines.push((n, pos, pos + raw.len()));
        }
        pos += raw.len();
    }
    let mut out = Vec::new();
    if lines.len() < wanted.len() {
        return out;
    }
    for start in 0..=lines.len() - wanted.len() {
        if lines[start..start + wanted.len()]
            .iter()
            .zip(&wanted)
            .all(|((l, _, _), w)| l == w)
        {
            out.push((lines[start].1, lines[start + wanted.len() - 1].2));
        }
    }
    out
}

/// Applies `blocks` to `files` (path → text). Rejected blocks leave the
/// files as they were; parse problems of the answer are reported too.
pub fn apply_blocks(files: &BTreeMap<String, String>, parsed: &Parsed) -> Applied {
    let mut out = files.clone();
    let mut applied = Vec::new();
    let mut rejected: Vec<Rejection> = parsed
        .problems
        .iter()
        .map(|p| Rejection {
            index: 0,
            path: String::new(),
            reason: p.clone(),
            outside: false,
        })
        .collect();
    for (i, block) in parsed.blocks.iter().enumerate() {
        let index = i + 1;
        let reject = |reason: String| Rejection {
            index,
            path: block.path.clone(),
            reason,
            outside: false,
        };
        // An existing file (always one of the candidate's sources), else a
        // new one, which must lie where a proposer may write.
        let existing = resolve(&out, block.path.trim_start_matches("./"));
        let confined = confined_path(block.path.trim_start_matches("./"));
        if existing.is_err() {
            if let Err(reason) = &confined {
                rejected.push(Rejection {
                    outside: true,
                    ..reject(reason.to_string())
                });
                continue;
            }
        }
        if block.search.trim().is_empty() {
            match (&existing, confined) {
                (Ok(_), _) => rejected.push(reject(
                    "empty SEARCH on an existing file: quote the lines to replace".into(),
                )),
                (Err(_), Ok(path)) => {
                    out.insert(path.clone(), block.replace.clone());
                    applied.push(AppliedBlock {
                        index,
                        path,
                        line: 1,
                        how: MatchKind::Created,
                    });
                }
                (Err(_), Err(_)) => {}
            }
            continue;
        }
        if block.search == block.replace {
            rejected.push(reject(
                "SEARCH and REPLACE are identical: nothing changes".into(),
            ));
            continue;
        }
        let path = match existing {
            Ok(p) => p,
            Err(reason) => {
                rejected.push(reject(reason.to_string()));
                continue;
            }
        };
        let text = out.get(&path).cloned().unwrap_or_default();
        let mut search: &str = &block.search;
        let mut replace: &str = &block.replace;
        let mut exact: Vec<usize> = text.match_indices(search).map(|(p, _)| p).collect();
        if exact.is_empty() {
            // A SEARCH that quotes part of a line: match it without its
            // final newline (and replace without it).
            let (s, r) = (
                search.strip_suffix('\n').unwrap_or(search),
                replace.strip_suffix('\n').unwrap_or(replace),
            );
            if !s.trim().is_empty() {
                let found: Vec<usize> = text.match_indices(s).map(|(p, _)| p).collect();
                if !found.is_empty() {
                    (search, replace, exact) = (s, r, found);
                }
            }
        }
        let (range, how) = match exact.as_slice() {
            [one] => ((*one, *one + search.len()), MatchKind::Exact),
            [] => {
                let windows = normalised_windows(&text, &block.search);
                match windows.as_slice() {
                    [one] => (*one, MatchKind::Normalised),
                    [] => {
                        let first = block
                            .search
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("")
                            .trim();
                        rejected.push(reject(format!(
                            "SEARCH text not found, not even up to whitespace (its first line: `{first}`); copy the lines exactly from the current file"
                        )));
                        continue;
                    }
                    many => {
                        let at: Vec<String> = many
                            .iter()
                            .map(|(s, _)| line_of(&text, *s).to_string())
                            .collect();
                        rejected.push(reject(format!(
                            "SEARCH text matches {} places up to whitespace (lines {}); include more context so it matches once",
                            many.len(),
                            at.join(", ")
                        )));
                        continue;
                    }
                }
            }
            many => {
                let at: Vec<String> = many
                    .iter()
                    .map(|s| line_of(&text, *s).to_string())
                    .collect();
                rejected.push(reject(format!(
                    "SEARCH text matches {} places (lines {}); include more context so it matches once",
                    many.len(),
                    at.join(", ")
                )));
                continue;
            }
        };
        let mut replacement = if how == MatchKind::Exact {
            replace.to_string()
        } else {
            block.replace.clone()
        };
        if how != MatchKind::Exact && range.1 == text.len() && !text.ends_with('\n') {
            // The window ended at a last line without newline.
            replacement = replacement.trim_end_matches('\n').to_string();
        }
        let mut new_text = String::with_capacity(text.len() + replacement.len());
        new_text.push_str(&text[..range.0]);
        new_text.push_str(&replacement);
        new_text.push_str(&text[range.1..]);
        if new_text == text {
            rejected.push(reject("the edit changes nothing".into()));
            continue;
        }
        applied.push(AppliedBlock {
            index,
            path: path.clone(),
            line: line_of(&text, range.0),
            how,
        });
        out.insert(path, new_text);
    }
    Applied {
        files: out,
        applied,
        rejected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> BTreeMap<String, String> {
        let mut f = BTreeMap::new();
        f.insert(
            "op_kernel/k.cpp".to_string(),
            "int a = 1;\nvoid f() {\n    g(1,  2);\n}\nvoid h() {\n    g(1,  2);\n}\n".to_string(),
        );
        f.insert("op_host/k.cpp".to_string(), "int b = 2;\n".to_string());
        f
    }

    #[test]
    fn parses_paths_markers_and_inherits_the_file() {
        let answer = "Here is the change.\n\n```cpp\nop_kernel/k.cpp\n<<<<<<< SEARCH\nint a = 1;\n=======\nint a = 2;\n>>>>>>> REPLACE\n```\n<<<<<<< SEARCH\nvoid f() {\n=======\nvoid f2() {\n>>>>>>> REPLACE\n\nFile: `op_host/k.cpp`\n<<<<<<< SEARCH\nint b = 2;\n=======\n>>>>>>> REPLACE\n";
        let p = parse_blocks(answer);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.blocks.len(), 3);
        assert_eq!(p.blocks[0].path, "op_kernel/k.cpp");
        assert_eq!(p.blocks[1].path, "op_kernel/k.cpp");
        assert_eq!(p.blocks[1].replace, "void f2() {\n");
        assert_eq!(p.blocks[2].path, "op_host/k.cpp");
        assert_eq!(p.blocks[2].replace, "");
        let a = apply_blocks(&files(), &p);
        assert!(a.rejected.is_empty(), "{:?}", a.rejected);
        assert_eq!(
            a.files["op_kernel/k.cpp"],
            "int a = 2;\nvoid f2() {\n    g(1,  2);\n}\nvoid h() {\n    g(1,  2);\n}\n"
        );
        assert_eq!(a.files["op_host/k.cpp"], "");
        assert!(a.applied.iter().all(|b| b.how == MatchKind::Exact));
    }

    #[test]
    fn whitespace_normalised_window_applies_when_unique() {
        let answer = "op_kernel/k.cpp\n<<<<<<< SEARCH\nvoid h()   {\n\n  g(1, 2);\n=======\nvoid h() {\n    g(3, 4);\n>>>>>>> REPLACE\n";
        let a = apply_blocks(&files(), &parse_blocks(answer));
        assert!(a.rejected.is_empty(), "{:?}", a.rejected);
        assert_eq!(a.applied[0].how, MatchKind::Normalised);
        assert_eq!(a.applied[0].line, 5);
        assert!(a.files["op_kernel/k.cpp"].ends_with("void h() {\n    g(3, 4);\n}\n"));
    }

    #[test]
    fn ambiguous_unmatched_unknown_and_malformed_blocks_are_rejected_with_reasons() {
        let answer = "op_kernel/k.cpp\n<<<<<<< SEARCH\n    g(1,  2);\n=======\n    g(0);\n>>>>>>> REPLACE\nop_kernel/k.cpp\n<<<<<<< SEARCH\nint zzz;\n=======\nint y;\n>>>>>>> REPLACE\nop_kernel/nope.cpp\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\nop_kernel/k.cpp\n<<<<<<< SEARCH\nint a = 1;\n=======\nint a = 1;\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nint a = 1;\n";
        let parsed = parse_blocks(answer);
        assert_eq!(parsed.problems.len(), 1);
        let a = apply_blocks(&files(), &parsed);
        assert!(!a.changed());
        assert_eq!(a.files, files());
        let text = a.rejection_text();
        assert!(text.contains("matches 2 places (lines 3, 6)"), "{text}");
        assert!(text.contains("not found"), "{text}");
        assert!(text.contains("no file op_kernel/nope.cpp"), "{text}");
        assert!(text.contains("identical"), "{text}");
        assert!(text.contains("not closed"), "{text}");
    }

    #[test]
    fn a_partial_line_search_matches_without_its_newline() {
        let answer =
            "op_kernel/k.cpp\n<<<<<<< SEARCH\nint a = 1\n=======\nint a = 7\n>>>>>>> REPLACE\n";
        let a = apply_blocks(&files(), &parse_blocks(answer));
        assert!(a.rejected.is_empty(), "{:?}", a.rejected);
        assert!(a.files["op_kernel/k.cpp"].starts_with("int a = 7;\nvoid f()"));
        // Ambiguous as a partial line too.
        let answer = "op_kernel/k.cpp\n<<<<<<< SEARCH\ng(1,\n=======\ng(5,\n>>>>>>> REPLACE\n";
        let a = apply_blocks(&files(), &parse_blocks(answer));
        assert!(
            a.rejection_text().contains("matches 2 places"),
            "{}",
            a.rejection_text()
        );
    }

    #[test]
    fn paths_are_normalised_and_confined_to_the_candidates_sources() {
        assert_eq!(
            confined_path("op_kernel/./sub//x.h").unwrap(),
            "op_kernel/sub/x.h"
        );
        assert_eq!(
            confined_path("op_host/../op_kernel/y.cpp").unwrap(),
            "op_kernel/y.cpp"
        );
        for bad in [
            "op_kernel/../op.toml",
            "op_kernel/../../../tmp/x.cpp",
            "../x.cpp",
            "/tmp/x.cpp",
            "op.toml",
            "golden.py",
            "op_kernel/golden.py",
            "tests/st/case.json",
            "op_kernel",
            "op_kernel\\..\\op.toml",
            "op_kernel/x.cpp\0",
        ] {
            let err = confined_path(bad).unwrap_err().to_string();
            assert!(err.contains("a proposer writes only"), "{bad}: {err}");
        }
        // As edit blocks: nothing outside is written, each refusal says why.
        let answer = "op_kernel/../op.toml\n<<<<<<< SEARCH\n=======\n[op]\n>>>>>>> REPLACE\n\
                      op_kernel/../../../tmp/x\n<<<<<<< SEARCH\n=======\nboom\n>>>>>>> REPLACE\n\
                      op_kernel/../op.toml\n<<<<<<< SEARCH\nname = 1\n=======\nname = 2\n>>>>>>> REPLACE\n";
        let applied = apply_blocks(&files(), &parse_blocks(answer));
        assert!(!applied.changed());
        assert_eq!(applied.files, files());
        assert_eq!(applied.rejected.len(), 3);
        assert!(applied.rejected.iter().all(|r| r.outside), "{applied:?}");
        assert!(applied.rejected[0]
            .reason
            .contains("\"op.toml\" once normalised"));
        // A new source inside op_kernel/ is fine.
        let new =
            "op_kernel/sub/../extra.h\n<<<<<<< SEARCH\n=======\n#pragma once\n>>>>>>> REPLACE\n";
        let applied = apply_blocks(&files(), &parse_blocks(new));
        assert!(applied.files.contains_key("op_kernel/extra.h"));
    }

    #[test]
    fn suffix_paths_resolve_and_blocks_without_a_file_are_problems() {
        let answer = "ops/add/op_host/k.cpp\n<<<<<<< SEARCH\nint b = 2;\n=======\nint b = 3;\n>>>>>>> REPLACE\n";
        let a = apply_blocks(&files(), &parse_blocks(answer));
        assert_eq!(a.files["op_host/k.cpp"], "int b = 3;\n");
        let answer =
            "Change this:\n<<<<<<< SEARCH\nint b = 2;\n=======\nint b = 3;\n>>>>>>> REPLACE\n";
        let p = parse_blocks(answer);
        assert!(p.blocks.is_empty());
        assert!(p.problems[0].contains("names no file"));
        assert!(parse_blocks("no blocks at all").blocks.is_empty());
    }
}
