//! Redundant barrier elimination: a tile loop synchronised by its queues
//! (EnQue/DeQue, AllocTensor/FreeTensor) needs no `PipeBarrier<PIPE_ALL>()`.
//!
//! - remove: after every stage call of a tile loop (a copy, a vector
//!   instruction, or a function of the file that does either or uses
//!   queues) insert `PipeBarrier<PIPE_ALL>();`, the defensive full barrier
//!   of naive kernels. It drains every pipe, so copies of the next tile no
//!   longer overlap the compute of this one.
//! - apply: delete the `PipeBarrier<PIPE_ALL>();` statements directly in a
//!   loop body. Whether they were needed is the harness's call: a barrier
//!   that guarded a real hazard shows up as a race or a wrong result.

use super::syntax::{self, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};

/// Redundant `PipeBarrier<PIPE_ALL>` elimination in tile loops.
pub struct BarrierElim;

const BARRIER: &str = "PipeBarrier<PIPE_ALL>();";

fn is_full_barrier(parsed: &Parsed<'_>, stmt: tree_sitter::Node<'_>) -> bool {
    syntax::statement_call(parsed, stmt).is_some_and(|c| {
        c.name == "PipeBarrier"
            && c.template_args.as_deref() == Some("PIPE_ALL")
            && c.args.is_empty()
    })
}

impl Engine for BarrierElim {
    const TAG: &'static str = "barrier_elim";
    const FAMILY: &'static str = "sync";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Drop full PipeBarrier<PIPE_ALL> barriers from queue-synchronised tile loops",
            bottleneck: "PipeBarrier<PIPE_ALL> inside the tile loop drains every pipe after each stage: MTE2, vector and MTE3 never overlap, so double buffering buys nothing and the scalar unit stalls",
            reuse_when: "the loop's data flows only through TQue EnQue/DeQue (and AllocTensor/FreeTensor), which already order the pipes; the barriers were added defensively",
            avoid_when: "a barrier orders accesses the queues do not cover: scalar GetValue/SetValue on UB shared with vector code, TBuf scratch written by one pipe and read by another, or GM written and re-read by the same core",
            expected_effect: "restores the overlap of copies and compute: close to the double-buffered time, often 1.5-3x on streaming kernels",
            keywords: &["PipeBarrier", "PIPE_ALL", "barrier", "synchronisation", "pipeline stall", "redundant sync", "queue sync", "EnQue", "DeQue"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            let stages = syntax::stage_functions(&parsed);
            for node in parsed.all() {
                let Some(body) = syntax::for_body(node) else {
                    continue;
                };
                if node.has_error() {
                    continue;
                }
                let statements = syntax::block_statements(body);
                let barriers: Vec<_> = statements
                    .iter()
                    .copied()
                    .filter(|s| is_full_barrier(&parsed, *s))
                    .collect();
                let header = node.start_byte()..body.start_byte();
                if !barriers.is_empty() {
                    // Absent: the loop has full barriers to drop.
                    let edits: Vec<(std::ops::Range<usize>, String)> = barriers
                        .iter()
                        .map(|b| {
                            let r = b.byte_range();
                            if syntax::alone_on_lines(text, r.clone()) {
                                (syntax::line_range(text, r), String::new())
                            } else {
                                (r, String::new())
                            }
                        })
                        .collect();
                    let site = site_at::<Self>(
                        file,
                        text,
                        header,
                        SiteState::Absent,
                        format!(
                            "{} PipeBarrier<PIPE_ALL> in the loop at line {}",
                            barriers.len(),
                            syntax::line_of(text, node.start_byte())
                        ),
                    );
                    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
                    out.push(Plan { site, output });
                    continue;
                }
                // Present: a tile loop with stage calls and no full barrier.
                let stage_calls: Vec<_> = statements
                    .iter()
                    .copied()
                    .filter(|s| {
                        syntax::statement_call(&parsed, *s).is_some_and(|c| {
                            syntax::is_vector_op(&c.name)
                                || syntax::COPY_OPS.contains(&c.name.as_str())
                                || (c.object.is_none() && stages.contains(&c.name))
                        })
                    })
                    .collect();
                if stage_calls.is_empty() {
                    continue;
                }
                let edits: Vec<(std::ops::Range<usize>, String)> = stage_calls
                    .iter()
                    .map(|s| {
                        let indent = syntax::indent_at(text, s.start_byte());
                        (s.end_byte()..s.end_byte(), format!("\n{indent}{BARRIER}"))
                    })
                    .collect();
                let site = site_at::<Self>(
                    file,
                    text,
                    header,
                    SiteState::Present,
                    format!(
                        "queue-synchronised loop at line {} with {} stage calls",
                        syntax::line_of(text, node.start_byte()),
                        stage_calls.len()
                    ),
                );
                let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
                out.push(Plan { site, output });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::motif::Motif;

    const KERNEL: &str = r#"class K {
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileNum; i++) {
            uint32_t length = (i + 1 == tileNum) ? lastLength : tileLength;
            CopyIn(i, length);
            Compute(length);
            CopyOut(i, length);
        }
        for (uint32_t j = 0; j < 4; j++) {
            sum += j;
        }
    }
    __aicore__ inline void CopyIn(uint32_t i, uint32_t n) { LocalTensor<T> x = q.AllocTensor<T>(); DataCopy(x, g[i], n); q.EnQue(x); }
    __aicore__ inline void Compute(uint32_t n) { LocalTensor<T> x = q.DeQue<T>(); Muls(x, x, s, n); o.EnQue(x); }
    __aicore__ inline void CopyOut(uint32_t i, uint32_t n) { LocalTensor<T> x = o.DeQue<T>(); DataCopy(h[i], x, n); o.FreeTensor(x); }
};
"#;

    #[test]
    fn barriers_go_after_every_stage_call_and_come_out_again() {
        let strong = Sources::from_files([("op_kernel/k.cpp", KERNEL)]);
        let sites = BarrierElim.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].state, SiteState::Present);
        assert_eq!(sites[0].line, 4);
        let weak = BarrierElim.remove(&strong, &sites[0]).unwrap();
        let k = weak.get("op_kernel/k.cpp").unwrap();
        assert!(
            k.contains("            CopyIn(i, length);\n            PipeBarrier<PIPE_ALL>();\n            Compute(length);\n            PipeBarrier<PIPE_ALL>();\n            CopyOut(i, length);\n            PipeBarrier<PIPE_ALL>();\n        }"),
            "{k}"
        );
        assert_eq!(k.matches("PipeBarrier").count(), 3);
        let weak_sites = BarrierElim.detect(&weak);
        assert_eq!(weak_sites.len(), 1);
        assert_eq!(weak_sites[0].state, SiteState::Absent);
        assert_eq!(BarrierElim.apply(&weak, &weak_sites[0]).unwrap(), strong);
    }

    #[test]
    fn other_barriers_and_loops_without_stages_are_not_sites() {
        let text = "void f() {\n    for (int i = 0; i < 3; i++) {\n        PipeBarrier<PIPE_V>();\n        x += i;\n    }\n}\n";
        let pkg = Sources::from_files([("op_kernel/k.cpp", text)]);
        assert!(BarrierElim.detect(&pkg).is_empty());
    }
}
