//! [`LlmDiagnoser`]: one bottleneck from the profile, the compiler
//! diagnostics and the code.

use super::{llm_error, profile_text};
use crate::diagnose::RuleDiagnoser;
use crate::diagnose::{DiagnoseRequest, Diagnoser, Diagnosis};
use crate::features::code_features;
use crate::ProposeError;
use ascendopt_bank::signature::ProfileSignature;
use ascendopt_llm::client::{LlmClient, Message};
use ascendopt_llm::json::{first_object, string_field, string_list};
use ascendopt_llm::prompts::{self, show_files};
use ascendopt_motif::registry;
use std::sync::Arc;

/// The LLM diagnoser. An answer without the JSON asked for falls back to
/// the rule diagnoser (its `rule` then says so).
pub struct LlmDiagnoser {
    client: Arc<LlmClient>,
    fallback: RuleDiagnoser,
}

impl LlmDiagnoser {
    /// A diagnoser over `client`.
    pub fn new(client: Arc<LlmClient>) -> LlmDiagnoser {
        LlmDiagnoser {
            client,
            fallback: RuleDiagnoser::new(),
        }
    }
}

impl Diagnoser for LlmDiagnoser {
    fn name(&self) -> &str {
        "llm"
    }

    fn diagnose(&mut self, req: &DiagnoseRequest<'_>) -> Result<Diagnosis, ProposeError> {
        let tags: Vec<&str> = registry().iter().map(|m| m.tag()).collect();
        let tags = tags.join(", ");
        let profile = profile_text(Some(req.profile));
        let files = show_files(req.sources.files());
        let compiler = if req.compiler_diagnostics.trim().is_empty() {
            "(none)"
        } else {
            req.compiler_diagnostics
        };
        let system = prompts::SYSTEM.render(&[]).map_err(llm_error)?;
        let user = prompts::DIAGNOSER
            .render(&[
                ("op", req.op),
                ("profile", &profile),
                ("compiler", compiler),
                ("files", &files),
                ("motif_tags", &tags),
            ])
            .map_err(llm_error)?;
        let reply = self
            .client
            .chat(
                "diagnoser",
                req.op,
                &[Message::system(system), Message::user(user)],
            )
            .map_err(llm_error)?;
        let parsed = first_object(&reply.content).and_then(|v| {
            let text = string_field(&v, "bottleneck")?;
            let kind = string_field(&v, "kind").unwrap_or_else(|_| "llm".into());
            Ok((
                kind,
                text,
                string_field(&v, "reasoning").unwrap_or_default(),
                string_list(&v, "motifs"),
            ))
        });
        // The measurement by source line, as the rule diagnoser states it:
        // the proposer sees the lines whichever diagnoser ran.
        let measured: Vec<String> = crate::diagnose::measured::findings(req.profile, req.sources)
            .into_iter()
            .take(5)
            .map(|f| f.sentence)
            .collect();
        let with_measured = |text: String| {
            if measured.is_empty() {
                text
            } else {
                format!("{text} Measured: {}", measured.join("; "))
            }
        };
        match parsed {
            Ok((kind, text, reasoning, motifs)) => Ok(Diagnosis {
                kind: kind
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_lowercase()
                        } else {
                            '_'
                        }
                    })
                    .collect(),
                text: with_measured(text),
                rule: format!("llm: {reasoning}"),
                signature: ProfileSignature::from_profile(req.profile).ok(),
                code_features: code_features(req.sources),
                motifs: motifs
                    .into_iter()
                    .map(|m| m.to_ascii_lowercase())
                    .filter(|m| registry().iter().any(|r| r.tag() == m))
                    .collect(),
            }),
            Err(why) => {
                let mut d = self.fallback.diagnose(req)?;
                d.rule = format!("llm answer unusable ({why}); rules: {}", d.rule);
                Ok(d)
            }
        }
    }
}
