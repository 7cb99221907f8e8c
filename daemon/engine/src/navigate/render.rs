//! A navigation answer as text: what the target is, how its edges were resolved and what
//! could not be, then each site's definition with the referring lines marked, nearest first,
//! within the budget; the sites that do not fit are pointed to by id.

use std::fmt::Write;

use crate::engine::Engine;
use crate::layout::{BETWEEN_BLOCKS, FENCE_CLOSE, LINE_ANCHOR, node_id, range_heading};
use crate::lines::lines_of;
use crate::link::{EdgeKind, Graph, How};
use crate::pack::block::Mode;
use crate::render::{Answer, AnswerNode, Pointer, Provenance};
use crate::tokens::count;

use super::sites::{Line, Site, Walk};
use super::{Direction, Navigation, Target};

/// A site no longer than this is shown whole; a longer one as its first line and a window
/// around each referring line.
const WHOLE_LINES: u32 = 30;
/// Lines shown on each side of a referring line in a long site.
const CONTEXT: u32 = 2;
/// Other candidates and unresolved references named in the preamble.
const NAMED: usize = 8;
/// Sites shown when there is no budget: beyond this an answer is a listing, not a slice.
const UNCAPPED_SITES: usize = 60;
/// Tokens kept free for the "not shown" pointer lines.
const POINTER_RESERVE: usize = 120;

/// A block of the answer: the target's own (`site` none, callees) or a site's.
struct Shown {
    node: u32,
    site: Option<usize>,
    text: String,
    tokens: usize,
}

impl Shown {
    fn new(enc: crate::tokens::Encoding, node: u32, site: Option<usize>, text: String) -> Shown {
        Shown {
            node,
            site,
            tokens: count(enc, &text),
            text,
        }
    }
}

pub(super) fn answer(engine: &Engine, nav: &Navigation, found: &Target, walk: &Walk) -> Answer {
    let g = &engine.repo.graph;
    let enc = nav.encoding;
    let preamble = preamble(engine, nav, found, walk);
    let heading = section_heading(nav, walk);
    // The target itself first for callees (the calls are its lines), then each site.
    let mut blocks: Vec<Shown> = Vec::new();
    if nav.direction == Direction::Callees {
        let lines: Vec<Line> = walk.sites.iter().flat_map(|s| s.lines.clone()).collect();
        let text = block(engine, found.best, &lines, &target_title(g, found.best));
        blocks.push(Shown::new(enc, found.best, None, text));
    }
    for (i, s) in walk.sites.iter().enumerate() {
        let marked = site_lines(nav.direction, s);
        let text = block(engine, s.node, marked, &site_title(g, nav, s));
        blocks.push(Shown::new(enc, s.node, Some(i), text));
    }
    let budget = if nav.budget == 0 {
        usize::MAX
    } else {
        nav.budget
    };
    let mut used = count(enc, &preamble) + count(enc, &heading);
    let mut shown: Vec<Shown> = Vec::new();
    for b in blocks {
        let room = if nav.budget == 0 {
            shown.iter().filter(|s| s.site.is_some()).count() < UNCAPPED_SITES
        } else {
            used + b.tokens + POINTER_RESERVE <= budget
        };
        // Without room, a smaller site further down may still fit.
        if room {
            used += b.tokens;
            shown.push(b);
        }
    }
    let is_shown = |shown: &[Shown], i: usize| shown.iter().any(|s| s.site == Some(i));
    let rest: Vec<&Site> = walk
        .sites
        .iter()
        .enumerate()
        .filter(|&(i, _)| !is_shown(&shown, i))
        .map(|(_, s)| s)
        .collect();
    let brief = brief_preamble(engine, nav, found);
    let compose = |shown: &[Shown], pointers: usize, short: bool| {
        let mut s = if short {
            brief.clone()
        } else {
            preamble.clone()
        };
        s.push_str(&heading);
        for b in shown {
            s.push_str(&b.text);
        }
        if !rest.is_empty() && pointers > 0 {
            s.push_str("\n## Not shown (expand an id for its code)\n");
            for site in rest.iter().take(pointers) {
                let _ = writeln!(s, "→ {}", pointer_line(g, nav, site));
            }
            if rest.len() > pointers {
                let _ = writeln!(s, "… and {} more", rest.len() - pointers);
            }
        }
        s
    };
    // As many pointers as the budget leaves room for; then, should token merges across
    // pieces have pushed the whole over, the last blocks go. A budget too small for the whole
    // preamble keeps its first line: what the target is.
    let mut pointers = rest.len();
    let mut short = false;
    let mut text = compose(&shown, pointers, short);
    while count(enc, &text) > budget {
        if pointers > 0 {
            pointers = if pointers > 8 {
                pointers / 2
            } else {
                pointers - 1
            };
        } else if !shown.is_empty() {
            shown.pop();
        } else if !short {
            short = true;
        } else {
            text = crate::tokens::truncate(enc, &text, budget);
            break;
        }
        text = compose(&shown, pointers, short);
    }
    let tokens = count(enc, &text);
    let nodes = shown
        .iter()
        .map(|b| answer_node(engine, b.node, b.tokens))
        .collect();
    let pointers = walk
        .sites
        .iter()
        .enumerate()
        .filter(|&(i, _)| !is_shown(&shown, i))
        .map(|(_, s)| Pointer {
            id: node_id(g, s.node),
            tokens: 0,
        })
        .collect();
    Answer {
        text,
        tokens,
        budget: nav.budget,
        provenance: Provenance {
            repo: engine.repo_name(),
            freshness: nav
                .freshness
                .clone()
                .unwrap_or_else(|| engine.freshness.clone()),
            semantic_coverage: 0.0,
            semantic_note: None,
            already_shown: Vec::new(),
            files: g.files.len(),
        },
        map: Vec::new(),
        nodes,
        inside_whole: Vec::new(),
        references: Vec::new(),
        declarations: Vec::new(),
        pointers,
        whole_files_tokens: None,
        confidence: 1.0,
        names_repo: true,
        matched: true,
        ranking: Vec::new(),
    }
}

fn answer_node(engine: &Engine, node: u32, tokens: usize) -> AnswerNode {
    let g = &engine.repo.graph;
    let d = g.def(node);
    AnswerNode {
        id: node_id(g, node),
        path: g.file_of(node).path.clone(),
        start_line: d.start_line,
        end_line: d.end_line,
        kind: d.kind.name().to_string(),
        name: d.qualified_name.clone(),
        mode: Mode::Whole,
        tokens,
        score: 1.0,
        version: crate::index::node_version(g, &engine.sources, node),
        changed: false,
    }
}

fn describe(g: &Graph, node: u32) -> String {
    let d = g.def(node);
    format!(
        "{} `{}` ({}:{})",
        d.kind.name(),
        d.qualified_name,
        g.file_of(node).path,
        d.start_line
    )
}

fn signature(g: &Graph, node: u32) -> String {
    let s = g.def(node).signature.trim();
    let s: String = s.chars().take(160).collect();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn preamble(engine: &Engine, nav: &Navigation, found: &Target, walk: &Walk) -> String {
    let g = &engine.repo.graph;
    let target = found.best;
    let name = &g.def(target).qualified_name;
    let what = match nav.direction {
        Direction::Callers => format!("callers of `{name}`"),
        Direction::Callees => format!("what `{name}` calls"),
        Direction::References => format!("uses of `{name}`"),
        Direction::Impact => format!("what a change to `{name}` can reach"),
    };
    let freshness = nav.freshness.as_deref().unwrap_or(&engine.freshness);
    let mut s = format!(
        "fittok · {} · {} · {} · {} {}\n",
        engine.repo_name(),
        freshness,
        what,
        walk.sites.len(),
        if nav.direction == Direction::Callees {
            "callees"
        } else {
            "sites"
        }
    );
    s.push_str(
        "Each block is the current source with real line numbers; ▶ marks the lines that refer. \
         Expand a → id for more.\n\n",
    );
    let _ = writeln!(
        s,
        "Target: {} — `{}` → {}",
        describe(g, target),
        signature(g, target),
        node_id(g, target)
    );
    if found.candidates.len() > 1 {
        let others: Vec<String> = found
            .candidates
            .iter()
            .filter(|&&n| n != target)
            .take(NAMED)
            .map(|&n| format!("{} — `{}`", node_id(g, n), signature(g, n)))
            .collect();
        let _ = writeln!(
            s,
            "Also named `{}` ({} more; ask for one by its id): {}{}",
            g.def(target).name,
            found.candidates.len() - 1,
            others.join("; "),
            if found.candidates.len() - 1 > NAMED {
                "; …"
            } else {
                ""
            }
        );
    }
    let mut by_how: Vec<(How, usize)> = Vec::new();
    let mut shared = 0;
    for l in walk.sites.iter().flat_map(|s| &s.lines) {
        match by_how.iter_mut().find(|(h, _)| *h == l.how) {
            Some((_, n)) => *n += 1,
            None => by_how.push((l.how, 1)),
        }
        shared += usize::from(l.candidates > 1);
    }
    by_how.sort();
    if !by_how.is_empty() {
        let parts: Vec<String> = by_how
            .iter()
            .map(|(h, n)| format!("{n} {}", h.describe()))
            .collect();
        let _ = write!(s, "Resolved: {}", parts.join(", "));
        if shared > 0 {
            let _ = write!(
                s,
                "; {shared} of them to a shared name, so they may mean another definition too"
            );
        }
        s.push_str(".\n");
    }
    if walk.unresolved_total > 0 {
        let listed: Vec<String> = walk
            .unresolved
            .iter()
            .take(NAMED)
            .map(|u| {
                if nav.direction == Direction::Callees {
                    format!("`{}` at {}", u.text, u.line)
                } else {
                    format!("{}:{} `{}`", g.files[u.file as usize].path, u.line, u.text)
                }
            })
            .collect();
        let more = if walk.unresolved_total > listed.len() {
            format!(", … ({} in all)", walk.unresolved_total)
        } else {
            String::new()
        };
        if nav.direction == Direction::Callees {
            let _ = writeln!(
                s,
                "Not resolved ({} call{} to code outside the repository, or on receivers of unknown type): {}{more}.",
                walk.unresolved_total,
                if walk.unresolved_total == 1 { "" } else { "s" },
                listed.join(", ")
            );
        } else {
            let _ = writeln!(
                s,
                "Not resolved ({} reference{} named `{}` whose definition is unknown: untyped receivers, dynamic dispatch, reflection or other code; they may be more {}): {}{more}.",
                walk.unresolved_total,
                if walk.unresolved_total == 1 { "" } else { "s" },
                g.def(target).name,
                if nav.direction == Direction::Callers {
                    "callers"
                } else {
                    "uses"
                },
                listed.join(", ")
            );
        }
    }
    s
}

/// The preamble's first line alone: what was asked and what the target is.
fn brief_preamble(engine: &Engine, nav: &Navigation, found: &Target) -> String {
    let g = &engine.repo.graph;
    format!(
        "fittok · {} · {} of `{}` → {}\n",
        engine.repo_name(),
        nav.direction.name(),
        g.def(found.best).qualified_name,
        node_id(g, found.best)
    )
}

fn section_heading(nav: &Navigation, walk: &Walk) -> String {
    let n = walk.sites.len();
    match nav.direction {
        Direction::Callers => format!("\n## Callers ({n}, nearest first)\n"),
        Direction::Callees => format!("\n## The target and its callees ({n}, in call order)\n"),
        Direction::References => format!("\n## Uses ({n})\n"),
        Direction::Impact => {
            let mut per: Vec<(u32, usize)> = Vec::new();
            for s in &walk.sites {
                match per.iter_mut().find(|(d, _)| *d == s.distance) {
                    Some((_, c)) => *c += 1,
                    None => per.push((s.distance, 1)),
                }
            }
            let steps: Vec<String> = per
                .iter()
                .map(|(d, c)| format!("{c} at {d} step{}", if *d == 1 { "" } else { "s" }))
                .collect();
            format!(
                "\n## Impact ({n} definitions within {} steps: {})\n",
                nav.depth.clamp(1, super::MAX_DEPTH),
                if steps.is_empty() {
                    "none".to_string()
                } else {
                    steps.join(", ")
                }
            )
        }
    }
}

fn edge_word(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Calls => "calls",
        EdgeKind::References => "uses the type",
        EdgeKind::Inherits => "inherits",
        EdgeKind::Implements => "implements",
        EdgeKind::Contains => "contains",
    }
}

fn at_lines(lines: &[Line]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut hows: Vec<How> = lines.iter().map(|l| l.how).collect();
    hows.sort();
    hows.dedup();
    let nums: Vec<String> = lines.iter().map(|l| l.line.to_string()).collect();
    let hows: Vec<&str> = hows.iter().map(|h| h.describe()).collect();
    let shared = if lines.iter().any(|l| l.candidates > 1) {
        ", shared name"
    } else {
        ""
    };
    format!(" at {} ({}{shared})", nums.join(", "), hows.join(", "))
}

fn target_title(g: &Graph, node: u32) -> String {
    format!("{} (the target)", g.def(node).qualified_name)
}

fn site_title(g: &Graph, nav: &Navigation, s: &Site) -> String {
    let name = &g.def(s.node).qualified_name;
    let via = &g.def(s.via).qualified_name;
    let kinds: Vec<&str> = s.kinds.iter().map(|&k| edge_word(k)).collect();
    if s.dispatch {
        return format!(
            "{name} — {} `{via}`{}, which the target overrides (dynamic dispatch: reaches the target when the receiver is of its type)",
            kinds.join(", "),
            at_lines(&s.lines)
        );
    }
    if s.possible() && nav.direction != Direction::Callees {
        let why = if s.shared() {
            let n = s.lines.iter().map(|l| l.candidates).max().unwrap_or(2);
            format!("the name resolved to {n} definitions")
        } else {
            "the receiver's type is unknown; this is the only definition of the name here"
                .to_string()
        };
        return format!(
            "{name} — {}{} (may call another: {why})",
            kinds.join(", "),
            at_lines(&s.lines)
        );
    }
    match nav.direction {
        Direction::Callees => format!("{name} — called{}", at_lines(&s.lines)),
        Direction::Impact if s.distance > 1 => format!(
            "{name} — {} `{via}`{} (step {})",
            kinds.join(", "),
            at_lines(&s.lines),
            s.distance
        ),
        _ => format!("{name} — {}{}", kinds.join(", "), at_lines(&s.lines)),
    }
}

fn pointer_line(g: &Graph, nav: &Navigation, s: &Site) -> String {
    let step = if nav.direction == Direction::Impact {
        format!(" (step {})", s.distance)
    } else {
        String::new()
    };
    let line = s.lines.first().map_or(g.def(s.node).start_line, |l| l.line);
    format!(
        "{} ({}:{}){step}",
        node_id(g, s.node),
        g.file_of(s.node).path,
        line
    )
}

/// The lines to mark in a site's own code: its referring lines, except for callees, whose
/// referring lines are in the target.
fn site_lines(direction: Direction, s: &Site) -> &[Line] {
    if direction == Direction::Callees {
        &[]
    } else {
        &s.lines
    }
}

/// `node`'s code under a heading: whole when short, else its first line and a window
/// around each marked line; marked lines carry their number and ▶.
fn block(engine: &Engine, node: u32, marked: &[Line], title: &str) -> String {
    let g = &engine.repo.graph;
    let d = g.def(node);
    let nr = g.nodes[node as usize];
    let file = &g.files[nr.file as usize];
    let src = &engine.sources[nr.file as usize];
    let starts = engine.line_starts(nr.file);
    let (first, last) = (
        d.start_line.max(1),
        d.end_line.max(d.start_line).min(file.lines),
    );
    let marks: Vec<u32> = marked
        .iter()
        .map(|l| l.line)
        .filter(|l| (first..=last).contains(l))
        .collect();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    if last - first < WHOLE_LINES || marks.is_empty() && last - first < WHOLE_LINES * 2 {
        ranges.push((first, last));
    } else if marks.is_empty() {
        ranges.push((first, first + WHOLE_LINES - 1));
    } else {
        ranges.push((first, first));
        for &m in &marks {
            let (a, b) = (
                m.saturating_sub(CONTEXT).max(first),
                (m + CONTEXT).min(last),
            );
            match ranges.last_mut() {
                Some(r) if a <= r.1 + 2 => r.1 = r.1.max(b),
                _ => ranges.push((a, b)),
            }
        }
    }
    let mut s = range_heading(&file.path, first, last, Some(title), file.lang);
    for (i, &(a, b)) in ranges.iter().enumerate() {
        if i > 0 {
            s.push_str(BETWEEN_BLOCKS);
        }
        for (k, text) in lines_of(src, &starts, a, b).iter().enumerate() {
            let n = a + k as u32;
            if marks.contains(&n) {
                let _ = writeln!(s, "{n} ▶\t{text}");
            } else if k == 0 || n.is_multiple_of(LINE_ANCHOR) {
                let _ = writeln!(s, "{n}\t{text}");
            } else {
                let _ = writeln!(s, "{text}");
            }
        }
    }
    if let Some((_, b)) = ranges.last()
        && *b < last
    {
        s.push_str(BETWEEN_BLOCKS);
    }
    s.push_str(FENCE_CLOSE);
    s
}
