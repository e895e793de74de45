//! `compat` and `import` on operator folders written elsewhere: clean-room
//! fixture projects in the msopgen layout (crates/harness/tests/fixtures/).

use crate::common;

use ascendopt_sim::build::{BuildCache, Toolchain};
use ascendopt_sim::worker::WorkerLimits;
use ascendopt_simtools::compat::{self, CompatConfig, RunState, UnitState};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    common::repo().join("crates/harness/tests/fixtures")
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

fn have_numpy() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn import_cfg() -> ascendopt_simtools::import::ImportConfig {
    let c = compat_cfg();
    ascendopt_simtools::import::ImportConfig {
        toolchain: c.toolchain,
        cache: c.cache,
        limits: c.limits,
        soc: c.soc,
        python: "python3".into(),
        force: false,
    }
}

/// Imports `dir`, checks the op.toml loads, then runs every case.
fn import_and_run(dir: &Path) -> (ascendopt_simtools::import::ImportReport, compat::CompatRow) {
    let reports = ascendopt_simtools::import::import_dir(&import_cfg(), dir);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = reports.into_iter().next().unwrap();
    assert!(report.ok(), "{report:?}");
    let op_dir = report.dir.clone();
    ascendopt_op::OpPackage::load(&op_dir, &ascendopt_golden::BUILTINS)
        .expect("the imported op.toml loads");
    let device = common::device(60_000);
    let row = compat::check_dir(&device, &compat_cfg(), &op_dir);
    (report, row)
}

#[test]
fn import_takes_the_msopst_cases_and_their_expected_output_function() {
    let (_tmp, dir) = copy_fixture("msopgen_vec_add");
    let (report, row) = import_and_run(&dir);
    let toml = std::fs::read_to_string(dir.join("op.toml")).unwrap();
    assert!(
        toml.contains("op_type = \"VecAdd\"") && toml.contains("kernel = \"vec_add\""),
        "{toml}"
    );
    // Two msopst cases, the first with two type columns; no tail case
    // added (Test_VecAdd_002, 3 x 77 float, is one).
    for name in ["Test_VecAdd_001_0", "Test_VecAdd_001_1", "Test_VecAdd_002"] {
        assert!(
            toml.contains(&format!("\nname = \"{name}\"")),
            "{name}\n{toml}"
        );
    }
    assert!(!toml.contains("_tail"), "{toml}");
    assert!(
        toml.contains("x = { kind = \"uniform\", low = -2.0, high = 2.0 }"),
        "{toml}"
    );
    assert!(
        report.notes.iter().any(|n| n.contains("calc_expect_func")),
        "{:?}",
        report.notes
    );
    if !have_numpy() {
        eprintln!("python3 with numpy not available: the cases were not run");
        return;
    }
    assert_eq!(row.run, RunState::Passed { cases: 3 }, "{row:?}");
    // A second import does not overwrite.
    let again = ascendopt_simtools::import::import_dir(&import_cfg(), &dir);
    assert!(
        again[0].error.as_deref().unwrap_or("").contains("exists"),
        "{again:?}"
    );
}

#[test]
fn import_reruns_gen_data_with_the_case_inputs_and_reads_the_msopgen_json_beside() {
    let (_tmp, dir) = copy_fixture("msopgen_scale");
    if !have_numpy() {
        eprintln!("python3 with numpy not available");
        return;
    }
    // Given as a relative path, as a user types it (gen_data.py then runs
    // in a scratch folder and must still be found).
    let cwd = std::env::current_dir().unwrap();
    let up = "../".repeat(cwd.components().count() - 1);
    let relative = Path::new(&up).join(dir.strip_prefix("/").unwrap());
    let (report, row) = import_and_run(&relative);
    let toml = std::fs::read_to_string(dir.join("ScaleCustom/op.toml")).unwrap();
    assert!(
        toml.contains("name = \"gen_data\"") && toml.contains("shapes = [[16, 256]]"),
        "{toml}"
    );
    assert!(
        toml.contains("x = { kind = \"uniform\", low = -4.0, high = 4.0 }"),
        "{toml}"
    );
    assert!(
        toml.contains("name = \"factor\"") && toml.contains("default = 2.0"),
        "{toml}"
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("gen_data.py rerun by golden.py")),
        "{:?}",
        report.notes
    );
    assert!(toml.contains("\n# name = \"gen_data_tail\""), "{toml}");
    assert_eq!(row.run, RunState::Passed { cases: 1 }, "{row:?}");
}

#[test]
fn import_takes_an_input_the_kernel_writes_into_as_the_output_of_an_opdef_without_one() {
    let (_tmp, dir) = copy_fixture("msopgen_scale_inplace");
    let (report, row) = import_and_run(&dir);
    let toml = std::fs::read_to_string(dir.join("op.toml")).unwrap();
    assert!(
        toml.contains("name = \"x_out\"")
            && toml.contains("inplace = \"x\"")
            && toml.contains("argument = false"),
        "{toml}"
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("declares no Output") && n.contains("msopst cases name it")),
        "{:?}",
        report.notes
    );
    assert_eq!(row.host, UnitState::Compiles, "{row:?}");
    assert_eq!(row.kernel, UnitState::Compiles, "{row:?}");
    if !have_numpy() {
        eprintln!("python3 with numpy not available: the case was not run");
        return;
    }
    // x scaled by 0.5 where it lies, compared after the launch.
    assert_eq!(row.run, RunState::Passed { cases: 1 }, "{row:?}");
}

#[test]
fn an_operator_written_for_the_310b_is_imported_for_it_and_judged_on_it() {
    let (_tmp, dir) = copy_fixture("msopgen_one_core");
    let (report, row) = import_and_run(&dir);
    let toml = std::fs::read_to_string(dir.join("op.toml")).unwrap();
    assert!(toml.contains("\nchip = \"ascend310b\"\n"), "{toml}");
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("registers ascend310b") && n.contains("chip = \"ascend310b\"")),
        "{:?}",
        report.notes
    );
    // Built for the 310B (its tiling refuses other SoCs, its kernel adds
    // the core count under the 310B's architecture macros).
    assert_eq!(row.chip.as_deref(), Some("ascend310b"), "{row:?}");
    assert!(
        row.notes
            .iter()
            .any(|n| n.contains("judged on the simulated ascend310b")),
        "{:?}",
        row.notes
    );
    assert!(
        compat::render_table(std::slice::from_ref(&row)).contains("[judged on ascend310b]"),
        "{}",
        compat::render_table(std::slice::from_ref(&row))
    );
    if !have_numpy() {
        eprintln!("python3 with numpy not available: the cases were not run");
        return;
    }
    assert_eq!(row.run, RunState::Passed { cases: 1 }, "{row:?}");
    // The same operator judged on the 910B2 (--chip): its tiling refuses
    // the SoC, as it would on that chip.
    let mut cfg = ascendopt_sim::SimDeviceConfig::standard().unwrap();
    cfg.cache = BuildCache::at(ascendopt_testkit::build_cache_dir());
    cfg.chip_override = Some("ascend910b2".into());
    let on_910b2 = ascendopt_sim::SimDevice::new(cfg);
    let row = compat::check_dir(&on_910b2, &compat_cfg(), &dir);
    assert_eq!(row.chip.as_deref(), Some("ascend910b2"), "{row:?}");
    match &row.run {
        RunState::Failed { reason, .. } => assert!(reason.contains("tiling"), "{row:?}"),
        other => panic!("expected the tiling to refuse the 910B2: {other:?}"),
    }
}
