//! `fittokd`: the daemon (`fittokd serve`) and the engine's in-process command line.

use std::path::PathBuf;

/// `println!` that does not panic when stdout is gone (`fittokd expand … | head`): the rest of
/// the output is dropped and the command ends normally.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that does not panic when stdout is gone.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

use anyhow::Context;
use clap::{Parser, Subcommand};
use fittok_engine::engine::SemanticMode;
use tracing_subscriber::fmt::writer::MakeWriterExt;

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
    /// Run the daemon: serve the gRPC API on the local socket until idle, SIGTERM or a
    /// Shutdown call. Uses the listener inherited from systemd when LISTEN_FDS says so.
    Serve(ServeArgs),
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
        /// Token budget for the whole answer, at least 200; 0 = no cap (the relevance cliff
        /// decides). FITTOK_MAX_BUDGET caps it.
        #[arg(long, default_value_t = 0, value_parser = fittok_proto::parse_budget)]
        budget: u32,
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
        /// Which model orders the candidates: `auto` (the learned ranker for short questions,
        /// reciprocal rank fusion for long ones), `learned` or `fusion`.
        #[arg(long, value_enum, default_value_t = RankerArg::Auto)]
        ranker: RankerArg,
        /// Print every candidate with the learned ranker's features as JSON instead of an
        /// answer (what `scripts/train/train.py` trains on).
        #[arg(long, hide = true)]
        dump_features: bool,
    },
    /// Index a repository completely (graph, lexical indexes, every embedding into the
    /// cache) and report the time each stage took.
    Index { path: PathBuf },
    /// Find secrets in files: one line per finding (`path:line kind preview`); exit status 1
    /// when any is found (for pre-commit hooks).
    Scrub {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Fitted Information Trees, in process (`fittok fit` does the same through the daemon).
    Fit {
        #[command(subcommand)]
        action: fittok_client::cli::FitAction,
    },
    /// Print the whole source of ids from an answer (`path#Qualified.name` or `path:10-40`).
    Expand {
        path: PathBuf,
        #[arg(required = true)]
        ids: Vec<String>,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Socket path (default: FITTOK_SOCKET, else $XDG_RUNTIME_DIR/fittok/fittokd.sock,
    /// else run/fittokd.sock in the cache directory).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Exit after this many seconds without calls; 0 = never.
    #[arg(long, env = "FITTOK_IDLE_TIMEOUT", default_value_t = 1800)]
    idle_timeout: u64,
    /// Beyond this many MB of resident repositories (estimated), the least recently used
    /// leave memory (their caches stay on disk).
    #[arg(long, env = "FITTOK_MEMORY_BUDGET_MB", default_value_t = 2048)]
    memory_budget_mb: u64,
    /// Rank without the embedding model (no model load, no background embedding).
    #[arg(long)]
    no_semantic: bool,
    /// Watch resident repositories for changes; `false` checks before each answer instead.
    #[arg(long, env = "FITTOK_AUTOWATCH", default_value_t = true, action = clap::ArgAction::Set, value_parser = clap::builder::BoolishValueParser::new())]
    autowatch: bool,
    /// Report this version to clients instead of the build's (for hand-over tests).
    #[arg(long, hide = true)]
    report_version: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum RankerArg {
    Auto,
    Learned,
    Fusion,
}

impl RankerArg {
    fn ranker(self) -> fittok_engine::rank::Ranker {
        match self {
            RankerArg::Auto => fittok_engine::rank::Ranker::Auto,
            RankerArg::Learned => fittok_engine::rank::Ranker::Learned,
            RankerArg::Fusion => fittok_engine::rank::Ranker::Fusion,
        }
    }
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

fn log_filter(default: &str) -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_env("FITTOK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default))
}

/// The daemon logs to its file in the cache directory (and to stderr when that is a terminal).
/// Logs to the log file (and stderr on a terminal). A log file that cannot be opened does not
/// stop the daemon: it logs to stderr, and says why in `status` (the returned note).
fn init_daemon_log() -> Option<String> {
    use std::io::IsTerminal;
    let path = fittok_proto::paths::log_path();
    let opened = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
        });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(log_filter("info"))
        .with_ansi(false);
    match opened {
        Ok(file) if std::io::stderr().is_terminal() => {
            builder
                .with_writer(std::sync::Mutex::new(file).and(std::io::stderr))
                .init();
            None
        }
        Ok(file) => {
            builder.with_writer(std::sync::Mutex::new(file)).init();
            None
        }
        Err(e) => {
            builder.with_writer(std::io::stderr).init();
            let note = format!("cannot write the log {}: {e}", path.display());
            tracing::warn!("{note}");
            Some(note)
        }
    }
}

/// Whether `HF_HUB_OFFLINE` forbids downloads (the hub's own convention).
fn offline() -> bool {
    std::env::var("HF_HUB_OFFLINE").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// Where the daemon fetches the embedding model from on first use: the hub (`HF_ENDPOINT`,
/// default https://huggingface.co) at `FITTOK_MODEL_REVISION` (default `main`; every file is
/// pinned by its sha256 either way). None when `FITTOK_EMBED_MODEL` names the model's
/// directory, or offline.
fn model_download() -> Option<fittok_engine::embed::download::ModelSource> {
    if std::env::var_os("FITTOK_EMBED_MODEL").is_some_and(|v| !v.is_empty()) || offline() {
        return None;
    }
    let endpoint = std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "https://huggingface.co".into());
    let revision = std::env::var("FITTOK_MODEL_REVISION")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "main".into());
    Some(fittok_engine::embed::download::ModelSource::minilm(
        &endpoint, &revision,
    ))
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let ServeArgs {
        socket,
        idle_timeout,
        memory_budget_mb,
        no_semantic,
        autowatch,
        report_version,
    } = args;
    let log_note = init_daemon_log();
    // candle splits a matrix product over the current rayon pool only when this says more
    // than 1; the embedder's own pools then decide: two threads for a question, one for the
    // background embedder (which leaves a core to queries).
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let threads = fittok_engine::embed::QUESTION_THREADS.to_string();
        // SAFETY: no other thread exists yet.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", threads) };
    }
    if std::env::var_os("FITTOK_EMBED_BATCH_THREADS").is_none() {
        // SAFETY: as above.
        unsafe { std::env::set_var("FITTOK_EMBED_BATCH_THREADS", "1") };
    }
    let opts = fittok_engine::service::server::ServeOptions {
        socket: socket.unwrap_or_else(fittok_proto::paths::socket_path),
        idle_timeout: std::time::Duration::from_secs(idle_timeout),
        residents: fittok_engine::resident::ResidentOptions {
            memory_budget: (memory_budget_mb as usize).saturating_mul(1 << 20),
            semantic: !no_semantic,
            autowatch,
            model_download: model_download(),
            no_download_note: offline().then(|| {
                "HF_HUB_OFFLINE is set, so it is not downloaded; scripts/fetch-model.sh fetches it without the hub".to_string()
            }),
            ..Default::default()
        },
        max_budget: effective_budget(0),
        version: report_version.unwrap_or_else(|| fittok_proto::VERSION.to_string()),
        log_note,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(fittok_engine::service::server::serve(opts));
    if let Err(e) = &served {
        tracing::error!(error = %e, "fittokd failed");
    }
    // Blocking tasks still running (a build nobody waits for) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(served?)
}

/// Errors are one line (`fittokd: cannot index /x: …`), with or without RUST_BACKTRACE: a
/// user's mistake is not a crash.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fittokd: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Command::Serve(args) = cli.command {
        return serve(args);
    }
    tracing_subscriber::fmt()
        .with_env_filter(log_filter("warn"))
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::Serve(_) => unreachable!("handled above"),
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
            out!("{out}");
            if let Some(n) = unresolved {
                out!("{}", inspect::unresolved(&repo, n));
            }
            if let Some(n) = sample {
                out!("{}", inspect::sample(&repo, &path, n));
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
            ranker,
            dump_features,
        } => {
            let mut engine = fittok_engine::Engine::open(&path)
                .with_context(|| format!("cannot index {}", path.display()))?;
            if dump_features {
                let rows = engine.candidate_features(&question);
                let out = serde_json::json!({
                    "features": fittok_engine::rank::features::NAMES,
                    "candidates": rows,
                });
                outln!("{}", serde_json::to_string(&out)?);
                return Ok(());
            }
            if engine.uses_semantic(&question) {
                engine.enable_semantic(semantic.mode());
            }
            let query = fittok_engine::Query {
                question,
                budget: effective_budget(budget as usize),
                encoding: if o200k {
                    fittok_engine::tokens::Encoding::O200k
                } else {
                    fittok_engine::tokens::Encoding::Cl100k
                },
                show_savings: env_flag("FITTOK_SHOW_SAVINGS"),
                explain,
                exclude: Default::default(),
                freshness: None,
                ranker: ranker.ranker(),
                semantic_note: None,
            };
            let answer = engine.query(&query);
            if json {
                outln!("{}", serde_json::to_string_pretty(&answer)?);
            } else {
                out!("{}", answer.text);
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
            outln!(
                "{}: {} files ({:.1} MB), {} nodes, {} edges",
                path.display(),
                g.files.len(),
                bytes as f64 / 1e6,
                g.nodes.len(),
                g.edges.len()
            );
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            outln!(
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
            outln!(
                "semantic coverage {:.0}%",
                engine.semantic_coverage() * 100.0
            );
        }
        Command::Scrub { files } => {
            let mut any = false;
            for path in &files {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let text = String::from_utf8_lossy(&bytes);
                let dialect = fittok_engine::scrub::Dialect::of_path(&path.to_string_lossy());
                for f in fittok_engine::scrub::find(&text, dialect) {
                    any = true;
                    outln!(
                        "{}:{} {} {}",
                        path.display(),
                        f.line,
                        f.kind,
                        fittok_engine::scrub::masked(&text[f.start..f.end])
                    );
                }
            }
            if any {
                std::process::exit(1);
            }
        }
        Command::Fit { action } => {
            let req = action.request().map_err(anyhow::Error::msg)?;
            let reply = fittok_engine::service::fit::run(&req).map_err(anyhow::Error::msg)?;
            out!("{}", fittok_client::cli::fit_text(&req.action, &reply));
            if req.action == "measure" {
                std::process::exit(fittok_client::cli::measure_exit(&reply.verdict));
            }
        }
        Command::Expand { path, ids } => {
            let engine = fittok_engine::Engine::open(&path)
                .with_context(|| format!("cannot index {}", path.display()))?;
            out!("{}", engine.expand(&ids)?);
        }
    }
    Ok(())
}
