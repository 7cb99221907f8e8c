//! The question, cleaned: lines a repository's own issue templates put in every issue ("What
//! version are you using?", "How did you install it?") say nothing about this issue, and their
//! words would otherwise pull version and install code to the top of every answer. Neither do
//! the reporter's installed versions (`attrs 19.1.0`, a whole `pip list`): package names that
//! are also the code's words (`pytest`, `py`, `mock`, `six`).

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

    /// The question without the lines its template wrote and, past its first line, without
    /// lines that only name an installed package and its version.
    pub fn strip(&self, question: &str) -> String {
        let mut lines = question.lines();
        let Some(first) = lines.next() else {
            return String::new();
        };
        let kept = lines.filter(|l| !is_version_line(l));
        std::iter::once(first)
            .chain(kept)
            .filter(|l| self.lines.is_empty() || !self.lines.contains(&normalise(l)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Whether a line only names a package and its version: a row of `pip list`, `npm ls` or an
/// environment listing (`attrs 19.1.0`, `ripgrep 13.0.0`, `Python 3.9.5`, `React v18.2.0`).
fn is_version_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (Some(name), Some(version), None) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    let name_ok = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-[]".contains(c));
    let version = version.strip_prefix('v').unwrap_or(version);
    let numeric: String = version
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let parts: Vec<&str> = numeric.split('.').collect();
    name_ok
        && parts.len() >= 2
        && parts.iter().take(2).all(|p| !p.is_empty())
        && version[numeric.len()..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".+-".contains(c))
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

    #[test]
    fn installed_versions_are_dropped_past_the_first_line() {
        let q = "Unroll all/any calls\nassert all(x)\nPackage        Version\n-------------- -------\natomicwrites   1.3.0  \r\nmore-itertools 7.0.0\npytest         4.4.0\nReact v18.2.0\nPython 3.9.5rc1\nuse 2 threads\nbump to 1.2 now";
        assert_eq!(
            Boilerplate::default().strip(q),
            "Unroll all/any calls\nassert all(x)\nPackage        Version\n-------------- -------\nuse 2 threads\nbump to 1.2 now"
        );
        // A one-line question is kept whole.
        assert_eq!(
            Boilerplate::default().strip("ripgrep 13.0.0"),
            "ripgrep 13.0.0"
        );
        for not_version in ["retry 3", "x 1.", "v2 api", "rate 0.5x/s", "f(a) 1.2"] {
            assert!(!is_version_line(not_version), "{not_version}");
        }
    }
}
