//! Global memory of one launch: the allocations the runtime made (inputs,
//! outputs, workspace, tiling data), each 512-byte aligned, and the lookup
//! that bounds-checks every GM access a kernel makes.
//!
//! Invariant (the guard): every allocation is surrounded by [`GUARD`]
//! bytes of address space before its start and after its device span that
//! hold nothing else: our own allocations reserve them inaccessible
//! (`mmap` with `PROT_NONE`), and the tensor arena of the worker leaves at
//! least that much unmapped between its regions (`worker/arena.rs`). So a
//! plain C++ access of the kernel's code whose address lies in a guard is
//! an access past (or before) that allocation, never one of the kernel's
//! stack, local memories or statics: [`GmSpace::classify_line`] names it,
//! and the runtime ends the launch with a fault that says so.

use super::fault::Fault;

/// Alignment of every GM allocation (the 512 B request size of the DMA,
/// hardware-facts.md section F "GM behaviour").
pub const GM_ALIGN: usize = 512;

/// Address space before every allocation and after its device span that
/// holds no other memory (see the module's invariant): 1 MiB, the least gap
/// the tensor arena leaves between its regions.
pub const GUARD: usize = 1 << 20;

/// Page size of the reservations.
const PAGE: usize = 4096;

/// The bytes a device allocation of `len` bytes really spans: the
/// AscendCL allocator (`aclrtMalloc`) rounds a request up to a multiple of
/// 32 bytes and adds 32 more, and starts every allocation on a 64-byte
/// boundary; a framework that carves one block into tensors keeps the same
/// `m = ALIGN_UP(len, 32) + 32` per tensor, each starting at
/// `ALIGN_UP(m, 64)` (AscendCL API reference, aclrtMalloc and
/// aclrtMallocAlign32, hiascend.com .../appdevgapi/aclcppdevg_03_0095.html
/// and ..._0096.html: "内存首地址64字节对齐", "size向上对齐成32字节整数倍后，
/// 再多加32字节", "内存大小向上对齐成32整数倍+32字节", "内存起始地址需满足64字节
/// 对齐"). So nothing else starts before `ALIGN_UP(ALIGN_UP(len, 32) + 32,
/// 64)` bytes after a tensor's start. A kernel
/// reading the usual whole 32-byte block at a tensor's tail stays inside
/// that span on the chip and reads nothing of another tensor; a write
/// there only touches the same allocation's padding, which nothing reads
/// back. Accesses inside the span are allowed (and noted); past it, where
/// the next tensor would start and a write would corrupt it, they fault,
/// except a DMA read that starts inside the span: the chip's DMA reads on,
/// and here the bytes past the span read as [`GM_POISON`]
/// ([`GmSpace::resolve_read`], `runtime/gm_read.rs`).
pub fn device_span(len: usize) -> usize {
    len.div_ceil(32)
        .saturating_mul(32)
        .saturating_add(32)
        .div_ceil(64)
        .saturating_mul(64)
}

/// The byte a DMA read gets for every byte past its allocation's device
/// span (see [`GmSpace::resolve_read`]). The chip's DMA does not bound-check
/// a read per allocation: it returns whatever memory follows, which may be
/// another tensor's. The simulator never hands out another tensor's bytes;
/// it gives this pattern instead: all-ones is a NaN in half, bfloat16 and
/// float and -1 in every signed integer type, so a result computed from
/// those bytes is wrong and fails the comparison, while a kernel that reads
/// a whole tile and uses only its own elements stays correct.
pub const GM_POISON: u8 = 0xFF;

/// One GM allocation.
pub struct GmAlloc {
    /// What it holds (`input x`, `workspace`, ...), for messages.
    pub name: String,
    backing: Backing,
    len: usize,
}

/// Where an allocation's bytes live.
enum Backing {
    /// A mapping of our own: [`GUARD`] inaccessible bytes, the allocation's
    /// device span rounded up to pages (readable and writable), then
    /// [`GUARD`] inaccessible bytes again; `map_len` bytes from `map`.
    Owned { map: *mut u8, map_len: usize },
    /// Memory the launch's caller owns (a tensor region shared with the
    /// parent process), valid for the whole launch.
    Borrowed { ptr: *mut u8 },
}

// SAFETY: a `Borrowed` allocation is plain memory that outlives the launch
// (see `GmSpace::adopt`); kernels on several block threads access GM through
// raw pointers either way, exactly as they do an `Owned` buffer.
unsafe impl Send for GmAlloc {}
// SAFETY: as above.
unsafe impl Sync for GmAlloc {}

impl Drop for GmAlloc {
    fn drop(&mut self) {
        if let Backing::Owned { map, map_len } = self.backing {
            // SAFETY: our own mapping; no slice of it outlives `self`.
            unsafe {
                libc::munmap(map.cast(), map_len);
            }
        }
    }
}

impl GmAlloc {
    /// A zeroed allocation of `len` bytes between two guards. Panics (as
    /// `vec!` would) when the address space is exhausted.
    fn new(name: String, len: usize) -> GmAlloc {
        let span = device_span(len).div_ceil(PAGE).max(1) * PAGE;
        let map_len = span
            .checked_add(2 * GUARD)
            .expect("GM allocation size overflows");
        // SAFETY: reserving fresh address space, no access yet.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        // SAFETY: opening the middle of our own reservation (page-aligned:
        // GUARD and the mapping are).
        let opened = map != libc::MAP_FAILED
            && unsafe {
                libc::mprotect(
                    map.cast::<u8>().add(GUARD).cast(),
                    span,
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            } == 0;
        if !opened {
            if map != libc::MAP_FAILED {
                // SAFETY: our own reservation.
                unsafe { libc::munmap(map, map_len) };
            }
            std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(map_len, PAGE)
                    .unwrap_or(std::alloc::Layout::new::<u8>()),
            );
        }
        GmAlloc {
            name,
            backing: Backing::Owned {
                map: map.cast(),
                map_len,
            },
            len,
        }
    }

    /// Address of the first byte.
    pub fn base(&self) -> usize {
        match &self.backing {
            Backing::Owned { map, .. } => *map as usize + GUARD,
            Backing::Borrowed { ptr } => *ptr as usize,
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-sized allocation.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Contents (only read when no kernel runs).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes at `base()` are readable: our own mapping's
        // open pages, or `adopt`'s contract.
        unsafe { std::slice::from_raw_parts(self.base() as *const u8, self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and we hold the allocation mutably.
        unsafe { std::slice::from_raw_parts_mut(self.base() as *mut u8, self.len) }
    }
}

/// All GM allocations of a launch, sorted by address.
#[derive(Default)]
pub struct GmSpace {
    allocs: Vec<GmAlloc>,
}

/// A resolved GM access: allocation index and offset inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GmRef {
    /// Allocation index (the trace's `Region::space`).
    pub space: u32,
    /// Byte offset inside the allocation.
    pub offset: u64,
    /// Host address of the first byte.
    pub ptr: usize,
    /// Bytes of the access past the tensor's end, inside the device
    /// allocator's padding ([`device_span`]); 0 for an access inside it.
    pub past_end: u64,
    /// Bytes of a read past the allocation's span (only
    /// [`GmSpace::resolve_read`] accepts them): they are no memory of the
    /// tensor's and read as [`GM_POISON`].
    pub past_span: u64,
}

impl GmRef {
    /// Bytes of the access that lie in the allocation's span (the part
    /// that reads or writes memory).
    pub fn in_span(&self, len: u64) -> u64 {
        len - self.past_span
    }
}

/// What a line of memory is to the kernel's own code
/// ([`GmSpace::classify_line`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineClass {
    /// GM: allocation `space`, `offset` bytes from its start.
    Gm {
        /// Allocation index.
        space: u32,
        /// Byte offset of the line inside the allocation.
        offset: u64,
    },
    /// The guard before or after allocation `space`: out of bounds.
    Guard {
        /// Allocation index.
        space: u32,
    },
    /// Anything else (the stack, local memories, statics).
    Other,
}

impl GmSpace {
    /// Adds an allocation holding `init` (padded with zeros to `len`).
    /// Returns its index.
    pub fn alloc(&mut self, name: &str, len: usize, init: &[u8]) -> u32 {
        let mut a = GmAlloc::new(name.to_string(), len);
        let n = init.len().min(len);
        a.bytes_mut()[..n].copy_from_slice(&init[..n]);
        self.allocs.push(a);
        (self.allocs.len() - 1) as u32
    }

    /// Adds an allocation over memory the caller owns (its contents are
    /// kept, not copied). Returns its index, or None when `memory` is not
    /// [`GM_ALIGN`]-aligned.
    ///
    /// # Safety
    /// `memory`, and the bytes after it up to [`device_span`] of its
    /// length, must stay valid, and untouched by anyone but the kernel
    /// through this space, for as long as this space lives. The [`GUARD`]
    /// bytes before `memory` and after that span should hold nothing the
    /// kernel may use (the worker's arena leaves them unmapped): an access
    /// of the kernel's own code there is reported as out of bounds.
    pub unsafe fn adopt(&mut self, name: &str, memory: &mut [u8]) -> Option<u32> {
        if !(memory.as_ptr() as usize).is_multiple_of(GM_ALIGN) {
            return None;
        }
        self.allocs.push(GmAlloc {
            name: name.to_string(),
            backing: Backing::Borrowed {
                ptr: memory.as_mut_ptr(),
            },
            len: memory.len(),
        });
        Some((self.allocs.len() - 1) as u32)
    }

    /// Fills allocation `idx` with `pattern` repeated.
    pub fn fill(&mut self, idx: u32, pattern: &[u8]) {
        if pattern.is_empty() {
            return;
        }
        if let Some(a) = self.allocs.get_mut(idx as usize) {
            for (i, b) in a.bytes_mut().iter_mut().enumerate() {
                *b = pattern[i % pattern.len()];
            }
        }
    }

    /// The allocations, by index.
    pub fn allocs(&self) -> &[GmAlloc] {
        &self.allocs
    }

    /// What the 64-byte line at `line` (a multiple of 64) is to a plain
    /// load or store of the kernel's own code: GM of an allocation (its
    /// device allocator's padding included: the span ends on a line
    /// boundary, as the allocation starts on one), a guard before or after
    /// one (out of bounds: see the module's invariant), or other memory.
    pub fn classify_line(&self, line: usize) -> LineClass {
        for (i, a) in self.allocs.iter().enumerate() {
            let base = a.base();
            if line >= base && line - base < device_span(a.len) {
                return LineClass::Gm {
                    space: i as u32,
                    offset: (line - base) as u64,
                };
            }
        }
        for (i, a) in self.allocs.iter().enumerate() {
            let base = a.base();
            let end = base.saturating_add(device_span(a.len));
            let before = line < base && base - line <= GUARD;
            let after = line >= end && line - end < GUARD;
            if before || after {
                return LineClass::Guard { space: i as u32 };
            }
        }
        LineClass::Other
    }

    /// The fault of a plain `len`-byte load or store (`store`) of the
    /// kernel's own code at `addr`, in the guard of allocation `space`.
    pub fn stray_fault(&self, space: u32, addr: usize, len: u64, store: bool) -> Fault {
        let operand = if store {
            "a plain C++ store"
        } else {
            "a plain C++ load"
        };
        let near = match self.allocs.get(space as usize) {
            None => String::new(),
            Some(a) if addr < a.base() => format!(
                "; it lies {} bytes before the start of `{}` ({} bytes)",
                a.base() - addr,
                a.name,
                a.len
            ),
            Some(a) => {
                let off = (addr - a.base()) as u64;
                let span = device_span(a.len) as u64;
                format!(
                    "; it is byte {off} of `{}` ({} bytes), past the {span} bytes the device \
                     allocator gives it",
                    a.name, a.len,
                )
            }
        };
        Fault::GmOutOfBounds {
            operand,
            addr: addr as u64,
            len,
            near,
        }
    }

    /// The bytes of allocation `a`'s span: its [`device_span`], cut short
    /// where another allocation begins.
    fn span_of(&self, a: &GmAlloc) -> usize {
        let base = a.base();
        self.allocs
            .iter()
            .map(|b| b.base())
            .filter(|&b| b > base)
            .map(|b| b - base)
            .fold(device_span(a.len), usize::min)
    }

    /// Resolves a write (or any access that is not a DMA read)
    /// `[addr, addr+len)`; it must lie inside one allocation, or inside it
    /// and the device allocator's padding after it ([`device_span`]),
    /// wherever in that span it starts. Past the span a write would
    /// corrupt whatever follows on the chip (another tensor): a fault.
    pub fn resolve(&self, operand: &'static str, addr: usize, len: u64) -> Result<GmRef, Fault> {
        self.resolve_as(operand, addr, len, false)
    }

    /// Resolves a DMA read (GM to a local memory) `[addr, addr+len)`: as
    /// [`GmSpace::resolve`], and besides a read that starts inside an
    /// allocation's span and runs past it is accepted, as the chip's DMA
    /// accepts it (it does not bound-check a read per allocation); the
    /// bytes past the span are counted in [`GmRef::past_span`] and read as
    /// [`GM_POISON`], never as another tensor's. A read that starts
    /// outside every allocation's span still faults.
    pub fn resolve_read(
        &self,
        operand: &'static str,
        addr: usize,
        len: u64,
    ) -> Result<GmRef, Fault> {
        self.resolve_as(operand, addr, len, true)
    }

    fn resolve_as(
        &self,
        operand: &'static str,
        addr: usize,
        len: u64,
        read: bool,
    ) -> Result<GmRef, Fault> {
        // An allocation holding the whole range wins (one may end exactly
        // where the next begins); then one whose padding holds it;
        // otherwise the one it starts in names the overrun.
        for (i, a) in self.allocs.iter().enumerate() {
            let base = a.base();
            if addr >= base && ((addr - base) as u64).saturating_add(len) <= a.len as u64 {
                return Ok(GmRef {
                    space: i as u32,
                    offset: (addr - base) as u64,
                    ptr: addr,
                    past_end: 0,
                    past_span: 0,
                });
            }
        }
        for (i, a) in self.allocs.iter().enumerate() {
            let base = a.base();
            let end = ((addr.wrapping_sub(base)) as u64).saturating_add(len);
            // The padding ends where another allocation begins, if sooner.
            let span = self.span_of(a);
            // The access may start anywhere in the span: a read or write
            // that begins in the padding (the element just past the end)
            // touches the same allocation's spare bytes as one that runs
            // into it, no other tensor's.
            if addr >= base && ((addr - base) as u64) < span as u64 && end <= span as u64 {
                return Ok(GmRef {
                    space: i as u32,
                    offset: (addr - base) as u64,
                    ptr: addr,
                    past_end: end - a.len as u64,
                    past_span: 0,
                });
            }
        }
        if read {
            for (i, a) in self.allocs.iter().enumerate() {
                let base = a.base();
                let span = self.span_of(a);
                if addr >= base && addr - base < span {
                    let offset = (addr - base) as u64;
                    return Ok(GmRef {
                        space: i as u32,
                        offset,
                        ptr: addr,
                        past_end: span as u64 - offset.max(a.len as u64),
                        past_span: offset.saturating_add(len) - span as u64,
                    });
                }
            }
        }
        for a in &self.allocs {
            let base = a.base();
            if addr >= base && addr - base < device_span(a.len) {
                let off = (addr - base) as u64;
                return Err(Fault::GmOutOfBounds {
                    operand,
                    addr: addr as u64,
                    len,
                    near: format!(
                        "; it starts at byte {} of `{}` ({} bytes) and runs {} bytes past its end \
                         (past the {} bytes the device allocator gives it)",
                        off,
                        a.name,
                        a.len,
                        off + len - a.len as u64,
                        device_span(a.len)
                    ),
                });
            }
        }
        let near = self
            .allocs
            .iter()
            .min_by_key(|a| (a.base() as i128 - addr as i128).unsigned_abs())
            .map(|a| {
                let d = addr as i128 - a.base() as i128;
                format!(
                    "; nearest is `{}` ({} bytes), offset {} bytes",
                    a.name, a.len, d
                )
            })
            .unwrap_or_default();
        Err(Fault::GmOutOfBounds {
            operand,
            addr: addr as u64,
            len,
            near,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_allocations_resolve_to_the_one_holding_the_range() {
        // Two adopted regions, the second starting where the first ends.
        let mut memory = vec![0u8; 3 * GM_ALIGN];
        let start = memory.as_ptr() as usize;
        let skip = (GM_ALIGN - start % GM_ALIGN) % GM_ALIGN;
        let (first, second) = memory[skip..skip + 2 * GM_ALIGN].split_at_mut(GM_ALIGN);
        let mut gm = GmSpace::default();
        // SAFETY: `memory` outlives `gm`, and nothing else touches it.
        let (a, b) = unsafe {
            (
                gm.adopt("input 0", first).unwrap(),
                gm.adopt("output 0", second).unwrap(),
            )
        };
        let base = gm.allocs()[a as usize].base();
        assert_eq!(gm.allocs()[b as usize].base(), base + GM_ALIGN);
        // The first region's end is the second's start.
        let r = gm.resolve("dst", base + GM_ALIGN, 32).unwrap();
        assert_eq!((r.space, r.offset), (b, 0));
        let r = gm.resolve("src", base + GM_ALIGN - 32, 32).unwrap();
        assert_eq!((r.space, r.offset), (a, GM_ALIGN as u64 - 32));
        // A range across the boundary belongs to neither.
        let err = gm.resolve("src", base + GM_ALIGN - 32, 96).unwrap_err();
        assert!(
            err.to_string().contains("runs 64 bytes past its end"),
            "{err}"
        );
        // Misaligned memory is not adopted.
        let mut other = vec![0u8; 2 * GM_ALIGN];
        let odd = (GM_ALIGN - other.as_ptr() as usize % GM_ALIGN) % GM_ALIGN + 1;
        // SAFETY: as above.
        assert!(unsafe { gm.adopt("x", &mut other[odd..odd + 8]) }.is_none());
    }

    #[test]
    fn the_device_allocators_padding_is_reachable_and_nothing_after_it() {
        // 3003 fp16 elements: 6006 bytes, padded to 6016 + 32 = 6048; the
        // next allocation starts 64-byte aligned, at 6080.
        assert_eq!(device_span(6006), 6080);
        assert_eq!(device_span(0), 64);
        assert_eq!(device_span(64), 128);
        assert_eq!(device_span(800), 832);
        let mut gm = GmSpace::default();
        let idx = gm.alloc("input 0", 6006, &[7u8; 6006]);
        let base = gm.allocs()[idx as usize].base();
        // The whole 32-byte block at the tail: inside the padding.
        let r = gm.resolve("src", base + 5984, 32).unwrap();
        assert_eq!((r.offset, r.past_end), (5984, 10));
        // Up to the padding's end.
        let r = gm.resolve("src", base + 5990, 90).unwrap();
        assert_eq!(r.past_end, 74);
        // One byte further faults, naming the span.
        let err = gm.resolve("src", base + 5990, 91).unwrap_err().to_string();
        assert!(
            err.contains("6080 bytes the device allocator gives it"),
            "{err}"
        );
        // Starting in the padding (the element just past the end) is
        // still inside the span: nothing of another tensor is touched.
        let r = gm.resolve("src", base + 6006, 4).unwrap();
        assert_eq!((r.offset, r.past_end), (6006, 4));
        let r = gm.resolve("dst", base + 6076, 4).unwrap();
        assert_eq!(r.past_end, 74);
        // Starting in the padding and running past it faults.
        let err = gm.resolve("src", base + 6076, 8).unwrap_err().to_string();
        assert!(
            err.contains("6080 bytes the device allocator gives it"),
            "{err}"
        );
        // An access inside the tensor has nothing past its end.
        assert_eq!(gm.resolve("src", base, 6006).unwrap().past_end, 0);
    }

    #[test]
    fn a_read_may_run_past_the_span_a_write_may_not() {
        // 3 floats: 12 bytes, span 64.
        let mut gm = GmSpace::default();
        let idx = gm.alloc("input 0", 12, &[1u8; 12]);
        let base = gm.allocs()[idx as usize].base();
        // A 4 KB read from byte 0: 64 bytes in the span, the rest past it.
        let r = gm.resolve_read("src", base, 4096).unwrap();
        assert_eq!((r.space, r.offset), (idx, 0));
        assert_eq!((r.past_end, r.past_span, r.in_span(4096)), (52, 4032, 64));
        // Starting in the padding and running past it.
        let r = gm.resolve_read("src", base + 40, 100).unwrap();
        assert_eq!((r.past_end, r.past_span, r.in_span(100)), (24, 76, 24));
        // A read inside the span is as before.
        let r = gm.resolve_read("src", base, 64).unwrap();
        assert_eq!((r.past_end, r.past_span), (52, 0));
        // The same accesses as writes fault.
        for (at, len) in [(0, 4096), (40, 100)] {
            let err = gm.resolve("dst", base + at, len).unwrap_err().to_string();
            assert!(
                err.contains("64 bytes the device allocator gives it"),
                "{err}"
            );
        }
        // A read starting past the span (or before the tensor) faults.
        for at in [base + 64, base - 4] {
            let err = gm.resolve_read("src", at, 4).unwrap_err().to_string();
            assert!(err.contains("nearest is `input 0`"), "{err}");
        }
    }

    #[test]
    fn a_read_past_the_span_stops_where_the_next_allocation_starts() {
        // Two adopted regions, the second starting where the first ends
        // (its device span, 576 bytes, is cut at 512): a 1 KB read from the
        // first's byte 256 reads 256 bytes of it; the rest, the second's
        // bytes included, is past its span (poison, never the neighbour's).
        let mut memory = vec![0u8; 3 * GM_ALIGN];
        let start = memory.as_ptr() as usize;
        let skip = (GM_ALIGN - start % GM_ALIGN) % GM_ALIGN;
        let (first, second) = memory[skip..skip + 2 * GM_ALIGN].split_at_mut(GM_ALIGN);
        let mut gm = GmSpace::default();
        // SAFETY: `memory` outlives `gm`, and nothing else touches it.
        unsafe {
            gm.adopt("input 0", first).unwrap();
            gm.adopt("input 1", second).unwrap();
        }
        let base = gm.allocs()[0].base();
        let r = gm.resolve_read("src", base + 256, 1024).unwrap();
        assert_eq!((r.space, r.offset), (0, 256));
        assert_eq!((r.in_span(1024), r.past_span, r.past_end), (256, 768, 0));
    }

    #[test]
    fn lines_in_the_guard_around_an_allocation_are_out_of_bounds() {
        let mut gm = GmSpace::default();
        let idx = gm.alloc("output 0", 6006, &[]);
        let base = gm.allocs()[idx as usize].base();
        // The padding is the allocation's: [6006, 6080) ends on a line.
        assert_eq!(
            gm.classify_line(base + 6016),
            LineClass::Gm {
                space: idx,
                offset: 6016
            }
        );
        // The line after the span, the last line of the guard, the line
        // before the start: out of bounds.
        for line in [
            base + 6080,
            base + 6080 + GUARD - 64,
            base - 64,
            base - GUARD,
        ] {
            assert_eq!(gm.classify_line(line), LineClass::Guard { space: idx });
        }
        // Past the guard: other memory.
        assert_eq!(gm.classify_line(base + 6080 + GUARD), LineClass::Other);
        let fault = gm.stray_fault(idx, base + 6144, 2, true).to_string();
        assert!(
            fault.contains("a plain C++ store")
                && fault.contains("byte 6144 of `output 0` (6006 bytes), past the 6080 bytes"),
            "{fault}"
        );
        let fault = gm.stray_fault(idx, base - 4, 4, false).to_string();
        assert!(
            fault.contains("4 bytes before the start of `output 0`"),
            "{fault}"
        );
        // The allocation's own bytes start zeroed, as before.
        assert!(gm.allocs()[idx as usize].bytes().iter().all(|&b| b == 0));
    }
}
