//! The built-in device: g++ + the Ascend 910B2 simulator, each launch in a
//! sandboxed worker process.

use crate::{Artifact, Device, DeviceError, ProfileRequest, RunOutcome, RunRequest, RunResult};
use ascendopt_op::package::OpPackage;
use ascendopt_op::Tensor;
use ascendopt_sim::build::{self, BuildCache, BuildError, BuildRequest, Toolchain};
use ascendopt_sim::check;
use ascendopt_sim::launch::{JobTensor, LaunchFailure, LaunchJob, Platform, TilingInfo};
use ascendopt_sim::timing::{self, HwProfile, Profile, TimingOptions};
use ascendopt_sim::worker::{self, WorkerLimits, WorkerOutcome};

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
}

impl SimDeviceConfig {
    /// The 910B2 profile, the cache from the environment, standard limits.
    pub fn standard() -> Result<SimDeviceConfig, DeviceError> {
        let hw = HwProfile::builtin("ascend910b2").map_err(|e| DeviceError::Setup {
            message: e.to_string(),
        })?;
        let cache = BuildCache::from_env().map_err(|e| DeviceError::Setup {
            message: e.to_string(),
        })?;
        Ok(SimDeviceConfig {
            hw,
            cache,
            toolchain: Toolchain::from_env(),
            limits: WorkerLimits::standard(),
            max_instrs_per_block: 4_000_000,
        })
    }
}

/// The simulator device.
#[derive(Debug, Clone)]
pub struct SimDevice {
    config: SimDeviceConfig,
    platform: Platform,
}

impl SimDevice {
    /// A device with this configuration.
    pub fn new(config: SimDeviceConfig) -> SimDevice {
        let platform = Platform::from_hw(&config.hw);
        SimDevice { config, platform }
    }

    /// The hardware profile.
    pub fn hw(&self) -> &HwProfile {
        &self.config.hw
    }

    /// The worker job of a launch of `request` on `artifact` (of its host
    /// tiling alone with `tiling_only`).
    fn job(&self, artifact: &Artifact, request: &RunRequest, tiling_only: bool) -> LaunchJob {
        LaunchJob {
            host_lib: artifact.host_lib.clone(),
            kernel_lib: artifact.kernel_lib.clone(),
            kernel_name: artifact.kernel_name.clone(),
            op_type: Some(artifact.op_type.clone()),
            inputs: request.inputs.iter().map(to_job_tensor).collect(),
            outputs: request.outputs.iter().map(to_job_tensor).collect(),
            attrs: request.attrs.clone(),
            platform: self.platform.clone(),
            seed: request.seed,
            max_instrs_per_block: self.config.max_instrs_per_block,
            knobs: artifact.host_knobs.clone(),
            check_in_worker: !request.keep_trace,
            tiling_only,
        }
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

    fn build(&self, package: &OpPackage) -> Result<Artifact, DeviceError> {
        let spec = &package.spec;
        let req = BuildRequest {
            toolchain: self.config.toolchain.clone(),
            host_sources: package.host_sources.clone(),
            kernel_sources: package.kernel_sources.clone(),
            include_dirs: vec![package.dir.join("op_host"), package.dir.join("op_kernel")],
            tiling_header: package.tiling_header.clone(),
            defines: Vec::new(),
            timeout: build::DEFAULT_COMPILE_TIMEOUT,
        };
        let setup = |e: BuildError| DeviceError::Setup {
            message: e.to_string(),
        };
        match build::build(&req, &self.config.cache) {
            Ok(b) => Ok(Artifact {
                key: b.key,
                host_lib: b.host_lib,
                kernel_lib: b.kernel_lib,
                kernel_name: spec.kernel.clone(),
                op_type: spec.op_type.clone(),
                cached: b.cached,
                compile_ms: b.host_ms.max(b.kernel_ms),
                host_knobs: b.host_knobs,
            }),
            Err(e @ BuildError::Compile { .. }) => {
                let diagnostics = match &e {
                    BuildError::Compile { diagnostics, .. } => diagnostics.clone(),
                    _ => String::new(),
                };
                Err(DeviceError::Compile {
                    summary: e.to_string(),
                    diagnostics,
                })
            }
            Err(e @ BuildError::Timeout { .. }) => Err(DeviceError::Compile {
                summary: e.to_string(),
                diagnostics: String::new(),
            }),
            Err(e) => Err(setup(e)),
        }
    }

    fn run(&self, artifact: &Artifact, request: &RunRequest) -> RunOutcome {
        let job = self.job(artifact, request, false);
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
                let (hazards, trace) = match out.hazards {
                    Some(hazards) if !request.keep_trace => (hazards, None),
                    _ => (check::check(&out.trace), Some(out.trace)),
                };
                RunOutcome::Finished(RunResult {
                    outputs,
                    tiling: out.tiling,
                    trace,
                    findings: out.findings,
                    hazards,
                    printed: out.printed,
                })
            }
            other => unfinished(other),
        }
    }

    fn tiling(
        &self,
        artifact: &Artifact,
        request: &RunRequest,
    ) -> Option<Result<TilingInfo, String>> {
        let job = self.job(artifact, request, true);
        // Shapes are in the job; no contents are needed.
        let inputs: Vec<&[u8]> = vec![&[]; job.inputs.len()];
        let outputs: Vec<&[u8]> = vec![&[]; job.outputs.len()];
        Some(
            match worker::run_job_borrowed(&job, &inputs, &outputs, &self.config.limits) {
                WorkerOutcome::Finished(out) => Ok(out.tiling),
                other => Err(unfinished(other).summary()),
            },
        )
    }

    fn profile(&self, result: &RunResult, request: &ProfileRequest) -> Result<Profile, String> {
        let trace = result.trace.as_ref().ok_or("the run has no trace")?;
        let opts = if request.deterministic {
            TimingOptions::deterministic()
        } else {
            TimingOptions::device_default(&self.config.hw, request.seed)
        };
        let sim = timing::simulate(trace, &self.config.hw, &opts).map_err(|e| e.to_string())?;
        let mut profile = sim.profile;
        profile.attach_roofline(timing::roofline(
            &self.config.hw,
            request.min_bytes,
            request.ops,
            result.tiling.block_dim,
        ));
        Ok(profile)
    }

    fn latency_samples(&self, result: &RunResult, seeds: &[u64]) -> Result<Vec<f64>, String> {
        let trace = result.trace.as_ref().ok_or("the run has no trace")?;
        let clean = timing::simulate(trace, &self.config.hw, &TimingOptions::deterministic())
            .map_err(|e| e.to_string())?
            .profile
            .task_duration_us;
        self.latency_samples_from_clean(result, clean, seeds)
    }

    fn latency_samples_from_clean(
        &self,
        _result: &RunResult,
        clean: f64,
        seeds: &[u64],
    ) -> Result<Vec<f64>, String> {
        Ok(seeds
            .iter()
            .map(|&seed| {
                clean
                    * timing::noise::factor(
                        &timing::Noise::Seeded {
                            seed,
                            level: self.config.hw.noise,
                        },
                        clean,
                    )
            })
            .collect())
    }

    fn timeline_json(&self, result: &RunResult) -> Option<Result<String, String>> {
        let trace = result.trace.as_ref()?;
        Some(
            timing::simulate(trace, &self.config.hw, &TimingOptions::deterministic())
                .map(|sim| timing::chrome_trace_json(trace, &sim))
                .map_err(|e| e.to_string()),
        )
    }
}
