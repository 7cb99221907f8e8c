//! The definition a navigation request names. Several definitions may share a name: all are
//! candidates, ordered so the one a reader most likely means comes first.

use crate::layout::node_id;
use crate::link::Graph;
use crate::model::DefKind;

use super::NavigateError;

/// What a target named.
#[derive(Debug, Clone)]
pub struct Target {
    /// The definition answered.
    pub best: u32,
    /// Every definition the target could mean, best first (`best` included).
    pub candidates: Vec<u32>,
}

/// Kinds a reader navigates to: code with a name. Sections, regions and whole files are
/// places, not definitions.
fn navigable(kind: DefKind) -> bool {
    !matches!(kind, DefKind::Section | DefKind::Region | DefKind::File)
}

/// Finds what `target` names: an id (`path#Qualified.name`, `path#Name@line`), `path:line`
/// (the innermost definition holding the line), or a name, plain or qualified with `.`, `::`
/// or `#` (`Session.send`, `Router::route`).
pub fn find(g: &Graph, prior: &[f32], target: &str) -> Result<Target, NavigateError> {
    let target = target
        .trim()
        .trim_matches(|c: char| c == '`' || c == '"' || c == '\'')
        .trim_end_matches("()")
        .trim();
    if target.is_empty() {
        return Err(NavigateError::Empty);
    }
    if let Some((path, rest)) = target.split_once('#')
        && let Some(file) = g.file_index(path)
    {
        let (name, line) = match rest.rsplit_once('@') {
            Some((n, l)) => (n, l.parse::<u32>().ok()),
            None => (rest, None),
        };
        let nodes: Vec<u32> = file_nodes(g, file)
            .filter(|&n| {
                let d = g.def(n);
                d.qualified_name == name && line.is_none_or(|l| d.start_line == l)
            })
            .collect();
        if !nodes.is_empty() {
            return Ok(ordered(g, prior, nodes));
        }
    }
    if let Some((path, line)) = target.rsplit_once(':')
        && let Ok(line) = line.parse::<u32>()
        && let Some(file) = g.file_index(path)
    {
        let lines = g.files[file as usize].lines;
        if line == 0 || line > lines {
            return Err(NavigateError::NoLine {
                path: path.to_string(),
                line,
                lines,
            });
        }
        // The innermost definition holding the line: the latest-starting of those that do.
        let inner = file_nodes(g, file)
            .filter(|&n| {
                let d = g.def(n);
                navigable(d.kind) && d.start_line <= line && line <= d.end_line
            })
            .max_by_key(|&n| (g.def(n).start_line, std::cmp::Reverse(g.def(n).end_line)));
        return match inner {
            Some(n) => Ok(Target {
                best: n,
                candidates: vec![n],
            }),
            None => Err(NavigateError::NoTarget(target.to_string())),
        };
    }
    let spelled = normalise(target);
    let name = spelled.rsplit('.').next().unwrap_or(&spelled);
    let qualified = spelled.contains('.');
    let nodes: Vec<u32> = (0..g.nodes.len() as u32)
        .filter(|&n| {
            let d = g.def(n);
            d.name == name
                && navigable(d.kind)
                && (!qualified || qualified_matches(&normalise(&d.qualified_name), &spelled))
        })
        .collect();
    if nodes.is_empty() {
        return Err(NavigateError::NoTarget(target.to_string()));
    }
    Ok(ordered(g, prior, nodes))
}

fn file_nodes(g: &Graph, file: u32) -> impl Iterator<Item = u32> {
    g.file_start[file as usize]..g.file_start[file as usize + 1]
}

/// `a::b`, `a#b` and `a.b` spelled alike; `impl Foo for Bar.x` keeps its words.
fn normalise(name: &str) -> String {
    name.replace("::", ".").replace('#', ".")
}

/// Whether a qualified name ends with the spelled one at a segment boundary
/// (`requests.sessions.Session.send` matches `Session.send`, not `ession.send`).
fn qualified_matches(qualified: &str, spelled: &str) -> bool {
    qualified == spelled
        || qualified
            .strip_suffix(spelled)
            .is_some_and(|head| head.ends_with('.') || head.ends_with(' '))
}

/// Candidates best first: code over tests, then the most used (incoming edges, then the
/// ranker's prior), then by id for a stable order.
fn ordered(g: &Graph, prior: &[f32], mut nodes: Vec<u32>) -> Target {
    let used = |n: u32| {
        g.in_edges[n as usize]
            .iter()
            .filter(|&&e| g.edges[e as usize].kind != crate::link::EdgeKind::Contains)
            .count()
    };
    nodes.sort_by(|&a, &b| {
        let (da, db) = (g.def(a), g.def(b));
        da.is_test
            .cmp(&db.is_test)
            .then(used(b).cmp(&used(a)))
            .then(
                prior
                    .get(b as usize)
                    .unwrap_or(&0.0)
                    .total_cmp(prior.get(a as usize).unwrap_or(&0.0)),
            )
            .then_with(|| node_id(g, a).cmp(&node_id(g, b)))
    });
    Target {
        best: nodes[0],
        candidates: nodes,
    }
}
