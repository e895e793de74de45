//! Races whose outcome no output can see: the racy read is a copy out to GM
//! (PIPE_MTE3 reading UB while another pipe writes it), and the GM bytes
//! that the racy UB bytes go to are written again, later in the same pipe's
//! order, before anything reads them.
//!
//! Why that is harmless on the device: a read changes no memory, so a
//! read-write race can only change the value the read gets; the copy puts
//! that value in GM, and a later copy of the same in-order pipe replaces it
//! there. If nothing (no pipe of any core, no plain load of the kernel's
//! code) reads those GM bytes in the meantime, or at all, the outputs are
//! the same whatever the race's timing. Real kernels do it: a tile copied
//! out with the whole block's length (past its own buffer, into the buffer
//! the vector unit is filling), then the rest copied again from the right
//! buffer.
//!
//! What it takes, all of it checked on the trace:
//! - the read is a non-atomic UB -> GM DMA (an atomic one would add the
//!   racy value into GM);
//! - the racy UB bytes' GM destination: exact for a one-burst copy (byte
//!   `k` of the UB source goes to byte `k` of the GM destination), the
//!   whole destination otherwise;
//! - later non-atomic, non-strided GM writes on the same pipe of the same
//!   core cover all of it (a strided copy's region has gaps it does not
//!   write);
//! - no instruction of any core reads those GM bytes, and no plain access
//!   of the kernel's code touches their lines (kept strict: a read ordered
//!   after the overwrite would be harmless too, but proving that order
//!   across cores is not attempted).

use crate::trace::{BlockTrace, DmaDir, InstrKind, Mem, Region, Trace, GM_LINE_BYTES};
use std::collections::HashMap;

/// Every GM byte range something reads (or the kernel's own code touches),
/// per allocation, merged and sorted.
pub(super) struct GmReads {
    by_space: HashMap<u32, Vec<(u64, u64)>>,
}

impl GmReads {
    pub(super) fn of(trace: &Trace) -> GmReads {
        let mut by_space: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
        for block in &trace.blocks {
            for instr in &block.instrs {
                let reads = instr.reads.iter();
                // An atomic copy reads the GM bytes it accumulates into.
                let atomic_writes = instr
                    .writes
                    .iter()
                    .filter(|_| matches!(instr.kind, InstrKind::Dma { atomic: true, .. }));
                for r in reads.chain(atomic_writes) {
                    if r.mem == Mem::Gm && r.len > 0 {
                        by_space
                            .entry(r.space)
                            .or_default()
                            .push((r.start, r.start + r.len));
                    }
                }
            }
            for line in &block.gm_lines {
                by_space
                    .entry(line.space)
                    .or_default()
                    .push((line.offset, line.offset + GM_LINE_BYTES));
            }
        }
        for ranges in by_space.values_mut() {
            ranges.sort_unstable();
            let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
            for &(s, e) in ranges.iter() {
                match merged.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            *ranges = merged;
        }
        GmReads { by_space }
    }

    /// True when anything reads a byte of `[start, end)` of `space`.
    fn any(&self, space: u32, start: u64, end: u64) -> bool {
        let Some(ranges) = self.by_space.get(&space) else {
            return false;
        };
        // The first merged range ending after `start`.
        let i = ranges.partition_point(|&(_, e)| e <= start);
        ranges.get(i).is_some_and(|&(s, _)| s < end)
    }
}

/// Why the race of `racy` (UB bytes that instruction `read` of `block`
/// reads while another pipe writes them) cannot change any output, or
/// None when it may. The text names the GM bytes and the instruction that
/// overwrites them.
pub(super) fn overwritten_read(
    trace: &Trace,
    block: &BlockTrace,
    read: u32,
    racy: &Region,
    reads: &GmReads,
) -> Option<String> {
    let instr = block.instrs.get(read as usize)?;
    let InstrKind::Dma {
        dir: DmaDir::UbToGm,
        atomic: false,
        bursts,
        ..
    } = instr.kind
    else {
        return None;
    };
    let src = instr.reads.first().filter(|r| r.mem == Mem::Ub)?;
    let dst = instr.writes.first().filter(|r| r.mem == Mem::Gm)?;
    let dst_end = dst.start + dst.len;
    let (start, end) = if bursts == 1 {
        let from = dst.start + racy.start.saturating_sub(src.start);
        (from.min(dst_end), (from + racy.len).min(dst_end))
    } else {
        (dst.start, dst_end)
    };
    if start >= end {
        return Some(format!(
            "the racy UB bytes are the copy's padding, which it does not write to GM ({})",
            super::describe(trace, instr)
        ));
    }
    if reads.any(dst.space, start, end) {
        return None;
    }
    // Later same-pipe writes that cover [start, end).
    let pipe = super::exec_pipe(instr);
    let mut left = vec![(start, end)];
    for later in &block.instrs[read as usize + 1..] {
        let plain = matches!(
            later.kind,
            InstrKind::Dma {
                atomic: false,
                gm_strided: false,
                ..
            }
        );
        if !plain || super::exec_pipe(later) != pipe {
            continue;
        }
        for w in later
            .writes
            .iter()
            .filter(|w| w.mem == Mem::Gm && w.space == dst.space)
        {
            left = subtract(&left, (w.start, w.start + w.len));
        }
        if left.is_empty() {
            return Some(format!(
                "the racy UB bytes only reach GM allocation #{} bytes [{start:#x}, {end:#x}), \
                 which {} overwrites later in {}'s order before anything reads them",
                dst.space,
                super::describe(trace, later),
                pipe.name()
            ));
        }
    }
    None
}

/// `ranges` without `[cut.0, cut.1)`.
fn subtract(ranges: &[(u64, u64)], cut: (u64, u64)) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(ranges.len() + 1);
    for &(s, e) in ranges {
        if cut.1 <= s || e <= cut.0 {
            out.push((s, e));
            continue;
        }
        if s < cut.0 {
            out.push((s, cut.0));
        }
        if cut.1 < e {
            out.push((cut.1, e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::subtract;

    #[test]
    fn subtracting_ranges() {
        assert_eq!(subtract(&[(0, 10)], (3, 5)), vec![(0, 3), (5, 10)]);
        assert_eq!(subtract(&[(0, 10)], (0, 10)), vec![]);
        assert_eq!(subtract(&[(0, 4), (6, 10)], (2, 8)), vec![(0, 2), (8, 10)]);
        assert_eq!(subtract(&[(0, 4)], (4, 8)), vec![(0, 4)]);
    }
}
