//! Test helpers for the crates built on the graph (feature `testing`): a linked graph of a
//! few files, and a node by name.

pub use fittok_util::testing::*;

/// A linked graph of `files` (path, source), each parsed in the language its path says.
pub fn graph_of(files: &[(&str, &str)]) -> crate::link::Graph {
    let parsed = files
        .iter()
        .map(|(path, src)| {
            let lang = crate::model::Lang::from_path(path).expect("known language");
            std::sync::Arc::new(crate::parse::parse_file(path, lang, src.as_bytes()))
        })
        .collect();
    crate::link::link(parsed)
}

/// The first node of `g` named `name` (definitions in order: a class before its constructor);
/// panics, naming it, when there is none.
pub fn node_named(g: &crate::link::Graph, name: &str) -> u32 {
    (0..g.nodes.len() as u32)
        .find(|&n| g.def(n).name == name)
        .unwrap_or_else(|| panic!("no node named {name}"))
}
