//! Scalar element loops of any body, compiled to vector instructions.
//!
//! A loop `for (i = A; i < N; i++) { ... }` whose body is straight-line
//! element-wise code is read into a small expression form: locals
//! (`T v = ...;`, `v = ...;`, `v += ...;`) are substituted, `X.GetValue(i +
//! off)` is a load, `Y.SetValue(i + off, e)` a store, and values combine
//! with `+ - * /`, unary minus, casts (`static_cast<T>`, C casts: taken as
//! the element type), `max`/`min` (or a `?:` that compares its own two
//! branches), `abs`, `sqrt`, `exp`, literals and loop-invariant scalars.
//! Every load and store must be of one element type and one memory.
//!
//! - UB tensors (`LocalTensor`): with the loop from 0 and no offsets, each
//!   store becomes vector instructions over the loop count, computed in
//!   the destination (an expression that needs a second temporary is
//!   declined); a scalar store is a `Duplicate`.
//! - GM tensors (`GlobalTensor`, a scalar tail or a whole kernel written
//!   on GM): the loop becomes a loop over chunks of up to 4 KB per
//!   operand in a UB scratch buffer the motif adds to the kernel class
//!   (`TBuf` member, `InitBuffer` after the class's others): each chunk is
//!   copied in with `DataCopyPad` (any length, any alignment), computed
//!   with vector instructions and copied out with `DataCopyPad`, with full
//!   barriers between the phases (the scratch is its own; the barriers only
//!   order the pipes on it).
//!
//! Declines on anything else: conditions that are not a max/min, a value
//! of the loop index itself, a loop-carried value, calls it does not know,
//! mixed memories or element types, more than eight operands.

use super::syntax::{self, Call, Parsed};
use std::collections::BTreeMap;
use tree_sitter::Node;

/// Bytes of UB per operand of a GM chunk.
pub(crate) const CHUNK_BYTES: u32 = 4096;
/// Most operand slots of one GM chunk.
const MAX_SLOTS: usize = 8;

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    /// `X.GetValue(i + off)`.
    Load(String, String),
    /// A loop-invariant scalar (text).
    Scalar(String),
    /// `a op b`, op one of `+ - * /`.
    Bin(char, Box<Expr>, Box<Expr>),
    /// `-a`.
    Neg(Box<Expr>),
    /// `Max`, `Min` (two args), `Abs`, `Sqrt`, `Exp` (one).
    Func(&'static str, Vec<Expr>),
}

impl Expr {
    fn loads(&self, out: &mut Vec<(String, String)>) {
        match self {
            Expr::Load(t, o) => {
                if !out.contains(&(t.clone(), o.clone())) {
                    out.push((t.clone(), o.clone()));
                }
            }
            Expr::Scalar(_) => {}
            Expr::Bin(_, a, b) => {
                a.loads(out);
                b.loads(out);
            }
            Expr::Neg(a) => a.loads(out),
            Expr::Func(_, args) => args.iter().for_each(|a| a.loads(out)),
        }
    }

    fn is_scalar(&self) -> bool {
        match self {
            Expr::Load(..) => false,
            Expr::Scalar(_) => true,
            Expr::Bin(_, a, b) => a.is_scalar() && b.is_scalar(),
            Expr::Neg(a) => a.is_scalar(),
            Expr::Func(_, args) => args.iter().all(Expr::is_scalar),
        }
    }

    /// C++ text of a scalar expression.
    fn scalar_text(&self) -> String {
        match self {
            Expr::Scalar(s) => s.clone(),
            Expr::Bin(op, a, b) => format!("({} {op} {})", a.scalar_text(), b.scalar_text()),
            Expr::Neg(a) => format!("(-{})", a.scalar_text()),
            Expr::Func(f, args) => {
                let a: Vec<String> = args.iter().map(Expr::scalar_text).collect();
                match *f {
                    "Max" => format!("(({0}) > ({1}) ? ({0}) : ({1}))", a[0], a[1]),
                    "Min" => format!("(({0}) < ({1}) ? ({0}) : ({1}))", a[0], a[1]),
                    "Abs" => format!("(({0}) < 0 ? -({0}) : ({0}))", a[0]),
                    _ => String::new(),
                }
            }
            Expr::Load(..) => String::new(),
        }
    }

    /// Operator nodes (non-scalar, non-load) in the tree.
    fn ops(&self) -> usize {
        if self.is_scalar() {
            return 0;
        }
        match self {
            Expr::Load(..) | Expr::Scalar(_) => 0,
            Expr::Bin(_, a, b) => 1 + a.ops() + b.ops(),
            Expr::Neg(a) => 1 + a.ops(),
            Expr::Func(_, args) => 1 + args.iter().map(Expr::ops).sum::<usize>(),
        }
    }
}

/// A parsed loop.
struct LoopIr {
    start: String,
    end: String,
    stores: Vec<(String, String, Expr)>,
}

struct Reader<'p, 'a> {
    parsed: &'p Parsed<'a>,
    var: &'a str,
    /// Names the body declares or assigns (never invariant).
    locals: Vec<&'a str>,
    env: BTreeMap<String, Expr>,
}

impl<'a> Reader<'_, 'a> {
    fn mentions_loop(&self, node: Node<'_>) -> bool {
        syntax::descendants(node).into_iter().any(|n| {
            n.kind() == "identifier" && {
                let t = self.parsed.src(n);
                t == self.var || self.locals.contains(&t)
            }
        })
    }

    /// The invariant offset of `i`, `i + e`, `e + i`.
    fn offset(&self, idx: Node<'_>) -> Option<String> {
        let idx = strip_parens(idx);
        if idx.kind() == "identifier" && self.parsed.src(idx) == self.var {
            return Some("0".to_string());
        }
        if idx.kind() == "binary_expression"
            && idx
                .child_by_field_name("operator")
                .map(|o| self.parsed.src(o))
                == Some("+")
        {
            let l = strip_parens(idx.child_by_field_name("left")?);
            let r = strip_parens(idx.child_by_field_name("right")?);
            let is_var = |n: Node<'_>| n.kind() == "identifier" && self.parsed.src(n) == self.var;
            let other = if is_var(l) {
                r
            } else if is_var(r) {
                l
            } else {
                return None;
            };
            if self.mentions_loop(other) {
                return None;
            }
            return Some(self.parsed.src(other).to_string());
        }
        None
    }

    fn expr(&self, node: Node<'_>) -> Option<Expr> {
        let p = self.parsed;
        let node = strip_parens(node);
        match node.kind() {
            "number_literal" => Some(Expr::Scalar(p.src(node).to_string())),
            "identifier" => {
                let t = p.src(node);
                if t == self.var {
                    return None;
                }
                if let Some(e) = self.env.get(t) {
                    return Some(e.clone());
                }
                if self.locals.contains(&t) {
                    return None;
                }
                Some(Expr::Scalar(t.to_string()))
            }
            "field_expression" | "qualified_identifier" => {
                (!self.mentions_loop(node)).then(|| Expr::Scalar(p.src(node).to_string()))
            }
            "cast_expression" => self.expr(node.child_by_field_name("value")?),
            "unary_expression" => {
                let op = node.child_by_field_name("operator").map(|o| p.src(o))?;
                let arg = self.expr(node.child_by_field_name("argument")?)?;
                match op {
                    "-" => Some(Expr::Neg(Box::new(arg))),
                    "+" => Some(arg),
                    _ => None,
                }
            }
            "binary_expression" => {
                let op = node.child_by_field_name("operator").map(|o| p.src(o))?;
                let c = match op {
                    "+" => '+',
                    "-" => '-',
                    "*" => '*',
                    "/" => '/',
                    _ => return None,
                };
                let a = self.expr(node.child_by_field_name("left")?)?;
                let b = self.expr(node.child_by_field_name("right")?)?;
                Some(Expr::Bin(c, Box::new(a), Box::new(b)))
            }
            "conditional_expression" => {
                // `a > b ? a : b` and friends.
                let cond = strip_parens(node.child_by_field_name("condition")?);
                let yes = strip_parens(node.child_by_field_name("consequence")?);
                let no = strip_parens(node.child_by_field_name("alternative")?);
                if cond.kind() != "binary_expression" {
                    return None;
                }
                let op = cond.child_by_field_name("operator").map(|o| p.src(o))?;
                let l = p.src(strip_parens(cond.child_by_field_name("left")?));
                let r = p.src(strip_parens(cond.child_by_field_name("right")?));
                let (y, n) = (p.src(yes), p.src(no));
                let bigger_first = match op {
                    ">" | ">=" => (y, n) == (l, r),
                    "<" | "<=" => (y, n) == (r, l),
                    _ => return None,
                };
                let smaller_first = match op {
                    "<" | "<=" => (y, n) == (l, r),
                    ">" | ">=" => (y, n) == (r, l),
                    _ => return None,
                };
                let f = if bigger_first {
                    "Max"
                } else if smaller_first {
                    "Min"
                } else {
                    return None;
                };
                Some(Expr::Func(f, vec![self.expr(yes)?, self.expr(no)?]))
            }
            "call_expression" => {
                let call = Call::of(p, node)?;
                if call.name == "GetValue" && call.args.len() == 1 {
                    let object = call.object?;
                    let off = self.offset(call.args[0])?;
                    let t = p.src(strip_parens(object));
                    return Some(Expr::Load(t.to_string(), off));
                }
                if call.name == "static_cast" && call.args.len() == 1 {
                    return self.expr(call.args[0]);
                }
                let f = match call.name.as_str() {
                    "max" | "fmax" | "fmaxf" | "Max" => "Max",
                    "min" | "fmin" | "fminf" | "Min" => "Min",
                    "abs" | "fabs" | "fabsf" | "Abs" => "Abs",
                    "sqrt" | "sqrtf" | "Sqrt" => "Sqrt",
                    "exp" | "expf" | "Exp" => "Exp",
                    _ => {
                        return (!self.mentions_loop(node))
                            .then(|| Expr::Scalar(p.src(node).to_string()));
                    }
                };
                let want = if f == "Max" || f == "Min" { 2 } else { 1 };
                if call.args.len() != want {
                    return None;
                }
                let args: Option<Vec<Expr>> = call.args.iter().map(|a| self.expr(*a)).collect();
                Some(Expr::Func(f, args?))
            }
            _ => None,
        }
    }
}

fn strip_parens(mut n: Node<'_>) -> Node<'_> {
    while n.kind() == "parenthesized_expression" {
        match syntax::named_children(n).into_iter().next() {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

/// Reads a `for` loop into the expression form.
fn read_loop<'a>(parsed: &Parsed<'a>, node: Node<'_>) -> Option<LoopIr> {
    let var = syntax::loop_var(parsed, node)?;
    let init = node.child_by_field_name("initializer")?;
    let mut cursor = init.walk();
    let decl = init
        .children_by_field_name("declarator", &mut cursor)
        .next()?;
    let start = parsed.src(decl.child_by_field_name("value")?).to_string();
    let cond = strip_parens(node.child_by_field_name("condition")?);
    if cond.kind() != "binary_expression"
        || cond.child_by_field_name("operator").map(|o| parsed.src(o)) != Some("<")
        || parsed.src(cond.child_by_field_name("left")?) != var
    {
        return None;
    }
    let end_node = cond.child_by_field_name("right")?;
    let update = node.child_by_field_name("update")?;
    let u: String = parsed
        .src(update)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if u != format!("{var}++") && u != format!("++{var}") && u != format!("{var}+=1") {
        return None;
    }
    let body = node.child_by_field_name("body")?;
    let stmts: Vec<Node<'_>> = if body.kind() == "compound_statement" {
        syntax::block_statements(body)
    } else {
        vec![body]
    };
    // Names the body declares or assigns.
    let mut locals: Vec<&str> = syntax::declared_names(parsed, body);
    for n in syntax::descendants(body) {
        if n.kind() == "assignment_expression" || n.kind() == "update_expression" {
            if let Some(t) = n
                .child_by_field_name("left")
                .or_else(|| n.child_by_field_name("argument"))
            {
                if t.kind() == "identifier" {
                    locals.push(parsed.src(t));
                }
            }
        }
    }
    if locals.contains(&var) {
        return None;
    }
    let mut reader = Reader {
        parsed,
        var,
        locals: locals.clone(),
        env: BTreeMap::new(),
    };
    // The end must not depend on the body (nor the loop index).
    if reader.mentions_loop(end_node) {
        return None;
    }
    let mut stores = Vec::new();
    for s in stmts {
        match s.kind() {
            "declaration" => {
                let mut cursor = s.walk();
                let ds: Vec<Node<'_>> = s
                    .children_by_field_name("declarator", &mut cursor)
                    .collect();
                for d in ds {
                    if d.kind() != "init_declarator" {
                        return None;
                    }
                    let name = syntax::declared_name(parsed, d)?;
                    let value = d.child_by_field_name("value")?;
                    let e = reader.expr(value)?;
                    reader.env.insert(name.to_string(), e);
                }
            }
            "expression_statement" => {
                let e = syntax::named_children(s).into_iter().next()?;
                if e.kind() == "assignment_expression" {
                    let l = e.child_by_field_name("left")?;
                    if l.kind() != "identifier" {
                        return None;
                    }
                    let name = parsed.src(l);
                    let op = e.child_by_field_name("operator").map(|o| parsed.src(o))?;
                    let r = reader.expr(e.child_by_field_name("right")?)?;
                    let value = match op {
                        "=" => r,
                        "+=" | "-=" | "*=" | "/=" => {
                            let cur = reader.env.get(name).cloned()?;
                            let c = op.chars().next()?;
                            Expr::Bin(c, Box::new(cur), Box::new(r))
                        }
                        _ => return None,
                    };
                    reader.env.insert(name.to_string(), value);
                    continue;
                }
                let call = Call::of(parsed, e)?;
                if call.name != "SetValue" || call.args.len() != 2 {
                    return None;
                }
                let object = strip_parens(call.object?);
                let off = reader.offset(call.args[0])?;
                let value = reader.expr(call.args[1])?;
                stores.push((parsed.src(object).to_string(), off, value));
            }
            "comment" => {}
            _ => return None,
        }
    }
    if stores.is_empty() {
        return None;
    }
    Some(LoopIr {
        start,
        end: parsed.src(end_node).to_string(),
        stores,
    })
}

/// The tensor kind (`LocalTensor`/`GlobalTensor`) and element type of a
/// tensor name declared in the function or the file.
fn tensor_decl<'a>(parsed: &Parsed<'a>, at: Node<'_>, name: &str) -> Option<(&'a str, &'a str)> {
    let scopes = [syntax::enclosing_function(at), Some(parsed.root())];
    for scope in scopes.into_iter().flatten() {
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
            if ty.kind() != "template_type" {
                continue;
            }
            let Some(tname) = ty.child_by_field_name("name") else {
                continue;
            };
            let tname = parsed.src(tname);
            if tname != "LocalTensor" && tname != "GlobalTensor" {
                continue;
            }
            if !syntax::declares(parsed, node, name) {
                continue;
            }
            let args = ty.child_by_field_name("arguments")?;
            let inner = syntax::named_children(args);
            if inner.len() == 1 {
                return Some((tname, parsed.src(inner[0])));
            }
        }
    }
    None
}

/// One vector instruction computing `e` into `dst` (count `n`), where the
/// operands of `e` are given as texts already (`a` tensor or scalar).
fn op_text(
    op: &str,
    dst: &str,
    a: &Operand,
    b: Option<&Operand>,
    n: &str,
    ty: &str,
) -> Option<String> {
    use Operand::{Scalar as S, Tensor as T};
    let sc = |s: &str| format!("static_cast<{ty}>({s})");
    Some(match (op, a, b) {
        ("+", T(x), Some(T(y))) => format!("Add({dst}, {x}, {y}, {n});"),
        ("-", T(x), Some(T(y))) => format!("Sub({dst}, {x}, {y}, {n});"),
        ("*", T(x), Some(T(y))) => format!("Mul({dst}, {x}, {y}, {n});"),
        ("/", T(x), Some(T(y))) => format!("Div({dst}, {x}, {y}, {n});"),
        ("Max", T(x), Some(T(y))) => format!("Max({dst}, {x}, {y}, {n});"),
        ("Min", T(x), Some(T(y))) => format!("Min({dst}, {x}, {y}, {n});"),
        ("+", T(x), Some(S(k))) | ("+", S(k), Some(T(x))) => {
            format!("Adds({dst}, {x}, {}, {n});", sc(k))
        }
        ("*", T(x), Some(S(k))) | ("*", S(k), Some(T(x))) => {
            format!("Muls({dst}, {x}, {}, {n});", sc(k))
        }
        ("-", T(x), Some(S(k))) => format!("Adds({dst}, {x}, {}, {n});", sc(&format!("-({k})"))),
        ("/", T(x), Some(S(k))) => format!(
            "Muls({dst}, {x}, {}, {n});",
            sc(&format!("1.0f / static_cast<float>({k})"))
        ),
        ("Max", T(x), Some(S(k))) | ("Max", S(k), Some(T(x))) => {
            format!("Maxs({dst}, {x}, {}, {n});", sc(k))
        }
        ("Min", T(x), Some(S(k))) | ("Min", S(k), Some(T(x))) => {
            format!("Mins({dst}, {x}, {}, {n});", sc(k))
        }
        ("neg", T(x), None) => format!("Muls({dst}, {x}, {}, {n});", sc("-1")),
        ("Abs", T(x), None) => format!("Abs({dst}, {x}, {n});"),
        ("Sqrt", T(x), None) => format!("Sqrt({dst}, {x}, {n});"),
        ("Exp", T(x), None) => format!("Exp({dst}, {x}, {n});"),
        _ => return None,
    })
}

#[derive(Debug, Clone)]
enum Operand {
    Tensor(String),
    Scalar(String),
}

/// Emits the instructions computing `e` into `dst`, using `fresh` to get a
/// temporary tensor (None: none available), and `load` to name a load.
fn emit(
    e: &Expr,
    dst: &str,
    n: &str,
    ty: &str,
    out: &mut Vec<String>,
    fresh: &mut dyn FnMut() -> Option<String>,
    load: &dyn Fn(&str, &str) -> String,
) -> Option<Operand> {
    if e.is_scalar() {
        return Some(Operand::Scalar(e.scalar_text()));
    }
    match e {
        Expr::Load(t, o) => Some(Operand::Tensor(load(t, o))),
        Expr::Scalar(s) => Some(Operand::Scalar(s.clone())),
        Expr::Neg(a) => {
            let a = operand(a, dst, n, ty, out, fresh, load)?;
            out.push(op_text("neg", dst, &a, None, n, ty)?);
            Some(Operand::Tensor(dst.to_string()))
        }
        Expr::Func(f, args) if args.len() == 1 => {
            let a = operand(&args[0], dst, n, ty, out, fresh, load)?;
            out.push(op_text(f, dst, &a, None, n, ty)?);
            Some(Operand::Tensor(dst.to_string()))
        }
        Expr::Bin(..) | Expr::Func(..) => {
            let (op, a, b) = match e {
                Expr::Bin(c, a, b) => (c.to_string(), a.as_ref(), b.as_ref()),
                Expr::Func(f, args) if args.len() == 2 => (f.to_string(), &args[0], &args[1]),
                _ => return None,
            };
            // The operand with operations goes into `dst` first; a second
            // one needs a temporary.
            let (first, second, swapped) = if b.ops() > a.ops() {
                (b, a, true)
            } else {
                (a, b, false)
            };
            let x = operand(first, dst, n, ty, out, fresh, load)?;
            let y = if second.ops() > 0 {
                let tmp = fresh()?;
                operand(second, &tmp, n, ty, out, fresh, load)?
            } else {
                operand(second, dst, n, ty, out, fresh, load)?
            };
            let (l, r) = if swapped { (y, x) } else { (x, y) };
            // scalar - tensor and scalar / tensor: negate or invert first.
            let text = match (op.as_str(), &l, &r) {
                ("-", Operand::Scalar(k), Operand::Tensor(t)) => {
                    out.push(op_text(
                        "neg",
                        dst,
                        &Operand::Tensor(t.clone()),
                        None,
                        n,
                        ty,
                    )?);
                    op_text(
                        "+",
                        dst,
                        &Operand::Tensor(dst.to_string()),
                        Some(&Operand::Scalar(k.clone())),
                        n,
                        ty,
                    )?
                }
                ("/", Operand::Scalar(k), Operand::Tensor(t)) => {
                    out.push(format!("Reciprocal({dst}, {t}, {n});"));
                    op_text(
                        "*",
                        dst,
                        &Operand::Tensor(dst.to_string()),
                        Some(&Operand::Scalar(k.clone())),
                        n,
                        ty,
                    )?
                }
                _ => op_text(&op, dst, &l, Some(&r), n, ty)?,
            };
            out.push(text);
            Some(Operand::Tensor(dst.to_string()))
        }
    }
}

fn operand(
    e: &Expr,
    dst: &str,
    n: &str,
    ty: &str,
    out: &mut Vec<String>,
    fresh: &mut dyn FnMut() -> Option<String>,
    load: &dyn Fn(&str, &str) -> String,
) -> Option<Operand> {
    emit(e, dst, n, ty, out, fresh, load)
}

/// What the motif does to one loop: the replacement text, and for a GM
/// loop the scratch buffer it needs (slots).
pub(crate) struct Compiled {
    /// Text replacing the loop statement.
    pub text: String,
    /// For a GM loop: operand slots of the scratch buffer.
    pub slots: usize,
    /// A GM loop (needs the scratch buffer).
    pub gm: bool,
    /// What it is, in words.
    pub note: String,
}

/// Compiles a `for` loop, or None when it is not element-wise code the
/// motif knows. `scratch` names the TBuf a GM loop uses.
pub(crate) fn compile(parsed: &Parsed<'_>, node: Node<'_>, scratch: &str) -> Option<Compiled> {
    let ir = read_loop(parsed, node)?;
    let mut loads = Vec::new();
    for (_, _, e) in &ir.stores {
        e.loads(&mut loads);
    }
    let mut kinds = Vec::new();
    for name in loads
        .iter()
        .map(|(t, _)| t)
        .chain(ir.stores.iter().map(|(t, _, _)| t))
    {
        let decl = tensor_decl(parsed, node, name)?;
        if !kinds.contains(&decl) {
            kinds.push(decl);
        }
    }
    if kinds.len() != 1 {
        return None;
    }
    let (kind, ty) = kinds[0];
    let text = parsed.text;
    let indent = syntax::indent_at(text, node.start_byte());
    let line = syntax::line_of(text, node.start_byte());
    if kind == "LocalTensor" {
        let zero = |s: &str| matches!(s.trim(), "0" | "0u" | "0U");
        // A tensor stored at one offset and loaded at another carries
        // values from one element to the next: not element-wise.
        for (t, o) in &loads {
            if ir.stores.iter().any(|(d, od, _)| d == t && od != o) {
                return None;
            }
        }
        let view = |t: &str, o: &str| -> String {
            match (zero(o), zero(&ir.start)) {
                (true, true) => t.to_string(),
                (true, false) => format!("{t}[{}]", ir.start),
                (false, true) => format!("{t}[{o}]"),
                (false, false) => format!("{t}[{o} + {}]", ir.start),
            }
        };
        let count = if zero(&ir.start) {
            ir.end.clone()
        } else {
            format!("({}) - ({})", ir.end, ir.start)
        };
        let n = &count;
        let mut out: Vec<String> = Vec::new();
        for (dst, off, e) in &ir.stores {
            let d = view(dst, off);
            if e.is_scalar() {
                out.push(format!(
                    "Duplicate({d}, static_cast<{ty}>({}), {n});",
                    e.scalar_text()
                ));
            } else {
                // The destination may be read only before its first write.
                let mut ls = Vec::new();
                e.loads(&mut ls);
                if ls.iter().any(|(t, _)| t == dst) && e.ops() > 1 {
                    return None;
                }
                let mut none = || None;
                let load = |t: &str, o: &str| view(t, o);
                let mut ops = Vec::new();
                match emit(e, &d, n, ty, &mut ops, &mut none, &load)? {
                    Operand::Tensor(t) if t == d => out.extend(ops),
                    // A plain copy of another tensor.
                    Operand::Tensor(src) => {
                        out.push(format!("Adds({d}, {src}, static_cast<{ty}>(0), {n});"))
                    }
                    Operand::Scalar(_) => return None,
                }
            }
        }
        let body = out.join(&format!("\n{indent}"));
        return Some(Compiled {
            text: body,
            slots: 0,
            gm: false,
            note: format!(
                "scalar loop over UB at line {line}: {} store(s)",
                ir.stores.len()
            ),
        });
    }
    // GM: chunks through a scratch buffer.
    let slot = |k: usize| format!("ascVec[{k} * ascChunk]");
    let mut slots = loads.len();
    let load_slot: BTreeMap<(String, String), usize> = loads
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, l)| (l, i))
        .collect();
    let n = "ascLen";
    let mut compute: Vec<String> = Vec::new();
    let mut outs: Vec<(String, String, usize)> = Vec::new();
    for (dst, off, e) in &ir.stores {
        let target = slots;
        slots += 1;
        let mut next = slots;
        let mut fresh = || {
            let k = next;
            next += 1;
            Some(slot(k))
        };
        let load =
            |t: &str, o: &str| slot(*load_slot.get(&(t.to_string(), o.to_string())).unwrap_or(&0));
        let dst_slot = slot(target);
        let mut ops = Vec::new();
        let value = emit(e, &dst_slot, n, ty, &mut ops, &mut fresh, &load)?;
        slots = next;
        match value {
            Operand::Tensor(t) if t == dst_slot => {
                compute.extend(ops);
                outs.push((dst.clone(), off.clone(), target));
            }
            Operand::Tensor(t) => {
                // A copy: store straight from the load's slot.
                let k = loads
                    .iter()
                    .position(|l| slot(load_slot[l]) == t)
                    .unwrap_or(target);
                outs.push((dst.clone(), off.clone(), k));
            }
            Operand::Scalar(s) => {
                compute.push(format!(
                    "Duplicate({dst_slot}, static_cast<{ty}>({s}), {n});"
                ));
                outs.push((dst.clone(), off.clone(), target));
            }
        }
    }
    if slots > MAX_SLOTS {
        return None;
    }
    let i2 = format!("{indent}    ");
    let i3 = format!("{indent}        ");
    let mut b = String::new();
    b.push_str(&format!("{{\n{i2}// vectorised from the scalar loop: chunks of up to {CHUNK_BYTES} bytes per operand\n"));
    b.push_str(&format!(
        "{i2}AscendC::LocalTensor<{ty}> ascVec = {scratch}.Get<{ty}>();\n"
    ));
    b.push_str(&format!(
        "{i2}const uint32_t ascChunk = {CHUNK_BYTES} / sizeof({ty});\n"
    ));
    b.push_str(&format!(
        "{i2}const uint32_t ascEnd = static_cast<uint32_t>({});\n",
        ir.end
    ));
    b.push_str(&format!("{i2}AscendC::PipeBarrier<PIPE_ALL>();\n"));
    b.push_str(&format!(
        "{i2}for (uint32_t ascOff = static_cast<uint32_t>({}); ascOff < ascEnd; ascOff += ascChunk) {{\n",
        ir.start
    ));
    b.push_str(&format!(
        "{i3}uint32_t ascLen = ascEnd - ascOff < ascChunk ? ascEnd - ascOff : ascChunk;\n"
    ));
    b.push_str(&format!("{i3}AscendC::DataCopyExtParams ascParams{{1, static_cast<uint32_t>(ascLen * sizeof({ty})), 0, 0, 0}};\n"));
    if !loads.is_empty() {
        b.push_str(&format!(
            "{i3}AscendC::DataCopyPadExtParams<{ty}> ascPad{{false, 0, 0, 0}};\n"
        ));
    }
    for (i, (t, o)) in loads.iter().enumerate() {
        b.push_str(&format!(
            "{i3}AscendC::DataCopyPad({}, {t}[{} + ascOff], ascParams, ascPad);\n",
            slot(i),
            gm_offset(o)
        ));
    }
    b.push_str(&format!("{i3}AscendC::PipeBarrier<PIPE_ALL>();\n"));
    for c in &compute {
        b.push_str(&format!("{i3}AscendC::{c}\n"));
    }
    b.push_str(&format!("{i3}AscendC::PipeBarrier<PIPE_ALL>();\n"));
    for (t, o, k) in &outs {
        b.push_str(&format!(
            "{i3}AscendC::DataCopyPad({t}[{} + ascOff], {}, ascParams);\n",
            gm_offset(o),
            slot(*k)
        ));
    }
    b.push_str(&format!("{i3}AscendC::PipeBarrier<PIPE_ALL>();\n"));
    b.push_str(&format!("{i2}}}\n{indent}}}"));
    Some(Compiled {
        text: b,
        slots,
        gm: true,
        note: format!(
            "scalar loop over GM at line {line}: {} store(s), {slots} chunk operand(s)",
            ir.stores.len()
        ),
    })
}

fn gm_offset(o: &str) -> String {
    if o.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        o.to_string()
    } else {
        format!("({o})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile_first(body: &str) -> Option<Compiled> {
        let text = format!("template <typename T>\nclass K {{\n    void F() {{\n{body}\n    }}\n    AscendC::GlobalTensor<T> xGm, yGm, zGm;\n    AscendC::LocalTensor<float> a, b, c;\n}};\n");
        let parsed = Parsed::new(&text).unwrap();
        let node = parsed
            .all()
            .into_iter()
            .find(|n| n.kind() == "for_statement")?;
        compile(&parsed, node, "ascVecBuf0")
    }

    #[test]
    fn a_gm_tail_becomes_chunks_of_vector_work() {
        let c = compile_first("        for (uint32_t i = 0; i < tail; i++) {\n            zGm.SetValue(base + i, xGm.GetValue(base + i) + yGm.GetValue(base + i));\n        }").unwrap();
        assert!(c.gm);
        assert_eq!(c.slots, 3);
        assert!(c.text.contains("AscendC::DataCopyPad(ascVec[0 * ascChunk], xGm[base + ascOff], ascParams, ascPad);"), "{}", c.text);
        assert!(c.text.contains("AscendC::Add(ascVec[2 * ascChunk], ascVec[0 * ascChunk], ascVec[1 * ascChunk], ascLen);"), "{}", c.text);
        assert!(
            c.text.contains(
                "AscendC::DataCopyPad(zGm[base + ascOff], ascVec[2 * ascChunk], ascParams);"
            ),
            "{}",
            c.text
        );
    }

    #[test]
    fn multi_statement_bodies_with_locals_and_clamps_compile() {
        let c = compile_first("        for (uint32_t i = 0; i < n; ++i) {\n            float v = a.GetValue(i);\n            float w = v * scale + bias;\n            w = w > lo ? w : lo;\n            c.SetValue(i, w);\n        }").unwrap();
        assert!(!c.gm);
        assert_eq!(
            c.text.replace("\n        ", " | "),
            "Muls(c, a, static_cast<float>(scale), n); | Adds(c, c, static_cast<float>(bias), n); | Maxs(c, c, static_cast<float>(lo), n);"
        );
        // A constant store is a Duplicate.
        let z = compile_first("        for (uint32_t j = 0; j < cnt; j++) {\n            b.SetValue(j, 0);\n        }").unwrap();
        assert_eq!(z.text, "Duplicate(b, static_cast<float>(0), cnt);");
        // A row of a tile, from an offset.
        let row = compile_first("        for (int32_t j = 0; j < zeros; j++) {\n            b.SetValue(r * pitch + j, static_cast<float>(0));\n        }").unwrap();
        assert_eq!(
            row.text,
            "Duplicate(b[r * pitch], static_cast<float>(0), zeros);"
        );
    }

    #[test]
    fn loop_carried_values_index_values_and_unknown_calls_decline() {
        for body in [
            "        float s = 0;\n        for (uint32_t i = 0; i < n; i++) {\n            s = s + a.GetValue(i);\n            c.SetValue(i, s);\n        }",
            "        for (uint32_t i = 0; i < n; i++) {\n            c.SetValue(i, i);\n        }",
            "        for (uint32_t i = 0; i < n; i++) {\n            c.SetValue(i, foo(a.GetValue(i)));\n        }",
            "        for (uint32_t i = 0; i < n; i++) {\n            if (a.GetValue(i) > 0) { c.SetValue(i, 1); }\n        }",
            "        for (uint32_t i = 0; i < n; i++) {\n            c.SetValue(i, c.GetValue(i + 1));\n        }",
            "        for (uint32_t i = 0; i < n; i++) {\n            zGm.SetValue(i, a.GetValue(i));\n        }",
        ] {
            assert!(compile_first(body).is_none(), "{body}");
        }
    }
}
