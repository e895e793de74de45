//! Shared rig of the LLM tests (llm_e2e, llm_baselines, llm_dense,
//! llm_bench): the repository root, a simulator device with the test build
//! cache, and copies of ops/add_custom with the test's own small cases.
#![allow(dead_code)]

use ascendopt_motif::Sources;
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

/// Two small float16 cases of add_custom: a tail shape and a benchmark
/// shape of 32 K elements.
pub const TWO_SMALL_CASES: &str = r#"
[[cases]]
name = "f16_tail"
shapes = [[3, 1001], [3, 1001]]
dtype = "float16"

[[cases]]
name = "f16_bench"
shapes = [[8, 4096], [8, 4096]]
dtype = "float16"
"#;

/// A copy of ops/add_custom in `dir` whose op.toml keeps its head and
/// takes `cases` (TOML `[[cases]]` tables) instead of the built-in cases.
pub fn add_custom_with_cases(dir: &Path, cases: &str) -> OpPackage {
    let src = repo().join("ops/add_custom");
    Sources::load(&src).unwrap().write_to(dir).unwrap();
    let spec = std::fs::read_to_string(src.join("op.toml")).unwrap();
    let head = &spec[..spec.find("\n[[cases]]").unwrap() + 1];
    std::fs::write(dir.join("op.toml"), format!("{head}{cases}")).unwrap();
    OpPackage::load(dir, &ascendopt_golden::BUILTINS).unwrap()
}
