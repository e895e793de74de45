//! Tail-loop consolidation: the last, shorter tile runs as an ordinary
//! iteration of the tile loop with a conditional length
//! (`len = (i + 1 == n) ? last : full`), so it stays in the pipeline.
//!
//! - remove: the loop stops one iteration early with the full length, and
//!   the tail runs after it as separate code (`if (n > 0) { ... }`, the
//!   same body with `i = n - 1` and the tail length). Separate tail code
//!   in naive kernels drains the pipeline before it
//!   (`PipeBarrier<PIPE_ALL>()`, guarding the reused buffers), and so does
//!   the weak form: the last tile no longer overlaps the previous ones.
//! - apply: a loop running to `i + 1 < n` followed by such a tail block
//!   with the same body folds back into one loop.
//!
//! Declines when the body uses `break` or `continue`, or assigns the loop
//! variable.

use super::syntax::{self, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use tree_sitter::Node;

/// Tail iteration folded into the tile loop.
pub struct TailFold;

fn compact(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The parts of a tile loop both directions need.
struct TileLoop<'t> {
    node: Node<'t>,
    body: Node<'t>,
    var: String,
    var_type: String,
    condition: Node<'t>,
    bound: String,
    /// The first body statement: `T len = ...;`.
    len_decl: Node<'t>,
    len_type: String,
    len_name: String,
    len_value: Node<'t>,
}

fn tile_loop<'t>(parsed: &Parsed<'_>, node: Node<'t>) -> Option<TileLoop<'t>> {
    let body = syntax::for_body(node)?;
    if !syntax::in_block(node) {
        return None;
    }
    let init = node.child_by_field_name("initializer")?;
    let var = syntax::loop_var(parsed, node)?.to_string();
    let var_type = parsed.src(init.child_by_field_name("type")?).to_string();
    let condition = node.child_by_field_name("condition")?;
    if condition.kind() != "binary_expression"
        || condition
            .child_by_field_name("operator")
            .map(|o| parsed.src(o))
            != Some("<")
    {
        return None;
    }
    let bound = parsed
        .src(condition.child_by_field_name("right")?)
        .to_string();
    let len_decl = *syntax::block_statements(body).first()?;
    if len_decl.kind() != "declaration" {
        return None;
    }
    let len_type = parsed
        .src(len_decl.child_by_field_name("type")?)
        .to_string();
    let mut cursor = len_decl.walk();
    let declarators: Vec<Node<'t>> = len_decl
        .children_by_field_name("declarator", &mut cursor)
        .collect();
    if declarators.len() != 1 || declarators[0].kind() != "init_declarator" {
        return None;
    }
    let len_name = syntax::declared_name(parsed, declarators[0])?.to_string();
    let len_value = declarators[0].child_by_field_name("value")?;
    // No break/continue of this loop, no assignment to the variable.
    for n in syntax::descendants(body) {
        match n.kind() {
            "break_statement" | "continue_statement" => {
                let owner = syntax::ancestor(
                    n,
                    &[
                        "for_statement",
                        "while_statement",
                        "do_statement",
                        "switch_statement",
                    ],
                );
                if owner.map(|o| o.id()) == Some(node.id()) {
                    return None;
                }
            }
            "assignment_expression" | "update_expression" => {
                let target = n
                    .child_by_field_name("left")
                    .or_else(|| n.child_by_field_name("argument"));
                if target.is_some_and(|t| parsed.src(t) == var) {
                    return None;
                }
            }
            _ => {}
        }
    }
    Some(TileLoop {
        node,
        body,
        var,
        var_type,
        condition,
        bound,
        len_decl,
        len_type,
        len_name,
        len_value,
    })
}

/// `(A, B)` of `(v + 1 == n) ? A : B` (or `v == n - 1`).
fn last_or_full<'a>(parsed: &Parsed<'a>, tl: &TileLoop<'_>) -> Option<(&'a str, &'a str)> {
    let mut value = tl.len_value;
    if value.kind() != "conditional_expression" {
        return None;
    }
    let cond = value.child_by_field_name("condition")?;
    let c = compact(parsed.src(cond));
    let c = c.trim_start_matches('(').trim_end_matches(')');
    let (v, n) = (&tl.var, compact(&tl.bound));
    let accepted = [
        format!("{v}+1=={n}"),
        format!("{n}=={v}+1"),
        format!("{v}=={n}-1"),
        format!("{n}-1=={v}"),
    ];
    if !accepted.iter().any(|a| a == c) {
        return None;
    }
    let last = value.child_by_field_name("consequence")?;
    value = value.child_by_field_name("alternative")?;
    Some((parsed.src(last), parsed.src(value)))
}

impl Engine for TailFold {
    const TAG: &'static str = "tail_fold";
    const FAMILY: &'static str = "pipeline";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Fold the tail tile into the main tile loop with a conditional length",
            bottleneck: "the last, shorter tile runs as separate code after the loop behind a full barrier: the pipeline drains and the tail's copy-in cannot overlap the previous tiles",
            reuse_when: "a tile loop handles the full tiles and duplicated code after it handles the remainder with the same stages",
            avoid_when: "the tail needs a different algorithm (padding, a different copy path) that cannot be selected per iteration",
            expected_effect: "the tail tile overlaps like the others: saves about one tile's copy latency per core, a few percent on short per-core ranges",
            keywords: &["tail", "remainder", "last tile", "tail loop", "conditional length", "loop fusion", "pipeline drain"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            for node in parsed.all() {
                let Some(tl) = tile_loop(&parsed, node) else {
                    continue;
                };
                if let Some((last, full)) = last_or_full(&parsed, &tl) {
                    out.push(removal(pkg, file, &parsed, &tl, last, full));
                } else if let Some(plan) = application(pkg, file, &parsed, &tl) {
                    out.push(plan);
                }
            }
        }
        out
    }
}

fn removal(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    tl: &TileLoop<'_>,
    last: &str,
    full: &str,
) -> Plan {
    let text = parsed.text;
    let indent = syntax::indent_at(text, tl.node.start_byte());
    let inner = syntax::indent_at(text, tl.len_decl.start_byte());
    let rest = &text[tl.len_decl.end_byte()..tl.body.end_byte() - 1];
    let (v, n) = (&tl.var, &tl.bound);
    let tail = format!(
        "\n{indent}if ({n} > 0) {{\n{inner}PipeBarrier<PIPE_ALL>();\n{inner}{vt} {v} = {n} - 1;\n{inner}{lt} {ln} = {last};{rest}}}",
        vt = tl.var_type,
        lt = tl.len_type,
        ln = tl.len_name,
    );
    let edits = vec![
        (tl.condition.byte_range(), format!("{v} + 1 < {n}")),
        (tl.len_value.byte_range(), full.to_string()),
        (tl.node.end_byte()..tl.node.end_byte(), tail),
    ];
    let site = site_at::<TailFold>(
        file,
        text,
        tl.node.start_byte()..tl.body.start_byte(),
        SiteState::Present,
        format!(
            "tail folded into the loop at line {} ({} = ... ? {last} : {full})",
            syntax::line_of(text, tl.node.start_byte()),
            tl.len_name
        ),
    );
    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
    Plan { site, output }
}

fn application(pkg: &Sources, file: &str, parsed: &Parsed<'_>, tl: &TileLoop<'_>) -> Option<Plan> {
    let text = parsed.text;
    let (v, n) = (&tl.var, &tl.bound);
    // for (...; v + 1 < n; ...) { T len = FULL; REST }
    let left = tl.condition.child_by_field_name("left")?;
    if compact(parsed.src(left)) != format!("{v}+1") {
        return None;
    }
    let full = parsed.src(tl.len_value);
    // if (n > 0) { [PipeBarrier<PIPE_ALL>();] T v = n - 1; T len = LAST; REST }
    let tail = tl.node.next_named_sibling()?;
    if tail.kind() != "if_statement" || tail.child_by_field_name("alternative").is_some() {
        return None;
    }
    let cond = tail.child_by_field_name("condition")?;
    let c = compact(parsed.src(cond));
    if c.trim_start_matches('(').trim_end_matches(')') != format!("{}>0", compact(n)) {
        return None;
    }
    let block = tail.child_by_field_name("consequence")?;
    let mut stmts = syntax::block_statements(block).into_iter().peekable();
    if stmts
        .peek()
        .and_then(|s| syntax::statement_call(parsed, *s))
        .is_some_and(|c| c.name == "PipeBarrier")
    {
        stmts.next();
    }
    let var_decl = stmts.next()?;
    let len_decl = stmts.next()?;
    if var_decl.kind() != "declaration" || !syntax::declares(parsed, var_decl, v) {
        return None;
    }
    if compact(parsed.src(var_decl)) != compact(&format!("{} {v} = {n} - 1;", tl.var_type)) {
        return None;
    }
    if len_decl.kind() != "declaration" || !syntax::declares(parsed, len_decl, &tl.len_name) {
        return None;
    }
    let mut cursor = len_decl.walk();
    let d = len_decl
        .children_by_field_name("declarator", &mut cursor)
        .next()?;
    let last = parsed.src(d.child_by_field_name("value")?);
    let loop_rest = &text[tl.len_decl.end_byte()..tl.body.end_byte() - 1];
    let tail_rest = &text[len_decl.end_byte()..block.end_byte() - 1];
    if compact(loop_rest) != compact(tail_rest) {
        return None;
    }
    let edits = vec![
        (tl.condition.byte_range(), format!("{v} < {n}")),
        (
            tl.len_value.byte_range(),
            format!("({v} + 1 == {n}) ? {last} : {full}"),
        ),
        (tl.node.end_byte()..tail.end_byte(), String::new()),
    ];
    let site = site_at::<TailFold>(
        file,
        text,
        tl.node.start_byte()..tl.body.start_byte(),
        SiteState::Absent,
        format!(
            "separate tail after the loop at line {}",
            syntax::line_of(text, tl.node.start_byte())
        ),
    );
    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Motif;

    const STRONG: &str = "void Process()
{
    uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
    uint32_t lastLength = blockLength - (tileNum - 1) * tileLength;
    for (uint32_t i = 0; i < tileNum; i++) {
        uint32_t length = (i + 1 == tileNum) ? lastLength : tileLength;
        CopyIn(i, length);
        Compute(length);
        CopyOut(i, length);
    }
}
";

    #[test]
    fn the_tail_moves_out_of_the_loop_and_folds_back() {
        let strong = Sources::from_files([("op_kernel/k.cpp", STRONG)]);
        let sites = TailFold.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!((sites[0].state, sites[0].line), (SiteState::Present, 5));
        let weak = TailFold.remove(&strong, &sites[0]).unwrap();
        assert_eq!(
            weak.get("op_kernel/k.cpp").unwrap(),
            "void Process()
{
    uint32_t tileNum = (blockLength + tileLength - 1) / tileLength;
    uint32_t lastLength = blockLength - (tileNum - 1) * tileLength;
    for (uint32_t i = 0; i + 1 < tileNum; i++) {
        uint32_t length = tileLength;
        CopyIn(i, length);
        Compute(length);
        CopyOut(i, length);
    }
    if (tileNum > 0) {
        PipeBarrier<PIPE_ALL>();
        uint32_t i = tileNum - 1;
        uint32_t length = lastLength;
        CopyIn(i, length);
        Compute(length);
        CopyOut(i, length);
    }
}
"
        );
        let sites = TailFold.detect(&weak);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].state, SiteState::Absent);
        assert_eq!(TailFold.apply(&weak, &sites[0]).unwrap(), strong);
    }

    #[test]
    fn a_tail_with_a_different_body_does_not_fold() {
        let strong = Sources::from_files([("op_kernel/k.cpp", STRONG)]);
        let weak = TailFold
            .remove(&strong, &TailFold.detect(&strong)[0])
            .unwrap();
        let mut text = weak.get("op_kernel/k.cpp").unwrap().to_string();
        let at = text.rfind("Compute(length);").unwrap();
        text.replace_range(at..at + "Compute".len(), "Other");
        let changed = Sources::from_files([("op_kernel/k.cpp", text)]);
        assert!(TailFold.detect(&changed).is_empty());
    }

    #[test]
    fn loops_with_continue_are_left_alone() {
        let text = STRONG.replace(
            "CopyIn(i, length);",
            "if (length == 0) { continue; }\n        CopyIn(i, length);",
        );
        assert!(TailFold
            .detect(&Sources::from_files([("op_kernel/k.cpp", text)]))
            .is_empty());
    }
}
