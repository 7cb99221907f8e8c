//! Where a command's request runs: the daemon (started when none runs), or with
//! `--no-daemon` a `fittokd call` in this process's place. Both take the same request
//! messages and give the same replies, so every command has one code path after this.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fittok_connect::v1::*;
use fittok_connect::{Client, DaemonOptions};
use prost::Message;

use crate::Failure;

pub enum Backend {
    Daemon(Client),
    /// `fittokd call RPC` per request: nothing stays resident.
    InProcess {
        bin: PathBuf,
    },
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
    rpc: &str,
    input: &[u8],
    tx: &tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) -> Result<(), Failure> {
    let cannot_run = |e: std::io::Error| {
        Failure::new(
            fittok_connect::EXIT_DAEMON,
            format!("cannot run {}: {e}", bin.display()),
        )
    };
    let mut child = Command::new(bin)
        .args(["call", rpc])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(cannot_run)?;
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
    match status.code() {
        Some(0) => Ok(()),
        // fittokd said why on stderr already.
        Some(code) => Err(Failure::new(code, String::new())),
        None => Err(Failure::new(1, "the in-process run was killed")),
    }
}

impl Backend {
    /// The daemon (started if needed), or with `no_daemon` the in-process runner.
    pub async fn new(opts: &DaemonOptions, no_daemon: bool) -> Result<Backend, Failure> {
        if no_daemon {
            return Ok(Backend::InProcess {
                bin: opts.bin.clone(),
            });
        }
        Ok(Backend::Daemon(fittok_connect::ensure(opts).await?))
    }

    /// Runs `rpc` in process, calling `each` for every reply as it arrives.
    async fn in_process<Rep: Message + Default>(
        bin: &Path,
        rpc: &'static str,
        req: &impl Message,
        mut each: impl FnMut(Rep),
    ) -> Result<(), Failure> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let bin = bin.to_path_buf();
        let input = req.encode_to_vec();
        let task = tokio::task::spawn_blocking(move || run_call(&bin, rpc, &input, &tx));
        while let Some(bytes) = rx.recv().await {
            let reply = Rep::decode(bytes.as_slice()).map_err(|e| {
                Failure::new(
                    fittok_connect::EXIT_DAEMON,
                    format!("unreadable reply from fittokd call {rpc}: {e}"),
                )
            })?;
            each(reply);
        }
        task.await
            .map_err(|e| Failure::new(1, format!("the in-process run failed: {e}")))?
    }

    async fn unary<Rep: Message + Default>(
        bin: &Path,
        rpc: &'static str,
        req: &impl Message,
    ) -> Result<Rep, Failure> {
        let mut reply = None;
        Self::in_process(bin, rpc, req, |r| reply = Some(r)).await?;
        reply.ok_or_else(|| {
            Failure::new(
                fittok_connect::EXIT_DAEMON,
                format!("fittokd call {rpc} gave no reply"),
            )
        })
    }

    pub async fn query(&mut self, req: QueryRequest) -> Result<QueryReply, Failure> {
        match self {
            Backend::Daemon(c) => Ok(c.query(req).await?.into_inner()),
            Backend::InProcess { bin } => Self::unary(bin, "query", &req).await,
        }
    }

    pub async fn navigate(&mut self, req: NavigateRequest) -> Result<QueryReply, Failure> {
        match self {
            Backend::Daemon(c) => Ok(c.navigate(req).await?.into_inner()),
            Backend::InProcess { bin } => Self::unary(bin, "navigate", &req).await,
        }
    }

    pub async fn expand(&mut self, req: ExpandRequest) -> Result<ExpandReply, Failure> {
        match self {
            Backend::Daemon(c) => Ok(c.expand(req).await?.into_inner()),
            Backend::InProcess { bin } => Self::unary(bin, "expand", &req).await,
        }
    }

    pub async fn graph(&mut self, req: GraphRequest) -> Result<GraphReply, Failure> {
        match self {
            Backend::Daemon(c) => Ok(c.graph(req).await?.into_inner()),
            Backend::InProcess { bin } => Self::unary(bin, "graph", &req).await,
        }
    }

    pub async fn map(&mut self, req: MapRequest) -> Result<MapReply, Failure> {
        match self {
            Backend::Daemon(c) => Ok(c.map(req).await?.into_inner()),
            Backend::InProcess { bin } => Self::unary(bin, "map", &req).await,
        }
    }

    pub async fn fit(&mut self, req: FitRequest) -> Result<FitReply, Failure> {
        match self {
            Backend::Daemon(c) => Ok(c.fit(req).await?.into_inner()),
            Backend::InProcess { bin } => Self::unary(bin, "fit", &req).await,
        }
    }

    /// Indexes, calling `each` with every progress message.
    pub async fn index(
        &mut self,
        req: IndexRequest,
        mut each: impl FnMut(IndexProgress),
    ) -> Result<(), Failure> {
        match self {
            Backend::Daemon(c) => {
                let mut stream = c.index(req).await?.into_inner();
                while let Some(p) = stream.message().await? {
                    each(p);
                }
                Ok(())
            }
            Backend::InProcess { bin } => Self::in_process(bin, "index", &req, each).await,
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
