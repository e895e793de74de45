//! The live objects a command runs on, built from its parsed arguments in
//! this one place (as ripgrep builds its `HiArgs` from the `LowArgs` the
//! parser filled): each command's `*Args` holds only what was typed; the
//! command asks this module for the operators, the device, the run store
//! and the run's identity, and the pipeline settings (the agents come from
//! [`crate::llm_args::agents`]), makes one library call, and prints.
//!
//! Nothing here decides anything a library test cannot reach: these are
//! the few lines that turn flags into objects, with the error message that
//! names the flag or the path.

use anyhow::{Context, Result};
use ascendopt_device::select::DeviceChoice;
use ascendopt_device::Device;
use ascendopt_harness::compare::CompareConfig;
use ascendopt_harness::pipeline::PipelineConfig;
use ascendopt_harness::store::{RunId, RunStore};
use ascendopt_op::package::{builtin_ops_dir, package_dirs, OpPackage};
use ascendopt_sim::{SimDevice, SimDeviceConfig};
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

/// The device of `--device` (the simulator by default, with a launch
/// wall-clock limit of `timeout_s` seconds when the command has a
/// `--timeout`); a chip times at least `samples` launches per run.
pub fn device(
    arg: &crate::device_arg::DeviceArg,
    timeout_s: Option<u64>,
    samples: usize,
) -> Result<Box<dyn Device>> {
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
