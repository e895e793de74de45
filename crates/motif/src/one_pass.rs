//! One pass over GM data instead of two: a kernel that walks the same GM
//! range twice (a reduction pass, then an elementwise pass over the same
//! row: rms/layer norm, softmax; or `x` read in two loops) copies every
//! tile in from GM twice. When the first pass ran as a single tile (the
//! row fits the tile, i.e. the UB budget the kernel gave it), the tile is
//! still in UB when the second pass starts, and the second copy is
//! redundant.
//!
//! Sites: two `for` loops `L1` and `L2` in the same block (`L1` first)
//! with the same header (up to the loop variable's name), and a GM→UB copy
//! `C2` (`DataCopy`/`DataCopyPad` statement) directly in `L2`'s body
//! whose text equals a copy `C1` directly in `L1`'s body (up to the loop
//! variable).
//!
//! Preconditions (all checked on the syntax tree):
//! - the destination is a tile of a `TBuf` (the same UB bytes on every
//!   `Get`; queue tiles rotate and are freed) and `C1`, `C2` are the only
//!   writers of that buffer in the file (no vector op, copy or `SetValue`
//!   writes it), so what `C1` left there is still there at `C2`;
//! - the GM source is written nowhere in the file (no copy or `SetValue`
//!   into it);
//! - every name `C2` uses besides the loop variable is either declared in
//!   `L2`'s body by a declaration whose text also stands in `L1`'s body
//!   (up to the loop variable), or is assigned nowhere from `L1` to the end
//!   of `L2` (nor in the functions called there); the same holds for the
//!   names of the loop header, and neither body assigns the loop variable;
//! - `L1` has no `break`, `continue`, `return` or `goto` (its copy runs in
//!   every iteration it starts).
//!
//! - apply: `L1` counts its iterations in a fresh local
//!   (`uint32_t ascPassesN = 0;` before it, `ascPassesN++;` first in its
//!   body) and `C2` runs only when that count is not one
//!   (`if (ascPassesN != 1) { C2 }`): with one iteration `L2` has one too,
//!   at the same loop value, so the tile holds exactly what `C2` would
//!   copy. Rows longer than the tile keep both passes; growing the tile
//!   (`tile_size`, Stage II) then makes them one.
//! - remove: the guard goes (the copy runs again on every iteration) and
//!   the counter with it.
//!
//! The straight-line form, within one block: a GM→UB copy `C` followed
//! later by the same copy again (apply: the second one goes), or by a
//! second vector op reading the tile (remove: the data is copied in again
//! before it, between two `PIPE_ALL` barriers), when nothing between
//! writes the tile's buffer or hands the tile to anything but a vector op
//! or a copy, nothing writes the GM source and no name of `C` is
//! assigned.
//!
//! These sites belong to `hoist_invariant` (GM data loaded once, like
//! [`super::load_once`]): the strong built-in kernels copy in their stage
//! function and compute in another, through queues, so a motif of its
//! own would have no removal there for Rewind to learn from.

use super::hoist::buffer_of;
use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, Plan, SiteState, Sources};
use tree_sitter::Node;

/// The counter's name stem.
const COUNTER: &str = "ascPasses";

/// The text of `node` with every identifier `from` spelled `to` (the loop
/// variable renamed), whitespace runs folded to one space.
fn renamed(parsed: &Parsed<'_>, node: Node<'_>, from: &str, to: &str) -> String {
    let base = node.start_byte();
    let text = parsed.src(node);
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for id in syntax::descendants(node) {
        if id.kind() == "identifier" && parsed.src(id) == from {
            let (s, e) = (id.start_byte() - base, id.end_byte() - base);
            if s < pos {
                continue;
            }
            out.push_str(&text[pos..s]);
            out.push_str(to);
            pos = e;
        }
    }
    out.push_str(&text[pos..]);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The names `node` uses: identifiers and the fields of `this->field`.
fn names<'a>(parsed: &Parsed<'a>, node: Node<'_>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in syntax::descendants(node) {
        let name = match n.kind() {
            "identifier" => Some(parsed.src(n)),
            "field_expression" => {
                let object = n.child_by_field_name("argument");
                let field = n.child_by_field_name("field");
                match (object, field) {
                    (Some(o), Some(f)) if o.kind() == "this" => Some(parsed.src(f)),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(name) = name {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The name an assignment or update targets (`x`, `this->x`, `x[i]` → x).
fn target_name<'a>(parsed: &Parsed<'a>, n: Node<'_>) -> Option<&'a str> {
    let t = match n.kind() {
        "assignment_expression" => n.child_by_field_name("left")?,
        "update_expression" => n.child_by_field_name("argument")?,
        _ => return None,
    };
    let mut t = t;
    loop {
        match t.kind() {
            "identifier" => return Some(parsed.src(t)),
            "field_expression" => {
                let object = t.child_by_field_name("argument")?;
                if object.kind() == "this" {
                    return Some(parsed.src(t.child_by_field_name("field")?));
                }
                t = object;
            }
            "subscript_expression" => t = t.child_by_field_name("argument")?,
            "parenthesized_expression" | "pointer_expression" => {
                t = syntax::named_children(t).into_iter().next()?
            }
            _ => return None,
        }
    }
}

/// Names assigned in `nodes` and in the bodies of the file's functions
/// they call (one level).
fn assigned_in<'a>(parsed: &Parsed<'a>, nodes: &[Node<'_>]) -> Vec<&'a str> {
    let mut scopes: Vec<Node<'_>> = nodes.to_vec();
    let called: Vec<String> = nodes
        .iter()
        .flat_map(|n| syntax::descendants(*n))
        .filter_map(|n| Call::of(parsed, n))
        .filter(|c| c.object.is_none())
        .map(|c| c.name)
        .collect();
    for func in syntax::descendants(parsed.root()) {
        if func.kind() != "function_definition" {
            continue;
        }
        let Some(name) = syntax::function_name(parsed, func) else {
            continue;
        };
        let short = name.rsplit("::").next().unwrap_or(name);
        if called.iter().any(|c| c == short) {
            scopes.push(func);
        }
    }
    let mut out = Vec::new();
    for scope in scopes {
        for n in syntax::descendants(scope) {
            if let Some(t) = target_name(parsed, n) {
                out.push(t);
            }
        }
    }
    out
}

/// True when `name` is declared as a `TBuf` member (or local) of the file.
fn is_tbuf(parsed: &Parsed<'_>, name: &str) -> bool {
    syntax::descendants(parsed.root()).into_iter().any(|n| {
        matches!(n.kind(), "field_declaration" | "declaration")
            && parsed.src(n).trim_start().starts_with("TBuf")
            && {
                let mut c = n.walk();
                let ds: Vec<Node<'_>> = n.children_by_field_name("declarator", &mut c).collect();
                ds.into_iter().any(|d| {
                    let d = if d.kind() == "init_declarator" {
                        d.child_by_field_name("declarator").unwrap_or(d)
                    } else {
                        d
                    };
                    parsed.src(d) == name
                })
            }
    })
}

/// True when `name` is declared as a `GlobalTensor` in the file.
fn is_global(parsed: &Parsed<'_>, name: &str) -> bool {
    syntax::descendants(parsed.root()).into_iter().any(|n| {
        matches!(n.kind(), "field_declaration" | "declaration")
            && parsed.src(n).trim_start().starts_with("GlobalTensor")
            && {
                let mut c = n.walk();
                let ds: Vec<Node<'_>> = n.children_by_field_name("declarator", &mut c).collect();
                ds.into_iter().any(|d| parsed.src(d) == name)
            }
    })
}

/// The writes of the file into UB buffers or GM tensors: (root buffer or
/// tensor name, the call).
fn writes<'t>(parsed: &'t Parsed<'_>) -> Vec<(String, Node<'t>)> {
    let mut out = Vec::new();
    for c in parsed.calls() {
        let target = if syntax::is_vector_op(&c.name) || syntax::COPY_OPS.contains(&c.name.as_str())
        {
            c.args.first().copied()
        } else if c.name == "SetValue" {
            c.object
        } else {
            None
        };
        let Some(t) = target else { continue };
        if let Some(b) = buffer_of(parsed, t) {
            out.push((b, c.node));
        }
        if let Some(root) = syntax::tensor_root(parsed, t) {
            out.push((root.to_string(), c.node));
        }
    }
    out
}

/// The direct statements of a loop body that are GM→UB copies.
fn gm_copies<'t>(parsed: &Parsed<'_>, body: Node<'t>) -> Vec<(Node<'t>, Call<'t>)> {
    syntax::block_statements(body)
        .into_iter()
        .filter_map(|s| Some((s, syntax::statement_call(parsed, s)?)))
        .filter(|(_, c)| syntax::COPY_OPS.contains(&c.name.as_str()) && c.args.len() >= 2)
        .filter(|(_, c)| {
            syntax::tensor_root(parsed, c.args[1]).is_some_and(|g| is_global(parsed, g))
        })
        .collect()
}

/// The loop header (initializer, condition, update) with the loop
/// variable renamed, whitespace folded.
fn header(parsed: &Parsed<'_>, l: Node<'_>, var: &str) -> Option<String> {
    let body = l.child_by_field_name("body")?;
    let mut out = String::new();
    let mut pos = l.start_byte();
    for id in syntax::descendants(l) {
        if id.start_byte() >= body.start_byte() {
            break;
        }
        if id.kind() == "identifier" && parsed.src(id) == var && id.start_byte() >= pos {
            out.push_str(&parsed.text[pos..id.start_byte()]);
            out.push('\u{1}');
            pos = id.end_byte();
        }
    }
    out.push_str(&parsed.text[pos..body.start_byte()]);
    Some(out.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn has_jump(body: Node<'_>) -> bool {
    syntax::descendants(body).into_iter().any(|n| {
        matches!(
            n.kind(),
            "break_statement" | "continue_statement" | "return_statement" | "goto_statement"
        )
    })
}

/// The plans of one block: every (L1, L2, C2) with the guard.
fn absent_plans<E: Engine>(pkg: &Sources, file: &str, parsed: &Parsed<'_>, out: &mut Vec<Plan>) {
    let all_writes = writes(parsed);
    for block in parsed.all() {
        if block.kind() != "compound_statement" {
            continue;
        }
        let stmts = syntax::block_statements(block);
        for (i, l1) in stmts.iter().enumerate() {
            let (Some(b1), Some(v1)) = (syntax::for_body(*l1), syntax::loop_var(parsed, *l1))
            else {
                continue;
            };
            if l1.has_error() || has_jump(b1) {
                continue;
            }
            for l2 in &stmts[i + 1..] {
                let (Some(b2), Some(v2)) = (syntax::for_body(*l2), syntax::loop_var(parsed, *l2))
                else {
                    continue;
                };
                if l2.has_error() || header(parsed, *l1, v1) != header(parsed, *l2, v2) {
                    continue;
                }
                plan_pair::<E>(
                    pkg,
                    file,
                    parsed,
                    (*l1, b1, v1),
                    (*l2, b2, v2),
                    &all_writes,
                    out,
                );
            }
        }
    }
}

type Loop<'t, 'a> = (Node<'t>, Node<'t>, &'a str);

fn plan_pair<E: Engine>(
    pkg: &Sources,
    file: &str,
    parsed: &Parsed<'_>,
    (l1, b1, v1): Loop<'_, '_>,
    (l2, b2, v2): Loop<'_, '_>,
    all_writes: &[(String, Node<'_>)],
    out: &mut Vec<Plan>,
) {
    let text = parsed.text;
    let firsts = gm_copies(parsed, b1);
    // The region from L1 to the end of L2, and what is assigned in it.
    let region: Vec<Node<'_>> = match l1.parent() {
        Some(block) => syntax::block_statements(block)
            .into_iter()
            .filter(|s| s.start_byte() >= l1.start_byte() && s.end_byte() <= l2.end_byte())
            .collect(),
        None => return,
    };
    let assigned = assigned_in(parsed, &region);
    // Header names and the loop variables.
    let body1_assigned = assigned_in(parsed, &[b1]);
    let body2_assigned = assigned_in(parsed, &[b2]);
    if body1_assigned.contains(&v1) || body2_assigned.contains(&v2) {
        return;
    }
    let Some(h2) = l2.child_by_field_name("body").map(|b| b.start_byte()) else {
        return;
    };
    let header_names: Vec<&str> = syntax::descendants(l2)
        .into_iter()
        .filter(|n| n.end_byte() <= h2)
        .filter(|n| matches!(n.kind(), "identifier" | "field_identifier"))
        .map(|n| parsed.src(n))
        .filter(|n| *n != v2)
        .collect();
    if header_names
        .iter()
        .any(|n| body1_assigned.contains(n) || body2_assigned.contains(n))
    {
        return;
    }
    for (c2_stmt, c2) in gm_copies(parsed, b2) {
        let key = renamed(parsed, c2_stmt, v2, "\u{1}");
        let Some((c1_stmt, _)) = firsts
            .iter()
            .find(|(s, _)| renamed(parsed, *s, v1, "\u{1}") == key)
        else {
            continue;
        };
        // The destination: a TBuf written only by these two copies.
        let Some(buf) = buffer_of(parsed, c2.args[0]) else {
            continue;
        };
        if !is_tbuf(parsed, &buf) {
            continue;
        }
        let c1_call = syntax::named_children(*c1_stmt).into_iter().next();
        let others = all_writes
            .iter()
            .any(|(b, n)| *b == buf && *n != c2.node && Some(*n) != c1_call);
        if others {
            continue;
        }
        // The GM source is never written.
        let Some(gm) = syntax::tensor_root(parsed, c2.args[1]) else {
            continue;
        };
        if all_writes.iter().any(|(b, n)| {
            b == gm
                && Call::of(parsed, *n).is_some_and(|c| {
                    c.args.first().and_then(|a| syntax::tensor_root(parsed, *a)) == Some(gm)
                        || c.name == "SetValue"
                })
        }) {
            continue;
        }
        // Every name of C2 is the loop variable, a local of L2's body
        // declared the same way in L1's body, or assigned nowhere in the
        // region.
        let decls2: Vec<Node<'_>> = syntax::block_statements(b2)
            .into_iter()
            .filter(|s| s.kind() == "declaration" && s.end_byte() <= c2_stmt.start_byte())
            .collect();
        let decls1: Vec<String> = syntax::block_statements(b1)
            .into_iter()
            .filter(|s| s.kind() == "declaration" && s.end_byte() <= c1_stmt.start_byte())
            .map(|s| renamed(parsed, s, v1, "\u{1}"))
            .collect();
        let mut todo: Vec<&str> = names(parsed, c2_stmt);
        let mut seen: Vec<&str> = Vec::new();
        let mut ok = true;
        while let Some(name) = todo.pop() {
            if seen.contains(&name) || name == v2 {
                continue;
            }
            seen.push(name);
            if let Some(d) = decls2.iter().find(|d| syntax::declares(parsed, **d, name)) {
                if !decls1.contains(&renamed(parsed, *d, v2, "\u{1}")) {
                    ok = false;
                    break;
                }
                todo.extend(names(parsed, *d));
                continue;
            }
            if assigned.contains(&name) {
                ok = false;
                break;
            }
        }
        if !ok {
            continue;
        }
        // The rewrite.
        let counter = (0..)
            .map(|k| format!("{COUNTER}{k}"))
            .find(|n| !text.contains(n.as_str()))
            .unwrap_or_default();
        let indent1 = syntax::indent_at(text, l1.start_byte());
        let line1 = syntax::line_range(text, l1.byte_range()).start;
        let inner1 = syntax::block_statements(b1)
            .first()
            .map(|s| syntax::indent_at(text, s.start_byte()))
            .unwrap_or_else(|| format!("{indent1}    "));
        let indent2 = syntax::indent_at(text, c2_stmt.start_byte());
        let edits = vec![
            (line1..line1, format!("{indent1}uint32_t {counter} = 0;\n")),
            (
                b1.start_byte() + 1..b1.start_byte() + 1,
                format!("\n{inner1}{counter}++;"),
            ),
            (
                c2_stmt.byte_range(),
                format!(
                    "if ({counter} != 1) {{\n{indent2}    {}\n{indent2}}}",
                    parsed.src(c2_stmt)
                ),
            ),
        ];
        let site = site_at::<E>(
            file,
            text,
            c2_stmt.byte_range(),
            SiteState::Absent,
            format!(
                "{gm} is copied into {buf} again at line {} after the loop at line {} copied the same range (line {}): skipped when that loop ran once (the row fits the tile)",
                syntax::line_of(text, c2_stmt.start_byte()),
                syntax::line_of(text, l1.start_byte()),
                syntax::line_of(text, c1_stmt.start_byte()),
            ),
        );
        let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
        out.push(Plan { site, output });
    }
}

/// The guards this motif put in: `if (ascPassesN != 1) { copy }`, with the
/// counter's declaration and increment.
fn present_plans<E: Engine>(pkg: &Sources, file: &str, parsed: &Parsed<'_>, out: &mut Vec<Plan>) {
    let text = parsed.text;
    for ifs in parsed.all() {
        if ifs.kind() != "if_statement" || ifs.has_error() || !syntax::in_block(ifs) {
            continue;
        }
        let Some(cond) = ifs.child_by_field_name("condition") else {
            continue;
        };
        let cond_text: String = parsed.src(cond).split_whitespace().collect();
        let Some(counter) = cond_text
            .strip_prefix('(')
            .and_then(|c| c.strip_suffix("!=1)"))
            .filter(|c| {
                c.strip_prefix(COUNTER)
                    .is_some_and(|k| !k.is_empty() && k.chars().all(|d| d.is_ascii_digit()))
            })
        else {
            continue;
        };
        if ifs.child_by_field_name("alternative").is_some() {
            continue;
        }
        let Some(cons) = ifs.child_by_field_name("consequence") else {
            continue;
        };
        let inner = if cons.kind() == "compound_statement" {
            let s = syntax::block_statements(cons);
            if s.len() != 1 {
                continue;
            }
            s[0]
        } else {
            cons
        };
        // The counter's declaration and increment, each alone on its line.
        let mut edits = vec![(ifs.byte_range(), parsed.src(inner).to_string())];
        for n in parsed.all() {
            let t: String = parsed.src(n).split_whitespace().collect();
            let is_decl = n.kind() == "declaration" && t == format!("uint32_t{counter}=0;");
            let is_inc = n.kind() == "expression_statement" && t == format!("{counter}++;");
            if (is_decl || is_inc) && syntax::alone_on_lines(text, n.byte_range()) {
                edits.push((syntax::line_range(text, n.byte_range()), String::new()));
            }
        }
        if edits.len() != 3 {
            continue;
        }
        let site = site_at::<E>(
            file,
            text,
            ifs.byte_range(),
            SiteState::Present,
            format!(
                "{} runs only when the first pass ran more than once",
                parsed.src(inner)
            ),
        );
        let output = syntax::apply_edits(text, &edits).map(|t| with_file(pkg, file, t));
        out.push(Plan { site, output });
    }
}

/// The calls of a statement that may touch `tile` other than by reading
/// it as a vector or copy source: true when the statement writes the
/// tile's buffer, passes the tile to anything but a vector op or a copy
/// (queue calls, helpers), or mentions it outside a call statement.
fn touches_tile(parsed: &Parsed<'_>, stmt: Node<'_>, tile: &str, buf: &str) -> bool {
    if !names(parsed, stmt).contains(&tile)
        && !syntax::descendants(stmt)
            .iter()
            .filter_map(|n| Call::of(parsed, *n))
            .any(|c| {
                c.args
                    .first()
                    .and_then(|a| buffer_of(parsed, *a))
                    .is_some_and(|b| b == buf)
            })
    {
        return false;
    }
    let Some(call) = syntax::statement_call(parsed, stmt) else {
        return true;
    };
    let api = syntax::is_vector_op(&call.name) || syntax::COPY_OPS.contains(&call.name.as_str());
    let writes = call
        .args
        .first()
        .and_then(|a| buffer_of(parsed, *a))
        .is_some_and(|b| b == buf);
    !api || writes
}

/// The straight-line form: a GM→UB copy `C` in a block, and later in the
/// same block either the same copy again (absent: the second one goes)
/// or a second vector op reading the tile (present: the removal copies
/// the data in again before it, between two `PIPE_ALL` barriers). Between
/// the two, nothing writes the tile's buffer or hands the tile to
/// anything but a vector op or copy, nothing writes the GM source, and no
/// name of `C` is assigned.
fn straight_plans<E: Engine>(pkg: &Sources, file: &str, parsed: &Parsed<'_>, out: &mut Vec<Plan>) {
    let text = parsed.text;
    for block in parsed.all() {
        if block.kind() != "compound_statement" {
            continue;
        }
        let stmts = syntax::block_statements(block);
        for (i, c) in stmts.iter().enumerate() {
            let Some(call) = syntax::statement_call(parsed, *c) else {
                continue;
            };
            if !syntax::COPY_OPS.contains(&call.name.as_str()) || call.args.len() < 2 {
                continue;
            }
            let Some(gm) =
                syntax::tensor_root(parsed, call.args[1]).filter(|g| is_global(parsed, g))
            else {
                continue;
            };
            let (Some(tile), Some(buf)) = (
                syntax::tensor_root(parsed, call.args[0]),
                buffer_of(parsed, call.args[0]),
            ) else {
                continue;
            };
            let key = renamed(parsed, *c, "", "");
            let used = names(parsed, *c);
            let mut consumers = 0;
            for (j, s) in stmts.iter().enumerate().skip(i + 1) {
                let between = &stmts[i + 1..j];
                let clean = || {
                    !between.iter().any(|b| touches_tile(parsed, *b, tile, &buf))
                        && !between.iter().any(|b| {
                            syntax::descendants(*b)
                                .iter()
                                .filter_map(|n| Call::of(parsed, *n))
                                .any(|w| {
                                    w.args.first().and_then(|a| syntax::tensor_root(parsed, *a))
                                        == Some(gm)
                                        || w.name == "SetValue"
                                            && w.object.map(|o| parsed.src(o)) == Some(gm)
                                })
                        })
                        && !assigned_in(parsed, between)
                            .iter()
                            .any(|a| used.contains(a))
                };
                if renamed(parsed, *s, "", "") == key {
                    if clean() {
                        let site = site_at::<E>(
                            file,
                            text,
                            s.byte_range(),
                            SiteState::Absent,
                            format!(
                                "{gm} is copied into {tile} again at line {} after line {} copied the same range: the tile still holds it",
                                syntax::line_of(text, s.start_byte()),
                                syntax::line_of(text, c.start_byte()),
                            ),
                        );
                        let output = syntax::apply_edits(
                            text,
                            &[(syntax::line_range(text, s.byte_range()), String::new())],
                        )
                        .filter(|_| syntax::alone_on_lines(text, s.byte_range()))
                        .map(|t| with_file(pkg, file, t));
                        out.push(Plan { site, output });
                    }
                    break;
                }
                let reads = syntax::statement_call(parsed, *s).is_some_and(|r| {
                    syntax::is_vector_op(&r.name)
                        && r.args[1..]
                            .iter()
                            .any(|a| syntax::tensor_root(parsed, *a) == Some(tile))
                });
                if !reads {
                    continue;
                }
                consumers += 1;
                if consumers < 2 {
                    continue;
                }
                if clean() && syntax::alone_on_lines(text, s.byte_range()) {
                    let indent = syntax::indent_at(text, s.start_byte());
                    let line = syntax::line_range(text, s.byte_range()).start;
                    let again = format!(
                        "{indent}PipeBarrier<PIPE_ALL>();\n{indent}{}\n{indent}PipeBarrier<PIPE_ALL>();\n",
                        parsed.src(*c)
                    );
                    let site = site_at::<E>(
                        file,
                        text,
                        c.byte_range(),
                        SiteState::Present,
                        format!(
                            "{gm} copied into {tile} once (line {}) serves the reads at line {} too",
                            syntax::line_of(text, c.start_byte()),
                            syntax::line_of(text, s.start_byte()),
                        ),
                    );
                    let output = syntax::apply_edits(text, &[(line..line, again)])
                        .map(|t| with_file(pkg, file, t));
                    out.push(Plan { site, output });
                }
                break;
            }
        }
    }
}

/// Every site of the module in one kernel file, as sites of motif `E`.
pub(crate) fn plans<E: Engine>(pkg: &Sources, file: &str, parsed: &Parsed<'_>) -> Vec<Plan> {
    let mut out = Vec::new();
    present_plans::<E>(pkg, file, parsed, &mut out);
    absent_plans::<E>(pkg, file, parsed, &mut out);
    straight_plans::<E>(pkg, file, parsed, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hoist::HoistInvariant;
    use crate::Motif;
    use expect_test::expect;

    /// A two-pass row kernel: the square-sum pass and the scaling pass
    /// each copy the row's tiles in (`first` and `second` are their
    /// copies, `extra` goes after the first pass's reduction).
    fn kernel(first: &str, second: &str, extra: &str, tile: &str) -> Sources {
        let text = format!(
            "class K {{\npublic:\n    void Process()\n    {{\n        LocalTensor<float> xt = {tile};\n        LocalTensor<float> yt = yBuf.Get<float>();\n        LocalTensor<float> s = sBuf.Get<float>();\n        for (uint32_t r = 0; r < this->rows; r++) {{\n            uint64_t base = (uint64_t)r * this->cols;\n            float sum = 0.0f;\n            for (uint32_t off = 0; off < this->cols; off += this->tile) {{\n                uint32_t n = this->cols - off < this->tile ? this->cols - off : this->tile;\n                {first}\n                PipeBarrier<PIPE_ALL>();\n                ReduceSum(s, xt, yt, n);\n{extra}                PipeBarrier<PIPE_ALL>();\n                sum += s.GetValue(0);\n            }}\n            for (uint32_t o = 0; o < this->cols; o += this->tile) {{\n                uint32_t n = this->cols - o < this->tile ? this->cols - o : this->tile;\n                {second}\n                PipeBarrier<PIPE_ALL>();\n                Muls(yt, xt, sum, n);\n                PipeBarrier<PIPE_ALL>();\n                DataCopy(yGm[base + o], yt, n);\n            }}\n        }}\n    }}\nprivate:\n    TBuf<TPosition::VECCALC> xBuf, yBuf, sBuf;\n    TQue<QuePosition::VECIN, 1> inQueue;\n    GlobalTensor<float> xGm, yGm;\n}};\n"
        );
        Sources::from_files([("op_kernel/k.cpp", text)])
    }

    fn two_pass() -> Sources {
        kernel(
            "DataCopy(xt, xGm[base + off], n);",
            "DataCopy(xt, xGm[base + o], n);",
            "",
            "xBuf.Get<float>()",
        )
    }

    /// This module's sites (hoist_invariant has others).
    fn ours(pkg: &Sources, state: SiteState) -> Vec<crate::Site> {
        HoistInvariant
            .detect(pkg)
            .into_iter()
            .filter(|s| s.state == state)
            .filter(|s| {
                s.note.contains("again at line")
                    || s.note.contains("first pass")
                    || s.note.contains("serves the reads")
            })
            .collect()
    }

    fn absent(pkg: &Sources) -> Vec<crate::Site> {
        ours(pkg, SiteState::Absent)
    }

    #[test]
    fn the_second_copy_of_a_row_is_skipped_when_the_first_pass_ran_once() {
        let weak = two_pass();
        let sites = absent(&weak);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].line, 21);
        assert!(sites[0].note.contains("line 11"), "{}", sites[0].note);
        assert!(sites[0].note.contains("line 13"), "{}", sites[0].note);
        let strong = HoistInvariant.apply(&weak, &sites[0]).unwrap();
        expect![[r#"
            --- a/op_kernel/k.cpp
            +++ b/op_kernel/k.cpp
            @@ -8,7 +8,9 @@
                     for (uint32_t r = 0; r < this->rows; r++) {
                         uint64_t base = (uint64_t)r * this->cols;
                         float sum = 0.0f;
            +            uint32_t ascPasses0 = 0;
                         for (uint32_t off = 0; off < this->cols; off += this->tile) {
            +                ascPasses0++;
                             uint32_t n = this->cols - off < this->tile ? this->cols - off : this->tile;
                             DataCopy(xt, xGm[base + off], n);
                             PipeBarrier<PIPE_ALL>();
            @@ -18,7 +20,9 @@
                         }
                         for (uint32_t o = 0; o < this->cols; o += this->tile) {
                             uint32_t n = this->cols - o < this->tile ? this->cols - o : this->tile;
            -                DataCopy(xt, xGm[base + o], n);
            +                if (ascPasses0 != 1) {
            +                    DataCopy(xt, xGm[base + o], n);
            +                }
                             PipeBarrier<PIPE_ALL>();
                             Muls(yt, xt, sum, n);
                             PipeBarrier<PIPE_ALL>();
        "#]]
        .assert_eq(&crate::snapshot_diff(&weak, &strong));
        // Both directions: the guard is a present site whose removal gives
        // the input back.
        let present = ours(&strong, SiteState::Present);
        assert_eq!(present.len(), 1, "{present:?}");
        assert!(absent(&strong).is_empty());
        let back = HoistInvariant.remove(&strong, &present[0]).unwrap();
        assert_eq!(back, weak);
    }

    #[test]
    fn the_motif_declines_when_its_preconditions_fail() {
        // The tile comes from a queue (it rotates).
        let queue = kernel(
            "DataCopy(xt, xGm[base + off], n);",
            "DataCopy(xt, xGm[base + o], n);",
            "",
            "inQueue.AllocTensor<float>()",
        );
        assert!(absent(&queue).is_empty());
        // The first pass writes the tile in place.
        let written = kernel(
            "DataCopy(xt, xGm[base + off], n);",
            "DataCopy(xt, xGm[base + o], n);",
            "                Mul(xt, xt, xt, n);\n",
            "xBuf.Get<float>()",
        );
        assert!(absent(&written).is_empty());
        // Different ranges (the second pass reads the next row).
        let other = kernel(
            "DataCopy(xt, xGm[base + off], n);",
            "DataCopy(xt, xGm[base + this->cols + o], n);",
            "",
            "xBuf.Get<float>()",
        );
        assert!(absent(&other).is_empty());
        // A name of the copy changes between the passes.
        let moved = kernel(
            "DataCopy(xt, xGm[base + off], n);",
            "DataCopy(xt, xGm[base + o], n);",
            "                base += 1;\n",
            "xBuf.Get<float>()",
        );
        assert!(absent(&moved).is_empty());
        // The first loop may stop early.
        let jumps = kernel(
            "DataCopy(xt, xGm[base + off], n);",
            "DataCopy(xt, xGm[base + o], n);",
            "                if (sum > 1.0f) { break; }\n",
            "xBuf.Get<float>()",
        );
        assert!(absent(&jumps).is_empty());
        // The GM source is written in between.
        let stored = kernel(
            "DataCopy(xt, xGm[base + off], n);",
            "DataCopy(xt, xGm[base + o], n);",
            "                DataCopy(xGm[base + off], s, 8);\n",
            "xBuf.Get<float>()",
        );
        assert!(absent(&stored).is_empty());
    }

    fn straight(middle: &str) -> Sources {
        let text = format!(
            "class K {{\npublic:\n    void Compute(uint32_t off, uint32_t n)\n    {{\n        LocalTensor<float> xt = xBuf.Get<float>();\n        LocalTensor<float> yt = yBuf.Get<float>();\n        DataCopy(xt, xGm[off], n);\n        PipeBarrier<PIPE_ALL>();\n        Exp(yt, xt, n);\n{middle}        Add(yt, yt, xt, n);\n        PipeBarrier<PIPE_ALL>();\n        DataCopy(yGm[off], yt, n);\n    }}\nprivate:\n    TBuf<TPosition::VECCALC> xBuf, yBuf;\n    GlobalTensor<float> xGm, yGm;\n}};\n"
        );
        Sources::from_files([("op_kernel/k.cpp", text)])
    }

    #[test]
    fn a_tile_read_twice_in_one_block_is_copied_in_again_and_back() {
        let strong = straight("        PipeBarrier<PIPE_V>();\n");
        let present = ours(&strong, SiteState::Present);
        assert_eq!(present.len(), 1, "{present:?}");
        let weak = HoistInvariant.remove(&strong, &present[0]).unwrap();
        let k = weak.get("op_kernel/k.cpp").unwrap();
        assert!(
            k.contains("        PipeBarrier<PIPE_ALL>();\n        DataCopy(xt, xGm[off], n);\n        PipeBarrier<PIPE_ALL>();\n        Add(yt, yt, xt, n);"),
            "{k}"
        );
        let again = absent(&weak);
        assert_eq!(again.len(), 1, "{again:?}");
        let back = HoistInvariant.apply(&weak, &again[0]).unwrap();
        let k = back.get("op_kernel/k.cpp").unwrap();
        assert_eq!(k.matches("DataCopy(xt, xGm[off], n);").count(), 1, "{k}");
        // Something that may write the tile in between keeps both reads.
        let queued = straight("        inQueue.EnQue(xt);\n");
        assert!(ours(&queued, SiteState::Present).is_empty());
        // A reader that writes the tile in place is the last one the
        // removal may copy in again for.
        let written = straight("        Muls(xt, xt, 2.0f, n);\n");
        let sites = ours(&written, SiteState::Present);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert!(
            sites[0].note.ends_with("at line 10 too"),
            "{}",
            sites[0].note
        );
    }
}
