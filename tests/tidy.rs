//! ARCHITECTURE.md's code map against the source tree, in rust-analyzer's way: a module added
//! to a crate without a line in the map fails here.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
}

/// The modules of a crate's `src`: files and directories, without entry points and tests.
fn modules(src: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(src)
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !matches!(n.as_str(), "lib.rs" | "main.rs" | "tests.rs"))
        .filter(|n| !n.ends_with("_tests.rs"))
        .map(|n| n.trim_end_matches(".rs").to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The part of ARCHITECTURE.md from the heading naming `src` to the next heading.
fn section<'a>(doc: &'a str, src: &str) -> &'a str {
    let start = doc
        .lines()
        .position(|l| l.starts_with("### ") && l.contains(&format!("`{src}`")))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no code-map section for `{src}`"));
    let lines: Vec<&str> = doc.lines().collect();
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

#[test]
fn every_module_is_in_the_code_map() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut missing = Vec::new();
    for src in [
        "daemon/engine/src",
        "daemon/grammars/src",
        "daemon/src",
        "proto/request/src",
        "client/src",
        "client/connect/src",
        "client/llm/src",
        "proto/src",
        "shim-mcp/src",
    ] {
        let text = section(&doc, src);
        for m in modules(&root().join(src)) {
            // `bin` is listed as `bin/fittokd`.
            let named = text.contains(&format!("`{m}`"))
                || text.contains(&format!("`{m}/"))
                || text.contains(&format!(" `{m}`,"));
            if !named {
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
fn every_crate_is_in_the_crate_table() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
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
            doc.contains(&format!("| `{name}` (`{member}`)")),
            "ARCHITECTURE.md's crate table lacks `{name}` (`{member}`)"
        );
    }
}
