//! What the simtools integration tests share (as the harness's): a small
//! copy of ops/add_custom with edited sources, the simulator device on the
//! test build cache, and a noise-free pipeline.

#![allow(dead_code)]

use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_op::package::OpPackage;
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use std::path::{Path, PathBuf};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Two small cases keep every evaluation quick: 16000 and 6006 bytes, so
/// MIN_CORE_BYTES (1024) caps the cores at 16 and 6, below MAX_CORE_NUM.
pub const SMALL_TOML: &str = r#"
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

/// The sources unchanged.
pub fn same(code: &str) -> String {
    code.to_string()
}

/// A copy of add_custom with the two small cases and `host` and `kernel`
/// applied to its host and kernel sources.
pub fn variant(
    host: impl Fn(&str) -> String,
    kernel: impl Fn(&str) -> String,
) -> (tempfile::TempDir, OpPackage) {
    let dir = tempfile::Builder::new()
        .prefix("add_custom")
        .tempdir()
        .unwrap();
    let root = dir.path().join("add_custom");
    let src = repo().join("ops/add_custom");
    for sub in ["op_host", "op_kernel"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), root.join(sub).join(e.file_name())).unwrap();
        }
    }
    std::fs::write(root.join("op.toml"), SMALL_TOML).unwrap();
    for (rel, edit) in [
        ("op_host/add_custom.cpp", &host as &dyn Fn(&str) -> String),
        ("op_kernel/add_custom.cpp", &kernel),
    ] {
        let path = root.join(rel);
        let code = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, edit(&code)).unwrap();
    }
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
    cfg.cache = ascendopt_sim::build::BuildCache::at(repo().join("target/ascendopt-test-cache"));
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
