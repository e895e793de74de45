//! Checkers over the instruction trace: races between pipes and misuse of
//! flags. A race is a read and a write (or two writes) of overlapping bytes
//! by two different pipes of one core with no happens-before edge between
//! them: on the device the pipes run concurrently, so the result depends on
//! timing even when the CPU run happened to be right.
//!
//! Happens-before (vector clocks, one component per pipe):
//! - program order within a pipe (each pipe runs its instructions in order);
//! - SetFlag on pipe A -> the WaitFlag on pipe B that consumes it (queue
//!   EnQue/DeQue and FreeTensor/AllocTensor are such pairs, lowered by the
//!   runtime);
//! - PipeBarrier<PIPE_ALL> and SyncAll order everything before them before
//!   everything after them;
//! - the scalar unit issues in program order, so a scalar instruction
//!   happens before every later instruction.
//!
//! Scalar GetValue/SetValue are not reported: bisheng's automatic sync
//! (`--cce-auto-sync`, on by default, [G §2.9.4.1]) inserts their S<->V/MTE
//! flags, and the timing model waits as those would. So a scalar access
//! happens after every earlier conflicting access, and (program order of
//! the scalar unit) before everything issued after it.
//!
//! Flag checks: a SetFlag again before a WaitFlag consumed the previous one
//! (illegal, [G §6.2.3.7]); a user flag or an EnQue left set at the end of
//! the kernel (leftover flags break later kernels, [G §2.6.3.2]; FreeTensor
//! flags are left set by design, InitBuffer pre-sets them); a WaitFlag that
//! can never be satisfied (the device would hang); PipeBarrier<PIPE_S>
//! (a hardware error).
//!
//! Invariant: reads only the trace. Findings are data, never panics.

use crate::launch::Finding;
use crate::trace::{BlockTrace, FlagKey, Instr, InstrKind, Mem, Pipe, Region, SyncOrigin, Trace};
use std::collections::{HashMap, HashSet, VecDeque};

mod benign;
mod cross;
pub mod untraced;
pub use untraced::{untraced_output_writes, OutputBytes};

/// Races reported at most (the rest are counted in one last finding).
const MAX_RACE_FINDINGS: usize = 20;
/// Live accesses kept per memory before the oldest are dropped (only an
/// unsynchronised kernel gets there; races among the dropped are missed).
const MAX_LIVE_ACCESSES: usize = 4096;

type Clock = [u32; 7];

/// An Mmad with unitFlag and a later Fixpipe with unitFlag on its L0C
/// tile: the hardware moves each fractal once the cube finished it (guide
/// 6.2.3.2.1.12, table 6-197), so they need no flag between them.
fn unit_flag_pair(first: &Instr, later: &Instr) -> bool {
    matches!(&first.kind, InstrKind::Mmad(shape) if matches!(shape.unit_flag, 2 | 3))
        && matches!(
            later.kind,
            InstrKind::Dma {
                dir: crate::trace::DmaDir::L0cOutUnit,
                ..
            }
        )
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

fn join(into: &mut Clock, other: &Clock) {
    for (a, b) in into.iter_mut().zip(other) {
        *a = (*a).max(*b);
    }
}

/// The pipe that executes an instruction.
fn exec_pipe(instr: &Instr) -> Pipe {
    crate::timing::cost::exec_pipe(instr)
}

/// True for instructions the scalar unit executes itself.
fn on_scalar(instr: &Instr) -> bool {
    match &instr.kind {
        InstrKind::Scalar { .. } | InstrKind::SyncAll { .. } | InstrKind::ScalarCode(_) => true,
        InstrKind::Barrier { pipe } => matches!(pipe, None | Some(Pipe::S)),
        InstrKind::SetFlag { src, .. } => *src == Pipe::S,
        InstrKind::WaitFlag { dst, .. } => *dst == Pipe::S,
        InstrKind::CrossSet { pipe, .. } | InstrKind::CrossWait { pipe, .. } => *pipe == Pipe::S,
        InstrKind::Vector { .. } | InstrKind::Dma { .. } | InstrKind::Mmad(_) => false,
    }
}

/// One memory access still able to race with a later one.
#[derive(Debug, Clone, Copy)]
struct Access {
    region: Region,
    write: bool,
    pipe: Pipe,
    /// The pipe's clock component at the access.
    clock: u32,
    /// The whole clock at the access (joined by auto-synced scalar
    /// accesses).
    full: Clock,
    idx: u32,
}

type FlagId = (Pipe, Pipe, FlagKey);

/// A set waiting for its wait.
#[derive(Debug, Clone, Copy)]
struct SetRecord {
    clock: Clock,
}

/// State of the check of one block.
struct BlockCheck<'t> {
    trace: &'t Trace,
    block: &'t BlockTrace,
    pipe_clock: [Clock; 7],
    pending: [VecDeque<(u32, Clock)>; 7],
    sets: HashMap<FlagId, VecDeque<SetRecord>>,
    live: HashMap<Mem, Vec<Access>>,
    inserted_since_prune: usize,
    /// Last program index at which each pipe is used.
    last_use: [Option<usize>; 7],
    position: usize,
    /// The clock of each instruction's pipe once it ran (zero for those
    /// that never ran).
    clocks: Vec<Clock>,
}

/// Global state across blocks (dedup of races).
#[derive(Default)]
struct Report {
    findings: Vec<Finding>,
    seen_races: HashSet<(u32, u32, Pipe, Pipe)>,
    /// Races found harmless ([`benign`]), by the same key: one note each.
    seen_benign: HashSet<(u32, u32, Pipe, Pipe)>,
    /// What reads GM, built at the first race a copy out takes part in.
    gm_reads: Option<benign::GmReads>,
    races: usize,
    suppressed: usize,
}

impl Report {
    fn push(&mut self, kind: &str, message: String) {
        self.findings.push(Finding {
            kind: kind.to_string(),
            message,
            loc: None,
        });
    }
}

fn describe(trace: &Trace, instr: &Instr) -> String {
    match trace.loc_of(instr) {
        Some(loc) => loc.to_string(),
        None => "an API call (unknown location)".to_string(),
    }
}

fn region_text(region: &Region) -> String {
    let end = region.start + region.len;
    match region.mem {
        Mem::Gm => format!(
            "GM allocation #{} bytes [{:#x}, {:#x})",
            region.space, region.start, end
        ),
        other => format!("{} [{:#x}, {:#x})", other.name(), region.start, end),
    }
}

fn intersection(a: &Region, b: &Region) -> Region {
    let start = a.start.max(b.start);
    let end = (a.start + a.len).min(b.start + b.len);
    Region {
        mem: a.mem,
        space: a.space,
        start,
        len: end.saturating_sub(start),
    }
}

fn flag_text(src: Pipe, dst: Pipe, key: &FlagKey) -> String {
    match key {
        FlagKey::User { id } => format!("{}->{} event id {id}", src.name(), dst.name()),
        FlagKey::Slot {
            queue,
            slot,
            forward,
        } => format!(
            "{}->{} {} flag of queue {queue} slot {slot}",
            src.name(),
            dst.name(),
            if *forward {
                "EnQue/DeQue"
            } else {
                "FreeTensor/AllocTensor"
            }
        ),
    }
}

/// The kind of the finding of a race no output can see ([`benign`]): a
/// note, not a hazard ([`split_notes`]).
pub const BENIGN_RACE: &str = "race-benign";

/// Splits [`check`]'s findings into the hazards and the notes (the
/// [`BENIGN_RACE`] findings).
pub fn split_notes(findings: Vec<Finding>) -> (Vec<Finding>, Vec<Finding>) {
    findings.into_iter().partition(|f| f.kind != BENIGN_RACE)
}

/// Checks a trace: races between pipes and flag misuse, one finding per
/// problem (races deduplicated by source lines over all blocks). Races
/// that cannot change any output are [`BENIGN_RACE`] notes.
pub fn check(trace: &Trace) -> Vec<Finding> {
    let mut report = Report::default();
    let mut clocks = Vec::with_capacity(trace.blocks.len());
    for block in &trace.blocks {
        check_flag_balance(trace, block, &mut report);
        let mut state = BlockCheck::new(trace, block);
        state.run(&mut report);
        clocks.push(state.clocks);
    }
    cross::check_cores(trace, &clocks, &mut report);
    if report.suppressed > 0 {
        report.push(
            "race",
            format!("{} more races not shown", report.suppressed),
        );
    }
    report.findings
}

/// Program-order flag checks: double sets and leftover flags.
fn check_flag_balance(trace: &Trace, block: &BlockTrace, report: &mut Report) {
    // sets minus waits so far, and the last set's instruction.
    let mut balance: HashMap<FlagId, (i64, usize)> = HashMap::new();
    let mut order: Vec<FlagId> = Vec::new();
    for (idx, instr) in block.instrs.iter().enumerate() {
        match &instr.kind {
            InstrKind::SetFlag { src, dst, key, .. } => {
                let id = (*src, *dst, *key);
                let entry = balance.entry(id).or_insert_with(|| {
                    order.push(id);
                    (0, idx)
                });
                if entry.0 >= 1 {
                    let first = &block.instrs[entry.1];
                    report.push(
                        "flag-double-set",
                        format!(
                            "{} sets flag {} again before a WaitFlag consumed the set by {} (block {}); setting the same flag twice in a row is illegal",
                            describe(trace, instr),
                            flag_text(*src, *dst, key),
                            describe(trace, first),
                            block.block
                        ),
                    );
                }
                entry.0 += 1;
                entry.1 = idx;
            }
            InstrKind::WaitFlag { src, dst, key, .. } => {
                let id = (*src, *dst, *key);
                let entry = balance.entry(id).or_insert_with(|| {
                    order.push(id);
                    (0, idx)
                });
                entry.0 -= 1;
            }
            InstrKind::Barrier { pipe: Some(Pipe::S) } => report.push(
                "invalid-barrier",
                format!(
                    "{} is PipeBarrier<PIPE_S>, a hardware error on the device [G §6.2.3.7] (block {})",
                    describe(trace, instr),
                    block.block
                ),
            ),
            _ => {}
        }
    }
    for id in order {
        let (count, last) = balance[&id];
        if count <= 0 {
            continue;
        }
        let (src, dst, key) = id;
        let exempt = matches!(key, FlagKey::Slot { forward: false, .. });
        if exempt {
            continue;
        }
        let instr = &block.instrs[last];
        let what = match &instr.kind {
            InstrKind::SetFlag {
                origin: SyncOrigin::EnQue,
                ..
            } => "a tensor enqueued but never dequeued",
            _ => "a SetFlag without its WaitFlag",
        };
        report.push(
            "flag-leak",
            format!(
                "flag {} is still set at the end of the kernel ({what}; last set by {}, block {}); leftover flags break later kernels",
                flag_text(src, dst, &key),
                describe(trace, instr),
                block.block
            ),
        );
    }
}

impl<'t> BlockCheck<'t> {
    fn new(trace: &'t Trace, block: &'t BlockTrace) -> BlockCheck<'t> {
        let mut last_use = [None; 7];
        for (idx, instr) in block.instrs.iter().enumerate() {
            last_use[pipe_index(exec_pipe(instr))] = Some(idx);
        }
        BlockCheck {
            trace,
            block,
            pipe_clock: [[0; 7]; 7],
            pending: Default::default(),
            sets: HashMap::new(),
            live: HashMap::new(),
            inserted_since_prune: 0,
            last_use,
            position: 0,
            clocks: vec![[0; 7]; block.instrs.len()],
        }
    }

    fn instr(&self, idx: u32) -> &'t Instr {
        &self.block.instrs[idx as usize]
    }

    fn run(&mut self, report: &mut Report) {
        let s = pipe_index(Pipe::S);
        for idx in 0..self.block.instrs.len() {
            self.position = idx;
            let instr = self.instr(idx as u32);
            if !on_scalar(instr) {
                let pi = pipe_index(exec_pipe(instr));
                let snapshot = self.pipe_clock[s];
                self.pending[pi].push_back((idx as u32, snapshot));
                self.drain(report);
                continue;
            }
            match &instr.kind {
                InstrKind::SetFlag { src, dst, key, .. } => {
                    self.pipe_clock[s][s] += 1;
                    let clock = self.pipe_clock[s];
                    self.sets
                        .entry((*src, *dst, *key))
                        .or_default()
                        .push_back(SetRecord { clock });
                    self.drain(report);
                }
                InstrKind::WaitFlag { src, dst, key, .. } => {
                    self.drain(report);
                    match self
                        .sets
                        .get_mut(&(*src, *dst, *key))
                        .and_then(|q| q.pop_front())
                    {
                        Some(record) => {
                            join(&mut self.pipe_clock[s], &record.clock);
                            self.pipe_clock[s][s] += 1;
                        }
                        None => {
                            report.push(
                                "deadlock",
                                format!(
                                    "{} makes the scalar unit wait for flag {} that is never set before it (block {}); the device would hang",
                                    describe(self.trace, instr),
                                    flag_text(*src, *dst, key),
                                    self.block.block
                                ),
                            );
                            return;
                        }
                    }
                }
                InstrKind::Barrier { pipe: None } | InstrKind::SyncAll { .. } => {
                    self.drain(report);
                    if let Some(stuck) = self.first_blocked() {
                        self.report_stuck(stuck, report);
                        return;
                    }
                    let mut all = [0; 7];
                    for clock in &self.pipe_clock {
                        join(&mut all, clock);
                    }
                    all[s] += 1;
                    self.pipe_clock = [all; 7];
                }
                InstrKind::Scalar { .. } => {
                    // The compiler's automatic sync makes the scalar unit
                    // wait for earlier conflicting accesses of every pipe.
                    self.drain(report);
                    let mut clock = self.pipe_clock[s];
                    for (region, write) in instr
                        .reads
                        .iter()
                        .map(|r| (r, false))
                        .chain(instr.writes.iter().map(|w| (w, true)))
                    {
                        if let Some(list) = self.live.get(&region.mem) {
                            for old in list {
                                if (old.write || write) && old.region.overlaps(region) {
                                    join(&mut clock, &old.full);
                                }
                            }
                        }
                    }
                    self.pipe_clock[s] = clock;
                    self.pipe_clock[s][s] += 1;
                }
                // PipeBarrier<PIPE_S> (reported by the flag pass).
                _ => {
                    self.pipe_clock[s][s] += 1;
                }
            }
            self.clocks[idx] = self.pipe_clock[s];
        }
        self.drain(report);
        if let Some(stuck) = self.first_blocked() {
            self.report_stuck(stuck, report);
        }
    }

    fn first_blocked(&self) -> Option<u32> {
        self.pending
            .iter()
            .find_map(|q| q.front().map(|(idx, _)| *idx))
    }

    fn report_stuck(&self, idx: u32, report: &mut Report) {
        let instr = self.instr(idx);
        let what = match &instr.kind {
            InstrKind::WaitFlag { src, dst, key, .. } => {
                format!(
                    "waits for flag {} that is never set",
                    flag_text(*src, *dst, key)
                )
            }
            _ => "cannot run".to_string(),
        };
        report.push(
            "deadlock",
            format!(
                "{} {what} (block {}); the device would hang",
                describe(self.trace, instr),
                self.block.block
            ),
        );
    }

    /// Runs every pipe as far as its flags allow.
    fn drain(&mut self, report: &mut Report) {
        loop {
            let mut progress = false;
            for pi in 1..7 {
                while self.step(pi, report) {
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
    }

    /// Processes the head of pipe `pi`; false when empty or blocked.
    fn step(&mut self, pi: usize, report: &mut Report) -> bool {
        let Some(&(idx, snapshot)) = self.pending[pi].front() else {
            return false;
        };
        let instr = self.instr(idx);
        join(&mut self.pipe_clock[pi], &snapshot);
        match &instr.kind {
            InstrKind::WaitFlag { src, dst, key, .. } => {
                let Some(record) = self
                    .sets
                    .get_mut(&(*src, *dst, *key))
                    .and_then(|q| q.pop_front())
                else {
                    return false;
                };
                join(&mut self.pipe_clock[pi], &record.clock);
                self.pipe_clock[pi][pi] += 1;
            }
            InstrKind::SetFlag { src, dst, key, .. } => {
                self.pipe_clock[pi][pi] += 1;
                let clock = self.pipe_clock[pi];
                self.sets
                    .entry((*src, *dst, *key))
                    .or_default()
                    .push_back(SetRecord { clock });
            }
            _ => {
                self.pipe_clock[pi][pi] += 1;
                self.accesses(pi, idx, instr, report);
            }
        }
        self.pending[pi].pop_front();
        self.clocks[idx as usize] = self.pipe_clock[pi];
        true
    }

    /// Race checks of one instruction's accesses, then records them.
    fn accesses(&mut self, pi: usize, idx: u32, instr: &'t Instr, report: &mut Report) {
        let pipe = Pipe::ALL[pi];
        let clock = self.pipe_clock[pi];
        let new_accesses = instr
            .reads
            .iter()
            .map(|r| (r, false))
            .chain(instr.writes.iter().map(|w| (w, true)));
        for (region, write) in new_accesses {
            if region.len == 0 {
                continue;
            }
            let list = self.live.entry(region.mem).or_default();
            for old in list.iter() {
                if old.pipe == pipe
                    || !(old.write || write)
                    || clock[pipe_index(old.pipe)] >= old.clock
                    || !old.region.overlaps(region)
                {
                    continue;
                }
                let first = &self.block.instrs[old.idx as usize];
                if unit_flag_pair(first, instr) {
                    continue;
                }
                let key = (first.loc, instr.loc, old.pipe, pipe);
                if report.seen_races.contains(&key) {
                    continue;
                }
                let both = intersection(&old.region, region);
                let verb = |w: bool| if w { "writes" } else { "reads" };
                // A read-write race whose read is a copy out that a later
                // copy of the same pipe overwrites: a note, not a hazard.
                let reader = match (old.write, write) {
                    (true, false) => Some(idx),
                    (false, true) => Some(old.idx),
                    _ => None,
                };
                let harmless = reader.and_then(|r| {
                    let reads = report
                        .gm_reads
                        .get_or_insert_with(|| benign::GmReads::of(self.trace));
                    benign::overwritten_read(self.trace, self.block, r, &both, reads)
                });
                if let Some(why) = harmless {
                    if report.seen_benign.insert(key) {
                        report.findings.push(Finding {
                            kind: BENIGN_RACE.to_string(),
                            loc: self.trace.loc_of(instr).cloned(),
                            message: format!(
                                "race on {}: {} ({}, {}) and {} ({}, {}) are not ordered (block {}), \
                                 but no output depends on it: {why}. Allowed; the copy still reads \
                                 a buffer another pipe is writing, worth ordering",
                                region_text(&both),
                                describe(self.trace, first),
                                old.pipe.name(),
                                verb(old.write),
                                describe(self.trace, instr),
                                pipe.name(),
                                verb(write),
                                self.block.block
                            ),
                        });
                    }
                    continue;
                }
                report.seen_races.insert(key);
                report.races += 1;
                if report.races > MAX_RACE_FINDINGS {
                    report.suppressed += 1;
                    continue;
                }
                report.findings.push(Finding {
                    kind: "race".to_string(),
                    loc: self.trace.loc_of(instr).cloned(),
                    message: format!(
                        "race on {}: {} ({}, {}) and {} ({}, {}) are not ordered by any EnQue/DeQue, SetFlag/WaitFlag or PIPE_ALL barrier between {} and {} (block {}); on the device they run concurrently",
                        region_text(&both),
                        describe(self.trace, first),
                        old.pipe.name(),
                        verb(old.write),
                        describe(self.trace, instr),
                        pipe.name(),
                        verb(write),
                        old.pipe.name(),
                        pipe.name(),
                        self.block.block
                    ),
                });
            }
            list.push(Access {
                region: *region,
                write,
                pipe,
                clock: clock[pi],
                full: clock,
                idx,
            });
            self.inserted_since_prune += 1;
        }
        if self.inserted_since_prune >= 64 {
            self.prune();
        }
    }

    /// Drops accesses every pipe that will still run is ordered after.
    fn prune(&mut self) {
        self.inserted_since_prune = 0;
        let position = self.position;
        let mut still_used = [false; 7];
        for (pi, used) in still_used.iter_mut().enumerate().skip(1) {
            *used = !self.pending[pi].is_empty()
                || self.last_use[pi].is_some_and(|last| last > position);
        }
        let clocks = self.pipe_clock;
        for list in self.live.values_mut() {
            list.retain(|a| {
                let ai = pipe_index(a.pipe);
                (1..7).any(|r| r != ai && still_used[r] && clocks[r][ai] < a.clock)
            });
            if list.len() > MAX_LIVE_ACCESSES {
                let excess = list.len() - MAX_LIVE_ACCESSES / 2;
                list.drain(..excess);
            }
        }
    }
}

#[cfg(test)]
mod tests;
