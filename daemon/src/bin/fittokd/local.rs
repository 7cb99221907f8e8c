//! `fittokd`'s in-process commands. Requests are built from `fittok-request` and converted
//! into the engine's types by the service's own functions, as the daemon does.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use fittok_daemon::config::DaemonConfig;
use fittok_daemon::resident::ResidentOptions;
use fittok_daemon::service::{self, ServiceError, ServiceInfo};
use fittok_engine::engine::SemanticMode;
use fittok_engine::{Config, Engine};
use fittok_proto::v1::FitAction;
use fittok_request::cli::{FitCommand, WireFlags};

#[derive(clap::Args)]
pub struct QueryArgs {
    /// The repository.
    path: PathBuf,
    /// The question (quote it).
    question: String,
    #[command(flatten)]
    flags: WireFlags<fittok_request::query::Query>,
    /// Semantic ranking: `off`, `cached` (cached vectors, plus what can be embedded in about
    /// two seconds), or `full` (embed every node first).
    #[arg(long, value_enum, default_value_t = SemanticArg::Cached)]
    semantic: SemanticArg,
    /// Which model orders the candidates: `auto` (the learned ranker in the languages it was
    /// trained on, reciprocal rank fusion elsewhere), `learned` or `fusion`.
    #[arg(long, value_enum, default_value_t = RankerArg::Auto)]
    ranker: RankerArg,
    /// Print every candidate with the learned ranker's features as JSON instead of an answer
    /// (what `scripts/train/train.py` trains on).
    #[arg(long, hide = true)]
    dump_features: bool,
}

/// The flags `fittokd query` adds to the request's own (engine knobs for benchmarks).
#[cfg(test)]
pub const QUERY_ENGINE_FLAGS: &[&str] = &["semantic", "ranker", "dump-features"];

#[derive(clap::Args)]
pub struct ExpandArgs {
    /// Ids as an answer names them: `path#Qualified.name`, `path:start-end` or `path`.
    #[arg(required = true)]
    ids: Vec<String>,
    #[command(flatten)]
    flags: WireFlags<fittok_request::expand::Expand>,
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

/// A repository path as the daemon takes it: existing, absolute.
fn repo_root(path: &Path) -> Result<PathBuf, ServiceError> {
    path.canonicalize().map_err(|_| {
        ServiceError::BadRequest(format!("repository path {} does not exist", path.display()))
    })
}

fn open(root: &Path, config: &Arc<Config>) -> Result<Engine, ServiceError> {
    Ok(Engine::open(root, config.clone())?)
}

pub fn query(args: QueryArgs, config: &DaemonConfig) -> Result<(), ServiceError> {
    let t = Instant::now();
    let typed = fittok_request::query::QueryArgs {
        question: args.question,
        ..fittok_request::query::QueryArgs::from_values(&args.flags.values)
    };
    let root = repo_root(&args.path)?;
    let req = fittok_request::query::request(root.display().to_string(), &typed);
    let mut q = service::query::engine_query(&req, config.max_budget)?;
    q.ranker = args.ranker.ranker();
    let mut engine = open(&root, &config.engine)?;
    // One answer, then the process ends: the history is read on the answer's path.
    match engine.read_history() {
        Ok(Some(history)) => engine.set_history(Arc::new(history)),
        Ok(None) => {}
        Err(e) => tracing::debug!(error = %e, "answering without the repository's history"),
    }
    if args.dump_features {
        let rows = engine.candidate_features(&q.question);
        let out = serde_json::json!({
            "features": fittok_engine::rank::features::NAMES,
            "candidates": rows,
        });
        outln!("{out}");
        engine.store_parses();
        return Ok(());
    }
    if engine.uses_semantic(&q.question) {
        engine.enable_semantic(args.semantic.mode());
    }
    let reply = service::query::reply(&engine, &q, req.json, t)?;
    if req.json {
        outln!("{}", reply.json);
    } else {
        out!("{}", reply.text);
    }
    // The answer is out: the next command reuses these parses.
    engine.store_parses();
    Ok(())
}

pub fn index(path: &Path, config: &DaemonConfig) -> Result<(), ServiceError> {
    let t = Instant::now();
    let root = repo_root(path)?;
    let mut engine = open(&root, &config.engine)?;
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
    if engine.is_restored() {
        outln!("restored from the snapshot in {:.0} ms", ms(tm.snapshot));
    }
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
        engine.semantic.coverage() * 100.0
    );
    // The next open (daemon or command) then only checks stamps. A cache that cannot take it
    // costs that speed-up, not this command.
    if let Err(e) = engine.save_snapshot() {
        tracing::warn!(error = %e, "snapshot not saved");
    }
    Ok(())
}

pub fn expand(args: ExpandArgs, config: &DaemonConfig) -> Result<(), ServiceError> {
    let typed = fittok_request::expand::ExpandArgs {
        ids: args.ids,
        ..fittok_request::expand::ExpandArgs::from_values(&args.flags.values)
    };
    let repo = match &typed.repo {
        Some(r) => PathBuf::from(r),
        None => std::env::current_dir()
            .map_err(|e| ServiceError::BadRequest(format!("no current directory: {e}")))?,
    };
    let root = repo_root(&repo)?;
    let req = fittok_request::expand::request(root.display().to_string(), &typed);
    let engine = open(&root, &config.engine)?;
    let expanded = engine.expand(&req.ids);
    engine.store_parses();
    out!("{}", expanded?);
    Ok(())
}

/// Exit status of `scrub` when a file could not be read and no secret was found.
const SCRUB_UNREADABLE: i32 = 5;

pub fn scrub(files: &[PathBuf]) -> anyhow::Result<()> {
    let mut any = false;
    let mut unreadable = false;
    for path in files {
        // A file named but gone (a pre-commit hook lists a deletion) holds no secret; one that
        // cannot be read is said, and is not a finding either.
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                eprintln!("fittokd: {} does not exist; skipped", path.display());
                continue;
            }
            Err(e) => {
                eprintln!("fittokd: cannot read {}: {e}; skipped", path.display());
                unreadable = true;
                continue;
            }
        };
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
    if unreadable {
        std::process::exit(SCRUB_UNREADABLE);
    }
    Ok(())
}

pub fn fit(command: &FitCommand, config: &DaemonConfig) -> Result<(), ServiceError> {
    let (action, path, values) = command.parts();
    let shown = path.display().to_string();
    let path = path
        .canonicalize()
        .map_err(|_| ServiceError::BadRequest(format!("{shown} does not exist")))?;
    let req = fittok_request::fit::request(
        action,
        path.display().to_string(),
        &fittok_request::fit::FitArgs::from_values(values),
    );
    let reply = service::fit::run(&req, config.llm_api_key.as_deref())?;
    out!("{}", fittok_request::fit::reply_text(action, &reply));
    if action == FitAction::Measure {
        std::process::exit(fittok_request::fit::measure_exit(reply.verdict()));
    }
    Ok(())
}

/// `fittokd call RPC`: one request on stdin, its replies on stdout; a failure exits with its
/// class's status and one line on stderr.
pub fn call(rpc: &str, config: DaemonConfig) -> anyhow::Result<()> {
    use std::io::Read;
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("cannot read the request on stdin")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let info = ServiceInfo {
        version: fittok_proto::VERSION.to_string(),
        socket: PathBuf::new(),
        log_path: PathBuf::new(),
        log_note: None,
        idle_timeout: std::time::Duration::ZERO,
        in_process: true,
    };
    let opts = ResidentOptions {
        config,
        ..ResidentOptions::default()
    };
    let result = runtime.block_on(async {
        let svc = service::local::service(opts, info);
        service::local::call(&svc, rpc, &input, &mut std::io::stdout().lock()).await
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    if let Err(status) = result {
        eprintln!("fittokd: {}", status.message());
        std::process::exit(fittok_proto::failure::Failure::of(&status).exit_code());
    }
    Ok(())
}
