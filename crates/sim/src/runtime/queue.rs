//! TPipe buffers, TQue/TQueBind slots and TBuf, per block. Queue calls are
//! lowered to the flag instructions the hardware executes (hardware-facts.md
//! section A): EnQue sets and DeQue waits the slot's forward flag (producer
//! to consumer pipe); FreeTensor sets and AllocTensor waits its backward
//! flag. InitBuffer pre-sets the backward flag, so the first AllocTensor of
//! a slot records no wait.
//!
//! A queue carries a buffer (address and length) with the flags that belong
//! to it, so EnQue on a queue may take a tensor that another queue of the
//! same memory allocated or de-queued (guide 2.9.3: a stage gets its memory
//! "by AllocTensor, or by DeQue from the upstream queue", then EnQue's it);
//! the guide lists no constraint on EnQue or FreeTensor. The flags are the
//! queue's own (its producer to its consumer pipe, forward) and the freeing
//! queue's consumer to the allocating queue's producer (backward: the next
//! AllocTensor waits until the memory is read, guide 2.9.3), each keyed by
//! the buffer. A buffer its own queue gives back while another queue still
//! holds it is free at once: the next AllocTensor may overwrite it before
//! that queue's consumer read it, a race the checker reports when it
//! happens; the other queue's FreeTensor then gives nothing back. Faults
//! are kept for what the guide rules out: a TBuf's tensor in a queue (guide
//! 2.2.3.3.1: TBuf memory "无法执行队列的入队出队操作"), a queue carrying a
//! buffer of another memory, a buffer en-queued twice or freed twice.

use super::block::{Block, Buf, Queue, Slot, SlotState, Unbacked};
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
        // LCM is VECCALC's other name (guide 6.2.6.7 TPosition: `LCM =
        // VECCALC`; TBuf's default position).
        pos::VECIN | pos::VECOUT | pos::VECCALC | pos::LCM | pos::CO2 => Mem::Ub,
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
            slots: vec![Slot::new(self.queues.len() as u32); num as usize],
            fifo: Default::default(),
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
        let mem = mem_of(pos_code).ok_or_else(|| Fault::InvalidArg {
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

    /// The index of queue `handle`, checked.
    fn queue_index(&self, handle: i32, api: &'static str) -> Result<usize, Fault> {
        if handle < 0 || handle as usize >= self.queues.len() {
            return Err(Fault::InvalidArg {
                api,
                what: format!(
                    "queue handle {handle}: the queue was never initialised with InitBuffer"
                ),
            });
        }
        Ok(handle as usize)
    }

    /// The queue buffer a tensor lies in: (queue that allocated it, slot).
    /// A view into a buffer (`t[16]`) belongs to it, as the device's tensor
    /// carries its buffer's handle.
    fn buffer_of(&self, t: &AscLocal) -> Option<(u32, u32)> {
        self.queues.iter().enumerate().find_map(|(h, q)| {
            let off = t.addr.checked_sub(q.base)?;
            let slot = off / q.stride;
            (q.mem as u8 == t.mem && slot < q.slots.len() as u32 && off % q.stride < q.len)
                .then_some((h as u32, slot))
        })
    }

    /// The fault for a tensor no queue allocated.
    fn not_a_queue_buffer(&self, api: &'static str, t: &AscLocal) -> Fault {
        let mem = Mem::from_code(t.mem).map_or("?", |m| m.name());
        let in_tbuf = self
            .bufs
            .iter()
            .any(|b| b.mem as u8 == t.mem && t.addr >= b.base && t.addr - b.base < b.len);
        Fault::InvalidArg {
            api,
            what: if in_tbuf {
                format!(
                    "the tensor at {mem} {:#x} is a TBuf's: TBuf memory takes part in computation \
                     only and cannot be en-queued or de-queued (guide 2.2.3.3.1); allocate it \
                     from a TQue",
                    t.addr
                )
            } else {
                format!(
                    "the tensor at {mem} {:#x} is no buffer of a queue (AllocTensor of a TQue \
                     gives one)",
                    t.addr
                )
            },
        }
    }

    /// `file:line` of an interned location.
    fn place(&self, loc: u32) -> String {
        self.locs.get(loc as usize).map_or_else(
            || "(unknown location)".to_string(),
            |l| format!("{}:{}", l.file, l.line),
        )
    }

    /// TQue::AllocTensor.
    pub fn que_alloc(&mut self, handle: i32, dtype: u8, loc: u32) -> Result<AscLocal, Fault> {
        let size = dtype_size(dtype)?;
        let qi = self.queue_index(handle, "AllocTensor")?;
        let q = &mut self.queues[qi];
        let n = q.slots.len() as u32;
        let slot = (0..n)
            .map(|k| (q.next + k) % n)
            .find(|&s| q.slots[s as usize].state == SlotState::Free)
            .ok_or_else(|| Fault::Deadlock {
                what: format!(
                    "AllocTensor on a queue whose {n} buffer(s) are all in use: FreeTensor is missing (the hardware would wait forever)"
                ),
            })?;
        let b = &mut q.slots[slot as usize];
        b.state = SlotState::Allocated;
        b.holder = qi as u32;
        let wait = b.free_flag.take();
        q.next = (slot + 1) % n;
        let t = AscLocal {
            mem: q.mem as u8,
            dtype,
            reserved: 0,
            addr: q.base + slot * q.stride,
            elems: q.len / size,
        };
        if let Some((src, dst)) = wait {
            self.record(
                dst,
                InstrKind::WaitFlag {
                    src,
                    dst,
                    key: FlagKey::Slot {
                        queue: qi as u32,
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

    /// TQue::EnQue: the queue's producer sets the forward flag of the
    /// buffer, which may be another queue's (module docs).
    pub fn que_enque(&mut self, handle: i32, t: AscLocal, loc: u32) -> Result<(), Fault> {
        let qi = self.queue_index(handle, "EnQue")?;
        let (owner, slot) = self
            .buffer_of(&t)
            .ok_or_else(|| self.not_a_queue_buffer("EnQue", &t))?;
        let (q_mem, depth, queued) = {
            let q = &self.queues[qi];
            (q.mem, q.depth, q.fifo.len() as u32)
        };
        if q_mem as u8 != t.mem {
            return Err(Fault::InvalidArg {
                api: "EnQue",
                what: format!(
                    "a queue in {} cannot carry a tensor in {}: a queue hands over buffers of \
                     the memory its position names (guide 6.2.3.6.1.7 TQueBind)",
                    q_mem.name(),
                    Mem::from_code(t.mem).map_or("?", |m| m.name())
                ),
            });
        }
        let b = self.queues[owner as usize].slots[slot as usize];
        match b.state {
            SlotState::Allocated | SlotState::Dequeued => {}
            SlotState::Queued => {
                return Err(Fault::InvalidArg {
                    api: "EnQue",
                    what: if b.holder == qi as u32 {
                        "tensor is already in the queue".into()
                    } else {
                        "tensor is already in another queue (DeQue it there first)".into()
                    },
                })
            }
            SlotState::Free => {
                return Err(Fault::InvalidArg {
                    api: "EnQue",
                    what: "tensor was freed (or never allocated) before EnQue".into(),
                })
            }
        }
        if queued >= depth {
            return Err(Fault::Deadlock {
                what: format!(
                    "EnQue on a queue of depth {depth} that already holds {queued} tensor(s): DeQue them first"
                ),
            });
        }
        let q = &mut self.queues[qi];
        q.fifo.push_back((owner, slot));
        let (producer, consumer) = (q.producer, q.consumer);
        let b = &mut self.queues[owner as usize].slots[slot as usize];
        b.state = SlotState::Queued;
        b.holder = qi as u32;
        self.record(
            producer,
            InstrKind::SetFlag {
                src: producer,
                dst: consumer,
                key: FlagKey::Slot {
                    queue: owner,
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

    /// TQue::DeQue: the whole buffer en-queued first, as elements of
    /// `dtype`.
    pub fn que_deque(&mut self, handle: i32, dtype: u8, loc: u32) -> Result<AscLocal, Fault> {
        let size = dtype_size(dtype)?;
        let qi = self.queue_index(handle, "DeQue")?;
        let q = &mut self.queues[qi];
        let (owner, slot) = q.fifo.pop_front().ok_or_else(|| Fault::Deadlock {
            what:
                "DeQue on an empty queue: no tensor was EnQue'd (the hardware would wait forever)"
                    .into(),
        })?;
        let (producer, consumer) = (q.producer, q.consumer);
        let o = &mut self.queues[owner as usize];
        let t = AscLocal {
            mem: o.mem as u8,
            dtype,
            reserved: 0,
            addr: o.base + slot * o.stride,
            elems: o.len / size,
        };
        let b = &mut o.slots[slot as usize];
        // A buffer its own queue gave back meanwhile stays where it is.
        if b.state == SlotState::Queued && b.holder == qi as u32 {
            b.state = SlotState::Dequeued;
        }
        self.record(
            consumer,
            InstrKind::WaitFlag {
                src: producer,
                dst: consumer,
                key: FlagKey::Slot {
                    queue: owner,
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

    /// TQue::FreeTensor: gives the buffer back to the queue that allocated
    /// it; the freeing queue's consumer sets the flag its next AllocTensor
    /// waits (module docs).
    pub fn que_free(&mut self, handle: i32, t: AscLocal, loc: u32) -> Result<(), Fault> {
        let qi = self.queue_index(handle, "FreeTensor")? as u32;
        let (owner, slot) = self
            .buffer_of(&t)
            .ok_or_else(|| self.not_a_queue_buffer("FreeTensor", &t))?;
        let b = self.queues[owner as usize].slots[slot as usize];
        if b.lent == Some(qi) {
            // The end of a hold whose buffer was given back already.
            self.queues[owner as usize].slots[slot as usize].lent = None;
            return Ok(());
        }
        match b.state {
            SlotState::Free => {
                return Err(Fault::InvalidArg {
                    api: "FreeTensor",
                    what: "tensor freed twice (or never allocated)".into(),
                })
            }
            SlotState::Queued if b.holder == qi => {
                return Err(Fault::InvalidArg {
                    api: "FreeTensor",
                    what: "tensor freed while still in the queue (DeQue it first)".into(),
                })
            }
            SlotState::Allocated | SlotState::Queued | SlotState::Dequeued => {}
        }
        let lent = (b.holder != qi && b.holder != owner).then_some(b.holder);
        if let Some(other) = lent {
            let place = self.place(loc);
            let other_at = self.place(self.queues[other as usize].loc);
            let key = format!("{place}: FreeTensor gives back a buffer another queue still holds");
            self.shared.note_first(
                "queue-lend",
                &key,
                format!(
                    "{key} (the queue initialised at {other_at}, which it was en-queued into): it is \
                     free at once, so the next AllocTensor of its queue may overwrite it before \
                     that queue's consumer has read it (a race the checker reports when it \
                     happens); that queue's FreeTensor then gives nothing back. Free a buffer \
                     once, after its last use"
                ),
            );
        }
        let consumer = self.queues[qi as usize].consumer;
        let producer = self.queues[owner as usize].producer;
        let b = &mut self.queues[owner as usize].slots[slot as usize];
        b.state = SlotState::Free;
        b.holder = owner;
        b.free_flag = Some((consumer, producer));
        b.lent = lent;
        self.record(
            consumer,
            InstrKind::SetFlag {
                src: consumer,
                dst: producer,
                key: FlagKey::Slot {
                    queue: owner,
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
