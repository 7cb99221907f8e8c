//! Linking on the update path: the graph of a repository's new files given the graph of its
//! previous version, equal to a full [`link`](super::link) of them but resolving only what the
//! change can affect.
//!
//! What another file's resolution reads of a file is its *module interface* — path, language,
//! package, manifest targets, imports (not their lines), test flag, the bases it names — and
//! its *definitions*: names, qualified names, kinds, parents, test flags, and the type a
//! signature says it returns (`chains`). Bodies, the rest of signatures, docs and positions
//! are read by nobody else. So:
//! - every changed file kept both: node ids and every other file's findings stand; only the
//!   changed files are resolved, against the previous link's tables (a body edit, the common
//!   save);
//! - some changed file's definitions changed but no module interface did (a function added,
//!   removed or renamed): nodes are numbered again and the symbol table rebuilt; resolved again
//!   are the changed files and every file that mentions a name whose definitions changed (a
//!   reference's name, receiver or receiver type, an import's names), through which alone a
//!   resolution can read them. Everyone else's findings are kept, their node ids moved;
//! - anything else (a file added or removed, an import or base changed): everything is linked.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::chains::{extension_receiver, return_type};
use super::{
    Edge, Graph, LinkTables, ModuleIndex, Resolution, Resolved, finish, link, numbered, resolve,
    resolve_files,
};
use crate::model::{DefKind, Definition, ParsedFile, RefKind};

/// What changed between two versions of a repository's files, as linking sees it.
#[derive(Debug, PartialEq)]
pub(super) enum Change {
    /// The files marked changed, each with the same module interface and definitions.
    Bodies(Vec<bool>),
    /// The files marked changed, each with the same module interface; some with other
    /// definitions.
    Definitions(Vec<bool>),
    /// Paths, a module interface or a base changed.
    Everything,
}

/// The graph of `files` given `prev`, the graph of an earlier version of the same repository:
/// equal to [`link`]`(files)`, ids and orders included.
pub fn relink(prev: &Graph, mut files: Vec<Arc<ParsedFile>>) -> Graph {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    match classify(prev, &files) {
        Change::Bodies(changed) => relink_bodies(prev, files, &changed),
        Change::Definitions(changed) => relink_definitions(prev, files, changed),
        Change::Everything => link(files),
    }
}

/// Which of `files` (sorted, one per path) changed since `prev`, and how.
pub(super) fn classify(prev: &Graph, files: &[Arc<ParsedFile>]) -> Change {
    if files.len() != prev.files.len() {
        return Change::Everything;
    }
    let mut changed = vec![false; files.len()];
    let mut definitions = false;
    for (i, (new, old)) in files.iter().zip(&prev.files).enumerate() {
        if Arc::ptr_eq(new, old) {
            continue;
        }
        if !same_module_interface(old, new) {
            tracing::debug!(path = %new.path, "module interface changed: linking every file");
            return Change::Everything;
        }
        definitions |= !same_definitions(old, new);
        changed[i] = true;
    }
    if definitions {
        Change::Definitions(changed)
    } else {
        Change::Bodies(changed)
    }
}

/// What `ModuleIndex` and other files' import scopes read of a file, and the bases it names
/// (the symbol table's inheritance, read by member lookups everywhere).
fn same_module_interface(a: &ParsedFile, b: &ParsedFile) -> bool {
    // A base is named by the qualified name of the type that names it: positions move.
    fn bases(f: &ParsedFile) -> Vec<(RefKind, &str, Option<&str>, Option<&str>)> {
        f.references
            .of_kinds(&[RefKind::Inherits, RefKind::Implements])
            .map(|r| {
                let scope = r
                    .scope
                    .and_then(|s| f.definitions.get(s as usize))
                    .map(|d| d.qualified_name.as_str());
                (r.kind, r.name, r.receiver, scope)
            })
            .collect()
    }
    a.path == b.path
        && a.lang == b.lang
        && a.package == b.package
        && a.targets == b.targets
        && a.imports.len() == b.imports.len()
        && a.imports.iter().zip(&b.imports).all(|(x, y)| {
            // Where an import stands is not read by linking.
            x.module == y.module
                && x.names == y.names
                && x.module_alias == y.module_alias
                && x.wildcard == y.wildcard
        })
        && a.project_imports == b.project_imports
        && a.inherited_imports == b.inherited_imports
        && a.is_test_file == b.is_test_file
        && bases(a) == bases(b)
}

/// Whether the definitions read by the symbol table and by scopes are the same, in the same
/// order (so node ids stand).
fn same_definitions(a: &ParsedFile, b: &ParsedFile) -> bool {
    a.definitions.len() == b.definitions.len()
        && a.definitions.iter().zip(&b.definitions).all(|(x, y)| {
            // Regions and sections never resolve as symbols; a region's name holds its line
            // (`imports@20`), which any edit above it moves.
            let named = is_named(x);
            (!named || (x.name == y.name && x.qualified_name == y.qualified_name))
                && x.kind == y.kind
                && x.parent == y.parent
                && x.is_test == y.is_test
                && return_type(a.lang, &x.signature) == return_type(b.lang, &y.signature)
                && extension_receiver(a.lang, &x.signature)
                    == extension_receiver(b.lang, &y.signature)
        })
}

fn is_named(d: &Definition) -> bool {
    !matches!(d.kind, DefKind::Region | DefKind::Section)
}

/// Every changed file kept its interface and definitions: the previous tables and node ids
/// serve, and only the changed files are resolved again.
fn relink_bodies(prev: &Graph, files: Vec<Arc<ParsedFile>>, changed: &[bool]) -> Graph {
    let g = Graph {
        files,
        nodes: prev.nodes.clone(),
        file_start: prev.file_start.clone(),
        ..Graph::default()
    };
    // The same interfaces make the same tables: `prev`'s serve, unless it was restored
    // without them.
    let tables = prev
        .tables
        .0
        .clone()
        .unwrap_or_else(|| Arc::new(LinkTables::build(&g)));
    let same_ids = |n: u32| Some(n);
    let found = splice(prev, &g, &tables, changed, same_ids);
    tracing::debug!(
        changed = changed.iter().filter(|&&c| c).count(),
        "relinked the changed files only"
    );
    finish(g, tables, found)
}

/// A definition as other files' resolution knows it (the type it returns: chains of calls).
type DefKey<'a> = (
    &'a str,
    &'a str,
    DefKind,
    bool,
    Option<&'a str>,
    Option<&'a str>,
);

fn def_key<'a>(f: &'a ParsedFile, d: &'a Definition) -> DefKey<'a> {
    let parent = d
        .parent
        .and_then(|p| f.definitions.get(p as usize))
        .map(|p| p.qualified_name.as_str());
    let returns = return_type(f.lang, &d.signature);
    (
        &d.name,
        &d.qualified_name,
        d.kind,
        d.is_test,
        parent,
        returns,
    )
}

/// Where each named definition of `old` went in `new` (the same key, the same occurrence), and
/// the names of the definitions only one of them has.
fn match_definitions<'a>(
    old: &'a ParsedFile,
    new: &'a ParsedFile,
    names: &mut HashSet<&'a str>,
) -> Vec<Option<u32>> {
    let mut by_key: HashMap<DefKey<'a>, std::collections::VecDeque<u32>> = HashMap::new();
    for (i, d) in new.definitions.iter().enumerate() {
        if is_named(d) {
            by_key
                .entry(def_key(new, d))
                .or_default()
                .push_back(i as u32);
        }
    }
    let mut map = vec![None; old.definitions.len()];
    for (i, d) in old.definitions.iter().enumerate() {
        if !is_named(d) {
            continue;
        }
        match by_key.get_mut(&def_key(old, d)).and_then(|q| q.pop_front()) {
            Some(j) => map[i] = Some(j),
            None => {
                names.insert(&d.name);
            }
        }
    }
    for (key, left) in &by_key {
        if !left.is_empty() {
            names.insert(key.0);
        }
    }
    map
}

/// Whether `f` names any of `names` where its resolution could look it up: a reference's
/// name, receiver or receiver type, or an import's module, names and aliases (each split into
/// identifier segments: `crate::a::B`, `pkg.Type`).
fn mentions(f: &ParsedFile, names: &[&str]) -> bool {
    let hit = |s: &str| {
        // A name is a segment only where it is a substring: most strings hold none.
        names.iter().any(|n| s.contains(n))
            && s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| names.contains(&w))
    };
    // Each distinct string once, and none in a file whose strings hold no name anywhere (a
    // scan of every reference was a third of a definition change's relink on kafka).
    let text = f.references.concatenated();
    (names.iter().any(|n| text.contains(n)) && f.references.strings().any(hit))
        || f.imports.iter().any(|i| {
            hit(&i.module)
                || i.module_alias.as_deref().is_some_and(hit)
                || i.names.iter().any(|(n, a)| hit(n) || hit(a))
        })
}

/// Some definitions changed (a function added, removed or renamed) but no module interface:
/// renumber, rebuild the symbol table, and resolve again the changed files and the files
/// mentioning a changed name; everyone else's findings move to the new ids.
fn relink_definitions(prev: &Graph, files: Vec<Arc<ParsedFile>>, changed: Vec<bool>) -> Graph {
    let g = numbered(files);
    let modules: Arc<ModuleIndex> = match &prev.tables.0 {
        Some(t) => t.modules.clone(),
        None => Arc::new(ModuleIndex::build(&g.files)),
    };
    let mut names = HashSet::new();
    // Per changed file, where each previous definition went.
    let mut moved: Vec<Option<Vec<Option<u32>>>> = vec![None; g.files.len()];
    for fi in (0..g.files.len()).filter(|&i| changed[i]) {
        let (old, new) = (&prev.files[fi], &g.files[fi]);
        moved[fi] = Some(match_definitions(old, new, &mut names));
    }
    // The new id of a previous node, if its definition is still there.
    let new_id = |n: u32| -> Option<u32> {
        let nr = prev.nodes.get(n as usize)?;
        let def = match &moved[nr.file as usize] {
            Some(map) => (*map.get(nr.def as usize)?)?,
            None => nr.def,
        };
        Some(g.file_start[nr.file as usize] + def)
    };
    let names: Vec<&str> = names.into_iter().collect();
    let mut affected = changed;
    if !names.is_empty() {
        let named = crate::par::map(&g.files, |f| mentions(f, &names));
        for (a, n) in affected.iter_mut().zip(named) {
            *a |= n;
        }
    }
    // A finding pointing at a definition that is gone (its name is among `names`, so this is
    // a safeguard): that file is resolved again too.
    for e in &prev.edges {
        let f = prev.nodes[e.from as usize].file as usize;
        if !affected[f] && new_id(e.to).is_none() {
            affected[f] = true;
        }
    }
    for r in &prev.resolutions {
        if !affected[r.file as usize] && new_id(r.target).is_none() {
            affected[r.file as usize] = true;
        }
    }
    let symbols = resolve::Symbols::build(&g);
    let tables = Arc::new(LinkTables { modules, symbols });
    let found = splice(prev, &g, &tables, &affected, new_id);
    tracing::debug!(
        changed = moved.iter().filter(|m| m.is_some()).count(),
        resolved = affected.iter().filter(|&&a| a).count(),
        names = names.len(),
        "relinked the files a definition change can affect"
    );
    finish(g, tables, found)
}

/// `prev`'s findings for the files not in `redo`, their node ids moved by `new_id`, with the
/// files in `redo` resolved again against `tables` — in the order a full link lists them.
fn splice(
    prev: &Graph,
    g: &Graph,
    tables: &LinkTables,
    redo: &[bool],
    new_id: impl Fn(u32) -> Option<u32>,
) -> Resolved {
    let from_file = |n: u32| prev.nodes[n as usize].file as usize;
    // File-keyed findings (imports, unresolved references) of the files kept.
    let kept = |items: &[(u32, u32)]| -> Vec<(u32, u32)> {
        items
            .iter()
            .filter(|&&(f, _)| !redo[f as usize])
            .copied()
            .collect()
    };
    let mut found = Resolved {
        edges: prev
            .edges
            .iter()
            .filter(|e| !redo[from_file(e.from)])
            .filter_map(|e| {
                Some(Edge {
                    from: new_id(e.from)?,
                    to: new_id(e.to)?,
                    kind: e.kind,
                })
            })
            .collect(),
        imports: kept(&prev.imports),
        unresolved: kept(&prev.unresolved),
        resolutions: prev
            .resolutions
            .iter()
            .filter(|r| !redo[r.file as usize])
            .filter_map(|&r| {
                Some(Resolution {
                    target: new_id(r.target)?,
                    ..r
                })
            })
            .collect(),
        stats: prev.stats.clone(),
    };
    let todo: Vec<usize> = (0..g.files.len()).filter(|&i| redo[i]).collect();
    let parts = crate::par::map(&todo, |&fi| {
        resolve_files(g, &tables.modules, &tables.symbols, fi..fi + 1)
    });
    for (&fi, mut part) in todo.iter().zip(parts) {
        // Per-file counts replace the file's own; the other findings are spliced in below.
        if let (Some(s), Some(new)) = (found.stats.get_mut(fi), part.stats.first()) {
            *s = *new;
        }
        part.stats.clear();
        found.append(part);
    }
    // `link` lists these in file order, each file's in reference order: a stable sort by
    // file restores that order around the spliced files.
    found.unresolved.sort_by_key(|&(f, _)| f);
    found.resolutions.sort_by_key(|r| r.file);
    found
}

#[cfg(test)]
mod tests {
    use super::{Change, classify, relink};
    use crate::link::tests::{has, parsed};
    use crate::link::{EdgeKind, link};

    /// A Go package whose files call each other without imports: only names connect them, so
    /// an unchanged file's calls depend on definitions added and removed elsewhere.
    #[test]
    fn a_definition_change_resolves_again_the_files_naming_it_and_equals_a_full_link() {
        let a0 = "package pkg\n\nfunc Alpha() int { return 1 }\n";
        let b = "package pkg\n\nfunc Beta() int { return Helper() + Gamma() + Alpha() }\n";
        let c0 = "package pkg\n\nfunc Gamma() int { return 3 }\n";
        let steps: [(&str, &str, &str, bool); 5] = [
            // Zeta appears before Alpha, named by nobody: b is not resolved again, and its
            // call to Alpha follows Alpha to its new id.
            (
                "pkg/a.go",
                "package pkg\n\nfunc Zeta() int { return 0 }\n\nfunc Alpha() int { return 1 }\n",
                "Beta → Alpha",
                true,
            ),
            // Helper appears before Alpha: b's call resolves now, and every id after it moves.
            (
                "pkg/a.go",
                "package pkg\n\nfunc Helper() int { return 2 }\n\nfunc Zeta() int { return 0 }\n\nfunc Alpha() int { return 1 }\n",
                "Beta → Helper",
                true,
            ),
            // Renamed: b's call resolves no more.
            (
                "pkg/a.go",
                "package pkg\n\nfunc Assist() int { return 2 }\n\nfunc Zeta() int { return 0 }\n\nfunc Alpha() int { return 1 }\n",
                "Beta → Helper",
                false,
            ),
            // Another file gains a definition; b's call into it stays.
            (
                "pkg/c.go",
                "package pkg\n\nfunc Gamma() int { return 3 }\n\nfunc Helper() int { return Gamma() }\n",
                "Beta → Helper",
                true,
            ),
            // Alpha goes away; the rest moves up.
            (
                "pkg/a.go",
                "package pkg\n\nfunc Assist() int { return 2 }\n",
                "Beta → Gamma",
                true,
            ),
        ];
        let mut sources = vec![("pkg/a.go", a0), ("pkg/b.go", b), ("pkg/c.go", c0)];
        let mut prev = link(parsed(&sources));
        assert!(
            has(
                &prev,
                EdgeKind::Calls,
                "pkg/b.go#pkg.Beta",
                "pkg/a.go#pkg.Alpha"
            ),
            "{:?}",
            crate::link::tests::edges(&prev, EdgeKind::Calls)
        );
        for (path, text, edge, present) in steps {
            for s in sources.iter_mut().filter(|s| s.0 == path) {
                s.1 = text;
            }
            // Unchanged files are the previous version's, as an update hands them over.
            let files: Vec<_> = parsed(&sources)
                .into_iter()
                .map(|f| {
                    if f.path == path {
                        f
                    } else {
                        prev.files
                            .iter()
                            .find(|p| p.path == f.path)
                            .cloned()
                            .unwrap_or(f)
                    }
                })
                .collect();
            assert!(
                matches!(classify(&prev, &files), Change::Definitions(_)),
                "{path}: {text}"
            );
            let relinked = relink(&prev, files.clone());
            assert!(relinked == link(files), "{path}: {text}");
            let (from, to) = edge.split_once(" → ").unwrap_or_default();
            let target = if to == "Gamma" || (to == "Helper" && path == "pkg/c.go") {
                format!("pkg/c.go#pkg.{to}")
            } else {
                format!("pkg/a.go#pkg.{to}")
            };
            assert_eq!(
                has(
                    &relinked,
                    EdgeKind::Calls,
                    &format!("pkg/b.go#pkg.{from}"),
                    &target
                ),
                present,
                "{path}: {text}"
            );
            prev = relinked;
        }
    }
}
