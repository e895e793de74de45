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
    buf: Vec<u8>,
    offset: usize,
    len: usize,
}

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
            buf,
            offset,
            len,
        }
    }

    /// Address of the first byte.
    pub fn base(&self) -> usize {
        self.buf.as_ptr() as usize + self.offset
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
        &self.buf[self.offset..self.offset + self.len]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let (o, l) = (self.offset, self.len);
        &mut self.buf[o..o + l]
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
        for (i, a) in self.allocs.iter().enumerate() {
            let base = a.base();
            if addr >= base && addr <= base + a.len {
                let off = (addr - base) as u64;
                if off + len <= a.len as u64 {
                    return Ok(GmRef {
                        space: i as u32,
                        offset: off,
                        ptr: addr,
                    });
                }
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
