//! Races between the cores of a MIX launch: GM bytes one core writes and
//! another reads or writes with no cross-core synchronisation between
//! them (an AIC's Fixpipe into a workspace and the AIVs' loads of it).
//!
//! Happens-before across cores:
//! - an access x of core A is released by the first CrossCoreSetFlag (or
//!   SyncAll) s of A whose pipe clock knows x: the set on the pipe that
//!   did the access, or on a pipe that waited for it through a flag; a set
//!   on the scalar unit does not wait for the Fixpipe or an MTE before it;
//! - a CrossCoreWaitFlag w of core B that consumed s (the runtime records
//!   which sets each wait consumed) learns everything s knew, and an
//!   access y of B whose pipe clock knows w comes after it;
//! - SyncAll is a set and a wait over every core it waits for;
//! - knowledge is transitive (vector clocks over the cores, counting each
//!   core's sets).
//!
//! Only launches with both kinds of core are checked: the other blocks of
//! a launch share no GM by design, and their SyncAll-ordered use of GM is
//! outside this checker's scope. Two atomic writes never race.
//!
//! Invariant: reads only the trace and the per-block clocks of the pipe
//! checker. Findings are data, never panics.

use super::{describe, intersection, pipe_index, region_text, Clock, Report, MAX_RACE_FINDINGS};
use crate::launch::Finding;
use crate::trace::{InstrKind, Mem, Pipe, Region, Trace};
use std::collections::HashMap;

/// Most GM accesses examined per launch (a larger trace is checked on its
/// first accesses only).
const MAX_ACCESSES: usize = 200_000;

/// A cross-core event of one core, in program order.
#[derive(Debug, Clone)]
enum Event {
    /// A set (CrossSet, or SyncAll's arrival): instruction index.
    Set { idx: u32 },
    /// A wait: instruction index and the sets it consumed.
    Wait { idx: u32, sources: Vec<(u32, u32)> },
}

/// What each core knew at its sets and after its waits.
struct Knowledge {
    /// Per core: (instruction, set number 1.., vector clock) of its sets.
    sets: Vec<Vec<(u32, u32, Vec<u32>)>>,
    /// Per core: (instruction, vector clock) after each wait.
    waits: Vec<Vec<(u32, Vec<u32>)>>,
}

fn events_of(trace: &Trace) -> Vec<Vec<Event>> {
    // SyncAll: the k-th SyncAll with a tag on every member core meets.
    let mut barriers: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    for (b, block) in trace.blocks.iter().enumerate() {
        for (i, instr) in block.instrs.iter().enumerate() {
            if let InstrKind::SyncAll { generation } = instr.kind {
                barriers
                    .entry(generation)
                    .or_default()
                    .push((b as u32, i as u32));
            }
        }
    }
    trace
        .blocks
        .iter()
        .map(|block| {
            let mut out = Vec::new();
            for (i, instr) in block.instrs.iter().enumerate() {
                let idx = i as u32;
                match &instr.kind {
                    InstrKind::CrossSet { .. } => out.push(Event::Set { idx }),
                    InstrKind::CrossWait { sources, .. } => out.push(Event::Wait {
                        idx,
                        sources: sources.clone(),
                    }),
                    InstrKind::SyncAll { generation } => {
                        out.push(Event::Set { idx });
                        out.push(Event::Wait {
                            idx,
                            sources: barriers.get(generation).cloned().unwrap_or_default(),
                        });
                    }
                    _ => {}
                }
            }
            out
        })
        .collect()
}

/// Runs the cores' events in an order that respects every wait.
fn knowledge(trace: &Trace, events: &[Vec<Event>]) -> Knowledge {
    let n = trace.blocks.len();
    let mut know = Knowledge {
        sets: vec![Vec::new(); n],
        waits: vec![Vec::new(); n],
    };
    let mut clock: Vec<Vec<u32>> = vec![vec![0; n]; n];
    let mut cursor = vec![0usize; n];
    // (core, instruction) -> the clock its set carried.
    let mut carried: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    loop {
        let mut progress = false;
        for core in 0..n {
            while let Some(event) = events[core].get(cursor[core]) {
                match event {
                    Event::Set { idx } => {
                        clock[core][core] += 1;
                        let number = clock[core][core];
                        know.sets[core].push((*idx, number, clock[core].clone()));
                        carried.insert((core as u32, *idx), clock[core].clone());
                    }
                    Event::Wait { idx, sources } => {
                        if !sources.iter().all(|s| carried.contains_key(s)) {
                            break;
                        }
                        for s in sources {
                            if let Some(c) = carried.get(s) {
                                for (mine, theirs) in clock[core].iter_mut().zip(c) {
                                    *mine = (*mine).max(*theirs);
                                }
                            }
                        }
                        know.waits[core].push((*idx, clock[core].clone()));
                    }
                }
                cursor[core] += 1;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    know
}

/// The bytes of a GM access: `count` bursts of `blen` bytes, `stride`
/// apart, from the region's start (a strided DMA's region is the range it
/// spans; its bursts are what it touches).
#[derive(Debug, Clone, Copy)]
struct Bursts {
    stride: u64,
    blen: u64,
    count: u64,
}

impl Bursts {
    fn of(instr: &crate::trace::Instr, region: &Region) -> Bursts {
        let whole = Bursts {
            stride: region.len,
            blen: region.len,
            count: 1,
        };
        match instr.kind {
            InstrKind::Dma {
                bursts,
                burst_bytes,
                gm_strided: true,
                ..
            } if bursts > 1 && burst_bytes > 0 && region.len > burst_bytes => {
                let gaps = u64::from(bursts) - 1;
                let span = region.len - burst_bytes;
                if span.is_multiple_of(gaps) && span / gaps >= burst_bytes {
                    Bursts {
                        stride: span / gaps,
                        blen: burst_bytes,
                        count: u64::from(bursts),
                    }
                } else {
                    whole
                }
            }
            _ => whole,
        }
    }
}

/// True when some burst of `x` meets some burst of `y` (regions of one GM
/// space whose ranges overlap).
fn touch_same_bytes(x: &Access, y: &Access) -> bool {
    let (a, b) = if x.bursts.count <= y.bursts.count {
        (x, y)
    } else {
        (y, x)
    };
    let (bs, bb) = (b.region.start, b.bursts);
    for i in 0..a.bursts.count.min(1 << 16) {
        let s = a.region.start + i * a.bursts.stride;
        let e = s + a.bursts.blen;
        // Bursts j of b with bs + j * stride < e and bs + j * stride + blen > s.
        let lo = if s + 1 > bs + bb.blen {
            (s + 1 - bb.blen - bs).div_ceil(bb.stride.max(1))
        } else {
            0
        };
        if e <= bs {
            continue;
        }
        let hi = (e - 1 - bs) / bb.stride.max(1);
        if lo <= hi && lo < bb.count {
            return true;
        }
    }
    false
}

#[derive(Debug, Clone, Copy)]
struct Access {
    core: u32,
    idx: u32,
    pipe: Pipe,
    region: Region,
    bursts: Bursts,
    write: bool,
    atomic: bool,
    /// Number of the first set of its core that releases it (u32::MAX:
    /// none does).
    released_by: u32,
    /// Index into the core's waits of the last wait it comes after.
    after_wait: Option<usize>,
}

fn core_name(trace: &Trace, core: u32) -> String {
    match trace.blocks.get(core as usize).and_then(|b| b.role) {
        Some(r) if r.cube => format!("the AIC of AI core {}", r.group),
        Some(r) => format!("AIV {} of AI core {}", r.sub, r.group),
        None => format!("block {core}"),
    }
}

/// Reports GM races between the cores of a MIX launch.
pub(super) fn check_cores(trace: &Trace, clocks: &[Vec<Clock>], report: &mut Report) {
    let roles: Vec<_> = trace.blocks.iter().map(|b| b.role).collect();
    let mixed = roles.iter().any(|r| r.is_some_and(|r| r.cube))
        && roles.iter().any(|r| r.is_some_and(|r| !r.cube));
    if !mixed || clocks.len() != trace.blocks.len() {
        return;
    }
    let events = events_of(trace);
    let know = knowledge(trace, &events);
    let mut accesses = Vec::new();
    'blocks: for (core, block) in trace.blocks.iter().enumerate() {
        let core_clocks = &clocks[core];
        let sets: Vec<(u32, Pipe, u32)> = know.sets[core]
            .iter()
            .map(|(idx, number, _)| {
                let pipe = super::exec_pipe(&block.instrs[*idx as usize]);
                (*idx, pipe, *number)
            })
            .collect();
        for (i, instr) in block.instrs.iter().enumerate() {
            let gm: Vec<(Region, bool)> = instr
                .reads
                .iter()
                .map(|r| (*r, false))
                .chain(instr.writes.iter().map(|w| (*w, true)))
                .filter(|(r, _)| r.mem == Mem::Gm && r.len > 0)
                .collect();
            if gm.is_empty() {
                continue;
            }
            let pipe = super::exec_pipe(instr);
            let pi = pipe_index(pipe);
            let mine = core_clocks.get(i).copied().unwrap_or([0; 7]);
            let released_by = sets
                .iter()
                .find(|(idx, _, _)| {
                    *idx as usize > i
                        && core_clocks
                            .get(*idx as usize)
                            .is_some_and(|c| c[pi] >= mine[pi])
                })
                .map_or(u32::MAX, |s| s.2);
            let after_wait = know.waits[core].iter().rposition(|(w, _)| {
                let w = *w as usize;
                if w >= i {
                    return false;
                }
                let wp = pipe_index(super::exec_pipe(&block.instrs[w]));
                core_clocks.get(w).is_some_and(|c| mine[wp] >= c[wp])
            });
            let atomic = matches!(instr.kind, InstrKind::Dma { atomic: true, .. });
            for (region, write) in gm {
                if accesses.len() >= MAX_ACCESSES {
                    break 'blocks;
                }
                accesses.push(Access {
                    core: core as u32,
                    idx: i as u32,
                    pipe,
                    region,
                    bursts: Bursts::of(instr, &region),
                    write,
                    atomic,
                    released_by,
                    after_wait,
                });
            }
        }
    }
    let before = |x: &Access, y: &Access| -> bool {
        x.released_by != u32::MAX
            && y.after_wait
                .is_some_and(|w| know.waits[y.core as usize][w].1[x.core as usize] >= x.released_by)
    };
    // Sweep each GM space by start address.
    accesses.sort_by_key(|a| (a.region.space, a.region.start));
    for (i, x) in accesses.iter().enumerate() {
        let end = x.region.start + x.region.len;
        for y in &accesses[i + 1..] {
            if y.region.space != x.region.space || y.region.start >= end {
                break;
            }
            if y.core == x.core
                || !(x.write || y.write)
                || (x.atomic && y.atomic)
                || !touch_same_bytes(x, y)
            {
                continue;
            }
            if before(x, y) || before(y, x) {
                continue;
            }
            let (first, second) = if (x.core, x.idx) <= (y.core, y.idx) {
                (x, y)
            } else {
                (y, x)
            };
            let fi = &trace.blocks[first.core as usize].instrs[first.idx as usize];
            let si = &trace.blocks[second.core as usize].instrs[second.idx as usize];
            let key = (fi.loc, si.loc, first.pipe, second.pipe);
            if !report.seen_races.insert(key) {
                continue;
            }
            report.races += 1;
            if report.races > MAX_RACE_FINDINGS {
                report.suppressed += 1;
                continue;
            }
            let verb = |w: bool| if w { "writes" } else { "reads" };
            report.findings.push(Finding {
                kind: "race".to_string(),
                message: format!(
                    "race across cores on {}: {} ({}, {}, {}) and {} ({}, {}, {}) are not ordered by CrossCoreSetFlag/CrossCoreWaitFlag or SyncAll (a set on the pipe that made the access, consumed by a wait the other access comes after); on the device the cores run concurrently",
                    region_text(&intersection(&first.region, &second.region)),
                    describe(trace, fi),
                    core_name(trace, first.core),
                    first.pipe.name(),
                    verb(first.write),
                    describe(trace, si),
                    core_name(trace, second.core),
                    second.pipe.name(),
                    verb(second.write),
                ),
                loc: trace.loc_of(si).cloned(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(start: u64, stride: u64, blen: u64, count: u64) -> Access {
        Access {
            core: 0,
            idx: 0,
            pipe: Pipe::Fix,
            region: Region {
                mem: Mem::Gm,
                space: 0,
                start,
                len: (count - 1) * stride + blen,
            },
            bursts: Bursts {
                stride,
                blen,
                count,
            },
            write: true,
            atomic: false,
            released_by: u32::MAX,
            after_wait: None,
        }
    }

    #[test]
    fn interleaved_column_blocks_do_not_touch_the_same_bytes() {
        // Two cores' 64-byte rows of one 256-byte-wide matrix, side by side.
        let left = access(0, 256, 64, 8);
        let right = access(64, 256, 64, 8);
        assert!(!touch_same_bytes(&left, &right));
        // Shifted by 32 bytes they overlap.
        let shifted = access(32, 256, 64, 8);
        assert!(touch_same_bytes(&left, &shifted));
        // A contiguous read of row 3 meets the left block's row 3.
        let row = access(3 * 256, 256, 256, 1);
        assert!(touch_same_bytes(&left, &row));
        // One past the last burst does not.
        let after = access(7 * 256 + 64, 1, 100, 1);
        assert!(!touch_same_bytes(&left, &after));
    }
}
