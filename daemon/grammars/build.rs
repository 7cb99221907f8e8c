//! On Linux: compiles each grammar crate's C sources into a shared object, compresses it and
//! writes `embedded.rs`, which `include_bytes!`s them. A grammar's parse tables are most of its
//! size and compress about tenfold (Swift 4.1 → 0.4 MB); linked statically, the eight grammars
//! added 24.7 MB to `fittokd`.
//!
//! Where a dependency's sources are is cargo's knowledge: `cargo metadata --offline` names
//! each package's manifest, and the grammar crates declare no `links` that would pass it on.
//! Elsewhere than Linux, in static (musl, `crt-static`) builds, or when the sources or a C
//! compiler cannot be found, `embedded.rs` is empty, `embedded_grammars` is not set and the
//! grammar crates are linked as usual (with a cargo warning saying why).

use std::path::{Path, PathBuf};
use std::process::Command;

include!("src/table.rs");

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/table.rs");
    println!("cargo:rustc-check-cfg=cfg(embedded_grammars)");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    match embed(&out) {
        Ok(rows) => {
            let table = format!(
                "/// Per grammar, in `GRAMMARS`' order: its shared object deflated, and its size inflated.\npub const EMBEDDED: [(&[u8], usize); {}] = [\n{rows}];\n",
                GRAMMARS.len()
            );
            std::fs::write(out.join("embedded.rs"), table).expect("write embedded.rs");
            println!("cargo:rustc-cfg=embedded_grammars");
        }
        // The grammar crates' own static libraries then serve: a larger binary, the same
        // parses.
        Err(why) => println!("cargo:warning=grammars linked statically: {why}"),
    }
}

/// The rows of `EMBEDDED`, or why this target links the grammars instead.
fn embed(out: &Path) -> Result<String, String> {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    // Packagers who want the grammars linked (a larger binary, no dlopen) ask for it here.
    println!("cargo:rerun-if-env-changed=FITTOK_STATIC_GRAMMARS");
    if !var("FITTOK_STATIC_GRAMMARS").is_empty() {
        return Err("FITTOK_STATIC_GRAMMARS is set".into());
    }
    if var("CARGO_CFG_TARGET_OS") != "linux" {
        return Err("objects are loaded from memory on Linux only".into());
    }
    // A static binary cannot dlopen.
    if var("CARGO_CFG_TARGET_ENV") == "musl"
        || var("CARGO_CFG_TARGET_FEATURE")
            .split(',')
            .any(|f| f == "crt-static")
    {
        return Err("a statically linked binary cannot load objects".into());
    }
    let dirs = grammar_dirs()?;
    let mut rows = String::new();
    for (krate, sub, symbol) in GRAMMARS {
        let root = dirs
            .iter()
            .find(|(n, _)| n == krate)
            .map(|(_, d)| d)
            .ok_or_else(|| format!("cargo metadata does not list {krate}"))?;
        let raw = compile(&root.join(sub), symbol, out)?;
        let packed = miniz_oxide::deflate::compress_to_vec(&raw, 9);
        let file = out.join(format!("{symbol}.so.deflate"));
        std::fs::write(&file, &packed).map_err(|e| format!("writing {}: {e}", file.display()))?;
        rows.push_str(&format!(
            "    (include_bytes!({:?}), {}),\n",
            file.display().to_string(),
            raw.len()
        ));
    }
    Ok(rows)
}

/// Each package's name and directory, from `cargo metadata`: offline first (every source
/// this build uses is downloaded, but a workspace's other members may need packages that are
/// not), then letting cargo fetch the manifests it lacks.
fn grammar_dirs() -> Result<Vec<(String, PathBuf)>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("Cargo.toml");
    let mut last = String::new();
    for offline in [true, false] {
        let mut cmd = Command::new(&cargo);
        cmd.args(["metadata", "--format-version", "1", "--manifest-path"])
            .arg(&manifest);
        if offline {
            cmd.arg("--offline");
        }
        // Only this platform's packages: another's would have to be downloaded.
        for triple in ["TARGET", "HOST"].map(std::env::var).into_iter().flatten() {
            cmd.arg("--filter-platform").arg(triple);
        }
        let output = cmd
            .output()
            .map_err(|e| format!("running cargo metadata: {e}"))?;
        if output.status.success() {
            return packages(&output.stdout);
        }
        last = String::from_utf8_lossy(&output.stderr).trim().to_string();
    }
    Err(format!("cargo metadata failed: {last}"))
}

fn packages(json: &[u8]) -> Result<Vec<(String, PathBuf)>, String> {
    let meta: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| format!("cargo metadata's JSON: {e}"))?;
    // The versions this crate resolved to: the lock file may hold others.
    let ours: Vec<&str> = meta["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| {
            n["id"]
                .as_str()
                .is_some_and(|id| id.contains("fittok-grammars"))
        })
        .flat_map(|n| n["dependencies"].as_array().into_iter().flatten())
        .filter_map(|d| d.as_str())
        .collect();
    Ok(meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["id"].as_str().is_some_and(|id| ours.contains(&id)))
        .filter_map(|p| {
            let name = p["name"].as_str()?.to_string();
            let dir = Path::new(p["manifest_path"].as_str()?)
                .parent()?
                .to_path_buf();
            Some((name, dir))
        })
        .collect())
}

/// `parser.c` (and `scanner.c` when there is one) of `src` as a shared object's bytes.
fn compile(src: &Path, symbol: &str, out: &Path) -> Result<Vec<u8>, String> {
    let mut files = vec![src.join("parser.c")];
    if src.join("scanner.c").is_file() {
        files.push(src.join("scanner.c"));
    }
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .opt_level(2)
        .pic(true)
        .debug(false)
        .try_get_compiler()
        .map_err(|e| format!("no C compiler: {e}"))?;
    let so = out.join(format!("{symbol}.so"));
    let status = compiler
        .to_command()
        .args(["-shared", "-std=c11", "-s", "-w"])
        .arg("-I")
        .arg(src)
        .args(&files)
        .arg("-o")
        .arg(&so)
        .status()
        .map_err(|e| format!("running the C compiler: {e}"))?;
    if !status.success() {
        return Err(format!("compiling {} failed", src.display()));
    }
    std::fs::read(&so).map_err(|e| format!("reading {}: {e}", so.display()))
}
