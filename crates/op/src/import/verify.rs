//! A project's own output check, `verify_result.py` (CANN's samples and the
//! projects written from them): the tolerances it compares with, read so
//! that `import` writes them into op.toml's `[tolerance]` and the project's
//! own test verdict carries over.
//!
//! The script is read, never run: module-level assignments of numbers to
//! the names these scripts use (`relative_tol`/`rtol`, `absolute_tol`/
//! `atol`, `error_tol`: the share of elements allowed to fail; e.g.
//! `relative_tol = 1e-3`), and the numpy dtype its `np.fromfile` calls read
//! the output as. A script that spells its tolerances any other way (per
//! dtype in a dict, computed, read from arguments) gives nothing and import
//! keeps the defaults, with a note.
//!
//! numpy's `isclose` passes `|a - e| <= atol + rtol * |e|`; op.toml's rule
//! passes when either bound holds alone, which is never looser: the same
//! numbers are at least as strict as the project's check.
//!
//! The other check of the samples (`operator_contrib` and the competition
//! projects written from it) states one number, `loss = 1e-3`: an element's
//! absolute error and its error relative to the larger magnitude are each
//! compared with `loss`, and where the script counts the failures against
//! `size * loss` a share `loss` of the elements may fail. Read as atol =
//! rtol = `loss`, and `max_mismatch_ratio` = `loss` when the script has that
//! count. That script fails a case only when both counts exceed the share,
//! op.toml when the elements outside both bounds do, which never fails a
//! case the script passes (an element outside both bounds is in both
//! counts) but can pass one it fails; a note says so.

use crate::dtype::Dtype;
use std::path::{Path, PathBuf};

/// The tolerance a project's check applies.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectTolerance {
    /// The script it comes from.
    pub script: PathBuf,
    /// The dtypes it applies to (the output dtype the script reads; every
    /// float dtype of the outputs when it names none).
    pub dtypes: Vec<Dtype>,
    /// numpy's `atol`.
    pub atol: f64,
    /// numpy's `rtol`.
    pub rtol: f64,
    /// The share of elements that may fail (`error_tol`), 0 when absent.
    pub max_mismatch_ratio: f64,
    /// Read from the one-number `loss` form (see the module docs).
    pub single_loss: bool,
}

/// The `verify_result.py` scripts of an operator folder, where
/// `gen_data.py` is looked for ([`super::gen_data::project_files`]).
pub fn scripts(op_dir: &Path) -> Vec<PathBuf> {
    super::gen_data::project_files(op_dir, "verify_result.py")
}

/// The tolerance `text` (a verify_result.py) states; None when it does not
/// state both a relative and an absolute tolerance as plain numbers, or
/// states one that is no tolerance (negative, not finite, a share of 1 or
/// more). `float_outputs` are the outputs' float dtypes, used when the
/// script names no dtype.
pub fn read(script: &Path, text: &str, float_outputs: &[Dtype]) -> Option<ProjectTolerance> {
    let mut rtol = None;
    let mut atol = None;
    let mut ratio = None;
    let mut loss = None;
    let mut dtypes: Vec<Dtype> = Vec::new();
    for line in text.lines() {
        // Module level only: an indented assignment is inside a function.
        if line.starts_with(char::is_whitespace) {
            if let Some(d) = fromfile_dtype(line) {
                if !dtypes.contains(&d) {
                    dtypes.push(d);
                }
            }
            continue;
        }
        let code = line.split('#').next().unwrap_or("");
        let Some((name, value)) = code.split_once('=') else {
            continue;
        };
        let name = name.trim();
        let Ok(value) = value.trim().parse::<f64>() else {
            continue;
        };
        match name {
            "relative_tol" | "rtol" | "rel_tol" => rtol = Some(value),
            "absolute_tol" | "atol" | "abs_tol" => atol = Some(value),
            "error_tol" | "error_ratio" | "err_tol" => ratio = Some(value),
            "loss" | "LOSS" => loss = Some(value),
            _ => {}
        }
    }
    let single_loss = rtol.is_none() && atol.is_none() && ratio.is_none() && loss.is_some();
    let (rtol, atol, ratio) = match (rtol, atol, loss) {
        (Some(r), Some(a), _) => (r, a, ratio.unwrap_or(0.0)),
        (None, None, Some(l)) if ratio.is_none() => {
            (l, l, if counts_against_share(text) { l } else { 0.0 })
        }
        _ => return None,
    };
    let valid = |v: f64| v.is_finite() && v >= 0.0;
    if !(valid(rtol) && valid(atol) && valid(ratio) && ratio < 1.0) {
        return None;
    }
    if dtypes.is_empty() {
        dtypes = float_outputs.to_vec();
    }
    if dtypes.is_empty() {
        return None;
    }
    Some(ProjectTolerance {
        script: script.to_path_buf(),
        dtypes,
        atol,
        rtol,
        max_mismatch_ratio: ratio,
        single_loss,
    })
}

/// Whether a one-number check counts its failing elements against a share
/// of the size (`np.sum(result_rtol == False) > real_result.size * loss`).
fn counts_against_share(text: &str) -> bool {
    let flat: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    [".size*loss", ".size*LOSS", "*loss>", "*LOSS>"]
        .iter()
        .any(|p| flat.contains(p))
}

/// The float dtype an `np.fromfile(..., dtype=np.<name>)` on `line` reads.
fn fromfile_dtype(line: &str) -> Option<Dtype> {
    let at = line.find("fromfile(")?;
    let rest = &line[at..];
    let d = rest.find("dtype=")?;
    let value = rest[d + "dtype=".len()..].trim_start();
    let name = value
        .trim_start_matches("np.")
        .trim_start_matches("numpy.")
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()?;
    match name {
        "float16" | "half" => Some(Dtype::Float16),
        "float32" | "single" => Some(Dtype::Float32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "import sys\nimport numpy as np\n\n# for float16\nrelative_tol = 1e-3\nabsolute_tol = 1e-5\nerror_tol = 1e-3\n\n\ndef verify_result(output, golden):\n    output = np.fromfile(output, dtype=np.float16).reshape(-1)\n    golden = np.fromfile(golden, dtype=np.float16).reshape(-1)\n    rtol = 5\n";

    #[test]
    fn the_samples_check_gives_its_three_numbers_for_the_dtype_it_reads() {
        let t = read(Path::new("s/verify_result.py"), SAMPLE, &[Dtype::Float32]).unwrap();
        assert_eq!(t.dtypes, [Dtype::Float16]);
        assert_eq!((t.rtol, t.atol, t.max_mismatch_ratio), (1e-3, 1e-5, 1e-3));
    }

    #[test]
    fn without_a_dtype_the_outputs_float_dtypes_and_without_a_ratio_zero() {
        let text = "rtol = 0.01  # loose\natol = 0.001\n";
        let t = read(Path::new("v.py"), text, &[Dtype::Float16, Dtype::Float32]).unwrap();
        assert_eq!(t.dtypes, [Dtype::Float16, Dtype::Float32]);
        assert_eq!((t.rtol, t.atol, t.max_mismatch_ratio), (0.01, 0.001, 0.0));
    }

    #[test]
    fn tolerances_spelt_another_way_or_out_of_range_give_nothing() {
        // Only inside a function: not module level.
        let local = "def f():\n    rtol = 1e-3\n    atol = 1e-3\n";
        assert_eq!(read(Path::new("v.py"), local, &[Dtype::Float16]), None);
        // One of the two missing.
        assert_eq!(
            read(Path::new("v.py"), "rtol = 1e-3\n", &[Dtype::Float16]),
            None
        );
        // A share of every element is no check.
        let all = "rtol = 1e-3\natol = 1e-3\nerror_tol = 1\n";
        assert_eq!(read(Path::new("v.py"), all, &[Dtype::Float16]), None);
        let negative = "rtol = -1\natol = 1e-3\n";
        assert_eq!(read(Path::new("v.py"), negative, &[Dtype::Float16]), None);
        // A dict per dtype is not read.
        let dict = "TOL = {'float16': (1e-3, 1e-3)}\n";
        assert_eq!(read(Path::new("v.py"), dict, &[Dtype::Float16]), None);
        // A loss beside the named tolerances is not mixed in.
        let both = "loss = 1e-3\nrtol = 1e-2\n";
        assert_eq!(read(Path::new("v.py"), both, &[Dtype::Float16]), None);
    }

    /// The one-number form (clean-room text shaped like the contributed
    /// samples' check): a share when it counts against `size * loss`.
    const ONE_NUMBER: &str = "import sys\nimport numpy as np\n\nloss = 2e-3 # tolerated error\nminimum = 10e-10\n\ndef verify_result(real, golden):\n    real = np.fromfile(real, dtype=np.float32)\n    golden = np.fromfile(golden, dtype=np.float32)\n    err = np.abs(real - golden)\n    bad_abs = np.less_equal(err, loss) == False\n    bad_rel = np.less_equal(err / (np.maximum(np.abs(real), np.abs(golden)) + minimum), loss) == False\n    if np.sum(bad_rel) > real.size * loss and np.sum(bad_abs) > real.size * loss:\n        return False\n    return True\n";

    #[test]
    fn a_single_loss_is_both_bounds_and_the_share_when_counted_against_the_size() {
        let t = read(Path::new("verify_result.py"), ONE_NUMBER, &[Dtype::Float16]).unwrap();
        assert_eq!(t.dtypes, [Dtype::Float32]);
        assert_eq!((t.rtol, t.atol, t.max_mismatch_ratio), (2e-3, 2e-3, 2e-3));
        assert!(t.single_loss);
        // Every element within loss, no share: a per-element loop.
        let each = "loss = 1e-4\n\ndef verify(r, g):\n    for i in range(len(r)):\n        if abs(r[i] - g[i]) > loss and abs(r[i] - g[i]) / g[i] > loss:\n            return False\n";
        let t = read(Path::new("verify_result.py"), each, &[Dtype::Float32]).unwrap();
        assert_eq!((t.rtol, t.atol, t.max_mismatch_ratio), (1e-4, 1e-4, 0.0));
        // A loss of 1 or more is no check.
        assert_eq!(
            read(
                Path::new("v.py"),
                "loss = 1\nx = a.size * loss >",
                &[Dtype::Float16]
            ),
            None
        );
    }
}
