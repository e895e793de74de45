//! `ascendopt import`: an op.toml (and, when the project's own tests give
//! the expected outputs, a golden.py) for an msopgen operator folder
//! written elsewhere.
//!
//! What it reads (the caller gathers the OpDef, [`Sources`]):
//! - the OpDef: inputs and outputs (parameter types, dtype columns),
//!   attributes with types and defaults;
//! - the project's test cases: msopst case files (`tests/st/*.json`, their
//!   `calc_expect_func`), else a `gen_data.py` (the script that writes
//!   `input/*.bin` and `output/golden.bin`), else one suggested case per
//!   dtype combination of the OpDef;
//! - a tail case (a shape whose bytes are no multiple of 32), written
//!   commented out with a note whenever no case of the project is one: the
//!   project never claims a tail, so its tiling or the APIs it calls may
//!   not take one (a kernel that splits the length evenly over cores and
//!   tiles gets an empty tile; SoftMax needs rows of whole 32-byte blocks),
//!   and a case the user never asked for must not make the operator fail.
//!   The user uncomments it to test a tail.
//!
//! The expected outputs come from the project's own code: a golden.py is
//! written that calls the msopst expected-output function, or reruns
//! gen_data.py with its input draws replaced by the case's inputs
//! (`gen_data_runner.py`). Neither runs here; [`plan`] only reads files
//! and, for gen_data.py, runs it once to learn what it draws and writes
//! ([`gen_data::discover`]).
//!
//! Invariant: nothing is written; [`Imported`] holds the texts.

pub mod gen_data;
pub mod json_file;
pub mod msopst;
pub mod opdef_source;
mod render;
pub mod value_depend;
pub mod verify;

use crate::opdef::{dtype_of_ge, OpDefDesc, ParamDesc, ParamType};
use crate::Dtype;
use serde_json::Value;
use std::path::{Path, PathBuf};

use render::render;

/// What the caller found out about an operator folder.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The operator folder (op_host/, op_kernel/).
    pub op_dir: PathBuf,
    /// Its OpDef.
    pub opdef: OpDefDesc,
    /// Where the OpDef came from, for the op.toml's comment.
    pub opdef_from: String,
    /// The kernel entry symbol.
    pub kernel: String,
    /// The kernel sources relative to the folder, when op.toml must list
    /// them (more than one `.cpp` in op_kernel/).
    pub kernel_sources: Option<Vec<String>>,
}

/// How to import.
#[derive(Debug, Clone)]
pub struct Options {
    /// The simulated SoC (picks the OpDef's per-SoC configuration).
    pub soc: String,
    /// The chip profile op.toml names (`chip`), when the operator is
    /// written for a chip other than the device's default.
    pub chip: Option<String>,
    /// The Python interpreter for gen_data.py discovery.
    pub python: String,
}

/// The texts to write into the operator folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// `op.toml`.
    pub toml: String,
    /// `golden.py`, when the golden is a script.
    pub golden_py: Option<String>,
    /// What the import chose and why (for the user).
    pub notes: Vec<String>,
}

/// One tensor parameter of the spec to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Param {
    pub name: String,
    pub dtypes: Vec<Dtype>,
    pub list: bool,
    pub optional: bool,
    pub value_depend: bool,
    /// The dtype rule: same_as an input, or fixed.
    pub rule: Option<Rule>,
    /// For an output: the input it is in place (the OpDef names both
    /// alike, as msopgen projects do for ref tensors).
    pub inplace: Option<String>,
    /// For an output: the kernel has an argument for it (false: an input
    /// the kernel writes into, of an OpDef that declares no output).
    pub argument: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rule {
    SameAs(String),
    /// The input's dtype, or its parts' for a complex one.
    RealOf(String),
    Fixed(Dtype),
    /// The input's dtype looked up in a table (`by` / `table`).
    Map(String, Vec<(Dtype, Dtype)>),
}

/// An attribute of the spec to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Attr {
    pub name: String,
    /// op.toml type name.
    pub ty: &'static str,
    pub default: Option<Value>,
}

/// A value distribution of one input in a case.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DistSpec {
    Uniform(f64, f64),
    Int(i64, i64),
    Normal(f64, f64),
}

/// One input of a case: its shapes (several for a list) and dtype.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseTensor {
    pub name: String,
    pub dtype: Dtype,
    pub shapes: Vec<Vec<usize>>,
    pub dist: Option<DistSpec>,
}

/// A case of the spec to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseSpec {
    pub name: String,
    pub comment: String,
    pub inputs: Vec<CaseTensor>,
    pub omit: Vec<String>,
    /// Output dtypes (all of them; written when not implied).
    pub outputs: Vec<(String, Dtype)>,
    pub attrs: Vec<(String, Value)>,
}

/// The whole spec to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub name: String,
    pub op_type: String,
    pub kernel: String,
    pub kernel_sources: Option<Vec<String>>,
    /// op.toml's `chip`, when not the default.
    pub chip: Option<String>,
    pub opdef_from: String,
    pub inputs: Vec<Param>,
    pub outputs: Vec<Param>,
    pub attrs: Vec<Attr>,
    pub cases: Vec<CaseSpec>,
    /// `[golden] script` when a golden.py is written.
    pub golden_script: Option<String>,
    /// Cases written commented out (a tail case the project's own cases
    /// never exercise).
    pub commented_cases: Vec<CaseSpec>,
    /// The tolerance of the project's own check (verify_result.py), written
    /// as `[tolerance.<dtype>]`.
    pub tolerance: Option<verify::ProjectTolerance>,
    pub notes: Vec<String>,
}

/// `AddCustom` → `add_custom`.
pub fn snake_case(camel: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = camel.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if i > 0 && (prev_lower || (next_lower && chars[i - 1].is_ascii_uppercase())) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// The op.toml attr type of an OpDef attr type; None when op.toml has
/// none (the attribute is left to its OpDef default).
fn toml_attr_type(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "Int" => "int",
        "Float" => "float",
        "Bool" => "bool",
        "String" => "str",
        "ListInt" | "ListBool" => "list_int",
        "ListFloat" => "list_float",
        _ => return None,
    })
}

/// A value for a required attribute nothing gives: the type's zero.
fn zero_of(ty: &str) -> Value {
    match ty {
        "int" => Value::from(0),
        "float" => Value::from(0.0),
        "bool" => Value::from(false),
        "str" => Value::from(""),
        _ => Value::Array(Vec::new()),
    }
}

/// The dtypes of a parameter's column, as [`Dtype`]s (None for one the
/// simulator has no type for).
fn column(p: &ParamDesc) -> Vec<Option<Dtype>> {
    p.dtypes.iter().map(|d| dtype_of_ge(d)).collect()
}

fn distinct(col: &[Option<Dtype>]) -> Vec<Dtype> {
    let mut out = Vec::new();
    for d in col.iter().flatten() {
        if !out.contains(d) {
            out.push(*d);
        }
    }
    out
}

/// Why an operator folder gives no op.toml.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The OpDef names an input's dtypes through something the reader
    /// cannot follow.
    #[error("input `{input}`: no dtypes found (an OpDef that names them through a variable is read only when the host unit compiles)")]
    NoDtypes {
        /// The input.
        input: String,
    },
    /// None of a parameter's dtypes is one the simulator knows.
    #[error("{side} `{param}` has no dtype the simulator knows ({})", .dtypes.join(", "))]
    UnknownDtypes {
        /// `input` or `output`.
        side: &'static str,
        /// The parameter.
        param: String,
        /// The OpDef's dtype names.
        dtypes: Vec<String>,
    },
    /// The OpDef declares no output and no input looks written.
    #[error("the OpDef {op_type} declares no Output and no input looks written (inputs: {}): op.toml needs an output", .inputs.join(", "))]
    NoOutput {
        /// The OpDef's op type.
        op_type: String,
        /// Its inputs.
        inputs: Vec<String>,
    },
}

/// Why an msopst case is left out of the imported op.toml.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CaseLeftOut {
    /// The case lacks a required input.
    #[error("it gives no input `{input}`")]
    NoInput {
        /// The input.
        input: String,
    },
    /// A required input's dtype is UNDEFINED.
    #[error("input `{input}` is UNDEFINED but not optional")]
    Undefined {
        /// The input.
        input: String,
    },
    /// An input's dtype is not among the OpDef's.
    #[error("input `{input}` is {dtype}, which the OpDef does not allow")]
    DtypeNotAllowed {
        /// The input.
        input: String,
        /// Its dtype in the case.
        dtype: Dtype,
    },
    /// An input has no shape.
    #[error("input `{input}` has no shape")]
    NoShape {
        /// The input.
        input: String,
    },
    /// Neither the case nor the output's rule gives the output a dtype.
    #[error("no dtype for output `{output}`")]
    NoOutputDtype {
        /// The output.
        output: String,
    },
    /// An output's dtype differs from what its op.toml rule gives.
    #[error("output `{output}` is {dtype} here, where op.toml's rule for it gives {rule_gives}")]
    OutputDtype {
        /// The output.
        output: String,
        /// Its dtype in the case.
        dtype: Dtype,
        /// The dtype the rule gives.
        rule_gives: Dtype,
    },
}

/// The tensor parameters of the spec, with dtype rules read off the
/// OpDef's columns.
fn params(
    inputs: &[ParamDesc],
    outputs: &[ParamDesc],
    notes: &mut Vec<String>,
) -> Result<(Vec<Param>, Vec<Param>), ImportError> {
    let mut ins: Vec<Param> = Vec::new();
    let mut in_cols: Vec<Vec<Option<Dtype>>> = Vec::new();
    for p in inputs {
        let col = column(p);
        let dtypes = distinct(&col);
        if p.dtypes.is_empty() {
            return Err(ImportError::NoDtypes {
                input: p.name.clone(),
            });
        }
        if dtypes.is_empty() {
            return Err(ImportError::UnknownDtypes {
                side: "input",
                param: p.name.clone(),
                dtypes: p.dtypes.clone(),
            });
        }
        // Same column as an earlier input: same dtype in every case.
        let rule = (!p.dtype_list && col.len() > 1)
            .then(|| {
                inputs
                    .iter()
                    .zip(&in_cols)
                    .find(|(q, c)| !q.dtype_list && **c == col)
                    .map(|(q, _)| Rule::SameAs(q.name.clone()))
            })
            .flatten();
        ins.push(Param {
            name: p.name.clone(),
            dtypes,
            list: p.param_type == ParamType::Dynamic,
            optional: p.param_type == ParamType::Optional,
            value_depend: p.value_depend(),
            rule,
            inplace: None,
            argument: true,
        });
        in_cols.push(col);
    }
    let mut outs = Vec::new();
    for p in outputs {
        let col = column(p);
        let dtypes = distinct(&col);
        if dtypes.is_empty() {
            return Err(ImportError::UnknownDtypes {
                side: "output",
                param: p.name.clone(),
                dtypes: p.dtypes.clone(),
            });
        }
        let same = inputs
            .iter()
            .zip(&in_cols)
            .find(|(q, c)| !q.dtype_list && q.param_type != ParamType::Optional && **c == col)
            .map(|(q, _)| q.name.clone());
        let rule = match (same, dtypes.as_slice()) {
            (_, [one]) => Rule::Fixed(*one),
            (Some(input), _) => Rule::SameAs(input),
            (None, _) => {
                // The output's dtype follows no single input: take the
                // input whose column decides it.
                let decider = inputs.iter().zip(&in_cols).find(|(q, c)| {
                    !q.dtype_list
                        && c.len() == col.len()
                        && c.iter().zip(&col).all(|(a, b)| {
                            c.iter()
                                .zip(&col)
                                .filter(|(x, _)| *x == a)
                                .all(|(_, y)| y == b)
                        })
                });
                let real_of = |c: &[Option<Dtype>]| {
                    c.iter()
                        .zip(&col)
                        .all(|(a, b)| *b == a.map(|a| a.complex_part().unwrap_or(a)))
                };
                match decider {
                    Some((q, c)) if real_of(c) => Rule::RealOf(q.name.clone()),
                    Some((q, c)) => {
                        // The decider's column maps to the output's one
                        // to one: a dtype table.
                        let mut table: Vec<(Dtype, Dtype)> = Vec::new();
                        for (a, b) in c.iter().zip(&col) {
                            if let (Some(a), Some(b)) = (a, b) {
                                if !table.iter().any(|(f, _)| f == a) {
                                    table.push((*a, *b));
                                }
                            }
                        }
                        Rule::Map(q.name.clone(), table)
                    }
                    None => Rule::Fixed(dtypes[0]),
                }
            }
        };
        // An output named like an input is that input in place (a ref
        // tensor); op.toml names must differ, so the output gets a suffix.
        let inplace = inputs
            .iter()
            .find(|q| q.name == p.name)
            .map(|q| q.name.clone());
        let name = match &inplace {
            Some(input) => {
                let mut name = format!("{input}_out");
                while inputs.iter().chain(outputs).any(|q| q.name == name) {
                    name.push('_');
                }
                notes.push(format!(
                    "output `{input}` is input `{input}` in place (the OpDef names both alike): written as output `{name}` with inplace = \"{input}\""
                ));
                name
            }
            None => p.name.clone(),
        };
        let rule = match &inplace {
            Some(input) => Rule::SameAs(input.clone()),
            None => rule,
        };
        outs.push(Param {
            name,
            dtypes,
            list: p.param_type == ParamType::Dynamic,
            optional: false,
            value_depend: false,
            rule: Some(rule),
            inplace,
            argument: true,
        });
    }
    Ok((ins, outs))
}

/// The outputs of an OpDef that declares none (its kernel writes into
/// inputs and has no output argument): the inputs the project's msopst
/// cases name as outputs; else those named as TensorFlow's optimisers
/// name their ref tensors (`var`, `ref`, with `var` also `m`, `v`,
/// `accum`, ...); else the first input. Each becomes `<name>_out` with
/// `inplace = "<name>"` and `argument = false`, and a note says which.
fn written_inputs(
    ins: &[Param],
    st: &[msopst::StCase],
    notes: &mut Vec<String>,
) -> Option<Vec<Param>> {
    const REFS: [&str; 2] = ["var", "ref"];
    const WITH_VAR: [&str; 9] = [
        "m",
        "v",
        "accum",
        "accum_update",
        "mom",
        "ms",
        "mg",
        "linear",
        "vhat",
    ];
    let named: Vec<&Param> = ins
        .iter()
        .filter(|p| {
            st.iter()
                .any(|c| c.outputs.iter().any(|o| o.name == p.name))
        })
        .collect();
    let (chosen, why): (Vec<&Param>, &str) = if !named.is_empty() {
        (named, "the msopst cases name it as an output")
    } else {
        let has_var = ins.iter().any(|p| p.name == "var");
        let refs: Vec<&Param> = ins
            .iter()
            .filter(|p| {
                REFS.contains(&p.name.as_str())
                    || p.name.ends_with("_ref")
                    || (has_var && WITH_VAR.contains(&p.name.as_str()))
            })
            .collect();
        if !refs.is_empty() {
            (
                refs,
                "its name is a ref tensor's (var, ref, and m, v, ... beside var)",
            )
        } else {
            (
                vec![ins.first()?],
                "the first input (the OpDef names no output; check it)",
            )
        }
    };
    let mut outs = Vec::new();
    for p in chosen.into_iter().filter(|p| !p.optional) {
        let mut name = format!("{}_out", p.name);
        while ins.iter().any(|q| q.name == name) {
            name.push('_');
        }
        notes.push(format!(
            "the OpDef declares no Output: input `{}` is taken as written in place ({why}); output `{name}` with inplace = \"{}\", argument = false",
            p.name, p.name
        ));
        outs.push(Param {
            name,
            dtypes: p.dtypes.clone(),
            list: p.list,
            optional: false,
            value_depend: false,
            rule: Some(Rule::SameAs(p.name.clone())),
            inplace: Some(p.name.clone()),
            argument: false,
        });
    }
    (!outs.is_empty()).then_some(outs)
}

/// What [`plan`] found for the golden.
pub(crate) enum GoldenSource {
    Msopst {
        file: PathBuf,
        func: String,
    },
    GenData {
        script: PathBuf,
        found: gen_data::Discovered,
    },
    None,
}

/// Plans the spec of an operator folder and renders its texts.
pub fn plan_and_render(src: &Sources, opts: &Options) -> Result<Imported, ImportError> {
    let (plan, golden, mapping) = plan(src, opts)?;
    let golden_py = match (&golden, &mapping) {
        (GoldenSource::Msopst { file, func }, _) => {
            render::msopst_golden(&src.op_dir, file, func, &plan)
        }
        (GoldenSource::GenData { script, .. }, Some(m)) => {
            render::gen_data_golden(&src.op_dir, script, m)
        }
        _ => render::scaffold_golden(&plan),
    };
    Ok(Imported {
        toml: render(&plan),
        golden_py: Some(golden_py),
        notes: plan.notes.clone(),
    })
}

/// The msopst cases of the folder, in file order.
fn msopst_cases(op_dir: &Path) -> Vec<msopst::StCase> {
    let dir = op_dir.join("tests").join("st");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|f| msopst::read_cases(f).ok())
        .flatten()
        .collect()
}

/// A framework a Python file imports that `python` cannot import (so the
/// file cannot run here); None when it needs none or all of them import.
fn needs_unavailable(file: &Path, python: &str) -> Option<&'static str> {
    let text = std::fs::read_to_string(file).ok()?;
    [
        "torch_npu",
        "torch",
        "tensorflow",
        "mindspore",
        "paddle",
        "jax",
    ]
    .into_iter()
    .filter(|m| {
        text.lines().any(|l| {
            let l = l.trim();
            [format!("import {m}"), format!("from {m}")]
                .iter()
                .any(|p| {
                    l.strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '.', ',']))
                })
        })
    })
    .find(|m| !importable(python, m))
}

/// Whether `python -c "import m"` succeeds.
fn importable(python: &str, module: &str) -> bool {
    std::process::Command::new(python)
        .args(["-c", &format!("import {module}")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Where the expected outputs come from, and the cases of that source.
fn golden_source(
    src: &Sources,
    opts: &Options,
) -> (GoldenSource, Vec<msopst::StCase>, Vec<String>) {
    let mut notes = Vec::new();
    let st = msopst_cases(&src.op_dir);
    let st_expect = st.iter().find_map(|c| c.expect.clone());
    if let Some((file, func)) = &st_expect {
        match needs_unavailable(file, &opts.python) {
            None if file.is_file() => {
                return (
                    GoldenSource::Msopst {
                        file: file.clone(),
                        func: func.clone(),
                    },
                    st,
                    notes,
                )
            }
            None => notes.push(format!(
                "{} (the msopst expected-output file) does not exist",
                file.display()
            )),
            Some(m) => notes.push(format!(
                "{} needs {m}, which {} cannot import here ({}); looking for a numpy golden",
                file.display(),
                opts.python,
                crate::golden::script::install_hint(&opts.python, m)
            )),
        }
    }
    for script in gen_data::scripts(&src.op_dir) {
        if let Some(m) = needs_unavailable(&script, &opts.python) {
            notes.push(format!(
                "{} needs {m}, which {} cannot import here ({})",
                script.display(),
                opts.python,
                crate::golden::script::install_hint(&opts.python, m)
            ));
            continue;
        }
        match gen_data::discover(&script, &opts.python) {
            Ok(found) => return (GoldenSource::GenData { script, found }, st, notes),
            Err(e) => notes.push(e.to_string()),
        }
    }
    (GoldenSource::None, st, notes)
}

/// Marks `value_depend` the inputs whose values the host code of
/// `op_dir` reads ([`value_depend::value_reads`]) though the OpDef does
/// not declare them `ValueDepend`, each with a note naming the read.
fn mark_value_reads(op_dir: &Path, ins: &mut [Param], notes: &mut Vec<String>) {
    let host = op_dir.join("op_host");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&host)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension()
                        .is_some_and(|x| x == "cpp" || x == "cc" || x == "h" || x == "hpp")
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let texts: Vec<(String, String)> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            let name = f.strip_prefix(op_dir).unwrap_or(f).display().to_string();
            Some((name, text))
        })
        .collect();
    let reads =
        value_depend::value_read_inputs(texts.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    for (index, (file, line)) in reads {
        let Some(p) = ins.get_mut(index) else {
            continue;
        };
        if p.value_depend || p.list {
            continue;
        }
        p.value_depend = true;
        notes.push(format!(
            "input `{}` is marked value_depend: the tiling reads its values ({file}:{line}, GetInputTensor({index}) then GetData) though the OpDef declares no ValueDepend for it; CANN gives a tiling an input's values only for a ValueDepend input",
            p.name
        ));
    }
}

/// The spec of an operator folder, where its golden comes from and (for a
/// gen_data.py) how to rerun it.
/// The tolerance of the project's own check, the first verify_result.py
/// that states one ([`verify`]); a note says which script, or why none.
fn project_tolerance(
    op_dir: &Path,
    outputs: &[Param],
    notes: &mut Vec<String>,
) -> Option<verify::ProjectTolerance> {
    let mut floats: Vec<crate::dtype::Dtype> = Vec::new();
    for d in outputs.iter().flat_map(|p| p.dtypes.iter()) {
        if d.is_float() && !floats.contains(d) {
            floats.push(*d);
        }
    }
    let scripts = verify::scripts(op_dir);
    for script in &scripts {
        let Ok(text) = std::fs::read_to_string(script) else {
            continue;
        };
        if let Some(t) = verify::read(script, &text, &floats) {
            notes.push(format!(
                "the tolerance comes from the project's own check {} (rtol {}, atol {}, {} of the elements may fail)",
                script.display(),
                t.rtol,
                t.atol,
                t.max_mismatch_ratio
            ));
            if t.single_loss {
                notes.push(format!(
                    "{} compares absolute and relative error with one number, loss = {}, and fails a case only when both its counts exceed the share: op.toml's per-element rule never fails a case it passes, but may pass one it fails",
                    script.display(),
                    t.atol
                ));
            }
            return Some(t);
        }
    }
    if let Some(script) = scripts.first() {
        notes.push(format!(
            "{} states no tolerance as plain module-level numbers (relative_tol, absolute_tol, error_tol, or one loss): the defaults of ops/README-schema.md are written",
            script.display()
        ));
    }
    None
}

pub(crate) fn plan(
    src: &Sources,
    opts: &Options,
) -> Result<(Plan, GoldenSource, Option<gen_data::Mapping>), ImportError> {
    let op = &src.opdef;
    let (inputs, outputs) = op.params_for(&opts.soc);
    let mut notes = vec![format!("the interface comes from {}", src.opdef_from)];
    let (mut ins, outs) = params(inputs, outputs, &mut notes)?;
    mark_value_reads(&src.op_dir, &mut ins, &mut notes);
    let mut outs = outs;
    if outs.is_empty() {
        outs = written_inputs(&ins, &msopst_cases(&src.op_dir), &mut notes).ok_or_else(|| {
            ImportError::NoOutput {
                op_type: op.op_type.clone(),
                inputs: ins.iter().map(|p| p.name.clone()).collect(),
            }
        })?;
    }
    let attrs: Vec<Attr> = op
        .attrs
        .iter()
        .filter_map(|a| {
            let Some(ty) = toml_attr_type(&a.ty) else {
                notes.push(format!(
                    "attribute `{}` ({}) is left to its OpDef default",
                    a.name, a.ty
                ));
                return None;
            };
            let default = a.default.clone().map(|d| match (ty, d) {
                ("float", Value::Number(n)) => Value::from(n.as_f64().unwrap_or(0.0)),
                ("list_int", Value::Array(v)) => Value::Array(
                    v.into_iter()
                        .map(|x| match x {
                            Value::Bool(b) => Value::from(i64::from(b)),
                            other => other,
                        })
                        .collect(),
                ),
                (_, d) => d,
            });
            Some(Attr {
                name: a.name.clone(),
                ty,
                default,
            })
        })
        .collect();
    let combos = op.combinations(&opts.soc).unwrap_or_default();
    let (mut golden, st_cases, golden_notes) = golden_source(src, opts);
    notes.extend(golden_notes);
    let mut plan = Plan {
        name: snake_case(&op.op_type),
        op_type: op.op_type.clone(),
        kernel: src.kernel.clone(),
        kernel_sources: src.kernel_sources.clone(),
        chip: opts.chip.clone(),
        opdef_from: src.opdef_from.clone(),
        inputs: ins,
        outputs: outs,
        attrs,
        cases: Vec::new(),
        golden_script: None,
        commented_cases: Vec::new(),
        tolerance: None,
        notes,
    };
    plan.tolerance = project_tolerance(&src.op_dir, &plan.outputs, &mut plan.notes);
    // Cases: the project's, else one per dtype combination.
    let mut mapping = None;
    match &golden {
        GoldenSource::GenData { script, found } => {
            match gen_data::case_and_mapping(found, &plan, script) {
                Ok((case, m)) => {
                    plan.cases.push(case);
                    mapping = Some(m);
                }
                Err(e) => {
                    plan.notes.push(e.to_string());
                    golden = GoldenSource::None;
                }
            }
        }
        _ if !st_cases.is_empty() => {
            for c in &st_cases {
                match case_from_msopst(c, &plan) {
                    Ok(case) => plan.cases.push(case),
                    Err(e) => plan
                        .notes
                        .push(format!("msopst case {}: {e}; left out", c.name)),
                }
            }
        }
        _ => {}
    }
    let own_cases = !plan.cases.is_empty();
    if plan.cases.is_empty() {
        plan.cases = suggested_cases(&plan, &combos);
        plan.notes.push(format!(
            "no usable test case in the project: {} suggested case(s), one per dtype combination of the OpDef",
            plan.cases.len()
        ));
    }
    dedupe_names(&mut plan.cases);
    if let Some(tail) = tail_case(&plan) {
        let whose = if own_cases {
            "the project's own cases are all whole 32-byte blocks"
        } else {
            "the suggested cases are whole 32-byte blocks and nothing in the project says the operator takes a tail"
        };
        plan.notes.push(format!(
            "{whose}: tail case {} is written commented out (uncomment it if the operator handles a tail)",
            tail.name
        ));
        plan.commented_cases.push(tail);
    }
    plan.golden_script = Some("golden.py".into());
    match &golden {
        GoldenSource::Msopst { file, func } => plan.notes.push(format!(
            "expected outputs: {func} of {} (msopst), called by golden.py",
            file.display()
        )),
        GoldenSource::GenData { script, .. } => plan.notes.push(format!(
            "expected outputs: {} rerun by golden.py with the case's inputs in place of its random draws",
            script.display()
        )),
        GoldenSource::None => plan.notes.push(
            "no numpy golden in the project: golden.py says what to write (the cases fail until then)".into(),
        ),
    }
    Ok((plan, golden, mapping))
}

/// A case from an msopst case.
fn case_from_msopst(c: &msopst::StCase, plan: &Plan) -> Result<CaseSpec, CaseLeftOut> {
    let mut inputs = Vec::new();
    let mut omit = Vec::new();
    for p in &plan.inputs {
        let Some(t) = c.inputs.iter().find(|t| t.name == p.name) else {
            if p.optional {
                omit.push(p.name.clone());
                continue;
            }
            return Err(CaseLeftOut::NoInput {
                input: p.name.clone(),
            });
        };
        let Some(dtype) = t.dtype else {
            if p.optional {
                omit.push(p.name.clone());
                continue;
            }
            return Err(CaseLeftOut::Undefined {
                input: p.name.clone(),
            });
        };
        if !p.dtypes.contains(&dtype) {
            return Err(CaseLeftOut::DtypeNotAllowed {
                input: p.name.clone(),
                dtype,
            });
        }
        if t.shapes.is_empty() {
            return Err(CaseLeftOut::NoShape {
                input: p.name.clone(),
            });
        }
        let shapes = if p.list {
            t.shapes.clone()
        } else {
            vec![t.shapes[0].clone()]
        };
        let dist = t.range.and_then(|(lo, hi)| {
            if dtype.is_float() {
                (lo <= hi).then_some(DistSpec::Uniform(lo, hi))
            } else {
                let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
                (lo <= hi).then_some(DistSpec::Int(lo, hi))
            }
        });
        inputs.push(CaseTensor {
            name: p.name.clone(),
            dtype,
            shapes,
            dist,
        });
    }
    let mut outputs = Vec::new();
    for p in &plan.outputs {
        let dtype = c
            .outputs
            .iter()
            .find(|t| t.name == p.name)
            .and_then(|t| t.dtype)
            .or_else(|| implied(p, &inputs))
            .ok_or_else(|| CaseLeftOut::NoOutputDtype {
                output: p.name.clone(),
            })?;
        outputs.push((p.name.clone(), dtype));
    }
    // msopst files often spell attributes in camel case (`dstType` for
    // the OpDef's `dst_type`); a required one the case lacks gets its
    // type's zero.
    let key = |n: &str| n.to_ascii_lowercase().replace('_', "");
    let attrs = plan
        .attrs
        .iter()
        .filter_map(
            |a| match c.attrs.iter().find(|(n, _)| key(n) == key(&a.name)) {
                Some((_, v)) if !v.is_null() => Some((a.name.clone(), v.clone())),
                _ if a.default.is_none() => Some((a.name.clone(), zero_of(a.ty))),
                _ => None,
            },
        )
        .collect();
    let case = CaseSpec {
        name: c.name.clone(),
        comment: format!("msopst case {} of {}", c.name, c.op),
        inputs,
        omit,
        outputs,
        attrs,
    };
    check_outputs(plan, &case)?;
    Ok(case)
}

/// The dtype an output's rule gives for these inputs.
fn implied(p: &Param, inputs: &[CaseTensor]) -> Option<Dtype> {
    let of = |name: &str| inputs.iter().find(|t| t.name == name).map(|t| t.dtype);
    match &p.rule {
        Some(Rule::Fixed(d)) => Some(*d),
        Some(Rule::SameAs(name)) => of(name),
        Some(Rule::RealOf(name)) => of(name).map(|d| d.complex_part().unwrap_or(d)),
        Some(Rule::Map(name, table)) => {
            of(name).and_then(|d| table.iter().find(|(from, _)| *from == d).map(|(_, to)| *to))
        }
        None => None,
    }
}

/// Checks that each output's dtype is what its rule gives (op.toml
/// rejects a case otherwise).
fn check_outputs(plan: &Plan, case: &CaseSpec) -> Result<(), CaseLeftOut> {
    for (p, (name, d)) in plan.outputs.iter().zip(&case.outputs) {
        if let Some(want) = implied(p, &case.inputs) {
            if want != *d {
                return Err(CaseLeftOut::OutputDtype {
                    output: name.clone(),
                    dtype: *d,
                    rule_gives: want,
                });
            }
        }
    }
    Ok(())
}

/// One case per dtype combination of the OpDef (at most four), every
/// tensor 8 x 2048 (a list two of them), random values.
fn suggested_cases(plan: &Plan, combos: &[crate::opdef::Combination]) -> Vec<CaseSpec> {
    let mut out = Vec::new();
    for combo in combos {
        let Some(dtypes) = combo.launch_dtypes() else {
            continue;
        };
        let mut inputs = Vec::new();
        let mut ok = true;
        for (i, p) in plan.inputs.iter().enumerate() {
            let dtype = dtypes[i];
            if !p.dtypes.contains(&dtype) {
                ok = false;
            }
            inputs.push(CaseTensor {
                name: p.name.clone(),
                dtype,
                shapes: if p.list {
                    vec![vec![8, 2048]; 2]
                } else {
                    vec![vec![8, 2048]]
                },
                dist: None,
            });
        }
        // An output without a kernel argument has no column of its own:
        // it is its input, with the input's dtype.
        let Some(outputs) = plan
            .outputs
            .iter()
            .enumerate()
            .map(|(o, p)| {
                let column = match (&p.inplace, p.argument) {
                    (Some(input), false) => plan.inputs.iter().position(|q| &q.name == input),
                    _ => Some(plan.inputs.len() + o),
                };
                Some((p.name.clone(), *dtypes.get(column?)?))
            })
            .collect::<Option<Vec<(String, Dtype)>>>()
        else {
            continue;
        };
        if !ok || out.iter().any(|c: &CaseSpec| c.inputs == inputs) {
            continue;
        }
        let case = CaseSpec {
            name: format!("suggested_{}", dtypes[0].name()),
            comment:
                "suggested: one dtype combination of the OpDef; check the shape suits the operator"
                    .into(),
            inputs,
            omit: Vec::new(),
            outputs,
            attrs: plan
                .attrs
                .iter()
                .filter(|a| a.default.is_none())
                .map(|a| (a.name.clone(), zero_of(a.ty)))
                .collect(),
        };
        if check_outputs(plan, &case).is_err() {
            continue;
        }
        out.push(case);
        if out.len() == 4 {
            break;
        }
    }
    out
}

/// Case names unique (a `_2`, `_3` suffix on repeats) and valid.
fn dedupe_names(cases: &mut [CaseSpec]) {
    let mut seen: Vec<String> = Vec::new();
    for c in cases.iter_mut() {
        let base: String = c
            .name
            .chars()
            .map(|ch| {
                if ch.is_whitespace() || ch.is_control() {
                    '_'
                } else {
                    ch
                }
            })
            .collect();
        let mut name = base.clone();
        let mut k = 2;
        while seen.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        seen.push(name.clone());
        c.name = name;
    }
}

/// The first case with its shapes changed so that its tensors' byte sizes
/// are no multiples of 32: the first input's last dimension becomes 37 and
/// its other dimensions above 3 become 3, wherever those sizes occur in
/// the case's tensors (so tensors that agree in a dimension still do).
fn tail_case(plan: &Plan) -> Option<CaseSpec> {
    let first = plan.cases.first()?;
    let dims = first.inputs.first()?.shapes.first()?.clone();
    let last = *dims.last()?;
    let bytes = |c: &CaseSpec| {
        c.inputs
            .iter()
            .flat_map(|t| {
                t.shapes
                    .iter()
                    .map(move |s| s.iter().product::<usize>() * t.dtype.size())
            })
            .collect::<Vec<_>>()
    };
    if plan
        .cases
        .iter()
        .any(|c| bytes(c).iter().any(|b| b % 32 != 0))
    {
        return None; // the cases have a tail case already
    }
    let map = |d: usize| -> usize {
        if d == last && last > 37 {
            37
        } else if d == last && last > 1 {
            last - 1
        } else if dims.contains(&d) && d > 3 {
            3
        } else {
            d
        }
    };
    let mut case = first.clone();
    for t in &mut case.inputs {
        for shape in &mut t.shapes {
            for d in shape.iter_mut() {
                *d = map(*d);
            }
        }
    }
    if case.inputs == first.inputs || bytes(&case).iter().all(|b| b % 32 == 0) {
        return None;
    }
    case.name = format!("{}_tail", first.name);
    let before: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    let after: Vec<String> = dims.iter().map(|&d| map(d).to_string()).collect();
    case.comment = format!(
        "tail: case {} with [{}] made [{}]",
        first.name,
        before.join(", "),
        after.join(", ")
    );
    Some(case)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, dtypes: &[&str]) -> ParamDesc {
        serde_json::from_value(serde_json::json!({
            "name": name,
            "param_type": "required",
            "dtypes": dtypes,
        }))
        .unwrap()
    }

    #[test]
    fn output_dtype_rules_and_ref_outputs_are_read_off_the_columns() {
        let x = param("x", &["DT_FLOAT", "DT_FLOAT16", "DT_COMPLEX64"]);
        let y = param("y", &["DT_FLOAT", "DT_FLOAT16", "DT_FLOAT"]);
        let mut notes = Vec::new();
        let (_, outs) = params(std::slice::from_ref(&x), &[y], &mut notes).unwrap();
        assert_eq!(outs[0].rule, Some(Rule::RealOf("x".into())));
        // float -> float, half -> half, int32 -> float: no rule but a table.
        let x = param("x", &["DT_FLOAT", "DT_FLOAT16", "DT_INT32"]);
        let y = param("y", &["DT_FLOAT", "DT_FLOAT16", "DT_FLOAT"]);
        let (_, outs) = params(std::slice::from_ref(&x), &[y], &mut notes).unwrap();
        assert_eq!(
            outs[0].rule,
            Some(Rule::Map(
                "x".into(),
                vec![
                    (Dtype::Float32, Dtype::Float32),
                    (Dtype::Float16, Dtype::Float16),
                    (Dtype::Int32, Dtype::Float32)
                ]
            ))
        );
        // An output named like an input is that input in place.
        let (_, outs) = params(
            std::slice::from_ref(&x),
            std::slice::from_ref(&x),
            &mut notes,
        )
        .unwrap();
        assert_eq!(outs[0].name, "x_out");
        assert_eq!(outs[0].inplace.as_deref(), Some("x"));
        assert_eq!(outs[0].rule, Some(Rule::SameAs("x".into())));
    }

    #[test]
    fn suggested_cases_write_their_tail_commented_out_with_a_note() {
        let dir =
            std::env::temp_dir().join(format!("ascendopt-import-tail-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("op_host")).unwrap();
        let opdef: OpDefDesc = serde_json::from_value(serde_json::json!({
            "op_type": "AddCustom",
            "inputs": [param("x", &["DT_FLOAT"]), param("y", &["DT_FLOAT"])],
            "outputs": [param("z", &["DT_FLOAT"])],
        }))
        .unwrap();
        let src = Sources {
            op_dir: dir.clone(),
            opdef,
            opdef_from: "test".into(),
            kernel: "add_custom".into(),
            kernel_sources: None,
        };
        let opts = Options {
            soc: "Ascend910B2".into(),
            chip: None,
            python: "python3".into(),
        };
        let imported = plan_and_render(&src, &opts).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        // No active tail case: the project never asked for one.
        assert!(
            !imported
                .toml
                .contains("\nname = \"suggested_float32_tail\""),
            "{}",
            imported.toml
        );
        assert!(
            imported
                .toml
                .contains("\n# name = \"suggested_float32_tail\""),
            "{}",
            imported.toml
        );
        assert!(
            imported
                .notes
                .iter()
                .any(|n| n.contains("tail case suggested_float32_tail is written commented out")),
            "{:?}",
            imported.notes
        );
    }

    #[test]
    fn inputs_the_tiling_reads_become_value_depend_and_the_chip_is_written() {
        let dir = std::env::temp_dir().join(format!("ascendopt-import-vd-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("op_host")).unwrap();
        // A clean-room tiling: the pad amounts come from input 1's values.
        std::fs::write(
            dir.join("op_host/pad_edge.cpp"),
            "namespace optiling {\n\
             static ge::graphStatus TilingFunc(gert::TilingContext* context) {\n\
             \x20 auto dt = context->GetInputTensor(0)->GetDataType();\n\
             \x20 const gert::Tensor* amounts = context->GetInputTensor(1);\n\
             \x20 const int32_t* pad = amounts->GetData<int32_t>();\n\
             \x20 return ge::GRAPH_SUCCESS;\n}\n}\n",
        )
        .unwrap();
        let opdef: OpDefDesc = serde_json::from_value(serde_json::json!({
            "op_type": "PadEdge",
            "inputs": [param("x", &["DT_FLOAT"]), param("amounts", &["DT_INT32"])],
            "outputs": [param("y", &["DT_FLOAT"])],
            "configs": [{"soc": "ascend310b"}],
        }))
        .unwrap();
        let src = Sources {
            op_dir: dir.clone(),
            opdef,
            opdef_from: "test".into(),
            kernel: "pad_edge".into(),
            kernel_sources: None,
        };
        let opts = Options {
            soc: "Ascend310B1".into(),
            chip: Some("ascend310b".into()),
            python: "python3".into(),
        };
        let imported = plan_and_render(&src, &opts).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let head: String = imported
            .toml
            .lines()
            .skip_while(|l| *l != "[op]")
            .take_while(|l| !l.starts_with("[[cases]]") && !l.starts_with("[golden]"))
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        expect_test::expect![[r#"
            [op]
            name = "pad_edge"
            level = 1
            op_type = "PadEdge"
            kernel = "pad_edge"
            chip = "ascend310b"
            [[inputs]]
            name = "x"
            dtypes = ["float32"]
            [[inputs]]
            name = "amounts"
            dtypes = ["int32"]
            value_depend = true
            [[outputs]]
            name = "y"
            dtypes = ["float32"]"#]]
        .assert_eq(&head);
        assert!(
            imported.notes.iter().any(|n| n.contains(
                "input `amounts` is marked value_depend: the tiling reads its values (op_host/pad_edge.cpp:5"
            )),
            "{:?}",
            imported.notes
        );
    }

    #[test]
    fn a_framework_the_interpreter_cannot_import_is_named() {
        let dir =
            std::env::temp_dir().join(format!("ascendopt-import-needs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.py");
        std::fs::write(
            &file,
            "import os\nimport torchvision_like\nfrom mindspore import ops\n",
        )
        .unwrap();
        // `torchvision_like` is no framework of the list; mindspore is.
        assert_eq!(needs_unavailable(&file, "python3"), Some("mindspore"));
        std::fs::write(&file, "import os\nimport numpy as np\n").unwrap();
        assert_eq!(needs_unavailable(&file, "python3"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_opdef_without_outputs_gets_the_inputs_its_kernel_writes_as_outputs() {
        let p = |name: &str| Param {
            name: name.into(),
            dtypes: vec![Dtype::Float32],
            list: false,
            optional: false,
            value_depend: false,
            rule: None,
            inplace: None,
            argument: true,
        };
        let names = |outs: &[Param]| -> Vec<(String, Option<String>, bool)> {
            outs.iter()
                .map(|o| (o.name.clone(), o.inplace.clone(), o.argument))
                .collect()
        };
        let mut notes = Vec::new();
        // Optimiser refs: var, and m and v beside it.
        let adam = [p("var"), p("m"), p("v"), p("grad"), p("step")];
        let outs = written_inputs(&adam, &[], &mut notes).unwrap();
        assert_eq!(
            names(&outs),
            [
                ("var_out".to_string(), Some("var".to_string()), false),
                ("m_out".into(), Some("m".into()), false),
                ("v_out".into(), Some("v".into()), false),
            ]
        );
        assert_eq!(outs[0].rule, Some(Rule::SameAs("var".into())));
        // No ref name: the first input, said to be a guess.
        let outs = written_inputs(&[p("x"), p("alpha")], &[], &mut notes).unwrap();
        assert_eq!(
            names(&outs),
            [("x_out".to_string(), Some("x".to_string()), false)]
        );
        assert!(notes.last().unwrap().contains("check it"), "{notes:?}");
        // An msopst output name wins, and a taken name gets a suffix.
        let st = vec![msopst::StCase {
            name: "t".into(),
            op: "ScatterSub".into(),
            inputs: Vec::new(),
            outputs: vec![msopst::StTensor {
                name: "x".into(),
                dtype: Some(Dtype::Float32),
                shapes: vec![vec![4]],
                dynamic: false,
                range: None,
            }],
            attrs: Vec::new(),
            expect: None,
        }];
        let outs = written_inputs(&[p("x"), p("x_out"), p("var")], &st, &mut notes).unwrap();
        assert_eq!(
            names(&outs),
            [("x_out_".to_string(), Some("x".to_string()), false)]
        );
        assert!(
            notes.last().unwrap().contains("msopst cases name it"),
            "{notes:?}"
        );
        assert!(written_inputs(&[], &st, &mut notes).is_none());
    }

    #[test]
    fn names_become_snake_case() {
        assert_eq!(snake_case("AddCustom"), "add_custom");
        assert_eq!(
            snake_case("ForeachAddScalarList"),
            "foreach_add_scalar_list"
        );
        assert_eq!(snake_case("GeGluV2"), "ge_glu_v2");
        assert_eq!(snake_case("MSELoss"), "mse_loss");
    }
}
