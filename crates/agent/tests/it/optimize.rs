//! `optimize_operator` end to end on the simulator: a deliberately
//! weakened kernel (single buffer, few cores, small tiles, unfused vector
//! ops) is optimised with a bank Rewind learnt on *other* operators, and
//! must get back to at least 90 % of the strong kernel's speed within 60
//! evaluations; the written output must pass correctness on fresh inputs
//! and on a shape it was never tuned on, and never be slower than the input.

use crate::common;

use ascendopt_agent::builtin::BuiltinProposer;
use ascendopt_agent::diagnose::RuleDiagnoser;
use ascendopt_agent::optimize::{optimize_operator, write_output, Method, OptimizeConfig};
use ascendopt_agent::session::{Action, OpSession, Phase};
use ascendopt_bank::store::Bank;
use ascendopt_harness::eval::{check_op, CheckConfig};
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use common::*;

const WEAKENED: [&str; 4] = ["double_buffer", "multi_core", "tile_size", "fused_vec_ops"];

#[test]
fn a_weakened_kernel_recovers_90_percent_of_the_strong_speed_within_60_evaluations() {
    let strong_dir = small_copy("muls", "strong", 70_000, Some(BENCH_SHAPE));
    let weak_dir = weakened(&strong_dir, &WEAKENED, "weak");
    let bank = Bank::open(rewind_bank()).unwrap();
    assert!(bank.len().unwrap() >= 2, "Rewind learnt too little");

    let rig = Rig::new("recovery");
    // The strong kernel's speed, in its own run.
    let run = rig
        .store
        .create_run(&serde_json::json!({"strong": 1}))
        .unwrap();
    let ctx = rig.ctx(run, 11);
    let strong_pkg = OpPackage::load(&strong_dir, &ascendopt_golden::BUILTINS).unwrap();
    let mut s = OpSession::open(
        &ctx,
        &strong_pkg,
        BudgetConfig {
            rewind: 0,
            online: 1,
        },
    )
    .unwrap();
    let strong = s
        .evaluate(
            Phase::Baseline,
            &Sources::load(&strong_dir).unwrap(),
            Action::default(),
        )
        .unwrap();
    let strong_us = strong.latency_us().expect("the strong kernel is correct");

    let run = rig
        .store
        .create_run(&serde_json::json!({"optimize": 1}))
        .unwrap();
    let ctx = rig.ctx(run, 12);
    let weak_pkg = OpPackage::load(&weak_dir, &ascendopt_golden::BUILTINS).unwrap();
    let mut session = OpSession::open(
        &ctx,
        &weak_pkg,
        BudgetConfig {
            rewind: 0,
            online: 60,
        },
    )
    .unwrap();
    let cfg = OptimizeConfig {
        method: Method::Full,
        budget: 60,
        stage1_budget: None,
        k: 3,
        stagnation: 12,
        seed: 5,
        patience: Some(8),
        retrieval: std::sync::Arc::new(ascendopt_bank::retrieval::Lexical),
    };
    let outcome = optimize_operator(
        &mut session,
        Some(&bank),
        &mut BuiltinProposer::new(5),
        &mut RuleDiagnoser::new(),
        &cfg,
    )
    .unwrap();
    let weak_us = outcome.baseline_us.expect("the weak kernel is correct");
    let got_us = outcome.final_us.unwrap();
    eprintln!(
        "strong {strong_us:.3} us, weak {weak_us:.3} us, optimised {got_us:.3} us after {} evaluations; steps:",
        outcome.spent
    );
    let count = |p: Phase| outcome.log.iter().filter(|e| e.phase == p).count();
    eprintln!(
        "attempts: stage1 {}, stage2 {}",
        count(Phase::Refine),
        count(Phase::Tune)
    );
    for st in &outcome.steps {
        eprintln!(
            "  {:?} {} {:.3} -> {:.3}",
            st.phase, st.action.summary, st.before_us, st.after_us
        );
    }
    assert!(weak_us > strong_us * 1.5, "the weakening should cost speed");
    assert!(outcome.spent <= 60);
    assert!(
        strong_us / got_us >= 0.9,
        "recovered only {:.2} of the strong speed",
        strong_us / got_us
    );
    // Stage I used the bank: accepted rewrites name the entries that guided them.
    assert!(outcome
        .steps
        .iter()
        .any(|s| s.phase == Phase::Refine && !s.action.entries.is_empty()));
    // The curve never goes up and ends at the final latency.
    assert!(outcome.curve.windows(2).all(|w| w[1].1 <= w[0].1));
    assert_eq!(outcome.curve.last().map(|c| c.1), Some(got_us));

    // The written output: fresh inputs, a new shape, never slower.
    let out = scratch().join("recovery-out");
    let report = write_output(&rig.device, &outcome, &weak_pkg, &out, 4242).unwrap();
    assert!(report.output_passed, "{:?}", report.failures);
    assert!(report.after_us.unwrap() <= report.before_us.unwrap());
    for f in [
        "changes.diff",
        "steps.json",
        "log.json",
        "before/profile.json",
        "after/profile.json",
        "before/trace.json",
        "after/trace.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let diff = std::fs::read_to_string(out.join("changes.diff")).unwrap();
    assert!(diff.contains("+++"), "{diff}");
    let steps: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("steps.json")).unwrap()).unwrap();
    assert_eq!(
        steps["steps"].as_array().unwrap().len(),
        outcome.steps.len()
    );
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("after/trace.json")).unwrap())
            .unwrap();
    assert!(trace.is_object() || trace.is_array());

    let pkg_dir = out.join("muls");
    let mut toml = std::fs::read_to_string(pkg_dir.join("op.toml")).unwrap();
    toml.push_str(
        "\n[[cases]]\nname = \"new_shape\"\nshapes = [[37, 777]]\ndtype = \"float16\"\nattrs = { value = 0.7 }\n",
    );
    std::fs::write(pkg_dir.join("op.toml"), toml).unwrap();
    let check = check_op(
        &rig.device,
        &OpPackage::load(&pkg_dir, &ascendopt_golden::BUILTINS).unwrap(),
        &CheckConfig {
            case: None,
            seed: 987_654,
            profile: false,
            deterministic: true,
            timeline: false,
        },
    )
    .unwrap();
    assert!(
        check.passed(),
        "{:?}",
        check
            .cases
            .iter()
            .map(|c| (&c.name, c.verdict.label()))
            .collect::<Vec<_>>()
    );
}
