//! Where fittok keeps things. Shared by the daemon and its clients so both agree without
//! talking: the cache directory, the daemon's socket, its log and its spawn lock.

use std::path::PathBuf;

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Caches: `FITTOK_CACHE_DIR`, else `$XDG_CACHE_HOME/fittok`, else `~/.cache/fittok`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = env_path("FITTOK_CACHE_DIR") {
        return dir;
    }
    if let Some(dir) = env_path("XDG_CACHE_HOME") {
        return dir.join("fittok");
    }
    match env_path("HOME") {
        Some(home) => home.join(".cache").join("fittok"),
        None => std::env::temp_dir().join("fittok-cache"),
    }
}

/// The daemon's socket: `FITTOK_SOCKET`, else `$XDG_RUNTIME_DIR/fittok/fittokd.sock`, else
/// `run/fittokd.sock` under the (per-user) cache directory.
pub fn socket_path() -> PathBuf {
    if let Some(p) = env_path("FITTOK_SOCKET") {
        return p;
    }
    if let Some(dir) = env_path("XDG_RUNTIME_DIR") {
        return dir.join("fittok").join("fittokd.sock");
    }
    cache_dir().join("run").join("fittokd.sock")
}

/// The daemon's log file.
pub fn log_path() -> PathBuf {
    cache_dir().join("fittokd.log")
}

/// The lock clients hold while starting a daemon on `socket`, beside it.
pub fn spawn_lock_path(socket: &std::path::Path) -> PathBuf {
    let name = socket
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fittokd.sock".into());
    socket.with_file_name(format!("{name}.spawn-lock"))
}
