//! What a launch is told and what it tells back, device-neutral: the
//! attributes of the tiling, the platform facts the tiling reads, the
//! tiling decisions, and the findings of a run with their source location.

use serde::{Deserialize, Serialize};

/// An attribute value for the tiling function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AttrValue {
    /// Integer.
    Int(i64),
    /// Floating point.
    Float(f64),
    /// Boolean.
    Bool(bool),
    /// String.
    Str(String),
    /// List of integers.
    ListInt(Vec<i64>),
    /// List of floats.
    ListFloat(Vec<f64>),
}

/// A named attribute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobAttr {
    /// Name as in OpDef `Attr("name")`.
    pub name: String,
    /// Value.
    pub value: AttrValue,
}

/// What `platform_ascendc::PlatformAscendC` reports, and the per-core
/// memory sizes the runtime enforces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Platform {
    /// SoC name, e.g. "Ascend910B2".
    pub soc_version: String,
    /// Vector cores.
    pub core_num_aiv: u32,
    /// Cube cores.
    pub core_num_aic: u32,
    /// UB bytes per vector core.
    pub ub_size: u64,
    /// L1 bytes per cube core.
    pub l1_size: u64,
    /// L0A bytes.
    pub l0a_size: u64,
    /// L0B bytes.
    pub l0b_size: u64,
    /// L0C bytes.
    pub l0c_size: u64,
    /// L2 bytes.
    pub l2_size: u64,
    /// HBM bytes.
    pub hbm_size: u64,
}

/// What the tiling function decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TilingInfo {
    /// SetBlockDim.
    pub block_dim: u32,
    /// SetTilingKey.
    pub tiling_key: u64,
    /// The raw tiling data.
    pub data: Vec<u8>,
    /// GetWorkspaceSizes, summed.
    pub workspace: u64,
    /// The initial values of outputs that declare one
    /// (`OpParamDef::InitValue`, guide 6.4.3.4.17), filled in before the
    /// kernel runs.
    #[serde(default)]
    pub output_init: Vec<OutputInit>,
}

/// An output's initial value: `pattern` (one element, little-endian)
/// repeated over the whole output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputInit {
    /// Index into the outputs the tiling function saw (the OpDef's
    /// outputs as the launch instantiates them).
    pub output: u32,
    /// One element's bytes.
    pub pattern: Vec<u8>,
}

/// A problem found that did not stop the run (race, leftover flag, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Short class (`race`, `flag-leak`, ...).
    pub kind: String,
    /// The message, naming the API calls and source lines involved.
    pub message: String,
    /// Where in the kernel it happened (of a race, the second access),
    /// when the device can tell.
    #[serde(default)]
    pub loc: Option<SrcLoc>,
}

/// A place in the kernel's sources: the API called and its file and line,
/// as the compiler named them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SrcLoc {
    /// File as the compiler saw it (may be empty when unknown).
    pub file: String,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// The API called (`DataCopy`, `Add`, `EnQue`, ...).
    pub api: String,
}

impl std::fmt::Display for SrcLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.file.is_empty() {
            write!(f, "{} (unknown location)", self.api)
        } else {
            write!(f, "{} at {}:{}", self.api, self.file, self.line)
        }
    }
}
