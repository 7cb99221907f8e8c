//! The choices for one node's block — whole, window, head, a file's header — each rendered and
//! counted, and which of the file's lines a block shows: what [`super::select`] weighs.

use std::collections::{HashMap, HashSet};

use crate::index::Sources;
use crate::lines::LineIndex;
use crate::link::Graph;
use crate::model::DefKind;
use crate::tokens::{Encoding, count};

use super::block::{Mode, render};
use crate::layout::{FENCE_CLOSE, file_opening};

pub(super) struct Ctx<'a> {
    pub(super) g: &'a Graph,
    pub(super) sources: &'a Sources,
    pub(super) enc: Encoding,
    pub(super) lines: &'a LineIndex,
    /// Lines the question cites, (file, line), sorted.
    pub(super) cited: &'a [(u32, u32)],
    /// Files an earlier block shows: a later block of one joins it under its heading.
    pub(super) introduced: HashSet<u32>,
    /// Tokens of each file's heading and fences, counted once per selection (a block is drawn
    /// many times while a cut is sought).
    pub(super) opening_tokens: HashMap<u32, usize>,
    /// Tokens of the line between two blocks of a file.
    pub(super) between_tokens: usize,
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
        let rendered = render(self.g, self.sources, node, mode, &starts);
        // The answer shows a file's blocks together under one heading: its first block pays
        // for the heading and the fences, each later one for the line between blocks.
        let frame = if self.introduced.contains(&file) {
            self.between_tokens
        } else {
            let (g, enc) = (self.g, self.enc);
            *self.opening_tokens.entry(file).or_insert_with(|| {
                let f = &g.files[file as usize];
                count(enc, &file_opening(&f.path, f.lang)) + count(enc, FENCE_CLOSE)
            })
        };
        Drawn {
            mode,
            tokens: count(self.enc, &rendered.text) + frame,
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
        let weights = with_cited_lines(weights, self.cited, file, def.start_line);
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
        // The pair is weighed against the heaviest window of this length; a single window is
        // placed by its anchor.
        let (weight, _) = best_window(&weights, body, n);
        let start = anchored_window(&weights, body, n);
        // Two places of the function hold the question's words: half a window on each (a `⋮`
        // line between them is the price of the second).
        let half = (n - 1) / 2;
        if let Some((pair, first, second)) = best_pair(&weights, body, half)
            && pair > weight * (1.0 + SECOND_WINDOW_GAIN)
        {
            let (a, c) = (
                def.start_line + first as u32,
                def.start_line + second as u32,
            );
            return self.longest_fitting(node, 1, half as u32, limit, |k| {
                Mode::Windows(a, a + k - 1, c, c + k - 1)
            });
        }
        if body == 0 && start <= 2 {
            return None; // the head is the best window
        }
        let a = def.start_line + start as u32;
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

/// How much more of the question's words two half-length windows must hold than the one
/// window for the pair to be shown instead (see [`best_pair`]): a pair costs a `⋮` and a
/// second context line, so it must buy clearly more of the question's words than one window.
const SECOND_WINDOW_GAIN: f32 = 0.2;
/// The fewest lines each window of a pair shows: less says too little of either place.
const MIN_PAIR_WINDOW: usize = 4;

/// `weights` (one per line of a definition starting at `first_line` in `file`) with each line
/// the question cites made heavier than all the others together: a traceback's frame or a
/// `path:line` is where the reporter saw the code fail, so the window goes there whatever the
/// words say.
fn with_cited_lines(
    mut weights: Vec<f32>,
    cited: &[(u32, u32)],
    file: u32,
    first_line: u32,
) -> Vec<f32> {
    let from = cited.partition_point(|&c| c < (file, first_line));
    let total: f32 = weights.iter().sum::<f32>().max(1.0);
    for &(_, line) in cited[from..].iter().take_while(|c| c.0 == file) {
        if let Some(w) = weights.get_mut((line - first_line) as usize) {
            *w += total;
        }
    }
    weights
}

/// The weight and start of the first of the heaviest windows of `len` lines in
/// `weights[from..]` (`from` when no window weighs anything). `len` ≥ 1 and
/// `from + len` ≤ `weights.len()`.
fn best_window(weights: &[f32], from: usize, len: usize) -> (f32, usize) {
    let mut sum: f32 = weights[from..from + len].iter().sum();
    let mut best = (sum, from);
    for i in from + len..weights.len() {
        sum += weights[i] - weights[i - len];
        if sum > best.0 + 1e-6 {
            best = (sum, i + 1 - len);
        }
    }
    best
}

/// Lines of the window that places every excerpt window (see [`anchored_window`]).
const ANCHOR_LINES: usize = 12;

/// The start of the window of `len` lines in `weights[from..]` centred on the heaviest
/// [`ANCHOR_LINES`]-line window. Its place does not depend on `len`: a few tokens more or
/// less of budget lengthen or shorten the window where it is, instead of moving it to
/// another part of the function that is heaviest at that length.
fn anchored_window(weights: &[f32], from: usize, len: usize) -> usize {
    if len <= ANCHOR_LINES {
        return best_window(weights, from, len).1;
    }
    let anchor = ANCHOR_LINES.min(weights.len() - from);
    let (_, a) = best_window(weights, from, anchor);
    let centred = (a + anchor / 2).saturating_sub(len / 2);
    centred.clamp(from, weights.len() - len)
}

/// The heaviest two windows of `len` lines each in `weights[from..]` with at least one line
/// between them: their summed weight and starts (earliest among equals). None when `len` is
/// below [`MIN_PAIR_WINDOW`] or two such windows do not fit.
fn best_pair(weights: &[f32], from: usize, len: usize) -> Option<(f32, usize, usize)> {
    if len < MIN_PAIR_WINDOW || weights.len() < from + 2 * len + 1 {
        return None;
    }
    // The weight of the window starting at `from + i`.
    let sums: Vec<f32> = weights[from..]
        .windows(len)
        .map(|w| w.iter().sum())
        .collect();
    let mut best: Option<(f32, usize, usize)> = None;
    // The heaviest window ending before the second's gap line.
    let mut first = (f32::MIN, 0);
    for j in len + 1..sums.len() {
        let i = j - len - 1;
        if sums[i] > first.0 + 1e-6 {
            first = (sums[i], i);
        }
        let total = first.0 + sums[j];
        if best.is_none_or(|(w, _, _)| total > w + 1e-6) {
            best = Some((total, from + first.1, from + j));
        }
    }
    best
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

#[cfg(test)]
mod tests {
    use super::{anchored_window, best_pair, best_window};

    #[test]
    fn the_best_window_is_the_first_of_the_heaviest() {
        let w = [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0];
        assert_eq!(best_window(&w, 0, 2), (2.0, 2));
        assert_eq!(best_window(&w, 0, 3), (3.0, 1));
        // Nothing weighs anything: the window starts where it may.
        assert_eq!(best_window(&[0.0; 6], 2, 2), (0.0, 2));
    }

    #[test]
    fn a_long_window_stays_centred_where_the_words_are_dense() {
        // Dense words on lines 40–45 of 100; a lighter but longer spread on lines 70–99 that
        // the heaviest 40-line window would reach for.
        let mut w = vec![0.0f32; 100];
        for x in &mut w[40..46] {
            *x = 3.0;
        }
        for x in &mut w[70..100] {
            *x = 1.0;
        }
        assert_eq!(best_window(&w, 0, 40).1, 60);
        for len in [20, 30, 40] {
            let start = anchored_window(&w, 0, len);
            assert!(start <= 40 && start + len >= 46, "{len}: {start}");
        }
        // Short windows are the heaviest of their length; long ones stay inside the body.
        assert_eq!(anchored_window(&w, 0, 6), 40);
        assert_eq!(anchored_window(&w, 5, 95), 5);
    }

    #[test]
    fn a_pair_of_windows_takes_two_places_apart() {
        // Words at the top (lines 1–4) and the bottom (lines 15–18) of a 20-line body.
        let mut w = vec![0.0f32; 20];
        for i in [1, 2, 3, 4, 15, 16, 17, 18] {
            w[i] = 1.0;
        }
        assert_eq!(best_pair(&w, 0, 4), Some((8.0, 1, 15)));
        // One window of twice the length holds only one of the places.
        assert_eq!(best_window(&w, 0, 8).0, 4.0);
        // Windows start at `from` at the earliest (a Python docstring is skipped).
        assert_eq!(best_pair(&w, 3, 4), Some((6.0, 3, 15)));
    }

    #[test]
    fn no_pair_of_windows_too_short_or_too_long_for_the_body() {
        let w = vec![1.0f32; 20];
        assert_eq!(best_pair(&w, 0, 3), None);
        // Two windows of 10 lines and a line between them need 21.
        assert_eq!(best_pair(&w, 0, 10), None);
        assert!(best_pair(&w, 0, 9).is_some());
    }
}
