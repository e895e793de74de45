//! [`LlmDistiller`]: an entry's text fields from the diff and the
//! evidence.

use super::llm_error;
use crate::distill::{BuiltinDistiller, DistillRequest, Distiller, EntryText};
use crate::features::lacking_phrase;
use crate::ProposeError;
use ascendopt_bank::entry::Applicability;
use ascendopt_bank::text::mentions;
use ascendopt_llm::client::{LlmClient, Message};
use ascendopt_llm::json::{first_object, string_field, string_list};
use ascendopt_llm::prompts;
use std::sync::Arc;

/// Longest diff shown to the model, bytes.
const MAX_DIFF: usize = 16_000;

/// The LLM distiller. For a known motif the first `reuse_when` sentence
/// always names the motif's lacking phrase (and no `avoid_when` sentence
/// does), as with the built-in distiller, so that retrieval by code
/// features finds the entry. An answer without the JSON asked for falls
/// back to the built-in distiller.
pub struct LlmDistiller {
    client: Arc<LlmClient>,
    fallback: BuiltinDistiller,
}

impl LlmDistiller {
    /// A distiller over `client`.
    pub fn new(client: Arc<LlmClient>) -> LlmDistiller {
        LlmDistiller {
            client,
            fallback: BuiltinDistiller::new(),
        }
    }
}

impl Distiller for LlmDistiller {
    fn name(&self) -> &str {
        "llm"
    }

    fn distill(&mut self, req: &DistillRequest<'_>) -> Result<EntryText, ProposeError> {
        let mut diff = req.diff.to_string();
        if diff.len() > MAX_DIFF {
            let mut cut = MAX_DIFF;
            while !diff.is_char_boundary(cut) {
                cut -= 1;
            }
            diff.truncate(cut);
            diff.push_str("\n... (truncated)");
        }
        let moved = if req.moved.is_empty() {
            "(none beyond noise)".to_string()
        } else {
            req.moved
                .iter()
                .map(|(name, slow, fast)| format!("- {name}: {slow:.4} → {fast:.4}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let (slow, fast) = (format!("{:.3}", req.slow_us), format!("{:.3}", req.fast_us));
        let system = prompts::SYSTEM.render(&[]).map_err(llm_error)?;
        let user = prompts::DISTILLER
            .render(&[
                ("op", req.op),
                ("motif", req.motif.unwrap_or("unknown")),
                ("slow_us", &slow),
                ("fast_us", &fast),
                ("moved", &moved),
                ("diff", &diff),
            ])
            .map_err(llm_error)?;
        let reply = self
            .client
            .chat(
                "distiller",
                req.op,
                &[Message::system(system), Message::user(user)],
            )
            .map_err(llm_error)?;
        let parsed = first_object(&reply.content).and_then(|v| {
            Ok(EntryText {
                title: string_field(&v, "title")?,
                bottleneck: string_field(&v, "bottleneck")?,
                applicability: Applicability {
                    reuse_when: string_list(&v, "reuse_when"),
                    avoid_when: string_list(&v, "avoid_when"),
                },
                expected_effect: string_field(&v, "expected_effect")?,
                keywords: string_list(&v, "keywords"),
            })
        });
        let mut text = match parsed {
            Ok(t) => t,
            Err(_) => return self.fallback.distill(req),
        };
        if let Some(tag) = req.motif {
            let lacking = lacking_phrase(tag);
            if lacking != "unknown-motif" {
                if !text
                    .applicability
                    .reuse_when
                    .first()
                    .is_some_and(|s| mentions(s, lacking))
                {
                    text.applicability.reuse_when.insert(
                        0,
                        format!("the kernel lacks {} ({lacking})", tag.replace('_', " ")),
                    );
                }
                text.applicability
                    .avoid_when
                    .retain(|s| !mentions(s, lacking));
                if !text.keywords.iter().any(|k| k == tag) {
                    text.keywords.push(tag.to_string());
                }
            }
        }
        Ok(text)
    }
}
