//! Positions in op.toml: key path → line/column (for errors found after
//! deserialising) and byte offset → key path (for errors reported by the
//! TOML deserialiser with a span).

use crate::error::{KeyPath, OpError, PathSeg};
use std::ops::Range;
use std::path::Path;
use toml_edit::{ArrayOfTables, ImDocument, Item, Table, Value};

/// An op.toml text with its parsed, span-carrying document.
pub(crate) struct Locator<'a> {
    file: &'a Path,
    text: &'a str,
    doc: Option<ImDocument<&'a str>>,
}

#[derive(Clone, Copy)]
enum Node<'d> {
    Table(&'d Table),
    Aot(&'d ArrayOfTables),
    Value(&'d Value),
}

fn item_node(item: &Item) -> Option<Node<'_>> {
    match item {
        Item::None => None,
        Item::Value(v) => Some(Node::Value(v)),
        Item::Table(t) => Some(Node::Table(t)),
        Item::ArrayOfTables(a) => Some(Node::Aot(a)),
    }
}

impl<'a> Locator<'a> {
    pub(crate) fn new(file: &'a Path, text: &'a str) -> Locator<'a> {
        Locator {
            file,
            text,
            doc: ImDocument::parse(text).ok(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(crate) fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let column = before[line_start..].chars().count() + 1;
        (line, column)
    }

    /// The span of the deepest existing prefix of `path`: the key for a
    /// table entry, the element for an array index.
    pub(crate) fn span_of(&self, path: &KeyPath) -> Option<Range<usize>> {
        let doc = self.doc.as_ref()?;
        let mut node = Node::Table(doc.as_table());
        let mut best = None;
        for seg in &path.0 {
            let next = match (seg, node) {
                (PathSeg::Key(k), Node::Table(t)) => t
                    .get_key_value(k)
                    .map(|(key, item)| (key.span().or_else(|| item.span()), item_node(item))),
                (PathSeg::Key(k), Node::Value(Value::InlineTable(t))) => t
                    .get_key_value(k)
                    .map(|(key, item)| (key.span().or_else(|| item.span()), item_node(item))),
                (PathSeg::Index(i), Node::Aot(a)) => {
                    a.get(*i).map(|t| (t.span(), Some(Node::Table(t))))
                }
                (PathSeg::Index(i), Node::Value(Value::Array(a))) => {
                    a.get(*i).map(|v| (v.span(), Some(Node::Value(v))))
                }
                _ => None,
            };
            let Some((span, child)) = next else {
                break;
            };
            if span.is_some() {
                best = span;
            }
            match child {
                Some(c) => node = c,
                None => break,
            }
        }
        best
    }

    /// The most specific key path whose key or value span contains `offset`.
    pub(crate) fn path_at(&self, offset: usize) -> KeyPath {
        let mut best: Option<(usize, KeyPath)> = None;
        if let Some(doc) = &self.doc {
            search_table(doc.as_table(), offset, &KeyPath::root(), &mut best);
        }
        best.map(|(_, p)| p).unwrap_or_default()
    }

    /// A spec error at `path`, positioned where the path's item is.
    pub(crate) fn error(&self, path: KeyPath, message: impl Into<String>) -> OpError {
        let position = self.span_of(&path).map(|s| self.position(s.start));
        OpError::spec(self.file, position, path, message)
    }

    /// A spec error for a span reported by the TOML deserialiser.
    pub(crate) fn error_at_span(&self, span: Option<Range<usize>>, message: &str) -> OpError {
        let Some(span) = span else {
            return OpError::spec(self.file, None, KeyPath::root(), message);
        };
        let mut path = self.path_at(span.start);
        // "missing field `x`" points at the table that lacks it: name the
        // missing key in the path.
        if let Some(rest) = message.strip_prefix("missing field `") {
            if let Some(field) = rest.strip_suffix('`') {
                path = path.key(field);
            }
        }
        OpError::spec(self.file, Some(self.position(span.start)), path, message)
    }
}

fn consider(
    span: Option<Range<usize>>,
    offset: usize,
    path: &KeyPath,
    best: &mut Option<(usize, KeyPath)>,
) {
    if let Some(span) = span {
        if span.start <= offset && offset < span.end.max(span.start + 1) {
            let len = span.end - span.start;
            let better = match best {
                Some((best_len, best_path)) => {
                    len < *best_len || (len == *best_len && path.0.len() > best_path.0.len())
                }
                None => true,
            };
            if better {
                *best = Some((len, path.clone()));
            }
        }
    }
}

fn search_table(table: &Table, offset: usize, path: &KeyPath, best: &mut Option<(usize, KeyPath)>) {
    for (k, item) in table.iter() {
        let child = path.key(k);
        if let Some((key, _)) = table.get_key_value(k) {
            consider(key.span(), offset, &child, best);
        }
        search_item(item, offset, &child, best);
    }
}

fn search_item(item: &Item, offset: usize, path: &KeyPath, best: &mut Option<(usize, KeyPath)>) {
    match item {
        Item::None => {}
        Item::Value(v) => search_value(v, offset, path, best),
        Item::Table(t) => {
            consider(t.span(), offset, path, best);
            search_table(t, offset, path, best);
        }
        Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                let child = path.index(i);
                consider(t.span(), offset, &child, best);
                search_table(t, offset, &child, best);
            }
        }
    }
}

fn search_value(value: &Value, offset: usize, path: &KeyPath, best: &mut Option<(usize, KeyPath)>) {
    consider(value.span(), offset, path, best);
    match value {
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                search_value(v, offset, &path.index(i), best);
            }
        }
        Value::InlineTable(t) => {
            for (k, v) in t.iter() {
                let child = path.key(k);
                if let Some(key) = t.key(k) {
                    consider(key.span(), offset, &child, best);
                }
                search_value(v, offset, &child, best);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "[op]\nname = \"a\"\n\n[[cases]]\nname = \"c0\"\n\n[[cases]]\nname = \"c1\"\nshapes = [[4], [5, 6]]\nattrs = { value = 2.0 }\n";

    #[test]
    fn path_to_position() {
        let file = Path::new("x/op.toml");
        let loc = Locator::new(file, DOC);
        let p = KeyPath::root().key("cases").index(1).key("shapes");
        let span = loc.span_of(&p).unwrap();
        assert_eq!(loc.position(span.start), (9, 1));
        let p = KeyPath::root().key("cases").index(1).key("shapes").index(1);
        assert_eq!(loc.position(loc.span_of(&p).unwrap().start), (9, 16));
        let p = KeyPath::root()
            .key("cases")
            .index(1)
            .key("attrs")
            .key("value");
        assert_eq!(loc.position(loc.span_of(&p).unwrap().start), (10, 11));
        // A missing key falls back to its table.
        let p = KeyPath::root().key("cases").index(0).key("shapes");
        assert_eq!(loc.position(loc.span_of(&p).unwrap().start), (4, 1));
    }

    #[test]
    fn offset_to_path() {
        let file = Path::new("x/op.toml");
        let loc = Locator::new(file, DOC);
        let offset = DOC.find("[5, 6]").unwrap();
        assert_eq!(loc.path_at(offset).to_string(), "cases[1].shapes[1]");
        assert_eq!(loc.path_at(offset + 4).to_string(), "cases[1].shapes[1][1]");
        let offset = DOC.find("value").unwrap();
        assert_eq!(loc.path_at(offset).to_string(), "cases[1].attrs.value");
        let offset = DOC.find("\"a\"").unwrap();
        assert_eq!(loc.path_at(offset).to_string(), "op.name");
    }
}
