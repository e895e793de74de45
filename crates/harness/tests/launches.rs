//! Launch identity: a candidate whose host code differs from an evaluated
//! one's but whose launches do not (the same kernel library, the same
//! tiling on every case) is answered from the store without charge, and
//! only then. Real g++ builds of ops/add_custom variants, run in the
//! sandboxed worker.

use ascendopt_device::{Artifact, Device, RunRequest, SimDevice, SimDeviceConfig};
use ascendopt_harness::eval::job_attrs;
use ascendopt_harness::ledger::{BudgetConfig, Ledger};
use ascendopt_harness::pipeline::{
    evaluate, evaluate_package, launch_key, PipelineConfig, PipelineError,
};
use ascendopt_harness::store::{RunStore, Stage};
use ascendopt_op::golden::output_shapes;
use ascendopt_op::package::OpPackage;
use ascendopt_op::Tensor;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Two small cases keep every evaluation quick: 16000 and 6006 bytes, so
/// MIN_CORE_BYTES (1024) caps the cores at 16 and 6, below MAX_CORE_NUM.
const SMALL_TOML: &str = r#"
[op]
name = "add_custom"
level = 1
op_type = "AddCustom"
description = "launch-identity copy of add_custom"

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

const MAX_CORES: &str = "constexpr uint32_t MAX_CORE_NUM = 48;";

/// A copy of add_custom with `host` and `kernel` applied to its host and
/// kernel sources.
fn variant(
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
        let edited = edit(&code);
        std::fs::write(&path, edited).unwrap();
    }
    let pkg = OpPackage::load(&root).unwrap();
    (dir, pkg)
}

fn same(code: &str) -> String {
    code.to_string()
}

fn max_cores(n: u32) -> impl Fn(&str) -> String {
    move |code: &str| {
        assert!(code.contains(MAX_CORES));
        code.replace(
            MAX_CORES,
            &format!("constexpr uint32_t MAX_CORE_NUM = {n};"),
        )
    }
}

fn device() -> SimDevice {
    let mut cfg = SimDeviceConfig::standard().unwrap();
    cfg.cache = ascendopt_sim::build::BuildCache::at(repo().join("target/ascendopt-test-cache"));
    cfg.limits.wall_ms = 20_000;
    SimDevice::new(cfg)
}

fn cfg() -> PipelineConfig {
    PipelineConfig {
        repeats: 3,
        deterministic: true,
        seed: 11,
    }
}

fn built(dev: &SimDevice, pkg: &OpPackage) -> Artifact {
    dev.build(pkg).expect("builds")
}

/// A request of `case` with shapes and no contents (the tiling's view).
fn shapes_only(pkg: &OpPackage, case: usize) -> RunRequest {
    let case = &pkg.cases()[case];
    let shapes = output_shapes(&pkg.spec, case).unwrap().unwrap();
    RunRequest {
        inputs: case
            .inputs
            .iter()
            .map(|i| Tensor {
                dtype: i.dtype,
                shape: i.shape.clone(),
                data: Vec::new(),
            })
            .collect(),
        outputs: case
            .outputs
            .iter()
            .zip(shapes)
            .map(|(o, shape)| Tensor {
                dtype: o.dtype,
                shape,
                data: Vec::new(),
            })
            .collect(),
        attrs: job_attrs(case),
        seed: 0,
        keep_trace: false,
    }
}

#[test]
fn the_tiling_alone_is_the_tiling_a_launch_runs_with() {
    let dev = device();
    let (_d, pkg) = variant(same, same);
    let artifact = built(&dev, &pkg);
    for (i, case) in pkg.cases().iter().enumerate() {
        let prepared = ascendopt_harness::eval::prepare_case(&pkg, case, 3).unwrap();
        let launched = match dev.run(&artifact, &prepared.request) {
            ascendopt_device::RunOutcome::Finished(r) => r.tiling,
            other => panic!("{}: {}", case.name, other.summary()),
        };
        let alone = dev
            .tiling(&artifact, &shapes_only(&pkg, i))
            .expect("the simulator runs a tiling alone")
            .unwrap();
        assert_eq!(alone, launched, "{}", case.name);
        assert!(alone.block_dim > 1 && !alone.data.is_empty());
    }
    // No kernel runs: a kernel library that does not exist is not loaded.
    let mut no_kernel = artifact.clone();
    no_kernel.kernel_lib = PathBuf::from("/nonexistent/kernel-none.so");
    let alone = dev.tiling(&no_kernel, &shapes_only(&pkg, 0)).unwrap();
    assert!(alone.is_ok(), "{alone:?}");
    // A tiling that fails says so.
    let (_f, failing) = variant(
        |c: &str| {
            c.replace(
                "constexpr uint32_t QUEUE_NUM = 3;",
                "constexpr uint32_t QUEUE_NUM = 1000000;",
            )
        },
        same,
    );
    let artifact = built(&dev, &failing);
    let err = dev
        .tiling(&artifact, &shapes_only(&failing, 0))
        .unwrap()
        .unwrap_err();
    assert!(err.contains("tiling"), "{err}");
    assert_eq!(launch_key(&dev, &artifact, &failing), None);
}

#[test]
fn a_candidate_that_launches_the_same_is_answered_without_charge() {
    let dev = device();
    let db = tempfile::tempdir().unwrap();
    let store = RunStore::open(&db.path().join("runs.sqlite")).unwrap();
    let run = store.create_run(&serde_json::json!({})).unwrap();
    let budgets = BudgetConfig {
        rewind: 0,
        online: 4,
    };
    let mut ledger = Ledger::open(&store, run, "add_custom", "1", budgets).unwrap();
    let mut eval =
        |pkg: &OpPackage| evaluate(&dev, &store, &mut ledger, run, Stage::Online, pkg, &cfg());
    let (_a, base) = variant(same, same);
    // 40 cores at most: MIN_CORE_BYTES caps both cases below that anyway.
    let (_b, clamped) = variant(max_cores(40), same);
    // 2 cores: a different split.
    let (_c, two_cores) = variant(max_cores(2), same);
    // The base's host code with another kernel library (a comment is
    // enough: the library is keyed by its sources).
    let (_d, other_kernel) = variant(same, |c: &str| format!("{c}\n// another kernel\n"));

    let first = eval(&base).unwrap();
    assert_eq!(first.budget_index, Some(0));
    assert!(first.verdict.is_success(), "{:?}", first.verdict);

    let answered = eval(&clamped).unwrap();
    assert_eq!(
        answered.budget_index, None,
        "the same launch is not charged"
    );
    assert_eq!(answered.verdict, first.verdict);
    assert_eq!(answered.seed, first.seed);
    assert_ne!(answered.source_hash, first.source_hash);
    assert_eq!(
        store
            .budget_spent(run, "add_custom", Stage::Online)
            .unwrap(),
        1
    );

    // What the answer stands for: evaluated in full with the first's
    // seed, the clamped candidate gives the very same verdict.
    // (The stored verdict went through JSON: its profile's ratios may
    // differ in the last bit, its latencies do not.)
    let (full, _) = evaluate_package(&dev, &clamped, first.seed, &cfg()).unwrap();
    assert_eq!(full.latency(), first.verdict.latency());
    assert_eq!(
        full.profile().map(|p| p["Task Duration(us)"].clone()),
        first
            .verdict
            .profile()
            .map(|p| p["Task Duration(us)"].clone())
    );

    let split = eval(&two_cores).unwrap();
    assert_eq!(split.budget_index, Some(1), "another tiling is evaluated");
    let other = eval(&other_kernel).unwrap();
    assert_eq!(other.budget_index, Some(2), "another kernel is evaluated");

    // The keys behind it, and where they are stored.
    let key = |pkg: &OpPackage| launch_key(&dev, &built(&dev, pkg), pkg).unwrap();
    assert_eq!(key(&base), key(&clamped));
    assert_ne!(key(&base), key(&two_cores));
    assert_ne!(key(&base), key(&other_kernel));
    let rows = store.evaluations(run, "add_custom").unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].launch.as_deref(), Some(key(&base).as_str()));
    assert_eq!(rows[1].launch.as_deref(), Some(key(&two_cores).as_str()));

    // With the budget spent, a new launch is refused, a known one is not.
    let (_e, one_core) = variant(max_cores(1), same);
    assert_eq!(eval(&one_core).unwrap().budget_index, Some(3));
    let (_f, three_cores) = variant(max_cores(3), same);
    assert!(matches!(eval(&three_cores), Err(PipelineError::Ledger(_))));
    let (_g, clamped_again) = variant(max_cores(47), same);
    assert_eq!(eval(&clamped_again).unwrap().verdict, first.verdict);
}
