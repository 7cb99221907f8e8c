//! Loading a shared object from memory: written to an anonymous file (`memfd_create`), opened
//! through `/proc/self/fd` (one descriptor per grammar, held open), never unloaded. Nothing touches the disk, so no file of ours can
//! be left behind, replaced by someone else, or collide with a user's.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The grammar function of the object `bytes`: `symbol`, resolved in a library opened from
/// memory and kept loaded for the life of the process.
pub fn open(symbol: &str, bytes: &[u8]) -> Result<unsafe extern "C" fn() -> *const (), String> {
    let name = CString::new(format!("fittok-{symbol}")).map_err(|e| e.to_string())?;
    // SAFETY: a valid NUL-terminated name and flags; the returned descriptor is checked.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)
        .map_err(|e| format!("writing the object to memory: {e}"))?;
    let path =
        CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(|e| e.to_string())?;
    // SAFETY: dlopen of an object this build compiled; RTLD_LOCAL keeps its symbols to itself.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(format!("dlopen: {}", dl_error()));
    }
    // The descriptor stays open for the life of the process, as the library does: glibc
    // knows a loaded library by its path, and a closed descriptor's number — so the next
    // grammar's path — would be given out again and name the library already loaded.
    std::mem::forget(file);
    let sym = CString::new(symbol).map_err(|e| e.to_string())?;
    // SAFETY: `handle` is a live library handle and `sym` a valid C string.
    let f = unsafe { libc::dlsym(handle, sym.as_ptr()) };
    if f.is_null() {
        return Err(format!("dlsym {symbol}: {}", dl_error()));
    }
    // SAFETY: the grammar exports `const TSLanguage *tree_sitter_x(void)` under this name.
    Ok(unsafe { std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn() -> *const ()>(f) })
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated (see above).
        unsafe { std::ffi::CStr::from_ptr(e) }
            .to_string_lossy()
            .into_owned()
    }
}
