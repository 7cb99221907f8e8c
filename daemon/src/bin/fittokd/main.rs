//! `fittokd`: the engine's command line (the daemon itself arrives with its own issue).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use fittok_engine::engine::SemanticMode;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod inspect;

#[derive(Parser)]
#[command(name = "fittokd", version, about = "fittok's engine and daemon")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse a repository and print, per language: files parsed/skipped, nodes and edges by
    /// kind, resolution rate, parse time.
    Inspect {
        path: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Skip files larger than this many bytes.
        #[arg(long, default_value_t = 1024 * 1024)]
        max_file_bytes: u64,
        /// Also list the N most frequent unresolved references (receiver and name).
        #[arg(long, value_name = "N")]
        unresolved: Option<usize>,
        /// Also print N resolved references per language, sampled evenly, with the source
        /// line and the definition each resolved to: for checking precision by eye.
        #[arg(long, value_name = "N")]
        sample: Option<usize>,
    },
    /// Answer a question about a repository in process: the code that answers it, within a
    /// token budget.
    Query {
        path: PathBuf,
        question: String,
        /// Token budget for the whole answer; 0 = no cap (the relevance cliff decides).
        /// FITTOK_MAX_BUDGET caps it.
        #[arg(long, default_value_t = 0)]
        budget: usize,
        /// Print the answer as JSON.
        #[arg(long)]
        json: bool,
        /// Count tokens with o200k instead of cl100k.
        #[arg(long)]
        o200k: bool,
        /// With --json, include the top N of the ranking with each signal's rank.
        #[arg(long, value_name = "N", default_value_t = 0)]
        explain: usize,
        /// Semantic ranking: `off`, `cached` (cached vectors, plus what can be embedded in
        /// about two seconds), or `full` (embed every node first).
        #[arg(long, value_enum, default_value_t = SemanticArg::Cached)]
        semantic: SemanticArg,
    },
    /// Index a repository completely (graph, lexical indexes, every embedding into the
    /// cache) and report the time each stage took.
    Index { path: PathBuf },
    /// Print the whole source of ids from an answer (`path#Qualified.name` or `path:10-40`).
    Expand {
        path: PathBuf,
        #[arg(required = true)]
        ids: Vec<String>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SemanticArg {
    Off,
    Cached,
    Full,
}

impl SemanticArg {
    fn mode(self) -> SemanticMode {
        match self {
            SemanticArg::Off => SemanticMode::Off,
            SemanticArg::Cached => SemanticMode::Cached(std::time::Duration::from_secs(2)),
            SemanticArg::Full => SemanticMode::Full,
        }
    }
}

/// The effective budget: the request, capped by FITTOK_MAX_BUDGET when that is set and > 0.
fn effective_budget(requested: usize) -> usize {
    let cap = std::env::var("FITTOK_MAX_BUDGET")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    match (requested, cap) {
        (r, 0) => r,
        (0, c) => c,
        (r, c) => r.min(c),
    }
}

fn env_flag(name: &str) -> bool {
    std::env::var(name)
        .map(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
        .unwrap_or(false)
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FITTOK_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Inspect {
            path,
            json,
            max_file_bytes,
            unresolved,
            sample,
        } => {
            let opts = fittok_engine::walk::WalkOptions { max_file_bytes };
            let repo = fittok_engine::repo::build(&path, &opts)
                .with_context(|| format!("cannot index {}", path.display()))?;
            let out = if json {
                inspect::json(&repo)
            } else {
                inspect::text(&repo)
            };
            print!("{out}");
            if let Some(n) = unresolved {
                print!("{}", inspect::unresolved(&repo, n));
            }
            if let Some(n) = sample {
                print!("{}", inspect::sample(&repo, &path, n));
            }
        }
        Command::Query {
            path,
            question,
            budget,
            json,
            o200k,
            explain,
            semantic,
        } => {
            let mut engine = fittok_engine::Engine::open(&path)
                .with_context(|| format!("cannot index {}", path.display()))?;
            if engine.uses_semantic(&question) {
                engine.enable_semantic(semantic.mode());
            }
            let query = fittok_engine::Query {
                question,
                budget: effective_budget(budget),
                encoding: if o200k {
                    fittok_engine::tokens::Encoding::O200k
                } else {
                    fittok_engine::tokens::Encoding::Cl100k
                },
                show_savings: env_flag("FITTOK_SHOW_SAVINGS"),
                explain,
            };
            let answer = engine.query(&query);
            if json {
                println!("{}", serde_json::to_string_pretty(&answer)?);
            } else {
                print!("{}", answer.text);
            }
        }
        Command::Index { path } => {
            let t = std::time::Instant::now();
            let mut engine = fittok_engine::Engine::open(&path)
                .with_context(|| format!("cannot index {}", path.display()))?;
            engine.enable_semantic(SemanticMode::Full);
            let tm = engine.timings;
            let g = &engine.repo.graph;
            let bytes: u64 = g.files.iter().map(|f| u64::from(f.bytes)).sum();
            println!(
                "{}: {} files ({:.1} MB), {} nodes, {} edges",
                path.display(),
                g.files.len(),
                bytes as f64 / 1e6,
                g.nodes.len(),
                g.edges.len()
            );
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            println!(
                "walk {:.0} ms · parse {:.0} ms · link {:.0} ms · lexical {:.0} ms · semantic load {:.0} ms · embed {:.0} ms ({} nodes, {:.1}/s) · total {:.0} ms",
                ms(tm.walk),
                ms(tm.parse),
                ms(tm.link),
                ms(tm.lexical),
                ms(tm.semantic_load),
                ms(tm.embed),
                tm.embedded,
                tm.embedded as f64 / tm.embed.as_secs_f64().max(1e-9),
                ms(t.elapsed())
            );
            println!(
                "semantic coverage {:.0}%",
                engine.semantic_coverage() * 100.0
            );
        }
        Command::Expand { path, ids } => {
            let engine = fittok_engine::Engine::open(&path)
                .with_context(|| format!("cannot index {}", path.display()))?;
            print!("{}", engine.expand(&ids)?);
        }
    }
    Ok(())
}
