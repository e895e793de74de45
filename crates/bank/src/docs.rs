//! The documentation-derived bank (issue 6, item 5): entries built from a
//! tuning guide laid out like chapter 3.8 of the Ascend C guide, so that
//! it can be compared with a Rewind bank under the same retriever.
//!
//! The layout read: a folder tree of Markdown pages, one per best
//! practice, each starting with `# Title`, `> **Section**: 3.8.4.1` and
//! `---`; the text carries `<!-- page N -->` markers (the guide is a PDF
//! conversion) and `## 3.8.4.1 Title` headings. A page break may fall
//! anywhere, so the tail of one practice (often its example) sits at the
//! top of the next file. The importer therefore reads every page in path
//! order (each page number once), joins them into one stream and cuts the
//! stream at the numbered headings. Inside a practice, lines starting with
//! `【描述】`, `【反例】`, `【正例】`, `【优先级】`, `【总结】`, … open blocks.
//!
//! Each counter-example (`反例`) is paired with the next example (`正例`);
//! each pair gives one entry whose diff is counter-example → example (the
//! slow code to the fast one), whose bottleneck is the nearest preceding
//! description, and whose applicability is the description's first
//! sentence (reuse) and the bullets under a "注意" note (avoid). Code is
//! taken from fenced blocks and from code-looking lines outside them (the
//! conversion lost many fences and newlines; run-on code is cut back into
//! lines at runs of four spaces and at top-level `;`/`}` glued to the next
//! statement).
//!
//! Invariants:
//! - Reading is deterministic: the same folder gives the same entries in
//!   the same order.
//! - Every entry has origin `docs`, no latencies and a non-empty diff;
//!   practices without a usable pair are reported in
//!   [`DocsBank::skipped`], never silently turned into empty entries.

use crate::diff;
use crate::entry::{family_of, Applicability, Entry, Origin, Provenance, SourceOp};
use crate::error::BankError;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest bottleneck text kept, in characters.
const MAX_BOTTLENECK_CHARS: usize = 600;
/// Prose lines allowed between a "注意" note and its bullets.
const NOTE_WINDOW: usize = 3;
/// Most keywords taken from a diff.
const MAX_KEYWORDS: usize = 12;

/// Motif tags recognised in a practice's title (then its description),
/// first match wins.
const MOTIF_WORDS: &[(&str, &[&str])] = &[
    (
        "double_buffer",
        &["doublebuffer", "double buffer", "双缓冲"],
    ),
    (
        "count_mode",
        &["counter模式", "counter 模式", "counter mode"],
    ),
    ("strided_copy", &["非连续搬运", "减少搬运次数", "strided"]),
    (
        "tile_size",
        &["大的数据块", "搬运较大", "large copies", "large copy"],
    ),
    (
        "multi_core",
        &["负载均衡", "核数", "all cores", "load balanc"],
    ),
    ("fused_vec_ops", &["融合", "fusion", "fuse"]),
    ("buffer_reuse", &["复用", "reuse"]),
    ("hoist_invariant", &["循环外", "hoist"]),
    ("barrier_elim", &["同步", "barrier"]),
    ("tail_fold", &["尾块", "tail"]),
    ("vectorize_scalar", &["标量循环", "scalar loop"]),
];

/// A practice that gave no entry, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedSection {
    /// Section number (`3.8.5.2`).
    pub number: String,
    /// Its title.
    pub title: String,
    /// Why no entry was made.
    pub reason: String,
}

/// What [`from_docs`] read.
#[derive(Debug, Clone, PartialEq)]
pub struct DocsBank {
    /// The entries, in guide order.
    pub entries: Vec<Entry>,
    /// Practices with text but no usable counter-example/example pair.
    pub skipped: Vec<SkippedSection>,
}

/// One page file of the guide.
struct PageFile {
    /// Path relative to the guide folder, `/`-separated.
    rel: String,
    /// `# Title` of the file.
    title: Option<String>,
    /// `> **Section**:` of the file.
    section: Option<String>,
    /// Body after the header.
    body: String,
}

fn collect_md(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), BankError> {
    let entries = std::fs::read_dir(dir).map_err(|e| BankError::Guide {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    for entry in entries {
        let entry = entry.map_err(|e| BankError::Guide {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        let path = entry.path();
        if path.is_dir() {
            collect_md(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "md") {
            out.push(path);
        }
    }
    Ok(())
}

fn read_page_file(root: &Path, path: &Path) -> Result<PageFile, BankError> {
    let text = std::fs::read_to_string(path).map_err(|e| BankError::Guide {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let rel = path
        .strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    let lines: Vec<&str> = text.lines().collect();
    let mut title = None;
    let mut section = None;
    let mut body_start = 0;
    if lines.first().is_some_and(|l| l.starts_with("# ")) {
        title = lines.first().map(|l| l[2..].trim().to_string());
        // The header ends at the first `---` within a few lines.
        if let Some(end) = lines.iter().take(12).position(|l| l.trim() == "---") {
            for line in &lines[1..end] {
                if let Some(rest) = line.trim().strip_prefix("> **Section**:") {
                    section = Some(rest.trim().to_string());
                }
            }
            body_start = end + 1;
        } else {
            body_start = 1;
        }
    }
    Ok(PageFile {
        rel,
        title,
        section,
        body: lines[body_start.min(lines.len())..].join("\n"),
    })
}

/// `<!-- page N -->` → N.
fn page_marker(line: &str) -> Option<u32> {
    line.trim()
        .strip_prefix("<!-- page ")?
        .strip_suffix("-->")?
        .trim()
        .parse()
        .ok()
}

/// `## 3.8.4.1 Title` → ("3.8.4.1", "Title"); the number needs a dot.
fn numbered_heading(line: &str) -> Option<(String, String)> {
    let rest = line.trim_start().strip_prefix('#')?;
    let rest = rest.trim_start_matches('#').trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let number = rest[..end].trim_end_matches('.');
    if !number.contains('.') || number.starts_with('.') {
        return None;
    }
    Some((number.to_string(), rest[end..].trim().to_string()))
}

/// `【反例】rest` → ("反例", "rest"), for a marker opening the line.
fn marker(line: &str) -> Option<(String, String)> {
    let rest = line.trim_start().strip_prefix('【')?;
    let close = rest.find('】')?;
    let name = &rest[..close];
    if name.chars().count() > 12 {
        return None;
    }
    let after = rest[close + '】'.len_utf8()..]
        .trim_start_matches(['：', ':'])
        .trim();
    Some((name.to_string(), after.to_string()))
}

/// A numbered section of the stream.
struct Section {
    number: String,
    heading_title: String,
    lines: Vec<String>,
    files: BTreeSet<String>,
}

fn is_code_like(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() || t.ends_with('。') || t.ends_with('：') {
        return false;
    }
    t.starts_with("//")
        || t.starts_with("#include")
        || t.starts_with("#define")
        || t.contains(';')
        || t.contains('{')
        || t.contains('}')
}

/// Cuts a line of run-on code (newlines lost in conversion) back into
/// lines: at runs of 4+ spaces, and after a `;` or `}` at parenthesis
/// depth 0 glued to the next identifier.
fn reflow(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    let mut spaces = 0usize;
    let mut in_comment = false;
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            spaces += 1;
            current.push(c);
            continue;
        }
        // Indentation (spaces before anything else) stays.
        if spaces >= 4 && !current.trim().is_empty() {
            out.push(current.trim_end().to_string());
            current.clear();
            in_comment = false;
        }
        spaces = 0;
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            in_comment = true;
        }
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        current.push(c);
        let glued = chars
            .get(i + 1)
            .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_');
        if !in_comment && depth <= 0 && (c == ';' || c == '}') && glued {
            out.push(current.trim_end().to_string());
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim_end().to_string());
    }
    out
}

/// Code of a block: fenced lines as they are, code-looking lines outside
/// fences reflowed; prose, images and captions dropped.
fn block_code(lines: &[String]) -> String {
    let mut code = Vec::new();
    let mut fenced = false;
    for line in lines {
        let t = line.trim_start();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || (is_code_like(line) && !t.starts_with("![")) {
            code.extend(reflow(line));
        }
    }
    let mut text = code.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

/// Prose of a block, whitespace collapsed.
fn block_prose(lines: &[String]) -> String {
    let mut prose = Vec::new();
    let mut fenced = false;
    for line in lines {
        let t = line.trim();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced
            || t.is_empty()
            || is_code_like(t)
            || t.starts_with("![")
            || t.starts_with("<!--")
            || t.starts_with('图')
        {
            continue;
        }
        prose.push(t.to_string());
    }
    prose.join(" ")
}

/// The first sentence (up to `。` or `. `) of `text`.
fn first_sentence(text: &str) -> String {
    let cut = [
        text.find('。').map(|i| i + '。'.len_utf8()),
        text.find(". ").map(|i| i + 1),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(text.len());
    text[..cut].trim().to_string()
}

fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(max).collect();
        cut.push('…');
        cut
    }
}

/// Motif tag of a practice from its title, then its description.
fn classify(title: &str, description: &str) -> String {
    for text in [title, description] {
        let lower = text.to_lowercase();
        for (motif, words) in MOTIF_WORDS {
            if words.iter().any(|w| lower.contains(w)) {
                return (*motif).to_string();
            }
        }
    }
    "other".to_string()
}

/// API-looking identifiers (upper-case first letter, 4+ characters) of
/// the diff's changed lines, sorted.
fn diff_keywords(diff_text: &str) -> Vec<String> {
    let (removed, added) = diff::changed_lines(diff_text);
    let mut words = BTreeSet::new();
    for line in removed.into_iter().chain(added) {
        for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if word.len() >= 4 && word.starts_with(|c: char| c.is_ascii_uppercase()) {
                words.insert(word.to_string());
            }
        }
    }
    words.into_iter().take(MAX_KEYWORDS).collect()
}

/// Bullets under a line that mentions "注意" (a caution note): the first
/// run of bullets within [`NOTE_WINDOW`] prose lines after the note.
fn caution_bullets(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    // Prose lines still allowed before the bullets start.
    let mut window = 0usize;
    let mut collecting = false;
    for line in lines {
        let t = line.trim();
        if t.is_empty() || t.starts_with("<!--") {
            continue;
        }
        let bullet = ['●', '•', '-', '*']
            .iter()
            .find_map(|b| t.strip_prefix(*b))
            .map(str::trim);
        match bullet {
            Some(text) if window > 0 && !text.is_empty() => {
                out.push(text.to_string());
                collecting = true;
            }
            _ if t.contains("注意") && marker(t).is_none() => {
                window = NOTE_WINDOW;
                collecting = false;
            }
            _ if collecting => {
                window = 0;
                collecting = false;
            }
            _ => window = window.saturating_sub(1),
        }
    }
    out
}

/// Reads the guide under `dir` and joins its pages into numbered sections.
fn read_sections(dir: &Path) -> Result<(Vec<Section>, BTreeMap<String, String>), BankError> {
    if !dir.is_dir() {
        return Err(BankError::Guide {
            path: dir.to_path_buf(),
            reason: "not a folder".into(),
        });
    }
    let mut paths = Vec::new();
    collect_md(dir, &mut paths)?;
    let mut files = paths
        .iter()
        .map(|p| read_page_file(dir, p))
        .collect::<Result<Vec<_>, _>>()?;
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    // Clean titles of the files, by their section number.
    let titles: BTreeMap<String, String> = files
        .iter()
        .filter_map(|f| Some((f.section.clone()?, f.title.clone()?)))
        .collect();
    let mut seen_pages = BTreeSet::new();
    let mut sections: Vec<Section> = Vec::new();
    for file in &files {
        let mut skipping = false;
        for line in file.body.lines() {
            if let Some(page) = page_marker(line) {
                // A page already read (overlapping page ranges) is skipped.
                skipping = !seen_pages.insert(page);
                continue;
            }
            if skipping {
                continue;
            }
            if let Some((number, heading_title)) = numbered_heading(line) {
                sections.push(Section {
                    number,
                    heading_title,
                    lines: Vec::new(),
                    files: BTreeSet::from([file.rel.clone()]),
                });
                continue;
            }
            // Text before the first heading of the guide belongs to no
            // practice.
            if let Some(section) = sections.last_mut() {
                section.lines.push(line.to_string());
                section.files.insert(file.rel.clone());
            }
        }
    }
    Ok((sections, titles))
}

/// A block of a section: marker name ("" for the text before any marker)
/// and its lines (the marker line's rest first).
fn blocks(lines: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
    let mut fenced = false;
    for line in lines {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced {
            if let Some((name, rest)) = marker(line) {
                out.push((name, vec![rest]));
                continue;
            }
        }
        if let Some(last) = out.last_mut() {
            last.1.push(line.clone());
        }
    }
    out
}

/// Builds entries from the tuning guide under `dir` (module docs). Every
/// entry gets `created_ms` as its creation time.
pub fn from_docs(dir: &Path, created_ms: i64) -> Result<DocsBank, BankError> {
    let (sections, titles) = read_sections(dir)?;
    let mut bank = DocsBank {
        entries: Vec::new(),
        skipped: Vec::new(),
    };
    for section in &sections {
        let title = titles
            .get(&section.number)
            .cloned()
            .unwrap_or_else(|| section.heading_title.clone());
        let has_text = section.lines.iter().any(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with("<!--")
        });
        if !has_text {
            continue;
        }
        let skip = |reason: &str| SkippedSection {
            number: section.number.clone(),
            title: title.clone(),
            reason: reason.to_string(),
        };
        let blocks = blocks(&section.lines);
        let priority = blocks
            .iter()
            .find(|(n, _)| n == "优先级")
            .and_then(|(_, l)| l.first())
            .map(|p| p.trim().to_string());
        let summary = blocks
            .iter()
            .find(|(n, _)| n == "总结" || n == "性能对比" || n == "性能数据")
            .map(|(_, l)| first_sentence(&block_prose(l)))
            .filter(|s| !s.is_empty());
        let avoid_when = caution_bullets(&section.lines);
        let chapter = section
            .number
            .rsplit_once('.')
            .map_or(section.number.as_str(), |(head, _)| head);

        let mut description = String::new();
        let mut pending: Option<&Vec<String>> = None;
        let mut pairs: Vec<(String, &Vec<String>, &Vec<String>)> = Vec::new();
        for (name, lines) in &blocks {
            match name.as_str() {
                "描述" => description = block_prose(lines),
                "反例" => pending = Some(lines),
                "正例" => {
                    if let Some(counter) = pending.take() {
                        pairs.push((description.clone(), counter, lines));
                    }
                }
                _ => {}
            }
        }
        if pairs.is_empty() {
            bank.skipped.push(skip(
                "no counter-example (反例) followed by an example (正例)",
            ));
            continue;
        }
        let n_pairs = pairs.len();
        for (k, (description, counter, example)) in pairs.into_iter().enumerate() {
            let slow = block_code(counter);
            let fast = block_code(example);
            let pair_title = if n_pairs > 1 {
                format!("{title} ({})", k + 1)
            } else {
                title.clone()
            };
            if slow.is_empty() || fast.is_empty() {
                bank.skipped.push(SkippedSection {
                    reason: format!(
                        "pair {}: the {} has no code",
                        k + 1,
                        if slow.is_empty() {
                            "counter-example"
                        } else {
                            "example"
                        }
                    ),
                    ..skip("")
                });
                continue;
            }
            let diff_text = diff::unified(&format!("guide/{}.cpp", section.number), &slow, &fast);
            if diff_text.is_empty() {
                bank.skipped.push(SkippedSection {
                    reason: format!(
                        "pair {}: counter-example and example are the same code",
                        k + 1
                    ),
                    ..skip("")
                });
                continue;
            }
            let description = if description.is_empty() {
                block_prose(&blocks[0].1)
            } else {
                description
            };
            let motif = classify(&title, &description);
            let family = family_of(&motif)
                .map(str::to_string)
                .unwrap_or_else(|| format!("guide.{chapter}"));
            let mut reuse_when = Vec::new();
            let first = first_sentence(&description);
            if !first.is_empty() {
                reuse_when.push(first);
            }
            let counter_prose = first_sentence(&block_prose(counter));
            if !counter_prose.is_empty() {
                reuse_when.push(format!("code like the counter-example: {counter_prose}"));
            }
            let mut keywords = diff_keywords(&diff_text);
            if motif != "other" && !keywords.contains(&motif) {
                keywords.push(motif.clone());
            }
            let bottleneck = if description.is_empty() {
                pair_title.clone()
            } else {
                truncate_chars(&description, MAX_BOTTLENECK_CHARS)
            };
            let mut expected_effect = match &priority {
                Some(p) => format!("Guide priority: {p}."),
                None => "Guide gives no priority.".to_string(),
            };
            if let Some(s) = &summary {
                expected_effect.push(' ');
                expected_effect.push_str(s);
            }
            let entry = Entry {
                title: pair_title,
                bottleneck,
                applicability: Applicability {
                    reuse_when,
                    avoid_when: avoid_when.clone(),
                },
                expected_effect,
                diff: diff_text,
                motif,
                family,
                source: SourceOp {
                    op: format!("guide {}", section.number),
                    level: None,
                },
                slow_us: None,
                fast_us: None,
                profile_moved: BTreeMap::new(),
                signature: None,
                keywords,
                provenance: Provenance {
                    created_ms,
                    origin: Origin::Docs,
                    evidence: section.files.iter().map(|f| format!("guide:{f}")).collect(),
                },
            };
            entry.validate()?;
            bank.entries.push(entry);
        }
    }
    Ok(bank)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_markers_and_pages_parse() {
        assert_eq!(
            numbered_heading("## 3.8.4.1 使能DoubleBuffer"),
            Some(("3.8.4.1".into(), "使能DoubleBuffer".into()))
        );
        assert_eq!(numbered_heading("## Hardware Loop 编码规范"), None);
        assert_eq!(numbered_heading("## 3 章"), None);
        assert_eq!(
            marker("【优先级】：中"),
            Some(("优先级".into(), "中".into()))
        );
        assert_eq!(
            marker("【反例】调用多次搬运"),
            Some(("反例".into(), "调用多次搬运".into()))
        );
        assert_eq!(marker("//【反例】x"), None);
        assert_eq!(page_marker("<!-- page 577 -->"), Some(577));
        assert_eq!(page_marker("<!-- note -->"), None);
    }

    #[test]
    fn caution_bullets_follow_a_note_within_a_few_lines() {
        let lines: Vec<String> = [
            "●前面的列表不算",
            "需要注意：",
            "多数情况下有效。例如：",
            "●甲",
            "●乙",
            "正文继续。",
            "●不再收集",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(caution_bullets(&lines), ["甲", "乙"]);
    }

    #[test]
    fn run_on_code_is_cut_back_into_lines() {
        assert_eq!(
            reflow("void Init(){    a = 1;    b();}"),
            ["void Init(){", "a = 1;", "b();}"]
        );
        assert_eq!(
            reflow("SetMaskCount();SetVectorMask(n);for (i = 0; i < n; i++) {x;}Reset();"),
            [
                "SetMaskCount();",
                "SetVectorMask(n);",
                "for (i = 0; i < n; i++) {x;}",
                "Reset();"
            ]
        );
        // A comment swallows the rest of its line.
        assert_eq!(reflow("a(); // note;b();"), ["a(); // note;b();"]);
    }

    #[test]
    fn code_and_prose_are_told_apart() {
        let lines: Vec<String> = [
            "说明一句话。",
            "```cpp",
            "Add(z, x, y, n);",
            "```",
            "x = 1;    y = 2;",
            "![img](a.png)",
            "图3-1 流水图",
            "最后一句话",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(block_code(&lines), "Add(z, x, y, n);\nx = 1;\ny = 2;\n");
        assert_eq!(block_prose(&lines), "说明一句话。 最后一句话");
        assert_eq!(first_sentence("甲乙。丙丁。"), "甲乙。");
        assert_eq!(first_sentence("One. Two."), "One.");
        assert_eq!(classify("使能DoubleBuffer", ""), "double_buffer");
        assert_eq!(classify("标题", "使用Counter模式"), "count_mode");
        assert_eq!(classify("x", "y"), "other");
    }

    fn guide_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/guide")
    }

    #[test]
    fn small_guide_gives_the_expected_entries() {
        let bank = from_docs(&guide_dir(), 42).unwrap();
        let titles: Vec<&str> = bank.entries.iter().map(|e| e.title.as_str()).collect();
        assert_eq!(
            titles,
            ["开启双缓冲", "一次搬运更大的数据块", "减少非连续搬运的次数"]
        );

        let db = &bank.entries[0];
        assert_eq!(db.motif, "double_buffer");
        assert_eq!(db.family, "kernel.pipeline.double_buffer");
        assert_eq!(db.source.op, "guide 9.1.1");
        assert_eq!(db.source.level, None);
        assert_eq!(db.provenance.origin, Origin::Docs);
        assert_eq!(db.provenance.created_ms, 42);
        assert_eq!(db.slow_us, None);
        assert!(
            db.bottleneck.starts_with("搬入、计算、搬出串行执行时"),
            "{}",
            db.bottleneck
        );
        assert_eq!(
            db.applicability.reuse_when[0],
            "搬入、计算、搬出串行执行时，Vector单元在等待搬运期间空闲。"
        );
        assert_eq!(
            db.applicability.avoid_when,
            [
                "数据只有一块时，双缓冲没有可以重叠的下一块。",
                "计算远长于搬运时，收益很小。"
            ]
        );
        assert_eq!(
            db.expected_effect,
            "Guide priority: 高. 双缓冲让MTE2和Vector并行。"
        );
        // The example sits on the next page, at the top of the next file:
        // it still pairs with this practice's counter-example.
        assert_eq!(
            db.diff,
            "--- a/guide/9.1.1.cpp\n+++ b/guide/9.1.1.cpp\n@@ -1,4 +1,4 @@\n \
             void Init() {\n\
             -    pipe.InitBuffer(inQueue, 1, TILE * sizeof(half));\n\
             -    pipe.InitBuffer(outQueue, 1, TILE * sizeof(half));\n\
             +    pipe.InitBuffer(inQueue, 2, TILE * sizeof(half));\n\
             +    pipe.InitBuffer(outQueue, 2, TILE * sizeof(half));\n \
             }\n"
        );
        assert!(
            db.keywords.contains(&"InitBuffer".to_string()),
            "{:?}",
            db.keywords
        );
        assert!(db.keywords.contains(&"double_buffer".to_string()));
        assert!(db
            .provenance
            .evidence
            .iter()
            .any(|e| e.contains("09_01_01")));
        assert!(db
            .provenance
            .evidence
            .iter()
            .any(|e| e.contains("09_01_02")));

        let big = &bank.entries[1];
        assert_eq!(big.motif, "tile_size");
        // Run-on code without fences, reflowed.
        assert_eq!(
            big.diff,
            "--- a/guide/9.1.2.cpp\n+++ b/guide/9.1.2.cpp\n@@ -1,3 +1,2 @@\n\
             -for (int i = 0; i < 16; i++) {\n\
             -DataCopy(xLocal[i * 64], xGm[i * 64], 64);}\n\
             +DataCopy(xLocal, xGm, 1024);\n \
             inQueue.EnQue(xLocal);\n"
        );
        assert_eq!(
            big.expected_effect,
            "Guide priority: 中. 单次搬运16KB以上时带宽利用较好。"
        );

        let strided = &bank.entries[2];
        assert_eq!(strided.motif, "strided_copy");
        assert!(strided
            .diff
            .contains("+DataCopyPad(xLocal, xGm, params, padParams);"));
        assert_eq!(
            strided.applicability.reuse_when[1],
            "code like the counter-example: 每行调用一次搬运接口。"
        );

        let skipped: Vec<(&str, &str)> = bank
            .skipped
            .iter()
            .map(|s| (s.number.as_str(), s.title.as_str()))
            .collect();
        assert_eq!(skipped, [("9.1.3", "地址对齐")]);
        // Deterministic.
        assert_eq!(from_docs(&guide_dir(), 42).unwrap(), bank);
    }

    #[test]
    fn a_missing_folder_is_an_error() {
        assert!(matches!(
            from_docs(Path::new("/nonexistent/guide"), 0),
            Err(BankError::Guide { .. })
        ));
    }

    /// Smoke test on the real chapter 3.8 of the shared guide, when this
    /// checkout has it beside the repository.
    #[test]
    fn real_guide_chapter_3_8_smoke() {
        let rel = "ref/ascendc-guide/03_算子实践参考/03_08_SIMD算子性能优化";
        let candidates = [
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared")
                .join(rel),
            PathBuf::from("/work/shared").join(rel),
        ];
        let Some(dir) = candidates.iter().find(|p| p.is_dir()) else {
            eprintln!("skipped: the shared guide's chapter 3.8 is not here ({rel})");
            return;
        };
        let bank = from_docs(dir, 0).unwrap();
        eprintln!(
            "chapter 3.8: {} entries, {} practices skipped",
            bank.entries.len(),
            bank.skipped.len()
        );
        assert!(bank.entries.len() >= 15, "{}", bank.entries.len());
        let db = bank
            .entries
            .iter()
            .find(|e| e.source.op == "guide 3.8.4.1")
            .expect("the DoubleBuffer practice");
        assert_eq!(db.motif, "double_buffer");
        assert!(db.diff.contains("InitBuffer"), "{}", db.diff);
        assert!(!db.applicability.avoid_when.is_empty());
        // Every entry survives a bank round trip.
        let store = crate::store::Bank::open_in_memory().unwrap();
        for e in &bank.entries {
            store.insert(e).unwrap();
        }
        assert!(store.len().unwrap() > 0);
    }
}
