//! The Unix side of the transport: the socket's directory and file, the peer's uid, and the
//! listener systemd passes by socket activation.

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use interprocess::local_socket::ListenerOptions;
use interprocess::local_socket::tokio::{Listener, Stream};
use interprocess::local_socket::traits::StreamCommon;
use interprocess::os::unix::local_socket::ListenerOptionsExt;

use super::TransportError;

/// What identifies one socket file: device, inode and change time. The inode alone is not
/// enough: a successor that replaces a stale socket may get the same inode number, and its
/// socket would then be taken for ours (and removed at our exit).
pub type SocketId = (u64, u64, i64, i64);

/// The identity of the socket file, to remove it at exit only if it is still ours.
pub fn socket_id(path: &Path) -> Option<SocketId> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino(), m.ctime(), m.ctime_nsec()))
}

/// The uid of this process.
fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The socket is created 0600 (and made so again after binding, in [`secure`]).
pub fn options(o: ListenerOptions<'_>) -> io::Result<ListenerOptions<'_>> {
    Ok(o.mode(0o600))
}

/// Whether a bind failed because another process holds the address.
pub fn in_use(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::AddrInUse
}

/// Whether a connected peer runs as our user.
pub fn peer_allowed(stream: &Stream) -> bool {
    match stream.peer_creds() {
        Ok(creds) if creds.euid() == Some(own_uid()) => true,
        Ok(creds) => {
            tracing::warn!(
                peer_uid = ?creds.euid(),
                peer_pid = ?creds.pid(),
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
pub fn inherited() -> Result<Option<Listener>, TransportError> {
    use std::os::fd::{FromRawFd, OwnedFd};
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
    // SAFETY: single-threaded startup; the variables are for this process only and must not
    // leak into children.
    unsafe {
        std::env::remove_var("LISTEN_PID");
        std::env::remove_var("LISTEN_FDS");
        std::env::remove_var("LISTEN_FDNAMES");
    }
    // SAFETY: by the socket-activation protocol, fd 3 is an open listening socket that systemd
    // handed to this process and nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(3) };
    interprocess::os::unix::uds_local_socket::tokio::Listener::try_from(fd)
        .map(|l| Some(Listener::from(l)))
        .map_err(TransportError::Inherited)
}

/// Before binding at `path`: its directory exists and is 0700 (when it is ours), and a socket
/// file there is replaced only if no daemon answers on it; any other file is refused.
pub async fn prepare(path: &Path) -> Result<(), TransportError> {
    if path.as_os_str().len() > 107 {
        return Err(TransportError::TooLong(path.to_path_buf()));
    }
    if let Some(dir) = path.parent() {
        let dir_err = |source| TransportError::Dir {
            path: dir.to_path_buf(),
            source,
        };
        // New directories are private from the start; existing ones are checked below.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(dir)
            .map_err(dir_err)?;
        // Only tighten a directory we own (XDG_RUNTIME_DIR/fittok, the cache's run/); a shared
        // parent given through FITTOK_SOCKET is left alone.
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
    Ok(())
}

/// After binding: the socket file is 0600 whatever the umask.
pub fn secure(path: &Path) -> Result<(), TransportError> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|source| {
        TransportError::Bind {
            path: path.to_path_buf(),
            source,
        }
    })
}
