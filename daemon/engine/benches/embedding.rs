//! `cargo bench -p fittok-engine --bench embedding -- PATH [N] [QUESTION…]`
//!
//! What batching by length and a shorter window buy the background embedder (issue 15 part 4),
//! on N (default 512) embeddable nodes of one repository, sampled evenly over its nodes. Each
//! way of batching embeds the same texts with the model of `FITTOK_EMBED_MODEL`:
//! - **queue, 64 at a time**: what `SemanticIndex::fill` did before it planned (each chunk of
//!   64 in queue order sorted by length inside `Embedder::embed`, packed up to 1,024 tokens
//!   a batch);
//! - **unsorted, 8 at a time**: batches padded to their longest text, no sorting;
//! - **whole queue sorted**: one call, so every batch holds texts of like length;
//! - **windows of 512 by length**: what `fill` does since it plans (`PLAN_WINDOW`): each 512
//!   of the queue sorted by text length, then 64 at a time;
//! - **window 128**: the first way with texts cut at 128 tokens instead of 256.
//!
//! Then the agreements: every batching must give the same vectors (cosine ≥ 0.9999 to the
//! first way), and the shorter window's vectors against the full window's — per text, and as
//! the top 10 of the sample for each question.

use std::path::PathBuf;
use std::time::Instant;

use fittok_engine::embed::semantic::{embed_text, embeddable};
use fittok_engine::embed::{Embedder, dot};
use fittok_engine::{Config, Engine};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(path) = args.first().map(PathBuf::from) else {
        eprintln!("usage: cargo bench -p fittok-engine --bench embedding -- PATH [N] [QUESTION…]");
        std::process::exit(2);
    };
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(512);
    let mut questions: Vec<String> = args.iter().skip(2).cloned().collect();
    if questions.is_empty() {
        questions = [
            "how is a request retried after a connection error",
            "where is the configuration read and validated",
            "which files are skipped and why",
            "how are errors reported to the user",
            "where is the cache invalidated",
            "how is the output formatted",
            "what happens when a timeout expires",
            "how are arguments parsed",
            "where are permissions checked",
            "how are records serialized",
        ]
        .map(String::from)
        .to_vec();
    }
    let config = match Config::from_vars(None, |k| std::env::var(k).ok()) {
        Ok(c) => std::sync::Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let dir = match fittok_engine::embed::model_dir(&config.embed, None) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let engine = match Engine::open(&path, config.clone()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let g = &engine.repo.graph;
    let eligible: Vec<u32> = (0..g.nodes.len() as u32)
        .filter(|&v| embeddable(g, v))
        .collect();
    let step = (eligible.len() as f64 / n as f64).max(1.0);
    let sample: Vec<u32> = (0..n.min(eligible.len()))
        .map(|i| eligible[(i as f64 * step) as usize])
        .collect();
    let texts: Vec<String> = sample
        .iter()
        .map(|&v| embed_text(g, &engine.sources, v))
        .collect();
    let threads = config.embed.effective_batch_threads();
    let load = |max_tokens: Option<usize>| {
        let e = Embedder::load_with(&dir, config.embed.half_weights, threads)
            .unwrap_or_else(|e| panic!("model: {e}"));
        match max_tokens {
            Some(m) => e.with_max_tokens(m).unwrap_or_else(|e| panic!("{e}")),
            None => e,
        }
    };
    println!(
        "{}: {} nodes, {} embeddable, {} sampled; {threads} batch threads, {} weights",
        path.display(),
        g.nodes.len(),
        eligible.len(),
        texts.len(),
        if config.embed.half_weights {
            "f16"
        } else {
            "f32"
        },
    );

    let full = load(None);
    let short = load(Some(128));
    let run = |label: &str, e: &Embedder, chunk: usize| {
        let t = Instant::now();
        let mut out = Vec::with_capacity(texts.len());
        for c in texts.chunks(chunk.max(1)) {
            out.extend(e.embed(c).unwrap_or_else(|e| panic!("{e}")));
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "| {label} | {s:.1} s | {:.1} texts/s |",
            texts.len() as f64 / s.max(1e-9)
        );
        out
    };
    println!("| batching | time | throughput |\n|---|---|---|");
    let queue = run("queue, 64 at a time (before)", &full, 64);
    let unsorted = run("unsorted, 8 at a time", &full, 8);
    let sorted = run("whole queue sorted by length", &full, texts.len());
    let planned = {
        let t = Instant::now();
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let window = fittok_engine::embed::semantic::PLAN_WINDOW;
        for start in (0..texts.len()).step_by(window) {
            let mut ids: Vec<usize> = (start..(start + window).min(texts.len())).collect();
            ids.sort_by_key(|&i| texts[i].len());
            for c in ids.chunks(64) {
                let batch: Vec<String> = c.iter().map(|&i| texts[i].clone()).collect();
                let vs = full.embed(&batch).unwrap_or_else(|e| panic!("{e}"));
                for (&i, v) in c.iter().zip(vs) {
                    out[i] = Some(v);
                }
            }
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "| windows of {window} by length, 64 at a time (fill) | {s:.1} s | {:.1} texts/s |",
            texts.len() as f64 / s.max(1e-9)
        );
        out.into_iter()
            .map(Option::unwrap_or_default)
            .collect::<Vec<_>>()
    };
    let window = run("queue, 64 at a time, window 128", &short, 64);

    let cos = |a: &[Vec<f32>], b: &[Vec<f32>]| -> Vec<f32> {
        let mut c: Vec<f32> = a.iter().zip(b).map(|(x, y)| dot(x, y)).collect();
        c.sort_by(f32::total_cmp);
        c
    };
    for (label, other) in [
        ("unsorted", &unsorted),
        ("sorted", &sorted),
        ("planned", &planned),
    ] {
        let c = cos(&queue, other);
        println!(
            "vectors, {label} vs queue: min cosine {:.6}",
            c.first().copied().unwrap_or(1.0)
        );
    }
    let c = cos(&queue, &window);
    let at = |p: f64| c[((c.len() - 1) as f64 * p) as usize];
    let truncated = texts
        .iter()
        .zip(&c)
        .filter(|(_, cos)| **cos < 0.999_999)
        .count();
    println!(
        "window 128 vs 256: {truncated} of {} texts change; cosine min {:.3}, p10 {:.3}, median {:.4}",
        texts.len(),
        c[0],
        at(0.1),
        at(0.5)
    );
    let mut kept = 0;
    for q in &questions {
        let qv = full.embed_question(q).unwrap_or_else(|e| panic!("{e}"));
        let top = |vs: &[Vec<f32>]| {
            let mut ids: Vec<usize> = (0..vs.len()).collect();
            ids.sort_by(|&a, &b| dot(&vs[b], &qv).total_cmp(&dot(&vs[a], &qv)));
            ids.truncate(10);
            ids
        };
        let a = top(&queue);
        kept += top(&window).iter().filter(|i| a.contains(i)).count();
    }
    println!(
        "window 128: top 10 of the sample kept for {kept} of {} (question, rank) pairs over {} questions",
        questions.len() * 10,
        questions.len()
    );
}
