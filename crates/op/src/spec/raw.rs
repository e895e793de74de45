//! The op.toml document exactly as written: serde structs that reject unknown
//! keys. Polymorphic values (attr values, specials) stay `toml::Value` here
//! and are checked in [`super`] so that their errors carry a key path.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpec {
    pub(crate) op: RawOp,
    #[serde(default)]
    pub(crate) inputs: Vec<RawTensor>,
    #[serde(default)]
    pub(crate) outputs: Vec<RawTensor>,
    #[serde(default)]
    pub(crate) attrs: Vec<RawAttr>,
    #[serde(default)]
    pub(crate) cases: Vec<RawCase>,
    #[serde(default)]
    pub(crate) tolerance: BTreeMap<String, RawTolerance>,
    pub(crate) golden: Option<RawGolden>,
    pub(crate) tiling: Option<RawTiling>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOp {
    pub(crate) name: String,
    pub(crate) level: i64,
    pub(crate) op_type: String,
    pub(crate) kernel: Option<String>,
    #[serde(default)]
    pub(crate) description: String,
    pub(crate) host_sources: Option<Vec<String>>,
    pub(crate) kernel_sources: Option<Vec<String>>,
    pub(crate) tiling_header: Option<String>,
    pub(crate) chip: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTensor {
    pub(crate) name: String,
    pub(crate) dtypes: Option<Vec<String>>,
    pub(crate) dtype: Option<RawDtypeRule>,
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) optional: bool,
    #[serde(default)]
    pub(crate) value_depend: bool,
    pub(crate) inplace: Option<String>,
    pub(crate) argument: Option<bool>,
    pub(crate) check: Option<bool>,
    pub(crate) length_of: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDtypeRule {
    pub(crate) same_as: Option<String>,
    pub(crate) real_of: Option<String>,
    pub(crate) fixed: Option<String>,
    pub(crate) from_attr: Option<String>,
    /// With `table`: the input whose dtype the table maps.
    pub(crate) by: Option<String>,
    /// With `by`: input dtype name -> output dtype name.
    pub(crate) table: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAttr {
    pub(crate) name: String,
    #[serde(rename = "type")]
    pub(crate) ty: String,
    pub(crate) default: Option<toml::Value>,
    #[serde(default)]
    pub(crate) required: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCase {
    pub(crate) name: String,
    pub(crate) shapes: Vec<toml::Value>,
    #[serde(default)]
    pub(crate) omit: Vec<String>,
    pub(crate) dtype: Option<String>,
    #[serde(default)]
    pub(crate) dtypes: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) attrs: BTreeMap<String, toml::Value>,
    pub(crate) tolerance: Option<RawTolerance>,
    #[serde(default)]
    pub(crate) inputs: BTreeMap<String, RawDist>,
    pub(crate) specials: Option<toml::Value>,
    /// Output name -> expected-output file (`"out.bin"` or `{ path, shape }`).
    #[serde(default)]
    pub(crate) expected: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTolerance {
    pub(crate) atol: f64,
    pub(crate) rtol: f64,
    #[serde(default)]
    pub(crate) max_mismatch_ratio: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDist {
    pub(crate) kind: Option<String>,
    pub(crate) low: Option<f64>,
    pub(crate) high: Option<f64>,
    pub(crate) mean: Option<f64>,
    pub(crate) scale: Option<f64>,
    pub(crate) sign: Option<String>,
    pub(crate) specials: Option<toml::Value>,
    /// kind = "file": the input's values, relative to the package.
    pub(crate) path: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGolden {
    pub(crate) builtin: Option<String>,
    pub(crate) script: Option<String>,
    /// Every case's expected outputs come from files (`[[cases]] expected`).
    pub(crate) files: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTiling {
    #[serde(default)]
    pub(crate) constraints: Vec<String>,
}
