use std::sync::Arc;

use super::{
    Evidence, FUSION_SHARE, Intent, LEARNED_RANK_K, LONG_QUESTION_MENTION_BOOST, RRF_K, Ranked,
    Ranker, SEMANTIC_SHARE, SignalRanks, Tuning, Weights, is_long_question, join_semantic, rank,
    walk_seeds,
};
use crate::index::{Index, Sources, bm25::query_terms};

/// A question's evidence when only vectors join the graph and the indexes.
fn vectors(sims: &[f32]) -> Evidence<'_> {
    Evidence {
        semantic: Some(sims),
        history: None,
        cited: &[],
    }
}
use crate::link::Graph;
use crate::testing::{graph_of, node_named};

/// The graph of `files` (path, source) and its index.
fn indexed(files: &[(&str, &str)]) -> (Graph, Index) {
    let g = graph_of(files);
    let sources: Sources = files.iter().map(|(_, s)| Arc::from(s.as_bytes())).collect();
    let ix = Index::build(&g, &sources);
    (g, ix)
}

#[test]
fn a_short_question_with_vectors_keeps_the_learned_order_and_semantics_join_it() {
    let files = [
        (
            "src/retry.py",
            "def retry_request(req):\n    return send(req)\n",
        ),
        (
            "src/backoff.py",
            "def wait_between_attempts(n):\n    return 2 ** n\n",
        ),
        ("src/log.py", "def write_log(line):\n    print(line)\n"),
    ];
    let (g, ix) = indexed(&files);
    let (q, tuning) = ("retry the request", Tuning::default());
    let terms = query_terms(q);
    let by_name = |name: &str| node_named(&g, name);
    let (retry, wait) = (by_name("retry_request"), by_name("wait_between_attempts"));
    // Vectors that find only the backoff, which shares no word with the question.
    let mut sims = vec![0.0f32; g.nodes.len()];
    sims[wait as usize] = 0.9;
    let auto = rank(&g, &ix, q, &terms, vectors(&sims), Ranker::Auto, &tuning);
    let learned = rank(&g, &ix, q, &terms, vectors(&sims), Ranker::Learned, &tuning);
    let fusion = rank(&g, &ix, q, &terms, vectors(&sims), Ranker::Fusion, &tuning);
    assert_eq!(
        auto, learned,
        "a short question goes to the model, vectors or not"
    );
    assert_ne!(auto, fusion);
    assert!(auto.iter().any(|r| r.node == retry));
    // The semantic hit joins in the learned order's rank shape: its score is the model's
    // term, fusion's and the semantic best's, 1/(K + 1 + r) + F/(K + 1 + f) + S/(K + 1).
    let k = LEARNED_RANK_K;
    let score = auto
        .iter()
        .find(|r| r.node == wait)
        .map(|r| r.score)
        .expect("the semantic hit is ranked");
    let shaped = (0..auto.len()).any(|r| {
        (0..auto.len()).any(|f| {
            let x = 1.0 / (k + 1.0 + r as f32)
                + FUSION_SHARE / (k + 1.0 + f as f32)
                + SEMANTIC_SHARE / (k + 1.0);
            (x - score).abs() < 1e-6
        })
    });
    assert!(shaped, "{score}");
    let top = (1.0 + FUSION_SHARE + SEMANTIC_SHARE) / (k + 1.0);
    assert!(auto.iter().all(|r| r.score <= top + 1e-6), "{auto:?}");
    // A paraphrase no node matches lexically leaves the model nothing to order by: the semantic
    // order decides, through fusion.
    let q = "pause before trying once more";
    let terms = query_terms(q);
    let auto = rank(&g, &ix, q, &terms, vectors(&sims), Ranker::Auto, &tuning);
    let fusion = rank(&g, &ix, q, &terms, vectors(&sims), Ranker::Fusion, &tuning);
    assert_eq!(auto, fusion);
    assert_eq!(auto.first().map(|r| r.node), Some(wait));
}

#[test]
fn semantics_join_the_score_and_drop_the_partial_probability() {
    let ranked = |semantic| Ranked {
        node: 0,
        score: 0.1,
        ranks: SignalRanks {
            semantic,
            ..SignalRanks::default()
        },
        probability: Some(0.2),
    };
    let mut x = ranked(None);
    join_semantic(&mut x);
    assert_eq!((x.score, x.probability), (0.1, None));
    // Found first: the score gains S/(K + 1).
    let mut x = ranked(Some(1));
    join_semantic(&mut x);
    let boosted = 0.1 + SEMANTIC_SHARE / (LEARNED_RANK_K + 1.0);
    assert!((x.score - boosted).abs() < 1e-6);
    assert_eq!(x.probability, None);
}

#[test]
fn a_short_question_naming_tests_asks_for_them() {
    assert!(Intent::of("where are the retry tests?").tests);
    assert!(!Intent::of("where are retries handled?").tests);
    assert!(Intent::of("is the config format documented").docs);
}

#[test]
fn a_long_issue_asks_for_tests_only_in_its_title() {
    let body = "I tested this with the test suite and a fixture; the test fails. ".repeat(10);
    let incidental = format!("Redirects drop the auth header\n\n{body}");
    assert!(!Intent::of(&incidental).tests);
    let about_tests = format!("Test collection skips parametrized tests\n\n{body}");
    assert!(Intent::of(&about_tests).tests);
}

#[test]
fn the_walk_starts_from_every_signal_and_the_mentions_too() {
    // Content ranks 2 then 0; summary 0; mentions name 3 alone (a cited line, say, whose words
    // the question does not repeat).
    let (content, summary, mention): (&[u32], &[u32], &[u32]) = (&[2, 0], &[0], &[3]);
    let seeds = walk_seeds(5, [content, summary, mention]);
    assert_eq!(seeds, vec![1.5, 0.0, 1.0, 1.0, 0.0]);
    // Only each list's best 30 seed it.
    let long: Vec<u32> = (0..40).collect();
    let seeds = walk_seeds(40, [long.as_slice()]);
    assert!(seeds[29] > 0.0 && seeds[30] == 0.0);
}

#[test]
fn code_a_named_function_calls_that_shares_the_questions_words_joins_the_ranking() {
    let files = [
        (
            "src/api.py",
            "def load_config(path):\n    return parse_text(open(path).read())\n\n\
             def parse_text(text):\n    return decode_entries(text)\n\n\
             def decode_entries(text):\n    return [l.split('=') for l in text.splitlines()]\n",
        ),
        (
            "src/other.py",
            "def unrelated(lines):\n    return len(lines)\n",
        ),
    ];
    let (g, ix) = indexed(&files);
    let q = "`load_config` splits the lines wrong";
    let terms = query_terms(q);
    let decode = node_named(&g, "decode_entries");
    let ranks_of = |tuning: &Tuning| {
        rank(
            &g,
            &ix,
            q,
            &terms,
            Evidence::default(),
            Ranker::Fusion,
            tuning,
        )
        .into_iter()
        .find(|r| r.node == decode)
        .expect("decode_entries matches the question's words")
    };
    let with = ranks_of(&Tuning::default());
    // Two calls away from the named function, and its content matches: first in the reach.
    assert_eq!(with.ranks.reach, Some(1));
    let mut tuning = Tuning::default();
    tuning.weights.reach = 0.0;
    let without = ranks_of(&tuning);
    assert!(with.score > without.score);
}

#[test]
fn a_long_questions_names_weigh_more_in_fusion_than_a_short_ones() {
    let files = [
        (
            "src/retry.py",
            "def retry_request(req):\n    return send(req)\n",
        ),
        ("src/log.py", "def write_log(line):\n    print(line)\n"),
    ];
    let (g, ix) = indexed(&files);
    let retry = node_named(&g, "retry_request");
    let w = Weights::default();
    let term = |weight: f32, rank: Option<u32>| rank.map_or(0.0, |k| weight / (RRF_K + k as f32));
    // The fused score of `retry_request`, its mention term weighted `mention`.
    let fused = |q: &str, mention: f32| {
        let terms = query_terms(q);
        let ranked = rank(
            &g,
            &ix,
            q,
            &terms,
            Evidence::default(),
            Ranker::Fusion,
            &Tuning::default(),
        );
        let r = ranked
            .iter()
            .find(|r| r.node == retry)
            .copied()
            .expect("ranked");
        assert!(r.ranks.mention.is_some(), "{q}: named");
        let expected = term(w.content, r.ranks.content)
            + term(w.summary, r.ranks.summary)
            + term(w.graph, r.ranks.graph)
            + term(mention, r.ranks.mention)
            + term(w.reach, r.ranks.reach);
        (r.score, expected, is_long_question(&terms))
    };
    let (score, expected, long) = fused("retry_request fails", w.mention);
    assert!(!long);
    assert!((score - expected).abs() < 1e-6, "{score} {expected}");
    let filler: String = (0..45).map(|i| format!("detail{i} ")).collect();
    let issue = format!("retry_request fails\n\n{filler}");
    let (score, expected, long) = fused(&issue, w.mention * LONG_QUESTION_MENTION_BOOST);
    assert!(long);
    assert!((score - expected).abs() < 1e-6, "{score} {expected}");
}
