//! A BM25 index over documents identified by dense ids (the graph's node ids), in segments.
//!
//! Writer: [`Bm25Builder`] tokenizes every document into one immutable [`Segment`]. An update
//! ([`Bm25::update`]) never rewrites what it keeps: the previous segments are shared, each with
//! a map from its documents to today's ids (a document whose node changed or went away is a
//! tombstone in that map, its terms counted out of the document frequencies); the changed
//! documents form a new small segment. Merging ([`Bm25::merged`]) folds segments into one
//! (every few updates the small ones, now and then all of them), so a save tokenizes only what
//! changed and copies one id map, while reads stay within a few segments. Scores are exactly
//! those of a fresh build over the same documents: the statistics (document count, lengths,
//! document frequencies) are of the live documents only.

use std::collections::HashMap;
use std::sync::Arc;

use super::tokenize::for_each_token;
use fittok_util::hash::FnvBuild;

mod segment;

use segment::{Segment, SegmentWriter, distinct_terms};

/// Every term's live postings as (node, term frequency), by term: for tests.
#[cfg(test)]
pub type Postings = HashMap<String, Vec<(u32, u16)>>;

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// A segment's document that is no longer live.
const DEAD: u32 = u32::MAX;
/// Beyond this many segments, the small ones (all but the first) are merged into one.
const MAX_PARTS: usize = 6;
/// A full merge is due once the documents outside the first segment (live or dead) and the
/// dead ones in it are more than this fraction of the live documents.
const MERGE_FRACTION: f64 = 0.125;
/// ... but never for fewer changed documents than this (small repositories).
const MERGE_MIN_DOCS: usize = 4096;
/// With this fraction changed, an update merges at once: the backstop for a caller that never
/// merges (the daemon merges in the background long before).
const MERGE_NOW_FRACTION: f64 = 0.5;

#[derive(Default)]
pub struct Bm25Builder {
    writer: SegmentWriter,
}

impl Bm25Builder {
    /// Adds the next document (ids are assigned in order: the n-th call is document n).
    pub fn add(&mut self, text: &str) -> u32 {
        self.writer.add(text)
    }

    pub fn finish(self) -> Bm25 {
        let seg = self.writer.finish();
        let n = seg.doc_count() as u32;
        Bm25::from_parts(vec![Part {
            node: (0..n).collect(),
            dead_df: HashMap::default(),
            seg: Arc::new(seg),
        }])
    }
}

/// A segment as seen by one index: its documents' ids today, and the document frequency its
/// dead documents still hold.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Part {
    seg: Arc<Segment>,
    /// Segment document → document id today, or [`DEAD`].
    node: Vec<u32>,
    /// Per term, how many of this segment's dead documents hold it.
    dead_df: HashMap<Box<str>, u32, FnvBuild>,
}

impl Part {
    fn df(&self, term: &str) -> u32 {
        let all = self.seg.postings(term).map_or(0, |(d, _)| d.len() as u32);
        all - self.dead_df.get(term).copied().unwrap_or(0)
    }

    fn dead(&self) -> usize {
        self.node.iter().filter(|&&n| n == DEAD).count()
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Bm25 {
    parts: Vec<Part>,
    /// Live documents (ids `0..docs`).
    docs: u32,
    /// Tokens over the live documents.
    total_len: u64,
}

impl Bm25 {
    fn from_parts(parts: Vec<Part>) -> Bm25 {
        let mut docs = 0u32;
        let mut total_len = 0u64;
        for p in &parts {
            for (d, &n) in p.node.iter().enumerate() {
                if n != DEAD {
                    docs += 1;
                    total_len += u64::from(p.seg.doc_len(d as u32));
                }
            }
        }
        Bm25 {
            parts,
            docs,
            total_len,
        }
    }

    /// Heap bytes: every segment (shared ones too), id maps and dead counts.
    pub fn heap_bytes(&self) -> usize {
        let slot = std::mem::size_of::<(Box<str>, u32)>() + 1;
        self.parts
            .iter()
            .map(|p| {
                p.seg.heap_bytes()
                    + p.node.capacity() * 4
                    + p.dead_df.keys().map(|t| t.len()).sum::<usize>()
                    + p.dead_df.capacity() * slot
            })
            .sum::<usize>()
            + self.parts.capacity() * std::mem::size_of::<Part>()
    }

    /// How many segments a read looks in.
    pub fn segments(&self) -> usize {
        self.parts.len()
    }

    fn df(&self, term: &str) -> u32 {
        self.parts.iter().map(|p| p.df(term)).sum()
    }

    fn idf_of_df(&self, df: u32) -> f32 {
        let n = self.docs.max(1) as f32;
        let df = df as f32;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// A term's idf, if some live document holds it.
    pub fn idf(&self, term: &str) -> Option<f32> {
        let df = self.df(term);
        (df > 0).then(|| self.idf_of_df(df))
    }

    /// How many live documents hold `term`.
    pub fn doc_frequency(&self, term: &str) -> u32 {
        self.df(term)
    }

    /// The live documents holding `term`, in no particular order.
    pub fn documents_with(&self, term: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for p in &self.parts {
            if let Some((docs, _)) = p.seg.postings(term) {
                out.extend(
                    docs.iter()
                        .map(|&d| p.node[d as usize])
                        .filter(|&n| n != DEAD),
                );
            }
        }
        out
    }

    /// Scores every document against weighted query terms; returns the dense score array.
    pub fn score(&self, query: &[(String, f32)]) -> Vec<f32> {
        let mut scores = vec![0.0f32; self.docs as usize];
        let avgdl = (self.total_len as f64 / f64::from(self.docs.max(1))).max(1.0) as f32;
        for (term, weight) in query {
            let df = self.df(term);
            if df == 0 {
                continue;
            }
            let idf = self.idf_of_df(df) * weight;
            for p in &self.parts {
                let Some((docs, tfs)) = p.seg.postings(term) else {
                    continue;
                };
                for (&doc, &tf) in docs.iter().zip(tfs) {
                    let node = p.node[doc as usize];
                    if node == DEAD {
                        continue;
                    }
                    let len = p.seg.doc_len(doc) as f32;
                    let norm = K1 * (1.0 - B + B * len / avgdl);
                    let tf = f32::from(tf);
                    scores[node as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
                }
            }
        }
        scores
    }

    /// The index over `doc_count` documents where document `remap[d]` is `prev`'s document
    /// `d` unchanged and every other one is in `fresh` as (id, text): equal in every score to
    /// building all of them anew, at the cost of tokenizing `fresh` and the documents that
    /// died (`old_text(d)`: `prev`'s document `d`, for its terms' document frequencies).
    /// Merges segments when due (see [`Bm25::merge_due`]) only if `merge` says so.
    pub fn update(
        prev: &Bm25,
        remap: &[Option<u32>],
        doc_count: usize,
        fresh: &[(u32, String)],
        old_text: impl Fn(u32) -> String,
    ) -> Bm25 {
        let mut parts = Vec::with_capacity(prev.parts.len() + 1);
        for p in &prev.parts {
            let mut dead_df = p.dead_df.clone();
            let node: Vec<u32> = p
                .node
                .iter()
                .map(|&old| {
                    if old == DEAD {
                        return DEAD;
                    }
                    match remap.get(old as usize).copied().flatten() {
                        Some(n) => n,
                        None => {
                            distinct_terms(&old_text(old), |t| {
                                // Only terms the segment holds for this document.
                                *dead_df.entry(t.into()).or_default() += 1;
                            });
                            DEAD
                        }
                    }
                })
                .collect();
            if node.iter().all(|&n| n == DEAD) {
                continue; // nothing of it is live: it drops out with its dead counts
            }
            parts.push(Part {
                seg: Arc::clone(&p.seg),
                node,
                dead_df,
            });
        }
        if !fresh.is_empty() {
            let mut w = SegmentWriter::default();
            for (_, text) in fresh {
                w.add(text);
            }
            parts.push(Part {
                seg: Arc::new(w.finish()),
                node: fresh.iter().map(|(id, _)| *id).collect(),
                dead_df: HashMap::default(),
            });
        }
        let ix = Bm25::from_parts(parts);
        debug_assert_eq!(ix.docs as usize, doc_count);
        let _ = doc_count;
        if ix.changed_over(MERGE_NOW_FRACTION) {
            return ix.merged(true);
        }
        if ix.parts.len() > MAX_PARTS {
            return ix.merged(false);
        }
        ix
    }

    /// Whether a full merge is due: the documents outside the first segment and the dead ones
    /// in it outweigh [`MERGE_FRACTION`] of the live ones.
    pub fn merge_due(&self) -> bool {
        self.changed_over(MERGE_FRACTION)
    }

    fn changed_over(&self, fraction: f64) -> bool {
        let Some(first) = self.parts.first() else {
            return false;
        };
        let changed = first.dead() + self.parts[1..].iter().map(|p| p.node.len()).sum::<usize>();
        changed > MERGE_MIN_DOCS && changed as f64 > fraction * f64::from(self.docs)
    }

    /// The same index in fewer segments: all of them in one (`all`), or the first kept and the
    /// rest in one. Dead documents of the merged segments are gone from the result.
    pub fn merged(&self, all: bool) -> Bm25 {
        let keep = usize::from(!all).min(self.parts.len());
        let (kept, merge) = self.parts.split_at(keep);
        if merge.len() <= 1 && merge.iter().all(|p| p.dead_df.is_empty() && p.dead() == 0) {
            return Bm25::from_parts(self.parts.clone());
        }
        // The merged segment's documents: the live ones, in id order.
        let mut live: Vec<(u32, u32)> = Vec::new(); // (id, length)
        for p in merge {
            for (d, &n) in p.node.iter().enumerate() {
                if n != DEAD {
                    live.push((n, p.seg.doc_len(d as u32)));
                }
            }
        }
        live.sort_unstable();
        let new_doc: HashMap<u32, u32, FnvBuild> = live
            .iter()
            .enumerate()
            .map(|(i, &(n, _))| (n, i as u32))
            .collect();
        let mut postings: HashMap<&str, Vec<(u32, u16)>, FnvBuild> = HashMap::default();
        for p in merge {
            for (term, docs, tfs) in p.seg.terms() {
                let mut live_postings = docs
                    .iter()
                    .zip(tfs)
                    .filter(|(doc, _)| p.node[**doc as usize] != DEAD)
                    .map(|(doc, &tf)| (new_doc[&p.node[*doc as usize]], tf))
                    .peekable();
                if live_postings.peek().is_some() {
                    postings.entry(term).or_default().extend(live_postings);
                }
            }
        }
        let mut terms: Vec<(&str, Vec<(u32, u16)>)> = postings.into_iter().collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let seg = Segment::from_postings(
            terms.into_iter().map(|(t, mut l)| {
                l.sort_unstable();
                (Box::from(t), l)
            }),
            live.iter().map(|&(_, len)| len).collect(),
        );
        let mut parts: Vec<Part> = kept.to_vec();
        parts.push(Part {
            seg: Arc::new(seg),
            node: live.iter().map(|&(n, _)| n).collect(),
            dead_df: HashMap::default(),
        });
        Bm25::from_parts(parts)
    }

    /// Every live document's length and every term's live postings, by term (the logical
    /// content, however it is segmented): for tests of [`Bm25::update`].
    #[cfg(test)]
    pub fn content(&self) -> (Vec<u32>, Postings) {
        let mut lens = vec![0u32; self.docs as usize];
        let mut terms: Postings = HashMap::new();
        for p in &self.parts {
            for (d, &n) in p.node.iter().enumerate() {
                if n != DEAD {
                    lens[n as usize] = p.seg.doc_len(d as u32);
                }
            }
            for (term, docs, tfs) in p.seg.terms() {
                for (&doc, &tf) in docs.iter().zip(tfs) {
                    let n = p.node[doc as usize];
                    if n != DEAD {
                        terms.entry(term.to_string()).or_default().push((n, tf));
                    }
                }
            }
        }
        for l in terms.values_mut() {
            l.sort_unstable();
        }
        (lens, terms)
    }

    /// Whether two indexes hold the same documents and terms, with the same document
    /// frequencies: for tests of [`Bm25::update`].
    #[cfg(test)]
    pub fn same_as(&self, other: &Bm25) -> bool {
        let (a, b) = (self.content(), other.content());
        a == b
            && self.total_len == other.total_len
            && a.1
                .keys()
                .all(|t| self.df(t) == other.df(t) && self.df(t) as usize == a.1[t].len())
    }
}

/// Query terms with their weights: repeated terms count, with saturation (a term said five
/// times in an issue matters more than one said once, but not five times more).
pub fn query_terms(text: &str) -> Vec<(String, f32)> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    let mut order = Vec::new();
    for_each_token(text, |t| {
        let c = counts.entry(t.to_string()).or_default();
        if *c == 0 {
            order.push(t.to_string());
        }
        *c += 1;
    });
    // An issue's first line is its title: the most deliberate summary of what it is about.
    let mut title = std::collections::HashSet::new();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    if let (Some(first), Some(_)) = (lines.next(), lines.next()) {
        for_each_token(first, |t| {
            title.insert(t.to_string());
        });
    }
    order
        .into_iter()
        .map(|t| {
            let qtf = counts[&t] as f32;
            let w = 2.0 * qtf / (1.0 + qtf);
            let w = if title.contains(&t) {
                w * (1.0 + TITLE_BOOST)
            } else {
                w
            };
            (t, w)
        })
        .collect()
}

/// Extra weight of a title word in a multi-line question: an issue's title states what is
/// wrong, while its body adds logs, versions and steps whose words are everywhere.
const TITLE_BOOST: f32 = 2.0;

#[cfg(test)]
mod tests;
