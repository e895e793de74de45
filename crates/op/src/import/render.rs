//! The texts `ascendopt import` writes: the op.toml of a [`Plan`] and the
//! golden.py that calls the project's own expected-output code.

use super::gen_data::{Mapping, RUNNER};
use super::{CaseSpec, DistSpec, Plan, Rule};
use crate::golden::script::MISSING_MODULE_PY;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// A TOML basic string.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML float that parses back as a float.
fn float(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains(['.', 'e', 'E']) || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

/// A JSON attr value as TOML of op.toml type `ty`.
fn value(v: &Value, ty: &str) -> String {
    match (ty, v) {
        ("float", Value::Number(n)) => float(n.as_f64().unwrap_or(0.0)),
        ("list_float", Value::Array(a)) => format!(
            "[{}]",
            a.iter()
                .map(|x| float(x.as_f64().unwrap_or(0.0)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ("int", Value::Bool(b)) => i64::from(*b).to_string(),
        ("int", Value::Number(n)) => n
            .as_i64()
            .unwrap_or_else(|| n.as_f64().unwrap_or(0.0) as i64)
            .to_string(),
        ("bool", Value::Number(n)) => (n.as_f64().unwrap_or(0.0) != 0.0).to_string(),
        (_, Value::String(s)) => quote(s),
        (_, Value::Bool(b)) => b.to_string(),
        (_, Value::Number(n)) => n.to_string(),
        (_, Value::Array(a)) => format!(
            "[{}]",
            a.iter()
                .map(|x| value(x, ""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => "0".into(),
    }
}

fn shape(s: &[usize]) -> String {
    format!(
        "[{}]",
        s.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The op.toml text.
pub(crate) fn render(plan: &Plan) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Written by `ascendopt import`; the interface comes from {}.",
        plan.opdef_from
    );
    let _ = writeln!(
        t,
        "# Check the suggested cases and tolerances; the schema is in ops/README-schema.md."
    );
    t.push_str("\n[op]\n");
    let _ = writeln!(t, "name = {}", quote(&plan.name));
    t.push_str("level = 1\n");
    let _ = writeln!(t, "op_type = {}", quote(&plan.op_type));
    let _ = writeln!(t, "kernel = {}", quote(&plan.kernel));
    if let Some(list) = &plan.kernel_sources {
        let _ = writeln!(
            t,
            "kernel_sources = [{}]",
            list.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(chip) = &plan.chip {
        let _ = writeln!(t, "chip = {}", quote(chip));
    }
    for (side, params) in [("inputs", &plan.inputs), ("outputs", &plan.outputs)] {
        for p in params.iter() {
            let _ = writeln!(t, "\n[[{side}]]");
            let _ = writeln!(t, "name = {}", quote(&p.name));
            let _ = writeln!(
                t,
                "dtypes = [{}]",
                p.dtypes
                    .iter()
                    .map(|d| quote(d.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            match &p.rule {
                Some(Rule::SameAs(x)) => {
                    let _ = writeln!(t, "dtype = {{ same_as = {} }}", quote(x));
                }
                Some(Rule::RealOf(x)) => {
                    let _ = writeln!(t, "dtype = {{ real_of = {} }}", quote(x));
                }
                Some(Rule::Map(x, table)) => {
                    let entries: Vec<String> = table
                        .iter()
                        .map(|(from, to)| format!("{} = {}", from.name(), quote(to.name())))
                        .collect();
                    let _ = writeln!(
                        t,
                        "dtype = {{ by = {}, table = {{ {} }} }}",
                        quote(x),
                        entries.join(", ")
                    );
                }
                Some(Rule::Fixed(d)) if p.dtypes.len() > 1 => {
                    let _ = writeln!(t, "dtype = {{ fixed = {} }}", quote(d.name()));
                }
                _ => {}
            }
            if p.list {
                t.push_str("kind = \"list\"\n");
            }
            if p.optional {
                t.push_str("optional = true\n");
            }
            if p.value_depend {
                t.push_str("value_depend = true\n");
            }
            if let Some(input) = &p.inplace {
                let _ = writeln!(t, "inplace = {}", quote(input));
            }
            if !p.argument {
                t.push_str("argument = false\n");
            }
        }
    }
    for a in &plan.attrs {
        t.push_str("\n[[attrs]]\n");
        let _ = writeln!(t, "name = {}", quote(&a.name));
        let _ = writeln!(t, "type = {}", quote(a.ty));
        match &a.default {
            Some(d) => {
                let _ = writeln!(t, "default = {}", value(d, a.ty));
            }
            None => t.push_str("required = true\n"),
        }
    }
    if let Some(script) = &plan.golden_script {
        let _ = writeln!(t, "\n[golden]\nscript = {}", quote(script));
    }
    if let Some(tol) = &plan.tolerance {
        let _ = writeln!(
            t,
            "\n# The project's own check ({}): numpy isclose with these rtol and atol, and\n# max_mismatch_ratio of the elements allowed to fail.",
            tol.script
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        );
        for d in &tol.dtypes {
            let _ = writeln!(t, "[tolerance.{}]", d.name());
            let _ = writeln!(t, "atol = {}", float(tol.atol));
            let _ = writeln!(t, "rtol = {}", float(tol.rtol));
            if tol.max_mismatch_ratio > 0.0 {
                let _ = writeln!(t, "max_mismatch_ratio = {}", float(tol.max_mismatch_ratio));
            }
        }
    }
    for c in &plan.cases {
        render_case(&mut t, c, plan);
    }
    for c in &plan.commented_cases {
        let mut case = String::new();
        render_case(&mut case, c, plan);
        t.push_str(
            "\n# Not run: the project's own cases never have a tail (bytes no multiple of 32),\n\
             # so its tiling may not handle one. Uncomment to test it.",
        );
        for line in case.lines().skip(1) {
            let _ = write!(t, "\n# {line}");
        }
        t.push('\n');
    }
    t
}

fn render_case(t: &mut String, c: &CaseSpec, plan: &Plan) {
    let _ = writeln!(t, "\n# {}", c.comment.replace('\n', " "));
    t.push_str("[[cases]]\n");
    let _ = writeln!(t, "name = {}", quote(&c.name));
    if !c.omit.is_empty() {
        let _ = writeln!(
            t,
            "omit = [{}]",
            c.omit
                .iter()
                .map(|s| quote(s))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let shapes: Vec<String> = c
        .inputs
        .iter()
        .map(|i| {
            let list = plan.inputs.iter().any(|p| p.name == i.name && p.list);
            if list {
                format!(
                    "[{}]",
                    i.shapes
                        .iter()
                        .map(|s| shape(s))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                shape(&i.shapes[0])
            }
        })
        .collect();
    let _ = writeln!(t, "shapes = [{}]", shapes.join(", "));
    // Every tensor's dtype, so that the case does not depend on rules.
    let mut dtypes: Vec<String> = Vec::new();
    for i in &c.inputs {
        let p = plan.inputs.iter().find(|p| p.name == i.name);
        let implied =
            p.is_some_and(|p| p.dtypes.len() == 1 || matches!(p.rule, Some(Rule::SameAs(_))));
        if !implied {
            dtypes.push(format!("{} = {}", i.name, quote(i.dtype.name())));
        }
    }
    for (name, d) in &c.outputs {
        let p = plan.outputs.iter().find(|p| &p.name == name);
        let implied = p.is_some_and(|p| super::implied(p, &c.inputs) == Some(*d));
        if !implied {
            dtypes.push(format!("{name} = {}", quote(d.name())));
        }
    }
    if !dtypes.is_empty() {
        let _ = writeln!(t, "dtypes = {{ {} }}", dtypes.join(", "));
    }
    if !c.attrs.is_empty() {
        let attrs: Vec<String> = c
            .attrs
            .iter()
            .map(|(n, v)| {
                let ty = plan
                    .attrs
                    .iter()
                    .find(|a| &a.name == n)
                    .map_or("", |a| a.ty);
                format!("{n} = {}", value(v, ty))
            })
            .collect();
        let _ = writeln!(t, "attrs = {{ {} }}", attrs.join(", "));
    }
    let dists: Vec<String> = c
        .inputs
        .iter()
        .filter_map(|i| {
            let d = match i.dist.as_ref()? {
                DistSpec::Uniform(lo, hi) => format!(
                    "kind = \"uniform\", low = {}, high = {}",
                    float(*lo),
                    float(*hi)
                ),
                DistSpec::Int(lo, hi) => format!("kind = \"int\", low = {lo}, high = {hi}"),
                DistSpec::Normal(m, s) => format!(
                    "kind = \"normal\", mean = {}, scale = {}",
                    float(*m),
                    float(*s)
                ),
            };
            Some(format!("{} = {{ {d} }}", i.name))
        })
        .collect();
    if !dists.is_empty() {
        let _ = writeln!(t, "inputs = {{ {} }}", dists.join(", "));
    }
}

/// `to` relative to the folder `from` (both absolute or both relative).
fn relative(from: &Path, to: &Path) -> PathBuf {
    // `./op` and `op` are one folder (a user runs `import .`).
    let (from, to) = (normalize(from), normalize(to));
    let from: Vec<Component<'_>> = from.components().collect();
    let to_c: Vec<Component<'_>> = to.components().collect();
    let common = from.iter().zip(&to_c).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to_c[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// A Python string literal.
fn py(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

fn names(list: impl Iterator<Item = String>) -> String {
    format!("[{}]", list.map(|n| py(&n)).collect::<Vec<_>>().join(", "))
}

/// golden.py calling an msopst expected-output function: the inputs as
/// msopst gives them (dicts with "value", "dtype", "shape", "format"),
/// the outputs' descriptions and the attributes, bound to the function's
/// parameters by name (a name it does not know goes by position).
pub(crate) fn msopst_golden(op_dir: &Path, file: &Path, func: &str, plan: &Plan) -> String {
    let rel = relative(op_dir, &normalize(file));
    format!(
        r#"# Written by `ascendopt import`: the expected outputs of each case come
# from the project's own msopst expected-output function.
import importlib.util
import inspect
import os
import sys

import numpy as np

TEST_FILE = {file}
FUNCTION = {func}
INPUTS = {inputs}
OUTPUTS = {outputs}
ATTRS = {attrs}
{hint}

def _function():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), TEST_FILE)
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("ascendopt_msopst_expect", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as e:
        sys.exit("ascendopt: " + _ascendopt_missing(e, TEST_FILE))
    return getattr(module, FUNCTION)


def _described(value, dtype):
    if value is None:
        return {{"value": None, "dtype": "UNDEFINED", "shape": None, "format": "ND"}}
    if isinstance(value, list):
        return [_described(v, dtype) for v in value]
    return {{"value": value, "dtype": dtype, "shape": list(value.shape), "ori_shape": list(value.shape),
            "format": "ND", "ori_format": "ND"}}


def golden(inputs, attrs, case):
    fn = _function()
    out_dtypes = {{o["name"]: o["dtype"] for o in case["outputs"]}}
    items = []
    for name in INPUTS:
        value = inputs.get(name)
        first = value[0] if isinstance(value, list) else value
        dtype = "float32" if first is None else str(first.dtype)
        items.append((name, _described(value, dtype)))
    for name in OUTPUTS:
        dtype = out_dtypes.get(name, "float32")
        items.append((name, {{"dtype": "float32" if dtype == "bfloat16" else dtype, "shape": None,
                             "format": "ND", "ori_format": "ND"}}))
    for name in ATTRS:
        items.append((name, attrs.get(name)))
    args, kwargs, used = [], {{}}, set()
    simple = lambda s: s.lower().replace("_", "")
    for p in inspect.signature(fn).parameters.values():
        if p.kind == p.VAR_KEYWORD:
            for n, v in items:
                if n not in used:
                    kwargs[n] = v
                    used.add(n)
            continue
        if p.kind == p.VAR_POSITIONAL:
            continue
        match = [n for n, _ in items if n not in used and simple(n) == simple(p.name)]
        if match:
            used.add(match[0])
            kwargs[p.name] = dict(items)[match[0]]
            continue
        rest = [n for n, _ in items if n not in used]
        if rest and p.default is p.empty:
            used.add(rest[0])
            kwargs[p.name] = dict(items)[rest[0]]
    result = fn(*args, **kwargs)
    if isinstance(result, tuple):
        result = list(result)
    if not isinstance(result, list):
        result = [result]
    return result[:len(OUTPUTS)]
"#,
        file = py(&rel.to_string_lossy()),
        func = py(func),
        inputs = names(plan.inputs.iter().map(|p| p.name.clone())),
        outputs = names(plan.outputs.iter().map(|p| p.name.clone())),
        attrs = names(plan.attrs.iter().map(|a| a.name.clone())),
        hint = MISSING_MODULE_PY,
    )
}

/// golden.py rerunning a gen_data.py with the case's inputs in place of
/// its input draws.
pub(crate) fn gen_data_golden(op_dir: &Path, script: &Path, mapping: &Mapping) -> String {
    let rel = relative(op_dir, &normalize(script));
    let inputs = mapping
        .inputs
        .iter()
        .map(|(n, d)| format!("{}: {d}", py(n)))
        .collect::<Vec<_>>()
        .join(", ");
    let lists = mapping
        .lists
        .iter()
        .map(|(n, ds)| {
            let ds: Vec<String> = ds.iter().map(|d| d.to_string()).collect();
            format!("{}: [{}]", py(n), ds.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let outputs = mapping
        .outputs
        .iter()
        .map(|(n, f)| format!("{}: {}", py(n), py(f)))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        r#"# Written by `ascendopt import`: the expected outputs of each case come
# from the project's own gen_data.py, rerun with the case's inputs in
# place of the random draws that make them.
GEN_DATA = {script}
INPUT_DRAWS = {{{inputs}}}
LIST_DRAWS = {{{lists}}}
OUTPUT_FILES = {{{outputs}}}
{MISSING_MODULE_PY}
{RUNNER}

def golden(inputs, attrs, case):
    here = os.path.dirname(os.path.abspath(__file__))
    replace = {{draw: inputs[name] for name, draw in INPUT_DRAWS.items()}}
    for name, draws in LIST_DRAWS.items():
        if len(inputs[name]) != len(draws):
            sys.exit("ascendopt: " + GEN_DATA + " draws " + str(len(draws)) + " tensors for list `" + name
                     + "`, the case gives " + str(len(inputs[name])))
        replace.update({{draw: inputs[name][k] for k, draw in enumerate(draws)}})
    _, writes = run(os.path.join(here, GEN_DATA), replace)
    written = {{os.path.normpath(w["file"]): w["value"] for w in writes}}
    out = {{}}
    for name, file in OUTPUT_FILES.items():
        if os.path.normpath(file) not in written:
            sys.exit("ascendopt: " + GEN_DATA + " wrote no " + file)
        out[name] = written[os.path.normpath(file)]
    return out
"#,
        script = py(&rel.to_string_lossy()),
    )
}

/// golden.py for a project without a numpy golden: it says what to
/// write.
pub(crate) fn scaffold_golden(plan: &Plan) -> String {
    let outputs: Vec<String> = plan.outputs.iter().map(|p| p.name.clone()).collect();
    format!(
        r#"# Written by `ascendopt import`: the project has no expected-output code
# that runs with numpy alone. Write the expected outputs here:
#   inputs: dict name -> numpy array (a tensor list: a list of arrays;
#           a left-out optional input: None)
#   attrs:  dict name -> value
#   return: dict output name -> array (a tensor list: a list of arrays)
# Outputs: {outputs}


def golden(inputs, attrs, case):
    raise NotImplementedError("golden.py: write the expected outputs of {op} (see the comment above)")
"#,
        outputs = outputs.join(", "),
        op = plan.op_type,
    )
}

/// `path` without `.` components (it stays as absolute as it was).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_and_values() {
        assert_eq!(
            relative(Path::new("/p/src/op"), Path::new("/p/src/op/tests/st/t.py")),
            PathBuf::from("tests/st/t.py")
        );
        assert_eq!(
            relative(
                Path::new("/p/a/Op"),
                Path::new("/p/a/Acl/scripts/gen_data.py")
            ),
            PathBuf::from("../Acl/scripts/gen_data.py")
        );
        assert_eq!(float(2.0), "2.0");
        assert_eq!(value(&Value::from(1), "float"), "1.0");
        assert_eq!(
            value(&serde_json::json!([1, 2]), "list_float"),
            "[1.0, 2.0]"
        );
        let text = value(&Value::from("a\"b"), "str");
        let parsed: toml::Value = toml::from_str(&format!("v = {text}")).unwrap();
        assert_eq!(parsed["v"].as_str(), Some("a\"b"));
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(
            relative(Path::new("./op"), Path::new("op/tests/st/t.py")),
            PathBuf::from("tests/st/t.py")
        );
    }
}
