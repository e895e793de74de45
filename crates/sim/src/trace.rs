//! The instruction trace: what one launch of a kernel did, one record per
//! AscendC API call, per block. The functional runtime writes it; the timing
//! model and the race checker read it.
//!
//! Invariant: a trace holds no tensor values, only what the hardware would
//! see (pipes, sizes, addresses, sync events), so timing can never depend on
//! data and the functional result never depends on timing.

use ascendopt_op::Dtype;
use serde::{Deserialize, Serialize};

/// A hardware pipe of an AI core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Pipe {
    /// Scalar unit (PIPE_S): issues everything, does GetValue/SetValue.
    S,
    /// Vector unit (PIPE_V).
    V,
    /// Cube unit (PIPE_M).
    M,
    /// L1 -> L0A/L0B moves (PIPE_MTE1).
    Mte1,
    /// GM -> UB/L1 moves (PIPE_MTE2).
    Mte2,
    /// UB -> GM moves (PIPE_MTE3).
    Mte3,
    /// L0C -> GM/L1 (PIPE_FIX).
    Fix,
}

impl Pipe {
    /// Every pipe, in ABI code order.
    pub const ALL: [Pipe; 7] = [
        Pipe::S,
        Pipe::V,
        Pipe::M,
        Pipe::Mte1,
        Pipe::Mte2,
        Pipe::Mte3,
        Pipe::Fix,
    ];

    /// The `AscPipe` code of the ABI (7 is PIPE_ALL, not a pipe).
    pub fn from_code(code: u32) -> Option<Pipe> {
        Pipe::ALL.get(code as usize).copied()
    }

    /// The AscendC name (`PIPE_V`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Pipe::S => "PIPE_S",
            Pipe::V => "PIPE_V",
            Pipe::M => "PIPE_M",
            Pipe::Mte1 => "PIPE_MTE1",
            Pipe::Mte2 => "PIPE_MTE2",
            Pipe::Mte3 => "PIPE_MTE3",
            Pipe::Fix => "PIPE_FIX",
        }
    }
}

/// A memory of the chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Mem {
    /// Global memory (HBM).
    Gm,
    /// Unified buffer of a vector core.
    Ub,
    /// L1 buffer of a cube core.
    L1,
    /// L0A.
    L0a,
    /// L0B.
    L0b,
    /// L0C.
    L0c,
    /// Bias table.
    Bt,
    /// Fixpipe buffer.
    Fb,
}

impl Mem {
    /// Every memory, in ABI code order.
    pub const ALL: [Mem; 8] = [
        Mem::Gm,
        Mem::Ub,
        Mem::L1,
        Mem::L0a,
        Mem::L0b,
        Mem::L0c,
        Mem::Bt,
        Mem::Fb,
    ];

    /// The `AscMem` code of the ABI.
    pub fn from_code(code: u8) -> Option<Mem> {
        Mem::ALL.get(code as usize).copied()
    }

    /// Short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Mem::Gm => "GM",
            Mem::Ub => "UB",
            Mem::L1 => "L1",
            Mem::L0a => "L0A",
            Mem::L0b => "L0B",
            Mem::L0c => "L0C",
            Mem::Bt => "BT",
            Mem::Fb => "FB",
        }
    }
}

/// A byte range of one memory. For GM, `space` is the allocation index and
/// `start` the offset inside it (allocations are 512-byte aligned); for
/// on-chip memories `space` is 0 and `start` the byte address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Region {
    /// Which memory.
    pub mem: Mem,
    /// GM allocation index, 0 on chip.
    pub space: u32,
    /// First byte.
    pub start: u64,
    /// Number of bytes (the bounding range of a strided access).
    pub len: u64,
}

impl Region {
    /// True when the two ranges share a byte of the same memory.
    pub fn overlaps(&self, other: &Region) -> bool {
        self.mem == other.mem
            && self.space == other.space
            && self.start < other.start + other.len
            && other.start < self.start + self.len
    }
}

/// A vector operation (the `AscVecOpCode` of the ABI).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum VecOp {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    And,
    Or,
    AddRelu,
    FusedMulAdd,
    MulAddDst,
    SubRelu,
    Exp,
    Ln,
    Abs,
    Reciprocal,
    Sqrt,
    Rsqrt,
    Relu,
    Not,
    Neg,
    Adds,
    Muls,
    Maxs,
    Mins,
    Subs,
    Divs,
    LeakyRelu,
    Axpy,
    ShiftLeft,
    ShiftRight,
    Duplicate,
    CreateVecIndex,
    Brcb,
    Gather,
    Cast,
    Compare,
    Compares,
    Select,
    ReduceSum,
    ReduceMax,
    ReduceMin,
    WholeReduceSum,
    WholeReduceMax,
    WholeReduceMin,
    BlockReduceSum,
    BlockReduceMax,
    BlockReduceMin,
    PairReduceSum,
    Copy,
    GatherMask,
    Sort32,
    MrgSort,
    TransDataTo5HD,
}

impl VecOp {
    /// Decodes an `AscVecOpCode`.
    pub fn from_code(code: u32) -> Option<VecOp> {
        use VecOp::*;
        Some(match code {
            1 => Add,
            2 => Sub,
            3 => Mul,
            4 => Div,
            5 => Max,
            6 => Min,
            7 => And,
            8 => Or,
            9 => AddRelu,
            10 => FusedMulAdd,
            11 => MulAddDst,
            12 => SubRelu,
            20 => Exp,
            21 => Ln,
            22 => Abs,
            23 => Reciprocal,
            24 => Sqrt,
            25 => Rsqrt,
            26 => Relu,
            27 => Not,
            28 => Neg,
            40 => Adds,
            41 => Muls,
            42 => Maxs,
            43 => Mins,
            44 => Subs,
            45 => Divs,
            46 => LeakyRelu,
            47 => Axpy,
            48 => ShiftLeft,
            49 => ShiftRight,
            60 => Duplicate,
            61 => CreateVecIndex,
            62 => Brcb,
            63 => Gather,
            70 => Cast,
            80 => Compare,
            81 => Compares,
            82 => Select,
            90 => ReduceSum,
            91 => ReduceMax,
            92 => ReduceMin,
            93 => WholeReduceSum,
            94 => WholeReduceMax,
            95 => WholeReduceMin,
            96 => BlockReduceSum,
            97 => BlockReduceMax,
            98 => BlockReduceMin,
            99 => PairReduceSum,
            64 => Copy,
            65 => GatherMask,
            100 => Sort32,
            101 => MrgSort,
            66 => TransDataTo5HD,
            _ => return None,
        })
    }

    /// The AscendC API name.
    pub fn name(self) -> &'static str {
        use VecOp::*;
        match self {
            Add => "Add",
            Sub => "Sub",
            Mul => "Mul",
            Div => "Div",
            Max => "Max",
            Min => "Min",
            And => "And",
            Or => "Or",
            AddRelu => "AddRelu",
            FusedMulAdd => "FusedMulAdd",
            MulAddDst => "MulAddDst",
            SubRelu => "SubRelu",
            Exp => "Exp",
            Ln => "Ln",
            Abs => "Abs",
            Reciprocal => "Reciprocal",
            Sqrt => "Sqrt",
            Rsqrt => "Rsqrt",
            Relu => "Relu",
            Not => "Not",
            Neg => "Neg",
            Adds => "Adds",
            Muls => "Muls",
            Maxs => "Maxs",
            Mins => "Mins",
            Subs => "Subs",
            Divs => "Divs",
            LeakyRelu => "LeakyRelu",
            Axpy => "Axpy",
            ShiftLeft => "ShiftLeft",
            ShiftRight => "ShiftRight",
            Duplicate => "Duplicate",
            CreateVecIndex => "CreateVecIndex",
            Brcb => "Brcb",
            Gather => "Gather",
            Cast => "Cast",
            Compare => "Compare",
            Compares => "Compares",
            Select => "Select",
            ReduceSum => "ReduceSum",
            ReduceMax => "ReduceMax",
            ReduceMin => "ReduceMin",
            WholeReduceSum => "WholeReduceSum",
            WholeReduceMax => "WholeReduceMax",
            WholeReduceMin => "WholeReduceMin",
            BlockReduceSum => "BlockReduceSum",
            BlockReduceMax => "BlockReduceMax",
            BlockReduceMin => "BlockReduceMin",
            PairReduceSum => "PairReduceSum",
            Copy => "Copy",
            GatherMask => "GatherMask",
            Sort32 => "Sort32",
            MrgSort => "MrgSort",
            TransDataTo5HD => "TransDataTo5HD",
        }
    }
}

/// Direction of a DMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DmaDir {
    /// GM -> UB (MTE2).
    GmToUb,
    /// UB -> GM (MTE3).
    UbToGm,
    /// UB -> UB (MTE2 on A2).
    UbToUb,
    /// GM -> L1 (MTE2).
    GmToL1,
    /// UB -> L1 (MTE3).
    UbToL1,
    /// L1 -> L0A/L0B (MTE1).
    L1ToL0,
    /// L1 -> L0A/L0B through img2col (Load3D, MTE1).
    L1Img2Col,
    /// L0C -> GM/L1/UB (FIX).
    L0cOut,
    /// L0C -> GM by a Fixpipe with unitFlag (2 or 3; FIX): it moves each
    /// fractal of C as the Mmad with unitFlag that writes it finishes it
    /// (guide 6.2.3.2.1.12 table 6-197), so it may overlap that Mmad.
    L0cOutUnit,
}

/// What a scalar-pipe instruction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarOp {
    /// LocalTensor::GetValue.
    LocalGet,
    /// LocalTensor::SetValue.
    LocalSet,
    /// GlobalTensor::GetValue (through the data cache).
    GmGet,
    /// GlobalTensor::SetValue (through the data cache).
    GmSet,
    /// GET_TILING_DATA: a copy of the tiling struct from GM to the stack.
    TilingRead,
    /// DataCacheCleanAndInvalid.
    DcacheFlush,
}

/// Who issued a flag operation (for messages: the race checker names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SyncOrigin {
    /// SetFlag/WaitFlag written by the kernel.
    User,
    /// TQue::EnQue (set, producer -> consumer).
    EnQue,
    /// TQue::DeQue (wait, producer -> consumer).
    DeQue,
    /// TQue::FreeTensor (set, consumer -> producer).
    FreeTensor,
    /// TQue::AllocTensor (wait, consumer -> producer).
    AllocTensor,
}

/// Identity of a flag: user flags by (event, id), queue flags by buffer slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FlagKey {
    /// `SetFlag<HardEvent>(id)`.
    User {
        /// Event id 0..=7.
        id: u32,
    },
    /// A TQue buffer slot's forward (EnQue/DeQue) or backward
    /// (Free/Alloc) flag.
    Slot {
        /// Queue handle.
        queue: u32,
        /// Slot index in the queue.
        slot: u32,
        /// true for the forward (data ready) flag.
        forward: bool,
    },
}

/// What one instruction is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum InstrKind {
    /// A vector instruction (PIPE_V).
    Vector {
        /// Operation.
        op: VecOp,
        /// Element type of the destination.
        dtype: Dtype,
        /// Element type of the source where it differs (Cast).
        src_dtype: Dtype,
        /// Hardware repeats (256 bytes of the widest operand each).
        repeats: u32,
        /// Elements processed (active lanes summed over repeats).
        elems: u64,
    },
    /// A data move on an MTE pipe or the fixpipe.
    Dma {
        /// Direction.
        dir: DmaDir,
        /// Bytes moved in total (payload, without padding).
        bytes: u64,
        /// Number of bursts (blockCount).
        bursts: u32,
        /// Bytes per burst.
        burst_bytes: u64,
        /// Byte offset of the first GM byte inside its allocation (for the
        /// 32 B vs 512 B alignment cost); 0 when no GM side.
        gm_offset: u64,
        /// true when the GM side is strided (gaps between bursts).
        gm_strided: bool,
        /// Atomic accumulation into GM.
        atomic: bool,
    },
    /// A scalar access or scalar-side operation (PIPE_S).
    Scalar {
        /// What it did.
        op: ScalarOp,
        /// Bytes accessed.
        bytes: u64,
    },
    /// SetFlag: fires when all earlier work of `src` is done.
    SetFlag {
        /// Producer pipe.
        src: Pipe,
        /// Consumer pipe.
        dst: Pipe,
        /// Flag identity.
        key: FlagKey,
        /// Who issued it.
        origin: SyncOrigin,
    },
    /// WaitFlag: blocks `dst` until the flag is set, then clears it.
    WaitFlag {
        /// Producer pipe.
        src: Pipe,
        /// Consumer pipe.
        dst: Pipe,
        /// Flag identity.
        key: FlagKey,
        /// Who issued it.
        origin: SyncOrigin,
    },
    /// PipeBarrier<pipe>; `None` is PIPE_ALL.
    Barrier {
        /// The pipe, or every pipe.
        pipe: Option<Pipe>,
    },
    /// SyncAll: every block waits for every other.
    SyncAll {
        /// How many SyncAll this block passed before (0-based).
        generation: u32,
    },
    /// A matrix multiply-accumulate on the cube (Mmad, PIPE_M): C (L0C,
    /// NZ) += A (L0A, ZZ) x B (L0B, ZN).
    Mmad(MmadShape),
    /// The kernel's own compiled code that the scalar unit ran since the
    /// previous API call (index arithmetic, loops, branches, raw `__gm__`
    /// pointer access), counted by the build's instrumentation.
    ScalarCode(ScalarCode),
    /// CrossCoreSetFlag: fires when all earlier work of `pipe` is done and
    /// counts up the flag on other cores of the launch (MIX kernels).
    CrossSet {
        /// The pipe it sits in.
        pipe: Pipe,
        /// Synchronisation mode (0, 1, 2; internal modes of the Matmul
        /// messages are 16 and up).
        mode: u8,
        /// Flag id.
        flag: u8,
    },
    /// CrossCoreWaitFlag: blocks `pipe` until the flag's counter is above
    /// zero, then counts it down.
    CrossWait {
        /// The pipe it blocks.
        pipe: Pipe,
        /// Flag id.
        flag: u8,
        /// The CrossSet instructions whose count this wait consumed, as
        /// (index of the block in the trace, instruction index): the wait
        /// ends once all of them fired.
        sources: Vec<(u32, u32)>,
    },
}

/// The work of one Mmad, as the timing model needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MmadShape {
    /// Rows of A and C.
    pub m: u32,
    /// Columns of B and C.
    pub n: u32,
    /// Columns of A, rows of B.
    pub k: u32,
    /// Element type of A and B.
    pub dtype: Dtype,
    /// MmadParams.unitFlag (0, 2 or 3), as the kernel set it.
    pub unit_flag: u8,
    /// True when C starts from zero (cmatrixInitVal) or a bias, false when
    /// it accumulates onto L0C.
    pub init: bool,
}

/// What a stretch of the kernel's own code executed, as counted by the
/// instrumented build (`build::instrument`): instructions by class, and the
/// GM it touched through plain loads and stores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScalarCode {
    /// Arithmetic, logic, branch and call instructions.
    pub alu: u64,
    /// Instructions that load from memory.
    pub loads: u64,
    /// Instructions that store to memory.
    pub stores: u64,
    /// Loads and stores of those that reached GM.
    pub gm_accesses: u64,
    /// First of the GM lines this code touched in [`BlockTrace::gm_lines`].
    pub lines_start: u32,
    /// How many lines, in order of access.
    pub lines_len: u32,
    /// Line touches past the block's recording limit
    /// ([`MAX_GM_LINES_PER_BLOCK`]), charged as data-cache misses.
    pub lines_dropped: u64,
}

impl ScalarCode {
    /// True when it holds no work at all.
    pub fn is_empty(&self) -> bool {
        self.alu == 0
            && self.loads == 0
            && self.stores == 0
            && self.gm_accesses == 0
            && self.lines_len == 0
            && self.lines_dropped == 0
    }

    /// Instructions of every class.
    pub fn instructions(&self) -> u64 {
        self.alu + self.loads + self.stores
    }
}

/// Granularity of recorded GM line touches, bytes: the scalar data cache's
/// line ([`crate::timing::hw::ScalarCosts::dcache_line_bytes`] must be a
/// multiple of it).
pub const GM_LINE_BYTES: u64 = 64;

/// Most GM line touches a block's trace records; later ones are only
/// counted ([`ScalarCode::lines_dropped`]).
pub const MAX_GM_LINES_PER_BLOCK: usize = 1 << 16;

/// A GM line the kernel's own code touched that was not among the few
/// lines it touched just before (those are certain data-cache hits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GmLine {
    /// GM allocation index (as [`Region::space`]).
    pub space: u32,
    /// Byte offset of the line inside the allocation, a multiple of
    /// [`GM_LINE_BYTES`].
    pub offset: u64,
}

/// One instruction of one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instr {
    /// The pipe that executes it (S for flags issued by the scalar unit is
    /// not used: flags carry their own pipes).
    pub pipe: Pipe,
    /// What it is.
    pub kind: InstrKind,
    /// Regions read.
    pub reads: Vec<Region>,
    /// Regions written.
    pub writes: Vec<Region>,
    /// Index into [`Trace::locs`] of the API call's source location.
    pub loc: u32,
}

pub use ascendopt_device::launch::SrcLoc;

/// The instructions of one block (one AI core instance).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockTrace {
    /// Block index (GetBlockIdx).
    pub block: u32,
    /// Instructions in program (issue) order.
    pub instrs: Vec<Instr>,
    /// GM lines touched by the kernel's own code, referenced by the
    /// [`InstrKind::ScalarCode`] instructions.
    #[serde(default)]
    pub gm_lines: Vec<GmLine>,
    /// Which core of an AI core the block ran on, in a launch whose kernel
    /// type is declared (KERNEL_TASK_TYPE_DEFAULT, or MIX through the
    /// Matmul API); `None` when the type follows from what the block did.
    #[serde(default)]
    pub role: Option<CoreRole>,
}

/// The core a block of a typed launch runs on (guide 6.2.3.14.12: a MIX
/// 1:2 launch of Block Dim n starts n cube and 2n vector cores; each AI
/// core holds one AIC and its AIVs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CoreRole {
    /// True on the cube core (AIC), false on a vector core (AIV).
    pub cube: bool,
    /// The AI core (0..Block Dim).
    pub group: u32,
    /// GetSubBlockIdx: 0 on the AIC, 0 or 1 on the AIVs.
    pub sub: u32,
    /// GetSubBlockNum on this core.
    pub sub_num: u32,
}

/// The trace of one kernel launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Number of blocks launched (Block Dim).
    pub block_dim: u32,
    /// Sizes in bytes of the GM allocations, by `Region::space` index.
    pub gm_spaces: Vec<u64>,
    /// Per-block instruction streams, by block index.
    pub blocks: Vec<BlockTrace>,
    /// Source locations, indexed by `Instr::loc`.
    pub locs: Vec<SrcLoc>,
}

impl Trace {
    /// The source location of an instruction.
    pub fn loc_of(&self, instr: &Instr) -> Option<&SrcLoc> {
        self.locs.get(instr.loc as usize)
    }

    /// Total number of instructions over all blocks.
    pub fn len(&self) -> usize {
        self.blocks.iter().map(|b| b.instrs.len()).sum()
    }

    /// True when no block recorded anything.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
