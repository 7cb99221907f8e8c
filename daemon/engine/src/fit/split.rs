//! The planner: splits a node at the heading level that gives enough sections, keeps what
//! fits inline (small sections, preferred code, sections relevant to the query), links the
//! rest, groups runs of sections when even their links are too many, and splits headingless
//! text at its blocks. Works on LF text; CRLF documents get CRLF files.

use std::collections::{HashMap, HashSet};

use super::scan::{Line, scan};
use super::{Advisor, FitFile, FitOptions, thousands};

/// Deepest recursion; each level strictly shrinks the text, this only bounds pathologies.
const MAX_DEPTH: usize = 24;
/// A teaser (first paragraph kept beside a link) at most this big.
const TEASER_MAX: usize = 80;

pub struct Planner<'a> {
    opts: &'a FitOptions,
    crlf: bool,
    text: String,
    files: Vec<FitFile>,
    /// Names taken per folder.
    taken: HashMap<String, HashSet<String>>,
    /// Document frequency of words over sections, for level-2 teasers.
    idf: HashMap<String, f32>,
    query_terms: Vec<String>,
    advisor: Option<&'a dyn Advisor>,
    /// The first error the advisor gave: the plan fails with it.
    advice_error: Option<String>,
}

/// A section: lines `start..end`, opened by a heading of `level` spanning `head` lines.
#[derive(Debug, Clone)]
struct Section {
    start: usize,
    end: usize,
    head: usize,
    title: String,
    level: u8,
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 2)
        .map(|w| w.to_lowercase())
        .collect()
}

/// A file-name slug: lowercase letters and digits (any script), `-` between words.
fn slug(title: &str) -> String {
    let mut s = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            s.extend(c.to_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
        if s.chars().count() >= 48 {
            break;
        }
    }
    let s = s.trim_matches('-').to_string();
    if s.is_empty() { "section".into() } else { s }
}

fn heading_title(lines: &[Line], i: usize) -> String {
    let t = lines[i].text.trim();
    t.trim_start_matches('#')
        .trim_end_matches('#')
        .trim()
        .to_string()
}

fn join(lines: &[Line]) -> String {
    lines.iter().map(|l| l.text).collect()
}

impl<'a> Planner<'a> {
    pub fn new(text: &str, opts: &'a FitOptions, advisor: Option<&'a dyn Advisor>) -> Planner<'a> {
        let crlf = text.contains("\r\n");
        let text = text.replace("\r\n", "\n");
        let query_terms = opts.query.as_deref().map(words).unwrap_or_default();
        Planner {
            opts,
            crlf,
            text,
            files: Vec::new(),
            taken: HashMap::new(),
            idf: HashMap::new(),
            query_terms,
            advisor: advisor.filter(|_| opts.level >= 3.0),
            advice_error: None,
        }
    }

    /// The advisor's answer, remembering its first failure.
    fn advise<T>(&mut self, ask: impl FnOnce(&dyn Advisor) -> Result<T, String>) -> Option<T> {
        let advisor = self.advisor?;
        if self.advice_error.is_some() {
            return None;
        }
        match ask(advisor) {
            Ok(v) => Some(v),
            Err(e) => {
                self.advice_error = Some(e);
                None
            }
        }
    }

    fn est(&self, lf_text: &str) -> usize {
        if self.crlf {
            self.opts.estimator.count(&lf_text.replace('\n', "\r\n"))
        } else {
            self.opts.estimator.count(lf_text)
        }
    }

    fn out(&self, lf_text: &str) -> String {
        if self.crlf {
            lf_text.replace('\n', "\r\n")
        } else {
            lf_text.to_string()
        }
    }

    /// Plans the whole tree; the root comes first. Fails only when the advisor did.
    pub fn run(mut self, file_name: &str, stem: &str) -> Result<Vec<FitFile>, String> {
        let text = std::mem::take(&mut self.text);
        self.learn_idf(&text);
        let root = self.node(&text, "", stem, 0);
        let mut files = vec![FitFile {
            rel: file_name.to_string(),
            tokens: self.est(&root),
            text: self.out(&root),
        }];
        files.append(&mut self.files);
        match self.advice_error {
            Some(e) => Err(e),
            None => Ok(files),
        }
    }

    fn learn_idf(&mut self, text: &str) {
        let lines = scan(text);
        let mut docs = 0usize;
        let mut df: HashMap<String, usize> = HashMap::new();
        let mut current: HashSet<String> = HashSet::new();
        for l in &lines {
            if l.heading.is_some() && !current.is_empty() {
                docs += 1;
                for w in current.drain() {
                    *df.entry(w).or_default() += 1;
                }
            }
            current.extend(words(l.text));
        }
        docs += 1;
        for w in current {
            *df.entry(w).or_default() += 1;
        }
        self.idf = df
            .into_iter()
            .map(|(w, n)| (w, ((docs as f32 + 1.0) / (n as f32 + 0.5)).ln()))
            .collect();
    }

    /// A unique `name.md` in folder `folder`.
    fn name(&mut self, folder: &str, base: &str) -> String {
        let taken = self.taken.entry(folder.to_string()).or_default();
        let mut name = base.to_string();
        let mut n = 2;
        while !taken.insert(name.clone()) {
            name = format!("{base}-{n}");
            n += 1;
        }
        name
    }

    /// The size of one link line out of a node named `stem`.
    fn link_cost(&self, stem: &str) -> usize {
        let x = "x".repeat(32);
        self.est(&format!(
            "→ [{stem}/{x}.md]({stem}/{x}.md) (~1,000 tokens)\n"
        ))
        .max(1)
    }

    /// Writes `text` as subdocument `name` of the node (`dir` + `stem`), fitted in turn, and
    /// returns its link line.
    fn child(&mut self, text: &str, dir: &str, stem: &str, name: &str, depth: usize) -> String {
        let folder = format!("{dir}{stem}/");
        let name = self.name(&folder, name);
        let fitted = self.node(text, &folder, &name, depth + 1);
        let tokens = self.est(&fitted);
        let target = format!("{stem}/{name}.md");
        self.files.push(FitFile {
            rel: format!("{folder}{name}.md"),
            tokens,
            text: self.out(&fitted),
        });
        format!("→ [{target}]({target}) (~{} tokens)\n", thousands(tokens))
    }

    /// Fits one node's text; subdocuments go into `dir` + `stem` + `/`.
    fn node(&mut self, text: &str, dir: &str, stem: &str, depth: usize) -> String {
        if self.est(text) <= self.opts.soft || depth >= MAX_DEPTH {
            return text.to_string();
        }
        let lines = scan(text);
        match self.sections(&lines) {
            Some((preamble_end, sections)) => {
                self.split_sections(&lines, preamble_end, &sections, dir, stem, depth)
            }
            None => self.split_blocks(&lines, dir, stem, depth),
        }
    }

    /// The sections at the shallowest heading level giving at least `min_segments` of them
    /// (else at least two), with the end of the preamble. `None` without such a level.
    fn sections(&self, lines: &[Line]) -> Option<(usize, Vec<Section>)> {
        let mut per_level = [0usize; 7];
        for (i, l) in lines.iter().enumerate() {
            // The node's own opening heading does not count: its text is what is split.
            if let (Some(h), false) = (l.heading, i == 0) {
                per_level[h as usize] += 1;
            }
        }
        let min = self.opts.min_segments.max(2);
        let level = (1..=6)
            .find(|&h| per_level[h] >= min)
            .or_else(|| (1..=6).find(|&h| per_level[h] >= 2))? as u8;
        let starts: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(i, l)| *i > 0 && l.heading.is_some_and(|h| h <= level))
            .map(|(i, _)| i)
            .collect();
        let preamble_end = *starts.first()?;
        let sections = starts
            .iter()
            .enumerate()
            .map(|(k, &s)| Section {
                start: s,
                end: starts.get(k + 1).copied().unwrap_or(lines.len()),
                head: if lines.get(s + 1).is_some_and(|l| l.setext_underline) {
                    2
                } else {
                    1
                },
                title: heading_title(lines, s),
                level: lines[s].heading.unwrap_or(level),
            })
            .collect();
        Some((preamble_end, sections))
    }

    /// The first paragraph of a section body, when short: kept beside the link.
    fn teaser(&mut self, lines: &[Line], s: &Section) -> String {
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
        if self.opts.level >= 2.0
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
    fn lexical_teaser(&self, body: &[Line]) -> Option<String> {
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
    fn priority(&self, text: &str, lines: &[Line]) -> f32 {
        let mut p = 0.0;
        if self.opts.level >= 1.5 {
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
        if self.opts.level >= 2.5 && !self.query_terms.is_empty() {
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

    fn split_sections(
        &mut self,
        lines: &[Line],
        preamble_end: usize,
        sections: &[Section],
        dir: &str,
        stem: &str,
        depth: usize,
    ) -> String {
        let soft = self.opts.soft;
        let mut preamble = join(&lines[..preamble_end]);
        // A preamble too big to sit beside the section links goes down a level whole.
        if self.est(&preamble) > soft / 2 {
            let link = self.child(&preamble, dir, stem, "introduction", depth);
            preamble = link;
        }
        let full: Vec<String> = sections
            .iter()
            .map(|s| join(&lines[s.start..s.end]))
            .collect();
        let full_tokens: Vec<usize> = full.iter().map(|t| self.est(t)).collect();
        let teasers: Vec<String> = sections.iter().map(|s| self.teaser(lines, s)).collect();
        // Levels 3–4: the model says which sections matter most; they stay nearest the root.
        let advised: Vec<f32> = {
            let briefs: Vec<String> = sections
                .iter()
                .map(|s| {
                    let first = lines[s.start + s.head..s.end]
                        .iter()
                        .find(|l| !l.blank)
                        .map_or("", |l| l.text.trim());
                    format!(
                        "{} — {}",
                        s.title,
                        first.chars().take(120).collect::<String>()
                    )
                })
                .collect();
            let task = self.opts.query.clone();
            let order = if self.advisor.is_some() {
                self.advise(|a| a.importance(&briefs, task.as_deref()))
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            let mut p = vec![0.0; sections.len()];
            for (rank, &i) in order.iter().enumerate() {
                if let Some(slot) = p.get_mut(i) {
                    *slot = (slot as &f32).max(1.0 - rank as f32 / order.len().max(1) as f32);
                }
            }
            p
        };
        // A linked section in the parent: heading, teaser, link (annotation ~ 30 characters).
        let linked: Vec<String> = sections
            .iter()
            .zip(&teasers)
            .map(|(s, t)| {
                let head = join(&lines[s.start..s.start + s.head]);
                let t = if t.is_empty() {
                    String::new()
                } else {
                    format!("\n{t}")
                };
                format!(
                    "{head}{t}\n→ [{stem}/{0}.md]({stem}/{0}.md) (~1,000 tokens)\n\n",
                    slug(&s.title)
                )
            })
            .collect();
        let linked_tokens: Vec<usize> = linked.iter().map(|t| self.est(t)).collect();
        let base = self.est(&preamble);
        let all_linked: usize = base + linked_tokens.iter().sum::<usize>();
        // Even two sections go down as bare links when their headings and teasers alone are
        // over soft (found by the fit_plan fuzzer: two 900-character headings kept the root
        // over hard beside their links).
        if all_linked > soft && sections.len() >= 2 {
            return self.group(&preamble, sections, &full, &full_tokens, dir, stem, depth);
        }
        // Inline: preferred sections first, then the smallest, while the root stays under soft;
        // the inline threshold shrinks step by step if even that is too much.
        let mut inline = vec![false; sections.len()];
        let mut order: Vec<usize> = (0..sections.len()).collect();
        let prio: Vec<f32> = (0..sections.len())
            .map(|i| {
                self.priority(&full[i], &lines[sections[i].start..sections[i].end])
                    + 10.0 * advised[i]
            })
            .collect();
        order.sort_by(|&a, &b| {
            prio[b]
                .total_cmp(&prio[a])
                .then(full_tokens[a].cmp(&full_tokens[b]))
        });
        let mut size = all_linked;
        let mut threshold = self.opts.inline_threshold;
        loop {
            for &i in &order {
                if inline[i] {
                    continue;
                }
                let gain = full_tokens[i].saturating_sub(linked_tokens[i]);
                let small = full_tokens[i] <= threshold || prio[i] > 0.0;
                let trivial = gain < self.opts.trivial_extension;
                if (small || trivial) && size + gain <= soft {
                    inline[i] = true;
                    size += gain;
                }
            }
            if size <= soft || threshold <= self.opts.inline_reduction {
                break;
            }
            threshold -= self.opts.inline_reduction;
        }
        let links: Vec<Option<String>> = sections
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (!inline[i]).then(|| self.child(&full[i], dir, stem, &slug(&s.title), depth))
            })
            .collect();
        // Teasers are a courtesy: when they would take the node over soft, they go.
        let assemble = |with_teasers: bool| {
            let mut out = preamble.clone();
            for (i, s) in sections.iter().enumerate() {
                let Some(link) = &links[i] else {
                    out.push_str(&full[i]);
                    continue;
                };
                out.push_str(&join(&lines[s.start..s.start + s.head]));
                out.push('\n');
                if with_teasers && !teasers[i].is_empty() {
                    out.push_str(&teasers[i]);
                    out.push('\n');
                }
                out.push_str(link);
                out.push('\n');
            }
            out
        };
        let out = assemble(true);
        if self.est(&out) <= soft {
            return out;
        }
        assemble(false)
    }

    /// Too many sections for their links to fit: consecutive runs go down a level together.
    #[allow(clippy::too_many_arguments)]
    fn group(
        &mut self,
        preamble: &str,
        sections: &[Section],
        full: &[String],
        full_tokens: &[usize],
        dir: &str,
        stem: &str,
        depth: usize,
    ) -> String {
        let total: usize = full_tokens.iter().sum();
        let link_cost = self.link_cost(stem);
        let room = self
            .opts
            .soft
            .saturating_sub(self.est(preamble))
            .max(link_cost * 2);
        // As few groups as keep each near the soft size, as many as their links allow.
        let mut groups = total
            .div_ceil(self.opts.soft * 4 / 5)
            .clamp(2, (room / link_cost).max(2))
            .min(sections.len());
        // `link_cost` guesses a name's length; the real names can be longer (two titles cut to
        // 24 characters each). Plan with them, and with fewer, larger groups while the bare
        // links would not fit beside the preamble: each group is fitted in turn, so the tree
        // gains a level instead of the root going over.
        let runs = loop {
            let runs = plan_runs(full_tokens, groups);
            let links: usize = runs
                .iter()
                .map(|&(i, j)| {
                    let name = format!("{}-99", run_name(sections, i, j));
                    // +1: an estimate rounds down per piece, not per file.
                    self.est(&format!(
                        "→ [{stem}/{name}.md]({stem}/{name}.md) (~99,999 tokens)\n"
                    )) + 1
                })
                .sum();
            if links <= room || groups <= 2 {
                break runs;
            }
            groups = (groups * room / links).clamp(2, groups - 1);
        };
        let mut built: Vec<(String, String, String)> = Vec::new();
        let mut out = preamble.to_string();
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        for (i, j) in runs {
            let text: String = full[i..j].concat();
            let name = run_name(sections, i, j);
            // An inserted heading names the run and lists what it holds, so the root is an
            // overview rather than a bare list of links (dropped again if it does not fit).
            let (heading, titles) = if j - i > 1 {
                let level = sections[i].level.clamp(1, 6) as usize;
                let titles: Vec<&str> = sections[i..j].iter().map(|s| s.title.as_str()).collect();
                let shown: Vec<&str> = titles.iter().take(12).copied().collect();
                let more = if titles.len() > 12 {
                    format!(" … ({} sections)", titles.len())
                } else {
                    String::new()
                };
                (
                    format!(
                        "{} {} … {}\n\n",
                        "#".repeat(level),
                        titles[0],
                        titles[titles.len() - 1]
                    ),
                    format!("{}{more}\n\n", shown.join(" · ")),
                )
            } else {
                (String::new(), String::new())
            };
            let link = self.child(&text, dir, stem, &name, depth);
            built.push((heading, titles, link));
        }
        // The fullest overview that fits: headings and titles, headings alone, links alone.
        for detail in [2, 1, 0] {
            let mut root = out.clone();
            for (heading, titles, link) in &built {
                if detail >= 1 {
                    root.push_str(heading);
                }
                if detail >= 2 {
                    root.push_str(titles);
                }
                root.push_str(link);
                if detail >= 1 {
                    root.push('\n');
                }
            }
            if detail == 0 || self.est(&root) <= self.opts.soft {
                return root;
            }
        }
        out
    }

    /// No usable headings: the opening heading (if any) stays; the blocks after it are packed
    /// into parts, each a subdocument. A block too big alone is cut at line boundaries (a
    /// fence is closed and reopened around the cut).
    fn split_blocks(&mut self, lines: &[Line], dir: &str, stem: &str, depth: usize) -> String {
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
        // Per-line sums can fall far below the whole's estimate (control characters and
        // replacement characters: a 504-token text summed to about 250, found by the fit_plan
        // fuzzer) and leave one part; then pack lines by the estimate of the text itself.
        if parts.len() < 2 && whole_tokens > self.opts.soft {
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

/// Consecutive runs `(start, end)` of about `total / groups` tokens each, at least two.
fn plan_runs(full_tokens: &[usize], groups: usize) -> Vec<(usize, usize)> {
    let total: usize = full_tokens.iter().sum();
    let target = total.div_ceil(groups.max(1));
    let n = full_tokens.len();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i;
        let mut size = 0;
        while j < n && (j == i || size + full_tokens[j] <= target) {
            size += full_tokens[j];
            j += 1;
        }
        // Keep at least two groups, so the child is smaller than this node.
        if i == 0 && j == n {
            j = (n / 2).max(1);
        }
        runs.push((i, j));
        i = j;
    }
    runs
}

/// A run's name: its section's slug, or the first and last sections' slugs cut short.
fn run_name(sections: &[Section], i: usize, j: usize) -> String {
    if j - i == 1 {
        slug(&sections[i].title)
    } else {
        let (a, b) = (slug(&sections[i].title), slug(&sections[j - 1].title));
        let cut = |s: &str| s.chars().take(24).collect::<String>();
        format!("{}--{}", cut(&a), cut(&b))
    }
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
