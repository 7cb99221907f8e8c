//! The question, cleaned: lines a repository's own issue templates put in every issue ("What
//! version are you using?", "How did you install it?") say nothing about this issue, and their
//! words would otherwise pull version and install code to the top of every answer.

use std::collections::HashSet;
use std::path::Path;

/// Template lines of one repository, normalised.
#[derive(Debug, Default, Clone)]
pub struct Boilerplate {
    lines: HashSet<String>,
}

/// Lower-cased, markup and key prefixes stripped, whitespace collapsed.
fn normalise(line: &str) -> String {
    let mut l = line.trim();
    for key in [
        "label:",
        "description:",
        "placeholder:",
        "value:",
        "title:",
        "about:",
        "name:",
    ] {
        if let Some(rest) = l.strip_prefix(key) {
            l = rest.trim();
        }
    }
    let l = l.trim_matches(|c: char| "#*->_`\"'|[] ".contains(c));
    l.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl Boilerplate {
    /// Reads the issue templates GitHub and GitLab know: `ISSUE_TEMPLATE.md` at the root, in
    /// `.github/` or `docs/`, and every file of `.github/ISSUE_TEMPLATE/`.
    pub fn load(root: &Path) -> Boilerplate {
        let mut files = Vec::new();
        for dir in ["", ".github", "docs", ".gitlab"] {
            for name in ["ISSUE_TEMPLATE.md", "issue_template.md"] {
                files.push(root.join(dir).join(name));
            }
            for sub in ["ISSUE_TEMPLATE", "issue_templates"] {
                if let Ok(entries) = std::fs::read_dir(root.join(dir).join(sub)) {
                    files.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
                }
            }
        }
        let mut lines = HashSet::new();
        for f in files {
            let Ok(meta) = std::fs::metadata(&f) else {
                continue;
            };
            if !meta.is_file() || meta.len() > 64 * 1024 {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            for line in text.lines() {
                let n = normalise(line);
                if n.len() >= 12 {
                    lines.insert(n);
                }
            }
        }
        Boilerplate { lines }
    }

    /// The question without the lines its template wrote.
    pub fn strip(&self, question: &str) -> String {
        if self.lines.is_empty() {
            return question.to_string();
        }
        question
            .lines()
            .filter(|l| !self.lines.contains(&normalise(l)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_lines_are_dropped() {
        let dir = std::env::temp_dir().join(format!("fittok-tpl-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".github/ISSUE_TEMPLATE")).unwrap();
        std::fs::write(
            dir.join(".github/ISSUE_TEMPLATE/bug.md"),
            "#### What version of ripgrep are you using?\n\n#### How did you install ripgrep?\n",
        )
        .unwrap();
        std::fs::write(
            dir.join(".github/ISSUE_TEMPLATE/form.yml"),
            "body:\n  - type: textarea\n    attributes:\n      label: \"Steps to reproduce the bug\"\n",
        )
        .unwrap();
        let b = Boilerplate::load(&dir);
        let q = "--iglob is ignored with -g\n#### What version of ripgrep are you using?\n\nripgrep 11\n### Steps to reproduce the bug\nrun rg";
        assert_eq!(
            b.strip(q),
            "--iglob is ignored with -g\n\nripgrep 11\nrun rg"
        );
        assert_eq!(Boilerplate::default().strip(q), q);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
