//! A build-script helper: an FNV-1a hash over source files and folders, so a cache can tell
//! which build of a stage wrote an entry. Shared with build scripts by `#[path]` (util's own)
//! and as a build dependency (the others), hence std only.

use std::path::Path;

/// Hashes `paths` (files, or folders walked in sorted order) under the manifest directory,
/// tells cargo to rerun when any changes, and sets the compile-time variable `var` to the hash
/// in hexadecimal.
pub fn emit(var: &str, paths: &[&str]) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in paths {
        println!("cargo:rerun-if-changed={p}");
        feed(&mut h, Path::new(p));
    }
    println!("cargo:rustc-env={var}={h:016x}");
}

fn feed(h: &mut u64, path: &Path) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            feed(h, &e);
        }
    } else if let Ok(bytes) = std::fs::read(path) {
        for b in bytes {
            *h ^= u64::from(b);
            *h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
}

/// The hash `emit` set, read back at compile time (`env!`); 0 if it is not hexadecimal.
pub const fn parse_id(hex: &str) -> u64 {
    match u64::from_str_radix(hex, 16) {
        Ok(id) => id,
        Err(_) => 0,
    }
}
