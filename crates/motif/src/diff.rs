//! Unified diffs (`diff -u` format, `a/` and `b/` prefixes like git) between
//! two versions of a package's sources, the code diff of a bank entry:
//! one file's diff is the bank's ([`ascendopt_bank::diff::unified`]), so
//! entries written by Rewind and diffs read back by the bank are made by
//! one implementation.

use super::Sources;

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
    ascendopt_bank::diff::unified(path, old, new)
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
