//! Helpers shared by the CLI's end-to-end tests, over the workspace's test
//! kit (`ascendopt_testkit`): the repository, small operators, and running
//! the binary with the shared build cache.

pub use ascendopt_testkit::{repo, small_copy};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `ascendopt` with `args` and the shared build cache.
pub fn ascendopt(args: &[&str]) -> Output {
    ascendopt_cmd(args).output().expect("run ascendopt")
}

/// The `ascendopt` command with `args` and the shared build cache, for a
/// test that sets more (environment, folder) before running it.
pub fn ascendopt_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ascendopt"));
    c.args(args)
        .env("ASCENDOPT_CACHE_DIR", ascendopt_testkit::build_cache_dir());
    c
}

/// Standard output then standard error, as text.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// ops/add_custom in `root/add_custom` with two cases only: a tail case
/// (3 x 1001) and a benchmark case of `bench_rows` x 16384 elements.
pub fn small_add(root: &Path, bench_rows: usize) -> PathBuf {
    ascendopt_testkit::with_cases(
        "add_custom",
        &root.join("add_custom"),
        &ascendopt_testkit::binary_cases(bench_rows, 16384),
    )
}
