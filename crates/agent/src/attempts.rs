//! The bookkeeping of a loop's attempts, shared by Stage I, Stage II,
//! Rewind and the baselines: which candidates were judged ([`Tried`]),
//! settling and reporting the session's last attempt ([`settle`],
//! [`notify`]), and whether one more is affordable ([`affordable`]).

use crate::session::{LogEntry, OpSession};
use crate::AgentError;
use ascendopt_harness::store::{SourceHash, Stage};
use ascendopt_motif::Sources;
use std::collections::BTreeSet;

/// Candidates judged in one optimisation, by a digest of their sources.
#[derive(Debug, Clone, Default)]
pub struct Tried {
    seen: BTreeSet<String>,
}

impl Tried {
    /// An empty set.
    pub fn new() -> Tried {
        Tried::default()
    }

    fn key(sources: &Sources) -> String {
        let mut text = String::new();
        for (path, body) in sources.files() {
            text.push_str(path);
            text.push('\0');
            text.push_str(body);
            text.push('\0');
        }
        SourceHash::of(&text).as_str().to_string()
    }

    /// Whether `sources` were judged already.
    pub fn contains(&self, sources: &Sources) -> bool {
        self.seen.contains(&Self::key(sources))
    }

    /// Records `sources` as judged; false when they were already.
    pub fn insert(&mut self, sources: &Sources) -> bool {
        self.seen.insert(Self::key(sources))
    }

    /// Number of distinct candidates judged.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// True when nothing was judged.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

/// Marks the session's last attempt and reports it to `on_attempt`.
pub fn settle(
    session: &mut OpSession<'_>,
    on_attempt: &mut dyn FnMut(&LogEntry),
    accepted: bool,
    reason: impl Into<String>,
) {
    session.settle_last(accepted, reason);
    notify(session, on_attempt);
}

/// Reports the session's last attempt to `on_attempt`.
pub fn notify(session: &OpSession<'_>, on_attempt: &mut dyn FnMut(&LogEntry)) {
    if let Some(e) = session.log().last() {
        on_attempt(e);
    }
}

/// Whether the session may judge `sources` now: budget left, or an
/// identical candidate judged before (free).
pub fn affordable(session: &OpSession<'_>, sources: &Sources) -> Result<bool, AgentError> {
    Ok(session.remaining(Stage::Online) > 0 || session.seen(sources)?)
}
