//! A project's `gen_data.py`: the script its own tests run to write the
//! inputs (`input/*.bin`) and the expected outputs (`output/golden.bin`).
//! [`discover`] runs it once, watching its numpy random draws and the
//! arrays it writes ([`RUNNER`]); [`cases`] turns what it wrote into a case
//! (shapes, dtypes, value ranges) and a [`Mapping`]: which draw makes each
//! input and which file holds each output, what golden.py needs to rerun
//! the script on a case's inputs.

use super::{CaseSpec, CaseTensor, DistSpec, Plan};
use crate::Dtype;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Python side: runs gen_data.py with its draws and writes watched
/// (and, for golden.py, its input draws replaced).
pub const RUNNER: &str = include_str!("gen_data_runner.py");

/// How long a gen_data.py may run when discovered.
const TIMEOUT: Duration = Duration::from_secs(120);

/// One numpy random draw of the script.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Draw {
    /// `uniform`, `randint`, `rand`, ...
    #[serde(rename = "fn")]
    pub function: String,
    /// Its numeric positional arguments (low, high; mean, std).
    pub args: Vec<f64>,
    /// The shape it returned.
    pub shape: Vec<usize>,
}

/// One array the script wrote.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Write {
    /// The file, relative to the script's working folder
    /// (`input/input_x.bin`).
    pub file: String,
    /// The numpy dtype name.
    pub dtype: String,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The draw whose values it holds (cast to its dtype), if any.
    pub draw: Option<usize>,
}

/// What a run of the script showed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Discovered {
    /// Its draws, in order.
    pub draws: Vec<Draw>,
    /// Its writes, in order.
    pub writes: Vec<Write>,
    /// Scalar variables (bool, int, float, str) of the function that wrote
    /// the first array, by name: where a script sets the operator's
    /// attributes (`reduce = "amin"`, `dim = 0`).
    #[serde(default)]
    pub scalars: std::collections::BTreeMap<String, serde_json::Value>,
}

/// Which draw makes each input and which written file each output is.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    /// (input, draw index).
    pub inputs: Vec<(String, usize)>,
    /// (tensor-list input, the draw index of each element in order).
    pub lists: Vec<(String, Vec<usize>)>,
    /// (output, file).
    pub outputs: Vec<(String, String)>,
}

/// The gen_data.py scripts of an operator folder and the msopgen project
/// around it, in the order they are tried.
pub fn scripts(op_dir: &Path) -> Vec<PathBuf> {
    project_files(op_dir, "gen_data.py")
}

/// The files named `name` in the places a project keeps its scripts: the
/// operator folder, its `scripts/`, and the folders of `examples/` and
/// beside the operator (the AclNNInvocation / `<Op>Test` projects) with
/// their `scripts/`; each once, in that order.
pub fn project_files(op_dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut push = |p: PathBuf| {
        if p.is_file() && !out.contains(&p) {
            out.push(p);
        }
    };
    push(op_dir.join(name));
    push(op_dir.join("scripts").join(name));
    for base in [
        op_dir.join("examples"),
        op_dir.parent().map(Path::to_path_buf).unwrap_or_default(),
    ] {
        let Ok(entries) = std::fs::read_dir(&base) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            push(d.join(name));
            push(d.join("scripts").join(name));
        }
    }
    out
}

/// Why a gen_data.py gives no case: it could not be run and watched, or
/// what it writes does not fit the operator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenDataError {
    /// A file operation around the run failed.
    #[error("{}: cannot {action} it: {source}", script.display())]
    Io {
        /// The script.
        script: PathBuf,
        /// What was attempted.
        action: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Python did not start.
    #[error("{}: cannot start `{python}`: {source}", script.display())]
    Start {
        /// The script.
        script: PathBuf,
        /// The interpreter.
        python: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The script ran too long and was killed.
    #[error("{}: ran longer than {seconds} s", script.display())]
    Timeout {
        /// The script.
        script: PathBuf,
        /// The limit.
        seconds: u64,
    },
    /// The script exited with a failure.
    #[error("{}: failed: {stderr_tail}", script.display())]
    Failed {
        /// The script.
        script: PathBuf,
        /// The last lines of its stderr, joined by ` | `.
        stderr_tail: String,
    },
    /// The runner's report of what the script wrote does not parse.
    #[error("{}: unreadable discovery ({source})", script.display())]
    Unreadable {
        /// The script.
        script: PathBuf,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// What the script writes does not fit the operator (counts, dtypes,
    /// draws that cannot be replayed).
    #[error("{}: {reason}", script.display())]
    Unusable {
        /// The script.
        script: PathBuf,
        /// What does not fit.
        reason: String,
    },
}

/// Runs `script` once with `python` (numpy required), watching it.
pub fn discover(script: &Path, python: &str) -> Result<Discovered, GenDataError> {
    let io = |action: &'static str| {
        move |source: std::io::Error| GenDataError::Io {
            script: script.to_path_buf(),
            action,
            source,
        }
    };
    let dir = tempfile::tempdir().map_err(io("make a scratch folder for"))?;
    let runner = dir.path().join("ascendopt_gen_data_runner.py");
    let text = format!("{}{RUNNER}", crate::golden::script::MISSING_MODULE_PY);
    std::fs::write(&runner, text).map_err(io("write the runner of"))?;
    // The script runs in a scratch folder: a relative path would not reach it.
    let script_abs = std::path::absolute(script).map_err(io("resolve"))?;
    let mut child = Command::new(python)
        .arg(&runner)
        .arg("--discover")
        .arg(&script_abs)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| GenDataError::Start {
            script: script.to_path_buf(),
            python: python.to_string(),
            source,
        })?;
    let out_reader = child.stdout.take().map(|mut p| {
        std::thread::spawn(move || {
            use std::io::Read;
            let mut s = String::new();
            let _ = p.read_to_string(&mut s);
            s
        })
    });
    let err_reader = child.stderr.take().map(|mut p| {
        std::thread::spawn(move || {
            use std::io::Read;
            let mut s = String::new();
            let _ = p.read_to_string(&mut s);
            s
        })
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(GenDataError::Timeout {
                    script: script.to_path_buf(),
                    seconds: TIMEOUT.as_secs(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(io("wait for")(e)),
        }
    };
    let stdout = out_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    if !status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(GenDataError::Failed {
            script: script.to_path_buf(),
            stderr_tail: tail.join(" | "),
        });
    }
    let line = stdout.lines().last().unwrap_or("");
    serde_json::from_str(line).map_err(|source| GenDataError::Unreadable {
        script: script.to_path_buf(),
        source,
    })
}

fn is_output(file: &str) -> bool {
    let lower = file.to_ascii_lowercase();
    lower.starts_with("output") || lower.contains("golden") || lower.contains("expect")
}

fn stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// The written files of `writes` matched to the names `names`: by name
/// (`input_x.bin`, `x.bin` for `x`), the rest in order.
fn match_names<'a>(names: &[String], writes: &[&'a Write], prefix: &str) -> Vec<Option<&'a Write>> {
    let mut taken = vec![false; writes.len()];
    let mut out: Vec<Option<&Write>> = vec![None; names.len()];
    for (n, name) in names.iter().enumerate() {
        let want = name.to_ascii_lowercase();
        let found = writes.iter().enumerate().find(|(i, w)| {
            let s = stem(&w.file);
            !taken[*i]
                && (s == want || s == format!("{prefix}{want}") || s.ends_with(&format!("_{want}")))
        });
        if let Some((i, w)) = found {
            taken[i] = true;
            out[n] = Some(*w);
        }
    }
    let mut rest = writes
        .iter()
        .enumerate()
        .filter(|(i, _)| !taken[*i])
        .map(|(_, w)| *w);
    for slot in out.iter_mut().filter(|s| s.is_none()) {
        *slot = rest.next();
    }
    out
}

fn dist(draw: &Draw, dtype: Dtype) -> Option<DistSpec> {
    let a = &draw.args;
    match draw.function.as_str() {
        "uniform" if a.len() >= 2 && a[0] < a[1] => Some(if dtype.is_float() {
            DistSpec::Uniform(a[0], a[1])
        } else {
            DistSpec::Int(a[0].ceil() as i64, a[1].floor() as i64)
        }),
        "randint" if a.len() >= 2 && a[0] < a[1] => {
            Some(DistSpec::Int(a[0] as i64, a[1] as i64 - 1))
        }
        "randint" if a.len() == 1 && a[0] > 0.0 => Some(DistSpec::Int(0, a[0] as i64 - 1)),
        "rand" | "random" | "random_sample" | "ranf" | "sample" if dtype.is_float() => {
            Some(DistSpec::Uniform(0.0, 1.0))
        }
        "randn" | "standard_normal" if dtype.is_float() => Some(DistSpec::Normal(0.0, 1.0)),
        "normal" if dtype.is_float() => Some(DistSpec::Normal(
            a.first().copied().unwrap_or(0.0),
            a.get(1).copied().filter(|s| *s > 0.0).unwrap_or(1.0),
        )),
        _ => None,
    }
}

/// The case of a discovered run and its [`Mapping`]; Err when an input is
/// not a plain random draw (then the script cannot be rerun on fresh
/// inputs) or the writes do not fit the operator.
pub(crate) fn case_and_mapping(
    found: &Discovered,
    plan: &Plan,
    script: &Path,
) -> Result<(CaseSpec, Mapping), GenDataError> {
    let fail = |reason: String| GenDataError::Unusable {
        script: script.to_path_buf(),
        reason,
    };
    if let [only] = plan.inputs.as_slice() {
        if only.list && !plan.outputs.iter().any(|p| p.list) {
            return list_case(found, plan, script);
        }
    }
    if plan.inputs.iter().any(|p| p.list) || plan.outputs.iter().any(|p| p.list) {
        return Err(fail(
            "tensor lists are read from gen_data.py only for an operator whose one input is the list"
                .into(),
        ));
    }
    let ins: Vec<&Write> = found
        .writes
        .iter()
        .filter(|w| !is_output(&w.file))
        .collect();
    let outs: Vec<&Write> = found.writes.iter().filter(|w| is_output(&w.file)).collect();
    let names: Vec<String> = plan.inputs.iter().map(|p| p.name.clone()).collect();
    let required = plan.inputs.iter().filter(|p| !p.optional).count();
    if ins.len() < required || ins.len() > names.len() {
        return Err(fail(format!(
            "it writes {} input file(s) for {} input(s) of the operator",
            ins.len(),
            names.len()
        )));
    }
    if outs.is_empty() {
        return Err(fail(
            "it writes no expected-output file (output/*.bin)".into(),
        ));
    }
    let matched = match_names(&names, &ins, "input_");
    let mut inputs = Vec::new();
    let mut omit = Vec::new();
    let mut mapping = Mapping {
        inputs: Vec::new(),
        lists: Vec::new(),
        outputs: Vec::new(),
    };
    for (p, w) in plan.inputs.iter().zip(&matched) {
        let Some(w) = w else {
            omit.push(p.name.clone());
            continue;
        };
        let dtype = Dtype::parse(&w.dtype).ok_or_else(|| {
            fail(format!(
                "{} is {}, which op.toml has no dtype for",
                w.file, w.dtype
            ))
        })?;
        if !p.dtypes.contains(&dtype) {
            return Err(fail(format!(
                "{} ({dtype}) for input `{}`, whose OpDef dtypes are {}",
                w.file,
                p.name,
                p.dtypes
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let Some(draw) = w.draw else {
            return Err(fail(format!(
                "input `{}` ({}) is not a plain random draw, so the script cannot be rerun on fresh inputs",
                p.name, w.file
            )));
        };
        mapping.inputs.push((p.name.clone(), draw));
        inputs.push(CaseTensor {
            name: p.name.clone(),
            dtype,
            shapes: vec![w.shape.clone()],
            dist: found.draws.get(draw).and_then(|d| dist(d, dtype)),
        });
    }
    let outputs = output_files(plan, &outs, &inputs, &mut mapping, &fail)?;
    let case = CaseSpec {
        name: "gen_data".into(),
        comment: format!("the shapes and value ranges of {}", script.display()),
        inputs,
        omit,
        outputs,
        attrs: script_attrs(found, plan),
    };
    Ok((case, mapping))
}

/// The case's attributes: a scalar variable of the script named like an
/// attribute (case and underscores aside) and of its type gives its value;
/// a required attribute the script does not name gets its type's zero.
fn script_attrs(found: &Discovered, plan: &Plan) -> Vec<(String, serde_json::Value)> {
    let key = |n: &str| n.to_ascii_lowercase().replace('_', "");
    plan.attrs
        .iter()
        .filter_map(|a| {
            let v = found
                .scalars
                .iter()
                .find(|(n, _)| key(n) == key(&a.name))
                .map(|(_, v)| v)
                .filter(|v| match a.ty {
                    "int" => v.is_i64() || v.is_u64(),
                    "float" => v.is_number(),
                    "bool" => v.is_boolean(),
                    "str" => v.is_string(),
                    _ => false,
                });
            match v {
                Some(v) => Some((a.name.clone(), v.clone())),
                None if a.default.is_none() => Some((a.name.clone(), super::zero_of(a.ty))),
                None => None,
            }
        })
        .collect()
}

/// The case of an operator whose one input is a tensor list (AddN): every
/// input file the script writes is an element, in the order written.
fn list_case(
    found: &Discovered,
    plan: &Plan,
    script: &Path,
) -> Result<(CaseSpec, Mapping), GenDataError> {
    let fail = |reason: String| GenDataError::Unusable {
        script: script.to_path_buf(),
        reason,
    };
    let p = &plan.inputs[0];
    let ins: Vec<&Write> = found
        .writes
        .iter()
        .filter(|w| !is_output(&w.file))
        .collect();
    let outs: Vec<&Write> = found.writes.iter().filter(|w| is_output(&w.file)).collect();
    if ins.is_empty() || outs.is_empty() {
        return Err(fail(format!(
            "it writes {} input and {} expected-output file(s)",
            ins.len(),
            outs.len()
        )));
    }
    let mut draws = Vec::new();
    let mut shapes = Vec::new();
    let mut dtype = None;
    for w in &ins {
        let d = Dtype::parse(&w.dtype)
            .filter(|d| p.dtypes.contains(d))
            .ok_or_else(|| {
                fail(format!(
                    "{} is {}, not a dtype of input `{}`",
                    w.file, w.dtype, p.name
                ))
            })?;
        if dtype.is_some_and(|e| e != d) {
            return Err(fail(format!(
                "the elements of list `{}` differ in dtype ({} is {d})",
                p.name, w.file
            )));
        }
        dtype = Some(d);
        let Some(draw) = w.draw else {
            return Err(fail(format!(
                "element {} of list `{}` is not a plain random draw, so the script cannot be rerun on fresh inputs",
                w.file, p.name
            )));
        };
        draws.push(draw);
        shapes.push(w.shape.clone());
    }
    let Some(dtype) = dtype else {
        return Err(fail("no input file".into()));
    };
    let mut mapping = Mapping {
        inputs: Vec::new(),
        lists: vec![(p.name.clone(), draws.clone())],
        outputs: Vec::new(),
    };
    let inputs = vec![CaseTensor {
        name: p.name.clone(),
        dtype,
        shapes,
        dist: found.draws.get(draws[0]).and_then(|d| dist(d, dtype)),
    }];
    let outputs = output_files(plan, &outs, &inputs, &mut mapping, &fail)?;
    let case = CaseSpec {
        name: "gen_data".into(),
        comment: format!("the shapes and value ranges of {}", script.display()),
        inputs,
        omit: Vec::new(),
        outputs,
        attrs: script_attrs(found, plan),
    };
    Ok((case, mapping))
}

/// Each output's expected-output file and dtype, into `mapping`.
fn output_files(
    plan: &Plan,
    outs: &[&Write],
    inputs: &[CaseTensor],
    mapping: &mut Mapping,
    fail: &dyn Fn(String) -> GenDataError,
) -> Result<Vec<(String, Dtype)>, GenDataError> {
    let out_names: Vec<String> = plan.outputs.iter().map(|p| p.name.clone()).collect();
    let out_matched = match_names(&out_names, outs, "golden_");
    let mut outputs = Vec::new();
    for (p, w) in plan.outputs.iter().zip(&out_matched) {
        let Some(w) = w else {
            return Err(fail(format!(
                "no expected-output file for output `{}`",
                p.name
            )));
        };
        let written = Dtype::parse(&w.dtype);
        let dtype = written
            .filter(|d| p.dtypes.contains(d))
            .or_else(|| super::implied(p, inputs))
            .ok_or_else(|| {
                fail(format!(
                    "{} is {}, not a dtype of output `{}`",
                    w.file, w.dtype, p.name
                ))
            })?;
        mapping.outputs.push((p.name.clone(), w.file.clone()));
        outputs.push((p.name.clone(), dtype));
    }
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(file: &str, dtype: &str, shape: &[usize], draw: Option<usize>) -> Write {
        Write {
            file: file.into(),
            dtype: dtype.into(),
            shape: shape.to_vec(),
            draw,
        }
    }

    #[test]
    fn written_files_are_matched_by_name_then_order() {
        let ws = [
            write("input/input_y.bin", "float16", &[4], Some(1)),
            write("input/input_x.bin", "float16", &[4], Some(0)),
            write("input/other.bin", "float16", &[4], None),
        ];
        let refs: Vec<&Write> = ws.iter().collect();
        let names = vec!["x".to_string(), "y".to_string(), "z".to_string()];
        let m = match_names(&names, &refs, "input_");
        assert_eq!(m[0].unwrap().file, "input/input_x.bin");
        assert_eq!(m[1].unwrap().file, "input/input_y.bin");
        assert_eq!(m[2].unwrap().file, "input/other.bin");
        assert!(is_output("output/golden.bin") && !is_output("input/x.bin"));
    }

    fn param(name: &str, list: bool, rule: Option<super::super::Rule>) -> super::super::Param {
        super::super::Param {
            name: name.into(),
            dtypes: vec![Dtype::Float16, Dtype::Float32],
            list,
            optional: false,
            value_depend: false,
            rule,
            inplace: None,
            argument: true,
        }
    }

    #[test]
    fn an_operator_whose_one_input_is_a_list_takes_every_input_file_as_an_element() {
        let plan = Plan {
            name: "addn_custom".into(),
            op_type: "AddnCustom".into(),
            kernel: "addn_custom".into(),
            kernel_sources: None,
            chip: None,
            opdef_from: String::new(),
            inputs: vec![param("x", true, None)],
            outputs: vec![param(
                "z",
                false,
                Some(super::super::Rule::SameAs("x".into())),
            )],
            attrs: Vec::new(),
            cases: Vec::new(),
            golden_script: None,
            commented_cases: Vec::new(),
            tolerance: None,
            notes: Vec::new(),
        };
        let draw = Draw {
            function: "uniform".into(),
            args: vec![1.0, 100.0],
            shape: vec![8, 2048],
        };
        let found = Discovered {
            draws: vec![draw.clone(), draw],
            writes: vec![
                write("input/input_x.bin", "float16", &[8, 2048], Some(0)),
                write("input/input_y.bin", "float16", &[8, 2048], Some(1)),
                write("output/golden.bin", "float16", &[8, 2048], None),
            ],
            scalars: Default::default(),
        };
        let (case, mapping) = case_and_mapping(&found, &plan, Path::new("gen_data.py")).unwrap();
        assert_eq!(case.inputs.len(), 1);
        assert_eq!(case.inputs[0].shapes, vec![vec![8, 2048]; 2]);
        assert_eq!(case.inputs[0].dtype, Dtype::Float16);
        assert_eq!(case.outputs, vec![("z".to_string(), Dtype::Float16)]);
        assert_eq!(mapping.lists, vec![("x".to_string(), vec![0, 1])]);
        assert_eq!(
            mapping.outputs,
            vec![("z".to_string(), "output/golden.bin".to_string())]
        );
        // An element that is no draw cannot be replaced by the case's.
        let mut literal = found.clone();
        literal.writes[1].draw = None;
        let e = case_and_mapping(&literal, &plan, Path::new("gen_data.py"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a plain random draw"), "{e}");
    }

    #[test]
    fn draws_give_distributions() {
        let d = |f: &str, args: &[f64]| Draw {
            function: f.into(),
            args: args.to_vec(),
            shape: vec![2],
        };
        assert_eq!(
            dist(&d("uniform", &[1.0, 100.0]), Dtype::Float16),
            Some(DistSpec::Uniform(1.0, 100.0))
        );
        assert_eq!(
            dist(&d("randint", &[1.0, 10.0]), Dtype::Int32),
            Some(DistSpec::Int(1, 9))
        );
        assert_eq!(
            dist(&d("rand", &[90.0, 1024.0]), Dtype::Float32),
            Some(DistSpec::Uniform(0.0, 1.0))
        );
        assert_eq!(
            dist(&d("normal", &[0.5, 2.0]), Dtype::Float32),
            Some(DistSpec::Normal(0.5, 2.0))
        );
    }

    #[test]
    fn attributes_come_from_the_scripts_variables_of_their_name_and_type() {
        let attr =
            |name: &str, ty: &'static str, default: Option<serde_json::Value>| super::super::Attr {
                name: name.into(),
                ty,
                default,
            };
        let plan = Plan {
            attrs: vec![
                attr("dim", "int", None),
                attr("reduce", "str", None),
                attr("include_self", "bool", Some(serde_json::json!(true))),
                attr("alpha", "float", None),
                attr("mode", "str", Some(serde_json::json!("x"))),
            ],
            name: "scatter_reduce".into(),
            op_type: "ScatterReduce".into(),
            kernel: "scatter_reduce".into(),
            kernel_sources: None,
            chip: None,
            opdef_from: String::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            cases: Vec::new(),
            golden_script: None,
            commented_cases: Vec::new(),
            tolerance: None,
            notes: Vec::new(),
        };
        let found = Discovered {
            draws: Vec::new(),
            writes: Vec::new(),
            scalars: [
                ("dim", serde_json::json!(1)),
                ("reduce", serde_json::json!("amin")),
                ("includeSelf", serde_json::json!(false)),
                ("alpha", serde_json::json!("not a float")),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        };
        assert_eq!(
            script_attrs(&found, &plan),
            vec![
                ("dim".to_string(), serde_json::json!(1)),
                ("reduce".to_string(), serde_json::json!("amin")),
                ("include_self".to_string(), serde_json::json!(false)),
                // A variable of another type is not the attribute.
                ("alpha".to_string(), serde_json::json!(0.0)),
            ]
        );
    }
}
