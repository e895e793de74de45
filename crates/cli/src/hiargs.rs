//! The live objects a command runs on, built from its parsed arguments in
//! this one place (as ripgrep builds its `HiArgs` from the `LowArgs` the
//! parser filled): each command's `*Args` holds only what was typed; the
//! command asks this module for the operators, the device, the banks, and
//! for a run of the method ([`MethodRun`]: agents, run store, run
//! identity, device, pipeline settings), makes one library call, and
//! prints.
//!
//! Nothing here decides anything a library test cannot reach: these are
//! the few lines that turn flags into objects, with the error message that
//! names the flag or the path.

use crate::device_arg::DeviceArg;
use crate::llm_args::{agents, Agents, LlmArgs};
use anyhow::{Context, Result};
use ascendopt_agent::session::RunContext;
use ascendopt_bank::store::Bank;
use ascendopt_device::select::DeviceChoice;
use ascendopt_device::Device;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunId, RunStore};
use ascendopt_op::package::{builtin_ops_dir, package_dirs, OpPackage};
use ascendopt_sim::build::{BuildCache, Toolchain};
use ascendopt_sim::{SimDevice, SimDeviceConfig};
use ascendopt_simtools::compat::CompatConfig;
use ascendopt_simtools::import::ImportConfig;
use std::path::{Path, PathBuf};

/// The folder of an operator named on the command line: a folder with an
/// op.toml, or the name of a built-in operator.
pub fn resolve_op(arg: &str) -> Result<PathBuf> {
    let p = Path::new(arg);
    if p.join("op.toml").is_file() {
        return Ok(p.to_path_buf());
    }
    let builtin = builtin_ops_dir().join(arg);
    if builtin.join("op.toml").is_file() {
        return Ok(builtin);
    }
    if p.is_dir() {
        anyhow::bail!("{arg}: no op.toml in this folder");
    }
    anyhow::bail!(
        "{arg}: not an operator folder and not a built-in operator (see {})",
        builtin_ops_dir().display()
    )
}

/// The folders of the operators named in `args` (names of built-in ones or
/// folders); when none is named, every built-in operator.
pub fn op_dirs(args: &[String]) -> Result<Vec<PathBuf>> {
    if args.is_empty() {
        package_dirs(&builtin_ops_dir()).context("listing the built-in operators")
    } else {
        args.iter().map(|a| resolve_op(a)).collect()
    }
}

/// The packages in `dirs`, each load error naming its folder.
pub fn load_packages(dirs: &[PathBuf]) -> Result<Vec<OpPackage>> {
    dirs.iter()
        .map(|d| {
            OpPackage::load(d, &ascendopt_golden::BUILTINS)
                .with_context(|| format!("loading {}", d.display()))
        })
        .collect()
}

/// The simulator (the standard 910B2 profile), with a launch wall-clock
/// limit of `timeout_s` seconds when the command has a `--timeout`.
pub fn sim_device(timeout_s: Option<u64>) -> Result<SimDevice> {
    let mut config = SimDeviceConfig::standard()?;
    if let Some(s) = timeout_s {
        config.limits.wall_ms = s.saturating_mul(1000);
    }
    Ok(SimDevice::new(config))
}

/// The simulator (the standard 910B2 profile) with a build cache of its
/// own at `cache` (`bench-speed`: the first build is a real compile).
pub fn sim_device_cached_at(cache: &Path) -> Result<SimDevice> {
    let mut config = SimDeviceConfig::standard()?;
    config.cache = BuildCache::at(cache);
    Ok(SimDevice::new(config))
}

/// The settings of `compat` on this machine (toolchain, build cache, the
/// simulator's launch limits and chip).
pub fn compat_config(seed: u64) -> Result<CompatConfig> {
    let sim = SimDeviceConfig::standard()?;
    Ok(CompatConfig {
        toolchain: Toolchain::from_env(),
        cache: BuildCache::from_env().context("the build cache")?,
        seed,
        limits: sim.limits,
        soc: sim.hw.soc_version,
    })
}

/// The settings of `import` (and `compat --import`) on this machine.
pub fn import_config(force: bool) -> Result<ImportConfig> {
    let sim = SimDeviceConfig::standard()?;
    Ok(ImportConfig {
        toolchain: Toolchain::from_env(),
        cache: BuildCache::from_env().context("the build cache")?,
        limits: sim.limits,
        soc: sim.hw.soc_version,
        python: std::env::var("ASCENDOPT_PYTHON").unwrap_or_else(|_| "python3".into()),
        force,
    })
}

/// The device of `--device` (the simulator by default, with a launch
/// wall-clock limit of `timeout_s` seconds when the command has a
/// `--timeout`); a chip times at least `samples` launches per run.
pub fn device(arg: &DeviceArg, timeout_s: Option<u64>, samples: usize) -> Result<Box<dyn Device>> {
    device_on(arg.choice()?, arg.chip()?, timeout_s, samples)
}

/// The device `choice`, as [`device`] opens the choice of `--device`.
pub fn device_of(
    choice: DeviceChoice,
    timeout_s: Option<u64>,
    samples: usize,
) -> Result<Box<dyn Device>> {
    device_on(choice, None, timeout_s, samples)
}

/// The device `choice` whose simulator runs every operator on `chip` when
/// given (`--chip`), else on the chip its op.toml names.
fn device_on(
    choice: DeviceChoice,
    chip: Option<String>,
    timeout_s: Option<u64>,
    samples: usize,
) -> Result<Box<dyn Device>> {
    let mut config = SimDeviceConfig::standard()?;
    config.chip_override = chip;
    if let Some(s) = timeout_s {
        config.limits.wall_ms = s.saturating_mul(1000);
    }
    let file = ascendopt_device::config_file::load(&|k| std::env::var(k).ok())
        .map_err(anyhow::Error::msg)?;
    Ok(ascendopt_sim::open::open(
        choice, config, samples, &file.cann,
    ))
}

/// The run store at `path` (created when missing).
pub fn open_store(path: &Path) -> Result<RunStore> {
    RunStore::open(path).with_context(|| format!("opening the run store {}", path.display()))
}

/// The run of `config` in `store`: the earlier one with the same
/// configuration (resumed, `true`), else a new one.
pub fn find_or_create_run(store: &RunStore, config: &serde_json::Value) -> Result<(RunId, bool)> {
    Ok(store.find_or_create_run(config)?)
}

/// The pipeline settings of `--repeats`, `--deterministic` and `--seed`
/// (`None` repeats: the acceptance rule's recommended count).
pub fn pipeline(repeats: Option<usize>, deterministic: bool, seed: u64) -> PipelineConfig {
    PipelineConfig {
        repeats: repeats.unwrap_or(CompareConfig::RECOMMENDED.repeats).max(1),
        deterministic,
        seed,
    }
}

/// What a command that runs the method in a run store typed: where the
/// store is, the device, the agents, the measurement settings.
#[derive(Debug)]
pub struct MethodArgs<'a> {
    /// `--device`.
    pub device: &'a DeviceArg,
    /// The agents' flags (`--proposer`, the LLM settings).
    pub llm: &'a LlmArgs,
    /// `--seed`.
    pub seed: u64,
    /// `--repeats`.
    pub repeats: Option<usize>,
    /// `--deterministic`.
    pub deterministic: bool,
    /// `--timeout`, seconds.
    pub timeout_s: u64,
    /// The run store's file.
    pub runs: PathBuf,
    /// Where candidate packages are written.
    pub workdir: PathBuf,
    /// Resume the earlier run with the same configuration (else always a
    /// new run).
    pub resume: bool,
}

/// The live objects of one run of the method, built from [`MethodArgs`]:
/// the agents (checked before any run is created), the run store, the run
/// (recorded with its configuration) and the device.
pub struct MethodRun {
    /// The proposer, diagnoser and distiller, attached to the run.
    pub agents: Agents,
    /// Everything else: what an evaluation needs ([`RunEnv::ctx`]).
    pub env: RunEnv,
}

/// A run's store, identity, device and settings.
pub struct RunEnv {
    /// The run store.
    pub store: RunStore,
    /// Its file.
    pub runs: PathBuf,
    /// The run.
    pub run: RunId,
    /// Whether the run was resumed (same configuration as an earlier one).
    pub resumed: bool,
    /// The run's configuration, as recorded.
    pub config: serde_json::Value,
    /// The device.
    pub device: Box<dyn Device>,
    /// Repeats, noise, seed.
    pub pipeline: PipelineConfig,
    /// Where candidate packages are written.
    pub workdir: PathBuf,
}

impl RunEnv {
    /// The context the method's loops run in.
    pub fn ctx(&self) -> RunContext<'_> {
        RunContext {
            device: &*self.device,
            store: &self.store,
            run: self.run,
            pipeline: self.pipeline.clone(),
            compare: CompareConfig::RECOMMENDED,
            workdir: self.workdir.clone(),
        }
    }
}

impl MethodRun {
    /// Builds the run of `args`: the agents first (an LLM's configuration,
    /// key and endpoint are checked before anything is recorded), then the
    /// store, the run with the configuration `config` returns for these
    /// agents and settings, and the device.
    pub fn open(
        args: &MethodArgs<'_>,
        config: impl FnOnce(&Agents, &PipelineConfig) -> serde_json::Value,
    ) -> Result<MethodRun> {
        if let Some(parent) = args.runs.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::create_dir_all(&args.workdir)
            .with_context(|| format!("creating {}", args.workdir.display()))?;
        let agents = agents(args.llm, args.seed, &args.runs)?;
        let store = open_store(&args.runs)?;
        let pipeline = pipeline(args.repeats, args.deterministic, args.seed);
        let config = config(&agents, &pipeline);
        let (run, resumed) = if args.resume {
            find_or_create_run(&store, &config)?
        } else {
            (store.create_run(&config)?, false)
        };
        agents.attach_run(run);
        let device = device(args.device, Some(args.timeout_s), pipeline.repeats)?;
        Ok(MethodRun {
            agents,
            env: RunEnv {
                store,
                runs: args.runs.clone(),
                run,
                resumed,
                config,
                device,
                pipeline,
                workdir: args.workdir.clone(),
            },
        })
    }
}

/// The bank at `path`, opened for reading.
pub fn open_bank(path: &Path) -> Result<Bank> {
    Bank::open(path).with_context(|| format!("opening the bank {}", path.display()))
}

/// The bank `ascendopt bank list|show|search|export|freeze` works on: it
/// must exist already (a command that only reads a bank never creates
/// one).
pub fn existing_bank(path: &Path) -> Result<Bank> {
    Ok(ascendopt_bank::commands::open_existing(path)?)
}

/// The bank `ascendopt bank import|from-docs` adds entries to, created
/// when missing.
pub fn bank_to_fill(path: &Path) -> Result<Bank> {
    Ok(Bank::open(path)?)
}

/// The frozen bank Stage I retrieves from, when it `retrieves`: `path`
/// must name an existing bank (`--bank FILE`).
pub fn stage1_bank(path: Option<&Path>, retrieves: bool) -> Result<Option<Bank>> {
    if !retrieves {
        return Ok(None);
    }
    let Some(path) = path else {
        anyhow::bail!("Stage I with experience needs --bank FILE (or pass --no-retrieval)");
    };
    if !path.is_file() {
        anyhow::bail!(
            "{}: no such bank (build one with `ascendopt rewind`)",
            path.display()
        );
    }
    open_bank(path).map(Some)
}

/// The bank Rewind adds entries to (created when missing; a frozen one is
/// refused).
pub fn rewind_bank(path: &Path) -> Result<Bank> {
    let bank = Bank::open(path).with_context(|| format!("opening {}", path.display()))?;
    if bank.is_frozen()? {
        anyhow::bail!(
            "bank {} is frozen: Rewind cannot add entries to it",
            path.display()
        );
    }
    Ok(bank)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operator_is_a_folder_or_a_builtin_name_and_a_bad_one_is_named() {
        let builtin = resolve_op("add_custom").unwrap();
        assert!(builtin.join("op.toml").is_file());
        assert_eq!(resolve_op(builtin.to_str().unwrap()).unwrap(), builtin);
        let err = resolve_op("no_such_op_xyz").unwrap_err().to_string();
        assert!(
            err.starts_with("no_such_op_xyz: not an operator folder"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let err = resolve_op(dir.path().to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("no op.toml in this folder"), "{err}");
        assert!(op_dirs(&[]).unwrap().len() > 1);
    }

    #[test]
    fn repeats_default_to_the_rule_and_never_drop_to_zero() {
        assert_eq!(
            pipeline(None, false, 1).repeats,
            CompareConfig::RECOMMENDED.repeats
        );
        assert_eq!(pipeline(Some(0), true, 7).repeats, 1);
        let p = pipeline(Some(5), true, 7);
        assert_eq!((p.repeats, p.deterministic, p.seed), (5, true, 7));
    }

    #[test]
    fn a_run_with_the_same_configuration_is_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let store = open_store(&dir.path().join("runs.sqlite")).unwrap();
        let a = serde_json::json!({"command": "optimize", "seed": 1});
        let b = serde_json::json!({"command": "optimize", "seed": 2});
        let (run_a, resumed) = find_or_create_run(&store, &a).unwrap();
        assert!(!resumed);
        assert_eq!(find_or_create_run(&store, &a).unwrap(), (run_a, true));
        assert_ne!(find_or_create_run(&store, &b).unwrap().0, run_a);
    }
}
