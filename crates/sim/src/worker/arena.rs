//! The tensor arena: one sealed memfd holding every input and output of a
//! launch, mapped by the parent and by the worker, so that tensor contents
//! do not travel through pipes (each pipe transfer cost two copies and
//! fresh pages on both sides; a 20 M-element case moved ~0.5 GB per launch).
//!
//! Invariants:
//! - region `i` (inputs first, then outputs) starts at a page-aligned
//!   offset (so it is `GM_ALIGN`-aligned in both mappings) and is followed
//!   by at least one page of no region, so no two regions touch, not even
//!   empty ones, and a kernel's access just past a tensor's end lies in no
//!   GM allocation (a fault, as with separately allocated tensors);
//! - the file's size is sealed (`F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`)
//!   before the worker sees it: whatever the kernel does, the parent's
//!   mapping stays backed and reading it cannot fault;
//! - the parent reads output regions only after the worker is gone;
//! - in the worker, the regions are mapped apart: each is followed by
//!   unmapped address space at least as long as itself (and 1 MiB), so a
//!   kernel that reads or writes past a tensor, even by a whole tile, lands
//!   in no GM allocation (a fault that names the tensor; an API read that
//!   starts in the tensor's span gets poison for the rest, never memory
//!   past the span: `runtime/gm_read.rs`) rather than in the next tensor;
//!   the device allocator's padding after a tensor
//!   (`runtime::gm::device_span`) is mapped, as on the chip;
//! - the rest of the last mapped page after that padding (the slack) holds
//!   a canary the parent writes before each launch ([`Arena::arm`]) and
//!   reads after it ([`Arena::damage`]): a write there, which the kernel's
//!   instrumented code cannot make (its hooks fault first) but a store no
//!   hook sees could, is a write past the tensor's allocation.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Env var naming the arena's fd in the worker.
pub(crate) const ARENA_FD_ENV: &str = "ASCENDOPT_WORKER_TENSOR_FD";

const PAGE: usize = 4096;

/// The least unmapped space after a region in the worker.
const MIN_GAP: usize = 1 << 20;

/// The byte offsets of the regions of tensors of `lens` bytes, and the
/// arena's total size.
pub(crate) fn layout(lens: &[usize]) -> Option<(Vec<usize>, usize)> {
    let mut offsets = Vec::with_capacity(lens.len());
    let mut at = 0usize;
    for &len in lens {
        offsets.push(at);
        let span = len.checked_add(2 * PAGE - 1)? / PAGE * PAGE;
        at = at.checked_add(span)?;
    }
    Some((offsets, at.max(PAGE)))
}

/// A mapped arena.
pub(crate) struct Arena {
    fd: OwnedFd,
    /// Start and length of our address range (the whole file in the
    /// parent; regions and the gaps between them in the worker).
    ptr: *mut u8,
    map_len: usize,
    /// The file's size.
    size: usize,
    /// Region offsets in the file.
    offsets: Vec<usize>,
    /// Region offsets in our address range.
    addrs: Vec<usize>,
    lens: Vec<usize>,
}

impl Arena {
    /// Creates a sealed arena for tensors of `lens` bytes (parent side).
    pub(crate) fn create(lens: &[usize]) -> io::Result<Arena> {
        let (offsets, size) = layout(lens).ok_or_else(too_large)?;
        // SAFETY: plain syscalls; the name is a NUL-terminated literal.
        let fd = unsafe {
            let fd = libc::memfd_create(
                c"ascendopt-tensors".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            );
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            OwnedFd::from_raw_fd(fd)
        };
        let raw = fd.as_raw_fd();
        let size_t = libc::off_t::try_from(size).map_err(|_| too_large())?;
        // SAFETY: plain syscalls on our own fd.
        unsafe {
            if libc::ftruncate(raw, size_t) != 0 {
                return Err(io::Error::last_os_error());
            }
            let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
            if libc::fcntl(raw, libc::F_ADD_SEALS, seals) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        // Populated at once: the parent writes every region next (one call
        // instead of a page fault per 4 KiB page).
        // SAFETY: a fresh shared mapping of a file of exactly `size` bytes
        // whose size cannot change (sealed).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                raw,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Arena {
            fd,
            ptr: ptr.cast(),
            map_len: size,
            size,
            addrs: offsets.clone(),
            offsets,
            lens: lens.to_vec(),
        })
    }

    /// Maps the arena at `fd` that the parent made for tensors of `lens`
    /// bytes (worker side). Refuses a file of another size or one whose
    /// size is not sealed.
    pub(crate) fn open(fd: RawFd, lens: &[usize]) -> io::Result<Arena> {
        let (offsets, size) = layout(lens).ok_or_else(too_large)?;
        // SAFETY: the fd was handed to us for this purpose; from here on it
        // is ours (closed with the arena).
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        // SAFETY: fstat/fcntl on an fd we own, into a local.
        let (actual, seals) = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(raw, &mut st) != 0 {
                return Err(io::Error::last_os_error());
            }
            (st.st_size, libc::fcntl(raw, libc::F_GET_SEALS))
        };
        if usize::try_from(actual).ok() != Some(size) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the tensor arena has {actual} bytes, the job needs {size}"),
            ));
        }
        let needed = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW;
        if seals < 0 || seals & needed != needed {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the tensor arena's size is not sealed",
            ));
        }
        Arena::map_apart(fd, size, offsets, lens.to_vec())
    }

    /// Maps each region on its own, populated, inside a reserved range that
    /// leaves unmapped space after each (see the module docs).
    fn map_apart(
        fd: OwnedFd,
        size: usize,
        offsets: Vec<usize>,
        lens: Vec<usize>,
    ) -> io::Result<Arena> {
        let spans: Vec<usize> = lens
            .iter()
            // The device allocator's padding after each tensor is mapped
            // too (`device_span`; `layout` keeps at least a page after
            // each region in the file).
            .map(|&l| crate::runtime::gm::device_span(l).div_ceil(PAGE).max(1) * PAGE)
            .collect();
        let gap = |span: usize| span.max(MIN_GAP);
        let map_len = spans
            .iter()
            .try_fold(MIN_GAP, |acc: usize, &s| {
                acc.checked_add(s)?.checked_add(gap(s))
            })
            .ok_or_else(too_large)?;
        // SAFETY: reserving fresh address space, no access.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut arena = Arena {
            fd,
            ptr: base.cast(),
            map_len,
            size,
            offsets,
            addrs: Vec::with_capacity(spans.len()),
            lens,
        };
        let mut at = MIN_GAP;
        for (i, &span) in spans.iter().enumerate() {
            let offset = libc::off_t::try_from(arena.offsets[i]).map_err(|_| too_large())?;
            // SAFETY: replaces part of our own reservation with pages of
            // the sealed file; `layout` keeps `span` bytes from the region's
            // offset inside the file.
            let ptr = unsafe {
                libc::mmap(
                    arena.ptr.add(at).cast(),
                    span,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_FIXED | libc::MAP_POPULATE,
                    arena.fd.as_raw_fd(),
                    offset,
                )
            };
            if ptr == libc::MAP_FAILED {
                // Dropping `arena` releases the reservation.
                return Err(io::Error::last_os_error());
            }
            arena.addrs.push(at);
            at += span + gap(span);
        }
        Ok(arena)
    }

    /// The slack of region `i`: bytes `[device_span, end of its last
    /// mapped page)` from the region's start (see the module docs).
    fn slack(&self, i: usize) -> std::ops::Range<usize> {
        let span = crate::runtime::gm::device_span(self.lens[i]);
        span..span.div_ceil(PAGE).max(1) * PAGE
    }

    /// Writes `canary` over every region's slack (parent side, before the
    /// launch).
    pub(crate) fn arm(&mut self, canary: u8) {
        for i in 0..self.count() {
            let slack = self.slack(i);
            // SAFETY: `layout` keeps at least one page more than the
            // region's device span in the file from its offset, inside
            // our mapping of the whole file.
            unsafe {
                std::ptr::write_bytes(
                    self.ptr.add(self.addrs[i] + slack.start),
                    canary,
                    slack.len(),
                );
            }
        }
    }

    /// The first region whose slack no longer holds `canary`: its index,
    /// the offset of the first changed byte from the region's start and
    /// the number of changed bytes (parent side, after the worker is gone).
    pub(crate) fn damage(&self, canary: u8) -> Option<(usize, usize, usize)> {
        (0..self.count()).find_map(|i| {
            let slack = self.slack(i);
            // SAFETY: as in `arm`.
            let bytes = unsafe {
                std::slice::from_raw_parts(self.ptr.add(self.addrs[i] + slack.start), slack.len())
            };
            let first = bytes.iter().position(|&b| b != canary)?;
            let changed = bytes.iter().filter(|&&b| b != canary).count();
            Some((i, slack.start + first, changed))
        })
    }

    /// The file's size in bytes.
    #[cfg(test)]
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Lays the regions out again for tensors of `lens` bytes, when their
    /// layout has this arena's size (a parent reusing its arena for another
    /// launch with the same sizes; the contents stay until overwritten).
    pub(crate) fn relayout(&mut self, lens: &[usize]) -> bool {
        match layout(lens) {
            // (Parent side: its mapping is the whole file.)
            Some((offsets, size)) if size == self.size && self.map_len == self.size => {
                self.addrs = offsets.clone();
                self.offsets = offsets;
                self.lens = lens.to_vec();
                true
            }
            _ => false,
        }
    }

    /// The fd (close-on-exec; the sandbox clears that for the worker).
    pub(crate) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Number of regions.
    pub(crate) fn count(&self) -> usize {
        self.lens.len()
    }

    /// Region `i`'s contents.
    pub(crate) fn region(&self, i: usize) -> &[u8] {
        // SAFETY: `layout` put `lens[i]` bytes at `offsets[i]`, inside the
        // mapping, which lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.add(self.addrs[i]), self.lens[i]) }
    }

    /// Region `i`'s contents, writable.
    pub(crate) fn region_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: as in `region`; `&mut self` makes it exclusive here.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(self.addrs[i]), self.lens[i]) }
    }

    /// Every region, writable at once (disjoint: see `layout`).
    pub(crate) fn regions_mut(&mut self) -> Vec<&mut [u8]> {
        let base = self.ptr;
        self.addrs
            .iter()
            .zip(&self.lens)
            // SAFETY: the regions are disjoint and inside the mapping, and
            // `&mut self` keeps anyone else from making others meanwhile.
            .map(|(&o, &l)| unsafe { std::slice::from_raw_parts_mut(base.add(o), l) })
            .collect()
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: unmaps our own mapping; no slice of it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.map_len);
        }
    }
}

fn too_large() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "the tensors do not fit in memory",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_page_aligned_and_apart() {
        let (offsets, size) = layout(&[10, 0, 4096, 4097, 0]).unwrap();
        assert_eq!(offsets, vec![0, 8192, 12288, 20480, 32768]);
        assert_eq!(size, 36864);
        assert_eq!(layout(&[]).unwrap(), (vec![], 4096));
        assert!(layout(&[usize::MAX]).is_none());
    }

    #[test]
    fn both_sides_see_the_same_bytes_and_the_size_is_sealed() {
        let mut parent = Arena::create(&[5, 0, 3]).unwrap();
        parent.region_mut(0).copy_from_slice(b"hello");
        parent.region_mut(2).copy_from_slice(b"abc");
        // The worker's side: a second mapping through a duplicate fd.
        // SAFETY: dup of our own fd.
        let dup = unsafe { libc::dup(parent.fd()) };
        assert!(dup >= 0);
        let mut worker = Arena::open(dup, &[5, 0, 3]).unwrap();
        assert_eq!(worker.region(0), b"hello");
        assert!(worker.region(1).is_empty());
        worker.regions_mut()[2].copy_from_slice(b"xyz");
        assert_eq!(parent.region(2), b"xyz");
        assert_eq!(parent.count(), 3);
        // Neither side can shrink or grow it.
        // SAFETY: syscalls on our own fds.
        unsafe {
            assert_ne!(libc::ftruncate(worker.fd(), 0), 0);
            assert_ne!(libc::ftruncate(parent.fd(), 1 << 20), 0);
        }
        // In the worker, each region is followed by at least its own
        // length (and 1 MiB) of address space holding no region.
        let starts: Vec<usize> = (0..3).map(|i| worker.region(i).as_ptr() as usize).collect();
        assert!(starts[1] >= starts[0] + 4096 + MIN_GAP, "{starts:x?}");
        assert!(starts[2] >= starts[1] + 4096 + MIN_GAP, "{starts:x?}");
        assert!(starts.iter().all(|a| a % 4096 == 0));
        // A job that announces other sizes is refused.
        // SAFETY: as above.
        let dup = unsafe { libc::dup(parent.fd()) };
        let err = Arena::open(dup, &[5, 0, 3, 1 << 20]).err().unwrap();
        assert!(err.to_string().contains("the job needs"), "{err}");
    }

    #[test]
    fn a_write_past_the_padding_is_seen_in_the_slack() {
        // 16000 bytes: padded to 16064, the page ends at 16384.
        let mut parent = Arena::create(&[16000, 10]).unwrap();
        parent.arm(0xC5);
        assert_eq!(parent.damage(0xC5), None);
        // SAFETY: dup of our own fd.
        let dup = unsafe { libc::dup(parent.fd()) };
        let worker = Arena::open(dup, &[16000, 10]).unwrap();
        let base = worker.region(0).as_ptr() as *mut u8;
        // SAFETY: inside the worker's mapping of region 0 (its last page).
        unsafe {
            *base.add(16063) = 1; // the padding: allowed
            *base.add(16064) = 1;
            *base.add(16100) = 1;
        }
        assert_eq!(parent.damage(0xC5), Some((0, 16064, 2)));
        parent.arm(0xC5);
        assert_eq!(parent.damage(0xC5), None);
    }

    #[test]
    fn an_arena_is_laid_out_again_only_for_its_own_size() {
        let mut arena = Arena::create(&[100, 5000]).unwrap();
        assert_eq!(arena.size(), 8192 + 12288);
        // [5000, 100] needs the same pages; [100, 100] fewer.
        assert!(arena.relayout(&[5000, 100]));
        assert_eq!(arena.region(0).len(), 5000);
        assert_eq!(arena.region(1).len(), 100);
        assert!(!arena.relayout(&[100, 100]));
        assert_eq!(arena.region(0).len(), 5000);
    }

    #[test]
    fn an_unsealed_file_is_refused() {
        // SAFETY: plain syscalls on a fresh fd.
        let fd = unsafe {
            let fd = libc::memfd_create(c"t".as_ptr(), libc::MFD_CLOEXEC);
            assert!(fd >= 0);
            assert_eq!(libc::ftruncate(fd, 8192), 0);
            fd
        };
        let err = Arena::open(fd, &[8]).err().unwrap();
        assert!(err.to_string().contains("not sealed"), "{err}");
    }
}
