//! msopst test cases (`tests/st/*.json`): each case lists its inputs and
//! outputs (name, type, format, shape, value distribution and range) and
//! attributes, and names the expected-output function
//! (`calc_expect_func_file: "./test_x.py:calc_expect_func"`). A case with
//! several types per tensor stands for one case per type column, as msopst
//! runs it.

use super::json_file::JsonFileError;
use crate::Dtype;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One tensor of an msopst case.
#[derive(Debug, Clone, PartialEq)]
pub struct StTensor {
    /// `name` (the OpDef's parameter name).
    pub name: String,
    /// The dtype; None for `UNDEFINED` (an optional input left out).
    pub dtype: Option<Dtype>,
    /// The shape; several for a tensor list (`param_type: dynamic`).
    pub shapes: Vec<Vec<usize>>,
    /// The list form.
    pub dynamic: bool,
    /// `value_range` of a `uniform` distribution.
    pub range: Option<(f64, f64)>,
}

/// One msopst case, for one type column.
#[derive(Debug, Clone, PartialEq)]
pub struct StCase {
    /// `case_name`, with `_<column>` when the case has several columns.
    pub name: String,
    /// `op`.
    pub op: String,
    /// `input_desc`.
    pub inputs: Vec<StTensor>,
    /// `output_desc`.
    pub outputs: Vec<StTensor>,
    /// `attr`: name and value.
    pub attrs: Vec<(String, Value)>,
    /// The expected-output function: its Python file (resolved against the
    /// JSON's folder) and name.
    pub expect: Option<(PathBuf, String)>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

fn dims(v: &Value) -> Option<Vec<usize>> {
    v.as_array()?
        .iter()
        .map(|d| d.as_i64().filter(|&d| d >= 0).map(|d| d as usize))
        .collect()
}

/// The shapes of a tensor description: one shape, or a list of shapes.
fn shapes(v: Option<&Value>) -> Vec<Vec<usize>> {
    let Some(v) = v else {
        return Vec::new();
    };
    if let Some(shape) = dims(v) {
        return vec![shape];
    }
    v.as_array()
        .map(|list| list.iter().filter_map(dims).collect())
        .unwrap_or_default()
}

fn tensor(desc: &Value, column: usize) -> StTensor {
    let types = strings(desc.get("type"));
    let ty = types
        .get(column)
        .or(types.first())
        .cloned()
        .unwrap_or_default();
    let dynamic = desc
        .get("param_type")
        .and_then(Value::as_str)
        .is_some_and(|p| p.eq_ignore_ascii_case("dynamic"));
    let range = desc
        .get("value_range")
        .and_then(Value::as_array)
        .and_then(|r| {
            // [[lo, hi]] or [lo, hi]
            let pair = match r.first() {
                Some(Value::Array(p)) => p.clone(),
                _ => r.clone(),
            };
            Some((pair.first()?.as_f64()?, pair.get(1)?.as_f64()?))
        });
    let dtype = if ty.eq_ignore_ascii_case("undefined") {
        None
    } else {
        Dtype::parse(&ty.to_ascii_lowercase())
    };
    StTensor {
        name: desc
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        dtype,
        shapes: shapes(desc.get("shape")),
        dynamic,
        range,
    }
}

/// The cases of one msopst JSON file.
pub fn read_cases(path: &Path) -> Result<Vec<StCase>, JsonFileError> {
    let Value::Array(list) = JsonFileError::read(path)? else {
        return Err(JsonFileError::shape(path, "not a list of msopst cases"));
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for case in list {
        let Some(name) = case.get("case_name").and_then(Value::as_str) else {
            return Err(JsonFileError::shape(path, "a case has no case_name"));
        };
        let descs = |key: &str| -> Vec<Value> {
            case.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let (ins, outs) = (descs("input_desc"), descs("output_desc"));
        let columns = ins
            .iter()
            .chain(&outs)
            .map(|d| strings(d.get("type")).len())
            .max()
            .unwrap_or(1)
            .max(1);
        let attrs: Vec<(String, Value)> = descs("attr")
            .iter()
            .filter_map(|a| {
                Some((
                    a.get("name")?.as_str()?.to_string(),
                    a.get("value").cloned().unwrap_or(Value::Null),
                ))
            })
            .collect();
        let expect = case
            .get("calc_expect_func_file")
            .and_then(Value::as_str)
            .and_then(|spec| {
                let (file, func) = spec.rsplit_once(':')?;
                Some((dir.join(file.trim()), func.trim().to_string()))
            });
        for column in 0..columns {
            out.push(StCase {
                name: if columns > 1 {
                    format!("{name}_{column}")
                } else {
                    name.to_string()
                },
                op: case
                    .get("op")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                inputs: ins.iter().map(|d| tensor(d, column)).collect(),
                outputs: outs.iter().map(|d| tensor(d, column)).collect(),
                attrs: attrs.clone(),
                expect: expect.clone(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_become_cases_and_undefined_inputs_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("X_case.json");
        std::fs::write(
            &path,
            r#"[{"case_name": "Test_X_001", "op": "X",
                 "calc_expect_func_file": "./test_x.py:calc_expect_func",
                 "input_desc": [
                   {"name": "x", "format": ["ND"], "type": ["float16", "float"], "shape": [8, 16],
                    "data_distribute": ["uniform"], "value_range": [[-2, 3]]},
                   {"name": "bias", "format": ["ND"], "type": ["UNDEFINED"], "shape": [16]},
                   {"name": "xs", "param_type": "dynamic", "format": ["ND"], "type": ["int32"],
                    "shape": [[2], [3, 4]]}],
                 "output_desc": [{"name": "y", "format": ["ND"], "type": ["float16", "float"], "shape": [8, 16]}],
                 "attr": [{"name": "alpha", "type": "float", "value": 0.5}]}]"#,
        )
        .unwrap();
        let cases = read_cases(&path).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].name, "Test_X_001_0");
        assert_eq!(cases[1].inputs[0].dtype, Some(Dtype::Float32));
        assert_eq!(cases[1].inputs[0].range, Some((-2.0, 3.0)));
        assert_eq!(cases[0].inputs[1].dtype, None);
        assert!(cases[0].inputs[2].dynamic);
        assert_eq!(cases[0].inputs[2].shapes, [vec![2], vec![3, 4]]);
        assert_eq!(cases[0].attrs, [("alpha".to_string(), Value::from(0.5))]);
        let (file, func) = cases[0].expect.clone().unwrap();
        assert_eq!(file, dir.path().join("./test_x.py"));
        assert_eq!(func, "calc_expect_func");
    }
}
