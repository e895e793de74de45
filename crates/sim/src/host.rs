//! Running an operator's host tiling function: load the compiled host
//! (op_host) library, hand it the shapes, dtypes, attributes and platform
//! of a launch through `ascendopt_host_tiling` (see
//! `include/ascendopt/host_abi.h`), and collect what the tiling decided.
//!
//! The library runs user code: call this only in the worker process.
//!
//! Invariants:
//! - A result is returned only if it is usable by a launch: block dim in
//!   `1..=65535`, tiling data within the buffer, at most
//!   [`host_abi::MAX_WORKSPACES`] workspaces, nothing written past the
//!   buffer.
//! - Problems of the request (unknown op, attribute or dtype the OpDef does
//!   not accept) are [`HostError::Request`]; problems of the tiling code are
//!   [`HostError::Tiling`] or [`HostError::BadResult`].

use crate::host_abi::{
    self, AscHostAttr, AscHostPlatform, AscHostTensor, AscHostTilingIn, AscHostTilingOut,
};
use crate::launch::{AttrValue, JobAttr, LaunchFailure, OutputInit, Platform, TilingInfo};
use ascendopt_op::Dtype;
use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};

/// Bytes of the raw tiling buffer a tiling function may fill
/// (`GetRawTilingData()->GetCapacity()`). Tiling structs are small (the
/// guide, 3.8.3.2, asks to keep them so); 64 KiB leaves ample room.
pub const TILING_CAPACITY: usize = 64 * 1024;

/// Largest block dim: numBlocks is a logical core count in [1, 65535]
/// (guide 2.10.2.5.1, "numBlocks ... 取值范围为[1,65535]").
pub const MAX_BLOCK_DIM: u32 = 65535;

/// Bytes after the buffer that must stay untouched.
const GUARD_LEN: usize = 64;
const GUARD_BYTE: u8 = 0xA5;

/// What the tiling function is given.
#[derive(Debug, Clone, PartialEq)]
pub struct TilingRequest {
    /// OpDef class name (`OP_ADD(AddCustom)` → "AddCustom"); `None` = the
    /// only operator the library registers.
    pub op_type: Option<String>,
    /// Inputs in OpDef order: element type and shape.
    pub inputs: Vec<(Dtype, Vec<i64>)>,
    /// Outputs in OpDef order.
    pub outputs: Vec<(Dtype, Vec<i64>)>,
    /// The OpDef input each input instantiates (several for a tensor
    /// list, none for an absent optional input), in order; empty: input
    /// `i` is the OpDef's input `i`.
    pub input_params: Vec<usize>,
    /// Likewise for the outputs.
    pub output_params: Vec<usize>,
    /// The values of the inputs whose values the tiling may read
    /// (value-depend inputs), by input; empty or None: not given.
    pub input_data: Vec<Option<Vec<u8>>>,
    /// Attributes, matched by name to the OpDef's `Attr` declarations.
    pub attrs: Vec<JobAttr>,
    /// What `PlatformAscendC` reports.
    pub platform: Platform,
    /// What `GetLibApiWorkSpaceSize()` reports (bytes).
    pub lib_api_workspace: u64,
}

/// Why a tiling produced no usable result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The library could not be loaded.
    #[error("cannot load host library {}: {message}", path.display())]
    Load {
        /// The library.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The library lacks the simulator's entry point (not linked with
    /// `host_entry.cpp`).
    #[error("host library {} has no `ascendopt_host_tiling`: {message}", path.display())]
    MissingEntry {
        /// The library.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The request does not fit the operator (or cannot be passed at all).
    #[error("tiling request rejected: {message}")]
    Request {
        /// What is wrong, naming the attribute, tensor or op.
        message: String,
    },
    /// The tiling function failed: it returned non-zero, threw, or misused
    /// an API.
    #[error("{message} (status {status})")]
    Tiling {
        /// The status it returned (-1 for GRAPH_FAILED and for errors the
        /// simulator found).
        status: i32,
        /// What went wrong.
        message: String,
    },
    /// The tiling function succeeded but its result cannot be launched.
    #[error("unusable tiling result: {message}")]
    BadResult {
        /// What is wrong.
        message: String,
    },
}

impl From<HostError> for LaunchFailure {
    fn from(err: HostError) -> Self {
        match err {
            HostError::Load { ref path, .. } | HostError::MissingEntry { ref path, .. } => {
                LaunchFailure::Load {
                    what: format!("host library {}", path.display()),
                    message: err.to_string(),
                }
            }
            other => LaunchFailure::Tiling {
                message: other.to_string(),
            },
        }
    }
}

/// A loaded host library.
pub struct HostLib {
    lib: libloading::Library,
    path: PathBuf,
}

impl std::fmt::Debug for HostLib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostLib").field("path", &self.path).finish()
    }
}

impl HostLib {
    /// Loads the library (which runs its static initialisers: OP_ADD
    /// registrations and whatever else the user's code does).
    pub fn open(path: &Path) -> Result<HostLib, HostError> {
        // SAFETY: loading runs the library's initialisers. The library is
        // untrusted user code; the caller is the worker process, whose crash
        // the parent reports.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| HostError::Load {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        // SAFETY: only checks that the symbol exists; the type is the one
        // host_abi.h declares.
        unsafe { lib.get::<host_abi::HostTilingFn>(host_abi::ENTRY_SYMBOL) }.map_err(|e| {
            HostError::MissingEntry {
                path: path.to_owned(),
                message: e.to_string(),
            }
        })?;
        Ok(HostLib {
            lib,
            path: path.to_owned(),
        })
    }

    /// The library's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs the tiling function of the requested operator.
    pub fn tiling(&self, req: &TilingRequest) -> Result<TilingInfo, HostError> {
        let call = Marshalled::new(req)?;
        let mut buf = vec![0u8; TILING_CAPACITY + GUARD_LEN];
        buf[TILING_CAPACITY..].fill(GUARD_BYTE);
        let input = call.tiling_in(buf.as_mut_ptr(), TILING_CAPACITY as u64);
        let mut out = AscHostTilingOut::zeroed();
        // SAFETY: checked in `open`; the signature is host_abi.h's.
        let entry = unsafe {
            self.lib
                .get::<host_abi::HostTilingFn>(host_abi::ENTRY_SYMBOL)
        }
        .map_err(|e| HostError::MissingEntry {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        // SAFETY: `input` points into `call` and `buf`, which outlive the
        // call; `out` is a valid record. The library catches every C++
        // exception before returning.
        let status = unsafe { entry(&input, &mut out) };
        if buf[TILING_CAPACITY..].iter().any(|&b| b != GUARD_BYTE) {
            return Err(HostError::BadResult {
                message: format!("the tiling function wrote past the end of the {TILING_CAPACITY}-byte tiling buffer"),
            });
        }
        if status != 0 || out.status != 0 {
            let message = out.message();
            return Err(match out.error_kind {
                host_abi::error_kind::REQUEST => HostError::Request { message },
                _ => HostError::Tiling {
                    status: out.status,
                    message,
                },
            });
        }
        check_result(&out, buf)
    }
}

impl HostLib {
    /// The JSON description of every OpDef the library registers (see
    /// `ascendopt_host_describe` in `runtime_src/host_entry.cpp`): builds
    /// each OpDef, which runs the user's constructor.
    pub fn describe(&self) -> Result<String, HostError> {
        // SAFETY: the symbol's type is the one host_entry.cpp defines.
        let entry = unsafe {
            self.lib
                .get::<host_abi::HostDescribeFn>(host_abi::DESCRIBE_SYMBOL)
        }
        .map_err(|e| HostError::MissingEntry {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        let mut cap: u64 = 1 << 20;
        for _ in 0..3 {
            let mut buf = vec![0u8; cap as usize];
            let mut len: u64 = 0;
            // SAFETY: `buf` holds `cap` bytes and outlives the call; `len`
            // is a valid u64. The function catches every C++ exception.
            let status = unsafe { entry(buf.as_mut_ptr().cast(), cap, &mut len) };
            if status == 0 && len < cap {
                buf.truncate(len as usize);
                return String::from_utf8(buf).map_err(|_| HostError::BadResult {
                    message: "the OpDef description is not UTF-8".into(),
                });
            }
            if len >= MAX_DESCRIPTION {
                break;
            }
            cap = len + 1;
        }
        Err(HostError::BadResult {
            message: format!("the OpDef description is larger than {MAX_DESCRIPTION} bytes"),
        })
    }
}

/// Largest OpDef description accepted (bytes).
const MAX_DESCRIPTION: u64 = 16 << 20;

/// Loads `lib` and describes its OpDefs ([`HostLib::describe`]).
pub fn describe(lib: &Path) -> Result<String, HostError> {
    HostLib::open(lib)?.describe()
}

/// Loads `lib` and runs the tiling function of the requested operator.
pub fn run_tiling(lib: &Path, req: &TilingRequest) -> Result<TilingInfo, HostError> {
    HostLib::open(lib)?.tiling(req)
}

fn check_result(out: &AscHostTilingOut, mut buf: Vec<u8>) -> Result<TilingInfo, HostError> {
    let bad = |message: String| Err(HostError::BadResult { message });
    if out.block_dim == 0 {
        return bad("the tiling function set no block dim (SetBlockDim)".into());
    }
    if out.block_dim > MAX_BLOCK_DIM {
        return bad(format!(
            "block dim {} exceeds {MAX_BLOCK_DIM}",
            out.block_dim
        ));
    }
    let size = out.tiling_size;
    if size > TILING_CAPACITY as u64 {
        return bad(format!(
            "tiling data size {size} exceeds the {TILING_CAPACITY}-byte buffer"
        ));
    }
    let n_ws = out.n_workspaces as usize;
    if n_ws > host_abi::MAX_WORKSPACES {
        return bad(format!(
            "{n_ws} workspaces; at most {}",
            host_abi::MAX_WORKSPACES
        ));
    }
    let workspace = out.workspaces[..n_ws]
        .iter()
        .try_fold(0u64, |acc, &w| acc.checked_add(w));
    let Some(workspace) = workspace else {
        return bad(format!(
            "workspace sizes {:?} overflow",
            &out.workspaces[..n_ws]
        ));
    };
    let n_init = out.n_output_inits as usize;
    if n_init > host_abi::MAX_OUTPUT_INITS {
        return bad(format!(
            "{n_init} output initial values; at most {}",
            host_abi::MAX_OUTPUT_INITS
        ));
    }
    let mut output_init = Vec::with_capacity(n_init);
    for e in &out.output_inits[..n_init] {
        if !matches!(e.width, 1 | 2 | 4 | 8) {
            return bad(format!(
                "an output initial value of {} bytes (1, 2, 4 or 8)",
                e.width
            ));
        }
        output_init.push(OutputInit {
            output: e.output,
            pattern: e.bits.to_le_bytes()[..e.width as usize].to_vec(),
        });
    }
    buf.truncate(size as usize);
    Ok(TilingInfo {
        block_dim: out.block_dim,
        tiling_key: out.tiling_key,
        data: buf,
        workspace,
        output_init,
    })
}

/// The request in C form; owns everything the pointers point to.
struct Marshalled {
    op_type: Option<CString>,
    inputs: Vec<AscHostTensor>,
    outputs: Vec<AscHostTensor>,
    attrs: Vec<AscHostAttr>,
    platform: AscHostPlatform,
    // Pointed to by `attrs` / `platform`; never read directly.
    _names: Vec<CString>,
    _strings: Vec<CString>,
    _list_f: Vec<Vec<f32>>,
    _soc: CString,
}

fn c_string(what: &str, s: &str) -> Result<CString, HostError> {
    CString::new(s).map_err(|_| HostError::Request {
        message: format!("{what} {s:?} contains a NUL byte"),
    })
}

fn tensors(
    side: &str,
    list: &[(Dtype, Vec<i64>)],
    params: &[usize],
    data: &[Option<Vec<u8>>],
) -> Result<Vec<AscHostTensor>, HostError> {
    if !params.is_empty() && params.len() != list.len() {
        return Err(HostError::Request {
            message: format!(
                "{} {side}s but {} parameter indices",
                list.len(),
                params.len()
            ),
        });
    }
    if params.windows(2).any(|w| w[0] > w[1]) {
        return Err(HostError::Request {
            message: format!("{side}s are not in OpDef parameter order"),
        });
    }
    list.iter()
        .enumerate()
        .map(|(i, (dtype, shape))| {
            if shape.len() > host_abi::MAX_DIMS {
                return Err(HostError::Request {
                    message: format!(
                        "{side} {i} has {} dimensions; the host ABI passes at most {}",
                        shape.len(),
                        host_abi::MAX_DIMS
                    ),
                });
            }
            let mut dims = [0i64; host_abi::MAX_DIMS];
            dims[..shape.len()].copy_from_slice(shape);
            let values = data.get(i).and_then(Option::as_ref);
            Ok(AscHostTensor {
                dtype: u32::from(dtype.abi_code()),
                ndim: shape.len() as u32,
                dims,
                param: params.get(i).copied().unwrap_or(i) as u32,
                reserved: 0,
                data: values.map_or(std::ptr::null(), |v| v.as_ptr()),
                data_len: values.map_or(0, |v| v.len() as u64),
            })
        })
        .collect()
}

fn count(what: &str, n: usize) -> Result<u32, HostError> {
    u32::try_from(n).map_err(|_| HostError::Request {
        message: format!("{n} {what} is too many"),
    })
}

impl Marshalled {
    fn new(req: &TilingRequest) -> Result<Marshalled, HostError> {
        let op_type = req
            .op_type
            .as_deref()
            .map(|s| c_string("op type", s))
            .transpose()?;
        // `data` points into the request, which outlives the call.
        let inputs = tensors("input", &req.inputs, &req.input_params, &req.input_data)?;
        let outputs = tensors("output", &req.outputs, &req.output_params, &[])?;
        count("inputs", inputs.len())?;
        count("outputs", outputs.len())?;
        count("attributes", req.attrs.len())?;
        let mut names = Vec::new();
        let mut strings = Vec::new();
        let mut list_f: Vec<Vec<f32>> = Vec::new();
        let mut attrs = Vec::new();
        for attr in &req.attrs {
            let name = c_string("attribute name", &attr.name)?;
            let mut c = AscHostAttr {
                name: name.as_ptr(),
                kind: 0,
                list_len: 0,
                i: 0,
                f: 0.0,
                s: std::ptr::null(),
                list_i: std::ptr::null(),
                list_f: std::ptr::null(),
            };
            names.push(name);
            match &attr.value {
                AttrValue::Int(v) => {
                    c.kind = host_abi::attr_kind::INT;
                    c.i = *v;
                }
                AttrValue::Float(v) => {
                    c.kind = host_abi::attr_kind::FLOAT;
                    c.f = *v;
                }
                AttrValue::Bool(v) => {
                    c.kind = host_abi::attr_kind::BOOL;
                    c.i = i64::from(*v);
                }
                AttrValue::Str(v) => {
                    let s = c_string(&format!("attribute {}", attr.name), v)?;
                    c.kind = host_abi::attr_kind::STR;
                    c.s = s.as_ptr();
                    strings.push(s);
                }
                AttrValue::ListInt(v) => {
                    c.kind = host_abi::attr_kind::LIST_INT;
                    c.list_len = count("list elements", v.len())?;
                    // The request outlives the call.
                    c.list_i = v.as_ptr();
                }
                AttrValue::ListFloat(v) => {
                    c.kind = host_abi::attr_kind::LIST_FLOAT;
                    c.list_len = count("list elements", v.len())?;
                    list_f.push(v.iter().map(|&x| x as f32).collect());
                    c.list_f = list_f.last().map_or(std::ptr::null(), |l| l.as_ptr());
                }
            }
            attrs.push(c);
        }
        let p = &req.platform;
        let soc = c_string("SoC version", &p.soc_version)?;
        let platform = AscHostPlatform {
            soc_version: soc.as_ptr(),
            core_num_aiv: p.core_num_aiv,
            core_num_aic: p.core_num_aic,
            ub_size: p.ub_size,
            l1_size: p.l1_size,
            l0a_size: p.l0a_size,
            l0b_size: p.l0b_size,
            l0c_size: p.l0c_size,
            l2_size: p.l2_size,
            hbm_size: p.hbm_size,
            lib_api_workspace: req.lib_api_workspace,
        };
        Ok(Marshalled {
            op_type,
            inputs,
            outputs,
            attrs,
            platform,
            _names: names,
            _strings: strings,
            _list_f: list_f,
            _soc: soc,
        })
    }

    fn tiling_in(&self, tiling_buf: *mut u8, tiling_capacity: u64) -> AscHostTilingIn {
        AscHostTilingIn {
            abi_version: host_abi::HOST_ABI_VERSION,
            op_type: self
                .op_type
                .as_ref()
                .map_or(std::ptr::null(), |s| s.as_ptr() as *const c_char),
            n_inputs: self.inputs.len() as u32,
            inputs: self.inputs.as_ptr(),
            n_outputs: self.outputs.len() as u32,
            outputs: self.outputs.as_ptr(),
            n_attrs: self.attrs.len() as u32,
            attrs: self.attrs.as_ptr(),
            platform: self.platform,
            tiling_buf,
            tiling_capacity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::sync::OnceLock;

    const CRATE: &str = env!("CARGO_MANIFEST_DIR");

    /// The tiling header of the probe operators. The comments give the
    /// offsets the tests decode; the kernel-side test asserts the same
    /// offsets on the kernel's struct.
    const PROBE_TILING_H: &str = r#"
#ifndef PROBE_TILING_H
#define PROBE_TILING_H
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(ProbeSub)
  TILING_DATA_FIELD_DEF(float, wsum);      // 0
  TILING_DATA_FIELD_DEF(uint16_t, wlen);   // 4
END_TILING_DATA_DEF;                       // size 8
REGISTER_TILING_DATA_CLASS(ProbeSubOp, ProbeSub)

BEGIN_TILING_DATA_DEF(ProbeTiling)
  TILING_DATA_FIELD_DEF(uint32_t, total);        // 0
  TILING_DATA_FIELD_DEF(uint8_t, ndim);          // 4, then 3 padding bytes
  TILING_DATA_FIELD_DEF(int64_t, lastDim);       // 8
  TILING_DATA_FIELD_DEF(float, alpha);           // 16
  TILING_DATA_FIELD_DEF(int32_t, count);         // 20
  TILING_DATA_FIELD_DEF(uint8_t, flag);          // 24
  TILING_DATA_FIELD_DEF(uint8_t, modeFirst);     // 25
  TILING_DATA_FIELD_DEF(uint16_t, modeLen);      // 26
  TILING_DATA_FIELD_DEF_ARR(uint32_t, 4, axes);  // 28
  TILING_DATA_FIELD_DEF(uint32_t, nAxes);        // 44
  TILING_DATA_FIELD_DEF_STRUCT(ProbeSub, sub);   // 48
  TILING_DATA_FIELD_DEF(uint32_t, inDtype);      // 56
  TILING_DATA_FIELD_DEF(uint32_t, outDtype);     // 60
  TILING_DATA_FIELD_DEF(uint64_t, ubSize);       // 64
  TILING_DATA_FIELD_DEF(uint32_t, aiv);          // 72
  TILING_DATA_FIELD_DEF(uint32_t, aic);          // 76
END_TILING_DATA_DEF;                             // size 80
REGISTER_TILING_DATA_CLASS(AddProbe, ProbeTiling)
}
#endif
"#;

    /// Two operators. AddProbe: shapes, dtypes, attributes by index and the
    /// platform into ProbeTiling; `count` selects failure modes.
    /// PlatformProbe: a standard-C++ tiling struct via GetTilingData<T>.
    const PROBE_HOST_CPP: &str = r#"
#include "probe_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct PlatformTiling {
  uint32_t coreNum;
  uint32_t blocks;
  uint32_t is910b;
  uint32_t outRank;
  uint64_t ubAfterReserve;
  uint64_t l0c;
};

namespace optiling {
static ge::graphStatus ProbeTilingFunc(gert::TilingContext* context) {
  ProbeTiling t;
  const gert::Shape& x = context->GetInputShape(0)->GetStorageShape();
  t.set_total((uint32_t)x.GetShapeSize());
  t.set_ndim((uint8_t)x.GetDimNum());
  t.set_lastDim(x.GetDim(x.GetDimNum() - 1));
  const gert::RuntimeAttrs* attrs = context->GetAttrs();
  t.set_alpha(*attrs->GetAttrPointer<float>(0));
  int64_t count = *attrs->GetInt(1);
  t.set_count((int32_t)count);
  t.set_flag(*attrs->GetBool(2) ? 1 : 0);
  const char* mode = attrs->GetStr(3);
  t.set_modeFirst((uint8_t)mode[0]);
  t.set_modeLen((uint16_t)strlen(mode));
  const gert::ContinuousVector* axes = attrs->GetAttrPointer<gert::ContinuousVector>(4);
  const int64_t* axv = static_cast<const int64_t*>(axes->GetData());
  uint32_t ax[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < axes->GetSize() && i < 4; ++i) ax[i] = (uint32_t)axv[i];
  t.set_axes(ax);
  t.set_nAxes((uint32_t)axes->GetSize());
  const gert::TypedContinuousVector<float>* w = attrs->GetListFloat(5);
  float wsum = 0;
  for (size_t i = 0; i < w->GetSize(); ++i) wsum += w->GetData()[i];
  t.sub.set_wsum(wsum);
  t.sub.set_wlen((uint16_t)w->GetSize());
  t.set_inDtype(context->GetInputDesc(0)->GetDataType());
  t.set_outDtype(context->GetOutputDesc(0)->GetDataType());
  auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  uint64_t ub = 0;
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
  t.set_ubSize(ub);
  t.set_aiv(platform.GetCoreNumAiv());
  t.set_aic(platform.GetCoreNumAic());
  context->SetBlockDim(platform.GetCoreNumAiv() / 2);
  context->SetTilingKey(context->GetInputTensor(0)->GetDataType() == ge::DT_FLOAT16 ? 10 : 20);
  size_t* ws = context->GetWorkspaceSizes(2);
  ws[0] = 1024;
  ws[1] = platform.GetLibApiWorkSpaceSize();
  if (count < 0) return ge::GRAPH_FAILED;
  if (count == 99) attrs->GetListInt(0);  // alpha is a Float
  // Scalar views of another kind read the stored bytes, as in CANN:
  // alpha's float bits; axes' ContinuousVector header (its capacity).
  if (count == 94) t.set_count((int32_t)*attrs->GetAttrPointer<int64_t>(0));
  if (count == 93) t.set_count((int32_t)*attrs->GetInt(4));
  if (count == 98) memset(context->GetRawTilingData()->GetData(), 0x11,
                          context->GetRawTilingData()->GetCapacity() + 8);
  if (count == 97) attrs->GetInt(6);  // there are 6 attributes
  if (count == 96) { t.SaveToBuffer(context->GetRawTilingData()->GetData(), 16); return ge::GRAPH_SUCCESS; }
  if (count == 95) context->SetBlockDim(0);
  t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
  context->GetRawTilingData()->SetDataSize(t.GetDataSize());
  return ge::GRAPH_SUCCESS;
}

static ge::graphStatus PlatformTilingFunc(gert::TilingContext* context) {
  platform_ascendc::PlatformAscendC* p = platform_ascendc::PlatformAscendCManager::GetInstance();
  PlatformTiling* t = context->GetTilingData<PlatformTiling>();
  t->coreNum = p->GetCoreNum();
  t->blocks = p->CalcTschNumBlocks(40, p->GetCoreNumAic(), p->GetCoreNumAiv());
  t->is910b = p->GetSocVersion() == platform_ascendc::SocVersion::ASCEND910B;
  t->outRank = (uint32_t)context->GetOutputShape(0)->GetStorageShape().GetDimNum();
  auto own = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  own.ReserveLocalMemory(platform_ascendc::ReservedSize::RESERVED_SIZE_8K);
  own.GetCoreMemSize(platform_ascendc::CoreMemType::UB, t->ubAfterReserve);
  own.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, t->l0c);
  context->SetBlockDim(t->blocks);
  return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context) {
  *context->GetOutputShape(0) = *context->GetInputShape(0);
  return GRAPH_SUCCESS;
}
static graphStatus InferDataType(gert::InferDataTypeContext* context) {
  context->SetOutputDataType(0, context->GetInputDataType(0));
  return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AddProbe : public OpDef {
 public:
  explicit AddProbe(const char* name) : OpDef(name) {
    this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
    this->Input("bias").ParamType(OPTIONAL).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
    this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
    this->Attr("alpha").AttrType(OPTIONAL).Float(1.5);
    this->Attr("count").AttrType(REQUIRED).Int();
    this->Attr("flag").AttrType(OPTIONAL).Bool(true);
    this->Attr("mode").AttrType(OPTIONAL).String("fast");
    this->Attr("axes").AttrType(OPTIONAL).ListInt({3, 4});
    this->Attr("weights").AttrType(OPTIONAL).ListFloat({0.5f, 0.25f});
    this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
    this->AICore().SetTiling(optiling::ProbeTilingFunc);
    this->AICore().AddConfig("ascend910b");
  }
};
OP_ADD(AddProbe);

class PlatformProbe : public OpDef {
 public:
  explicit PlatformProbe(const char* name) : OpDef(name) {
    this->Input("x").ParamType(REQUIRED).DataTypeList({ge::DT_INT32});
    this->Output("y").ParamType(REQUIRED).Follow("x");
    this->AICore().SetTiling(optiling::PlatformTilingFunc).SetTilingParse([](gert::TilingParseContext*) { return ge::GRAPH_SUCCESS; });
    this->AICore().AddConfig("ascend910b");
  }
};
OP_ADD(PlatformProbe);
}  // namespace ops
"#;

    /// The simplest msopgen-style op, the only one in its library.
    const SINGLE_HOST_CPP: &str = r#"
#include "register/tilingdata_base.h"
#include "register/op_def_registry.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(TilingData)
  TILING_DATA_FIELD_DEF(uint32_t, totalLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileNum);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(AddCustom, TilingData)
static ge::graphStatus TilingFunc(gert::TilingContext* context) {
  TilingData tiling;
  tiling.set_totalLength(context->GetInputShape(0)->GetOriginShape().GetShapeSize());
  tiling.set_tileNum(8);
  context->SetBlockDim(8);
  tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
  context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
  size_t* ws = context->GetWorkspaceSizes(1);
  ws[0] = 0;
  return ge::GRAPH_SUCCESS;
}
}
namespace ops {
class AddCustom : public OpDef {
 public:
  explicit AddCustom(const char* name) : OpDef(name) {
    this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
    this->Input("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
    this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
    this->AICore().SetTiling(optiling::TilingFunc);
    this->AICore().AddConfig("ascend910b");
  }
};
OP_ADD(AddCustom);
}
"#;

    /// g++ rejected a test's sources.
    #[derive(Debug, thiserror::Error)]
    #[error("g++ failed:\n{stderr}")]
    struct GxxFailed {
        /// What it printed.
        stderr: String,
    }

    impl GxxFailed {
        fn from(out: &std::process::Output) -> GxxFailed {
            GxxFailed {
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }
        }
    }

    /// Compiles `files` (name, text; the first is the source) in `dir` as
    /// the build does; Err carries g++'s stderr.
    fn compile_host(dir: &Path, files: &[(&str, &str)]) -> Result<PathBuf, GxxFailed> {
        let op_host = dir.join("op_host");
        std::fs::create_dir_all(&op_host).unwrap();
        for (name, text) in files {
            std::fs::write(op_host.join(name), text).unwrap();
        }
        let lib = dir.join("libhost.so");
        let out = Command::new("g++")
            .args([
                "-std=c++17",
                "-O1",
                "-shared",
                "-fPIC",
                "-Wall",
                "-Wextra",
                "-Werror",
            ])
            .arg("-I")
            .arg(format!("{CRATE}/include"))
            .arg("-I")
            .arg(&op_host)
            .arg(op_host.join(files[0].0))
            .arg(format!("{CRATE}/runtime_src/host_entry.cpp"))
            .arg("-o")
            .arg(&lib)
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        if out.status.success() {
            Ok(lib)
        } else {
            Err(GxxFailed::from(&out))
        }
    }

    /// Compiles a translation unit with -fsyntax-only (warnings allowed:
    /// the kernel side includes headers of other parts of the simulator);
    /// Err carries stderr.
    fn syntax_check(dir: &Path, files: &[(&str, &str)], extra: &[&str]) -> Result<(), GxxFailed> {
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let out = Command::new("g++")
            .args(["-std=c++17", "-fsyntax-only", "-Wall"])
            .arg("-I")
            .arg(format!("{CRATE}/include"))
            .arg("-I")
            .arg(dir)
            .args(extra)
            .arg(dir.join(files[0].0))
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        if out.status.success() {
            Ok(())
        } else {
            Err(GxxFailed::from(&out))
        }
    }

    /// The probe library, compiled and loaded once for all tests (the file
    /// is deleted at once; the mapping stays).
    fn probe_lib() -> &'static HostLib {
        static LIB: OnceLock<HostLib> = OnceLock::new();
        LIB.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let lib = compile_host(
                dir.path(),
                &[
                    ("probe.cpp", PROBE_HOST_CPP),
                    ("probe_tiling.h", PROBE_TILING_H),
                ],
            )
            .unwrap();
            HostLib::open(&lib).unwrap()
        })
    }

    fn platform() -> Platform {
        Platform {
            soc_version: "Ascend910B2".into(),
            core_num_aiv: 48,
            core_num_aic: 24,
            ub_size: 196_352,
            l1_size: 524_288,
            l0a_size: 65_536,
            l0b_size: 65_536,
            l0c_size: 131_072,
            l2_size: 201_326_592,
            hbm_size: 68_719_476_736,
        }
    }

    fn attr(name: &str, value: AttrValue) -> JobAttr {
        JobAttr {
            name: name.into(),
            value,
        }
    }

    fn probe_request(dtype: Dtype, attrs: Vec<JobAttr>) -> TilingRequest {
        TilingRequest {
            op_type: Some("AddProbe".into()),
            inputs: vec![(dtype, vec![2, 3, 40])],
            outputs: vec![(dtype, vec![2, 3, 40])],
            attrs,
            platform: platform(),
            input_params: vec![],
            output_params: vec![],
            input_data: vec![],
            lib_api_workspace: 16 * 1024 * 1024,
        }
    }

    fn u16_at(d: &[u8], off: usize) -> u16 {
        u16::from_le_bytes(d[off..off + 2].try_into().unwrap())
    }
    fn u32_at(d: &[u8], off: usize) -> u32 {
        u32::from_le_bytes(d[off..off + 4].try_into().unwrap())
    }
    fn i32_at(d: &[u8], off: usize) -> i32 {
        i32::from_le_bytes(d[off..off + 4].try_into().unwrap())
    }
    fn u64_at(d: &[u8], off: usize) -> u64 {
        u64::from_le_bytes(d[off..off + 8].try_into().unwrap())
    }
    fn i64_at(d: &[u8], off: usize) -> i64 {
        i64::from_le_bytes(d[off..off + 8].try_into().unwrap())
    }
    fn f32_at(d: &[u8], off: usize) -> f32 {
        f32::from_le_bytes(d[off..off + 4].try_into().unwrap())
    }

    #[test]
    fn tiling_sets_block_dim_key_data_and_workspace_with_attr_defaults() {
        let req = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(7))]);
        let info = probe_lib().tiling(&req).unwrap();
        assert_eq!(info.block_dim, 24); // 48 AIV / 2
        assert_eq!(info.tiling_key, 10); // float16 input
        assert_eq!(info.workspace, 1024 + 16 * 1024 * 1024);
        let d = &info.data;
        assert_eq!(d.len(), 80);
        assert_eq!(u32_at(d, 0), 240); // 2 * 3 * 40
        assert_eq!(d[4], 3);
        assert_eq!(&d[5..8], &[0, 0, 0]); // padding zeroed
        assert_eq!(i64_at(d, 8), 40);
        assert_eq!(f32_at(d, 16), 1.5); // alpha default
        assert_eq!(i32_at(d, 20), 7);
        assert_eq!(d[24], 1); // flag default true
        assert_eq!(d[25], b'f'); // mode default "fast"
        assert_eq!(u16_at(d, 26), 4);
        assert_eq!(
            [u32_at(d, 28), u32_at(d, 32), u32_at(d, 36), u32_at(d, 40)],
            [3, 4, 0, 0]
        );
        assert_eq!(u32_at(d, 44), 2);
        assert_eq!(f32_at(d, 48), 0.75); // 0.5 + 0.25
        assert_eq!(u16_at(d, 52), 2);
        assert_eq!(u32_at(d, 56), 1); // ge::DT_FLOAT16
        assert_eq!(u32_at(d, 60), 1);
        assert_eq!(u64_at(d, 64), 196_352);
        assert_eq!(u32_at(d, 72), 48);
        assert_eq!(u32_at(d, 76), 24);
    }

    #[test]
    fn attrs_are_matched_by_name_whatever_the_request_order() {
        let req = probe_request(
            Dtype::Float32,
            vec![
                attr("weights", AttrValue::ListInt(vec![1, 2, 4])),
                attr("mode", AttrValue::Str("exact".into())),
                attr("axes", AttrValue::ListInt(vec![9, 8, 7, 6, 5])),
                attr("flag", AttrValue::Bool(false)),
                attr("count", AttrValue::Int(11)),
                attr("alpha", AttrValue::Int(3)),
            ],
        );
        let info = probe_lib().tiling(&req).unwrap();
        let d = &info.data;
        assert_eq!(info.tiling_key, 20); // float32 input
        assert_eq!(f32_at(d, 16), 3.0); // Int given for a Float attr
        assert_eq!(i32_at(d, 20), 11);
        assert_eq!(d[24], 0);
        assert_eq!((d[25], u16_at(d, 26)), (b'e', 5));
        assert_eq!(
            [u32_at(d, 28), u32_at(d, 32), u32_at(d, 36), u32_at(d, 40)],
            [9, 8, 7, 6]
        );
        assert_eq!(u32_at(d, 44), 5);
        assert_eq!((f32_at(d, 48), u16_at(d, 52)), (7.0, 3)); // ListInt given for ListFloat
        assert_eq!(u32_at(d, 56), 0); // ge::DT_FLOAT
    }

    #[test]
    fn a_scalar_view_of_another_kind_reads_the_stored_bytes_as_cann_does() {
        for (count, want) in [(94, 1.5f32.to_bits() as i32), (93, 2)] {
            let req = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(count))]);
            let info = probe_lib().tiling(&req).unwrap();
            assert_eq!(i32_at(&info.data, 20), want, "count = {count}");
        }
    }

    #[test]
    fn a_failing_tiling_is_a_tiling_error() {
        let req = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(-1))]);
        let err = probe_lib().tiling(&req).unwrap_err();
        assert_eq!(
            err,
            HostError::Tiling {
                status: -1,
                message: "the tiling function of AddProbe returned 4294967295 (GRAPH_FAILED)"
                    .into()
            }
        );
    }

    #[test]
    fn api_misuse_inside_the_tiling_names_the_call() {
        let cases = [
            (99, "in the tiling function of AddProbe: GetAttrPointer<gert::TypedContinuousVector<int64_t>>(0): attribute 'alpha' is Float"),
            (97, "in the tiling function of AddProbe: GetAttrs()->Get...(6): OpDef AddProbe declares 6 attribute(s)"),
            (
                96,
                "in the tiling function of AddProbe: ProbeTiling::SaveToBuffer: the tiling data is 80 bytes, \
                 the buffer holds 16",
            ),
        ];
        for (count, message) in cases {
            let req = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(count))]);
            let err = probe_lib().tiling(&req).unwrap_err();
            assert_eq!(
                err,
                HostError::Tiling {
                    status: -1,
                    message: message.into()
                },
                "count = {count}"
            );
        }
    }

    #[test]
    fn unusable_results_are_rejected() {
        let overrun = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(98))]);
        assert_eq!(
            probe_lib().tiling(&overrun).unwrap_err(),
            HostError::BadResult {
                message: "the tiling function wrote past the end of the 65536-byte tiling buffer"
                    .into()
            }
        );
        let no_blocks = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(95))]);
        assert_eq!(
            probe_lib().tiling(&no_blocks).unwrap_err(),
            HostError::BadResult {
                message: "the tiling function set no block dim (SetBlockDim)".into()
            }
        );
    }

    #[test]
    fn requests_the_opdef_does_not_accept_are_request_errors() {
        let check = |req: TilingRequest, expected: &str| {
            assert_eq!(
                probe_lib().tiling(&req).unwrap_err(),
                HostError::Request {
                    message: expected.into()
                }
            );
        };
        check(
            probe_request(Dtype::Float16, vec![]),
            "attribute 'count' of OpDef AddProbe is REQUIRED and the request does not give it",
        );
        check(
            probe_request(
                Dtype::Float16,
                vec![
                    attr("count", AttrValue::Int(1)),
                    attr("cuont", AttrValue::Int(1)),
                ],
            ),
            "the request gives attribute 'cuont', which OpDef AddProbe does not declare \
             (it declares: alpha, count, flag, mode, axes, weights)",
        );
        check(
            probe_request(Dtype::Float16, vec![attr("count", AttrValue::Float(1.0))]),
            "attribute 'count' is Int in the OpDef but the request gives Float",
        );
        check(
            probe_request(Dtype::Int32, vec![attr("count", AttrValue::Int(1))]),
            "input 0 ('x') of AddProbe has dtype DT_INT32; the OpDef allows DT_FLOAT16, DT_FLOAT",
        );
        let mut three_inputs =
            probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(1))]);
        three_inputs.inputs = vec![(Dtype::Float16, vec![4]); 3];
        check(
            three_inputs,
            "the request gives 3 inputs but OpDef AddProbe declares 2",
        );
        let mut unknown = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(1))]);
        unknown.op_type = Some("MulProbe".into());
        check(
            unknown,
            "no operator 'MulProbe' in the host library (it registers: PlatformProbe, AddProbe)",
        );
        let mut unnamed = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(1))]);
        unnamed.op_type = None;
        check(
            unnamed,
            "the host library registers 2 operators (PlatformProbe, AddProbe); name one with op_type",
        );
        let mut deep = probe_request(Dtype::Float16, vec![attr("count", AttrValue::Int(1))]);
        deep.inputs[0].1 = vec![1; 9];
        assert_eq!(
            probe_lib().tiling(&deep).unwrap_err(),
            HostError::Request {
                message: "input 0 has 9 dimensions; the host ABI passes at most 8".into()
            }
        );
    }

    #[test]
    fn platform_queries_and_standard_cpp_tiling_struct() {
        let req = TilingRequest {
            op_type: Some("PlatformProbe".into()),
            inputs: vec![(Dtype::Int32, vec![5, 6])],
            outputs: vec![(Dtype::Int32, vec![5, 6])],
            attrs: vec![],
            platform: platform(),
            input_params: vec![],
            output_params: vec![],
            input_data: vec![],
            lib_api_workspace: 0,
        };
        let info = probe_lib().tiling(&req).unwrap();
        let d = &info.data;
        assert_eq!(d.len(), 32); // sizeof(PlatformTiling), set by GetTilingData<T>
        assert_eq!(u32_at(d, 0), 48); // GetCoreNum = AIV cores
        assert_eq!(u32_at(d, 4), 20); // ceil(40 / (48 / 24))
        assert_eq!(u32_at(d, 8), 1); // ASCEND910B
        assert_eq!(u32_at(d, 12), 2);
        assert_eq!(u64_at(d, 16), 196_352 - 8192);
        assert_eq!(u64_at(d, 24), 131_072);
        assert_eq!(
            (info.block_dim, info.tiling_key, info.workspace),
            (20, 0, 0)
        );
    }

    /// A prototype written the way CANN projects write them: dtype lists in
    /// vectors, a tensor-list input, an optional input, a DataTypeList, a
    /// value-depend input, attributes with defaults, an AddConfig chain
    /// with a per-SoC configuration, and the tiling and its compile info
    /// registered by op type (IMPL_OP_OPTILING) instead of in the OpDef.
    const REGISTERED_HOST_CPP: &str = r#"
#include "register/op_def_registry.h"
#include "register/op_impl_registry.h"
namespace optiling {
struct ProbeCompileInfo {
  uint32_t cores = 0;
  uint64_t ub = 0;
};
static ge::graphStatus Parse(gert::TilingParseContext* context) {
  auto* info = context->GetCompiledInfo<ProbeCompileInfo>();
  auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  info->cores = platform.GetCoreNumAiv();
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, info->ub);
  return ge::GRAPH_SUCCESS;
}
static ge::graphStatus Tiling(gert::TilingContext* context) {
  const auto* info = context->GetCompileInfo<ProbeCompileInfo>();
  const auto* raw = static_cast<const ProbeCompileInfo*>(context->GetCompileInfo());
  if (info == nullptr || raw != info) return ge::GRAPH_FAILED;
  context->SetBlockDim(info->cores);
  context->SetTilingKey(info->ub);
  std::vector<uint32_t> words = {7, 9};
  std::cout << "";
  std::printf("%s", "");
  context->GetRawTilingData()->Append(words[1]);
  return ge::GRAPH_SUCCESS;
}
IMPL_OP_OPTILING(Registered).Tiling(Tiling).TilingParse<ProbeCompileInfo>(Parse);
IMPL_OP_INFERSHAPE(Registered).InputsDataDependency({2});
}  // namespace optiling
namespace ops {
class Registered : public OpDef {
 public:
  explicit Registered(const char* name) : OpDef(name) {
    std::vector<ge::DataType> types = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};
    std::vector<ge::Format> formats(types.size(), ge::FORMAT_ND);
    this->Input("xs").ParamType(DYNAMIC).DataType(types).Format(formats);
    this->Input("bias").ParamType(OPTIONAL).DataType(types).Format(formats);
    this->Input("axes").ParamType(REQUIRED).ValueDepend(REQUIRED).DataTypeList({ge::DT_INT32, ge::DT_INT64});
    this->Output("y").ParamType(REQUIRED).DataType(types).Format(formats);
    this->Attr("alpha").AttrType(OPTIONAL).Float(1.5f);
    this->Attr("mode").AttrType(REQUIRED).String();
    this->Attr("dims").AttrType(OPTIONAL).ListInt({1, -2});
    OpAICoreConfig config;
    config.Input("xs").ParamType(DYNAMIC).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
    config.Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
    this->AICore().AddConfig("ascend910b").AddConfig("ascend310p", config);
  }
};
OP_ADD(Registered);
}  // namespace ops
"#;

    #[test]
    fn a_host_library_describes_its_opdefs() {
        let dir = tempfile::tempdir().unwrap();
        let lib = compile_host(dir.path(), &[("registered.cpp", REGISTERED_HOST_CPP)]).unwrap();
        let json = describe(&lib).unwrap();
        let described = ascendopt_op::opdef::Described::from_json(&json).unwrap();
        let op = described.op(None).unwrap();
        assert_eq!(op.op_type, "Registered");
        assert!(op.tiling, "the IMPL_OP_OPTILING tiling counts: {json}");
        let names: Vec<&str> = op.inputs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["xs", "bias", "axes"]);
        use ascendopt_op::opdef::ParamType;
        assert_eq!(op.inputs[0].param_type, ParamType::Dynamic);
        assert_eq!(op.inputs[1].param_type, ParamType::Optional);
        assert!(op.inputs[2].dtype_list && op.inputs[2].value_depend());
        assert_eq!(op.inputs[0].dtypes, ["DT_FLOAT16", "DT_FLOAT", "DT_BF16"]);
        assert_eq!(op.outputs[0].name, "y");
        let attrs: Vec<(&str, &str, bool)> = op
            .attrs
            .iter()
            .map(|a| (a.name.as_str(), a.ty.as_str(), a.required))
            .collect();
        assert_eq!(
            attrs,
            [
                ("alpha", "Float", false),
                ("mode", "String", true),
                ("dims", "ListInt", false)
            ]
        );
        assert_eq!(op.attrs[0].default, Some(serde_json::json!(1.5)));
        assert_eq!(op.attrs[2].default, Some(serde_json::json!([1, -2])));
        // 3 columns x 2 DataTypeList entries on the 910B; the 310P's
        // configuration is that SoC's whole prototype.
        assert_eq!(op.combinations("Ascend910B2").unwrap().len(), 6);
        let p310 = op.combinations("Ascend310P3").unwrap();
        assert_eq!(p310.len(), 1, "{p310:?}");
        assert_eq!(p310[0].names, ["xs", "y"]);
        assert_eq!(p310[0].dtypes, ["DT_FLOAT16", "DT_FLOAT16"]);
    }

    #[test]
    fn a_tiling_registered_by_op_type_runs_after_its_tiling_parse() {
        let dir = tempfile::tempdir().unwrap();
        let lib = compile_host(dir.path(), &[("registered.cpp", REGISTERED_HOST_CPP)]).unwrap();
        let req = TilingRequest {
            op_type: Some("Registered".into()),
            inputs: vec![
                (Dtype::Float16, vec![16]),
                (Dtype::Float16, vec![16]),
                (Dtype::Int32, vec![1]),
            ],
            outputs: vec![(Dtype::Float16, vec![16])],
            attrs: vec![attr("mode", AttrValue::Str("x".into()))],
            platform: platform(),
            input_params: vec![],
            output_params: vec![],
            input_data: vec![],
            lib_api_workspace: 0,
        };
        let info = run_tiling(&lib, &req).unwrap();
        assert_eq!(info.block_dim, 48);
        assert_eq!(info.tiling_key, 196_352);
        assert_eq!(info.data, 9u32.to_le_bytes());
    }

    /// A tiling that reads a tensor list, an optional input and the values
    /// of a value-depend input, and writes what it saw into the tiling
    /// data (as int64 words).
    const LISTS_HOST_CPP: &str = r#"
#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus Tiling(gert::TilingContext* context) {
  std::vector<int64_t> seen;
  seen.push_back((int64_t)context->GetComputeNodeInputNum());
  const gert::AnchorInstanceInfo* xs = context->GetIrInputInstanceInfo(0);
  seen.push_back((int64_t)xs->GetInstanceStart());
  seen.push_back((int64_t)xs->GetInstantiationNum());
  for (size_t i = 0;; ++i) {
    const gert::StorageShape* shape = context->GetDynamicInputShape(0, i);
    if (shape == nullptr) break;
    seen.push_back(shape->GetStorageShape().GetShapeSize());
    seen.push_back((int64_t)context->GetDynamicInputTensor(0, i)->GetDataType());
  }
  const gert::StorageShape* bias = context->GetOptionalInputShape(1);
  seen.push_back(bias == nullptr ? -1 : bias->GetStorageShape().GetShapeSize());
  const gert::Tensor* axes = context->GetOptionalInputTensor(2);
  const int32_t* values = axes->GetData<int32_t>();
  for (int64_t k = 0; k < axes->GetShapeSize(); ++k) seen.push_back(values[k]);
  seen.push_back((int64_t)context->GetInputShape(context->GetComputeNodeInputNum() - 1)->GetStorageShape().GetDim(0));
  for (int64_t v : seen) context->GetRawTilingData()->Append(v);
  context->SetBlockDim(1);
  return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
namespace ops {
class Lists : public OpDef {
 public:
  explicit Lists(const char* name) : OpDef(name) {
    this->Input("xs").ParamType(DYNAMIC).DataType({ge::DT_FLOAT16, ge::DT_FLOAT});
    this->Input("bias").ParamType(OPTIONAL).DataType({ge::DT_FLOAT16, ge::DT_FLOAT});
    this->Input("axes").ParamType(REQUIRED).ValueDepend(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32});
    this->Output("ys").ParamType(DYNAMIC).DataType({ge::DT_FLOAT16, ge::DT_FLOAT});
    this->AICore().SetTiling(optiling::Tiling);
  }
};
OP_ADD(Lists);
}  // namespace ops
"#;

    /// A tiling header written the way CANN project code writes its
    /// helpers beside the TilingData: GE types as members, a gert context
    /// pointer, a compile-info accessor and a format unpacked with
    /// ge::GetPrimaryFormat. The kernel unit compiles the same header.
    const HELPERS_TILING_H: &str = r#"
#ifndef HELPERS_TILING_H
#define HELPERS_TILING_H
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(HelpersTiling)
  TILING_DATA_FIELD_DEF(int64_t, a);
  TILING_DATA_FIELD_DEF(int64_t, b);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Helpers, HelpersTiling)
struct HelperInfo {
  ge::DataType dtype{ge::DT_FLOAT};
  const ge::char_t* name = nullptr;
  gert::TilingContext* context = nullptr;
};
template <typename T>
inline const T* CompileInfoOf(gert::TilingParseContext* context) {
  return context->GetCompiledInfo<T>();
}
inline ge::Format PlainFormat(int32_t stored) {
  return static_cast<ge::Format>(ge::GetPrimaryFormat(stored));
}
// Not inline: each host source that includes this header defines it.
int64_t Twice(int64_t v) { return 2 * v; }
}  // namespace optiling
#endif
"#;

    /// Two host sources (tiling, OpDef), both including the header.
    const HELPERS_HOST_CPP: &str = r#"
#include "helpers_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus Tiling(gert::TilingContext* context) {
  HelpersTiling t;
  const gert::ComputeNodeInfo* node = context->GetComputeNodeInfo();
  const bool same = *context->GetInputShape(0) == *context->GetInputShape(1);
  const bool differ = *context->GetInputShape(0) != *context->GetOutputShape(0);
  int32_t packed = ge::GetFormatFromSub(ge::FORMAT_FRACTAL_Z, 16);
  t.set_a(Twice((int64_t)node->GetInputsNum() * 1000 + (int64_t)node->GetOutputsNum() * 100 +
                (same ? 10 : 0) + (differ ? 1 : 0)));
  t.set_b((int64_t)PlainFormat(packed) * 1000000 + ge::GetSubFormat(packed) * 1000 +
          context->GetPlatformInfo()->GetCoreNum());
  ge::char_t name[] = "h";
  HelperInfo info{ge::DT_FLOAT16, name, context};
  if (info.context != context || ge::GRAPH_NOT_CHANGED == ge::GRAPH_SUCCESS) return ge::GRAPH_FAILED;
  t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
  context->GetRawTilingData()->SetDataSize(t.GetDataSize());
  context->SetBlockDim(1);
  return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"#;

    const HELPERS_DEF_CPP: &str = r#"
#include "helpers_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {
ge::graphStatus Tiling(gert::TilingContext* context);
}
namespace ops {
class Helpers : public OpDef {
 public:
  explicit Helpers(const char* name) : OpDef(name) {
    this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT});
    this->Input("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT});
    this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT});
  }
};
OP_ADD(Helpers);
}  // namespace ops
"#;

    #[test]
    fn cann_helpers_beside_the_tiling_data_compile_on_both_sides_and_run() {
        let dir = tempfile::tempdir().unwrap();
        // Host: both sources in one library, as the build links them (the
        // header's non-inline function is defined twice; CANN links the
        // two into separate libraries).
        let op_host = dir.path().join("op_host");
        std::fs::create_dir_all(&op_host).unwrap();
        std::fs::write(op_host.join("helpers_tiling.h"), HELPERS_TILING_H).unwrap();
        let host = HELPERS_HOST_CPP
            .replace("static ge::graphStatus Tiling", "ge::graphStatus Tiling")
            + "namespace optiling { IMPL_OP_OPTILING(Helpers).Tiling(Tiling); }\n";
        std::fs::write(op_host.join("helpers.cpp"), host).unwrap();
        std::fs::write(op_host.join("helpers_def.cpp"), HELPERS_DEF_CPP).unwrap();
        let lib = dir.path().join("libhost.so");
        let out = Command::new("g++")
            .args(["-std=c++17", "-O1", "-shared", "-fPIC"])
            .args(crate::build::HOST_LINK_FLAGS)
            .arg("-I")
            .arg(format!("{CRATE}/include"))
            .arg("-I")
            .arg(&op_host)
            .arg(op_host.join("helpers.cpp"))
            .arg(op_host.join("helpers_def.cpp"))
            .arg(format!("{CRATE}/runtime_src/host_entry.cpp"))
            .arg("-o")
            .arg(&lib)
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let req = TilingRequest {
            op_type: Some("Helpers".into()),
            inputs: vec![(Dtype::Float32, vec![4, 8]), (Dtype::Float32, vec![4, 8])],
            outputs: vec![(Dtype::Float32, vec![4, 9])],
            attrs: vec![],
            platform: platform(),
            input_params: vec![],
            output_params: vec![],
            input_data: vec![],
            lib_api_workspace: 0,
        };
        let info = run_tiling(&lib, &req).unwrap();
        // 2 inputs, 1 output, equal input shapes, output differs: 2111.
        assert_eq!(
            i64::from_le_bytes(info.data[0..8].try_into().unwrap()),
            2 * 2111
        );
        // FRACTAL_Z (4) with sub-format 16; 48 AIV cores.
        assert_eq!(
            i64::from_le_bytes(info.data[8..16].try_into().unwrap()),
            4_016_048
        );
        // Kernel side: the same header, force-included.
        let tiling_h = op_host.join("helpers_tiling.h");
        syntax_check(
            dir.path(),
            &[(
                "k.cpp",
                "#include \"kernel_operator.h\"\nextern \"C\" __global__ __aicore__ void helpers(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR w, GM_ADDR tiling) {\n  GET_TILING_DATA(t, tiling);\n  (void)t;\n}\n",
            )],
            &["-DASCENDOPT_KERNEL_SIDE", "-include", tiling_h.to_str().unwrap()],
        )
        .unwrap();
    }

    fn words(data: &[u8]) -> Vec<i64> {
        data.chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn tensor_lists_optional_inputs_and_values_reach_the_tiling_by_opdef_index() {
        let dir = tempfile::tempdir().unwrap();
        let lib = compile_host(dir.path(), &[("lists.cpp", LISTS_HOST_CPP)]).unwrap();
        let axes: Vec<u8> = [3i32, -1].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut req = TilingRequest {
            op_type: None,
            inputs: vec![
                (Dtype::Float32, vec![4, 8]),
                (Dtype::Float32, vec![5]),
                (Dtype::Float32, vec![2, 3]),
                (Dtype::Int32, vec![2]),
            ],
            outputs: vec![(Dtype::Float32, vec![4, 8]), (Dtype::Float32, vec![5])],
            input_params: vec![0, 0, 0, 2],
            output_params: vec![0, 0],
            input_data: vec![None, None, None, Some(axes.clone())],
            attrs: vec![],
            platform: platform(),
            lib_api_workspace: 0,
        };
        let info = run_tiling(&lib, &req).unwrap();
        // 4 tensors; the list starts at 0 with 3; sizes and dtypes (0 is
        // DT_FLOAT); no bias; the axes' values; the last input's dim 0.
        assert_eq!(
            words(&info.data),
            [4, 0, 3, 32, 0, 5, 0, 6, 0, -1, 3, -1, 2]
        );
        // With the bias: its size, and the list still found by index.
        req.inputs.insert(3, (Dtype::Float32, vec![7]));
        req.input_params = vec![0, 0, 0, 1, 2];
        req.input_data = vec![None, None, None, None, Some(axes)];
        let info = run_tiling(&lib, &req).unwrap();
        assert_eq!(words(&info.data)[9], 7);
        // A value-depend input whose values are not given: the tiling
        // fails naming it.
        req.input_data = vec![];
        let err = run_tiling(&lib, &req).unwrap_err().to_string();
        assert!(
            err.contains("Tensor::GetData of 'axes'") && err.contains("value_depend = true"),
            "{err}"
        );
        // Two tensors for the REQUIRED input.
        req.input_params = vec![0, 0, 0, 2, 2];
        let err = run_tiling(&lib, &req).unwrap_err().to_string();
        assert!(err.contains("2 tensors for input 'axes'"), "{err}");
    }

    #[test]
    fn run_tiling_takes_the_only_op_of_a_library() {
        let dir = tempfile::tempdir().unwrap();
        let lib = compile_host(dir.path(), &[("add_custom.cpp", SINGLE_HOST_CPP)]).unwrap();
        let req = TilingRequest {
            op_type: None,
            inputs: vec![
                (Dtype::Float16, vec![8, 2048]),
                (Dtype::Float16, vec![8, 2048]),
            ],
            outputs: vec![(Dtype::Float16, vec![8, 2048])],
            attrs: vec![],
            platform: platform(),
            input_params: vec![],
            output_params: vec![],
            input_data: vec![],
            lib_api_workspace: 0,
        };
        let info = run_tiling(&lib, &req).unwrap();
        assert_eq!(
            info,
            TilingInfo {
                block_dim: 8,
                tiling_key: 0,
                data: [16384u32.to_le_bytes(), 8u32.to_le_bytes()].concat(),
                workspace: 0,
                output_init: Vec::new(),
            }
        );
        let missing = run_tiling(&dir.path().join("nope.so"), &req).unwrap_err();
        assert!(matches!(missing, HostError::Load { .. }), "{missing:?}");
    }

    #[test]
    fn unsupported_host_apis_fail_to_compile_with_their_name() {
        let cases = [
            (
                "uint64_t bw; p.GetCoreMemBw(platform_ascendc::CoreMemType::L2, bw);",
                "not supported by the ascendopt simulator: PlatformAscendC::GetCoreMemBw",
            ),
            (
                "context->GetAttrs()->GetListListInt(0);",
                "not supported by the ascendopt simulator: RuntimeAttrs::GetListListInt",
            ),
            (
                "p.GetCurNpuArch();",
                "not supported by the ascendopt simulator: PlatformAscendC::GetCurNpuArch",
            ),
            (
                "const double* d = context->GetAttrs()->GetAttrPointer<double>(0); (void)d;",
                "not supported by the ascendopt simulator: GetAttrPointer<T> with this T",
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (call, message) in cases {
            let src = format!(
                "#include \"register/op_def_registry.h\"\n\
                 static ge::graphStatus Tiling(gert::TilingContext* context) {{\n\
                   auto p = platform_ascendc::PlatformAscendC(context->GetPlatformInfo()); (void)p;\n\
                   {call}\n\
                   return ge::GRAPH_SUCCESS;\n\
                 }}\n\
                 ge::graphStatus (*keep)(gert::TilingContext*) = Tiling;\n"
            );
            let err = syntax_check(dir.path(), &[("t.cpp", &src)], &[])
                .unwrap_err()
                .stderr;
            assert!(
                err.contains(&format!("error: static assertion failed: {message}")),
                "{call}\n{err}"
            );
        }
    }

    /// An OpDef whose outputs declare initial values (InitValue, guide
    /// 6.4.3.4.17) in each of its three forms.
    const INIT_VALUE_HOST_CPP: &str = r#"
#include <vector>
#include "register/op_def_registry.h"
static ge::graphStatus Tiling(gert::TilingContext* context) {
  context->SetBlockDim(1);
  context->SetNeedAtomic(true);
  return ge::GRAPH_SUCCESS;
}
namespace ops {
class Hist : public OpDef {
 public:
  explicit Hist(const char* name) : OpDef(name) {
    this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16});
    this->Output("zero").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).InitValue(0);
    this->Output("one").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32})
        .InitValue({ScalarType::INT32, -2});
    std::vector<ScalarVar> per_column = {ScalarVar(ScalarType::FLOAT32, 1.5f),
                                         ScalarVar(ScalarType::FLOAT16, -2.0)};
    this->Output("col").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).InitValue(per_column);
    this->Output("plain").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16});
    this->AICore().SetTiling(Tiling);
    this->AICore().AddConfig("ascend910b");
  }
};
OP_ADD(Hist);
}  // namespace ops
"#;

    #[test]
    fn init_values_of_outputs_come_back_per_output_in_their_scalar_type() {
        let dir = tempfile::tempdir().unwrap();
        let lib = compile_host(dir.path(), &[("hist.cpp", INIT_VALUE_HOST_CPP)]).unwrap();
        let req = |dt: Dtype| TilingRequest {
            op_type: None,
            inputs: vec![(dt, vec![8])],
            outputs: vec![
                (dt, vec![8]),
                (Dtype::Int32, vec![8]),
                (dt, vec![8]),
                (dt, vec![8]),
            ],
            attrs: vec![],
            platform: platform(),
            input_params: vec![],
            output_params: vec![],
            input_data: vec![],
            lib_api_workspace: 0,
        };
        let init = |output: u32, pattern: &[u8]| OutputInit {
            output,
            pattern: pattern.to_vec(),
        };
        // float column: zero as a uint64, -2 as an int32, 1.5f (0x3FC00000).
        let info = run_tiling(&lib, &req(Dtype::Float32)).unwrap();
        assert_eq!(
            info.output_init,
            vec![
                init(0, &[0; 8]),
                init(1, &(-2i32).to_le_bytes()),
                init(2, &0x3FC0_0000u32.to_le_bytes()),
            ]
        );
        // half column: the list's second value, -2.0 as a half (0xC000).
        let info = run_tiling(&lib, &req(Dtype::Float16)).unwrap();
        assert_eq!(info.output_init[2], init(2, &0xC000u16.to_le_bytes()));
    }

    #[test]
    fn init_value_of_a_nonzero_integer_is_refused_with_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        let src = INIT_VALUE_HOST_CPP.replace(".InitValue(0)", ".InitValue(3)");
        let lib = compile_host(dir.path(), &[("hist.cpp", &src)]).unwrap();
        let req = TilingRequest {
            op_type: None,
            inputs: vec![(Dtype::Float32, vec![8])],
            outputs: vec![(Dtype::Float32, vec![8]); 4],
            attrs: vec![],
            platform: platform(),
            input_params: vec![],
            output_params: vec![],
            input_data: vec![],
            lib_api_workspace: 0,
        };
        let err = run_tiling(&lib, &req).unwrap_err().to_string();
        assert!(err.contains("InitValue(uint64_t) takes only 0"), "{err}");
    }

    /// A kernel that reads the probe tiling struct; its static_asserts pin
    /// the offsets the host tests decode.
    const KERNEL_CPP: &str = r#"
#include "kernel_operator.h"
#include <stddef.h>
static_assert(sizeof(ProbeTiling) == 80, "size");
static_assert(offsetof(ProbeTiling, lastDim) == 8, "lastDim");
static_assert(offsetof(ProbeTiling, modeLen) == 26, "modeLen");
static_assert(offsetof(ProbeTiling, axes) == 28, "axes");
static_assert(offsetof(ProbeTiling, sub) == 48, "sub");
static_assert(offsetof(ProbeTiling, ubSize) == 64, "ubSize");
static_assert(offsetof(ProbeTiling, aic) == 76, "aic");
struct PlainTiling { uint32_t n; };
extern "C" __global__ __aicore__ void probe(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
  (void)x; (void)workspace;
  GET_TILING_DATA(td, tiling);
  static_assert(std::is_same<decltype(td), ProbeTiling>::value, "default struct");
  uint32_t n = td.total + td.axes[3] + td.sub.wlen;
  if (TILING_KEY_IS(10)) n += 1;
  GET_TILING_DATA_WITH_STRUCT(ProbeSub, sub, tiling);
  GET_TILING_DATA_MEMBER(ProbeTiling, axes, axes, tiling);
  static_assert(sizeof(axes) == 16, "member");
  n += (uint32_t)sub.wlen + axes[0];
  (void)n;
}
extern "C" __global__ __aicore__ void plain(GM_ADDR tiling) {
  REGISTER_TILING_DEFAULT(PlainTiling);
  GET_TILING_DATA(td, tiling);
  static_assert(std::is_same<decltype(td), PlainTiling>::value, "REGISTER_TILING_DEFAULT");
  (void)td.n;
}
"#;

    #[test]
    fn kernel_side_reads_the_same_struct() {
        let dir = tempfile::tempdir().unwrap();
        let tiling_h = dir.path().join("probe_tiling.h");
        let include = tiling_h.to_str().unwrap();
        syntax_check(
            dir.path(),
            &[("k.cpp", KERNEL_CPP), ("probe_tiling.h", PROBE_TILING_H)],
            &["-DASCENDOPT_KERNEL_SIDE", "-include", include],
        )
        .unwrap();
        // A per-tiling-key struct beside the default one: GET_TILING_DATA
        // still reads the default (the launch stops if it runs under
        // that key, see runtime_launch.rs).
        let keyed = PROBE_TILING_H.replace(
            "REGISTER_TILING_DATA_CLASS(AddProbe,",
            "REGISTER_TILING_DATA_CLASS(AddProbe_2, ProbeSub)\nREGISTER_TILING_DATA_CLASS(AddProbe,",
        );
        syntax_check(
            dir.path(),
            &[("k.cpp", KERNEL_CPP), ("probe_tiling.h", &keyed)],
            &["-DASCENDOPT_KERNEL_SIDE", "-include", include],
        )
        .unwrap();
        // Only keyed registrations and two structs: no default to read.
        let keyed_only = PROBE_TILING_H.replace(
            "REGISTER_TILING_DATA_CLASS(AddProbe,",
            "REGISTER_TILING_DATA_CLASS(AddProbe_2,",
        );
        let err = syntax_check(
            dir.path(),
            &[("k.cpp", KERNEL_CPP), ("probe_tiling.h", &keyed_only)],
            &["-DASCENDOPT_KERNEL_SIDE", "-include", include],
        )
        .unwrap_err()
        .stderr;
        assert!(
            err.contains("GET_TILING_DATA: no default tiling struct"),
            "{err}"
        );
    }
}
