//! The device layer: where an operator package is built, run and timed,
//! and the device-neutral data every device speaks.
//!
//! [`Device`] is the seam between the evaluation harness and hardware. This
//! crate holds the trait and its data only: launches ([`RunRequest`],
//! [`RunOutcome`], [`RunResult`], [`launch`]), the msprof-style profile
//! ([`profile`], with [`msprof_csv`] to write and read msprof's CSVs), the
//! platform facts the tiling reads, and the CANN toolkit side ([`cann`]).
//! It knows no simulator: the built-in device, `SimDevice`, lives in
//! `ascendopt-sim` and implements the trait; a real-NPU device implements
//! the same trait without touching the harness.
//!
//! Invariants:
//! - Knows nothing of the simulator, the harness or the agent (its only
//!   `ascendopt-*` dependency is `ascendopt-op`).
//! - A device never panics on a kernel's behaviour: every failure of a
//!   build or a run is a value ([`DeviceError`], [`RunOutcome`]).
//! - Devices know nothing of correctness: they return raw outputs; the
//!   harness compares them with the golden.
//! - What a device keeps of a run for its own later answers (the
//!   simulator's instruction trace) is opaque above it ([`RunDetail`]);
//!   the layers above ask the device (profile, samples, timeline, hazards,
//!   unmeasured work) instead of reading it.
#![deny(missing_docs)]

pub mod cann;
pub mod config_file;
pub mod launch;
pub mod msprof_csv;
pub mod profile;
pub mod select;
mod shared_error;

pub use cann::device::{CannConfig, CannDevice};
pub use launch::{AttrValue, Finding, JobAttr, Platform, SrcLoc, TilingInfo};
pub use profile::{
    AicFields, AivFields, BlockProfile, CoreType, GmReread, Hotspots, KernelCode, LaunchKind,
    LineCost, Ops, Profile, Roofline, Traffic,
};
pub use shared_error::SharedError;

use ascendopt_op::package::OpPackage;
use ascendopt_op::Tensor;
use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

/// A compiled operator, ready to run on the device that built it.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    /// Content hash of what was compiled.
    pub key: String,
    /// Host (tiling) library.
    pub host_lib: PathBuf,
    /// Kernel library (the first variant's when there are variants).
    pub kernel_lib: PathBuf,
    /// The kernel compiled once per dtype combination, as the msopgen
    /// build does for a kernel that uses its `DTYPE_<ARG>` macros: the
    /// dtypes of every input then every output, and the library a launch
    /// with those dtypes runs. Empty: `kernel_lib` serves every launch.
    pub kernel_variants: Vec<KernelVariant>,
    /// Kernel entry symbol.
    pub kernel_name: String,
    /// OpDef class name.
    pub op_type: String,
    /// Both libraries came from the build cache.
    pub cached: bool,
    /// Compile wall time in ms (0 when cached).
    pub compile_ms: u64,
    /// Knob values the host library reads at run time (a parametrised
    /// host build, shared by every knob assignment of one tiling region);
    /// empty when the values are compiled in.
    pub host_knobs: Vec<i64>,
    /// The chip it was built for and runs on (the simulator's profile name,
    /// e.g. `ascend310b`); None: the device's only chip.
    pub chip: Option<String>,
}

/// A kernel library built for one dtype combination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelVariant {
    /// The dtype of every kernel argument: inputs, then outputs (a tensor
    /// list's elements' dtype).
    pub dtypes: Vec<ascendopt_op::Dtype>,
    /// The library.
    pub lib: PathBuf,
}

impl Artifact {
    /// The kernel library a launch whose kernel arguments have these
    /// dtypes runs (inputs then outputs, one per argument; None for an
    /// absent input, which any variant serves), or None when the artifact
    /// has variants and none for them.
    pub fn kernel_for(&self, dtypes: &[Option<ascendopt_op::Dtype>]) -> Option<&PathBuf> {
        if self.kernel_variants.is_empty() {
            return Some(&self.kernel_lib);
        }
        self.kernel_variants
            .iter()
            .find(|v| {
                v.dtypes.len() == dtypes.len()
                    && v.dtypes
                        .iter()
                        .zip(dtypes)
                        .all(|(a, b)| b.is_none_or(|b| b == *a))
            })
            .map(|v| &v.lib)
    }
}

/// One launch: inputs, outputs with their initial (poisoned) contents,
/// attributes and the seed of the on-chip garbage.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    /// Inputs in kernel order.
    pub inputs: Vec<Tensor>,
    /// Outputs in kernel order, pre-filled.
    pub outputs: Vec<Tensor>,
    /// Attributes for the tiling.
    pub attrs: Vec<JobAttr>,
    /// Seed of uninitialised memory contents.
    pub seed: u64,
    /// The caller will profile the run or draw its timeline, so the device
    /// keeps what it needs for that ([`RunResult::detail`]; the simulator's
    /// instruction trace). When false, a device may check the run for
    /// hazards where the kernel ran and keep nothing:
    /// [`RunResult::detail`] is then None, [`RunResult::hazards`] the same
    /// as otherwise.
    pub keep_trace: bool,
    /// How the tensors become kernel arguments and tiling parameters
    /// (tensor lists, absent optional inputs, in-place outputs,
    /// value-depend inputs); None: each input then each output is one
    /// argument, in order.
    pub layout: Option<ascendopt_op::layout::ArgLayout>,
}

/// A finished launch.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    /// Outputs after the kernel (shapes and dtypes of the request).
    pub outputs: Vec<Tensor>,
    /// The tiling decisions.
    pub tiling: TilingInfo,
    /// What the device kept of the run to answer later questions about
    /// it ([`Device::profile`], [`Device::timeline_json`],
    /// [`Device::unmeasured_output_writes`]): the simulator's instruction
    /// trace. None when the request did not ask to keep it.
    pub detail: Option<RunDetail>,
    /// Non-fatal notes of the runtime (e.g. a DataCopy length rounded down).
    pub findings: Vec<Finding>,
    /// Hazards found in the trace: races between pipes, flag misuse. On a
    /// real NPU these make results timing-dependent, so they fail a check.
    pub hazards: Vec<Finding>,
    /// Kernel printf output.
    pub printed: String,
    /// What a device that measures on hardware recorded with the run
    /// (latency samples, and its profile when the caller asked for one
    /// with [`RunRequest::keep_trace`]); None on the simulator, which
    /// computes both from the trace.
    pub measured: Option<Box<Measurement>>,
}

/// Latencies and a profile measured on hardware during one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// One latency per timed launch, µs, in launch order (the device
    /// documents how it times them).
    pub samples_us: Vec<f64>,
    /// The profile of the run's launch: None when it was not profiled,
    /// Err when profiling failed (the device's own error).
    pub profile: Option<Result<Profile, SharedError>>,
}

/// What a device keeps of one finished run for its own later answers,
/// opaque to everyone else: only the device that made it can look inside
/// ([`RunDetail::downcast_ref`]). Cloning shares it; two details are equal
/// when they are the same one.
#[derive(Clone)]
pub struct RunDetail(Arc<dyn Any + Send + Sync>);

impl RunDetail {
    /// Wraps a device's own record of a run.
    pub fn new<T: Any + Send + Sync>(value: T) -> RunDetail {
        RunDetail(Arc::new(value))
    }

    /// The record, when it is a `T` (the device that made it knows `T`).
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref::<T>()
    }
}

impl std::fmt::Debug for RunDetail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunDetail(..)")
    }
}

impl PartialEq for RunDetail {
    fn eq(&self, other: &RunDetail) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// What profiling a run needs beyond the run itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRequest {
    /// Minimum GM bytes the case must move (inputs read once, outputs
    /// written once), for the roofline.
    pub min_bytes: u64,
    /// Of those, the inputs' bytes (the rest are the outputs').
    pub input_bytes: u64,
    /// Operations of the case, for the roofline.
    pub ops: Ops,
    /// Seed of the measurement noise.
    pub seed: u64,
    /// No measurement noise (identical latency on every run).
    pub deterministic: bool,
}

/// How a launch ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// Ran to the end.
    Finished(RunResult),
    /// The tiling function failed or returned an unusable result.
    TilingFailed {
        /// Why.
        message: String,
    },
    /// The kernel committed a fault (UB overflow, out of bounds, deadlock...).
    Fault {
        /// Block that faulted.
        block: u32,
        /// What happened.
        message: String,
        /// API call and source line.
        loc: Option<SrcLoc>,
    },
    /// The kernel process died of a signal.
    Crashed {
        /// Signal name (`SIGSEGV`).
        signal: String,
        /// End of its stderr.
        detail: String,
    },
    /// It ran out of time.
    TimedOut {
        /// Wall time when stopped.
        after_ms: u64,
    },
    /// It ran out of memory.
    OutOfMemory {
        /// End of its stderr.
        detail: String,
    },
    /// The device itself failed (worker missing, protocol error, library
    /// that does not load).
    DeviceFailed {
        /// Why.
        message: String,
    },
}

impl RunOutcome {
    /// One line for a person.
    pub fn summary(&self) -> String {
        match self {
            RunOutcome::Finished(_) => "finished".into(),
            RunOutcome::TilingFailed { message } => format!("tiling failed: {message}"),
            RunOutcome::Fault {
                block,
                message,
                loc,
            } => match loc {
                Some(l) => format!("block {block}: {message} ({l})"),
                None => format!("block {block}: {message}"),
            },
            RunOutcome::Crashed { signal, detail } => {
                let d = detail.trim();
                if d.is_empty() {
                    format!("kernel crashed ({signal})")
                } else {
                    format!("kernel crashed ({signal}): {}", last_line(d))
                }
            }
            RunOutcome::TimedOut { after_ms } => format!("timed out after {after_ms} ms"),
            RunOutcome::OutOfMemory { detail } => format!("out of memory: {}", last_line(detail)),
            RunOutcome::DeviceFailed { message } => format!("device error: {message}"),
        }
    }
}

fn last_line(s: &str) -> &str {
    s.trim().lines().last().unwrap_or("")
}

/// Why a build failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceError {
    /// The compiler rejected the sources.
    #[error("{summary}")]
    Compile {
        /// One line naming the first error's file and line (of every
        /// failing unit).
        summary: String,
        /// The compiler's diagnostics.
        diagnostics: String,
        /// Each unit that failed (`host`, `kernel`) with its first error;
        /// empty when the device cannot tell units apart.
        units: Vec<UnitFailure>,
    },
    /// The build could not be attempted (no compiler, unreadable folder,
    /// unknown chip): the device's own error, shown as it is.
    #[error(transparent)]
    Setup(SharedError),
}

/// Why a device could not answer a question about a package or a
/// finished run (its preprocessed units, its tiling, its profile, its
/// latency samples, its timeline). It shows as the device's own message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The run kept nothing to answer from.
    #[error(transparent)]
    NoDetail(#[from] MissingDetail),
    /// The device's own step failed (the timing model, the preprocessor,
    /// the chip's profile, the build behind it): its error, shown as it is.
    #[error(transparent)]
    Failed(#[from] SharedError),
    /// The launch that answers the question (the host tiling's) did not
    /// finish: the device's one-line summary of its outcome
    /// ([`RunOutcome::summary`]).
    #[error("{summary}")]
    Unfinished {
        /// What became of the launch.
        summary: String,
    },
}

impl QueryError {
    /// The device's own `error`, as a failed step.
    pub fn failed(error: impl std::error::Error + Send + Sync + 'static) -> QueryError {
        QueryError::Failed(SharedError::new(error))
    }
}

/// What a finished run did not keep that a question needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MissingDetail {
    /// The run kept no trace (the simulator's answers come from it).
    #[error("the run has no trace")]
    NoTrace,
    /// The run was not profiled.
    #[error("the run was not profiled (run it with keep_trace)")]
    NotProfiled,
    /// The run measured no latencies.
    #[error("the run has no measured latencies")]
    NoSamples,
    /// The run measured fewer latencies than were asked for.
    #[error(
        "the run measured {measured} latency samples on the chip and {asked} were asked for: \
         raise the CANN device's repeats"
    )]
    TooFewSamples {
        /// How many it measured.
        measured: usize,
        /// How many were asked for.
        asked: usize,
    },
}

/// One compilation unit that did not build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitFailure {
    /// `host` or `kernel`.
    pub unit: String,
    /// `file:line` of the first error (the file alone when g++ named no
    /// line).
    pub location: String,
    /// The first error, interpreted (a missing header or API named).
    pub message: String,
}

/// A place where operators are built and run.
pub trait Device: Send + Sync {
    /// Short name (`sim-ascend910b2`).
    fn name(&self) -> String;
    /// What the tiling functions are told about the hardware.
    fn platform(&self) -> &Platform;
    /// What the tiling functions of `package` are told: the platform of
    /// the chip it runs on (its op.toml `chip`), the device's own by
    /// default.
    fn platform_of(&self, _package: &OpPackage) -> Platform {
        self.platform().clone()
    }
    /// Compiles an operator package.
    fn build(&self, package: &OpPackage) -> Result<Artifact, DeviceError>;
    /// Runs one launch.
    fn run(&self, artifact: &Artifact, request: &RunRequest) -> RunOutcome;
    /// The tiling a launch of `request` on `artifact` would run with,
    /// computed by the host tiling alone (no kernel runs; the request's
    /// tensors need shapes, not contents), or None when the device cannot
    /// tell it apart from a launch. A launch is the kernel library, this
    /// tiling, the tensors and the garbage seed: two candidates with the
    /// same kernel library and tiling launch the same thing, whatever their
    /// host code says. Err: the tiling failed (a launch would fail too).
    fn tiling(
        &self,
        artifact: &Artifact,
        request: &RunRequest,
    ) -> Option<Result<TilingInfo, QueryError>> {
        let _ = (artifact, request);
        None
    }
    /// The operator's units as its compiler preprocesses them (`g++ -E`
    /// with the build's flags, line markers kept): (unit name, text), for
    /// the static check; None when the device has no preprocessor, Err when
    /// preprocessing failed (the build will say why).
    fn preprocess(&self, package: &OpPackage) -> Option<Result<Vec<(String, String)>, QueryError>> {
        let _ = package;
        None
    }
    /// The msprof-style profile of a finished run, with its roofline (the
    /// run kept its detail: [`RunRequest::keep_trace`]).
    fn profile(&self, result: &RunResult, request: &ProfileRequest) -> Result<Profile, QueryError>;
    /// `seeds.len()` measured latencies (Task Duration, µs) of a finished
    /// run, as repeated profiling would give them; `clean` is the run's
    /// noise-free profile ([`Device::profile`] with `deterministic` set).
    /// A device whose measurements are real profiles the run again for
    /// each sample; the simulator draws sample `k`'s measurement noise with
    /// seed `seeds[k]` around `clean`'s Task Duration.
    fn latency_samples(
        &self,
        result: &RunResult,
        clean: &Profile,
        seeds: &[u64],
    ) -> Result<Vec<f64>, QueryError>;
    /// Why the run's measured time cannot be trusted because some of its
    /// work escaped the measurement, or None: on the simulator, output
    /// bytes that no recorded instruction wrote (plain C++ stores through a
    /// GM pointer, which the timing model does not see). `request` is the
    /// run's request (its inputs and the sizes of its outputs). A device
    /// that times the real chip sees all work: None (the default).
    fn unmeasured_output_writes(&self, result: &RunResult, request: &RunRequest) -> Option<String> {
        let _ = (result, request);
        None
    }
    /// A Chrome Trace Event JSON timeline of a finished run, when the
    /// device can produce one.
    fn timeline_json(&self, result: &RunResult) -> Option<Result<String, QueryError>>;
}
