//! `cargo bench -p fittok-engine --bench engine -- PATH [QUESTION…]`
//!
//! Prints, for one repository: index time per stage (walk, parse, link, lexical, semantic load,
//! embedding with throughput), query latency in process (p50/p95 over the questions × 5 budgets,
//! each `QUERY_RUNS` times, default 1)
//! and peak memory. Embedding uses `FITTOK_EMBED_MODEL` and the cache in `FITTOK_CACHE_DIR`
//! (point it at an empty directory to time embedding from scratch).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fittok_engine::engine::SemanticMode;
use fittok_engine::{Engine, Query};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The median of `v` (sorted in place; the upper one of an even count), `None` when empty.
fn p50(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(path) = args.first().map(PathBuf::from) else {
        eprintln!("usage: cargo bench -p fittok-engine --bench engine -- PATH [QUESTION…]");
        std::process::exit(2);
    };
    let mut questions: Vec<String> = args[1..].to_vec();
    if questions.is_empty() {
        questions = vec![
            "How is an HTTP request retried after a connection error?".into(),
            "Where are command line flags parsed and validated?".into(),
            "how does the code decide which files to skip".into(),
        ];
    }
    let t = Instant::now();
    // A benchmark binary configures the engine as fittokd does: from its environment (a
    // persistent cache only with FITTOK_CACHE_DIR, so runs are comparable by default).
    let config = match fittok_engine::Config::from_vars(
        std::env::var_os("FITTOK_CACHE_DIR").map(PathBuf::from),
        |k| std::env::var(k).ok(),
    ) {
        Ok(c) => std::sync::Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut engine = match Engine::open(&path, config.clone()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let lexical_ready = t.elapsed();
    engine.enable_semantic(SemanticMode::Full);
    let tm = engine.timings;
    let g = &engine.repo.graph;
    let bytes: u64 = g.files.iter().map(|f| u64::from(f.bytes)).sum();
    println!(
        "{}: {} files, {:.1} MB, {} nodes, {} edges",
        path.display(),
        g.files.len(),
        bytes as f64 / 1e6,
        g.nodes.len(),
        g.edges.len()
    );
    println!(
        "index: walk {:.0} ms, parse {:.0} ms ({:.1} MB/s), link {:.0} ms, lexical {:.0} ms → answers after {:.0} ms",
        ms(tm.walk),
        ms(tm.parse),
        bytes as f64 / 1e6 / tm.parse.as_secs_f64().max(1e-9),
        ms(tm.link),
        ms(tm.lexical),
        ms(lexical_ready)
    );
    println!(
        "semantic: load {:.0} ms, embedded {} nodes in {:.1} s ({:.1} texts/s), coverage {:.0}%",
        ms(tm.semantic_load),
        tm.embedded,
        tm.embed.as_secs_f64(),
        tm.embedded as f64 / tm.embed.as_secs_f64().max(1e-9),
        engine.semantic.coverage() * 100.0
    );
    // A new question costs one forward pass (the daemon's recent-question cache is bypassed by
    // making every question distinct): f32 weights and f16 weights side by side.
    if let Ok(dir) = fittok_engine::embed::model_dir(&config.embed, config.cache_dir.as_deref()) {
        for (label, half) in [("f32 weights", false), ("f16 weights", true)] {
            let Ok(embedder) = fittok_engine::embed::Embedder::load_with(
                &dir,
                half,
                config.embed.effective_batch_threads(),
            ) else {
                continue;
            };
            let mut times = Vec::new();
            for i in 0..100 {
                let q = format!("{} (variant {i})", questions[i % questions.len()]);
                let t = Instant::now();
                if embedder.embed_question(&q).is_ok() {
                    times.push(ms(t.elapsed()));
                }
            }
            if let Some(p50) = p50(&mut times) {
                println!("question embedding, {label} (100 new questions): p50 {p50:.1} ms");
            }
        }
    }
    const BUDGETS: [usize; 5] = [0, 1500, 4000, 8000, 16000];
    let mut lat = Vec::new();
    let mut per_budget: Vec<Vec<f64>> = vec![Vec::new(); BUDGETS.len()];
    // Each question at each budget this many times (a shared machine's noise averages out).
    let query_runs: usize = std::env::var("QUERY_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for q in questions
        .iter()
        .cycle()
        .take(questions.len() * query_runs.max(1))
    {
        for (i, budget) in BUDGETS.into_iter().enumerate() {
            let t = Instant::now();
            let a = engine.query(&Query {
                question: q.clone(),
                budget,
                ..Query::default()
            });
            let took = ms(t.elapsed());
            lat.push(took);
            per_budget[i].push(took);
            assert!(budget == 0 || a.tokens <= budget);
        }
    }
    let by_budget: Vec<String> = BUDGETS
        .iter()
        .zip(per_budget.iter_mut())
        .filter_map(|(b, v)| {
            let label = if *b == 0 {
                "uncapped".to_string()
            } else {
                b.to_string()
            };
            p50(v).map(|m| format!("{label} {m:.1}"))
        })
        .collect();
    println!("query p50 by budget, ms: {}", by_budget.join(", "));
    lat.sort_by(f64::total_cmp);
    let p = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize];
    println!(
        "query (in process, {} queries): p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        lat.len(),
        p(0.5),
        p(0.95),
        p(1.0)
    );
    rankers_side_by_side(&engine, &questions);
    history_side_by_side(&engine, &questions);
    mentions_side_by_side(&engine);
    mention_users_side_by_side(&engine);
    println!("peak memory: {:.0} MB", peak_rss_mb());
}

/// What the learned ranker costs a query, against reciprocal rank fusion alone (the ranking
/// before issue 14), on the same engine in one process: the two rankers alternate query by
/// query, so a noisy neighbour slows both alike, and the paired difference per round is
/// reported beside each one's p50. Budget 4000; `RANKER_RUNS` rounds (default 200).
/// The mention signal on a pasted traceback (frames citing 32 of the repository's own files,
/// path and line, as `rank::locations` reads them) beside the same frames without their
/// paths (both name `handle_request`): what resolving cited locations against every file costs.
fn mentions_side_by_side(engine: &Engine) {
    use fittok_engine::rank::mentions::Mentions;
    let g = &engine.repo.graph;
    let step = (g.files.len() / 32).max(1);
    let mut traceback = String::from("Traceback (most recent call last):\n");
    let mut plain = String::from("Traceback (most recent call last):\n");
    for f in g.files.iter().step_by(step).take(32) {
        traceback.push_str(&format!(
            "  File \"/venv/lib/site-packages/{}\", line 12, in handle_request\n",
            f.path
        ));
        plain.push_str("  File the handler, line 12, in handle_request\n");
    }
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..50 {
        for k in 0..2 {
            let i = (k + round) % 2;
            let q = if i == 0 { &plain } else { &traceback };
            let t = Instant::now();
            let scores = Mentions::of(q).scores(g, None);
            times[i].push(ms(t.elapsed()));
            assert_eq!(scores.len(), g.nodes.len());
        }
    }
    let [mut a, mut b] = times;
    println!(
        "mention signal, {} files: plain question p50 {:.2} ms, traceback of 32 frames p50 {:.2} ms",
        g.files.len(),
        p50(&mut a).unwrap_or(f64::NAN),
        p50(&mut b).unwrap_or(f64::NAN)
    );
}

/// The mention signal on a question naming 16 of the repository's identifiers of several parts
/// (`snake_case` or `camelCase` definitions), with the content index (their writers are looked
/// up as users, `Mentions::scores`) beside without it, alternating call by call.
fn mention_users_side_by_side(engine: &Engine) {
    use fittok_engine::rank::mentions::Mentions;
    let g = &engine.repo.graph;
    let mut names: Vec<&str> = (0..g.nodes.len() as u32)
        .map(|n| g.def(n).name.as_str())
        .filter(|n| n.len() >= 8 && (n.contains('_') || n.chars().skip(1).any(char::is_uppercase)))
        .collect();
    names.sort_unstable();
    names.dedup();
    let step = (names.len() / 16).max(1);
    let question: String = names
        .iter()
        .step_by(step)
        .take(16)
        .map(|n| format!("`{n}` "))
        .collect();
    let content = engine.index.content.get();
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..50 {
        for k in 0..2 {
            let i = (k + round) % 2;
            let t = Instant::now();
            let scores = Mentions::of(&question).scores(g, (i == 1).then_some(&*content));
            times[i].push(ms(t.elapsed()));
            assert_eq!(scores.len(), g.nodes.len());
        }
    }
    let [mut a, mut b] = times;
    println!(
        "mention signal, 16 identifiers named: without their writers p50 {:.3} ms, with them p50 {:.3} ms",
        p50(&mut a).unwrap_or(f64::NAN),
        p50(&mut b).unwrap_or(f64::NAN)
    );
}

/// What the repository's history costs: reading it (`git log` and the message index, as the
/// daemon does in the background), its memory, and query latency at 4000 tokens with and
/// without it, alternating query by query (`RANKER_RUNS` rounds).
fn history_side_by_side(engine: &Engine, questions: &[String]) {
    let t = Instant::now();
    let history = match engine.read_history() {
        Ok(Some(h)) => std::sync::Arc::new(h),
        Ok(None) => return,
        Err(e) => {
            println!("history: none ({e})");
            return;
        }
    };
    println!(
        "history: {} commits read in {:.0} ms, {:.1} MB resident",
        history.commits(),
        ms(t.elapsed()),
        history.heap_bytes() as f64 / 1e6
    );
    let runs: usize = std::env::var("RANKER_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..runs {
        for q in questions {
            for k in 0..2 {
                let with = (k + round) % 2 == 1;
                if with {
                    engine.set_history(history.clone());
                } else {
                    engine.drop_history();
                }
                let t = Instant::now();
                let a = engine.query(&Query {
                    question: q.clone(),
                    budget: 4000,
                    ..Query::default()
                });
                times[usize::from(with)].push(ms(t.elapsed()));
                assert!(a.tokens <= 4000);
            }
        }
    }
    engine.drop_history();
    let [mut without, mut with] = times;
    println!(
        "query at 4000 tokens: without history p50 {:.2} ms, with history p50 {:.2} ms",
        p50(&mut without).unwrap_or(f64::NAN),
        p50(&mut with).unwrap_or(f64::NAN)
    );
}

fn rankers_side_by_side(engine: &Engine, questions: &[String]) {
    use fittok_engine::rank::Ranker;
    let runs: usize = std::env::var("RANKER_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let rankers = [("fusion", Ranker::Fusion), ("auto", Ranker::Auto)];
    let mut times = [Vec::new(), Vec::new()];
    let mut diffs = Vec::new();
    for round in 0..runs {
        for q in questions {
            let mut pair = [0.0; 2];
            // Alternate which ranker goes first, so neither always finds warm caches.
            for k in 0..2 {
                let i = (k + round) % 2;
                let t = Instant::now();
                let a = engine.query(&Query {
                    question: q.clone(),
                    budget: 4000,
                    ranker: rankers[i].1,
                    ..Query::default()
                });
                pair[i] = ms(t.elapsed());
                assert!(a.tokens <= 4000);
            }
            times[0].push(pair[0]);
            times[1].push(pair[1]);
            diffs.push(pair[1] - pair[0]);
        }
    }
    let median = |v: &mut Vec<f64>| p50(v).unwrap_or(f64::NAN);
    let n = diffs.len();
    let (f, a, d) = (
        median(&mut times[0]),
        median(&mut times[1]),
        median(&mut diffs),
    );
    println!(
        "rankers at 4000 tokens, {n} interleaved pairs: {} p50 {f:.2} ms, {} p50 {a:.2} ms, paired difference p50 {d:+.2} ms",
        rankers[0].0, rankers[1].0
    );
    // The model alone on each question's candidate pool: the forest walked for one candidate
    // at a time, and for the whole pool at once (what `rank` does).
    let Some(model) = fittok_engine::rank::learned::model() else {
        return;
    };
    let pools: Vec<Vec<[f32; fittok_engine::rank::features::N]>> = questions
        .iter()
        .map(|q| {
            let terms = fittok_engine::index::bm25::query_terms(q);
            fittok_engine::rank::candidate_features(
                &engine.repo.graph,
                &engine.index,
                q,
                &terms,
                None,
                &Default::default(),
            )
            .into_iter()
            .map(|(_, x)| x)
            .collect()
        })
        .collect();
    let (mut one, mut pooled) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        for xs in &pools {
            let t = Instant::now();
            let each: Vec<f32> = xs.iter().map(|x| model.probability(x)).collect();
            one.push(ms(t.elapsed()));
            let t = Instant::now();
            let all = model.probabilities(xs);
            pooled.push(ms(t.elapsed()));
            assert_eq!(each, all);
        }
    }
    let sizes: Vec<usize> = pools.iter().map(Vec::len).collect();
    println!(
        "learned model on the candidate pools ({sizes:?} candidates): one at a time p50 {:.3} ms, pooled p50 {:.3} ms",
        median(&mut one),
        median(&mut pooled)
    );
}
