//! Where a launch spends its time, by kernel source line: the measurement
//! a diagnosis names lines from.
//!
//! [`hotspots`] reads the slowest block of a timed launch (the block that
//! sets the task duration) and sums, for every API call site (file, line,
//! API), what its instructions cost: pipe busy time, time pipes or the
//! scalar unit waited at it (flags, `PipeBarrier<PIPE_ALL>`), scalar-unit
//! time (issue cycles, scalar accesses and whatever else runs on the
//! scalar pipe), copy sizes and the share of copy time that is fixed cost
//! (issue and latency, paid per copy whatever its size). It also finds GM
//! data the block reads more than once (the bytes its copies read from one
//! allocation against the bytes they cover) and the highest UB byte the
//! block touches.
//!
//! Invariant: like the rest of `timing`, a pure function of the trace, the
//! timeline and the profile; it reads no tensor values.

use super::cost;
use super::hw::HwProfile;
use super::Timeline;
use crate::trace::{DmaDir, InstrKind, Mem, Pipe, ScalarOp, Trace};
use std::collections::BTreeMap;

pub use ascendopt_device::profile::{GmReread, Hotspots, LineCost};

/// Call sites kept (the most expensive ones).
const MAX_LINES: usize = 24;

/// A block reads an allocation "again" when its copies read at least this
/// many times the bytes they cover.
const REREAD_FACTOR: f64 = 1.5;

/// Smallest covered size for a re-read to be reported, unless the block
/// copies it many times (a few scalars read once are not a second pass
/// over the data; the same few bytes copied in for every tile are).
const REREAD_MIN_BYTES: u64 = 1024;
/// Copies of the same data from which a small re-read is reported.
const REREAD_MIN_COPIES: u64 = 4;

#[derive(Default)]
struct Acc {
    kind: &'static str,
    pipe: &'static str,
    count: u64,
    busy: u64,
    wait: u64,
    scalar: u64,
    bytes: u64,
    dmas: u64,
    fixed: f64,
    total: f64,
}

fn pipe_name(pipe: Pipe) -> &'static str {
    pipe.name()
}

/// GM reads of one allocation: byte intervals, bytes read, bytes per site.
type GmReads = (Vec<(u64, u64)>, u64, BTreeMap<u32, u64>);
/// Copies of one GM range: how many, and how many per site.
type RangeCopies = (u64, BTreeMap<u32, u64>);

/// The hotspots of a timed launch (None when no block ran).
pub fn hotspots(trace: &Trace, timeline: &Timeline, hw: &HwProfile) -> Option<Hotspots> {
    let (index, block) = timeline
        .blocks
        .iter()
        .enumerate()
        .max_by_key(|(_, b)| b.end.saturating_sub(b.start))?;
    let instrs = &trace.blocks.get(index)?.instrs;
    let block_cycles = block.end.saturating_sub(block.start).max(1);
    let mut sites: BTreeMap<u32, Acc> = BTreeMap::new();
    let mut ub_top = 0u64;
    // GM reads per allocation: (intervals, bytes read, per-site bytes).
    let mut gm_reads: BTreeMap<u32, GmReads> = BTreeMap::new();
    let mut gm_copies: BTreeMap<u32, u64> = BTreeMap::new();
    // The same GM range copied in again and again: (space, start, len) →
    // (copies, sites).
    let mut same_range: BTreeMap<(u32, u64, u64), RangeCopies> = BTreeMap::new();
    for span in &block.spans {
        let Some(instr) = instrs.get(span.instr as usize) else {
            continue;
        };
        for r in instr.reads.iter().chain(&instr.writes) {
            if r.mem == Mem::Ub {
                ub_top = ub_top.max(r.start + r.len);
            }
        }
        let dur = span.end.saturating_sub(span.start);
        let acc = sites.entry(instr.loc).or_default();
        acc.count += 1;
        let issue = cost::issue_cycles(hw, &instr.kind);
        match &instr.kind {
            InstrKind::Dma {
                dir,
                bytes,
                bursts,
                burst_bytes,
                gm_offset,
                gm_strided,
                ..
            } => {
                acc.kind = "dma";
                acc.pipe = pipe_name(span.pipe);
                acc.busy += dur;
                acc.scalar += issue;
                acc.bytes += bytes;
                acc.dmas += 1;
                let c = cost::dma_cost(
                    hw,
                    instr,
                    *dir,
                    *bytes,
                    *bursts,
                    *burst_bytes,
                    *gm_offset,
                    *gm_strided,
                );
                let fixed = (c.issue + c.latency) as f64;
                let moving = if c.rate_cap > 0.0 {
                    c.charged_bytes / c.rate_cap
                } else {
                    0.0
                };
                acc.fixed += fixed;
                acc.total += fixed + moving;
                if matches!(dir, DmaDir::GmToUb | DmaDir::GmToL1) {
                    for r in instr.reads.iter().filter(|r| r.mem == Mem::Gm) {
                        let e = gm_reads.entry(r.space).or_default();
                        e.0.push((r.start, r.start + r.len));
                        e.1 += bytes;
                        *e.2.entry(instr.loc).or_default() += bytes;
                        *gm_copies.entry(r.space).or_default() += 1;
                        let e = same_range.entry((r.space, r.start, r.len)).or_default();
                        e.0 += 1;
                        *e.1.entry(instr.loc).or_default() += bytes;
                    }
                }
            }
            InstrKind::Vector { .. } => {
                acc.kind = "vector";
                acc.pipe = pipe_name(span.pipe);
                acc.busy += dur;
                acc.scalar += issue;
            }
            InstrKind::Mmad(_) => {
                acc.kind = "cube";
                acc.pipe = pipe_name(span.pipe);
                acc.busy += dur;
                acc.scalar += issue;
            }
            InstrKind::Scalar { op, .. } => {
                // Element accesses are scalar work; reading the tiling
                // struct or flushing the data cache is setup.
                acc.kind = match op {
                    ScalarOp::LocalGet | ScalarOp::LocalSet | ScalarOp::GmGet | ScalarOp::GmSet => {
                        "scalar"
                    }
                    _ => "setup",
                };
                acc.pipe = pipe_name(Pipe::S);
                acc.scalar += dur;
            }
            InstrKind::ScalarCode(_) => {
                // The kernel's own code between API calls (loops, index
                // arithmetic, raw GM pointer access), as counted by the
                // instrumented build.
                acc.kind = "scalar";
                acc.pipe = pipe_name(Pipe::S);
                acc.scalar += dur;
            }
            InstrKind::Barrier { pipe: None } => {
                acc.kind = "barrier";
                acc.pipe = "PIPE_ALL";
                acc.wait += dur;
                acc.scalar += issue;
            }
            InstrKind::Barrier { pipe: Some(p) } => {
                acc.kind = "barrier";
                acc.pipe = pipe_name(*p);
                acc.scalar += issue;
            }
            InstrKind::WaitFlag { dst, .. } => {
                if acc.kind.is_empty() || acc.kind == "sync" {
                    acc.kind = "wait";
                }
                acc.pipe = pipe_name(*dst);
                acc.wait += dur;
                acc.scalar += issue;
            }
            InstrKind::SyncAll { .. } => {
                acc.kind = "wait";
                acc.pipe = "PIPE_ALL";
                acc.wait += dur;
                acc.scalar += issue;
            }
            InstrKind::CrossWait { pipe, .. } => {
                acc.kind = "wait";
                acc.pipe = pipe_name(*pipe);
                acc.wait += dur;
                acc.scalar += issue;
            }
            InstrKind::CrossSet { pipe, .. } => {
                if acc.kind.is_empty() {
                    acc.kind = "sync";
                    acc.pipe = pipe_name(*pipe);
                }
                acc.scalar += issue;
            }
            InstrKind::SetFlag { src, .. } => {
                if acc.kind.is_empty() {
                    acc.kind = "sync";
                    acc.pipe = pipe_name(*src);
                }
                acc.scalar += issue;
            }
        }
        if acc.kind.is_empty() {
            acc.kind = "other";
            acc.pipe = pipe_name(span.pipe);
        }
    }
    let to_us = |c: f64| hw.cycles_to_us(c);
    let share = |c: u64| (c as f64 / block_cycles as f64).min(1.0);
    let mut lines: Vec<LineCost> = sites
        .into_iter()
        .map(|(loc, a)| {
            let (file, line, api) = match trace.locs.get(loc as usize) {
                Some(l) => (l.file.clone(), l.line, l.api.clone()),
                None => (String::new(), 0, String::new()),
            };
            LineCost {
                file,
                line,
                api,
                kind: a.kind.to_string(),
                pipe: a.pipe.to_string(),
                count: a.count,
                busy_us: to_us(a.busy as f64),
                wait_us: to_us(a.wait as f64),
                scalar_us: to_us(a.scalar as f64),
                busy_share: share(a.busy),
                wait_share: share(a.wait),
                scalar_share: share(a.scalar),
                bytes: a.bytes,
                mean_bytes: if a.dmas > 0 {
                    a.bytes as f64 / a.dmas as f64
                } else {
                    0.0
                },
                fixed_share: if a.total > 0.0 {
                    a.fixed / a.total
                } else {
                    0.0
                },
            }
        })
        .collect();
    let weight = |l: &LineCost| l.busy_share.max(l.wait_share).max(l.scalar_share);
    lines.sort_by(|a, b| weight(b).total_cmp(&weight(a)));
    lines.truncate(MAX_LINES);

    let mut rereads = Vec::new();
    for (space, (mut intervals, read, per_site)) in gm_reads {
        intervals.sort_unstable();
        let mut covered = 0u64;
        let mut end = 0u64;
        for (s, e) in intervals {
            if e <= end {
                continue;
            }
            covered += e - s.max(end);
            end = e;
        }
        let copies = gm_copies.get(&space).copied().unwrap_or(0);
        let sizeable = covered >= REREAD_MIN_BYTES || copies >= REREAD_MIN_COPIES;
        if covered > 0 && sizeable && read as f64 >= REREAD_FACTOR * covered as f64 {
            let sites = per_site
                .into_iter()
                .map(|(loc, bytes)| match trace.locs.get(loc as usize) {
                    Some(l) => (l.file.clone(), l.line, bytes),
                    None => (String::new(), 0, bytes),
                })
                .collect();
            rereads.push(GmReread {
                space,
                covered_bytes: covered,
                read_bytes: read,
                sites,
            });
        }
    }
    // A small range copied in for every tile, inside data read once.
    for ((space, _, len), (copies, per_site)) in same_range {
        if copies < REREAD_MIN_COPIES || rereads.iter().any(|r| r.space == space) {
            continue;
        }
        let sites = per_site
            .into_iter()
            .map(|(loc, bytes)| match trace.locs.get(loc as usize) {
                Some(l) => (l.file.clone(), l.line, bytes),
                None => (String::new(), 0, bytes),
            })
            .collect();
        rereads.push(GmReread {
            space,
            covered_bytes: len,
            read_bytes: len * copies,
            sites,
        });
    }
    Some(Hotspots {
        block: block.block,
        block_us: to_us(block_cycles as f64),
        block_dim: trace.block_dim.max(trace.blocks.len() as u32),
        cores: hw.aiv_cores,
        ub_bytes: hw.ub_bytes,
        ub_touched_bytes: ub_top,
        lines,
        rereads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{simulate, TimingOptions};
    use crate::trace::{BlockTrace, Instr, Region, SrcLoc};
    use ascendopt_op::Dtype;

    fn loc(line: u32, api: &str) -> SrcLoc {
        SrcLoc {
            file: "op_kernel/k.cpp".into(),
            line,
            api: api.into(),
        }
    }

    fn copy_in(start: u64, bytes: u64) -> Instr {
        Instr {
            pipe: Pipe::Mte2,
            kind: InstrKind::Dma {
                dir: DmaDir::GmToUb,
                bytes,
                bursts: 1,
                burst_bytes: bytes,
                gm_offset: start,
                gm_strided: false,
                atomic: false,
            },
            reads: vec![Region {
                mem: Mem::Gm,
                space: 0,
                start,
                len: bytes,
            }],
            writes: vec![Region {
                mem: Mem::Ub,
                space: 0,
                start: 0,
                len: bytes,
            }],
            loc: 0,
        }
    }

    #[test]
    fn small_copies_barriers_and_rereads_are_named_by_line() {
        let mut instrs = Vec::new();
        // 64 copies of 1 KB, each followed by a full barrier, twice over
        // the same 64 KB of GM (lines 88 and 131).
        for pass in 0..2u32 {
            for i in 0..64u64 {
                let mut c = copy_in(i * 1024, 1024);
                c.loc = pass * 2;
                instrs.push(c);
                instrs.push(Instr {
                    pipe: Pipe::S,
                    kind: InstrKind::Barrier { pipe: None },
                    reads: vec![],
                    writes: vec![],
                    loc: 1,
                });
                instrs.push(Instr {
                    pipe: Pipe::V,
                    kind: InstrKind::Vector {
                        op: crate::trace::VecOp::Add,
                        dtype: Dtype::Float16,
                        src_dtype: Dtype::Float16,
                        repeats: 4,
                        elems: 512,
                    },
                    reads: vec![Region {
                        mem: Mem::Ub,
                        space: 0,
                        start: 0,
                        len: 1024,
                    }],
                    writes: vec![Region {
                        mem: Mem::Ub,
                        space: 0,
                        start: 4096,
                        len: 1024,
                    }],
                    loc: 3,
                });
            }
        }
        let trace = Trace {
            block_dim: 1,
            gm_spaces: vec![65536],
            blocks: vec![BlockTrace {
                block: 0,
                instrs,
                gm_lines: Vec::new(),
                role: None,
            }],
            locs: vec![
                loc(88, "DataCopy"),
                loc(120, "PipeBarrier"),
                loc(131, "DataCopy"),
                loc(140, "Add"),
            ],
        };
        let hw = HwProfile::builtin("ascend910b2").unwrap();
        let sim = simulate(&trace, &hw, &TimingOptions::deterministic()).unwrap();
        let h = hotspots(&trace, &sim.timeline, &hw).unwrap();
        assert_eq!(h.ub_touched_bytes, 5120);
        let copy = h.lines.iter().find(|l| l.line == 88).unwrap();
        assert_eq!((copy.kind.as_str(), copy.count), ("dma", 64));
        assert_eq!(copy.mean_bytes, 1024.0);
        assert!(copy.fixed_share > 0.3, "{copy:?}");
        let barrier = h.lines.iter().find(|l| l.line == 120).unwrap();
        assert_eq!(barrier.pipe, "PIPE_ALL");
        assert!(barrier.wait_share > 0.3, "{barrier:?}");
        assert_eq!(h.rereads.len(), 1);
        let r = &h.rereads[0];
        assert_eq!((r.covered_bytes, r.read_bytes), (65536, 131072));
        let lines: Vec<u32> = r.sites.iter().map(|s| s.1).collect();
        assert_eq!(lines, [88, 131]);
    }
}
