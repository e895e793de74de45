//! The user's configuration file: the device a command evaluates on when
//! neither `--device` nor `ASCENDOPT_DEVICE` names one, and the CANN
//! device's settings.
//!
//! The file is `$ASCENDOPT_CONFIG` when that is set (it must exist), else
//! `$XDG_CONFIG_HOME/ascendopt/config.toml`, else
//! `~/.config/ascendopt/config.toml` (either may be missing):
//!
//! ```toml
//! device = "cann:0"            # sim | cann | cann:N
//!
//! [cann]
//! toolkit = "/usr/local/Ascend/cann"   # below $ASCEND_HOME_PATH
//! work_dir = "/data/ascendopt/cann"    # below $ASCENDOPT_CACHE_DIR/cann
//! runner_libs = ["nnopbase", "acl_rt"] # what the runner links (9.x)
//! warmup = 10                          # launches before the timed ones
//! repeats = 30                         # timed launches (at least)
//! msprof = true                        # profile with msprof op
//! ```
//!
//! Precedence, highest first: the command's flag, the environment, this
//! file, the built-in default. Every error names its source: the flag,
//! the variable, or the file with the line (`config.toml:3`).

use std::path::{Path, PathBuf};

/// The setting that names the configuration file.
pub const CONFIG_ENV: &str = "ASCENDOPT_CONFIG";

/// Why the configuration file could not be used; each names the file (and
/// the line, or the variable that named it).
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file is not valid TOML or holds an unknown key or a value of
    /// the wrong type.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// The file that `$ASCENDOPT_CONFIG` names cannot be read.
    #[error("{CONFIG_ENV}={}: {error}", path.display())]
    Named {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file at the usual place exists but cannot be read.
    #[error("{}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

/// What the file says (empty when there is no file).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigFile {
    /// The file read, when there was one.
    pub path: Option<PathBuf>,
    /// `device = "..."`: the value and where it stands (`path:line`).
    pub device: Option<(String, String)>,
    /// The `[cann]` table.
    pub cann: CannSettings,
}

/// The `[cann]` table: the CANN device's settings ([`crate::CannConfig`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CannSettings {
    /// The toolkit prefix (used when `ASCEND_HOME_PATH` is not set).
    pub toolkit: Option<PathBuf>,
    /// The device's builds and job folders (used when
    /// `ASCENDOPT_CACHE_DIR` is not set).
    pub work_dir: Option<PathBuf>,
    /// Libraries the runner links besides the operator's.
    pub runner_libs: Option<Vec<String>>,
    /// Warm-up launches before the timed ones.
    pub warmup: Option<u32>,
    /// Timed launches per run (at least; an evaluation may ask for more).
    pub repeats: Option<u32>,
    /// Profile the benchmark case with `msprof op`.
    pub msprof: Option<bool>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    device: Option<toml::Spanned<String>>,
    cann: Option<RawCann>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCann {
    toolkit: Option<PathBuf>,
    work_dir: Option<PathBuf>,
    runner_libs: Option<Vec<String>>,
    warmup: Option<u32>,
    repeats: Option<u32>,
    msprof: Option<bool>,
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Reads the file at `path` (`text` is its contents).
pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, ConfigFileError> {
    let raw: Raw = toml::from_str(text).map_err(|e| ConfigFileError::Parse {
        path: path.to_path_buf(),
        line: e.span().map(|s| line_of(text, s.start)).unwrap_or(1),
        message: e.message().to_string(),
    })?;
    let device = raw.device.map(|d| {
        let at = format!("{}:{}", path.display(), line_of(text, d.span().start));
        (d.into_inner(), at)
    });
    let cann = raw
        .cann
        .map(|c| CannSettings {
            toolkit: c.toolkit,
            work_dir: c.work_dir,
            runner_libs: c.runner_libs,
            warmup: c.warmup,
            repeats: c.repeats,
            msprof: c.msprof,
        })
        .unwrap_or_default();
    Ok(ConfigFile {
        path: Some(path.to_path_buf()),
        device,
        cann,
    })
}

/// The file to read: `$ASCENDOPT_CONFIG` (true: it must exist), else the
/// XDG location (false: it may be missing).
pub fn location(env: &dyn Fn(&str) -> Option<String>) -> Option<(PathBuf, bool)> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(p) = set(CONFIG_ENV) {
        return Some((PathBuf::from(p), true));
    }
    let base = set("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some((base.join("ascendopt/config.toml"), false))
}

/// Reads the configuration file of this environment (read through `env`);
/// empty when there is none.
pub fn load(env: &dyn Fn(&str) -> Option<String>) -> Result<ConfigFile, ConfigFileError> {
    let Some((path, required)) = location(env) else {
        return Ok(ConfigFile::default());
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            Ok(ConfigFile::default())
        }
        Err(error) if required => Err(ConfigFileError::Named { path, error }),
        Err(error) => Err(ConfigFileError::Read { path, error }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_gives_the_device_with_its_line_and_the_cann_table() {
        let text = "# mine\ndevice = \"cann:1\"\n\n[cann]\ntoolkit = \"/opt/cann\"\nrunner_libs = [\"nnopbase\", \"acl_rt\"]\nrepeats = 50\n";
        let f = parse(Path::new("/c/config.toml"), text).unwrap();
        assert_eq!(f.device, Some(("cann:1".into(), "/c/config.toml:2".into())));
        assert_eq!(f.cann.toolkit, Some(PathBuf::from("/opt/cann")));
        assert_eq!(f.cann.repeats, Some(50));
        assert_eq!(f.cann.runner_libs.as_deref().map(<[String]>::len), Some(2));
        assert_eq!(f.cann.warmup, None);
    }

    #[test]
    fn a_bad_file_is_named_with_its_line() {
        let err = parse(
            Path::new("c.toml"),
            "device = \"sim\"\n[cann]\nwarmup = \"ten\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("c.toml:3: "), "{err}");
        let err = parse(Path::new("c.toml"), "\n\ndevise = \"sim\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("c.toml:3: ") && err.contains("devise"),
            "{err}"
        );
        let err = parse(Path::new("c.toml"), "device = \n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("c.toml:1: "), "{err}");
    }

    #[test]
    fn the_file_is_found_by_variable_then_xdg_then_home() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap().to_string();
        let only = |k: &'static str, v: String| move |q: &str| (q == k).then(|| v.clone());
        let none = |_: &str| None;
        assert_eq!(load(&none).unwrap(), ConfigFile::default());
        // A missing file at the usual place is no file; a missing file the
        // variable names is an error naming the variable.
        assert_eq!(
            load(&only("XDG_CONFIG_HOME", d.clone())).unwrap(),
            ConfigFile::default()
        );
        let err = load(&only(CONFIG_ENV, format!("{d}/nope.toml")))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("ASCENDOPT_CONFIG=") && err.contains("nope.toml"),
            "{err}"
        );
        std::fs::create_dir_all(dir.path().join(".config/ascendopt")).unwrap();
        std::fs::write(
            dir.path().join(".config/ascendopt/config.toml"),
            "device = \"cann\"\n",
        )
        .unwrap();
        let f = load(&only("HOME", d.clone())).unwrap();
        assert_eq!(f.device.unwrap().0, "cann");
    }

    /// The file's `[cann]` settings apply under the environment's.
    #[test]
    fn the_environment_beats_the_file_for_the_cann_device() {
        let platform = crate::Platform {
            soc_version: "Ascend910B2".into(),
            core_num_aiv: 48,
            core_num_aic: 24,
            ub_size: 196352,
            l1_size: 524288,
            l0a_size: 65536,
            l0b_size: 65536,
            l0c_size: 131072,
            l2_size: 201326592,
            hbm_size: 68719476736,
        };
        let settings = CannSettings {
            toolkit: Some("/file/cann".into()),
            work_dir: Some("/file/work".into()),
            runner_libs: Some(vec!["acl_rt".into()]),
            warmup: Some(3),
            repeats: Some(50),
            msprof: Some(false),
        };
        let base = crate::CannConfig::from_env(0, platform);
        let none = |_: &str| None;
        let c = base.clone().with_settings(&settings, &none);
        assert_eq!(c.toolkit, Some(PathBuf::from("/file/cann")));
        assert_eq!(c.work_dir, PathBuf::from("/file/work"));
        assert_eq!((c.warmup, c.repeats, c.msprof), (3, 50, false));
        assert_eq!(c.runner_libs, vec!["acl_rt".to_string()]);
        let env = |k: &str| {
            matches!(k, "ASCEND_HOME_PATH" | "ASCENDOPT_CACHE_DIR").then(|| "/env".to_string())
        };
        let c = base.clone().with_settings(&settings, &env);
        assert_eq!((c.toolkit, c.work_dir), (base.toolkit, base.work_dir));
    }
}
