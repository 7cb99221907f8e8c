//! The planner: splits a node at the heading level that gives enough sections, keeps what
//! fits inline (small sections, preferred code, sections relevant to the query), links the
//! rest, groups runs of sections when even their links are too many, and splits headingless
//! text at its blocks. Works on LF text; CRLF documents get CRLF files.

mod blocks;
mod sections;
mod teaser;

use std::collections::{HashMap, HashSet};

use super::scan::{Line, scan};
use super::{AdviceError, Advisor, FitFile, FitOptions, thousands};

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
    advice_error: Option<AdviceError>,
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
            advisor: advisor.filter(|_| opts.level.uses_llm()),
            advice_error: None,
        }
    }

    /// The advisor's answer, remembering its first failure.
    fn advise<T>(&mut self, ask: impl FnOnce(&dyn Advisor) -> Result<T, AdviceError>) -> Option<T> {
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
    pub fn run(mut self, file_name: &str, stem: &str) -> Result<Vec<FitFile>, AdviceError> {
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
}
