//! DataCopy and DataCopyPad: functional semantics, checks and the DMA trace
//! record (hardware-facts.md section B; guide 6.2.3.1, DataCopyPad page).
//!
//! - Count form: `count * size` bytes, rounded DOWN to a multiple of 32 B as
//!   the hardware does (the runtime notes it, since it is a classic bug).
//! - DataCopyParams: `blockCount` bursts of `blockLen` 32 B blocks; gaps are
//!   tail-to-head, in 32 B blocks, on both sides.
//! - DataCopyPad: `blockLen` in bytes; GM-side strides in bytes, UB-side in
//!   32 B blocks; GM->UB pads every burst up to 32 B in UB (left/right
//!   padding elements, then dummies: the burst's first element when no
//!   padding is asked, the padding value when isPad, else garbage); UB->GM
//!   drops the dummies.
//! - UB/L1 addresses must be 32 B aligned; GM addresses element-aligned.

use super::block::Block;
use super::fault::Fault;
use super::queue::dtype_size;
use crate::abi::{copy_kind, AscAddr, AscCopyOp};
use crate::trace::{DmaDir, InstrKind, Mem, Pipe, Region};

impl Block {
    /// InitGlobalMemory: `count` elements of GM from `dst` set to the
    /// value's bits, one MTE3 transfer from the UB (the library fills a UB
    /// buffer and copies it out, hence its rule that UB users wait for
    /// MTE3; hiascend API reference "InitGlobalMemory"). Types: uint16,
    /// int16, half, uint32, int32, float.
    fn gm_fill(&mut self, op: &AscCopyOp, loc: u32) -> Result<(), Fault> {
        let api = "InitGlobalMemory";
        let dtype =
            ascendopt_op::Dtype::from_abi_code(op.dtype).ok_or_else(|| Fault::InvalidArg {
                api,
                what: format!("element type code {}", op.dtype),
            })?;
        if !matches!(dtype.size(), 2 | 4) || dtype == ascendopt_op::Dtype::Bfloat16 {
            return Err(Fault::Unsupported {
                api,
                what: format!("{dtype} (uint16, int16, half, uint32, int32 or float on Atlas A2)"),
            });
        }
        if Mem::from_code(op.dst.mem) != Some(Mem::Gm) {
            return Err(Fault::InvalidArg {
                api,
                what: "the destination is not a GlobalTensor".into(),
            });
        }
        let size = dtype.size() as u64;
        let base = op.dst.gm as u64;
        if !base.is_multiple_of(size) {
            return Err(Fault::Unaligned {
                operand: "dst",
                mem: "GM",
                addr: base,
                align: size,
            });
        }
        let bytes = op.count.saturating_mul(size);
        let dma = |bytes: u64, gm_offset: u64| InstrKind::Dma {
            dir: DmaDir::UbToGm,
            bytes,
            bursts: u32::from(bytes > 0),
            burst_bytes: bytes,
            gm_offset,
            gm_strided: false,
            atomic: false,
        };
        if bytes == 0 {
            return self.record(Pipe::Mte3, dma(0, 0), vec![], vec![], loc);
        }
        let region = self.region("dst", Mem::Gm, (base, base + bytes))?;
        let value = op.pad_bits.to_le_bytes();
        let fill: Vec<u8> = value[..size as usize]
            .iter()
            .copied()
            .cycle()
            .take(bytes as usize)
            .collect();
        self.write_bytes(Mem::Gm, base, &fill, None)?;
        self.record(
            Pipe::Mte3,
            dma(bytes, region.start),
            vec![],
            vec![region],
            loc,
        )
    }
}

/// One contiguous burst: byte offsets on each side (GM sides are host
/// addresses, local sides byte addresses) and payload length.
#[derive(Debug, Clone, Copy)]
struct Burst {
    src: u64,
    dst: u64,
    len: u64,
    /// Bytes the burst occupies on the destination (payload + padding).
    dst_footprint: u64,
    /// Bytes the burst occupies on the source.
    src_footprint: u64,
}

fn align32(x: u64) -> u64 {
    x.div_ceil(32) * 32
}

fn mem_of(a: &AscAddr) -> Result<Mem, Fault> {
    Mem::from_code(a.mem).ok_or_else(|| Fault::InvalidArg {
        api: "DataCopy",
        what: format!("unknown memory code {}", a.mem),
    })
}

fn direction(src: Mem, dst: Mem) -> Result<(DmaDir, Pipe), Fault> {
    Ok(match (src, dst) {
        (Mem::Gm, Mem::Ub) => (DmaDir::GmToUb, Pipe::Mte2),
        (Mem::Ub, Mem::Gm) => (DmaDir::UbToGm, Pipe::Mte3),
        (Mem::Ub, Mem::Ub) => (DmaDir::UbToUb, Pipe::V),
        (Mem::Gm, Mem::L1) => (DmaDir::GmToL1, Pipe::Mte2),
        (Mem::Ub, Mem::L1) => (DmaDir::UbToL1, Pipe::Mte3),
        // C1 -> C2: a bias row from L1 into the bias table (guide
        // 6.2.3.1.1.2, MTE1).
        (Mem::L1, Mem::Bt) => (DmaDir::L1ToL0, Pipe::Mte1),
        (s, d) => {
            return Err(Fault::Unsupported {
                api: "DataCopy",
                what: format!("copies from {} to {}", s.name(), d.name()),
            })
        }
    })
}

impl Block {
    /// A copy of zero blocks or of zero-length blocks moves nothing. The
    /// guide's ranges start at 1 (blockCount 1..=4095, blockLen 1..) and say
    /// nothing of 0; kernels reach it on an empty tail (a core or tile with
    /// no elements left), so it is taken as the empty copy it describes,
    /// with a note, rather than failed: the simulator is not to be stricter
    /// than the device, and no data can be wrong by it.
    fn note_empty_copy(&self, api: &'static str, count: u32, len: u32, unit: &str) {
        self.shared.note(
            "empty-copy",
            format!(
                "{api} with blockCount = {count} and blockLen = {len} {unit} copies nothing \
                 (the guide's ranges start at 1; taken as an empty copy)"
            ),
        );
    }

    /// Executes one DataCopy / DataCopyPad (or InitGlobalMemory).
    pub fn copy(&mut self, op: &AscCopyOp, loc: u32) -> Result<(), Fault> {
        if op.kind == copy_kind::GM_FILL {
            return self.gm_fill(op, loc);
        }
        let size = dtype_size(op.dtype)? as u64;
        let src_mem = mem_of(&op.src)?;
        let dst_mem = mem_of(&op.dst)?;
        let (dir, pipe) = direction(src_mem, dst_mem)?;
        let api: &'static str = if op.kind == copy_kind::PAD {
            "DataCopyPad"
        } else {
            "DataCopy"
        };
        let src_base = if src_mem == Mem::Gm {
            op.src.gm as u64
        } else {
            op.src.addr as u64
        };
        let dst_base = if dst_mem == Mem::Gm {
            op.dst.gm as u64
        } else {
            op.dst.addr as u64
        };

        let mut bursts = Vec::new();
        let mut pad_kind = PadKind::None;
        match op.kind {
            copy_kind::COUNT => {
                let total = op.count * size;
                let rounded = total / 32 * 32;
                if rounded != total {
                    self.shared.note(
                        "datacopy-rounding",
                        format!(
                            "DataCopy of {} elements = {} bytes is not a multiple of 32 bytes: the hardware copies only {} bytes (use DataCopyPad for unaligned lengths)",
                            op.count, total, rounded
                        ),
                    );
                }
                if rounded > 0 {
                    bursts.push(Burst {
                        src: src_base,
                        dst: dst_base,
                        len: rounded,
                        dst_footprint: rounded,
                        src_footprint: rounded,
                    });
                }
            }
            copy_kind::PARAMS if op.block_count == 0 || op.block_len == 0 => {
                self.note_empty_copy(api, op.block_count, op.block_len, "blocks of 32 B");
            }
            copy_kind::PARAMS => {
                if op.block_count > 4095 {
                    return Err(Fault::InvalidArg {
                        api,
                        what: format!(
                            "blockCount = {} (1..=4095) and blockLen = {} (1..=65535 blocks of 32 B)",
                            op.block_count, op.block_len
                        ),
                    });
                }
                let len = op.block_len as u64 * 32;
                let s_stride = (op.block_len as u64 + op.src_gap as u64) * 32;
                let d_stride = (op.block_len as u64 + op.dst_gap as u64) * 32;
                for i in 0..op.block_count as u64 {
                    bursts.push(Burst {
                        src: src_base + i * s_stride,
                        dst: dst_base + i * d_stride,
                        len,
                        dst_footprint: len,
                        src_footprint: len,
                    });
                }
            }
            copy_kind::PAD if op.block_count == 0 || op.block_len == 0 => {
                self.note_empty_copy(api, op.block_count, op.block_len, "bytes");
            }
            copy_kind::PAD => {
                if op.block_count > 4095 || op.block_len > 2_097_151 {
                    return Err(Fault::InvalidArg {
                        api,
                        what: format!(
                            "blockCount = {} (1..=4095) and blockLen = {} bytes (1..=2097151)",
                            op.block_count, op.block_len
                        ),
                    });
                }
                let len = op.block_len as u64;
                if !len.is_multiple_of(size) {
                    return Err(Fault::InvalidArg {
                        api,
                        what: format!(
                            "blockLen = {len} bytes is not a whole number of {size}-byte elements"
                        ),
                    });
                }
                match (src_mem, dst_mem) {
                    (Mem::Gm, Mem::Ub) => {
                        let left = op.left_pad as u64 * size;
                        let right = op.right_pad as u64 * size;
                        if left > 32 || right > 32 {
                            return Err(Fault::InvalidArg {
                                api,
                                what: format!(
                                    "leftPadding = {} and rightPadding = {} elements: each side must be at most 32 bytes",
                                    op.left_pad, op.right_pad
                                ),
                            });
                        }
                        let footprint = align32(left + len + right);
                        for i in 0..op.block_count as u64 {
                            bursts.push(Burst {
                                src: src_base + i * (len + op.src_gap as u64),
                                dst: dst_base + i * (footprint + op.dst_gap as u64 * 32),
                                len,
                                dst_footprint: footprint,
                                src_footprint: len,
                            });
                        }
                        pad_kind = if op.left_pad == 0 && op.right_pad == 0 {
                            PadKind::FirstElement
                        } else if op.is_pad != 0 {
                            PadKind::Value
                        } else {
                            PadKind::Garbage
                        };
                    }
                    (Mem::Ub, Mem::Gm) => {
                        let footprint = align32(len);
                        for i in 0..op.block_count as u64 {
                            bursts.push(Burst {
                                src: src_base + i * (footprint + op.src_gap as u64 * 32),
                                dst: dst_base + i * (len + op.dst_gap as u64),
                                len,
                                dst_footprint: len,
                                src_footprint: footprint,
                            });
                        }
                    }
                    (s, d) => {
                        return Err(Fault::Unsupported {
                            api,
                            what: format!(
                                "copies from {} to {} (only GM<->UB)",
                                s.name(),
                                d.name()
                            ),
                        })
                    }
                }
            }
            k => {
                return Err(Fault::InvalidArg {
                    api,
                    what: format!("unknown copy kind {k}"),
                })
            }
        }

        // Alignment.
        for (operand, mem, base) in [("src", src_mem, src_base), ("dst", dst_mem, dst_base)] {
            if mem == Mem::Gm {
                if !base.is_multiple_of(size) {
                    return Err(Fault::Unaligned {
                        operand,
                        mem: "GM",
                        addr: base,
                        align: size,
                    });
                }
            } else if base % 32 != 0 {
                return Err(Fault::Unaligned {
                    operand,
                    mem: mem.name(),
                    addr: base,
                    align: 32,
                });
            }
        }
        let Some(first) = bursts.first().copied() else {
            return self.record(
                pipe,
                InstrKind::Dma {
                    dir,
                    bytes: 0,
                    bursts: 0,
                    burst_bytes: 0,
                    gm_offset: 0,
                    gm_strided: false,
                    atomic: false,
                },
                vec![],
                vec![],
                loc,
            );
        };
        let last = bursts[bursts.len() - 1];
        let src_span = (first.src, last.src + last.src_footprint);
        let dst_span = (first.dst, last.dst + last.dst_footprint);
        let src_region = self.source_region("src", src_mem, src_span, loc)?;
        let dst_region = self.region("dst", dst_mem, dst_span)?;

        // Move the bytes.
        let atomic = if dst_mem == Mem::Gm {
            self.atomic
        } else {
            None
        };
        let pad_bytes = op.pad_bits.to_le_bytes();
        for b in &bursts {
            let mut data = vec![0u8; b.len as usize];
            self.read_source(&src_region, b.src, &mut data);
            if b.dst_footprint > b.len {
                // GM -> UB with padding: [left][data][right][dummy].
                let left = op.left_pad as u64 * size;
                let mut out = vec![0u8; b.dst_footprint as usize];
                match pad_kind {
                    PadKind::FirstElement => {
                        for chunk in out.chunks_mut(size as usize) {
                            chunk.copy_from_slice(&data[..size as usize]);
                        }
                    }
                    PadKind::Value => {
                        for chunk in out.chunks_mut(size as usize) {
                            chunk.copy_from_slice(&pad_bytes[..size as usize]);
                        }
                    }
                    PadKind::Garbage | PadKind::None => self.garbage(&mut out),
                }
                out[left as usize..(left + b.len) as usize].copy_from_slice(&data);
                self.write_bytes(dst_mem, b.dst, &out, None)?;
            } else {
                self.write_bytes(dst_mem, b.dst, &data, atomic)?;
            }
        }

        let payload: u64 = bursts.iter().map(|b| b.len).sum();
        let (gm_offset, gm_strided) = if src_mem == Mem::Gm {
            (
                src_region.start,
                bursts.len() > 1 && bursts.windows(2).any(|w| w[1].src != w[0].src + w[0].len),
            )
        } else if dst_mem == Mem::Gm {
            (
                dst_region.start,
                bursts.len() > 1 && bursts.windows(2).any(|w| w[1].dst != w[0].dst + w[0].len),
            )
        } else {
            (0, false)
        };
        self.record(
            pipe,
            InstrKind::Dma {
                dir,
                bytes: payload,
                bursts: bursts.len() as u32,
                burst_bytes: first.len,
                gm_offset,
                gm_strided,
                atomic: atomic.is_some(),
            },
            vec![src_region],
            vec![dst_region],
            loc,
        )
    }

    /// Checks a byte span `[start, end)` and turns it into a trace region.
    pub fn region(
        &mut self,
        operand: &'static str,
        mem: Mem,
        span: (u64, u64),
    ) -> Result<Region, Fault> {
        let (start, end) = span;
        if mem == Mem::Gm {
            let r = self
                .shared
                .gm
                .resolve(operand, start as usize, end - start)?;
            if r.past_end > 0 {
                let name = self
                    .shared
                    .gm
                    .allocs()
                    .get(r.space as usize)
                    .map(|a| a.name.clone())
                    .unwrap_or_default();
                self.shared.note(
                    "gm-padding",
                    format!(
                        "{operand} of a GM access runs {} byte(s) past the end of `{name}` into \
                         the padding the device allocator adds (aclrtMalloc: size rounded up to \
                         32 bytes, plus 32): allowed, it touches no other tensor and only the \
                         tensor's own bytes are compared",
                        r.past_end
                    ),
                );
            }
            return Ok(Region {
                mem,
                space: r.space,
                start: r.offset,
                len: end - start,
            });
        }
        let cap = self.shared.mem_sizes[mem as usize];
        if end > cap {
            return Err(Fault::LocalOutOfRange {
                operand,
                mem: mem.name(),
                start,
                end,
                cap,
            });
        }
        Ok(Region {
            mem,
            space: 0,
            start,
            len: end - start,
        })
    }

    /// Reads bytes from a memory (bounds already checked).
    pub fn read_bytes(&mut self, mem: Mem, at: u64, out: &mut [u8]) {
        if mem == Mem::Gm {
            // SAFETY: `at..at+len` was resolved inside a live GM allocation.
            unsafe {
                std::ptr::copy_nonoverlapping(at as usize as *const u8, out.as_mut_ptr(), out.len())
            };
        } else {
            let m = self.mem(mem);
            out.copy_from_slice(&m[at as usize..at as usize + out.len()]);
        }
    }

    /// Writes bytes to a memory (bounds already checked), accumulating when
    /// a GM atomic mode is on.
    pub fn write_bytes(
        &mut self,
        mem: Mem,
        at: u64,
        data: &[u8],
        atomic: Option<(u32, u8)>,
    ) -> Result<(), Fault> {
        if mem != Mem::Gm {
            let m = self.mem(mem);
            m[at as usize..at as usize + data.len()].copy_from_slice(data);
            return Ok(());
        }
        match atomic {
            None => {
                // SAFETY: resolved inside a live GM allocation.
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr(), at as usize as *mut u8, data.len())
                };
                Ok(())
            }
            Some((kind, dtype)) => {
                let shared = self.shared.clone();
                let _guard = shared.atomic_lock.lock().map_err(|_| Fault::InvalidArg {
                    api: "SetAtomicAdd",
                    what: "atomic lock poisoned".into(),
                })?;
                let mut old = vec![0u8; data.len()];
                // SAFETY: resolved inside a live GM allocation.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        at as usize as *const u8,
                        old.as_mut_ptr(),
                        old.len(),
                    )
                };
                let merged = super::atomic::merge(kind, dtype, &old, data).map_err(|e| {
                    Fault::Unsupported {
                        api: "SetAtomicAdd/Max/Min",
                        what: e.to_string(),
                    }
                })?;
                // SAFETY: as above.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        merged.as_ptr(),
                        at as usize as *mut u8,
                        merged.len(),
                    )
                };
                Ok(())
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PadKind {
    None,
    FirstElement,
    Value,
    Garbage,
}
