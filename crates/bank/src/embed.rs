//! Dense embeddings for retrieval, cached in the bank file.
//!
//! The vectors come from any [`Embedder`] (in production the agent's LLM
//! client, with its retries and call log) through
//! [`Bank::embeddings_with`]; this crate makes no HTTP request itself.
//!
//! Invariants:
//! - Nothing here runs unless the caller passes an [`Embedder`]; plain
//!   [`crate::store::Bank::search`] never touches the network.
//! - The cache is keyed by (model, SHA-256 of the text): a text is sent to
//!   the embedder at most once per model and bank file.

use crate::error::BankError;
use crate::store::Bank;
use rusqlite::{params, OptionalExtension};
use sha2::{Digest, Sha256};

/// A source of embeddings: the caller's client for an embeddings API.
pub trait Embedder {
    /// The model name (part of the cache key).
    fn model(&self) -> &str;
    /// Where the vectors come from (for error messages).
    fn endpoint(&self) -> String;
    /// One vector per text, in order.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Why an [`Embedder`] gave no vectors: its own error (the LLM client's,
/// in production), kept whole as the source of [`BankError::Embeddings`].
pub type EmbedError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Most texts sent in one request.
pub const EMBED_BATCH: usize = 64;

/// Cosine similarity; 0 when either vector is zero or the lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

fn text_hash(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl Bank {
    /// Embeddings of `texts` from `embedder`: cached ones from the bank
    /// file (keyed by the embedder's model and the text), the others asked
    /// for (in requests of at most [`EMBED_BATCH`] texts) and cached, so
    /// that an entry is embedded once per model and bank file.
    pub fn embeddings_with(
        &self,
        embedder: &dyn Embedder,
        texts: &[String],
    ) -> Result<Vec<Vec<f32>>, BankError> {
        self.cached(embedder.model(), texts, &mut |batch| {
            embedder
                .embed(batch)
                .map_err(|source| BankError::Embeddings {
                    url: embedder.endpoint(),
                    source,
                })
        })
    }

    /// The vector cached for `text` under `model`, if any.
    pub fn cached_embedding(&self, model: &str, text: &str) -> Result<Option<Vec<f32>>, BankError> {
        let blob: Option<Vec<u8>> = self
            .conn()
            .query_row(
                "SELECT vector FROM embeddings WHERE model = ?1 AND text_hash = ?2",
                params![model, text_hash(text)],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        Ok(blob.map(|b| from_blob(&b)))
    }

    #[allow(clippy::type_complexity)]
    fn cached(
        &self,
        model: &str,
        texts: &[String],
        fetch: &mut dyn FnMut(&[String]) -> Result<Vec<Vec<f32>>, BankError>,
    ) -> Result<Vec<Vec<f32>>, BankError> {
        let mut out: Vec<Option<Vec<f32>>> = Vec::with_capacity(texts.len());
        for text in texts {
            out.push(self.cached_embedding(model, text)?);
        }
        let mut missing: Vec<String> = Vec::new();
        for (text, v) in texts.iter().zip(&out) {
            if v.is_none() && !missing.contains(text) {
                missing.push(text.clone());
            }
        }
        let mut fetched: Vec<Vec<f32>> = Vec::with_capacity(missing.len());
        for batch in missing.chunks(EMBED_BATCH) {
            let vectors = fetch(batch)?;
            if vectors.len() != batch.len() {
                return Err(BankError::EmbeddingCount {
                    model: model.to_string(),
                    vectors: vectors.len(),
                    texts: batch.len(),
                });
            }
            for (text, vector) in batch.iter().zip(&vectors) {
                self.conn()
                    .execute(
                        "INSERT OR REPLACE INTO embeddings (model, text_hash, vector)
                         VALUES (?1, ?2, ?3)",
                        params![model, text_hash(text), to_blob(vector)],
                    )
                    .map_err(|e| self.sql(e))?;
            }
            fetched.extend(vectors);
        }
        for (text, slot) in texts.iter().zip(out.iter_mut()) {
            if slot.is_none() {
                if let Some(pos) = missing.iter().position(|m| m == text) {
                    *slot = Some(fetched[pos].clone());
                }
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_and_blobs() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 1.0]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 1.0]), 0.0);
        let v = vec![1.5f32, -0.25, 3.0e-8];
        assert_eq!(from_blob(&to_blob(&v)), v);
    }
}
