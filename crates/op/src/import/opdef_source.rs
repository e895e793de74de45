//! An OpDef description from what a project holds besides compiled code:
//! msopgen's operator description JSON (`AddCustom.json`: `op`,
//! `input_desc`, `output_desc`, `attr`), or the OpDef's source text in
//! op_host (`this->Input("x").ParamType(REQUIRED).DataType({...})`). The
//! compiled OpDef ([`crate::opdef`], described by the host library) is
//! better than both; these are the fallbacks when the host does not
//! compile.

use super::json_file::JsonFileError;
use crate::opdef::{AttrDesc, OpDefDesc, ParamDesc, ParamType};
use serde_json::Value;
use std::path::Path;

/// GE's dtype name for an msopgen/msopst type name (`float16`, `float`,
/// `int32`, ...); None for `UNDEFINED` and unknown names.
pub fn ge_dtype_of_type_name(name: &str) -> Option<String> {
    let d = match name.trim().to_ascii_lowercase().as_str() {
        "float16" | "fp16" | "half" => "DT_FLOAT16",
        "float" | "float32" | "fp32" => "DT_FLOAT",
        "bfloat16" | "bf16" => "DT_BF16",
        "double" | "float64" => "DT_DOUBLE",
        "int8" => "DT_INT8",
        "uint8" => "DT_UINT8",
        "int16" => "DT_INT16",
        "uint16" => "DT_UINT16",
        "int32" => "DT_INT32",
        "uint32" => "DT_UINT32",
        "int64" => "DT_INT64",
        "uint64" => "DT_UINT64",
        "bool" => "DT_BOOL",
        "complex64" => "DT_COMPLEX64",
        _ => return None,
    };
    Some(d.to_string())
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

fn param_type(v: Option<&Value>) -> ParamType {
    match v
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("optional") => ParamType::Optional,
        Some("dynamic") => ParamType::Dynamic,
        _ => ParamType::Required,
    }
}

fn params(v: Option<&Value>) -> Vec<ParamDesc> {
    let Some(Value::Array(list)) = v else {
        return Vec::new();
    };
    list.iter()
        .map(|p| ParamDesc {
            name: p
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            param_type: param_type(p.get("param_type")),
            dtypes: strings(p.get("type"))
                .iter()
                .map(|t| ge_dtype_of_type_name(t).unwrap_or_else(|| format!("DT_{t}")))
                .collect(),
            dtype_list: false,
            formats: strings(p.get("format"))
                .iter()
                .map(|f| format!("FORMAT_{f}"))
                .collect(),
            bin_query: Vec::new(),
            value_depend: "ignore".into(),
            scalar: None,
            follow: None,
            error: None,
        })
        .collect()
}

/// The attribute type name of the OpDef for an msopgen attr type.
fn attr_type(name: &str) -> &'static str {
    match name.trim().to_ascii_lowercase().as_str() {
        "int" => "Int",
        "float" => "Float",
        "bool" => "Bool",
        "str" | "string" => "String",
        "list_int" | "listint" => "ListInt",
        "list_float" | "listfloat" => "ListFloat",
        "list_bool" | "listbool" => "ListBool",
        _ => "None",
    }
}

/// A default value written as text in msopgen's JSON, typed.
fn attr_default(ty: &str, text: &Value) -> Option<Value> {
    let s = match text {
        Value::String(s) => s.trim().to_string(),
        other => return Some(other.clone()),
    };
    let parsed = match ty {
        "Int" => Value::from(s.parse::<i64>().ok()?),
        "Float" => Value::from(s.parse::<f64>().ok()?),
        "Bool" => Value::from(matches!(s.to_ascii_lowercase().as_str(), "true" | "1")),
        "String" => Value::from(s),
        _ => serde_json::from_str(&s).ok()?,
    };
    Some(parsed)
}

/// The OpDefs of an msopgen operator description JSON (a list of
/// operators, or one). Err when the file is not such a description.
pub fn from_msopgen_json(path: &Path) -> Result<Vec<OpDefDesc>, JsonFileError> {
    let list = match JsonFileError::read(path)? {
        Value::Array(a) => a,
        v @ Value::Object(_) => vec![v],
        _ => return Err(JsonFileError::shape(path, "not an operator description")),
    };
    let mut out = Vec::new();
    for op in list {
        let Some(op_type) = op.get("op").and_then(Value::as_str) else {
            return Err(JsonFileError::shape(path, "an entry has no \"op\""));
        };
        if op.get("input_desc").is_none() && op.get("output_desc").is_none() {
            return Err(JsonFileError::shape(path, "not an operator description"));
        }
        let attrs = match op.get("attr") {
            Some(Value::Array(list)) => list
                .iter()
                .map(|a| {
                    let ty = attr_type(a.get("type").and_then(Value::as_str).unwrap_or(""));
                    AttrDesc {
                        name: a
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        ty: ty.to_string(),
                        required: param_type(a.get("param_type")) == ParamType::Required,
                        default: a.get("default_value").and_then(|d| attr_default(ty, d)),
                    }
                })
                .collect(),
            _ => Vec::new(),
        };
        out.push(OpDefDesc {
            op_type: op_type.to_string(),
            error: None,
            tiling: true,
            inputs: params(op.get("input_desc")),
            outputs: params(op.get("output_desc")),
            attrs,
            configs: Vec::new(),
        });
    }
    Ok(out)
}

/// The OpDefs an op_host source declares, read from its text: each
/// `class X : public OpDef` and the `Input`/`Output`/`Attr` chains of its
/// constructor, with `ParamType`, `DataType({ge::DT_...})`,
/// `DataTypeList`, `Format`, `ValueDepend` and the attr type calls
/// (`.Float(1.0)`). Lists held in variables or built by macros are not
/// seen: a parameter whose dtypes it cannot read has none.
pub fn from_source_text(text: &str) -> Vec<OpDefDesc> {
    let text = strip_comments(text);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(pos) = rest.find("public OpDef") {
        let before = &rest[..pos];
        let op_type = before
            .rsplit("class")
            .next()
            .and_then(|s| s.split(':').next())
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let body_end = rest[pos..]
            .find("OP_ADD(")
            .map(|e| pos + e)
            .unwrap_or(rest.len());
        let body = &rest[pos..body_end];
        out.push(parse_body(&op_type, body));
        rest = &rest[body_end.min(rest.len())..];
        if rest.starts_with("OP_ADD(") {
            rest = &rest[7..];
        }
    }
    out
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '/' && chars.peek() == Some(&'/') {
            for d in chars.by_ref() {
                if d == '\n' {
                    out.push('\n');
                    break;
                }
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut prev = ' ';
            for d in chars.by_ref() {
                if prev == '*' && d == '/' {
                    break;
                }
                prev = d;
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The argument text of the call starting at `text` (after its `(`).
fn call_args(text: &str) -> &str {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' if depth == 0 => return &text[..i],
            ')' | '}' => depth -= 1,
            _ => {}
        }
    }
    text
}

fn quoted(text: &str) -> Option<String> {
    let start = text.find('"')? + 1;
    let end = text[start..].find('"')? + start;
    Some(text[start..end].to_string())
}

fn parse_body(op_type: &str, body: &str) -> OpDefDesc {
    let mut desc = OpDefDesc {
        op_type: op_type.to_string(),
        error: None,
        tiling: body.contains("SetTiling"),
        inputs: Vec::new(),
        outputs: Vec::new(),
        attrs: Vec::new(),
        configs: Vec::new(),
    };
    // Each statement `this->Input(...)...;` / `Output` / `Attr`.
    for statement in body.split(';') {
        let s = statement.trim();
        let kind = ["Input(", "Output(", "Attr("]
            .into_iter()
            .find(|k| s.contains(&format!("->{k}")) || s.starts_with(k));
        let Some(kind) = kind else {
            continue;
        };
        let Some(at) = s.find(kind) else {
            continue;
        };
        let Some(name) = quoted(call_args(&s[at + kind.len()..])) else {
            continue;
        };
        let chain = &s[at..];
        let call = |method: &str| -> Option<&str> {
            chain
                .find(&format!(".{method}("))
                .map(|i| call_args(&chain[i + method.len() + 2..]))
        };
        if kind == "Attr(" {
            let types = [
                "Int",
                "Float",
                "Bool",
                "String",
                "ListInt",
                "ListFloat",
                "ListBool",
            ];
            let (ty, value) = types
                .iter()
                .rev()
                .find_map(|t| call(t).map(|v| (*t, v.trim())))
                .unwrap_or(("None", ""));
            let required = call("AttrType").is_some_and(|v| v.contains("REQUIRED"));
            let default = if value.is_empty() {
                None
            } else {
                match ty {
                    "Int" => value
                        .trim_end_matches(['l', 'L', 'u', 'U'])
                        .parse::<i64>()
                        .ok()
                        .map(Value::from),
                    "Float" => value
                        .trim_end_matches(['f', 'F'])
                        .parse::<f64>()
                        .ok()
                        .map(Value::from),
                    "Bool" => Some(Value::from(value == "true")),
                    "String" => quoted(value).map(Value::from),
                    _ => {
                        let items: Vec<Value> = value
                            .trim_matches(['{', '}'])
                            .split(',')
                            .filter(|x| !x.trim().is_empty())
                            .filter_map(|x| {
                                let x = x.trim().trim_end_matches(['f', 'F']);
                                x.parse::<i64>()
                                    .map(Value::from)
                                    .ok()
                                    .or_else(|| x.parse::<f64>().ok().map(Value::from))
                                    .or_else(|| {
                                        (x == "true" || x == "false")
                                            .then(|| Value::from(x == "true"))
                                    })
                            })
                            .collect();
                        Some(Value::Array(items))
                    }
                }
            };
            desc.attrs.push(AttrDesc {
                name,
                ty: ty.to_string(),
                required: required && default.is_none(),
                default,
            });
            continue;
        }
        let ge_list = |args: Option<&str>, prefix: &str| -> Vec<String> {
            args.map(|a| {
                a.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| w.starts_with(prefix))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
        };
        let list = call("DataTypeList");
        let param = ParamDesc {
            name,
            param_type: match call("ParamType") {
                Some(p) if p.contains("DYNAMIC") => ParamType::Dynamic,
                Some(p) if p.contains("OPTIONAL") => ParamType::Optional,
                _ => ParamType::Required,
            },
            dtypes: ge_list(list.or(call("DataType")), "DT_"),
            dtype_list: list.is_some(),
            formats: ge_list(call("Format").or(call("FormatList")), "FORMAT_"),
            bin_query: Vec::new(),
            value_depend: match call("ValueDepend") {
                Some(v) if v.contains("OPTIONAL") => "optional".into(),
                Some(_) => "required".into(),
                None => "ignore".into(),
            },
            scalar: None,
            follow: None,
            error: None,
        };
        if kind == "Input(" {
            desc.inputs.push(param);
        } else {
            desc.outputs.push(param);
        }
    }
    desc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_msopgen_description_gives_params_and_typed_attr_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LeakyCustom.json");
        std::fs::write(
            &path,
            r#"[{"op": "LeakyCustom",
                 "input_desc": [{"name": "x", "param_type": "dynamic", "format": ["ND", "ND"], "type": ["float16", "float"]}],
                 "output_desc": [{"name": "y", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "float"]}],
                 "attr": [{"name": "slope", "param_type": "optional", "type": "float", "default_value": "0.5"}]}]"#,
        )
        .unwrap();
        let ops = from_msopgen_json(&path).unwrap();
        let op = &ops[0];
        assert_eq!(op.op_type, "LeakyCustom");
        assert_eq!(op.inputs[0].param_type, ParamType::Dynamic);
        assert_eq!(op.inputs[0].dtypes, ["DT_FLOAT16", "DT_FLOAT"]);
        assert_eq!(op.inputs[0].formats, ["FORMAT_ND", "FORMAT_ND"]);
        assert_eq!(op.attrs[0].ty, "Float");
        assert_eq!(op.attrs[0].default, Some(Value::from(0.5)));
        std::fs::write(&path, r#"[{"case_name": "t", "op": "X", "calc": 1}]"#).unwrap();
        assert!(from_msopgen_json(&path).is_err());
    }

    #[test]
    fn the_opdef_text_is_read_when_nothing_compiles() {
        let text = r#"
namespace ops {
class ScaleCustom : public OpDef {
public:
    explicit ScaleCustom(const char* name) : OpDef(name)
    {
        // this->Input("ghost").DataType({ge::DT_INT8});
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("shape").ParamType(OPTIONAL).ValueDepend(OPTIONAL).DataTypeList({ge::DT_INT64});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT});
        this->Attr("scale").AttrType(OPTIONAL).Float(2.5f);
        this->Attr("axes").AttrType(OPTIONAL).ListInt({0, -1});
        this->Attr("mode").AttrType(REQUIRED).String();
        this->AICore().SetTiling(optiling::TilingFunc);
    }
};
OP_ADD(ScaleCustom);
}
"#;
        let ops = from_source_text(text);
        assert_eq!(ops.len(), 1);
        let op = &ops[0];
        assert_eq!(op.op_type, "ScaleCustom");
        let names: Vec<&str> = op.inputs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["x", "shape"]);
        assert_eq!(op.inputs[0].dtypes, ["DT_FLOAT16", "DT_FLOAT"]);
        assert_eq!(op.inputs[1].param_type, ParamType::Optional);
        assert!(op.inputs[1].dtype_list && op.inputs[1].value_depend());
        assert_eq!(op.outputs[0].dtypes, ["DT_FLOAT16", "DT_FLOAT"]);
        assert_eq!(op.attrs[0].default, Some(Value::from(2.5)));
        assert_eq!(op.attrs[1].default, Some(serde_json::json!([0, -1])));
        assert!(op.attrs[2].required && op.attrs[2].default.is_none());
        assert!(op.tiling);
    }
}
