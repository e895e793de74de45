//! The cube's base block (issue 27 item 5, "tile shapes"): baseM x baseN
//! x baseK, the block of C one Mmad sequence computes from a baseM x baseK
//! block of A and a baseK x baseN block of B. A larger output block reads
//! A and B fewer times from GM (each A block is read once per baseN-wide
//! column of C, each B block once per baseM-high row) and moves them in
//! fewer, longer copies; it is bounded by L0A, L0B and L0C (`fit.rs`).
//!
//! Where the block is decided, found from the syntax tree:
//!
//! - **Matmul API hosts**: `SetFixSplit(baseM, baseN, baseK)` (a missing
//!   or -1 value leaves it to GetTiling). Budget: the A/B type of
//!   `SetAType` (DT_FLOAT16/DT_BF16: 2 bytes, DT_FLOAT: 4, DT_INT8: 1),
//!   dbL0A = dbL0B = 2 and dbL0C = 1 (GetTiling's, the guide's
//!   recommendation; `set_dbL0A(1)` and friends after it are read), the L1
//!   blocks double-buffered, the bias row when `SetBias(true)` (its type
//!   from `SetBiasType`, float by default); the memories divided among the
//!   Matmul objects the kernel registers (`REGIST_MATMUL_OBJ`).
//! - **Hand-written cube kernels**: the host's `t.set_baseM(X)`,
//!   `set_baseN`, `set_baseK` calls of its tiling data. Budget: the
//!   kernel's `TQue`s on A1/B1/A2/B2/CO1 and their `InitBuffer` counts
//!   (the A2 count is dbL0A, ...), the type from `sizeof(T)` in the A2
//!   queue's `InitBuffer`. A kernel without A2/B2 queues, or whose K block
//!   is no `set_baseK` (matmul_rowpanel: the whole K, up to 256), gets no
//!   application (its fit cannot be checked), only a removal.
//! - **A block the kernel fixes at compile time** (the guide's tiling
//!   constantisation: `MatmulShapeParams` with basicM/N/K, `GetBasicConfig`,
//!   `cfg.basicM = ...`): the kernel computes with its own block, and the
//!   emulated `Matmul::Init` traps when the runtime TCubeTiling differs, so
//!   a candidate changes the host's and the kernel's values together,
//!   never one side. A kernel block that disagrees with the host's gives
//!   no site.
//!
//! A value is a literal (edited in place), a file- or class-scope integer
//! constant of any file of the package (every declaration of that name is
//! edited: a constant the host and kernel share, or declare each with the
//! same value, moves on both sides), or a local of the calling function
//! whose initializer names exactly one such constant (flash attention's
//! `baseN`, clipped by the problem: the constant is the block's bound and
//! the value moved). A constant that is an annotated Stage II knob only
//! takes values its annotation admits.
//!
//! Directions: present when the output block is large (baseM x baseN >=
//! 128 x 128, half the largest that fits with half inputs; with one side
//! unknown, the known one >= 128); the removal halves the longer side
//! (baseN on a tie), a weaker but valid block. Absent when a larger block
//! fits; apply offers a ladder, far one first: the largest output block
//! that fits (each side at least its current value, powers of two up to
//! 256, baseK kept or shrunk to fit), both sides doubled, the shorter
//! side doubled. A block that would overflow L0A/L0B/L0C, the bias table
//! or L1 is never offered. Whether a block divides the problem well
//! depends on runtime shapes the motif cannot see: the harness judges.

mod fit;

use super::syntax::{self, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use ascendopt_op::tiling::{Knob, TilingSource};
use fit::{Block, Budget};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use tree_sitter::Node;

/// The base block as a motif.
pub struct TileShape;

/// A file- or class-scope integer constant's declaration.
#[derive(Debug, Clone)]
struct ConstDecl {
    file: String,
    /// The value expression's bytes.
    range: Range<usize>,
    value: i64,
    /// The literal's suffix (`u`, `U`, `L`), kept when rewritten.
    suffix: String,
}

/// Where a block value is written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A literal in `file` at `range`.
    Literal {
        file: String,
        range: Range<usize>,
        suffix: String,
    },
    /// Every declaration of a constant.
    Constant(String),
}

/// One side of a block: its value (None: not known statically) and where
/// it is written (None: nowhere the motif can edit).
#[derive(Debug, Clone)]
struct Dim {
    value: Option<i64>,
    target: Option<Target>,
}

impl Dim {
    fn unknown() -> Dim {
        Dim {
            value: None,
            target: None,
        }
    }
}

/// Every file- or class-scope integer constant of the package, by name.
fn constants(pkg: &Sources) -> BTreeMap<String, Vec<ConstDecl>> {
    let mut out: BTreeMap<String, Vec<ConstDecl>> = BTreeMap::new();
    for (file, text) in pkg.files() {
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        for decl in parsed.all() {
            if decl.kind() != "declaration" && decl.kind() != "field_declaration" {
                continue;
            }
            if syntax::enclosing_function(decl).is_some() || !parsed.src(decl).contains("const") {
                continue;
            }
            let mut cursor = decl.walk();
            let declarators: Vec<Node<'_>> = decl
                .children_by_field_name("declarator", &mut cursor)
                .collect();
            for d in declarators {
                let value = d
                    .child_by_field_name("value")
                    .or_else(|| d.child_by_field_name("default_value"));
                let (Some(name), Some(value)) = (syntax::declared_name(&parsed, d), value) else {
                    continue;
                };
                let Some((v, suffix)) = syntax::signed_int_literal(parsed.src(value)) else {
                    continue;
                };
                out.entry(name.to_string()).or_default().push(ConstDecl {
                    file: file.to_string(),
                    range: value.byte_range(),
                    value: v,
                    suffix,
                });
            }
        }
    }
    out
}

/// The value of a constant declared (maybe several times) with one value.
fn const_value(consts: &BTreeMap<String, Vec<ConstDecl>>, name: &str) -> Option<i64> {
    let decls = consts.get(name)?;
    let v = decls.first()?.value;
    decls.iter().all(|d| d.value == v).then_some(v)
}

/// The expression inside casts and parentheses (`static_cast<T>(X)`,
/// `(X)`, `int32_t(X)`).
fn strip_casts<'t>(parsed: &Parsed<'_>, node: Node<'t>) -> Node<'t> {
    match node.kind() {
        "parenthesized_expression" => match syntax::named_children(node).as_slice() {
            [inner] => strip_casts(parsed, *inner),
            _ => node,
        },
        "cast_expression" => node
            .child_by_field_name("value")
            .map_or(node, |v| strip_casts(parsed, v)),
        "call_expression" => {
            let is_cast = node
                .child_by_field_name("function")
                .is_some_and(|f| parsed.src(f).contains("_cast<"));
            match (
                is_cast,
                node.child_by_field_name("arguments")
                    .map(syntax::named_children)
                    .as_deref(),
            ) {
                (true, Some([inner])) => strip_casts(parsed, *inner),
                _ => node,
            }
        }
        _ => node,
    }
}

/// Reads a block value written at `node` of `file`.
fn resolve(
    file: &str,
    parsed: &Parsed<'_>,
    node: Node<'_>,
    consts: &BTreeMap<String, Vec<ConstDecl>>,
) -> Dim {
    let node = strip_casts(parsed, node);
    let text = parsed.src(node);
    if let Some((value, suffix)) = syntax::signed_int_literal(text) {
        return Dim {
            value: Some(value),
            target: Some(Target::Literal {
                file: file.to_string(),
                range: node.byte_range(),
                suffix,
            }),
        };
    }
    if node.kind() != "identifier" {
        return Dim::unknown();
    }
    if consts.contains_key(text) {
        return match const_value(consts, text) {
            Some(v) => Dim {
                value: Some(v),
                target: Some(Target::Constant(text.to_string())),
            },
            None => Dim::unknown(),
        };
    }
    // A local of the calling function computed from one constant.
    let Some(func) = syntax::enclosing_function(node) else {
        return Dim::unknown();
    };
    let init = syntax::descendants(func)
        .into_iter()
        .filter(|d| d.kind() == "declaration" && d.start_byte() < node.start_byte())
        .filter(|d| syntax::declares(parsed, *d, text))
        .find_map(|d| {
            syntax::descendants(d)
                .into_iter()
                .find(|n| n.kind() == "init_declarator")
                .and_then(|n| n.child_by_field_name("value"))
        });
    let Some(init) = init else {
        return Dim::unknown();
    };
    let mut named: Vec<&str> = syntax::identifiers(parsed, init)
        .into_iter()
        .filter(|id| consts.contains_key(*id))
        .collect();
    named.sort_unstable();
    named.dedup();
    match named.as_slice() {
        [one] => match const_value(consts, one) {
            Some(v) => Dim {
                value: Some(v),
                target: Some(Target::Constant((*one).to_string())),
            },
            None => Dim::unknown(),
        },
        _ => Dim::unknown(),
    }
}

/// Where the host decides the block.
struct HostBlock {
    file: String,
    /// The anchor (the call).
    anchor: Range<usize>,
    /// The calls as written, for the note.
    written: String,
    m: Dim,
    n: Dim,
    k: Dim,
    /// A Matmul API host (SetFixSplit), else a hand-written kernel's.
    api: bool,
}

/// The host's block decisions: each `SetFixSplit` call, and each host
/// file's `set_baseM/N/K` calls.
fn host_blocks(pkg: &Sources, consts: &BTreeMap<String, Vec<ConstDecl>>) -> Vec<HostBlock> {
    let mut out = Vec::new();
    for (file, text) in pkg.host_files() {
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        let calls = parsed.calls();
        for c in calls.iter().filter(|c| c.name == "SetFixSplit") {
            let dim = |i: usize| match c.args.get(i) {
                Some(a) => resolve(file, &parsed, *a, consts),
                None => Dim {
                    value: Some(-1),
                    target: None,
                },
            };
            out.push(HostBlock {
                file: file.to_string(),
                anchor: c.node.byte_range(),
                written: parsed.src(c.node).to_string(),
                m: dim(0),
                n: dim(1),
                k: dim(2),
                api: true,
            });
        }
        let setter = |name: &str| {
            calls
                .iter()
                .find(|c| c.name == name && c.args.len() == 1 && c.object.is_some())
        };
        let (Some(sm), Some(sn)) = (setter("set_baseM"), setter("set_baseN")) else {
            continue;
        };
        let sk = setter("set_baseK");
        let written: Vec<&str> = [Some(sm), Some(sn), sk]
            .into_iter()
            .flatten()
            .map(|c| parsed.src(c.node))
            .collect();
        out.push(HostBlock {
            file: file.to_string(),
            anchor: sm.node.byte_range(),
            written: written.join("; "),
            m: resolve(file, &parsed, sm.args[0], consts),
            n: resolve(file, &parsed, sn.args[0], consts),
            k: sk.map_or_else(Dim::unknown, |c| resolve(file, &parsed, c.args[0], consts)),
            api: text.contains("MatmulApiTiling") || text.contains("MultiCoreMatmulTiling"),
        });
    }
    out
}

/// A block a kernel fixes at compile time: each side it fixes (a value
/// of 0 fixes nothing), and where.
struct KernelFix {
    at: String,
    m: Option<Dim>,
    n: Option<Dim>,
    k: Option<Dim>,
}

/// The kernels' compile-time blocks (see the module header).
fn kernel_fixes(pkg: &Sources, consts: &BTreeMap<String, Vec<ConstDecl>>) -> Vec<KernelFix> {
    let mut out = Vec::new();
    for (file, text) in pkg.kernel_files() {
        if !text.contains("MatmulShapeParams")
            && !text.contains("GetBasicConfig")
            && !text.contains("basic")
        {
            continue;
        }
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        let fixed = |d: Dim| (d.value != Some(0)).then_some(d);
        let at = |node: Node<'_>| format!("{file}:{}", syntax::line_of(text, node.start_byte()));
        let mut assigned: Vec<(&str, Dim, Node<'_>)> = Vec::new();
        for node in parsed.all() {
            match node.kind() {
                "declaration" if parsed.src(node).contains("MatmulShapeParams") => {
                    let Some(list) = syntax::descendants(node)
                        .into_iter()
                        .find(|n| n.kind() == "initializer_list")
                    else {
                        continue;
                    };
                    let values = syntax::named_children(list);
                    if values.len() < 6 {
                        continue;
                    }
                    let d = |i: usize| fixed(resolve(file, &parsed, values[i], consts));
                    out.push(KernelFix {
                        at: at(node),
                        m: d(3),
                        n: d(4),
                        k: d(5),
                    });
                }
                "call_expression" => {
                    let Some(c) = syntax::Call::of(&parsed, node) else {
                        continue;
                    };
                    if c.name != "GetBasicConfig" || c.args.len() < 3 {
                        continue;
                    }
                    let d = |i: usize| fixed(resolve(file, &parsed, c.args[i], consts));
                    out.push(KernelFix {
                        at: at(node),
                        m: d(0),
                        n: d(1),
                        k: d(2),
                    });
                }
                "assignment_expression" => {
                    let field = node
                        .child_by_field_name("left")
                        .filter(|l| l.kind() == "field_expression")
                        .and_then(|l| l.child_by_field_name("field"))
                        .map(|f| parsed.src(f));
                    let (Some(side @ ("basicM" | "basicN" | "basicK")), Some(right)) =
                        (field, node.child_by_field_name("right"))
                    else {
                        continue;
                    };
                    assigned.push((side, resolve(file, &parsed, right, consts), node));
                }
                _ => {}
            }
        }
        if let Some((_, _, first)) = assigned.first() {
            let take = |s: &str| {
                assigned
                    .iter()
                    .find(|(side, _, _)| *side == s)
                    .and_then(|(_, d, _)| fixed(d.clone()))
            };
            out.push(KernelFix {
                at: at(*first),
                m: take("basicM"),
                n: take("basicN"),
                k: take("basicK"),
            });
        }
    }
    out
}

/// Bytes of a `matmul_tiling::DataType` written in a call's arguments.
fn dtype_bytes(text: &str) -> Option<i64> {
    if text.contains("DT_FLOAT16") || text.contains("DT_BF16") || text.contains("DT_BFLOAT16") {
        Some(2)
    } else if text.contains("DT_FLOAT") {
        Some(4)
    } else if text.contains("DT_INT8") {
        Some(1)
    } else {
        None
    }
}

/// Bytes of a C++ element type name.
fn type_bytes(name: &str) -> Option<i64> {
    match name.trim().rsplit("::").next()?.trim() {
        "half" | "bfloat16_t" | "int16_t" | "uint16_t" => Some(2),
        "float" | "int32_t" | "uint32_t" => Some(4),
        "int8_t" | "uint8_t" => Some(1),
        _ => None,
    }
}

/// Matmul objects the kernels register (`REGIST_MATMUL_OBJ(pipe, ws,
/// obj, tiling, obj, tiling, ...)`), at least 1.
fn matmul_objects(pkg: &Sources) -> i64 {
    let mut n = 0i64;
    for (_, text) in pkg.kernel_files() {
        if !text.contains("REGIST_MATMUL_OBJ") {
            continue;
        }
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        for c in parsed.calls() {
            if c.name == "REGIST_MATMUL_OBJ" && c.args.len() >= 4 {
                n += i64::try_from((c.args.len() - 2) / 2).unwrap_or(1);
            }
        }
    }
    n.max(1)
}

/// The budget of a Matmul API host file (see the module header).
fn api_budget(pkg: &Sources, file: &str) -> Option<Budget> {
    let text = pkg.get(file)?;
    let parsed = Parsed::new(text)?;
    let calls = parsed.calls();
    let arg_text = |name: &str| {
        calls
            .iter()
            .find(|c| c.name == name)
            .map(|c| parsed.src(c.node).to_string())
    };
    let elem = dtype_bytes(&arg_text("SetAType")?)?;
    let literal_arg = |name: &str| {
        calls
            .iter()
            .find(|c| c.name == name && c.args.len() == 1)
            .and_then(|c| syntax::signed_int_literal(parsed.src(c.args[0])))
            .map(|(v, _)| v)
    };
    let bias_on = calls.iter().any(|c| {
        c.name == "EnableBias"
            || c.name == "SetBias"
                && c.args
                    .first()
                    .is_none_or(|a| parsed.src(*a).trim() == "true")
    });
    let bias = if bias_on {
        arg_text("SetBiasType")
            .and_then(|t| dtype_bytes(&t))
            .unwrap_or(4)
    } else {
        0
    };
    Some(Budget {
        elem,
        db_a: literal_arg("set_dbL0A").unwrap_or(2),
        db_b: literal_arg("set_dbL0B").unwrap_or(2),
        db_c: literal_arg("set_dbL0C").unwrap_or(1),
        l1_a: 2,
        l1_b: 2,
        bias,
        share: matmul_objects(pkg),
    })
}

/// The budget of hand-written cube kernels: their A1/B1/A2/B2/CO1 queues.
fn kernel_budget(pkg: &Sources) -> Option<Budget> {
    let mut counts: BTreeMap<&'static str, i64> = BTreeMap::new();
    let mut elem = None;
    for (_, text) in pkg.kernel_files() {
        if !text.contains("Mmad") {
            continue;
        }
        let parsed = Parsed::new(text)?;
        let constants = super::cube_buffer::scope_constants(&parsed);
        let queues = super::cube_buffer::queue_positions(&parsed);
        for c in parsed.calls() {
            if c.name != "InitBuffer" || c.args.len() != 3 {
                continue;
            }
            let q = super::cube_buffer::queue_name(&parsed, c.args[0]);
            let Some(pos) = queues.get(q) else {
                continue;
            };
            let count = syntax::signed_int_literal(parsed.src(c.args[1]))
                .map(|(v, _)| v)
                .or_else(|| constants.get(parsed.src(c.args[1]).trim()).copied())?;
            counts.insert(*pos, count);
            if *pos == "A2" {
                let size = parsed.src(c.args[2]);
                elem = size
                    .split("sizeof(")
                    .nth(1)
                    .and_then(|rest| rest.split(')').next())
                    .and_then(type_bytes);
            }
        }
    }
    Some(Budget {
        elem: elem?,
        db_a: *counts.get("A2")?,
        db_b: *counts.get("B2")?,
        db_c: counts.get("CO1").copied().unwrap_or(1),
        l1_a: counts.get("A1").copied().unwrap_or(0),
        l1_b: counts.get("B1").copied().unwrap_or(0),
        bias: 0,
        share: 1,
    })
}

/// The annotated Stage II knobs of the host files, by name.
fn knobs(pkg: &Sources) -> BTreeMap<String, Knob> {
    pkg.host_files()
        .filter(|(_, text)| text.contains("ascendopt:tiling-begin"))
        .filter_map(|(path, text)| TilingSource::parse(Path::new(path), text).ok())
        .flat_map(|t| t.knobs)
        .map(|k| (k.name.clone(), k))
        .collect()
}

/// One site's block: the host's, with the kernel's fixed sides.
struct Decided {
    host: HostBlock,
    fix: Option<KernelFix>,
}

impl Decided {
    /// The dims that carry each side: the host's, and the kernel's when it
    /// fixes that side.
    fn carriers(&self, side: usize) -> Vec<&Dim> {
        let mut out = vec![match side {
            0 => &self.host.m,
            1 => &self.host.n,
            _ => &self.host.k,
        }];
        if let Some(f) = &self.fix {
            let fixed = match side {
                0 => &f.m,
                1 => &f.n,
                _ => &f.k,
            };
            if let Some(d) = fixed {
                out.push(d);
            }
        }
        out
    }

    /// True when side `side` may take `value`: unchanged, or every carrier
    /// has a target that admits it.
    fn admits(&self, side: usize, old: i64, value: i64, knobs: &BTreeMap<String, Knob>) -> bool {
        value == old
            || self.carriers(side).iter().all(|d| match &d.target {
                Some(Target::Constant(name)) => knobs.get(name).is_none_or(|k| k.admits(value)),
                Some(Target::Literal { .. }) => true,
                None => false,
            })
    }

    /// The package with `old` moved to `new`.
    fn rewrite(
        &self,
        pkg: &Sources,
        consts: &BTreeMap<String, Vec<ConstDecl>>,
        old: Block,
        new: Block,
    ) -> Option<Sources> {
        let mut edits: BTreeMap<String, Vec<(Range<usize>, String)>> = BTreeMap::new();
        for (side, (o, v)) in [(old.m, new.m), (old.n, new.n), (old.k, new.k)]
            .into_iter()
            .enumerate()
        {
            if o == v {
                continue;
            }
            for d in self.carriers(side) {
                match d.target.as_ref()? {
                    Target::Literal {
                        file,
                        range,
                        suffix,
                    } => edits
                        .entry(file.clone())
                        .or_default()
                        .push((range.clone(), format!("{v}{suffix}"))),
                    Target::Constant(name) => {
                        for c in consts.get(name)? {
                            edits
                                .entry(c.file.clone())
                                .or_default()
                                .push((c.range.clone(), format!("{v}{}", c.suffix)));
                        }
                    }
                }
            }
        }
        let mut out = pkg.clone();
        for (file, mut list) in edits {
            list.sort_by_key(|(r, _)| (r.start, r.end));
            list.dedup();
            let text = syntax::apply_edits(out.get(&file)?, &list)?;
            out = with_file(&out, &file, text);
        }
        Some(out)
    }
}

impl Engine for TileShape {
    const TAG: &'static str = "tile_shape";
    const FAMILY: &'static str = "memory";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Grow the cube's base block (baseM x baseN x baseK) to the largest that fits L0A/L0B/L0C",
            bottleneck: "small base blocks: each A block is read from GM once per baseN-wide column of C and each B block once per baseM-high row, in short copies, so the AIC's MTE2 is busy re-reading while the cube waits",
            reuse_when: "a cube kernel or Matmul API host sets its base block with constants (SetFixSplit, set_baseM/N/K, a kernel's MatmulShapeParams) smaller than 128 x 256 x 64 for half inputs and the problem has many blocks per core",
            avoid_when: "the problem has fewer blocks than cube cores (larger blocks leave cores idle), or the block already fills L0A/L0B double-buffered and L0C",
            expected_effect: "GM traffic of A and B falls with 1/baseM + 1/baseN: up to ~2-3x on MTE2-bound cube kernels with 64 x 64 blocks",
            keywords: &["tile shape", "base block", "baseM", "baseN", "baseK", "SetFixSplit", "TCubeTiling", "L0A", "L0B", "L0C", "cube", "MTE2", "Mmad", "MatmulShapeParams"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let consts = constants(pkg);
        let hosts = host_blocks(pkg, &consts);
        if hosts.is_empty() {
            return Vec::new();
        }
        let fixes = kernel_fixes(pkg, &consts);
        if fixes.len() > 1 || !fixes.is_empty() && hosts.iter().filter(|h| h.api).count() != 1 {
            // Several compile-time blocks, or several Matmul host blocks
            // beside one: which goes with which is not read here.
            return Vec::new();
        }
        let knobs = knobs(pkg);
        let mut fix = fixes.into_iter().next();
        let mut out = Vec::new();
        for host in hosts {
            let budget = if host.api {
                api_budget(pkg, &host.file)
            } else {
                kernel_budget(pkg)
            };
            let decided = Decided {
                fix: if host.api { fix.take() } else { None },
                host,
            };
            out.extend(site_plans(pkg, &consts, &knobs, &decided, budget.as_ref()));
        }
        out
    }
}

/// The plans of one host block.
fn site_plans(
    pkg: &Sources,
    consts: &BTreeMap<String, Vec<ConstDecl>>,
    knobs: &BTreeMap<String, Knob>,
    d: &Decided,
    budget: Option<&Budget>,
) -> Vec<Plan> {
    let h = &d.host;
    let Some(text) = pkg.get(&h.file) else {
        return Vec::new();
    };
    // The kernel's fixed sides must agree with the host's.
    let mut fixed_note = String::new();
    if let Some(f) = &d.fix {
        for (host, kernel) in [(&h.m, &f.m), (&h.n, &f.n), (&h.k, &f.k)] {
            if let Some(k) = kernel {
                if k.value.is_none() || k.value != host.value {
                    return Vec::new();
                }
            }
        }
        fixed_note = format!(", with the kernel's constant block at {}", f.at);
    }
    let known = |v: Option<i64>| v.filter(|&x| x > 0);
    let (m, n) = (known(h.m.value), known(h.n.value));
    let k = h.k.value.filter(|&x| x > 0 || h.api && x == -1);
    let show = |v: Option<i64>| v.map_or("?".to_string(), |x| x.to_string());
    let old = Block {
        m: m.unwrap_or(0),
        n: n.unwrap_or(0),
        k: k.unwrap_or(0),
    };
    let shown = format!("{} x {} x {}", show(m), show(n), show(h.k.value));
    let mut out = Vec::new();
    let plan = |state: SiteState, new: Block, what: String| -> Plan {
        let note = format!("base block {shown} of {}{fixed_note} -> {what}", h.written);
        let site = site_at::<TileShape>(&h.file, text, h.anchor.clone(), state, note);
        Plan {
            site,
            output: d.rewrite(pkg, consts, old, new),
        }
    };
    // Removal: a large block loses half its longer side.
    let large = match (m, n) {
        (Some(m), Some(n)) => m * n >= fit::LARGE_AREA,
        (None, Some(x)) | (Some(x), None) => x >= 128,
        (None, None) => false,
    };
    if large {
        let admit_m = |v: i64| d.admits(0, old.m, v, knobs);
        let admit_n = |v: i64| d.admits(1, old.n, v, knobs);
        if let Some(weak) = fit::shrunk(old, &admit_m, &admit_n) {
            let what = format!(
                "{} x {} x {}",
                if m.is_some() {
                    weak.m.to_string()
                } else {
                    "?".into()
                },
                if n.is_some() {
                    weak.n.to_string()
                } else {
                    "?".into()
                },
                show(h.k.value)
            );
            out.push(plan(SiteState::Present, weak, what));
        }
    }
    // Application: larger blocks that fit, when every side and the budget
    // are known.
    let (Some(_), Some(_), Some(_), Some(budget)) = (m, n, k, budget) else {
        return out;
    };
    let admit = |b: Block| {
        d.admits(0, old.m, b.m, knobs)
            && d.admits(1, old.n, b.n, knobs)
            && d.admits(2, old.k, b.k, knobs)
    };
    for big in fit::grown(budget, old, &admit) {
        out.push(plan(SiteState::Absent, big, big.to_string()));
    }
    out
}

#[cfg(test)]
mod tests;
