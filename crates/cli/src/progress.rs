//! Progress for a log, not a terminal: when stderr is not a terminal (or
//! `CI=true`), a heartbeat thread prints one plain line every few seconds
//! (default 5 s, `ASCENDOPT_PROGRESS_SECS` to change it, at most 10 s
//! apart) with the phase, evaluations done of the total, evaluations
//! charged, the best result so far and the ETA, so a CI log shows life
//! during minutes of evaluations. On a terminal the heartbeat stays quiet
//! (the caller draws bars or per-attempt lines).
//!
//! A line reads
//! `progress 0:42 online: 12/48 evaluations (25%), 11 charged, best so far cos 1.086x (full), eta 2:06`.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Default seconds between two heartbeat lines.
pub const DEFAULT_SECS: u64 = 5;
/// Most seconds between two heartbeat lines.
pub const MAX_SECS: u64 = 10;

/// Whether progress goes to a log (plain lines) rather than a terminal.
pub fn plain_output() -> bool {
    use std::io::IsTerminal;
    let ci = std::env::var("CI")
        .map(|v| v == "true" || v == "1")
        .unwrap_or(false);
    ci || !std::io::stderr().is_terminal()
}

/// Seconds between heartbeat lines: `ASCENDOPT_PROGRESS_SECS` (1..=10),
/// else [`DEFAULT_SECS`].
fn interval() -> Duration {
    let secs = std::env::var("ASCENDOPT_PROGRESS_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_SECS, |s| s.clamp(1, MAX_SECS));
    Duration::from_secs(secs)
}

#[derive(Debug)]
struct State {
    phase: String,
    total: u64,
    done: u64,
    charged: Option<u64>,
    best: Option<String>,
    phase_started: Instant,
    started: Instant,
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

impl State {
    fn line(&self, now: Instant) -> String {
        let mut s = format!(
            "progress {} {}: {}/{} evaluations",
            clock(now - self.started),
            self.phase,
            self.done,
            self.total
        );
        if self.total > 0 {
            s.push_str(&format!(
                " ({:.0}%)",
                self.done.min(self.total) as f64 * 100.0 / self.total as f64
            ));
        }
        if let Some(c) = self.charged {
            s.push_str(&format!(", {c} charged"));
        }
        match &self.best {
            Some(b) => s.push_str(&format!(", best so far {b}")),
            None => s.push_str(", best so far -"),
        }
        let elapsed = now - self.phase_started;
        if self.done > 0 && self.total > self.done {
            let per = elapsed.as_secs_f64() / self.done as f64;
            let left = Duration::from_secs_f64(per * (self.total - self.done) as f64);
            s.push_str(&format!(", eta {}", clock(left)));
        } else if self.total > 0 && self.done >= self.total {
            s.push_str(", finishing");
        } else {
            s.push_str(", eta -");
        }
        s
    }
}

/// The heartbeat: a thread that prints [`State`] every interval until
/// dropped. Inert (no thread) on a terminal.
pub struct Heartbeat {
    state: Arc<Mutex<State>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    /// Starts the heartbeat (a thread only when [`plain_output`]).
    pub fn start(phase: &str, total: u64) -> Heartbeat {
        let now = Instant::now();
        let state = Arc::new(Mutex::new(State {
            phase: phase.to_string(),
            total,
            done: 0,
            charged: None,
            best: None,
            phase_started: now,
            started: now,
        }));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = plain_output().then(|| {
            let (state, stop) = (state.clone(), stop.clone());
            let every = interval();
            std::thread::spawn(move || {
                let (lock, cv) = &*stop;
                let Ok(mut stopped) = lock.lock() else {
                    return;
                };
                loop {
                    let Ok((guard, _)) = cv.wait_timeout(stopped, every) else {
                        return;
                    };
                    stopped = guard;
                    if *stopped {
                        return;
                    }
                    if let Ok(s) = state.lock() {
                        eprintln!("{}", s.line(Instant::now()));
                    }
                }
            })
        });
        Heartbeat {
            state,
            stop,
            thread,
        }
    }

    fn with(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
        }
    }

    /// A new phase of `total` evaluations.
    pub fn phase(&self, name: &str, total: u64) {
        self.with(|s| {
            s.phase = name.to_string();
            s.total = total;
            s.done = 0;
            s.charged = None;
            s.phase_started = Instant::now();
        });
    }

    /// Evaluations done in the phase (charged or answered from the store)
    /// and, when known, how many were charged.
    pub fn done(&self, done: u64, charged: Option<u64>) {
        self.with(|s| {
            s.done = done;
            s.charged = charged;
        });
    }

    /// The best result so far, in words (`cos 1.086x (full)`).
    pub fn best(&self, text: String) {
        self.with(|s| s.best = Some(text));
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        let (lock, cv) = &*self.stop;
        if let Ok(mut stopped) = lock.lock() {
            *stopped = true;
            cv.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_phase_done_charged_best_and_eta() {
        let t0 = Instant::now();
        let mut s = State {
            phase: "online".into(),
            total: 48,
            done: 12,
            charged: Some(11),
            best: Some("cos 1.086x (full)".into()),
            phase_started: t0,
            started: t0,
        };
        let line = s.line(t0 + Duration::from_secs(42));
        assert_eq!(
            line,
            "progress 0:42 online: 12/48 evaluations (25%), 11 charged, best so far cos 1.086x (full), eta 2:06"
        );
        s.done = 0;
        s.best = None;
        s.charged = None;
        assert!(s
            .line(t0 + Duration::from_secs(3))
            .ends_with("0/48 evaluations (0%), best so far -, eta -"));
        s.done = 48;
        assert!(s.line(t0).ends_with("finishing"));
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }
}
