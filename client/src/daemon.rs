//! `fittok daemon start|stop|restart|logs` and `fittok forget`.

use std::path::Path;
use std::time::{Duration, Instant};

use fittok_connect::v1::{ForgetRequest, ShutdownRequest, StatusRequest};
use fittok_connect::{ClientError, DaemonOptions, EXIT_DAEMON};

use crate::Failure;

#[derive(clap::Subcommand)]
pub enum DaemonAction {
    /// Start the daemon unless one answers, and say which runs.
    Start,
    /// Stop the running daemon (its caches stay on disk).
    Stop,
    /// Stop the running daemon and start a new one (after an upgrade or a settings change).
    Restart,
    /// Print the end of the daemon's log.
    Logs {
        /// How many of the last lines.
        #[arg(short = 'n', long, default_value_t = 50)]
        lines: usize,
    },
}

pub async fn run(opts: &DaemonOptions, action: &DaemonAction) -> Result<(), Failure> {
    match action {
        DaemonAction::Start => {
            let (mut client, notes) = fittok_connect::ensure_noting(opts, crate::env_var).await?;
            let s = client.status(StatusRequest {}).await?.into_inner();
            outln!(
                "fittokd {} running, pid {}, socket {}",
                s.version,
                s.pid,
                s.socket
            );
            for note in notes {
                eprintln!("fittok: note: {note}");
            }
        }
        DaemonAction::Stop => stop(opts).await?,
        DaemonAction::Restart => {
            stop(opts).await?;
            let mut client = fittok_connect::ensure(opts).await?;
            let s = client.status(StatusRequest {}).await?.into_inner();
            outln!("fittokd {} restarted, pid {}", s.version, s.pid);
        }
        DaemonAction::Logs { lines } => {
            let path = fittok_proto::paths::log_path();
            let text = std::fs::read_to_string(&path).map_err(|e| {
                Failure::bad(format!("cannot read the log {}: {e}", path.display()))
            })?;
            let all: Vec<&str> = text.lines().collect();
            for line in &all[all.len().saturating_sub(*lines)..] {
                outln!("{line}");
            }
        }
    }
    Ok(())
}

/// Whether process `pid` still exists.
#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Whether process `pid` still exists (on Windows: whether its pipe still answers, checked
/// by the caller).
#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    false
}

async fn stop(opts: &DaemonOptions) -> Result<(), Failure> {
    match fittok_connect::hello(&opts.socket, "fittok").await {
        Ok((mut client, hello)) => {
            client.shutdown(ShutdownRequest { handover: false }).await?;
            drop(client);
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(10)
                && (alive(hello.pid) || fittok_connect::local::dial(&opts.socket).await.is_ok())
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            outln!("fittokd (pid {}) stopped", hello.pid);
        }
        Err(e @ ClientError::Unresponsive { .. }) => {
            return Err(Failure::new(EXIT_DAEMON, e.to_string()));
        }
        Err(_) => outln!("fittokd is not running"),
    }
    Ok(())
}

pub async fn forget(path: Option<&Path>, opts: &DaemonOptions) -> Result<(), Failure> {
    let repo = crate::resolve_repo(path)?;
    let (mut client, _) = fittok_connect::hello(&opts.socket, "fittok").await?;
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
    Ok(())
}
