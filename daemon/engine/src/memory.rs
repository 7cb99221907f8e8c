//! Where a repository's memory goes: the heap bytes of each resident structure, counted from
//! lengths and capacities (an estimate — allocator overhead and hash-table slack are not
//! seen — but per structure, so `fittok status --json` can say which one grows).

use std::mem::size_of;

use crate::index::bm25::Bm25;
use crate::index::pagerank::Neighbours;
use crate::index::{Index, Sources};
use crate::lines::LineIndex;
use crate::link::Graph;
use crate::model::ParsedFile;

/// One structure's share, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryPart {
    pub name: &'static str,
    pub bytes: usize,
}

fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * size_of::<T>()
}

fn string_bytes(s: &str) -> usize {
    s.len()
}

/// A parsed file: its definitions, references, imports and diagnostics with their strings.
pub fn parsed_file(f: &ParsedFile) -> usize {
    let defs: usize = f
        .definitions
        .iter()
        .map(|d| {
            string_bytes(&d.name)
                + string_bytes(&d.qualified_name)
                + string_bytes(&d.signature)
                + d.doc.as_deref().map_or(0, string_bytes)
        })
        .sum();
    let imports: usize = f
        .imports
        .iter()
        .chain(&f.project_imports)
        .chain(&f.inherited_imports)
        .map(|i| {
            string_bytes(&i.module)
                + vec_bytes(&i.names)
                + i.names
                    .iter()
                    .map(|(a, b)| a.len() + b.len())
                    .sum::<usize>()
                + i.module_alias.as_deref().map_or(0, string_bytes)
        })
        .sum();
    let diagnostics: usize = f.diagnostics.iter().map(|d| d.message.len()).sum();
    size_of::<ParsedFile>()
        + f.path.len()
        + f.package.as_deref().map_or(0, string_bytes)
        + vec_bytes(&f.definitions)
        + defs
        + f.references.heap_bytes()
        + vec_bytes(&f.imports)
        + vec_bytes(&f.project_imports)
        + vec_bytes(&f.inherited_imports)
        + imports
        + vec_bytes(&f.diagnostics)
        + diagnostics
}

/// The graph's own arrays (nodes, edges, adjacency, resolutions), without the parsed files.
pub fn graph_arrays(g: &Graph) -> usize {
    vec_bytes(&g.nodes)
        + vec_bytes(&g.file_start)
        + vec_bytes(&g.edges)
        + vec_bytes(&g.imports)
        + vec_bytes(&g.stats)
        + vec_bytes(&g.unresolved)
        + vec_bytes(&g.resolutions)
        + vec_bytes(&g.out_edges)
        + vec_bytes(&g.in_edges)
        + g.out_edges
            .iter()
            .chain(&g.in_edges)
            .map(vec_bytes)
            .sum::<usize>()
}

pub fn bm25(ix: &Bm25) -> usize {
    ix.heap_bytes()
}

pub fn walk(t: &Neighbours) -> usize {
    t.heap_bytes()
}

/// The parts of one resident repository, largest structures first in a fixed order.
pub fn parts(
    g: &Graph,
    sources: &Sources,
    ix: &Index,
    lines: &LineIndex,
    vectors: usize,
) -> Vec<MemoryPart> {
    let part = |name, bytes| MemoryPart { name, bytes };
    vec![
        part("sources", sources.iter().map(|s| s.len()).sum()),
        part("parsed files", g.files.iter().map(|f| parsed_file(f)).sum()),
        part("graph", graph_arrays(g)),
        part(
            "lexical index",
            bm25(&ix.content.get()) + bm25(&ix.summary.get()) + ix.summary_hash_bytes(),
        ),
        part("pagerank", vec_bytes(&ix.pagerank) + walk(&ix.walk)),
        part("line index", lines.heap_bytes()),
        part("vectors", vectors),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::graph_of;

    #[test]
    fn parts_grow_with_what_they_hold() {
        let small = graph_of(&[("a.py", "def f():\n    return 1\n")]);
        let body: String = (0..200)
            .map(|i| format!("def f{i}(x):\n    return g{i}(x) + 1\n\n"))
            .collect();
        let big = graph_of(&[("a.py", &body)]);
        let files = |g: &Graph| g.files.iter().map(|f| parsed_file(f)).sum::<usize>();
        assert!(
            files(&big) > 20 * files(&small),
            "{} vs {}",
            files(&big),
            files(&small)
        );
        assert!(graph_arrays(&big) > graph_arrays(&small));
        let sources: Sources = vec![std::sync::Arc::from(body.as_bytes())];
        let ix = Index::build(&big, &sources);
        let lines = LineIndex::new(1);
        let p = parts(&big, &sources, &ix, &lines, 0);
        assert_eq!(
            p[0],
            MemoryPart {
                name: "sources",
                bytes: body.len()
            }
        );
        assert!(
            p.iter()
                .find(|x| x.name == "lexical index")
                .is_some_and(|x| x.bytes > body.len())
        );
        let line_index =
            |p: &[MemoryPart]| p.iter().find(|x| x.name == "line index").map(|x| x.bytes);
        let before = line_index(&p);
        // A file's line starts are computed on first use, and then counted.
        let _ = lines.starts(0, &sources[0]);
        let after = line_index(&parts(&big, &sources, &ix, &lines, 0));
        assert!(after > before, "{after:?} vs {before:?}");
    }
}
