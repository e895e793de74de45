//! Where integers flow in host tiling code: a flow-insensitive taint
//! analysis over the host sources.
//!
//! Every candidate (a named integer constant, a `#define`, or an integer
//! literal in a decision position) taints the names it is assigned to
//! (locals, parameters, struct fields by field name, arrays), through
//! initialisations, assignments, calls of functions defined in the host
//! files (arguments to parameters, reference parameters back to the
//! arguments, returns to the call) and any other call (its value depends
//! on its arguments). The fixpoint says which candidates reach which
//! *sinks*: `SetBlockDim(e)`, `SetTilingKey(e)` and the tiling-data
//! setters `set_<field>(e)` (or assignments to a declared tiling field),
//! and the Matmul tiling's setters (guide 6.2.4.2.2): `SetDim(e)` decides
//! the cores as `SetBlockDim` does, and the arguments of `SetFixSplit`,
//! `SetBufferSpace`, `SetSingleShape` and `SetTraverse` the TCubeTiling
//! fields they set
//! (`baseM`, `baseN`, `baseK`, `l1Size`, ...).
//!
//! Names are merged across functions (two locals called `len` share a
//! taint): the analysis over-approximates, and the host tiling run
//! (the method's `tune::confirm`) tells live knobs from dead ones.
//!
//! A second, narrower taint follows values that are passed on *as
//! values*: copied, cast, chosen by a conditional (not its condition),
//! clamped by `min`/`max` or passed through a helper call, but not used
//! as an operand of arithmetic. The block dim's direct candidates
//! ([`Flow::direct_block_dim`]) are the core counts; a value that only
//! divides a size on its way to `SetBlockDim` (an element width, a tile
//! length) is not one.

use crate::syntax::{self, Call, Parsed};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// Index of a candidate.
pub(crate) type Cand = usize;

/// A place integers end up in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Sink {
    /// `SetBlockDim(e)`.
    BlockDim,
    /// `SetTilingKey(e)`.
    TilingKey,
    /// A tiling-data field.
    Field(String),
}

/// What the analysis found in one file.
#[derive(Debug, Default)]
pub(crate) struct Flow {
    /// Per sink, the candidates reaching it.
    pub sinks: BTreeMap<Sink, BTreeSet<Cand>>,
    /// Per candidate, the names it flows into first (for labels).
    pub first_names: BTreeMap<Cand, String>,
    /// The candidates whose value reaches `SetBlockDim` as a value (see
    /// the module header), not only as an operand of arithmetic.
    pub direct_block_dim: BTreeSet<Cand>,
}

/// Identity of a candidate for the analysis: a constant by name, or a
/// literal by its byte range.
#[derive(Debug, Clone)]
pub(crate) enum CandKey {
    /// A named constant (const/constexpr/#define).
    Name(String),
    /// A literal at this byte range of the file.
    Literal(std::ops::Range<usize>),
}

/// Runs the analysis over one file's functions, with the other host
/// files' function bodies concatenated by the caller when needed.
pub(crate) fn analyse(
    parsed: &Parsed<'_>,
    cands: &[CandKey],
    tiling_fields: &BTreeSet<String>,
) -> Flow {
    let names: BTreeMap<&str, Cand> = cands
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            CandKey::Name(n) => Some((n.as_str(), i)),
            CandKey::Literal(_) => None,
        })
        .collect();
    let literals: BTreeMap<(usize, usize), Cand> = cands
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            CandKey::Literal(r) => Some(((r.start, r.end), i)),
            CandKey::Name(_) => None,
        })
        .collect();
    let funcs = functions(parsed);
    let mut taint: BTreeMap<String, BTreeSet<Cand>> = BTreeMap::new();
    let mut returns: BTreeMap<String, BTreeSet<Cand>> = BTreeMap::new();
    let mut direct: BTreeMap<String, BTreeSet<Cand>> = BTreeMap::new();
    let mut direct_returns: BTreeMap<String, BTreeSet<Cand>> = BTreeMap::new();
    let mut first_names: BTreeMap<Cand, String> = BTreeMap::new();
    let all = parsed.all();
    for _round in 0..24 {
        let mut changed = false;
        let ctx = Ctx {
            parsed,
            names: &names,
            literals: &literals,
            taint: &taint,
            returns: &returns,
            direct: &direct,
            direct_returns: &direct_returns,
            funcs: &funcs,
        };
        let mut updates: Vec<(String, BTreeSet<Cand>)> = Vec::new();
        let mut ret_updates: Vec<(String, BTreeSet<Cand>)> = Vec::new();
        let mut direct_updates: Vec<(String, BTreeSet<Cand>)> = Vec::new();
        let mut direct_ret_updates: Vec<(String, BTreeSet<Cand>)> = Vec::new();
        for &node in &all {
            match node.kind() {
                "init_declarator" => {
                    let (Some(d), Some(v)) = (
                        node.child_by_field_name("declarator"),
                        node.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    if let Some(name) = syntax::declared_name(parsed, d) {
                        updates.push((name.to_string(), ctx.cands(v)));
                        direct_updates.push((name.to_string(), ctx.direct(v)));
                    }
                }
                "assignment_expression" => {
                    let (Some(l), Some(r)) = (
                        node.child_by_field_name("left"),
                        node.child_by_field_name("right"),
                    ) else {
                        continue;
                    };
                    if let Some(name) = target_name(parsed, l) {
                        let mut c = ctx.cands(r);
                        let compound = parsed.src(node).contains("+=")
                            || parsed.src(node).contains("*=")
                            || parsed.src(node).contains("-=")
                            || parsed.src(node).contains("/=");
                        if compound {
                            c.extend(ctx.cands(l));
                        } else {
                            direct_updates.push((name.clone(), ctx.direct(r)));
                        }
                        updates.push((name, c));
                    }
                }
                "return_statement" => {
                    let Some(f) = syntax::enclosing_function(node) else {
                        continue;
                    };
                    let Some(fname) = syntax::function_name(parsed, f) else {
                        continue;
                    };
                    let short = short_name(fname);
                    if let Some(e) = syntax::named_children(node).into_iter().next() {
                        ret_updates.push((short.to_string(), ctx.cands(e)));
                        direct_ret_updates.push((short.to_string(), ctx.direct(e)));
                    }
                }
                "call_expression" => {
                    let Some(call) = Call::of(parsed, node) else {
                        continue;
                    };
                    let Some(params) = funcs.get(&call.name) else {
                        continue;
                    };
                    for (i, arg) in call.args.iter().enumerate() {
                        let Some((pname, by_ref)) = params.get(i) else {
                            continue;
                        };
                        updates.push((pname.clone(), ctx.cands(*arg)));
                        direct_updates.push((pname.clone(), ctx.direct(*arg)));
                        if *by_ref {
                            if let Some(aname) = target_name(parsed, *arg) {
                                let back = taint.get(pname).cloned().unwrap_or_default();
                                updates.push((aname.clone(), back));
                                let back = direct.get(pname).cloned().unwrap_or_default();
                                direct_updates.push((aname, back));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for (name, set) in updates {
            for c in &set {
                first_names.entry(*c).or_insert_with(|| name.clone());
            }
            let e = taint.entry(name).or_default();
            let before = e.len();
            e.extend(set);
            changed |= e.len() != before;
        }
        for (into, ups) in [
            (&mut returns, ret_updates),
            (&mut direct, direct_updates),
            (&mut direct_returns, direct_ret_updates),
        ] {
            for (name, set) in ups {
                let e = into.entry(name).or_default();
                let before = e.len();
                e.extend(set);
                changed |= e.len() != before;
            }
        }
        if !changed {
            break;
        }
    }
    let ctx = Ctx {
        parsed,
        names: &names,
        literals: &literals,
        taint: &taint,
        returns: &returns,
        direct: &direct,
        direct_returns: &direct_returns,
        funcs: &funcs,
    };
    let mut sinks: BTreeMap<Sink, BTreeSet<Cand>> = BTreeMap::new();
    let mut direct_block_dim: BTreeSet<Cand> = BTreeSet::new();
    for &node in &all {
        if node.kind() == "call_expression" {
            let Some(call) = Call::of(parsed, node) else {
                continue;
            };
            // The Matmul tiling's setters (guide 6.2.4.2.2): each argument
            // decides a TCubeTiling field through GetTiling, and SetDim the
            // cores the split may use.
            if call.object.is_some() {
                let fields: &[&str] = match call.name.as_str() {
                    "SetFixSplit" => &["baseM", "baseN", "baseK"],
                    "SetBufferSpace" => &["l1Size", "l0CSize", "ubSize", "btSize"],
                    "SetSingleShape" => &["singleCoreM", "singleCoreN", "singleCoreK"],
                    "SetTraverse" => &["iterateOrder"],
                    _ => &[],
                };
                for (field, arg) in fields.iter().zip(&call.args) {
                    sinks
                        .entry(Sink::Field((*field).to_string()))
                        .or_default()
                        .extend(ctx.cands(*arg));
                }
                if call.name == "SetDim" {
                    if let Some(arg) = call.args.first() {
                        direct_block_dim.extend(ctx.direct(*arg));
                        sinks
                            .entry(Sink::BlockDim)
                            .or_default()
                            .extend(ctx.cands(*arg));
                    }
                    continue;
                }
            }
            let Some(arg) = call.args.first() else {
                continue;
            };
            let sink = match call.name.as_str() {
                "SetBlockDim" => Some(Sink::BlockDim),
                "SetTilingKey" => Some(Sink::TilingKey),
                n if n.starts_with("set_") && call.object.is_some() => {
                    Some(Sink::Field(n["set_".len()..].to_string()))
                }
                _ => None,
            };
            if let Some(sink) = sink {
                if sink == Sink::BlockDim {
                    direct_block_dim.extend(ctx.direct(*arg));
                }
                let c = ctx.cands(*arg);
                sinks.entry(sink).or_default().extend(c);
            }
        } else if node.kind() == "assignment_expression" {
            let (Some(l), Some(r)) = (
                node.child_by_field_name("left"),
                node.child_by_field_name("right"),
            ) else {
                continue;
            };
            if l.kind() == "field_expression" {
                if let Some(f) = l.child_by_field_name("field") {
                    let field = parsed.src(f);
                    if tiling_fields.contains(field) {
                        sinks
                            .entry(Sink::Field(field.to_string()))
                            .or_default()
                            .extend(ctx.cands(r));
                    }
                }
            }
        }
    }
    Flow {
        sinks,
        first_names,
        direct_block_dim,
    }
}

struct Ctx<'c, 'a> {
    parsed: &'c Parsed<'a>,
    names: &'c BTreeMap<&'c str, Cand>,
    literals: &'c BTreeMap<(usize, usize), Cand>,
    taint: &'c BTreeMap<String, BTreeSet<Cand>>,
    returns: &'c BTreeMap<String, BTreeSet<Cand>>,
    direct: &'c BTreeMap<String, BTreeSet<Cand>>,
    direct_returns: &'c BTreeMap<String, BTreeSet<Cand>>,
    funcs: &'c BTreeMap<String, Vec<(String, bool)>>,
}

impl Ctx<'_, '_> {
    /// The candidates an expression depends on.
    fn cands(&self, expr: Node<'_>) -> BTreeSet<Cand> {
        let mut out = BTreeSet::new();
        for n in syntax::descendants(expr) {
            match n.kind() {
                "identifier" => {
                    let t = self.parsed.src(n);
                    if let Some(c) = self.names.get(t) {
                        out.insert(*c);
                    }
                    if let Some(s) = self.taint.get(t) {
                        out.extend(s.iter().copied());
                    }
                }
                "field_identifier" => {
                    if let Some(s) = self.taint.get(self.parsed.src(n)) {
                        out.extend(s.iter().copied());
                    }
                }
                "number_literal" => {
                    let r = n.byte_range();
                    if let Some(c) = self.literals.get(&(r.start, r.end)) {
                        out.insert(*c);
                    }
                }
                "call_expression" => {
                    if let Some(call) = Call::of(self.parsed, n) {
                        if self.funcs.contains_key(&call.name) {
                            if let Some(s) = self.returns.get(&call.name) {
                                out.extend(s.iter().copied());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The candidates an expression passes on as its value: itself (a
    /// name, a literal, a field), through parentheses, casts, the two
    /// branches of a conditional, `min`/`max` and helper calls (their
    /// arguments, and the return of a host function), never through an
    /// operand of arithmetic.
    fn direct(&self, expr: Node<'_>) -> BTreeSet<Cand> {
        let mut out = BTreeSet::new();
        match expr.kind() {
            "identifier" => {
                let t = self.parsed.src(expr);
                if let Some(c) = self.names.get(t) {
                    out.insert(*c);
                }
                if let Some(s) = self.direct.get(t) {
                    out.extend(s.iter().copied());
                }
            }
            "field_expression" => {
                if let Some(f) = expr.child_by_field_name("field") {
                    if let Some(s) = self.direct.get(self.parsed.src(f)) {
                        out.extend(s.iter().copied());
                    }
                }
            }
            "number_literal" => {
                let r = expr.byte_range();
                if let Some(c) = self.literals.get(&(r.start, r.end)) {
                    out.insert(*c);
                }
            }
            "parenthesized_expression" | "cast_expression" => {
                for c in syntax::named_children(expr) {
                    out.extend(self.direct(c));
                }
            }
            "conditional_expression" => {
                for f in ["consequence", "alternative"] {
                    if let Some(c) = expr.child_by_field_name(f) {
                        out.extend(self.direct(c));
                    }
                }
            }
            "call_expression" => {
                if let Some(call) = Call::of(self.parsed, expr) {
                    for a in &call.args {
                        out.extend(self.direct(*a));
                    }
                    if self.funcs.contains_key(&call.name) {
                        if let Some(s) = self.direct_returns.get(&call.name) {
                            out.extend(s.iter().copied());
                        }
                    }
                }
            }
            _ => {}
        }
        out
    }
}

fn short_name(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// Functions defined in the file: short name → parameters (name, by
/// reference).
fn functions(parsed: &Parsed<'_>) -> BTreeMap<String, Vec<(String, bool)>> {
    let mut out = BTreeMap::new();
    for f in parsed.all() {
        if f.kind() != "function_definition" {
            continue;
        }
        let Some(name) = syntax::function_name(parsed, f) else {
            continue;
        };
        let mut decl = f.child_by_field_name("declarator");
        let mut params = Vec::new();
        while let Some(d) = decl {
            if d.kind() == "function_declarator" {
                if let Some(list) = d.child_by_field_name("parameters") {
                    for p in syntax::named_children(list) {
                        let Some(pd) = p.child_by_field_name("declarator") else {
                            continue;
                        };
                        if let Some(n) = syntax::declared_name(parsed, pd) {
                            let by_ref = pd.kind() == "reference_declarator"
                                || pd.kind() == "pointer_declarator";
                            params.push((n.to_string(), by_ref));
                        }
                    }
                }
                break;
            }
            decl = d.child_by_field_name("declarator");
        }
        out.insert(short_name(name).to_string(), params);
    }
    out
}

/// The name an assignment target stands for: an identifier, a field (by
/// field name), an array (by array name), a dereferenced pointer.
pub(crate) fn target_name(parsed: &Parsed<'_>, node: Node<'_>) -> Option<String> {
    match node.kind() {
        "identifier" => Some(parsed.src(node).to_string()),
        "field_expression" => node
            .child_by_field_name("field")
            .map(|f| parsed.src(f).to_string()),
        "subscript_expression" => target_name(parsed, node.child_by_field_name("argument")?),
        "pointer_expression" | "parenthesized_expression" => {
            target_name(parsed, syntax::named_children(node).into_iter().last()?)
        }
        _ => None,
    }
}
