//! Text normalisation shared by the full-text index, the queries and the
//! applicability filters.
//!
//! The index uses SQLite's `porter unicode61` tokenizer, which splits on
//! anything but letters and digits and stems English words. Before text
//! reaches it, [`index_text`] adds what that tokenizer cannot do:
//! - identifiers are also split at case changes (`DoubleBuffer` → also
//!   `double buffer`, `InitBuffer` → also `init buffer`), so API names match
//!   prose;
//! - runs of CJK characters (the guide is Chinese) become overlapping
//!   bigrams (`双缓冲` → `双缓 缓冲`), the usual way to index unsegmented
//!   Chinese.
//!
//! Queries go through the same function, so both sides agree.

/// English words that carry no retrieval signal.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "into",
    "is", "it", "its", "of", "on", "or", "so", "than", "that", "the", "their", "then", "there",
    "this", "to", "was", "were", "when", "which", "while", "with", "not", "no", "but", "all",
];

fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{f900}'..='\u{faff}'
        | '\u{3040}'..='\u{30ff}'
        | '\u{ac00}'..='\u{d7af}')
}

/// Splits an ASCII identifier at case changes: `DoubleBuffer` →
/// `[Double, Buffer]`, `UBFusion` → `[UB, Fusion]`, `MTE2` → `[MTE2]`.
fn camel_parts(word: &str) -> Vec<&str> {
    let bytes = word.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..bytes.len() {
        let prev = bytes[i - 1];
        let cur = bytes[i];
        let next_lower = bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
        let boundary = (cur.is_ascii_uppercase()
            && (prev.is_ascii_lowercase() || prev.is_ascii_digit()))
            || (cur.is_ascii_uppercase() && prev.is_ascii_uppercase() && next_lower);
        if boundary {
            parts.push(&word[start..i]);
            start = i;
        }
    }
    parts.push(&word[start..]);
    parts
}

/// Normalised tokens of `text`, in order, lower case: each ASCII word,
/// then its case-change parts when it has several; CJK bigrams.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_word = |word: &mut String, out: &mut Vec<String>| {
        if word.is_empty() {
            return;
        }
        out.push(word.to_ascii_lowercase());
        let parts = camel_parts(word);
        if parts.len() > 1 {
            out.extend(parts.iter().map(|p| p.to_ascii_lowercase()));
        }
        word.clear();
    };
    let flush_cjk = |cjk: &mut Vec<char>, out: &mut Vec<String>| {
        match cjk.len() {
            0 => {}
            1 => out.push(cjk[0].to_string()),
            _ => out.extend(cjk.windows(2).map(|w| w.iter().collect::<String>())),
        }
        cjk.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            flush_cjk(&mut cjk, &mut out);
            word.push(c);
        } else if is_cjk(c) {
            flush_word(&mut word, &mut out);
            cjk.push(c);
        } else {
            flush_word(&mut word, &mut out);
            flush_cjk(&mut cjk, &mut out);
        }
    }
    flush_word(&mut word, &mut out);
    flush_cjk(&mut cjk, &mut out);
    out
}

/// The text stored in the full-text index for `text`.
pub fn index_text(text: &str) -> String {
    tokens(text).join(" ")
}

/// The distinct query terms of `text`: [`tokens`] without stop words and
/// one-letter ASCII words, first occurrence order.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tokens(text) {
        let short = t.len() < 2 && t.is_ascii();
        if short || STOPWORDS.contains(&t.as_str()) || out.contains(&t) {
            continue;
        }
        out.push(t);
    }
    out
}

/// An FTS5 MATCH expression that matches any of `terms` (each quoted, so
/// no term is read as an operator); `None` when there are none.
pub fn fts_any(terms: &[String]) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "")))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// Lower-case words (letters and digits) of `text`, for the applicability
/// filters: `"single-buffer"` → `[single, buffer]`.
pub fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether every word of `feature` occurs as a word of `sentence`.
pub fn mentions(sentence: &str, feature: &str) -> bool {
    let wanted = plain_words(feature);
    if wanted.is_empty() {
        return false;
    }
    let have = plain_words(sentence);
    wanted.iter().all(|w| have.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_split_at_case_changes() {
        assert_eq!(
            tokens("DoubleBuffer InitBuffer"),
            [
                "doublebuffer",
                "double",
                "buffer",
                "initbuffer",
                "init",
                "buffer"
            ]
        );
        assert_eq!(
            tokens("UBFusion MTE2-bound"),
            ["ubfusion", "ub", "fusion", "mte2", "bound"]
        );
        assert_eq!(tokens("double_buffer"), ["double", "buffer"]);
    }

    #[test]
    fn cjk_runs_become_bigrams() {
        assert_eq!(
            tokens("使能DoubleBuffer机制"),
            ["使能", "doublebuffer", "double", "buffer", "机制"]
        );
        assert_eq!(tokens("搬运较大"), ["搬运", "运较", "较大"]);
        assert_eq!(tokens("核 x"), ["核", "x"]);
    }

    #[test]
    fn query_terms_drop_stopwords_and_repeats() {
        assert_eq!(
            query_terms("MTE2-bound, copies not overlapped with compute, single buffer; a buffer"),
            [
                "mte2",
                "bound",
                "copies",
                "overlapped",
                "compute",
                "single",
                "buffer"
            ]
        );
        assert_eq!(fts_any(&[]), None);
        assert_eq!(
            fts_any(&["a\"b".to_string(), "c".to_string()]).unwrap(),
            "\"ab\" OR \"c\""
        );
    }

    #[test]
    fn mentions_needs_every_feature_word() {
        assert!(mentions(
            "the kernel uses a single buffer per queue",
            "single-buffer"
        ));
        assert!(!mentions("the kernel uses a single queue", "single-buffer"));
        assert!(!mentions("anything", "--"));
    }
}
