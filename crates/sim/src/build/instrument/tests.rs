//! The instrumentation pass on hand-written assembly shaped like g++'s.

use super::*;

fn options() -> Options {
    Options {
        excluded_prefixes: vec!["/sim/include/".to_string()],
    }
}

/// A function `kern` whose loop body mixes kernel and header code.
const LOOP: &str = "\t.file\t\"k.cpp\"
\t.text
\t.file 0 \"/tmp\" \"k.cpp\"
\t.globl\tkern
\t.type\tkern, @function
kern:
.LFB1:
\t.file 1 \"k.cpp\"
\t.file 2 \"/sim/include\" \"ascendopt/kernel/h.h\"
\t.loc 1 4 65
\tpushq\t%rbx
\tmovq\t%rdi, %rbx
\tcall\t__sanitizer_cov_trace_pc@PLT
.L3:
\t.loc 1 7 16
\tcall\t__sanitizer_cov_trace_pc@PLT
\tmovq\t%rbx, %rdi
\tcall\t__asan_load4_noabort@PLT
\tmovl\t(%rbx), %eax
\taddl\t$1, %eax
\t.loc 2 10 1
\tmovq\t%rbx, %rdi
\tcall\t__asan_store4_noabort@PLT
\tmovl\t%eax, (%rbx)
\tcall\tmemset@PLT
\t.loc 1 8 1
\tcmpl\t$5, %eax
\tjne\t.L3
\tpopq\t%rbx
\tret
\t.size\tkern, .-kern
";

/// The counting code of each stretch, in order: (alu, loads, stores).
fn stretches(text: &str) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    let mut cur: Option<(u64, u64, u64)> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("movq\tascendopt_scalar@gottpoff") {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            cur = Some((0, 0, 0));
        } else if let Some(rest) = t.strip_prefix("addq\t$") {
            let (value, offset) = rest.split_once(", %fs:").unwrap();
            let value: u64 = value.parse().unwrap();
            let c = cur.as_mut().unwrap();
            match offset {
                "0(%r11)" => c.0 += value,
                "8(%r11)" => c.1 += value,
                "16(%r11)" => c.2 += value,
                other => panic!("offset {other}"),
            }
        }
    }
    out.extend(cur);
    out
}

#[test]
fn kernel_code_is_counted_per_stretch_and_header_code_is_not() {
    let done = instrument(LOOP, &options()).unwrap();
    let text = &done.text;
    // Entry: push (store) + move (ALU). After the load hook: the load and
    // the add. After memset: compare, branch, pop and ret. The hook's
    // argument set-up and every header instruction count nothing.
    assert_eq!(
        stretches(text),
        vec![(1, 0, 1), (1, 1, 0), (2, 2, 0)],
        "{text}"
    );
    assert!(!text.contains("__sanitizer_cov_trace_pc"), "{text}");
    assert!(text.contains("call\t__asan_load4_noabort@PLT"), "{text}");
    // The header's store hook stays: a GM address there is the kernel's.
    assert!(text.contains("call\t__asan_store4_noabort@PLT"), "{text}");
    // The header's memset is left alone.
    assert!(text.contains("call\tmemset@PLT"), "{text}");
    assert_eq!(done.stats.block_hooks, 2);
    assert_eq!(done.stats.access_hooks, 2);
    assert_eq!(done.stats.counted_instructions, 8);
}

#[test]
fn the_counting_code_sits_where_the_hook_was_and_after_calls() {
    let text = instrument(LOOP, &options()).unwrap().text;
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    // The loop head's hook became the (empty, so absent) stretch start
    // right after the label; the load's stretch starts right after the
    // kept hook call.
    let hook = lines
        .iter()
        .position(|l| *l == "call\t__asan_load4_noabort@PLT")
        .unwrap();
    assert!(lines[hook + 1].starts_with("movq\tascendopt_scalar@gottpoff(%rip), %r11"));
    assert!(
        lines[hook + 2].starts_with("addq\t$1, %fs:0(%r11)"),
        "{text}"
    );
    assert!(
        lines[hook + 3].starts_with("addq\t$1, %fs:8(%r11)"),
        "{text}"
    );
    assert!(lines[hook + 4].starts_with("movl\t(%rbx), %eax"), "{text}");
    // The function's entry: before the push.
    let entry = lines.iter().position(|l| *l == "pushq\t%rbx").unwrap();
    assert!(
        lines[entry - 1].starts_with("addq\t$1, %fs:16(%r11)"),
        "{text}"
    );
}

#[test]
fn kernel_calls_of_memcpy_and_friends_are_renamed() {
    let asm = LOOP.replace(
        "\tcall\tmemset@PLT\n\t.loc 1 8 1\n",
        "\t.loc 1 8 1\n\tcall\tmemcpy@PLT\n\tjmp\tmemmove@PLT\n",
    );
    let text = instrument(&asm, &options()).unwrap().text;
    assert!(text.contains("call\tascendopt_memcpy@PLT"), "{text}");
    assert!(text.contains("jmp\tascendopt_memmove@PLT"), "{text}");
    assert!(!text.contains("call\tmemcpy"), "{text}");
}

#[test]
fn a_function_that_escaped_the_instrumentation_is_refused() {
    // A loop and no basic-block hook (no_sanitize_coverage).
    let asm = LOOP.replace("\tcall\t__sanitizer_cov_trace_pc@PLT\n", "");
    let err = instrument(&asm, &options()).unwrap_err();
    assert!(err.to_string().contains("`kern`"), "{err}");
    assert!(err.to_string().contains("basic-block"), "{err}");
    // Pointer loads without address hooks (no_sanitize_address).
    let asm = LOOP
        .replace("\tcall\t__asan_load4_noabort@PLT\n", "")
        .replace("\tcall\t__asan_store4_noabort@PLT\n", "");
    let err = instrument(&asm, &options()).unwrap_err();
    assert!(err.to_string().contains("address hooks"), "{err}");
    // Header code may do both: it is not counted anyway.
    let header_only = LOOP
        .replace("\t.loc 1 ", "\t.loc 2 ")
        .replace("\tcall\t__sanitizer_cov_trace_pc@PLT\n", "")
        .replace("\tcall\t__asan_load4_noabort@PLT\n", "");
    let done = instrument(&header_only, &options()).unwrap();
    assert_eq!(done.stats.counted_instructions, 0);
}

#[test]
fn instruction_classes() {
    let count = |line: &str| classify(&parse_insn(line).unwrap());
    let c = |alu, loads, stores| Counts { alu, loads, stores };
    assert_eq!(count("movl\t(%rbx), %eax"), c(0, 1, 0));
    assert_eq!(count("movl\t%eax, 8(%rbx)"), c(0, 0, 1));
    assert_eq!(count("movl\t%eax, %ebx"), c(1, 0, 0));
    assert_eq!(count("addl\t(%rbx), %eax"), c(1, 1, 0));
    assert_eq!(count("addl\t$1, (%rbx)"), c(1, 1, 1));
    assert_eq!(count("incl\t(%rbx)"), c(1, 1, 1));
    assert_eq!(count("cmpl\t$5, 4(%rax)"), c(1, 1, 0));
    assert_eq!(count("leaq\t8(%rax,%rbx,4), %rcx"), c(1, 0, 0));
    assert_eq!(count("call\t*16(%rax)"), c(1, 1, 0));
    assert_eq!(count("pushq\t%rbp"), c(0, 0, 1));
    assert_eq!(count("ret"), c(0, 1, 0));
    assert_eq!(count("nopw\t0(%rax,%rax)"), c(0, 0, 0));
    assert_eq!(count("endbr64"), c(0, 0, 0));
    assert_eq!(count("lock addl\t$1, (%rdi)"), c(1, 1, 1));
    assert!(parse_insn("rex64").is_none());
    // Scalar float code counts one per instruction.
    assert_eq!(count("addss\t%xmm1, %xmm0"), c(1, 0, 0));
    assert_eq!(count("pxor\t%xmm0, %xmm0"), c(1, 0, 0));
    assert_eq!(count("andps\t.LC1(%rip), %xmm0"), c(1, 1, 0));
    assert_eq!(count("movd\t%eax, %xmm1"), c(1, 0, 0));
    // Packed SIMD counts per 32-bit lane.
    assert_eq!(count("addps\t(%rax), %xmm0"), c(4, 4, 0));
    assert_eq!(count("movups\t%xmm0, (%rcx)"), c(0, 0, 4));
    assert_eq!(count("vaddps\t%ymm1, %ymm2, %ymm3"), c(8, 0, 0));
    assert_eq!(count("paddd\t%xmm1, %xmm0"), c(4, 0, 0));
}

#[test]
fn file_directives_of_both_dwarf_forms() {
    assert_eq!(
        parse_file_directive(".file 2 \"/sim/include/a.h\""),
        Some((2, "/sim/include/a.h".to_string()))
    );
    assert_eq!(
        parse_file_directive(".file 3 \"/sim/include\" \"ascendopt/b.h\""),
        Some((3, "/sim/include/ascendopt/b.h".to_string()))
    );
    assert_eq!(
        parse_file_directive(".file 0 \"/tmp\" \"k.cpp\" md5 0x1234"),
        Some((0, "/tmp/k.cpp".to_string()))
    );
    assert_eq!(parse_file_directive(".file \"k.cpp\""), None);
}

#[test]
fn line_directives_are_found_in_every_spelling() {
    assert_eq!(line_directive("int a;\n#line 5 \"x.h\"\n"), Some(2));
    assert_eq!(line_directive("  #  line 5\n"), Some(1));
    assert_eq!(line_directive("# 12 \"/sim/include/a.h\"\n"), Some(1));
    assert_eq!(line_directive("%:line 3\n"), Some(1));
    assert_eq!(line_directive("#\\\nline 3\n"), Some(1));
    assert_eq!(line_directive("#/* c */line 3\n"), Some(1));
    assert_eq!(line_directive("int x;\n/* a\n b */ # 7\n"), Some(3));
    // Not directives.
    assert_eq!(line_directive("#include <a.h>\n#define L line\n"), None);
    assert_eq!(line_directive("// #line 5\nint a; /* #line 3 */\n"), None);
    assert_eq!(line_directive("const char* s = \"#line 4\";\n"), None);
    assert_eq!(line_directive("auto r = R\"x(\n#line 9\n)x\";\n"), None);
    assert_eq!(line_directive("int a = b % c;\n"), None);
}

#[test]
fn indirect_calls_of_the_kernels_code_get_their_target_checked() {
    // A call through a register and one through memory in the kernel's
    // code, one through the GOT (an import) and one in header code.
    let asm = LOOP.replace(
        "\tcall\tmemset@PLT\n",
        "\t.loc 1 7 3\n\tcall\t*%rax\n\tcall\t*8(%rbx)\n\tcall\t*memcpy@GOTPCREL(%rip)\n\t.loc 2 11 1\n\tcall\t*16(%rax)\n\t.loc 1 7 2\n",
    );
    let out = instrument(&asm, &options()).unwrap();
    assert_eq!(out.stats.checked_calls, 2);
    let text = &out.text;
    assert!(
        text.contains("\tmovq\t%rax, %r11\n\tcmpq\tascendopt_text_lo(%rip), %r11\n"),
        "{text}"
    );
    assert!(text.contains("\tmovq\t8(%rbx), %r11\n"), "{text}");
    assert_eq!(
        text.matches("\tcall\tascendopt_check_call\n").count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("\tcall\t*%r11\n").count(), 2, "{text}");
    // The import and the header's call are made as written.
    assert!(text.contains("\tcall\t*memcpy@GOTPCREL(%rip)\n"), "{text}");
    assert!(text.contains("\tcall\t*16(%rax)\n"), "{text}");
    assert!(!text.contains("\tcall\t*%rax\n"), "{text}");
}
