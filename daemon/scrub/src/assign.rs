//! Values assigned to credential-like names, whatever their entropy: `password = "…"` in any
//! language, `'PASSWORD': '…'` in a dict, `DB_PASS = "…"` in Java, `export API_TOKEN=…` in a
//! shell block, `password: …` in YAML.
//!
//! Two questions decide: does the name end in a credential word (`db_password`, `apiKey`,
//! `DB_PASS`; not `password_hash_algorithm`, `token_url`, `secretary`), and is the value a
//! literal rather than something that is clearly not a secret (a reference, an environment
//! lookup, a placeholder, an empty string, a type, a label that names the credential).
//! Unquoted values are literals only in configuration-like text (YAML, TOML, INI,
//! properties, env, shell, Markdown); in code they are expressions.

use std::sync::OnceLock;

use regex::Regex;

use super::formats::Check;

/// How to read unquoted values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Source code: only quoted values are literals.
    Code,
    /// Configuration, shell and prose files: `key: value` and `KEY=value` are literals too.
    Config,
}

impl Dialect {
    /// The dialect of a file, by its name.
    pub fn of_path(path: &str) -> Dialect {
        let name = path
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(path)
            .to_ascii_lowercase();
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        let config_ext = [
            "yaml",
            "yml",
            "toml",
            "ini",
            "cfg",
            "conf",
            "properties",
            "env",
            "sh",
            "bash",
            "zsh",
            "fish",
            "ps1",
            "md",
            "markdown",
            "mdx",
            "rst",
            "txt",
            "tf",
            "tfvars",
            "hcl",
        ];
        if config_ext.contains(&ext)
            || name == "dockerfile"
            || name.starts_with(".env")
            || name.ends_with("rc")
            || !name.contains('.')
        {
            Dialect::Config
        } else {
            Dialect::Code
        }
    }
}

/// How strongly a name says "credential".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strength {
    /// `password`, `secret`, `api_key`: any literal value is taken.
    Strong,
    /// `token`, `auth`: also names of lexer tokens and auth schemes, so a bare word is not
    /// taken.
    Weak,
}

const STRONG_LAST: [&str; 12] = [
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
    "secret",
    "credential",
    "credentials",
    "apikey",
    "secretkey",
    "privatekey",
];
const STRONG_PAIR_FIRST: [&str; 8] = [
    "api",
    "private",
    "access",
    "secret",
    "auth",
    "signing",
    "encryption",
    "master",
];
const WEAK_LAST: [&str; 4] = ["token", "auth", "authtoken", "accesstoken"];

/// Words that make a value a label or a reference to the credential rather than the
/// credential itself (`"Invalid password"`, `os.environ["API_TOKEN"]`).
const CREDENTIAL_WORDS: [&str; 8] = [
    "password",
    "passwd",
    "secret",
    "token",
    "credential",
    "apikey",
    "api_key",
    "passphrase",
];

fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn strength(name: &str) -> Option<Strength> {
    let w = words(name);
    let last = w.last()?.as_str();
    if STRONG_LAST.contains(&last) {
        return Some(Strength::Strong);
    }
    if last == "key" && w.len() >= 2 && STRONG_PAIR_FIRST.contains(&w[w.len() - 2].as_str()) {
        return Some(Strength::Strong);
    }
    if WEAK_LAST.contains(&last) {
        return Some(Strength::Weak);
    }
    None
}

/// Whether a literal value is clearly not a secret.
fn not_a_secret(value: &str, strength: Strength, quoted: bool) -> bool {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    if v.chars().count() < 4 || !v.chars().any(|c| c.is_alphanumeric()) {
        return true;
    }
    // Placeholders and templates.
    let placeholder_parts = [
        "${",
        "{{",
        "%(",
        "%s",
        "{}",
        "{0}",
        "xxx",
        "***",
        "...",
        "…",
        "changeme",
        "change_me",
        "change-me",
        "your_",
        "your-",
        "yourpass",
        "example",
        "placeholder",
        "dummy",
        "redacted",
        "sample",
        "fake",
        "insert",
        "replace",
        "<",
        ">",
    ];
    if placeholder_parts.iter().any(|p| lower.contains(p)) {
        return true;
    }
    // Versions (`"1.2.1"` in a package manifest).
    if v.trim_start_matches(['^', '~', '=', 'v', '>', '<'])
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.')
    {
        return true;
    }
    let placeholder_whole = [
        "pass",
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "test",
        "testing",
        "bearer",
        "basic",
        "digest",
        "oauth",
        "required",
        "optional",
        "string",
        "empty",
        "unset",
        // Fetch's `credentials` modes.
        "omit",
        "include",
        "same-origin",
    ];
    if placeholder_whole.contains(&lower.as_str()) {
        return true;
    }
    // A label or a reference that names the credential.
    if CREDENTIAL_WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    // Environment lookups and secret-manager references.
    if v.starts_with('$')
        || (v.starts_with('%') && v.ends_with('%'))
        || ["env:", "vault:", "arn:", "secret:", "ENC(", "file:"]
            .iter()
            .any(|p| v.starts_with(p))
    {
        return true;
    }
    // Paths and URLs (a URL's own credentials have their rule).
    let path_like =
        (v.starts_with('/') || v.starts_with("./") || v.starts_with("../") || v.starts_with("~/"))
            && v.chars()
                .all(|c| c.is_alphanumeric() || "/._-~".contains(c))
            && (v.matches('/').count() >= 2 || v.contains('.'));
    let file_like = [
        ".pem", ".key", ".json", ".txt", ".crt", ".p12", ".pfx", ".jks", ".yaml",
    ]
    .iter()
    .any(|e| lower.ends_with(e))
        && !v.contains(' ');
    // A route (`"/auth"`).
    let route = v.starts_with('/')
        && v.len() > 1
        && v[1..]
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-');
    if path_like || file_like || route || lower.contains("://") {
        return true;
    }
    if super::code_fragment(v) {
        return true;
    }
    // A constant's name (`"DB_PASSWORD_FILE"`, `"IDENT"`).
    if v.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        || (v
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            && v.contains('_'))
    {
        return true;
    }
    // Prose: a message or prompt, not a passphrase.
    if v.contains(' ') {
        let n_words = v.split_whitespace().count();
        if n_words > 6 || v.ends_with(['.', '!', '?', ':']) || !quoted {
            return true;
        }
    }
    // A label in a user's language: capitalised words of letters only (`"Passwort"`,
    // `"Mot de passe"`). A passphrase is lower-case; a password has digits or symbols.
    if v.chars().next().is_some_and(|c| c.is_uppercase())
        && v.chars().all(|c| c.is_alphabetic() || c == ' ')
    {
        return true;
    }
    if strength == Strength::Weak {
        // `token = "IDENT"`, `auth = "session"`: a bare word names a kind, not a credential.
        let has_digit = v.chars().any(|c| c.is_ascii_digit());
        let has_symbol = v
            .chars()
            .any(|c| !c.is_alphanumeric() && c != '_' && c != '-');
        if !has_digit && !has_symbol && v.chars().count() < 20 {
            return true;
        }
        if !has_digit && v.contains(' ') {
            return true;
        }
    }
    false
}

/// Whether an unquoted value is an expression or a type rather than a literal.
fn unquoted_is_code(v: &str) -> bool {
    let types = [
        "str",
        "string",
        "bytes",
        "int",
        "bool",
        "boolean",
        "number",
        "any",
        "object",
        "char",
        "secretstr",
        "secretbytes",
        "optional",
        "option",
        "text",
        "varchar",
        "password",
    ];
    let lower = v.to_ascii_lowercase();
    let head = lower
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next()
        .unwrap_or("");
    if types.contains(&head) {
        return true;
    }
    if v.starts_with(|c: char| "$%{[(<&*!@|>=~`\\-".contains(c)) {
        return true;
    }
    if v.ends_with([',', ';', '{', '(', ')', '\\']) || v.contains(['(', ')', '[', ']']) {
        return true;
    }
    // Attribute access: `settings.SECRET_KEY`, `process.env.TOKEN`.
    let bytes = v.as_bytes();
    bytes
        .windows(2)
        .any(|w| w[0] == b'.' && w[1].is_ascii_alphabetic())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && v.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

fn quoted_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // name, optional closing quote or bracket, optional type annotation (`: str`), the
        // operator, an optional string prefix, then the quoted value.
        Regex::new(concat!(
            r#"(?P<name>[A-Za-z_$@][\w$.\-]*)["'\]]*\s*"#,
            // A type annotation comes before an `=` only (`password: str = "…"`), never
            // before a `:` (reST's "pass :data:`…`").
            r#"(?:(?::\s*[\w<>\[\]?.|]{1,40}\s*)?(?::=|=>|\?\?=|\|\|=|=)|:)\s*(?:[bBrRuUfF]{1,2})?"#,
            r#"(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)'|`(?P<bq>[^`\n]*)`)"#,
        ))
        .expect("the quoted-assignment pattern is a valid literal")
    })
}

fn setter_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // `setPassword("…")`, `.password("…")`, `with_token('…')`.
        Regex::new(concat!(
            r#"\b(?:set|with)?_?(?P<name>[A-Za-z_]*(?i:password|passwd|secret|token|apikey|api_key|credentials?))\s*\(\s*"#,
            r#"(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)')\s*\)"#,
        ))
        .expect("the setter pattern is a valid literal")
    })
}

fn pair_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // A name and its value as a call's two arguments: `define('DB_PASSWORD', '…')`,
        // `os.Setenv("API_TOKEN", "…")`.
        Regex::new(concat!(
            r#"\(\s*["'](?P<name>[A-Za-z_][\w.\-]*)["']\s*,\s*"#,
            r#"(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)')\s*\)"#,
        ))
        .expect("the pair pattern is a valid literal")
    })
}

fn unquoted_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r#"(?m)^[ \t>*+\-]*(?:export[ \t]+|set[ \t]+|ENV[ \t]+|ARG[ \t]+|\$env:)?"#,
            r#"["']?(?P<name>[A-Za-z_][\w.\-]*)["']?(?P<pre>[ \t]*)(?P<op>=|:)(?P<post>[ \t]*)"#,
            r#"(?P<val>[^\s"'`#][^\n]*?)[ \t]*(?:[ \t]#[^\n]*)?\r?$"#,
        ))
        .expect("the unquoted-assignment pattern is a valid literal")
    })
}

/// Lines worth looking at: they hold a credential word.
fn keyword_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)pass|pwd|secret|token|key|auth|credential")
            .expect("the keyword pattern is a valid literal")
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Assignment,
    Setter,
    Pair,
}

/// A secret found by its name: byte range of the value in the text.
pub(super) struct Assigned {
    pub start: usize,
    pub end: usize,
}

/// Every credential value assigned in `text`.
pub(super) fn find(text: &str, dialect: Dialect) -> Vec<Assigned> {
    let mut out = Vec::new();
    for (start, end) in keyword_lines(text) {
        find_in_line(&text[start..end], start, dialect, &mut out);
    }
    out
}

/// The lines of `text` that hold a credential word, as byte ranges without their line break,
/// each once, in order.
pub(super) fn keyword_lines(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut last_line = usize::MAX;
    keyword_re().find_iter(text).filter_map(move |m| {
        let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        if start == last_line {
            return None;
        }
        last_line = start;
        let end = text[m.end()..]
            .find('\n')
            .map_or(text.len(), |i| m.end() + i);
        Some((start, end))
    })
}

fn find_in_line(line: &str, offset: usize, dialect: Dialect, out: &mut Vec<Assigned>) {
    let mut push = |s: usize, e: usize| {
        if !out.iter().any(|a| s < a.end && a.start < e) {
            out.push(Assigned {
                start: offset + s,
                end: offset + e,
            });
        }
    };
    // Every quoted form needs a quote on the line; most lines holding a credential word in
    // code have none (`Map<K, V> keys`), and the three patterns cost most of scrubbing.
    let quoted_forms = if line.contains(['"', '\'', '`']) {
        &[
            (Form::Assignment, quoted_re()),
            (Form::Setter, setter_re()),
            (Form::Pair, pair_re()),
        ][..]
    } else {
        &[]
    };
    for &(form, re) in quoted_forms {
        for c in re.captures_iter(line) {
            let Some(name) = c.name("name") else { continue };
            let Some(strength) = strength(name.as_str()) else {
                continue;
            };
            // Backticks quote strings in code (JS templates, Go raw strings); in prose and
            // configuration they mark code spans.
            let backtick = if dialect == Dialect::Code {
                c.name("bq")
            } else {
                None
            };
            let Some(v) = c.name("dq").or(c.name("sq")).or(backtick) else {
                continue;
            };
            if form == Form::Setter {
                // `setPassword("…")`, `.password("…")`; not `getPassword("default")`.
                let w = words(name.as_str());
                if w.len() > 1 && !["set", "with", "use"].contains(&w[0].as_str()) {
                    continue;
                }
            }
            // A tuple of names (`('password', 'username')`, `("PASS", "not-keyword")`) is
            // not a definition.
            if form == Form::Pair
                && v.as_str()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c == '-')
            {
                continue;
            }
            if !not_a_secret(v.as_str(), strength, true) {
                push(v.start(), v.end());
            }
        }
    }
    if dialect == Dialect::Config {
        for c in unquoted_re().captures_iter(line) {
            let (Some(name), Some(val)) = (c.name("name"), c.name("val")) else {
                continue;
            };
            let Some(strength) = strength(name.as_str()) else {
                continue;
            };
            let spaced = c.name("pre").is_some_and(|m| !m.is_empty())
                || c.name("post").is_some_and(|m| !m.is_empty());
            let shell = c.name("op").is_some_and(|m| m.as_str() == "=") && !spaced;
            // `KEY=value cmd` in a shell line: the value ends at the first blank.
            let v = if shell {
                let n = val.as_str().find([' ', '\t']).unwrap_or(val.len());
                &val.as_str()[..n]
            } else {
                val.as_str()
            };
            if unquoted_is_code(v) || not_a_secret(v, strength, false) {
                continue;
            }
            push(val.start(), val.start() + v.len());
        }
    }
}

/// The check a generic format rule asks of its value.
pub(super) fn passes(check: Check, value: &str) -> bool {
    match check {
        Check::None => true,
        Check::Random => super::looks_random(value),
        // A URL's password is a secret whatever it looks like; only placeholders are not.
        Check::NotPlaceholder => {
            let lower = value.to_ascii_lowercase();
            let placeholder = lower.starts_with('$')
                || lower.starts_with('%')
                || ["${", "{{", "<", "xxx", "***", "{}"]
                    .iter()
                    .any(|p| lower.contains(p))
                || [
                    "password", "pass", "secret", "pwd", "passwd", "changeme", "pw",
                ]
                .contains(&lower.as_str());
            !placeholder
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_end_in_a_credential_word() {
        for n in [
            "password",
            "DB_PASSWORD",
            "dbPassword",
            "DB_PASS",
            "client_secret",
            "apiKey",
            "API_KEY",
            "private_key",
            "$password",
            "db.password",
            "authToken",
            "PWD",
        ] {
            assert!(strength(n).is_some(), "{n}");
        }
        for n in [
            "password_hash_algorithm",
            "token_url",
            "secretary",
            "TOKEN_TYPE",
            "secret_name",
            "private_key_path",
            "bypass",
            "keyword",
            "key",
            "passage",
            "monkey",
        ] {
            assert!(strength(n).is_none(), "{n}");
        }
    }

    #[test]
    fn dialect_follows_the_file_name() {
        assert_eq!(Dialect::of_path("config/app.yml"), Dialect::Config);
        assert_eq!(Dialect::of_path("docs/setup.md"), Dialect::Config);
        assert_eq!(Dialect::of_path("Dockerfile"), Dialect::Config);
        assert_eq!(Dialect::of_path("src/app.py"), Dialect::Code);
        assert_eq!(Dialect::of_path("Main.java"), Dialect::Code);
    }
}
