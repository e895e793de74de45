//! One launch of an operator, in the current process: call the host tiling
//! function, allocate GM (inputs, poisoned outputs, workspace, tiling data),
//! run the kernel on every block against the runtime, and collect outputs,
//! trace and findings.
//!
//! Only the worker process (`ascendopt-worker`) and tests of trusted kernels
//! call [`run`]; everything else goes through [`crate::worker`].

use crate::abi::AscRuntime;
use crate::runtime::block::{self, Block, Shared};
use crate::runtime::gm::GmSpace;
use crate::runtime::mix;
use crate::runtime::table::TABLE;
use crate::trace::{BlockTrace, SrcLoc, Trace};

pub use ascendopt_device::launch::{AttrValue, Finding, JobAttr, OutputInit, Platform, TilingInfo};
use ascendopt_op::layout::{ArgLayout, ArgSlot};
use ascendopt_op::Dtype;
use libloading::Library;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::Arc;

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
    /// Run-time knob values of a parametrised host library (empty for an
    /// ordinary one): the worker gets them in [`HOST_KNOBS_ENV`].
    #[serde(default)]
    pub knobs: Vec<i64>,
    /// Run the hazard check ([`crate::check::check`]) where the kernel
    /// ran and send back its findings ([`LaunchOutput::hazards`]) instead
    /// of the trace: for launches whose timing nobody needs, whose trace
    /// would only cross the process boundary to be checked.
    #[serde(default)]
    pub check_in_worker: bool,
    /// Run the host tiling alone and return what it decided
    /// ([`LaunchOutput::tiling`]; no kernel runs, no outputs come back):
    /// see [`tiling_only`]. The tensors need shapes, not contents.
    pub tiling_only: bool,
    /// How the tensors become kernel arguments and tiling parameters
    /// (tensor lists, absent optional inputs, in-place outputs,
    /// value-depend inputs); None: each input then each output is one
    /// argument, in order.
    #[serde(default)]
    pub layout: Option<ArgLayout>,
    /// With `tiling_only`: run nothing, describe the OpDefs the host
    /// library registers instead ([`describe_only`],
    /// [`LaunchOutput::description`]).
    #[serde(default)]
    pub describe: bool,
}

/// The environment variable a parametrised host library reads its knob
/// values from (comma-separated, in knob order).
pub const HOST_KNOBS_ENV: &str = "ASCENDOPT_HOST_KNOBS";

/// The value of [`HOST_KNOBS_ENV`] for `knobs`.
pub fn knobs_env_value(knobs: &[i64]) -> String {
    knobs
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
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
    /// The hazard check's findings when it ran in the worker
    /// ([`LaunchJob::check_in_worker`]; the trace is then empty).
    #[serde(default)]
    pub hazards: Option<Vec<Finding>>,
    /// A describe job's answer: the JSON description of the host
    /// library's OpDefs ([`LaunchJob::describe`]).
    #[serde(default)]
    pub description: Option<String>,
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

/// Most blocks one launch may use (each block is a thread of the worker).
pub const MAX_BLOCK_DIM: u32 = 1024;

/// UB bytes the platform keeps from what the tiling sees: 192 KB less
/// 256 B is reported (hardware-facts.md section E: "At runtime the tiling
/// sees UB = 196352 B (192 KB - 256), while the ini says 196608"). A
/// kernel's TPipe may still allocate the whole 192 KB: the guide's own
/// TPipe::Reset example (6.2.3.6.1) takes `InitBuffer(que, 1, 192 * 1024)`,
/// so the kernel-side UB capacity ([`mem_sizes`]) adds these
/// bytes back.
pub const UB_RESERVED_BYTES: u64 = 256;

/// The platform of a hardware profile.
pub fn platform_of(hw: &crate::timing::hw::HwProfile) -> Platform {
    Platform {
        soc_version: hw.soc_version.clone(),
        core_num_aiv: hw.aiv_cores,
        core_num_aic: hw.aic_cores,
        ub_size: hw.ub_bytes.saturating_sub(UB_RESERVED_BYTES),
        l1_size: hw.l1_bytes,
        l0a_size: hw.l0a_bytes,
        l0b_size: hw.l0b_bytes,
        l0c_size: hw.l0c_bytes,
        l2_size: hw.l2_bytes,
        hbm_size: hw.hbm_bytes,
    }
}

/// Per-core memory sizes of `platform` by `trace::Mem` index (GM = 0), as
/// a kernel may use them: the UB is the tiling's `ub_size` plus the
/// [`UB_RESERVED_BYTES`] the platform reports less (the whole 192 KB on the
/// 910B). BT is 1 KB and FB 2+1+2+2 KB (hardware-facts.md section F,
/// "Per-core memory").
pub fn mem_sizes(platform: &Platform) -> [u64; 8] {
    [
        0,
        platform.ub_size + UB_RESERVED_BYTES,
        platform.l1_size,
        platform.l0a_size,
        platform.l0b_size,
        platform.l0c_size,
        1024,
        7 * 1024,
    ]
}

/// Runs one launch in this process: host tiling, then the kernel.
pub fn run(job: &LaunchJob) -> Result<LaunchOutput, LaunchFailure> {
    let data: Vec<&[u8]> = job.inputs.iter().map(|t| t.data.as_slice()).collect();
    let tiling = tiling_for_job(job, &data)?;
    run_kernel(job, &tiling)
}

/// The host tiling of a launch alone, without the kernel: the tiling a
/// launch of `job` would run with. A launch is the kernel library plus this
/// tiling (block dim, tiling key, tiling bytes, workspace), the tensors and
/// the garbage seed; the host library's code is not part of it, so two
/// candidates whose host code differs but whose tilings agree launch the
/// same thing. [`LaunchOutput::outputs`] is empty, the trace too.
pub fn tiling_only(job: &LaunchJob) -> Result<LaunchOutput, LaunchFailure> {
    let data: Vec<&[u8]> = job.inputs.iter().map(|t| t.data.as_slice()).collect();
    let tiling = tiling_for_job(job, &data)?;
    Ok(LaunchOutput {
        tiling,
        outputs: Vec::new(),
        trace: Default::default(),
        findings: Vec::new(),
        printed: String::new(),
        hazards: None,
        description: None,
    })
}

/// The OpDefs of the job's host library, described (no tiling, no
/// kernel): [`LaunchOutput::description`] holds the JSON that
/// `ascendopt_host_describe` writes.
pub fn describe_only(job: &LaunchJob) -> Result<LaunchOutput, LaunchFailure> {
    let description = crate::host::describe(&job.host_lib).map_err(LaunchFailure::from)?;
    Ok(LaunchOutput {
        tiling: TilingInfo {
            block_dim: 0,
            tiling_key: 0,
            data: Vec::new(),
            workspace: 0,
            output_init: Vec::new(),
        },
        outputs: Vec::new(),
        trace: Default::default(),
        findings: Vec::new(),
        printed: String::new(),
        hazards: None,
        description: Some(description),
    })
}

/// Tensor memory the caller provides instead of the job's `data` (the
/// worker's view of the tensor regions it shares with its parent): one
/// region per input, then per output, each [`GM_ALIGN`]-aligned and of the
/// tensor's size. Outputs are poisoned by the caller beforehand.
///
/// [`GM_ALIGN`]: crate::runtime::gm::GM_ALIGN
pub struct TensorMemory<'a> {
    /// Input regions, in argument order.
    pub inputs: Vec<&'a mut [u8]>,
    /// Output regions, in argument order.
    pub outputs: Vec<&'a mut [u8]>,
}

/// Like [`run`], with the kernel working directly on `memory` (the job's
/// tensor `data` is ignored): the outputs are left in `memory.outputs` and
/// the returned [`LaunchOutput::outputs`] is empty.
pub fn run_in_memory(
    job: &LaunchJob,
    memory: TensorMemory<'_>,
) -> Result<LaunchOutput, LaunchFailure> {
    let data: Vec<&[u8]> = memory.inputs.iter().map(|m| &**m).collect();
    let tiling = tiling_for_job(job, &data)?;
    launch(job, &tiling, Some(memory))
}

/// Calls the host library's tiling function for the job's shapes, with
/// the values of the value-depend inputs (`data`: every input's bytes,
/// empty when not at hand).
fn tiling_for_job(job: &LaunchJob, data: &[&[u8]]) -> Result<TilingInfo, LaunchFailure> {
    if !job.knobs.is_empty()
        && std::env::var(HOST_KNOBS_ENV).ok() != Some(knobs_env_value(&job.knobs))
    {
        // The library reads its knobs from the process environment, which
        // only a worker started for this job has.
        return Err(LaunchFailure::Tiling {
            message: format!(
                "a parametrised host library needs {HOST_KNOBS_ENV}={} in the environment of the process that loads it (run it in a worker)",
                knobs_env_value(&job.knobs)
            ),
        });
    }
    let shapes = |ts: &[JobTensor]| ts.iter().map(|t| (t.dtype, t.shape.clone())).collect();
    let layout = job.layout.as_ref();
    let params = |p: Vec<Option<usize>>| -> Result<Vec<usize>, LaunchFailure> {
        p.into_iter()
            .enumerate()
            .map(|(i, p)| {
                p.ok_or_else(|| LaunchFailure::Tiling {
                    message: format!("tensor {i} is in no kernel argument of the layout"),
                })
            })
            .collect()
    };
    let host_outputs = host_outputs(job);
    let (input_params, output_params) = match layout {
        Some(l) => {
            let op = l.output_params(job.outputs.len());
            (
                params(l.input_params(job.inputs.len()))?,
                params(host_outputs.iter().map(|&o| op[o]).collect())?,
            )
        }
        None => (Vec::new(), Vec::new()),
    };
    let input_data = match layout {
        Some(l) if !l.host_values.is_empty() => (0..job.inputs.len())
            .map(|i| {
                let bytes = data.get(i).copied().unwrap_or(&[]);
                let given = l.host_values.contains(&i) && !bytes.is_empty();
                given.then(|| bytes.to_vec())
            })
            .collect(),
        _ => Vec::new(),
    };
    let req = crate::host::TilingRequest {
        op_type: job.op_type.clone(),
        inputs: shapes(&job.inputs),
        outputs: host_outputs
            .iter()
            .map(|&o| (job.outputs[o].dtype, job.outputs[o].shape.clone()))
            .collect(),
        input_params,
        output_params,
        input_data,
        attrs: job.attrs.clone(),
        platform: job.platform.clone(),
        lib_api_workspace: LIB_API_WORKSPACE,
    };
    crate::host::run_tiling(&job.host_lib, &req).map_err(LaunchFailure::from)
}

/// The job's outputs the tiling function sees, in its order: an in-place
/// output without a kernel argument is no OpDef output.
fn host_outputs(job: &LaunchJob) -> Vec<usize> {
    match job.layout.as_ref() {
        Some(l) => {
            let op = l.output_params(job.outputs.len());
            (0..job.outputs.len())
                .filter(|&o| op[o].is_some() || l.in_place_input(o).is_none())
                .collect()
        }
        None => (0..job.outputs.len()).collect(),
    }
}

/// The GM bytes of a tensor list as the kernel receives it (guide 2.10.9.1
/// 如何开发动态输入算子 and 6.2.6.2 ListTensorDesc), little-endian 64-bit
/// words:
///
/// - word 0: the byte offset of the data-pointer table from the start;
/// - per tensor, its description: one word holding the dimension count
///   in its low 32 bits and the tensor's index in its high 32 bits (the
///   guide's `struct TensorDesc { uint32_t dim; uint32_t index; uint64_t
///   shape[dim]; }`), then one word per dimension;
/// - the table: one data address per tensor.
pub fn list_descriptor(tensors: &[(usize, &[i64])]) -> Vec<u8> {
    let desc_words: usize = tensors.iter().map(|(_, shape)| 1 + shape.len()).sum();
    let mut words: Vec<u64> = Vec::with_capacity(1 + desc_words + tensors.len());
    words.push(((1 + desc_words) * 8) as u64);
    for (index, (_, shape)) in tensors.iter().enumerate() {
        words.push(shape.len() as u64 | ((index as u64) << 32));
        words.extend(shape.iter().map(|&d| d as u64));
    }
    words.extend(tensors.iter().map(|&(addr, _)| addr as u64));
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// What `GetLibApiWorkSpaceSize()` reports: 16 MiB. An assumption: the
/// guide documents the call but gives no figure, and no built-in kernel
/// uses the system workspace.
pub const LIB_API_WORKSPACE: u64 = 16 << 20;

type AttachFn = unsafe extern "C" fn(*const AscRuntime);
type CallFn = unsafe extern "C" fn(*const c_void, u32, *mut *mut u8) -> i32;
type ThrowFn = unsafe extern "C-unwind" fn();
type CountersFn = unsafe extern "C" fn() -> *mut crate::abi::AscScalarCounters;
type TypesFn = unsafe extern "C" fn() -> *const mix::RegisteredTypes;
type TplEntryFn = unsafe extern "C" fn(u64, *mut u32) -> *const c_void;

/// Runs the kernel of `job` on every block with the given tiling decisions.
pub fn run_kernel(job: &LaunchJob, tiling: &TilingInfo) -> Result<LaunchOutput, LaunchFailure> {
    launch(job, tiling, None)
}

/// The instance of a tiling-template kernel that `key` selects; None when
/// the library holds no template instances (its entry is no template).
///
/// # Safety
/// `lib` is a kernel library linked with kernel_entry.cpp, whose
/// `ascendopt_kernel_tpl_entry` has the signature of [`TplEntryFn`].
unsafe fn template_instance(
    lib: &Library,
    job: &LaunchJob,
    key: u64,
) -> Result<Option<*const c_void>, LaunchFailure> {
    // SAFETY: as the function's contract states.
    let Ok(lookup) = (unsafe { lib.get::<TplEntryFn>(b"ascendopt_kernel_tpl_entry\0") }) else {
        return Ok(None);
    };
    let mut count = 0u32;
    // SAFETY: reads the library's own table; `count` is a valid u32.
    let entry = unsafe { lookup(key, &mut count) };
    if count == 0 {
        return Ok(None);
    }
    if entry.is_null() {
        return Err(LaunchFailure::Tiling {
            message: format!(
                "tiling key {key} selects no instance of the template kernel `{}`: the key is not one of the {count} combinations its ASCENDC_TPL_SEL selects (set it with GET_TPL_TILING_KEY)",
                job.kernel_name
            ),
        });
    }
    Ok(Some(entry))
}

fn launch(
    job: &LaunchJob,
    tiling: &TilingInfo,
    memory: Option<TensorMemory<'_>>,
) -> Result<LaunchOutput, LaunchFailure> {
    if tiling.block_dim == 0 || tiling.block_dim > MAX_BLOCK_DIM {
        return Err(LaunchFailure::Tiling {
            message: format!(
                "SetBlockDim({}) is outside 1..={} (the simulator runs every block as a thread)",
                tiling.block_dim, MAX_BLOCK_DIM
            ),
        });
    }
    let load_err = |message: String| LaunchFailure::Load {
        what: format!("kernel library {}", job.kernel_lib.display()),
        message,
    };
    // SAFETY: loading a kernel library runs its static constructors; the
    // worker process exists so that this untrusted code cannot hurt the
    // caller.
    let lib = unsafe { Library::new(&job.kernel_lib) }.map_err(|e| load_err(e.to_string()))?;
    // SAFETY: the symbols are the ones kernel_entry.cpp defines, with the
    // signatures of abi.h; the entry is only called through kernel_call.
    let (attach, call, throw, entry, counters, types) = unsafe {
        let attach: libloading::Symbol<AttachFn> = lib
            .get(b"ascendopt_kernel_attach\0")
            .map_err(|e| load_err(format!("{e} (was it linked with kernel_entry.cpp?)")))?;
        let call: libloading::Symbol<CallFn> = lib
            .get(b"ascendopt_kernel_call\0")
            .map_err(|e| load_err(e.to_string()))?;
        let throw: libloading::Symbol<ThrowFn> = lib
            .get(b"ascendopt_kernel_throw\0")
            .map_err(|e| load_err(e.to_string()))?;
        // Absent from libraries linked with an older kernel_entry.cpp: the
        // kernel's own code is then not counted.
        let counters: Option<CountersFn> = lib
            .get::<CountersFn>(b"ascendopt_kernel_scalar_counters\0")
            .ok()
            .map(|s| *s);
        // The kernel type the library registered when it loaded (absent
        // from libraries of an older kernel_entry.cpp: untyped).
        let types: Option<TypesFn> = lib
            .get::<TypesFn>(b"ascendopt_kernel_types\0")
            .ok()
            .map(|s| *s);
        let mut name = job.kernel_name.clone().into_bytes();
        name.push(0);
        let entry = match lib.get::<*const c_void>(&name) {
            Ok(entry) => *entry,
            // A tiling-template entry: the instance the key selects
            // (ascendopt/kernel/tpl_instances.h).
            Err(e) => template_instance(&lib, job, tiling.tiling_key)?.ok_or_else(|| {
                load_err(format!(
                    "kernel entry `{}` not found ({e}); declare it extern \"C\" __global__ __aicore__",
                    job.kernel_name
                ))
            })?,
        };
        (*attach, *call, *throw, entry, counters, types)
    };
    let kernel_type = match types {
        None => None,
        Some(types) => {
            // SAFETY: ascendopt_kernel_types returns the library's static
            // `ascendopt::KernelTypes`, laid out as `RegisteredTypes`, or null.
            let registered = unsafe { types().as_ref().copied() };
            match registered {
                None => None,
                Some(r) => r
                    .for_key(tiling.tiling_key)
                    .map_err(|e| LaunchFailure::Tiling {
                        message: e.to_string(),
                    })?,
            }
        }
    };
    let slots = mix::layout(kernel_type, tiling.block_dim);
    if slots.len() as u32 > MAX_BLOCK_DIM {
        return Err(LaunchFailure::Tiling {
            message: format!(
                "SetBlockDim({}) with {} starts {} cores, more than the {} the simulator runs (one thread each)",
                tiling.block_dim,
                kernel_type.map_or("no kernel type", |k| k.name()),
                slots.len(),
                MAX_BLOCK_DIM
            ),
        });
    }

    // GM: inputs, outputs, workspace, tiling data (kernel argument order).
    let mut gm = GmSpace::default();
    let mut rng = ChaCha8Rng::seed_from_u64(job.seed ^ 0x5eed_f00d_9a7e);
    let mut arg_spaces = Vec::new();
    let mut output_spaces = Vec::new();
    let in_memory = memory.is_some();
    let memory_err = |message: String| LaunchFailure::Load {
        what: "the tensor memory".into(),
        message,
    };
    match memory {
        None => {
            for (i, t) in job.inputs.iter().enumerate() {
                arg_spaces.push(gm.alloc(&format!("input {i}"), t.data.len(), &t.data));
            }
            for (i, t) in job.outputs.iter().enumerate() {
                let s = gm.alloc(&format!("output {i}"), t.data.len(), &t.data);
                output_spaces.push(s);
                arg_spaces.push(s);
            }
        }
        Some(memory) => {
            if memory.inputs.len() != job.inputs.len() || memory.outputs.len() != job.outputs.len()
            {
                return Err(memory_err(format!(
                    "regions for {} inputs and {} outputs, the job has {} and {}",
                    memory.inputs.len(),
                    memory.outputs.len(),
                    job.inputs.len(),
                    job.outputs.len()
                )));
            }
            let named = memory
                .inputs
                .into_iter()
                .enumerate()
                .map(|(i, m)| (format!("input {i}"), m, false))
                .chain(
                    memory
                        .outputs
                        .into_iter()
                        .enumerate()
                        .map(|(i, m)| (format!("output {i}"), m, true)),
                );
            for (name, region, is_output) in named {
                // SAFETY: the caller's regions live for the whole call
                // (`TensorMemory` borrows them), and only the kernel, through
                // this space, touches them meanwhile.
                let s = unsafe { gm.adopt(&name, region) }
                    .ok_or_else(|| memory_err(format!("the region of {name} is misaligned")))?;
                if is_output {
                    output_spaces.push(s);
                }
                arg_spaces.push(s);
            }
        }
    }
    // Outputs with an initial value (InitValue) are set as CANN's memset
    // before the launch would; an in-place output keeps its input's data.
    if !tiling.output_init.is_empty() {
        let host = host_outputs(job);
        for init in &tiling.output_init {
            let o = host.get(init.output as usize).copied().ok_or_else(|| {
                memory_err(format!(
                    "an initial value for output {} of the tiling, which sees {}",
                    init.output,
                    host.len()
                ))
            })?;
            let in_place = job
                .layout
                .as_ref()
                .is_some_and(|l| l.in_place_input(o).is_some());
            if !in_place {
                if let Some(&s) = output_spaces.get(o) {
                    gm.fill(s, &init.pattern);
                }
            }
        }
    }
    let mut ws = vec![0u8; tiling.workspace as usize];
    rng.fill_bytes(&mut ws);
    let base = |gm: &GmSpace, s: u32| gm.allocs()[s as usize].base();
    let mut args: Vec<usize> = match &job.layout {
        None => arg_spaces.iter().map(|&s| base(&gm, s)).collect(),
        Some(layout) => {
            let n_in = job.inputs.len();
            layout
                .check(n_in, job.outputs.len())
                .map_err(|e| LaunchFailure::Load {
                    what: "the kernel arguments".into(),
                    message: e.to_string(),
                })?;
            let input_addr = |gm: &GmSpace, i: usize| match layout.in_place_input_of(i) {
                // In place: the input is the output's memory.
                Some(o) => base(gm, output_spaces[o]),
                None => base(gm, arg_spaces[i]),
            };
            let mut args = Vec::new();
            for (param, slot) in layout.inputs.iter().enumerate() {
                args.push(match slot {
                    ArgSlot::One(i) => input_addr(&gm, *i),
                    ArgSlot::Absent => 0,
                    ArgSlot::List(list) => {
                        let items: Vec<(usize, &[i64])> = list
                            .iter()
                            .map(|&i| (input_addr(&gm, i), job.inputs[i].shape.as_slice()))
                            .collect();
                        let bytes = list_descriptor(&items);
                        let s = gm.alloc(
                            &format!("tensor list of input {param}"),
                            bytes.len(),
                            &bytes,
                        );
                        base(&gm, s)
                    }
                });
            }
            for (param, slot) in layout.outputs.iter().enumerate() {
                args.push(match slot {
                    ArgSlot::One(o) => base(&gm, output_spaces[*o]),
                    ArgSlot::Absent => 0,
                    ArgSlot::List(list) => {
                        let items: Vec<(usize, &[i64])> = list
                            .iter()
                            .map(|&o| {
                                (base(&gm, output_spaces[o]), job.outputs[o].shape.as_slice())
                            })
                            .collect();
                        let bytes = list_descriptor(&items);
                        let s = gm.alloc(
                            &format!("tensor list of output {param}"),
                            bytes.len(),
                            &bytes,
                        );
                        base(&gm, s)
                    }
                });
            }
            args
        }
    };
    let ws_space = gm.alloc("workspace", ws.len(), &ws);
    args.push(base(&gm, ws_space));
    let tiling_space = gm.alloc("tiling data", tiling.data.len().max(1), &tiling.data);
    args.push(base(&gm, tiling_space));
    let gm_spaces: Vec<u64> = gm.allocs().iter().map(|a| a.len() as u64).collect();

    let mut shared = Shared::new(
        gm,
        tiling.block_dim,
        tiling.tiling_key,
        mem_sizes(&job.platform),
        job.seed,
        job.max_instrs_per_block,
    );
    shared.throw_fn = Some(throw);
    shared.product = crate::runtime::product::Product::of_soc(&job.platform.soc_version);
    shared.set_layout(slots);
    // The workspace argument (after inputs and outputs) is where the
    // system workspace starts; its size is what the host was told.
    shared.workspace_base = args.get(args.len().saturating_sub(2)).copied().unwrap_or(0);
    shared.sys_workspace_bytes = LIB_API_WORKSPACE;
    let shared = Arc::new(shared);
    // SAFETY: TABLE is 'static and matches abi.h.
    unsafe { attach(&TABLE) };

    let entry_addr = entry as usize;
    let call_addr = call as *const () as usize;
    let results: Vec<Result<(Block, i32), BlockThreadError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..shared.threads())
            .map(|idx| {
                let shared = shared.clone();
                let mut args = args.clone();
                std::thread::Builder::new()
                    .name(format!("block-{idx}"))
                    .stack_size(16 << 20)
                    .spawn_scoped(scope, move || {
                        let mut state = Block::new(idx, shared.clone());
                        if let Some(counters) = counters {
                            // SAFETY: ascendopt_kernel_scalar_counters of
                            // the library (loaded for the whole launch)
                            // returns this thread's counters, and the block
                            // stays on this thread.
                            unsafe { state.attach_scalar_counters(counters()) };
                        }
                        block::install(state);
                        // SAFETY: call_addr is ascendopt_kernel_call and
                        // entry_addr the kernel entry of a loaded library;
                        // args points to live GM allocations.
                        let rc = unsafe {
                            let call: CallFn = std::mem::transmute::<usize, CallFn>(call_addr);
                            call(
                                entry_addr as *const c_void,
                                args.len() as u32,
                                args.as_mut_ptr() as *mut *mut u8,
                            )
                        };
                        shared.block_finished(idx);
                        block::flush_current_scalar_code();
                        block::uninstall()
                            .map(|b| (b, rc))
                            .ok_or(BlockThreadError::StateLost)
                    })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(BlockThreadError::Panicked)),
                Err(e) => Err(BlockThreadError::Spawn(e)),
            })
            .collect()
    });

    if let Some(f) = shared.take_fault() {
        return Err(LaunchFailure::Fault {
            block: f.block,
            message: f.fault.to_string(),
            loc: f.loc,
        });
    }
    let mut blocks = Vec::new();
    for r in results {
        match r {
            Ok((b, 0)) => blocks.push(b),
            Ok((_, 2)) => {
                return Err(load_err(format!(
                    "the kernel takes more than 32 arguments ({} given)",
                    args.len()
                )))
            }
            Ok((b, 3)) => return Err(LaunchFailure::Fault {
                block: b.idx,
                message:
                    "the kernel threw a C++ exception (kernels cannot use exceptions on the NPU)"
                        .into(),
                loc: None,
            }),
            Ok((b, rc)) => {
                return Err(LaunchFailure::Fault {
                    block: b.idx,
                    message: format!("kernel stopped with code {rc}"),
                    loc: None,
                })
            }
            Err(e) => {
                return Err(LaunchFailure::Fault {
                    block: 0,
                    message: e.to_string(),
                    loc: None,
                })
            }
        }
    }

    // Merge per-block location tables.
    let mut trace = Trace {
        block_dim: tiling.block_dim,
        gm_spaces,
        blocks: Vec::new(),
        locs: Vec::new(),
    };
    let mut index: HashMap<SrcLoc, u32> = HashMap::new();
    for b in blocks {
        let remap: Vec<u32> = b
            .locs
            .iter()
            .map(|l| {
                *index.entry(l.clone()).or_insert_with(|| {
                    trace.locs.push(l.clone());
                    (trace.locs.len() - 1) as u32
                })
            })
            .collect();
        let mut instrs = b.instrs;
        for i in &mut instrs {
            i.loc = remap.get(i.loc as usize).copied().unwrap_or(0);
        }
        trace.blocks.push(BlockTrace {
            block: b.idx,
            instrs,
            gm_lines: b.gm_lines,
            role: b.role,
        });
    }
    let outputs = if in_memory {
        Vec::new()
    } else {
        output_spaces
            .iter()
            .map(|&s| shared.gm.allocs()[s as usize].bytes().to_vec())
            .collect()
    };
    let findings = shared
        .notes()
        .into_iter()
        .map(|n| Finding {
            kind: n.kind.to_string(),
            message: n.message,
            loc: None,
        })
        .collect();
    let printed = shared.printed();
    drop(lib);
    Ok(LaunchOutput {
        tiling: tiling.clone(),
        outputs,
        trace,
        findings,
        printed,
        hazards: None,
        description: None,
    })
}
/// Why a block's thread gave no block state back.
#[derive(Debug, thiserror::Error)]
enum BlockThreadError {
    /// The thread could not be started.
    #[error("cannot start a block thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// The thread panicked.
    #[error("block thread panicked")]
    Panicked,
    /// The block's state was not installed when the kernel returned.
    #[error("block state lost")]
    StateLost,
}
