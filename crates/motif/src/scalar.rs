//! Vector instructions instead of scalar element loops.
//!
//! - remove: a count-form `Add Sub Mul Div` (tensor-tensor) or `Adds Muls`
//!   (tensor-scalar) call becomes a loop of `GetValue`/`SetValue`, one
//!   element per iteration on the scalar unit (the way kernels ported from
//!   CPU code often start).
//! - apply: a `for` loop whose only statement is
//!   `d.SetValue(i, a.GetValue(i) OP b.GetValue(i))` (or `OP k` with a
//!   loop-invariant scalar `k`), optionally wrapped in `static_cast<T>`,
//!   becomes the vector call over the loop's count.
//!
//! - apply, any other body: a loop of straight-line element-wise code
//!   (locals, several stores, `max`/`min`, `abs`, `sqrt`, `exp`, constant
//!   stores) over UB or over GM becomes vector instructions
//!   ([`super::scalar_loop`] says how and when it declines).
//!
//! Declines where the element type is not declared in sight.

use super::scalar_loop;
use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use tree_sitter::Node;

/// Vector instructions in place of scalar element loops.
pub struct VectorizeScalar;

const OPS: [(&str, &str, bool); 6] = [
    ("Add", "+", false),
    ("Sub", "-", false),
    ("Mul", "*", false),
    ("Div", "/", false),
    ("Adds", "+", true),
    ("Muls", "*", true),
];

/// `expr.member` with parentheses when the expression needs them.
fn member(expr: &str, member: &str) -> String {
    let simple = expr.chars().all(|c| c.is_alphanumeric() || c == '_')
        || (expr.ends_with(']') && !expr.starts_with('('));
    if simple {
        format!("{expr}.{member}")
    } else {
        format!("({expr}).{member}")
    }
}

fn removal(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    call: &Call<'_>,
    stmt: Node<'_>,
) -> Option<Plan> {
    let (_, op, scalar) = OPS.iter().find(|(n, _, _)| *n == call.name)?;
    if call.args.len() != 4 || call.template_args.is_some() {
        return None;
    }
    let text = parsed.text;
    let ty = syntax::elem_type_of(parsed, call.args[0]);
    let site = site_at::<VectorizeScalar>(
        file,
        text,
        stmt.byte_range(),
        SiteState::Present,
        format!(
            "{}{}",
            parsed.src(stmt),
            if ty.is_none() {
                " (element type unknown: removal declines)"
            } else {
                ""
            }
        ),
    );
    let output = ty
        .and_then(|ty| {
            let a = syntax::arg_texts(parsed, call);
            let lhs = member(a[1], "GetValue(ascI)");
            let rhs = if *scalar {
                format!("static_cast<{ty}>({})", a[2])
            } else {
                member(a[2], "GetValue(ascI)")
            };
            let indent = syntax::indent_at(text, stmt.start_byte());
            let new = format!(
                "for (uint32_t ascI = 0; ascI < static_cast<uint32_t>({n}); ascI++) {{\n{indent}    {set}, static_cast<{ty}>({lhs} {op} {rhs}));\n{indent}}}",
                n = a[3],
                set = member(a[0], "SetValue(ascI"),
            );
            syntax::apply_edits(text, &[(stmt.byte_range(), new)])
        })
        .map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

/// The tensor of `t.GetValue(v)`, if `node` is that call.
fn get_value_of<'a>(parsed: &Parsed<'a>, node: Node<'_>, var: &str) -> Option<&'a str> {
    let call = Call::of(parsed, node)?;
    if call.name != "GetValue" || call.args.len() != 1 || parsed.src(call.args[0]) != var {
        return None;
    }
    let object = call.object?;
    let mut text = parsed.src(object);
    if object.kind() == "parenthesized_expression" {
        text = text[1..text.len() - 1].trim();
    }
    Some(text)
}

/// `x` of `static_cast<T>(x)` (any T, nested, through parentheses), else
/// the node itself.
fn strip_cast_node<'t>(parsed: &Parsed<'_>, node: Node<'t>) -> Node<'t> {
    let mut n = node;
    loop {
        if n.kind() == "parenthesized_expression" {
            if let Some(inner) = syntax::named_children(n).into_iter().next() {
                n = inner;
                continue;
            }
        }
        if n.kind() == "call_expression" {
            if let Some(f) = n.child_by_field_name("function") {
                let name = f.child_by_field_name("name").map(|x| parsed.src(x));
                if (f.kind() == "template_function") && name == Some("static_cast") {
                    if let Some(arg) = n
                        .child_by_field_name("arguments")
                        .and_then(|a| syntax::named_children(a).into_iter().next())
                    {
                        n = arg;
                        continue;
                    }
                }
            }
        }
        return n;
    }
}

fn application(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    loop_node: Node<'_>,
) -> Option<Plan> {
    let body = syntax::for_body(loop_node)?;
    let stmts = syntax::block_statements(body);
    if stmts.len() != 1 {
        return None;
    }
    let var = syntax::loop_var(parsed, loop_node)?;
    let init = loop_node.child_by_field_name("initializer")?;
    if !compact(parsed.src(init)).ends_with(&format!("{var}=0;"))
        && !compact(parsed.src(init)).ends_with(&format!("{var}=0"))
    {
        return None;
    }
    let update = loop_node.child_by_field_name("update")?;
    let u = compact(parsed.src(update));
    if u != format!("{var}++") && u != format!("++{var}") && u != format!("{var}+=1") {
        return None;
    }
    let cond = loop_node.child_by_field_name("condition")?;
    if cond.kind() != "binary_expression"
        || cond.child_by_field_name("operator").map(|o| parsed.src(o)) != Some("<")
    {
        return None;
    }
    if parsed.src(cond.child_by_field_name("left")?) != var {
        return None;
    }
    let count = parsed.src(strip_cast_node(parsed, cond.child_by_field_name("right")?));
    let set = syntax::statement_call(parsed, stmts[0])?;
    if set.name != "SetValue" || set.args.len() != 2 || parsed.src(set.args[0]) != var {
        return None;
    }
    let dst_node = set.object?;
    let mut dst = parsed.src(dst_node);
    if dst_node.kind() == "parenthesized_expression" {
        dst = dst[1..dst.len() - 1].trim();
    }
    let value = strip_cast_node(parsed, set.args[1]);
    if value.kind() != "binary_expression" {
        return None;
    }
    let op = parsed.src(value.child_by_field_name("operator")?);
    let left = value.child_by_field_name("left")?;
    let right = value.child_by_field_name("right")?;
    let l = get_value_of(parsed, strip_cast_node(parsed, left), var);
    let r = get_value_of(parsed, strip_cast_node(parsed, right), var);
    let scalar_ok = |n: Node<'_>| {
        !syntax::identifiers(parsed, n).contains(&var) && !parsed.src(n).contains("GetValue")
    };
    let call = match (l, r) {
        (Some(a), Some(b)) => {
            let name = OPS.iter().find(|(_, o, s)| *o == op && !*s)?.0;
            format!("{name}({dst}, {a}, {b}, {count});")
        }
        (Some(a), None) if scalar_ok(right) => {
            let k = parsed.src(strip_cast_node(parsed, right));
            let k = cast_scalar(parsed, dst_node, k);
            match op {
                "*" => format!("Muls({dst}, {a}, {k}, {count});"),
                "+" => format!("Adds({dst}, {a}, {k}, {count});"),
                _ => return None,
            }
        }
        (None, Some(b)) if scalar_ok(left) => {
            let k = parsed.src(strip_cast_node(parsed, left));
            let k = cast_scalar(parsed, dst_node, k);
            match op {
                "*" => format!("Muls({dst}, {b}, {k}, {count});"),
                "+" => format!("Adds({dst}, {b}, {k}, {count});"),
                _ => return None,
            }
        }
        _ => return None,
    };
    let text = parsed.text;
    let site = site_at::<VectorizeScalar>(
        file,
        text,
        loop_node.byte_range(),
        SiteState::Absent,
        format!(
            "scalar element loop at line {}",
            syntax::line_of(text, loop_node.start_byte())
        ),
    );
    let output = syntax::apply_edits(text, &[(loop_node.byte_range(), call)])
        .map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

/// Any other element-wise loop ([`super::scalar_loop`]): over UB, the
/// vector instructions in its place; over GM, a chunked vector loop
/// through a UB scratch buffer the class gets (a `TBuf` member and its
/// `InitBuffer` after the class's last one).
fn general(pkg: &Sources, file: &str, parsed: &Parsed<'_>, loop_node: Node<'_>) -> Option<Plan> {
    if loop_node.has_error() {
        return None;
    }
    let text = parsed.text;
    let scratch = (0..)
        .map(|k| format!("ascVecBuf{k}"))
        .find(|n| !text.contains(n.as_str()))?;
    let c = scalar_loop::compile(parsed, loop_node, &scratch)?;
    let mut edits = vec![(loop_node.byte_range(), c.text.clone())];
    if c.gm {
        let class = syntax::ancestor(loop_node, &["class_specifier", "struct_specifier"])?;
        let body = class.child_by_field_name("body")?;
        let init = parsed
            .calls()
            .into_iter()
            .rfind(|call| call.name == "InitBuffer" && syntax::within(call.node, class))?;
        let stmt = init.statement()?;
        let callee = parsed.src(init.node.child_by_field_name("function")?);
        let prefix = callee.strip_suffix("InitBuffer")?;
        let indent = syntax::indent_at(text, stmt.start_byte());
        edits.push((
            stmt.end_byte()..stmt.end_byte(),
            format!(
                "\n{indent}{prefix}InitBuffer({scratch}, {} * {});",
                c.slots,
                scalar_loop::CHUNK_BYTES
            ),
        ));
        let members = syntax::named_children(body);
        let last = members.last()?;
        let member_indent = syntax::indent_at(text, last.start_byte());
        let close = body.end_byte().checked_sub(1)?;
        let line_start = text[..close].rfind('\n').map_or(0, |p| p + 1);
        if !text[line_start..close].trim().is_empty() {
            return None;
        }
        edits.push((
            line_start..line_start,
            format!("{member_indent}AscendC::TBuf<AscendC::TPosition::VECCALC> {scratch};\n"),
        ));
    }
    let site = site_at::<VectorizeScalar>(
        file,
        text,
        loop_node.byte_range(),
        SiteState::Absent,
        c.note,
    );
    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

/// A scalar operand: kept as written when it is a plain name (its type is
/// then the kernel's business), else cast to the destination's type.
fn cast_scalar(parsed: &Parsed<'_>, dst: Node<'_>, k: &str) -> String {
    if k.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !k.starts_with(|c: char| c.is_ascii_digit())
    {
        return k.to_string();
    }
    match syntax::elem_type_of(parsed, dst) {
        Some(ty) => format!("static_cast<{ty}>({k})"),
        None => k.to_string(),
    }
}

fn compact(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

impl Engine for VectorizeScalar {
    const TAG: &'static str = "vectorize_scalar";
    const FAMILY: &'static str = "scalar";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Replace scalar GetValue/SetValue element loops with one vector instruction",
            bottleneck: "the scalar unit walks the tile element by element (GetValue/SetValue, several cycles each, plus the syncs around them): aiv_scalar_ratio near 1 while the vector unit idles",
            reuse_when: "a loop applies the same arithmetic (+ - * /, or with one scalar) to every element of UB tensors",
            avoid_when: "the loop carries a dependency between elements (prefix sums) or indexes data-dependently (gathers)",
            expected_effect: "orders of magnitude on the loop itself (one 256-byte repeat per cycle instead of ~15 cycles per element)",
            keywords: &["scalar loop", "GetValue", "SetValue", "vectorize", "element-wise", "scalar bound", "aiv_scalar_ratio"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            for node in parsed.all() {
                if node.kind() == "for_statement" {
                    if let Some(plan) = application(pkg, file, &parsed, node) {
                        out.push(plan);
                    } else if let Some(plan) = general(pkg, file, &parsed, node) {
                        out.push(plan);
                    }
                    continue;
                }
                let Some(call) = Call::of(&parsed, node) else {
                    continue;
                };
                let Some(stmt) = call.statement() else {
                    continue;
                };
                if let Some(plan) = removal(pkg, file, &parsed, &call, stmt) {
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
            "class K {{\n    __aicore__ inline void Compute(uint32_t length)\n    {{\n        LocalTensor<T> xLocal = inQueueX.DeQue<T>();\n        LocalTensor<T> yLocal = inQueueY.DeQue<T>();\n        LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();\n{body}\n    }}\n}};\n"
        );
        Sources::from_files([("op_kernel/k.cpp", text)])
    }

    #[test]
    fn an_add_becomes_a_scalar_loop_and_back() {
        let strong = kernel("        Add(zLocal, xLocal, yLocal, length);");
        let sites = VectorizeScalar.detect(&strong);
        assert_eq!(sites.len(), 1);
        let weak = VectorizeScalar.remove(&strong, &sites[0]).unwrap();
        assert_eq!(
            weak,
            kernel("        for (uint32_t ascI = 0; ascI < static_cast<uint32_t>(length); ascI++) {\n            zLocal.SetValue(ascI, static_cast<T>(xLocal.GetValue(ascI) + yLocal.GetValue(ascI)));\n        }")
        );
        let sites = VectorizeScalar.detect(&weak);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].state, SiteState::Absent);
        assert_eq!(VectorizeScalar.apply(&weak, &sites[0]).unwrap(), strong);
    }

    #[test]
    fn a_muls_round_trips_through_its_cast_scalar() {
        let strong = kernel("        Muls(yLocal, xLocal, scalar, length);");
        let weak = VectorizeScalar
            .remove(&strong, &VectorizeScalar.detect(&strong)[0])
            .unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,6 +4,8 @@
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = inQueueY.DeQue<T>();
                     LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();
            -        Muls(yLocal, xLocal, scalar, length);
            +        for (uint32_t ascI = 0; ascI < static_cast<uint32_t>(length); ascI++) {
            +            yLocal.SetValue(ascI, static_cast<T>(xLocal.GetValue(ascI) * static_cast<T>(scalar)));
            +        }
                 }
             };
        "#]].assert_eq(&crate::diff(&strong, &weak));
        let back = VectorizeScalar
            .apply(&weak, &VectorizeScalar.detect(&weak)[0])
            .unwrap();
        assert_eq!(back, strong);
    }

    #[test]
    fn a_scalar_tail_over_gm_gets_a_scratch_buffer_and_chunks() {
        let text = "template <typename T>\nclass K {\npublic:\n    void Init() {\n        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(T));\n    }\n    void Process() {\n        for (uint32_t i = 0; i < tailLength; i++) {\n            zGm.SetValue(base + i, xGm.GetValue(base + i) + yGm.GetValue(base + i));\n        }\n    }\nprivate:\n    AscendC::TPipe pipe;\n    AscendC::GlobalTensor<T> xGm, yGm, zGm;\n};\n";
        let weak = Sources::from_files([("op_kernel/k.cpp", text)]);
        let site = VectorizeScalar
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        assert!(
            site.note.starts_with("scalar loop over GM at line 8"),
            "{site:?}"
        );
        let strong = VectorizeScalar.apply(&weak, &site).unwrap();
        let k = strong.get("op_kernel/k.cpp").unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -3,13 +3,31 @@
             public:
                 void Init() {
                     pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(T));
            +        pipe.InitBuffer(ascVecBuf0, 3 * 4096);
                 }
                 void Process() {
            -        for (uint32_t i = 0; i < tailLength; i++) {
            -            zGm.SetValue(base + i, xGm.GetValue(base + i) + yGm.GetValue(base + i));
            +        {
            +            // vectorised from the scalar loop: chunks of up to 4096 bytes per operand
            +            AscendC::LocalTensor<T> ascVec = ascVecBuf0.Get<T>();
            +            const uint32_t ascChunk = 4096 / sizeof(T);
            +            const uint32_t ascEnd = static_cast<uint32_t>(tailLength);
            +            AscendC::PipeBarrier<PIPE_ALL>();
            +            for (uint32_t ascOff = static_cast<uint32_t>(0); ascOff < ascEnd; ascOff += ascChunk) {
            +                uint32_t ascLen = ascEnd - ascOff < ascChunk ? ascEnd - ascOff : ascChunk;
            +                AscendC::DataCopyExtParams ascParams{1, static_cast<uint32_t>(ascLen * sizeof(T)), 0, 0, 0};
            +                AscendC::DataCopyPadExtParams<T> ascPad{false, 0, 0, 0};
            +                AscendC::DataCopyPad(ascVec[0 * ascChunk], xGm[base + ascOff], ascParams, ascPad);
            +                AscendC::DataCopyPad(ascVec[1 * ascChunk], yGm[base + ascOff], ascParams, ascPad);
            +                AscendC::PipeBarrier<PIPE_ALL>();
            +                AscendC::Add(ascVec[2 * ascChunk], ascVec[0 * ascChunk], ascVec[1 * ascChunk], ascLen);
            +                AscendC::PipeBarrier<PIPE_ALL>();
            +                AscendC::DataCopyPad(zGm[base + ascOff], ascVec[2 * ascChunk], ascParams);
            +                AscendC::PipeBarrier<PIPE_ALL>();
            +            }
                     }
                 }
             private:
                 AscendC::TPipe pipe;
                 AscendC::GlobalTensor<T> xGm, yGm, zGm;
            +    AscendC::TBuf<AscendC::TPosition::VECCALC> ascVecBuf0;
             };
        "#]].assert_eq(&crate::diff(&weak, &strong));
        assert!(!k.contains("GetValue"), "{k}");
    }

    #[test]
    fn handwritten_loops_vectorise() {
        let weak = kernel("        for (uint32_t i = 0; i < length; i++) {\n            zLocal.SetValue(i, 2 * xLocal.GetValue(i));\n        }");
        let site = VectorizeScalar
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let strong = VectorizeScalar.apply(&weak, &site).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,8 +4,6 @@
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = inQueueY.DeQue<T>();
                     LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();
            -        for (uint32_t i = 0; i < length; i++) {
            -            zLocal.SetValue(i, 2 * xLocal.GetValue(i));
            -        }
            +        Muls(zLocal, xLocal, static_cast<T>(2), length);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&weak, &strong));
        // A loop-carried dependency is not an element-wise op.
        let carried = kernel("        for (uint32_t i = 0; i < length; i++) {\n            zLocal.SetValue(i, zLocal.GetValue(i - 1) + xLocal.GetValue(i));\n        }");
        assert!(VectorizeScalar
            .detect(&carried)
            .iter()
            .all(|s| s.state == SiteState::Present));
    }
}
