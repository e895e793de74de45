//! [`CannDevice`]: the [`Device`] of an Ascend NPU with the CANN toolkit,
//! tying together the msopgen build ([`super::build`]), the aclnn runner
//! ([`super::runner`]) and `msprof op` ([`super::msprof`]).
//!
//! - Build: one folder per candidate under `<work>/builds/<content hash>/`
//!   (the msopgen project in shared-library mode, its own vendor name,
//!   nothing installed into the toolkit's opp folder) and the runner
//!   compiled against that build's `libcust_opapi.so`. A finished build is
//!   reused (its folder holds a `done` mark).
//! - Run: each launch is one runner process (never two operators' aclnn
//!   libraries in one process), inputs and poisoned outputs as files in a
//!   fresh job folder. The first launch is the checked one; then the
//!   timing: [`CannConfig::warmup`] launches, then [`CannConfig::repeats`]
//!   launches each between a pair of ACL events ([`runner::TIMING`]). The
//!   harness takes the median of those samples and its acceptance rule
//!   compares them. Runs on one chip are serialised.
//! - Profile: a run that keeps its "trace" (the benchmark case) is run a
//!   second time under `msprof op` (clock warm-up, first kernel, default
//!   metrics), and OpBasicInfo + PipeUtilization become the typed profile
//!   ([`chip_profile`]); a sample below the rated clock is taken again.
//! - Failures are run outcomes with the chip's message: 561002 a tiling
//!   failure, 561003 and AI Core exceptions (507014/507015/507035) faults,
//!   207001 out of memory, a stream-sync timeout (507046) or the wall-clock
//!   limit a timeout. Whenever the runner died, hung or reported an error
//!   that poisons the process, the device is reset (`runner --reset`,
//!   `aclrtResetDevice` in a fresh process) before the next evaluation.
//!
//! None of this has run on a chip: it is tested against scripted
//! stand-ins of msopgen, build.sh, bisheng, msprof and the runner.

use super::build::{self, CannTarget, Step};
use super::child::{self, Ended};
use super::{chip_profile, diagnostics, job, msprof, runner};
use crate::launch::{Platform, TilingInfo};
use crate::profile::Profile;
use crate::{
    Artifact, Device, DeviceError, Measurement, MissingDetail, ProfileRequest, QueryError,
    RunOutcome, RunRequest, RunResult, SharedError,
};
use ascendopt_op::opdef::{ge_name, AttrDesc, OpDefDesc, ParamDesc, ParamType};
use ascendopt_op::package::OpPackage;
use ascendopt_op::spec::{AttrType, DtypeRule, OpSpec};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Everything the CANN device needs.
#[derive(Debug, Clone)]
pub struct CannConfig {
    /// The runtime device id (`aclrtSetDevice`), `N` of `--device cann:N`.
    pub device_id: u32,
    /// The chip builds are for.
    pub target: CannTarget,
    /// What the harness is told about the chip.
    pub platform: Platform,
    /// Builds, runner jobs and profiles go under it.
    pub work_dir: PathBuf,
    /// `PATH` for the CANN tools (after `set_env.sh`).
    pub path: String,
    /// `ASCEND_HOME_PATH`: the toolkit's `include/` and `lib64/`.
    pub toolkit: Option<PathBuf>,
    /// Libraries the runner links, besides the build's own (9.x:
    /// `nnopbase acl_rt`, 8.x: `nnopbase ascendcl`; cann-device.md §3).
    pub runner_libs: Vec<String>,
    /// Launches before the timed ones.
    pub warmup: u32,
    /// Timed launches, one latency sample each.
    pub repeats: u32,
    /// Wall-clock limit of one runner (or msprof) process; the runner's
    /// own stream-sync timeout is this limit minus a margin.
    pub run_limit: Duration,
    /// Profile the benchmark case with `msprof op`; without it a profile
    /// holds only the events' median as Task Duration.
    pub msprof: bool,
    /// Wall-clock limit of each build tool (msopgen, build.sh, bisheng):
    /// a build that runs longer fails as a compile error.
    pub build_limit: Duration,
}

impl CannConfig {
    /// Device `device_id` with the toolkit of the environment
    /// (`ASCEND_HOME_PATH`, `PATH`), work under the cache folder
    /// (`ASCENDOPT_CACHE_DIR`, else `$XDG_CACHE_HOME/ascendopt`, else
    /// `~/.cache/ascendopt`) in `cann/`, 10 warm-ups, 30 samples, 60 s.
    pub fn from_env(device_id: u32, platform: Platform) -> CannConfig {
        let cache = std::env::var_os("ASCENDOPT_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("ascendopt"))
            })
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/ascendopt")))
            .unwrap_or_else(|| std::env::temp_dir().join("ascendopt"));
        CannConfig {
            device_id,
            target: CannTarget {
                soc_version: platform.soc_version.clone(),
                compute_unit: compute_unit(&platform.soc_version),
            },
            platform,
            work_dir: cache.join("cann"),
            path: std::env::var("PATH").unwrap_or_default(),
            toolkit: std::env::var_os("ASCEND_HOME_PATH").map(PathBuf::from),
            runner_libs: vec!["nnopbase".into(), "ascendcl".into()],
            warmup: 10,
            repeats: 30,
            run_limit: Duration::from_secs(60),
            msprof: true,
            build_limit: Duration::from_secs(20 * 60),
        }
    }
}

impl CannConfig {
    /// This configuration with the configuration file's `[cann]` settings
    /// applied: the toolkit and the work folder only where the environment
    /// did not set them (`ASCEND_HOME_PATH`, `ASCENDOPT_CACHE_DIR`, read
    /// through `env`), the others over the defaults.
    pub fn with_settings(
        mut self,
        settings: &crate::config_file::CannSettings,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> CannConfig {
        let unset = |k: &str| env(k).is_none_or(|v| v.is_empty());
        if let (Some(t), true) = (&settings.toolkit, unset("ASCEND_HOME_PATH")) {
            self.toolkit = Some(t.clone());
        }
        if let (Some(w), true) = (&settings.work_dir, unset("ASCENDOPT_CACHE_DIR")) {
            self.work_dir = w.clone();
        }
        if let Some(libs) = &settings.runner_libs {
            self.runner_libs = libs.clone();
        }
        if let Some(n) = settings.warmup {
            self.warmup = n;
        }
        if let Some(n) = settings.repeats {
            self.repeats = n;
        }
        if let Some(m) = settings.msprof {
            self.msprof = m;
        }
        self
    }
}

/// `Ascend910B2` -> `ascend910b`, `Ascend310B1` -> `ascend310b` (the
/// OpDef's `AddConfig` name); also maps an op.toml `chip` (`ascend910b3`)
/// to the compute unit it builds for.
fn compute_unit(soc: &str) -> String {
    let lower = soc.to_ascii_lowercase();
    ["ascend910b", "ascend310b", "ascend310p"]
        .into_iter()
        .find(|family| lower.starts_with(family))
        .map_or(lower.clone(), str::to_string)
}

/// Why a build on the chip could not be attempted
/// ([`DeviceError::Setup`]).
#[derive(Debug, thiserror::Error)]
enum BuildSetup {
    /// The op.toml names a chip of another family than this NPU's.
    #[error(
        "{}: op.toml's chip `{chip}` is not this NPU's {soc_version} (`{compute_unit}`): judge \
         it on an NPU of that chip, or on the simulator's `{chip}` profile (`--device sim`)",
        file.display()
    )]
    OtherChip {
        /// The op.toml.
        file: PathBuf,
        /// Its chip.
        chip: String,
        /// This NPU's SoC version.
        soc_version: String,
        /// This NPU's compute unit.
        compute_unit: String,
    },
    /// No toolkit to build with.
    #[error(
        "ASCEND_HOME_PATH is not set: source the toolkit's set_env.sh (ascendopt doctor says \
         where it is)"
    )]
    NoToolkit,
    /// The build key could not be computed, or a file of the build could
    /// not be written.
    #[error(transparent)]
    Step(#[from] StepFailure),
    /// The msopgen project could not be planned.
    #[error(transparent)]
    Plan(#[from] build::PlanError),
    /// A step of the msopgen build could not be run.
    #[error(transparent)]
    Build(#[from] build::StepError),
    /// The aclnn runner did not compile.
    #[error("compiling the aclnn runner: {0}")]
    Runner(#[source] build::StepError),
    /// The runner's compiler finished without leaving the runner.
    #[error("bisheng finished but left no {}", path.display())]
    NoRunner {
        /// Where the runner should be.
        path: PathBuf,
    },
}

impl BuildSetup {
    fn io(path: &Path, source: std::io::Error) -> BuildSetup {
        BuildSetup::Step(StepFailure::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// Why a step of a job on the chip failed (the job folder, a reset,
/// `msprof op`, the build key); its message becomes the run's outcome or
/// the setup error.
#[derive(Debug, thiserror::Error)]
enum StepFailure {
    /// A file or folder of the job could not be made or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A tool could not be run.
    #[error(transparent)]
    Child(#[from] child::ChildError),
    /// A tool exited with a failure.
    #[error("{tool} failed ({status}): {tail}")]
    Failed {
        /// `aclrtResetDevice`, `msprof op`.
        tool: &'static str,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The last lines it printed.
        tail: String,
    },
    /// A reset did not end within the limit.
    #[error("aclrtResetDevice hung ({after_ms} ms)")]
    ResetHung {
        /// How long it ran.
        after_ms: u64,
    },
    /// `msprof op` did not end within the limit.
    #[error("msprof op did not finish in {after_ms} ms")]
    MsprofHung {
        /// How long it ran.
        after_ms: u64,
    },
    /// `msprof op` said some kernels failed to profile.
    #[error("msprof op: {failed} kernel(s) failed to profile: {tail}")]
    NotProfiled {
        /// How many.
        failed: u32,
        /// The last lines of its console.
        tail: String,
    },
    /// Its output folder could not be read.
    #[error(transparent)]
    Output(#[from] msprof::MsprofError),
    /// Its output held no kernel.
    #[error("{}: msprof profiled no kernel", place.display())]
    NoKernel {
        /// Where it saved its output.
        place: PathBuf,
    },
    /// The operator's OpDef has no op JSON (the build key covers it).
    #[error(transparent)]
    Plan(#[from] build::PlanError),
    /// The package's files could not be listed.
    #[error(transparent)]
    Package(#[from] ascendopt_op::OpError),
    /// Every attempt ran below the rated clock.
    #[error("the chip ran at {current_mhz} MHz, below its rated {rated_mhz} MHz, in {attempts} attempts: the profile is rejected")]
    BelowClock {
        /// The clock of the last attempt.
        current_mhz: f64,
        /// The rated clock.
        rated_mhz: f64,
        /// Attempts made.
        attempts: u32,
    },
}

impl StepFailure {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StepFailure + '_ {
        move |source| StepFailure::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// An Ascend NPU driven through the CANN toolkit.
#[derive(Debug)]
pub struct CannDevice {
    config: CannConfig,
    /// One runner (or msprof) on the chip at a time.
    chip: Mutex<()>,
    /// One build at a time (two threads may build the same candidate: the
    /// second then finds it done).
    builds: Mutex<()>,
    jobs: AtomicU64,
}

impl CannDevice {
    /// A device with this configuration.
    pub fn new(config: CannConfig) -> CannDevice {
        CannDevice {
            config,
            chip: Mutex::new(()),
            builds: Mutex::new(()),
            jobs: AtomicU64::new(0),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &CannConfig {
        &self.config
    }

    fn setup(failure: BuildSetup) -> DeviceError {
        DeviceError::Setup(SharedError::new(failure))
    }

    /// A fresh job folder, private to the user (msprof refuses an output
    /// folder whose parent others can write).
    fn job_dir(&self) -> Result<PathBuf, StepFailure> {
        let n = self.jobs.fetch_add(1, Ordering::Relaxed);
        let dir = self
            .config
            .work_dir
            .join("jobs")
            .join(format!("{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(StepFailure::io(&dir))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .map_err(StepFailure::io(&dir))?;
        Ok(dir)
    }

    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("PATH", &self.config.path);
        cmd
    }

    /// The runner's stream-sync timeout: the wall-clock limit less a
    /// margin for start-up and copies.
    fn sync_ms(&self) -> u64 {
        let ms = self.config.run_limit.as_millis() as u64;
        (ms.saturating_sub(ms / 4)).max(1)
    }

    /// `aclrtResetDevice` in a fresh process; Err with its output when
    /// that fails too.
    fn reset(&self, runner: &Path, dir: &Path) -> Result<(), StepFailure> {
        let mut cmd = self.command(runner);
        cmd.arg("--reset").arg(self.config.device_id.to_string());
        match child::run(cmd, self.config.run_limit, &dir.join("reset"))? {
            Ended::Exited { status, .. } if status.success() => Ok(()),
            Ended::Exited { status, output } => Err(StepFailure::Failed {
                tool: "aclrtResetDevice",
                status,
                tail: child::tail(&output, 4),
            }),
            Ended::TimedOut { after_ms, .. } => Err(StepFailure::ResetHung { after_ms }),
        }
    }

    /// Runs the runner on job folder `dir`; the outcome with the samples.
    fn launch(&self, artifact: &Artifact, dir: &Path) -> Result<Vec<f64>, Box<RunOutcome>> {
        let runner = &artifact.kernel_lib;
        let mut cmd = self.command(runner);
        cmd.arg(dir)
            .arg(self.config.device_id.to_string())
            .arg(self.config.warmup.to_string())
            .arg(self.config.repeats.to_string())
            .arg(self.sync_ms().to_string());
        let ended = child::run(cmd, self.config.run_limit, &dir.join("runner")).map_err(|e| {
            Box::new(RunOutcome::DeviceFailed {
                message: e.to_string(),
            })
        })?;
        let reset_after = |outcome: RunOutcome| match self.reset(runner, dir) {
            Ok(()) => outcome,
            Err(e) => RunOutcome::DeviceFailed {
                message: format!(
                    "{}; then {e}: the chip may need `npu-smi` attention",
                    outcome.summary()
                ),
            },
        };
        let (status, output) = match ended {
            Ended::TimedOut { after_ms, .. } => {
                return Err(Box::new(reset_after(RunOutcome::TimedOut { after_ms })))
            }
            Ended::Exited { status, output } => (status, output),
        };
        let result = std::fs::read_to_string(dir.join("result.txt")).unwrap_or_default();
        match runner::parse_result(&result) {
            Some(runner::RunnerResult::Ok { samples_us }) => Ok(samples_us),
            Some(runner::RunnerResult::Error {
                code,
                message,
                fatal,
            }) => {
                let outcome = match code {
                    561002 => RunOutcome::TilingFailed { message },
                    207001 => RunOutcome::OutOfMemory { detail: message },
                    507046 | 507014 => RunOutcome::TimedOut {
                        after_ms: self.sync_ms(),
                    },
                    -1 | 561003 => RunOutcome::DeviceFailed { message },
                    _ => RunOutcome::Fault {
                        block: core_id(&message).unwrap_or(0),
                        message,
                        loc: None,
                    },
                };
                Err(Box::new(if fatal { reset_after(outcome) } else { outcome }))
            }
            None => {
                use std::os::unix::process::ExitStatusExt;
                let signal = match status.signal() {
                    Some(s) => format!("signal {s}"),
                    None => format!("exit({})", status.code().unwrap_or(-1)),
                };
                Err(Box::new(reset_after(RunOutcome::Crashed {
                    signal,
                    detail: child::tail(&output, 8),
                })))
            }
        }
    }

    /// One run in job folder `dir`.
    fn run_in(&self, dir: &Path, artifact: &Artifact, request: &RunRequest) -> RunOutcome {
        let attrs = std::fs::read_to_string(artifact.kernel_lib.with_file_name("attrs.txt"))
            .unwrap_or_default();
        let attrs: Vec<String> = attrs
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        if let Err(e) = job::write(dir, request, &attrs) {
            return RunOutcome::DeviceFailed {
                message: e.to_string(),
            };
        }
        // Keep the job's inputs for msprof before the runner overwrites
        // the outputs.
        let pristine = dir.join("pristine");
        if request.keep_trace && self.config.msprof {
            if let Err((p, e)) = ascendopt_op::package::copy_tree(dir, &pristine, &["pristine"]) {
                return RunOutcome::DeviceFailed {
                    message: format!("{}: {e}", p.display()),
                };
            }
        }
        let _chip = self.chip.lock().unwrap_or_else(|p| p.into_inner());
        let samples = match self.launch(artifact, dir) {
            Ok(s) => s,
            Err(outcome) => return *outcome,
        };
        let outputs = match job::read_outputs(dir, request) {
            Ok(o) => o,
            Err(e) => {
                return RunOutcome::DeviceFailed {
                    message: e.to_string(),
                }
            }
        };
        let profile = if !request.keep_trace {
            None
        } else if self.config.msprof {
            Some(self.msprof(artifact, &pristine).map_err(SharedError::new))
        } else {
            Some(Ok(self.events_profile(&samples)))
        };
        let block_dim = match &profile {
            Some(Ok(p)) => p.block_dim,
            _ => 0,
        };
        RunOutcome::Finished(RunResult {
            outputs,
            tiling: TilingInfo {
                block_dim,
                tiling_key: 0,
                data: Vec::new(),
                workspace: 0,
                output_init: Vec::new(),
            },
            detail: None,
            findings: Vec::new(),
            hazards: Vec::new(),
            printed: String::new(),
            measured: Some(Box::new(Measurement {
                samples_us: samples,
                profile,
            })),
        })
    }

    /// Profiles the checked launch of job `dir` (a copy of the run's job
    /// taken before it ran) with `msprof op`.
    fn msprof(&self, artifact: &Artifact, dir: &Path) -> Result<Profile, StepFailure> {
        let out = dir.join("msprof");
        let mut last = StepFailure::BelowClock {
            current_mhz: f64::NAN,
            rated_mhz: f64::NAN,
            attempts: 0,
        };
        // A sample below the rated clock is taken again, twice at most.
        for attempt in 0..3 {
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(&out).map_err(StepFailure::io(&out))?;
            let mut cmd = self.command(Path::new("msprof"));
            cmd.arg("op")
                .arg(format!("--output={}", out.display()))
                .arg(&artifact.kernel_lib)
                .arg(dir)
                .arg(self.config.device_id.to_string())
                .arg("0")
                .arg("0")
                .arg(self.sync_ms().to_string());
            let log = dir.join(format!("msprof-{attempt}"));
            let console = match child::run(cmd, self.config.run_limit, &log)? {
                Ended::Exited { status, output } if status.success() => output,
                Ended::Exited { status, output } => {
                    return Err(StepFailure::Failed {
                        tool: "msprof op",
                        status,
                        tail: child::tail(&output, 6),
                    })
                }
                Ended::TimedOut { after_ms, .. } => {
                    return Err(StepFailure::MsprofHung { after_ms })
                }
            };
            let said = msprof::parse_console(&console);
            if let Some((_, failed)) = said.success_failed.filter(|(_, f)| *f > 0) {
                return Err(StepFailure::NotProfiled {
                    failed,
                    tail: child::tail(&console, 6),
                });
            }
            let place = said.saved_in.unwrap_or_else(|| out.clone());
            let kernels = msprof::read_output(&place)?;
            let kernel = kernels
                .into_iter()
                .next()
                .ok_or(StepFailure::NoKernel { place })?;
            match kernel.at_rated_clock() {
                Some(false) => {
                    last = StepFailure::BelowClock {
                        current_mhz: kernel.basic.current_freq_mhz.unwrap_or(f64::NAN),
                        rated_mhz: kernel.basic.rated_freq_mhz.unwrap_or(f64::NAN),
                        attempts: attempt + 1,
                    };
                }
                _ => {
                    return Ok(chip_profile::from_msprof(
                        &kernel,
                        &self.config.platform.soc_version,
                    ))
                }
            }
        }
        Err(last)
    }

    /// A profile of the events alone (msprof off): the samples' median as
    /// Task Duration, everything else absent.
    fn events_profile(&self, samples: &[f64]) -> Profile {
        let mut s: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        s.sort_by(f64::total_cmp);
        let median = match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        };
        let kernel = msprof::KernelProfile {
            files: msprof::KernelFiles {
                dir: PathBuf::new(),
                op_name: None,
                index: None,
                device: None,
                metrics: Default::default(),
            },
            basic: crate::msprof_csv::OpBasicInfo {
                op_name: String::new(),
                op_type: "unknown".into(),
                task_duration_us: median,
                block_dim: 0,
                mix_block_dim: None,
                device_id: Some(self.config.device_id),
                pid: None,
                current_freq_mhz: None,
                rated_freq_mhz: None,
            },
            pipes: Vec::new(),
        };
        chip_profile::from_msprof(&kernel, &self.config.platform.soc_version)
    }
}

/// `core id is N` in a chip's message (the plog's AI Core exception line).
fn core_id(message: &str) -> Option<u32> {
    let at = message.find("core id is")?;
    message[at + "core id is".len()..]
        .split(|c: char| !c.is_ascii_digit() && c != ' ')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The OpDef msopgen generates the project from, as op.toml declares it
/// (the package's own `op_host/` replaces the generated one, so this only
/// has to agree with it).
pub fn opdef_of(spec: &OpSpec) -> OpDefDesc {
    let first_input_dtypes = |name: &str| {
        spec.inputs
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.dtypes.clone())
            .unwrap_or_default()
    };
    let param = |t: &ascendopt_op::spec::TensorSpec, is_input: bool| {
        let mut dtypes = t.dtypes.clone();
        if dtypes.is_empty() {
            dtypes = match &t.rule {
                Some(DtypeRule::SameAs(n)) | Some(DtypeRule::RealOf(n)) => first_input_dtypes(n),
                Some(DtypeRule::Fixed(d)) => vec![*d],
                _ => spec
                    .inputs
                    .first()
                    .map(|i| i.dtypes.clone())
                    .unwrap_or_default(),
            };
        }
        ParamDesc {
            name: t.name.clone(),
            param_type: if t.list {
                ParamType::Dynamic
            } else if is_input && t.optional {
                ParamType::Optional
            } else {
                ParamType::Required
            },
            dtypes: dtypes.iter().map(|d| ge_name(*d).to_string()).collect(),
            dtype_list: false,
            formats: vec!["FORMAT_ND".into(); dtypes.len()],
            bin_query: Vec::new(),
            value_depend: if t.value_depend {
                "required".into()
            } else {
                "ignore".into()
            },
            scalar: None,
            follow: None,
            error: None,
        }
    };
    OpDefDesc {
        op_type: spec.op_type.clone(),
        error: None,
        tiling: true,
        inputs: spec.inputs.iter().map(|t| param(t, true)).collect(),
        outputs: spec
            .outputs
            .iter()
            .filter(|t| t.argument)
            .map(|t| param(t, false))
            .collect(),
        attrs: spec
            .attrs
            .iter()
            .map(|a| AttrDesc {
                name: a.name.clone(),
                ty: match a.ty {
                    AttrType::Int => "Int",
                    AttrType::Float => "Float",
                    AttrType::Bool => "Bool",
                    AttrType::Str => "String",
                    AttrType::ListInt => "ListInt",
                    AttrType::ListFloat => "ListFloat",
                }
                .into(),
                required: a.required,
                default: None,
            })
            .collect(),
        configs: Vec::new(),
    }
}

/// The content hash of a build: the description, the target, the runner
/// and every file of `op_host/` and `op_kernel/`.
fn build_key(
    package: &OpPackage,
    def: &OpDefDesc,
    config: &CannConfig,
) -> Result<String, StepFailure> {
    let mut h = Sha256::new();
    h.update(b"ascendopt-cann-build-v1\0");
    h.update(serde_json::to_string(&build::op_json(def)?).unwrap_or_default());
    h.update(format!("{:?}\0{:?}\0", config.target, config.runner_libs));
    h.update(runner::source(def));
    for sub in ["op_host", "op_kernel"] {
        let root = package.dir.join(sub);
        for (rel, f) in ascendopt_op::package::package_files(&root)? {
            h.update(format!("{sub}/{rel}"));
            h.update([0]);
            h.update(std::fs::read(&f).map_err(StepFailure::io(&f))?);
            h.update([0]);
        }
    }
    // The first 12 bytes of the digest, in hex.
    let mut key = format!("{:x}", h.finalize());
    key.truncate(24);
    Ok(key)
}

impl Device for CannDevice {
    fn name(&self) -> String {
        format!(
            "cann-{}:{}",
            self.config.platform.soc_version.to_ascii_lowercase(),
            self.config.device_id
        )
    }

    fn platform(&self) -> &Platform {
        &self.config.platform
    }

    fn build(&self, package: &OpPackage) -> Result<Artifact, DeviceError> {
        let started = Instant::now();
        // The op.toml's chip is the chip it is judged on: an NPU of
        // another family cannot run what its OpDef registers for it.
        if let Some(chip) = &package.spec.chip {
            if compute_unit(chip) != self.config.target.compute_unit {
                return Err(Self::setup(BuildSetup::OtherChip {
                    file: package.dir.join("op.toml"),
                    chip: chip.clone(),
                    soc_version: self.config.platform.soc_version.clone(),
                    compute_unit: self.config.target.compute_unit.clone(),
                }));
            }
        }
        let toolkit = self
            .config
            .toolkit
            .clone()
            .ok_or_else(|| Self::setup(BuildSetup::NoToolkit))?;
        let def = opdef_of(&package.spec);
        let key = build_key(package, &def, &self.config).map_err(|e| Self::setup(e.into()))?;
        let dir = self.config.work_dir.join("builds").join(&key);
        let plan = build::plan(
            &package.dir,
            &def,
            &self.config.target,
            &dir.join("work"),
            &format!("ascendopt_{key}"),
        )
        .map_err(|e| Self::setup(e.into()))?;
        let runner_dir = dir.join("runner");
        let runner_bin = runner_dir.join("runner");
        let artifact = |cached: bool| Artifact {
            key: key.clone(),
            host_lib: plan.opapi_lib.clone(),
            kernel_lib: runner_bin.clone(),
            kernel_variants: Vec::new(),
            kernel_name: package.spec.kernel.clone(),
            op_type: package.spec.op_type.clone(),
            cached,
            compile_ms: if cached {
                0
            } else {
                started.elapsed().as_millis() as u64
            },
            host_knobs: Vec::new(),
            chip: None,
        };
        let _one = self.builds.lock().unwrap_or_else(|p| p.into_inner());
        if dir.join("done").is_file() && runner_bin.is_file() {
            return Ok(artifact(true));
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&runner_dir)
            .map_err(|e| Self::setup(BuildSetup::io(&runner_dir, e)))?;
        std::fs::write(dir.join("build.sh"), build::render_script(&plan))
            .map_err(|e| Self::setup(BuildSetup::io(&dir, e)))?;
        if let Err(e) =
            build::execute_limited(&plan, &self.config.path, Some(self.config.build_limit))
        {
            let log = std::fs::read_to_string(plan.log_dir.join(format!("step-{}.log", e.index)))
                .unwrap_or_default();
            let units = diagnostics::first_errors(&log, &plan.project, &package.dir);
            let is_build_sh = matches!(
                plan.steps.get(e.index.saturating_sub(1)),
                Some(Step::Run { args, .. }) if args.first().is_some_and(|a| a == "build.sh")
            );
            if !units.is_empty() || (is_build_sh && !e.message.starts_with("cannot run")) {
                let summary = match units.first() {
                    Some(u) => {
                        format!("{} does not compile: {}: {}", u.unit, u.location, u.message)
                    }
                    None => format!("the msopgen build failed: {e}"),
                };
                return Err(DeviceError::Compile {
                    summary,
                    diagnostics: log,
                    units,
                });
            }
            return Err(Self::setup(e.into()));
        }
        // The runner, linked against this build's libcust_opapi.so.
        let source = runner_dir.join("runner.cpp");
        std::fs::write(&source, runner::source(&def))
            .map_err(|e| Self::setup(BuildSetup::io(&source, e)))?;
        let attrs: Vec<&str> = def.attrs.iter().map(|a| a.name.as_str()).collect();
        std::fs::write(runner_dir.join("attrs.txt"), attrs.join("\n"))
            .map_err(|e| Self::setup(BuildSetup::io(&runner_dir, e)))?;
        let op_api = plan
            .opapi_lib
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut args: Vec<String> = vec![
            "-x".into(),
            "c++".into(),
            "-std=c++17".into(),
            "-O2".into(),
            source.display().to_string(),
            "-o".into(),
            runner_bin.display().to_string(),
            format!("-I{}", toolkit.join("include").display()),
            format!("-I{}", op_api.join("include").display()),
            format!("-L{}", toolkit.join("lib64").display()),
            format!("-L{}", op_api.join("lib").display()),
            format!(
                "-Wl,-rpath,{}:{}",
                op_api.join("lib").display(),
                toolkit.join("lib64").display()
            ),
            "-lcust_opapi".into(),
        ];
        args.extend(self.config.runner_libs.iter().map(|l| format!("-l{l}")));
        let steps = [Step::Run {
            program: "bisheng".into(),
            args,
            cwd: runner_dir.clone(),
            set_env: Vec::new(),
            unset_env: Vec::new(),
        }];
        build::execute_steps(
            &steps,
            plan.steps.len() + 1,
            &plan.log_dir,
            &self.config.path,
            Some(self.config.build_limit),
        )
        .map_err(|e| Self::setup(BuildSetup::Runner(e)))?;
        if !runner_bin.is_file() {
            return Err(Self::setup(BuildSetup::NoRunner { path: runner_bin }));
        }
        std::fs::write(dir.join("done"), "").map_err(|e| Self::setup(BuildSetup::io(&dir, e)))?;
        Ok(artifact(false))
    }

    fn run(&self, artifact: &Artifact, request: &RunRequest) -> RunOutcome {
        let dir = match self.job_dir() {
            Ok(d) => d,
            Err(e) => {
                return RunOutcome::DeviceFailed {
                    message: e.to_string(),
                }
            }
        };
        let outcome = self.run_in(&dir, artifact, request);
        let _ = std::fs::remove_dir_all(&dir);
        outcome
    }

    fn profile(
        &self,
        result: &RunResult,
        _request: &ProfileRequest,
    ) -> Result<Profile, QueryError> {
        match result.measured.as_ref().and_then(|m| m.profile.as_ref()) {
            Some(Ok(p)) => Ok(p.clone()),
            Some(Err(e)) => Err(QueryError::Failed(e.clone())),
            None => Err(MissingDetail::NotProfiled.into()),
        }
    }

    fn latency_samples(
        &self,
        result: &RunResult,
        _clean: &Profile,
        seeds: &[u64],
    ) -> Result<Vec<f64>, QueryError> {
        let samples = &result
            .measured
            .as_ref()
            .ok_or(MissingDetail::NoSamples)?
            .samples_us;
        if samples.len() < seeds.len() {
            return Err(MissingDetail::TooFewSamples {
                measured: samples.len(),
                asked: seeds.len(),
            }
            .into());
        }
        Ok(samples[..seeds.len()].to_vec())
    }

    fn timeline_json(&self, _result: &RunResult) -> Option<Result<String, QueryError>> {
        None
    }
}
