//! The tokens of a preprocessed unit (what g++ compiles: every macro
//! expanded, `#if`s decided, comments gone) that come from the operator's
//! own files, each mapped back to its file and line through g++'s line
//! markers (`# 12 "/abs/op_kernel/x.cpp" 2`).
//!
//! Tokens of the emulation headers and the system's headers are dropped;
//! what a macro expands to is attributed by g++ to the line where the macro
//! is used, so a `static` or `extern "C"` that a macro of the operator's
//! produces shows at that line, in that file.

use super::lex::{lex, Directive, Tok};
use std::collections::BTreeMap;
use std::path::Path;

/// The code tokens and pragmas of one operator file, in unit order.
#[derive(Debug, Default)]
pub(crate) struct FileStream {
    /// Code tokens (lines are the file's own).
    pub code: Vec<Tok>,
    /// `#pragma` lines as g++ kept them (lines are the file's own).
    pub pragmas: Vec<Directive>,
}

/// A marker's file name, unescaped.
fn marker_file(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    let body = rest.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    None
}

/// Parses `# <line> "<file>" ...` (or `#line <line> "<file>"`).
fn line_marker(text: &str) -> Option<(u32, String)> {
    let rest = text.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").unwrap_or(rest).trim_start();
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        return None;
    }
    let line = digits.parse().ok()?;
    let file = marker_file(&rest[digits.len()..])?;
    Some((line, file))
}

/// The operator-relative path of a marker's file, when it is one of the
/// operator's (`op_dir` canonical).
fn relative(file: &str, op_dir: &Path) -> Option<String> {
    let path = Path::new(file);
    // A marker may name a file relative to the folder g++ ran in, or (with
    // the build's prefix map) relative to the operator.
    let canonical = std::fs::canonicalize(path)
        .or_else(|_| std::fs::canonicalize(op_dir.join(path)))
        .ok()?;
    let rel = canonical.strip_prefix(op_dir).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

/// Splits the preprocessed `text` of a unit of the operator in `op_dir`
/// into the streams of the operator's files.
pub(crate) fn streams(text: &str, op_dir: &Path) -> BTreeMap<String, FileStream> {
    let op_dir = std::fs::canonicalize(op_dir).unwrap_or_else(|_| op_dir.to_path_buf());
    let mut known: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut out: BTreeMap<String, FileStream> = BTreeMap::new();
    // The current segment: its file (when the operator's), first line and
    // text.
    let mut file: Option<String> = None;
    let mut line = 1u32;
    let mut seg_start = 1u32;
    let mut seg = String::new();
    let mut flush = |file: &Option<String>, start: u32, seg: &mut String| {
        if let Some(f) = file {
            if !seg.trim().is_empty() {
                let lexed = lex(seg);
                let stream = out.entry(f.clone()).or_default();
                let shift = start.saturating_sub(1);
                stream.code.extend(lexed.code.into_iter().map(|mut t| {
                    t.line += shift;
                    t
                }));
                stream.pragmas.extend(
                    lexed
                        .directives
                        .into_iter()
                        .filter(|d| d.name == "pragma")
                        .map(|mut d| {
                            d.line += shift;
                            for t in &mut d.tokens {
                                t.line += shift;
                            }
                            d
                        }),
                );
            }
        }
        seg.clear();
    };
    for raw in text.split('\n') {
        if let Some((to, name)) = line_marker(raw) {
            flush(&file, seg_start, &mut seg);
            file = known
                .entry(name.clone())
                .or_insert_with(|| relative(&name, &op_dir))
                .clone();
            line = to;
            seg_start = to;
            continue;
        }
        if file.is_some() {
            seg.push_str(raw);
        }
        seg.push('\n');
        line += 1;
    }
    let _ = line;
    flush(&file, seg_start, &mut seg);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_map_tokens_to_the_operators_files_and_lines() {
        let dir = tempfile::tempdir().unwrap();
        let op = dir.path().join("op");
        std::fs::create_dir_all(op.join("op_kernel")).unwrap();
        std::fs::write(op.join("op_kernel/k.cpp"), "").unwrap();
        std::fs::write(op.join("op_kernel/h.h"), "").unwrap();
        let k = op.join("op_kernel/k.cpp").display().to_string();
        let h = op.join("op_kernel/h.h").display().to_string();
        let text = format!(
            "# 0 \"{k}\"\n# 1 \"/usr/include/stdint.h\" 1 3\ntypedef int int32_t;\n\
             # 3 \"{k}\" 2\nint a;\n\n# 1 \"{h}\" 1\nstatic int s = 0;\n#pragma GCC optimize(\"O3\")\n\
             # 5 \"{k}\" 2\nint b;\n"
        );
        let s = streams(&text, &op);
        assert_eq!(s.len(), 2);
        let kt: Vec<(String, u32)> = s["op_kernel/k.cpp"]
            .code
            .iter()
            .map(|t| (t.text.clone(), t.line))
            .collect();
        assert_eq!(
            kt,
            vec![
                ("int".into(), 3),
                ("a".into(), 3),
                (";".into(), 3),
                ("int".into(), 5),
                ("b".into(), 5),
                (";".into(), 5)
            ]
        );
        let ht = &s["op_kernel/h.h"];
        assert_eq!(ht.code[0].text, "static");
        assert_eq!(ht.code[0].line, 1);
        assert_eq!(ht.pragmas.len(), 1);
        assert_eq!(ht.pragmas[0].line, 2);
        assert!(!s.contains_key("/usr/include/stdint.h"));
    }

    #[test]
    fn escaped_marker_names_are_read() {
        assert_eq!(
            line_marker("# 7 \"a \\\"b\\\".cpp\" 2"),
            Some((7, "a \"b\".cpp".to_string()))
        );
        assert_eq!(line_marker("int x;"), None);
        assert_eq!(line_marker("#pragma once"), None);
    }
}
