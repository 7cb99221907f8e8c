//! Hostile input and misuse, each case with its outcome asserted: exit code, one clear line,
//! the daemon still answering, nothing lost (issue 19's probe, kept fixed).

use std::io::Read;
use std::process::Stdio;

use fittok_e2e::{DaemonEnv, TempRepo, ok, status_json, stderr, stdout};

fn small_repo(tag: &str) -> TempRepo {
    let repo = TempRepo::new(tag);
    repo.write(
        "billing/tax.py",
        "RATES = {\"de\": 0.19}\n\n\ndef vat_for(country, amount):\n    \"\"\"Value added tax owed.\"\"\"\n    return amount * RATES.get(country, 0.0)\n",
    );
    repo
}

/// `files` Python files of `functions` one-line functions each, `{prefix}_{file}_{i}(request)`,
/// in 20 packages.
fn generated_repo(tag: &str, files: usize, functions: usize, prefix: &str) -> TempRepo {
    let repo = TempRepo::new(tag);
    for f in 0..files {
        let src: String = (0..functions)
            .map(|i| format!("def {prefix}_{f}_{i}(request):\n    return request.get({i})\n\n\n"))
            .collect();
        repo.write(&format!("pkg{}/mod{f}.py", f % 20), src);
    }
    repo
}

/// The lines of stderr that are not log records (the daemon's tracing lines carry a level).
fn message_lines(out: &std::process::Output) -> Vec<String> {
    stderr(out)
        .lines()
        .filter(|l| !l.contains(" WARN ") && !l.contains(" INFO ") && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn user_errors_are_one_line_even_with_rust_backtrace() {
    let env = DaemonEnv::new("rel-backtrace").env("RUST_BACKTRACE", "1");
    let out = env
        .cmd("fittokd")
        .args(["query", "/no/such/repository", "anything"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = message_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("/no/such/repository"), "{lines:?}");
    // The MCP shim with stdin closed before `initialize`.
    let out = env.cmd("fittok-mcp").stdin(Stdio::null()).output().unwrap();
    assert!(!out.status.success());
    let lines = message_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        !stderr(&out).contains("stack backtrace"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_reader_that_hangs_up_early_ends_the_command_quietly() {
    let env = DaemonEnv::new("rel-pipe");
    let repo = TempRepo::new("rel-pipe");
    let big: String = (0..20_000)
        .map(|i| format!("def f{i}(x):\n    return x + {i}\n\n"))
        .collect();
    repo.write("big.py", &big);
    let path = repo.path().to_str().unwrap();
    for args in [
        vec!["expand", "--repo", path, "big.py:1-60000"],
        vec!["query", path, "functions that add", "--budget", "0"],
    ] {
        let mut child = env
            .cmd("fittokd")
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 64];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        // The pipe's reader is gone now, as with `| head -c 64`.
        let out = child.wait_with_output().unwrap();
        assert!(
            !stderr(&out).contains("panicked"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn an_absurd_id_is_refused_with_a_clear_line_and_the_daemon_answers_on() {
    let env = DaemonEnv::new("rel-id");
    let repo = small_repo("rel-id");
    let path = repo.path().to_str().unwrap();
    for n in [300, 17_000, 100_000] {
        let id = "x".repeat(n);
        let out = env.fittok(&["expand", "--repo", path, "--", &id]);
        assert_eq!(out.status.code(), Some(1), "{n}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("unknown id") || err.contains("is not an id"),
            "{n}: {err}"
        );
        assert!(
            err.len() < 3000,
            "{n}: the error repeats {} bytes",
            err.len()
        );
    }
    let answer = ok(&env.fittok(&["query", path, "vat rate", "--budget", "500"]));
    assert!(answer.contains("def vat_for"), "{answer}");
}

#[test]
fn fit_refuses_anything_but_markdown_and_leaves_it_as_it_was() {
    let env = DaemonEnv::new("rel-fit-kind");
    let dir = TempRepo::new("rel-fit-kind");
    let source: String = (0..3000)
        .map(|i| format!("def handler_{i}(request):\n    return request.get({i})\n\n\n"))
        .collect();
    dir.write("handlers.py", &source);
    let mut binary = b"# Looks like Markdown\n\n".to_vec();
    binary.extend(std::iter::repeat_n(0u8, 40_000));
    dir.write("blob.md", &binary);
    for (name, expect) in [
        ("handlers.py", "is not a Markdown file"),
        ("blob.md", "binary data"),
    ] {
        let p = dir.path().join(name);
        let out = env.fittok(&["fit", "generate", p.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stdout(&out));
        assert!(stderr(&out).contains(expect), "{name}: {}", stderr(&out));
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("handlers.py")).unwrap(),
        source
    );
    assert_eq!(std::fs::read(dir.path().join("blob.md")).unwrap(), binary);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "nothing written beside them: {names:?}");
}

#[test]
fn fit_names_the_cause_for_a_folder_a_read_only_document_and_an_unwritable_folder() {
    use std::os::unix::fs::PermissionsExt;
    let env = DaemonEnv::new("rel-fit-cause");
    let dir = TempRepo::new("rel-fit-cause");
    let long: String = (0..40)
        .map(|i| {
            format!(
                "## Part {i}\n\n{}\n\n",
                "Words about this part. ".repeat(80)
            )
        })
        .collect();
    let long = format!("# Manual\n\n{long}");
    std::fs::create_dir_all(dir.path().join("x.md")).unwrap();
    dir.write("locked/MANUAL.md", &long);
    dir.write("readonly.md", &long);
    let mut binary = b"# Looks like Markdown\n\n".to_vec();
    binary.extend(std::iter::repeat_n(0u8, 1000));
    dir.write("blob.md", &binary);
    let readonly = dir.path().join("readonly.md");
    std::fs::set_permissions(&readonly, std::fs::Permissions::from_mode(0o444)).unwrap();
    let path = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
    for (args, code, expect) in [
        (
            vec!["fit", "generate", &path("x.md")],
            1,
            "is a directory, not a Markdown file",
        ),
        (
            vec!["fit", "measure", &path("x.md")],
            1,
            "is a directory, not a Markdown file",
        ),
        (vec!["fit", "measure", &path("blob.md")], 1, "binary data"),
        (
            vec!["fit", "generate", &path("readonly.md")],
            1,
            "is read-only",
        ),
    ] {
        for no_daemon in [false, true] {
            let args: Vec<&str> = no_daemon
                .then_some("--no-daemon")
                .into_iter()
                .chain(args.iter().copied())
                .collect();
            let out = env.fittok(&args);
            assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
        }
    }
    assert_eq!(
        std::fs::read_to_string(&readonly).unwrap(),
        long,
        "left as it was"
    );
    // A folder that cannot take files: named, before anything is written. Root writes
    // anywhere, so only another user can see the refusal.
    let locked = dir.path().join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let root = unsafe { libc::geteuid() } == 0;
    let out = env.fittok(&["fit", "generate", &path("locked/MANUAL.md")]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    if !root {
        assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
        let msg = stderr(&out);
        assert!(
            msg.contains(&format!("the folder {} is not writable", locked.display())),
            "{msg}"
        );
        assert!(!msg.contains("fittok-tmp"), "{msg}");
    }
}

#[test]
fn bad_socket_paths_fail_at_once_with_the_cause() {
    let dir = TempRepo::new("rel-sock");
    let repo = small_repo("rel-sock-repo");
    let long = dir.path().join("x".repeat(120));
    std::fs::create_dir_all(dir.path().join("a-directory")).unwrap();
    for (socket, cause) in [
        (dir.path().join("a-directory"), "is a directory"),
        (long.join("fittokd.sock"), "at most"),
    ] {
        let env = DaemonEnv::new("rel-sock").env("FITTOK_SOCKET", socket.to_str().unwrap());
        let t = std::time::Instant::now();
        let out = env.fittok(&["query", repo.path().to_str().unwrap(), "vat"]);
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(stderr(&out).contains(cause), "{}", stderr(&out));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "failed only after {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn a_listener_that_never_answers_gives_a_bounded_wait_and_one_line() {
    use std::os::unix::net::UnixListener;
    let dir = TempRepo::new("rel-foreign");
    let repo = small_repo("rel-foreign-repo");
    let socket = dir.path().join("foreign.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    // Accepts and keeps every connection, answering nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let env = DaemonEnv::new("rel-foreign").env("FITTOK_SOCKET", socket.to_str().unwrap());
    for args in [
        vec!["query", repo.path().to_str().unwrap(), "vat"],
        vec!["status"],
        vec!["daemon", "stop"],
    ] {
        let t = std::time::Instant::now();
        let out = env.fittok(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("does not answer"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(15),
            "{args:?} took {:?}",
            t.elapsed()
        );
    }
    assert!(socket.exists(), "another program's socket is left alone");
}

#[test]
fn a_stopped_daemon_gives_a_bounded_wait_and_then_answers_again() {
    let env = DaemonEnv::new("rel-frozen");
    let repo = small_repo("rel-frozen-repo");
    let path = repo.path().to_str().unwrap();
    ok(&env.fittok(&["query", path, "vat", "--budget", "300"]));
    let pids = env.daemon_pids();
    assert_eq!(pids.len(), 1, "{pids:?}");
    let signal = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, &pids[0].to_string()])
            .status()
            .unwrap()
    };
    signal("-STOP");
    let t = std::time::Instant::now();
    let out = env.fittok(&["query", path, "vat", "--budget", "300"]);
    let took = t.elapsed();
    signal("-CONT");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not answer"), "{}", stderr(&out));
    assert!(took < std::time::Duration::from_secs(15), "took {took:?}");
    let again = ok(&env.fittok(&["query", path, "vat", "--budget", "300"]));
    assert!(again.contains("def vat_for"), "{again}");
}

#[test]
fn budgets_below_the_smallest_answer_are_refused_and_the_rest_are_kept() {
    use fittok_engine::tokens::{Encoding, count};
    let env = DaemonEnv::new("rel-budget");
    let repo = small_repo("rel-budget");
    let path = repo.path().to_str().unwrap();
    for b in ["1", "10", "100", "199"] {
        for out in [
            env.fittok(&["query", path, "vat rate", "--budget", b]),
            env.cmd("fittokd")
                .args(["query", path, "vat rate", "--budget", b])
                .output()
                .unwrap(),
        ] {
            assert_eq!(out.status.code(), Some(2), "{b}: {}", stdout(&out));
            assert!(stdout(&out).is_empty(), "{b}: nothing half-written");
            assert!(
                stderr(&out).contains("smallest useful answer (200 tokens"),
                "{b}: {}",
                stderr(&out)
            );
        }
    }
    for b in [200, 230, 300, 450] {
        let s = b.to_string();
        for (who, out) in [
            (
                "fittok",
                env.fittok(&["query", path, "vat rate", "--budget", &s]),
            ),
            (
                "fittokd",
                env.cmd("fittokd")
                    .args(["query", path, "vat rate", "--budget", &s])
                    .output()
                    .unwrap(),
            ),
        ] {
            let text = ok(&out);
            let n = count(Encoding::Cl100k, &text);
            assert!(n <= b, "{who} at {b}: {n} tokens\n{text}");
            assert_eq!(
                text.matches("```").count() % 2,
                0,
                "{who} at {b}: a fence left open\n{text}"
            );
            assert!(text.contains("vat_for"), "{who} at {b}:\n{text}");
        }
    }
}

#[test]
fn ctrl_c_during_a_first_index_exits_130_and_spares_the_daemon() {
    let env = DaemonEnv::new("rel-sigint");
    // Enough code that the first index takes a while.
    let repo = generated_repo("rel-sigint", 400, 60, "handler");
    let path = repo.path().to_str().unwrap();
    let child = env
        .cmd("fittok")
        .args(["query", path, "handler for request", "--budget", "500"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    // Either the answer came first (a fast machine) or the interrupt did: never a death by
    // signal, never half an answer.
    match out.status.code() {
        Some(130) => {
            assert!(stdout(&out).is_empty(), "{}", stdout(&out));
            assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
        }
        Some(0) => assert!(stdout(&out).contains("handler_"), "{}", stdout(&out)),
        other => panic!("exit {other:?}: {}", stderr(&out)),
    }
    let again = ok(&env.fittok(&["query", path, "handler for request", "--budget", "500"]));
    assert!(again.contains("handler_"), "the daemon answers on");
}

/// Waits until `cond` holds, up to `secs`.
fn eventually(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_secs(secs) {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

/// Overwrites `blocks` 4 KB blocks of `path` with noise (deterministic).
fn damage(path: &std::path::Path, blocks: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let n = bytes.len() / 4096;
    assert!(n > 2, "{} is too small to damage", path.display());
    let mut rng = fittok_engine::testing::Rng::new(0x2545_F491_4F6C_DD1D);
    for _ in 0..blocks {
        let x = rng.next_u64();
        let b = (x as usize) % n;
        for (i, byte) in bytes[b * 4096..(b + 1) * 4096].iter_mut().enumerate() {
            *byte = (x >> (i % 8)) as u8 ^ i as u8;
        }
    }
    std::fs::write(path, bytes).unwrap();
}

fn moved_aside(cache: &std::path::Path) -> bool {
    std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains("corrupt-"))
}

#[test]
fn a_damaged_cache_is_moved_aside_and_answers_go_on() {
    let env = DaemonEnv::new("rel-corrupt");
    let repo = generated_repo("rel-corrupt", 40, 30, "vat_rule");
    let path = repo.path().to_str().unwrap();
    let ask = || {
        let a = ok(&env.fittok(&["query", path, "vat rule request", "--budget", "400"]));
        assert!(a.contains("vat_rule_"), "{a}");
    };
    ask();
    ok(&env.fittok(&["daemon", "stop"]));
    let cache = env.cache.join("cache.redb");
    // Damaged between runs.
    damage(&cache, 6);
    let t = std::time::Instant::now();
    ask();
    assert!(t.elapsed() < std::time::Duration::from_secs(15));
    assert!(moved_aside(&env.cache), "the damaged file is kept aside");
    // Damaged under a running daemon: its next reads find it.
    std::fs::write(
        repo.path().join("pkg0/mod0.py"),
        "def vat_rule_new(amount):\n    return amount\n",
    )
    .unwrap();
    damage(&cache, 6);
    ask();
    ok(&env.fittok(&["daemon", "stop"]));
    ask();
    assert_eq!(
        status_json(&env)["cache_note"],
        "",
        "a fresh cache after restart"
    );
}

#[test]
fn an_unusable_cache_directory_leaves_a_working_daemon_that_says_why() {
    let dir = TempRepo::new("rel-cachefile");
    // A file where the cache directory should be (what a read-only directory is to a
    // process that may not write it; tests may run as root, which no mode stops).
    dir.write("cache", "not a directory");
    let env = DaemonEnv::new("rel-cachefile").env(
        "FITTOK_CACHE_DIR",
        dir.path().join("cache").to_str().unwrap(),
    );
    let repo = small_repo("rel-cachefile-repo");
    let t = std::time::Instant::now();
    let a = ok(&env.fittok(&[
        "query",
        repo.path().to_str().unwrap(),
        "vat rate",
        "--budget",
        "300",
    ]));
    assert!(a.contains("def vat_for"), "{a}");
    assert!(t.elapsed() < std::time::Duration::from_secs(10));
    let s = status_json(&env);
    assert!(
        s["cache_note"]
            .as_str()
            .unwrap()
            .contains("answering without it"),
        "{s}"
    );
    assert!(
        s["log_note"]
            .as_str()
            .unwrap()
            .contains("cannot write the log"),
        "{s}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("cache")).unwrap(),
        "not a directory",
        "nothing of the user's is touched"
    );
}

#[test]
fn a_daemon_whose_socket_is_removed_exits() {
    let env = DaemonEnv::new("rel-sockgone");
    let repo = small_repo("rel-sockgone-repo");
    let ask = || {
        ok(&env.fittok(&[
            "query",
            repo.path().to_str().unwrap(),
            "vat",
            "--budget",
            "300",
        ]))
    };
    ask();
    // Under load a second spawn can race the first one's start; it refuses the live socket
    // and leaves (`a_second_daemon_on_a_live_socket_refuses_and_the_first_keeps_serving`).
    assert!(
        eventually(10, || env.daemon_pids().len() == 1),
        "{:?}\n{}",
        env.daemon_pids(),
        env.log()
    );
    let first = env.daemon_pids();
    // `rm`, a tmp cleaner, or the runtime directory going at logout; the next client comes
    // at once, finds no daemon and starts one.
    std::fs::remove_file(&env.socket).unwrap();
    ask();
    assert!(
        eventually(10, || env.daemon_pids().len() == 1),
        "two daemons after 10 s: {:?}",
        env.daemon_pids()
    );
    let now = env.daemon_pids();
    assert_ne!(now, first, "the new daemon stays, the unreachable one left");
    assert!(
        env.log()
            .contains("socket file removed or replaced: stopping")
    );
    // The new daemon has the cache, once the old one let it go.
    assert!(eventually(10, || status_json(&env)["cache_note"] == ""));
}

#[test]
fn a_second_daemon_on_the_same_cache_takes_it_when_the_first_lets_go() {
    let first = DaemonEnv::new("rel-twocache-a");
    let second =
        DaemonEnv::new("rel-twocache-b").env("FITTOK_CACHE_DIR", first.cache.to_str().unwrap());
    let repo = small_repo("rel-twocache-repo");
    let path = repo.path().to_str().unwrap();
    ok(&first.fittok(&["query", path, "vat", "--budget", "300"]));
    ok(&second.fittok(&["query", path, "vat", "--budget", "300"]));
    let note = status_json(&second)["cache_note"].clone();
    assert!(
        note.as_str().unwrap().contains("held by another process"),
        "{note}"
    );
    ok(&first.fittok(&["daemon", "stop"]));
    assert!(
        eventually(10, || status_json(&second)["cache_note"] == ""),
        "the second daemon never took the cache"
    );
    ok(&second.fittok(&["daemon", "stop"]));
}

#[test]
fn hostile_files_are_skipped_with_a_reason_and_the_rest_answers() {
    let env = DaemonEnv::new("rel-hostile");
    let repo = small_repo("rel-hostile");
    // Huge, one 300 KB line (minified), binary under a source name, non-UTF-8 source, a deep
    // tree, a symlink loop and a symlink out of the repository.
    repo.write("big/huge.py", "x = 1\n".repeat(250_000));
    repo.write(
        "web/bundle.js",
        format!("var a={};", "f(1),".repeat(60_000)),
    );
    repo.write("bin/blob.py", [0u8, 159, 146, 150, 0, 1, 2, 3].repeat(500));
    let mut latin1 =
        b"def caf\xe9_total(prices):\n    \"\"\"Total in \xe9uros.\"\"\"\n    return sum(prices)\n"
            .to_vec();
    latin1.extend_from_slice(b"\xff\xfe\n");
    repo.write("legacy/latin1.py", latin1);
    let deep: String = (0..60).map(|i| format!("d{i}/")).collect();
    repo.write(
        &format!("{deep}leaf.py"),
        "def deepest_helper():\n    return 42\n",
    );
    std::os::unix::fs::symlink(repo.path(), repo.path().join("loop")).unwrap();
    std::os::unix::fs::symlink("/etc", repo.path().join("etc-link")).unwrap();
    let path = repo.path().to_str().unwrap();
    let a = ok(&env.fittok(&["query", path, "vat rate amount", "--budget", "500"]));
    assert!(a.contains("def vat_for"), "{a}");
    let d = ok(&env.fittok(&["query", path, "deepest helper", "--budget", "300"]));
    assert!(d.contains("deepest_helper"), "{d}");
    assert!(
        !a.contains("/etc/") && !d.contains("passwd"),
        "nothing from outside"
    );
    let inspect = env.cmd("fittokd").args(["inspect", path]).output().unwrap();
    let report = ok(&inspect);
    for reason in ["too large", "minified", "binary", "symlink"] {
        assert!(report.contains(reason), "{reason} not reported:\n{report}");
    }
    // The daemon is alive and answers again.
    assert!(ok(&env.fittok(&["status"])).contains("ready"));
}

/// A library copied into the project's package (requests' `packages/urllib3`) is not the
/// project's code: its words match the question better than the project's own code does, and
/// it is skipped, with its reason, while the project's code answers.
#[test]
fn a_vendored_library_is_skipped_with_its_reason_and_the_project_answers() {
    let env = DaemonEnv::new("rel-vendored");
    let repo = TempRepo::new("rel-vendored");
    repo.write("shop/__init__.py", "__version__ = '2.1'\n");
    repo.write(
        "shop/session.py",
        "from .packages.retry import pool\n\n\ndef open_session(url):\n    \"\"\"A session on the shop's connection pool.\"\"\"\n    return pool.connection_pool_for(url)\n",
    );
    repo.write("shop/packages/__init__.py", "from . import retry\n");
    repo.write("shop/packages/retry/__init__.py", "__version__ = '1.3'\n");
    repo.write(
        "shop/packages/retry/pool.py",
        "def connection_pool_for(url):\n    \"\"\"Connection pool: reuse a pooled connection, retry the connection pool.\"\"\"\n    return ConnectionPool(url)\n",
    );
    let path = repo.path().to_str().unwrap();
    let a = ok(&env.fittok(&["query", path, "connection pool retry", "--budget", "600"]));
    assert!(a.contains("def open_session"), "{a}");
    assert!(!a.contains("packages/retry/pool.py"), "{a}");
    let inspect = env.cmd("fittokd").args(["inspect", path]).output().unwrap();
    let report = ok(&inspect);
    assert!(report.contains("vendored"), "not reported:\n{report}");
}

/// A C++ library that also ships its headers concatenated into one (nlohmann/json's
/// `single_include/`) holds every definition twice: the copy is skipped, with its reason, and
/// answers come from the real headers — also when the copy appears after the first answer.
#[test]
fn an_amalgamation_of_the_sources_is_skipped_and_the_sources_answer() {
    let env = DaemonEnv::new("rel-amalgamation");
    let repo = TempRepo::new("rel-amalgamation");
    let part = |tag: &str| -> String {
        (0..200)
            .map(|i| {
                format!(
                    "inline int {tag}_step_{i}(int value_{i}) {{\n    return {tag}_table[value_{i} % {tag}_size] + {i};\n}}\n\n"
                )
            })
            .collect()
    };
    let parts = ["lexer", "parser", "serializer"].map(|tag| (tag, part(tag)));
    for (tag, text) in &parts {
        repo.write(
            &format!("include/lib/{tag}.hpp"),
            format!("#pragma once\n\n{text}"),
        );
    }
    repo.write(
        "include/lib/reader.hpp",
        "#pragma once\n\n/// Reads the next token with the lexer's escape table.\ninline int read_escaped_token(int escape) {\n    return lexer_step_7(escape);\n}\n",
    );
    let path = repo.path().to_str().unwrap();
    let question = "read escaped token with the escape table";
    let first = ok(&env.fittok(&["query", path, question, "--budget", "800"]));
    assert!(first.contains("include/lib/reader.hpp"), "{first}");
    // The library grows a function, and the copy is regenerated with it.
    let reader = "#pragma once\n\n/// Reads the next token with the lexer's escape table.\ninline int read_escaped_token(int escape) {\n    return lexer_step_7(escape);\n}\n\n/// Reads a quoted token, unquoting it first.\ninline int read_quoted_token(int quote) {\n    return read_escaped_token(quote) + 1;\n}\n";
    let whole: String = parts.iter().map(|(_, text)| text.as_str()).collect();
    repo.write("single_include/lib.hpp", format!("{reader}{whole}"));
    repo.write("include/lib/reader.hpp", reader);
    let inspect = ok(&env.cmd("fittokd").args(["inspect", path]).output().unwrap());
    assert!(inspect.contains("amalgamation"), "not reported:\n{inspect}");
    // The daemon's update judges the copy as a fresh build does: once the new function
    // shows, the update has landed.
    let question = "read a quoted token, unquoting it";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let answer = loop {
        let a = ok(&env.fittok(&["query", path, question, "--budget", "800"]));
        if a.contains("read_quoted_token") || std::time::Instant::now() > deadline {
            break a;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(answer.contains("include/lib/reader.hpp"), "{answer}");
    assert!(!answer.contains("single_include"), "{answer}");
}

/// Exit statuses by class, through the real daemon and in process: a disk error is not a bad
/// request (README: 5 the work failed, 1 bad request). The dead LLM endpoint (4) is in
/// llm.rs.
#[test]
fn a_disk_error_exits_5_and_a_bad_request_1() {
    let env = DaemonEnv::new("rel-exit");
    let dir = TempRepo::new("rel-exit-doc");
    let body: String = (0..40)
        .map(|i| {
            format!(
                "## Part {i}\n\n{}\n\n",
                "Words about this part of the manual. ".repeat(60)
            )
        })
        .collect();
    dir.write("MANUAL.md", format!("# Manual\n\n{body}"));
    // The journal fittok writes first cannot be written: a directory is in its place.
    std::fs::create_dir_all(dir.path().join(".MANUAL.md.fittok-journal")).unwrap();
    let doc = dir.path().join("MANUAL.md");
    let doc = doc.to_str().unwrap();
    let before = std::fs::read_to_string(doc).unwrap();
    for args in [
        vec!["fit", "generate", doc],
        vec!["--no-daemon", "fit", "generate", doc],
    ] {
        let out = env.fittok(&args);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("fittok-journal"), "{}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(doc).unwrap(),
            before,
            "nothing lost"
        );
    }
    let out = env
        .cmd("fittokd")
        .args(["fit", "generate", doc])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    // A bad value is a bad request, refused before anything runs.
    let out = env.fittok(&["fit", "generate", "--level", "3.2", doc]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}
