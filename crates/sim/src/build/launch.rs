//! Host-side launch helpers in a kernel file: `kernel<<<blocks, l2ctrl,
//! stream>>>(args...)`, the `<<<>>>` launch syntax of CANN's device
//! compiler, which g++ cannot parse.
//!
//! Real kernels put such a helper (`void add_custom_do(uint32_t blockDim,
//! void* stream, ...)`) beside the kernel. The CPU-debug build that the
//! simulator stands for skips it: newer kernels guard it with
//! `#ifndef ASCENDC_CPU_DEBUG` (defined, see `KERNEL_DEFINES`), older ones
//! with `#ifndef __CCE_KT_TEST__`, the older CPU-debug macro, which stays
//! undefined here (the module doc of `build` says why). Two rewrites, both
//! in [`rewrite_launch_helpers`]:
//! - [`skip_cpu_debug_launch_helpers`]: a `#ifndef __CCE_KT_TEST__` group
//!   (or `#if !defined(__CCE_KT_TEST__)`) that holds a `<<<>>>` launch is a
//!   launch helper the CPU-debug build never compiles (it defines that
//!   macro), so its lines are blanked, whatever else they name (such
//!   helpers may name variables declared nowhere and still build with
//!   CANN); groups without a launch stay, as they hold device behaviour.
//! - [`ignore_chevron_launches`]: any other helper is never called by the
//!   simulator, so the launch inside it only has to compile: each launch
//!   expression `callee<<<...>>>` becomes `::ascendopt::ignored_launch`, a
//!   function object of the kernel headers (ascendopt/kernel/msopgen_build.h)
//!   that accepts any arguments and does nothing.
//!
//! Invariants:
//! - Only text that is no valid C++ is rewritten: `<<<` followed by `>>>`
//!   and `(` within the same statement (no `;`, `{` or `}` between), and
//!   the groups that hold such a launch under `!__CCE_KT_TEST__`.
//! - The result has as many lines as the input; the directive lines of a
//!   blanked group stay, so the preprocessor's nesting is unchanged.

/// What a launch expression becomes.
pub const IGNORED_LAUNCH: &str = "::ascendopt::ignored_launch";

/// Written into the kernel build's cache key: a changed rewrite never
/// meets a library built by the old one.
pub const REWRITE_VERSION: &str = "chevron-launches-ignored-v2-kt-test-groups-skipped";

/// `text` with its launch helpers made harmless: the CPU-debug build's
/// skipped groups blanked, then the remaining launches ignored; None when
/// neither applies.
pub fn rewrite_launch_helpers(text: &str) -> Option<String> {
    let skipped = skip_cpu_debug_launch_helpers(text);
    let base = skipped.as_deref().unwrap_or(text);
    ignore_chevron_launches(base).or(skipped)
}

/// A preprocessor directive's name and the rest of its line (`#  ifndef X`
/// -> ("ifndef", "X")); None for any other line.
fn directive(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    Some((&rest[..end], rest[end..].trim()))
}

/// Whether a conditional directive opens a group the CPU-debug build skips
/// because it defines `__CCE_KT_TEST__`.
fn opens_non_kt_test_group(name: &str, rest: &str) -> bool {
    let rest = rest.split("//").next().unwrap_or("").trim();
    match name {
        "ifndef" => rest == "__CCE_KT_TEST__",
        "if" => {
            let compact: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
            compact == "!defined(__CCE_KT_TEST__)" || compact == "!defined__CCE_KT_TEST__"
        }
        _ => false,
    }
}

/// `text` with the lines of every `#ifndef __CCE_KT_TEST__` group (up to its
/// `#else`, `#elif` or `#endif`) that holds a `<<<>>>` launch blanked; the
/// directive lines stay. None when there is none.
pub fn skip_cpu_debug_launch_helpers(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut blank = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let Some((name, rest)) = directive(lines[i]) else {
            i += 1;
            continue;
        };
        if !opens_non_kt_test_group(name, rest) {
            i += 1;
            continue;
        }
        // The group's body: up to the directive that ends it at depth 0.
        let mut depth = 0usize;
        let mut end = None;
        for (j, line) in lines.iter().enumerate().skip(i + 1) {
            match directive(line) {
                Some(("if" | "ifdef" | "ifndef", _)) => depth += 1,
                Some(("endif", _)) if depth > 0 => depth -= 1,
                Some(("else" | "elif" | "endif", _)) if depth == 0 => {
                    end = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            break;
        };
        let body = lines[i + 1..end].join("\n");
        if ignore_chevron_launches(&body).is_some() {
            for b in &mut blank[i + 1..end] {
                *b = true;
            }
        }
        i = end;
    }
    if !blank.contains(&true) {
        return None;
    }
    let out: Vec<&str> = lines
        .iter()
        .zip(&blank)
        .map(|(line, &b)| if b { "" } else { *line })
        .collect();
    Some(out.join("\n"))
}

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
    fn a_kt_test_guarded_helper_is_blanked_whatever_it_names() {
        let text = "__global__ void k(GM_ADDR x) {}\n#ifndef __CCE_KT_TEST__\nvoid k_do(uint32_t b, void* s) {\n    k<<<b, nullptr, s>>>(undeclared_x);\n}\n#endif\nint after = 1;\n";
        let got = rewrite_launch_helpers(text).unwrap();
        assert_eq!(
            got,
            "__global__ void k(GM_ADDR x) {}\n#ifndef __CCE_KT_TEST__\n\n\n\n#endif\nint after = 1;\n"
        );
        assert_eq!(got.lines().count(), text.lines().count());
    }

    #[test]
    fn only_the_skipped_branch_of_a_kt_test_group_is_blanked() {
        // `#if !defined(...)` with an #else: only the launch's branch is
        // blanked; the #else text stays as written (the preprocessor still
        // skips it, as the macro stays undefined); nested conditionals
        // stay balanced.
        let text = "#if !defined( __CCE_KT_TEST__ )\n#ifdef X\nint a;\n#endif\nvoid h() { k<<<1, 0, 0>>>(y); }\n#else\nint kept;\n#endif\n";
        let got = rewrite_launch_helpers(text).unwrap();
        assert_eq!(
            got,
            "#if !defined( __CCE_KT_TEST__ )\n\n\n\n\n#else\nint kept;\n#endif\n"
        );
    }

    #[test]
    fn a_kt_test_group_without_a_launch_stays_and_other_launches_are_ignored() {
        // Device behaviour under the macro stays; an unguarded helper's
        // launch is still ignored.
        let text = "#ifndef __CCE_KT_TEST__\nSyncAll();\n#endif\nvoid h() { k<<<1, 0, 0>>>(y); }\n";
        let got = rewrite_launch_helpers(text).unwrap();
        assert_eq!(
            got,
            "#ifndef __CCE_KT_TEST__\nSyncAll();\n#endif\nvoid h() { ::ascendopt::ignored_launch(y); }\n"
        );
        assert_eq!(
            skip_cpu_debug_launch_helpers("#ifndef __CCE_KT_TEST__\nSyncAll();\n#endif\n"),
            None
        );
        // An unterminated group is left to the compiler's own error.
        assert_eq!(
            skip_cpu_debug_launch_helpers("#ifndef __CCE_KT_TEST__\nk<<<1,0,0>>>(y);\n"),
            None
        );
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
