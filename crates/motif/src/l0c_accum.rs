//! Accumulation across K in L0C (issue 27 item 5): the K loop of an output
//! tile runs its Mmads into one CO1 tile (`cmatrixInitVal` true only on
//! the first K step) and the tile leaves L0C once, by one Fixpipe after
//! the loop; the weak form initialises L0C on every K step and sends each
//! step's partial product out by its own Fixpipe, summed in GM by atomic
//! add (the first step writes, the others add).
//!
//! Found from the syntax tree of hand-written cube kernels:
//! - an `Mmad(c, a, b, p)` whose `p.cmatrixInitVal = E` is set in the same
//!   function, either inside a `for` loop (E is the init flag) or in a
//!   function called from a `for` loop with E one of its parameters (the
//!   call's argument is the init flag) and `c` one of its parameters (the
//!   call's argument names the CO1 tensor);
//! - present: the flag mentions the loop variable (`s == 0`), the tensor
//!   is declared from `q.AllocTensor<float>()` before the loop in the same
//!   block (no statement in between mentions it), and the statements after
//!   the loop up to `q.FreeTensor(c)` hold a `Fixpipe` from it (the
//!   drain). Removal: the flag becomes `true`, the allocation moves to the
//!   top of the loop body, the drain to its end, and the Fixpipe is framed
//!   by `if (!(flag)) { SetAtomicAdd<float>(); }` and `if (!(flag)) {
//!   SetAtomicNone(); }`.
//! - absent: the form the removal writes (the flag `true`, the allocation
//!   in the loop body, the body ending with the drain that frees the
//!   tensor, the atomic frames naming the first-step condition). Apply
//!   undoes it.
//!
//! Preconditions (the motif declines otherwise): the CO1 tensor is float
//! (a Fixpipe per step to a half output would round every partial sum;
//! no `quantPre` in the drain), the file uses no atomic mode already, the
//! loop has one variable. The per-step form is correct as long as the
//! output tile is written by this Fixpipe alone. Not recognised: the weak
//! form of a MIX kernel that adds the partial products on the vector core
//! (Fixpipe to a workspace, then a vector Add), or a C zeroed beforehand
//! with atomic add on every step.

use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use std::ops::Range;
use tree_sitter::Node;

/// L0C accumulation across the K loop.
pub struct L0cAccumulate;

/// Where an Mmad's init flag is decided, seen from the K loop.
struct KLoop<'t> {
    /// The `for` statement.
    for_node: Node<'t>,
    /// Its variable.
    var: String,
    /// The init flag expression (the call's argument, or the assigned
    /// value for an Mmad inside the loop).
    flag: Node<'t>,
    /// The CO1 tensor's name at the loop's level.
    tensor: String,
    /// The statement of the loop body that reaches the Mmad.
    compute: Node<'t>,
}

/// The index of parameter `name` of function definition `func`.
fn param_index(parsed: &Parsed<'_>, func: Node<'_>, name: &str) -> Option<usize> {
    let declarator = syntax::descendants(func)
        .into_iter()
        .find(|n| n.kind() == "function_declarator")?;
    let params = declarator.child_by_field_name("parameters")?;
    syntax::named_children(params)
        .into_iter()
        .filter(|p| {
            p.kind() == "parameter_declaration" || p.kind() == "optional_parameter_declaration"
        })
        .position(|p| {
            let mut cursor = p.walk();
            let ds: Vec<Node<'_>> = p
                .children_by_field_name("declarator", &mut cursor)
                .collect();
            ds.into_iter()
                .any(|d| syntax::declared_name(parsed, d) == Some(name))
        })
}

/// The statement directly in `block` that contains `node`.
fn statement_in<'t>(node: Node<'t>, block: Node<'t>) -> Option<Node<'t>> {
    let mut cur = node;
    loop {
        let parent = cur.parent()?;
        if parent.id() == block.id() {
            return Some(cur);
        }
        cur = parent;
    }
}

/// The K loops of the file: one per Mmad with a known init flag.
fn k_loops<'t>(parsed: &'t Parsed<'_>) -> Vec<KLoop<'t>> {
    let mut out = Vec::new();
    let calls = parsed.calls();
    for mmad in calls
        .iter()
        .filter(|c| c.name == "Mmad" && c.args.len() >= 4)
    {
        let Some(func) = syntax::enclosing_function(mmad.node) else {
            continue;
        };
        let Some(params) = mmad.args.last() else {
            continue;
        };
        let want = format!("{}.cmatrixInitVal", parsed.src(*params).trim());
        let Some(init) = syntax::descendants(func).into_iter().find(|n| {
            n.kind() == "assignment_expression"
                && n.child_by_field_name("left")
                    .is_some_and(|l| parsed.src(l).replace(' ', "") == want)
        }) else {
            continue;
        };
        let Some(value) = init.child_by_field_name("right") else {
            continue;
        };
        let Some(dst) = syntax::tensor_root(parsed, mmad.args[0]) else {
            continue;
        };
        // An Mmad inside the loop.
        if let Some(for_node) =
            syntax::ancestor(mmad.node, &["for_statement"]).filter(|f| syntax::within(*f, func))
        {
            let (Some(body), Some(var)) = (
                syntax::for_body(for_node),
                syntax::loop_var(parsed, for_node),
            ) else {
                continue;
            };
            let Some(compute) = statement_in(mmad.node, body) else {
                continue;
            };
            out.push(KLoop {
                for_node,
                var: var.to_string(),
                flag: value,
                tensor: dst.to_string(),
                compute,
            });
            continue;
        }
        // An Mmad in a function the loop calls: the flag and the tensor
        // are parameters.
        if value.kind() != "identifier" {
            continue;
        }
        let (Some(flag_at), Some(dst_at), Some(fname)) = (
            param_index(parsed, func, parsed.src(value)),
            param_index(parsed, func, dst),
            syntax::function_name(parsed, func),
        ) else {
            continue;
        };
        let fname = fname.rsplit("::").next().unwrap_or(fname);
        for call in calls.iter().filter(|c| c.name == fname) {
            let (Some(flag), Some(tensor)) = (call.args.get(flag_at), call.args.get(dst_at)) else {
                continue;
            };
            let Some(for_node) = syntax::ancestor(call.node, &["for_statement"]) else {
                continue;
            };
            let (Some(body), Some(var)) = (
                syntax::for_body(for_node),
                syntax::loop_var(parsed, for_node),
            ) else {
                continue;
            };
            let (Some(compute), Some(tensor)) = (
                statement_in(call.node, body),
                syntax::tensor_root(parsed, *tensor),
            ) else {
                continue;
            };
            out.push(KLoop {
                for_node,
                var: var.to_string(),
                flag: *flag,
                tensor: tensor.to_string(),
                compute,
            });
        }
    }
    out
}

/// True when `stmt` declares `tensor` from an `AllocTensor<float>()`.
fn is_float_alloc(parsed: &Parsed<'_>, stmt: Node<'_>, tensor: &str) -> bool {
    stmt.kind() == "declaration"
        && syntax::declares(parsed, stmt, tensor)
        && parsed.src(stmt).contains("AllocTensor")
        && parsed
            .src(stmt)
            .replace(' ', "")
            .starts_with("LocalTensor<float>")
}

/// The call of `name` on tensor `tensor` (`q.FreeTensor(c)`) that is the
/// whole of `stmt`.
fn frees(parsed: &Parsed<'_>, stmt: Node<'_>, tensor: &str) -> bool {
    syntax::statement_call(parsed, stmt).is_some_and(|c: Call<'_>| {
        c.name == "FreeTensor"
            && c.args.first().and_then(|a| syntax::tensor_root(parsed, *a)) == Some(tensor)
    })
}

/// True when `stmts` hold a Fixpipe from `tensor` and no quantisation.
fn drains(parsed: &Parsed<'_>, stmts: &[Node<'_>], tensor: &str) -> bool {
    let fixpipe = stmts.iter().any(|s| {
        syntax::descendants(*s).into_iter().any(|n| {
            Call::of(parsed, n).is_some_and(|c| {
                c.name == "Fixpipe"
                    && c.args.get(1).and_then(|a| syntax::tensor_root(parsed, *a)) == Some(tensor)
            })
        })
    });
    fixpipe && !stmts.iter().any(|s| parsed.src(*s).contains("quantPre"))
}

/// True when `node` mentions identifier `name`.
fn mentions(parsed: &Parsed<'_>, node: Node<'_>, name: &str) -> bool {
    syntax::identifiers(parsed, node).contains(&name)
}

/// The whole lines of statements `first..=last`, without their common
/// indentation `indent`, re-indented by `to`.
fn moved_lines(text: &str, first: Node<'_>, last: Node<'_>, indent: &str, to: &str) -> String {
    let range = syntax::line_range(text, first.start_byte()..last.end_byte());
    let mut out = String::new();
    for line in text[range].lines() {
        let bare = line.strip_prefix(indent).unwrap_or(line.trim_start());
        if bare.is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("{to}{bare}\n"));
        }
    }
    out
}

/// The atomic frames of a Fixpipe under `flag` (first step writes).
fn framed_fixpipe(drain: &str, flag: &str, indent_of: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    for line in drain.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("Fixpipe(") || trimmed.starts_with("AscendC::Fixpipe(") {
            let indent = indent_of(line);
            out.push_str(&format!(
                "{indent}if (!({flag})) {{ SetAtomicAdd<float>(); }}\n"
            ));
            out.push_str(line);
            out.push_str(&format!("{indent}if (!({flag})) {{ SetAtomicNone(); }}\n"));
        } else {
            out.push_str(line);
        }
    }
    out
}

fn leading(line: &str) -> String {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The condition `X` of an atomic frame `if (!(X)) { SetAtomic...(); }`.
fn frame_flag<'a>(parsed: &Parsed<'a>, stmt: Node<'_>) -> Option<&'a str> {
    if stmt.kind() != "if_statement" {
        return None;
    }
    let text = parsed.src(stmt);
    if !text.contains("SetAtomicAdd") && !text.contains("SetAtomicNone") {
        return None;
    }
    let cond = parsed.src(stmt.child_by_field_name("condition")?);
    let inner = cond.trim().strip_prefix('(')?.strip_suffix(')')?.trim();
    inner.strip_prefix("!(")?.strip_suffix(')')
}

fn present_plan(pkg: &Sources, file: &str, parsed: &Parsed<'_>, k: &KLoop<'_>) -> Option<Plan> {
    let text = parsed.text;
    let flag = parsed.src(k.flag);
    if !mentions(parsed, k.flag, &k.var) || text.contains("SetAtomic") {
        return None;
    }
    let block = k
        .for_node
        .parent()
        .filter(|p| p.kind() == "compound_statement")?;
    let stmts = syntax::block_statements(block);
    let at = stmts.iter().position(|s| s.id() == k.for_node.id())?;
    // The allocation before the loop, nothing in between touching it.
    let alloc_at = stmts[..at]
        .iter()
        .rposition(|s| syntax::declares(parsed, *s, &k.tensor))?;
    if !is_float_alloc(parsed, stmts[alloc_at], &k.tensor)
        || stmts[alloc_at + 1..at]
            .iter()
            .any(|s| mentions(parsed, *s, &k.tensor))
    {
        return None;
    }
    // The drain after the loop.
    let free_at = at
        + 1
        + stmts[at + 1..]
            .iter()
            .position(|s| frees(parsed, *s, &k.tensor))?;
    let drain = &stmts[at + 1..=free_at];
    if !drains(parsed, drain, &k.tensor) {
        return None;
    }
    let body = syntax::for_body(k.for_node)?;
    let body_stmts = syntax::block_statements(body);
    let first_in_body = body_stmts.first()?;
    let outer = syntax::indent_at(text, k.for_node.start_byte());
    let inner = syntax::indent_at(text, first_in_body.start_byte());
    let alloc = stmts[alloc_at];
    let moved_drain = moved_lines(text, drain[0], drain[drain.len() - 1], &outer, &inner);
    let moved_drain = framed_fixpipe(&moved_drain, flag, leading);
    let body_close = body.end_byte() - 1;
    let close_line = syntax::line_range(text, body_close..body_close).start;
    let edits: Vec<(Range<usize>, String)> = vec![
        (syntax::line_range(text, alloc.byte_range()), String::new()),
        (
            syntax::line_range(text, first_in_body.byte_range()).start
                ..syntax::line_range(text, first_in_body.byte_range()).start,
            format!("{inner}{}\n", parsed.src(alloc)),
        ),
        (k.flag.byte_range(), "true".to_string()),
        (close_line..close_line, moved_drain),
        (
            syntax::line_range(
                text,
                drain[0].start_byte()..drain[drain.len() - 1].end_byte(),
            ),
            String::new(),
        ),
    ];
    let site = site_at::<L0cAccumulate>(
        file,
        text,
        k.for_node.byte_range(),
        SiteState::Present,
        format!(
            "Mmad into {} accumulates across the K loop (init flag {flag}), one Fixpipe after it",
            k.tensor
        ),
    );
    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

fn absent_plan(pkg: &Sources, file: &str, parsed: &Parsed<'_>, k: &KLoop<'_>) -> Option<Plan> {
    let text = parsed.text;
    if parsed.src(k.flag).trim() != "true" || !syntax::in_block(k.for_node) {
        return None;
    }
    let body = syntax::for_body(k.for_node)?;
    let stmts = syntax::block_statements(body);
    let compute_at = stmts.iter().position(|s| s.id() == k.compute.id())?;
    let alloc_at = stmts[..compute_at]
        .iter()
        .position(|s| syntax::declares(parsed, *s, &k.tensor))?;
    if !is_float_alloc(parsed, stmts[alloc_at], &k.tensor)
        || !frees(parsed, *stmts.last()?, &k.tensor)
    {
        return None;
    }
    let drain_at = compute_at
        + 1
        + stmts[compute_at + 1..]
            .iter()
            .position(|s| mentions(parsed, *s, &k.tensor) || frame_flag(parsed, *s).is_some())?;
    let drain = &stmts[drain_at..];
    let frames: Vec<Node<'_>> = drain
        .iter()
        .copied()
        .filter(|s| frame_flag(parsed, *s).is_some())
        .collect();
    let flag = frame_flag(parsed, *frames.first()?)?;
    if frames.len() != 2 || frames.iter().any(|f| frame_flag(parsed, *f) != Some(flag)) {
        return None;
    }
    if !flag.contains(&k.var) || !drains(parsed, drain, &k.tensor) {
        return None;
    }
    // The drain without its frames, de-indented to the loop's level.
    let outer = syntax::indent_at(text, k.for_node.start_byte());
    let inner = syntax::indent_at(text, stmts[0].start_byte());
    let mut moved = String::new();
    for s in drain.iter().filter(|s| frame_flag(parsed, **s).is_none()) {
        moved.push_str(&moved_lines(text, *s, *s, &inner, &outer));
    }
    let alloc = stmts[alloc_at];
    let loop_lines = syntax::line_range(text, k.for_node.byte_range());
    let mut edits: Vec<(Range<usize>, String)> = vec![
        (
            loop_lines.start..loop_lines.start,
            format!("{outer}{}\n", parsed.src(alloc)),
        ),
        (syntax::line_range(text, alloc.byte_range()), String::new()),
        (k.flag.byte_range(), flag.to_string()),
        (
            syntax::line_range(
                text,
                drain[0].start_byte()..drain[drain.len() - 1].end_byte(),
            ),
            String::new(),
        ),
        (loop_lines.end..loop_lines.end, moved),
    ];
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let site = site_at::<L0cAccumulate>(
        file,
        text,
        k.for_node.byte_range(),
        SiteState::Absent,
        format!(
            "every K step initialises {} and sends a Fixpipe out (atomic add after {flag})",
            k.tensor
        ),
    );
    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

impl Engine for L0cAccumulate {
    const TAG: &'static str = "l0c_accumulate";
    const FAMILY: &'static str = "memory";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Accumulate the K loop in L0C (cmatrixInitVal only on the first K step) and Fixpipe each output tile once",
            bottleneck: "every K step sends its partial product out of L0C (one Fixpipe per step, atomic add in GM): the FIX pipe and GM traffic grow with K / baseK and the Mmad of the next step waits for the single L0C buffer",
            reuse_when: "a cube kernel's K loop initialises L0C on every step and accumulates the partial products outside L0C (atomic add, or a vector add of Fixpipe outputs)",
            avoid_when: "the output needs the partial sums themselves, or the tile does not fit L0C (128 KB) in float",
            expected_effect: "one Fixpipe per output tile instead of one per K step: the FIX time and the output's GM writes shrink by the number of K steps",
            keywords: &["L0C", "CO1", "accumulate", "cmatrixInitVal", "Mmad", "Fixpipe", "K loop", "SetAtomicAdd", "cube", "partial sums"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            if !text.contains("Mmad") {
                continue;
            }
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            for k in k_loops(&parsed) {
                out.extend(present_plan(pkg, file, &parsed, &k));
                out.extend(absent_plan(pkg, file, &parsed, &k));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{snapshot_diff, Motif};
    use expect_test::expect;

    /// A cube kernel's tile function written for the test: the K loop
    /// calls a compute function that runs the Mmad.
    const VIA_CALL: &str = r#"class KernelMm {
    __aicore__ inline void ComputeTile(uint32_t m0, uint32_t n0, uint32_t mc, uint32_t nc)
    {
        LocalTensor<float> acc = qC.AllocTensor<float>();
        uint32_t steps = (k + baseK - 1) / baseK;
        for (uint32_t s = 0; s < steps; s++) {
            uint32_t kc = k - s * baseK < baseK ? k - s * baseK : baseK;
            CopyIn(m0, n0, s * baseK, mc, nc, kc);
            Split(mc, nc, kc);
            Compute(acc, mc, nc, kc, s == 0);
        }
        qC.EnQue(acc);
        acc = qC.DeQue<float>();
        FixpipeParamsV220 fp;
        fp.nSize = nc;
        fp.mSize = mc;
        Fixpipe(cGm[m0 * n + n0], acc, fp);
        qC.FreeTensor(acc);
    }
    __aicore__ inline void Compute(LocalTensor<float>& dst, uint32_t mc, uint32_t nc, uint32_t kc, bool first)
    {
        LocalTensor<half> a2 = qA2.DeQue<half>();
        LocalTensor<half> b2 = qB2.DeQue<half>();
        MmadParams mp;
        mp.m = mc;
        mp.n = nc;
        mp.k = kc;
        mp.cmatrixInitVal = first;
        Mmad(dst, a2, b2, mp);
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
    }
};
"#;

    #[test]
    fn the_k_loop_sends_every_step_out_and_back_into_l0c() {
        let strong = Sources::from_files([("op_kernel/mm.cpp", VIA_CALL)]);
        let sites = L0cAccumulate.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!((sites[0].line, sites[0].state), (6, SiteState::Present));
        let weak = L0cAccumulate.remove(&strong, &sites[0]).unwrap();
        expect![[r#"
            --- a/op_kernel/mm.cpp
            +++ b/op_kernel/mm.cpp
            @@ -1,21 +1,23 @@
             class KernelMm {
                 __aicore__ inline void ComputeTile(uint32_t m0, uint32_t n0, uint32_t mc, uint32_t nc)
                 {
            -        LocalTensor<float> acc = qC.AllocTensor<float>();
                     uint32_t steps = (k + baseK - 1) / baseK;
                     for (uint32_t s = 0; s < steps; s++) {
            +            LocalTensor<float> acc = qC.AllocTensor<float>();
                         uint32_t kc = k - s * baseK < baseK ? k - s * baseK : baseK;
                         CopyIn(m0, n0, s * baseK, mc, nc, kc);
                         Split(mc, nc, kc);
            -            Compute(acc, mc, nc, kc, s == 0);
            +            Compute(acc, mc, nc, kc, true);
            +            qC.EnQue(acc);
            +            acc = qC.DeQue<float>();
            +            FixpipeParamsV220 fp;
            +            fp.nSize = nc;
            +            fp.mSize = mc;
            +            if (!(s == 0)) { SetAtomicAdd<float>(); }
            +            Fixpipe(cGm[m0 * n + n0], acc, fp);
            +            if (!(s == 0)) { SetAtomicNone(); }
            +            qC.FreeTensor(acc);
                     }
            -        qC.EnQue(acc);
            -        acc = qC.DeQue<float>();
            -        FixpipeParamsV220 fp;
            -        fp.nSize = nc;
            -        fp.mSize = mc;
            -        Fixpipe(cGm[m0 * n + n0], acc, fp);
            -        qC.FreeTensor(acc);
                 }
                 __aicore__ inline void Compute(LocalTensor<float>& dst, uint32_t mc, uint32_t nc, uint32_t kc, bool first)
                 {
        "#]]
        .assert_eq(&snapshot_diff(&strong, &weak));
        let absent = L0cAccumulate.detect(&weak);
        assert_eq!(absent.len(), 1, "{absent:?}");
        assert_eq!(absent[0].state, SiteState::Absent);
        let back = L0cAccumulate.apply(&weak, &absent[0]).unwrap();
        // Back to the strong kernel, the allocation right before the loop.
        expect![[r#"
            --- a/op_kernel/mm.cpp
            +++ b/op_kernel/mm.cpp
            @@ -1,8 +1,8 @@
             class KernelMm {
                 __aicore__ inline void ComputeTile(uint32_t m0, uint32_t n0, uint32_t mc, uint32_t nc)
                 {
            -        LocalTensor<float> acc = qC.AllocTensor<float>();
                     uint32_t steps = (k + baseK - 1) / baseK;
            +        LocalTensor<float> acc = qC.AllocTensor<float>();
                     for (uint32_t s = 0; s < steps; s++) {
                         uint32_t kc = k - s * baseK < baseK ? k - s * baseK : baseK;
                         CopyIn(m0, n0, s * baseK, mc, nc, kc);
        "#]].assert_eq(&snapshot_diff(&strong, &back));
    }

    /// The Mmad inside the K loop itself.
    const DIRECT: &str = r#"void Tile(uint32_t mc, uint32_t nc)
{
    LocalTensor<float> c1 = qC.AllocTensor<float>();
    for (uint32_t s = 0; s < steps; s++) {
        LocalTensor<half> a2 = qA2.DeQue<half>();
        LocalTensor<half> b2 = qB2.DeQue<half>();
        MmadParams mp;
        mp.m = mc;
        mp.n = nc;
        mp.k = baseK;
        mp.cmatrixInitVal = (s == 0);
        Mmad(c1, a2, b2, mp);
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
    }
    qC.EnQue(c1);
    c1 = qC.DeQue<float>();
    FixpipeParamsV220 fp;
    Fixpipe(cGm, c1, fp);
    qC.FreeTensor(c1);
}
"#;

    #[test]
    fn an_mmad_in_the_loop_body_round_trips_too() {
        let strong = Sources::from_files([("op_kernel/mm.cpp", DIRECT)]);
        let sites = L0cAccumulate.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        let weak = L0cAccumulate.remove(&strong, &sites[0]).unwrap();
        expect![[r#"
            --- a/op_kernel/mm.cpp
            +++ b/op_kernel/mm.cpp
            @@ -1,21 +1,23 @@
             void Tile(uint32_t mc, uint32_t nc)
             {
            -    LocalTensor<float> c1 = qC.AllocTensor<float>();
                 for (uint32_t s = 0; s < steps; s++) {
            +        LocalTensor<float> c1 = qC.AllocTensor<float>();
                     LocalTensor<half> a2 = qA2.DeQue<half>();
                     LocalTensor<half> b2 = qB2.DeQue<half>();
                     MmadParams mp;
                     mp.m = mc;
                     mp.n = nc;
                     mp.k = baseK;
            -        mp.cmatrixInitVal = (s == 0);
            +        mp.cmatrixInitVal = true;
                     Mmad(c1, a2, b2, mp);
                     qA2.FreeTensor(a2);
                     qB2.FreeTensor(b2);
            +        qC.EnQue(c1);
            +        c1 = qC.DeQue<float>();
            +        FixpipeParamsV220 fp;
            +        if (!((s == 0))) { SetAtomicAdd<float>(); }
            +        Fixpipe(cGm, c1, fp);
            +        if (!((s == 0))) { SetAtomicNone(); }
            +        qC.FreeTensor(c1);
                 }
            -    qC.EnQue(c1);
            -    c1 = qC.DeQue<float>();
            -    FixpipeParamsV220 fp;
            -    Fixpipe(cGm, c1, fp);
            -    qC.FreeTensor(c1);
             }
        "#]]
        .assert_eq(&snapshot_diff(&strong, &weak));
        let absent = L0cAccumulate.detect(&weak);
        assert_eq!(absent.len(), 1, "{absent:?}");
        let back = L0cAccumulate.apply(&weak, &absent[0]).unwrap();
        assert_eq!(back.get("op_kernel/mm.cpp"), Some(DIRECT));
    }

    #[test]
    fn a_half_tile_a_quantising_fixpipe_or_atomic_code_gives_no_site() {
        let half = VIA_CALL.replace(
            "LocalTensor<float> acc = qC.AllocTensor<float>();",
            "LocalTensor<half> acc = qC.AllocTensor<half>();",
        );
        let quant = VIA_CALL.replace(
            "fp.mSize = mc;",
            "fp.mSize = mc;\n        fp.quantPre = QuantMode_t::F322F16;",
        );
        let atomic = VIA_CALL.replace(
            "qC.FreeTensor(acc);\n    }",
            "qC.FreeTensor(acc);\n        SetAtomicNone();\n    }",
        );
        let touched = VIA_CALL.replace(
            "uint32_t steps = (k + baseK - 1) / baseK;",
            "Duplicate(acc, 0.0f, 256);",
        );
        for text in [half, quant, atomic, touched] {
            let sites =
                L0cAccumulate.detect(&Sources::from_files([("op_kernel/mm.cpp", text.as_str())]));
            assert!(sites.is_empty(), "{sites:?}\n{text}");
        }
    }
}
