//! Stage 4: indexes over the graph's nodes — content BM25, summary BM25, PageRank (and
//! embeddings, in [`crate::embed`]). Built once per snapshot; read-only afterwards.

pub mod bm25;
pub mod pagerank;
pub mod tokenize;

use std::sync::Arc;

use crate::link::{Edge, EdgeKind, Graph};
use crate::model::DefKind;

/// The bytes of every file in the graph, aligned with `graph.files`.
pub use crate::repo::Sources;

/// How much of one node's text goes into the content index: enough for any function; huge
/// containers are represented by their own text minus their members (see [`node_text`]).
const MAX_DOC_BYTES: usize = 32 * 1024;

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Index {
    pub content: Lexical,
    pub summary: Lexical,
    pub pagerank: Vec<f32>,
    /// The graph's semantic edges (calls, references, inheritance) in both directions: the
    /// walk of personalised PageRank, where callers and callees of relevant code are relevant.
    pub walk: pagerank::Neighbours,
    /// A hash of each node's summary text: an update re-tokenizes only the summaries whose
    /// text changed.
    summary_hash: Vec<u64>,
}

/// A BM25 index that a merge may replace, while readers read it, by an equal one in fewer
/// segments (see [`bm25`]): the one part of an index that changes after it is built, and only
/// in layout — every score stays the same.
pub struct Lexical(std::sync::RwLock<Arc<bm25::Bm25>>);

impl Lexical {
    pub fn new(ix: bm25::Bm25) -> Lexical {
        Lexical(std::sync::RwLock::new(Arc::new(ix)))
    }

    /// The index as it is now.
    pub fn get(&self) -> Arc<bm25::Bm25> {
        Arc::clone(&self.0.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn replace(&self, ix: bm25::Bm25) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(ix);
    }

    /// Merges all segments into one when enough changed; returns whether it did.
    fn merge_if_due(&self) -> bool {
        let ix = self.get();
        if !ix.merge_due() {
            return false;
        }
        self.replace(ix.merged(true));
        true
    }
}

impl serde::Serialize for Lexical {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Lexical {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Lexical, D::Error> {
        bm25::Bm25::deserialize(d).map(Lexical::new)
    }
}

/// The result of a scoped thread, or — should it have panicked, a bug — `redo`'s.
fn join_or<T>(handle: std::thread::ScopedJoinHandle<'_, T>, redo: impl FnOnce() -> T) -> T {
    handle.join().unwrap_or_else(|_| redo())
}

fn text_hash(text: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = fittok_util::hash::Fnv::default();
    h.write(text.as_bytes());
    h.finish()
}

/// What the content index holds for a node: its file's path words, then its own text.
fn content_text(g: &Graph, sources: &Sources, node: u32) -> String {
    let file = g.file_of(node);
    let mut text = file.path.replace(['/', '.', '_', '-'], " ");
    text.push('\n');
    text.push_str(&node_text(g, sources, node));
    text
}

/// The indexes of `scores` above zero, best first (ties by index), at most `depth`: a
/// signal's ranking, the commits most like a question, the files history favours.
pub fn best_first(scores: &[f32], depth: usize) -> Vec<u32> {
    let mut v: Vec<u32> = (0..scores.len() as u32)
        .filter(|&i| scores[i as usize] > 0.0)
        .collect();
    let depth = depth.min(v.len());
    if depth == 0 {
        return Vec::new();
    }
    let by_score = |a: &u32, b: &u32| {
        scores[*b as usize]
            .total_cmp(&scores[*a as usize])
            .then(a.cmp(b))
    };
    v.select_nth_unstable_by(depth - 1, by_score);
    v.truncate(depth);
    v.sort_by(by_score);
    v
}

/// The version of a node's source: a hash of its bytes (FNV-1a, stable across builds), never
/// 0 (which means "any version" to a reader who only knows an id).
pub fn node_version(g: &Graph, sources: &Sources, node: u32) -> u64 {
    let nr = g.nodes[node as usize];
    let def = g.def(node);
    let src = &sources[nr.file as usize];
    let start = (def.start_byte as usize).min(src.len());
    let end = (def.end_byte as usize).min(src.len()).max(start);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &src[start..end] {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.max(1)
}

/// A node's own text: its source, with the bodies of member definitions cut out (a class is
/// its header, fields and member signatures; the members are nodes of their own).
pub fn node_text(g: &Graph, sources: &Sources, node: u32) -> String {
    let nr = g.nodes[node as usize];
    let def = g.def(node);
    let src = &sources[nr.file as usize];
    let start = (def.start_byte as usize).min(src.len());
    let end = (def.end_byte as usize).min(src.len()).max(start);
    if !def.kind.is_container() && def.kind != DefKind::File {
        let end = end.min(start + MAX_DOC_BYTES);
        return String::from_utf8_lossy(&src[start..end]).into_owned();
    }
    let mut out = String::new();
    let mut pos = start;
    for c in g.members(node) {
        let cd = g.def(c);
        let (cs, ce) = (cd.start_byte as usize, cd.end_byte as usize);
        if cs < pos || ce > end {
            continue;
        }
        out.push_str(&String::from_utf8_lossy(&src[pos..cs]));
        out.push_str(&cd.signature);
        out.push('\n');
        pos = ce;
        if out.len() > MAX_DOC_BYTES {
            return out;
        }
    }
    out.push_str(&String::from_utf8_lossy(&src[pos..end]));
    out.truncate(floor_char_boundary(&out, MAX_DOC_BYTES));
    out
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The edges a summary names its neighbours by.
const SUMMARY_EDGES: [EdgeKind; 3] = [EdgeKind::Calls, EdgeKind::References, EdgeKind::Inherits];

/// The nodes of `g` whose summary neighbours may differ from their previous node's (`remap`:
/// previous node → node, for unchanged files): an endpoint of a summary edge that one graph has
/// and the other has not, or whose other end is in a changed file. A node not marked has
/// exactly its previous neighbours, all in unchanged files — the same summary. One merge of the
/// two sorted edge lists: `remap` keeps order (files sorted by path, definitions in order), so
/// the previous edges stay sorted under it.
fn summary_neighbours_changed(prev_g: &Graph, g: &Graph, remap: &[Option<u32>]) -> Vec<bool> {
    let mut changed = vec![false; g.nodes.len()];
    let summary = |e: &&Edge| SUMMARY_EDGES.contains(&e.kind);
    let mut mark = |n: u32| {
        if let Some(c) = changed.get_mut(n as usize) {
            *c = true;
        }
    };
    let at = |n: u32| remap.get(n as usize).copied().flatten();
    let mut before = Vec::with_capacity(prev_g.edges.len());
    for e in prev_g.edges.iter().filter(summary) {
        match (at(e.from), at(e.to)) {
            (Some(from), Some(to)) => before.push(Edge {
                from,
                to,
                kind: e.kind,
            }),
            (Some(x), None) | (None, Some(x)) => mark(x),
            (None, None) => {}
        }
    }
    let mut after = g.edges.iter().filter(summary).copied().peekable();
    let mut before = before.into_iter().peekable();
    loop {
        // The smaller head is an edge the other list lacks (both sorted); equal heads match.
        let unmatched = match (before.peek(), after.peek()) {
            (None, None) => break,
            (Some(x), Some(y)) if x == y => {
                before.next();
                after.next();
                continue;
            }
            (Some(x), Some(y)) if x < y => before.next(),
            (Some(_), None) => before.next(),
            (_, Some(_)) => after.next(),
        };
        if let Some(e) = unmatched {
            mark(e.from);
            mark(e.to);
        }
    }
    changed
}

/// Path words, name, kind, signature, first doc line, and the names of callers and callees:
/// what a node *is* and where it sits, without its body.
pub fn summary_text(g: &Graph, node: u32) -> String {
    let def = g.def(node);
    let file = g.file_of(node);
    let mut s = String::new();
    for _ in 0..2 {
        s.push_str(&def.name);
        s.push(' ');
    }
    s.push_str(&def.qualified_name);
    s.push(' ');
    s.push_str(&file.path.replace(['/', '.'], " "));
    s.push(' ');
    s.push_str(def.kind.name());
    s.push(' ');
    s.push_str(&def.signature);
    if let Some(doc) = &def.doc {
        s.push(' ');
        s.push_str(doc.lines().next().unwrap_or(""));
    }
    let mut names: Vec<&str> = g
        .sources(node, &SUMMARY_EDGES)
        .chain(g.targets(node, &SUMMARY_EDGES))
        .map(|n| g.def(n).name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    for n in names.into_iter().take(40) {
        s.push(' ');
        s.push_str(n);
    }
    s
}

/// For each node of `g`, the same node in `prev_g` when its file carried over unchanged (the
/// same parse and the same bytes, so every node of it and its text are as they were).
pub fn kept_nodes(
    prev_g: &Graph,
    prev_sources: &Sources,
    g: &Graph,
    sources: &Sources,
) -> Vec<Option<u32>> {
    let old_file: std::collections::HashMap<&str, usize> = prev_g
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i))
        .collect();
    let mut old_node: Vec<Option<u32>> = vec![None; g.nodes.len()];
    for (fi, f) in g.files.iter().enumerate() {
        let Some(&oi) = old_file.get(f.path.as_str()) else {
            continue;
        };
        let same = Arc::ptr_eq(&prev_g.files[oi], f)
            && (Arc::ptr_eq(&prev_sources[oi], &sources[fi]) || prev_sources[oi] == sources[fi]);
        let (os, ns) = (prev_g.file_start[oi], g.file_start[fi]);
        let count = g.file_start[fi + 1] - ns;
        if !same || prev_g.file_start[oi + 1] - os != count {
            continue;
        }
        for k in 0..count {
            old_node[(ns + k) as usize] = Some(os + k);
        }
    }
    old_node
}

impl Index {
    pub fn build(g: &Graph, sources: &Sources) -> Index {
        // The two indexes are independent: build the summary one beside the content one.
        let ((content, summary_hash), summary) = std::thread::scope(|scope| {
            let summary = scope.spawn(|| Index::build_summary(g));
            let mut content = bm25::Bm25Builder::default();
            for node in 0..g.nodes.len() as u32 {
                content.add(&content_text(g, sources, node));
            }
            let content = content.finish();
            let (summary, hashes) = join_or(summary, || Index::build_summary(g));
            ((content, hashes), summary)
        });
        Index::with_ranks(g, content, summary, summary_hash)
    }

    fn build_summary(g: &Graph) -> (bm25::Bm25, Vec<u64>) {
        let mut summary = bm25::Bm25Builder::default();
        let mut hashes = Vec::with_capacity(g.nodes.len());
        for node in 0..g.nodes.len() as u32 {
            let text = summary_text(g, node);
            hashes.push(text_hash(&text));
            summary.add(&text);
        }
        (summary.finish(), hashes)
    }

    /// The index of `g` given `prev`, the index of the graph `prev_g` it replaces: equal to
    /// [`Index::build`] of `g`, tokenizing only what changed — the content of nodes in files
    /// whose parse or bytes differ, and summaries whose text differs (a summary names the
    /// node's callers and callees, which other files' edits change).
    /// `old_node` is [`kept_nodes`] of the two graphs (the caller computes it once per update:
    /// the semantic index carries its vectors by the same mapping).
    pub fn update(
        prev_g: &Graph,
        prev_sources: &Sources,
        prev: &Index,
        g: &Graph,
        sources: &Sources,
        old_node: &[Option<u32>],
    ) -> Index {
        // Old node → new node, for the nodes of files that carried over unchanged.
        let mut remap: Vec<Option<u32>> = vec![None; prev_g.nodes.len()];
        for (n, o) in old_node.iter().enumerate() {
            if let Some(o) = o {
                remap[*o as usize] = Some(n as u32);
            }
        }
        let ((content, summary_hash), summary) = std::thread::scope(|scope| {
            let summary = scope.spawn(|| {
                let mut hashes = Vec::with_capacity(g.nodes.len());
                let mut summary_remap: Vec<Option<u32>> = vec![None; prev_g.nodes.len()];
                let mut fresh = Vec::new();
                let neighbours_changed = summary_neighbours_changed(prev_g, g, &remap);
                for node in 0..g.nodes.len() as u32 {
                    // A node of an unchanged file whose summary neighbours are the same nodes
                    // has the same summary: its own fields and its neighbours' names did not
                    // change. Only the others are written out again (every summary's text was
                    // ~185 ms of a save on kafka).
                    if let Some(o) = old_node[node as usize]
                        && let Some(&h) = prev.summary_hash.get(o as usize)
                        && !neighbours_changed[node as usize]
                    {
                        hashes.push(h);
                        summary_remap[o as usize] = Some(node);
                        continue;
                    }
                    let text = summary_text(g, node);
                    let h = text_hash(&text);
                    hashes.push(h);
                    match old_node[node as usize] {
                        Some(o) if prev.summary_hash.get(o as usize) == Some(&h) => {
                            summary_remap[o as usize] = Some(node);
                        }
                        _ => fresh.push((node, text)),
                    }
                }
                let summary = bm25::Bm25::update(
                    &prev.summary.get(),
                    &summary_remap,
                    g.nodes.len(),
                    &fresh,
                    |o| summary_text(prev_g, o),
                );
                (summary, hashes)
            });
            let fresh: Vec<(u32, String)> = (0..g.nodes.len() as u32)
                .filter(|&n| old_node[n as usize].is_none())
                .map(|n| (n, content_text(g, sources, n)))
                .collect();
            let content =
                bm25::Bm25::update(&prev.content.get(), &remap, g.nodes.len(), &fresh, |o| {
                    content_text(prev_g, prev_sources, o)
                });
            let (summary, hashes) = join_or(summary, || Index::build_summary(g));
            ((content, hashes), summary)
        });
        // The same nodes and edges make the same PageRank and walk (most saves: an edit
        // inside a body): reusing them keeps a pass over every edge off the save path.
        if prev_g.nodes.len() == g.nodes.len() && prev_g.edges == g.edges {
            return Index {
                content: Lexical::new(content),
                summary: Lexical::new(summary),
                pagerank: prev.pagerank.clone(),
                walk: prev.walk.clone(),
                summary_hash,
            };
        }
        Index::with_ranks(g, content, summary, summary_hash)
    }

    /// Whether a lexical index has enough changed documents for a merge to pay.
    pub fn merge_due(&self) -> bool {
        self.content.get().merge_due() || self.summary.get().merge_due()
    }

    /// Merges the lexical indexes whose merge is due (see [`bm25::Bm25::merge_due`]): the
    /// same scores from one segment each. Costs a pass over their postings, so the daemon runs
    /// it off the update path; readers meanwhile read the unmerged ones. Returns whether
    /// anything was merged.
    pub fn merge_lexical(&self) -> bool {
        let content = self.content.merge_if_due();
        let summary = self.summary.merge_if_due();
        content || summary
    }

    /// Heap bytes of the per-node summary hashes.
    pub fn summary_hash_bytes(&self) -> usize {
        self.summary_hash.capacity() * 8
    }

    /// Whether two indexes rank alike: the same documents and terms in both BM25 indexes and
    /// the same PageRank (for tests of [`Index::update`]).
    #[cfg(test)]
    pub fn same_as(&self, other: &Index) -> bool {
        self.content.get().same_as(&other.content.get())
            && self.summary.get().same_as(&other.summary.get())
            && self.pagerank == other.pagerank
            && self.summary_hash == other.summary_hash
    }

    /// The rest of an index: global PageRank and the personalised walk's neighbours.
    fn with_ranks(
        g: &Graph,
        content: bm25::Bm25,
        summary: bm25::Bm25,
        summary_hash: Vec<u64>,
    ) -> Index {
        let rank_edges: Vec<(u32, u32)> = g
            .edges
            .iter()
            .filter(|e| e.kind != EdgeKind::Contains)
            .map(|e| (e.from, e.to))
            .collect();
        let pagerank = pagerank::pagerank(
            &pagerank::Transitions::new(g.nodes.len(), &rank_edges),
            None,
            pagerank::GLOBAL_ITERATIONS,
        );
        let mut walk_edges = rank_edges.clone();
        walk_edges.extend(rank_edges.iter().map(|&(a, b)| (b, a)));
        let walk = pagerank::Neighbours::new(g.nodes.len(), &walk_edges);
        Index {
            content: Lexical::new(content),
            summary: Lexical::new(summary),
            pagerank,
            walk,
            summary_hash,
        }
    }
}
