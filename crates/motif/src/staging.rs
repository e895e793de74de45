//! Staging copies: a tile copied from one UB buffer into another only to
//! be computed on there (or computed in a work buffer only to be copied
//! into the output tile) costs a vector or MTE pass and a buffer of UB.
//!
//! - apply, forward: `DataCopy(w, x, n)` (or `Adds(w, x, 0, n)`, `Muls(w, x,
//!   1, n)`) with both UB tensors, where later statements of the block only
//!   read `w` and nothing writes `x` or `w` afterwards: the copy goes and
//!   the reads use `x`. Preconditions: `x` is not released (`FreeTensor`,
//!   `EnQue`) before the last read of `w`; `w` is read nowhere else.
//! - apply, backward: ops of the block write a work tile `w`, then
//!   `DataCopy(y, w, n)` copies it into `y`: the ops write `y` directly and
//!   the copy goes. Preconditions: `y` is declared before the first of
//!   those ops and not used between them; `w` is dead after the copy.
//!   In both, a work tile left unused (`LocalTensor<T> w = buf.Get<T>();`)
//!   goes too, and so does the `InitBuffer` of a `TBuf` nothing uses any
//!   more: the UB it held is free for larger tiles.
//! - remove: the first vector op reading a tile dequeued from a queue
//!   reads a staged copy instead (`Adds(stage, x, 0, n)` into a new `TBuf`
//!   of the queue's buffer size, the way naive kernels stage their input).

use super::fuse::next_statement;
use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use std::ops::Range;
use tree_sitter::Node;

/// UB-to-UB staging copies.
pub struct StagingCopy;

fn mentions(parsed: &Parsed<'_>, node: Node<'_>, name: &str) -> bool {
    syntax::descendants(node).into_iter().any(|n| {
        (n.kind() == "identifier" || n.kind() == "field_identifier") && parsed.src(n) == name
    })
}

/// Whether `name` is declared as a `LocalTensor` in the function or file.
fn is_local_tensor(parsed: &Parsed<'_>, at: Node<'_>, name: &str) -> bool {
    for scope in [syntax::enclosing_function(at), Some(parsed.root())]
        .into_iter()
        .flatten()
    {
        for node in syntax::descendants(scope) {
            if !matches!(
                node.kind(),
                "declaration" | "parameter_declaration" | "field_declaration"
            ) {
                continue;
            }
            let Some(ty) = node.child_by_field_name("type") else {
                continue;
            };
            let t = parsed.src(ty);
            if t.contains("LocalTensor") && syntax::declares(parsed, node, name) {
                return true;
            }
        }
    }
    false
}

/// `(dst, src)` of a UB-to-UB copy statement: `DataCopy(w, x, n)`,
/// `Adds(w, x, 0, n)`, `Muls(w, x, 1, n)`.
fn copy_of<'a>(parsed: &Parsed<'a>, stmt: Node<'_>) -> Option<(&'a str, &'a str)> {
    let call = syntax::statement_call(parsed, stmt)?;
    let a = syntax::arg_texts(parsed, &call);
    let is_copy = match (call.name.as_str(), a.len()) {
        ("DataCopy", 3) => true,
        ("Adds", 4) => {
            let k = a[2].trim();
            let inner = k
                .strip_prefix("static_cast<")
                .and_then(|r| r.split_once(">("))
                .map(|(_, v)| v.trim_end_matches(')'))
                .unwrap_or(k);
            matches!(inner.trim_end_matches(['f', 'F']), "0" | "0.0" | "0.")
        }
        ("Muls", 4) => {
            let k = a[2].trim();
            let inner = k
                .strip_prefix("static_cast<")
                .and_then(|r| r.split_once(">("))
                .map(|(_, v)| v.trim_end_matches(')'))
                .unwrap_or(k);
            matches!(inner.trim_end_matches(['f', 'F']), "1" | "1.0" | "1.")
        }
        _ => false,
    };
    if !is_copy || call.args[0].kind() != "identifier" || call.args[1].kind() != "identifier" {
        return None;
    }
    let (w, x) = (a[0], a[1]);
    if w == x || !is_local_tensor(parsed, stmt, w) || !is_local_tensor(parsed, stmt, x) {
        return None;
    }
    Some((w, x))
}

/// Whether a statement writes `name`: the destination of a vector op or a
/// copy, or a release (`FreeTensor(name)`, `EnQue(name)`), or an
/// assignment.
fn writes(parsed: &Parsed<'_>, stmt: Node<'_>, name: &str) -> bool {
    for n in syntax::descendants(stmt) {
        if let Some(call) = Call::of(parsed, n) {
            let first = call.args.first().map(|a| parsed.src(*a));
            if first == Some(name)
                && (syntax::is_vector_op(&call.name)
                    || syntax::COPY_OPS.contains(&call.name.as_str()))
            {
                return true;
            }
            if matches!(call.name.as_str(), "FreeTensor" | "EnQue") && first == Some(name) {
                return true;
            }
        }
        if n.kind() == "assignment_expression"
            && n.child_by_field_name("left")
                .is_some_and(|l| parsed.src(l) == name)
        {
            return true;
        }
    }
    false
}

/// Every whole-identifier occurrence of `from` in `node` renamed `to`.
fn renames(
    parsed: &Parsed<'_>,
    node: Node<'_>,
    from: &str,
    to: &str,
) -> Vec<(Range<usize>, String)> {
    syntax::descendants(node)
        .into_iter()
        .filter(|n| n.kind() == "identifier" && parsed.src(*n) == from)
        .map(|n| (n.byte_range(), to.to_string()))
        .collect()
}

/// Deletes a statement with its line when alone on it.
fn deletion(text: &str, stmt: Node<'_>) -> (Range<usize>, String) {
    let r = stmt.byte_range();
    if syntax::alone_on_lines(text, r.clone()) {
        (syntax::line_range(text, r), String::new())
    } else {
        (r, String::new())
    }
}

/// The edits that drop a work tile left unused: its `Get` declaration in
/// the function, and the `InitBuffer` of its `TBuf` when nothing else of
/// the file gets it.
fn drop_unused(
    parsed: &Parsed<'_>,
    func: Node<'_>,
    w: &str,
    edits: &[(Range<usize>, String)],
) -> Vec<(Range<usize>, String)> {
    let text = parsed.text;
    let mut out = Vec::new();
    // Uses of `w` that survive the edits.
    let live = syntax::descendants(func).into_iter().any(|n| {
        n.kind() == "identifier"
            && parsed.src(n) == w
            && !edits.iter().any(|(r, _)| r.contains(&n.start_byte()))
            && !n
                .parent()
                .is_some_and(|p| p.kind() == "init_declarator" || p.kind() == "declaration")
    });
    if live {
        return out;
    }
    let Some(decl) = syntax::descendants(func)
        .into_iter()
        .find(|n| n.kind() == "declaration" && syntax::declares(parsed, *n, w))
    else {
        return out;
    };
    // `LocalTensor<T> w = buf.Get<T>();`
    let get = syntax::descendants(decl)
        .into_iter()
        .filter_map(|n| Call::of(parsed, n))
        .find(|c| c.name == "Get");
    let Some(get) = get else {
        return out;
    };
    let Some(buf) = get.object.map(|o| parsed.src(o)) else {
        return out;
    };
    out.push(deletion(text, decl));
    let other_gets = parsed
        .calls()
        .into_iter()
        .filter(|c| c.name == "Get" && c.object.is_some_and(|o| parsed.src(o) == buf))
        .count();
    if other_gets == 1 {
        for c in parsed.calls() {
            if c.name == "InitBuffer" && c.args.len() == 2 && parsed.src(c.args[0]) == buf {
                if let Some(stmt) = c.statement() {
                    out.push(deletion(text, stmt));
                }
            }
        }
    }
    out
}

fn forward(pkg: &Sources, file: &str, parsed: &Parsed<'_>, stmt: Node<'_>) -> Option<Plan> {
    let (w, x) = copy_of(parsed, stmt)?;
    if !syntax::in_block(stmt) {
        return None;
    }
    let text = parsed.text;
    let func = syntax::enclosing_function(stmt)?;
    let mut edits = vec![deletion(text, stmt)];
    let mut cur = stmt;
    let mut last_read: Option<Node<'_>> = None;
    let mut x_released = false;
    while let Some(t) = next_statement(cur) {
        cur = t;
        let uses_w = mentions(parsed, t, w);
        if uses_w {
            if x_released || writes(parsed, t, w) {
                return None;
            }
            edits.extend(renames(parsed, t, w, x));
            last_read = Some(t);
        }
        if writes(parsed, t, x) {
            x_released = true;
        }
    }
    let last = last_read?;
    // `w` read nowhere else (other functions, before the copy).
    let outside = syntax::descendants(parsed.root()).into_iter().any(|n| {
        n.kind() == "identifier"
            && parsed.src(n) == w
            && !(stmt.start_byte()..last.end_byte()).contains(&n.start_byte())
            && syntax::within(n, func)
            && !n
                .parent()
                .is_some_and(|p| p.kind() == "init_declarator" || p.kind() == "declaration")
    });
    if outside || !syntax::declared_names(parsed, func).contains(&w) {
        return None;
    }
    edits.extend(drop_unused(parsed, func, w, &edits));
    let site = site_at::<StagingCopy>(
        file,
        text,
        stmt.byte_range(),
        SiteState::Absent,
        format!(
            "{} stages {x} into {w}: compute on {x} in place",
            parsed.src(stmt)
        ),
    );
    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

fn backward(pkg: &Sources, file: &str, parsed: &Parsed<'_>, stmt: Node<'_>) -> Option<Plan> {
    let (y, w) = copy_of(parsed, stmt)?;
    if !syntax::in_block(stmt) {
        return None;
    }
    let text = parsed.text;
    let func = syntax::enclosing_function(stmt)?;
    if !syntax::declared_names(parsed, func).contains(&w) {
        return None;
    }
    // The statements of the block before the copy that use `w`.
    let block = stmt.parent()?;
    let before: Vec<Node<'_>> = syntax::block_statements(block)
        .into_iter()
        .filter(|s| s.end_byte() <= stmt.start_byte())
        .collect();
    let first = before.iter().position(|s| {
        mentions(parsed, *s, w) && !(s.kind() == "declaration" && syntax::declares(parsed, *s, w))
    })?;
    let span = &before[first..];
    // Every use of `w` there is in a vector op; `y` appears in none of them.
    for s in span {
        if mentions(parsed, *s, y) {
            return None;
        }
        if mentions(parsed, *s, w) {
            let call = syntax::statement_call(parsed, *s)?;
            if !syntax::is_vector_op(&call.name) {
                return None;
            }
        }
    }
    // `y` declared before the first use of `w`.
    let y_decl = syntax::descendants(func)
        .into_iter()
        .find(|n| n.kind() == "declaration" && syntax::declares(parsed, *n, y));
    if let Some(d) = y_decl {
        if d.start_byte() > span[0].start_byte() {
            return None;
        }
    } else if !is_local_tensor(parsed, stmt, y) {
        return None;
    }
    // `w` dead after the copy.
    let after_use = syntax::descendants(func).into_iter().any(|n| {
        n.kind() == "identifier" && parsed.src(n) == w && n.start_byte() >= stmt.end_byte()
    });
    if after_use {
        return None;
    }
    let mut edits = vec![deletion(text, stmt)];
    for s in span {
        edits.extend(renames(parsed, *s, w, y));
    }
    edits.extend(drop_unused(parsed, func, w, &edits));
    let site = site_at::<StagingCopy>(
        file,
        text,
        stmt.byte_range(),
        SiteState::Absent,
        format!(
            "{} copies the work tile {w} into {y}: compute into {y}",
            parsed.src(stmt)
        ),
    );
    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

/// The removal: the first vector op of a function reading a dequeued tile
/// reads a staged copy of it.
fn removal(pkg: &Sources, file: &str, parsed: &Parsed<'_>) -> Vec<Plan> {
    let text = parsed.text;
    let mut out = Vec::new();
    let calls = parsed.calls();
    for deque in calls.iter().filter(|c| c.name == "DeQue") {
        let Some(decl) = syntax::ancestor(deque.node, &["declaration"]) else {
            continue;
        };
        let mut cursor = decl.walk();
        let Some(d) = decl
            .children_by_field_name("declarator", &mut cursor)
            .next()
        else {
            continue;
        };
        let Some(x) = syntax::declared_name(parsed, d) else {
            continue;
        };
        let Some(queue) = deque.object.map(|o| parsed.src(o)) else {
            continue;
        };
        // The queue's buffer size.
        let Some(size) = calls
            .iter()
            .find(|c| c.name == "InitBuffer" && c.args.len() == 3 && parsed.src(c.args[0]) == queue)
            .map(|c| parsed.src(c.args[2]))
        else {
            continue;
        };
        let Some(init_stmt) = calls
            .iter()
            .rfind(|c| c.name == "InitBuffer")
            .and_then(|c| c.statement())
        else {
            continue;
        };
        let Some(prefix) = calls
            .iter()
            .find(|c| c.name == "InitBuffer")
            .and_then(|c| c.node.child_by_field_name("function"))
            .and_then(|f| parsed.src(f).strip_suffix("InitBuffer"))
        else {
            continue;
        };
        let Some(ty) = syntax::tensor_elem_type(
            parsed,
            syntax::enclosing_function(decl).unwrap_or(parsed.root()),
            x,
        ) else {
            continue;
        };
        // The first vector op after the DeQue that reads `x`.
        let mut cur = decl;
        let mut target = None;
        while let Some(t) = next_statement(cur) {
            cur = t;
            if let Some(c) = syntax::statement_call(parsed, t) {
                if syntax::is_vector_op(&c.name)
                    && c.args.len() >= 3
                    && c.args[1..c.args.len() - 1]
                        .iter()
                        .any(|a| parsed.src(*a) == x)
                    && parsed.src(c.args[0]) != x
                {
                    target = Some((t, c));
                    break;
                }
            }
        }
        let Some((t, c)) = target else { continue };
        let Some(class) = syntax::ancestor(decl, &["class_specifier", "struct_specifier"]) else {
            continue;
        };
        let Some(body) = class.child_by_field_name("body") else {
            continue;
        };
        let Some(close) = body.end_byte().checked_sub(1) else {
            continue;
        };
        let line_start = text[..close].rfind('\n').map_or(0, |p| p + 1);
        if !text[line_start..close].trim().is_empty() {
            continue;
        }
        let Some(last) = syntax::named_children(body).last().copied() else {
            continue;
        };
        let buf = (0..)
            .map(|k| format!("ascStageBuf{k}"))
            .find(|n| !text.contains(n.as_str()))
            .unwrap_or_default();
        let count = parsed.src(*c.args.last().unwrap_or(&c.args[0]));
        let indent = syntax::indent_at(text, t.start_byte());
        let stage = format!("{x}Staged");
        let mut edits = vec![
            (
                t.start_byte()..t.start_byte(),
                format!(
                    "AscendC::LocalTensor<{ty}> {stage} = {buf}.Get<{ty}>();\n{indent}AscendC::Adds({stage}, {x}, static_cast<{ty}>(0), {count});\n{indent}"
                ),
            ),
            (
                init_stmt.end_byte()..init_stmt.end_byte(),
                format!(
                    "\n{}{prefix}InitBuffer({buf}, {size});",
                    syntax::indent_at(text, init_stmt.start_byte())
                ),
            ),
            (
                line_start..line_start,
                format!(
                    "{}AscendC::TBuf<AscendC::TPosition::VECCALC> {buf};\n",
                    syntax::indent_at(text, last.start_byte())
                ),
            ),
        ];
        for a in &c.args[1..c.args.len() - 1] {
            if parsed.src(*a) == x {
                edits.push((a.byte_range(), stage.clone()));
            }
        }
        let site = site_at::<StagingCopy>(
            file,
            text,
            t.byte_range(),
            SiteState::Present,
            format!("{} reads the dequeued {x} in place", parsed.src(t)),
        );
        let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
        out.push(Plan { site, output });
        // One removal site per function is enough.
        break;
    }
    out
}

impl Engine for StagingCopy {
    const TAG: &'static str = "staging_copy";
    const FAMILY: &'static str = "memory";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Compute on the queue tiles in place instead of staging them through work buffers",
            bottleneck: "a UB-to-UB copy per tile (DataCopy between local tensors, or Adds x+0) moves every element once more and holds a second tile of UB, which caps the tile size",
            reuse_when: "an input tile is copied into a work buffer only to be read, or a result is computed in a work buffer only to be copied into the output tile",
            avoid_when: "the staged tile is modified while the original is still needed, or the copy changes the layout (strides, padding)",
            expected_effect: "one vector or MTE pass less per tile and a tile of UB freed: a few percent to ~30% on vector-bound kernels, more once the freed UB allows larger tiles",
            keywords: &["staging copy", "work buffer", "DataCopy", "UB to UB", "in place", "TBuf", "extra copy", "UB budget"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            out.extend(removal(pkg, file, &parsed));
            for node in parsed.all() {
                if node.kind() != "expression_statement" || node.has_error() {
                    continue;
                }
                if let Some(plan) = forward(pkg, file, &parsed, node) {
                    out.push(plan);
                } else if let Some(plan) = backward(pkg, file, &parsed, node) {
                    out.push(plan);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Motif;
    use expect_test::expect;

    fn kernel(body: &str) -> Sources {
        let text = format!(
            "class K {{\npublic:\n    void Init() {{\n        pipe.InitBuffer(inQueueX, 1, 4096);\n        pipe.InitBuffer(outQueueY, 1, 4096);\n        pipe.InitBuffer(workBuf, 4096);\n    }}\n    void Compute(uint32_t n)\n    {{\n        LocalTensor<float> xLocal = inQueueX.DeQue<float>();\n        LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();\n        LocalTensor<float> work = workBuf.Get<float>();\n{body}\n        outQueueY.EnQue<float>(yLocal);\n        inQueueX.FreeTensor(xLocal);\n    }}\nprivate:\n    TPipe pipe;\n    TBuf<TPosition::VECCALC> workBuf;\n}};\n"
        );
        Sources::from_files([("op_kernel/k.cpp", text)])
    }

    #[test]
    fn an_input_staged_into_a_work_buffer_is_read_in_place() {
        let weak = kernel("        DataCopy(work, xLocal, n);\n        Exp(yLocal, work, n);\n        Add(yLocal, yLocal, work, n);");
        let site = StagingCopy
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let strong = StagingCopy.apply(&weak, &site).unwrap();
        // Read in place; the work buffer and its copy go.
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -3,16 +3,13 @@
                 void Init() {
                     pipe.InitBuffer(inQueueX, 1, 4096);
                     pipe.InitBuffer(outQueueY, 1, 4096);
            -        pipe.InitBuffer(workBuf, 4096);
                 }
                 void Compute(uint32_t n)
                 {
                     LocalTensor<float> xLocal = inQueueX.DeQue<float>();
                     LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
            -        LocalTensor<float> work = workBuf.Get<float>();
            -        DataCopy(work, xLocal, n);
            -        Exp(yLocal, work, n);
            -        Add(yLocal, yLocal, work, n);
            +        Exp(yLocal, xLocal, n);
            +        Add(yLocal, yLocal, xLocal, n);
                     outQueueY.EnQue<float>(yLocal);
                     inQueueX.FreeTensor(xLocal);
                 }
        "#]]
        .assert_eq(&crate::diff(&weak, &strong));
    }

    #[test]
    fn a_result_computed_in_a_work_buffer_is_computed_in_the_output() {
        let weak = kernel("        Exp(work, xLocal, n);\n        Muls(work, work, 2.0f, n);\n        DataCopy(yLocal, work, n);");
        let site = StagingCopy
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let strong = StagingCopy.apply(&weak, &site).unwrap();
        let k = strong.get("op_kernel/k.cpp").unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -3,16 +3,13 @@
                 void Init() {
                     pipe.InitBuffer(inQueueX, 1, 4096);
                     pipe.InitBuffer(outQueueY, 1, 4096);
            -        pipe.InitBuffer(workBuf, 4096);
                 }
                 void Compute(uint32_t n)
                 {
                     LocalTensor<float> xLocal = inQueueX.DeQue<float>();
                     LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
            -        LocalTensor<float> work = workBuf.Get<float>();
            -        Exp(work, xLocal, n);
            -        Muls(work, work, 2.0f, n);
            -        DataCopy(yLocal, work, n);
            +        Exp(yLocal, xLocal, n);
            +        Muls(yLocal, yLocal, 2.0f, n);
                     outQueueY.EnQue<float>(yLocal);
                     inQueueX.FreeTensor(xLocal);
                 }
        "#]]
        .assert_eq(&crate::diff(&weak, &strong));
        assert!(!k.contains("workBuf, 4096"), "{k}");
    }

    #[test]
    fn a_released_or_overwritten_source_keeps_the_copy() {
        let weak = kernel("        DataCopy(work, xLocal, n);\n        Exp(xLocal, xLocal, n);\n        Add(yLocal, xLocal, work, n);");
        assert!(StagingCopy
            .detect(&weak)
            .iter()
            .all(|s| s.state == SiteState::Present));
    }

    #[test]
    fn the_removal_stages_a_dequeued_tile_and_comes_back() {
        let strong = kernel("        Exp(yLocal, xLocal, n);");
        let site = StagingCopy
            .detect(&strong)
            .into_iter()
            .find(|s| s.state == SiteState::Present)
            .unwrap();
        let weak = StagingCopy.remove(&strong, &site).unwrap();
        // The tile staged through a buffer of its own.
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,17 +4,21 @@
                     pipe.InitBuffer(inQueueX, 1, 4096);
                     pipe.InitBuffer(outQueueY, 1, 4096);
                     pipe.InitBuffer(workBuf, 4096);
            +        pipe.InitBuffer(ascStageBuf0, 4096);
                 }
                 void Compute(uint32_t n)
                 {
                     LocalTensor<float> xLocal = inQueueX.DeQue<float>();
                     LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
                     LocalTensor<float> work = workBuf.Get<float>();
            -        Exp(yLocal, xLocal, n);
            +        AscendC::LocalTensor<float> xLocalStaged = ascStageBuf0.Get<float>();
            +        AscendC::Adds(xLocalStaged, xLocal, static_cast<float>(0), n);
            +        Exp(yLocal, xLocalStaged, n);
                     outQueueY.EnQue<float>(yLocal);
                     inQueueX.FreeTensor(xLocal);
                 }
             private:
                 TPipe pipe;
                 TBuf<TPosition::VECCALC> workBuf;
            +    AscendC::TBuf<AscendC::TPosition::VECCALC> ascStageBuf0;
             };
        "#]]
        .assert_eq(&crate::diff(&strong, &weak));
        let back = StagingCopy
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let again = StagingCopy.apply(&weak, &back).unwrap();
        // And read in place again.
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,16 +4,13 @@
                     pipe.InitBuffer(inQueueX, 1, 4096);
                     pipe.InitBuffer(outQueueY, 1, 4096);
                     pipe.InitBuffer(workBuf, 4096);
            -        pipe.InitBuffer(ascStageBuf0, 4096);
                 }
                 void Compute(uint32_t n)
                 {
                     LocalTensor<float> xLocal = inQueueX.DeQue<float>();
                     LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
                     LocalTensor<float> work = workBuf.Get<float>();
            -        AscendC::LocalTensor<float> xLocalStaged = ascStageBuf0.Get<float>();
            -        AscendC::Adds(xLocalStaged, xLocal, static_cast<float>(0), n);
            -        Exp(yLocal, xLocalStaged, n);
            +        Exp(yLocal, xLocal, n);
                     outQueueY.EnQue<float>(yLocal);
                     inQueueX.FreeTensor(xLocal);
                 }
        "#]]
        .assert_eq(&crate::diff(&weak, &again));
    }
}
