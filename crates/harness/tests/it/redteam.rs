//! The red team: adversarial variants of ops/add_custom, each of which must
//! end as a failed evaluation with the right verdict while the harness goes
//! on. Every variant is a real g++ build run in the sandboxed worker.

use ascendopt_harness::ledger::{BudgetConfig, Ledger};
use ascendopt_harness::pipeline::{evaluate, evaluate_package};
use ascendopt_harness::store::{RunStore, Stage};
use ascendopt_harness::verdict::{CorrectnessCheck, RuntimeErrorKind, Verdict};

use crate::common;
mod bounds;
mod cheats;
mod hostile;

use common::{cfg, device, package};

fn verdict_of(edit: impl Fn(&str) -> String) -> Verdict {
    let (_d, pkg) = package(edit);
    evaluate_package(&device(20_000), &pkg, 5, &cfg())
        .unwrap()
        .0
}

const ADD: &str = "Add(zLocal, xLocal, yLocal, length);";

fn sub(from: &'static str, to: &'static str) -> impl Fn(&str) -> String {
    move |c: &str| {
        assert!(c.contains(from), "kernel no longer contains {from:?}");
        c.replacen(from, to, 1)
    }
}

/// `edit` of the kernel with `#include <header>` added at its top.
fn including(header: &'static str, edit: impl Fn(&str) -> String) -> impl Fn(&str) -> String {
    move |c: &str| format!("#include <{header}>\n{}", edit(c))
}

fn assert_incorrect(v: &Verdict, check: CorrectnessCheck) {
    match v {
        Verdict::Incorrect { details } => assert_eq!(details.check, check, "{v:?}"),
        other => panic!("expected incorrect ({check:?}), got {other:?}"),
    }
}

fn assert_static(v: &Verdict, needle: &str) {
    match v {
        Verdict::RejectedStatic { reason } => assert!(reason.contains(needle), "{reason}"),
        other => panic!("expected a static rejection mentioning {needle}, got {other:?}"),
    }
}

#[test]
fn the_real_kernel_is_correct() {
    let v = verdict_of(|c| c.to_string());
    assert!(matches!(v, Verdict::Correct { .. }), "{v:?}");
}

#[test]
fn copies_input_to_output() {
    assert_incorrect(
        &verdict_of(sub(ADD, "Adds(zLocal, xLocal, (T)0, length);")),
        CorrectnessCheck::Reference,
    );
}

#[test]
fn writes_zeros() {
    assert_incorrect(
        &verdict_of(sub(ADD, "Duplicate(zLocal, (T)0, length);")),
        CorrectnessCheck::Reference,
    );
}

#[test]
fn leaves_part_of_the_output_unwritten() {
    // Every tile writes only its first half back.
    let v = verdict_of(sub(
        "LocalTensor<T> zLocal = outQueueZ.DeQue<T>();",
        "LocalTensor<T> zLocal = outQueueZ.DeQue<T>(); length = length / 2;",
    ));
    match &v {
        Verdict::Incorrect { details } => assert!(details.mismatches > 0, "{v:?}"),
        other => panic!("expected incorrect, got {other:?}"),
    }
}

#[test]
fn only_some_cores_work() {
    let v = verdict_of(sub(
        "if (blockLength == 0) {",
        "if (blockLength == 0 || GetBlockIdx() % 2 == 1) {",
    ));
    assert!(matches!(v, Verdict::Incorrect { .. }), "{v:?}");
}

#[test]
fn reads_uninitialised_ub() {
    // z = x + (garbage * 0): the garbage differs between the two runs, and
    // NaN or inf garbage poisons the sum.
    let v = verdict_of(sub(ADD, "Muls(zLocal, zLocal, (T)0, length); Add(zLocal, xLocal, zLocal, length); Add(zLocal, zLocal, yLocal, length);"));
    match &v {
        Verdict::Incorrect { details } => assert!(
            matches!(
                details.check,
                CorrectnessCheck::Reference | CorrectnessCheck::Rerun
            ),
            "{v:?}"
        ),
        other => panic!("expected incorrect, got {other:?}"),
    }
}

#[test]
fn caches_results_in_a_static() {
    // Every launch runs in a fresh sealed process: a static cannot carry
    // anything from one launch to the next, so it is a note, not a
    // refusal, and the kernel is judged on what it computes.
    let v = verdict_of(sub(
        ADD,
        "static int calls = 0; calls++; Add(zLocal, xLocal, yLocal, length);",
    ));
    assert!(matches!(v, Verdict::Correct { .. }), "{v:?}");
}

#[test]
fn looks_at_the_environment() {
    // The worker's environment is the same fixed one for every launch.
    let v = verdict_of(including(
        "cstdlib",
        sub(
            ADD,
            "if (getenv(\"ASCENDOPT_CASE\")) return; Add(zLocal, xLocal, yLocal, length);",
        ),
    ));
    assert!(matches!(v, Verdict::Correct { .. }), "{v:?}");
}

#[test]
fn looks_for_harness_files() {
    assert_static(
        &verdict_of(sub(
            ADD,
            "if (fopen(\"/tmp/golden.bin\", \"r\")) return; Add(zLocal, xLocal, yLocal, length);",
        )),
        "fopen",
    );
}

#[test]
fn writes_a_file() {
    assert_static(
        &verdict_of(sub(
            ADD,
            "{ FILE* f = fopen(\"out\", \"w\"); (void)f; } Add(zLocal, xLocal, yLocal, length);",
        )),
        "fopen",
    );
}

#[test]
fn forks() {
    assert_static(
        &verdict_of(sub(ADD, "fork(); Add(zLocal, xLocal, yLocal, length);")),
        "fork",
    );
}

#[test]
fn execs() {
    assert_static(
        &verdict_of(sub(
            ADD,
            "execl(\"/bin/true\", \"true\", (char*)0); Add(zLocal, xLocal, yLocal, length);",
        )),
        "exec",
    );
}

#[test]
fn allocates_without_bound() {
    // Heap in kernel code is a note; the address-space limit stops the
    // allocations and the wall limit the loop.
    let (_d, pkg) = package(including(
        "cstdlib",
        sub(
            ADD,
            "for (;;) { (void)malloc(1 << 20); } Add(zLocal, xLocal, yLocal, length);",
        ),
    ));
    let v = evaluate_package(&device(3_000), &pkg, 5, &cfg()).unwrap().0;
    assert!(
        matches!(v, Verdict::Timeout { .. } | Verdict::RuntimeError { .. }),
        "{v:?}"
    );
}

#[test]
fn sleeps() {
    // Sleeping is allowed in the sandbox and only spends the kernel's own
    // time limit.
    let (_d, pkg) = package(including(
        "unistd.h",
        sub(
            ADD,
            "usleep(100000000); Add(zLocal, xLocal, yLocal, length);",
        ),
    ));
    let v = evaluate_package(&device(3_000), &pkg, 5, &cfg()).unwrap().0;
    assert!(matches!(v, Verdict::Timeout { .. }), "{v:?}");
}

#[test]
fn loops_forever() {
    // The loop calls into the runtime (so the compiler cannot drop it) but
    // records no instruction (so the instruction limit does not stop it).
    let (_d, pkg) = package(sub(
        "if (blockLength == 0) {",
        "while (GetBlockNum() > 0) {}\n        if (blockLength == 0) {",
    ));
    let v = evaluate_package(&device(3_000), &pkg, 5, &cfg()).unwrap().0;
    assert!(matches!(v, Verdict::Timeout { .. }), "{v:?}");
}

#[test]
fn segfaults() {
    let v = verdict_of(sub("if (blockLength == 0) {", "*reinterpret_cast<int*>(static_cast<uintptr_t>(GetBlockNum() * 8)) = 1;\n        if (blockLength == 0) {"));
    assert!(
        matches!(
            v,
            Verdict::RuntimeError {
                kind: RuntimeErrorKind::Crash,
                ..
            }
        ),
        "{v:?}"
    );
}

/// add_custom without its queue hand-over: MTE2 and V race on UB.
fn racing(c: &str) -> String {
    c.replacen("        inQueueX.EnQue(xLocal);\n        inQueueY.EnQue(yLocal);\n", "        xStash = xLocal;\n        yStash = yLocal;\n", 1)
        .replacen("        LocalTensor<T> xLocal = inQueueX.DeQue<T>();\n        LocalTensor<T> yLocal = inQueueY.DeQue<T>();\n", "        LocalTensor<T> xLocal = xStash;\n        LocalTensor<T> yLocal = yStash;\n", 1)
        .replacen("    GlobalTensor<T> xGm;\n", "    GlobalTensor<T> xGm;\n    LocalTensor<T> xStash;\n    LocalTensor<T> yStash;\n", 1)
}

#[test]
fn hazards_are_the_same_when_the_worker_checks_them() {
    use ascendopt_device::{Device, RunOutcome};
    let (_d, pkg) = package(racing);
    let device = device(20_000);
    let artifact = device.build(&pkg).unwrap();
    for case in pkg.cases() {
        let mut prepared = ascendopt_harness::eval::prepare_case(&pkg, case, 3).unwrap();
        let mut run = |keep_trace: bool| {
            prepared.request.keep_trace = keep_trace;
            match device.run(&artifact, &prepared.request) {
                RunOutcome::Finished(r) => r,
                other => panic!("{other:?}"),
            }
        };
        let (here, there) = (run(true), run(false));
        assert!(here.detail.is_some() && there.detail.is_none());
        assert!(!here.hazards.is_empty(), "{}: no race found", case.name);
        assert_eq!(here.hazards, there.hazards, "{}", case.name);
        assert_eq!(here.outputs, there.outputs, "{}", case.name);
    }
}

#[test]
fn races_between_pipes() {
    let v = verdict_of(racing);
    assert!(
        matches!(
            v,
            Verdict::RuntimeError {
                kind: RuntimeErrorKind::Race,
                ..
            }
        ),
        "{v:?}"
    );
}

#[test]
fn overflows_ub() {
    let v = verdict_of(sub(
        "pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));",
        "pipe->InitBuffer(inQueueX, tiling.bufferNum, 150000);",
    ));
    assert!(
        matches!(
            v,
            Verdict::RuntimeError {
                kind: RuntimeErrorKind::UbOverflow,
                ..
            }
        ),
        "{v:?}"
    );
}

#[test]
fn budget_is_charged_once_per_distinct_candidate() {
    let dev = device(20_000);
    let db = tempfile::tempdir().unwrap();
    let store = RunStore::open(&db.path().join("runs.sqlite")).unwrap();
    let run = store
        .create_run(&serde_json::json!({"test": "budget"}))
        .unwrap();
    let budgets = BudgetConfig {
        rewind: 2,
        online: 3,
    };
    let mut ledger = Ledger::open(&store, run, "add_custom", "1", budgets).unwrap();
    let (_a, good) = package(|c| c.to_string());
    let (_b, bad) = package(sub(ADD, "Duplicate(zLocal, (T)0, length);"));
    let first = evaluate(&dev, &store, &mut ledger, run, Stage::Online, &good, &cfg()).unwrap();
    assert_eq!(first.budget_index, Some(0));
    assert!(first.verdict.is_success());
    // The same sources again: answered from the store, nothing charged.
    let again = evaluate(&dev, &store, &mut ledger, run, Stage::Online, &good, &cfg()).unwrap();
    assert_eq!(again.budget_index, None);
    assert_eq!(again.verdict, first.verdict);
    let second = evaluate(&dev, &store, &mut ledger, run, Stage::Online, &bad, &cfg()).unwrap();
    assert_eq!(second.budget_index, Some(1));
    assert!(!second.verdict.is_success());
    assert_eq!(
        store
            .budget_spent(run, "add_custom", Stage::Online)
            .unwrap(),
        2
    );
}

#[test]
fn batch_results_do_not_depend_on_the_number_of_threads() {
    use ascendopt_harness::pipeline::evaluate_batch;
    let dev = device(20_000);
    let (_a, good) = package(|c| c.to_string());
    let (_b, zeros) = package(sub(ADD, "Duplicate(zLocal, (T)0, length);"));
    let (_c, copy) = package(sub(ADD, "Adds(zLocal, xLocal, (T)0, length);"));
    let batch = vec![good.clone(), zeros, good, copy];
    let mut outcomes = Vec::new();
    for threads in [1, 2] {
        let db = tempfile::tempdir().unwrap();
        let store = RunStore::open(&db.path().join("runs.sqlite")).unwrap();
        let run = store
            .create_run(&serde_json::json!({ "threads": threads }))
            .unwrap();
        let mut ledger = Ledger::open(
            &store,
            run,
            "add_custom",
            "1",
            BudgetConfig {
                rewind: 0,
                online: 10,
            },
        )
        .unwrap();
        let got = evaluate_batch(
            &dev,
            &store,
            &mut ledger,
            run,
            Stage::Online,
            &batch,
            &cfg(),
            threads,
        )
        .unwrap();
        assert_eq!(
            store
                .budget_spent(run, "add_custom", Stage::Online)
                .unwrap(),
            3,
            "duplicate charged"
        );
        let summary: Vec<(String, Option<u32>, u64)> = got
            .iter()
            .map(|e| {
                (
                    serde_json::to_string(&e.verdict).unwrap(),
                    e.budget_index,
                    e.seed,
                )
            })
            .collect();
        outcomes.push(summary);
    }
    assert_eq!(outcomes[0], outcomes[1]);
    assert_eq!(
        outcomes[0][2].1, None,
        "the repeated candidate is not charged"
    );
}

/// Where the expected value equals the poison, an element left unwritten
/// matches it: the run-twice check starts its second run from another
/// poison, so the element differs between the runs and is named.
#[test]
fn unwritten_elements_whose_expected_value_is_the_poison_are_caught() {
    let (dir, _) = package(sub(
        "LocalTensor<T> zLocal = outQueueZ.DeQue<T>();",
        "LocalTensor<T> zLocal = outQueueZ.DeQue<T>(); length = length / 2;",
    ));
    let root = dir.path().join("add_custom");
    // x + y = 0x5A5A5A5A everywhere: the integer poison's bytes.
    let cases = r#"
[[cases]]
name = "i32_poison_valued"
shapes = [[4, 1000], [4, 1000]]
dtype = "int32"
inputs = { x = { kind = "int", low = 1515870810, high = 1515870810 }, y = { kind = "int", low = 0, high = 0 } }

[[cases]]
name = "i32_bench"
shapes = [[8, 1000], [8, 1000]]
dtype = "int32"
"#;
    ascendopt_testkit::replace_cases(&root, cases);
    let pkg = ascendopt_op::package::OpPackage::load(&root, &ascendopt_golden::BUILTINS).unwrap();
    let v = evaluate_package(&device(20_000), &pkg, 5, &cfg())
        .unwrap()
        .0;
    match &v {
        Verdict::Incorrect { details } => {
            assert_eq!(details.check, CorrectnessCheck::Rerun, "{v:?}");
            assert_eq!(details.case, "i32_poison_valued");
            let bad = details.first_bad.as_ref().unwrap();
            assert!(bad.actual.contains("never written"), "{bad:?}");
        }
        other => panic!("expected incorrect, got {other:?}"),
    }
}
