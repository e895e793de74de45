//! [`LlmProposer`]: the three code-writing roles.

use super::{feedback_text, llm_error, profile_text};
use crate::proposer::{Proposal, Proposer, RemovalRequest, RewriteRequest, TilingEditRequest};
use crate::session::Action;
use crate::session::NoCandidate;
use crate::ProposeError;
use ascendopt_llm::client::{LlmClient, Message};
use ascendopt_llm::edits::{apply_blocks, parse_blocks};
use ascendopt_llm::prompts::{self, show_files, Template};
use ascendopt_motif::{registry, SiteState, Sources};
use ascendopt_op::tiling::TilingSource;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Earlier attempts shown in a prompt.
const FEEDBACK_LINES: usize = 12;

/// The LLM proposer.
pub struct LlmProposer {
    client: Arc<LlmClient>,
    /// Immediate re-asks after an answer with no applicable edit (each
    /// failed answer is still returned, and charged, as its own proposal).
    pub repairs: u32,
}

impl LlmProposer {
    /// A proposer over `client`, with one repair turn.
    pub fn new(client: Arc<LlmClient>) -> LlmProposer {
        LlmProposer { client, repairs: 1 }
    }
}

/// A line `KEY: value` of an answer (first occurrence, case-insensitive
/// key, markdown emphasis stripped).
fn field(answer: &str, key: &str) -> Option<String> {
    answer.lines().find_map(|line| {
        let t = line.trim().trim_start_matches(['*', '#', '-', ' ']);
        let (k, v) = t.split_once(':')?;
        let k = k.trim().trim_matches('*').trim();
        (k.eq_ignore_ascii_case(key)).then(|| v.trim().trim_matches('*').trim().to_string())
    })
}

fn files_of(sources: &Sources) -> BTreeMap<String, String> {
    sources
        .files()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

/// The answer's edits applied to `current`: the new sources, or why none.
pub fn apply_answer(current: &Sources, answer: &str) -> Result<(Sources, String), NoCandidate> {
    let parsed = parse_blocks(answer);
    if parsed.blocks.is_empty() && parsed.problems.is_empty() {
        return Err(NoCandidate::no_edit(
            "the answer has no SEARCH/REPLACE edit block",
        ));
    }
    let applied = apply_blocks(&files_of(current), &parsed);
    if !applied.changed() {
        let outside = !applied.rejected.is_empty() && applied.rejected.iter().all(|r| r.outside);
        return Err(NoCandidate {
            reason: format!(
                "no edit block applied: {}",
                if applied.rejected.is_empty() {
                    "the edits change nothing".to_string()
                } else {
                    applied.rejection_text()
                }
            ),
            outside,
        });
    }
    let mut out = current.clone();
    for (path, text) in &applied.files {
        if current.get(path) != Some(text.as_str()) {
            // Every path here is confined (`apply_blocks`); `set` checks
            // again.
            out.set(path, text.clone()).map_err(|e| NoCandidate {
                reason: e.to_string(),
                outside: true,
            })?;
        }
    }
    let note = if applied.rejected.is_empty() {
        String::new()
    } else {
        format!(" (rejected: {})", applied.rejection_text())
    };
    Ok((out, note))
}

impl LlmProposer {
    /// Asks `template` (role `role`), applies the answer, and on an answer
    /// with no applicable edit asks again with the reason, up to
    /// `self.repairs` times. `check` may reject applied sources (tiling
    /// confinement). Returns one proposal per answer.
    #[allow(clippy::too_many_arguments)]
    fn ask(
        &self,
        role: &str,
        op: &str,
        template: Template,
        vars: &[(&str, &str)],
        current: &Sources,
        action_of: &dyn Fn(&str, String) -> Action,
        check: &dyn Fn(&Sources) -> Result<(), Unconfined>,
    ) -> Result<Vec<Proposal>, ProposeError> {
        let system = prompts::SYSTEM.render(&[]).map_err(llm_error)?;
        let user = template.render(vars).map_err(llm_error)?;
        let mut messages = vec![Message::system(system), Message::user(user)];
        let mut out = Vec::new();
        for turn in 0..=self.repairs {
            let reply = self.client.chat(role, op, &messages).map_err(llm_error)?;
            let answer = reply.content;
            let result = apply_answer(current, &answer).and_then(|(s, note)| {
                check(&s)
                    .map(|()| (s, note))
                    .map_err(|e| NoCandidate::no_edit(e.to_string()))
            });
            match result {
                Ok((sources, note)) => {
                    let summary =
                        field(&answer, "SUMMARY").unwrap_or_else(|| format!("{role} edit"));
                    out.push(Proposal {
                        action: action_of(&answer, format!("{summary}{note}")),
                        candidate: Ok(sources),
                    });
                    break;
                }
                Err(reason) => {
                    let summary = field(&answer, "SUMMARY")
                        .unwrap_or_else(|| format!("{role} answer without an applicable edit"));
                    out.push(Proposal {
                        action: action_of(&answer, summary),
                        candidate: Err(reason.clone()),
                    });
                    if turn < self.repairs {
                        messages.push(Message {
                            role: "assistant".into(),
                            content: answer,
                        });
                        messages.push(Message::user(format!(
                            "Your edit could not be applied: {reason}\nAnswer again in the required format, with SEARCH text copied exactly from the current sources."
                        )));
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The motifs the inverse agent may name: every engine motif not removed
/// yet, the ones the engine detects in the kernel marked.
fn motif_menu(current: &Sources, removed: &[String]) -> (String, Vec<String>) {
    let mut lines = Vec::new();
    let mut tags = Vec::new();
    for motif in registry() {
        let tag = motif.tag();
        if removed.iter().any(|r| r == tag) {
            continue;
        }
        let info = motif.describe();
        let present: Vec<String> = motif
            .detect(current)
            .into_iter()
            .filter(|s| s.state == SiteState::Present)
            .map(|s| format!("{}:{} ({})", s.file, s.line, s.note))
            .collect();
        let status = if present.is_empty() {
            "not detected by the static scan".to_string()
        } else {
            format!("present at {}", present.join("; "))
        };
        lines.push(format!("- {tag}: {} [{status}]", info.title));
        tags.push(tag.to_string());
    }
    (lines.join("\n"), tags)
}

/// The evolvable tiling region(s) of the host sources: (file, region
/// text), or None when the package has none.
fn tiling_regions(sources: &Sources) -> Option<(String, String)> {
    for (path, text) in sources.host_files() {
        let Ok(ts) = TilingSource::parse(Path::new(path), text) else {
            continue;
        };
        if ts.regions.is_empty() {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        let mut region = String::new();
        for (begin, end) in &ts.regions {
            for line in lines.iter().take(*end).skip(begin.saturating_sub(1)) {
                region.push_str(line);
                region.push('\n');
            }
        }
        return Some((path.to_string(), region));
    }
    None
}

/// Why an applied edit of the tiling agent is refused: it reaches outside
/// the tiling region. Its message is the repair feedback the model reads.
#[derive(Debug, thiserror::Error)]
enum Unconfined {
    /// Another file changed.
    #[error("the edit changes {changed}; only the tiling region of {file} may change")]
    OtherFile {
        /// The file that changed.
        changed: String,
        /// The file whose region may change.
        file: String,
    },
    /// The file with the region is gone.
    #[error("{file} disappeared")]
    Disappeared {
        /// The file.
        file: String,
    },
    /// The edited file's regions no longer parse.
    #[error("the edited tiling region does not parse: {source}")]
    Unparsable {
        /// Why.
        source: ascendopt_op::error::OpError,
    },
    /// A line outside the region changed.
    #[error("the edit changes {file} outside the ascendopt:tiling-begin/end region")]
    Outside {
        /// The file.
        file: String,
    },
}

/// Whether `after` differs from `before` only inside the tiling regions
/// of `file` (and nowhere else).
fn confined_to_tiling(before: &Sources, after: &Sources, file: &str) -> Result<(), Unconfined> {
    for changed in after.changed_files(before) {
        if changed != file {
            return Err(Unconfined::OtherFile {
                changed,
                file: file.to_string(),
            });
        }
    }
    let (Some(old), Some(new)) = (before.get(file), after.get(file)) else {
        return Err(Unconfined::Disappeared {
            file: file.to_string(),
        });
    };
    let outside = |text: &str| -> Result<Vec<String>, Unconfined> {
        let ts = TilingSource::parse(Path::new(file), text)
            .map_err(|source| Unconfined::Unparsable { source })?;
        let mut keep = Vec::new();
        let mut inside = false;
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if ts.regions.iter().any(|(b, _)| *b == n) {
                inside = true;
                keep.push("<region>".to_string());
            }
            if !inside {
                keep.push(line.to_string());
            }
            if ts.regions.iter().any(|(_, e)| *e == n) {
                inside = false;
            }
        }
        Ok(keep)
    };
    let (a, b) = (outside(old)?, outside(new)?);
    if a != b {
        return Err(Unconfined::Outside {
            file: file.to_string(),
        });
    }
    Ok(())
}

impl Proposer for LlmProposer {
    fn name(&self) -> &str {
        "llm"
    }

    fn removals(&mut self, req: &RemovalRequest<'_>) -> Result<Vec<Proposal>, ProposeError> {
        let (menu, tags) = motif_menu(req.current, req.removed);
        if tags.is_empty() {
            return Ok(Vec::new());
        }
        let removed = if req.removed.is_empty() {
            "none".to_string()
        } else {
            req.removed.join(", ")
        };
        let files = show_files(req.current.files());
        let feedback = feedback_text(req.feedback, FEEDBACK_LINES);
        let action_of = |answer: &str, summary: String| {
            let motif = field(answer, "MOTIF")
                .map(|m| m.trim_matches('`').trim().to_ascii_lowercase())
                .filter(|m| !m.is_empty());
            Action {
                proposer: "llm".into(),
                motif,
                summary,
                entries: Vec::new(),
            }
        };
        let mut proposals = self.ask(
            "inverse",
            req.op,
            prompts::INVERSE,
            &[
                ("op", req.op),
                ("motifs", &menu),
                ("removed", &removed),
                ("feedback", &feedback),
                ("files", &files),
            ],
            req.current,
            &action_of,
            &|_| Ok(()),
        )?;
        // A removal must name a motif of the menu: the chain records it and
        // the bank files the entry under it.
        for p in &mut proposals {
            if p.candidate.is_ok() {
                match &p.action.motif {
                    Some(m) if tags.contains(m) => {}
                    Some(m) if req.removed.contains(m) => {
                        p.candidate = Err(NoCandidate::no_edit(format!(
                            "motif {m} was already removed in this chain"
                        )));
                    }
                    Some(_) => {}
                    None => {
                        p.candidate = Err(NoCandidate::no_edit(
                            "the answer names no motif (a line `MOTIF: <tag>` is required)",
                        ));
                    }
                }
            }
        }
        Ok(proposals)
    }

    fn rewrites(&mut self, req: &RewriteRequest<'_>) -> Result<Vec<Proposal>, ProposeError> {
        let d = req.diagnosis;
        let diagnosis = format!(
            "{} ({}). Evidence: {}. Code features: {}.",
            d.text,
            d.kind,
            d.rule,
            if d.code_features.is_empty() {
                "none".to_string()
            } else {
                d.code_features.join(", ")
            }
        );
        let entries = if req.entries.is_empty() {
            "none (work from the diagnosis alone)".to_string()
        } else {
            req.entries
                .iter()
                .map(|s| {
                    let e = &s.entry;
                    format!(
                        "#### Entry {} — {} (motif {}, from {}{})\nBottleneck: {}\nReuse when: {}\nAvoid when: {}\nExpected effect: {}\nDiff (slow → fast):\n```diff\n{}\n```",
                        s.id.0,
                        e.title,
                        e.motif,
                        e.source.op,
                        match (e.slow_us, e.fast_us) {
                            (Some(a), Some(b)) if b > 0.0 => format!(", {:.2}x", a / b),
                            _ => String::new(),
                        },
                        e.bottleneck,
                        e.applicability.reuse_when.join("; "),
                        e.applicability.avoid_when.join("; "),
                        e.expected_effect,
                        e.diff.trim_end()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        let files = show_files(req.current.files());
        let feedback = feedback_text(req.feedback, FEEDBACK_LINES);
        let known: Vec<(i64, String)> = req
            .entries
            .iter()
            .map(|s| (s.id.0, s.entry.motif.clone()))
            .collect();
        let action_of = |answer: &str, summary: String| {
            let named: Vec<i64> = field(answer, "ENTRIES")
                .map(|v| {
                    v.split(|c: char| !c.is_ascii_digit())
                        .filter_map(|t| t.parse().ok())
                        .filter(|id| known.iter().any(|(k, _)| k == id))
                        .collect()
                })
                .unwrap_or_default();
            let ids: Vec<i64> = if named.is_empty() {
                known.iter().map(|(k, _)| *k).collect()
            } else {
                named
            };
            let motif = ids
                .first()
                .and_then(|id| known.iter().find(|(k, _)| k == id))
                .map(|(_, m)| m.clone())
                .or_else(|| d.motifs.first().cloned());
            Action {
                proposer: "llm".into(),
                motif,
                summary,
                entries: ids,
            }
        };
        self.ask(
            "rewriter",
            req.op,
            prompts::REWRITER,
            &[
                ("op", req.op),
                ("diagnosis", &diagnosis),
                ("entries", &entries),
                ("feedback", &feedback),
                ("files", &files),
            ],
            req.current,
            &action_of,
            &|_| Ok(()),
        )
    }

    fn tiling_edits(&mut self, req: &TilingEditRequest<'_>) -> Result<Vec<Proposal>, ProposeError> {
        let Some((file, region)) = tiling_regions(req.current) else {
            return Ok(Vec::new());
        };
        let files = show_files(req.current.files());
        let feedback = feedback_text(req.feedback, FEEDBACK_LINES);
        let profile = profile_text(req.profile);
        let action_of = |_: &str, summary: String| Action {
            proposer: "llm".into(),
            motif: None,
            summary,
            entries: Vec::new(),
        };
        let current = req.current;
        let check = |s: &Sources| confined_to_tiling(current, s, &file);
        self.ask(
            "tiling_mutator",
            req.op,
            prompts::TILING_MUTATOR,
            &[
                ("op", req.op),
                ("region_file", &file),
                ("region", &region),
                ("profile", &profile),
                ("feedback", &feedback),
                ("files", &files),
            ],
            req.current,
            &action_of,
            &check,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_from_answer_lines() {
        let a = "Plan first.\n**MOTIF:** `double_buffer`\nSUMMARY: one buffer per queue\n";
        assert_eq!(field(a, "MOTIF").as_deref(), Some("`double_buffer`"));
        assert_eq!(field(a, "summary").as_deref(), Some("one buffer per queue"));
        assert_eq!(field(a, "ENTRIES"), None);
    }

    #[test]
    fn tiling_confinement() {
        let host = "int a = 1;\n// ascendopt:tiling-begin\nconstexpr int T = 4; // ascendopt:knob choices=4,8\nint pick(int n) { return n > 4 ? 8 : 4; }\n// ascendopt:tiling-end\nint z = 0;\n";
        let before =
            Sources::from_files([("op_host/h.cpp", host), ("op_kernel/k.cpp", "int k;\n")]);
        let mut inside = before.clone();
        inside
            .set("op_host/h.cpp", host.replace("n > 4", "n >= 4"))
            .unwrap();
        assert!(confined_to_tiling(&before, &inside, "op_host/h.cpp").is_ok());
        let mut outside = before.clone();
        outside
            .set("op_host/h.cpp", host.replace("int z = 0", "int z = 1"))
            .unwrap();
        let err = confined_to_tiling(&before, &outside, "op_host/h.cpp").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the edit changes op_host/h.cpp outside the ascendopt:tiling-begin/end region"
        );
        let mut kernel = before.clone();
        kernel.set("op_kernel/k.cpp", "int k2;\n".into()).unwrap();
        assert!(confined_to_tiling(&before, &kernel, "op_host/h.cpp").is_err());
        let (file, region) = tiling_regions(&before).unwrap();
        assert_eq!(file, "op_host/h.cpp");
        assert!(region.starts_with("// ascendopt:tiling-begin\n"));
        assert!(region.ends_with("// ascendopt:tiling-end\n"));
    }
}
