//! A hand-built trace of a basic tiled matmul on the cube cores, as a
//! CATLASS-style kernel issues it (for the fidelity table's tile-shape and
//! swizzle points, [`super::fidelity_cube`]): C is cut into L1-tile M x N
//! base blocks handed to the AI cores by an identity block swizzle; each
//! core walks K in L1-tile K steps (GM -> L1 copies of the A and B tiles on
//! MTE2, double-buffered) and L0-tile K sub-steps (L1 -> L0A/L0B loads on
//! MTE1, double-buffered; Mmad on PIPE_M accumulating in L0C), then moves
//! the block out with one Fixpipe (L0C -> GM, NZ to ND). The buffers are
//! TQue-like queues, so the flags between the pipes are the ones
//! [`TraceBuilder`] lowers EnQue/DeQue/AllocTensor/FreeTensor to.

use super::synth::{gm, local, TraceBuilder};
use crate::trace::{Mem, MmadShape, Pipe, Trace};
use ascendopt_op::Dtype;

/// How a matrix lies in GM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GmLayout {
    /// Rows contiguous (ND): a tile is copied with ND2NZ, one burst per
    /// tile row.
    RowMajor,
    /// Columns contiguous (ND, the transposed matrix row-major): one burst
    /// per tile column.
    ColumnMajor,
    /// Fractal zN (NZ): 16-row x 32-byte fractals, the fractals of one
    /// 32-byte column strip contiguous from the first row to the last; a
    /// tile is one burst per column strip.
    Nz,
}

/// CATLASS's identity block swizzle (`GemmIdentityBlockSwizzle<offset,
/// direction>`, hicann/catlass docs/swizzle_explanation.md and
/// block_swizzle.md), as a rule in our words: the base blocks of C form a
/// grid of `loops_m` x `loops_n`. With direction 0 the grid's block rows
/// are grouped into bands of `offset` rows (the last band holds what is
/// left); bands are visited top to bottom, and inside a band the blocks go
/// column by column, each column top to bottom, the columns left to right
/// in even bands and right to left in odd bands (a serpentine, so a band
/// starts next to where the previous one ended). Direction 1 is the same
/// with rows and columns exchanged: bands of `offset` block columns, left
/// to right, inside a band row by row, each row left to right, rows top to
/// bottom in even bands and bottom to top in odd bands. The t-th block of
/// that order goes to core `t mod cores`, and a core computes its blocks
/// in increasing t (the kernel's loop from GetBlockIdx in steps of
/// GetBlockNum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IdentitySwizzle {
    /// Width of a band, in block rows (direction 0) or columns (1).
    pub offset: u32,
    /// 0: bands of rows; 1: bands of columns.
    pub direction: u32,
}

impl IdentitySwizzle {
    /// (block row, block column) of the `task`-th block of the order, on a
    /// grid of `loops_m` x `loops_n` blocks.
    pub(crate) fn block(&self, task: u32, loops_m: u32, loops_n: u32) -> (u32, u32) {
        let offset = self.offset.max(1);
        let task = task % (loops_m * loops_n).max(1);
        // Transpose direction 1 into direction 0: bands across `outer`,
        // walked along `inner`.
        let (outer, inner) = if self.direction == 0 {
            (loops_m, loops_n)
        } else {
            (loops_n, loops_m)
        };
        let band = task / (offset * inner);
        let in_band = task % (offset * inner);
        let first = band * offset;
        let width = offset.min(outer - first);
        let across = first + in_band % width;
        let mut along = in_band / width;
        if band % 2 == 1 {
            along = inner - 1 - along;
        }
        if self.direction == 0 {
            (across, along)
        } else {
            (along, across)
        }
    }

    /// The blocks each of `cores` cores computes, in its order.
    pub(crate) fn assignment(
        &self,
        loops_m: u32,
        loops_n: u32,
        cores: u32,
    ) -> Vec<Vec<(u32, u32)>> {
        let mut per_core = vec![Vec::new(); cores as usize];
        for task in 0..loops_m * loops_n {
            per_core[(task % cores) as usize].push(self.block(task, loops_m, loops_n));
        }
        per_core
    }
}

/// A basic pingpong matmul C (M x N) = A (M x K) x B (K x N) on `cores` cube
/// cores.
#[derive(Debug, Clone)]
pub(crate) struct BasicMatmul {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// Type of A, B and C (f16 in and out with f32 accumulation, or f32).
    pub dtype: Dtype,
    pub layout_a: GmLayout,
    pub layout_b: GmLayout,
    /// L1TileShape (M, N, K).
    pub l1: (u32, u32, u32),
    /// L0TileShape::K (L0's M and N are L1's).
    pub l0_k: u32,
    pub swizzle: IdentitySwizzle,
    pub cores: u32,
    /// Start each block's K walk at L1 K step `core mod steps` and wrap
    /// around (CATLASS's shuffleK of the preload dispatch policy, guide
    /// 调优策略: the cores that share a row or column of blocks then read
    /// different addresses of A and B at a time); false: every core from
    /// step 0.
    pub shuffle_k: bool,
}

/// Why a matmul's tiles do not fit the core's buffers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {what} tiles need {need} bytes, the buffer holds {have}")]
pub struct TileError {
    /// Which buffer (`L1`, `L0A`, ...).
    pub what: &'static str,
    /// Bytes the tiles need.
    pub need: u64,
    /// Bytes the buffer holds.
    pub have: u64,
}

/// Elements of a fractal side (16 rows, C0 = 32 B of elements).
const FRACTAL: u64 = 16;
const C0_BYTES: u64 = 32;

impl BasicMatmul {
    /// Rounds up to a multiple of `to`.
    fn up(x: u64, to: u64) -> u64 {
        x.div_ceil(to) * to
    }

    /// Checks the double-buffered tiles against L1 (512 KB), L0A/L0B
    /// (64 KB) and L0C (128 KB, f32 accumulators, one buffer).
    pub(crate) fn check(&self) -> Result<(), TileError> {
        let size = self.dtype.size() as u64;
        let (tm, tn, tk) = (
            u64::from(self.l1.0),
            u64::from(self.l1.1),
            u64::from(self.l1.2),
        );
        let lk = u64::from(self.l0_k);
        for (what, need, have) in [
            ("L1", 2 * (tm * tk + tk * tn) * size, 512 * 1024),
            ("L0A", 2 * tm * lk * size, 64 * 1024),
            ("L0B", 2 * lk * tn * size, 64 * 1024),
            ("L0C", tm * tn * 4, 128 * 1024),
        ] {
            if need > have {
                return Err(TileError { what, need, have });
            }
        }
        Ok(())
    }

    /// The trace: one block per core.
    pub(crate) fn build(&self) -> Result<Trace, TileError> {
        self.check()?;
        let size = self.dtype.size() as u64;
        let (m, n, k) = (u64::from(self.m), u64::from(self.n), u64::from(self.k));
        let (tm, tn, tk) = (
            u64::from(self.l1.0),
            u64::from(self.l1.1),
            u64::from(self.l1.2),
        );
        let lk = u64::from(self.l0_k);
        let c0 = C0_BYTES / size;
        let loops_m = self.m.div_ceil(self.l1.0);
        let loops_n = self.n.div_ceil(self.l1.1);
        let plan = self.swizzle.assignment(loops_m, loops_n, self.cores);
        let mut tb = TraceBuilder::new();
        for (core, blocks) in plan.iter().enumerate() {
            tb.begin_block(core as u32);
            let a_slot = tm * tk * size;
            let b_slot = tk * tn * size;
            let mut l1a = tb.queue_in(Mem::L1, Pipe::Mte2, Pipe::Mte1, 0, 2, a_slot);
            let mut l1b = tb.queue_in(Mem::L1, Pipe::Mte2, Pipe::Mte1, 2 * a_slot, 2, b_slot);
            let mut l0a = tb.queue_in(Mem::L0a, Pipe::Mte1, Pipe::M, 0, 2, tm * lk * size);
            let mut l0b = tb.queue_in(Mem::L0b, Pipe::Mte1, Pipe::M, 0, 2, lk * tn * size);
            let mut l0c = tb.queue_in(Mem::L0c, Pipe::M, Pipe::Fix, 0, 1, tm * tn * 4);
            for &(bm, bn) in blocks {
                let row0 = u64::from(bm) * tm;
                let col0 = u64::from(bn) * tn;
                let mm = tm.min(m - row0);
                let nn = tn.min(n - col0);
                let c_slot = tb.alloc(60, &mut l0c);
                let c_region = TraceBuilder::slot(&l0c, c_slot);
                let c_region = local(
                    Mem::L0c,
                    c_region.start,
                    Self::up(mm, FRACTAL) * Self::up(nn, FRACTAL) * 4,
                );
                let mut first = true;
                let steps = k.div_ceil(tk);
                let start = if self.shuffle_k {
                    core as u64 % steps
                } else {
                    0
                };
                for step in 0..steps {
                    let kt = (start + step) % steps;
                    let k0 = kt * tk;
                    let kk = tk.min(k - k0);
                    // MTE2: the A and B tiles into L1.
                    let sa = tb.alloc(20, &mut l1a);
                    let (src, bursts, burst) =
                        tile_in_gm(self.layout_a, m, k, row0, k0, mm, kk, size);
                    let dst = TraceBuilder::slot(&l1a, sa);
                    let dst = local(
                        Mem::L1,
                        dst.start,
                        Self::up(mm, FRACTAL) * Self::up(kk, c0) * size,
                    );
                    tb.copy_gm_to_l1(21, gm(0, src.0, src.1), dst, bursts, burst);
                    tb.enque(22, &mut l1a, sa);
                    let sb = tb.alloc(23, &mut l1b);
                    let (src, bursts, burst) =
                        tile_in_gm(self.layout_b, k, n, k0, col0, kk, nn, size);
                    let dst = TraceBuilder::slot(&l1b, sb);
                    let dst = local(
                        Mem::L1,
                        dst.start,
                        Self::up(kk, c0) * Self::up(nn, FRACTAL) * size,
                    );
                    tb.copy_gm_to_l1(24, gm(1, src.0, src.1), dst, bursts, burst);
                    tb.enque(25, &mut l1b, sb);
                    // MTE1 and the cube: the K sub-steps.
                    let sa = tb.deque(30, &mut l1a);
                    let sb = tb.deque(31, &mut l1b);
                    let a1 = TraceBuilder::slot(&l1a, sa);
                    let b1 = TraceBuilder::slot(&l1b, sb);
                    for ks in 0..kk.div_ceil(lk) {
                        let kq = lk.min(kk - ks * lk);
                        let a_bytes = Self::up(mm, FRACTAL) * Self::up(kq, c0) * size;
                        let b_bytes = Self::up(kq, c0) * Self::up(nn, FRACTAL) * size;
                        let s0a = tb.alloc(32, &mut l0a);
                        let a0 = TraceBuilder::slot(&l0a, s0a);
                        let a0 = local(Mem::L0a, a0.start, a_bytes);
                        let a_src = local(Mem::L1, a1.start + ks * a_bytes, a_bytes);
                        tb.load_l0(33, a_src, a0);
                        tb.enque(34, &mut l0a, s0a);
                        let s0b = tb.alloc(35, &mut l0b);
                        let b0 = TraceBuilder::slot(&l0b, s0b);
                        let b0 = local(Mem::L0b, b0.start, b_bytes);
                        let b_src = local(Mem::L1, b1.start + ks * b_bytes, b_bytes);
                        tb.load_l0(36, b_src, b0);
                        tb.enque(37, &mut l0b, s0b);
                        let s0a = tb.deque(40, &mut l0a);
                        let s0b = tb.deque(41, &mut l0b);
                        let a0 = local(Mem::L0a, TraceBuilder::slot(&l0a, s0a).start, a_bytes);
                        let b0 = local(Mem::L0b, TraceBuilder::slot(&l0b, s0b).start, b_bytes);
                        let shape = MmadShape {
                            m: mm as u32,
                            n: nn as u32,
                            k: kq as u32,
                            dtype: self.dtype,
                            unit_flag: 0,
                            init: first,
                        };
                        tb.mmad(42, a0, b0, c_region, shape);
                        first = false;
                        tb.free(43, &mut l0a, s0a);
                        tb.free(44, &mut l0b, s0b);
                    }
                    tb.free(45, &mut l1a, sa);
                    tb.free(46, &mut l1b, sb);
                }
                // The block out: L0C -> GM (C row-major), f32 cast to C's type.
                tb.enque(61, &mut l0c, c_slot);
                let c_slot = tb.deque(62, &mut l0c);
                let src = local(
                    Mem::L0c,
                    TraceBuilder::slot(&l0c, c_slot).start,
                    c_region.len,
                );
                let start = (row0 * n + col0) * size;
                let len = (mm - 1) * n * size + nn * size;
                tb.fixpipe(63, src, gm(2, start, len), mm as u32, nn * size);
                tb.free(64, &mut l0c, c_slot);
            }
            tb.end_block();
        }
        let mut trace = tb.finish();
        trace.gm_spaces = vec![m * k * size, k * n * size, m * n * size];
        Ok(trace)
    }
}

/// The GM side of a copy of the `rows` x `cols` tile at (`row0`, `col0`)
/// of a `total_rows` x `total_cols` matrix of `size`-byte elements:
/// ((first byte, bounding length), bursts, bytes per burst).
#[allow(clippy::too_many_arguments)]
fn tile_in_gm(
    layout: GmLayout,
    total_rows: u64,
    total_cols: u64,
    row0: u64,
    col0: u64,
    rows: u64,
    cols: u64,
    size: u64,
) -> ((u64, u64), u32, u64) {
    match layout {
        GmLayout::RowMajor => {
            let stride = total_cols * size;
            let start = row0 * stride + col0 * size;
            let len = (rows - 1) * stride + cols * size;
            ((start, len), rows as u32, cols * size)
        }
        GmLayout::ColumnMajor => {
            let stride = total_rows * size;
            let start = col0 * stride + row0 * size;
            let len = (cols - 1) * stride + rows * size;
            ((start, len), cols as u32, rows * size)
        }
        GmLayout::Nz => {
            // Column strips of C0 elements, each `total_rows` (padded to
            // 16) rows of 32 B, one after the other.
            let c0 = C0_BYTES / size;
            let strip = BasicMatmul::up(total_rows, FRACTAL) * C0_BYTES;
            let first_strip = col0 / c0;
            let strips = cols.div_ceil(c0);
            let start = first_strip * strip + row0 * C0_BYTES;
            let burst = rows * C0_BYTES;
            let len = (strips - 1) * strip + burst;
            ((start, len), strips as u32, burst)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{DmaDir, InstrKind};

    #[test]
    fn swizzle_direction_0_walks_bands_of_rows_in_a_serpentine() {
        // 5 x 4 blocks, bands of 2 rows: band 0 (rows 0-1) columns left to
        // right, band 1 (rows 2-3) right to left, band 2 (row 4) left to
        // right again.
        let s = IdentitySwizzle {
            offset: 2,
            direction: 0,
        };
        let order: Vec<_> = (0..20).map(|t| s.block(t, 5, 4)).collect();
        assert_eq!(
            order,
            vec![
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1),
                (0, 2),
                (1, 2),
                (0, 3),
                (1, 3),
                (2, 3),
                (3, 3),
                (2, 2),
                (3, 2),
                (2, 1),
                (3, 1),
                (2, 0),
                (3, 0),
                (4, 0),
                (4, 1),
                (4, 2),
                (4, 3),
            ]
        );
        // Offset 1 (the default) is a serpentine over single rows.
        let rows = IdentitySwizzle {
            offset: 1,
            direction: 0,
        };
        assert_eq!(rows.block(3, 3, 4), (0, 3));
        assert_eq!(rows.block(4, 3, 4), (1, 3), "odd band reversed");
        assert_eq!(rows.block(8, 3, 4), (2, 0));
    }

    #[test]
    fn swizzle_direction_1_is_direction_0_transposed() {
        let d0 = IdentitySwizzle {
            offset: 3,
            direction: 0,
        };
        let d1 = IdentitySwizzle {
            offset: 3,
            direction: 1,
        };
        for t in 0..35 {
            let (r, c) = d0.block(t, 7, 5);
            assert_eq!(d1.block(t, 5, 7), (c, r));
        }
        // Every block exactly once.
        let mut seen: Vec<_> = (0..35).map(|t| d1.block(t, 5, 7)).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 35);
    }

    /// The swizzle case of the CATLASS tuning guide: C of 2 x 24 blocks
    /// (M 160 = 128 + 32 rows, N 6144 in 256) on 20 cores.
    fn m_rows(s: IdentitySwizzle) -> Vec<u32> {
        s.assignment(2, 24, 20)
            .iter()
            .map(|blocks| {
                blocks
                    .iter()
                    .map(|&(r, _)| if r == 0 { 128 } else { 32 })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn swizzle_3_1_gives_cores_1_2_5_6_the_most_rows_and_4_1_balances_them() {
        let three = m_rows(IdentitySwizzle {
            offset: 3,
            direction: 1,
        });
        let most = *three.iter().max().unwrap();
        assert_eq!(most, 128 + 128 + 32);
        let busiest: Vec<_> = (0..20).filter(|&c| three[c] == most).collect();
        assert_eq!(busiest, vec![1, 2, 5, 6], "as the guide's figure says");
        let four = m_rows(IdentitySwizzle {
            offset: 4,
            direction: 1,
        });
        let most = *four.iter().max().unwrap();
        assert_eq!(most, 128 + 128);
        let busiest: Vec<_> = (0..20).filter(|&c| four[c] == most).collect();
        assert_eq!(busiest, vec![12, 13, 14, 15], "as the guide's figure says");
    }

    fn kernel() -> BasicMatmul {
        BasicMatmul {
            m: 160,
            n: 512,
            k: 512,
            dtype: Dtype::Float16,
            layout_a: GmLayout::RowMajor,
            layout_b: GmLayout::ColumnMajor,
            l1: (128, 256, 256),
            l0_k: 64,
            swizzle: IdentitySwizzle {
                offset: 1,
                direction: 0,
            },
            cores: 3,
            shuffle_k: false,
        }
    }

    #[test]
    fn the_matmul_trace_issues_copies_loads_mmads_and_fixpipes_per_block() {
        let trace = kernel().build().unwrap();
        assert_eq!(trace.blocks.len(), 3);
        // 2 x 2 blocks on 3 cores: core 0 gets blocks 0 and 3.
        let count = |b: usize, f: &dyn Fn(&InstrKind) -> bool| {
            trace.blocks[b].instrs.iter().filter(|i| f(&i.kind)).count()
        };
        let dma = |dir: DmaDir| move |k: &InstrKind| matches!(k, InstrKind::Dma { dir: d, .. } if *d == dir);
        // Per block: 2 K steps x (A + B) copies, 2 x 4 sub-steps x 2 loads,
        // 8 Mmads, 1 Fixpipe.
        assert_eq!(count(0, &dma(DmaDir::GmToL1)), 2 * 4);
        assert_eq!(count(0, &dma(DmaDir::L1ToL0)), 2 * 16);
        assert_eq!(count(0, &|k| matches!(k, InstrKind::Mmad(_))), 2 * 8);
        assert_eq!(count(0, &dma(DmaDir::L0cOut)), 2);
        assert_eq!(count(1, &dma(DmaDir::L0cOut)), 1);
        // The first Mmad of a block starts C, the others accumulate.
        let inits: Vec<bool> = trace.blocks[1]
            .instrs
            .iter()
            .filter_map(|i| match &i.kind {
                InstrKind::Mmad(s) => Some(s.init),
                _ => None,
            })
            .collect();
        assert_eq!(
            inits,
            [true, false, false, false, false, false, false, false]
        );
        // Block (1, 1) of core 0: 32 rows left of M; A row-major is one
        // burst per row (32 rows of 256 halves), B column-major one per
        // column (256 columns of 256 halves), C one per row.
        let kinds: Vec<_> = trace.blocks[0]
            .instrs
            .iter()
            .filter_map(|i| match i.kind {
                InstrKind::Dma {
                    dir,
                    bursts,
                    burst_bytes,
                    ..
                } if dir != DmaDir::L1ToL0 => Some((dir, bursts, burst_bytes)),
                _ => None,
            })
            .collect();
        let last_block = &kinds[kinds.len() - 5..];
        assert_eq!(
            last_block,
            [
                (DmaDir::GmToL1, 32, 512),
                (DmaDir::GmToL1, 256, 512),
                (DmaDir::GmToL1, 32, 512),
                (DmaDir::GmToL1, 256, 512),
                (DmaDir::L0cOut, 32, 512),
            ]
        );
    }

    #[test]
    fn an_nz_tile_is_one_burst_per_column_strip() {
        let mut mm = kernel();
        mm.layout_b = GmLayout::Nz;
        let trace = mm.build().unwrap();
        let b_copy = trace.blocks[0]
            .instrs
            .iter()
            .find(|i| i.reads.iter().any(|r| r.mem == Mem::Gm && r.space == 1))
            .unwrap();
        // 256 columns of halves = 16 strips of 16; 256 rows x 32 B each;
        // strips 512 rows x 32 B apart in GM.
        match b_copy.kind {
            InstrKind::Dma {
                bursts,
                burst_bytes,
                gm_strided,
                ..
            } => assert_eq!((bursts, burst_bytes, gm_strided), (16, 8192, true)),
            _ => panic!("not a DMA"),
        }
        assert_eq!(b_copy.reads[0].len, 15 * 512 * 32 + 8192);
    }

    #[test]
    fn shuffle_k_starts_each_core_at_its_own_k_step() {
        let mut mm = kernel();
        mm.shuffle_k = true;
        let trace = mm.build().unwrap();
        // The first A copy of core 1 reads K step 1 (halves 256..512 of
        // row 0); core 0 starts at step 0.
        let first_a = |b: usize| {
            trace.blocks[b]
                .instrs
                .iter()
                .find(|i| i.reads.iter().any(|r| r.mem == Mem::Gm && r.space == 0))
                .map(|i| i.reads[0].start)
                .unwrap()
        };
        assert_eq!(first_a(0), 0);
        assert_eq!(first_a(1), 256 * 2);
    }

    #[test]
    fn tiles_that_do_not_fit_are_refused() {
        let mut mm = kernel();
        mm.l1 = (256, 256, 512);
        let err = mm.build().unwrap_err();
        assert_eq!(err.what, "L1");
        let mut mm = kernel();
        mm.l0_k = 256;
        assert_eq!(mm.build().unwrap_err().what, "L0A");
    }

    #[test]
    fn the_matmul_trace_times_without_races_of_its_own() {
        let hw = crate::timing::HwProfile::builtin("ascend910b2").unwrap();
        let trace = kernel().build().unwrap();
        let r =
            crate::timing::simulate(&trace, &hw, &crate::timing::TimingOptions::deterministic())
                .unwrap();
        // Core 0 computes two blocks, so it ends last; every Mmad ran.
        let cube_cycles: u64 = r.timeline.blocks[0]
            .spans
            .iter()
            .filter(|s| {
                matches!(
                    trace.blocks[0].instrs[s.instr as usize].kind,
                    InstrKind::Mmad(_)
                )
            })
            .map(|s| s.end - s.start)
            .sum();
        assert!(cube_cycles > 0);
        assert!(r.profile.core_span_us > 0.0);
    }
}
