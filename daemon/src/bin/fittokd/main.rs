//! `fittokd`: the daemon (`fittokd serve`) and the engine's in-process command line.
//!
//! Configuration is parsed here, once, from flags and this process's environment
//! ([`DaemonConfig`]), and passed down; nothing below reads the environment for settings.

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
use fittok_daemon::config::DaemonConfig;
use fittok_daemon::config_file::ConfigFile;
use fittok_daemon::service::ServiceError;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod inspect;
mod local;
mod serve;

#[derive(Parser)]
#[command(
    name = "fittokd",
    version,
    about = "fittok's engine and daemon",
    after_help = "Exit status: 0 success, 1 bad request (path, id), 2 usage, 4 the LLM failed, 5 the work failed (a disk error)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the daemon: serve the gRPC API on the local socket until idle, SIGTERM or a
    /// Shutdown call. Uses the listener inherited from systemd when LISTEN_FDS says so.
    Serve(serve::ServeArgs),
    /// Parse a repository and print, per language: files parsed/skipped, nodes and edges by
    /// kind, resolution rate, parse time.
    Inspect {
        /// The repository.
        path: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Skip files larger than this many bytes (default: FITTOK_MAX_FILE_BYTES, else 1 MiB).
        #[arg(long)]
        max_file_bytes: Option<u64>,
        /// Also list the N most frequent unresolved references (receiver and name).
        #[arg(long, value_name = "N")]
        unresolved: Option<usize>,
        /// Also print N resolved references per language, sampled evenly, with the source
        /// line and the definition each resolved to: for checking precision by eye.
        #[arg(long, value_name = "N")]
        sample: Option<usize>,
        /// Also list the first N syntax diagnostics (file, line, message): where a grammar
        /// refused the code, and definitions around it may be missing.
        #[arg(long, value_name = "N")]
        diagnostics: Option<usize>,
    },
    /// Answer a question about a repository in process: the code that answers it, within a
    /// token budget. FITTOK_MAX_BUDGET caps the budget.
    Query(local::QueryArgs),
    /// Index a repository completely (graph, lexical indexes, every embedding into the
    /// cache) and report the time each stage took.
    Index {
        /// The repository.
        path: PathBuf,
    },
    /// Find secrets in files: one line per finding (`path:line kind preview`); exit status 1
    /// when any is found (for pre-commit hooks).
    Scrub {
        /// Files to read (a missing or unreadable one is reported and skipped, never a finding).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Fitted Information Trees, in process (`fittok fit` does the same through the daemon).
    Fit {
        #[command(subcommand)]
        action: fittok_request::cli::FitCommand,
    },
    /// Print the whole source of ids from an answer (`path#Qualified.name` or `path:10-40`).
    Expand(local::ExpandArgs),
    /// Run one request of the daemon's API in this process: the request (protobuf) on stdin,
    /// the replies on stdout, length-delimited. What `fittok --no-daemon` runs.
    #[command(hide = true)]
    Call {
        /// The RPC to run; its request (protobuf) is read on stdin, its replies written to stdout length-delimited.
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(fittok_daemon::service::local::RPCS))]
        rpc: String,
    },
}

/// How a command ended badly: a request error carries its class (and exit status), anything
/// else exits 1.
enum Failed {
    Service(ServiceError),
    Other(anyhow::Error),
}

impl From<ServiceError> for Failed {
    fn from(e: ServiceError) -> Self {
        Failed::Service(e)
    }
}

impl From<anyhow::Error> for Failed {
    fn from(e: anyhow::Error) -> Self {
        Failed::Other(e)
    }
}

fn log_filter(default: &str) -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_env("FITTOK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default))
}

/// A daemon that cannot start says why in its log, where the client that spawned it (with no
/// terminal) looks for the reason.
fn startup_error_to_log(e: &anyhow::Error) {
    use std::io::Write;
    let path = fittok_proto::paths::log_path();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(f, "ERROR fittokd: cannot start: {e:#}");
    }
}

/// The configuration of this process: its environment over its configuration file, the
/// cache in the usual place.
fn config() -> anyhow::Result<DaemonConfig> {
    let path = fittok_proto::paths::config_file();
    let file = ConfigFile::read(&path, &fittok_daemon::config::file_settings())?;
    DaemonConfig::from_sources(
        Some(fittok_proto::paths::cache_dir()),
        |k| std::env::var(k).ok(),
        &file,
    )
    .with_context(|| format!("bad configuration (the environment, or {})", path.display()))
}

/// Errors are one line (`fittokd: cannot index /x: …`), with or without RUST_BACKTRACE: a
/// user's mistake is not a crash.
fn main() -> std::process::ExitCode {
    without_transparent_huge_pages();
    free_memory_promptly();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(Failed::Service(e)) => {
            eprintln!("fittokd: {e}");
            std::process::ExitCode::from(e.failure().exit_code() as u8)
        }
        Err(Failed::Other(e)) => {
            eprintln!("fittokd: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Keeps the kernel from backing this process's heap with 2 MiB pages. mimalloc asks for
/// them on its arenas, and a huge page stays resident while any byte of it is live: after a
/// cold build of apache/kafka 400 of the daemon's 540 MB were huge pages, and without them it
/// held 460 MB for the same data (bench/results/daemon.md). Queries did not slow measurably.
fn without_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE only sets a flag of this process; it touches no memory
        // of ours. An old kernel without it returns an error, which changes nothing.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
}

/// mimalloc's `mi_option_purge_delay` (mimalloc.h, v3): how long freed pages stay committed.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed pages stay committed here: 10 ms, not v3's second.
const PURGE_DELAY_MS: std::ffi::c_long = 10;

/// Returns freed pages to the system soon after they are freed. mimalloc purges late pages
/// only when the thread that freed them allocates again, and after a second most of the
/// threads that free the most — the build's workers, the embedder's between bursts — sit
/// idle: kafka with the model present held 800 MB with v3's delay and 600 MB with 10 ms. No
/// delay at all held as little but made the first answer slower (it loads the model), by
/// re-committing pages just freed (bench/results/daemon.md).
fn free_memory_promptly() {
    // SAFETY: sets one of mimalloc's option values; no memory is touched.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
}

fn run() -> Result<(), Failed> {
    let cli = Cli::parse();
    let config = match config() {
        Ok(c) => c,
        Err(e) => {
            if matches!(cli.command, Command::Serve(_)) {
                startup_error_to_log(&e);
            }
            return Err(e.into());
        }
    };
    if let Command::Serve(args) = cli.command {
        return Ok(serve::serve(args, config)?);
    }
    // Colour only for a person at a terminal: a client reading this process's stderr (the CLI
    // with `--no-daemon`, a script, a log) gets plain lines.
    tracing_subscriber::fmt()
        .with_env_filter(log_filter("warn"))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match cli.command {
        Command::Serve(_) => unreachable!("handled above"),
        Command::Inspect {
            path,
            json,
            max_file_bytes,
            unresolved,
            sample,
            diagnostics,
        } => {
            let mut walk = config.engine.walk.clone();
            if let Some(max) = max_file_bytes {
                walk.max_file_bytes = max;
            }
            let repo = fittok_engine::repo::build(&path, &walk)
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
            if let Some(n) = diagnostics {
                out!("{}", inspect::diagnostics(&repo, n));
            }
        }
        Command::Query(args) => local::query(args, &config)?,
        Command::Index { path } => local::index(&path, &config)?,
        Command::Scrub { files } => local::scrub(&files)?,
        Command::Fit { action } => local::fit(&action, &config)?,
        Command::Expand(args) => local::expand(args, &config)?,
        Command::Call { rpc } => local::call(&rpc, config)?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use fittok_request::cli::{expected_flags, long_flags};

    /// Every subcommand and argument says what it is in `--help`.
    #[test]
    fn every_command_and_argument_is_described() {
        let missing = fittok_request::cli::undescribed(&super::Cli::command());
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }

    /// The option number is the purge delay's in the mimalloc this links: it holds v3's
    /// default of 1000 ms, and setting it reads back.
    #[test]
    fn the_purge_delay_option_is_mimallocs() {
        // SAFETY: reads and sets one of mimalloc's option values.
        let (before, after) = unsafe {
            let before = libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY);
            super::free_memory_promptly();
            (
                before,
                libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY),
            )
        };
        assert_eq!((before, after), (1000, super::PURGE_DELAY_MS));
    }

    /// fittokd's request flags are the definitions' wire flags (plus its engine knobs):
    /// a parameter added to a request shows up here, or this fails.
    #[test]
    fn request_flags_are_derived_from_the_definitions() {
        let cli = super::Cli::command();
        let query = cli.find_subcommand("query").expect("query");
        assert_eq!(
            long_flags(query, super::local::QUERY_ENGINE_FLAGS),
            expected_flags::<fittok_request::query::Query>(false)
        );
        let fit = cli.find_subcommand("fit").expect("fit");
        let fit_flags = |action: &str| long_flags(fit.find_subcommand(action).expect(action), &[]);
        assert_eq!(
            fit_flags("generate"),
            expected_flags::<fittok_request::fit::Fit>(false)
        );
        assert_eq!(
            fit_flags("measure"),
            expected_flags::<fittok_request::fit::FitMeasure>(false)
        );
        let expand = cli.find_subcommand("expand").expect("expand");
        assert_eq!(
            long_flags(expand, &[]),
            expected_flags::<fittok_request::expand::Expand>(false)
        );
    }
}
