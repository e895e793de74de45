//! The evolvable tiling region of host sources and its knobs.
//!
//! Convention: in an op_host source (or the tiling header), the region Stage
//! II may change sits between a line containing `// ascendopt:tiling-begin`
//! and a line containing `// ascendopt:tiling-end`. Inside it, each knob is
//! one integer constant annotated on the same line:
//!
//! ```text
//! constexpr uint32_t TILE_BYTES = 16384; // ascendopt:knob min=1024 max=65536 step=pow2
//! constexpr uint32_t BUFFER_NUM = 2;     // ascendopt:knob choices=1,2
//! static constexpr int64_t ALIGN = 256;  // ascendopt:knob min=32 max=1024 step=32
//! ```
//!
//! - `min=A max=B step=pow2`: powers of two in [A, B];
//! - `min=A max=B step=S` (S ≥ 1, default 1): A, A+S, A+2S, ... ≤ B;
//! - `choices=a,b,c`: exactly those values.
//!
//! The current value must be admitted. [`TilingSource::render_with`] rewrites
//! only the literals of the knobs it is given. `[tiling] constraints` in
//! op.toml are comparisons between integer expressions of knob names
//! (`TILE_BYTES * BUFFER_NUM <= 131072`), all of which must hold.

use crate::error::OpError;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

const BEGIN: &str = "ascendopt:tiling-begin";
const END: &str = "ascendopt:tiling-end";
const KNOB: &str = "ascendopt:knob";

/// The values a knob may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnobStep {
    /// Powers of two in [min, max].
    Pow2,
    /// min, min + n, min + 2n, ... up to max.
    Every(i64),
    /// Exactly these values.
    Choices(Vec<i64>),
}

/// One tunable constant of a tiling region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knob {
    /// The constant's name.
    pub name: String,
    /// Its value in the source.
    pub value: i64,
    /// Smallest admitted value.
    pub min: i64,
    /// Largest admitted value.
    pub max: i64,
    /// Admitted values between min and max.
    pub step: KnobStep,
    /// The source file.
    pub file: PathBuf,
    /// 1-based line of the constant.
    pub line: usize,
    /// Byte range of the value literal within its line.
    literal: (usize, usize),
}

impl Knob {
    /// True when `v` is an admitted value.
    pub fn admits(&self, v: i64) -> bool {
        if v < self.min || v > self.max {
            return false;
        }
        match &self.step {
            KnobStep::Pow2 => v > 0 && (v & (v - 1)) == 0,
            KnobStep::Every(n) => (v - self.min) % n == 0,
            KnobStep::Choices(c) => c.contains(&v),
        }
    }

    /// Every admitted value, ascending.
    pub fn candidates(&self) -> Vec<i64> {
        match &self.step {
            KnobStep::Pow2 => {
                let mut out = Vec::new();
                let mut v: i64 = 1;
                while v <= self.max {
                    if v >= self.min {
                        out.push(v);
                    }
                    match v.checked_mul(2) {
                        Some(n) => v = n,
                        None => break,
                    }
                }
                out
            }
            KnobStep::Every(n) => {
                let mut out = Vec::new();
                let mut v = self.min;
                while v <= self.max {
                    out.push(v);
                    match v.checked_add(*n) {
                        Some(next) => v = next,
                        None => break,
                    }
                }
                out
            }
            KnobStep::Choices(c) => {
                let mut c = c.clone();
                c.sort_unstable();
                c
            }
        }
    }

    /// The admitted range as written in the annotation.
    pub fn domain(&self) -> String {
        match &self.step {
            KnobStep::Pow2 => format!("min={} max={} step=pow2", self.min, self.max),
            KnobStep::Every(n) => format!("min={} max={} step={n}", self.min, self.max),
            KnobStep::Choices(c) => {
                let v: Vec<String> = c.iter().map(|x| x.to_string()).collect();
                format!("choices={}", v.join(","))
            }
        }
    }
}

/// A source file with tiling regions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TilingSource {
    /// The file.
    pub file: PathBuf,
    /// Its text when parsed.
    pub text: String,
    /// 1-based (begin, end) marker lines of each region.
    pub regions: Vec<(usize, usize)>,
    /// Knobs in source order.
    pub knobs: Vec<Knob>,
}

/// The function a parametrised host source reads its knobs through
/// (declared by the simulator's `ascendopt/host/knob_value.h`).
pub const KNOB_VALUE_FN: &str = "ascendopt_knob_value";

impl TilingSource {
    /// Finds the tiling regions and knobs of a source text. A file without
    /// markers has no regions (and must have no knob annotations).
    pub fn parse(file: &Path, text: &str) -> Result<TilingSource, OpError> {
        let err = |line: usize, message: String| OpError::Source {
            file: file.to_path_buf(),
            line,
            message,
        };
        let mut regions = Vec::new();
        let mut open: Option<usize> = None;
        let mut knobs: Vec<Knob> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let comment = line.find("//").map(|p| &line[p..]).unwrap_or("");
            if comment.contains(BEGIN) {
                if let Some(b) = open {
                    return Err(err(
                        n,
                        format!("tiling-begin inside the region opened at line {b}"),
                    ));
                }
                open = Some(n);
            } else if comment.contains(END) {
                match open.take() {
                    Some(b) => regions.push((b, n)),
                    None => return Err(err(n, "tiling-end without tiling-begin".to_string())),
                }
            } else if let Some(p) = line.find(KNOB) {
                if open.is_none() {
                    return Err(err(
                        n,
                        "knob annotation outside a tiling region".to_string(),
                    ));
                }
                let knob = parse_knob(file, n, line, p).map_err(|e| err(n, e.to_string()))?;
                if let Some(other) = knobs.iter().find(|k| k.name == knob.name) {
                    return Err(err(
                        n,
                        format!(
                            "knob `{}` is already declared at line {}",
                            knob.name, other.line
                        ),
                    ));
                }
                knobs.push(knob);
            }
        }
        if let Some(b) = open {
            return Err(err(b, "tiling-begin without tiling-end".to_string()));
        }
        Ok(TilingSource {
            file: file.to_path_buf(),
            text: text.to_string(),
            regions,
            knobs,
        })
    }

    /// The text with the given knobs set. Knobs not named keep their value;
    /// a name that is not a knob of this file, or a value the knob does not
    /// admit, is an error.
    pub fn render_with(&self, values: &BTreeMap<String, i64>) -> Result<String, OpError> {
        for (name, &v) in values {
            let Some(k) = self.knobs.iter().find(|k| &k.name == name) else {
                return Err(OpError::Tiling {
                    message: format!("{} has no knob `{name}`", self.file.display()),
                });
            };
            if !k.admits(v) {
                return Err(OpError::Tiling {
                    message: format!("{name} = {v} is outside its domain ({})", k.domain()),
                });
            }
        }
        let mut out = String::with_capacity(self.text.len() + 16);
        for (i, line) in self.text.split_inclusive('\n').enumerate() {
            let knob = self.knobs.iter().find(|k| k.line == i + 1);
            match knob.and_then(|k| values.get(&k.name).map(|v| (k, v))) {
                Some((k, v)) => {
                    out.push_str(&line[..k.literal.0]);
                    out.push_str(&v.to_string());
                    out.push_str(&line[k.literal.1..]);
                }
                None => out.push_str(line),
            }
        }
        Ok(out)
    }

    /// The text with every knob read at run time instead of compiled in:
    /// each `constexpr T NAME = V;` knob line becomes `#define NAME
    /// (static_cast<T>(::ascendopt_knob_value(K)))` with `K` counted from
    /// `first_index` in source order (the comment, the line count and every
    /// other line unchanged), and the knobs' current values in that order.
    /// One compiled library then serves every knob assignment. `None` when
    /// a knob line is not of that plain form (a `const`, or more than one
    /// declaration on the line); a knob used where a constant expression is
    /// required makes the rewritten text fail to compile, which the caller
    /// handles by compiling the original.
    pub fn parametrised(&self, first_index: usize) -> Option<(String, Vec<i64>)> {
        let mut out = String::with_capacity(self.text.len() + 64 * self.knobs.len());
        let mut values = Vec::with_capacity(self.knobs.len());
        for (i, line) in self.text.split_inclusive('\n').enumerate() {
            let Some(k) = self.knobs.iter().find(|k| k.line == i + 1) else {
                out.push_str(line);
                continue;
            };
            let comment = line[..line.find(KNOB)?].rfind("//")?;
            let code = &line[..comment];
            let eq = code.find('=')?;
            let mut words = code[..eq].split_whitespace().peekable();
            while words
                .peek()
                .is_some_and(|w| *w == "static" || *w == "inline")
            {
                words.next();
            }
            if words.next() != Some("constexpr") {
                return None;
            }
            let words: Vec<&str> = words.collect();
            let (name, ty) = words.split_last()?;
            let rest = code[k.literal.1..].trim();
            // Nothing after the literal but its integer suffix and `;`.
            let after_suffix = rest.trim_start_matches(['u', 'U', 'l', 'L']).trim_start();
            if ty.is_empty() || *name != k.name || after_suffix != ";" {
                return None;
            }
            let index = first_index + values.len();
            out.push_str(&format!(
                "#define {name} (static_cast<{}>(::{KNOB_VALUE_FN}({index}))) ",
                ty.join(" ")
            ));
            out.push_str(&line[comment..]);
            values.push(k.value);
        }
        Some((out, values))
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else {
        body.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Why a `// ascendopt:knob` annotation is malformed (the caller adds the
/// file and line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnobError {
    /// The annotation is not in a `//` comment.
    #[error("the knob annotation must be a `//` comment")]
    NotComment,
    /// The annotated line is not an integer constant's definition.
    #[error("{0}: expected `constexpr <type> NAME = <integer>; // ascendopt:knob ...`")]
    Form(String),
    /// A `key=value` item is not one.
    #[error("`{0}` is not key=value")]
    NotKeyValue(String),
    /// A value that must be an integer is not one.
    #[error("{key}={value}: not an integer")]
    NotInteger {
        /// The key.
        key: String,
        /// Its value.
        value: String,
    },
    /// `step=` below 1.
    #[error("step={0} must be >= 1 or pow2")]
    BadStep(i64),
    /// `choices=` with no value.
    #[error("choices= is empty")]
    EmptyChoices,
    /// A key other than min, max, step or choices.
    #[error("unknown knob key `{0}`; expected min, max, step or choices")]
    UnknownKey(String),
    /// `choices=` together with a range.
    #[error("choices= excludes min, max and step")]
    ChoicesWithRange,
    /// Neither a range nor choices.
    #[error("give min= and max= (or choices=)")]
    NoRange,
    /// An empty range.
    #[error("min={min} exceeds max={max}")]
    MinAboveMax {
        /// `min=`.
        min: i64,
        /// `max=`.
        max: i64,
    },
    /// The constant's own value is outside the domain it declares.
    #[error("{name} = {value} is not admitted by its own domain ({domain})")]
    OutsideDomain {
        /// The knob.
        name: String,
        /// Its value.
        value: i64,
        /// Its domain, as text.
        domain: String,
    },
    /// `step=pow2` over a range without a power of two.
    #[error("no power of two in [{min}, {max}]")]
    NoPowerOfTwo {
        /// `min=`.
        min: i64,
        /// `max=`.
        max: i64,
    },
}

fn parse_knob(file: &Path, line_no: usize, line: &str, marker: usize) -> Result<Knob, KnobError> {
    let code = match line[..marker].rfind("//") {
        Some(p) => &line[..p],
        None => return Err(KnobError::NotComment),
    };
    let form = |what: &str| KnobError::Form(what.to_string());
    if !code
        .split_whitespace()
        .any(|w| w == "constexpr" || w == "const")
    {
        return Err(form("not a constant"));
    }
    let eq = code.find('=').ok_or_else(|| form("no `=`"))?;
    let semi = code[eq..]
        .find(';')
        .map(|p| p + eq)
        .ok_or_else(|| form("no `;`"))?;
    let name = code[..eq]
        .split_whitespace()
        .last()
        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .ok_or_else(|| form("no constant name"))?
        .to_string();
    // The literal: the value text without surrounding spaces and without an
    // integer suffix (u, U, l, L, ul, ULL, ...), which rendering keeps.
    let raw = &code[eq + 1..semi];
    let start = eq + 1 + (raw.len() - raw.trim_start().len());
    let trimmed = raw.trim();
    let digits_len = trimmed.trim_end_matches(['u', 'U', 'l', 'L']).len();
    let end = start + digits_len;
    let value = parse_int(&code[start..end])
        .ok_or_else(|| form(&format!("`{trimmed}` is not an integer literal")))?;

    let mut min = None;
    let mut max = None;
    let mut step = None;
    let mut choices = None;
    for item in line[marker + KNOB.len()..].split_whitespace() {
        let (key, val) = item
            .split_once('=')
            .ok_or_else(|| KnobError::NotKeyValue(item.to_string()))?;
        let int = |v: &str| {
            parse_int(v).ok_or_else(|| KnobError::NotInteger {
                key: key.to_string(),
                value: v.to_string(),
            })
        };
        match key {
            "min" => min = Some(int(val)?),
            "max" => max = Some(int(val)?),
            "step" if val == "pow2" => step = Some(KnobStep::Pow2),
            "step" => {
                let n = int(val)?;
                if n < 1 {
                    return Err(KnobError::BadStep(n));
                }
                step = Some(KnobStep::Every(n));
            }
            "choices" => {
                let list: Vec<i64> = val.split(',').map(int).collect::<Result<_, _>>()?;
                if list.is_empty() {
                    return Err(KnobError::EmptyChoices);
                }
                choices = Some(list);
            }
            other => return Err(KnobError::UnknownKey(other.to_string())),
        }
    }
    let (min, max, step) = match choices {
        Some(c) => {
            if min.is_some() || max.is_some() || step.is_some() {
                return Err(KnobError::ChoicesWithRange);
            }
            let lo = c.iter().copied().min().unwrap_or(0);
            let hi = c.iter().copied().max().unwrap_or(0);
            (lo, hi, KnobStep::Choices(c))
        }
        None => {
            let (Some(lo), Some(hi)) = (min, max) else {
                return Err(KnobError::NoRange);
            };
            if lo > hi {
                return Err(KnobError::MinAboveMax { min: lo, max: hi });
            }
            (lo, hi, step.unwrap_or(KnobStep::Every(1)))
        }
    };
    let knob = Knob {
        name,
        value,
        min,
        max,
        step,
        file: file.to_path_buf(),
        line: line_no,
        literal: (start, end),
    };
    if !knob.admits(value) {
        return Err(KnobError::OutsideDomain {
            name: knob.name.clone(),
            value,
            domain: knob.domain(),
        });
    }
    if matches!(knob.step, KnobStep::Pow2) && knob.candidates().is_empty() {
        return Err(KnobError::NoPowerOfTwo {
            min: knob.min,
            max: knob.max,
        });
    }
    Ok(knob)
}

/// All tiling sources of a package, with the op.toml constraints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TilingSpace {
    /// Sources that have at least one tiling region.
    pub sources: Vec<TilingSource>,
    /// Constraints between knobs.
    pub constraints: Vec<Constraint>,
}

impl TilingSpace {
    /// Every knob of every source.
    pub fn knobs(&self) -> impl Iterator<Item = &Knob> {
        self.sources.iter().flat_map(|s| s.knobs.iter())
    }

    /// A knob by name.
    pub fn knob(&self, name: &str) -> Option<&Knob> {
        self.knobs().find(|k| k.name == name)
    }

    /// The current values of all knobs.
    pub fn current(&self) -> BTreeMap<String, i64> {
        self.knobs().map(|k| (k.name.clone(), k.value)).collect()
    }

    /// Checks a full assignment (knobs not given keep their current value):
    /// every value admitted by its knob and every constraint true.
    pub fn check(&self, values: &BTreeMap<String, i64>) -> Result<(), OpError> {
        let mut all = self.current();
        for (name, &v) in values {
            let Some(k) = self.knob(name) else {
                return Err(OpError::Tiling {
                    message: format!("no knob named `{name}`"),
                });
            };
            if !k.admits(v) {
                return Err(OpError::Tiling {
                    message: format!("{name} = {v} is outside its domain ({})", k.domain()),
                });
            }
            all.insert(name.clone(), v);
        }
        for c in &self.constraints {
            match c.eval(&all) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(OpError::Tiling {
                        message: format!("constraint `{c}` does not hold"),
                    })
                }
                Err(m) => {
                    return Err(OpError::Tiling {
                        message: format!("constraint `{c}`: {m}"),
                    })
                }
            }
        }
        Ok(())
    }

    /// Renders every source with the given values (checked first).
    pub fn render_with(
        &self,
        values: &BTreeMap<String, i64>,
    ) -> Result<Vec<(PathBuf, String)>, OpError> {
        self.check(values)?;
        let mut out = Vec::new();
        for s in &self.sources {
            let mine: BTreeMap<String, i64> = values
                .iter()
                .filter(|(n, _)| s.knobs.iter().any(|k| &k.name == *n))
                .map(|(n, v)| (n.clone(), *v))
                .collect();
            out.push((s.file.clone(), s.render_with(&mine)?));
        }
        Ok(out)
    }
}

/// Comparison operators of constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn text(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

/// An integer expression of a constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expr {
    Num(i64),
    Var(String),
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
}

/// Why a constraint between knobs does not parse or cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConstraintError {
    /// A number that does not parse.
    #[error("bad number `{0}`")]
    BadNumber(String),
    /// A character that is no part of the grammar.
    #[error("unexpected `{0}`")]
    UnexpectedChar(char),
    /// An opening parenthesis without its closing one.
    #[error("missing `)`")]
    MissingParen,
    /// A token where an operand was expected.
    #[error("unexpected {0}")]
    UnexpectedToken(String),
    /// The expression stops where an operand was expected.
    #[error("unexpected end of expression")]
    UnexpectedEnd,
    /// No comparison between the two sides.
    #[error("`{0}`: expected a comparison (==, !=, <, <=, >, >=)")]
    NoComparison(String),
    /// Text after the right-hand side.
    #[error("`{0}`: unexpected text after the comparison")]
    TrailingText(String),
    /// A name that is no knob's.
    #[error("unknown knob `{0}`")]
    UnknownKnob(String),
    /// A result outside 64-bit integers.
    #[error("overflow")]
    Overflow,
    /// `/ 0`.
    #[error("division by zero")]
    DivisionByZero,
    /// `% 0`.
    #[error("modulo by zero")]
    ModuloByZero,
}

impl Expr {
    fn eval(&self, vars: &BTreeMap<String, i64>) -> Result<i64, ConstraintError> {
        match self {
            Expr::Num(n) => Ok(*n),
            Expr::Var(v) => vars
                .get(v)
                .copied()
                .ok_or_else(|| ConstraintError::UnknownKnob(v.clone())),
            Expr::Neg(e) => e.eval(vars)?.checked_neg().ok_or(ConstraintError::Overflow),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(vars)?, b.eval(vars)?);
                let r = match op {
                    '+' => a.checked_add(b),
                    '-' => a.checked_sub(b),
                    '*' => a.checked_mul(b),
                    '/' if b == 0 => return Err(ConstraintError::DivisionByZero),
                    '/' => a.checked_div(b),
                    '%' if b == 0 => return Err(ConstraintError::ModuloByZero),
                    _ => a.checked_rem(b),
                };
                r.ok_or(ConstraintError::Overflow)
            }
        }
    }

    fn vars<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Num(_) => {}
            Expr::Var(v) => out.push(v),
            Expr::Neg(e) => e.vars(out),
            Expr::Bin(_, a, b) => {
                a.vars(out);
                b.vars(out);
            }
        }
    }
}

/// A constraint `expr CMP expr` between knobs, with `+ - * / %`,
/// parentheses, integer literals and knob names; `/` and `%` truncate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    text: String,
    lhs: Expr,
    cmp: Cmp,
    rhs: Expr,
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Num(i64),
    Ident(String),
    Op(char),
    Cmp(Cmp),
    LParen,
    RParen,
}

fn tokenize(s: &str) -> Result<Vec<Tok>, ConstraintError> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let lit: String = chars[start..i].iter().collect();
            out.push(Tok::Num(
                parse_int(&lit).ok_or(ConstraintError::BadNumber(lit))?,
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else {
            let next = chars.get(i + 1).copied();
            let (tok, len) = match (c, next) {
                ('=', Some('=')) => (Tok::Cmp(Cmp::Eq), 2),
                ('!', Some('=')) => (Tok::Cmp(Cmp::Ne), 2),
                ('<', Some('=')) => (Tok::Cmp(Cmp::Le), 2),
                ('>', Some('=')) => (Tok::Cmp(Cmp::Ge), 2),
                ('<', _) => (Tok::Cmp(Cmp::Lt), 1),
                ('>', _) => (Tok::Cmp(Cmp::Gt), 1),
                ('(', _) => (Tok::LParen, 1),
                (')', _) => (Tok::RParen, 1),
                ('+' | '-' | '*' | '/' | '%', _) => (Tok::Op(c), 1),
                _ => return Err(ConstraintError::UnexpectedChar(c)),
            };
            out.push(tok);
            i += len;
        }
    }
    Ok(out)
}

struct ExprParser {
    toks: Vec<Tok>,
    pos: usize,
}

impl ExprParser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn expr(&mut self) -> Result<Expr, ConstraintError> {
        let mut lhs = self.term()?;
        while let Some(Tok::Op(op @ ('+' | '-'))) = self.peek().cloned() {
            self.pos += 1;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(self.term()?));
        }
        Ok(lhs)
    }

    fn term(&mut self) -> Result<Expr, ConstraintError> {
        let mut lhs = self.unary()?;
        while let Some(Tok::Op(op @ ('*' | '/' | '%'))) = self.peek().cloned() {
            self.pos += 1;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(self.unary()?));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, ConstraintError> {
        if let Some(Tok::Op('-')) = self.peek() {
            self.pos += 1;
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        let tok = self.peek().cloned();
        self.pos += 1;
        match tok {
            Some(Tok::Num(n)) => Ok(Expr::Num(n)),
            Some(Tok::Ident(v)) => Ok(Expr::Var(v)),
            Some(Tok::LParen) => {
                let e = self.expr()?;
                match self.peek() {
                    Some(Tok::RParen) => {
                        self.pos += 1;
                        Ok(e)
                    }
                    _ => Err(ConstraintError::MissingParen),
                }
            }
            Some(t) => Err(ConstraintError::UnexpectedToken(format!("{t:?}"))),
            None => Err(ConstraintError::UnexpectedEnd),
        }
    }
}

impl Constraint {
    /// Parses `expr CMP expr`.
    pub fn parse(text: &str) -> Result<Constraint, ConstraintError> {
        let toks = tokenize(text)?;
        let mut p = ExprParser { toks, pos: 0 };
        let lhs = p.expr()?;
        let cmp = match p.peek() {
            Some(Tok::Cmp(c)) => *c,
            _ => return Err(ConstraintError::NoComparison(text.to_string())),
        };
        p.pos += 1;
        let rhs = p.expr()?;
        if p.pos != p.toks.len() {
            return Err(ConstraintError::TrailingText(text.to_string()));
        }
        Ok(Constraint {
            text: text.trim().to_string(),
            lhs,
            cmp,
            rhs,
        })
    }

    /// Knob names the constraint uses.
    pub fn vars(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.lhs.vars(&mut out);
        self.rhs.vars(&mut out);
        out
    }

    /// Evaluates the constraint with the given knob values.
    pub fn eval(&self, vars: &BTreeMap<String, i64>) -> Result<bool, ConstraintError> {
        let (a, b) = (self.lhs.eval(vars)?, self.rhs.eval(vars)?);
        Ok(match self.cmp {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        })
    }

    /// The comparison operator as text.
    pub fn cmp_text(&self) -> &'static str {
        self.cmp.text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "\
#include \"add_custom_tiling.h\"
namespace optiling {
// ascendopt:tiling-begin
constexpr uint32_t TILE_BYTES = 16384; // ascendopt:knob min=1024 max=65536 step=pow2
static constexpr int64_t ALIGN = 256U;  // ascendopt:knob min=32 max=1024 step=32
constexpr uint32_t BUFFER_NUM = 2; // ascendopt:knob choices=1,2
constexpr uint32_t FIXED = 7; // not a knob
// ascendopt:tiling-end
}
";

    fn values(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn knobs_are_parsed_with_domain_and_line() {
        let s = TilingSource::parse(Path::new("op_host/a.cpp"), HOST).unwrap();
        assert_eq!(s.regions, vec![(3, 8)]);
        assert_eq!(s.knobs.len(), 3);
        let t = &s.knobs[0];
        assert_eq!(
            (t.name.as_str(), t.value, t.min, t.max, t.line),
            ("TILE_BYTES", 16384, 1024, 65536, 4)
        );
        assert_eq!(t.step, KnobStep::Pow2);
        assert_eq!(
            t.candidates(),
            vec![1024, 2048, 4096, 8192, 16384, 32768, 65536]
        );
        let a = &s.knobs[1];
        assert_eq!((a.value, a.step.clone()), (256, KnobStep::Every(32)));
        assert!(a.admits(992) && !a.admits(1000) && !a.admits(1056));
        assert_eq!(a.candidates().len(), 32);
        let b = &s.knobs[2];
        assert_eq!(b.step, KnobStep::Choices(vec![1, 2]));
        assert_eq!((b.min, b.max), (1, 2));
    }

    #[test]
    fn parametrised_text_reads_knobs_at_run_time() {
        let text = "int a;\n// ascendopt:tiling-begin\nconstexpr uint32_t TILE_BYTES = 32768;  // ascendopt:knob min=1024 max=65536 step=pow2\n  static constexpr int64_t N = -4L; // ascendopt:knob min=-8 max=8 step=1\n// ascendopt:tiling-end\nint b;\n";
        let src = TilingSource::parse(Path::new("x.cpp"), text).unwrap();
        let (out, values) = src.parametrised(3).unwrap();
        assert_eq!(values, vec![32768, -4]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), text.lines().count());
        assert_eq!(
            lines[2],
            "#define TILE_BYTES (static_cast<uint32_t>(::ascendopt_knob_value(3))) // ascendopt:knob min=1024 max=65536 step=pow2"
        );
        assert_eq!(
            lines[3],
            "#define N (static_cast<int64_t>(::ascendopt_knob_value(4))) // ascendopt:knob min=-8 max=8 step=1"
        );
        assert_eq!((lines[0], lines[5]), ("int a;", "int b;"));
        // Forms that cannot become a macro: a `const`, two declarations.
        for line in [
            "const int T = 4; // ascendopt:knob min=1 max=8 step=1",
            "constexpr int T = 4, U = 2; // ascendopt:knob min=1 max=8 step=1",
        ] {
            let text = format!("// ascendopt:tiling-begin\n{line}\n// ascendopt:tiling-end\n");
            if let Ok(src) = TilingSource::parse(Path::new("x.cpp"), &text) {
                assert!(src.parametrised(0).is_none(), "{line}");
            }
        }
    }

    #[test]
    fn render_round_trip() {
        let s = TilingSource::parse(Path::new("a.cpp"), HOST).unwrap();
        // Rendering with the current values reproduces the text byte for byte.
        assert_eq!(
            s.render_with(&s.knobs.iter().map(|k| (k.name.clone(), k.value)).collect())
                .unwrap(),
            HOST
        );
        let out = s
            .render_with(&values(&[("TILE_BYTES", 4096), ("ALIGN", 64)]))
            .unwrap();
        // TILE_BYTES and ALIGN (its suffix kept) take the new values;
        // BUFFER_NUM keeps its own.
        expect_test::expect![[r##"
            #include "add_custom_tiling.h"
            namespace optiling {
            // ascendopt:tiling-begin
            constexpr uint32_t TILE_BYTES = 4096; // ascendopt:knob min=1024 max=65536 step=pow2
            static constexpr int64_t ALIGN = 64U;  // ascendopt:knob min=32 max=1024 step=32
            constexpr uint32_t BUFFER_NUM = 2; // ascendopt:knob choices=1,2
            constexpr uint32_t FIXED = 7; // not a knob
            // ascendopt:tiling-end
            }
        "##]]
        .assert_eq(&out);
        let again = TilingSource::parse(Path::new("a.cpp"), &out).unwrap();
        assert_eq!(again.knobs[0].value, 4096);
        assert_eq!(again.knobs[1].value, 64);
        // Out of domain and unknown names are errors.
        let e = s.render_with(&values(&[("TILE_BYTES", 3000)])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tiling: TILE_BYTES = 3000 is outside its domain (min=1024 max=65536 step=pow2)"
        );
        assert!(s
            .render_with(&values(&[("FIXED", 8)]))
            .unwrap_err()
            .to_string()
            .contains("no knob `FIXED`"));
    }

    #[test]
    fn malformed_regions_name_the_line() {
        let f = Path::new("h.cpp");
        let e = TilingSource::parse(f, "// ascendopt:tiling-begin\nint x;\n").unwrap_err();
        assert_eq!(e.to_string(), "h.cpp:1: tiling-begin without tiling-end");
        let e = TilingSource::parse(f, "a\n// ascendopt:tiling-end\n").unwrap_err();
        assert_eq!(e.to_string(), "h.cpp:2: tiling-end without tiling-begin");
        let e = TilingSource::parse(f, "constexpr int A = 1; // ascendopt:knob min=1 max=2\n")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "h.cpp:1: knob annotation outside a tiling region"
        );
        let text = "// ascendopt:tiling-begin\nconstexpr int A = 3; // ascendopt:knob min=1 max=8 step=pow2\n// ascendopt:tiling-end\n";
        let e = TilingSource::parse(f, text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "h.cpp:2: A = 3 is not admitted by its own domain (min=1 max=8 step=pow2)"
        );
        let text = "// ascendopt:tiling-begin\nint A = 3; // ascendopt:knob min=1 max=8\n// ascendopt:tiling-end\n";
        assert!(TilingSource::parse(f, text)
            .unwrap_err()
            .to_string()
            .starts_with("h.cpp:2: not a constant"));
        let text = "// ascendopt:tiling-begin\nconstexpr int A = 3; // ascendopt:knob min=1 max=8 stride=2\n// ascendopt:tiling-end\n";
        assert!(TilingSource::parse(f, text)
            .unwrap_err()
            .to_string()
            .contains("unknown knob key `stride`"));
        let text = "// ascendopt:tiling-begin\nconstexpr int A = 3; // ascendopt:knob min=1 max=8\nconstexpr int A = 4; // ascendopt:knob min=1 max=8\n// ascendopt:tiling-end\n";
        assert_eq!(
            TilingSource::parse(f, text).unwrap_err().to_string(),
            "h.cpp:3: knob `A` is already declared at line 2"
        );
    }

    #[test]
    fn constraints_evaluate() {
        let c = Constraint::parse("TILE_BYTES * BUFFER_NUM <= 65536").unwrap();
        assert_eq!(c.vars(), vec!["TILE_BYTES", "BUFFER_NUM"]);
        assert!(c
            .eval(&values(&[("TILE_BYTES", 32768), ("BUFFER_NUM", 2)]))
            .unwrap());
        assert!(!c
            .eval(&values(&[("TILE_BYTES", 65536), ("BUFFER_NUM", 2)]))
            .unwrap());
        let c = Constraint::parse("(A + 2) % 3 == -B / 2").unwrap();
        // (4 + 2) % 3 = 0; -1 / 2 = 0 (truncation).
        assert!(c.eval(&values(&[("A", 4), ("B", 1)])).unwrap());
        assert_eq!(
            c.eval(&values(&[("A", 4)])).unwrap_err().to_string(),
            "unknown knob `B`"
        );
        assert_eq!(
            Constraint::parse("A * 2").unwrap_err().to_string(),
            "`A * 2`: expected a comparison (==, !=, <, <=, >, >=)"
        );
        assert!(Constraint::parse("A < 2 <").is_err());
        assert_eq!(
            Constraint::parse("A / 0 > 1")
                .unwrap()
                .eval(&values(&[("A", 1)])),
            Err(ConstraintError::DivisionByZero)
        );
        assert_eq!(
            Constraint::parse("A # 1 > 0").unwrap_err(),
            ConstraintError::UnexpectedChar('#')
        );
    }

    #[test]
    fn space_checks_constraints_and_renders_all() {
        let s = TilingSource::parse(Path::new("a.cpp"), HOST).unwrap();
        let space = TilingSpace {
            sources: vec![s],
            constraints: vec![Constraint::parse("TILE_BYTES * BUFFER_NUM <= 65536").unwrap()],
        };
        assert!(space.check(&values(&[])).is_ok());
        let e = space.check(&values(&[("TILE_BYTES", 65536)])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tiling: constraint `TILE_BYTES * BUFFER_NUM <= 65536` does not hold"
        );
        assert!(space
            .check(&values(&[("TILE_BYTES", 65536), ("BUFFER_NUM", 1)]))
            .is_ok());
        let files = space.render_with(&values(&[("BUFFER_NUM", 1)])).unwrap();
        assert_eq!(files.len(), 1);
        expect_test::expect![[r##"
            #include "add_custom_tiling.h"
            namespace optiling {
            // ascendopt:tiling-begin
            constexpr uint32_t TILE_BYTES = 16384; // ascendopt:knob min=1024 max=65536 step=pow2
            static constexpr int64_t ALIGN = 256U;  // ascendopt:knob min=32 max=1024 step=32
            constexpr uint32_t BUFFER_NUM = 1; // ascendopt:knob choices=1,2
            constexpr uint32_t FIXED = 7; // not a knob
            // ascendopt:tiling-end
            }
        "##]]
        .assert_eq(&files[0].1);
        assert_eq!(space.current()["ALIGN"], 256);
    }
}
