//! `fittok`: the command line. Thin: every answer comes from `fittokd`, started on first need
//! (or, with `--no-daemon`, run in this process's place). Request flags are derived from
//! `fittok-request`; one module per command.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use fittok_connect::backend::{Backend, StderrTo};
use fittok_connect::{ClientError, DaemonOptions};
use fittok_request::cli::{FitCommand, Flags};

/// `println!` that does not panic when stdout is gone (piped into `head`). SIGPIPE must stay
/// ignored in this process: its default would kill the client when the daemon hangs up.
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

mod daemon;
mod expand;
mod fit;
mod graph;
mod hook;
mod index;
mod launch;
mod map;
mod navigate;
mod query;
mod status;

#[derive(Parser)]
#[command(
    name = "fittok",
    version,
    about = "The code that answers a question about a repository, within a token budget",
    after_help = "Exit status: 0 success, 1 bad request (path, id), 2 usage, 3 daemon unavailable, 4 the LLM failed, 5 the work failed (a disk error), 130 interrupted."
)]
struct Cli {
    /// The daemon's socket (default: FITTOK_SOCKET, else $XDG_RUNTIME_DIR/fittok/fittokd.sock,
    /// else run/fittokd.sock in the cache directory).
    #[arg(long, global = true, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Run in this process through `fittokd` instead of the daemon (for sandboxes that forbid
    /// background processes; nothing stays resident).
    #[arg(long, global = true, env = "FITTOK_NO_DAEMON", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false)]
    no_daemon: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The code that answers QUESTION about the repository at PATH (default: the repository
    /// containing the current directory).
    Query(query::QueryArgs),
    /// Make a repository resident and embed it completely, with progress on stderr.
    Index {
        /// The repository (default: the one containing the current directory).
        path: Option<PathBuf>,
        #[command(flatten)]
        flags: Flags<fittok_request::index::Index>,
    },
    /// Who calls TARGET, what it calls, every use of it, or what a change to it can reach:
    /// each site's code with the referring lines marked, nearest first, within the budget.
    #[command(visible_alias = "nav")]
    Navigate {
        /// A name (`parse_url`, `Session.send`, `Router::route`), an id from an answer
        /// (`path#Qualified.name`) or `path:line`.
        target: String,
        /// The repository (default: the one containing the current directory).
        path: Option<PathBuf>,
        #[command(flatten)]
        flags: Flags<fittok_request::navigate::Navigate>,
    },
    /// The whole source of ids from an answer (`path#Qualified.name`, `path:10-40`, `path`).
    Expand {
        /// Ids as an answer names them: `path#Qualified.name`, `path:start-end` or `path`.
        #[arg(required = true)]
        ids: Vec<String>,
        #[command(flatten)]
        flags: Flags<fittok_request::expand::Expand>,
    },
    /// The daemon's version, uptime, memory, configuration and each resident repository.
    Status {
        /// The status as JSON (the wire's StatusReply).
        #[arg(long)]
        json: bool,
    },
    /// The running daemon's settings: each one's value and where it came from (the
    /// environment it was started with, its configuration file, or the default).
    Config {
        /// The settings as JSON: name, value and source of each.
        #[arg(long)]
        json: bool,
    },
    /// Drop a repository from the daemon's memory (its caches stay on disk).
    Forget {
        /// The repository (default: the one containing the current directory).
        path: Option<PathBuf>,
    },
    /// Start, stop or restart the daemon, or show its log.
    Daemon {
        #[command(subcommand)]
        action: daemon::DaemonAction,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell to write the script for.
        shell: clap_complete::Shell,
    },
    /// Write the code graph as one self-contained HTML page (no network, no side files).
    Graph(graph::GraphArgs),
    /// The codebase map (directories, files, definitions with signatures and doc lines) as
    /// Markdown on stdout, or with --fit DIR written there as a Fitted Information Tree
    /// (`DIR/codebase-map.md` + `DIR/codebase-map/`), ready to link from an AGENTS.md.
    Map {
        /// The repository (default: the one containing the current directory).
        path: Option<PathBuf>,
        #[command(flatten)]
        flags: Flags<fittok_request::map::Map>,
    },
    /// Fitted Information Trees: split a large Markdown document into a root under a token
    /// threshold and linked subdocuments, losing nothing; or measure one.
    Fit {
        #[command(subcommand)]
        action: FitCommand,
    },
    /// Find secrets in files (`path:line kind preview` per finding); exit status 1 when any
    /// is found — for pre-commit hooks. Runs `fittokd scrub` in process.
    Scrub {
        /// Files to read (a missing or unreadable one is reported and skipped, never a finding).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Claude Code `UserPromptSubmit` hook: reads the hook JSON on stdin and prints context
    /// for code questions; prints nothing (exit 0) otherwise or on any error.
    Hook,
    /// Run the MCP stdio server (`fittok-mcp`).
    Mcp,
}

/// A failure with the exit status it maps to (an empty message: already said on stderr).
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn new(code: i32, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// A bad request (exit status 1).
    pub fn bad(message: impl Into<String>) -> Failure {
        Failure::new(fittok_proto::failure::EXIT_BAD_REQUEST, message)
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        let message = match &e {
            ClientError::Rpc(s) => s.message().to_string(),
            _ => e.to_string(),
        };
        Failure::new(e.exit_code(), message)
    }
}

impl From<tonic::Status> for Failure {
    fn from(s: tonic::Status) -> Self {
        ClientError::Rpc(s).into()
    }
}

/// An explicit repository path (must exist), or the current repository.
pub fn resolve_repo(path: Option<&Path>) -> Result<PathBuf, Failure> {
    match path {
        Some(p) => p
            .canonicalize()
            .map_err(|_| Failure::bad(format!("repository path {} does not exist", p.display()))),
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| Failure::bad(format!("cannot read the current directory: {e}")))?;
            let root = fittok_connect::repo_root(&cwd);
            if !root.join(".git").exists() {
                refuse_unrooted(&cwd)?;
            }
            Ok(root)
        }
    }
}

/// Outside any repository the current directory is indexed as one, unless that cannot be
/// what was meant: the home or root directory (everything under it), or a folder holding
/// several repositories. A path named on the command line is always taken as given.
fn refuse_unrooted(cwd: &Path) -> Result<(), Failure> {
    let hint = "run it inside a repository, or name one: `fittok query PATH QUESTION`";
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if cwd.parent().is_none() || home.is_some_and(|h| h == cwd) {
        return Err(Failure::bad(format!(
            "{} is not inside a repository, and indexing all of it is not what you want; {hint}",
            cwd.display()
        )));
    }
    let mut repos: Vec<String> = std::fs::read_dir(cwd)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(".git").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if repos.len() >= 2 {
        repos.sort();
        let more = if repos.len() > 5 { ", …" } else { "" };
        repos.truncate(5);
        return Err(Failure::bad(format!(
            "{} is not a repository but holds {} ({}{more}); {hint}",
            cwd.display(),
            if more.is_empty() { "several" } else { "many" },
            repos.join(", ")
        )));
    }
    Ok(())
}

/// The environment of this process, for whatever reads settings.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Prints `text` whole, with a final newline.
pub fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
}

/// The backend for a request, saying on stderr where the running daemon's configuration and
/// this environment disagree.
pub async fn backend(opts: &DaemonOptions, no_daemon: bool) -> Result<Backend, Failure> {
    if no_daemon {
        return Ok(Backend::new(opts, true, StderrTo::Inherit).await?);
    }
    let (client, notes) = fittok_connect::ensure_noting(opts, env_var).await?;
    for note in notes {
        eprintln!("fittok: note: {note}");
    }
    Ok(Backend::Daemon(client))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fittok: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    // Ctrl-C ends the command with status 130, having printed nothing half-written (answers
    // are printed whole once they arrive); the daemon, in its own process group, carries on.
    let interruptible = async {
        tokio::select! {
            r = run(cli) => r,
            _ = tokio::signal::ctrl_c() => Err(Failure::new(fittok_proto::failure::EXIT_INTERRUPTED, "interrupted")),
        }
    };
    match runtime.block_on(interruptible) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("fittok: {}", f.message);
            }
            ExitCode::from(f.code.clamp(1, 255) as u8)
        }
    }
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let mut opts = DaemonOptions::from_vars("fittok", env_var);
    if let Some(s) = &cli.socket {
        opts.socket = s.clone();
    }
    let no_daemon = cli.no_daemon;
    match cli.command {
        Command::Query(args) => query::run(args, &opts, no_daemon).await,
        Command::Index { path, flags } => {
            index::run(path.as_deref(), flags, &opts, no_daemon).await
        }
        Command::Navigate {
            target,
            path,
            flags,
        } => navigate::run(target, path.as_deref(), flags, &opts, no_daemon).await,
        Command::Expand { ids, flags } => expand::run(ids, flags, &opts, no_daemon).await,
        Command::Status { json } => status::run(&opts, json).await,
        Command::Config { json } => status::config(&opts, json).await,
        Command::Forget { path } => daemon::forget(path.as_deref(), &opts).await,
        Command::Daemon { action } => daemon::run(&opts, &action).await,
        Command::Graph(args) => graph::run(args, &opts, no_daemon).await,
        Command::Map { path, flags } => map::run(path.as_deref(), flags, &opts, no_daemon).await,
        Command::Fit { action } => fit::run(&action, &opts, no_daemon).await,
        Command::Scrub { files } => launch::scrub(&files, &opts),
        Command::Hook => hook::run(&opts, no_daemon).await,
        Command::Mcp => launch::mcp(),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "fittok", &mut std::io::stdout());
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;
    use fittok_request::Request;
    use fittok_request::cli::{expected_flags, long_flags};

    /// The flags of every request command are the definitions' (plus the command's own
    /// output options): a parameter added to a request shows up here, or this fails.
    /// Every subcommand and argument says what it is in `--help`.
    #[test]
    fn every_command_and_argument_is_described() {
        let missing = fittok_request::cli::undescribed(&super::Cli::command());
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }

    #[test]
    fn request_flags_are_derived_from_the_definitions() {
        let cli = Cli::command();
        let flags = |name: &str, own: &[&str]| {
            long_flags(
                cli.find_subcommand(name).expect(name),
                &[&["socket", "no-daemon"], own].concat(),
            )
        };
        assert_eq!(
            flags("query", &[]),
            expected_flags::<fittok_request::query::Query>(true)
        );
        assert_eq!(
            flags("index", &[]),
            expected_flags::<fittok_request::index::Index>(true)
        );
        assert_eq!(
            flags("navigate", &[]),
            expected_flags::<fittok_request::navigate::Navigate>(true)
        );
        assert_eq!(
            flags("expand", &[]),
            expected_flags::<fittok_request::expand::Expand>(true)
        );
        assert_eq!(
            flags("graph", &["output", "open"]),
            expected_flags::<fittok_request::graph::Graph>(true)
        );
        assert_eq!(
            flags("map", &[]),
            expected_flags::<fittok_request::map::Map>(true)
        );
        let fit = cli.find_subcommand("fit").expect("fit");
        let fit_flags = |action: &str| {
            long_flags(
                fit.find_subcommand(action).expect(action),
                &["socket", "no-daemon"],
            )
        };
        assert_eq!(
            fit_flags("generate"),
            expected_flags::<fittok_request::fit::Fit>(true)
        );
        assert_eq!(
            fit_flags("measure"),
            expected_flags::<fittok_request::fit::FitMeasure>(true)
        );
        // Every request with flags is covered above.
        assert!(!fittok_request::query::Query::PARAMS.is_empty());
    }
}
