//! The `AscRuntime` function table handed to kernel libraries: one
//! `extern "C-unwind"` function per ABI entry, each forwarding to the
//! current block (see [`super::block::with_block`]), plus the small
//! handlers for flags, barriers, masks and scalar access.

use super::block::{with_block, with_block_own_faults, Block};
use super::fault::Fault;
use super::gm::LineClass;
use super::product::Product;
use super::queue::dtype_size;
use super::vec::{self, MaskState};
use crate::abi::{
    cube_op, sync_kind, AscCopyOp, AscCubeOp, AscLoc, AscLocal, AscRuntime, AscVecOp, ABI_VERSION,
};
use crate::trace::{InstrKind, Mem, Pipe, ScalarOp, VecOp};
use ascendopt_op::Dtype;
use std::ffi::{c_char, c_void, CStr};

/// The table every kernel library is attached to.
pub static TABLE: AscRuntime = AscRuntime {
    abi_version: ABI_VERSION,
    reserved: 0,
    block_idx: rt_block_idx,
    block_num: rt_block_num,
    tiling_key: rt_tiling_key,
    system_cycle: rt_system_cycle,
    que_create: rt_que_create,
    buf_create: rt_buf_create,
    buf_get: rt_buf_get,
    que_alloc: rt_que_alloc,
    que_enque: rt_que_enque,
    que_deque: rt_que_deque,
    que_free: rt_que_free,
    pipe_reset: rt_pipe_reset,
    fetch_event_id: rt_fetch_event_id,
    release_event_id: rt_release_event_id,
    vec: rt_vec,
    copy: rt_copy,
    sync: rt_sync,
    set_vector_mask: rt_set_vector_mask,
    local_get: rt_local_get,
    local_set: rt_local_set,
    gm_get: rt_gm_get,
    gm_set: rt_gm_set,
    gm_read_bytes: rt_gm_read_bytes,
    print: rt_print,
    trap: rt_trap,
    local_ref: rt_local_ref,
    vec_result: rt_vec_result,
    local_rest: rt_local_rest,
    workspace_base: rt_workspace_base,
    sys_workspace_bytes: rt_sys_workspace_bytes,
    scalar_touch: rt_scalar_touch,
    cube: rt_cube,
    core_info: rt_core_info,
    group_mailbox: rt_group_mailbox,
    scalar_stray: rt_scalar_stray,
    stray_call: rt_stray_call,
};

const NO_LOC: AscLoc = AscLoc {
    file: std::ptr::null(),
    line: 0,
};

extern "C-unwind" fn rt_block_idx() -> i64 {
    with_block(&NO_LOC, "GetBlockIdx", |b| Ok(b.block_idx as i64))
}

extern "C-unwind" fn rt_core_info(what: u32) -> i64 {
    with_block(&NO_LOC, "GetSubBlockIdx", |b| {
        let r = b.role;
        Ok(match what {
            // An untyped launch runs every block as a vector core.
            0 => match r {
                Some(r) if r.cube => 1,
                _ => 2,
            },
            1 => r.map_or(0, |r| r.sub as i64),
            2 => r.map_or(1, |r| r.sub_num as i64),
            3 => r.map_or(b.idx as i64, |r| r.group as i64),
            // The Matmul server's view: AIVs of its AI core still running,
            // the AIV whose set its last wait consumed (-1: none), AIVs of
            // its AI core.
            4 => i64::from(b.shared.sync.running_vector_peers(b.idx)),
            5 => b.last_served.map_or(-1, i64::from),
            6 => b.shared.sync.vector_peers(b.idx).len() as i64,
            w => {
                return Err(Fault::InvalidArg {
                    api: "core_info",
                    what: format!("query {w}"),
                })
            }
        })
    })
}

extern "C-unwind" fn rt_group_mailbox() -> *mut c_void {
    with_block(&NO_LOC, "Matmul", |b| {
        Ok(b.role
            .map_or(std::ptr::null_mut(), |r| b.shared.mailbox(r.group)) as *mut c_void)
    })
}

extern "C-unwind" fn rt_block_num() -> i64 {
    with_block(&NO_LOC, "GetBlockNum", |b| Ok(b.shared.block_dim as i64))
}

extern "C-unwind" fn rt_tiling_key() -> u64 {
    with_block(&NO_LOC, "TILING_KEY_IS", |b| Ok(b.shared.tiling_key))
}

extern "C-unwind" fn rt_system_cycle() -> u64 {
    with_block(&NO_LOC, "GetSystemCycle", |b| Ok(b.instrs.len() as u64))
}

extern "C-unwind" fn rt_que_create(pos: u32, depth: u32, num: u32, len: u32, loc: AscLoc) -> i32 {
    with_block(&loc, "InitBuffer", |b| {
        let l = b.loc(&loc, "InitBuffer");
        b.que_create(pos, depth, num, len, l)
    })
}

extern "C-unwind" fn rt_buf_create(pos: u32, len: u32, loc: AscLoc) -> i32 {
    with_block(&loc, "InitBuffer", |b| b.buf_create(pos, len))
}

extern "C-unwind" fn rt_buf_get(handle: i32, dtype: u8, elems: u32, loc: AscLoc) -> AscLocal {
    with_block(&loc, "TBuf::Get", |b| b.buf_get(handle, dtype, elems))
}

extern "C-unwind" fn rt_que_alloc(handle: i32, dtype: u8, loc: AscLoc) -> AscLocal {
    with_block(&loc, "AllocTensor", |b| {
        let l = b.loc(&loc, "AllocTensor");
        b.que_alloc(handle, dtype, l)
    })
}

extern "C-unwind" fn rt_que_enque(handle: i32, t: AscLocal, loc: AscLoc) {
    with_block(&loc, "EnQue", |b| {
        let l = b.loc(&loc, "EnQue");
        b.que_enque(handle, t, l)
    })
}

extern "C-unwind" fn rt_que_deque(handle: i32, dtype: u8, loc: AscLoc) -> AscLocal {
    with_block(&loc, "DeQue", |b| {
        let l = b.loc(&loc, "DeQue");
        b.que_deque(handle, dtype, l)
    })
}

extern "C-unwind" fn rt_que_free(handle: i32, t: AscLocal, loc: AscLoc) {
    with_block(&loc, "FreeTensor", |b| {
        let l = b.loc(&loc, "FreeTensor");
        b.que_free(handle, t, l)
    })
}

extern "C-unwind" fn rt_pipe_reset(loc: AscLoc) {
    with_block(&loc, "TPipe::Reset", |b| {
        b.pipe_reset();
        Ok(())
    })
}

extern "C-unwind" fn rt_fetch_event_id(event: u32, loc: AscLoc) -> i32 {
    with_block(&loc, "FetchEventID", |b| {
        // FetchEventID only reports an id that is free for the event; it
        // does not take it (guide, FetchEventID page). ids 0..=5 are the
        // kernel's, 6 and 7 reserved (hardware-facts.md section A).
        let used = b.event_ids.get(&event).copied().unwrap_or(0);
        (0..6u8)
            .find(|id| used & (1 << id) == 0)
            .map(|id| id as i32)
            .ok_or_else(|| Fault::InvalidArg {
                api: "FetchEventID",
                what: format!(
                    "all 6 event ids of HardEvent {} are in use",
                    event_name(event)
                ),
            })
    })
}

extern "C-unwind" fn rt_release_event_id(event: u32, id: i32, loc: AscLoc) {
    with_block(&loc, "ReleaseEventID", |b| {
        if let Some(used) = b.event_ids.get_mut(&event) {
            if (0..8).contains(&id) {
                *used &= !(1u8 << id);
            }
        }
        Ok(())
    })
}

extern "C-unwind" fn rt_vec(op: *const AscVecOp) {
    rt_vec_result(op);
}

extern "C-unwind" fn rt_vec_result(op: *const AscVecOp) -> u64 {
    // SAFETY: the headers pass a pointer to a live, initialised AscVecOp.
    let op = unsafe { *op };
    let name = VecOp::from_code(op.op)
        .map(|v| v.name())
        .unwrap_or("vector op");
    with_block(&op.loc, name, |b| b.vector(&op))
}

extern "C-unwind" fn rt_local_ref(t: AscLocal, index: u32, loc: AscLoc) -> *mut c_void {
    with_block(&loc, "LocalTensor::operator()", |b| {
        let l = b.loc(&loc, "LocalTensor::operator()");
        b.local_ref(t, index, l)
    })
}

extern "C-unwind" fn rt_local_rest(pos: u32, dtype: u8, loc: AscLoc) -> AscLocal {
    with_block(&loc, "PopStackBuffer", |b| b.local_rest(pos, dtype))
}

extern "C-unwind" fn rt_workspace_base() -> *mut c_void {
    with_block(&NO_LOC, "GetSysWorkSpacePtr", |b| {
        Ok(b.shared.workspace_base as *mut c_void)
    })
}

extern "C-unwind" fn rt_sys_workspace_bytes() -> u64 {
    with_block(&NO_LOC, "GetUserWorkspace", |b| {
        Ok(b.shared.sys_workspace_bytes)
    })
}

extern "C-unwind" fn rt_copy(op: *const AscCopyOp) {
    // SAFETY: the headers pass a pointer to a live, initialised AscCopyOp.
    let op = unsafe { *op };
    let api = match op.kind {
        crate::abi::copy_kind::PAD => "DataCopyPad",
        crate::abi::copy_kind::GM_FILL => "InitGlobalMemory",
        _ => "DataCopy",
    };
    with_block(&op.loc, api, |b| {
        let l = b.loc(&op.loc, api);
        b.copy(&op, l)
    })
}

extern "C-unwind" fn rt_cube(op: *const AscCubeOp) {
    // SAFETY: the headers pass a pointer to a live, initialised AscCubeOp.
    let op = unsafe { *op };
    let api = match op.op {
        cube_op::ND2NZ => "DataCopy",
        cube_op::LOAD2D => "LoadData",
        cube_op::MMAD => "Mmad",
        cube_op::FIXPIPE => "Fixpipe",
        cube_op::FILL => "Fill",
        cube_op::LOAD2D_TRANSPOSE => "LoadDataWithTranspose",
        _ => "cube",
    };
    with_block(&op.loc, api, |b| {
        let l = b.loc(&op.loc, api);
        b.cube(&op, l)
    })
}

extern "C-unwind" fn rt_sync(kind: u32, a: u32, c: u32, loc: AscLoc) {
    let api = match kind {
        sync_kind::SET_FLAG => "SetFlag",
        sync_kind::WAIT_FLAG => "WaitFlag",
        sync_kind::BARRIER => "PipeBarrier",
        sync_kind::ALL => "SyncAll",
        sync_kind::CROSS_SET => "CrossCoreSetFlag",
        sync_kind::CROSS_WAIT => "CrossCoreWaitFlag",
        sync_kind::DCACHE => "DataCacheCleanAndInvalid",
        sync_kind::ATOMIC_ADD => "SetAtomicAdd",
        sync_kind::ATOMIC_MAX => "SetAtomicMax",
        sync_kind::ATOMIC_MIN => "SetAtomicMin",
        sync_kind::ATOMIC_NONE => "SetAtomicNone",
        sync_kind::MASK_COUNT => "SetMaskCount",
        sync_kind::MASK_NORM => "SetMaskNorm",
        sync_kind::RESET_MASK => "ResetMask",
        _ => "sync",
    };
    with_block(&loc, api, |b| {
        let l = b.loc(&loc, api);
        b.sync(kind, a, c, l)
    })
}

extern "C-unwind" fn rt_set_vector_mask(_dtype: u8, hi: u64, lo: u64, loc: AscLoc) {
    with_block(&loc, "SetVectorMask", |b| {
        b.mask.hi = hi;
        b.mask.lo = lo;
        Ok(())
    })
}

extern "C-unwind" fn rt_local_get(t: AscLocal, index: u32, loc: AscLoc) -> u64 {
    with_block(&loc, "GetValue", |b| {
        let l = b.loc(&loc, "GetValue");
        b.local_access(t, index, None, l)
    })
}

extern "C-unwind" fn rt_local_set(t: AscLocal, index: u32, bits: u64, loc: AscLoc) {
    with_block(&loc, "SetValue", |b| {
        let l = b.loc(&loc, "SetValue");
        b.local_access(t, index, Some(bits), l).map(|_| ())
    })
}

extern "C-unwind" fn rt_gm_get(p: *const c_void, dtype: u8, loc: AscLoc) -> u64 {
    with_block(&loc, "GlobalTensor::GetValue", |b| {
        let l = b.loc(&loc, "GlobalTensor::GetValue");
        b.gm_access(p as u64, dtype, None, l)
    })
}

extern "C-unwind" fn rt_gm_set(p: *mut c_void, dtype: u8, bits: u64, loc: AscLoc) {
    with_block(&loc, "GlobalTensor::SetValue", |b| {
        let l = b.loc(&loc, "GlobalTensor::SetValue");
        b.gm_access(p as u64, dtype, Some(bits), l).map(|_| ())
    })
}

extern "C-unwind" fn rt_gm_read_bytes(p: *const c_void, dst: *mut c_void, len: u64, loc: AscLoc) {
    with_block(&loc, "GET_TILING_DATA", |b| {
        let l = b.loc(&loc, "GET_TILING_DATA");
        let region = b.source_region("src", Mem::Gm, (p as u64, p as u64 + len), l)?;
        let mut buf = vec![0u8; len as usize];
        b.read_source(&region, p as u64, &mut buf);
        // SAFETY: the kernel passes a pointer to a local of `len` bytes.
        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), dst as *mut u8, buf.len()) };
        b.record(
            Pipe::S,
            InstrKind::Scalar {
                op: ScalarOp::TilingRead,
                bytes: len,
            },
            vec![region],
            vec![],
            l,
        )
    })
}

extern "C-unwind" fn rt_print(text: *const c_char) {
    if text.is_null() {
        return;
    }
    // SAFETY: the headers pass a NUL-terminated buffer.
    let s = unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned();
    with_block(&NO_LOC, "printf", |b| {
        b.shared.print(&s);
        Ok(())
    })
}

extern "C-unwind" fn rt_trap(message: *const c_char, loc: AscLoc) {
    let msg = if message.is_null() {
        "trap".to_string()
    } else {
        // SAFETY: NUL-terminated string from the headers.
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    with_block(&loc, "trap", |_| Err::<(), _>(Fault::Trap { message: msg }))
}

extern "C-unwind" fn rt_scalar_touch(line: *const c_void, _store: u32) -> i32 {
    with_block_own_faults(&NO_LOC, "kernel code", |b| {
        Ok(match b.scalar_touch(line as usize) {
            LineClass::Other => 0,
            LineClass::Gm { .. } => 1,
            LineClass::Guard { .. } => 2,
        })
    })
}

/// The prefix of the `file` of a fault's location that stands for a code
/// address not yet mapped to a source line: `<object>+0x<offset>` follows
/// (the parent maps it with `addr2line`, `worker::resolve_code_address`).
pub const CODE_ADDRESS: &str = "code address ";

/// `object+0xoffset` of a code address (the loader's view), or None.
fn code_place(pc: *const c_void) -> Option<(String, usize)> {
    // SAFETY: dladdr only reads the loader's tables; `dl` is a local.
    unsafe {
        let mut dl: libc::Dl_info = std::mem::zeroed();
        if pc.is_null() || libc::dladdr(pc, &mut dl) == 0 || dl.dli_fname.is_null() {
            return None;
        }
        let object = CStr::from_ptr(dl.dli_fname).to_string_lossy().into_owned();
        Some((object, (pc as usize).wrapping_sub(dl.dli_fbase as usize)))
    }
}

/// Runs `f` on the current block with the location of the kernel's code
/// at return address `pc` (the instruction after a call: one byte back is
/// the call's own line), to be mapped to `file:line` by the parent.
fn at_code_address<T>(pc: *const c_void, f: impl FnOnce(&mut Block) -> Result<T, Fault>) -> T {
    let place = code_place(pc)
        .map(|(object, offset)| format!("{CODE_ADDRESS}{object}+0x{:x}", offset.wrapping_sub(1)))
        .unwrap_or_default();
    let file = std::ffi::CString::new(place).unwrap_or_default();
    let loc = AscLoc {
        file: if file.as_bytes().is_empty() {
            std::ptr::null()
        } else {
            file.as_ptr()
        },
        line: 0,
    };
    with_block(&loc, "kernel code", f)
}

extern "C-unwind" fn rt_stray_call(target: *const c_void, pc: *const c_void) {
    let what = match code_place(target) {
        Some((object, offset)) => format!("{object}+0x{offset:x}"),
        None => "memory that holds no loaded code".to_string(),
    };
    at_code_address(pc, |_| {
        Err::<(), _>(Fault::StrayCall {
            target: target as u64,
            what,
        })
    })
}

extern "C-unwind" fn rt_scalar_stray(
    addr: *const c_void,
    size: u64,
    store: u32,
    pc: *const c_void,
) {
    at_code_address(pc, |b| {
        match b.shared.gm.classify_line(addr as usize & !63) {
            LineClass::Guard { space } => {
                Err(b
                    .shared
                    .gm
                    .stray_fault(space, addr as usize, size, store != 0))
            }
            _ => Ok(()),
        }
    })
}

fn event_name(event: u32) -> String {
    let p = |c: u32| {
        Pipe::from_code(c)
            .map(|p| p.name().trim_start_matches("PIPE_"))
            .unwrap_or("?")
    };
    format!("{}_{}", p(event / 8), p(event % 8))
}

impl Block {
    /// Executes a vector instruction and records it; returns its scalar
    /// result (0 for most instructions, see `VecEffect::result`).
    pub fn vector(&mut self, op: &AscVecOp) -> Result<u64, Fault> {
        let vop = VecOp::from_code(op.op).ok_or_else(|| Fault::Unsupported {
            api: "vector",
            what: format!("instruction code {}", op.op),
        })?;
        let dtype = Dtype::from_abi_code(op.dtype).ok_or_else(|| Fault::InvalidArg {
            api: vop.name(),
            what: format!("element type code {}", op.dtype),
        })?;
        let src_dtype = Dtype::from_abi_code(op.src_dtype).unwrap_or(dtype);
        let l = self.loc(&op.loc, vop.name());
        let mask: MaskState = self.mask;
        let effect = if vop == VecOp::TransDataTo5HD {
            let table = (u64::from(op.p[0]) | (u64::from(op.p[1]) << 32)) as *const [u64; 32];
            if table.is_null() {
                return Err(Fault::InvalidArg {
                    api: "TransDataTo5HD",
                    what: "no block address table".into(),
                });
            }
            // SAFETY: the header passes the address of a live `uint64_t[32]`
            // on the calling kernel's stack, valid during this call.
            let table = unsafe { std::ptr::read_unaligned(table) };
            vec::transpose::trans_data_to_5hd(self.mem(Mem::Ub), op, &table)?
        } else {
            let product = self.shared.product;
            if vop == VecOp::Duplicate && product != Product::AtlasA2 {
                product.check_duplicate(dtype)?;
            }
            vec::execute(self.mem(Mem::Ub), &mask, op).map_err(|f| product.restate(f))?
        };
        if vop == VecOp::GatherMask {
            // GatherMask leaves the mask in normal mode (guide 6.2.3.3.4.9).
            self.mask.counter = false;
        }
        let result = effect.result;
        self.record(
            Pipe::V,
            InstrKind::Vector {
                op: vop,
                dtype,
                src_dtype,
                repeats: effect.repeats,
                elems: effect.elems,
            },
            effect.reads,
            effect.writes,
            l,
        )?;
        Ok(result)
    }

    /// LocalTensor::operator(): the host address of element `index` of
    /// `t`, recorded as one scalar access that reads and writes it.
    pub fn local_ref(&mut self, t: AscLocal, index: u32, loc: u32) -> Result<*mut c_void, Fault> {
        let size = dtype_size(t.dtype)? as u64;
        let mem = Mem::from_code(t.mem).ok_or_else(|| Fault::InvalidArg {
            api: "LocalTensor::operator()",
            what: format!("memory code {}", t.mem),
        })?;
        if mem == Mem::Gm {
            return Err(Fault::InvalidArg {
                api: "LocalTensor::operator()",
                what: "the tensor is not in on-chip memory".into(),
            });
        }
        let at = t.addr as u64 + index as u64 * size;
        let region = self.region("tensor", mem, (at, at + size))?;
        self.record(
            Pipe::S,
            InstrKind::Scalar {
                op: ScalarOp::LocalSet,
                bytes: size,
            },
            vec![region],
            vec![region],
            loc,
        )?;
        let bytes = self.mem(mem);
        // SAFETY: `region` checked `at + size <= len` of this memory, whose
        // buffer is allocated once per block and never resized, and lives
        // until the block's thread ends after the kernel returns.
        Ok(unsafe { bytes.as_mut_ptr().add(at as usize) } as *mut c_void)
    }

    /// Flags, barriers, SyncAll, atomics, masks.
    pub fn sync(&mut self, kind: u32, a: u32, c: u32, loc: u32) -> Result<(), Fault> {
        use crate::trace::{FlagKey, SyncOrigin};
        match kind {
            sync_kind::SET_FLAG | sync_kind::WAIT_FLAG => {
                let api = if kind == sync_kind::SET_FLAG {
                    "SetFlag"
                } else {
                    "WaitFlag"
                };
                let (src, dst) = match (Pipe::from_code(a / 8), Pipe::from_code(a % 8)) {
                    (Some(s), Some(d)) => (s, d),
                    _ => {
                        return Err(Fault::InvalidArg {
                            api,
                            what: format!("HardEvent code {a} names no pair of pipes"),
                        })
                    }
                };
                if c >= 8 {
                    return Err(Fault::InvalidArg {
                        api,
                        what: format!("event id {c} outside 0..=7"),
                    });
                }
                let key = FlagKey::User { id: c };
                let (pipe, k) = if kind == sync_kind::SET_FLAG {
                    (
                        src,
                        InstrKind::SetFlag {
                            src,
                            dst,
                            key,
                            origin: SyncOrigin::User,
                        },
                    )
                } else {
                    (
                        dst,
                        InstrKind::WaitFlag {
                            src,
                            dst,
                            key,
                            origin: SyncOrigin::User,
                        },
                    )
                };
                self.record(pipe, k, vec![], vec![], loc)
            }
            sync_kind::BARRIER => {
                let pipe = if a == crate::trace::Pipe::ALL.len() as u32 {
                    None
                } else {
                    Some(Pipe::from_code(a).ok_or_else(|| Fault::InvalidArg {
                        api: "PipeBarrier",
                        what: format!("pipe code {a}"),
                    })?)
                };
                if pipe == Some(Pipe::S) {
                    return Err(Fault::InvalidArg {
                        api: "PipeBarrier",
                        what:
                            "PipeBarrier<PIPE_S> is a hardware error (hardware-facts.md section A)"
                                .into(),
                    });
                }
                self.record(
                    pipe.unwrap_or(Pipe::S),
                    InstrKind::Barrier { pipe },
                    vec![],
                    vec![],
                    loc,
                )
            }
            sync_kind::ALL => {
                let shared = self.shared.clone();
                let generation = shared.sync_all(self.idx, a != 0)?;
                self.sync_all_count += 1;
                self.record(
                    Pipe::S,
                    InstrKind::SyncAll { generation },
                    vec![],
                    vec![],
                    loc,
                )
            }
            sync_kind::CROSS_SET | sync_kind::CROSS_WAIT => {
                let api = if kind == sync_kind::CROSS_SET {
                    "CrossCoreSetFlag"
                } else {
                    "CrossCoreWaitFlag"
                };
                let pipe = Pipe::from_code(a >> 8).ok_or_else(|| Fault::InvalidArg {
                    api,
                    what: format!("pipe code {}", a >> 8),
                })?;
                let mode = (a & 0xff) as u8;
                let internal = mode >= super::mix::MODE_TO_AIC;
                let flag = (c & 0xff) as u8;
                let top = if internal {
                    31
                } else {
                    super::mix::MAX_USER_FLAG as u32
                };
                if c & 0xff > top || (!internal && c > 0xff) {
                    return Err(Fault::InvalidArg {
                        api,
                        what: format!("flag id {c} outside 0..=10 (Atlas A2, guide 6.2.3.7.2.4)"),
                    });
                }
                let shared = self.shared.clone();
                if kind == sync_kind::CROSS_SET {
                    self.record(
                        pipe,
                        InstrKind::CrossSet { pipe, mode, flag },
                        vec![],
                        vec![],
                        loc,
                    )?;
                    let instr = (self.instrs.len() - 1) as u32;
                    shared.sync.cross_set(self.idx, mode, flag, instr)
                } else {
                    // The kernel's code before the wait is charged before it.
                    self.flush_scalar_code(Some(loc));
                    let sources = if mode == super::mix::MODE_SERVER {
                        let (sources, sub) =
                            shared
                                .sync
                                .serve_wait(self.idx, flag, c >> 8, &|| shared.aborted())?;
                        self.last_served = sub;
                        sources
                    } else {
                        shared
                            .sync
                            .cross_wait(self.idx, flag, &|| shared.aborted())?
                    };
                    self.record(
                        pipe,
                        InstrKind::CrossWait {
                            pipe,
                            flag,
                            sources,
                        },
                        vec![],
                        vec![],
                        loc,
                    )
                }
            }
            sync_kind::DCACHE => self.record(
                Pipe::S,
                InstrKind::Scalar {
                    op: ScalarOp::DcacheFlush,
                    bytes: 0,
                },
                vec![],
                vec![],
                loc,
            ),
            sync_kind::ATOMIC_ADD | sync_kind::ATOMIC_MAX | sync_kind::ATOMIC_MIN => {
                dtype_size(a as u8)?;
                self.atomic = Some((kind, a as u8));
                Ok(())
            }
            sync_kind::ATOMIC_NONE => {
                self.atomic = None;
                Ok(())
            }
            sync_kind::MASK_COUNT => {
                self.mask.counter = true;
                Ok(())
            }
            sync_kind::MASK_NORM => {
                self.mask.counter = false;
                Ok(())
            }
            sync_kind::RESET_MASK => {
                let counter = self.mask.counter;
                self.mask = MaskState::reset();
                self.mask.counter = counter;
                Ok(())
            }
            k => Err(Fault::InvalidArg {
                api: "sync",
                what: format!("unknown sync kind {k}"),
            }),
        }
    }

    /// LocalTensor::GetValue (write = None) or SetValue.
    pub fn local_access(
        &mut self,
        t: AscLocal,
        index: u32,
        write: Option<u64>,
        loc: u32,
    ) -> Result<u64, Fault> {
        let size = dtype_size(t.dtype)? as u64;
        let mem = Mem::from_code(t.mem).ok_or_else(|| Fault::InvalidArg {
            api: "GetValue/SetValue",
            what: format!("memory code {}", t.mem),
        })?;
        let at = t.addr as u64 + index as u64 * size;
        let region = self.region("tensor", mem, (at, at + size))?;
        let (op, reads, writes) = match write {
            None => (ScalarOp::LocalGet, vec![region], vec![]),
            Some(_) => (ScalarOp::LocalSet, vec![], vec![region]),
        };
        let mut value = 0u64;
        match write {
            None => {
                let mut buf = [0u8; 8];
                self.read_bytes(mem, at, &mut buf[..size as usize]);
                value = u64::from_le_bytes(buf);
            }
            Some(bits) => {
                let bytes = bits.to_le_bytes();
                self.write_bytes(mem, at, &bytes[..size as usize], None)?;
            }
        }
        self.record(
            Pipe::S,
            InstrKind::Scalar { op, bytes: size },
            reads,
            writes,
            loc,
        )?;
        Ok(value)
    }

    /// GlobalTensor::GetValue (write = None) or SetValue.
    pub fn gm_access(
        &mut self,
        addr: u64,
        dtype: u8,
        write: Option<u64>,
        loc: u32,
    ) -> Result<u64, Fault> {
        let size = dtype_size(dtype)? as u64;
        let span = (addr, addr + size);
        let region = match write {
            None => self.source_region("GlobalTensor", Mem::Gm, span, loc)?,
            Some(_) => self.region("GlobalTensor", Mem::Gm, span)?,
        };
        let mut value = 0u64;
        let (op, reads, writes) = match write {
            None => {
                let mut buf = [0u8; 8];
                self.read_source(&region, addr, &mut buf[..size as usize]);
                value = u64::from_le_bytes(buf);
                (ScalarOp::GmGet, vec![region], vec![])
            }
            Some(bits) => {
                let bytes = bits.to_le_bytes();
                self.write_bytes(Mem::Gm, addr, &bytes[..size as usize], None)?;
                (ScalarOp::GmSet, vec![], vec![region])
            }
        };
        self.record(
            Pipe::S,
            InstrKind::Scalar { op, bytes: size },
            reads,
            writes,
            loc,
        )?;
        Ok(value)
    }
}
