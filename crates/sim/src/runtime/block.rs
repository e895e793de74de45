//! Per-launch shared state and per-block state, and the plumbing that lets
//! the `extern "C-unwind"` runtime functions reach them: each block runs on
//! its own thread with its [`Block`] in a thread-local.
//!
//! Faults: an API call that commits a fault stores it in [`Shared`] (the
//! first fault of the launch wins), raises the abort flag so that every
//! other block stops at its next API call, and then unwinds the kernel by
//! calling the kernel library's `ascendopt_kernel_throw`.

use super::fault::Fault;
use super::gm::{GmSpace, LineClass};
use super::mix::{self, CoreSlot, LaunchSync};
use super::vec::MaskState;
use crate::abi::AscLoc;
use crate::abi::AscScalarCounters;
use crate::trace::{
    CoreRole, GmLine, Instr, InstrKind, Mem, Pipe, Region, ScalarCode, SrcLoc, GM_LINE_BYTES,
    MAX_GM_LINES_PER_BLOCK,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Most text a launch keeps from kernel printf.
const MAX_PRINTED: usize = 64 * 1024;

/// A fault with where it happened.
#[derive(Debug, Clone)]
pub struct BlockFault {
    /// Block index.
    pub block: u32,
    /// The fault.
    pub fault: Fault,
    /// The API call.
    pub loc: Option<SrcLoc>,
}

/// A non-fatal note from the runtime.
#[derive(Debug, Clone)]
pub struct Note {
    /// Class.
    pub kind: &'static str,
    /// Message.
    pub message: String,
}

/// State shared by all blocks of one launch.
pub struct Shared {
    /// Global memory.
    pub gm: GmSpace,
    /// Blocks launched.
    pub block_dim: u32,
    /// Tiling key.
    pub tiling_key: u64,
    /// Bytes of each on-chip memory, by `Mem` index (0 for GM).
    pub mem_sizes: [u64; 8],
    /// The product family of the chip, for the guide's per-product rules.
    pub product: super::product::Product,
    /// Seed of on-chip garbage.
    pub seed: u64,
    /// Instruction limit per block.
    pub max_instrs: u64,
    /// The kernel library's `ascendopt_kernel_throw`.
    pub throw_fn: Option<unsafe extern "C-unwind" fn()>,
    /// Host address of the launch's workspace argument, where the system
    /// workspace starts (GetSysWorkSpacePtr before any SetSysWorkspace);
    /// 0 when unknown.
    pub workspace_base: usize,
    /// Bytes of the system workspace at its start (what the host's
    /// GetLibApiWorkSpaceSize reports; GetUserWorkspace skips them).
    pub sys_workspace_bytes: u64,
    abort: AtomicBool,
    fault: Mutex<Option<BlockFault>>,
    notes: Mutex<Vec<Note>>,
    printed: Mutex<String>,
    /// The cores of the launch and every wait between them (SyncAll,
    /// cross-core flags).
    pub sync: LaunchSync,
    /// Per AI core, the scratch the Matmul API's messages pass through
    /// (an address per group; see `group_mailbox`).
    mailboxes: Vec<Box<[u64]>>,
    /// Serialises atomic read-modify-write copies to GM.
    pub atomic_lock: Mutex<()>,
}

// SAFETY: GM buffers are written through raw pointers by block threads; the
// layout (`GmSpace::allocs`) is never changed while blocks run, and blocks
// that write the same bytes race exactly as the hardware cores would.
unsafe impl Sync for Shared {}
// SAFETY: as above.
unsafe impl Send for Shared {}

impl Shared {
    /// New shared state.
    pub fn new(
        gm: GmSpace,
        block_dim: u32,
        tiling_key: u64,
        mem_sizes: [u64; 8],
        seed: u64,
        max_instrs: u64,
    ) -> Shared {
        Shared {
            gm,
            block_dim,
            tiling_key,
            mem_sizes,
            product: super::product::Product::default(),
            seed,
            max_instrs,
            throw_fn: None,
            workspace_base: 0,
            sys_workspace_bytes: 0,
            abort: AtomicBool::new(false),
            fault: Mutex::new(None),
            notes: Mutex::new(Vec::new()),
            printed: Mutex::new(String::new()),
            sync: LaunchSync::new(mix::layout(None, block_dim)),
            mailboxes: Vec::new(),
            atomic_lock: Mutex::new(()),
        }
    }

    /// True once any block faulted.
    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::SeqCst)
    }

    /// Records a fault (the first one wins) and raises the abort flag.
    pub fn record_fault(&self, f: BlockFault) {
        if let Ok(mut slot) = self.fault.lock() {
            if slot.is_none() {
                *slot = Some(f);
            }
        }
        self.abort.store(true, Ordering::SeqCst);
        self.sync.wake_all();
    }

    /// The first fault, if any.
    pub fn take_fault(&self) -> Option<BlockFault> {
        self.fault.lock().ok().and_then(|mut f| f.take())
    }

    /// Adds a note.
    pub fn note(&self, kind: &'static str, message: String) {
        if let Ok(mut n) = self.notes.lock() {
            if n.len() < 1000 && !n.iter().any(|x| x.message == message) {
                n.push(Note { kind, message });
            }
        }
    }

    /// Adds a note unless one of `kind` whose message starts with `key`
    /// is there already (one note per place for a repeated event; the
    /// message should start with `key`).
    pub fn note_first(&self, kind: &'static str, key: &str, message: String) {
        if let Ok(mut n) = self.notes.lock() {
            if n.len() < 1000
                && !n
                    .iter()
                    .any(|x| x.kind == kind && x.message.starts_with(key))
            {
                n.push(Note { kind, message });
            }
        }
    }

    /// All notes.
    pub fn notes(&self) -> Vec<Note> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// Appends kernel printf output.
    pub fn print(&self, text: &str) {
        if let Ok(mut p) = self.printed.lock() {
            if p.len() < MAX_PRINTED {
                p.push_str(text);
            }
        }
    }

    /// Everything printed.
    pub fn printed(&self) -> String {
        self.printed.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Sets the cores of the launch (before any block runs).
    pub fn set_layout(&mut self, slots: Vec<CoreSlot>) {
        let groups = slots
            .iter()
            .filter_map(|s| s.role.map(|r| r.group + 1))
            .max()
            .unwrap_or(0);
        self.mailboxes = (0..groups)
            .map(|_| vec![0u64; MAILBOX_BYTES / 8].into_boxed_slice())
            .collect();
        self.sync = LaunchSync::new(slots);
    }

    /// Threads the launch runs (one per core).
    pub fn threads(&self) -> u32 {
        self.sync.slots().len() as u32
    }

    /// The Matmul messages' scratch of AI core `group` (null when the
    /// launch is untyped).
    pub fn mailbox(&self, group: u32) -> *mut u8 {
        self.mailboxes
            .get(group as usize)
            .map_or(std::ptr::null_mut(), |m| m.as_ptr() as *mut u8)
    }

    /// Core `core` returned from the kernel: later waits for it can no
    /// longer complete.
    pub fn block_finished(&self, core: u32) {
        self.sync.finished(core);
    }

    /// SyncAll of core `core`. Err when it cannot complete.
    pub fn sync_all(&self, core: u32, aiv_only: bool) -> Result<u32, Fault> {
        self.sync.sync_all(core, aiv_only, &|| self.aborted())
    }
}

/// Bytes of each AI core's message scratch.
pub const MAILBOX_BYTES: usize = 4096;

/// A TQue / TQueBind.
pub struct Queue {
    /// Memory of the buffers.
    pub mem: Mem,
    /// Producer pipe (EnQue side).
    pub producer: Pipe,
    /// Consumer pipe (DeQue side).
    pub consumer: Pipe,
    /// Queue depth (template argument).
    pub depth: u32,
    /// Byte address of slot 0.
    pub base: u32,
    /// Bytes per slot (the InitBuffer length).
    pub len: u32,
    /// Slot stride (length rounded up to 32 B).
    pub stride: u32,
    /// Each buffer of the queue (its slots).
    pub slots: Vec<Slot>,
    /// Buffers en-queued, oldest first: (queue that allocated it, slot).
    /// A queue may carry another queue's buffer (EnQue of a tensor that
    /// another queue allocated or de-queued, guide 2.9.3: a stage takes its
    /// memory "from AllocTensor, or DeQue from the upstream queue").
    pub fifo: std::collections::VecDeque<(u32, u32)>,
    /// Next slot AllocTensor hands out (round robin).
    pub next: u32,
    /// Where it was created.
    pub loc: u32,
}

/// One queue buffer: where it is in the hand-over chain and the backward
/// flag it carries (the device's queue buffer holds its own event ids,
/// guide 6.2.3.6.1 FreeAllEvent: "队列分配的Buffer关联着同步事件的eventID").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Where the buffer is.
    pub state: SlotState,
    /// The queue that has it: the one whose fifo holds it (`Queued`) or
    /// that de-queued it last (`Dequeued`); its own queue otherwise.
    pub holder: u32,
    /// The backward flag (source pipe, destination pipe) the FreeTensor
    /// that gave the buffer back set, which its next AllocTensor waits.
    /// `None`: nothing to wait (InitBuffer pre-sets the flag, and a wait
    /// consumes it).
    pub free_flag: Option<(Pipe, Pipe)>,
    /// Another queue that still held the buffer when its own queue gave it
    /// back (en-queued there, not yet freed there): that queue's FreeTensor
    /// ends the hold and gives nothing back.
    pub lent: Option<u32>,
}

impl Slot {
    /// A free buffer of queue `owner`.
    pub fn new(owner: u32) -> Slot {
        Slot {
            state: SlotState::Free,
            holder: owner,
            free_flag: None,
            lent: None,
        }
    }
}

/// State of one queue buffer slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotState {
    /// Available to AllocTensor.
    Free,
    /// Returned by AllocTensor.
    Allocated,
    /// In a queue (EnQue'd).
    Queued,
    /// Returned by DeQue.
    Dequeued,
}

/// A TBuf.
pub struct Buf {
    /// Memory.
    pub mem: Mem,
    /// Byte address.
    pub base: u32,
    /// Bytes.
    pub len: u32,
}

/// On-chip addresses a kernel holds that no memory backs (see
/// [`Fault::UnbackedUse`]): touching them is the fault, holding them is not.
#[derive(Debug, Clone)]
pub struct Unbacked {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// How the kernel came to hold them.
    pub origin: String,
}

/// Everything one block (one AI core instance) owns.
pub struct Block {
    /// The block's thread (its index in the trace; GetBlockIdx in an
    /// untyped launch).
    pub idx: u32,
    /// GetBlockIdx.
    pub block_idx: u32,
    /// The core it runs on in a typed launch.
    pub role: Option<CoreRole>,
    /// The AIV whose request the Matmul server's last wait took.
    pub last_served: Option<u32>,
    /// Launch state.
    pub shared: Arc<Shared>,
    /// On-chip memories, by `Mem` index (GM unused), allocated lazily.
    pub mems: [Vec<u8>; 8],
    /// Bump pointer of each on-chip memory.
    pub bump: [u64; 8],
    /// Queues by handle.
    pub queues: Vec<Queue>,
    /// TBufs by handle.
    pub bufs: Vec<Buf>,
    /// Buffers past the end of their memory, by memory index.
    pub unbacked: [Vec<Unbacked>; 8],
    /// Vector mask registers.
    pub mask: MaskState,
    /// Active GM atomic mode for UB->GM copies: (kind, dtype code).
    pub atomic: Option<(u32, u8)>,
    /// Event ids handed out by FetchEventID, per HardEvent.
    pub event_ids: HashMap<u32, u8>,
    /// The Load3D registers (SetFmatrix, SetLoadDataPaddingValue, ...).
    pub load3d: super::img2col::Load3dRegs,
    /// SyncAll calls so far.
    pub sync_all_count: u32,
    /// The instructions recorded so far.
    pub instrs: Vec<Instr>,
    /// Source locations (interned).
    pub locs: Vec<SrcLoc>,
    loc_index: HashMap<(usize, i32, &'static str), u32>,
    rng: ChaCha8Rng,
    /// GM lines the kernel's own code touched ([`ScalarCode`]).
    pub gm_lines: Vec<GmLine>,
    /// Where the lines of the code since the last API call begin.
    lines_start: usize,
    /// Line touches past [`MAX_GM_LINES_PER_BLOCK`] since the last API call.
    lines_dropped: u64,
    /// This block thread's `AscScalarCounters` in the kernel library (0
    /// when the library is not instrumented), as an address so that the
    /// block stays `Send`.
    scalar_counters: usize,
    /// The "kernel code" location of each API call's location.
    code_locs: HashMap<u32, u32>,
}

impl Block {
    /// A fresh block.
    pub fn new(idx: u32, shared: Arc<Shared>) -> Block {
        let rng = ChaCha8Rng::seed_from_u64(
            shared.seed ^ (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(idx as u64 + 1)),
        );
        let slot = shared.sync.slots().get(idx as usize).copied();
        Block {
            idx,
            block_idx: slot.map_or(idx, |s| s.block_idx),
            role: slot.and_then(|s| s.role),
            last_served: None,
            shared,
            mems: Default::default(),
            bump: [0; 8],
            queues: Vec::new(),
            bufs: Vec::new(),
            unbacked: Default::default(),
            mask: MaskState::reset(),
            atomic: None,
            event_ids: HashMap::new(),
            load3d: Default::default(),
            sync_all_count: 0,
            instrs: Vec::new(),
            locs: Vec::new(),
            loc_index: HashMap::new(),
            rng,
            gm_lines: Vec::new(),
            lines_start: 0,
            lines_dropped: 0,
            scalar_counters: 0,
            code_locs: HashMap::new(),
        }
    }

    /// Attaches this thread's counters of the kernel's own code (called on
    /// the block's thread before the kernel runs).
    ///
    /// # Safety
    /// `counters` is null or this thread's `ascendopt_scalar` of a kernel
    /// library that stays loaded while the block runs; the block is only
    /// used on this thread meanwhile.
    pub unsafe fn attach_scalar_counters(&mut self, counters: *mut AscScalarCounters) {
        if !counters.is_null() {
            // SAFETY: the caller's promise.
            unsafe { *counters = AscScalarCounters::default() };
        }
        self.scalar_counters = counters as usize;
    }

    /// The kernel's code touched the line at `addr` (a multiple of 64):
    /// records it when it is GM. Returns what it is
    /// ([`GmSpace::classify_line`](super::gm::GmSpace::classify_line)).
    pub fn scalar_touch(&mut self, addr: usize) -> LineClass {
        let class = self.shared.gm.classify_line(addr);
        if let LineClass::Gm { space, offset } = class {
            if self.gm_lines.len() < MAX_GM_LINES_PER_BLOCK {
                self.gm_lines.push(GmLine {
                    space,
                    offset: offset / GM_LINE_BYTES * GM_LINE_BYTES,
                });
            } else {
                self.lines_dropped += 1;
            }
        }
        class
    }

    /// Records what the kernel's own code did since the last call (if
    /// anything) as one [`InstrKind::ScalarCode`] at `loc`'s line.
    pub fn flush_scalar_code(&mut self, loc: Option<u32>) {
        let mut code = ScalarCode::default();
        if self.scalar_counters != 0 {
            let counters = self.scalar_counters as *mut AscScalarCounters;
            // SAFETY: see `attach_scalar_counters`; we are on the block's
            // thread and the kernel is inside a runtime call (or returned).
            let c = unsafe { std::mem::take(&mut *counters) };
            code.alu = c.alu;
            code.loads = c.loads;
            code.stores = c.stores;
            code.gm_accesses = c.gm_accesses;
        }
        code.lines_start = self.lines_start as u32;
        code.lines_len = (self.gm_lines.len() - self.lines_start) as u32;
        code.lines_dropped = self.lines_dropped;
        self.lines_start = self.gm_lines.len();
        self.lines_dropped = 0;
        if code.is_empty() {
            return;
        }
        let loc = match loc {
            Some(api) => match self.code_locs.get(&api) {
                Some(&l) => l,
                None => {
                    let (file, line) = self
                        .locs
                        .get(api as usize)
                        .map_or((String::new(), 0), |l| (l.file.clone(), l.line));
                    let l = self.locs.len() as u32;
                    self.locs.push(SrcLoc {
                        file,
                        line,
                        api: "kernel code".to_string(),
                    });
                    self.code_locs.insert(api, l);
                    l
                }
            },
            None => {
                let l = self.locs.len() as u32;
                self.locs.push(SrcLoc {
                    file: String::new(),
                    line: 0,
                    api: "kernel code".to_string(),
                });
                l
            }
        };
        self.instrs.push(Instr {
            pipe: Pipe::S,
            kind: InstrKind::ScalarCode(code),
            reads: Vec::new(),
            writes: Vec::new(),
            loc,
        });
    }

    /// The bytes of an on-chip memory, created on first use and filled with
    /// seeded garbage (real on-chip memory is never cleared).
    pub fn mem(&mut self, mem: Mem) -> &mut Vec<u8> {
        let i = mem as usize;
        if self.mems[i].is_empty() && mem != Mem::Gm {
            let size = self.shared.mem_sizes[i] as usize;
            let mut v = vec![0u8; size];
            self.rng.fill_bytes(&mut v);
            self.mems[i] = v;
        }
        &mut self.mems[i]
    }

    /// Fills bytes with garbage (undefined padding).
    pub fn garbage(&mut self, out: &mut [u8]) {
        self.rng.fill_bytes(out);
    }

    /// Interns a source location.
    pub fn loc(&mut self, loc: &AscLoc, api: &'static str) -> u32 {
        let key = (loc.file as usize, loc.line, api);
        if let Some(&i) = self.loc_index.get(&key) {
            return i;
        }
        let i = self.locs.len() as u32;
        self.locs.push(SrcLoc {
            file: loc.file(),
            line: loc.line(),
            api: api.to_string(),
        });
        self.loc_index.insert(key, i);
        i
    }

    /// Records an instruction.
    pub fn record(
        &mut self,
        pipe: Pipe,
        kind: InstrKind,
        reads: Vec<Region>,
        writes: Vec<Region>,
        loc: u32,
    ) -> Result<(), Fault> {
        self.flush_scalar_code(Some(loc));
        if let Some(role) = self.role {
            check_core_side(role, pipe, &reads, &writes)?;
        }
        if self.instrs.len() as u64 >= self.shared.max_instrs {
            return Err(Fault::InvalidArg {
                api: "kernel",
                what: format!(
                    "instruction limit of {} per block exceeded (an endless loop, or a per-element scalar loop over a huge tensor)",
                    self.shared.max_instrs
                ),
            });
        }
        self.instrs.push(Instr {
            pipe,
            kind,
            reads,
            writes,
            loc,
        });
        Ok(())
    }
}

/// In a typed launch, an AIC has no vector unit and no UB, an AIV no cube
/// pipes and no L1/L0 (guide 2.6, separated architecture): an instruction
/// of the other side is a fault naming it.
fn check_core_side(
    role: CoreRole,
    pipe: Pipe,
    reads: &[Region],
    writes: &[Region],
) -> Result<(), Fault> {
    let mems = || reads.iter().chain(writes).map(|r| r.mem);
    let cube_side = matches!(pipe, Pipe::M | Pipe::Mte1 | Pipe::Fix)
        || mems().any(|m| {
            matches!(
                m,
                Mem::L1 | Mem::L0a | Mem::L0b | Mem::L0c | Mem::Bt | Mem::Fb
            )
        });
    let vector_side = pipe == Pipe::V || mems().any(|m| m == Mem::Ub);
    let what = if role.cube && vector_side {
        format!(
            "the AIC of AI core {} ran a vector-side instruction (vector unit or UB); a cube core has neither (branch with ASCEND_IS_AIV in a MIX kernel)",
            role.group
        )
    } else if !role.cube && cube_side {
        format!(
            "AIV {} of AI core {} ran a cube-side instruction (cube pipes, L1 or L0); a vector core has none (branch with ASCEND_IS_AIC, or declare the kernel type)",
            role.sub, role.group
        )
    } else {
        return Ok(());
    };
    Err(Fault::InvalidArg {
        api: "kernel",
        what,
    })
}

thread_local! {
    static CURRENT: RefCell<Option<Block>> = const { RefCell::new(None) };
}

/// Installs `block` as this thread's current block.
pub fn install(block: Block) {
    CURRENT.with(|c| *c.borrow_mut() = Some(block));
}

/// Removes and returns this thread's block.
pub fn uninstall() -> Option<Block> {
    CURRENT.with(|c| c.borrow_mut().take())
}

/// Records the kernel's own code since its last API call on this thread's
/// block (at the kernel's end).
pub fn flush_current_scalar_code() {
    CURRENT.with(|c| {
        if let Some(block) = c.borrow_mut().as_mut() {
            block.flush_scalar_code(None);
        }
    });
}

/// Runs `f` on the current block. On a fault (or when another block
/// faulted), records it and unwinds the kernel; never returns in that case.
pub fn with_block<T>(
    loc: &AscLoc,
    api: &'static str,
    f: impl FnOnce(&mut Block) -> Result<T, Fault>,
) -> T {
    with_block_stopping(loc, api, true, f)
}

/// [`with_block`] for the hooks in the kernel's own code (every load and
/// store it makes): they unwind on their own fault only, not when another
/// block faulted. The kernel's code runs in destructors too (TPipe's,
/// the kernel's own classes'), which C++ makes noexcept: unwinding there
/// would abort the worker. The other blocks stop at their next API call.
pub fn with_block_own_faults<T>(
    loc: &AscLoc,
    api: &'static str,
    f: impl FnOnce(&mut Block) -> Result<T, Fault>,
) -> T {
    with_block_stopping(loc, api, false, f)
}

fn with_block_stopping<T>(
    loc: &AscLoc,
    api: &'static str,
    stop_on_abort: bool,
    f: impl FnOnce(&mut Block) -> Result<T, Fault>,
) -> T {
    let outcome = CURRENT.with(|c| {
        let mut guard = c.borrow_mut();
        let Some(block) = guard.as_mut() else {
            return Err((None, None));
        };
        if stop_on_abort && block.shared.aborted() {
            return Err((Some(block.shared.clone()), None));
        }
        match f(block) {
            Ok(v) => Ok(v),
            Err(fault) => {
                let fault = block.explain(fault);
                let src = SrcLoc {
                    file: loc.file(),
                    line: loc.line(),
                    api: api.to_string(),
                };
                let shared = block.shared.clone();
                shared.record_fault(BlockFault {
                    block: block.idx,
                    fault,
                    loc: Some(src),
                });
                Err((Some(shared), None::<()>))
            }
        }
    });
    match outcome {
        Ok(v) => v,
        Err((shared, _)) => unwind(shared),
    }
}

/// Unwinds the kernel through the kernel library's throw function. Without
/// one (no block installed: the runtime was called outside a launch) the
/// process cannot continue safely and aborts.
fn unwind(shared: Option<Arc<Shared>>) -> ! {
    if let Some(throw) = shared.as_ref().and_then(|s| s.throw_fn) {
        drop(shared);
        // SAFETY: the kernel library's throw function raises a C++ exception
        // caught in its ascendopt_kernel_call; every frame between is C++ or a
        // "C-unwind" runtime function holding no borrow.
        unsafe { throw() };
        // The throw function never returns; if it did, continuing would
        // run the kernel past a fault.
        std::process::abort();
    }
    eprintln!("ascendopt runtime: AscendC API called outside a kernel launch");
    std::process::abort();
}
