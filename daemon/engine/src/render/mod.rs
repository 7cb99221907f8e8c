//! Stage 6: the answer, in order — provenance line, the don't-re-read note, a map that follows
//! the question, the code (each file once, its blocks in line order), signatures of what the
//! code refers to, where its C and C++ functions are declared, pointers to what did not fit,
//! and the optional savings footer. The token budget counts the whole text.

pub mod declarations;
pub mod graph;
pub mod map;

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::index::Sources;
use crate::layout::{BETWEEN_BLOCKS, FENCE_CLOSE, file_opening, node_id};
use crate::lines::LineIndex;
use crate::link::{EdgeKind, Graph};
use crate::pack::block::Mode;
use crate::pack::{Block, Selection};
use crate::rank::Ranked;
use crate::tokens::{Encoding, count};

/// The map's size: enough to route follow-up questions, small enough to leave the budget to
/// code (files, and relevant names per file).
const MAP_FILES: usize = 8;
const MAP_NAMES_PER_FILE: usize = 4;
/// Signatures of definitions the shown code refers to.
const MAX_REFERENCED: usize = 8;
/// The fewest map files a capped answer has: one would not say which other file matters.
const MIN_MAP_FILES: usize = 2;
/// The fewest referenced signatures and pointers a capped answer has of each.
const MIN_REFERENCES: usize = 1;
pub const NOTE: &str = "Answer from the code below; do not re-read these files: each block is the current source, real line numbers on its first line and every tenth. Expand a → id for more.";

#[derive(Debug, Clone, Serialize)]
pub struct AnswerNode {
    pub id: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub kind: String,
    pub name: String,
    pub mode: Mode,
    pub tokens: usize,
    pub score: f32,
    /// The version of the node's source shown ([`crate::index::node_version`]): a reader
    /// that sends it back with an id is told when the code changed since.
    pub version: u64,
    /// Shown before in this session and changed since.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub changed: bool,
}

/// A definition inside a container shown whole, with the version shown.
#[derive(Debug, Clone, Serialize)]
pub struct ShownId {
    pub id: String,
    pub version: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Pointer {
    pub id: String,
    pub tokens: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct MapEntry {
    pub path: String,
    /// (qualified name, line) of the file's relevant definitions.
    pub names: Vec<(String, u32)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RefSig {
    pub id: String,
    pub path: String,
    pub line: u32,
    /// The definition's signature as its source writes it, its lines joined by `\n` (see
    /// [`crate::pack::block::written_signature`]), else as parsing rebuilt it on one line.
    pub signature: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    pub repo: String,
    pub freshness: String,
    pub semantic_coverage: f32,
    pub semantic_note: Option<String>,
    /// Relevant nodes left out because this reader was shown them earlier (session dedupe).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub already_shown: Vec<String>,
    /// Source files indexed: none means the folder holds no code fittok reads, which the
    /// answer says rather than "nothing matches".
    pub files: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub text: String,
    pub tokens: usize,
    pub budget: usize,
    pub provenance: Provenance,
    pub map: Vec<MapEntry>,
    pub nodes: Vec<AnswerNode>,
    /// Ids of the definitions inside the containers shown whole: their code is in the answer
    /// although they are not blocks of their own (a session that skips what it has seen skips
    /// them too).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inside_whole: Vec<ShownId>,
    pub references: Vec<RefSig>,
    /// Where the C and C++ functions shown are declared, when elsewhere ([`declarations`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub declarations: Vec<declarations::Declaration>,
    pub pointers: Vec<Pointer>,
    /// Tokens of the files the shown code comes from, read whole (when savings are shown).
    pub whole_files_tokens: Option<usize>,
    /// How strongly the code shown matches the question, in [0, 1] (see
    /// [`crate::engine::match_strength`]): what a hook weighs before injecting an answer.
    pub confidence: f32,
    /// Whether the question names one of the repository's identifiers or files.
    pub names_repo: bool,
    /// Whether the code matches the question ([`crate::matching`]); when not, the answer says
    /// so first and lists the nearest definitions instead of a budget of unrelated code.
    pub matched: bool,
    /// The ranking behind the answer (only when asked for: `Query::explain`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranking: Vec<RankedNode>,
}

/// One ranked node with its per-signal ranks, for explaining an answer.
#[derive(Debug, Clone, Serialize)]
pub struct RankedNode {
    pub id: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f32,
    pub ranks: crate::rank::SignalRanks,
    pub probability: Option<f32>,
}

pub fn explain(g: &Graph, ranked: &[Ranked], n: usize) -> Vec<RankedNode> {
    ranked
        .iter()
        .take(n)
        .map(|r| {
            let def = g.def(r.node);
            RankedNode {
                id: node_id(g, r.node),
                path: g.file_of(r.node).path.clone(),
                start_line: def.start_line,
                end_line: def.end_line,
                score: r.score,
                ranks: r.ranks,
                probability: r.probability,
            }
        })
        .collect()
}

/// The map: files of the best-ranked nodes, most relevant first, with those nodes' names.
pub fn map_entries(g: &Graph, ranked: &[Ranked], max_files: usize) -> Vec<MapEntry> {
    let mut files: Vec<(u32, Vec<(String, u32)>)> = Vec::new();
    for r in ranked.iter().take(60) {
        let file = g.nodes[r.node as usize].file;
        let def = g.def(r.node);
        let pos = match files.iter().position(|(f, _)| *f == file) {
            Some(i) => i,
            None if files.len() < max_files => {
                files.push((file, Vec::new()));
                files.len() - 1
            }
            None => continue,
        };
        let entry = &mut files[pos];
        if entry.1.len() < MAP_NAMES_PER_FILE {
            entry.1.push((def.qualified_name.clone(), def.start_line));
        }
    }
    files
        .into_iter()
        .map(|(f, names)| MapEntry {
            path: g.files[f as usize].path.clone(),
            names,
        })
        .collect()
}

fn render_map(map: &[MapEntry]) -> String {
    let mut s = String::from("## Map (most relevant files first)\n");
    for e in map {
        let names: Vec<String> = e.names.iter().map(|(n, l)| format!("{n}:{l}")).collect();
        s.push_str(&format!("- {} — {}\n", e.path, names.join(", ")));
    }
    s
}

/// Definitions the shown code calls or names that are not shown themselves.
pub fn referenced(
    g: &Graph,
    sources: &Sources,
    lines: &LineIndex,
    blocks: &[Block],
    max: usize,
) -> Vec<RefSig> {
    let shown: HashSet<u32> = blocks.iter().map(|b| b.node).collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for b in blocks {
        for t in g.targets(
            b.node,
            &[EdgeKind::Calls, EdgeKind::References, EdgeKind::Inherits],
        ) {
            if out.len() >= max {
                return out;
            }
            if shown.contains(&t) || !seen.insert(t) {
                continue;
            }
            let def = g.def(t);
            out.push(RefSig {
                id: node_id(g, t),
                path: g.file_of(t).path.clone(),
                line: def.start_line,
                signature: {
                    let file = g.nodes[t as usize].file;
                    let src = &sources[file as usize];
                    let starts = lines.starts(file, src);
                    crate::pack::block::written_signature(g, src, &starts, t).join("\n")
                },
            });
        }
    }
    out
}

/// How much an answer shows around and of its code: at most this many map files, referenced
/// signatures, declarations and pointers, and this many of the selection's blocks. Rendering
/// shows what the frame allows; fitting the budget is packing's ([`crate::pack::fit_frame`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub map: usize,
    pub refs: usize,
    pub declarations: usize,
    pub pointers: usize,
    pub blocks: usize,
}

impl Frame {
    /// The frame a budget buys: one map file, reference and pointer per 1000 tokens (at most
    /// 8), never fewer than the floors, and every block. Every token of frame is a token less
    /// of code, and code is what holds a fix: a denser frame measured worse at every budget,
    /// a sparser one lost the map's pointers to the files the code did not reach. Declarations
    /// (C and C++ only) take up to half of the referenced signatures' lines rather than lines
    /// of their own, for the same reason.
    pub fn for_budget(budget: usize) -> Frame {
        let size = |max: usize, min: usize| {
            if budget == 0 {
                max
            } else {
                (budget / 1000).clamp(min, max)
            }
        };
        Frame {
            map: size(MAP_FILES, MIN_MAP_FILES),
            refs: size(MAX_REFERENCED, MIN_REFERENCES),
            declarations: size(MAX_REFERENCED, MIN_REFERENCES) / 2,
            pointers: size(crate::pack::MAX_POINTERS, MIN_REFERENCES),
            blocks: usize::MAX,
        }
    }
}

pub struct RenderInput<'a> {
    pub g: &'a Graph,
    pub sources: &'a Sources,
    /// The sources' line starts, computed once per file.
    pub lines: &'a LineIndex,
    pub ranked: &'a [Ranked],
    pub selection: Selection,
    pub frame: Frame,
    pub provenance: Provenance,
    /// The budget the answer was asked for (0 = no cap), as the answer reports it.
    pub budget: usize,
    pub enc: Encoding,
    pub show_savings: bool,
    /// Nodes the reader saw earlier whose code changed since: their blocks say so.
    pub changed: &'a HashSet<u32>,
}

/// The line above a block whose node changed since the reader saw it.
pub const CHANGED_LINE: &str = "⋮ changed since shown earlier in this session\n";

/// The answer's code: the blocks of each file together under one heading, in line order (a
/// `⋮` line between two), the files in the order of their first block. One heading and one
/// fence per file instead of per block: headings and fences were 12 % of a 4000-token answer.
fn code_text(g: &Graph, blocks: &[Block], changed: &HashSet<u32>) -> String {
    let mut files: Vec<(u32, Vec<&Block>)> = Vec::new();
    for b in blocks {
        let file = g.nodes[b.node as usize].file;
        match files.iter_mut().find(|(f, _)| *f == file) {
            Some((_, of_file)) => of_file.push(b),
            None => files.push((file, vec![b])),
        }
    }
    let mut s = String::new();
    for (file, mut of_file) in files {
        of_file.sort_by_key(|b| {
            let def = g.def(b.node);
            (def.start_line, std::cmp::Reverse(def.end_line))
        });
        let f = &g.files[file as usize];
        s.push_str(&file_opening(&f.path, f.lang));
        for (i, b) in of_file.iter().enumerate() {
            if changed.contains(&b.node) {
                s.push_str(CHANGED_LINE);
            } else if i > 0 {
                s.push_str(BETWEEN_BLOCKS);
            }
            s.push_str(&b.text);
        }
        s.push_str(FENCE_CLOSE);
    }
    s
}

/// What follows the code: referenced signatures, declarations, pointers.
struct AfterCode {
    refs: Vec<RefSig>,
    declared: Vec<declarations::Declaration>,
    pointers: Vec<Pointer>,
}

fn compose(
    p: &Provenance,
    tokens: usize,
    map: &str,
    code: &str,
    after: &AfterCode,
    savings: Option<(usize, usize)>,
) -> String {
    let AfterCode {
        refs,
        declared,
        pointers,
    } = after;
    let mut s = format!(
        "fittok · {} · {} · semantic {:.0}%{} · {} tokens\n{}\n\n",
        p.repo,
        p.freshness,
        p.semantic_coverage * 100.0,
        p.semantic_note
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default(),
        tokens,
        NOTE
    );
    if !p.already_shown.is_empty() {
        s.push_str(&format!(
            "Relevant but shown earlier in this session, so not repeated (expand to see again): {}\n\n",
            p.already_shown.join(", ")
        ));
    }
    s.push_str(map);
    if !code.is_empty() {
        s.push_str("\n## Code\n");
        s.push_str(code);
    } else if p.files == 0 {
        s.push_str(
            "\nThis folder holds no source file fittok reads: nothing to answer from. Ask in a \
             repository, or name one (`fittok query PATH QUESTION`).\n",
        );
    } else {
        s.push_str("\nNo code in this repository matches the question.\n");
    }
    if !refs.is_empty() {
        s.push_str("\n## Referenced definitions\n");
        for r in refs {
            let mut lines = r.signature.lines();
            let first = lines.next().unwrap_or_default();
            s.push_str(&format!("- {}:{} {}\n", r.path, r.line, first));
            for l in lines {
                s.push_str(&format!("  {l}\n"));
            }
        }
    }
    if !declared.is_empty() {
        s.push_str("\n## Declarations of the functions shown\n");
        for d in declared {
            let mut lines = d.text.iter();
            let first = lines.next().map(|l| l.trim()).unwrap_or_default();
            s.push_str(&format!("- {}:{} {}\n", d.path, d.line, first));
            for l in lines {
                s.push_str(&format!("  {}\n", l.trim_end()));
            }
        }
    }
    if !pointers.is_empty() {
        s.push_str("\n## Not shown (expand by id)\n");
        for p in pointers {
            s.push_str(&format!("→ {} (~{} tokens)\n", p.id, p.tokens));
        }
    }
    if let Some((shown, whole)) = savings
        && whole > shown
    {
        s.push_str(&format!(
            "\nfittok: {shown} tokens instead of {whole} for reading these files whole (−{:.0}%)\n",
            100.0 * (1.0 - shown as f64 / whole as f64)
        ));
    }
    s
}

/// Renders the answer within `input.frame`. The header states the text's own token count, so
/// the text is re-rendered until that count is a fixed point.
pub fn answer(input: RenderInput) -> Answer {
    let RenderInput {
        g,
        sources,
        lines,
        ranked,
        selection,
        frame,
        provenance,
        budget,
        enc,
        show_savings,
        changed,
    } = input;
    let mut blocks = selection.blocks;
    // References and the files read whole are those of every selected block, whatever the
    // frame keeps of them.
    let map = map_entries(g, ranked, frame.map);
    let declared = declarations::declarations(g, sources, &blocks, frame.declarations);
    let refs = referenced(
        g,
        sources,
        lines,
        &blocks,
        frame.refs.saturating_sub(declared.len()),
    );
    let pointers: Vec<Pointer> = selection
        .pointers
        .iter()
        .take(frame.pointers)
        .map(|&(n, t)| Pointer {
            id: node_id(g, n),
            tokens: t,
        })
        .collect();
    let files: BTreeMap<u32, ()> = blocks
        .iter()
        .map(|b| (g.nodes[b.node as usize].file, ()))
        .collect();
    // Reading the shown files whole would cost this much: measured only when it is shown.
    let whole_files_tokens: Option<usize> = show_savings.then(|| {
        files
            .keys()
            .map(|&f| count(enc, &String::from_utf8_lossy(&sources[f as usize])))
            .sum()
    });
    blocks.truncate(frame.blocks);
    let mut tokens = 0;
    let mut text = String::new();
    let map_text = render_map(&map);
    let code = code_text(g, &blocks, changed);
    let after = AfterCode {
        refs,
        declared,
        pointers,
    };
    for _ in 0..4 {
        let savings = whole_files_tokens.map(|whole| (tokens, whole));
        text = compose(&provenance, tokens, &map_text, &code, &after, savings);
        let measured = count(enc, &text);
        if measured == tokens {
            break;
        }
        tokens = measured;
    }
    let nodes = blocks
        .iter()
        .map(|b| {
            let def = g.def(b.node);
            AnswerNode {
                id: node_id(g, b.node),
                path: g.file_of(b.node).path.clone(),
                start_line: def.start_line,
                end_line: def.end_line,
                kind: def.kind.name().to_string(),
                name: def.qualified_name.clone(),
                mode: b.mode,
                tokens: b.tokens,
                score: b.score,
                version: crate::index::node_version(g, sources, b.node),
                changed: changed.contains(&b.node),
            }
        })
        .collect();
    // Members of a container shown whole were shown too, though not as blocks of their own.
    let mut inside_whole = Vec::new();
    let mut stack: Vec<u32> = blocks
        .iter()
        .filter(|b| b.mode == Mode::Whole)
        .flat_map(|b| g.members(b.node))
        .collect();
    while let Some(m) = stack.pop() {
        inside_whole.push(ShownId {
            id: node_id(g, m),
            version: crate::index::node_version(g, sources, m),
        });
        stack.extend(g.members(m));
    }
    Answer {
        text,
        tokens,
        budget,
        provenance,
        map,
        nodes,
        inside_whole,
        references: after.refs,
        declarations: after.declared,
        pointers: after.pointers,
        whole_files_tokens,
        confidence: 0.0,
        names_repo: false,
        matched: true,
        ranking: Vec::new(),
    }
}
