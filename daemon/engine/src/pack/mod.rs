//! Packing: ranked nodes → the blocks that fit the budget, each whole, as a skeleton, cut to
//! its head or as a window; the rest as `→ id` pointers. Between [`crate::rank`] (which knows
//! nothing of tokens) and [`crate::render`] (which lays the blocks out).
//!
//! Invariants: the blocks' tokens never exceed the budget given; a node never appears twice,
//! nor inside a definition already shown whole (shown whole after its parts, it takes their
//! place), nor once earlier blocks show all its lines; a node bigger than the per-node cap is shown
//! cut (head of a function, outline of a container), never dropped for its size; if anything
//! eligible fits, something is returned.

use std::collections::{HashMap, HashSet};

use crate::index::Sources;
use crate::lines::LineIndex;
use crate::link::{Graph, dir_of};
use crate::model::DefKind;
use crate::rank::Ranked;
use crate::tokens::{Encoding, count};
use block::Mode;
use ctx::{Ctx, Drawn};

pub mod block;
mod budget;
mod comments;
mod ctx;
mod density;

pub use budget::{first_code_budget, fit_answer, fit_frame};
pub use density::DensityOrder;

/// At most this many `→ id` pointers follow the blocks.
pub const MAX_POINTERS: usize = 8;

/// Nodes scoring below this fraction of the best are past the relevance cliff: with no
/// budget, they are not shown.
pub const CLIFF: f32 = 0.4;
/// Nodes scoring within this fraction of the best are near-ties: they are interleaved by
/// directory so that a question touching several areas gets each of them early. Below it,
/// rank order rules (interleaving further down measured worse: single-area answers lose
/// their second and third best nodes to other directories' weak ones).
pub const ROUND_ROBIN_BAND: f32 = 0.7;
/// At most this many ranked nodes are looked at.
const MAX_CONSIDERED: usize = 250;
/// With no budget, one node's block may take this many tokens before it is cut.
const UNCAPPED_NODE_CAP: usize = 3000;
/// With no budget, at most this many blocks.
const UNCAPPED_MAX_BLOCKS: usize = 24;

/// The best-ranked nodes whose files compete for a header.
const HEADER_POOL: usize = 30;
/// With no budget, the headers of this many files, each up to this many tokens.
const UNCAPPED_HEADERS: usize = 2;
const UNCAPPED_HEADER_CAP: usize = 400;

/// A budget below this shows no file header: its one header (imports, ≤ 100 tokens at 1500) is
/// worth less than the code it displaces.
const NO_HEADERS_UNDER: usize = 2000;
/// Past the headers a budget buys, the next file's header is shown too when the whole of it
/// costs at most budget/`CHEAP_HEADER_DIVISOR` tokens (100 at 4000): a short import list is
/// where a fix adds the name it uses, for the price of a few lines; a higher ceiling lets
/// longer headers displace code.
const CHEAP_HEADER_DIVISOR: usize = 40;
/// The smallest per-node cap after the first blocks, in tokens.
const REST_CAP_FLOOR: usize = 400;
/// The smallest cap of the first blocks, in tokens (never more than half the budget). A
/// quarter of a small budget is too little to show even a medium function whole: at 1500
/// tokens the best node got 375 and was cut. The floor matters only for small budgets; at
/// 4000 a quarter is already more.
const FIRST_CAP_FLOOR: usize = 500;

/// How much of the budget one node may take: the first `first_n` blocks up to
/// budget/`first_divisor` (at least [`FIRST_CAP_FLOOR`]), later ones up to
/// budget/`rest_divisor` (`FITTOK_NODE_CAPS` sets it, for tuning).
///
/// Later blocks get a smaller cap than the first: less confident nodes shown as excerpts let
/// more candidates in, while the first, most likely, are shown whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeCaps {
    pub first_divisor: usize,
    pub rest_divisor: usize,
    pub first_n: usize,
}

impl Default for NodeCaps {
    fn default() -> NodeCaps {
        NodeCaps {
            first_divisor: 4,
            rest_divisor: 8,
            first_n: 2,
        }
    }
}

/// Packing's tuning knobs (see [`crate::Config`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    pub node_caps: NodeCaps,
    /// How many files' headers an answer shows (`FITTOK_HEADERS`); `None`: one per 2000
    /// tokens of budget (see [`header_files`]).
    pub headers: Option<usize>,
    /// How a capped answer orders the learned model's candidates (`FITTOK_DENSITY`); `None`:
    /// in rank order.
    pub density: Option<DensityOrder>,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            node_caps: NodeCaps::default(),
            headers: None,
            density: Some(DensityOrder::default()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Block {
    pub node: u32,
    pub mode: Mode,
    pub text: String,
    pub tokens: usize,
    pub score: f32,
}

#[derive(Clone)]
pub struct Selection {
    pub blocks: Vec<Block>,
    /// Relevant nodes not shown, best first, with their whole-block token loads.
    pub pointers: Vec<(u32, usize)>,
}

/// Directory round-robin: one node from each directory (in order of each directory's best
/// node) before any directory gets a second, so multi-facet questions reach several areas.
fn round_robin(g: &Graph, ranked: &[Ranked]) -> Vec<Ranked> {
    let mut buckets: Vec<(String, Vec<Ranked>)> = Vec::new();
    for r in ranked {
        let dir = dir_of(&g.file_of(r.node).path).to_string();
        match buckets.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, b)) => b.push(*r),
            None => buckets.push((dir, vec![*r])),
        }
    }
    let mut out = Vec::with_capacity(ranked.len());
    let mut round = 0;
    while out.len() < ranked.len() {
        for (_, b) in &buckets {
            if let Some(r) = b.get(round) {
                out.push(*r);
            }
        }
        round += 1;
    }
    out
}

/// The node standing for a whole file.
fn file_node(g: &Graph, node: u32) -> Option<u32> {
    let file = g.nodes[node as usize].file;
    let defs = &g.files[file as usize].definitions;
    (0..defs.len() as u32)
        .find(|&d| defs[d as usize].kind == DefKind::File)
        .map(|d| g.node_id(file, d))
}

/// Which files show their header beside their first block.
struct HeaderFiles {
    /// Files whose header is shown, cut to the header cap if need be.
    full: HashSet<u32>,
    /// The next file by score: its header is shown only whole and within
    /// budget/[`CHEAP_HEADER_DIVISOR`].
    cheap: Option<u32>,
}

/// The files whose header (what precedes the first definition: imports, module docs,
/// constants) is shown with their first block: the ones holding most of the score of the best
/// `HEADER_POOL` ranked nodes, one per 2000 tokens of code budget (rounded; none under
/// [`NO_HEADERS_UNDER`], two with no budget). A fix often touches the imports, and code reads
/// differently once one knows what is in scope. Files chosen by score held more fixes than
/// the first blocks' files. [`Tuning::headers`] overrides the count.
fn header_files(
    g: &Graph,
    ranked: &[Ranked],
    budget: usize,
    headers: Option<usize>,
) -> HeaderFiles {
    let count = headers.unwrap_or(if budget == 0 {
        UNCAPPED_HEADERS
    } else if budget < NO_HEADERS_UNDER {
        0
    } else {
        (budget + 1000) / 2000
    });
    let mut mass: HashMap<u32, f32> = HashMap::new();
    for r in ranked.iter().take(HEADER_POOL) {
        *mass.entry(g.nodes[r.node as usize].file).or_default() += r.score;
    }
    let mut files: Vec<(u32, f32)> = mass.into_iter().collect();
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut files = files.into_iter().map(|(f, _)| f);
    let full = files.by_ref().take(count).collect();
    let cheap = if budget >= NO_HEADERS_UNDER {
        files.next()
    } else {
        None
    };
    HeaderFiles { full, cheap }
}

/// Indices (ascending) of the blocks other than file headers whose lines `node` holds, in its
/// file.
fn blocks_within(g: &Graph, blocks: &[Block], node: u32) -> Vec<usize> {
    let file = g.nodes[node as usize].file;
    let def = g.def(node);
    blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            let d = g.def(b.node);
            b.node != node
                && g.nodes[b.node as usize].file == file
                && d.kind != DefKind::File
                && def.start_line <= d.start_line
                && d.end_line <= def.end_line
        })
        .map(|(i, _)| i)
        .collect()
}

fn ancestors(g: &Graph, node: u32) -> impl Iterator<Item = u32> + '_ {
    std::iter::successors(g.parent(node), move |&p| g.parent(p))
}

/// What packing reads: the snapshot, how tokens are counted, the question's weighted terms and
/// the lines it cites (both place windows in long functions) and the tuning.
pub struct Packer<'a> {
    pub g: &'a Graph,
    pub sources: &'a Sources,
    pub lines: &'a LineIndex,
    pub enc: Encoding,
    pub terms: &'a HashMap<String, f32>,
    /// Lines the question points at, (file, line), sorted: a traceback's frame, a `path:line`.
    pub cited: &'a [(u32, u32)],
    pub tuning: &'a Tuning,
}

impl<'a> Packer<'a> {
    /// Selects blocks for `ranked` within `budget` tokens (0 = no cap: the cliff decides).
    pub fn select(&self, ranked: &[Ranked], budget: usize) -> Selection {
        select(self, ranked, budget)
    }
}

/// The blocks chosen so far and what they show.
#[derive(Default)]
struct Picked {
    blocks: Vec<Block>,
    /// Nodes with a block of their own.
    shown: HashSet<u32>,
    /// Nodes shown whole: their descendants are shown too.
    whole: HashSet<u32>,
    /// Per file, the lines the blocks show.
    displayed: HashMap<u32, HashSet<u32>>,
    used: usize,
}

impl Picked {
    /// `node`'s block `drawn`, placed at `at` among the blocks.
    fn insert(&mut self, g: &Graph, at: usize, node: u32, drawn: Drawn, score: f32) {
        self.used += drawn.tokens;
        self.shown.insert(node);
        if drawn.mode == Mode::Whole {
            self.whole.insert(node);
        }
        self.displayed
            .entry(g.nodes[node as usize].file)
            .or_default()
            .extend(drawn.lines);
        self.blocks.insert(
            at,
            Block {
                node,
                mode: drawn.mode,
                text: drawn.text,
                tokens: drawn.tokens,
                score,
            },
        );
    }

    fn push(&mut self, g: &Graph, node: u32, drawn: Drawn, score: f32) {
        self.insert(g, self.blocks.len(), node, drawn, score);
    }

    /// Whether `node` is shown: as a block, or inside one shown whole.
    fn holds(&self, g: &Graph, node: u32) -> bool {
        self.shown.contains(&node) || ancestors(g, node).any(|a| self.whole.contains(&a))
    }
}

fn select(p: &Packer<'_>, ranked: &[Ranked], budget: usize) -> Selection {
    let Packer {
        g,
        sources,
        lines,
        enc,
        terms,
        cited,
        tuning,
    } = *p;
    let mut cx = Ctx {
        g,
        sources,
        enc,
        lines,
        cited,
        introduced: HashSet::new(),
        opening_tokens: HashMap::new(),
        between_tokens: count(enc, crate::layout::BETWEEN_BLOCKS),
    };
    let Some(top) = ranked.first().map(|r| r.score) else {
        return Selection {
            blocks: Vec::new(),
            pointers: Vec::new(),
        };
    };
    let capped = budget > 0;
    let caps = tuning.node_caps;
    let first_cap = (budget / caps.first_divisor)
        .max(FIRST_CAP_FLOOR.min(budget / 2))
        .max(64);
    let node_cap_at = |shown: usize| {
        if !capped {
            UNCAPPED_NODE_CAP
        } else if shown < caps.first_n {
            first_cap
        } else {
            // Later blocks are cut smaller, but not below what an excerpt needs to say anything.
            (budget / caps.rest_divisor)
                .max(REST_CAP_FLOOR)
                .min(first_cap)
        }
    };
    let count_above = |f: f32| {
        ranked
            .iter()
            .take_while(|r| r.score >= top * f)
            .count()
            .max(1)
    };
    let in_band = count_above(ROUND_ROBIN_BAND);
    let above_cliff = count_above(CLIFF).max(in_band);
    let mut order = round_robin(g, &ranked[..in_band]);
    let end = if capped {
        MAX_CONSIDERED.min(ranked.len())
    } else {
        above_cliff
    };
    order.extend(ranked[in_band..end.max(in_band)].iter());
    // A budget buys the most expected relevance per token (uncapped, the cliff decides).
    if capped && let Some(d) = &tuning.density {
        density::reorder(g, &mut order, d);
    }

    let mut picked = Picked::default();
    // Nodes all of whose lines the blocks show.
    let mut covered: HashSet<u32> = HashSet::new();
    let header_files = header_files(g, ranked, budget, tuning.headers);
    // The first container met that is too big for its outline: its head is shown only if
    // nothing else is.
    let mut skipped_container: Option<(u32, f32)> = None;
    for r in order.iter().take(MAX_CONSIDERED) {
        if !capped && picked.blocks.len() >= UNCAPPED_MAX_BLOCKS {
            break;
        }
        let remaining = if capped {
            budget.saturating_sub(picked.used)
        } else {
            usize::MAX
        };
        if capped && remaining < 40 {
            break;
        }
        let node = r.node;
        if picked.holds(g, node) {
            continue;
        }
        let file = g.nodes[node as usize].file;
        // Earlier blocks show all its lines (imports under its file's head, a field block in
        // its class's outline): it is shown.
        if let Some(d) = picked.displayed.get(&file)
            && cx.all_displayed(node, d)
        {
            covered.insert(node);
            continue;
        }
        let def = g.def(node);
        let is_file = def.kind == DefKind::File;
        let has_shown_members = (def.kind.is_container() || is_file)
            && g.members(node).iter().any(|c| picked.shown.contains(c));
        let limit = node_cap_at(picked.blocks.len()).min(remaining);
        let mut choice = None;
        // A file is shown as its outline: its definitions are nodes of their own.
        if !has_shown_members && !is_file {
            // Earlier blocks of lines this one holds (a nested function, a field region, a
            // constant inside a function) would be shown twice: its whole body takes their
            // place and their tokens.
            let inner = blocks_within(g, &picked.blocks, node);
            if inner.is_empty() {
                choice = Some(cx.block(node, Mode::Whole)).filter(|d| d.tokens <= limit);
            } else {
                let freed: usize = inner.iter().map(|&i| picked.blocks[i].tokens).sum();
                let limit = node_cap_at(picked.blocks.len() - inner.len())
                    .min(remaining.saturating_add(freed));
                let at = inner[0];
                // It is its file's first block when the first it replaces was.
                let first_of_file = !picked.blocks[..at]
                    .iter()
                    .any(|b| g.nodes[b.node as usize].file == file);
                if first_of_file {
                    cx.introduced.remove(&file);
                }
                let drawn = cx.block(node, Mode::Whole);
                cx.introduced.insert(file);
                if drawn.tokens <= limit {
                    let score = inner
                        .iter()
                        .map(|&i| picked.blocks[i].score)
                        .fold(r.score, f32::max);
                    for &i in inner.iter().rev() {
                        picked.blocks.remove(i);
                    }
                    picked.used -= freed;
                    picked.insert(g, at, node, drawn, score);
                    continue;
                }
            }
        }
        if choice.is_none() && (def.kind.is_container() || is_file) {
            choice = Some(cx.block(node, Mode::Skeleton)).filter(|d| d.tokens <= limit);
        }
        if choice.is_none() && (limit >= 120 || picked.blocks.is_empty()) {
            if !def.kind.is_container() && !is_file {
                choice = cx.window_within(node, limit, terms);
            }
            // A container too big for its outline would show its first lines: its doc, fields
            // and first member, whatever the question. Such heads cost many tokens and seldom
            // hold what a question needs; its members rank on their own, and it becomes a
            // pointer. Not even as the first block: only when nothing else can be shown is the
            // first such container's head the answer (below).
            if def.kind.is_container() {
                skipped_container.get_or_insert((node, r.score));
            } else if choice.is_none() {
                choice = cx.head_within(node, limit);
            }
        }
        let Some(drawn) = choice else {
            continue;
        };
        picked.push(g, node, drawn, r.score);
        cx.introduced.insert(file);
        // The code a fix edits lives with its file's imports: show them for the first files.
        let full_header = header_files.full.contains(&file);
        if !is_file
            && (full_header || header_files.cheap == Some(file))
            && let Some(f) = file_node(g, node).filter(|f| !picked.shown.contains(f))
        {
            let left = if capped {
                budget.saturating_sub(picked.used)
            } else {
                usize::MAX
            };
            let header = if full_header {
                let cap = if capped {
                    (budget / 16).max(100)
                } else {
                    UNCAPPED_HEADER_CAP
                };
                cx.header_within(f, cap.min(left))
            } else {
                let cap = budget / CHEAP_HEADER_DIVISOR;
                cx.whole_header(f).filter(|h| h.tokens <= cap.min(left))
            };
            if let Some(header) = header {
                picked.push(g, f, header, r.score);
            }
        }
    }

    if picked.blocks.is_empty()
        && let Some((node, score)) = skipped_container
    {
        // The first block's cap, within the budget, as it would have been in the loop.
        let limit = node_cap_at(0).min(if capped { budget } else { usize::MAX });
        if let Some(head) = cx.head_within(node, limit) {
            picked.push(g, node, head, score);
        }
    }

    let mut pointers = Vec::new();
    for r in ranked.iter().take(MAX_CONSIDERED) {
        if pointers.len() >= MAX_POINTERS {
            break;
        }
        if picked.holds(g, r.node) || covered.contains(&r.node) {
            continue;
        }
        pointers.push((r.node, cx.block(r.node, Mode::Whole).tokens));
    }
    Selection {
        blocks: picked.blocks,
        pointers,
    }
}

#[cfg(test)]
mod tests;
