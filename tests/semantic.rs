//! The semantic signal end to end: the real model, the real vector cache, a paraphrase.

use fittok_e2e::{TempRepo, run_with_model, stdout};

/// Functions whose names and bodies share no word with the question below.
fn repo() -> TempRepo {
    let repo = TempRepo::new("semantic");
    repo.write(
        "src/store.py",
        "def persist_rows(conn, rows):\n    cur = conn.cursor()\n    cur.executemany('INSERT INTO t VALUES (?, ?)', rows)\n    conn.commit()\n\n\ndef vacuum(conn):\n    conn.execute('VACUUM')\n",
    )
    .write(
        "src/imaging.py",
        "def shrink_picture(img, factor):\n    w, h = img.size\n    return img.resize((w // factor, h // factor))\n\n\ndef rotate(img, deg):\n    return img.rotate(deg)\n",
    )
    .write(
        "src/mail.py",
        "def dispatch_letter(smtp, to, body):\n    smtp.sendmail('noreply@example.com', [to], body)\n",
    )
    .write(
        "src/clock.py",
        "def sleep_until(deadline, now):\n    import time\n    time.sleep(max(0, deadline - now))\n",
    );
    repo
}

const QUESTION: &str = "Where do we make photos smaller?";

fn first_node(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(out)).expect("json");
    v["nodes"][0]["name"].as_str().unwrap_or("").to_string()
}

#[test]
fn paraphrase_is_found_only_by_the_semantic_signal() {
    let repo = repo();
    let cache = TempRepo::new("semantic-cache");
    let path = repo.path().to_str().unwrap();
    let cache_dir = cache.path();
    // Lexically the question shares no token with the code: nothing ranks, or not this.
    let off = run_with_model(
        "fittokd",
        &["query", path, QUESTION, "--json", "--semantic", "off"],
        cache_dir,
    );
    assert_ne!(first_node(&off), "shrink_picture");

    let idx = run_with_model("fittokd", &["index", path], cache_dir);
    assert!(
        idx.status.success(),
        "{}",
        String::from_utf8_lossy(&idx.stderr)
    );
    assert!(
        stdout(&idx).contains("semantic coverage 100%"),
        "{}",
        stdout(&idx)
    );

    let on = run_with_model("fittokd", &["query", path, QUESTION, "--json"], cache_dir);
    assert_eq!(first_node(&on), "shrink_picture");
    let v: serde_json::Value = serde_json::from_str(&stdout(&on)).unwrap();
    assert_eq!(v["provenance"]["semantic_coverage"].as_f64(), Some(1.0));

    // A second index run embeds nothing: every vector comes from the cache.
    let again = run_with_model("fittokd", &["index", path], cache_dir);
    assert!(
        stdout(&again).contains("embed") && stdout(&again).contains("(0 nodes"),
        "{}",
        stdout(&again)
    );
}

#[test]
fn missing_model_degrades_to_lexical_with_one_line() {
    let repo = repo();
    let cache = TempRepo::new("semantic-nomodel");
    let out = std::process::Command::new(fittok_e2e::bin("fittokd"))
        .args([
            "query",
            repo.path().to_str().unwrap(),
            "resize picture",
            "--json",
        ])
        .env("FITTOK_EMBED_MODEL", "/nonexistent/model")
        .env("FITTOK_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    assert_eq!(first_node(&out), "shrink_picture");
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let note = v["provenance"]["semantic_note"].as_str().unwrap();
    assert!(
        note.contains("no embedding model") && !note.contains('\n'),
        "{note}"
    );
}

/// A first build that leaves its tests for the update right after, with no vectors stored,
/// answers without waiting for the model; the update attaches it. Once vectors are stored, a
/// first build attaches the model at once.
#[test]
fn a_first_answer_without_stored_vectors_does_not_wait_for_the_model() {
    use fittok_e2e::{DaemonEnv, ok, status_json};
    let env = DaemonEnv::new("deferred-model")
        .with_model()
        .env("FITTOK_DEFER_TESTS_OVER", "1");
    let repo = repo();
    repo.write(
        "tests/test_imaging.py",
        "from src.imaging import rotate\n\n\ndef test_rotate():\n    assert rotate\n",
    );
    let path = repo.path().to_str().unwrap();
    let ask = || ok(&env.fittok(&["query", path, QUESTION, "--budget", "300"]));
    let first = ask();
    assert!(
        first.contains("the embedding model joins once the tests are indexed"),
        "{first}"
    );
    let log = env.log();
    let resident = log.find("repository resident").expect("built");
    assert!(
        log[..resident].find("model loaded").is_none(),
        "the model waited: {log}"
    );
    // The update that adds the tests attaches the model, and the embedder fills the vectors.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while status_json(&env)["repos"][0]["semantic_coverage"] != 1.0
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        status_json(&env)["repos"][0]["semantic_coverage"],
        1.0,
        "{}",
        env.log()
    );
    assert!(!ask().contains("joins once"));
    // Status says what the loaded model costs beside the repositories and the rest.
    let status = status_json(&env);
    let part = |name: &str| -> u64 {
        status["process_memory"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .and_then(|p| p["bytes"].as_u64())
            .unwrap_or_else(|| panic!("no {name} in {status}"))
    };
    // all-MiniLM-L6-v2: 22.7 M weights, f32 (91 MB) or with its dense layers halved (~45 MB).
    let model = part("embedding model") >> 20;
    assert!((30..=100).contains(&model), "model {model} MB: {status}");
    assert!(part("repositories") > 0, "{status}");
    // The rest is what remains of the resident set (none, should the estimates exceed it).
    assert!(
        part("repositories") + part("embedding model") + part("rest of the process")
            >= status["rss_bytes"].as_u64().unwrap(),
        "{status}"
    );

    // Vectors stored: after a restart without the snapshot, the first build attaches the model.
    ok(&env.fittok(&["daemon", "stop"]));
    let _ = std::fs::remove_dir_all(env.cache.join("snapshots"));
    let again = ask();
    assert!(!again.contains("joins once"), "{again}");
}
