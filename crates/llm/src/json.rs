//! Pulling a JSON object out of a model's answer (which may wrap it in a
//! code fence or surround it with prose).

/// Why a model's answer gave no usable JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonAnswerError {
    /// No `{` starts a complete JSON object.
    #[error("the answer holds no JSON object")]
    NoObject,
    /// A field the caller needs is missing, not a string, or empty.
    #[error("the JSON answer has no non-empty string field `{0}`")]
    MissingField(String),
}

/// The first JSON object in `text` (the first `{` from which a complete
/// JSON value parses), or why there is none.
pub fn first_object(text: &str) -> Result<serde_json::Value, JsonAnswerError> {
    for (i, _) in text.match_indices('{') {
        let mut stream =
            serde_json::Deserializer::from_str(&text[i..]).into_iter::<serde_json::Value>();
        if let Some(Ok(value)) = stream.next() {
            if value.is_object() {
                return Ok(value);
            }
        }
    }
    Err(JsonAnswerError::NoObject)
}

/// A string field, trimmed, or an error naming it.
pub fn string_field(value: &serde_json::Value, name: &str) -> Result<String, JsonAnswerError> {
    value
        .get(name)
        .and_then(|v| v.as_str())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| JsonAnswerError::MissingField(name.to_string()))
}

/// A list of strings (a single string is taken as a one-element list;
/// missing gives an empty list).
pub fn string_list(value: &serde_json::Value, name: &str) -> Vec<String> {
    match value.get(name) {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_objects_in_prose_and_fences() {
        let v = first_object("Sure.\n```json\n{\"a\": {\"b\": 1}, \"c\": \"}\"}\n```\n").unwrap();
        assert_eq!(v["a"]["b"], 1);
        assert_eq!(v["c"], "}");
        let v = first_object("{broken {\"x\": [1]} tail").unwrap();
        assert_eq!(v["x"][0], 1);
        assert_eq!(first_object("no json here"), Err(JsonAnswerError::NoObject));
        assert_eq!(
            first_object("{\"unterminated\": ").unwrap_err().to_string(),
            "the answer holds no JSON object"
        );
        assert_eq!(string_list(&v, "x"), Vec::<String>::new());
        let w = serde_json::json!({"l": ["a", " b ", ""], "s": "one"});
        assert_eq!(string_list(&w, "l"), ["a", "b"]);
        assert_eq!(string_list(&w, "s"), ["one"]);
        assert_eq!(
            string_field(&w, "missing").unwrap_err().to_string(),
            "the JSON answer has no non-empty string field `missing`"
        );
    }
}
