//! Stage II's schedule on the simulator (a small copy of `muls`, noise-free
//! measurements): the one-knob round takes at most about half the
//! evaluations, improving moves are recombined, identical candidates are
//! never evaluated twice, nor candidates inside a box two equal
//! measurements showed flat, and the result is never slower than the input.

use crate::common;

use ascendopt_agent::attempts::Tried;
use ascendopt_agent::session::{Action, OpSession, Phase, RunContext, Trial};
use ascendopt_agent::tune::{tune, TuneConfig};
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_harness::store::Stage;
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use common::{small_copy, Rig};
use std::collections::{BTreeMap, BTreeSet};

struct NoEdits;

impl ascendopt_agent::proposer::Proposer for NoEdits {
    fn name(&self) -> &str {
        "none"
    }
    fn removals(
        &mut self,
        _req: &ascendopt_agent::proposer::RemovalRequest<'_>,
    ) -> Result<Vec<ascendopt_agent::proposer::Proposal>, ascendopt_agent::ProposeError> {
        Ok(Vec::new())
    }
    fn rewrites(
        &mut self,
        _req: &ascendopt_agent::proposer::RewriteRequest<'_>,
    ) -> Result<Vec<ascendopt_agent::proposer::Proposal>, ascendopt_agent::ProposeError> {
        Ok(Vec::new())
    }
}

/// A session with `budget` online evaluations plus one for the input, and
/// the input's evaluation.
fn open_with_baseline<'a>(
    ctx: &'a RunContext<'a>,
    pkg: &'a OpPackage,
    budget: u32,
) -> (OpSession<'a>, Trial) {
    let mut session = OpSession::open(
        ctx,
        pkg,
        BudgetConfig {
            rewind: 0,
            online: budget + 1,
        },
    )
    .unwrap();
    let input = Sources::load(&pkg.dir).unwrap();
    let action = Action {
        proposer: "input".into(),
        summary: "input".into(),
        ..Action::default()
    };
    let base = session.evaluate(Phase::Baseline, &input, action).unwrap();
    (session, base)
}

#[test]
fn stage2_caps_the_one_knob_round_and_never_evaluates_a_known_candidate() {
    let pkg = OpPackage::load(
        &small_copy("muls", "tune-schedule", 70_000, None),
        &ascendopt_golden::BUILTINS,
    )
    .unwrap();
    let rig = Rig::new("tune-schedule");
    let run = rig
        .store
        .create_run(&serde_json::json!({"test": "tune-schedule"}))
        .unwrap();
    let ctx = rig.ctx(run, 1);
    let budget = 8;
    let (mut session, base) = open_with_baseline(&ctx, &pkg, budget);
    let base_us = base.latency_us().unwrap();
    let mut tried = Tried::new();
    let out = tune(
        &mut session,
        &mut NoEdits,
        base,
        &TuneConfig::new(budget, 1),
        &mut tried,
        &mut |_| {},
    )
    .unwrap();
    // Every attempt is in the log, charged or answered by the run store
    // (marking the found knobs launches what the input launches: the
    // store answers it, and it still counts).
    let attempts: Vec<_> = session
        .log()
        .iter()
        .filter(|e| e.phase == Phase::Tune)
        .collect();
    for e in &attempts {
        eprintln!(
            "{} {:?} {} {:?}",
            e.action.summary, e.latency_us, e.verdict, e.budget_index
        );
    }
    assert!(session.spent(Stage::Online) <= budget + 1);
    assert_eq!(attempts.len() as u32, out.attempts);
    // muls's annotation covers every role (cores, tile sizes, buffers):
    // no knob is added to it, so the space searched is the annotated one.
    assert!(
        attempts
            .iter()
            .all(|e| !e.action.summary.starts_with("mark the found")),
        "{:?}",
        out.found
    );
    // The search's candidates: charged evaluations of knob assignments.
    let evaluated: Vec<_> = attempts
        .iter()
        .copied()
        .filter(|e| e.budget_index.is_some())
        .collect();
    assert!(!evaluated.is_empty());
    // Never the same candidate twice (nor the input again).
    let hashes: BTreeSet<&str> = evaluated.iter().map(|e| e.source_hash.as_str()).collect();
    assert_eq!(hashes.len(), evaluated.len());
    let input_hash = &session.log()[0].source_hash;
    assert!(!hashes.contains(input_hash.as_str()));
    // The knob values of an evaluated candidate, from its summary.
    let knobs = |summary: &str| -> BTreeMap<String, i64> {
        let text = summary
            .trim_start_matches("one knob:")
            .trim_start_matches("recombined:");
        text.split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.parse::<i64>().unwrap()))
            .collect()
    };
    // The one-knob round: at most half of the evaluations.
    let one_knob: Vec<_> = evaluated
        .iter()
        .filter(|e| e.action.summary.starts_with("one knob:"))
        .collect();
    assert!(!one_knob.is_empty());
    assert!(
        one_knob.len() as u32 <= budget.div_ceil(2),
        "{}",
        one_knob.len()
    );
    let input_knobs: BTreeMap<String, i64> = pkg.tiling.current().into_iter().collect();
    let moved = |summary: &str| -> Vec<String> {
        knobs(summary)
            .into_iter()
            .filter(|(k, v)| input_knobs[k] != *v)
            .map(|(k, _)| k)
            .collect()
    };
    // The most improving knob is bisected before the next knob moves:
    // when the first move helped and the second (same knob) helped less,
    // the third is on that knob again, between the two.
    if one_knob.len() >= 3 {
        let m: Vec<Vec<String>> = one_knob.iter().map(|e| moved(&e.action.summary)).collect();
        let l: Vec<f64> = one_knob
            .iter()
            .map(|e| e.latency_us.unwrap_or(f64::INFINITY))
            .collect();
        if m[0] == m[1] && l[0] < base_us && l[1] < base_us && l[0] < l[1] {
            assert_eq!(m[2], m[0], "{m:?}");
            let k = &m[0][0];
            let v = |i: usize| knobs(&one_knob[i].action.summary)[k];
            assert!(
                (v(0).min(v(1)) < v(2)) && (v(2) < v(0).max(v(1))),
                "{} {} {}",
                v(0),
                v(1),
                v(2)
            );
        }
    }
    // Two knobs with improving one-knob moves are followed by their
    // recombination.
    let improving: BTreeSet<String> = one_knob
        .iter()
        .filter(|e| e.latency_us.is_some_and(|l| l < base_us))
        .flat_map(|e| moved(&e.action.summary))
        .collect();
    if improving.len() >= 2 {
        assert!(evaluated
            .iter()
            .any(|e| e.action.summary.starts_with("recombined:")));
    }
    // Noise-free, the same latency means the same plan: two measured
    // candidates of one latency span a flat box (the knobs they differ in
    // were overridden or ignored), and no candidate inside a box known at
    // the time is evaluated.
    let mut measured: Vec<(BTreeMap<String, i64>, f64)> = vec![(input_knobs.clone(), base_us)];
    for e in &evaluated {
        let c = knobs(&e.action.summary);
        assert_eq!(c.len(), measured[0].0.len(), "{}", e.action.summary);
        for (i, (a, la)) in measured.iter().enumerate() {
            for (b, lb) in &measured[i + 1..] {
                if (la - lb).abs() > 1e-6 * la.max(*lb) {
                    continue;
                }
                let inside = c.iter().all(|(k, v)| {
                    let (x, y) = (a[k], b[k]);
                    x.min(y) <= *v && *v <= x.max(y)
                });
                let other = measured.iter().any(|(m, lm)| {
                    (lm - la).abs() > 1e-6 * la.max(*lm)
                        && m.iter().all(|(k, v)| {
                            let (x, y) = (a[k], b[k]);
                            x.min(y) <= *v && *v <= x.max(y)
                        })
                });
                assert!(
                    !inside || other,
                    "{} evaluated inside the flat box of {a:?} and {b:?}",
                    e.action.summary
                );
            }
        }
        if let Some(l) = e.latency_us {
            measured.push((c, l));
        }
    }
    // Never slower than the input; noise-free, so the best found is what
    // is declared (when it beats the input beyond the minimal effect).
    let declared = out.incumbent.latency_us().unwrap();
    assert!(declared <= base_us);
    let best = out.best_found_us.unwrap();
    assert!(best <= declared);
    if best < base_us * 0.99 {
        assert_eq!(declared, best);
        assert_eq!(out.steps.len(), 1);
    }
}

#[test]
fn with_noisy_measurements_the_best_is_re_measured_with_the_last_evaluation() {
    let pkg = OpPackage::load(
        &small_copy("muls", "tune-noisy", 70_000, None),
        &ascendopt_golden::BUILTINS,
    )
    .unwrap();
    let rig = Rig::new("tune-noisy");
    let run = rig
        .store
        .create_run(&serde_json::json!({"test": "tune-noisy"}))
        .unwrap();
    let mut ctx = rig.ctx(run, 2);
    ctx.pipeline.deterministic = false;
    let budget = 6;
    let (mut session, base) = open_with_baseline(&ctx, &pkg, budget);
    let base_us = base.latency_us().unwrap();
    let out = tune(
        &mut session,
        &mut NoEdits,
        base,
        &TuneConfig::new(budget, 1),
        &mut Tried::new(),
        &mut |_| {},
    )
    .unwrap();
    let log = common::tune_log(&session);
    assert!(out.attempts <= budget);
    // The small copy's best tiling is much faster than the input's (fewer
    // cores for a small shape), far beyond the noise.
    assert!(out.best_found_us.unwrap() < base_us * 0.9, "{out:?}");
    // The last evaluation re-measures the best, and only that decides.
    let last = log.last().unwrap();
    assert!(last.action.summary.starts_with("re-measure"), "{last:?}");
    assert_eq!(
        log.iter()
            .filter(|e| e.action.summary.starts_with("re-measure"))
            .count(),
        1
    );
    if last.accepted {
        assert_eq!(out.steps.len(), 1);
        assert!(out.incumbent.latency_us().unwrap() < base_us);
    } else {
        assert!(out.steps.is_empty());
    }
}

/// The Matmul tiling's knobs (a small copy of `matmul_api_constant`, whose
/// host sets the base block, the iterate order, the L1 space and the
/// cores): a candidate whose base block does not fit L0A or L0B fails
/// GetTiling, and Stage II refuses it by running the host tiling alone,
/// without spending an evaluation.
#[test]
fn stage2_refuses_matmul_tilings_that_do_not_fit_without_an_evaluation() {
    let dir = small_copy("matmul_api_constant", "tune-matmul", 20_000, None);
    // The package's kernel fixes its base block at compile time (its
    // MatmulConfig), so its host offers no base-block knobs; this copy
    // leaves the block to the runtime tiling and makes it three knobs.
    let kernel = dir.join("op_kernel/matmul_api_constant.cpp");
    let ktext = std::fs::read_to_string(&kernel).unwrap();
    let shape = "MatmulShapeParams SHAPE = {0, 0, 0, 128, 128, 64};";
    assert!(
        ktext.contains(shape),
        "the package's kernel changed: update this test"
    );
    std::fs::write(
        &kernel,
        ktext.replace(shape, "MatmulShapeParams SHAPE = {0, 0, 0, 0, 0, 0};"),
    )
    .unwrap();
    // The cores and the L1 steps fixed (one choice each), so that the
    // widest knob left, BASE_K, moves first.
    let host = dir.join("op_host/matmul_api_constant.cpp");
    let text = std::fs::read_to_string(&host)
        .unwrap()
        .replace(
            "constexpr int32_t BASE_M = 128;\n",
            "constexpr int32_t BASE_M = 128;  // ascendopt:knob choices=64,128,256\n",
        )
        .replace(
            "constexpr int32_t BASE_N = 128;\n",
            "constexpr int32_t BASE_N = 128;  // ascendopt:knob choices=64,128,256\n",
        )
        .replace(
            "constexpr int32_t BASE_K = 64;\n",
            "constexpr int32_t BASE_K = -1;  // ascendopt:knob choices=-1,32,64,128,256\n",
        )
        .replace(
            "MAX_VEC_CORES = 48;  // ascendopt:knob min=2 max=48 step=2",
            "MAX_VEC_CORES = 48;  // ascendopt:knob choices=48",
        )
        .replace(
            "STEP_K = 0;          // ascendopt:knob choices=0,1,2,4,8,16,32",
            "STEP_K = 0;          // ascendopt:knob choices=0",
        )
        .replace(
            "L1_DB = 2;           // ascendopt:knob choices=1,2",
            "L1_DB = 2;           // ascendopt:knob choices=2",
        );
    std::fs::write(&host, text).unwrap();
    let pkg = OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap();
    let names: Vec<&str> = pkg.tiling.knobs().map(|k| k.name.as_str()).collect();
    for k in [
        "BASE_M",
        "BASE_N",
        "BASE_K",
        "TRAVERSE",
        "L1_BYTES",
        "MAX_VEC_CORES",
        "STEP_K",
        "L1_DB",
    ] {
        assert!(names.contains(&k), "{names:?}");
    }
    let rig = Rig::new("tune-matmul");
    let run = rig
        .store
        .create_run(&serde_json::json!({"test": "tune-matmul"}))
        .unwrap();
    let ctx = rig.ctx(run, 1);
    let budget = 8;
    let (mut session, base) = open_with_baseline(&ctx, &pkg, budget);
    let out = tune(
        &mut session,
        &mut NoEdits,
        base,
        &TuneConfig::new(budget, 1),
        &mut Tried::new(),
        &mut |_| {},
    )
    .unwrap();
    let log = common::tune_log(&session);
    // BASE_K's first move goes to the far end of its range (256): with
    // the 128-row base block that is 128 KB of A in L0A double-buffered,
    // more than its 64 KB, so GetTiling fails and the candidate is refused
    // before an evaluation.
    assert!(out.skipped_tiling >= 1, "{}: {:?}", out.stopped, out.tried);
    assert!(out.stopped.contains("host tiling fails"), "{}", out.stopped);
    // No evaluated candidate failed: the screen caught every tiling that
    // does not fit.
    for e in log.iter().filter(|e| e.budget_index.is_some()) {
        assert!(e.latency_us.is_some(), "{} {}", e.action.summary, e.verdict);
    }
}
