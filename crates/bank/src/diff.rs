//! Unified diffs (the `diff -u` format) between two versions of a source
//! file, for the entries' slow → fast code diffs.
//!
//! Line-based longest common subsequence after trimming the common prefix
//! and suffix; hunks carry [`CONTEXT`] lines of context. When the changed
//! middle is too large for the quadratic table ([`MAX_CELLS`]) the whole
//! middle becomes one replacement: still a correct diff, only less
//! minimal.

/// Context lines around each change.
pub const CONTEXT: usize = 3;

/// Largest LCS table (lines × lines) computed exactly.
pub const MAX_CELLS: usize = 16_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Delete,
    Insert,
}

/// The edit script turning `old` into `new`.
fn script(old: &[&str], new: &[&str]) -> Vec<Op> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let a = &old[prefix..old.len() - suffix];
    let b = &new[prefix..new.len() - suffix];
    let mut ops = vec![Op::Keep; prefix];
    if (a.len() + 1).saturating_mul(b.len() + 1) > MAX_CELLS {
        ops.extend(std::iter::repeat_n(Op::Delete, a.len()));
        ops.extend(std::iter::repeat_n(Op::Insert, b.len()));
    } else {
        // lcs[i][j] = LCS length of a[i..] and b[j..].
        let width = b.len() + 1;
        let mut lcs = vec![0u32; (a.len() + 1) * width];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i * width + j] = if a[i] == b[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                ops.push(Op::Keep);
                i += 1;
                j += 1;
            } else if j < b.len()
                && (i == a.len() || lcs[i * width + j + 1] > lcs[(i + 1) * width + j])
            {
                ops.push(Op::Insert);
                j += 1;
            } else {
                ops.push(Op::Delete);
                i += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Keep, suffix));
    ops
}

fn range(start: usize, len: usize) -> String {
    // diff -u: an empty range names the line before it.
    let first = if len == 0 { start } else { start + 1 };
    if len == 1 {
        format!("{first}")
    } else {
        format!("{first},{len}")
    }
}

/// The unified diff of `old` → `new` for file `path` (headers
/// `--- a/<path>` and `+++ b/<path>`); empty when they are equal. A last
/// line without a newline is marked `\ No newline at end of file`.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = script(&old_lines, &new_lines);
    if ops.iter().all(|op| *op == Op::Keep) {
        return String::new();
    }
    // Position of each op in old and new.
    let mut pos = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0usize, 0usize);
    for op in &ops {
        pos.push((i, j));
        match op {
            Op::Keep => {
                i += 1;
                j += 1;
            }
            Op::Delete => i += 1,
            Op::Insert => j += 1,
        }
    }
    let changes: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Keep).collect();
    // Group changes whose gap of kept lines is at most 2 * CONTEXT.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for &k in &changes {
        match groups.last_mut() {
            Some((_, end)) if k - *end <= 2 * CONTEXT + 1 => *end = k,
            _ => groups.push((k, k)),
        }
    }
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    for (first, last) in groups {
        let start = first.saturating_sub(CONTEXT);
        let end = (last + CONTEXT + 1).min(ops.len());
        let (old_start, new_start) = pos[start];
        let old_len = ops[start..end].iter().filter(|o| **o != Op::Insert).count();
        let new_len = ops[start..end].iter().filter(|o| **o != Op::Delete).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(old_start, old_len),
            range(new_start, new_len)
        ));
        for k in start..end {
            let (oi, nj) = pos[k];
            let (mark, line) = match ops[k] {
                Op::Keep => (' ', old_lines[oi]),
                Op::Delete => ('-', old_lines[oi]),
                Op::Insert => ('+', new_lines[nj]),
            };
            out.push(mark);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// The lines a diff removes and adds (without their `-`/`+`), headers
/// excluded.
pub fn changed_lines(diff: &str) -> (Vec<&str>, Vec<&str>) {
    let mut removed = Vec::new();
    let mut added = Vec::new();
    for line in diff.lines() {
        if line.starts_with("--- ") || line.starts_with("+++ ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix('-') {
            removed.push(rest);
        } else if let Some(rest) = line.strip_prefix('+') {
            added.push(rest);
        }
    }
    (removed, added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            unified("k.cpp", old, new),
            "--- a/k.cpp\n+++ b/k.cpp\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
    }

    #[test]
    fn equal_inputs_give_an_empty_diff() {
        assert_eq!(unified("x", "a\nb\n", "a\nb\n"), "");
    }

    #[test]
    fn distant_changes_make_two_hunks_and_insertions_count_right() {
        let old: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l2\n", "l2\nnew\n").replace("l18\n", "");
        let d = unified("f", &old, &new);
        let hunks: Vec<&str> = d.lines().filter(|l| l.starts_with("@@")).collect();
        // Insertion after line 2: old 1..5 (5 lines), new 1..6. Deletion of
        // line 18: old 15..20 (6 lines), new 16..20 (5 lines).
        assert_eq!(hunks, ["@@ -1,5 +1,6 @@", "@@ -15,6 +16,5 @@"]);
        let (removed, added) = changed_lines(&d);
        assert_eq!(removed, ["l18"]);
        assert_eq!(added, ["new"]);
    }

    #[test]
    fn pure_insertion_into_empty_and_missing_newline() {
        assert_eq!(
            unified("f", "", "x\n"),
            "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n"
        );
        assert_eq!(
            unified("f", "a\n", "a\nb"),
            "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn replaces_a_block_between_kept_lines() {
        let old = "int x;\nfor (i) {\n  Copy(i);\n}\nreturn;\n";
        let new = "int x;\nCopyStrided();\nreturn;\n";
        assert_eq!(
            unified("k", old, new),
            "--- a/k\n+++ b/k\n@@ -1,5 +1,3 @@\n int x;\n-for (i) {\n-  Copy(i);\n-}\n+CopyStrided();\n return;\n"
        );
    }
}
