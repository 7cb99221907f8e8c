//! Secret scrubbing: credentials found in source text are replaced by `[REDACTED:kind]`
//! before the text is parsed, indexed, embedded or shown — so nothing that leaves the daemon
//! (answers, expansions, hook context, the vector cache) carries them. Line numbers are kept:
//! a multi-line secret (a PEM block) keeps its line breaks.
//!
//! Rules are specific formats (AWS, GitHub, GitLab, Slack, Stripe, Google, JWT, PEM) plus two
//! contextual ones: the password of a connection string, and a quoted value assigned to a
//! key-like name that looks random (placeholders, variable references and versions are not).
//! `FITTOK_SCRUB=false` turns it off.

use std::sync::OnceLock;

use regex::Regex;

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

struct Rule {
    kind: &'static str,
    re: Regex,
    /// The capture group holding the secret (0 = the whole match).
    group: usize,
    /// Contextual rules also require the value to look random.
    check_entropy: bool,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let rule = |kind, pattern: &str, group, check_entropy| {
            Regex::new(pattern).ok().map(|re| Rule {
                kind,
                re,
                group,
                check_entropy,
            })
        };
        [
            rule("private_key", r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----", 0, false),
            rule("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}\b", 0, false),
            rule("aws_secret_key", r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#, 1, false),
            rule("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}\b", 0, false),
            rule("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}\b", 0, false),
            rule("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", 0, false),
            rule("slack_webhook", r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+", 0, false),
            rule("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}\b", 0, false),
            rule("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b", 0, false),
            rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0, false),
            rule("connection_password", r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'\x22]+:([^\s@/'\x22]{3,})@[^\s'\x22]+", 1, false),
            rule(
                "assigned_secret",
                r#"(?i)\b[a-z0-9_.-]*(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|credential|auth[_-]?key|private[_-]?key|access[_-]?key)[a-z0-9_]*["']?\s*(?::=|=>|[:=])\s*[bru]?["'`]([^"'`\s]{8,})["'`]"#,
                1,
                true,
            ),
        ]
        .into_iter()
        .flatten()
        .collect()
    })
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

/// Whether an assigned value looks like a real secret rather than a placeholder, a variable
/// reference, a path, a version or prose.
fn looks_secret(v: &str) -> bool {
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
        "env",
        "todo",
        "test",
        "fake",
        "sample",
        "****",
        "....",
    ];
    if placeholder.iter().any(|p| lower.contains(p)) {
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
        .all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-');
    let n = v.chars().count();
    !identifier && entropy(v) >= 3.0 && (classes >= 3 || (classes >= 2 && n >= 12))
}

/// Whether scrubbing is on (`FITTOK_SCRUB=false` turns it off).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        !matches!(
            std::env::var("FITTOK_SCRUB")
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
                .as_str(),
            "0" | "false" | "no" | "off"
        )
    })
}

/// Every secret in `text`, in order, without overlaps.
pub fn find(text: &str) -> Vec<Finding> {
    let mut found: Vec<Finding> = Vec::new();
    for rule in rules() {
        for caps in rule.re.captures_iter(text) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            if rule.check_entropy && !looks_secret(m.as_str()) {
                continue;
            }
            if found.iter().any(|f| m.start() < f.end && f.start < m.end()) {
                continue;
            }
            found.push(Finding {
                line: text[..m.start()].matches('\n').count() + 1,
                kind: rule.kind,
                start: m.start(),
                end: m.end(),
            });
        }
    }
    found.sort_by_key(|f| f.start);
    found
}

/// `text` with every secret replaced by `[REDACTED:kind]`; line breaks inside a secret are
/// kept so line numbers do not move.
pub fn scrub(text: &str) -> (String, Vec<Finding>) {
    let found = find(text);
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

/// Scrubs file bytes (when enabled); non-UTF-8 bytes are scanned lossily and left as they
/// are when nothing is found.
pub fn scrub_bytes(bytes: Vec<u8>) -> Vec<u8> {
    if !enabled() {
        return bytes;
    }
    match String::from_utf8(bytes) {
        Ok(text) => {
            let (clean, found) = scrub(&text);
            if found.is_empty() {
                text.into_bytes()
            } else {
                clean.into_bytes()
            }
        }
        Err(e) => e.into_bytes(),
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
