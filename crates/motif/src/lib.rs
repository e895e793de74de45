//! The built-in motif engine: deterministic source transformations of
//! AscendC operator packages, one per optimisation motif, each in two
//! directions.
//!
//! - `remove` (strong → weak): take a kernel that has the optimisation and
//!   take exactly that optimisation out, keeping the semantics. Rewind uses
//!   it to make verified bad → good pairs.
//! - `apply` (weak → strong): put the optimisation into a kernel that lacks
//!   it. Stage I uses it as a proposer.
//! - `detect`: where a motif is present (removable) or absent but
//!   applicable, for code features and diagnosis.
//!
//! Sources are parsed with tree-sitter-cpp and rewritten by byte ranges;
//! tiling knobs are read with `ascendopt_op::tiling` (the same parser as
//! Stage II). A motif declines (`None`) when a package does not have the
//! shape it needs; a transformation it does produce still has to pass the
//! harness (compile, correctness, latency), which is the judge.
//!
//! ```no_run
//! use ascendopt_motif::{registry, Sources, SiteState};
//! let pkg = Sources::load(std::path::Path::new("ops/add_custom")).unwrap();
//! for motif in registry() {
//!     for site in motif.detect(&pkg) {
//!         if site.state == SiteState::Present {
//!             if let Some(weak) = motif.remove(&pkg, &site) {
//!                 println!("{}", ascendopt_motif::diff(&weak, &pkg));
//!             }
//!         }
//!     }
//! }
//! ```
//!
//! [`knobfind`] finds the tiling knobs of host code nobody annotated (the
//! static part; the method confirms them on a device).
//!
//! Invariants: the engine does no IO besides [`Sources::load`] and
//! [`Sources::write_to`]; the same input always gives the same output. It
//! knows nothing of devices, the harness or the method: it never judges a
//! rewrite.
#![deny(missing_docs)]

mod barrier;
mod block_order;
mod count_mode;
mod cube_buffer;
mod diff;
mod fuse;
mod hoist;
pub mod knobfind;
mod knobs;
mod l0c_accum;
mod load_once;
mod nz_hoist;
mod one_pass;
mod reuse;
mod row_copy;
mod scalar;
mod scalar_loop;
mod sources;
mod staging;
mod strided;
pub(crate) mod syntax;
mod tail;
mod tile_shape;
mod unit_flag;

pub use diff::{diff, file_diff};
pub use sources::Sources;

use std::path::PathBuf;

/// Errors of the engine's file handling (the transformations themselves
/// never fail: they decline).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MotifError {
    /// A file or folder could not be read or written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The folder has no C++ sources under op_host/ or op_kernel/.
    #[error("{}: no C++ sources under op_host/ or op_kernel/", dir.display())]
    NoSources {
        /// The folder.
        dir: PathBuf,
    },
    /// A write outside the candidate's sources was refused.
    #[error("{0}")]
    Outside(String),
}

/// What a motif is about, for bank entries and retrieval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MotifInfo {
    /// One line: the optimisation (the apply direction).
    pub title: &'static str,
    /// The bottleneck it addresses.
    pub bottleneck: &'static str,
    /// When to reuse it.
    pub reuse_when: &'static str,
    /// When not to.
    pub avoid_when: &'static str,
    /// The expected effect.
    pub expected_effect: &'static str,
    /// Retrieval keywords.
    pub keywords: &'static [&'static str],
}

/// Whether a site has the optimisation or lacks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiteState {
    /// The optimisation is there: `remove` applies.
    Present,
    /// The optimisation is missing: `apply` applies.
    Absent,
}

/// One place in a package where a motif is present or applicable. A site
/// is a handle into the [`Sources`] it was detected in: pass it back to
/// `remove`/`apply` with the same sources.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Site {
    /// The motif's tag.
    pub motif: &'static str,
    /// The file (relative to the package).
    pub file: String,
    /// 1-based line of the anchor.
    pub line: usize,
    /// Byte range of the anchor in the file.
    pub span: (usize, usize),
    /// Present or absent.
    pub state: SiteState,
    /// What is there, in words (`BUFFER_NUM = 2`, `Muls(yLocal, ...)`).
    pub note: String,
}

/// One optimisation motif with its two directions.
pub trait Motif: Send + Sync {
    /// Short stable identifier (`double_buffer`).
    fn tag(&self) -> &'static str;
    /// Canonical family (`pipeline`, `memory`, `vector`, `parallelism`,
    /// `sync`, `scalar`).
    fn family(&self) -> &'static str;
    /// Title, bottleneck, applicability, effect and keywords.
    fn describe(&self) -> MotifInfo;
    /// Every site where the motif is present or could be applied, in file
    /// and position order.
    fn detect(&self, pkg: &Sources) -> Vec<Site>;
    /// Removes the optimisation at a `Present` site; None when it declines.
    fn remove(&self, pkg: &Sources, site: &Site) -> Option<Sources>;
    /// Applies the optimisation at an `Absent` site; None when it declines.
    fn apply(&self, pkg: &Sources, site: &Site) -> Option<Sources>;
}

/// Every built-in motif, in a fixed order.
pub fn registry() -> Vec<Box<dyn Motif>> {
    vec![
        Box::new(knobs::DoubleBuffer),
        Box::new(knobs::MultiCore),
        Box::new(knobs::TileSize),
        Box::new(strided::StridedCopy),
        Box::new(fuse::FusedVecOps),
        Box::new(hoist::HoistInvariant),
        Box::new(barrier::BarrierElim),
        Box::new(count_mode::CountMode),
        Box::new(tail::TailFold),
        Box::new(scalar::VectorizeScalar),
        Box::new(reuse::BufferReuse),
        Box::new(staging::StagingCopy),
        Box::new(cube_buffer::CubeDoubleBuffer),
        Box::new(l0c_accum::L0cAccumulate),
        Box::new(block_order::BlockOrder),
        Box::new(nz_hoist::NzHoist),
        Box::new(unit_flag::UnitFlag),
        Box::new(tile_shape::TileShape),
    ]
}

/// The motif with this tag.
pub fn by_tag(tag: &str) -> Option<Box<dyn Motif>> {
    registry().into_iter().find(|m| m.tag() == tag)
}

/// A site with its transformation, computed eagerly (packages are small).
pub(crate) struct Plan {
    pub site: Site,
    /// The transformed sources, None when the motif declines this site.
    pub output: Option<Sources>,
}

/// How the motifs are written: metadata plus one function listing every
/// site with its transformation. `Motif` follows from it.
pub(crate) trait Engine: Send + Sync {
    const TAG: &'static str;
    const FAMILY: &'static str;
    fn info(&self) -> MotifInfo;
    fn plans(&self, pkg: &Sources) -> Vec<Plan>;
}

impl<E: Engine> Motif for E {
    fn tag(&self) -> &'static str {
        E::TAG
    }
    fn family(&self) -> &'static str {
        E::FAMILY
    }
    fn describe(&self) -> MotifInfo {
        self.info()
    }
    fn detect(&self, pkg: &Sources) -> Vec<Site> {
        let mut sites: Vec<Site> = self.plans(pkg).into_iter().map(|p| p.site).collect();
        sites.sort_by(|a, b| {
            (&a.file, a.span, a.state as u8).cmp(&(&b.file, b.span, b.state as u8))
        });
        sites.dedup();
        sites
    }
    fn remove(&self, pkg: &Sources, site: &Site) -> Option<Sources> {
        transform(self, pkg, site, SiteState::Present)
    }
    fn apply(&self, pkg: &Sources, site: &Site) -> Option<Sources> {
        transform(self, pkg, site, SiteState::Absent)
    }
}

fn transform<E: Engine>(
    engine: &E,
    pkg: &Sources,
    site: &Site,
    state: SiteState,
) -> Option<Sources> {
    if site.state != state || site.motif != E::TAG {
        return None;
    }
    engine
        .plans(pkg)
        .into_iter()
        .find(|p| p.site == *site)
        .and_then(|p| p.output)
        .filter(|out| out != pkg)
}

/// Builds a site of motif `E` in `file` anchored at `range`.
pub(crate) fn site_at<E: Engine>(
    file: &str,
    text: &str,
    range: std::ops::Range<usize>,
    state: SiteState,
    note: String,
) -> Site {
    Site {
        motif: E::TAG,
        file: file.to_string(),
        line: syntax::line_of(text, range.start),
        span: (range.start, range.end),
        state,
        note,
    }
}

/// `pkg` with `file` (one of its own files) replaced by `text`.
pub(crate) fn with_file(pkg: &Sources, file: &str, text: String) -> Sources {
    let mut out = pkg.clone();
    // `file` is a key of `pkg`, confined when it was set.
    let _ = out.set(file, text);
    out
}

/// The diff from `old` to `new` for a snapshot: trailing spaces cut (the
/// context line of an empty source line is a single space, which a
/// snapshot cannot hold).
#[cfg(test)]
pub(crate) fn snapshot_diff(old: &Sources, new: &Sources) -> String {
    diff(old, new)
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_has_distinct_motifs_with_descriptions() {
        let motifs = registry();
        assert_eq!(motifs.len(), 18);
        let mut tags: Vec<&str> = motifs.iter().map(|m| m.tag()).collect();
        tags.sort();
        tags.dedup();
        assert_eq!(tags.len(), 18);
        for m in &motifs {
            let info = m.describe();
            assert!(
                !info.title.is_empty() && !info.bottleneck.is_empty(),
                "{}",
                m.tag()
            );
            assert!(!info.keywords.is_empty(), "{}", m.tag());
            assert!(by_tag(m.tag()).is_some());
        }
    }
}
