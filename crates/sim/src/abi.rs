//! `#[repr(C)]` mirrors of `include/ascendopt/abi.h`, the table of calls
//! between the AscendC emulation headers and this runtime.
//!
//! Invariant: every struct here matches `abi.h` field by field; a layout
//! test compiles a C++ probe that prints the C sizes and offsets and
//! compares them with these.

#![allow(missing_docs)]

use std::ffi::{c_char, c_void, CStr};

/// Version of the kernel ABI (`ASC_ABI_VERSION`).
pub const ABI_VERSION: u32 = 6;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscLoc {
    pub file: *const c_char,
    pub line: i32,
}

impl AscLoc {
    /// The file name, or "" when the kernel passed none.
    pub fn file(&self) -> String {
        if self.file.is_null() {
            return String::new();
        }
        // SAFETY: the headers pass `__builtin_FILE()`, a static C string.
        unsafe { CStr::from_ptr(self.file) }
            .to_string_lossy()
            .into_owned()
    }

    /// The line, 0 when unknown.
    pub fn line(&self) -> u32 {
        self.line.max(0) as u32
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AscLocal {
    pub mem: u8,
    pub dtype: u8,
    pub reserved: u16,
    pub addr: u32,
    pub elems: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscVecOp {
    pub op: u32,
    pub dtype: u8,
    pub src_dtype: u8,
    pub form: u8,
    pub round: u8,
    pub dst: AscLocal,
    pub src0: AscLocal,
    pub src1: AscLocal,
    pub src2: AscLocal,
    pub count: u64,
    pub mask: [u64; 2],
    pub repeat: u32,
    pub dst_blk: u32,
    pub src0_blk: u32,
    pub src1_blk: u32,
    pub dst_rep: u32,
    pub src0_rep: u32,
    pub src1_rep: u32,
    pub scalar_bits: u64,
    pub scalar_dtype: u8,
    pub reserved: [u8; 7],
    pub p: [u32; 8],
    pub loc: AscLoc,
}

/// `AscVecForm`.
pub mod form {
    pub const COUNT: u8 = 0;
    pub const MASK_CONT: u8 = 1;
    pub const MASK_BITS: u8 = 2;
    pub const MASK_CUR: u8 = 3;
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscAddr {
    pub mem: u8,
    pub reserved: [u8; 3],
    pub addr: u32,
    pub gm: *mut c_void,
}

/// `AscCopyKind`.
pub mod copy_kind {
    pub const COUNT: u8 = 0;
    pub const PARAMS: u8 = 1;
    pub const PAD: u8 = 2;
    pub const GM_FILL: u8 = 3;
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscCopyOp {
    pub kind: u8,
    pub dtype: u8,
    pub is_pad: u8,
    pub left_pad: u8,
    pub right_pad: u8,
    pub reserved: [u8; 3],
    pub dst: AscAddr,
    pub src: AscAddr,
    pub count: u64,
    pub block_count: u32,
    pub block_len: u32,
    pub src_gap: u32,
    pub dst_gap: u32,
    pub pad_bits: u64,
    pub loc: AscLoc,
}

/// `AscSyncKind`.
pub mod sync_kind {
    pub const SET_FLAG: u32 = 0;
    pub const WAIT_FLAG: u32 = 1;
    pub const BARRIER: u32 = 2;
    pub const ALL: u32 = 3;
    pub const DCACHE: u32 = 4;
    pub const ATOMIC_ADD: u32 = 5;
    pub const ATOMIC_NONE: u32 = 6;
    pub const MASK_COUNT: u32 = 7;
    pub const MASK_NORM: u32 = 8;
    pub const RESET_MASK: u32 = 9;
    pub const ATOMIC_MAX: u32 = 10;
    pub const ATOMIC_MIN: u32 = 11;
    pub const CROSS_SET: u32 = 12;
    pub const CROSS_WAIT: u32 = 13;
}

/// `AscRound` (Cast) codes.
pub mod round {
    pub const NONE: u8 = 0;
    pub const RINT: u8 = 1;
    pub const FLOOR: u8 = 2;
    pub const CEIL: u8 = 3;
    pub const ROUND: u8 = 4;
    pub const TRUNC: u8 = 5;
    pub const ODD: u8 = 6;
    pub const HYBRID: u8 = 7;
}

/// `AscCmp` codes.
pub mod cmp {
    pub const LT: u8 = 0;
    pub const GT: u8 = 1;
    pub const EQ: u8 = 2;
    pub const LE: u8 = 3;
    pub const GE: u8 = 4;
    pub const NE: u8 = 5;
}

pub mod cube_op {
    pub const ND2NZ: u32 = 1;
    pub const LOAD2D: u32 = 2;
    pub const MMAD: u32 = 3;
    pub const FIXPIPE: u32 = 4;
    pub const FILL: u32 = 5;
    pub const LOAD2D_TRANSPOSE: u32 = 6;
    pub const LOAD3D_V2: u32 = 7;
    pub const LOAD3D_V1: u32 = 8;
    pub const SET_FMATRIX: u32 = 9;
    pub const SET_LOAD3D_PAD: u32 = 10;
    pub const SET_LOAD3D_REPEAT: u32 = 11;
    pub const SET_LOAD3D_BOUNDARY: u32 = 12;
}

/// `AscLoad3dFlag` bits of a Load3Dv2's `p[7]`.
pub mod load3d_flag {
    pub const TRANSPOSE: u32 = 1;
    pub const SMALL_K: u32 = 2;
    pub const FMATRIX_RIGHT: u32 = 4;
    pub const SET_FMATRIX: u32 = 8;
    pub const SET_PADDING: u32 = 16;
}

/// `AscQuantMode` codes (Fixpipe quantPre).
pub mod quant {
    pub const NONE: u32 = 0;
    pub const F322F16: u32 = 1;
    pub const F322BF16: u32 = 2;
    pub const DEQF16: u32 = 3;
    pub const VDEQF16: u32 = 4;
    pub const QF322B8_PRE: u32 = 5;
    pub const VQF322B8_PRE: u32 = 6;
    pub const REQ8: u32 = 7;
    pub const VREQ8: u32 = 8;
}

/// `AscCo2Layout` codes (Fixpipe output layout).
pub mod co2_layout {
    pub const NZ: u32 = 0;
    pub const ROW_MAJOR: u32 = 1;
    pub const COLUMN_MAJOR: u32 = 2;
}

/// `ASC_MEM_NONE`: an absent operand.
pub const MEM_NONE: u8 = 0xff;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscCubeOp {
    pub op: u32,
    pub dtype: u8,
    pub src_dtype: u8,
    pub src1_dtype: u8,
    pub bias_dtype: u8,
    pub dst: AscAddr,
    pub src0: AscAddr,
    pub src1: AscAddr,
    pub bias: AscAddr,
    pub scalar: u64,
    pub p: [u32; 12],
    pub loc: AscLoc,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct AscRuntime {
    pub abi_version: u32,
    pub reserved: u32,
    pub block_idx: extern "C-unwind" fn() -> i64,
    pub block_num: extern "C-unwind" fn() -> i64,
    pub tiling_key: extern "C-unwind" fn() -> u64,
    pub system_cycle: extern "C-unwind" fn() -> u64,
    pub que_create:
        extern "C-unwind" fn(pos: u32, depth: u32, num: u32, len: u32, loc: AscLoc) -> i32,
    pub buf_create: extern "C-unwind" fn(pos: u32, len: u32, loc: AscLoc) -> i32,
    pub buf_get: extern "C-unwind" fn(handle: i32, dtype: u8, elems: u32, loc: AscLoc) -> AscLocal,
    pub que_alloc: extern "C-unwind" fn(handle: i32, dtype: u8, loc: AscLoc) -> AscLocal,
    pub que_enque: extern "C-unwind" fn(handle: i32, t: AscLocal, loc: AscLoc),
    pub que_deque: extern "C-unwind" fn(handle: i32, dtype: u8, loc: AscLoc) -> AscLocal,
    pub que_free: extern "C-unwind" fn(handle: i32, t: AscLocal, loc: AscLoc),
    pub pipe_reset: extern "C-unwind" fn(loc: AscLoc),
    pub fetch_event_id: extern "C-unwind" fn(event: u32, loc: AscLoc) -> i32,
    pub release_event_id: extern "C-unwind" fn(event: u32, id: i32, loc: AscLoc),
    pub vec: extern "C-unwind" fn(op: *const AscVecOp),
    pub copy: extern "C-unwind" fn(op: *const AscCopyOp),
    pub sync: extern "C-unwind" fn(kind: u32, a: u32, b: u32, loc: AscLoc),
    pub set_vector_mask: extern "C-unwind" fn(dtype: u8, hi: u64, lo: u64, loc: AscLoc),
    pub local_get: extern "C-unwind" fn(t: AscLocal, index: u32, loc: AscLoc) -> u64,
    pub local_set: extern "C-unwind" fn(t: AscLocal, index: u32, bits: u64, loc: AscLoc),
    pub gm_get: extern "C-unwind" fn(p: *const c_void, dtype: u8, loc: AscLoc) -> u64,
    pub gm_set: extern "C-unwind" fn(p: *mut c_void, dtype: u8, bits: u64, loc: AscLoc),
    pub gm_read_bytes:
        extern "C-unwind" fn(p: *const c_void, dst: *mut c_void, len: u64, loc: AscLoc),
    pub print: extern "C-unwind" fn(text: *const c_char),
    pub trap: extern "C-unwind" fn(message: *const c_char, loc: AscLoc),
    // Appended in ABI 2.
    pub local_ref: extern "C-unwind" fn(t: AscLocal, index: u32, loc: AscLoc) -> *mut c_void,
    pub vec_result: extern "C-unwind" fn(op: *const AscVecOp) -> u64,
    pub local_rest: extern "C-unwind" fn(pos: u32, dtype: u8, loc: AscLoc) -> AscLocal,
    pub workspace_base: extern "C-unwind" fn() -> *mut c_void,
    pub sys_workspace_bytes: extern "C-unwind" fn() -> u64,
    // Appended in ABI 3.
    pub scalar_touch: extern "C-unwind" fn(line: *const c_void, store: u32) -> i32,
    // Appended in ABI 4.
    pub cube: extern "C-unwind" fn(op: *const AscCubeOp),
    // Appended in ABI 5.
    pub core_info: extern "C-unwind" fn(what: u32) -> i64,
    pub group_mailbox: extern "C-unwind" fn() -> *mut c_void,
    // Appended in ABI 6.
    pub scalar_stray:
        extern "C-unwind" fn(addr: *const c_void, size: u64, store: u32, pc: *const c_void),
    pub stray_call: extern "C-unwind" fn(target: *const c_void, pc: *const c_void),
}

/// `AscScalarCounters`: the kernel's own code on one block thread.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AscScalarCounters {
    pub alu: u64,
    pub loads: u64,
    pub stores: u64,
    pub gm_accesses: u64,
    pub recent: [u64; 4],
}

// The instrumentation pass writes these offsets into kernel assembly.
const _: () = assert!(std::mem::offset_of!(AscScalarCounters, alu) == 0);
const _: () = assert!(std::mem::offset_of!(AscScalarCounters, loads) == 8);
const _: () = assert!(std::mem::offset_of!(AscScalarCounters, stores) == 16);
