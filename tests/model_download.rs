//! The embedding model on first use, from a local HTTP server that serves the Hugging Face
//! hub's URL layout (the hub itself is unreachable here): first download, an interrupted
//! download resumed with a range request, a file that fails its checksum refused and the model
//! then installed by hand picked up without a restart, offline.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fittok_e2e::{DaemonEnv, TempRepo, model_dir, ok, status_json};

/// How the fake hub misbehaves.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Honest,
    /// The first response for model.safetensors stops after 20 MB.
    CutOnce,
    /// config.json arrives with one byte changed.
    Corrupt,
}

/// The requests the fake hub saw: (path, range header).
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// Serves `.model/all-MiniLM-L6-v2` at `/sentence-transformers/all-MiniLM-L6-v2/resolve/*/FILE`,
/// with `Range: bytes=N-` support. Returns the endpoint and the requests seen.
fn fake_hub(mode: Mode) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let dir = model_dir();
    std::thread::spawn(move || {
        let mut cut_done = false;
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut range = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("range:") {
                    range = Some(v.trim().to_string());
                }
            }
            let path = request_line
                .split_whitespace()
                .nth(1)
                .unwrap_or("")
                .to_string();
            log.lock().unwrap().push((path.clone(), range.clone()));
            let file = path.rsplit('/').next().unwrap_or("");
            let ok_path = path.starts_with("/sentence-transformers/all-MiniLM-L6-v2/resolve/");
            let mut stream = stream;
            let Ok(mut bytes) = std::fs::read(dir.join(file))
                .map_err(|_| ())
                .and_then(|b| if ok_path { Ok(b) } else { Err(()) })
            else {
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
                continue;
            };
            if mode == Mode::Corrupt && file == "config.json" {
                bytes[10] ^= 0x20;
            }
            let start: usize = range
                .as_deref()
                .and_then(|r| r.strip_prefix("bytes="))
                .and_then(|r| r.trim_end_matches('-').parse().ok())
                .unwrap_or(0);
            let body = &bytes[start.min(bytes.len())..];
            let head = if start > 0 {
                format!(
                    "HTTP/1.1 206 Partial Content\r\ncontent-length: {}\r\ncontent-range: bytes {start}-{}/{}\r\nconnection: close\r\n\r\n",
                    body.len(),
                    bytes.len() - 1,
                    bytes.len()
                )
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                )
            };
            let _ = stream.write_all(head.as_bytes());
            if mode == Mode::CutOnce && file == "model.safetensors" && !cut_done {
                cut_done = true;
                let _ = stream.write_all(&body[..20 << 20]);
                // Dropped here: the client sees the connection end mid-body.
                continue;
            }
            let _ = stream.write_all(body);
            let mut sink = [0u8; 1];
            let _ = stream.read(&mut sink);
        }
    });
    (endpoint, seen)
}

fn repo() -> TempRepo {
    let repo = TempRepo::new("hub");
    repo.write(
        "img/resize.py",
        "def shrink_picture(image, factor):\n    \"\"\"Scale an image down by factor.\"\"\"\n    return image.resize(factor)\n",
    )
    .write("img/rotate.py", "def rotate(image, degrees):\n    return image.rotate(degrees)\n");
    repo
}

/// Waits until every node of the (one) resident repository has a vector (or `limit` passes).
fn until_embedded(env: &DaemonEnv, limit: Duration) -> serde_json::Value {
    let t = Instant::now();
    loop {
        let s = status_json(env);
        if s["repos"][0]["semantic_coverage"].as_f64() == Some(1.0) {
            return s;
        }
        assert!(t.elapsed() < limit, "the model never arrived: {s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_model_is_fetched_on_first_use_and_semantics_follow() {
    let (hub, seen) = fake_hub(Mode::CutOnce);
    let env = DaemonEnv::new("hub").with_hub(&hub);
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    let first = ok(&env.fittok(&[
        "query",
        path,
        "where do we make photos smaller",
        "--budget",
        "400",
    ]));
    assert!(first.contains("downloading the embedding model"), "{first}");
    let s = until_embedded(&env, Duration::from_secs(120));
    assert_eq!(s["model_note"], "", "{s}");
    // The paraphrase only vectors find now comes first.
    let v: serde_json::Value = serde_json::from_str(&ok(&env.fittok(&[
        "query",
        path,
        "where do we make photos smaller",
        "--json",
        "--budget",
        "400",
    ])))
    .unwrap();
    assert_eq!(v["provenance"]["semantic_coverage"], 1.0, "{v}");
    assert_eq!(v["nodes"][0]["path"], "img/resize.py", "{v}");
    let dest = env.cache.join("models/all-MiniLM-L6-v2");
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert_eq!(
            std::fs::read(dest.join(f)).unwrap(),
            std::fs::read(model_dir().join(f)).unwrap(),
            "{f} arrived whole"
        );
    }
    assert!(!dest.join("model.safetensors.part").exists());
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter().any(|(p, r)| p.ends_with("model.safetensors")
            && r.as_deref() == Some(&format!("bytes={}-", 20 << 20))),
        "the cut download resumed with a range request: {seen:?}"
    );
    assert!(seen.iter().all(|(p, _)| p.contains("/resolve/main/")));
}

#[test]
fn a_file_that_fails_its_checksum_is_refused() {
    let (hub, _) = fake_hub(Mode::Corrupt);
    let env = DaemonEnv::new("hub-bad").with_hub(&hub);
    let repo = repo();
    let path = repo.path().to_str().unwrap();
    ok(&env.fittok(&["query", path, "photos smaller", "--budget", "400"]));
    let t = Instant::now();
    let note = loop {
        let n = status_json(&env)["model_note"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if n.contains("failed") {
            break n;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no failure reported: {n}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        note.contains("config.json does not match its checksum"),
        "{note}"
    );
    let dest = env.cache.join("models/all-MiniLM-L6-v2");
    assert!(!dest.join("config.json").exists() && !dest.join("config.json.part").exists());
    let a = ok(&env.fittok(&["query", path, "photos smaller", "--budget", "400"]));
    assert!(
        a.contains("download failed"),
        "answers say why semantics are off: {a}"
    );
    assert!(a.contains("scripts/fetch-model.sh"), "and the way out: {a}");
    // The fallback: the model installed where the daemon looks, as scripts/fetch-model.sh
    // does. The next question picks it up; no restart.
    std::fs::create_dir_all(&dest).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(model_dir().join(f), dest.join(f)).unwrap();
    }
    ok(&env.fittok(&["query", path, "photos smaller", "--budget", "400"]));
    let s = until_embedded(&env, Duration::from_secs(120));
    assert_eq!(s["model_note"], "", "{s}");
    let a = ok(&env.fittok(&["query", path, "photos smaller", "--budget", "400"]));
    let first = a.lines().next().unwrap_or("");
    assert!(
        first.contains("semantic 100%") && !first.contains("download"),
        "{first}"
    );
}

#[test]
fn offline_nothing_is_fetched_and_answers_say_why() {
    let (hub, seen) = fake_hub(Mode::Honest);
    let env = DaemonEnv::new("hub-offline")
        .with_hub(&hub)
        .env("HF_HUB_OFFLINE", "1");
    let repo = repo();
    let a = ok(&env.fittok(&[
        "query",
        repo.path().to_str().unwrap(),
        "rotate image",
        "--budget",
        "400",
    ]));
    assert!(a.contains("def rotate"), "{a}");
    assert!(a.contains("HF_HUB_OFFLINE"), "{a}");
    assert!(seen.lock().unwrap().is_empty(), "offline means no request");
}

#[test]
fn index_shows_the_download_and_waits_for_the_model() {
    // Cut once: the resumption's pause keeps the download running while `index` watches.
    let (hub, _) = fake_hub(Mode::CutOnce);
    let env = DaemonEnv::new("hub-index").with_hub(&hub);
    let repo = repo();
    let index = env.fittok(&["index", repo.path().to_str().unwrap()]);
    let shown = fittok_e2e::stderr(&index);
    assert!(index.status.success(), "{shown}");
    assert!(
        shown.contains("model"),
        "the download is in the bar: {shown}"
    );
    assert!(shown.contains("semantic coverage 100%"), "{shown}");
}
