//! Motifs that live in the host tiling: double buffering (buffer count),
//! the all-core launch (core count) and large tiles (tile or UB size).
//!
//! Two kinds of knobs carry them:
//! - annotated knobs of `// ascendopt:tiling-begin/end` regions (read with
//!   `ascendopt_op::tiling`, the parser Stage II uses), recognised by name
//!   (`BUFFER_NUM`, `*CORE_NUM`, `TILE_*`) and always moved to a value the
//!   annotation admits;
//! - knobs found in plain host code ([`crate::knobfind`]), recognised by
//!   what they decide (a value reaching `SetBlockDim` is a core count, one
//!   named or flowing into a buffer count is a buffer count, ...), moved
//!   in place (the candidate differs from the input by a number).
//!
//! A move that may not fit (more cores, a bigger tile) comes as a ladder:
//! one site per value, from the far one down towards the current value,
//! so that when the far value fails (UB overflow, an infeasible tiling) the
//! next candidate of the same round is the largest value below it: the
//! step lands at the largest feasible value instead of being dropped.
//!
//! Double buffering has a third form for kernels without tiling knobs: a
//! file-scope `constexpr` constant (or a literal) passed as the buffer count
//! of `pipe->InitBuffer(queue, num, bytes)`.

use super::syntax::{self, Parsed};
use super::{site_at, with_file, Engine, MotifInfo, Plan, SiteState, Sources};
use crate::knobfind::{self, FoundKnob, Role};
use ascendopt_op::tiling::{Knob, TilingSource};
use std::collections::BTreeMap;
use std::path::Path;

/// Every knob of every host file: (file, parsed source).
fn tiling_sources(pkg: &Sources) -> Vec<(String, TilingSource)> {
    pkg.host_files()
        .filter(|(_, text)| text.contains("ascendopt:tiling-begin"))
        .filter_map(|(path, text)| {
            TilingSource::parse(Path::new(path), text)
                .ok()
                .map(|t| (path.to_string(), t))
        })
        .collect()
}

/// The byte range of 1-based line `line` of `text` (without the newline).
fn line_bytes(text: &str, line: usize) -> std::ops::Range<usize> {
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return start..start + l.trim_end_matches('\n').len();
        }
        start += l.len();
    }
    text.len()..text.len()
}

/// Plans that move one annotated knob: `decide` gives the state and the
/// new values (a ladder, far value first) for a knob it recognises.
fn knob_plans<E: Engine>(
    pkg: &Sources,
    decide: impl Fn(&Knob) -> Option<(SiteState, Vec<i64>)>,
) -> Vec<Plan> {
    let mut out = Vec::new();
    for (file, ts) in tiling_sources(pkg) {
        for knob in &ts.knobs {
            let Some((state, ladder)) = decide(knob) else {
                continue;
            };
            let range = line_bytes(&ts.text, knob.line);
            for value in ladder {
                let site = site_at::<E>(
                    &file,
                    &ts.text,
                    range.clone(),
                    state,
                    format!(
                        "{} = {} -> {value} (domain {})",
                        knob.name,
                        knob.value,
                        knob.domain()
                    ),
                );
                let output = (value != knob.value && knob.admits(value))
                    .then(|| {
                        let values = BTreeMap::from([(knob.name.clone(), value)]);
                        ts.render_with(&values).ok()
                    })
                    .flatten()
                    .map(|text| with_file(pkg, &file, text));
                out.push(Plan { site, output });
            }
        }
    }
    out
}

/// Plans that move one knob found in plain host code (the package is read
/// without any found-knob markers a Stage II search left): `decide` gives
/// the state and the ladder of new values for a knob of interest.
fn found_plans<E: Engine>(
    pkg: &Sources,
    decide: impl Fn(&FoundKnob) -> Option<(SiteState, Vec<i64>)>,
) -> Vec<Plan> {
    let plain = knobfind::restore(pkg);
    let found = knobfind::discover(&plain, &pkg.chip());
    let mut out = Vec::new();
    for knob in &found.knobs {
        let Some((state, ladder)) = decide(knob) else {
            continue;
        };
        let Some(text) = plain.get(&knob.file) else {
            continue;
        };
        for value in ladder {
            let site = site_at::<E>(
                &knob.file,
                text,
                knob.literal.clone(),
                state,
                format!(
                    "{} -> {value} (found: {}; {})",
                    knob.label,
                    knob.role.describe(),
                    knob.sinks.join(", ")
                ),
            );
            let output = (value != knob.value)
                .then(|| {
                    knobfind::with_values(
                        &plain,
                        std::slice::from_ref(knob),
                        &BTreeMap::from([(knob.name.clone(), value)]),
                    )
                })
                .flatten();
            out.push(Plan { site, output });
        }
    }
    out
}

/// A ladder of values from `far` towards `current`: `far` first, then
/// the admitted value halfway (by position among `admitted`, so halving on
/// a power-of-two domain, arithmetic halving on a step domain) between
/// the last one and `current`, and so on; at most `steps` values, never
/// `current`.
pub(crate) fn ladder(current: i64, far: i64, steps: usize, admitted: &[i64]) -> Vec<i64> {
    let mut between: Vec<i64> = admitted
        .iter()
        .copied()
        .filter(|&v| {
            if far > current {
                v > current && v <= far
            } else {
                v < current && v >= far
            }
        })
        .collect();
    between.sort_unstable();
    if far < current {
        between.reverse();
    }
    // `between` runs from next-to-current to far.
    let mut out = Vec::new();
    let Some(mut idx) = between.len().checked_sub(1) else {
        return out;
    };
    while out.len() < steps {
        out.push(between[idx]);
        if idx == 0 {
            break;
        }
        idx /= 2;
    }
    out
}

fn name_is_buffer_num(name: &str) -> bool {
    name.contains("BUFFER_NUM") || name.contains("BUFFER_COUNT") || name == "DOUBLE_BUFFER"
}

/// Double buffering: two buffers per queue so MTE2, V and MTE3 overlap.
pub struct DoubleBuffer;

impl Engine for DoubleBuffer {
    const TAG: &'static str = "double_buffer";
    const FAMILY: &'static str = "pipeline";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Double-buffer the tile queues (2 buffers per TQue)",
            bottleneck: "copy-in, compute and copy-out of successive tiles run one after another: MTE2, vector and MTE3 pipes wait for each other (low per-pipe busy ratios, no overlap)",
            reuse_when: "a tile loop streams several tiles per core through TQue queues and two buffers per queue fit in UB",
            avoid_when: "each core handles a single tile, or UB is too full to hold a second buffer without shrinking the tile",
            expected_effect: "copies of tile i+1 overlap the compute of tile i: up to ~2-3x on streaming kernels whose stages are balanced, less when one pipe dominates",
            keywords: &["double buffering", "BUFFER_NUM", "InitBuffer", "TQue", "pipeline overlap", "ping-pong", "MTE2", "MTE3"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut plans = knob_plans::<Self>(pkg, |k| {
            if !name_is_buffer_num(&k.name) {
                return None;
            }
            if k.value >= 2 {
                Some((SiteState::Present, vec![1]))
            } else if k.value == 1 && k.admits(2) {
                Some((SiteState::Absent, vec![2]))
            } else {
                None
            }
        });
        plans.extend(found_plans::<Self>(pkg, |k| {
            if k.role != Role::Buffers {
                return None;
            }
            match k.value {
                1 => Some((SiteState::Absent, vec![2])),
                2.. => Some((SiteState::Present, vec![1])),
                _ => None,
            }
        }));
        plans.extend(kernel_buffer_plans(pkg));
        plans
    }
}

/// The kernel form: `InitBuffer(queue, N, bytes)` with N a literal or a
/// file-scope integer constant.
fn kernel_buffer_plans(pkg: &Sources) -> Vec<Plan> {
    let mut out = Vec::new();
    for (file, text) in pkg.kernel_files() {
        let Some(parsed) = Parsed::new(text) else {
            continue;
        };
        let constants = file_constants(&parsed);
        let mut seen: Vec<std::ops::Range<usize>> = Vec::new();
        for call in parsed.calls() {
            if call.name != "InitBuffer" || call.args.len() != 3 {
                continue;
            }
            let num = call.args[1];
            let literal = match num.kind() {
                "number_literal" => Some(num),
                "identifier" => constants.get(parsed.src(num)).copied(),
                _ => None,
            };
            let Some(literal) = literal else {
                continue;
            };
            let range = literal.byte_range();
            if seen.contains(&range) {
                continue;
            }
            seen.push(range.clone());
            let Some((value, _)) = syntax::int_literal(parsed.src(literal)) else {
                continue;
            };
            let (state, new) = match value {
                2.. => (SiteState::Present, "1"),
                1 => (SiteState::Absent, "2"),
                _ => continue,
            };
            let site = site_at::<DoubleBuffer>(
                file,
                text,
                range.clone(),
                state,
                format!(
                    "buffer count {} of {}",
                    parsed.src(literal),
                    parsed.src(call.node)
                ),
            );
            let output = syntax::apply_edits(text, &[(range.clone(), new.to_string())])
                .map(|t| with_file(pkg, file, t));
            // Second buffers take UB: the same change with the tiles the
            // host found halved, for when the first does not fit.
            if state == SiteState::Absent {
                if let Some(halved) = output.as_ref().and_then(with_halved_tiles) {
                    let site = site_at::<DoubleBuffer>(
                        file,
                        text,
                        range.clone(),
                        state,
                        format!(
                            "buffer count {} of {}, tiles halved to fit",
                            parsed.src(literal),
                            parsed.src(call.node)
                        ),
                    );
                    out.push(Plan {
                        site,
                        output: Some(halved),
                    });
                }
            }
            out.push(Plan { site, output });
        }
    }
    out
}

/// `pkg` with every tile or UB size found in its host code halved (None
/// when there is none).
fn with_halved_tiles(pkg: &Sources) -> Option<Sources> {
    let plain = knobfind::restore(pkg);
    let found = knobfind::discover(&plain, &pkg.chip());
    let sizes: Vec<FoundKnob> = found
        .knobs
        .into_iter()
        .filter(|k| k.role == Role::Size && k.value >= 2 * k.min.max(1))
        .collect();
    if sizes.is_empty() {
        return None;
    }
    let values: BTreeMap<String, i64> = sizes
        .iter()
        .map(|k| {
            let half = k
                .candidates()
                .into_iter()
                .filter(|&v| v <= k.value / 2)
                .max()
                .unwrap_or(k.value / 2);
            (k.name.clone(), half)
        })
        .collect();
    knobfind::with_values(&plain, &sizes, &values)
}

/// File-scope `constexpr`/`const` integer constants: name → literal node.
fn file_constants<'t>(parsed: &'t Parsed<'_>) -> BTreeMap<String, tree_sitter::Node<'t>> {
    let mut out = BTreeMap::new();
    for decl in syntax::named_children(parsed.root()) {
        if decl.kind() != "declaration" {
            continue;
        }
        let text = parsed.src(decl);
        if !(text.starts_with("constexpr")
            || text.starts_with("const")
            || text.starts_with("static"))
        {
            continue;
        }
        let mut cursor = decl.walk();
        let declarators: Vec<_> = decl
            .children_by_field_name("declarator", &mut cursor)
            .collect();
        for d in declarators {
            if d.kind() != "init_declarator" {
                continue;
            }
            let (Some(name), Some(value)) = (
                d.child_by_field_name("declarator"),
                d.child_by_field_name("value"),
            ) else {
                continue;
            };
            if value.kind() == "number_literal" {
                out.insert(parsed.src(name).to_string(), value);
            }
        }
    }
    out
}

/// All-core launch: the tiling spreads the work over every vector core
/// (the first `tailCoreNum` cores take one split unit more).
pub struct MultiCore;

/// The core-count value a removal picks: about a sixth of the cores (48 →
/// 8, a typical hard-coded core count of naive kernels).
fn fewer_cores(k: &Knob) -> i64 {
    let target = (k.value / 6).max(k.min).max(1);
    k.candidates()
        .into_iter()
        .filter(|&v| v <= target)
        .max()
        .unwrap_or(k.min)
}

impl Engine for MultiCore {
    const TAG: &'static str = "multi_core";
    const FAMILY: &'static str = "parallelism";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Launch on every vector core with a balanced split (tail cores take one unit more)",
            bottleneck: "only a few cores work: the block dim is small, so the per-core span is long while most of the chip and of the HBM bandwidth sits idle",
            reuse_when: "the operator has enough work for all cores (more than a few KB per core) and the tiling caps the core count by a constant or a fixed number",
            avoid_when: "tiny tensors, where the launch cost of extra blocks (about 0.26 us each) exceeds the work they take over",
            expected_effect: "per-core work shrinks by the core ratio; up to ~6x on large streaming kernels launched on 8 of 48 cores",
            keywords: &["block dim", "SetBlockDim", "core count", "MAX_CORE_NUM", "multi-core", "load balance", "tail core", "GetBlockIdx"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let cores = i64::from(pkg.chip().cores);
        let mut plans = knob_plans::<Self>(pkg, |k| {
            if !k.name.contains("CORE_NUM") || k.name.starts_with("MIN") || k.max <= 1 {
                return None;
            }
            if k.value == k.max {
                Some((SiteState::Present, vec![fewer_cores(k)]))
            } else if k.value < k.max {
                Some((
                    SiteState::Absent,
                    ladder(k.value, k.max, 4, &k.candidates()),
                ))
            } else {
                None
            }
        });
        plans.extend(found_plans::<Self>(pkg, |k| {
            if k.role != Role::Cores {
                return None;
            }
            if k.value >= cores {
                // Below the platform's cores (a cap above them included),
                // so that the weak kernel shows the site as absent.
                Some((SiteState::Present, vec![(cores / 6).max(1)]))
            } else {
                Some((
                    SiteState::Absent,
                    ladder(k.value, cores, 4, &k.candidates()),
                ))
            }
        }));
        plans
    }
}

/// Large copies: tiles of tens of KB, so each DataCopy moves enough bytes
/// to amortise its fixed cost.
pub struct TileSize;

fn is_tile_knob(name: &str) -> bool {
    name.starts_with("TILE_")
        && ["BYTES", "ELEMS", "LEN", "LENGTH", "SIZE"]
            .iter()
            .any(|s| name.ends_with(s))
}

impl Engine for TileSize {
    const TAG: &'static str = "tile_size";
    const FAMILY: &'static str = "memory";

    fn info(&self) -> MotifInfo {
        MotifInfo {
            title: "Use large tiles (tens of KB per DataCopy) instead of small ones",
            bottleneck: "many small DataCopy calls: each pays the fixed GM round trip (~0.38 us) and the per-copy issue cost, so MTE2/MTE3 bandwidth stays far below the per-core peak",
            reuse_when: "a streaming kernel moves its data in tiles of a few KB or less and UB has room for bigger ones",
            avoid_when: "the whole per-core range is already one tile, or bigger tiles would leave no UB for the other buffers",
            expected_effect: "copies approach the per-core bandwidth (~45 GB/s per core at 32 KB+); several times faster on kernels bound by small copies",
            keywords: &["tile size", "TILE_BYTES", "TILE_ELEMS", "DataCopy size", "copy granularity", "bandwidth", "MTE2", "UB"],
        }
    }

    fn plans(&self, pkg: &Sources) -> Vec<Plan> {
        let mut plans = knob_plans::<Self>(pkg, |k| {
            if !is_tile_knob(&k.name) || k.min <= 0 {
                return None;
            }
            let candidates = k.candidates();
            if k.value >= 8 * k.min {
                let small = candidates
                    .iter()
                    .copied()
                    .filter(|&v| v >= k.value / 32)
                    .min()?;
                Some((SiteState::Present, vec![small]))
            } else {
                let large = candidates
                    .iter()
                    .copied()
                    .filter(|&v| v <= k.value.saturating_mul(32))
                    .max()?;
                (large > k.value)
                    .then(|| (SiteState::Absent, ladder(k.value, large, 5, &candidates)))
            }
        });
        let ub = i64::try_from(pkg.chip().ub_bytes).unwrap_or(i64::MAX);
        plans.extend(found_plans::<Self>(pkg, |k| match k.role {
            // A cube base block is tile_shape's, which checks L0A/L0B/L0C.
            Role::Size if is_base_block(k) => None,
            Role::Size => {
                let all = k.candidates();
                if k.value.saturating_mul(16) <= ub {
                    let far = all
                        .iter()
                        .copied()
                        .filter(|&v| v <= k.value.saturating_mul(32) && v <= ub / 2)
                        .max()?;
                    (far > k.value).then(|| (SiteState::Absent, ladder(k.value, far, 5, &all)))
                } else {
                    let small = all.iter().copied().filter(|&v| v >= k.value / 32).min()?;
                    (small < k.value).then(|| (SiteState::Present, vec![small]))
                }
            }
            // A count of tiles (or a split of the UB): fewer, larger tiles.
            Role::Count if k.value > 1 && tile_count(k) => {
                Some((SiteState::Absent, ladder(k.value, 1, 4, &k.candidates())))
            }
            Role::Count if k.value == 1 && tile_count(k) => Some((SiteState::Present, vec![8])),
            _ => None,
        }));
        plans
    }
}

/// A found size that reaches a cube base block (a tiling field or the
/// Matmul tiling's baseM, baseN or baseK): its UB-sized ladder would
/// overflow L0A/L0B (BASE_M -> 512 faulted on matmul_block64), and
/// `tile_shape` moves it within L0's limits.
fn is_base_block(k: &FoundKnob) -> bool {
    k.sinks.iter().any(|s| {
        ["baseM", "baseN", "baseK"]
            .iter()
            .any(|f| s.ends_with(&format!(" {f}")))
    })
}

/// A count knob that divides the work into tiles or the UB into parts
/// (more of them, smaller tiles).
fn tile_count(k: &FoundKnob) -> bool {
    let l = k.label.to_ascii_lowercase();
    let fields = k.sinks.join(" ").to_ascii_lowercase();
    l.contains("tile")
        || l.contains("loop")
        || l.contains("factor")
        || l.contains("split")
        || fields.contains("tilenum")
        || fields.contains("tile_num")
        || fields.contains("loop")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Motif;

    const HOST: &str = "namespace {\n// ascendopt:tiling-begin\nconstexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2\nconstexpr uint32_t BUFFER_NUM = 2;          // ascendopt:knob choices=1,2\nconstexpr uint32_t MAX_CORE_NUM = 48;       // ascendopt:knob min=1 max=48 step=1\n// ascendopt:tiling-end\n}\n";

    fn pkg(host: &str) -> Sources {
        Sources::from_files([("op_host/k.cpp", host), ("op_kernel/k.cpp", "int k;\n")])
    }

    fn round_trip(motif: &dyn Motif, from: &str, to: &str) {
        let strong = pkg(HOST);
        let sites = motif.detect(&strong);
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].state, SiteState::Present);
        assert_eq!(
            sites[0].line,
            if from.starts_with("TILE") {
                3
            } else if from.starts_with("BUFFER") {
                4
            } else {
                5
            }
        );
        let weak = motif.remove(&strong, &sites[0]).unwrap();
        let host = weak.get("op_host/k.cpp").unwrap();
        assert!(host.contains(to), "{host}");
        assert!(!host.contains(from), "{host}");
        assert!(motif.apply(&strong, &sites[0]).is_none());
        let weak_sites = motif.detect(&weak);
        assert!(!weak_sites.is_empty());
        assert!(weak_sites.iter().all(|s| s.state == SiteState::Absent));
        // The far end of the ladder first: the strong value.
        let back = motif.apply(&weak, &weak_sites[0]).unwrap();
        assert_eq!(back, strong);
    }

    #[test]
    fn double_buffering_goes_from_two_buffers_to_one_and_back() {
        round_trip(&DoubleBuffer, "BUFFER_NUM = 2;", "BUFFER_NUM = 1;");
    }

    #[test]
    fn all_cores_go_to_eight_and_back() {
        round_trip(&MultiCore, "MAX_CORE_NUM = 48;", "MAX_CORE_NUM = 8;");
    }

    #[test]
    fn large_tiles_shrink_to_one_kilobyte_and_grow_back() {
        round_trip(&TileSize, "TILE_BYTES = 32768;", "TILE_BYTES = 1024;");
    }

    #[test]
    fn a_tile_knob_with_a_step_picks_admitted_values() {
        let host = "// ascendopt:tiling-begin\nconstexpr uint32_t TILE_BYTES = 90112;      // ascendopt:knob min=4096 max=98304 step=4096\n// ascendopt:tiling-end\n";
        let strong = pkg(host);
        let site = TileSize.detect(&strong).remove(0);
        let weak = TileSize.remove(&strong, &site).unwrap();
        assert!(weak
            .get("op_host/k.cpp")
            .unwrap()
            .contains("TILE_BYTES = 4096;"));
        let site = TileSize.detect(&weak).remove(0);
        let strong2 = TileSize.apply(&weak, &site).unwrap();
        assert!(strong2
            .get("op_host/k.cpp")
            .unwrap()
            .contains("TILE_BYTES = 98304;"));
    }

    #[test]
    fn kernel_constant_buffer_count_is_a_site_without_knobs() {
        let kernel = "constexpr int32_t BUFFER_NUM = 2;\nvoid Init() {\n    pipe.InitBuffer(inQueueX, BUFFER_NUM, 1024);\n    pipe.InitBuffer(outQueueY, BUFFER_NUM, 1024);\n    pipe.InitBuffer(tmp, 1, 64);\n}\n";
        let strong = Sources::from_files([("op_kernel/k.cpp", kernel)]);
        let sites = DoubleBuffer.detect(&strong);
        // The shared constant once, the literal 1 of the third call.
        assert_eq!(sites.len(), 2, "{sites:?}");
        assert_eq!(sites[0].state, SiteState::Present);
        assert_eq!(sites[0].line, 1);
        let weak = DoubleBuffer.remove(&strong, &sites[0]).unwrap();
        assert!(weak
            .get("op_kernel/k.cpp")
            .unwrap()
            .starts_with("constexpr int32_t BUFFER_NUM = 1;"));
        let back = DoubleBuffer
            .apply(&weak, &DoubleBuffer.detect(&weak)[0])
            .unwrap();
        assert_eq!(back, strong);
    }

    #[test]
    fn ladders_halve_the_distance_towards_the_current_value() {
        let pow2: Vec<i64> = (10..=17).map(|e| 1i64 << e).collect();
        assert_eq!(ladder(1024, 32768, 5, &pow2), [32768, 8192, 4096, 2048]);
        let cores: Vec<i64> = (1..=48).collect();
        assert_eq!(ladder(8, 48, 4, &cores), [48, 28, 18, 13]);
        assert_eq!(ladder(8, 1, 4, &cores), [1, 4, 6, 7]);
        assert!(ladder(48, 48, 4, &cores).is_empty());
    }

    #[test]
    fn found_knobs_move_in_place_by_role() {
        let host = "namespace optiling {\nconst uint32_t BLOCK_DIM = 8;\nconst uint32_t TILE_LENGTH = 1024;\nstatic ge::graphStatus TilingFunc(gert::TilingContext* context)\n{\n    context->SetBlockDim(BLOCK_DIM);\n    tiling.set_tileLength(TILE_LENGTH);\n    tiling.set_bufferNum(2);\n    return ge::GRAPH_SUCCESS;\n}\n}\n";
        let weak = pkg(host);
        let sites = MultiCore.detect(&weak);
        assert_eq!(sites[0].state, SiteState::Absent);
        assert_eq!(sites[0].line, 2);
        let strong = MultiCore.apply(&weak, &sites[0]).unwrap();
        assert!(strong
            .get("op_host/k.cpp")
            .unwrap()
            .contains("const uint32_t BLOCK_DIM = 48;"));
        let back = MultiCore.detect(&strong);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].state, SiteState::Present);
        let sites = TileSize.detect(&weak);
        assert_eq!(sites[0].state, SiteState::Absent, "{sites:?}");
        let big = TileSize.apply(&weak, &sites[0]).unwrap();
        assert!(big
            .get("op_host/k.cpp")
            .unwrap()
            .contains("const uint32_t TILE_LENGTH = 32768;"));
        // The next rung is smaller, for when the far one does not fit.
        let next = TileSize.apply(&weak, &sites[1]).unwrap();
        assert!(next
            .get("op_host/k.cpp")
            .unwrap()
            .contains("const uint32_t TILE_LENGTH = 8192;"));
        let buffers = DoubleBuffer.detect(&weak);
        assert_eq!(buffers.len(), 1);
        assert_eq!(buffers[0].state, SiteState::Present);
        let single = DoubleBuffer.remove(&weak, &buffers[0]).unwrap();
        assert!(single
            .get("op_host/k.cpp")
            .unwrap()
            .contains("tiling.set_bufferNum(1);"));
    }

    #[test]
    fn cores_and_tiles_are_sized_by_the_device_the_sources_are_for() {
        let host = "namespace optiling {\nconst uint32_t BLOCK_DIM = 8;\nconst uint32_t TILE_LENGTH = 1024;\nstatic ge::graphStatus TilingFunc(gert::TilingContext* context)\n{\n    context->SetBlockDim(BLOCK_DIM);\n    tiling.set_tileLength(TILE_LENGTH);\n    return ge::GRAPH_SUCCESS;\n}\n}\n";
        let small = crate::knobfind::ChipLimits {
            cores: 20,
            ub_bytes: 16 * 1024,
        };
        let weak = pkg(host).with_chip(small);
        let sites = MultiCore.detect(&weak);
        let all = MultiCore.apply(&weak, &sites[0]).unwrap();
        let text = all.get("op_host/k.cpp").unwrap();
        assert!(text.contains("const uint32_t BLOCK_DIM = 20;"), "{text}");
        assert_eq!(all.chip(), small);
        // At most half the UB per tile: 8 KB, not the 910B2's 32 KB.
        let sites = TileSize.detect(&weak);
        let big = TileSize.apply(&weak, &sites[0]).unwrap();
        let text = big.get("op_host/k.cpp").unwrap();
        assert!(
            text.contains("const uint32_t TILE_LENGTH = 8192;"),
            "{text}"
        );
        // The default device is the 910B2.
        let sites = MultiCore.detect(&pkg(host));
        let all = MultiCore.apply(&pkg(host), &sites[0]).unwrap();
        assert!(all
            .get("op_host/k.cpp")
            .unwrap()
            .contains("const uint32_t BLOCK_DIM = 48;"));
    }

    #[test]
    fn a_found_cube_base_block_is_no_tile_size_site() {
        let host = "namespace optiling {\nconstexpr uint32_t BASE_M = 64;\nconstexpr uint32_t TILE_LENGTH = 1024;\nstatic ge::graphStatus TilingFunc(gert::TilingContext* context)\n{\n    tiling.set_baseM(BASE_M);\n    tiling.set_tileLength(TILE_LENGTH);\n    context->SetBlockDim(8);\n    return ge::GRAPH_SUCCESS;\n}\n}\n";
        let sites = TileSize.detect(&pkg(host));
        assert!(!sites.is_empty());
        assert!(
            sites.iter().all(|s| !s.note.contains("BASE_M")),
            "{sites:#?}"
        );
    }

    #[test]
    fn packages_without_knobs_have_no_tiling_sites() {
        let p = pkg("int main() { return 0; }\n");
        assert!(MultiCore.detect(&p).is_empty());
        assert!(TileSize.detect(&p).is_empty());
    }
}
