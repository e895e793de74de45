//! Counting the kernel's own code: a pass over the assembly g++ writes for
//! a kernel unit built with `-fsanitize-coverage=trace-pc` and
//! `-fsanitize=kernel-address` ([`KERNEL_FLAGS`]), before it is assembled.
//!
//! What the compiler gives us:
//! - a call to `__sanitizer_cov_trace_pc` at the start of every basic block;
//! - a call to `__asan_{load,store}{1,2,4,8,16,N}_noabort(address)` before
//!   every load and store through a pointer;
//! - `.loc` directives naming the source file of every instruction (the
//!   build always has line tables, `-g1`).
//!
//! What the pass does, without looking at the source text:
//! - It splits every function into *stretches*: from the function's entry,
//!   from each basic-block hook and from just after each call, to the next
//!   of these. At the start of each stretch it writes the stretch's
//!   instruction counts (ALU, load, store) into the block thread's
//!   `AscScalarCounters` (`kernel_entry.cpp`) with two or three
//!   instructions: `movq ascendopt_scalar@gottpoff(%rip), %r11` and
//!   `addq $n, %fs:OFF(%r11)`. Those points are safe to write to: at a call
//!   (the hook's place), just after one and at a function's entry, `%r11`
//!   and the flags hold nothing the compiler still needs (the x86-64 ABI
//!   lets a callee clobber both; `%r11` carries no argument or result).
//!   So the runtime sees, at each API call, the work of the code that ran
//!   before it, in program order.
//! - Only instructions whose `.loc` file lies outside the simulator's
//!   headers ([`Options::excluded_prefixes`]) are counted: the headers'
//!   inline code stands for the API calls the runtime already charges.
//!   The rule needs nothing from the headers; every header under
//!   `crates/sim/include` is excluded by where it lives. (Code of the
//!   system headers a kernel uses, `std::min` and the like, counts.)
//! - The basic-block hooks are replaced by the counting instructions (or
//!   deleted); the load/store hooks stay everywhere, header code included:
//!   they report addresses to the runtime, which records the GM line
//!   touches for the data-cache model. The headers reach GM only through
//!   runtime calls, so a GM address a hook sees is always the kernel's own
//!   access, even when the compiler inlined it into a header function (a
//!   `half` read through a `__gm__ half*`). Calls of `memcpy`, `memmove`,
//!   `memset` and `memcmp` in the kernel's code are renamed to
//!   `kernel_entry.cpp`'s counting wrappers. The hooks' own argument
//!   set-up is not counted.
//!
//! How instructions count (the scalar unit is a load/store machine): a
//! `mov` with a memory source is a load, with a memory destination a
//! store; another instruction with a memory source is a load plus an ALU
//! instruction, with a memory destination a load, an ALU instruction and a
//! store; `push`/`pop`/`ret` are a store/load; everything else is one ALU
//! instruction; packed SIMD instructions count once per 32-bit lane (a
//! vectorised loop does not hide its work); `nop` and `endbr64` count
//! nothing.
//!
//! Known approximations (documented in the profile's sources): a stretch
//! is counted in full when it is entered, also when a branch leaves it
//! early (basic blocks end in branches, so this is rare; the RTL passes
//! add a few internal branches), and jumps into the middle of a stretch
//! without a hook count only from the next hook or call.
//!
//! Indirect calls: before every indirect call of the kernel's own code the
//! pass checks that the target lies in the kernel library's code; a call
//! of code outside it (a host-library function whose address the tiling
//! smuggled in, `&memcpy` of the C library), whose work nothing counts,
//! ends the launch with a fault instead ([`checked_indirect_call`]).
//!
//! Refusals ([`InstrumentError`]): a function of the kernel's code that
//! holds a loop but no basic-block hook, or pointer loads and stores but no
//! load/store hook, was compiled without the instrumentation (an attribute
//! such as `no_sanitize_coverage`, `no_sanitize_address` or an `optimize`
//! attribute that drops it): its work could not be counted, so the build
//! fails and says which function.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// Compiler flags of an instrumented kernel unit (with `-S`).
pub const KERNEL_FLAGS: &[&str] = &[
    "-fsanitize-coverage=trace-pc",
    "-fsanitize=kernel-address",
    "--param=asan-instrumentation-with-call-threshold=0",
    "--param=asan-stack=0",
    "--param=asan-globals=0",
    "--param=asan-use-after-return=0",
];

/// This pass's own source text: part of the kernel library's cache key, so
/// that a changed pass never meets a library rewritten by the old one.
pub const SOURCE: &str = include_str!("instrument.rs");

/// The thread-local counters the rewritten code adds to.
const COUNTERS: &str = "ascendopt_scalar";

/// Functions whose calls are renamed to counting wrappers.
const WRAPPED: &[&str] = &["memcpy", "memmove", "memset", "memcmp"];

/// What the pass needs to know.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Source paths (as they appear in the assembly's `.file` directives)
    /// whose code is not counted: the simulator's header directory, in
    /// every spelling the compiler may use.
    pub excluded_prefixes: Vec<String>,
}

/// Counts of the rewritten assembly, for tests and messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Functions seen.
    pub functions: u32,
    /// Basic-block hooks replaced or deleted.
    pub block_hooks: u32,
    /// Load/store hooks (kept everywhere).
    pub access_hooks: u32,
    /// Stretches that got counting instructions.
    pub counted_stretches: u32,
    /// Counted instructions over all stretches (static, not executed).
    pub counted_instructions: u64,
    /// Indirect calls of the kernel's code given a target check.
    pub checked_calls: u32,
}

/// The rewritten assembly.
#[derive(Debug, Clone)]
pub struct Instrumented {
    /// Assembly text to assemble instead of the compiler's.
    pub text: String,
    /// What the pass did.
    pub stats: Stats,
}

/// Why a kernel's assembly cannot be counted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstrumentError {
    /// A function of the kernel's code escaped the instrumentation.
    #[error("function `{function}` of the kernel was compiled without the simulator's instrumentation ({what}); its work could not be counted: remove the attribute or pragma that turns it off")]
    Uninstrumented {
        /// Symbol of the function.
        function: String,
        /// What is missing.
        what: &'static str,
    },
}

/// Instruction counts by class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    alu: u64,
    loads: u64,
    stores: u64,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.alu += other.alu;
        self.loads += other.loads;
        self.stores += other.stores;
    }

    fn sub(&mut self, other: Counts) {
        self.alu = self.alu.saturating_sub(other.alu);
        self.loads = self.loads.saturating_sub(other.loads);
        self.stores = self.stores.saturating_sub(other.stores);
    }

    fn total(&self) -> u64 {
        self.alu + self.loads + self.stores
    }
}

/// One parsed instruction line.
struct Insn<'a> {
    mnemonic: &'a str,
    operands: Vec<&'a str>,
}

/// The function being rewritten.
#[derive(Default)]
struct Function {
    name: String,
    block_hooks: u32,
    access_hooks: u32,
    labels: HashSet<String>,
    has_loop: bool,
    pointer_accesses: u32,
    counted: u64,
}

/// The stretch being counted.
struct Stretch {
    /// Index of its placeholder line in the output.
    slot: usize,
    counts: Counts,
    /// Counts of the last instructions that set up a hook's argument
    /// registers (`%rdi`, `%rsi`), to be taken back when the hook follows.
    arg_setup: Vec<Counts>,
}

/// Rewrites the assembly of one kernel translation unit.
pub fn instrument(asm: &str, options: &Options) -> Result<Instrumented, InstrumentError> {
    let mut out: Vec<String> = Vec::with_capacity(asm.lines().count() + 64);
    let mut stats = Stats::default();
    let mut excluded_files: HashMap<u32, bool> = HashMap::new();
    let mut header_code = false;
    let mut pending_function: Option<String> = None;
    let mut function: Option<Function> = None;
    let mut stretch: Option<Stretch> = None;

    for line in asm.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            out.push(line.to_string());
            continue;
        }
        if trimmed.starts_with('.') && !trimmed.ends_with(':') {
            // A directive.
            let mut words = trimmed.split_whitespace();
            match words.next() {
                Some(".file") => {
                    if let Some((index, path)) = parse_file_directive(trimmed) {
                        let excluded = options
                            .excluded_prefixes
                            .iter()
                            .any(|p| !p.is_empty() && path.starts_with(p.as_str()));
                        excluded_files.insert(index, excluded);
                    }
                }
                Some(".loc") => {
                    if let Some(index) = words.next().and_then(|w| w.parse::<u32>().ok()) {
                        header_code = excluded_files.get(&index).copied().unwrap_or(false);
                    }
                }
                Some(".type") => {
                    let rest: String = words.collect::<Vec<_>>().join(" ");
                    if rest.ends_with("@function") {
                        pending_function = rest.split(',').next().map(|n| n.trim().to_string());
                    }
                }
                Some(".size") => {
                    let name = words.next().map(|w| w.trim_end_matches(','));
                    let ends_current =
                        matches!((&function, name), (Some(f), Some(n)) if f.name == n);
                    if ends_current {
                        close_stretch(&mut stretch, &mut out, &mut stats);
                        if let Some(f) = function.take() {
                            check_function(&f)?;
                        }
                    }
                }
                _ => {}
            }
            out.push(line.to_string());
            continue;
        }
        if let Some(label) = trimmed.strip_suffix(':') {
            if pending_function.as_deref() == Some(label) {
                close_stretch(&mut stretch, &mut out, &mut stats);
                stats.functions += 1;
                function = Some(Function {
                    name: label.to_string(),
                    ..Function::default()
                });
                pending_function = None;
                header_code = false;
            } else if let Some(f) = function.as_mut() {
                f.labels.insert(label.to_string());
            }
            out.push(line.to_string());
            continue;
        }
        // An instruction.
        let Some(insn) = parse_insn(trimmed) else {
            out.push(line.to_string());
            continue;
        };
        if function.is_none() {
            out.push(line.to_string());
            continue;
        }
        let call_target = if insn.mnemonic.starts_with("call") {
            insn.operands.first().copied()
        } else {
            None
        };
        let target_name = call_target.map(symbol_of);
        // The basic-block hook: a new stretch in its place.
        if target_name == Some("__sanitizer_cov_trace_pc") {
            stats.block_hooks += 1;
            if let Some(f) = function.as_mut() {
                f.block_hooks += 1;
            }
            close_stretch(&mut stretch, &mut out, &mut stats);
            open_stretch(&mut stretch, &mut out);
            continue;
        }
        if stretch.is_none() {
            // The function's entry.
            open_stretch(&mut stretch, &mut out);
        }
        let is_access_hook = target_name.is_some_and(|t| t.starts_with("__asan_"));
        if is_access_hook {
            // Kept in header code too: the headers reach GM only through the
            // runtime (never through these hooks), so a GM address seen here
            // is the kernel's own access, inlined into a header function
            // (a `half` read through a `__gm__ half*`, say).
            stats.access_hooks += 1;
            if let Some(f) = function.as_mut() {
                f.access_hooks += 1;
            }
            if let Some(s) = stretch.as_mut() {
                for setup in s.arg_setup.drain(..) {
                    s.counts.sub(setup);
                }
            }
            out.push(line.to_string());
            // A call: what follows is a new stretch.
            close_stretch(&mut stretch, &mut out, &mut stats);
            open_stretch(&mut stretch, &mut out);
            continue;
        }
        let mut text = line.to_string();
        if !header_code {
            // Rename calls (and tail calls) of the wrapped C library
            // functions.
            let jump_target = if insn.mnemonic.starts_with("jmp") {
                insn.operands.first().copied()
            } else {
                None
            };
            if let Some(target) = call_target.or(jump_target) {
                let name = symbol_of(target);
                if WRAPPED.contains(&name) {
                    text = line.replacen(target, &format!("ascendopt_{name}@PLT"), 1);
                }
            }
            if let Some(checked) = checked_indirect_call(&insn, stats.checked_calls) {
                stats.checked_calls += 1;
                text = checked;
            }
            let counts = classify(&insn);
            let f = function.as_mut().expect("inside a function");
            if insn.mnemonic.starts_with('j') {
                if let Some(target) = insn.operands.first() {
                    if f.labels.contains(*target) {
                        f.has_loop = true;
                    }
                }
            }
            if is_pointer_access(&insn) {
                f.pointer_accesses += 1;
            }
            f.counted += counts.total();
            if let Some(s) = stretch.as_mut() {
                s.counts.add(counts);
                if sets_hook_argument(&insn) {
                    s.arg_setup.push(counts);
                    if s.arg_setup.len() > 2 {
                        s.arg_setup.remove(0);
                    }
                } else {
                    s.arg_setup.clear();
                }
            }
        } else if let Some(s) = stretch.as_mut() {
            s.arg_setup.clear();
        }
        out.push(text);
        if call_target.is_some() {
            close_stretch(&mut stretch, &mut out, &mut stats);
            open_stretch(&mut stretch, &mut out);
        }
    }
    close_stretch(&mut stretch, &mut out, &mut stats);
    if let Some(f) = function.take() {
        check_function(&f)?;
    }
    let mut text = String::with_capacity(asm.len() + 4096);
    for line in out {
        if !line.is_empty() {
            text.push_str(&line);
            text.push('\n');
        }
    }
    Ok(Instrumented { text, stats })
}

/// An indirect call of the kernel's own code (`call *%rax`,
/// `call *8(%rbx)`) with its target checked first: inside the kernel
/// library's code (`kernel_entry.cpp`'s `ascendopt_text_lo`/`_hi`) it is
/// made as before, through `%r11`; elsewhere `ascendopt_check_call`
/// lets an entry of the runtime table through (macros expanded in the
/// kernel's lines call it) and ends the launch with a fault for anything
/// else (the host library, the C library: code that is not counted).
/// `%r11` and the flags hold nothing at a call (see the module docs); the
/// check runs at the call's own stack pointer, so its call is aligned as
/// the original was, and it keeps every argument register. A call through the GOT
/// (`-fno-plt`: `call *f@GOTPCREL(%rip)`) names an import, which the
/// static check's import list governs, and is left alone.
fn checked_indirect_call(insn: &Insn<'_>, n: u32) -> Option<String> {
    if !insn.mnemonic.starts_with("call") {
        return None;
    }
    let [target] = insn.operands.as_slice() else {
        return None;
    };
    let target = target.strip_prefix('*')?;
    if target.contains("@GOTPCREL") {
        return None;
    }
    Some(format!(
        "\tmovq\t{target}, %r11\n\
         \tcmpq\tascendopt_text_lo(%rip), %r11\n\
         \tjb\t.Lascendopt_check{n}\n\
         \tcmpq\tascendopt_text_hi(%rip), %r11\n\
         \tjb\t.Lascendopt_call{n}\n\
         .Lascendopt_check{n}:\n\
         \tcall\tascendopt_check_call\n\
         .Lascendopt_call{n}:\n\
         \tcall\t*%r11"
    ))
}

/// Starts a stretch at the current end of the output.
fn open_stretch(stretch: &mut Option<Stretch>, out: &mut Vec<String>) {
    out.push(String::new());
    *stretch = Some(Stretch {
        slot: out.len() - 1,
        counts: Counts::default(),
        arg_setup: Vec::new(),
    });
}

/// Ends the current stretch: its placeholder becomes the counting code.
fn close_stretch(stretch: &mut Option<Stretch>, out: &mut [String], stats: &mut Stats) {
    let Some(s) = stretch.take() else {
        return;
    };
    if s.counts.total() == 0 {
        return;
    }
    stats.counted_stretches += 1;
    stats.counted_instructions += s.counts.total();
    let mut code = format!("\tmovq\t{COUNTERS}@gottpoff(%rip), %r11");
    for (value, offset) in [
        (s.counts.alu, 0),
        (s.counts.loads, 8),
        (s.counts.stores, 16),
    ] {
        if value > 0 {
            let _ = write!(code, "\n\taddq\t${value}, %fs:{offset}(%r11)");
        }
    }
    out[s.slot] = code;
}

/// A function escaped the instrumentation when it has a loop and no
/// basic-block hook, or pointer accesses and no load/store hook.
fn check_function(f: &Function) -> Result<(), InstrumentError> {
    if f.counted == 0 {
        return Ok(());
    }
    if f.has_loop && f.block_hooks == 0 {
        return Err(InstrumentError::Uninstrumented {
            function: f.name.clone(),
            what: "a loop without basic-block coverage hooks",
        });
    }
    if f.pointer_accesses > 0 && f.access_hooks == 0 {
        return Err(InstrumentError::Uninstrumented {
            function: f.name.clone(),
            what: "loads and stores through pointers without address hooks",
        });
    }
    Ok(())
}

/// `(index, path)` of a `.file N "name"` or `.file N "dir" "name"`
/// directive (the path joined when the name is relative).
fn parse_file_directive(line: &str) -> Option<(u32, String)> {
    let rest = line.strip_prefix(".file")?.trim_start();
    let (index, rest) = rest.split_once(char::is_whitespace)?;
    let index = index.parse::<u32>().ok()?;
    let strings: Vec<&str> = rest.split('"').skip(1).step_by(2).collect();
    match strings.as_slice() {
        [name] => Some((index, (*name).to_string())),
        [dir, name, ..] => {
            if name.starts_with('/') {
                Some((index, (*name).to_string()))
            } else {
                Some((index, format!("{}/{}", dir.trim_end_matches('/'), name)))
            }
        }
        _ => None,
    }
}

/// Instruction prefixes that may stand before the mnemonic.
const PREFIXES: &[&str] = &[
    "rep", "repe", "repz", "repne", "repnz", "lock", "notrack", "data16", "addr32", "rex64", "cs",
    "ds", "ss", "es", "fs", "gs", "bnd",
];

/// Splits an instruction line into mnemonic and operands (None for a bare
/// prefix line).
fn parse_insn(trimmed: &str) -> Option<Insn<'_>> {
    let code = trimmed.split('#').next().unwrap_or("").trim();
    let mut rest = code;
    loop {
        let (word, tail) = match rest.split_once(char::is_whitespace) {
            Some((w, t)) => (w, t.trim_start()),
            None => (rest, ""),
        };
        if word.is_empty() {
            return None;
        }
        if PREFIXES.contains(&word) {
            rest = tail;
            continue;
        }
        return Some(Insn {
            mnemonic: word,
            operands: split_operands(tail),
        });
    }
}

/// Operands separated by commas outside parentheses.
fn split_operands(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

/// The symbol a call or jump names (`memcpy@PLT` -> `memcpy`).
fn symbol_of(target: &str) -> &str {
    target.split('@').next().unwrap_or(target).trim()
}

/// True for a memory operand (not an immediate, register or `*` register).
fn is_memory(operand: &str) -> bool {
    let operand = operand.trim_start_matches('*');
    !operand.starts_with('$') && !operand.starts_with('%') && !operand.is_empty()
}

/// True for an instruction that only computes an address.
fn is_lea(mnemonic: &str) -> bool {
    mnemonic.starts_with("lea")
}

/// True when the instruction loads or stores through a register other
/// than the stack pointer or the instruction pointer.
fn is_pointer_access(insn: &Insn<'_>) -> bool {
    if is_lea(insn.mnemonic) || insn.mnemonic.starts_with("nop") || insn.mnemonic.starts_with('j') {
        return false;
    }
    if insn.mnemonic.starts_with("call") {
        return false;
    }
    insn.operands.iter().any(|op| {
        is_memory(op)
            && op.contains('(')
            && !op.contains("(%rsp")
            && !op.contains("(%rip")
            && !op.contains("(%esp")
    })
}

/// True for a `mov`/`lea` into `%rdi`/`%rsi` (a hook's argument).
fn sets_hook_argument(insn: &Insn<'_>) -> bool {
    let m = insn.mnemonic;
    (m.starts_with("mov") || is_lea(m))
        && insn
            .operands
            .last()
            .is_some_and(|d| matches!(*d, "%rdi" | "%edi" | "%rsi" | "%esi"))
}

/// Lanes of a packed SIMD instruction (1 for everything else).
fn lanes(insn: &Insn<'_>) -> u64 {
    let width = if insn.operands.iter().any(|o| o.contains("%zmm")) {
        64
    } else if insn.operands.iter().any(|o| o.contains("%ymm")) {
        32
    } else if insn.operands.iter().any(|o| o.contains("%xmm")) {
        16
    } else {
        return 1;
    };
    let m = insn.mnemonic;
    let m = if m.len() > 1 && m.starts_with('v') {
        &m[1..]
    } else {
        m
    };
    let scalar_forms = [
        "pextr",
        "pinsr",
        "pmovmsk",
        "ptest",
        "pcmpestr",
        "pcmpistr",
        "prefetch",
        "movmsk",
        "extractps",
        "insertps",
        "movd",
        "movq",
        "movss",
        "movsd",
    ];
    if scalar_forms.iter().any(|s| m.starts_with(s)) {
        return 1;
    }
    let packed = m.starts_with('p')
        || m.starts_with("movdq")
        || m.starts_with("lddqu")
        || m.ends_with("ps")
        || m.ends_with("pd");
    if !packed {
        return 1;
    }
    // Zeroing idiom (`pxor %xmm0, %xmm0`) and the sign/abs masks of scalar
    // float code (`andps .LC0(%rip), %xmm0`): one instruction.
    let logical = ["xor", "pxor", "and", "pand", "andn", "pandn", "or", "por"]
        .iter()
        .any(|l| m.starts_with(l));
    if logical {
        let regs: Vec<&&str> = insn
            .operands
            .iter()
            .filter(|o| o.starts_with('%'))
            .collect();
        if regs.len() >= 2 && regs.windows(2).all(|w| w[0] == w[1]) {
            return 1;
        }
        if insn.operands.iter().any(|o| o.contains("(%rip)")) {
            return 1;
        }
    }
    width / 4
}

/// Instruction counts of one kernel instruction.
fn classify(insn: &Insn<'_>) -> Counts {
    let m = insn.mnemonic;
    if m.starts_with("nop") || m == "endbr64" || m.is_empty() {
        return Counts::default();
    }
    let one = |alu: u64, loads: u64, stores: u64| Counts { alu, loads, stores };
    if m.starts_with("push") {
        return one(0, 0, 1);
    }
    if m.starts_with("pop") || m.starts_with("ret") || m == "leave" || m == "leaveq" {
        return one(0, 1, 0);
    }
    if is_lea(m) || m.starts_with('j') || m.starts_with("call") {
        let memory = !is_lea(m)
            && insn
                .operands
                .first()
                .is_some_and(|o| is_memory(o) && o.starts_with('*'));
        return one(1, u64::from(memory), 0);
    }
    let lanes = lanes(insn);
    let (src_mem, dst_mem) = match insn.operands.split_last() {
        None => (false, false),
        Some((last, [])) => (is_memory(last), is_memory(last)),
        Some((last, sources)) => (sources.iter().any(|o| is_memory(o)), is_memory(last)),
    };
    let is_move = m.starts_with("mov") || m.starts_with("vmov");
    let is_compare = ["cmp", "test", "ucomi", "comi", "vucomi", "vcomi", "bt"]
        .iter()
        .any(|p| m.starts_with(p));
    let c = if is_move {
        one(
            u64::from(!src_mem && !dst_mem),
            u64::from(src_mem),
            u64::from(dst_mem),
        )
    } else if is_compare {
        one(1, u64::from(src_mem || dst_mem), 0)
    } else if insn.operands.len() == 1 {
        // Unary read-modify-write (`incl (%rax)`, `negq %rdx`).
        one(1, u64::from(dst_mem), u64::from(dst_mem))
    } else {
        one(1, u64::from(src_mem || dst_mem), u64::from(dst_mem))
    };
    Counts {
        alu: c.alu * lanes,
        loads: c.loads * lanes,
        stores: c.stores * lanes,
    }
}

/// The 1-based line of the first `#line` directive or GNU line marker
/// (`# 12 "file"`) in a C++ source, if any. Such a directive could make
/// the kernel's code claim to be the simulator's headers' and go
/// uncounted, so the build refuses it. Recognised as the preprocessor
/// does: after joining backslash-continued lines, with comments, string
/// and character literals skipped, and `%:` for `#`.
pub fn line_directive(source: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut i = 0;
    let mut line = 1;
    // At the start of a logical line, only blanks and comments so far.
    let mut line_start = true;
    let skip_splice = |i: usize| -> Option<usize> {
        // A backslash followed by a newline (optionally \r\n) is removed.
        if bytes.get(i) == Some(&b'\\') {
            match (bytes.get(i + 1), bytes.get(i + 2)) {
                (Some(b'\n'), _) => return Some(i + 2),
                (Some(b'\r'), Some(b'\n')) => return Some(i + 3),
                _ => {}
            }
        }
        None
    };
    while i < bytes.len() {
        if let Some(next) = skip_splice(i) {
            i = next;
            line += 1;
            continue;
        }
        let c = bytes[i];
        match c {
            b'\n' => {
                line += 1;
                line_start = true;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                // A line comment runs to the (unspliced) end of line.
                while i < bytes.len() && bytes[i] != b'\n' {
                    if let Some(next) = skip_splice(i) {
                        i = next;
                        line += 1;
                    } else {
                        i += 1;
                    }
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            b'#' | b'%' if line_start && (c == b'#' || bytes.get(i + 1) == Some(&b':')) => {
                let directive_line = line;
                i += if c == b'#' { 1 } else { 2 };
                // Blanks and comments between `#` and the directive name.
                loop {
                    if let Some(next) = skip_splice(i) {
                        i = next;
                        line += 1;
                    } else if matches!(bytes.get(i), Some(b' ' | b'\t')) {
                        i += 1;
                    } else if bytes.get(i) == Some(&b'/') && bytes.get(i + 1) == Some(&b'*') {
                        i += 2;
                        while i < bytes.len()
                            && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/'))
                        {
                            if bytes[i] == b'\n' {
                                line += 1;
                            }
                            i += 1;
                        }
                        i += 2;
                    } else {
                        break;
                    }
                }
                let mut name = String::new();
                while i < bytes.len() {
                    if let Some(next) = skip_splice(i) {
                        i = next;
                        line += 1;
                        continue;
                    }
                    let b = bytes[i];
                    if b.is_ascii_alphanumeric() || b == b'_' {
                        name.push(b as char);
                        i += 1;
                    } else {
                        break;
                    }
                }
                if name == "line" || name.starts_with(|d: char| d.is_ascii_digit()) {
                    return Some(directive_line);
                }
                line_start = false;
            }
            b'"' | b'\'' => {
                // A raw string R"delim( ... )delim".
                let raw = c == b'"' && i > 0 && bytes[i - 1] == b'R';
                if raw {
                    let open = source[i + 1..].find('(').map(|p| i + 1 + p);
                    if let Some(open) = open {
                        let delim = &source[i + 1..open];
                        let close = format!("){delim}\"");
                        let end = source[open..]
                            .find(&close)
                            .map_or(bytes.len(), |p| open + p + close.len());
                        line += source[i..end].matches('\n').count();
                        i = end;
                        line_start = false;
                        continue;
                    }
                }
                i += 1;
                while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                    if let Some(next) = skip_splice(i) {
                        i = next;
                        line += 1;
                    } else if bytes[i] == b'\\' {
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                i += 1;
                line_start = false;
            }
            _ => {
                line_start = false;
                i += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
