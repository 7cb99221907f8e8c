//! The thin client: finds the daemon on its socket, checks versions, and starts `fittokd` when
//! none answers — under a lock, so many clients starting at once start exactly one daemon.
//! No engine code here: every answer comes from the daemon.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use fittok_proto::v1;

pub mod cli;
pub mod hook;
pub mod llm;
pub mod local;
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
    #[error("fittokd speaks protocol {daemon}, this client {client}, and would not hand over")]
    Incompatible { daemon: u32, client: u32 },
    #[error("cannot take the spawn lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Rpc(#[from] tonic::Status),
}

impl ClientError {
    /// The process exit status a shell user sees for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            ClientError::Rpc(s) if s.code() == tonic::Code::NotFound => 1,
            ClientError::Rpc(s) if s.code() == tonic::Code::InvalidArgument => 1,
            _ => EXIT_DAEMON,
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

/// Exit status when the daemon cannot be reached or started.
pub const EXIT_DAEMON: i32 = 3;

/// Connects to the socket (no version check).
pub async fn connect(socket: &Path) -> Result<Client, ClientError> {
    let path = socket.to_path_buf();
    // The URI is required by the API and ignored by the connector.
    let channel = Endpoint::from_static("http://fittokd.local")
        .connect_timeout(Duration::from_secs(2))
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
        s.push_str(": ");
        s.push_str(&inner.to_string());
        cur = inner.source();
    }
    s
}

/// Connects and says hello.
pub async fn hello(socket: &Path, client: &str) -> Result<(Client, HelloReply), ClientError> {
    let mut c = connect(socket).await?;
    let reply = c
        .hello(HelloRequest {
            protocol: fittok_proto::PROTOCOL,
            version: fittok_proto::VERSION.into(),
            client: client.into(),
        })
        .await
        .map_err(|s| ClientError::NotRunning {
            socket: socket.to_path_buf(),
            reason: s.message().to_string(),
        })?
        .into_inner();
    Ok((c, reply))
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

impl Default for DaemonOptions {
    fn default() -> Self {
        DaemonOptions {
            socket: fittok_proto::paths::socket_path(),
            bin: daemon_bin(),
            spawn_timeout: Duration::from_secs(
                std::env::var("FITTOK_SPAWN_TIMEOUT")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(20),
            ),
            client: "fittok".into(),
        }
    }
}

/// The daemon binary: `FITTOK_DAEMON_BIN`, else `fittokd` beside this executable, else the
/// one on PATH.
pub fn daemon_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("FITTOK_DAEMON_BIN").filter(|p| !p.is_empty()) {
        return p.into();
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
    match hello(&opts.socket, &opts.client).await {
        Ok((client, reply)) if !is_older(reply.protocol, &reply.version) => {
            if reply.protocol != fittok_proto::PROTOCOL {
                return Err(ClientError::Incompatible {
                    daemon: reply.protocol,
                    client: fittok_proto::PROTOCOL,
                });
            }
            return Ok(client);
        }
        Ok((mut client, reply)) => {
            let _ = reply;
            let _ = client.shutdown(ShutdownRequest { handover: true }).await;
            drop(client);
            wait_gone(&opts.socket, Duration::from_secs(10)).await;
        }
        Err(_) => {}
    }
    spawn_locked(opts).await
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
    spawn_detached(opts)?;
    let t = Instant::now();
    let result = loop {
        match hello(&opts.socket, &opts.client).await {
            Ok((client, _)) => break Ok(client),
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

/// Starts `fittokd serve` detached: its own process group, no terminal, no inherited pipes.
pub fn spawn_detached(opts: &DaemonOptions) -> Result<(), ClientError> {
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
    let child = cmd.spawn().map_err(|source| ClientError::Spawn {
        bin: opts.bin.clone(),
        source,
    })?;
    // Reap it in the background if it exits while we live; otherwise it outlives us.
    std::thread::spawn(move || {
        let mut child = child;
        let _ = child.wait();
    });
    Ok(())
}
