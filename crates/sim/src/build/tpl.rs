//! Kernels whose entry is a tiling template (guide 2.10.2.5.5 "Tiling模板编程",
//! 6.4.6): `template <int D_T_X, ..., int IS_SPLIT> __global__ __aicore__
//! void add_custom(GM_ADDR x, ...)`, its parameters declared with
//! `ASCENDC_TPL_ARGS_DECL` and its combinations with `ASCENDC_TPL_SEL` in a
//! header both units include (`ascendc/host_api/tiling/template_argument.h`).
//!
//! CANN's build compiles one kernel binary per selected combination and
//! launches the one the tiling key (`GET_TPL_TILING_KEY`) names. The
//! simulator compiles one kernel library per dtype variant as always, with
//! every selected combination instantiated in it: the kernel's text gets a
//! footer ([`with_instances`]) that includes `ascendopt/kernel/tpl_instances.h`
//! and expands `ASCENDOPT_TPL_INSTANCES(<entry>)`, which registers each
//! instance under its key while the library loads; the launch looks the
//! key up (`ascendopt_kernel_tpl_entry`, crates/sim/src/launch.rs).
//!
//! Invariants:
//! - Only a function template declared `__global__ __aicore__` (either
//!   order) directly after its `template <...>` head is an entry; a kernel
//!   without one is compiled as before.
//! - The footer adds lines after the kernel's last line and changes none of
//!   its lines (diagnostics and line tables keep the kernel's numbering).

/// Written into the kernel build's cache key with the launch rewrite's
/// version: a changed footer never meets a library built by the old one.
pub const FOOTER_VERSION: &str = "tpl-instances-v1";

/// The name of the first function template `text` declares as a kernel
/// entry (`template <...> __global__ __aicore__ void NAME(`), comments
/// ignored; None when there is none.
pub fn template_entry(text: &str) -> Option<String> {
    let code = without_comments(text);
    let mut from = 0;
    while let Some(at) = code[from..].find("__global__") {
        let start = from + at;
        from = start + "__global__".len();
        let aicore_before = code[..start].trim_end().ends_with("__aicore__");
        if let Some(name) = entry_after(&code, start, aicore_before) {
            if template_head_before(&code, start) {
                return Some(name);
            }
        }
    }
    None
}

/// `text` with its per-instance tiling registrations made expressions
/// ([`keyed_registrations`]), followed by the footer that instantiates and
/// registers every selected combination of `entry`.
pub fn with_instances(text: &str, entry: &str) -> String {
    let text = keyed_registrations(text);
    let mut out = String::with_capacity(text.len() + 160);
    out.push_str(&text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("#include \"ascendopt/kernel/tpl_instances.h\"\n");
    out.push_str(&format!("ASCENDOPT_TPL_INSTANCES({entry})\n"));
    out
}

/// The macro a tiling-template kernel registers a struct per instance with.
const KEYED: &str = "REGISTER_TILING_FOR_TILINGKEY";
/// What it becomes (ascendopt/kernel/tiling.h).
const KEYED_EXPR: &str = "ASCENDOPT_REGISTER_TILING_FOR_TEMPLATE";

/// `REGISTER_TILING_FOR_TILINGKEY("<condition>", T)` (outside comments,
/// the condition one plain string literal) becomes
/// `ASCENDOPT_REGISTER_TILING_FOR_TEMPLATE((<condition>), T)`: the condition
/// over the template parameters is compiled as the expression it spells.
/// Lines are kept (only the name and the two quotes change).
pub fn keyed_registrations(text: &str) -> String {
    let code = without_comments(text);
    let mut out = String::with_capacity(text.len() + 64);
    let mut done = 0;
    let mut from = 0;
    while let Some(at) = code[from..].find(KEYED) {
        let start = from + at;
        from = start + KEYED.len();
        let identifier_before = code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if identifier_before {
            continue;
        }
        // `(`, then the literal's opening quote in the original text.
        let after = &text[from..];
        let paren = after.len() - after.trim_start().len();
        if !after[paren..].starts_with('(') {
            continue;
        }
        let inner = &after[paren + 1..];
        let quote = paren + 1 + (inner.len() - inner.trim_start().len());
        if !after[quote..].starts_with('"') {
            continue;
        }
        let body = &after[quote + 1..];
        let Some(close) = body.find('"') else {
            continue;
        };
        let condition = &body[..close];
        if condition.contains('\\') || condition.contains('\n') {
            continue;
        }
        out.push_str(&text[done..start]);
        out.push_str(KEYED_EXPR);
        out.push_str(&after[..quote]);
        out.push('(');
        out.push_str(condition);
        out.push(')');
        done = from + quote + 1 + close + 1;
        from = done;
    }
    out.push_str(&text[done..]);
    out
}

/// At `start` (`__global__`): `__global__ __aicore__ void NAME (` or
/// `__global__ void`... in either attribute order; the name when it is.
fn entry_after(code: &str, start: usize, aicore_before: bool) -> Option<String> {
    let mut words = Words::new(&code[start..]);
    let mut seen_global = false;
    let mut seen_aicore = aicore_before;
    loop {
        let word = words.next_word()?;
        match word {
            "__global__" if !seen_global => seen_global = true,
            "__aicore__" if !seen_aicore => seen_aicore = true,
            "void" if seen_global && seen_aicore => break,
            _ => return None,
        }
    }
    let name = words.next_word()?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    (valid && words.rest().trim_start().starts_with('(')).then(|| name.to_string())
}

/// Whether the text before `start` ends with a `template <...>` head
/// (possibly followed by `__aicore__`, the other attribute order).
fn template_head_before(code: &str, start: usize) -> bool {
    let mut before = code[..start].trim_end();
    if let Some(rest) = before.strip_suffix("__aicore__") {
        before = rest.trim_end();
    }
    if !before.ends_with('>') {
        return false;
    }
    // The matching `<` of the head's closing `>`.
    let bytes = before.as_bytes();
    let mut depth = 0i32;
    let mut open = None;
    for i in (0..bytes.len()).rev() {
        match bytes[i] {
            b'>' => depth += 1,
            b'<' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            b';' | b'{' | b'}' => return false,
            _ => {}
        }
    }
    let Some(open) = open else {
        return false;
    };
    before[..open].trim_end().ends_with("template")
}

/// `text` with `//` and `/* */` comments and string literals blanked
/// (same length, newlines kept).
fn without_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            out.extend_from_slice(b"  ");
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                out.push(if bytes[i] == b'\n' { b'\n' } else { b' ' });
                i += 1;
            }
            if i < bytes.len() {
                out.extend_from_slice(b"  ");
                i += 2;
            }
        } else if b == b'"' {
            out.push(b' ');
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                if bytes[i] == b'\\' && i + 1 < bytes.len() {
                    out.push(b' ');
                    i += 1;
                }
                out.push(b' ');
                i += 1;
            }
            if i < bytes.len() {
                out.push(b' ');
                i += 1;
            }
        } else {
            out.push(b);
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII, whole multi-byte sequences
    // inside comments and strings by spaces: still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Identifier-like words of a text, in order.
struct Words<'a> {
    text: &'a str,
}

impl<'a> Words<'a> {
    fn new(text: &'a str) -> Words<'a> {
        Words { text }
    }

    fn next_word(&mut self) -> Option<&'a str> {
        let trimmed = self.text.trim_start();
        let end = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(trimmed.len());
        if end == 0 {
            return None;
        }
        self.text = &trimmed[end..];
        Some(&trimmed[..end])
    }

    fn rest(&self) -> &'a str {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_entry_is_found_in_either_attribute_order() {
        let text =
            "template <int A, int B>\n__global__ __aicore__ void add_t(GM_ADDR x, GM_ADDR y) {}\n";
        assert_eq!(template_entry(text).as_deref(), Some("add_t"));
        let text = "template<int A> __aicore__ __global__ void k2 (GM_ADDR x) {}";
        assert_eq!(template_entry(text).as_deref(), Some("k2"));
    }

    #[test]
    fn plain_entries_commented_templates_and_helpers_are_not_template_entries() {
        let plain = "extern \"C\" __global__ __aicore__ void add_custom(GM_ADDR x) {}";
        assert_eq!(template_entry(plain), None);
        let commented = "// template <int A>\n/* template<int B> */ extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {}";
        assert_eq!(template_entry(commented), None);
        // A templated helper that is not an entry, before a plain entry.
        let helper = "template <typename T> __aicore__ inline void Copy(T* p) {}\nextern \"C\" __global__ __aicore__ void k(GM_ADDR x) {}";
        assert_eq!(template_entry(helper), None);
        // A template head that ends a previous statement is not this one's.
        let other = "using V = Vec<int>; __global__ __aicore__ void k(GM_ADDR x) {}";
        assert_eq!(template_entry(other), None);
    }

    #[test]
    fn a_keyed_registration_becomes_the_expression_on_the_same_lines() {
        let text = "  REGISTER_TILING_DEFAULT(T0);\n  REGISTER_TILING_FOR_TILINGKEY(\n  \"A == 1 && B == 2\", T1);\n  // REGISTER_TILING_FOR_TILINGKEY(\"C\", T2);\n  MY_REGISTER_TILING_FOR_TILINGKEY(\"D\", T3);\n";
        let out = keyed_registrations(text);
        assert_eq!(
            out,
            "  REGISTER_TILING_DEFAULT(T0);\n  ASCENDOPT_REGISTER_TILING_FOR_TEMPLATE(\n  (A == 1 && B == 2), T1);\n  // REGISTER_TILING_FOR_TILINGKEY(\"C\", T2);\n  MY_REGISTER_TILING_FOR_TILINGKEY(\"D\", T3);\n"
        );
        assert_eq!(out.lines().count(), text.lines().count());
    }

    #[test]
    fn the_footer_keeps_the_kernels_lines_and_names_the_entry() {
        let text = "line1\nline2";
        let out = with_instances(text, "add_t");
        assert!(out.starts_with("line1\nline2\n"));
        let footer: Vec<&str> = out.lines().skip(2).collect();
        assert_eq!(
            footer,
            [
                "#include \"ascendopt/kernel/tpl_instances.h\"",
                "ASCENDOPT_TPL_INSTANCES(add_t)"
            ]
        );
    }
}
