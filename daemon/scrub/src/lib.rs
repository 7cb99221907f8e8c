//! Secret scrubbing: credentials found in source text are replaced by `[REDACTED:kind]`
//! before the text is parsed, indexed, embedded or shown — so nothing that leaves the daemon
//! (answers, expansions, graph and map pages, hook context, the cache) carries them. Line
//! numbers are kept: a multi-line secret (a PEM block) keeps its line breaks.
//!
//! Three kinds of rule, in this order (a later finding never overlaps an earlier one):
//! - [`formats`]: provider key formats (AWS, GitHub, GitLab, Slack, Stripe, Google, OpenAI,
//!   Anthropic, npm, PyPI, Docker Hub, SendGrid, Twilio, Azure, …), private keys, JWTs,
//!   random-looking bearer and basic credentials, and the password of any URL with a scheme;
//! - [`assign`]: any literal assigned to a credential-like name, whatever its entropy, unless
//!   it is clearly not a secret (a reference, a lookup, a placeholder, a type, a label);
//!   unquoted values count in configuration, shell and Markdown text;
//! - a quoted value assigned to a key-like name that looks random.
//!
//! `FITTOK_SCRUB=false` turns it off.

mod assign;
mod formats;

use std::sync::OnceLock;

use regex::Regex;

#[cfg(test)]
use fittok_util::testing;

pub use assign::Dialect;

/// One secret found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based.
    pub line: usize,
    pub kind: &'static str,
    /// Byte range in the text.
    pub start: usize,
    pub end: usize,
}

/// A quoted random-looking value assigned to a name that holds a credential word anywhere
/// (`api_key_prod`, `secret_v2`): caught by its entropy, since such names also name other
/// things.
fn random_key_rule() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r#"(?i)\b[a-z0-9_.-]*(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|credential|auth[_-]?key|private[_-]?key|access[_-]?key)[a-z0-9_]*["']?\s*(?::=|=>|[:=])\s*[bru]?["'`]([^"'`\s]{8,})["'`]"#,
        )
        .ok()
    })
    .as_ref()
}

/// Lines after a credential word's own that a random-key assignment may run on to (`token =`
/// on one line, its quoted value on the next).
const RANDOM_KEY_SPAN_LINES: usize = 3;

/// The end of the `n`th line after the one ending at `end` (or of the text).
fn nth_line_end(text: &str, mut end: usize, n: usize) -> usize {
    for _ in 0..n {
        match text[end..].get(1..).and_then(|rest| rest.find('\n')) {
            Some(i) => end = end + 1 + i,
            None => return text.len(),
        }
    }
    end
}

/// Bits of entropy per character.
fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let n = s.chars().count() as f64;
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether a quoted "value" is code: the match began inside one string literal and ended
/// inside another (`", for type token: ").append(token.toString()).append('`).
fn code_fragment(v: &str) -> bool {
    [").", "(\"", "('", "()"].iter().any(|p| v.contains(p))
}

/// Whether a value looks like a random credential rather than a placeholder, a variable
/// reference, a path, a version or prose.
fn looks_random(v: &str) -> bool {
    let lower = v.to_lowercase();
    let placeholder = [
        "xxx",
        "your",
        "example",
        "changeme",
        "placeholder",
        "dummy",
        "redacted",
        "<",
        "${",
        "{{",
        "%(",
        "todo",
        "fake",
        "sample",
        "****",
        "....",
    ];
    if placeholder.iter().any(|p| lower.contains(p)) || code_fragment(v) {
        return false;
    }
    // Versions, dotted names, paths and URLs without credentials.
    if v.chars().all(|c| c.is_ascii_digit() || c == '.') || v.contains('/') && !v.contains('+') {
        return false;
    }
    let classes = [
        v.chars().any(|c| c.is_ascii_lowercase()),
        v.chars().any(|c| c.is_ascii_uppercase()),
        v.chars().any(|c| c.is_ascii_digit()),
        v.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|&&b| b)
    .count();
    // Identifiers (snake_case, camelCase words) are names, not secrets.
    let identifier = v
        .chars()
        .all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-' || c == '.');
    let n = v.chars().count();
    !identifier && entropy(v) >= 3.0 && (classes >= 3 || (classes >= 2 && n >= 12))
}

/// Every secret in `text`, in order, without overlaps. `dialect` says whether unquoted
/// values are literals ([`Dialect::of_path`] picks it for a file).
pub fn find(text: &str, dialect: Dialect) -> Vec<Finding> {
    let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
    let mut add = |s: usize, e: usize, kind: &'static str| {
        if s < e && !spans.iter().any(|&(a, b, _)| s < b && a < e) {
            spans.push((s, e, kind));
        }
    };
    for rule in formats::rules() {
        for caps in rule.re.captures_iter(text) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            if assign::passes(rule.check, m.as_str()) {
                add(m.start(), m.end(), rule.kind);
            }
        }
    }
    for a in assign::find(text, dialect) {
        add(a.start, a.end, "assigned_secret");
    }
    if let Some(re) = random_key_rule() {
        // The rule's name holds a credential word, and a name has no spaces: a match starts on
        // a line that holds one. It is looked for there, with the few lines after that the
        // spaces around its operator may cross, not over the whole text — the name's leading
        // `[a-z0-9_.-]*` gives the regex engine no literal to skip ahead on (over kafka's
        // sources this rule took 275 of the 520 ms scrubbing cost).
        for (line, line_end) in assign::keyword_lines(text) {
            let window = nth_line_end(text, line_end, RANDOM_KEY_SPAN_LINES);
            let hay = &text[..window];
            let mut at = line;
            while let Some(caps) = re.captures_at(hay, at) {
                let Some(whole) = caps.get(0) else { break };
                if whole.start() > line_end {
                    break; // starts on a later line: that line's own turn finds it
                }
                if let Some(m) = caps.get(1).filter(|m| looks_random(m.as_str())) {
                    add(m.start(), m.end(), "assigned_secret");
                }
                at = whole.end().max(at + 1);
                if at > line_end {
                    break;
                }
            }
        }
    }
    let mut found: Vec<Finding> = spans
        .into_iter()
        .map(|(start, end, kind)| Finding {
            line: text[..start].matches('\n').count() + 1,
            kind,
            start,
            end,
        })
        .collect();
    found.sort_by_key(|f| f.start);
    found
}

/// `text` with every secret replaced by `[REDACTED:kind]`; line breaks inside a secret are
/// kept so line numbers do not move.
pub fn scrub(text: &str, dialect: Dialect) -> (String, Vec<Finding>) {
    let found = find(text, dialect);
    if found.is_empty() {
        return (text.to_string(), found);
    }
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for f in &found {
        out.push_str(&text[pos..f.start]);
        out.push_str(&format!("[REDACTED:{}]", f.kind));
        out.extend(std::iter::repeat_n(
            '\n',
            text[f.start..f.end].matches('\n').count(),
        ));
        pos = f.end;
    }
    out.push_str(&text[pos..]);
    (out, found)
}

/// Scrubs the bytes of the file at `path`. Text that is not valid UTF-8 is
/// scrubbed in its valid runs; the other bytes are left as they are.
pub fn scrub_bytes(path: &str, bytes: Vec<u8>) -> Vec<u8> {
    let dialect = Dialect::of_path(path);
    match String::from_utf8(bytes) {
        Ok(text) => {
            let (clean, found) = scrub(&text, dialect);
            if found.is_empty() {
                text.into_bytes()
            } else {
                clean.into_bytes()
            }
        }
        Err(e) => {
            let bytes = e.into_bytes();
            let mut out = Vec::with_capacity(bytes.len());
            for chunk in bytes.utf8_chunks() {
                out.extend_from_slice(scrub(chunk.valid(), dialect).0.as_bytes());
                out.extend_from_slice(chunk.invalid());
            }
            out
        }
    }
}

/// Files never read: environment files, keys, certificates' private halves.
pub fn is_secret_file(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.starts_with(".env")
        || name.starts_with("id_rsa")
        || name.starts_with("id_dsa")
        || name.starts_with("id_ecdsa")
        || name.starts_with("id_ed25519")
        || name.ends_with(".pem")
        || name.ends_with(".key")
        || name.ends_with(".p12")
        || name.ends_with(".pfx")
}

/// A preview that shows the kind of value without revealing it: `AKIA…(20)`.
pub fn masked(secret: &str) -> String {
    let head: String = secret.chars().take(4).collect();
    format!("{head}…({})", secret.chars().count())
}

#[cfg(test)]
mod tests;

/// This crate's sources, hashed: parses made under other scrubbing rules may hold what the
/// current rules redact, so the parse cache's identity includes it.
pub const SOURCE_ID: u64 = fittok_util::source_id::parse_id(env!("FITTOK_SOURCE_ID"));
