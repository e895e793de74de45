//! TPipe buffers, TQue/TQueBind slots and TBuf, per block. Queue calls are
//! lowered to the flag instructions the hardware executes (hardware-facts.md
//! section A): EnQue sets and DeQue waits the slot's forward flag (producer
//! to consumer pipe); FreeTensor sets and AllocTensor waits its backward
//! flag. InitBuffer pre-sets the backward flag, so the first AllocTensor of
//! a slot records no wait.

use super::block::{Block, Buf, Queue, SlotState, Unbacked};
use super::fault::Fault;
use crate::abi::AscLocal;
use crate::trace::{FlagKey, InstrKind, Mem, Pipe, SyncOrigin};

/// AscendC TPosition codes (kernel/types.h).
#[allow(missing_docs)]
pub mod pos {
    pub const GM: u32 = 0;
    pub const A1: u32 = 1;
    pub const A2: u32 = 2;
    pub const B1: u32 = 3;
    pub const B2: u32 = 4;
    pub const C1: u32 = 5;
    pub const C2: u32 = 6;
    pub const CO1: u32 = 7;
    pub const CO2: u32 = 8;
    pub const VECIN: u32 = 9;
    pub const VECOUT: u32 = 10;
    pub const VECCALC: u32 = 11;
    pub const LCM: u32 = 12;
    pub const TSCM: u32 = 15;
}

/// Memory that backs a position.
pub fn mem_of(p: u32) -> Option<Mem> {
    Some(match p {
        pos::A1 | pos::B1 | pos::C1 | pos::TSCM => Mem::L1,
        pos::A2 => Mem::L0a,
        pos::B2 => Mem::L0b,
        pos::CO1 => Mem::L0c,
        pos::C2 => Mem::Bt,
        pos::VECIN | pos::VECOUT | pos::VECCALC | pos::CO2 => Mem::Ub,
        _ => return None,
    })
}

/// (producer, consumer) pipes of a queue at one position
/// (hardware-facts.md section A, "Events by queue type").
fn pipes_of(p: u32) -> (Pipe, Pipe) {
    match p {
        pos::VECIN => (Pipe::Mte2, Pipe::V),
        pos::VECOUT => (Pipe::V, Pipe::Mte3),
        pos::A1 | pos::B1 | pos::C1 | pos::TSCM => (Pipe::Mte2, Pipe::Mte1),
        pos::A2 | pos::B2 | pos::C2 => (Pipe::Mte1, Pipe::M),
        pos::CO1 => (Pipe::M, Pipe::Fix),
        _ => (Pipe::V, Pipe::V),
    }
}

/// Where the addresses of buffers no memory backs begin (far past every
/// on-chip memory, still a 32-bit address): the tensor of a TBuf never
/// initialised points here.
pub const UNBACKED_BASE: u64 = 0x4000_0000;

/// Bytes of the tensor a TBuf never initialised hands out.
const UNBACKED_TBUF_BYTES: u64 = 0x1000_0000;

fn align32(x: u64) -> u64 {
    x.div_ceil(32) * 32
}

/// Where TPipe buffers (and queue slots) of a memory start: where the cube
/// instructions accept operands, L0A and L0B fractals 512 B aligned, an
/// L0C matrix 256 floats, a bias in the bias table 128 B (guide 6.2.1
/// table 6-49, 6.2.3.2.2.1 Mmad); elsewhere 32 B.
pub fn buffer_align(mem: Mem) -> u64 {
    match mem {
        Mem::L0a | Mem::L0b => 512,
        Mem::L0c => 1024,
        Mem::Bt => 128,
        _ => 32,
    }
}

/// Most buffers a kernel's TPipe holds: queue slots plus TBufs (guide
/// 6.2.3.6.1 InitBuffer: "一个kernel中所有使用的Buffer数量之和不能超过64").
pub const MAX_PIPE_BUFFERS: usize = 64;

impl Block {
    /// Fails when `more` buffers would take the pipe past
    /// [`MAX_PIPE_BUFFERS`].
    fn check_buffer_count(&self, more: usize) -> Result<(), Fault> {
        let used: usize =
            self.queues.iter().map(|q| q.slots.len()).sum::<usize>() + self.bufs.len();
        if used + more > MAX_PIPE_BUFFERS {
            return Err(Fault::InvalidArg {
                api: "InitBuffer",
                what: format!(
                    "{} buffers in one TPipe ({used} already, {more} more): the guide allows at most \
                     {MAX_PIPE_BUFFERS} (queue slots plus TBufs)",
                    used + more
                ),
            });
        }
        Ok(())
    }

    /// Places `bytes` (32-byte aligned) after what the pipe holds in `mem`.
    /// Past the memory's end the buffer is still placed, as the device's
    /// TPipe does (it checks nothing; kernels allocate buffers for dtypes
    /// that never touch them): the part past the end is recorded as
    /// unbacked and noted, and only an access to it faults.
    fn carve(&mut self, mem: Mem, bytes: u64, what: String) -> Result<u32, Fault> {
        let cap = self.shared.mem_sizes[mem as usize];
        let align = buffer_align(mem);
        let start = self.bump[mem as usize].div_ceil(align) * align;
        let need = align32(bytes);
        let overflow = Fault::Overflow {
            mem: mem.name(),
            what,
            need,
            have: cap.saturating_sub(start),
            cap,
        };
        if start + need > UNBACKED_BASE {
            return Err(overflow);
        }
        if start + need > cap {
            let origin = overflow.to_string();
            self.shared.note(
                "unbacked-buffer",
                format!("{origin} (allocated anyway, as on the device; an access there faults)"),
            );
            self.unbacked[mem as usize].push(Unbacked {
                start: start.max(cap),
                end: start + need,
                origin,
            });
        }
        self.bump[mem as usize] = start + need;
        Ok(start as u32)
    }

    /// The fault an access past a memory's end really is: the use of a
    /// buffer that no memory backs, when the access touches one.
    pub fn explain(&self, fault: Fault) -> Fault {
        let Fault::LocalOutOfRange {
            mem, start, end, ..
        } = &fault
        else {
            return fault;
        };
        let Some(m) = Mem::ALL.iter().position(|m| m.name() == *mem) else {
            return fault;
        };
        match self.unbacked[m]
            .iter()
            .find(|u| u.start < *end && *start < u.end)
        {
            Some(u) => Fault::UnbackedUse {
                origin: u.origin.clone(),
                access: fault.to_string(),
            },
            None => fault,
        }
    }

    /// TPipe::InitBuffer for a queue.
    pub fn que_create(
        &mut self,
        pos_code: u32,
        depth: u32,
        num: u32,
        len: u32,
        loc: u32,
    ) -> Result<i32, Fault> {
        let src = pos_code & 0xff;
        let dst = (pos_code >> 8) & 0xff;
        let mem = mem_of(src).ok_or_else(|| Fault::InvalidArg {
            api: "InitBuffer",
            what: format!("position code {src} cannot hold a queue"),
        })?;
        if num == 0 || len == 0 {
            return Err(Fault::InvalidArg {
                api: "InitBuffer",
                what: format!("num = {num} and len = {len} must both be positive"),
            });
        }
        if depth == 0 || depth > 8 {
            return Err(Fault::InvalidArg {
                api: "InitBuffer",
                what: format!("queue depth {depth} outside 1..=8"),
            });
        }
        self.check_buffer_count(num as usize)?;
        let align = buffer_align(mem);
        let stride = (len as u64).div_ceil(align) * align;
        let total = stride * num as u64;
        let base = self.carve(
            mem,
            total,
            format!("InitBuffer(queue, {num}, {len}) = {total} bytes"),
        )?;
        let producer = pipes_of(src).0;
        let consumer = pipes_of(dst).1;
        self.queues.push(Queue {
            mem,
            producer,
            consumer,
            depth,
            base,
            len,
            stride: stride as u32,
            slots: vec![SlotState::Free; num as usize],
            fifo: Default::default(),
            freed: vec![false; num as usize],
            next: 0,
            loc,
        });
        Ok((self.queues.len() - 1) as i32)
    }

    /// TPipe::InitBuffer for a TBuf.
    pub fn buf_create(&mut self, pos_code: u32, len: u32) -> Result<i32, Fault> {
        let mem = mem_of(pos_code & 0xff).ok_or_else(|| Fault::InvalidArg {
            api: "InitBuffer",
            what: format!("position code {pos_code} cannot hold a TBuf"),
        })?;
        if len == 0 {
            return Err(Fault::InvalidArg {
                api: "InitBuffer",
                what: "TBuf length 0".into(),
            });
        }
        self.check_buffer_count(1)?;
        let base = self.carve(mem, len as u64, format!("InitBuffer(tbuf, {len})"))?;
        self.bufs.push(Buf { mem, base, len });
        Ok((self.bufs.len() - 1) as i32)
    }

    /// TBuf::Get. A TBuf never initialised (device: its tensor points at
    /// no buffer) hands out an unbacked tensor: real kernels take one for
    /// dtypes that never use it; an access to it faults.
    pub fn buf_get(&mut self, handle: i32, dtype: u8, elems: u32) -> Result<AscLocal, Fault> {
        let size = dtype_size(dtype)?;
        let Some(b) = self
            .bufs
            .get(handle.max(0) as usize)
            .filter(|_| handle >= 0)
        else {
            let origin =
                format!("TBuf::Get on a TBuf never initialised with InitBuffer (handle {handle})");
            if self.unbacked[Mem::Ub as usize]
                .iter()
                .all(|u| u.start != UNBACKED_BASE)
            {
                self.shared.note(
                    "unbacked-buffer",
                    format!("{origin}: its tensor is backed by no memory; an access faults"),
                );
                self.unbacked[Mem::Ub as usize].push(Unbacked {
                    start: UNBACKED_BASE,
                    end: UNBACKED_BASE + UNBACKED_TBUF_BYTES,
                    origin,
                });
            }
            let max = (UNBACKED_TBUF_BYTES / size as u64) as u32;
            return Ok(AscLocal {
                mem: Mem::Ub as u8,
                dtype,
                reserved: 0,
                addr: UNBACKED_BASE as u32,
                elems: if elems == 0 || elems > max {
                    max
                } else {
                    elems
                },
            });
        };
        let max = b.len / size;
        if elems > max {
            return Err(Fault::InvalidArg {
                api: "TBuf::Get",
                what: format!(
                    "{elems} elements asked from a TBuf of {} bytes ({max} elements)",
                    b.len
                ),
            });
        }
        Ok(AscLocal {
            mem: b.mem as u8,
            dtype,
            reserved: 0,
            addr: b.base,
            elems: if elems == 0 { max } else { elems },
        })
    }

    /// PopStackBuffer<T, pos>: the rest of the memory behind `pos`, from
    /// the end of what TPipe allocated there (32-byte aligned), as
    /// elements of `dtype`; nothing is allocated (guide 6.2.3.6.2.2: "空间
    /// 大小为指定position的全部剩余空间"). LCM is the UB.
    pub fn local_rest(&mut self, pos_code: u32, dtype: u8) -> Result<AscLocal, Fault> {
        let size = dtype_size(dtype)? as u64;
        let mem = if pos_code == pos::LCM {
            Some(Mem::Ub)
        } else {
            mem_of(pos_code)
        }
        .ok_or_else(|| Fault::InvalidArg {
            api: "PopStackBuffer",
            what: format!("position code {pos_code} has no on-chip memory"),
        })?;
        let start = align32(self.bump[mem as usize]);
        let cap = self.shared.mem_sizes[mem as usize];
        let elems = cap.saturating_sub(start) / size;
        Ok(AscLocal {
            mem: mem as u8,
            dtype,
            reserved: 0,
            addr: start as u32,
            elems: elems as u32,
        })
    }

    fn queue(&mut self, handle: i32, api: &'static str) -> Result<&mut Queue, Fault> {
        if handle < 0 || handle as usize >= self.queues.len() {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "queue handle {handle}: the queue was never initialised with InitBuffer"
                ),
            });
        }
        Ok(&mut self.queues[handle as usize])
    }

    fn slot_of(q: &Queue, addr: u32, api: &'static str) -> Result<u32, Fault> {
        if addr < q.base
            || !(addr - q.base).is_multiple_of(q.stride)
            || (addr - q.base) / q.stride >= q.slots.len() as u32
        {
            return Err(Fault::InvalidArg {
                api,
                what: format!("tensor at {:#x} is not a buffer of this queue", addr),
            });
        }
        Ok((addr - q.base) / q.stride)
    }

    /// TQue::AllocTensor.
    pub fn que_alloc(&mut self, handle: i32, dtype: u8, loc: u32) -> Result<AscLocal, Fault> {
        let size = dtype_size(dtype)?;
        let q = self.queue(handle, "AllocTensor")?;
        let n = q.slots.len() as u32;
        let slot = (0..n)
            .map(|k| (q.next + k) % n)
            .find(|&s| q.slots[s as usize] == SlotState::Free)
            .ok_or_else(|| Fault::Deadlock {
                what: format!(
                    "AllocTensor on a queue whose {n} buffer(s) are all in use: FreeTensor is missing (the hardware would wait forever)"
                ),
            })?;
        q.slots[slot as usize] = SlotState::Allocated;
        q.next = (slot + 1) % n;
        let (producer, consumer, freed) = (q.producer, q.consumer, q.freed[slot as usize]);
        let t = AscLocal {
            mem: q.mem as u8,
            dtype,
            reserved: 0,
            addr: q.base + slot * q.stride,
            elems: q.len / size,
        };
        if freed {
            self.record(
                producer,
                InstrKind::WaitFlag {
                    src: consumer,
                    dst: producer,
                    key: FlagKey::Slot {
                        queue: handle as u32,
                        slot,
                        forward: false,
                    },
                    origin: SyncOrigin::AllocTensor,
                },
                vec![],
                vec![],
                loc,
            )?;
        }
        Ok(t)
    }

    /// TQue::EnQue.
    pub fn que_enque(&mut self, handle: i32, t: AscLocal, loc: u32) -> Result<(), Fault> {
        let q = self.queue(handle, "EnQue")?;
        let slot = Self::slot_of(q, t.addr, "EnQue")?;
        match q.slots[slot as usize] {
            SlotState::Allocated | SlotState::Dequeued => {}
            SlotState::Queued => {
                return Err(Fault::InvalidArg {
                    api: "EnQue",
                    what: "tensor is already in the queue".into(),
                })
            }
            SlotState::Free => {
                return Err(Fault::InvalidArg {
                    api: "EnQue",
                    what: "tensor was freed (or never allocated) before EnQue".into(),
                })
            }
        }
        if q.fifo.len() as u32 >= q.depth {
            return Err(Fault::Deadlock {
                what: format!(
                    "EnQue on a queue of depth {} that already holds {} tensor(s): DeQue them first",
                    q.depth,
                    q.fifo.len()
                ),
            });
        }
        q.slots[slot as usize] = SlotState::Queued;
        q.fifo.push_back(slot);
        let (producer, consumer) = (q.producer, q.consumer);
        self.record(
            producer,
            InstrKind::SetFlag {
                src: producer,
                dst: consumer,
                key: FlagKey::Slot {
                    queue: handle as u32,
                    slot,
                    forward: true,
                },
                origin: SyncOrigin::EnQue,
            },
            vec![],
            vec![],
            loc,
        )
    }

    /// TQue::DeQue.
    pub fn que_deque(&mut self, handle: i32, dtype: u8, loc: u32) -> Result<AscLocal, Fault> {
        let size = dtype_size(dtype)?;
        let q = self.queue(handle, "DeQue")?;
        let slot = q.fifo.pop_front().ok_or_else(|| Fault::Deadlock {
            what:
                "DeQue on an empty queue: no tensor was EnQue'd (the hardware would wait forever)"
                    .into(),
        })?;
        q.slots[slot as usize] = SlotState::Dequeued;
        let (producer, consumer) = (q.producer, q.consumer);
        let t = AscLocal {
            mem: q.mem as u8,
            dtype,
            reserved: 0,
            addr: q.base + slot * q.stride,
            elems: q.len / size,
        };
        self.record(
            consumer,
            InstrKind::WaitFlag {
                src: producer,
                dst: consumer,
                key: FlagKey::Slot {
                    queue: handle as u32,
                    slot,
                    forward: true,
                },
                origin: SyncOrigin::DeQue,
            },
            vec![],
            vec![],
            loc,
        )?;
        Ok(t)
    }

    /// TQue::FreeTensor.
    pub fn que_free(&mut self, handle: i32, t: AscLocal, loc: u32) -> Result<(), Fault> {
        let q = self.queue(handle, "FreeTensor")?;
        let slot = Self::slot_of(q, t.addr, "FreeTensor")?;
        match q.slots[slot as usize] {
            SlotState::Free => {
                return Err(Fault::InvalidArg {
                    api: "FreeTensor",
                    what: "tensor freed twice (or never allocated)".into(),
                })
            }
            SlotState::Queued => {
                return Err(Fault::InvalidArg {
                    api: "FreeTensor",
                    what: "tensor freed while still in the queue (DeQue it first)".into(),
                })
            }
            SlotState::Allocated | SlotState::Dequeued => {}
        }
        q.slots[slot as usize] = SlotState::Free;
        q.freed[slot as usize] = true;
        let (producer, consumer) = (q.producer, q.consumer);
        self.record(
            consumer,
            InstrKind::SetFlag {
                src: consumer,
                dst: producer,
                key: FlagKey::Slot {
                    queue: handle as u32,
                    slot,
                    forward: false,
                },
                origin: SyncOrigin::FreeTensor,
            },
            vec![],
            vec![],
            loc,
        )
    }

    /// TPipe::Reset / Destroy: releases every buffer.
    pub fn pipe_reset(&mut self) {
        self.queues.clear();
        self.bufs.clear();
        for u in &mut self.unbacked {
            u.retain(|u| u.start == UNBACKED_BASE);
        }
        self.bump = [0; 8];
    }
}

/// Element size of an ABI dtype code.
pub fn dtype_size(dtype: u8) -> Result<u32, Fault> {
    ascendopt_op::Dtype::from_abi_code(dtype)
        .map(|d| d.size() as u32)
        .ok_or_else(|| Fault::InvalidArg {
            api: "tensor",
            what: format!("unknown element type code {dtype}"),
        })
}
