//! The shared kit of ascendopt's integration tests, so that every crate's
//! `tests/it/` binary makes its folders, its small operators and its
//! command runs the same way:
//!
//! - [`repo`], [`ops_dir`], [`build_cache_dir`]: the repository's folders
//!   (the build cache is shared by a whole test run, so an operator's
//!   kernel compiles once);
//! - [`scratch`] and [`tempdir`]: a process-wide scratch folder and a fresh
//!   temporary one;
//! - [`small_copy`], [`with_cases`], [`small_add_custom`]: small
//!   operators, copies of built-in ones with their large cases dropped or
//!   their cases replaced, or add_custom with two small cases and edited
//!   sources (a test's evaluation then takes about a second); and the
//!   op.toml edits they are made of, for a test's own copy (edited
//!   sources, a weakened kernel): [`map_cases`], [`replace_cases`],
//!   [`binary_cases`], [`first_shape_elements`];
//! - [`Cmd`]: runs a binary (the CLI's tests run `ascendopt`) with the
//!   shared build cache and returns its exit code and output as text;
//! - [`llm_server`]: a scripted OpenAI-protocol server on loopback, for
//!   the tests of everything that talks to an LLM.
//!
//! It depends on no ascendopt crate (it edits op.toml as text), so every
//! crate, down to `op` and `sim`, can use it as a dev-dependency.
#![deny(missing_docs)]

#[allow(missing_docs)]
pub mod llm_server;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The built-in operators (`ops/`).
pub fn ops_dir() -> PathBuf {
    repo().join("ops")
}

/// The build cache shared by the tests of one checkout
/// (`target/ascendopt-test-cache`).
pub fn build_cache_dir() -> PathBuf {
    repo().join("target/ascendopt-test-cache")
}

/// A scratch folder for the whole test process (removed at its end).
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a scratch folder"))
        .path()
}

/// A fresh temporary folder (removed when dropped).
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

/// Copies the folder `from` to `to`, leaving out `build/` folders (the
/// package copy of the operator crate, so tests copy as the tool does).
pub fn copy_dir(from: &Path, to: &Path) {
    ascendopt_op::package::copy_tree(from, to, &["build"]).unwrap_or_else(|(path, e)| {
        panic!(
            "copying {} to {}: {}: {e}",
            from.display(),
            to.display(),
            path.display()
        )
    });
}

/// The input elements of an op.toml `[[cases]]` block: the sum over its
/// `shapes` of the product of each shape.
pub fn case_elements(block: &str) -> u64 {
    block
        .lines()
        .find(|l| l.trim_start().starts_with("shapes"))
        .and_then(|l| l.split_once('='))
        .map(|(_, v)| {
            v.split("],")
                .map(|dims| {
                    dims.chars()
                        .map(|c| if c.is_ascii_digit() { c } else { ' ' })
                        .collect::<String>()
                        .split_whitespace()
                        .filter_map(|n| n.parse::<u64>().ok())
                        .product::<u64>()
                })
                .sum()
        })
        .unwrap_or(0)
}

/// The elements of the first shape of an op.toml `[[cases]]` block (its
/// first input), when the block has a `shapes` line.
pub fn first_shape_elements(block: &str) -> Option<u64> {
    let line = block
        .lines()
        .find(|l| l.trim_start().starts_with("shapes"))?;
    let start = line.find("[[")? + 2;
    let end = line[start..].find(']')? + start;
    line[start..end]
        .split(',')
        .map(|x| x.trim().parse::<u64>().ok())
        .try_fold(1u64, |acc, x| x.map(|v| acc * v))
}

/// Rewrites the cases of the op.toml in `dir`: each `[[cases]]` table, as
/// text from its header up to the next table (its own `[cases.x]`
/// sub-tables included), goes through `map`, which
/// returns the table to keep (the same, or edited) or `None` to drop it;
/// everything before the first case is kept as it is. Returns how many
/// cases were dropped.
pub fn map_cases(dir: &Path, mut map: impl FnMut(&str) -> Option<String>) -> usize {
    let path = dir.join("op.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut kept = String::new();
    let mut block = String::new();
    let mut dropped = 0;
    let mut flush = |block: &mut String, kept: &mut String| {
        if block.starts_with("[[cases]]") {
            match map(block) {
                Some(b) => kept.push_str(&b),
                None => dropped += 1,
            }
        } else {
            kept.push_str(block);
        }
        block.clear();
    };
    for line in text.lines() {
        // A case's own sub-tables (`[cases.x]`) belong to its block.
        let sub_table = line.starts_with("[cases.") || line.starts_with("[[cases.");
        if line.starts_with('[') && !sub_table {
            flush(&mut block, &mut kept);
        }
        block.push_str(line);
        block.push('\n');
    }
    flush(&mut block, &mut kept);
    std::fs::write(&path, kept).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    dropped
}

/// Replaces the cases of the op.toml in `dir` by `cases` (TOML
/// `[[cases]]` tables), keeping everything before its first case.
pub fn replace_cases(dir: &Path, cases: &str) {
    let path = dir.join("op.toml");
    let spec = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let head = match spec.find("\n[[cases]]") {
        Some(i) => &spec[..i + 1],
        None => spec.as_str(),
    };
    std::fs::write(&path, format!("{head}{cases}"))
        .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// The `[[cases]]` of a small copy of an element-wise operator with two
/// inputs of one shape (add_custom and its kind): a float16 tail case
/// `f16_tail` of 3 x 1001 and a float16 benchmark case `f16_bench` of
/// `rows` x `cols`.
pub fn binary_cases(rows: usize, cols: usize) -> String {
    format!(
        r#"
[[cases]]
name = "f16_tail"
shapes = [[3, 1001], [3, 1001]]
dtype = "float16"

[[cases]]
name = "f16_bench"
shapes = [[{rows}, {cols}], [{rows}, {cols}]]
dtype = "float16"
"#
    )
}

/// A copy of built-in operator `op` in `dst/<op>` without its cases of
/// more than `max_elements` input elements ([`case_elements`]): a small
/// operator for quick tests. Panics when no case is dropped or none is
/// left (the copy would not be what the test thinks it is).
pub fn small_copy(op: &str, dst: &Path, max_elements: u64) -> PathBuf {
    let out = dst.join(op);
    copy_dir(&ops_dir().join(op), &out);
    let dropped = map_cases(&out, |block| {
        (case_elements(block) <= max_elements).then(|| block.to_string())
    });
    assert!(dropped > 0, "{op}: no large case to drop");
    let kept = std::fs::read_to_string(out.join("op.toml")).expect("the op.toml");
    assert!(kept.contains("[[cases]]"), "{op}: no case left");
    out
}

/// A copy of built-in operator `op` in `dir` whose op.toml keeps its head
/// and takes `cases` (TOML `[[cases]]` tables) instead of its own cases.
pub fn with_cases(op: &str, dir: &Path, cases: &str) -> PathBuf {
    copy_dir(&ops_dir().join(op), dir);
    replace_cases(dir, cases);
    dir.to_path_buf()
}

/// The op.toml of [`small_add_custom`]. Two small cases keep every evaluation quick: 16000 and 6006 bytes, so
/// MIN_CORE_BYTES (1024) caps the cores at 16 and 6, below MAX_CORE_NUM.
pub const SMALL_ADD_CUSTOM_TOML: &str = r#"
[op]
name = "add_custom"
level = 1
op_type = "AddCustom"
description = "test copy of add_custom"

[[inputs]]
name = "x"
dtypes = ["float16", "float32", "int32"]

[[inputs]]
name = "y"
dtypes = ["float16", "float32", "int32"]
dtype = { same_as = "x" }

[[outputs]]
name = "z"
dtype = { same_as = "x" }

[golden]
builtin = "add_custom"

[[cases]]
name = "f32_4x1000"
shapes = [[4, 1000], [4, 1000]]
dtype = "float32"

[[cases]]
name = "f16_3x1001"
shapes = [[3, 1001], [3, 1001]]
dtype = "float16"
"#;

/// A small copy of ops/add_custom in `dst/add_custom`: its op_host and
/// op_kernel sources with `host` and `kernel` applied to add_custom.cpp
/// of each, and [`SMALL_ADD_CUSTOM_TOML`] as its op.toml.
pub fn small_add_custom(
    dst: &Path,
    host: &dyn Fn(&str) -> String,
    kernel: &dyn Fn(&str) -> String,
) -> PathBuf {
    let root = dst.join("add_custom");
    let src = ops_dir().join("add_custom");
    for sub in ["op_host", "op_kernel"] {
        std::fs::create_dir_all(root.join(sub)).expect("creating the copy");
        for e in std::fs::read_dir(src.join(sub)).expect("reading ops/add_custom") {
            let e = e.expect("reading ops/add_custom");
            std::fs::copy(e.path(), root.join(sub).join(e.file_name())).expect("copying");
        }
    }
    std::fs::write(root.join("op.toml"), SMALL_ADD_CUSTOM_TOML).expect("writing the op.toml");
    for (rel, edit) in [
        ("op_host/add_custom.cpp", host),
        ("op_kernel/add_custom.cpp", kernel),
    ] {
        let path = root.join(rel);
        let code = std::fs::read_to_string(&path).expect("reading a source");
        std::fs::write(&path, edit(&code)).expect("writing a source");
    }
    root
}

/// A binary to run, with the shared build cache
/// (`ASCENDOPT_CACHE_DIR`) unless the test sets another.
#[derive(Debug)]
pub struct Cmd {
    command: Command,
}

/// What a run of a [`Cmd`] gave.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The exit code (None: killed by a signal).
    pub code: Option<i32>,
    /// Standard output, as text.
    pub stdout: String,
    /// Standard error, as text.
    pub stderr: String,
}

impl Cmd {
    /// Runs `bin` (e.g. `env!("CARGO_BIN_EXE_ascendopt")`).
    pub fn new(bin: impl AsRef<OsStr>) -> Cmd {
        let mut command = Command::new(bin);
        command.env("ASCENDOPT_CACHE_DIR", build_cache_dir());
        Cmd { command }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Cmd {
        self.command.env(key, value);
        self
    }

    /// Runs in `dir`.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Cmd {
        self.command.current_dir(dir);
        self
    }

    /// Runs it to its end.
    pub fn run(mut self) -> Ran {
        let o = self
            .command
            .output()
            .unwrap_or_else(|e| panic!("running {:?}: {e}", self.command));
        Ran {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Ran {
    /// Standard output then standard error.
    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// Panics with both outputs unless the exit code is `code`.
    pub fn expect_code(&self, code: i32) -> &Ran {
        assert_eq!(
            self.code,
            Some(code),
            "exit code {:?}, expected {code}\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.stdout,
            self.stderr
        );
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_sum_the_products_of_the_shapes() {
        assert_eq!(case_elements("shapes = [[3, 1001], [3, 1001]]\n"), 6006);
        assert_eq!(
            case_elements("[[cases]]\nname = \"a\"\nshapes = [[8]]\n"),
            8
        );
        assert_eq!(case_elements("name = \"no shapes\"\n"), 0);
    }

    #[test]
    fn a_small_copy_drops_the_large_cases_and_keeps_the_rest() {
        let dir = tempdir();
        let op = small_copy("add_custom", dir.path(), 1 << 16);
        let text = std::fs::read_to_string(op.join("op.toml")).unwrap();
        let blocks: Vec<&str> = text.split("[[cases]]").skip(1).collect();
        assert!(!blocks.is_empty());
        assert!(blocks.iter().all(|b| case_elements(b) <= 1 << 16), "{text}");
        assert!(op.join("op_kernel").is_dir() && op.join("op_host").is_dir());
    }

    #[test]
    fn with_cases_replaces_every_case() {
        let dir = tempdir();
        let cases = "[[cases]]\nname = \"one\"\nshapes = [[2, 64], [2, 64]]\ndtype = \"float16\"\n";
        let op = with_cases("add_custom", &dir.path().join("a"), cases);
        let text = std::fs::read_to_string(op.join("op.toml")).unwrap();
        assert_eq!(text.matches("[[cases]]").count(), 1);
        assert!(text.ends_with(cases));
    }

    #[test]
    fn cases_are_mapped_in_place_and_the_head_is_kept() {
        let dir = tempdir();
        let op = with_cases("add_custom", &dir.path().join("a"), &binary_cases(8, 4096));
        assert_eq!(
            first_shape_elements("[[cases]]\nshapes = [[8, 4096], [8, 4096]]\n"),
            Some(32768)
        );
        let dropped = map_cases(&op, |b| {
            (first_shape_elements(b) < Some(10_000)).then(|| b.replace("f16_tail", "tail"))
        });
        assert_eq!(dropped, 1);
        let text = std::fs::read_to_string(op.join("op.toml")).unwrap();
        assert!(
            text.starts_with("[op]") || text.contains("\n[op]"),
            "{text}"
        );
        assert_eq!(text.matches("[[cases]]").count(), 1);
        assert!(text.contains("name = \"tail\"") && !text.contains("f16_bench"));
        replace_cases(&op, &binary_cases(2, 64));
        let text = std::fs::read_to_string(op.join("op.toml")).unwrap();
        assert!(text.ends_with(&binary_cases(2, 64)), "{text}");
        assert!(text.contains("[golden]"));
    }

    #[test]
    fn a_command_reports_its_code_and_output() {
        let ran = Cmd::new("sh")
            .args(["-c", "echo out; echo err >&2; exit 3"])
            .run();
        ran.expect_code(3);
        assert_eq!(
            (ran.stdout.as_str(), ran.stderr.as_str()),
            ("out\n", "err\n")
        );
        assert_eq!(ran.text(), "out\nerr\n");
    }
}
