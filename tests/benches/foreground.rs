//! Foreground-first benchmark: query latency and save → visible with the embedding model
//! absent, and with it present while the background embedder works through an empty cache —
//! side by side, in one run.
//!
//! `cargo build --release --bins && cargo bench -p fittok-e2e --bench foreground -- REPO [EDIT_FILE]`
//!
//! REPO is copied to a temporary folder (a large one, so that embedding lasts the whole run:
//! apache/kafka takes hours). For each mode, with a private socket and an empty cache: the
//! first answer, RUNS (default 40) warm `fittok query --code` calls (wall time, client
//! included) once the embedder has begun (model present), and EDITS (default 5) saves of
//! EDIT_FILE (default: the first `*.java`, `*.rs`,
//! `*.py` or `*.go` file listed), each appending a function with a new name, timed until a
//! query shows it. The model-present mode reports how much was embedded during its
//! measurements, to show the embedder was working. `DAEMONS=a/fittokd,b/fittokd` repeats both
//! modes per daemon binary (a baseline beside the build under test). On Linux each mode also
//! reports the daemon's RSS after the first answer and at the end, and its peak (VmHWM).
//! `LOAD=1` repeats both modes with a CPU-bound process (`yes`) on one core, as under a build,
//! and prints each figure loaded against quiet.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fittok_e2e::{bin, model_dir};

const QUESTIONS: [&str; 4] = [
    "how are records appended to the log",
    "where is the configuration parsed",
    "what happens when a request times out",
    "how are retries scheduled after a failure",
];

struct Env {
    socket: PathBuf,
    cache: PathBuf,
    model: PathBuf,
    daemon: PathBuf,
}

impl Env {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin("fittok"));
        c.args(args)
            .env("FITTOK_SOCKET", &self.socket)
            .env("FITTOK_CACHE_DIR", &self.cache)
            .env("FITTOK_EMBED_MODEL", &self.model)
            .env("FITTOK_DAEMON_BIN", &self.daemon)
            .env_remove("FITTOK_MAX_BUDGET")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY");
        c
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().expect("fittok");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn repos(&self) -> Vec<serde_json::Value> {
        let s: serde_json::Value =
            serde_json::from_str(&self.run(&["status", "--json"])).unwrap_or_default();
        s["repos"].as_array().cloned().unwrap_or_default()
    }

    fn embedded(&self) -> u64 {
        self.repos()
            .iter()
            .filter_map(|r| r["vectors_embedded"].as_u64())
            .sum()
    }

    fn coverage(&self) -> String {
        self.repos()
            .iter()
            .map(|r| {
                format!(
                    "{:.1} %",
                    r["semantic_coverage"].as_f64().unwrap_or(0.0) * 100.0
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The daemon's (resident, peak resident) MB, read from /proc: Linux only.
fn memory_mb(env: &Env) -> Option<(u64, u64)> {
    let s: serde_json::Value = serde_json::from_str(&env.run(&["status", "--json"])).ok()?;
    let pid = s["pid"].as_u64()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |key: &str| -> Option<u64> {
        status
            .lines()
            .find(|l| l.starts_with(key))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    Some((field("VmRSS:")? / 1024, field("VmHWM:")? / 1024))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Figures {
    first_s: f64,
    query_p50_ms: f64,
    save_visible_ms: f64,
    /// RSS after the first answer, RSS at the end, peak RSS (MB), as one cell.
    memory: String,
    note: String,
}

fn measure(
    repo: &Path,
    edit: &Path,
    daemon: &Path,
    with_model: bool,
    runs: usize,
    edits: usize,
) -> Figures {
    let work = std::env::temp_dir().join(format!(
        "fittok-fg-{}-{}",
        std::process::id(),
        if with_model { "model" } else { "none" }
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("temp dir");
    let env = Env {
        socket: work.join("d.sock"),
        cache: work.join("cache"),
        model: if with_model {
            model_dir()
        } else {
            work.join("no-model")
        },
        daemon: daemon.to_path_buf(),
    };
    let path = repo.to_str().expect("utf-8 path");
    let t = Instant::now();
    env.run(&["query", "--code", path, QUESTIONS[0], "--budget", "2000"]);
    let first_s = t.elapsed().as_secs_f64();
    let rss_first = memory_mb(&env).map(|(rss, _)| rss);
    // Measure while the embedder works: wait until its first vectors land (the model loads
    // after the first answer).
    let waited = Instant::now();
    while with_model && env.embedded() == 0 && waited.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let before = env.embedded();
    let mut lat = Vec::new();
    for i in 0..runs {
        let t = Instant::now();
        env.run(&[
            "query",
            "--code",
            path,
            QUESTIONS[i % QUESTIONS.len()],
            "--budget",
            "2000",
        ]);
        lat.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let ext = edit.extension().and_then(|e| e.to_str()).unwrap_or("py");
    let original = std::fs::read_to_string(edit).expect("edit file");
    let mut visible = Vec::new();
    for i in 0..edits {
        let name = format!("fittokProbe{}x{i}", std::process::id());
        let body = match ext {
            "java" => format!("\nclass {name}Holder {{ static int {name}() {{ return {i}; }} }}\n"),
            "rs" => format!("\nfn {name}() -> u32 {{ {i} }}\n"),
            "go" => format!("\nfunc {name}() int {{ return {i} }}\n"),
            _ => format!("\n\ndef {name}():\n    return {i}\n"),
        };
        std::fs::write(edit, format!("{original}{body}")).expect("save");
        let t = Instant::now();
        loop {
            let out = env.run(&[
                "query",
                "--code",
                path,
                &format!("what does {name} return"),
                "--budget",
                "600",
            ]);
            if out.contains(&name) {
                break;
            }
            if t.elapsed() > Duration::from_secs(60) {
                panic!("{name} not visible after 60 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        visible.push(t.elapsed().as_secs_f64() * 1e3);
    }
    std::fs::write(edit, &original).expect("restore");
    let after = env.embedded();
    let note = if with_model {
        format!(
            "embedded {} nodes during the measurements; coverage at the end {}",
            after.saturating_sub(before),
            env.coverage()
        )
    } else {
        "no model".to_string()
    };
    let memory = match (rss_first, memory_mb(&env)) {
        (Some(first), Some((end, peak))) => format!("{first} / {end} / {peak} MB"),
        _ => "–".to_string(),
    };
    let _ = env.cmd(&["daemon", "stop"]).output();
    let _ = std::fs::remove_dir_all(&work);
    Figures {
        memory,
        first_s,
        query_p50_ms: median(lat),
        save_visible_ms: median(visible),
        note,
    }
}

/// A CPU-bound process on the machine's last core (`yes`, pinned by `taskset` where there
/// is one), as a build running beside the daemon would be; stopped when dropped.
struct Load(std::process::Child);

impl Load {
    fn start() -> Load {
        let core = std::thread::available_parallelism().map_or(0, |n| n.get() - 1);
        let pinned = Command::new("taskset")
            .args(["-c", &core.to_string(), "yes"])
            .stdout(std::process::Stdio::null())
            .spawn();
        let child = pinned.or_else(|_| {
            Command::new("yes")
                .stdout(std::process::Stdio::null())
                .spawn()
        });
        Load(child.expect("yes, as a CPU-bound process"))
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn copy_repo(src: &Path, dst: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(src)
        .arg(dst)
        .status()
        .expect("cp");
    assert!(status.success(), "copying {}", src.display());
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(repo) = args.first() else {
        eprintln!(
            "usage: cargo bench -p fittok-e2e --bench foreground -- REPO [EDIT_FILE]  (RUNS=40, EDITS=5, DAEMONS=a,b, LOAD=1)"
        );
        std::process::exit(2);
    };
    let num = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (runs, edits) = (num("RUNS", 40), num("EDITS", 5));
    let copy = std::env::temp_dir().join(format!("fittok-fg-repo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    copy_repo(Path::new(repo), &copy);
    let edit = match args.get(1) {
        Some(f) => copy.join(f),
        None => {
            let listed = Command::new("git")
                .args(["ls-files", "*.java", "*.rs", "*.py", "*.go"])
                .current_dir(&copy)
                .output()
                .expect("git ls-files");
            let first = String::from_utf8_lossy(&listed.stdout)
                .lines()
                .find(|l| !l.contains("test"))
                .expect("a source file to edit")
                .to_string();
            copy.join(first)
        }
    };
    let daemons: Vec<PathBuf> = std::env::var("DAEMONS")
        .map(|d| d.split(',').map(PathBuf::from).collect())
        .unwrap_or_else(|_| vec![bin("fittokd")]);
    println!(
        "repository {repo}; editing {}; {runs} queries, {edits} saves per mode",
        edit.display()
    );
    let loads: &[bool] = if std::env::var("LOAD").is_ok_and(|v| v == "1") {
        &[false, true]
    } else {
        &[false]
    };
    println!(
        "| daemon | machine | model | first answer | warm query p50 | save → visible (median) | RSS first / end / peak | embedder |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for daemon in &daemons {
        let mut quiet_present = None;
        for &loaded in loads {
            let _load = loaded.then(Load::start);
            let machine = if loaded { "loaded" } else { "quiet" };
            let mut row = Vec::new();
            for with_model in [false, true] {
                let f = measure(&copy, &edit, daemon, with_model, runs, edits);
                println!(
                    "| {} | {machine} | {} | {:.2} s | {:.1} ms | {:.0} ms | {} | {} |",
                    daemon.display(),
                    if with_model {
                        "present, embedding"
                    } else {
                        "absent"
                    },
                    f.first_s,
                    f.query_p50_ms,
                    f.save_visible_ms,
                    f.memory,
                    f.note
                );
                row.push(f);
            }
            println!(
                "| {} | {machine} | ratio present/absent | {:.2} | {:.2} | {:.2} | | |",
                daemon.display(),
                row[1].first_s / row[0].first_s,
                row[1].query_p50_ms / row[0].query_p50_ms,
                row[1].save_visible_ms / row[0].save_visible_ms
            );
            match quiet_present.take() {
                None => quiet_present = row.pop(),
                Some(quiet) => {
                    let present = &row[1];
                    println!(
                        "| {} | loaded / quiet | present | {:.2} | {:.2} | {:.2} | | |",
                        daemon.display(),
                        present.first_s / quiet.first_s,
                        present.query_p50_ms / quiet.query_p50_ms,
                        present.save_visible_ms / quiet.save_visible_ms
                    );
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&copy);
}
