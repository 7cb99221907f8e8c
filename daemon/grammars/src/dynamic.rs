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
    // Executable on purpose: where `vm.memfd_noexec` = 1 a memfd is sealed non-executable
    // unless it asks (and dlopen would fail); kernels before 6.3 know no MFD_EXEC and refuse
    // it, and there every memfd is executable.
    let create = |flags: libc::c_uint| {
        // SAFETY: a valid NUL-terminated name and flags; the result is checked.
        unsafe { libc::memfd_create(name.as_ptr(), flags) }
    };
    let mut fd = create(libc::MFD_CLOEXEC | libc::MFD_EXEC);
    if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        fd = create(libc::MFD_CLOEXEC);
    }
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

#[cfg(test)]
mod tests {
    use super::open;

    #[test]
    fn bytes_that_are_no_object_are_an_error_not_a_crash() {
        let e = open("tree_sitter_none", b"not an ELF object").unwrap_err();
        assert!(e.starts_with("dlopen:"), "{e}");
    }

    #[test]
    fn a_symbol_the_object_lacks_is_an_error() {
        let (packed, raw) = crate::embedded::EMBEDDED[0];
        let object = miniz_oxide::inflate::decompress_to_vec_with_limit(packed, raw).unwrap();
        let e = open("tree_sitter_not_here", &object).unwrap_err();
        assert!(e.starts_with("dlsym tree_sitter_not_here:"), "{e}");
    }
}
