//! Builders of hand-written traces (for the calibration tests and the
//! fidelity table, [`super::fidelity`]), lowered the way the runtime
//! lowers AscendC calls: DataCopy -> a DMA on MTE2/MTE3, a vector API -> one
//! PIPE_V instruction, TQue calls -> flags per buffer slot (EnQue = set
//! forward, DeQue = wait forward, FreeTensor = set backward, AllocTensor =
//! wait backward except on a slot's first use).
//!
//! Also the parametrised `add_custom`-like kernel used by the calibration
//! tests and the fidelity table.

// Some builders serve the tests only.
#![cfg_attr(not(test), allow(dead_code))]

use crate::trace::{
    BlockTrace, DmaDir, FlagKey, Instr, InstrKind, Mem, MmadShape, Pipe, Region, ScalarOp, SrcLoc,
    SyncOrigin, Trace, VecOp,
};
use ascendopt_op::Dtype;
use std::collections::VecDeque;

/// A GM region.
pub(crate) fn gm(space: u32, start: u64, len: u64) -> Region {
    Region {
        mem: Mem::Gm,
        space,
        start,
        len,
    }
}

/// A UB region.
pub(crate) fn ub(start: u64, len: u64) -> Region {
    Region {
        mem: Mem::Ub,
        space: 0,
        start,
        len,
    }
}

/// A region of an on-chip memory (L1, L0A, L0B, L0C, UB).
pub(crate) fn local(mem: Mem, start: u64, len: u64) -> Region {
    Region {
        mem,
        space: 0,
        start,
        len,
    }
}

/// A TQue of the builder.
#[derive(Debug, Clone)]
pub(crate) struct Queue {
    id: u32,
    src: Pipe,
    dst: Pipe,
    slots: Vec<Region>,
    used: Vec<bool>,
    next_alloc: usize,
    fifo: VecDeque<usize>,
}

/// Builds a trace block by block.
#[derive(Debug, Clone, Default)]
pub(crate) struct TraceBuilder {
    pub trace: Trace,
    cur: Vec<Instr>,
    cur_block: u32,
    next_queue: u32,
    /// Drop the next EnQue and the next DeQue of these queue ids (to test
    /// the race checker): (queue, enque still to drop, deque still to drop).
    pub drop_pairs: Vec<(u32, bool, bool)>,
}

impl TraceBuilder {
    pub(crate) fn new() -> TraceBuilder {
        TraceBuilder::default()
    }

    /// Index of a source location `k.cpp:line` for `api`.
    pub(crate) fn loc(&mut self, api: &str, line: u32) -> u32 {
        let loc = SrcLoc {
            file: "k.cpp".to_string(),
            line,
            api: api.to_string(),
        };
        if let Some(i) = self.trace.locs.iter().position(|l| *l == loc) {
            return i as u32;
        }
        self.trace.locs.push(loc);
        (self.trace.locs.len() - 1) as u32
    }

    pub(crate) fn begin_block(&mut self, block: u32) {
        self.cur.clear();
        self.cur_block = block;
    }

    pub(crate) fn end_block(&mut self) {
        let instrs = std::mem::take(&mut self.cur);
        self.trace.blocks.push(BlockTrace {
            block: self.cur_block,
            instrs,
            gm_lines: Vec::new(),
            role: None,
        });
        self.trace.block_dim = self.trace.blocks.len() as u32;
    }

    pub(crate) fn finish(mut self) -> Trace {
        if !self.cur.is_empty() {
            self.end_block();
        }
        self.trace
    }

    pub(crate) fn push(
        &mut self,
        pipe: Pipe,
        kind: InstrKind,
        reads: Vec<Region>,
        writes: Vec<Region>,
        api: &str,
        line: u32,
    ) {
        let loc = self.loc(api, line);
        self.cur.push(Instr {
            pipe,
            kind,
            reads,
            writes,
            loc,
        });
    }

    /// DataCopy GM -> UB, contiguous.
    pub(crate) fn copy_in(&mut self, line: u32, src: Region, dst: Region) {
        let kind = InstrKind::Dma {
            dir: DmaDir::GmToUb,
            bytes: src.len,
            bursts: 1,
            burst_bytes: src.len,
            gm_offset: src.start,
            gm_strided: false,
            atomic: false,
        };
        self.push(Pipe::Mte2, kind, vec![src], vec![dst], "DataCopy", line);
    }

    /// DataCopy UB -> GM, contiguous.
    pub(crate) fn copy_out(&mut self, line: u32, src: Region, dst: Region) {
        let kind = InstrKind::Dma {
            dir: DmaDir::UbToGm,
            bytes: dst.len,
            bursts: 1,
            burst_bytes: dst.len,
            gm_offset: dst.start,
            gm_strided: false,
            atomic: false,
        };
        self.push(Pipe::Mte3, kind, vec![src], vec![dst], "DataCopy", line);
    }

    /// A count-mode vector call on `elems` elements.
    pub(crate) fn vec(
        &mut self,
        line: u32,
        op: VecOp,
        dtype: Dtype,
        dst: Region,
        srcs: &[Region],
        elems: u64,
    ) {
        self.vec_cast(line, op, dtype, dtype, dst, srcs, elems);
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn vec_cast(
        &mut self,
        line: u32,
        op: VecOp,
        dtype: Dtype,
        src_dtype: Dtype,
        dst: Region,
        srcs: &[Region],
        elems: u64,
    ) {
        let widest = dtype.size().max(src_dtype.size()) as u64;
        let repeats = (elems * widest).div_ceil(256) as u32;
        let kind = InstrKind::Vector {
            op,
            dtype,
            src_dtype,
            repeats,
            elems,
        };
        self.push(Pipe::V, kind, srcs.to_vec(), vec![dst], op.name(), line);
    }

    /// A GM -> L1 copy on MTE2 as the runtime records it: `bursts` bursts
    /// of `burst_bytes` (one per source row of an ND2NZ copy, one per
    /// fractal column of an NZ copy), `src` the bounding GM range; strided
    /// when the bursts are not back to back in GM.
    pub(crate) fn copy_gm_to_l1(
        &mut self,
        line: u32,
        src: Region,
        dst: Region,
        bursts: u32,
        burst_bytes: u64,
    ) {
        let bytes = u64::from(bursts) * burst_bytes;
        let kind = InstrKind::Dma {
            dir: DmaDir::GmToL1,
            bytes,
            bursts,
            burst_bytes,
            gm_offset: src.start,
            gm_strided: bursts > 1 && src.len != bytes,
            atomic: false,
        };
        self.push(Pipe::Mte2, kind, vec![src], vec![dst], "DataCopy", line);
    }

    /// LoadData L1 -> L0A or L0B on MTE1 (one burst: MTE1 moves fractal
    /// after fractal at its path rate, as the runtime records it).
    pub(crate) fn load_l0(&mut self, line: u32, src: Region, dst: Region) {
        let kind = InstrKind::Dma {
            dir: DmaDir::L1ToL0,
            bytes: dst.len,
            bursts: 1,
            burst_bytes: dst.len,
            gm_offset: 0,
            gm_strided: false,
            atomic: false,
        };
        self.push(Pipe::Mte1, kind, vec![src], vec![dst], "LoadData", line);
    }

    /// Mmad on PIPE_M: `c` (L0C) (+)= `a` (L0A) x `b` (L0B).
    pub(crate) fn mmad(&mut self, line: u32, a: Region, b: Region, c: Region, shape: MmadShape) {
        let reads = if shape.init {
            vec![a, b]
        } else {
            vec![a, b, c]
        };
        self.push(
            Pipe::M,
            InstrKind::Mmad(shape),
            reads,
            vec![c],
            "Mmad",
            line,
        );
    }

    /// Fixpipe L0C -> GM on PIPE_FIX, NZ to ND: one burst per row of C
    /// (`rows` bursts of `row_bytes`), `dst` the bounding GM range.
    pub(crate) fn fixpipe(
        &mut self,
        line: u32,
        src: Region,
        dst: Region,
        rows: u32,
        row_bytes: u64,
    ) {
        let bytes = u64::from(rows) * row_bytes;
        let kind = InstrKind::Dma {
            dir: DmaDir::L0cOut,
            bytes,
            bursts: rows,
            burst_bytes: row_bytes,
            gm_offset: dst.start,
            gm_strided: rows > 1 && dst.len != bytes,
            atomic: false,
        };
        self.push(Pipe::Fix, kind, vec![src], vec![dst], "Fixpipe", line);
    }

    pub(crate) fn set_flag(&mut self, line: u32, src: Pipe, dst: Pipe, id: u32) {
        let kind = InstrKind::SetFlag {
            src,
            dst,
            key: FlagKey::User { id },
            origin: SyncOrigin::User,
        };
        self.push(src, kind, vec![], vec![], "SetFlag", line);
    }

    pub(crate) fn wait_flag(&mut self, line: u32, src: Pipe, dst: Pipe, id: u32) {
        let kind = InstrKind::WaitFlag {
            src,
            dst,
            key: FlagKey::User { id },
            origin: SyncOrigin::User,
        };
        self.push(dst, kind, vec![], vec![], "WaitFlag", line);
    }

    pub(crate) fn barrier(&mut self, line: u32, pipe: Option<Pipe>) {
        self.push(
            pipe.unwrap_or(Pipe::S),
            InstrKind::Barrier { pipe },
            vec![],
            vec![],
            "PipeBarrier",
            line,
        );
    }

    pub(crate) fn scalar(&mut self, line: u32, op: ScalarOp, region: Region) {
        let (reads, writes, api) = match op {
            ScalarOp::LocalSet | ScalarOp::GmSet => (vec![], vec![region], "SetValue"),
            _ => (vec![region], vec![], "GetValue"),
        };
        let kind = InstrKind::Scalar {
            op,
            bytes: region.len,
        };
        self.push(Pipe::S, kind, reads, writes, api, line);
    }

    /// `pipe.InitBuffer(q, num, bytes)` at UB address `base`.
    pub(crate) fn queue(
        &mut self,
        src: Pipe,
        dst: Pipe,
        base: u64,
        num: usize,
        bytes: u64,
    ) -> Queue {
        self.queue_in(Mem::Ub, src, dst, base, num, bytes)
    }

    /// `pipe.InitBuffer(q, num, bytes)` at address `base` of `mem` (A1/B1
    /// queues in L1, A2 in L0A, B2 in L0B, CO1 in L0C).
    pub(crate) fn queue_in(
        &mut self,
        mem: Mem,
        src: Pipe,
        dst: Pipe,
        base: u64,
        num: usize,
        bytes: u64,
    ) -> Queue {
        let id = self.next_queue;
        self.next_queue += 1;
        Queue {
            id,
            src,
            dst,
            slots: (0..num)
                .map(|i| local(mem, base + i as u64 * bytes, bytes))
                .collect(),
            used: vec![false; num],
            next_alloc: 0,
            fifo: VecDeque::new(),
        }
    }

    pub(crate) fn alloc(&mut self, line: u32, q: &mut Queue) -> usize {
        let slot = q.next_alloc % q.slots.len();
        q.next_alloc += 1;
        if q.used[slot] {
            let kind = InstrKind::WaitFlag {
                src: q.dst,
                dst: q.src,
                key: FlagKey::Slot {
                    queue: q.id,
                    slot: slot as u32,
                    forward: false,
                },
                origin: SyncOrigin::AllocTensor,
            };
            self.push(q.src, kind, vec![], vec![], "AllocTensor", line);
        }
        q.used[slot] = true;
        slot
    }

    pub(crate) fn enque(&mut self, line: u32, q: &mut Queue, slot: usize) {
        q.fifo.push_back(slot);
        if let Some(pair) = self.drop_pairs.iter_mut().find(|p| p.0 == q.id && p.1) {
            pair.1 = false;
            return;
        }
        let kind = InstrKind::SetFlag {
            src: q.src,
            dst: q.dst,
            key: FlagKey::Slot {
                queue: q.id,
                slot: slot as u32,
                forward: true,
            },
            origin: SyncOrigin::EnQue,
        };
        self.push(q.src, kind, vec![], vec![], "EnQue", line);
    }

    pub(crate) fn deque(&mut self, line: u32, q: &mut Queue) -> usize {
        let slot = q.fifo.pop_front().unwrap_or(0);
        if let Some(pair) = self.drop_pairs.iter_mut().find(|p| p.0 == q.id && p.2) {
            pair.2 = false;
            return slot;
        }
        let kind = InstrKind::WaitFlag {
            src: q.src,
            dst: q.dst,
            key: FlagKey::Slot {
                queue: q.id,
                slot: slot as u32,
                forward: true,
            },
            origin: SyncOrigin::DeQue,
        };
        self.push(q.dst, kind, vec![], vec![], "DeQue", line);
        slot
    }

    pub(crate) fn free(&mut self, line: u32, q: &mut Queue, slot: usize) {
        let kind = InstrKind::SetFlag {
            src: q.dst,
            dst: q.src,
            key: FlagKey::Slot {
                queue: q.id,
                slot: slot as u32,
                forward: false,
            },
            origin: SyncOrigin::FreeTensor,
        };
        self.push(q.dst, kind, vec![], vec![], "FreeTensor", line);
    }

    pub(crate) fn slot(q: &Queue, slot: usize) -> Region {
        q.slots[slot]
    }
}

/// Parameters of the `add_custom`-like kernel: z = x + y (then `extra_ops`
/// more in-place vector ops on z per tile), split over blocks, tiled,
/// through VECIN/VECOUT queues of `buffer_num` slots.
#[derive(Debug, Clone)]
pub(crate) struct AddKernel {
    pub blocks: u32,
    pub total_elems: u64,
    pub tile_elems: u64,
    pub buffer_num: usize,
    pub dtype: Dtype,
    /// In-place ops on z after the Add (to balance compute against copies).
    pub extra_ops: Vec<VecOp>,
    /// Extra GM byte offset of every tensor (alignment tests).
    pub gm_shift: u64,
    /// Insert a PipeBarrier<PIPE_ALL> at the end of each loop iteration,
    /// after CopyOut (redundant: the queues already order everything).
    pub barrier_per_tile: bool,
}

impl AddKernel {
    pub(crate) fn new(
        blocks: u32,
        total_elems: u64,
        tile_elems: u64,
        buffer_num: usize,
    ) -> AddKernel {
        AddKernel {
            blocks,
            total_elems,
            tile_elems,
            buffer_num,
            dtype: Dtype::Float16,
            extra_ops: Vec::new(),
            gm_shift: 0,
            barrier_per_tile: false,
        }
    }

    /// Builds the trace; `tb` may carry skip settings.
    pub(crate) fn build_with(&self, mut tb: TraceBuilder) -> Trace {
        let size = self.dtype.size() as u64;
        let per_block = self
            .total_elems
            .div_ceil(u64::from(self.blocks))
            .div_ceil(128)
            * 128;
        let tile_bytes = self.tile_elems * size;
        for block in 0..self.blocks {
            let first = u64::from(block) * per_block;
            let elems = per_block.min(self.total_elems.saturating_sub(first));
            tb.begin_block(block);
            tb.scalar(10, ScalarOp::TilingRead, gm(3, 0, 32));
            let n = self.buffer_num;
            let mut in_x = tb.queue(Pipe::Mte2, Pipe::V, 0, n, tile_bytes);
            let mut in_y = tb.queue(Pipe::Mte2, Pipe::V, n as u64 * tile_bytes, n, tile_bytes);
            let mut out_z = tb.queue(
                Pipe::V,
                Pipe::Mte3,
                2 * n as u64 * tile_bytes,
                n,
                tile_bytes,
            );
            let tiles = elems.div_ceil(self.tile_elems);
            for tile in 0..tiles {
                let start = tile * self.tile_elems;
                let count = self.tile_elems.min(elems - start);
                let bytes = count * size;
                let gm_off = (first + start) * size + self.gm_shift;
                // CopyIn
                let xs = tb.alloc(20, &mut in_x);
                let ys = tb.alloc(21, &mut in_y);
                let xr = TraceBuilder::slot(&in_x, xs);
                let yr = TraceBuilder::slot(&in_y, ys);
                tb.copy_in(22, gm(0, gm_off, bytes), ub(xr.start, bytes));
                tb.copy_in(23, gm(1, gm_off, bytes), ub(yr.start, bytes));
                tb.enque(24, &mut in_x, xs);
                tb.enque(25, &mut in_y, ys);
                // Compute
                let xs = tb.deque(30, &mut in_x);
                let ys = tb.deque(31, &mut in_y);
                let zs = tb.alloc(32, &mut out_z);
                let xr = ub(TraceBuilder::slot(&in_x, xs).start, bytes);
                let yr = ub(TraceBuilder::slot(&in_y, ys).start, bytes);
                let zr = ub(TraceBuilder::slot(&out_z, zs).start, bytes);
                tb.vec(33, VecOp::Add, self.dtype, zr, &[xr, yr], count);
                for op in &self.extra_ops {
                    tb.vec(34, *op, self.dtype, zr, &[zr], count);
                }
                tb.enque(35, &mut out_z, zs);
                tb.free(36, &mut in_x, xs);
                tb.free(37, &mut in_y, ys);
                // CopyOut
                let zs = tb.deque(40, &mut out_z);
                let zr = ub(TraceBuilder::slot(&out_z, zs).start, bytes);
                tb.copy_out(41, zr, gm(2, gm_off, bytes));
                tb.free(42, &mut out_z, zs);
                if self.barrier_per_tile {
                    tb.barrier(43, None);
                }
            }
            tb.end_block();
        }
        let total_bytes = self.total_elems * size + self.gm_shift;
        tb.trace.gm_spaces = vec![total_bytes, total_bytes, total_bytes, 32];
        tb.trace
    }

    pub(crate) fn build(&self) -> Trace {
        self.build_with(TraceBuilder::new())
    }
}
