//! Buffer reuse: a copy-only stage keeps its data in one UB buffer from
//! copy-in to copy-out (`TQueBind<VECIN, VECOUT, N>`), where a naive
//! kernel has an input queue, an output queue, and a vector copy between
//! them: twice the UB for the same tile, and an extra vector pass plus two
//! more queue handshakes per tile.
//!
//! - remove: the bound queue `q` becomes `TQue<VECIN, N> q` and
//!   `TQue<VECOUT, N> qOut` (each `InitBuffer(q, ...)` gets a twin for
//!   `qOut`); after each `q.DeQue` the tile is copied into a `qOut` tensor
//!   by a 16-bit `Adds(.., 0)` (bit exact for any dtype), `q`'s buffer is
//!   freed and the copy is dequeued in its place; the later
//!   `q.FreeTensor` calls free `qOut`'s buffer.
//!   In the host tiling, a UB split `ub / BUFFER_NUM` (the UB one queue's
//!   buffers may take) becomes `ub / (2 * BUFFER_NUM)`, so the tile still
//!   fits: the freed UB is what bounded the tile.
//! - apply: exactly that shape (queues `q` and `qOut`) goes back to the
//!   bound queue, and the host split back to `ub / BUFFER_NUM`.

use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use std::ops::Range;
use tree_sitter::Node;

/// One UB buffer for copy-in and copy-out (TQueBind VECIN→VECOUT).
pub struct BufferReuse;

/// A queue member: `TQue<...> name;` or `TQueBind<...> name;`.
struct QueueField<'t> {
    decl: Node<'t>,
    kind: String,
    args: Vec<String>,
    name: String,
}

fn fields<'t>(parsed: &'t Parsed<'_>) -> Vec<QueueField<'t>> {
    let mut out = Vec::new();
    for decl in parsed.all() {
        if decl.kind() != "field_declaration" {
            continue;
        }
        let Some(ty) = decl.child_by_field_name("type") else {
            continue;
        };
        if ty.kind() != "template_type" {
            continue;
        }
        let Some(kind) = ty
            .child_by_field_name("name")
            .map(|n| parsed.src(n).to_string())
        else {
            continue;
        };
        if kind != "TQue" && kind != "TQueBind" {
            continue;
        }
        let Some(args) = ty.child_by_field_name("arguments") else {
            continue;
        };
        let args: Vec<String> = syntax::named_children(args)
            .into_iter()
            .map(|a| parsed.src(a).to_string())
            .collect();
        let mut cursor = decl.walk();
        let names: Vec<&str> = decl
            .children_by_field_name("declarator", &mut cursor)
            .filter_map(|d| syntax::declared_name(parsed, d))
            .collect();
        if names.len() != 1 {
            continue;
        }
        out.push(QueueField {
            decl,
            kind,
            args,
            name: names[0].to_string(),
        });
    }
    out
}

/// Calls whose object is the queue `name`.
fn queue_calls<'t>(parsed: &'t Parsed<'_>, name: &str) -> Vec<Call<'t>> {
    parsed
        .calls()
        .into_iter()
        .filter(|c| c.object.is_some_and(|o| parsed.src(o) == name))
        .collect()
}

/// `pipe->` of `pipe->InitBuffer(...)`.
fn callee_prefix<'a>(parsed: &Parsed<'a>, call: &Call<'_>) -> Option<&'a str> {
    let f = parsed.src(call.node.child_by_field_name("function")?);
    f.strip_suffix(call.name.as_str())
}

fn delete(text: &str, node: Node<'_>) -> (Range<usize>, String) {
    let r = node.byte_range();
    if syntax::alone_on_lines(text, r.clone()) {
        (syntax::line_range(text, r), String::new())
    } else {
        (r, String::new())
    }
}

/// Host edits of the UB split: `ub / BUFFER_NUM` (the UB a single queue's
/// buffers may take) becomes `ub / (2 * BUFFER_NUM)` for two queues
/// (`split`), or back (`!split`).
fn host_ub_edits(pkg: &Sources, split: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (file, text) in pkg.host_files() {
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        for n in parsed.all() {
            if n.kind() != "binary_expression"
                || n.child_by_field_name("operator").map(|o| parsed.src(o)) != Some("/")
            {
                continue;
            }
            let (Some(left), Some(right)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            ) else {
                continue;
            };
            if left.kind() != "identifier" || !parsed.src(left).to_lowercase().contains("ub") {
                continue;
            }
            let r = parsed.src(right);
            if split && right.kind() == "identifier" && r.contains("BUFFER_NUM") {
                edits.push((right.byte_range(), format!("(2 * {r})")));
            } else if !split {
                let inner = r.strip_prefix("(2 * ").and_then(|x| x.strip_suffix(')'));
                if let Some(inner) = inner.filter(|i| {
                    i.contains("BUFFER_NUM") && i.chars().all(|c| c.is_alphanumeric() || c == '_')
                }) {
                    edits.push((right.byte_range(), inner.to_string()));
                }
            }
        }
        if !edits.is_empty() {
            if let Some(new) = syntax::apply_edits(text, &edits) {
                out.push((file.to_string(), new));
            }
        }
    }
    out
}

/// `pkg` with `file` replaced and the host UB split edited.
fn with_kernel_and_host(pkg: &Sources, file: &str, kernel: String, split: bool) -> Sources {
    let mut out = with_file(pkg, file, kernel);
    for (path, text) in host_ub_edits(pkg, split) {
        // `path` is a key of `pkg`, confined when it was set.
        let _ = out.set(&path, text);
    }
    out
}

fn removal(pkg: &Sources, file: &str, parsed: &Parsed<'_>, field: &QueueField<'_>) -> Option<Plan> {
    let text = parsed.text;
    let [vecin, vecout, depth] = [&field.args[0], &field.args[1], &field.args[2]];
    let name = &field.name;
    let out_name = format!("{name}Out");
    if text.contains(&out_name) {
        return None;
    }
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let indent = syntax::indent_at(text, field.decl.start_byte());
    edits.push((
        field.decl.byte_range(),
        format!("TQue<{vecin}, {depth}> {name};\n{indent}TQue<{vecout}, {depth}> {out_name};"),
    ));
    let mut dequeues = 0;
    for call in parsed.calls() {
        if call.name == "InitBuffer" && call.args.first().is_some_and(|a| parsed.src(*a) == name) {
            let stmt = call.statement()?;
            let prefix = callee_prefix(parsed, &call)?;
            let rest: Vec<&str> = call.args[1..].iter().map(|a| parsed.src(*a)).collect();
            let i = syntax::indent_at(text, stmt.start_byte());
            edits.push((
                stmt.end_byte()..stmt.end_byte(),
                format!("\n{i}{prefix}InitBuffer({out_name}, {});", rest.join(", ")),
            ));
        }
    }
    for call in queue_calls(parsed, name) {
        match call.name.as_str() {
            "DeQue" => {
                let ty = call.template_args.clone()?;
                // `LocalTensor<T> v = q.DeQue<T>();` or `v = q.DeQue<T>();`
                let parent = call.node.parent()?;
                let (stmt, var) = match parent.kind() {
                    "init_declarator" => (
                        syntax::ancestor(parent, &["declaration"])?,
                        syntax::declared_name(parsed, parent)?,
                    ),
                    "assignment_expression" => (
                        parent.parent()?,
                        parsed.src(parent.child_by_field_name("left")?),
                    ),
                    _ => return None,
                };
                if !syntax::in_block(stmt) {
                    return None;
                }
                let templ = if parsed.src(call.node).contains(".template ") {
                    ".template "
                } else {
                    "."
                };
                let i = syntax::indent_at(text, stmt.start_byte());
                let inserted = [
                    format!("LocalTensor<{ty}> ascOut = {out_name}{templ}AllocTensor<{ty}>();"),
                    format!("Adds(ascOut.template ReinterpretCast<int16_t>(), {var}.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>({var}.template ReinterpretCast<int16_t>().GetSize()));"),
                    format!("{out_name}.EnQue(ascOut);"),
                    format!("{name}.FreeTensor({var});"),
                    format!("{var} = {out_name}{templ}DeQue<{ty}>();"),
                ];
                let block: String = inserted.iter().map(|l| format!("\n{i}{l}")).collect();
                edits.push((stmt.end_byte()..stmt.end_byte(), block));
                dequeues += 1;
            }
            "FreeTensor" => {
                let object = call.object?;
                edits.push((object.byte_range(), out_name.clone()));
            }
            _ => {}
        }
    }
    if dequeues == 0 {
        return None;
    }
    let site = site_at::<BufferReuse>(
        file,
        text,
        field.decl.byte_range(),
        SiteState::Present,
        format!(
            "{} reuses one buffer from copy-in to copy-out",
            parsed.src(field.decl)
        ),
    );
    let output =
        syntax::apply_edits(text, &edits).map(|t| with_kernel_and_host(pkg, file, t, true));
    Some(Plan { site, output })
}

fn application(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    input: &QueueField<'_>,
    output_q: &QueueField<'_>,
) -> Option<Plan> {
    let text = parsed.text;
    let (name, out_name) = (&input.name, &output_q.name);
    if input.args.len() != 2 || output_q.args.len() != 2 || input.args[1] != output_q.args[1] {
        return None;
    }
    let mut edits: Vec<(Range<usize>, String)> = vec![
        (
            input.decl.byte_range(),
            format!(
                "TQueBind<{}, {}, {}> {name};",
                input.args[0], output_q.args[0], input.args[1]
            ),
        ),
        delete(text, output_q.decl),
    ];
    let mut handled: Vec<Range<usize>> = Vec::new();
    for call in parsed.calls() {
        let mentions_out = call.object.is_some_and(|o| parsed.src(o) == out_name)
            || (call.name == "InitBuffer"
                && call
                    .args
                    .first()
                    .is_some_and(|a| parsed.src(*a) == out_name));
        if !mentions_out {
            continue;
        }
        match call.name.as_str() {
            "InitBuffer" | "EnQue" => {
                let stmt = call.statement()?;
                edits.push(delete(text, stmt));
                handled.push(stmt.byte_range());
            }
            "AllocTensor" => {
                // LocalTensor<T> v = qOut.AllocTensor<T>(); then the copy.
                let decl = syntax::ancestor(call.node, &["declaration"])?;
                let copy = decl.next_named_sibling()?;
                let copy_call = syntax::statement_call(parsed, copy)?;
                if !syntax::is_vector_op(&copy_call.name) && copy_call.name != "DataCopy" {
                    return None;
                }
                edits.push(delete(text, decl));
                edits.push(delete(text, copy));
                handled.push(decl.byte_range());
            }
            "DeQue" => {
                let assign = call.node.parent()?;
                if assign.kind() != "assignment_expression" {
                    return None;
                }
                let var = parsed.src(assign.child_by_field_name("left")?);
                let stmt = assign.parent()?;
                edits.push(delete(text, stmt));
                handled.push(stmt.byte_range());
                let prev = stmt.prev_named_sibling()?;
                let free = syntax::statement_call(parsed, prev)?;
                if free.name != "FreeTensor"
                    || free.object.map(|o| parsed.src(o)) != Some(name.as_str())
                    || free.args.first().map(|a| parsed.src(*a)) != Some(var)
                {
                    return None;
                }
                edits.push(delete(text, prev));
            }
            "FreeTensor" => {
                edits.push((call.object?.byte_range(), name.clone()));
            }
            _ => return None,
        }
    }
    // Every other mention of qOut would dangle.
    for n in parsed.all() {
        if (n.kind() == "identifier" || n.kind() == "field_identifier") && parsed.src(n) == out_name
        {
            let inside_edit = edits
                .iter()
                .any(|(r, _)| r.start <= n.start_byte() && n.end_byte() <= r.end);
            if !inside_edit {
                return None;
            }
        }
    }
    let site = site_at::<BufferReuse>(
        file,
        text,
        input.decl.byte_range(),
        SiteState::Absent,
        format!(
            "{} and {} with a vector copy between them",
            parsed.src(input.decl),
            parsed.src(output_q.decl)
        ),
    );
    let output =
        syntax::apply_edits(text, &edits).map(|t| with_kernel_and_host(pkg, file, t, false));
    Some(Plan { site, output })
}

impl Engine for BufferReuse {
    const TAG: &'static str = "buffer_reuse";
    const FAMILY: &'static str = "memory";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Keep copy-only data in one UB buffer (TQueBind VECIN->VECOUT) instead of input queue + vector copy + output queue",
            bottleneck: "a copy-only stage moves every tile through two UB buffers with a vector copy and two extra queue handshakes: twice the UB per tile (smaller tiles when UB is the limit) and a vector pass on the critical path",
            reuse_when: "the tile is written back unchanged (reshape, copy paths, dtypes that need no arithmetic)",
            avoid_when: "the output differs from the input (real compute needs a separate or in-place destination)",
            expected_effect: "half the UB per tile (room for larger tiles) and one vector pass less per tile: a few percent on copy kernels, more when UB limits the tile",
            keywords: &["TQueBind", "buffer reuse", "UB footprint", "in place", "copy only", "VECIN", "VECOUT", "queue"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            let fields = fields(&parsed);
            for f in &fields {
                if f.kind == "TQueBind"
                    && f.args.len() == 3
                    && f.args[0].ends_with("VECIN")
                    && f.args[1].ends_with("VECOUT")
                {
                    if let Some(plan) = removal(pkg, file, &parsed, f) {
                        out.push(plan);
                    }
                }
                if f.kind == "TQue" && f.args.len() == 2 && f.args[0].ends_with("VECIN") {
                    let twin = format!("{}Out", f.name);
                    if let Some(o) = fields.iter().find(|o| {
                        o.name == twin && o.kind == "TQue" && o.args[0].ends_with("VECOUT")
                    }) {
                        if let Some(plan) = application(pkg, file, &parsed, f, o) {
                            out.push(plan);
                        }
                    }
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

    const STRONG: &str = "class K {
    __aicore__ inline void Init(GM_ADDR x, TPipe* pipe)
    {
        pipe->InitBuffer(queue, tiling.bufferNum, tileBytes);
    }
    __aicore__ inline void Step(uint64_t offset, uint32_t bytes)
    {
        LocalTensor<uint8_t> local = queue.AllocTensor<uint8_t>();
        DataCopy(local, xGm[offset], bytes);
        queue.EnQue(local);
        local = queue.DeQue<uint8_t>();
        DataCopy(yGm[offset], local, bytes);
        queue.FreeTensor(local);
    }

private:
    TQueBind<QuePosition::VECIN, QuePosition::VECOUT, BUFFER_NUM> queue;
};
";

    const HOST: &str = "bool Plan(uint64_t ubBytes)\n{\n    uint64_t maxTile = ubBytes / BUFFER_NUM;\n    uint64_t other = total / BUFFER_NUM;\n    return maxTile > other;\n}\n";

    #[test]
    fn the_bound_queue_splits_in_two_with_a_copy_and_merges_back() {
        let strong = Sources::from_files([("op_kernel/k.cpp", STRONG), ("op_host/k.cpp", HOST)]);
        let sites = BufferReuse.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        let weak = BufferReuse.remove(&strong, &sites[0]).unwrap();
        let k = weak.get("op_kernel/k.cpp").unwrap();
        expect![[r#"
            --- a/op_host/k.cpp
            +++ b/op_host/k.cpp
            @@ -1,6 +1,6 @@
             bool Plan(uint64_t ubBytes)
             {
            -    uint64_t maxTile = ubBytes / BUFFER_NUM;
            +    uint64_t maxTile = ubBytes / (2 * BUFFER_NUM);
                 uint64_t other = total / BUFFER_NUM;
                 return maxTile > other;
             }
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -2,6 +2,7 @@
                 __aicore__ inline void Init(GM_ADDR x, TPipe* pipe)
                 {
                     pipe->InitBuffer(queue, tiling.bufferNum, tileBytes);
            +        pipe->InitBuffer(queueOut, tiling.bufferNum, tileBytes);
                 }
                 __aicore__ inline void Step(uint64_t offset, uint32_t bytes)
                 {
            @@ -9,10 +10,16 @@
                     DataCopy(local, xGm[offset], bytes);
                     queue.EnQue(local);
                     local = queue.DeQue<uint8_t>();
            -        DataCopy(yGm[offset], local, bytes);
            +        LocalTensor<uint8_t> ascOut = queueOut.AllocTensor<uint8_t>();
            +        Adds(ascOut.template ReinterpretCast<int16_t>(), local.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>(local.template ReinterpretCast<int16_t>().GetSize()));
            +        queueOut.EnQue(ascOut);
                     queue.FreeTensor(local);
            +        local = queueOut.DeQue<uint8_t>();
            +        DataCopy(yGm[offset], local, bytes);
            +        queueOut.FreeTensor(local);
                 }

             private:
            -    TQueBind<QuePosition::VECIN, QuePosition::VECOUT, BUFFER_NUM> queue;
            +    TQue<QuePosition::VECIN, BUFFER_NUM> queue;
            +    TQue<QuePosition::VECOUT, BUFFER_NUM> queueOut;
             };
        "#]].assert_eq(&crate::snapshot_diff(&strong, &weak));
        assert_eq!(
            weak.get("op_host/k.cpp").unwrap(),
            HOST.replace("ubBytes / BUFFER_NUM", "ubBytes / (2 * BUFFER_NUM)")
        );
        assert!(
            k.contains(
                "        local = queue.DeQue<uint8_t>();
        LocalTensor<uint8_t> ascOut = queueOut.AllocTensor<uint8_t>();
        Adds(ascOut.template ReinterpretCast<int16_t>(), local.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>(local.template ReinterpretCast<int16_t>().GetSize()));
        queueOut.EnQue(ascOut);
        queue.FreeTensor(local);
        local = queueOut.DeQue<uint8_t>();
        DataCopy(yGm[offset], local, bytes);
        queueOut.FreeTensor(local);"
            ),
            "{k}"
        );
        let sites = BufferReuse.detect(&weak);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].state, SiteState::Absent);
        assert_eq!(BufferReuse.apply(&weak, &sites[0]).unwrap(), strong);
    }
}
