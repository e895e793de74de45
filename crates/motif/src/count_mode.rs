//! Count mode: one count-form vector call (`Add(z, x, y, n)`, which the
//! hardware runs as a single instruction of ceil(n / lanes) repeats) instead
//! of a loop of mask-form calls over 256-byte repeats plus a masked tail.
//!
//! - remove: a count-form binary (`Add Sub Mul Div Max Min`), unary (`Exp
//!   Ln Abs Sqrt Relu Reciprocal Rsqrt`) or vector-scalar (`Adds Muls Maxs
//!   Mins`) call becomes a block with a loop of one-repeat mask-form calls
//!   over the full 256-byte repeats and one masked call for the tail.
//! - apply: that block (a `static_cast<uint32_t>(count)` declaration, the
//!   repeat loop, the tail `if`) becomes the count-form call again.
//!
//! Declines where the element type of the destination is not declared as
//! `LocalTensor<T>` in sight, and in files that manage the vector mask
//! themselves (`SetVectorMask`, `SetMaskCount`, `MASK_PLACEHOLDER`).

use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use tree_sitter::Node;

/// Count-form vector calls.
pub struct CountMode;

const BINARY: [&str; 6] = ["Add", "Sub", "Mul", "Div", "Max", "Min"];
const UNARY: [&str; 7] = ["Exp", "Ln", "Abs", "Sqrt", "Relu", "Reciprocal", "Rsqrt"];
const SCALAR: [&str; 4] = ["Adds", "Muls", "Maxs", "Mins"];

/// (number of tensor operands, count-form arity, repeat params) of an op.
fn shape(name: &str) -> Option<(usize, usize, &'static str)> {
    if BINARY.contains(&name) {
        Some((3, 4, "BinaryRepeatParams(1, 1, 1, 8, 8, 8)"))
    } else if UNARY.contains(&name) {
        Some((2, 3, "UnaryRepeatParams(1, 1, 8, 8)"))
    } else if SCALAR.contains(&name) {
        Some((2, 4, "UnaryRepeatParams(1, 1, 8, 8)"))
    } else {
        None
    }
}

fn manages_mask(text: &str) -> bool {
    [
        "SetVectorMask",
        "SetMaskCount",
        "SetMaskNorm",
        "MASK_PLACEHOLDER",
    ]
    .iter()
    .any(|t| text.contains(t))
}

/// The mask-form call of `name` on offset `offset` with mask `mask`.
fn mask_call(
    name: &str,
    args: &[&str],
    tensors: usize,
    offset: &str,
    mask: &str,
    params: &str,
) -> String {
    let mut parts: Vec<String> = args[..tensors]
        .iter()
        .map(|a| syntax::subscript(a, offset))
        .collect();
    parts.extend(args[tensors..args.len() - 1].iter().map(|a| a.to_string()));
    parts.push(format!("static_cast<uint64_t>({mask})"));
    parts.push("1".to_string());
    parts.push(params.to_string());
    format!("{name}({});", parts.join(", "))
}

fn removal(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    call: &Call<'_>,
    stmt: Node<'_>,
) -> Option<Plan> {
    let (tensors, arity, params) = shape(&call.name)?;
    if call.args.len() != arity || call.template_args.is_some() {
        return None;
    }
    let text = parsed.text;
    let ty = syntax::elem_type_of(parsed, call.args[0]);
    let site = site_at::<CountMode>(
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
            let args = syntax::arg_texts(parsed, call);
            let count = args[arity - 1];
            let i0 = syntax::indent_at(text, stmt.start_byte());
            let block = format!(
                "{{\n    const uint32_t ascCount = static_cast<uint32_t>({count});\n    const uint32_t ascLanes = 256 / sizeof({ty});\n    const uint32_t ascMain = ascCount / ascLanes * ascLanes;\n    for (uint32_t ascOff = 0; ascOff < ascMain; ascOff += ascLanes) {{\n        {}\n    }}\n    if (ascMain < ascCount) {{\n        {}\n    }}\n}}",
                mask_call(&call.name, &args, tensors, "ascOff", "ascLanes", params),
                mask_call(&call.name, &args, tensors, "ascMain", "ascCount - ascMain", params),
            );
            let block = syntax::indent_lines(&block, &i0);
            syntax::apply_edits(text, &[(stmt.byte_range(), block.trim_start().to_string())])
        })
        .map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

/// Recognises the repeat-loop block and rebuilds the count-form call.
fn application(pkg: &Sources, file: &str, parsed: &Parsed<'_>, block: Node<'_>) -> Option<Plan> {
    let stmts = syntax::block_statements(block);
    // const uint32_t N = static_cast<uint32_t>(count); ...; for; if.
    let first = *stmts.first()?;
    if first.kind() != "declaration" {
        return None;
    }
    let mut cursor = first.walk();
    let decl = first
        .children_by_field_name("declarator", &mut cursor)
        .next()?;
    let value = decl.child_by_field_name("value")?;
    let count = strip_u32_cast(parsed, value)?;
    let loop_node = *stmts.iter().find(|s| s.kind() == "for_statement")?;
    let tail = *stmts.last()?;
    if tail.kind() != "if_statement"
        || stmts.iter().filter(|s| s.kind() == "for_statement").count() != 1
    {
        return None;
    }
    if stmts[1..stmts.len() - 1]
        .iter()
        .any(|s| s.kind() != "declaration" && s.kind() != "for_statement")
    {
        return None;
    }
    let body = syntax::for_body(loop_node)?;
    let body_stmts = syntax::block_statements(body);
    if body_stmts.len() != 1 {
        return None;
    }
    let main = syntax::statement_call(parsed, body_stmts[0])?;
    let consequence = tail.child_by_field_name("consequence")?;
    let tail_stmts = syntax::block_statements(consequence);
    if tail_stmts.len() != 1 {
        return None;
    }
    let last = syntax::statement_call(parsed, tail_stmts[0])?;
    let (tensors, arity, _) = shape(&main.name)?;
    if last.name != main.name || main.args.len() != arity + 2 || last.args.len() != arity + 2 {
        return None;
    }
    let mut args: Vec<String> = Vec::new();
    for (k, arg) in last.args.iter().enumerate().take(arity - 1) {
        if k < tensors {
            let (base, _) = syntax::strip_subscript(parsed, *arg)?;
            let (main_base, _) = syntax::strip_subscript(parsed, main.args[k])?;
            if main_base != base {
                return None;
            }
            args.push(base.to_string());
        } else {
            args.push(parsed.src(*arg).to_string());
        }
    }
    args.push(count.to_string());
    let new = format!("{}({});", main.name, args.join(", "));
    let text = parsed.text;
    let site = site_at::<CountMode>(
        file,
        text,
        block.byte_range(),
        SiteState::Absent,
        format!(
            "{} over 256-byte repeats in a loop plus a masked tail",
            main.name
        ),
    );
    let output =
        syntax::apply_edits(text, &[(block.byte_range(), new)]).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

/// `E` of `static_cast<uint32_t>(E)`.
fn strip_u32_cast<'a>(parsed: &Parsed<'a>, value: Node<'_>) -> Option<&'a str> {
    let text = parsed.src(value);
    let inner = text
        .strip_prefix("static_cast<uint32_t>(")?
        .strip_suffix(')')?;
    Some(inner.trim())
}

impl Engine for CountMode {
    const TAG: &'static str = "count_mode";
    const FAMILY: &'static str = "vector";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Use count-mode vector calls (one instruction over n elements) instead of a loop of 256-byte repeats plus a masked tail",
            bottleneck: "a vector op is issued once per 256-byte repeat from a scalar loop: each call pays the scalar issue cost and the instruction head, so the scalar unit and vector heads dominate instead of the repeats",
            reuse_when: "a loop walks a tile in 256-byte steps issuing one-repeat mask-form calls (and a masked call for the rest) with contiguous operands",
            avoid_when: "the mask-form call uses strides or a bit mask the count form cannot express (gathered rows, block stride 0 broadcasts)",
            expected_effect: "one instruction per tile instead of one per repeat: the vector stage shrinks several-fold on vector-bound loops",
            keywords: &["count mode", "mask", "repeat", "repeatTimes", "masked tail", "SetMaskCount", "vector instruction count", "scalar issue"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            if manages_mask(text) {
                continue;
            }
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            for node in parsed.all() {
                if node.kind() == "compound_statement"
                    && node
                        .parent()
                        .is_some_and(|p| p.kind() == "compound_statement")
                {
                    if let Some(plan) = application(pkg, file, &parsed, node) {
                        out.push(plan);
                        continue;
                    }
                }
                let Some(call) = Call::of(&parsed, node) else {
                    continue;
                };
                let Some(stmt) = call.statement() else {
                    continue;
                };
                // A mask-form call of the weak block is not a count-form site.
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

    fn kernel(body: &str) -> Sources {
        let text = format!(
            "class K {{\n    __aicore__ inline void Compute(uint32_t length)\n    {{\n        LocalTensor<T> xLocal = inQueueX.DeQue<T>();\n        LocalTensor<T> yLocal = inQueueY.DeQue<T>();\n        LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();\n{body}\n    }}\n}};\n"
        );
        Sources::from_files([("op_kernel/k.cpp", text)])
    }

    #[test]
    fn a_count_form_add_becomes_a_repeat_loop_and_back() {
        let strong = kernel("        Add(zLocal, xLocal, yLocal, length);");
        let sites = CountMode.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        let weak = CountMode.remove(&strong, &sites[0]).unwrap();
        let expected = kernel(
            "        {
            const uint32_t ascCount = static_cast<uint32_t>(length);
            const uint32_t ascLanes = 256 / sizeof(T);
            const uint32_t ascMain = ascCount / ascLanes * ascLanes;
            for (uint32_t ascOff = 0; ascOff < ascMain; ascOff += ascLanes) {
                Add(zLocal[ascOff], xLocal[ascOff], yLocal[ascOff], static_cast<uint64_t>(ascLanes), 1, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
            }
            if (ascMain < ascCount) {
                Add(zLocal[ascMain], xLocal[ascMain], yLocal[ascMain], static_cast<uint64_t>(ascCount - ascMain), 1, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
            }
        }",
        );
        assert_eq!(weak, expected, "{}", weak.get("op_kernel/k.cpp").unwrap());
        let sites = CountMode.detect(&weak);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].state, SiteState::Absent);
        assert_eq!(CountMode.apply(&weak, &sites[0]).unwrap(), strong);
    }

    #[test]
    fn scalar_and_unary_forms_keep_their_extra_arguments() {
        let strong = kernel(
            "        Muls(zLocal, xLocal, scalar, length);\n        Sqrt(zLocal, zLocal, length);",
        );
        let sites = CountMode.detect(&strong);
        assert_eq!(sites.len(), 2);
        let weak = CountMode.remove(&strong, &sites[0]).unwrap();
        let k = weak.get("op_kernel/k.cpp").unwrap();
        assert!(k.contains("Muls(zLocal[ascOff], xLocal[ascOff], scalar, static_cast<uint64_t>(ascLanes), 1, UnaryRepeatParams(1, 1, 8, 8));"), "{k}");
        let weak = CountMode.remove(&strong, &sites[1]).unwrap();
        let k = weak.get("op_kernel/k.cpp").unwrap();
        assert!(k.contains("Sqrt(zLocal[ascMain], zLocal[ascMain], static_cast<uint64_t>(ascCount - ascMain), 1, UnaryRepeatParams(1, 1, 8, 8));"), "{k}");
        let back = CountMode
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        assert_eq!(CountMode.apply(&weak, &back).unwrap(), strong);
    }

    #[test]
    fn unknown_types_and_mask_managing_files_decline() {
        let pkg = kernel("        Add(t, xLocal, yLocal, length);");
        let sites = CountMode.detect(&pkg);
        assert!(CountMode.remove(&pkg, &sites[0]).is_none());
        let pkg = kernel(
            "        SetVectorMask<T>(0, 64);\n        Add(zLocal, xLocal, yLocal, length);",
        );
        assert!(CountMode.detect(&pkg).is_empty());
    }
}
