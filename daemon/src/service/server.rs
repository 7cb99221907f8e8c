//! Running the daemon: listener, service, and lifecycle — idle exit, SIGTERM/SIGINT and the
//! Shutdown call all end in one graceful stop (in-flight calls finish, the socket file goes).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use fittok_proto::v1::fittok_server::FittokServer;

use super::transport::{self, TransportError};
use super::{Activity, FittokService, ServiceInfo};
use crate::resident::{ResidentOptions, Residents, now_ms};

#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub socket: PathBuf,
    /// Exit after this long without calls (and no background work); zero = never.
    pub idle_timeout: Duration,
    pub residents: ResidentOptions,
    /// The version reported to clients.
    pub version: String,
    /// Why the log file is not written, if it is not (the daemon logs to stderr instead).
    pub log_note: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("serving failed: {0}")]
    Serve(String),
}

/// Resolves when the daemon should stop: a signal, the Shutdown call, or idleness.
async fn stop_requested(
    mut shutdown: tokio::sync::watch::Receiver<bool>,
    activity: Arc<Activity>,
    residents: Arc<Residents>,
    idle_timeout: Duration,
    still_bound: impl Fn() -> bool,
) {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let tick = if idle_timeout.is_zero() {
        Duration::from_secs(3600)
    } else {
        (idle_timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
    };
    loop {
        #[cfg(unix)]
        let terminated = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let terminated = std::future::pending::<()>();
        tokio::select! {
            _ = terminated => {
                tracing::info!("SIGTERM: stopping after in-flight calls");
                return;
            }
            _ = tokio::signal::ctrl_c() => {
                tracing::info!("SIGINT: stopping after in-flight calls");
                return;
            }
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    return;
                }
            }
            _ = tokio::time::sleep(tick.min(SOCKET_CHECK)) => {
                // Unreachable once its socket file is removed or replaced: a new daemon may
                // be starting on the path, and would otherwise run beside this one.
                if !still_bound() {
                    tracing::warn!("socket file removed or replaced: stopping");
                    return;
                }
                if idle_timeout.is_zero() {
                    continue;
                }
                let idle_ms = now_ms().saturating_sub(activity.last_call_ms.load(Ordering::SeqCst));
                if activity.in_flight.load(Ordering::SeqCst) == 0
                    && !residents.is_embedding()
                    && idle_ms >= idle_timeout.as_millis() as u64
                {
                    tracing::info!(idle_s = idle_ms / 1000, "idle: stopping");
                    return;
                }
            }
        }
    }
}

/// How often a daemon checks that its socket file is still its own.
const SOCKET_CHECK: Duration = Duration::from_secs(2);

/// Resolves once no call is in flight (or after `limit`).
async fn calls_done(activity: Arc<Activity>, limit: Duration) {
    let t = std::time::Instant::now();
    while activity.in_flight.load(Ordering::SeqCst) > 0 && t.elapsed() < limit {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if t.elapsed() >= limit {
        tracing::warn!(
            "calls still running after {} s; stopping anyway",
            limit.as_secs()
        );
    }
}

/// Serves until stopped. The listener is the one inherited from the service manager if any,
/// else a socket bound at `opts.socket` (a named pipe on Windows).
pub async fn serve(opts: ServeOptions) -> Result<(), ServeError> {
    let listening = transport::listen(&opts.socket).await?;
    tracing::info!(
        socket = %opts.socket.display(),
        pid = std::process::id(),
        version = %opts.version,
        "fittokd serving"
    );
    let residents = Residents::new(None, opts.residents.clone());
    // A predecessor still closing may hold the cache's lock for a few seconds: serve
    // meanwhile, and take the cache when it is free.
    if let Some(cache) = &opts.residents.config.engine.cache_dir {
        residents.open_store(cache.join(fittok_engine::engine::STORE_FILE));
    }
    let activity = Arc::new(Activity::default());
    activity.last_call_ms.store(now_ms(), Ordering::SeqCst);
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    let info = ServiceInfo {
        version: opts.version.clone(),
        socket: opts.socket.clone(),
        log_path: fittok_proto::paths::log_path(),
        log_note: opts.log_note.clone(),
        idle_timeout: opts.idle_timeout,
        in_process: false,
    };
    let service = FittokService::new(residents.clone(), activity.clone(), info, shutdown_tx);
    let guard = listening.guard;
    let stop = stop_requested(
        shutdown_rx,
        activity.clone(),
        residents.clone(),
        opts.idle_timeout,
        || guard.still_bound(),
    );
    let (graceful_tx, graceful_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tonic::transport::Server::builder().serve_with_incoming_shutdown(
        FittokServer::new(service)
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20),
        listening.incoming,
        async {
            let _ = graceful_rx.await;
        },
    );
    tokio::pin!(server);
    let served = tokio::select! {
        served = &mut server => served,
        _ = stop => {
            // Stop accepting and let calls in flight finish; idle connections (a shim keeps
            // one open) must not hold the exit, so stop waiting once no call runs.
            residents.begin_stop();
            let _ = graceful_tx.send(());
            tokio::select! {
                served = &mut server => served,
                _ = calls_done(activity, Duration::from_secs(30)) => Ok(()),
            }
        }
    };
    residents.stop();
    guard.release();
    tracing::info!("fittokd stopped");
    served.map_err(|e| ServeError::Serve(e.to_string()))
}
