//! Retrieval: the top-k entries for a diagnosed bottleneck.
//!
//! A [`Query`] carries the bottleneck text, optionally the kernel's
//! [`ProfileSignature`], the code features a static look at the kernel
//! found (`single-buffer`, `scalar-loop`, `pipe-barrier-all`, …) and
//! motif filters. Every entry that passes the filters gets
//!
//! ```text
//! T_lex = r / r_max          r = −bm25(entries_fts; title 1.5, bottleneck 2,
//!                                  applicability 1, keywords 1),
//!                            r_max = best r of this query;
//!                            T_lex = 0 when the entry does not match or
//!                            r / r_max < 0.01 (terms found in most entries
//!                            get a near-zero IDF: noise, not relevance)
//! S     = query.signature.similarity(entry.signature), 0 if either lacks one
//! w_s   = 0.4 if the query has a signature, else 0;  w_t = 1 − w_s
//! A     = 0.15 · min(#features named by a reuse_when sentence, 2)
//!         − 0.5 if a feature is named by an avoid_when sentence
//!           (AvoidPolicy::Demote; AvoidPolicy::Drop removes the entry)
//! score = w_t·T_lex + w_s·S + A
//! ```
//!
//! [`Bank::search_fused`] (Stage I when an embeddings endpoint is
//! configured) fuses the ranking above with dense similarity by
//! reciprocal-rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009):
//!
//! ```text
//! L      = the entries `search` returns (evidence only), by score
//! D      = the candidates (same filters) with cos(q, e) > 0, by cos
//!          descending; under AvoidPolicy::Demote the avoid_when matches
//!          come after all the others
//! fused  = Σ over the lists X holding e of 1 / (60 + rank_X(e)), ranks from 1
//! order  = fused descending, then the lexical score, then id
//! ```
//!
//! Only ranks enter the fusion, so the scale of the cosines (which differs
//! between embedding models) does not matter; an entry must be near the top
//! of both lists, or at the very top of one, to lead. The returned score is
//! the fused one; the explanation keeps the lexical parts and the cosine.
//!
//! BM25 runs over title, bottleneck, the reuse_when sentences and the
//! keywords (avoid_when is not indexed: matching it is a reason *not* to
//! retrieve). A feature is "named" by a sentence when all its words occur
//! in it ([`crate::text::mentions`]).
//!
//! Invariants:
//! - Only entries with some evidence are returned: a text match, a
//!   positive signature similarity or a matched reuse_when sentence.
//! - Ordering is total and deterministic: score descending, then id
//!   ascending.

use crate::embed::{cosine, Embedder};
use crate::error::BankError;
use crate::signature::ProfileSignature;
use crate::store::{Bank, EntryFilter, StoredEntry};
use crate::text;
use rusqlite::params;
use std::collections::BTreeMap;
use std::fmt;

/// Entries returned when the caller does not say.
pub const DEFAULT_K: usize = 3;

/// BM25 column weights: title, bottleneck, applicability, keywords.
const BM25_WEIGHTS: [f64; 4] = [1.5, 2.0, 1.0, 1.0];
/// T_lex below this counts as no text match.
const MIN_TEXT: f64 = 0.01;
/// Weight of the signature similarity when the query has a signature.
const SIGNATURE_WEIGHT: f64 = 0.4;
/// Bonus per code feature named by a reuse_when sentence.
const REUSE_BONUS: f64 = 0.15;
/// Most features that earn the bonus.
const REUSE_MAX: usize = 2;
/// Penalty of an avoid_when match under [`AvoidPolicy::Demote`].
const AVOID_PENALTY: f64 = 0.5;
/// The rank offset of reciprocal-rank fusion (the published default).
pub const RRF_K: f64 = 60.0;

/// What to do with an entry whose avoid_when names a code feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AvoidPolicy {
    /// Leave it out.
    Drop,
    /// Keep it, with 0.5 subtracted from its score.
    Demote,
}

/// A retrieval request.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The bottleneck as diagnosed ("MTE2-bound, copies not overlapped
    /// with compute").
    pub text: String,
    /// The kernel's profile signature.
    pub signature: Option<ProfileSignature>,
    /// Code features of the kernel (`single-buffer`, `scalar-loop`).
    pub code_features: Vec<String>,
    /// Only these motifs (empty: any).
    pub only_motifs: Vec<String>,
    /// Never these motifs (e.g. the ones tried already).
    pub exclude_motifs: Vec<String>,
    /// Treatment of avoid_when matches.
    pub avoid: AvoidPolicy,
}

impl Query {
    /// A text-only query: no signature, features or filters, avoid_when
    /// matches dropped.
    pub fn text(text: &str) -> Query {
        Query {
            text: text.to_string(),
            signature: None,
            code_features: Vec::new(),
            only_motifs: Vec::new(),
            exclude_motifs: Vec::new(),
            avoid: AvoidPolicy::Drop,
        }
    }
}

/// Why an entry scored what it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// −bm25 of the entry, when the text matched.
    pub bm25: Option<f64>,
    /// T_lex, the normalised text relevance.
    pub text: f64,
    /// Cosine similarity of the embeddings ([`Bank::search_fused`] only).
    pub dense: Option<f64>,
    /// Signature similarity, when both sides have a signature.
    pub signature: Option<f64>,
    /// Code features named by a reuse_when sentence.
    pub reuse_matched: Vec<String>,
    /// Code features named by an avoid_when sentence.
    pub avoid_matched: Vec<String>,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bm25 {
            Some(r) => write!(f, "text {:.3} (bm25 {r:.3})", self.text)?,
            None => write!(f, "text 0 (no match)")?,
        }
        if let Some(d) = self.dense {
            write!(f, ", dense {d:.3}")?;
        }
        if let Some(s) = self.signature {
            write!(f, ", signature {s:.3}")?;
        }
        if !self.reuse_matched.is_empty() {
            write!(f, ", reuse_when: {}", self.reuse_matched.join(", "))?;
        }
        if !self.avoid_matched.is_empty() {
            write!(
                f,
                ", avoid_when: {} (demoted)",
                self.avoid_matched.join(", ")
            )?;
        }
        Ok(())
    }
}

/// One retrieved entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The entry.
    pub entry: StoredEntry,
    /// Its score (module docs).
    pub score: f64,
    /// How the score came about.
    pub explanation: Explanation,
}

impl Bank {
    /// −bm25 of every entry the text matches, by id.
    fn bm25(&self, query_text: &str) -> Result<BTreeMap<i64, f64>, BankError> {
        let terms = text::query_terms(query_text);
        let Some(expr) = text::fts_any(&terms) else {
            return Ok(BTreeMap::new());
        };
        let [w0, w1, w2, w3] = BM25_WEIGHTS;
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT rowid, bm25(entries_fts, ?2, ?3, ?4, ?5) FROM entries_fts
                 WHERE entries_fts MATCH ?1",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(params![expr, w0, w1, w2, w3], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })
            .map_err(|e| self.sql(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sql(e))?;
        Ok(rows.into_iter().map(|(id, s)| (id, -s)).collect())
    }

    fn candidates(&self, query: &Query) -> Result<Vec<StoredEntry>, BankError> {
        Ok(self
            .list(&EntryFilter::all())?
            .into_iter()
            .filter(|s| {
                (query.only_motifs.is_empty() || query.only_motifs.contains(&s.entry.motif))
                    && !query.exclude_motifs.contains(&s.entry.motif)
            })
            .collect())
    }

    fn rank(&self, query: &Query, k: usize) -> Result<Vec<Hit>, BankError> {
        let mut hits: Vec<Hit> = self
            .score_all(query)?
            .into_iter()
            .filter_map(|(hit, evidence)| evidence.then_some(hit))
            .collect();
        hits.truncate(k);
        Ok(hits)
    }

    /// Every candidate that passes the filters (avoid_when drops
    /// included), scored as the module docs say, with whether it has any
    /// evidence; sorted by score, then id.
    fn score_all(&self, query: &Query) -> Result<Vec<(Hit, bool)>, BankError> {
        let bm25 = self.bm25(&query.text)?;
        let best = bm25.values().copied().fold(0.0f64, f64::max);
        let w_s = if query.signature.is_some() {
            SIGNATURE_WEIGHT
        } else {
            0.0
        };
        let mut hits = Vec::new();
        for stored in self.candidates(query)? {
            let entry = &stored.entry;
            let matched = |sentences: &[String]| -> Vec<String> {
                query
                    .code_features
                    .iter()
                    .filter(|f| sentences.iter().any(|s| text::mentions(s, f)))
                    .cloned()
                    .collect()
            };
            let reuse_matched = matched(&entry.applicability.reuse_when);
            let avoid_matched = matched(&entry.applicability.avoid_when);
            if !avoid_matched.is_empty() && query.avoid == AvoidPolicy::Drop {
                continue;
            }
            let raw = bm25.get(&stored.id.0).copied();
            let t_lex = match raw {
                Some(r) if best > 0.0 && r / best >= MIN_TEXT => r / best,
                _ => 0.0,
            };
            let signature = match (&query.signature, &entry.signature) {
                (Some(q), Some(e)) => q.similarity(e),
                _ => None,
            };
            let s = signature.unwrap_or(0.0);
            let mut a = REUSE_BONUS * reuse_matched.len().min(REUSE_MAX) as f64;
            if !avoid_matched.is_empty() {
                a -= AVOID_PENALTY;
            }
            let evidence = t_lex > 0.0 || (w_s > 0.0 && s > 0.0) || !reuse_matched.is_empty();
            hits.push((
                Hit {
                    score: (1.0 - w_s) * t_lex + w_s * s + a,
                    explanation: Explanation {
                        bm25: raw,
                        text: t_lex,
                        dense: None,
                        signature,
                        reuse_matched,
                        avoid_matched,
                    },
                    entry: stored,
                },
                evidence,
            ));
        }
        hits.sort_by(|(a, _), (b, _)| {
            b.score
                .total_cmp(&a.score)
                .then(a.entry.id.cmp(&b.entry.id))
        });
        Ok(hits)
    }

    /// The top `k` entries for `query` (module docs give the score); no
    /// network.
    pub fn search(&self, query: &Query, k: usize) -> Result<Vec<Hit>, BankError> {
        self.rank(query, k)
    }

    /// The top `k` entries for `query` by reciprocal-rank fusion of the
    /// [`Bank::search`] ranking and the dense similarity of the query and
    /// entry embeddings from `embedder` (module docs). Embeddings are
    /// cached in the bank file: an entry is embedded once per model, a
    /// query text once. An empty query text uses the lexical ranking alone
    /// (nothing to embed), and no candidate entry means no request. An
    /// embedder failure is [`BankError::Embeddings`]; nothing is ranked
    /// then.
    pub fn search_fused(
        &self,
        query: &Query,
        k: usize,
        embedder: &dyn Embedder,
    ) -> Result<Vec<Hit>, BankError> {
        if query.text.trim().is_empty() {
            return self.search(query, k);
        }
        let scored = self.score_all(query)?;
        if scored.is_empty() {
            return Ok(Vec::new());
        }
        let mut texts: Vec<String> = vec![query.text.clone()];
        texts.extend(scored.iter().map(|(h, _)| h.entry.entry.search_text()));
        let vectors = self.embeddings_with(embedder, &texts)?;
        let Some((q, rest)) = vectors.split_first() else {
            return self.search(query, k);
        };
        let cos: Vec<f64> = rest.iter().map(|v| cosine(q, v)).collect();
        // Ranks (from 1) in the lexical list L ...
        let mut fused: Vec<f64> = vec![0.0; scored.len()];
        let mut rank = 0usize;
        for (i, (_, evidence)) in scored.iter().enumerate() {
            if *evidence {
                rank += 1;
                fused[i] += 1.0 / (RRF_K + rank as f64);
            }
        }
        // ... and in the dense list D.
        let mut dense: Vec<usize> = (0..scored.len()).filter(|&i| cos[i] > 0.0).collect();
        dense.sort_by(|&a, &b| {
            let avoided = |i: usize| !scored[i].0.explanation.avoid_matched.is_empty();
            avoided(a)
                .cmp(&avoided(b))
                .then(cos[b].total_cmp(&cos[a]))
                .then(scored[a].0.entry.id.cmp(&scored[b].0.entry.id))
        });
        for (r, &i) in dense.iter().enumerate() {
            fused[i] += 1.0 / (RRF_K + (r + 1) as f64);
        }
        let mut hits: Vec<(Hit, f64)> = scored
            .into_iter()
            .zip(cos)
            .zip(fused)
            .filter(|(_, f)| *f > 0.0)
            .map(|(((mut hit, _), c), f)| {
                let lexical = hit.score;
                hit.explanation.dense = Some(c);
                hit.score = f;
                (hit, lexical)
            })
            .collect();
        hits.sort_by(|(a, la), (b, lb)| {
            b.score
                .total_cmp(&a.score)
                .then(lb.total_cmp(la))
                .then(a.entry.id.cmp(&b.entry.id))
        });
        Ok(hits.into_iter().take(k).map(|(h, _)| h).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{family_of, Applicability, Entry, Origin, Provenance, SourceOp};

    fn entry(
        motif: &str,
        title: &str,
        bottleneck: &str,
        reuse: &[&str],
        avoid: &[&str],
        keywords: &[&str],
    ) -> Entry {
        Entry {
            title: title.into(),
            bottleneck: bottleneck.into(),
            applicability: Applicability {
                reuse_when: reuse.iter().map(|s| s.to_string()).collect(),
                avoid_when: avoid.iter().map(|s| s.to_string()).collect(),
            },
            expected_effect: "faster".into(),
            diff: format!("--- a/k\n+++ b/k\n@@ -1 +1 @@\n-{motif} off\n+{motif} on\n"),
            motif: motif.into(),
            family: family_of(motif).unwrap_or("kernel.other").into(),
            source: SourceOp {
                op: "add_custom".into(),
                level: Some(1),
            },
            slow_us: Some(20.0),
            fast_us: Some(10.0),
            profile_moved: BTreeMap::new(),
            signature: None,
            keywords: keywords.iter().map(|s| s.to_string()).collect(),
            provenance: Provenance {
                created_ms: 0,
                origin: Origin::Rewind,
                evidence: vec![],
            },
        }
    }

    fn sig(vec: f64, mte2: f64, scalar: f64) -> ProfileSignature {
        let mut s = ProfileSignature::empty();
        s.vec_ratio = Some(vec);
        s.mte2_ratio = Some(mte2);
        s.scalar_ratio = Some(scalar);
        s
    }

    /// Five entries about different motifs, written as Rewind would word
    /// them, each with the signature of its slow kernel.
    fn hand_made_bank() -> Bank {
        let bank = Bank::open_in_memory().unwrap();
        let mut e = entry(
            "double_buffer",
            "Double-buffer the input and output queues",
            "MTE2-bound: copies into UB are not overlapped with vector compute; each queue has a single buffer so CopyIn waits for Compute",
            &["the kernel uses a single buffer per queue (single-buffer) and loops over several tiles"],
            &["the whole input fits in one tile (one loop iteration)"],
            &["InitBuffer", "BUFFER_NUM", "pipeline", "overlap", "TQue"],
        );
        e.signature = Some(sig(0.3, 0.9, 0.05));
        bank.insert(&e).unwrap();
        let mut e = entry(
            "tile_size",
            "Copy larger tiles per DataCopy",
            "MTE2 efficiency is low: many small copies of a few hundred bytes each pay the DMA head",
            &["copies are smaller than 16 KiB and UB has room (small-copy)"],
            &["UB is already full"],
            &["DataCopy", "tile", "bandwidth"],
        );
        e.signature = Some(sig(0.2, 0.95, 0.1));
        bank.insert(&e).unwrap();
        let mut e = entry(
            "vectorize_scalar",
            "Replace a scalar element loop by vector instructions",
            "Scalar-bound: the kernel computes element by element with GetValue and SetValue",
            &["an element loop with GetValue/SetValue (scalar-loop)"],
            &[],
            &["GetValue", "SetValue", "scalar"],
        );
        e.signature = Some(sig(0.05, 0.1, 0.9));
        bank.insert(&e).unwrap();
        let mut e = entry(
            "barrier_elim",
            "Remove redundant PipeBarrier<PIPE_ALL>",
            "Pipes idle at full barriers after every vector instruction",
            &["PipeBarrier<PIPE_ALL> between dependent vector ops (pipe-barrier-all)"],
            &[],
            &["PipeBarrier", "sync"],
        );
        e.signature = Some(sig(0.4, 0.3, 0.3));
        bank.insert(&e).unwrap();
        let mut e = entry(
            "fused_vec_ops",
            "Fuse Mul and Add into Axpy",
            "Vector-bound: a chain of elementwise vector ops reads and writes UB several times",
            &["consecutive Mul and Add on the same tensors (unfused-vector-ops)"],
            &[],
            &["Axpy", "Muls", "Adds", "fusion"],
        );
        e.signature = Some(sig(0.95, 0.2, 0.05));
        bank.insert(&e).unwrap();
        bank
    }

    fn motifs(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.entry.entry.motif.as_str()).collect()
    }

    #[test]
    fn double_buffering_ranks_first_for_an_unoverlapped_mte2_bottleneck() {
        let bank = hand_made_bank();
        let q = Query::text("MTE2-bound, copies not overlapped with compute, single buffer");
        let hits = bank.search(&q, DEFAULT_K).unwrap();
        assert_eq!(hits.len(), 3);
        assert_eq!(motifs(&hits)[0], "double_buffer", "{hits:#?}");
        // The top hit has the best text score, normalised to 1.
        assert_eq!(hits[0].explanation.text, 1.0);
        assert!(hits[0].score > hits[1].score);
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn text_that_matches_nothing_returns_nothing() {
        let bank = hand_made_bank();
        assert!(bank
            .search(&Query::text("zebra giraffe"), 3)
            .unwrap()
            .is_empty());
        assert!(bank.search(&Query::text(""), 3).unwrap().is_empty());
    }

    #[test]
    fn scalar_bottleneck_finds_the_vectorisation_entry() {
        let bank = hand_made_bank();
        let hits = bank
            .search(&Query::text("scalar-bound element loop using GetValue"), 1)
            .unwrap();
        assert_eq!(motifs(&hits), ["vectorize_scalar"]);
    }

    #[test]
    fn signature_similarity_decides_between_equal_texts() {
        let bank = Bank::open_in_memory().unwrap();
        let mut a = entry("tile_size", "Tile size", "bound", &[], &[], &[]);
        a.signature = Some(sig(0.1, 0.9, 0.1));
        let mut b = entry("fused_vec_ops", "Tile size", "bound", &[], &[], &[]);
        b.signature = Some(sig(0.9, 0.1, 0.1));
        bank.insert(&a).unwrap();
        bank.insert(&b).unwrap();
        let mut q = Query::text("tile size bound");
        // Text alone ties; the lower id wins.
        assert_eq!(
            motifs(&bank.search(&q, 2).unwrap()),
            ["tile_size", "fused_vec_ops"]
        );
        q.signature = Some(sig(0.85, 0.15, 0.1));
        let hits = bank.search(&q, 2).unwrap();
        assert_eq!(motifs(&hits), ["fused_vec_ops", "tile_size"]);
        // Hand computed: |0.85-0.9|, |0.15-0.1|, 0 -> S = 1 - 0.1/3;
        // T = 1 (same text), score = 0.6 * 1 + 0.4 * S.
        let s = 1.0 - 0.1 / 3.0;
        assert!((hits[0].explanation.signature.unwrap() - s).abs() < 1e-12);
        assert!(
            (hits[0].score - (0.6 + 0.4 * s)).abs() < 1e-12,
            "{}",
            hits[0].score
        );
    }

    #[test]
    fn signature_alone_retrieves_when_the_text_says_nothing() {
        let bank = hand_made_bank();
        let mut q = Query::text("");
        q.signature = Some(sig(0.06, 0.1, 0.88));
        let hits = bank.search(&q, 1).unwrap();
        assert_eq!(motifs(&hits), ["vectorize_scalar"]);
    }

    #[test]
    fn applicability_filters_boost_drop_and_demote() {
        let bank = hand_made_bank();
        let text = "it is slow";
        // "slow" matches no entry; a reuse_when feature alone retrieves.
        let mut q = Query::text(text);
        q.code_features = vec!["pipe-barrier-all".into()];
        let hits = bank.search(&q, 3).unwrap();
        assert_eq!(motifs(&hits), ["barrier_elim"]);
        assert!((hits[0].score - REUSE_BONUS).abs() < 1e-12);
        assert_eq!(hits[0].explanation.reuse_matched, ["pipe-barrier-all"]);

        // avoid_when names the feature: dropped by default ...
        let mut q = Query::text("MTE2-bound, copies not overlapped with compute, small copies");
        q.code_features = vec!["one loop iteration".into()];
        let plain = bank.search(&Query::text(&q.text), 5).unwrap();
        assert_eq!(motifs(&plain)[0], "double_buffer");
        let hits = bank.search(&q, 5).unwrap();
        assert!(
            !motifs(&hits).contains(&"double_buffer"),
            "{:?}",
            motifs(&hits)
        );
        // ... or demoted: the best text match (T = 1) loses the lead.
        q.avoid = AvoidPolicy::Demote;
        let hits = bank.search(&q, 5).unwrap();
        let position = motifs(&hits)
            .iter()
            .position(|m| *m == "double_buffer")
            .unwrap();
        let demoted = &hits[position];
        assert_eq!(demoted.explanation.text, 1.0);
        assert_eq!(demoted.score, 1.0 - AVOID_PENALTY);
        assert_eq!(demoted.explanation.avoid_matched, ["one loop iteration"]);
        assert!(demoted.explanation.to_string().contains("demoted"));
        assert_eq!(position, 1, "{:?}", motifs(&hits));
    }

    #[test]
    fn motif_filters_apply() {
        let bank = hand_made_bank();
        let mut q = Query::text("MTE2-bound, copies not overlapped with compute, single buffer");
        q.exclude_motifs = vec!["double_buffer".into()];
        let hits = bank.search(&q, 3).unwrap();
        assert!(!motifs(&hits).contains(&"double_buffer"));
        let mut q = Query::text("MTE2 copies");
        q.only_motifs = vec!["tile_size".into()];
        assert_eq!(motifs(&bank.search(&q, 3).unwrap()), ["tile_size"]);
    }

    #[test]
    fn known_missing_motif_ranks_in_top_3_from_a_profile_and_features() {
        // A balanced single-buffered kernel: MTE2 busy, vector waiting.
        let bank = hand_made_bank();
        let profile = serde_json::json!({
            "Soc Version": "Ascend910B2", "Op Type": "vector", "Block Dim": 48,
            "Task Duration(us)": 40.0,
            "blocks": [{"block_id": 0, "core_type": "aiv", "aiv_time(us)": 20.0,
                        "aiv_vec_ratio": 0.32, "aiv_scalar_ratio": 0.06,
                        "aiv_mte2_ratio": 0.88, "aiv_mte3_ratio": 0.3}]
        });
        let q = Query {
            text: "aiv_mte2_ratio 0.88 is the busiest pipe; vector waits for copies".into(),
            signature: Some(ProfileSignature::from_profile_json(&profile).unwrap()),
            code_features: vec!["single-buffer".into()],
            only_motifs: vec![],
            exclude_motifs: vec![],
            avoid: AvoidPolicy::Drop,
        };
        let hits = bank.search(&q, DEFAULT_K).unwrap();
        assert!(
            motifs(&hits).contains(&"double_buffer"),
            "{:?}",
            motifs(&hits)
        );
        assert_eq!(motifs(&hits)[0], "double_buffer");
    }

    /// Vectors of a toy model: dimension 0 counts "stall"/"overlap",
    /// 1 counts "scalar"/"element", 2 is constant.
    fn toy_embedding(text: &str) -> Vec<f32> {
        let lower = text.to_lowercase();
        let count = |ws: &[&str]| ws.iter().map(|w| lower.matches(w).count()).sum::<usize>() as f32;
        vec![
            count(&["stall", "overlap"]),
            count(&["scalar", "element"]),
            0.1,
        ]
    }

    /// An in-process embedder over [`toy_embedding`] that counts texts.
    struct Toy {
        asked: std::cell::RefCell<Vec<String>>,
        fail: bool,
    }

    impl Embedder for Toy {
        fn model(&self) -> &str {
            "toy"
        }
        fn endpoint(&self) -> String {
            "toy://".into()
        }
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, crate::embed::EmbedError> {
            if self.fail {
                return Err("toy is down".into());
            }
            self.asked.borrow_mut().extend(texts.iter().cloned());
            Ok(texts.iter().map(|t| toy_embedding(t)).collect())
        }
    }

    #[test]
    fn fused_search_ranks_by_reciprocal_rank_fusion() {
        // Lexically "copies" favours A (said twice) over B; the toy
        // embedding reads "stall" as "overlap", which B says twice and C
        // once: L = [A, B], D = [B, C, A].
        let bank = Bank::open_in_memory().unwrap();
        for (motif, bottleneck) in [
            ("tile_size", "copies copies bound"),
            ("double_buffer", "copies bound, overlap overlap"),
            ("fused_vec_ops", "elementwise chain, overlap"),
        ] {
            bank.insert(&entry(motif, motif, bottleneck, &[], &[], &[]))
                .unwrap();
        }
        let toy = Toy {
            asked: Default::default(),
            fail: false,
        };
        let q = Query::text("copies stall");
        let lexical = bank.search(&q, 5).unwrap();
        assert_eq!(motifs(&lexical), ["tile_size", "double_buffer"]);
        let fused = bank.search_fused(&q, 5, &toy).unwrap();
        assert_eq!(
            motifs(&fused),
            ["double_buffer", "tile_size", "fused_vec_ops"],
            "{fused:#?}"
        );
        let rrf = |ranks: &[usize]| ranks.iter().map(|&r| 1.0 / (RRF_K + r as f64)).sum::<f64>();
        for (hit, expected) in fused.iter().zip([rrf(&[2, 1]), rrf(&[1, 3]), rrf(&[2])]) {
            assert!((hit.score - expected).abs() < 1e-12, "{hit:#?}");
        }
        assert!(fused[0].explanation.dense.unwrap() > 0.9);
        assert_eq!(fused[2].explanation.bm25, None);
        // k cuts after fusion.
        assert_eq!(
            motifs(&bank.search_fused(&q, 1, &toy).unwrap()),
            ["double_buffer"]
        );
        // The query and three entries were embedded once each.
        assert_eq!(toy.asked.borrow().len(), 4);
        bank.search_fused(&q, 5, &toy).unwrap();
        assert_eq!(toy.asked.borrow().len(), 4);
        assert!(bank.cached_embedding("toy", &q.text).unwrap().is_some());
        // A failing embedder is an error naming where it failed.
        let down = Toy {
            asked: Default::default(),
            fail: true,
        };
        match bank.search_fused(&Query::text("something new"), 3, &down) {
            Err(BankError::Embeddings { url, source }) => {
                assert_eq!(url, "toy://");
                assert_eq!(source.to_string(), "toy is down");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lexical_retrieval_is_the_banks_own_ranking_behind_the_trait() {
        use crate::retrieval::{Lexical, Retrieval};
        let bank = hand_made_bank();
        let query = Query::text("MTE2-bound copies not overlapped with compute");
        let r: &dyn Retrieval = &Lexical;
        let hits = r.search(&bank, &query, 3, "add_custom").unwrap();
        assert!(!hits.is_empty());
        assert_eq!(hits, bank.search(&query, 3).unwrap());
        assert!(r.fallbacks().is_empty());
        assert!(r.describe().starts_with("lexical"), "{}", r.describe());
    }
}
