//! Where a client's request runs: the daemon (started when none runs), or with
//! `FITTOK_NO_DAEMON` / `--no-daemon` a `fittokd call` in the client's place. Both take the
//! same request messages and give the same replies, so every client (the CLI, the hook, the
//! MCP shim) has one code path after this.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use prost::Message;

use crate::v1::*;
use crate::{Client, ClientError, DaemonOptions};

#[derive(Clone)]
pub enum Backend {
    Daemon(Client),
    /// `fittokd call RPC` per request: nothing stays resident.
    InProcess {
        bin: PathBuf,
        /// The child's stderr goes to this process's (a terminal user sees its warnings and
        /// its one failure line as they come); else it is read, and a failure carries its
        /// last line (an MCP server answers with it).
        stderr: StderrTo,
    },
}

/// Where an in-process run's stderr goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StderrTo {
    Inherit,
    Capture,
}

/// A yes/no setting as clap's boolish flags read it (`FITTOK_NO_DAEMON` for clients without
/// clap): `None` for anything else.
pub fn boolish(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "t" | "true" | "on" | "1" => Some(true),
        "n" | "no" | "f" | "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Reads one length-delimited message, or `None` at the end of the stream.
fn read_delimited(r: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut len: u64 = 0;
    for shift in (0..64).step_by(7) {
        let mut byte = [0u8; 1];
        if r.read(&mut byte)? == 0 {
            return if shift == 0 {
                Ok(None)
            } else {
                Err(std::io::ErrorKind::UnexpectedEof.into())
            };
        }
        len |= u64::from(byte[0] & 0x7f) << shift;
        if byte[0] & 0x80 == 0 {
            let mut buf = vec![0u8; usize::try_from(len).map_err(std::io::Error::other)?];
            r.read_exact(&mut buf)?;
            return Ok(Some(buf));
        }
    }
    Err(std::io::Error::other("message length overflows"))
}

/// Runs `fittokd call rpc` with `input` on stdin, sending each reply it writes to `tx`. Its
/// stderr is the user's: a failure's one line reaches them as it would from `fittokd`.
fn run_call(
    bin: &Path,
    stderr: StderrTo,
    rpc: &str,
    input: &[u8],
    tx: &tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) -> Result<(), ClientError> {
    let cannot_run = |e: std::io::Error| ClientError::Spawn {
        bin: bin.to_path_buf(),
        source: e,
    };
    let mut child = Command::new(bin)
        .args(["call", rpc])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match stderr {
            StderrTo::Inherit => Stdio::inherit(),
            StderrTo::Capture => Stdio::piped(),
        })
        .spawn()
        .map_err(cannot_run)?;
    // Read on its own thread, so a child that fills the pipe never blocks.
    let errors = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = e.read_to_string(&mut text);
            text
        })
    });
    if let Some(mut stdin) = child.stdin.take() {
        // A child that exits before reading reports why on its stderr; its status says.
        let _ = stdin.write_all(input);
    }
    if let Some(stdout) = child.stdout.take() {
        let mut out = std::io::BufReader::new(stdout);
        while let Ok(Some(message)) = read_delimited(&mut out) {
            if tx.send(message).is_err() {
                break;
            }
        }
    }
    let status = child.wait().map_err(cannot_run)?;
    let said = errors
        .and_then(|t| t.join().ok())
        .and_then(|text| {
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.strip_prefix("fittokd: ").unwrap_or(l).to_string())
        })
        // Inherited: fittokd said why on stderr already.
        .unwrap_or_default();
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(ClientError::InProcess {
            code,
            message: said,
        }),
        None => Err(ClientError::InProcess {
            code: 1,
            message: "the in-process run was killed".into(),
        }),
    }
}

/// One method per unary RPC, each running on the daemon or in process alike.
macro_rules! unary {
    ($($rpc:ident($req:ty) -> $rep:ty;)*) => {
        $(
            pub async fn $rpc(&mut self, req: $req) -> Result<$rep, ClientError> {
                match self {
                    Backend::Daemon(c) => Ok(c.$rpc(req).await?.into_inner()),
                    Backend::InProcess { bin, stderr } => {
                        Self::unary(bin, *stderr, stringify!($rpc), &req).await
                    }
                }
            }
        )*
    };
}

impl Backend {
    /// The daemon (started if needed), or with `no_daemon` the in-process runner.
    pub async fn new(
        opts: &DaemonOptions,
        no_daemon: bool,
        stderr: StderrTo,
    ) -> Result<Backend, ClientError> {
        if no_daemon {
            return Ok(Backend::InProcess {
                bin: opts.bin.clone(),
                stderr,
            });
        }
        Ok(Backend::Daemon(crate::ensure(opts).await?))
    }

    /// Runs `rpc` in process, calling `each` for every reply as it arrives.
    async fn in_process<Rep: Message + Default>(
        bin: &Path,
        stderr: StderrTo,
        rpc: &'static str,
        req: &impl Message,
        mut each: impl FnMut(Rep),
    ) -> Result<(), ClientError> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let bin = bin.to_path_buf();
        let input = req.encode_to_vec();
        let task = tokio::task::spawn_blocking(move || run_call(&bin, stderr, rpc, &input, &tx));
        while let Some(bytes) = rx.recv().await {
            let reply = Rep::decode(bytes.as_slice()).map_err(|e| ClientError::DaemonExited {
                status: format!("fittokd call {rpc}"),
                detail: format!("unreadable reply: {e}"),
            })?;
            each(reply);
        }
        task.await.map_err(|e| ClientError::InProcess {
            code: 1,
            message: format!("the in-process run failed: {e}"),
        })?
    }

    async fn unary<Rep: Message + Default>(
        bin: &Path,
        stderr: StderrTo,
        rpc: &'static str,
        req: &impl Message,
    ) -> Result<Rep, ClientError> {
        let mut reply = None;
        Self::in_process(bin, stderr, rpc, req, |r| reply = Some(r)).await?;
        reply.ok_or_else(|| ClientError::DaemonExited {
            status: format!("fittokd call {rpc}"),
            detail: "no reply".into(),
        })
    }

    unary! {
        query(QueryRequest) -> QueryReply;
        navigate(NavigateRequest) -> QueryReply;
        expand(ExpandRequest) -> ExpandReply;
        graph(GraphRequest) -> GraphReply;
        map(MapRequest) -> MapReply;
        fit(FitRequest) -> FitReply;
    }

    /// The daemon's status; `None` in process, where nothing stays resident to report.
    pub async fn status(&mut self) -> Result<Option<StatusReply>, ClientError> {
        match self {
            Backend::Daemon(c) => Ok(Some(c.status(StatusRequest {}).await?.into_inner())),
            Backend::InProcess { .. } => Ok(None),
        }
    }

    /// Indexes, calling `each` with every progress message.
    pub async fn index(
        &mut self,
        req: IndexRequest,
        mut each: impl FnMut(IndexProgress),
    ) -> Result<(), ClientError> {
        match self {
            Backend::Daemon(c) => {
                let mut stream = c.index(req).await?.into_inner();
                while let Some(p) = stream.message().await? {
                    each(p);
                }
                Ok(())
            }
            Backend::InProcess { bin, stderr } => {
                Self::in_process(bin, *stderr, "index", &req, each).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimited_messages_read_back() {
        let a = QueryReply {
            text: "x".repeat(300),
            ..Default::default()
        };
        let b = QueryReply::default();
        let mut bytes = a.encode_length_delimited_to_vec();
        bytes.extend(b.encode_length_delimited_to_vec());
        let mut r = bytes.as_slice();
        let first = read_delimited(&mut r).unwrap().unwrap();
        assert_eq!(QueryReply::decode(first.as_slice()).unwrap(), a);
        let second = read_delimited(&mut r).unwrap().unwrap();
        assert_eq!(QueryReply::decode(second.as_slice()).unwrap(), b);
        assert!(read_delimited(&mut r).unwrap().is_none());
        let cut = &a.encode_length_delimited_to_vec()[..1];
        assert!(read_delimited(&mut &cut[..]).is_err());
    }
}
