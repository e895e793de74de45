//! Inputs whose values the host tiling reads: `GetInputTensor(i)` of the
//! tiling context followed by `GetData` on that tensor, directly
//! (`context->GetInputTensor(1)->GetData<int64_t>()`) or through a variable
//! (`auto t = context->GetInputTensor(1); ... t->GetData<int32_t>()`).
//!
//! CANN gives a tiling function an input's values only when the OpDef
//! declares the input `ValueDepend` (guide 6.4.3.4 OpParamDef::ValueDepend:
//! the framework then passes the tensor's data at tiling time); an OpDef
//! whose tiling reads values it never declared is a project bug CANN's
//! own test flow hides when the tensor happens to be a constant. The import
//! marks such inputs `value_depend = true` so the tiling sees what its code
//! plainly expects, and says so in a note.
//!
//! The scan is textual and conservative: comments are dropped, the index
//! must be an integer literal or a name the same text defines as an integer
//! constant (`constexpr uint32_t PAD_INDEX = 1;`), and `GetDataType`,
//! `GetDataSize` and the like are not `GetData`.

use std::collections::{BTreeMap, BTreeSet};

/// Where the tiling reads an input's values: the input index and the
/// source line (1-based) of the `GetData` call.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ValueRead {
    /// `GetInputTensor`'s index.
    pub input: usize,
    /// The line of the `GetData` call.
    pub line: usize,
}

/// The inputs whose values `text` (a host source or header) reads.
pub fn value_reads(text: &str) -> Vec<ValueRead> {
    let code = strip_comments(text);
    let constants = integer_constants(&code);
    let mut found = BTreeSet::new();
    let needle = "GetInputTensor";
    let mut from = 0;
    while let Some(at) = code[from..].find(needle) {
        let start = from + at;
        from = start + needle.len();
        if start > 0 && is_ident(code.as_bytes()[start - 1]) {
            continue;
        }
        let Some((index, after)) = call_index(&code, from, &constants) else {
            continue;
        };
        // Chained: GetInputTensor(i)->GetData...
        if let Some(rest) = code[after..].trim_start().strip_prefix("->") {
            if is_get_data(rest.trim_start()) {
                let pos = code.len() - rest.len();
                found.insert(ValueRead {
                    input: index,
                    line: line_of(&code, pos),
                });
            }
            continue;
        }
        // Assigned: `<decl> name = ...GetInputTensor(i);`, then name->GetData.
        if let Some(var) = assigned_variable(&code, start, after) {
            let mut search = after;
            while let Some(hit) = code[search..].find(&var) {
                let pos = search + hit;
                search = pos + var.len();
                let before_ok = pos == 0 || !is_ident(code.as_bytes()[pos - 1]);
                let rest = &code[search..];
                let after_ok = !rest.bytes().next().is_some_and(is_ident);
                if !(before_ok && after_ok) {
                    continue;
                }
                let rest = rest.trim_start();
                let Some(rest) = rest.strip_prefix("->") else {
                    continue;
                };
                if is_get_data(rest.trim_start()) {
                    found.insert(ValueRead {
                        input: index,
                        line: line_of(&code, code.len() - rest.len()),
                    });
                    break;
                }
            }
        }
    }
    found.into_iter().collect()
}

/// The inputs whose values any of `texts` reads: index to the first
/// `(file, line)` that reads it.
pub fn value_read_inputs<'a>(
    texts: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<usize, (String, usize)> {
    let mut out = BTreeMap::new();
    for (file, text) in texts {
        for read in value_reads(text) {
            out.entry(read.input)
                .or_insert_with(|| (file.to_string(), read.line));
        }
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `GetData` as a call (`GetData(` or `GetData<`), not `GetDataType`.
fn is_get_data(rest: &str) -> bool {
    rest.strip_prefix("GetData")
        .map(str::trim_start)
        .is_some_and(|r| r.starts_with('(') || r.starts_with('<'))
}

/// The index argument of a call whose name ends at `from`: `(N)` with N an
/// integer literal or a known constant; the index and the position after
/// the closing parenthesis.
fn call_index(
    code: &str,
    from: usize,
    constants: &BTreeMap<String, usize>,
) -> Option<(usize, usize)> {
    let rest = code[from..].trim_start();
    let open = code.len() - rest.len();
    let rest = rest.strip_prefix('(')?;
    let close = rest.find(')')?;
    let arg = rest[..close].trim();
    let arg = arg.trim_end_matches(['u', 'U', 'l', 'L']).trim();
    let index = match arg.parse::<usize>() {
        Ok(i) => i,
        Err(_) => *constants.get(arg)?,
    };
    Some((index, open + 1 + close + 1))
}

/// The variable a statement `... name = <expr containing the call at
/// start..after>;` declares or assigns, when the call ends the expression.
fn assigned_variable(code: &str, start: usize, after: usize) -> Option<String> {
    if !code[after..].trim_start().starts_with(';') {
        return None;
    }
    let stmt_start = code[..start].rfind([';', '{', '}']).map_or(0, |p| p + 1);
    let stmt = &code[stmt_start..start];
    let eq = stmt.rfind('=')?;
    if stmt[..eq].ends_with(['=', '!', '<', '>']) {
        return None;
    }
    let lhs = stmt[..eq].trim_end();
    let name: String = lhs
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// Names the text defines as integer constants: `const`/`constexpr`
/// declarations and `#define NAME N`.
fn integer_constants(code: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in code.lines() {
        let line = line.trim();
        if let Some(def) = line.strip_prefix("#define") {
            let mut parts = def.split_whitespace();
            if let (Some(name), Some(value), None) = (parts.next(), parts.next(), parts.next()) {
                if let Ok(v) = value.trim_end_matches(['u', 'U', 'l', 'L']).parse() {
                    out.insert(name.to_string(), v);
                }
            }
            continue;
        }
        if !(line.contains("const ") || line.contains("constexpr ")) {
            continue;
        }
        for stmt in line.split(';') {
            let Some((lhs, rhs)) = stmt.split_once('=') else {
                continue;
            };
            let Some(name) = lhs.split_whitespace().last() else {
                continue;
            };
            if let Ok(v) = rhs.trim().trim_end_matches(['u', 'U', 'l', 'L']).parse() {
                out.insert(name.to_string(), v);
            }
        }
    }
    out
}

/// The 1-based line of byte `pos`.
fn line_of(code: &str, pos: usize) -> usize {
    code[..pos.min(code.len())].matches('\n').count() + 1
}

/// `text` with `//` and `/* */` comments replaced by spaces (newlines
/// kept, so lines stay the source's), string literals left alone.
fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_str: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = in_str {
            out.push(c as char);
            if c == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1] as char);
                i += 2;
                continue;
            }
            if c == q {
                in_str = None;
            }
            i += 1;
            continue;
        }
        if c == b'"' || c == b'\'' {
            in_str = Some(c);
            out.push(c as char);
            i += 1;
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                out.push(if bytes[i] == b'\n' { '\n' } else { ' ' });
                i += 1;
            }
            i += 2;
        } else {
            // Keep multi-byte UTF-8 sequences whole.
            let len = utf8_len(c);
            out.push_str(std::str::from_utf8(&bytes[i..(i + len).min(bytes.len())]).unwrap_or(" "));
            i += len;
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(text: &str) -> Vec<usize> {
        value_reads(text).into_iter().map(|r| r.input).collect()
    }

    #[test]
    fn a_chained_get_data_marks_the_input_and_its_line() {
        let text = "static ge::graphStatus Tiling(gert::TilingContext* ctx) {\n\
                    \x20 auto shape = ctx->GetInputTensor(0)->GetStorageShape();\n\
                    \x20 const int64_t* sizes = ctx->GetInputTensor(2)->GetData<int64_t>();\n\
                    \x20 return ge::GRAPH_SUCCESS;\n}\n";
        assert_eq!(value_reads(text), vec![ValueRead { input: 2, line: 3 }]);
    }

    #[test]
    fn a_tensor_kept_in_a_variable_and_read_later_is_found() {
        let text = "const gert::Tensor *bounds = context->GetInputTensor(1);\n\
                    if (bounds == nullptr) { return ge::GRAPH_FAILED; }\n\
                    auto lo = bounds->GetData<float>()[0];\n";
        assert_eq!(value_reads(text), vec![ValueRead { input: 1, line: 3 }]);
    }

    #[test]
    fn data_type_size_and_shape_reads_are_not_value_reads() {
        let text = "auto dt = context->GetInputTensor(0)->GetDataType();\n\
                    auto t = context->GetInputTensor(1);\n\
                    size_t n = t->GetDataSize(); auto s = t->GetShapeSize();\n\
                    auto raw = context->GetRawTilingData()->GetData();\n";
        assert!(inputs(text).is_empty(), "{:?}", value_reads(text));
    }

    #[test]
    fn comments_do_not_count_and_constants_name_the_index() {
        let text = "// context->GetInputTensor(3)->GetData<int>();\n\
                    /* context->GetInputTensor(4)->GetData<int>(); */\n\
                    constexpr uint32_t AXIS_INPUT = 2;\n\
                    #define PERM_INPUT 5\n\
                    auto axis = context->GetInputTensor(AXIS_INPUT)->GetData<int32_t>();\n\
                    auto perm = context->GetInputTensor(PERM_INPUT);\n\
                    const int64_t *p = perm->GetData<int64_t>();\n\
                    auto other = context->GetInputTensor(unknownIndex)->GetData<int>();\n";
        assert_eq!(inputs(text), vec![2, 5]);
    }

    #[test]
    fn a_variable_that_is_compared_or_shadowed_by_a_longer_name_is_not_a_read() {
        let text = "auto x = context->GetInputTensor(0);\n\
                    auto xs = other->GetData<int>();\n\
                    if (y == context->GetInputTensor(1)) {}\n";
        assert!(inputs(text).is_empty(), "{:?}", value_reads(text));
    }

    #[test]
    fn reads_over_several_files_keep_the_first_place_per_input() {
        let a = "auto v = ctx->GetInputTensor(1)->GetData<int>();\n";
        let b = "\n\nauto w = ctx->GetInputTensor(1)->GetData<int>();\nauto u = ctx->GetInputTensor(0)->GetData();\n";
        let all = value_read_inputs([("a.cpp", a), ("b.h", b)]);
        assert_eq!(all.get(&1), Some(&("a.cpp".to_string(), 1)));
        assert_eq!(all.get(&0), Some(&("b.h".to_string(), 4)));
    }
}
