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

const WRAPPER: &str = r#"
import importlib.util, json, os, sys
import numpy as np
script, work = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("ascendopt_golden", script)
mod = importlib.util.module_from_spec(spec)
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
spec.loader.exec_module(mod)
with open(os.path.join(work, "case.json")) as f:
    case = json.load(f)
inputs = {n: np.load(os.path.join(work, "in_" + n + ".npy")) for n in case["inputs"]}
res = mod.golden(inputs, case["attrs"], case)
names = [o["name"] for o in case["outputs"]]
if isinstance(res, dict):
    missing = [n for n in names if n not in res]
    if missing:
        sys.exit("golden() returned no value for output(s) " + ", ".join(missing))
    arrays = [res[n] for n in names]
elif isinstance(res, (list, tuple)):
    arrays = list(res)
else:
    arrays = [res]
if len(arrays) != len(names):
    sys.exit("golden() returned %d arrays for %d outputs" % (len(arrays), len(names)))
for n, a in zip(names, arrays):
    np.save(os.path.join(work, "out_" + n + ".npy"), np.ascontiguousarray(np.asarray(a)))
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

/// The `case.json` given to the wrapper.
fn case_json(case: &Case) -> String {
    let inputs: Vec<String> = case.inputs.iter().map(|i| json_str(&i.name)).collect();
    let outputs: Vec<String> = case
        .outputs
        .iter()
        .map(|o| {
            format!(
                "{{\"name\": {}, \"dtype\": {}}}",
                json_str(&o.name),
                json_str(o.dtype.name())
            )
        })
        .collect();
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
        write(&format!("in_{}.npy", ci.name), &write_npy(t))?;
    }
    let python = std::env::var("ASCENDOPT_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let mut child = Command::new(&python)
        .arg("-c")
        .arg(WRAPPER)
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
        let name = format!("out_{}.npy", co.name);
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
