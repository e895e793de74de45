//! Loading loop-invariant GM data once: a copy into a `TBuf` tile of data
//! that does not change between calls (gamma of a norm, a bias row, clip
//! bounds) that runs in every iteration of a tile or row loop reads the
//! same GM bytes again and again.
//!
//! - apply: the copy `DataCopy(Pad)(t, gm..., ...)` whose arguments name
//!   only class members, constants and locals set from them (nothing of
//!   the loop or of the function's parameters), into a tile `t =
//!   buf.Get<T>()` of a `TBuf` nothing else writes, in a function called
//!   from a loop (or in a loop), runs once per block: it is guarded by a
//!   member flag (`if (!ascLoadedN) { copy; ascLoadedN = true; }`). The
//!   pipe barriers or flags after it stay (later calls then wait on
//!   nothing).
//! - remove: that guard goes (the copy runs on every call again).

use super::syntax::{self, Call, Parsed};
use super::{site_at, with_file, Engine, Plan, SiteState, Sources};
use tree_sitter::Node;

fn strip(mut n: Node<'_>) -> Node<'_> {
    while n.kind() == "parenthesized_expression" {
        match syntax::named_children(n).into_iter().next() {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

/// True when `func` runs inside a loop: a loop in it around `at`, or a
/// call of it from a loop body elsewhere in the file.
fn in_loop(parsed: &Parsed<'_>, func: Node<'_>, at: Node<'_>) -> bool {
    if syntax::ancestor(at, &["for_statement", "while_statement", "do_statement"])
        .is_some_and(|l| syntax::within(l, func))
    {
        return true;
    }
    let Some(name) = syntax::function_name(parsed, func) else {
        return false;
    };
    let short = name.rsplit("::").next().unwrap_or(name);
    parsed.calls().into_iter().any(|c| {
        c.name == short
            && syntax::ancestor(
                c.node,
                &["for_statement", "while_statement", "do_statement"],
            )
            .is_some()
    })
}

/// Locals of `func` (parameters included) that the copy may not use: all
/// but the destination tile and locals initialised only from members and
/// constants.
fn varying<'a>(parsed: &Parsed<'a>, func: Node<'_>, dst: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let declared = syntax::declared_names(parsed, func);
    for name in declared {
        if name == dst {
            continue;
        }
        out.push(name);
    }
    // Locals set from constants and members only are invariant.
    let mut invariant: Vec<&str> = Vec::new();
    loop {
        let mut grew = false;
        for decl in syntax::descendants(func) {
            if decl.kind() != "declaration" {
                continue;
            }
            let mut c = decl.walk();
            let ds: Vec<Node<'_>> = decl.children_by_field_name("declarator", &mut c).collect();
            for d in ds {
                let Some(name) = syntax::declared_name(parsed, d) else {
                    continue;
                };
                if invariant.contains(&name) || name == dst {
                    continue;
                }
                let Some(value) = d
                    .child_by_field_name("value")
                    .or_else(|| syntax::named_children(d).into_iter().nth(1))
                else {
                    continue;
                };
                let uses = syntax::identifiers(parsed, value);
                let assigned_later = syntax::descendants(func).into_iter().any(|n| {
                    n.kind() == "assignment_expression"
                        && n.child_by_field_name("left")
                            .is_some_and(|l| parsed.src(l) == name)
                });
                if !assigned_later
                    && uses
                        .iter()
                        .all(|u| invariant.contains(u) || !out.contains(u) || *u == name)
                    && !uses.contains(&name)
                {
                    invariant.push(name);
                    grew = true;
                }
            }
        }
        if !grew {
            break;
        }
    }
    out.retain(|n| !invariant.contains(n));
    out
}

pub(crate) fn plans<E: Engine>(pkg: &Sources, file: &str, parsed: &Parsed<'_>) -> Vec<Plan> {
    let text = parsed.text;
    let mut out = Vec::new();
    let calls = parsed.calls();
    for copy in calls
        .iter()
        .filter(|c| c.name == "DataCopy" || c.name == "DataCopyPad")
    {
        let Some(stmt) = copy.statement() else {
            continue;
        };
        if copy.args.len() < 3 || !syntax::in_block(stmt) {
            continue;
        }
        let dst = strip(copy.args[0]);
        if dst.kind() != "identifier" {
            continue;
        }
        let t = parsed.src(dst);
        let Some(func) = syntax::enclosing_function(stmt) else {
            continue;
        };
        // Already guarded: the removal.
        let guard = stmt
            .parent()
            .and_then(|b| b.parent())
            .filter(|i| i.kind() == "if_statement");
        if let Some(ifs) = guard {
            let cond = ifs
                .child_by_field_name("condition")
                .map(|c| parsed.src(c))
                .unwrap_or("");
            if cond.contains("ascLoaded") && syntax::in_block(ifs) {
                let body = parsed.src(stmt);
                let indent = syntax::indent_at(text, ifs.start_byte());
                let site = site_at::<E>(
                    file,
                    text,
                    ifs.byte_range(),
                    SiteState::Present,
                    format!("{body} runs once per block"),
                );
                let _ = indent;
                let output = syntax::apply_edits(text, &[(ifs.byte_range(), body.to_string())])
                    .map(|x| with_file(pkg, file, x));
                out.push(Plan { site, output });
                continue;
            }
        }
        // The tile comes from a TBuf.
        let Some(decl) = syntax::descendants(func)
            .into_iter()
            .find(|n| n.kind() == "declaration" && syntax::declares(parsed, *n, t))
        else {
            continue;
        };
        let Some(get) = syntax::descendants(decl)
            .into_iter()
            .filter_map(|n| Call::of(parsed, n))
            .find(|c| c.name == "Get")
        else {
            continue;
        };
        let Some(buf) = get.object.map(|o| parsed.src(o)) else {
            continue;
        };
        // Nothing else writes the buffer: every tile got from it is only
        // read (except by this copy).
        let tiles: Vec<&str> = calls
            .iter()
            .filter(|c| c.name == "Get" && c.object.is_some_and(|o| parsed.src(o) == buf))
            .filter_map(|c| syntax::ancestor(c.node, &["declaration"]))
            .filter_map(|d| {
                let mut cur = d.walk();
                let first = d.children_by_field_name("declarator", &mut cur).next()?;
                syntax::declared_name(parsed, first)
            })
            .collect();
        let written = calls.iter().any(|c| {
            c.node != copy.node
                && (syntax::is_vector_op(&c.name) || syntax::COPY_OPS.contains(&c.name.as_str()))
                && c.args.first().is_some_and(|a| {
                    tiles
                        .iter()
                        .any(|tile| syntax::tensor_root(parsed, *a) == Some(*tile))
                })
        });
        if written {
            continue;
        }
        // Invariant arguments.
        let bad = varying(parsed, func, t);
        let uses_varying = copy.args[1..].iter().any(|a| {
            syntax::identifiers(parsed, *a)
                .iter()
                .any(|u| bad.contains(u))
        });
        if uses_varying || !in_loop(parsed, func, stmt) {
            continue;
        }
        let Some(class) = syntax::ancestor(stmt, &["class_specifier", "struct_specifier"]) else {
            continue;
        };
        let Some(body) = class.child_by_field_name("body") else {
            continue;
        };
        let Some(close) = body.end_byte().checked_sub(1) else {
            continue;
        };
        let line_start = text[..close].rfind('\n').map_or(0, |p| p + 1);
        let Some(last) = syntax::named_children(body).last().copied() else {
            continue;
        };
        if !text[line_start..close].trim().is_empty() {
            continue;
        }
        let flag = (0..)
            .map(|k| format!("ascLoaded{k}"))
            .find(|n| !text.contains(n.as_str()))
            .unwrap_or_default();
        let indent = syntax::indent_at(text, stmt.start_byte());
        let guarded = format!(
            "if (!{flag}) {{\n{indent}    {}\n{indent}    {flag} = true;\n{indent}}}",
            parsed.src(stmt)
        );
        let member = format!(
            "{}bool {flag} = false;\n",
            syntax::indent_at(text, last.start_byte())
        );
        let site = site_at::<E>(
            file,
            text,
            stmt.byte_range(),
            SiteState::Absent,
            format!(
                "{} reads the same GM data on every call (line {}): once per block",
                parsed.src(stmt),
                syntax::line_of(text, stmt.start_byte())
            ),
        );
        let output = syntax::apply_edits(
            text,
            &[
                (stmt.byte_range(), guarded),
                (line_start..line_start, member),
            ],
        )
        .map(|x| with_file(pkg, file, x));
        out.push(Plan { site, output });
    }
    out
}
