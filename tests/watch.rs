//! The live index through the real daemon: edits are seen by the next query, a body edit
//! re-embeds one function, a checkout storm is coalesced, autowatch off checks before
//! answering, a deleted repository is reported without a crash, the lexical segments an
//! update adds are merged in the background into an index that ranks as a fresh build does.

use std::time::{Duration, Instant};

use fittok_e2e::{DaemonEnv, TempRepo, ok, status_json as status, stderr};

fn repo() -> TempRepo {
    let repo = TempRepo::new("watch");
    repo.write(".git/HEAD", "ref: refs/heads/main\n")
        .write(
            "shop/cart.py",
            "from .pricing import discount\n\n\nclass Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        return discount(sum(self.items))\n",
        )
        .write(
            "shop/pricing.py",
            "def discount(amount):\n    \"\"\"Ten percent off above 100.\"\"\"\n    return amount * 0.9 if amount > 100 else amount\n\n\ndef shipping(weight):\n    return 5 + weight * 0.5\n",
        );
    repo
}

/// Polls until `cond` holds on a query's answer; returns the time it took.
fn until_answer(env: &DaemonEnv, path: &str, q: &str, cond: impl Fn(&str) -> bool) -> Duration {
    let t = Instant::now();
    loop {
        let a = ok(&env.fittok(&["query", path, q, "--budget", "800"]));
        if cond(&a) {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "never saw the change:\n{a}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_edit_is_seen_by_the_next_query() {
    let env = DaemonEnv::new("edit");
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    let first = ok(&env.fittok(&[
        "query",
        path,
        "how is the loyalty refund computed",
        "--budget",
        "800",
    ]));
    assert!(!first.contains("def loyalty_refund"));
    repo.write(
        "shop/pricing.py",
        "def discount(amount):\n    return amount * 0.9 if amount > 100 else amount\n\n\ndef loyalty_refund(points):\n    \"\"\"Loyalty points refunded as money.\"\"\"\n    return points / 100\n",
    );
    let took = until_answer(&env, path, "how is the loyalty refund computed", |a| {
        a.contains("def loyalty_refund")
    });
    eprintln!("edit seen after {took:?}");
    // A deleted file leaves the graph; a new one enters it.
    std::fs::remove_file(repo.path().join("shop/cart.py")).unwrap();
    repo.write("shop/returns.go", "package shop\n\n// RestockReturned puts returned items back on the shelf.\nfunc RestockReturned(n int) int { return n }\n");
    until_answer(&env, path, "restock returned items on the shelf", |a| {
        a.contains("func RestockReturned")
    });
    let s = status(&env);
    let r = &s["repos"][0];
    assert_eq!(r["watching"], true, "{s}");
    assert!(r["updates"].as_u64().unwrap() >= 2, "{s}");
    let a = ok(&env.fittok(&["query", path, "cart total", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert!(!a.contains("shop/cart.py"), "the deleted file is gone");
    assert_eq!(
        v["provenance"]["freshness"], "current",
        "{}",
        v["provenance"]
    );
}

#[test]
fn a_body_edit_re_embeds_only_that_function() {
    let env = DaemonEnv::new("reembed").with_model();
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    ok(&env.fittok(&["index", path]));
    let before = status(&env)["repos"][0]["vectors_embedded"]
        .as_u64()
        .unwrap();
    assert!(before >= 4, "everything embedded once: {before}");
    // Change one function's body; its signature and every other node stay as they were.
    repo.write(
        "shop/pricing.py",
        "def discount(amount):\n    \"\"\"Ten percent off above 100.\"\"\"\n    return amount * 0.85 if amount > 100 else amount\n\n\ndef shipping(weight):\n    return 5 + weight * 0.5\n",
    );
    // Wait for the update and its embedding to settle; then count.
    let t = Instant::now();
    loop {
        let s = status(&env);
        let r = &s["repos"][0];
        let settled = r["vectors_embedded"].as_u64().unwrap() > before
            && r["pending_files"] == 0
            && r["semantic_coverage"] == 1.0;
        if settled {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "no update: {s}");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let s = status(&env);
    let after = s["repos"][0]["vectors_embedded"].as_u64().unwrap();
    assert_eq!(
        after - before,
        1,
        "only `discount` is embedded again: {s}\n{}",
        env.log()
    );
}

#[test]
fn a_checkout_storm_is_coalesced_and_queries_keep_answering() {
    let env = DaemonEnv::new("storm");
    let repo = repo();
    for i in 0..2000 {
        repo.write(
            &format!("gen/m{i}.py"),
            format!("def helper_{i}(x):\n    return x + {i}\n"),
        );
    }
    let path = repo.path().to_str().unwrap().to_string();
    ok(&env.fittok(&["query", &path, "helper", "--budget", "300"]));
    // A branch switch: every generated file rewritten, one renamed function per file.
    let writer = {
        let root = repo.path().to_path_buf();
        std::thread::spawn(move || {
            for i in 0..2000 {
                std::fs::write(
                    root.join(format!("gen/m{i}.py")),
                    format!("def switched_{i}(x):\n    return x - {i}\n"),
                )
                .unwrap();
            }
        })
    };
    // The daemon answers throughout.
    let mut answered = 0;
    while !writer.is_finished() {
        ok(&env.fittok(&["query", &path, "cart total", "--budget", "300"]));
        answered += 1;
    }
    writer.join().unwrap();
    until_answer(&env, &path, "switched_1999", |a| {
        a.contains("def switched_1999")
    });
    let t = Instant::now();
    let s = loop {
        let s = status(&env);
        if s["repos"][0]["pending_files"] == 0 || t.elapsed() > Duration::from_secs(20) {
            break s;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let updates = s["repos"][0]["updates"].as_u64().unwrap();
    eprintln!("storm of 2000 files: {updates} updates, {answered} queries answered meanwhile");
    assert!(
        updates <= 20,
        "coalesced, not one update per file: {updates}"
    );
    assert!(s["repos"][0]["nodes"].as_u64().unwrap() >= 2000);
    let a = ok(&env.fittok(&["query", &path, "helper_7", "--json"]));
    assert!(!a.contains("def helper_7("), "old names are gone");
}

#[test]
fn with_autowatch_off_changes_are_checked_before_answering() {
    let env = DaemonEnv::new("nowatch").env("FITTOK_AUTOWATCH", "false");
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    ok(&env.fittok(&["query", path, "discount", "--budget", "500"]));
    repo.write(
        "shop/tax.py",
        "def sales_tax(amount):\n    return amount * 0.07\n",
    );
    let a = ok(&env.fittok(&["query", path, "sales tax amount", "--budget", "500"]));
    assert!(
        a.contains("def sales_tax"),
        "seen at once, without a watcher:\n{a}"
    );
    assert!(
        a.contains("not watched: FITTOK_AUTOWATCH is off"),
        "the answer says so:\n{a}"
    );
    let s = status(&env);
    assert_eq!(s["repos"][0]["watching"], false);
    assert!(
        s["repos"][0]["watch_note"]
            .as_str()
            .unwrap()
            .contains("FITTOK_AUTOWATCH")
    );
}

#[test]
fn a_deleted_repository_is_reported_and_the_daemon_lives_on() {
    let env = DaemonEnv::new("deleted");
    let repo = repo();
    let path = repo.path().to_str().unwrap().to_string();
    ok(&env.fittok(&["query", &path, "discount", "--budget", "300"]));
    std::fs::remove_dir_all(repo.path()).unwrap();
    let t = Instant::now();
    loop {
        let s = status(&env);
        if s["repos"][0]["state"] == "deleted" {
            assert!(
                s["repos"][0]["watch_note"]
                    .as_str()
                    .unwrap()
                    .contains("deleted")
            );
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "{s}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let q = env.fittok(&["query", &path, "discount"]);
    assert_eq!(q.status.code(), Some(1));
    assert!(stderr(&q).contains("does not exist"), "{}", stderr(&q));
    ok(&env.fittok(&["status"]));
}

/// inotify watches held by a process: the `inotify wd:` lines of its inotify descriptors.
fn inotify_watches(pid: u32) -> usize {
    let mut n = 0;
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        let target = std::fs::read_link(fd.path()).unwrap_or_default();
        if target.to_string_lossy().contains("inotify") {
            let info = std::fs::read_to_string(format!(
                "/proc/{pid}/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .unwrap_or_default();
            n += info
                .lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count();
        }
    }
    n
}

#[test]
fn the_watcher_does_not_follow_symlinks_out_of_the_repository() {
    let env = DaemonEnv::new("watch-symlink");
    let repo = repo();
    // A tree of 60 directories outside the repository, linked from inside it.
    let outside = TempRepo::new("watch-symlink-outside");
    for i in 0..60 {
        outside.write(&format!("d{i}/sub/f.py"), "x = 1\n");
    }
    std::os::unix::fs::symlink(outside.path(), repo.path().join("sysroot")).unwrap();
    let path = repo.path().to_str().unwrap();
    ok(&env.fittok(&["query", path, "discount", "--budget", "300"]));
    let pids = env.daemon_pids();
    assert_eq!(pids.len(), 1);
    // The repository has 3 directories (root, .git, shop); the linked tree 121.
    let t = Instant::now();
    let mut watches = inotify_watches(pids[0]);
    while watches < 3 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        watches = inotify_watches(pids[0]);
    }
    assert!((3..20).contains(&watches), "{watches} inotify watches");
}

/// A repository of `files` Python modules with `per_file` small functions each, every one of
/// them holding `word` (the version of the module).
fn write_modules(repo: &TempRepo, files: std::ops::Range<usize>, per_file: usize, word: &str) {
    for f in files {
        let mut text = String::new();
        for d in 0..per_file {
            text.push_str(&format!(
                "def handler_{f}_{d}(request):\n    \"\"\"Serves {word} request {d} of module {f}.\"\"\"\n    return request.{word}_{d}\n\n\n"
            ));
        }
        repo.write(&format!("pkg/mod_{f:03}.py"), text);
    }
}

/// The ranking and the blocks of an answer: what must not change when only the index's layout
/// does.
fn ranking_of(answer: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(answer).expect("answer JSON");
    let mut out: Vec<(String, String)> = v["ranking"]
        .as_array()
        .expect("ranking")
        .iter()
        .map(|r| (r["id"].to_string(), r["score"].to_string()))
        .collect();
    out.extend(
        v["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| (n["id"].to_string(), n["mode"].to_string())),
    );
    out
}

#[test]
fn an_update_s_segments_are_merged_in_the_background_and_rank_as_a_fresh_build() {
    let env = DaemonEnv::new("merge");
    let repo = TempRepo::new("merge");
    repo.write(".git/HEAD", "ref: refs/heads/main\n");
    // 10,000 definitions; a save rewriting 2,200 of them leaves more than 4,096 documents
    // changed (old and new) — a merge is due — but under half, which an update merges at once.
    write_modules(&repo, 0..100, 100, "plain");
    let path = repo.path().to_str().unwrap();
    let q = "which handler serves the audited request 7 of module 3";
    ok(&env.fittok(&["query", path, q, "--budget", "800"]));
    assert!(!env.log().contains("lexical segments merged"));
    write_modules(&repo, 0..22, 100, "audited");
    until_answer(&env, path, q, |a| a.contains("request.audited_7"));
    let t = Instant::now();
    while !env.log().contains("lexical segments merged") {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no merge in the log:\n{}",
            env.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Uncapped: the blocks then follow from the ranking and the nodes alone. Under a budget they
    // also depend on the provenance line, which is not the same in a daemon (watched, its
    // embedder's coverage so far) as in a one-off process, so one block more or less could fit.
    let args = ["--json", "--explain", "40", "--budget", "0"];
    let merged = ok(&env.fittok(&[&["query", path, q][..], &args].concat()));
    // The same question to a fresh build in process, with a cache of its own.
    let fresh_cache = env.dir.path().join("fresh-cache");
    let fresh = ok(&env
        .cmd("fittokd")
        .env("FITTOK_CACHE_DIR", &fresh_cache)
        .args([&["query", "--semantic", "off", path, q][..], &args].concat())
        .output()
        .expect("fittokd query"));
    assert_eq!(ranking_of(&merged), ranking_of(&fresh));
    assert!(merged.contains("request.audited_7"));
}
