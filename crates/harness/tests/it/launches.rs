//! Launch identity: a candidate whose host code differs from an evaluated
//! one's but whose launches do not (the same kernel library, the same
//! tiling on every case) is answered from the store without charge, and
//! only then. Real g++ builds of ops/add_custom variants, run in the
//! sandboxed worker.

use ascendopt_device::{Artifact, Device, RunRequest};
use ascendopt_harness::ledger::{BudgetConfig, Ledger};
use ascendopt_harness::pipeline::{
    evaluate, evaluate_package, launch_key, tiling_request, PipelineError,
};
use ascendopt_harness::store::{RunStore, Stage};
use ascendopt_op::package::OpPackage;
use ascendopt_sim::SimDevice;
use std::path::PathBuf;

use crate::common;

use common::{cfg, same, variant};

const MAX_CORES: &str = "constexpr uint32_t MAX_CORE_NUM = 48;";

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
    common::device(20_000)
}

fn built(dev: &SimDevice, pkg: &OpPackage) -> Artifact {
    dev.build(pkg).expect("builds")
}

/// A request of `case` with shapes and no contents (the tiling's view).
fn shapes_only(pkg: &OpPackage, case: usize) -> RunRequest {
    tiling_request(pkg, &pkg.cases()[case]).expect("a builtin golden knows the output shapes")
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
        .unwrap_err()
        .to_string();
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
        full.profile().map(|p| p.task_duration_us),
        first.verdict.profile().map(|p| p.task_duration_us)
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
