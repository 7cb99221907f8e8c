//! Lines of the repository's code a question quotes: a reporter pastes the line they suspect
//! (`if self.max_count is None:`), or the code around a failure. Such a line, found verbatim
//! in the repository, is a place the question points at, like a traceback's frame.
//!
//! A quoted line is looked up through the content index (its words find the few definitions
//! that could hold it), then matched by its trimmed text. A line the repository holds in many
//! places (`return None`, `}`) or that is too short to be specific is no pointer.

use crate::index::Sources;
use crate::index::bm25::{Bm25, query_terms};
use crate::lines::{LineIndex, lines_of};
use crate::link::Graph;

/// The shortest quoted line (trimmed) taken as code.
const MIN_CHARS: usize = 20;
/// At most this many of the question's lines are looked up.
const MAX_LINES: usize = 12;
/// How many definitions the content index offers for each line.
const CANDIDATES: usize = 10;
/// A line found in more places than this is boilerplate, not a pointer.
const MAX_PLACES: usize = 3;

/// The lines of `question` that read as code: long enough, with code punctuation, not a URL
/// or prose sentence; each once, in order, at most [`MAX_LINES`].
fn code_lines(question: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for line in question.lines() {
        let t = line.trim().trim_start_matches('>').trim();
        let code = t.contains(['(', '=', '{', ';', '[']) || t.ends_with(':');
        if t.chars().count() < MIN_CHARS
            || !code
            || t.contains("://")
            || t.starts_with("```")
            || out.contains(&t)
        {
            continue;
        }
        out.push(t);
        if out.len() == MAX_LINES {
            break;
        }
    }
    out
}

/// Where the repository holds the lines `question` quotes: (file, line) pairs, sorted.
pub fn quoted_lines(
    g: &Graph,
    content: &Bm25,
    sources: &Sources,
    lines: &LineIndex,
    question: &str,
) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for quoted in code_lines(question) {
        let terms = query_terms(quoted);
        if terms.is_empty() {
            continue;
        }
        let mut found: Vec<(u32, u32)> = Vec::new();
        for node in crate::index::best_first(&content.score(&terms), CANDIDATES) {
            let def = g.def(node);
            let file = g.nodes[node as usize].file;
            let Some(src) = sources.get(file as usize) else {
                continue;
            };
            let starts = lines.starts(file, src);
            for (i, text) in lines_of(src, &starts, def.start_line, def.end_line)
                .iter()
                .enumerate()
            {
                if text.trim() == quoted {
                    found.push((file, def.start_line + i as u32));
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        if found.len() <= MAX_PLACES {
            out.extend(found);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_lines_are_long_punctuated_and_not_links_or_fences() {
        let q = "Counting is off\n\n```python\n    if self.max_count is None:\n        return self.total(items)\n```\nsee https://example.com/a(b)\nshort = 1\n> quoted_value = compute(x, y)\n";
        assert_eq!(
            code_lines(q),
            vec![
                "if self.max_count is None:",
                "return self.total(items)",
                "quoted_value = compute(x, y)"
            ]
        );
    }

    #[test]
    fn a_quoted_line_is_found_where_the_repository_holds_it_unless_it_is_everywhere() {
        let files = [
            (
                "src/count.py",
                "def count(items, max_count=None):\n    total = 0\n    for item in items:\n        total += 1\n    if max_count is not None and total > max_count:\n        raise ValueError(total)\n    return total\n",
            ),
            (
                "src/other.py",
                "def a():\n    result = compute_everything(1, 2)\n\ndef b():\n    result = compute_everything(1, 2)\n\ndef c():\n    result = compute_everything(1, 2)\n\ndef d():\n    result = compute_everything(1, 2)\n",
            ),
        ];
        let g = crate::testing::graph_of(&files);
        let sources: Sources = files
            .iter()
            .map(|(_, s)| std::sync::Arc::from(s.as_bytes()))
            .collect();
        let ix = crate::index::Index::build(&g, &sources);
        let lines = LineIndex::new(files.len());
        let q = "The check is wrong:\n\n    if max_count is not None and total > max_count:\n\nand also\n    result = compute_everything(1, 2)\n";
        // The boilerplate line is in four places: no pointer.
        assert_eq!(
            quoted_lines(&g, &ix.content.get(), &sources, &lines, q),
            vec![(0, 5)]
        );
    }
}
