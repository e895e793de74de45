//! Chrome Trace Event JSON of a simulated launch (`ascendopt eval --trace
//! FILE`), for Perfetto and chrome://tracing: one process per block (core
//! instance), one thread per pipe, an "X" (complete) event per instruction
//! named after its API call, and metadata events naming processes and
//! threads. Times are µs from the start of the launch, so the launch head
//! shows as the gap before the first instruction.

use super::engine::SpanKind;
use super::SimResult;
use crate::trace::{InstrKind, Pipe, Trace};
use serde_json::{json, Value};

/// Thread id of a pipe (its ABI code order).
pub fn pipe_tid(pipe: Pipe) -> u32 {
    Pipe::ALL.iter().position(|p| *p == pipe).unwrap_or(0) as u32
}

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
        InstrKind::ScalarCode(code) => format!(
            "{} instructions ({} loads, {} stores), {} GM accesses",
            code.instructions(),
            code.loads,
            code.stores,
            code.gm_accesses
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
        InstrKind::ScalarCode(_) => "kernel code",
    }
}

/// The Chrome Trace Event JSON of a simulated launch.
pub fn chrome_trace_json(trace: &Trace, result: &SimResult) -> String {
    let timeline = &result.timeline;
    let to_us = |cycles: u64| cycles as f64 * 1e6 / timeline.clock_hz;
    let mut events: Vec<Value> = Vec::new();
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
        for pipe in Pipe::ALL {
            let tid = pipe_tid(pipe);
            events.push(json!({
                "name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                "args": { "name": pipe.name() }
            }));
            events.push(json!({
                "name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                "args": { "sort_index": tid }
            }));
        }
        let Some(instrs) = trace.blocks.get(index).map(|b| &b.instrs) else {
            continue;
        };
        for span in &block.spans {
            if span.kind != SpanKind::Work && span.end == span.start {
                continue;
            }
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
            let cat = match span.kind {
                SpanKind::Work => "work",
                SpanKind::Wait => "wait",
                SpanKind::Sync => "sync",
            };
            events.push(json!({
                "name": name,
                "cat": cat,
                "ph": "X",
                "pid": pid,
                "tid": pipe_tid(span.pipe),
                "ts": timeline.launch_us + to_us(span.start),
                "dur": to_us(span.end - span.start),
                "args": { "loc": where_, "detail": detail(&instr.kind), "instr": span.instr }
            }));
        }
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
