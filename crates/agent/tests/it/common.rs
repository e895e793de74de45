//! Shared rig of the optimisation tests: small copies of built-in
//! operators (the large cases dropped so that an evaluation takes about a
//! second), a simulator device, a run store, and a bank learnt by Rewind on
//! other operators.
#![allow(dead_code)]

use ascendopt_agent::builtin::BuiltinProposer;
use ascendopt_agent::distill::BuiltinDistiller;
use ascendopt_agent::rewind::{rewind_operator, RewindConfig};
use ascendopt_agent::session::{LogEntry, OpSession, Phase, RunContext};
use ascendopt_bank::store::Bank;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunId, RunStore};
use ascendopt_motif::{by_tag, SiteState, Sources};
use ascendopt_op::package::OpPackage;
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The benchmark shape of the small copies: 1 M elements, enough for
/// cores, buffers and tiles to matter next to the launch cost.
pub const BENCH_SHAPE: &str = "[[256, 4096]]";

pub fn ops_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops")
}

/// A process-wide scratch folder.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// A copy of built-in operator `op` under `scratch()/<tag>/<op>` whose
/// op.toml keeps only the cases with at most `max_elems` elements in their
/// first input, plus the first larger case with its shapes replaced by
/// `bench` (a `shapes = ...` value) when given.
pub fn small_copy(op: &str, tag: &str, max_elems: u64, bench: Option<&str>) -> PathBuf {
    let dst = scratch().join(tag).join(op);
    if dst.join("op.toml").is_file() {
        return dst;
    }
    let src = Sources::load(&ops_dir().join(op)).unwrap();
    src.write_to(&dst).unwrap();
    let mut bench = bench;
    ascendopt_testkit::map_cases(&dst, |block| {
        if ascendopt_testkit::first_shape_elements(block).is_some_and(|n| n <= max_elems) {
            return Some(block.to_string());
        }
        let shapes = bench.take()?;
        Some(
            block
                .split_inclusive('\n')
                .map(|line| {
                    if line.trim_start().starts_with("shapes") {
                        format!("shapes = {shapes}\n")
                    } else {
                        line.to_string()
                    }
                })
                .collect(),
        )
    });
    OpPackage::load(&dst, &ascendopt_golden::BUILTINS).unwrap();
    dst
}

/// `dir`'s package with `motifs` removed (first present site each), written
/// to `scratch()/<tag>/<op>`.
pub fn weakened(dir: &Path, motifs: &[&str], tag: &str) -> PathBuf {
    let mut s = Sources::load(dir).unwrap();
    for tag in motifs {
        let m = by_tag(tag).unwrap();
        let site = m
            .detect(&s)
            .into_iter()
            .find(|x| x.state == SiteState::Present)
            .unwrap_or_else(|| panic!("{tag} is not present"));
        s = m
            .remove(&s, &site)
            .unwrap_or_else(|| panic!("{tag} declined"));
    }
    let dst = scratch().join(tag).join(dir.file_name().unwrap());
    s.write_to(&dst).unwrap();
    dst
}

pub struct Rig {
    pub device: SimDevice,
    pub store: RunStore,
    pub workdir: PathBuf,
}

impl Rig {
    pub fn new(name: &str) -> Rig {
        let root = scratch().join(name);
        std::fs::create_dir_all(&root).unwrap();
        Rig {
            device: SimDevice::new(SimDeviceConfig::standard().unwrap()),
            store: RunStore::open(&root.join("runs.sqlite")).unwrap(),
            workdir: root.join("work"),
        }
    }

    pub fn ctx(&self, run: RunId, seed: u64) -> RunContext<'_> {
        RunContext {
            device: &self.device,
            store: &self.store,
            run,
            pipeline: PipelineConfig {
                repeats: 10,
                deterministic: true,
                seed,
            },
            compare: CompareConfig::RECOMMENDED,
            workdir: self.workdir.clone(),
        }
    }
}

/// A bank learnt by Rewind (built-in proposer and distiller) on small
/// copies of `neg` and `sqrt`, frozen; built once per test process.
pub fn rewind_bank() -> &'static Path {
    static BANK: OnceLock<PathBuf> = OnceLock::new();
    BANK.get_or_init(|| {
        let path = scratch().join("rewind-bank.sqlite");
        let bank = Bank::open(&path).unwrap();
        let rig = Rig::new("rewind");
        let run = rig
            .store
            .create_run(&serde_json::json!({"test": "rewind-bank"}))
            .unwrap();
        let ctx = rig.ctx(run, 3);
        for op in ["neg", "sqrt"] {
            let pkg = OpPackage::load(
                &small_copy(op, "bank-src", 70_000, Some(BENCH_SHAPE)),
                &ascendopt_golden::BUILTINS,
            )
            .unwrap();
            let out = rewind_operator(
                &ctx,
                &pkg,
                &mut BuiltinProposer::new(0),
                &mut BuiltinDistiller::new(),
                &bank,
                &RewindConfig {
                    budget: 10,
                    seed: 0,
                    max_chain: 11,
                    created_ms: Some(0),
                },
            )
            .unwrap();
            eprintln!(
                "rewind {op}: kept {:?}",
                out.kept
                    .iter()
                    .map(|k| (&k.motif, k.slowdown()))
                    .collect::<Vec<_>>()
            );
        }
        bank.freeze().unwrap();
        path
    })
}

/// Stage II's entries of a session's log, each printed (a failing test
/// shows what the search spent its evaluations on).
pub fn tune_log<'s>(session: &'s OpSession<'_>) -> Vec<&'s LogEntry> {
    let log: Vec<_> = session
        .log()
        .iter()
        .filter(|e| e.phase == Phase::Tune)
        .collect();
    for e in &log {
        eprintln!(
            "{} {} {:?} {}",
            e.verdict, e.action.summary, e.latency_us, e.reason
        );
    }
    log
}
