//! Distillation: turning a verified removal (slow kernel, fast kernel,
//! evidence) into the text fields of an experience entry. The built-in
//! distiller fills them from the motif's description; the LLM distiller
//! (LLM issue) writes them from the diff and the evidence.

use crate::features::lacking_phrase;
use crate::ProposeError;
use ascendopt_bank::entry::Applicability;
use ascendopt_bank::text;
use ascendopt_motif::by_tag;

/// What a distiller sees: the inverted edit (slow → fast) and its evidence.
#[derive(Debug, Clone)]
pub struct DistillRequest<'a> {
    /// The operator it came from.
    pub op: &'a str,
    /// The motif tag the removal took out (None when unknown).
    pub motif: Option<&'a str>,
    /// Unified diff, slow → fast.
    pub diff: &'a str,
    /// Slow and fast median latencies, µs.
    pub slow_us: f64,
    /// Fast median latency, µs.
    pub fast_us: f64,
    /// Profile fields that moved: (name, slow value, fast value).
    pub moved: &'a [(String, f64, f64)],
}

/// The text fields of an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryText {
    /// One line: the optimisation.
    pub title: String,
    /// The bottleneck it removes.
    pub bottleneck: String,
    /// When to reuse it and when not to.
    pub applicability: Applicability,
    /// The expected effect.
    pub expected_effect: String,
    /// Retrieval keywords.
    pub keywords: Vec<String>,
}

/// Writes entries' text.
pub trait Distiller {
    /// Stable name (`builtin`, `llm`).
    fn name(&self) -> &str;
    /// The entry's text fields.
    fn distill(&mut self, req: &DistillRequest<'_>) -> Result<EntryText, ProposeError>;
}

/// The built-in distiller: the entry's text comes from the removed motif's
/// own description ([`ascendopt_motif::Motif::describe`]) plus the measured
/// evidence; no network.
///
/// The applicability is written so that retrieval can match it against
/// [`crate::features::code_features`]: the first `reuse_when` sentence
/// names the motif's lacking phrase ([`lacking_phrase`], e.g.
/// `single-buffer`), and the `avoid_when` text is split into one sentence
/// per condition, none of which names that phrase (an avoid sentence that
/// did would make retrieval drop the entry for exactly the kernels it is
/// about).
#[derive(Debug, Clone, Default)]
pub struct BuiltinDistiller;

impl BuiltinDistiller {
    /// A built-in distiller.
    pub fn new() -> BuiltinDistiller {
        BuiltinDistiller
    }
}

/// Splits a description into one condition per sentence, at `;` and at
/// `, or ` (the motif descriptions list alternatives that way).
fn conditions(text: &str) -> Vec<String> {
    text.split(';')
        .flat_map(|part| part.split(", or "))
        .map(|s| s.trim().trim_end_matches('.').trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The words of a profile field name that a diagnosis would use
/// (`aiv_mte2_ratio` → `mte2`).
fn field_words(name: &str) -> Vec<String> {
    text::plain_words(name)
        .into_iter()
        .filter(|w| !matches!(w.as_str(), "aiv" | "aic" | "ratio" | "us" | "time"))
        .collect()
}

impl Distiller for BuiltinDistiller {
    fn name(&self) -> &str {
        "builtin"
    }

    fn distill(&mut self, req: &DistillRequest<'_>) -> Result<EntryText, ProposeError> {
        let refuse = |message: String| ProposeError::fatal("builtin distiller", message);
        let tag = req
            .motif
            .ok_or_else(|| refuse("the removal names no motif".into()))?;
        let motif = by_tag(tag).ok_or_else(|| refuse(format!("unknown motif {tag:?}")))?;
        let info = motif.describe();
        let lacking = lacking_phrase(tag);
        let speedup = if req.fast_us > 0.0 {
            req.slow_us / req.fast_us
        } else {
            f64::NAN
        };

        let reuse_when = vec![format!(
            "the kernel lacks {} ({lacking}): {}",
            tag.replace('_', " "),
            info.reuse_when
        )];
        let avoid_when: Vec<String> = conditions(info.avoid_when)
            .into_iter()
            .filter(|s| !text::mentions(s, lacking))
            .collect();

        // What moved, biggest relative change first, in words.
        let mut moved: Vec<&(String, f64, f64)> = req.moved.iter().collect();
        let rel = |m: &(String, f64, f64)| {
            let scale = m.1.abs().max(m.2.abs());
            if scale > 0.0 {
                (m.1 - m.2).abs() / scale
            } else {
                0.0
            }
        };
        moved.sort_by(|a, b| rel(b).total_cmp(&rel(a)).then(a.0.cmp(&b.0)));
        let moved_text: Vec<String> = moved
            .iter()
            .take(4)
            .map(|(name, slow, fast)| format!("{name} {slow:.3} -> {fast:.3}"))
            .collect();
        let mut expected_effect = format!(
            "{} Measured on {}: {:.3} us -> {:.3} us ({speedup:.2}x)",
            info.expected_effect, req.op, req.slow_us, req.fast_us
        );
        if !moved_text.is_empty() {
            expected_effect.push_str(&format!("; profile {}", moved_text.join(", ")));
        }
        expected_effect.push('.');

        let mut keywords: Vec<String> = info.keywords.iter().map(|k| k.to_string()).collect();
        keywords.push(tag.to_string());
        keywords.push(lacking.to_string());
        for (name, _, _) in moved.iter().take(3) {
            keywords.extend(field_words(name));
        }
        let mut seen = std::collections::BTreeSet::new();
        keywords.retain(|k| seen.insert(k.to_lowercase()));

        Ok(EntryText {
            title: info.title.to_string(),
            bottleneck: info.bottleneck.to_string(),
            applicability: Applicability {
                reuse_when,
                avoid_when,
            },
            expected_effect,
            keywords,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendopt_motif::registry;

    #[test]
    fn every_motif_distils_into_text_that_retrieval_can_match() {
        let mut d = BuiltinDistiller::new();
        let moved = vec![
            ("aiv_mte2_ratio".to_string(), 0.9, 0.6),
            ("Task Duration(us)".to_string(), 30.0, 20.0),
        ];
        for motif in registry() {
            let tag = motif.tag();
            let text = d
                .distill(&DistillRequest {
                    op: "add_custom",
                    motif: Some(tag),
                    diff: "--- a/x\n+++ b/x\n",
                    slow_us: 30.0,
                    fast_us: 20.0,
                    moved: &moved,
                })
                .unwrap();
            let lacking = lacking_phrase(tag);
            assert!(
                text.applicability
                    .reuse_when
                    .iter()
                    .any(|s| text::mentions(s, lacking)),
                "{tag}: {:?}",
                text.applicability
            );
            assert!(
                !text
                    .applicability
                    .avoid_when
                    .iter()
                    .any(|s| text::mentions(s, lacking)),
                "{tag}: {:?}",
                text.applicability
            );
            assert!(!text.applicability.avoid_when.is_empty(), "{tag}");
            assert!(
                text.expected_effect.contains("1.50x"),
                "{}",
                text.expected_effect
            );
            assert!(text
                .expected_effect
                .contains("Task Duration(us) 30.000 -> 20.000"));
            assert!(text.keywords.iter().any(|k| k == tag));
            assert!(
                text.keywords.iter().any(|k| k.eq_ignore_ascii_case("mte2")),
                "{:?}",
                text.keywords
            );
            assert_eq!(text.title, motif.describe().title);
        }
    }

    #[test]
    fn a_removal_without_a_known_motif_is_refused() {
        let mut d = BuiltinDistiller::new();
        let req = DistillRequest {
            op: "x",
            motif: None,
            diff: "",
            slow_us: 2.0,
            fast_us: 1.0,
            moved: &[],
        };
        assert!(d.distill(&req).is_err());
        let req = DistillRequest {
            motif: Some("no_such_motif"),
            ..req
        };
        assert!(d.distill(&req).is_err());
    }
}
