//! tree-sitter-cpp helpers shared by the motifs: parsing, finding calls and
//! loops, reading a call's name and arguments, and rewriting a text by byte
//! ranges.
//!
//! AscendC sources carry macros the grammar does not know (`__aicore__`,
//! `__global__`, `GM_ADDR`); tree-sitter recovers around them, and the
//! constructs the motifs rewrite (calls, statements, loops, declarations)
//! parse as ordinary C++. A motif only rewrites nodes that parsed without
//! an error inside them.

use std::ops::Range;
use tree_sitter::{Node, Parser, Tree};

/// A parsed C++ file.
pub(crate) struct Parsed<'a> {
    /// The text.
    pub text: &'a str,
    /// Its syntax tree.
    pub tree: Tree,
}

impl<'a> Parsed<'a> {
    /// Parses `text` as C++; None only when the parser cannot be set up.
    pub fn new(text: &'a str) -> Option<Parsed<'a>> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .ok()?;
        let tree = parser.parse(mask_qualifiers(text), None)?;
        Some(Parsed { text, tree })
    }

    /// The root node.
    pub fn root(&self) -> Node<'_> {
        self.tree.root_node()
    }

    /// The source text of a node.
    pub fn src(&self, node: Node<'_>) -> &'a str {
        &self.text[node.byte_range()]
    }

    /// Every node of the tree in document order.
    pub fn all(&self) -> Vec<Node<'_>> {
        descendants(self.root())
    }

    /// Every call expression, in document order.
    pub fn calls(&self) -> Vec<Call<'_>> {
        self.all()
            .into_iter()
            .filter_map(|n| Call::of(self, n))
            .collect()
    }
}

/// AscendC's function and address-space qualifiers, which the grammar
/// does not know.
const QUALIFIERS: [&str; 7] = [
    "__aicore__",
    "__global__",
    "__gm__",
    "__ubuf__",
    "__inout_pipe__",
    "__in_pipe__",
    "__out_pipe__",
];

/// `text` with every AscendC qualifier blanked out (same length, so byte
/// offsets stay valid for the original text).
fn mask_qualifiers(text: &str) -> String {
    let mut out = text.to_string();
    for q in QUALIFIERS {
        if out.contains(q) {
            out = out.replace(q, &" ".repeat(q.len()));
        }
    }
    out
}

/// Every node below (and including) `node`, in document order.
pub(crate) fn descendants(node: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        out.push(n);
        let children: Vec<Node<'_>> = n.children(&mut cursor).collect();
        for c in children.into_iter().rev() {
            stack.push(c);
        }
    }
    out
}

/// The named children of a node that are not comments.
pub(crate) fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// A call expression: `name(args)`, `obj.name(args)`, `name<T>(args)`.
#[derive(Clone)]
pub(crate) struct Call<'t> {
    /// The call_expression node.
    pub node: Node<'t>,
    /// The called name without object or template arguments
    /// (`DataCopy`, `InitBuffer`, `PipeBarrier`).
    pub name: String,
    /// Template arguments of the callee as written (`PIPE_ALL`), if any.
    pub template_args: Option<String>,
    /// The object of a member call (`pipe`, `inQueueX`), if any.
    pub object: Option<Node<'t>>,
    /// The arguments.
    pub args: Vec<Node<'t>>,
}

impl<'t> Call<'t> {
    /// Reads `node` as a call; None for other nodes.
    pub fn of(parsed: &Parsed<'_>, node: Node<'t>) -> Option<Call<'t>> {
        if node.kind() != "call_expression" || node.has_error() {
            return None;
        }
        let function = node.child_by_field_name("function")?;
        let arguments = node.child_by_field_name("arguments")?;
        let (name_node, template_args, object) = callee(function)?;
        Some(Call {
            node,
            name: parsed.src(name_node).to_string(),
            template_args: template_args.map(|t| {
                let s = parsed.src(t);
                s.trim_start_matches('<')
                    .trim_end_matches('>')
                    .trim()
                    .to_string()
            }),
            object,
            args: named_children(arguments),
        })
    }

    /// The statement this call is the whole expression of
    /// (`Foo(a, b);`), if it is one.
    pub fn statement(&self) -> Option<Node<'t>> {
        let parent = self.node.parent()?;
        (parent.kind() == "expression_statement").then_some(parent)
    }
}

/// Splits a callee into (name, template arguments, object).
fn callee(function: Node<'_>) -> Option<(Node<'_>, Option<Node<'_>>, Option<Node<'_>>)> {
    match function.kind() {
        "identifier" | "field_identifier" => Some((function, None, None)),
        "template_function" | "template_method" => {
            let name = function.child_by_field_name("name")?;
            let args = function.child_by_field_name("arguments");
            Some((innermost_name(name)?, args, None))
        }
        "qualified_identifier" => {
            let name = function.child_by_field_name("name")?;
            callee(name)
        }
        // `obj.template Method<T>()`
        "dependent_name" => callee(named_children(function).into_iter().next()?),
        "field_expression" => {
            let object = function.child_by_field_name("argument");
            let field = function.child_by_field_name("field")?;
            let (name, targs, _) = callee(field)?;
            Some((name, targs, object))
        }
        _ => None,
    }
}

fn innermost_name(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "identifier" | "field_identifier" => Some(node),
        "qualified_identifier" => innermost_name(node.child_by_field_name("name")?),
        _ => None,
    }
}

/// The nearest ancestor of `node` of one of `kinds`.
pub(crate) fn ancestor<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if kinds.contains(&n.kind()) {
            return Some(n);
        }
        cur = n.parent();
    }
    None
}

/// The function definition that contains `node`.
pub(crate) fn enclosing_function(node: Node<'_>) -> Option<Node<'_>> {
    ancestor(node, &["function_definition"])
}

/// True when `node` lies inside `outer` (or is it).
pub(crate) fn within(node: Node<'_>, outer: Node<'_>) -> bool {
    node.start_byte() >= outer.start_byte() && node.end_byte() <= outer.end_byte()
}

/// The identifiers used in `node` (texts), in document order.
pub(crate) fn identifiers<'a>(parsed: &Parsed<'a>, node: Node<'_>) -> Vec<&'a str> {
    descendants(node)
        .into_iter()
        .filter(|n| n.kind() == "identifier")
        .map(|n| parsed.src(n))
        .collect()
}

/// The name of the function definition `func` (`Process`, `KernelAdd::Init`).
pub(crate) fn function_name<'a>(parsed: &Parsed<'a>, func: Node<'_>) -> Option<&'a str> {
    let mut decl = func.child_by_field_name("declarator")?;
    loop {
        match decl.kind() {
            "function_declarator" => {
                let d = decl.child_by_field_name("declarator")?;
                return Some(parsed.src(d));
            }
            _ => decl = decl.child_by_field_name("declarator")?,
        }
    }
}

/// The indentation (spaces and tabs) of the line `byte` is on.
pub(crate) fn indent_at(text: &str, byte: usize) -> String {
    let line_start = text[..byte].rfind('\n').map(|p| p + 1).unwrap_or(0);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The byte range of the whole lines `range` touches, including the final
/// newline (to delete a statement with its line).
pub(crate) fn line_range(text: &str, range: Range<usize>) -> Range<usize> {
    let start = text[..range.start].rfind('\n').map(|p| p + 1).unwrap_or(0);
    let end = text[range.end..]
        .find('\n')
        .map(|p| range.end + p + 1)
        .unwrap_or(text.len());
    start..end
}

/// True when the text before `range` on its line and after it on its line
/// is blank (the node is alone on its lines).
pub(crate) fn alone_on_lines(text: &str, range: Range<usize>) -> bool {
    let lines = line_range(text, range.clone());
    text[lines.start..range.start].trim().is_empty() && text[range.end..lines.end].trim().is_empty()
}

/// 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].matches('\n').count() + 1
}

/// Applies non-overlapping replacements (byte range → new text) to `text`.
/// None when two edits overlap or a range is out of bounds.
pub(crate) fn apply_edits(text: &str, edits: &[(Range<usize>, String)]) -> Option<String> {
    let mut sorted: Vec<&(Range<usize>, String)> = edits.iter().collect();
    sorted.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for (range, new) in sorted {
        if range.start < pos || range.end > text.len() || range.start > range.end {
            return None;
        }
        out.push_str(text.get(pos..range.start)?);
        out.push_str(new);
        pos = range.end;
    }
    out.push_str(text.get(pos..)?);
    Some(out)
}

/// Re-indents a block of text: every line gets `indent` prepended (empty
/// lines stay empty).
pub(crate) fn indent_lines(block: &str, indent: &str) -> String {
    block
        .lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{indent}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The element type named in a declaration of `name` inside `scope`
/// (`LocalTensor<T> name`, `const LocalTensor<float>& name`): "T", "float".
pub(crate) fn tensor_elem_type<'a>(
    parsed: &Parsed<'a>,
    scope: Node<'_>,
    name: &str,
) -> Option<&'a str> {
    for node in descendants(scope) {
        let kind = node.kind();
        if kind != "declaration" && kind != "parameter_declaration" && kind != "field_declaration" {
            continue;
        }
        let Some(ty) = node.child_by_field_name("type") else {
            continue;
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
        if !declares(parsed, node, name) {
            continue;
        }
        let args = ty.child_by_field_name("arguments")?;
        let inner = named_children(args);
        if inner.len() == 1 {
            return Some(parsed.src(inner[0]));
        }
    }
    None
}

/// True when the declaration `decl` declares `name`.
pub(crate) fn declares(parsed: &Parsed<'_>, decl: Node<'_>, name: &str) -> bool {
    let mut cursor = decl.walk();
    let declarators: Vec<Node<'_>> = decl
        .children_by_field_name("declarator", &mut cursor)
        .collect();
    declarators
        .into_iter()
        .any(|d| declared_name(parsed, d) == Some(name))
}

/// The identifier a declarator declares (`x` of `x = 1`, `&x`, `x[3]`).
pub(crate) fn declared_name<'a>(parsed: &Parsed<'a>, declarator: Node<'_>) -> Option<&'a str> {
    match declarator.kind() {
        "identifier" | "field_identifier" => Some(parsed.src(declarator)),
        "init_declarator" | "reference_declarator" | "pointer_declarator" | "array_declarator" => {
            let inner = declarator
                .child_by_field_name("declarator")
                .or_else(|| named_children(declarator).into_iter().next())?;
            declared_name(parsed, inner)
        }
        _ => None,
    }
}

/// The statements of a compound statement (`{ ... }`), comments excluded.
pub(crate) fn block_statements(block: Node<'_>) -> Vec<Node<'_>> {
    named_children(block)
}

/// The root identifier of a tensor expression: `x` of `x`, `x[3]`,
/// `x.template ReinterpretCast<half>()`; a `buf.Get<T>()` call gives `buf`.
pub(crate) fn tensor_root<'a>(parsed: &Parsed<'a>, node: Node<'_>) -> Option<&'a str> {
    match node.kind() {
        "identifier" => Some(parsed.src(node)),
        "subscript_expression" => tensor_root(parsed, node.child_by_field_name("argument")?),
        "parenthesized_expression" => tensor_root(parsed, named_children(node).into_iter().next()?),
        "call_expression" => {
            let function = node.child_by_field_name("function")?;
            if function.kind() == "field_expression" {
                tensor_root(parsed, function.child_by_field_name("argument")?)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// AscendC vector instructions (count and mask forms) the motifs know.
pub(crate) const VECTOR_OPS: [&str; 44] = [
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Max",
    "Min",
    "And",
    "Or",
    "AddRelu",
    "SubRelu",
    "FusedMulAdd",
    "MulAddDst",
    "Exp",
    "Ln",
    "Abs",
    "Reciprocal",
    "Sqrt",
    "Rsqrt",
    "Relu",
    "Not",
    "Neg",
    "Adds",
    "Muls",
    "Maxs",
    "Mins",
    "Subs",
    "Divs",
    "LeakyRelu",
    "Axpy",
    "Duplicate",
    "Cast",
    "Compare",
    "Compares",
    "Select",
    "CreateVecIndex",
    "Brcb",
    "WholeReduceSum",
    "WholeReduceMax",
    "WholeReduceMin",
    "BlockReduceSum",
    "ReduceSum",
    "ReduceMax",
    "ReduceMin",
    "Gather",
];

/// Copies between GM and UB.
pub(crate) const COPY_OPS: [&str; 2] = ["DataCopy", "DataCopyPad"];

/// Queue operations.
pub(crate) const QUEUE_OPS: [&str; 4] = ["EnQue", "DeQue", "AllocTensor", "FreeTensor"];

/// True for a call of a vector instruction.
pub(crate) fn is_vector_op(name: &str) -> bool {
    VECTOR_OPS.contains(&name)
}

/// The names of the functions of a file that (directly or through other
/// functions of the file) copy data, run vector instructions or use
/// queues: the stages of a tile loop.
pub(crate) fn stage_functions(parsed: &Parsed<'_>) -> Vec<String> {
    let funcs: Vec<(String, Vec<String>)> = parsed
        .all()
        .into_iter()
        .filter(|n| n.kind() == "function_definition")
        .filter_map(|f| {
            let name = function_name(parsed, f)?;
            let short = name.rsplit("::").next().unwrap_or(name).to_string();
            let body = f.child_by_field_name("body")?;
            let called: Vec<String> = descendants(body)
                .into_iter()
                .filter_map(|n| Call::of(parsed, n))
                .map(|c| c.name)
                .collect();
            Some((short, called))
        })
        .collect();
    let mut stages: Vec<String> = Vec::new();
    loop {
        let mut grew = false;
        for (name, called) in &funcs {
            if stages.contains(name) {
                continue;
            }
            let is_stage = called.iter().any(|c| {
                is_vector_op(c)
                    || COPY_OPS.contains(&c.as_str())
                    || QUEUE_OPS.contains(&c.as_str())
                    || stages.contains(c)
            });
            if is_stage {
                stages.push(name.clone());
                grew = true;
            }
        }
        if !grew {
            return stages;
        }
    }
}

/// `M<T>` of `obj.template M<T>` (a `dependent_name`), else the node.
pub(crate) fn unwrap_dependent(node: Node<'_>) -> Node<'_> {
    if node.kind() == "dependent_name" {
        if let Some(inner) = named_children(node).into_iter().next() {
            return inner;
        }
    }
    node
}

/// The body of a `for` statement when it is a `{ ... }` block.
pub(crate) fn for_body(node: Node<'_>) -> Option<Node<'_>> {
    if node.kind() != "for_statement" {
        return None;
    }
    let body = node.child_by_field_name("body")?;
    (body.kind() == "compound_statement").then_some(body)
}

/// True when `stmt` sits directly in a `{ ... }` block (so statements can
/// be inserted before or after it).
pub(crate) fn in_block(stmt: Node<'_>) -> bool {
    stmt.parent()
        .is_some_and(|p| p.kind() == "compound_statement")
}

/// The call of an expression statement (`Foo(a);`), if it is one.
pub(crate) fn statement_call<'t>(parsed: &Parsed<'_>, stmt: Node<'t>) -> Option<Call<'t>> {
    if stmt.kind() != "expression_statement" {
        return None;
    }
    let expr = named_children(stmt).into_iter().next()?;
    Call::of(parsed, expr)
}

/// The loop variable of `for (T v = ...; ...)`.
pub(crate) fn loop_var<'a>(parsed: &Parsed<'a>, for_node: Node<'_>) -> Option<&'a str> {
    let init = for_node.child_by_field_name("initializer")?;
    if init.kind() != "declaration" {
        return None;
    }
    let mut cursor = init.walk();
    let first = init
        .children_by_field_name("declarator", &mut cursor)
        .next()?;
    declared_name(parsed, first)
}

/// Names declared anywhere inside `node` (declarations and parameters).
pub(crate) fn declared_names<'a>(parsed: &Parsed<'a>, node: Node<'_>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for n in descendants(node) {
        if n.kind() == "declaration" || n.kind() == "parameter_declaration" {
            let mut cursor = n.walk();
            let ds: Vec<Node<'_>> = n
                .children_by_field_name("declarator", &mut cursor)
                .collect();
            out.extend(ds.into_iter().filter_map(|d| declared_name(parsed, d)));
        }
    }
    out
}

/// Texts of the arguments of a call.
pub(crate) fn arg_texts<'a>(parsed: &Parsed<'a>, call: &Call<'_>) -> Vec<&'a str> {
    call.args.iter().map(|a| parsed.src(*a)).collect()
}

/// `expr[index]` for a tensor expression, parenthesised when needed.
pub(crate) fn subscript(expr: &str, index: &str) -> String {
    let simple = expr.chars().all(|c| c.is_alphanumeric() || c == '_')
        || (expr.ends_with(']') || expr.ends_with(')')) && !expr.contains(' ');
    if simple {
        format!("{expr}[{index}]")
    } else {
        format!("({expr})[{index}]")
    }
}

/// Strips one trailing `[index]` from a tensor expression (`x[i]` → `x`).
pub(crate) fn strip_subscript<'a>(
    parsed: &Parsed<'a>,
    node: Node<'_>,
) -> Option<(&'a str, &'a str)> {
    if node.kind() != "subscript_expression" {
        return None;
    }
    let base = node.child_by_field_name("argument")?;
    let index = node
        .child_by_field_name("indices")
        .or_else(|| node.child_by_field_name("index"))?;
    let index_text = parsed.src(index);
    let index_text = index_text
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim();
    let mut base_text = parsed.src(base);
    if base.kind() == "parenthesized_expression" {
        base_text = base_text[1..base_text.len() - 1].trim();
    }
    Some((base_text, index_text))
}

/// The element type of a tensor expression: the declared `LocalTensor<T>`
/// or `GlobalTensor<T>` of its root identifier, looked up in the enclosing
/// function, then in the whole file (class members); `buf.Get<T>()` gives T.
pub(crate) fn elem_type_of<'a>(parsed: &Parsed<'a>, expr: Node<'_>) -> Option<&'a str> {
    if expr.kind() == "call_expression" {
        let function = expr.child_by_field_name("function")?;
        if function.kind() == "field_expression" {
            let field = unwrap_dependent(function.child_by_field_name("field")?);
            if field.kind() == "template_method" {
                let args = field.child_by_field_name("arguments")?;
                let inner = named_children(args);
                if inner.len() == 1 && parsed.src(field.child_by_field_name("name")?) == "Get" {
                    return Some(parsed.src(inner[0]));
                }
            }
        }
        return None;
    }
    if expr.kind() == "subscript_expression" {
        return elem_type_of(parsed, expr.child_by_field_name("argument")?);
    }
    let root = tensor_root(parsed, expr)?;
    if let Some(func) = enclosing_function(expr) {
        if let Some(t) = tensor_elem_type(parsed, func, root) {
            return Some(t);
        }
    }
    tensor_elem_type(parsed, parsed.root(), root)
}

/// An integer literal's text (`128`, `64u`, `0x40UL`) as its value and
/// suffix; None for anything else.
pub(crate) fn int_literal(text: &str) -> Option<(i64, String)> {
    let t = text.trim();
    let digits_end = t.find(['u', 'U', 'l', 'L']).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(digits_end);
    if !suffix.chars().all(|c| matches!(c, 'u' | 'U' | 'l' | 'L')) {
        return None;
    }
    let v = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(h, 16).ok()?
    } else if digits.chars().all(|c| c.is_ascii_digit()) && !digits.is_empty() {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some((v, suffix.to_string()))
}

/// [`int_literal`] with an optional leading minus (`-1`, `- 1`).
pub(crate) fn signed_int_literal(text: &str) -> Option<(i64, String)> {
    match text.trim().strip_prefix('-') {
        Some(rest) => int_literal(rest).map(|(v, s)| (-v, s)),
        None => int_literal(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = r#"
#include "kernel_operator.h"
using namespace AscendC;
template <typename T>
class K {
public:
    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
        Muls(yLocal, xLocal, scalar, length);
        PipeBarrier<PIPE_ALL>();
        pipe->InitBuffer(inQueueX, tiling.bufferNum, tileLength * sizeof(T));
        outQueueY.EnQue<T>(yLocal);
    }
private:
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
};
extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
}
"#;

    #[test]
    fn reads_calls_of_every_form() {
        let q = Parsed::new("void f() { LocalTensor<T> l = queue.template DeQue<T>(); }").unwrap();
        let deque = q.calls().into_iter().find(|c| c.name == "DeQue").unwrap();
        assert_eq!(deque.template_args.as_deref(), Some("T"));
        assert_eq!(q.src(deque.object.unwrap()), "queue");
        let p = Parsed::new(KERNEL).unwrap();
        let calls = p.calls();
        let names: Vec<String> = calls.iter().map(|c| c.name.clone()).collect();
        assert!(names.contains(&"Muls".to_string()), "{names:?}");
        assert!(names.contains(&"PipeBarrier".to_string()), "{names:?}");
        assert!(names.contains(&"InitBuffer".to_string()), "{names:?}");
        assert!(names.contains(&"DeQue".to_string()), "{names:?}");
        let muls = calls.iter().find(|c| c.name == "Muls").unwrap();
        let args: Vec<&str> = muls.args.iter().map(|a| p.src(*a)).collect();
        assert_eq!(args, ["yLocal", "xLocal", "scalar", "length"]);
        assert!(muls.statement().is_some());
        let barrier = calls.iter().find(|c| c.name == "PipeBarrier").unwrap();
        assert_eq!(barrier.template_args.as_deref(), Some("PIPE_ALL"));
        let init = calls.iter().find(|c| c.name == "InitBuffer").unwrap();
        assert_eq!(p.src(init.object.unwrap()), "pipe");
        assert_eq!(init.args.len(), 3);
    }

    #[test]
    fn finds_the_element_type_of_a_tensor() {
        let p = Parsed::new(KERNEL).unwrap();
        let muls = p.calls().into_iter().find(|c| c.name == "Muls").unwrap();
        let func = enclosing_function(muls.node).unwrap();
        assert_eq!(function_name(&p, func), Some("Compute"));
        assert_eq!(tensor_elem_type(&p, func, "yLocal"), Some("T"));
        assert_eq!(tensor_elem_type(&p, func, "nothing"), None);
    }

    #[test]
    fn every_builtin_kernel_and_host_file_parses_without_errors() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops");
        let mut checked = 0;
        for op in std::fs::read_dir(&dir).unwrap() {
            let op = op.unwrap().path();
            for sub in ["op_kernel", "op_host"] {
                let Ok(files) = std::fs::read_dir(op.join(sub)) else {
                    continue;
                };
                for f in files {
                    let f = f.unwrap().path();
                    if f.extension().and_then(|e| e.to_str()) != Some("cpp") {
                        continue;
                    }
                    let text = std::fs::read_to_string(&f).unwrap();
                    let p = Parsed::new(&text).unwrap();
                    let bad = p.all().into_iter().find(|n| n.is_error() || n.is_missing());
                    assert!(
                        bad.is_none(),
                        "{}: syntax error at line {}",
                        f.display(),
                        line_of(&text, bad.unwrap().start_byte())
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 12, "only {checked} files");
    }

    #[test]
    fn stage_functions_are_found_through_calls() {
        let p = Parsed::new(KERNEL).unwrap();
        assert_eq!(stage_functions(&p), ["Compute"]);
        let text = "void A() { B(); }\nvoid B() { DataCopy(x, y, 8); }\nvoid C() { int x = 1; }\n";
        let p = Parsed::new(text).unwrap();
        let mut s = stage_functions(&p);
        s.sort();
        assert_eq!(s, ["A", "B"]);
    }

    #[test]
    fn tensor_types_and_subscripts() {
        let p = Parsed::new(KERNEL).unwrap();
        let muls = p.calls().into_iter().find(|c| c.name == "Muls").unwrap();
        assert_eq!(elem_type_of(&p, muls.args[0]), Some("T"));
        assert_eq!(subscript("xLocal", "i"), "xLocal[i]");
        assert_eq!(subscript("xGm[offset]", "i"), "xGm[offset][i]");
        assert_eq!(subscript("a + b", "i"), "(a + b)[i]");
        let q = Parsed::new("void f() { Foo(x[i * 2], buf.Get<float>()); }").unwrap();
        let foo = q.calls().into_iter().find(|c| c.name == "Foo").unwrap();
        assert_eq!(strip_subscript(&q, foo.args[0]), Some(("x", "i * 2")));
        assert_eq!(elem_type_of(&q, foo.args[1]), Some("float"));
    }

    #[test]
    fn edits_apply_in_order_and_refuse_overlaps() {
        let text = "abcdef";
        assert_eq!(
            apply_edits(text, &[(4..5, "E".into()), (0..1, "A".into())]).unwrap(),
            "AbcdEf"
        );
        assert!(apply_edits(text, &[(0..3, "x".into()), (2..4, "y".into())]).is_none());
        assert_eq!(line_range("a\n  bc;\nd", 4..7), 2..8);
        assert_eq!(indent_at("a\n  bc;\nd", 5), "  ");
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}
