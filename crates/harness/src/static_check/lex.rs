//! A small C/C++ lexer for the static checks: splices continued lines,
//! drops comments, keeps string and character literals as opaque tokens
//! (their text never matches a rule), reads preprocessor directives as
//! units, and maps digraphs to the tokens they stand for.
//!
//! It is not a full preprocessor: macros are not expanded. The rules make
//! that safe by banning what a macro could hide (token pasting) and by
//! scanning the tokens of `#define` bodies like any other code.

/// Kind of a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokKind {
    /// Identifier or keyword.
    Ident,
    /// A preprocessing number (`0x1F`, `1'000`, `1.5e-3f`).
    Number,
    /// String literal; the text is the literal's content (no prefix/quotes).
    Str,
    /// Character literal.
    Char,
    /// Punctuator; digraphs are stored as what they stand for.
    Punct,
}

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tok {
    pub kind: TokKind,
    pub text: String,
    /// 1-based line of the token's first character in the original file.
    pub line: u32,
}

/// A preprocessor directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Directive {
    /// `include`, `define`, `pragma`, ... (empty for a null directive).
    pub name: String,
    /// For `#include`: the header name and whether it was `<...>`.
    pub header: Option<(String, bool)>,
    /// The tokens after the name (for `#include`, empty when a header name
    /// was read).
    pub tokens: Vec<Tok>,
    /// Line of the `#`.
    pub line: u32,
}

/// A lexed file: code tokens (outside directives) and directives.
#[derive(Debug, Default)]
pub(crate) struct Lexed {
    pub code: Vec<Tok>,
    pub directives: Vec<Directive>,
    /// Lexical problems: (line, message).
    pub errors: Vec<(u32, String)>,
    /// Trigraph sequences found: lines.
    pub trigraphs: Vec<u32>,
}

/// Source after line splicing: bytes with their original line numbers.
struct Spliced {
    bytes: Vec<u8>,
    lines: Vec<u32>,
}

fn splice(text: &str) -> Spliced {
    let raw = text.as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut lines = Vec::with_capacity(raw.len());
    let mut line = 1u32;
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == b'\\' {
            // Backslash, optional trailing spaces (GCC accepts them), newline.
            let mut j = i + 1;
            while j < raw.len() && (raw[j] == b' ' || raw[j] == b'\t') {
                j += 1;
            }
            if j < raw.len() && raw[j] == b'\r' && j + 1 < raw.len() && raw[j + 1] == b'\n' {
                j += 1;
            }
            if j < raw.len() && raw[j] == b'\n' {
                line += 1;
                i = j + 1;
                continue;
            }
        }
        if b == b'\r' && i + 1 < raw.len() && raw[i + 1] == b'\n' {
            i += 1;
            continue;
        }
        bytes.push(b);
        lines.push(line);
        if b == b'\n' {
            line += 1;
        }
        i += 1;
    }
    Spliced { bytes, lines }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// Punctuators, longest first.
const PUNCTS: &[&str] = &[
    "%:%:", "<=>", "<<=", ">>=", "...", "->*", "##", "::", "->", "++", "--", "<<", ">>", "<=",
    ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "<%", "%>",
    "<:", ":>", "%:",
];

fn digraph(p: &str) -> &str {
    match p {
        "<%" => "{",
        "%>" => "}",
        "<:" => "[",
        ":>" => "]",
        "%:" => "#",
        "%:%:" => "##",
        other => other,
    }
}

struct Lexer<'a> {
    s: &'a [u8],
    lines: &'a [u32],
    pos: usize,
    out: Lexed,
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.pos + k).copied().unwrap_or(0)
    }

    fn line(&self) -> u32 {
        self.lines
            .get(self.pos)
            .or_else(|| self.lines.last())
            .copied()
            .unwrap_or(1)
    }

    fn error(&mut self, line: u32, msg: &str) {
        self.out.errors.push((line, msg.to_string()));
    }

    /// Skips spaces and comments; stops at a newline when `stop_at_newline`.
    /// Returns true if a newline was crossed (when not stopping).
    fn skip_space(&mut self, stop_at_newline: bool) -> bool {
        let mut crossed = false;
        loop {
            let b = self.peek(0);
            if b == b'\n' {
                if stop_at_newline {
                    return crossed;
                }
                crossed = true;
                self.pos += 1;
            } else if b == b' ' || b == b'\t' || b == 0x0b || b == 0x0c || b == b'\r' {
                self.pos += 1;
            } else if b == b'/' && self.peek(1) == b'/' {
                while self.pos < self.s.len() && self.peek(0) != b'\n' {
                    self.pos += 1;
                }
            } else if b == b'/' && self.peek(1) == b'*' {
                let line = self.line();
                self.pos += 2;
                loop {
                    if self.pos >= self.s.len() {
                        self.error(line, "unterminated /* comment");
                        return crossed;
                    }
                    if self.peek(0) == b'*' && self.peek(1) == b'/' {
                        self.pos += 2;
                        break;
                    }
                    if self.peek(0) == b'\n' {
                        // A newline inside a comment does not end a
                        // directive in C++; keep going.
                    }
                    self.pos += 1;
                }
            } else {
                return crossed;
            }
        }
    }

    /// Reads one token at `pos` (not space). Returns None at end of input.
    fn token(&mut self) -> Option<Tok> {
        if self.pos >= self.s.len() {
            return None;
        }
        let line = self.line();
        let b = self.peek(0);
        // String/char literal with optional encoding prefix and raw marker.
        if let Some(tok) = self.literal(line) {
            return Some(tok);
        }
        if is_ident_start(b) {
            let start = self.pos;
            while self.pos < self.s.len() && is_ident_char(self.peek(0)) {
                self.pos += 1;
            }
            return Some(Tok {
                kind: TokKind::Ident,
                text: String::from_utf8_lossy(&self.s[start..self.pos]).into_owned(),
                line,
            });
        }
        if b.is_ascii_digit() || (b == b'.' && self.peek(1).is_ascii_digit()) {
            let start = self.pos;
            self.pos += 1;
            loop {
                let c = self.peek(0);
                let prev = self.s[self.pos - 1];
                if (c == b'+' || c == b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P') {
                    self.pos += 1;
                } else if c == b'\'' && is_ident_char(self.peek(1)) {
                    self.pos += 2;
                } else if is_ident_char(c) || c == b'.' {
                    self.pos += 1;
                } else {
                    break;
                }
            }
            return Some(Tok {
                kind: TokKind::Number,
                text: String::from_utf8_lossy(&self.s[start..self.pos]).into_owned(),
                line,
            });
        }
        for p in PUNCTS {
            if self.s[self.pos..].starts_with(p.as_bytes()) {
                // `<::` not followed by `:` or `>` is `<` then `::` (C++11).
                if *p == "<:" && self.peek(2) == b':' && !matches!(self.peek(3), b':' | b'>') {
                    break;
                }
                self.pos += p.len();
                return Some(Tok {
                    kind: TokKind::Punct,
                    text: digraph(p).to_string(),
                    line,
                });
            }
        }
        self.pos += 1;
        Some(Tok {
            kind: TokKind::Punct,
            text: (b as char).to_string(),
            line,
        })
    }

    /// A string or character literal starting at `pos`, if there is one.
    fn literal(&mut self, line: u32) -> Option<Tok> {
        let mut k = 0;
        for prefix in ["u8", "u", "U", "L"] {
            if self.s[self.pos..].starts_with(prefix.as_bytes()) {
                k = prefix.len();
                break;
            }
        }
        let raw = self.peek(k) == b'R' && self.peek(k + 1) == b'"';
        if raw {
            k += 1;
        }
        let quote = self.peek(k);
        if quote != b'"' && quote != b'\'' {
            return None;
        }
        if k > 0
            && !raw
            && !self.s[self.pos..self.pos + k]
                .iter()
                .all(|c| is_ident_start(*c))
        {
            return None;
        }
        self.pos += k + 1;
        if raw {
            // R"delim( ... )delim"
            let start = self.pos;
            while self.pos < self.s.len()
                && self.peek(0) != b'('
                && self.peek(0) != b'\n'
                && self.pos - start <= 16
            {
                self.pos += 1;
            }
            if self.peek(0) != b'(' {
                self.error(line, "malformed raw string literal");
                return Some(Tok {
                    kind: TokKind::Str,
                    text: String::new(),
                    line,
                });
            }
            let delim = self.s[start..self.pos].to_vec();
            self.pos += 1;
            let body_start = self.pos;
            let mut close = vec![b')'];
            close.extend_from_slice(&delim);
            close.push(b'"');
            while self.pos < self.s.len() && !self.s[self.pos..].starts_with(&close) {
                self.pos += 1;
            }
            let body = String::from_utf8_lossy(&self.s[body_start..self.pos]).into_owned();
            if self.pos >= self.s.len() {
                self.error(line, "unterminated raw string literal");
            } else {
                self.pos += close.len();
            }
            return Some(Tok {
                kind: TokKind::Str,
                text: body,
                line,
            });
        }
        let body_start = self.pos;
        loop {
            let c = self.peek(0);
            if self.pos >= self.s.len() || c == b'\n' {
                self.error(line, "unterminated string or character literal");
                break;
            }
            if c == b'\\' {
                self.pos += 2;
                continue;
            }
            if c == quote {
                break;
            }
            self.pos += 1;
        }
        let body =
            String::from_utf8_lossy(&self.s[body_start..self.pos.min(self.s.len())]).into_owned();
        if self.pos < self.s.len() && self.peek(0) == quote {
            self.pos += 1;
        }
        Some(Tok {
            kind: if quote == b'"' {
                TokKind::Str
            } else {
                TokKind::Char
            },
            text: body,
            line,
        })
    }

    /// Reads a directive; `pos` is just after the `#`.
    fn directive(&mut self, line: u32) {
        self.skip_space(true);
        let mut name = String::new();
        if is_ident_start(self.peek(0)) {
            if let Some(t) = self.token() {
                name = t.text;
            }
        }
        let mut header = None;
        if name == "include" || name == "include_next" || name == "import" {
            self.skip_space(true);
            let open = self.peek(0);
            let close = match open {
                b'<' => Some(b'>'),
                b'"' => Some(b'"'),
                _ => None,
            };
            if let Some(close) = close {
                let start = self.pos + 1;
                let mut end = start;
                while end < self.s.len() && self.s[end] != close && self.s[end] != b'\n' {
                    end += 1;
                }
                if end < self.s.len() && self.s[end] == close {
                    header = Some((
                        String::from_utf8_lossy(&self.s[start..end]).into_owned(),
                        open == b'<',
                    ));
                    self.pos = end + 1;
                }
            }
        }
        let mut tokens = Vec::new();
        loop {
            self.skip_space(true);
            if self.pos >= self.s.len() || self.peek(0) == b'\n' {
                break;
            }
            match self.token() {
                Some(t) => tokens.push(t),
                None => break,
            }
        }
        self.out.directives.push(Directive {
            name,
            header,
            tokens,
            line,
        });
    }

    fn run(mut self) -> Lexed {
        let mut at_line_start = true;
        loop {
            if self.skip_space(false) {
                at_line_start = true;
            }
            if self.pos >= self.s.len() {
                break;
            }
            let line = self.line();
            let Some(tok) = self.token() else { break };
            if at_line_start && tok.kind == TokKind::Punct && tok.text == "#" {
                self.directive(line);
                at_line_start = true;
                continue;
            }
            at_line_start = false;
            self.out.code.push(tok);
        }
        self.out
    }
}

/// Lines holding a trigraph (`??=`, `??/`, ...), which g++ may replace
/// before anything else sees the text.
fn trigraph_lines(text: &str) -> Vec<u32> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut line = 1u32;
    for i in 0..b.len() {
        if b[i] == b'\n' {
            line += 1;
        }
        if i + 2 < b.len() && b[i] == b'?' && b[i + 1] == b'?' && b"=/'()!<>-".contains(&b[i + 2]) {
            out.push(line);
        }
    }
    out
}

/// Lexes one file.
pub(crate) fn lex(text: &str) -> Lexed {
    let spliced = splice(text);
    let lexer = Lexer {
        s: &spliced.bytes,
        lines: &spliced.lines,
        pos: 0,
        out: Lexed::default(),
    };
    let mut out = lexer.run();
    out.trigraphs = trigraph_lines(text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(l: &Lexed) -> Vec<&str> {
        l.code.iter().map(|t| t.text.as_str()).collect()
    }

    #[test]
    fn comments_and_literals_hide_their_contents() {
        let l = lex("int a; // fork()\n/* system(\"x\")\n */ const char* s = \"popen(\";\nchar c = '\\'';\n");
        assert_eq!(
            texts(&l),
            vec![
                "int", "a", ";", "const", "char", "*", "s", "=", "popen(", ";", "char", "c", "=",
                "\\'", ";"
            ]
        );
        assert_eq!(l.code[8].kind, TokKind::Str);
        assert_eq!(l.code[3].line, 3);
        assert!(l.errors.is_empty());
    }

    #[test]
    fn raw_strings_digit_separators_and_splices() {
        let l = lex("auto s = R\"x(fork() \")\" )x\"; int n = 1'000'000;\nfo\\\nrk();");
        assert_eq!(
            texts(&l),
            vec![
                "auto",
                "s",
                "=",
                "fork() \")\" ",
                ";",
                "int",
                "n",
                "=",
                "1'000'000",
                ";",
                "fork",
                "(",
                ")",
                ";"
            ]
        );
        // The spliced identifier starts on line 2.
        assert_eq!(l.code[10].line, 2);
    }

    #[test]
    fn directives_and_digraphs() {
        let l = lex("#include <kernel_operator.h>\n  %:include \"a/b.h\"\n#define X(a) a ## b\nint x<:2:>;\n#pragma once\n");
        let names: Vec<&str> = l.directives.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, vec!["include", "include", "define", "pragma"]);
        assert_eq!(
            l.directives[0].header,
            Some(("kernel_operator.h".to_string(), true))
        );
        assert_eq!(l.directives[1].header, Some(("a/b.h".to_string(), false)));
        assert_eq!(l.directives[1].line, 2);
        assert!(l.directives[2].tokens.iter().any(|t| t.text == "##"));
        assert_eq!(texts(&l), vec!["int", "x", "[", "2", "]", ";"]);
    }

    #[test]
    fn unterminated_comment_is_reported() {
        let l = lex("int a;\n/* never closed\n");
        assert_eq!(l.errors, vec![(2, "unterminated /* comment".to_string())]);
    }

    #[test]
    fn trigraphs_are_found() {
        assert_eq!(lex("int a;\n??=include <x>\n").trigraphs, vec![2]);
        assert!(lex("a ? b : c; x ?? y").trigraphs.is_empty());
    }
}
