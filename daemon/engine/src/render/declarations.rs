//! Where a shown C or C++ function is declared: the prototype in a header (`int f(jv);`, or a
//! method's declaration in its class) that callers in other files see. Parsing makes no node
//! of a prototype (a call resolves to the one definition), so a fix that changes a
//! signature, or moves a declaration from a private header to a public one, would otherwise
//! get the definition without the line that must change with it. One line per shown
//! definition, read from the headers its own file and its callers' files include.

use std::collections::HashSet;

use serde::Serialize;

use crate::index::Sources;
use crate::link::{EdgeKind, Graph};
use crate::model::{DefKind, Lang};
use crate::pack::Block;
use crate::pack::block::Mode;

/// Callers whose includes are searched, per definition: a widely called function's
/// declaration is in the headers of its first callers as much as of its hundredth.
const MAX_CALLERS: usize = 32;
/// Headers searched per definition.
const MAX_HEADERS: usize = 16;
/// Lines a declaration may span (a long parameter list wraps), counted from its name's line.
const MAX_DECLARATION_LINES: usize = 6;

/// A declaration of a shown definition, as its header writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Declaration {
    /// The id of the shown definition it declares.
    pub id: String,
    pub path: String,
    /// The declaration's first line (1-based).
    pub line: u32,
    /// Its source lines, as written.
    pub text: Vec<String>,
}

/// The declarations of the C and C++ functions and methods among `blocks`, in block order, at
/// most `max`, none a whole block already shows.
pub fn declarations(
    g: &Graph,
    sources: &Sources,
    blocks: &[Block],
    max: usize,
) -> Vec<Declaration> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for b in blocks {
        if out.len() >= max {
            break;
        }
        let Some((file, d)) = declaration_of(g, sources, b.node) else {
            continue;
        };
        if shown_whole(g, blocks, file, d.line) || !seen.insert((file, d.line)) {
            continue;
        }
        out.push(d);
    }
    out
}

/// The first declaration of `node` in the headers its file or its callers' files include,
/// with the header's file index.
pub fn declaration_of(g: &Graph, sources: &Sources, node: u32) -> Option<(u32, Declaration)> {
    let def = g.def(node);
    let def_file = g.nodes[node as usize].file;
    if !matches!(g.files[def_file as usize].lang, Lang::C | Lang::Cpp)
        || !matches!(
            def.kind,
            DefKind::Function | DefKind::Method | DefKind::Constructor
        )
    {
        return None;
    }
    // A free function is declared outside every class; a method inside its own class.
    let owner = matches!(def.kind, DefKind::Method | DefKind::Constructor)
        .then(|| g.owner_type(node))
        .flatten();
    let mut including = vec![def_file];
    let mut callers = HashSet::new();
    for caller in g.sources(node, &[EdgeKind::Calls]) {
        let f = g.nodes[caller as usize].file;
        if callers.insert(f) {
            including.push(f);
        }
        if callers.len() >= MAX_CALLERS {
            break;
        }
    }
    let mut headers = Vec::new();
    for f in including {
        for h in included_by(g, f) {
            if h != def_file && is_header(&g.files[h as usize].path) && !headers.contains(&h) {
                headers.push(h);
            }
        }
        if headers.len() >= MAX_HEADERS {
            break;
        }
    }
    headers.truncate(MAX_HEADERS);
    headers.into_iter().find_map(|h| {
        let text = std::str::from_utf8(sources.get(h as usize)?).ok()?;
        let (line, lines) = find_declaration(g, h, text, &def.name, owner.as_deref())?;
        let declaration = Declaration {
            id: crate::layout::node_id(g, node),
            path: g.files[h as usize].path.clone(),
            line,
            text: lines,
        };
        Some((h, declaration))
    })
}

/// The files `file` includes (the graph's file imports are sorted by importer).
fn included_by(g: &Graph, file: u32) -> impl Iterator<Item = u32> + '_ {
    let start = g.imports.partition_point(|&(from, _)| from < file);
    g.imports[start..]
        .iter()
        .take_while(move |&&(from, _)| from == file)
        .map(|&(_, to)| to)
}

fn is_header(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(
        ext.as_deref(),
        Some("h" | "hh" | "hpp" | "hxx" | "h++" | "inl" | "ipp" | "tpp")
    )
}

/// Whether a whole block of `file` holds `line`.
fn shown_whole(g: &Graph, blocks: &[Block], file: u32, line: u32) -> bool {
    blocks.iter().any(|b| {
        let d = g.def(b.node);
        b.mode == Mode::Whole
            && g.nodes[b.node as usize].file == file
            && (d.start_line..=d.end_line).contains(&line)
    })
}

/// A declaration of `name` in header `h` (source `text`): its first line and its lines. A
/// declaration is `name(` after a type on the same or the line before, ending at `;` before
/// any `{`, outside function bodies and macros, and inside `owner`'s class exactly when there
/// is an owner.
fn find_declaration(
    g: &Graph,
    h: u32,
    text: &str,
    name: &str,
    owner: Option<&str>,
) -> Option<(u32, Vec<String>)> {
    if name.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let line_starts = crate::lines::line_starts(text.as_bytes());
    for (at, _) in text.match_indices(name) {
        let i = line_starts.partition_point(|&s| s <= at).saturating_sub(1);
        if i >= lines.len() {
            break;
        }
        let column = at - line_starts[i];
        let Some(first) = declaration_start(&lines, i, column, name) else {
            continue;
        };
        let Some(last) = declaration_end(&lines, i, column + name.len()) else {
            continue;
        };
        if !within_its_scope(g, h, i as u32 + 1, owner) {
            continue;
        }
        let shown = lines[first..=last].iter().map(|l| l.to_string()).collect();
        return Some((first as u32 + 1, shown));
    }
    None
}

/// The line a declaration whose name is at `lines[i][column..]` starts on: `i`, or the line
/// before when the type stands alone there (`static int\nf(void);`). `None` when the name is
/// not declared here (a call, a use, part of a longer name).
fn declaration_start(lines: &[&str], i: usize, column: usize, name: &str) -> Option<usize> {
    let line = lines[i];
    let before = &line[..column];
    let after = &line[column + name.len()..];
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    if before.chars().next_back().is_some_and(ident) || !after.trim_start().starts_with('(') {
        return None;
    }
    let prefix = before.trim();
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') || trimmed.starts_with("//") || trimmed.starts_with('*') {
        return None;
    }
    // What precedes the name is a type and its qualifiers, nothing that computes.
    let computes = |p: &str| {
        p.contains([
            '=', '(', ')', ';', '.', '{', '}', '"', '+', '-', '/', '!', '?', '|', '%',
        ]) || p.contains("->")
            || p.split_whitespace().any(|w| w == "return")
            || p.ends_with("::")
    };
    if !prefix.is_empty() {
        return (!computes(prefix) && !prefix.starts_with("/*")).then_some(i);
    }
    let previous = lines.get(i.checked_sub(1)?)?.trim();
    let is_type = !previous.is_empty()
        && !previous.starts_with('#')
        && !previous.starts_with("//")
        && !previous.ends_with("*/")
        && !computes(previous)
        && !previous.ends_with(',');
    is_type.then_some(i - 1)
}

/// The last line of the declaration whose name ends at `lines[i][from..]`: where `;` closes it
/// after its parameters. `None` when a `{` comes first (a definition) or it runs on too long.
fn declaration_end(lines: &[&str], i: usize, from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, line) in lines.iter().enumerate().skip(i).take(MAX_DECLARATION_LINES) {
        let rest = if k == i { &line[from..] } else { line };
        for c in rest.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                '{' if depth == 0 => return None,
                ';' if depth == 0 => return Some(k),
                _ => {}
            }
        }
    }
    None
}

/// Whether line `line` of header `h` is where a declaration of a definition with `owner` goes:
/// inside `owner`'s class when it has one, else outside every class; never in a function's
/// body or a macro.
fn within_its_scope(g: &Graph, h: u32, line: u32, owner: Option<&str>) -> bool {
    let file = &g.files[h as usize];
    let innermost = file
        .definitions
        .iter()
        .filter(|d| !matches!(d.kind, DefKind::Region | DefKind::File))
        .filter(|d| d.start_line <= line && line <= d.end_line)
        .min_by_key(|d| d.end_line - d.start_line);
    match innermost {
        None => owner.is_none(),
        Some(d) if d.kind == DefKind::Module => owner.is_none(),
        Some(d)
            if matches!(
                d.kind,
                DefKind::Class | DefKind::Struct | DefKind::Interface
            ) =>
        {
            owner == Some(d.name.as_str())
        }
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(src: &str, name: &str) -> Option<usize> {
        let lines: Vec<&str> = src.lines().collect();
        let (i, line) = lines.iter().enumerate().find(|(_, l)| l.contains(name))?;
        let column = line.find(name)?;
        declaration_start(&lines, i, column, name)
    }

    #[test]
    fn a_prototype_is_a_declaration_and_a_call_is_not() {
        assert_eq!(
            start("int jvp_number_is_nan(jv);", "jvp_number_is_nan"),
            Some(0)
        );
        assert_eq!(start("static int\nf(void);", "f"), Some(0));
        assert_eq!(
            start("  x = jvp_number_is_nan(v);", "jvp_number_is_nan"),
            None
        );
        assert_eq!(start("  return f(v);", "f"), None);
        assert_eq!(start("  jvp_number_is_nan(v);", "jvp_number_is_nan"), None);
        assert_eq!(
            start("  s->jvp_number_is_nan(v);", "jvp_number_is_nan"),
            None
        );
        assert_eq!(
            start("int my_jvp_number_is_nan(jv);", "jvp_number_is_nan"),
            None
        );
        assert_eq!(
            start("// int jvp_number_is_nan(jv);", "jvp_number_is_nan"),
            None
        );
    }

    #[test]
    fn a_declaration_ends_at_its_semicolon_and_a_definition_has_none() {
        let lines = ["int f(int a,", "      int b);"];
        assert_eq!(declaration_end(&lines, 0, 5), Some(1));
        let lines = ["int f(int a) {", "  return a;", "}"];
        assert_eq!(declaration_end(&lines, 0, 5), None);
    }

    #[test]
    fn a_definition_is_paired_with_its_declaration_in_the_headers_its_callers_include() {
        use fittok_graph::testing::{graph_of, node_named};
        let files = [
            (
                "include/shop.h",
                "#pragma once\nnamespace shop {\nclass Cart {\n public:\n  double total(int n,\n               int k) const;\n  int size() const { return count(); }\n};\nint count();\n}\n",
            ),
            (
                "src/private.h",
                "#pragma once\nint round_price(double p);\n",
            ),
            (
                "src/cart.cc",
                "#include \"shop.h\"\nnamespace shop {\ndouble Cart::total(int n, int k) const { return n * k; }\nint count() { return 1; }\n}\nint round_price(double p) { return (int)p; }\nint undeclared(void) { return 0; }\n",
            ),
            (
                "src/checkout.cc",
                "#include \"private.h\"\nint pay(double p) { return round_price(p) + undeclared(); }\n",
            ),
        ];
        let g = graph_of(&files);
        // Sources are in the graph's file order.
        let sources: Sources = g
            .files
            .iter()
            .filter_map(|f| files.iter().find(|(p, _)| *p == f.path))
            .map(|(_, s)| s.as_bytes().into())
            .collect();
        let of = |name: &str| {
            declaration_of(&g, &sources, node_named(&g, name))
                .map(|(_, d)| (d.path, d.line, d.text))
        };
        // A method, in its class, over two lines.
        let total = (
            "include/shop.h".to_string(),
            5,
            vec![
                "  double total(int n,".to_string(),
                "               int k) const;".to_string(),
            ],
        );
        assert_eq!(of("total"), Some(total));
        // A free function, outside the class whose inline method calls it.
        assert_eq!(
            of("count"),
            Some((
                "include/shop.h".to_string(),
                9,
                vec!["int count();".to_string()]
            ))
        );
        // Declared in a header only its caller includes.
        assert_eq!(
            of("round_price").map(|d| (d.0, d.1)),
            Some(("src/private.h".to_string(), 2))
        );
        assert_eq!(of("undeclared"), None);
    }

    #[test]
    fn headers_are_told_by_their_extension() {
        assert!(is_header("src/jv.h") && is_header("include/fmt/core.HPP"));
        assert!(!is_header("src/jv.c") && !is_header("src/format.cc"));
    }
}
