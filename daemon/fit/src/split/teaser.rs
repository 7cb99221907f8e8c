//! Teasers and placement: what stays beside a link (a first paragraph, the section's most
//! telling sentence, a model's summary) and which sections stay nearest the root.

use super::{Planner, Section, TEASER_MAX, join, words};
use crate::scan::Line;

impl Planner<'_> {
    /// The first paragraph of a section body, when short: kept beside the link.
    pub(super) fn teaser(&mut self, lines: &[Line], s: &Section) -> String {
        if self.advisor.is_some() {
            let text = join(&lines[s.start..s.end]);
            if let Some(summary) = self.advise(|a| a.summary(&text)) {
                // One line, and never a fence opener: it would swallow the link after it.
                let summary = summary
                    .replace("```", "")
                    .replace("~~~", "")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                if !summary.is_empty() {
                    return format!("Summary: {summary}\n");
                }
            }
        }
        let body = &lines[s.start + s.head..s.end];
        if self.opts.level.teasers()
            && let Some(t) = self.lexical_teaser(body)
        {
            return t;
        }
        let first: Vec<&Line> = body
            .iter()
            .skip_while(|l| l.blank)
            .take_while(|l| !l.blank && !l.in_fence && l.heading.is_none() && !l.link)
            .collect();
        let text: String = first.iter().map(|l| l.text).collect();
        if text.is_empty()
            || self.est(&text) > TEASER_MAX
            || text.trim_start().starts_with(['|', '<'])
        {
            return String::new();
        }
        text
    }

    /// Level 2: the section's most informative sentence by TF-IDF over the document.
    pub(super) fn lexical_teaser(&self, body: &[Line]) -> Option<String> {
        let prose: String = body
            .iter()
            .filter(|l| !l.in_fence && l.heading.is_none() && !l.blank && !l.link)
            .map(|l| l.text.trim().trim_start_matches(['-', '*', '>', ' ']))
            .collect::<Vec<_>>()
            .join(" ");
        // Sentences end at `. `, `! `, `? ` or `。`; keep whole ones that read as sentences
        // (capital or non-Latin start, balanced code spans and emphasis).
        let mut sentences = Vec::new();
        let mut rest = prose.as_str();
        while !rest.is_empty() {
            let cut = rest
                .char_indices()
                .find(|&(i, c)| c == '。' || (".!?".contains(c) && rest[i + 1..].starts_with(' ')))
                .map_or(rest.len(), |(i, c)| i + c.len_utf8());
            sentences.push(rest[..cut].trim());
            rest = &rest[cut..];
        }
        let best = sentences
            .into_iter()
            .filter(|s| {
                s.chars().count() > 20
                    && s.chars()
                        .next()
                        .is_some_and(|c| c.is_uppercase() || !c.is_ascii())
                    && s.matches('`').count() % 2 == 0
                    && s.matches("**").count() % 2 == 0
                    && !s.contains("](")
            })
            .map(|s| {
                let ws = words(s);
                let score: f32 = ws
                    .iter()
                    .map(|w| self.idf.get(w).copied().unwrap_or(0.0))
                    .sum::<f32>()
                    / (ws.len() as f32).sqrt().max(1.0);
                (s, score)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        (self.est(best.0) <= TEASER_MAX).then(|| format!("{}\n", best.0))
    }

    /// How strongly a section should stay near the root (0 = no preference).
    pub(super) fn priority(&self, text: &str, lines: &[Line]) -> f32 {
        let mut p = 0.0;
        if self.opts.level.code_first() {
            for l in lines.iter().filter_map(|l| l.fence_open.map(|_| l.text)) {
                let info = l
                    .trim()
                    .trim_start_matches(['`', '~'])
                    .trim()
                    .to_lowercase();
                if let Some(k) = self
                    .opts
                    .inline_languages
                    .iter()
                    .position(|lang| info.starts_with(lang.as_str()))
                {
                    p += 1.0 / (k as f32 + 1.0);
                }
            }
        }
        if self.opts.level.fits_query() && !self.query_terms.is_empty() {
            let ws = words(text);
            let hits: f32 = self
                .query_terms
                .iter()
                .map(|q| {
                    let tf = ws.iter().filter(|w| *w == q).count() as f32;
                    tf / (tf + 1.2) * self.idf.get(q).copied().unwrap_or(1.0)
                })
                .sum();
            p += 10.0 * hits;
        }
        p
    }
}
