//! Hoisting loop-invariant vector work out of the tile loop (a Duplicate
//! of a constant, a Cast of gamma: work whose result is the same in every
//! iteration).
//!
//! A vector instruction S is loop-invariant for a loop when: it does not
//! mention the loop variable or anything declared in the loop; no variable
//! it mentions is assigned in the loop; its destination buffer is written
//! by no other instruction of the file (so nothing in the loop overwrites
//! the result); and its source buffers are written by no other instruction
//! or copy of the file.
//!
//! - remove: an invariant S just before a loop (only declarations and
//!   plain statements between) moves to the top of the loop body, so it
//!   runs every iteration.
//! - apply: an invariant S directly in a loop body moves just before the
//!   loop.
//!
//! Invariant GM loads (the same bytes copied into a `TBuf` tile on every
//! call of a function that runs in a loop) are loaded once per block
//! ([`super::load_once`]), and GM data read by two passes (a reduction
//! pass, then an elementwise pass over the same row) once when the row
//! fits the tile ([`super::one_pass`]).

use super::load_once;
use super::one_pass;
use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use tree_sitter::Node;

/// Hoisting of loop-invariant vector instructions.
pub struct HoistInvariant;

/// The buffer behind a tensor expression: `buf` of `buf.Get<T>()`, of a
/// local initialised from it, or of `x[...]`; otherwise the root name.
pub(crate) fn buffer_of(parsed: &Parsed<'_>, expr: Node<'_>) -> Option<String> {
    match expr.kind() {
        "subscript_expression" | "parenthesized_expression" => {
            let inner = expr
                .child_by_field_name("argument")
                .or_else(|| syntax::named_children(expr).into_iter().next())?;
            buffer_of(parsed, inner)
        }
        "call_expression" => {
            let function = expr.child_by_field_name("function")?;
            let object = function.child_by_field_name("argument")?;
            let field = syntax::unwrap_dependent(function.child_by_field_name("field")?);
            let method = field.child_by_field_name("name").unwrap_or(field);
            match parsed.src(method) {
                "Get" | "AllocTensor" | "DeQue" => Some(parsed.src(object).to_string()),
                _ => buffer_of(parsed, object),
            }
        }
        "identifier" => {
            let name = parsed.src(expr);
            let scope = syntax::enclosing_function(expr)?;
            for decl in syntax::descendants(scope) {
                if decl.kind() != "declaration" || !syntax::declares(parsed, decl, name) {
                    continue;
                }
                let mut cursor = decl.walk();
                let inits: Vec<Node<'_>> = decl
                    .children_by_field_name("declarator", &mut cursor)
                    .collect();
                for d in inits {
                    if d.kind() == "init_declarator"
                        && syntax::declared_name(parsed, d) == Some(name)
                    {
                        if let Some(value) = d.child_by_field_name("value") {
                            if value.kind() == "call_expression" {
                                return buffer_of(parsed, value);
                            }
                        }
                    }
                }
            }
            Some(name.to_string())
        }
        _ => None,
    }
}

/// Every buffer written by a vector instruction or a copy into UB, with
/// the call that writes it.
fn writers<'t>(parsed: &'t Parsed<'_>) -> Vec<(String, Node<'t>)> {
    parsed
        .calls()
        .into_iter()
        .filter(|c| syntax::is_vector_op(&c.name) || syntax::COPY_OPS.contains(&c.name.as_str()))
        .filter_map(|c| {
            let dst = *c.args.first()?;
            Some((buffer_of(parsed, dst)?, c.node))
        })
        .collect()
}

/// True when the call statement `call` is invariant for `loop_node`
/// (see the module documentation); `inside` says whether it sits in the
/// loop body (apply) or before the loop (remove).
fn invariant(
    parsed: &Parsed<'_>,
    call: &Call<'_>,
    loop_node: Node<'_>,
    writes: &[(String, Node<'_>)],
) -> bool {
    if !syntax::is_vector_op(&call.name) || call.args.is_empty() {
        return false;
    }
    let Some(body) = syntax::for_body(loop_node) else {
        return false;
    };
    // Names bound by the loop.
    let mut bound: Vec<&str> = syntax::declared_names(parsed, body);
    if let Some(init) = loop_node.child_by_field_name("initializer") {
        bound.extend(syntax::declared_names(parsed, init));
        if let Some(v) = syntax::loop_var(parsed, loop_node) {
            bound.push(v);
        }
    }
    let used = syntax::identifiers(parsed, call.node);
    if used.iter().any(|u| bound.contains(u)) {
        return false;
    }
    // Nothing it reads is assigned in the loop.
    for n in syntax::descendants(loop_node) {
        let target = match n.kind() {
            "assignment_expression" => n.child_by_field_name("left"),
            "update_expression" => n.child_by_field_name("argument"),
            _ => None,
        };
        if let Some(t) = target {
            if used.contains(&parsed.src(t)) {
                return false;
            }
        }
    }
    // Its destination has no other writer; its sources have no writer.
    let Some(dst) = buffer_of(parsed, call.args[0]) else {
        return false;
    };
    if writes.iter().any(|(b, n)| *b == dst && *n != call.node) {
        return false;
    }
    for src in &call.args[1..] {
        if let Some(b) = buffer_of(parsed, *src) {
            if b != dst && writes.iter().any(|(w, _)| *w == b) {
                return false;
            }
        }
    }
    true
}

fn delete_statement(text: &str, stmt: Node<'_>) -> (std::ops::Range<usize>, String) {
    let r = stmt.byte_range();
    if syntax::alone_on_lines(text, r.clone()) {
        (syntax::line_range(text, r), String::new())
    } else {
        (r, String::new())
    }
}

impl Engine for HoistInvariant {
    const TAG: &'static str = "hoist_invariant";
    const FAMILY: &'static str = "vector";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Hoist loop-invariant vector work (constant Duplicate, Cast of gamma) out of the tile loop",
            bottleneck: "the tile loop recomputes the same tile every iteration (a Duplicate of a constant, a Cast of a weight): vector time and scalar issue slots spent on work whose result never changes",
            reuse_when: "a vector instruction in the loop depends only on values fixed before the loop and writes a buffer nothing else writes",
            avoid_when: "the instruction's inputs change per tile, or its destination is overwritten inside the loop",
            expected_effect: "one instruction per kernel instead of one per tile: a few percent on vector-bound loops, more when the hoisted op is long (Cast of a row)",
            keywords: &["loop invariant", "hoist", "Duplicate", "Cast", "constant tile", "ones", "gamma", "redundant compute", "vector", "GM read twice", "two passes", "load once"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            out.extend(load_once::plans::<Self>(pkg, file, &parsed));
            out.extend(one_pass::plans::<Self>(pkg, file, &parsed));
            let writes = writers(&parsed);
            for loop_node in parsed.all() {
                let Some(body) = syntax::for_body(loop_node) else {
                    continue;
                };
                if !syntax::in_block(loop_node) {
                    continue;
                }
                let body_stmts = syntax::block_statements(body);
                // Absent: invariant statements in the body.
                for stmt in &body_stmts {
                    let Some(call) = syntax::statement_call(&parsed, *stmt) else {
                        continue;
                    };
                    if !invariant(&parsed, &call, loop_node, &writes) {
                        continue;
                    }
                    let indent = syntax::indent_at(text, loop_node.start_byte());
                    let line_start = syntax::line_range(text, loop_node.byte_range()).start;
                    let edits = vec![
                        (
                            line_start..line_start,
                            format!("{indent}{}\n", parsed.src(*stmt)),
                        ),
                        delete_statement(text, *stmt),
                    ];
                    let site = site_at::<Self>(
                        file,
                        text,
                        stmt.byte_range(),
                        SiteState::Absent,
                        format!(
                            "{} runs every iteration of the loop at line {}",
                            parsed.src(*stmt),
                            syntax::line_of(text, loop_node.start_byte())
                        ),
                    );
                    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
                    out.push(Plan { site, output });
                }
                // Present: invariant statements just before the loop.
                let Some(first) = body_stmts.first() else {
                    continue;
                };
                let mut prev = loop_node.prev_named_sibling();
                while let Some(stmt) = prev {
                    let kind = stmt.kind();
                    if kind == "comment" || kind == "declaration" {
                        prev = stmt.prev_named_sibling();
                        continue;
                    }
                    let Some(call) = syntax::statement_call(&parsed, stmt) else {
                        break;
                    };
                    if invariant(&parsed, &call, loop_node, &writes) {
                        let indent = syntax::indent_at(text, first.start_byte());
                        let at = body.start_byte() + 1;
                        let edits = vec![
                            (at..at, format!("\n{indent}{}", parsed.src(stmt))),
                            delete_statement(text, stmt),
                        ];
                        let site = site_at::<Self>(
                            file,
                            text,
                            stmt.byte_range(),
                            SiteState::Present,
                            format!(
                                "{} hoisted before the loop at line {}",
                                parsed.src(stmt),
                                syntax::line_of(text, loop_node.start_byte())
                            ),
                        );
                        let output =
                            syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
                        out.push(Plan { site, output });
                    }
                    prev = stmt.prev_named_sibling();
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn a_gamma_row_loaded_in_every_iteration_is_loaded_once() {
        let text = "template <typename T>\nclass K {\npublic:\n    void Process() {\n        for (uint32_t r = 0; r < rows; r++) {\n            Compute(r);\n        }\n    }\n    void Compute(uint32_t r) {\n        LocalTensor<T> g = gammaBuf.Get<T>();\n        DataCopyExtParams p{1, static_cast<uint32_t>(this->cols * sizeof(T)), 0, 0, 0};\n        DataCopyPad(g, gammaGm, p, {false, 0, 0, 0});\n        PipeBarrier<PIPE_ALL>();\n        LocalTensor<T> x = q.DeQue<T>();\n        DataCopyPad(x, xGm[r * cols], p, {false, 0, 0, 0});\n        Mul(x, x, g, cols);\n    }\nprivate:\n    TBuf<TPosition::VECCALC> gammaBuf;\n    GlobalTensor<T> gammaGm, xGm;\n};\n";
        let weak = Sources::from_files([("op_kernel/k.cpp", text)]);
        let sites: Vec<_> = HoistInvariant
            .detect(&weak)
            .into_iter()
            .filter(|s| s.state == SiteState::Absent)
            .collect();
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].line, 12);
        let strong = HoistInvariant.apply(&weak, &sites[0]).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -9,7 +9,10 @@
                 void Compute(uint32_t r) {
                     LocalTensor<T> g = gammaBuf.Get<T>();
                     DataCopyExtParams p{1, static_cast<uint32_t>(this->cols * sizeof(T)), 0, 0, 0};
            -        DataCopyPad(g, gammaGm, p, {false, 0, 0, 0});
            +        if (!ascLoaded0) {
            +            DataCopyPad(g, gammaGm, p, {false, 0, 0, 0});
            +            ascLoaded0 = true;
            +        }
                     PipeBarrier<PIPE_ALL>();
                     LocalTensor<T> x = q.DeQue<T>();
                     DataCopyPad(x, xGm[r * cols], p, {false, 0, 0, 0});
            @@ -18,4 +21,5 @@
             private:
                 TBuf<TPosition::VECCALC> gammaBuf;
                 GlobalTensor<T> gammaGm, xGm;
            +    bool ascLoaded0 = false;
             };
        "#]]
        .assert_eq(&crate::diff(&weak, &strong));
        let back = HoistInvariant
            .detect(&strong)
            .into_iter()
            .find(|s| s.state == SiteState::Present && s.note.contains("once per block"))
            .unwrap();
        let weak2 = HoistInvariant.remove(&strong, &back).unwrap();
        // The load-once guard goes again.
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -9,10 +9,7 @@
                 void Compute(uint32_t r) {
                     LocalTensor<T> g = gammaBuf.Get<T>();
                     DataCopyExtParams p{1, static_cast<uint32_t>(this->cols * sizeof(T)), 0, 0, 0};
            -        if (!ascLoaded0) {
            -            DataCopyPad(g, gammaGm, p, {false, 0, 0, 0});
            -            ascLoaded0 = true;
            -        }
            +        DataCopyPad(g, gammaGm, p, {false, 0, 0, 0});
                     PipeBarrier<PIPE_ALL>();
                     LocalTensor<T> x = q.DeQue<T>();
                     DataCopyPad(x, xGm[r * cols], p, {false, 0, 0, 0});
        "#]]
        .assert_eq(&crate::diff(&strong, &weak2));
    }
    use crate::Motif;

    const STRONG: &str = r#"class K {
    __aicore__ inline void Process()
    {
        LocalTensor<float> ones = onesBuf.Get<float>();
        Duplicate(ones, 1.0f, tileLength);
        uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
        for (uint32_t i = 0; i < tileNum; i++) {
            CopyIn(i);
            Compute(i);
        }
    }
    __aicore__ inline void Compute(uint32_t i)
    {
        LocalTensor<float> ones = onesBuf.Get<float>();
        LocalTensor<float> x = inQueue.DeQue<float>();
        Div(x, ones, x, tileLength);
    }
};
"#;

    #[test]
    fn a_constant_duplicate_moves_into_the_loop_and_back_out() {
        let strong = Sources::from_files([("op_kernel/k.cpp", STRONG)]);
        let sites = HoistInvariant.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!((sites[0].state, sites[0].line), (SiteState::Present, 5));
        let weak = HoistInvariant.remove(&strong, &sites[0]).unwrap();
        let k = weak.get("op_kernel/k.cpp").unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -2,9 +2,9 @@
                 __aicore__ inline void Process()
                 {
                     LocalTensor<float> ones = onesBuf.Get<float>();
            -        Duplicate(ones, 1.0f, tileLength);
                     uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
                     for (uint32_t i = 0; i < tileNum; i++) {
            +            Duplicate(ones, 1.0f, tileLength);
                         CopyIn(i);
                         Compute(i);
                     }
        "#]]
        .assert_eq(&crate::diff(&strong, &weak));
        assert_eq!(k.matches("Duplicate").count(), 1);
        let sites = HoistInvariant.detect(&weak);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].state, SiteState::Absent);
        let back = HoistInvariant.apply(&weak, &sites[0]).unwrap();
        // The Duplicate back before the loop.
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -3,8 +3,8 @@
                 {
                     LocalTensor<float> ones = onesBuf.Get<float>();
                     uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
            +        Duplicate(ones, 1.0f, tileLength);
                     for (uint32_t i = 0; i < tileNum; i++) {
            -            Duplicate(ones, 1.0f, tileLength);
                         CopyIn(i);
                         Compute(i);
                     }
        "#]]
        .assert_eq(&crate::diff(&weak, &back));
    }

    #[test]
    fn work_that_depends_on_the_loop_or_is_overwritten_stays() {
        // Depends on the loop variable.
        let text = "void f() {\n    for (uint32_t i = 0; i < n; i++) {\n        Duplicate(ones, static_cast<float>(i), len);\n    }\n}\n";
        assert!(HoistInvariant
            .detect(&Sources::from_files([("op_kernel/k.cpp", text)]))
            .is_empty());
        // The destination is accumulated into elsewhere.
        let text = "void f() {\n    for (uint32_t r = 0; r < n; r++) {\n        Duplicate(acc, 0.0f, 64);\n        Step();\n    }\n}\nvoid Step() { Add(acc, acc, tmp, 64); }\n";
        assert!(HoistInvariant
            .detect(&Sources::from_files([("op_kernel/k.cpp", text)]))
            .is_empty());
        // Reads a buffer the loop writes.
        let text = "void f() {\n    for (uint32_t r = 0; r < n; r++) {\n        DataCopy(g, gm[r], 64);\n        Cast(gf, g, RoundMode::CAST_NONE, 64);\n    }\n}\n";
        assert!(HoistInvariant
            .detect(&Sources::from_files([("op_kernel/k.cpp", text)]))
            .is_empty());
    }
}
