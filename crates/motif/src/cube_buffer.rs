//! Double buffering of the cube's L1 and L0 data (issue 27 item 5): two
//! buffers for the A and B blocks in L1 (A1/B1) and in L0A/L0B (A2/B2),
//! so the GM -> L1 copy (MTE2) and the L1 -> L0 load (MTE1) of the next K
//! block overlap the Mmad of this one (PIPE_M).
//!
//! Two forms, found from the syntax tree:
//!
//! - **Hand-written cube kernels**: the queues declared `TQue<TPosition::A1,
//!   D> q` (B1, A2, B2 likewise) and their `InitBuffer(q, N, bytes)`. One
//!   site per level: L1 (the A1 and B1 queues) and L0 (the A2 and B2
//!   queues). Present when every depth and buffer count of the level is at
//!   least 2 (a literal or a file- or class-scope integer constant); the
//!   removal writes 1 in place of each (the argument, not the constant,
//!   so vector queues that share a `BUFFER_NUM` keep theirs); apply writes
//!   2. Precondition of apply: two buffers of the runtime block sizes fit
//!   L1 (512 KB) / L0A and L0B (64 KB each); the sizes are the host's, so
//!   the motif cannot check it and the device judges (an overflow is a
//!   failed evaluation).
//! - **The high-level Matmul API**, where L1/L0 buffering lives inside the
//!   library and the host's TCubeTiling says how much of it there is:
//!   `depthA1 = stepM x stepKa x db` and `depthB1 = stepN x stepKb x db`
//!   with db 1 or 2 (guide 6.2.4.2.2, table 6-1073). A host that sets them
//!   (`t.set_depthA1(E)`, `t.set_depthB1(E)`) has them double-buffered
//!   when a factor of each `E` is 2 (a literal or a constant): the removal
//!   writes 1 for that factor; apply turns a factor 1 into 2, or appends
//!   `* 2` to an `E` made only of the tiling's steps. A host that leaves
//!   the depths to `GetTiling` (which double-buffers them, the guide's
//!   recommended `depthA1 / (stepM x stepKa) = 2`) gets the single-buffered
//!   depths set after its `GetTiling` statement. L0 buffering (dbL0A/dbL0B)
//!   is the library's own (the emulated Matmul always double-buffers L0):
//!   no site. Precondition of apply: the doubled blocks fit L1 (the
//!   host's own L1 check, or GetTiling's, refuses otherwise).

use super::syntax::{self, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use std::collections::BTreeMap;
use std::ops::Range;
use tree_sitter::Node;

/// Double buffering of the cube's L1 and L0 blocks.
pub struct CubeDoubleBuffer;

/// Integer constants declared outside function bodies (namespace scope,
/// class scope): name -> value.
pub(crate) fn scope_constants(parsed: &Parsed<'_>) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for decl in parsed.all() {
        if decl.kind() != "declaration" && decl.kind() != "field_declaration" {
            continue;
        }
        if syntax::enclosing_function(decl).is_some() {
            continue;
        }
        let text = parsed.src(decl);
        if !text.contains("const") {
            continue;
        }
        let mut cursor = decl.walk();
        let declarators: Vec<Node<'_>> = decl
            .children_by_field_name("declarator", &mut cursor)
            .collect();
        for d in declarators {
            let value = d
                .child_by_field_name("value")
                .or_else(|| d.child_by_field_name("default_value"));
            let (Some(name), Some(value)) = (syntax::declared_name(parsed, d), value) else {
                continue;
            };
            if let Some(v) = int_value(parsed.src(value)) {
                out.insert(name.to_string(), v);
            }
        }
    }
    out
}

/// The value of an integer literal (`2`, `2u`, `2UL`).
fn int_value(text: &str) -> Option<i64> {
    text.trim()
        .trim_end_matches(['u', 'U', 'l', 'L'])
        .parse()
        .ok()
}

/// The value of an expression that is a literal or a known constant.
fn value_of(parsed: &Parsed<'_>, node: Node<'_>, constants: &BTreeMap<String, i64>) -> Option<i64> {
    let text = parsed.src(node).trim();
    int_value(text).or_else(|| constants.get(text).copied())
}

/// A queue of the cube: its name, its position's level and the nodes that
/// say how many buffers it has.
struct CubeQueue<'t> {
    name: String,
    /// "L1" for A1/B1, "L0" for A2/B2.
    level: &'static str,
    /// The depth argument of `TQue<pos, depth>`, if written.
    depth: Option<Node<'t>>,
}

/// The level of a TPosition argument (`TPosition::A1`, `QuePosition::B2`).
fn level_of(position: &str) -> Option<&'static str> {
    match position.rsplit("::").next()?.trim() {
        "A1" | "B1" => Some("L1"),
        "A2" | "B2" => Some("L0"),
        _ => None,
    }
}

/// Every `TQue` on A1/B1/A2/B2 declared in the file.
fn cube_queues<'t>(parsed: &'t Parsed<'_>) -> Vec<CubeQueue<'t>> {
    let mut out = Vec::new();
    for decl in parsed.all() {
        if decl.kind() != "declaration" && decl.kind() != "field_declaration" {
            continue;
        }
        let Some(ty) = decl.child_by_field_name("type") else {
            continue;
        };
        if ty.kind() != "template_type" {
            continue;
        }
        let Some(tname) = ty.child_by_field_name("name") else {
            continue;
        };
        if parsed.src(tname).rsplit("::").next() != Some("TQue") {
            continue;
        }
        let Some(args) = ty.child_by_field_name("arguments") else {
            continue;
        };
        let args = syntax::named_children(args);
        let Some(level) = args.first().and_then(|a| level_of(parsed.src(*a))) else {
            continue;
        };
        let depth = args.get(1).copied();
        let mut cursor = decl.walk();
        let declarators: Vec<Node<'_>> = decl
            .children_by_field_name("declarator", &mut cursor)
            .collect();
        for d in declarators {
            if let Some(name) = syntax::declared_name(parsed, d) {
                out.push(CubeQueue {
                    name: name.to_string(),
                    level,
                    depth,
                });
            }
        }
    }
    out
}

/// The queue a tensor-buffer expression names: `q`, `this->q`, `&q`.
pub(crate) fn queue_name<'a>(parsed: &Parsed<'a>, node: Node<'_>) -> &'a str {
    let text = parsed.src(node).trim().trim_start_matches('&');
    text.rsplit("->")
        .next()
        .unwrap_or(text)
        .rsplit('.')
        .next()
        .unwrap_or(text)
}

/// Every `TQue` of the file on a cube position (A1, B1, A2, B2, CO1), by
/// name: its position.
pub(crate) fn queue_positions<'a>(parsed: &Parsed<'a>) -> BTreeMap<&'a str, &'static str> {
    let mut out = BTreeMap::new();
    for decl in parsed.all() {
        if decl.kind() != "declaration" && decl.kind() != "field_declaration" {
            continue;
        }
        let Some(ty) = decl.child_by_field_name("type") else {
            continue;
        };
        if ty.kind() != "template_type"
            || ty
                .child_by_field_name("name")
                .is_none_or(|n| parsed.src(n).rsplit("::").next() != Some("TQue"))
        {
            continue;
        }
        let Some(first) = ty
            .child_by_field_name("arguments")
            .and_then(|a| syntax::named_children(a).into_iter().next())
        else {
            continue;
        };
        let position = match parsed.src(first).rsplit("::").next().map(str::trim) {
            Some("A1") => "A1",
            Some("B1") => "B1",
            Some("A2") => "A2",
            Some("B2") => "B2",
            Some("CO1") => "CO1",
            _ => continue,
        };
        let mut cursor = decl.walk();
        let declarators: Vec<Node<'_>> = decl
            .children_by_field_name("declarator", &mut cursor)
            .collect();
        for d in declarators {
            if let Some(name) = syntax::declared_name(parsed, d) {
                out.insert(name, position);
            }
        }
    }
    out
}

/// The kernel form: one site per level of every kernel file.
fn kernel_plans(pkg: &Sources) -> Vec<Plan> {
    let mut out = Vec::new();
    for (file, text) in pkg.kernel_files() {
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        let queues = cube_queues(&parsed);
        if queues.is_empty() {
            continue;
        }
        let constants = scope_constants(&parsed);
        let inits: Vec<(String, Node<'_>)> = parsed
            .calls()
            .into_iter()
            .filter(|c| c.name == "InitBuffer" && c.args.len() == 3)
            .map(|c| (queue_name(&parsed, c.args[0]).to_string(), c.args[1]))
            .collect();
        for level in ["L1", "L0"] {
            let mine: Vec<&CubeQueue<'_>> = queues.iter().filter(|q| q.level == level).collect();
            if mine.is_empty() {
                continue;
            }
            // Every node that counts buffers, with its value.
            let mut counts: Vec<(Range<usize>, Option<i64>)> = Vec::new();
            let mut complete = true;
            for q in &mine {
                if let Some(d) = q.depth {
                    counts.push((d.byte_range(), value_of(&parsed, d, &constants)));
                }
                let of_q: Vec<Node<'_>> = inits
                    .iter()
                    .filter(|(n, _)| *n == q.name)
                    .map(|(_, a)| *a)
                    .collect();
                complete &= !of_q.is_empty();
                counts.extend(
                    of_q.into_iter()
                        .map(|a| (a.byte_range(), value_of(&parsed, a, &constants))),
                );
            }
            if !complete || counts.iter().any(|(_, v)| v.is_none()) {
                continue;
            }
            let values: Vec<i64> = counts.iter().filter_map(|(_, v)| *v).collect();
            let (state, new) = if values.iter().all(|&v| v >= 2) {
                (SiteState::Present, "1")
            } else if values.contains(&1) && values.iter().all(|&v| v >= 1) {
                (SiteState::Absent, "2")
            } else {
                continue;
            };
            let mut ranges: Vec<Range<usize>> = counts.into_iter().map(|(r, _)| r).collect();
            ranges.sort_by_key(|r| r.start);
            ranges.dedup();
            let Some(anchor) = mine.iter().find_map(|q| q.depth).map(|d| d.byte_range()) else {
                continue;
            };
            let names: Vec<&str> = mine.iter().map(|q| q.name.as_str()).collect();
            let note = format!(
                "{level} queues {} with {} buffers",
                names.join(", "),
                if state == SiteState::Present {
                    "2"
                } else {
                    "1"
                }
            );
            let site = site_at::<CubeDoubleBuffer>(file, text, anchor, state, note);
            let edits: Vec<(Range<usize>, String)> =
                ranges.into_iter().map(|r| (r, new.to_string())).collect();
            let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
            out.push(Plan { site, output });
        }
    }
    out
}

/// The factors of a product (`a * b * (c)`), left to right.
fn factors<'t>(node: Node<'t>, parsed: &Parsed<'_>) -> Vec<Node<'t>> {
    match node.kind() {
        "binary_expression"
            if node
                .child_by_field_name("operator")
                .is_some_and(|o| parsed.src(o) == "*") =>
        {
            let mut out = Vec::new();
            if let Some(l) = node.child_by_field_name("left") {
                out.extend(factors(l, parsed));
            }
            if let Some(r) = node.child_by_field_name("right") {
                out.extend(factors(r, parsed));
            }
            out
        }
        "parenthesized_expression" => match syntax::named_children(node).as_slice() {
            [inner] => factors(*inner, parsed),
            _ => vec![node],
        },
        _ => vec![node],
    }
}

/// True for a call of one of the tiling's step getters (`t.get_stepM()`)
/// or a plain variable: a factor that is no buffer count.
fn is_step_factor(parsed: &Parsed<'_>, node: Node<'_>) -> bool {
    let text = parsed.src(node);
    match node.kind() {
        "call_expression" => text.contains("get_step"),
        "field_expression" => text.contains("step"),
        "identifier" => text.to_ascii_lowercase().contains("step"),
        _ => false,
    }
}

/// The Matmul API form: `set_depthA1/B1` calls in host files, or the
/// `GetTiling` statement of a host that sets neither.
fn host_plans(pkg: &Sources) -> Vec<Plan> {
    let mut out = Vec::new();
    for (file, text) in pkg.host_files() {
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        let constants = scope_constants(&parsed);
        let setters: Vec<_> = parsed
            .calls()
            .into_iter()
            .filter(|c| {
                (c.name == "set_depthA1" || c.name == "set_depthB1")
                    && c.args.len() == 1
                    && c.object.is_some()
            })
            .collect();
        if setters.is_empty() {
            out.extend(get_tiling_plan(pkg, file, &parsed));
            continue;
        }
        // Present: each setter has a factor 2; absent: none has a factor
        // above 1 and each is made of steps and ones.
        let mut present_edits = Vec::new();
        let mut absent_edits = Vec::new();
        let mut present = true;
        let mut absent = true;
        for call in &setters {
            let fs = factors(call.args[0], &parsed);
            let values: Vec<Option<i64>> = fs
                .iter()
                .map(|f| value_of(&parsed, *f, &constants))
                .collect();
            match fs
                .iter()
                .zip(&values)
                .find(|(_, v)| **v == Some(2))
                .map(|(f, _)| *f)
            {
                Some(two) => present_edits.push((two.byte_range(), "1".to_string())),
                None => present = false,
            }
            let steps_and_ones = fs
                .iter()
                .zip(&values)
                .all(|(f, v)| *v == Some(1) || v.is_none() && is_step_factor(&parsed, *f));
            if !steps_and_ones {
                absent = false;
                continue;
            }
            match fs.iter().zip(&values).find(|(_, v)| **v == Some(1)) {
                Some((one, _)) => absent_edits.push((one.byte_range(), "2".to_string())),
                None => {
                    let end = call.args[0].end_byte();
                    absent_edits.push((end..end, " * 2".to_string()));
                }
            }
        }
        let (state, edits) = if present {
            (SiteState::Present, present_edits)
        } else if absent {
            (SiteState::Absent, absent_edits)
        } else {
            continue;
        };
        let first = setters[0].node;
        let note = format!(
            "Matmul L1 depths ({}) {}",
            setters
                .iter()
                .map(|c| parsed.src(c.node))
                .collect::<Vec<_>>()
                .join("; "),
            if state == SiteState::Present {
                "double-buffered"
            } else {
                "single-buffered"
            }
        );
        let site = site_at::<CubeDoubleBuffer>(file, text, first.byte_range(), state, note);
        let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
        out.push(Plan { site, output });
    }
    out
}

/// A host that leaves the L1 depths to `GetTiling(tiling)` (double
/// buffered): the removal sets them single-buffered after the statement
/// that calls it.
fn get_tiling_plan(pkg: &Sources, file: &str, parsed: &Parsed<'_>) -> Option<Plan> {
    let text = parsed.text;
    if !text.contains("MatmulApiTiling") && !text.contains("MultiCoreMatmulTiling") {
        return None;
    }
    let call = parsed
        .calls()
        .into_iter()
        .find(|c| c.name == "GetTiling" && c.args.len() == 1 && c.object.is_some())?;
    let tiling = parsed.src(call.args[0]).trim();
    if !tiling
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        return None;
    }
    // The statement directly in a block that holds the call.
    let mut stmt = call.node;
    while !syntax::in_block(stmt) || !stmt.kind().ends_with("statement") {
        stmt = stmt.parent()?;
    }
    let indent = syntax::indent_at(text, stmt.start_byte());
    let at = syntax::line_range(text, stmt.byte_range()).end;
    let insert = format!(
        "{indent}{tiling}.set_depthA1({tiling}.get_stepM() * {tiling}.get_stepKa() * 1);\n\
         {indent}{tiling}.set_depthB1({tiling}.get_stepN() * {tiling}.get_stepKb() * 1);\n"
    );
    let site = site_at::<CubeDoubleBuffer>(
        file,
        text,
        call.node.byte_range(),
        SiteState::Present,
        format!(
            "Matmul L1 depths left to {} (double-buffered)",
            parsed.src(call.node)
        ),
    );
    let output = syntax::apply_edits(text, &[(at..at, insert)]).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

impl Engine for CubeDoubleBuffer {
    const TAG: &'static str = "cube_double_buffer";
    const FAMILY: &'static str = "pipeline";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Double-buffer the cube's A/B blocks in L1 (A1/B1) and L0A/L0B (A2/B2), or the Matmul tiling's L1 depths",
            bottleneck: "the GM -> L1 copy (MTE2) and the L1 -> L0 load (MTE1) of the next K block wait for the Mmad of this one: cube, MTE1 and MTE2 busy times add up instead of overlapping",
            reuse_when: "a K loop streams several blocks per output tile through A1/B1/A2/B2 queues with one buffer each, or a Matmul tiling keeps one L1 load of A and B (depthA1 = stepM x stepKa), and two fit L1 (512 KB) / L0A, L0B (64 KB)",
            avoid_when: "K is one block per tile, or the second buffer does not fit (then shrink baseK or keep the whole K single-buffered in L1)",
            expected_effect: "copies of K block i+1 overlap the Mmad of block i: up to ~2x on cube kernels whose MTE2 and cube times are balanced",
            keywords: &["double buffering", "cube", "L1", "L0A", "L0B", "A1", "B1", "A2", "B2", "depthA1", "depthB1", "TCubeTiling", "Mmad", "MTE1", "MTE2", "ping-pong"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut plans = kernel_plans(pkg);
        plans.extend(host_plans(pkg));
        plans
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{snapshot_diff, Motif, Site};
    use expect_test::expect;

    /// A cube kernel written for the test: L1 queues sized by a shared
    /// constant (a vector queue uses it too), L0 queues by a literal.
    const KERNEL: &str = r#"#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t BUFFER_NUM = 2;
class KernelMm {
public:
    __aicore__ inline void Init(TPipe* pipe, uint32_t baseM, uint32_t baseN, uint32_t baseK)
    {
        pipe->InitBuffer(qA1, BUFFER_NUM, baseM * baseK * sizeof(half));
        pipe->InitBuffer(qB1, BUFFER_NUM, baseK * baseN * sizeof(half));
        pipe->InitBuffer(qA2, 2, baseM * baseK * sizeof(half));
        pipe->InitBuffer(qB2, 2, baseK * baseN * sizeof(half));
        pipe->InitBuffer(qC, 1, baseM * baseN * sizeof(float));
        pipe->InitBuffer(qX, BUFFER_NUM, 1024);
    }
private:
    TQue<TPosition::A1, BUFFER_NUM> qA1;
    TQue<TPosition::B1, BUFFER_NUM> qB1;
    TQue<TPosition::A2, 2> qA2;
    TQue<TPosition::B2, 2> qB2;
    TQue<TPosition::CO1, 1> qC;
    TQue<TPosition::VECIN, BUFFER_NUM> qX;
};
"#;

    #[test]
    fn the_l1_and_l0_queues_are_single_buffered_and_back_level_by_level() {
        let strong = Sources::from_files([("op_kernel/mm.cpp", KERNEL)]);
        let sites = CubeDoubleBuffer.detect(&strong);
        let seen: Vec<(usize, SiteState, &str)> = sites
            .iter()
            .map(|s| (s.line, s.state, s.note.as_str()))
            .collect();
        assert_eq!(
            seen,
            vec![
                (16, SiteState::Present, "L1 queues qA1, qB1 with 2 buffers"),
                (18, SiteState::Present, "L0 queues qA2, qB2 with 2 buffers"),
            ]
        );
        let weak = CubeDoubleBuffer.remove(&strong, &sites[0]).unwrap();
        // The vector queue keeps BUFFER_NUM; the L0 queues keep 2.
        expect![[r#"
            --- a/op_kernel/mm.cpp
            +++ b/op_kernel/mm.cpp
            @@ -5,16 +5,16 @@
             public:
                 __aicore__ inline void Init(TPipe* pipe, uint32_t baseM, uint32_t baseN, uint32_t baseK)
                 {
            -        pipe->InitBuffer(qA1, BUFFER_NUM, baseM * baseK * sizeof(half));
            -        pipe->InitBuffer(qB1, BUFFER_NUM, baseK * baseN * sizeof(half));
            +        pipe->InitBuffer(qA1, 1, baseM * baseK * sizeof(half));
            +        pipe->InitBuffer(qB1, 1, baseK * baseN * sizeof(half));
                     pipe->InitBuffer(qA2, 2, baseM * baseK * sizeof(half));
                     pipe->InitBuffer(qB2, 2, baseK * baseN * sizeof(half));
                     pipe->InitBuffer(qC, 1, baseM * baseN * sizeof(float));
                     pipe->InitBuffer(qX, BUFFER_NUM, 1024);
                 }
             private:
            -    TQue<TPosition::A1, BUFFER_NUM> qA1;
            -    TQue<TPosition::B1, BUFFER_NUM> qB1;
            +    TQue<TPosition::A1, 1> qA1;
            +    TQue<TPosition::B1, 1> qB1;
                 TQue<TPosition::A2, 2> qA2;
                 TQue<TPosition::B2, 2> qB2;
                 TQue<TPosition::CO1, 1> qC;
        "#]]
        .assert_eq(&snapshot_diff(&strong, &weak));
        let absent: Vec<Site> = CubeDoubleBuffer
            .detect(&weak)
            .into_iter()
            .filter(|s| s.state == SiteState::Absent)
            .collect();
        assert_eq!(absent.len(), 1, "{absent:?}");
        let back = CubeDoubleBuffer.apply(&weak, &absent[0]).unwrap();
        expect![[r#"
            --- a/op_kernel/mm.cpp
            +++ b/op_kernel/mm.cpp
            @@ -5,16 +5,16 @@
             public:
                 __aicore__ inline void Init(TPipe* pipe, uint32_t baseM, uint32_t baseN, uint32_t baseK)
                 {
            -        pipe->InitBuffer(qA1, 1, baseM * baseK * sizeof(half));
            -        pipe->InitBuffer(qB1, 1, baseK * baseN * sizeof(half));
            +        pipe->InitBuffer(qA1, 2, baseM * baseK * sizeof(half));
            +        pipe->InitBuffer(qB1, 2, baseK * baseN * sizeof(half));
                     pipe->InitBuffer(qA2, 2, baseM * baseK * sizeof(half));
                     pipe->InitBuffer(qB2, 2, baseK * baseN * sizeof(half));
                     pipe->InitBuffer(qC, 1, baseM * baseN * sizeof(float));
                     pipe->InitBuffer(qX, BUFFER_NUM, 1024);
                 }
             private:
            -    TQue<TPosition::A1, 1> qA1;
            -    TQue<TPosition::B1, 1> qB1;
            +    TQue<TPosition::A1, 2> qA1;
            +    TQue<TPosition::B1, 2> qB1;
                 TQue<TPosition::A2, 2> qA2;
                 TQue<TPosition::B2, 2> qB2;
                 TQue<TPosition::CO1, 1> qC;
        "#]]
        .assert_eq(&snapshot_diff(&weak, &back));
        // The L0 level on its own.
        let weak_l0 = CubeDoubleBuffer.remove(&strong, &sites[1]).unwrap();
        let k = weak_l0.get("op_kernel/mm.cpp").unwrap();
        assert!(k.contains("TQue<TPosition::A2, 1> qA2;") && k.contains("InitBuffer(qB2, 1,"));
        assert!(k.contains("InitBuffer(qA1, BUFFER_NUM,"));
    }

    #[test]
    fn a_queue_without_init_buffer_or_an_unknown_count_gives_no_site() {
        // The depth is a runtime value: nothing is known.
        let text = KERNEL.replace(
            "pipe->InitBuffer(qA1, BUFFER_NUM,",
            "pipe->InitBuffer(qA1, n,",
        );
        let sites = CubeDoubleBuffer.detect(&Sources::from_files([("op_kernel/mm.cpp", text)]));
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert!(sites[0].note.starts_with("L0"));
        // No InitBuffer for qB2.
        let text = KERNEL.replace(
            "        pipe->InitBuffer(qB2, 2, baseK * baseN * sizeof(half));\n",
            "",
        );
        let sites = CubeDoubleBuffer.detect(&Sources::from_files([("op_kernel/mm.cpp", text)]));
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert!(sites[0].note.starts_with("L1"));
    }

    /// Host code written for the test in the shape of the built-in Matmul
    /// packages: GetTiling, then the L1 depths set by the host.
    const HOST: &str = r#"namespace optiling {
namespace {
constexpr int32_t L1_DB = 2;
bool AdjustL1(optiling::TCubeTiling& t, int32_t step)
{
    t.set_stepKa(step);
    t.set_depthA1(t.get_stepM() * step * L1_DB);
    t.set_depthB1(t.get_stepN() * step * L1_DB);
    return true;
}
}  // namespace
}  // namespace optiling
"#;

    #[test]
    fn the_matmul_l1_depths_lose_and_regain_their_factor_two() {
        let strong = Sources::from_files([("op_host/mm.cpp", HOST)]);
        let sites = CubeDoubleBuffer.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!((sites[0].line, sites[0].state), (7, SiteState::Present));
        let weak = CubeDoubleBuffer.remove(&strong, &sites[0]).unwrap();
        expect![[r#"
            --- a/op_host/mm.cpp
            +++ b/op_host/mm.cpp
            @@ -4,8 +4,8 @@
             bool AdjustL1(optiling::TCubeTiling& t, int32_t step)
             {
                 t.set_stepKa(step);
            -    t.set_depthA1(t.get_stepM() * step * L1_DB);
            -    t.set_depthB1(t.get_stepN() * step * L1_DB);
            +    t.set_depthA1(t.get_stepM() * step * 1);
            +    t.set_depthB1(t.get_stepN() * step * 1);
                 return true;
             }
             }  // namespace
        "#]]
        .assert_eq(&snapshot_diff(&strong, &weak));
        let absent = CubeDoubleBuffer.detect(&weak);
        assert_eq!(absent.len(), 1, "{absent:?}");
        assert_eq!(absent[0].state, SiteState::Absent);
        let back = CubeDoubleBuffer.apply(&weak, &absent[0]).unwrap();
        let host = back.get("op_host/mm.cpp").unwrap();
        assert!(
            host.contains("t.set_depthA1(t.get_stepM() * step * 2);"),
            "{host}"
        );
        // Depths made of steps alone get a factor two appended.
        let plain = HOST.replace(" * step * L1_DB", " * t.get_stepKa()");
        let plain = Sources::from_files([("op_host/mm.cpp", plain)]);
        let sites = CubeDoubleBuffer.detect(&plain);
        assert_eq!(sites.len(), 1, "{sites:?}");
        let back = CubeDoubleBuffer.apply(&plain, &sites[0]).unwrap();
        let host = back.get("op_host/mm.cpp").unwrap();
        assert!(
            host.contains("t.set_depthB1(t.get_stepN() * t.get_stepKa() * 2);"),
            "{host}"
        );
        // A factor nobody can read (a runtime db) is left alone.
        let odd = HOST.replace(" * step * L1_DB", " * step * db");
        assert!(CubeDoubleBuffer
            .detect(&Sources::from_files([("op_host/mm.cpp", odd)]))
            .is_empty());
    }

    #[test]
    fn a_host_that_leaves_the_depths_to_get_tiling_gets_them_single_buffered() {
        let host = r#"static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    matmul_tiling::MultiCoreMatmulTiling cubeTiling(ascendcPlatform);
    cubeTiling.SetShape(m, n, k);
    MmTilingData tiling;
    if (cubeTiling.GetTiling(tiling.cubeTilingData) == -1) {
        return ge::GRAPH_FAILED;
    }
    context->SetBlockDim(4);
    return ge::GRAPH_SUCCESS;
}
"#;
        let strong = Sources::from_files([("op_host/mm.cpp", host)]);
        let sites = CubeDoubleBuffer.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        let weak = CubeDoubleBuffer.remove(&strong, &sites[0]).unwrap();
        expect![[r#"
            --- a/op_host/mm.cpp
            +++ b/op_host/mm.cpp
            @@ -6,6 +6,8 @@
                 if (cubeTiling.GetTiling(tiling.cubeTilingData) == -1) {
                     return ge::GRAPH_FAILED;
                 }
            +    tiling.cubeTilingData.set_depthA1(tiling.cubeTilingData.get_stepM() * tiling.cubeTilingData.get_stepKa() * 1);
            +    tiling.cubeTilingData.set_depthB1(tiling.cubeTilingData.get_stepN() * tiling.cubeTilingData.get_stepKb() * 1);
                 context->SetBlockDim(4);
                 return ge::GRAPH_SUCCESS;
             }
        "#]]
        .assert_eq(&snapshot_diff(&strong, &weak));
        let absent = CubeDoubleBuffer.detect(&weak);
        assert_eq!(absent.len(), 1, "{absent:?}");
        assert_eq!(absent[0].state, SiteState::Absent);
        assert!(CubeDoubleBuffer.apply(&weak, &absent[0]).is_some());
    }
}
