//! The Windows side of the transport: a named pipe through interprocess (the first instance
//! holds the name, remote clients are rejected), and the client's user checked by the SID of
//! its process token, as the Unix peer uid is. Compile-checked here, never run: this machine
//! has no Windows. A pipe disappears with its process, so there is never a stale file.

use std::io;
use std::path::Path;

use interprocess::local_socket::ListenerOptions;
use interprocess::local_socket::tokio::{Listener, Stream};
use interprocess::local_socket::traits::StreamCommon;

use super::TransportError;

/// A pipe has no file to identify.
pub type SocketId = ();

pub fn socket_id(_: &Path) -> Option<SocketId> {
    None
}

/// winerror.h: the name is held by another process's first instance.
const ERROR_ACCESS_DENIED: i32 = 5;
/// winerror.h: every instance of the pipe is busy (another daemon serves it).
const ERROR_PIPE_BUSY: i32 = 231;

pub fn options(o: ListenerOptions<'_>) -> io::Result<ListenerOptions<'_>> {
    Ok(o)
}

/// Whether creating the first instance failed because another daemon holds the name.
pub fn in_use(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(ERROR_ACCESS_DENIED) | Some(ERROR_PIPE_BUSY)
    )
}

/// No service manager hands pipes over.
pub fn inherited() -> Result<Option<Listener>, TransportError> {
    Ok(None)
}

pub async fn prepare(_: &Path) -> Result<(), TransportError> {
    Ok(())
}

pub fn secure(_: &Path) -> Result<(), TransportError> {
    Ok(())
}

/// Whether the process at the other end of the pipe runs as our user.
pub fn peer_allowed(stream: &Stream) -> bool {
    let pid = match stream.peer_creds().map(|c| c.pid()) {
        Ok(Some(pid)) => pid,
        Ok(None) => {
            tracing::warn!("the pipe client's process is unknown; connection refused");
            return false;
        }
        Err(e) => {
            tracing::warn!(error = %e, "peer identity unavailable; connection refused");
            return false;
        }
    };
    match (client_user(pid), own_user()) {
        (Ok(peer), Ok(own)) if peer == own => true,
        (Ok(_), Ok(_)) => {
            tracing::warn!(peer_pid = pid, "connection from another user refused");
            false
        }
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(error = %e, "peer identity unavailable; connection refused");
            false
        }
    }
}

/// The user SID (as bytes) of process `pid` (the pipe's client, as interprocess reports it).
fn client_user(pid: u32) -> io::Result<Vec<u8>> {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};
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
