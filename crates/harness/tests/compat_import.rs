//! `compat` and `import` on operator folders written elsewhere: clean-room
//! fixture projects in the msopgen layout (tests/fixtures/).

mod common;

use ascendopt_harness::compat::{self, CompatConfig, RunState, UnitState};
use ascendopt_sim::build::{BuildCache, Toolchain};
use ascendopt_sim::worker::WorkerLimits;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A copy of fixture `name` in a fresh folder (tests may write op.toml).
fn copy_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), &target).unwrap();
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    copy(&fixtures().join(name), &dir);
    (tmp, dir)
}

fn compat_cfg() -> CompatConfig {
    CompatConfig {
        toolchain: Toolchain::from_env(),
        cache: BuildCache::at(common::repo().join("target/ascendopt-test-cache")),
        seed: 3,
        limits: WorkerLimits::standard(),
        soc: "Ascend910B2".into(),
    }
}

#[test]
fn compat_compiles_a_folder_without_op_toml_once_per_dtype_combination_of_its_opdef() {
    let (_tmp, dir) = copy_fixture("msopgen_vec_add");
    let device = common::device(60_000);
    let row = compat::check_dir(&device, &compat_cfg(), &dir);
    assert_eq!(row.host, UnitState::Compiles, "{row:?}");
    assert_eq!(row.kernel, UnitState::Compiles, "{row:?}");
    assert!(matches!(row.run, RunState::NoSpec { .. }), "{row:?}");
    assert!(
        row.notes
            .iter()
            .any(|n| n.contains("2 dtype combinations of OpDef VecAdd")),
        "{:?}",
        row.notes
    );
}
