//! The local transport a client dials: a Unix domain socket, or on Windows a named pipe
//! (`\\.\pipe\…`). Windows is compile-checked here but not run; see README.

use std::io;
use std::path::Path;

/// A connected stream to the daemon.
#[cfg(unix)]
pub type LocalStream = tokio::net::UnixStream;
#[cfg(windows)]
pub type LocalStream = tokio::net::windows::named_pipe::NamedPipeClient;

/// Opens a connection to the daemon's socket (or pipe) at `path`.
#[cfg(unix)]
pub async fn dial(path: &Path) -> io::Result<LocalStream> {
    tokio::net::UnixStream::connect(path).await
}

/// Opens a connection to the daemon's pipe at `path`. All instances busy is not a refusal:
/// the daemon creates the next instance right after each accept, so wait a little and retry.
#[cfg(windows)]
pub async fn dial(path: &Path) -> io::Result<LocalStream> {
    use std::time::{Duration, Instant};
    // winerror.h: all pipe instances are busy.
    const ERROR_PIPE_BUSY: i32 = 231;
    let started = Instant::now();
    loop {
        match tokio::net::windows::named_pipe::ClientOptions::new().open(path) {
            Err(e)
                if e.raw_os_error() == Some(ERROR_PIPE_BUSY)
                    && started.elapsed() < Duration::from_secs(2) =>
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            other => return other,
        }
    }
}
