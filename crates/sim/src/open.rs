//! Opening the device a command names (`--device sim|cann|cann:N`): the
//! simulator, or a CANN device told the simulator's platform. Here rather
//! than in `ascendopt-device` because only this crate knows `SimDevice`,
//! and the device crate knows no simulator.

use crate::{SimDevice, SimDeviceConfig};
use ascendopt_device::config_file::CannSettings;
use ascendopt_device::select::DeviceChoice;
use ascendopt_device::{CannConfig, CannDevice, Device};
use std::time::Duration;

/// Opens `choice`. The simulator gets `sim`; a CANN device is told the
/// simulator's platform (the 910B2's sizes), takes the worker's wall-clock
/// limit, the configuration file's `[cann]` settings under the
/// environment's, and times at least `samples` launches per run (the
/// samples an evaluation compares).
pub fn open(
    choice: DeviceChoice,
    sim: SimDeviceConfig,
    samples: usize,
    cann_settings: &CannSettings,
) -> Box<dyn Device> {
    match choice {
        DeviceChoice::Sim => Box::new(SimDevice::new(sim)),
        DeviceChoice::Cann { id } => Box::new(cann(id, sim, samples, cann_settings)),
    }
}

/// The CANN device `id` configured from the environment
/// ([`CannConfig::from_env`]) and the configuration file's settings, as
/// [`open`] makes it.
pub fn cann(id: u32, sim: SimDeviceConfig, samples: usize, settings: &CannSettings) -> CannDevice {
    let platform = SimDevice::new(sim.clone()).platform().clone();
    let mut cfg =
        CannConfig::from_env(id, platform).with_settings(settings, &|k| std::env::var(k).ok());
    cfg.run_limit = Duration::from_millis(sim.limits.wall_ms.max(1000));
    cfg.repeats = cfg.repeats.max(u32::try_from(samples).unwrap_or(u32::MAX));
    CannDevice::new(cfg)
}
