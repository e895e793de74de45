//! What the simtools integration tests share (as the harness's): a small
//! copy of ops/add_custom with edited sources, the simulator device on the
//! test build cache, and a noise-free pipeline.

#![allow(dead_code)]

use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_op::package::OpPackage;
use ascendopt_sim::{SimDevice, SimDeviceConfig};

pub use ascendopt_testkit::repo;

/// The sources unchanged.
pub fn same(code: &str) -> String {
    code.to_string()
}

/// A copy of add_custom with the two small cases and `host` and `kernel`
/// applied to its host and kernel sources
/// ([`ascendopt_testkit::small_add_custom`]).
pub fn variant(
    host: impl Fn(&str) -> String,
    kernel: impl Fn(&str) -> String,
) -> (tempfile::TempDir, OpPackage) {
    let dir = tempfile::Builder::new()
        .prefix("add_custom")
        .tempdir()
        .unwrap();
    let root = ascendopt_testkit::small_add_custom(dir.path(), &host, &kernel);
    let pkg = OpPackage::load(&root, &ascendopt_golden::BUILTINS).unwrap();
    (dir, pkg)
}

/// A copy of add_custom with `edit` applied to its kernel.
pub fn package(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, OpPackage) {
    variant(same, edit)
}

/// The simulator on the test build cache, launches stopped after
/// `wall_ms`.
pub fn device(wall_ms: u64) -> SimDevice {
    let mut cfg = SimDeviceConfig::standard().unwrap();
    cfg.cache = ascendopt_sim::build::BuildCache::at(ascendopt_testkit::build_cache_dir());
    cfg.limits.wall_ms = wall_ms;
    SimDevice::new(cfg)
}

/// Noise-free, 3 samples.
pub fn cfg() -> PipelineConfig {
    PipelineConfig {
        repeats: 3,
        deterministic: true,
        seed: 11,
    }
}
