//! Golden scripts: a Python file with a `golden` function, run with python3
//! and numpy.
//!
//! The script defines
//!
//! ```python
//! def golden(inputs, attrs, case):
//!     # inputs: dict name -> np.ndarray (bfloat16 arrives as float32)
//!     # attrs:  dict name -> int | float | bool | str | list
//!     # case:   dict with "name", "inputs", "outputs" [{name, dtype}]
//!     return {"y": inputs["x"] * 2}   # or a list/tuple in output order,
//!                                     # or one array for one output
//! ```
//!
//! ascendopt writes the inputs as `.npy` files and a `case.json` into a
//! temporary directory, runs a small wrapper (`python3 -c ...`) that imports
//! the script and saves each returned array as `out_<name>.npy`, and reads
//! them back. Each output is converted to the case's output dtype with one
//! rounding (so returning float64 for a float16 output is fine). The
//! interpreter is `python3`, or `$ASCENDOPT_PYTHON` when set.

use crate::error::OpError;
use crate::npy::{read_npy, write_npy};
use crate::spec::{AttrValue, Case};
use crate::tensor::Tensor;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a golden script may run.
const TIMEOUT: Duration = Duration::from_secs(300);

/// Python source of `_ascendopt_missing(e, who)`: the message for an
/// ImportError of a golden script, naming the module and the command that
/// installs it for this interpreter (the same table as [`install_hint`]).
/// Prepended to every Python text ascendopt runs a user's code with.
pub const MISSING_MODULE_PY: &str = r#"
def _ascendopt_missing(e, who):
    import sys as _sys
    top = (getattr(e, "name", None) or str(e).split("'")[1 if "'" in str(e) else 0]).split(".")[0]
    exe = _sys.executable or "python3"
    if top == "torch_npu":
        how = ("torch_npu runs only on an Ascend NPU with CANN; give the case a golden that "
               "computes on the CPU (numpy or torch)")
    else:
        pkg = {"torch": "torch --index-url https://download.pytorch.org/whl/cpu",
               "tensorflow": "tensorflow-cpu", "paddle": "paddlepaddle", "sklearn": "scikit-learn",
               "yaml": "pyyaml", "cv2": "opencv-python-headless", "PIL": "pillow"}.get(top, top)
        how = ("install it with `" + exe + " -m pip install " + pkg + "` (or set ASCENDOPT_PYTHON "
               "to a python3 that has it)")
    return who + " needs the Python module " + top + ", which " + exe + " cannot import; " + how
"#;

/// How to get Python module `module` for interpreter `python`: the
/// command, or why it cannot run here (torch_npu).
pub fn install_hint(python: &str, module: &str) -> String {
    let package = match module {
        "torch_npu" => {
            return "torch_npu runs only on an Ascend NPU with CANN; give the case a golden that computes on the CPU (numpy or torch)".into()
        }
        "torch" => "torch --index-url https://download.pytorch.org/whl/cpu",
        "tensorflow" => "tensorflow-cpu",
        "paddle" => "paddlepaddle",
        "sklearn" => "scikit-learn",
        "yaml" => "pyyaml",
        "cv2" => "opencv-python-headless",
        "PIL" => "pillow",
        other => other,
    };
    format!("install it with `{python} -m pip install {package}` (or set ASCENDOPT_PYTHON to a python3 that has it)")
}

const WRAPPER: &str = r#"
import importlib.util, json, os, sys
try:
    import numpy as np
except ImportError:
    sys.exit("ascendopt-golden: numpy is not installed for " + sys.executable +
             "; install it with `" + sys.executable + " -m pip install numpy` (or set ASCENDOPT_PYTHON to a python3 that has it)")
script, work = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
spec = importlib.util.spec_from_file_location("ascendopt_golden", script)
mod = importlib.util.module_from_spec(spec)
try:
    spec.loader.exec_module(mod)
except ImportError as e:
    sys.exit("ascendopt-golden: " + _ascendopt_missing(e, os.path.basename(script)))
with open(os.path.join(work, "case.json")) as f:
    case = json.load(f)
def load(name):
    return np.load(os.path.join(work, name))
inputs = {}
for i in case["inputs"]:
    if i.get("omitted"):
        inputs[i["name"]] = None
    elif i.get("list") is None:
        inputs[i["name"]] = load("in_" + i["name"] + ".npy")
    else:
        inputs[i["name"]] = [load("in_%s_%d.npy" % (i["name"], k)) for k in range(i["list"])]
try:
    res = mod.golden(inputs, case["attrs"], case)
except ImportError as e:
    sys.exit("ascendopt-golden: " + _ascendopt_missing(e, os.path.basename(script)))
outs = case["outputs"]
names = [o["name"] for o in outs]
if isinstance(res, dict):
    missing = [n for n in names if n not in res]
    if missing:
        sys.exit("golden() returned no value for output(s) " + ", ".join(missing))
    values = [res[n] for n in names]
elif isinstance(res, (list, tuple)) and len(outs) == 1 and outs[0].get("list") is not None \
        and len(res) == outs[0]["list"] and all(hasattr(a, "shape") for a in res):
    values = [list(res)]
elif isinstance(res, (list, tuple)):
    values = list(res)
else:
    values = [res]
if len(values) != len(names):
    sys.exit("golden() returned %d values for %d outputs" % (len(values), len(names)))
for o, v in zip(outs, values):
    if o.get("list") is None:
        np.save(os.path.join(work, "out_" + o["name"] + ".npy"), np.ascontiguousarray(np.asarray(v)))
        continue
    if not isinstance(v, (list, tuple)) or len(v) != o["list"]:
        sys.exit("golden() must return a list of %d arrays for the tensor list %s" % (o["list"], o["name"]))
    for k, a in enumerate(v):
        np.save(os.path.join(work, "out_%s_%d.npy" % (o["name"], k)), np.ascontiguousarray(np.asarray(a)))
"#;

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_f64(v: f64) -> String {
    // Python's json module accepts NaN and Infinity.
    if v.is_nan() {
        "NaN".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        format!("{v:?}")
    }
}

fn json_attr(v: &AttrValue) -> String {
    match v {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => json_f64(*f),
        AttrValue::Bool(b) => b.to_string(),
        AttrValue::Str(s) => json_str(s),
        AttrValue::ListInt(l) => {
            format!(
                "[{}]",
                l.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        AttrValue::ListFloat(l) => {
            format!(
                "[{}]",
                l.iter()
                    .map(|x| json_f64(*x))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

/// The file of a case tensor: `<prefix>_<name>.npy`, or
/// `<prefix>_<name>_<k>.npy` for element k of a tensor list.
fn tensor_file(prefix: &str, name: &str, list_index: Option<usize>) -> String {
    match list_index {
        None => format!("{prefix}_{name}.npy"),
        Some(k) => format!("{prefix}_{name}_{k}.npy"),
    }
}

/// `[{"name": .., "list": n | null, ...}]`: each parameter once, in
/// order, with the length of a tensor list.
fn grouped<'a>(tensors: impl Iterator<Item = (&'a str, Option<usize>, String)>) -> Vec<String> {
    let mut out: Vec<(String, Option<usize>, String)> = Vec::new();
    for (name, list_index, extra) in tensors {
        match out.last_mut() {
            Some((last, n, _)) if last == name && list_index.is_some() => {
                *n = Some(n.unwrap_or(0) + 1);
            }
            _ => out.push((name.to_string(), list_index.map(|_| 1), extra)),
        }
    }
    out.into_iter()
        .map(|(name, n, extra)| {
            format!(
                "{{\"name\": {}, \"list\": {}{extra}}}",
                json_str(&name),
                n.map_or("null".to_string(), |n| n.to_string())
            )
        })
        .collect()
}

/// The `case.json` given to the wrapper.
fn case_json(case: &Case) -> String {
    let mut inputs = grouped(
        case.inputs
            .iter()
            .map(|i| (i.name.as_str(), i.list_index, String::new())),
    );
    inputs.extend(
        case.omitted
            .iter()
            .map(|n| format!("{{\"name\": {}, \"omitted\": true}}", json_str(n))),
    );
    let outputs = grouped(case.outputs.iter().map(|o| {
        (
            o.name.as_str(),
            o.list_index,
            format!(", \"dtype\": {}", json_str(o.dtype.name())),
        )
    }));
    let attrs: Vec<String> = case
        .attrs
        .iter()
        .map(|(n, v)| format!("{}: {}", json_str(n), json_attr(v)))
        .collect();
    format!(
        "{{\"name\": {}, \"inputs\": [{}], \"outputs\": [{}], \"attrs\": {{{}}}}}\n",
        json_str(&case.name),
        inputs.join(", "),
        outputs.join(", "),
        attrs.join(", ")
    )
}

/// Converts a tensor to `dtype` like a cast (one rounding for floats).
fn convert(t: Tensor, dtype: crate::Dtype) -> Tensor {
    if t.dtype == dtype {
        return t;
    }
    let mut out = Tensor::zeros(dtype, &t.shape);
    for i in 0..t.numel() {
        if t.dtype.is_float() {
            out.set_f64(i, t.get_f64(i));
        } else {
            out.set_i128(i, t.get_i128(i));
        }
    }
    out
}

/// Runs a golden script for one case.
pub fn run(script: &Path, case: &Case, inputs: &[Tensor]) -> Result<Vec<Tensor>, OpError> {
    let fail = |m: String| OpError::Script {
        script: script.to_path_buf(),
        message: format!("case `{}`: {m}", case.name),
    };
    if !script.is_file() {
        return Err(fail("the script does not exist".to_string()));
    }
    let work = tempfile::Builder::new()
        .prefix("ascendopt-golden-")
        .tempdir()
        .map_err(|e| OpError::io("create", &std::env::temp_dir(), e))?;
    let write = |name: &str, bytes: &[u8]| {
        let p = work.path().join(name);
        std::fs::write(&p, bytes).map_err(|e| OpError::io("write", &p, e))
    };
    write("case.json", case_json(case).as_bytes())?;
    for (t, ci) in inputs.iter().zip(&case.inputs) {
        write(&tensor_file("in", &ci.name, ci.list_index), &write_npy(t))?;
    }
    let python = std::env::var("ASCENDOPT_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let mut child = Command::new(&python)
        .arg("-c")
        .arg(format!("{MISSING_MODULE_PY}{WRAPPER}"))
        .arg(script)
        .arg(work.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot start `{python}`: {e}")))?;
    // Drain stderr on a thread so that a chatty script cannot block on a
    // full pipe while we wait for it.
    let reader = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = String::new();
            let _ = pipe.read_to_string(&mut buf);
            buf
        })
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > TIMEOUT => {
                // Best effort: the child may have exited in between.
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!("timed out after {} s", TIMEOUT.as_secs())));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(fail(format!("cannot wait for `{python}`: {e}"))),
        }
    };
    let stderr = reader.and_then(|h| h.join().ok()).unwrap_or_default();
    if !status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(fail(format!(
            "{python} exited with {status}:\n{}",
            tail.join("\n")
        )));
    }
    let mut outputs = Vec::new();
    for co in &case.outputs {
        let name = tensor_file("out", &co.name, co.list_index);
        let p = work.path().join(&name);
        let bytes = std::fs::read(&p).map_err(|e| fail(format!("no output {name}: {e}")))?;
        let t = read_npy(&bytes, &co.name)?;
        outputs.push(convert(t, co.dtype));
    }
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_encoding() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(json_attr(&AttrValue::Float(f64::NAN)), "NaN");
        assert_eq!(json_attr(&AttrValue::Float(1e-6)), "1e-6");
        assert_eq!(
            json_attr(&AttrValue::ListFloat(vec![1.0, f64::NEG_INFINITY])),
            "[1.0, -Infinity]"
        );
        assert_eq!(json_attr(&AttrValue::ListInt(vec![1, -2])), "[1, -2]");
        assert_eq!(json_attr(&AttrValue::Bool(true)), "true");
    }

    fn have_numpy() -> bool {
        Command::new("python3")
            .args(["-c", "import numpy"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    const LIST_SPEC: &str = r#"[op]
name = "axpy_list"
level = 2
op_type = "AxpyList"

[[inputs]]
name = "x"
dtypes = ["float32"]
kind = "list"

[[inputs]]
name = "bias"
dtypes = ["float32"]
optional = true

[[outputs]]
name = "y"
kind = "list"
dtype = { same_as = "x" }

[golden]
script = "golden.py"

[[cases]]
name = "two"
shapes = [[[3], [2, 2]], [1]]

[[cases]]
name = "alone"
omit = ["bias"]
shapes = [[[2]]]
"#;

    #[test]
    fn a_script_golden_gets_lists_and_left_out_inputs_and_returns_lists() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("op.toml");
        std::fs::write(&file, LIST_SPEC).unwrap();
        std::fs::write(
            dir.path().join("golden.py"),
            [
                "import numpy as np",
                "def golden(inputs, attrs, case):",
                "    b = inputs['bias']",
                "    add = 0.0 if b is None else float(b[0])",
                "    return {'y': [x * 2 + add for x in inputs['x']]}",
                "",
            ]
            .join("\n"),
        )
        .unwrap();
        let spec = crate::spec::OpSpec::parse(LIST_SPEC, &file, &crate::golden::testing::BUILTINS)
            .unwrap();
        let json = case_json(spec.case("alone").unwrap());
        assert!(
            json.contains(
                r#""inputs": [{"name": "x", "list": 1}, {"name": "bias", "omitted": true}]"#
            ),
            "{json}"
        );
        if !have_numpy() {
            eprintln!("python3 with numpy not available; only case.json was checked");
            return;
        }
        let case = spec.case("two").unwrap();
        let f = |shape: &[usize], v: &[f64]| Tensor::from_f64s(crate::Dtype::Float32, shape, v);
        let inputs = [
            f(&[3], &[1.0, 2.0, 3.0]),
            f(&[2, 2], &[0.0, 1.0, 2.0, 3.0]),
            f(&[1], &[0.5]),
        ];
        let out = run(&dir.path().join("golden.py"), case, &inputs).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].to_f64s(), [2.5, 4.5, 6.5]);
        assert_eq!(out[1].shape, [2, 2]);
        assert_eq!(out[1].to_f64s(), [0.5, 2.5, 4.5, 6.5]);
        let alone = spec.case("alone").unwrap();
        let out = run(
            &dir.path().join("golden.py"),
            alone,
            &[f(&[2], &[1.0, -1.0])],
        )
        .unwrap();
        assert_eq!(out[0].to_f64s(), [2.0, -2.0]);
    }

    #[test]
    fn a_script_that_needs_torch_says_so() {
        if !have_numpy() {
            eprintln!("python3 with numpy not available");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("op.toml");
        std::fs::write(&file, LIST_SPEC).unwrap();
        std::fs::write(
            dir.path().join("golden.py"),
            "import torch_that_is_not_here
import torch
",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("golden2.py"),
            "import torch
",
        )
        .unwrap();
        let spec = crate::spec::OpSpec::parse(LIST_SPEC, &file, &crate::golden::testing::BUILTINS)
            .unwrap();
        let case = spec.case("alone").unwrap();
        let x = [Tensor::zeros(crate::Dtype::Float32, &[2])];
        let e = run(&dir.path().join("golden2.py"), case, &x)
            .unwrap_err()
            .to_string();
        // torch is not installed on the machines this runs on; when it is,
        // the script imports it and the error is another.
        if e.contains("needs torch") {
            assert!(e.contains("only python3 with numpy"), "{e}");
        }
        let e = run(&dir.path().join("golden.py"), case, &x)
            .unwrap_err()
            .to_string();
        assert!(e.contains("torch_that_is_not_here"), "{e}");
    }

    #[test]
    fn convert_rounds_once() {
        let t = Tensor::from_f64s(
            crate::Dtype::Float64,
            &[2],
            &[1.0 + 2f64.powi(-11) + 2f64.powi(-40), 0.1],
        );
        let h = convert(t, crate::Dtype::Float16);
        assert_eq!((h.bits(0), h.bits(1)), (0x3C01, 0x2E66));
    }
}
