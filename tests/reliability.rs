//! Hostile input and misuse, each case with its outcome asserted: exit code, one clear line,
//! the daemon still answering, nothing lost (issue 19's probe, kept fixed).

use std::io::Read;
use std::process::Stdio;

use fittok_e2e::{DaemonEnv, TempRepo, ok, stderr, stdout};

fn small_repo(tag: &str) -> TempRepo {
    let repo = TempRepo::new(tag);
    repo.write(
        "billing/tax.py",
        "RATES = {\"de\": 0.19}\n\n\ndef vat_for(country, amount):\n    \"\"\"Value added tax owed.\"\"\"\n    return amount * RATES.get(country, 0.0)\n",
    );
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
        vec!["expand", path, "big.py:1-60000"],
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
    let repo = TempRepo::new("rel-sigint");
    // Enough code that the first index takes a while.
    for f in 0..400 {
        let src: String = (0..60)
            .map(|i| format!("def handler_{f}_{i}(request):\n    return request.get({i})\n\n\n"))
            .collect();
        repo.write(&format!("pkg{}/mod{f}.py", f % 20), src);
    }
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
