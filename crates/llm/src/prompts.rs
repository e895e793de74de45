//! The role prompts. Each is a Markdown file under `crates/llm/prompts/`,
//! compiled in with `include_str!`, with `{{name}}` placeholders that
//! [`Template::render`] fills in one pass (values are not scanned again,
//! so kernel code containing braces is safe). A placeholder without a value
//! is an error, never silently left in the prompt.
//!
//! Two variables are common to every template and filled by
//! [`Template::render`] unless given: `{{apis}}` (the simulator's AscendC
//! APIs, [`crate::apis::prompt_text`]) and `{{edit_format}}` (how to write
//! SEARCH/REPLACE blocks).

use crate::error::LlmError;

/// A prompt template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// Its name (the file stem).
    pub name: &'static str,
    /// Its text.
    pub text: &'static str,
}

/// The system message of every role.
pub const SYSTEM: Template = Template {
    name: "system",
    text: include_str!("../prompts/system.md"),
};
/// Rewind's inverse agent: remove exactly one named motif.
pub const INVERSE: Template = Template {
    name: "inverse",
    text: include_str!("../prompts/inverse.md"),
};
/// The distiller: fill an entry's fields from the diff and evidence.
pub const DISTILLER: Template = Template {
    name: "distiller",
    text: include_str!("../prompts/distiller.md"),
};
/// The diagnoser: one bottleneck from profile, diagnostics and code.
pub const DIAGNOSER: Template = Template {
    name: "diagnoser",
    text: include_str!("../prompts/diagnoser.md"),
};
/// Stage I's rewriter: apply the retrieved entries.
pub const REWRITER: Template = Template {
    name: "rewriter",
    text: include_str!("../prompts/rewriter.md"),
};
/// Stage II's tiling mutator: edit only the evolvable region.
pub const TILING_MUTATOR: Template = Template {
    name: "tiling_mutator",
    text: include_str!("../prompts/tiling_mutator.md"),
};
/// The coder-plus-judge baseline's judge.
pub const JUDGE: Template = Template {
    name: "judge",
    text: include_str!("../prompts/judge.md"),
};
/// The coder-plus-judge baseline's coder.
pub const CODER: Template = Template {
    name: "coder",
    text: include_str!("../prompts/coder.md"),
};
/// The edit-format paragraph (`{{edit_format}}`).
pub const EDIT_FORMAT: &str = include_str!("../prompts/edit_format.md");

/// Every role template.
pub const ALL: [Template; 8] = [
    SYSTEM,
    INVERSE,
    DISTILLER,
    DIAGNOSER,
    REWRITER,
    TILING_MUTATOR,
    JUDGE,
    CODER,
];

impl Template {
    /// The placeholders the template uses, in order of first use.
    pub fn variables(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        let mut rest = self.text;
        while let Some(open) = rest.find("{{") {
            let after = &rest[open + 2..];
            match after.find("}}") {
                Some(close) => {
                    let name = after[..close].trim();
                    if !out.contains(&name) {
                        out.push(name);
                    }
                    rest = &after[close + 2..];
                }
                None => break,
            }
        }
        out
    }

    /// The text with every `{{name}}` replaced by its value from `vars`
    /// (or the common `apis` / `edit_format`).
    pub fn render(&self, vars: &[(&str, &str)]) -> Result<String, LlmError> {
        let apis = crate::apis::prompt_text();
        let mut out = String::with_capacity(self.text.len() + 1024);
        let mut rest = self.text;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                out.push_str(&rest[open..]);
                rest = "";
                break;
            };
            let name = after[..close].trim();
            let value = match vars.iter().find(|(k, _)| *k == name) {
                Some((_, v)) => *v,
                None if name == "apis" => apis.as_str(),
                None if name == "edit_format" => EDIT_FORMAT.trim_end(),
                None => {
                    return Err(LlmError::Template {
                        template: self.name.to_string(),
                        var: name.to_string(),
                    })
                }
            };
            out.push_str(value);
            rest = &after[close + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Sources as the prompts show them: each file under a `### path` header
/// in a fenced block.
pub fn show_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (path, text) in files {
        out.push_str("### ");
        out.push_str(path);
        out.push_str("\n```cpp\n");
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("```\n\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_renders_with_its_variables_and_nothing_is_left() {
        for t in ALL {
            let vars: Vec<&str> = t.variables();
            let owned: Vec<(String, String)> = vars
                .iter()
                .filter(|v| **v != "apis" && **v != "edit_format")
                .map(|v| (v.to_string(), format!("<{v} value {{{{not_a_var}}}}>")))
                .collect();
            let pairs: Vec<(&str, &str)> = owned
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            let text = t.render(&pairs).unwrap();
            for (k, _) in &owned {
                assert!(
                    text.contains(&format!("<{k} value")),
                    "{} lacks {k}",
                    t.name
                );
            }
            assert!(
                !text.contains("{{") || text.contains("{{not_a_var}}"),
                "{}",
                t.name
            );
        }
        // Roles that write code carry the API list and the edit format.
        for t in [INVERSE, REWRITER, TILING_MUTATOR, CODER] {
            let text = t.render(&owned_dummy(t)).unwrap();
            assert!(text.contains("DataCopy"), "{} lacks the API list", t.name);
            assert!(
                text.contains("<<<<<<< SEARCH"),
                "{} lacks the edit format",
                t.name
            );
        }
    }

    fn owned_dummy(t: Template) -> Vec<(&'static str, &'static str)> {
        t.variables()
            .into_iter()
            .filter(|v| *v != "apis" && *v != "edit_format")
            .map(|v| (v, "x"))
            .collect()
    }

    #[test]
    fn a_missing_variable_is_an_error() {
        let err = INVERSE.render(&[]).unwrap_err();
        assert!(matches!(err, LlmError::Template { .. }), "{err}");
    }
}
