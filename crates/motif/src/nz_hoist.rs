//! NZ layout conversions hoisted out of loops (issue 27 item 5): a GM -> L1
//! copy that converts a block from ND to NZ (`DataCopy(t, gm, Nd2NzParams
//! (...))`) of the same block in every iteration of a loop moves before
//! the loop and the block stays in L1 for the whole loop (a block row of A
//! converted once per row instead of once per column block of C).
//!
//! Found from the syntax tree of hand-written cube kernels, in a loop body
//! directly (not through a called function):
//!
//! - absent (in the loop): a run of statements `LocalTensor<T> t =
//!   q.AllocTensor<T>();`, `DataCopy(t, src, P);` with `P` a
//!   `Nd2NzParams(...)` call, `q.EnQue(t);` and optionally `t =
//!   q.DeQue<T>();`, and later in the same body `q.FreeTensor(t);`, where
//!   `q` is a `TQue` on A1 or B1; the run is loop-invariant: it mentions
//!   neither the loop variable nor a name declared or assigned in the loop;
//!   nothing else in the loop writes `t` (it is only read: no call has it
//!   as its first argument besides the run's own and the free) and nothing
//!   else in the loop uses `q`. Apply moves the run before the loop and
//!   the free after it.
//! - present (hoisted): the same run as the last statements before a
//!   `for`, the free as the first statement after it, the loop reading `t`
//!   and not using `q` otherwise. Removal moves the run to the top of the
//!   loop body and the free to its end.
//!
//! Preconditions: holding `t` for the whole loop needs no more L1 than
//! before (the queue's buffer was allocated by `InitBuffer` either way;
//! nothing else in the loop takes from `q`). The source must not be
//! written by the loop (a kernel that writes its own input in place is
//! not recognised as such; the harness judges). Not recognised: the
//! conversion in a function the loop calls (`CopyIn(...)`), an L1 -> L0
//! `LoadData` of the same block repeated (L0A reuse), a conversion on the
//! vector core (`TransDataTo5HD`).

use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use std::ops::Range;
use tree_sitter::Node;

/// NZ conversions hoisted out of loops.
pub struct NzHoist;

/// The L1 queues (TQue on A1 or B1) declared in the file.
fn l1_queues(parsed: &Parsed<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for decl in parsed.all() {
        if decl.kind() != "declaration" && decl.kind() != "field_declaration" {
            continue;
        }
        let Some(ty) = decl.child_by_field_name("type") else {
            continue;
        };
        let t = parsed.src(ty).replace(' ', "");
        if !t.contains("TQue<") || !(t.contains("::A1,") || t.contains("::B1,")) {
            continue;
        }
        let mut cursor = decl.walk();
        let ds: Vec<Node<'_>> = decl
            .children_by_field_name("declarator", &mut cursor)
            .collect();
        out.extend(
            ds.into_iter()
                .filter_map(|d| syntax::declared_name(parsed, d))
                .map(str::to_string),
        );
    }
    out
}

/// The conversion's statements: alloc, copy, enque and the optional deque.
struct Run<'t> {
    stmts: Vec<Node<'t>>,
    tensor: String,
    queue: String,
}

/// The member call `q.name(...)` that is the whole of `stmt`, with `q`.
fn queue_call<'a>(
    parsed: &Parsed<'a>,
    stmt: Node<'_>,
    name: &str,
) -> Option<(&'a str, Vec<&'a str>)> {
    let call = syntax::statement_call(parsed, stmt)?;
    if call.name != name {
        return None;
    }
    let q = parsed.src(call.object?);
    Some((q, syntax::arg_texts(parsed, &call)))
}

/// A run starting at `stmts[at]`, if there is one.
fn run_at<'t>(
    parsed: &Parsed<'_>,
    stmts: &[Node<'t>],
    at: usize,
    queues: &[String],
) -> Option<Run<'t>> {
    let alloc = *stmts.get(at)?;
    if alloc.kind() != "declaration" || !parsed.src(alloc).contains("AllocTensor") {
        return None;
    }
    let mut cursor = alloc.walk();
    let d = alloc
        .children_by_field_name("declarator", &mut cursor)
        .next()?;
    let tensor = syntax::declared_name(parsed, d)?.to_string();
    let value = d.child_by_field_name("value")?;
    let call = Call::of(parsed, value)?;
    if call.name != "AllocTensor" {
        return None;
    }
    let queue = parsed.src(call.object?).to_string();
    if !queues.contains(&queue) {
        return None;
    }
    let copy = syntax::statement_call(parsed, *stmts.get(at + 1)?)?;
    let converts = copy.name == "DataCopy"
        && copy.args.len() == 3
        && syntax::tensor_root(parsed, copy.args[0]) == Some(tensor.as_str())
        && Call::of(parsed, copy.args[2]).is_some_and(|p| p.name == "Nd2NzParams");
    if !converts {
        return None;
    }
    let (q, args) = queue_call(parsed, *stmts.get(at + 2)?, "EnQue")?;
    if q != queue || args != [tensor.as_str()] {
        return None;
    }
    let mut run = vec![alloc, stmts[at + 1], stmts[at + 2]];
    // `t = q.DeQue<T>();`
    if let Some(next) = stmts.get(at + 3) {
        let text = parsed.src(*next).replace(' ', "");
        if next.kind() == "expression_statement"
            && text.starts_with(&format!("{tensor}={queue}.DeQue<"))
        {
            run.push(*next);
        }
    }
    Some(Run {
        stmts: run,
        tensor,
        queue,
    })
}

/// True when `stmt` is `q.FreeTensor(t);`.
fn is_free(parsed: &Parsed<'_>, stmt: Node<'_>, run: &Run<'_>) -> bool {
    queue_call(parsed, stmt, "FreeTensor")
        .is_some_and(|(q, args)| q == run.queue && args == [run.tensor.as_str()])
}

/// Cube and copy APIs that write their first argument.
const WRITERS: [&str; 7] = [
    "DataCopy",
    "DataCopyPad",
    "LoadData",
    "LoadDataWithTranspose",
    "Mmad",
    "InitConstValue",
    "Duplicate",
];

/// True when `call` may write tensor `t`: an API that writes its first
/// argument with `t` there, or a function of the file taking `t` by a
/// parameter that is not const.
fn writes(parsed: &Parsed<'_>, call: &Call<'_>, t: &str) -> bool {
    let Some(at) = call
        .args
        .iter()
        .position(|a| syntax::tensor_root(parsed, *a) == Some(t))
    else {
        return false;
    };
    if WRITERS.contains(&call.name.as_str()) || syntax::is_vector_op(&call.name) {
        return at == 0;
    }
    // A function of the file: its parameter at `at`.
    let defined = parsed.all().into_iter().find(|f| {
        f.kind() == "function_definition"
            && syntax::function_name(parsed, *f)
                .is_some_and(|n| n.rsplit("::").next() == Some(call.name.as_str()))
    });
    let Some(func) = defined else {
        return false;
    };
    let params = syntax::descendants(func)
        .into_iter()
        .find(|n| n.kind() == "function_declarator")
        .and_then(|d| d.child_by_field_name("parameters"));
    let Some(params) = params else {
        return true;
    };
    syntax::named_children(params)
        .get(at)
        .is_none_or(|p| !parsed.src(*p).trim_start().starts_with("const "))
}

/// True when the loop body `body` (outside `skip`) uses the queue or may
/// write the tensor.
fn loop_disturbs(parsed: &Parsed<'_>, body: Node<'_>, skip: &[Node<'_>], run: &Run<'_>) -> bool {
    let outside = |n: Node<'_>| !skip.iter().any(|s| syntax::within(n, *s));
    syntax::descendants(body)
        .into_iter()
        .filter(|n| outside(*n))
        .any(|n| {
            (matches!(n.kind(), "identifier" | "field_identifier") && parsed.src(n) == run.queue)
                || Call::of(parsed, n).is_some_and(|c| writes(parsed, &c, &run.tensor))
        })
}

/// Names the loop changes: its variable, names declared in its body,
/// names assigned or incremented in it.
fn loop_names<'a>(parsed: &Parsed<'a>, for_node: Node<'_>) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = syntax::declared_names(parsed, for_node);
    for n in syntax::descendants(for_node) {
        let target = match n.kind() {
            "assignment_expression" => n.child_by_field_name("left"),
            "update_expression" => n.child_by_field_name("argument"),
            _ => None,
        };
        if let Some(t) = target {
            out.extend(syntax::identifiers(parsed, t));
        }
    }
    out
}

/// The lines of `stmts` re-indented from `from` to `to`.
fn moved(text: &str, stmts: &[Node<'_>], from: &str, to: &str) -> String {
    let range = syntax::line_range(
        text,
        stmts[0].start_byte()..stmts[stmts.len() - 1].end_byte(),
    );
    text[range]
        .lines()
        .map(|l| match l.strip_prefix(from) {
            Some(rest) => format!("{to}{rest}\n"),
            None => format!("{to}{}\n", l.trim_start()),
        })
        .collect()
}

fn absent_plans(pkg: &Sources, file: &str, parsed: &Parsed<'_>, queues: &[String]) -> Vec<Plan> {
    let text = parsed.text;
    let mut out = Vec::new();
    for for_node in parsed.all() {
        let Some(body) = syntax::for_body(for_node) else {
            continue;
        };
        if !syntax::in_block(for_node) {
            continue;
        }
        let stmts = syntax::block_statements(body);
        let changing = loop_names(parsed, for_node);
        for at in 0..stmts.len() {
            let Some(run) = run_at(parsed, &stmts, at, queues) else {
                continue;
            };
            let last = at + run.stmts.len() - 1;
            let Some(free_at) = stmts[last + 1..]
                .iter()
                .position(|s| is_free(parsed, *s, &run))
                .map(|p| last + 1 + p)
            else {
                continue;
            };
            let invariant = run.stmts.iter().all(|s| {
                syntax::identifiers(parsed, *s)
                    .into_iter()
                    .all(|id| id == run.tensor || !changing.contains(&id))
            });
            let mut skip = run.stmts.clone();
            skip.push(stmts[free_at]);
            if !invariant || loop_disturbs(parsed, body, &skip, &run) {
                continue;
            }
            let outer = syntax::indent_at(text, for_node.start_byte());
            let inner = syntax::indent_at(text, run.stmts[0].start_byte());
            let loop_lines = syntax::line_range(text, for_node.byte_range());
            let free = stmts[free_at];
            let edits: Vec<(Range<usize>, String)> = vec![
                (
                    loop_lines.start..loop_lines.start,
                    moved(text, &run.stmts, &inner, &outer),
                ),
                (
                    syntax::line_range(
                        text,
                        run.stmts[0].start_byte()..run.stmts[run.stmts.len() - 1].end_byte(),
                    ),
                    String::new(),
                ),
                (syntax::line_range(text, free.byte_range()), String::new()),
                (
                    loop_lines.end..loop_lines.end,
                    format!("{outer}{}\n", parsed.src(free)),
                ),
            ];
            let site = site_at::<NzHoist>(
                file,
                text,
                run.stmts[1].byte_range(),
                SiteState::Absent,
                format!(
                    "ND -> NZ copy into {} repeated in every iteration of the loop at line {}",
                    run.tensor,
                    syntax::line_of(text, for_node.start_byte())
                ),
            );
            let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
            out.push(Plan { site, output });
        }
    }
    out
}

fn present_plans(pkg: &Sources, file: &str, parsed: &Parsed<'_>, queues: &[String]) -> Vec<Plan> {
    let text = parsed.text;
    let mut out = Vec::new();
    for block in parsed.all() {
        if block.kind() != "compound_statement" {
            continue;
        }
        let stmts = syntax::block_statements(block);
        for at in 0..stmts.len() {
            let Some(run) = run_at(parsed, &stmts, at, queues) else {
                continue;
            };
            let loop_at = at + run.stmts.len();
            let (Some(for_node), Some(free)) = (stmts.get(loop_at), stmts.get(loop_at + 1)) else {
                continue;
            };
            let Some(body) = syntax::for_body(*for_node) else {
                continue;
            };
            let reads = syntax::identifiers(parsed, body).contains(&run.tensor.as_str());
            if !reads || !is_free(parsed, *free, &run) || loop_disturbs(parsed, body, &[], &run) {
                continue;
            }
            let body_stmts = syntax::block_statements(body);
            let Some(first) = body_stmts.first() else {
                continue;
            };
            let outer = syntax::indent_at(text, for_node.start_byte());
            let inner = syntax::indent_at(text, first.start_byte());
            let top = syntax::line_range(text, first.byte_range()).start;
            let close = body.end_byte() - 1;
            let close_line = syntax::line_range(text, close..close).start;
            let edits: Vec<(Range<usize>, String)> = vec![
                (
                    syntax::line_range(
                        text,
                        run.stmts[0].start_byte()..run.stmts[run.stmts.len() - 1].end_byte(),
                    ),
                    String::new(),
                ),
                (top..top, moved(text, &run.stmts, &outer, &inner)),
                (
                    close_line..close_line,
                    format!("{inner}{}\n", parsed.src(*free)),
                ),
                (syntax::line_range(text, free.byte_range()), String::new()),
            ];
            let site = site_at::<NzHoist>(
                file,
                text,
                run.stmts[1].byte_range(),
                SiteState::Present,
                format!(
                    "ND -> NZ copy into {} once before the loop at line {}",
                    run.tensor,
                    syntax::line_of(text, for_node.start_byte())
                ),
            );
            let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
            out.push(Plan { site, output });
        }
    }
    out
}

impl Engine for NzHoist {
    const TAG: &'static str = "nz_hoist";
    const FAMILY: &'static str = "memory";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Hoist a loop-invariant ND -> NZ conversion (DataCopy with Nd2NzParams into A1/B1) out of the loop and keep the block in L1",
            bottleneck: "the same GM block is copied and converted to NZ in every iteration (MTE2 time and GM traffic grow with the loop count)",
            reuse_when: "a loop over column (or row) blocks of C copies the same block of A (or B) into L1 each time and the block fits L1 next to the loop's own buffers",
            avoid_when: "the block changes with the loop, or holding it takes the L1 room the loop's double buffering needs",
            expected_effect: "one conversion per loop instead of one per iteration: the MTE2 time of that operand shrinks by the loop count",
            keywords: &["Nd2Nz", "NZ", "ND2NZ", "layout conversion", "DataCopy", "A1", "B1", "L1", "hoist", "loop-invariant", "cube"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            if !text.contains("Nd2NzParams") {
                continue;
            }
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            let queues = l1_queues(&parsed);
            if queues.is_empty() {
                continue;
            }
            out.extend(absent_plans(pkg, file, &parsed, &queues));
            out.extend(present_plans(pkg, file, &parsed, &queues));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{snapshot_diff, Motif};
    use expect_test::expect;

    /// The motif tests' cube fixture: A's block row converted once per row.
    const ROWPANEL: &str =
        include_str!("../tests/fixtures/matmul_rowpanel/op_kernel/matmul_rowpanel.cpp");

    #[test]
    fn the_block_rows_conversion_goes_into_the_column_loop_and_back() {
        let strong = Sources::from_files([("op_kernel/mm.cpp", ROWPANEL)]);
        let sites = NzHoist.detect(&strong);
        let seen: Vec<(usize, SiteState, &str)> = sites
            .iter()
            .map(|s| (s.line, s.state, s.note.as_str()))
            .collect();
        assert_eq!(
            seen,
            vec![(
                61,
                SiteState::Present,
                "ND -> NZ copy into a1 once before the loop at line 64"
            )]
        );
        let weak = NzHoist.remove(&strong, &sites[0]).unwrap();
        expect![[r#"
            --- a/op_kernel/mm.cpp
            +++ b/op_kernel/mm.cpp
            @@ -57,11 +57,11 @@
                     uint32_t m0 = mi * baseM;
                     uint32_t mc = m - m0 < baseM ? m - m0 : baseM;
                     uint32_t mA = AlignUp(mc, FRACTAL);
            -        LocalTensor<half> a1 = qA1.AllocTensor<half>();
            -        DataCopy(a1, aGm[static_cast<uint64_t>(m0) * k], Nd2NzParams(1, mc, k, 0, k, mA, 1, 0));
            -        qA1.EnQue(a1);
            -        a1 = qA1.DeQue<half>();
                     for (uint32_t ni = 0; ni < tilesN; ni++) {
            +            LocalTensor<half> a1 = qA1.AllocTensor<half>();
            +            DataCopy(a1, aGm[static_cast<uint64_t>(m0) * k], Nd2NzParams(1, mc, k, 0, k, mA, 1, 0));
            +            qA1.EnQue(a1);
            +            a1 = qA1.DeQue<half>();
                         uint32_t n0 = ni * baseN;
                         uint32_t nc = n - n0 < baseN ? n - n0 : baseN;
                         uint32_t nA = AlignUp(nc, FRACTAL);
            @@ -91,8 +91,8 @@
                         fp.ndNum = 1;
                         Fixpipe(cGm[static_cast<uint64_t>(m0) * n + n0], c1, fp);
                         qC.FreeTensor(c1);
            +            qA1.FreeTensor(a1);
                     }
            -        qA1.FreeTensor(a1);
                 }

                 __aicore__ inline void SplitA(const LocalTensor<half>& a1, uint32_t mA)
        "#]]
        .assert_eq(&snapshot_diff(&strong, &weak));
        let absent = NzHoist.detect(&weak);
        assert_eq!(absent.len(), 1, "{absent:?}");
        assert_eq!(absent[0].state, SiteState::Absent);
        let back = NzHoist.apply(&weak, &absent[0]).unwrap();
        assert_eq!(back.get("op_kernel/mm.cpp"), Some(ROWPANEL));
    }

    #[test]
    fn a_copy_that_moves_with_the_loop_or_a_block_the_loop_writes_stays() {
        let strong = Sources::from_files([("op_kernel/mm.cpp", ROWPANEL)]);
        let weak = NzHoist
            .remove(&strong, &NzHoist.detect(&strong)[0])
            .unwrap();
        let weak = weak.get("op_kernel/mm.cpp").unwrap().to_string();
        // The copy reads a column block that moves with the loop.
        let moving = weak.replace(
            "aGm[static_cast<uint64_t>(m0) * k]",
            "aGm[static_cast<uint64_t>(m0) * k + ni]",
        );
        // The loop writes the block (a non-const parameter).
        let written = weak.replace(
            "SplitA(const LocalTensor<half>& a1",
            "SplitA(LocalTensor<half>& a1",
        );
        // The loop takes another block from the same queue.
        let shared = weak.replace(
            "            SplitA(a1, mA);\n",
            "            SplitA(a1, mA);\n            LocalTensor<half> x1 = qA1.AllocTensor<half>();\n            qA1.FreeTensor(x1);\n",
        );
        for text in [moving, written, shared] {
            let sites = NzHoist.detect(&Sources::from_files([("op_kernel/mm.cpp", text.as_str())]));
            assert!(sites.is_empty(), "{sites:?}");
        }
    }
}
