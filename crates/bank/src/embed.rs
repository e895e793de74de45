//! Optional dense embeddings through an OpenAI-compatible endpoint
//! (`POST {base}/v1/embeddings`, body `{"model", "input": [...]}`, answer
//! `{"data": [{"index", "embedding": [...]}]}`), cached in the bank file.
//!
//! Two ways to get vectors: an [`EmbeddingConfig`] (this module's own
//! HTTP request, [`Bank::embeddings`]) or any [`Embedder`] (the agent's LLM
//! client, with its retries and call log, [`Bank::embeddings_with`]).
//!
//! Invariants:
//! - Nothing here runs unless the caller passes an [`EmbeddingConfig`] or
//!   an [`Embedder`]; plain [`crate::store::Bank::search`] never touches
//!   the network.
//! - The cache is keyed by (model, SHA-256 of the text): a text is sent to
//!   the endpoint at most once per model and bank file.

use crate::error::BankError;
use crate::store::Bank;
use rusqlite::{params, OptionalExtension};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Where to get embeddings from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingConfig {
    /// Server root (`http://127.0.0.1:8000`) or API root ending in `/v1`
    /// (`https://api.example.com/v1`); `/v1/embeddings` or `/embeddings`
    /// is appended accordingly.
    pub base_url: String,
    /// Model name sent in the request (`text-embedding-3-small`).
    pub model: String,
    /// Environment variable holding the API key, sent as a bearer token;
    /// `None` sends no key (local servers).
    pub api_key_env: Option<String>,
    /// Time limit of one request.
    pub timeout: Duration,
}

impl EmbeddingConfig {
    /// The URL posted to.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/embeddings")
        } else {
            format!("{base}/v1/embeddings")
        }
    }
}

/// A source of embeddings: the caller's client for an embeddings API.
pub trait Embedder {
    /// The model name (part of the cache key).
    fn model(&self) -> &str;
    /// Where the vectors come from (for error messages).
    fn endpoint(&self) -> String;
    /// One vector per text, in order.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String>;
}

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

/// Posts `texts` to the endpoint and returns one vector per text, in
/// order.
pub fn fetch(config: &EmbeddingConfig, texts: &[String]) -> Result<Vec<Vec<f32>>, BankError> {
    let url = config.endpoint();
    let fail = |reason: String| BankError::Embeddings {
        url: url.clone(),
        reason,
    };
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let key = match &config.api_key_env {
        Some(var) => {
            Some(std::env::var(var).map_err(|_| BankError::MissingApiKey { var: var.clone() })?)
        }
        None => None,
    };
    let body = serde_json::json!({ "model": config.model, "input": texts }).to_string();
    let agent = ureq::AgentBuilder::new().timeout(config.timeout).build();
    let mut request = agent.post(&url).set("Content-Type", "application/json");
    if let Some(key) = &key {
        request = request.set("Authorization", &format!("Bearer {key}"));
    }
    let response = match request.send_string(&body) {
        Ok(r) => r,
        Err(ureq::Error::Status(code, r)) => {
            let text = r.into_string().unwrap_or_default();
            let excerpt: String = text.chars().take(200).collect();
            return Err(fail(format!("HTTP {code}: {excerpt}")));
        }
        Err(e) => return Err(fail(e.to_string())),
    };
    let text = response
        .into_string()
        .map_err(|e| fail(format!("reading the answer: {e}")))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| fail(format!("answer is not JSON: {e}")))?;
    let data = json
        .get("data")
        .and_then(|d| d.as_array())
        .ok_or_else(|| fail("answer has no `data` array".into()))?;
    let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(|i| i.as_u64())
            .map_or(position, |i| usize::try_from(i).unwrap_or(usize::MAX));
        let slot = out.get_mut(index).ok_or_else(|| {
            fail(format!(
                "answer has index {index} for {} inputs",
                texts.len()
            ))
        })?;
        let vector = item
            .get("embedding")
            .and_then(|e| e.as_array())
            .ok_or_else(|| fail(format!("item {position} has no `embedding` array")))?
            .iter()
            .map(|x| x.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| fail(format!("item {position} has a non-number in its embedding")))?;
        *slot = Some(vector);
    }
    out.into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or_else(|| fail(format!("answer has no embedding for input {i}"))))
        .collect()
}

fn text_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
    /// Embeddings of `texts` under `config.model`: cached ones from the
    /// bank file, the others fetched (in requests of at most
    /// [`EMBED_BATCH`] texts) and cached.
    pub fn embeddings(
        &self,
        config: &EmbeddingConfig,
        texts: &[String],
    ) -> Result<Vec<Vec<f32>>, BankError> {
        self.cached(&config.model, texts, &mut |batch| fetch(config, batch))
    }

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
                .map_err(|reason| BankError::Embeddings {
                    url: embedder.endpoint(),
                    reason,
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
                return Err(BankError::Embeddings {
                    url: model.to_string(),
                    reason: format!("{} vectors for {} texts", vectors.len(), batch.len()),
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
    fn endpoint_appends_the_openai_path() {
        let mut c = EmbeddingConfig {
            base_url: "http://127.0.0.1:8000/".into(),
            model: "m".into(),
            api_key_env: None,
            timeout: Duration::from_secs(1),
        };
        assert_eq!(c.endpoint(), "http://127.0.0.1:8000/v1/embeddings");
        c.base_url = "https://api.example.com/v1".into();
        assert_eq!(c.endpoint(), "https://api.example.com/v1/embeddings");
    }

    #[test]
    fn cosine_and_blobs() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 1.0]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 1.0]), 0.0);
        let v = vec![1.5f32, -0.25, 3.0e-8];
        assert_eq!(from_blob(&to_blob(&v)), v);
    }

    #[test]
    fn a_missing_key_variable_fails_before_any_request() {
        let c = EmbeddingConfig {
            // Port 9 (discard) on loopback: never contacted, the key check
            // comes first.
            base_url: "http://127.0.0.1:9".into(),
            model: "m".into(),
            api_key_env: Some("ASCENDOPT_BANK_TEST_UNSET_KEY_VAR".into()),
            timeout: Duration::from_secs(1),
        };
        match fetch(&c, &["x".to_string()]) {
            Err(BankError::MissingApiKey { var }) => {
                assert_eq!(var, "ASCENDOPT_BANK_TEST_UNSET_KEY_VAR")
            }
            other => panic!("{other:?}"),
        }
    }
}

/// A tiny OpenAI-protocol embeddings server on 127.0.0.1 for tests: plain
/// `std::net`, one thread, bounded in connections and time, stops by
/// itself (and when dropped).
#[cfg(test)]
pub(crate) mod test_server {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    /// What the server answers to a request's inputs.
    pub(crate) enum Reply {
        /// 200 with these vectors.
        Ok(Vec<Vec<f32>>),
        /// This status with this body.
        Status(u16, String),
    }

    /// A request the server saw.
    #[derive(Debug, Clone)]
    pub(crate) struct Seen {
        pub(crate) path: String,
        pub(crate) authorization: Option<String>,
        pub(crate) body: serde_json::Value,
    }

    pub(crate) struct EmbedServer {
        addr: std::net::SocketAddr,
        seen: Arc<Mutex<Vec<Seen>>>,
        stop: Arc<AtomicBool>,
        thread: Option<JoinHandle<()>>,
    }

    const MAX_CONNECTIONS: usize = 32;
    const LIFETIME: Duration = Duration::from_secs(30);

    fn handle(
        stream: TcpStream,
        answer: &dyn Fn(&[String]) -> Reply,
        seen: &Mutex<Vec<Seen>>,
    ) -> std::io::Result<()> {
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut request_line = String::new();
        reader.read_line(&mut request_line)?;
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .to_string();
        let mut content_length = 0usize;
        let mut authorization = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                let value = value.trim();
                if name.eq_ignore_ascii_case("content-length") {
                    content_length = value.parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("authorization") {
                    authorization = Some(value.to_string());
                }
            }
        }
        let mut body = vec![0u8; content_length];
        reader.read_exact(&mut body)?;
        let body: serde_json::Value =
            serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
        let inputs: Vec<String> = body["input"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default();
        seen.lock().unwrap().push(Seen {
            path,
            authorization,
            body,
        });
        let (status, text) = match answer(&inputs) {
            Reply::Ok(vectors) => {
                let data: Vec<_> = vectors
                    .iter()
                    .enumerate()
                    .map(|(i, v)| serde_json::json!({"object": "embedding", "index": i, "embedding": v}))
                    .collect();
                let json = serde_json::json!({
                    "object": "list", "data": data, "model": "toy",
                    "usage": {"prompt_tokens": 1, "total_tokens": 1}
                });
                (200, json.to_string())
            }
            Reply::Status(code, text) => (code, text),
        };
        let mut stream = stream;
        write!(
            stream,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        )?;
        stream.flush()
    }

    impl EmbedServer {
        pub(crate) fn start(answer: impl Fn(&[String]) -> Reply + Send + 'static) -> EmbedServer {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let addr = listener.local_addr().unwrap();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let stop = Arc::new(AtomicBool::new(false));
            let thread = {
                let seen = Arc::clone(&seen);
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let deadline = Instant::now() + LIFETIME;
                    let mut served = 0;
                    while served < MAX_CONNECTIONS
                        && Instant::now() < deadline
                        && !stop.load(Ordering::SeqCst)
                    {
                        match listener.accept() {
                            Ok((stream, _)) => {
                                served += 1;
                                let _ = stream.set_nonblocking(false);
                                let _ = handle(stream, &answer, &seen);
                            }
                            Err(_) => std::thread::sleep(Duration::from_millis(2)),
                        }
                    }
                })
            };
            EmbedServer {
                addr,
                seen,
                stop,
                thread: Some(thread),
            }
        }

        pub(crate) fn base_url(&self) -> String {
            format!("http://{}", self.addr)
        }

        pub(crate) fn requests(&self) -> Vec<Seen> {
            self.seen.lock().unwrap().clone()
        }
    }

    impl Drop for EmbedServer {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}
