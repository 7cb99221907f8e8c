//! What the learned ranker sees of one candidate: every signal's score and rank, what the node
//! is, where it sits in the graph, how its file fares, and the question's shape.
//!
//! The list is fixed and named ([`NAMES`]): the training script reads the same names from
//! `fittokd query --dump-features`, and a model file names the features it was trained on, so
//! a model and a build that disagree are caught at load (see [`super::learned`]).

use std::collections::HashMap;

use crate::link::{EdgeKind, Graph};
use crate::model::DefKind;

/// Feature names, in vector order.
pub const NAMES: &[&str] = &[
    "content_score",
    "content_rel",
    "content_rr",
    "summary_score",
    "summary_rel",
    "summary_rr",
    "mention_score",
    "mention_rr",
    "graph_rel",
    "graph_rr",
    "rrf",
    "is_callable",
    "is_type",
    "is_impl_or_module",
    "is_file",
    "is_region",
    "is_constant",
    "is_section",
    "log_lines",
    "depth",
    "is_test",
    "is_prose",
    "asks_tests",
    "asks_docs",
    "log_in_degree",
    "log_out_degree",
    "log_pagerank",
    "file_best_content_rel",
    "file_sum_content_rel",
    "file_top30_share",
    "file_mentioned",
    "name_mentioned",
    "name_term_overlap",
    "path_term_overlap",
    "q_log_terms",
    "q_long",
    "q_trace_lines",
    "q_code_spans",
    "q_paths",
    "file_rank",
    "title_content_rel",
    "title_content_rr",
    "name_title_overlap",
    "path_title_overlap",
    "history_file_rel",
    "history_file_rr",
    "q_has_history",
];
pub const N: usize = NAMES.len();

/// The position of feature `name` in a feature vector.
pub fn index_of(name: &str) -> Option<usize> {
    NAMES.iter().position(|n| *n == name)
}

/// The per-question inputs the features are computed from.
pub struct Inputs<'a> {
    pub g: &'a Graph,
    pub pagerank: &'a [f32],
    pub content: &'a [f32],
    pub summary: &'a [f32],
    pub mention: &'a [f32],
    /// Personalised PageRank (weighted by centrality), per node.
    pub graph: &'a [f32],
    /// 1-based rank in each signal's list, when the node is in it.
    pub ranks: &'a HashMap<u32, super::SignalRanks>,
    pub rrf: &'a HashMap<u32, f32>,
    pub intent: super::Intent,
    pub question: &'a str,
    pub terms: &'a [(String, f32)],
    /// Content BM25 of the question's title alone (see [`title_of`]), per node.
    pub title_content: &'a [f32],
    /// The history's score of each file of the graph, when past commits resemble the
    /// question ([`super::Evidence::history`]).
    pub history: Option<&'a [f32]>,
}

/// A question's title: its first non-empty line. An issue's title is its one deliberate
/// summary; its body adds logs, code and prose that dilute the words (a 300-term issue
/// matches something everywhere), so the model sees the title's evidence apart.
pub fn title_of(question: &str) -> &str {
    question
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The question's own features, shared by every candidate.
struct QuestionShape {
    log_terms: f32,
    long: f32,
    trace_lines: f32,
    code_spans: f32,
    paths: f32,
}

fn shape(question: &str, terms: &[(String, f32)]) -> QuestionShape {
    let trace_lines = question
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("File \"")
                || t.starts_with("at ")
                || t.contains(".rs:")
                || t.contains(".go:")
                || t.contains(".py\", line")
                || t.starts_with("Traceback")
        })
        .count();
    let code_spans = question.matches('`').count() / 2;
    let paths = question
        .split_whitespace()
        .filter(|w| w.contains('/') && w.rsplit('/').next().is_some_and(|f| f.contains('.')))
        .count();
    QuestionShape {
        log_terms: (terms.len() as f32).ln_1p(),
        long: f32::from(super::is_long_question(terms)),
        trace_lines: (trace_lines as f32).ln_1p(),
        code_spans: (code_spans as f32).ln_1p(),
        paths: (paths as f32).ln_1p(),
    }
}

fn recip(rank: Option<u32>) -> f32 {
    rank.map_or(0.0, |r| 1.0 / r as f32)
}

fn max_of(xs: &[f32]) -> f32 {
    xs.iter().copied().fold(0.0, f32::max)
}

/// Words of an identifier or path, lower-cased: `parse_url`, `ParseURL`, `src/url.rs`.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    crate::index::tokenize::for_each_token(s, |t| out.push(t.to_string()));
    out
}

/// How many of `words` `keep` accepts.
fn count(words: &[String], keep: &dyn Fn(&str) -> bool) -> f32 {
    words.iter().filter(|w| keep(w)).count() as f32
}

/// The features of each candidate, in the order given.
pub fn compute(inp: &Inputs<'_>, candidates: &[u32]) -> Vec<[f32; N]> {
    let g = inp.g;
    let n = g.nodes.len().max(1) as f32;
    let (cmax, smax, gmax) = (
        max_of(inp.content).max(1e-6),
        max_of(inp.summary).max(1e-6),
        max_of(inp.graph).max(1e-12),
    );
    let q = shape(inp.question, inp.terms);
    let term_set: std::collections::HashSet<&str> =
        inp.terms.iter().map(|(t, _)| t.as_str()).collect();
    let title_set: std::collections::HashSet<String> =
        words(title_of(inp.question)).into_iter().collect();
    let tmax = candidates
        .iter()
        .map(|&c| inp.title_content[c as usize])
        .fold(0.0f32, f32::max)
        .max(1e-6);
    // Rank by title BM25 among the candidates (1 = best; none for a zero score).
    let mut by_title: Vec<u32> = candidates
        .iter()
        .copied()
        .filter(|&c| inp.title_content[c as usize] > 0.0)
        .collect();
    by_title.sort_by(|&a, &b| {
        inp.title_content[b as usize]
            .total_cmp(&inp.title_content[a as usize])
            .then(a.cmp(&b))
    });
    let title_rank: HashMap<u32, u32> = by_title
        .iter()
        .enumerate()
        .map(|(r, &c)| (c, r as u32 + 1))
        .collect();
    // File aggregates over every node of the candidates' files.
    let mut file_best: HashMap<u32, (f32, f32)> = HashMap::new();
    for &c in candidates {
        let f = g.nodes[c as usize].file;
        file_best.entry(f).or_insert_with(|| {
            let (a, b) = (g.file_start[f as usize], g.file_start[f as usize + 1]);
            let rel = inp.content[a as usize..b as usize].iter().map(|x| x / cmax);
            rel.fold((0.0f32, 0.0f32), |(m, s), x| (m.max(x), s + x))
        });
    }
    let mut by_rrf: Vec<(u32, f32)> = inp.rrf.iter().map(|(&k, &v)| (k, v)).collect();
    by_rrf.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut top30: HashMap<u32, f32> = HashMap::new();
    for (node, _) in by_rrf.iter().take(30) {
        *top30.entry(g.nodes[*node as usize].file).or_default() += 1.0 / 30.0;
    }
    // The rank of each file by its best node in the fused order.
    let mut file_rank: HashMap<u32, f32> = HashMap::new();
    for (node, _) in &by_rrf {
        let f = g.nodes[*node as usize].file;
        let next = file_rank.len() as f32 + 1.0;
        file_rank.entry(f).or_insert(next);
    }
    // The history's files: each one's score relative to the best, and its rank (1 = best).
    let history = inp.history.unwrap_or(&[]);
    let hmax = max_of(history).max(1e-6);
    let by_history = crate::index::best_first(history, history.len());
    let history_rank: HashMap<u32, u32> = by_history
        .iter()
        .enumerate()
        .map(|(r, &f)| (f, r as u32 + 1))
        .collect();
    let has_history = f32::from(!by_history.is_empty());
    candidates
        .iter()
        .map(|&c| {
            let i = c as usize;
            let def = g.def(c);
            let file = g.nodes[i].file;
            let r = inp.ranks.get(&c).copied().unwrap_or_default();
            let depth = std::iter::successors(g.parent(c), |&p| g.parent(p)).count();
            let degree = |edges: &[u32]| {
                edges
                    .iter()
                    .filter(|&&e| g.edges[e as usize].kind != EdgeKind::Contains)
                    .count() as f32
            };
            let (fbest, fsum) = file_best.get(&file).copied().unwrap_or_default();
            let name_words = words(&def.name);
            let path_words = words(&g.files[file as usize].path);
            let in_terms = |w: &str| term_set.contains(w);
            let in_title = |w: &str| title_set.contains(w);
            let share = |ws: &[String], keep: &dyn Fn(&str) -> bool| {
                count(ws, keep) / (ws.len().max(1) as f32)
            };
            let mention = inp.mention[i];
            [
                inp.content[i],
                inp.content[i] / cmax,
                recip(r.content),
                inp.summary[i],
                inp.summary[i] / smax,
                recip(r.summary),
                mention,
                recip(r.mention),
                inp.graph[i] / gmax,
                recip(r.graph),
                inp.rrf.get(&c).copied().unwrap_or(0.0) * 60.0,
                f32::from(def.kind.is_callable()),
                f32::from(def.kind.is_type()),
                f32::from(matches!(def.kind, DefKind::Impl | DefKind::Module)),
                f32::from(def.kind == DefKind::File),
                f32::from(def.kind == DefKind::Region),
                f32::from(def.kind == DefKind::Constant),
                f32::from(def.kind == DefKind::Section),
                ((def.end_line - def.start_line + 1) as f32).log2(),
                depth as f32,
                f32::from(def.is_test),
                f32::from(def.is_prose),
                f32::from(inp.intent.tests),
                f32::from(inp.intent.docs),
                degree(&g.in_edges[i]).ln_1p(),
                degree(&g.out_edges[i]).ln_1p(),
                (inp.pagerank[i] * n).ln_1p(),
                fbest,
                fsum,
                top30.get(&file).copied().unwrap_or(0.0),
                f32::from(mention > 0.0 && mention < 3.0 || mention >= 4.0),
                f32::from(mention >= 3.0),
                share(&name_words, &in_terms),
                count(&path_words, &in_terms),
                q.log_terms,
                q.long,
                q.trace_lines,
                q.code_spans,
                q.paths,
                file_rank.get(&file).copied().unwrap_or(1000.0).ln(),
                inp.title_content[i] / tmax,
                recip(title_rank.get(&c).copied()),
                share(&name_words, &in_title),
                count(&path_words, &in_title),
                history.get(file as usize).map_or(0.0, |h| h / hmax),
                recip(history_rank.get(&file).copied()),
                has_history,
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{NAMES, title_of};
    use crate::engine::Engine;

    #[test]
    fn the_title_is_the_first_line_with_words() {
        assert_eq!(
            title_of("\n  Retries drop the header \nbody"),
            "Retries drop the header"
        );
        assert_eq!(title_of("one line"), "one line");
        assert_eq!(title_of(""), "");
    }

    #[test]
    fn title_features_see_the_title_apart_from_the_body() {
        let dir = std::env::temp_dir().join(format!("fittok-title-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/redirect.py"),
            "def strip_auth_header(headers):\n    headers.pop('Authorization')\n    return headers\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("src/body.py"),
            "def parse_body(text):\n    lines = text.splitlines()\n    return lines\n",
        )
        .unwrap();
        let e = Engine::open_in(&dir, Arc::new(crate::Config::default()), None, None).unwrap();
        let question = "Redirects strip the auth header\n\nWhile I parse the body of each \
                        response, the lines come back; body text and lines are fine.";
        let rows = e.candidate_features(question);
        let at = |id: &str, name: &str| {
            let row = rows.iter().find(|r| r.id.ends_with(id)).unwrap();
            row.x[NAMES.iter().position(|n| *n == name).unwrap()]
        };
        // Its words and the whole identifier (`stripauthheader`): three of four in the title.
        assert_eq!(at("strip_auth_header", "name_title_overlap"), 0.75);
        // First or second by the title's words: its file holds the same words.
        assert!(at("strip_auth_header", "title_content_rr") >= 0.5);
        assert_eq!(at("parse_body", "title_content_rr"), 0.0);
        assert_eq!(at("parse_body", "name_title_overlap"), 0.0);
        assert_eq!(at("parse_body", "title_content_rel"), 0.0);
        assert!(at("parse_body", "content_rel") > 0.0);
        assert_eq!(at("redirect.py", "path_title_overlap"), 1.0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
