//! The sites of a navigation: definitions reached from the target along the graph's edges,
//! each with the lines that refer and how each reference was resolved; and the references
//! that could not be resolved but may mean the target.

use std::collections::HashMap;

use crate::link::{EdgeKind, Graph, How};
use crate::model::{DefKind, RefKind};

use super::Direction;

/// One line of a site that refers to the definition it is shown for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub line: u32,
    pub kind: RefKind,
    pub how: How,
    /// Definitions the reference resolved to: above one, the name is shared.
    pub candidates: u32,
    /// A method call on a receiver of unknown type, linked only because no other definition
    /// has the name: a guess (the method may be a library's).
    pub guess: bool,
}

/// A definition reached from the target.
#[derive(Debug, Clone)]
pub struct Site {
    /// The definition shown: the caller or user (callers, references, impact), or the
    /// callee (callees).
    pub node: u32,
    /// Steps from the target (1: direct).
    pub distance: u32,
    /// What this site refers to: the target, or for impact the site one step nearer.
    pub via: u32,
    /// The lines that refer, in the site (callers, references, impact) or in the target
    /// (callees). Empty when the edge's reference is module-level or was spelled otherwise.
    pub lines: Vec<Line>,
    pub kinds: Vec<EdgeKind>,
    /// Refers to a method the target overrides or implements (`via`), not to the target:
    /// the call reaches the target only when the receiver's type is the target's.
    pub dispatch: bool,
}

impl Site {
    /// Every referring line resolved to several definitions of the name: the site may mean
    /// another one.
    pub fn shared(&self) -> bool {
        !self.lines.is_empty() && self.lines.iter().all(|l| l.candidates > 1)
    }

    /// Every referring line is a shared name or a guess: the site may not reach the target.
    pub fn possible(&self) -> bool {
        !self.lines.is_empty() && self.lines.iter().all(|l| l.candidates > 1 || l.guess)
    }
}

/// A reference named like the target that no definition could be found for: a call on a
/// receiver of unknown type, dynamic dispatch, reflection, or code outside the repository.
#[derive(Debug, Clone)]
pub struct Unresolved {
    pub file: u32,
    pub line: u32,
    /// As written: `receiver.name` or `name`.
    pub text: String,
}

fn spelled(r: &crate::model::Reference) -> String {
    match r.receiver {
        Some(recv) if !recv.is_empty() => format!("{recv}.{}", r.name),
        _ => r.name.to_string(),
    }
}

#[derive(Debug, Clone, Default)]
pub struct Walk {
    pub sites: Vec<Site>,
    /// The first [`MAX_UNRESOLVED`] unresolved references, in file order.
    pub unresolved: Vec<Unresolved>,
    pub unresolved_total: usize,
}

const MAX_UNRESOLVED: usize = 50;

fn kinds_of(direction: Direction) -> &'static [EdgeKind] {
    match direction {
        Direction::Callers | Direction::Callees => &[EdgeKind::Calls],
        Direction::References | Direction::Impact => &[
            EdgeKind::Calls,
            EdgeKind::References,
            EdgeKind::Inherits,
            EdgeKind::Implements,
        ],
    }
}

/// Walks from `target` in `direction` (`depth` steps for impact, one otherwise); sites
/// nearest first, then by `prior` (the ranker's global PageRank), then by node.
pub fn walk(g: &Graph, prior: &[f32], target: u32, direction: Direction, depth: u32) -> Walk {
    let kinds = kinds_of(direction);
    let mut sites: Vec<Site> = Vec::new();
    if direction == Direction::Callees {
        let mut callees: HashMap<u32, Vec<EdgeKind>> = HashMap::new();
        for &e in &g.out_edges[target as usize] {
            let e = g.edges[e as usize];
            if kinds.contains(&e.kind) && e.to != target {
                callees.entry(e.to).or_default().push(e.kind);
            }
        }
        for (node, kinds) in callees {
            sites.push(Site {
                node,
                distance: 1,
                via: target,
                lines: referring_lines(g, target, node),
                kinds,
                dispatch: false,
            });
        }
        sites.extend(recursion(g, target));
        // In the order the target calls them.
        sites.sort_by_key(|s| (s.lines.first().map_or(u32::MAX, |l| l.line), s.node));
        let unresolved = unresolved_in(g, target);
        return Walk {
            unresolved_total: unresolved.len(),
            unresolved: unresolved.into_iter().take(MAX_UNRESOLVED).collect(),
            sites,
        };
    }
    let depth = if direction == Direction::Impact {
        depth.clamp(1, super::MAX_DEPTH)
    } else {
        1
    };
    let mut seen: HashMap<u32, usize> = HashMap::from([(target, usize::MAX)]);
    let mut frontier = vec![target];
    for distance in 1..=depth {
        let mut next = Vec::new();
        for &via in &frontier {
            for &e in &g.in_edges[via as usize] {
                let e = g.edges[e as usize];
                if !kinds.contains(&e.kind) {
                    continue;
                }
                if let Some(&at) = seen.get(&e.from) {
                    // Another edge from a site already found at this distance from the same
                    // definition (a call and a type use): one site, both kinds.
                    if at != usize::MAX
                        && sites[at].via == via
                        && !sites[at].kinds.contains(&e.kind)
                    {
                        sites[at].kinds.push(e.kind);
                    }
                    continue;
                }
                seen.insert(e.from, sites.len());
                sites.push(Site {
                    node: e.from,
                    distance,
                    via,
                    lines: referring_lines(g, e.from, via),
                    kinds: vec![e.kind],
                    dispatch: false,
                });
                next.push(e.from);
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    sites.extend(recursion(g, target));
    // Calls of the methods the target overrides: through a base-typed receiver they may run
    // the target. One step only, after the direct sites.
    for base in overridden(g, target) {
        for &e in &g.in_edges[base as usize] {
            let e = g.edges[e as usize];
            if !kinds.contains(&e.kind) || seen.contains_key(&e.from) || e.from == target {
                continue;
            }
            seen.insert(e.from, usize::MAX);
            sites.push(Site {
                node: e.from,
                distance: 1,
                via: base,
                lines: referring_lines(g, e.from, base),
                kinds: vec![e.kind],
                dispatch: true,
            });
        }
    }
    sites.sort_by(|a, b| {
        a.distance
            .cmp(&b.distance)
            .then(a.dispatch.cmp(&b.dispatch))
            .then(a.possible().cmp(&b.possible()))
            .then(
                prior
                    .get(b.node as usize)
                    .unwrap_or(&0.0)
                    .total_cmp(prior.get(a.node as usize).unwrap_or(&0.0)),
            )
            .then(a.node.cmp(&b.node))
    });
    let calls_only = direction == Direction::Callers;
    let (unresolved, total) = unresolved_named(g, target, calls_only);
    Walk {
        sites,
        unresolved,
        unresolved_total: total,
    }
}

/// Methods `target` overrides or implements: members of the same name in its type's bases,
/// a few levels up.
fn overridden(g: &Graph, target: u32) -> Vec<u32> {
    let def = g.def(target);
    if def.kind != DefKind::Method {
        return Vec::new();
    }
    let Some(owner) = g.parent(target) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen = vec![owner];
    let mut frontier = vec![owner];
    for _ in 0..4 {
        let mut next = Vec::new();
        for t in frontier {
            for base in g.targets(t, &[EdgeKind::Inherits, EdgeKind::Implements]) {
                if seen.contains(&base) {
                    continue;
                }
                seen.push(base);
                out.extend(
                    g.targets(base, &[EdgeKind::Contains])
                        .filter(|&m| m != target && g.def(m).name == def.name),
                );
                next.push(base);
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    out
}

/// The target as its own caller: the graph keeps no edge from a definition to itself, but a
/// recursive call is a call site a reader changing the signature must see. A call of the same
/// name on a receiver of unknown type (`self.inner.read()` inside `read`) is delegation far
/// more often than recursion, so only calls resolved by scope or receiver type count.
fn recursion(g: &Graph, target: u32) -> Option<Site> {
    let lines: Vec<Line> = referring_lines(g, target, target)
        .into_iter()
        .filter(|l| matches!(l.kind, RefKind::Call | RefKind::MacroCall) && l.how != How::Name)
        .collect();
    (!lines.is_empty()).then_some(Site {
        node: target,
        distance: 1,
        via: target,
        lines,
        kinds: vec![EdgeKind::Calls],
        dispatch: false,
    })
}

/// The lines of `site` whose references name `to` and resolved to it (or to several
/// definitions of its name, `to` among them).
fn referring_lines(g: &Graph, site: u32, to: u32) -> Vec<Line> {
    let nr = g.nodes[site as usize];
    let file = &g.files[nr.file as usize];
    let name = &g.def(to).name;
    let mut out: Vec<Line> = Vec::new();
    for (ri, r) in file.references.iter().enumerate() {
        if r.scope != Some(nr.def) || r.name != name.as_str() {
            continue;
        }
        let Some(res) = resolution(g, nr.file, ri as u32) else {
            continue;
        };
        if res.target != to && res.candidates() <= 1 {
            continue; // resolved to another definition of the same name
        }
        if out.iter().any(|l| l.line == r.line) {
            continue;
        }
        out.push(Line {
            line: r.line,
            kind: r.kind,
            how: res.how(),
            candidates: res.candidates(),
            // Any receiver: a named one of unknown type, or an expression (`Path::new(p).parent()`).
            guess: res.how() == How::Name && r.receiver.is_some(),
        });
    }
    out
}

/// The resolution of reference `reference` of `file` (resolutions are in file order, each
/// file's in reference order).
fn resolution(g: &Graph, file: u32, reference: u32) -> Option<crate::link::Resolution> {
    g.resolutions
        .binary_search_by(|r| (r.file, r.reference()).cmp(&(file, reference)))
        .ok()
        .map(|i| g.resolutions[i])
}

/// Unresolved references anywhere named like `target` (calls only, for callers).
fn unresolved_named(g: &Graph, target: u32, calls_only: bool) -> (Vec<Unresolved>, usize) {
    let def = g.def(target);
    let family = g.file_of(target).lang.family();
    let mut out = Vec::new();
    let mut total = 0;
    for &(fi, ri) in &g.unresolved {
        let file = &g.files[fi as usize];
        if file.lang.family() != family {
            continue;
        }
        let Some(r) = file.references.get(ri as usize) else {
            continue;
        };
        if r.name != def.name.as_str()
            || calls_only && !matches!(r.kind, RefKind::Call | RefKind::MacroCall)
        {
            continue;
        }
        total += 1;
        if out.len() < MAX_UNRESOLVED {
            out.push(Unresolved {
                file: fi,
                line: r.line,
                text: spelled(&r),
            });
        }
    }
    (out, total)
}

/// Calls inside `target` that resolved to nothing in the repository.
fn unresolved_in(g: &Graph, target: u32) -> Vec<Unresolved> {
    let nr = g.nodes[target as usize];
    let file = &g.files[nr.file as usize];
    g.unresolved
        .iter()
        .filter(|&&(fi, _)| fi == nr.file)
        .filter_map(|&(_, ri)| file.references.get(ri as usize))
        .filter(|r| r.scope == Some(nr.def) && matches!(r.kind, RefKind::Call))
        .map(|r| Unresolved {
            file: nr.file,
            line: r.line,
            text: spelled(&r),
        })
        .collect()
}
