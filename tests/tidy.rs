//! ARCHITECTURE.md against the source tree, in rust-analyzer's way: a module added to a crate
//! without a line in the code map fails here, as does an entry naming no module, a line too
//! long to read, product files that speak of numbered sessions, and code comments that log
//! measurements (history belongs in `bench/results/`).

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
}

fn doc() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

/// The code map's source folders.
const SOURCES: [&str; 15] = [
    "daemon/util/src",
    "daemon/tokens/src",
    "daemon/scrub/src",
    "daemon/fit/src",
    "daemon/parse/src",
    "daemon/graph/src",
    "daemon/embed/src",
    "daemon/engine/src",
    "daemon/src",
    "proto/request/src",
    "client/src",
    "client/connect/src",
    "client/llm/src",
    "proto/src",
    "shim-mcp/src",
];

/// Every module under `src`, as its path without `.rs` (`parse/python`, `index/bm25/segment`;
/// a `mod.rs` names its folder), leaving out entry points and test files.
fn modules(src: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = format!("{prefix}{}", name.trim_end_matches(".rs"));
            if e.path().is_dir() {
                out.push(path.clone());
                walk(&e.path(), &format!("{path}/"), out);
            } else if name.ends_with(".rs")
                && !matches!(name.as_str(), "lib.rs" | "main.rs" | "mod.rs" | "tests.rs")
                && !name.ends_with("_tests.rs")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(src, "", &mut out);
    out.sort();
    out.dedup();
    out
}

/// The part of ARCHITECTURE.md from the heading naming `src` to the next heading.
fn section<'a>(doc: &'a str, src: &str) -> &'a str {
    let lines: Vec<&str> = doc.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("### ") && l.contains(&format!("`{src}`")))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no code-map section for `{src}`"));
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with('#'))
        .map_or(lines.len(), |e| start + 1 + e);
    let (a, b) = (
        lines[..start].iter().map(|l| l.len() + 1).sum::<usize>(),
        lines[..end].iter().map(|l| l.len() + 1).sum::<usize>(),
    );
    &doc[a..b.min(doc.len())]
}

/// Whether `text` names module `m` (`a/b/c`): as `` `a/b/c` ``, `` `b/c` `` or `` `c` ``
/// (a nested module is named inside its parent's entry), or as `` `c/`… `` for a folder.
fn names(text: &str, m: &str) -> bool {
    let parts: Vec<&str> = m.split('/').collect();
    (0..parts.len()).any(|i| {
        let tail = parts[i..].join("/");
        text.contains(&format!("`{tail}`")) || text.contains(&format!("`{tail}/"))
    })
}

#[test]
fn every_module_is_in_the_code_map() {
    let doc = doc();
    let mut missing = Vec::new();
    for src in SOURCES {
        let text = section(&doc, src);
        for m in modules(&root().join(src)) {
            if !names(text, &m) {
                missing.push(format!("{src}: {m}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "modules missing from ARCHITECTURE.md's code map:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_entry_of_the_code_map_names_a_module() {
    let doc = doc();
    let mut stale = Vec::new();
    for src in SOURCES {
        let have = modules(&root().join(src));
        for line in section(&doc, src).lines() {
            let Some(rest) = line.strip_prefix("- `") else {
                continue;
            };
            // An entry names its modules in backticks before the dash that starts its text.
            let head = rest.split(" — ").next().unwrap_or(rest);
            for name in head.split('`').step_by(2).map(str::trim) {
                let name = name.trim_start_matches(", ").trim();
                if name.is_empty() || name.starts_with('(') || name == "," {
                    continue;
                }
                if !have
                    .iter()
                    .any(|m| m == name || m.starts_with(&format!("{name}/")))
                {
                    stale.push(format!("{src}: {name}"));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "code-map entries naming no module:\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_crate_is_in_the_crate_list() {
    let doc = doc();
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("workspace members");
    for member in members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
    {
        let cargo = std::fs::read_to_string(root().join(member).join("Cargo.toml")).unwrap();
        let name = cargo
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .map(|n| n.trim_matches('"'))
            .expect("package name");
        assert!(
            doc.contains(&format!("- `{name}` (`{member}`)")),
            "ARCHITECTURE.md's crate list lacks `{name}` (`{member}`)"
        );
    }
}

#[test]
fn architecture_lines_are_at_most_100_characters() {
    let long: Vec<String> = doc()
        .lines()
        .enumerate()
        .filter(|(_, l)| l.chars().count() > 100)
        .map(|(i, l)| format!("{}: {} characters", i + 1, l.chars().count()))
        .collect();
    assert!(
        long.is_empty(),
        "ARCHITECTURE.md lines over 100 characters:\n{}",
        long.join("\n")
    );
}

/// Files of the product and its documentation: sources, scripts, manifests, READMEs. The
/// record of measurements (`bench/results/`) is history by design.
fn product_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | ".git" | "results" | "fixtures" | ".tools"
            ) && !name.starts_with('.')
            {
                product_files(&p, out);
            }
        } else if [".rs", ".md", ".sh", ".py", ".toml", ".json", ".proto"]
            .iter()
            .any(|x| name.ends_with(x))
            && name != "ranker.json"
        {
            out.push(p);
        }
    }
}

#[test]
fn product_files_do_not_speak_of_numbered_sessions() {
    let mut files = Vec::new();
    product_files(root(), &mut files);
    assert!(files.len() > 50, "found only {} files", files.len());
    // Spelled in two parts so that this file does not match itself.
    let word = format!("{}{}", "sess", "ion ");
    let mut found = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let hit = lower
                .match_indices(&word)
                .any(|(at, _)| lower[at + word.len()..].starts_with(|c: char| c.is_ascii_digit()));
            if hit {
                found.push(format!(
                    "{}:{}",
                    f.strip_prefix(root()).unwrap_or(&f).display(),
                    i + 1
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "numbered sessions in product files:\n{}",
        found.join("\n")
    );
}

/// Whether a comment line reads like an experiment's log: recall figures, or a percentage
/// moving from one value to another.
fn logs_an_experiment(comment: &str) -> bool {
    let lower = comment.to_lowercase();
    ["hunk recall", "file recall", "dev benchmark"]
        .iter()
        .any(|w| lower.contains(w))
        || (lower.contains('%') && lower.contains('→'))
}

#[test]
fn code_comments_say_why_not_what_was_measured() {
    assert!(logs_an_experiment(
        "/// dev benchmark, 4000 tokens: 58.4 % without"
    ));
    assert!(logs_an_experiment("// 50.7 → 48.3 %"));
    assert!(!logs_an_experiment(
        "/// Rounds of select → lay out → count."
    ));
    let mut files = Vec::new();
    product_files(root(), &mut files);
    let mut found = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|x| x == "rs"))
    {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") && logs_an_experiment(line) {
                found.push(format!(
                    "{}:{}",
                    f.strip_prefix(root()).unwrap_or(f).display(),
                    i + 1
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "measurements in code comments (they go to bench/results/, dated):\n{}",
        found.join("\n")
    );
}
