//! Edits of an op.toml file that keep its comments and layout: which cases
//! it holds. Every tool that writes a changed op.toml (a smaller copy for a
//! benchmark, a fixture with its own cases) goes through [`SpecEdit`]
//! rather than formatting TOML by hand; the result is checked by loading
//! it like any other package.

use crate::error::{KeyPath, OpError};
use std::path::{Path, PathBuf};
use toml_edit::{ArrayOfTables, DocumentMut, Item};

/// An op.toml file being edited.
#[derive(Debug, Clone)]
pub struct SpecEdit {
    file: PathBuf,
    doc: DocumentMut,
}

impl SpecEdit {
    /// Reads `file`.
    pub fn read(file: &Path) -> Result<SpecEdit, OpError> {
        let text = std::fs::read_to_string(file).map_err(|e| OpError::io("read", file, e))?;
        SpecEdit::parse(&text, file)
    }

    /// Parses `text`, the contents of `file`.
    pub fn parse(text: &str, file: &Path) -> Result<SpecEdit, OpError> {
        let doc = text.parse::<DocumentMut>().map_err(|e| {
            let position = e.span().map(|span| line_col(text, span.start));
            OpError::spec(file, position, KeyPath::root(), e.message().to_string())
        })?;
        Ok(SpecEdit {
            file: file.to_path_buf(),
            doc,
        })
    }

    fn cases_mut(&mut self) -> Result<&mut ArrayOfTables, OpError> {
        let file = self.file.clone();
        self.doc
            .get_mut("cases")
            .and_then(Item::as_array_of_tables_mut)
            .ok_or_else(|| {
                OpError::spec(
                    &file,
                    None,
                    KeyPath::root().key("cases"),
                    "cases are not written as [[cases]] tables",
                )
            })
    }

    /// Keeps the cases whose name `keep` accepts, in file order; returns
    /// how many are left.
    pub fn retain_cases(&mut self, keep: impl Fn(&str) -> bool) -> Result<usize, OpError> {
        let cases = self.cases_mut()?;
        cases.retain(|t| t.get("name").and_then(Item::as_str).is_some_and(&keep));
        Ok(cases.len())
    }

    /// Replaces every case by the `[[cases]]` tables of `cases_toml`.
    pub fn replace_cases(&mut self, cases_toml: &str) -> Result<(), OpError> {
        let new = SpecEdit::parse(cases_toml, &self.file)?;
        let new_cases = new
            .doc
            .get("cases")
            .and_then(Item::as_array_of_tables)
            .cloned()
            .ok_or_else(|| {
                OpError::spec(
                    &self.file,
                    None,
                    KeyPath::root().key("cases"),
                    "the replacement holds no [[cases]] table",
                )
            })?;
        *self.cases_mut()? = new_cases;
        Ok(())
    }

    /// The edited text.
    pub fn text(&self) -> String {
        self.doc.to_string()
    }

    /// Writes the edited text back to the file it was read from.
    pub fn write(&self) -> Result<(), OpError> {
        std::fs::write(&self.file, self.text()).map_err(|e| OpError::io("write", &self.file, e))
    }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"# The operator.
[op]
name = "add_custom"

# Small.
[[cases]]
name = "small"
shapes = [[8], [8]]

[[cases]]
name = "large" # the benchmark case
shapes = [[4096], [4096]]
"#;

    #[test]
    fn retain_keeps_comments_and_the_chosen_cases() {
        let mut edit = SpecEdit::parse(SPEC, Path::new("a/op.toml")).unwrap();
        assert_eq!(edit.retain_cases(|n| n == "small").unwrap(), 1);
        expect_test::expect![[r#"
            # The operator.
            [op]
            name = "add_custom"

            # Small.
            [[cases]]
            name = "small"
            shapes = [[8], [8]]
        "#]]
        .assert_eq(&edit.text());
    }

    #[test]
    fn replace_puts_the_new_cases_in_place_of_the_old() {
        let mut edit = SpecEdit::parse(SPEC, Path::new("a/op.toml")).unwrap();
        edit.replace_cases("[[cases]]\nname = \"only\"\nshapes = [[1], [1]]\n")
            .unwrap();
        expect_test::expect![[r#"
            # The operator.
            [op]
            name = "add_custom"
            [[cases]]
            name = "only"
            shapes = [[1], [1]]
        "#]]
        .assert_eq(&edit.text());
    }

    #[test]
    fn a_spec_without_case_tables_is_an_error_naming_the_file_and_key() {
        let mut edit = SpecEdit::parse("[op]\nname = \"x\"\n", Path::new("b/op.toml")).unwrap();
        let err = edit.retain_cases(|_| true).unwrap_err().to_string();
        assert_eq!(
            err,
            "b/op.toml: cases: cases are not written as [[cases]] tables"
        );
        let err = SpecEdit::parse("[op\n", Path::new("b/op.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("b/op.toml:1:"), "{err}");
    }
}
