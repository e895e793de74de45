//! One experience entry: a verified slow → fast edit with the evidence
//! that it matters and the text that says when to reuse it.
//!
//! Invariants:
//! - An entry is immutable once stored; the bank has no update or delete.
//! - [`Entry::content_hash`] covers everything but the provenance's
//!   `created_ms` and `evidence`: two Rewind runs that distil the same edit
//!   from the same kernels give the same hash, whatever their run ids.
//! - A Rewind entry carries both latencies and was measurably slower
//!   before the edit (`slow_us > fast_us > 0`); every number is finite, so
//!   the JSON form (and the JSONL export) reads back bit for bit.

use crate::error::BankError;
use crate::signature::ProfileSignature;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;

/// Motif tags the bank knows, with the canonical family each belongs to.
///
/// `Entry::motif` may hold other tags (an LLM proposer may name new
/// motifs); these are the ones of the built-in motif engine (issue 6,
/// item 4) and of the documentation importer.
pub const KNOWN_MOTIFS: &[(&str, &str)] = &[
    ("double_buffer", "kernel.pipeline.double_buffer"),
    ("multi_core", "launch.multi_core"),
    ("tile_size", "kernel.memory.copy_size"),
    ("strided_copy", "kernel.memory.strided_copy"),
    ("fused_vec_ops", "kernel.vector.fusion"),
    ("hoist_invariant", "kernel.vector.loop_invariant"),
    ("barrier_elim", "kernel.sync.barrier"),
    ("count_mode", "kernel.vector.mask_mode"),
    ("tail_fold", "kernel.loop.tail"),
    ("vectorize_scalar", "kernel.vector.scalar_loop"),
    ("buffer_reuse", "kernel.memory.ub_reuse"),
];

/// The canonical family of a known motif tag.
pub fn family_of(motif: &str) -> Option<&'static str> {
    KNOWN_MOTIFS
        .iter()
        .find(|(tag, _)| *tag == motif)
        .map(|(_, family)| *family)
}

/// When an entry applies: one sentence per condition.
///
/// Retrieval matches code features (`"single-buffer"`) against these
/// sentences word by word (see [`crate::retrieve`]), so an entry that
/// wants to be found for a feature should name it literally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Applicability {
    /// Conditions under which the edit helps.
    pub reuse_when: Vec<String>,
    /// Conditions under which the edit does not help or breaks things.
    pub avoid_when: Vec<String>,
}

/// The operator an entry was learnt from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceOp {
    /// Operator name (`add_custom`), or the guide section for docs entries
    /// (`guide 3.8.4.1`).
    pub op: String,
    /// Benchmark level 1..=3; `None` for entries not learnt from an
    /// operator (documentation, manual).
    pub level: Option<u8>,
}

/// A profile field that moved between the slow and the fast kernel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moved {
    /// Value on the slow kernel (before the edit).
    pub before: f64,
    /// Value on the fast kernel (after the edit).
    pub after: f64,
}

/// Where an entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Distilled by Rewind from a kept removal.
    Rewind,
    /// Built from a tuning guide's counter-example and example.
    Docs,
    /// Written by a person.
    Manual,
}

impl Origin {
    /// Every origin.
    pub const ALL: [Origin; 3] = [Origin::Rewind, Origin::Docs, Origin::Manual];

    /// Stable name, stored in the `origin` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Rewind => "rewind",
            Origin::Docs => "docs",
            Origin::Manual => "manual",
        }
    }

    /// Parses [`Origin::as_str`].
    pub fn parse(text: &str) -> Option<Origin> {
        Origin::ALL.into_iter().find(|o| o.as_str() == text)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who made an entry, when, and on what evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Creation time given by the producer, Unix milliseconds (Rewind may
    /// pass a fixed value so that reruns give byte-identical banks).
    pub created_ms: i64,
    /// Where the entry comes from.
    pub origin: Origin,
    /// Evaluation ids, source hashes, guide pages: free-form references.
    pub evidence: Vec<String>,
}

/// An experience entry (issue 6, item 1; method.md §2 Eq. 3 plus the
/// stored-record fields of its Fig. 6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Short name of the optimisation ("Double-buffer the input queues").
    pub title: String,
    /// The bottleneck the slow kernel shows, as a diagnosis would word it.
    pub bottleneck: String,
    /// When to reuse it and when not.
    pub applicability: Applicability,
    /// What the edit does to the profile and latency.
    pub expected_effect: String,
    /// Unified diff from the slow kernel to the fast one.
    pub diff: String,
    /// Motif tag (see [`KNOWN_MOTIFS`]).
    pub motif: String,
    /// Canonical family (`kernel.pipeline.double_buffer`).
    pub family: String,
    /// The operator it was learnt from.
    pub source: SourceOp,
    /// Latency of the slow kernel, µs (required for Rewind entries).
    pub slow_us: Option<f64>,
    /// Latency of the fast kernel, µs (required for Rewind entries).
    pub fast_us: Option<f64>,
    /// Profile fields (msprof names) that moved, slow → fast.
    pub profile_moved: BTreeMap<String, Moved>,
    /// Profile signature of the slow kernel: what a kernel that lacks this
    /// motif looks like. Used by retrieval.
    pub signature: Option<ProfileSignature>,
    /// Retrieval keywords.
    pub keywords: Vec<String>,
    /// Who, when, on what evidence.
    pub provenance: Provenance,
}

/// SHA-256 of an entry's content, lower-case hex.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash(String);

impl ContentHash {
    /// The hex text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn from_stored(text: String) -> ContentHash {
        ContentHash(text)
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Entry {
    /// The hash under which duplicates are recognised: SHA-256 of the JSON
    /// of the entry with `provenance.created_ms` set to 0 and
    /// `provenance.evidence` emptied.
    pub fn content_hash(&self) -> ContentHash {
        let mut content = self.clone();
        content.provenance.created_ms = 0;
        content.provenance.evidence.clear();
        // Serialising plain data with string keys cannot fail.
        let json = serde_json::to_string(&content).unwrap_or_default();
        let digest = Sha256::digest(json.as_bytes());
        ContentHash(format!("{digest:x}"))
    }

    /// Ratio slow / fast, when both latencies are known.
    pub fn speedup(&self) -> Option<f64> {
        match (self.slow_us, self.fast_us) {
            (Some(slow), Some(fast)) if fast > 0.0 => Some(slow / fast),
            _ => None,
        }
    }

    /// Checks the rules every stored entry obeys:
    /// - title, bottleneck, motif and family are not blank;
    /// - the level, when given, is 1, 2 or 3;
    /// - every number (latencies, moved fields, signature) is finite and
    ///   latencies are positive;
    /// - a Rewind entry has a non-empty diff and both latencies with
    ///   `slow_us > fast_us` (the slowdown it was kept for).
    pub fn validate(&self) -> Result<(), BankError> {
        let bad = |field: &'static str, reason: String| BankError::InvalidEntry {
            title: self.title.clone(),
            field,
            reason,
        };
        for (field, text) in [
            ("title", &self.title),
            ("bottleneck", &self.bottleneck),
            ("motif", &self.motif),
            ("family", &self.family),
        ] {
            if text.trim().is_empty() {
                return Err(bad(field, "is empty".into()));
            }
        }
        if let Some(level) = self.source.level {
            if !(1..=3).contains(&level) {
                return Err(bad("source.level", format!("{level} is not 1, 2 or 3")));
            }
        }
        for (field, value) in [("slow_us", self.slow_us), ("fast_us", self.fast_us)] {
            if let Some(v) = value {
                if !v.is_finite() || v <= 0.0 {
                    return Err(bad(field, format!("{v} is not a positive finite latency")));
                }
            }
        }
        for (name, moved) in &self.profile_moved {
            if !moved.before.is_finite() || !moved.after.is_finite() {
                return Err(bad(
                    "profile_moved",
                    format!("{name}: {} -> {} is not finite", moved.before, moved.after),
                ));
            }
        }
        if let Some(sig) = &self.signature {
            if let Some((name, v)) = sig.fields().into_iter().find(|(_, v)| !v.is_finite()) {
                return Err(bad("signature", format!("{name} = {v} is not finite")));
            }
        }
        if self.provenance.origin == Origin::Rewind {
            if self.diff.trim().is_empty() {
                return Err(bad("diff", "a Rewind entry needs its code diff".into()));
            }
            match (self.slow_us, self.fast_us) {
                (Some(slow), Some(fast)) if slow > fast => {}
                (Some(slow), Some(fast)) => {
                    return Err(bad(
                        "slow_us",
                        format!("a Rewind entry must be slower before the edit, got slow {slow} us <= fast {fast} us"),
                    ))
                }
                _ => {
                    return Err(bad(
                        "slow_us",
                        "a Rewind entry needs both slow_us and fast_us".into(),
                    ))
                }
            }
        }
        Ok(())
    }

    /// The text indexed for full-text search and embeddings: title,
    /// bottleneck, the reuse conditions and the keywords.
    pub fn search_text(&self) -> String {
        format!(
            "{}\n{}\n{}\n{}",
            self.title,
            self.bottleneck,
            self.applicability.reuse_when.join("\n"),
            self.keywords.join(" ")
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A valid Rewind entry for tests, varied by `motif`.
    pub(crate) fn sample(motif: &str) -> Entry {
        Entry {
            title: format!("{motif} title"),
            bottleneck: format!("{motif} bottleneck"),
            applicability: Applicability {
                reuse_when: vec![format!("{motif} helps")],
                avoid_when: vec![],
            },
            expected_effect: "faster".into(),
            diff: "--- a/k.cpp\n+++ b/k.cpp\n@@ -1 +1 @@\n-a\n+b\n".into(),
            motif: motif.into(),
            family: family_of(motif).unwrap_or("kernel.other").into(),
            source: SourceOp {
                op: "add_custom".into(),
                level: Some(1),
            },
            slow_us: Some(20.5),
            fast_us: Some(10.25),
            profile_moved: BTreeMap::new(),
            signature: None,
            keywords: vec![motif.into()],
            provenance: Provenance {
                created_ms: 1,
                origin: Origin::Rewind,
                evidence: vec!["eval:1".into()],
            },
        }
    }

    #[test]
    fn content_hash_ignores_created_and_evidence_only() {
        let a = sample("double_buffer");
        let mut b = a.clone();
        b.provenance.created_ms = 99;
        b.provenance.evidence = vec!["eval:7".into(), "src:abc".into()];
        assert_eq!(a.content_hash(), b.content_hash());
        b.title.push('!');
        assert_ne!(a.content_hash(), b.content_hash());
        let mut c = a.clone();
        c.fast_us = Some(10.0);
        assert_ne!(a.content_hash(), c.content_hash());
        assert_eq!(a.content_hash().as_str().len(), 64);
    }

    #[test]
    fn validate_rejects_what_it_promises_to() {
        assert!(sample("double_buffer").validate().is_ok());
        let field_of = |e: Entry| match e.validate() {
            Err(BankError::InvalidEntry { field, .. }) => field,
            other => panic!("expected InvalidEntry, got {other:?}"),
        };
        let mut e = sample("x");
        e.title = "  ".into();
        assert_eq!(field_of(e), "title");
        let mut e = sample("x");
        e.source.level = Some(4);
        assert_eq!(field_of(e), "source.level");
        let mut e = sample("x");
        e.fast_us = Some(f64::NAN);
        assert_eq!(field_of(e), "fast_us");
        // Not slower before the edit: never a Rewind entry.
        let mut e = sample("x");
        e.slow_us = Some(10.0);
        e.fast_us = Some(10.0);
        assert_eq!(field_of(e), "slow_us");
        let mut e = sample("x");
        e.slow_us = None;
        assert_eq!(field_of(e), "slow_us");
        let mut e = sample("x");
        e.diff = String::new();
        assert_eq!(field_of(e), "diff");
        let mut e = sample("x");
        e.profile_moved.insert(
            "aiv_vec_ratio".into(),
            Moved {
                before: f64::INFINITY,
                after: 0.5,
            },
        );
        assert_eq!(field_of(e), "profile_moved");
        // A docs entry needs neither latencies nor a diff.
        let mut e = sample("x");
        e.provenance.origin = Origin::Docs;
        e.slow_us = None;
        e.fast_us = None;
        e.diff = String::new();
        assert!(e.validate().is_ok());
    }

    #[test]
    fn known_motifs_have_unique_tags_and_families() {
        let mut tags: Vec<_> = KNOWN_MOTIFS.iter().map(|(t, _)| *t).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), KNOWN_MOTIFS.len());
        assert_eq!(
            family_of("double_buffer"),
            Some("kernel.pipeline.double_buffer")
        );
        assert_eq!(family_of("nope"), None);
        assert_eq!(Origin::parse("docs"), Some(Origin::Docs));
        assert_eq!(Origin::parse("x"), None);
    }
}
