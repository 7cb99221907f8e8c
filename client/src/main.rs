//! `fittok`: the command line. Thin: every answer comes from `fittokd`, started on first need.
//! Flags follow the request messages of `fittok.proto` one to one.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser, Subcommand};

/// `println!` that does not panic when stdout is gone (piped into `head`). SIGPIPE must stay
/// ignored in this process: its default would kill the client when the daemon hangs up.
macro_rules! outln {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that does not panic when stdout is gone.
macro_rules! out {
    ($($t:tt)*) => {{
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}
use fittok_client::v1::{
    ExpandRequest, ForgetRequest, IndexRequest, QueryRequest, ShutdownRequest, StatusRequest,
};
use fittok_client::{ClientError, DaemonOptions, EXIT_DAEMON};

#[derive(Parser)]
#[command(
    name = "fittok",
    version,
    about = "The code that answers a question about a repository, within a token budget",
    after_help = "Exit status: 0 success, 1 bad request (path, id), 2 usage, 3 daemon unavailable, 4 the LLM failed, 130 interrupted."
)]
struct Cli {
    /// The daemon's socket (default: FITTOK_SOCKET, else $XDG_RUNTIME_DIR/fittok/fittokd.sock).
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
    Query {
        /// `[PATH] QUESTION`: with two arguments the first is the repository and must exist.
        #[arg(required = true, num_args = 1..=2, value_names = ["PATH", "QUESTION"])]
        args: Vec<String>,
        /// Token budget for the whole answer, at least 200; 0 = no cap (the relevance cliff
        /// decides).
        #[arg(long, default_value_t = 0, value_parser = fittok_client::v1_budget)]
        budget: u32,
        /// Print the code slice only, even when an LLM key is set.
        #[arg(long)]
        code: bool,
        /// The model that writes the answer (default: claude-haiku-4-5 with
        /// ANTHROPIC_API_KEY, gpt-4o-mini with OPENAI_API_KEY, FITTOK_LLM_MODEL with
        /// FITTOK_LLM_BASE_URL).
        #[arg(long)]
        model: Option<String>,
        /// Print the answer as JSON.
        #[arg(long)]
        json: bool,
        /// With --json, include the top N of the ranking with each signal's rank.
        #[arg(long, value_name = "N", default_value_t = 0)]
        explain: u32,
        /// Count tokens with o200k instead of cl100k.
        #[arg(long)]
        o200k: bool,
        /// Append the tokens saved against reading whole files.
        #[arg(long, env = "FITTOK_SHOW_SAVINGS", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false)]
        show_savings: bool,
    },
    /// Make a repository resident and embed it completely, with progress on stderr.
    Index {
        path: Option<PathBuf>,
        /// Return once lexical ranking is ready; embedding goes on in the daemon.
        #[arg(long)]
        no_wait: bool,
    },
    /// The whole source of ids from an answer (`path#Qualified.name`, `path:10-40`, `path`).
    Expand {
        /// Repository (default: the one containing the current directory).
        #[arg(long)]
        repo: Option<PathBuf>,
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// The daemon's version, uptime, memory, and each resident repository.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Drop a repository from the daemon's memory (its caches stay on disk).
    Forget { path: Option<PathBuf> },
    /// Start, stop or restart the daemon, or show its log.
    Daemon {
        #[command(subcommand)]
        action: DaemonAction,
    },
    /// Print a shell completion script.
    Completions { shell: clap_complete::Shell },
    /// Write the code graph as one self-contained HTML page (no network, no side files).
    Graph {
        /// Repository (default: the one containing the current directory).
        path: Option<PathBuf>,
        /// Highlight the nodes the answer to this question would show.
        #[arg(long)]
        query: Option<String>,
        /// Output file (default: `<repository>-graph.html` in the current directory).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Open the page in the default browser.
        #[arg(long)]
        open: bool,
    },
    /// The codebase map (directories, files, definitions with signatures and doc lines) as
    /// Markdown on stdout, or with --fit DIR written there as a Fitted Information Tree
    /// (`DIR/codebase-map.md` + `DIR/codebase-map/`), ready to link from an AGENTS.md.
    Map {
        path: Option<PathBuf>,
        #[arg(long, value_name = "DIR")]
        fit: Option<PathBuf>,
        #[arg(long, default_value_t = 3000)]
        soft_threshold: u32,
        #[arg(long, default_value_t = 5000)]
        hard_threshold: u32,
    },
    /// Fitted Information Trees: split a large Markdown document into a root under a token
    /// threshold and linked subdocuments, losing nothing; or measure one.
    Fit {
        #[command(subcommand)]
        action: fittok_client::cli::FitAction,
    },
    /// Find secrets in files (`path:line kind preview` per finding); exit status 1 when any
    /// is found — for pre-commit hooks. Runs `fittokd scrub` in process.
    Scrub {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Claude Code `UserPromptSubmit` hook: reads the hook JSON on stdin and prints context
    /// for code questions; prints nothing (exit 0) otherwise or on any error.
    Hook,
    /// Run the MCP stdio server (`fittok-mcp`).
    Mcp,
}

#[derive(Subcommand)]
enum DaemonAction {
    Start,
    Stop,
    Restart,
    /// Print the end of the daemon's log.
    Logs {
        #[arg(short = 'n', long, default_value_t = 50)]
        lines: usize,
    },
}

/// A failure with the exit status it maps to.
struct Failure {
    code: i32,
    message: String,
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        let message = match &e {
            ClientError::Rpc(s) => s.message().to_string(),
            _ => e.to_string(),
        };
        Failure {
            code: e.exit_code(),
            message,
        }
    }
}

impl From<tonic::Status> for Failure {
    fn from(s: tonic::Status) -> Self {
        ClientError::Rpc(s).into()
    }
}

fn fail(code: i32, message: impl Into<String>) -> Failure {
    Failure {
        code,
        message: message.into(),
    }
}

/// An explicit repository path (must exist), or the current repository.
fn resolve_repo(path: Option<&Path>) -> Result<PathBuf, Failure> {
    match path {
        Some(p) => p
            .canonicalize()
            .map_err(|_| fail(1, format!("repository path {} does not exist", p.display()))),
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| fail(1, format!("cannot read the current directory: {e}")))?;
            Ok(fittok_client::repo_root(&cwd))
        }
    }
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
            _ = tokio::signal::ctrl_c() => Err(fail(130, "interrupted")),
        }
    };
    match runtime.block_on(interruptible) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("fittok: {}", f.message);
            ExitCode::from(f.code.clamp(1, 255) as u8)
        }
    }
}

fn daemon_options(cli: &Cli) -> DaemonOptions {
    let mut opts = DaemonOptions::default();
    if let Some(s) = &cli.socket {
        opts.socket = s.clone();
    }
    opts
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let opts = daemon_options(&cli);
    match cli.command {
        Command::Query {
            ref args,
            budget,
            code,
            ref model,
            json,
            explain,
            o200k,
            show_savings,
        } => {
            let (path, question) = match args.as_slice() {
                [q] => (None, q.clone()),
                [p, q] => (Some(PathBuf::from(p)), q.clone()),
                _ => return Err(fail(2, "expected [PATH] QUESTION")),
            };
            let repo = resolve_repo(path.as_deref())?;
            let req = QueryRequest {
                repo: repo.display().to_string(),
                question,
                budget,
                o200k,
                explain,
                json,
                show_savings,
                exclude: Vec::new(),
            };
            if cli.no_daemon {
                return in_process_query(&opts, &req);
            }
            let question = req.question.clone();
            let mut client = fittok_client::ensure(&opts).await?;
            let reply = client.query(req).await?.into_inner();
            if json {
                print_out(&reply.json);
            } else if code {
                print_out(&reply.text);
            } else {
                match fittok_client::llm::Provider::from_env(model.as_deref()) {
                    Some(provider) => llm_answer(&provider, &question, &reply.text).await?,
                    None => {
                        print_out(&reply.text);
                        eprintln!(
                            "fittok: no LLM key is set, so this is the code that answers, not a written answer.\nfittok: set ANTHROPIC_API_KEY, OPENAI_API_KEY or FITTOK_LLM_BASE_URL for one; --code prints the code without this hint."
                        );
                    }
                }
            }
        }
        Command::Index { ref path, no_wait } => {
            let repo = resolve_repo(path.as_deref())?;
            if cli.no_daemon {
                return in_process(&opts, &["index".as_ref(), repo.as_os_str()]);
            }
            let mut client = fittok_client::ensure(&opts).await?;
            let mut stream = client
                .index(IndexRequest {
                    repo: repo.display().to_string(),
                    wait_semantic: !no_wait,
                })
                .await?
                .into_inner();
            let bar = std::io::stderr().is_terminal();
            let mut last_phase = String::new();
            while let Some(p) = stream.message().await? {
                if bar {
                    draw_bar(&p.phase, p.done, p.total, &p.message);
                } else if p.phase != last_phase || p.phase == "ready" || p.phase == "done" {
                    if !p.message.is_empty() {
                        eprintln!("{}: {}", p.phase, p.message);
                    } else {
                        eprintln!("{}: {}/{}", p.phase, p.done, p.total);
                    }
                }
                if p.phase == "ready" || p.phase == "done" {
                    outln!("{}", p.message);
                }
                last_phase = p.phase;
            }
            if bar {
                eprintln!();
            }
        }
        Command::Expand { ref repo, ref ids } => {
            let repo = resolve_repo(repo.as_deref())?;
            if cli.no_daemon {
                let mut args = vec!["expand".as_ref(), repo.as_os_str()];
                args.extend(ids.iter().map(std::ffi::OsStr::new));
                return in_process(&opts, &args);
            }
            let mut client = fittok_client::ensure(&opts).await?;
            let reply = client
                .expand(ExpandRequest {
                    repo: repo.display().to_string(),
                    ids: ids.clone(),
                })
                .await?
                .into_inner();
            print_out(&reply.text);
        }
        Command::Status { json } => {
            let mut client = match fittok_client::hello(&opts.socket, "fittok").await {
                Ok((c, _)) => c,
                Err(e @ ClientError::NotRunning { .. }) => {
                    return Err(fail(EXIT_DAEMON, format!("{e} (not running)")));
                }
                Err(e) => return Err(fail(EXIT_DAEMON, e.to_string())),
            };
            let s = client.status(StatusRequest {}).await?.into_inner();
            print_out(&status_text(&s, json));
        }
        Command::Forget { ref path } => {
            let repo = resolve_repo(path.as_deref())?;
            let (mut client, _) = fittok_client::hello(&opts.socket, "fittok").await?;
            let r = client
                .forget(ForgetRequest {
                    repo: repo.display().to_string(),
                })
                .await?
                .into_inner();
            outln!(
                "{} {}",
                repo.display(),
                if r.forgotten {
                    "dropped from memory"
                } else {
                    "was not resident"
                }
            );
        }
        Command::Daemon { ref action } => daemon(&opts, action).await?,
        Command::Graph {
            ref path,
            ref query,
            ref output,
            open,
        } => {
            let repo = resolve_repo(path.as_deref())?;
            let mut client = fittok_client::ensure(&opts).await?;
            let reply = client
                .graph(fittok_client::v1::GraphRequest {
                    repo: repo.display().to_string(),
                    query: query.clone().unwrap_or_default(),
                })
                .await?
                .into_inner();
            let name = repo
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "repository".into());
            let out = output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{name}-graph.html")));
            std::fs::write(&out, &reply.html)
                .map_err(|e| fail(1, format!("cannot write {}: {e}", out.display())))?;
            outln!("{} ({} nodes)", out.display(), reply.nodes);
            if open {
                let opener = if cfg!(target_os = "macos") {
                    "open"
                } else {
                    "xdg-open"
                };
                let _ = std::process::Command::new(opener).arg(&out).status();
            }
        }
        Command::Map {
            ref path,
            ref fit,
            soft_threshold,
            hard_threshold,
        } => {
            let repo = resolve_repo(path.as_deref())?;
            let fit_dir = match fit {
                Some(d) => {
                    std::fs::create_dir_all(d)
                        .map_err(|e| fail(1, format!("cannot create {}: {e}", d.display())))?;
                    d.canonicalize()
                        .map_err(|e| fail(1, format!("{}: {e}", d.display())))?
                        .display()
                        .to_string()
                }
                None => String::new(),
            };
            let mut client = fittok_client::ensure(&opts).await?;
            let reply = client
                .map(fittok_client::v1::MapRequest {
                    repo: repo.display().to_string(),
                    fit_dir,
                    soft_threshold,
                    hard_threshold,
                })
                .await?
                .into_inner();
            if reply.files.is_empty() {
                print_out(&reply.markdown);
            }
            for f in &reply.files {
                outln!("{:>8} tokens  {}", f.tokens, f.path);
            }
        }
        Command::Fit { ref action } => {
            let req = action.request().map_err(|e| fail(1, e))?;
            if cli.no_daemon {
                let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
                args.retain(|a| a != "--no-daemon");
                let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
                return in_process(&opts, &args);
            }
            let mut client = fittok_client::ensure(&opts).await?;
            let reply = client.fit(req.clone()).await?.into_inner();
            out!("{}", fittok_client::cli::fit_text(&req.action, &reply));
            if req.action == "measure" {
                let code = fittok_client::cli::measure_exit(&reply.verdict);
                if code != 0 {
                    return Err(fail(
                        code,
                        format!("{} threshold", reply.verdict.replace("over ", "over the ")),
                    ));
                }
            }
        }
        Command::Scrub { ref files } => {
            let mut args = vec![std::ffi::OsStr::new("scrub")];
            args.extend(files.iter().map(|f| f.as_os_str()));
            return in_process(&opts, &args).map_err(|f| {
                if f.code == 1 {
                    fail(1, "secrets found")
                } else {
                    f
                }
            });
        }
        Command::Hook => {
            let mut input = String::new();
            use std::io::Read;
            let read = std::io::stdin()
                .take(1 << 20)
                .read_to_string(&mut input)
                .is_ok();
            if let Some(input) = read
                .then(|| fittok_client::hook::parse_input(&input))
                .flatten()
            {
                let hook_opts = fittok_client::hook::HookOptions::default();
                if let Some(out) = fittok_client::hook::respond(&input, &opts, &hook_opts).await {
                    print_out(&out);
                }
            }
        }
        Command::Mcp => {
            let name = format!("fittok-mcp{}", std::env::consts::EXE_SUFFIX);
            let bin = std::env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(|d| d.join(&name)))
                .filter(|p| p.is_file())
                .unwrap_or_else(|| name.into());
            let status = std::process::Command::new(&bin)
                .status()
                .map_err(|e| fail(1, format!("cannot run {}: {e}", bin.display())))?;
            if !status.success() {
                return Err(fail(status.code().unwrap_or(1), "fittok-mcp failed"));
            }
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "fittok", &mut std::io::stdout());
        }
    }
    Ok(())
}

/// Exit status when the LLM could not answer.
const EXIT_LLM: i32 = 4;

/// Streams the model's answer to stdout; Ctrl-C stops it cleanly.
async fn llm_answer(
    provider: &fittok_client::llm::Provider,
    question: &str,
    code: &str,
) -> Result<(), Failure> {
    let mut out = std::io::stdout();
    tokio::select! {
        r = provider.answer(question, code, &mut out) => {
            r.map_err(|e| fail(EXIT_LLM, e.to_string()))
        }
        _ = tokio::signal::ctrl_c() => {
            let _ = out.write_all(b"\n");
            Err(fail(130, "interrupted"))
        }
    }
}

fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
}

fn draw_bar(phase: &str, done: u64, total: u64, message: &str) {
    let width = 30;
    let filled = if total == 0 {
        width
    } else {
        (done.min(total) * width as u64 / total) as usize
    };
    let line = if phase == "ready" || phase == "done" {
        message.to_string()
    } else {
        format!(
            "{phase:<8}[{}{}] {done}/{total}",
            "#".repeat(filled),
            ".".repeat(width - filled)
        )
    };
    eprint!("\r\x1b[2K{line}");
    let _ = std::io::stderr().flush();
}

async fn daemon(opts: &DaemonOptions, action: &DaemonAction) -> Result<(), Failure> {
    match action {
        DaemonAction::Start => {
            let mut client = fittok_client::ensure(opts).await?;
            let s = client.status(StatusRequest {}).await?.into_inner();
            outln!(
                "fittokd {} running, pid {}, socket {}",
                s.version,
                s.pid,
                s.socket
            );
        }
        DaemonAction::Stop => stop(opts).await?,
        DaemonAction::Restart => {
            stop(opts).await?;
            let mut client = fittok_client::ensure(opts).await?;
            let s = client.status(StatusRequest {}).await?.into_inner();
            outln!("fittokd {} restarted, pid {}", s.version, s.pid);
        }
        DaemonAction::Logs { lines } => {
            let path = fittok_proto::paths::log_path();
            let text = std::fs::read_to_string(&path)
                .map_err(|e| fail(1, format!("cannot read the log {}: {e}", path.display())))?;
            let all: Vec<&str> = text.lines().collect();
            for line in &all[all.len().saturating_sub(*lines)..] {
                outln!("{line}");
            }
        }
    }
    Ok(())
}

async fn stop(opts: &DaemonOptions) -> Result<(), Failure> {
    match fittok_client::hello(&opts.socket, "fittok").await {
        Ok((mut client, hello)) => {
            client.shutdown(ShutdownRequest { handover: false }).await?;
            let t = std::time::Instant::now();
            while std::process::Command::new("kill")
                .arg("-0")
                .arg(hello.pid.to_string())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
                && t.elapsed() < Duration::from_secs(10)
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            outln!("fittokd (pid {}) stopped", hello.pid);
        }
        Err(e @ ClientError::Unresponsive { .. }) => return Err(fail(EXIT_DAEMON, e.to_string())),
        Err(_) => outln!("fittokd is not running"),
    }
    Ok(())
}

fn ago(ms: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    duration(now.saturating_sub(ms) / 1000) + " ago"
}

fn duration(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {}s", s / 60, s % 60),
        s => format!("{}h {}m", s / 3600, s % 3600 / 60),
    }
}

fn status_text(s: &fittok_client::v1::StatusReply, json: bool) -> String {
    if json {
        let repos: Vec<serde_json::Value> = s
            .repos
            .iter()
            .map(|r| {
                serde_json::json!({
                    "path": r.path, "state": r.state, "files": r.files, "nodes": r.nodes,
                    "edges": r.edges, "semantic_coverage": r.semantic_coverage,
                    "freshness": r.freshness, "indexed_at_ms": r.indexed_at_ms,
                    "last_used_ms": r.last_used_ms, "memory_bytes": r.memory_bytes,
                    "semantic_note": r.semantic_note, "watching": r.watching,
                    "watch_note": r.watch_note, "pending_files": r.pending_files,
                    "updates": r.updates, "updated_at_ms": r.updated_at_ms,
                    "vectors_embedded": r.vectors_embedded,
                })
            })
            .collect();
        let v = serde_json::json!({
            "version": s.version, "protocol": s.protocol, "pid": s.pid,
            "uptime_ms": s.uptime_ms, "rss_bytes": s.rss_bytes,
            "memory_budget_bytes": s.memory_budget_bytes, "idle_timeout_s": s.idle_timeout_s,
            "socket": s.socket, "log_path": s.log_path, "repos": repos,
            "cache_note": s.cache_note, "log_note": s.log_note, "model_note": s.model_note,
        });
        return serde_json::to_string_pretty(&v).unwrap_or_default();
    }
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    let mut out = format!(
        "fittokd {} (protocol {}), pid {}, up {}, RSS {:.0} MB (budget {:.0} MB), idle exit {}\nsocket {}\nlog    {}\n",
        s.version,
        s.protocol,
        s.pid,
        duration(s.uptime_ms / 1000),
        mb(s.rss_bytes),
        mb(s.memory_budget_bytes),
        if s.idle_timeout_s == 0 {
            "never".to_string()
        } else {
            format!("after {}", duration(s.idle_timeout_s))
        },
        s.socket,
        s.log_path
    );
    for note in [&s.cache_note, &s.log_note, &s.model_note] {
        if !note.is_empty() {
            out.push_str(&format!("note   {note}\n"));
        }
    }
    if s.repos.is_empty() {
        out.push_str("no repositories resident\n");
    }
    for r in &s.repos {
        out.push_str(&format!(
            "{}\n  {} · {} files · {} nodes · {} edges · semantic {:.0}% · {} · indexed {} · ~{:.0} MB\n",
            r.path,
            r.state,
            r.files,
            r.nodes,
            r.edges,
            r.semantic_coverage * 100.0,
            r.freshness,
            ago(r.indexed_at_ms),
            mb(r.memory_bytes)
        ));
        out.push_str(&format!(
            "  {} · {} updates, last {} · {} pending files · {} vectors embedded here\n",
            if r.watching {
                "watching".to_string()
            } else {
                format!("not watching ({})", r.watch_note)
            },
            r.updates,
            ago(r.updated_at_ms),
            r.pending_files,
            r.vectors_embedded
        ));
        if !r.semantic_note.is_empty() {
            out.push_str(&format!("  {}\n", r.semantic_note));
        }
    }
    out
}

/// Runs `fittokd` in this process's place for `--no-daemon`, passing its exit status on.
fn in_process(opts: &DaemonOptions, args: &[&std::ffi::OsStr]) -> Result<(), Failure> {
    let status = std::process::Command::new(&opts.bin)
        .args(args)
        .status()
        .map_err(|e| {
            fail(
                EXIT_DAEMON,
                format!("cannot run {}: {e}", opts.bin.display()),
            )
        })?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(fail(code, "the in-process run failed (see above)")),
        None => Err(fail(1, "the in-process run was killed")),
    }
}

fn in_process_query(opts: &DaemonOptions, req: &QueryRequest) -> Result<(), Failure> {
    let budget = req.budget.to_string();
    let explain = req.explain.to_string();
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "query".as_ref(),
        req.repo.as_ref(),
        req.question.as_ref(),
        "--budget".as_ref(),
        budget.as_ref(),
        "--explain".as_ref(),
        explain.as_ref(),
    ];
    if req.json {
        args.push("--json".as_ref());
    }
    if req.o200k {
        args.push("--o200k".as_ref());
    }
    in_process(opts, &args)
}
