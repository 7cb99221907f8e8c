//! Identifier-aware tokens for code and questions alike.
//!
//! `parseHTTPResponse_v2` → `parse`, `http`, `response`, `v2` plus the whole identifier
//! `parsehttpresponsev2`, so that both a prose question ("parse the response") and an exact
//! name match. Lower-cased, light plural/suffix stemming, stop words and keywords dropped.

/// English stop words and keywords common to the supported languages.
const STOP: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "can",
    "do",
    "does",
    "for",
    "from",
    "has",
    "have",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "me",
    "my",
    "no",
    "not",
    "of",
    "on",
    "or",
    "so",
    "such",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "they",
    "this",
    "to",
    "was",
    "we",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "should",
    "could",
    "get",
    "set",
    "use",
    "using",
    "used",
    "also",
    "just",
    "like",
    "some",
    "any",
    "all",
    "one",
    "only",
    "other",
    "than",
    "too",
    "very",
    "def",
    "fn",
    "func",
    "function",
    "let",
    "const",
    "var",
    "pub",
    "self",
    "cls",
    "return",
    "import",
    "package",
    "class",
    "struct",
    "impl",
    "mut",
    "elif",
    "else",
    "try",
    "except",
    "finally",
    "raise",
    "pass",
    "lambda",
    "yield",
    "async",
    "await",
    "new",
    "public",
    "private",
    "protected",
    "static",
    "final",
    "void",
    "null",
    "nil",
    "none",
    "true",
    "false",
    "crate",
    "super",
    "mod",
    "type",
    "interface",
    "extends",
    "implements",
    "throws",
    "throw",
    "catch",
    "switch",
    "case",
    "break",
    "continue",
    "default",
    "go",
    "defer",
    "chan",
    "map",
    "range",
    "string",
    "int",
    "bool",
    "err",
    "ok",
    "some",
    "result",
    "option",
    "undefined",
    "export",
    "require",
    "module",
    "exports",
    "typeof",
    "instanceof",
    "string",
    "str",
    "usize",
    "u8",
    "u32",
    "u64",
    "i32",
    "i64",
    "f64",
    "vec",
    "box",
    "dyn",
    "where",
    "match",
    "loop",
    "ref",
];

fn is_stop(word: &str) -> bool {
    static SET: std::sync::OnceLock<
        std::collections::HashSet<&'static str, fittok_util::hash::FnvBuild>,
    > = std::sync::OnceLock::new();
    SET.get_or_init(|| STOP.iter().copied().collect())
        .contains(word)
}

/// A light stemmer: plurals, `-ing`, `-ed`; then a final `e` goes and a final consonant + `y`
/// becomes `i`, so `proxy`/`proxies` and `parse`/`parsed`/`parsing` meet. Short words stay.
pub fn stem(word: &str) -> String {
    let mut w = String::new();
    stem_into(word, &mut w);
    w
}

/// [`stem`] into a reused buffer.
fn stem_into(word: &str, w: &mut String) {
    w.clear();
    w.push_str(word);
    let n = w.len();
    if n > 4 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
        if w.ends_with("sse") || w.ends_with("xe") || w.ends_with("che") || w.ends_with("she") {
            w.pop();
        }
    } else if n > 6 && w.ends_with("ing") {
        w.truncate(n - 3);
    } else if n > 5 && w.ends_with("ed") && !w.ends_with("eed") {
        w.truncate(n - 2);
    }
    let b = w.as_bytes();
    if b.len() > 3 && b[b.len() - 1] == b'y' && !b"aeiou".contains(&b[b.len() - 2]) {
        w.pop();
        w.push('i');
    } else if b.len() > 4 && b[b.len() - 1] == b'e' {
        // `parse`, `parsed`, `parsing` → `pars`.
        w.pop();
    }
}

/// Splits one identifier into lower-cased parts at `_`, `-`, case changes and digit runs.
pub fn split_identifier(ident: &str) -> Vec<String> {
    let chars: Vec<char> = ident.chars().collect();
    let mut parts = Vec::new();
    let mut cur = String::new();
    for i in 0..chars.len() {
        let c = chars[i];
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !cur.is_empty() {
            let prev = chars[i - 1];
            let next = chars.get(i + 1);
            if case_boundary(
                prev.is_lowercase(),
                prev.is_uppercase(),
                c.is_uppercase(),
                next.is_some_and(|n| n.is_lowercase()),
            ) {
                parts.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

/// Where camel case starts a new part: `aB` (lower then upper), and `ABc` before the `B` (an
/// acronym ends where a capitalised word begins: `HTTPServer` → `http`, `server`).
fn case_boundary(prev_lower: bool, prev_upper: bool, upper: bool, next_lower: bool) -> bool {
    (prev_lower && upper) || (prev_upper && upper && next_lower)
}

/// [`split_identifier`] for an ASCII identifier, into reused buffers: `buf` holds the
/// lower-cased parts back to back, `ends` where each ends. Same parts, no allocation.
fn split_ascii_into(ident: &[u8], buf: &mut String, ends: &mut Vec<usize>) {
    buf.clear();
    ends.clear();
    let mut cur_len = 0;
    for i in 0..ident.len() {
        let c = ident[i];
        if !c.is_ascii_alphanumeric() {
            if cur_len > 0 {
                ends.push(buf.len());
                cur_len = 0;
            }
            continue;
        }
        if cur_len > 0 {
            let prev = ident[i - 1];
            let next = ident.get(i + 1);
            if case_boundary(
                prev.is_ascii_lowercase(),
                prev.is_ascii_uppercase(),
                c.is_ascii_uppercase(),
                next.is_some_and(|n| n.is_ascii_lowercase()),
            ) {
                ends.push(buf.len());
                cur_len = 0;
            }
        }
        buf.push(c.to_ascii_lowercase() as char);
        cur_len += 1;
    }
    if cur_len > 0 {
        ends.push(buf.len());
    }
}

/// Calls `f` for every token of `text`.
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let (mut buf, mut ends, mut stemmed) = (String::new(), Vec::new(), String::new());
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if word.is_empty() || word.len() > 64 {
            continue;
        }
        if word.is_ascii() {
            split_ascii_into(word.as_bytes(), &mut buf, &mut ends);
        } else {
            let parts = split_identifier(word);
            buf.clear();
            ends.clear();
            for p in &parts {
                buf.push_str(p);
                ends.push(buf.len());
            }
        }
        if ends.len() > 1 && buf.len() >= 3 {
            f(&buf);
        }
        let mut start = 0;
        for &end in &ends {
            let part = &buf[start..end];
            start = end;
            if part.len() < 2 || part.chars().all(|c| c.is_ascii_digit()) || is_stop(part) {
                continue;
            }
            stem_into(part, &mut stemmed);
            f(&stemmed);
        }
    }
}

pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers() {
        assert_eq!(
            split_identifier("parseHTTPResponse"),
            ["parse", "http", "response"]
        );
        assert_eq!(
            split_identifier("snake_case_name"),
            ["snake", "case", "name"]
        );
        assert_eq!(split_identifier("XMLParser2"), ["xml", "parser2"]);
    }

    #[test]
    fn tokens_keep_whole_identifier_and_stem() {
        let t = tokens("def get_headers(self): return self.headers");
        assert!(t.contains(&"getheaders".to_string()));
        assert!(t.contains(&stem("header")));
        assert!(!t.contains(&"self".to_string()));
        assert!(!t.contains(&"def".to_string()));
        assert_eq!(stem("cookies"), stem("cookie"));
        assert_eq!(stem("proxies"), stem("proxy"));
        assert_eq!(stem("matches"), stem("match"));
        assert_eq!(stem("parsed"), stem("parse"));
        assert_eq!(stem("parsing"), stem("parse"));
        assert_eq!(stem("headers"), "header");
        assert_eq!(stem("class"), "class");
    }

    /// The tokenizer before its allocation-free rewrite: the reference the fast one matches.
    fn reference_tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if word.is_empty() || word.len() > 64 {
                continue;
            }
            let parts = split_identifier(word);
            if parts.len() > 1 {
                let whole: String = parts.concat();
                if whole.len() >= 3 {
                    out.push(whole);
                }
            }
            for part in &parts {
                if part.len() < 2
                    || part.chars().all(|c| c.is_ascii_digit())
                    || STOP.contains(&part.as_str())
                {
                    continue;
                }
                out.push(stem(part));
            }
        }
        out
    }

    #[test]
    fn the_fast_tokenizer_matches_the_reference() {
        let texts = [
            "def get_headers(self): return self.headers",
            "parseHTTPResponse_v2 XMLParser2 __init__ a_b _x_ HTTPServer IOError ioError",
            "fn main() { let x = Vec::<u8>::new(); x.push(1); } // the TODOs: 42 0x1F",
            "Ünïcödé_names straße ÉCOLE naïveCase 数据_处理 camelCaseÜber",
            "snake_case_name kebab-case-name SCREAMING_CASE A B C ab abc",
            include_str!("tokenize.rs"),
        ];
        for t in texts {
            assert_eq!(tokens(t), reference_tokens(t), "{t:.80}");
        }
    }
}
