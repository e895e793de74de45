//! The benchmark driver behind `ascendopt run` and `ascendopt bench`:
//! builds a bank by Rewind, runs each method as an independent run at equal
//! budget per operator, and writes the report folder.
//!
//! Layout of the output folder:
//! - `runs.sqlite`: the run store; one run for Rewind and one per method,
//!   each with a config JSON naming what it is (method, budget, operators,
//!   bank digest, seed); each run's LLM calls (chat and embeddings) are in
//!   its `llm_calls` rows ([`AgentFactory::for_run`]), summed per run in
//!   `results.json` (`meta.llm_usage`);
//! - `bank.sqlite` (frozen) and `bank.jsonl`: the bank, built by Rewind
//!   over the bank operators, with `bank.json` recording how;
//! - `outcomes/<method>/<op>.json`: each finished method × operator;
//! - `ops/<method>/<op>/`: the optimised package (`<op>/`), `changes.diff`,
//!   `steps.json`, `log.json`, `before/` and `after/` profiles and Chrome
//!   traces ([`ascendopt_agent::optimize::write_output`]);
//! - `results.json`, `report.md`, `report.html` ([`crate::report`]);
//! - `work/`: candidate packages.
//!
//! Resuming: running again with the same folder and configuration finds
//! the same runs in the store (by their config JSON), reuses a finished
//! bank and finished operators, and replays an interrupted operator's loop
//! from the store (identical candidates are returned without charge), so
//! the final tables are those of an uninterrupted run.
//!
//! Parallelism (`jobs`): operators (and method × operator pairs) run on
//! worker threads, each with its own store and bank connections; each pair
//! is independent (own ledger, seeds derived from the run seed, the
//! operator and the budget index), and Rewind's per-operator entries are
//! merged into the bank in operator order, so results do not depend on
//! the number of threads.

use crate::baselines::{best_of_n, coder_judge};
use crate::report::results::{LlmUsageRow, OutcomeSummary, ProfileBrief, Results, RunMeta};
use crate::report::write_report;
use ascendopt_agent::factory::AgentFactory;
use ascendopt_agent::llm::FALLBACK_STATUS;
use ascendopt_agent::optimize::{optimize_operator, write_output, Method, OptimizeConfig};
use ascendopt_agent::rewind::{rewind_operator_with, RewindConfig};
use ascendopt_agent::session::{OpSession, RunContext};
use ascendopt_agent::AgentError;
use ascendopt_bank::error::BankError;
use ascendopt_bank::store::Bank;
use ascendopt_device::select::DeviceChoice;
use ascendopt_device::Device;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::ledger::BudgetConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::pool::for_each_result;
use ascendopt_harness::store::{RunId, RunStatus, RunStore, StoreError};
use ascendopt_op::package::OpPackage;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Errors that stop a benchmark.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// An agent loop failed (not a candidate's fault).
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The bank failed.
    #[error(transparent)]
    Bank(#[from] BankError),
    /// The configuration is not usable: a message naming the flag or the
    /// values that do not fit (no typed source exists).
    #[error("{0}")]
    Config(String),
    /// A benchmark thread panicked.
    #[error("a benchmark thread panicked")]
    Panicked,
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A folder could not be prepared (removed, copied).
    #[error("{}: {doing}: {source}", path.display())]
    Prepare {
        /// The path.
        path: PathBuf,
        /// `removing`, `copying`.
        doing: &'static str,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A record could not be written as JSON.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file it was for.
        path: PathBuf,
        /// What went wrong.
        source: serde_json::Error,
    },
    /// An operator's op.toml could not be read, edited or loaded.
    #[error("{}: {source}", path.display())]
    Operator {
        /// Its folder or op.toml.
        path: PathBuf,
        /// Why.
        source: ascendopt_op::OpError,
    },
    /// An operator's cases could not be reduced to the small ones.
    #[error("{}: {source}; cannot drop the large ones", path.display())]
    Shrink {
        /// Its op.toml.
        path: PathBuf,
        /// Why.
        source: ascendopt_op::OpError,
    },
    /// An operator's copy kept another number of cases than asked.
    #[error("{}: {kept} cases kept instead of {asked}", path.display())]
    ShrinkCount {
        /// Its op.toml.
        path: PathBuf,
        /// Cases the copy has.
        kept: usize,
        /// Cases it should have.
        asked: usize,
    },
    /// An operator's sources could not be read.
    #[error("reading operator {op}: {source}")]
    Read {
        /// The operator.
        op: String,
        /// Why (boxed: a pipeline error is large).
        source: Box<ascendopt_harness::pipeline::PipelineError>,
    },
    /// Rewind gave an operator no experience to bank.
    #[error("rewind of {op} produced nothing")]
    NoRewind {
        /// The operator.
        op: String,
    },
}

pub(crate) fn io(path: &Path, source: std::io::Error) -> BenchError {
    BenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(crate) fn json(path: &Path, source: serde_json::Error) -> BenchError {
    BenchError::Json {
        path: path.to_path_buf(),
        source,
    }
}

/// A method of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BenchMethod {
    /// One of the method's variants (Table 3).
    Optimize(Method),
    /// Best-of-N sampling (baseline).
    BestOfN,
    /// Coder + judge (CudaForge-style baseline; needs an LLM).
    Judge,
}

impl BenchMethod {
    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BenchMethod::Optimize(m) => m.as_str(),
            BenchMethod::BestOfN => "bon",
            BenchMethod::Judge => "judge",
        }
    }

    /// Parses a name (`full`, `stage1`, `stage1-noexp`, `tiling`, `bon`,
    /// `judge`).
    pub fn parse(text: &str) -> Option<BenchMethod> {
        match text {
            "bon" => Some(BenchMethod::BestOfN),
            "judge" => Some(BenchMethod::Judge),
            other => Method::parse(other).map(BenchMethod::Optimize),
        }
    }

    /// Whether the method retrieves from the bank.
    pub fn uses_bank(self) -> bool {
        matches!(self, BenchMethod::Optimize(m) if m.uses_bank())
    }
}

/// What a benchmark runs.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Methods, in report order.
    pub methods: Vec<BenchMethod>,
    /// Evaluations per operator and method, all stages together (the
    /// method's 230): a method that uses the bank spends `rewind_budget`
    /// of it on Rewind and the rest online; the others spend it all
    /// online ([`BenchConfig::online_budget`]).
    pub budget: u32,
    /// Rewind evaluations per bank operator (the method's 20).
    pub rewind_budget: u32,
    /// Operators evaluated.
    pub eval_ops: Vec<OpPackage>,
    /// Operators the bank is built on (the evaluated ones by default).
    pub bank_ops: Vec<OpPackage>,
    /// The output folder.
    pub out: PathBuf,
    /// Worker threads.
    pub jobs: usize,
    /// Base seed (inputs, noise, proposers).
    pub seed: u64,
    /// No measurement noise.
    pub deterministic: bool,
    /// Latency samples per evaluation.
    pub repeats: usize,
    /// Stage I's share of the budget in `full` (None: until stagnation).
    pub stage1_budget: Option<u32>,
    /// Notes for the report (e.g. missing levels).
    pub notes: Vec<String>,
    /// Where candidates are evaluated (`--device`; the simulator).
    pub device: DeviceChoice,
}

impl BenchConfig {
    /// A configuration with the method's reference settings (230 = 20 +
    /// 210 evaluations, 30 latency samples) over `ops`.
    pub fn new(methods: Vec<BenchMethod>, ops: Vec<OpPackage>, out: PathBuf) -> BenchConfig {
        BenchConfig {
            methods,
            budget: BudgetConfig::REFERENCE.online + BudgetConfig::REFERENCE.rewind,
            rewind_budget: BudgetConfig::REFERENCE.rewind,
            bank_ops: ops.clone(),
            eval_ops: ops,
            out,
            jobs: 1,
            seed: 1,
            deterministic: false,
            repeats: CompareConfig::RECOMMENDED.repeats,
            stage1_budget: None,
            notes: Vec::new(),
            device: DeviceChoice::Sim,
        }
    }
}

impl BenchConfig {
    /// Online evaluations per operator of `method`: the budget less
    /// Rewind's share for methods that use the bank.
    pub fn online_budget(&self, method: BenchMethod) -> u32 {
        if method.uses_bank() {
            self.budget.saturating_sub(self.rewind_budget)
        } else {
            self.budget
        }
    }
}

/// Progress of a benchmark, for progress bars.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchEvent {
    /// A phase starts: `total` evaluations at most.
    Phase {
        /// `rewind` or `online`.
        name: String,
        /// Evaluations budgeted in the phase.
        total: u64,
    },
    /// Evaluations done so far in the current phase (charged or replayed).
    Progress {
        /// Done so far.
        done: u64,
        /// Of them charged to a budget, when known.
        charged: Option<u64>,
        /// The best measured speedup so far over the input, with its
        /// operator and method (`cos (full)`), when known.
        best: Option<(String, f64)>,
    },
    /// One operator finished (Rewind) or one method × operator finished.
    Finished {
        /// Method (`rewind` for Rewind).
        method: String,
        /// Operator.
        op: String,
        /// What came out, in words.
        summary: String,
    },
    /// Something the user should know.
    Note(String),
}

/// What a benchmark produced.
#[derive(Debug, Clone)]
pub struct BenchReport {
    /// The results (also in results.json).
    pub results: Results,
    /// report.html.
    pub report_html: PathBuf,
    /// The output folder.
    pub out: PathBuf,
}

fn pipeline(cfg: &BenchConfig) -> PipelineConfig {
    PipelineConfig {
        repeats: cfg.repeats.max(1),
        deterministic: cfg.deterministic,
        seed: cfg.seed,
    }
}

fn names(pkgs: &[OpPackage]) -> Vec<String> {
    pkgs.iter().map(|p| p.name().to_string()).collect()
}

/// What a stored run's results depend on besides its settings: every file
/// of every operator package (as [`candidate_source`] reads them) and the
/// build of ascendopt that measured them (the SHA-256 of the running
/// executable, which holds the simulator and its timing model). A folder
/// left by another checkout or another build is therefore not resumed:
/// its finished pairs are measured again in a new run of the same store.
fn identity(pkgs: &[OpPackage]) -> Result<serde_json::Value, BenchError> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for pkg in pkgs {
        let source = ascendopt_harness::pipeline::candidate_source(pkg).map_err(|source| {
            BenchError::Read {
                op: pkg.name().to_string(),
                source: Box::new(source),
            }
        })?;
        h.update(pkg.name().as_bytes());
        h.update([0]);
        h.update(source.as_bytes());
        h.update([0]);
    }
    Ok(serde_json::json!({
        "ops_sha256": format!("{:x}", h.finalize()),
        "build_sha256": build_digest(),
    }))
}

/// The SHA-256 of the running executable, computed once per process
/// ("unknown" when it cannot be read, which then matches only itself).
fn build_digest() -> &'static str {
    use sha2::{Digest, Sha256};
    static DIGEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIGEST.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::read)
            .map(|bytes| format!("{:x}", Sha256::digest(&bytes)))
            .unwrap_or_else(|_| "unknown".into())
    })
}

fn write_atomic(path: &Path, text: &str) -> Result<(), BenchError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// How the bank of a benchmark folder was built (`bank.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct BankRecord {
    config: serde_json::Value,
    digest: String,
    entries: usize,
}

/// A finished method × operator (`outcomes/<method>/<op>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Finished {
    run: i64,
    summary: OutcomeSummary,
}

/// One operator's Rewind: its entries as JSONL and a one-line summary.
type RewoundOp = (Vec<u8>, String);

/// Builds (or reuses) the bank: Rewind over `cfg.bank_ops`, per operator
/// into its own in-memory bank on the worker threads, merged into
/// `<out>/bank.sqlite` in operator order, frozen, exported to bank.jsonl.
fn build_bank(
    cfg: &BenchConfig,
    device: &dyn Device,
    agents: &dyn AgentFactory,
    progress: &(dyn Fn(&BenchEvent) + Sync),
) -> Result<(BankRecord, Option<RunId>), BenchError> {
    let bank_path = cfg.out.join("bank.sqlite");
    let record_path = cfg.out.join("bank.json");
    let config = serde_json::json!({
        "kind": "rewind",
        "ops": names(&cfg.bank_ops),
        "budget": cfg.rewind_budget,
        "seed": cfg.seed,
        "deterministic": cfg.deterministic,
        "repeats": cfg.repeats.max(1),
        "agents": agents.name(),
        "identity": identity(&cfg.bank_ops)?,
    });
    if bank_path.is_file() {
        let previous: Option<BankRecord> = std::fs::read_to_string(&record_path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        if let Some(rec) = previous.filter(|r| r.config == config) {
            let bank = Bank::open(&bank_path)?;
            if bank.is_frozen()? && bank.content_digest()? == rec.digest {
                progress(&BenchEvent::Note(format!(
                    "reusing the bank in {} ({} entries)",
                    bank_path.display(),
                    rec.entries
                )));
                let store = RunStore::open(&cfg.out.join("runs.sqlite"))?;
                let run = store
                    .runs()?
                    .into_iter()
                    .find(|r| r.config == config)
                    .map(|r| r.id);
                return Ok((rec, run));
            }
        }
        for suffix in ["", "-wal", "-shm"] {
            let p = PathBuf::from(format!("{}{suffix}", bank_path.display()));
            if p.exists() {
                std::fs::remove_file(&p).map_err(|e| io(&p, e))?;
            }
        }
    }
    let store_path = cfg.out.join("runs.sqlite");
    let run = {
        let store = RunStore::open(&store_path)?;
        store.find_or_create_run(&config)?.0
    };
    progress(&BenchEvent::Phase {
        name: "rewind".into(),
        total: cfg.bank_ops.len() as u64 * u64::from(cfg.rewind_budget),
    });
    let done = AtomicU64::new(0);
    let scoped = agents.for_run(&store_path, run)?;
    let agents: &dyn AgentFactory = scoped.as_deref().unwrap_or(agents);
    let rcfg = RewindConfig {
        budget: cfg.rewind_budget,
        seed: cfg.seed,
        max_chain: RewindConfig::default().max_chain,
        created_ms: None,
    };
    let work = |pkg: &OpPackage| -> Result<RewoundOp, BenchError> {
        let store = RunStore::open(&store_path)?;
        let ctx = RunContext {
            device,
            store: &store,
            run,
            pipeline: pipeline(cfg),
            compare: CompareConfig::RECOMMENDED,
            workdir: cfg.out.join("work").join("rewind"),
        };
        let bank = Bank::open_in_memory()?;
        let mut proposer = agents.proposer(cfg.seed)?;
        let mut distiller = agents.distiller()?;
        let outcome = rewind_operator_with(
            &ctx,
            pkg,
            proposer.as_mut(),
            distiller.as_mut(),
            &bank,
            &rcfg,
            &mut |_| {
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(&BenchEvent::Progress {
                    done: d,
                    charged: None,
                    best: None,
                });
            },
        )?;
        let mut jsonl = Vec::new();
        bank.export_jsonl(&mut jsonl)?;
        let summary = format!(
            "{} entr{} ({} evaluations; {})",
            outcome.kept.len(),
            if outcome.kept.len() == 1 { "y" } else { "ies" },
            outcome.spent,
            outcome.stop
        );
        Ok((jsonl, summary))
    };
    let pkgs: Vec<&OpPackage> = cfg.bank_ops.iter().collect();
    let mut per_op: Vec<Option<Result<RewoundOp, BenchError>>> = Vec::new();
    per_op.resize_with(pkgs.len(), || None);
    for_each_result(pkgs.clone(), cfg.jobs, work, |i, r| {
        if let Ok((_, summary)) = &r {
            progress(&BenchEvent::Finished {
                method: "rewind".into(),
                op: pkgs[i].name().to_string(),
                summary: summary.clone(),
            });
        }
        per_op[i] = Some(r);
    });
    let bank = Bank::open(&bank_path)?;
    for (pkg, r) in pkgs.iter().zip(per_op) {
        let r = r.ok_or_else(|| BenchError::NoRewind {
            op: pkg.name().to_string(),
        })?;
        let (jsonl, _) = r?;
        bank.import_jsonl(&mut std::io::BufReader::new(jsonl.as_slice()))?;
    }
    bank.freeze()?;
    let jsonl_path = cfg.out.join("bank.jsonl");
    let mut jsonl = Vec::new();
    bank.export_jsonl(&mut jsonl)?;
    write_atomic(&jsonl_path, &String::from_utf8_lossy(&jsonl))?;
    let rec = BankRecord {
        config,
        digest: bank.content_digest()?,
        entries: bank.len()?,
    };
    let text = serde_json::to_string_pretty(&rec).map_err(|e| json(&record_path, e))?;
    write_atomic(&record_path, &text)?;
    RunStore::open(&store_path)?.set_run_status(run, RunStatus::Finished)?;
    Ok((rec, Some(run)))
}

/// One method × operator, on a worker thread.
fn run_pair(
    cfg: &BenchConfig,
    device: &dyn Device,
    agents: &dyn AgentFactory,
    method: BenchMethod,
    run: RunId,
    pkg: &OpPackage,
    bank_path: Option<&Path>,
) -> Result<OutcomeSummary, BenchError> {
    let store_path = cfg.out.join("runs.sqlite");
    let store = RunStore::open(&store_path)?;
    let scoped = agents.for_run(&store_path, run)?;
    let agents: &dyn AgentFactory = scoped.as_deref().unwrap_or(agents);
    let ctx = RunContext {
        device,
        store: &store,
        run,
        pipeline: pipeline(cfg),
        compare: CompareConfig::RECOMMENDED,
        workdir: cfg.out.join("work").join(method.as_str()),
    };
    let bank = match bank_path {
        Some(p) if method.uses_bank() => Some(Bank::open(p)?),
        _ => None,
    };
    let budget = cfg.online_budget(method);
    let budgets = BudgetConfig {
        rewind: 0,
        online: budget,
    };
    let mut session = OpSession::open(&ctx, pkg, budgets)?;
    let outcome = match method {
        BenchMethod::Optimize(m) => {
            let mut proposer = agents.proposer(cfg.seed)?;
            let mut diagnoser = agents.diagnoser()?;
            optimize_operator(
                &mut session,
                bank.as_ref(),
                proposer.as_mut(),
                diagnoser.as_mut(),
                &OptimizeConfig {
                    method: m,
                    budget,
                    stage1_budget: cfg.stage1_budget,
                    seed: cfg.seed,
                    retrieval: agents.retrieval(),
                    ..OptimizeConfig::default()
                },
            )?
        }
        BenchMethod::BestOfN => {
            let mut proposer = agents.proposer(cfg.seed)?;
            best_of_n(&mut session, proposer.as_mut(), budget, cfg.seed)?
        }
        BenchMethod::Judge => {
            let client = agents.llm_client().ok_or_else(|| {
                BenchError::Config("the coder + judge baseline needs an LLM client".into())
            })?;
            coder_judge(&mut session, &client, budget)?
        }
    };
    let rel = PathBuf::from("ops").join(method.as_str()).join(pkg.name());
    let out_dir = cfg.out.join(&rel);
    let written = write_output(device, &outcome, pkg, &out_dir, cfg.seed)?;
    let mut summary = OutcomeSummary::from_outcome(&outcome);
    let rel_str = |p: &Path| p.to_string_lossy().replace('\\', "/");
    summary.package = Some(rel_str(&rel.join(pkg.name())));
    let diff = rel.join("changes.diff");
    if cfg.out.join(&diff).is_file() {
        summary.diff = Some(rel_str(&diff));
    }
    summary.profile_before = written.before_profile.as_ref().map(ProfileBrief::of);
    summary.profile_after = written.after_profile.as_ref().map(ProfileBrief::of);
    for (name, slot) in [
        ("before", &mut summary.trace_before),
        ("after", &mut summary.trace_after),
    ] {
        let trace = rel.join(name).join("trace.json");
        if cfg.out.join(&trace).is_file() {
            *slot = Some(rel_str(&trace));
        }
    }
    if !written.output_passed {
        summary.error = Some(format!(
            "the output failed its re-check on fresh inputs: {}",
            written.failures.join("; ")
        ));
        summary.correct = false;
    }
    Ok(summary)
}

/// Runs the benchmark (module docs) and writes the report folder.
pub fn run_bench(
    cfg: &BenchConfig,
    device: &dyn Device,
    agents: &dyn AgentFactory,
    progress: &(dyn Fn(&BenchEvent) + Sync),
) -> Result<BenchReport, BenchError> {
    if cfg.methods.is_empty() {
        return Err(BenchError::Config("no method to run".into()));
    }
    if cfg.eval_ops.is_empty() {
        return Err(BenchError::Config("no operator to evaluate".into()));
    }
    for &m in &cfg.methods {
        if cfg.online_budget(m) == 0 {
            return Err(BenchError::Config(format!(
                "method {} has no online evaluation left: budget {} with {} for Rewind",
                m.as_str(),
                cfg.budget,
                cfg.rewind_budget
            )));
        }
    }
    let started = std::time::Instant::now();
    std::fs::create_dir_all(&cfg.out).map_err(|e| io(&cfg.out, e))?;
    let store_path = cfg.out.join("runs.sqlite");
    let resumed = store_path.exists();
    let store = RunStore::open(&store_path)?;

    // Which methods run.
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut methods: Vec<BenchMethod> = Vec::new();
    for &m in &cfg.methods {
        match m {
            BenchMethod::Judge if agents.llm_client().is_none() => skipped.push((
                m.as_str().into(),
                "the coder + judge baseline needs an LLM (--proposer llm with an endpoint); none is configured".into(),
            )),
            m if !methods.contains(&m) => methods.push(m),
            _ => {}
        }
    }
    for (m, why) in &skipped {
        progress(&BenchEvent::Note(format!("skipping {m}: {why}")));
    }

    // The bank.
    let needs_bank = methods.iter().any(|m| m.uses_bank());
    let (bank, rewind_run) = if needs_bank && cfg.rewind_budget > 0 && !cfg.bank_ops.is_empty() {
        let (rec, run) = build_bank(cfg, device, agents, progress)?;
        (Some(rec), run)
    } else {
        (None, None)
    };
    let bank_path = bank.as_ref().map(|_| cfg.out.join("bank.sqlite"));

    // One run per method.
    let eval_identity = identity(&cfg.eval_ops)?;
    let mut runs: Vec<(BenchMethod, RunId)> = Vec::new();
    for &m in &methods {
        let config = serde_json::json!({
            "kind": "bench",
            "method": m.as_str(),
            "budget": cfg.online_budget(m),
            "ops": names(&cfg.eval_ops),
            "bank_ops": if m.uses_bank() { names(&cfg.bank_ops) } else { Vec::new() },
            "bank_digest": if m.uses_bank() { bank.as_ref().map(|b| b.digest.clone()) } else { None },
            "seed": cfg.seed,
            "deterministic": cfg.deterministic,
            "repeats": cfg.repeats.max(1),
            "stage1_budget": cfg.stage1_budget,
            "agents": agents.name(),
            "identity": eval_identity,
        });
        runs.push((m, store.find_or_create_run(&config)?.0));
    }

    // Method × operator pairs, finished ones reused.
    let mut summaries: Vec<OutcomeSummary> = Vec::new();
    let mut jobs: Vec<(BenchMethod, RunId, &OpPackage)> = Vec::new();
    // Budget a finished pair left unspent (candidates answered from the
    // store), counted as done so that the progress reaches its total.
    let unspent = AtomicU64::new(0);
    let left_unspent = |m: BenchMethod, spent: u32| {
        let left = cfg.online_budget(m).saturating_sub(spent);
        unspent.fetch_add(u64::from(left), Ordering::Relaxed);
    };
    let mut reused: Vec<String> = Vec::new();
    for &(m, run) in &runs {
        for pkg in &cfg.eval_ops {
            let path = finished_path(cfg, m, pkg.name());
            let previous: Option<Finished> = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
            match previous {
                Some(f) if f.run == run.0 => {
                    left_unspent(m, f.summary.spent);
                    reused.push(format!("{} {}", m.as_str(), f.summary.op));
                    summaries.push(f.summary)
                }
                _ => jobs.push((m, run, pkg)),
            }
        }
    }
    if !reused.is_empty() {
        progress(&BenchEvent::Note(format!(
            "resuming {}: {} finished pair(s) kept ({}); {} to run",
            cfg.out.display(),
            reused.len(),
            reused.join(", "),
            jobs.len()
        )));
    }
    let total: u64 = runs
        .iter()
        .map(|(m, _)| cfg.eval_ops.len() as u64 * u64::from(cfg.online_budget(*m)))
        .sum();
    progress(&BenchEvent::Phase {
        name: "online".into(),
        total,
    });
    let stop = AtomicBool::new(false);
    let pairs: Vec<(RunId, &str, String)> = runs
        .iter()
        .flat_map(|(m, run)| {
            cfg.eval_ops
                .iter()
                .map(move |p| (*run, m.as_str(), p.name().to_string()))
        })
        .collect();
    std::thread::scope(|scope| -> Result<(), BenchError> {
        let poller = scope.spawn(|| {
            let Ok(store) = RunStore::open(&store_path) else {
                return;
            };
            let mut last = u64::MAX;
            // Per pair: evaluations seen and the best measured speedup.
            let mut seen: Vec<(u32, Option<f64>)> = vec![(0, None); pairs.len()];
            while !stop.load(Ordering::Relaxed) {
                let mut charged = 0u64;
                for (i, (run, _, op)) in pairs.iter().enumerate() {
                    let spent = store
                        .operator(*run, op)
                        .ok()
                        .flatten()
                        .map_or(0, |info| info.spent);
                    charged += u64::from(spent);
                    if spent != seen[i].0 {
                        seen[i] = (spent, best_measured(&store, *run, op));
                    }
                }
                let done = charged + unspent.load(Ordering::Relaxed);
                if done != last {
                    let best = seen
                        .iter()
                        .zip(&pairs)
                        .filter_map(|((_, b), (_, m, op))| b.map(|b| (format!("{op} ({m})"), b)))
                        .max_by(|a, b| a.1.total_cmp(&b.1));
                    progress(&BenchEvent::Progress {
                        done,
                        charged: Some(charged),
                        best,
                    });
                    last = done;
                }
                std::thread::sleep(std::time::Duration::from_millis(400));
            }
        });
        let mut first_error: Option<BenchError> = None;
        let job_list = jobs.clone();
        for_each_result(
            jobs.clone(),
            cfg.jobs,
            |(m, run, pkg)| run_pair(cfg, device, agents, m, run, pkg, bank_path.as_deref()),
            |i, r| {
                let (m, run, pkg) = job_list[i];
                match r {
                    Ok(summary) => {
                        left_unspent(m, summary.spent);
                        progress(&BenchEvent::Finished {
                            method: m.as_str().into(),
                            op: pkg.name().into(),
                            summary: format!(
                                "speedup {:.3} ({} evaluations, {} steps)",
                                summary.speedup,
                                summary.spent,
                                summary.steps.len()
                            ),
                        });
                        let rec = Finished {
                            run: run.0,
                            summary: summary.clone(),
                        };
                        let saved = serde_json::to_string_pretty(&rec)
                            .map_err(|e| json(&finished_path(cfg, m, pkg.name()), e))
                            .and_then(|t| write_atomic(&finished_path(cfg, m, pkg.name()), &t));
                        if let Err(e) = saved {
                            first_error.get_or_insert(e);
                        }
                        summaries.push(summary);
                    }
                    Err(e) => {
                        progress(&BenchEvent::Finished {
                            method: m.as_str().into(),
                            op: pkg.name().into(),
                            summary: format!("failed: {e}"),
                        });
                        summaries.push(OutcomeSummary::failed(
                            m.as_str(),
                            pkg.name(),
                            pkg.spec.level,
                            cfg.online_budget(m),
                            e.to_string(),
                        ));
                    }
                }
            },
        );
        stop.store(true, Ordering::Relaxed);
        let _ = poller.join();
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })?;
    for (_, run) in &runs {
        store.set_run_status(*run, RunStatus::Finished)?;
    }

    let bank_ops = if bank.is_some() {
        names(&cfg.bank_ops)
    } else {
        Vec::new()
    };
    let eval_ops = names(&cfg.eval_ops);
    let overlap = bank_ops.iter().filter(|b| eval_ops.contains(b)).count();
    let setting = if bank.is_none() {
        "no bank".to_string()
    } else if overlap == 0 {
        "held-out".to_string()
    } else if overlap == eval_ops.len() && overlap == bank_ops.len() {
        "transductive".to_string()
    } else {
        "mixed".to_string()
    };
    let mut notes = cfg.notes.clone();
    let failed = summaries.iter().filter(|s| s.error.is_some()).count();
    if failed > 0 {
        notes.push(format!(
            "{failed} method × operator pair(s) ended with an error; they count as speedup 1.0 and not correct"
        ));
    }
    let llm_usage = if agents.llm_client().is_some() || agents.dense().is_some() {
        let mut rows = Vec::new();
        for (name, run) in rewind_run
            .map(|r| ("rewind", r))
            .into_iter()
            .chain(runs.iter().map(|(m, r)| (m.as_str(), *r)))
        {
            rows.push(llm_usage(&store, name, run)?);
        }
        rows
    } else {
        Vec::new()
    };
    let meta = RunMeta {
        tool: format!("ascendopt {}", env!("CARGO_PKG_VERSION")),
        device: "simulated Ascend 910B2 (built-in timing model)".into(),
        methods: cfg.methods.iter().map(|m| m.as_str().to_string()).collect(),
        budget: cfg.budget,
        rewind_budget: if bank.is_some() { cfg.rewind_budget } else { 0 },
        eval_ops,
        bank_ops,
        bank_entries: bank.as_ref().map_or(0, |b| b.entries),
        setting,
        seed: cfg.seed,
        deterministic: cfg.deterministic,
        runs: runs
            .iter()
            .map(|(m, r)| (m.as_str().to_string(), r.0))
            .collect(),
        skipped,
        notes,
        llm_usage,
        wall_seconds: Some(started.elapsed().as_secs_f64()),
        resumed,
        bank_file: bank.as_ref().map(|_| "bank.sqlite".to_string()),
    };
    let results = Results::new(meta, summaries);
    let report_html = write_report(&cfg.out, &results)?;
    Ok(BenchReport {
        results,
        report_html,
        out: cfg.out.clone(),
    })
}

/// The best measured speedup of `op` in `run` so far: the input's median
/// latency (its first evaluation) over the lowest median of the correct
/// evaluations since; None before the input is measured.
fn best_measured(store: &RunStore, run: RunId, op: &str) -> Option<f64> {
    let evals = store.evaluations(run, op).ok()?;
    let base = evals
        .iter()
        .min_by_key(|e| e.budget_index)?
        .verdict
        .latency()?
        .median_us;
    let best = evals
        .iter()
        .filter_map(|e| e.verdict.latency().map(|l| l.median_us))
        .fold(f64::INFINITY, f64::min);
    (best.is_finite() && best > 0.0).then(|| base / best)
}

/// The LLM usage of one run, from its `llm_calls` rows.
fn llm_usage(store: &RunStore, method: &str, run: RunId) -> Result<LlmUsageRow, BenchError> {
    let mut row = LlmUsageRow {
        method: method.to_string(),
        run: run.0,
        ..LlmUsageRow::default()
    };
    for call in store.llm_calls(run)? {
        row.rows += 1;
        if call.status == "ok" {
            row.requests += 1;
        }
        if call.role == "embeddings" {
            row.embedding_tokens += call.prompt_tokens;
            if call.status == FALLBACK_STATUS {
                row.dense_fallbacks += 1;
            }
        } else {
            row.prompt_tokens += call.prompt_tokens;
            row.completion_tokens += call.completion_tokens;
        }
        if let Some(c) = call.cost {
            *row.cost.get_or_insert(0.0) += c;
        }
    }
    Ok(row)
}

fn finished_path(cfg: &BenchConfig, m: BenchMethod, op: &str) -> PathBuf {
    cfg.out
        .join("outcomes")
        .join(m.as_str())
        .join(format!("{op}.json"))
}
