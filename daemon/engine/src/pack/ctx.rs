//! The choices for one node's block — whole, window, head, a file's header — each rendered and
//! counted, and which of the file's lines a block shows: what [`super::select`] weighs.

use std::collections::{HashMap, HashSet};

use crate::index::Sources;
use crate::lines::LineIndex;
use crate::link::Graph;
use crate::model::DefKind;
use crate::tokens::{Encoding, count};

use super::block::{Mode, render};

pub(super) struct Ctx<'a> {
    pub(super) g: &'a Graph,
    pub(super) sources: &'a Sources,
    pub(super) enc: Encoding,
    pub(super) lines: &'a LineIndex,
    /// Files an earlier block gave in full: later headings call them by their short path.
    pub(super) introduced: HashSet<u32>,
    pub(super) short_paths: &'a HashMap<&'a str, String>,
}

/// One node's block as it would be shown: how, its text and token count, and the numbers of the
/// file's lines it shows as they are written.
pub(super) struct Drawn {
    pub(super) mode: Mode,
    pub(super) text: String,
    pub(super) tokens: usize,
    pub(super) lines: Vec<u32>,
}

impl Ctx<'_> {
    pub(super) fn block(&mut self, node: u32, mode: Mode) -> Drawn {
        let file = self.g.nodes[node as usize].file;
        let starts = self.lines.starts(file, &self.sources[file as usize]);
        let full = self.g.files[file as usize].path.as_str();
        let path = match self.short_paths.get(full) {
            Some(short) if self.introduced.contains(&file) => short.as_str(),
            _ => full,
        };
        let rendered = render(self.g, self.sources, node, mode, &starts, path);
        Drawn {
            mode,
            tokens: count(self.enc, &rendered.text),
            text: rendered.text,
            lines: rendered.lines,
        }
    }

    /// Whether every non-blank line of `node` is among `displayed` (its file's lines earlier
    /// blocks show): a region of imports under its file's head, fields in an outline. Comment
    /// lines count: a head folds its file's licence away, and an import added at the top of a
    /// file is found by the lines above it (a region showing the licence as well, dev titles at
    /// 4000: 104 hunks; deemed shown by its imports alone: 103).
    pub(super) fn all_displayed(&mut self, node: u32, displayed: &HashSet<u32>) -> bool {
        let def = self.g.def(node);
        // A definition's first line is never blank: most candidates end here, unread.
        if def.kind == DefKind::File || !displayed.contains(&def.start_line) {
            return false;
        }
        let file = self.g.nodes[node as usize].file;
        let starts = self.lines.starts(file, &self.sources[file as usize]);
        let src = &self.sources[file as usize];
        crate::lines::lines_of(src, &starts, def.start_line, def.end_line)
            .iter()
            .zip(def.start_line..)
            .all(|(text, n)| text.trim().is_empty() || displayed.contains(&n))
    }

    /// For a long function: the window of lines densest in the question's terms that fits
    /// `limit` tokens, when that window is not simply the head.
    pub(super) fn window_within(
        &mut self,
        node: u32,
        limit: usize,
        terms: &HashMap<String, f32>,
    ) -> Option<Drawn> {
        if terms.is_empty() {
            return None;
        }
        let def = self.g.def(node);
        let file = self.g.nodes[node as usize].file;
        let src = self.sources[file as usize].clone();
        let starts = self.lines.starts(file, &src);
        let lines = crate::lines::lines_of(&src, &starts, def.start_line, def.end_line);
        let weights: Vec<f32> = lines
            .iter()
            .map(|l| {
                let mut seen = HashSet::new();
                let mut w = 0.0;
                crate::index::tokenize::for_each_token(l, |t| {
                    if let Some(x) = terms.get(t)
                        && seen.insert(t.to_string())
                    {
                        w += x;
                    }
                });
                w
            })
            .collect();
        // A docstring says in prose what the code below it does; when the function must be
        // cut, the code is what is missing (pvlib's numpy-style docstrings run 100+ lines and a
        // head showed nothing else). Skip it: it never attracts the window, and the window
        // starts after it at the earliest.
        let body = if self.g.file_of(node).lang == crate::model::Lang::Python {
            python_docstring_end(&lines)
        } else {
            0
        };
        // Window length: the longest head that fits tells how many lines the budget allows.
        let Mode::Head(n) = self.head_within(node, limit)?.mode else {
            return None;
        };
        let n = (n as usize).saturating_sub(2).max(1);
        if n >= lines.len() - body {
            if body == 0 {
                return None;
            }
            return self.window_fitting(node, def.start_line + body as u32, def.end_line, limit);
        }
        let mut best = (0.0f32, body);
        let mut sum: f32 = weights[body..body + n].iter().sum();
        best = if sum > best.0 { (sum, body) } else { best };
        for i in body + n..weights.len() {
            sum += weights[i] - weights[i - n];
            if sum > best.0 + 1e-6 {
                best = (sum, i + 1 - n);
            }
        }
        if body == 0 && best.1 <= 2 {
            return None; // the head is the best window
        }
        let a = def.start_line + best.1 as u32;
        self.window_fitting(node, a, a + n as u32 - 1, limit)
    }

    /// The window `a..=b` of `node`, shortened from its end until its block fits `limit` (the
    /// head's line count only estimates a window's: its lines may be longer).
    fn window_fitting(&mut self, node: u32, a: u32, b: u32, limit: usize) -> Option<Drawn> {
        self.longest_fitting(node, a, b, limit, |last| Mode::Window(a, last))
    }

    /// A file's header — its outline up to the first definition — whole.
    pub(super) fn whole_header(&mut self, file: u32) -> Option<Drawn> {
        let first = self
            .g
            .members(file)
            .iter()
            .map(|&m| self.g.def(m).start_line)
            .min()?;
        let def = self.g.def(file);
        let src = self.sources[self.g.nodes[file as usize].file as usize].clone();
        let starts = self.lines.starts(self.g.nodes[file as usize].file, &src);
        // Outline lines before the first member: the header's non-blank lines.
        let n = crate::lines::lines_of(&src, &starts, def.start_line, first.saturating_sub(1))
            .iter()
            .filter(|l| !l.trim().is_empty())
            .count() as u32;
        (n > 0).then(|| self.block(file, Mode::Head(n)))
    }

    /// A file's header, cut to fit `limit`.
    pub(super) fn header_within(&mut self, file: u32, limit: usize) -> Option<Drawn> {
        let head = self.whole_header(file)?;
        if head.tokens <= limit {
            return Some(head);
        }
        self.head_within(file, limit)
    }

    /// The largest head of `node` whose block fits `limit` tokens.
    pub(super) fn head_within(&mut self, node: u32, limit: usize) -> Option<Drawn> {
        let def = self.g.def(node);
        let total = def.end_line - def.start_line + 1;
        self.longest_fitting(node, 1, total, limit, Mode::Head)
    }

    /// The block `mode(k)` for the largest `k` in `lo..=hi` that fits `limit` tokens (a
    /// block grows with `k`).
    fn longest_fitting(
        &mut self,
        node: u32,
        mut lo: u32,
        mut hi: u32,
        limit: usize,
        mode: impl Fn(u32) -> Mode,
    ) -> Option<Drawn> {
        let mut best = None;
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            let drawn = self.block(node, mode(mid));
            if drawn.tokens <= limit {
                best = Some(drawn);
                lo = mid + 1;
            } else if mid == 0 {
                break;
            } else {
                hi = mid - 1;
            }
        }
        best
    }
}

/// The index of the first line after a Python function's docstring (0 when it has none):
/// the signature runs to the first line ending in `:`, then a string literal opens.
fn python_docstring_end(lines: &[String]) -> usize {
    let Some(sig_end) = lines.iter().take(20).position(|l| {
        let code = l.split(" #").next().unwrap_or(l).trim_end();
        code.ends_with(':')
    }) else {
        return 0;
    };
    let Some(open) = (sig_end + 1..lines.len()).find(|&i| !lines[i].trim().is_empty()) else {
        return 0;
    };
    let first = lines[open].trim_start();
    let first = first.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    let Some(quote) = ["\"\"\"", "'''"].into_iter().find(|q| first.starts_with(q)) else {
        return 0;
    };
    if first[3..].contains(quote) {
        return open + 1;
    }
    (open + 1..lines.len())
        .find(|&i| lines[i].contains(quote))
        .map_or(0, |close| close + 1)
}
