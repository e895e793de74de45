//! The msopgen build of an operator package for a chip, as a plan of
//! steps: Flow B of cann-device.md §3 in shared-library mode, the flow it
//! recommends as the reference (the sources compiled unchanged, nothing
//! installed into the toolkit's shared opp folder).
//!
//! 1. Write the operator's description JSON (`<OpType>.json`: `op`,
//!    `input_desc`, `output_desc`, `attr`, as msopgen reads it) from the
//!    OpDef.
//! 2. `msopgen gen -i <OpType>.json -c ai_core-<SoC> -lan cpp -out <project>`.
//! 3. Overwrite the generated `op_host/` and `op_kernel/` with the
//!    package's own.
//! 4. Set the build's cache variables in `CMakePresets.json`:
//!    `ASCEND_COMPUTE_UNIT`, `vendor_name` (one per build, so no two builds
//!    share a vendor folder), `ENABLE_SOURCE_PACKAGE=False`,
//!    `ENABLE_BINARY_PACKAGE=True` (aclnn needs the binaries),
//!    `ASCEND_PACK_SHARED_LIBRARY=True` (no install: the build folder then
//!    holds `op_api/include/aclnn_<op>.h` and `op_api/lib/libcust_opapi.so`).
//! 5. `bash build.sh` in the project, with `ASCEND_CUSTOM_OPP_PATH` unset
//!    (cann-device.md §1) and `ASCENDC_BUILD_LOG_DIR` set to keep the logs.
//!
//! Nothing here runs a tool: [`plan`] says what to run and which files
//! to expect, [`render_script`] writes it as a shell script a user can
//! read and replay, and [`set_presets`] is the one step done in-process.
//! Where the output lands under `build_out/` follows the documented
//! shared-library layout (`${CMAKE_INSTALL_PREFIX}/op_api/`, the prefix
//! being msopgen's `build_out`); this is our reading of the guide, not yet
//! seen on a chip.

use ascendopt_op::opdef::{AttrDesc, OpDefDesc, ParamDesc, ParamType};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The chip a build is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CannTarget {
    /// `Ascend910B2` (msopgen's `-c ai_core-<SoC>`).
    pub soc_version: String,
    /// `ascend910b` (the OpDef's `AddConfig` name; `ASCEND_COMPUTE_UNIT`).
    pub compute_unit: String,
}

impl CannTarget {
    /// The 910B2.
    pub fn ascend910b2() -> CannTarget {
        CannTarget {
            soc_version: "Ascend910B2".into(),
            compute_unit: "ascend910b".into(),
        }
    }
}

/// One step of a build.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write a file.
    Write {
        /// Where.
        path: PathBuf,
        /// What.
        text: String,
    },
    /// Copy a folder's files over another's (existing files replaced).
    CopyDir {
        /// From.
        from: PathBuf,
        /// To.
        to: PathBuf,
    },
    /// Run a program.
    Run {
        /// Program (looked up on PATH).
        program: String,
        /// Arguments.
        args: Vec<String>,
        /// Working folder.
        cwd: PathBuf,
        /// Variables set for it.
        set_env: Vec<(String, String)>,
        /// Variables removed for it.
        unset_env: Vec<String>,
    },
    /// Set cache variables of every configure preset of a
    /// `CMakePresets.json` ([`set_presets`]).
    SetPresets {
        /// The file.
        path: PathBuf,
        /// Name and value of each variable.
        vars: Vec<(String, String)>,
    },
}

/// A build: its steps and what it leaves.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildPlan {
    /// The msopgen project folder.
    pub project: PathBuf,
    /// In order.
    pub steps: Vec<Step>,
    /// `libcust_opapi.so`: tiling, kernels and the aclnn entry points.
    pub opapi_lib: PathBuf,
    /// `aclnn_<op>.h`.
    pub aclnn_header: PathBuf,
    /// `aclnn<OpType>`: the entry point (`…GetWorkspaceSize` is phase 1).
    pub aclnn_function: String,
    /// Where build.sh keeps its logs.
    pub log_dir: PathBuf,
}

/// Why a package cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The OpDef cannot be described to msopgen.
    #[error("OpDef {op}: {message}")]
    OpDef {
        /// Its type.
        op: String,
        /// What is wrong.
        message: String,
    },
    /// The package lacks a folder the build copies.
    #[error("{path}: missing (an msopgen package has op_host/ and op_kernel/)")]
    Missing {
        /// The folder.
        path: PathBuf,
    },
}

/// `AddCustom` -> `add_custom` (the aclnn header's name), as import
/// names packages.
pub use ascendopt_op::import::snake_case;

/// msopgen's type name for a GE dtype (`DT_FLOAT16` -> `float16`).
fn type_name(ge: &str) -> Option<&'static str> {
    Some(match ge {
        "DT_FLOAT16" => "float16",
        "DT_FLOAT" => "float",
        "DT_BF16" => "bfloat16",
        "DT_DOUBLE" => "double",
        "DT_INT8" => "int8",
        "DT_UINT8" => "uint8",
        "DT_INT16" => "int16",
        "DT_UINT16" => "uint16",
        "DT_INT32" => "int32",
        "DT_UINT32" => "uint32",
        "DT_INT64" => "int64",
        "DT_UINT64" => "uint64",
        "DT_BOOL" => "bool",
        "DT_COMPLEX64" => "complex64",
        _ => return None,
    })
}

fn param_json(op: &str, p: &ParamDesc) -> Result<Value, PlanError> {
    let param_type = match p.param_type {
        ParamType::Required => "required",
        ParamType::Optional => "optional",
        ParamType::Dynamic => "dynamic",
        ParamType::Virtual | ParamType::Ignore => {
            return Err(PlanError::OpDef {
                op: op.into(),
                message: format!(
                    "parameter `{}` is virtual or ignored: msopgen cannot declare it",
                    p.name
                ),
            })
        }
    };
    let types = p
        .dtypes
        .iter()
        .map(|d| {
            type_name(d).ok_or_else(|| PlanError::OpDef {
                op: op.into(),
                message: format!("parameter `{}`: dtype {d} has no msopgen type name", p.name),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if types.is_empty() {
        return Err(PlanError::OpDef {
            op: op.into(),
            message: format!("parameter `{}` declares no dtype", p.name),
        });
    }
    let formats: Vec<String> = if p.formats.is_empty() {
        vec!["ND".to_string(); types.len()]
    } else {
        p.formats
            .iter()
            .map(|f| f.strip_prefix("FORMAT_").unwrap_or(f).to_string())
            .collect()
    };
    Ok(json!({
        "name": p.name,
        "param_type": param_type,
        "format": formats,
        "type": types,
    }))
}

fn attr_json(a: &AttrDesc) -> Value {
    let ty = match a.ty.as_str() {
        "Int" => "int",
        "Float" => "float",
        "Bool" => "bool",
        "String" => "str",
        "ListInt" => "listInt",
        "ListFloat" => "listFloat",
        "ListBool" => "listBool",
        _ => "int",
    };
    let mut v = json!({
        "name": a.name,
        "param_type": if a.required { "required" } else { "optional" },
        "type": ty,
    });
    if let Some(d) = &a.default {
        v["default_value"] = match d {
            Value::String(s) => Value::String(s.clone()),
            other => Value::String(other.to_string()),
        };
    }
    v
}

/// The description JSON msopgen generates a project from: a list of one
/// operator.
pub fn op_json(def: &OpDefDesc) -> Result<Value, PlanError> {
    if let Some(e) = &def.error {
        return Err(PlanError::OpDef {
            op: def.op_type.clone(),
            message: e.clone(),
        });
    }
    let inputs = def
        .inputs
        .iter()
        .map(|p| param_json(&def.op_type, p))
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = def
        .outputs
        .iter()
        .map(|p| param_json(&def.op_type, p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut op = json!({
        "op": def.op_type,
        "input_desc": inputs,
        "output_desc": outputs,
    });
    if !def.attrs.is_empty() {
        op["attr"] = Value::Array(def.attrs.iter().map(attr_json).collect());
    }
    Ok(Value::Array(vec![op]))
}

/// The plan for building `package` (an msopgen layout with `op_host/` and
/// `op_kernel/`) whose OpDef is `def`, in `work` (a fresh folder per
/// build), under vendor name `vendor`.
pub fn plan(
    package: &Path,
    def: &OpDefDesc,
    target: &CannTarget,
    work: &Path,
    vendor: &str,
) -> Result<BuildPlan, PlanError> {
    for sub in ["op_host", "op_kernel"] {
        if !package.join(sub).is_dir() {
            return Err(PlanError::Missing {
                path: package.join(sub),
            });
        }
    }
    let description = op_json(def)?;
    let json_file = work.join(format!("{}.json", def.op_type));
    let project = work.join(&def.op_type);
    let log_dir = work.join("build-logs");
    let snake = snake_case(&def.op_type);
    let steps = vec![
        Step::Write {
            path: json_file.clone(),
            text: serde_json::to_string_pretty(&description).unwrap_or_default() + "\n",
        },
        Step::Run {
            program: "msopgen".into(),
            args: vec![
                "gen".into(),
                "-i".into(),
                json_file.display().to_string(),
                "-c".into(),
                format!("ai_core-{}", target.soc_version),
                "-lan".into(),
                "cpp".into(),
                "-out".into(),
                project.display().to_string(),
            ],
            cwd: work.to_path_buf(),
            set_env: Vec::new(),
            unset_env: vec!["ASCEND_CUSTOM_OPP_PATH".into()],
        },
        Step::CopyDir {
            from: package.join("op_host"),
            to: project.join("op_host"),
        },
        Step::CopyDir {
            from: package.join("op_kernel"),
            to: project.join("op_kernel"),
        },
        Step::SetPresets {
            path: project.join("CMakePresets.json"),
            vars: vec![
                ("ASCEND_COMPUTE_UNIT".into(), target.compute_unit.clone()),
                ("vendor_name".into(), vendor.into()),
                ("ENABLE_SOURCE_PACKAGE".into(), "False".into()),
                ("ENABLE_BINARY_PACKAGE".into(), "True".into()),
                ("ASCEND_PACK_SHARED_LIBRARY".into(), "True".into()),
            ],
        },
        Step::Run {
            program: "bash".into(),
            args: vec!["build.sh".into()],
            cwd: project.clone(),
            set_env: vec![(
                "ASCENDC_BUILD_LOG_DIR".into(),
                log_dir.display().to_string(),
            )],
            unset_env: vec!["ASCEND_CUSTOM_OPP_PATH".into()],
        },
    ];
    let op_api = project.join("build_out/op_api");
    Ok(BuildPlan {
        project,
        steps,
        opapi_lib: op_api.join("lib/libcust_opapi.so"),
        aclnn_header: op_api.join(format!("include/aclnn_{snake}.h")),
        aclnn_function: format!("aclnn{}", def.op_type),
        log_dir,
    })
}

/// Why `CMakePresets.json` could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum PresetsError {
    /// It is not JSON.
    #[error("CMakePresets.json: {0}")]
    Json(#[from] serde_json::Error),
    /// It is JSON of another shape.
    #[error("CMakePresets.json: {0}")]
    Shape(&'static str),
}

/// `CMakePresets.json` with `vars` set in the `cacheVariables` of every
/// configure preset (each variable's `value`, its `type` kept or, for a
/// new one, `STRING`/`BOOL` by value).
pub fn set_presets(text: &str, vars: &[(String, String)]) -> Result<String, PresetsError> {
    let mut doc: Value = serde_json::from_str(text)?;
    let presets = doc
        .get_mut("configurePresets")
        .and_then(Value::as_array_mut)
        .ok_or(PresetsError::Shape("no configurePresets list"))?;
    if presets.is_empty() {
        return Err(PresetsError::Shape("configurePresets is empty"));
    }
    for preset in presets {
        let obj = preset
            .as_object_mut()
            .ok_or(PresetsError::Shape("a configure preset is not an object"))?;
        let cache = obj.entry("cacheVariables").or_insert_with(|| json!({}));
        let cache = cache
            .as_object_mut()
            .ok_or(PresetsError::Shape("cacheVariables is not an object"))?;
        for (name, value) in vars {
            match cache.get_mut(name) {
                Some(Value::Object(var)) => {
                    var.insert("value".into(), Value::String(value.clone()));
                }
                _ => {
                    let ty = if matches!(value.as_str(), "True" | "False") {
                        "BOOL"
                    } else {
                        "STRING"
                    };
                    cache.insert(name.clone(), json!({ "type": ty, "value": value }));
                }
            }
        }
    }
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The plan as a shell script (what a user would type), for logs and for
/// replaying a build by hand.
pub fn render_script(plan: &BuildPlan) -> String {
    let mut out = String::from("#!/bin/bash\n# The msopgen build ascendopt runs (shared-library mode, nothing installed).\nset -euo pipefail\n");
    for step in &plan.steps {
        match step {
            Step::Write { path, text } => {
                out.push_str(&format!(
                    "cat > {} <<'ASCENDOPT_EOF'\n{}ASCENDOPT_EOF\n",
                    quote(&path.display().to_string()),
                    text
                ));
            }
            Step::CopyDir { from, to } => out.push_str(&format!(
                "mkdir -p {to} && cp -rf {from}/. {to}/\n",
                from = quote(&from.display().to_string()),
                to = quote(&to.display().to_string())
            )),
            Step::Run {
                program,
                args,
                cwd,
                set_env,
                unset_env,
            } => {
                let mut line = format!("(cd {} && ", quote(&cwd.display().to_string()));
                if !unset_env.is_empty() || !set_env.is_empty() {
                    line.push_str("env ");
                    for v in unset_env {
                        line.push_str(&format!("-u {v} "));
                    }
                    for (k, v) in set_env {
                        line.push_str(&format!("{k}={} ", quote(v)));
                    }
                }
                line.push_str(program);
                for a in args {
                    line.push(' ');
                    line.push_str(&quote(a));
                }
                line.push_str(")\n");
                out.push_str(&line);
            }
            Step::SetPresets { path, vars } => {
                out.push_str(&format!(
                    "# in {}, set cacheVariables of every configure preset: {}\n",
                    path.display(),
                    vars.iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
            }
        }
    }
    out
}

/// A step of a build that failed.
#[derive(Debug, thiserror::Error)]
#[error("build step {index} ({what}) failed: {message}")]
pub struct StepError {
    /// 1-based.
    pub index: usize,
    /// The step, shortly.
    pub what: String,
    /// What went wrong (a tool's last output lines included).
    pub message: String,
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    ascendopt_op::package::copy_tree(from, to, &[])
        .map_err(|(p, e)| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))
}

/// Runs a plan's steps in order, with `path` as the tools' `PATH`; each
/// tool's output goes to `<log_dir>/step-<n>.log`. Stops at the first
/// failure, naming the step and the tool's last lines.
pub fn execute(plan: &BuildPlan, path: &str) -> Result<(), StepError> {
    execute_limited(plan, path, None)
}

/// [`execute`] with a wall-clock limit on each tool: one that runs longer
/// is killed with its process group and fails its step.
pub fn execute_limited(
    plan: &BuildPlan,
    path: &str,
    limit: Option<std::time::Duration>,
) -> Result<(), StepError> {
    execute_steps(&plan.steps, 1, &plan.log_dir, path, limit)?;
    for expected in [&plan.opapi_lib, &plan.aclnn_header] {
        if !expected.is_file() {
            return Err(StepError {
                index: plan.steps.len(),
                what: "bash build.sh".into(),
                message: format!("the build finished but left no {}", expected.display()),
            });
        }
    }
    Ok(())
}

/// Runs `steps` in order, numbering them from `first` (logs
/// `<log_dir>/step-<n>.log`), with `path` as the tools' `PATH` and
/// `limit` on each tool's wall-clock time.
pub fn execute_steps(
    steps: &[Step],
    first: usize,
    log_dir: &Path,
    path: &str,
    limit: Option<std::time::Duration>,
) -> Result<(), StepError> {
    let fail = |index: usize, what: &str, message: String| StepError {
        index,
        what: what.to_string(),
        message,
    };
    std::fs::create_dir_all(log_dir)
        .map_err(|e| fail(0, "log folder", format!("{}: {e}", log_dir.display())))?;
    for (i, step) in steps.iter().enumerate() {
        let index = first + i;
        match step {
            Step::Write { path: file, text } => {
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| fail(index, "write", format!("{}: {e}", parent.display())))?;
                }
                std::fs::write(file, text)
                    .map_err(|e| fail(index, "write", format!("{}: {e}", file.display())))?;
            }
            Step::CopyDir { from, to } => copy_dir(from, to).map_err(|e| {
                fail(
                    index,
                    "copy",
                    format!("{} -> {}: {e}", from.display(), to.display()),
                )
            })?,
            Step::SetPresets { path: file, vars } => {
                let text = std::fs::read_to_string(file).map_err(|e| {
                    fail(
                        index,
                        "CMakePresets.json",
                        format!("{}: {e}", file.display()),
                    )
                })?;
                let edited = set_presets(&text, vars)
                    .map_err(|e| fail(index, "CMakePresets.json", e.to_string()))?;
                std::fs::write(file, edited).map_err(|e| {
                    fail(
                        index,
                        "CMakePresets.json",
                        format!("{}: {e}", file.display()),
                    )
                })?;
            }
            Step::Run {
                program,
                args,
                cwd,
                set_env,
                unset_env,
            } => {
                let what = format!(
                    "{program} {}",
                    args.first().map(String::as_str).unwrap_or("")
                );
                let log = log_dir.join(format!("step-{index}.log"));
                let mut cmd = std::process::Command::new(program);
                cmd.args(args).current_dir(cwd).env("PATH", path);
                for v in unset_env {
                    cmd.env_remove(v);
                }
                for (k, v) in set_env {
                    cmd.env(k, v);
                }
                let ended = super::child::run(cmd, limit.unwrap_or(std::time::Duration::MAX), &log)
                    .map_err(|e| fail(index, &what, e.to_string()))?;
                let (status, ok, text) = match ended {
                    super::child::Ended::Exited { status, output } => {
                        (status.to_string(), status.success(), output)
                    }
                    super::child::Ended::TimedOut { after_ms, output } => (
                        format!("did not finish in {after_ms} ms and was killed"),
                        false,
                        output,
                    ),
                };
                let _ = std::fs::write(&log, &text);
                let _ = std::fs::remove_file(log.with_extension("out"));
                let _ = std::fs::remove_file(log.with_extension("err"));
                if !ok {
                    return Err(fail(
                        index,
                        &what,
                        format!(
                            "{status} (log {}):\n{}",
                            log.display(),
                            super::child::tail(&text, 8)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}
