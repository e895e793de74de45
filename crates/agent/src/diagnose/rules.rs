//! The built-in, rule-based diagnoser.
//!
//! It reads the numbers of the profile (the slowest block's pipe busy
//! ratios, the block dim over the chip's cores, the spread of block times,
//! the roofline fraction), the code features of the sources and the
//! compiler's warnings, and fires the first of these rules that holds
//! (thresholds are constants below, each with its reason):
//!
//! | kind                    | rule                                                                                   | motifs                                     |
//! |-------------------------|----------------------------------------------------------------------------------------|--------------------------------------------|
//! | `cube_mte2_bound`       | the cube side does the work (below) and the AIC's MTE2 is its busiest pipe              | tile_shape, cube_double_buffer, nz_hoist, block_order, l0c_accumulate, unit_flag |
//! | `cube_bound`            | ... and PIPE_M (aic_cube_ratio) is the busiest                                          | unit_flag, cube_double_buffer, l0c_accumulate, tile_shape, block_order, nz_hoist |
//! | `cube_mte1_bound`       | ... and MTE1 (L1 -> L0) is the busiest                                                  | cube_double_buffer, tile_shape, nz_hoist, unit_flag, l0c_accumulate, block_order |
//! | `cube_fixpipe_bound`    | ... and the Fixpipe is the busiest                                                      | l0c_accumulate, unit_flag, tile_shape, cube_double_buffer, block_order, nz_hoist |
//! | `idle_cores`            | blocks used / cores < 0.5 and the work is not tiny                                      | multi_core                                 |
//! | `scalar_bound`          | scalar ratio ≥ 0.5 and above every data pipe                                           | vectorize_scalar, hoist_invariant, strided_copy |
//! | `sync_bound`            | no pipe is busy above 0.35 (the time goes to waits and barriers)                        | barrier_elim, double_buffer                |
//! | `small_copies`          | the kernel copies in a loop or uses small tiles, and MTE2 or MTE3 is the busiest pipe   | strided_copy, tile_size                    |
//! | `mte2_bound_no_overlap` | MTE2 is the busiest pipe and MTE2 + V + MTE3 ratios sum ≤ 1.15 (the pipes take turns)   | double_buffer, tile_size                   |
//! | `vector_long_chains`    | the vector pipe is the busiest                                                          | fused_vec_ops, buffer_reuse, count_mode    |
//! | `tail_imbalance`        | slowest block ≥ 1.3 × the mean block                                                    | tail_fold, count_mode                      |
//! | `below_roofline`        | none of the above, and the kernel reaches under 60% of its roofline                     | every applicable motif                     |
//! | `balanced`              | none of the above, at 60% of the roofline or more (or no roofline known)                | —                                          |
//!
//! The cube rules read the slowest `aic` block of the profile (msprof's
//! `aic_*` fields): the cube side does the work when the launch has AIC
//! blocks and the slowest one's busiest pipe (cube, MTE1, MTE2, FIX) is
//! at least as busy as the slowest AIV block's busiest (a Matmul API
//! kernel's AIVs mostly wait for their AI core). They come before every
//! other rule, and before the measured findings: the lines those name are
//! the AIV's or generic copy costs, while the remedy of a cube-bound
//! kernel is a cube motif.
//!
//! Otherwise, when the profile carries the simulator's per-line hotspots,
//! the measured findings ([`super::measured`]) come first: the diagnosis
//! is their sentences, naming the lines, and the table above only breaks
//! ties. The motifs of a diagnosis are the findings' and the fired rules'
//! motifs that the motif engine can apply to these sources (an `Absent`
//! site), then every other applicable motif: the diagnoser's own order,
//! used by Stage I when it has no experience to retrieve or the bank has
//! nothing left.

use super::{DiagnoseRequest, Diagnoser, Diagnosis};
use crate::features::{applicable_motifs, code_features, lacking_phrase};
use crate::ProposeError;
use ascendopt_bank::signature::ProfileSignature;
use ascendopt_device::Profile;

/// Block use below which cores count as idle (half of the chip: the
/// launch cost of the other half is small next to the halved span).
const IDLE_FRACTION: f64 = 0.5;
/// Scalar busy ratio from which the scalar unit is the bottleneck.
const SCALAR_BOUND: f64 = 0.5;
/// MTE2 + V + MTE3 busy ratios at most this: the pipes barely overlap
/// (perfect overlap of balanced stages gives up to 3).
const NO_OVERLAP_SUM: f64 = 1.15;
/// Slowest over mean block time from which the split is unbalanced.
const TAIL_SPREAD: f64 = 1.3;
/// Below this busy ratio on every pipe, time goes to waits.
const IDLE_PIPES: f64 = 0.35;
/// Core span below this many µs: the work is too small to spread.
const TINY_SPAN_US: f64 = 1.0;
/// Roofline share (%) below which a kernel no rule explains is not called
/// balanced.
const FAR_BELOW_ROOFLINE_PCT: f64 = 60.0;

/// The built-in diagnoser: one rule per bottleneck class, explained with
/// the numbers it saw.
#[derive(Debug, Clone, Default)]
pub struct RuleDiagnoser;

impl RuleDiagnoser {
    /// The diagnoser.
    pub fn new() -> RuleDiagnoser {
        RuleDiagnoser
    }
}

/// The numbers the rules look at.
#[derive(Debug, Clone, Default)]
struct Numbers {
    vec: f64,
    scalar: f64,
    mte2: f64,
    mte3: f64,
    cube: f64,
    blocks_fraction: Option<f64>,
    block_dim: f64,
    spread: f64,
    core_span_us: f64,
    roofline_pct: Option<f64>,
}

fn numbers(profile: &Profile, sig: &Option<ProfileSignature>) -> Numbers {
    let mut n = Numbers::default();
    if let Some(s) = sig {
        n.vec = s.vec_ratio.unwrap_or(0.0);
        n.scalar = s.scalar_ratio.unwrap_or(0.0);
        n.mte2 = s.mte2_ratio.unwrap_or(0.0);
        n.mte3 = s.mte3_ratio.unwrap_or(0.0);
        n.cube = s.cube_ratio.unwrap_or(0.0);
        n.blocks_fraction = s.blocks_used_fraction;
    }
    n.block_dim = f64::from(profile.block_dim);
    n.core_span_us = profile.core_span_us;
    n.roofline_pct = profile.roofline_reached_pct;
    let times: Vec<f64> = profile
        .blocks
        .iter()
        .filter_map(|b| {
            b.aiv
                .as_ref()
                .map(|f| f.time_us)
                .or_else(|| b.aic.as_ref().map(|f| f.time_us))
        })
        .collect();
    if !times.is_empty() {
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        let max = times.iter().copied().fold(0.0, f64::max);
        n.spread = if mean > 0.0 { max / mean } else { 1.0 };
    }
    n
}

/// One rule that held: kind, words, the rule with its numbers, motifs.
struct Fired {
    kind: &'static str,
    text: String,
    rule: String,
    motifs: &'static [&'static str],
}

/// The busy ratios of the slowest cube (AIC) block.
#[derive(Debug, Clone, Copy)]
struct CubeSide {
    cube: f64,
    mte1: f64,
    mte2: f64,
    fixpipe: f64,
}

/// The cube side of a launch, when it does the work (module header).
fn cube_side(profile: &Profile) -> Option<CubeSide> {
    let aic = profile
        .blocks
        .iter()
        .filter_map(|b| b.aic.as_ref())
        .max_by(|a, b| a.time_us.total_cmp(&b.time_us))?;
    let side = CubeSide {
        cube: aic.cube_ratio,
        mte1: aic.mte1_ratio,
        mte2: aic.mte2_ratio,
        fixpipe: aic.fixpipe_ratio,
    };
    let busiest = side.cube.max(side.mte1).max(side.mte2).max(side.fixpipe);
    if busiest <= 0.0 {
        return None;
    }
    let aiv = profile
        .blocks
        .iter()
        .filter_map(|b| b.aiv.as_ref())
        .max_by(|a, b| a.time_us.total_cmp(&b.time_us));
    if let Some(v) = aiv {
        let vector = v
            .vec_ratio
            .max(v.mte2_ratio)
            .max(v.mte3_ratio)
            .max(v.scalar_ratio);
        if vector > busiest {
            return None;
        }
    }
    Some(side)
}

/// The cube rule that holds for a cube side: its busiest pipe.
fn cube_rule(c: &CubeSide) -> Fired {
    let numbers = format!(
        "aic_mte2_ratio {:.2}, aic_cube_ratio {:.2}, aic_mte1_ratio {:.2}, aic_fixpipe_ratio {:.2}",
        c.mte2, c.cube, c.mte1, c.fixpipe
    );
    if c.mte2 >= c.cube.max(c.mte1).max(c.fixpipe) {
        Fired {
            kind: "cube_mte2_bound",
            text: "cube kernel bound by the AIC's MTE2: the GM -> L1 copies of the A and B blocks keep the cube waiting; small base blocks read A and B again for every block of C, in short copies, and a K loop without a second L1/L0 buffer serialises copies and Mmads".into(),
            rule: format!("the AIC's MTE2 is its busiest pipe ({numbers})"),
            motifs: &["tile_shape", "cube_double_buffer", "nz_hoist", "block_order", "l0c_accumulate", "unit_flag"],
        }
    } else if c.cube >= c.mte1.max(c.fixpipe) {
        Fired {
            kind: "cube_bound",
            text: "cube-bound: PIPE_M (Mmad) is the AIC's busiest pipe; what is left is overlap: the Fixpipe of a tile with the Mmads of the next (unitFlag), accumulation in L0C instead of partial sums through GM, copies hidden behind the cube by double buffering, fewer Mmad heads with larger base blocks".into(),
            rule: format!("PIPE_M is the AIC's busiest pipe ({numbers})"),
            motifs: &["unit_flag", "cube_double_buffer", "l0c_accumulate", "tile_shape", "block_order", "nz_hoist"],
        }
    } else if c.mte1 >= c.fixpipe {
        Fired {
            kind: "cube_mte1_bound",
            text: "cube kernel bound by MTE1: the L1 -> L0A/L0B loads wait for the Mmads they feed (one L0 buffer) or are repeated for small blocks".into(),
            rule: format!("MTE1 is the AIC's busiest pipe ({numbers})"),
            motifs: &["cube_double_buffer", "tile_shape", "nz_hoist", "unit_flag", "l0c_accumulate", "block_order"],
        }
    } else {
        Fired {
            kind: "cube_fixpipe_bound",
            text: "cube kernel bound by the Fixpipe: L0C is drained to GM more often than the result needs (a Fixpipe per K step) or the drain waits for the whole Mmad".into(),
            rule: format!("the Fixpipe is the AIC's busiest pipe ({numbers})"),
            motifs: &["l0c_accumulate", "unit_flag", "tile_shape", "cube_double_buffer", "block_order", "nz_hoist"],
        }
    }
}

fn rules(n: &Numbers, features: &[String]) -> Vec<Fired> {
    let has = |f: &str| features.iter().any(|x| x == f);
    let busiest = [n.vec, n.scalar, n.mte2, n.mte3, n.cube]
        .into_iter()
        .fold(0.0, f64::max);
    let mut out = Vec::new();
    if let Some(frac) = n.blocks_fraction {
        if frac < IDLE_FRACTION
            && (n.core_span_us >= TINY_SPAN_US || has(lacking_phrase("multi_core")))
        {
            out.push(Fired {
                kind: "idle_cores",
                text: "idle cores: only a few cores work (small block dim), the per-core span is long while most of the chip and the HBM bandwidth sit idle".into(),
                rule: format!(
                    "blocks used / cores = {frac:.2} < {IDLE_FRACTION} (Block Dim {:.0}, core span {:.2} us)",
                    n.block_dim, n.core_span_us
                ),
                motifs: &["multi_core"],
            });
        }
    }
    if n.scalar >= SCALAR_BOUND && n.scalar >= n.mte2.max(n.vec).max(n.mte3) {
        out.push(Fired {
            kind: "scalar_bound",
            text: "scalar-bound: the scalar unit issues element-wise work or address arithmetic in loops; vector and copy pipes wait on it".into(),
            rule: format!(
                "scalar ratio {:.2} >= {SCALAR_BOUND} and above vec {:.2}, mte2 {:.2}, mte3 {:.2}",
                n.scalar, n.vec, n.mte2, n.mte3
            ),
            motifs: &["vectorize_scalar", "hoist_invariant", "strided_copy"],
        });
    }
    if busiest < IDLE_PIPES {
        out.push(Fired {
            kind: "sync_bound",
            text: "synchronisation-bound: no pipe is busy, time goes to waits, barriers and serialised stages".into(),
            rule: format!("busiest pipe ratio {busiest:.2} < {IDLE_PIPES}"),
            motifs: &["barrier_elim", "double_buffer"],
        });
    }
    let copy_busiest = busiest > 0.0 && (n.mte2 >= busiest || n.mte3 >= busiest);
    let small = has(lacking_phrase("strided_copy")) || has(lacking_phrase("tile_size"));
    if copy_busiest && small {
        out.push(Fired {
            kind: "small_copies",
            text: "small copies: many small DataCopy calls each pay the fixed GM round trip; MTE2/MTE3 bandwidth stays far below the per-core peak".into(),
            rule: format!(
                "busiest pipe is a copy pipe (mte2 {:.2}, mte3 {:.2}) and the code has {}",
                n.mte2,
                n.mte3,
                features
                    .iter()
                    .filter(|f| *f == lacking_phrase("strided_copy") || *f == lacking_phrase("tile_size"))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            motifs: &["strided_copy", "tile_size"],
        });
    }
    let sum = n.mte2 + n.vec + n.mte3;
    if n.mte2 >= busiest && n.mte2 > 0.0 && sum <= NO_OVERLAP_SUM {
        out.push(Fired {
            kind: "mte2_bound_no_overlap",
            text: "MTE2-bound without overlap: copy-in, compute and copy-out of successive tiles run one after another, the pipes wait for each other".into(),
            rule: format!(
                "mte2 ratio {:.2} is the busiest and mte2 + vec + mte3 = {sum:.2} <= {NO_OVERLAP_SUM}",
                n.mte2
            ),
            motifs: &["double_buffer", "tile_size"],
        });
    }
    if n.vec >= busiest && n.vec > 0.0 {
        out.push(Fired {
            kind: "vector_long_chains",
            text: "vector-bound with long op chains: many separate vector instructions each pass over UB; intermediate buffers and repeated passes dominate".into(),
            rule: format!("vec ratio {:.2} is the busiest pipe", n.vec),
            motifs: &["fused_vec_ops", "buffer_reuse", "count_mode"],
        });
    }
    if n.spread >= TAIL_SPREAD {
        out.push(Fired {
            kind: "tail_imbalance",
            text:
                "tail imbalance: the last tile or the tail cores take much longer than the others"
                    .into(),
            rule: format!(
                "slowest block / mean block = {:.2} >= {TAIL_SPREAD}",
                n.spread
            ),
            motifs: &["tail_fold", "count_mode"],
        });
    }
    out
}

impl Diagnoser for RuleDiagnoser {
    fn name(&self) -> &str {
        "rules"
    }

    fn diagnose(&mut self, req: &DiagnoseRequest<'_>) -> Result<Diagnosis, ProposeError> {
        let signature = ProfileSignature::from_profile(req.profile).ok();
        let n = numbers(req.profile, &signature);
        let features = code_features(req.sources);
        let applicable = applicable_motifs(req.sources);
        let fired = rules(&n, &features);
        let warnings = req
            .compiler_diagnostics
            .lines()
            .filter(|l| l.contains("warning"))
            .count();
        let measured = super::measured::findings(req.profile, req.sources);
        let cube = cube_side(req.profile).map(|c| cube_rule(&c));
        let mut motifs: Vec<String> = Vec::new();
        let named = cube
            .iter()
            .flat_map(|f| f.motifs.iter())
            .chain(measured.iter().flat_map(|f| f.motifs.iter()))
            .chain(fired.iter().flat_map(|f| f.motifs.iter()));
        for m in named {
            if applicable.contains(m) && !motifs.iter().any(|x| x == m) {
                motifs.push((*m).to_string());
            }
        }
        // Every other motif the engine can apply comes after: without
        // experience (or once the bank has nothing left) Stage I still
        // reaches them.
        for m in &applicable {
            if !motifs.iter().any(|x| x == m) {
                motifs.push((*m).to_string());
            }
        }
        let roofline = n
            .roofline_pct
            .map(|p| format!("; roofline reached {p:.1}%"))
            .unwrap_or_default();
        let warn = if warnings > 0 {
            format!("; {warnings} compiler warning(s)")
        } else {
            String::new()
        };
        if let Some(c) = cube {
            // The measured lines follow the cube sentence.
            let mut text = vec![c.text.clone()];
            text.extend(measured.iter().take(2).map(|f| f.sentence.clone()));
            let weights: Vec<String> = measured
                .iter()
                .map(|f| format!("{} {:.2}", f.kind, f.weight))
                .collect();
            let also = if weights.is_empty() {
                String::new()
            } else {
                format!(
                    "; measured (slowest block, by source line): {}",
                    weights.join(", ")
                )
            };
            return Ok(Diagnosis {
                kind: c.kind.to_string(),
                text: text.join("; "),
                rule: format!("{}: {}{also}{roofline}{warn}", c.kind, c.rule),
                signature,
                code_features: features,
                motifs,
            });
        }
        if let Some(top) = measured.first() {
            let text: Vec<String> = measured
                .iter()
                .take(3)
                .map(|f| f.sentence.clone())
                .collect();
            let weights: Vec<String> = measured
                .iter()
                .map(|f| format!("{} {:.2}", f.kind, f.weight))
                .collect();
            return Ok(Diagnosis {
                kind: top.kind.to_string(),
                text: text.join("; "),
                rule: format!(
                    "measured (slowest block, by source line): {}{roofline}{warn}",
                    weights.join(", ")
                ),
                signature,
                code_features: features,
                motifs,
            });
        }
        let diagnosis = match fired.first() {
            Some(f) => Diagnosis {
                kind: f.kind.to_string(),
                text: f.text.clone(),
                rule: format!("{}: {}{roofline}{warn}", f.kind, f.rule),
                signature,
                code_features: features,
                motifs,
            },
            // A kernel far below its roofline is not balanced, whatever
            // the pipe ratios say: the time goes somewhere no rule names.
            None if n.roofline_pct.is_some_and(|p| p < FAR_BELOW_ROOFLINE_PCT) => Diagnosis {
                kind: "below_roofline".into(),
                text: format!(
                    "below the roofline: the kernel reaches {:.0}% of its roofline with no single pipe dominating (vec {:.2}, scalar {:.2}, mte2 {:.2}, mte3 {:.2}); the time goes to waits, fixed copy costs and serialised stages",
                    n.roofline_pct.unwrap_or_default(),
                    n.vec, n.scalar, n.mte2, n.mte3
                ),
                rule: format!(
                    "below_roofline: no rule held and roofline reached < {FAR_BELOW_ROOFLINE_PCT}% (vec {:.2}, scalar {:.2}, mte2 {:.2}, mte3 {:.2}, blocks {:.0}, spread {:.2}){roofline}{warn}",
                    n.vec, n.scalar, n.mte2, n.mte3, n.block_dim, n.spread
                ),
                signature,
                code_features: features,
                motifs,
            },
            None => Diagnosis {
                kind: "balanced".into(),
                text: "balanced: no single pipe or resource dominates; remaining gains are in the tiling".into(),
                rule: format!(
                    "balanced: no rule held (vec {:.2}, scalar {:.2}, mte2 {:.2}, mte3 {:.2}, blocks {:.0}, spread {:.2}){roofline}{warn}",
                    n.vec, n.scalar, n.mte2, n.mte3, n.block_dim, n.spread
                ),
                signature,
                code_features: features,
                motifs,
            },
        };
        Ok(diagnosis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_motif::Sources;
    use serde_json::{json, Value};

    fn profile(block_dim: u32, vec: f64, scalar: f64, mte2: f64, mte3: f64) -> Profile {
        let blocks: Vec<Value> = (0..block_dim)
            .map(|i| {
                json!({"block_id": i, "core_type": "aiv", "aiv_time(us)": 10.0,
                "aiv_vec_ratio": vec, "aiv_scalar_ratio": scalar,
                "aiv_mte2_ratio": mte2, "aiv_mte3_ratio": mte3})
            })
            .collect();
        serde_json::from_value(json!({"Soc Version": "Ascend910B2", "Op Type": "vector",
               "Block Dim": block_dim, "cores": 48, "core_span(us)": 10.0, "blocks": blocks,
               "roofline_reached(%)": 30.0}))
        .unwrap()
    }

    const HOST: &str = "namespace {\n// ascendopt:tiling-begin\nconstexpr uint32_t TILE_BYTES = 32768;      // ascendopt:knob min=1024 max=65536 step=pow2\nconstexpr uint32_t BUFFER_NUM = 1;          // ascendopt:knob choices=1,2\nconstexpr uint32_t MAX_CORE_NUM = 8;       // ascendopt:knob min=1 max=48 step=1\n// ascendopt:tiling-end\n}\n";

    fn diagnose(p: &Profile) -> Diagnosis {
        let src = Sources::from_files([("op_host/k.cpp", HOST), ("op_kernel/k.cpp", "int k;\n")]);
        RuleDiagnoser::new()
            .diagnose(&DiagnoseRequest {
                sources: &src,
                op: "k",
                profile: p,
                compiler_diagnostics: "",
            })
            .unwrap()
    }

    #[test]
    fn few_blocks_are_idle_cores_with_the_numbers_in_the_rule() {
        let d = diagnose(&profile(8, 0.1, 0.1, 0.6, 0.3));
        assert_eq!(d.kind, "idle_cores");
        assert!(d.rule.contains("Block Dim 8"), "{}", d.rule);
        assert_eq!(d.motifs.first().map(String::as_str), Some("multi_core"));
        assert!(
            d.motifs.iter().any(|m| m == "double_buffer"),
            "{:?}",
            d.motifs
        );
        assert!(d.signature.is_some());
        assert!(d.code_features.iter().any(|f| f == "single-buffer"));
    }

    #[test]
    fn serial_copy_pipes_on_all_cores_are_mte2_bound_without_overlap() {
        let d = diagnose(&profile(48, 0.1, 0.1, 0.6, 0.3));
        assert_eq!(d.kind, "mte2_bound_no_overlap", "{}", d.rule);
        assert!(d.rule.contains("1.00"), "{}", d.rule);
        assert_eq!(d.motifs.first().map(String::as_str), Some("double_buffer"));
    }

    #[test]
    fn a_busy_scalar_unit_is_scalar_bound_and_a_busy_vector_pipe_long_chains() {
        assert_eq!(
            diagnose(&profile(48, 0.1, 0.8, 0.3, 0.2)).kind,
            "scalar_bound"
        );
        assert_eq!(
            diagnose(&profile(48, 0.9, 0.1, 0.3, 0.2)).kind,
            "vector_long_chains"
        );
        let quiet = diagnose(&profile(48, 0.1, 0.1, 0.2, 0.2));
        assert_eq!(quiet.kind, "sync_bound", "{}", quiet.rule);
    }

    #[test]
    fn a_kernel_far_below_its_roofline_is_not_called_balanced() {
        // The copy-out pipe busiest, overlapping pipes, every core: no
        // rule holds.
        let mut p = profile(48, 0.5, 0.1, 0.5, 0.6);
        let low = diagnose(&p);
        assert_eq!(low.kind, "below_roofline", "{}", low.rule);
        assert!(low.text.contains("30% of its roofline"), "{}", low.text);
        p.roofline_reached_pct = Some(90.0);
        let high = diagnose(&p);
        assert_eq!(high.kind, "balanced", "{}", high.rule);
    }

    /// A profile of `aic` blocks (and `aiv` blocks with the given vector
    /// and MTE2 ratios) on 24 cube cores.
    fn cube_profile(cube: f64, mte1: f64, mte2: f64, fix: f64, aiv: Option<(f64, f64)>) -> Profile {
        let mut blocks: Vec<Value> = (0..24)
            .map(|i| {
                json!({"block_id": i, "core_type": "aic", "aic_time(us)": 20.0,
                "aic_cube_ratio": cube, "aic_mte1_ratio": mte1, "aic_mte2_ratio": mte2,
                "aic_fixpipe_ratio": fix, "aic_scalar_ratio": 0.05})
            })
            .collect();
        if let Some((vec, mte2)) = aiv {
            blocks.extend((0..48).map(|i| {
                json!({"block_id": i, "core_type": "aiv", "aiv_time(us)": 20.0,
                "aiv_vec_ratio": vec, "aiv_scalar_ratio": 0.05,
                "aiv_mte2_ratio": mte2, "aiv_mte3_ratio": 0.05})
            }));
        }
        serde_json::from_value(json!({"Soc Version": "Ascend910B2", "Op Type": "cube",
               "Block Dim": 24, "cores": 24, "core_span(us)": 20.0, "blocks": blocks,
               "roofline_reached(%)": 30.0}))
        .unwrap()
    }

    fn cube_diagnosis(p: &Profile) -> Diagnosis {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../motif/tests/fixtures/matmul_block64");
        let src = Sources::load(&dir).unwrap();
        RuleDiagnoser::new()
            .diagnose(&DiagnoseRequest {
                sources: &src,
                op: "matmul_block64",
                profile: p,
                compiler_diagnostics: "",
            })
            .unwrap()
    }

    #[test]
    fn a_cube_kernel_bound_by_its_copies_points_at_the_cube_motifs() {
        let d = cube_diagnosis(&cube_profile(0.2, 0.1, 0.8, 0.05, None));
        assert_eq!(d.kind, "cube_mte2_bound", "{}", d.rule);
        assert!(d.rule.contains("aic_mte2_ratio 0.80"), "{}", d.rule);
        // The fixture's small block and its single L0C buffer are what
        // the engine can change; tile_shape leads.
        assert_eq!(
            d.motifs.first().map(String::as_str),
            Some("tile_shape"),
            "{:?}",
            d.motifs
        );
        assert!(d.code_features.iter().any(|f| f == "small-cube-base-block"));
        // A busy cube points at overlap first.
        let busy = cube_diagnosis(&cube_profile(0.9, 0.2, 0.5, 0.1, None));
        assert_eq!(busy.kind, "cube_bound", "{}", busy.rule);
        let fix = cube_diagnosis(&cube_profile(0.1, 0.1, 0.2, 0.6, None));
        assert_eq!(fix.kind, "cube_fixpipe_bound", "{}", fix.rule);
        // AIVs busier than the AIC: the vector rules decide.
        let mix = cube_diagnosis(&cube_profile(0.2, 0.1, 0.3, 0.05, Some((0.9, 0.2))));
        assert!(!mix.kind.starts_with("cube"), "{}", mix.rule);
        // AIVs that wait for their AI core (a Matmul API kernel): cube.
        let api = cube_diagnosis(&cube_profile(0.2, 0.1, 0.7, 0.05, Some((0.02, 0.01))));
        assert_eq!(api.kind, "cube_mte2_bound", "{}", api.rule);
    }
}
