//! `--device sim|cann|cann:N` of the commands that evaluate
//! (`ASCENDOPT_DEVICE` when the flag is absent, then the configuration
//! file's `device`; the simulator by default).

use anyhow::{bail, Result};
use ascendopt_device::config_file;
use ascendopt_device::select::{self, DeviceChoice};

/// The `--device` flag.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DeviceArg {
    /// Where candidates are built, run and timed: `sim` (the simulated
    /// Ascend 910B2, the default), `cann` or `cann:N` (NPU N through the
    /// installed CANN toolkit). Default: $ASCENDOPT_DEVICE, else `device`
    /// in the configuration file ($ASCENDOPT_CONFIG, else
    /// ~/.config/ascendopt/config.toml), else sim.
    #[arg(long = "device", value_name = "DEVICE")]
    pub device: Option<String>,
    /// The simulated chip every operator runs on, over the `chip` its
    /// op.toml names: a built-in profile (`ascend910b2`, `ascend910b3`,
    /// `ascend310b`). Default: each operator's own, else the 910B2.
    #[arg(long = "chip", value_name = "CHIP")]
    pub chip: Option<String>,
}

impl DeviceArg {
    /// The devices named (several only for commands that compare them).
    pub fn choices(&self) -> Result<Vec<DeviceChoice>> {
        let env = |k: &str| std::env::var(k).ok();
        let file = config_file::load(&env).map_err(anyhow::Error::msg)?;
        Ok(select::choose(self.device.as_deref(), &env, &file)?)
    }

    /// The chip of `--chip`, checked against the built-in profiles.
    pub fn chip(&self) -> Result<Option<String>> {
        match &self.chip {
            None => Ok(None),
            Some(name) => {
                let hw = ascendopt_sim::timing::HwProfile::builtin(name)
                    .map_err(|e| anyhow::anyhow!("--chip {name}: {e}"))?;
                Ok(Some(hw.name))
            }
        }
    }

    /// The one device named.
    pub fn choice(&self) -> Result<DeviceChoice> {
        match self.choices()?.as_slice() {
            [one] => Ok(*one),
            _ => bail!("this command evaluates on one device: give --device sim, cann or cann:N"),
        }
    }
}
