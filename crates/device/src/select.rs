//! Which device a command evaluates on: `--device sim|cann|cann:N`, else
//! the `ASCENDOPT_DEVICE` setting, else the configuration file's `device`
//! ([`crate::config_file`]); the simulator by default. An error names
//! where the bad value came from (the flag, the variable, `file:line`). A comma-separated list (`sim,cann`) names several devices
//! for the commands that compare them.

use crate::config_file::ConfigFile;
use std::fmt;
use std::str::FromStr;

/// The environment setting that chooses the device when a command is
/// given no `--device`.
pub const DEVICE_ENV: &str = "ASCENDOPT_DEVICE";

/// A device by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceChoice {
    /// The simulated Ascend 910B2 (the default).
    #[default]
    Sim,
    /// NPU `id` through the CANN toolkit (`cann` is `cann:0`).
    Cann {
        /// The runtime device id (`aclrtSetDevice`).
        id: u32,
    },
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceChoice::Sim => f.write_str("sim"),
            DeviceChoice::Cann { id } => write!(f, "cann:{id}"),
        }
    }
}

/// Why a device name does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceNameError {
    /// `cann:` followed by something that is not an NPU id.
    #[error("device `{name}`: `{id}` is not an NPU id (cann:0, cann:1, ...)")]
    BadId {
        /// The whole name.
        name: String,
        /// What followed `cann:`.
        id: String,
    },
    /// Not a device name.
    #[error("device `{name}`: expected `sim`, `cann` or `cann:N` (N the NPU id)")]
    Unknown {
        /// The name.
        name: String,
    },
}

impl FromStr for DeviceChoice {
    type Err = DeviceNameError;

    fn from_str(s: &str) -> Result<DeviceChoice, DeviceNameError> {
        let s = s.trim();
        match s {
            "sim" => return Ok(DeviceChoice::Sim),
            "cann" => return Ok(DeviceChoice::Cann { id: 0 }),
            _ => {}
        }
        if let Some(id) = s.strip_prefix("cann:") {
            return id.parse().map(|id| DeviceChoice::Cann { id }).map_err(|_| {
                DeviceNameError::BadId {
                    name: s.to_string(),
                    id: id.to_string(),
                }
            });
        }
        Err(DeviceNameError::Unknown {
            name: s.to_string(),
        })
    }
}

/// Why the device setting cannot be used; each names where the value came
/// from (`--device`, `ASCENDOPT_DEVICE`, `file:line: device`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChooseError {
    /// One name of the list is not a device.
    #[error("{from}: {source}")]
    Name {
        /// Where the value came from.
        from: String,
        /// Why the name does not parse.
        source: DeviceNameError,
    },
    /// The list names one device twice.
    #[error("{from}: device `{device}` is named twice")]
    Twice {
        /// Where the value came from.
        from: String,
        /// The device.
        device: DeviceChoice,
    },
}

/// The devices of `--device` (`sim`, `cann:1`, `sim,cann`), else of
/// `ASCENDOPT_DEVICE` (read through `env`), else of the configuration
/// file's `device`, else the simulator.
pub fn choose(
    flag: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    file: &ConfigFile,
) -> Result<Vec<DeviceChoice>, ChooseError> {
    let (text, from) = match flag {
        Some(f) => (f.to_string(), "--device".to_string()),
        None => match env(DEVICE_ENV).filter(|v| !v.trim().is_empty()) {
            Some(v) => (v, DEVICE_ENV.to_string()),
            None => match &file.device {
                Some((v, at)) => (v.clone(), format!("{at}: device")),
                None => return Ok(vec![DeviceChoice::Sim]),
            },
        },
    };
    let list: Vec<DeviceChoice> = text
        .split(',')
        .map(|part| {
            part.parse().map_err(|source| ChooseError::Name {
                from: from.clone(),
                source,
            })
        })
        .collect::<Result<_, _>>()?;
    for (i, c) in list.iter().enumerate() {
        if list[..i].contains(c) {
            return Err(ChooseError::Twice { from, device: *c });
        }
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_the_simulator_is_the_default() {
        let none = |_: &str| None;
        let no_file = ConfigFile::default();
        let choose = |f: Option<&str>, e: &dyn Fn(&str) -> Option<String>| choose(f, e, &no_file);
        assert_eq!(choose(None, &none).unwrap(), vec![DeviceChoice::Sim]);
        assert_eq!(
            choose(Some("cann"), &none).unwrap(),
            vec![DeviceChoice::Cann { id: 0 }]
        );
        assert_eq!(
            choose(Some("sim,cann:3"), &none).unwrap(),
            vec![DeviceChoice::Sim, DeviceChoice::Cann { id: 3 }]
        );
        let env = |k: &str| (k == DEVICE_ENV).then(|| "cann:1".to_string());
        assert_eq!(
            choose(None, &env).unwrap(),
            vec![DeviceChoice::Cann { id: 1 }]
        );
        assert_eq!(
            choose(Some("sim"), &env).unwrap(),
            vec![DeviceChoice::Sim],
            "the flag wins"
        );
        let err = choose(Some("npu"), &none).unwrap_err().to_string();
        assert!(err.contains("--device") && err.contains("cann:N"), "{err}");
        let err = choose(None, &|_: &str| Some("cann:x".into()))
            .unwrap_err()
            .to_string();
        assert!(err.contains(DEVICE_ENV) && err.contains("NPU id"), "{err}");
        assert!(choose(Some("sim,sim"), &none)
            .unwrap_err()
            .to_string()
            .contains("twice"));
        assert_eq!(DeviceChoice::Cann { id: 2 }.to_string(), "cann:2");
    }

    /// Flag over environment over file over the simulator; a bad value
    /// names its source, the file's with its line.
    #[test]
    fn the_flag_beats_the_environment_beats_the_file() {
        let file = crate::config_file::parse(
            std::path::Path::new("/home/u/.config/ascendopt/config.toml"),
            "\n# the lab's NPU\ndevice = \"cann:2\"\n",
        )
        .unwrap();
        let none = |_: &str| None;
        let env = |k: &str| (k == DEVICE_ENV).then(|| "cann:1".to_string());
        assert_eq!(
            choose(None, &none, &file).unwrap(),
            vec![DeviceChoice::Cann { id: 2 }]
        );
        assert_eq!(
            choose(None, &env, &file).unwrap(),
            vec![DeviceChoice::Cann { id: 1 }]
        );
        assert_eq!(
            choose(Some("sim"), &env, &file).unwrap(),
            vec![DeviceChoice::Sim]
        );
        let bad = crate::config_file::parse(std::path::Path::new("c.toml"), "\ndevice = \"npu\"\n")
            .unwrap();
        let err = choose(None, &none, &bad).unwrap_err().to_string();
        assert!(err.starts_with("c.toml:2: device: device `npu`"), "{err}");
        // The flag and the variable hide a bad file value.
        assert!(choose(Some("cann"), &none, &bad).is_ok());
        assert!(choose(None, &env, &bad).is_ok());
        let err = choose(None, &|_: &str| Some("gpu".into()), &file)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("ASCENDOPT_DEVICE: "), "{err}");
    }
}
