//! Fused vector instructions: one vector-scalar op (`Muls`, `Adds`,
//! `Maxs`, `Mins`) or one `Axpy` in place of a longer sequence.
//!
//! - remove: `Muls(d, s, k, n)` becomes `Duplicate(d, k, n); Mul(d, s, d, n);`
//!   (the scalar broadcast into the destination, then the tensor-tensor
//!   op), likewise Adds → Add, Maxs → Max, Mins → Min. It declines when the
//!   destination may alias the source (in-place calls, or parameters that
//!   some caller passes the same tensor for), and when the destination is
//!   not a plain tensor name (`buf[i]`, `buf.Get<T>()`: the application
//!   fuses only a Duplicate into a name, so it could not be undone).
//! - apply: a broadcast `Duplicate(a, k, n)` whose tile feeds vector ops
//!   anywhere later in its block (`Mul|Add|Max|Min`, `Sub` or `Div` with
//!   `a` as one operand) becomes the vector-scalar form of each, and the
//!   Duplicate goes (preconditions at `fuse_duplicate`); `Muls(t, x, k, n);
//!   Add(d, d, t, n);` with `t` a scratch tensor becomes `Axpy(d, x, k, n)`;
//!   pairs with one fused instruction (`Mul`+`Add` → `FusedMulAdd` or
//!   `MulAddDst`, `Reciprocal`+`Mul` → `Div`, `Muls(-1)`+`Add` → `Sub`)
//!   become it (`fuse_pair`). All fusions of a package also come as one
//!   candidate.

use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, Site, SiteState, Sources};
use tree_sitter::Node;

/// Fused vector-scalar instructions.
pub struct FusedVecOps;

const PAIRS: [(&str, &str); 4] = [
    ("Muls", "Mul"),
    ("Adds", "Add"),
    ("Maxs", "Max"),
    ("Mins", "Min"),
];

/// True when the tensors `a` and `b` of a call may be the same memory.
pub(crate) fn may_alias(parsed: &Parsed<'_>, call: &Call<'_>, a: Node<'_>, b: Node<'_>) -> bool {
    let (Some(ra), Some(rb)) = (
        syntax::tensor_root(parsed, a),
        syntax::tensor_root(parsed, b),
    ) else {
        return true;
    };
    if ra == rb {
        return true;
    }
    let Some(func) = syntax::enclosing_function(call.node) else {
        return true;
    };
    let params = parameter_names(parsed, func);
    let (Some(ia), Some(ib)) = (
        params.iter().position(|p| *p == ra),
        params.iter().position(|p| *p == rb),
    ) else {
        return false;
    };
    let Some(name) = syntax::function_name(parsed, func) else {
        return true;
    };
    let short = name.rsplit("::").next().unwrap_or(name);
    parsed
        .calls()
        .iter()
        .filter(|c| c.name == short && c.args.len() == params.len())
        .any(|c| syntax::tensor_root(parsed, c.args[ia]) == syntax::tensor_root(parsed, c.args[ib]))
}

/// The parameter names of a function definition, in order.
pub(crate) fn parameter_names<'a>(parsed: &Parsed<'a>, func: Node<'_>) -> Vec<&'a str> {
    let mut decl = func.child_by_field_name("declarator");
    while let Some(d) = decl {
        if d.kind() == "function_declarator" {
            let Some(list) = d.child_by_field_name("parameters") else {
                return Vec::new();
            };
            return syntax::named_children(list)
                .into_iter()
                .filter_map(|p| {
                    p.child_by_field_name("declarator")
                        .and_then(|x| syntax::declared_name(parsed, x))
                })
                .collect();
        }
        decl = d.child_by_field_name("declarator");
    }
    Vec::new()
}

/// True when the identifier `name` occurs in `func` only inside the given
/// statements and its own declaration.
pub(crate) fn only_used_in(
    parsed: &Parsed<'_>,
    func: Node<'_>,
    name: &str,
    stmts: &[Node<'_>],
) -> bool {
    for n in syntax::descendants(func) {
        if n.kind() != "identifier" || parsed.src(n) != name {
            continue;
        }
        if stmts.iter().any(|s| syntax::within(n, *s)) {
            continue;
        }
        let in_decl = syntax::ancestor(n, &["declaration"])
            .is_some_and(|d| syntax::declares(parsed, d, name));
        let is_declarator = n
            .parent()
            .is_some_and(|p| p.kind() == "init_declarator" || p.kind() == "declaration");
        if in_decl && is_declarator {
            continue;
        }
        return false;
    }
    true
}

impl Engine for FusedVecOps {
    const TAG: &'static str = "fused_vec_ops";
    const FAMILY: &'static str = "vector";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Use fused vector instructions (Muls/Adds/Maxs/Mins for a broadcast scalar, Axpy, FusedMulAdd, MulAddDst, Div for Reciprocal+Mul) instead of separate ops",
            bottleneck: "extra vector instructions: a scalar is broadcast with Duplicate into a tile just to feed a tensor-tensor Mul/Add/Max/Min, or a product is written to scratch and added back; vector busy time and instruction count grow",
            reuse_when: "a Duplicate of a scalar feeds exactly one binary op (or a Muls feeds one Add), and the broadcast tile is not needed elsewhere",
            avoid_when: "the broadcast tile is reused by many ops across the loop (hoist it instead), or the scalar differs per element",
            expected_effect: "one instruction instead of two per tile, and vector-scalar ops are cheaper per repeat (about 0.9 vs 1.3 cycles for f32): a few percent to ~20% on vector-bound kernels",
            keywords: &["Muls", "Adds", "Maxs", "Mins", "Axpy", "Duplicate", "fused op", "vector-scalar", "instruction count", "vector bound"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut out = site_plans(pkg);
        // Every fusion of the file at once: one of several broadcasts
        // saves too little to show beyond noise, all of them together do.
        let fusions = out
            .iter()
            .filter(|p| p.site.state == SiteState::Absent && p.output.is_some())
            .count();
        if fusions >= 2 {
            let first = out
                .iter()
                .find(|p| p.site.state == SiteState::Absent && p.output.is_some())
                .map(|p| p.site.clone());
            let mut cur = pkg.clone();
            let mut done = 0;
            for _ in 0..32 {
                let next = site_plans(&cur)
                    .into_iter()
                    .find(|p| p.site.state == SiteState::Absent && p.output.is_some())
                    .and_then(|p| p.output);
                match next {
                    Some(n) if n != cur => {
                        cur = n;
                        done += 1;
                    }
                    _ => break,
                }
            }
            if let (Some(first), true) = (first, done >= 2) {
                let site = Site {
                    span: (0, 0),
                    line: 1,
                    note: format!("all {done} fusions of the package"),
                    ..first
                };
                out.push(Plan {
                    site,
                    output: Some(cur),
                });
            }
        }
        out
    }
}

/// Every single-site plan of the motif.
fn site_plans(pkg: &Sources) -> Vec<Plan> {
    {
        let mut out = Vec::new();
        for (file, text) in pkg.kernel_files() {
            let Some(parsed) = Parsed::new(text) else {
                continue;
            };
            let calls = parsed.calls();
            for call in &calls {
                let Some(stmt) = call.statement() else {
                    continue;
                };
                if let Some((_, binary)) = PAIRS.iter().find(|(s, _)| *s == call.name) {
                    if call.args.len() != 4 {
                        continue;
                    }
                    out.push(removal(pkg, file, &parsed, call, stmt, binary));
                } else if call.name == "Duplicate" && call.args.len() == 3 {
                    if let Some(plan) = fuse_duplicate(pkg, file, &parsed, call, stmt) {
                        out.push(plan);
                    }
                }
                if call.name == "Muls" && call.args.len() == 4 {
                    if let Some(plan) = fuse_axpy(pkg, file, &parsed, call, stmt) {
                        out.push(plan);
                    }
                }
                if let Some(plan) = fuse_pair(pkg, file, &parsed, call, stmt) {
                    out.push(plan);
                }
                if call.name == "FusedMulAdd" {
                    if let Some(plan) = unfuse_fma(pkg, file, &parsed, call, stmt) {
                        out.push(plan);
                    }
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
    call: &Call<'_>,
    stmt: Node<'_>,
    binary: &str,
) -> Plan {
    let text = parsed.text;
    let a = syntax::arg_texts(parsed, call);
    let aliased = may_alias(parsed, call, call.args[0], call.args[1]);
    // The application only fuses a Duplicate into a plain tensor name: a
    // removal into `buf[i]` or `buf.Get<T>()` could not be undone.
    let plain = call.args[0].kind() == "identifier";
    let site = site_at::<FusedVecOps>(
        file,
        text,
        stmt.byte_range(),
        SiteState::Present,
        format!(
            "{}{}",
            parsed.src(stmt),
            if aliased {
                " (destination may alias the source: removal declines)"
            } else if !plain {
                " (destination is not a plain tensor name: removal declines)"
            } else {
                ""
            }
        ),
    );
    let output = (!aliased && plain)
        .then(|| {
            let indent = syntax::indent_at(text, stmt.start_byte());
            let (open, close) = if syntax::in_block(stmt) {
                ("", "")
            } else {
                ("{ ", " }")
            };
            let new = format!(
                "{open}Duplicate({d}, {k}, {n});\n{indent}{binary}({d}, {s}, {d}, {n});{close}",
                d = a[0],
                s = a[1],
                k = a[2],
                n = a[3]
            );
            syntax::apply_edits(text, &[(stmt.byte_range(), new)])
        })
        .flatten()
        .map(|t| with_file(pkg, file, t));
    Plan { site, output }
}

/// The statement right after `stmt` in its block.
pub(crate) fn next_statement(stmt: Node<'_>) -> Option<Node<'_>> {
    let mut next = stmt.next_named_sibling();
    while let Some(n) = next {
        if n.kind() != "comment" {
            return Some(n);
        }
        next = n.next_named_sibling();
    }
    None
}

/// Deletes `first` (with its line when alone on it) and replaces `second`.
fn fuse_edit(text: &str, first: Node<'_>, second: Node<'_>, new: String) -> Option<String> {
    let r = first.byte_range();
    let del = if syntax::alone_on_lines(text, r.clone()) {
        syntax::line_range(text, r)
    } else {
        r
    };
    syntax::apply_edits(text, &[(del, String::new()), (second.byte_range(), new)])
}

/// True when `node` mentions the identifier `name` (as an identifier or a
/// field).
fn mentions(parsed: &Parsed<'_>, node: Node<'_>, name: &str) -> bool {
    syntax::descendants(node).into_iter().any(|n| {
        (n.kind() == "identifier" || n.kind() == "field_identifier") && parsed.src(n) == name
    })
}

/// The next statement of the block after `stmt` that mentions any of
/// `names` (statements that mention none of them are skipped over).
fn next_mentioning<'t>(parsed: &Parsed<'_>, stmt: Node<'t>, names: &[&str]) -> Option<Node<'t>> {
    let mut cur = stmt;
    while let Some(n) = next_statement(cur) {
        if names.iter().any(|x| mentions(parsed, n, x)) {
            return Some(n);
        }
        cur = n;
    }
    None
}

/// True when the occurrence `o` of `name` is the destination of a vector
/// call whose other arguments do not mention `name` (a write that ends
/// the previous value).
fn is_pure_write(parsed: &Parsed<'_>, o: Node<'_>, name: &str) -> bool {
    let Some(stmt) = syntax::ancestor(o, &["expression_statement"]) else {
        return false;
    };
    let Some(call) = syntax::statement_call(parsed, stmt) else {
        return false;
    };
    syntax::is_vector_op(&call.name)
        && call.args.first().is_some_and(|d| {
            d.kind() == "identifier" && parsed.src(*d) == name && syntax::within(o, *d)
        })
        && call.args[1..].iter().all(|x| !mentions(parsed, *x, name))
}

/// True when no code outside `stmt.start .. keep_end` can read the value
/// `stmt` gives `name`: the scope is the function when the name is
/// declared there, else the whole file. Earlier uses in the function are
/// other values, unless a loop around `stmt` carries this one to them:
/// then the first use in the loop body must be a write.
fn dead_outside(parsed: &Parsed<'_>, stmt: Node<'_>, name: &str, keep_end: usize) -> bool {
    let Some(func) = syntax::enclosing_function(stmt) else {
        return false;
    };
    let local = syntax::declared_names(parsed, func).contains(&name);
    let scope = if local { func } else { parsed.root() };
    let looped = syntax::ancestor(stmt, &["for_statement", "while_statement", "do_statement"])
        .filter(|l| syntax::within(*l, func));
    let occurrences: Vec<Node<'_>> = syntax::descendants(scope)
        .into_iter()
        .filter(|n| {
            (n.kind() == "identifier" || n.kind() == "field_identifier") && parsed.src(*n) == name
        })
        .filter(|n| {
            !n.parent().is_some_and(|p| {
                matches!(
                    p.kind(),
                    "init_declarator"
                        | "declaration"
                        | "field_declaration"
                        | "reference_declarator"
                )
            })
        })
        .collect();
    let first_in_loop_writes = looped.is_none_or(|l| {
        occurrences
            .iter()
            .find(|o| syntax::within(**o, l))
            .is_none_or(|o| is_pure_write(parsed, *o, name))
    });
    occurrences.iter().all(|o| {
        let at = o.start_byte();
        if (stmt.start_byte()..keep_end).contains(&at) {
            return true;
        }
        if at < stmt.start_byte() && syntax::within(*o, func) {
            return match looped {
                Some(l) if syntax::within(*o, l) => first_in_loop_writes,
                _ => true,
            };
        }
        false
    })
}

/// Names an expression assigns anywhere inside `node`.
fn assigned_in(parsed: &Parsed<'_>, node: Node<'_>) -> Vec<String> {
    syntax::descendants(node)
        .into_iter()
        .filter(|n| n.kind() == "assignment_expression" || n.kind() == "update_expression")
        .filter_map(|n| {
            let target = n
                .child_by_field_name("left")
                .or_else(|| n.child_by_field_name("argument"))?;
            let leaf = syntax::descendants(target)
                .into_iter()
                .rev()
                .find(|x| x.kind() == "identifier" || x.kind() == "field_identifier")?;
            Some(parsed.src(leaf).to_string())
        })
        .collect()
}

/// True for a float literal or name that is exactly one (`1`, `1.0f`).
fn is_one(k: &str) -> bool {
    let t = k.trim().trim_end_matches(['f', 'F']);
    t == "1" || t == "1.0" || t == "1." || t == "1.0e0"
}

/// True for a literal minus one.
fn is_minus_one(k: &str) -> bool {
    k.trim().strip_prefix('-').is_some_and(is_one)
}

/// A broadcast `Duplicate(a, k, n)` whose tile feeds vector ops anywhere
/// later in its block: each op that reads `a` as one operand becomes the
/// vector-scalar form (`Mul → Muls`, `Add → Adds`, `Max → Maxs`, `Min →
/// Mins`, `Sub(d, x, a) → Adds(d, x, -k)`, `Div(d, x, a) → Muls(d, x, 1/k)`
/// for floats, `Div(d, a, x)` with `k` one → `Reciprocal`), and the
/// Duplicate goes. Preconditions: `a` is a plain tensor name; every use of
/// `a` until the next write of it is such an op with the same count; `a`
/// is not used elsewhere in its scope; nothing in between assigns a name
/// `k` uses.
fn fuse_duplicate(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    dup: &Call<'_>,
    stmt: Node<'_>,
) -> Option<Plan> {
    if !syntax::in_block(stmt) || dup.args[0].kind() != "identifier" {
        return None;
    }
    let text = parsed.text;
    let a = parsed.src(dup.args[0]);
    let k = parsed.src(dup.args[1]);
    let n = parsed.src(dup.args[2]);
    let k_names: Vec<&str> = syntax::identifiers(parsed, dup.args[1]);
    let k_fields: Vec<&str> = syntax::descendants(dup.args[1])
        .into_iter()
        .filter(|x| x.kind() == "field_identifier")
        .map(|x| parsed.src(x))
        .collect();
    let del = {
        let r = stmt.byte_range();
        if syntax::alone_on_lines(text, r.clone()) {
            syntax::line_range(text, r)
        } else {
            r
        }
    };
    let mut edits: Vec<(std::ops::Range<usize>, String)> = vec![(del, String::new())];
    let mut notes: Vec<String> = Vec::new();
    let mut cur = stmt;
    let mut end = stmt.end_byte();
    let mut killed = false;
    while let Some(t) = next_statement(cur) {
        cur = t;
        // Nothing in the range may change the broadcast value.
        if assigned_in(parsed, t)
            .iter()
            .any(|x| k_names.contains(&x.as_str()) || k_fields.contains(&x.as_str()))
        {
            return None;
        }
        if !mentions(parsed, t, a) {
            continue;
        }
        let op = syntax::statement_call(parsed, t)?;
        let args = syntax::arg_texts(parsed, &op);
        if !syntax::is_vector_op(&op.name) {
            return None;
        }
        if args.first() == Some(&a) && (1..args.len()).all(|i| !mentions(parsed, op.args[i], a)) {
            // Overwritten: the broadcast is dead from here.
            killed = true;
            break;
        }
        if args.len() != 4 {
            return None;
        }
        let (d, s0, s1, m) = (args[0], args[1], args[2], args[3]);
        let reads = (s0 == a) as u8 + (s1 == a) as u8;
        if reads == 0 {
            // Written (not read): the broadcast is dead from here.
            if d == a && !(1..args.len()).any(|i| mentions(parsed, op.args[i], a)) {
                killed = true;
                break;
            }
            return None;
        }
        let nested = (1..3).any(|i| args[i] != a && mentions(parsed, op.args[i], a));
        if reads != 1 || m != n || nested {
            return None;
        }
        let other = if s0 == a { s1 } else { s0 };
        let ty = syntax::elem_type_of(parsed, op.args[0]).unwrap_or("");
        let float = matches!(
            ty,
            "float" | "half" | "bfloat16_t" | "T" | "DTYPE_X" | "DTYPE_Y"
        );
        let new = match (op.name.as_str(), s1 == a) {
            ("Mul", _) => format!("Muls({d}, {other}, {k}, {m});"),
            ("Add", _) => format!("Adds({d}, {other}, {k}, {m});"),
            ("Max", _) => format!("Maxs({d}, {other}, {k}, {m});"),
            ("Min", _) => format!("Mins({d}, {other}, {k}, {m});"),
            ("Sub", true) => format!("Adds({d}, {other}, {}, {m});", negate(k)),
            ("Div", true) if float && !ty.is_empty() => format!(
                "Muls({d}, {other}, static_cast<{ty}>(1.0f / static_cast<float>({k})), {m});"
            ),
            ("Div", false) if is_one(k) => format!("Reciprocal({d}, {other}, {m});"),
            _ => return None,
        };
        notes.push(format!(
            "{} at line {}",
            op.name,
            syntax::line_of(text, t.start_byte())
        ));
        edits.push((t.byte_range(), new));
        end = t.end_byte();
        if d == a {
            killed = true;
            break;
        }
    }
    if notes.is_empty() {
        return None;
    }
    // Once the tile is overwritten, later uses see another value: only
    // uses before the Duplicate (a loop's earlier statements) or in other
    // functions could still read this one.
    if killed {
        end = syntax::enclosing_function(stmt)?.end_byte();
    }
    if !dead_outside(parsed, stmt, a, end) {
        return None;
    }
    let site = site_at::<FusedVecOps>(
        file,
        text,
        stmt.byte_range(),
        SiteState::Absent,
        format!("{} feeds {}", parsed.src(stmt), notes.join(", ")),
    );
    let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

/// Pairs of vector ops with one fused instruction (the first op's result
/// used by the second only):
/// - `Mul(d, d, a); Add(d, d, b)` → `FusedMulAdd(d, a, b)` (d = a·d + b);
/// - `Mul(t, a, b); Add(d, d, t)` → `MulAddDst(d, a, b)` (d = a·b + d);
/// - `Reciprocal(t, a); Mul(d, x, t)` → `Div(d, x, a)`;
/// - `Muls(t, a, -1); Add(d, x, t)` → `Sub(d, x, a)`.
///
/// The second op is the next statement of the block that mentions any of
/// the tensors involved; the counts are the same text.
fn fuse_pair(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    first: &Call<'_>,
    stmt: Node<'_>,
) -> Option<Plan> {
    if !syntax::in_block(stmt) {
        return None;
    }
    let text = parsed.text;
    let f = syntax::arg_texts(parsed, first);
    let (kind, involved): (&str, Vec<&str>) = match (first.name.as_str(), f.len()) {
        ("Mul", 4) if (f[0] == f[1]) != (f[0] == f[2]) => ("fma", vec![f[0], f[1], f[2]]),
        ("Mul", 4) if f[0] != f[1] && f[0] != f[2] => ("muladd", vec![f[0], f[1], f[2]]),
        ("Reciprocal", 3) if f[0] != f[1] => ("div", vec![f[0], f[1]]),
        ("Muls", 4) if is_minus_one(f[2]) && f[0] != f[1] => ("sub", vec![f[0], f[1]]),
        _ => return None,
    };
    let count = *f.last()?;
    let next = next_mentioning(parsed, stmt, &involved)?;
    let second = syntax::statement_call(parsed, next)?;
    let s = syntax::arg_texts(parsed, &second);
    let fused = match kind {
        "fma" => {
            let d = f[0];
            let a = if f[1] == d { f[2] } else { f[1] };
            if second.name != "Add" || s.len() != 4 || s[3] != count || s[0] != d {
                return None;
            }
            let b = match (s[1] == d, s[2] == d) {
                (true, false) => s[2],
                (false, true) => s[1],
                _ => return None,
            };
            if b == a && a == d {
                return None;
            }
            format!("FusedMulAdd({d}, {a}, {b}, {count});")
        }
        "muladd" => {
            let t = f[0];
            if second.name != "Add" || s.len() != 4 || s[3] != count {
                return None;
            }
            let d = s[0];
            let reads_d_and_t = (s[1] == d && s[2] == t) || (s[1] == t && s[2] == d);
            if !reads_d_and_t || d == f[1] || d == f[2] || d == t {
                return None;
            }
            format!("MulAddDst({d}, {}, {}, {count});", f[1], f[2])
        }
        "div" => {
            let (t, a) = (f[0], f[1]);
            if second.name != "Mul" || s.len() != 4 || s[3] != count {
                return None;
            }
            let x = match (s[1] == t, s[2] == t) {
                (true, false) => s[2],
                (false, true) => s[1],
                _ => return None,
            };
            format!("Div({}, {x}, {a}, {count});", s[0])
        }
        _ => {
            let (t, a) = (f[0], f[1]);
            if second.name != "Add" || s.len() != 4 || s[3] != count {
                return None;
            }
            let x = match (s[1] == t, s[2] == t) {
                (true, false) => s[2],
                (false, true) => s[1],
                _ => return None,
            };
            format!("Sub({}, {x}, {a}, {count});", s[0])
        }
    };
    // A scratch result must be dead after the pair.
    if kind != "fma" {
        let t = f[0];
        if first.args[0].kind() != "identifier" || !dead_outside(parsed, stmt, t, next.end_byte()) {
            return None;
        }
    }
    let site = site_at::<FusedVecOps>(
        file,
        text,
        stmt.start_byte()..next.end_byte(),
        SiteState::Absent,
        format!("{} + {} -> {fused}", parsed.src(stmt), parsed.src(next)),
    );
    let output = fuse_edit(text, stmt, next, fused).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

/// `FusedMulAdd(d, a, b, n)` back to `Mul(d, a, d, n); Add(d, d, b, n);`.
fn unfuse_fma(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    call: &Call<'_>,
    stmt: Node<'_>,
) -> Option<Plan> {
    let a = syntax::arg_texts(parsed, call);
    if a.len() != 4 || !syntax::in_block(stmt) {
        return None;
    }
    let text = parsed.text;
    let indent = syntax::indent_at(text, stmt.start_byte());
    let new = format!(
        "Mul({d}, {x}, {d}, {n});\n{indent}Add({d}, {d}, {b}, {n});",
        d = a[0],
        x = a[1],
        b = a[2],
        n = a[3]
    );
    let site = site_at::<FusedVecOps>(
        file,
        text,
        stmt.byte_range(),
        SiteState::Present,
        parsed.src(stmt).to_string(),
    );
    let output =
        syntax::apply_edits(text, &[(stmt.byte_range(), new)]).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

fn negate(k: &str) -> String {
    if let Some(rest) = k.strip_prefix('-') {
        if rest
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            return rest.to_string();
        }
    }
    if k.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        format!("-{k}")
    } else {
        format!("-({k})")
    }
}

fn fuse_axpy(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    muls: &Call<'_>,
    stmt: Node<'_>,
) -> Option<Plan> {
    if !syntax::in_block(stmt) {
        return None;
    }
    let next = next_statement(stmt)?;
    let add = syntax::statement_call(parsed, next)?;
    if add.name != "Add" || add.args.len() != 4 {
        return None;
    }
    let m = syntax::arg_texts(parsed, muls);
    let a = syntax::arg_texts(parsed, &add);
    let (t, x, k, n) = (m[0], m[1], m[2], m[3]);
    let d = a[0];
    let reads_t_and_d = (a[1] == d && a[2] == t) || (a[1] == t && a[2] == d);
    if !reads_t_and_d || a[3] != n || t == d || x == d || x == t {
        return None;
    }
    let func = syntax::enclosing_function(stmt)?;
    if syntax::tensor_root(parsed, muls.args[0]) != Some(t)
        || !only_used_in(parsed, func, t, &[stmt, next])
    {
        return None;
    }
    let site = site_at::<FusedVecOps>(
        file,
        parsed.text,
        stmt.start_byte()..next.end_byte(),
        SiteState::Absent,
        format!("{} + {}", parsed.src(stmt), parsed.src(next)),
    );
    let new = format!("Axpy({d}, {x}, {k}, {n});");
    let output = fuse_edit(parsed.text, stmt, next, new).map(|t| with_file(pkg, file, t));
    Some(Plan { site, output })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Motif;
    use expect_test::expect;

    fn kernel(body: &str) -> Sources {
        let text = format!(
            "class K {{\n    __aicore__ inline void Compute(uint32_t length)\n    {{\n        LocalTensor<T> xLocal = inQueueX.DeQue<T>();\n        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();\n{body}\n        outQueueY.EnQue<T>(yLocal);\n    }}\n}};\n"
        );
        Sources::from_files([("op_kernel/k.cpp", text)])
    }

    #[test]
    fn muls_becomes_duplicate_and_mul_and_back() {
        let strong = kernel("        Muls(yLocal, xLocal, scalar, length);");
        let sites = FusedVecOps.detect(&strong);
        assert_eq!(sites.len(), 1);
        assert_eq!(sites[0].state, SiteState::Present);
        let weak = FusedVecOps.remove(&strong, &sites[0]).unwrap();
        assert_eq!(
            weak,
            kernel("        Duplicate(yLocal, scalar, length);\n        Mul(yLocal, xLocal, yLocal, length);")
        );
        let back_site = FusedVecOps
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        assert_eq!(FusedVecOps.apply(&weak, &back_site).unwrap(), strong);
    }

    #[test]
    fn a_call_that_is_the_whole_body_of_an_if_stays_one_statement() {
        let strong = kernel("        if (length > 0) Muls(yLocal, xLocal, scalar, length);");
        let weak = FusedVecOps
            .remove(&strong, &FusedVecOps.detect(&strong)[0])
            .unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -3,7 +3,8 @@
                 {
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
            -        if (length > 0) Muls(yLocal, xLocal, scalar, length);
            +        if (length > 0) { Duplicate(yLocal, scalar, length);
            +        Mul(yLocal, xLocal, yLocal, length); }
                     outQueueY.EnQue<T>(yLocal);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&strong, &weak));
    }

    #[test]
    fn in_place_calls_are_present_but_not_removable() {
        let strong = kernel("        Maxs(yLocal, yLocal, lower, length);");
        let sites = FusedVecOps.detect(&strong);
        assert_eq!(sites.len(), 1);
        assert!(FusedVecOps.remove(&strong, &sites[0]).is_none());
    }

    #[test]
    fn parameters_that_a_caller_aliases_are_not_removable() {
        let text = "void F(const LocalTensor<float>& a, const LocalTensor<float>& b) {\n    Muls(a, b, 2.0f, 8);\n}\nvoid G() {\n    F(t, t);\n}\n";
        let pkg = Sources::from_files([("op_kernel/k.cpp", text)]);
        let sites = FusedVecOps.detect(&pkg);
        assert!(FusedVecOps.remove(&pkg, &sites[0]).is_none());
        let ok = text.replace("F(t, t)", "F(t, u)");
        let pkg = Sources::from_files([("op_kernel/k.cpp", ok.as_str())]);
        let sites = FusedVecOps.detect(&pkg);
        assert!(FusedVecOps.remove(&pkg, &sites[0]).is_some());
    }

    #[test]
    fn a_dead_scratch_broadcast_and_a_subtraction_fuse() {
        let weak = kernel("        LocalTensor<T> k = kBuf.Get<T>();\n        Duplicate(k, bias, length);\n        Sub(yLocal, xLocal, k, length);");
        let site = FusedVecOps
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let strong = FusedVecOps.apply(&weak, &site).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,8 +4,7 @@
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
                     LocalTensor<T> k = kBuf.Get<T>();
            -        Duplicate(k, bias, length);
            -        Sub(yLocal, xLocal, k, length);
            +        Adds(yLocal, xLocal, -bias, length);
                     outQueueY.EnQue<T>(yLocal);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&weak, &strong));
        // A broadcast read by two ops: both take the scalar.
        let used = kernel("        LocalTensor<T> k = kBuf.Get<T>();\n        Duplicate(k, bias, length);\n        Sub(yLocal, xLocal, k, length);\n        Add(yLocal, yLocal, k, length);");
        let site = FusedVecOps
            .detect(&used)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let strong = FusedVecOps.apply(&used, &site).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,9 +4,8 @@
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
                     LocalTensor<T> k = kBuf.Get<T>();
            -        Duplicate(k, bias, length);
            -        Sub(yLocal, xLocal, k, length);
            -        Add(yLocal, yLocal, k, length);
            +        Adds(yLocal, xLocal, -bias, length);
            +        Adds(yLocal, yLocal, bias, length);
                     outQueueY.EnQue<T>(yLocal);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&used, &strong));
        // Read by something other than a vector op: left alone.
        let passed = kernel("        LocalTensor<T> k = kBuf.Get<T>();\n        Duplicate(k, bias, length);\n        Sub(yLocal, xLocal, k, length);\n        Helper(k);");
        assert!(FusedVecOps
            .detect(&passed)
            .iter()
            .all(|s| s.state == SiteState::Present));
    }

    #[test]
    fn broadcasts_anywhere_in_the_block_feed_scalar_forms() {
        // Both broadcasts first, uses later, barriers in between; a tile
        // reused for a second constant.
        let weak = kernel("        LocalTensor<T> lo = loBuf.Get<T>();\n        LocalTensor<T> hi = hiBuf.Get<T>();\n        Duplicate(lo, minValue, length);\n        Duplicate(hi, maxValue, length);\n        PipeBarrier<PIPE_ALL>();\n        Max(yLocal, xLocal, lo, length);\n        PipeBarrier<PIPE_ALL>();\n        Min(yLocal, yLocal, hi, length);\n        Duplicate(lo, 2.0f, length);\n        Div(yLocal, yLocal, lo, length);");
        let sites: Vec<Site> = FusedVecOps
            .detect(&weak)
            .into_iter()
            .filter(|s| s.state == SiteState::Absent)
            .collect();
        assert_eq!(sites.len(), 4, "{sites:?}");
        // All at once first, then one by one.
        assert_eq!(sites[0].note, "all 3 fusions of the package");
        let cur = FusedVecOps.apply(&weak, &sites[0]).unwrap();
        let one = FusedVecOps.apply(&weak, &sites[1]).unwrap();
        assert_eq!(
            one.get("op_kernel/k.cpp")
                .unwrap()
                .matches("Duplicate")
                .count(),
            2
        );
        // No Duplicate left: Maxs, Mins and a Muls by the reciprocal.
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -5,14 +5,11 @@
                     LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
                     LocalTensor<T> lo = loBuf.Get<T>();
                     LocalTensor<T> hi = hiBuf.Get<T>();
            -        Duplicate(lo, minValue, length);
            -        Duplicate(hi, maxValue, length);
                     PipeBarrier<PIPE_ALL>();
            -        Max(yLocal, xLocal, lo, length);
            +        Maxs(yLocal, xLocal, minValue, length);
                     PipeBarrier<PIPE_ALL>();
            -        Min(yLocal, yLocal, hi, length);
            -        Duplicate(lo, 2.0f, length);
            -        Div(yLocal, yLocal, lo, length);
            +        Mins(yLocal, yLocal, maxValue, length);
            +        Muls(yLocal, yLocal, static_cast<T>(1.0f / static_cast<float>(2.0f)), length);
                     outQueueY.EnQue<T>(yLocal);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&weak, &cur));
    }

    #[test]
    fn pairs_with_a_fused_instruction_fuse_and_unfuse() {
        let weak = kernel("        Sub(yLocal, eLocal, sLocal, length);\n        Mul(yLocal, yLocal, wLocal, length);\n        Add(yLocal, yLocal, sLocal, length);");
        let site = FusedVecOps
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let strong = FusedVecOps.apply(&weak, &site).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,8 +4,7 @@
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
                     Sub(yLocal, eLocal, sLocal, length);
            -        Mul(yLocal, yLocal, wLocal, length);
            -        Add(yLocal, yLocal, sLocal, length);
            +        FusedMulAdd(yLocal, wLocal, sLocal, length);
                     outQueueY.EnQue<T>(yLocal);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&weak, &strong));
        let back = FusedVecOps
            .detect(&strong)
            .into_iter()
            .find(|s| s.state == SiteState::Present && s.note.starts_with("FusedMulAdd"))
            .unwrap();
        let weak2 = FusedVecOps.remove(&strong, &back).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,7 +4,8 @@
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
                     Sub(yLocal, eLocal, sLocal, length);
            -        FusedMulAdd(yLocal, wLocal, sLocal, length);
            +        Mul(yLocal, wLocal, yLocal, length);
            +        Add(yLocal, yLocal, sLocal, length);
                     outQueueY.EnQue<T>(yLocal);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&strong, &weak2));
        let recip = kernel("        LocalTensor<T> t = tBuf.Get<T>();\n        Reciprocal(t, xLocal, length);\n        Mul(yLocal, yLocal, t, length);");
        let site = FusedVecOps
            .detect(&recip)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let k = FusedVecOps.apply(&recip, &site).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,8 +4,7 @@
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
                     LocalTensor<T> t = tBuf.Get<T>();
            -        Reciprocal(t, xLocal, length);
            -        Mul(yLocal, yLocal, t, length);
            +        Div(yLocal, yLocal, xLocal, length);
                     outQueueY.EnQue<T>(yLocal);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&recip, &k));
    }

    #[test]
    fn muls_then_add_becomes_axpy() {
        let weak = kernel("        LocalTensor<T> t = tBuf.Get<T>();\n        Muls(t, xLocal, alpha, length);\n        Add(yLocal, yLocal, t, length);");
        let site = FusedVecOps
            .detect(&weak)
            .into_iter()
            .find(|s| s.state == SiteState::Absent)
            .unwrap();
        let strong = FusedVecOps.apply(&weak, &site).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -4,8 +4,7 @@
                     LocalTensor<T> xLocal = inQueueX.DeQue<T>();
                     LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
                     LocalTensor<T> t = tBuf.Get<T>();
            -        Muls(t, xLocal, alpha, length);
            -        Add(yLocal, yLocal, t, length);
            +        Axpy(yLocal, xLocal, alpha, length);
                     outQueueY.EnQue<T>(yLocal);
                 }
             };
        "#]]
        .assert_eq(&crate::diff(&weak, &strong));
    }
}
