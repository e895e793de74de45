//! One evaluation of a candidate operator, as the agent's budget counts it:
//! static checks → build → hardened correctness over every case → profile →
//! re-check on fresh inputs, ending in one [`Verdict`] recorded in the run
//! store and charged to the ledger.
//!
//! Hardened correctness (DESIGN.md "Correctness"):
//! - fresh inputs every evaluation, from a seed derived from the run, the
//!   operator, the stage and the budget index (recorded with the verdict);
//! - outputs poisoned before launch and every element compared;
//! - the candidate runs twice on the same inputs with different on-chip
//!   garbage and must agree bit for bit (reads of uninitialised memory) —
//!   on every case but the largest, which is run once (it dominates the
//!   evaluation's time);
//! - hazards in the trace (races between pipes, flag misuse) fail it;
//! - after profiling, a second check on new inputs (of the largest case
//!   other than the benchmark one).
//!
//! Profiling: the benchmark case is the one with the most input elements;
//! latency samples are repeated measurements of it (on the simulator:
//! the timing model with seeded measurement noise). A noise-free latency
//! below the hardware's limit fails the evaluation (`physics.rs`).

use crate::candidate::{Candidate, CandidateError};
use crate::compare::CompareConfig;
use crate::eval::{
    job_attrs, prepare_and_run, prepare_case, profile_request, PrepareError, Prepared,
};
use crate::ledger::{Charge, Ledger, LedgerError};
use crate::static_check;
use crate::store::{RunId, RunStore, SourceHash, Stage, StageTimings};
use crate::verdict::{
    BadElement, CorrectnessCheck, LatencyStats, Mismatch, RuntimeErrorKind, Verdict,
};
use ascendopt_device::{Artifact, Device, DeviceError, RunOutcome, RunRequest, RunResult};
use ascendopt_op::compare::compare;
use ascendopt_op::golden::output_shapes;
use ascendopt_op::layout::ArgSlot;
use ascendopt_op::package::OpPackage;
use ascendopt_op::spec::Case;
use ascendopt_op::Tensor;
use sha2::{Digest, Sha256};
use std::time::Instant;

/// How evaluations are carried out.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineConfig {
    /// Latency samples per profiled candidate.
    pub repeats: usize,
    /// No measurement noise (tests).
    pub deterministic: bool,
    /// Base seed of the run (inputs are derived from it).
    pub seed: u64,
}

impl PipelineConfig {
    /// Repeats from the comparison rule's configuration.
    pub fn from_compare(cfg: &CompareConfig, seed: u64) -> PipelineConfig {
        PipelineConfig {
            repeats: cfg.repeats.max(1),
            deterministic: false,
            seed,
        }
    }
}

/// Why an evaluation could not even be attempted (never the candidate's
/// fault: the candidate's failures are verdicts).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The budget is spent.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The candidate's files could not be read.
    #[error("cannot read the candidate: {0}")]
    Read(#[from] CandidateError),
    /// The candidate's files could not be read for the static check.
    #[error("cannot check the candidate: {0}")]
    StaticCheck(#[from] static_check::StaticCheckError),
    /// The device cannot build anything (no compiler, cache unwritable):
    /// its [`DeviceError::Setup`].
    #[error("device setup: {0}")]
    Setup(DeviceError),
    /// The device measured a finished run but returned no latency sample.
    #[error("device setup: the device returned no latency samples")]
    NoSamples,
    /// A job of a batch evaluation ended without a result (a worker
    /// thread of the batch stopped).
    #[error("a batch job produced no result")]
    LostJob,
    /// The device could not measure a run that finished (no latency
    /// samples, the timing model failed).
    #[error("device setup: {0}")]
    Measure(#[from] ascendopt_device::QueryError),
}

/// An evaluation and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    /// The verdict.
    pub verdict: Verdict,
    /// The candidate's source hash.
    pub source_hash: SourceHash,
    /// Budget index charged; None when an identical candidate had been
    /// evaluated before (nothing charged).
    pub budget_index: Option<u32>,
    /// Seed of the inputs.
    pub seed: u64,
}

/// The identity of a candidate, the unit of the run store's `sources`
/// table: [`Candidate::identity`] of the package's folder as it is on disk.
pub fn candidate_source(package: &OpPackage) -> Result<String, PipelineError> {
    Ok(Candidate::read(package)?.identity())
}

/// The input seed of one evaluation.
pub fn evaluation_seed(base: u64, op: &str, stage: Stage, index: u32) -> u64 {
    let mut h = Sha256::new();
    h.update(base.to_le_bytes());
    h.update(op.as_bytes());
    h.update(stage.as_str().as_bytes());
    h.update(index.to_le_bytes());
    let d = h.finalize();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// The case re-checked after profiling: the largest case other than the
/// benchmark case, or the benchmark case when it is the only one.
pub fn recheck_case<'p>(package: &'p OpPackage, bench: Option<&str>) -> Option<&'p Case> {
    package
        .cases()
        .iter()
        .filter(|c| Some(c.name.as_str()) != bench)
        .max_by_key(|c| c.input_elements())
        .or_else(|| bench.and_then(|n| package.case(n)))
}

/// The case profiled: the one with the most input elements.
pub fn bench_case(package: &OpPackage) -> Option<&Case> {
    package.cases().iter().max_by_key(|c| c.input_elements())
}

fn runtime_verdict(outcome: &RunOutcome) -> Verdict {
    match outcome {
        RunOutcome::Finished(_) => Verdict::RuntimeError {
            kind: RuntimeErrorKind::Fault,
            message: "finished".into(),
            location: None,
        },
        RunOutcome::TimedOut { after_ms } => Verdict::Timeout {
            after_ms: *after_ms,
        },
        RunOutcome::Fault { message, loc, .. } => {
            let kind = if message.contains("overflow") {
                RuntimeErrorKind::UbOverflow
            } else if message.contains("GM bytes") || message.contains("beyond its") {
                RuntimeErrorKind::OutOfBounds
            } else if message.contains("deadlock") {
                RuntimeErrorKind::Deadlock
            } else {
                RuntimeErrorKind::Fault
            };
            Verdict::RuntimeError {
                kind,
                message: outcome.summary(),
                location: loc.as_ref().map(|l| format!("{}:{}", l.file, l.line)),
            }
        }
        RunOutcome::TilingFailed { .. } | RunOutcome::DeviceFailed { .. } => {
            Verdict::RuntimeError {
                kind: RuntimeErrorKind::Fault,
                message: outcome.summary(),
                location: None,
            }
        }
        RunOutcome::Crashed { .. } | RunOutcome::OutOfMemory { .. } => Verdict::RuntimeError {
            kind: RuntimeErrorKind::Crash,
            message: outcome.summary(),
            location: None,
        },
    }
}

fn run_case(
    device: &dyn Device,
    artifact: &Artifact,
    prepared: &mut Prepared,
    garbage_seed: u64,
    keep_trace: bool,
) -> Result<RunResult, Verdict> {
    prepared.request.seed = garbage_seed;
    prepared.request.keep_trace = keep_trace;
    finished(device.run(artifact, &prepared.request))
}

/// A finished launch's result, or the verdict of one that failed.
fn finished(outcome: RunOutcome) -> Result<RunResult, Verdict> {
    match outcome {
        RunOutcome::Finished(r) => Ok(r),
        other => Err(runtime_verdict(&other)),
    }
}

/// The verdict of a golden that failed on a case.
fn golden_failed(what: &str, message: &str) -> Verdict {
    Verdict::RuntimeError {
        kind: RuntimeErrorKind::Fault,
        message: format!("{what}: golden failed: {message}"),
        location: None,
    }
}

/// The seed of case `index`'s inputs in an evaluation with `seed`.
fn case_seed(seed: u64, index: usize) -> u64 {
    seed.wrapping_add(index as u64 * 0x9e37_79b9)
}

/// Inputs, golden and the first launch of a case (the golden computed
/// alongside the launch): the prepared case and the launch's result, or
/// the failing verdict.
fn first_run(
    device: &dyn Device,
    artifact: &Artifact,
    package: &OpPackage,
    case: &Case,
    seed: u64,
    garbage_seed: u64,
    what: &str,
) -> Result<(Prepared, RunResult), Verdict> {
    let (prepared, outcome) = prepare_and_run(device, artifact, package, case, seed, garbage_seed);
    let prepared = prepared.map_err(|e| golden_failed(what, &e.to_string()))?;
    let outcome = outcome.ok_or_else(|| Verdict::RuntimeError {
        kind: RuntimeErrorKind::Fault,
        message: format!("{what}: not launched"),
        location: None,
    })?;
    Ok((prepared, finished(outcome)?))
}

/// Compares a finished run with the golden; Err is the failing verdict.
fn judge(
    case: &Case,
    prepared: &Prepared,
    result: &RunResult,
    check: CorrectnessCheck,
) -> Result<(), Verdict> {
    if let Some(h) = result.hazards.first() {
        return Err(Verdict::RuntimeError {
            kind: RuntimeErrorKind::Race,
            message: format!("{}: {}", h.kind, h.message),
            location: None,
        });
    }
    for ((expected, actual), out) in prepared
        .expected
        .iter()
        .zip(&result.outputs)
        .zip(&case.outputs)
    {
        if !out.checked {
            continue;
        }
        let report =
            compare(expected, actual, out.tolerance).map_err(|e| Verdict::RuntimeError {
                kind: RuntimeErrorKind::Fault,
                message: e.to_string(),
                location: None,
            })?;
        if !report.passed() {
            return Err(Verdict::Incorrect {
                details: Box::new(Mismatch {
                    check,
                    case: case.name.clone(),
                    output: out.name.clone(),
                    total: report.total as u64,
                    mismatches: report.mismatches as u64,
                    max_abs_err: report.max_abs_err,
                    max_rel_err: report.max_rel_err,
                    first_bad: report.first_bad.map(|b| BadElement {
                        index: b.index as u64,
                        expected: b.expected.to_string(),
                        actual: b.actual.to_string(),
                    }),
                }),
            });
        }
    }
    Ok(())
}

/// A candidate after its static checks and build: the verdict of one that
/// went no further, or its artifact; with the phase timings so far.
enum Built {
    /// Rejected by the static checks or by the compiler.
    Done(Verdict, StageTimings),
    /// Built, ready to launch.
    Ready(Artifact, StageTimings),
}

/// Static checks, then the build.
fn check_and_build(device: &dyn Device, package: &OpPackage) -> Result<Built, PipelineError> {
    let mut timings = StageTimings {
        compile_ms: 0,
        correctness_ms: 0,
        profile_ms: 0,
    };
    let findings = static_check::check_package(device, package)?;
    if let Some(reason) = static_check::rejection_reason_for(package.name(), &findings) {
        return Ok(Built::Done(Verdict::RejectedStatic { reason }, timings));
    }
    let t = Instant::now();
    let built = device.build(package);
    timings.compile_ms = t.elapsed().as_millis() as u64;
    match built {
        Ok(a) => {
            // What the libraries ask of the system, whatever the sources'
            // spelling.
            let imports = static_check::check_imports(package, &a);
            if let Some(reason) = static_check::rejection_reason_for(package.name(), &imports) {
                return Ok(Built::Done(Verdict::RejectedStatic { reason }, timings));
            }
            Ok(Built::Ready(a, timings))
        }
        Err(DeviceError::Compile {
            summary,
            diagnostics,
            ..
        }) => Ok(Built::Done(
            Verdict::CompileError {
                diagnostics: format!("{summary}\n{diagnostics}"),
            },
            timings,
        )),
        Err(e @ DeviceError::Setup { .. }) => Err(PipelineError::Setup(e)),
    }
}

/// The benchmark (largest) case's fresh inputs and golden, computed on
/// another thread while the small cases run (and the candidate compiles,
/// when it is spawned first); a candidate that fails first leaves the
/// thread to finish alone.
type Prefetch = std::thread::JoinHandle<Result<Prepared, PrepareError>>;

fn prefetch_bench_case(package: &OpPackage, seed: u64) -> Option<Prefetch> {
    let bench = bench_case(package).map(|c| c.name.clone());
    package
        .cases()
        .iter()
        .position(|c| Some(&c.name) == bench.as_ref())
        .map(|i| {
            let (pkg, case) = (package.clone(), package.cases()[i].clone());
            let seed = case_seed(seed, i);
            std::thread::spawn(move || prepare_case(&pkg, &case, seed))
        })
}

/// A candidate's launch key: its kernel library (content-addressed by the
/// build) and entry, and for every case the case itself and the tiling its
/// host code decides there (block dim, tiling key, tiling bytes,
/// workspace), hashed. Two candidates with the same key run the same
/// kernel with the same tiling on the same shapes, so on the same inputs
/// and garbage they give the same outputs and the same timeline (the
/// simulator is deterministic, and a kernel whose results depend on timing
/// fails the hazard check): the second is answered with the first's
/// verdict without charge, as an identical source is. Stage II meets this
/// all the time: knob values the tiling code clamps, overrides or ignores.
///
/// None when the device cannot run a tiling alone, when a case's output
/// shapes are known only from its golden (script goldens), or when a
/// tiling fails (the evaluation then fails and says why).
pub fn launch_key(device: &dyn Device, artifact: &Artifact, package: &OpPackage) -> Option<String> {
    let candidate = Candidate::read(package).ok()?;
    launch_key_of(device, artifact, package, &candidate)
}

/// [`launch_key`] of `candidate`, the files `package` was loaded from.
pub fn launch_key_of(
    device: &dyn Device,
    artifact: &Artifact,
    package: &OpPackage,
    candidate: &Candidate,
) -> Option<String> {
    let kernel = artifact
        .kernel_lib
        .file_name()?
        .to_string_lossy()
        .into_owned();
    let mut h = KeyHasher::new(b"ascendopt launch 3");
    // The golden and every other file of the package: a launch judged with
    // another golden is another evaluation.
    h.text(&candidate.other_files_digest());
    h.text(&kernel);
    h.text(&artifact.kernel_name);
    // Every kernel variant (the first is `kernel_lib`).
    h.count(artifact.kernel_variants.len());
    for variant in artifact.kernel_variants.iter().skip(1) {
        h.bytes(variant.lib.file_name()?.as_encoded_bytes());
    }
    let cases = package.cases();
    h.count(cases.len());
    for case in cases {
        let request = tiling_request(package, case)?;
        let tiling = device.tiling(artifact, &request)?.ok()?;
        h.case(case);
        h.u64(u64::from(tiling.block_dim));
        h.u64(tiling.tiling_key);
        h.u64(tiling.workspace);
        h.bytes(&tiling.data);
    }
    Some(h.finish())
}

/// The launch key's hash: typed fields, each length-prefixed (strings,
/// byte strings, lists) or fixed-size (numbers, as little-endian), so no
/// two different field sequences hash alike.
struct KeyHasher(Sha256);

impl KeyHasher {
    fn new(domain: &[u8]) -> KeyHasher {
        let mut h = KeyHasher(Sha256::new());
        h.bytes(domain);
        h
    }
    fn u64(&mut self, v: u64) {
        self.0.update(v.to_le_bytes());
    }
    fn count(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn opt(&mut self, v: Option<usize>) {
        match v {
            Some(v) => {
                self.u64(1);
                self.count(v);
            }
            None => self.u64(0),
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        self.count(b.len());
        self.0.update(b);
    }
    fn text(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    /// Everything of a case that a launch or its judgement depends on. The
    /// structs are destructured whole, so a field added to a case is a
    /// compile error here until the key covers it.
    fn case(&mut self, case: &Case) {
        use ascendopt_op::layout::ArgLayout;
        use ascendopt_op::spec::{AttrValue, CaseInput, CaseOutput, Dist, Sign, Tolerance};
        let Case {
            name,
            inputs,
            outputs,
            attrs,
            omitted,
            layout,
        } = case;
        self.text(name);
        self.count(inputs.len());
        for input in inputs {
            let CaseInput {
                name,
                list_index,
                dtype,
                shape,
                dist,
                specials,
            } = input;
            self.text(name);
            self.opt(*list_index);
            self.text(dtype.name());
            self.count(shape.len());
            for &d in shape {
                self.count(d);
            }
            match dist {
                Dist::Mixed { scale, sign } => {
                    self.text("mixed");
                    self.f64(*scale);
                    self.text(match sign {
                        Sign::Any => "any",
                        Sign::Positive => "positive",
                        Sign::Negative => "negative",
                    });
                }
                Dist::Uniform { low, high } => {
                    self.text("uniform");
                    self.f64(*low);
                    self.f64(*high);
                }
                Dist::Normal { mean, scale } => {
                    self.text("normal");
                    self.f64(*mean);
                    self.f64(*scale);
                }
                Dist::Int { low, high } => {
                    self.text("int");
                    self.u64(*low as u64);
                    self.u64(*high as u64);
                }
                Dist::File { path, tensor } => {
                    self.text("file");
                    self.text(path);
                    self.text(tensor.dtype.name());
                    self.count(tensor.shape.len());
                    for &d in &tensor.shape {
                        self.count(d);
                    }
                    self.bytes(&tensor.data);
                }
            }
            self.count(specials.len());
            for s in specials {
                self.text(s.name());
            }
        }
        self.count(outputs.len());
        for output in outputs {
            let CaseOutput {
                name,
                list_index,
                dtype,
                tolerance:
                    Tolerance {
                        atol,
                        rtol,
                        max_mismatch_ratio,
                    },
                checked,
                inplace_of,
            } = output;
            self.text(name);
            self.opt(*list_index);
            self.text(dtype.name());
            self.f64(*atol);
            self.f64(*rtol);
            self.f64(*max_mismatch_ratio);
            self.u64(u64::from(*checked));
            self.opt(*inplace_of);
        }
        self.count(attrs.len());
        for (name, value) in attrs {
            self.text(name);
            match value {
                AttrValue::Int(v) => {
                    self.text("int");
                    self.u64(*v as u64);
                }
                AttrValue::Float(v) => {
                    self.text("float");
                    self.f64(*v);
                }
                AttrValue::Bool(v) => {
                    self.text("bool");
                    self.u64(u64::from(*v));
                }
                AttrValue::Str(v) => {
                    self.text("str");
                    self.text(v);
                }
                AttrValue::ListInt(v) => {
                    self.text("list_int");
                    self.count(v.len());
                    for x in v {
                        self.u64(*x as u64);
                    }
                }
                AttrValue::ListFloat(v) => {
                    self.text("list_float");
                    self.count(v.len());
                    for x in v {
                        self.f64(*x);
                    }
                }
            }
        }
        self.count(omitted.len());
        for name in omitted {
            self.text(name);
        }
        let ArgLayout {
            inputs,
            outputs,
            in_place,
            host_values,
        } = layout;
        for slots in [inputs, outputs] {
            self.count(slots.len());
            for slot in slots {
                match slot {
                    ArgSlot::One(i) => {
                        self.text("one");
                        self.count(*i);
                    }
                    ArgSlot::List(list) => {
                        self.text("list");
                        self.count(list.len());
                        for i in list {
                            self.count(*i);
                        }
                    }
                    ArgSlot::Absent => self.text("absent"),
                }
            }
        }
        self.count(in_place.len());
        for (o, i) in in_place {
            self.count(*o);
            self.count(*i);
        }
        self.count(host_values.len());
        for i in host_values {
            self.count(*i);
        }
    }
    fn finish(self) -> String {
        format!("{:x}", self.0.finalize())
    }
}

/// A launch request of `case` with shapes and no tensor contents (all a
/// tiling sees), or None when its output shapes are known only from its
/// golden (a script golden).
pub fn tiling_request(package: &OpPackage, case: &Case) -> Option<RunRequest> {
    let shapes = match output_shapes(&package.spec, case) {
        Ok(Some(shapes)) if shapes.len() == case.outputs.len() => shapes,
        _ => return None,
    };
    let empty = |dtype, shape| Tensor {
        dtype,
        shape,
        data: Vec::new(),
    };
    Some(RunRequest {
        inputs: case
            .inputs
            .iter()
            .map(|i| empty(i.dtype, i.shape.clone()))
            .collect(),
        outputs: case
            .outputs
            .iter()
            .zip(shapes)
            .map(|(o, shape)| empty(o.dtype, shape))
            .collect(),
        attrs: job_attrs(case),
        seed: 0,
        keep_trace: false,
        layout: crate::eval::case_layout(case),
    })
}

/// Evaluates a built (or failing) candidate without touching the store:
/// the verdict and the phase timings.
pub fn evaluate_package(
    device: &dyn Device,
    package: &OpPackage,
    seed: u64,
    cfg: &PipelineConfig,
) -> Result<(Verdict, StageTimings), PipelineError> {
    // The benchmark case's inputs and golden are computed while the
    // candidate compiles.
    let prefetch = prefetch_bench_case(package, seed);
    match check_and_build(device, package)? {
        Built::Done(verdict, timings) => Ok((verdict, timings)),
        Built::Ready(artifact, timings) => {
            launch_and_judge(device, package, &artifact, prefetch, seed, cfg, timings)
        }
    }
}

/// Correctness over every case, the profile of the benchmark case and the
/// re-check, of a built candidate.
fn launch_and_judge(
    device: &dyn Device,
    package: &OpPackage,
    artifact: &Artifact,
    mut prefetch: Option<Prefetch>,
    seed: u64,
    cfg: &PipelineConfig,
    mut timings: StageTimings,
) -> Result<(Verdict, StageTimings), PipelineError> {
    let bench = bench_case(package).map(|c| c.name.clone());
    // Correctness over every case, each run twice with different garbage.
    let t = Instant::now();
    let mut bench_run: Option<(Prepared, RunResult)> = None;
    for (i, case) in package.cases().iter().enumerate() {
        let case_seed = case_seed(seed, i);
        let what = format!("case {}", case.name);
        let prefetched = if Some(&case.name) == bench.as_ref() {
            prefetch.take()
        } else {
            None
        };
        let launched = match prefetched {
            Some(handle) => match handle.join() {
                Ok(Ok(mut prepared)) => {
                    // The benchmark case's run is profiled: its trace is kept.
                    run_case(device, artifact, &mut prepared, case_seed ^ 0xa5a5, true)
                        .map(|first| (prepared, first))
                }
                Ok(Err(e)) => Err(golden_failed(&what, &e.to_string())),
                Err(_) => Err(golden_failed(&what, "the golden panicked")),
            },
            None => first_run(
                device,
                artifact,
                package,
                case,
                case_seed,
                case_seed ^ 0xa5a5,
                &what,
            ),
        };
        let (mut prepared, first) = match launched {
            Ok(r) => r,
            Err(v) => {
                timings.correctness_ms = t.elapsed().as_millis() as u64;
                return Ok((v, timings));
            }
        };
        if let Err(v) = judge(case, &prepared, &first, CorrectnessCheck::Reference) {
            timings.correctness_ms = t.elapsed().as_millis() as u64;
            return Ok((v, timings));
        }
        // The run-twice check on every case but the benchmark one when
        // there are others (the largest case dominates the evaluation's
        // time; uninitialised reads show on any case).
        let rerun = Some(&case.name) != bench.as_ref() || package.cases().len() == 1;
        if rerun {
            // The second run starts from the other poison: an element no
            // run writes then differs even where the golden equals one.
            let shapes: Vec<Vec<usize>> = prepared
                .request
                .outputs
                .iter()
                .map(|t| t.shape.clone())
                .collect();
            prepared.request.outputs =
                crate::eval::second_initial_outputs(case, &shapes, &prepared.request.inputs);
            let second = match run_case(
                device,
                artifact,
                &mut prepared,
                case_seed ^ 0x5a5a_0000,
                false,
            ) {
                Ok(r) => r,
                Err(v) => {
                    timings.correctness_ms = t.elapsed().as_millis() as u64;
                    return Ok((v, timings));
                }
            };
            if let Some((o, (a, b))) = case
                .outputs
                .iter()
                .zip(first.outputs.iter().zip(&second.outputs))
                .find(|(_, (a, b))| a.data != b.data)
            {
                let index = a
                    .data
                    .iter()
                    .zip(&b.data)
                    .position(|(x, y)| x != y)
                    .unwrap_or(0)
                    / a.dtype.size();
                timings.correctness_ms = t.elapsed().as_millis() as u64;
                return Ok((
                    Verdict::Incorrect {
                        details: Box::new(Mismatch {
                            check: CorrectnessCheck::Rerun,
                            case: case.name.clone(),
                            output: o.name.clone(),
                            total: a.numel() as u64,
                            mismatches: (0..a.numel()).filter(|&k| a.bits(k) != b.bits(k)).count()
                                as u64,
                            max_abs_err: f64::NAN,
                            max_rel_err: f64::NAN,
                            first_bad: Some(BadElement {
                                index: index as u64,
                                expected: format!("{} (first run)", a.get_f64(index)),
                                actual: format!(
                                    "{} (second run: {})",
                                    b.get_f64(index),
                                    crate::eval::rerun_difference(a, b, index)
                                ),
                            }),
                        }),
                    },
                    timings,
                ));
            }
        }
        if Some(&case.name) == bench.as_ref() {
            bench_run = Some((prepared, first));
        }
    }
    timings.correctness_ms = t.elapsed().as_millis() as u64;

    // Profile the benchmark case.
    let t = Instant::now();
    let Some((prepared, result)) = bench_run else {
        return Ok((
            Verdict::RuntimeError {
                kind: RuntimeErrorKind::Fault,
                message: "the operator has no cases".into(),
                location: None,
            },
            timings,
        ));
    };
    let profile = match device.profile(&result, &profile_request(&prepared, seed, true)) {
        Ok(p) => {
            let output_bytes = prepared.expected.iter().map(|t| t.data.len() as u64).sum();
            let unmeasured = device.unmeasured_output_writes(&result, &prepared.request);
            if let Some(message) =
                unmeasured.or_else(|| crate::physics::faster_than_physics(&p, output_bytes))
            {
                timings.profile_ms = t.elapsed().as_millis() as u64;
                return Ok((
                    Verdict::RuntimeError {
                        kind: RuntimeErrorKind::FasterThanHardware,
                        message: format!(
                            "case {}: {message}",
                            prepared_case_name(package, bench.as_deref())
                        ),
                        location: None,
                    },
                    timings,
                ));
            }
            p
        }
        Err(e) => {
            timings.profile_ms = t.elapsed().as_millis() as u64;
            return Ok((
                Verdict::RuntimeError {
                    kind: RuntimeErrorKind::Deadlock,
                    message: format!("profiling failed: {e}"),
                    location: None,
                },
                timings,
            ));
        }
    };
    let seeds: Vec<u64> = (0..cfg.repeats as u64)
        .map(|k| seed ^ (k + 1).wrapping_mul(0x2545_f491_4f6c_dd1d))
        .collect();
    let samples = if cfg.deterministic {
        vec![profile.task_duration_us; cfg.repeats]
    } else {
        // The profile above is the noise-free one the samples are measured
        // around.
        device.latency_samples(&result, &profile, &seeds)?
    };
    timings.profile_ms = t.elapsed().as_millis() as u64;

    // Re-check after profiling on fresh inputs: the largest case other
    // than the benchmark one (the benchmark case itself when it is alone),
    // so that the re-check does not double the evaluation's time.
    let t = Instant::now();
    if let Some(case) = recheck_case(package, bench.as_deref()) {
        let fresh_seed = seed.rotate_left(17) ^ 0x0123_4567_89ab_cdef;
        let (prepared, r) = match first_run(
            device, artifact, package, case, fresh_seed, fresh_seed, "re-check",
        ) {
            Ok(r) => r,
            Err(v) => {
                timings.correctness_ms += t.elapsed().as_millis() as u64;
                return Ok((v, timings));
            }
        };
        if let Err(v) = judge(case, &prepared, &r, CorrectnessCheck::Recheck) {
            timings.correctness_ms += t.elapsed().as_millis() as u64;
            return Ok((v, timings));
        }
    }
    timings.correctness_ms += t.elapsed().as_millis() as u64;

    let latency = LatencyStats::from_samples(&samples).ok_or(PipelineError::NoSamples)?;
    Ok((
        Verdict::Correct {
            latency,
            samples_us: samples,
            profile: Box::new(profile),
        },
        timings,
    ))
}

/// Evaluates a candidate of `op` for `stage`, charging the ledger and
/// recording the verdict; an identical candidate evaluated before in this
/// run (the same sources, or the same launches: [`launch_key`]) is
/// returned from the store without charge.
pub fn evaluate(
    device: &dyn Device,
    store: &RunStore,
    ledger: &mut Ledger<'_>,
    run: RunId,
    stage: Stage,
    package: &OpPackage,
    cfg: &PipelineConfig,
) -> Result<Evaluated, PipelineError> {
    let candidate = Candidate::read(package)?;
    evaluate_candidate(device, store, ledger, run, stage, package, &candidate, cfg)
}

/// [`evaluate`] of `candidate` (held in memory), which `package` was
/// loaded from (written to disk for the compiler).
#[allow(clippy::too_many_arguments)]
pub fn evaluate_candidate(
    device: &dyn Device,
    store: &RunStore,
    ledger: &mut Ledger<'_>,
    run: RunId,
    stage: Stage,
    package: &OpPackage,
    candidate: &Candidate,
    cfg: &PipelineConfig,
) -> Result<Evaluated, PipelineError> {
    let op = package.name().to_string();
    let hash = store.put_source(&candidate.identity())?;
    if let Some(prev) = store.find_by_source(run, &op, &hash)? {
        return Ok(Evaluated {
            verdict: prev.verdict,
            source_hash: hash,
            budget_index: None,
            seed: prev.seed,
        });
    }
    // Built first (not while the benchmark case's inputs are drawn): a
    // candidate whose launches were evaluated before needs nothing else.
    let built = check_and_build(device, package)?;
    let launch = match &built {
        Built::Ready(artifact, _) => launch_key_of(device, artifact, package, candidate),
        Built::Done(..) => None,
    };
    if let Some(key) = &launch {
        if let Some(prev) = store.find_by_launch(run, &op, key)? {
            return Ok(Evaluated {
                verdict: prev.verdict,
                source_hash: hash,
                budget_index: None,
                seed: prev.seed,
            });
        }
    }
    let ticket = ledger.try_spend(stage)?;
    let seed = evaluation_seed(cfg.seed, &op, stage, ticket.index());
    let index = ticket.index();
    let (verdict, timings) = match built {
        Built::Done(verdict, timings) => (verdict, timings),
        Built::Ready(artifact, timings) => {
            let prefetch = prefetch_bench_case(package, seed);
            launch_and_judge(device, package, &artifact, prefetch, seed, cfg, timings)?
        }
    };
    let recorded = ledger.record(
        ticket,
        Charge {
            source_hash: &hash,
            verdict: &verdict,
            seed,
            timings,
            launch: launch.as_deref(),
        },
    )?;
    Ok(Evaluated {
        verdict: recorded.evaluation.verdict,
        source_hash: hash,
        budget_index: Some(index),
        seed,
    })
}

/// The benchmark case's name, for messages.
fn prepared_case_name<'a>(package: &'a OpPackage, bench: Option<&'a str>) -> &'a str {
    bench.unwrap_or_else(|| package.name())
}

/// Evaluates several candidates of one operator on `threads` worker threads
/// (`-j N`), charging and recording them in candidate order, so the store
/// ends the same whatever N is. Identical candidates (same sources as one
/// already stored, or earlier in the batch) are evaluated once; launches
/// are not compared here (a batch holds distinct kernels: `bench-evals`),
/// and its evaluations are stored without a launch key.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_batch(
    device: &dyn Device,
    store: &RunStore,
    ledger: &mut Ledger<'_>,
    run: RunId,
    stage: Stage,
    packages: &[OpPackage],
    cfg: &PipelineConfig,
    threads: usize,
) -> Result<Vec<Evaluated>, PipelineError> {
    // Plan serially: hashes, dedupe, tickets and seeds in candidate order.
    enum Plan {
        Known(Evaluated),
        SameAs(usize),
        Run {
            ticket: crate::ledger::Ticket,
            hash: SourceHash,
            seed: u64,
        },
    }
    let mut plans = Vec::with_capacity(packages.len());
    let mut first_of: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, package) in packages.iter().enumerate() {
        let op = package.name().to_string();
        let hash = store.put_source(&candidate_source(package)?)?;
        if let Some(prev) = store.find_by_source(run, &op, &hash)? {
            plans.push(Plan::Known(Evaluated {
                verdict: prev.verdict,
                source_hash: hash,
                budget_index: None,
                seed: prev.seed,
            }));
            continue;
        }
        if let Some(&j) = first_of.get(hash.as_str()) {
            plans.push(Plan::SameAs(j));
            continue;
        }
        first_of.insert(hash.as_str().to_string(), i);
        let ticket = ledger.try_spend(stage)?;
        let seed = evaluation_seed(cfg.seed, &op, stage, ticket.index());
        plans.push(Plan::Run { ticket, hash, seed });
    }
    // Evaluate in parallel.
    let jobs: Vec<(usize, u64)> = plans
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match p {
            Plan::Run { seed, .. } => Some((i, *seed)),
            _ => None,
        })
        .collect();
    let results = crate::pool::map_ordered(jobs, threads.max(1), |(i, seed)| {
        (i, evaluate_package(device, &packages[i], seed, cfg))
    });
    let mut by_index: std::collections::HashMap<
        usize,
        Result<(Verdict, StageTimings), PipelineError>,
    > = results.into_iter().collect();
    // Record serially, in candidate order.
    let mut out: Vec<Evaluated> = Vec::with_capacity(plans.len());
    for (i, plan) in plans.into_iter().enumerate() {
        let e = match plan {
            Plan::Known(e) => e,
            Plan::SameAs(j) => {
                let mut e = out[j].clone();
                e.budget_index = None;
                e
            }
            Plan::Run { ticket, hash, seed } => {
                let (verdict, timings) = by_index.remove(&i).ok_or(PipelineError::LostJob)??;
                let index = ticket.index();
                let recorded = ledger.record(
                    ticket,
                    Charge {
                        source_hash: &hash,
                        verdict: &verdict,
                        seed,
                        timings,
                        launch: None,
                    },
                )?;
                Evaluated {
                    verdict: recorded.evaluation.verdict,
                    source_hash: hash,
                    budget_index: Some(index),
                    seed,
                }
            }
        };
        out.push(e);
    }
    Ok(out)
}
