//! Code features of a kernel: what a static look at the sources says it
//! has and lacks, as short phrases that bank entries' applicability
//! sentences name (`single-buffer`, `scalar-loop`, ...).
//!
//! A feature is derived from the motif engine's `detect`: a motif with an
//! `Absent` site (it could be applied) gives the phrase of what is missing;
//! one with only `Present` sites gives `has-<tag>`.

use ascendopt_motif::{registry, SiteState, Sources};

/// The phrase for "this kernel lacks motif `tag`", matched against
/// entries' `reuse_when` sentences (every word must occur in one).
pub fn lacking_phrase(tag: &str) -> &'static str {
    match tag {
        "double_buffer" => "single-buffer",
        "multi_core" => "one-core",
        "tile_size" => "small-tiles",
        "strided_copy" => "copy-loop",
        "fused_vec_ops" => "unfused-vector-ops",
        "hoist_invariant" => "loop-invariant",
        "barrier_elim" => "redundant-barrier",
        "count_mode" => "masked-tail",
        "tail_fold" => "separate-tail",
        "vectorize_scalar" => "scalar-loop",
        "buffer_reuse" => "separate-buffers",
        "staging_copy" => "staged-copy",
        "cube_double_buffer" => "single-buffered-cube-blocks",
        "l0c_accumulate" => "fixpipe-per-k-step",
        "block_order" => "other-block-orders-untried",
        "nz_hoist" => "nz-conversion-repeated-in-loop",
        "unit_flag" => "fixpipe-waits-for-whole-mmad",
        "tile_shape" => "small-cube-base-block",
        _ => "unknown-motif",
    }
}

/// Every code feature of `sources`, in registry order, without duplicates.
pub fn code_features(sources: &Sources) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for motif in registry() {
        let sites = motif.detect(sources);
        let feature = if sites.iter().any(|s| s.state == SiteState::Absent) {
            lacking_phrase(motif.tag()).to_string()
        } else if sites.iter().any(|s| s.state == SiteState::Present) {
            format!("has-{}", motif.tag().replace('_', "-"))
        } else {
            continue;
        };
        if !out.contains(&feature) {
            out.push(feature);
        }
    }
    out
}

/// Motif tags that could be applied to `sources` (an `Absent` site).
pub fn applicable_motifs(sources: &Sources) -> Vec<&'static str> {
    registry()
        .iter()
        .filter(|m| {
            m.detect(sources)
                .iter()
                .any(|s| s.state == SiteState::Absent)
        })
        .map(|m| m.tag())
        .collect()
}
