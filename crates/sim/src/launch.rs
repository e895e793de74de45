//! One launch of an operator, in the current process: call the host tiling
//! function, allocate GM (inputs, poisoned outputs, workspace, tiling data),
//! run the kernel on every block against the runtime, and collect outputs,
//! trace and findings.
//!
//! Only the worker process (`ascendopt-worker`) and tests of trusted kernels
//! call [`run`]; everything else goes through [`crate::worker`].

use crate::trace::{SrcLoc, Trace};
use ascendopt_op::Dtype;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A tensor handed to or returned by a launch: raw little-endian bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobTensor {
    /// Element type.
    pub dtype: Dtype,
    /// Shape (row-major).
    pub shape: Vec<i64>,
    /// Contents, `shape.product() * dtype.size()` bytes.
    pub data: Vec<u8>,
}

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

/// Everything a launch needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchJob {
    /// Compiled host library (tiling).
    pub host_lib: PathBuf,
    /// Compiled kernel library.
    pub kernel_lib: PathBuf,
    /// Kernel entry symbol (`add_custom`).
    pub kernel_name: String,
    /// OpDef class name to take the tiling function from; None = the only one.
    pub op_type: Option<String>,
    /// Inputs, in kernel argument order.
    pub inputs: Vec<JobTensor>,
    /// Outputs, in kernel argument order, with their initial (poisoned)
    /// contents.
    pub outputs: Vec<JobTensor>,
    /// Attributes for the tiling function.
    pub attrs: Vec<JobAttr>,
    /// The platform.
    pub platform: Platform,
    /// Seed for the garbage that fills on-chip memory and the workspace.
    pub seed: u64,
    /// Stop the kernel after this many instructions in one block.
    pub max_instrs_per_block: u64,
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
}

/// A problem found that did not stop the run (race, leftover flag, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Short class (`race`, `flag-leak`, ...).
    pub kind: String,
    /// The message, naming the API calls and source lines involved.
    pub message: String,
}

/// A finished launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchOutput {
    /// Tiling decisions.
    pub tiling: TilingInfo,
    /// Output contents after the kernel, in argument order.
    pub outputs: Vec<Vec<u8>>,
    /// The instruction trace.
    pub trace: Trace,
    /// Non-fatal findings of the runtime.
    pub findings: Vec<Finding>,
    /// Text the kernel printed with `printf`/`PRINTF`.
    pub printed: String,
}

/// Why a launch failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum LaunchFailure {
    /// The host library could not be loaded or lacks the entry points.
    #[error("cannot load {what}: {message}")]
    Load {
        /// Which library.
        what: String,
        /// The loader's message.
        message: String,
    },
    /// The tiling function failed or returned something unusable.
    #[error("tiling failed: {message}")]
    Tiling {
        /// What went wrong.
        message: String,
    },
    /// The kernel committed a fault (UB overflow, GM out of bounds, ...).
    #[error("block {block}: {message}{}", .loc.as_ref().map(|l| format!(" ({l})")).unwrap_or_default())]
    Fault {
        /// The block that faulted.
        block: u32,
        /// The fault.
        message: String,
        /// The API call where it happened.
        loc: Option<SrcLoc>,
    },
}

/// Runs one launch in this process.
pub fn run(job: &LaunchJob) -> Result<LaunchOutput, LaunchFailure> {
    let _ = job;
    Err(LaunchFailure::Load {
        what: "launch".into(),
        message: "not implemented yet".into(),
    })
}
