//! Unified diffs (`diff -u` format, `a/` and `b/` prefixes like git) between
//! two versions of a package's sources, the code diff of a bank entry.
//!
//! Line-based longest common subsequence after trimming the common prefix
//! and suffix, hunks with three lines of context. A changed middle too
//! large for the quadratic table becomes one replacement: still a correct
//! diff, only less minimal.

use super::Sources;

/// Context lines around each change.
const CONTEXT: usize = 3;
/// Largest LCS table (cells) computed exactly.
const MAX_CELLS: usize = 4_000_000;

/// The unified diff from `old` to `new` over every file that differs, in
/// path order; empty when they are equal.
pub fn diff(old: &Sources, new: &Sources) -> String {
    let mut out = String::new();
    for path in old.changed_files(new) {
        out.push_str(&file_diff(
            &path,
            old.get(&path).unwrap_or(""),
            new.get(&path).unwrap_or(""),
        ));
    }
    out
}

/// The unified diff of one file (`--- a/path`, `+++ b/path`, hunks).
pub fn file_diff(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = script(&a, &b);
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    // Positions of every op in a and b.
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
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Keep).collect();
    let mut k = 0;
    while k < changed.len() {
        // Group changes closer than 2 * CONTEXT keeps into one hunk.
        let first = changed[k];
        let mut last = first;
        while k + 1 < changed.len() && changed[k + 1] - last <= 2 * CONTEXT {
            k += 1;
            last = changed[k];
        }
        k += 1;
        let start = first.saturating_sub(CONTEXT);
        let end = (last + CONTEXT + 1).min(ops.len());
        let (a0, b0) = pos[start];
        let a_len = ops[start..end].iter().filter(|o| **o != Op::Insert).count();
        let b_len = ops[start..end].iter().filter(|o| **o != Op::Delete).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range_text(a0, a_len),
            range_text(b0, b_len)
        ));
        for (op, (ai, bi)) in ops[start..end].iter().zip(&pos[start..end]) {
            match op {
                Op::Keep => out.push_str(&format!(" {}\n", a[*ai])),
                Op::Delete => out.push_str(&format!("-{}\n", a[*ai])),
                Op::Insert => out.push_str(&format!("+{}\n", b[*bi])),
            }
        }
    }
    out
}

fn range_text(start: usize, len: usize) -> String {
    if len == 0 {
        format!("{start},0")
    } else if len == 1 {
        format!("{}", start + 1)
    } else {
        format!("{},{len}", start + 1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Delete,
    Insert,
}

fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let am = &a[prefix..a.len() - suffix];
    let bm = &b[prefix..b.len() - suffix];
    let mut ops = vec![Op::Keep; prefix];
    if (am.len() + 1).saturating_mul(bm.len() + 1) > MAX_CELLS {
        ops.extend(std::iter::repeat_n(Op::Delete, am.len()));
        ops.extend(std::iter::repeat_n(Op::Insert, bm.len()));
    } else {
        let width = bm.len() + 1;
        let mut lcs = vec![0u32; (am.len() + 1) * width];
        for i in (0..am.len()).rev() {
            for j in (0..bm.len()).rev() {
                lcs[i * width + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < am.len() && j < bm.len() {
            if am[i] == bm[j] {
                ops.push(Op::Keep);
                i += 1;
                j += 1;
            } else if lcs[(i + 1) * width + j] >= lcs[i * width + j + 1] {
                ops.push(Op::Delete);
                i += 1;
            } else {
                ops.push(Op::Insert);
                j += 1;
            }
        }
        ops.extend(std::iter::repeat_n(Op::Delete, am.len() - i));
        ops.extend(std::iter::repeat_n(Op::Insert, bm.len() - j));
    }
    ops.extend(std::iter::repeat_n(Op::Keep, suffix));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_gives_one_hunk_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            file_diff("k.cpp", old, new),
            "--- a/k.cpp\n+++ b/k.cpp\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
    }

    #[test]
    fn distant_changes_give_two_hunks_and_insertions_count_right() {
        let old: String = (0..20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l1\n", "l1\nnew\n").replace("l18\n", "");
        let d = file_diff("f", &old, &new);
        assert_eq!(d.matches("@@ ").count(), 2, "{d}");
        assert!(d.contains("@@ -1,5 +1,6 @@\n l0\n l1\n+new\n l2\n"), "{d}");
        assert!(
            d.contains("@@ -16,5 +17,4 @@\n l15\n l16\n l17\n-l18\n l19\n"),
            "{d}"
        );
    }

    #[test]
    fn sources_diff_names_every_changed_file() {
        let a = Sources::from_files([("op_host/h.cpp", "x\n"), ("op_kernel/k.cpp", "y\n")]);
        let b = Sources::from_files([("op_host/h.cpp", "x\n"), ("op_kernel/k.cpp", "z\n")]);
        assert_eq!(
            diff(&a, &b),
            "--- a/op_kernel/k.cpp\n+++ b/op_kernel/k.cpp\n@@ -1 +1 @@\n-y\n+z\n"
        );
        assert_eq!(diff(&a, &a), "");
    }
}
