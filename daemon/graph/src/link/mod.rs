//! Stage 3: parsed files → the code graph. Resolves references to definitions across files.
//!
//! Invariant: [`link`] is a pure function of the set of parsed files (order-independent: files
//! are sorted by path first). An incremental update therefore only has to replace the changed
//! files' [`ParsedFile`]s and link again to get exactly the graph a fresh index would give;
//! edges from unchanged files into changed ones are re-resolved, never kept stale.

mod chains;
mod common;
mod modules;
mod relink;
mod resolve;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use modules::{ModuleIndex, dir_of, rust_module};
pub use relink::relink;

use crate::model::{DefKind, Definition, Lang, ParsedFile, RefKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Calls,
    References,
    Inherits,
    Implements,
    Contains,
}

impl EdgeKind {
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Calls => "calls",
            EdgeKind::References => "references",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Implements => "implements",
            EdgeKind::Contains => "contains",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub kind: EdgeKind,
}

/// A node is one definition of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRef {
    pub file: u32,
    pub def: u32,
}

/// Per-file resolution counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStats {
    pub references: u32,
    pub resolved: u32,
    pub imports: u32,
    pub imports_resolved: u32,
}

/// How a reference found its definition: what a reader weighs before trusting an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// Defined in the same file, in a scope that encloses the reference.
    Scope,
    /// Through an import, a module path or a wildcard import.
    Import,
    /// In the same package (a Go directory, a Java package).
    Package,
    /// A member of a known type: `self`/`this`/`super`, a typed receiver, `Type::f`.
    Member,
    /// The only definition of that name in the language; the receiver's type is unknown.
    Name,
}

impl How {
    const ALL: [How; 5] = [
        How::Scope,
        How::Import,
        How::Package,
        How::Member,
        How::Name,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            How::Scope => "in scope",
            How::Import => "by import",
            How::Package => "same package",
            How::Member => "by receiver type",
            How::Name => "by unique name",
        }
    }
}

/// One resolved reference: 12 bytes (a repository holds about a million).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolution {
    pub file: u32,
    /// The reference's index in its file (low 24 bits), [`How`] (3 bits) and the number of
    /// definitions it resolved to, capped at 31 (5 bits).
    packed: u32,
    /// The first definition it resolved to.
    pub target: u32,
}

impl Resolution {
    const INDEX_BITS: u32 = 24;

    pub fn new(file: u32, reference: u32, target: u32, how: How, candidates: usize) -> Self {
        let index = reference & ((1 << Self::INDEX_BITS) - 1);
        let how = How::ALL.iter().position(|&h| h == how).unwrap_or(0) as u32;
        let n = candidates.min(31) as u32;
        Resolution {
            file,
            packed: index | how << Self::INDEX_BITS | n << (Self::INDEX_BITS + 3),
            target,
        }
    }

    /// The reference's index in its file.
    pub fn reference(self) -> u32 {
        self.packed & ((1 << Self::INDEX_BITS) - 1)
    }

    pub fn how(self) -> How {
        How::ALL[((self.packed >> Self::INDEX_BITS) & 7) as usize % How::ALL.len()]
    }

    /// How many definitions the reference resolved to (31 or more: 31): above one, the name
    /// is shared and every candidate got an edge.
    pub fn candidates(self) -> u32 {
        self.packed >> (Self::INDEX_BITS + 3)
    }
}

/// The code graph: files, their definitions as nodes, and resolved edges.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    pub files: Vec<Arc<ParsedFile>>,
    pub nodes: Vec<NodeRef>,
    /// First node id of each file (nodes of file i are `file_start[i]..file_start[i+1]`).
    pub file_start: Vec<u32>,
    /// Node edges, sorted and deduplicated.
    pub edges: Vec<Edge>,
    /// File → file import edges, sorted and deduplicated.
    pub imports: Vec<(u32, u32)>,
    pub stats: Vec<FileStats>,
    /// (file, reference index) of every reference that did not resolve.
    pub unresolved: Vec<(u32, u32)>,
    /// Every reference that resolved, in file and reference order.
    pub resolutions: Vec<Resolution>,
    /// Outgoing and incoming edge indices per node.
    pub out_edges: Vec<Vec<u32>>,
    pub in_edges: Vec<Vec<u32>>,
    /// The repository-wide tables this graph was resolved against, kept for the next
    /// [`relink`]: a body edit leaves them as they are, and building them again was a fifth
    /// of a save on kafka. Not part of the graph's value.
    #[serde(skip)]
    pub tables: KeptTables,
}

/// Module and symbol tables of one link: the module index a function of the files' module
/// interfaces, the symbol table of their definitions (see [`relink`]).
pub struct LinkTables {
    modules: Arc<ModuleIndex>,
    symbols: resolve::Symbols,
}

impl LinkTables {
    fn build(g: &Graph) -> LinkTables {
        LinkTables {
            modules: Arc::new(ModuleIndex::build(&g.files)),
            symbols: resolve::Symbols::build(g),
        }
    }
}

/// [`LinkTables`] kept beside a graph: a cache, so any two are equal and it prints as what
/// it holds, not its contents.
#[derive(Default, Clone)]
pub struct KeptTables(Option<Arc<LinkTables>>);

impl PartialEq for KeptTables {
    fn eq(&self, _: &KeptTables) -> bool {
        true
    }
}

impl std::fmt::Debug for KeptTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "KeptTables(kept)"
        } else {
            "KeptTables(none)"
        })
    }
}

impl Graph {
    pub fn def(&self, node: u32) -> &Definition {
        let n = self.nodes[node as usize];
        &self.files[n.file as usize].definitions[n.def as usize]
    }

    pub fn file_of(&self, node: u32) -> &ParsedFile {
        &self.files[self.nodes[node as usize].file as usize]
    }

    pub fn node_id(&self, file: u32, def: u32) -> u32 {
        self.file_start[file as usize] + def
    }

    pub fn parent(&self, node: u32) -> Option<u32> {
        let n = self.nodes[node as usize];
        self.def(node).parent.map(|p| self.node_id(n.file, p))
    }

    pub fn file_index(&self, path: &str) -> Option<u32> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| i as u32)
    }

    /// Nodes this node points to through edges of the given kinds.
    pub fn targets(&self, node: u32, kinds: &[EdgeKind]) -> impl Iterator<Item = u32> + '_ {
        let kinds = kinds.to_vec();
        self.out_edges[node as usize]
            .iter()
            .map(|&e| self.edges[e as usize])
            .filter(move |e| kinds.contains(&e.kind))
            .map(|e| e.to)
    }

    pub fn sources(&self, node: u32, kinds: &[EdgeKind]) -> impl Iterator<Item = u32> + '_ {
        let kinds = kinds.to_vec();
        self.in_edges[node as usize]
            .iter()
            .map(|&e| self.edges[e as usize])
            .filter(move |e| kinds.contains(&e.kind))
            .map(|e| e.from)
    }

    /// A node's members, by line: a file's top-level definitions, a container's children.
    pub fn members(&self, node: u32) -> Vec<u32> {
        let nr = self.nodes[node as usize];
        let mut out: Vec<u32> = if self.def(node).kind == DefKind::File {
            let f = &self.files[nr.file as usize];
            (0..f.definitions.len() as u32)
                .filter(|&d| d != nr.def)
                .filter(|&d| f.definitions[d as usize].parent.is_none())
                .map(|d| self.node_id(nr.file, d))
                .collect()
        } else {
            self.targets(node, &[EdgeKind::Contains]).collect()
        };
        // Regions are the container's own lines, shown verbatim in its outline.
        out.retain(|&m| self.def(m).kind != DefKind::Region);
        out.sort_by_key(|&n| (self.def(n).start_byte, n));
        out
    }

    /// The name a member is found under: `Point` for `impl Display for Point`'s `fmt`, the
    /// receiver type for a Go method, the class for a method.
    pub fn owner_type(&self, node: u32) -> Option<String> {
        let mut out = String::new();
        self.owner_type_into(node, &mut out).then_some(out)
    }

    /// [`Graph::owner_type`] appended to `out`; whether there is one.
    pub fn owner_type_into(&self, node: u32, out: &mut String) -> bool {
        let def = self.def(node);
        let file = self.file_of(node);
        let owner: Option<&str> =
            if file.lang == Lang::Go && def.kind == DefKind::Method && def.parent.is_none() {
                def.qualified_name.split_once('.').map(|(t, _)| t)
            } else if file.lang == Lang::Cpp
                && matches!(def.kind, DefKind::Method | DefKind::Constructor)
                && self
                    .parent(node)
                    .is_none_or(|p| self.def(p).kind == DefKind::Module)
            {
                // C++ `void Parser::parse() {…}` outside its class belongs to `Parser`.
                let mut segments = def.qualified_name.rsplit("::");
                segments.next();
                segments.next()
            } else if let Some(receiver) = (file.lang == Lang::Kotlin
                && def.kind == DefKind::Function)
                .then(|| chains::extension_receiver(file.lang, &def.signature))
                .flatten()
            {
                // Kotlin `fun Moshi.adapter()` is called as a member of `Moshi`.
                Some(receiver)
            } else if file.lang.family() == Lang::JavaScript.family()
                && def.parent.is_none()
                && def.kind == DefKind::Function
                && let Some((owner, _)) = def.qualified_name.rsplit_once('.')
            {
                // JS `app.handle = function …` belongs to `app`.
                Some(owner.rsplit('.').next().unwrap_or(owner))
            } else {
                self.parent(node).and_then(|parent| {
                    let p = self.def(parent);
                    match p.kind {
                        DefKind::Impl => Some(crate::parse::impl_self_type(&p.name)),
                        k if k.is_container() => Some(p.name.as_str()),
                        _ => None,
                    }
                })
            };
        match owner {
            Some(o) => {
                out.push_str(o);
                true
            }
            None => false,
        }
    }
}

/// A graph of `files` (sorted, one per path) with their nodes numbered, nothing resolved.
fn numbered(files: Vec<Arc<ParsedFile>>) -> Graph {
    let mut g = Graph {
        files,
        ..Graph::default()
    };
    for (fi, f) in g.files.iter().enumerate() {
        g.file_start.push(g.nodes.len() as u32);
        for di in 0..f.definitions.len() {
            g.nodes.push(NodeRef {
                file: fi as u32,
                def: di as u32,
            });
        }
    }
    g.file_start.push(g.nodes.len() as u32);
    g
}

/// Links parsed files into a graph.
pub fn link(mut files: Vec<Arc<ParsedFile>>) -> Graph {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    let g = numbered(files);
    let tables = Arc::new(LinkTables::build(&g));
    let (modules, symbols) = (&tables.modules, &tables.symbols);
    // Files resolve independently against the shared tables: in contiguous ranges on every
    // core, concatenated in file order — the same result as one pass.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let chunk = g.files.len().div_ceil(threads).max(1);
    let ranges: Vec<std::ops::Range<usize>> = (0..g.files.len())
        .step_by(chunk)
        .map(|a| a..(a + chunk).min(g.files.len()))
        .collect();
    let parts: Vec<Resolved> = std::thread::scope(|scope| {
        let g = &g;
        let handles: Vec<_> = ranges
            .iter()
            .skip(1)
            .map(|r| {
                let r = r.clone();
                scope.spawn(move || resolve_files(g, modules, symbols, r))
            })
            .collect();
        let mut parts = vec![resolve_files(
            g,
            modules,
            symbols,
            ranges.first().cloned().unwrap_or(0..0),
        )];
        for (h, r) in handles.into_iter().zip(ranges.iter().skip(1)) {
            // A panic here is a bug; redo the range on this thread rather than lose it.
            parts.push(
                h.join()
                    .unwrap_or_else(|_| resolve_files(g, modules, symbols, r.clone())),
            );
        }
        parts
    });
    let mut found = Resolved::default();
    for p in parts {
        found.append(p);
    }
    finish(g, tables, found)
}

/// `g` with `found` — edges sorted, deduplicated and indexed per node — and the tables they
/// were resolved against kept beside it.
fn finish(mut g: Graph, tables: Arc<LinkTables>, found: Resolved) -> Graph {
    let Resolved {
        mut edges,
        mut imports,
        unresolved,
        resolutions,
        stats,
    } = found;
    edges.sort();
    edges.dedup();
    imports.sort();
    imports.dedup();
    g.out_edges = vec![Vec::new(); g.nodes.len()];
    g.in_edges = vec![Vec::new(); g.nodes.len()];
    for (i, e) in edges.iter().enumerate() {
        g.out_edges[e.from as usize].push(i as u32);
        g.in_edges[e.to as usize].push(i as u32);
    }
    g.edges = edges;
    g.imports = imports;
    g.stats = stats;
    g.unresolved = unresolved;
    g.resolutions = resolutions;
    g.tables = KeptTables(Some(tables));
    g
}

/// What resolving a range of files found, in file order.
#[derive(Default)]
struct Resolved {
    edges: Vec<Edge>,
    imports: Vec<(u32, u32)>,
    unresolved: Vec<(u32, u32)>,
    resolutions: Vec<Resolution>,
    stats: Vec<FileStats>,
}

impl Resolved {
    /// `other`'s findings after these.
    fn append(&mut self, other: Resolved) {
        self.edges.extend(other.edges);
        self.imports.extend(other.imports);
        self.unresolved.extend(other.unresolved);
        self.resolutions.extend(other.resolutions);
        self.stats.extend(other.stats);
    }
}

fn resolve_files(
    g: &Graph,
    modules: &ModuleIndex,
    symbols: &resolve::Symbols,
    range: std::ops::Range<usize>,
) -> Resolved {
    let mut out = Resolved::default();
    let Resolved {
        edges,
        imports,
        unresolved,
        resolutions,
        stats,
    } = &mut out;
    for fi in range {
        let f = &g.files[fi];
        stats.push(FileStats::default());
        let fi = fi as u32;
        for (di, d) in f.definitions.iter().enumerate() {
            if let Some(p) = d.parent {
                edges.push(Edge {
                    from: g.node_id(fi, p),
                    to: g.node_id(fi, di as u32),
                    kind: EdgeKind::Contains,
                });
            }
        }
        if f.lang == Lang::Markdown {
            continue;
        }
        let scope = resolve::FileScope::build(g, modules, symbols, fi);
        let Some(s) = stats.last_mut() else { continue };
        s.imports = f.imports.iter().filter(|i| !i.is_own()).count() as u32;
        for targets in &scope.import_files {
            if !targets.is_empty() {
                s.imports_resolved += 1;
            }
            for &t in targets {
                if t != fi {
                    imports.push((fi, t));
                }
            }
        }
        for (ri, r) in f.references.iter().enumerate() {
            s.references += 1;
            let (targets, how) = scope.resolve(&r);
            if targets.is_empty() {
                unresolved.push((fi, ri as u32));
                continue;
            }
            s.resolved += 1;
            resolutions.push(Resolution::new(
                fi,
                ri as u32,
                targets[0],
                how,
                targets.len(),
            ));
            let from = match r.scope {
                Some(sc) => g.node_id(fi, sc),
                None => continue, // module-level code: counted, but no node to hang it on
            };
            let kind = match r.kind {
                RefKind::Call | RefKind::MacroCall => EdgeKind::Calls,
                RefKind::Type => EdgeKind::References,
                RefKind::Inherits => EdgeKind::Inherits,
                RefKind::Implements => EdgeKind::Implements,
            };
            for to in targets {
                if to != from {
                    edges.push(Edge { from, to, kind });
                }
            }
        }
    }
    out
}

/// Counts of a graph by language, for `inspect`.
#[derive(Debug, Default, Clone, Serialize)]
pub struct LangSummary {
    pub files: usize,
    pub bytes: u64,
    pub nodes_by_kind: std::collections::BTreeMap<String, usize>,
    pub edges_by_kind: std::collections::BTreeMap<String, usize>,
    pub references: u64,
    pub resolved: u64,
    pub imports: u64,
    pub imports_resolved: u64,
    pub import_edges: usize,
    pub diagnostics: usize,
    pub lossy_files: usize,
}

pub fn summarize(g: &Graph) -> std::collections::BTreeMap<Lang, LangSummary> {
    let mut out: std::collections::BTreeMap<Lang, LangSummary> = Default::default();
    for (fi, f) in g.files.iter().enumerate() {
        let s = out.entry(f.lang).or_default();
        s.files += 1;
        s.bytes += u64::from(f.bytes);
        for d in &f.definitions {
            *s.nodes_by_kind
                .entry(d.kind.name().to_string())
                .or_default() += 1;
        }
        let st = g.stats[fi];
        s.references += u64::from(st.references);
        s.resolved += u64::from(st.resolved);
        s.imports += u64::from(st.imports);
        s.imports_resolved += u64::from(st.imports_resolved);
        s.diagnostics += f.diagnostics.len();
        s.lossy_files += usize::from(f.lossy);
    }
    for e in &g.edges {
        let lang = g.file_of(e.from).lang;
        *out.entry(lang)
            .or_default()
            .edges_by_kind
            .entry(e.kind.name().to_string())
            .or_default() += 1;
    }
    for &(from, _) in &g.imports {
        out.entry(g.files[from as usize].lang)
            .or_default()
            .import_edges += 1;
    }
    out
}

#[cfg(test)]
mod js_modules_tests;
#[cfg(test)]
mod more_languages_tests;
#[cfg(test)]
mod tests;
