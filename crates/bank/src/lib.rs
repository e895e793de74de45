//! The experience bank (issue 6, items 1, 2 and 5): verified slow → fast
//! edits with the evidence that they matter, stored in SQLite and found
//! again by bottleneck text, profile signature and code features.
//!
//! - [`entry`]: the [`entry::Entry`] (title, bottleneck, applicability,
//!   expected effect, unified diff, motif, family, source operator and
//!   level, latencies, moved profile fields, signature, keywords,
//!   provenance) and its content hash.
//! - [`store`]: the [`store::Bank`] file: insert, get, list, freeze,
//!   JSONL export/import, schema versions.
//! - [`retrieve`]: top-k search (FTS5 BM25 + signature similarity +
//!   applicability filters; optionally fused with dense similarity by
//!   reciprocal-rank fusion, [`retrieve`]'s `search_fused`).
//! - [`retrieval`]: the [`retrieval::Retrieval`] trait Stage I ranks
//!   through, and [`retrieval::Lexical`], the bank's own ranking.
//! - [`embed`]: the [`embed::Embedder`] trait, cosine similarity and the
//!   per-model embedding cache in the bank file.
//! - [`signature`]: [`signature::ProfileSignature`] from the harness's
//!   profile JSON, and the moved-fields helper for Rewind.
//! - [`docs`]: the documentation-derived bank from a tuning guide.
//! - [`diff`]: unified diffs; [`text`]: tokenisation for the index.
//! - [`commands`]: the calls and renderings behind `ascendopt bank …`.
//!
//! Invariants:
//! - Entries are immutable once stored, and a frozen bank takes no new
//!   ones (enforced by the API and by SQLite triggers).
//! - The bank makes no network request itself: dense retrieval asks the
//!   caller's [`embed::Embedder`], and only when one is passed explicitly.
//! - Everything is deterministic: the same inserts give the same bank
//!   ([`store::Bank::content_digest`]), the same query the same ranking
//!   (ties broken by id), the same guide the same entries.
//! - The bank knows nothing of the harness, devices or agents: it takes
//!   plain data (entries, profile JSON) and returns plain data.
//!
//! ```
//! use ascendopt_bank::entry::*;
//! use ascendopt_bank::retrieve::{Query, DEFAULT_K};
//! use ascendopt_bank::store::Bank;
//! use std::collections::BTreeMap;
//!
//! let bank = Bank::open_in_memory()?;
//! let entry = Entry {
//!     title: "Double-buffer the input queue".into(),
//!     bottleneck: "MTE2-bound: copies are not overlapped with compute".into(),
//!     applicability: Applicability {
//!         reuse_when: vec!["a single buffer per queue (single-buffer)".into()],
//!         avoid_when: vec!["one tile only".into()],
//!     },
//!     expected_effect: "copies hide behind compute".into(),
//!     diff: "--- a/k.cpp\n+++ b/k.cpp\n@@ -1 +1 @@\n-InitBuffer(q, 1, n);\n+InitBuffer(q, 2, n);\n".into(),
//!     motif: "double_buffer".into(),
//!     family: family_of("double_buffer").unwrap_or("kernel").into(),
//!     source: SourceOp { op: "add_custom".into(), level: Some(1) },
//!     slow_us: Some(30.0),
//!     fast_us: Some(21.0),
//!     profile_moved: BTreeMap::new(),
//!     signature: None,
//!     keywords: vec!["InitBuffer".into()],
//!     provenance: Provenance { created_ms: 0, origin: Origin::Rewind, evidence: vec![] },
//! };
//! bank.insert(&entry)?;
//! let hits = bank.search(&Query::text("copies not overlapped, single buffer"), DEFAULT_K)?;
//! assert_eq!(hits[0].entry.entry.motif, "double_buffer");
//! # Ok::<(), ascendopt_bank::error::BankError>(())
//! ```
#![deny(missing_docs)]

pub mod commands;
pub mod diff;
pub mod docs;
pub mod embed;
pub mod entry;
pub mod error;
pub mod retrieval;
pub mod retrieve;
pub mod signature;
pub mod store;
pub mod text;
