//! Chrome Trace Event JSON of a simulated launch (`ascendopt eval --trace
//! FILE`), for Perfetto and chrome://tracing.
//!
//! Layout:
//! - one process per block (core instance), named after its core;
//! - per block one thread per pipe that did something: `PIPE_S` holds the
//!   scalar unit's own work (the kernel's code, GetValue/SetValue, the
//!   issuing of every other instruction, merged while back to back) and
//!   what it waited for; every other pipe holds what occupied it (a vector
//!   call's repeats, a DMA's issue and transfer) and its waits; a pipe's
//!   completion latencies, which overlap the next instruction, sit on a
//!   thread of their own (`PIPE_V done`); tracks with no event are left
//!   out;
//! - slices on one thread never overlap: every track is laid out in lanes
//!   (a second lane is a thread of its own, `PIPE_V done 2`), so Perfetto
//!   and chrome://tracing draw them as they are;
//! - flow arrows from each SetFlag to the WaitFlag that consumed it
//!   (`bind_id` with `flow_out`/`flow_in` on the two slices, so the arrow
//!   is tied to them, not to a timestamp), with who issued them in the
//!   slices' `flow` argument (`EnQue->DeQue`, `FreeTensor->AllocTensor`,
//!   `SetFlag->WaitFlag`);
//! - a "chip" process with counters of the L2 and HBM bandwidth in use.
//!
//! Times are µs from the start of the launch, so the launch head shows as
//! the gap before the first instruction.

use super::engine::{BlockTimeline, Span, SpanKind};
use super::SimResult;
use crate::trace::{InstrKind, Pipe, SyncOrigin, Trace};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Thread id of a pipe's main track (its ABI code order).
pub fn pipe_tid(pipe: Pipe) -> u32 {
    Pipe::ALL.iter().position(|p| *p == pipe).unwrap_or(0) as u32
}

/// Thread id of a pipe's completion track.
fn done_tid(pipe: Pipe) -> u32 {
    8 + pipe_tid(pipe)
}

/// Thread ids of extra lanes start here (lane k of track t: `t * 16 + k`).
const LANE_BASE: u32 = 1000;

fn detail(kind: &InstrKind) -> String {
    match kind {
        InstrKind::Vector {
            op,
            dtype,
            src_dtype,
            repeats,
            elems,
        } => {
            if dtype == src_dtype {
                format!(
                    "{} {} x{} repeats, {} elems",
                    op.name(),
                    dtype.name(),
                    repeats,
                    elems
                )
            } else {
                format!(
                    "{} {}->{} x{} repeats, {} elems",
                    op.name(),
                    src_dtype.name(),
                    dtype.name(),
                    repeats,
                    elems
                )
            }
        }
        InstrKind::Dma {
            dir,
            bytes,
            bursts,
            burst_bytes,
            gm_offset,
            ..
        } => format!("{dir:?} {bytes} B in {bursts} x {burst_bytes} B, GM offset {gm_offset}"),
        InstrKind::Scalar { op, bytes } => format!("{op:?} {bytes} B"),
        InstrKind::SetFlag {
            src,
            dst,
            key,
            origin,
        } => {
            format!("set {}->{} {key:?} ({origin:?})", src.name(), dst.name())
        }
        InstrKind::WaitFlag {
            src,
            dst,
            key,
            origin,
        } => {
            format!("wait {}->{} {key:?} ({origin:?})", src.name(), dst.name())
        }
        InstrKind::Barrier { pipe } => match pipe {
            Some(p) => format!("PipeBarrier<{}>", p.name()),
            None => "PipeBarrier<PIPE_ALL>".to_string(),
        },
        InstrKind::SyncAll { generation } => format!("SyncAll #{generation}"),
        InstrKind::CrossSet { pipe, mode, flag } => {
            format!("CrossCoreSetFlag<{mode}, {}>({flag})", pipe.name())
        }
        InstrKind::CrossWait { pipe, flag, .. } => {
            format!("CrossCoreWaitFlag<{}>({flag})", pipe.name())
        }
        InstrKind::ScalarCode(code) => format!(
            "{} instructions ({} loads, {} stores), {} GM accesses",
            code.instructions(),
            code.loads,
            code.stores,
            code.gm_accesses
        ),
        InstrKind::Mmad(s) => format!(
            "Mmad {}x{}x{} {}{}",
            s.m,
            s.n,
            s.k,
            s.dtype.name(),
            if s.init { "" } else { " (accumulate)" }
        ),
    }
}

fn fallback_name(kind: &InstrKind) -> &'static str {
    match kind {
        InstrKind::Vector { op, .. } => op.name(),
        InstrKind::Dma { .. } => "DataCopy",
        InstrKind::Scalar { .. } => "Scalar",
        InstrKind::SetFlag { .. } => "SetFlag",
        InstrKind::WaitFlag { .. } => "WaitFlag",
        InstrKind::Barrier { .. } => "PipeBarrier",
        InstrKind::SyncAll { .. } => "SyncAll",
        InstrKind::CrossSet { .. } => "CrossCoreSetFlag",
        InstrKind::CrossWait { .. } => "CrossCoreWaitFlag",
        InstrKind::ScalarCode(_) => "kernel code",
        InstrKind::Mmad(_) => "Mmad",
    }
}

/// The flow name of a flag's origin.
fn flow_name(origin: SyncOrigin) -> &'static str {
    match origin {
        SyncOrigin::User => "SetFlag->WaitFlag",
        SyncOrigin::EnQue | SyncOrigin::DeQue => "EnQue->DeQue",
        SyncOrigin::FreeTensor | SyncOrigin::AllocTensor => "FreeTensor->AllocTensor",
    }
}

/// One slice before lane assignment.
struct Slice {
    track: u32,
    start: u64,
    end: u64,
    name: String,
    cat: &'static str,
    args: Value,
}

/// Slices with their thread ids, and each extra lane's (track, lane
/// number) by thread id.
type Layout = (Vec<(u32, Slice)>, BTreeMap<u32, (u32, u32)>);

/// Places the slices of each track in lanes so that no two slices of a
/// lane overlap (first fit, in start order).
fn lay_out(mut slices: Vec<Slice>) -> Layout {
    slices.sort_by_key(|s| (s.track, s.start, s.end));
    let mut out = Vec::with_capacity(slices.len());
    let mut extra: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    let mut lanes: Vec<u64> = Vec::new();
    let mut current = u32::MAX;
    for slice in slices {
        if slice.track != current {
            current = slice.track;
            lanes.clear();
        }
        let lane = match lanes.iter().position(|&end| end <= slice.start) {
            Some(lane) => lane,
            None => {
                lanes.push(0);
                lanes.len() - 1
            }
        };
        lanes[lane] = slice.end;
        let tid = if lane == 0 {
            slice.track
        } else {
            let tid = LANE_BASE + slice.track * 16 + lane as u32;
            extra.insert(tid, (slice.track, lane as u32 + 1));
            tid
        };
        out.push((tid, slice));
    }
    (out, extra)
}

/// The name of a track.
fn track_name(tid: u32) -> String {
    if tid < 8 {
        Pipe::ALL
            .get(tid as usize)
            .map_or_else(|| format!("track {tid}"), |p| p.name().to_string())
    } else if tid < 16 {
        Pipe::ALL
            .get(tid as usize - 8)
            .map_or_else(|| format!("track {tid}"), |p| format!("{} done", p.name()))
    } else {
        format!("track {tid}")
    }
}

/// The slices of one block.
fn block_slices(trace: &Trace, index: usize, block: &BlockTimeline) -> Vec<Slice> {
    let Some(instrs) = trace.blocks.get(index).map(|b| &b.instrs) else {
        return Vec::new();
    };
    let mut slices = Vec::with_capacity(block.spans.len() * 2 + block.issues.len());
    for span in &block.spans {
        let Some(instr) = instrs.get(span.instr as usize) else {
            continue;
        };
        let loc = trace.loc_of(instr);
        let name = match loc {
            Some(l) if !l.api.is_empty() => l.api.clone(),
            _ => fallback_name(&instr.kind).to_string(),
        };
        let where_ = match loc {
            Some(l) if !l.file.is_empty() => format!("{}:{}", l.file, l.line),
            _ => String::new(),
        };
        let args = json!({ "loc": where_, "detail": detail(&instr.kind), "instr": span.instr });
        let is_set = matches!(instr.kind, InstrKind::SetFlag { .. });
        let is_wait = matches!(instr.kind, InstrKind::WaitFlag { .. });
        if span.kind != SpanKind::Work && span.end == span.start && !is_set && !is_wait {
            continue;
        }
        let cat = match span.kind {
            SpanKind::Work => "work",
            SpanKind::Wait => "wait",
            SpanKind::Sync => "sync",
        };
        slices.extend(split(span, name, cat, args));
    }
    // The scalar unit issuing the other pipes' instructions, back-to-back
    // issues merged.
    let mut run: Option<(u64, u64, u32, u32)> = None;
    let flush = |run: Option<(u64, u64, u32, u32)>, slices: &mut Vec<Slice>| {
        if let Some((start, end, first, count)) = run {
            slices.push(Slice {
                track: pipe_tid(Pipe::S),
                start,
                end,
                name: if count == 1 {
                    "issue".to_string()
                } else {
                    format!("issue x{count}")
                },
                cat: "issue",
                args: json!({ "first_instr": first, "instructions": count }),
            });
        }
    };
    for &(instr, start, end) in &block.issues {
        run = match run {
            Some((s, e, first, count)) if e == start => Some((s, end, first, count + 1)),
            other => {
                flush(other, &mut slices);
                Some((start, end, instr, 1))
            }
        };
    }
    flush(run, &mut slices);
    slices
}

/// A span as slices: what occupied the pipe on its track, the rest until
/// completion on the pipe's completion track.
fn split(span: &Span, name: String, cat: &'static str, args: Value) -> Vec<Slice> {
    let track = pipe_tid(span.pipe);
    if span.kind == SpanKind::Work && span.pipe != Pipe::S && span.busy_end < span.end {
        vec![
            Slice {
                track,
                start: span.start,
                end: span.busy_end,
                name: name.clone(),
                cat,
                args: args.clone(),
            },
            Slice {
                track: done_tid(span.pipe),
                start: span.busy_end,
                end: span.end,
                name,
                cat: "completion",
                args,
            },
        ]
    } else {
        vec![Slice {
            track,
            start: span.start,
            end: span.end,
            name,
            cat,
            args,
        }]
    }
}

/// The Chrome Trace Event JSON of a simulated launch.
pub fn chrome_trace_json(trace: &Trace, result: &SimResult) -> String {
    let timeline = &result.timeline;
    let to_us = |cycles: u64| timeline.launch_us + cycles as f64 * 1e6 / timeline.clock_hz;
    let mut events: Vec<Value> = Vec::new();
    let mut flow_id: u64 = 0;
    for (index, block) in timeline.blocks.iter().enumerate() {
        let pid = block.block;
        events.push(json!({
            "name": "process_name", "ph": "M", "pid": pid, "tid": 0,
            "args": { "name": format!("block {} ({} core {})", block.block, block.core_type.name(), block.core) }
        }));
        events.push(json!({
            "name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
            "args": { "sort_index": index }
        }));
        let (slices, extra) = lay_out(block_slices(trace, index, block));
        // The flows: each consumed SetFlag and its WaitFlag share an id.
        let instrs = trace
            .blocks
            .get(index)
            .map(|b| &b.instrs[..])
            .unwrap_or(&[]);
        let mut flows: BTreeMap<u32, (u64, bool, &'static str)> = BTreeMap::new();
        for &(set, wait) in &block.flag_pairs {
            let origin = match instrs.get(set as usize).map(|i| &i.kind) {
                Some(InstrKind::SetFlag { origin, .. }) => *origin,
                _ => SyncOrigin::User,
            };
            flow_id += 1;
            flows.insert(set, (flow_id, true, flow_name(origin)));
            flows.insert(wait, (flow_id, false, flow_name(origin)));
        }
        let mut tids: BTreeMap<u32, String> = BTreeMap::new();
        for (tid, _) in &slices {
            let name = match extra.get(tid) {
                Some((track, lane)) => format!("{} {lane}", track_name(*track)),
                None => track_name(*tid),
            };
            tids.insert(*tid, name);
        }
        for (sort, (tid, name)) in tids.iter().enumerate() {
            events.push(json!({
                "name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                "args": { "name": name }
            }));
            events.push(json!({
                "name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                "args": { "sort_index": sort }
            }));
        }
        for (tid, mut slice) in slices {
            let mut event = json!({
                "name": slice.name,
                "cat": slice.cat,
                "ph": "X",
                "pid": pid,
                "tid": tid,
                "ts": to_us(slice.start),
                "dur": to_us(slice.end) - to_us(slice.start),
            });
            let flow = (slice.cat != "completion" && slice.cat != "issue")
                .then(|| slice.args["instr"].as_u64())
                .flatten()
                .and_then(|instr| flows.get(&(instr as u32)));
            if let Some(&(id, out, name)) = flow {
                event["bind_id"] = json!(id);
                event[if out { "flow_out" } else { "flow_in" }] = json!(true);
                slice.args["flow"] = json!(name);
            }
            event["args"] = slice.args;
            events.push(event);
        }
    }
    // The chip: L2 and HBM bandwidth in use.
    let chip = timeline
        .blocks
        .iter()
        .map(|b| b.block + 1)
        .max()
        .unwrap_or(0);
    events.push(json!({
        "name": "process_name", "ph": "M", "pid": chip, "tid": 0,
        "args": { "name": "chip (L2 and HBM)" }
    }));
    let gbps = |bytes_per_cycle: f64| bytes_per_cycle * timeline.clock_hz / 1e9;
    for &(cycle, [l2, hbm]) in &timeline.bandwidth {
        let ts = to_us(cycle);
        events.push(json!({
            "name": "HBM bandwidth (GB/s)", "ph": "C", "pid": chip, "tid": 0, "ts": ts,
            "args": { "HBM": gbps(hbm) }
        }));
        events.push(json!({
            "name": "L2 bandwidth (GB/s)", "ph": "C", "pid": chip, "tid": 0, "ts": ts,
            "args": { "L2": gbps(l2) }
        }));
    }
    let doc = json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "soc": result.profile.soc_version,
            "Task Duration(us)": result.profile.task_duration_us,
            "Block Dim": result.profile.block_dim,
            "launch_overhead(us)": result.profile.launch_overhead_us,
        }
    });
    doc.to_string()
}

/// A Chrome trace whose slices do not nest.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NestingError {
    /// The document has no `traceEvents` array.
    #[error("no traceEvents array")]
    NoEvents,
    /// A slice starts inside another and ends after it.
    #[error(
        "pid {pid} tid {tid}: `{}` [{}, {}] overlaps `{}` [{}, {}] without nesting",
        .inner.0, .inner.1, .inner.2, .outer.0, .outer.1, .outer.2
    )]
    Overlap {
        /// The process id.
        pid: u64,
        /// The thread id.
        tid: u64,
        /// The later slice: name, start and end (µs).
        inner: (String, f64, f64),
        /// The slice it overlaps: name, start and end (µs).
        outer: (String, f64, f64),
    },
}

/// Checks that the slices ("X" events) of every thread of a Chrome trace
/// nest: a slice that starts inside another ends inside it too. Returns the
/// first offence, naming the thread and both slices.
pub fn check_nesting(doc: &Value) -> Result<(), NestingError> {
    let events = doc["traceEvents"]
        .as_array()
        .ok_or(NestingError::NoEvents)?;
    type Interval<'a> = (f64, f64, &'a str);
    let mut threads: BTreeMap<(u64, u64), Vec<Interval<'_>>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let key = (
            e["pid"].as_u64().unwrap_or(0),
            e["tid"].as_u64().unwrap_or(0),
        );
        let ts = e["ts"].as_f64().unwrap_or(0.0);
        let dur = e["dur"].as_f64().unwrap_or(0.0);
        threads
            .entry(key)
            .or_default()
            .push((ts, ts + dur, e["name"].as_str().unwrap_or("?")));
    }
    // Timestamps are µs as floats: allow a picosecond of rounding.
    const EPS: f64 = 1e-6;
    for ((pid, tid), mut slices) in threads {
        slices.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut open: Vec<Interval<'_>> = Vec::new();
        for slice in slices {
            while open.last().is_some_and(|top| top.1 <= slice.0 + EPS) {
                open.pop();
            }
            if let Some(top) = open.last() {
                if slice.1 > top.1 + EPS {
                    return Err(NestingError::Overlap {
                        pid,
                        tid,
                        inner: (slice.2.to_string(), slice.0, slice.1),
                        outer: (top.2.to_string(), top.0, top.1),
                    });
                }
            }
            open.push(slice);
        }
    }
    Ok(())
}
