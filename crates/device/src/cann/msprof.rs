//! What `msprof op` leaves behind, found and read: its console lines, its
//! output folder in both layouts, and the two core CSV files of each
//! profiled kernel, with a clear error for a missing or malformed file.
//!
//! The layout (cann-device.md §4, from msopprof's source): `--output=D`
//! holds `OPPROF_<YYYYMMDDhhmmss>_<16 letters A-Z>/`; with one kernel the
//! metric files sit flat in it (`OpBasicInfo.csv`, `PipeUtilization.csv`,
//! ... next to `dump/` and `visualize_data.bin`); with several they sit in
//! `<OpName>/<index>/<Metric>_<17-digit timestamp>.csv`, under
//! `device<id>/` on multi-device runs. The console says `Op Name: …`,
//! `Task Duration(us): …` and `Profiling results saved in <path>`, and on
//! failures `X success, Y failed`. The CSV rows are read by
//! [`crate::msprof_csv`].

use crate::msprof_csv::{self, CsvError, OpBasicInfo, PipeRow};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why an msprof output could not be read.
#[derive(Debug, thiserror::Error)]
pub enum MsprofError {
    /// No `OPPROF_*` folder under the output folder, and it is not one.
    #[error(
        "{dir}: no OPPROF_<timestamp>_<id> folder (msprof op writes one per run under --output)"
    )]
    NoRun {
        /// The folder searched.
        dir: PathBuf,
    },
    /// A run folder without a profiled kernel in it.
    #[error("{dir}: no OpBasicInfo CSV, flat or under <OpName>/<index>/: msprof profiled no kernel (check --kernel-name and the console's `success, failed` line)")]
    NoKernel {
        /// The run folder.
        dir: PathBuf,
    },
    /// A kernel folder lacks a metric file the reader needs.
    #[error("{dir}: no {metric} file (run msprof op with --aic-metrics including {metric})")]
    MissingMetric {
        /// The kernel's folder.
        dir: PathBuf,
        /// The metric (`PipeUtilization`).
        metric: String,
    },
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A CSV file is not in msprof's format.
    #[error("{path}: {source}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its line.
        source: CsvError,
    },
}

/// What the console of `msprof op` said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Console {
    /// `Op Name: …`, each profiled kernel's.
    pub op_names: Vec<String>,
    /// `Task Duration(us): …`, in the same order.
    pub task_durations_us: Vec<f64>,
    /// `Profiling results saved in <path>`.
    pub saved_in: Option<PathBuf>,
    /// `X success, Y failed`.
    pub success_failed: Option<(u32, u32)>,
}

/// Reads the console lines msprof op prints (other lines are ignored).
pub fn parse_console(text: &str) -> Console {
    let mut c = Console::default();
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("Op Name:") {
            c.op_names.push(rest.trim().to_string());
        } else if let Some(rest) = l.strip_prefix("Task Duration(us):") {
            if let Ok(v) = rest.trim().parse() {
                c.task_durations_us.push(v);
            }
        } else if let Some(at) = l.find("Profiling results saved in") {
            let path = l[at + "Profiling results saved in".len()..].trim();
            if !path.is_empty() {
                c.saved_in = Some(PathBuf::from(path));
            }
        } else if let Some((s, f)) = l.split_once(" success,") {
            let success = s.split_whitespace().last().and_then(|n| n.parse().ok());
            let failed = f
                .trim()
                .strip_suffix("failed")
                .and_then(|n| n.trim().parse().ok());
            if let (Some(s), Some(f)) = (success, failed) {
                c.success_failed = Some((s, f));
            }
        }
    }
    c
}

/// One profiled kernel's metric files.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelFiles {
    /// Its folder (the run folder for the flat layout).
    pub dir: PathBuf,
    /// `<OpName>` of the nested layout.
    pub op_name: Option<String>,
    /// `<index>` of the nested layout.
    pub index: Option<u32>,
    /// `device<id>` of a multi-device run.
    pub device: Option<u32>,
    /// Metric (`OpBasicInfo`, `PipeUtilization`, `L2Cache`, ...) -> file.
    pub metrics: BTreeMap<String, PathBuf>,
}

/// `OPPROF_<14 digits>_<16 letters A-Z>`.
fn is_run_dir(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("OPPROF_") else {
        return false;
    };
    let Some((stamp, id)) = rest.split_once('_') else {
        return false;
    };
    stamp.len() == 14
        && stamp.bytes().all(|b| b.is_ascii_digit())
        && id.len() == 16
        && id.bytes().all(|b| b.is_ascii_uppercase())
}

/// The metric a CSV file name holds: `OpBasicInfo.csv` (flat) or
/// `OpBasicInfo_<17 digits>.csv` (nested).
fn metric_of(file: &str) -> Option<String> {
    let stem = file.strip_suffix(".csv")?;
    match stem.rsplit_once('_') {
        Some((metric, stamp)) if stamp.len() == 17 && stamp.bytes().all(|b| b.is_ascii_digit()) => {
            Some(metric.to_string())
        }
        _ => Some(stem.to_string()),
    }
}

fn entries(dir: &Path) -> Result<Vec<PathBuf>, MsprofError> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| MsprofError::Io {
            path: dir.to_path_buf(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    out.sort();
    Ok(out)
}

/// The CSV metrics of one folder.
fn metrics_in(dir: &Path) -> Result<BTreeMap<String, PathBuf>, MsprofError> {
    let mut metrics = BTreeMap::new();
    for path in entries(dir)? {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if path.is_file() {
            if let Some(metric) = metric_of(name) {
                metrics.insert(metric, path.clone());
            }
        }
    }
    Ok(metrics)
}

/// The run folder: `dir` itself when it is an `OPPROF_*` folder, else the
/// newest `OPPROF_*` under it (the timestamp orders them).
pub fn run_dir(dir: &Path) -> Result<PathBuf, MsprofError> {
    if dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(is_run_dir)
    {
        return Ok(dir.to_path_buf());
    }
    entries(dir)?
        .into_iter()
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_run_dir)
        })
        .max_by(|a, b| a.file_name().cmp(&b.file_name()))
        .ok_or_else(|| MsprofError::NoRun {
            dir: dir.to_path_buf(),
        })
}

/// Every profiled kernel of a run folder, flat or nested.
pub fn kernels(run: &Path) -> Result<Vec<KernelFiles>, MsprofError> {
    let flat = metrics_in(run)?;
    if flat.contains_key("OpBasicInfo") {
        return Ok(vec![KernelFiles {
            dir: run.to_path_buf(),
            op_name: None,
            index: None,
            device: None,
            metrics: flat,
        }]);
    }
    let mut out = Vec::new();
    let mut roots: Vec<(Option<u32>, PathBuf)> = vec![(None, run.to_path_buf())];
    for p in entries(run)? {
        let device = p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("device"))
            .and_then(|id| id.parse().ok());
        if p.is_dir() && device.is_some() {
            roots.push((device, p));
        }
    }
    for (device, root) in roots {
        for op_dir in entries(&root)? {
            let Some(op_name) = op_dir
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
            else {
                continue;
            };
            if !op_dir.is_dir() || op_name == "dump" || op_name.starts_with("device") {
                continue;
            }
            for idx_dir in entries(&op_dir)? {
                let Some(index) = idx_dir
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.parse().ok())
                else {
                    continue;
                };
                if !idx_dir.is_dir() {
                    continue;
                }
                let metrics = metrics_in(&idx_dir)?;
                if metrics.contains_key("OpBasicInfo") {
                    out.push(KernelFiles {
                        dir: idx_dir,
                        op_name: Some(op_name.clone()),
                        index: Some(index),
                        device,
                        metrics,
                    });
                }
            }
        }
    }
    if out.is_empty() {
        return Err(MsprofError::NoKernel {
            dir: run.to_path_buf(),
        });
    }
    out.sort_by(|a, b| (a.device, &a.op_name, a.index).cmp(&(b.device, &b.op_name, b.index)));
    Ok(out)
}

/// One kernel's basic info and per-block pipe rows.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelProfile {
    /// Where it was read from.
    pub files: KernelFiles,
    /// OpBasicInfo's row.
    pub basic: OpBasicInfo,
    /// PipeUtilization's rows.
    pub pipes: Vec<PipeRow>,
}

impl KernelProfile {
    /// The sample is trustworthy for timing: the chip ran at its rated
    /// clock (cann-device.md §4: a down-clocked run took 6.7x longer).
    /// None when the file does not say.
    pub fn at_rated_clock(&self) -> Option<bool> {
        match (self.basic.current_freq_mhz, self.basic.rated_freq_mhz) {
            (Some(c), Some(r)) => Some(c >= r),
            _ => None,
        }
    }
}

fn read_metric(files: &KernelFiles, metric: &str) -> Result<(PathBuf, String), MsprofError> {
    let path = files
        .metrics
        .get(metric)
        .ok_or_else(|| MsprofError::MissingMetric {
            dir: files.dir.clone(),
            metric: metric.to_string(),
        })?;
    let text = std::fs::read_to_string(path).map_err(|source| MsprofError::Io {
        path: path.clone(),
        source,
    })?;
    Ok((path.clone(), text))
}

/// Reads one kernel's OpBasicInfo and PipeUtilization.
pub fn read_kernel(files: &KernelFiles) -> Result<KernelProfile, MsprofError> {
    let (path, text) = read_metric(files, "OpBasicInfo")?;
    let basic = msprof_csv::parse_op_basic_info(&text)
        .map_err(|source| MsprofError::Csv { path, source })?;
    let (path, text) = read_metric(files, "PipeUtilization")?;
    let pipes = msprof_csv::parse_pipe_utilization(&text)
        .map_err(|source| MsprofError::Csv { path, source })?;
    Ok(KernelProfile {
        files: files.clone(),
        basic,
        pipes,
    })
}

/// Every kernel of the run under `output` (an `--output` folder or a run
/// folder), read. One unreadable kernel fails the whole read, naming it.
pub fn read_output(output: &Path) -> Result<Vec<KernelProfile>, MsprofError> {
    let run = run_dir(output)?;
    kernels(&run)?.iter().map(read_kernel).collect()
}
