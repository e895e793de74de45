//! A scripted OpenAI-protocol server on 127.0.0.1 for tests: real HTTP/1.1
//! over loopback (`std::net`), JSON bodies in the chat-completions format.
//! POST requests are answered from a queue of scripted replies (status,
//! headers, body, delay) in order; `GET .../models` answers a model list
//! without using the queue. `POST .../embeddings` takes its reply from the
//! embeddings queue when that holds one, else, when the server has an
//! embedder ([`ScriptedServer::start_with_embedder`]), answers in the
//! OpenAI embeddings format with the embedder's vectors of the request's
//! `input` texts, else from the main queue. Every request is recorded. One thread per
//! connection; bounded in connections and lifetime; stops when dropped.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Scripted {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
}

impl Scripted {
    /// A 200 chat completion whose message content is `content`.
    pub fn content(content: &str) -> Scripted {
        Scripted::content_with_usage(content, 120, 40)
    }

    /// A 200 chat completion with this usage.
    pub fn content_with_usage(content: &str, prompt: u64, completion: u64) -> Scripted {
        let body = serde_json::json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1,
            "model": "scripted",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop"
            }],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}
        });
        Scripted {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// A 200 embeddings answer with these vectors and usage.
    pub fn embeddings(vectors: &[Vec<f32>], tokens: u64) -> Scripted {
        let data: Vec<_> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| serde_json::json!({"object": "embedding", "index": i, "embedding": v}))
            .collect();
        let body = serde_json::json!({
            "object": "list",
            "data": data,
            "model": "scripted-embed",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}
        });
        Scripted {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// A reply with this status and raw body.
    pub fn status(status: u16, body: &str) -> Scripted {
        Scripted {
            status,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Scripted {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Answers only after `delay`.
    pub fn delayed(mut self, delay: Duration) -> Scripted {
        self.delay = delay;
        self
    }
}

/// A request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub body: String,
    pub at: Instant,
}

impl Seen {
    /// The body as JSON (Null when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The text of the last user message of a chat request.
    pub fn last_user_message(&self) -> String {
        let json = self.json();
        json["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string()
    }
}

pub struct ScriptedServer {
    addr: SocketAddr,
    embed_script: Arc<Mutex<VecDeque<Scripted>>>,
    script: Arc<Mutex<VecDeque<Scripted>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

const MAX_CONNECTIONS: usize = 200;
const LIFETIME: Duration = Duration::from_secs(120);

/// Vectors for the `input` texts of an embeddings request.
pub type EmbedFn = dyn Fn(&[String]) -> Vec<Vec<f32>> + Send + Sync;

struct Shared {
    embed_script: Arc<Mutex<VecDeque<Scripted>>>,
    embedder: Option<Arc<EmbedFn>>,
    script: Arc<Mutex<VecDeque<Scripted>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
}

fn handle(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut content_length = 0usize;
    let mut authorization = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
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
    let body = String::from_utf8_lossy(&body).into_owned();
    shared.seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path: path.clone(),
        authorization,
        body: body.clone(),
        at: Instant::now(),
    });
    let embed_scripted = if method == "POST" && path.ends_with("/embeddings") {
        shared.embed_script.lock().unwrap().pop_front()
    } else {
        None
    };
    let reply = if method == "GET" && path.ends_with("/models") {
        Scripted::status(
            200,
            r#"{"object":"list","data":[{"id":"scripted","object":"model"}]}"#,
        )
    } else if let Some(r) = embed_scripted {
        r
    } else if let (true, Some(embedder)) = (path.ends_with("/embeddings"), &shared.embedder) {
        let json: serde_json::Value =
            serde_json::from_str(&body).unwrap_or(serde_json::Value::Null);
        let inputs: Vec<String> = json["input"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default();
        Scripted::embeddings(&embedder(&inputs), inputs.len() as u64 * 5)
    } else {
        shared
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Scripted::status(599, "{\"error\":\"script exhausted\"}"))
    };
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
    std::thread::sleep(reply.delay);
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    let mut stream = stream;
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    // The client may have given up (time-out): ignore write errors.
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(reply.body.as_bytes());
    let _ = stream.flush();
    Ok(())
}

impl ScriptedServer {
    pub fn start(script: Vec<Scripted>) -> ScriptedServer {
        ScriptedServer::start_inner(script, None)
    }

    /// A server that answers embeddings requests with `embedder`'s vectors
    /// (after any replies in the embeddings queue).
    pub fn start_with_embedder(
        script: Vec<Scripted>,
        embedder: impl Fn(&[String]) -> Vec<Vec<f32>> + Send + Sync + 'static,
    ) -> ScriptedServer {
        ScriptedServer::start_inner(script, Some(Arc::new(embedder)))
    }

    fn start_inner(script: Vec<Scripted>, embedder: Option<Arc<EmbedFn>>) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let embed_script = Arc::new(Mutex::new(VecDeque::new()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let shared = Shared {
                embed_script: Arc::clone(&embed_script),
                embedder,
                script: Arc::clone(&script),
                seen: Arc::clone(&seen),
                in_flight: Arc::clone(&in_flight),
                max_in_flight: Arc::clone(&max_in_flight),
            };
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let shared = Arc::new(shared);
                let deadline = Instant::now() + LIFETIME;
                let mut served = 0;
                let mut workers = Vec::new();
                while served < MAX_CONNECTIONS
                    && Instant::now() < deadline
                    && !stop.load(Ordering::SeqCst)
                {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            served += 1;
                            let _ = stream.set_nonblocking(false);
                            let shared = Arc::clone(&shared);
                            workers.push(std::thread::spawn(move || {
                                let _ = handle(stream, &shared);
                            }));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
                for w in workers {
                    let _ = w.join();
                }
            })
        };
        ScriptedServer {
            addr,
            embed_script,
            script,
            seen,
            in_flight,
            max_in_flight,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Appends replies to the script.
    pub fn push(&self, replies: Vec<Scripted>) {
        self.script.lock().unwrap().extend(replies);
    }

    /// Appends replies to the embeddings queue (used before the embedder).
    pub fn push_embeddings(&self, replies: Vec<Scripted>) {
        self.embed_script.lock().unwrap().extend(replies);
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap().len()
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// POST requests so far.
    pub fn posts(&self) -> Vec<Seen> {
        self.requests()
            .into_iter()
            .filter(|s| s.method == "POST")
            .collect()
    }

    /// The largest number of replies being delayed at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A loopback address where nothing listens (a port bound then released).
pub fn dead_base_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/v1")
}
