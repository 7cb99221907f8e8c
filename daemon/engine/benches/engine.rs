//! `cargo bench -p fittok-engine --bench engine -- PATH [QUESTION…]`
//!
//! Prints, for one repository: index time per stage (walk, parse, link, lexical, semantic load,
//! embedding with throughput), query latency in process (p50/p95 over the questions × 5 budgets)
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
        engine.semantic_coverage() * 100.0
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
            times.sort_by(f64::total_cmp);
            if let Some(p50) = times.get(times.len() / 2) {
                println!("question embedding, {label} (100 new questions): p50 {p50:.1} ms");
            }
        }
    }
    let mut lat = Vec::new();
    for q in &questions {
        for budget in [0, 1500, 4000, 8000, 16000] {
            let t = Instant::now();
            let a = engine.query(&Query {
                question: q.clone(),
                budget,
                ..Query::default()
            });
            lat.push(ms(t.elapsed()));
            assert!(budget == 0 || a.tokens <= budget);
        }
    }
    lat.sort_by(f64::total_cmp);
    let p = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize];
    println!(
        "query (in process, {} queries): p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        lat.len(),
        p(0.5),
        p(0.95),
        p(1.0)
    );
    println!("peak memory: {:.0} MB", peak_rss_mb());
}
