//! How every fittok client reaches the daemon: finds it on its socket, checks versions, and
//! starts `fittokd` when none answers — under a lock, so many clients starting at once start
//! exactly one daemon. Shared by the CLI, its hook and the MCP shim.
//!
//! API boundary: [`ensure`] / [`hello`] / [`connect`] give a gRPC [`Client`]; failures are
//! [`ClientError`]s with the exit status README promises. No engine code and no requests
//! here (those are `fittok-request`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use fittok_proto::failure::{EXIT_DAEMON, Failure};
pub use fittok_proto::v1;

pub mod backend;
pub mod local;
pub mod settings;
use fittok_proto::v1::fittok_client::FittokClient;
use fittok_proto::v1::{HelloReply, HelloRequest, ShutdownRequest};
use tonic::transport::{Channel, Endpoint, Uri};

pub type Client = FittokClient<Channel>;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no fittokd answers on {socket}: {reason}")]
    NotRunning { socket: PathBuf, reason: String },
    #[error("cannot start fittokd ({bin}): {source}")]
    Spawn {
        bin: PathBuf,
        source: std::io::Error,
    },
    #[error("fittokd did not answer on {socket} within {secs} s after starting; its log is {log}")]
    SpawnTimeout {
        socket: PathBuf,
        secs: u64,
        log: PathBuf,
    },
    #[error(
        "something accepts connections on {socket} but does not answer within {secs} s (a stopped or frozen fittokd, or another program's socket)"
    )]
    Unresponsive { socket: PathBuf, secs: u64 },
    #[error("fittokd cannot use the socket path {socket}: {reason}")]
    BadSocket { socket: PathBuf, reason: String },
    #[error("fittokd exited before answering ({status}): {detail}")]
    DaemonExited { status: String, detail: String },
    #[error("fittokd speaks protocol {daemon}, this client {client}, and would not hand over")]
    Incompatible { daemon: u32, client: u32 },
    #[error("cannot take the spawn lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Rpc(#[from] tonic::Status),
    /// A `fittokd call` in the client's place failed with this exit status; `message` is its
    /// last stderr line when it was read (empty when the user saw it already).
    #[error("{message}")]
    InProcess { code: i32, message: String },
}

impl ClientError {
    /// The process exit status a shell user sees for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            ClientError::InProcess { code, .. } => *code,
            _ => self.failure().exit_code(),
        }
    }

    /// The class of this failure ([`Failure::Daemon`] unless the daemon answered).
    pub fn failure(&self) -> Failure {
        match self {
            ClientError::Rpc(s) => Failure::of(s),
            _ => Failure::Daemon,
        }
    }
}

/// The root of the repository containing `dir`: the nearest ancestor with `.git`, else `dir`.
pub fn repo_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_path_buf()
}

/// How long a daemon may take to answer `hello`: it answers from its event loop at once, even
/// while indexing, so a longer silence means it is stopped, frozen, or not a fittokd.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// HTTP/2 keep-alive pings during a call: a daemon that stops answering them mid-call (frozen
/// or stopped) fails the call after about interval + timeout, while a long first index, whose
/// daemon still answers pings, is waited for.
const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects to the socket (no version check).
pub async fn connect(socket: &Path) -> Result<Client, ClientError> {
    let path = socket.to_path_buf();
    // The URI is required by the API and ignored by the connector.
    let channel = Endpoint::from_static("http://fittokd.local")
        .connect_timeout(Duration::from_secs(2))
        .http2_keep_alive_interval(KEEP_ALIVE_INTERVAL)
        .keep_alive_timeout(KEEP_ALIVE_TIMEOUT)
        .keep_alive_while_idle(true)
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let path = path.clone();
            async move {
                let stream = local::dial(&path).await?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
            }
        }))
        .await
        .map_err(|e| ClientError::NotRunning {
            socket: socket.to_path_buf(),
            reason: source_chain(&e),
        })?;
    Ok(FittokClient::new(channel)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20))
}

/// An error with its causes, `outer: inner: innermost`.
pub fn source_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        // Many errors print their source in their own message already: say each cause once.
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = inner.source();
    }
    s
}

#[cfg(test)]
mod chain_tests {
    #[derive(Debug, thiserror::Error)]
    #[error("transport error: {0}")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn each_cause_is_said_once() {
        let e = Outer(std::io::Error::from(std::io::ErrorKind::NotFound));
        let s = super::source_chain(&e);
        assert_eq!(s.matches("entity not found").count(), 1, "{s}");
    }
}

/// Connects and says hello, within [`HELLO_TIMEOUT`].
pub async fn hello(socket: &Path, client: &str) -> Result<(Client, HelloReply), ClientError> {
    let unresponsive = || ClientError::Unresponsive {
        socket: socket.to_path_buf(),
        secs: HELLO_TIMEOUT.as_secs(),
    };
    let mut c = tokio::time::timeout(HELLO_TIMEOUT, connect(socket))
        .await
        .map_err(|_| unresponsive())??;
    let call = c.hello(HelloRequest {
        protocol: fittok_proto::PROTOCOL,
        version: fittok_proto::VERSION.into(),
        client: client.into(),
    });
    let reply = tokio::time::timeout(HELLO_TIMEOUT, call)
        .await
        .map_err(|_| unresponsive())?
        .map_err(|s| ClientError::NotRunning {
            socket: socket.to_path_buf(),
            reason: s.message().to_string(),
        })?
        .into_inner();
    Ok((c, reply))
}

/// Why a daemon could never serve on `socket`, found before starting one (instead of after
/// the spawn timeout): a directory, a file that is not a socket, a path too long for a Unix
/// socket address.
pub fn check_socket_path(socket: &Path) -> Result<(), ClientError> {
    // A named pipe has no file to be wrong: only a Unix socket path is checked.
    #[cfg(not(unix))]
    let _ = socket;
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let bad = |reason: String| ClientError::BadSocket {
            socket: socket.to_path_buf(),
            reason,
        };
        // sun_path holds 108 bytes on Linux, 104 on macOS and the BSDs, with the final NUL.
        let max = if cfg!(target_os = "linux") { 107 } else { 103 };
        let len = socket.as_os_str().len();
        if len > max {
            return Err(bad(format!(
                "it is {len} bytes long and a Unix socket path holds at most {max}; set FITTOK_SOCKET or --socket to a shorter one"
            )));
        }
        if let Ok(meta) = std::fs::symlink_metadata(socket) {
            if meta.is_dir() {
                return Err(bad("it is a directory".into()));
            }
            if !meta.file_type().is_socket() {
                return Err(bad(
                    "a file that is not a socket is there, and fittok did not create it".into(),
                ));
            }
        }
    }
    Ok(())
}

/// How to reach the daemon.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    pub socket: PathBuf,
    /// The `fittokd` to start when none runs.
    pub bin: PathBuf,
    pub spawn_timeout: Duration,
    /// Who is calling, for the daemon's log.
    pub client: String,
}

impl DaemonOptions {
    /// The options a client's environment gives, read through `var` (the binary passes its
    /// own): `FITTOK_SOCKET` (else the usual place), `FITTOK_DAEMON_BIN`,
    /// `FITTOK_SPAWN_TIMEOUT` (seconds, default 20). `client` names the caller in the log.
    pub fn from_vars(client: &str, var: impl Fn(&str) -> Option<String>) -> DaemonOptions {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        DaemonOptions {
            socket: fittok_proto::paths::socket_path(),
            bin: daemon_bin(get("FITTOK_DAEMON_BIN").map(PathBuf::from)),
            spawn_timeout: Duration::from_secs(
                get("FITTOK_SPAWN_TIMEOUT")
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(20),
            ),
            client: client.into(),
        }
    }
}

/// The daemon binary: `named` (`FITTOK_DAEMON_BIN`), else `fittokd` beside this executable,
/// else the one on PATH.
pub fn daemon_bin(named: Option<PathBuf>) -> PathBuf {
    if let Some(p) = named {
        return p;
    }
    let name = format!("fittokd{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(&name)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| name.into())
}

/// Whether a daemon reporting (protocol, version) is older than this client.
pub fn is_older(protocol: u32, version: &str) -> bool {
    (protocol, fittok_proto::version_key(version))
        < (
            fittok_proto::PROTOCOL,
            fittok_proto::version_key(fittok_proto::VERSION),
        )
}

/// A client of a daemon of this version or newer, started if none answers; an older daemon
/// is asked to hand over first.
pub async fn ensure(opts: &DaemonOptions) -> Result<Client, ClientError> {
    Ok(ensure_hello(opts).await?.0)
}

/// [`ensure`], and when a daemon was already running, one line per setting that matters in
/// which the caller's environment (`var`) and the daemon's disagree.
pub async fn ensure_noting(
    opts: &DaemonOptions,
    var: impl Fn(&str) -> Option<String>,
) -> Result<(Client, Vec<String>), ClientError> {
    let (client, hello) = ensure_hello(opts).await?;
    let notes = hello.map_or_else(Vec::new, |h| settings::differences(&h.settings, var));
    Ok((client, notes))
}

/// The client, and the running daemon's hello when it was not started here (a daemon started
/// here inherited this environment).
async fn ensure_hello(opts: &DaemonOptions) -> Result<(Client, Option<HelloReply>), ClientError> {
    check_socket_path(&opts.socket)?;
    match hello(&opts.socket, &opts.client).await {
        Ok((client, reply)) if !is_older(reply.protocol, &reply.version) => {
            if reply.protocol != fittok_proto::PROTOCOL {
                return Err(ClientError::Incompatible {
                    daemon: reply.protocol,
                    client: fittok_proto::PROTOCOL,
                });
            }
            return Ok((client, Some(reply)));
        }
        Ok((mut client, reply)) => {
            let _ = reply;
            let _ = client.shutdown(ShutdownRequest { handover: true }).await;
            drop(client);
            wait_gone(&opts.socket, Duration::from_secs(10)).await;
        }
        // A listener that accepts and never answers is not replaced: it may be a daemon
        // under a debugger, or another program's socket.
        Err(e @ ClientError::Unresponsive { .. }) => return Err(e),
        Err(_) => {}
    }
    Ok((spawn_locked(opts).await?, None))
}

/// Waits until nothing answers on the socket (or the timeout passes).
async fn wait_gone(socket: &Path, timeout: Duration) {
    let t = Instant::now();
    while t.elapsed() < timeout {
        if local::dial(socket).await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts one daemon under the spawn lock and waits for it to answer.
async fn spawn_locked(opts: &DaemonOptions) -> Result<Client, ClientError> {
    let lock_path = fittok_proto::paths::spawn_lock_path(&opts.socket);
    if let Some(dir) = lock_path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ClientError::Lock {
            path: lock_path.clone(),
            source,
        })?;
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| ClientError::Lock {
            path: lock_path.clone(),
            source,
        })?;
    // Blocking is fine: the holder is only ever waiting for a daemon to come up.
    let lock = tokio::task::spawn_blocking(move || lock.lock().map(|_| lock))
        .await
        .map_err(|e| ClientError::Lock {
            path: lock_path.clone(),
            source: std::io::Error::other(e),
        })?
        .map_err(|source| ClientError::Lock {
            path: lock_path.clone(),
            source,
        })?;
    // Another client may have started it while we waited for the lock.
    if let Ok((client, reply)) = hello(&opts.socket, &opts.client).await
        && !is_older(reply.protocol, &reply.version)
    {
        return Ok(client);
    }
    let exited = spawn_watched(opts)?;
    let t = Instant::now();
    let result = loop {
        match hello(&opts.socket, &opts.client).await {
            Ok((client, _)) => break Ok(client),
            Err(e @ ClientError::Unresponsive { .. }) => break Err(e),
            Err(_) if let Some(status) = exited.lock().ok().and_then(|s| s.clone()) => {
                break Err(ClientError::DaemonExited {
                    status,
                    detail: last_log_error(&fittok_proto::paths::log_path()),
                });
            }
            Err(_) if t.elapsed() < opts.spawn_timeout => {
                tokio::time::sleep(Duration::from_millis(15)).await;
            }
            Err(_) => {
                break Err(ClientError::SpawnTimeout {
                    socket: opts.socket.clone(),
                    secs: opts.spawn_timeout.as_secs(),
                    log: fittok_proto::paths::log_path(),
                });
            }
        }
    };
    drop(lock);
    result
}

/// The last error or warning line of the daemon's log, or where to look.
fn last_log_error(log: &Path) -> String {
    let text = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text[text.len().saturating_sub(64 << 10)..]);
    text.lines()
        .rev()
        .find(|l| l.contains("ERROR") || l.contains("WARN"))
        .map(|l| strip_ansi(l).trim().to_string())
        .unwrap_or_else(|| format!("see {}", log.display()))
}

/// A log line without terminal colour codes.
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Starts the daemon like [`spawn_detached`], and says how it exited if it exits while this
/// client waits for it.
fn spawn_watched(
    opts: &DaemonOptions,
) -> Result<std::sync::Arc<std::sync::Mutex<Option<String>>>, ClientError> {
    let exited = std::sync::Arc::new(std::sync::Mutex::new(None));
    let slot = exited.clone();
    let child = start(opts)?;
    std::thread::spawn(move || {
        let mut child = child;
        if let Ok(status) = child.wait()
            && let Ok(mut s) = slot.lock()
        {
            *s = Some(status.to_string());
        }
    });
    Ok(exited)
}

/// Starts `fittokd serve` detached: its own process group, no terminal, no inherited pipes.
pub fn spawn_detached(opts: &DaemonOptions) -> Result<(), ClientError> {
    let child = start(opts)?;
    // Reap it in the background if it exits while we live; otherwise it outlives us.
    std::thread::spawn(move || {
        let mut child = child;
        let _ = child.wait();
    });
    Ok(())
}

fn start(opts: &DaemonOptions) -> Result<std::process::Child, ClientError> {
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(&opts.bin);
    cmd.arg("serve")
        .arg("--socket")
        .arg(&opts.socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        // winbase.h: no console, its own process group (Ctrl-C in our console spares it).
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    }
    cmd.spawn().map_err(|source| ClientError::Spawn {
        bin: opts.bin.clone(),
        source,
    })
}
