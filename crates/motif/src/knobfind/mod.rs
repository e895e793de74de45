//! Tiling knobs found in host code nobody annotated.
//!
//! [`discover`] reads the host sources (op_host/*.cpp) with tree-sitter and
//! finds the integer decisions the tiling makes: named integer constants
//! (`const`, `constexpr`, `#define`) and integer literals in decision
//! positions (the argument of `SetBlockDim`, of a tiling-data setter, the
//! initial value of a local, a clamp) whose value flows ([`flow`]) into
//! the block dim or into a tiling-data field. Each becomes a
//! [`FoundKnob`] with a role (core count, buffer count, tile or UB size,
//! count) and a domain derived from the platform (the core count, the UB
//! size, 32-byte alignment and the 256-byte repeat) and from its value.
//! The method's `tune::confirm` then runs the host tiling alone with changed values and
//! keeps a knob only when a value changes the tiling, with one value per
//! distinct tiling (the code's own clamps merge the rest).
//!
//! Three renderings of a package with found knobs:
//! - [`with_values`]: the sources with new literal values in place (what
//!   Stage I's core, tile and buffer motifs propose: the diff is a number);
//! - [`knobbed`]: the sources with every found knob a marked constant of an
//!   evolvable tiling region (`// ascendopt:tiling-begin found: ...`), so
//!   Stage II's search, its parametrised host builds and
//!   `ascendopt_op::tiling` work on it as on annotated code;
//! - [`restore`]: a knobbed text back to the plain form with the values it
//!   holds (the optimised package reads like the input).
//!
//! Constants already inside an annotated region are the user's knobs and
//! are left alone; where the user annotated knobs, a found knob is kept
//! only when no annotated knob plays its role (tile sizes and tile counts
//! count as one role): the annotation states that part of the search
//! space. Never knobs: values assigned per data type (element widths,
//! per-dtype factors: [`dtype_bound_names`]), sizes of at most 8 (an
//! element's width), and a value that reaches `SetBlockDim` only as an
//! operand of arithmetic is not a core count ([`flow`]).

pub(crate) mod flow;

use crate::syntax::{self, Parsed};
use crate::Sources;
use flow::{CandKey, Sink};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use tree_sitter::Node;

/// What the tiling functions are told about the chip: the numbers a
/// knob's domain is derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChipLimits {
    /// Vector cores.
    pub cores: u32,
    /// UB bytes per vector core.
    pub ub_bytes: u64,
}

impl Default for ChipLimits {
    /// The Ascend 910B2 (48 vector cores, 192 KB UB).
    fn default() -> ChipLimits {
        ChipLimits {
            cores: 48,
            ub_bytes: 192 * 1024,
        }
    }
}

/// Bytes of a UB data block (copies and UB addresses are aligned to it).
pub const BLOCK_BYTES: i64 = 32;
/// Bytes of one vector repeat.
pub const REPEAT_BYTES: i64 = 256;

/// What a knob decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// How many cores the launch uses (reaches `SetBlockDim`).
    Cores,
    /// Buffers per queue.
    Buffers,
    /// A tile, block or UB size (bytes or elements).
    Size,
    /// A count (tiles per core, a UB split factor).
    Count,
}

impl Role {
    /// In words.
    pub fn describe(self) -> &'static str {
        match self {
            Role::Cores => "core count",
            Role::Buffers => "buffer count",
            Role::Size => "tile or UB size",
            Role::Count => "count or split factor",
        }
    }
}

/// How a knob is written in the source, and so how it is rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Form {
    /// A file- or namespace-scope `const`/`constexpr` integer declared alone
    /// on its line: the line becomes the knob.
    Constant {
        /// Byte range of the whole line (without its newline).
        line: Range<usize>,
        /// The declared type.
        ty: String,
    },
    /// A `#define NAME value`: a knob constant is introduced before it
    /// and the macro refers to it.
    Define {
        /// Byte range of the value text.
        value: Range<usize>,
        /// Byte offset of the start of the define's line.
        line_start: usize,
    },
    /// A literal (alone, or the value of a local constant): a knob
    /// constant is introduced before the enclosing function and the
    /// literal refers to it.
    Literal {
        /// Byte offset of the start of the enclosing function's first
        /// line (where the knob goes).
        insert_at: usize,
    },
}

/// One integer decision of the host tiling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundKnob {
    /// The knob's name in the knobbed sources (the constant's own name,
    /// or `ASCENDOPT_<label>` for introduced ones).
    pub name: String,
    /// What it is in the code (`BLOCK_DIM`, `tileLength = 1024`,
    /// `SetBlockDim(8)`).
    pub label: String,
    /// Host file (relative to the package).
    pub file: String,
    /// 1-based line in the plain sources.
    pub line: usize,
    /// Its value.
    pub value: i64,
    /// The literal's text after the digits (`u`, `UL`), kept on rewrite.
    pub suffix: String,
    /// What it decides.
    pub role: Role,
    /// Where it flows (`SetBlockDim`, `tiling field tileLength`).
    pub sinks: Vec<String>,
    /// Smallest value of its domain.
    pub min: i64,
    /// Largest value of its domain.
    pub max: i64,
    /// Admitted values between: `pow2`, or a step.
    pub step: Step,
    /// Byte range of the value literal in the plain file.
    pub literal: Range<usize>,
    form: Form,
}

/// Admitted values of a found knob between its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Powers of two.
    Pow2,
    /// min, min + n, ...
    Every(i64),
}

impl FoundKnob {
    /// Every admitted value, ascending.
    pub fn candidates(&self) -> Vec<i64> {
        let mut out = Vec::new();
        match self.step {
            Step::Pow2 => {
                let mut v = 1i64;
                while v <= self.max {
                    if v >= self.min {
                        out.push(v);
                    }
                    v = match v.checked_mul(2) {
                        Some(n) => n,
                        None => break,
                    };
                }
            }
            Step::Every(n) => {
                let mut v = self.min;
                while v <= self.max && out.len() < 100_000 {
                    out.push(v);
                    v = match v.checked_add(n.max(1)) {
                        Some(n) => n,
                        None => break,
                    };
                }
            }
        }
        if !out.contains(&self.value) {
            out.push(self.value);
            out.sort_unstable();
        }
        out
    }

    /// The domain as an `ascendopt:knob` annotation.
    pub fn domain(&self) -> String {
        match self.step {
            Step::Pow2 if is_pow2(self.value) => {
                format!("min={} max={} step=pow2", self.min, self.max)
            }
            Step::Every(n) if (self.value - self.min) % n.max(1) == 0 => {
                format!("min={} max={} step={n}", self.min, self.max)
            }
            _ => {
                let c: Vec<String> = self.candidates().iter().map(i64::to_string).collect();
                format!("choices={}", c.join(","))
            }
        }
    }

    /// One line for reports: `BLOCK_DIM = 8 at op_host/x.cpp:12 (core
    /// count; SetBlockDim)`.
    pub fn describe(&self) -> String {
        // A literal's label already holds its value (`tileLength = 1024`).
        let what = if self.label.contains(" = ") {
            self.label.clone()
        } else {
            format!("{} = {}", self.label, self.value)
        };
        let sinks = if self.sinks.len() > 3 {
            format!(
                "{} and {} more",
                self.sinks[..3].join(", "),
                self.sinks.len() - 3
            )
        } else {
            self.sinks.join(", ")
        };
        format!(
            "{what} at {}:{} ({}; {sinks})",
            self.file,
            self.line,
            self.role.describe()
        )
    }
}

fn is_pow2(v: i64) -> bool {
    v > 0 && v & (v - 1) == 0
}

/// The knobs found in a package's host code, in file and line order.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The knobs.
    pub knobs: Vec<FoundKnob>,
    /// Decisions the host makes that are not knobs, and why (a Matmul
    /// base block the kernel fixes at compile time).
    pub not_knobs: Vec<String>,
}

/// Names that are alignments, keys or identities, never tiling choices;
/// `MIX_RATIO`/`TASK_RATIO`: the AIC:AIV ratio of a MIX launch (2 vector
/// cores per AI core, guide 6.2.3.13.3 GetTaskRatio), a hardware fact.
fn excluded_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "ALIGN",
        "KEY",
        "DTYPE",
        "TYPE",
        "MODE",
        "FLAG",
        "INDEX",
        "IDX",
        "VERSION",
        "ATTR",
        "DIM_NUM",
        "RANK",
        "EPS",
        "MASK",
        "BIT",
        "SHIFT",
        "MIN_VAL",
        "MAX_VAL",
        "MIX_RATIO",
        "TASK_RATIO",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n == "BLOCK_SIZE"
        || n == "BLOCK_BYTES"
        || n == "ONE_BLK_SIZE"
        || n == "ONE_REPEAT_BYTE_SIZE"
}

fn words(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// The role a candidate plays from its name and where it flows;
/// `direct_cores`: its value reaches `SetBlockDim` as a value
/// ([`flow::Flow::direct_block_dim`]).
fn role_of(name: &str, sinks: &BTreeSet<Sink>, direct_cores: bool, value: i64) -> Role {
    // A Matmul base block is a size whatever its value (baseK 64 too),
    // and what sets the L1 depths or the L0 buffer counts of a
    // TCubeTiling (depthA1 = stepM x stepKa x db, dbL0A; table 6-1073:
    // db 1 or 2) is a buffer count.
    if base_block(sinks) {
        return Role::Size;
    }
    if sinks.iter().any(|s| {
        matches!(s, Sink::Field(f) if ["depthA1", "depthB1", "dbL0A", "dbL0B", "dbL0C"].contains(&f.as_str()))
    }) {
        return Role::Buffers;
    }
    let n = words(name);
    let lengthy = ["len", "size", "byte", "elem", "length", "width"]
        .iter()
        .any(|w| n.contains(w));
    if n.contains("buf") && (n.contains("num") || n.contains("cnt") || n.contains("count"))
        || n.contains("double")
    {
        return Role::Buffers;
    }
    let corey = n.contains("core")
        || n.contains("block_dim")
        || n.contains("blockdim")
        || n.contains("block_num")
        || n.contains("blocknum")
        || n.contains("aiv");
    // A value that reaches the block dim only as an operand of
    // arithmetic (a divisor of a size) is not the core count, whatever
    // the name it is assigned to.
    let indirect_only = sinks.contains(&Sink::BlockDim) && !direct_cores;
    if corey && !lengthy && !indirect_only {
        return Role::Cores;
    }
    if lengthy || n.contains("tile") && !n.contains("num") || n.contains("ub") {
        return if value <= 64 && !lengthy {
            Role::Count
        } else {
            Role::Size
        };
    }
    // A value that only divides a size on its way to the block dim (an
    // element width, a tile length) is not a core count.
    if direct_cores && sinks.contains(&Sink::BlockDim) {
        return Role::Cores;
    }
    if let Some(field) = sinks.iter().find_map(|s| match s {
        Sink::Field(f) => Some(words(f)),
        _ => None,
    }) {
        if field.contains("buf") {
            return Role::Buffers;
        }
        if value > 64 {
            return Role::Size;
        }
    }
    if value <= 64 {
        Role::Count
    } else {
        Role::Size
    }
}

/// The domain of a candidate: from the platform for cores and sizes, from
/// the value for counts.
fn domain_of(role: Role, value: i64, chip: &ChipLimits) -> (i64, i64, Step) {
    let cores = i64::from(chip.cores.max(1));
    let ub = chip.ub_bytes.max(1) as i64;
    match role {
        Role::Cores => (1, cores.max(value), Step::Every(1)),
        Role::Buffers => (1, 2.max(value), Step::Every(1)),
        Role::Count => (1, 64.max(value.saturating_mul(4)), Step::Every(1)),
        Role::Size => {
            if is_pow2(value) {
                let lo = (value / 4096).clamp(1, BLOCK_BYTES).min(value);
                (lo, ub.max(value), Step::Pow2)
            } else {
                // Multiples of the largest power of two dividing the value,
                // at most a repeat: 32-byte blocks or element counts per
                // repeat.
                let unit = (value & value.wrapping_neg()).clamp(1, REPEAT_BYTES);
                (unit, ub.max(value) / unit * unit, Step::Every(unit))
            }
        }
    }
}

/// A Matmul base block size (`SetFixSplit`'s baseM, baseN or baseK):
/// TCubeTiling wants them aligned to the 16 x 16 fractal (guide 6.2.4.2.2
/// table 6-1073), so their domain is multiples of 16, not byte sizes.
fn base_block(sinks: &BTreeSet<Sink>) -> bool {
    sinks
        .iter()
        .any(|s| matches!(s, Sink::Field(f) if f == "baseM" || f == "baseN" || f == "baseK"))
}

/// The Matmul iterate order (`SetTraverse`: 1 FIRSTM, 2 FIRSTN).
fn traverse(sinks: &BTreeSet<Sink>) -> bool {
    sinks
        .iter()
        .any(|s| matches!(s, Sink::Field(f) if f == "iterateOrder"))
}

/// Multiples of 16 up to 512 (L0A and L0B hold 64 KB: a double-buffered
/// 2-byte block of 512 x 32; GetTiling refuses what does not fit), or the
/// value's own when it is larger.
fn base_block_domain(value: i64) -> (i64, i64, Step) {
    (16, value.max(512), Step::Every(16))
}

/// The C++ type of a literal with this suffix.
fn literal_type(suffix: &str, value: i64) -> &'static str {
    let s = suffix.to_ascii_lowercase();
    let unsigned = s.contains('u');
    let longs = s.matches('l').count();
    match (unsigned, longs) {
        (false, 0) if value <= i64::from(i32::MAX) => "int",
        (false, 0) | (false, 2) => "long long",
        (false, _) => "long",
        (true, 0) => "unsigned int",
        (true, 1) => "unsigned long",
        (true, _) => "unsigned long long",
    }
}

/// Byte ranges of the annotated (user) tiling regions of a text.
fn marked_regions(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if line.contains("ascendopt:tiling-begin") {
            open = Some(pos);
        } else if line.contains("ascendopt:tiling-end") {
            if let Some(s) = open.take() {
                out.push(s..pos + line.len());
            }
        }
        pos += line.len();
    }
    out
}

/// Tiling-data fields declared in the host headers
/// (`TILING_DATA_FIELD_DEF(type, name)` or a struct whose name mentions
/// tiling).
fn tiling_fields(sources: &Sources) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, text) in sources.files() {
        let mut rest = text;
        while let Some(p) = rest.find("TILING_DATA_FIELD_DEF") {
            rest = &rest[p..];
            let Some(open) = rest.find('(') else { break };
            let Some(close) = rest[open..].find(')') else {
                break;
            };
            let inside = &rest[open + 1..open + close];
            if let Some(name) = inside.split(',').nth(1) {
                let name = name.trim();
                if !name.is_empty() {
                    out.insert(name.to_string());
                }
            }
            rest = &rest[open + close..];
        }
    }
    out
}

/// A candidate before flow analysis.
struct Candidate {
    key: CandKey,
    label: String,
    line: usize,
    value: i64,
    suffix: String,
    literal: Range<usize>,
    form: Form,
    name: Option<String>,
}

/// True when a literal sits where the tiling makes a choice: not an index,
/// a size of, a template argument, a condition, a case label, an argument
/// of a call other than a sink or a clamp, a bit operation, or a rounding
/// `+ n - 1`.
fn decision_position(parsed: &Parsed<'_>, lit: Node<'_>) -> bool {
    let mut child = lit;
    let mut cur = lit.parent();
    while let Some(n) = cur {
        match n.kind() {
            "subscript_expression"
            | "sizeof_expression"
            | "template_argument_list"
            | "case_statement"
            | "condition_clause"
            | "array_declarator"
            | "enumerator"
            | "attribute"
            | "preproc_if"
            | "preproc_ifdef"
            | "return_statement" => return false,
            "binary_expression" => {
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| parsed.src(o))
                    .unwrap_or("");
                // Alignment: `x / 8 * 8` and `x * 8 / 8`, `(x + 7) / 8`.
                if op == "/" || op == "*" {
                    let lit = parsed.src(lit);
                    let pair = n.parent().filter(|p| p.kind() == "binary_expression");
                    let same_in = |e: tree_sitter::Node<'_>| {
                        syntax::named_children(e)
                            .iter()
                            .any(|c| c.kind() == "number_literal" && parsed.src(*c) == lit)
                    };
                    if let Some(p) = pair {
                        let pop = p
                            .child_by_field_name("operator")
                            .map(|o| parsed.src(o))
                            .unwrap_or("");
                        if (pop == "*" || pop == "/") && pop != op && same_in(p) {
                            return false;
                        }
                    }
                    // `(x / 8) * 8`: the multiplier of a rounding.
                    let other = n
                        .child_by_field_name("left")
                        .filter(|l| *l != child)
                        .or_else(|| n.child_by_field_name("right").filter(|r| *r != child))
                        .map(|mut e| {
                            while e.kind() == "parenthesized_expression" {
                                match syntax::named_children(e).into_iter().next() {
                                    Some(c) => e = c,
                                    None => break,
                                }
                            }
                            e
                        });
                    if let Some(o) = other {
                        let oop = o
                            .child_by_field_name("operator")
                            .map(|x| parsed.src(x))
                            .unwrap_or("");
                        if o.kind() == "binary_expression"
                            && (oop == "*" || oop == "/")
                            && oop != op
                            && same_in(o)
                        {
                            return false;
                        }
                    }
                    if op == "/" {
                        let left = n
                            .child_by_field_name("left")
                            .map(|l| parsed.src(l))
                            .unwrap_or("");
                        let (v, _) = syntax::int_literal(lit).unwrap_or((0, String::new()));
                        if left.contains(&format!("+ {}", v - 1))
                            || left.contains(&format!("{} - 1", lit))
                        {
                            return false;
                        }
                    }
                }
                if matches!(
                    op,
                    "%" | "<<"
                        | ">>"
                        | "&"
                        | "|"
                        | "^"
                        | "=="
                        | "!="
                        | "<"
                        | ">"
                        | "<="
                        | ">="
                        | "&&"
                        | "||"
                ) {
                    return false;
                }
                // `(x + 31) / 32`, `n - 1`: rounding and off-by-one terms.
                if (op == "+" || op == "-")
                    && n.child_by_field_name("right").is_some_and(|r| r == child)
                    && syntax::named_children(n)
                        .iter()
                        .any(|c| c.kind() == "number_literal")
                    && parsed.src(lit).trim_end_matches(['u', 'U', 'l', 'L']) != "0"
                {
                    let (v, _) = syntax::int_literal(parsed.src(lit)).unwrap_or((0, String::new()));
                    if v <= 1 || (v + 1).count_ones() == 1 {
                        return false;
                    }
                }
            }
            "call_expression" => {
                let name = syntax::Call::of(parsed, n)
                    .map(|c| c.name)
                    .unwrap_or_default();
                let ok = name == "SetBlockDim"
                    || name.starts_with("set_")
                    || matches!(name.as_str(), "min" | "max" | "Min" | "Max" | "static_cast");
                if !ok {
                    return false;
                }
            }
            "init_declarator"
            | "assignment_expression"
            | "conditional_expression"
            | "parenthesized_expression"
            | "argument_list"
            | "cast_expression"
            | "unary_expression"
            | "template_function"
            | "qualified_identifier" => {}
            "expression_statement" | "declaration" | "compound_statement" => return true,
            _ => return false,
        }
        child = n;
        cur = n.parent();
    }
    false
}

/// The name a literal is bound to, for its label: the local it
/// initialises, the target of an assignment, the setter's field.
fn bound_name(parsed: &Parsed<'_>, lit: Node<'_>) -> String {
    let mut cur = lit.parent();
    while let Some(n) = cur {
        match n.kind() {
            "init_declarator" => {
                if let Some(d) = n.child_by_field_name("declarator") {
                    if let Some(name) = syntax::declared_name(parsed, d) {
                        return name.to_string();
                    }
                }
            }
            "assignment_expression" => {
                if let Some(l) = n.child_by_field_name("left") {
                    if let Some(name) = flow::target_name(parsed, l) {
                        return name;
                    }
                }
            }
            "call_expression" => {
                if let Some(c) = syntax::Call::of(parsed, n) {
                    if c.name == "SetBlockDim" {
                        return "blockDim".to_string();
                    }
                    if let Some(f) = c.name.strip_prefix("set_") {
                        return f.to_string();
                    }
                }
            }
            _ => {}
        }
        cur = n.parent();
    }
    "value".to_string()
}

/// Finds the knobs of a package's host code.
pub fn discover(sources: &Sources, chip: &ChipLimits) -> Discovery {
    let fields = tiling_fields(sources);
    let stated = annotated_roles(sources);
    let fixed_base = kernel_fixed_base_block(sources);
    let mut knobs = Vec::new();
    let mut not_knobs = Vec::new();
    for (file, text) in sources.host_files() {
        if !file.ends_with(".cpp") && !file.ends_with(".cc") {
            continue;
        }
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        let marked = marked_regions(text);
        let in_marked = |b: usize| marked.iter().any(|r| r.contains(&b));
        let mut cands: Vec<Candidate> = Vec::new();
        let mut const_literals: BTreeSet<(usize, usize)> = BTreeSet::new();
        for node in parsed.all() {
            if node.has_error() {
                continue;
            }
            match node.kind() {
                "declaration" => {
                    if let Some(c) = constant_candidate(&parsed, node) {
                        if !in_marked(node.start_byte()) && !excluded_name(&c.label) {
                            const_literals.insert((c.literal.start, c.literal.end));
                            cands.push(c);
                        } else {
                            const_literals.insert((c.literal.start, c.literal.end));
                        }
                    }
                }
                "preproc_def" => {
                    let (Some(name), Some(value)) = (
                        node.child_by_field_name("name"),
                        node.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    let raw = parsed.src(value);
                    let Some((v, suffix)) = syntax::int_literal(raw) else {
                        continue;
                    };
                    let label = parsed.src(name).to_string();
                    if in_marked(node.start_byte()) || excluded_name(&label) || v < 2 {
                        continue;
                    }
                    let lead = raw.len() - raw.trim_start().len();
                    let start = value.start_byte() + lead;
                    let end = start + raw.trim().len();
                    let line_start = text[..node.start_byte()].rfind('\n').map_or(0, |p| p + 1);
                    cands.push(Candidate {
                        key: CandKey::Name(label.clone()),
                        label: label.clone(),
                        line: syntax::line_of(text, node.start_byte()),
                        value: v,
                        suffix,
                        literal: start..end,
                        form: Form::Define {
                            value: start..end,
                            line_start,
                        },
                        name: Some(label),
                    });
                }
                _ => {}
            }
        }
        // Literals in decision positions inside functions.
        for node in parsed.all() {
            if node.kind() != "number_literal" {
                continue;
            }
            let r = node.byte_range();
            if const_literals.contains(&(r.start, r.end)) || in_marked(r.start) {
                continue;
            }
            let Some((v, suffix)) = syntax::int_literal(parsed.src(node)) else {
                continue;
            };
            if v < 2 {
                continue;
            }
            let Some(func) = syntax::enclosing_function(node) else {
                continue;
            };
            if !decision_position(&parsed, node) {
                continue;
            }
            // Only free functions at file or namespace scope.
            let scope_ok = func
                .parent()
                .is_some_and(|p| p.kind() == "translation_unit" || p.kind() == "declaration_list");
            if !scope_ok {
                continue;
            }
            let insert_at = function_insert_point(text, func);
            let label = bound_name(&parsed, node);
            if excluded_name(&label) {
                continue;
            }
            cands.push(Candidate {
                key: CandKey::Literal(r.clone()),
                label: format!("{label} = {}", parsed.src(node)),
                line: syntax::line_of(text, r.start),
                value: v,
                suffix,
                literal: r,
                form: Form::Literal { insert_at },
                name: None,
            });
        }
        if cands.is_empty() {
            continue;
        }
        let by_dtype = dtype_bound_names(&parsed);
        cands.retain(|c| {
            let base = c.label.split(" = ").next().unwrap_or("");
            !by_dtype.contains(base)
        });
        if cands.is_empty() {
            continue;
        }
        let keys: Vec<CandKey> = cands.iter().map(|c| c.key.clone()).collect();
        let flow = flow::analyse(&parsed, &keys, &fields);
        let mut used_names: BTreeSet<String> = BTreeSet::new();
        for (i, c) in cands.into_iter().enumerate() {
            let sinks: BTreeSet<Sink> = flow
                .sinks
                .iter()
                .filter(|(_, set)| set.contains(&i))
                .map(|(s, _)| s.clone())
                .collect();
            let decisions: Vec<String> = sinks
                .iter()
                .filter_map(|s| match s {
                    Sink::BlockDim => Some("SetBlockDim".to_string()),
                    Sink::Field(f) => Some(format!("tiling field {f}")),
                    Sink::TilingKey => None,
                })
                .collect();
            if decisions.is_empty() {
                continue;
            }
            let role_name = match &c.name {
                Some(n) => n.clone(),
                None => flow
                    .first_names
                    .get(&i)
                    .cloned()
                    .unwrap_or_else(|| c.label.clone()),
            };
            let role = role_of(
                &role_name,
                &sinks,
                flow.direct_block_dim.contains(&i),
                c.value,
            );
            // A size of at most 8 is an element's width, not a tile.
            if role == Role::Size && c.value <= 8 {
                continue;
            }
            if stated.iter().any(|r| covers(*r, role)) {
                continue;
            }
            if role == Role::Size && base_block(&sinks) {
                if let Some(at) = &fixed_base {
                    not_knobs.push(format!(
                        "{} ({file}:{}): the kernel fixes the Matmul base block at compile time \
                         ({at}); a host value other than the kernel's cannot run on the chip",
                        c.label, c.line
                    ));
                    continue;
                }
            }
            let (min, max, step) = if role == Role::Size && base_block(&sinks) {
                base_block_domain(c.value)
            } else if traverse(&sinks) {
                (1, 2, Step::Every(1))
            } else {
                domain_of(role, c.value, chip)
            };
            let name = match (&c.form, &c.name) {
                (Form::Constant { .. }, Some(n)) => n.clone(),
                _ => {
                    let base = c.name.clone().unwrap_or_else(|| {
                        c.label.split(" = ").next().unwrap_or("value").to_string()
                    });
                    let mut stem = format!("ASCENDOPT_{}", upper_snake(&base));
                    if text.contains(&stem) || used_names.contains(&stem) {
                        stem = format!("{stem}_L{}", c.line);
                    }
                    stem
                }
            };
            used_names.insert(name.clone());
            knobs.push(FoundKnob {
                name,
                label: c.label,
                file: file.to_string(),
                line: c.line,
                value: c.value,
                suffix: c.suffix,
                role,
                sinks: decisions,
                min,
                max,
                step,
                literal: c.literal,
                form: c.form,
            });
        }
    }
    knobs.sort_by(|a, b| (&a.file, a.literal.start).cmp(&(&b.file, b.literal.start)));
    Discovery { knobs, not_knobs }
}

/// Where a kernel fixes its Matmul base block at compile time (the guide's
/// tiling constantisation, 3.10.4.6 and 6.2.4.2.1): a `MatmulShapeParams`
/// whose basicM/N/K (its 4th to 6th values) are not all 0, a
/// `GetBasicConfig` call, a `GetMatmulApiTiling` constant tiling, or a
/// non-zero value assigned to a config's `basicM`/`basicN`/`basicK`.
/// Such a kernel computes with its own block whatever the host's
/// TCubeTiling says, so the host's base block is not a knob.
fn kernel_fixed_base_block(sources: &Sources) -> Option<String> {
    for (file, text) in sources.kernel_files() {
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        for node in parsed.all() {
            let fixed = match node.kind() {
                "call_expression" => syntax::Call::of(&parsed, node)
                    .is_some_and(|c| c.name == "GetBasicConfig" || c.name == "GetMatmulApiTiling"),
                "declaration" => {
                    parsed.src(node).contains("MatmulShapeParams")
                        && syntax::descendants(node)
                            .into_iter()
                            .find(|n| n.kind() == "initializer_list")
                            .is_some_and(|list| {
                                let values: Vec<&str> = syntax::named_children(list)
                                    .into_iter()
                                    .map(|n| parsed.src(n).trim())
                                    .collect();
                                values.len() > 3
                                    && values[3..values.len().min(6)].iter().any(|v| *v != "0")
                            })
                }
                "assignment_expression" => {
                    let field = node
                        .child_by_field_name("left")
                        .filter(|l| l.kind() == "field_expression")
                        .and_then(|l| l.child_by_field_name("field"))
                        .map(|f| parsed.src(f));
                    let value = node
                        .child_by_field_name("right")
                        .map(|r| parsed.src(r).trim());
                    matches!(field, Some("basicM" | "basicN" | "basicK")) && value != Some("0")
                }
                _ => false,
            };
            if fixed {
                return Some(format!(
                    "{file}:{}",
                    syntax::line_of(text, node.start_byte())
                ));
            }
        }
    }
    None
}

/// The roles of the knobs a user annotated (`// ascendopt:knob` in a
/// `tiling-begin/end` region), by their names.
fn annotated_roles(sources: &Sources) -> BTreeSet<Role> {
    let mut out = BTreeSet::new();
    for (file, text) in sources.host_files() {
        if !text.contains("ascendopt:tiling-begin") {
            continue;
        }
        let Ok(ts) = ascendopt_op::tiling::TilingSource::parse(std::path::Path::new(file), text)
        else {
            continue;
        };
        for k in &ts.knobs {
            out.insert(role_of(&k.name, &BTreeSet::new(), false, k.value));
        }
    }
    out
}

/// Whether a user's knob of role `stated` already decides what a found
/// knob of role `found` would: the same role, or tile sizing either way
/// (a tile count is a tile size by another name).
fn covers(stated: Role, found: Role) -> bool {
    let sizing = |r: Role| matches!(r, Role::Size | Role::Count);
    stated == found || sizing(stated) && sizing(found)
}

/// Names assigned a literal under a condition on the data type (`case
/// ge::DT_FLOAT16: elemBytes = 2;`, `if (dt == ge::DT_INT64) { width =
/// 8; }`): properties of the dtype (element widths, per-dtype buffer
/// factors), never tiling choices.
fn dtype_bound_names(parsed: &Parsed<'_>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for node in parsed.all() {
        if node.kind() != "assignment_expression" {
            continue;
        }
        let (Some(l), Some(r)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            continue;
        };
        if r.kind() != "number_literal" {
            continue;
        }
        let Some(name) = flow::target_name(parsed, l) else {
            continue;
        };
        if under_dtype_condition(parsed, node) {
            out.insert(name);
        }
    }
    out
}

/// True when `node` sits in a branch chosen by the data type: an `if` or
/// `switch` whose condition, or a `case` whose label, names a dtype.
fn under_dtype_condition(parsed: &Parsed<'_>, node: Node<'_>) -> bool {
    let names_dtype = |n: Node<'_>| {
        let t = parsed.src(n);
        let l = t.to_ascii_lowercase();
        t.contains("DT_") || l.contains("datatype") || l.contains("dtype")
    };
    let mut cur = node.parent();
    while let Some(n) = cur {
        match n.kind() {
            "if_statement" | "switch_statement"
                if n.child_by_field_name("condition").is_some_and(names_dtype) =>
            {
                return true;
            }
            "case_statement" if n.child_by_field_name("value").is_some_and(names_dtype) => {
                return true;
            }
            "function_definition" => return false,
            _ => {}
        }
        cur = n.parent();
    }
    false
}

fn upper_snake(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for ch in name.chars() {
        if ch.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_uppercase());
        } else {
            out.push('_');
        }
        prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
    }
    out
}

/// Start of the line where a function's definition begins (its template
/// header or comment lines stay after the knob).
fn function_insert_point(text: &str, func: Node<'_>) -> usize {
    let mut start = func.start_byte();
    if let Some(prev) = func.prev_sibling() {
        if prev.kind() == "template_declaration" {
            start = prev.start_byte();
        }
    }
    text[..start].rfind('\n').map_or(0, |p| p + 1)
}

/// A `const`/`constexpr` integer constant declared alone: file- or
/// namespace-scope ones become knobs in place, function-local ones by
/// their literal.
fn constant_candidate(parsed: &Parsed<'_>, decl: Node<'_>) -> Option<Candidate> {
    let text = parsed.text;
    let mut cursor = decl.walk();
    let declarators: Vec<Node<'_>> = decl
        .children_by_field_name("declarator", &mut cursor)
        .collect();
    if declarators.len() != 1 || declarators[0].kind() != "init_declarator" {
        return None;
    }
    let d = declarators[0];
    let name_node = d.child_by_field_name("declarator")?;
    if name_node.kind() != "identifier" {
        return None;
    }
    let value = d.child_by_field_name("value")?;
    if value.kind() != "number_literal" {
        return None;
    }
    let head = &text[decl.start_byte()..name_node.start_byte()];
    let is_const = head
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| w == "const" || w == "constexpr");
    if !is_const {
        return None;
    }
    let ty = decl.child_by_field_name("type")?;
    let (v, suffix) = syntax::int_literal(parsed.src(value))?;
    if v < 1 {
        return None;
    }
    let label = parsed.src(name_node).to_string();
    let line = syntax::line_of(text, decl.start_byte());
    let scope = decl.parent()?;
    let file_scope = scope.kind() == "translation_unit" || scope.kind() == "declaration_list";
    let form = if file_scope {
        let lines = syntax::line_range(text, decl.byte_range());
        let before = &text[lines.start..decl.start_byte()];
        let after = text[decl.end_byte()..lines.end].trim();
        if !before.trim().is_empty()
            || !(after.is_empty() || after.starts_with("//"))
            || text[decl.byte_range()].contains('\n')
        {
            return None;
        }
        let end = if text[..lines.end].ends_with('\n') {
            lines.end - 1
        } else {
            lines.end
        };
        // A trailing comment on the line stays a comment of the line.
        Form::Constant {
            line: lines.start..end,
            ty: parsed.src(ty).to_string(),
        }
    } else {
        let func = syntax::enclosing_function(decl)?;
        let ok = func
            .parent()
            .is_some_and(|p| p.kind() == "translation_unit" || p.kind() == "declaration_list");
        if !ok {
            return None;
        }
        Form::Literal {
            insert_at: function_insert_point(text, func),
        }
    };
    Some(Candidate {
        key: CandKey::Name(label.clone()),
        label: label.clone(),
        line,
        value: v,
        suffix,
        literal: value.byte_range(),
        form,
        name: Some(label),
    })
}

/// The plain sources with new values for some found knobs (name → value),
/// written into their literals (the suffix kept).
pub fn with_values(
    sources: &Sources,
    knobs: &[FoundKnob],
    values: &BTreeMap<String, i64>,
) -> Option<Sources> {
    let mut out = sources.clone();
    let mut by_file: BTreeMap<&str, Vec<(Range<usize>, String)>> = BTreeMap::new();
    for k in knobs {
        if let Some(v) = values.get(&k.name) {
            by_file
                .entry(k.file.as_str())
                .or_default()
                .push((k.literal.clone(), format!("{v}{}", k.suffix)));
        }
    }
    for (file, edits) in by_file {
        let text = sources.get(file)?;
        out.set(file, syntax::apply_edits(text, &edits)?).ok()?;
    }
    Some(out)
}

/// Marker text of the regions [`knobbed`] writes.
pub const FOUND: &str = "ascendopt:tiling-begin found:";

/// The plain sources with every given knob a marked constant of its own
/// evolvable region; `domains` overrides a knob's domain annotation (by
/// name; e.g. the `choices=` the method's confirmation leaves). None when an edit
/// cannot be made (overlapping literals).
pub fn knobbed(
    sources: &Sources,
    knobs: &[FoundKnob],
    domains: &BTreeMap<String, String>,
) -> Option<Sources> {
    let mut out = sources.clone();
    let mut by_file: BTreeMap<&str, Vec<&FoundKnob>> = BTreeMap::new();
    for k in knobs {
        by_file.entry(k.file.as_str()).or_default().push(k);
    }
    for (file, ks) in by_file {
        let text = sources.get(file)?;
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        // Introduced constants before the same function share one spot.
        let mut inserts: BTreeMap<usize, String> = BTreeMap::new();
        for k in ks {
            let domain = domains.get(&k.name).cloned().unwrap_or_else(|| k.domain());
            let begin = format!(
                "// {FOUND} {} ({}; {})",
                k.label,
                k.role.describe(),
                k.sinks.join(", ")
            );
            match &k.form {
                Form::Constant { line, ty } => {
                    let original = &text[line.clone()];
                    let indent: String = original
                        .chars()
                        .take_while(|c| *c == ' ' || *c == '\t')
                        .collect();
                    let comment = original
                        .find("//")
                        .map(|p| original[p + 2..].trim().to_string())
                        .filter(|c| !c.is_empty());
                    let keep = comment
                        .map(|c| format!("\n{indent}// {c}"))
                        .unwrap_or_default();
                    let code = original[..original.find("//").unwrap_or(original.len())].trim();
                    let begin = format!("{begin} was: {code}");
                    let statics = if original.trim_start().starts_with("static") {
                        "static "
                    } else {
                        ""
                    };
                    edits.push((
                        line.clone(),
                        format!(
                            "{indent}{begin}{keep}\n{indent}{statics}constexpr {ty} {} = {}{}; // ascendopt:knob {domain}\n{indent}// ascendopt:tiling-end",
                            k.name, k.value, k.suffix
                        ),
                    ));
                }
                Form::Define { value, line_start } => {
                    let ty = literal_type(&k.suffix, k.value);
                    inserts.entry(*line_start).or_default().push_str(&format!(
                        "{begin}\nconstexpr {ty} {} = {}{}; // ascendopt:knob {domain}\n// ascendopt:tiling-end\n",
                        k.name, k.value, k.suffix
                    ));
                    edits.push((value.clone(), k.name.clone()));
                }
                Form::Literal { insert_at } => {
                    let ty = literal_type(&k.suffix, k.value);
                    inserts.entry(*insert_at).or_default().push_str(&format!(
                        "{begin}\nconstexpr {ty} {} = {}{}; // ascendopt:knob {domain}\n// ascendopt:tiling-end\n",
                        k.name, k.value, k.suffix
                    ));
                    edits.push((k.literal.clone(), k.name.clone()));
                }
            }
        }
        for (at, block) in inserts {
            edits.push((at..at, block));
        }
        out.set(file, syntax::apply_edits(text, &edits)?).ok()?;
    }
    Some(out)
}

/// A knobbed text back to the plain form: every region [`knobbed`] wrote
/// is removed, an introduced constant's value written back where it is
/// used, a constant annotated in place back to one line (with its
/// comment). Files without such regions are returned unchanged.
pub fn restore(sources: &Sources) -> Sources {
    let mut out = sources.clone();
    for (file, text) in sources.files() {
        if !text.contains(FOUND) {
            continue;
        }
        // A path of `sources` itself is confined already: set cannot fail.
        out.set(file, restore_text(text)).ok();
    }
    out
}

fn restore_text(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut kept: Vec<String> = Vec::new();
    // Introduced constants: name → literal text.
    let mut inline: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !line.contains(FOUND) {
            kept.push(line.to_string());
            i += 1;
            continue;
        }
        // The region: begin, [comment], knob line, end.
        let mut j = i + 1;
        let mut comment: Option<String> = None;
        let mut knob: Option<&str> = None;
        while j < lines.len() && !lines[j].contains("ascendopt:tiling-end") {
            if lines[j].contains("ascendopt:knob") {
                knob = Some(lines[j]);
            } else if lines[j].trim_start().starts_with("//") {
                comment = Some(lines[j].trim().trim_start_matches("//").trim().to_string());
            }
            j += 1;
        }
        let Some(knob) = knob else {
            kept.push(line.to_string());
            i += 1;
            continue;
        };
        let code = &knob[..knob.find("//").unwrap_or(knob.len())];
        let indent: String = knob
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let Some(eq) = code.find('=') else {
            kept.push(line.to_string());
            i += 1;
            continue;
        };
        let name = code[..eq]
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_string();
        let value = code[eq + 1..]
            .trim()
            .trim_end_matches(';')
            .trim()
            .to_string();
        if name.starts_with("ASCENDOPT_") {
            inline.push((name, value));
        } else {
            // The declaration as it was written, with the value it holds now.
            let was = line
                .find(" was: ")
                .map(|p| line[p + 6..].trim().to_string())
                .and_then(|w| {
                    let eq = w.find('=')?;
                    Some(format!("{} = {value};", w[..eq].trim_end()))
                });
            let decl = was.unwrap_or_else(|| code.trim_end().to_string());
            let with_comment = match &comment {
                Some(c) => format!("{indent}{}  // {c}\n", decl.trim_start()),
                None => format!("{indent}{}\n", decl.trim_start()),
            };
            kept.push(with_comment);
        }
        i = j + 1;
    }
    let mut text: String = kept.concat();
    for (name, value) in inline {
        text = replace_token(&text, &name, &value);
    }
    text
}

/// `text` with every whole-identifier occurrence of `name` replaced.
fn replace_token(text: &str, name: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut pos = 0;
    while let Some(p) = text[pos..].find(name) {
        let at = pos + p;
        let end = at + name.len();
        let before_ok =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let after_ok =
            end >= bytes.len() || !(bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_');
        out.push_str(&text[pos..at]);
        if before_ok && after_ok {
            out.push_str(with);
        } else {
            out.push_str(name);
        }
        pos = end;
    }
    out.push_str(&text[pos..]);
    out
}

#[cfg(test)]
mod tests;
