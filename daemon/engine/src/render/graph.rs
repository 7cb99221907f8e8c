//! The graph page: one self-contained HTML file (the drawing library and the data inlined, no
//! network, no side files) showing the code graph; nodes coloured by kind and sized by degree,
//! edges by kind, search, kind and directory filters, click to isolate a neighbourhood, a file
//! view with aggregated edges one click away, and — with a question — the nodes its answer
//! shows and their neighbours labelled, enlarged and centred, the rest dimmed. Above `COLLAPSE_ABOVE` nodes it shows files
//! instead of definitions, with edges aggregated between them, so big graphs stay usable.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::layout::node_id;
use crate::link::Graph;
use crate::model::DefKind;

const TEMPLATE: &str = include_str!("../../assets/graph.html");
const FORCE_GRAPH: &str = include_str!("../../assets/force-graph-1.52.0/force-graph.min.js");

/// More definitions than this and the page shows files.
pub const COLLAPSE_ABOVE: usize = 2500;

#[derive(Serialize)]
struct PageNode {
    id: String,
    name: String,
    kind: &'static str,
    path: String,
    dir: String,
    line: u32,
    degree: usize,
}

#[derive(Serialize)]
struct PageLink {
    source: String,
    target: String,
    kind: &'static str,
}

#[derive(Serialize)]
struct PageData {
    nodes: Vec<PageNode>,
    links: Vec<PageLink>,
    highlight: Vec<String>,
    /// File-level import edges (paths), for the page's file view.
    imports: Vec<(String, String)>,
    kinds: Vec<&'static str>,
    dirs: Vec<String>,
    collapsed: bool,
    note: String,
}

fn dir_of(path: &str) -> String {
    path.rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_string())
}

/// The page for `g`; `highlight` are ids of nodes an answer shows.
pub fn page(g: &Graph, title: &str, highlight: &[String]) -> String {
    let collapsed = g.nodes.len() > COLLAPSE_ABOVE;
    let data = if collapsed {
        files_view(g, highlight)
    } else {
        definitions_view(g, highlight)
    };
    // `</` inside a script would end it early: escape it in the JSON.
    let json = serde_json::to_string(&data)
        .unwrap_or_else(|_| "{}".into())
        .replace("</", "<\\/");
    let title = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    TEMPLATE
        .replace("{{TITLE}}", &title)
        .replace("{{FORCE_GRAPH_JS}}", FORCE_GRAPH)
        .replace("{{DATA}}", &json)
}

fn definitions_view(g: &Graph, highlight: &[String]) -> PageData {
    let ids: Vec<String> = (0..g.nodes.len() as u32).map(|n| node_id(g, n)).collect();
    let mut degree = vec![0usize; g.nodes.len()];
    for e in &g.edges {
        degree[e.from as usize] += 1;
        degree[e.to as usize] += 1;
    }
    let nodes: Vec<PageNode> = (0..g.nodes.len() as u32)
        .map(|n| {
            let d = g.def(n);
            let path = g.file_of(n).path.clone();
            PageNode {
                id: ids[n as usize].clone(),
                name: d.qualified_name.clone(),
                kind: d.kind.name(),
                dir: dir_of(&path),
                path,
                line: d.start_line,
                degree: degree[n as usize],
            }
        })
        .collect();
    let links = g
        .edges
        .iter()
        .map(|e| PageLink {
            source: ids[e.from as usize].clone(),
            target: ids[e.to as usize].clone(),
            kind: e.kind.name(),
        })
        .collect();
    let imports = g
        .imports
        .iter()
        .map(|&(a, b)| {
            (
                g.files[a as usize].path.clone(),
                g.files[b as usize].path.clone(),
            )
        })
        .collect();
    finish(
        nodes,
        links,
        highlight.to_vec(),
        imports,
        false,
        String::new(),
    )
}

fn files_view(g: &Graph, highlight: &[String]) -> PageData {
    let mut weights: HashMap<(u32, u32, &'static str), usize> = HashMap::new();
    for e in &g.edges {
        let (a, b) = (g.nodes[e.from as usize].file, g.nodes[e.to as usize].file);
        if a != b {
            *weights.entry((a, b, e.kind.name())).or_default() += 1;
        }
    }
    for &(a, b) in &g.imports {
        if a != b {
            *weights.entry((a, b, "imports")).or_default() += 1;
        }
    }
    let mut degree = vec![0usize; g.files.len()];
    for (&(a, b, _), &w) in &weights {
        degree[a as usize] += w;
        degree[b as usize] += w;
    }
    let nodes = g
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| PageNode {
            id: f.path.clone(),
            name: f.path.rsplit('/').next().unwrap_or(&f.path).to_string(),
            kind: DefKind::File.name(),
            dir: dir_of(&f.path),
            path: f.path.clone(),
            line: 1,
            degree: degree[i],
        })
        .collect();
    let links = weights
        .keys()
        .map(|&(a, b, kind)| PageLink {
            source: g.files[a as usize].path.clone(),
            target: g.files[b as usize].path.clone(),
            kind,
        })
        .collect();
    // A highlighted definition lights up its file.
    let files: BTreeSet<String> = highlight
        .iter()
        .map(|id| id.split('#').next().unwrap_or(id).to_string())
        .collect();
    let note = format!(
        "{} definitions: showing their {} files (edges aggregated)",
        g.nodes.len(),
        g.files.len()
    );
    finish(
        nodes,
        links,
        files.into_iter().collect(),
        Vec::new(),
        true,
        note,
    )
}

fn finish(
    nodes: Vec<PageNode>,
    links: Vec<PageLink>,
    highlight: Vec<String>,
    imports: Vec<(String, String)>,
    collapsed: bool,
    note: String,
) -> PageData {
    let kinds: BTreeSet<&'static str> = nodes.iter().map(|n| n.kind).collect();
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    for n in &nodes {
        // Every ancestor directory is a filter choice.
        let mut d = n.dir.as_str();
        loop {
            dirs.insert(d.to_string());
            match d.rsplit_once('/') {
                Some((parent, _)) => d = parent,
                None => break,
            }
        }
    }
    dirs.remove("");
    PageData {
        nodes,
        links,
        highlight,
        imports,
        kinds: kinds.into_iter().collect(),
        dirs: dirs.into_iter().collect(),
        collapsed,
        note,
    }
}
