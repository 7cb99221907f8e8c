//! `fittok query` streaming an LLM's answer: a local HTTP server started here replays each
//! provider's server-sent events (and errors, and a dropped connection); no test touches the
//! network.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fittok_e2e::{DaemonEnv, TempRepo, stderr, stdout};

/// What the server answers: raw HTTP response pieces, sent with a pause between them.
type Script = Vec<String>;
/// One request the server saw: its path, its headers (names lower-cased), its body.
type Seen = (String, Vec<(String, String)>, String);

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Seen>>>,
}

fn serve(script: Script) -> Server {
    serve_with(move |_| script.clone())
}

/// A server whose reply depends on the request body.
fn serve_with(reply: impl Fn(&str) -> Script + Send + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests: Arc<Mutex<Vec<_>>> = Arc::default();
    let log = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            let mut headers = Vec::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end().to_string();
                if line.is_empty() {
                    break;
                }
                let (k, v) = line.split_once(':').unwrap();
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap();
                }
                headers.push((k.to_lowercase(), v.trim().to_string()));
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
            let body = String::from_utf8_lossy(&body).into_owned();
            let script = reply(&body);
            log.lock().unwrap().push((path, headers, body));
            let mut stream = stream;
            for piece in &script {
                if stream.write_all(piece.as_bytes()).is_err() {
                    break;
                }
                let _ = stream.flush();
                std::thread::sleep(Duration::from_millis(30));
            }
            // Dropping the stream closes the connection.
        }
    });
    Server { url, requests }
}

fn sse_head() -> String {
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n".into()
}

fn anthropic_event(kind: &str, data: serde_json::Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

fn anthropic_ok(texts: &[&str]) -> Script {
    let mut s = vec![
        sse_head(),
        anthropic_event(
            "message_start",
            serde_json::json!({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}}),
        ),
        anthropic_event(
            "content_block_start",
            serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    for t in texts {
        s.push(anthropic_event("content_block_delta", serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}})));
    }
    s.push(anthropic_event(
        "content_block_stop",
        serde_json::json!({"type": "content_block_stop", "index": 0}),
    ));
    s.push(anthropic_event(
        "message_delta",
        serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
    ));
    s.push(anthropic_event(
        "message_stop",
        serde_json::json!({"type": "message_stop"}),
    ));
    s
}

fn openai_ok(texts: &[&str]) -> Script {
    let mut s = vec![sse_head()];
    for t in texts {
        s.push(format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": t}}]})
        ));
    }
    s.push(format!(
        "data: {}\n\n",
        serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    s.push("data: [DONE]\n\n".into());
    s
}

fn error_response(status: &str, body: serde_json::Value) -> Script {
    let body = body.to_string();
    vec![format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )]
}

fn repo() -> TempRepo {
    let repo = TempRepo::new("llm");
    repo.write(
        "billing/invoice.py",
        "from .tax import vat_for\n\n\nclass Invoice:\n    def total_with_vat(self, country):\n        net = sum(self.lines)\n        return net + vat_for(country, net)\n",
    )
    .write("billing/tax.py", "def vat_for(country, amount):\n    return amount * 0.19\n");
    repo
}

const Q: &str = "how is VAT added to an invoice total";

/// `fittok query` with an Anthropic key and the API at `url`.
fn query_anthropic(env: &DaemonEnv, repo: &TempRepo, key: &str, url: &str) -> std::process::Output {
    query(
        env,
        repo,
        &[("ANTHROPIC_API_KEY", key), ("ANTHROPIC_BASE_URL", url)],
        &[],
    )
}

fn query(
    env: &DaemonEnv,
    repo: &TempRepo,
    vars: &[(&str, &str)],
    extra: &[&str],
) -> std::process::Output {
    let mut c = env.cmd("fittok");
    c.args(["query", repo.path().to_str().unwrap(), Q, "--budget", "800"])
        .args(extra);
    for (k, v) in vars {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn anthropic_answers_stream_to_stdout() {
    let env = DaemonEnv::new("llm-anthropic");
    let repo = repo();
    let server = serve(anthropic_ok(&[
        "VAT is added by ",
        "`vat_for` (billing/invoice.py:7).",
    ]));
    let out = query_anthropic(&env, &repo, "test-key", &server.url);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "VAT is added by `vat_for` (billing/invoice.py:7).\n"
    );
    let reqs = server.requests.lock().unwrap();
    let (path, headers, body) = &reqs[0];
    assert_eq!(path, "/v1/messages");
    assert!(headers.contains(&("x-api-key".into(), "test-key".into())));
    assert!(headers.iter().any(|(k, _)| k == "anthropic-version"));
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["model"], "claude-haiku-4-5");
    assert_eq!(body["stream"], true);
    assert!(body["system"].as_str().unwrap().contains("path:line"));
    let user = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        user.contains(Q) && user.contains("def total_with_vat"),
        "the slice goes to the model: {user}"
    );
}

#[test]
fn openai_and_compatible_servers_stream_too() {
    let env = DaemonEnv::new("llm-openai");
    let repo = repo();
    let server = serve(openai_ok(&["It calls ", "vat_for."]));
    let base = format!("{}/v1", server.url);
    let out = query(
        &env,
        &repo,
        &[("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &base)],
        &["--model", "gpt-test"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It calls vat_for.\n");
    {
        let reqs = server.requests.lock().unwrap();
        assert_eq!(reqs[0].0, "/v1/chat/completions");
        assert!(
            reqs[0]
                .1
                .contains(&("authorization".into(), "Bearer sk-test".into()))
        );
        let body: serde_json::Value = serde_json::from_str(&reqs[0].2).unwrap();
        assert_eq!(body["model"], "gpt-test");
        assert_eq!(body["messages"][0]["role"], "system");
    }
    // A local OpenAI-compatible server (llama.cpp, Ollama): base URL and model, no key.
    let local = serve(openai_ok(&["Local answer."]));
    let out = query(
        &env,
        &repo,
        &[
            ("FITTOK_LLM_BASE_URL", &local.url),
            ("FITTOK_LLM_MODEL", "qwen2.5-coder"),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Local answer.\n");
    let reqs = local.requests.lock().unwrap();
    assert_eq!(reqs[0].0, "/chat/completions");
    assert!(!reqs[0].1.iter().any(|(k, _)| k == "authorization"));
}

#[test]
fn errors_give_one_clear_line_and_a_non_zero_exit() {
    let env = DaemonEnv::new("llm-errors");
    let repo = repo();
    let cases: Vec<(Script, &str)> = vec![
        (
            error_response(
                "401 Unauthorized",
                serde_json::json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
            ),
            "refused the key (401): check ANTHROPIC_API_KEY",
        ),
        (
            error_response(
                "429 Too Many Requests",
                serde_json::json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
            ),
            "rate limiting (429)",
        ),
        (
            error_response(
                "529 Overloaded",
                serde_json::json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ),
            "failed (529): Overloaded",
        ),
        (
            anthropic_ok(&["partial "]).into_iter().take(4).collect(),
            "connection dropped",
        ),
        (
            vec![
                sse_head(),
                anthropic_event(
                    "error",
                    serde_json::json!({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}),
                ),
            ],
            "reported an error: Internal server error",
        ),
    ];
    for (script, expected) in cases {
        let server = serve(script);
        let out = query_anthropic(&env, &repo, "k", &server.url);
        assert_eq!(out.status.code(), Some(4), "{expected}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(expected), "expected {expected:?} in {err:?}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        // The code slice the model was to answer from is printed all the same.
        assert!(
            stdout(&out).contains("## Code"),
            "{expected}: {}",
            stdout(&out)
        );
        assert!(err.contains("--code skips the model"), "{err}");
    }
    // Nothing listening.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = query_anthropic(&env, &repo, "k", &format!("http://127.0.0.1:{port}"));
    assert_eq!(out.status.code(), Some(4));
    assert!(stderr(&out).contains("cannot reach"), "{}", stderr(&out));
    assert!(stdout(&out).contains("## Code"), "{}", stdout(&out));
}

#[test]
fn without_a_key_the_code_is_printed_with_a_hint() {
    let env = DaemonEnv::new("llm-none");
    let repo = repo();
    let out = query(&env, &repo, &[], &[]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("def total_with_vat"));
    assert_eq!(stderr(&out).lines().count(), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("ANTHROPIC_API_KEY"));
    let code = query(
        &env,
        &repo,
        &[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ],
        &["--code"],
    );
    assert!(
        code.status.success(),
        "--code never calls a model: {}",
        stderr(&code)
    );
    assert!(stdout(&code).contains("def total_with_vat") && stderr(&code).is_empty());
}

#[test]
fn ctrl_c_stops_the_stream_cleanly() {
    let env = DaemonEnv::new("llm-sigint");
    let repo = repo();
    // Warm the daemon so the stream starts at once.
    assert!(query(&env, &repo, &[], &["--code"]).status.success());
    let mut script = anthropic_ok(&["first words "]);
    let tail = script.split_off(4);
    script.push(" ".to_string()); // keeps the connection busy
    let slow: Script = script
        .into_iter()
        .chain(std::iter::repeat_n(String::new(), 200))
        .chain(tail)
        .collect();
    let server = serve(slow);
    let child = env
        .cmd("fittok")
        .args(["query", repo.path().to_str().unwrap(), Q])
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &server.url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("first words"), "{}", stdout(&out));
    assert!(stderr(&out).contains("interrupted"));
}

#[test]
fn fit_levels_three_and_up_use_the_model_for_summaries_and_placement() {
    let env = DaemonEnv::new("llm-fit");
    let dir = TempRepo::new("llm-fit");
    let mut doc = String::from("# Manual\n\nIntro.\n\n");
    for (i, t) in ["Install", "Configure", "Deploy", "Troubleshoot"]
        .iter()
        .enumerate()
    {
        doc.push_str(&format!("## {t}\n\nAbout {t}.\n\n"));
        for k in 0..70 {
            doc.push_str(&format!(
                "Step {k} of section {i} explains one more detail of {t}.\n"
            ));
        }
        doc.push('\n');
    }
    dir.write("MANUAL.md", &doc);
    let path = dir.path().join("MANUAL.md");
    // Ranking requests get "Troubleshoot first"; everything else a summary naming the section.
    let server = serve_with(|body| {
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        let user = v["messages"][1]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if user.contains("Rank these sections") {
            openai_ok(&["[3, 0]"])
        } else if let Some(t) = ["Install", "Configure", "Deploy", "Troubleshoot"]
            .iter()
            .find(|t| user.starts_with(&format!("## {t}")))
        {
            openai_ok(&["How to ", t, " the product, step by step."])
        } else {
            openai_ok(&["OK"])
        }
    });
    let base = format!("{}/v1", server.url);
    let out = env
        .cmd("fittok")
        .args([
            "fit",
            "generate",
            "--level",
            "3",
            "--soft-threshold",
            "1500",
            "--llm-base-url",
            &base,
            "--llm-model",
            "tiny",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let root = std::fs::read_to_string(&path).unwrap();
    assert!(
        root.contains("Summary: How to Configure the product, step by step."),
        "{root}"
    );
    // The model ranked Troubleshoot first: it stays inline, others are linked.
    assert!(root.contains("Step 5 of section 3"), "{root}");
    assert!(root.contains("→ [manual/configure.md]"), "{root}");
    let reqs = server.requests.lock().unwrap();
    assert!(
        reqs.iter()
            .all(|(p, _, b)| p == "/v1/chat/completions" && b.contains("\"model\":\"tiny\""))
    );
    drop(reqs);
    // No endpoint: say so, write nothing.
    let dir2 = TempRepo::new("llm-fit-none");
    dir2.write("MANUAL.md", &doc);
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = env
        .cmd("fittok")
        .args([
            "fit",
            "generate",
            "--level",
            "3.5",
            "--query",
            "fix a failed deploy",
            "--llm-base-url",
            &format!("http://127.0.0.1:{port}/v1"),
        ])
        .arg(dir2.path().join("MANUAL.md"))
        .output()
        .unwrap();
    // A dead endpoint is the LLM failing (exit status 4, as README says), not a bad request.
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no LLM endpoint answers"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir2.path().join("MANUAL.md")).unwrap(),
        doc
    );
    assert!(!dir2.path().join("manual").exists() && !dir2.path().join("manual.unfit.md").exists());
    // Level 3 without an endpoint is a clear usage error.
    let out = env
        .cmd("fittok")
        .args(["fit", "generate", "--level", "3"])
        .arg(dir2.path().join("MANUAL.md"))
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("need an LLM endpoint"),
        "{}",
        stderr(&out)
    );
}
