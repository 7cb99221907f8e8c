//! Live-index benchmark: prints the figures issue 5 asks for.
//!
//! `cargo build --release --bins && cargo bench -p fittok-e2e --bench watch -- GIT_REPO OLD_REF SMALL_REPO`
//!
//! GIT_REPO (a git repository or bare mirror, e.g. BurntSushi/ripgrep) is cloned to a temp
//! dir. On it, with the model off: time from saving a file to the first query that shows the
//! change (EDITS edits, default 50, to files matching EDIT_GLOB, default `*.rs`; each appends
//! a definition, or with EDIT_KIND=comment puts a comment line first), the daemon's CPU while
//! idle and watched, and a branch
//! switch (`git checkout OLD_REF` and back): time until the snapshot settles and the daemon's
//! peak RSS. On SMALL_REPO (copied), with the model on: vectors re-embedded per function-body
//! edit. `DAEMONS=a/fittokd,b/fittokd` measures save → visible once per daemon, in that order
//! (the rest with the last), so a baseline build's figure sits beside the new one's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fittok_e2e::{bin, model_dir};

struct Env {
    socket: PathBuf,
    cache: PathBuf,
    model: bool,
    /// The daemon binary `fittok` starts.
    daemon: PathBuf,
}

impl Env {
    fn fittok(&self, args: &[&str]) -> String {
        let mut c = Command::new(bin("fittok"));
        c.args(args)
            .env("FITTOK_SOCKET", &self.socket)
            .env("FITTOK_CACHE_DIR", &self.cache)
            .env("FITTOK_DAEMON_BIN", &self.daemon)
            .env_remove("FITTOK_MAX_BUDGET");
        if self.model {
            c.env("FITTOK_EMBED_MODEL", model_dir());
        } else {
            c.env("FITTOK_EMBED_MODEL", "/nonexistent-model");
        }
        let out = c.output().expect("fittok");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn status(&self) -> serde_json::Value {
        serde_json::from_str(&self.fittok(&["status", "--json"])).unwrap_or_default()
    }
}

fn proc_field(pid: u64, file: &str, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u64) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

fn sh(cmd: &str, dir: &Path) {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .status()
        .map(|s| s.success());
    assert!(matches!(ok, Ok(true)), "{cmd}");
}

fn settle(env: &Env, updates_before: u64) -> Duration {
    let t = Instant::now();
    loop {
        let s = env.status();
        let r = &s["repos"][0];
        if r["updates"].as_u64().unwrap_or(0) > updates_before && r["pending_files"] == 0 {
            return t.elapsed();
        }
        if t.elapsed() > Duration::from_secs(120) {
            return t.elapsed();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Edits `edits` of `files` one at a time and times each save until `env`'s daemon shows it
/// (`run` tells the markers of one daemon's run from another's). Sorted latencies in ms.
fn save_to_visible(
    env: &Env,
    work: &Path,
    files: &[PathBuf],
    edits: usize,
    comment_edits: bool,
    run: usize,
) -> Vec<f64> {
    let path = work.to_str().unwrap();
    let mut lat = Vec::new();
    for i in 0..edits {
        let f = &files[(i * 7919) % files.len()];
        let name = format!("fittok_bench_marker_{run}_{i}");
        let mut text = std::fs::read_to_string(f).unwrap();
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        if comment_edits {
            let lead = if matches!(ext, "py" | "rb" | "sh") {
                "#"
            } else {
                "//"
            };
            text.insert_str(0, &format!("{lead} {name}\n"));
        }
        let marker = match ext {
            _ if comment_edits => String::new(),
            "py" => format!("\n\ndef {name}():\n    return {i}\n"),
            "go" => format!("\nfunc {name}() int {{ return {i} }}\n"),
            "java" => format!("\nclass {name} {{ int v = {i}; }}\n"),
            "scala" => format!("\nobject {name} {{ val v = {i} }}\n"),
            "kt" => format!("\nfun {name}(): Int = {i}\n"),
            "js" | "ts" => format!("\nfunction {name}() {{ return {i}; }}\n"),
            _ => format!("\npub fn {name}() -> u32 {{ {i} }}\n"),
        };
        text.push_str(&marker);
        let t = Instant::now();
        std::fs::write(f, text).unwrap();
        let rel = f
            .strip_prefix(work)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_default();
        let first_line = format!("{rel}:1-1");
        loop {
            // A comment is seen when the daemon serves the file's new first line; a new
            // definition when a query about it names it.
            let a = if comment_edits {
                env.fittok(&["expand", "--repo", path, &first_line])
            } else {
                env.fittok(&["query", path, &name, "--budget", "300"])
            };
            // Seen: the new function is named in the answer (its map or its code).
            if a.contains(&name) {
                lat.push(t.elapsed().as_secs_f64() * 1e3);
                break;
            }
            if t.elapsed() > Duration::from_secs(30) {
                eprintln!(
                    "edit {i} of {} never seen; last answer:\n{}",
                    f.display(),
                    a.lines().take(8).collect::<Vec<_>>().join("\n")
                );
                lat.push(f64::INFINITY);
                break;
            }
        }
    }
    lat.sort_by(f64::total_cmp);
    lat
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [git_repo, old_ref, small] = args.as_slice() else {
        eprintln!("usage: cargo bench -p fittok-e2e --bench watch -- GIT_REPO OLD_REF SMALL_REPO");
        return;
    };
    let edits: usize = std::env::var("EDITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let dir = std::env::temp_dir().join(format!("fittok-watch-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let work = dir.join("repo");
    sh(&format!("git clone -q {git_repo} {}", work.display()), &dir);
    let daemons: Vec<PathBuf> = std::env::var("DAEMONS").map_or_else(
        |_| vec![bin("fittokd")],
        |v| v.split(',').map(PathBuf::from).collect(),
    );
    let path = work.to_str().unwrap();
    // EDIT_GLOB picks the files to edit (default `*.rs`); the marker appended is a
    // definition in that file's language — or, with EDIT_KIND=comment, a comment line put
    // first in the file: an edit that leaves every definition's name and place in the graph
    // as it was (what `link::relink` resolves file by file, like most edits inside a body).
    let glob = std::env::var("EDIT_GLOB").unwrap_or_else(|_| "*.rs".to_string());
    let comment_edits = std::env::var("EDIT_KIND").is_ok_and(|k| k == "comment");
    let files: Vec<PathBuf> = Command::new("git")
        .args(["ls-files", glob.as_str()])
        .current_dir(&work)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| work.join(l))
                .collect()
        })
        .unwrap_or_default();
    if files.is_empty() {
        eprintln!("no file in {git_repo} matches {glob}");
        return;
    }
    let mut per_daemon = Vec::new();
    let mut last = None;
    for (d, daemon) in daemons.iter().enumerate() {
        let env = Env {
            socket: dir.join(format!("run{d}/fittokd.sock")),
            cache: dir.join(format!("cache{d}")),
            model: false,
            daemon: daemon.clone(),
        };
        env.fittok(&[
            "query",
            path,
            "how are command line flags parsed",
            "--budget",
            "2000",
        ]);
        // A first answer may come from a build without the tests (`FITTOK_DEFER_TESTS_OVER`);
        // saves are timed against the complete snapshot, which `index` waits for.
        env.fittok(&["index", path, "--no-wait"]);
        let s = env.status();
        let pid = s["pid"].as_u64().unwrap();
        let nodes = s["repos"][0]["nodes"].as_u64().unwrap_or(0);
        let lat = save_to_visible(&env, &work, &files, edits, comment_edits, d);
        per_daemon.push((daemon.clone(), lat));
        if d + 1 < daemons.len() {
            env.fittok(&["daemon", "stop"]);
        } else {
            last = Some((env, pid, nodes));
        }
    }
    let Some((env, pid, nodes)) = last else {
        return;
    };
    // Idle CPU while watched.
    std::thread::sleep(Duration::from_secs(1));
    let (c0, t0) = (cpu_ticks(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(10));
    let idle_pct = (cpu_ticks(pid) - c0) as f64 / 100.0 / t0.elapsed().as_secs_f64() * 100.0;

    // Branch switch and back.
    sh("git stash -q", &work);
    let before = env.status()["repos"][0]["updates"].as_u64().unwrap_or(0);
    let changed = Command::new("git")
        .args(["diff", "--name-only", "HEAD", old_ref])
        .current_dir(&work)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
        .unwrap_or(0);
    let t = Instant::now();
    sh(&format!("git checkout -q {old_ref}"), &work);
    let checkout = t.elapsed();
    let settled = settle(&env, before) + checkout;
    let s = env.status();
    let updates = s["repos"][0]["updates"].as_u64().unwrap_or(0) - before;
    let nodes_old = s["repos"][0]["nodes"].as_u64().unwrap_or(0);
    let hwm_mb = proc_field(pid, "status", "VmHWM:") as f64 / 1024.0;
    let before = s["repos"][0]["updates"].as_u64().unwrap_or(0);
    let t = Instant::now();
    sh("git checkout -q -", &work);
    let back = settle(&env, before) + t.elapsed();
    env.fittok(&["daemon", "stop"]);

    // Re-embeds per body edit, model on, on the small repository.
    let small_dir = dir.join("small");
    sh(&format!("cp -r {small} {}", small_dir.display()), &dir);
    let menv = Env {
        socket: dir.join("run2/fittokd.sock"),
        cache: dir.join("cache2"),
        model: true,
        daemon: env.daemon.clone(),
    };
    let spath = small_dir.to_str().unwrap();
    menv.fittok(&["index", spath]);
    let pyfiles: Vec<PathBuf> = Command::new("sh")
        .arg("-c")
        .arg("find . -name '*.py' -path '*src*' | sort")
        .current_dir(&small_dir)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| small_dir.join(l))
                .collect()
        })
        .unwrap_or_default();
    let mut reembeds = Vec::new();
    for (i, f) in pyfiles.iter().take(10).enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        // Change one statement inside the first function body: `return` → `return (…)`.
        let Some(pos) = text.find("\n        return ") else {
            continue;
        };
        let s0 = menv.status();
        let (emb0, up0) = (
            s0["repos"][0]["vectors_embedded"].as_u64().unwrap_or(0),
            s0["repos"][0]["updates"].as_u64().unwrap_or(0),
        );
        let mut edited = text.clone();
        edited.insert_str(pos + "\n        return ".len(), &format!("0 * {i} + "));
        std::fs::write(f, edited).unwrap();
        settle(&menv, up0);
        let t = Instant::now();
        while menv.status()["repos"][0]["semantic_coverage"] != 1.0
            && t.elapsed() < Duration::from_secs(60)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let emb1 = menv.status()["repos"][0]["vectors_embedded"]
            .as_u64()
            .unwrap_or(0);
        reembeds.push(emb1 - emb0);
    }
    menv.fittok(&["daemon", "stop"]);

    println!("| figure | value |\n|---|---|");
    println!("| repository (model off) | {git_repo}, {nodes} nodes |");
    for (daemon, lat) in &per_daemon {
        let p = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize];
        println!(
            "| save → next query sees it, {edits} edits ({}) | p50 {:.0} ms · p90 {:.0} ms · max {:.0} ms |",
            daemon.display(),
            p(0.5),
            p(0.9),
            p(1.0)
        );
    }
    println!("| daemon CPU, idle and watched, 10 s | {idle_pct:.2} % of one core |");
    println!(
        "| branch switch to {old_ref} ({changed} files differ) | checkout {:.2} s, settled after {:.2} s in {updates} update(s); {nodes_old} nodes; daemon peak RSS {hwm_mb:.0} MB |",
        checkout.as_secs_f64(),
        settled.as_secs_f64()
    );
    println!(
        "| switch back | settled after {:.2} s |",
        back.as_secs_f64()
    );
    println!("| vectors re-embedded per function-body edit ({small}, model on) | {reembeds:?} |");
    let _ = std::fs::remove_dir_all(&dir);
}
