//! Splitting headingless text: blocks packed into parts, a block too big alone cut at line
//! boundaries (a fence closed and reopened around each cut).

use super::{Planner, join};
use crate::scan::{Line, scan};

impl Planner<'_> {
    /// No usable headings: the opening heading (if any) stays; the blocks after it are packed
    /// into parts, each a subdocument. A block too big alone is cut at line boundaries (a
    /// fence is closed and reopened around the cut).
    pub(super) fn split_blocks(
        &mut self,
        lines: &[Line],
        dir: &str,
        stem: &str,
        depth: usize,
    ) -> String {
        let mut head = match lines.first() {
            Some(l) if l.heading.is_some() => {
                if lines.get(1).is_some_and(|l| l.setext_underline) {
                    2
                } else {
                    1
                }
            }
            _ => 0,
        };
        // A heading too big to stay beside the links goes down with the text.
        if self.est(&join(&lines[..head])) > self.opts.soft / 3 {
            head = 0;
        }
        let body = &lines[head..];
        // Sizes are summed per line (cheap, memoised, and within a few tokens of the whole).
        let mut blocks: Vec<(String, usize)> = Vec::new();
        let mut current = String::new();
        let mut current_tokens = 0;
        let mut fence_open: Option<String> = None;
        let piece = self.opts.soft * 9 / 10;
        // Lines longer than a part are never split (that would change the text): each such
        // line goes alone into a part of its own, so it is the only thing over the threshold.
        let mut alone: Vec<usize> = Vec::new();
        for l in body {
            if l.fence_open.is_some() && fence_open.is_none() {
                fence_open = Some(l.text.to_string());
            }
            let line_tokens = self.est(l.text);
            // Inside a fence, such a line goes alone between a closing and a reopening marker
            // (found by the fit_plan fuzzer: a document in one unclosed fence stayed whole).
            if line_tokens > piece
                && l.in_fence
                && l.fence_open.is_none()
                && let Some(open) = fence_open.clone()
            {
                let (marker, reopen) = fence_reopening(&open);
                if !current.trim().is_empty() {
                    current.push_str(&format!("{marker}\n"));
                    blocks.push((std::mem::take(&mut current), current_tokens));
                }
                let line = if l.text.ends_with('\n') {
                    l.text.to_string()
                } else {
                    format!("{}\n", l.text)
                };
                alone.push(blocks.len());
                blocks.push((format!("{reopen}{line}{marker}\n"), line_tokens + 2));
                current = reopen.clone();
                current_tokens = self.est(&reopen);
                continue;
            }
            if line_tokens > piece && !l.in_fence {
                if !current.is_empty() {
                    blocks.push((std::mem::take(&mut current), current_tokens));
                }
                alone.push(blocks.len());
                blocks.push((l.text.to_string(), line_tokens));
                current_tokens = 0;
                continue;
            }
            let boundary = !l.in_fence && (l.blank || l.rule);
            current.push_str(l.text);
            // +1 per line: estimates round down, and a sum of many short lines' estimates
            // falls well below the whole's (40 lines of `- item` are 40 tokens by line and
            // 70 whole, found by the fit_plan fuzzer). Over-counting only cuts sooner.
            current_tokens += self.est(l.text) + 1;
            if current_tokens > piece {
                // Cut an oversized block at a line boundary; a fence is closed and reopened.
                let closes = l.text.trim().chars().all(|c| c == '`' || c == '~');
                match fence_open.clone().filter(|_| l.in_fence && !closes) {
                    Some(open) => {
                        let (marker, reopen) = fence_reopening(&open);
                        current.push_str(&format!("{marker}\n"));
                        blocks.push((std::mem::take(&mut current), current_tokens));
                        current.push_str(&reopen);
                        current_tokens = self.est(&reopen);
                    }
                    None => blocks.push((std::mem::take(&mut current), current_tokens)),
                }
                if !l.in_fence || closes {
                    current_tokens = 0;
                }
            } else if boundary {
                blocks.push((std::mem::take(&mut current), current_tokens));
                current_tokens = 0;
            }
            if l.in_fence && l.fence_open.is_none() && fence_open.is_some() {
                let t = l.text.trim();
                if !t.is_empty() && t.chars().all(|c| c == '`' || c == '~') {
                    fence_open = None;
                }
            }
        }
        if !current.is_empty() {
            blocks.push((current, current_tokens));
        }
        // Pack blocks into parts: near `piece` each, but never so many that their links
        // crowd the node (a big part is split again one level down); a small part is merged
        // with the next block rather than left alone.
        let total: usize = blocks.iter().map(|b| b.1).sum();
        let head_tokens = self.est(&join(&lines[..head]));
        let max_links = (self.opts.soft.saturating_sub(head_tokens) / self.link_cost(stem)).max(2);
        // Every part closes at ≥ target/3, so at most `max_links` parts.
        let target = piece
            .max((3 * total).div_ceil(max_links))
            .min(total.div_ceil(2).max(1));
        let mut parts: Vec<String> = Vec::new();
        let mut part = String::new();
        let mut part_tokens = 0;
        // Whether the last part holds a line alone: nothing is merged into it.
        let mut last_alone = false;
        for (k, (b, t)) in blocks.into_iter().enumerate() {
            let lone = alone.contains(&k);
            let full = part_tokens + t > target && part_tokens >= target / 3;
            if !part.trim().is_empty() && (lone || full) {
                parts.push(std::mem::take(&mut part));
                part_tokens = 0;
                last_alone = false;
            }
            part.push_str(&b);
            part_tokens += t;
            if lone {
                parts.push(std::mem::take(&mut part));
                part_tokens = 0;
                last_alone = true;
            }
        }
        if !part.trim().is_empty() {
            match parts.last_mut() {
                Some(last) if part_tokens < target / 3 && !last_alone => last.push_str(&part),
                _ => parts.push(part),
            }
        } else if let Some(last) = parts.last_mut() {
            last.push_str(&part);
        }
        let whole = join(lines);
        let whole_tokens = self.est(&whole);
        // Per-line sums can miss the whole's estimate either way and leave one part, or a
        // part no smaller than the text: below it (control and replacement characters: a
        // 504-token text summed to about 250), or above it (a 131-backtick fence marker
        // closing and reopening every block made a 558-token part of a 520-token text; both
        // found by the fit_plan fuzzer). Then pack lines by the estimate of the text itself.
        let no_progress = parts.len() < 2 || parts.iter().any(|p| self.est(p) >= whole_tokens);
        if no_progress && whole_tokens > self.opts.soft {
            parts.clear();
            let mut part = String::new();
            for l in body {
                if !part.trim().is_empty() && self.est(&format!("{part}{}", l.text)) > piece {
                    parts.push(std::mem::take(&mut part));
                }
                part.push_str(l.text);
            }
            if !part.is_empty() {
                parts.push(part);
            }
        }
        // Progress or nothing: every part must be smaller than the text it came from, or the
        // recursion would not end.
        if parts.len() < 2 || parts.iter().any(|p| self.est(p) >= whole_tokens) {
            return whole;
        }
        if parts.len() > max_links {
            tracing::debug!(parts = parts.len(), max_links, "more parts than links fit");
        }
        let mut out = join(&lines[..head]);
        if head > 0 {
            out.push('\n');
        }
        let links: Vec<String> = parts
            .iter()
            .enumerate()
            .map(|(k, p)| self.child(p, dir, stem, &format!("part-{}", k + 1), depth))
            .collect();
        // Each part under an inserted heading naming how it begins, when that fits.
        let level = lines
            .first()
            .and_then(|l| l.heading)
            .filter(|_| head > 0)
            .map_or(2, |h| (h + 1).min(6)) as usize;
        // The text's opening block (often its table of contents) also stays in view, if small.
        let opening = parts[0]
            .split("\n\n")
            .find(|b| !b.trim().is_empty())
            .map(|b| format!("{}\n\n", b.trim_end()))
            .filter(|b| self.est(b) <= self.opts.soft / 3)
            // Plain text only: a fence or a link line copied here would swallow or fake the
            // links that follow.
            .filter(|b| {
                scan(b)
                    .iter()
                    .all(|l| !l.in_fence && !l.link && l.heading.is_none() && !l.setext_underline)
            })
            .unwrap_or_default();
        let mut titled = format!("{out}{opening}");
        for (k, (p, link)) in parts.iter().zip(&links).enumerate() {
            titled.push_str(&format!(
                "{} {}\n\n{link}\n",
                "#".repeat(level),
                part_title(p, k)
            ));
        }
        if self.est(&titled) <= self.opts.soft {
            return titled;
        }
        for link in links {
            out.push_str(&link);
        }
        out
    }
}

/// The marker that closes a fence opened by `open`, and the line that reopens it: the marker
/// and the language only, since the whole opening line repeated in every piece could outweigh
/// the piece (a 600-character info string made every part as big as the text, and the
/// recursion doubled without end — found by the fit_plan fuzzer).
fn fence_reopening(open: &str) -> (String, String) {
    let marker: String = open
        .trim_start()
        .chars()
        .take_while(|c| *c == '`' || *c == '~')
        .collect();
    let lang: String = open
        .trim_start()
        .trim_start_matches(['`', '~'])
        .split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .take(20)
        .collect();
    let reopen = format!("{marker}{lang}\n");
    (marker, reopen)
}

/// How a part begins, as a heading: its first line with visible text (tags and Markdown marks
/// removed), cut to 80 characters; `Part N` when there is none.
fn part_title(part: &str, k: usize) -> String {
    let visible = |line: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for c in line.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                _ if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.trim_matches(|c: char| c.is_whitespace() || "#*_`>-|".contains(c))
            .to_string()
    };
    let title = part
        .lines()
        .filter(|l| !l.trim_start().starts_with("```") && !l.trim_start().starts_with("~~~"))
        .map(visible)
        .find(|t| t.chars().any(char::is_alphanumeric))
        .unwrap_or_default();
    let cut: String = title.chars().take(80).collect();
    if cut.is_empty() {
        format!("Part {}", k + 1)
    } else if cut.len() < title.len() {
        format!("Part {}: {cut}…", k + 1)
    } else {
        format!("Part {}: {cut}", k + 1)
    }
}
