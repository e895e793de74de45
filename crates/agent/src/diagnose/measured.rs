//! Diagnosis from the measurement: what the slowest block spends its time
//! on, by kernel source line.
//!
//! A profile may carry `hotspots` (`ascendopt_device::Hotspots`: the
//! slowest block's cost per API call site: pipe busy time, waits, scalar
//! time, copy sizes and the fixed share of copy time, GM data read twice,
//! UB touched; the simulator device attaches them). [`findings`] turns them into
//! sentences that name lines, each weighed by the share of the block's
//! time it explains and pointing at the motifs that address it:
//!
//! | finding        | when                                                        | motifs |
//! |----------------|-------------------------------------------------------------|--------|
//! | `idle_cores`   | block dim below half the vector cores                         | multi_core |
//! | `barriers`     | `PIPE_ALL` barriers hold the pipes ≥ 3% of the block time      | barrier_elim |
//! | `scalar_loop`  | scalar accesses (`GetValue`/`SetValue`) ≥ 5% of the block time | vectorize_scalar |
//! | `small_copies` | copies under 16 KB whose fixed cost is ≥ 25% of their time     | tile_size, strided_copy, double_buffer |
//! | `gm_reread`    | one block reads the same GM data ≥ 1.5 times                  | hoist_invariant, staging_copy |
//! | `no_overlap`   | MTE2 + V + MTE3 busy ≤ 1.15 of the block time                 | double_buffer, barrier_elim |
//! | `vector_bound` | vector busy ≥ 40% of the block time                          | fused_vec_ops, staging_copy, buffer_reuse, count_mode |
//! | `ub_unused`    | the block touches under an eighth of its UB                  | tile_size |
//!
//! The diagnosis text is the heaviest findings' sentences, so the bank's
//! retrieval query and an LLM proposer's prompt name the same lines.

use ascendopt_device::{LineCost, Profile};
use ascendopt_motif::Sources;

/// Copies below this many bytes are small (the guide's 16 KB [H 6]).
const SMALL_COPY_BYTES: f64 = 16.0 * 1024.0;
/// Fixed share of copy time from which copies are too small.
const FIXED_SHARE: f64 = 0.25;
/// Barrier wait share worth naming.
const BARRIER_SHARE: f64 = 0.03;
/// Scalar share worth naming.
const SCALAR_SHARE: f64 = 0.05;
/// Sum of the copy and vector busy ratios at most this: the pipes take
/// turns.
const NO_OVERLAP_SUM: f64 = 1.15;
/// Vector busy share from which the vector pipe bounds the block.
const VECTOR_SHARE: f64 = 0.4;

/// One thing the measurement shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Stable class.
    pub kind: &'static str,
    /// Share of the block's time it explains (0..1), for the order.
    pub weight: f64,
    /// The sentence, with lines and numbers.
    pub sentence: String,
    /// Motifs that address it, best first.
    pub motifs: &'static [&'static str],
}

#[derive(Debug, Clone, Default)]
struct Line {
    file: String,
    line: u64,
    api: String,
    kind: String,
    pipe: String,
    count: u64,
    busy: f64,
    wait: f64,
    scalar: f64,
    mean_bytes: f64,
    fixed: f64,
}

impl Line {
    fn of(l: &LineCost) -> Line {
        Line {
            file: l.file.clone(),
            line: u64::from(l.line),
            api: l.api.clone(),
            kind: l.kind.clone(),
            pipe: l.pipe.clone(),
            count: l.count,
            busy: l.busy_share,
            wait: l.wait_share,
            scalar: l.scalar_share,
            mean_bytes: l.mean_bytes,
            fixed: l.fixed_share,
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", (x * 100.0).clamp(0.0, 100.0))
}

fn kb(bytes: f64) -> String {
    if bytes >= 1024.0 {
        format!("{:.1} KB", bytes / 1024.0)
    } else {
        format!("{bytes:.0} B")
    }
}

/// `op_kernel/x.cpp:34, :36, :38` for lines of one file (sorted).
fn where_(lines: &[&Line]) -> String {
    let mut sorted: Vec<&&Line> = lines.iter().collect();
    sorted.sort_by_key(|l| (l.file.clone(), l.line));
    let mut out = String::new();
    let mut last_file = "";
    for (i, l) in sorted.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if l.file != last_file {
            out.push_str(&format!("{}:{}", l.file, l.line));
            last_file = &l.file;
        } else {
            out.push_str(&format!(":{}", l.line));
        }
    }
    out
}

fn pipe_word(pipe: &str) -> &str {
    pipe.strip_prefix("PIPE_").unwrap_or(pipe)
}

/// The names of the package's tensors by GM allocation index (inputs then
/// outputs), when the sources come from a package on disk.
fn tensor_names(sources: &Sources) -> Vec<String> {
    let Some(dir) = sources.origin() else {
        return Vec::new();
    };
    match ascendopt_op::package::OpPackage::load(dir, &ascendopt_golden::BUILTINS) {
        Ok(p) => p
            .spec
            .inputs
            .iter()
            .map(|t| t.name.clone())
            .chain(p.spec.outputs.iter().map(|t| t.name.clone()))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The findings of a profile with hotspots, heaviest first (empty when the
/// profile has none).
pub fn findings(profile: &Profile, sources: &Sources) -> Vec<Finding> {
    let Some(h) = profile.hotspots.as_ref() else {
        return Vec::new();
    };
    let lines: Vec<Line> = h.lines.iter().map(Line::of).collect();
    let block_us = h.block_us;
    let block_dim = f64::from(h.block_dim);
    let cores = f64::from(h.cores).max(1.0);
    let ub = (h.ub_bytes as f64).max(1.0);
    let ub_touched = h.ub_touched_bytes as f64;
    let mut out = Vec::new();

    if block_dim > 0.0 && block_dim < cores / 2.0 && block_us >= 1.0 {
        out.push(Finding {
            kind: "idle_cores",
            weight: (1.0 - block_dim / cores) * 0.9,
            sentence: format!(
                "only {block_dim:.0} of {cores:.0} vector cores work (Block Dim {block_dim:.0}): each core's span is {block_us:.1} us while {:.0} cores idle",
                cores - block_dim
            ),
            motifs: &["multi_core"],
        });
    }

    let barriers: Vec<&Line> = lines
        .iter()
        .filter(|l| l.kind == "barrier" && l.pipe == "PIPE_ALL")
        .collect();
    let barrier_wait: f64 = barriers.iter().map(|l| l.wait).sum();
    if barrier_wait >= BARRIER_SHARE {
        out.push(Finding {
            kind: "barriers",
            weight: barrier_wait.min(1.0),
            sentence: format!(
                "PIPE_ALL barriers at {} stall the block for {} of its time: each drains MTE2, V and MTE3, so no copy overlaps compute (a removal is kept only if the hazard checker stays clean)",
                where_(&barriers),
                pct(barrier_wait)
            ),
            motifs: &["barrier_elim"],
        });
    }

    // Scalar accesses, grouped into line ranges of one file.
    let mut scalar: Vec<&Line> = lines
        .iter()
        .filter(|l| l.kind == "scalar" && l.scalar > 0.005)
        .collect();
    scalar.sort_by_key(|l| (l.file.clone(), l.line));
    let mut ranges: Vec<(String, u64, u64, f64, u64, Vec<String>)> = Vec::new();
    for l in scalar {
        match ranges.last_mut() {
            Some(r) if r.0 == l.file && l.line <= r.2 + 6 => {
                r.2 = l.line;
                r.3 += l.scalar;
                r.4 += l.count;
                if !r.5.contains(&l.api) {
                    r.5.push(l.api.clone());
                }
            }
            _ => ranges.push((
                l.file.clone(),
                l.line,
                l.line,
                l.scalar,
                l.count,
                vec![l.api.clone()],
            )),
        }
    }
    for (file, a, b, share, count, apis) in ranges {
        if share < SCALAR_SHARE {
            continue;
        }
        let at = if a == b {
            format!("{file}:{a}")
        } else {
            format!("{file}:{a}-{b}")
        };
        out.push(Finding {
            kind: "scalar_loop",
            weight: share.min(1.0),
            sentence: format!(
                "scalar loop at {at} ({}: {count} scalar accesses) is {} of the block time",
                apis.join(", "),
                pct(share)
            ),
            motifs: &["vectorize_scalar"],
        });
    }

    let copies: Vec<&Line> = lines
        .iter()
        .filter(|l| {
            l.kind == "dma"
                && l.mean_bytes > 0.0
                && l.mean_bytes < SMALL_COPY_BYTES
                && l.fixed >= FIXED_SHARE
                && l.busy >= 0.02
        })
        .collect();
    if let Some(worst) = copies
        .iter()
        .max_by(|a, b| (a.busy * a.fixed).total_cmp(&(b.busy * b.fixed)))
    {
        let busy: f64 = copies.iter().map(|l| l.busy).sum();
        let others = if copies.len() > 1 {
            format!(" (small copies also at {})", where_(&copies))
        } else {
            String::new()
        };
        out.push(Finding {
            kind: "small_copies",
            weight: (busy * worst.fixed).min(1.0),
            sentence: format!(
                "{} issues {} copies at {}:{} ({} copies, {} of the block time); {} of the copy time is fixed cost{others}",
                pipe_word(&worst.pipe),
                kb(worst.mean_bytes),
                worst.file,
                worst.line,
                worst.count,
                pct(worst.busy),
                pct(worst.fixed)
            ),
            motifs: &["tile_size", "strided_copy", "double_buffer"],
        });
    }

    if !h.rereads.is_empty() {
        let names = tensor_names(sources);
        for r in &h.rereads {
            let space = r.space as usize;
            let covered = (r.covered_bytes as f64).max(1.0);
            let read = r.read_bytes as f64;
            let sites: Vec<Line> = r
                .sites
                .iter()
                .map(|(file, line, _)| Line {
                    file: file.clone(),
                    line: u64::from(*line),
                    ..Line::default()
                })
                .collect();
            let refs: Vec<&Line> = sites.iter().collect();
            let copy_share: f64 = lines
                .iter()
                .filter(|l| {
                    l.kind == "dma" && sites.iter().any(|s| s.file == l.file && s.line == l.line)
                })
                .map(|l| l.busy)
                .sum();
            let name = names
                .get(space)
                .map(|n| format!("{n} (GM #{space})"))
                .unwrap_or_else(|| format!("GM allocation #{space}"));
            out.push(Finding {
                kind: "gm_reread",
                weight: (copy_share * (1.0 - covered / read.max(covered))).min(1.0),
                sentence: format!(
                    "{name} is read {:.1} times by one block ({} of {}) at {}",
                    read / covered,
                    kb(read),
                    kb(covered),
                    where_(&refs)
                ),
                motifs: &["hoist_invariant", "staging_copy"],
            });
        }
    }

    // Pipe overlap and the vector pipe, from the busy ratios of the
    // slowest block.
    let busy_of = |pipe: &str| -> f64 {
        lines
            .iter()
            .filter(|l| l.pipe == pipe && (l.kind == "dma" || l.kind == "vector"))
            .map(|l| l.busy)
            .sum::<f64>()
            .min(1.0)
    };
    let (mte2, vec, mte3) = (
        busy_of("PIPE_MTE2"),
        busy_of("PIPE_V"),
        busy_of("PIPE_MTE3"),
    );
    let sum = mte2 + vec + mte3;
    let top = mte2.max(vec).max(mte3);
    if sum > 0.3 && sum <= NO_OVERLAP_SUM && top < 0.9 {
        out.push(Finding {
            kind: "no_overlap",
            weight: (1.0 - top).max(0.0) * 0.5,
            sentence: format!(
                "MTE2 ({}), V ({}) and MTE3 ({}) take turns: their busy times add up to {} of the block, so copies never overlap compute",
                pct(mte2),
                pct(vec),
                pct(mte3),
                pct(sum)
            ),
            motifs: &["double_buffer", "barrier_elim"],
        });
    }
    if vec >= VECTOR_SHARE {
        let mut v: Vec<&Line> = lines.iter().filter(|l| l.kind == "vector").collect();
        v.sort_by(|a, b| b.busy.total_cmp(&a.busy));
        let top: Vec<String> = v
            .iter()
            .take(4)
            .map(|l| format!("{} at {}:{} ({})", l.api, l.file, l.line, pct(l.busy)))
            .collect();
        out.push(Finding {
            kind: "vector_bound",
            weight: vec * 0.3,
            sentence: format!(
                "the vector pipe is busy {} of the block time: {}",
                pct(vec),
                top.join(", ")
            ),
            motifs: &[
                "fused_vec_ops",
                "staging_copy",
                "buffer_reuse",
                "count_mode",
            ],
        });
    }
    let small_dma = lines
        .iter()
        .any(|l| l.kind == "dma" && l.mean_bytes > 0.0 && l.mean_bytes < SMALL_COPY_BYTES);
    if ub_touched > 0.0 && ub_touched < ub / 8.0 && small_dma {
        out.push(Finding {
            kind: "ub_unused",
            weight: 0.15,
            sentence: format!(
                "the block touches {} of its {} UB: tiles could be {:.0} times larger",
                kb(ub_touched),
                kb(ub),
                (ub / ub_touched / 2.0).floor().max(2.0)
            ),
            motifs: &["tile_size"],
        });
    }
    out.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_device::{GmReread, Hotspots};

    #[test]
    fn hotspots_become_sentences_that_name_lines() {
        let line = |line: u32, api: &str, kind: &str, pipe: &str, count: u64, shares: [f64; 5]| {
            let [busy_share, wait_share, scalar_share, mean_bytes, fixed_share] = shares;
            LineCost {
                file: "op_kernel/k.cpp".into(),
                line,
                api: api.into(),
                kind: kind.into(),
                pipe: pipe.into(),
                count,
                busy_us: busy_share * 40.0,
                wait_us: wait_share * 40.0,
                scalar_us: scalar_share * 40.0,
                busy_share,
                wait_share,
                scalar_share,
                bytes: (mean_bytes * count as f64) as u64,
                mean_bytes,
                fixed_share,
            }
        };
        let profile = Profile {
            hotspots: Some(Hotspots {
                block: 0,
                block_us: 40.0,
                block_dim: 8,
                cores: 48,
                ub_bytes: 196608,
                ub_touched_bytes: 6144,
                lines: vec![
                    line(
                        34,
                        "PipeBarrier",
                        "barrier",
                        "PIPE_ALL",
                        100,
                        [0.0, 0.2, 0.01, 0.0, 0.0],
                    ),
                    line(
                        36,
                        "PipeBarrier",
                        "barrier",
                        "PIPE_ALL",
                        100,
                        [0.0, 0.15, 0.01, 0.0, 0.0],
                    ),
                    line(
                        55,
                        "DataCopy",
                        "dma",
                        "PIPE_MTE2",
                        512,
                        [0.3, 0.0, 0.01, 2048.0, 0.6],
                    ),
                    line(
                        44,
                        "GetValue",
                        "scalar",
                        "PIPE_S",
                        1000,
                        [0.0, 0.0, 0.1, 0.0, 0.0],
                    ),
                    line(
                        46,
                        "SetValue",
                        "scalar",
                        "PIPE_S",
                        500,
                        [0.0, 0.0, 0.05, 0.0, 0.0],
                    ),
                ],
                rereads: vec![GmReread {
                    space: 0,
                    covered_bytes: 65536,
                    read_bytes: 131072,
                    sites: vec![
                        ("op_kernel/k.cpp".into(), 55, 65536),
                        ("op_kernel/k.cpp".into(), 90, 65536),
                    ],
                }],
            }),
            ..Profile::default()
        };
        let src = Sources::from_files([("op_kernel/k.cpp", "int k;\n")]);
        let all = findings(&profile, &src);
        let kinds: Vec<&str> = all.iter().map(|f| f.kind).collect();
        assert_eq!(kinds[0], "idle_cores", "{all:#?}");
        let text = |k: &str| all.iter().find(|f| f.kind == k).unwrap().sentence.clone();
        assert!(
            text("barriers").contains("op_kernel/k.cpp:34, :36"),
            "{}",
            text("barriers")
        );
        assert!(text("barriers").contains("35%"), "{}", text("barriers"));
        assert!(text("small_copies").starts_with("MTE2 issues 2.0 KB copies at op_kernel/k.cpp:55 (512 copies, 30% of the block time); 60% of the copy time is fixed cost"), "{}", text("small_copies"));
        assert!(text("scalar_loop").starts_with("scalar loop at op_kernel/k.cpp:44-46 (GetValue, SetValue: 1500 scalar accesses) is 15%"), "{}", text("scalar_loop"));
        assert!(
            text("gm_reread").contains("read 2.0 times")
                && text("gm_reread").contains("op_kernel/k.cpp:55, :90"),
            "{}",
            text("gm_reread")
        );
        assert!(
            text("ub_unused").contains("6.0 KB of its 192.0 KB"),
            "{}",
            text("ub_unused")
        );
    }
}
