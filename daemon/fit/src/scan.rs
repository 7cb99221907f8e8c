//! A fence-aware line scanner for Markdown: which lines are headings (ATX and setext, with
//! their level), thematic breaks, fences, blank lines and FIT link lines. Never fails.

/// One line, classified.
#[derive(Debug, Clone, Default)]
pub struct Line<'a> {
    pub text: &'a str,
    pub blank: bool,
    /// Inside a fenced code block, delimiters included.
    pub in_fence: bool,
    pub fence_open: Option<&'a str>,
    /// Heading level (1-6) on the line that starts a heading: the ATX line, or the text line
    /// of a setext heading.
    pub heading: Option<u8>,
    /// The underline of a setext heading.
    pub setext_underline: bool,
    pub rule: bool,
    pub link: bool,
}

fn indent(t: &str) -> usize {
    t.len() - t.trim_start_matches(' ').len()
}

fn atx_level(t: &str) -> Option<u8> {
    if indent(t) > 3 {
        return None;
    }
    let s = t.trim_start_matches(' ');
    let hashes = s.len() - s.trim_start_matches('#').len();
    let rest = &s[hashes..];
    ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with([' ', '\t'])))
        .then_some(hashes as u8)
}

fn fence_marker(t: &str) -> Option<&str> {
    if indent(t) > 3 {
        return None;
    }
    let s = t.trim_start_matches(' ');
    let c = s.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = s.len() - s.trim_start_matches(c).len();
    if n < 3 {
        return None;
    }
    let info = &s[n..];
    if c == '`' && info.contains('`') {
        return None;
    }
    Some(&s[..n])
}

fn is_rule(t: &str) -> bool {
    if indent(t) > 3 {
        return false;
    }
    let s: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    s.len() >= 3
        && (s.chars().all(|c| c == '*')
            || s.chars().all(|c| c == '-')
            || s.chars().all(|c| c == '_'))
}

fn setext_level(t: &str) -> Option<u8> {
    if indent(t) > 3 {
        return None;
    }
    let s = t.trim();
    if !s.is_empty() && s.chars().all(|c| c == '=') {
        Some(1)
    } else if !s.is_empty() && s.chars().all(|c| c == '-') {
        Some(2)
    } else {
        None
    }
}

/// Whether a line is a FIT link line: `→ [T](T.md) (~N tokens)`.
pub fn is_link_line(t: &str) -> bool {
    let s = t.trim_end();
    if indent(s) > 3 {
        return false;
    }
    let s = s.trim_start();
    let s = s
        .strip_prefix('→')
        .or_else(|| s.strip_prefix("->"))
        .map_or(s, |r| r.trim_start());
    let Some(rest) = s.strip_prefix('[') else {
        return false;
    };
    let Some((_, rest)) = rest.split_once("](") else {
        return false;
    };
    let Some((target, rest)) = rest.split_once(')') else {
        return false;
    };
    let rest = rest.trim_start();
    target.ends_with(".md")
        && rest.starts_with("(~")
        && (rest.ends_with("tokens)") || rest.ends_with("token)"))
}

/// Classifies every line (split on `\n`; a trailing `\r` stays in the text).
pub fn scan(text: &str) -> Vec<Line<'_>> {
    let mut out: Vec<Line> = Vec::new();
    let mut fence: Option<&str> = None;
    // YAML front matter (`---` … `---` or `...` at the very top) is opaque, like a fence.
    let front_matter_end = {
        let mut it = text.split_inclusive('\n');
        match it.next().map(|l| l.trim_end()) {
            Some("---") => it
                .take(500)
                .position(|l| matches!(l.trim_end(), "---" | "..."))
                .map(|p| p + 2),
            _ => None,
        }
    };
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        if front_matter_end.is_some_and(|end| i < end) {
            out.push(Line {
                text: raw,
                blank: raw.trim().is_empty(),
                in_fence: true,
                ..Line::default()
            });
            continue;
        }
        let t = raw.trim_end_matches('\n').trim_end_matches('\r');
        let mut ln = Line {
            text: raw,
            blank: t.trim().is_empty(),
            ..Line::default()
        };
        if let Some(f) = fence {
            ln.in_fence = true;
            let s = t.trim_start_matches(' ');
            if indent(t) <= 3
                && s.trim_end()
                    .chars()
                    .all(|c| c == f.chars().next().unwrap_or('`'))
                && s.trim_end().len() >= f.len()
            {
                fence = None;
            }
            out.push(ln);
            continue;
        }
        if let Some(f) = fence_marker(t) {
            fence = Some(f);
            ln.in_fence = true;
            ln.fence_open = Some(f);
            out.push(ln);
            continue;
        }
        if let Some(level) = atx_level(t) {
            ln.heading = Some(level);
        } else if let (Some(level), Some(prev)) = (setext_level(t), out.last_mut()) {
            let prev_plain = !prev.blank
                && !prev.in_fence
                && prev.heading.is_none()
                && !prev.rule
                && !prev.setext_underline
                && !prev.link;
            // `---` under a paragraph line is a setext H2; a line of `-` alone is a rule.
            if prev_plain {
                prev.heading = Some(level);
                ln.setext_underline = true;
            } else if is_rule(t) {
                ln.rule = true;
            }
        } else if is_rule(t) {
            ln.rule = true;
        } else {
            ln.link = is_link_line(t);
        }
        out.push(ln);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_fences_rules_links() {
        let doc = "Title\n=====\n\n# A\n```md\n# not a heading\n```\ntext\n---\n\n---\n## B ##\n    # code\n→ [a/b.md](a/b.md) (~1,200 tokens)\n~~~\n```\n~~~\n";
        let l = scan(doc);
        assert_eq!(l[0].heading, Some(1));
        assert!(l[1].setext_underline);
        assert_eq!(l[3].heading, Some(1));
        assert!(l[5].in_fence && l[5].heading.is_none());
        assert_eq!(l[7].heading, Some(2), "text followed by --- is a setext H2");
        assert!(l[10].rule);
        assert_eq!(l[11].heading, Some(2));
        assert_eq!(l[12].heading, None);
        assert!(l[13].link);
        assert!(
            l[15].in_fence,
            "a ``` line inside a ~~~ fence does not close it"
        );
    }
}
