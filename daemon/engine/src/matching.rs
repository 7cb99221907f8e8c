//! Whether an answer matches its question, and what to say when nothing does.
//!
//! An answer always holds the best-ranked code, even for "what's the capital of France?": a
//! ranking has a first place whatever it ranks. Two signals tell a real match from that:
//! how much of the question's weight the shown code holds ([`crate::engine::match_strength`]),
//! and whether several of the question's words meet in one file — a question about the code
//! names things that live together, while an unrelated question matches stray common words
//! scattered over files. A question that names the repository's identifiers or files matches
//! whatever the scores say.
//!
//! Three outcomes. A match ([`matches`]) is answered as usual, and is what the prompt hook
//! injects. The thresholds are calibrated on questions about the code (issue titles, each in
//! its repository) against unrelated prompts (small talk, general knowledge, writing
//! requests); `bench/results/hook.md` has the rates. A weak match is answered as usual, but
//! says so where the answer's usage note would be. Nothing at all ([`nothing`]: no name, under
//! [`NOTHING_BELOW`], no two words together) is answered in a few lines: full answers to such
//! questions were noise, while cutting every weak match to pointers cost recall (issue texts
//! use many words the code does not).

use crate::index::Sources;
use crate::lines::LineIndex;
use crate::link::Graph;
use crate::render::{Answer, Pointer};
use crate::tokens::{Encoding, count};

/// The match strength at or above which an answer matches, with enough words together.
pub const MIN_STRENGTH: f32 = 0.55;
/// How many distinct words of the question must appear in one file of the shown code.
pub const MIN_TERMS_TOGETHER: usize = 2;
/// Below this match strength, with no name and no two words together, nothing matches.
pub const NOTHING_BELOW: f32 = 0.1;
/// The most tokens an answer that matched nothing spends: a few pointers, not a budget of
/// unrelated code.
pub const NOTHING_MATCHED_TOKENS: usize = 300;
/// Pointers such an answer lists.
const NEAREST: usize = 5;

/// The most distinct terms of `terms` that the shown nodes of one file hold.
pub fn terms_together(
    g: &Graph,
    sources: &Sources,
    lines: &LineIndex,
    answer: &Answer,
    terms: &[(String, f32)],
) -> usize {
    let wanted: std::collections::HashSet<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
    let mut per_file: std::collections::HashMap<&str, std::collections::HashSet<String>> =
        std::collections::HashMap::new();
    for n in &answer.nodes {
        let Some(file) = g.file_index(&n.path) else {
            continue;
        };
        let src = &sources[file as usize];
        let starts = lines.starts(file, src);
        let found = per_file.entry(n.path.as_str()).or_default();
        for line in crate::lines::lines_of(src, &starts, n.start_line, n.end_line) {
            crate::index::tokenize::for_each_token(&line, |t| {
                if wanted.contains(t) {
                    found.insert(t.to_string());
                }
            });
        }
    }
    per_file.values().map(|s| s.len()).max().unwrap_or(0)
}

/// A cosine similarity (all-MiniLM-L6-v2) between the question and one of the best-ranked
/// nodes at or above which the question matches: a paraphrase shares no word with the code,
/// and only the vectors see that it is about it.
pub const MATCH_SIMILARITY: f32 = 0.5;
/// Below this best similarity, with nothing else, nothing matches.
pub const NOTHING_SIMILARITY: f32 = 0.3;

/// What an answer's match is judged on.
#[derive(Debug, Clone, Copy, Default)]
pub struct Evidence {
    /// [`crate::engine::match_strength`] of the shown code.
    pub strength: f32,
    /// The question names one of the repository's identifiers or files.
    pub names_repo: bool,
    /// [`terms_together`].
    pub together: usize,
    /// The best cosine similarity among the best-ranked nodes, when vectors ranked.
    pub similarity: Option<f32>,
}

/// Whether an answer with this evidence matches its question.
pub fn matches(e: Evidence) -> bool {
    e.names_repo
        || (e.strength >= MIN_STRENGTH && e.together >= MIN_TERMS_TOGETHER)
        || e.similarity.is_some_and(|s| s >= MATCH_SIMILARITY)
}

/// Whether nothing in the answer matches its question at all.
pub fn nothing(e: Evidence) -> bool {
    !e.names_repo
        && e.strength < NOTHING_BELOW
        && e.together < MIN_TERMS_TOGETHER
        && e.similarity.is_none_or(|s| s < NOTHING_SIMILARITY)
}

/// The usage note of an answer that matches only weakly: in place of the usual one, and no
/// longer, so the answer stays within its budget.
pub fn weak_note(strength: f32) -> String {
    format!(
        "This code matches the question only weakly (match {:.0} %): it may not be about this \
         code. Expand a → id for more.",
        strength * 100.0
    )
}

/// Sets `answer.matched` from `e`, and reshapes the answer by the verdict: a weak match says so
/// in place of its usage note (never longer, so the budget holds); nothing at all becomes
/// [`nothing_matched_text`], its shown nodes pointers — unless the folder holds no code (its
/// answer already says so) or the budget cannot hold the sentence (the answer it had fit).
pub fn judge(answer: &mut Answer, e: Evidence, enc: Encoding, budget: usize) {
    answer.matched = matches(e);
    if answer.matched || answer.provenance.files == 0 {
        return;
    }
    if !nothing(e) {
        let note = weak_note(answer.confidence);
        let text = answer.text.replacen(crate::render::NOTE, &note, 1);
        answer.text = restated(enc, &text);
        answer.tokens = count(enc, &answer.text);
        return;
    }
    let text = nothing_matched_text(answer, enc, budget);
    let tokens = count(enc, &text);
    if budget != 0 && tokens > budget {
        return;
    }
    answer.text = text;
    answer.tokens = tokens;
    answer.pointers = std::mem::take(&mut answer.nodes)
        .into_iter()
        .map(|n| Pointer {
            id: n.id,
            tokens: n.tokens,
        })
        .collect();
    answer.inside_whole.clear();
    answer.references.clear();
    answer.declarations.clear();
}

/// The text of an answer whose code matches nothing: its first line (the provenance), a
/// sentence saying so first, and the nearest definitions as ids to expand, within
/// [`NOTHING_MATCHED_TOKENS`] (and the budget, when smaller).
pub fn nothing_matched_text(answer: &Answer, enc: Encoding, budget: usize) -> String {
    // The provenance line without the answer's token count, which this text restates.
    let head = provenance_head(&answer.text);
    let limit = if budget == 0 {
        NOTHING_MATCHED_TOKENS
    } else {
        budget.min(NOTHING_MATCHED_TOKENS)
    };
    let mut text = format!(
        "{head}\nNothing in this repository matches the question well (match {:.0} %): it may \
         not be about this code. If it is, name a file, a function or a term the code uses.\n",
        answer.confidence * 100.0
    );
    if !answer.nodes.is_empty() {
        text.push_str("Nearest, to expand if they help:\n");
    }
    for n in answer.nodes.iter().take(NEAREST) {
        let line = format!(
            "→ {} ({} {}, line {})\n",
            n.id, n.kind, n.name, n.start_line
        );
        if count(enc, &format!("{text}{line}")) > limit {
            break;
        }
        text.push_str(&line);
    }
    with_token_count(enc, head, &text[head.len()..])
}

/// The first line of an answer without its closing `· N tokens`.
fn provenance_head(text: &str) -> &str {
    let first = text.lines().next().unwrap_or("");
    first
        .rsplit_once(" · ")
        .filter(|(_, t)| t.ends_with(" tokens"))
        .map_or(first, |(head, _)| head)
}

/// `text` with its first line's token count made true again after an edit.
fn restated(enc: Encoding, text: &str) -> String {
    let head = provenance_head(text);
    let first_len = text.lines().next().map_or(0, str::len);
    with_token_count(enc, head, &text[first_len..])
}

/// `head · N tokens` then `rest`, N the tokens of the whole (a count's own digits counted).
fn with_token_count(enc: Encoding, head: &str, rest: &str) -> String {
    let compose = |n: usize| format!("{head} · {n} tokens{rest}");
    let mut n = count(enc, &compose(0));
    for _ in 0..3 {
        let counted = count(enc, &compose(n));
        if counted == n {
            break;
        }
        n = counted;
    }
    compose(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decide_alone_and_scores_need_words_together() {
        let e = |strength, names_repo, together| Evidence {
            strength,
            names_repo,
            together,
            similarity: None,
        };
        assert!(matches(e(0.0, true, 0)));
        assert!(matches(e(0.9, false, 2)));
        assert!(!matches(e(0.9, false, 1)), "one stray word is no match");
        assert!(
            !matches(e(0.5, false, 5)),
            "words together, but too little of the question"
        );
        assert!(nothing(e(0.0, false, 0)) && nothing(e(0.09, false, 1)));
        assert!(!nothing(e(0.09, false, 2)) && !nothing(e(0.1, false, 0)));
        assert!(!nothing(e(0.0, true, 0)));
        // A paraphrase: no word in common, the vectors see it.
        let paraphrase = Evidence {
            similarity: Some(0.6),
            ..e(0.0, false, 0)
        };
        assert!(matches(paraphrase) && !nothing(paraphrase));
        let unrelated = Evidence {
            similarity: Some(0.1),
            ..e(0.0, false, 0)
        };
        assert!(!matches(unrelated) && nothing(unrelated));
        let note = weak_note(0.41);
        assert!(note.contains("41 %"));
        let (enc, usual) = (Encoding::default(), crate::render::NOTE);
        assert!(
            count(enc, &note) <= count(enc, usual),
            "never longer than the usual note"
        );
    }
}
