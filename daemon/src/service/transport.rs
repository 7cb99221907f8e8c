//! The local socket: where it is bound and who may connect. The directory is 0700 and the
//! socket 0600; a connection from another user is refused by its peer credentials even if
//! permissions were loosened; a socket file left by a dead daemon is replaced; a listener
//! inherited from systemd (LISTEN_FDS) is used as is. On Windows the socket is a named pipe
//! (`windows.rs`, compile-checked only): local clients only, the peer's user checked by SID.

use std::io;
#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;

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
    fn bind(path: &std::path::Path, source: io::Error, in_use: bool) -> TransportError {
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

#[cfg(unix)]
type SocketId = unix::SocketId;
#[cfg(not(unix))]
type SocketId = ();

/// Removes the socket file at exit, only if it is still the one this daemon bound (path and
/// inode): a successor may own the path by then. A pipe or an inherited socket owns nothing.
pub struct SocketGuard {
    bound: Option<(PathBuf, SocketId)>,
}

impl SocketGuard {
    /// Whether the socket file this daemon bound is still there (always, for a pipe or an
    /// inherited socket). Once it is removed or replaced, no client can reach this daemon.
    pub fn still_bound(&self) -> bool {
        #[cfg(unix)]
        if let Some((path, inode)) = &self.bound {
            return unix::socket_id(path) == Some(*inode);
        }
        true
    }

    pub fn release(self) {
        #[cfg(unix)]
        if let Some((path, inode)) = self.bound
            && unix::socket_id(&path) == Some(inode)
        {
            let _ = std::fs::remove_file(&path);
        }
        #[cfg(not(unix))]
        let _ = self.bound;
    }
}

/// Starts listening: on the listener inherited from the service manager if there is one,
/// else on a socket bound at `path`.
#[cfg(unix)]
pub async fn listen(
    path: &Path,
) -> Result<
    Listening<impl tokio_stream::Stream<Item = io::Result<tokio::net::UnixStream>> + use<>>,
    TransportError,
> {
    use tokio_stream::StreamExt;
    let inherited = unix::inherited()?;
    let from_manager = inherited.is_some();
    let listener = match inherited {
        Some(l) => l,
        None => unix::bind(path).await?,
    };
    tracing::info!(socket = %path.display(), from_manager, "listening");
    let bound = if from_manager {
        None
    } else {
        unix::socket_id(path).map(|id| (path.to_path_buf(), id))
    };
    let incoming =
        tokio_stream::wrappers::UnixListenerStream::new(listener).filter(|conn| match conn {
            Ok(stream) => unix::peer_allowed(stream),
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                false
            }
        });
    Ok(Listening {
        incoming,
        guard: SocketGuard { bound },
    })
}

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::listen;

#[cfg(unix)]
mod unix {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    /// The uid of this process.
    pub fn own_uid() -> u32 {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() }
    }

    /// Whether a connected peer runs as our user.
    pub fn peer_allowed(stream: &tokio::net::UnixStream) -> bool {
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == own_uid() => true,
            Ok(cred) => {
                tracing::warn!(
                    peer_uid = cred.uid(),
                    peer_pid = ?cred.pid(),
                    "connection from another user refused"
                );
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, "peer credentials unavailable; connection refused");
                false
            }
        }
    }

    /// A listener passed by systemd socket activation, if this process is its target.
    pub fn inherited() -> Result<Option<tokio::net::UnixListener>, TransportError> {
        use std::os::fd::FromRawFd;
        let pid_matches = std::env::var("LISTEN_PID")
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
            == Some(std::process::id());
        let fds = std::env::var("LISTEN_FDS")
            .ok()
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or(0);
        if !pid_matches || fds == 0 {
            return Ok(None);
        }
        // SAFETY: single-threaded startup; the variables are for this process only and must
        // not leak into children.
        unsafe {
            std::env::remove_var("LISTEN_PID");
            std::env::remove_var("LISTEN_FDS");
            std::env::remove_var("LISTEN_FDNAMES");
        }
        // SAFETY: by the socket-activation protocol, fd 3 is an open listening socket that
        // systemd handed to this process and nobody else owns.
        let std_listener = unsafe { std::os::unix::net::UnixListener::from_raw_fd(3) };
        std_listener
            .set_nonblocking(true)
            .map_err(TransportError::Inherited)?;
        tokio::net::UnixListener::from_std(std_listener)
            .map(Some)
            .map_err(TransportError::Inherited)
    }

    /// Binds the socket at `path`: creates its directory 0700, replaces a stale socket file,
    /// refuses when a live daemon answers there, and sets the socket 0600.
    pub async fn bind(path: &Path) -> Result<tokio::net::UnixListener, TransportError> {
        if path.as_os_str().len() > 107 {
            return Err(TransportError::TooLong(path.to_path_buf()));
        }
        if let Some(dir) = path.parent() {
            let dir_err = |source| TransportError::Dir {
                path: dir.to_path_buf(),
                source,
            };
            // New directories are private from the start; existing ones are checked below.
            std::os::unix::fs::DirBuilderExt::mode(
                std::fs::DirBuilder::new().recursive(true),
                0o700,
            )
            .create(dir)
            .map_err(dir_err)?;
            // Only tighten a directory we own (XDG_RUNTIME_DIR/fittok, the cache's run/); a
            // shared parent given through FITTOK_SOCKET is left alone.
            if let Ok(meta) = std::fs::metadata(dir)
                && meta.uid() == own_uid()
                && meta.permissions().mode() & 0o077 != 0
            {
                let is_ours = dir.file_name().is_some_and(|n| n == "fittok" || n == "run");
                if is_ours {
                    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                        .map_err(dir_err)?;
                }
            }
        }
        // Only a socket file may be replaced, and only a stale one: a user's file or folder at
        // this path is never touched.
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            use std::os::unix::fs::FileTypeExt;
            if !meta.file_type().is_socket() {
                return Err(TransportError::NotASocket(path.to_path_buf()));
            }
            match tokio::net::UnixStream::connect(path).await {
                Ok(_) => return Err(TransportError::InUse(path.to_path_buf())),
                Err(e) => {
                    tracing::info!(socket = %path.display(), error = %e, "stale socket file replaced");
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        let listener = tokio::net::UnixListener::bind(path).map_err(|source| {
            let in_use = source.kind() == io::ErrorKind::AddrInUse;
            TransportError::bind(path, source, in_use)
        })?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
            |source| TransportError::Bind {
                path: path.to_path_buf(),
                source,
            },
        )?;
        Ok(listener)
    }

    /// What identifies one socket file: device, inode and change time. The inode alone is
    /// not enough: a successor that replaces a stale socket may get the same inode number,
    /// and its socket would then be taken for ours (and removed at our exit).
    pub type SocketId = (u64, u64, i64, i64);

    /// The identity of the socket file, to remove it at exit only if it is still ours.
    pub fn socket_id(path: &Path) -> Option<SocketId> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino(), m.ctime(), m.ctime_nsec()))
    }
}
