//! An operator's interface as its OpDef declares it: inputs and outputs
//! with their parameter types (required, optional, dynamic = tensor list),
//! dtype and format lists, attributes with types and defaults, per-SoC
//! configurations; and the dtype combinations CANN's msopgen build
//! compiles a kernel for.
//!
//! The description is the JSON the simulator's host library writes
//! (`ascendopt_host_describe`, from the OpDef the user's constructor
//! built) or that [`crate::import`] reads from an msopgen project (its op
//! description JSON, or the OpDef source text): this module only holds the
//! data and its rules, never runs anything.
//!
//! The combination rule (guide 6.4.3.4.3 DataType and 6.4.3.4.5
//! DataTypeList): the `DataType()` lists of a prototype are columns, entry
//! k of every list together making one supported combination; a parameter
//! declared with `DataTypeList()` pairs each of its dtypes with every
//! column. `DataTypeForBinQuery()` (6.4.3.4.4) names, per column, the
//! dtype whose kernel binary serves it.

use crate::Dtype;
use serde::{Deserialize, Serialize};

/// Every OpDef a host library registers.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Described {
    /// In registration order (the library's static initialisers').
    pub ops: Vec<OpDefDesc>,
}

/// How a parameter is passed (`ParamType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamType {
    /// One tensor, always given.
    Required,
    /// One tensor, possibly absent.
    Optional,
    /// A list of tensors (a tensor list; `DYNAMIC`).
    Dynamic,
    /// Not a real parameter (never on the device).
    Virtual,
    /// Not declared.
    Ignore,
}

/// One input or output of the prototype.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct ParamDesc {
    /// `Input("x")`.
    pub name: String,
    /// `ParamType(...)`.
    pub param_type: ParamType,
    /// GE dtype names (`DT_FLOAT16`), one per column, or the list of a
    /// `DataTypeList()`.
    pub dtypes: Vec<String>,
    /// Declared with `DataTypeList()`: each dtype goes with every column.
    #[serde(default)]
    pub dtype_list: bool,
    /// GE format names (`FORMAT_ND`).
    #[serde(default)]
    pub formats: Vec<String>,
    /// `DataTypeForBinQuery()`, one per column (empty: none).
    #[serde(default)]
    pub bin_query: Vec<String>,
    /// `ValueDepend(...)`: `ignore`, `required` or `optional`.
    #[serde(default = "ignore")]
    pub value_depend: String,
    /// `Scalar()` / `ScalarList()`: `scalar` or `scalar_list`.
    #[serde(default)]
    pub scalar: Option<String>,
    /// `Follow("x")`.
    #[serde(default)]
    pub follow: Option<String>,
    /// A misuse the builder recorded.
    #[serde(default)]
    pub error: Option<String>,
}

fn ignore() -> String {
    "ignore".into()
}

impl ParamDesc {
    /// The tiling reads this input's values.
    pub fn value_depend(&self) -> bool {
        self.value_depend != "ignore"
    }
}

/// One attribute of the prototype.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct AttrDesc {
    /// `Attr("name")`.
    pub name: String,
    /// `Int`, `Float`, `Bool`, `String`, `ListInt`, `ListFloat`,
    /// `ListBool`, or `None` when no type was set.
    #[serde(rename = "type")]
    pub ty: String,
    /// `AttrType(REQUIRED)`.
    #[serde(default)]
    pub required: bool,
    /// The default value, when the OpDef gives one.
    #[serde(default)]
    pub default: Option<serde_json::Value>,
}

/// An `AddConfig(soc[, config])`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct ConfigDesc {
    /// The SoC (`ascend910b`).
    pub soc: String,
    /// The inputs the configuration redefines for this SoC (None: the
    /// top-level ones).
    #[serde(default)]
    pub inputs: Option<Vec<ParamDesc>>,
    /// Likewise the outputs.
    #[serde(default)]
    pub outputs: Option<Vec<ParamDesc>>,
}

/// One OpDef.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct OpDefDesc {
    /// The class name (`AddCustom`).
    pub op_type: String,
    /// Building it failed, or the builder recorded a misuse.
    #[serde(default)]
    pub error: Option<String>,
    /// It sets a tiling function (`AICore().SetTiling`).
    #[serde(default)]
    pub tiling: bool,
    /// Inputs in declaration order (the kernel's argument order).
    #[serde(default)]
    pub inputs: Vec<ParamDesc>,
    /// Outputs in declaration order.
    #[serde(default)]
    pub outputs: Vec<ParamDesc>,
    /// Attributes in declaration order.
    #[serde(default)]
    pub attrs: Vec<AttrDesc>,
    /// `AddConfig` calls.
    #[serde(default)]
    pub configs: Vec<ConfigDesc>,
}

/// One dtype combination of the kernel's parameters (inputs, then
/// outputs), as the msopgen build compiles a kernel for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combination {
    /// Parameter names, inputs then outputs.
    pub names: Vec<String>,
    /// The dtypes a launch of this combination has (GE names).
    pub dtypes: Vec<String>,
    /// The dtypes whose binary serves it (`DataTypeForBinQuery`; equal to
    /// `dtypes` without it).
    pub bin_dtypes: Vec<String>,
    /// The formats (GE names).
    pub formats: Vec<String>,
}

impl Combination {
    /// The launch dtypes as [`Dtype`]s; None when one has no [`Dtype`]
    /// (`DT_INT4`, `DT_STRING`, ...).
    pub fn launch_dtypes(&self) -> Option<Vec<Dtype>> {
        self.dtypes.iter().map(|d| dtype_of_ge(d)).collect()
    }

    /// The binary's dtypes as [`Dtype`]s (see [`Combination::launch_dtypes`]).
    pub fn bin_dtype_values(&self) -> Option<Vec<Dtype>> {
        self.bin_dtypes.iter().map(|d| dtype_of_ge(d)).collect()
    }
}

/// The [`Dtype`] of a GE dtype name (`DT_FLOAT16`, also `ge::DT_FLOAT16`).
pub fn dtype_of_ge(name: &str) -> Option<Dtype> {
    let name = name.strip_prefix("ge::").unwrap_or(name);
    Some(match name {
        "DT_FLOAT16" => Dtype::Float16,
        "DT_BF16" => Dtype::Bfloat16,
        "DT_FLOAT" => Dtype::Float32,
        "DT_DOUBLE" => Dtype::Float64,
        "DT_INT8" => Dtype::Int8,
        "DT_UINT8" => Dtype::Uint8,
        "DT_INT16" => Dtype::Int16,
        "DT_UINT16" => Dtype::Uint16,
        "DT_INT32" => Dtype::Int32,
        "DT_UINT32" => Dtype::Uint32,
        "DT_INT64" => Dtype::Int64,
        "DT_UINT64" => Dtype::Uint64,
        "DT_BOOL" => Dtype::Bool,
        "DT_COMPLEX64" => Dtype::Complex64,
        _ => return None,
    })
}

/// The GE dtype name of a [`Dtype`].
pub fn ge_name(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Float16 => "DT_FLOAT16",
        Dtype::Bfloat16 => "DT_BF16",
        Dtype::Float32 => "DT_FLOAT",
        Dtype::Float64 => "DT_DOUBLE",
        Dtype::Int8 => "DT_INT8",
        Dtype::Uint8 => "DT_UINT8",
        Dtype::Int16 => "DT_INT16",
        Dtype::Uint16 => "DT_UINT16",
        Dtype::Int32 => "DT_INT32",
        Dtype::Uint32 => "DT_UINT32",
        Dtype::Int64 => "DT_INT64",
        Dtype::Uint64 => "DT_UINT64",
        Dtype::Bool => "DT_BOOL",
        Dtype::Complex64 => "DT_COMPLEX64",
    }
}

/// An OpDef whose `DataType()` lists differ in length, so that they give
/// no dtype combinations (the CANN build rejects such a prototype too).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "OpDef {op_type}: `{param}` lists {count} dtype(s) where `{first_param}` lists {first}; \
     DataType() lists must have one entry per supported combination"
)]
pub struct MisalignedDtypes {
    /// The OpDef's op type.
    pub op_type: String,
    /// The parameter whose list differs.
    pub param: String,
    /// Its length.
    pub count: usize,
    /// The first parameter with a `DataType()` list.
    pub first_param: String,
    /// Its length.
    pub first: usize,
}

/// Why the OpDefs a host library registers give no usable description.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpDefError {
    /// The JSON of `ascendopt_host_describe` does not parse.
    #[error("bad OpDef description: {0}")]
    BadJson(#[from] serde_json::Error),
    /// No OpDef of the asked type is registered.
    #[error("no OpDef {wanted} is registered (registered: {})", .registered.join(", "))]
    NotRegistered {
        /// The op type asked for.
        wanted: String,
        /// The op types the host code registers.
        registered: Vec<String>,
    },
    /// The host code registers no OpDef at all.
    #[error("the host code registers no OpDef (no OP_ADD)")]
    NoneRegistered,
    /// The OpDef's own constructor reported an error.
    #[error("OpDef {op_type}: {message}")]
    Broken {
        /// The OpDef's op type.
        op_type: String,
        /// What the host code reported.
        message: String,
    },
    /// Several OpDefs are registered and none was named.
    #[error("the host code registers {} OpDefs ({}); name one", .registered.len(), .registered.join(", "))]
    Ambiguous {
        /// The op types the host code registers.
        registered: Vec<String>,
    },
}

impl Described {
    /// Parses the JSON of `ascendopt_host_describe`.
    pub fn from_json(text: &str) -> Result<Described, OpDefError> {
        Ok(serde_json::from_str(text)?)
    }

    /// The OpDef named `op_type`, or the only one when `op_type` is None.
    pub fn op(&self, op_type: Option<&str>) -> Result<&OpDefDesc, OpDefError> {
        let names = || self.ops.iter().map(|o| o.op_type.clone()).collect();
        match op_type {
            Some(t) => {
                self.ops
                    .iter()
                    .find(|o| o.op_type == t)
                    .ok_or_else(|| OpDefError::NotRegistered {
                        wanted: t.to_string(),
                        registered: names(),
                    })
            }
            None => match self.ops.as_slice() {
                [one] => Ok(one),
                [] => Err(OpDefError::NoneRegistered),
                _ => Err(OpDefError::Ambiguous {
                    registered: names(),
                }),
            },
        }
    }
}

impl OpDefDesc {
    /// The inputs and outputs in force on `soc` (`Ascend910B2`): those of
    /// an `AddConfig` whose SoC name it starts with (case-insensitive) and
    /// that redefines them, else the top-level ones.
    pub fn params_for(&self, soc: &str) -> (&[ParamDesc], &[ParamDesc]) {
        let soc = soc.to_ascii_lowercase();
        let config = self
            .configs
            .iter()
            .filter(|c| !c.soc.is_empty() && soc.starts_with(&c.soc.to_ascii_lowercase()))
            .max_by_key(|c| c.soc.len());
        let inputs = config
            .and_then(|c| c.inputs.as_deref())
            .filter(|p| !p.is_empty())
            .unwrap_or(&self.inputs);
        let outputs = config
            .and_then(|c| c.outputs.as_deref())
            .filter(|p| !p.is_empty())
            .unwrap_or(&self.outputs);
        (inputs, outputs)
    }

    /// The SoCs the OpDef registers (`AddConfig`) when none of them is
    /// `soc` (matched as [`OpDefDesc::params_for`] does): the operator was
    /// written for other chips. None when it registers `soc` or none.
    pub fn written_for_other_socs(&self, soc: &str) -> Option<Vec<&str>> {
        let lower = soc.to_ascii_lowercase();
        let socs: Vec<&str> = self
            .configs
            .iter()
            .map(|c| c.soc.as_str())
            .filter(|s| !s.is_empty())
            .collect();
        let registers = socs
            .iter()
            .any(|s| lower.starts_with(&s.to_ascii_lowercase()));
        (!socs.is_empty() && !registers).then_some(socs)
    }

    /// Every dtype combination the build compiles a kernel for on `soc`,
    /// in column order, each once. Err when the lists do not line up (the
    /// CANN build rejects such a prototype too).
    pub fn combinations(&self, soc: &str) -> Result<Vec<Combination>, MisalignedDtypes> {
        let (inputs, outputs) = self.params_for(soc);
        let params: Vec<&ParamDesc> = inputs.iter().chain(outputs).collect();
        if params.is_empty() {
            return Ok(Vec::new());
        }
        let columns: Vec<usize> = params
            .iter()
            .filter(|p| !p.dtype_list)
            .map(|p| p.dtypes.len())
            .collect();
        let n = match columns.first() {
            None => 1,
            Some(&first) => {
                if let Some(bad) = params
                    .iter()
                    .filter(|p| !p.dtype_list)
                    .find(|p| p.dtypes.len() != first)
                {
                    return Err(MisalignedDtypes {
                        op_type: self.op_type.clone(),
                        param: bad.name.clone(),
                        count: bad.dtypes.len(),
                        first_param: params
                            .iter()
                            .find(|p| !p.dtype_list)
                            .map_or_else(String::new, |p| p.name.clone()),
                        first,
                    });
                }
                first
            }
        };
        // Each column, then each DataTypeList entry of each list parameter.
        let mut partial: Vec<Vec<(String, String, String)>> = Vec::new();
        for k in 0..n {
            let mut rows: Vec<Vec<(String, String, String)>> = vec![Vec::new()];
            for p in &params {
                let format = p
                    .formats
                    .get(k)
                    .or_else(|| p.formats.first())
                    .cloned()
                    .unwrap_or_else(|| "FORMAT_ND".into());
                if p.dtype_list {
                    let mut grown = Vec::new();
                    for row in &rows {
                        for d in &p.dtypes {
                            let mut r = row.clone();
                            r.push((d.clone(), d.clone(), format.clone()));
                            grown.push(r);
                        }
                    }
                    rows = grown;
                } else {
                    let d = p.dtypes.get(k).cloned().unwrap_or_default();
                    let bin = if p.bin_query.len() == p.dtypes.len() {
                        p.bin_query.get(k).cloned().unwrap_or_else(|| d.clone())
                    } else {
                        d.clone()
                    };
                    for row in &mut rows {
                        row.push((d.clone(), bin.clone(), format.clone()));
                    }
                }
            }
            partial.extend(rows);
        }
        let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
        let mut out: Vec<Combination> = Vec::new();
        for row in partial {
            let combo = Combination {
                names: names.clone(),
                dtypes: row.iter().map(|r| r.0.clone()).collect(),
                bin_dtypes: row.iter().map(|r| r.1.clone()).collect(),
                formats: row.iter().map(|r| r.2.clone()).collect(),
            };
            if !out.iter().any(|c| c.dtypes == combo.dtypes) {
                out.push(combo);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, dtypes: &[&str], list: bool) -> ParamDesc {
        ParamDesc {
            name: name.into(),
            param_type: ParamType::Required,
            dtypes: dtypes.iter().map(|d| d.to_string()).collect(),
            dtype_list: list,
            formats: vec!["FORMAT_ND".into()],
            bin_query: Vec::new(),
            value_depend: "ignore".into(),
            scalar: None,
            follow: None,
            error: None,
        }
    }

    fn op(inputs: Vec<ParamDesc>, outputs: Vec<ParamDesc>) -> OpDefDesc {
        OpDefDesc {
            op_type: "Probe".into(),
            error: None,
            tiling: true,
            inputs,
            outputs,
            attrs: Vec::new(),
            configs: Vec::new(),
        }
    }

    #[test]
    fn columns_make_the_combinations_and_a_datatypelist_pairs_with_each() {
        let d = op(
            vec![
                param("x", &["DT_FLOAT16", "DT_FLOAT", "DT_FLOAT16"], false),
                param("idx", &["DT_INT32", "DT_INT64"], true),
            ],
            vec![param("y", &["DT_FLOAT16", "DT_FLOAT", "DT_FLOAT16"], false)],
        );
        let combos = d.combinations("Ascend910B2").unwrap();
        let dtypes: Vec<Vec<&str>> = combos
            .iter()
            .map(|c| c.dtypes.iter().map(String::as_str).collect())
            .collect();
        // The third column repeats the first and is dropped.
        assert_eq!(
            dtypes,
            [
                ["DT_FLOAT16", "DT_INT32", "DT_FLOAT16"],
                ["DT_FLOAT16", "DT_INT64", "DT_FLOAT16"],
                ["DT_FLOAT", "DT_INT32", "DT_FLOAT"],
                ["DT_FLOAT", "DT_INT64", "DT_FLOAT"],
            ]
        );
        assert_eq!(combos[0].names, ["x", "idx", "y"]);
        assert_eq!(
            combos[2].launch_dtypes().unwrap(),
            [Dtype::Float32, Dtype::Int32, Dtype::Float32]
        );
    }

    #[test]
    fn lists_of_different_lengths_are_an_error_naming_both() {
        let d = op(
            vec![param("x", &["DT_FLOAT16", "DT_FLOAT"], false)],
            vec![param("y", &["DT_FLOAT16"], false)],
        );
        let e = d.combinations("Ascend910B2").unwrap_err().to_string();
        assert!(
            e.contains("`y` lists 1") && e.contains("`x` lists 2"),
            "{e}"
        );
    }

    #[test]
    fn a_config_for_the_soc_replaces_the_params_and_binquery_maps_binaries() {
        let mut x = param("x", &["DT_FLOAT16", "DT_INT16"], false);
        x.bin_query = vec!["DT_FLOAT16".into(), "DT_FLOAT16".into()];
        let mut d = op(vec![param("x", &["DT_FLOAT"], false)], Vec::new());
        d.configs.push(ConfigDesc {
            soc: "ascend910".into(),
            inputs: None,
            outputs: None,
        });
        d.configs.push(ConfigDesc {
            soc: "ascend910b".into(),
            inputs: Some(vec![x]),
            outputs: None,
        });
        let combos = d.combinations("Ascend910B2").unwrap();
        assert_eq!(combos.len(), 2);
        assert_eq!(combos[1].dtypes, ["DT_INT16"]);
        assert_eq!(combos[1].bin_dtypes, ["DT_FLOAT16"]);
        // Another SoC keeps the top-level definition.
        let other = d.combinations("Ascend310P3").unwrap();
        assert_eq!(other[0].dtypes, ["DT_FLOAT"]);
        // Written for 910B: no note on a 910B2; a 310B-only OpDef gets one.
        assert_eq!(d.written_for_other_socs("Ascend910B2"), None);
        let mut b = op(Vec::new(), Vec::new());
        assert_eq!(b.written_for_other_socs("Ascend910B2"), None);
        b.configs.push(ConfigDesc {
            soc: "ascend310b".into(),
            inputs: None,
            outputs: None,
        });
        assert_eq!(
            b.written_for_other_socs("Ascend910B2"),
            Some(vec!["ascend310b"])
        );
    }

    #[test]
    fn the_host_json_parses() {
        let text = r#"{"ops":[{"op_type":"AddCustom","error":null,"tiling":true,
          "inputs":[{"name":"x","param_type":"dynamic","dtypes":["DT_FLOAT16","DT_4"],"dtype_list":false,
                     "formats":["FORMAT_ND"],"bin_query":[],"value_depend":"ignore","scalar":null,"follow":null,"error":null}],
          "outputs":[],"attrs":[{"name":"alpha","type":"Float","required":false,"default":1.5}],
          "configs":[{"soc":"ascend910b"}]}]}"#;
        let d = Described::from_json(text).unwrap();
        let op = d.op(None).unwrap();
        assert_eq!(op.inputs[0].param_type, ParamType::Dynamic);
        assert_eq!(op.attrs[0].default, Some(serde_json::json!(1.5)));
        let combos = op.combinations("Ascend910B2").unwrap();
        assert_eq!(combos[1].launch_dtypes(), None);
        assert!(d
            .op(Some("Other"))
            .unwrap_err()
            .to_string()
            .contains("AddCustom"));
    }
}
