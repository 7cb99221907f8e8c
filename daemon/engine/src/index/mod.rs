//! Stage 4: indexes over the graph's nodes — content BM25, summary BM25, PageRank (and
//! embeddings, in [`crate::embed`]). Built once per snapshot; read-only afterwards.

pub mod bm25;
pub mod pagerank;
pub mod tokenize;

use std::sync::Arc;

use crate::link::{EdgeKind, Graph};
use crate::model::DefKind;

/// The bytes of every file in the graph, aligned with `graph.files`.
pub type Sources = Vec<Arc<[u8]>>;

/// How much of one node's text goes into the content index: enough for any function; huge
/// containers are represented by their own text minus their members (see [`node_text`]).
const MAX_DOC_BYTES: usize = 32 * 1024;

pub struct Index {
    pub content: bm25::Bm25,
    pub summary: bm25::Bm25,
    pub pagerank: Vec<f32>,
    /// The graph's semantic edges (calls, references, inheritance) in both directions: the
    /// walk of personalised PageRank, where callers and callees of relevant code are relevant.
    pub transitions: pagerank::Transitions,
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
    let neighbours = [EdgeKind::Calls, EdgeKind::References, EdgeKind::Inherits];
    let mut names: Vec<&str> = g
        .sources(node, &neighbours)
        .chain(g.targets(node, &neighbours))
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

impl Index {
    pub fn build(g: &Graph, sources: &Sources) -> Index {
        // The two indexes are independent: build the summary one beside the content one.
        let (content, summary) = std::thread::scope(|scope| {
            let summary = scope.spawn(|| {
                let mut summary = bm25::Bm25Builder::default();
                for node in 0..g.nodes.len() as u32 {
                    summary.add(&summary_text(g, node));
                }
                summary.finish()
            });
            let mut content = bm25::Bm25Builder::default();
            let mut text = String::new();
            for node in 0..g.nodes.len() as u32 {
                let file = g.file_of(node);
                text.clear();
                text.push_str(&file.path.replace(['/', '.', '_', '-'], " "));
                text.push('\n');
                text.push_str(&node_text(g, sources, node));
                content.add(&text);
            }
            let content = content.finish();
            // A panic in the summary thread is a bug; rebuild it here rather than fail.
            let summary = summary.join().unwrap_or_else(|_| {
                let mut summary = bm25::Bm25Builder::default();
                for node in 0..g.nodes.len() as u32 {
                    summary.add(&summary_text(g, node));
                }
                summary.finish()
            });
            (content, summary)
        });
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
        let transitions = pagerank::Transitions::new(g.nodes.len(), &walk_edges);
        Index {
            content,
            summary,
            pagerank,
            transitions,
        }
    }
}
