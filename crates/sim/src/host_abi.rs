//! `#[repr(C)]` mirrors of `include/ascendopt/host_abi.h`, the call from the
//! worker into a compiled host (op_host) library.
//!
//! Invariant: every struct here matches `host_abi.h` field by field; a
//! layout test compiles a C++ probe that prints the C sizes and offsets and
//! compares them with these.

#![allow(missing_docs)]

use std::ffi::{c_char, CStr};

/// Version of the host ABI (`ASC_HOST_ABI_VERSION`).
pub const HOST_ABI_VERSION: u32 = 4;
/// `ASC_HOST_MAX_DIMS`.
pub const MAX_DIMS: usize = 8;
/// `ASC_HOST_MAX_WORKSPACES`.
pub const MAX_WORKSPACES: usize = 8;
/// `ASC_HOST_MAX_OUTPUT_INITS`.
pub const MAX_OUTPUT_INITS: usize = 64;
/// Name of the entry point every host library exports.
pub const ENTRY_SYMBOL: &[u8] = b"ascendopt_host_tiling\0";

/// `AscAttrKind` codes.
pub mod attr_kind {
    pub const INT: u32 = 0;
    pub const FLOAT: u32 = 1;
    pub const BOOL: u32 = 2;
    pub const STR: u32 = 3;
    pub const LIST_INT: u32 = 4;
    pub const LIST_FLOAT: u32 = 5;
}

/// `AscHostErrorKind` codes.
pub mod error_kind {
    pub const NONE: u32 = 0;
    pub const REQUEST: u32 = 1;
    pub const TILING: u32 = 2;
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AscHostTensor {
    pub dtype: u32,
    pub ndim: u32,
    pub dims: [i64; MAX_DIMS],
    pub param: u32,
    pub reserved: u32,
    pub data: *const u8,
    pub data_len: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscHostAttr {
    pub name: *const c_char,
    pub kind: u32,
    pub list_len: u32,
    pub i: i64,
    pub f: f64,
    pub s: *const c_char,
    pub list_i: *const i64,
    pub list_f: *const f32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscHostPlatform {
    pub soc_version: *const c_char,
    pub core_num_aiv: u32,
    pub core_num_aic: u32,
    pub ub_size: u64,
    pub l1_size: u64,
    pub l0a_size: u64,
    pub l0b_size: u64,
    pub l0c_size: u64,
    pub l2_size: u64,
    pub hbm_size: u64,
    pub lib_api_workspace: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscHostTilingIn {
    pub abi_version: u32,
    pub op_type: *const c_char,
    pub n_inputs: u32,
    pub inputs: *const AscHostTensor,
    pub n_outputs: u32,
    pub outputs: *const AscHostTensor,
    pub n_attrs: u32,
    pub attrs: *const AscHostAttr,
    pub platform: AscHostPlatform,
    pub tiling_buf: *mut u8,
    pub tiling_capacity: u64,
}

/// An output's initial value (`AscHostOutputInit`): `bits`, an element of
/// `width` bytes, repeated over the output before the launch.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct AscHostOutputInit {
    pub output: u32,
    pub width: u32,
    pub bits: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct AscHostTilingOut {
    pub status: i32,
    pub error_kind: u32,
    pub block_dim: u32,
    pub tiling_key: u64,
    pub tiling_size: u64,
    pub n_workspaces: u32,
    pub workspaces: [u64; MAX_WORKSPACES],
    pub message: [c_char; 1024],
    pub n_output_inits: u32,
    pub output_inits: [AscHostOutputInit; MAX_OUTPUT_INITS],
}

impl AscHostTilingOut {
    /// An all-zero record for the library to fill.
    pub fn zeroed() -> Self {
        AscHostTilingOut {
            status: 0,
            error_kind: error_kind::NONE,
            block_dim: 0,
            tiling_key: 0,
            tiling_size: 0,
            n_workspaces: 0,
            workspaces: [0; MAX_WORKSPACES],
            message: [0; 1024],
            n_output_inits: 0,
            output_inits: [AscHostOutputInit::default(); MAX_OUTPUT_INITS],
        }
    }

    /// The message, up to its NUL (the whole buffer if there is none).
    pub fn message(&self) -> String {
        let bytes: Vec<u8> = self.message.iter().map(|&c| c as u8).collect();
        match CStr::from_bytes_until_nul(&bytes) {
            Ok(s) => s.to_string_lossy().into_owned(),
            Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
        }
    }
}

/// `ascendopt_host_tiling`.
pub type HostTilingFn = unsafe extern "C" fn(*const AscHostTilingIn, *mut AscHostTilingOut) -> i32;

/// Name of the entry point that describes the registered OpDefs as JSON.
pub const DESCRIBE_SYMBOL: &[u8] = b"ascendopt_host_describe\0";

/// `int32_t ascendopt_host_describe(char* buf, uint64_t cap, uint64_t* len)`.
pub type HostDescribeFn = unsafe extern "C" fn(*mut c_char, u64, *mut u64) -> i32;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};
    use std::process::Command;

    /// Prints `name size` for each struct and `Struct.field offset` for each
    /// field, as the C compiler lays them out.
    const PROBE: &str = r#"
#include <stdio.h>
#include <stddef.h>
#include "ascendopt/host_abi.h"
#define S(T) printf(#T " %zu\n", sizeof(T));
#define F(T, f) printf(#T "." #f " %zu\n", offsetof(T, f));
int main() {
  printf("version %u\n", ASC_HOST_ABI_VERSION);
  printf("max_dims %d\nmax_workspaces %d\n", ASC_HOST_MAX_DIMS, ASC_HOST_MAX_WORKSPACES);
  printf("err_request %d\nerr_tiling %d\nattr_list_float %d\n", ASC_HOST_ERR_REQUEST, ASC_HOST_ERR_TILING, ASC_ATTR_LIST_FLOAT);
  S(AscHostTensor) F(AscHostTensor, dtype) F(AscHostTensor, ndim) F(AscHostTensor, dims)
  F(AscHostTensor, param) F(AscHostTensor, data) F(AscHostTensor, data_len)
  S(AscHostAttr) F(AscHostAttr, name) F(AscHostAttr, kind) F(AscHostAttr, list_len) F(AscHostAttr, i)
  F(AscHostAttr, f) F(AscHostAttr, s) F(AscHostAttr, list_i) F(AscHostAttr, list_f)
  S(AscHostPlatform) F(AscHostPlatform, soc_version) F(AscHostPlatform, core_num_aiv)
  F(AscHostPlatform, core_num_aic) F(AscHostPlatform, ub_size) F(AscHostPlatform, l1_size)
  F(AscHostPlatform, l0a_size) F(AscHostPlatform, l0b_size) F(AscHostPlatform, l0c_size)
  F(AscHostPlatform, l2_size) F(AscHostPlatform, hbm_size) F(AscHostPlatform, lib_api_workspace)
  S(AscHostTilingIn) F(AscHostTilingIn, abi_version) F(AscHostTilingIn, op_type) F(AscHostTilingIn, n_inputs)
  F(AscHostTilingIn, inputs) F(AscHostTilingIn, n_outputs) F(AscHostTilingIn, outputs)
  F(AscHostTilingIn, n_attrs) F(AscHostTilingIn, attrs) F(AscHostTilingIn, platform)
  F(AscHostTilingIn, tiling_buf) F(AscHostTilingIn, tiling_capacity)
  S(AscHostTilingOut) F(AscHostTilingOut, status) F(AscHostTilingOut, error_kind) F(AscHostTilingOut, block_dim)
  F(AscHostTilingOut, tiling_key) F(AscHostTilingOut, tiling_size) F(AscHostTilingOut, n_workspaces)
  F(AscHostTilingOut, workspaces) F(AscHostTilingOut, message)
  F(AscHostTilingOut, n_output_inits) F(AscHostTilingOut, output_inits)
  S(AscHostOutputInit) F(AscHostOutputInit, output) F(AscHostOutputInit, width) F(AscHostOutputInit, bits)
  printf("max_output_inits %d\n", ASC_HOST_MAX_OUTPUT_INITS);
  return 0;
}
"#;

    fn rust_layout() -> Vec<String> {
        macro_rules! s {
            ($t:ty) => {
                format!("{} {}", stringify!($t), size_of::<$t>())
            };
        }
        macro_rules! f {
            ($t:ty, $f:ident) => {
                format!(
                    "{}.{} {}",
                    stringify!($t),
                    stringify!($f),
                    offset_of!($t, $f)
                )
            };
        }
        vec![
            format!("version {HOST_ABI_VERSION}"),
            format!("max_dims {MAX_DIMS}"),
            format!("max_workspaces {MAX_WORKSPACES}"),
            format!("err_request {}", error_kind::REQUEST),
            format!("err_tiling {}", error_kind::TILING),
            format!("attr_list_float {}", attr_kind::LIST_FLOAT),
            s!(AscHostTensor),
            f!(AscHostTensor, dtype),
            f!(AscHostTensor, ndim),
            f!(AscHostTensor, dims),
            f!(AscHostTensor, param),
            f!(AscHostTensor, data),
            f!(AscHostTensor, data_len),
            s!(AscHostAttr),
            f!(AscHostAttr, name),
            f!(AscHostAttr, kind),
            f!(AscHostAttr, list_len),
            f!(AscHostAttr, i),
            f!(AscHostAttr, f),
            f!(AscHostAttr, s),
            f!(AscHostAttr, list_i),
            f!(AscHostAttr, list_f),
            s!(AscHostPlatform),
            f!(AscHostPlatform, soc_version),
            f!(AscHostPlatform, core_num_aiv),
            f!(AscHostPlatform, core_num_aic),
            f!(AscHostPlatform, ub_size),
            f!(AscHostPlatform, l1_size),
            f!(AscHostPlatform, l0a_size),
            f!(AscHostPlatform, l0b_size),
            f!(AscHostPlatform, l0c_size),
            f!(AscHostPlatform, l2_size),
            f!(AscHostPlatform, hbm_size),
            f!(AscHostPlatform, lib_api_workspace),
            s!(AscHostTilingIn),
            f!(AscHostTilingIn, abi_version),
            f!(AscHostTilingIn, op_type),
            f!(AscHostTilingIn, n_inputs),
            f!(AscHostTilingIn, inputs),
            f!(AscHostTilingIn, n_outputs),
            f!(AscHostTilingIn, outputs),
            f!(AscHostTilingIn, n_attrs),
            f!(AscHostTilingIn, attrs),
            f!(AscHostTilingIn, platform),
            f!(AscHostTilingIn, tiling_buf),
            f!(AscHostTilingIn, tiling_capacity),
            s!(AscHostTilingOut),
            f!(AscHostTilingOut, status),
            f!(AscHostTilingOut, error_kind),
            f!(AscHostTilingOut, block_dim),
            f!(AscHostTilingOut, tiling_key),
            f!(AscHostTilingOut, tiling_size),
            f!(AscHostTilingOut, n_workspaces),
            f!(AscHostTilingOut, workspaces),
            f!(AscHostTilingOut, message),
            f!(AscHostTilingOut, n_output_inits),
            f!(AscHostTilingOut, output_inits),
            s!(AscHostOutputInit),
            f!(AscHostOutputInit, output),
            f!(AscHostOutputInit, width),
            f!(AscHostOutputInit, bits),
            format!("max_output_inits {MAX_OUTPUT_INITS}"),
        ]
    }

    #[test]
    fn layout_matches_the_c_header() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("probe.cpp");
        let exe = dir.path().join("probe");
        std::fs::write(&src, PROBE).unwrap();
        let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
        let status = Command::new("g++")
            .args(["-std=c++17", "-I", include])
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .status()
            .unwrap();
        assert!(status.success());
        let out = Command::new(&exe).output().unwrap();
        let c_lines: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        assert_eq!(c_lines, rust_layout());
    }

    #[test]
    fn message_stops_at_nul() {
        let mut out = AscHostTilingOut::zeroed();
        for (dst, src) in out.message.iter_mut().zip(b"bad attr\0tail") {
            *dst = *src as c_char;
        }
        assert_eq!(out.message(), "bad attr");
    }
}
