//! `fittok graph` in a real browser: headless Chromium (installed by `scripts/browser.sh`)
//! loads the page from disk with networking disabled; the page reports what it rendered in a
//! hidden stats element, read from the DOM after its scripts ran. A screenshot is kept in
//! `target/test-artifacts/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use fittok_e2e::{DaemonEnv, TempRepo, ok, stderr, stdout};

fn browser() -> PathBuf {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {b}"))
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        })
        .expect("no headless browser: run scripts/browser.sh")
}

fn offline_args() -> Vec<&'static str> {
    vec![
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--proxy-server=127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--virtual-time-budget=8000",
    ]
}

/// The stats the page wrote after rendering, for `page#hash`.
fn stats(page: &Path, hash: &str) -> serde_json::Value {
    let out = Command::new(browser())
        .args(offline_args())
        .arg("--dump-dom")
        .arg(format!("file://{}{hash}", page.display()))
        .output()
        .expect("chromium");
    let dom = stdout(&out);
    let json = dom
        .split_once("<pre id=\"fittok-stats\">")
        .and_then(|(_, r)| r.split_once("</pre>"))
        .map(|(j, _)| j.to_string())
        .unwrap_or_else(|| {
            panic!(
                "no stats in the page:\n{}\n{}",
                &dom[..dom.len().min(2000)],
                stderr(&out)
            )
        });
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

#[test]
fn the_page_renders_offline_highlights_the_answer_and_searches() {
    let env = DaemonEnv::new("graph");
    let repo = TempRepo::new("graph");
    repo.write(
        "billing/invoice.py",
        "from .tax import vat_for\n\n\nclass Invoice:\n    def total_with_vat(self, country):\n        net = sum(self.lines)\n        return net + vat_for(country, net)\n\n    def lines_total(self):\n        return sum(self.lines)\n",
    )
    .write("billing/tax.py", "RATES = {}\n\n\ndef vat_for(country, amount):\n    return amount * RATES.get(country, 0.2)\n")
    .write("web/server.go", "package web\n\n// Serve starts the listener.\nfunc Serve(port int) error { return listen(port) }\n\nfunc listen(port int) error { return nil }\n");
    let cwd = TempRepo::new("graph-cwd");
    let out = env
        .cmd("fittok")
        .args([
            "graph",
            repo.path().to_str().unwrap(),
            "--query",
            "how is VAT added to the invoice total",
        ])
        .current_dir(cwd.path())
        .output()
        .unwrap();
    let printed = ok(&out);
    // Nothing is written where the command ran (it may be the user's repository): the page
    // goes to the cache directory, alone.
    let here: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().flatten().collect();
    assert!(here.is_empty(), "{here:?}");
    let page = std::path::PathBuf::from(printed.split(" (").next().unwrap().trim());
    assert!(page.starts_with(&env.cache), "{}", page.display());
    let files: Vec<_> = std::fs::read_dir(page.parent().unwrap())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(files.len(), 1, "one file, no side files: {files:?}");
    let nodes: u64 = printed
        .split('(')
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("<script src") && !html.contains("<link "),
        "self-contained"
    );
    let s = stats(&page, "");
    assert_eq!(s["total"].as_u64(), Some(nodes));
    assert_eq!(s["rendered"].as_u64(), Some(nodes), "{s}");
    let highlighted = s["highlighted"].as_u64().unwrap();
    assert!(highlighted >= 1, "the answer's nodes are highlighted: {s}");
    // Focused: in the first frame drawn, every node of the answer is labelled and on screen.
    let first = &s["first_frame"];
    assert_eq!(first["highlighted"].as_u64(), Some(highlighted), "{s}");
    assert_eq!(first["labelled"].as_u64(), Some(highlighted), "{s}");
    assert_eq!(first["in_view"].as_u64(), Some(highlighted), "{s}");
    assert!(s["links"].as_u64().unwrap() >= 2);
    // The file view, one click away (`#view=files` starts there): one node per file, edges
    // aggregated, the answer's files still highlighted.
    let files = stats(&page, "#view=files");
    assert_eq!(files["view"], "files", "{files}");
    assert_eq!(files["rendered"].as_u64(), Some(3), "{files}");
    assert!(files["links"].as_u64().unwrap() >= 1, "{files}");
    assert!(files["highlighted"].as_u64().unwrap() >= 1, "{files}");
    let narrowed = stats(&page, "#search=vat");
    let n = narrowed["rendered"].as_u64().unwrap();
    assert!(n >= 1 && n < nodes, "search narrows the view: {narrowed}");
    // A screenshot, kept for people to look at.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join("graph.png");
    let _ = std::fs::remove_file(&shot);
    let out = Command::new(browser())
        .args(offline_args())
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,800")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        shot.is_file() && std::fs::metadata(&shot).unwrap().len() > 5_000,
        "{}",
        stderr(&out)
    );
}

#[test]
fn big_graphs_collapse_to_files() {
    let env = DaemonEnv::new("graph-big");
    let repo = TempRepo::new("graph-big");
    for i in 0..300 {
        let mut src = String::new();
        for k in 0..9 {
            src.push_str(&format!(
                "def f{i}_{k}():\n    return f{}_{k}()\n\n\n",
                (i + 1) % 300
            ));
        }
        repo.write(&format!("pkg/m{i}.py"), src);
    }
    let out_file = repo.path().join("big.html");
    ok(&env.fittok(&[
        "graph",
        repo.path().to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
    ]));
    let s = stats(&out_file, "");
    assert_eq!(s["collapsed"], true, "{s}");
    assert_eq!(s["rendered"].as_u64(), Some(300), "one node per file: {s}");
    eprintln!("collapsed page rendered in {} ms", s["render_ms"]);
}

/// Without `-o` the page goes to fittok's cache directory, never into the repository; with
/// `--open` and no opener on PATH the command fails naming the page, which stays written.
#[test]
fn the_page_goes_to_the_cache_and_a_missing_browser_is_an_error() {
    let env = DaemonEnv::new("graph-place");
    let repo = TempRepo::new("graph-place");
    repo.write(
        "app.py",
        "def serve():\n    return handle()\n\n\ndef handle():\n    return 1\n",
    );
    let before: Vec<_> = std::fs::read_dir(repo.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let out = ok(&env.fittok(&["graph", repo.path().to_str().unwrap()]));
    let page = PathBuf::from(out.split(" (").next().unwrap_or_default().trim());
    assert!(page.starts_with(&env.cache), "{out}");
    assert!(page.is_file(), "{out}");
    let after: Vec<_> = std::fs::read_dir(repo.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before, after, "nothing written into the repository");

    let empty_path = env.dir.path().join("no-tools");
    std::fs::create_dir_all(&empty_path).unwrap();
    let opened = env
        .cmd("fittok")
        .args(["graph", repo.path().to_str().unwrap(), "--open"])
        .env("PATH", &empty_path)
        .output()
        .unwrap();
    assert_eq!(opened.status.code(), Some(5), "{}", stderr(&opened));
    let msg = stderr(&opened);
    assert!(msg.contains("no browser could be opened"), "{msg}");
    assert!(msg.contains(&page.display().to_string()), "{msg}");
    assert!(page.is_file());
}
