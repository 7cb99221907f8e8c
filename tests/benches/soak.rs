//! Soak benchmark: one daemon under mixed work for a long time — questions, saves (a function
//! appended, later removed), and MCP sessions through `fittok-mcp` — over several
//! repositories, printing every INTERVAL the daemon's RSS, open descriptors, threads, and the
//! questions' p50 / p99 in that interval, pooled and, as the worst p99 / p50, per class (one
//! question to one repository at one budget, the same request each time: requests differ in
//! cost, so a pooled p99 is mostly the costliest request's); at the end, whether anything grew
//! and each class's p99 / p50 over the whole run after its first five minutes.
//!
//! `cargo build --release --bins && cargo bench -p fittok-e2e --bench soak -- REPO…`
//!
//! MINUTES (default 60) and INTERVAL (seconds, default 60) set the length; MODEL=on embeds in
//! the background meanwhile (default off: the figures are the daemon's own). Each REPO is
//! copied to a temporary folder first; the copies are removed at the end.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fittok_e2e::{bin, model_dir};

/// The budgets questions are asked at, in turn.
const BUDGETS: [u32; 3] = [800, 2000, 4000];

const QUESTIONS: [&str; 6] = [
    "how are errors handled",
    "where is the configuration parsed",
    "what happens when a request times out",
    "how are retries scheduled after a failure",
    "who calls the main entry point",
    "how is the output written",
];

struct Env {
    socket: PathBuf,
    cache: PathBuf,
    model: PathBuf,
    config: PathBuf,
}

impl Env {
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(bin(program));
        c.env("FITTOK_SOCKET", &self.socket)
            .env("FITTOK_CACHE_DIR", &self.cache)
            .env("FITTOK_EMBED_MODEL", &self.model)
            .env("FITTOK_CONFIG", &self.config)
            .env_remove("FITTOK_MAX_BUDGET")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY");
        c
    }

    fn query(&self, repo: &Path, question: &str, budget: u32) -> bool {
        self.cmd("fittok")
            .args(["query", "--code", "--budget", &budget.to_string()])
            .arg(repo)
            .arg(question)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// One MCP session: initialize, a question through `code_context`, end of input.
    fn mcp_session(&self, repo: &Path, question: &str) -> bool {
        let Ok(mut child) = self
            .cmd("fittok-mcp")
            .current_dir(repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        else {
            return false;
        };
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return false;
        };
        let call = serde_json::json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "code_context", "arguments": {"question": question, "budget": 1500}}
        });
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
            call.to_string(),
        ];
        let mut reader = std::io::BufReader::new(stdout);
        let mut answered = 0;
        for line in lines {
            if writeln!(stdin, "{line}").is_err() {
                break;
            }
            if line.contains("\"id\"") {
                let mut reply = String::new();
                if reader.read_line(&mut reply).is_ok_and(|n| n > 0) {
                    answered += 1;
                }
            }
        }
        drop(stdin);
        let _ = child.wait();
        answered == 2
    }

    fn daemon_pid(&self) -> Option<u64> {
        let s: serde_json::Value = serde_json::from_slice(
            &self
                .cmd("fittok")
                .args(["status", "--json"])
                .output()
                .ok()?
                .stdout,
        )
        .ok()?;
        s["pid"].as_u64()
    }
}

fn status_field(pid: u64, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn open_fds(pid: u64) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// A source file of `repo` to save again and again: the first Python, Rust, Go, Java or
/// JavaScript file outside tests.
/// The largest p99 / p50 among classes with latencies.
fn worst_tail(by_class: &mut [Vec<f64>]) -> f64 {
    by_class
        .iter_mut()
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.sort_by(f64::total_cmp);
            pct(l, 0.99) / pct(l, 0.5).max(0.001)
        })
        .fold(0.0, f64::max)
}

fn edit_target(repo: &Path) -> Option<PathBuf> {
    let out = Command::new("git")
        .args(["ls-files", "*.py", "*.rs", "*.go", "*.java", "*.js"])
        .current_dir(repo)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| !l.contains("test"))
        .map(|l| repo.join(l))
}

fn appended(path: &Path, n: usize) -> String {
    match path.extension().and_then(|e| e.to_str()) {
        Some("rs") => format!("\nfn soak_probe_{n}() -> usize {{ {n} }}\n"),
        Some("go") => format!("\nfunc soakProbe{n}() int {{ return {n} }}\n"),
        Some("java") => format!("\nclass SoakProbe{n} {{ static int v() {{ return {n}; }} }}\n"),
        Some("js") => format!("\nfunction soakProbe{n}() {{ return {n}; }}\n"),
        _ => format!("\n\ndef soak_probe_{n}():\n    return {n}\n"),
    }
}

fn main() {
    let repos: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if repos.is_empty() {
        eprintln!(
            "usage: cargo bench -p fittok-e2e --bench soak -- REPO…  (MINUTES=60, INTERVAL=60, MODEL=on)"
        );
        std::process::exit(2);
    }
    let num = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (minutes, interval) = (num("MINUTES", 60), num("INTERVAL", 60));
    let work = std::env::temp_dir().join(format!("fittok-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    let copies: Vec<PathBuf> = repos
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let dst = work.join(format!("repo{i}"));
            let ok = Command::new("cp")
                .arg("-a")
                .arg(r)
                .arg(&dst)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "copying {r}");
            dst
        })
        .collect();
    let env = Env {
        socket: work.join("d.sock"),
        cache: work.join("cache"),
        model: if std::env::var("MODEL").is_ok_and(|m| m == "on") {
            model_dir()
        } else {
            work.join("no-model")
        },
        config: work.join("config.toml"),
    };
    let edits: Vec<Option<(PathBuf, String)>> = copies
        .iter()
        .map(|c| edit_target(c).and_then(|p| Some((p.clone(), std::fs::read_to_string(&p).ok()?))))
        .collect();
    for c in &copies {
        assert!(
            env.query(c, QUESTIONS[0], 2000),
            "first answer on {}",
            c.display()
        );
    }
    let pid = env.daemon_pid().expect("a daemon");
    println!(
        "soak: {minutes} min over {} repositories, a row every {interval} s; daemon pid {pid}",
        copies.len()
    );
    println!(
        "| minute | RSS MB | open fds | threads | questions | p50 ms | p99 ms | worst class's p99 / p50 | saves | MCP sessions | failures |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let start = Instant::now();
    let mut rows: Vec<(u64, u64, usize, u64, f64)> = Vec::new();
    let mut step = 0usize;
    let classes = copies.len() * QUESTIONS.len() * BUDGETS.len();
    // Each class's latencies after the first five minutes, for the whole-run tail.
    let mut settled_by: Vec<Vec<f64>> = vec![Vec::new(); classes];
    while start.elapsed() < Duration::from_secs(minutes * 60) {
        let slice = Instant::now();
        let (mut lat, mut saves, mut sessions, mut failures) = (Vec::new(), 0, 0, 0);
        // Per request too (repository, question, budget): requests differ in cost, so the pooled
        // p99 is mostly the costliest request's, while each class's p99 / p50 is its own tail.
        let mut lat_by: Vec<Vec<f64>> = vec![Vec::new(); classes];
        while slice.elapsed() < Duration::from_secs(interval) {
            step += 1;
            let which = step % copies.len();
            let repo = &copies[which];
            // Each repository meets every question at every budget: the three cycle apart.
            let round = step / copies.len();
            let question = QUESTIONS[round % QUESTIONS.len()];
            let budget_class = (round / QUESTIONS.len()) % BUDGETS.len();
            if step.is_multiple_of(10) {
                if let Some((path, original)) = &edits[which] {
                    // Every other save puts the file back: the repository does not grow.
                    let text = if step.is_multiple_of(20) {
                        original.clone()
                    } else {
                        format!("{original}{}", appended(path, step))
                    };
                    if std::fs::write(path, text).is_ok() {
                        saves += 1;
                    }
                }
            } else if step.is_multiple_of(25) {
                if env.mcp_session(repo, question) {
                    sessions += 1;
                } else {
                    failures += 1;
                }
            } else {
                let t = Instant::now();
                if env.query(repo, question, BUDGETS[budget_class]) {
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    lat.push(ms);
                    let class = (which * QUESTIONS.len() + round % QUESTIONS.len()) * BUDGETS.len()
                        + budget_class;
                    lat_by[class].push(ms);
                } else {
                    failures += 1;
                }
            }
        }
        lat.sort_by(f64::total_cmp);
        let minute = start.elapsed().as_secs() / 60;
        let rss = status_field(pid, "VmRSS:") / 1024;
        let fds = open_fds(pid);
        let threads = status_field(pid, "Threads:");
        let (p50, p99) = (pct(&lat, 0.5), pct(&lat, 0.99));
        if minute >= 5 {
            for (all, now) in settled_by.iter_mut().zip(&lat_by) {
                all.extend_from_slice(now);
            }
        }
        let tail = worst_tail(&mut lat_by);
        println!(
            "| {minute} | {rss} | {fds} | {threads} | {} | {p50:.1} | {p99:.1} | {tail:.2} | {saves} | {sessions} | {failures} |",
            lat.len()
        );
        rows.push((minute, rss, fds, threads, tail));
    }
    for (path, original) in edits.iter().flatten() {
        let _ = std::fs::write(path, original);
    }
    // After the first five minutes: RSS within 10 %, descriptors and threads flat, p99 ≤ 2× p50.
    let settled: Vec<_> = rows.iter().filter(|r| r.0 >= 5).collect();
    if let (Some(first), Some(last)) = (settled.first(), settled.last()) {
        let rss_growth = last.1 as f64 / first.1.max(1) as f64 - 1.0;
        println!(
            "after minute 5: RSS {} → {} MB ({:+.1} %), fds {} → {}, threads {} → {}, worst class's (repository × question × budget) p99 / p50 {:.2} in any minute, {:.2} over the whole run",
            first.1,
            last.1,
            rss_growth * 100.0,
            first.2,
            last.2,
            first.3,
            last.3,
            settled.iter().map(|r| r.4).fold(0.0, f64::max),
            worst_tail(&mut settled_by)
        );
    } else {
        println!("shorter than five minutes: no settled figures");
    }
    let _ = env.cmd("fittok").args(["daemon", "stop"]).output();
    let _ = std::fs::remove_dir_all(&work);
}
