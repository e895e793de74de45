//! Output bytes no recorded instruction wrote: work the timing model
//! cannot see (the simulator's answer to
//! `Device::unmeasured_output_writes`).
//!
//! Output elements start poisoned (an in-place output starts as its
//! input) and a correct kernel changed every poisoned one; an element
//! that changed although no traced instruction (DataCopy, SetValue,
//! Fixpipe, ...) and no line of the kernel's own instrumented code wrote
//! it was stored some other way (a trace the kernel forged, code outside
//! the instrumented units), so its time is missing from the profile and
//! the judge's physics guard fails the evaluation. A byte that still holds
//! its value from before the launch needed no write (an in-place output a
//! kernel rightly leaves alone, such as a flag it sets only on a finding).

use crate::trace::{InstrKind, Mem, Trace, GM_LINE_BYTES};

/// One output of the launch: its bytes before the kernel ran and after.
#[derive(Debug, Clone, Copy)]
pub struct OutputBytes<'a> {
    /// The buffer as the launch filled it (poison, or the input of an
    /// in-place output).
    pub before: &'a [u8],
    /// The buffer after the kernel.
    pub after: &'a [u8],
}

/// The reason, when some output bytes changed although no instruction of
/// `trace` wrote them (see the module docs), or None. `n_inputs` is the
/// number of input tensors of the launch (their GM allocations come first,
/// the outputs' next, in argument order). A trace whose allocations do not
/// have that layout, or outputs whose before and after differ in size, are
/// not judged.
pub fn untraced_output_writes(
    trace: &Trace,
    n_inputs: usize,
    outputs: &[OutputBytes<'_>],
) -> Option<String> {
    // Line touches past the recording limit were charged but not
    // recorded: coverage cannot be shown either way.
    let dropped = trace
        .blocks
        .iter()
        .flat_map(|b| &b.instrs)
        .any(|i| matches!(&i.kind, InstrKind::ScalarCode(code) if code.lines_dropped > 0));
    if dropped {
        return None;
    }
    let mut missing = 0u64;
    let mut total = 0u64;
    for (k, out) in outputs.iter().enumerate() {
        let size = out.before.len() as u64;
        let space = n_inputs + k;
        if trace.gm_spaces.get(space).copied() != Some(size) || out.after.len() != out.before.len()
        {
            return None;
        }
        let mut spans: Vec<(u64, u64)> = trace
            .blocks
            .iter()
            .flat_map(|b| &b.instrs)
            .flat_map(|i| &i.writes)
            .filter(|r| r.mem == Mem::Gm && r.space as usize == space)
            .map(|r| (r.start, r.start.saturating_add(r.len)))
            .collect();
        // The kernel's own code's GM lines (plain loads and stores through
        // a pointer), which the timing model charges as scalar accesses.
        for b in &trace.blocks {
            for i in &b.instrs {
                if let InstrKind::ScalarCode(code) = &i.kind {
                    let from = code.lines_start as usize;
                    let to = from.saturating_add(code.lines_len as usize);
                    spans.extend(
                        b.gm_lines
                            .get(from..to.min(b.gm_lines.len()))
                            .unwrap_or_default()
                            .iter()
                            .filter(|l| l.space as usize == space)
                            .map(|l| (l.offset, l.offset.saturating_add(GM_LINE_BYTES))),
                    );
                }
            }
        }
        let mut spans: Vec<(u64, u64)> = spans
            .into_iter()
            .map(|(a, b)| (a.min(size), b.min(size)))
            .filter(|(a, b)| b > a)
            .collect();
        spans.sort_unstable();
        // The gaps between the written spans: bytes there that changed.
        let changed = |from: u64, to: u64| -> u64 {
            let (from, to) = (from as usize, to as usize);
            out.before[from..to]
                .iter()
                .zip(&out.after[from..to])
                .filter(|(a, b)| a != b)
                .count() as u64
        };
        let mut end = 0u64;
        for (a, b) in spans {
            if a > end {
                missing += changed(end, a);
            }
            end = end.max(b);
        }
        if size > end {
            missing += changed(end, size);
        }
        total += size;
    }
    (missing > 0).then(|| {
        format!(
            "faster than the hardware limit: the timing model missed work ({missing} of the \
             {total} output bytes were written by no instruction it sees)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{BlockTrace, Instr, Pipe, Region, ScalarOp};

    #[test]
    fn output_bytes_no_instruction_wrote_are_named() {
        let write = |space: u32, start: u64, len: u64| Instr {
            pipe: Pipe::S,
            kind: InstrKind::Scalar {
                op: ScalarOp::GmSet,
                bytes: len,
            },
            reads: Vec::new(),
            writes: vec![Region {
                mem: Mem::Gm,
                space,
                start,
                len,
            }],
            loc: 0,
        };
        // One input of 64 bytes, one output of 64, workspace, tiling.
        let trace = |writes: Vec<Instr>| Trace {
            block_dim: 1,
            gm_spaces: vec![64, 64, 0, 8],
            blocks: vec![BlockTrace {
                block: 0,
                instrs: writes,
                gm_lines: Vec::new(),
                role: None,
            }],
            locs: Vec::new(),
        };
        let poison = [0xAAu8; 64];
        let written = [1u8; 64];
        let all = |t: &Trace| {
            let out = OutputBytes {
                before: &poison,
                after: &written,
            };
            untraced_output_writes(t, 1, &[out])
        };
        // Overlapping writes and one past the end cover the output.
        let whole = trace(vec![write(1, 0, 40), write(1, 32, 16), write(1, 48, 32)]);
        assert_eq!(all(&whole), None);
        // A gap of 8 bytes, and a write to the input that does not count.
        let gap = trace(vec![write(1, 0, 24), write(1, 32, 32), write(0, 24, 8)]);
        let why = all(&gap).unwrap();
        assert!(
            why.starts_with(
                "faster than the hardware limit: the timing model missed work (8 of the 64"
            ),
            "{why}"
        );
        // Nothing traced at all.
        assert!(all(&trace(Vec::new())).is_some());
        // A layout it does not know is not judged.
        let short = OutputBytes {
            before: &poison[..32],
            after: &written[..32],
        };
        assert_eq!(
            untraced_output_writes(&trace(Vec::new()), 1, &[short]),
            None
        );
    }

    #[test]
    fn bytes_that_kept_their_value_from_before_the_launch_needed_no_write() {
        // An in-place flag the kernel rightly leaves alone: nothing traced,
        // nothing changed.
        let flag = [7u8; 64];
        let trace = Trace {
            block_dim: 1,
            gm_spaces: vec![64, 64, 0, 8],
            blocks: Vec::new(),
            locs: Vec::new(),
        };
        let kept = OutputBytes {
            before: &flag,
            after: &flag,
        };
        assert_eq!(untraced_output_writes(&trace, 1, &[kept]), None);
        // One byte changed with no instruction writing it: missed work.
        let mut changed = flag;
        changed[17] = 8;
        let forged = OutputBytes {
            before: &flag,
            after: &changed,
        };
        let why = untraced_output_writes(&trace, 1, &[forged]).unwrap();
        assert!(why.contains("(1 of the 64 output bytes"), "{why}");
    }
}
