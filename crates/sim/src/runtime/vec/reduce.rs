//! Reductions: ReduceSum/Max/Min (whole input), WholeReduceSum/Max/Min (one
//! result per repeat), BlockReduceSum/Max/Min (one result per 32-byte
//! block) and PairReduceSum (adjacent pairs).
//!
//! Semantics (guide 2.5.2.3.2 "如何使用归约计算API", 6.2.3.3.6.1-10;
//! hardware-facts.md section C). Types: half and float (Atlas A2).
//! - Sums add pairs in a binary tree: lanes (0,1), (2,3), ... then the
//!   pair results, and so on. Every partial sum is rounded to the element
//!   type (f16: nearest-even; a finite f16 sum beyond ±65504 saturates to
//!   ±65504, "计算结果大于65504时结果保存为65504"; an infinite input stays
//!   infinite). f32 sums are IEEE. Inactive lanes take no part.
//! - ReduceSum on A2: the count form adds by tree inside a repeat and
//!   sequentially across repeats ("方式二"); the mask form also reduces the
//!   per-repeat results by tree, `256 / sizeof(T)` at a time ("方式一").
//! - Max/Min: the first occurrence wins ties ("如果存在多个最大值，返回第一个
//!   最大值的索引"); a NaN input propagates (the first NaN is the result),
//!   like the simulator's Max/Min. -0 and +0 compare equal.
//! - Indices are stored as integers in an element of the destination type
//!   (u16 bits in a half, u32 bits in a float); WholeReduce
//!   ORDER_ONLY_INDEX stores a uint32 index on A2.
//! - ReduceMax/Min indices count elements from the start
//!   (`repeat * 256 / sizeof(T) + lane`); WholeReduce indices are inside
//!   the repeat. A half ReduceMax/Min index above 65535 is rejected.
//! - ReduceSum/Max/Min: `src1` is the sharedTmpBuffer. It must hold the
//!   documented minimum size (the count-form ReduceSum needs none: "传入任意
//!   大小的sharedTmpBuffer，sharedTmpBuffer的值不会被改变"), and like the hardware
//!   the first round's intermediate results are written into it. The mask
//!   form takes `srcRepStride` in `src0_rep` (block stride 1) and allows
//!   more than 255 repeats.
//! - WholeReduce: `p[0]` = dstRepStride in units of one repeat's result
//!   (value+index: 2 elements; value only: 1 element; index only: 4 bytes),
//!   `p[1]` = srcBlkStride, `p[2]` = srcRepStride, `p[3]` = ReduceOrder.
//! - BlockReduce: 8 results per repeat, `p[0]` = dstRepStride in units of
//!   8 elements; a block without active lanes keeps its old dst value.
//! - PairReduceSum: `256 / sizeof(T) / 2` results per repeat, `p[0]` =
//!   dstRepStride in units of 128 bytes; a pair without active lanes keeps
//!   its old dst value, a pair with one active lane stores that lane.
//! - Alignment of dst (per API page): ReduceSum and WholeReduceSum one
//!   element; ReduceMax/Min and WholeReduceMax/Min two elements;
//!   BlockReduce 8 elements; PairReduceSum 32 bytes. src and the
//!   sharedTmpBuffer 32 bytes.

use ascendopt_op::Dtype;

use crate::abi::{form, AscLocal, AscVecOp};
use crate::numeric::{self, float_value, round_float, Overflow, Rounding, F16, F32};
use crate::runtime::fault::Fault;
use crate::trace::{Mem, Region, VecOp};

use super::compare::dtype_of;
use super::lanes::{
    check_local, check_range, plan, ub_region, Operand, Spec, BLOCK_BYTES, MAX_REPEAT, REPEAT_BYTES,
};
use super::{MaskState, VecEffect};

/// What a reduction computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sum,
    Max,
    Min,
}

/// Which reduction family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// ReduceSum/Max/Min.
    All,
    /// WholeReduceSum/Max/Min.
    Whole,
    /// BlockReduceSum/Max/Min.
    Block,
    /// PairReduceSum.
    Pair,
}

/// Executes one reduction instruction.
pub fn execute(ub: &mut [u8], mask: &MaskState, op: &AscVecOp) -> Result<VecEffect, Fault> {
    use VecOp::*;
    let vec_op = VecOp::from_code(op.op).ok_or_else(|| Fault::InvalidArg {
        api: "vector",
        what: format!("unknown vector op code {}", op.op),
    })?;
    let (family, kind) = match vec_op {
        ReduceSum => (Family::All, Kind::Sum),
        ReduceMax => (Family::All, Kind::Max),
        ReduceMin => (Family::All, Kind::Min),
        WholeReduceSum => (Family::Whole, Kind::Sum),
        WholeReduceMax => (Family::Whole, Kind::Max),
        WholeReduceMin => (Family::Whole, Kind::Min),
        BlockReduceSum => (Family::Block, Kind::Sum),
        BlockReduceMax => (Family::Block, Kind::Max),
        BlockReduceMin => (Family::Block, Kind::Min),
        PairReduceSum => (Family::Pair, Kind::Sum),
        other => {
            return Err(Fault::Unsupported {
                api: other.name(),
                what: "this operation in the reduction family".into(),
            })
        }
    };
    let api = vec_op.name();
    let dtype = dtype_of(api, op.dtype, "destination")?;
    if !matches!(dtype, Dtype::Float16 | Dtype::Float32) {
        return Err(Fault::Unsupported {
            api,
            what: format!("{dtype} on Atlas A2 (half, float)"),
        });
    }
    if op.src_dtype != 0 && op.src_dtype != op.dtype {
        return Err(Fault::Unsupported {
            api,
            what: "a source type different from the destination type on Atlas A2".into(),
        });
    }
    let ctx = Ctx { api, kind, dtype };
    match family {
        Family::All => reduce_all(ub, mask, op, &ctx),
        Family::Whole => whole(ub, mask, op, &ctx),
        Family::Block => block(ub, mask, op, &ctx),
        Family::Pair => pair(ub, mask, op, &ctx),
    }
}

/// What every family needs to know.
struct Ctx {
    api: &'static str,
    kind: Kind,
    dtype: Dtype,
}

impl Ctx {
    fn size(&self) -> u64 {
        self.dtype.size() as u64
    }

    fn lanes(&self) -> u64 {
        REPEAT_BYTES / self.size()
    }

    fn value(&self, bits: u64) -> f64 {
        float_value(self.dtype, bits).unwrap_or(f64::NAN)
    }

    /// One rounded partial sum (see the module doc).
    fn add(&self, a: f64, b: f64) -> f64 {
        if self.dtype == Dtype::Float16 {
            // Exact in f64 (two halves), then one rounding with saturation.
            let bits = round_float(a + b, F16, Rounding::Rint, Overflow::Saturate);
            self.value(bits)
        } else {
            // Native f32 addition is the single IEEE rounding.
            f64::from(a as f32 + b as f32)
        }
    }

    fn bits(&self, value: f64) -> u64 {
        let fmt = if self.dtype == Dtype::Float16 {
            F16
        } else {
            F32
        };
        round_float(value, fmt, Rounding::Rint, Overflow::Ieee)
    }

    /// An index as the bits of one destination element.
    fn index_bits(&self, index: u64) -> Result<u64, Fault> {
        if self.dtype == Dtype::Float16 && index > u64::from(u16::MAX) {
            return Err(Fault::InvalidArg {
                api: self.api,
                what: format!(
                    "index {index} of a half reduction does not fit the 16-bit index (max 65535)"
                ),
            });
        }
        Ok(index)
    }

    fn store(&self, ub: &mut [u8], addr: u64, bits: u64) {
        numeric::store(ub, addr as usize, self.dtype, bits);
    }
}

/// Binary-tree sum of `vals` (lanes in order; `None` = inactive lane).
fn tree_sum(ctx: &Ctx, vals: &[Option<f64>]) -> Option<f64> {
    let mut level: Vec<Option<f64>> = vals.to_vec();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| match (pair[0], pair.get(1).copied().flatten()) {
                (Some(a), Some(b)) => Some(ctx.add(a, b)),
                (a, None) => a,
                (None, b) => b,
            })
            .collect();
    }
    level.first().copied().flatten()
}

/// Max or min of `(index, bits)` items in index order: strictly better
/// values replace the best, so ties keep the first; the first NaN wins.
fn pick(ctx: &Ctx, items: impl IntoIterator<Item = (u64, u64)>) -> Option<(u64, u64)> {
    let mut best: Option<(u64, u64)> = None;
    for (index, bits) in items {
        let v = ctx.value(bits);
        best = match best {
            None => Some((index, bits)),
            Some((_, b)) if ctx.value(b).is_nan() => best,
            Some(_) if v.is_nan() => Some((index, bits)),
            Some((_, b)) => {
                let better = match ctx.kind {
                    Kind::Max => v > ctx.value(b),
                    _ => v < ctx.value(b),
                };
                if better {
                    Some((index, bits))
                } else {
                    best
                }
            }
        };
    }
    best
}

/// Checks that a non-lane-mapped operand is in UB and `align`-aligned.
fn check_aligned(
    api: &'static str,
    name: &'static str,
    local: &AscLocal,
    align: u64,
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
    if !u64::from(local.addr).is_multiple_of(align) {
        return Err(Fault::Unaligned {
            operand: name,
            mem: Mem::Ub.name(),
            addr: u64::from(local.addr),
            align,
        });
    }
    Ok(())
}

/// One active source element.
#[derive(Debug, Clone, Copy)]
struct Elem {
    repeat: u32,
    lane: u32,
    bits: u64,
}

/// The active source elements (read from `ub`) of `op` with the given
/// src strides, the repeats issued and the bounding read region. With
/// `long_repeat`, a mask form may have more than 255 repeats (issued in
/// chunks of 255, like the API does).
fn read_src(
    ub: &[u8],
    mask: &MaskState,
    op: &AscVecOp,
    ctx: &Ctx,
    (blk, rep): (u32, u32),
    long_repeat: bool,
) -> Result<(Vec<Elem>, u32, Option<Region>), Fault> {
    let mut lane_op = *op;
    lane_op.src0_blk = blk;
    lane_op.src0_rep = rep;
    let chunked = long_repeat && op.form != form::COUNT && !mask.counter && op.repeat > MAX_REPEAT;
    if chunked && u64::from(op.repeat) > ub.len() as u64 / BLOCK_BYTES {
        // Only a repeat stride of 0 could stay inside the UB; not modelled.
        return Err(Fault::Unsupported {
            api: ctx.api,
            what: format!(
                "repeatTime {} (more repeats than the UB has 32-byte blocks)",
                op.repeat as i32
            ),
        });
    }
    let mut elems = Vec::new();
    let mut repeats = 0u32;
    let (mut low, mut high) = (u64::MAX, 0u64);
    let mut first = 0u32;
    loop {
        if chunked {
            let start = u64::from(op.src0.addr) + u64::from(first) * u64::from(rep) * BLOCK_BYTES;
            lane_op.src0.addr = u32::try_from(start).map_err(|_| Fault::LocalOutOfRange {
                operand: "src",
                mem: Mem::Ub.name(),
                start,
                end: start + REPEAT_BYTES,
                cap: ub.len() as u64,
            })?;
            lane_op.repeat = MAX_REPEAT.min(op.repeat - first);
        }
        let mut operand = Operand::src0(&lane_op, ctx.size() as u32);
        operand.name = "src";
        let operands = [operand];
        let lane_plan = plan(&Spec::widest(ctx.api, &operands), &lane_op, mask, ub.len())?;
        repeats += lane_plan.repeats;
        elems.reserve(lane_plan.len());
        for i in 0..lane_plan.len() {
            let (r, l) = lane_plan.position(i);
            let addr = lane_plan.addr(i, 0);
            low = low.min(addr as u64);
            high = high.max(addr as u64 + ctx.size());
            elems.push(Elem {
                repeat: first + r,
                lane: l,
                bits: numeric::load(ub, addr, ctx.dtype),
            });
        }
        first += lane_plan.repeats;
        if !chunked || first >= op.repeat {
            break;
        }
    }
    let region = (!elems.is_empty()).then(|| ub_region(low, high));
    Ok((elems, repeats, region))
}

/// Splits elements (in repeat order) into per-repeat groups.
fn by_repeat(elems: &[Elem]) -> Vec<&[Elem]> {
    elems.chunk_by(|a, b| a.repeat == b.repeat).collect()
}

fn round_up(a: u64, b: u64) -> u64 {
    a.div_ceil(b) * b
}

/// ReduceSum / ReduceMax / ReduceMin.
fn reduce_all(
    ub: &mut [u8],
    mask: &MaskState,
    op: &AscVecOp,
    ctx: &Ctx,
) -> Result<VecEffect, Fault> {
    let api = ctx.api;
    let size = ctx.size();
    let lanes = ctx.lanes();
    let per_block = BLOCK_BYTES / size;
    let cal_index = ctx.kind != Kind::Sum && op.p[0] != 0;
    let dst_elems: u64 = if cal_index { 2 } else { 1 };
    check_aligned(
        api,
        "dst",
        &op.dst,
        if ctx.kind == Kind::Sum {
            size
        } else {
            2 * size
        },
    )?;
    check_local(api, "src", &op.src0)?;
    check_local(api, "sharedTmpBuffer", &op.src1)?;
    let count_form = op.form == form::COUNT;
    let (elems, first_repeats, src_region) = read_src(ub, mask, op, ctx, (1, op.src0_rep), true)?;
    let mut spr_index = 0u64;
    let mut effect = VecEffect {
        repeats: first_repeats,
        elems: elems.len() as u64,
        reads: src_region.into_iter().collect(),
        writes: Vec::new(),
        result: 0,
    };
    if elems.is_empty() {
        return Ok(effect);
    }
    // The documented minimum sharedTmpBuffer size, in elements.
    let first_max_repeat = if count_form {
        (op.count / lanes).max(1)
    } else {
        u64::from(op.repeat.max(1))
    };
    let work_needed = match ctx.kind {
        Kind::Sum if count_form => 0,
        Kind::Sum => round_up(first_max_repeat, per_block),
        _ if !cal_index => round_up(first_max_repeat * 2, per_block),
        _ => {
            let iter1 = first_max_repeat * 2;
            let iter2_start = round_up(iter1, per_block);
            let iter2 = iter1.div_ceil(lanes) * 2;
            let iter3_start = round_up(iter2, per_block);
            let iter3 = iter2.div_ceil(lanes) * 2;
            iter2_start + iter3_start + round_up(iter3, per_block)
        }
    };
    if u64::from(op.src1.elems) < work_needed {
        return Err(Fault::InvalidArg {
            api,
            what: format!(
                "sharedTmpBuffer holds {} elements, {api} needs at least {work_needed}",
                op.src1.elems
            ),
        });
    }
    let groups = by_repeat(&elems);
    // Rounds after the first, for the trace (each reduces `lanes` results
    // per repeat).
    let mut results = groups.len() as u64 * if ctx.kind == Kind::Sum { 1 } else { 2 };
    while results > 2 {
        let n = results.div_ceil(lanes);
        effect.repeats = effect.repeats.saturating_add(n as u32);
        results = n * if ctx.kind == Kind::Sum { 1 } else { 2 };
    }
    // First-round intermediates, written to the sharedTmpBuffer as the
    // hardware does (never beyond the documented minimum size).
    let mut work: Vec<u64> = Vec::new();
    let dst_bits: Vec<u64> = match ctx.kind {
        Kind::Sum => {
            let sums: Vec<f64> = groups
                .iter()
                .map(|g| {
                    let mut vals = vec![None; lanes as usize];
                    for e in g.iter() {
                        vals[e.lane as usize] = Some(ctx.value(e.bits));
                    }
                    tree_sum(ctx, &vals).unwrap_or(0.0)
                })
                .collect();
            let total = if count_form {
                sums.iter()
                    .copied()
                    .reduce(|acc, s| ctx.add(acc, s))
                    .unwrap_or(0.0)
            } else {
                work = sums.iter().map(|&s| ctx.bits(s)).collect();
                let mut level = sums;
                while level.len() > 1 {
                    level = level
                        .chunks(lanes as usize)
                        .map(|c| {
                            tree_sum(ctx, &c.iter().map(|&v| Some(v)).collect::<Vec<_>>())
                                .unwrap_or(0.0)
                        })
                        .collect();
                }
                level.first().copied().unwrap_or(0.0)
            };
            vec![ctx.bits(total)]
        }
        Kind::Max | Kind::Min => {
            for g in &groups {
                if let Some((lane, bits)) = pick(ctx, g.iter().map(|e| (u64::from(e.lane), e.bits)))
                {
                    work.push(bits);
                    work.push(lane);
                }
            }
            let items = elems
                .iter()
                .map(|e| (u64::from(e.repeat) * lanes + u64::from(e.lane), e.bits));
            let (index, bits) = pick(ctx, items).unwrap_or((0, 0));
            // The result register keeps the index too (GetReduceRepeatMaxMinSpr).
            spr_index = index & (u64::MAX >> (64 - 8 * size));
            if cal_index {
                vec![bits, ctx.index_bits(index)?]
            } else {
                vec![bits]
            }
        }
    };
    // Write the intermediates, then the result (dst may overlap the
    // sharedTmpBuffer).
    work.truncate(work_needed as usize);
    if !work.is_empty() {
        let start = u64::from(op.src1.addr);
        let end = start + work.len() as u64 * size;
        check_range("sharedTmpBuffer", start, end, ub.len())?;
        for (i, bits) in work.iter().enumerate() {
            ctx.store(ub, start + i as u64 * size, *bits);
        }
        effect.writes.push(ub_region(start, end));
    }
    let dst_start = u64::from(op.dst.addr);
    let dst_end = dst_start + dst_elems * size;
    check_range("dst", dst_start, dst_end, ub.len())?;
    for (i, bits) in dst_bits.iter().enumerate() {
        ctx.store(ub, dst_start + i as u64 * size, *bits);
    }
    effect.writes.push(ub_region(dst_start, dst_end));
    effect.result = dst_bits.first().copied().unwrap_or(0) | (spr_index << 32);
    Ok(effect)
}

/// `ReduceOrder` of WholeReduceMax/Min.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    ValueIndex,
    IndexValue,
    OnlyValue,
    OnlyIndex,
}

/// One computed result: where, and the element-sized pieces to store
/// (`u32` pieces for an ORDER_ONLY_INDEX index).
struct Output {
    addr: u64,
    /// (bits, bytes) of each piece; the first `count` are used (held
    /// inline: reductions make an output per repeat, block or pair).
    pieces: [(u64, usize); 2],
    count: usize,
}

impl Output {
    /// An output of the given pieces (one or two).
    fn new(addr: u64, pieces: &[(u64, usize)]) -> Output {
        let mut out = Output {
            addr,
            pieces: [(0, 0); 2],
            count: pieces.len().min(2),
        };
        out.pieces[..out.count].copy_from_slice(&pieces[..out.count]);
        out
    }

    fn pieces(&self) -> &[(u64, usize)] {
        &self.pieces[..self.count]
    }
}

/// Writes outputs after every read, returns the bounding write region.
fn write_outputs(ub: &mut [u8], outputs: &[Output]) -> Result<Option<Region>, Fault> {
    let (mut low, mut high) = (u64::MAX, 0u64);
    for out in outputs {
        let len: u64 = out.pieces().iter().map(|&(_, s)| s as u64).sum();
        check_range("dst", out.addr, out.addr + len, ub.len())?;
        low = low.min(out.addr);
        high = high.max(out.addr + len);
    }
    for out in outputs {
        let mut addr = out.addr as usize;
        for &(bits, size) in out.pieces() {
            numeric::store_bits(ub, addr, size, bits);
            addr += size;
        }
    }
    Ok((!outputs.is_empty()).then(|| ub_region(low, high)))
}

/// WholeReduceSum / WholeReduceMax / WholeReduceMin.
fn whole(ub: &mut [u8], mask: &MaskState, op: &AscVecOp, ctx: &Ctx) -> Result<VecEffect, Fault> {
    let api = ctx.api;
    let size = ctx.size();
    if op.form == form::COUNT {
        return Err(Fault::Unsupported {
            api,
            what: "a count form (WholeReduce has mask forms only)".into(),
        });
    }
    let order = match (ctx.kind, op.p[3]) {
        (Kind::Sum, _) => Order::OnlyValue,
        (_, 0) => Order::ValueIndex,
        (_, 1) => Order::IndexValue,
        (_, 2) => Order::OnlyValue,
        (_, 3) => Order::OnlyIndex,
        (_, other) => {
            return Err(Fault::InvalidArg {
                api,
                what: format!("unknown ReduceOrder {other}"),
            })
        }
    };
    check_aligned(
        api,
        "dst",
        &op.dst,
        if ctx.kind == Kind::Sum {
            size
        } else {
            2 * size
        },
    )?;
    let unit = match order {
        Order::ValueIndex | Order::IndexValue => 2 * size,
        Order::OnlyValue => size,
        Order::OnlyIndex => 4,
    };
    let (elems, repeats, src_region) = read_src(ub, mask, op, ctx, (op.p[1], op.p[2]), false)?;
    let s = size as usize;
    let mut outputs = Vec::new();
    // The result register: the last repeat's value and index.
    let mut spr = 0u64;
    for g in by_repeat(&elems) {
        let repeat = u64::from(g[0].repeat);
        let addr = u64::from(op.dst.addr) + repeat * u64::from(op.p[0]) * unit;
        let output = if ctx.kind == Kind::Sum {
            let lanes = ctx.lanes() as usize;
            let mut vals = [None; REPEAT_BYTES as usize / 2];
            for e in g {
                vals[e.lane as usize] = Some(ctx.value(e.bits));
            }
            let sum = ctx.bits(tree_sum(ctx, &vals[..lanes]).unwrap_or(0.0));
            spr = sum;
            Output::new(addr, &[(sum, s)])
        } else {
            let (lane, bits) =
                pick(ctx, g.iter().map(|e| (u64::from(e.lane), e.bits))).unwrap_or((0, 0));
            spr = bits | (lane << 32);
            match order {
                Order::ValueIndex => Output::new(addr, &[(bits, s), (lane, s)]),
                Order::IndexValue => Output::new(addr, &[(lane, s), (bits, s)]),
                Order::OnlyValue => Output::new(addr, &[(bits, s)]),
                Order::OnlyIndex => Output::new(addr, &[(lane, 4)]),
            }
        };
        outputs.push(output);
    }
    let written = write_outputs(ub, &outputs)?;
    Ok(VecEffect {
        repeats,
        elems: elems.len() as u64,
        reads: src_region.into_iter().collect(),
        writes: written.into_iter().collect(),
        result: spr,
    })
}

/// BlockReduceSum / BlockReduceMax / BlockReduceMin.
fn block(ub: &mut [u8], mask: &MaskState, op: &AscVecOp, ctx: &Ctx) -> Result<VecEffect, Fault> {
    let api = ctx.api;
    let size = ctx.size();
    if op.form == form::COUNT {
        return Err(Fault::Unsupported {
            api,
            what: "a count form (BlockReduce has mask forms only)".into(),
        });
    }
    let per_block = BLOCK_BYTES / size;
    check_aligned(api, "dst", &op.dst, 8 * size)?;
    let (elems, repeats, src_region) = read_src(ub, mask, op, ctx, (op.p[1], op.p[2]), false)?;
    let mut outputs = Vec::new();
    for g in by_repeat(&elems) {
        let repeat = u64::from(g[0].repeat);
        for blk in g.chunk_by(|a, b| u64::from(a.lane) / per_block == u64::from(b.lane) / per_block)
        {
            let index = u64::from(blk[0].lane) / per_block;
            let bits = if ctx.kind == Kind::Sum {
                let mut vals = [None; BLOCK_BYTES as usize];
                for e in blk {
                    vals[(u64::from(e.lane) % per_block) as usize] = Some(ctx.value(e.bits));
                }
                ctx.bits(tree_sum(ctx, &vals[..per_block as usize]).unwrap_or(0.0))
            } else {
                pick(ctx, blk.iter().map(|e| (u64::from(e.lane), e.bits))).map_or(0, |(_, b)| b)
            };
            outputs.push(Output::new(
                u64::from(op.dst.addr) + repeat * u64::from(op.p[0]) * 8 * size + index * size,
                &[(bits, size as usize)],
            ));
        }
    }
    let written = write_outputs(ub, &outputs)?;
    Ok(VecEffect {
        repeats,
        elems: elems.len() as u64,
        reads: src_region.into_iter().collect(),
        writes: written.into_iter().collect(),
        result: 0,
    })
}

/// PairReduceSum.
fn pair(ub: &mut [u8], mask: &MaskState, op: &AscVecOp, ctx: &Ctx) -> Result<VecEffect, Fault> {
    let api = ctx.api;
    let size = ctx.size();
    if op.form == form::COUNT {
        return Err(Fault::Unsupported {
            api,
            what: "a count form (PairReduceSum has mask forms only)".into(),
        });
    }
    check_local(api, "dst", &op.dst)?;
    let (elems, repeats, src_region) = read_src(ub, mask, op, ctx, (op.p[1], op.p[2]), false)?;
    let mut outputs = Vec::new();
    for g in by_repeat(&elems) {
        let repeat = u64::from(g[0].repeat);
        for two in g.chunk_by(|a, b| a.lane / 2 == b.lane / 2) {
            let index = u64::from(two[0].lane / 2);
            let sum = two
                .iter()
                .map(|e| ctx.value(e.bits))
                .reduce(|a, b| ctx.add(a, b))
                .unwrap_or(0.0);
            outputs.push(Output::new(
                u64::from(op.dst.addr) + repeat * u64::from(op.p[0]) * 128 + index * size,
                &[(ctx.bits(sum), size as usize)],
            ));
        }
    }
    let written = write_outputs(ub, &outputs)?;
    Ok(VecEffect {
        repeats,
        elems: elems.len() as u64,
        reads: src_region.into_iter().collect(),
        writes: written.into_iter().collect(),
        result: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::vec::lanes::tests::{blank_op, ub as view};

    const POISON: u8 = 0xa5;
    const H: Dtype = Dtype::Float16;
    const F: Dtype = Dtype::Float32;

    fn new_ub() -> Vec<u8> {
        vec![POISON; 32768]
    }

    fn h(x: f64) -> u64 {
        u64::from(half::f16::from_f64(x).to_bits())
    }

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    fn poison(dtype: Dtype) -> u64 {
        numeric::load(&[POISON; 8], 0, dtype)
    }

    fn put(ub: &mut [u8], addr: usize, dtype: Dtype, bits: &[u64]) {
        for (i, b) in bits.iter().enumerate() {
            numeric::store(ub, addr + i * dtype.size(), dtype, *b);
        }
    }

    fn get(ub: &[u8], addr: usize, dtype: Dtype, n: usize) -> Vec<u64> {
        (0..n)
            .map(|i| numeric::load(ub, addr + i * dtype.size(), dtype))
            .collect()
    }

    fn run(ub: &mut [u8], op: &AscVecOp) -> Result<VecEffect, Fault> {
        execute(ub, &MaskState::reset(), op)
    }

    /// A reduction with dst @0, src @4096, sharedTmpBuffer @1024 (1024
    /// elements).
    fn red_op(code: u32, dtype: Dtype) -> AscVecOp {
        let mut op = blank_op();
        op.op = code;
        op.dtype = dtype.abi_code();
        op.src_dtype = op.dtype;
        op.dst = view(0, op.dtype);
        op.src0 = view(4096, op.dtype);
        op.src1 = AscLocal {
            elems: 1024,
            ..view(1024, op.dtype)
        };
        op
    }

    fn mask_cont(mut op: AscVecOp, mask: u64, repeat: u32) -> AscVecOp {
        op.form = form::MASK_CONT;
        op.mask = [mask, 0];
        op.repeat = repeat;
        op
    }

    /// One-hot halves: `n` zeros with `vals` at the given positions.
    fn sparse(n: usize, vals: &[(usize, f64)]) -> Vec<u64> {
        let mut out = vec![h(0.0); n];
        for &(i, v) in vals {
            out[i] = h(v);
        }
        out
    }

    #[test]
    fn half_sums_round_and_saturate_at_every_step() {
        // The guide's example [60000, 60000, -30000, 100] with f16 rounding
        // of each partial sum: 60000 + 60000 saturates to 65504; -30000 +
        // 100 = -29900 rounds to -29904 (spacing 16); 65504 - 29904 = 35600
        // is a tie between 35584 and 35616 (spacing 32) -> even 35584.
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            H,
            &[h(60000.0), h(60000.0), h(-30000.0), h(100.0)],
        );
        let mut op = mask_cont(red_op(93, H), 4, 1);
        op.p = [1, 1, 8, 0, 0, 0, 0, 0];
        let effect = run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, H, 2), vec![h(35584.0), poison(H)]);
        assert_eq!((effect.repeats, effect.elems), (1, 4));
        // float sums are IEEE: 3e38 + 3e38 overflows to inf.
        let mut ub = new_ub();
        put(&mut ub, 4096, F, &[f(3e38), f(3e38)]);
        let mut op = mask_cont(red_op(93, F), 2, 1);
        op.p = [1, 1, 8, 0, 0, 0, 0, 0];
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F, 1), vec![f(f32::INFINITY)]);
    }

    #[test]
    fn whole_reduce_sum_adds_by_tree_with_dst_and_src_strides() {
        // Repeat 0 lanes [2048, 1, 1, 1]: (2048 + 1) is a tie -> 2048,
        // (1 + 1) = 2, 2048 + 2 = 2050 (exact 2051 would round to 2052, a
        // sequential sum gives 2048). Repeat 1 (src repeat stride 16 blocks,
        // block stride 2): lanes 0 and 16 (block 1) hold 3 and 4, lane 17
        // is inactive (mask 17 lanes: 0..16).
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            H,
            &sparse(4, &[(0, 2048.0), (1, 1.0), (2, 1.0), (3, 1.0)]),
        );
        let r1 = 4096 + 16 * 32;
        put(&mut ub, r1, H, &[h(3.0)]);
        put(&mut ub, r1 + 64, H, &[h(4.0), h(100.0)]);
        // Zero the other active lanes of both repeats.
        for blk in 0..2 {
            for base in [4096, r1] {
                for l in 0..16 {
                    let addr = base + blk * 64 + l * 2;
                    if numeric::load(&ub, addr, H) == poison(H) {
                        numeric::store(&mut ub, addr, H, h(0.0));
                    }
                }
            }
        }
        let mut op = mask_cont(red_op(93, H), 17, 2);
        op.p = [3, 2, 16, 0, 0, 0, 0, 0]; // dstRepStride 3 (units of one half)
        let effect = run(&mut ub, &op).unwrap();
        let out = get(&ub, 0, H, 4);
        assert_eq!(out, vec![h(2050.0), poison(H), poison(H), h(7.0)]);
        assert_eq!(effect.writes, vec![ub_region(0, 8)]);
        assert_eq!(effect.reads, vec![ub_region(4096, (r1 + 64 + 2) as u64)]);
    }

    #[test]
    fn reduce_sum_count_form_is_sequential_across_repeats() {
        // 4 repeats of 128 halves with repeat sums [2048, 1, 1, 1].
        // Count form (A2 "方式二"): ((2048 + 1) + 1) + 1, each a tie -> 2048.
        // Mask form ("方式一"): tree (2048 + 1) = 2048, (1 + 1) = 2 -> 2050.
        let src = sparse(512, &[(0, 2048.0), (128, 1.0), (256, 1.0), (384, 1.0)]);
        let mut ub = new_ub();
        put(&mut ub, 4096, H, &src);
        let mut op = red_op(90, H);
        op.count = 512;
        op.src1.elems = 0; // the count form needs no sharedTmpBuffer
        let effect = run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, H, 2), vec![h(2048.0), poison(H)]);
        assert_eq!(
            ub[1024], POISON,
            "count-form ReduceSum leaves the sharedTmpBuffer alone"
        );
        assert_eq!(effect.writes, vec![ub_region(0, 2)]);
        assert_eq!(effect.elems, 512);

        let mut ub = new_ub();
        put(&mut ub, 4096, H, &src);
        let op = mask_cont(red_op(90, H), 128, 4);
        let effect = run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, H, 1), vec![h(2050.0)]);
        // The per-repeat sums were written to the sharedTmpBuffer.
        assert_eq!(
            get(&ub, 1024, H, 5),
            vec![h(2048.0), h(1.0), h(1.0), h(1.0), poison(H)]
        );
        assert!(effect.writes.contains(&ub_region(1024, 1032)));
        // ... which must hold RoundUp(repeat, 16) = 16 elements.
        let mut small = mask_cont(red_op(90, H), 128, 4);
        small.src1.elems = 15;
        assert!(matches!(
            run(&mut ub, &small),
            Err(Fault::InvalidArg { .. })
        ));
    }

    #[test]
    fn reduce_sum_count_form_partial_repeat_and_float() {
        // 100 floats 0..100 (1 full repeat + 36): sum 4950, exact in f32.
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &(0..100).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        let mut op = red_op(90, F);
        op.count = 100;
        let effect = run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F, 2), vec![f(4950.0), poison(F)]);
        assert_eq!(effect.reads, vec![ub_region(4096, 4496)]);
        assert_eq!(effect.repeats, 2);
        // float tree: lane 0 = 1, lanes 1..64 = t = 2^-24 (f32 spacing at 1
        // is 2^-23). Level 1: 1 + t is a tie -> 1; t + t = 2t. Level 2:
        // 1 + 2t = 1 + 2^-23. Level 3: + 4t -> 1 + 3 * 2^-23. Level 4:
        // 1 + 7 * 2^-23. Level 5: 1 + 15 * 2^-23 (and 32t). Level 6:
        // 1 + 31 * 2^-23. (Exact: 1 + 31.5 * 2^-23 -> 1 + 32 * 2^-23;
        // sequential: 1.)
        let tiny = 2f32.powi(-24);
        let mut vals = vec![f(tiny); 64];
        vals[0] = f(1.0);
        let mut ub = new_ub();
        put(&mut ub, 4096, F, &vals);
        let mut op = red_op(90, F);
        op.count = 64;
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F, 1), vec![f(1.0 + 31.0 * 2f32.powi(-23))]);
    }

    #[test]
    fn reduce_max_count_form_returns_the_first_index() {
        // 200 floats (3 repeats + 8): max 9.5 at 70 and 195 -> index 70.
        let mut src: Vec<u64> = (0..200).map(|i| f((i % 7) as f32)).collect();
        src[70] = f(9.5);
        src[195] = f(9.5);
        let mut ub = new_ub();
        put(&mut ub, 4096, F, &src);
        let mut op = red_op(91, F);
        op.count = 200;
        op.p[0] = 1;
        op.src1.elems = 24; // documented minimum with index: 8 + 8 + 8
        let effect = run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F, 3), vec![f(9.5), 70, poison(F)]);
        // First-round intermediates: (value, in-repeat index) per repeat.
        // Repeat 0 (0..64): max 6 first at 6; repeat 1: 9.5 at lane 6;
        // repeat 2 (128..192): max 6 first at 132 -> lane 4. Only 24
        // elements may be written; repeat 3 fits too.
        assert_eq!(
            get(&ub, 1024, F, 8),
            vec![f(6.0), 6, f(9.5), 6, f(6.0), 4, f(9.5), 3]
        );
        assert!(effect.writes.contains(&ub_region(0, 8)));
        let mut small = op;
        small.src1.elems = 23;
        let out = run(&mut ub, &small);
        assert!(
            matches!(
                out,
                Err(Fault::InvalidArg {
                    api: "ReduceMax",
                    ..
                })
            ),
            "{out:?}"
        );
        // Without the index only the value is written (dst needs 1 element)
        // and the buffer needs RoundUp(3 * 2, 8) = 8 elements.
        let mut ub = new_ub();
        put(&mut ub, 4096, F, &src);
        let mut op = red_op(91, F);
        op.count = 200;
        op.src1.elems = 8;
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F, 2), vec![f(9.5), poison(F)]);
    }

    #[test]
    fn reduce_min_half_index_is_u16_bits() {
        // 130 halves, min -3 at 129 (repeat 1, lane 1), also at no other place.
        let mut src: Vec<u64> = (0..130).map(|i| h(f64::from(i % 5))).collect();
        src[129] = h(-3.0);
        let mut ub = new_ub();
        put(&mut ub, 4096, H, &src);
        let mut op = red_op(92, H);
        op.count = 130;
        op.p[0] = 1;
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, H, 2), vec![h(-3.0), 129]);
    }

    #[test]
    fn reduce_max_mask_form_index_counts_repeats_and_skips_inactive_lanes() {
        // half, mask 64 of 128 lanes, 2 repeats, srcRepStride 16 blocks.
        // Repeat 1 lane 5 holds 7; lane 100 (inactive) holds 1000.
        let mut ub = new_ub();
        put(&mut ub, 4096, H, &vec![h(1.0); 512]);
        put(&mut ub, 4096 + 512 + 10, H, &[h(7.0)]);
        put(&mut ub, 4096 + 200, H, &[h(1000.0)]);
        put(&mut ub, 4096 + 512 + 200, H, &[h(1000.0)]);
        let mut op = mask_cont(red_op(91, H), 64, 2);
        op.src0_rep = 16;
        op.p[0] = 1;
        let effect = run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, H, 2), vec![h(7.0), 133]);
        assert_eq!(effect.reads, vec![ub_region(4096, 4096 + 512 + 128)]);
        // Min: every active value is 1 -> the first, index 0.
        let mut op = mask_cont(red_op(92, H), 64, 2);
        op.src0_rep = 16;
        op.p[0] = 1;
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, H, 2), vec![h(1.0), 0]);
    }

    #[test]
    fn reduce_max_nan_propagates_and_ties_keep_the_first() {
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &[f(1.0), f(f32::NAN), f(5.0), f(f32::NAN), f(-0.0), f(0.0)],
        );
        let mut op = red_op(91, F);
        op.count = 6;
        op.p[0] = 1;
        run(&mut ub, &op).unwrap();
        let out = get(&ub, 0, F, 2);
        assert!(f32::from_bits(out[0] as u32).is_nan());
        assert_eq!(out[1], 1);
        // -0 and +0 are equal: the first (-0, index 0) wins.
        put(&mut ub, 4096, F, &[f(-0.0), f(0.0)]);
        op.count = 2;
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F, 2), vec![f(-0.0), 0]);
    }

    #[test]
    fn reduce_buffer_sizes_match_the_guide_examples() {
        // ReduceMax<half>(dst, src, tmp, 128, 65, 8, true) needs 176
        // elements; ReduceMax<float>(..., 64, 130, 8, true) needs 288.
        for (dtype, mask, repeat, need) in [(H, 128u64, 65u32, 176u32), (F, 64, 130, 288)] {
            let mut ub = vec![POISON; 65536];
            let mut op = mask_cont(red_op(91, dtype), mask, repeat);
            op.p[0] = 1;
            op.src0 = view(8192, op.dtype);
            put(
                &mut ub,
                8192,
                dtype,
                &vec![if dtype == H { h(1.0) } else { f(1.0) }; 8320],
            );
            op.src1.elems = need - 1;
            let out = run(&mut ub, &op);
            assert!(matches!(out, Err(Fault::InvalidArg { .. })), "{out:?}");
            op.src1.elems = need;
            let effect = run(&mut ub, &op).unwrap();
            // All values equal: index 0; more than 255 repeats for float.
            assert_eq!(get(&ub, 0, dtype, 2)[1], 0);
            assert_eq!(effect.elems, 8320);
        }
    }

    #[test]
    fn whole_reduce_max_orders() {
        // The guide's example: repeat 0 all 1 except lane 52 = 11, repeat 1
        // all 2 except lane 100 = 12; index 52 read as a half is 3.09944e-6.
        let mut src = vec![h(1.0); 128];
        src.extend(vec![h(2.0); 128]);
        src[52] = h(11.0);
        src[228] = h(12.0);
        let cases = [
            (0, vec![h(11.0), 52, h(12.0), 100]),
            (1, vec![52, h(11.0), 100, h(12.0)]),
            (2, vec![h(11.0), h(12.0), poison(H), poison(H)]),
            (3, vec![52, 0, 100, 0]),
        ];
        for (order, want) in cases {
            let mut ub = new_ub();
            put(&mut ub, 4096, H, &src);
            let mut op = mask_cont(red_op(94, H), 128, 2);
            op.p = [1, 1, 8, order, 0, 0, 0, 0];
            run(&mut ub, &op).unwrap();
            assert_eq!(get(&ub, 0, H, 4), want, "order {order}");
        }
        assert_eq!(half::f16::from_bits(52).to_f64(), 52.0 * 2f64.powi(-24));
        // dstRepStride 2 with [value, index]: units of 4 bytes -> repeat 1 at 8 B.
        let mut ub = new_ub();
        put(&mut ub, 4096, H, &src);
        let mut op = mask_cont(red_op(94, H), 128, 2);
        op.p = [2, 1, 8, 0, 0, 0, 0, 0];
        run(&mut ub, &op).unwrap();
        assert_eq!(
            get(&ub, 0, H, 6),
            vec![h(11.0), 52, poison(H), poison(H), h(12.0), 100]
        );
    }

    #[test]
    fn whole_reduce_min_float_bit_mask_and_block_stride() {
        // float, bit mask lanes {1, 9, 63}, srcBlkStride 2: lane l at
        // 4096 + (l / 8) * 64 + (l % 8) * 4.
        let mut ub = new_ub();
        let at = |l: usize| 4096 + (l / 8) * 64 + (l % 8) * 4;
        put(&mut ub, at(1), F, &[f(5.0)]);
        put(&mut ub, at(9), F, &[f(-2.0)]);
        put(&mut ub, at(63), F, &[f(-2.0)]);
        put(&mut ub, at(0), F, &[f(-100.0)]); // inactive
        let mut op = red_op(95, F);
        op.form = form::MASK_BITS;
        op.mask = [(1 << 1) | (1 << 9) | (1 << 63), u64::MAX];
        op.repeat = 1;
        op.p = [1, 2, 8, 0, 0, 0, 0, 0];
        let effect = run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F, 3), vec![f(-2.0), 9, poison(F)]);
        assert_eq!(effect.elems, 3);
        // Count form and repeat > 255 are rejected.
        let mut count = red_op(95, F);
        count.count = 64;
        assert!(matches!(
            run(&mut ub, &count),
            Err(Fault::Unsupported { .. })
        ));
        op.repeat = 256;
        assert!(matches!(run(&mut ub, &op), Err(Fault::InvalidArg { .. })));
        op.repeat = 1;
        op.p[3] = 4;
        assert!(matches!(run(&mut ub, &op), Err(Fault::InvalidArg { .. })));
    }

    #[test]
    fn block_reduce_per_block_with_partial_mask() {
        // half, continuous mask 40: blocks 0, 1 full, block 2 lanes 32..40,
        // blocks 3..8 inactive (dst kept). Block b holds b + 1.
        let mut src = Vec::new();
        for b in 0..8 {
            src.extend(vec![h(f64::from(b + 1)); 16]);
        }
        let mut ub = new_ub();
        put(&mut ub, 4096, H, &src);
        put(&mut ub, 4096 + 256, H, &src);
        let mut op = mask_cont(red_op(96, H), 40, 2);
        op.p = [2, 1, 8, 0, 0, 0, 0, 0]; // dstRepStride 2 x 16 B
        let effect = run(&mut ub, &op).unwrap();
        let p = poison(H);
        let r0 = vec![h(16.0), h(32.0), h(24.0), p, p, p, p, p];
        assert_eq!(get(&ub, 0, H, 8), r0);
        assert_eq!(get(&ub, 16, H, 8), vec![p; 8]);
        assert_eq!(get(&ub, 32, H, 8), r0);
        assert_eq!(effect.writes, vec![ub_region(0, 38)]);
        // Max per float block (8 lanes) with srcBlkStride 3.
        let mut ub = new_ub();
        for b in 0..8 {
            let vals: Vec<u64> = (0..8).map(|l| f((l * (b + 1)) as f32 - 10.0)).collect();
            put(&mut ub, 4096 + b * 96, F, &vals);
        }
        let mut op = mask_cont(red_op(97, F), 64, 1);
        op.p = [1, 3, 8, 0, 0, 0, 0, 0];
        run(&mut ub, &op).unwrap();
        let want: Vec<u64> = (0..8).map(|b| f((7 * (b + 1)) as f32 - 10.0)).collect();
        assert_eq!(get(&ub, 0, F, 8), want);
        let mut op = mask_cont(red_op(98, F), 64, 1);
        op.p = [1, 3, 8, 0, 0, 0, 0, 0];
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 0, F, 8), vec![f(-10.0); 8]);
        // dst must be 32 B aligned for float.
        op.dst = view(16, op.dtype);
        assert!(matches!(
            run(&mut ub, &op),
            Err(Fault::Unaligned { align: 32, .. })
        ));
    }

    #[test]
    fn pair_reduce_sum_adjacent_pairs() {
        // The guide's example (half): [1 1 1 -1 2 2 -1 2 3 3 3 -1 4 4 -2 4]
        // -> [2 0 4 1 6 2 8 2].
        let vals = [
            1.0, 1.0, 1.0, -1.0, 2.0, 2.0, -1.0, 2.0, 3.0, 3.0, 3.0, -1.0, 4.0, 4.0, -2.0, 4.0,
        ];
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            H,
            &vals.iter().map(|&x| h(x)).collect::<Vec<_>>(),
        );
        let mut op = mask_cont(red_op(99, H), 16, 1);
        op.p = [1, 1, 8, 0, 0, 0, 0, 0];
        run(&mut ub, &op).unwrap();
        let want: Vec<u64> = [2.0, 0.0, 4.0, 1.0, 6.0, 2.0, 8.0, 2.0]
            .iter()
            .map(|&x| h(x))
            .collect();
        assert_eq!(get(&ub, 0, H, 8), want);
        assert_eq!(get(&ub, 16, H, 1), vec![poison(H)]);
        // float, 2 repeats, mask 63: the last pair has one active lane (62)
        // and keeps it; dstRepStride 1 = 128 B. With mask 62 that pair is
        // inactive and dst is kept.
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &(0..128).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        let mut op = mask_cont(red_op(99, F), 63, 2);
        op.p = [1, 1, 8, 0, 0, 0, 0, 0];
        run(&mut ub, &op).unwrap();
        let r0 = get(&ub, 0, F, 32);
        assert_eq!(r0[0], f(1.0));
        assert_eq!(r0[30], f(121.0));
        assert_eq!(r0[31], f(62.0));
        let r1 = get(&ub, 128, F, 32);
        assert_eq!(r1[0], f(129.0));
        assert_eq!(r1[31], f(126.0));
        let mut ub = new_ub();
        put(
            &mut ub,
            4096,
            F,
            &(0..64).map(|i| f(i as f32)).collect::<Vec<_>>(),
        );
        let op = AscVecOp {
            mask: [62, 0],
            repeat: 1,
            ..op
        };
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 120, F, 2), vec![f(121.0), poison(F)]);
    }

    #[test]
    fn reductions_reject_bad_operands() {
        let mut ub = new_ub();
        // ReduceMax half dst must be 4-byte aligned.
        let mut op = red_op(91, H);
        op.count = 128;
        op.dst = view(2, op.dtype);
        assert_eq!(
            run(&mut ub, &op),
            Err(Fault::Unaligned {
                operand: "dst",
                mem: "UB",
                addr: 2,
                align: 4
            })
        );
        // ReduceSum half dst may be 2-byte aligned; the src may not.
        let mut op = red_op(90, H);
        op.count = 16;
        op.dst = view(2, op.dtype);
        put(&mut ub, 4096, H, &[h(1.0); 16]);
        run(&mut ub, &op).unwrap();
        assert_eq!(get(&ub, 2, H, 1), vec![h(16.0)]);
        op.src0 = view(4100, op.dtype);
        assert!(matches!(
            run(&mut ub, &op),
            Err(Fault::Unaligned { operand: "src", .. })
        ));
        // int32 is not a reduction type on A2.
        let mut op = red_op(90, Dtype::Int32);
        op.count = 8;
        assert!(matches!(run(&mut ub, &op), Err(Fault::Unsupported { .. })));
        // Source past the end of the UB.
        let mut op = red_op(90, F);
        op.count = 64;
        op.src0 = view(32768 - 128, op.dtype);
        assert!(matches!(
            run(&mut ub, &op),
            Err(Fault::LocalOutOfRange { .. })
        ));
        // WholeReduce dst past the end.
        let mut op = mask_cont(red_op(93, F), 64, 2);
        op.p = [8192, 1, 8, 0, 0, 0, 0, 0]; // repeat 1 at 32768
        assert!(matches!(
            run(&mut ub, &op),
            Err(Fault::LocalOutOfRange { operand: "dst", .. })
        ));
        // A half index above 65535 (max at element 520 * 128 = 66560 of 600
        // repeats) cannot be stored.
        let mut big = vec![POISON; 192 * 1024];
        let mut op = mask_cont(red_op(91, H), 128, 600);
        op.src0 = view(8192, op.dtype);
        op.p[0] = 1;
        op.src1.elems = 1248;
        put(&mut big, 8192, H, &vec![h(1.0); 600 * 128]);
        put(&mut big, 8192 + 66560 * 2, H, &[h(2.0)]);
        let out = run(&mut big, &op);
        assert!(
            matches!(
                out,
                Err(Fault::InvalidArg {
                    api: "ReduceMax",
                    ..
                })
            ),
            "{out:?}"
        );
        // ... but the value alone is fine, and an index below 65536 too.
        op.p[0] = 0;
        run(&mut big, &op).unwrap();
        assert_eq!(get(&big, 0, H, 1), vec![h(2.0)]);
        put(&mut big, 8192 + 65535 * 2, H, &[h(2.0)]);
        op.p[0] = 1;
        run(&mut big, &op).unwrap();
        assert_eq!(get(&big, 0, H, 2), vec![h(2.0), 65535]);
        // Too many repeats.
        let op = mask_cont(red_op(90, H), 128, 5000);
        assert!(matches!(run(&mut ub, &op), Err(Fault::Unsupported { .. })));
    }
}
