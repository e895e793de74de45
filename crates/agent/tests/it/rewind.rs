//! Rewind end to end on real built-in kernels: the motif engine proposes
//! removals, the real pipeline judges them (g++ build, hardened
//! correctness, simulated profile), entries land in a real SQLite bank.
//!
//! Operators run with small specs (their own op.toml with the cases
//! replaced by a tail case and one benchmark case), so an evaluation takes
//! a second or two; builds are shared through target/ascendopt-test-cache.

use ascendopt_agent::builtin::BuiltinProposer;
use ascendopt_agent::distill::BuiltinDistiller;
use ascendopt_agent::features::code_features;
use ascendopt_agent::proposer::{Proposal, Proposer, RemovalRequest, RewriteRequest};
use ascendopt_agent::rewind::{
    evidence, rewind_operator, verify_entry, RewindConfig, RewindOutcome,
};
use ascendopt_agent::session::NoCandidate;
use ascendopt_agent::session::{Action, RunContext};
use ascendopt_agent::ProposeError;
use ascendopt_bank::retrieve::{AvoidPolicy, Query, DEFAULT_K};
use ascendopt_bank::signature::ProfileSignature;
use ascendopt_bank::store::{Bank, EntryFilter};
use ascendopt_device::{
    Artifact, Device, DeviceError, ProfileRequest, RunOutcome, RunRequest, RunResult,
};
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::pipeline::{evaluate_package, PipelineConfig};
use ascendopt_harness::store::RunStore;
use ascendopt_harness::verdict::Verdict;
use ascendopt_motif::{by_tag, SiteState, Sources};
use ascendopt_op::package::OpPackage;
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex, OnceLock};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn device() -> &'static SimDevice {
    static DEVICE: OnceLock<SimDevice> = OnceLock::new();
    DEVICE.get_or_init(|| {
        let mut cfg = SimDeviceConfig::standard().unwrap();
        cfg.cache =
            ascendopt_sim::build::BuildCache::at(repo().join("target/ascendopt-test-cache"));
        cfg.limits.wall_ms = 120_000;
        SimDevice::new(cfg)
    })
}

/// fp16 streaming cases of a binary op: a tail and 48 cores x 2 tiles.
static BINARY_CASES: LazyLock<String> =
    LazyLock::new(|| ascendopt_testkit::binary_cases(48, 32768));

/// Smaller: 48 cores x 1 tile (quick; motif effects are smaller).
static SMALL_BINARY_CASES: LazyLock<String> =
    LazyLock::new(|| ascendopt_testkit::binary_cases(48, 16384));

/// fast_gelu_grad: dy and x in, vector-heavy in fp16.
const FAST_GELU_GRAD_CASES: &str = r#"
[[cases]]
name = "f16_tail"
shapes = [[3, 1001], [3, 1001]]
dtype = "float16"
inputs = { x = { kind = "normal", mean = 0.0, scale = 3.0 } }

[[cases]]
name = "f16_bench"
shapes = [[48, 32768], [48, 32768]]
dtype = "float16"
inputs = { x = { kind = "normal", mean = 0.0, scale = 3.0 } }
"#;

/// A copy of built-in `op` under `root` with its cases replaced by
/// `cases`; `edit` may change the sources first.
fn small_package(
    root: &Path,
    op: &str,
    cases: &str,
    edit: impl Fn(Sources) -> Sources,
) -> OpPackage {
    let sources = edit(Sources::load(&repo().join("ops").join(op)).unwrap());
    let dir = root.join(op);
    sources.write_to(&dir).unwrap();
    ascendopt_testkit::replace_cases(&dir, &format!("\n{cases}"));
    OpPackage::load(&dir, &ascendopt_golden::BUILTINS).unwrap()
}

/// A run context over a fresh run in `store`.
fn context<'a>(
    store: &'a RunStore,
    workdir: PathBuf,
    deterministic: bool,
    seed: u64,
) -> RunContext<'a> {
    let run = store
        .create_run(&serde_json::json!({"test": "rewind"}))
        .unwrap();
    let compare = CompareConfig::RECOMMENDED;
    RunContext {
        device: device(),
        store,
        run,
        pipeline: PipelineConfig {
            repeats: compare.repeats,
            deterministic,
            seed,
        },
        compare,
        workdir,
    }
}

/// One Rewind over a set of small operators into a fresh bank.
struct Rewound {
    dir: tempfile::TempDir,
    bank: Bank,
    outcomes: Vec<RewindOutcome>,
    packages: Vec<OpPackage>,
}

/// Rewinds `(operator, cases, budget)` in order into one fresh bank.
fn rewind(ops: &[(&str, &str, u32)], deterministic: bool, seed: u64) -> Rewound {
    let dir = tempfile::Builder::new().prefix("rewind").tempdir().unwrap();
    let packages: Vec<OpPackage> = ops
        .iter()
        .map(|(op, cases, _)| small_package(&dir.path().join("ops"), op, cases, |s| s))
        .collect();
    let store = RunStore::open(&dir.path().join("runs.sqlite")).unwrap();
    let bank = Bank::open(&dir.path().join("bank.sqlite")).unwrap();
    let ctx = context(&store, dir.path().join("work"), deterministic, seed);
    let mut proposer = BuiltinProposer::new(seed);
    let mut distiller = BuiltinDistiller::new();
    let outcomes = packages
        .iter()
        .zip(ops)
        .map(|(pkg, (_, _, budget))| {
            let cfg = RewindConfig {
                budget: *budget,
                seed,
                created_ms: Some(0),
                ..RewindConfig::default()
            };
            rewind_operator(&ctx, pkg, &mut proposer, &mut distiller, &bank, &cfg).unwrap()
        })
        .collect();
    drop(ctx);
    drop(store);
    Rewound {
        dir,
        bank,
        outcomes,
        packages,
    }
}

/// The shared Rewind: fast_gelu_grad and a smaller add_custom with small
/// budgets, deterministic profile (the noise is not the point here).
fn shared() -> &'static Mutex<Rewound> {
    static SHARED: OnceLock<Mutex<Rewound>> = OnceLock::new();
    SHARED.get_or_init(|| {
        let t = std::time::Instant::now();
        let r = rewind(
            &[
                ("fast_gelu_grad", FAST_GELU_GRAD_CASES, 6),
                ("add_custom", SMALL_BINARY_CASES.as_str(), 5),
            ],
            true,
            11,
        );
        eprintln!("shared rewind took {:.1} s", t.elapsed().as_secs_f64());
        Mutex::new(r)
    })
}

fn print_outcomes(outcomes: &[RewindOutcome]) {
    for o in outcomes {
        eprintln!("{}: spent {}/{}, stop: {}", o.op, o.spent, o.budget, o.stop);
        for l in &o.log {
            eprintln!(
                "   {:>2} {:<14} {:>10} {} {} :: {}",
                l.spent,
                l.verdict,
                l.latency_us.map(|v| format!("{v:.3}")).unwrap_or_default(),
                if l.accepted { "KEPT" } else { "    " },
                l.action.summary,
                l.reason
            );
        }
    }
}

/// Checks every entry of a Rewind: a Rewind entry with a diff, slower
/// before the edit, and its slowdown reproduced from the run store on
/// fresh seeds. Returns the distinct motifs.
fn check_entries(r: &Rewound, deterministic: bool, seed: u64) -> BTreeSet<String> {
    print_outcomes(&r.outcomes);
    let entries = r.bank.list(&EntryFilter::all()).unwrap();
    let motifs: BTreeSet<String> = entries.iter().map(|s| s.entry.motif.clone()).collect();
    eprintln!("{} entries, motifs {motifs:?}", entries.len());
    // Every kept removal is an entry; the log marks exactly those (and
    // the strong kernel) accepted.
    let kept: usize = r.outcomes.iter().map(|o| o.kept.len()).sum();
    assert_eq!(kept, entries.len());
    for o in &r.outcomes {
        assert!(o.spent <= o.budget);
        assert_eq!(
            o.log.iter().filter(|l| l.accepted).count(),
            o.kept.len() + 1
        );
        assert!(o.log[0].accepted, "the strong kernel starts the chain");
        assert!(o.kept.iter().all(|k| k.slowdown() > 1.0));
    }
    let store = RunStore::open(&r.dir.path().join("runs.sqlite")).unwrap();
    let ctx = context(&store, r.dir.path().join("work"), deterministic, seed);
    for stored in &entries {
        let e = &stored.entry;
        assert!(e.speedup().unwrap() > 1.0, "{}: {:?}", e.motif, e.speedup());
        assert!(e.diff.starts_with("--- a/op_"), "{}", e.diff);
        assert!(e.signature.is_some());
        assert!(!e.profile_moved.is_empty(), "{}", e.motif);
        let op = evidence(e, "op").unwrap();
        let pkg = r.packages.iter().find(|p| p.name() == op).unwrap();
        let v = verify_entry(&ctx, pkg, e).unwrap();
        eprintln!("verify {} {} {}: {:?}", stored.id, e.motif, op, v);
        assert!(v.reproduced, "{} {}: {v:?}", e.motif, op);
        assert_ne!(v.seeds.0.to_string(), evidence(e, "slow_seed").unwrap());
        if deterministic {
            // No noise: the same latencies again, on other inputs.
            assert_eq!(v.slow_us, e.slow_us);
            assert_eq!(v.fast_us, e.fast_us);
            assert!(evidence(e, "confirm").unwrap().starts_with("skipped"));
        } else {
            // Confirmed on re-measurements before it was stored.
            assert!(evidence(e, "confirm_decision").unwrap().contains("> tau"));
        }
    }
    motifs
}

#[test]
fn rewind_keeps_verified_removals_of_several_motifs() {
    let shared = shared().lock().unwrap();
    let motifs = check_entries(&shared, true, 11);
    assert!(motifs.len() >= 5, "only {motifs:?}");
    assert!(motifs.contains("double_buffer"), "{motifs:?}");
}

/// Eight motifs from two operators on small copies, noise off: 20
/// evaluations each, every entry verified. About 40 evaluations plus two
/// per entry: only with `ASCENDOPT_SLOW_TESTS=1` (13 entries over 8
/// motifs, all reproduced, in 173 s on the shared 2-core machine). The
/// issue's check proper (full built-in cases, noise on, confirmation)
/// runs through the binary: `default_rewind_covers_eight_motifs_with_noise`
/// in `crates/cli/tests/rewind_cli.rs`.
#[test]
fn rewind_over_two_operators_covers_eight_motifs() {
    if std::env::var_os("ASCENDOPT_SLOW_TESTS").is_none() {
        return;
    }
    let r = rewind(
        &[
            ("add_custom", BINARY_CASES.as_str(), 20),
            ("fast_gelu_grad", FAST_GELU_GRAD_CASES, 20),
        ],
        true,
        11,
    );
    let motifs = check_entries(&r, true, 11);
    assert!(motifs.len() >= 8, "only {motifs:?}");
}

#[test]
fn a_known_missing_motif_is_retrieved_in_the_top_3() {
    let shared = shared().lock().unwrap();
    // add_custom with BUFFER_NUM 1: single-buffered, otherwise balanced.
    let dir = tempfile::tempdir().unwrap();
    let single = small_package(dir.path(), "add_custom", BINARY_CASES.as_str(), |s| {
        let motif = by_tag("double_buffer").unwrap();
        let site = motif
            .detect(&s)
            .into_iter()
            .find(|site| site.state == SiteState::Present)
            .unwrap();
        motif.remove(&s, &site).unwrap()
    });
    let sources = Sources::load(&single.dir).unwrap();
    assert!(sources
        .files()
        .any(|(_, text)| text.contains("BUFFER_NUM = 1")));
    let cfg = PipelineConfig {
        repeats: 1,
        deterministic: true,
        seed: 5,
    };
    let (verdict, _) = evaluate_package(device(), &single, 5, &cfg).unwrap();
    let Verdict::Correct { profile, .. } = &verdict else {
        panic!("{verdict:?}")
    };
    let features = code_features(&sources);
    assert!(
        features.iter().any(|f| f == "single-buffer"),
        "{features:?}"
    );
    let query = Query {
        text: "copies into UB are not overlapped with vector compute".into(),
        signature: Some(ProfileSignature::from_profile(profile).unwrap()),
        code_features: features,
        only_motifs: vec![],
        exclude_motifs: vec![],
        avoid: AvoidPolicy::Drop,
    };
    // Top 3 of more than 3 entries, several from the same operator.
    assert!(shared.bank.len().unwrap() > DEFAULT_K + 2);
    let hits = shared.bank.search(&query, DEFAULT_K).unwrap();
    let ranked: Vec<(&str, f64)> = hits
        .iter()
        .map(|h| (h.entry.entry.motif.as_str(), h.score))
        .collect();
    eprintln!("{}", ascendopt_bank::commands::render_hits(&hits));
    assert!(
        ranked.iter().any(|(m, _)| *m == "double_buffer"),
        "{ranked:?}"
    );
}

/// Proposes fixed candidates once, then nothing.
struct Scripted {
    proposals: Vec<Proposal>,
}

impl Proposer for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn removals(&mut self, _req: &RemovalRequest<'_>) -> Result<Vec<Proposal>, ProposeError> {
        Ok(std::mem::take(&mut self.proposals))
    }
    fn rewrites(&mut self, _req: &RewriteRequest<'_>) -> Result<Vec<Proposal>, ProposeError> {
        Ok(Vec::new())
    }
}

fn edited(sources: &Sources, edit: impl Fn(&str) -> String) -> Sources {
    let mut out = sources.clone();
    for (path, text) in sources.kernel_files() {
        out.set(path, edit(text)).unwrap();
    }
    out
}

fn action(motif: &str, summary: &str) -> Action {
    Action {
        proposer: "scripted".into(),
        motif: Some(motif.into()),
        summary: summary.into(),
        entries: vec![],
    }
}

#[test]
fn broken_and_within_noise_removals_are_never_stored_but_charged() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = small_package(
        &dir.path().join("ops"),
        "add_custom",
        SMALL_BINARY_CASES.as_str(),
        |s| s,
    );
    let strong = Sources::load(&pkg.dir).unwrap();
    let kernel = strong.kernel_files().next().unwrap().1.to_string();
    assert!(
        kernel.contains("Add(zLocal"),
        "the edit below needs this call"
    );
    let mut proposer = Scripted {
        proposals: vec![
            // Wrong results: subtraction instead of addition.
            Proposal {
                action: action("count_mode", "Sub instead of Add"),
                candidate: Ok(edited(&strong, |t| t.replace("Add(zLocal", "Sub(zLocal"))),
            },
            // Does not compile.
            Proposal {
                action: action("tail_fold", "syntax error"),
                candidate: Ok(edited(&strong, |t| format!("{t}\nthis is not C++;\n"))),
            },
            // No effect at all: a comment (the latency differs by noise only).
            Proposal {
                action: action("barrier_elim", "a comment"),
                candidate: Ok(edited(&strong, |t| format!("// harmless comment\n{t}"))),
            },
            // No candidate could be made.
            Proposal {
                action: action("double_buffer", "no edit"),
                candidate: Err(NoCandidate::no_edit("the response had no edit block")),
            },
        ],
    };
    let store = RunStore::open(&dir.path().join("runs.sqlite")).unwrap();
    let bank = Bank::open(&dir.path().join("bank.sqlite")).unwrap();
    // Measurement noise on: "within noise" is the point here.
    let ctx = context(&store, dir.path().join("work"), false, 3);
    let cfg = RewindConfig {
        budget: 10,
        ..RewindConfig::default()
    };
    let mut distiller = BuiltinDistiller::new();
    let outcome = rewind_operator(&ctx, &pkg, &mut proposer, &mut distiller, &bank, &cfg).unwrap();
    print_outcomes(std::slice::from_ref(&outcome));
    assert!(outcome.kept.is_empty());
    assert_eq!(bank.len().unwrap(), 0, "nothing may be stored");
    // Every attempt charged: the strong kernel and four proposals.
    assert_eq!(outcome.spent, 5);
    let verdicts: Vec<&str> = outcome.log.iter().map(|l| l.verdict.as_str()).collect();
    assert_eq!(
        verdicts,
        [
            "correct",
            "incorrect",
            "compile_error",
            "correct",
            "no_edit"
        ]
    );
    assert!(outcome.log.iter().skip(1).all(|l| !l.accepted));
    assert!(outcome.log[1]
        .reason
        .contains("must keep the kernel correct"));
    assert!(
        outcome.log[3].reason.starts_with("not slower beyond noise"),
        "{}",
        outcome.log[3].reason
    );
    assert!(outcome.log.iter().skip(1).all(|l| l.budget_index.is_some()));
    assert_eq!(
        outcome.stop,
        "no proposed removal slowed the kernel beyond noise"
    );
}

#[test]
fn same_seeds_give_the_same_bank() {
    // Measurement noise on, so that the seeds matter.
    // Budget for removals and their confirmations (re-measurements), on
    // the larger benchmark case (at 48 x 16384 the 0.5 us noise floor
    // is 2 % of the latency and few removals pass twice).
    let ops = [("add_custom", BINARY_CASES.as_str(), 8)];
    let a = rewind(&ops, false, 21);
    let b = rewind(&ops, false, 21);
    print_outcomes(&a.outcomes);
    assert!(!a.bank.is_empty().unwrap());
    assert_eq!(
        a.bank.content_digest().unwrap(),
        b.bank.content_digest().unwrap()
    );
    let export = |bank: &Bank| {
        let mut out = Vec::new();
        bank.export_jsonl(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    // Entries differ only in their evidence paths (other temp folders).
    let strip = |text: String| -> String {
        text.lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["provenance"]["evidence"] = serde_json::Value::Null;
                v.to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(export(&a.bank)), strip(export(&b.bank)));
    // Another seed gives other measurements.
    let c = rewind(&[("add_custom", BINARY_CASES.as_str(), 1)], false, 22);
    let first = |r: &Rewound| r.outcomes[0].strong_us;
    assert_ne!(first(&a), first(&c));
}

/// The real simulator, except that one profiling (the `disturbed`-th call
/// of `latency_samples`, 1-based) reads `factor` times slower: a transient
/// disturbance of the device (another job sharing it) during one
/// measurement, injected at the [`Device`] seam. Builds, runs, traces and
/// every other measurement are the simulator's own.
struct Disturbed {
    inner: &'static SimDevice,
    calls: AtomicU32,
    disturbed: u32,
    factor: f64,
}

impl Device for Disturbed {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn platform(&self) -> &ascendopt_device::Platform {
        self.inner.platform()
    }
    fn build(&self, package: &OpPackage) -> Result<Artifact, DeviceError> {
        self.inner.build(package)
    }
    fn run(&self, artifact: &Artifact, request: &RunRequest) -> RunOutcome {
        self.inner.run(artifact, request)
    }
    fn profile(
        &self,
        result: &RunResult,
        request: &ProfileRequest,
    ) -> Result<ascendopt_device::Profile, ascendopt_device::QueryError> {
        self.inner.profile(result, request)
    }
    fn latency_samples(
        &self,
        result: &RunResult,
        clean: &ascendopt_device::Profile,
        seeds: &[u64],
    ) -> Result<Vec<f64>, ascendopt_device::QueryError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let samples = self.inner.latency_samples(result, clean, seeds)?;
        Ok(if call == self.disturbed {
            samples.iter().map(|s| s * self.factor).collect()
        } else {
            samples
        })
    }
    fn unmeasured_output_writes(&self, result: &RunResult, request: &RunRequest) -> Option<String> {
        self.inner.unmeasured_output_writes(result, request)
    }
    fn timeline_json(
        &self,
        result: &RunResult,
    ) -> Option<Result<String, ascendopt_device::QueryError>> {
        self.inner.timeline_json(result)
    }
}

/// The strong kernel with one motif's first present site removed.
fn without(strong: &Sources, tag: &str) -> Sources {
    let motif = by_tag(tag).unwrap();
    let site = motif
        .detect(strong)
        .into_iter()
        .find(|s| s.state == SiteState::Present)
        .unwrap();
    motif.remove(strong, &site).unwrap()
}

#[test]
fn a_slowdown_that_does_not_hold_on_remeasurement_is_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = small_package(
        &dir.path().join("ops"),
        "add_custom",
        BINARY_CASES.as_str(),
        |s| s,
    );
    let strong = Sources::load(&pkg.dir).unwrap();
    let mut proposer = Scripted {
        proposals: vec![
            // No effect at all (a comment), but its first measurement is
            // disturbed: 6 % slower, well beyond tau.
            Proposal {
                action: action("barrier_elim", "a comment, measured while disturbed"),
                candidate: Ok(edited(&strong, |t| format!("// harmless comment\n{t}"))),
            },
            // A real removal: smaller tiles, about 1.8 times slower on
            // every measurement.
            Proposal {
                action: action("tile_size", "smallest tiles"),
                candidate: Ok(without(&strong, "tile_size")),
            },
        ],
    };
    let store = RunStore::open(&dir.path().join("runs.sqlite")).unwrap();
    let bank = Bank::open(&dir.path().join("bank.sqlite")).unwrap();
    let device = Disturbed {
        inner: device(),
        calls: AtomicU32::new(0),
        // 1: the strong kernel, 2: the comment's first measurement.
        disturbed: 2,
        factor: 1.06,
    };
    let run = store
        .create_run(&serde_json::json!({"test": "confirm"}))
        .unwrap();
    let compare = CompareConfig::RECOMMENDED;
    // Measurement noise on: confirmation is skipped without it.
    let ctx = RunContext {
        device: &device,
        store: &store,
        run,
        pipeline: PipelineConfig {
            repeats: compare.repeats,
            deterministic: false,
            seed: 5,
        },
        compare,
        workdir: dir.path().join("work"),
    };
    let cfg = RewindConfig {
        budget: 8,
        created_ms: Some(0),
        ..RewindConfig::default()
    };
    let mut distiller = BuiltinDistiller::new();
    let outcome = rewind_operator(&ctx, &pkg, &mut proposer, &mut distiller, &bank, &cfg).unwrap();
    print_outcomes(std::slice::from_ref(&outcome));
    let summaries: Vec<&str> = outcome
        .log
        .iter()
        .map(|l| l.action.summary.as_str())
        .collect();
    assert_eq!(
        summaries,
        [
            "the strong kernel as given",
            "a comment, measured while disturbed",
            "confirm: re-measure the fast kernel of `a comment, measured while disturbed`",
            "confirm: re-measure the slow candidate of `a comment, measured while disturbed`",
            "smallest tiles",
            // The strong kernel's re-measurement is reused: one more only.
            "confirm: re-measure the slow candidate of `smallest tiles`",
        ]
    );
    // Every attempt charged, the re-measurements included.
    assert_eq!(outcome.spent, 6);
    assert!(outcome.log.iter().all(|l| l.budget_index.is_some()));
    assert!(outcome.log.iter().all(|l| l.verdict == "correct"));
    // The comment passed once (the disturbed measurement) ...
    let strong_us = outcome.log[0].latency_us.unwrap();
    let comment_us = outcome.log[1].latency_us.unwrap();
    assert!(comment_us > strong_us * 1.03, "{comment_us} vs {strong_us}");
    assert!(!outcome.log[1].accepted);
    let reason = &outcome.log[1].reason;
    assert!(reason.starts_with("slower beyond noise once"), "{reason}");
    // ... and not again: not stored.
    assert!(reason.contains("not confirmed"), "{reason}");
    let again = |i: usize| outcome.log[i].latency_us.unwrap();
    assert!((again(3) / again(2) - 1.0).abs() < 0.02, "{outcome:#?}");
    // The real removal held twice and is the only entry.
    assert!(outcome.log[4].accepted, "{}", outcome.log[4].reason);
    assert!(outcome.log[4].reason.contains("confirmed:"));
    assert!(outcome.log.iter().filter(|l| l.accepted).count() == 2);
    assert_eq!(outcome.kept.len(), 1);
    let kept = &outcome.kept[0];
    let confirmation = kept.confirmation.as_ref().unwrap();
    assert!(confirmation.slow_us > 1.5 * confirmation.fast_us);
    assert_eq!(confirmation.fast_us, again(2));
    assert_eq!(confirmation.slow_us, again(5));
    let entries = bank.list(&EntryFilter::all()).unwrap();
    assert_eq!(entries.len(), 1);
    let e = &entries[0].entry;
    assert_eq!(e.motif, "tile_size");
    // Both measurements are in the evidence.
    assert_eq!(evidence(e, "slow_eval"), Some("4"));
    assert_eq!(evidence(e, "fast_eval"), Some("0"));
    assert_eq!(evidence(e, "confirm_slow_eval"), Some("5"));
    assert_eq!(evidence(e, "confirm_fast_eval"), Some("2"));
    assert_ne!(evidence(e, "confirm_slow_seed"), evidence(e, "slow_seed"));
    assert_ne!(evidence(e, "confirm_fast_seed"), evidence(e, "fast_seed"));
    assert_eq!(
        evidence(e, "confirm_slow_us"),
        Some(format!("{:.4}", confirmation.slow_us).as_str())
    );
    assert!(evidence(e, "decision").unwrap().contains("> tau"));
    assert!(evidence(e, "confirm_decision").unwrap().contains("> tau"));
}
