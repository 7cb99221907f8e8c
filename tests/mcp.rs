//! `fittok-mcp` driven by real MCP clients: the official Python SDK over stdio and the MCP
//! Inspector's CLI (both installed by `scripts/mcp-clients.sh`), against a real daemon that
//! starts cold. Also `fittok hook` with recorded UserPromptSubmit payloads.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fittok_e2e::{DaemonEnv, TempRepo, bin, stderr, stdout};

fn tools_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools");
    assert!(
        dir.join("venv/bin/python").is_file()
            && dir.join("npm/node_modules/.bin/mcp-inspector").is_file(),
        "MCP clients missing: run scripts/mcp-clients.sh"
    );
    dir
}

/// Runs `tests/mcp/<script>` (an official-SDK driver) with the Python of the MCP tools, in
/// `env`'s environment, against `fittok-mcp` and `repo`.
fn python_client(
    tools: &Path,
    env: &DaemonEnv,
    script: &str,
    repo: &TempRepo,
) -> std::process::Output {
    env.cmd("fittok")
        .get_envs()
        .fold(
            Command::new(tools.join("venv/bin/python")),
            |mut c, (k, v)| {
                match v {
                    Some(v) => c.env(k, v),
                    None => c.env_remove(k),
                };
                c
            },
        )
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("mcp")
                .join(script),
        )
        .arg(bin("fittok-mcp"))
        .arg(repo.path())
        .output()
        .expect("python")
}

fn repo() -> TempRepo {
    let repo = TempRepo::new("mcp");
    repo.write(".git/HEAD", "ref: refs/heads/main\n")
        .write(
            "billing/invoice.py",
            "from .tax import vat_for\n\n\nclass Invoice:\n    \"\"\"A customer invoice with line items.\"\"\"\n\n    def __init__(self, lines):\n        self.lines = lines\n\n    def total_with_vat(self, country):\n        net = sum(price * qty for price, qty in self.lines)\n        return net + vat_for(country, net)\n",
        )
        .write(
            "billing/tax.py",
            "RATES = {\"de\": 0.19, \"fr\": 0.20}\n\n\ndef vat_for(country, amount):\n    \"\"\"Value added tax owed on amount in country.\"\"\"\n    return amount * RATES.get(country, 0.0)\n",
        )
        .write(
            "shop/checkout.py",
            "from billing.invoice import Invoice\n\n\ndef checkout(lines):\n    return Invoice(lines)\n",
        );
    repo
}

#[test]
fn python_sdk_sessions_share_one_cold_daemon() {
    let tools = tools_dir();
    let env = DaemonEnv::new("mcp-sdk");
    let repo = repo();
    assert!(env.daemon_pids().is_empty(), "the daemon starts cold");
    let out = python_client(&tools, &env, "sdk_client.py", &repo);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON summary");
    for tag in ["a", "b"] {
        let get = |k: &str| &v[format!("{tag}_{k}")];
        assert_eq!(get("server")["name"], "fittok");
        assert_eq!(get("server")["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(
            get("tools"),
            &serde_json::json!([
                "code_context",
                "code_expand",
                "code_navigate",
                "fit_markdown",
                "fittok_status"
            ])
        );
        let callers = get("callers");
        assert_eq!(callers["error"], false, "{callers}");
        let text = callers["text"].as_str().unwrap();
        assert!(
            text.contains("callers of `vat_for`")
                && text.contains("12 ▶\t        return net + vat_for(country, net)"),
            "{text}"
        );
        let routed = get("routed")["text"].as_str().unwrap();
        assert!(
            routed.contains("what `Invoice.total_with_vat` calls")
                && routed.contains("def vat_for"),
            "{routed}"
        );
        let uses = get("uses")["text"].as_str().unwrap();
        assert!(
            uses.contains("uses of `Invoice`") && uses.contains("5 ▶\t    return Invoice(lines)"),
            "{uses}"
        );
        let impact = get("impact")["text"].as_str().unwrap();
        assert!(
            impact.contains("what a change to `vat_for` can reach")
                && impact.contains("Invoice.total_with_vat"),
            "{impact}"
        );
        assert_eq!(get("bad_nav")["error"], true);
        assert!(
            get("bad_nav")["text"]
                .as_str()
                .unwrap()
                .contains("no definition matches \"no_such_definition\""),
            "{}",
            get("bad_nav")
        );
        assert_eq!(get("fit")["error"], false, "{}", get("fit"));
        assert!(
            get("fit")["root"]
                .as_str()
                .unwrap()
                .contains(&format!("→ [guide_{tag}/")),
            "{}",
            get("fit")
        );
        assert!(
            get("fit")["text"]
                .as_str()
                .unwrap()
                .contains("original kept as")
        );
        let first = get("context");
        assert_eq!(first["error"], false, "{first}");
        assert!(
            first["text"]
                .as_str()
                .unwrap()
                .contains("def total_with_vat"),
            "{first}"
        );
        // The same question again in the session: the code is not sent twice, but named.
        let again = get("again")["text"].as_str().unwrap();
        assert!(!again.contains("def total_with_vat"), "{again}");
        assert!(
            again.contains("shown earlier in this session")
                && again.contains("Invoice.total_with_vat"),
            "{again}"
        );
        assert!(
            get("repeat")["text"]
                .as_str()
                .unwrap()
                .contains("def total_with_vat")
        );
        assert!(
            get("expand")["text"]
                .as_str()
                .unwrap()
                .contains("RATES.get(country")
        );
        assert!(get("status")["text"].as_str().unwrap().contains("nodes"));
        let code_fit = get("code_fit");
        assert_eq!(code_fit["error"], true, "{code_fit}");
        assert!(
            code_fit["text"]
                .as_str()
                .unwrap()
                .contains("is not a Markdown file"),
            "{code_fit}"
        );
        assert_eq!(code_fit["unchanged"], true, "{code_fit}");
        assert_eq!(code_fit["side_files"], serde_json::json!([]), "{code_fit}");
        for bad in ["bad_repo", "bad_id", "empty", "bad_fit"] {
            assert_eq!(get(bad)["error"], true, "{bad}: {}", get(bad));
        }
        assert!(
            get("bad_repo")["text"]
                .as_str()
                .unwrap()
                .contains("does not exist")
        );
        assert!(
            get("bad_id")["text"]
                .as_str()
                .unwrap()
                .contains("unknown id")
        );
        eprintln!(
            "session {tag}: initialize {:.1} ms (cold daemon), tools/list {:.1} ms, {} bytes; code_context p50 {:.1} ms p99 {:.1} ms",
            get("initialize_ms").as_f64().unwrap(),
            get("list_ms").as_f64().unwrap(),
            get("tools_bytes"),
            get("call_ms")["p50"].as_f64().unwrap(),
            get("call_ms")["p99"].as_f64().unwrap(),
        );
    }
    assert_eq!(env.daemon_pids().len(), 1, "two shims, one daemon");
}

#[test]
fn inspector_cli_lists_and_calls_tools() {
    let tools = tools_dir();
    let env = DaemonEnv::new("mcp-inspector");
    let repo = repo();
    let inspector = tools.join("npm/node_modules/.bin/mcp-inspector");
    let run = |args: &[&str]| {
        let template = env.cmd("fittok");
        let envs: Vec<_> = template
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
            .collect();
        let mut cmd = Command::new(&inspector);
        cmd.arg("--cli");
        for (k, v) in &envs {
            cmd.arg("-e")
                .arg(format!("{}={}", k.to_string_lossy(), v.to_string_lossy()));
        }
        let out = cmd
            .arg(bin("fittok-mcp"))
            .args(args)
            .current_dir(repo.path())
            .output()
            .expect("inspector");
        assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).expect("inspector JSON")
    };
    let list = run(&["--method", "tools/list"]);
    assert_eq!(list["tools"].as_array().unwrap().len(), 5, "{list}");
    let repo_arg = format!("repo={}", repo.path().display());
    let call = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "code_context",
        "--tool-arg",
        "question=which tax rate applies per country",
        "--tool-arg",
        &repo_arg,
    ]);
    assert_ne!(call["isError"], true, "{call}");
    assert!(
        call["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("def vat_for"),
        "{call}"
    );
    let bad = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "code_expand",
        "--tool-arg",
        "ids=[\"nope.py#x\"]",
        "--tool-arg",
        &repo_arg,
    ]);
    assert_eq!(bad["isError"], true, "{bad}");
}

fn hook(env: &DaemonEnv, payload: &str) -> (std::process::Output, Duration) {
    let t = Instant::now();
    let mut child = env
        .cmd("fittok")
        .arg("hook")
        .env("ANTHROPIC_API_KEY", "sk-test-not-used")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (out, t.elapsed())
}

fn payload(name: &str, cwd: &Path) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/hook")
            .join(name),
    )
    .unwrap();
    text.replace("$CWD", cwd.to_str().unwrap())
}

#[test]
fn hook_gives_context_for_code_questions_only_and_never_blocks() {
    let env = DaemonEnv::new("hook");
    let repo = repo();
    // Daemon down: the first prompt of a session gets context too (the hook starts the
    // daemon and waits, within its timeout).
    let context = |out: &std::process::Output| -> String {
        let v: serde_json::Value = serde_json::from_str(&stdout(out)).expect("hook JSON");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let (out, took) = hook(&env, &payload("code_question.json", repo.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        context(&out).contains("def total_with_vat"),
        "{}",
        stdout(&out)
    );
    assert!(took < Duration::from_secs(8), "the hook took {took:?}");
    // A plain question with no identifier and none of a keyword list's words.
    let (out, _) = hook(&env, &payload("plain_question.json", repo.path()));
    assert!(context(&out).contains("def vat_for"), "{}", stdout(&out));
    // A question about something else: the daemon's confidence is low, the hook says nothing.
    for quiet in [
        "chit_chat.json",
        "slash_command.json",
        "general_knowledge.json",
    ] {
        let (out, _) = hook(&env, &payload(quiet, repo.path()));
        assert!(
            out.status.success() && stdout(&out).is_empty(),
            "{quiet}: {}",
            stdout(&out)
        );
    }
    // Outside any repository, and on garbage input: nothing.
    let (out, _) = hook(&env, &payload("code_question.json", Path::new("/")));
    assert!(out.status.success() && stdout(&out).is_empty());
    let (out, _) = hook(&env, "{not json");
    assert!(out.status.success() && stdout(&out).is_empty());
}

#[test]
fn the_hook_honours_no_daemon() {
    let mut env = DaemonEnv::new("hook-no-daemon");
    env.extra_env.push(("FITTOK_NO_DAEMON".into(), "1".into()));
    let repo = repo();
    let (out, took) = hook(&env, &payload("code_question.json", repo.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("def total_with_vat"),
        "{}",
        stdout(&out)
    );
    assert!(env.daemon_pids().is_empty(), "no daemon was started");
    eprintln!("hook in process: {took:?}");
}

/// With FITTOK_NO_DAEMON the MCP server answers every tool in process (a `fittokd call` per
/// request) and starts no daemon; a failed call's tool error carries fittokd's own message.
#[test]
fn the_mcp_server_honours_no_daemon() {
    let tools = tools_dir();
    let env = DaemonEnv::new("mcp-no-daemon").env("FITTOK_NO_DAEMON", "1");
    let repo = repo();
    let out = python_client(&tools, &env, "no_daemon_client.py", &repo);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON summary");
    let text = |k: &str| v[k]["text"].as_str().unwrap_or_default().to_string();
    assert_eq!(v["context"]["error"], false, "{v}");
    assert!(text("context").contains("def total_with_vat"), "{v}");
    assert!(
        text("callers").contains("callers of `vat_for`")
            && text("callers").contains("return net + vat_for(country, net)"),
        "{v}"
    );
    assert_eq!(v["missing"]["error"], true, "{v}");
    assert!(text("missing").contains("no_such_thing"), "{v}");
    assert!(
        text("status").contains("no daemon (FITTOK_NO_DAEMON)"),
        "{v}"
    );
    assert!(env.daemon_pids().is_empty(), "no daemon was started");
    assert!(!env.socket.exists(), "no socket was made");
}

#[test]
fn the_claude_code_plugin_is_well_formed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let json = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(root.join(p)).unwrap())
            .unwrap_or_else(|e| panic!("{p}: {e}"))
    };
    let manifest = json("plugin/.claude-plugin/plugin.json");
    assert_eq!(manifest["name"], "fittok");
    assert_eq!(
        manifest["version"],
        env!("CARGO_PKG_VERSION"),
        "plugin version follows the build"
    );
    assert_eq!(
        json(".claude-plugin/marketplace.json")["plugins"][0]["source"],
        "./plugin"
    );
    let hooks = json("plugin/hooks/hooks.json");
    assert_eq!(
        hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        "fittok hook"
    );
    assert_eq!(
        json("plugin/.mcp.json")["mcpServers"]["fittok"]["command"],
        "fittok-mcp"
    );
    let skill = std::fs::read_to_string(root.join("plugin/skills/fittok/SKILL.md")).unwrap();
    assert!(skill.starts_with("---\nname: fittok\ndescription: "));
    // The commands the plugin names exist in this build.
    assert!(
        Command::new(bin("fittok"))
            .args(["hook", "--help"])
            .output()
            .unwrap()
            .status
            .success()
    );
    assert!(bin("fittok-mcp").is_file());
}

#[test]
fn a_stopped_daemon_gives_a_tool_error_in_bounded_time() {
    let tools = tools_dir();
    let env = DaemonEnv::new("mcp-frozen");
    let repo = repo();
    let out = python_client(&tools, &env, "frozen_client.py", &repo);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON summary");
    assert_eq!(v["first"]["error"], false, "{v}");
    assert_eq!(v["pids"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["frozen"]["error"], true, "a tool error, not silence: {v}");
    assert!(
        v["frozen"]["text"]
            .as_str()
            .unwrap()
            .contains("does not answer"),
        "{v}"
    );
    assert!(v["frozen_s"].as_f64().unwrap() < 60.0, "{v}");
    assert_eq!(
        v["after"]["error"], false,
        "answers again after SIGCONT: {v}"
    );
}

/// Malformed JSON-RPC on the shim's stdin: every request with an id is answered, and the
/// session goes on (issue 19 item 17).
#[test]
fn malformed_requests_are_answered_and_the_session_goes_on() {
    use std::io::{BufRead, Write};
    let env = DaemonEnv::new("mcp-malformed");
    let repo = repo();
    let mut child = env
        .cmd("fittok-mcp")
        .current_dir(repo.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut ask = |line: &[u8]| -> serde_json::Value {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let reply = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no answer to {}", String::from_utf8_lossy(line)));
        serde_json::from_str(&reply).unwrap()
    };
    let init = ask(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
    assert_eq!(init["id"], 1, "{init}");
    stdin_note(&mut ask);
    let cases: [(&[u8], serde_json::Value, i64); 5] = [
        (b"this is not json", serde_json::Value::Null, -32700),
        (
            br#"{"jsonrpc":"1.0","id":2,"method":"tools/list"}"#,
            2.into(),
            -32600,
        ),
        (
            br#"[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]"#,
            serde_json::Value::Null,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#,
            4.into(),
            -32600,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\xfe\"}}",
            serde_json::Value::Null,
            -32700,
        ),
    ];
    for (line, id, code) in cases {
        let v = ask(line);
        assert_eq!(v["id"], id, "{v}");
        assert_eq!(v["error"]["code"], code, "{v}");
    }
    // An object that is no request and no notification, and a NUL inside JSON, are
    // answered; an unknown notification is silent (the ping after it answers next); a 5 MB
    // line is read whole and served.
    for (line, code) in [
        (&b"{}"[..], -32600),
        (b"{\"jsonrpc\":\"2.0\",\0\"id\":9}", -32700),
    ] {
        let v = ask(line);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].as_i64()),
            (serde_json::Value::Null, Some(code)),
            "{v}"
        );
    }
    let v = ask(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/unknown\"}\n{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}");
    assert_eq!(v["id"], 10, "{v}");
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(5 << 20)
    );
    let v = ask(big.as_bytes());
    assert_eq!(
        v["id"],
        11,
        "{}",
        v.to_string().chars().take(300).collect::<String>()
    );
    // A lone surrogate in a question is served, not dropped.
    let v = ask(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"code_context","arguments":{"question":"vat rate \ud800","budget":400}}}"#);
    assert_eq!(v["id"], 5, "{v}");
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("vat_for"),
        "{v}"
    );
    // A question about nothing here: the tool result says so first, in a few lines.
    let v = ask(br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"code_context","arguments":{"question":"zebra giraffe elephant banana"}}}"#);
    let text = v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        text.contains("Nothing in this repository matches the question"),
        "{v}"
    );
    assert!(text.len() < 2000, "{text}");
    let v = ask(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    assert_eq!(
        v["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{v}"
    );
    drop(stdin);
    let _ = child.wait();
}

/// Sends `notifications/initialized`, which has no answer.
fn stdin_note(ask: &mut impl FnMut(&[u8]) -> serde_json::Value) {
    // A notification is followed by a ping, whose answer is the next line.
    let v = ask(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
    assert_eq!(v["id"], 0, "{v}");
}

/// A repository whose answers run past 10 KiB at the default budget: 12 files of request
/// handlers, each documented.
fn handlers_repo() -> TempRepo {
    let repo = TempRepo::new("mcp-limits");
    repo.write(".git/HEAD", "ref: refs/heads/main\n");
    for f in 0..12 {
        let mut src = String::from("\"\"\"Request handlers.\"\"\"\n\n");
        for i in 0..14 {
            src.push_str(&format!(
                "def handle_request_{f}_{i}(request):\n    \"\"\"Handles a request registered as route {i} and dispatched by the router.\"\"\"\n    registered = request.get(\"route\")\n    dispatched = registered or request.get({i})\n    return request.get({i})\n\n\n"
            ));
        }
        repo.write(&format!("app/handlers{f}.py"), src);
    }
    repo
}

/// Output shaped to the client (issue 18 part 4) through the official SDK: a client that
/// keeps 10 KiB / 256 lines (Codex, by its `clientInfo`) gets answers that fit, never cut by
/// it; code it was shown is not sent again unless it changed, and then it is, marked.
#[test]
fn answers_fit_the_clients_result_limit_and_changed_code_is_announced() {
    let tools = tools_dir();
    let env = DaemonEnv::new("mcp-limits");
    let repo = handlers_repo();
    let out = python_client(&tools, &env, "limited_client.py", &repo);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON summary");
    for step in ["first", "again", "changed"] {
        let bytes = v[step]["bytes"].as_u64().unwrap();
        let lines = v[step]["lines"].as_u64().unwrap();
        assert!(
            bytes <= 10_240 && lines <= 256,
            "{step}: {bytes} bytes, {lines} lines"
        );
    }
    let first = v["first"]["text"].as_str().unwrap();
    assert!(
        first.contains("## Code") && first.contains("handle_request_"),
        "{first}"
    );
    assert!(
        v["first"]["bytes"].as_u64().unwrap() > 5_000,
        "sized to the limit, not far below it: {v}"
    );
    let again = v["again"]["text"].as_str().unwrap();
    assert!(again.contains("shown earlier in this session"), "{again}");
    let changed = v["changed"]["text"].as_str().unwrap();
    assert!(
        changed.contains("CHANGED_MARKER"),
        "the new lines: {changed}"
    );
    assert!(
        changed.contains("changed since shown earlier in this session"),
        "{changed}"
    );
}

/// A client that declares its limit in `capabilities.experimental.toolResultLimit` gets
/// answers within it, whatever budget the agent asks for.
#[test]
fn a_declared_result_limit_is_kept() {
    use std::io::{BufRead, Write};
    let env = DaemonEnv::new("mcp-declared");
    let repo = handlers_repo();
    let mut child = env
        .cmd("fittok-mcp")
        .current_dir(repo.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |line: &str| -> serde_json::Value {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        loop {
            let l = lines.next().expect("a reply").unwrap();
            let v: serde_json::Value = serde_json::from_str(&l).unwrap();
            if v.get("id").is_some() {
                return v;
            }
        }
    };
    ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"toolResultLimit":{"bytes":3000,"lines":60}}},"clientInfo":{"name":"small-agent","version":"1"}}}"#,
    );
    stdin_note(&mut |b: &[u8]| ask(std::str::from_utf8(b).unwrap()));
    for budget in ["", r#","budget":8000"#, r#","budget":0"#] {
        let v = ask(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"code_context","arguments":{{"question":"how are handlers dispatched","skip_seen":false{budget}}}}}}}"#
        ));
        let text = v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains("handle_request_"), "{v}");
        assert!(
            text.len() <= 3000 && text.lines().count() <= 60,
            "budget {budget:?}: {} bytes, {} lines",
            text.len(),
            text.lines().count()
        );
    }
    drop(stdin);
    let _ = child.wait();
}

#[test]
fn a_malformed_budget_cap_is_refused_at_start() {
    let env = DaemonEnv::new("mcp-badcap");
    let out = env
        .cmd("fittok-mcp")
        .env("FITTOK_MAX_BUDGET", "abc")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("FITTOK_MAX_BUDGET=\"abc\": expected a number of tokens"),
        "{}",
        stderr(&out)
    );
}
