//! `fittokd serve`: the daemon.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use fittok_daemon::config::DaemonConfig;
use tracing_subscriber::fmt::writer::MakeWriterExt;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Socket path (default: FITTOK_SOCKET, else $XDG_RUNTIME_DIR/fittok/fittokd.sock,
    /// else run/fittokd.sock in the cache directory).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Exit after this many seconds without calls; 0 = never [default: 1800, or the
    /// configuration file's `idle_timeout`].
    #[arg(long, env = "FITTOK_IDLE_TIMEOUT")]
    idle_timeout: Option<u64>,
    /// Beyond this many MB of resident set, the least recently used repositories leave memory
    /// (their caches stay on disk) [default: 2048, or the file's `memory_budget_mb`].
    #[arg(long, env = "FITTOK_MEMORY_BUDGET_MB")]
    memory_budget_mb: Option<u64>,
    /// Rank without the embedding model (no model load, no background embedding).
    #[arg(long)]
    no_semantic: bool,
    /// Watch resident repositories for changes; `false` checks before each answer instead
    /// [default: true, or the file's `autowatch`].
    #[arg(long, env = "FITTOK_AUTOWATCH", action = clap::ArgAction::Set, value_parser = clap::builder::BoolishValueParser::new())]
    autowatch: Option<bool>,
    /// Report this version to clients instead of the build's (for hand-over tests).
    #[arg(long, hide = true)]
    report_version: Option<String>,
}

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
        .with_env_filter(super::log_filter("info"))
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

pub fn serve(args: ServeArgs, mut config: DaemonConfig) -> anyhow::Result<()> {
    let ServeArgs {
        socket,
        idle_timeout,
        memory_budget_mb,
        no_semantic,
        autowatch,
        report_version,
    } = args;
    let log_note = init_daemon_log();
    // A flag or variable wins over the configuration file, which wins over the default.
    let from_file = |name: &str, expected: &str| -> anyhow::Result<Option<u64>> {
        config
            .file
            .get(name)
            .map(|v| {
                v.trim().parse::<u64>().map_err(|_| {
                    anyhow::anyhow!(
                        "{}: `{}` = {v:?}: {expected}",
                        config.file.path.display(),
                        fittok_daemon::config_file::key_of(name)
                    )
                })
            })
            .transpose()
    };
    let idle_timeout = match idle_timeout {
        Some(s) => s,
        None => from_file("FITTOK_IDLE_TIMEOUT", "expected seconds")?.unwrap_or(1800),
    };
    let memory_budget_mb = match memory_budget_mb {
        Some(mb) => mb,
        None => from_file("FITTOK_MEMORY_BUDGET_MB", "expected megabytes")?.unwrap_or(2048),
    };
    let autowatch = autowatch
        .or_else(|| {
            config
                .file
                .get("FITTOK_AUTOWATCH")
                .map(|v| v != "0" && v != "false")
        })
        .unwrap_or(true);
    if config.source_of("FITTOK_EMBED_BATCH_THREADS") == "default" {
        Arc::make_mut(&mut config.engine).embed.batch_threads = 1;
    }
    let opts = fittok_daemon::service::server::ServeOptions {
        socket: socket.unwrap_or_else(fittok_proto::paths::socket_path),
        idle_timeout: std::time::Duration::from_secs(idle_timeout),
        residents: fittok_daemon::resident::ResidentOptions {
            memory_budget: (memory_budget_mb as usize).saturating_mul(1 << 20),
            semantic: !no_semantic,
            autowatch,
            config,
        },
        version: report_version.unwrap_or_else(|| fittok_proto::VERSION.to_string()),
        log_note,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(fittok_daemon::service::server::serve(opts));
    if let Err(e) = &served {
        tracing::error!(error = %e, "fittokd failed");
    }
    // Blocking tasks still running (a build nobody waits for) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(served?)
}
