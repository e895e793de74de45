//! Lanes and addresses of a vector instruction: which elements one
//! `AscVecOp` touches, at which UB byte addresses, in how many hardware
//! repeats, and the bounding regions it reads and writes.
//!
//! Every vector family calls [`plan`] first; it also performs the checks
//! common to all vector instructions (operands in UB, 32-byte aligned,
//! inside the UB, valid mask and repeat).
//!
//! Semantics (hardware-facts.md section C; guide 2.5.2.2.2 "高维切分API",
//! 2.5.2.3.1 "如何使用掩码操作API", API pages of Add / Cast / SetVectorMask):
//! - One repeat reads 8 data blocks of 32 B = 256 B of the *widest* operand,
//!   so a repeat has `256 / lane_bytes` lanes (128 for b16, 64 for b32). An
//!   operand narrower than the lane width uses fewer blocks per repeat (a
//!   half source of a half->float Cast occupies 4 blocks).
//! - Lane `l` of an operand with element size `s` lies in data block
//!   `l / (32 / s)`; its address is
//!   `base + r * rep_stride * 32 + blk * blk_stride * 32 + (l % (32 / s)) * s`.
//! - `ASC_FORM_COUNT`: `count` contiguous elements of every operand, one
//!   instruction of `ceil(count * lane_bytes / 256)` repeats.
//! - Normal mask mode: `ASC_FORM_MASK_CONT` activates the first `mask[0]`
//!   lanes (1..=lanes); `ASC_FORM_MASK_BITS` activates lane `l` when bit
//!   `l % 64` of `mask[l / 64]` is set (only the first 128 lanes have mask
//!   bits); `ASC_FORM_MASK_CUR` uses the bits of [`MaskState`]. `repeat`
//!   (0..=255) repeats are issued.
//! - Counter mode ([`MaskState::counter`]): the mask value is the total
//!   element count (`mask[0]` for the CONT/BITS forms, i.e. an API called
//!   with isSetMask=true, [`MaskState::lo`] for `ASC_FORM_MASK_CUR`); as
//!   many repeats as needed are issued and `repeat` is ignored, strides
//!   still apply.

use crate::abi::{form, AscLocal, AscVecOp};
use crate::runtime::fault::Fault;
use crate::trace::{Mem, Region};

use super::{MaskState, VecEffect};

/// Bytes of one data block.
pub(crate) const BLOCK_BYTES: u64 = 32;
/// Bytes one repeat reads of the widest operand (8 data blocks).
pub(crate) const REPEAT_BYTES: u64 = 256;
/// Largest `repeatTime` of the mask forms.
pub(crate) const MAX_REPEAT: u32 = 255;
/// Largest element count accepted in count form and counter mode (the APIs
/// take an `int32_t` count).
pub(crate) const MAX_COUNT: u64 = i32::MAX as u64;

/// How an instruction uses an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read only (sources).
    Read,
    /// Written only (a plain destination).
    Write,
    /// Read and written (an accumulating destination: Axpy, MulAddDst, ...).
    ReadWrite,
}

/// One lane-mapped operand of a vector instruction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operand {
    /// Name for fault messages (`dst`, `src0`, `src1`, ...).
    pub name: &'static str,
    /// The UB view.
    pub local: AscLocal,
    /// Element size in bytes (1, 2, 4 or 8).
    pub elem_size: u32,
    /// Data-block stride inside a repeat, in 32 B blocks.
    pub blk_stride: u32,
    /// Stride between repeats, in 32 B blocks.
    pub rep_stride: u32,
    /// How the instruction uses it.
    pub access: Access,
}

impl Operand {
    /// `op.dst` with its block/repeat strides.
    pub(crate) fn dst(op: &AscVecOp, elem_size: u32, access: Access) -> Operand {
        Operand {
            name: "dst",
            local: op.dst,
            elem_size,
            blk_stride: op.dst_blk,
            rep_stride: op.dst_rep,
            access,
        }
    }

    /// `op.src0` (read) with its block/repeat strides.
    pub(crate) fn src0(op: &AscVecOp, elem_size: u32) -> Operand {
        Operand {
            name: "src0",
            local: op.src0,
            elem_size,
            blk_stride: op.src0_blk,
            rep_stride: op.src0_rep,
            access: Access::Read,
        }
    }

    /// `op.src1` (read) with its block/repeat strides.
    pub(crate) fn src1(op: &AscVecOp, elem_size: u32) -> Operand {
        Operand {
            name: "src1",
            local: op.src1,
            elem_size,
            blk_stride: op.src1_blk,
            rep_stride: op.src1_rep,
            access: Access::Read,
        }
    }
}

/// What to plan: the API name (for faults), the lane width and the
/// lane-mapped operands.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec<'a> {
    /// AscendC API name for fault messages.
    pub api: &'static str,
    /// Bytes per lane: a repeat has `256 / lane_bytes` lanes. Normally the
    /// widest operand's element size ([`Spec::widest`]); must be >= every
    /// operand's element size.
    pub lane_bytes: u32,
    /// Operands whose elements follow the lanes one to one.
    pub operands: &'a [Operand],
}

impl<'a> Spec<'a> {
    /// A spec whose lane width is the widest operand's element size.
    pub(crate) fn widest(api: &'static str, operands: &'a [Operand]) -> Spec<'a> {
        let lane_bytes = operands.iter().map(|o| o.elem_size).max().unwrap_or(1);
        Spec {
            api,
            lane_bytes,
            operands,
        }
    }
}

/// The elements an instruction processes and where they live.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// Lanes per repeat (`256 / lane_bytes`).
    pub lanes_per_repeat: u32,
    /// Hardware repeats issued.
    pub repeats: u32,
    /// Number of active elements.
    len: usize,
    /// Where the active elements are.
    layout: Layout,
    /// Bounding UB regions read (one per read operand with active lanes).
    pub reads: Vec<Region>,
    /// Bounding UB regions written.
    pub writes: Vec<Region>,
}

/// How a plan stores its element addresses.
#[derive(Debug, Clone, PartialEq)]
enum Layout {
    /// Active element `i` is (repeat `i / lanes`, lane `i % lanes`) and
    /// lies at `bases[k] + i * sizes[k]` in operand `k`: count form, and
    /// every all-lanes instruction whose strides leave no gap. Nothing is
    /// enumerated (an instruction may cover the whole UB).
    Contiguous {
        bases: Vec<usize>,
        sizes: Vec<usize>,
    },
    /// Active element `i` is (repeat `i / lanes.len()`, lane
    /// `lanes[i % lanes.len()]`), and lane `l` of repeat `r` lies at
    /// `base + r * rep + (l / per_block) * blk + (l % per_block) * size` in
    /// each operand: the hardware's own address formula, evaluated on
    /// demand (nothing is enumerated per element).
    Strided {
        /// The active lanes of every repeat, in order.
        lanes: Vec<u32>,
        /// One address rule per operand, in the order of
        /// [`Spec::operands`].
        rules: Vec<Rule>,
        /// Bounding bytes `[low, high)` of each operand.
        bounds: Vec<(usize, usize)>,
        /// Bytes between the lowest and the highest byte of one full
        /// repeat, per operand.
        spans: Vec<usize>,
    },
}

/// Where an operand's lanes lie (all in bytes except `per_block_shift`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rule {
    base: usize,
    rep: usize,
    blk: usize,
    size: usize,
    /// log2 of the elements per 32-byte block (`32 / size`).
    per_block_shift: u32,
}

impl Rule {
    fn of(o: &Operand) -> Rule {
        Rule {
            base: o.local.addr as usize,
            rep: o.rep_stride as usize * BLOCK_BYTES as usize,
            blk: o.blk_stride as usize * BLOCK_BYTES as usize,
            size: o.elem_size as usize,
            per_block_shift: (BLOCK_BYTES as u32 / o.elem_size).trailing_zeros(),
        }
    }

    /// Offset of lane `lane` inside a repeat.
    #[inline(always)]
    fn lane_offset(&self, lane: usize) -> usize {
        let mask = (1usize << self.per_block_shift) - 1;
        (lane >> self.per_block_shift) * self.blk + (lane & mask) * self.size
    }

    /// Address of lane `lane` of repeat `repeat`.
    #[inline(always)]
    fn addr(&self, repeat: usize, lane: usize) -> usize {
        self.base + repeat * self.rep + self.lane_offset(lane)
    }
}

impl Plan {
    /// Number of active elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when no element is active.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Byte address of operand `operand` (index into [`Spec::operands`]) for
    /// active element `elem`.
    #[inline]
    pub(crate) fn addr(&self, elem: usize, operand: usize) -> usize {
        match &self.layout {
            Layout::Contiguous { bases, sizes } => bases[operand] + elem * sizes[operand],
            Layout::Strided { lanes, rules, .. } => {
                let (r, l) = (elem / lanes.len(), lanes[elem % lanes.len()]);
                rules[operand].addr(r, l as usize)
            }
        }
    }

    /// (repeat, lane) of active element `elem`.
    pub(crate) fn position(&self, elem: usize) -> (u32, u32) {
        match &self.layout {
            Layout::Contiguous { .. } => {
                let lanes = self.lanes_per_repeat as usize;
                ((elem / lanes) as u32, (elem % lanes) as u32)
            }
            Layout::Strided { lanes, .. } => {
                ((elem / lanes.len()) as u32, lanes[elem % lanes.len()])
            }
        }
    }

    /// The base address of every operand (in the order of
    /// [`Spec::operands`], the destination first) when the active elements
    /// are contiguous in each (element `i` of operand `k` at `bases[k] + i *
    /// size_k`) and independent: every other operand either is the
    /// destination itself (same base and element size) or shares no byte
    /// with it, so no element's result can change another element's inputs
    /// and the repeat-by-repeat read-before-write order cannot matter.
    /// `None` otherwise.
    pub(crate) fn independent_bases(&self) -> Option<&[usize]> {
        let Layout::Contiguous { bases, sizes } = &self.layout else {
            return None;
        };
        let n = self.len;
        let (d0, d1) = (bases[0], bases[0] + n * sizes[0]);
        let independent = bases.iter().zip(sizes).skip(1).all(|(&b, &size)| {
            (b == bases[0] && size == sizes[0]) || b + n * size <= d0 || b >= d1
        });
        independent.then_some(bases.as_slice())
    }

    /// The base address of every operand when the active elements are
    /// contiguous in each (element `i` of operand `k` at `bases[k] + i *
    /// size_k`), whether or not operands overlap. `None` otherwise.
    pub(crate) fn contiguous_bases(&self) -> Option<&[usize]> {
        match &self.layout {
            Layout::Contiguous { bases, .. } => Some(bases),
            Layout::Strided { .. } => None,
        }
    }

    /// Ranges of active-element indices that belong to the same repeat, in
    /// order. A vector unit reads a whole repeat before it writes it, so
    /// families that may see overlapping operands compute per chunk.
    pub(crate) fn repeat_chunks(&self) -> Vec<std::ops::Range<usize>> {
        let per_repeat = match &self.layout {
            Layout::Contiguous { .. } => self.lanes_per_repeat as usize,
            Layout::Strided { lanes, .. } => lanes.len(),
        };
        (0..self.len)
            .step_by(per_repeat.max(1))
            .map(|start| start..(start + per_repeat).min(self.len))
            .collect()
    }

    /// True for a strided plan whose elements may be computed one by one
    /// in any order, each from its own inputs: the destination never
    /// holds two elements at one address (its lanes lie in distinct data
    /// blocks and its repeats do not overlap), and every source either is
    /// the destination itself (the same address rule) or shares no byte
    /// with it. Its runs may then be gathered into contiguous buffers,
    /// computed, and the results scattered back, with the same result as
    /// the repeat-by-repeat order.
    pub(crate) fn strided_independent(&self) -> bool {
        let Layout::Strided {
            rules,
            bounds,
            spans,
            lanes,
        } = &self.layout
        else {
            return false;
        };
        if self.len == 0 {
            return false;
        }
        let (d, (d0, d1)) = (rules[0], bounds[0]);
        let lanes_per_block = 1usize << d.per_block_shift;
        let blocks_apart =
            d.blk >= BLOCK_BYTES as usize || lanes.iter().all(|&l| (l as usize) < lanes_per_block);
        let repeats_apart = self.len <= lanes.len() || d.rep >= spans[0];
        blocks_apart
            && repeats_apart
            && rules
                .iter()
                .zip(bounds)
                .skip(1)
                .all(|(r, &(lo, hi))| *r == d || hi <= d0 || lo >= d1)
    }

    /// The runs of a strided plan: stretches of consecutive active lanes
    /// inside one data block of every operand, so contiguous in each, in
    /// order. Empty for a contiguous plan (it is one run, see
    /// [`Plan::contiguous_bases`]).
    pub(crate) fn strided_runs(&self) -> Vec<Run> {
        let Layout::Strided { lanes, rules, .. } = &self.layout else {
            return Vec::new();
        };
        // The widest operand has the fewest lanes per block: a run ends at
        // its block's end, a gap in the lanes, or the repeat's end.
        let shift = rules.iter().map(|o| o.per_block_shift).min().unwrap_or(0);
        let per = lanes.len();
        let mut runs = Vec::new();
        let mut start = 0;
        while start < self.len {
            let (r, i) = (start / per, start % per);
            let first = lanes[i] as usize;
            let block_end = ((first >> shift) + 1) << shift;
            let mut len = 1;
            while i + len < per
                && start + len < self.len
                && lanes[i + len] as usize == first + len
                && first + len < block_end
            {
                len += 1;
            }
            let mut addrs = [0; 3];
            for (a, rule) in addrs.iter_mut().zip(rules) {
                *a = rule.addr(r, first);
            }
            runs.push(Run { start, len, addrs });
            start += len;
        }
        runs
    }

    /// The trace effect of this plan.
    pub(crate) fn effect(&self) -> VecEffect {
        VecEffect {
            repeats: self.repeats,
            elems: self.len() as u64,
            reads: self.reads.clone(),
            writes: self.writes.clone(),
            result: 0,
        }
    }
}

/// One run of [`Plan::strided_runs`]: its first element, its length and
/// its address in each of the first three operands (no family has more
/// lane-mapped operands).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Run {
    pub start: usize,
    pub len: usize,
    pub addrs: [usize; 3],
}

/// A UB region `[start, end)`.
pub(crate) fn ub_region(start: u64, end: u64) -> Region {
    Region {
        mem: Mem::Ub,
        space: 0,
        start,
        len: end.saturating_sub(start),
    }
}

/// Checks that an operand view is in UB and 32-byte aligned.
pub(crate) fn check_local(
    api: &'static str,
    name: &'static str,
    local: &AscLocal,
) -> Result<(), Fault> {
    match Mem::from_code(local.mem) {
        Some(Mem::Ub) => {}
        Some(mem) => {
            return Err(Fault::Unsupported {
                api,
                what: format!(
                    "{name} in {}: vector instructions work on UB operands only",
                    mem.name()
                ),
            })
        }
        None => {
            return Err(Fault::InvalidArg {
                api,
                what: format!("{name} has unknown memory code {}", local.mem),
            })
        }
    }
    if u64::from(local.addr) % BLOCK_BYTES != 0 {
        return Err(Fault::Unaligned {
            operand: name,
            mem: Mem::Ub.name(),
            addr: u64::from(local.addr),
            align: BLOCK_BYTES,
        });
    }
    Ok(())
}

/// Checks that the UB bytes `[start, end)` lie inside a UB of `ub_len` bytes.
pub(crate) fn check_range(
    name: &'static str,
    start: u64,
    end: u64,
    ub_len: usize,
) -> Result<(), Fault> {
    if end > ub_len as u64 {
        return Err(Fault::LocalOutOfRange {
            operand: name,
            mem: Mem::Ub.name(),
            start,
            end,
            cap: ub_len as u64,
        });
    }
    Ok(())
}

/// The active (repeat, lane) positions and the repeat count, before any
/// address is computed.
struct Activity {
    repeats: u32,
    active: Active,
    /// Count form: addresses are contiguous from each base, strides unused.
    count_form: bool,
}

/// Which lanes are active.
enum Active {
    /// The first `n` lanes in order: element `i` is (repeat `i / lanes`,
    /// lane `i % lanes`).
    Dense(usize),
    /// The same lanes of every repeat (a partial mask).
    Masked(Vec<u32>),
}

fn activity(
    spec: &Spec,
    op: &AscVecOp,
    mask: &MaskState,
    ub_len: usize,
) -> Result<Activity, Fault> {
    let api = spec.api;
    let lanes = (REPEAT_BYTES / u64::from(spec.lane_bytes)) as u32;
    let counted = |n: u64| -> Result<Active, Fault> {
        if n > MAX_COUNT {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "element count {} is negative or above {MAX_COUNT}",
                    n as i64
                ),
            });
        }
        // No legitimate instruction processes more elements than the UB has
        // bytes; the cap keeps a wild counter-mode count from exhausting
        // host memory before the bounds check.
        if n > ub_len as u64 {
            return Err(Fault::InvalidArg {
                api,
                what: format!("element count {n} is more than a {ub_len}-byte UB can hold"),
            });
        }
        Ok(Active::Dense(n as usize))
    };
    if op.form == form::COUNT {
        let active = counted(op.count)?;
        let bytes = op.count * u64::from(spec.lane_bytes);
        return Ok(Activity {
            repeats: bytes.div_ceil(REPEAT_BYTES) as u32,
            active,
            count_form: true,
        });
    }
    let (lo, hi) = match op.form {
        form::MASK_CONT | form::MASK_BITS => (op.mask[0], op.mask[1]),
        form::MASK_CUR => (mask.lo, mask.hi),
        other => {
            return Err(Fault::InvalidArg {
                api,
                what: format!("unknown vector form {other}"),
            })
        }
    };
    if mask.counter {
        let active = counted(lo)?;
        return Ok(Activity {
            repeats: lo.div_ceil(u64::from(lanes)) as u32,
            active,
            count_form: false,
        });
    }
    if op.repeat > MAX_REPEAT {
        return Err(Fault::InvalidArg {
            api,
            what: format!("repeatTime {} is above {MAX_REPEAT}", op.repeat),
        });
    }
    let active: Vec<u32> = if op.form == form::MASK_CONT {
        if lo == 0 || lo > u64::from(lanes) {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "continuous mask {lo} is outside [1, {lanes}] for {}-byte lanes",
                    spec.lane_bytes
                ),
            });
        }
        (0..lo as u32).collect()
    } else {
        let active: Vec<u32> = (0..lanes.min(128))
            .filter(|&l| {
                let word = if l < 64 { lo } else { hi };
                (word >> (l % 64)) & 1 == 1
            })
            .collect();
        if active.is_empty() && op.form == form::MASK_BITS {
            return Err(Fault::InvalidArg {
                api,
                what: format!("bit mask [{lo:#x}, {hi:#x}] selects no lane of {lanes}"),
            });
        }
        active
    };
    let active = if active.len() == lanes as usize {
        Active::Dense(op.repeat as usize * lanes as usize)
    } else {
        Active::Masked(active)
    };
    Ok(Activity {
        repeats: op.repeat,
        active,
        count_form: false,
    })
}

/// Plans one vector instruction: checks the operands, the mask and the
/// repeat, and computes every active element's operand addresses and the
/// bounding regions. Nothing is read or written.
pub(crate) fn plan(
    spec: &Spec,
    op: &AscVecOp,
    mask: &MaskState,
    ub_len: usize,
) -> Result<Plan, Fault> {
    let api = spec.api;
    if !matches!(spec.lane_bytes, 1 | 2 | 4 | 8) {
        return Err(Fault::InvalidArg {
            api,
            what: format!("lane width {} bytes", spec.lane_bytes),
        });
    }
    for operand in spec.operands {
        check_local(api, operand.name, &operand.local)?;
        if !matches!(operand.elem_size, 1 | 2 | 4 | 8) || operand.elem_size > spec.lane_bytes {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "{} element size {} with {}-byte lanes",
                    operand.name, operand.elem_size, spec.lane_bytes
                ),
            });
        }
    }
    // Count form: bound the whole contiguous range before enumerating.
    if op.form == form::COUNT && op.count <= MAX_COUNT {
        for operand in spec.operands {
            let start = u64::from(operand.local.addr);
            let end = start + op.count * u64::from(operand.elem_size);
            check_range(operand.name, start, end, ub_len)?;
        }
    }
    let activity = activity(spec, op, mask, ub_len)?;
    let lanes = REPEAT_BYTES / u64::from(spec.lane_bytes);
    let (active, n) = match activity.active {
        Active::Dense(n) => {
            // Gap-free strides: a repeat of an operand covers `lanes *
            // size` bytes in one run and the next repeat starts right after.
            let gap_free = |o: &Operand| {
                o.blk_stride == 1
                    && u64::from(o.rep_stride) * BLOCK_BYTES == lanes * u64::from(o.elem_size)
            };
            let fits = |o: &Operand| {
                u64::from(o.local.addr) + n as u64 * u64::from(o.elem_size) <= ub_len as u64
            };
            if (activity.count_form || spec.operands.iter().all(gap_free))
                && spec.operands.iter().all(fits)
            {
                return Ok(contiguous_plan(spec, activity.repeats, n, lanes));
            }
            ((0..lanes as u32).collect::<Vec<u32>>(), n)
        }
        Active::Masked(active) => {
            let n = activity.repeats as usize * active.len();
            (active, n)
        }
    };
    let rules: Vec<Rule> = spec.operands.iter().map(Rule::of).collect();
    if n == 0 {
        return Ok(Plan {
            lanes_per_repeat: lanes as u32,
            repeats: activity.repeats,
            len: 0,
            layout: Layout::Strided {
                lanes: active,
                rules,
                bounds: Vec::new(),
                spans: Vec::new(),
            },
            reads: Vec::new(),
            writes: Vec::new(),
        });
    }
    // Bounding bytes of each operand, from the lane offsets of a full
    // repeat and of the last (maybe partial) one; strides are never
    // negative, so the extremes lie in the first and the last two repeats.
    let per = active.len();
    let last_repeat = (n - 1) / per;
    let in_last = n - last_repeat * per;
    let mut lows = Vec::with_capacity(rules.len());
    let mut highs = Vec::with_capacity(rules.len());
    let mut spans = Vec::with_capacity(rules.len());
    for rule in &rules {
        let (mut lo_all, mut hi_all) = (usize::MAX, 0);
        let (mut lo_last, mut hi_last) = (usize::MAX, 0);
        for (j, &l) in active.iter().enumerate() {
            let off = rule.lane_offset(l as usize);
            lo_all = lo_all.min(off);
            hi_all = hi_all.max(off + rule.size);
            if j < in_last {
                lo_last = lo_last.min(off);
                hi_last = hi_last.max(off + rule.size);
            }
        }
        let (low, mut high) = if last_repeat == 0 {
            (rule.base + lo_last, rule.base + hi_last)
        } else {
            (
                rule.base + lo_all,
                rule.base + last_repeat * rule.rep + hi_last,
            )
        };
        if last_repeat > 0 {
            high = high.max(rule.base + (last_repeat - 1) * rule.rep + hi_all);
        }
        lows.push(low as u64);
        highs.push(high as u64);
        spans.push(hi_all - lo_all);
    }
    if highs.iter().any(|&h| h > ub_len as u64) {
        return Err(first_out_of_range(spec, &rules, &active, n, ub_len));
    }
    let (reads, writes) = regions(spec, &lows, &highs);
    let bounds = lows
        .iter()
        .zip(&highs)
        .map(|(&l, &h)| (l as usize, h as usize))
        .collect();
    Ok(Plan {
        lanes_per_repeat: lanes as u32,
        repeats: activity.repeats,
        len: n,
        layout: Layout::Strided {
            lanes: active,
            rules,
            bounds,
            spans,
        },
        reads,
        writes,
    })
}

/// The fault of the first active element (in execution order, operands in
/// spec order) that lies beyond a UB of `ub_len` bytes.
fn first_out_of_range(
    spec: &Spec,
    rules: &[Rule],
    active: &[u32],
    n: usize,
    ub_len: usize,
) -> Fault {
    for idx in 0..n {
        let (r, l) = (idx / active.len(), active[idx % active.len()] as usize);
        for (operand, rule) in spec.operands.iter().zip(rules) {
            let addr = rule.addr(r, l) as u64;
            let end = addr + rule.size as u64;
            if end > ub_len as u64 {
                return Fault::LocalOutOfRange {
                    operand: operand.name,
                    mem: Mem::Ub.name(),
                    start: addr,
                    end,
                    cap: ub_len as u64,
                };
            }
        }
    }
    Fault::InvalidArg {
        api: spec.api,
        what: "operand beyond the UB".into(),
    }
}

/// The plan of `n` active elements contiguous in every operand (already
/// bounds-checked by the caller).
fn contiguous_plan(spec: &Spec, repeats: u32, n: usize, lanes: u64) -> Plan {
    let bases: Vec<usize> = spec
        .operands
        .iter()
        .map(|o| o.local.addr as usize)
        .collect();
    let sizes: Vec<usize> = spec.operands.iter().map(|o| o.elem_size as usize).collect();
    let (reads, writes) = if n == 0 {
        (Vec::new(), Vec::new())
    } else {
        let lows: Vec<u64> = bases.iter().map(|&b| b as u64).collect();
        let highs: Vec<u64> = bases
            .iter()
            .zip(&sizes)
            .map(|(&b, &s)| (b + n * s) as u64)
            .collect();
        regions(spec, &lows, &highs)
    };
    Plan {
        lanes_per_repeat: lanes as u32,
        repeats,
        len: n,
        layout: Layout::Contiguous { bases, sizes },
        reads,
        writes,
    }
}

/// The bounding read and written regions of the operands, from each
/// operand's lowest and highest touched byte.
fn regions(spec: &Spec, lows: &[u64], highs: &[u64]) -> (Vec<Region>, Vec<Region>) {
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    for (k, operand) in spec.operands.iter().enumerate() {
        let region = ub_region(lows[k], highs[k]);
        if matches!(operand.access, Access::Read | Access::ReadWrite) {
            reads.push(region);
        }
        if matches!(operand.access, Access::Write | Access::ReadWrite) {
            writes.push(region);
        }
    }
    (reads, writes)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::abi::{AscLoc, AscLocal};

    /// A zeroed `AscVecOp` (count form, no operands) for tests.
    pub(crate) fn blank_op() -> AscVecOp {
        AscVecOp {
            op: 0,
            dtype: 0,
            src_dtype: 0,
            form: form::COUNT,
            round: 0,
            dst: AscLocal::default(),
            src0: AscLocal::default(),
            src1: AscLocal::default(),
            src2: AscLocal::default(),
            count: 0,
            mask: [0, 0],
            repeat: 0,
            dst_blk: 1,
            src0_blk: 1,
            src1_blk: 1,
            dst_rep: 8,
            src0_rep: 8,
            src1_rep: 8,
            scalar_bits: 0,
            scalar_dtype: 0,
            reserved: [0; 7],
            p: [0; 8],
            loc: AscLoc {
                file: std::ptr::null(),
                line: 0,
            },
        }
    }

    /// A UB view at `addr`.
    pub(crate) fn ub(addr: u32, dtype: u8) -> AscLocal {
        AscLocal {
            mem: 1,
            dtype,
            reserved: 0,
            addr,
            elems: 0,
        }
    }

    fn binary(op: &AscVecOp, size: u32) -> [Operand; 3] {
        [
            Operand::dst(op, size, Access::Write),
            Operand::src0(op, size),
            Operand::src1(op, size),
        ]
    }

    const UB: usize = 192 * 1024;

    fn positions(plan: &Plan) -> Vec<(u32, u32)> {
        (0..plan.len()).map(|i| plan.position(i)).collect()
    }

    #[test]
    fn count_form_is_contiguous_and_counts_repeats() {
        let mut op = blank_op();
        op.dst = ub(0, 1);
        op.src0 = ub(1024, 1);
        op.src1 = ub(2048, 1);
        op.count = 130;
        let ops = binary(&op, 2);
        let res = super::plan(&Spec::widest("Add", &ops), &op, &MaskState::reset(), UB).unwrap();
        assert_eq!(res.len(), 130);
        assert_eq!(res.repeats, 2); // 130 * 2 B = 260 B -> ceil(260 / 256)
        assert_eq!(res.addr(129, 0), 258);
        assert_eq!(res.addr(129, 2), 2048 + 258);
        assert_eq!(
            res.reads,
            vec![ub_region(1024, 1284), ub_region(2048, 2308)]
        );
        assert_eq!(res.writes, vec![ub_region(0, 260)]);
    }

    #[test]
    fn mask_cont_with_block_and_repeat_strides() {
        // float, mask 10 lanes, 2 repeats; dst blk 2 rep 20, src0 blk 1 rep 8.
        let mut op = blank_op();
        op.form = form::MASK_CONT;
        op.mask = [10, 0];
        op.repeat = 2;
        op.dst = ub(4096, 3);
        op.src0 = ub(0, 3);
        op.src1 = ub(8192, 3);
        op.dst_blk = 2;
        op.dst_rep = 20;
        op.src1_blk = 3;
        op.src1_rep = 0;
        let ops = binary(&op, 4);
        let res = super::plan(&Spec::widest("Add", &ops), &op, &MaskState::reset(), UB).unwrap();
        assert_eq!(res.lanes_per_repeat, 64);
        assert_eq!(res.repeats, 2);
        assert_eq!(res.len(), 20);
        // element 9 = repeat 0 lane 9: block 1 (8 floats per block), offset 1.
        assert_eq!(res.position(9), (0, 9));
        assert_eq!(res.addr(9, 0), 4096 + 2 * 32 + 4);
        assert_eq!(res.addr(9, 1), 32 + 4);
        assert_eq!(res.addr(9, 2), 8192 + 3 * 32 + 4);
        // element 19 = repeat 1 lane 9.
        assert_eq!(res.addr(19, 0), 4096 + 20 * 32 + 2 * 32 + 4);
        assert_eq!(res.addr(19, 1), 8 * 32 + 32 + 4);
        assert_eq!(res.addr(19, 2), 8192 + 3 * 32 + 4); // repeat stride 0 re-reads
        assert_eq!(res.writes, vec![ub_region(4096, 4096 + 640 + 64 + 8)]);
        assert_eq!(res.repeat_chunks(), vec![0..10, 10..20]);
    }

    #[test]
    fn mask_bits_selects_lanes_of_both_words() {
        let mut op = blank_op();
        op.form = form::MASK_BITS;
        op.mask = [0b101, 1 << 63];
        op.repeat = 1;
        op.dst = ub(0, 1);
        op.src0 = ub(256, 1);
        let ops = [Operand::dst(&op, 2, Access::Write), Operand::src0(&op, 2)];
        let res = super::plan(&Spec::widest("Abs", &ops), &op, &MaskState::reset(), UB).unwrap();
        assert_eq!(positions(&res), vec![(0, 0), (0, 2), (0, 127)]);
        assert_eq!(res.addr(2, 0), 254);
        // For b32 only the low word counts.
        let ops32 = [Operand::dst(&op, 4, Access::Write), Operand::src0(&op, 4)];
        let res32 =
            super::plan(&Spec::widest("Abs", &ops32), &op, &MaskState::reset(), UB).unwrap();
        assert_eq!(positions(&res32), vec![(0, 0), (0, 2)]);
    }

    #[test]
    fn mixed_width_lanes_follow_the_wider_type() {
        // half -> float cast: 64 lanes; the half source fills 4 blocks.
        let mut op = blank_op();
        op.form = form::MASK_CONT;
        op.mask = [64, 0];
        op.repeat = 2;
        op.dst = ub(0, 3);
        op.src0 = ub(1024, 1);
        op.dst_rep = 8;
        op.src0_rep = 4;
        let ops = [Operand::dst(&op, 4, Access::Write), Operand::src0(&op, 2)];
        let res = super::plan(&Spec::widest("Cast", &ops), &op, &MaskState::reset(), UB).unwrap();
        assert_eq!(res.lanes_per_repeat, 64);
        assert_eq!(res.len(), 128);
        assert_eq!(res.addr(63, 1), 1024 + 126);
        assert_eq!(res.addr(64, 1), 1024 + 128);
        assert_eq!(res.addr(64, 0), 256);
        assert_eq!(res.reads, vec![ub_region(1024, 1280)]);
    }

    #[test]
    fn counter_mode_ignores_repeat_and_keeps_strides() {
        let mut op = blank_op();
        op.form = form::MASK_CUR;
        op.repeat = 1;
        op.dst = ub(0, 3);
        op.src0 = ub(4096, 3);
        op.dst_rep = 16; // a gap of one repeat between repeats
        let counter = MaskState {
            counter: true,
            lo: 70,
            hi: 0,
        };
        let ops = [Operand::dst(&op, 4, Access::Write), Operand::src0(&op, 4)];
        let res = super::plan(&Spec::widest("Relu", &ops), &op, &counter, UB).unwrap();
        assert_eq!(res.repeats, 2);
        assert_eq!(res.len(), 70);
        assert_eq!(res.position(69), (1, 5));
        assert_eq!(res.addr(69, 0), 16 * 32 + 5 * 4);
        assert_eq!(res.addr(69, 1), 4096 + 8 * 32 + 5 * 4);
        // isSetMask=true forms in counter mode take the count from mask[0].
        op.form = form::MASK_CONT;
        op.mask = [3, 0];
        op.repeat = 200;
        let res = super::plan(&Spec::widest("Relu", &ops), &op, &counter, UB).unwrap();
        assert_eq!((res.repeats, res.len()), (1, 3));
    }

    #[test]
    fn normal_mode_cur_mask_and_repeat_zero() {
        let mut op = blank_op();
        op.form = form::MASK_CUR;
        op.repeat = 0;
        op.dst = ub(0, 1);
        let ops = [Operand::dst(&op, 2, Access::Write)];
        let res0 = super::plan(
            &Spec::widest("Duplicate", &ops),
            &op,
            &MaskState::reset(),
            UB,
        )
        .unwrap();
        assert_eq!(res0.len(), 0);
        assert!(res0.writes.is_empty());
        op.repeat = 3;
        let state = MaskState {
            counter: false,
            lo: 0,
            hi: 1,
        };
        let res = super::plan(&Spec::widest("Duplicate", &ops), &op, &state, UB).unwrap();
        assert_eq!(positions(&res), vec![(0, 64), (1, 64), (2, 64)]);
        assert_eq!(res.addr(2, 0), 2 * 256 + 128);
    }

    #[test]
    fn faults_name_the_operand() {
        let mut op = blank_op();
        op.dst = ub(0, 1);
        op.src0 = ub(48, 1);
        op.src1 = ub(64, 1);
        op.count = 16;
        let ops = binary(&op, 2);
        let unaligned = plan(&Spec::widest("Add", &ops), &op, &MaskState::reset(), UB);
        let expected = Fault::Unaligned {
            operand: "src0",
            mem: "UB",
            addr: 48,
            align: 32,
        };
        assert_eq!(unaligned, Err(expected));

        // 17 halves from UB - 32 end 2 bytes past the UB.
        op.src0 = ub(UB as u32 - 32, 1);
        op.count = 17;
        let ops = binary(&op, 2);
        let out = plan(&Spec::widest("Add", &ops), &op, &MaskState::reset(), UB);
        let expected = Fault::LocalOutOfRange {
            operand: "src0",
            mem: "UB",
            start: UB as u64 - 32,
            end: UB as u64 + 2,
            cap: UB as u64,
        };
        assert_eq!(out, Err(expected));

        // Mask form: the last repeat of src1 crosses the end.
        op.form = form::MASK_CONT;
        op.mask = [128, 0];
        op.repeat = 2;
        op.src0 = ub(0, 1);
        op.src1 = ub(UB as u32 - 256, 1);
        let ops = binary(&op, 2);
        let out = plan(&Spec::widest("Add", &ops), &op, &MaskState::reset(), UB);
        assert!(matches!(
            out,
            Err(Fault::LocalOutOfRange { operand: "src1", start, .. }) if start == UB as u64
        ));

        // Operands outside UB, bad masks and repeats.
        op.src1 = AscLocal { mem: 2, ..ub(0, 1) };
        let ops = binary(&op, 2);
        let out = plan(&Spec::widest("Add", &ops), &op, &MaskState::reset(), UB);
        assert!(matches!(out, Err(Fault::Unsupported { .. })));
        op.src1 = ub(512, 1);
        let ops = binary(&op, 2);
        let spec = Spec::widest("Add", &ops);
        op.mask = [129, 0];
        assert!(matches!(
            plan(&spec, &op, &MaskState::reset(), UB),
            Err(Fault::InvalidArg { .. })
        ));
        op.mask = [0, 0];
        assert!(matches!(
            plan(&spec, &op, &MaskState::reset(), UB),
            Err(Fault::InvalidArg { .. })
        ));
        op.form = form::MASK_BITS;
        assert!(matches!(
            plan(&spec, &op, &MaskState::reset(), UB),
            Err(Fault::InvalidArg { .. })
        ));
        op.mask = [1, 0];
        op.repeat = 256;
        assert!(matches!(
            plan(&spec, &op, &MaskState::reset(), UB),
            Err(Fault::InvalidArg { .. })
        ));
        op.form = form::COUNT;
        op.count = (-5i64) as u64;
        assert!(matches!(
            plan(&spec, &op, &MaskState::reset(), UB),
            Err(Fault::InvalidArg { .. })
        ));
        let wild = MaskState {
            counter: true,
            lo: 1 << 30,
            hi: 0,
        };
        op.form = form::MASK_CUR;
        assert!(matches!(
            plan(&spec, &op, &wild, UB),
            Err(Fault::InvalidArg { .. })
        ));
    }
}
