//! How far operator folders written elsewhere get on the simulator:
//! `ascendopt compat DIR...`.
//!
//! For each operator folder (a folder with `op_host/` and `op_kernel/`, the
//! msopgen layout) it answers: does the host unit compile, does the kernel
//! unit compile, does every case of its op.toml run and pass, what is the
//! first blocker of each unit, and which AscendC APIs the sources name that
//! the simulator's headers lack. A folder without op.toml is compiled only
//! (`ascendopt import` writes one).
//!
//! Invariants:
//! - A folder's failure is a row, never an `Err`: bad sources, a bad
//!   op.toml, a crashing kernel all end as states of that row.
//! - Both units are always tried (the build reports both failures), so a
//!   user who fixes the kernel does not meet a second wall in the host.

use ascendopt_device::{Device, DeviceError};
use ascendopt_harness::eval::{self, CaseVerdict, CheckConfig};
use ascendopt_op::opdef::{Described, OpDefDesc};
use ascendopt_op::package::OpPackage;
use ascendopt_sim::build::{self, variants, BuildCache, BuildError, BuildRequest, Toolchain, Unit};
use ascendopt_sim::worker::{self, WorkerLimits};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How deep [`operator_dirs`] looks under a root.
const MAX_DEPTH: usize = 10;

/// Whether a unit compiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum UnitState {
    /// It compiles and links.
    Compiles,
    /// It does not; its first error.
    Fails {
        /// `file:line` (the file alone when the compiler named no line).
        location: String,
        /// The first error, interpreted.
        message: String,
    },
    /// It was not compiled.
    NotTried {
        /// Why.
        reason: String,
    },
}

impl UnitState {
    /// True for [`UnitState::Compiles`].
    pub fn compiles(&self) -> bool {
        matches!(self, UnitState::Compiles)
    }

    /// One short line for a table cell.
    pub fn label(&self) -> &'static str {
        match self {
            UnitState::Compiles => "ok",
            UnitState::Fails { .. } => "FAIL",
            UnitState::NotTried { .. } => "-",
        }
    }
}

/// Whether the operator's cases run and pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RunState {
    /// Every case passed.
    Passed {
        /// How many cases.
        cases: usize,
    },
    /// A case did not pass.
    Failed {
        /// The first failing case.
        case: String,
        /// Its verdict label (`mismatch`, `fault`, ...).
        verdict: String,
        /// Why, in one line.
        reason: String,
        /// How many cases passed.
        passed: usize,
        /// Out of.
        cases: usize,
    },
    /// There is no usable op.toml.
    NoSpec {
        /// Why (missing, or the loader's error).
        reason: String,
    },
    /// Not run: the operator does not build.
    NotBuilt,
}

impl RunState {
    /// True for [`RunState::Passed`].
    pub fn passed(&self) -> bool {
        matches!(self, RunState::Passed { .. })
    }

    /// One short word for a table cell.
    pub fn label(&self) -> &'static str {
        match self {
            RunState::Passed { .. } => "pass",
            RunState::Failed { .. } => "FAIL",
            RunState::NoSpec { .. } => "no spec",
            RunState::NotBuilt => "-",
        }
    }
}

/// One operator folder's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompatRow {
    /// The folder.
    pub dir: PathBuf,
    /// Its name (the folder's, or op.toml's).
    pub name: String,
    /// The host unit (op_host: tiling, OpDef).
    pub host: UnitState,
    /// The kernel unit (op_kernel).
    pub kernel: UnitState,
    /// The cases.
    pub run: RunState,
    /// AscendC API names the sources use that the simulator's headers do
    /// not have.
    pub missing_apis: Vec<String>,
    /// What else was found on the way (the OpDef could not be described,
    /// how many kernel variants were compiled, ...).
    pub notes: Vec<String>,
    /// The chip the operator was built for and judged on (a simulator
    /// profile name, from op.toml's `chip` or `--chip`); None when it was
    /// not built through its op.toml.
    pub chip: Option<String>,
}

impl CompatRow {
    /// Whether it ran on the simulator's default chip (or was not built
    /// through op.toml).
    pub fn run_on_default_chip(&self) -> bool {
        self.chip
            .as_deref()
            .is_none_or(|c| c == ascendopt_sim::timing::hw::DEFAULT_CHIP)
    }

    /// Both units compile.
    pub fn compiles(&self) -> bool {
        self.host.compiles() && self.kernel.compiles()
    }

    /// The first blocker: the kernel's first error, else the host's, else
    /// why the cases did not pass; None when it passes.
    pub fn first_blocker(&self) -> Option<String> {
        for (unit, state) in [("kernel", &self.kernel), ("host", &self.host)] {
            match state {
                UnitState::Fails { location, message } => {
                    return Some(format!("{unit}: {location}: {message}"))
                }
                UnitState::NotTried { reason } => return Some(format!("{unit}: {reason}")),
                UnitState::Compiles => {}
            }
        }
        match &self.run {
            RunState::Passed { .. } | RunState::NotBuilt => None,
            RunState::Failed {
                case,
                verdict,
                reason,
                ..
            } => Some(format!("case {case}: {verdict}: {reason}")),
            RunState::NoSpec { reason } => Some(reason.clone()),
        }
    }
}

/// The operator folders at or under `roots` (a folder holding both
/// `op_host/` and `op_kernel/`), sorted, each once; hidden folders are
/// skipped and an operator folder is not searched further.
pub fn operator_dirs(roots: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        if dir.join("op_host").is_dir() && dir.join("op_kernel").is_dir() {
            out.push(dir.to_path_buf());
            return;
        }
        if depth >= MAX_DEPTH {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut subdirs: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .map(|e| e.path())
            .collect();
        subdirs.sort();
        for sub in subdirs {
            walk(&sub, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    for root in roots {
        walk(root, 0, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// The source files of an operator folder: every `.cpp`, `.h`, `.hpp` and
/// `.cc` under `op_host/` and `op_kernel/`.
fn source_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && depth < 4 {
                walk(&path, depth + 1, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "cpp" || e == "h" || e == "hpp" || e == "cc")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&dir.join("op_host"), 0, &mut out);
    walk(&dir.join("op_kernel"), 0, &mut out);
    out.sort();
    out
}

/// What [`check_dir`] needs besides the device.
#[derive(Debug, Clone)]
pub struct CompatConfig {
    /// Compiler and emulation headers (for folders without op.toml and for
    /// the missing-API scan).
    pub toolchain: Toolchain,
    /// The build cache.
    pub cache: BuildCache,
    /// Seed of the inputs.
    pub seed: u64,
    /// Limits of the worker that describes a host library's OpDef.
    pub limits: WorkerLimits,
    /// The simulated SoC (`Ascend910B2`): picks the OpDef's
    /// `AddConfig` for it.
    pub soc: String,
}

/// The answer for one operator folder.
pub fn check_dir(device: &dyn Device, cfg: &CompatConfig, dir: &Path) -> CompatRow {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let missing_apis = build::apis_missing_from_sim(&source_files(dir), &cfg.toolchain.include_dir);
    let mut row = CompatRow {
        dir: dir.to_path_buf(),
        name,
        host: UnitState::NotTried {
            reason: "not compiled".into(),
        },
        kernel: UnitState::NotTried {
            reason: "not compiled".into(),
        },
        run: RunState::NotBuilt,
        missing_apis,
        notes: Vec::new(),
        chip: None,
    };
    if !dir.join("op.toml").is_file() {
        compile_only(cfg, dir, &mut row);
        if row.compiles() {
            row.run = RunState::NoSpec {
                reason: "no op.toml: `ascendopt import` writes one".into(),
            };
        }
        return row;
    }
    let package = match OpPackage::load(dir, &ascendopt_golden::BUILTINS) {
        Ok(p) => p,
        Err(e) => {
            compile_only(cfg, dir, &mut row);
            row.run = RunState::NoSpec {
                reason: format!("op.toml: {e}"),
            };
            return row;
        }
    };
    row.name = package.name().to_string();
    let check_cfg = CheckConfig {
        case: None,
        seed: cfg.seed,
        profile: false,
        deterministic: true,
        timeline: false,
    };
    let check = match eval::check_op(device, &package, &check_cfg) {
        Ok(c) => c,
        Err(e) => {
            row.run = RunState::NoSpec {
                reason: e.to_string(),
            };
            return row;
        }
    };
    match &check.build {
        Ok(artifact) => {
            row.host = UnitState::Compiles;
            row.kernel = UnitState::Compiles;
            row.chip = artifact.chip.clone();
        }
        Err(DeviceError::Compile { summary, units, .. }) => {
            row.host = UnitState::Compiles;
            row.kernel = UnitState::Compiles;
            if units.is_empty() {
                row.kernel = UnitState::Fails {
                    location: String::new(),
                    message: summary.clone(),
                };
            }
            for u in units {
                let state = UnitState::Fails {
                    location: u.location.clone(),
                    message: u.message.clone(),
                };
                if u.unit == "host" {
                    row.host = state;
                } else {
                    row.kernel = state;
                }
            }
            return row;
        }
        Err(e) => {
            let reason = e.to_string();
            row.host = UnitState::NotTried {
                reason: reason.clone(),
            };
            row.kernel = UnitState::NotTried { reason };
            return row;
        }
    }
    let cases = check.cases.len();
    let passed = check.cases.iter().filter(|c| c.verdict.passed()).count();
    row.run = match check.cases.iter().find(|c| !c.verdict.passed()) {
        None => RunState::Passed { cases },
        Some(bad) => RunState::Failed {
            case: bad.name.clone(),
            verdict: bad.verdict.label().to_string(),
            reason: verdict_reason(&bad.verdict, &bad.outputs),
            passed,
            cases,
        },
    };
    // Where the simulator let the kernel do what the chip does but a
    // stricter check would refuse (a DMA read past a tensor's allocation,
    // a race no output sees), the user reads why it passed.
    let mut lenient: Vec<String> = Vec::new();
    for c in &check.cases {
        for f in c.run.iter().flat_map(|r| &r.findings) {
            let text = format!("{} ({})", f.message, f.kind);
            if LENIENT_NOTES.contains(&f.kind.as_str()) && !lenient.contains(&text) {
                lenient.push(text);
            }
        }
    }
    row.notes
        .extend(lenient.into_iter().take(MAX_LENIENT_NOTES));
    if !row.run_on_default_chip() {
        if let Some(chip) = &row.chip {
            row.notes.push(format!(
                "judged on the simulated {chip}, the chip op.toml names (`chip`) or --chip, not on the default {}",
                ascendopt_sim::timing::hw::DEFAULT_CHIP
            ));
        }
    } else if !row.run.passed() {
        if let Some(note) = other_soc_note(cfg, dir) {
            row.notes.push(note);
        }
    }
    row
}

/// The kinds of a run's notes that compat repeats: what the simulator
/// allowed as the chip does (`runtime/gm_read.rs`, `check/benign.rs`, a
/// buffer given back early, `runtime/queue.rs`).
const LENIENT_NOTES: &[&str] = &["gm-overread", "race-benign", "queue-lend"];

/// At most this many of them per folder.
const MAX_LENIENT_NOTES: usize = 3;

/// For a folder whose cases did not all pass: the note that its OpDef was
/// written for other chips, when it registers only SoCs the simulator does
/// not model (its host library comes from the build cache; a folder whose
/// OpDef cannot be described gets no note).
fn other_soc_note(cfg: &CompatConfig, dir: &Path) -> Option<String> {
    let req = BuildRequest::for_op_dir(dir, cfg.toolchain.clone()).ok()?;
    let host_lib = build::build_host(&req, &cfg.cache).ok()?;
    let op = described_opdef(cfg, dir, &host_lib).ok()?;
    written_for_other_socs_note(&op, &cfg.soc)
}

/// The note of an OpDef that registers only SoCs other than `soc`.
fn written_for_other_socs_note(op: &OpDefDesc, soc: &str) -> Option<String> {
    let socs = op.written_for_other_socs(soc)?;
    Some(format!(
        "OpDef {} registers {} only; the simulator models {soc}: a kernel written for another chip's core count or UB size may fail here and still be right there",
        op.op_type,
        socs.join(", "),
    ))
}

/// One line on why a case did not pass.
fn verdict_reason(verdict: &CaseVerdict, outputs: &[eval::OutputCheck]) -> String {
    match verdict {
        CaseVerdict::Pass => "passed".into(),
        CaseVerdict::Mismatch => outputs
            .iter()
            .find(|o| !o.report.passed())
            .map(|o| {
                let r = &o.report;
                let first = r
                    .first_bad
                    .as_ref()
                    .map(|b| {
                        format!(
                            "; first at {:?}: got {}, expected {}",
                            b.multi_index, b.actual, b.expected
                        )
                    })
                    .unwrap_or_default();
                format!(
                    "output {}: {} of {} elements differ, {} unwritten{first}",
                    o.name, r.mismatches, r.total, r.unwritten
                )
            })
            .unwrap_or_else(|| "outputs differ from the golden".into()),
        CaseVerdict::Hazard => "a race between pipes in the trace".into(),
        CaseVerdict::RunFailed(outcome) => outcome.summary(),
        CaseVerdict::GoldenFailed(m) | CaseVerdict::Refused(m) => m.clone(),
    }
}

/// The state of a unit that failed to build.
fn failed_unit(e: &BuildError) -> (Option<Unit>, UnitState) {
    match e {
        BuildError::Compile {
            unit,
            file,
            line,
            message,
            ..
        } => (
            Some(*unit),
            UnitState::Fails {
                location: match line {
                    Some(l) => format!("{}:{l}", file.display()),
                    None => file.display().to_string(),
                },
                message: message.clone(),
            },
        ),
        BuildError::Timeout { unit, after_ms } => (
            Some(*unit),
            UnitState::Fails {
                location: String::new(),
                message: format!("compile timed out after {after_ms} ms"),
            },
        ),
        other => (
            None,
            UnitState::NotTried {
                reason: other.to_string(),
            },
        ),
    }
}

/// The OpDef a folder's host library registers, described in a worker:
/// the one named after the folder (or its kernel) when it registers
/// several.
fn described_opdef(
    cfg: &CompatConfig,
    dir: &Path,
    host_lib: &Path,
) -> Result<OpDefDesc, worker::DescribeError> {
    let json = worker::describe_host(host_lib, &cfg.limits)?;
    let described = Described::from_json(&json)?;
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase().replace('_', ""))
        .unwrap_or_default();
    let by_name = described
        .ops
        .iter()
        .find(|o| o.op_type.to_lowercase() == folder);
    let op = match by_name {
        Some(op) => op,
        None if described.ops.len() > 1 => &described.ops[0],
        None => described.op(None)?,
    };
    if let Some(e) = &op.error {
        return Err(ascendopt_op::opdef::OpDefError::Broken {
            op_type: op.op_type.clone(),
            message: e.clone(),
        }
        .into());
    }
    Ok(op.clone())
}

/// Why a folder's OpDef gives no kernel variants to compile.
#[derive(Debug, thiserror::Error)]
enum NoVariants {
    /// Its `DataType()` lists do not line up.
    #[error(transparent)]
    Misaligned(#[from] ascendopt_op::opdef::MisalignedDtypes),
    /// Every combination has a dtype the simulator does not know.
    #[error(
        "no dtype combination of OpDef {op_type} has dtypes the simulator knows ({})",
        .skipped.join(", ")
    )]
    UnknownDtypes {
        /// The OpDef's op type.
        op_type: String,
        /// The combinations skipped (`a/b/c`).
        skipped: Vec<String>,
    },
}

/// The kernel variants of a folder compiled without op.toml, as the
/// msopgen build makes them: one per dtype combination of the OpDef
/// (inputs then outputs, the binary's dtypes) when the kernel sources use
/// the per-variant macros; none otherwise.
fn variants_from_opdef(
    op: &OpDefDesc,
    soc: &str,
    kernel_files: &[PathBuf],
) -> Result<Vec<Vec<String>>, NoVariants> {
    let combos = op.combinations(soc)?;
    let names: Vec<&str> = combos
        .first()
        .map(|c| c.names.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let refs: Vec<&Path> = kernel_files.iter().map(PathBuf::as_path).collect();
    if names.is_empty() || !variants::uses_variant_macros(&names, &refs) {
        return Ok(Vec::new());
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut skipped = Vec::new();
    for combo in &combos {
        let Some(dtypes) = combo.bin_dtype_values() else {
            skipped.push(combo.bin_dtypes.join("/"));
            continue;
        };
        let params: Vec<variants::VariantParam<'_>> = combo
            .names
            .iter()
            .zip(&dtypes)
            .zip(&combo.formats)
            .map(|((name, &dtype), format)| variants::VariantParam {
                name,
                dtype,
                format,
            })
            .collect();
        let defines = variants::variant_defines(&params);
        if !out.contains(&defines) {
            out.push(defines);
        }
    }
    if out.is_empty() && !skipped.is_empty() {
        return Err(NoVariants::UnknownDtypes {
            op_type: op.op_type.clone(),
            skipped,
        });
    }
    Ok(out)
}

/// The kernel sources of a folder, the headers beside them and the
/// headers they include (where the per-variant macros may be used).
fn kernel_files(req: &BuildRequest, dir: &Path) -> Vec<PathBuf> {
    let mut files = req.kernel_sources.clone();
    if let Ok(entries) = std::fs::read_dir(dir.join("op_kernel")) {
        files.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "h" || x == "hpp")),
        );
    }
    variants::files_reached(&files, &req.include_dirs)
}

/// Compiles a folder without a usable op.toml and records both units'
/// states: the host first, whose OpDef (described in a worker) gives the
/// kernel variants the msopgen build would compile, then the kernel once
/// per variant.
fn compile_only(cfg: &CompatConfig, dir: &Path, row: &mut CompatRow) {
    let mut req = match BuildRequest::for_op_dir(dir, cfg.toolchain.clone()) {
        Ok(r) => r,
        Err(e) => {
            let reason = e.to_string();
            row.host = UnitState::NotTried {
                reason: reason.clone(),
            };
            row.kernel = UnitState::NotTried { reason };
            return;
        }
    };
    let opdef = match build::build_host(&req, &cfg.cache) {
        Ok(host_lib) => {
            row.host = UnitState::Compiles;
            match described_opdef(cfg, dir, &host_lib) {
                Ok(op) => Some(op),
                Err(e) => {
                    row.notes
                        .push(format!("the OpDef could not be described: {e}"));
                    None
                }
            }
        }
        Err(e) => {
            row.host = failed_unit(&e).1;
            None
        }
    };
    if let Some(op) = &opdef {
        if let Some(note) = written_for_other_socs_note(op, &cfg.soc) {
            row.notes.push(note);
        }
        match variants_from_opdef(op, &cfg.soc, &kernel_files(&req, dir)) {
            Ok(v) => {
                if v.len() > 1 {
                    row.notes.push(format!(
                        "kernel compiled for {} dtype combinations of OpDef {}",
                        v.len(),
                        op.op_type
                    ));
                }
                req.kernel_variants = v;
            }
            Err(e) => row.notes.push(e.to_string()),
        }
    }
    row.kernel = match build::build_kernels(&req, &cfg.cache) {
        Ok(_) => UnitState::Compiles,
        Err(e) => failed_unit(&e).1,
    };
}

/// The shares of a set of rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompatSummary {
    /// Operator folders.
    pub operators: usize,
    /// Whose host unit compiles.
    pub host_compiles: usize,
    /// Whose kernel unit compiles.
    pub kernel_compiles: usize,
    /// Whose units both compile.
    pub compile: usize,
    /// That have a usable op.toml and pass every case.
    pub pass: usize,
    /// That have a usable op.toml (the denominator of `pass` as a share of
    /// what can be run).
    pub with_spec: usize,
}

/// Counts the rows.
pub fn summarise(rows: &[CompatRow]) -> CompatSummary {
    CompatSummary {
        operators: rows.len(),
        host_compiles: rows.iter().filter(|r| r.host.compiles()).count(),
        kernel_compiles: rows.iter().filter(|r| r.kernel.compiles()).count(),
        compile: rows.iter().filter(|r| r.compiles()).count(),
        pass: rows.iter().filter(|r| r.run.passed()).count(),
        with_spec: rows
            .iter()
            .filter(|r| !matches!(r.run, RunState::NoSpec { .. }))
            .filter(|r| r.dir.join("op.toml").is_file())
            .count(),
    }
}

/// The rows as a text table (one line each) and the summary line.
pub fn render_table(rows: &[CompatRow]) -> String {
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(8).max(8);
    let mut out = format!(
        "{:<width$}  host    kernel  run      first blocker | missing APIs\n",
        "operator"
    );
    for r in rows {
        let mut blocker = r.first_blocker().unwrap_or_default();
        if let (Some(chip), false) = (&r.chip, r.run_on_default_chip()) {
            blocker = format!("[judged on {chip}] {blocker}");
        }
        let missing = if r.missing_apis.is_empty() {
            String::new()
        } else {
            format!(" | lacks: {}", r.missing_apis.join(", "))
        };
        out.push_str(&format!(
            "{:<width$}  {:<6}  {:<6}  {:<7}  {}{}\n",
            r.name,
            r.host.label(),
            r.kernel.label(),
            r.run.label(),
            one_line(&blocker, 160),
            missing
        ));
    }
    let s = summarise(rows);
    out.push_str(&format!(
        "{} operator folder(s): {} compile (host {}, kernel {}), {} pass ({} with an op.toml)\n",
        s.operators, s.compile, s.host_compiles, s.kernel_compiles, s.pass, s.with_spec
    ));
    out
}

/// `text` on one line, at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(3)).collect();
        format!("{cut}...")
    }
}

/// The JSON document of `ascendopt compat --json`.
pub fn to_json(rows: &[CompatRow]) -> serde_json::Value {
    serde_json::json!({
        "summary": summarise(rows),
        "operators": rows.iter().map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or(serde_json::Value::Null);
            if let Some(obj) = v.as_object_mut() {
                obj.insert("first_blocker".into(), serde_json::json!(r.first_blocker()));
            }
            v
        }).collect::<Vec<_>>(),
    })
}
