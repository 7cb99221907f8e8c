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

const RUN_CACHE_PREFIX: &str = "fittok-e2e-run-cache-";

/// Removes the run caches of test processes that have ended: each test binary keeps one for
/// its lifetime (its `run` calls share an index) and cannot remove it at exit. Where there is
/// no `/proc` to tell a live process from an ended one, nothing is removed.
fn sweep_run_caches() {
    if !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(RUN_CACHE_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Runs a binary in process, hermetic: a private cache directory, and no model (lexical and
/// graph signals only), whatever the user's default cache holds.
pub fn run(name: &str, args: &[&str]) -> Output {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(sweep_run_caches);
    let cache = std::env::temp_dir().join(format!("{RUN_CACHE_PREFIX}{}", std::process::id()));
    Command::new(bin(name))
        .args(args)
        .env("FITTOK_CACHE_DIR", &cache)
        .env("FITTOK_EMBED_MODEL", cache.join("no-model"))
        .env_remove("FITTOK_MAX_BUDGET")
        .output()
        .expect("run binary")
}

/// The stdout of a command that must have succeeded; on failure, everything it printed.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        stdout(out),
        stderr(out)
    );
    stdout(out)
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

/// A private daemon environment: its own socket and cache directory, so tests never meet each
/// other's daemons. Dropping it stops every daemon started on its socket.
pub struct DaemonEnv {
    pub dir: TempRepo,
    pub socket: PathBuf,
    pub cache: PathBuf,
    /// Use the real model (else a missing one: lexical and graph signals only).
    pub model: bool,
    /// Fetch the model from this hub endpoint instead (`FITTOK_EMBED_MODEL` unset).
    pub hub: Option<String>,
    pub extra_env: Vec<(String, String)>,
}

impl DaemonEnv {
    pub fn new(tag: &str) -> DaemonEnv {
        let dir = TempRepo::new(&format!("d-{tag}"));
        let socket = dir.path().join("run").join("fittokd.sock");
        let cache = dir.path().join("cache");
        DaemonEnv {
            dir,
            socket,
            cache,
            model: false,
            hub: None,
            extra_env: Vec::new(),
        }
    }

    pub fn with_model(mut self) -> DaemonEnv {
        self.model = true;
        self
    }

    /// The daemon fetches the model from `endpoint` (the hub's URL layout) on first use.
    pub fn with_hub(mut self, endpoint: &str) -> DaemonEnv {
        self.hub = Some(endpoint.to_string());
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> DaemonEnv {
        self.extra_env.push((key.into(), value.into()));
        self
    }

    /// A command for a workspace binary with this environment.
    pub fn cmd(&self, name: &str) -> Command {
        let mut c = Command::new(bin(name));
        c.env_remove("FITTOK_MAX_BUDGET")
            .env_remove("FITTOK_NO_DAEMON")
            .env_remove("FITTOK_IDLE_TIMEOUT")
            // No test reaches a real model: LLM variables only where a test sets them.
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("FITTOK_LLM_BASE_URL")
            .env_remove("FITTOK_LLM_MODEL")
            .env_remove("FITTOK_LLM_API_KEY")
            .env("FITTOK_SOCKET", &self.socket)
            .env("FITTOK_CACHE_DIR", &self.cache)
            // The user's own configuration file never reaches a test's daemon.
            .env("FITTOK_CONFIG", self.dir.path().join("config.toml"))
            .env("FITTOK_LOG", "info");
        c.env_remove("HF_ENDPOINT").env_remove("HF_HUB_OFFLINE");
        if let Some(hub) = &self.hub {
            c.env_remove("FITTOK_EMBED_MODEL").env("HF_ENDPOINT", hub);
        } else if self.model {
            c.env("FITTOK_EMBED_MODEL", model_dir());
        } else {
            c.env("FITTOK_EMBED_MODEL", self.dir.path().join("no-model"));
        }
        for (k, v) in &self.extra_env {
            c.env(k, v);
        }
        c
    }

    pub fn fittok(&self, args: &[&str]) -> Output {
        self.cmd("fittok").args(args).output().expect("run fittok")
    }

    /// Pids of live `fittokd serve` processes on this environment's socket.
    pub fn daemon_pids(&self) -> Vec<u32> {
        let needle = self.socket.to_string_lossy().into_owned();
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            if cmdline.contains("fittokd")
                && cmdline.contains(" serve")
                && cmdline.contains(&needle)
                && !zombie
            {
                pids.push(pid);
            }
        }
        pids
    }

    /// Waits until no daemon runs on this socket; false on timeout.
    pub fn wait_no_daemon(&self, timeout: std::time::Duration) -> bool {
        let t = std::time::Instant::now();
        while t.elapsed() < timeout {
            if self.daemon_pids().is_empty() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.cache.join("fittokd.log")).unwrap_or_default()
    }
}

impl Drop for DaemonEnv {
    fn drop(&mut self) {
        for pid in self.daemon_pids() {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
    }
}

/// `fittok status --json` through `env`.
pub fn status_json(env: &DaemonEnv) -> serde_json::Value {
    serde_json::from_str(&ok(&env.fittok(&["status", "--json"]))).expect("status JSON")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
