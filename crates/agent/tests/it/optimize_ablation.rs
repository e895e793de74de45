//! The ablation switches of the method's Table 3 change the evaluation log
//! as named, and Stage II learns infeasible knob regions instead of
//! re-trying them and never evaluates the same assignment twice.

use crate::common;

use ascendopt_agent::attempts::Tried;
use ascendopt_agent::builtin::BuiltinProposer;
use ascendopt_agent::diagnose::RuleDiagnoser;
use ascendopt_agent::features::lacking_phrase;
use ascendopt_agent::optimize::{optimize_operator, Method, OptimizeConfig};
use ascendopt_agent::session::{Action, OpSession, Phase};
use ascendopt_agent::tune::{tune, TuneConfig};
use ascendopt_bank::entry::{family_of, Applicability, Entry, Origin, Provenance, SourceOp};
use ascendopt_bank::store::Bank;
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_motif::{by_tag, diff, SiteState, Sources};
use ascendopt_op::package::OpPackage;
use common::*;
use std::collections::{BTreeMap, BTreeSet};

/// A hand-written bank (origin `manual`): one entry per motif, its text
/// from the motif's description and its diff from the motif engine's own
/// removal on `strong`.
fn manual_bank(strong: &Sources, motifs: &[&str]) -> Bank {
    let bank = Bank::open_in_memory().unwrap();
    for tag in motifs {
        let m = by_tag(tag).unwrap();
        let site = m
            .detect(strong)
            .into_iter()
            .find(|s| s.state == SiteState::Present)
            .unwrap();
        let weak = m.remove(strong, &site).unwrap();
        let info = m.describe();
        bank.insert(&Entry {
            title: info.title.into(),
            bottleneck: info.bottleneck.into(),
            applicability: Applicability {
                reuse_when: vec![format!("{} ({})", info.reuse_when, lacking_phrase(tag))],
                avoid_when: vec![info.avoid_when.into()],
            },
            expected_effect: info.expected_effect.into(),
            diff: diff(&weak, strong),
            motif: (*tag).into(),
            family: family_of(tag).unwrap_or("kernel").into(),
            source: SourceOp {
                op: "muls".into(),
                level: Some(1),
            },
            slow_us: None,
            fast_us: None,
            profile_moved: BTreeMap::new(),
            signature: None,
            keywords: info.keywords.iter().map(|k| k.to_string()).collect(),
            provenance: Provenance {
                created_ms: 0,
                origin: Origin::Manual,
                evidence: vec![],
            },
        })
        .unwrap();
    }
    bank
}

#[test]
fn each_ablation_switch_changes_the_evaluation_log_as_named() {
    let strong_dir = small_copy("muls", "abl-strong", 70_000, None);
    let weak_dir = weakened(
        &strong_dir,
        &["double_buffer", "multi_core", "tile_size"],
        "abl-weak",
    );
    let bank = manual_bank(
        &Sources::load(&strong_dir).unwrap(),
        &["double_buffer", "multi_core", "tile_size"],
    );
    let pkg = OpPackage::load(&weak_dir, &ascendopt_golden::BUILTINS).unwrap();
    let rig = Rig::new("ablation");
    let mut logs = BTreeMap::new();
    for method in Method::ALL {
        let run = rig
            .store
            .create_run(&serde_json::json!({"method": method.as_str()}))
            .unwrap();
        let ctx = rig.ctx(run, 21);
        let mut session = OpSession::open(
            &ctx,
            &pkg,
            BudgetConfig {
                rewind: 0,
                online: 8,
            },
        )
        .unwrap();
        let outcome = optimize_operator(
            &mut session,
            Some(&bank),
            &mut BuiltinProposer::new(1),
            &mut RuleDiagnoser::new(),
            &OptimizeConfig {
                method,
                budget: 8,
                stage1_budget: Some(4),
                seed: 1,
                ..OptimizeConfig::default()
            },
        )
        .unwrap();
        assert!(outcome.spent <= 8);
        assert_eq!(outcome.log[0].phase, Phase::Baseline);
        assert!(outcome.final_us.unwrap() <= outcome.baseline_us.unwrap());
        logs.insert(method.as_str(), outcome.log);
    }
    let phases =
        |m: &str| -> BTreeSet<&str> { logs[m][1..].iter().map(|e| e.phase.as_str()).collect() };
    let with_ids = |m: &str| {
        logs[m]
            .iter()
            .filter(|e| !e.action.entries.is_empty())
            .count()
    };
    // Stage II only: nothing but tiling attempts after the baseline.
    assert_eq!(phases("tiling"), BTreeSet::from(["stage2"]));
    // Stage I without experience: rewrites, none guided by an entry.
    assert_eq!(phases("stage1-noexp"), BTreeSet::from(["stage1"]));
    assert_eq!(with_ids("stage1-noexp"), 0);
    // Stage I with the bank: rewrites guided by entries, no tiling search.
    assert_eq!(phases("stage1"), BTreeSet::from(["stage1"]));
    assert!(with_ids("stage1") > 0);
    // Full: both stages, Stage I guided by entries.
    assert_eq!(phases("full"), BTreeSet::from(["stage1", "stage2"]));
    assert!(with_ids("full") > 0);
}

/// add_custom with the host's UB cap taken out: a large tile with several
/// buffers no longer fits in UB, which only the device finds out.
fn uncapped_add() -> std::path::PathBuf {
    let dir = small_copy("add_custom", "uncapped", 70_000, None);
    let host = dir.join("op_host/add_custom.cpp");
    let text = std::fs::read_to_string(&host).unwrap();
    let capped = "    uint64_t tileBytes = ubBytes / (QUEUE_NUM * BUFFER_NUM);\n    if (tileBytes > TILE_BYTES) {\n        tileBytes = TILE_BYTES;\n    }\n";
    assert!(text.contains(capped), "add_custom's host code changed");
    let text = text
        .replace(
            capped,
            "    (void)ubBytes;\n    uint64_t tileBytes = TILE_BYTES;\n",
        )
        .replace(
            "constexpr uint32_t TILE_BYTES = 32768; ",
            "constexpr uint32_t TILE_BYTES = 1024;  ",
        )
        .replace(
            "constexpr uint32_t MAX_CORE_NUM = 48; ",
            "constexpr uint32_t MAX_CORE_NUM = 1;  ",
        );
    std::fs::write(&host, text).unwrap();
    let pkg = OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap();
    let cur = pkg.tiling.current();
    // The smallest tile (its largest, double-buffered, does not fit in
    // UB), one core.
    assert_eq!(
        (cur["TILE_BYTES"], cur["BUFFER_NUM"], cur["MAX_CORE_NUM"]),
        (1024, 2, 1)
    );
    dir
}

#[test]
fn stage2_learns_infeasible_regions_and_never_repeats_a_candidate() {
    let dir = uncapped_add();
    let pkg = OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap();
    let rig = Rig::new("infeasible");
    let run = rig
        .store
        .create_run(&serde_json::json!({"tune": 1}))
        .unwrap();
    let ctx = rig.ctx(run, 31);
    let mut session = OpSession::open(
        &ctx,
        &pkg,
        BudgetConfig {
            rewind: 0,
            online: 21,
        },
    )
    .unwrap();
    let base = session
        .evaluate(
            Phase::Baseline,
            &Sources::load(&dir).unwrap(),
            Action::default(),
        )
        .unwrap();
    assert!(base.is_correct(), "{}", base.verdict().label());
    let out = tune(
        &mut session,
        &mut BuiltinProposer::new(2),
        base.clone(),
        &TuneConfig::new(20, 2),
        &mut Tried::new(),
        &mut |_| {},
    )
    .unwrap();
    let log = common::tune_log(&session);
    eprintln!(
        "regions {:?}, skipped {} infeasible",
        out.regions, out.skipped_infeasible
    );
    // Some assignments fail on the device (UB overflow) and teach regions.
    let failed: Vec<_> = log.iter().filter(|e| e.verdict != "correct").collect();
    assert!(!failed.is_empty(), "no infeasible candidate was met");
    assert!(failed.iter().any(|e| e.reason.contains("region learnt")));
    assert_eq!(out.regions.len(), failed.len());
    // Learnt regions keep candidates from being evaluated: after the
    // first overflow (a tile of 64 KiB, double-buffered), at most one
    // candidate with a tile that large is evaluated (the one probe of the
    // region's hypothesis "whatever the other knobs"), unless skipped.
    let tile = |summary: &str| -> Option<u64> {
        summary
            .split_whitespace()
            .find_map(|w| w.strip_prefix("TILE_BYTES="))
            .and_then(|v| v.parse().ok())
    };
    let first = log.iter().position(|e| e.verdict != "correct").unwrap();
    let too_big = tile(&log[first].action.summary).unwrap();
    let later = log[first + 1..]
        .iter()
        .filter(|e| tile(&e.action.summary).is_some_and(|t| t >= too_big))
        .count();
    assert!(later <= 1, "{later} candidates inside the learnt region");
    // No assignment (and no source) was evaluated twice, apart from the
    // final re-measurement of the best.
    let searched: Vec<_> = log
        .iter()
        .filter(|e| !e.action.summary.starts_with("re-measure"))
        .collect();
    let distinct: BTreeSet<_> = searched.iter().map(|e| e.action.summary.clone()).collect();
    assert_eq!(distinct.len(), searched.len());
    let hashes: BTreeSet<_> = searched.iter().map(|e| e.source_hash.clone()).collect();
    assert_eq!(hashes.len(), searched.len());
    // Every candidate was charged, or answered from the store as the same
    // launch as an earlier one (knob values the tiling clamps; the input
    // included): then with that one's verdict and latency.
    let charged: Vec<_> = session
        .log()
        .iter()
        .filter(|e| e.budget_index.is_some())
        .collect();
    for e in &searched {
        if e.budget_index.is_none() {
            assert!(
                charged.iter().any(|p| p.spent <= e.spent
                    && p.verdict == e.verdict
                    && p.latency_us == e.latency_us),
                "{} answered without an earlier evaluation like it",
                e.action.summary
            );
        }
    }
    assert!(searched.iter().any(|e| e.budget_index.is_some()));
    // With noisy measurements the best is re-measured before it is
    // declared; noise-free ones (this rig) would repeat themselves, so the
    // best is declared on its first measurement (tune_schedule.rs covers
    // the noisy case). The result is never slower than the input.
    if out.best_found_us < base.latency_us() {
        assert_eq!(
            log.iter()
                .any(|e| e.action.summary.starts_with("re-measure")),
            !ctx.pipeline.deterministic
        );
    }
    assert!(out.incumbent.latency_us().unwrap() <= base.latency_us().unwrap());
}
