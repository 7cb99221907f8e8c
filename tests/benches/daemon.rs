//! Daemon benchmark: prints, per repository, the figures issue 4 sets targets for.
//!
//! `cargo build --release --bins && cargo bench -p fittok-e2e --bench daemon -- REPO…`
//!
//! For each repository, with a private socket and an empty cache: time to the first answer on
//! a never-seen repository (daemon start included), `fittok query` wall time through the warm
//! daemon once every node is embedded (p50/p99 over RUNS runs, default 200) and, for 50 runs,
//! while the background embedder still works, the in-daemon query time, the warm-restart
//! time (stop, then the first answer of a new daemon, and its RSS), and the daemon's RSS.
//!
//! `MODEL=off` runs without an embedding model — the scale figures of a large repository
//! (issue 15: apache/kafka), where embedding everything takes hours: the same columns, with
//! nothing to embed. `DAEMONS=a/fittokd,b/fittokd` runs every repository once per daemon
//! binary (a baseline side by side with the build under test); default: the built one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fittok_e2e::{bin, model_dir};

const QUESTIONS: [&str; 4] = [
    "how are redirects and retries handled",
    "where is the configuration parsed",
    "what happens when a request times out",
    "how does the command line parse its flags",
];

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Env {
    socket: PathBuf,
    cache: PathBuf,
    /// The model directory, or one that does not exist (`MODEL=off`).
    model: PathBuf,
    /// The daemon binary `fittok` starts.
    daemon: PathBuf,
}

impl Env {
    fn fittok(&self, args: &[&str]) -> std::process::Output {
        Command::new(bin("fittok"))
            .args(args)
            .env("FITTOK_SOCKET", &self.socket)
            .env("FITTOK_CACHE_DIR", &self.cache)
            .env("FITTOK_EMBED_MODEL", &self.model)
            .env("FITTOK_DAEMON_BIN", &self.daemon)
            .env_remove("FITTOK_MAX_BUDGET")
            .output()
            .expect("run fittok")
    }

    fn timed(&self, args: &[&str]) -> f64 {
        let t = Instant::now();
        let out = self.fittok(args);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ms
    }

    fn status(&self) -> serde_json::Value {
        let out = self.fittok(&["status", "--json"]);
        serde_json::from_slice(&out.stdout).unwrap_or_default()
    }
}

/// `runs` new questions: CLI wall times and in-daemon times (ms), each sorted.
fn measure(env: &Env, path: &str, runs: usize, tag: &str) -> (Vec<f64>, Vec<f64>) {
    let mut wall = Vec::with_capacity(runs);
    let mut inside = Vec::with_capacity(runs);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for i in 0..runs {
        // Every question new: no run is helped by the daemon's recent-question vectors.
        let q = format!("{} ({tag} run {i})", QUESTIONS[i % QUESTIONS.len()]);
        let q = q.as_str();
        wall.push(env.timed(&["query", path, q, "--budget", "4000"]));
        let elapsed_us = rt.block_on(async {
            let (mut c, _) = fittok_connect::hello(&env.socket, "bench")
                .await
                .expect("daemon");
            c.query(fittok_connect::v1::QueryRequest {
                repo: path.into(),
                question: format!("{q} again"),
                budget: 4000,
                ..Default::default()
            })
            .await
            .expect("query")
            .into_inner()
            .elapsed_us
        });
        inside.push(elapsed_us as f64 / 1e3);
    }
    wall.sort_by(f64::total_cmp);
    inside.sort_by(f64::total_cmp);
    (wall, inside)
}

fn bench_repo(repo: &Path, runs: usize, daemon: &Path, model: bool) {
    let dir = std::env::temp_dir().join(format!("fittok-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let env = Env {
        socket: dir.join("run/fittokd.sock"),
        cache: dir.join("cache"),
        model: if model {
            model_dir()
        } else {
            dir.join("no-model")
        },
        daemon: daemon.to_path_buf(),
    };
    let path = repo.to_str().expect("UTF-8 path");
    let name = repo
        .file_name()
        .map_or(path.into(), |n| n.to_string_lossy());
    let name = format!("{name} ({})", daemon.display());

    let first = env.timed(&["query", path, QUESTIONS[0], "--budget", "4000"]);
    // Warm-up, then the measured runs.
    for q in QUESTIONS {
        env.timed(&["query", path, q, "--budget", "4000"]);
    }
    // While the background embedder still runs (it has one core; queries have the other).
    let (busy_wall, _) = measure(&env, path, runs.min(50), "busy");
    // Embed everything: the warm state, and a complete cache for the restart to be warm from.
    let t = Instant::now();
    env.timed(&["index", path]);
    let embed_s = t.elapsed().as_secs_f64();
    let (wall, inside) = measure(&env, path, runs, "warm");
    let rss_queries = env.status()["rss_bytes"].as_f64().unwrap_or(0.0) / 1048576.0;
    let status = env.status();
    let rss_full = status["rss_bytes"].as_f64().unwrap_or(0.0) / 1048576.0;
    let nodes = status["repos"][0]["nodes"].as_u64().unwrap_or(0);
    env.timed(&["daemon", "stop"]);
    let restart = env.timed(&["query", path, QUESTIONS[1], "--budget", "4000"]);
    let restarted = env.status();
    let coverage = restarted["repos"][0]["semantic_coverage"]
        .as_f64()
        .unwrap_or(0.0);
    let rss_restarted = restarted["rss_bytes"].as_f64().unwrap_or(0.0) / 1048576.0;
    env.timed(&["daemon", "stop"]);
    println!(
        "| {name} | {nodes} | {first:.0} ms | {:.1} / {:.1} ms | {:.1} / {:.1} ms | {:.1} ms | {restart:.0} ms (coverage {:.0}%, then RSS {rss_restarted:.0} MB) | {rss_queries:.0} MB / {rss_full:.0} MB | {embed_s:.1} s |",
        pct(&wall, 0.5),
        pct(&wall, 0.99),
        pct(&inside, 0.5),
        pct(&inside, 0.99),
        pct(&busy_wall, 0.5),
        coverage * 100.0,
    );
    if std::env::var_os("KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::thread::sleep(Duration::from_millis(100));
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let runs = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200);
    if args.is_empty() {
        eprintln!(
            "usage: cargo bench -p fittok-e2e --bench daemon -- REPO…  (RUNS=200, MODEL=off, DAEMONS=a,b)"
        );
        return;
    }
    let model = std::env::var("MODEL").map_or(true, |m| m != "off");
    let daemons: Vec<PathBuf> = std::env::var("DAEMONS").map_or_else(
        |_| vec![bin("fittokd")],
        |d| d.split(',').map(PathBuf::from).collect(),
    );
    println!(
        "runs per repository: {runs}; model: {}",
        if model { "on" } else { "off" }
    );
    println!(
        "| repo | nodes | first answer (cold daemon, new repo) | CLI query p50 / p99 (warm) | in-daemon p50 / p99 (warm) | CLI p50 while embedding | warm restart → answer | RSS after queries / all embedded | embed rest |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for repo in args {
        for daemon in &daemons {
            bench_repo(Path::new(&repo), runs, daemon, model);
        }
    }
}
