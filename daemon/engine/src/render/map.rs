//! The codebase map as Markdown: one section per directory (its purpose line, then each
//! file with its definitions' signatures and doc lines). `fittok map --fit DIR` fits it into a
//! tree whose root lists the directories, ready to be linked from an AGENTS.md.

use std::collections::BTreeMap;

use crate::link::{Graph, dir_of};
use crate::model::DefKind;

/// Files whose module doc speaks for their directory.
const PACKAGE_FILES: &[&str] = &[
    "__init__.py",
    "mod.rs",
    "lib.rs",
    "main.rs",
    "doc.go",
    "index.ts",
    "index.js",
    "package-info.java",
];

fn first_sentence(doc: &str) -> String {
    // The first line that reads as words: a docstring may open with ASCII art, a banner or a
    // rule (`__`, `====`, `/\_/\`), which says nothing of the purpose.
    let line = doc
        .lines()
        .map(str::trim)
        .find(|l| reads_as_words(l))
        .unwrap_or("");
    let cut = line
        .char_indices()
        .find(|&(i, c)| c == '.' && line[i + 1..].starts_with(' '))
        .map_or(line.len(), |(i, _)| i + 1);
    line[..cut].to_string()
}

/// Whether a line holds words: at least two runs of three letters, and more letters than
/// other visible characters.
fn reads_as_words(line: &str) -> bool {
    let letters = line.chars().filter(|c| c.is_alphabetic()).count();
    let visible = line.chars().filter(|c| !c.is_whitespace()).count();
    let words = line
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 3)
        .count();
    words >= 2 && letters * 2 > visible
}

/// The map of the whole repository, directories in path order.
pub fn codebase_map(g: &Graph, repo_name: &str) -> String {
    let mut dirs: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (i, f) in g.files.iter().enumerate() {
        dirs.entry(dir_of(&f.path)).or_default().push(i as u32);
    }
    let langs: std::collections::BTreeSet<&str> = g.files.iter().map(|f| f.lang.name()).collect();
    let mut out = format!(
        "# Codebase map: {repo_name}\n\n{} files in {} directories ({}); {} definitions. Each directory lists its files with their definitions: `signature` line — doc.\n\n",
        g.files.len(),
        dirs.len(),
        langs.into_iter().collect::<Vec<_>>().join(", "),
        g.nodes.len()
    );
    for (dir, files) in &dirs {
        let title = if dir.is_empty() {
            "(root)".to_string()
        } else {
            format!("{dir}/")
        };
        out.push_str(&format!("## {title}\n\n"));
        out.push_str(&purpose(g, files));
        out.push_str("\n\n");
        for &fi in files {
            let f = &g.files[fi as usize];
            let defs: Vec<_> = f
                .definitions
                .iter()
                .filter(|d| {
                    !matches!(d.kind, DefKind::File | DefKind::Section | DefKind::Region)
                        && !d.is_test
                })
                .collect();
            let file_doc = f
                .definitions
                .iter()
                .find(|d| d.kind == DefKind::File)
                .and_then(|d| d.doc.as_deref())
                .map(first_sentence)
                .filter(|s| !s.is_empty());
            // Prose files speak through the directory's purpose line, not as definitions.
            if defs.is_empty() && file_doc.is_none() {
                continue;
            }
            out.push_str(&format!("### {}\n\n", f.path));
            if let Some(doc) = file_doc {
                out.push_str(&format!("{doc}\n\n"));
            }
            if f.is_test_file {
                out.push_str(&format!("Tests: {} definitions.\n\n", defs.len()));
                continue;
            }
            for d in defs.iter().take(80) {
                let sig = d
                    .signature
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
                    .replace('`', "'");
                let doc = d.doc.as_deref().map(first_sentence).unwrap_or_default();
                let indent = if d
                    .parent
                    .is_some_and(|p| f.definitions[p as usize].kind != DefKind::File)
                {
                    "  "
                } else {
                    ""
                };
                if doc.is_empty() {
                    out.push_str(&format!("{indent}- `{sig}` L{}\n", d.start_line));
                } else {
                    out.push_str(&format!("{indent}- `{sig}` L{} — {doc}\n", d.start_line));
                }
            }
            if defs.len() > 80 {
                out.push_str(&format!("- … {} more definitions\n", defs.len() - 80));
            }
            out.push('\n');
        }
    }
    out
}

/// One line on what a directory is for: its package file's doc, its README's first
/// sentence, or what it holds.
fn purpose(g: &Graph, files: &[u32]) -> String {
    let doc_of = |name: &str| {
        files.iter().find_map(|&fi| {
            let f = &g.files[fi as usize];
            (f.path.rsplit('/').next() == Some(name))
                .then(|| {
                    f.definitions
                        .iter()
                        .find(|d| d.kind == DefKind::File)?
                        .doc
                        .clone()
                })
                .flatten()
        })
    };
    for name in PACKAGE_FILES {
        if let Some(doc) = doc_of(name)
            .map(|d| first_sentence(&d))
            .filter(|d| !d.is_empty())
        {
            return format!("Purpose: {doc}");
        }
    }
    // A README's first paragraph (its sections are nodes with their text as doc).
    for &fi in files {
        let f = &g.files[fi as usize];
        if f.path
            .rsplit('/')
            .next()
            .is_some_and(|n| n.to_lowercase().starts_with("readme"))
            && let Some(doc) = f
                .definitions
                .iter()
                .filter_map(|d| d.doc.as_deref())
                .map(first_sentence)
                .find(|s| !s.is_empty())
        {
            return format!("Purpose: {doc}");
        }
    }
    let names: Vec<&str> = files
        .iter()
        .take(6)
        .map(|&fi| g.files[fi as usize].path.rsplit('/').next().unwrap_or(""))
        .collect();
    let more = if files.len() > 6 {
        format!(", … ({} files)", files.len())
    } else {
        String::new()
    };
    format!("Holds {}{more}.", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn a_purpose_is_the_first_line_of_words_not_a_banner() {
        let doc = "  __\n /__\\  ___  ___\n=====\nRequests is an HTTP library. It is simple.";
        assert_eq!(first_sentence(doc), "Requests is an HTTP library.");
        assert_eq!(first_sentence("__"), "");
        assert_eq!(
            first_sentence("Parse the config file"),
            "Parse the config file"
        );
    }
}
