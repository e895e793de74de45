//! Host-side launch helpers in a kernel file: `kernel<<<blocks, l2ctrl,
//! stream>>>(args...)`, the `<<<>>>` launch syntax of CANN's device
//! compiler, which g++ cannot parse.
//!
//! Real kernels put such a helper (`void add_custom_do(uint32_t blockDim,
//! void* stream, ...)`) beside the kernel. The CPU-debug build that the
//! simulator stands for skips it: newer kernels guard it with
//! `#ifndef ASCENDC_CPU_DEBUG` (defined, see `KERNEL_DEFINES`), older ones
//! with `#ifndef __CCE_KT_TEST__`, the older CPU-debug macro, which stays
//! undefined here (the module doc of `build` says why). The helper is never
//! called by the simulator, so the launch inside it only has to compile:
//! [`ignore_chevron_launches`] replaces each launch expression
//! `callee<<<...>>>` by `::ascendopt::ignored_launch`, a function object of
//! the kernel headers (ascendopt/kernel/msopgen_build.h) that accepts any
//! arguments and does nothing. Nothing else of the text changes, and every
//! line keeps its number.
//!
//! Invariants:
//! - Only text that is no valid C++ is rewritten: `<<<` followed by `>>>`
//!   and `(` within the same statement (no `;`, `{` or `}` between).
//! - The result has as many lines as the input, each launch's line holding
//!   the replacement.

/// What a launch expression becomes.
pub const IGNORED_LAUNCH: &str = "::ascendopt::ignored_launch";

/// Written into the kernel build's cache key: a changed rewrite never
/// meets a library built by the old one.
pub const REWRITE_VERSION: &str = "chevron-launches-ignored-v1";

/// `text` with every `callee<<<...>>>` launch expression replaced by
/// [`IGNORED_LAUNCH`]; None when there is none.
pub fn ignore_chevron_launches(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0usize;
    let mut search = 0usize;
    let mut changed = false;
    while let Some(rel) = text[search..].find("<<<") {
        let open = search + rel;
        search = open + 3;
        // The closing `>>>` within the same statement, then `(`.
        let Some(close_rel) = text[open + 3..].find(">>>") else {
            break;
        };
        let close = open + 3 + close_rel;
        if text[open + 3..close].contains([';', '{', '}']) {
            continue;
        }
        let after = close + 3;
        let next = text[after..].trim_start();
        if !next.starts_with('(') {
            continue;
        }
        let Some(start) = callee_start(bytes, open) else {
            continue;
        };
        if start < copied {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(IGNORED_LAUNCH);
        // Keep the line count: the newlines of the replaced span.
        for _ in text[start..after].matches('\n') {
            out.push('\n');
        }
        copied = after;
        search = after;
        changed = true;
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Where the callee before `<<<` at `open` starts: an identifier,
/// possibly qualified (`ns::k`) and with template arguments (`k<T, 8>`);
/// None when there is none.
fn callee_start(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open;
    while i > 0 && bytes[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    // Template arguments: back to the matching `<`.
    if i > 0 && bytes[i - 1] == b'>' {
        let mut depth = 0i32;
        while i > 0 {
            i -= 1;
            match bytes[i] {
                b'>' => depth += 1,
                b'<' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b';' | b'{' | b'}' => return None,
                _ => {}
            }
        }
        if depth != 0 {
            return None;
        }
        while i > 0 && bytes[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
    }
    let end = i;
    while i > 0
        && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':')
    {
        i -= 1;
    }
    (i < end).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_becomes_the_ignored_call_and_keeps_its_arguments() {
        let text =
            "void f_do(uint32_t b, void* s, uint8_t* x) {\n    f<<<b, nullptr, s>>>(x, y);\n}\n";
        let got = ignore_chevron_launches(text).unwrap();
        assert_eq!(
            got,
            "void f_do(uint32_t b, void* s, uint8_t* x) {\n    ::ascendopt::ignored_launch(x, y);\n}\n"
        );
    }

    #[test]
    fn template_and_qualified_callees_and_multi_line_configs() {
        let text = "ns::k<half, 8> <<<blockDim,\n l2, stream>>> (a);\nint z = 1;\n";
        let got = ignore_chevron_launches(text).unwrap();
        assert_eq!(got, "::ascendopt::ignored_launch\n (a);\nint z = 1;\n");
        assert_eq!(got.lines().count(), text.lines().count());
    }

    #[test]
    fn valid_cpp_is_left_alone() {
        // Shifts, and chevrons that do not form a launch.
        assert_eq!(ignore_chevron_launches("int a = b << 3; c >>= 1;"), None);
        assert_eq!(ignore_chevron_launches("x <<< y; z >>> (w);"), None);
        assert_eq!(ignore_chevron_launches("// k<<<1, 2>>>\n"), None);
        assert_eq!(ignore_chevron_launches("<<<1>>>(a)"), None);
    }
}
