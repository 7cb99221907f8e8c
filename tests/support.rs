//! Helpers for end-to-end tests: temporary repositories and the built binaries.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory under the system temp dir, removed on drop.
pub struct TempRepo {
    pub root: PathBuf,
}

impl TempRepo {
    pub fn new(tag: &str) -> TempRepo {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let root =
            std::env::temp_dir().join(format!("fittok-e2e-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("create temp repo");
        TempRepo { root }
    }

    pub fn write(&self, path: &str, contents: impl AsRef<[u8]>) -> &Self {
        let p = self.root.join(path);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).expect("create dir");
        }
        std::fs::write(&p, contents).expect("write file");
        self
    }

    pub fn path(&self) -> &Path {
        &self.root
    }
}

impl Drop for TempRepo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A workspace binary, found beside the test executable (`target/<profile>/`).
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile> directory");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built; run `cargo build --workspace --bins` first",
        path.display()
    );
    path
}

pub fn run(name: &str, args: &[&str]) -> Output {
    Command::new(bin(name))
        .args(args)
        .env_remove("FITTOK_MAX_BUDGET")
        .output()
        .expect("run binary")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The all-MiniLM-L6-v2 directory: `FITTOK_EMBED_MODEL`, else `.model/all-MiniLM-L6-v2` in
/// the workspace (where `scripts/fetch-model.sh` puts it). Tests that need it fail loudly
/// without it: CI fetches it first.
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("FITTOK_EMBED_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../.model/all-MiniLM-L6-v2")
        });
    assert!(
        dir.join("model.safetensors").is_file(),
        "no model at {}: run scripts/fetch-model.sh",
        dir.display()
    );
    dir
}

/// Runs a binary with the model and a private cache directory.
pub fn run_with_model(name: &str, args: &[&str], cache: &Path) -> Output {
    Command::new(bin(name))
        .args(args)
        .env_remove("FITTOK_MAX_BUDGET")
        .env("FITTOK_EMBED_MODEL", model_dir())
        .env("FITTOK_CACHE_DIR", cache)
        .output()
        .expect("run binary")
}
