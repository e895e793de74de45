//! Loops that copy one row per iteration, as one strided copy.
//!
//! A loop `for (r = A; r < R; r++) { [locals]; copy; }` whose one copy is
//! `DataCopy(dst, src, count)` or `DataCopyPad(dst, src, params[, pad])`
//! (params a one-block `DataCopyExtParams`, inline or a local) between a
//! UB tensor and a GM tensor, at element offsets affine in `r` (locals of
//! the body substituted), becomes one `DataCopyPad` of `R - A` blocks with
//! the GM and UB strides the offsets give, or one contiguous block when
//! the rows are back to back on both sides. The strides are computed at
//! run time (the offsets at `r = A` and `r = A + 1`), and the copy is
//! guarded by what `DataCopyPad` needs (at most 4095 blocks, UB rows on
//! 32-byte boundaries, rows that do not overlap): otherwise the loop runs
//! as before.

use super::syntax::{self, Call, Parsed};
use std::collections::BTreeMap;
use tree_sitter::Node;

fn strip(mut n: Node<'_>) -> Node<'_> {
    while matches!(n.kind(), "parenthesized_expression") {
        match syntax::named_children(n).into_iter().next() {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

/// Whether `node` is affine in `var` (locals of `env` expanded): `var`
/// appears only added, subtracted, or multiplied by something without it.
fn affine(
    parsed: &Parsed<'_>,
    node: Node<'_>,
    var: &str,
    env: &BTreeMap<String, Node<'_>>,
) -> bool {
    let node = strip(node);
    let has = |n: Node<'_>| mentions_var(parsed, n, var, env);
    match node.kind() {
        "identifier" => {
            let t = parsed.src(node);
            match env.get(t) {
                Some(v) => affine(parsed, *v, var, env),
                None => true,
            }
        }
        "number_literal" | "field_expression" => !has(node),
        "cast_expression" => node
            .child_by_field_name("value")
            .is_some_and(|v| affine(parsed, v, var, env)),
        "call_expression" => {
            // static_cast<T>(e)
            let c = Call::of(parsed, node);
            match c {
                Some(c) if c.name == "static_cast" && c.args.len() == 1 => {
                    affine(parsed, c.args[0], var, env)
                }
                _ => !has(node),
            }
        }
        "binary_expression" => {
            let op = node
                .child_by_field_name("operator")
                .map(|o| parsed.src(o))
                .unwrap_or("");
            let (Some(l), Some(r)) = (
                node.child_by_field_name("left"),
                node.child_by_field_name("right"),
            ) else {
                return false;
            };
            match op {
                "+" | "-" => affine(parsed, l, var, env) && affine(parsed, r, var, env),
                "*" => {
                    (!has(l) && affine(parsed, r, var, env))
                        || (!has(r) && affine(parsed, l, var, env))
                }
                _ => !has(node),
            }
        }
        _ => !has(node),
    }
}

fn mentions_var(
    parsed: &Parsed<'_>,
    node: Node<'_>,
    var: &str,
    env: &BTreeMap<String, Node<'_>>,
) -> bool {
    syntax::descendants(node).into_iter().any(|n| {
        n.kind() == "identifier" && {
            let t = parsed.src(n);
            t == var
                || env
                    .get(t)
                    .is_some_and(|v| mentions_var(parsed, *v, var, env))
        }
    })
}

/// The text of `node` with locals of `env` expanded (parenthesised) and
/// `var` replaced by `with`.
fn expand(
    parsed: &Parsed<'_>,
    node: Node<'_>,
    var: &str,
    with: &str,
    env: &BTreeMap<String, Node<'_>>,
) -> String {
    let text = parsed.text;
    let mut out = String::new();
    let mut pos = node.start_byte();
    let mut idents: Vec<Node<'_>> = syntax::descendants(node)
        .into_iter()
        .filter(|n| n.kind() == "identifier")
        .collect();
    idents.sort_by_key(|n| n.start_byte());
    for id in idents {
        if id.start_byte() < pos {
            continue;
        }
        let t = parsed.src(id);
        let rep = if t == var {
            Some(format!("({with})"))
        } else {
            env.get(t)
                .map(|v| format!("({})", expand(parsed, *v, var, with, env)))
        };
        if let Some(rep) = rep {
            out.push_str(&text[pos..id.start_byte()]);
            out.push_str(&rep);
            pos = id.end_byte();
        }
    }
    out.push_str(&text[pos..node.end_byte()]);
    out
}

/// A tensor argument `x[off]` (or `x`, offset 0): (name, offset node).
fn tensor_arg<'t>(parsed: &Parsed<'_>, node: Node<'t>) -> Option<(String, Option<Node<'t>>)> {
    let node = strip(node);
    match node.kind() {
        "identifier" => Some((parsed.src(node).to_string(), None)),
        "subscript_expression" => {
            let base = node.child_by_field_name("argument")?;
            if base.kind() != "identifier" {
                return None;
            }
            let idx = node
                .child_by_field_name("indices")
                .or_else(|| node.child_by_field_name("index"))?;
            let idx = syntax::named_children(idx)
                .into_iter()
                .next()
                .unwrap_or(idx);
            Some((parsed.src(base).to_string(), Some(idx)))
        }
        _ => None,
    }
}

/// What the loop is, for the site note, and its replacement.
pub(crate) struct RowCopy {
    /// Replacement of the loop.
    pub text: String,
    /// In words.
    pub note: String,
}

/// Compiles a row-copy loop.
pub(crate) fn compile(parsed: &Parsed<'_>, loop_node: Node<'_>) -> Option<RowCopy> {
    let text = parsed.text;
    let var = syntax::loop_var(parsed, loop_node)?;
    let init = loop_node.child_by_field_name("initializer")?;
    let mut cursor = init.walk();
    let decl = init
        .children_by_field_name("declarator", &mut cursor)
        .next()?;
    let start = parsed.src(decl.child_by_field_name("value")?);
    let cond = strip(loop_node.child_by_field_name("condition")?);
    if cond.kind() != "binary_expression"
        || cond.child_by_field_name("operator").map(|o| parsed.src(o)) != Some("<")
        || parsed.src(cond.child_by_field_name("left")?) != var
    {
        return None;
    }
    let end = parsed.src(cond.child_by_field_name("right")?);
    let update: String = parsed
        .src(loop_node.child_by_field_name("update")?)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if update != format!("{var}++") && update != format!("++{var}") && update != format!("{var}+=1")
    {
        return None;
    }
    let body = syntax::for_body(loop_node)?;
    let stmts = syntax::block_statements(body);
    let (copy_stmt, rest) = stmts.split_last()?;
    // Locals: `T name = expr;` only.
    let mut env: BTreeMap<String, Node<'_>> = BTreeMap::new();
    let mut params_local: BTreeMap<String, Node<'_>> = BTreeMap::new();
    for s in rest {
        if s.kind() != "declaration" {
            return None;
        }
        let mut c = s.walk();
        let ds: Vec<Node<'_>> = s.children_by_field_name("declarator", &mut c).collect();
        for d in ds {
            let name = syntax::declared_name(parsed, d)?;
            let value = d
                .child_by_field_name("value")
                .or_else(|| syntax::named_children(d).into_iter().nth(1))?;
            let ty = s
                .child_by_field_name("type")
                .map(|t| parsed.src(t))
                .unwrap_or("");
            if ty.ends_with("DataCopyExtParams") {
                params_local.insert(name.to_string(), value);
            } else {
                env.insert(name.to_string(), value);
            }
        }
    }
    let copy = syntax::statement_call(parsed, *copy_stmt)?;
    let (row_bytes, pad) = match (copy.name.as_str(), copy.args.len()) {
        ("DataCopy", 3) => (None, None),
        ("DataCopyPad", 3) | ("DataCopyPad", 4) => {
            // One-block params, inline or a local of the body.
            let p = strip(copy.args[2]);
            let list = if p.kind() == "initializer_list" {
                syntax::named_children(p)
            } else if p.kind() == "identifier" {
                let v = params_local.get(parsed.src(p))?;
                if v.kind() != "initializer_list" {
                    return None;
                }
                syntax::named_children(*v)
            } else if p.kind() == "compound_literal_expression" {
                let v = p.child_by_field_name("value")?;
                syntax::named_children(v)
            } else {
                return None;
            };
            if list.len() != 5
                || parsed.src(list[0]).trim() != "1"
                || list[2..].iter().any(|n| parsed.src(*n).trim() != "0")
                || mentions_var(parsed, list[1], var, &env)
            {
                return None;
            }
            let pad = copy.args.get(3).map(|a| parsed.src(*a).to_string());
            if let Some(pd) = copy.args.get(3) {
                if mentions_var(parsed, *pd, var, &env) {
                    return None;
                }
            }
            (Some(expand(parsed, list[1], var, start, &env)), pad)
        }
        _ => return None,
    };
    let (dst, dst_off) = tensor_arg(parsed, copy.args[0])?;
    let (src, src_off) = tensor_arg(parsed, copy.args[1])?;
    let dst_ty = tensor_kind(parsed, loop_node, &dst)?;
    let src_ty = tensor_kind(parsed, loop_node, &src)?;
    let gm_to_ub = match (dst_ty.0, src_ty.0) {
        ("LocalTensor", "GlobalTensor") => true,
        ("GlobalTensor", "LocalTensor") => false,
        _ => return None,
    };
    let ty = dst_ty.1;
    for off in [dst_off, src_off].into_iter().flatten() {
        if !affine(parsed, off, var, &env) {
            return None;
        }
    }
    // At least one side must move with the row.
    let moves = |o: Option<Node<'_>>| o.is_some_and(|o| mentions_var(parsed, o, var, &env));
    if !moves(dst_off) && !moves(src_off) {
        return None;
    }
    let off_at = |o: Option<Node<'_>>, at: &str| -> String {
        match o {
            Some(o) => format!("static_cast<int64_t>({})", expand(parsed, o, var, at, &env)),
            None => "static_cast<int64_t>(0)".to_string(),
        }
    };
    let next = format!("({start}) + 1");
    let row_bytes = match row_bytes {
        Some(b) => format!("static_cast<uint32_t>({b})"),
        None => {
            if mentions_var(parsed, copy.args[2], var, &env) {
                return None;
            }
            format!(
                "static_cast<uint32_t>(({}) * sizeof({ty}))",
                expand(parsed, copy.args[2], var, start, &env)
            )
        }
    };
    let (gm_off, ub_off) = if gm_to_ub {
        (src_off, dst_off)
    } else {
        (dst_off, src_off)
    };
    let (gm, ub) = if gm_to_ub { (&src, &dst) } else { (&dst, &src) };
    let indent = syntax::indent_at(text, loop_node.start_byte());
    let i2 = format!("{indent}    ");
    let i3 = format!("{indent}        ");
    let original = parsed.src(loop_node).replace('\n', "\n    ");
    let pad = pad.unwrap_or_else(|| "ascPad".to_string());
    let mut b = String::new();
    b.push_str(&format!("{{\n{i2}// one strided copy for the rows of this loop (the loop itself when the strides do not fit)\n"));
    b.push_str(&format!("{i2}const int64_t ascRows = static_cast<int64_t>({end}) - static_cast<int64_t>({start});\n"));
    b.push_str(&format!("{i2}const uint32_t ascRowBytes = {row_bytes};\n"));
    b.push_str(&format!(
        "{i2}const int64_t ascGm0 = {};\n",
        off_at(gm_off, start)
    ));
    b.push_str(&format!(
        "{i2}const int64_t ascGmPitch = ({} - ascGm0) * static_cast<int64_t>(sizeof({ty}));\n",
        off_at(gm_off, &next)
    ));
    b.push_str(&format!(
        "{i2}const int64_t ascUb0 = {};\n",
        off_at(ub_off, start)
    ));
    b.push_str(&format!(
        "{i2}const int64_t ascUbPitch = ({} - ascUb0) * static_cast<int64_t>(sizeof({ty}));\n",
        off_at(ub_off, &next)
    ));
    b.push_str(&format!(
        "{i2}const int64_t ascUbRow = (static_cast<int64_t>(ascRowBytes) + 31) / 32 * 32;\n"
    ));
    b.push_str(&format!(
        "{i2}AscendC::DataCopyPadExtParams<{ty}> ascPad{{false, 0, 0, 0}};\n"
    ));
    let (copy_contig, copy_strided) = if gm_to_ub {
        (
            format!("AscendC::DataCopyPad({ub}[ascUb0], {gm}[ascGm0], ascP, {pad});"),
            format!("AscendC::DataCopyPad({ub}[ascUb0], {gm}[ascGm0], ascP, {pad});"),
        )
    } else {
        (
            format!("AscendC::DataCopyPad({gm}[ascGm0], {ub}[ascUb0], ascP);"),
            format!("AscendC::DataCopyPad({gm}[ascGm0], {ub}[ascUb0], ascP);"),
        )
    };
    b.push_str(&format!("{i2}if (ascRows > 0 && ascGmPitch == ascRowBytes && ascUbPitch == ascRowBytes && ascRowBytes % 32 == 0 && ascRows * ascRowBytes < 2097152) {{\n"));
    b.push_str(&format!("{i3}AscendC::DataCopyExtParams ascP{{1, static_cast<uint32_t>(ascRows * ascRowBytes), 0, 0, 0}};\n"));
    b.push_str(&format!("{i3}{copy_contig}\n"));
    b.push_str(&format!("{i2}}} else if (ascRows > 0 && ascRows <= 4095 && ascGmPitch >= ascRowBytes && ascUbPitch >= ascUbRow && ascUbPitch % 32 == 0) {{\n"));
    let strides = if gm_to_ub {
        "static_cast<uint32_t>(ascGmPitch - ascRowBytes), static_cast<uint32_t>((ascUbPitch - ascUbRow) / 32)"
    } else {
        "static_cast<uint32_t>((ascUbPitch - ascUbRow) / 32), static_cast<uint32_t>(ascGmPitch - ascRowBytes)"
    };
    b.push_str(&format!("{i3}AscendC::DataCopyExtParams ascP{{static_cast<uint16_t>(ascRows), ascRowBytes, {strides}, 0}};\n"));
    b.push_str(&format!("{i3}{copy_strided}\n"));
    b.push_str(&format!(
        "{i2}}} else {{\n{i3}{original}\n{i2}}}\n{indent}}}"
    ));
    let _ = pad;
    Some(RowCopy {
        text: b,
        note: format!(
            "one {} per row in the loop at line {}",
            copy.name,
            syntax::line_of(text, loop_node.start_byte())
        ),
    })
}

/// (`LocalTensor`|`GlobalTensor`, element type) of a tensor name.
fn tensor_kind<'a>(parsed: &Parsed<'a>, at: Node<'_>, name: &str) -> Option<(&'a str, &'a str)> {
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
            let ty = if ty.kind() == "qualified_identifier" {
                ty.child_by_field_name("name").unwrap_or(ty)
            } else {
                ty
            };
            if ty.kind() != "template_type" || !syntax::declares(parsed, node, name) {
                continue;
            }
            let tname = parsed.src(ty.child_by_field_name("name")?);
            if tname != "LocalTensor" && tname != "GlobalTensor" {
                continue;
            }
            let inner = syntax::named_children(ty.child_by_field_name("arguments")?);
            if inner.len() == 1 {
                return Some((tname, parsed.src(inner[0])));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn first_loop(body: &str) -> Option<RowCopy> {
        let text = format!("template <typename T>\nclass K {{\n    void F() {{\n        AscendC::LocalTensor<T> xLocal = q.AllocTensor<T>();\n{body}\n    }}\n    AscendC::GlobalTensor<T> xGm;\n}};\n");
        let parsed = Parsed::new(&text).unwrap();
        let node = parsed
            .all()
            .into_iter()
            .find(|n| n.kind() == "for_statement")?;
        compile(&parsed, node)
    }

    #[test]
    fn a_row_loop_becomes_one_strided_copy_with_the_loop_as_fallback() {
        let c = first_loop("        for (uint32_t r = 0; r < rows; r++) {\n            uint32_t gmOff = (rowStart + r) * cols;\n            AscendC::DataCopyPad(xLocal[r * paddedCols], xGm[gmOff], {1, static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0}, {false, 0, 0, 0});\n        }").unwrap();
        // The first row's offset and the pitch from the second, one
        // strided copy, the loop kept as the fallback.
        expect![[r#"
            {
                        // one strided copy for the rows of this loop (the loop itself when the strides do not fit)
                        const int64_t ascRows = static_cast<int64_t>(rows) - static_cast<int64_t>(0);
                        const uint32_t ascRowBytes = static_cast<uint32_t>(static_cast<uint32_t>(cols * sizeof(T)));
                        const int64_t ascGm0 = static_cast<int64_t>(((rowStart + (0)) * cols));
                        const int64_t ascGmPitch = (static_cast<int64_t>(((rowStart + ((0) + 1)) * cols)) - ascGm0) * static_cast<int64_t>(sizeof(T));
                        const int64_t ascUb0 = static_cast<int64_t>((0) * paddedCols);
                        const int64_t ascUbPitch = (static_cast<int64_t>(((0) + 1) * paddedCols) - ascUb0) * static_cast<int64_t>(sizeof(T));
                        const int64_t ascUbRow = (static_cast<int64_t>(ascRowBytes) + 31) / 32 * 32;
                        AscendC::DataCopyPadExtParams<T> ascPad{false, 0, 0, 0};
                        if (ascRows > 0 && ascGmPitch == ascRowBytes && ascUbPitch == ascRowBytes && ascRowBytes % 32 == 0 && ascRows * ascRowBytes < 2097152) {
                            AscendC::DataCopyExtParams ascP{1, static_cast<uint32_t>(ascRows * ascRowBytes), 0, 0, 0};
                            AscendC::DataCopyPad(xLocal[ascUb0], xGm[ascGm0], ascP, {false, 0, 0, 0});
                        } else if (ascRows > 0 && ascRows <= 4095 && ascGmPitch >= ascRowBytes && ascUbPitch >= ascUbRow && ascUbPitch % 32 == 0) {
                            AscendC::DataCopyExtParams ascP{static_cast<uint16_t>(ascRows), ascRowBytes, static_cast<uint32_t>(ascGmPitch - ascRowBytes), static_cast<uint32_t>((ascUbPitch - ascUbRow) / 32), 0};
                            AscendC::DataCopyPad(xLocal[ascUb0], xGm[ascGm0], ascP, {false, 0, 0, 0});
                        } else {
                            for (uint32_t r = 0; r < rows; r++) {
                            uint32_t gmOff = (rowStart + r) * cols;
                            AscendC::DataCopyPad(xLocal[r * paddedCols], xGm[gmOff], {1, static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0}, {false, 0, 0, 0});
                        }
                        }
                    }"#]].assert_eq(&c.text);
        // Out to GM with DataCopy.
        let out = first_loop("        for (uint32_t r = 0; r < rows; r++) {\n            AscendC::DataCopy(xGm[(r + base) * cols], xLocal[r * cols], cols);\n        }").unwrap();
        expect![[r#"
            {
                        // one strided copy for the rows of this loop (the loop itself when the strides do not fit)
                        const int64_t ascRows = static_cast<int64_t>(rows) - static_cast<int64_t>(0);
                        const uint32_t ascRowBytes = static_cast<uint32_t>((cols) * sizeof(T));
                        const int64_t ascGm0 = static_cast<int64_t>(((0) + base) * cols);
                        const int64_t ascGmPitch = (static_cast<int64_t>((((0) + 1) + base) * cols) - ascGm0) * static_cast<int64_t>(sizeof(T));
                        const int64_t ascUb0 = static_cast<int64_t>((0) * cols);
                        const int64_t ascUbPitch = (static_cast<int64_t>(((0) + 1) * cols) - ascUb0) * static_cast<int64_t>(sizeof(T));
                        const int64_t ascUbRow = (static_cast<int64_t>(ascRowBytes) + 31) / 32 * 32;
                        AscendC::DataCopyPadExtParams<T> ascPad{false, 0, 0, 0};
                        if (ascRows > 0 && ascGmPitch == ascRowBytes && ascUbPitch == ascRowBytes && ascRowBytes % 32 == 0 && ascRows * ascRowBytes < 2097152) {
                            AscendC::DataCopyExtParams ascP{1, static_cast<uint32_t>(ascRows * ascRowBytes), 0, 0, 0};
                            AscendC::DataCopyPad(xGm[ascGm0], xLocal[ascUb0], ascP);
                        } else if (ascRows > 0 && ascRows <= 4095 && ascGmPitch >= ascRowBytes && ascUbPitch >= ascUbRow && ascUbPitch % 32 == 0) {
                            AscendC::DataCopyExtParams ascP{static_cast<uint16_t>(ascRows), ascRowBytes, static_cast<uint32_t>((ascUbPitch - ascUbRow) / 32), static_cast<uint32_t>(ascGmPitch - ascRowBytes), 0};
                            AscendC::DataCopyPad(xGm[ascGm0], xLocal[ascUb0], ascP);
                        } else {
                            for (uint32_t r = 0; r < rows; r++) {
                            AscendC::DataCopy(xGm[(r + base) * cols], xLocal[r * cols], cols);
                        }
                        }
                    }"#]].assert_eq(&out.text);
    }

    #[test]
    fn rows_that_are_not_an_arithmetic_progression_stay() {
        assert!(first_loop("        for (uint32_t r = 0; r < rows; r++) {\n            AscendC::DataCopy(xLocal[r * cols], xGm[r * r], cols);\n        }").is_none());
        assert!(first_loop("        for (uint32_t r = 0; r < rows; r++) {\n            AscendC::DataCopy(xLocal[r * cols], xGm[idx[r]], cols);\n        }").is_none());
        assert!(first_loop("        for (uint32_t r = 0; r < rows; r++) {\n            AscendC::DataCopy(xLocal, xGm, cols);\n        }").is_none());
    }
}
