//! Computes FITTOK_PARSER_ID: a hash of the sources that decide what a file parses to (the
//! walk, the scrubber, the parser), so the parse cache drops entries made by any other build;
//! and FITTOK_ENGINE_ID, a hash of every engine source, so a snapshot of a whole resident
//! repository (graph and indexes, `snapshot.rs`) is only ever read by the build that wrote it.

use std::path::Path;

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

fn main() {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    // The scrubber runs before the parser: parses made under other rules may hold what the
    // current rules redact.
    for p in [
        "src/parse",
        "src/model.rs",
        "src/model",
        "src/walk.rs",
        "src/lines.rs",
        "src/scrub.rs",
        "src/scrub",
        "Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={p}");
        feed(&mut h, Path::new(p));
    }
    println!("cargo:rustc-env=FITTOK_PARSER_ID={h:016x}");
    let mut engine: u64 = 0xcbf2_9ce4_8422_2325;
    for p in ["src", "Cargo.toml", "build.rs"] {
        println!("cargo:rerun-if-changed={p}");
        feed(&mut engine, Path::new(p));
    }
    println!("cargo:rustc-env=FITTOK_ENGINE_ID={engine:016x}");
}
