//! The built-in device: g++ + the Ascend 910B2 simulator, each launch in a
//! sandboxed worker process, implementing `ascendopt_device::Device`.
//!
//! The chip is chosen per operator: the profile op.toml's `chip` names
//! (another built-in profile, e.g. `ascend310b`), the configuration's
//! override over every operator, else the configuration's profile. The
//! kernel is compiled with that chip's architecture macros, the tiling and
//! kernel see its platform, and its trace is timed on it.
//!
//! What it keeps of a run ([`RunDetail`]) is the instruction trace
//! ([`trace_of`]); profiles, latency samples (with the profile's seeded
//! measurement noise), timelines and the check for output bytes no
//! recorded instruction wrote are all answered from it here, so no layer
//! above sees a simulator type.

use crate::build::{self, variants, BuildCache, BuildError, BuildRequest, Toolchain};
use crate::check;
use crate::launch::{self, JobTensor, LaunchFailure, LaunchJob, Platform, TilingInfo};
use crate::timing::{self, HwProfile, Profile, TimingOptions};
use crate::trace::Trace;
use crate::worker::{self, WorkerLimits, WorkerOutcome};
use ascendopt_device::{
    Artifact, Device, DeviceError, KernelVariant, MissingDetail, ProfileRequest, QueryError,
    RunDetail, RunOutcome, RunRequest, RunResult, SharedError, UnitFailure,
};
use ascendopt_op::package::OpPackage;
use ascendopt_op::Dtype;
use ascendopt_op::Tensor;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Everything the simulator device needs.
#[derive(Debug, Clone)]
pub struct SimDeviceConfig {
    /// The hardware profile (platform sizes and timing).
    pub hw: HwProfile,
    /// Where compiled libraries are cached.
    pub cache: BuildCache,
    /// Compiler and emulation headers.
    pub toolchain: Toolchain,
    /// Limits of each worker run.
    pub limits: WorkerLimits,
    /// Instruction limit per block (catches endless loops that call APIs).
    pub max_instrs_per_block: u64,
    /// The chip every operator runs on, over its op.toml `chip` (a
    /// built-in profile name, `--chip`); None: each operator's own.
    pub chip_override: Option<String>,
}

impl SimDeviceConfig {
    /// The 910B2 profile, the cache from the environment, standard limits.
    pub fn standard() -> Result<SimDeviceConfig, DeviceError> {
        let hw = HwProfile::builtin("ascend910b2")
            .map_err(|e| DeviceError::Setup(SharedError::new(e)))?;
        let cache = BuildCache::from_env().map_err(|e| DeviceError::Setup(SharedError::new(e)))?;
        Ok(SimDeviceConfig {
            hw,
            cache,
            toolchain: Toolchain::from_env(),
            limits: WorkerLimits::standard(),
            max_instrs_per_block: 4_000_000,
            chip_override: None,
        })
    }
}

/// What a run of the simulator device keeps ([`RunDetail`]): the
/// instruction trace and the chip it ran on, whose profile times it.
#[derive(Debug)]
pub struct SimRunDetail {
    /// The instruction trace.
    pub trace: Trace,
    /// The profile name of the chip the launch ran on.
    pub chip: String,
}

/// A chip the device can run an operator on: its profile and the platform
/// its tiling and kernel see.
#[derive(Debug, Clone)]
struct Chip {
    hw: HwProfile,
    platform: Platform,
}

/// The simulator device.
#[derive(Debug, Clone)]
pub struct SimDevice {
    config: SimDeviceConfig,
    platform: Platform,
    /// The other built-in chips, loaded when an operator first names one.
    others: OnceLock<Vec<Chip>>,
}

/// Why a launch cannot be put to the worker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// The package names a chip the simulator has no profile of.
    #[error("the simulator has no chip profile `{name}` (it has: {})", .known.join(", "))]
    UnknownChip {
        /// The chip asked for.
        name: String,
        /// The chips there are.
        known: Vec<String>,
    },
    /// The build has no kernel for the launch's dtypes.
    #[error("no kernel variant was built for the dtypes ({}) of this launch", .dtypes.join(", "))]
    NoKernelVariant {
        /// The dtype of each kernel parameter (`-` for none).
        dtypes: Vec<String>,
    },
}

impl SimDevice {
    /// A device with this configuration.
    pub fn new(config: SimDeviceConfig) -> SimDevice {
        let platform = launch::platform_of(&config.hw);
        SimDevice {
            config,
            platform,
            others: OnceLock::new(),
        }
    }

    /// The hardware profile of the default chip.
    pub fn hw(&self) -> &HwProfile {
        &self.config.hw
    }

    /// The profile and platform of the chip named `wanted` (an op.toml's
    /// `chip`), or of the configuration's override when it has one; the
    /// default chip for None. Err names the chips there are.
    fn chip(&self, wanted: Option<&str>) -> Result<(&HwProfile, &Platform), JobError> {
        let name = match self.config.chip_override.as_deref().or(wanted) {
            None => return Ok((&self.config.hw, &self.platform)),
            Some(n) => n.trim().to_ascii_lowercase(),
        };
        if name == self.config.hw.name {
            return Ok((&self.config.hw, &self.platform));
        }
        let others = self.others.get_or_init(|| {
            HwProfile::builtin_names()
                .into_iter()
                .filter(|n| *n != self.config.hw.name)
                .filter_map(|n| HwProfile::builtin(n).ok())
                .map(|hw| Chip {
                    platform: launch::platform_of(&hw),
                    hw,
                })
                .collect()
        });
        others
            .iter()
            .find(|c| c.hw.name == name)
            .map(|c| (&c.hw, &c.platform))
            .ok_or_else(|| {
                let mut known = vec![self.config.hw.name.clone()];
                known.extend(others.iter().map(|c| c.hw.name.clone()));
                JobError::UnknownChip { name, known }
            })
    }

    /// The chip `package` runs on: its op.toml's `chip`, or the override.
    fn chip_of_package(&self, package: &OpPackage) -> Result<(&HwProfile, &Platform), DeviceError> {
        self.chip(package.spec.chip.as_deref())
            .map_err(|e| DeviceError::Setup(SharedError::at(&package.spec.file, e)))
    }

    /// The name of the chip `package` runs on (the default chip's when its
    /// op.toml names none), or the error that its chip is unknown.
    pub fn chip_name(&self, package: &OpPackage) -> Result<String, DeviceError> {
        self.chip_of_package(package).map(|(hw, _)| hw.name.clone())
    }

    /// The worker job of a launch of `request` on `artifact` (of its host
    /// tiling alone with `tiling_only`); Err when the artifact has no
    /// kernel variant for the request's dtypes.
    fn job(
        &self,
        artifact: &Artifact,
        request: &RunRequest,
        tiling_only: bool,
    ) -> Result<LaunchJob, JobError> {
        let inputs: Vec<Dtype> = request.inputs.iter().map(|t| t.dtype).collect();
        let outputs: Vec<Dtype> = request.outputs.iter().map(|t| t.dtype).collect();
        let plain;
        let layout = match &request.layout {
            Some(l) => l,
            None => {
                plain = ascendopt_op::layout::ArgLayout::plain(inputs.len(), outputs.len());
                &plain
            }
        };
        let dtypes = layout.param_dtypes(&inputs, &outputs);
        let (_, platform) = self.chip(artifact.chip.as_deref())?;
        let kernel_lib =
            artifact
                .kernel_for(&dtypes)
                .cloned()
                .ok_or_else(|| JobError::NoKernelVariant {
                    dtypes: dtypes
                        .iter()
                        .map(|d| d.map_or("-", |d| d.name()).to_string())
                        .collect(),
                })?;
        Ok(LaunchJob {
            host_lib: artifact.host_lib.clone(),
            kernel_lib,
            kernel_name: artifact.kernel_name.clone(),
            op_type: Some(artifact.op_type.clone()),
            inputs: request.inputs.iter().map(to_job_tensor).collect(),
            outputs: request.outputs.iter().map(to_job_tensor).collect(),
            attrs: request.attrs.clone(),
            platform: platform.clone(),
            seed: request.seed,
            max_instrs_per_block: self.config.max_instrs_per_block,
            knobs: artifact.host_knobs.clone(),
            check_in_worker: !request.keep_trace,
            tiling_only,
            layout: request.layout.clone(),
            describe: false,
        })
    }

    /// The build request of `package` for the chip `hw` and its kernel
    /// variants' dtypes.
    fn request(&self, package: &OpPackage, hw: &HwProfile) -> (BuildRequest, Vec<Vec<Dtype>>) {
        let spec = &package.spec;
        // What the project around the package adds (shared headers, a
        // shared tiling source), as its CMake would; host sources only when
        // op.toml does not list them.
        let mut include_dirs = vec![package.dir.join("op_host"), package.dir.join("op_kernel")];
        let mut host_sources = package.host_sources.clone();
        let sources: Vec<PathBuf> = host_sources
            .iter()
            .chain(&package.kernel_sources)
            .cloned()
            .collect();
        let project = build::project::discover(
            &package.dir,
            &sources,
            &include_dirs,
            &self.config.toolchain.include_dir,
        );
        include_dirs.extend(project.include_dirs.iter().cloned());
        let combos = Self::variants_of(package, &include_dirs);
        let names: Vec<&str> = spec
            .inputs
            .iter()
            .chain(&spec.outputs)
            .map(|t| t.name.as_str())
            .collect();
        let kernel_variants: Vec<Vec<String>> = combos
            .iter()
            .map(|dtypes| {
                let params: Vec<variants::VariantParam<'_>> = names
                    .iter()
                    .zip(dtypes)
                    .map(|(name, &dtype)| variants::VariantParam {
                        name,
                        dtype,
                        format: "FORMAT_ND",
                    })
                    .collect();
                variants::variant_defines(&params)
            })
            .collect();
        let tiling_header = package
            .tiling_header
            .clone()
            .or_else(|| project.tiling_header_for(&spec.op_type));
        if spec.host_sources.is_none() {
            host_sources.extend(project.host_sources);
        }
        let req = BuildRequest {
            toolchain: self.config.toolchain.clone(),
            host_sources,
            kernel_sources: package.kernel_sources.clone(),
            include_dirs,
            tiling_header,
            defines: Vec::new(),
            arch_defines: hw.kernel_arch_defines(),
            kernel_variants,
            timeout: build::DEFAULT_COMPILE_TIMEOUT,
        };
        (req, combos)
    }

    /// The kernel variants `package` needs: one per dtype combination its
    /// cases launch with, when its kernel sources (the headers beside them,
    /// or the headers they include, found in `include_dirs`) use the
    /// msopgen build's per-variant macros of its parameters; none
    /// otherwise. In kernel order (inputs, then outputs).
    fn variants_of(package: &OpPackage, include_dirs: &[PathBuf]) -> Vec<Vec<Dtype>> {
        let spec = &package.spec;
        let names: Vec<&str> = spec
            .inputs
            .iter()
            .chain(&spec.outputs)
            .map(|t| t.name.as_str())
            .collect();
        let mut files: Vec<PathBuf> = package.kernel_sources.clone();
        if let Ok(entries) = std::fs::read_dir(package.dir.join("op_kernel")) {
            files.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "h" || x == "hpp")),
            );
        }
        let files = variants::files_reached(&files, include_dirs);
        let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        if !variants::uses_variant_macros(&names, &refs) {
            return Vec::new();
        }
        let mut combos: Vec<Vec<Dtype>> = Vec::new();
        for case in &spec.cases {
            let inputs: Vec<Dtype> = case.inputs.iter().map(|i| i.dtype).collect();
            let outputs: Vec<Dtype> = case.outputs.iter().map(|o| o.dtype).collect();
            // One dtype per parameter; an input the case leaves out takes
            // its first allowed dtype (the macro exists in every variant).
            let dtypes: Vec<Dtype> = case
                .layout
                .param_dtypes(&inputs, &outputs)
                .into_iter()
                .zip(spec.inputs.iter().chain(&spec.outputs))
                .map(|(d, t)| d.or(t.dtypes.first().copied()).unwrap_or(Dtype::Float32))
                .collect();
            if !combos.contains(&dtypes) {
                combos.push(dtypes);
            }
        }
        combos
    }
}

/// The instruction trace a run of the simulator device kept (None when the
/// request did not keep it, or the run is another device's).
pub fn trace_of(result: &RunResult) -> Option<&Trace> {
    detail_of(result).map(|d| &d.trace)
}

/// What a run of the simulator device kept (see [`trace_of`]).
pub fn detail_of(result: &RunResult) -> Option<&SimRunDetail> {
    result.detail.as_ref()?.downcast_ref::<SimRunDetail>()
}

/// A failed unit of a build, device-neutral.
fn unit_failure(e: &BuildError) -> Option<UnitFailure> {
    match e {
        BuildError::Compile {
            unit,
            file,
            line,
            message,
            ..
        } => Some(UnitFailure {
            unit: unit.name().to_string(),
            location: match line {
                Some(l) => format!("{}:{l}", file.display()),
                None => file.display().to_string(),
            },
            message: message.clone(),
        }),
        BuildError::Timeout { unit, after_ms } => Some(UnitFailure {
            unit: unit.name().to_string(),
            location: String::new(),
            message: format!("compile timed out after {after_ms} ms"),
        }),
        _ => None,
    }
}

/// How a worker that did not finish its job ended, as a launch outcome.
fn unfinished(outcome: WorkerOutcome) -> RunOutcome {
    match outcome {
        WorkerOutcome::Failed(LaunchFailure::Tiling { message }) => {
            RunOutcome::TilingFailed { message }
        }
        WorkerOutcome::Failed(LaunchFailure::Load { what, message }) => RunOutcome::DeviceFailed {
            message: format!("cannot load {what}: {message}"),
        },
        WorkerOutcome::Failed(LaunchFailure::Fault {
            block,
            message,
            loc,
        }) => RunOutcome::Fault {
            block,
            message,
            loc,
        },
        WorkerOutcome::Crashed {
            signal_name,
            stderr_tail,
            ..
        } => RunOutcome::Crashed {
            signal: signal_name,
            detail: stderr_tail,
        },
        WorkerOutcome::TimedOut { after_ms, .. } => RunOutcome::TimedOut { after_ms },
        WorkerOutcome::OutOfMemory { stderr_tail } => RunOutcome::OutOfMemory {
            detail: stderr_tail,
        },
        WorkerOutcome::Exited { code, stderr_tail } => RunOutcome::Crashed {
            signal: format!("exit({code})"),
            detail: stderr_tail,
        },
        WorkerOutcome::WorkerError { message } => RunOutcome::DeviceFailed { message },
        WorkerOutcome::Finished(_) => RunOutcome::DeviceFailed {
            message: "the worker finished (not a failure)".into(),
        },
    }
}

/// The job's view of a tensor: dtype and shape; the contents travel
/// borrowed (see [`worker::run_job_borrowed`]).
fn to_job_tensor(t: &Tensor) -> JobTensor {
    JobTensor {
        dtype: t.dtype,
        shape: t.shape.iter().map(|&d| d as i64).collect(),
        data: Vec::new(),
    }
}

impl Device for SimDevice {
    fn name(&self) -> String {
        format!("sim-{}", self.config.hw.name)
    }

    fn platform(&self) -> &Platform {
        &self.platform
    }

    fn platform_of(&self, package: &OpPackage) -> Platform {
        // An unknown chip fails the build with its own message; the
        // default chip's platform serves until then.
        self.chip_of_package(package)
            .map(|(_, p)| p.clone())
            .unwrap_or_else(|_| self.platform.clone())
    }

    fn preprocess(&self, package: &OpPackage) -> Option<Result<Vec<(String, String)>, QueryError>> {
        let hw = match self.chip_of_package(package) {
            Ok((hw, _)) => hw,
            Err(e) => return Some(Err(QueryError::failed(e))),
        };
        let (req, _) = self.request(package, hw);
        Some(
            build::preprocess(&req)
                .map(|units| {
                    units
                        .into_iter()
                        .map(|(unit, text)| (unit.name().to_string(), text))
                        .collect()
                })
                .map_err(QueryError::failed),
        )
    }

    fn build(&self, package: &OpPackage) -> Result<Artifact, DeviceError> {
        let spec = &package.spec;
        let (hw, _) = self.chip_of_package(package)?;
        let (req, combos) = self.request(package, hw);
        let setup = |e: BuildError| DeviceError::Setup(SharedError::new(e));
        match build::build(&req, &self.config.cache) {
            Ok(b) => Ok(Artifact {
                key: b.key,
                host_lib: b.host_lib,
                kernel_lib: b.kernel_lib,
                kernel_variants: combos
                    .into_iter()
                    .zip(b.kernel_libs)
                    .map(|(dtypes, lib)| KernelVariant { dtypes, lib })
                    .collect(),
                kernel_name: spec.kernel.clone(),
                op_type: spec.op_type.clone(),
                cached: b.cached,
                compile_ms: b.host_ms.max(b.kernel_ms),
                host_knobs: b.host_knobs,
                chip: Some(hw.name.clone()),
            }),
            Err(e @ BuildError::Compile { .. }) => {
                let diagnostics = match &e {
                    BuildError::Compile { diagnostics, .. } => diagnostics.clone(),
                    _ => String::new(),
                };
                let units = e
                    .unit_failures()
                    .into_iter()
                    .filter_map(unit_failure)
                    .collect();
                Err(DeviceError::Compile {
                    summary: e.to_string(),
                    diagnostics,
                    units,
                })
            }
            Err(e @ BuildError::Timeout { .. }) => Err(DeviceError::Compile {
                summary: e.to_string(),
                diagnostics: String::new(),
                units: unit_failure(&e).into_iter().collect(),
            }),
            Err(e) => Err(setup(e)),
        }
    }

    fn run(&self, artifact: &Artifact, request: &RunRequest) -> RunOutcome {
        let job = match self.job(artifact, request, false) {
            Ok(job) => job,
            Err(e) => {
                return RunOutcome::DeviceFailed {
                    message: e.to_string(),
                }
            }
        };
        let chip = artifact
            .chip
            .clone()
            .unwrap_or_else(|| self.config.hw.name.clone());
        let inputs: Vec<&[u8]> = request.inputs.iter().map(|t| t.data.as_slice()).collect();
        let outputs: Vec<&[u8]> = request.outputs.iter().map(|t| t.data.as_slice()).collect();
        match worker::run_job_borrowed(&job, &inputs, &outputs, &self.config.limits) {
            WorkerOutcome::Finished(out) => {
                let outputs = request
                    .outputs
                    .iter()
                    .zip(out.outputs)
                    .map(|(req, data)| Tensor {
                        dtype: req.dtype,
                        shape: req.shape.clone(),
                        data,
                    })
                    .collect();
                // The worker checked the trace when it was not wanted here.
                let (hazards, detail) = match out.hazards {
                    Some(hazards) if !request.keep_trace => (hazards, None),
                    _ => (
                        check::check(&out.trace),
                        Some(RunDetail::new(SimRunDetail {
                            trace: out.trace,
                            chip,
                        })),
                    ),
                };
                // Races no output can see are notes, not hazards.
                let (hazards, harmless) = check::split_notes(hazards);
                let mut findings = out.findings;
                findings.extend(harmless);
                RunOutcome::Finished(RunResult {
                    outputs,
                    tiling: out.tiling,
                    detail,
                    findings,
                    hazards,
                    printed: out.printed,
                    measured: None,
                })
            }
            other => unfinished(other),
        }
    }

    fn tiling(
        &self,
        artifact: &Artifact,
        request: &RunRequest,
    ) -> Option<Result<TilingInfo, QueryError>> {
        let job = match self.job(artifact, request, true) {
            Ok(job) => job,
            Err(e) => return Some(Err(QueryError::failed(e))),
        };
        // Shapes are in the job; no contents are needed.
        let inputs: Vec<&[u8]> = vec![&[]; job.inputs.len()];
        let outputs: Vec<&[u8]> = vec![&[]; job.outputs.len()];
        Some(
            match worker::run_job_borrowed(&job, &inputs, &outputs, &self.config.limits) {
                WorkerOutcome::Finished(out) => Ok(out.tiling),
                other => Err(QueryError::Unfinished {
                    summary: unfinished(other).summary(),
                }),
            },
        )
    }

    fn profile(&self, result: &RunResult, request: &ProfileRequest) -> Result<Profile, QueryError> {
        let detail = detail_of(result).ok_or(MissingDetail::NoTrace)?;
        let trace = &detail.trace;
        let (hw, _) = self.chip(Some(&detail.chip)).map_err(QueryError::failed)?;
        let opts = if request.deterministic {
            TimingOptions::deterministic()
        } else {
            TimingOptions::device_default(hw, request.seed)
        };
        let sim = timing::simulate(trace, hw, &opts).map_err(QueryError::failed)?;
        let mut profile = sim.profile;
        profile.hotspots = timing::hotspots(trace, &sim.timeline, hw);
        let traffic = timing::Traffic {
            read_bytes: request.input_bytes.min(request.min_bytes),
            write_bytes: request.min_bytes.saturating_sub(request.input_bytes),
        };
        let kind = profile.launch_kind();
        profile.attach_roofline(timing::roofline(
            hw,
            traffic,
            timing::report::with_traced_cube(request.ops, trace),
            result.tiling.block_dim,
            kind,
        ));
        Ok(profile)
    }

    fn latency_samples(
        &self,
        result: &RunResult,
        clean: &Profile,
        seeds: &[u64],
    ) -> Result<Vec<f64>, QueryError> {
        let clean = clean.task_duration_us;
        let level = match detail_of(result) {
            Some(d) => {
                self.chip(Some(&d.chip))
                    .map_err(QueryError::failed)?
                    .0
                    .noise
            }
            None => self.config.hw.noise,
        };
        Ok(seeds
            .iter()
            .map(|&seed| {
                clean * timing::noise::factor(&timing::Noise::Seeded { seed, level }, clean)
            })
            .collect())
    }

    fn unmeasured_output_writes(&self, result: &RunResult, request: &RunRequest) -> Option<String> {
        if result.outputs.len() != request.outputs.len() {
            return None;
        }
        let outputs: Vec<check::OutputBytes<'_>> = request
            .outputs
            .iter()
            .zip(&result.outputs)
            .map(|(before, after)| check::OutputBytes {
                before: &before.data,
                after: &after.data,
            })
            .collect();
        check::untraced_output_writes(trace_of(result)?, request.inputs.len(), &outputs)
    }

    fn timeline_json(&self, result: &RunResult) -> Option<Result<String, QueryError>> {
        let detail = detail_of(result)?;
        let trace = &detail.trace;
        let hw = match self.chip(Some(&detail.chip)) {
            Ok((hw, _)) => hw,
            Err(e) => return Some(Err(QueryError::failed(e))),
        };
        Some(
            timing::simulate(trace, hw, &TimingOptions::deterministic())
                .map(|sim| timing::chrome_trace_json(trace, &sim))
                .map_err(QueryError::failed),
        )
    }
}
