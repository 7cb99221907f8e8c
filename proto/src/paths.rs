//! Where fittok keeps things. Shared by the daemon and its clients so both agree without
//! talking: the cache directory, the daemon's socket, its log and its spawn lock.

use std::path::PathBuf;

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Caches: `FITTOK_CACHE_DIR`, else `$XDG_CACHE_HOME/fittok`, else `~/.cache/fittok`
/// (on Windows `%LOCALAPPDATA%\fittok`).
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = env_path("FITTOK_CACHE_DIR") {
        return dir;
    }
    if let Some(dir) = env_path("XDG_CACHE_HOME") {
        return dir.join("fittok");
    }
    #[cfg(windows)]
    if let Some(dir) = env_path("LOCALAPPDATA") {
        return dir.join("fittok");
    }
    match env_path("HOME") {
        Some(home) => home.join(".cache").join("fittok"),
        None => std::env::temp_dir().join("fittok-cache"),
    }
}

/// The daemon's configuration file: `FITTOK_CONFIG`, else `$XDG_CONFIG_HOME/fittok/config.toml`,
/// else `~/.config/fittok/config.toml` (on macOS `~/Library/Application Support/fittok/`, on
/// Windows `%APPDATA%\fittok\`).
pub fn config_file() -> PathBuf {
    if let Some(p) = env_path("FITTOK_CONFIG") {
        return p;
    }
    if let Some(dir) = env_path("XDG_CONFIG_HOME") {
        return dir.join("fittok").join("config.toml");
    }
    #[cfg(windows)]
    if let Some(dir) = env_path("APPDATA") {
        return dir.join("fittok").join("config.toml");
    }
    let home = env_path("HOME").unwrap_or_else(std::env::temp_dir);
    if cfg!(target_os = "macos") {
        home.join("Library/Application Support/fittok/config.toml")
    } else {
        home.join(".config").join("fittok").join("config.toml")
    }
}

/// The daemon's socket: `FITTOK_SOCKET`, else `$XDG_RUNTIME_DIR/fittok/fittokd.sock`, else
/// `run/fittokd.sock` under the (per-user) cache directory.
#[cfg(not(windows))]
pub fn socket_path() -> PathBuf {
    if let Some(p) = env_path("FITTOK_SOCKET") {
        return p;
    }
    if let Some(dir) = env_path("XDG_RUNTIME_DIR") {
        return dir.join("fittok").join("fittokd.sock");
    }
    cache_dir().join("run").join("fittokd.sock")
}

/// The daemon's named pipe: `FITTOK_SOCKET` (a name outside `\\.\pipe\` is moved there),
/// else one named after the cache directory — per user, as the cache directory is, and
/// distinct for every `FITTOK_CACHE_DIR` as the Unix socket under it is.
#[cfg(windows)]
pub fn socket_path() -> PathBuf {
    match env_path("FITTOK_SOCKET") {
        Some(p) => pipe_name(&p),
        None => PathBuf::from(format!(
            r"\\.\pipe\fittokd-{:016x}",
            fnv1a(cache_dir().to_string_lossy().to_lowercase().as_bytes())
        )),
    }
}

/// `p` as a pipe name: kept when it is one already, else its text with separators and colons
/// replaced, under `\\.\pipe\`.
#[cfg(any(windows, test))]
fn pipe_name(p: &std::path::Path) -> PathBuf {
    let s = p.to_string_lossy();
    if s.starts_with(r"\\.\pipe\") {
        return p.to_path_buf();
    }
    let flat: String = s
        .chars()
        .map(|c| {
            if matches!(c, '\\' | '/' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    PathBuf::from(format!(r"\\.\pipe\{}", flat.trim_start_matches('-')))
}

/// FNV-1a, 64 bits: a stable short name for a path.
#[cfg(any(windows, test))]
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The daemon's log file.
pub fn log_path() -> PathBuf {
    cache_dir().join("fittokd.log")
}

/// The lock clients hold while starting a daemon on `socket`: beside it, or for a Windows
/// pipe (which has no directory) under the cache directory's `run/`.
pub fn spawn_lock_path(socket: &std::path::Path) -> PathBuf {
    let name = socket
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fittokd.sock".into());
    if cfg!(windows) {
        return cache_dir().join("run").join(format!("{name}.spawn-lock"));
    }
    socket.with_file_name(format!("{name}.spawn-lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_name_is_kept_and_a_path_is_moved_under_the_pipe_namespace() {
        let pipe = PathBuf::from(r"\\.\pipe\mine");
        assert_eq!(pipe_name(&pipe), pipe);
        assert_eq!(
            pipe_name(std::path::Path::new(r"C:\Users\me\fittokd.sock")),
            PathBuf::from(r"\\.\pipe\C--Users-me-fittokd.sock")
        );
        assert_eq!(
            pipe_name(std::path::Path::new("/tmp/x.sock")),
            PathBuf::from(r"\\.\pipe\tmp-x.sock")
        );
    }

    #[test]
    fn pipe_names_differ_by_cache_directory() {
        assert_ne!(fnv1a(b"c:\\a"), fnv1a(b"c:\\b"));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    }
}
