//! The local socket, on `interprocess` (a Unix domain socket, or a named pipe on Windows):
//! where it is bound and who may connect.
//!
//! What it guarantees, on both platforms: one daemon per name (a live one is "already
//! serving"; on Windows the first pipe instance holds the name); local callers of this user
//! only (the peer's uid, or on Windows its token's user SID, is checked on every connection);
//! and on Unix a 0700 directory and a 0600 socket, a stale socket file replaced (never a
//! file that is not a socket), and a listener inherited from systemd (LISTEN_FDS) used as is.
//! Windows is compile-checked here, not run.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use interprocess::local_socket::ListenerOptions;
use interprocess::local_socket::tokio::prelude::*;
use interprocess::local_socket::tokio::{Listener, Stream};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as platform;
#[cfg(windows)]
use windows as platform;

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("a daemon is already serving on {0}")]
    InUse(PathBuf),
    #[error("cannot prepare the socket directory {path}: {source}")]
    Dir { path: PathBuf, source: io::Error },
    #[error("cannot bind {path}: {source}")]
    Bind { path: PathBuf, source: io::Error },
    #[error("socket path {0} is too long for a Unix socket (max 107 bytes); set FITTOK_SOCKET")]
    TooLong(PathBuf),
    #[error("the listener inherited from the service manager is unusable: {0}")]
    Inherited(io::Error),
    #[error(
        "{0} exists and is not a socket; refusing to replace it (set FITTOK_SOCKET to another path)"
    )]
    NotASocket(PathBuf),
}

impl TransportError {
    /// A failed bind: `InUse` when another daemon holds the name, else the OS error.
    fn bind(path: &Path, source: io::Error, in_use: bool) -> TransportError {
        if in_use {
            TransportError::InUse(path.to_path_buf())
        } else {
            TransportError::Bind {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// The accepted connections, already filtered to our own user, and what to clean up after.
pub struct Listening<S> {
    pub incoming: S,
    pub guard: SocketGuard,
}

/// Removes the socket file at exit, only if it is still the one this daemon bound (path and
/// identity): a successor may own the path by then. A pipe or an inherited socket owns
/// nothing.
pub struct SocketGuard {
    bound: Option<(PathBuf, platform::SocketId)>,
}

impl SocketGuard {
    /// Whether the socket file this daemon bound is still there (always, for a pipe or an
    /// inherited socket). Once it is removed or replaced, no client can reach this daemon.
    pub fn still_bound(&self) -> bool {
        match &self.bound {
            Some((path, id)) => platform::socket_id(path).as_ref() == Some(id),
            None => true,
        }
    }

    pub fn release(self) {
        if let Some((path, id)) = self.bound
            && platform::socket_id(&path) == Some(id)
        {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// One accepted connection, as tonic serves it.
pub struct Connection(Stream);

impl tonic::transport::server::Connected for Connection {
    type ConnectInfo = ();
    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl AsyncRead for Connection {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

/// Binds a listener at `path` with interprocess, the name not reclaimed on drop (the
/// [`SocketGuard`] removes a socket file only while it is still ours).
fn bind(path: &Path) -> Result<Listener, TransportError> {
    let name = path
        .to_fs_name::<interprocess::local_socket::GenericFilePath>()
        .map_err(|source| TransportError::bind(path, source, false))?;
    let options = platform::options(ListenerOptions::new().name(name).reclaim_name(false))
        .map_err(|source| TransportError::bind(path, source, false))?;
    options.create_tokio().map_err(|source| {
        let in_use = platform::in_use(&source);
        TransportError::bind(path, source, in_use)
    })
}

/// Starts listening: on the listener inherited from the service manager if there is one,
/// else on a socket (or pipe) bound at `path`.
pub async fn listen(
    path: &Path,
) -> Result<
    Listening<impl tokio_stream::Stream<Item = io::Result<Connection>> + use<>>,
    TransportError,
> {
    let inherited = platform::inherited()?;
    let from_manager = inherited.is_some();
    let (listener, bound) = match inherited {
        Some(l) => (l, None),
        None => {
            platform::prepare(path).await?;
            let listener = bind(path)?;
            platform::secure(path)?;
            let bound = platform::socket_id(path).map(|id| (path.to_path_buf(), id));
            (listener, bound)
        }
    };
    tracing::info!(socket = %path.display(), from_manager, "listening");
    let incoming = futures_accept(listener);
    Ok(Listening {
        incoming,
        guard: SocketGuard { bound },
    })
}

/// Accepted connections from this user, as a stream; a failed accept is logged and skipped.
fn futures_accept(
    listener: Listener,
) -> impl tokio_stream::Stream<Item = io::Result<Connection>> + use<> {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            // The server stopped accepting: let go of the listener at once.
            let accepted = tokio::select! {
                a = listener.accept() => a,
                () = tx.closed() => return,
            };
            let stream = match accepted {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    // A listener that keeps failing must not spin.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            };
            if !platform::peer_allowed(&stream) {
                continue;
            }
            if tx.send(Ok(Connection(stream))).await.is_err() {
                return; // the server stopped accepting
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}
