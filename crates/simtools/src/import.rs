//! `ascendopt import DIR`: writes the op.toml (and golden.py) of msopgen
//! operator folders written elsewhere, so that `eval`, `compat` and the
//! optimiser can run them unchanged.
//!
//! The interface comes from the OpDef itself: the host unit is compiled
//! and the OpDef it registers described in a sandboxed worker (it runs the
//! user's constructor); when the host does not compile, from msopgen's
//! operator description JSON beside the folder, else from the OpDef's
//! source text. Cases and goldens come from the project's own tests
//! ([`ascendopt_op::import`]).
//!
//! Invariants:
//! - An existing op.toml or golden.py is never overwritten unless asked
//!   (`force`).
//! - What is written loads (`OpPackage::load`); if it does not, it is
//!   removed again and the load error reported.

use crate::compat;
use ascendopt_op::import::{self, opdef_source, Options, Sources};
use ascendopt_op::opdef::{Described, OpDefDesc};
use ascendopt_op::package::OpPackage;
use ascendopt_sim::build::{self, BuildCache, BuildRequest, Toolchain};
use ascendopt_sim::timing::HwProfile;
use ascendopt_sim::worker::{self, WorkerLimits};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What [`import_dir`] needs.
#[derive(Debug, Clone)]
pub struct ImportConfig {
    /// Compiler and emulation headers.
    pub toolchain: Toolchain,
    /// The build cache.
    pub cache: BuildCache,
    /// Limits of the worker that describes the OpDef.
    pub limits: WorkerLimits,
    /// The simulated SoC (`Ascend910B2`).
    pub soc: String,
    /// The Python interpreter (`python3`, or `$ASCENDOPT_PYTHON`).
    pub python: String,
    /// Overwrite an existing op.toml and golden.py.
    pub force: bool,
}

/// The outcome for one operator folder.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportReport {
    /// The folder.
    pub dir: PathBuf,
    /// The OpDef class name, when one was found.
    pub op_type: Option<String>,
    /// The files written.
    pub written: Vec<PathBuf>,
    /// What the import chose and why.
    pub notes: Vec<String>,
    /// Why nothing (usable) was written.
    pub error: Option<String>,
}

impl ImportReport {
    /// True when an op.toml that loads was written.
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }
}

/// Imports every operator folder at or under `dir`.
pub fn import_dir(cfg: &ImportConfig, dir: &Path) -> Vec<ImportReport> {
    compat::operator_dirs(&[dir.to_path_buf()])
        .iter()
        .map(|d| import_one(cfg, d))
        .collect()
}

/// Imports one operator folder.
pub fn import_one(cfg: &ImportConfig, op_dir: &Path) -> ImportReport {
    let mut report = ImportReport {
        dir: op_dir.to_path_buf(),
        op_type: None,
        written: Vec::new(),
        notes: Vec::new(),
        error: None,
    };
    // A bug of the import on one folder is that folder's error, never the
    // end of a run over many (compat --import).
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        import_into(cfg, op_dir, &mut report)
    }));
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(e)) => report.error = Some(e.to_string()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            report.error = Some(format!("import failed (an ascendopt bug): {what}"));
        }
    }
    report
}

/// Why an operator folder got no op.toml.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportFolderError {
    /// A file the import writes is there already.
    #[error("{} exists (import --force overwrites it)", .0.display())]
    Exists(PathBuf),
    /// The folder's sources cannot be listed.
    #[error(transparent)]
    Sources(#[from] ascendopt_sim::build::BuildError),
    /// No OpDef anywhere in the folder.
    #[error("no OpDef found in {} (no OP_ADD, no msopgen JSON)", .0.display())]
    NoOpDef(PathBuf),
    /// No kernel entry in op_kernel.
    #[error("no kernel entry (extern \"C\" __global__ __aicore__ void NAME(...)) in {}", .0.display())]
    NoKernelEntry(PathBuf),
    /// The spec cannot be planned from the OpDef.
    #[error(transparent)]
    Plan(#[from] import::ImportError),
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The op.toml written does not load; it was removed.
    #[error("the op.toml written does not load (removed): {0}")]
    DoesNotLoad(#[source] ascendopt_op::OpError),
}

fn import_into(
    cfg: &ImportConfig,
    op_dir: &Path,
    report: &mut ImportReport,
) -> Result<(), ImportFolderError> {
    let toml_path = op_dir.join("op.toml");
    let golden_path = op_dir.join("golden.py");
    if !cfg.force {
        for p in [&toml_path, &golden_path] {
            if p.exists() {
                return Err(ImportFolderError::Exists(p.clone()));
            }
        }
    }
    let req = BuildRequest::for_op_dir(op_dir, cfg.toolchain.clone())?;
    let (opdef, from) = opdef(cfg, op_dir, &req, &mut report.notes)?;
    report.op_type = Some(opdef.op_type.clone());
    let (kernel, kernel_sources) = kernel_entry(op_dir, &req.kernel_sources)?;
    let sources = Sources {
        op_dir: op_dir.to_path_buf(),
        opdef,
        opdef_from: from,
        kernel,
        kernel_sources,
    };
    let mut opts = Options {
        soc: cfg.soc.clone(),
        chip: None,
        python: cfg.python.clone(),
    };
    if let Some((chip, soc)) = chip_written_for(&sources.opdef, &cfg.soc) {
        report.notes.push(format!(
            "OpDef {} registers {} and not the default {}: op.toml names chip = \"{chip}\" ({soc}), the chip it is written for, so it is built, run and timed on that chip",
            sources.opdef.op_type,
            sources
                .opdef
                .configs
                .iter()
                .map(|c| c.soc.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            cfg.soc
        ));
        opts.soc = soc;
        opts.chip = Some(chip);
    }
    let imported = import::plan_and_render(&sources, &opts)?;
    report.notes.extend(imported.notes.iter().cloned());
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|source| ImportFolderError::Write {
            path: path.to_path_buf(),
            source,
        })
    };
    write(&toml_path, &imported.toml)?;
    report.written.push(toml_path.clone());
    if let Some(golden) = &imported.golden_py {
        write(&golden_path, golden)?;
        report.written.push(golden_path.clone());
    }
    if let Err(e) = OpPackage::load(op_dir, &ascendopt_golden::BUILTINS) {
        for p in &report.written {
            let _ = std::fs::remove_file(p);
        }
        report.written.clear();
        return Err(ImportFolderError::DoesNotLoad(e));
    }
    Ok(())
}

/// The chip an OpDef is written for, when it does not register the
/// default SoC `default_soc` (its `AddConfig` list names other SoCs only)
/// and one of the SoCs it registers has a built-in simulator profile: that
/// profile's name and SoC version (the first such SoC in `AddConfig`
/// order, matched as the OpDef's per-SoC configurations are: the SoC
/// version starts with the registered name, `ascend310b` for
/// `Ascend310B1`). None otherwise (the default chip judges it).
pub fn chip_written_for(op: &OpDefDesc, default_soc: &str) -> Option<(String, String)> {
    let registered = op.written_for_other_socs(default_soc)?;
    let profiles: Vec<HwProfile> = HwProfile::builtin_names()
        .into_iter()
        .filter_map(|n| HwProfile::builtin(n).ok())
        .collect();
    registered.iter().find_map(|soc| {
        let soc = soc.to_ascii_lowercase();
        profiles
            .iter()
            .find(|hw| hw.soc_version.to_ascii_lowercase().starts_with(&soc))
            .map(|hw| (hw.name.clone(), hw.soc_version.clone()))
    })
}

/// The OpDef of the folder and where it came from.
fn opdef(
    cfg: &ImportConfig,
    op_dir: &Path,
    req: &BuildRequest,
    notes: &mut Vec<String>,
) -> Result<(OpDefDesc, String), ImportFolderError> {
    let folder = op_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase().replace('_', ""))
        .unwrap_or_default();
    let pick = |ops: Vec<OpDefDesc>| -> Option<OpDefDesc> {
        let by_name = ops.iter().position(|o| o.op_type.to_lowercase() == folder);
        match by_name {
            Some(i) => ops.into_iter().nth(i),
            None => ops.into_iter().next(),
        }
    };
    match build::build_host(req, &cfg.cache) {
        Ok(lib) => {
            let described = worker::describe_host(&lib, &cfg.limits)
                .and_then(|j| Ok(Described::from_json(&j)?));
            match described {
                Ok(described) => {
                    if let Some(op) = pick(described.ops) {
                        match &op.error {
                            None => {
                                return Ok((
                                    op,
                                    "the OpDef the host code registers (compiled and run)".into(),
                                ))
                            }
                            Some(e) => notes
                                .push(format!("the compiled OpDef {} reports: {e}", op.op_type)),
                        }
                    } else {
                        notes.push("the host code registers no OpDef (no OP_ADD)".into());
                    }
                }
                Err(e) => notes.push(format!("the compiled OpDef could not be described: {e}")),
            }
        }
        Err(e) => notes.push(format!(
            "the host unit does not compile ({e}); reading the OpDef elsewhere"
        )),
    }
    // msopgen's description JSON, in the folder or beside it.
    for dir in [Some(op_dir), op_dir.parent()].into_iter().flatten() {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            if let Ok(ops) = opdef_source::from_msopgen_json(&f) {
                if let Some(op) = pick(ops) {
                    return Ok((op, format!("msopgen's description {}", f.display())));
                }
            }
        }
    }
    let mut ops = Vec::new();
    for src in &req.host_sources {
        if let Ok(text) = std::fs::read_to_string(src) {
            ops.extend(opdef_source::from_source_text(&text));
        }
    }
    pick(ops)
        .map(|op| {
            (
                op,
                "the OpDef's source text in op_host (read, not compiled)".into(),
            )
        })
        .ok_or_else(|| ImportFolderError::NoOpDef(op_dir.join("op_host")))
}

/// The kernel entry symbol (`extern "C" __global__ __aicore__ void NAME(`)
/// and, when op_kernel/ has several sources, the one that defines it.
fn kernel_entry(
    op_dir: &Path,
    sources: &[PathBuf],
) -> Result<(String, Option<Vec<String>>), ImportFolderError> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for src in sources {
        let Ok(text) = std::fs::read_to_string(src) else {
            continue;
        };
        let mut rest = text.as_str();
        while let Some(at) = rest.find("__global__") {
            let tail = &rest[at..];
            let head = &tail[..tail.find('(').unwrap_or(tail.len())];
            if let Some(name) = head.split_whitespace().last() {
                let name = name.trim_start_matches('*');
                if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty() {
                    found.push((name.to_string(), src.clone()));
                }
            }
            rest = &tail[10..];
        }
    }
    let Some((name, file)) = found.first().cloned() else {
        return Err(ImportFolderError::NoKernelEntry(op_dir.join("op_kernel")));
    };
    let listed = (sources.len() > 1).then(|| {
        vec![file
            .strip_prefix(op_dir)
            .unwrap_or(&file)
            .to_string_lossy()
            .into_owned()]
    });
    Ok((name, listed))
}
