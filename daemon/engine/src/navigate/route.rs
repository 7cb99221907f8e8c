//! Questions that ask for navigation: "who calls X", "what does X call", "where is X used",
//! "what breaks if I change X". Only a short question of one of these shapes whose X names a
//! definition is routed; everything else is a question for the ranker.

use super::Direction;

/// Longest question routed: a navigation question is a phrase, not an issue text.
const MAX_WORDS: usize = 14;

/// (phrase before the target, phrase after it, direction). Matched on the lower-cased
/// question with `?`, `.` and `!` trimmed; the target is the one word between.
const SHAPES: &[(&str, &str, Direction)] = &[
    ("who calls ", "", Direction::Callers),
    ("what calls ", "", Direction::Callers),
    ("which functions call ", "", Direction::Callers),
    ("which methods call ", "", Direction::Callers),
    ("callers of ", "", Direction::Callers),
    ("find callers of ", "", Direction::Callers),
    ("show callers of ", "", Direction::Callers),
    ("list callers of ", "", Direction::Callers),
    ("where is ", " called", Direction::Callers),
    ("where is ", " called from", Direction::Callers),
    ("where are ", " called", Direction::Callers),
    ("what does ", " call", Direction::Callees),
    ("which functions does ", " call", Direction::Callees),
    ("callees of ", "", Direction::Callees),
    ("what is called by ", "", Direction::Callees),
    ("what uses ", "", Direction::References),
    ("who uses ", "", Direction::References),
    ("what references ", "", Direction::References),
    ("where is ", " used", Direction::References),
    ("where are ", " used", Direction::References),
    ("where is ", " referenced", Direction::References),
    ("references to ", "", Direction::References),
    ("find references to ", "", Direction::References),
    ("usages of ", "", Direction::References),
    ("uses of ", "", Direction::References),
    ("find usages of ", "", Direction::References),
    ("what depends on ", "", Direction::Impact),
    ("what breaks if i change ", "", Direction::Impact),
    ("what breaks if i change ", " signature", Direction::Impact),
    (
        "what breaks if i change ",
        "'s signature",
        Direction::Impact,
    ),
    (
        "what breaks if i change the signature of ",
        "",
        Direction::Impact,
    ),
    ("what would break if i change ", "", Direction::Impact),
    ("what would break if i changed ", "", Direction::Impact),
    ("what is affected by changing ", "", Direction::Impact),
    ("what is affected if i change ", "", Direction::Impact),
    ("impact of changing ", "", Direction::Impact),
    ("what is the impact of changing ", "", Direction::Impact),
];

/// The direction and target a navigation question asks for, or `None` for any other
/// question.
pub fn route(question: &str) -> Option<(Direction, String)> {
    let q = question.trim();
    if q.lines().count() > 1 || q.split_whitespace().count() > MAX_WORDS {
        return None;
    }
    let q = q.trim_end_matches(['?', '.', '!', ' ']);
    let lower = q.to_lowercase();
    // Longest shapes first, so "where is X called from" wins over "where is X called".
    let mut shapes: Vec<&(&str, &str, Direction)> = SHAPES.iter().collect();
    shapes.sort_by_key(|(a, b, _)| std::cmp::Reverse(a.len() + b.len()));
    for &&(before, after, direction) in &shapes {
        let Some(rest) = lower.strip_prefix(before) else {
            continue;
        };
        let Some(middle) = rest.strip_suffix(after) else {
            continue;
        };
        let middle = middle.trim();
        // The target keeps the question's own case.
        let start = before.len() + (rest.len() - rest.trim_start().len());
        let target = q.get(start..start + middle.len())?.trim();
        let target = target
            .strip_prefix("the function ")
            .or_else(|| target.strip_prefix("the method "))
            .or_else(|| target.strip_prefix("the class "))
            .unwrap_or(target);
        let target = target.trim_matches(|c: char| c == '`' || c == '"' || c == '\'');
        let target = target.strip_suffix("()").unwrap_or(target);
        if is_identifier_like(target) {
            return Some((direction, target.to_string()));
        }
    }
    None
}

/// One identifier, possibly qualified (`a.b`, `A::b`, `A#b`) or a `path:line`.
fn is_identifier_like(s: &str) -> bool {
    !s.is_empty()
        && s.chars().any(|c| c.is_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '#' | '/' | '$' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn navigation_questions_are_recognised() {
        for (q, d, t) in [
            (
                "who calls resolve_redirects",
                Direction::Callers,
                "resolve_redirects",
            ),
            (
                "Who calls `Session.send`?",
                Direction::Callers,
                "Session.send",
            ),
            (
                "where is parse_url called from?",
                Direction::Callers,
                "parse_url",
            ),
            (
                "what does Router::route call",
                Direction::Callees,
                "Router::route",
            ),
            (
                "what uses Session.send",
                Direction::References,
                "Session.send",
            ),
            (
                "where is HTTPAdapter used?",
                Direction::References,
                "HTTPAdapter",
            ),
            (
                "what breaks if I change parse_header_links",
                Direction::Impact,
                "parse_header_links",
            ),
            (
                "What breaks if I change parse_header_links's signature?",
                Direction::Impact,
                "parse_header_links",
            ),
            (
                "callers of the function get_netrc_auth()",
                Direction::Callers,
                "get_netrc_auth",
            ),
        ] {
            assert_eq!(route(q), Some((d, t.to_string())), "{q}");
        }
    }

    #[test]
    fn other_questions_are_not() {
        for q in [
            "how are redirects resolved?",
            "who calls the police when the build breaks and nobody answers",
            "what uses the most memory in this repository",
            "what does this do",
            "who calls resolve_redirects\nand why does it loop forever on 301 responses",
            "",
        ] {
            assert_eq!(route(q), None, "{q}");
        }
    }
}
