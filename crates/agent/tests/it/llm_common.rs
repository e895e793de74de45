//! Shared rig of the LLM tests (llm_e2e, llm_baselines, llm_dense,
//! llm_bench): the repository root, a simulator device with the test build
//! cache, and copies of ops/add_custom with the test's own small cases.
#![allow(dead_code)]

use ascendopt_op::package::OpPackage;
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The simulator with the build cache shared by the test run.
pub fn device() -> SimDevice {
    let mut cfg = SimDeviceConfig::standard().unwrap();
    cfg.cache = ascendopt_sim::build::BuildCache::at(repo().join("target/ascendopt-test-cache"));
    cfg.limits.wall_ms = 120_000;
    SimDevice::new(cfg)
}

/// A copy of ops/add_custom in `dir` whose op.toml keeps its head and
/// takes `cases` (TOML `[[cases]]` tables) instead of the built-in cases.
pub fn add_custom_with_cases(dir: &Path, cases: &str) -> OpPackage {
    ascendopt_testkit::with_cases("add_custom", dir, cases);
    OpPackage::load(dir, &ascendopt_golden::BUILTINS).unwrap()
}
