//! Global memory of one launch: the allocations the runtime made (inputs,
//! outputs, workspace, tiling data), each 512-byte aligned, and the lookup
//! that bounds-checks every GM access a kernel makes.

use super::fault::Fault;

/// Alignment of every GM allocation (the 512 B request size of the DMA,
/// hardware-facts.md section F "GM behaviour").
pub const GM_ALIGN: usize = 512;

/// One GM allocation.
pub struct GmAlloc {
    /// What it holds (`input x`, `workspace`, ...), for messages.
    pub name: String,
    backing: Backing,
    len: usize,
}

/// Where an allocation's bytes live.
enum Backing {
    /// A buffer of our own (`len + GM_ALIGN` bytes; the allocation starts
    /// at `offset`, the first aligned byte).
    Owned { buf: Vec<u8>, offset: usize },
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

impl GmAlloc {
    fn new(name: String, len: usize) -> GmAlloc {
        let buf = vec![0u8; len + GM_ALIGN];
        let misalign = buf.as_ptr() as usize % GM_ALIGN;
        let offset = if misalign == 0 {
            0
        } else {
            GM_ALIGN - misalign
        };
        GmAlloc {
            name,
            backing: Backing::Owned { buf, offset },
            len,
        }
    }

    /// Address of the first byte.
    pub fn base(&self) -> usize {
        match &self.backing {
            Backing::Owned { buf, offset } => buf.as_ptr() as usize + offset,
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
        match &self.backing {
            Backing::Owned { buf, offset } => &buf[*offset..*offset + self.len],
            // SAFETY: `adopt`'s contract: `len` bytes at `ptr`, alive.
            Backing::Borrowed { ptr } => unsafe { std::slice::from_raw_parts(*ptr, self.len) },
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        match &mut self.backing {
            Backing::Owned { buf, offset } => &mut buf[*offset..*offset + len],
            // SAFETY: as in `bytes`, and we hold the allocation mutably.
            Backing::Borrowed { ptr } => unsafe { std::slice::from_raw_parts_mut(*ptr, len) },
        }
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
    /// `memory` must stay valid, and untouched by anyone but the kernel
    /// through this space, for as long as this space lives.
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

    /// Resolves `[addr, addr+len)`; it must lie inside one allocation.
    pub fn resolve(&self, operand: &'static str, addr: usize, len: u64) -> Result<GmRef, Fault> {
        // An allocation holding the whole range wins (one may end exactly
        // where the next begins); otherwise the one it starts in names the
        // overrun.
        for (i, a) in self.allocs.iter().enumerate() {
            let base = a.base();
            if addr >= base && ((addr - base) as u64).saturating_add(len) <= a.len as u64 {
                return Ok(GmRef {
                    space: i as u32,
                    offset: (addr - base) as u64,
                    ptr: addr,
                });
            }
        }
        for a in &self.allocs {
            let base = a.base();
            if addr >= base && addr <= base + a.len {
                let off = (addr - base) as u64;
                return Err(Fault::GmOutOfBounds {
                    operand,
                    addr: addr as u64,
                    len,
                    near: format!(
                        "; it starts at byte {} of `{}` ({} bytes) and runs {} bytes past its end",
                        off,
                        a.name,
                        a.len,
                        off + len - a.len as u64
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
        let err = gm.resolve("src", base + GM_ALIGN - 32, 64).unwrap_err();
        assert!(
            err.to_string().contains("runs 32 bytes past its end"),
            "{err}"
        );
        // Misaligned memory is not adopted.
        let mut other = vec![0u8; 2 * GM_ALIGN];
        let odd = (GM_ALIGN - other.as_ptr() as usize % GM_ALIGN) % GM_ALIGN + 1;
        // SAFETY: as above.
        assert!(unsafe { gm.adopt("x", &mut other[odd..odd + 8]) }.is_none());
    }
}
