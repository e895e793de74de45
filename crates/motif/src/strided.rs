//! One strided copy instead of a loop of small ones: a `DataCopyPad` with
//! `DataCopyExtParams{blockCount, blockLen, srcStride, dstStride}` moves
//! `blockCount` rows in one instruction (one descriptor, one GM round
//! trip), where a loop pays the fixed copy cost per row.
//!
//! - remove: `DataCopyPad(dst, src, params[, pad])` whose `params` is a
//!   local `DataCopyExtParams` with a block count other than the literal 1
//!   becomes a loop over `params.blockCount` rows, each a one-block
//!   `DataCopyPad` at the row's GM offset (`blockLen + stride` bytes) and
//!   UB offset (the padded 32-byte footprint plus the UB stride in blocks),
//!   the same layout the strided copy produces.
//! - apply: that loop (a one-block `DataCopyExtParams` built from
//!   `params.blockLen`, the UB pitch, one `DataCopyPad` of subscripted
//!   tensors, bounded by `params.blockCount`) becomes the strided copy;
//!   any other loop that copies one row per iteration at offsets affine in
//!   the loop index becomes one strided (or contiguous) copy guarded by
//!   what the copy needs ([`super::row_copy`]).

use super::row_copy;
use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use tree_sitter::Node;

/// Strided DataCopyPad instead of a row loop.
pub struct StridedCopy;

/// The initializer list of `DataCopyExtParams name{...}` declared in the
/// function around `at`, if any.
fn params_init<'t>(parsed: &Parsed<'_>, at: Node<'t>, name: &str) -> Option<Vec<Node<'t>>> {
    let func = syntax::enclosing_function(at)?;
    for decl in syntax::descendants(func) {
        if decl.kind() != "declaration" || !syntax::declares(parsed, decl, name) {
            continue;
        }
        let ty = decl.child_by_field_name("type")?;
        if parsed.src(ty) != "DataCopyExtParams" {
            return None;
        }
        let mut cursor = decl.walk();
        let d = decl
            .children_by_field_name("declarator", &mut cursor)
            .next()?;
        let value = d
            .child_by_field_name("value")
            .or_else(|| syntax::named_children(d).into_iter().nth(1))?;
        if value.kind() != "initializer_list" {
            return None;
        }
        return Some(syntax::named_children(value));
    }
    None
}

fn removal(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    call: &Call<'_>,
    stmt: Node<'_>,
) -> Option<Plan> {
    if call.name != "DataCopyPad" || !(call.args.len() == 3 || call.args.len() == 4) {
        return None;
    }
    let gm_to_ub = call.args.len() == 4;
    let a = syntax::arg_texts(parsed, call);
    let is_ident = |n: Node<'_>| n.kind() == "identifier";
    if !is_ident(call.args[2]) || (gm_to_ub && !is_ident(call.args[3])) {
        return None;
    }
    let init = params_init(parsed, call.node, a[2])?;
    if init.len() != 5 || parsed.src(init[0]) == "1" {
        return None;
    }
    let local = if gm_to_ub { call.args[0] } else { call.args[1] };
    let ty = syntax::elem_type_of(parsed, local);
    let text = parsed.text;
    let site = site_at::<StridedCopy>(
        file,
        text,
        stmt.byte_range(),
        SiteState::Present,
        format!("{} with {} blocks", parsed.src(stmt), parsed.src(init[0])),
    );
    let output = ty
        .and_then(|ty| {
            let p = a[2];
            let indent = syntax::indent_at(text, stmt.start_byte());
            let (pitch, copy) = if gm_to_ub {
                let pad = a[3];
                (
                    format!("({pad}.leftPadding * sizeof({ty}) + {p}.blockLen + {pad}.rightPadding * sizeof({ty}) + 31) / 32 * 32 + {p}.dstStride * 32"),
                    format!(
                        "DataCopyPad({}, {}, ascRowParams, {pad});",
                        syntax::subscript(a[0], &format!("ascRow * ascUbPitch / sizeof({ty})")),
                        syntax::subscript(a[1], &format!("static_cast<uint64_t>(ascRow) * ({p}.blockLen + {p}.srcStride) / sizeof({ty})")),
                    ),
                )
            } else {
                (
                    format!("({p}.blockLen + 31) / 32 * 32 + {p}.srcStride * 32"),
                    format!(
                        "DataCopyPad({}, {}, ascRowParams);",
                        syntax::subscript(a[0], &format!("static_cast<uint64_t>(ascRow) * ({p}.blockLen + {p}.dstStride) / sizeof({ty})")),
                        syntax::subscript(a[1], &format!("ascRow * ascUbPitch / sizeof({ty})")),
                    ),
                )
            };
            let new = format!(
                "for (uint32_t ascRow = 0; ascRow < {p}.blockCount; ascRow++) {{\n{indent}    DataCopyExtParams ascRowParams{{1, {p}.blockLen, 0, 0, 0}};\n{indent}    uint32_t ascUbPitch = {pitch};\n{indent}    {copy}\n{indent}}}"
            );
            syntax::apply_edits(text, &[(stmt.byte_range(), new)])
        })
        .map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

fn application(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    loop_node: Node<'_>,
) -> Option<Plan> {
    let body = syntax::for_body(loop_node)?;
    let stmts = syntax::block_statements(body);
    let var = syntax::loop_var(parsed, loop_node)?;
    let cond = loop_node.child_by_field_name("condition")?;
    let bound = cond.child_by_field_name("right")?;
    if cond.kind() != "binary_expression" || parsed.src(cond.child_by_field_name("left")?) != var {
        return None;
    }
    let p = parsed.src(bound).strip_suffix(".blockCount")?;
    // The copy is the last statement; the row params one of the others.
    let copy_stmt = *stmts.last()?;
    let copy = syntax::statement_call(parsed, copy_stmt)?;
    if copy.name != "DataCopyPad" || !(copy.args.len() == 3 || copy.args.len() == 4) {
        return None;
    }
    let row_params = parsed.src(copy.args[2]);
    let init = params_init(parsed, copy.node, row_params)?;
    let expected = [
        "1".to_string(),
        format!("{p}.blockLen"),
        "0".into(),
        "0".into(),
        "0".into(),
    ];
    if init.len() != 5 || init.iter().zip(&expected).any(|(n, e)| parsed.src(*n) != e) {
        return None;
    }
    if stmts[..stmts.len() - 1]
        .iter()
        .any(|s| s.kind() != "declaration")
    {
        return None;
    }
    let (dst, _) = syntax::strip_subscript(parsed, copy.args[0])?;
    let (src, _) = syntax::strip_subscript(parsed, copy.args[1])?;
    let new = if copy.args.len() == 4 {
        format!(
            "DataCopyPad({dst}, {src}, {p}, {});",
            parsed.src(copy.args[3])
        )
    } else {
        format!("DataCopyPad({dst}, {src}, {p});")
    };
    let text = parsed.text;
    let site = site_at::<StridedCopy>(
        file,
        text,
        loop_node.byte_range(),
        SiteState::Absent,
        format!(
            "row-by-row DataCopyPad loop over {p}.blockCount at line {}",
            syntax::line_of(text, loop_node.start_byte())
        ),
    );
    let output = syntax::apply_edits(text, &[(loop_node.byte_range(), new)])
        .map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

impl Engine for StridedCopy {
    const TAG: &'static str = "strided_copy";
    const FAMILY: &'static str = "memory";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Move many rows with one strided DataCopyPad (blockCount rows, GM/UB strides) instead of a loop of row copies",
            bottleneck: "a loop issues one small DataCopy per row: every copy pays the descriptor and the GM round trip (~0.38 us), so MTE2/MTE3 time grows with the number of rows, not the bytes",
            reuse_when: "rows of a tile are copied one by one with a constant GM pitch and UB pitch (row-major tiles, a column slice, padded rows)",
            avoid_when: "more than 4095 rows or rows longer than the blockLen limit, or row offsets that are not an arithmetic progression",
            expected_effect: "one fixed copy cost per tile instead of one per row: several times faster copies for short rows",
            keywords: &["DataCopyPad", "DataCopyExtParams", "blockCount", "srcStride", "dstStride", "strided copy", "rows", "small copies", "MTE2"],
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
                    } else if let Some(c) = row_copy::compile(&parsed, node) {
                        let site = site_at::<Self>(
                            file,
                            text,
                            node.byte_range(),
                            SiteState::Absent,
                            c.note,
                        );
                        let output = syntax::apply_edits(text, &[(node.byte_range(), c.text)])
                            .map(|t| with_file(pkg, file, t));
                        out.push(Plan { site, output });
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

    const STRONG: &str = "class K {
    __aicore__ inline void CopyRowsIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t nRows)
    {
        DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> padParams{true, 0, static_cast<uint8_t>(rowStride - cols), 0};
        DataCopyPad(dst, src, copyParams, padParams);
    }
    __aicore__ inline void CopyOut(uint32_t nRows)
    {
        LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        DataCopyExtParams copyParams{static_cast<uint16_t>(nRows), static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm[offset], yLocal, copyParams);
        DataCopyExtParams one{1, static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm[offset], yLocal, one);
    }
};
";

    #[test]
    fn both_directions_of_both_copy_kinds() {
        let strong = Sources::from_files([("op_kernel/k.cpp", STRONG)]);
        let sites = StridedCopy.detect(&strong);
        assert_eq!(sites.len(), 2, "{sites:?}");
        let weak_in = StridedCopy.remove(&strong, &sites[0]).unwrap();
        let k = weak_in.get("op_kernel/k.cpp").unwrap();
        assert!(
            k.contains(
                "        for (uint32_t ascRow = 0; ascRow < copyParams.blockCount; ascRow++) {
            DataCopyExtParams ascRowParams{1, copyParams.blockLen, 0, 0, 0};
            uint32_t ascUbPitch = (padParams.leftPadding * sizeof(T) + copyParams.blockLen + padParams.rightPadding * sizeof(T) + 31) / 32 * 32 + copyParams.dstStride * 32;
            DataCopyPad(dst[ascRow * ascUbPitch / sizeof(T)], src[static_cast<uint64_t>(ascRow) * (copyParams.blockLen + copyParams.srcStride) / sizeof(T)], ascRowParams, padParams);
        }"
            ),
            "{k}"
        );
        let weak_out = StridedCopy.remove(&strong, &sites[1]).unwrap();
        let k = weak_out.get("op_kernel/k.cpp").unwrap();
        assert!(k.contains("DataCopyPad(yGm[offset][static_cast<uint64_t>(ascRow) * (copyParams.blockLen + copyParams.dstStride) / sizeof(T)], yLocal[ascRow * ascUbPitch / sizeof(T)], ascRowParams);"), "{k}");
        for weak in [weak_in, weak_out] {
            let site = StridedCopy
                .detect(&weak)
                .into_iter()
                .find(|s| s.state == SiteState::Absent)
                .unwrap();
            assert_eq!(StridedCopy.apply(&weak, &site).unwrap(), strong);
        }
    }
}
