//! GM reads that run past their allocation: the source side of a DMA
//! (DataCopy, DataCopyPad, and the cube path's GM -> L1/L0 copies: DataCopy
//! with Nd2NzParams and LoadData from GM, runtime/cube.rs), a
//! `GlobalTensor::GetValue` and the tiling read. Every one goes through
//! [`Block::source_region`] and [`Block::read_source`]: one rule, here.
//!
//! The chip's DMA does not bound-check a read per allocation: a read that
//! starts in a tensor and runs past the bytes the device allocator gives it
//! ([`device_span`](super::gm::device_span)) returns whatever memory
//! follows. Real kernels do it (a whole tile of 1024 indices copied from an
//! 8-index tensor, of which they use the first 8), and stay correct. So a
//! read that starts inside an allocation's span is accepted
//! ([`GmSpace::resolve_read`](super::gm::GmSpace::resolve_read)); the bytes
//! past the span read as [`GM_POISON`] (never another tensor's), the trace
//! region ends at the span (the memory really read), and a note at the
//! kernel's line names the tensor and how far past. Writes past the span,
//! and reads that start outside every span, still fault
//! ([`Block::region`]); so does a plain C++ load of the kernel's own code
//! past the span (it is not a DMA: the guard after the span catches it).

use super::block::Block;
use super::fault::Fault;
use super::gm::GM_POISON;
use crate::trace::{Mem, Region};

impl Block {
    /// Checks the source span `[start, end)` of a read from `mem` and turns
    /// it into a trace region: as [`Block::region`], except that a GM read
    /// may run past its allocation's span (see the module docs); the region
    /// then ends at the span, [`Block::read_source`] gives [`GM_POISON`] for
    /// the rest, and a note at `loc` (the call's interned location) names
    /// the tensor and how far past.
    pub fn source_region(
        &mut self,
        operand: &'static str,
        mem: Mem,
        span: (u64, u64),
        loc: u32,
    ) -> Result<Region, Fault> {
        let (start, end) = span;
        if mem != Mem::Gm {
            return self.region(operand, mem, span);
        }
        let len = end - start;
        let r = self.shared.gm.resolve_read(operand, start as usize, len)?;
        if r.past_span == 0 {
            return self.region(operand, mem, span);
        }
        let (name, tensor_len) = self
            .shared
            .gm
            .allocs()
            .get(r.space as usize)
            .map(|a| (a.name.clone(), a.len()))
            .unwrap_or_default();
        let (place, api) = self.locs.get(loc as usize).map_or_else(
            || ("(unknown location)".to_string(), String::new()),
            |l| (format!("{}:{}", l.file, l.line), l.api.clone()),
        );
        let span_bytes = r.offset + r.in_span(len);
        // One note per line and tensor (a loop over tiles repeats it with
        // other offsets): the first one's figures.
        let key = format!("{place}: {api} reads past the end of `{name}`");
        self.shared.note_first(
            "gm-overread",
            &key,
            format!(
                "{key} ({tensor_len} bytes; {span_bytes} with the device allocator's padding): \
                 {} byte(s) past it, from byte {} of the tensor. Allowed: the chip's DMA does not \
                 bound-check a read, it returns whatever memory follows (maybe another \
                 tensor's); here those bytes read as 0x{GM_POISON:02X} (NaN in floating types, \
                 -1 in integers), so a result that uses them fails the comparison. Writes past \
                 the padding fault",
                r.past_span, r.offset
            ),
        );
        Ok(Region {
            mem,
            space: r.space,
            start: r.offset,
            len: r.in_span(len),
        })
    }

    /// Reads `out.len()` bytes at `at` for an access checked as `region`
    /// (by [`Block::source_region`]): the bytes past the region's end, a
    /// GM read's bytes past its allocation's span, read as [`GM_POISON`].
    pub fn read_source(&mut self, region: &Region, at: u64, out: &mut [u8]) {
        if region.mem != Mem::Gm {
            self.read_bytes(region.mem, at, out);
            return;
        }
        let end = self
            .shared
            .gm
            .allocs()
            .get(region.space as usize)
            .map_or(0, |a| a.base() as u64 + region.start + region.len);
        let real = end.saturating_sub(at).min(out.len() as u64) as usize;
        let (inside, past) = out.split_at_mut(real);
        if !inside.is_empty() {
            self.read_bytes(Mem::Gm, at, inside);
        }
        past.fill(GM_POISON);
    }
}
