//! Stage 5: rank every node against a question and fuse the signals.
//!
//! Each signal ranks nodes on its own: content BM25, summary BM25, semantic similarity (when
//! vectors exist), PageRank personalised on the lexical and semantic hits, and the reach of the
//! definitions the question names ([`reach`]). Reciprocal rank
//! fusion (k = 60) combines ranks, so no signal's score scale can dominate. Tests and docs —
//! Markdown sections, and constants that are mostly string literal (help text, templates) —
//! are demoted unless the question asks for them.

pub mod features;
mod history;
pub mod learned;
pub mod locations;
pub mod mentions;
pub mod quoted;
pub mod reach;

use crate::index::Index;
// A signal's ordering: positive scores, best first, at most a depth.
use crate::index::best_first as order;
use crate::index::pagerank::personalised;
use crate::link::Graph;
use crate::model::DefKind;

/// RRF's constant: ranks 1 and 10 differ by a factor of about 1.15, not 10.
const RRF_K: f32 = 60.0;
/// The constant of the rank-shaped scores the learned order is handed on with: the best 4
/// are near-ties, an uncapped answer ends after about 15.
const LEARNED_RANK_K: f32 = 10.0;
/// How much the fusion order still counts beside the learned one.
const FUSION_SHARE: f32 = 1.0;
/// How much the semantic order counts beside the learned one, when vectors exist: enough to
/// lift a paraphrase's answer, not so much that vectors outvote the model's own order (the
/// shares measured are in `bench/results/dev.md`, "the figures behind the constants").
const SEMANTIC_SHARE: f32 = 0.5;
/// Questions with more distinct terms than this are "long" (see the semantic signal).
const LONG_QUESTION_TERMS: usize = 40;

/// Whether a question is long enough that lexical evidence should decide alone.
pub fn is_long_question(terms: &[(String, f32)]) -> bool {
    terms.len() > LONG_QUESTION_TERMS
}
/// How much more the mention signal weighs in a long question. An issue's many words make its
/// content ranking broad (every paragraph, log line and version string votes), while what it
/// names — identifiers, paths, a traceback's lines — stays as specific as in a short question.
/// Short questions are ranked by the learned model and do not use it.
const LONG_QUESTION_MENTION_BOOST: f32 = 1.5;
/// How deep each signal's ranking goes into the candidate pool.
const SIGNAL_DEPTH: usize = 150;
/// Nodes from the personalised PageRank that join the pool (the best hits' neighbourhood).
/// Few: the walk's neighbours are evidence at one remove, and deeper or heavier graph ranks
/// displaced the lexical hits the question itself points to.
const GRAPH_DEPTH: usize = 15;

#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct SignalRanks {
    pub content: Option<u32>,
    pub summary: Option<u32>,
    pub semantic: Option<u32>,
    pub graph: Option<u32>,
    pub mention: Option<u32>,
    pub reach: Option<u32>,
    pub history: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Ranked {
    pub node: u32,
    pub score: f32,
    pub ranks: SignalRanks,
    /// The learned model's calibrated probability that the node is relevant, when the model
    /// ranked the node on its own evidence (no vectors joined, see `join_semantic`); `score`
    /// is then rank-shaped, see [`rank`].
    pub probability: Option<f32>,
}

/// Per-signal weights in the fusion (`FITTOK_RANK_WEIGHTS` sets them, for tuning; the
/// defaults are what measured best).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub content: f32,
    pub summary: f32,
    pub semantic: f32,
    pub graph: f32,
    pub mention: f32,
    pub reach: f32,
    /// The repository's history ([`history`]): definitions of the files past commits like the
    /// question changed. Off (0) by default: as a list of its own in the fusion it displaced
    /// lexical hits of long questions; the learned ranker reads the history as features of a
    /// candidate's file instead, where it helps.
    pub history: f32,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            content: 1.0,
            summary: 1.0,
            semantic: 1.0,
            graph: 0.3,
            mention: 1.0,
            reach: 1.0,
            history: 0.0,
        }
    }
}

/// Ranking's tuning knobs (see [`crate::Config`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    pub weights: Weights,
    /// Personalised PageRank: the unspread mass per out-edge its push may leave (see
    /// [`crate::index::pagerank::PUSH_TOLERANCE`]).
    pub ppr_tolerance: f32,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            weights: Weights::default(),
            ppr_tolerance: crate::index::pagerank::PUSH_TOLERANCE,
        }
    }
}

/// What the question asks for beyond code.
#[derive(Debug, Clone, Copy, Default)]
pub struct Intent {
    pub tests: bool,
    pub docs: bool,
    /// Examples, benchmarks or demos (see [`crate::model::is_usage_path`]).
    pub usage: bool,
}

impl Intent {
    /// The part of `question` that says what it asks for. A short question that names tests or
    /// docs asks for them. A long one (an issue) names them in passing — "I tested", a test in
    /// the reproduction, a pytest issue about test collection — so there only its title, the
    /// one deliberate line, says what it is about.
    pub fn asked(question: &str) -> &str {
        if question.len() < 400 {
            question
        } else {
            features::title_of(question)
        }
    }

    pub fn of(question: &str) -> Intent {
        let lower = Intent::asked(question).to_lowercase();
        let has = |set: &[&str]| {
            lower
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| set.contains(&w))
        };
        Intent {
            tests: has(&[
                "test", "tests", "testing", "spec", "specs", "unittest", "fixture", "fixtures",
            ]),
            docs: has(&[
                "doc",
                "docs",
                "documentation",
                "readme",
                "guide",
                "documented",
            ]),
            usage: has(&[
                "example",
                "examples",
                "demo",
                "demos",
                "bench",
                "benches",
                "benchmark",
                "benchmarks",
            ]),
        }
    }
}

/// Where the personalised walk starts: each signal's best `WALK_SEEDS` nodes, weighted by
/// 1/rank and summed over the signals. The mention signal seeds it too: a definition the
/// question names (or whose cited line it quotes) is the surest evidence there is, and the
/// code it calls is often where the fix goes, yet as one list among three it weighed little
/// and the code writing a named identifier (its users, found in the content index) not at all.
fn walk_seeds<'a>(n: usize, lists: impl IntoIterator<Item = &'a [u32]>) -> Vec<f32> {
    let mut teleport = vec![0.0f32; n];
    for list in lists {
        for (r, &node) in list.iter().take(WALK_SEEDS).enumerate() {
            teleport[node as usize] += 1.0 / (r as f32 + 1.0);
        }
    }
    teleport
}

/// How many of each signal's best nodes seed the personalised walk.
const WALK_SEEDS: usize = 30;

/// Which model orders the candidates.
///
/// The learned model is trained on short commit messages and on whole bug reports, so `Auto`
/// gives it questions of both shapes; on unseen bug reports it held more of their fixes than
/// fusion at both budgets (`bench/results/dev.md` keeps the comparison, and `--ranker fusion`
/// repeats it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ranker {
    /// The learned ranker in repositories of a language it ranks ([`learned::Model::knows`];
    /// with vectors, the semantic order joins the model's at [`SEMANTIC_SHARE`]: the model
    /// never saw them in training); reciprocal rank fusion in other languages, and for
    /// questions no node matches lexically (only vectors can rank a paraphrase).
    #[default]
    Auto,
    /// The learned ranker ([`learned`]) over every signal's features, blended with the fusion
    /// order; reciprocal rank fusion when the shipped model does not fit this build.
    Learned,
    /// Reciprocal rank fusion of the signals (k = 60), with tests and docs demoted. Regions
    /// (code outside definitions) are left to the learned ranker: fusion cannot weigh a
    /// region's lexical hit against its definitions', and fused in they cost recall.
    Fusion,
}

/// What a question is ranked with beside the repository's graph and lexical indexes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Evidence<'a> {
    /// Cosine similarity per node, for the nodes that have vectors (NaN = no vector yet).
    pub semantic: Option<&'a [f32]>,
    /// Per file of the graph, the score past commits resembling the question give it
    /// ([`crate::history::History::file_scores`]); zero for files no such commit changed.
    pub history: Option<&'a [f32]>,
    /// Lines the question points at beyond its own text, (file, line), sorted: what the
    /// commits it names added ([`crate::history::found_again`]). Their definitions count as
    /// named.
    pub cited: &'a [(u32, u32)],
}

/// Every signal's view of one question, before the candidates are ordered.
struct Signals<'a> {
    content: Vec<f32>,
    summary: Vec<f32>,
    mention: Vec<f32>,
    /// Personalised PageRank weighted by centrality (zeros when not run).
    graph: Vec<f32>,
    /// Semantic order, when the question uses it.
    semantic: Option<Vec<u32>>,
    /// What the history signal added to each node's fused score (after demotions).
    history_share: std::collections::HashMap<u32, f32>,
    /// The history's score per file, when the repository has history.
    history_files: Option<&'a [f32]>,
    /// The fused candidate pool: reciprocal rank fusion with demotions.
    fused: std::collections::HashMap<u32, Ranked>,
    intent: Intent,
    /// Whether any node matches the question's words or names (content, summary, mentions).
    lexical_evidence: bool,
}

fn signals<'a>(
    g: &Graph,
    ix: &Index,
    question: &str,
    terms: &[(String, f32)],
    evidence: Evidence<'a>,
    tuning: &Tuning,
) -> Signals<'a> {
    let semantic = evidence.semantic;
    let n = g.nodes.len();
    // One snapshot of the content index for both of its uses (a merge may swap it between).
    let content_index = ix.content.get();
    let content_scores = content_index.score(terms);
    let content = order(&content_scores, SIGNAL_DEPTH);
    let w = tuning.weights;
    let summary_scores = ix.summary.get().score(terms);
    let summary = order(&summary_scores, SIGNAL_DEPTH);
    let mut mention_scores = mentions::Mentions::of(question).scores(g, Some(&content_index));
    for node in locations::holders(g, evidence.cited, locations::MAX_CITED_HOLDERS) {
        let m = &mut mention_scores[node as usize];
        *m = m.max(mentions::NAMED);
    }
    // Mentions break ties by content relevance: a mentioned file's best functions come first.
    let mention_rank: Vec<f32> = mention_scores
        .iter()
        .zip(&content_scores)
        .map(|(m, c)| if *m > 0.0 { m * 1000.0 + c } else { 0.0 })
        .collect();
    let mention = order(&mention_rank, SIGNAL_DEPTH);
    // Each list holds only nodes that score above zero.
    let lexical_evidence = !(content.is_empty() && summary.is_empty() && mention.is_empty());
    // A long question (an issue with logs and tracebacks) is rich in words and names, and one
    // 256-token embedding of it is diluted: the semantic signal cost recall there at every
    // weight tried. A short question may be a paraphrase sharing no word with the code, which
    // only the semantic signal can bridge: there it ranks every node.
    let semantic = semantic.filter(|_| !is_long_question(terms)).map(|s| {
        let clean: Vec<f32> = s
            .iter()
            .map(|v| if v.is_finite() { v.max(0.0) } else { 0.0 })
            .collect();
        order(&clean, SIGNAL_DEPTH)
    });

    // Personalised PageRank from the signals' best hits (`walk_seeds`), over edges in both
    // directions: callers and callees of relevant code are relevant.
    let lists = [
        Some(&content),
        Some(&summary),
        semantic.as_ref(),
        Some(&mention),
    ];
    let teleport = walk_seeds(n, lists.into_iter().flatten().map(Vec::as_slice));
    let mut graph_rank = Vec::new();
    let mut graph = vec![0.0f32; n];
    if w.graph > 0.0 && teleport.iter().any(|&t| t > 0.0) {
        let ppr = personalised(&ix.walk, &teleport, tuning.ppr_tolerance);
        // Among equally reachable nodes, prefer the ones central to the whole graph.
        graph = ppr
            .iter()
            .zip(&ix.pagerank)
            .map(|(&p, g)| {
                if p > 0.0 {
                    p * (1.0 + (g * n as f32).ln_1p())
                } else {
                    0.0
                }
            })
            .collect();
        graph_rank = order(&graph, GRAPH_DEPTH);
    }

    let intent = Intent::of(question);
    let mut fused: std::collections::HashMap<u32, Ranked> = std::collections::HashMap::new();
    let mut add = |list: &[u32], depth: usize, weight: f32, set: fn(&mut SignalRanks, u32)| {
        for (r, &node) in list.iter().take(depth).enumerate() {
            let e = fused.entry(node).or_insert(Ranked {
                node,
                score: 0.0,
                ranks: SignalRanks::default(),
                probability: None,
            });
            e.score += weight / (RRF_K + r as f32 + 1.0);
            set(&mut e.ranks, r as u32 + 1);
        }
    };
    add(&content, SIGNAL_DEPTH, w.content, |s, r| {
        s.content = Some(r)
    });
    add(&summary, SIGNAL_DEPTH, w.summary, |s, r| {
        s.summary = Some(r)
    });
    if let Some(sem) = &semantic {
        add(sem, SIGNAL_DEPTH, w.semantic, |s, r| s.semantic = Some(r));
    }
    add(&graph_rank, GRAPH_DEPTH, w.graph, |s, r| s.graph = Some(r));
    let mention_weight = if is_long_question(terms) {
        w.mention * LONG_QUESTION_MENTION_BOOST
    } else {
        w.mention
    };
    add(&mention, SIGNAL_DEPTH, mention_weight, |s, r| {
        s.mention = Some(r)
    });
    // The code the named definitions call or contain that shares the question's words: a
    // question names the entry point, and the fix is often one call below it.
    let seeds = &mention[..mention.len().min(reach::SEEDS)];
    let reached = reach::reach(g, seeds, &content_scores, reach::DEPTH);
    add(&reached, reach::DEPTH, w.reach, |s, r| s.reach = Some(r));

    for r in fused.values_mut() {
        demote(g, r, intent, terms, mention_scores[r.node as usize]);
    }
    // The history's list joins last, demoted like the rest, so that what it added is known:
    // the learned model's fusion feature leaves it out (see `pool_features`).
    let history = match evidence.history {
        Some(files) if w.history > 0.0 => history::order(g, files, &content_scores),
        _ => Vec::new(),
    };
    let mut history_share = std::collections::HashMap::new();
    for (r, &node) in history.iter().take(history::DEPTH).enumerate() {
        let mut share = Ranked {
            node,
            score: w.history / (RRF_K + r as f32 + 1.0),
            ranks: SignalRanks::default(),
            probability: None,
        };
        demote(g, &mut share, intent, terms, mention_scores[node as usize]);
        let e = fused.entry(node).or_insert(Ranked {
            score: 0.0,
            ..share
        });
        e.score += share.score;
        e.ranks.history = Some(r as u32 + 1);
        history_share.insert(node, share.score);
    }
    Signals {
        lexical_evidence,
        content: content_scores,
        summary: summary_scores,
        mention: mention_scores,
        graph,
        semantic,
        history_share,
        history_files: evidence.history,
        fused,
        intent,
    }
}

/// Tests, examples and docs rank below code unless the question asks for them.
fn demote(g: &Graph, r: &mut Ranked, intent: Intent, terms: &[(String, f32)], mention: f32) {
    let def = g.def(r.node);
    let named = named_by_short_question(terms, mention);
    if def.is_test && !intent.tests && !named {
        r.score *= 0.3;
    }
    // Examples and benchmarks call the implementation, as tests do: they match a
    // question's words without holding what it asks about.
    if !def.is_test
        && !intent.usage
        && !named
        && crate::model::is_usage_path(&g.file_of(r.node).path)
    {
        r.score *= 0.3;
    }
    if (def.kind == DefKind::Section || def.is_prose) && !intent.docs {
        r.score *= 0.3;
    }
}

/// The language most of the repository's definitions are in (prose aside): what decides
/// whether the learned model knows the repository.
fn main_language(g: &Graph) -> Option<crate::model::Lang> {
    let mut counts: Vec<(crate::model::Lang, usize)> = Vec::new();
    for (f, file) in g.files.iter().enumerate() {
        if file.lang == crate::model::Lang::Markdown {
            continue;
        }
        let nodes = (g.file_start[f + 1] - g.file_start[f]) as usize;
        match counts.iter_mut().find(|(l, _)| *l == file.lang) {
            Some((_, n)) => *n += nodes,
            None => counts.push((file.lang, nodes)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|&(_, n)| n)
        .filter(|&(_, n)| n > 0)
        .map(|(lang, _)| lang)
}

fn sorted(mut out: Vec<Ranked>) -> Vec<Ranked> {
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.node.cmp(&b.node)));
    out
}

/// The features of every candidate of the pool, ordered by node.
fn pool_features(
    g: &Graph,
    ix: &Index,
    s: &Signals<'_>,
    question: &str,
    terms: &[(String, f32)],
) -> Vec<(u32, [f32; features::N])> {
    let mut candidates: Vec<u32> = s.fused.keys().copied().collect();
    candidates.sort_unstable();
    let ranks = s.fused.iter().map(|(&k, v)| (k, v.ranks)).collect();
    // The fusion feature leaves the semantic and history signals out: the model is trained
    // without vectors or history, and both reach its order through the fusion order it is
    // blended with (see `rank`).
    let rrf = s
        .fused
        .iter()
        .map(|(&k, v)| {
            let sem = v.ranks.semantic.map_or(0.0, |r| 1.0 / (RRF_K + r as f32));
            let hist = s.history_share.get(&k).copied().unwrap_or(0.0);
            (k, v.score - sem - hist)
        })
        .collect();
    // A one-line question is its own title, and its terms are the title's: no second pass.
    let title = features::title_of(question);
    let title_content = if title == question.trim() {
        std::borrow::Cow::Borrowed(s.content.as_slice())
    } else {
        std::borrow::Cow::Owned(
            ix.content
                .get()
                .score(&crate::index::bm25::query_terms(title)),
        )
    };
    let inputs = features::Inputs {
        g,
        pagerank: &ix.pagerank,
        content: &s.content,
        summary: &s.summary,
        mention: &s.mention,
        graph: &s.graph,
        ranks: &ranks,
        rrf: &rrf,
        intent: s.intent,
        question,
        terms,
        title_content: &title_content,
        history: s.history_files,
    };
    let xs = features::compute(&inputs, &candidates);
    candidates.into_iter().zip(xs).collect()
}

/// Whether a node with mention score `mention` is named outright by a short question: such
/// a question asks for it, test or not (a long issue names failing tests in passing).
fn named_by_short_question(terms: &[(String, f32)], mention: f32) -> bool {
    mention >= mentions::NAMED && !is_long_question(terms)
}

/// Ranks all nodes of `g` for `question`. `semantic` holds cosine similarities per node for
/// the nodes that have vectors (NaN or missing = no vector yet).
///
/// `terms` are the question's weighted query terms (`bm25::query_terms`), computed once by the
/// caller, which also uses them for the semantic decision and for excerpts.
///
/// With the learned ranker, candidates are ordered by the model's calibrated probability of
/// relevance, blended with the fusion order, and handed on as rank-shaped scores; when the
/// question uses the semantic signal, the semantic order joins in the same shape at
/// [`SEMANTIC_SHARE`] (the model never saw vectors in training).
pub fn rank(
    g: &Graph,
    ix: &Index,
    question: &str,
    terms: &[(String, f32)],
    evidence: Evidence<'_>,
    ranker: Ranker,
    tuning: &Tuning,
) -> Vec<Ranked> {
    if g.nodes.is_empty() {
        return Vec::new();
    }
    let s = signals(g, ix, question, terms, evidence, tuning);
    let model = match ranker {
        Ranker::Learned => learned::model(),
        // Questions short and long (issue texts are in its training data), in the languages
        // it ranks. With vectors the model still orders the lexical candidates and
        // semantics join its order afterwards: the model never saw vectors, and fused with
        // them instead it lost its own order's precision. A question with no lexical evidence
        // at all (a paraphrase) leaves the model only the candidates' shapes to go on;
        // semantics alone can rank there, and fusion lets them.
        Ranker::Auto if s.lexical_evidence => {
            learned::model().filter(|m| main_language(g).is_none_or(|lang| m.knows(lang)))
        }
        Ranker::Auto | Ranker::Fusion => None,
    };
    let Some(model) = model else {
        return sorted(
            s.fused
                .into_values()
                .filter(|r| g.def(r.node).kind != DefKind::Region)
                .collect(),
        );
    };
    // The model scores a test the question names as it would the same code outside a test.
    let is_test = features::index_of("is_test");
    let (nodes, mut xs): (Vec<u32>, Vec<[f32; features::N]>) =
        pool_features(g, ix, &s, question, terms)
            .into_iter()
            .unzip();
    for (node, x) in nodes.iter().zip(&mut xs) {
        if named_by_short_question(terms, s.mention[*node as usize])
            && let Some(i) = is_test
        {
            x[i] = 0.0;
        }
    }
    let scored: Vec<Ranked> = nodes
        .into_iter()
        .zip(model.probabilities(&xs))
        .map(|(node, score)| Ranked {
            node,
            score,
            ranks: s.fused[&node].ranks,
            probability: Some(score),
        })
        .collect();
    // Selection reads score ratios (near-ties within 70 % of the best are interleaved by
    // directory; an uncapped answer ends at 40 %), calibrated for fused ranks. A probability's
    // ratios mean something else, so the learned order is handed on as rank-shaped scores:
    // the same shape fusion gives a candidate every signal agrees on.
    let fusion_rank: std::collections::HashMap<u32, usize> =
        sorted(s.fused.values().copied().collect())
            .iter()
            .enumerate()
            .map(|(r, x)| (x.node, r))
            .collect();
    let mut scored: Vec<(Ranked, usize)> = sorted(scored)
        .into_iter()
        .enumerate()
        .map(|(r, mut x)| {
            let f = fusion_rank.get(&x.node).copied().unwrap_or(usize::MAX / 2);
            x.score = 1.0 / (LEARNED_RANK_K + r as f32 + 1.0)
                + FUSION_SHARE / (LEARNED_RANK_K + f as f32 + 1.0);
            (x, f)
        })
        .collect();
    // Where the two orders disagree evenly, fusion's decides: it is the one tuned on issue
    // texts, with tests and prose demoted.
    scored.sort_by(|(a, fa), (b, fb)| b.score.total_cmp(&a.score).then(fa.cmp(fb)));
    let scored: Vec<Ranked> = scored.into_iter().map(|(x, _)| x).collect();
    if s.semantic.is_none() {
        return scored;
    }
    // Semantics join in the learned order's own shape (k = 10), so selection reads the same
    // score ratios as without vectors: its near-tie band and cliff are ratios of the best score.
    let fused: Vec<Ranked> = scored
        .into_iter()
        .map(|mut x| {
            join_semantic(&mut x);
            x
        })
        .collect();
    sorted(fused)
}

/// Adds a learned candidate's semantic rank to its rank-shaped score. Signal ranks count from
/// 1: the same 1 / (K + 1) at the top as the learned term.
///
/// The model's probability leaves out what the vectors found, so it is no longer the
/// candidate's probability and is dropped: packing keeps this order rather than weighing a
/// partial probability against size.
fn join_semantic(x: &mut Ranked) {
    let sem = x
        .ranks
        .semantic
        .map_or(0.0, |k| 1.0 / (LEARNED_RANK_K + k as f32));
    x.score += SEMANTIC_SHARE * sem;
    x.probability = None;
}

/// The learned ranker's inputs for one question: every candidate with its features. For the
/// training script (`fittokd query --dump-features`).
pub fn candidate_features(
    g: &Graph,
    ix: &Index,
    question: &str,
    terms: &[(String, f32)],
    history: Option<&[f32]>,
    tuning: &Tuning,
) -> Vec<(u32, [f32; features::N])> {
    if g.nodes.is_empty() {
        return Vec::new();
    }
    let evidence = Evidence {
        semantic: None,
        history,
        cited: &[],
    };
    let s = signals(g, ix, question, terms, evidence, tuning);
    pool_features(g, ix, &s, question, terms)
}

#[cfg(test)]
mod tests;
