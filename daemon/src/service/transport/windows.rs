//! The daemon's named pipe on Windows. Compile-checked here (x86_64-pc-windows-gnu) but never
//! run: this machine has no Windows. What holds it to the Unix contract:
//! - one daemon per name: the first instance is created with FILE_FLAG_FIRST_PIPE_INSTANCE,
//!   so a second daemon fails with "in use" instead of sharing the name;
//! - local callers only (remote clients rejected) and the caller's user checked: the token
//!   user SID of the client process must equal ours, as the Unix peer uid must;
//! - a pipe disappears with its process, so there is never a stale file to replace.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};

use super::{Listening, SocketGuard, TransportError};

/// winerror.h: the name is held by another process's first instance.
const ERROR_ACCESS_DENIED: i32 = 5;

/// An accepted pipe connection, as tonic serves it.
pub struct PipeConnection(NamedPipeServer);

impl tonic::transport::server::Connected for PipeConnection {
    type ConnectInfo = ();
    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl AsyncRead for PipeConnection {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for PipeConnection {
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

fn instance(path: &Path, first: bool) -> io::Result<NamedPipeServer> {
    ServerOptions::new()
        .first_pipe_instance(first)
        .reject_remote_clients(true)
        .create(path)
}

/// Creates the pipe and accepts on it until the returned stream is dropped. A new instance is
/// created before each accepted one is handed over, so a client never finds the name absent.
pub async fn listen(
    path: &Path,
) -> Result<
    Listening<impl tokio_stream::Stream<Item = io::Result<PipeConnection>> + use<>>,
    TransportError,
> {
    let mut next = instance(path, true).map_err(|source| {
        let in_use = source.raw_os_error() == Some(ERROR_ACCESS_DENIED);
        TransportError::bind(path, source, in_use)
    })?;
    tracing::info!(pipe = %path.display(), "listening");
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let name = path.to_path_buf();
    tokio::spawn(async move {
        loop {
            if let Err(e) = next.connect().await {
                tracing::warn!(error = %e, "accept failed");
                match instance(&name, false) {
                    Ok(fresh) => next = fresh,
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                }
                continue;
            }
            let connected = match instance(&name, false) {
                Ok(fresh) => std::mem::replace(&mut next, fresh),
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            if !peer_allowed(&connected) {
                continue;
            }
            if tx.send(Ok(PipeConnection(connected))).await.is_err() {
                return; // the server stopped accepting
            }
        }
    });
    Ok(Listening {
        incoming: tokio_stream::wrappers::ReceiverStream::new(rx),
        guard: SocketGuard { bound: None },
    })
}

/// Whether the process at the other end of `pipe` runs as our user.
fn peer_allowed(pipe: &NamedPipeServer) -> bool {
    use std::os::windows::io::AsRawHandle;
    match (client_user(pipe.as_raw_handle()), own_user()) {
        (Ok(peer), Ok(own)) if peer == own => true,
        (Ok(_), Ok(_)) => {
            tracing::warn!("connection from another user refused");
            false
        }
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(error = %e, "peer identity unavailable; connection refused");
            false
        }
    }
}

/// The user SID (as bytes) of the process connected to the pipe.
fn client_user(pipe: std::os::windows::io::RawHandle) -> io::Result<Vec<u8>> {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Pipes::GetNamedPipeClientProcessId;
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};
    let mut pid = 0u32;
    // SAFETY: `pipe` is a live pipe handle owned by the caller; `pid` is a valid out pointer.
    if unsafe { GetNamedPipeClientProcessId(pipe, &mut pid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: plain call; a null handle is an error, checked below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    let user = process_user(process);
    // SAFETY: `process` was opened above and is closed once.
    unsafe { CloseHandle(process) };
    user
}

/// The user SID of this process.
fn own_user() -> io::Result<Vec<u8>> {
    // SAFETY: the pseudo-handle of the current process needs no closing.
    process_user(unsafe { windows_sys::Win32::System::Threading::GetCurrentProcess() })
}

/// The token user SID of `process`, copied out as bytes (SIDs compare bytewise).
fn process_user(process: windows_sys::Win32::Foundation::HANDLE) -> io::Result<Vec<u8>> {
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::Security::{
        GetLengthSid, GetTokenInformation, TOKEN_QUERY, TOKEN_USER, TokenUser,
    };
    use windows_sys::Win32::System::Threading::OpenProcessToken;
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: `process` is a valid process handle; `token` is a valid out pointer.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let result = (|| {
        let mut len = 0u32;
        // SAFETY: a size query: null buffer of length 0, `len` receives the size needed.
        unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut len) };
        if len == 0 {
            return Err(io::Error::last_os_error());
        }
        // u64 words keep the TOKEN_USER (which holds pointers) aligned.
        let mut buf = vec![0u64; (len as usize).div_ceil(8)];
        // SAFETY: `buf` holds at least `len` bytes.
        let ok = unsafe {
            GetTokenInformation(token, TokenUser, buf.as_mut_ptr().cast(), len, &mut len)
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: on success the buffer starts with a TOKEN_USER whose SID points into it.
        let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
        // SAFETY: `sid` is a valid SID inside `buf`, of GetLengthSid bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts(sid.cast::<u8>(), GetLengthSid(sid) as usize).to_vec()
        };
        Ok(bytes)
    })();
    // SAFETY: `token` was opened above and is closed once.
    unsafe { CloseHandle(token) };
    result
}
