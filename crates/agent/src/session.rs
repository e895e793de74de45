//! One operator's evaluations inside a run: the only way the agent gets a
//! candidate judged.
//!
//! An [`OpSession`] owns the operator's budget ledger, materialises each
//! candidate [`Sources`] as a package folder under the run's work folder,
//! sends it through the harness pipeline (static check → build →
//! correctness → profile), and appends a [`LogEntry`] to its evaluation log
//! for every attempt, charged or not. Comparisons between a candidate and an
//! incumbent use the harness's noise-aware rule ([`compare::faster`]).
//!
//! Invariants:
//! - Every charged attempt (including a proposal that yielded no
//!   applicable edit) appears once in the log and once in the run store.
//! - An identical candidate (same sources) is judged once per run: the
//!   store returns the earlier verdict without charge. Re-running a
//!   deterministic loop on the same run therefore replays it for free, which
//!   is how runs resume.

use crate::AgentError;
use ascendopt_device::Device;
use ascendopt_harness::candidate::Candidate;
use ascendopt_harness::compare::{self, CompareConfig, Decision};
use ascendopt_harness::fresh;
use ascendopt_harness::ledger::{BudgetConfig, Charge, Ledger};
use ascendopt_harness::pipeline::{self, Evaluated, PipelineConfig, PipelineError};
use ascendopt_harness::store::{RunId, RunStore, Stage, StageTimings};
use ascendopt_harness::verdict::Verdict;
use ascendopt_motif::Sources;
use ascendopt_op::package::OpPackage;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What every session of a run shares.
pub struct RunContext<'a> {
    /// The device that builds, runs and profiles.
    pub device: &'a dyn Device,
    /// The run store.
    pub store: &'a RunStore,
    /// The run.
    pub run: RunId,
    /// How evaluations are carried out (repeats, noise, base seed).
    pub pipeline: PipelineConfig,
    /// The acceptance rule.
    pub compare: CompareConfig,
    /// Where candidate packages are written (`<workdir>/<op>/<hash>/`).
    pub workdir: PathBuf,
}

/// Which loop made an attempt (finer than the budget's [`Stage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Rewind (offline).
    Rewind,
    /// The input kernel's own measurement.
    Baseline,
    /// Stage I kernel refinement.
    Refine,
    /// Stage II tiling search.
    Tune,
    /// A baseline method (best-of-N, coder + judge).
    Method,
}

impl Phase {
    /// The budget this phase spends.
    pub fn stage(self) -> Stage {
        match self {
            Phase::Rewind => Stage::Rewind,
            _ => Stage::Online,
        }
    }

    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Rewind => "rewind",
            Phase::Baseline => "baseline",
            Phase::Refine => "stage1",
            Phase::Tune => "stage2",
            Phase::Method => "method",
        }
    }
}

/// What an attempt was, in words (for the log, reports and tests).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Action {
    /// Who proposed it (`builtin`, `llm`, `random`, ...).
    pub proposer: String,
    /// The motif it adds or removes, if any.
    pub motif: Option<String>,
    /// One line: what changed (`remove double_buffer at op_kernel/x.cpp:12`,
    /// `TILE_BYTES=32768 BUFFER_NUM=2`).
    pub summary: String,
    /// Bank entries that guided it (ids), if any.
    pub entries: Vec<i64>,
}

/// Why a proposal holds no candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoCandidate {
    /// In words (fed back to the proposer).
    pub reason: String,
    /// Its edits tried to write outside `op_kernel/` and `op_host/` of the
    /// candidate (op.toml, a golden, a path with `..`): refused, never
    /// charged.
    pub outside: bool,
}

impl NoCandidate {
    /// A proposal with no applicable edit (charged like a compile error).
    pub fn no_edit(reason: impl Into<String>) -> NoCandidate {
        NoCandidate {
            reason: reason.into(),
            outside: false,
        }
    }
}

impl std::fmt::Display for NoCandidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// One attempt in the evaluation log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    /// Operator.
    pub op: String,
    /// The loop.
    pub phase: Phase,
    /// Budget index charged; None when the verdict came from the store
    /// (an identical candidate judged before) or nothing was charged.
    pub budget_index: Option<u32>,
    /// Evaluations of this operator charged so far, this one included.
    pub spent: u32,
    /// What was tried.
    pub action: Action,
    /// `correct`, `compile_error`, `incorrect`, `no_edit`, ...
    pub verdict: String,
    /// Median latency when correct.
    pub latency_us: Option<f64>,
    /// Whether the loop took it as its new incumbent (or, in Rewind, kept
    /// the removal).
    pub accepted: bool,
    /// Why it was accepted or not.
    pub reason: String,
    /// The candidate's source hash (empty when there was no candidate).
    pub source_hash: String,
}

/// A judged candidate.
#[derive(Debug, Clone)]
pub struct Trial {
    /// Its sources.
    pub sources: Sources,
    /// The harness's result.
    pub evaluated: Evaluated,
    /// The package folder it was judged from.
    pub dir: PathBuf,
}

impl Trial {
    /// The verdict.
    pub fn verdict(&self) -> &Verdict {
        &self.evaluated.verdict
    }
    /// Correct?
    pub fn is_correct(&self) -> bool {
        self.evaluated.verdict.is_success()
    }
    /// Latency samples (empty unless correct).
    pub fn samples(&self) -> &[f64] {
        match &self.evaluated.verdict {
            Verdict::Correct { samples_us, .. } => samples_us,
            _ => &[],
        }
    }
    /// Median latency, when correct.
    pub fn latency_us(&self) -> Option<f64> {
        self.evaluated.verdict.latency().map(|l| l.median_us)
    }
    /// The profile, when correct.
    pub fn profile(&self) -> Option<&ascendopt_device::Profile> {
        self.evaluated.verdict.profile()
    }
}

/// One operator's evaluations within a run.
pub struct OpSession<'a> {
    ctx: &'a RunContext<'a>,
    ledger: Ledger<'a>,
    base: OpPackage,
    /// The base package's files, in memory: every candidate is these with
    /// its sources written over them.
    base_files: Candidate,
    log: Vec<LogEntry>,
    /// The fresh shapes accepted candidates are held to (those the input
    /// passes; `ascendopt_harness::fresh`), found on the first acceptance.
    fresh: std::sync::OnceLock<Vec<ascendopt_op::spec::Case>>,
}

impl<'a> OpSession<'a> {
    /// Opens the operator's ledger (registering it in the run) with these
    /// budgets.
    pub fn open(
        ctx: &'a RunContext<'a>,
        base: &OpPackage,
        budgets: BudgetConfig,
    ) -> Result<OpSession<'a>, AgentError> {
        let level = base.spec.level.to_string();
        let ledger = Ledger::open(ctx.store, ctx.run, base.name(), &level, budgets)?;
        // The operator as given is the user's (or the search's starting
        // point): what its sources already do is not held against it or
        // its candidates; what a candidate adds is.
        ascendopt_harness::static_check::register_input(ctx.device, base).map_err(|e| {
            AgentError::Package {
                dir: base.dir.clone(),
                source: e.into(),
            }
        })?;
        let base_files = Candidate::read(base).map_err(PipelineError::from)?;
        Ok(OpSession {
            ctx,
            ledger,
            base: base.clone(),
            base_files,
            log: Vec::new(),
            fresh: std::sync::OnceLock::new(),
        })
    }

    /// The run context.
    pub fn context(&self) -> &RunContext<'a> {
        self.ctx
    }

    /// The operator's package as given.
    pub fn base(&self) -> &OpPackage {
        &self.base
    }

    /// The operator's name.
    pub fn op(&self) -> &str {
        self.base.name()
    }

    /// The evaluation log so far.
    pub fn log(&self) -> &[LogEntry] {
        &self.log
    }

    /// Marks the last log entry accepted (or not) with a reason.
    pub fn settle_last(&mut self, accepted: bool, reason: impl Into<String>) {
        if let Some(last) = self.log.last_mut() {
            last.accepted = accepted;
            last.reason = reason.into();
        }
    }

    /// Marks log entry `index` accepted (or not) with a reason (an attempt
    /// settled after later entries were logged, e.g. Rewind's confirmation
    /// re-measurements); out of range does nothing.
    pub fn settle_at(&mut self, index: usize, accepted: bool, reason: impl Into<String>) {
        if let Some(entry) = self.log.get_mut(index) {
            entry.accepted = accepted;
            entry.reason = reason.into();
        }
    }

    /// Evaluations left in `stage`.
    pub fn remaining(&self, stage: Stage) -> u32 {
        self.ledger.remaining(stage).unwrap_or(0)
    }

    /// Evaluations charged in `stage`.
    pub fn spent(&self, stage: Stage) -> u32 {
        self.ledger.spent(stage).unwrap_or(0)
    }

    /// Whether these exact sources were already judged in this run (for
    /// this operator): proposing them again would be free but useless.
    pub fn seen(&self, sources: &Sources) -> Result<bool, AgentError> {
        let hash = self.candidate(sources)?.hash();
        Ok(self
            .ctx
            .store
            .find_by_source(self.ctx.run, self.op(), &hash)?
            .is_some())
    }

    /// The candidate of `sources`: the base package's files with `sources`
    /// written over them, in memory.
    pub fn candidate(&self, sources: &Sources) -> Result<Candidate, AgentError> {
        for (rel, _) in sources.files() {
            // `Sources` holds confined paths only; checked again here,
            // where they become a package's files.
            ascendopt_llm::edits::confined_path(rel).map_err(|e| AgentError::Package {
                dir: self.base.dir.clone(),
                source: e.into(),
            })?;
        }
        Ok(self
            .base_files
            .with_sources(sources.files())
            .map_err(PipelineError::from)?)
    }

    /// Writes `sources` as a package folder (the base package's other
    /// files beside them) and returns the folder.
    pub fn materialise(&self, sources: &Sources) -> Result<PathBuf, AgentError> {
        self.write(&self.candidate(sources)?)
    }

    /// Writes `candidate` for the compiler, once: `<workdir>/<op>/<hash>`.
    fn write(&self, candidate: &Candidate) -> Result<PathBuf, AgentError> {
        let hash = candidate.hash();
        let dir = self.ctx.workdir.join(self.op()).join(&hash.as_str()[..16]);
        if !dir.join("op.toml").is_file() {
            let staging = dir.with_extension("partial");
            let _ = std::fs::remove_dir_all(&staging);
            candidate.write(&staging).map_err(PipelineError::from)?;
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::rename(&staging, &dir).map_err(|e| io(&dir, e))?;
        }
        Ok(dir)
    }

    /// Judges `sources` in `phase`, charging the budget unless an identical
    /// candidate was judged before, and logs the attempt (not yet accepted).
    pub fn evaluate(
        &mut self,
        phase: Phase,
        sources: &Sources,
        action: Action,
    ) -> Result<Trial, AgentError> {
        let candidate = self.candidate(sources)?;
        let dir = self.write(&candidate)?;
        let package = load(&dir)?;
        let evaluated = pipeline::evaluate_candidate(
            self.ctx.device,
            self.ctx.store,
            &mut self.ledger,
            self.ctx.run,
            phase.stage(),
            &package,
            &candidate,
            &self.ctx.pipeline,
        )?;
        let spent = self.spent(Stage::Rewind) + self.spent(Stage::Online);
        self.log.push(LogEntry {
            op: self.op().to_string(),
            phase,
            budget_index: evaluated.budget_index,
            spent,
            action,
            verdict: evaluated.verdict.kind().to_string(),
            latency_us: evaluated.verdict.latency().map(|l| l.median_us),
            accepted: false,
            reason: String::new(),
            source_hash: evaluated.source_hash.as_str().to_string(),
        });
        Ok(Trial {
            sources: sources.clone(),
            evaluated,
            dir,
        })
    }

    /// Measures an already judged candidate again on fresh inputs and
    /// fresh noise, charging one evaluation (Stage II re-measures its best
    /// before declaring it).
    pub fn remeasure(
        &mut self,
        phase: Phase,
        trial: &Trial,
        action: Action,
    ) -> Result<Trial, AgentError> {
        let package = load(&trial.dir)?;
        let ticket = self.ledger.try_spend(phase.stage())?;
        let index = ticket.index();
        let seed = pipeline::evaluation_seed(
            self.ctx.pipeline.seed ^ 0x7265_6d65_6173,
            self.op(),
            phase.stage(),
            index,
        );
        let (verdict, timings) =
            pipeline::evaluate_package(self.ctx.device, &package, seed, &self.ctx.pipeline)?;
        let hash = trial.evaluated.source_hash.clone();
        let recorded = self.ledger.record(
            ticket,
            Charge {
                source_hash: &hash,
                verdict: &verdict,
                seed,
                timings,
                // A re-measurement: the launch was recorded with the
                // candidate's first evaluation.
                launch: None,
            },
        )?;
        let evaluated = Evaluated {
            verdict: recorded.evaluation.verdict,
            source_hash: hash,
            budget_index: Some(index),
            seed,
        };
        let spent = self.spent(Stage::Rewind) + self.spent(Stage::Online);
        self.log.push(LogEntry {
            op: self.op().to_string(),
            phase,
            budget_index: Some(index),
            spent,
            action,
            verdict: evaluated.verdict.kind().to_string(),
            latency_us: evaluated.verdict.latency().map(|l| l.median_us),
            accepted: false,
            reason: String::new(),
            source_hash: evaluated.source_hash.as_str().to_string(),
        });
        Ok(Trial {
            sources: trial.sources.clone(),
            evaluated,
            dir: trial.dir.clone(),
        })
    }

    /// [`OpSession::remeasure`], except that when this run already holds a
    /// re-measurement of the same candidate (a second evaluation of its
    /// sources: a resumed run replaying), that one is returned and logged
    /// without charge.
    pub fn remeasure_or_replay(
        &mut self,
        phase: Phase,
        trial: &Trial,
        action: Action,
    ) -> Result<Trial, AgentError> {
        let hash = &trial.evaluated.source_hash;
        let earlier: Vec<_> = self
            .ctx
            .store
            .evaluations(self.ctx.run, self.op())?
            .into_iter()
            .filter(|e| &e.source_hash == hash)
            .collect();
        let Some(last) = earlier.last().filter(|_| earlier.len() >= 2) else {
            return self.remeasure(phase, trial, action);
        };
        let evaluated = Evaluated {
            verdict: last.verdict.clone(),
            source_hash: hash.clone(),
            budget_index: None,
            seed: last.seed,
        };
        let spent = self.spent(Stage::Rewind) + self.spent(Stage::Online);
        self.log.push(LogEntry {
            op: self.op().to_string(),
            phase,
            budget_index: None,
            spent,
            action,
            verdict: evaluated.verdict.kind().to_string(),
            latency_us: evaluated.verdict.latency().map(|l| l.median_us),
            accepted: false,
            reason: String::new(),
            source_hash: hash.as_str().to_string(),
        });
        Ok(Trial {
            sources: trial.sources.clone(),
            evaluated,
            dir: trial.dir.clone(),
        })
    }

    /// Charges one evaluation for a proposal that yielded no candidate (an
    /// LLM response with no applicable edit counts like a compile error),
    /// recorded as a static rejection with the reason. A proposal refused
    /// because its edits tried to write outside the candidate's sources
    /// ([`NoCandidate::outside`]) is logged with the reason and charged
    /// nothing: nothing was evaluated.
    pub fn charge_failed_proposal(
        &mut self,
        phase: Phase,
        action: Action,
        refused: &NoCandidate,
    ) -> Result<(), AgentError> {
        let reason = refused.reason.as_str();
        if refused.outside {
            let spent = self.spent(Stage::Rewind) + self.spent(Stage::Online);
            self.log.push(LogEntry {
                op: self.op().to_string(),
                phase,
                budget_index: None,
                spent,
                action,
                verdict: "rejected_edit".into(),
                latency_us: None,
                accepted: false,
                reason: format!("edit refused, not evaluated: {reason}"),
                source_hash: String::new(),
            });
            return Ok(());
        }
        let ticket = self.ledger.try_spend(phase.stage())?;
        let index = ticket.index();
        let verdict = Verdict::RejectedStatic {
            reason: format!("no applicable edit: {reason}"),
        };
        let text = format!("//== failed proposal {index} ==\n{reason}\n");
        let hash = self.ctx.store.put_source(&text)?;
        self.ledger.record(
            ticket,
            Charge {
                source_hash: &hash,
                verdict: &verdict,
                seed: 0,
                timings: StageTimings {
                    compile_ms: 0,
                    correctness_ms: 0,
                    profile_ms: 0,
                },
                launch: None,
            },
        )?;
        let spent = self.spent(Stage::Rewind) + self.spent(Stage::Online);
        self.log.push(LogEntry {
            op: self.op().to_string(),
            phase,
            budget_index: Some(index),
            spent,
            action,
            verdict: "no_edit".into(),
            latency_us: None,
            accepted: false,
            reason: reason.to_string(),
            source_hash: hash.as_str().to_string(),
        });
        Ok(())
    }

    /// The harness's rule: is `candidate` faster than `incumbent` beyond
    /// noise? A candidate that is not correct never is.
    pub fn faster(&self, candidate: &Trial, incumbent: &Trial) -> Decision {
        compare::faster(candidate.samples(), incumbent.samples(), &self.ctx.compare)
    }

    /// The final judgement of a candidate that would replace `incumbent`:
    /// [`OpSession::faster`], and right on fresh shapes near the op.toml's
    /// (the ones the operator as given passes: other lengths, tails, row
    /// counts; `ascendopt_harness::fresh`), so that a kernel right only on
    /// the listed shapes is not accepted. The fresh cases cost no budget.
    pub fn accept(&self, candidate: &Trial, incumbent: &Trial) -> Decision {
        let mut decision = self.faster(candidate, incumbent);
        if decision.faster {
            if let Err(reason) = self.fresh_shapes(candidate) {
                decision.faster = false;
                decision.reason = format!("{}, but {reason}", decision.reason);
            }
        }
        decision
    }

    /// Err when `candidate` fails one of the fresh cases.
    fn fresh_shapes(&self, candidate: &Trial) -> Result<(), FreshRejection> {
        let device = self.ctx.device;
        let seed = self.ctx.pipeline.seed ^ 0x6672_6573_6873;
        let cases = self.fresh.get_or_init(|| match device.build(&self.base) {
            Ok(artifact) => fresh::validated(device, &self.base, &artifact, seed),
            Err(_) => Vec::new(),
        });
        if cases.is_empty() {
            return Ok(());
        }
        let package = load(&candidate.dir)?;
        let artifact = device.build(&package)?;
        Ok(fresh::check(device, &package, &artifact, cases, seed)?)
    }
}

/// Why a faster candidate is not accepted on the fresh shapes.
#[derive(Debug, thiserror::Error)]
enum FreshRejection {
    /// Its folder does not load.
    #[error(transparent)]
    Load(#[from] AgentError),
    /// It does not build.
    #[error(transparent)]
    Build(#[from] ascendopt_device::DeviceError),
    /// It is wrong on a fresh case.
    #[error(transparent)]
    Wrong(#[from] fresh::FreshFailure),
}

fn load(dir: &Path) -> Result<OpPackage, AgentError> {
    OpPackage::load(dir, &ascendopt_golden::BUILTINS).map_err(|e| AgentError::Package {
        dir: dir.to_path_buf(),
        source: e.into(),
    })
}

fn io(path: &Path, e: std::io::Error) -> AgentError {
    AgentError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}
