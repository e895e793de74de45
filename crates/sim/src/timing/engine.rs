//! The discrete-event model: per block (core instance) an in-order scalar
//! unit issues the trace into per-pipe issue queues of finite depth; each
//! pipe runs its queue in order; flags, barriers and SyncAll add the
//! dependencies; DMAs that touch GM share the HBM bandwidth of the chip.
//!
//! Rules (the contract the tests check):
//! - A vector call occupies PIPE_V for `per_repeat * repeats` cycles and
//!   completes `head` cycles later; the next independent vector call may
//!   start as soon as the pipe is free. An instruction whose regions overlap
//!   a still-running instruction of the same pipe waits for it (in-pipe
//!   hazards are ordered, as the compiler's barriers do on the device).
//! - A DMA occupies its MTE for `issue + transfer` and completes `latency`
//!   later; the transfer of a GM-side DMA runs at the lesser of its per-core
//!   cap and its max-min fair share of the L2 and HBM bandwidths it uses
//!   (shared with every other core's transfers in flight, [`super::hbm`]);
//!   the cap is the path's rate for the bytes L2 misses and its L2-hit
//!   rate for the others, at most one burst per `dma.burst_cycles`, and it
//!   shrinks when other cores are moving data of the same 512 B ranges at
//!   the same time.
//! - SetFlag sits in the source pipe's queue and fires when every earlier
//!   instruction of that pipe is done; WaitFlag sits in the destination
//!   pipe's queue and blocks it until the flag is set, then clears it
//!   (flags count, so a double set is not lost; the checker reports it).
//!   PipeBarrier<p> drains pipe p; PIPE_ALL and SyncAll stop the scalar unit
//!   until every pipe is drained.
//! - Scalar GetValue/SetValue wait for earlier conflicting accesses on any
//!   pipe (the compiler's automatic S<->V/MTE syncs) and then take the scalar
//!   unit for their cost.
//! - The kernel's own code ([`InstrKind::ScalarCode`]) takes the scalar unit
//!   for its instructions and its data-cache misses, in program order:
//!   the API calls after it are issued only when it is done.
//! - Cross-pipe order comes only from flags: a missing flag makes the model
//!   faster, never slower, and the race checker reports it.
//!
//! Events sit in `BinaryHeap<Reverse<(Cycle, Seq, Event)>>`; `Seq` breaks
//! ties in insertion order, so runs reproduce; time never goes back.

use super::cost::{self, DCache};
use super::hbm::{Footprint, Hbm};
use super::hw::HwProfile;
use super::l2::L2;
use super::TimingError;
use crate::trace::{BlockTrace, DmaDir, FlagKey, Instr, InstrKind, Mem, Pipe, Trace};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// Simulated time in core clock cycles.
pub type Cycle = u64;

pub use ascendopt_device::profile::CoreType;

/// What a span of the timeline was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Real work (vector, DMA, scalar access): counts as busy.
    Work,
    /// A WaitFlag, SyncAll or PIPE_ALL barrier holding a pipe.
    Wait,
    /// A SetFlag or a single-pipe barrier.
    Sync,
}

/// When one instruction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Index of the instruction in its block's trace.
    pub instr: u32,
    /// The pipe it ran on.
    pub pipe: Pipe,
    /// Start cycle (from the start of the kernel, after the launch head).
    pub start: Cycle,
    /// Cycle the instruction left its pipe free for the next one (a vector
    /// call's occupancy, a DMA's transfer); `end` for the others.
    pub busy_end: Cycle,
    /// End cycle (completion).
    pub end: Cycle,
    /// What it was.
    pub kind: SpanKind,
}

/// The timeline of one block.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockTimeline {
    /// Block index.
    pub block: u32,
    /// Core type.
    pub core_type: CoreType,
    /// Physical core it ran on (0-based within its core type).
    pub core: u32,
    /// First cycle.
    pub start: Cycle,
    /// Last cycle.
    pub end: Cycle,
    /// Cycles the scalar unit was busy (issuing and scalar accesses).
    pub scalar_busy: Cycle,
    /// Spans in start order per pipe (pipes interleaved).
    pub spans: Vec<Span>,
    /// (instruction, start, end) of the scalar unit issuing each
    /// instruction that runs on another pipe.
    pub issues: Vec<(u32, Cycle, Cycle)>,
    /// (SetFlag, WaitFlag) instruction pairs: each wait and the set it
    /// consumed (queue EnQue/DeQue and Free/Alloc included).
    pub flag_pairs: Vec<(u32, u32)>,
    /// What the kernel's own code cost this block.
    pub code: CodeStats,
    /// This block's DMAs in the L2.
    pub l2: L2Stats,
}

/// One block's GM traffic through the L2.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Stats {
    /// Bytes its DMAs read from GM.
    pub read_bytes: u64,
    /// Of those, bytes found in L2.
    pub read_hit_bytes: u64,
    /// Bytes its DMAs wrote to GM.
    pub write_bytes: u64,
    /// Of those, bytes whose lines were already in L2.
    pub write_hit_bytes: u64,
}

/// The kernel's own code on one block ([`InstrKind::ScalarCode`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodeStats {
    /// Instructions executed.
    pub instructions: u64,
    /// Scalar-unit cycles they took (data-cache misses included).
    pub cycles: Cycle,
    /// Their GM loads and stores.
    pub gm_accesses: u64,
    /// GM line touches that missed the data cache.
    pub misses: u64,
}

/// What [`run`] computed.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOutput {
    /// Per block, by block index.
    pub blocks: Vec<BlockTimeline>,
    /// Cycle the last block ended.
    pub makespan: Cycle,
    /// GM bytes read by DMAs.
    pub gm_read: u64,
    /// GM bytes written by DMAs.
    pub gm_write: u64,
    /// Bytes the DMAs fetched from HBM (L2 read misses).
    pub hbm_read: u64,
    /// Bytes written back to HBM (dirty L2 lines pushed out).
    pub hbm_write: u64,
    /// Bytes per cycle moving through L2 and through HBM from each change
    /// on: (cycle, [L2, HBM]).
    pub bandwidth: Vec<(Cycle, [f64; 2])>,
    /// Number of events processed.
    pub events: u64,
}

/// An event of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    BlockStart { block: u32 },
    Wake { block: u32 },
    XferStart { block: u32, idx: u32 },
    XferEnd { block: u32, idx: u32 },
    Done { block: u32, idx: u32 },
    FlagSet { block: u32, flag: u32, set: u32 },
    HbmTick { generation: u64 },
    SyncAllRelease { generation: u32 },
    CrossFired { block: u32, idx: u32 },
}

#[derive(Debug, Clone, Default)]
struct PipeSim {
    /// Issued, not yet started.
    queue: VecDeque<u32>,
    /// The pipe cannot start another instruction before this cycle.
    occupied_until: Cycle,
    /// Started, not yet done.
    inflight: Vec<u32>,
    /// When the head of the queue started waiting (WaitFlag).
    head_wait_since: Option<Cycle>,
}

#[derive(Debug, Clone)]
struct BlockSim {
    core_type: CoreType,
    core: u32,
    started: bool,
    finished: bool,
    start: Cycle,
    end: Cycle,
    pc: usize,
    scalar_free: Cycle,
    scalar_busy: Cycle,
    scalar_wait_since: Option<Cycle>,
    at_sync_all: Option<u32>,
    pipes: [PipeSim; 7],
    /// Set count per flag id.
    flags: Vec<u32>,
    /// SetFlag instructions whose set is not yet consumed, per flag id.
    pending_sets: Vec<VecDeque<u32>>,
    /// (SetFlag, WaitFlag) instruction pairs, in the order the waits
    /// consumed the sets.
    flag_pairs: Vec<(u32, u32)>,
    /// Cycle each instruction left its pipe free (the end of a vector
    /// call's occupancy, of a DMA's transfer); completion may come later.
    busy_end: Vec<Cycle>,
    /// (instruction, start, end) of the scalar unit issuing an instruction
    /// to another pipe.
    issues: Vec<(u32, Cycle, Cycle)>,
    /// Flag id per instruction (u32::MAX when none).
    flag_of: Vec<u32>,
    /// (start, end) per instruction; end is set at completion.
    spans: Vec<(Cycle, Cycle)>,
    started_instr: Vec<bool>,
    dma_latency: HashMap<u32, Cycle>,
    dcache: DCache,
    code: CodeStats,
    l2: L2Stats,
}

/// What a Fixpipe with unitFlag waits for ([`Sim::unit_flag_gate`]).
enum UnitGate {
    /// Nothing: no Mmad with unitFlag feeds it.
    Free,
    /// The Mmad that feeds it has not started.
    Wait,
    /// Its transfer starts no earlier than this cycle.
    From(Cycle),
}

fn pipe_index(pipe: Pipe) -> usize {
    match pipe {
        Pipe::S => 0,
        Pipe::V => 1,
        Pipe::M => 2,
        Pipe::Mte1 => 3,
        Pipe::Mte2 => 4,
        Pipe::Mte3 => 5,
        Pipe::Fix => 6,
    }
}

/// True when the two instructions access a common byte and one writes it.
pub(crate) fn conflicts(a: &Instr, b: &Instr) -> bool {
    a.writes
        .iter()
        .any(|w| b.reads.iter().chain(&b.writes).any(|r| w.overlaps(r)))
        || a.reads
            .iter()
            .any(|r| b.writes.iter().any(|w| r.overlaps(w)))
}

/// The core type of a block: its role's in a typed launch, else AIC when
/// it uses a cube-side pipe or memory.
pub fn core_type_of(block: &BlockTrace) -> CoreType {
    if let Some(role) = block.role {
        return if role.cube {
            CoreType::Aic
        } else {
            CoreType::Aiv
        };
    }
    let cube = block.instrs.iter().any(|instr| {
        matches!(cost::exec_pipe(instr), Pipe::M | Pipe::Mte1 | Pipe::Fix)
            || instr.reads.iter().chain(&instr.writes).any(|r| {
                matches!(
                    r.mem,
                    Mem::L1 | Mem::L0a | Mem::L0b | Mem::L0c | Mem::Bt | Mem::Fb
                )
            })
    });
    if cube {
        CoreType::Aic
    } else {
        CoreType::Aiv
    }
}

struct Sim<'a> {
    trace: &'a Trace,
    hw: &'a HwProfile,
    now: Cycle,
    seq: u64,
    heap: BinaryHeap<Reverse<(Cycle, u64, Event)>>,
    blocks: Vec<BlockSim>,
    hbm: Hbm,
    l2: L2,
    hbm_read: u64,
    hbm_write: u64,
    /// Blocks waiting for a free core, per core type.
    pending: [VecDeque<u32>; 2],
    /// Blocks arrived at each SyncAll generation.
    sync_all_arrived: HashMap<u32, u32>,
    /// Blocks an AIV-only SyncAll of a MIX launch waits for.
    aiv_blocks: u32,
    /// CrossSet instructions that fired, and when the waiting cores see
    /// them.
    cross_fired: HashMap<(u32, u32), Cycle>,
    gm_read: u64,
    gm_write: u64,
    events: u64,
}

/// Runs the model over a trace.
pub fn run(trace: &Trace, hw: &HwProfile) -> Result<EngineOutput, TimingError> {
    let mut sim = Sim {
        trace,
        hw,
        now: 0,
        seq: 0,
        heap: BinaryHeap::new(),
        blocks: Vec::with_capacity(trace.blocks.len()),
        hbm: Hbm::new(hw.l2_bytes_per_cycle, hw.hbm_bytes_per_cycle),
        l2: L2::as_left_by(trace, hw.l2_bytes, hw.l2_line_bytes),
        hbm_read: 0,
        hbm_write: 0,
        pending: [VecDeque::new(), VecDeque::new()],
        sync_all_arrived: HashMap::new(),
        aiv_blocks: 0,
        cross_fired: HashMap::new(),
        gm_read: 0,
        gm_write: 0,
        events: 0,
    };
    for block in &trace.blocks {
        sim.blocks.push(prepare_block(block));
    }
    sim.aiv_blocks = sim
        .blocks
        .iter()
        .filter(|b| b.core_type == CoreType::Aiv)
        .count() as u32;
    // First wave: as many blocks of each type as there are cores.
    let mut used = [0u32; 2];
    for index in 0..sim.blocks.len() {
        let type_index = sim.blocks[index].core_type as usize;
        let cores = match sim.blocks[index].core_type {
            CoreType::Aiv => hw.aiv_cores,
            CoreType::Aic => hw.aic_cores,
        };
        if used[type_index] < cores {
            sim.blocks[index].core = used[type_index];
            used[type_index] += 1;
            sim.push(
                0,
                Event::BlockStart {
                    block: index as u32,
                },
            );
        } else {
            sim.pending[type_index].push_back(index as u32);
        }
    }
    while let Some(Reverse((time, _, event))) = sim.heap.pop() {
        assert!(
            time >= sim.now,
            "timing model: time went back ({time} < {})",
            sim.now
        );
        sim.now = time;
        sim.events += 1;
        sim.handle(event);
    }
    if let Some(index) = sim.blocks.iter().position(|b| !b.finished) {
        return Err(TimingError::Deadlock {
            block: trace.blocks[index].block,
            detail: sim.describe_stuck(index),
        });
    }
    let makespan = sim.blocks.iter().map(|b| b.end).max().unwrap_or(0);
    let blocks = sim
        .blocks
        .iter()
        .enumerate()
        .map(|(index, state)| sim.timeline_of(index, state))
        .collect();
    Ok(EngineOutput {
        blocks,
        makespan,
        gm_read: sim.gm_read,
        gm_write: sim.gm_write,
        hbm_read: sim.hbm_read,
        hbm_write: sim.hbm_write,
        bandwidth: std::mem::take(&mut sim.hbm.usage),
        events: sim.events,
    })
}

fn prepare_block(block: &BlockTrace) -> BlockSim {
    let mut ids: HashMap<(Pipe, Pipe, FlagKey), u32> = HashMap::new();
    let mut flag_of = Vec::with_capacity(block.instrs.len());
    for instr in &block.instrs {
        let id = match &instr.kind {
            InstrKind::SetFlag { src, dst, key, .. }
            | InstrKind::WaitFlag { src, dst, key, .. } => {
                let next = ids.len() as u32;
                *ids.entry((*src, *dst, *key)).or_insert(next)
            }
            _ => u32::MAX,
        };
        flag_of.push(id);
    }
    let n = block.instrs.len();
    BlockSim {
        core_type: core_type_of(block),
        core: 0,
        started: false,
        finished: false,
        start: 0,
        end: 0,
        pc: 0,
        scalar_free: 0,
        scalar_busy: 0,
        scalar_wait_since: None,
        at_sync_all: None,
        pipes: Default::default(),
        flags: vec![0; ids.len()],
        pending_sets: vec![VecDeque::new(); ids.len()],
        flag_pairs: Vec::new(),
        busy_end: vec![Cycle::MAX; n],
        issues: Vec::new(),
        flag_of,
        spans: vec![(Cycle::MAX, Cycle::MAX); n],
        started_instr: vec![false; n],
        dma_latency: HashMap::new(),
        dcache: DCache::default(),
        code: CodeStats::default(),
        l2: L2Stats::default(),
    }
}

impl<'a> Sim<'a> {
    fn push(&mut self, time: Cycle, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse((time, self.seq, event)));
    }

    /// True when every CrossSet a wait consumed has reached its core.
    fn cross_ready(&self, sources: &[(u32, u32)]) -> bool {
        sources.iter().all(|s| self.cross_fired.contains_key(s))
    }

    fn instr(&self, block: usize, idx: u32) -> &'a Instr {
        &self.trace.blocks[block].instrs[idx as usize]
    }

    fn handle(&mut self, event: Event) {
        let now = self.now;
        match event {
            Event::BlockStart { block } => {
                let b = &mut self.blocks[block as usize];
                b.started = true;
                b.start = now;
                b.scalar_free = now;
                self.advance(block as usize);
            }
            Event::Wake { block } => self.advance(block as usize),
            Event::XferStart { block, idx } => self.start_transfer(block as usize, idx),
            Event::XferEnd { block, idx } => {
                self.end_transfer(block as usize, idx);
                self.advance(block as usize);
            }
            Event::Done { block, idx } => {
                let b = &mut self.blocks[block as usize];
                let pipe = cost::exec_pipe(&self.trace.blocks[block as usize].instrs[idx as usize]);
                let p = &mut b.pipes[pipe_index(pipe)];
                if let Some(pos) = p.inflight.iter().position(|&i| i == idx) {
                    p.inflight.swap_remove(pos);
                }
                b.spans[idx as usize].1 = now;
                self.advance(block as usize);
            }
            Event::FlagSet { block, flag, set } => {
                let b = &mut self.blocks[block as usize];
                b.flags[flag as usize] += 1;
                b.pending_sets[flag as usize].push_back(set);
                self.advance(block as usize);
            }
            Event::HbmTick { generation } => {
                if generation != self.hbm.generation {
                    return;
                }
                let finished = self.hbm.take_finished(now);
                let mut touched = Vec::new();
                for (block, idx) in finished {
                    self.end_transfer(block as usize, idx);
                    touched.push(block as usize);
                }
                self.schedule_hbm();
                touched.sort_unstable();
                touched.dedup();
                for block in touched {
                    self.advance(block);
                }
            }
            Event::CrossFired { block, idx } => {
                self.cross_fired.insert((block, idx), now);
                for index in 0..self.blocks.len() {
                    self.advance(index);
                }
            }
            Event::SyncAllRelease { generation } => {
                for index in 0..self.blocks.len() {
                    if self.blocks[index].at_sync_all == Some(generation) {
                        self.blocks[index].at_sync_all = None;
                        self.advance(index);
                    }
                }
            }
        }
    }

    fn schedule_hbm(&mut self) {
        if let Some(time) = self.hbm.next_finish(self.now) {
            let generation = self.hbm.generation;
            self.push(time, Event::HbmTick { generation });
        }
    }

    fn start_transfer(&mut self, block: usize, idx: u32) {
        let instr = self.instr(block, idx);
        let InstrKind::Dma {
            dir,
            bytes,
            bursts,
            burst_bytes,
            gm_offset,
            gm_strided,
            ..
        } = instr.kind
        else {
            return;
        };
        let c = cost::dma_cost(
            self.hw,
            instr,
            dir,
            bytes,
            bursts,
            burst_bytes,
            gm_offset,
            gm_strided,
        );
        self.gm_read += c.gm_read;
        self.gm_write += c.gm_write;
        self.blocks[block].dma_latency.insert(idx, c.latency);
        if c.uses_hbm {
            let granule = self.hw.dma.gm_align_bytes;
            let gm = instr
                .reads
                .iter()
                .chain(&instr.writes)
                .find(|r| r.mem == Mem::Gm)
                .copied();
            // A strided copy touches its rows only: `len` spans
            // (bursts - 1) pitches plus one burst.
            let footprint = gm.map(|r| {
                let rows = u64::from(bursts);
                let pitch = if gm_strided && rows > 1 && r.len > burst_bytes {
                    let gaps = r.len - burst_bytes;
                    (gaps.checked_rem(rows - 1) == Some(0)).then(|| gaps / (rows - 1))
                } else {
                    None
                };
                match pitch {
                    Some(pitch) => {
                        Footprint::strided(r.space, r.start, rows, pitch, burst_bytes, granule)
                    }
                    None => Footprint::span(r.space, r.start, r.len, granule),
                }
            });
            let others = footprint.map_or(0, |f| self.hbm.same_range_blocks(block as u32, f));
            // The L2: what the GM side finds there, what it fetches from
            // and pushes out to HBM.
            let write = c.gm_write > 0;
            let access = gm.map_or_else(Default::default, |r| {
                self.l2.access(r.space, r.start, r.len.max(1), write)
            });
            let touched = gm.map_or(0, |r| r.len.max(1));
            let payload = c.gm_read + c.gm_write;
            let hit_share = if touched == 0 {
                0.0
            } else {
                access.hit.min(touched) as f64 / touched as f64
            };
            let miss_share = if write { 0.0 } else { 1.0 - hit_share };
            // A read's bytes found in L2 move at the path's L2-hit rate,
            // the others at its GM rate.
            let path_cap = if write {
                c.rate_cap
            } else {
                c.read_cap(hit_share)
            };
            let cap = path_cap / (1.0 + self.hw.dma.same_range_penalty * others as f64);
            let fetched = (miss_share * payload as f64).round() as u64;
            let hit = (hit_share * payload as f64).round() as u64;
            let l2 = &mut self.blocks[block].l2;
            if write {
                l2.write_bytes += payload;
                l2.write_hit_bytes += hit;
            } else {
                l2.read_bytes += payload;
                l2.read_hit_bytes += hit;
            }
            self.hbm_read += fetched;
            self.hbm_write += access.written_back;
            let hbm_share = miss_share + access.written_back as f64 / c.charged_bytes.max(1.0);
            self.hbm.add(
                self.now,
                (block as u32, idx),
                c.charged_bytes,
                cap,
                hbm_share,
                footprint,
            );
            self.schedule_hbm();
        } else {
            let cycles = (c.charged_bytes / c.rate_cap).ceil() as Cycle;
            self.push(
                self.now + cycles,
                Event::XferEnd {
                    block: block as u32,
                    idx,
                },
            );
        }
    }

    /// The data of a DMA has moved: its pipe is free, completion follows
    /// after the latency.
    fn end_transfer(&mut self, block: usize, idx: u32) {
        let now = self.now;
        let pipe = cost::exec_pipe(self.instr(block, idx));
        let b = &mut self.blocks[block];
        b.pipes[pipe_index(pipe)].occupied_until = now;
        b.busy_end[idx as usize] = now;
        let latency = b.dma_latency.remove(&idx).unwrap_or(0);
        self.push(
            now + latency,
            Event::Done {
                block: block as u32,
                idx,
            },
        );
        self.push(
            now,
            Event::Wake {
                block: block as u32,
            },
        );
    }

    /// Makes all the progress a block can make at the current time.
    fn advance(&mut self, block: usize) {
        if !self.blocks[block].started || self.blocks[block].finished {
            return;
        }
        loop {
            let mut progress = false;
            for pipe in &Pipe::ALL[1..] {
                while self.try_start_head(block, *pipe) {
                    progress = true;
                }
            }
            if self.scalar_step(block) {
                progress = true;
            }
            if !progress {
                break;
            }
        }
        self.check_finished(block);
    }

    fn check_finished(&mut self, block: usize) {
        let now = self.now;
        let len = self.trace.blocks[block].instrs.len();
        let b = &self.blocks[block];
        let idle = b.pc >= len
            && b.scalar_free <= now
            && b.at_sync_all.is_none()
            && b.pipes
                .iter()
                .all(|p| p.queue.is_empty() && p.inflight.is_empty() && p.occupied_until <= now);
        if !idle {
            return;
        }
        let b = &mut self.blocks[block];
        b.finished = true;
        b.end = now;
        let core = b.core;
        let type_index = b.core_type as usize;
        if let Some(next) = self.pending[type_index].pop_front() {
            self.blocks[next as usize].core = core;
            self.push(now, Event::BlockStart { block: next });
        }
    }

    /// Tries to start the instruction at the head of a pipe's queue.
    fn try_start_head(&mut self, block: usize, pipe: Pipe) -> bool {
        let now = self.now;
        let pi = pipe_index(pipe);
        let (idx, occupied_until) = {
            let p = &self.blocks[block].pipes[pi];
            match p.queue.front() {
                Some(&idx) => (idx, p.occupied_until),
                None => return false,
            }
        };
        if occupied_until > now {
            return false;
        }
        let instr = self.instr(block, idx);
        match &instr.kind {
            InstrKind::WaitFlag { .. } => {
                let flag = self.blocks[block].flag_of[idx as usize] as usize;
                let b = &mut self.blocks[block];
                if b.flags[flag] == 0 {
                    b.pipes[pi].head_wait_since.get_or_insert(now);
                    return false;
                }
                b.flags[flag] -= 1;
                if let Some(set) = b.pending_sets[flag].pop_front() {
                    b.flag_pairs.push((set, idx));
                }
                let since = b.pipes[pi].head_wait_since.take().unwrap_or(now);
                b.pipes[pi].queue.pop_front();
                b.spans[idx as usize] = (since, now);
                b.started_instr[idx as usize] = true;
                true
            }
            InstrKind::SetFlag { .. } => {
                let flag = self.blocks[block].flag_of[idx as usize];
                let b = &mut self.blocks[block];
                if !b.pipes[pi].inflight.is_empty() {
                    return false;
                }
                b.pipes[pi].queue.pop_front();
                b.spans[idx as usize] = (now, now);
                b.started_instr[idx as usize] = true;
                let latency = self.hw.sync.flag_latency_cycles.round() as Cycle;
                self.push(
                    now + latency,
                    Event::FlagSet {
                        block: block as u32,
                        flag,
                        set: idx,
                    },
                );
                true
            }
            InstrKind::CrossSet { .. } => {
                let b = &mut self.blocks[block];
                if !b.pipes[pi].inflight.is_empty() {
                    return false;
                }
                b.pipes[pi].queue.pop_front();
                b.spans[idx as usize] = (now, now);
                b.started_instr[idx as usize] = true;
                let latency = self.hw.sync.cross_core_cycles.round() as Cycle;
                self.push(
                    now + latency,
                    Event::CrossFired {
                        block: block as u32,
                        idx,
                    },
                );
                true
            }
            InstrKind::CrossWait { sources, .. } => {
                let ready = self.cross_ready(sources);
                let b = &mut self.blocks[block];
                if !ready {
                    b.pipes[pi].head_wait_since.get_or_insert(now);
                    return false;
                }
                let since = b.pipes[pi].head_wait_since.take().unwrap_or(now);
                b.pipes[pi].queue.pop_front();
                b.spans[idx as usize] = (since, now);
                b.started_instr[idx as usize] = true;
                true
            }
            InstrKind::Barrier { .. } => {
                let b = &mut self.blocks[block];
                if !b.pipes[pi].inflight.is_empty() {
                    return false;
                }
                b.pipes[pi].queue.pop_front();
                b.spans[idx as usize] = (now, now);
                b.started_instr[idx as usize] = true;
                true
            }
            InstrKind::Vector { .. } | InstrKind::Mmad(_) => {
                if self.hazard(block, pi, instr) {
                    return false;
                }
                let c = match &instr.kind {
                    InstrKind::Vector {
                        op,
                        dtype,
                        src_dtype,
                        repeats,
                        elems,
                    } => cost::vector_cost(self.hw, *op, *dtype, *src_dtype, *repeats, *elems),
                    InstrKind::Mmad(shape) => cost::mmad_cost(self.hw, shape),
                    _ => return false,
                };
                let b = &mut self.blocks[block];
                let p = &mut b.pipes[pi];
                p.queue.pop_front();
                p.occupied_until = now + c.occupancy;
                p.inflight.push(idx);
                b.busy_end[idx as usize] = now + c.occupancy;
                b.spans[idx as usize] = (now, Cycle::MAX);
                b.started_instr[idx as usize] = true;
                let done = now + c.occupancy + c.latency;
                self.push(
                    done,
                    Event::Done {
                        block: block as u32,
                        idx,
                    },
                );
                self.push(
                    now + c.occupancy,
                    Event::Wake {
                        block: block as u32,
                    },
                );
                true
            }
            InstrKind::Dma {
                dir,
                bytes,
                bursts,
                burst_bytes,
                gm_offset,
                gm_strided,
                ..
            } => {
                if self.hazard(block, pi, instr) {
                    return false;
                }
                let c = cost::dma_cost(
                    self.hw,
                    instr,
                    *dir,
                    *bytes,
                    *bursts,
                    *burst_bytes,
                    *gm_offset,
                    *gm_strided,
                );
                let mut xfer_at = now + c.issue;
                if *dir == DmaDir::L0cOutUnit {
                    match self.unit_flag_gate(block, idx, &c) {
                        UnitGate::Free => {}
                        UnitGate::Wait => return false,
                        UnitGate::From(at) => xfer_at = xfer_at.max(at),
                    }
                }
                let b = &mut self.blocks[block];
                let p = &mut b.pipes[pi];
                p.queue.pop_front();
                p.occupied_until = Cycle::MAX;
                p.inflight.push(idx);
                b.spans[idx as usize] = (now, Cycle::MAX);
                b.started_instr[idx as usize] = true;
                self.push(
                    xfer_at,
                    Event::XferStart {
                        block: block as u32,
                        idx,
                    },
                );
                true
            }
            // Scalar-unit instructions never enter a pipe queue.
            InstrKind::Scalar { .. } | InstrKind::SyncAll { .. } | InstrKind::ScalarCode(_) => {
                let b = &mut self.blocks[block];
                b.pipes[pi].queue.pop_front();
                true
            }
        }
    }

    /// When a Fixpipe with unitFlag (`idx`, cost `c`) may start moving:
    /// the latest earlier Mmad of the block that writes what it reads
    /// decides. Without unitFlag on that Mmad, or without such an Mmad, the
    /// Fixpipe is not gated (flags order it as any instruction). With it,
    /// the Fixpipe waits for the Mmad to start, moves fractal after fractal
    /// of C as the cube finishes them (guide 6.2.3.2.1.12: "each time the
    /// hardware finishes a fractal, the result is moved out"): the Mmad's
    /// steps are spread evenly over its ceil(m/16) x ceil(n/16) fractals,
    /// a fractal is in L0C `mmad_head_cycles` after its last step, and
    /// the transfer, at its uncontended rate, starts late enough that the
    /// last fractal's share comes after the Mmad's last result.
    fn unit_flag_gate(&self, block: usize, idx: u32, c: &cost::DmaCost) -> UnitGate {
        let instrs = &self.trace.blocks[block].instrs;
        let fixpipe = &instrs[idx as usize];
        let Some((m, shape)) =
            instrs[..idx as usize]
                .iter()
                .enumerate()
                .rev()
                .find_map(|(i, other)| match &other.kind {
                    InstrKind::Mmad(shape) if conflicts(other, fixpipe) => Some((i, *shape)),
                    _ => None,
                })
        else {
            return UnitGate::Free;
        };
        if !matches!(shape.unit_flag, 2 | 3) {
            return UnitGate::Free;
        }
        let b = &self.blocks[block];
        if !b.started_instr[m] {
            return UnitGate::Wait;
        }
        let start = b.spans[m].0;
        let occupancy = b.busy_end[m].saturating_sub(start).max(1);
        let fractals = (u64::from(shape.m.div_ceil(16)) * u64::from(shape.n.div_ceil(16))).max(1);
        let head = self.hw.cube.mmad_head_cycles.round() as Cycle;
        let first = start + occupancy.div_ceil(fractals) + head;
        let last = start + occupancy + head;
        let transfer = (c.charged_bytes / c.rate_cap.max(1e-9)).ceil() as Cycle;
        let share = transfer.div_ceil(fractals);
        UnitGate::From(first.max((last + share).saturating_sub(transfer)))
    }

    /// True when `instr` touches what a running instruction of the same pipe
    /// still touches.
    fn hazard(&self, block: usize, pi: usize, instr: &Instr) -> bool {
        if instr.reads.is_empty() && instr.writes.is_empty() {
            return false;
        }
        self.blocks[block].pipes[pi]
            .inflight
            .iter()
            .any(|&other| conflicts(instr, self.instr(block, other)))
    }

    /// True when an earlier instruction, queued or running on any pipe,
    /// conflicts with a scalar access.
    fn scalar_must_wait(&self, block: usize, instr: &Instr) -> bool {
        self.blocks[block].pipes.iter().any(|p| {
            p.queue
                .iter()
                .chain(&p.inflight)
                .any(|&other| conflicts(instr, self.instr(block, other)))
        })
    }

    fn all_drained(&self, block: usize) -> bool {
        let now = self.now;
        self.blocks[block]
            .pipes
            .iter()
            .all(|p| p.queue.is_empty() && p.inflight.is_empty() && p.occupied_until <= now)
    }

    /// One step of the scalar unit: issue or execute the next instruction.
    fn scalar_step(&mut self, block: usize) -> bool {
        let now = self.now;
        let hw = self.hw;
        {
            let b = &self.blocks[block];
            if b.at_sync_all.is_some()
                || b.scalar_free > now
                || b.pc >= self.trace.blocks[block].instrs.len()
            {
                return false;
            }
        }
        let idx = self.blocks[block].pc as u32;
        let instr = self.instr(block, idx);
        let issue = cost::issue_cycles(hw, &instr.kind);
        let depth = hw.issue_queue_depth as usize;
        let mut cost_cycles = issue;
        match &instr.kind {
            InstrKind::Vector { .. } | InstrKind::Dma { .. } | InstrKind::Mmad(_) => {
                let pi = pipe_index(cost::exec_pipe(instr));
                let b = &mut self.blocks[block];
                if b.pipes[pi].queue.len() >= depth {
                    return false;
                }
                b.pipes[pi].queue.push_back(idx);
            }
            InstrKind::SetFlag { src, .. } => {
                if *src == Pipe::S {
                    let flag = self.blocks[block].flag_of[idx as usize];
                    let latency = hw.sync.flag_latency_cycles.round() as Cycle;
                    self.push(
                        now + issue + latency,
                        Event::FlagSet {
                            block: block as u32,
                            flag,
                            set: idx,
                        },
                    );
                    let b = &mut self.blocks[block];
                    b.spans[idx as usize] = (now, now + issue);
                    b.started_instr[idx as usize] = true;
                } else {
                    let pi = pipe_index(*src);
                    let b = &mut self.blocks[block];
                    if b.pipes[pi].queue.len() >= depth {
                        return false;
                    }
                    b.pipes[pi].queue.push_back(idx);
                }
            }
            InstrKind::WaitFlag { dst, .. } => {
                if *dst == Pipe::S {
                    let flag = self.blocks[block].flag_of[idx as usize] as usize;
                    let b = &mut self.blocks[block];
                    if b.flags[flag] == 0 {
                        b.scalar_wait_since.get_or_insert(now);
                        return false;
                    }
                    b.flags[flag] -= 1;
                    if let Some(set) = b.pending_sets[flag].pop_front() {
                        b.flag_pairs.push((set, idx));
                    }
                    let since = b.scalar_wait_since.take().unwrap_or(now);
                    b.spans[idx as usize] = (since, now + issue);
                    b.started_instr[idx as usize] = true;
                } else {
                    let pi = pipe_index(*dst);
                    let b = &mut self.blocks[block];
                    if b.pipes[pi].queue.len() >= depth {
                        return false;
                    }
                    b.pipes[pi].queue.push_back(idx);
                }
            }
            InstrKind::CrossSet { pipe, .. } => {
                if *pipe == Pipe::S {
                    let latency = hw.sync.cross_core_cycles.round() as Cycle;
                    self.push(
                        now + issue + latency,
                        Event::CrossFired {
                            block: block as u32,
                            idx,
                        },
                    );
                    let b = &mut self.blocks[block];
                    b.spans[idx as usize] = (now, now + issue);
                    b.started_instr[idx as usize] = true;
                } else {
                    let pi = pipe_index(*pipe);
                    let b = &mut self.blocks[block];
                    if b.pipes[pi].queue.len() >= depth {
                        return false;
                    }
                    b.pipes[pi].queue.push_back(idx);
                }
            }
            InstrKind::CrossWait { pipe, sources, .. } => {
                if *pipe == Pipe::S {
                    if !self.cross_ready(sources) {
                        self.blocks[block].scalar_wait_since.get_or_insert(now);
                        return false;
                    }
                    let b = &mut self.blocks[block];
                    let since = b.scalar_wait_since.take().unwrap_or(now);
                    b.spans[idx as usize] = (since, now + issue);
                    b.started_instr[idx as usize] = true;
                } else {
                    let pi = pipe_index(*pipe);
                    let b = &mut self.blocks[block];
                    if b.pipes[pi].queue.len() >= depth {
                        return false;
                    }
                    b.pipes[pi].queue.push_back(idx);
                }
            }
            InstrKind::Barrier {
                pipe: Some(Pipe::S),
            } => {
                // PipeBarrier<PIPE_S> is a hardware error (the checker says
                // so); the scalar unit is in order anyway.
                let b = &mut self.blocks[block];
                b.spans[idx as usize] = (now, now + issue);
                b.started_instr[idx as usize] = true;
            }
            InstrKind::Barrier { pipe: Some(pipe) } => {
                let pi = pipe_index(*pipe);
                let b = &mut self.blocks[block];
                if b.pipes[pi].queue.len() >= depth {
                    return false;
                }
                b.pipes[pi].queue.push_back(idx);
            }
            InstrKind::Barrier { pipe: None } => {
                if !self.all_drained(block) {
                    self.blocks[block].scalar_wait_since.get_or_insert(now);
                    return false;
                }
                let b = &mut self.blocks[block];
                let since = b.scalar_wait_since.take().unwrap_or(now);
                b.spans[idx as usize] = (since, now + issue);
                b.started_instr[idx as usize] = true;
            }
            InstrKind::Scalar { op, bytes } => {
                if self.scalar_must_wait(block, instr) {
                    self.blocks[block].scalar_wait_since.get_or_insert(now);
                    return false;
                }
                let b = &mut self.blocks[block];
                b.scalar_wait_since = None;
                let work = cost::scalar_cost(hw, *op, *bytes, instr, &mut b.dcache);
                cost_cycles = issue + work;
                b.spans[idx as usize] = (now, now + cost_cycles);
                b.started_instr[idx as usize] = true;
            }
            InstrKind::ScalarCode(code) => {
                let lines = self.trace.blocks[block]
                    .gm_lines
                    .get(code.lines_start as usize..)
                    .map_or(&[][..], |rest| {
                        &rest[..rest.len().min(code.lines_len as usize)]
                    });
                let b = &mut self.blocks[block];
                let c = cost::scalar_code_cost(hw, code, lines, &mut b.dcache);
                cost_cycles = c.cycles;
                b.code.instructions += code.instructions();
                b.code.gm_accesses += code.gm_accesses;
                b.code.misses += c.misses;
                b.code.cycles += c.cycles;
                b.spans[idx as usize] = (now, now + cost_cycles);
                b.started_instr[idx as usize] = true;
            }
            InstrKind::SyncAll { generation } => {
                if !self.all_drained(block) {
                    self.blocks[block].scalar_wait_since.get_or_insert(now);
                    return false;
                }
                let generation = *generation;
                let b = &mut self.blocks[block];
                b.scalar_wait_since = None;
                b.at_sync_all = Some(generation);
                b.spans[idx as usize] = (now, Cycle::MAX);
                b.started_instr[idx as usize] = true;
                b.pc += 1;
                b.scalar_free = now + issue;
                b.scalar_busy += issue;
                let arrived = self.sync_all_arrived.entry(generation).or_insert(0);
                *arrived += 1;
                // The high bit marks an AIV-only SyncAll of a MIX launch.
                let members = if generation & (1 << 31) != 0 {
                    self.aiv_blocks as usize
                } else {
                    self.blocks.len()
                };
                if *arrived as usize == members {
                    let cost = hw.sync.sync_all_cycles.round() as Cycle;
                    self.push(now + issue + cost, Event::SyncAllRelease { generation });
                    // Close the spans of every block waiting here.
                    for other in &mut self.blocks {
                        if other.at_sync_all == Some(generation) {
                            for span in other
                                .spans
                                .iter_mut()
                                .filter(|s| s.1 == Cycle::MAX && s.0 != Cycle::MAX)
                            {
                                span.1 = now + issue + cost;
                            }
                        }
                    }
                }
                return true;
            }
        }
        let b = &mut self.blocks[block];
        b.pc += 1;
        b.scalar_free = now + cost_cycles;
        b.scalar_busy += cost_cycles;
        if cost_cycles > 0 && cost::exec_pipe(instr) != Pipe::S {
            b.issues.push((idx, now, now + cost_cycles));
        }
        if cost_cycles > 0 {
            self.push(
                now + cost_cycles,
                Event::Wake {
                    block: block as u32,
                },
            );
        }
        true
    }

    /// Why a block cannot finish (for the deadlock message).
    fn describe_stuck(&self, block: usize) -> String {
        let b = &self.blocks[block];
        let instrs = &self.trace.blocks[block].instrs;
        let name = |idx: u32| -> String {
            let instr = &instrs[idx as usize];
            let what = match &instr.kind {
                InstrKind::WaitFlag { src, dst, key, .. } => {
                    format!(" waits for flag {}->{} {key:?} that is never set", src.name(), dst.name())
                }
                InstrKind::SyncAll { .. } => " waits in SyncAll for blocks that never arrive (Block Dim above the core count, or a block skips it)".to_string(),
                InstrKind::CrossWait { flag, .. } => format!(" waits for cross-core flag {flag} from a core that never runs (Block Dim above the core count)"),
                _ => String::new(),
            };
            match self.trace.loc_of(instr) {
                Some(loc) => format!("{loc}{what}"),
                None => format!("instruction {idx}{what}"),
            }
        };
        if !b.started {
            return "never started (all cores stayed busy)".to_string();
        }
        let mut parts = Vec::new();
        if b.pc < instrs.len() {
            parts.push(format!("scalar unit at {}", name(b.pc as u32)));
        }
        for (pi, p) in b.pipes.iter().enumerate() {
            if let Some(&head) = p.queue.front() {
                parts.push(format!("{} at {}", Pipe::ALL[pi].name(), name(head)));
            }
        }
        if parts.is_empty() {
            "waits for nothing identifiable".to_string()
        } else {
            parts.join("; ")
        }
    }

    fn timeline_of(&self, index: usize, state: &BlockSim) -> BlockTimeline {
        let block = &self.trace.blocks[index];
        let mut spans = Vec::with_capacity(block.instrs.len());
        for (idx, instr) in block.instrs.iter().enumerate() {
            if !state.started_instr[idx] {
                continue;
            }
            let (start, end) = state.spans[idx];
            let end = if end == Cycle::MAX { start } else { end };
            let kind = match &instr.kind {
                InstrKind::Vector { .. }
                | InstrKind::Mmad(_)
                | InstrKind::Dma { .. }
                | InstrKind::Scalar { .. }
                | InstrKind::ScalarCode(_) => SpanKind::Work,
                InstrKind::WaitFlag { .. }
                | InstrKind::SyncAll { .. }
                | InstrKind::CrossWait { .. }
                | InstrKind::Barrier { pipe: None } => SpanKind::Wait,
                InstrKind::SetFlag { .. }
                | InstrKind::CrossSet { .. }
                | InstrKind::Barrier { .. } => SpanKind::Sync,
            };
            let busy_end = state.busy_end[idx].clamp(start, end);
            spans.push(Span {
                instr: idx as u32,
                pipe: cost::exec_pipe(instr),
                start,
                busy_end,
                end,
                kind,
            });
        }
        BlockTimeline {
            block: block.block,
            core_type: state.core_type,
            core: state.core,
            start: state.start,
            end: state.end,
            scalar_busy: state.scalar_busy,
            spans,
            issues: state.issues.clone(),
            flag_pairs: state.flag_pairs.clone(),
            code: state.code,
            l2: state.l2,
        }
    }
}
