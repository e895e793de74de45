//! Costs of single instructions, from the hardware profile: a vector call's
//! pipe occupancy and completion latency, a DMA's phases (issue, transfer
//! with its rate cap, latency) and the scalar unit's cycles.
//!
//! Everything here is a pure function of one instruction and the profile;
//! interactions (queues, flags, shared HBM) are the engine's business.

use super::hw::{DmaPath, HwProfile};
use crate::trace::{DmaDir, GmLine, Instr, InstrKind, Mem, Pipe, ScalarCode, ScalarOp, VecOp};
use ascendopt_op::Dtype;

/// Bytes of one vector repeat (8 blocks of 32 B).
pub const REPEAT_BYTES: u64 = 256;

/// Timing of a vector instruction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VecCost {
    /// Cycles the vector pipe is busy.
    pub occupancy: u64,
    /// Cycles from the end of occupancy until the result is usable.
    pub latency: u64,
}

/// Cost of a vector API call on `repeats` repeats (or `elems` elements when
/// the trace gives no repeats).
pub fn vector_cost(
    hw: &HwProfile,
    op: VecOp,
    dtype: Dtype,
    src_dtype: Dtype,
    repeats: u32,
    elems: u64,
) -> VecCost {
    let elem_bytes = dtype.size().max(src_dtype.size()) as u32;
    let repeats = if repeats > 0 {
        u64::from(repeats)
    } else {
        (elems * u64::from(elem_bytes))
            .div_ceil(REPEAT_BYTES)
            .max(1)
    };
    let (head, per_repeat) = match hw.vector_rule(op, elem_bytes) {
        Some(rule) => (rule.head_cycles, rule.per_repeat_cycles),
        // The loader guarantees a catch-all rule; keep a safe answer anyway.
        None => (23.0, 1.3184),
    };
    VecCost {
        occupancy: ((per_repeat * repeats as f64).ceil() as u64).max(1),
        latency: head.round() as u64,
    }
}

/// Cost of an Mmad on the cube: busy one cycle per `16 x 16 x k_step`
/// step, complete `mmad_head_cycles` later (hardware-facts.md §F, [PYPTO]
/// Mmad = ceil(m/16)·ceil(n/16)·ceil(k/kstep) + 20).
pub fn mmad_cost(hw: &HwProfile, shape: &crate::trace::MmadShape) -> VecCost {
    let k_step = hw.cube.k_step(shape.dtype.size()).max(1.0);
    let steps = u64::from(shape.m.div_ceil(16))
        * u64::from(shape.n.div_ceil(16))
        * ((f64::from(shape.k) / k_step).ceil() as u64);
    VecCost {
        occupancy: steps.max(1),
        latency: hw.cube.mmad_head_cycles.round() as u64,
    }
}

/// Timing of a DMA.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DmaCost {
    /// MTE cycles before data moves (descriptor issue).
    pub issue: u64,
    /// Bytes the transfer phase moves (bursts rounded up to the granule).
    pub charged_bytes: f64,
    /// Fastest the transfer may go, bytes per cycle: the path's rate with
    /// the alignment factor, at most one burst per `dma.burst_cycles`. For
    /// a GM read, the rate of the bytes L2 does not hold.
    pub rate_cap: f64,
    /// The same for the GM bytes a read finds in L2 (the path's
    /// `l2_hit_bytes_per_cycle`; equal to `rate_cap` on paths without one).
    pub l2_hit_rate_cap: f64,
    /// True when the transfer uses the shared HBM.
    pub uses_hbm: bool,
    /// Cycles from the end of the transfer to completion.
    pub latency: u64,
    /// GM bytes read (payload).
    pub gm_read: u64,
    /// GM bytes written (payload).
    pub gm_write: u64,
    /// True when the GM side is not aligned for the full rate.
    pub misaligned: bool,
}

/// The data path of a DMA.
pub fn dma_path<'h>(hw: &'h HwProfile, dir: DmaDir, instr: &Instr) -> &'h DmaPath {
    match dir {
        DmaDir::GmToUb => &hw.dma.gm_to_ub,
        DmaDir::UbToGm => &hw.dma.ub_to_gm,
        DmaDir::UbToUb => &hw.dma.ub_to_ub,
        DmaDir::GmToL1 => &hw.dma.gm_to_l1,
        DmaDir::UbToL1 => &hw.dma.ub_to_l1,
        DmaDir::L1ToL0 | DmaDir::L1Img2Col => {
            if instr.writes.iter().any(|r| r.mem == Mem::L0b) {
                &hw.dma.l1_to_l0b
            } else {
                &hw.dma.l1_to_l0a
            }
        }
        DmaDir::L0cOut | DmaDir::L0cOutUnit => &hw.dma.l0c_out,
    }
}

/// True when `value` is a multiple of `of` (false for `of == 0`).
/// (`u64::is_multiple_of` needs Rust 1.87; the workspace declares 1.80.)
fn multiple_of(value: u64, of: u64) -> bool {
    value.checked_rem(of) == Some(0)
}

/// Cost of a DMA instruction. `bytes`, `bursts`, `burst_bytes`, `gm_offset`
/// and `gm_strided` are the trace's fields.
#[allow(clippy::too_many_arguments)]
pub fn dma_cost(
    hw: &HwProfile,
    instr: &Instr,
    dir: DmaDir,
    bytes: u64,
    bursts: u32,
    burst_bytes: u64,
    gm_offset: u64,
    gm_strided: bool,
) -> DmaCost {
    let path = dma_path(hw, dir, instr);
    let granule = hw.dma.granule_bytes;
    let charged = if bursts > 0 && burst_bytes > 0 {
        u64::from(bursts) * burst_bytes.div_ceil(granule) * granule
    } else {
        bytes.div_ceil(granule) * granule
    };
    let (gm_read, gm_write) = match dir {
        DmaDir::GmToUb | DmaDir::GmToL1 => (bytes, 0),
        DmaDir::UbToGm => (0, bytes),
        DmaDir::L0cOut | DmaDir::L0cOutUnit if instr.writes.iter().any(|r| r.mem == Mem::Gm) => {
            (0, bytes)
        }
        _ => (0, 0),
    };
    let uses_hbm = gm_read > 0 || gm_write > 0;
    let align = hw.dma.gm_align_bytes;
    // Later bursts of a strided copy start at unknown offsets; a burst
    // length that is a multiple or a divisor of the alignment (128/256/512 B
    // rows, [G §3.8.5.2]) keeps them aligned when the first one is.
    let odd_bursts = gm_strided
        && bursts > 1
        && !multiple_of(burst_bytes, align)
        && !multiple_of(align, burst_bytes);
    let misaligned = uses_hbm && (!multiple_of(gm_offset, align) || odd_bursts);
    let factor = if misaligned {
        hw.dma.unaligned_rate_factor
    } else {
        1.0
    };
    // The MTE starts at most one burst every `burst_cycles`; its work on a
    // burst overlaps the previous burst's data, so short bursts bound the
    // rate and long ones do not.
    let burst_cap = if bursts > 1 && hw.dma.burst_cycles > 0.0 {
        let per_burst = burst_bytes.div_ceil(granule) * granule;
        per_burst as f64 / hw.dma.burst_cycles
    } else {
        f64::INFINITY
    };
    DmaCost {
        issue: path.issue_cycles.round() as u64,
        charged_bytes: charged as f64,
        rate_cap: (path.bytes_per_cycle * factor).min(burst_cap),
        l2_hit_rate_cap: (path.l2_hit_bytes_per_cycle * factor).min(burst_cap),
        uses_hbm,
        latency: if dir == DmaDir::L1Img2Col {
            hw.cube.load3d_latency_cycles.round() as u64
        } else {
            path.latency_cycles.round() as u64
        },
        gm_read,
        gm_write,
        misaligned,
    }
}

impl DmaCost {
    /// Rate cap of a GM read of which `hit_share` (0..=1) of the bytes are
    /// in L2: each byte takes the time of its own path, so the caps combine
    /// harmonically.
    pub fn read_cap(&self, hit_share: f64) -> f64 {
        let hit = hit_share.clamp(0.0, 1.0);
        let per_byte = hit / self.l2_hit_rate_cap.max(1e-9) + (1.0 - hit) / self.rate_cap.max(1e-9);
        1.0 / per_byte
    }
}

/// Scalar-unit cycles to issue an instruction that runs on another pipe (or
/// a flag/barrier), not counting any waiting.
pub fn issue_cycles(hw: &HwProfile, kind: &InstrKind) -> u64 {
    let s = &hw.scalar;
    let cycles = match kind {
        InstrKind::Vector { .. } => s.issue_vector_cycles,
        InstrKind::Dma { .. } => s.issue_dma_cycles,
        InstrKind::SetFlag { .. }
        | InstrKind::WaitFlag { .. }
        | InstrKind::CrossSet { .. }
        | InstrKind::CrossWait { .. } => s.issue_sync_cycles,
        InstrKind::Barrier { .. } => s.issue_barrier_cycles,
        InstrKind::SyncAll { .. } => s.issue_sync_cycles,
        InstrKind::Scalar { .. } => s.issue_access_cycles,
        // An Mmad is issued like a vector instruction (parameter registers
        // and one instruction).
        InstrKind::Mmad(_) => s.issue_vector_cycles,
        // The kernel's own code is its own cost (`scalar_code_cost`).
        InstrKind::ScalarCode(_) => 0.0,
    };
    cycles.round() as u64
}

/// A small data cache for scalar GM accesses: line-granular, FIFO eviction.
#[derive(Debug, Clone, Default)]
pub struct DCache {
    lines: std::collections::HashSet<(u32, u64)>,
    order: std::collections::VecDeque<(u32, u64)>,
}

impl DCache {
    /// Touches a line; true on a hit.
    fn touch(&mut self, line: (u32, u64), capacity: usize) -> bool {
        if self.lines.contains(&line) {
            return true;
        }
        if self.order.len() >= capacity.max(1) {
            if let Some(old) = self.order.pop_front() {
                self.lines.remove(&old);
            }
        }
        self.lines.insert(line);
        self.order.push_back(line);
        false
    }

    /// Drops every line (DataCacheCleanAndInvalid).
    fn clear(&mut self) {
        self.lines.clear();
        self.order.clear();
    }
}

/// Cycles of a scalar-pipe operation (without the issue overhead).
pub fn scalar_cost(
    hw: &HwProfile,
    op: ScalarOp,
    bytes: u64,
    instr: &Instr,
    cache: &mut DCache,
) -> u64 {
    let s = &hw.scalar;
    let line_bytes = s.dcache_line_bytes;
    let capacity = (s.dcache_bytes / line_bytes) as usize;
    let mut gm_cycles = |load: bool, regions: &[crate::trace::Region]| -> f64 {
        let mut total = 0.0;
        let mut any = false;
        for region in regions.iter().filter(|r| r.mem == Mem::Gm) {
            any = true;
            let first = region.start / line_bytes;
            let last = (region.start + region.len.max(1) - 1) / line_bytes;
            for line in first..=last {
                total += if cache.touch((region.space, line), capacity) {
                    if load {
                        s.load_cycles
                    } else {
                        s.store_cycles
                    }
                } else {
                    s.gm_miss_cycles
                };
            }
        }
        if !any {
            // No region recorded: assume cold lines.
            total = bytes.div_ceil(line_bytes).max(1) as f64 * s.gm_miss_cycles;
        }
        total
    };
    let cycles = match op {
        ScalarOp::LocalGet => s.load_cycles,
        ScalarOp::LocalSet => s.store_cycles,
        ScalarOp::GmGet | ScalarOp::TilingRead => gm_cycles(true, &instr.reads),
        ScalarOp::GmSet => gm_cycles(false, &instr.writes),
        ScalarOp::DcacheFlush => {
            cache.clear();
            s.dcache_flush_cycles
        }
    };
    cycles.round() as u64
}

/// What the kernel's own code cost the scalar unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarCodeCost {
    /// Cycles of the scalar unit.
    pub cycles: u64,
    /// GM line touches that missed the data cache (each a GM round trip).
    pub misses: u64,
}

/// Cycles of a stretch of the kernel's own code: every instruction at the
/// scalar unit's cost of its class (ALU, load, store), and every GM line
/// it touched that misses the data cache a GM round trip instead of the
/// load already counted. `lines` are the code's recorded line touches in
/// order; touches past the recording limit count as misses.
pub fn scalar_code_cost(
    hw: &HwProfile,
    code: &ScalarCode,
    lines: &[GmLine],
    cache: &mut DCache,
) -> ScalarCodeCost {
    let s = &hw.scalar;
    let capacity = (s.dcache_bytes / s.dcache_line_bytes) as usize;
    let mut misses = code.lines_dropped;
    for line in lines {
        if !cache.touch((line.space, line.offset / s.dcache_line_bytes), capacity) {
            misses += 1;
        }
    }
    let penalty = (s.gm_miss_cycles - s.load_cycles).max(0.0);
    let cycles = code.alu as f64 * s.alu_cycles
        + code.loads as f64 * s.load_cycles
        + code.stores as f64 * s.store_cycles
        + misses as f64 * penalty;
    ScalarCodeCost {
        cycles: cycles.round() as u64,
        misses,
    }
}

/// The pipe that executes an instruction (flags: the pipe they act on).
pub fn exec_pipe(instr: &Instr) -> Pipe {
    match &instr.kind {
        InstrKind::Vector { .. } => {
            if instr.pipe == Pipe::S {
                Pipe::V
            } else {
                instr.pipe
            }
        }
        InstrKind::Dma { dir, .. } => {
            if instr.pipe == Pipe::S || instr.pipe == Pipe::V {
                match dir {
                    DmaDir::GmToUb | DmaDir::GmToL1 => Pipe::Mte2,
                    // UB -> UB (DataCopy between two Local Memory tensors,
                    // copy_ubuf_to_ubuf) runs on the vector pipe: CANN's
                    // asc_copy_ub2ub documents 流水类型 PIPE_V for Atlas A2
                    // (asc-devkit docs, c_api vector_datamove), and its
                    // kernel library marks the instruction "only support
                    // VecCore PIPE_V"; so a queue's EnQue/DeQue (V <-> MTE)
                    // orders it like a vector instruction.
                    DmaDir::UbToUb => Pipe::V,
                    DmaDir::UbToGm | DmaDir::UbToL1 => Pipe::Mte3,
                    DmaDir::L1ToL0 | DmaDir::L1Img2Col => Pipe::Mte1,
                    DmaDir::L0cOut | DmaDir::L0cOutUnit => Pipe::Fix,
                }
            } else {
                instr.pipe
            }
        }
        InstrKind::Scalar { .. } | InstrKind::ScalarCode(_) => Pipe::S,
        InstrKind::SetFlag { src, .. } => *src,
        InstrKind::WaitFlag { dst, .. } => *dst,
        InstrKind::Barrier { pipe } => pipe.unwrap_or(Pipe::S),
        InstrKind::SyncAll { .. } => Pipe::S,
        InstrKind::Mmad(_) => Pipe::M,
        InstrKind::CrossSet { pipe, .. } | InstrKind::CrossWait { pipe, .. } => *pipe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Region;

    fn hw() -> HwProfile {
        HwProfile::builtin("ascend910b2").unwrap()
    }

    fn dma_instr(dir: DmaDir) -> Instr {
        let gm = Region {
            mem: Mem::Gm,
            space: 0,
            start: 0,
            len: 1024,
        };
        let ub = Region {
            mem: Mem::Ub,
            space: 0,
            start: 0,
            len: 1024,
        };
        let (reads, writes) = match dir {
            DmaDir::UbToGm => (vec![ub], vec![gm]),
            _ => (vec![gm], vec![ub]),
        };
        Instr {
            pipe: Pipe::Mte2,
            kind: InstrKind::Dma {
                dir,
                bytes: 1024,
                bursts: 1,
                burst_bytes: 1024,
                gm_offset: 0,
                gm_strided: false,
                atomic: false,
            },
            reads,
            writes,
            loc: 0,
        }
    }

    #[test]
    fn vector_cost_is_head_plus_repeats() {
        // Add f16 on 128 repeats: ceil(1.3184 * 128) = 169 busy, 22 head.
        let c = vector_cost(&hw(), VecOp::Add, Dtype::Float16, Dtype::Float16, 128, 0);
        assert_eq!(
            c,
            VecCost {
                occupancy: 169,
                latency: 22
            }
        );
        // Without repeats, 4096 f32 elements are 64 repeats.
        let c = vector_cost(&hw(), VecOp::Adds, Dtype::Float32, Dtype::Float32, 0, 4096);
        assert_eq!(c.occupancy, (0.9088f64 * 64.0).ceil() as u64);
        // Cast f16 -> f32 counts repeats of the wider f32 operand (4 bytes).
        let c = vector_cost(&hw(), VecOp::Cast, Dtype::Float32, Dtype::Float16, 2, 0);
        assert_eq!(c.occupancy, 2);
        assert_eq!(c.latency, 20);
    }

    #[test]
    fn mmad_cost_is_fractal_steps_plus_head() {
        let shape = |m, n, k, dtype| crate::trace::MmadShape {
            m,
            n,
            k,
            dtype,
            unit_flag: 0,
            init: true,
        };
        // 128 x 128 x 256 half: 8 x 8 x 16 steps of 16 x 16 x 16, + 20.
        let c = mmad_cost(&hw(), &shape(128, 128, 256, Dtype::Float16));
        assert_eq!((c.occupancy, c.latency), (1024, 20));
        // Tails round up to whole fractals: 20 x 24 x 40 is 2 x 2 x 3.
        let c = mmad_cost(&hw(), &shape(20, 24, 40, Dtype::Float16));
        assert_eq!(c.occupancy, 12);
        // int8 takes K 32 per step (2x the f16 rate), float 4 (1/4).
        let c = mmad_cost(&hw(), &shape(16, 16, 64, Dtype::Int8));
        assert_eq!(c.occupancy, 2);
        let c = mmad_cost(&hw(), &shape(16, 16, 64, Dtype::Float32));
        assert_eq!(c.occupancy, 16);
        // bf16 runs at the f16 rate; an empty Mmad still takes a step.
        let c = mmad_cost(&hw(), &shape(16, 16, 64, Dtype::Bfloat16));
        assert_eq!(c.occupancy, 4);
        assert_eq!(
            mmad_cost(&hw(), &shape(0, 0, 0, Dtype::Float16)).occupancy,
            1
        );
    }

    /// A Load3D (img2col) runs on MTE1 at the L1 -> L0A (512 B/cycle) or
    /// L1 -> L0B (256 B/cycle) path rate of the profile, with the [PYPTO]
    /// Load3D latency of 43 cycles where a Load2D has 25.
    #[test]
    fn load3d_moves_at_the_l0_path_rate_with_its_own_latency() {
        let hw = hw();
        let l0 = |mem: Mem, dir: DmaDir| Instr {
            pipe: Pipe::Mte1,
            kind: InstrKind::Dma {
                dir,
                bytes: 4608,
                bursts: 1,
                burst_bytes: 4608,
                gm_offset: 0,
                gm_strided: false,
                atomic: false,
            },
            reads: vec![Region {
                mem: Mem::L1,
                space: 0,
                start: 0,
                len: 1600,
            }],
            writes: vec![Region {
                mem,
                space: 0,
                start: 0,
                len: 4608,
            }],
            loc: 0,
        };
        let cost = |mem, dir| {
            let i = l0(mem, dir);
            dma_cost(&hw, &i, dir, 4608, 1, 4608, 0, false)
        };
        let a = cost(Mem::L0a, DmaDir::L1Img2Col);
        assert_eq!((a.rate_cap, a.latency, a.issue), (512.0, 43, 4));
        assert!(!a.uses_hbm && a.gm_read == 0);
        let b = cost(Mem::L0b, DmaDir::L1Img2Col);
        assert_eq!((b.rate_cap, b.latency), (256.0, 43));
        let load2d = cost(Mem::L0a, DmaDir::L1ToL0);
        assert_eq!((load2d.rate_cap, load2d.latency), (512.0, 25));
        assert_eq!(exec_pipe(&l0(Mem::L0a, DmaDir::L1Img2Col)), Pipe::Mte1);
    }

    #[test]
    fn dma_alignment_and_granule() {
        let hw = hw();
        let instr = dma_instr(DmaDir::GmToUb);
        let aligned = dma_cost(&hw, &instr, DmaDir::GmToUb, 1000, 1, 1000, 512, false);
        assert!(!aligned.misaligned && aligned.uses_hbm);
        assert_eq!(aligned.charged_bytes, 1024.0, "rounded to 32 B");
        assert_eq!(aligned.gm_read, 1000);
        let odd = dma_cost(&hw, &instr, DmaDir::GmToUb, 1024, 1, 1024, 32, false);
        assert!(odd.misaligned);
        assert!((odd.rate_cap - 0.7 * aligned.rate_cap).abs() < 1e-9);
        // 256 B rows of a strided copy stay aligned; 96 B rows do not.
        let rows = dma_cost(&hw, &instr, DmaDir::GmToUb, 2048, 8, 256, 0, true);
        assert!(!rows.misaligned);
        assert_eq!(rows.issue, 27, "bursts cost no issue cycles of their own");
        assert_eq!(
            rows.rate_cap, 25.0,
            "256 B per 4 cycles is above the path rate"
        );
        let odd_rows = dma_cost(&hw, &instr, DmaDir::GmToUb, 768, 8, 96, 0, true);
        assert!(odd_rows.misaligned);
        let store = dma_cost(
            &hw,
            &dma_instr(DmaDir::UbToGm),
            DmaDir::UbToGm,
            64,
            1,
            64,
            0,
            false,
        );
        assert_eq!((store.gm_read, store.gm_write), (0, 64));
        let local = dma_cost(&hw, &instr, DmaDir::UbToUb, 64, 1, 64, 0, false);
        assert!(!local.uses_hbm);
    }

    #[test]
    fn short_bursts_bound_the_rate_at_one_burst_per_burst_cycles() {
        let hw = hw();
        let instr = dma_instr(DmaDir::GmToUb);
        // 64 rows of 32 B: one burst per 4 cycles = 8 B/cycle, below the
        // path's 25; a single burst is not bounded.
        let short = dma_cost(&hw, &instr, DmaDir::GmToUb, 2048, 64, 32, 0, true);
        assert_eq!((short.issue, short.rate_cap), (27, 8.0));
        // A 20 B burst still occupies a 32 B granule slot.
        let padded = dma_cost(&hw, &instr, DmaDir::GmToUb, 1280, 64, 20, 0, true);
        assert_eq!(padded.rate_cap, 8.0);
        let one = dma_cost(&hw, &instr, DmaDir::GmToUb, 32, 1, 32, 0, false);
        assert_eq!(one.rate_cap, 25.0);
    }

    #[test]
    fn gm_to_l1_reads_combine_the_l2_hit_and_gm_rates_per_byte() {
        let mut hw = hw();
        // The built-in profiles give no L2-hit rate: one rate for all.
        let instr = dma_instr(DmaDir::GmToL1);
        let c = dma_cost(&hw, &instr, DmaDir::GmToL1, 65536, 1, 65536, 0, false);
        assert_eq!((c.rate_cap, c.l2_hit_rate_cap), (80.5, 80.5));
        hw.dma.gm_to_l1.l2_hit_bytes_per_cycle = 110.0;
        let c = dma_cost(&hw, &instr, DmaDir::GmToL1, 65536, 1, 65536, 0, false);
        assert_eq!((c.rate_cap, c.l2_hit_rate_cap), (80.5, 110.0));
        assert!((c.read_cap(0.0) - 80.5).abs() < 1e-9);
        assert!((c.read_cap(1.0) - 110.0).abs() < 1e-9);
        // Half the bytes at each rate: 2 / (1/110 + 1/80.5).
        let half = 2.0 / (1.0 / 110.0 + 1.0 / 80.5);
        assert!((c.read_cap(0.5) - half).abs() < 1e-9);
        // The alignment factor and the burst bound apply to both.
        let odd = dma_cost(&hw, &instr, DmaDir::GmToL1, 65536, 1, 65536, 32, false);
        assert!((odd.l2_hit_rate_cap - 0.7 * 110.0).abs() < 1e-9);
        let rows = dma_cost(&hw, &instr, DmaDir::GmToL1, 65536, 2048, 32, 0, true);
        assert_eq!((rows.rate_cap, rows.l2_hit_rate_cap), (8.0, 8.0));
    }

    #[test]
    fn kernel_code_costs_its_instructions_and_a_round_trip_per_missed_line() {
        let hw = hw();
        let mut cache = DCache::default();
        let lines = [
            GmLine {
                space: 0,
                offset: 0,
            },
            GmLine {
                space: 1,
                offset: 0,
            },
            GmLine {
                space: 0,
                offset: 0,
            },
            GmLine {
                space: 0,
                offset: 64,
            },
        ];
        let code = ScalarCode {
            alu: 10,
            loads: 3,
            stores: 1,
            gm_accesses: 4,
            lines_start: 0,
            lines_len: 4,
            lines_dropped: 2,
        };
        let c = scalar_code_cost(&hw, &code, &lines, &mut cache);
        // Three distinct lines miss, the repeat hits; two dropped touches
        // count as misses: 5 misses of (684 - 6) beyond the loads.
        assert_eq!(c.misses, 5);
        assert_eq!(c.cycles, 10 * 2 + 3 * 6 + 4 + 5 * (684 - 6));
        // The same lines again: all cached now, only the dropped ones miss.
        let again = scalar_code_cost(&hw, &code, &lines, &mut cache);
        assert_eq!(again.misses, 2);
    }

    #[test]
    fn scalar_gm_reads_hit_the_cache_after_a_miss() {
        let hw = hw();
        let mut cache = DCache::default();
        let mut instr = dma_instr(DmaDir::GmToUb);
        instr.reads = vec![Region {
            mem: Mem::Gm,
            space: 3,
            start: 8,
            len: 4,
        }];
        let miss = scalar_cost(&hw, ScalarOp::GmGet, 4, &instr, &mut cache);
        let hit = scalar_cost(&hw, ScalarOp::GmGet, 4, &instr, &mut cache);
        assert_eq!((miss, hit), (684, 6));
        scalar_cost(&hw, ScalarOp::DcacheFlush, 0, &instr, &mut cache);
        assert_eq!(
            scalar_cost(&hw, ScalarOp::GmGet, 4, &instr, &mut cache),
            684
        );
    }
}
