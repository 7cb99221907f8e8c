//! The real `fittokd` on a real socket, driven by the real `fittok` binary: auto-spawn, query,
//! index with progress, status, expand, warm restart, many clients at once, a killed daemon,
//! a stale socket, version hand-over, foreign users, idle exit, socket activation.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fittok_e2e::{DaemonEnv, TempRepo, bin, ok, status_json, stderr, stdout};

fn repo() -> TempRepo {
    let repo = TempRepo::new("daemon");
    repo.write(
        "billing/invoice.py",
        "\"\"\"Invoices.\"\"\"\n\nfrom .tax import vat_for\n\n\nclass Invoice:\n    \"\"\"A customer invoice with line items.\"\"\"\n\n    def __init__(self, lines):\n        self.lines = lines\n\n    def total_with_vat(self, country):\n        net = sum(price * qty for price, qty in self.lines)\n        return net + vat_for(country, net)\n",
    )
    .write(
        "billing/tax.py",
        "RATES = {\"de\": 0.19, \"fr\": 0.20}\n\n\ndef vat_for(country, amount):\n    \"\"\"Value added tax owed on amount in country.\"\"\"\n    return amount * RATES.get(country, 0.0)\n",
    )
    .write(".git/HEAD", "ref: refs/heads/main\n")
    .write(
        "cmd/main.go",
        "package main\n\n// main prints a greeting.\nfunc main() {\n\tgreet(\"world\")\n}\n\nfunc greet(name string) {}\n",
    );
    repo
}

/// Waits (up to 20 s) for the daemon to write a repository's snapshot, in the background.
fn wait_for_snapshot(env: &DaemonEnv) {
    let snapshots = env.cache.join("snapshots");
    let deadline = Instant::now() + Duration::from_secs(20);
    let has_snapshot = || {
        std::fs::read_dir(&snapshots).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".snap"))
        })
    };
    while !has_snapshot() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(has_snapshot(), "no snapshot in {}", snapshots.display());
}

/// A short question about the fixture, answered through the daemon.
fn assert_answers_vat(env: &DaemonEnv, repo: &TempRepo) {
    let out = ok(&env.fittok(&[
        "query",
        repo.path().to_str().unwrap(),
        "vat rates",
        "--budget",
        "300",
    ]));
    assert!(out.contains("vat_for"), "{out}");
}

/// The code part of an answer (after its header lines, which carry freshness notes).
#[test]
fn query_index_status_expand_through_an_autospawned_daemon() {
    let env = DaemonEnv::new("basic");
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    assert!(env.daemon_pids().is_empty());

    let answer = ok(&env.fittok(&[
        "query",
        path,
        "how is VAT added to an invoice total",
        "--budget",
        "600",
    ]));
    assert!(answer.contains("def total_with_vat"), "{answer}");
    assert!(
        answer.contains("ranking without semantics"),
        "the missing model is said: {answer}"
    );
    assert_eq!(
        env.daemon_pids().len(),
        1,
        "the first call started one daemon"
    );

    let index = env.fittok(&["index", path]);
    let progress = stderr(&index);
    assert!(
        progress.contains("ready:"),
        "progress on stderr: {progress}"
    );
    assert!(ok(&index).contains("nodes"));

    let status = status_json(&env);
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    let repos = status["repos"].as_array().unwrap();
    assert_eq!(repos.len(), 1);
    assert!(repos[0]["nodes"].as_u64().unwrap() >= 6, "{status}");
    assert_eq!(repos[0]["state"], "ready");
    // Where memory goes, per structure, summing to the repository's total.
    let parts = repos[0]["memory"].as_array().expect("memory parts");
    let named = |name: &str| {
        parts
            .iter()
            .find(|p| p["name"] == name)
            .and_then(|p| p["bytes"].as_u64())
            .unwrap_or_else(|| panic!("no {name} in {status}"))
    };
    assert!(named("sources") > 0 && named("parsed files") > 0 && named("lexical index") > 0);
    assert_eq!(named("vectors"), 0, "semantic is off here: {status}");
    let sum: u64 = parts.iter().filter_map(|p| p["bytes"].as_u64()).sum();
    assert_eq!(repos[0]["memory_bytes"].as_u64(), Some(sum), "{status}");
    let text = ok(&env.fittok(&["status"]));
    assert!(text.contains("fittokd ") && text.contains(path), "{text}");
    assert!(text.contains("memory (MB): sources"), "{text}");
    // Every grammar is linked and says whether it loads.
    let grammars = status["grammars"].as_array().expect("grammars");
    assert_eq!(grammars.len(), 15, "{status}");
    assert!(grammars.iter().all(|g| g["error"] == ""), "{status}");
    assert!(text.contains("grammars 15 linked, all load"), "{text}");

    let expanded = ok(&env.fittok(&["expand", "--repo", path, "billing/tax.py#vat_for"]));
    assert!(expanded.contains("RATES.get(country"), "{expanded}");

    // A path that does not exist is an error, never taken for the question.
    let missing = env.fittok(&["query", "/no/such/repo", "what is this"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("does not exist"),
        "{}",
        stderr(&missing)
    );
    let bad_id = env.fittok(&["expand", "--repo", path, "nope.py#nothing"]);
    assert_eq!(bad_id.status.code(), Some(1), "{}", stderr(&bad_id));
    assert!(stderr(&bad_id).contains("unknown id"));
    // Lines past the end are an error, not an empty fence.
    let past = env.fittok(&["expand", "--repo", path, "billing/tax.py:99999-100000"]);
    assert_eq!(past.status.code(), Some(1), "{}", stdout(&past));
    assert!(
        stderr(&past).contains("billing/tax.py has 6 lines"),
        "{}",
        stderr(&past)
    );

    // The query runs from inside the repository too: PATH defaults to its root.
    let inside = env
        .cmd("fittok")
        .args(["query", "greeting printed by main", "--json"])
        .current_dir(repo.path().join("cmd"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&inside)).expect("JSON answer");
    assert!(
        v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["name"] == "main.main"),
        "{v}"
    );
    // Unquoted, the words are one question; the usage line says so.
    let unquoted = env
        .cmd("fittok")
        .args([
            "query", "--code", "--budget", "300", "how", "is", "vat", "computed",
        ])
        .current_dir(repo.path().join("billing"))
        .output()
        .unwrap();
    assert!(
        ok(&unquoted).contains("def vat_for"),
        "{}",
        stdout(&unquoted)
    );
    let usage = ok(&env.fittok(&["query", "--help"]));
    assert!(usage.contains("the question quoted or not"), "{usage}");

    ok(&env.fittok(&["daemon", "stop"]));
    assert!(env.wait_no_daemon(Duration::from_secs(10)));
    assert!(!env.socket.exists(), "the socket file is removed at exit");
    let none = env.fittok(&["status"]);
    assert_eq!(
        none.status.code(),
        Some(3),
        "status without a daemon: exit 3"
    );
}

#[test]
fn restart_serves_from_the_warm_cache() {
    let env = DaemonEnv::new("warm").with_model();
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    let first = ok(&env.fittok(&["index", path]));
    assert!(first.contains("(0 from cache)"), "{first}");
    let status = status_json(&env);
    assert_eq!(
        status["repos"][0]["semantic_coverage"], 1.0,
        "index waits for every vector"
    );
    assert_eq!(
        status["repos"][0]["semantic_priority_coverage"], 1.0,
        "{status}"
    );
    let shown = ok(&env.fittok(&["status"]));
    assert!(
        shown.contains("semantic 100% (priority set 100%)"),
        "{shown}"
    );
    #[cfg(target_os = "linux")]
    for pid in env.daemon_pids() {
        let batch = threads_named(pid, "fittok-embed-ba");
        assert!(
            !batch.is_empty(),
            "the model is loaded: its batch threads run"
        );
        for (tid, policy) in batch {
            assert_eq!(policy, 5, "batch thread {tid} runs at SCHED_IDLE");
        }
    }

    // The daemon writes the repository's snapshot in the background after the first build.
    wait_for_snapshot(&env);

    ok(&env.fittok(&["daemon", "restart"]));
    assert_eq!(env.daemon_pids().len(), 1);
    let t = Instant::now();
    let again = ok(&env.fittok(&["index", path, "--no-wait"]));
    let secs = t.elapsed().as_secs_f32();
    assert!(
        again.contains("(3 from cache)") && again.contains("restored from the snapshot"),
        "no file re-parsed, nothing linked or indexed again: {again}"
    );
    assert_answers_vat(&env, &repo);
    let status = status_json(&env);
    assert_eq!(
        status["repos"][0]["semantic_coverage"], 1.0,
        "no node re-embedded after a restart: {status}"
    );
    eprintln!("warm index through a restarted daemon: {secs:.2} s");
}

#[test]
fn twenty_clients_at_once_start_exactly_one_daemon() {
    let env = DaemonEnv::new("many");
    let repo = repo();
    let path = repo.path().to_str().unwrap().to_string();
    let children: Vec<_> = (0..20)
        .map(|i| {
            env.cmd("fittok")
                .args([
                    "query",
                    &path,
                    &format!("vat rate for country {i}"),
                    "--budget",
                    "300",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(ok(&out).contains("vat_for"));
    }
    assert_eq!(env.daemon_pids().len(), 1, "exactly one daemon");
    assert_eq!(
        status_json(&env)["repos"].as_array().unwrap().len(),
        1,
        "indexed once"
    );
}

#[test]
fn a_daemon_killed_mid_index_is_replaced_and_answers_the_same() {
    let env = DaemonEnv::new("kill");
    let repo = repo();
    // Enough files that indexing takes a moment.
    for i in 0..300 {
        repo.write(
            &format!("gen/mod{i}.py"),
            format!("def helper_{i}(x):\n    return x + {i}\n\n\nclass Thing{i}:\n    def run(self):\n        return helper_{i}(1)\n"),
        );
    }
    let path = repo.path().to_str().unwrap();
    ok(&env.fittok(&["daemon", "start"]));
    let pid = env.daemon_pids()[0];
    let mut index = env
        .cmd("fittok")
        .args(["index", path])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(150));
    Command::new("kill")
        .arg("-9")
        .arg(pid.to_string())
        .status()
        .unwrap();
    let _ = index.wait();
    assert!(env.socket.exists(), "the dead daemon left its socket file");

    let question = "how is VAT added to an invoice total";
    let after = ok(&env.fittok(&["query", path, question, "--budget", "800"]));
    let pids = env.daemon_pids();
    assert_eq!(pids.len(), 1);
    assert_ne!(pids[0], pid, "a new daemon answered");
    let in_process = env.fittok(&["--no-daemon", "query", path, question, "--budget", "800"]);
    let fresh = ok(&in_process);
    // Its log lines (the daemon holds the cache) go to a pipe here: no colour codes.
    assert!(
        !stderr(&in_process).contains('\u{1b}'),
        "{}",
        stderr(&in_process)
    );
    // The whole answer, provenance line included: the daemon and an in-process run word
    // freshness the same way.
    assert_eq!(after, fresh, "same answer as a fresh in-process run");
}

#[test]
fn a_stale_socket_file_is_replaced() {
    let env = DaemonEnv::new("stale");
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    drop(std::os::unix::net::UnixListener::bind(&env.socket).unwrap());
    assert!(env.socket.exists());
    let repo = repo();
    assert_answers_vat(&env, &repo);
    assert!(
        env.log().contains("stale socket file replaced"),
        "{}",
        env.log()
    );
}

/// `fittokd serve` on the environment's socket, waited for (it is expected to refuse).
fn serve_in_foreground(env: &DaemonEnv) -> std::process::Output {
    env.cmd("fittokd")
        .args(["serve", "--socket"])
        .arg(&env.socket)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_second_daemon_on_a_live_socket_refuses_and_the_first_keeps_serving() {
    let env = DaemonEnv::new("in-use");
    let repo = repo();
    assert_answers_vat(&env, &repo);
    let second = serve_in_foreground(&env);
    assert!(!second.status.success(), "a second daemon started");
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("already serving on"),
        "no clear error: {stderr}"
    );
    assert!(env.socket.exists(), "the live daemon's socket was removed");
    assert_answers_vat(&env, &repo);
}

#[test]
fn an_older_daemon_hands_over_to_a_newer_client() {
    let env = DaemonEnv::new("handover");
    let mut old = env
        .cmd("fittokd")
        .args(["serve", "--report-version", "0.0.1", "--socket"])
        .arg(&env.socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !env.socket.exists() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let before: serde_json::Value =
        serde_json::from_str(&ok(&env.fittok(&["status", "--json"]))).unwrap();
    assert_eq!(before["version"], "0.0.1");
    let repo = repo();
    ok(&env.fittok(&[
        "query",
        repo.path().to_str().unwrap(),
        "vat",
        "--budget",
        "300",
    ]));
    let exited = old.wait().unwrap();
    assert!(
        exited.success(),
        "the old daemon stopped cleanly: {exited:?}"
    );
    let after = status_json(&env);
    assert_eq!(after["version"], env!("CARGO_PKG_VERSION"));
    assert_ne!(after["pid"], before["pid"]);
}

#[test]
fn connections_from_another_user_are_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: switching users needs root");
        return;
    }
    let env = DaemonEnv::new("uid");
    ok(&env.fittok(&["daemon", "start"]));
    // Loosen the permissions so only the peer-credential check stands in the way.
    use std::os::unix::fs::PermissionsExt;
    let open = std::fs::Permissions::from_mode(0o777);
    let mut dir = env.socket.parent();
    while let Some(d) = dir {
        if d == std::path::Path::new("/") || d == std::env::temp_dir() {
            break;
        }
        std::fs::set_permissions(d, open.clone()).unwrap();
        dir = d.parent();
    }
    std::fs::set_permissions(&env.socket, open).unwrap();
    let exe_dir = bin("fittok").parent().unwrap().to_path_buf();
    let runnable = Command::new(bin("fittok"))
        .arg("--version")
        .uid(65534)
        .output()
        .is_ok_and(|o| o.status.success());
    if !runnable {
        eprintln!(
            "skipped: {} is not executable by uid 65534",
            exe_dir.display()
        );
        return;
    }
    let out = env
        .cmd("fittok")
        .args(["status"])
        .env("FITTOK_CACHE_DIR", "/tmp")
        .uid(65534)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        env.log().contains("connection from another user refused"),
        "{}",
        env.log()
    );
    // Our own user still gets in.
    ok(&env.fittok(&["status"]));
}

use std::os::unix::process::CommandExt;

#[test]
fn an_idle_daemon_exits_and_removes_its_socket() {
    let env = DaemonEnv::new("idle").env("FITTOK_IDLE_TIMEOUT", "1");
    let repo = repo();
    ok(&env.fittok(&[
        "query",
        repo.path().to_str().unwrap(),
        "vat",
        "--budget",
        "300",
    ]));
    assert_eq!(env.daemon_pids().len(), 1);
    assert!(
        env.wait_no_daemon(Duration::from_secs(15)),
        "still running after idling"
    );
    assert!(!env.socket.exists());
    assert!(env.log().contains("idle: stopping"));
}

#[test]
fn serves_through_a_listener_inherited_by_socket_activation() {
    use std::os::fd::AsRawFd;
    let env = DaemonEnv::new("activation");
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(&env.socket).unwrap();
    let fd = listener.as_raw_fd();
    let mut cmd = env.cmd("fittokd");
    // As systemd does: the listener at fd 3, LISTEN_PID naming the daemon's own pid (the
    // shell execs the daemon, keeping its pid).
    cmd.env_remove("FITTOK_SOCKET");
    let daemon = bin("fittokd");
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg("LISTEN_FDS=1 LISTEN_PID=$$ exec \"$0\" serve --socket \"$1\"")
        .arg(&daemon)
        .arg(&env.socket)
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: dup2 is async-signal-safe; it runs in the child between fork and exec.
    unsafe {
        sh.pre_exec(move || {
            // dup2 onto itself would keep close-on-exec: clear it explicitly.
            if fd != 3 && libc::dup2(fd, 3) < 0 || libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = sh.spawn().unwrap();
    drop(listener);
    let t = Instant::now();
    while env.daemon_pids().is_empty() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let repo = repo();
    assert_answers_vat(&env, &repo);
    assert!(env.log().contains("from_manager=true"), "{}", env.log());
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn service_units_parse() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let plist = root.join("launchd/dev.fittok.fittokd.plist");
    let parsed = Command::new("python3")
        .args([
            "-c",
            "import plistlib,sys; d=plistlib.load(open(sys.argv[1],'rb')); assert d['Label']=='dev.fittok.fittokd'; assert d['ProgramArguments'][1]=='serve'; print('ok')",
        ])
        .arg(&plist)
        .output()
        .expect("python3");
    assert!(parsed.status.success(), "{}", stderr(&parsed));
    let Ok(analyze) = Command::new("systemd-analyze").arg("--version").output() else {
        eprintln!("systemd-analyze not installed: unit files checked by the plist test only");
        return;
    };
    assert!(analyze.status.success());
    // The units name the installed binary; verify them with this build's path substituted.
    let dir = TempRepo::new("units");
    for name in ["fittokd.socket", "fittokd.service"] {
        let text = std::fs::read_to_string(root.join("systemd").join(name)).unwrap();
        dir.write(
            name,
            text.replace("%h/.cargo/bin/fittokd", bin("fittokd").to_str().unwrap()),
        );
    }
    let out = Command::new("systemd-analyze")
        .args(["verify", "--user"])
        .arg(dir.path().join("fittokd.socket"))
        .arg(dir.path().join("fittokd.service"))
        .env("XDG_RUNTIME_DIR", dir.path())
        .output()
        .unwrap();
    let errors = stderr(&out);
    let relevant: Vec<&str> = errors.lines().filter(|l| l.contains("fittokd")).collect();
    assert!(out.status.success() && relevant.is_empty(), "{errors}");
}

#[test]
fn fit_generate_and_measure_through_the_daemon() {
    let env = DaemonEnv::new("fit");
    let dir = TempRepo::new("fitdoc");
    let mut doc = String::from("# Handbook\n\nWhat this is.\n\n");
    for i in 0..10 {
        doc.push_str(&format!("## Chapter {i}\n\nOpening of chapter {i}.\n\n"));
        for k in 0..60 {
            doc.push_str(&format!(
                "Sentence {k} of chapter {i}, with enough words to weigh something.\n"
            ));
        }
        doc.push('\n');
    }
    dir.write("HANDBOOK.md", &doc);
    let path = dir.path().join("HANDBOOK.md");
    let p = path.to_str().unwrap();
    let over = env.fittok(&["fit", "measure", p]);
    assert_eq!(over.status.code(), Some(11), "over hard: {}", stdout(&over));
    assert!(stdout(&over).contains("tokens — over hard"));
    let soft = env.fittok(&["fit", "measure", "--hard-threshold", "20000", p]);
    assert_eq!(soft.status.code(), Some(10), "over soft: {}", stdout(&soft));
    // Each flag `fit measure --help` offers changes what it reports; generation's do not
    // appear there.
    let fits = env.fittok(&[
        "fit",
        "measure",
        "--soft-threshold",
        "20000",
        "--hard-threshold",
        "20000",
        p,
    ]);
    assert_eq!(fits.status.code(), Some(0), "fits: {}", stdout(&fits));
    let tokens = |out: &std::process::Output| -> String {
        stdout(out)
            .split(" tokens")
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let chars4 = env.fittok(&["fit", "measure", "--estimator", "chars4", p]);
    assert_ne!(tokens(&chars4), tokens(&over), "{}", stdout(&chars4));
    let help = ok(&env.fittok(&["fit", "measure", "--help"]));
    for offered in ["--soft-threshold", "--hard-threshold", "--estimator"] {
        assert!(help.contains(offered), "{help}");
    }
    for not_read in [
        "--level",
        "--inline-threshold",
        "--dry-run",
        "--query",
        "--llm-model",
    ] {
        assert!(!help.contains(not_read), "{not_read} in {help}");
    }
    let dry = ok(&env.fittok(&["fit", "generate", "--dry-run", p]));
    assert!(
        dry.contains("handbook/chapter-0.md") || dry.contains("handbook/"),
        "{dry}"
    );
    assert!(
        !dir.path().join("handbook").exists(),
        "a dry run writes nothing"
    );
    let out = ok(&env.fittok(&["fit", "generate", p]));
    assert!(out.contains("original kept as"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("handbook.unfit.md")).unwrap(),
        doc
    );
    let root = std::fs::read_to_string(&path).unwrap();
    assert!(root.contains("→ [handbook/"), "{root}");
    let measured = ok(&env.fittok(&["fit", "measure", p]));
    assert!(measured.contains("— fits"), "{measured}");
    let again = ok(&env.fittok(&["fit", "generate", p]));
    assert!(again.contains("already a fitted root"), "{again}");
    let missing = env.fittok(&["fit", "generate", "/no/such.md"]);
    assert_eq!(missing.status.code(), Some(1));

    // A user's file under a name the plan picks is never overwritten: nothing is written.
    let clash = TempRepo::new("fitclash");
    clash.write("HANDBOOK.md", &doc);
    let planned = dry
        .split_whitespace()
        .filter_map(|w| w.find("handbook/").map(|i| &w[i..]))
        .find(|w| w.ends_with(".md"))
        .unwrap_or_else(|| panic!("a planned subdocument in {dry}"))
        .to_string();
    clash.write(&planned, "the user's own notes");
    clash.write("handbook/unrelated.md", "also theirs");
    let cp = clash.path().join("HANDBOOK.md");
    let refused = env.fittok(&["fit", "generate", cp.to_str().unwrap()]);
    assert!(!refused.status.success(), "{}", stdout(&refused));
    assert!(stderr(&refused).contains(&planned), "{}", stderr(&refused));
    assert_eq!(
        std::fs::read_to_string(clash.path().join(&planned)).unwrap(),
        "the user's own notes"
    );
    assert_eq!(
        std::fs::read_to_string(&cp).unwrap(),
        doc,
        "the root is untouched"
    );
    assert!(!clash.path().join("handbook.unfit.md").exists());
}

#[test]
fn a_line_longer_than_hard_goes_alone_and_is_named() {
    let env = DaemonEnv::new("fit-long-line");
    let dir = TempRepo::new("fit-long-line");
    // 300 KB without a single space: base64-like data pasted into a document.
    let blob: String = (0..300_000)
        .map(|i| (b'A' + (i * 7 % 26) as u8) as char)
        .collect();
    let doc = format!(
        "# Notes\n\nWhat this is.\n\n## Data\n\n{blob}\n\nAfter the data.\n\n## More\n\n{}\n",
        "Closing words. ".repeat(40)
    );
    dir.write("notes.md", &doc);
    let path = dir.path().join("notes.md");
    let p = path.to_str().unwrap();
    let measured = env.fittok(&["fit", "measure", p]);
    assert_eq!(measured.status.code(), Some(11));
    assert!(
        stdout(&measured).contains("alone is") && stdout(&measured).contains("never split"),
        "{}",
        stdout(&measured)
    );
    let out = ok(&env.fittok(&["fit", "generate", p]));
    let over: Vec<&str> = out.lines().filter(|l| l.contains("OVER HARD")).collect();
    assert_eq!(over.len(), 1, "one file over hard, the line's own: {out}");
    assert!(over[0].contains("lines are never split"), "{out}");
    // That file holds the line and nothing else; the text around it is elsewhere.
    let file = over[0].split_whitespace().nth(2).unwrap();
    assert_eq!(std::fs::read_to_string(file).unwrap().trim(), blob);
    let all: String = walk_md(dir.path());
    assert!(all.contains("After the data.") && all.contains("Closing words."));
}

/// Every Markdown file under `dir`, concatenated.
fn walk_md(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&walk_md(&p));
        } else if p.extension().is_some_and(|x| x == "md") && !p.to_string_lossy().contains("unfit")
        {
            out.push_str(&std::fs::read_to_string(&p).unwrap());
        }
    }
    out
}

#[test]
fn the_codebase_map_prints_or_fits_into_a_tree() {
    let env = DaemonEnv::new("map");
    let repo = TempRepo::new("map");
    for d in 0..12 {
        repo.write(
            &format!("pkg{d}/__init__.py"),
            format!("\"\"\"Package {d} handles part {d} of the work.\"\"\"\n"),
        );
        for f in 0..6 {
            let mut src = String::new();
            for k in 0..12 {
                src.push_str(&format!("def handler_{d}_{f}_{k}(request, retries=3):\n    \"\"\"Handle kind {k} of request.\"\"\"\n    return request\n\n\n"));
            }
            repo.write(&format!("pkg{d}/mod{f}.py"), src);
        }
    }
    let path = repo.path().to_str().unwrap();
    let md = ok(&env.fittok(&["map", path]));
    assert!(
        md.contains("## pkg3/") && md.contains("Purpose: Package 3 handles part 3 of the work."),
        "{}",
        &md[..md.len().min(800)]
    );
    assert!(
        md.contains("handler_3_2_7(request, retries=3)")
            && md.contains("Handle kind 7 of request."),
        "signatures and docs are listed"
    );
    let out_dir = TempRepo::new("map-out");
    let written = ok(&env.fittok(&["map", path, "--fit", out_dir.path().to_str().unwrap()]));
    let root = std::fs::read_to_string(out_dir.path().join("codebase-map.md")).unwrap();
    assert!(root.contains("→ [codebase-map/"), "{root}");
    assert!(
        root.contains("## pkg0/") && root.contains("## pkg11/"),
        "every directory is in the root"
    );
    let first_lines: Vec<&str> = written.lines().collect();
    let root_tokens: u64 = first_lines[0]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(root_tokens <= 3000, "{written}");
    // Re-running replaces what the map wrote, and keeps a file the user put in its folder.
    let notes = out_dir.path().join("codebase-map/my-own-notes.md");
    std::fs::write(&notes, "mine").unwrap();
    repo.write("pkg0/extra.py", "def added_later():\n    return 1\n");
    ok(&env.fittok(&["map", path, "--fit", out_dir.path().to_str().unwrap()]));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine");
    // A user's file under a name the map plans is refused, not replaced.
    let planned = std::fs::read_dir(out_dir.path().join("codebase-map"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "md") && p != &notes)
        .expect("a subdocument");
    std::fs::write(&planned, "the user's edit").unwrap();
    let out = env.fittok(&["map", path, "--fit", out_dir.path().to_str().unwrap()]);
    assert!(!out.status.success(), "overwrote a user's edit");
    assert!(
        stderr(&out).contains("fittok did not write it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&planned).unwrap(),
        "the user's edit"
    );
}

#[test]
fn a_socket_path_that_is_a_users_file_is_refused_and_kept() {
    let env = DaemonEnv::new("not-socket");
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    std::fs::write(&env.socket, "precious").unwrap();
    let out = serve_in_foreground(&env);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a socket"), "{err}");
    assert_eq!(std::fs::read_to_string(&env.socket).unwrap(), "precious");
}

#[test]
fn clients_hanging_up_do_not_kill_the_daemon() {
    let env = DaemonEnv::new("hangup");
    ok(&env.fittok(&["daemon", "start"]));
    let pid = env.daemon_pids()[0];
    for _ in 0..20 {
        // Connect, say nothing, go away: the daemon's greeting hits a closed socket.
        drop(std::os::unix::net::UnixStream::connect(&env.socket).unwrap());
    }
    std::thread::sleep(Duration::from_millis(300));
    ok(&env.fittok(&["status"]));
    assert_eq!(env.daemon_pids(), vec![pid], "the same daemon still serves");
}

/// The daemon behaves as it was started: `status --json` shows its configuration, and a
/// client whose environment says otherwise for a setting that matters is told so (issue 17).
#[test]
fn a_client_is_told_when_its_environment_and_the_daemons_differ() {
    let env = DaemonEnv::new("settings");
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    ok(&env.fittok(&["daemon", "start"]));
    let status = ok(&env.fittok(&["status", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&status).expect("status JSON");
    let scrub = v["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .find(|s| s["name"] == "FITTOK_SCRUB")
        .expect("FITTOK_SCRUB reported");
    assert_eq!(scrub["value"], "on", "{v:#}");
    assert_eq!(scrub["matters"], true);
    // Same environment: nothing to say.
    let same = env.fittok(&["query", path, "vat rate", "--code"]);
    assert!(same.status.success());
    assert!(
        !stderr(&same).contains("running daemon has"),
        "{}",
        stderr(&same)
    );
    // This shell turns scrubbing off; the daemon, started without it, keeps it on.
    let differs = env
        .cmd("fittok")
        .env("FITTOK_SCRUB", "off")
        .args(["query", path, "vat rate", "--code"])
        .output()
        .unwrap();
    assert!(differs.status.success(), "{}", stderr(&differs));
    assert!(
        stderr(&differs).contains(
            "FITTOK_SCRUB: the running daemon has on, this environment off; `fittok daemon restart`"
        ),
        "{}",
        stderr(&differs)
    );
}

#[test]
fn a_first_answer_comes_before_the_tests_and_they_follow() {
    // Any test bytes at all are "many" here: the first build leaves them out.
    let env = DaemonEnv::new("sources-first").env("FITTOK_DEFER_TESTS_OVER", "1");
    let repo = repo();
    repo.write(
        "tests/test_tax.py",
        "from billing.tax import vat_for\n\n\ndef test_vat_for_germany():\n    assert vat_for(\"de\", 100) == 19\n",
    );
    let path = repo.path().to_str().unwrap();
    assert_answers_vat(&env, &repo);
    let log = env.log();
    assert!(
        log.contains("deferred_tests=1"),
        "the first build left the test out: {log}"
    );
    // A question naming a test needs it: answered from the complete snapshot at once.
    let answer = ok(&env.fittok(&[
        "query",
        path,
        "what does test_vat_for_germany check",
        "--budget",
        "600",
    ]));
    assert!(answer.contains("def test_vat_for_germany"), "{answer}");
    let expanded = ok(&env.fittok(&[
        "expand",
        "--repo",
        path,
        "tests/test_tax.py#test_vat_for_germany",
    ]));
    assert!(
        expanded.contains("assert vat_for(\"de\", 100) == 19"),
        "{expanded}"
    );

    // The complete snapshot is the one saved, so a restart restores all four files.
    wait_for_snapshot(&env);
    ok(&env.fittok(&["daemon", "restart"]));
    let again = ok(&env.fittok(&["index", path, "--no-wait"]));
    assert!(
        again.contains("4 files (4 from cache)") && again.contains("restored from the snapshot"),
        "{again}"
    );
}

#[test]
fn an_unwatched_repository_gets_its_deferred_tests_without_another_question() {
    let env = DaemonEnv::new("sources-first-unwatched")
        .env("FITTOK_DEFER_TESTS_OVER", "1")
        .env("FITTOK_AUTOWATCH", "false");
    let repo = repo();
    repo.write("tests/test_tax.py", "def test_vat():\n    assert True\n");
    assert_answers_vat(&env, &repo);
    assert!(env.log().contains("deferred_tests=1"), "{}", env.log());
    // No watcher, no further query: the updater adds them on its own.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !env.log().contains("snapshot updated") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(env.log().contains("snapshot updated"), "{}", env.log());
}

#[test]
fn outside_a_repository_home_and_folders_of_repositories_are_refused_and_an_empty_one_says_so() {
    let env = DaemonEnv::new("unrooted");
    let ask = |cwd: &std::path::Path, home: &std::path::Path| {
        env.cmd("fittok")
            .args(["query", "--code", "--budget", "300", "where", "is", "vat"])
            .current_dir(cwd)
            .env("HOME", home)
            .output()
            .unwrap()
    };
    let projects = TempRepo::new("unrooted-projects");
    projects
        .write("a/.git/HEAD", "ref: refs/heads/main\n")
        .write("a/x.py", "def vat():\n    return 1\n")
        .write("b/.git/HEAD", "ref: refs/heads/main\n")
        .write("b/y.py", "def tax():\n    return 2\n");
    let elsewhere = TempRepo::new("unrooted-home");
    let out = ask(projects.path(), elsewhere.path());
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("holds several (a, b)"),
        "{}",
        stderr(&out)
    );
    // The home directory: everything under it would be indexed.
    let home = TempRepo::new("unrooted-home2");
    home.write("notes.py", "def vat():\n    return 1\n");
    let out = ask(home.path(), home.path());
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("not inside a repository"),
        "{}",
        stderr(&out)
    );
    // A repository named on the command line is taken as given.
    let named = env
        .cmd("fittok")
        .args(["query", "--code", "--budget", "300"])
        .arg(projects.path().join("a"))
        .arg("where is vat")
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(ok(&named).contains("def vat"));
    // An empty folder says it holds no code, rather than that nothing matches.
    let empty = TempRepo::new("unrooted-empty");
    std::fs::create_dir_all(empty.path()).unwrap();
    let out = ask(empty.path(), elsewhere.path());
    assert!(
        ok(&out).contains("holds no source file"),
        "{}",
        stdout(&out)
    );
}

/// `git -C dir ARGS` with a fixed author; false when git is missing or fails.
fn git(dir: &std::path::Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_daemon_reads_a_repositorys_history_in_the_background_and_ranks_with_it() {
    // The history's own list in the fusion (off by default) makes its use visible per node.
    let env = DaemonEnv::new("history").env("FITTOK_RANK_WEIGHTS", "1,1,1,0.3,1,1,1");
    let repo = TempRepo::new("history-repo");
    repo.write(
        "billing/tax.py",
        "RATES = {\"de\": 0.19}\n\n\ndef vat_for(country, amount):\n    return amount * RATES.get(country, 0.0)\n",
    )
    .write("billing/ledger.py", "def post_entry(book, amount):\n    book.append(amount)\n");
    let dir = repo.path();
    assert!(git(dir, &["init", "-q"]), "git is needed for this test");
    assert!(git(dir, &["add", "billing/ledger.py"]));
    assert!(git(dir, &["commit", "-q", "-m", "Ledger: post entries"]));
    assert!(git(dir, &["add", "billing/tax.py"]));
    assert!(git(
        dir,
        &["commit", "-q", "-m", "Fix VAT rounding for German invoices"]
    ));
    let path = dir.to_str().unwrap();
    let ask = || {
        let out = ok(&env.fittok(&[
            "query",
            path,
            "German invoices get the wrong VAT",
            "--json",
            "--explain",
            "10",
        ]));
        serde_json::from_str::<serde_json::Value>(&out).expect("JSON answer")
    };
    ask();
    // The history is read off the answer's path: it shows in the ranking once read.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut ranked = ask();
    let with_history = |v: &serde_json::Value| {
        v["ranking"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["ranks"]["history"].is_number() && r["path"] == "billing/tax.py")
    };
    while !with_history(&ranked) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        ranked = ask();
    }
    assert!(with_history(&ranked), "{}", ranked["ranking"]);
    let status = status_json(&env);
    let parts = status["repos"][0]["memory"].to_string();
    assert!(parts.contains("history"), "{parts}");
}

/// A 95-line Python function whose head holds the words the tests ask with, and `tail` (its
/// lines before `return`) far below any window its head would get at 500 tokens.
fn long_importer(tail: &str) -> String {
    let steps: String = (0..90)
        .map(|i| format!("    stage_{i} = records[{i}]\n"))
        .collect();
    format!(
        "def import_records(records, strict):\n    \"\"\"Import records; bad input fails.\"\"\"\n    status = 1\n{steps}{tail}    return status\n"
    )
}

#[test]
fn a_question_naming_a_commit_is_shown_what_that_commit_added() {
    let env = DaemonEnv::new("named-commit");
    let repo = TempRepo::new("named-commit-repo");
    let before = long_importer("    if not strict:\n        status = 1\n");
    repo.write("importer.py", &before);
    let dir = repo.path();
    assert!(git(dir, &["init", "-q"]), "git is needed for this test");
    assert!(git(dir, &["add", "importer.py"]));
    assert!(git(dir, &["commit", "-q", "-m", "Importer"]));
    repo.write(
        "importer.py",
        before.replace(
            "        status = 1\n",
            "        status = 0  # lenient mode\n",
        ),
    );
    assert!(git(dir, &["commit", "-q", "-am", "Lenient imports"]));
    // Abbreviated, as issues write it.
    let hash = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--short=8", "HEAD"])
        .output()
        .expect("git rev-parse");
    let hash = String::from_utf8_lossy(&hash.stdout).trim().to_string();
    let path = dir.to_str().unwrap();
    let question = format!("Bad input does not fail the import any more since commit {hash}");
    let ask = || ok(&env.fittok(&["query", "--code", "--budget", "500", path, &question]));
    // The history is read off the answer's path, at idle priority (on a busy machine it may
    // wait its turn); once read, the window of the long function moves from the question's
    // words (its docstring and head) to the line the commit added.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut text = ask();
    while !text.contains("status = 0  # lenient mode") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        text = ask();
    }
    assert!(text.contains("status = 0  # lenient mode"), "{text}");
}

#[test]
fn a_quoted_line_of_the_code_places_the_window_of_a_long_function() {
    let env = DaemonEnv::new("quoted-line");
    let repo = TempRepo::new("quoted-line-repo");
    repo.write(
        "importer.py",
        long_importer("    leftover = len(records) - stage_count(records)\n"),
    );
    let path = repo.path().to_str().unwrap();
    let ask =
        |question: &str| ok(&env.fittok(&["query", "--code", "--budget", "500", path, question]));
    // Without the quoted line the window stays at the head, where the question's words are.
    let words = "Importing bad input does not fail: the import records status is wrong";
    assert!(!ask(words).contains("leftover = len(records)"));
    let quoted = format!(
        "{words}. I think this line is the culprit:\n\n    leftover = len(records) - stage_count(records)\n"
    );
    let text = ask(&quoted);
    assert!(
        text.contains("leftover = len(records) - stage_count(records)"),
        "{text}"
    );
}

#[test]
fn a_question_about_nothing_here_says_so_first_and_stays_short() {
    let env = DaemonEnv::new("nothing");
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    for question in [
        "zebra giraffe elephant banana",
        "what's the capital of France?",
    ] {
        let text = ok(&env.fittok(&["query", "--code", path, question]));
        assert!(
            text.lines()
                .nth(1)
                .unwrap_or("")
                .starts_with("Nothing in this repository matches"),
            "{text}"
        );
        assert!(!text.contains("## Code"), "{text}");
        let v: serde_json::Value =
            serde_json::from_str(&ok(&env.fittok(&["query", "--json", path, question]))).unwrap();
        assert_eq!(v["matched"], false, "{v}");
        assert!(v["tokens"].as_u64().unwrap() <= 300, "{v}");
        // The first line states the short answer's size, not the one it replaced.
        let stated = text
            .lines()
            .next()
            .and_then(|l| l.rsplit_once(" · "))
            .and_then(|(_, t)| t.strip_suffix(" tokens"))
            .and_then(|n| n.parse::<u64>().ok());
        assert_eq!(stated, v["tokens"].as_u64(), "{text}");
        assert!(v["nodes"].as_array().unwrap().is_empty(), "{v}");
    }
    // A question about the code still gets the code.
    let v: serde_json::Value = serde_json::from_str(&ok(&env.fittok(&[
        "query",
        "--json",
        path,
        "how is VAT added to an invoice total",
    ])))
    .unwrap();
    assert_eq!(v["matched"], true, "{v}");
    assert!(v["text"].as_str().unwrap().contains("def total_with_vat"));
}

#[test]
fn over_the_memory_budget_the_least_recently_used_repository_leaves_and_comes_back_warm() {
    // A budget any process exceeds: every repository built pushes the others out.
    let env = DaemonEnv::new("budget").env("FITTOK_MEMORY_BUDGET_MB", "1");
    let (first, second) = (repo(), TempRepo::new("budget-second"));
    second.write(
        "geo/area.py",
        "def circle_area(radius):\n    return 3.14159 * radius * radius\n",
    );
    assert_answers_vat(&env, &first);
    let resident = |env: &DaemonEnv| -> Vec<String> {
        status_json(env)["repos"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["state"] != "not resident (on disk only)")
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(resident(&env).len(), 1);
    let area = ok(&env.fittok(&[
        "query",
        second.path().to_str().unwrap(),
        "circle area",
        "--budget",
        "300",
    ]));
    assert!(area.contains("def circle_area"), "{area}");
    let now = resident(&env);
    assert_eq!(now.len(), 1, "the first repository left memory: {now:?}");
    assert!(
        now[0].ends_with(second.path().file_name().unwrap().to_str().unwrap()),
        "{now:?}"
    );
    assert!(
        env.log().contains("memory budget exceeded"),
        "{}",
        env.log()
    );
    // Status says where the first one went, with real figures and times.
    let status = status_json(&env);
    let gone: Vec<&serde_json::Value> = status["repos"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] == "not resident (on disk only)")
        .collect();
    assert_eq!(gone.len(), 1, "{status}");
    assert!(gone[0]["nodes"].as_u64().unwrap() > 0, "{status}");
    assert!(
        gone[0]["left_memory_at_ms"].as_u64().unwrap() > 0,
        "{status}"
    );
    assert!(gone[0]["indexed_at_ms"].as_u64().unwrap() > 0, "{status}");
    let text = ok(&env.fittok(&["status"]));
    assert!(
        text.contains("not resident (on disk only) · left memory")
            && text.contains("the next question loads it from the cache"),
        "{text}"
    );
    // It comes back from its snapshot on disk, answering the same, and is resident again.
    assert_answers_vat(&env, &first);
    let status = status_json(&env);
    assert!(
        status["repos"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["state"] != "not resident (on disk only)"
                || !r["path"]
                    .as_str()
                    .unwrap()
                    .ends_with(first.path().file_name().unwrap().to_str().unwrap())),
        "{status}"
    );
}

/// A repository whose call graph is known: `checkout` → `total_with_vat` → `vat_for`, and
/// `Invoice` used as a type by `checkout`.
fn shop() -> TempRepo {
    let repo = repo();
    repo.write(
        "billing/shop.py",
        "from .invoice import Invoice\n\n\ndef checkout(lines, country):\n    invoice = Invoice(lines)\n    return invoice.total_with_vat(country)\n",
    );
    repo
}

#[test]
fn navigation_in_all_four_directions_through_the_daemon() {
    let env = DaemonEnv::new("navigate");
    let repo = shop();
    let path = repo.path().to_str().unwrap();
    let nav = |args: &[&str]| ok(&env.fittok(&[&["navigate"], args, &[path]].concat()));

    let callers = nav(&["vat_for"]);
    assert!(callers.contains("callers of `vat_for`"), "{callers}");
    assert!(
        callers.contains("14 ▶\t        return net + vat_for(country, net)")
            && callers.contains("by import"),
        "{callers}"
    );

    let callees = nav(&["Invoice.total_with_vat", "--direction", "callees"]);
    assert!(
        callees.contains("what `Invoice.total_with_vat` calls")
            && callees.contains("def vat_for(country, amount):"),
        "{callees}"
    );

    let uses = nav(&["Invoice", "--direction", "references"]);
    assert!(
        uses.contains("uses of `Invoice`") && uses.contains("5 ▶\t    invoice = Invoice(lines)"),
        "{uses}"
    );

    let impact = nav(&["billing/tax.py:6", "--direction", "impact", "--depth", "2"]);
    assert!(
        impact.contains("what a change to `vat_for` can reach")
            && impact.contains("Invoice.total_with_vat")
            && impact.contains("checkout — calls `Invoice.total_with_vat`")
            && impact.contains("(step 2)"),
        "{impact}"
    );
    let depth1 = nav(&["vat_for", "--direction", "impact", "--depth", "1"]);
    assert!(!depth1.contains("checkout"), "{depth1}");

    // The same request as JSON, and through `--no-daemon` the same answer.
    let json: serde_json::Value =
        serde_json::from_str(&nav(&["vat_for", "--json", "--budget", "500"])).expect("JSON");
    assert_eq!(json["nodes"][0]["name"], "Invoice.total_with_vat", "{json}");
    assert!(json["tokens"].as_u64().unwrap() <= 500);
    let in_process = ok(&env.fittok(&["--no-daemon", "navigate", "vat_for", path]));
    assert!(
        in_process.contains("14 ▶\t        return net + vat_for(country, net)"),
        "{in_process}"
    );

    // Asked in words, `query` gives the same answer.
    let asked = ok(&env.fittok(&["query", "--code", path, "who calls vat_for?"]));
    assert!(asked.contains("callers of `vat_for`"), "{asked}");

    // Bad requests: a name nothing defines, a line past the end, a depth out of range.
    for (args, says) in [
        (
            vec!["no_such_function"],
            "no definition matches \"no_such_function\"",
        ),
        (vec!["billing/tax.py:99"], "billing/tax.py has no line 99"),
    ] {
        let out = env.fittok(&[&["navigate"], &args[..], &[path]].concat());
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
    let out = env.fittok(&["navigate", "vat_for", path, "--depth", "9"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn the_configuration_file_sets_what_the_environment_does_not_and_is_reported() {
    let env = DaemonEnv::new("config-file");
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    let file = env.dir.path().join("config.toml");
    std::fs::write(
        &file,
        "max_budget = 300\nidle_timeout = 900\nscrub = true\n",
    )
    .unwrap();
    // The file caps every answer: a request for no cap gets 300 tokens at most.
    let answer = ok(&env.fittok(&["query", "--code", "--json", path, "how is VAT added"]));
    let v: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    assert!(v["tokens"].as_u64().unwrap() <= 300, "{}", v["tokens"]);
    let s = status_json(&env);
    assert_eq!(s["idle_timeout_s"], 900, "{s}");
    assert_eq!(s["config_file"], file.display().to_string());
    let setting = |name: &str| {
        s["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name}"))
    };
    assert_eq!(setting("FITTOK_MAX_BUDGET")["value"], "300");
    assert_eq!(setting("FITTOK_MAX_BUDGET")["source"], "config file");
    assert_eq!(setting("FITTOK_HISTORY_COMMITS")["source"], "default");
    let shown = ok(&env.fittok(&["config"]));
    assert!(
        shown.contains(&file.display().to_string())
            && shown.lines().any(|l| l.starts_with("FITTOK_MAX_BUDGET")
                && l.contains("config file")
                && l.contains("300")),
        "{shown}"
    );
    ok(&env.fittok(&["daemon", "stop"]));

    // The environment wins over the file.
    let mut over = env.cmd("fittok");
    over.args(["query", "--code", "--json", path, "how is VAT added"])
        .env("FITTOK_MAX_BUDGET", "250");
    let out = over.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let s = status_json(&env);
    let budget = s["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "FITTOK_MAX_BUDGET")
        .cloned()
        .unwrap();
    assert_eq!(budget["value"], "250", "{s}");
    assert_eq!(budget["source"], "environment");
    ok(&env.fittok(&["daemon", "stop"]));

    // A key that names no setting stops the daemon from starting, naming the file and the key.
    std::fs::write(&file, "max_budgt = 300\n").unwrap();
    let out = env.fittok(&["query", "--code", path, "how is VAT added"]);
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(said.contains("`max_budgt` is not a setting"), "{said}");
}

/// The threads of `pid` whose name starts with `prefix`, with their scheduling policy
/// (`/proc/PID/task/TID/stat` field 41; 5 is `SCHED_IDLE`).
#[cfg(target_os = "linux")]
fn threads_named(pid: u32, prefix: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap();
        // Fields after the name (which may hold spaces) start at field 3.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let policy = after.split(' ').nth(41 - 3).unwrap().parse().unwrap();
        out.push((task.file_name().to_string_lossy().into_owned(), policy));
    }
    out
}
